"""Tests for geoconstraints.inspect.describe_file (the ``layers`` command)."""

from __future__ import annotations

import shutil

import geopandas as gpd
from catalogue import parcels, write_dem, write_gpkg
from common import REALDATA as REAL
from common import X0, Y0
from shapely.geometry import Point

from geoconstraints.io.describe import describe_file, role_of_layer


def test_role_of_layer():
    assert role_of_layer("parcels", "x", 2) == "parcels"
    assert role_of_layer("Haul-Roads", "x", 2) == "haul_roads"
    assert role_of_layer("S_FLD_HAZ_AR", "x", 1) == "flood_zones"
    assert role_of_layer("whatever", "S_BFE", 1) == "bfe_lines"  # a one-layer file: its name counts
    assert role_of_layer("whatever", "parcels", 2) is None
    assert role_of_layer("lots", "lots", 1) is None


def test_describe_role_geopackage(tmp_path):
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"parcels": parcels(), "lots": parcels(2)})
    lines, ok = describe_file(gpkg)
    assert ok
    assert lines[0] == "t.gpkg: 2 layers"
    text = "\n".join(lines)
    assert "layer parcels -> role parcels: 3 features (Polygon), CRS EPSG:2261, working CRS EPSG:2261" in text
    assert "    fields: parcel_id, zoning" in lines
    assert "layer lots: not a role name; 2 features (Polygon), CRS EPSG:2261, fields parcel_id, zoning" in text
    assert "map it with --ROLE t.gpkg:lots" in text


def test_describe_problem_listed(tmp_path):
    p = parcels()
    p.loc[2, "geometry"] = Point(X0, Y0)
    gpkg = tmp_path / "t.gpkg"
    p.to_file(gpkg, layer="parcels", driver="GPKG", geometry_type="Unknown")
    lines, ok = describe_file(gpkg)
    assert ok  # the file is readable; the layer has a problem
    assert lines[1].startswith("  layer parcels -> role parcels: 3 features (Unknown), CRS EPSG:2261")
    assert lines[2] == ("    problem: layer parcels (t.gpkg:parcels): expected polygon geometries, found point "
                        "in feature(s) P3. Remove them or give the right layer for parcels")


def test_describe_real_bfe_shapefile():
    lines, ok = describe_file(REAL / "lexington_va" / "S_BFE.shp")
    assert ok
    text = "\n".join(lines)
    assert "layer S_BFE -> role bfe_lines: 510 features (LineString), CRS EPSG:4269, working CRS" in text
    assert "State Plane zone for the data's location: EPSG:2284 NAD83 / Virginia South (ftUS)" in text
    assert "510 feature(s) repeat another feature exactly" in text


def test_describe_real_attribute_table(tmp_path):
    dbf = tmp_path / "S_FLD_HAZ_AR.dbf"
    shutil.copyfile(REAL / "lexington_va" / "S_FLD_HAZ_AR_attributes_only.dbf", dbf)
    lines, ok = describe_file(dbf)
    assert ok
    assert "938 features (no geometry), CRS none" in lines[1]
    assert "has no geometry column" in lines[2]


def test_describe_dem(tmp_path):
    lines, ok = describe_file(write_dem(tmp_path / "ft.tif", units="ft"))
    assert ok and "role dem: raster 40x40, CRS EPSG:2261, cell 10.000 ft, z in ft (metadata)" in lines[1]
    lines, ok = describe_file(write_dem(tmp_path / "none.tif", units=None))
    assert ok and "raster 40x40" in lines[1] and "vertical units unknown" in lines[2]


def test_describe_unreadable(tmp_path):
    (tmp_path / "zero.gpkg").write_bytes(b"")
    lines, ok = describe_file(tmp_path / "zero.gpkg")
    assert not ok and "0 bytes" in lines[1]
    (tmp_path / "bad.tif").write_text("no raster")
    lines, ok = describe_file(tmp_path / "bad.tif")
    assert not ok and "problem:" in lines[1]
    lines, ok = describe_file(tmp_path / "missing.gpkg")
    assert not ok and "does not exist" in lines[1]


def test_describe_geojson_lonlat(tmp_path):
    gj = tmp_path / "parcels.geojson"
    gpd.GeoDataFrame(parcels(crs=4326)).to_file(gj, driver="GeoJSON")
    lines, ok = describe_file(gj)
    assert ok and "role parcels: 3 features (Polygon), CRS EPSG:4326, working CRS EPSG:2261" in lines[1]


def test_layers_shows_the_lonlat_extent_of_each_layer() -> None:
    # the sample town lies near Vestal, NY (about 76.05 W, 42.08 N): the extent line lets a user
    # see a wrongly labelled CRS at a glance
    from geoconstraints import sample_path
    from geoconstraints.io.describe import describe_file

    lines, ok = describe_file(sample_path("vestal_sample.gpkg"))
    assert ok
    extents = [ln for ln in lines if ln.strip().startswith("extent: lon -76.0")]
    assert len(extents) >= 15 and all("lat 42.0" in ln for ln in extents)
