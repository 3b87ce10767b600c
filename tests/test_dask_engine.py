"""The dask engine against a real distributed cluster (a scheduler and 2 worker processes on
127.0.0.1): the same parcels table and findings as the default engine, row for row.
"""

from __future__ import annotations

import sys

import distributed
import numpy as np
import pandas as pd
import pytest
import shapely
from test_overlay_engine import AREA_TOL_SQFT, _county

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import screen_parcels
from geoconstraints.errors import GeoConstraintsError, InputError
from geoconstraints.geometry import overlay_dask
from geoconstraints.geometry.overlay import CoverIndex, overlay_areas
from geoconstraints.geometry.overlay_dask import DASK_INSTALL, dask_modules, overlay_areas_dask


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster: scheduler + 2 worker processes of one thread each, loopback, no dashboard."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as c:
        yield c


@pytest.fixture(scope="module")
def county_file(tmp_path_factory):
    parcels, flood, streams = _county(k=50, seed=11, encroachment=True)  # encroachment areas: one more cover
    path = tmp_path_factory.mktemp("dask") / "county.gpkg"
    for name, gdf in (("parcels", parcels), ("flood_zones", flood), ("streams", streams)):
        gdf.to_file(path, layer=name)
    return path


def test_overlay_table_is_the_same_row_for_row(cluster):
    parcels, flood, _ = _county(k=40, seed=5)
    g = np.asarray(parcels.geometry.values, dtype=object)
    fl = flood.geometry.values
    cover = CoverIndex.build([("_sfha", fl[(flood["FLD_ZONE"] == "AE").to_numpy()]), ("_covered", fl)],
                             max_span=600.0)
    kw = {"tolerance_ft": 1.0, "min_area_sqft": 100.0, "keep_geometry": ("_sfha",)}
    local = overlay_areas(g, cover, workers=1, **kw)
    remote = overlay_areas_dask(g, cover, scheduler=cluster.scheduler_address, chunk_size=300, **kw)
    assert len(local) > len(g)
    pd.testing.assert_frame_equal(local.drop(columns="geometry"), remote.drop(columns="geometry"),
                                  check_exact=False, rtol=0, atol=AREA_TOL_SQFT)
    a, b = local["geometry"].to_numpy(), remote["geometry"].to_numpy()
    has = ~pd.isna(a)
    assert (has == ~pd.isna(b)).all() and has.sum() > 100
    assert shapely.area(shapely.symmetric_difference(a[has], b[has])).max() < AREA_TOL_SQFT


def test_screen_on_the_cluster_equals_the_default_engine(cluster, county_file):
    layers, rb = load_layers(county_file), load_rulebook("vestal")
    default = screen_parcels(layers, rb, findings="all")
    dask = screen_parcels(layers, rb, engine="dask", scheduler=cluster.scheduler_address, chunk_size=400,
                         findings="all")
    t1, t2 = default.tables["parcels"], dask.tables["parcels"]
    assert (t1["sfha_acres"] > 0).sum() > 200
    f2 = default.findings[default.findings["rule_id"] == "FLD-002"]
    assert f2["message"].str.contains("in a floodway-like area").sum() > 20  # FLD-002's encroachment areas too
    # areas to floating noise (1e-6 sq ft, in acres); text and statuses exactly
    pd.testing.assert_frame_equal(pd.DataFrame(t1.drop(columns="geometry")), pd.DataFrame(t2.drop(columns="geometry")),
                                  check_exact=False, rtol=0, atol=AREA_TOL_SQFT / 43_560.0)
    cols = ["rule_id", "subject_id", "status", "measured", "message"]
    pd.testing.assert_frame_equal(default.findings[cols], dask.findings[cols], check_exact=False, rtol=0,
                                  atol=AREA_TOL_SQFT / 43_560.0)
    for name in ("sfha_overlaps", "floodway_overlaps"):
        assert len(default.derived[name]) == len(dask.derived[name]) > 0


def test_scheduler_needs_the_dask_engine_and_a_reachable_address(county_file, monkeypatch):
    monkeypatch.setattr(overlay_dask, "CONNECT_TIMEOUT_S", 2)  # distributed retries until the timeout
    layers, rb = load_layers(county_file), load_rulebook("vestal")
    with pytest.raises(InputError, match="give --engine dask"):
        screen_parcels(layers, rb, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(InputError, match="engine 'spark' is not one of default, dask"):
        screen_parcels(layers, rb, engine="spark")
    with pytest.raises(InputError, match="cannot connect to the dask scheduler"):
        screen_parcels(layers, rb, engine="dask", scheduler="tcp://127.0.0.1:9")  # nothing listens on port 9


def test_missing_extra_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask_geopandas", None)  # as if not installed
    with pytest.raises(GeoConstraintsError) as err:
        dask_modules()
    assert DASK_INSTALL in str(err.value) and "dask_geopandas" in str(err.value)
