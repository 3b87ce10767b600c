"""More bad inputs, from a second input audit: layers as users really have them.

Each case runs through the CLI as ``tests/test_bad_inputs.py`` runs the catalogue (exit code, the
one ``error:`` line naming the layer / feature and the fix, no traceback, no ``--out`` folder left
by a refused run, every input byte for byte unchanged). Each failed before its fix (noted per case):

- a file of several layers, none named after the role, given without ``:LAYER`` (a GeoPackage,
  a ``.zip`` of two shapefiles): GDAL read the first layer, whatever it was, with a warning;
- one feature typed a billion feet off among features placed right: screened as ``no_data``
  (the layer's check looked only at the centre of its extent, which PROJ could not transform);
- ``--crs`` of another state's zone (Illinois East for data in Vestal, NY): every distance 1.3 %
  and every area 2.6 % off, silently;
- curved geometries (a CurvePolygon in a GeoPackage) and a shapefile whose ``.cpg`` names the
  wrong encoding: refused, but with "check the file is not corrupt" as the fix;
- a harvest plan in metres labelled as feet (EPSG:2261) beside context layers in feet: placed 160
  miles off, still inside the zone, every setback a pass;
- a colour image (an RGB colour relief or map) given as the DEM with ``--dem-z-units ft``: its red
  channel read as elevations, grades made of colours;
- ``--out ""`` (an unset variable) and ``--out .`` (the folder the run is started in, swapped away
  from under the shell);
- a ``.prj`` whose CRS is named ``unknown`` (an ESRI export of a custom zone in international
  feet): messages said "reprojected to unknown".
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import geopandas as gpd
import pytest
from catalogue import Case, parcels, run_case, sample_gpkg, screen, write_gpkg
from common import X0, Y0
from shapely.geometry import box

from geoconstraints.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
SAMPLE_GPKG, SAMPLE_DEM = SAMPLE / "vestal_sample.gpkg", SAMPLE / "dem.tif"

CASES: dict[str, Callable[[Path], Case]] = {}


def case(fn: Callable[[Path], Case]) -> Callable[[Path], Case]:
    CASES[fn.__name__] = fn
    return fn


@case
def two_layers_none_named(folder: Path) -> Case:
    """--parcels town.gpkg holding layers 'a' and 'b': which is the parcels is not known (GDAL read 'a')."""
    gpkg = write_gpkg(folder / "two.gpkg", {"a": parcels(), "b": parcels(2)})
    return Case(screen(folder, sample_gpkg(folder), "--parcels", str(gpkg)), 2,
                ("layer parcels (two.gpkg)", "holds 2 layers (a, b)", "none is named parcels",
                 "--parcels two.gpkg:LAYER", 'layer = "LAYER"'), out_dir=folder / "out")


@case
def zip_of_two_shapefiles(folder: Path) -> Case:
    """--parcels shapes.zip holding two shapefiles: refused naming both (GDAL read the first)."""
    import zipfile

    parts = folder / "parts"
    parts.mkdir()
    parcels().to_file(parts / "old.shp", engine="pyogrio")
    parcels(2).to_file(parts / "new.shp", engine="pyogrio")
    z = folder / "shapes.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for p in sorted(parts.iterdir()):
            zf.write(p, p.name)
    return Case(screen(folder, sample_gpkg(folder), "--parcels", str(z)), 2,
                ("layer parcels (shapes.zip)", "holds 2 layers", "new", "old", "--parcels shapes.zip:LAYER"),
                out_dir=folder / "out")


@case
def one_feature_a_billion_feet_off(folder: Path) -> Case:
    """P2 moved 1e9 ft east: named as lying far outside EPSG:2261's area (was screened as no_data)."""
    p = parcels()
    p.loc[1, "geometry"] = box(X0 + 1e9, Y0, X0 + 1e9 + 200, Y0 + 200)
    gpkg = write_gpkg(folder / "town.gpkg", {"parcels": p})
    return Case(screen(folder, gpkg), 2, ("layer parcels (town.gpkg:parcels)", "feature P2 lies far outside",
                                          "EPSG:2261", "Fix or delete it"), forbid=("P1", "P3"),
                out_dir=folder / "out")


@case
def crs_of_another_state(folder: Path) -> Case:
    """--crs EPSG:3435 (Illinois East) for data in Vestal, NY: refused naming the distortion and EPSG:2261."""
    return Case(screen(folder, sample_gpkg(folder), "--crs", "EPSG:3435"), 2,
                ("--crs EPSG:3435 (NAD83 / Illinois East (ftUS))", "distorts distances by 1.2", "areas 2.6 %",
                 "Use EPSG:2261"), out_dir=folder / "out")


@case
def crs_of_a_neighbouring_zone(folder: Path) -> Case:
    """--crs EPSG:2262 (NY West) a little east of its zone: within 1 in 1,000, accepted (not a failure before)."""
    return Case(screen(folder, sample_gpkg(folder), "--crs", "EPSG:2262", "--outputs", "csv"), 0, ("screen: ",))


def _curve_gpkg(path: Path) -> Path:
    """A GeoPackage whose one parcel is a CURVEPOLYGON (a circle of 200 ft across): written as a
    polygon, then its geometry blob replaced by ISO WKB of the curve (pyogrio cannot write curves)."""
    import sqlite3

    gpd.GeoDataFrame({"parcel_id": ["P1"]}, geometry=[box(X0, Y0, X0 + 200, Y0 + 200)], crs=2261).to_file(
        path, layer="parcels", engine="pyogrio")
    pts = [(X0, Y0), (X0 + 200, Y0), (X0, Y0)]
    ring = struct.pack("<BII", 1, 8, len(pts)) + b"".join(struct.pack("<dd", *p) for p in pts)  # CircularString
    wkb = struct.pack("<BII", 1, 10, 1) + ring  # CurvePolygon
    con = sqlite3.connect(path)
    try:
        srs, col = con.execute("SELECT srs_id, column_name FROM gpkg_geometry_columns WHERE table_name='parcels'").fetchone()
        for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='trigger'").fetchall():
            con.execute(f'DROP TRIGGER "{name}"')  # the R-tree triggers call ST_ functions sqlite3 lacks
        con.execute(f'UPDATE parcels SET "{col}" = ?', (b"GP" + bytes([0, 1]) + struct.pack("<i", srs) + wkb,))
        con.execute("UPDATE gpkg_geometry_columns SET geometry_type_name='CURVEPOLYGON' WHERE table_name='parcels'")
        con.commit()
    finally:
        con.close()
    return path


@case
def curved_geometries(folder: Path) -> Case:
    """A CURVEPOLYGON parcel: refused with the fix (straighten with ogr2ogr -nlt CONVERT_TO_LINEAR / QGIS)."""
    gpkg = _curve_gpkg(folder / "curves.gpkg")
    return Case(screen(folder, None, "--parcels", str(gpkg)), 2,
                ("layer parcels (curves.gpkg)", "curved geometries", "ogr2ogr -nlt CONVERT_TO_LINEAR", "Segmentize"),
                forbid=("corrupt",), out_dir=folder / "out")


@case
def shapefile_cpg_names_the_wrong_encoding(folder: Path) -> Case:
    """Owner names written in Latin-1, the .cpg saying UTF-8: refused naming the encoding and the .cpg."""
    p = parcels()
    p["owner"] = ["Müller", "Peña", "Zoë"]
    p["parcel_id"] = ["Ñ-1", "Ñ-2", "P3"]
    shp = folder / "parcels.shp"
    p.to_file(shp, engine="pyogrio", encoding="latin1")
    (folder / "parcels.cpg").write_text("UTF-8")
    return Case(screen(folder, None, "--parcels", str(shp)), 2,
                ("layer parcels (parcels.shp)", "not in the encoding the file declares (its .cpg)", "1252"),
                forbid=("corrupt",), out_dir=folder / "out")


@case
def prj_named_unknown(folder: Path) -> Case:
    """A .prj PROJCS["unknown", ...] in international feet: labelled by its projection and unit."""
    crs = ("+proj=tmerc +lat_0=40 +lon_0=-76.5833333333333 +k=0.9999375 +x_0=250000 +y_0=0 +datum=NAD83 "
           "+units=ft +no_defs")
    shp = folder / "parcels.shp"
    parcels().to_crs(crs).to_file(shp, engine="pyogrio")
    return Case(["layers", str(shp)], 0, ("CRS unnamed CRS (Transverse Mercator, foot)",), forbid=("CRS unknown",))


@case
def colour_image_as_dem(folder: Path) -> Case:
    """--dem a colour relief (3 bands of 0-255, RGB) with --dem-z-units ft: refused as a picture (its red
    channel was read as elevations in feet: the sample's 660 ft run over 25 % on H-1 read as a pass)."""
    import numpy as np
    import rasterio
    from affine import Affine

    rgb = folder / "relief.tif"
    z = (np.add.outer(np.arange(40), np.arange(40)) * 3 % 256).astype("uint8")
    with rasterio.open(rgb, "w", driver="GTiff", width=40, height=40, count=3, dtype="uint8", crs="EPSG:2261",
                       transform=Affine(10, 0, X0 - 50, 0, -10, Y0 + 350), photometric="RGB") as dst:
        for b in (1, 2, 3):
            dst.write(z, b)
    return Case(screen(folder, sample_gpkg(folder), "--dem", str(rgb), "--dem-z-units", "ft"), 2,
                ("DEM relief.tif", "band 1 is the red channel of a colour image (3 bands of 8-bit values)",
                 "Give the elevation raster itself"), out_dir=folder / "out")


@case
def plan_in_metres_labelled_feet(folder: Path) -> Case:
    """The harvest plan's coordinates in metres, labelled EPSG:2261 (feet), beside context layers in feet:
    it landed 160 miles off, still inside the zone, and every setback from the dwellings and streams passed."""
    from catalogue import harvest, harvest_area
    from shapely.affinity import scale
    from shapely.geometry import Point

    plan = harvest_area()
    plan["geometry"] = [scale(g, 0.3048, 0.3048, origin=(0, 0)) for g in plan.geometry]
    dwellings = gpd.GeoDataFrame({"id": ["D1"]}, geometry=[Point(X0 + 600, Y0 + 200)], crs=2261)
    gpkg = write_gpkg(folder / "plan.gpkg", {"harvest_area": plan, "dwellings": dwellings})
    return Case(harvest(folder, gpkg), 2, ("layer dwellings lies 162 miles from layer harvest_area",
                                           "within 50 miles", "metres labelled as feet", "geoconstraints layers"),
                out_dir=folder / "out")


@case
def rotated_dem(folder: Path) -> Case:
    """--dem a rotated grid (a geotransform with rotation terms): refused, now with the fix (gdalwarp into its
    own CRS makes it north-up); before, the message ended at "rotated grids are not supported for contours"."""
    import rasterio
    from affine import Affine

    with rasterio.open(SAMPLE_DEM) as src:
        z, t = src.read(1), src.transform
    tilted = folder / "tilted dem.tif"
    with rasterio.open(tilted, "w", driver="GTiff", width=z.shape[1], height=z.shape[0], count=1, dtype="float32",
                       crs="EPSG:2261", transform=Affine(9.8, 2.0, t.c, 2.0, -9.8, t.f)) as dst:
        dst.write(z, 1)
        dst.update_tags(1, UNITTYPE="ft")
    from catalogue import harvest

    return Case(harvest(folder, SAMPLE_GPKG, "--dem", str(tilted), "--dem-z-units", "ft"), 2,
                ("rotated grids are not supported",
                 "gdalwarp -t_srs EPSG:2261 'tilted dem.tif' 'tilted dem_north_up.tif'", "give that file"), out_dir=folder / "out")


@case
def out_empty(folder: Path) -> Case:
    """--out "" (an unset shell variable): refused before any work (it named the folder the run was started
    in: refused late with "--out  holds town.gpkg", or, in an empty folder, written there)."""
    return Case(screen(folder, sample_gpkg(folder))[:-1] + [""], 2,
                ("--out '' names no folder", "--out results"))


@case
def out_is_the_working_folder(folder: Path) -> Case:
    """--out . from an empty folder (the inputs elsewhere): refused (the run swapped the folder away from
    under the shell, which then showed an empty, deleted folder)."""
    gpkg = sample_gpkg(folder)
    here = folder / "work"
    here.mkdir()
    return Case(["screen", str(gpkg), "--outputs", "csv", "--out", "."], 2,
                ("--out . is the folder this run was started in", "--out results"), extra={"cwd": here})


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_more(name, tmp_path, runner, monkeypatch):
    folder = tmp_path / name
    folder.mkdir()
    monkeypatch.chdir(folder)  # a case may build its inputs relative to the working folder
    run_case(CASES[name](folder), folder, runner, monkeypatch, quiet=False)


def test_layer_named_after_the_role_is_read_from_a_file_of_several(tmp_path):
    """--parcels town.gpkg holding 'zoning' and 'Parcels': the layer named after the role is read
    (GDAL read the first, zoning's 2 features, as parcels)."""
    from geoconstraints.io.layers import load_layers

    gpkg = write_gpkg(tmp_path / "town.gpkg", {"zoning": parcels(2), "Parcels": parcels(3)})
    layers = load_layers(parcels=str(gpkg))
    assert len(layers["parcels"]) == 3
    assert not [w for w in layers.warnings if "More than one layer" in w]


def test_empty_parcels_layer_is_named_as_empty(tmp_path, runner):
    """--parcels a layer with no feature: the error said "screen needs a parcels layer: give --parcels", for a
    layer that was given; it now says the layer has no features."""
    from catalogue import flood_zones

    gpkg = write_gpkg(tmp_path / "town.gpkg", {"parcels": parcels().iloc[:0], "flood_zones": flood_zones()})
    res = runner.invoke(main, screen(tmp_path, gpkg))
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"error: layer parcels ({gpkg}:parcels) has no features: nothing to screen" in res.stderr, res.stderr
    assert "give --parcels" not in res.stderr and not (tmp_path / "out").exists()


def test_site_plan_scale_far_too_small_says_a_number_a_person_reads(tmp_path, runner):
    """--scale 1e-300: the message gave the sheet count in 300 digits."""
    res = runner.invoke(main, ["siteplan", str(SAMPLE_GPKG), "--scale", "1e-300", "--out", str(tmp_path / "out")])
    assert res.exit_code == 2 and "would need more than a million sheets" in res.stderr, res.stderr
    assert len(res.stderr) < 400 and "Give --scale" in res.stderr
