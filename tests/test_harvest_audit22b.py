"""Harvest rules, audit round 22 (b): passes the inputs could not promise (each test failed before its
fix). HRV-013: a stream mapped with a break at a road (no line meets the road, yet the stream crosses
it) passed as "no stream crossing". HRV-002: contours drawn from a DEM far coarser than the contour
interval were element b, shown, with no word of the cell size. The scene is test_harvest's
hand-checkable plan (local feet, shifted to Vestal)."""

from __future__ import annotations

import pytest
from common import X0, Y0
from pyproj import CRS
from shapely.geometry import LineString, MultiLineString, box
from test_harvest import layer, one, scene, write_dem

from geoconstraints.commands import check_harvest
from geoconstraints.io.dem import open_dem
from geoconstraints.io.layers import Layers
from geoconstraints.rulebook.loader import load_rulebook


@pytest.fixture(scope="module")
def vestal():
    return load_rulebook("vestal")


# ------------------------------------------------------------------------------------------
# HRV-013 (§ 44-VI-6(F)(3): "All streams shall be crossed in accordance with ..."): a stream line that
# stops short of a haul road or skid trail, the culvert not digitised, is a possible crossing: review,
# never "no stream crossing". stream_end_distance_ft = 50 from the road's line.

S12 = [LineString([(200, -100), (200, 1100)]), LineString([(800, -100), (800, 1100)])]
"""The scene's streams S1 (perennial, u = 200) and S2 (intermittent, u = 800)."""

HR9 = layer(["HR9"], [LineString([(1100, 900), (1300, 900)])])
"""A haul road along v = 900 from u = 1100 to 1300, 200 ft long."""


def streams(ids, geoms, kinds=None):
    """S1 and S2 of the scene and ``geoms`` (perennial unless ``kinds``)."""
    return layer(["S1", "S2", *ids], [*S12, *geoms],
                 kind=["perennial", "intermittent", *(kinds or ["perennial"] * len(ids))])


def broken_at(v: float, d: float) -> list[LineString]:
    """A stream along u = 1200 stopping ``d`` ft short of the line v = ``v`` on each side."""
    return [LineString([(1200, 0), (1200, v - d)]), LineString([(1200, v + d), (1200, 1000)])]


def test_a_stream_broken_at_a_haul_road_is_a_possible_crossing_not_a_pass(vestal) -> None:
    # S3a runs up u = 1200 to v = 880, S3b on from v = 920: 20 ft either side of HR9 (v = 900), no line
    # meets it. Before: "no stream crossing", pass. Now one review at the road across from the gap,
    # (1200, 900), 100 ft along HR9, naming both lines, each end's distance, the 40-ft gap and the check
    res = check_harvest(scene(streams=streams(["S3a", "S3b"], broken_at(900, 20)), haul_roads=HR9), vestal)
    f = one(res, "HRV-013", "HR9")
    assert f["status"] == "review"
    m = f["message"]
    assert "possible crossing the stream map leaves out" in m and "S3a (perennial)" in m and "S3b (perennial)" in m
    assert "20.0 ft from it on one side" in m and "a gap of 40.0 ft across it" in m and "culvert or bridge" in m
    assert (f.geometry.x - X0, f.geometry.y - Y0) == pytest.approx((1200.0, 900.0))
    assert f["measured"] == pytest.approx(100.0) and f["unit"] == "ft"


@pytest.mark.parametrize("d, status", [(49.99, "review"), (50.0, "review"), (50.01, "pass")])
def test_stream_end_distance_at_just_under_and_just_over_50_ft(vestal, d, status) -> None:
    # each line stops d ft from HR9's line: within stream_end_distance_ft (50, the limit included) a possible
    # crossing; beyond it the map's own ends of two streams, and the pass says what it examined
    res = check_harvest(scene(streams=streams(["S3a", "S3b"], broken_at(900, d)), haul_roads=HR9), vestal)
    f = one(res, "HRV-013", "HR9")
    assert f["status"] == status
    if status == "review":
        assert f"{d:,.1f} ft from it on one side" in f["message"] and f"{2 * d:,.1f} ft across it" in f["message"]
    else:
        assert "no stream line stops within 50 ft of it" in f["message"]


def test_a_multi_part_stream_broken_at_a_skid_trail_resumes_across_it(vestal) -> None:
    # one feature S3 in two parts, 15 ft short of skid trail T9 (v = 600) on the south, 35 ft on the north:
    # one gap of 50 ft; the skid trail is a plan line too (a ford or a culvert not mapped)
    s3 = MultiLineString([[(1200, 0), (1200, 585)], [(1200, 635), (1200, 1000)]])
    trails = layer(["T9"], [LineString([(1100, 600), (1300, 600)])])
    res = check_harvest(scene(streams=streams(["S3"], [s3]), skid_trails=trails), vestal)
    f = one(res, "HRV-013", "T9")
    assert f["status"] == "review" and "stream S3 (perennial) stops 15.0 ft from it on one side and resumes 35.0 ft" \
        in f["message"] and "a gap of 50.0 ft" in f["message"]


def test_a_stream_stopping_short_of_a_road_on_one_side_only_is_a_possible_crossing(vestal) -> None:
    # S3 (intermittent, listed by include_intermittent) stops 30 ft south of HR9 and nothing is mapped north:
    # it may run on under the road unmapped, or truly end there; the ground tells
    res = check_harvest(scene(streams=streams(["S3"], [LineString([(1200, 0), (1200, 870)])], ["intermittent"]),
                              haul_roads=HR9), vestal)
    f = one(res, "HRV-013", "HR9")
    assert f["status"] == "review" and "stream S3 (intermittent) stops 30.0 ft from it, touching no other stream line" \
        in f["message"] and "truly ends there" in f["message"]


def test_real_stream_ends_junctions_and_mapped_crossings_are_not_gaps(vestal) -> None:
    # S3 stops 300 ft south of HR9 (a real end: far from every road); S4, a tributary, joins S1 at
    # (200, 530), 30 ft from HR2's crossing of S1 (v = 500): its end touches S1, a junction, not a gap;
    # S5 crosses HR9 at u = 1250 and stops 20 ft beyond it: the crossing is mapped and listed, once; S6
    # is ephemeral (not a stream under the law) and stops 10 ft from HR9: not listed. HR8 ends 10 ft short
    # of S3 with S3's ends 300 ft off: it passes, saying what it examined (before: no word of stream ends)
    geoms = [LineString([(1150, 0), (1150, 600)]), LineString([(260, 560), (200, 530)]),
             LineString([(1250, 0), (1250, 920)]), LineString([(1280, 0), (1280, 890)])]
    res = check_harvest(scene(streams=streams(["S3", "S4", "S5", "S6"], geoms,
                                              ["perennial", "perennial", "perennial", "ephemeral"]),
                              haul_roads=layer(["HR2", "HR9", "HR8"], [LineString([(220, 500), (100, 500)]),
                                                                       LineString([(1100, 900), (1300, 900)]),
                                                                       LineString([(1100, 300), (1140, 300)])])),
                        vestal)
    hr2, hr9 = one(res, "HRV-013", "HR2"), one(res, "HRV-013", "HR9")
    assert hr2["status"] == hr9["status"] == "review"
    assert "crossing of stream S1" in hr2["message"] and "crossing of stream S5" in hr9["message"]
    assert "possible crossing" not in hr2["message"] + hr9["message"]
    hr8 = one(res, "HRV-013", "HR8")
    assert hr8["status"] == "pass" and "no stream line stops within 50 ft of it" in hr8["message"]


def test_a_stream_line_ending_in_a_stream_polygon_beside_a_road_is_a_junction(vestal) -> None:
    # S3 flows from (1350, 500) into the river polygon RV ([1100, 1300] x [800, 860]) at (1250, 860), 40 ft
    # south of HR9 (v = 900): its end touches another stream, a junction, not a gap (pass). Without RV the
    # same end is a stream stopping 40 ft from the road (review)
    s3 = LineString([(1350, 500), (1250, 860)])
    res = check_harvest(scene(streams=streams(["S3", "RV"], [s3, box(1100, 800, 1300, 860)]), haul_roads=HR9), vestal)
    assert one(res, "HRV-013", "HR9")["status"] == "pass"
    res = check_harvest(scene(streams=streams(["S3"], [s3]), haul_roads=HR9), vestal)
    f = one(res, "HRV-013", "HR9")
    assert f["status"] == "review" and "stream S3 (perennial) stops 40.0 ft from it" in f["message"]


def test_the_field_file_places_a_possible_crossing(vestal) -> None:
    # a possible crossing is a place to go and look: a point of the field files (kind stream_crossing)
    from geoconstraints.output.field import field_points

    res = check_harvest(scene(streams=streams(["S3a", "S3b"], broken_at(900, 20)), haul_roads=HR9), vestal)
    pts = field_points(res)
    x = pts[(pts["kind"] == "stream_crossing") & pts["description"].str.contains("HR9")]
    assert len(x) == 1 and "possible crossing" in x.iloc[0]["description"]


# ------------------------------------------------------------------------------------------
# HRV-002 element b (§ 44-VI-6(E)(4)b: "land contours at intervals of 10 feet or less"): contours drawn
# from DEM cells over max_dem_cell_ft (40: 10-ft contours on a 25 % slope lie 40 ft apart) are the grid's,
# not a site survey: not_evaluated, saying the cell size; within it the info says the cell size too


def _element_b(tmp_path, vestal, cell: float, bounds=(-300, -300, 1300, 1300)):
    p = write_dem(tmp_path / "plane.tif", lambda u, v: 1000 + 0.10 * u, bounds=bounds, cell=cell)
    lay = Layers(frames={"harvest_area": layer(["H"], [box(0, 0, 1000, 1000)])}, crs=CRS.from_user_input("EPSG:2261"),
                 dem=open_dem(p))
    res = check_harvest(lay, vestal)
    assert len(res.derived["contours"])  # contours are drawn either way
    return res, one(res, "HRV-002", "b")


def test_contours_from_1000_ft_cells_are_not_the_site_plans_contours(tmp_path, vestal) -> None:
    # the sample's ground averaged into 1,000-ft cells: a 3 x 3 grid draws 10-ft lines between elevations
    # 1,000 ft apart. Before: info ("contour levels at 10 ft derived from the DEM"), as if element b were
    # shown; now not_evaluated with the cell size, the limit, "not a site survey" and the fix
    res, b = _element_b(tmp_path, vestal, 1000.0, bounds=(-1000, -1000, 2000, 2000))
    assert b["status"] == "not_evaluated"
    m = b["message"]
    assert "DEM cells of 1,000.0 ft, coarser than the 40 ft limit (max_dem_cell_ft)" in m
    assert "not a site survey" in m and "surveyed contours" in m and "3DEP" in m
    # the site plan lists element b as not supplied, pointing to the finding
    from geoconstraints.output.siteplan import load_frames, prepare_plan

    plan = prepare_plan(res, 500.0)
    load_frames(plan, plan.extent)
    missing = {el.key: miss for el, _, miss in plan.elements}
    assert missing["b"] == ["see HRV-002 b"]


@pytest.mark.parametrize("cell, status", [(39.9, "info"), (40.0, "info"), (40.1, "not_evaluated")])
def test_contour_dem_cell_at_just_under_and_just_over_40_ft(tmp_path, vestal, cell, status) -> None:
    # cells of 39.9 and 40 (US survey) ft are within max_dem_cell_ft (40; a grid in US survey feet at the
    # limit is within it), 40.1 ft is over; either way the finding says the cell size
    _, b = _element_b(tmp_path, vestal, cell)
    assert b["status"] == status
    if status == "info":
        assert f"derived from the DEM's {cell:,.1f}-ft cells" in b["message"]
    else:
        assert "DEM cells of 40.1 ft, coarser than the 40 ft limit" in b["message"]
