"""GeoParquet outputs (issue 13 item 2): findings.parquet for every run, parcels.parquet for a screening."""

from __future__ import annotations

import json

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import shapely
from catalogue import sample_gpkg

from geoconstraints import load_layers, load_rulebook, screen_parcels
from geoconstraints.output import files, write_result
from geoconstraints.rulebook.findings import FINDING_COLUMNS


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parquet")
    res = screen_parcels(load_layers(sample_gpkg(folder)), load_rulebook("vestal"), findings="all")
    return res, write_result(res, folder / "out", findings="all")


def test_findings_round_trip(written):
    res, w = written
    back = gpd.read_parquet(w["findings.parquet"])
    assert list(back.columns) == [*FINDING_COLUMNS, "geometry"]
    assert back.crs == res.findings.crs and back.crs.to_epsg() == 2261  # EPSG:2261, US survey feet
    pd.testing.assert_frame_equal(pd.DataFrame(back.drop(columns="geometry")),
                                  pd.DataFrame(res.findings.drop(columns="geometry")).reset_index(drop=True))
    a = np.asarray(back.geometry.values, dtype=object)
    b = np.asarray(res.findings.geometry.values, dtype=object)
    assert (shapely.is_missing(a) == shapely.is_missing(b)).all()  # the run-wide FLD-010 finding: no place
    both = ~shapely.is_missing(a)
    assert shapely.equals_exact(a[both], b[both], tolerance=0).all()  # WKB: exact coordinates


def test_geo_metadata_and_run_id(written):
    res, w = written
    schema = pq.read_schema(w["parcels.parquet"])
    geo = json.loads(schema.metadata[b"geo"])
    assert geo["version"] == "1.1.0" and geo["primary_column"] == "geometry"
    col = geo["columns"]["geometry"]
    assert col["encoding"] == "WKB"
    assert set(col["geometry_types"]) <= {"Polygon", "MultiPolygon"}
    assert col["crs"]["id"] == {"authority": "EPSG", "code": 2261}  # PROJJSON, as the spec asks
    stamp = json.loads(schema.metadata[b"geoconstraints"])
    assert stamp["run_id"] == res.run_id and stamp["command"] == "screen"


def test_parcels_round_trip(written):
    res, w = written
    back = gpd.read_parquet(w["parcels.parquet"])
    t = res.tables["parcels"]
    assert len(back) == len(t) == 3 and back.crs == t.crs
    assert list(back.columns) == list(t.columns)
    # 200 ft x 200 ft parcels: 40,000 sq ft = 0.918274 acres, at full precision (no CSV rounding)
    assert back["area_acres"].tolist() == pytest.approx([40_000 / 43_560] * 3, rel=1e-6)
    assert back["status_FLD_001"].tolist() == t["status_FLD_001"].tolist()
    assert shapely.equals_exact(np.asarray(back.geometry.values), np.asarray(t.geometry.values), tolerance=0).all()


def test_a_table_without_geometry_is_plain_parquet(tmp_path):
    target = files.write_parquet(pd.DataFrame({"a": [1, 2], "mixed": [True, "x"]}), tmp_path / "t.parquet",
                                 metadata={"run_id": "r"})
    table = pq.read_table(target)
    assert b"geo" not in table.schema.metadata
    assert table.column("mixed").to_pylist() == ["True", "x"]  # mixed types as text, as in the GeoPackage
    assert json.loads(table.schema.metadata[b"geoconstraints"]) == {"run_id": "r"}


def test_the_parcels_are_encoded_once_for_results_gpkg_and_parcels_parquet(written, tmp_path, monkeypatch):
    # 1.0-1.3 s a million parcels each time: parcels.parquet's table is built first (files.SharedTables) and
    # results.gpkg's parcels layer takes its WKB; both files still hold every parcel's exact geometry
    res, w = written
    parcels = np.asarray(res.tables["parcels"].geometry.values, dtype=object)
    encoded = []
    to_wkb = shapely.to_wkb

    def counting(geoms, *args, **kwargs):
        g = np.asarray(geoms, dtype=object)
        if g.ndim == 1 and len(g) == len(parcels) and all(a is b for a, b in zip(g, parcels)):
            encoded.append(kwargs.get("flavor"))
        return to_wkb(geoms, *args, **kwargs)

    monkeypatch.setattr(shapely, "to_wkb", counting)
    again = write_result(res, tmp_path / "out", findings="all")
    assert encoded == ["iso"]  # geopandas' GeoParquet encoding, once
    monkeypatch.undo()
    gpkg = gpd.read_file(again["results.gpkg"], layer="parcels")
    pq_back = gpd.read_parquet(again["parcels.parquet"])
    for back in (gpkg, pq_back):
        assert back["parcel_id"].tolist() == res.tables["parcels"]["parcel_id"].tolist()
        assert shapely.equals_exact(np.asarray(back.geometry.values, dtype=object), parcels, tolerance=0).all()
    assert pq.read_table(again["parcels.parquet"]).equals(pq.read_table(w["parcels.parquet"]))


def test_shared_tables_build_once_per_frame_and_release():
    df = gpd.GeoDataFrame({"parcel_id": ["1"]}, geometry=[shapely.box(0, 0, 1, 1)], crs=2262)
    twin = df.copy()
    shared = files.SharedTables()
    first = shared.geoparquet(df)
    assert shared.geoparquet(df) is first and shared.geoparquet(twin) is not first  # by frame, not by value
    assert shared.release(df) is first
    assert shared.geoparquet(df) is not first  # released: built again when asked again
    assert first.equals(files.geoparquet_table(df), check_metadata=True)
