"""Tests for geoconstraints.layers: loading by role, CRS gate, field mapping, ids, geometry
cleaning and NFHL sentinels, on synthetic layers and on the real files in tests/data/real.

Expected values come from hand arithmetic (in the comments) or an independent tool (pyproj's
geodesic on the ellipsoid, the CALCACRES field computed by Tompkins County).
"""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely
from catalogue import flood_zones, parcels, write_dem, write_gpkg
from common import EDGE_AREAS_SQFT, EDGE_GEOMETRIES, NY_FT, X0, Y0
from common import REALDATA as REAL
from pyproj import CRS, Geod
from shapely.geometry import LineString, Point, Polygon

from geoconstraints.errors import CRSError, DemError, FieldError, GeometryError, InputError, LayerReadError
from geoconstraints.io.layers import load_layers
from geoconstraints.io.roles import ROLES
from geoconstraints.io.sources import LayerSource, parse_path_layer, resolve_sources
from geoconstraints.io.validate import MAX_MAGNITUDE, id_texts, nfhl_sentinels
from geoconstraints.units import SQFT_PER_ACRE

S_BFE = REAL / "lexington_va" / "S_BFE.shp"
FLD_DBF = REAL / "lexington_va" / "S_FLD_HAZ_AR_attributes_only.dbf"
TOMPKINS = REAL / "tompkins_ny" / "cayuga_nature_center_parcels.gpkg"
MUNCY = REAL / "muncy_pa" / "Muncy_dem_resampled.tif"


# ------------------------------------------------------------------------------------------
# real data: Lexington, VA S_BFE (EPSG:4269, NGVD29)

@pytest.fixture(scope="module")
def lexington_bfe():
    return load_layers(overrides={"bfe_lines": str(S_BFE)})


def test_bfe_working_crs_is_virginia_state_plane(lexington_bfe):
    crs = lexington_bfe.crs
    # Lexington (Rockbridge County) is in the Virginia South zone, NAD83 / Virginia South (ftUS)
    assert crs.to_epsg() == 2284
    assert crs.axis_info[0].unit_name == "US survey foot"
    assert "State Plane zone" in lexington_bfe.crs_reason and "EPSG:2284" in lexington_bfe.crs_reason
    assert lexington_bfe.info["bfe_lines"].source_crs == "EPSG:4269"


def test_bfe_lengths_in_feet_match_geodesic(lexington_bfe):
    raw = gpd.read_file(S_BFE)
    g = lexington_bfe["bfe_lines"]
    # independent length: the geodesic on the GRS80 ellipsoid of NAD83, metres -> international ft
    geod = Geod(ellps="GRS80")
    geodesic_ft = np.array([geod.geometry_length(line) for line in raw.geometry]) / 0.3048
    # the loader dropped exact duplicate records; match the survivors by their attributes + shape
    key_raw = pd.Series([shapely.to_wkb(x) for x in raw.geometry])
    assert key_raw.duplicated().sum() == len(raw) - len(g) == 510  # every line is in the file twice
    keep = ~key_raw.duplicated().to_numpy()
    # US survey ft are 2 ppm longer than international ft; the Lambert zone's scale error is under
    # 1/10,000, so the two agree to well under 0.5 %
    ours = g.geometry.length.to_numpy() * CRS(g.crs).axis_info[0].unit_conversion_factor / 0.3048
    ratio = ours / geodesic_ft[keep]
    assert np.all(np.abs(ratio - 1) < 0.005), ratio.min()
    assert abs(ours.sum() / geodesic_ft[keep].sum() - 1) < 0.001
    # plausible BFE line lengths: tens to a few thousand feet
    assert 10 < np.median(ours) < 3000


def test_bfe_elev_np_and_sentinels_are_missing(lexington_bfe):
    raw = gpd.read_file(S_BFE)
    g = lexington_bfe["bfe_lines"]
    assert g["ELEV"].dtype == "float64"
    assert not (g["ELEV"] == -9999).any()
    # the rows with V_DATUM 'NP' have no ELEV; every other ELEV is a real elevation in feet
    np_rows = g["V_DATUM"] == "NP"
    assert np_rows.sum() == 1  # one line of 510 says NP
    assert g.loc[np_rows, "ELEV"].isna().all()
    assert (g.loc[~np_rows, "ELEV"].min(), g.loc[~np_rows, "ELEV"].max()) == (709.0, 1468.0)  # SOURCES.md range
    assert set(raw["V_DATUM"]) == set(g["V_DATUM"]) == {"NGVD29", "NP"}  # datum preserved


def test_bfe_duplicate_records_dropped_with_warning(lexington_bfe):
    assert any("510 feature(s) repeat another feature exactly" in w and "BFE_LN_ID" in w
               for w in lexington_bfe.warnings)
    ids = lexington_bfe["bfe_lines"]["feature_id"]
    assert ids.is_unique
    assert lexington_bfe.info["bfe_lines"].features == 510


def test_bfe_text_np_in_elev_becomes_missing(tmp_path):
    lines = gpd.GeoDataFrame({"BFE_LN_ID": ["a", "b", "c"], "ELEV": ["812.5", "NP", "-9999"]},
                             geometry=[LineString([(X0, Y0), (X0 + 100, Y0)])] * 3, crs=NY_FT)
    g = load_layers(overrides={"bfe_lines": str(write_gpkg(tmp_path / "b.gpkg", {"bfe_lines": lines}))})["bfe_lines"]
    assert g["ELEV"].iloc[0] == 812.5
    assert g["ELEV"].iloc[1:].isna().all()


# ------------------------------------------------------------------------------------------
# real data: the Lexington S_FLD_HAZ_AR attribute table (no geometry)

def test_attribute_table_is_not_a_flood_layer(tmp_path):
    dbf = tmp_path / "S_FLD_HAZ_AR.dbf"
    shutil.copyfile(FLD_DBF, dbf)
    with pytest.raises(GeometryError, match=r"layer flood_zones \(S_FLD_HAZ_AR.dbf\): has no geometry"):
        load_layers(overrides={"flood_zones": str(dbf)})


def test_attribute_table_domains_and_sentinels():
    df = pyogrio.read_dataframe(FLD_DBF, read_geometry=False)
    assert len(df) == 938
    assert df["FLD_ZONE"].value_counts().to_dict() == {"AE": 446, "X": 400, "A": 92}
    # 878 rows hold the -9999 'no BFE' sentinel, 10 are null, 50 hold real BFEs (up to 1343 ft)
    assert int((df["STATIC_BFE"] == -9999).sum()) == 878 and int(df["STATIC_BFE"].isna().sum()) == 10
    out = nfhl_sentinels(df.copy(), ROLES["flood_zones"])
    assert int(out["STATIC_BFE"].isna().sum()) == 878 + 10
    assert out["STATIC_BFE"].notna().sum() == 50 and out["STATIC_BFE"].max() == 1343.0
    assert (out["STATIC_BFE"].dropna() > 0).all()


# ------------------------------------------------------------------------------------------
# real data: Tompkins County parcels (EPSG:3857)

@pytest.fixture(scope="module")
def tompkins():
    return load_layers(overrides={"parcels": str(TOMPKINS)})


def test_tompkins_working_crs_chosen_by_location(tompkins):
    # EPSG:3857 is projected but in metres with a scale of 1/cos(lat): not used; Ulysses, NY
    # (lon -76.6) is in the Central zone
    assert tompkins.crs.to_epsg() == 2261
    assert "State Plane zone" in tompkins.crs_reason and "New York Central" in tompkins.crs_reason
    assert tompkins.info["parcels"].source_crs == "EPSG:3857"


def test_tompkins_acres_match_calcacres(tompkins):
    g = tompkins["parcels"]
    acres = g.geometry.area.to_numpy() * (1200 / 3937 / 0.3048) ** 2 / SQFT_PER_ACRE  # ftUS^2 -> ft^2
    np.testing.assert_allclose(acres, g["CALCACRES"].to_numpy(), rtol=0.02)


def test_tompkins_web_mercator_areas_are_off_by_secant_squared(tompkins):
    raw = gpd.read_file(TOMPKINS)
    g = tompkins["parcels"]
    lat = np.deg2rad(gpd.GeoSeries(raw.geometry.centroid, crs=raw.crs).to_crs(4326).y.to_numpy())
    true_sqm = g.geometry.area.to_numpy() * (1200 / 3937) ** 2
    mercator_sqm = raw.geometry.area.to_numpy()
    # Mercator scale is sec(lat) in each direction, so areas are sec^2(lat) ~ 1.84 too large at 42.5 N
    np.testing.assert_allclose(mercator_sqm / true_sqm, 1 / np.cos(lat) ** 2, rtol=0.01)
    assert np.all(mercator_sqm / true_sqm > 1.8)


def test_tompkins_ids_from_rps_sbl(tompkins):
    g = tompkins["parcels"]
    assert g["feature_id"].tolist() == gpd.read_file(TOMPKINS)["SBL"].tolist()


# ------------------------------------------------------------------------------------------
# real data: Muncy lidar DEM (uint16 feet, no nodata, no unit metadata)

def test_muncy_dem_needs_z_units():
    with pytest.raises(DemError, match="Muncy_dem_resampled.tif.*--dem-z-units"):
        load_layers(dem=str(MUNCY))


def test_muncy_dem_with_z_units_ft():
    layers = load_layers(dem=str(MUNCY), dem_z_units="ft")
    dem = layers.dem
    assert dem.z_units == "ft" and dem.z_units_source == "user"
    assert dem.nodata is None
    assert dem.crs.to_epsg() == 2271
    assert abs(dem.cell_size_ft - 16.404) < 0.01  # 5 m = 16.404 ft
    assert Path(MUNCY).resolve() in layers.input_paths()


# ------------------------------------------------------------------------------------------
# synthetic: sources, fields, ids

def test_role_named_geopackage_and_feature_ids(tmp_path):
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"parcels": parcels(), "flood_zones": flood_zones(),
                                            "notes": parcels().rename(columns={"parcel_id": "x"})})
    layers = load_layers(gpkg)
    assert set(layers) == {"parcels", "flood_zones"}  # 'notes' is not a role
    assert layers.crs.to_epsg() == 2261
    assert layers["parcels"]["feature_id"].tolist() == ["P1", "P2", "P3"]
    assert layers["flood_zones"]["feature_id"].tolist() == ["FA1", "FA2"]
    # 200 ft x 200 ft = 40,000 sq ft = 0.918 acres
    assert layers["parcels"].geometry.area.tolist() == pytest.approx([40_000.0] * 3)
    assert layers.get_layer("streams") is None
    assert list(layers.summary()["role"]) == ["parcels", "flood_zones"]


def test_geopackage_read_through_arrow_gives_the_row_readers_frame(tmp_path):
    """A GeoPackage is read through GDAL's Arrow stream (ARROW_SUFFIXES): dates, times, whole
    numbers with a missing value, booleans and text come out as pyogrio's row reader gives them."""
    import datetime as dt

    import pyarrow as pa

    from geoconstraints.io.sources import read_source

    table = pa.table({
        "parcel_id": pa.array(["P1", None]), "sold": pa.array([dt.date(2020, 1, 2), None], pa.date32()),
        "stamp": pa.array([dt.datetime(2020, 1, 2, 3, 4), None], pa.timestamp("ms")),
        "units": pa.array([3, None], pa.int64()), "vacant": pa.array([True, None], pa.bool_()),
        "n": pa.array([1, 2], pa.int32()),
        "geometry": pa.array(shapely.to_wkb([Point(X0, Y0).buffer(10), Point(X0 + 50, Y0).buffer(10)]))})
    path = tmp_path / "t.gpkg"
    pyogrio.write_arrow(table, path, layer="parcels", driver="GPKG", geometry_name="geometry",
                        geometry_type="Polygon", crs=NY_FT)
    got = read_source(LayerSource("parcels", path, None, {}, None))
    rows = gpd.read_file(path, layer="parcels", engine="pyogrio", use_arrow=False)
    assert got.dtypes.astype(str).tolist() == rows.dtypes.astype(str).tolist()
    assert str(got["sold"].dtype).startswith("datetime64")  # not datetime.date objects
    pd.testing.assert_frame_equal(pd.DataFrame(got.drop(columns="geometry")),
                                  pd.DataFrame(rows.drop(columns="geometry")))
    assert got.geometry.geom_equals_exact(rows.geometry, 0).all()


def test_nfhl_fields_and_sentinels(tmp_path):
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"flood_zones": flood_zones()})
    fz = load_layers(gpkg)["flood_zones"]
    assert fz["STATIC_BFE"].iloc[0] == 812.0
    assert math.isnan(fz["STATIC_BFE"].iloc[1])  # -9999 -> missing
    assert fz["DEPTH"].isna().all()
    assert fz["SFHA_TF"].tolist() == ["T", "F"]


# NFHL "no value" codes other than -9999, BFEs of 0 or below any ground, road widths, yes/no words

def _one_warning(layers, fragment: str) -> str:
    ws = [w for w in layers.warnings if fragment in w]
    assert len(ws) == 1, layers.warnings
    return ws[0]


@pytest.mark.parametrize(("value", "kept", "warned"), [
    (-9999.0, None, None),  # NFHL's own code: no value, silently
    (-9999.000001, None, "a 'no value' code like NFHL's -9999"),
    (-8888.0, None, "a 'no value' code like NFHL's -9999"),
    (-999.0, None, "a 'no value' code like NFHL's -9999"),  # at the bound
    (0.0, None, "NFHL never gives a BFE of 0 ft"),
    (-300.0, -300.0, "below sea level"),  # the lowest believable BFE: kept, said
    (-2.5, -2.5, "below sea level"),
    (0.5, 0.5, None),
    (812.0, 812.0, None),
])
def test_static_bfe_codes_zero_and_below_sea_level(tmp_path, value, kept, warned):
    fz = flood_zones()
    fz.loc[0, "STATIC_BFE"] = value
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"flood_zones": fz}))
    got = layers["flood_zones"]["STATIC_BFE"].iloc[0]
    assert math.isnan(got) if kept is None else got == kept
    if warned is None:
        assert not [w for w in layers.warnings if "STATIC_BFE" in w], layers.warnings
    else:
        w = _one_warning(layers, "field STATIC_BFE")
        assert warned in w and "layer flood_zones (t.gpkg:flood_zones)" in w and "1 feature(s) (FA1)" in w


@pytest.mark.parametrize("value", [-998.9, -849.0, -300.1])
def test_bfe_below_any_ground_refused(tmp_path, value):
    # over the no-value codes (<= -999) and under -300 ft: a BFE lower than Death Valley is no elevation
    lines = gpd.GeoDataFrame({"BFE_LN_ID": ["a", "b"], "ELEV": [812.5, value]},
                             geometry=[LineString([(X0, Y0), (X0 + 100, Y0)])] * 2, crs=NY_FT)
    with pytest.raises(FieldError, match=rf"layer bfe_lines \(b.gpkg\): field ELEV = {value:g} is below "
                                         r"-300 ft.*no base flood elevation \(feature b\).*-9999"):
        load_layers(overrides={"bfe_lines": str(write_gpkg(tmp_path / "b.gpkg", {"bfe_lines": lines}))})


def test_bfe_codes_in_elev_and_metres(tmp_path):
    lines = gpd.GeoDataFrame({"BFE_LN_ID": ["a", "b", "c", "d"], "ELEV": [812.5, -8888.0, 0.0, -91.0],
                              "LEN_UNIT": ["Feet", "Feet", "Feet", "Meters"]},
                             geometry=[LineString([(X0, Y0), (X0 + 100, Y0)])] * 4, crs=NY_FT)
    layers = load_layers(overrides={"bfe_lines": str(write_gpkg(tmp_path / "b.gpkg", {"bfe_lines": lines}))})
    g = layers["bfe_lines"]
    assert g["ELEV"].iloc[0] == 812.5 and g["ELEV"].iloc[1:3].isna().all()
    assert g["ELEV"].iloc[3] == -91.0  # -91 m = -298.6 ft: below sea level, believable
    assert "1 feature(s) (b)" in _one_warning(layers, "holds -8888")
    assert "1 feature(s) (c)" in _one_warning(layers, "field ELEV is 0")
    lines["ELEV"] = [812.5, 800.0, 801.0, -92.0]  # -92 m = -301.8 ft
    with pytest.raises(FieldError, match=r"field ELEV = -92 m is below -300 ft.*feature d\)"):
        load_layers(overrides={"bfe_lines": str(write_gpkg(tmp_path / "b2.gpkg", {"bfe_lines": lines}))})


def test_depth_other_code_is_no_value_not_negative(tmp_path):
    fz = flood_zones()
    fz["DEPTH"] = [-8888.0, -9999.0]  # was refused as a negative depth; a code like -9999
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"flood_zones": fz}))
    assert layers["flood_zones"]["DEPTH"].isna().all()
    assert "1 feature(s) (FA1)" in _one_warning(layers, "field DEPTH holds -8888")


def _roads(widths: list) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"id": [f"R{i + 1}" for i in range(len(widths))], "row_width_ft": widths},
                            geometry=[LineString([(X0, Y0 + 50 * i), (X0 + 500, Y0 + 50 * i)])
                                      for i in range(len(widths))], crs=NY_FT)


def test_row_width_up_to_1000_ft_kept(tmp_path):
    g = load_layers(overrides={"roads": str(write_gpkg(tmp_path / "r.gpkg", {"roads": _roads([999.99, 1000.0])}))})
    assert g["roads"]["row_width_ft"].tolist() == [999.99, 1000.0]


@pytest.mark.parametrize(("value", "shown"), [(1000.01, "1,000.01"), (1e7, "10,000,000"), (1e14, "1e+14")])
def test_row_width_over_1000_ft_refused(tmp_path, value, shown):
    # 1e300 made GEOS fail in HRV-002/003/025; 1e7 ft put every landing inside one road's right-of-way
    gpkg = write_gpkg(tmp_path / "r.gpkg", {"roads": _roads([50.0, value])})
    with pytest.raises(FieldError, match=rf"layer roads \(r.gpkg\): field row_width_ft = {re.escape(shown)} is over "
                                         r"1,000, wider than any road right-of-way \(feature R2\). Correct the value"):
        load_layers(overrides={"roads": str(gpkg)})


def test_constructed_word_neither_yes_nor_no_is_not_stated(tmp_path):
    trails = gpd.GeoDataFrame({"id": ["S1", "S2", "S3", "S4", "S5"], "constructed": ["maybe", "No", " ", "yes", "maybe"]},
                              geometry=[LineString([(X0, Y0 + 10 * i), (X0 + 100, Y0 + 10 * i)]) for i in range(5)],
                              crs=NY_FT)
    layers = load_layers(overrides={"skid_trails": str(write_gpkg(tmp_path / "s.gpkg", {"skid_trails": trails}))})
    assert layers["skid_trails"]["constructed"].tolist() == [None, False, None, True, None]
    w = _one_warning(layers, "field constructed")
    assert "layer skid_trails (s.gpkg)" in w and "'maybe' in 2 feature(s) (S1, S5)" in w
    assert "read as not stated, as an empty value is" in w


def test_sfha_flag_read_as_given_never_guessed_from_the_zone(tmp_path):
    # no SFHA_TF field: the column is empty (the rulebook's zone lists classify FLD_ZONE), never guessed from the
    # zone's first letter (an older map's "ANI", area not included, would have been made SFHA); odd flags: empty
    fz = flood_zones().drop(columns=["SFHA_TF"])
    fz["FLD_ZONE"] = ["ae ", "ANI"]
    out = load_layers(write_gpkg(tmp_path / "t.gpkg", {"flood_zones": fz}))["flood_zones"]
    assert out["FLD_ZONE"].tolist() == ["AE", "ANI"]
    assert out["SFHA_TF"].tolist() == [None, None]
    fz = flood_zones()
    fz["SFHA_TF"] = [" t", "yes"]
    out = load_layers(write_gpkg(tmp_path / "u.gpkg", {"flood_zones": fz}))["flood_zones"]
    assert out["SFHA_TF"].tolist() == ["T", None]


def test_lowercase_fields_mapped(tmp_path):
    fz = flood_zones()
    fz.columns = [c.lower() if c != "geometry" else c for c in fz.columns]
    out = load_layers(write_gpkg(tmp_path / "t.gpkg", {"flood_zones": fz}))["flood_zones"]
    assert {"FLD_ZONE", "STATIC_BFE", "FLD_AR_ID"} <= set(out.columns)
    assert "fld_zone" not in out.columns
    assert out["feature_id"].tolist() == ["FA1", "FA2"]


def test_project_file_maps_fields_and_id(tmp_path):
    fz = flood_zones().rename(columns={"FLD_ZONE": "ZONE", "FLD_AR_ID": "KEY"})
    write_gpkg(tmp_path / "data.gpkg", {"fz": fz, "p": parcels()})
    proj = tmp_path / "project.toml"
    proj.write_text('crs = "EPSG:2261"\n[layers.flood_zones]\npath = "data.gpkg"\nlayer = "fz"\n'
                    'id = "KEY"\nfields = { FLD_ZONE = "ZONE" }\n[layers.parcels]\npath = "data.gpkg:p"\n')
    layers = load_layers(project=proj)
    assert layers["flood_zones"]["FLD_ZONE"].tolist() == ["AE", "X"]
    assert layers["flood_zones"]["feature_id"].tolist() == ["FA1", "FA2"]
    assert layers.crs_reason == "given with --crs"
    assert layers.info["parcels"].layer == "p"


def test_overrides_win_over_geopackage(tmp_path):
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"parcels": parcels(3)})
    other = write_gpkg(tmp_path / "o.gpkg", {"lots": parcels(5)})
    layers = load_layers(gpkg, overrides={"parcels": f"{other}:lots"})
    assert len(layers["parcels"]) == 5


def test_parse_path_layer(tmp_path):
    assert parse_path_layer("a/b.gpkg:roads") == (Path("a/b.gpkg"), "roads")
    assert parse_path_layer("a/b.gpkg") == (Path("a/b.gpkg"), None)
    weird = tmp_path / "x:y.gpkg"
    weird.write_bytes(b"1")
    assert parse_path_layer(str(weird)) == (weird, None)  # an existing path keeps its colon


def test_resolve_sources_unknown_role():
    with pytest.raises(InputError, match="unknown role 'parcel'; roles are parcels"):
        resolve_sources(overrides={"parcel": "x.gpkg"})


def test_duplicate_ids_told_apart_by_row(tmp_path):
    # real county layers repeat ids (Cambridge MA: '---' twice, '--R' four times): the run goes on
    p = parcels(6)
    p["parcel_id"] = ["---", "A", "---", "--R", "--R", "B"]
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": p}))
    assert layers["parcels"]["feature_id"].tolist() == ["--- (row 1)", "A", "--- (row 3)", "--R (row 4)",
                                                        "--R (row 5)", "B"]
    dup = [w for w in layers.warnings if "share an id" in w]
    assert len(dup) == 1 and "4 feature(s) share an id in field parcel_id (--- (2x), --R (2x))" in dup[0]
    assert "--strict" in dup[0]


def test_duplicate_ids_refused_when_strict(tmp_path):
    p = parcels(4)
    p["parcel_id"] = ["A", "B", "A", "B"]
    with pytest.raises(InputError, match=r"duplicate ids in field parcel_id: A, B\. Each feature"):
        load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": p}), strict=True)


def test_exact_duplicate_record_dropped(tmp_path):
    p = pd.concat([parcels(2), parcels(2).iloc[[0]]], ignore_index=True)
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": p}))
    assert layers["parcels"]["feature_id"].tolist() == ["P1", "P2"]
    assert any("1 feature(s) repeat another feature exactly" in w and "P1" in w for w in layers.warnings)


def test_same_id_different_shape_is_refused(tmp_path):
    p = parcels(2)
    p.loc[1, "parcel_id"] = "P1"
    with pytest.raises(InputError, match="duplicate ids in field parcel_id: P1"):
        load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": p}), strict=True)
    assert load_layers(tmp_path / "t.gpkg")["parcels"]["feature_id"].tolist() == ["P1 (row 1)", "P1 (row 2)"]


def test_numeric_ids_as_text(tmp_path):
    p = parcels(2)
    p["parcel_id"] = [101.0, 102.0]
    g = load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": p}))["parcels"]
    assert g["feature_id"].tolist() == ["101", "102"]


def test_mapped_id_field_blank_is_an_error_when_strict(tmp_path):
    p = parcels(3)
    p.loc[2, "parcel_id"] = ""
    write_gpkg(tmp_path / "t.gpkg", {"parcels": p})
    proj = tmp_path / "p.toml"
    proj.write_text('[layers.parcels]\npath = "t.gpkg"\nid = "parcel_id"\n')
    with pytest.raises(FieldError, match="id field parcel_id is empty in rows 3. Fill in the ids"):
        load_layers(project=proj, strict=True)
    layers = load_layers(project=proj)  # by default: that feature is 'row 3', the others keep their ids
    assert layers["parcels"]["feature_id"].tolist() == ["P1", "P2", "row 3"]
    assert any("id field parcel_id is empty in rows 3 (1 feature(s))" in w for w in layers.warnings)


def test_no_id_field_uses_row_numbers(tmp_path):
    roads = gpd.GeoDataFrame(geometry=[LineString([(X0, Y0), (X0 + 10, Y0)])] * 2, crs=NY_FT)
    g = load_layers(write_gpkg(tmp_path / "t.gpkg", {"haul_roads": roads}))["haul_roads"]
    assert g["feature_id"].tolist() == ["row 1", "row 2"]


# ------------------------------------------------------------------------------------------
# synthetic: geometry

def test_bow_tie_repaired_area(tmp_path):
    p = parcels(2)
    # bow-tie over the 200 ft square of P2: two triangles meeting at the centre, each
    # 200 * 100 / 2 = 10,000 sq ft, 20,000 sq ft together
    x = X0 + 200
    p.loc[1, "geometry"] = Polygon([(x, Y0), (x + 200, Y0 + 200), (x + 200, Y0), (x, Y0 + 200)])
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": p}))
    g = layers["parcels"]
    assert g.geometry.is_valid.all()
    assert g.geometry.area.tolist() == pytest.approx([40_000.0, 20_000.0])
    assert any("1 invalid geometry repaired with make_valid: P2" in w for w in layers.warnings)


def test_repaired_features_are_recorded_by_id(tmp_path):
    # P2 a bow-tie (nothing lost: its two triangles are all the ring encloses), P3 a ring that winds
    # twice around its middle 100-ft square (make_valid makes that square a hole: 10,000 sq ft lost),
    # P4 a square with a 100-ft spike (dropped by the repair), P1 valid
    p = parcels(4)
    x = X0 + 200
    p.loc[1, "geometry"] = Polygon([(x, Y0), (x + 200, Y0 + 200), (x + 200, Y0), (x, Y0 + 200)])
    x = X0 + 400
    p.loc[2, "geometry"] = Polygon([(x, Y0), (x + 300, Y0), (x + 300, Y0 + 300), (x, Y0 + 300), (x, Y0),
                                    (x + 100, Y0 + 100), (x + 200, Y0 + 100), (x + 200, Y0 + 200),
                                    (x + 100, Y0 + 200), (x + 100, Y0 + 100)])
    x = X0 + 800
    p.loc[3, "geometry"] = Polygon([(x, Y0), (x + 100, Y0), (x + 100, Y0 + 50), (x + 200, Y0 + 50),
                                    (x + 100, Y0 + 50), (x + 100, Y0 + 100), (x, Y0 + 100)])
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": p}))
    assert layers["parcels"].geometry.area.iloc[2] == pytest.approx(90_000 - 10_000)
    assert layers.info["parcels"].repaired == {"P2": False, "P3": True, "P4": True}
    assert layers.repaired_ids("parcels") == ["P2", "P3", "P4"]
    assert layers.repaired_ids("parcels", lost=True) == ["P3", "P4"]
    assert layers.repairs == {"parcels": {"P2": False, "P3": True, "P4": True}}
    valid = load_layers(write_gpkg(tmp_path / "v.gpkg", {"parcels": parcels(2)}))
    assert valid.repaired_ids("parcels") == [] and valid.repairs == {}


def test_z_dropped_and_empty_geometries_dropped(tmp_path):
    p = parcels(3)
    p = p.set_geometry(shapely.force_3d(p.geometry.values, 850.0), crs=NY_FT)
    p.loc[1, "geometry"] = None
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": p}))
    g = layers["parcels"]
    assert not shapely.has_z(g.geometry.values).any()
    assert g["feature_id"].tolist() == ["P1", "P3"]
    assert any("Z coordinates dropped" in w for w in layers.warnings)
    assert any("1 feature(s) with empty geometry dropped: P2" in w for w in layers.warnings)


# what load_layers makes of each edge geometry as parcel P2: (kept area in sq ft or None when
# dropped, words of the warning or of the error)
EDGE_OUTCOMES = {
    "empty": (None, "1 feature(s) with empty geometry dropped: P2"),
    "bowtie": (EDGE_AREAS_SQFT["bowtie"], "1 invalid geometry repaired with make_valid: P2"),
    "sliver": (EDGE_AREAS_SQFT["sliver"], None),
    "multipart": (EDGE_AREAS_SQFT["multipart"], None),
    "z": (EDGE_AREAS_SQFT["z"], "Z coordinates dropped"),
    "point": (GeometryError, "expected polygon geometries, found point in feature(s) P2"),
    "line": (GeometryError, "expected polygon geometries, found line in feature(s) P2"),
}


@pytest.mark.parametrize("name", sorted(EDGE_GEOMETRIES))
def test_edge_geometries_as_parcels(tmp_path, name):
    area, words = EDGE_OUTCOMES[name]
    p = parcels(2)
    p.loc[1, "geometry"] = EDGE_GEOMETRIES[name]
    path = write_gpkg(tmp_path / "t.gpkg", {"parcels": p})
    if area is GeometryError:
        with pytest.raises(GeometryError, match=re.escape(words)):
            load_layers(path)
        return
    layers = load_layers(path)
    g = layers["parcels"].set_index("feature_id")
    assert g.geometry.is_valid.all() and not shapely.has_z(g.geometry.values).any()
    assert g.geometry.area["P1"] == pytest.approx(40_000.0)  # the neighbour is untouched
    if area is None:
        assert list(g.index) == ["P1"]
    else:
        assert g.geometry.area["P2"] == pytest.approx(area, rel=1e-9)
    if words is None:
        assert layers.warnings == []
    else:
        assert any(words in w for w in layers.warnings), layers.warnings


def test_wrong_geometry_kind(tmp_path):
    pts = gpd.GeoDataFrame({"id": ["a"]}, geometry=[Point(X0, Y0)], crs=NY_FT)
    with pytest.raises(GeometryError, match=r"layer haul_roads .*expected line geometries, found point in feature\(s\) a"):
        load_layers(write_gpkg(tmp_path / "t.gpkg", {"haul_roads": pts}))


def test_streams_keep_their_raw_kind_and_fcode(tmp_path):
    # io keeps what the file says (kind trimmed, lower case; FCODE as given): reading FCODE or OSM
    # tags as a kind is the rulebook's (rules.harvest.classify_streams, tested in test_harvest)
    s = gpd.GeoDataFrame({"id": ["s1", "s2", "s3"], "FCODE": [46006, 46003, 46006], "kind": [None, " Canal ", "Intermittent"]},
                         geometry=[LineString([(X0, Y0), (X0 + 100, Y0)])] * 3, crs=NY_FT)
    g = load_layers(write_gpkg(tmp_path / "t.gpkg", {"streams": s}))["streams"]
    assert g["kind"].tolist() == [None, "canal", "intermittent"]
    assert g["FCODE"].tolist() == [46006, 46003, 46006]


# ------------------------------------------------------------------------------------------
# synthetic: CRS gate

def test_mixed_crs_reprojected_to_primary(tmp_path):
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"parcels": parcels(), "flood_zones": flood_zones(4269)})
    layers = load_layers(gpkg)
    assert layers.crs.to_epsg() == 2261
    fz = layers["flood_zones"]
    assert CRS(fz.crs).to_epsg() == 2261
    # the AE zone was 400 ft x 400 ft in EPSG:2261: back within 0.01 sq ft after two transforms
    assert fz.geometry.area.iloc[0] == pytest.approx(160_000.0, abs=0.5)
    assert ("layers come in 2 CRSs (parcels EPSG:2261; flood_zones EPSG:4269); all were reprojected to "
            "EPSG:2261") in " ".join(layers.warnings)


def test_lonlat_only_layers_go_to_state_plane(tmp_path):
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": parcels(crs=4326)}))
    assert layers.crs.to_epsg() == 2261
    assert layers["parcels"].geometry.area.tolist() == pytest.approx([40_000.0] * 3, rel=1e-6)


def test_user_crs_wins(tmp_path):
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": parcels()}), crs="EPSG:2260")
    assert layers.crs.to_epsg() == 2260


def test_no_crs_refused(tmp_path):
    shp = tmp_path / "p.shp"
    parcels().to_file(shp)
    shp.with_suffix(".prj").unlink()
    with pytest.raises(CRSError, match=r"layer parcels \(p.shp\): has no CRS"):
        load_layers(overrides={"parcels": str(shp)})


def test_empty_only_layer_keeps_its_crs(tmp_path):
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": parcels(crs="EPSG:2262").iloc[0:0]}))
    assert layers.crs.to_epsg() == 2262
    assert layers.get_layer("parcels") is None
    assert any("has no features" in w for w in layers.warnings)


def test_layer_read_errors(tmp_path):
    (tmp_path / "zero.gpkg").write_bytes(b"")
    with pytest.raises(LayerReadError, match="0 bytes"):
        load_layers(tmp_path / "zero.gpkg")
    with pytest.raises(LayerReadError, match="does not exist"):
        load_layers(overrides={"parcels": str(tmp_path / "nope.gpkg")})
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"parcels": parcels()})
    with pytest.raises(LayerReadError, match="has no layer 'lots'; it has parcels"):
        load_layers(overrides={"parcels": f"{gpkg}:lots"})


def test_load_layers_does_not_touch_inputs(tmp_path):
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"parcels": parcels(), "flood_zones": flood_zones(4269)})
    dem = write_dem(tmp_path / "dem.tif", units="ft")
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    layers = load_layers(gpkg, dem=dem)
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert layers.info["parcels"].sha256 == __import__("hashlib").sha256(before[gpkg]).hexdigest()
    assert layers.dem.z_units == "ft" and layers.dem.z_units_source == "metadata"


def test_layer_source_label():
    assert LayerSource("parcels", Path("/x/a.gpkg"), "lots").label == "a.gpkg:lots"
    assert LayerSource("parcels", Path("/x/a.shp")).label == "a.shp"


def test_zero_length_line_dropped_not_turned_into_point(tmp_path):
    roads = gpd.GeoDataFrame({"id": ["R1", "R2"]}, geometry=[LineString([(X0, Y0), (X0 + 100, Y0)]),
                                                             LineString([(X0, Y0), (X0, Y0)])], crs=NY_FT)
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"haul_roads": roads}))
    g = layers["haul_roads"]
    assert g["feature_id"].tolist() == ["R1"]
    assert set(g.geom_type) == {"LineString"}
    assert any("no area or length left after repair and were dropped: R2" in w for w in layers.warnings)


def test_repaired_polygon_in_mixed_role_stays_polygon(tmp_path):
    # a polygon with a zero-width spike: make_valid returns polygon + line; streams accept lines
    # and polygons, but a polygon feature must stay a polygon (area 100 x 100 = 10,000 sq ft)
    spike = Polygon([(X0, Y0), (X0 + 100, Y0), (X0 + 100, Y0 + 50), (X0 + 200, Y0 + 50), (X0 + 100, Y0 + 50),
                     (X0 + 100, Y0 + 100), (X0, Y0 + 100)])
    assert not spike.is_valid
    s = gpd.GeoDataFrame({"id": ["S1"]}, geometry=[spike], crs=NY_FT)
    g = load_layers(write_gpkg(tmp_path / "t.gpkg", {"streams": s}))["streams"]
    assert g.geom_type.tolist() in (["Polygon"], ["MultiPolygon"])
    assert g.geometry.area.iloc[0] == pytest.approx(10_000.0)


@pytest.mark.parametrize("values, dtype", [
    ([1234.0, 2.5, None, float("nan"), 1e17, -3.0, 0.1, float("inf")], "float64"),
    ([7, 12, 3000000000], "int64"),
    ([7, None, 12], "Int64"),
    (["A-1", "  ", None, "B 2 ", "\t", "", "x"], "object"),
    (["A-1", "  ", None, "B 2 ", "\u2003", "x"], "string"),
    (["A-1", 5.0, 5.5, None, "  ", 7], "object"),  # mixed: one value at a time
])
def test_id_texts_is_the_value_by_value_reading(values, dtype):
    # the vectorized reading of ids against the reference, one value at a time: blank = missing or only
    # white space; a whole-number float reads as an integer; anything else as str()
    s = pd.Series(values, dtype=dtype)
    text, blank, _ = id_texts(s)

    def one(v):
        if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
            return ""
        if isinstance(v, str) and not v.strip():
            return ""
        return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)

    want = [one(v) for v in s.astype(object)]
    assert text.tolist() == want
    assert blank.tolist() == [w == "" for w in want]


# ------------------------------------------------------------------------------------------
# numbers too large to convert: 1e308 cords was "1e+308 cords = inf cu ft" in HRV-001

def _harvest_areas(cords: list[float]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"id": [f"H{i + 1}" for i in range(len(cords))], "cords": cords},
                            geometry=[shapely.box(X0 + 600 * i, Y0, X0 + 600 * i + 500, Y0 + 400)
                                      for i in range(len(cords))], crs=NY_FT)


@pytest.mark.parametrize("step", [-1, 0, 1])
def test_numbers_beyond_any_measured_quantity_refused(tmp_path, step):
    # MAX_MAGNITUDE (1e15): just under and at it load, the next float over is refused naming the layer, the field
    # and the feature (1e308 cords was 1e+308 cords = inf cu ft in HRV-001)
    top = MAX_MAGNITUDE
    value = top if step == 0 else float(np.nextafter(top, np.inf if step > 0 else 0.0))
    gpkg = write_gpkg(tmp_path / "h.gpkg", {"harvest_area": _harvest_areas([1.0, value])})
    if step <= 0:
        got = load_layers(overrides={"harvest_area": str(gpkg)})["harvest_area"]["cords"].iloc[-1]
        assert got == value
        return
    with pytest.raises(FieldError, match=rf"^layer harvest_area \(h.gpkg\): field cords = {re.escape(f'{value:g}')} is too "
                                         r"large \(over 1e\+15\), beyond any quantity a layer measures \(feature H2\). "
                                         r"Correct the value"):
        load_layers(overrides={"harvest_area": str(gpkg)})


def test_cli_cords_1e308_exits_2(tmp_path, runner):
    from geoconstraints.cli import main

    gpkg = write_gpkg(tmp_path / "plan.gpkg", {"harvest_area": _harvest_areas([1e308])})
    r = runner.invoke(main, ["harvest", str(gpkg), "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and r.stdout == "" and "overflow" not in r.output and "inf cu ft" not in r.output
    assert r.stderr.strip().splitlines() == [
        ("error: layer harvest_area (plan.gpkg:harvest_area): field cords = 1e+308 is too large (over 1e+15), beyond any "
         "quantity a layer measures (feature H1). Correct the value, or leave it empty where it is not known")]
