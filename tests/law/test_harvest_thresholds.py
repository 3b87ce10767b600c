"""Every threshold of every HRV rule, at it, just under it and just over it, in feet and in metres.

Each case is a hand-made plan (tests/law/harvest_cases.py) whose geometry puts one measured value
at, 0.1 (or 0.1 %, one board foot...) under or over the rule's threshold; the comment of each test
works the arithmetic. The same plan given in UTM 18N metres (EPSG:32618) must give the same status
as in NY Central US survey feet (EPSG:2261). A threshold that no geometry measures (a number in a
licence condition, a map scale printed on the plan) is listed in TEXT_ONLY with the test that shows
the number follows the rulebook (tests/test_rulebook_text.py changes every threshold and checks
every text).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from harvest_cases import UNITS, rows_of, run_plan, status_of
from shapely.geometry import LineString, Point, box

from geoconstraints.rulebook.loader import load_rulebook

RB = load_rulebook("vestal")
SQ = box(0, 0, 100, 100)
"""A 100-ft square harvest area at the local origin."""


def ext(rid: str, **thresholds: float) -> str:
    """YAML of a rulebook extending vestal with new thresholds for one rule."""
    lines = "".join(f"      {k}: {v}\n" for k, v in thresholds.items())
    return f"extends: vestal\nrules:\n  - id: {rid}\n    thresholds:\n{lines}"


# ------------------------------------------------------------------------------------------
# HRV-001 volume limits (§ 44-VI-6(B): "greater than"), the cord, contiguous parcels


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("field,value,expected", [
    # 20 standard cords: 19.9 and 20 are not greater than 20 -> no licence; 20.1 is
    ("cords", 19.9, "pass"), ("cords", 20.0, "pass"), ("cords", 20.1, "review"),
    # 2,560 cu ft = 20 cords x 128 cu ft (4 x 4 x 8 ft): 2,559.9 / 2,560 no licence; 2,560.1 licence
    ("cubic_feet", 2559.9, "pass"), ("cubic_feet", 2560.0, "pass"), ("cubic_feet", 2560.1, "review"),
    # 10,000 board feet (International 1/4-inch rule): 9,999 / 10,000 no; 10,001 yes
    ("board_feet", 9999.0, "pass"), ("board_feet", 10000.0, "pass"), ("board_feet", 10001.0, "review"),
])
def test_hrv001_volume_limits(tmp_path, units, field, value, expected) -> None:
    res = run_plan(tmp_path, units, {"harvest_area": [("A", SQ, {field: value, "parcel_id": "P"})]})
    assert status_of(res, "HRV-001", "A") == expected


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("cuft,expected", [(1279.9, "pass"), (1280.0, "pass"), (1280.1, "review")])
def test_hrv001_standard_cord_of_128_cuft(tmp_path, units, cuft, expected) -> None:
    # A holds 10 cords, B X cu ft, both on parcel P: 10 + X / 128 cords against 20 (and 1,280 + X
    # cu ft against 2,560): X = 1,280 makes exactly 20 cords = 2,560 cu ft, not greater; 1,280.1 is
    ha = [("A", SQ, {"cords": 10.0, "parcel_id": "P"}), ("B", box(300, 0, 400, 100), {"cubic_feet": cuft,
                                                                                      "parcel_id": "P"})]
    res = run_plan(tmp_path, units, {"harvest_area": ha})
    assert status_of(res, "HRV-001", "A") == status_of(res, "HRV-001", "B") == expected
    assert rows_of(res, "HRV-001", "A")["measured"].iloc[0] == pytest.approx(10 + cuft / 128)


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("gap,expected", [(0.9, "review"), (1.0, "review"), (1.1, "pass")])
def test_hrv001_contiguity_tolerance(tmp_path, units, gap, expected) -> None:
    # parcels P1 (u -50..200) and P2 (u 200+gap..450) of one owner; A (15 cords) on P1, B (15) on P2.
    # Up to contiguity_tolerance_ft = 1 ft apart they are contiguous: 30 > 20 cords; 1.1 ft: two
    # parcels of 15 cords each
    parcels = [("P1", box(-50, -50, 200, 150), {"owner": "Smith"}),
               ("P2", box(200 + gap, -50, 450, 150), {"owner": "Smith"})]
    ha = [("A", SQ, {"cords": 15.0}), ("B", box(300, 0, 400, 100), {"cords": 15.0})]
    res = run_plan(tmp_path, units, {"harvest_area": ha, "parcels": parcels})
    assert status_of(res, "HRV-001", "A") == expected


# ------------------------------------------------------------------------------------------
# HRV-003 within 300 ft of RA-1/RA-2/RC (review); zoning coverage gaps; rights-of-way


def _zoning(d: float, hole: float = 0.0):
    # C-1 below v = 100 + d, RA-1 above it, both from u -400..500: the 300-ft ring of the square SQ
    # ([-300, 400] x [-300, 400]) is covered. An optional hole of ``hole`` sq ft (10 ft x hole/10)
    # in the C-1 polygon at u 200..210, v 150.. (inside the ring, away from RA-1 when d > 100)
    c1 = box(-400, -400, 500, 100 + d)
    if hole:
        c1 = c1.difference(box(200, 150, 210, 150 + hole / 10))
    return [("Z1", c1, {"district": "C-1"}), ("Z2", box(-400, 100 + d, 500, 700), {"district": "RA-1"})]


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("d,expected", [(299.9, "review"), (300.0, "review"), (300.1, "pass")])
def test_hrv003_distance(tmp_path, units, d, expected) -> None:
    # RA-1 zoning begins d ft north of the harvest area's north edge: "within 300 ft" includes 300
    res = run_plan(tmp_path, units, {"harvest_area": [("A", SQ, {})], "zoning": _zoning(d)})
    assert status_of(res, "HRV-003", "A") == expected
    assert rows_of(res, "HRV-003", "A")["measured"].iloc[0] == pytest.approx(d, abs=1e-6)


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("hole,expected", [(99.9, "pass"), (100.0, "pass"), (100.1, "not_evaluated")])
def test_hrv003_coverage_gap_tolerance(tmp_path, units, hole, expected) -> None:
    # the zoning layer leaves a 10 x hole/10 ft hole within 300 ft of A (RA-1 400 ft away): a gap
    # over coverage_gap_tolerance_sqft (100 sq ft) is not evaluated, naming it; up to it, pass
    res = run_plan(tmp_path, units, {"harvest_area": [("A", SQ, {})], "zoning": _zoning(400.0, hole)})
    assert status_of(res, "HRV-003", "A") == expected
    if expected == "not_evaluated":
        # 100.1 sq ft = 0.0023 acres (was printed "0.00 acres": a gap that needs a person, said as nothing)
        assert "0.0023 acres within 300 ft not covered by the zoning layer" in rows_of(res, "HRV-003", "A")["message"].iloc[0]


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("band,expected", [(49.9, "pass"), (50.0, "pass"), (50.2, "not_evaluated")])
def test_hrv003_default_row_width(tmp_path, units, band, expected) -> None:
    # the zoning leaves a ``band``-ft strip uncovered along road R (the line u = 200; no row_width_ft,
    # so its right-of-way is default_row_width_ft = 50 ft, u 175..225). Up to 50 ft the strip is the
    # right-of-way, not a gap. At 50.2 ft, 0.1 ft on each side is a gap over the height of A's 300-ft
    # ring there: at u = 175 (75 ft east of A) 100 + 2 sqrt(300^2 - 75^2) = 681 ft, at u = 225 645 ft:
    # 0.1 x (681 + 645) = 133 sq ft > 100 sq ft (coverage_gap_tolerance_sqft)
    half = band / 2
    zoning = [("Z1", box(-400, -800, 200 - half, 800), {"district": "C-1"}),
              ("Z2", box(200 + half, -800, 600, 800), {"district": "C-1"})]
    roads = [("R", LineString([(200, -800), (200, 800)]), {})]
    res = run_plan(tmp_path, units, {"harvest_area": [("A", SQ, {})], "zoning": zoning, "roads": roads})
    assert status_of(res, "HRV-003", "A") == expected


# ------------------------------------------------------------------------------------------
# HRV-010: more than 200 ft steeper than 25 %; the grade filter's window


def _road_on_plane(grade_pct: float, stretches: list[tuple[float, float]]):
    """A road of (length ft, grade %) stretches on a plane rising grade_pct % along +u (each
    stretch in the direction whose grade on the plane is its grade), with the DEM settings."""
    u, v, pts = 0.0, 0.0, [(0.0, 0.0)]
    for length, g in stretches:
        c = min(g / grade_pct, 1.0)
        u, v = u + length * c, v + length * math.sqrt(1 - c * c)
        pts.append((u, v))
    return LineString(pts), (lambda U, V: 100 + grade_pct / 100 * U, 5.0, (-20, -20, u + 20, v + 20))


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("grade,length,expected", [
    # 201 ft at 24.9 % and at 25 % is not steeper than 25 %; at 25.1 % it is, for more than 200 ft
    (24.9, 201.0, "pass"), (25.0, 201.0, "pass"), (25.1, 201.0, "violation"),
    # at 25.1 %: 199 and 200 ft are not more than 200 ft; 201 ft is (the case above)
    (25.1, 199.0, "pass"), (25.1, 200.0, "pass"),
])
def test_hrv010_grade_and_run_length(tmp_path, units, grade, length, expected) -> None:
    line, dem = _road_on_plane(grade, [(length, grade)])
    res = run_plan(tmp_path, units, {"haul_roads": [("R", line, {})]}, dem=dem, exact=True)
    assert status_of(res, "HRV-010", "R") == expected
    if grade > 25:
        # the run is the whole road: its measured length is exact whatever the grade filter
        assert rows_of(res, "HRV-010", "R")["measured"].iloc[0] == pytest.approx(length, abs=1e-6)


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("bench,expected", [(7.4, "violation"), (7.5, "pass"), (7.6, "pass")])
def test_hrv010_smoothing_window(tmp_path, units, bench, expected) -> None:
    # 150 ft at 30 %, a 5 % bench, 150 ft at 30 % on 1-ft cells (3 cells = 3 ft < 15 ft: the window is
    # smoothing_window_ft = 15 ft). The running median removes a bench shorter than half the window
    # (7.5 ft): 7.4 ft is noise, one run of 307.4 ft > 200 ft; at 7.5 ft the bench is half the window
    # around its middle (the median is the mean of 30 and 5 %, 17.5 %): two runs of 150 ft, as at 7.6
    line, (zfn, _, bounds) = _road_on_plane(30.0, [(150, 30), (bench, 5), (150, 30)])
    res = run_plan(tmp_path, units, {"haul_roads": [("R", line, {})]}, dem=(zfn, 1.0, bounds), exact=True)
    assert status_of(res, "HRV-010", "R") == expected
    assert "running median of the grades over 15.0 ft" in rows_of(res, "HRV-010", "R")["message"].iloc[0]


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("bench,expected", [(12.4, "violation"), (12.5, "pass"), (12.6, "pass")])
def test_hrv010_smoothing_window_cells(tmp_path, units, bench, expected) -> None:
    # the same on 25/3-ft cells: 3 cells (smoothing_window_cells_count) = 25 ft > 15 ft, so the window
    # is 25 ft and a bench shorter than 12.5 ft is removed; at 12.5 ft it is half the window: kept
    cell = 25 / 3
    line, (zfn, _, bounds) = _road_on_plane(30.0, [(150, 30), (bench, 5), (150, 30)])
    res = run_plan(tmp_path, units, {"haul_roads": [("R", line, {})]}, dem=(zfn, cell, bounds), exact=True)
    assert status_of(res, "HRV-010", "R") == expected
    msg = rows_of(res, "HRV-010", "R")["message"].iloc[0]
    assert "over 25.0 ft (3 DEM cells of 8.3 ft; the rulebook's 15 ft window is smaller than that)" in msg


# ------------------------------------------------------------------------------------------
# HRV-012 channel width and the longest crossing; HRV-013 lists the crossings


STREAM = [("S", LineString([(-500, 0), (1500, 0)]), {"kind": "perennial"})]
"""A stream line along v = 0: its channel is v in [-5, 5] (channel_width_ft = 10)."""


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("offset,expected", [(4.9, "violation"), (5.0, "violation"), (5.1, "pass")])
def test_hrv012_channel_width(tmp_path, units, offset, expected) -> None:
    # a skid trail along the stream ``offset`` ft from its line, u 0..100: within half the channel
    # width (5 ft) it runs in the channel, the edge included; 5.1 ft is outside it
    trails = [("T", LineString([(0, offset), (100, offset)]), {})]
    res = run_plan(tmp_path, units, {"skid_trails": trails, "streams": STREAM})
    assert status_of(res, "HRV-012", "T") == expected


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("ratio,expected", [(1.99, "pass"), (2.0, "pass"), (2.01, "violation")])
def test_hrv012_longest_crossing(tmp_path, units, ratio, expected) -> None:
    # a straight trail across the 10-ft channel at the angle a with 1 / sin a = ratio: inside the
    # channel for 10 x ratio ft. Up to max_crossing_length_ratio (2: a = 30 degrees) it is a crossing
    # (HRV-013 review, HRV-012 pass); beyond, skidding along the channel (HRV-012 violation, no crossing)
    a = math.asin(1 / ratio)
    dx = 50 / math.tan(a)
    trails = [("T", LineString([(500 - dx, -50), (500 + dx, 50)]), {})]
    res = run_plan(tmp_path, units, {"skid_trails": trails, "streams": STREAM})
    assert status_of(res, "HRV-012", "T") == expected
    assert status_of(res, "HRV-013", "T") == ("review" if expected == "pass" else "pass")
    assert rows_of(res, "HRV-012", "T")["measured"].iloc[0] == pytest.approx(10 * ratio, abs=1e-3)


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("d,expected", [(29.9, "violation"), (30.0, "violation"), (30.1, "pass")])
def test_hrv012_opposite_bank_arc_ratio(tmp_path, units, d, expected) -> None:
    # a stream polygon u 0..1000, v 0..60 and a trail straight across it at u = d: inside it runs from
    # (d, 0) to (d, 60), 60 ft. The shorter way round the bank between those ends goes round the west
    # end: d + 60 + d ft, against 60 ft straight. It leaves by the other bank only when that is more
    # than opposite_bank_arc_ratio (2) times 60: 60 + 2d > 120, d > 30. At or under: it entered and
    # left by "the same bank", skidding in the channel (HRV-012 violation); over: a crossing
    # (HRV-012 pass, HRV-013 review)
    channel = [("S", box(0, 0, 1000, 60), {"kind": "perennial"})]
    trails = [("T", LineString([(d, -50), (d, 110)]), {})]
    res = run_plan(tmp_path, units, {"skid_trails": trails, "streams": channel})
    assert status_of(res, "HRV-012", "T") == expected
    assert status_of(res, "HRV-013", "T") == ("review" if expected == "pass" else "pass")


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("d,expected", [(49.9, "review"), (50.0, "review"), (50.1, "pass")])
def test_hrv013_stream_end_distance(tmp_path, units, d, expected) -> None:
    # a stream along u = 50 mapped with a break at haul road R (v = 0, u 0..100): line A stops d ft south of
    # R, line B starts d ft north. Within stream_end_distance_ft (50, the limit included) the ends are a
    # possible crossing the map leaves out (review); beyond it, the map's own ends of two streams (pass)
    streams = [("A", LineString([(50, -500), (50, -d)]), {"kind": "perennial"}),
               ("B", LineString([(50, d), (50, 500)]), {"kind": "perennial"})]
    res = run_plan(tmp_path, units, {"haul_roads": [("R", LineString([(0, 0), (100, 0)]), {})], "streams": streams})
    assert status_of(res, "HRV-013", "R") == expected


# ------------------------------------------------------------------------------------------
# buffer widths (HRV-020 50 ft, HRV-021 / HRV-022 100 ft) through HRV-024: no landing in a strip


@pytest.mark.parametrize("units", UNITS)
# the landing is a point: just outside a strip it is review (its pad may reach in: point_landing_radius_ft,
# tests/test_harvest_audit22c.py), no longer a pass (round 22c); likewise below
@pytest.mark.parametrize("d,expected", [(49.9, "violation"), (50.0, "violation"), (50.1, "review")])
def test_hrv020_stream_buffer_width(tmp_path, units, d, expected) -> None:
    # a landing d ft north of a perennial stream line: the strip is at least 50 ft wide and a landing
    # touching it is in it
    res = run_plan(tmp_path, units, {"landings": [("L", Point(500, d), {})], "streams": STREAM,
                                     "roads": [("R", LineString([(-500, 900), (1500, 900)]), {})],
                                     "parcels": [("P", box(-600, -600, 1600, 1600), {"zoning": "C-1"})],
                                     "dwellings": [("D", Point(1400, 800), {})]})
    assert status_of(res, "HRV-024", "L") == expected


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("d,expected", [(49.9, "violation"), (50.0, "violation"), (50.1, "review")])
def test_hrv020_road_buffer_width(tmp_path, units, d, expected) -> None:
    # a landing d ft from a public road's centre line (no row layer: measured from the centre line)
    res = run_plan(tmp_path, units, {"landings": [("L", Point(500, 900 - d), {})], "streams": STREAM,
                                     "roads": [("R", LineString([(-500, 900), (1500, 900)]), {})],
                                     "parcels": [("P", box(-600, -600, 1600, 1600), {"zoning": "C-1"})],
                                     "dwellings": [("D", Point(1400, 800), {})]})
    assert status_of(res, "HRV-024", "L") == expected


def _district_scene(landing: Point, dwelling_zone: str = "C-1") -> dict:
    # P1 (C-1) u -600..500, P2 (RA-1) u 500..1600; dwelling D at (200, 500) in P1's district
    return {"landings": [("L", landing, {})], "streams": STREAM,
            "roads": [("R", LineString([(-500, 1500), (1500, 1500)]), {})],
            "parcels": [("P1", box(-600, 100, 500, 1400), {"zoning": dwelling_zone}),
                        ("P2", box(500, 100, 1600, 1400), {"zoning": "RA-1"})],
            "dwellings": [("D", Point(200, 500), {})]}


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("d,expected", [(99.9, "violation"), (100.0, "violation"), (100.1, "review")])
def test_hrv021_property_line_buffer_width(tmp_path, units, d, expected) -> None:
    # a landing d ft west of the RA-1 parcel's west line (u = 500), inside the C-1 parcel
    res = run_plan(tmp_path, units, _district_scene(Point(500 - d, 900)))
    assert status_of(res, "HRV-024", "L") == expected


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("gap,expected", [(0.9, "violation"), (1.0, "violation"), (1.1, "pass")])
def test_hrv021_touch_tolerance(tmp_path, units, gap, expected) -> None:
    # reading (b) only: the strip lies along P1's line where it borders the RA-1 parcel P2, P2 drawn
    # ``gap`` ft east of P1 (touch_tolerance_ft = 1 ft still borders). The landing 50 ft west of P1's
    # east line lies in that strip when P1 borders P2
    rb = ("extends: vestal\nrules:\n  - id: HRV-021\n    switches:\n      property_line_reading: b\n")
    scene = _district_scene(Point(450, 900))
    scene["parcels"] = [("P1", box(-600, 100, 500, 1400), {"zoning": "C-1"}),
                        ("P2", box(500 + gap, 100, 1600, 1400), {"zoning": "RA-1"})]
    res = run_plan(tmp_path, units, scene, rulebook=rb)
    assert status_of(res, "HRV-024", "L") == expected


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("d,expected", [(99.9, "violation"), (100.0, "violation"), (100.1, "review")])
def test_hrv022_dwelling_buffer_width(tmp_path, units, d, expected) -> None:
    # the dwelling D (200, 500) stands in an RR parcel; a landing d ft east of it
    res = run_plan(tmp_path, units, _district_scene(Point(200 + d, 500), dwelling_zone="RR"))
    assert status_of(res, "HRV-024", "L") == expected


# ------------------------------------------------------------------------------------------
# HRV-025 at least 150 ft from any public right-of-way


@pytest.mark.parametrize("units", UNITS)
# a point landing: review from 150 up to 270 ft (point_landing_radius_ft), no longer a pass (round 22c)
@pytest.mark.parametrize("d,expected", [(149.9, "violation"), (150.0, "review"), (150.1, "review")])
def test_hrv025_landing_distance(tmp_path, units, d, expected) -> None:
    # the road's right-of-way polygon v 1000..1050 (its centre line v = 1025 lies inside it); the
    # landing d ft south of it: "at least 150 ft"
    res = run_plan(tmp_path, units, {"landings": [("L", Point(500, 1000 - d), {})],
                                     "roads": [("R", LineString([(-500, 1025), (1500, 1025)]), {})],
                                     "row": [("W", box(-500, 1000, 1500, 1050), {})]})
    assert status_of(res, "HRV-025", "L") == expected
    assert rows_of(res, "HRV-025", "L")["measured"].iloc[0] == pytest.approx(d, abs=1e-6)
    # the right-of-way polygons alone: a public road without one is not known, never a pass
    alone = run_plan(tmp_path / "alone", units, {"landings": [("L", Point(500, 1000 - d), {})],
                                                 "row": [("W", box(-500, 1000, 1500, 1050), {})]})
    assert status_of(alone, "HRV-025", "L") == ("violation" if expected == "violation" else "not_evaluated")


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("d,expected", [(174.9, "violation"), (175.0, "review"), (175.1, "review"),
                                        (199.9, "review"), (200.0, "review"), (200.1, "review")])
def test_hrv025_default_row_width(tmp_path, units, d, expected) -> None:
    # round 22c: the landing is a point, so 200 ft (and the width given, 175 ft and more) is review too: its
    # pad may reach up to point_landing_radius_ft nearer (a pass from a point at d >= 320:
    # tests/test_harvest_audit22c.py); the width's review still says the width is not given
    # a road centre line without row_width_ft: at default_row_width_ft = 50 ft its right-of-way reaches
    # 25 ft each side, so a landing d ft from the centre line is d - 25 ft from it (violation under
    # 150: d < 175); the width is not known, so a pass must hold at max_assumed_row_width_ft = 100 ft
    # too, d - 50 >= 150: d >= 200. Between the two: review, saying the width is not given
    res = run_plan(tmp_path, units, {"landings": [("L", Point(500, 1000 - d), {})],
                                     "roads": [("R", LineString([(-500, 1000), (1500, 1000)]), {})]})
    assert status_of(res, "HRV-025", "L") == expected
    row = rows_of(res, "HRV-025", "L").iloc[0]
    assert "no row_width_ft given" in row["message"]
    if expected == "review" and d < 200:
        assert "from a public right-of-way, minimum 150 ft, but may be nearer than 150 ft to it: at 50 ft wide, " \
               "nearer if the right-of-way is up to 100 ft wide: its width is not given" in row["message"]
        assert "widened by half its 50 ft right-of-way" in row["message"]  # measured at the default width
        assert row["measured"] == pytest.approx(d - 25, abs=1e-6)
    # the same road with its width given: measured at that width, no review
    given = run_plan(tmp_path / "given", units, {"landings": [("L", Point(500, 1000 - d), {})],
                                                 "roads": [("R", LineString([(-500, 1000), (1500, 1000)]),
                                                            {"row_width_ft": 50.0})]})
    assert status_of(given, "HRV-025", "L") == ("violation" if d < 175 else "review")


# ------------------------------------------------------------------------------------------
# HRV-026 access points (snap 5 ft; review above 2), HRV-027 connection (snap 5 ft)


ROAD = [("R", LineString([(-500, 1000), (1500, 1000)]), {"row_width_ft": 50.0})]


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("gap,expected", [(4.9, 1.0), (5.0, 1.0), (5.1, 0.0)])
def test_hrv026_snap_tolerance(tmp_path, units, gap, expected) -> None:
    # a haul road ending ``gap`` ft short of the public road's centre line: an access point within
    # snap_tolerance_ft (5 ft)
    res = run_plan(tmp_path, units, {"haul_roads": [("H", LineString([(500, 500), (500, 1000 - gap)]), {})],
                                     "roads": ROAD})
    assert rows_of(res, "HRV-026", "all")["measured"].iloc[0] == expected


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("n,expected", [(1, "info"), (2, "info"), (3, "review")])
def test_hrv026_max_access_points(tmp_path, units, n, expected) -> None:
    # n haul roads reaching the road 300 ft apart: n access points; more than 2 is review
    hr = [(f"H{i}", LineString([(300 * i, 500), (300 * i, 1000)]), {}) for i in range(n)]
    res = run_plan(tmp_path, units, {"haul_roads": hr, "roads": ROAD})
    row = rows_of(res, "HRV-026", "all").iloc[0]
    assert (row["status"], row["measured"]) == (expected, n)


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("gap,expected", [(4.9, "pass"), (5.0, "pass"), (5.1, "violation")])
def test_hrv027_snap_tolerance(tmp_path, units, gap, expected) -> None:
    # the landing at (500, 500), its haul road starting ``gap`` ft from it and reaching the road
    res = run_plan(tmp_path, units, {"landings": [("L", Point(500, 500), {})],
                                     "haul_roads": [("H", LineString([(500, 500 + gap), (500, 1000)]), {})],
                                     "roads": ROAD})
    assert status_of(res, "HRV-027", "L") == expected


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("cell,expected", [(49.9, "pass"), (50.0, "pass"), (50.1, "not_evaluated")])
def test_hrv010_max_dem_cell(tmp_path, units, cell, expected) -> None:
    # 150 ft at 30 % (not more than 200 ft) on DEM cells of 49.9, 50 and 50.1 ft (feet, or metres:
    # 15.24 m is 50 ft): a pass only on cells of at most max_dem_cell_ft (tests/test_dem_resolution.py)
    line, (zfn, _, bounds) = _road_on_plane(30.0, [(150, 30)])
    res = run_plan(tmp_path, units, {"haul_roads": [("R", line, {})]}, dem=(zfn, cell, bounds), exact=True)
    assert status_of(res, "HRV-010", "R") == expected


# ------------------------------------------------------------------------------------------
# HRV-030 water bars: under 2 % none; the model-law table's bands


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("grade,bars,band", [
    # 1,000 ft at a constant grade; bars every spacing (the table's shorter end), none at the end.
    (1.9, [], None),  # under min_grade_pct 2: no water bar, pass
    (2.0, [300, 600, 900], "2-5 %"),  # 2 % is in the 2-5 % band: 300 ft
    (2.1, [300, 600, 900], "2-5 %"),
    (4.9, [300, 600, 900], "2-5 %"), (5.0, [300, 600, 900], "2-5 %"),
    (5.1, [200, 400, 600, 800], "6-10 %"),  # between 5 and 6 %: the steeper band (switch between_bands)
    (6.0, [200, 400, 600, 800], "6-10 %"), (10.0, [200, 400, 600, 800], "6-10 %"),
    (10.1, [100 * k for k in range(1, 10)], "11-15 %"),  # between bands: 11-15 %, 100 ft
    (15.0, [100 * k for k in range(1, 10)], "11-15 %"),
    (15.1, [100 * k for k in range(1, 10)], "16 % and greater"),  # between: 16 % and greater, 100 ft
    (16.0, [100 * k for k in range(1, 10)], "16 % and greater"),
])
def test_hrv030_grade_bands(tmp_path, units, grade, bars, band) -> None:
    line, dem = _road_on_plane(grade, [(1000, grade)])
    res = run_plan(tmp_path, units, {"haul_roads": [("R", line, {})]}, dem=dem, exact=True)
    row = rows_of(res, "HRV-030", "R").iloc[0]
    assert (row["status"], row["measured"]) == ("pass" if not bars else "info", len(bars))
    wb = res.derived["water_bars"]
    assert sorted(wb["dist_ft"]) == pytest.approx(bars, abs=1e-6)
    if band:
        assert set(wb["band"]) == {band}
        assert wb["grade_pct"].to_numpy() == pytest.approx(grade, abs=1e-6)


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("cell,expected", [(49.9, "pass"), (50.0, "pass"), (50.1, "not_evaluated")])
def test_hrv030_max_dem_cell(tmp_path, units, cell, expected) -> None:
    # 1,000 ft at 1.9 %: no water bar required, a pass only on DEM cells of at most max_dem_cell_ft
    line, (zfn, _, bounds) = _road_on_plane(1.9, [(1000, 1.9)])
    res = run_plan(tmp_path, units, {"haul_roads": [("R", line, {})]}, dem=(zfn, cell, bounds), exact=True)
    assert (status_of(res, "HRV-030", "R"), rows_of(res, "HRV-030", "R")["measured"].iloc[0]) == (expected, 0)


# ------------------------------------------------------------------------------------------
# HRV-002: contours at the interval; 300 ft around the harvest area for element c


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("d,expected", [(299.9, "not_evaluated"), (300.0, "info"), (300.1, "info")])
def test_hrv002_zoning_search_distance(tmp_path, units, d, expected) -> None:
    # element c needs the zoning within zoning_search_distance_ft (300 ft) of the harvest area: the
    # zoning layer stops d ft east of it (u = 100 + d). At 299.9 ft the 300-ft ring reaches 0.1 ft past
    # it: 0.1 x 100 along the ring's straight east side plus the two round corners' slivers (about
    # 4/3 x sqrt(2 x 300 x 0.1) x 0.1 = 1 sq ft in all) = 11 sq ft uncovered; with the tolerance set to 0
    # (a rulebook changing coverage_gap_tolerance_sqft) that is a gap. At 300 and 300.1 ft: none
    zoning = [("Z", box(-400, -400, 100 + d, 500), {"district": "C-1"})]
    res = run_plan(tmp_path, units, {"harvest_area": [("A", SQ, {})], "zoning": zoning},
                   rulebook=ext("HRV-002", coverage_gap_tolerance_sqft=0))
    assert status_of(res, "HRV-002", "c") == expected


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("interval", [9.9, 10.0, 10.1])
def test_hrv002_contour_interval(tmp_path, units, interval) -> None:
    # a 10 % plane under a 100-ft harvest area, contours within contour_margin_ft (200 ft): the levels
    # are the multiples of the interval over the DEM read; element b is shown (info) at any interval
    line, (zfn, cell, _) = _road_on_plane(10.0, [(100, 10.0)])
    res = run_plan(tmp_path, units, {"harvest_area": [("A", SQ, {})], "haul_roads": [("R", line, {})]},
                   dem=(zfn, cell, (-300, -300, 400, 400)), rulebook=ext("HRV-002", contour_interval_ft=interval),
                   exact=True)
    levels = np.asarray(res.derived["contours"]["elev_ft"])
    assert len(levels) > 3 and np.allclose(levels / interval, np.round(levels / interval))
    assert status_of(res, "HRV-002", "b") == "info"


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("cell,expected", [(39.9, "info"), (40.0, "info"), (40.1, "not_evaluated")])
def test_hrv002_contour_dem_cell(tmp_path, units, cell, expected) -> None:
    # contours at 10 ft from a 10 % plane under a 100-ft harvest area on cells of ``cell`` ft: within
    # max_dem_cell_ft (40, the limit included) element b is shown (info); over it the contours are the
    # grid's, not a site survey (not_evaluated)
    res = run_plan(tmp_path, units, {"harvest_area": [("A", SQ, {})]},
                   dem=(lambda u, v: 1000 + 0.10 * u, cell, (-300, -300, 400, 400)), exact=True)
    assert len(res.derived["contours"])
    assert status_of(res, "HRV-002", "b") == expected


# ------------------------------------------------------------------------------------------
# thresholds no geometry measures: their numbers are texts (tests/test_rulebook_text.py)


TEXT_ONLY = {
    ("HRV-001", "period_months"): "the volumes given are taken as one 12-month harvest (notes)",
    ("HRV-002", "min_scale_ft_per_in"): "printed; the site plan PDF checks its own scale (output/siteplan.py)",
    ("HRV-002", "contour_margin_ft"): "a drawing extent",
    ("HRV-002", "coverage_gap_tolerance_sqft"): "as HRV-003's, tested there",
    ("HRV-002", "default_row_width_ft"): "as HRV-003's, tested there",
    ("HRV-020", "default_row_width_ft"): "HRV-025's reading, tested there",
    ("HRV-020", "clip_margin_ft"): "a computation extent around the plan",
    ("HRV-021", "clip_margin_ft"): "a computation extent around the plan",
    ("HRV-022", "clip_margin_ft"): "a computation extent around the plan",
    ("HRV-023", "min_stump_diameter_in"): "a condition on the cutting, listed",
    ("HRV-023", "stump_height_in"): "a condition on the cutting, listed",
    **{("HRV-040", k): "a licence condition, listed" for k in RB["HRV-040"].thresholds},
}

TESTED = {
    ("HRV-001", "volume_limit_cords"), ("HRV-001", "volume_limit_cuft"), ("HRV-001", "volume_limit_bf"),
    ("HRV-001", "standard_cord_cuft"), ("HRV-001", "contiguity_tolerance_ft"),
    ("HRV-002", "zoning_search_distance_ft"), ("HRV-002", "contour_interval_ft"), ("HRV-002", "max_dem_cell_ft"),
    ("HRV-003", "distance_ft"), ("HRV-003", "coverage_gap_tolerance_sqft"), ("HRV-003", "default_row_width_ft"),
    ("HRV-010", "max_grade_pct"), ("HRV-010", "max_run_ft"), ("HRV-010", "smoothing_window_ft"),
    ("HRV-010", "smoothing_window_cells_count"), ("HRV-010", "max_dem_cell_ft"),
    ("HRV-010", "dem_blur_cells_count"),  # tests/test_dem_blur.py
    ("HRV-012", "channel_width_ft"), ("HRV-012", "max_crossing_length_ratio"), ("HRV-012", "opposite_bank_arc_ratio"),
    ("HRV-013", "stream_end_distance_ft"),
    ("HRV-020", "buffer_width_ft"), ("HRV-021", "buffer_width_ft"), ("HRV-021", "touch_tolerance_ft"),
    ("HRV-022", "buffer_width_ft"), ("HRV-025", "min_distance_ft"), ("HRV-025", "default_row_width_ft"),
    ("HRV-025", "max_assumed_row_width_ft"),
    ("HRV-001", "cord_equivalent_bf"), ("HRV-024", "point_landing_radius_ft"),
    ("HRV-025", "point_landing_radius_ft"), ("HRV-003", "point_landing_radius_ft"),  # tests/test_harvest_audit22c.py
    ("HRV-026", "max_access_points_count"), ("HRV-026", "snap_tolerance_ft"), ("HRV-027", "snap_tolerance_ft"),
    ("HRV-030", "min_grade_pct"), ("HRV-030", "max_dem_cell_ft"),
}


def test_every_hrv_threshold_is_tested_or_text() -> None:
    every = {(r.id, k) for r in RB.group("harvest") for k in r.thresholds}
    assert every == TESTED | set(TEXT_ONLY), sorted(every ^ (TESTED | set(TEXT_ONLY)))
    assert not TESTED & set(TEXT_ONLY)
