"""A haul road mapped as a line is no promise about its width (SWP-001..006), and round-24 fixes.

The stormwater rules count a haul road mapped as a line as a strip of SWP-006's ``haul_road_width_ft``
(12 ft), about a truck's travel way; with its ditches and cut and fill slopes a haul road clears more.
As for landings mapped as points (tests/test_stormwater_audit23.py), a pass resting on the acreage is
given only where every haul road at ``max_haul_road_width_ft`` (30 ft) gives the same outcome, together
with every point landing at ``max_point_landing_area_sqft``; otherwise ``not_evaluated`` (SWP-005:
``review``) naming the roads, both widths and the fix. A haul road lying wholly within the disturbance
polygons is measured as they are drawn. A rulebook whose largest size is under the size counted is
refused when it loads. Also: a MultiPoint landing's sizes per point and in all; SWP-006's logging
finding says what its acreage would be at the larger sizes; the stormwater ``*_at`` functions refuse an
index naming no site with a ValueError (not an ``assert``, gone under ``python -O``); a flow trace is
made once for the same DEM and site.

Geometry in NY Central (US ft) near Vestal. A straight haul road of length L buffered with flat ends
is exactly L x W sq ft (12 L as counted, 30 L at the widest); a point landing's disc is exactly the area
counted (a 64-gon of that area). Features are placed apart so nothing overlaps unless said. Thresholds
are tested at, 1 sq ft under and 1 sq ft over (1 sq ft = 2.3e-5 acre, over the 1e-6-acre tolerance);
areas compared to 1e-6 acre.
"""

from __future__ import annotations

import math
from pathlib import Path

import geopandas as gpd
import pytest
from common import NY_FT, X0, Y0
from shapely.geometry import LineString, MultiPoint, Point, box
from test_flow_resolution import bowl, ny_dem

from geoconstraints.commands import check_stormwater
from geoconstraints.errors import RulebookError
from geoconstraints.geometry.phasing import harvest_footprints
from geoconstraints.io.layers import load_layers
from geoconstraints.rulebook.loader import load_rulebook

SQFT = 43_560.0
WIDTH, WIDEST = 12.0, 30.0
BOOKS = ("vestal", "lockport")
ROAD_FIX = "map the road's cleared width (a disturbance polygon holding the line)"


def frame(rows: list[tuple], cols: tuple[str, ...] = ("id",)) -> gpd.GeoDataFrame:
    """Rows of (geometry, *values of ``cols``)."""
    return gpd.GeoDataFrame({c: [r[k + 1] for r in rows] for k, c in enumerate(cols)},
                            geometry=[r[0] for r in rows], crs=NY_FT)


def road(length: float, dx: float = 0.0, dy: float = 0.0, fid: str = "H1") -> gpd.GeoDataFrame:
    """Haul road ``fid``: a straight east-west line of ``length`` ft from (X0 + dx, Y0 + dy)."""
    return frame([(LineString([(X0 + dx, Y0 + dy), (X0 + dx + length, Y0 + dy)]), fid)])


def run(book: str | Path = "vestal", *, disturbance=None, landings=None, haul_roads=None, dem=None, waters=None,
        **kw):
    layers = load_layers(disturbance=disturbance, landings=landings, haul_roads=haul_roads, impaired_waters=waters,
                         dem=dem, primary=("disturbance", "landings", "haul_roads"))
    return check_stormwater(layers, load_rulebook(book), **kw).findings


def one(findings, rid: str, subject: str | None = None):
    f = findings[findings["rule_id"] == rid]
    if subject is not None:
        f = f[f["subject_id"] == subject]
    assert len(f) == 1, f[["rule_id", "subject_id", "status"]]
    return f.iloc[0]


def extended(tmp_path: Path, book: str, **thresholds: float) -> Path:
    y = tmp_path / f"{book}-{'-'.join(f'{k}{v:g}' for k, v in thresholds.items())}.yaml"
    body = ", ".join(f"{k}: {v!r}" for k, v in thresholds.items())
    y.write_text(f"extends: {book}\nrules:\n  - id: SWP-006\n    thresholds: {{{body}}}\n")
    return y


def assert_road_note(msg: str, length: str) -> None:
    assert (f"haul road H1 ({length} ft) is mapped as a line, counted as a strip 12 ft wide (haul_road_width_ft)"
            in msg), msg
    assert "at up to 30 ft wide (max_haul_road_width_ft)" in msg, msg
    assert ROAD_FIX in msg, msg


# --------------------------------------------------------------------------------------------
# the widths, and the refusal when a rulebook loads


@pytest.mark.parametrize("book", BOOKS)
def test_rulebooks_give_the_widest_haul_road_30_ft(book):
    from geoconstraints.rules.stormwater import haul_road_widths

    sw6 = load_rulebook(book)["SWP-006"]
    assert haul_road_widths(sw6) == (WIDTH, WIDEST)
    assert "max_haul_road_width_ft" in sw6.notes and "rulebook choice, not law" in sw6.notes
    # a 2,000-ft road: 2,000 x 12 = 24,000 sq ft = 0.551 acre; 2,000 x 30 = 60,000 sq ft = 1.377 acres
    for w, acres in ((WIDTH, 24_000 / SQFT), (WIDEST, 60_000 / SQFT)):
        fp = harvest_footprints(None, road(2_000).rename(columns={"id": "feature_id"}), haul_road_width_ft=w,
                                default_landing_area_sqft=10_000)
        assert float(fp["acres"].iloc[0]) == pytest.approx(acres, abs=1e-6)


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("widest, refused", [(11.99, True), (12.0, False), (12.01, False)])
def test_widest_under_the_counted_width_is_refused_at_load(tmp_path, book, widest, refused):
    path = extended(tmp_path, book, max_haul_road_width_ft=widest)
    if refused:
        with pytest.raises(RulebookError, match="max_haul_road_width_ft .11.99. is under haul_road_width_ft .12."):
            load_rulebook(path)  # no check run: the rulebook itself is refused
    else:
        assert load_rulebook(path)["SWP-006"].t("max_haul_road_width_ft") == widest


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("largest, refused", [(9_999.0, True), (10_000.0, False), (10_001.0, False)])
def test_largest_point_landing_under_the_counted_area_is_refused_at_load(tmp_path, book, largest, refused):
    path = extended(tmp_path, book, max_point_landing_area_sqft=largest)
    if refused:
        with pytest.raises(RulebookError, match="max_point_landing_area_sqft .9,999. is under default_landing_area_sqft"):
            load_rulebook(path)
    else:
        load_rulebook(path)


def test_widest_equal_to_the_counted_width_grows_nothing(tmp_path):
    # max 12 ft = the width counted: nothing is a guess, the pass of a 3,600-ft road (43,200 sq ft at
    # 12 ft, 0.992 acre) stands; at 12.01 ft it is 43,236 sq ft, still under 1 acre: it stands too
    for widest in (12.0, 12.01):
        found = run(extended(tmp_path, "vestal", max_haul_road_width_ft=widest), haul_roads=road(3_600),
                    larger_common_plan=False)
        assert one(found, "SWP-001")["status"] == "pass"


# --------------------------------------------------------------------------------------------
# SWP-001 and SWP-004 at 1 acre, SWP-003 at 5 acres


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("delta, status", [(-1.0, "pass"), (0.0, "not_evaluated"), (1.0, "not_evaluated")])
def test_swp001_swp004_haul_road_at_its_widest_reaching_1_acre(book, delta, status):
    # a road of L = (43,560 + delta) / 30 ft: 30 L = 1 acre + delta sq ft; as counted 12 L = 0.4 acre + ...
    length = (SQFT + delta) / WIDEST
    found = run(book, haul_roads=road(length), larger_common_plan=False)
    for rid in ("SWP-001", "SWP-004"):
        f = one(found, rid)
        assert f["status"] == status, (rid, f["message"])
        assert f["measured"] == pytest.approx(WIDTH * length / SQFT, abs=1e-6)  # the acreage as counted
        if status == "not_evaluated":
            assert_road_note(f["message"], "1,452")  # 43,559 / 30 to 43,561 / 30 = 1,451.97 to 1,452.03 ft
        else:
            assert "mapped as a line" not in f["message"]
    if status == "not_evaluated":
        assert "the activity would disturb 1.00 acres, at least 1 acre" in one(found, "SWP-001")["message"]


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("delta, status", [(-1.0, "pass"), (0.0, "not_evaluated"), (1.0, "not_evaluated")])
def test_swp003_haul_road_at_its_widest_reaching_5_acres(book, delta, status):
    # 30 L = 5 acres + delta: L = (217,800 + delta) / 30 = 7,260 ft; as counted 12 L = 2 acres
    length = (5 * SQFT + delta) / WIDEST
    f = one(run(book, haul_roads=road(length), larger_common_plan=False), "SWP-003")
    assert f["status"] == status, f["message"]
    assert f["measured"] == pytest.approx(WIDTH * length / SQFT, abs=1e-6)
    if status == "not_evaluated":
        assert_road_note(f["message"], "7,260")
        assert "the activity would disturb 5.00 acres, at least 5 acres" in f["message"]


@pytest.mark.parametrize("book", BOOKS)
def test_point_landing_and_haul_road_grown_together(book):
    # landing L1 a point (10,000 sq ft as counted, 43,560 at the largest) and road H1 of 400 ft (4,800 sq ft
    # at 12 ft, 12,000 at 30 ft) 3,000 ft east: 14,800 sq ft as counted (0.340 acre); 55,560 at the
    # largest (1.2755 acres): the finding names both, with both sizes of each
    found = run(book, landings=frame([(Point(X0, Y0), "L1")]), haul_roads=road(400, dx=3_000),
                larger_common_plan=False)
    f = one(found, "SWP-001")
    assert f["status"] == "not_evaluated", f["message"]
    assert f["measured"] == pytest.approx(14_800 / SQFT, abs=1e-6)
    msg = f["message"]
    assert "landing L1 is mapped as a point, counted as 10,000 sq ft (default_landing_area_sqft)" in msg, msg
    assert "haul road H1 (400 ft) is mapped as a line, counted as a strip 12 ft wide" in msg, msg
    assert ("at up to 43,560 sq ft (max_point_landing_area_sqft) and 30 ft wide (max_haul_road_width_ft) the "
            "activity would disturb 1.28 acres") in msg, msg
    assert "map the landing's extent (a polygon) and the road's cleared width" in msg, msg


# --------------------------------------------------------------------------------------------
# a haul road within the disturbance polygons is measured as they are drawn


def test_haul_road_within_a_disturbance_polygon_is_measured_as_drawn():
    # road H1 of 1,800 ft: 21,600 sq ft at 12 ft (0.496 acre), 54,000 at 30 ft (1.240 acres)
    alone = run(haul_roads=road(1_800), larger_common_plan=False)
    f = one(alone, "SWP-001")
    assert f["status"] == "not_evaluated", f["message"]
    assert_road_note(f["message"], "1,800")
    # its clearing drawn as a disturbance polygon 20 ft wide holding it: 1,800 x 20 = 36,000 sq ft, 0.826 acre,
    # whatever the road's own width: a pass
    cleared = frame([(box(X0, Y0 - 10, X0 + 1_800, Y0 + 10), "D1")])
    f = one(run(disturbance=cleared, haul_roads=road(1_800), larger_common_plan=False), "SWP-001", "project")
    assert f["status"] == "pass", f["message"]
    assert f["measured"] == pytest.approx(36_000 / SQFT, abs=1e-6)
    # the polygon stops 100 ft short of the road's end: the road is not wholly inside and is counted at 30 ft
    # too: 1,700 x 20 + 100 x 12 = 35,200 sq ft as counted (a pass as counted); 1,800 x 30 = 54,000 at 30 ft
    short = frame([(box(X0, Y0 - 10, X0 + 1_700, Y0 + 10), "D1")])
    f = one(run(disturbance=short, haul_roads=road(1_800), larger_common_plan=False), "SWP-001", "project")
    assert f["measured"] == pytest.approx(35_200 / SQFT, abs=1e-6)
    assert f["status"] == "not_evaluated", f["message"]
    assert "the activity would disturb 1.24 acres" in f["message"]


# --------------------------------------------------------------------------------------------
# SWP-005: the peak with the roads at their widest


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("delta, status", [(-1.0, "pass"), (0.0, "pass"), (1.0, "review")])
def test_swp005_peak_with_haul_road_at_its_widest(book, delta, status):
    # a dated road of L = (5 acres + delta) / 30 ft: the peak 30 L more than 5 acres only for delta > 0
    length = (5 * SQFT + delta) / WIDEST
    roads = frame([(LineString([(X0, Y0), (X0 + length, Y0)]), "H1", "2024-05-01", "2024-06-01")],
                  ("id", "start", "stabilized"))
    f = one(run(book, haul_roads=roads, larger_common_plan=False), "SWP-005")
    assert f["status"] == status, f["message"]
    assert f["measured"] == pytest.approx(WIDTH * length / SQFT, abs=1e-6)
    if status == "review":
        assert_road_note(f["message"], "7,260")
        assert "the peak would be 5.00 acres (2024-05-01 to 2024-05-31), more than 5 acres" in f["message"]


# --------------------------------------------------------------------------------------------
# a landing mapped as several points: the sizes per point and in all


def test_multipoint_landing_sizes_per_point_and_in_all():
    # landing L2: 3 points 1,000 ft apart (discs of 56.4 ft / 117.8 ft radius do not overlap): counted
    # 3 x 10,000 = 30,000 sq ft, at the largest 3 x 43,560 = 130,680 sq ft (3.0 acres: past 1 acre)
    pts = MultiPoint([(X0, Y0), (X0 + 1_000, Y0), (X0 + 2_000, Y0)])
    f = one(run(landings=frame([(pts, "L2")]), larger_common_plan=False), "SWP-001")
    assert f["status"] == "not_evaluated", f["message"]
    assert f["measured"] == pytest.approx(30_000 / SQFT, abs=1e-6)
    msg = f["message"]
    assert ("landing L2 is mapped as 3 points, counted as 10,000 sq ft per point, 30,000 sq ft in all "
            "(default_landing_area_sqft)") in msg, msg
    assert "at up to 43,560 sq ft per point, 130,680 sq ft in all (max_point_landing_area_sqft)" in msg, msg
    assert "the activity would disturb 3.00 acres" in msg, msg
    # with a point landing beside it: "per point", L2's totals in the brackets
    both = frame([(pts, "L2"), (Point(X0, Y0 + 3_000), "L1")])
    msg = one(run(landings=both, larger_common_plan=False), "SWP-001")["message"]
    assert ("landings L2, L1 are mapped as points, counted as 10,000 sq ft per point (default_landing_area_sqft; "
            "L2 is 3 points, 30,000 sq ft in all)") in msg, msg
    assert "at up to 43,560 sq ft per point (max_point_landing_area_sqft; L2 130,680 sq ft in all)" in msg, msg


# --------------------------------------------------------------------------------------------
# SWP-006's logging finding says what its acreage rests on


@pytest.mark.parametrize("book", BOOKS)
def test_swp006_logging_finding_names_the_grown_footprints(book):
    # road H1 of 2,000 ft: 0.551 acre as counted, 60,000 sq ft = 1.377 acres at 30 ft
    f = one(run(book, haul_roads=road(2_000), larger_common_plan=False), "SWP-006", "logging")
    assert f["measured"] == pytest.approx(24_000 / SQFT, abs=1e-6)
    assert_road_note(f["message"], "2,000")
    assert "they would disturb 1.38 acres, not 0.55" in f["message"], f["message"]
    # a point landing too: 10,000 + 24,000 = 34,000 as counted (0.78); 43,560 + 60,000 = 103,560 (2.38)
    f = one(run(book, landings=frame([(Point(X0, Y0 + 3_000), "L1")]), haul_roads=road(2_000),
                larger_common_plan=False), "SWP-006", "logging")
    assert "landing L1 is mapped as a point" in f["message"], f["message"]
    assert "they would disturb 2.38 acres, not 0.78" in f["message"], f["message"]
    # a landing drawn as a polygon and no road: nothing rests on a guess, nothing said
    drawn = frame([(box(X0, Y0, X0 + 100, Y0 + 100), "L1")])
    f = one(run(book, landings=drawn, larger_common_plan=False), "SWP-006", "logging")
    assert "would disturb" not in f["message"] and "mapped as" not in f["message"], f["message"]


# --------------------------------------------------------------------------------------------
# the *_at functions: an index naming no site is refused (not an assert, gone under python -O)


def test_at_functions_refuse_an_index_naming_no_site():
    from geoconstraints.rules.stormwater import (
        StormwaterContext,
        condition_a,
        condition_b_at,
        condition_c_at,
        land_development_at,
    )

    layers = load_layers(landings=frame([(Point(X0, Y0), "L1")]), primary=("landings",))
    rb = load_rulebook("vestal")
    fp = harvest_footprints(layers.get_layer("landings"), None, haul_road_width_ft=12, default_landing_area_sqft=10_000)
    ctx = StormwaterContext(layers=layers, rulebook=rb, disturbance=None, footprints=fp, sites=())
    for fn, rid in ((land_development_at, "SWP-001"), (condition_b_at, "SWP-003"), (condition_c_at, "SWP-004"),
                    (condition_a, "SWP-002")):
        for k in (None, 0, 3):
            with pytest.raises(ValueError, match="is not one of the 0 site"):
                fn(ctx, rb[rid], k)


# --------------------------------------------------------------------------------------------
# speed: one trace per DEM and site


def test_a_site_grown_to_the_same_shape_is_not_traced_again(tmp_path, monkeypatch):
    # the project, 300 ft square in the middle of the bowl (its paths end in the bowl: a pass); landing L1 a
    # point at its centre: its disc at the largest (117.8 ft radius) stays inside the square (150 ft to its
    # sides), so the site measured again is the same land and drains the same way
    import geoconstraints.rules.stormwater as sw

    def traced_again(*_a, **_k):
        raise AssertionError("the grown site was traced again")

    monkeypatch.setattr(sw, "site_flow", traced_again)  # condition_a's; the command holds its own name
    dem = ny_dem(tmp_path / "dem.tif", bowl, 10.0)
    water = frame([(LineString([(X0 + 1500, Y0 - 1500), (X0 + 1500, Y0 + 1500)]), "W1")])
    site = frame([(box(X0 - 150, Y0 - 150, X0 + 150, Y0 + 150), "A")])
    found = run(disturbance=site, landings=frame([(Point(X0, Y0), "L1")]), dem=dem, waters=water,
                larger_common_plan=False)
    f = one(found, "SWP-002", "project")
    assert f["status"] == "pass", f["message"]  # traced once, by the command


def test_the_same_trace_is_made_once(tmp_path):
    from geoconstraints.geometry.flow import trace_flow
    from geoconstraints.io.dem import open_dem

    dem = open_dem(ny_dem(tmp_path / "dem.tif", bowl, 10.0), z_units="ft")
    water = [LineString([(X0 + 1500, Y0 - 1500), (X0 + 1500, Y0 + 1500)])]
    src = box(X0 - 100, Y0 - 100, X0 + 100, Y0 + 100)
    a = trace_flow(dem, src, water, NY_FT, max_length_ft=5_280, min_depression_depth_ft=1.0)
    b = trace_flow(dem, box(X0 - 100, Y0 - 100, X0 + 100, Y0 + 100), list(water), NY_FT, max_length_ft=5_280,
                   min_depression_depth_ft=1.0)
    assert b is a and a.outcome == "pit"
    # another depth, another source, or the DEM opened again: traced anew
    assert trace_flow(dem, src, water, NY_FT, max_length_ft=5_280, min_depression_depth_ft=0.0) is not a
    assert trace_flow(dem, box(X0 - 90, Y0 - 100, X0 + 100, Y0 + 100), water, NY_FT, max_length_ft=5_280,
                      min_depression_depth_ft=1.0) is not a
    again = open_dem(dem.path, z_units="ft")
    c = trace_flow(again, src, water, NY_FT, max_length_ft=5_280, min_depression_depth_ft=1.0)
    assert c is not a and c.outcome == a.outcome and c.length_ft == a.length_ft
    assert math.isfinite(a.length_ft)
