"""The Python API of the inputs: ``load_layers`` with GeoDataFrames per role (never modified), ids
and field mappings, GDAL virtual paths, the working CRS the ``layers`` command and a run agree
on, and ``sample_path`` from an installed wheel."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from catalogue import flood_zones, parcels, write_gpkg
from geopandas.testing import assert_geodataframe_equal
from shapely.geometry import box

import geoconstraints as gc
from geoconstraints.cli import main
from geoconstraints.errors import FieldError, InputError, LayerReadError
from geoconstraints.io.paths import sha256_file

ROOT = Path(__file__).resolve().parents[1]


def _snapshot(gdf: gpd.GeoDataFrame) -> tuple:
    return copy.deepcopy(gdf), list(gdf.columns), gdf.index.copy(), gdf.crs, dict(gdf.attrs), gdf.geometry.name


def _assert_unchanged(gdf: gpd.GeoDataFrame, snap: tuple) -> None:
    before, cols, index, crs, attrs, geom = snap
    assert list(gdf.columns) == cols and gdf.geometry.name == geom and gdf.crs == crs and dict(gdf.attrs) == attrs
    pd.testing.assert_index_equal(gdf.index, index)
    assert_geodataframe_equal(gdf, before, check_less_precise=False)
    assert [g.wkb for g in gdf.geometry] == [g.wkb for g in before.geometry]  # the very coordinates


def test_geodataframes_per_role_are_used_and_never_modified():
    # lower-case NFHL names, an id column under another name, a non-default index, Z coordinates,
    # -9999 sentinels and a bow-tie: everything the loader renames, repairs or drops
    p = parcels(3).rename(columns={"parcel_id": "LOC_ID"}).set_index(pd.Index([10, 20, 30]))
    import shapely

    p = p.set_geometry(shapely.force_3d(p.geometry.values, 850.0), crs=p.crs)
    fz = flood_zones(4326)
    fz.columns = [c.lower() if c != "geometry" else c for c in fz.columns]
    fz = fz.rename(columns={"fld_zone": "ZONE"})
    snaps = {"p": _snapshot(p), "fz": _snapshot(fz)}

    layers = gc.load_layers(parcels=p, flood_zones=fz, ids={"parcels": "LOC_ID"},
                            fields={"flood_zones": {"FLD_ZONE": "ZONE"}})

    _assert_unchanged(p, snaps["p"])
    _assert_unchanged(fz, snaps["fz"])
    assert layers["parcels"]["feature_id"].tolist() == ["P1", "P2", "P3"]
    assert layers["flood_zones"]["FLD_ZONE"].tolist() == ["AE", "X"]
    assert np.isnan(layers["flood_zones"]["STATIC_BFE"].iloc[1])  # -9999 -> missing, in the copy only
    assert layers.crs.to_epsg() == 2261  # the parcels' own CRS
    assert layers.info["parcels"].path == "GeoDataFrame" and len(layers.info["parcels"].sha256) == 64
    assert any("Z coordinates dropped" in w for w in layers.warnings)
    # the frames handed back are not the caller's objects
    assert layers["parcels"] is not p and not np.shares_memory(layers["parcels"].geometry.values, p.geometry.values)


def test_geodataframe_and_paths_mix(tmp_path):
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"flood_zones": flood_zones()})
    p = parcels(2)
    layers = gc.load_layers(parcels=p, flood_zones=f"{gpkg}:flood_zones")
    assert set(layers) == {"parcels", "flood_zones"} and layers.info["flood_zones"].path == str(gpkg)
    # a role given both ways: the keyword wins over overrides (it is the more specific)
    layers = gc.load_layers(overrides={"parcels": parcels(5)}, parcels=p)
    assert len(layers["parcels"]) == 2


def test_api_refusals_name_the_problem():
    with pytest.raises(InputError, match="'parcel' is not a role or option; roles are parcels"):
        gc.load_layers(parcel=parcels())
    with pytest.raises(InputError, match="ids names role 'streams', which was not given"):
        gc.load_layers(parcels=parcels(), ids={"streams": "id"})
    with pytest.raises(FieldError, match="id field 'NOPE' not found"):
        gc.load_layers(parcels=parcels(), ids={"parcels": "NOPE"})
    with pytest.raises(InputError, match="parcels: int is not a layer"):
        gc.load_layers(parcels=5)
    no_geom = pd.DataFrame({"a": [1]})
    with pytest.raises(InputError, match="not a layer"):
        gc.load_layers(parcels=no_geom)


@pytest.mark.parametrize(("name", "value", "why"), [
    ("improvement_cost", float("nan"), "not a finite number"),
    ("openings_sqin", float("nan"), "not a finite number"),
    ("enclosed_sqft", -800, "is negative"),
    ("lowest_floor_ft", float("nan"), "not a finite number"),
    ("lowest_floor_ft", float("-inf"), "not a finite number"),
    ("market_value", 0, "less than 1"),
    ("market_value", 1e-300, "less than 1"),
    ("openings", -1, "is negative"),
    ("openings", 2.5, "2.5 is not a whole number"),  # a count: the CLI's --openings refused it, Python did not
])
def test_check_site_refuses_bad_numbers_from_python(name, value, why):
    # the CLI's Number option refuses these; the Python API must too, before any rule reads them
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"))
    with pytest.raises(InputError, match=f"flood-site {name} = .*{why}.*leave it out"):
        gc.check_site(layers, gc.load_rulebook("vestal"), use="residential", **{name: value})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0])
def test_check_stormwater_refuses_a_bad_common_plan_figure(value):
    # NaN aggregate acres compared false with the 1-acre bound and read as "not land development": pass
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"))
    with pytest.raises(InputError, match="stormwater larger_common_plan = .*leave it out"):
        gc.check_stormwater(layers, gc.load_rulebook("vestal"), larger_common_plan=value)


def test_check_site_accepts_the_bounds_themselves():
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"))
    res = gc.check_site(layers, gc.load_rulebook("vestal"), use="residential", enclosed_sqft=0,
                        improvement_cost=0, market_value=1, lowest_floor_ft=-5.0)
    assert set(res.findings["rule_id"]) >= {"FLD-007", "FLD-008"}


def test_vsizip_shapefile_passes_through_to_gdal(tmp_path):
    # a zipped shapefile, as counties publish them, read in place through GDAL's /vsizip/
    folder = tmp_path / "shp"
    folder.mkdir()
    parcels(3).to_file(folder / "parcels.shp", engine="pyogrio")
    zpath = tmp_path / "town.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        for f in folder.iterdir():
            z.write(f, f"town/{f.name}")
    vsi = f"/vsizip/{zpath}/town/parcels.shp"
    layers = gc.load_layers(parcels=vsi)
    assert layers["parcels"]["feature_id"].tolist() == ["P1", "P2", "P3"]
    assert layers.info["parcels"].path == vsi
    assert layers.info["parcels"].sha256 == sha256_file(zpath)  # the archive is hashed


def test_vsicurl_is_passed_to_gdal_not_fetched_here(runner, tmp_path):
    # nothing listens on 127.0.0.1:9 (discard): GDAL's connection is refused at once, and the
    # message names the URL; no other host is ever contacted by the tests
    url = "http://127.0.0.1:9/parcels.geojson"
    res = runner.invoke(main, ["screen", "--parcels", url, "--out", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.output
    assert "layer parcels (/vsicurl/http://127.0.0.1:9/parcels.geojson)" in res.stderr
    assert "read over the network by GDAL" in res.stderr
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------------
# the working CRS: one choice for `layers` and a run

def test_layers_and_run_agree_on_the_working_crs_outside_new_york(runner, tmp_path):
    # parcels in lon/lat in Cambridge, MA: both the description and the run use NAD83 /
    # Massachusetts Mainland (ftUS), EPSG:2249, from the EPSG database
    from pyproj import Transformer

    t = Transformer.from_crs(4326, 2249, always_xy=True)
    x, y = t.transform(-71.11, 42.37)
    geoms = [box(x + 200 * i, y, x + 200 * (i + 1), y + 200) for i in range(3)]
    p = gpd.GeoDataFrame({"parcel_id": ["A", "B", "C"]}, geometry=geoms, crs=2249).to_crs(4326)
    fz = gpd.GeoDataFrame({"FLD_ZONE": ["AE"], "STATIC_BFE": [12.0]}, geometry=[box(x - 50, y - 50, x + 300, y + 250)],
                          crs=2249).to_crs(4326)
    gpkg = write_gpkg(tmp_path / "cambridge.gpkg", {"parcels": p, "flood_zones": fz})
    res = runner.invoke(main, ["layers", "--json", str(gpkg)])
    assert res.exit_code == 0, res.output
    desc = json.loads(res.stdout)
    assert {e["working_crs"] for e in desc["layers"]} == {"EPSG:2249"}
    run = runner.invoke(main, ["screen", str(gpkg), "--out", str(tmp_path / "out")])
    assert run.exit_code == 0, run.output
    out = gpd.read_file(tmp_path / "out" / "results.gpkg", layer="findings_polygon")
    assert out.crs.to_epsg() == 2249
    result = gc.screen_parcels(gc.load_layers(gpkg), gc.load_rulebook("vestal"))
    assert result.crs.to_epsg() == 2249
    assert result.provenance()["working_crs"].endswith("(EPSG:2249)")


# ------------------------------------------------------------------------------------------
# sample_path from an installed wheel

def test_sample_path_works_from_an_installed_wheel(tmp_path):
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                            "-q", "-w", str(wheels), str(ROOT)], capture_output=True, text=True, timeout=600,
                           cwd=tmp_path, check=False)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next(wheels.glob("geoconstraints-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {"geoconstraints/sampledata/vestal_sample.gpkg", "geoconstraints/sampledata/dem.tif",
            "geoconstraints/rulebook/vestal.yaml"} <= set(names)
    target = tmp_path / "site"
    inst = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target",
                           str(target), str(wheel)], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          check=False)
    assert inst.returncode == 0, inst.stderr[-2000:]
    code = ("import geoconstraints as gc, json; p = gc.sample_path(); d = gc.sample_path('dem.tif'); "
            "print(json.dumps([gc.__file__, str(p), p.is_file(), d.stat().st_size, "
            "gc.load_layers(p, roles=('parcels',)).crs.to_epsg()]))")
    env = {k: v for k, v in os.environ.items() if k != "GEOCONSTRAINTS_SAMPLE"}
    env["PYTHONPATH"] = str(target)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=env, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    file, path, is_file, dem_size, epsg = json.loads(run.stdout)
    assert file.startswith(str(target)) and path.startswith(str(target))  # imported from the install
    assert is_file and dem_size == (ROOT / "data" / "sample" / "dem.tif").stat().st_size and epsg == 2261


def test_sample_path_missing_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("GEOCONSTRAINTS_SAMPLE", str(tmp_path))
    path = gc.sample_path()
    assert path == tmp_path / "vestal_sample.gpkg"
    with pytest.raises(LayerReadError, match="does not exist"):
        gc.load_layers(path)
