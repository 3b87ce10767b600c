"""Threshold edges the law tests (tests/law/test_*_thresholds.py) leave out, and inputs that are missing.

An audit of every numeric threshold of the vestal and lockport rulebooks found each one tested at,
just under and just over its value in tests/law/ and the rule's own test module, except the edges
below: a threshold read under a rulebook switch (HRV-010 run_length: slope, FLD-003 min_freeboard_ft
changed by a user rulebook), a strip or distance measured from a line or a plan element other than
the one the law tests use (HRV-020 from a mapped right-of-way polygon and from a stream's bank,
HRV-021 inside the RA-1 parcel, HRV-022 from a dwelling's outline, HRV-025 from a right-of-way whose
width is given, HRV-003 for skid trails and landings), HRV-002 c's own tolerances, the SWP-007 gaps
at the two ends of the period and the Lockport storm rules and Condition C bound, and the SFHA split
between two zones at FLD-001's minimum overlap. Each rule's "pass is a promise" is tested beside
them: a case that passes at the threshold is given again with one value the rule needs missing
(None, blank, NaN) and must not pass.

Geometry is built by hand in local feet (the arithmetic beside each case); distances are exact to
1e-6 ft, areas to 1e-6 acres. Harvest plans go through tests/law/harvest_cases.py (written to a
GeoPackage, read back with load_layers, checked with check_harvest), in feet (EPSG:2261) and, for
HRV-010, in metres (EPSG:32618); stormwater and flood through check_stormwater, check_site and
screen_parcels, SEQR through classify_action, as the rules' own tests do.
"""

from __future__ import annotations

import math
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from common import ACRE, NY_FT, X0, Y0, square
from common import one_finding as one
from law.harvest_cases import rows_of, run_plan, status_of
from shapely.geometry import LineString, Point, box

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import check_site, check_stormwater, classify_action, screen_parcels

VESTAL = load_rulebook("vestal")
BOOKS = ("vestal", "lockport")


# ------------------------------------------------------------------------------------------
# HRV-010 max_run_ft = 200 under run_length: slope (§ 44-VI-6(F)(1): "No forest haul road or skid
# trail shall be constructed to exceed a slope of 25 percent for a distance [of] more than two
# hundred (200) feet"; the rulebook switch reads the 200 ft as length along the slope)

SLOPE_RB = "extends: vestal\nrules:\n  - id: HRV-010\n    switches:\n      run_length: slope\n"


@pytest.mark.parametrize("units, slope_len, expected", [
    ("ft", 199.9, "pass"), ("ft", 200.0, "pass"), ("ft", 200.1, "violation"),
    ("m", 199.9, "pass"), ("m", 200.1, "violation"),  # the plan and a z-in-metres DEM in UTM 18N
])
def test_hrv010_run_length_along_the_slope(tmp_path, units, slope_len, expected) -> None:
    # a straight road up a plane rising 30 % along +u (steeper than 25 % all along): horizontal length
    # h = slope_len / sqrt(1 + 0.3^2) = slope_len / 1.0440307 (191.47 / 191.57 / 191.66 ft): "more than
    # 200 ft" along the slope only at 200.1 ft. Read horizontally the same roads are all under 200 ft.
    h = slope_len / math.sqrt(1 + 0.3**2)
    line = LineString([(0, 0), (h, 0)])
    dem = (lambda U, V: 100 + 0.3 * U, 5.0, (-20, -20, h + 20, 20))
    res = run_plan(tmp_path, units, {"haul_roads": [("R", line, {})]}, dem=dem, exact=True, rulebook=SLOPE_RB)
    assert status_of(res, "HRV-010", "R") == expected
    if expected == "violation":
        assert rows_of(res, "HRV-010", "R")["measured"].iloc[0] == pytest.approx(slope_len, abs=1e-6)
    if expected == "violation":  # horizontally 191.66 ft: not more than 200 ft
        flat = run_plan(tmp_path / "horizontal", units, {"haul_roads": [("R", line, {})]}, dem=dem, exact=True)
        assert status_of(flat, "HRV-010", "R") == "pass"


# ------------------------------------------------------------------------------------------
# HRV-020 buffer_width_ft = 50 measured from a mapped right-of-way line and from a stream's bank
# (§ 44-VI-6(F)(6): "buffer strips at least fifty (50) feet wide shall be retained along streams
# and public roads"), through HRV-024 (§ 44-VI-6(F)(6): no landing in a buffer strip)

STREAM_LINE = [("S", LineString([(-500, 0), (1500, 0)]), {"kind": "perennial"})]
C1_PARCEL = [("P", box(-600, -600, 1600, 1600), {"zoning": "C-1"})]
FAR_DWELLING = [("D", Point(1400, 800), {})]


# the landing is a point: just outside a strip (or at 150 ft from a right-of-way) it is review, its pad
# may reach nearer (point_landing_radius_ft, tests/test_harvest_audit22c.py), no longer a pass (round 22c)
@pytest.mark.parametrize("d, expected", [(49.9, "violation"), (50.0, "violation"), (50.1, "review")])
def test_hrv020_road_strip_from_the_row_polygon(tmp_path, d, expected) -> None:
    units = "ft"
    # the road's centre line v = 900 inside its mapped right-of-way v 870..930 (60 ft, not the default
    # 50); a landing d ft south of the right-of-way line v = 870: in the 50-ft strip up to 50 ft (a
    # landing on the strip's edge touches it). Measured from the centre line it would be 30 ft more.
    res = run_plan(tmp_path, units, {"landings": [("L", Point(500, 870 - d), {})], "streams": STREAM_LINE,
                                     "roads": [("R", LineString([(-500, 900), (1500, 900)]), {})],
                                     "row": [("W", box(-500, 870, 1500, 930), {})],
                                     "parcels": C1_PARCEL, "dwellings": FAR_DWELLING})
    assert status_of(res, "HRV-024", "L") == expected


@pytest.mark.parametrize("d, expected", [(49.9, "violation"), (50.0, "violation"), (50.1, "review")])
def test_hrv020_stream_strip_from_the_bank_of_a_polygon(tmp_path, d, expected) -> None:
    units = "ft"
    # the stream mapped as a polygon v -40..0 (its north bank v = 0); a landing d ft north of the bank
    res = run_plan(tmp_path, units, {"landings": [("L", Point(500, d), {})],
                                     "streams": [("S", box(-500, -40, 1500, 0), {"kind": "perennial"})],
                                     "roads": [("R", LineString([(-500, 900), (1500, 900)]), {})],
                                     "parcels": C1_PARCEL, "dwellings": FAR_DWELLING})
    assert status_of(res, "HRV-024", "L") == expected


# ------------------------------------------------------------------------------------------
# HRV-025 min_distance_ft = 150 from a right-of-way whose width is given on the road
# (§ 44-VI-6(F)(7)(3): "Landings shall be located at least one hundred fifty (150) feet from any
# public right-of-way")


@pytest.mark.parametrize("d, expected", [(149.9, "violation"), (150.0, "review"), (150.1, "review")])
def test_hrv025_from_a_given_row_width(tmp_path, d, expected) -> None:
    units = "ft"
    # centre line v = 1000 with row_width_ft = 66: its right-of-way line is 33 ft south, v = 967; the
    # landing d ft south of that line (d + 33 ft from the centre line)
    res = run_plan(tmp_path, units, {"landings": [("L", Point(500, 967 - d), {})],
                                     "roads": [("R", LineString([(-500, 1000), (1500, 1000)]),
                                                {"row_width_ft": 66.0})]})
    assert status_of(res, "HRV-025", "L") == expected
    assert rows_of(res, "HRV-025", "L")["measured"].iloc[0] == pytest.approx(d, abs=1e-6)


# ------------------------------------------------------------------------------------------
# HRV-001 and HRV-003: a case passing at the threshold, with the one value it needs missing


@pytest.mark.parametrize("missing", [None, float("nan"), "no B"])
def test_hrv001_at_the_limit_with_a_volume_missing_is_not_a_pass(tmp_path, missing) -> None:
    # § 44-VI-6(B), (C)(a): the volume "on one parcel" summed. A holds 20 cords (at the limit, not
    # "greater than": alone a pass); B on the same parcel P states no volume at all: the parcel's
    # volume is 20 cords + unknown, which may exceed 20 -> not a pass for either area
    ha = [("A", box(0, 0, 100, 100), {"cords": 20.0, "parcel_id": "P"}),
          ("B", box(300, 0, 400, 100), {"cords": missing, "parcel_id": "P"})]
    if missing == "no B":  # the same 20 cords with nothing unknown: a pass
        assert status_of(run_plan(tmp_path, "ft", {"harvest_area": ha[:1]}), "HRV-001", "A") == "pass"
        return
    res = run_plan(tmp_path, "ft", {"harvest_area": ha})
    assert status_of(res, "HRV-001", "A") != "pass"
    assert status_of(res, "HRV-001", "B") != "pass"


@pytest.mark.parametrize("district, expected", [(None, "not_evaluated"), ("", "not_evaluated"),
                                                 ("   ", "not_evaluated"), ("RA-1", "review")])
def test_hrv003_district_blank_within_300_ft_is_not_a_pass(tmp_path, district, expected) -> None:
    # § 44-VI-6(E)(4)c, (G)(c)(3): review when the plan is "within 300 feet" of RA-1 / RA-2 / RC
    # property. The zoning polygon exactly 300 ft north of the harvest area has no district (NULL,
    # empty, blanks): it may be RA-1 -> never a pass. (C-1 elsewhere; stated RA-1 there it is review.)
    sq = box(0, 0, 100, 100)
    zoning = [("Z1", box(-400, -400, 500, 400), {"district": "C-1"}),
              ("Z2", box(-400, 400, 500, 700), {"district": district})]
    res = run_plan(tmp_path, "ft", {"harvest_area": [("A", sq, {})], "zoning": zoning})
    assert status_of(res, "HRV-003", "A") == expected


# ------------------------------------------------------------------------------------------
# stormwater: helpers as in tests/law/test_stormwater_thresholds.py (squares of known acreage)


def sq_acres(acres: float, dx: float = 0.0):
    """A square of exactly ``acres`` (side sqrt(acres x 43,560) ft), ``dx`` ft east of (X0, Y0)."""
    s = math.sqrt(acres * ACRE)
    return box(X0 + dx, Y0, X0 + dx + s, Y0 + s)


def poly(fid: str, geom, start=None, stab=None, use="commercial") -> dict:
    return {"id": fid, "start": start, "stabilized": stab, "use": use, "geometry": geom}


def storm(folder: Path, book: str = "vestal", *, disturbance: list[dict], **kw):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "plan.gpkg"
    path.unlink(missing_ok=True)
    rows = pd.DataFrame(disturbance)
    gpd.GeoDataFrame(rows.drop(columns="geometry"), geometry=list(rows["geometry"]), crs=NY_FT).to_file(
        path, layer="disturbance", driver="GPKG")
    layers = load_layers(path, primary=("disturbance",))
    return check_stormwater(layers, load_rulebook(book), **kw)


def log_of(*dates: str) -> pd.DataFrame:
    return pd.DataFrame({"date": list(dates), "inspector": "QP", "qualified": "yes"})


def daily_rain(on: str, inches: float) -> pd.DataFrame:
    days = pd.date_range("2024-05-01", periods=31)
    return pd.DataFrame({"date": days.strftime("%Y-%m-%d"), "precip_in": np.where(days == pd.Timestamp(on), inches, 0.0)})


def swp007_violations(res) -> list[str]:
    f = res.findings[res.findings["rule_id"] == "SWP-007"]
    return sorted(f.loc[f["status"] == "violation", "subject_id"])


# ------------------------------------------------------------------------------------------
# SWP-007 inspection_interval_days = 7 at the two ends of the period (Lockport § 159-7A(2) and
# Vestal § 6-234(a)(2): "inspect ... every seven (7) days"; read as a gap rule, notes of SWP-007:
# "no more than inspection_interval_days between the start and the first inspection ... and between
# the last one and stabilisation")


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("first", [6, 7, 8])
def test_swp007_start_to_first_inspection(tmp_path, book, first) -> None:
    # a 6-acre project (Condition B in both towns) disturbed 05-01..05-12; inspections on 05-01 +
    # first (05-07 / 05-08 / 05-09) and 05-12 (the gaps after it 5 / 4 / 3 days): only the first varies
    day = (pd.Timestamp("2024-05-01") + pd.Timedelta(days=first)).strftime("%Y-%m-%d")
    res = storm(tmp_path, book, disturbance=[poly("A", sq_acres(6), "2024-05-01", "2024-05-12")],
                inspection_log=log_of(day, "2024-05-12"))
    want = [f"gap from 2024-05-01 to {day}"] if first > 7 else []
    assert swp007_violations(res) == want
    if want:
        assert one(res, "SWP-007", want[0])["measured"] == first


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("last", [6, 7, 8])
def test_swp007_last_inspection_to_stabilisation(tmp_path, book, last) -> None:
    # inspections on 05-01 and 05-05; stabilised `last` days after the second (05-11 / 05-12 / 05-13)
    stab = (pd.Timestamp("2024-05-05") + pd.Timedelta(days=last)).strftime("%Y-%m-%d")
    res = storm(tmp_path, book, disturbance=[poly("A", sq_acres(6), "2024-05-01", stab)],
                inspection_log=log_of("2024-05-01", "2024-05-05"))
    want = [f"gap from 2024-05-05 to {stab}"] if last > 7 else []
    assert swp007_violations(res) == want
    if want:
        assert one(res, "SWP-007", want[0])["measured"] == last


# SWP-007 storm_threshold_in = 0.5, inspection_within_hours = 24 in Lockport (§ 159-7A(2): "within
# 24 hours of any storm event producing 0.5 inch of precipitation or more"; the law tests check Vestal)


@pytest.mark.parametrize("rain, storms", [(0.49, 0), (0.5, 1), (0.51, 1)])
def test_swp007_lockport_storm_threshold(tmp_path, rain, storms) -> None:
    # 2 acres, commercial use: Condition C, so Lockport's inspections apply; one day of `rain` on 05-10
    res = storm(tmp_path, "lockport", disturbance=[poly("A", sq_acres(2), "2024-05-01", "2024-05-29")],
                rainfall=daily_rain("2024-05-10", rain))
    assert int((res.tables["inspections"]["reason"] == "storm").sum()) == storms


@pytest.mark.parametrize("days_after, expect", [(0, "pass"), (1, "pass"), (2, "violation")])
def test_swp007_lockport_within_24_hours(tmp_path, days_after, expect) -> None:
    # 0.8 in on 05-10; daily data: "within 24 hours" is the storm day or the next day
    when = (pd.Timestamp("2024-05-10") + pd.Timedelta(days=days_after)).strftime("%Y-%m-%d")
    log = log_of("2024-05-01", "2024-05-08", when, "2024-05-15", "2024-05-22", "2024-05-29")
    res = storm(tmp_path, "lockport", disturbance=[poly("A", sq_acres(2), "2024-05-01", "2024-05-29")],
                rainfall=daily_rain("2024-05-10", 0.8), inspection_log=log)
    assert one(res, "SWP-007", "storm of 2024-05-10")["status"] == expect


# ------------------------------------------------------------------------------------------
# SWP-004 / SWP-005: at the threshold with the value the rule needs missing


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("use", [None, "", "  "])
def test_swp004_at_one_acre_with_the_use_missing_is_not_a_pass(tmp_path, book, use) -> None:
    # § 159-5B(2)(c) / Vestal (b)(2)c: Condition C, 1 to 5 acres "exclusive of single-family residences
    # and construction at agricultural properties". 1.0 acre (the bound, included) with no use stated:
    # it may or may not be excluded -> never a pass. Stated commercial it is review (the law tests).
    res = storm(tmp_path, book, disturbance=[poly("A", sq_acres(1.0), use=use)], larger_common_plan=False)
    assert one(res, "SWP-004")["status"] != "pass"


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("start, stab", [(None, "2024-05-20"), ("2024-05-05", None), (None, None)])
def test_swp005_a_phase_with_a_date_missing_is_not_a_pass(tmp_path, book, start, stab) -> None:
    # § 159-5B(1)(d) / Vestal (b)(1)d: "not more than five (5) acres ... disturbed at any one time". A: 3
    # acres 05-01..05-10; B: 2.001 acres far away with a date missing. Disturbed together at any time
    # the peak is 5.001 acres > 5; which days B is disturbed is not known -> never a pass
    dist = [poly("A", sq_acres(3), "2024-05-01", "2024-05-10"), poly("B", sq_acres(2.001, dx=2000), start, stab)]
    assert one(storm(tmp_path, book, disturbance=dist), "SWP-005", "project")["status"] != "pass"


# ------------------------------------------------------------------------------------------
# SQR-001: a Type II bound with its measure not given (Vestal Code § 6-28(b): each item's bound is
# part of the item; without the number the action is not shown to be Type II)


@pytest.mark.parametrize("kw", [
    {"action_type": "small_subdivision", "chapter_24": True},  # (b)(1) "less than forty (40) houses"
    {"action_type": "minor_alteration"},  # "not exceeding fifty (50) percent of original size"
    {"action_type": "restoration_reconstruction"},  # "expanded by less than fifty (50) percent"
    {"action_type": "highway_maintenance_site_expansion"},  # "not ... by more than fifty (50) percent"
    {"action_type": "highway_reconstruction", "lanes": 1, "no_effect_on": ("all",)},  # "less than three (3) ... acres"
    {"action_type": "surplus_property_sale"},  # "other than parcels of land exceeding twenty-five (25) acres"
], ids=lambda kw: kw["action_type"])
def test_sqr001_bound_not_given_is_not_a_pass(kw) -> None:
    f = classify_action(VESTAL, **kw).findings.iloc[0]
    assert f["status"] == "not_evaluated", f["message"]


# ------------------------------------------------------------------------------------------
# FLD-007 / FLD-008 / FLD-003: at the threshold with one stated value missing


def flood_site(folder: Path, static_bfe: float = 850.0, rulebook=None, **opts):
    fz = gpd.GeoDataFrame({"FLD_ZONE": ["AE"], "ZONE_SUBTY": [None], "STATIC_BFE": [static_bfe], "V_DATUM": "NAVD88"},
                          geometry=[square(-500, -500, 500, 500)], crs=NY_FT)
    fps = gpd.GeoDataFrame({"id": ["F1"]}, geometry=[square(0, 0, 40, 40)], crs=NY_FT)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "in.gpkg"
    path.unlink(missing_ok=True)
    fz.to_file(path, layer="flood_zones", driver="GPKG")
    fps.to_file(path, layer="footprints", driver="GPKG")
    return check_site(load_layers(path, primary=("footprints",)), rulebook or VESTAL,
                      **{"use": "residential", **opts})


AT7 = {"enclosed_sqft": 800.0, "openings": 2, "openings_sqin": 800.0, "opening_bottom_ft": 1.0}


@pytest.mark.parametrize("drop", [None, "openings", "openings_sqin", "opening_bottom_ft"])
def test_fld007_at_every_bound_with_one_value_missing(tmp_path, drop) -> None:
    # § 6-137(b)(2): "a minimum of two openings having a total net area of not less than one square inch
    # for every square foot of enclosed area ... the bottom of all such openings no higher than one foot
    # above the lowest adjacent finished grade". Every value at its bound passes (the law tests); with one
    # of them not given, that requirement is not shown met -> never a pass
    kw = {k: v for k, v in AT7.items() if k != drop}
    got = one(flood_site(tmp_path, lowest_floor_ft=851.0, **kw), "FLD-007", "F1")["status"]
    assert got == "pass" if drop is None else got != "pass"


def test_fld008_cost_missing_is_not_a_pass(tmp_path) -> None:
    # § 6-101 "substantial improvement": cost "equals or exceeds fifty (50) percent of the market value";
    # the market value given, the cost not: not known to be under 50 % -> never a pass
    assert one(flood_site(tmp_path, market_value=100_000.0), "FLD-008", "F1")["status"] != "pass"


def test_fld003_floor_at_a_bfe_that_is_not_there_is_not_a_pass(tmp_path) -> None:
    # § 6-137(b)(1): "lowest floor ... elevated to or above the base flood elevation". AE with
    # STATIC_BFE -9999 (none) and no BFE lines: the BFE is not known, so no floor passes
    f = one(flood_site(tmp_path, static_bfe=-9999.0, lowest_floor_ft=850.0), "FLD-003", "F1")
    assert f["status"] == "not_evaluated", f["message"]


# ------------------------------------------------------------------------------------------
# HRV-021 / HRV-022 buffer_width_ft = 100 measured on the other side of the line, and from a dwelling's
# outline (§ 44-VI-6(F)(6): "Buffer strips shall be kept within one hundred (100) feet of a property
# line within an RA-1, RA-2 or RC district and within one hundred (100) feet of a residential dwelling
# in an RR district"); the law tests put the landing outside the RA-1 parcel and measure from a point


def district_scene(landing, dwelling, dwelling_zone: str = "C-1") -> dict:
    # P1 (dwelling_zone) u -600..500, P2 (RA-1) u 500..1600, both v 100..1400; stream along v = 0,
    # road along v = 1500 (their strips end at v 50 and 1450 - 25: far from the cases)
    return {"landings": [("L", landing, {})], "streams": STREAM_LINE,
            "roads": [("R", LineString([(-500, 1500), (1500, 1500)]), {})],
            "parcels": [("P1", box(-600, 100, 500, 1400), {"zoning": dwelling_zone}),
                        ("P2", box(500, 100, 1600, 1400), {"zoning": "RA-1"})],
            "dwellings": [("D", dwelling, {})]}


@pytest.mark.parametrize("d, expected", [(99.9, "violation"), (100.0, "violation"), (100.1, "review")])
def test_hrv021_strip_inside_the_ra1_parcel(tmp_path, d, expected) -> None:
    # the landing d ft east of the RA-1 parcel's west line, inside it (its other lines 500+ ft away);
    # reading (c), the default, keeps the strip on both sides of the line
    res = run_plan(tmp_path, "ft", district_scene(Point(500 + d, 900), Point(200, 500)))
    assert status_of(res, "HRV-024", "L") == expected


@pytest.mark.parametrize("d, expected", [(99.9, "violation"), (100.0, "violation"), (100.1, "review")])
def test_hrv022_strip_from_a_dwelling_outline(tmp_path, d, expected) -> None:
    # a 40 x 30 ft dwelling (u 180..220, v 480..510) in an RR parcel; the landing d ft east of its east wall
    house = box(180, 480, 220, 510)
    res = run_plan(tmp_path, "ft", district_scene(Point(220 + d, 495), house, dwelling_zone="RR"))
    assert status_of(res, "HRV-024", "L") == expected


# ------------------------------------------------------------------------------------------
# HRV-003 distance_ft = 300 for a skid trail and a landing (the law tests measure the harvest area):
# the law reviews "the proposed timber-harvesting plan" (§ 44-VI-6(G)(c)(3)), skid trails included


@pytest.mark.parametrize("d, expected, landing", [
    (299.9, "review", "review"), (300.0, "review", "review"), (300.1, "pass", "not_evaluated"),
    # the landing is a point: its pad (point_landing_radius_ft = 120) may reach within 300 ft up to 420 ft
    (419.9, "pass", "not_evaluated"), (420.0, "pass", "not_evaluated"), (420.1, "pass", "pass")])
def test_hrv003_skid_trail_and_landing_distance(tmp_path, d, expected, landing) -> None:
    # C-1 below v = 100 + d, RA-1 above it (u -600..700); a skid trail along v = 100 (u 0..100) and a
    # landing at (300, 100): both exactly d ft south of the RA-1 line (the zoning covers 420 ft around both)
    zoning = [("Z1", box(-900, -900, 1500, 100 + d), {"district": "C-1"}),
              ("Z2", box(-900, 100 + d, 1500, 900), {"district": "RA-1"})]
    res = run_plan(tmp_path, "ft", {"skid_trails": [("T", LineString([(0, 100), (100, 100)]), {})],
                                    "landings": [("L", Point(300, 100), {})], "zoning": zoning})
    assert status_of(res, "HRV-003", "T", "skid_trails") == expected
    assert status_of(res, "HRV-003", "L", "landings") == landing


@pytest.mark.parametrize("width", [None, float("nan")])
def test_hrv025_row_width_missing_on_one_road_is_not_a_pass(tmp_path, width) -> None:
    # § 44-VI-6(F)(7)(3): "at least one hundred fifty (150) feet from any public right-of-way". Road R1
    # states its width (50 ft, far away); R2's row_width_ft is NULL / NaN. The landing is 180 ft from
    # R2's centre line: 155 ft from a 50-ft right-of-way (a pass), but 130 ft from one 100 ft wide
    # (max_assumed_row_width_ft): its width is not known -> review, never a pass
    roads = [("R1", LineString([(-500, 3000), (1500, 3000)]), {"row_width_ft": 50.0}),
             ("R2", LineString([(-500, 1000), (1500, 1000)]), {"row_width_ft": width})]
    res = run_plan(tmp_path, "ft", {"landings": [("L", Point(500, 820), {})], "roads": roads})
    assert status_of(res, "HRV-025", "L") == "review"


# ------------------------------------------------------------------------------------------
# FLD-003: min_freeboard_ft read from the rulebook, and the non-residential reading at the BFE


@pytest.mark.parametrize("floor, expect", [(850.99, "violation"), (851.0, "pass"), (851.01, "pass")])
def test_fld003_freeboard_from_the_rulebook(tmp_path, floor, expect) -> None:
    # § 6-137(b)(1) "to or above the base flood elevation" with the rulebook's min_freeboard_ft (0 in
    # vestal) set to 1 ft by a user rulebook: the bar is BFE 850.00 + 1 = 851.00 ft, compared at 0.01 ft
    rb = tmp_path / "freeboard.yaml"
    rb.write_text("extends: vestal\nrulebook: vestal-freeboard\nrules:\n  - id: FLD-003\n    thresholds:\n"
                  "      min_freeboard_ft: 1\n")
    f = one(flood_site(tmp_path, rulebook=load_rulebook(rb), lowest_floor_ft=floor), "FLD-003", "F1")
    assert f["status"] == expect, f["message"]


@pytest.mark.parametrize("floor, expect", [(849.99, "review"), (850.0, "pass"), (850.01, "pass")])
def test_fld003_nonresidential_at_the_bfe(tmp_path, floor, expect) -> None:
    # § 6-137(c)(1): non-residential construction has "the lowest floor, including basement, elevated to
    # or above the base flood elevation" or is floodproofed to it (an engineer's certification: review)
    f = one(flood_site(tmp_path, lowest_floor_ft=floor, use="nonresidential"), "FLD-003", "F1")
    assert f["status"] == expect, f["message"]


# ------------------------------------------------------------------------------------------
# HRV-002 element c: its own coverage_gap_tolerance_sqft = 100 and default_row_width_ft = 50 (the law
# tests move these for HRV-003 only; TEXT_ONLY there says "as HRV-003's"). § 44-VI-6(E)(4)c: the
# site plan shows "any property zoned RA-1 or RA-2 or RC within 300 feet of the harvest area": land
# the zoning does not cover leaves the element not shown


@pytest.mark.parametrize("hole, expected", [(99.9, "info"), (100.0, "info"), (100.1, "not_evaluated")])
def test_hrv002_c_coverage_gap_tolerance(tmp_path, hole, expected) -> None:
    # a 10 x hole/10 ft hole in the C-1 zoning at u 200..210, v 150.. (within 300 ft of the 100-ft
    # square harvest area; RA-1 begins 400 ft north of it)
    c1 = box(-400, -400, 500, 500).difference(box(200, 150, 210, 150 + hole / 10))
    zoning = [("Z1", c1, {"district": "C-1"}), ("Z2", box(-400, 500, 500, 700), {"district": "RA-1"})]
    res = run_plan(tmp_path, "ft", {"harvest_area": [("A", box(0, 0, 100, 100), {})], "zoning": zoning})
    assert status_of(res, "HRV-002", "c") == expected


@pytest.mark.parametrize("band, expected", [(49.9, "info"), (50.0, "info"), (50.2, "not_evaluated")])
def test_hrv002_c_default_row_width(tmp_path, band, expected) -> None:
    # the zoning leaves a band-ft strip along road R (u = 200, no row_width_ft: default 50 ft, u 175..225)
    # uncovered. At 50.2 ft, 0.1 ft each side is a gap of 0.1 x (681 + 645) = 133 sq ft > 100 within the
    # 300-ft ring (the arithmetic of test_hrv003_default_row_width)
    half = band / 2
    zoning = [("Z1", box(-400, -800, 200 - half, 800), {"district": "C-1"}),
              ("Z2", box(200 + half, -800, 600, 800), {"district": "C-1"})]
    res = run_plan(tmp_path, "ft", {"harvest_area": [("A", box(0, 0, 100, 100), {})], "zoning": zoning,
                                    "roads": [("R", LineString([(200, -800), (200, 800)]), {})]})
    assert status_of(res, "HRV-002", "c") == expected


@pytest.mark.parametrize("which", ["dwelling's parcel", "neighbouring parcel"])
@pytest.mark.parametrize("zone", ["", "   "])
def test_hrv021_hrv022_blank_district_within_100_ft_is_not_a_pass(tmp_path, which, zone) -> None:
    # § 44-VI-6(F)(6): strips within 100 ft of a property line in RA-1 / RA-2 / RC, and of a dwelling in
    # RR. A landing 50 ft from a dwelling whose parcel's zoning is blank (it may be RR), or 50 ft from the
    # line of a parcel whose zoning is blank (it may be RA-1): it may lie in a strip -> review, never a
    # pass (tests/test_harvest.py covers a NULL zoning; an empty or blank text is no district either)
    if which == "dwelling's parcel":
        scene = district_scene(Point(250, 500), Point(200, 500), dwelling_zone=zone)
    else:
        scene = district_scene(Point(450, 900), Point(200, 500))
        scene["parcels"][1] = ("P2", box(500, 100, 1600, 1400), {"zoning": zone})
    assert status_of(run_plan(tmp_path, "ft", scene), "HRV-024", "L") == "review"


# ------------------------------------------------------------------------------------------
# Lockport SWP-007 applies "for land development activities meeting Condition A, B or C" (§ 159-7A(2)):
# Condition C's min_acres = 1 decides it where A and B do not apply


@pytest.mark.parametrize("acres, required", [(0.999, False), (1.0, True), (1.001, True)])
def test_swp007_lockport_applies_from_condition_c_at_one_acre(tmp_path, acres, required) -> None:
    # commercial use, dated 05-01..05-29; the impaired water 600 ft east of the site (beyond the 500-ft
    # screening distance) and a bowl DEM (z rising 0.1 ft per ft from the site's centre, 10-ft cells):
    # every flow path ends in the bowl, so Condition A does not apply; B needs 5 acres. Under 1 acre no
    # condition applies: inspections not required (pass); at 1 acre Condition C does: never that pass
    s = math.sqrt(acres * ACRE)
    dem = tmp_path / "dem.tif"
    import rasterio
    from affine import Affine

    u = -95.0 + 10.0 * np.arange(110)
    v = 395.0 - 10.0 * np.arange(60)
    z = 1000.0 + 0.1 * np.hypot(u[None, :] - s / 2, v[:, None] - s / 2)
    with rasterio.open(dem, "w", driver="GTiff", width=110, height=60, count=1, dtype="float64", crs=NY_FT,
                       transform=Affine(10.0, 0, X0 - 100, 0, -10.0, Y0 + 400)) as dst:
        dst.write(z, 1)
    path = tmp_path / "plan.gpkg"
    gpd.GeoDataFrame({"id": ["A"], "start": ["2024-05-01"], "stabilized": ["2024-05-29"], "use": ["commercial"]},
                     geometry=[sq_acres(acres)], crs=NY_FT).to_file(path, layer="disturbance", driver="GPKG")
    gpd.GeoDataFrame({"id": ["W1"]}, geometry=[LineString([(X0 + s + 600, Y0 - 90), (X0 + s + 600, Y0 + 390)])],
                     crs=NY_FT).to_file(path, layer="impaired_waters", driver="GPKG")
    layers = load_layers(path, dem=dem, dem_z_units="ft", primary=("disturbance",))
    res = check_stormwater(layers, load_rulebook("lockport"), larger_common_plan=False)
    assert one(res, "SWP-002")["status"] == "pass", one(res, "SWP-002")["message"]
    assert one(res, "SWP-004")["status"] == ("review" if required else "pass")
    f = one(res, "SWP-007", "schedule")
    if required:  # the schedule of inspections is listed (info), naming Condition C
        assert f["status"] == "info" and "Condition C applies" in f["message"], f["message"]
    else:
        assert f["status"] == "pass" and "not required" in f["message"], f["message"]


# ------------------------------------------------------------------------------------------
# FLD-001 min_overlap_sqft = 100 with the SFHA overlap split between two zones (parcel screening):
# FLD-001 counts the SFHA as one area; FLD-006 must read the same zones

# (a bug found by this file: each zone's part was sliver-tested alone, so FLD-006 found "zone X" in the
# SFHA; overlay._count_split_sfha counts the zones' parts of such a subject)


@pytest.mark.parametrize("side_ft, zones_", [
    (10.0, ("AE", "AE")),  # one zone in two polygons: 100 sq ft of AE, counted (control)
    (10.0, ("A", "AE")),  # 50 + 50 sq ft: each zone's part a sliver alone, the SFHA's not
    (10.1, ("A", "AE")),
])
def test_fld001_fld006_sfha_overlap_split_between_zones(tmp_path, side_ft, zones_) -> None:
    # A 200-ft square parcel; in its north-east corner an SFHA area side_ft x 10 ft (100 / 101 sq ft: at
    # and over min_overlap_sqft), its west half zone zones_[0], its east half zones_[1] (50 / 50.5 sq ft
    # each), zone X elsewhere. § 6-122: development in the SFHA needs a permit -> FLD-001 review (the 100
    # sq ft counted). § 6-136(f)(1) (unnumbered A: capacity analysis) and (f)(2) (AE, no floodway: 1 ft
    # cumulative rise) apply to that same area -> FLD-006 review, as when the 100 sq ft lie in one zone
    mid = 200 - side_ft / 2
    parts = [(square(200 - side_ft, 190, mid, 400), zones_[0]), (square(mid, 190, 400, 400), zones_[1]),
             (square(-10, -10, 400, 190), "X"), (square(-10, 190, 200 - side_ft, 400), "X")]
    res = screen_one_parcel(tmp_path, parts)
    assert one(res, "FLD-001", "P1")["status"] == "review"
    f6 = one(res, "FLD-006", "P1")
    assert "zone X is in the area of special flood hazard" not in f6["message"], f6["message"]
    assert f6["status"] == "review", f6["message"]


def screen_one_parcel(tmp_path: Path, parts: list[tuple]):
    """Parcel P1, the 200-ft square at the origin, screened against ``(geometry, FLD_ZONE)`` flood zones."""
    fz = gpd.GeoDataFrame({"FLD_ZONE": [p[1] for p in parts],
                           "ZONE_SUBTY": [("AREA OF MINIMAL FLOOD HAZARD" if p[1] == "X" else None) for p in parts],
                           "STATIC_BFE": -9999.0, "V_DATUM": "NAVD88"}, geometry=[p[0] for p in parts], crs=NY_FT)
    path = tmp_path / "in.gpkg"
    gpd.GeoDataFrame({"parcel_id": ["P1"]}, geometry=[square(0, 0, 200, 200)], crs=NY_FT).to_file(
        path, layer="parcels", driver="GPKG")
    fz.to_file(path, layer="flood_zones", driver="GPKG")
    return screen_parcels(load_layers(path), VESTAL, findings="all")


@pytest.mark.parametrize("half_ft, expect", [
    (0.49, "pass"),  # 0.98 ft of SFHA along the parcel's east edge: thinner than sliver_tolerance_ft (1 ft)
    (0.5, "pass"),  # 1.0 ft: a sliver ("thinner than or equal": as test_fld001_sliver_tolerance_on_parcel_edges)
    (0.505, "review"),  # 1.01 ft: counted
])
def test_fld001_fld006_sfha_strip_split_between_zones(tmp_path, half_ft, expect) -> None:
    # the SFHA strip along the east edge (200 ft long) is 2 x half_ft wide: zone A on its west half, AE
    # on its east half (each thinner than the tolerance alone). FLD-001 reads the SFHA strip as one: at
    # 1.01 ft it is in the SFHA (review); FLD-006 must then find A and AE there (review), not zone X
    e = 200 - 2 * half_ft
    parts = [(square(e, -10, e + half_ft, 210), "A"), (square(e + half_ft, -10, 400, 210), "AE"),
             (square(-10, -10, e, 210), "X")]
    res = screen_one_parcel(tmp_path, parts)
    assert one(res, "FLD-001", "P1")["status"] == expect
    f6 = one(res, "FLD-006", "P1")
    assert "zone X is in the area of special flood hazard" not in f6["message"], f6["message"]
    assert f6["status"] == expect, f6["message"]
