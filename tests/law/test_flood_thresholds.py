"""Every threshold of every FLD rule, at, just under and just over its value (vestal rulebook).

The arithmetic is worked by hand in each comment. Layers are built in EPSG:2261 (NY Central, US
survey feet) near Vestal and, where a length or an area is involved, the same layers are given again
in a metre CRS (EPSG:32618, UTM 18N): the loader reprojects them to the feet working CRS and the
status must not change. A reprojection moves areas by a few parts in 10,000 (grid scale factors),
so the metre cases sit 1 % or more from a threshold; the exact-at-threshold cases are in feet.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from affine import Affine
from common import ACRE, NY_FT, UTM18, X0, Y0, square
from shapely.geometry import LineString, Point

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import check_site, screen_parcels
from geoconstraints.geometry.bfe import bfe_at_points

RB = load_rulebook("vestal")
X_SUB = "AREA OF MINIMAL FLOOD HAZARD"
M_PER_FT = 0.3048


def zones(*specs, crs=NY_FT) -> gpd.GeoDataFrame:
    """``(geometry, FLD_ZONE, ZONE_SUBTY, STATIC_BFE)`` rows of an NFHL-like layer."""
    return gpd.GeoDataFrame({"FLD_ZONE": [s[1] for s in specs], "ZONE_SUBTY": [s[2] for s in specs],
                             "STATIC_BFE": [s[3] for s in specs], "V_DATUM": "NAVD88"},
                            geometry=[s[0] for s in specs], crs=crs)


def write(folder: Path, crs: str = NY_FT, **layers: gpd.GeoDataFrame) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "in.gpkg"
    path.unlink(missing_ok=True)
    for name, g in layers.items():
        (g if crs == NY_FT else g.to_crs(crs)).to_file(path, layer=name, driver="GPKG")
    return path


def status(res, rule: str, sid: str) -> str:
    f = res.findings
    hit = f[(f["rule_id"] == rule) & (f["subject_id"] == sid)]
    assert len(hit) == 1, (rule, sid, hit[["rule_id", "subject_id", "status"]])
    return hit.iloc[0]["status"]


def finding(res, rule: str, sid: str):
    f = res.findings
    return f[(f["rule_id"] == rule) & (f["subject_id"] == sid)].iloc[0]


def screen(folder: Path, parcels, flood, crs=NY_FT):
    p = gpd.GeoDataFrame({"parcel_id": [f"P{i + 1}" for i in range(len(parcels))]}, geometry=parcels, crs=NY_FT)
    return screen_parcels(load_layers(write(folder, crs, parcels=p, flood_zones=flood)), RB, findings="all")


def site(folder: Path, footprints, flood, *, crs=NY_FT, dem=None, **opts):
    fps = gpd.GeoDataFrame({"id": [f"F{i + 1}" for i in range(len(footprints))]}, geometry=footprints, crs=NY_FT)
    layers = load_layers(write(folder, crs, footprints=fps, flood_zones=flood), dem=dem,
                         dem_z_units=None if dem is None else ("m" if crs != NY_FT else "ft"), primary=("footprints",))
    return check_site(layers, RB, **{"use": "residential", **opts})


# ------------------------------------------------------------------------------------------
# FLD-001 / FLD-002: sliver_tolerance_ft = 1 (0.3048 m), min_overlap_sqft = 100 (9.29 m2), parcels only

@pytest.mark.parametrize("width, expect", [
    # AE strip along the parcel's east edge, 200 ft long, `width` ft wide. The strip is a sliver when a
    # negative buffer of half the tolerance (0.5 ft) empties it: width <= 1 ft.
    (0.99, "pass"),   # 0.99 x 200 = 198 sq ft (over the 100 sq ft minimum), 0.99 ft thin: sliver -> outside
    (1.0, "pass"),    # exactly 1 ft: a -0.5 ft buffer from each side leaves nothing: sliver
    (1.01, "review"),  # 1.01 ft: 0.01 ft survives the buffer: counted, 202 sq ft in the SFHA
])
def test_fld001_sliver_tolerance_on_parcel_edges(tmp_path, width, expect):
    fz = zones((square(200 - width, -10, 400, 210), "AE", None, -9999.0),
               (square(-10, -10, 200 - width, 210), "X", X_SUB, -9999.0))
    res = screen(tmp_path, [square(0, 0, 200, 200)], fz)
    assert status(res, "FLD-001", "P1") == expect


@pytest.mark.parametrize("side_ft, expect", [
    # AE square in the parcel's corner, `side_ft` x 10 ft (10 ft is well over the 1 ft tolerance):
    (9.9, "pass"),     # 9.9 x 10 = 99 sq ft < 100: under the minimum, a sliver
    (10.0, "review"),  # 10 x 10 = 100 sq ft: not under the minimum ("smaller than" 100), counted
    (10.1, "review"),  # 101 sq ft
])
def test_fld001_min_overlap_on_parcels(tmp_path, side_ft, expect):
    fz = zones((square(200 - side_ft, 190, 400, 400), "AE", None, -9999.0),
               (square(-10, -10, 400, 190), "X", X_SUB, -9999.0),
               (square(-10, 190, 200 - side_ft, 400), "X", X_SUB, -9999.0))
    res = screen(tmp_path, [square(0, 0, 200, 200)], fz)
    assert status(res, "FLD-001", "P1") == expect


@pytest.mark.parametrize("side_ft, expect", [
    # in metres: 9.5 ft = 2.90 m (90.3 % of... 95 sq ft = 8.83 m2, a sliver) and 10.5 ft = 3.20 m
    # (105 sq ft = 9.75 m2, counted); reprojection moves areas by < 0.1 %, far from the 100 sq ft
    (9.5, "pass"),
    (10.5, "review"),
])
def test_fld001_min_overlap_in_metres(tmp_path, side_ft, expect):
    fz = zones((square(200 - side_ft, 190, 400, 400), "AE", None, -9999.0),
               (square(-10, -10, 400, 190), "X", X_SUB, -9999.0),
               (square(-10, 190, 200 - side_ft, 400), "X", X_SUB, -9999.0))
    assert status(screen(tmp_path, [square(0, 0, 200, 200)], fz, crs=UTM18), "FLD-001", "P1") == expect


@pytest.mark.parametrize("width, expect", [(0.99, "pass"), (1.0, "pass"), (1.01, "review")])
def test_fld002_floodway_sliver_tolerance(tmp_path, width, expect):
    # The floodway strip along the east edge, 200 ft long: at most 1 ft wide is a sliver (as FLD-001);
    # the parcel lies in AE (no floodway) elsewhere.
    fz = zones((square(200 - width, -10, 400, 210), "AE", "FLOODWAY", -9999.0),
               (square(-10, -10, 200 - width, 210), "AE", None, -9999.0))
    assert status(screen(tmp_path, [square(0, 0, 200, 200)], fz), "FLD-002", "P1") == expect


@pytest.mark.parametrize("side_ft, expect", [(9.9, "pass"), (10.0, "review"), (10.1, "review")])
def test_fld002_floodway_min_overlap(tmp_path, side_ft, expect):
    # floodway corner side_ft x 10 ft: 99 / 100 / 101 sq ft against the 100 sq ft minimum
    fz = zones((square(200 - side_ft, 190, 400, 400), "AE", "FLOODWAY", -9999.0),
               (square(-10, -10, 400, 190), "AE", None, -9999.0),
               (square(-10, 190, 200 - side_ft, 400), "AE", None, -9999.0))
    assert status(screen(tmp_path, [square(0, 0, 200, 200)], fz), "FLD-002", "P1") == expect


@pytest.mark.parametrize("crs", [NY_FT, UTM18])
def test_footprints_are_measured_exactly(tmp_path, crs):
    # Item 7: the tolerances are for parcel edges. A 40 x 40 ft house whose east 2 ft lie in AE:
    # 2 x 40 = 80 sq ft (under the 100 sq ft minimum) is development in the SFHA: review, and its floor
    # is checked against the BFE (STATIC_BFE 850.0): floor 849.0 < 850.0 -> violation. A 9 x 9 ft shed
    # (81 sq ft) wholly in AE is review and covered, never "outside the map's coverage". A house whose
    # east 0.5 ft lie in AE (0.5 x 40 = 20 sq ft, thinner than the 1 ft tolerance) is in it too.
    # Metres: 2 ft = 0.61 m, 9 ft = 2.74 m, 0.5 ft = 0.15 m.
    fz = zones((square(38, -100, 300, 100), "AE", None, 850.0), (square(-100, -100, 38, 100), "X", X_SUB, -9999.0),
               (square(-200, -100, -100, 100), "X", X_SUB, -9999.0))
    res = site(tmp_path, [square(0, 0, 40, 40), square(100, 0, 109, 9), square(-1.5, 50, 38.5, 90)], fz, crs=crs,
               lowest_floor_ft=849.0)
    t = res.tables["footprints"].set_index("footprint_id")
    assert t.loc["F1", "sfha_acres"] * ACRE == pytest.approx(80.0, abs=0.05)
    assert t.loc["F2", "sfha_acres"] * ACRE == pytest.approx(81.0, abs=0.05)
    assert status(res, "FLD-001", "F1") == "review" and status(res, "FLD-003", "F1") == "violation"
    assert finding(res, "FLD-003", "F1")["threshold"] == pytest.approx(850.0)
    assert t.loc["F2", "flood_data"] == "full" and status(res, "FLD-001", "F2") == "review"
    assert "coverage" not in finding(res, "FLD-001", "F2")["message"]
    # F3 x -1.5..38.5: its east 0.5 ft (x 38..38.5) x 40 ft = 20 sq ft lie in AE
    assert t.loc["F3", "sfha_acres"] * ACRE == pytest.approx(20.0, abs=0.05)
    assert status(res, "FLD-001", "F3") == "review" and status(res, "FLD-003", "F3") == "violation"


# ------------------------------------------------------------------------------------------
# FLD-003: min_freeboard_ft = 0, elevation_precision_ft = 0.01, bfe_search_radius_ft = 5000

AE_850 = [(square(-500, -500, 500, 500), "AE", None, 850.0)]


@pytest.mark.parametrize("floor, expect", [
    (849.99, "violation"),  # 0.01 ft under the BFE of 850.00 + 0 ft freeboard
    (850.0, "pass"),        # at the BFE: "to or above"
    (850.01, "pass"),
    (849.994, "violation"),  # rounds (half up) to 849.99 < 850.00
    (849.996, "pass"),      # rounds to 850.00 = 850.00: within the 0.01 ft precision
])
def test_fld003_bfe_at_under_over_and_precision(tmp_path, floor, expect):
    res = site(tmp_path, [square(0, 0, 40, 40)], zones(*AE_850), lowest_floor_ft=floor)
    assert status(res, "FLD-003", "F1") == expect


def test_fld003_prints_at_a_tenth_unless_that_hides_the_difference(tmp_path):
    # 849.99 and 850.00 both print 850.0 at 0.1 ft: the message shows 849.99 and 850.00 instead
    res = site(tmp_path, [square(0, 0, 40, 40)], zones(*AE_850), lowest_floor_ft=849.99)
    msg = finding(res, "FLD-003", "F1")["message"]
    assert "849.99 ft is below the BFE of 850.00 ft" in msg
    res = site(tmp_path / "b", [square(0, 0, 40, 40)], zones(*AE_850), lowest_floor_ft=848.0)
    assert "848.0 ft is below the BFE of 850.0 ft" in finding(res, "FLD-003", "F1")["message"]


@pytest.mark.parametrize("dist, found", [(4_999.0, True), (5_000.0, True), (5_001.0, False)])
def test_fld003_bfe_search_radius(dist, found):
    # Two BFE lines (800 and 802 ft) on either side of a site, each `dist` ft from it (vertical lines
    # at x = -dist and x = +dist): within 5,000 ft they bracket it and give (800 + 802) / 2 = 801.0 ft
    # (equal distances); beyond 5,000 ft none is used. Metres: 5,000 ft = 1,524 m.
    bl = gpd.GeoDataFrame({"ELEV": [800.0, 802.0], "V_DATUM": ["NAVD88"] * 2},
                          geometry=[LineString([(X0 - dist, Y0 - 10), (X0 - dist, Y0 + 10)]),
                                    LineString([(X0 + dist, Y0 - 10), (X0 + dist, Y0 + 10)])], crs=NY_FT)
    r = bfe_at_points([Point(X0, Y0)], bfe_lines=bl, search_radius_ft=RB["FLD-003"].t("bfe_search_radius_ft")).iloc[0]
    assert (r["bfe_method"] == "nearest_lines") is found
    if found:
        assert r["bfe_ft"] == pytest.approx(801.0, abs=1e-9)


# ------------------------------------------------------------------------------------------
# FLD-004: hag_freeboard_ft = 2, elevation_precision_ft = 0.01 (float32 DEM)

def flat_dem(folder: Path, z_ft: float, crs: str) -> Path:
    """A flat DEM at z_ft feet (float32), 10-ft cells (3.048 m in EPSG:32618, z in metres there)."""
    path = folder / "dem.tif"
    if crs == NY_FT:
        x0, y0, cell, z = X0 - 200, Y0 + 200, 10.0, z_ft
    else:
        pt = gpd.GeoSeries([Point(X0 - 200, Y0 + 200)], crs=NY_FT).to_crs(crs).iloc[0]
        x0, y0, cell, z = pt.x, pt.y, 3.048, z_ft * M_PER_FT
    with rasterio.open(path, "w", driver="GTiff", width=60, height=60, count=1, dtype="float32", crs=crs,
                       transform=Affine(cell, 0, x0, 0, -cell, y0)) as dst:
        dst.write(np.full((60, 60), z, dtype="float32"), 1)
    return path


A_ZONE = [(square(-500, -500, 500, 500), "A", None, -9999.0)]


@pytest.mark.parametrize("crs", [NY_FT, UTM18])
@pytest.mark.parametrize("floor, expect", [
    # HAG 845.4 ft stored as float32 = 845.4000244 (in metres: 257.6779 m, float32, x 3.28084 back to ft);
    # required = 845.4 + 2 = 847.4 ft (compared at 0.01 ft):
    (847.39, "violation"),  # 0.01 under
    (847.4, "pass"),        # exactly HAG + 2 ft: passes although 847.4 < 847.4000244 in float
    (847.41, "pass"),
    (847.0, "violation"),   # 0.4 ft under: hag_freeboard_ft, just under 2 ft above grade (1.6 ft)
    (847.8, "pass"),        # 2.4 ft above grade
])
def test_fld004_hag_plus_two_at_surveyed_precision(tmp_path, crs, floor, expect):
    res = site(tmp_path, [square(0, 0, 40, 40)], zones(*A_ZONE), crs=crs, dem=flat_dem(tmp_path, 845.4, crs),
               lowest_floor_ft=floor)
    t = res.tables["footprints"].iloc[0]
    assert t["hag_ft"] == pytest.approx(845.4, abs=1e-3) and t["hag_fraction"] == pytest.approx(1.0)
    assert status(res, "FLD-004", "F1") == expect


def test_fld004_hag_freeboard_exact_in_feet(tmp_path):
    # A DEM at 100.0 ft (exact in float32): required 102.0 ft. 101.99 violation, 102.0 pass, 102.01 pass.
    dem = flat_dem(tmp_path, 100.0, NY_FT)
    got = [status(site(tmp_path / str(f), [square(0, 0, 40, 40)], zones(*A_ZONE), dem=dem, lowest_floor_ft=f),
                  "FLD-004", "F1") for f in (101.99, 102.0, 102.01)]
    assert got == ["violation", "pass", "pass"]


def cell_dem(folder: Path, z_ft: float, cell: float, crs: str) -> Path:
    """A flat DEM at z_ft feet (float32), cells of ``cell`` CRS units (US survey feet, or metres in UTM)."""
    path = folder / "dem.tif"
    n = int(np.ceil((400 if crs == NY_FT else 400 * M_PER_FT) / cell))
    if crs == NY_FT:
        x0, y0, z = X0 - 200, Y0 + 200, z_ft
    else:
        pt = gpd.GeoSeries([Point(X0 - 200, Y0 + 200)], crs=NY_FT).to_crs(crs).iloc[0]
        x0, y0, z = pt.x, pt.y, z_ft * M_PER_FT
    folder.mkdir(parents=True, exist_ok=True)
    with rasterio.open(path, "w", driver="GTiff", width=n, height=n, count=1, dtype="float32", crs=crs,
                       transform=Affine(cell, 0, x0, 0, -cell, y0)) as dst:
        dst.write(np.full((n, n), z, dtype="float32"), 1)
    return path


@pytest.mark.parametrize("crs, cell, expect", [
    # max_dem_cell_ft = 10 (the larger side of a DEM cell, in feet, read from the DEM's CRS): a floor of
    # 102.5 over a flat DEM at 100 ft (required 102) passes on cells of at most 10 ft, not evaluated over
    (NY_FT, 9.9, "pass"), (NY_FT, 10.0, "pass"),  # 10 US survey ft = 10.00002 ft: at the limit
    (NY_FT, 10.1, "not_evaluated"),
    (UTM18, 3.0, "pass"), (UTM18, 3.048, "pass"),  # 9.84 ft; 10 ft exactly
    (UTM18, 3.1, "not_evaluated"),                  # 10.17 ft
])
def test_fld004_max_dem_cell(tmp_path, crs, cell, expect):
    assert RB["FLD-004"].t("max_dem_cell_ft") == 10
    dem = cell_dem(tmp_path / "d", 100.0, cell, crs)
    res = site(tmp_path, [square(0, 0, 40, 40)], zones(*A_ZONE), crs=crs, dem=dem, lowest_floor_ft=102.5)
    assert res.tables["footprints"].iloc[0]["hag_ft"] == pytest.approx(100.0, abs=1e-3)
    assert status(res, "FLD-004", "F1") == expect
    # a floor below the requirement is a violation on any grid
    low = site(tmp_path / "v", [square(0, 0, 40, 40)], zones(*A_ZONE), crs=crs, dem=dem, lowest_floor_ft=101.99)
    assert status(low, "FLD-004", "F1") == "violation"


def test_fld003_bfe_floor_needs_no_fine_dem(tmp_path):
    # FLD-003's requirement is the BFE (a STATIC_BFE here), not the DEM's: a floor at it passes on a DEM of
    # 100-ft cells, far over FLD-004's max_dem_cell_ft
    dem = cell_dem(tmp_path / "d", 790.0, 100.0, NY_FT)
    res = site(tmp_path, [square(0, 0, 40, 40)], zones((square(-500, -500, 500, 500), "AE", None, 802.0)), dem=dem,
               lowest_floor_ft=802.0 + RB["FLD-003"].t("min_freeboard_ft"))
    assert status(res, "FLD-003", "F1") == "pass"


# ------------------------------------------------------------------------------------------
# FLD-005: max_acres = 5 (max_lots = 50 is not measurable on a parcel: not over 5 acres in the SFHA is info, the lot
# test being the proposal's, never pass)

@pytest.mark.parametrize("acres, expect", [(4.99, "info"), (5.0, "info"), (5.01, "review")])
def test_fld005_over_five_acres(tmp_path, acres, expect):
    # A parcel of `acres` (square of side sqrt(acres x 43,560) ft) touching AE: "greater than 5 acres"
    # -> 5.0 exactly is not over. 5 acres = 217,800 sq ft = 20,234.3 m2.
    s = (acres * ACRE) ** 0.5
    fz = zones((square(-10, -10, s + 10, 50), "AE", None, -9999.0), (square(-10, 50, s + 10, s + 10), "X", X_SUB, -9999.0))
    res = screen(tmp_path, [square(0, 0, s, s)], fz)
    assert status(res, "FLD-005", "P1") == expect
    f = finding(res, "FLD-005", "P1")
    assert f["measured"] == pytest.approx(acres, abs=1e-9) and "lot count not known" in f["message"]
    assert "50 lots" in f["message"]  # max_lots: stated, not measured (a parcel has no lot count)


@pytest.mark.parametrize("acres, expect", [(4.95, "info"), (5.05, "review")])
def test_fld005_in_metres(tmp_path, acres, expect):
    s = (acres * ACRE) ** 0.5
    fz = zones((square(-10, -10, s + 10, 50), "AE", None, -9999.0), (square(-10, 50, s + 10, s + 10), "X", X_SUB, -9999.0))
    assert status(screen(tmp_path, [square(0, 0, s, s)], fz, crs=UTM18), "FLD-005", "P1") == expect


# ------------------------------------------------------------------------------------------
# FLD-006: max_cumulative_rise_ft = 1 (stated for the hydraulic analysis, never measured here)

def test_fld006_rise_is_stated_never_passed(tmp_path):
    # AE with no floodway anywhere: (f)(2) applies; the 1 ft rise needs a hydraulic analysis -> review,
    # and the finding carries the threshold (1 ft) without a measured rise.
    fz = zones((square(-10, -10, 210, 100), "AE", None, -9999.0), (square(-10, 100, 210, 300), "X", X_SUB, -9999.0))
    f = finding(screen(tmp_path, [square(0, 0, 200, 200)], fz), "FLD-006", "P1")
    assert f["status"] == "review" and f["threshold"] == 1.0 and np.isnan(f["measured"])
    assert "at most 1 ft" in f["message"]


# ------------------------------------------------------------------------------------------
# FLD-007: min_openings_count = 2, min_opening_sqin_per_sqft = 1, max_opening_bottom_above_grade_ft = 1

OK7 = {"enclosed_sqft": 800.0, "openings": 2, "openings_sqin": 800.0, "opening_bottom_ft": 1.0}


@pytest.mark.parametrize("change, expect", [
    ({"openings": 1}, "review"), ({"openings": 2}, "pass"), ({"openings": 3}, "pass"),
    # 800 sq ft enclosed x 1 sq in per sq ft = 800 sq in
    ({"openings_sqin": 799.0}, "review"), ({"openings_sqin": 800.0}, "pass"), ({"openings_sqin": 801.0}, "pass"),
    # bottoms at most 1 ft (0.3048 m) above the lowest adjacent finished grade
    ({"opening_bottom_ft": 0.99}, "pass"), ({"opening_bottom_ft": 1.0}, "pass"), ({"opening_bottom_ft": 1.01}, "review"),
])
def test_fld007_openings(tmp_path, change, expect):
    res = site(tmp_path, [square(0, 0, 40, 40)], zones(*AE_850), lowest_floor_ft=851.0, **{**OK7, **change})
    assert status(res, "FLD-007", "F1") == expect


# ------------------------------------------------------------------------------------------
# FLD-008: substantial_improvement_pct = 50

@pytest.mark.parametrize("cost, expect", [(49_990.0, "pass"), (50_000.0, "review"), (50_010.0, "review")])
def test_fld008_fifty_percent(tmp_path, cost, expect):
    # cost / market value 100,000: 49.99 % (not substantial), 50.00 % ("equals or exceeds"), 50.01 %
    res = site(tmp_path, [square(0, 0, 40, 40)], zones(*AE_850), improvement_cost=cost, market_value=100_000.0)
    assert status(res, "FLD-008", "F1") == expect
    assert finding(res, "FLD-008", "F1")["measured"] == pytest.approx(cost / 1_000.0)


# ------------------------------------------------------------------------------------------
# FLD-009: variance_max_lot_acres = 0.5 (info either way; the text says which side)

@pytest.mark.parametrize("acres, small", [(0.49, True), (0.5, True), (0.51, False)])
def test_fld009_half_acre(tmp_path, acres, small):
    # "lots of one-half acre or less": 0.5 acre = 21,780 sq ft (2,023.4 m2) is "or less"
    s = (acres * ACRE) ** 0.5
    fz = zones((square(-10, -10, s + 10, s + 10), "AE", None, -9999.0))
    f = finding(screen(tmp_path, [square(0, 0, s, s)], fz), "FLD-009", "P1")
    assert f["status"] == "info"
    assert ("0.5 acre or less" in f["message"]) is small
