"""A landing mapped as a point is no promise about its size (SWP-001..005, SWP-007).

The stormwater rules count a landing mapped as a point as a disc of SWP-006's
``default_landing_area_sqft`` (10,000 sq ft), a typical landing; log landings are commonly 1/4 to 1
acre. A pass resting on the acreage (SWP-001 under 1 acre, SWP-003 under 5, SWP-004 outside 1 to 5,
SWP-005's peak within 5, SWP-002 and SWP-007's "not required") is given only where every point
landing at ``max_point_landing_area_sqft`` (43,560 sq ft, 1 acre) gives the same outcome, counting the
footprints it would then touch; otherwise it is ``not_evaluated`` (SWP-005: ``review``) naming the
landing, both sizes and the fix. The acreages reported stay those at the typical size; a finding that
already holds at the typical size stays; a landing mapped as a polygon is measured as drawn.

Geometry in NY Central (US ft) near Vestal. A point landing's disc is exactly the area counted (a
64-gon of that area), so sums are hand arithmetic: the typical disc 10,000 sq ft, the largest 43,560;
a polygon landing of P sq ft is a rectangle 500 ft wide; features are placed apart so nothing overlaps
unless said. Thresholds are tested at, 1 sq ft under and 1 sq ft over (1 sq ft = 2.3e-5 acre, over the
1e-6-acre tolerance).
"""

from __future__ import annotations

import math
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
from common import NY_FT, X0, Y0
from shapely.geometry import LineString, Point, box
from test_flow_resolution import bowl, ny_dem

from geoconstraints.commands import check_stormwater
from geoconstraints.errors import RulebookError
from geoconstraints.geometry.phasing import harvest_footprints
from geoconstraints.io.layers import load_layers
from geoconstraints.rulebook.loader import load_rulebook

SQFT = 43_560.0
TYPICAL, LARGEST = 10_000.0, 43_560.0
BOOKS = ("vestal", "lockport")
FIX = "map the landing's extent (a polygon)"


def rect(p_sqft: float, dx: float, dy: float = 0.0):
    """A rectangle 500 ft wide of ``p_sqft`` sq ft with its south-west corner at (X0 + dx, Y0 + dy)."""
    return box(X0 + dx, Y0 + dy, X0 + dx + 500.0, Y0 + dy + p_sqft / 500.0)


def square(acres: float, dx: float = 0.0):
    s = math.sqrt(SQFT * acres)
    return box(X0 + dx, Y0, X0 + dx + s, Y0 + s)


def frame(rows: list[tuple], cols: tuple[str, ...] = ("id",)) -> gpd.GeoDataFrame:
    """Rows of (geometry, *values of ``cols``)."""
    return gpd.GeoDataFrame({c: [r[k + 1] for r in rows] for k, c in enumerate(cols)},
                            geometry=[r[0] for r in rows], crs=NY_FT)


def run(book: str | Path = "vestal", *, disturbance=None, landings=None, dem=None, waters=None, **kw):
    layers = load_layers(disturbance=disturbance, landings=landings, impaired_waters=waters, dem=dem,
                         primary=("disturbance", "landings"))
    return check_stormwater(layers, load_rulebook(book), **kw).findings


def one(findings, rid: str, subject: str | None = None):
    f = findings[findings["rule_id"] == rid]
    if subject is not None:
        f = f[f["subject_id"] == subject]
    assert len(f) == 1, f[["rule_id", "subject_id", "status"]]
    return f.iloc[0]


def harvest(p_sqft: float, point: bool = True, dates: tuple[str, str] | None = None) -> gpd.GeoDataFrame:
    """Landing L1 (a point, or a 100 x 100 ft polygon: 10,000 sq ft either way as counted) and a polygon
    landing P of ``p_sqft`` 3,000 ft east of it, optionally both dated."""
    l1 = Point(X0, Y0) if point else box(X0 - 50, Y0 - 50, X0 + 50, Y0 + 50)
    rows = [(l1, "L1"), (rect(p_sqft, 3000), "P")]
    if dates is None:
        return frame(rows)
    return frame([(g, i, *dates) for g, i in rows], ("id", "start", "stabilized"))


def extended(tmp_path: Path, book: str, largest: float) -> Path:
    y = tmp_path / f"{book}-{largest:g}.yaml"
    y.write_text(f"extends: {book}\nrules:\n  - id: SWP-006\n    thresholds: {{max_point_landing_area_sqft: {largest:g}}}\n")
    return y


def assert_point_note(msg: str, largest: float = LARGEST) -> None:
    assert "landing L1 is mapped as a point, counted as 10,000 sq ft (default_landing_area_sqft)" in msg, msg
    assert f"at up to {largest:,.0f} sq ft (max_point_landing_area_sqft)" in msg, msg
    assert FIX in msg, msg


# --------------------------------------------------------------------------------------------
# the sizes


@pytest.mark.parametrize("book", BOOKS)
def test_rulebooks_give_the_largest_point_landing_one_acre(book):
    from geoconstraints.rules.stormwater import point_landing_sizes

    sw6 = load_rulebook(book)["SWP-006"]
    assert point_landing_sizes(sw6) == (TYPICAL, LARGEST)
    assert "max_point_landing_area_sqft" in sw6.notes and "1/4 to 1" in sw6.notes
    pts = frame([(Point(X0, Y0), "a")]).rename(columns={"id": "feature_id"})
    for area in (TYPICAL, LARGEST):
        fp = harvest_footprints(pts, None, haul_road_width_ft=12, default_landing_area_sqft=area)
        np.testing.assert_allclose(fp["area_sqft"], [area], atol=1e-6)


@pytest.mark.parametrize("book", BOOKS)
def test_largest_under_the_counted_size_is_refused(tmp_path, book):
    with pytest.raises(RulebookError, match="max_point_landing_area_sqft"):
        run(extended(tmp_path, book, 9_999), landings=harvest(1_000), larger_common_plan=False)


# --------------------------------------------------------------------------------------------
# SWP-003: Condition B at 5 acres, the real sizes


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("delta, status", [(-1.0, "pass"), (0.0, "not_evaluated"), (1.0, "not_evaluated")])
def test_swp003_point_landing_at_its_largest_reaching_5_acres(book, delta, status):
    # typical 10,000 + P; largest 43,560 + P = 5 acres + delta sq ft
    p = 5 * SQFT - LARGEST + delta
    f = one(run(book, landings=harvest(p), larger_common_plan=False), "SWP-003")
    assert f["status"] == status, f["message"]
    assert f["measured"] == pytest.approx((TYPICAL + p) / SQFT, abs=1e-6)  # the acreage as counted
    if status == "not_evaluated":
        assert_point_note(f["message"])
        assert "Condition B (at least 5 acres) not determined" in f["message"]
        assert "the activity would disturb 5.00 acres, at least 5 acres" in f["message"]
    else:
        assert "mapped as a point" not in f["message"]
    # the same landing drawn as a polygon of the size counted is measured as drawn: a pass
    assert one(run(book, landings=harvest(p, point=False), larger_common_plan=False), "SWP-003")["status"] == "pass"


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("delta, status", [(-1.0, "not_evaluated"), (0.0, "review"), (1.0, "review")])
def test_swp003_over_at_the_counted_size_stays_review(book, delta, status):
    p = 5 * SQFT - TYPICAL + delta
    f = one(run(book, landings=harvest(p), larger_common_plan=False), "SWP-003")
    assert f["status"] == status, f["message"]
    assert ("mapped as a point" in f["message"]) == (status == "not_evaluated")


# --------------------------------------------------------------------------------------------
# SWP-001 and SWP-004 at 1 acre: a rulebook whose largest point landing is 20,000 sq ft (with the
# shipped 43,560 = 1 acre, any activity with a point landing reaches 1 acre at that size)


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("delta, status", [(-1.0, "pass"), (0.0, "not_evaluated"), (1.0, "not_evaluated")])
def test_swp001_swp004_point_landing_at_its_largest_reaching_1_acre(tmp_path, book, delta, status):
    largest = 20_000.0
    p = SQFT - largest + delta
    found = run(extended(tmp_path, book, largest), landings=harvest(p), larger_common_plan=False)
    for rid in ("SWP-001", "SWP-004"):
        f = one(found, rid)
        assert f["status"] == status, (rid, f["message"])
        assert f["measured"] == pytest.approx((TYPICAL + p) / SQFT, abs=1e-6)
        if status == "not_evaluated":
            assert_point_note(f["message"], largest)
    if status == "not_evaluated":
        assert "the activity would disturb 1.00 acres, at least 1 acre" in one(found, "SWP-001")["message"]
        assert "reaching 1 acre (Condition C from 1 to under 5 acres)" in one(found, "SWP-004")["message"]
        assert "Condition C (1 to 5 acres) not determined" in one(found, "SWP-004")["message"]
    # the shipped rulebook: the point at 1 acre reaches 1 acre whatever P is
    shipped = run(book, landings=harvest(1.0), larger_common_plan=False)
    assert one(shipped, "SWP-001")["status"] == "not_evaluated"
    # drawn as a polygon: measured as drawn
    drawn = run(extended(tmp_path, book, largest), landings=harvest(p, point=False), larger_common_plan=False)
    assert one(drawn, "SWP-001")["status"] == one(drawn, "SWP-004")["status"] == "pass"


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("delta, status", [(-1.0, "not_evaluated"), (0.0, "review"), (1.0, "review")])
def test_swp001_one_acre_at_the_counted_size_stays_review(book, delta, status):
    p = SQFT - TYPICAL + delta
    f = one(run(book, landings=harvest(p), larger_common_plan=False), "SWP-001")
    assert f["status"] == status, f["message"]


@pytest.mark.parametrize("book", BOOKS)
def test_swp004_band_crossed_on_the_way_to_over_5_acres(tmp_path, book):
    # the largest point landing 250,000 sq ft: 0.23 acre as counted, 5.74 acres at the largest, which is
    # Condition B, not C; but a landing of a size between puts the activity in 1 to 5 acres: not a pass
    found = run(extended(tmp_path, book, 250_000), landings=frame([(Point(X0, Y0), "L1")]), larger_common_plan=False)
    f = one(found, "SWP-004")
    assert f["status"] == "not_evaluated", f["message"]
    assert "the activity would disturb 5.74 acres, reaching 1 acre" in f["message"]
    assert one(found, "SWP-003")["status"] == "not_evaluated"


def test_swp004_single_family_exclusion_lost_when_a_landing_would_join(tmp_path):
    # 2 acres of single-family construction: excluded from Condition C (pass). Landing L1 is a point 90 ft
    # east of it: the 10,000 sq ft disc (radius 56.4 ft) does not touch it, the 43,560 one (117.8 ft) does,
    # and a landing is of no excluded use
    d = frame([(square(2), "H1", "single_family")], ("id", "use"))
    east = X0 + math.sqrt(2 * SQFT)
    point = frame([(Point(east + 90, Y0 + 50), "L1")])
    f = one(run(disturbance=d, landings=point, larger_common_plan=False), "SWP-004", "project")
    assert f["status"] == "not_evaluated", f["message"]
    assert "with footprints of no excluded use" in f["message"]
    assert "at that size landing L1 would touch the disturbance and count in the project" in f["message"]
    polygon = frame([(box(east + 90 - 50, Y0, east + 90 + 50, Y0 + 100), "L1")])  # 40 ft off: not touching
    assert one(run(disturbance=d, landings=polygon, larger_common_plan=False), "SWP-004", "project")["status"] == "pass"


# --------------------------------------------------------------------------------------------
# a landing that would touch the project: SWP-001 and SWP-007's "not required" (Vestal)


def test_landing_joining_the_project_at_its_largest_swp001_and_swp007():
    # a dated 0.6-acre project (under 1 acre, stated no larger common plan: SWPPP not required, and Vestal
    # inspects every land development activity only); landing L1 a point 90 ft east of it
    s = math.sqrt(0.6 * SQFT)
    d = frame([(square(0.6), "A", "2024-05-01", "2024-06-01")], ("id", "start", "stabilized"))
    point = frame([(Point(X0 + s + 90, Y0 + s / 2), "L1")])
    found = run(disturbance=d, landings=point, larger_common_plan=False)
    f1 = one(found, "SWP-001", "project")
    assert f1["status"] == "not_evaluated" and f1["measured"] == pytest.approx(0.6, abs=1e-6), f1["message"]
    assert_point_note(f1["message"])
    assert "landing L1 would touch the disturbance and count in the project" in f1["message"]
    f7 = one(found, "SWP-007", "schedule")
    assert f7["status"] == "not_evaluated", f7["message"]
    assert FIX in f7["message"]
    # 140 ft east (beyond the largest disc's 117.8 ft): the project's pass stands
    far = frame([(Point(X0 + s + 140, Y0 + s / 2), "L1")])
    found = run(disturbance=d, landings=far, larger_common_plan=False)
    assert one(found, "SWP-001", "project")["status"] == "pass"
    assert one(found, "SWP-007", "schedule")["status"] == "pass"


# --------------------------------------------------------------------------------------------
# SWP-005: the peak at 5 acres (more than 5 is over)


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("delta, status", [(-1.0, "pass"), (0.0, "pass"), (1.0, "review")])
def test_swp005_peak_with_point_landing_at_its_largest(book, delta, status):
    p = 5 * SQFT - LARGEST + delta
    lands = harvest(p, dates=("2024-05-01", "2024-06-01"))
    f = one(run(book, landings=lands, larger_common_plan=False), "SWP-005")
    assert f["status"] == status, f["message"]
    assert f["measured"] == pytest.approx((TYPICAL + p) / SQFT, abs=1e-6)  # the peak as counted
    if status == "review":
        assert_point_note(f["message"])
        assert "the peak would be 5.00 acres (2024-05-01 to 2024-05-31), more than 5 acres" in f["message"]
        assert "not shown to stay within it" in f["message"]
        # under an approved SWPPP a peak over the limit is lawful too: the pass stands
        ok = one(run(book, landings=lands, larger_common_plan=False, approved_swppp=True), "SWP-005")
        assert ok["status"] == "pass", ok["message"]
    drawn = harvest(p, point=False, dates=("2024-05-01", "2024-06-01"))
    assert one(run(book, landings=drawn, larger_common_plan=False), "SWP-005")["status"] == "pass"


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("delta, status", [(-1.0, "review"), (0.0, "review"), (1.0, "violation")])
def test_swp005_over_at_the_counted_size_stays_violation(book, delta, status):
    p = 5 * SQFT - TYPICAL + delta
    f = one(run(book, landings=harvest(p, dates=("2024-05-01", "2024-06-01")), larger_common_plan=False), "SWP-005")
    assert f["status"] == status, f["message"]


def test_swp005_landing_phased_apart_does_not_raise_the_peak():
    # the point landing disturbed in June, P (5 acres - 1,000 sq ft) in May: the peak is P alone at any size
    p = 5 * SQFT - 1_000
    lands = frame([(Point(X0, Y0), "L1", "2024-06-01", "2024-07-01"), (rect(p, 3000), "P", "2024-05-01", "2024-06-01")],
                  ("id", "start", "stabilized"))
    assert one(run(landings=lands, larger_common_plan=False), "SWP-005")["status"] == "pass"


# --------------------------------------------------------------------------------------------
# SWP-002: the flow paths from the landing at its largest (a DEM bowl, 5 ft deep, 600 ft in radius, the
# ground beyond it falling east to an impaired water 1,500 ft east of its centre)


@pytest.mark.parametrize("book", BOOKS)
def test_swp002_point_landing_at_its_largest_reaching_past_the_rim(tmp_path, book):
    # landing L1 a point 520 ft east of the bowl's centre: its 10,000 sq ft disc (to 576 ft) drains into
    # the bowl (a pass), the 43,560 one (to 638 ft) reaches past the rim, whose runoff flows to the water
    dem = ny_dem(tmp_path / "dem.tif", bowl, 10.0)
    water = frame([(LineString([(X0 + 1500, Y0 - 1500), (X0 + 1500, Y0 + 1500)]), "W1")])
    site = frame([(box(X0 - 100, Y0 - 100, X0 + 100, Y0 + 100), "A")])
    point = frame([(Point(X0 + 520, Y0), "L1")])
    found = run(book, disturbance=site, landings=point, dem=dem, waters=water, larger_common_plan=False)
    assert one(found, "SWP-002", "project")["status"] == "pass"
    f = one(found, "SWP-002", "landings and haul roads")
    assert f["status"] == "not_evaluated", f["message"]
    assert_point_note(f["message"])
    assert "the finding would be review: the downslope flow path" in f["message"]
    drawn = frame([(box(X0 + 470, Y0 - 50, X0 + 570, Y0 + 50), "L1")])
    found = run(book, disturbance=site, landings=drawn, dem=dem, waters=water, larger_common_plan=False)
    assert one(found, "SWP-002", "landings and haul roads")["status"] == "pass"


def test_lockport_swp007_conditions_undecided_by_a_point_landing(tmp_path):
    # Lockport inspects only under Conditions A, B, C. The 0.92-acre project in the bowl: A does not apply
    # (its paths end in the bowl), nor B, nor C (under 1 acre): "not required". Landing L1, a point 90 ft
    # east of it, would touch it at 1 acre and bring it to 1 acre or more: Condition C undecided
    dem = ny_dem(tmp_path / "dem.tif", bowl, 10.0)
    water = frame([(LineString([(X0 + 1500, Y0 - 1500), (X0 + 1500, Y0 + 1500)]), "W1")])
    site = frame([(box(X0 - 100, Y0 - 100, X0 + 100, Y0 + 100), "A", "2024-05-01", "2024-06-01")],
                 ("id", "start", "stabilized"))
    drawn = frame([(box(X0 + 140, Y0 - 50, X0 + 240, Y0 + 50), "L1")])  # 40 ft off the project
    found = run("lockport", disturbance=site, landings=drawn, dem=dem, waters=water, larger_common_plan=False)
    assert one(found, "SWP-007", "schedule")["status"] == "pass"
    point = frame([(Point(X0 + 190, Y0), "L1")])
    found = run("lockport", disturbance=site, landings=point, dem=dem, waters=water, larger_common_plan=False)
    f = one(found, "SWP-007", "schedule")
    assert f["status"] == "not_evaluated", f["message"]
    assert "Condition C" in f["message"] and "could not be decided" in f["message"]
    assert one(found, "SWP-004", "project")["status"] == "not_evaluated"
    assert one(found, "SWP-002", "project")["status"] == "pass"  # at 1 acre still inside the bowl


def test_swp005_peak_not_measurable_with_the_landing_joined_is_review():
    # the dated project (2 acres, May 2024, peak under 5: a pass) and landing L1, a point 90 ft east of it
    # stabilised in 2023: at 1 acre it would touch the project, whose span begins after it, so the peak
    # with it cannot be measured: review, not pass (and not a stopped run)
    s = math.sqrt(2 * SQFT)
    d = frame([(square(2), "A", "2024-05-01", "2024-06-01")], ("id", "start", "stabilized"))
    point = frame([(Point(X0 + s + 90, Y0 + s / 2), "L1", None, "2023-06-01")], ("id", "start", "stabilized"))
    f = one(run(disturbance=d, landings=point, larger_common_plan=False), "SWP-005", "project")
    assert f["status"] == "review", f["message"]
    assert f["measured"] == pytest.approx(2.0, abs=1e-6)
    assert "the peak could not be measured" in f["message"] and FIX in f["message"]
    far = frame([(Point(X0 + s + 140, Y0 + s / 2), "L1", None, "2023-06-01")], ("id", "start", "stabilized"))
    assert one(run(disturbance=d, landings=far, larger_common_plan=False), "SWP-005", "project")["status"] == "pass"
