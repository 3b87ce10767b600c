"""Harvest rules, audit round 23: HRV-013 passes the stream map could not promise, and a finding that
said something untrue (each test failed before its fix).

- A stream mapped as a polygon (a river, bank to bank) broken at a bridge or culvert (stopping short of
  the road on one side or both) passed as "no stream crossing": a polygon's end facing a haul road or
  skid trail within stream_end_distance_ft (50) is now a possible crossing, like a stream line's end.
  A polygon's bank along a road, a bend of it near a road, a polygon far from every road and a polygon
  the road enters (a mapped crossing) give no new finding.
- A stream line ending exactly on a road read as a run "inside a channel 0.0 ft wide" (the flat end of
  the widened line): it is the stream ending on the road, a possible crossing; a skid trail across that
  end is no skidding in the channel (HRV-012 had counted 10 ft).

The scene is test_harvest's hand-checkable plan (local feet, shifted to Vestal).
"""

from __future__ import annotations

import pytest
from common import X0, Y0
from shapely.geometry import LineString, Point, Polygon, box
from test_harvest import layer, one, pick, scene
from test_harvest_audit22b import HR9, streams

from geoconstraints.commands import check_harvest
from geoconstraints.output.field import field_points
from geoconstraints.rulebook.loader import load_rulebook


@pytest.fixture(scope="module")
def vestal():
    return load_rulebook("vestal")


def hr9(vestal, geoms, ids=None, **over):
    """HRV-013's finding on HR9 (v = 900, u 1100..1300) with the scene's streams and ``geoms`` (perennial)."""
    ids = ids or [f"RV{k}" for k in range(len(geoms))]
    res = check_harvest(scene(streams=streams(ids, geoms), haul_roads=HR9, **over), vestal)
    return res, one(res, "HRV-013", "HR9")


# ------------------------------------------------------------------------------------------
# HRV-013: a stream polygon's end facing a road within stream_end_distance_ft (50) is a possible crossing


def test_a_river_polygon_broken_at_a_haul_road_is_a_possible_crossing_not_a_pass(vestal) -> None:
    # the river RVa ([1150, 1250] x [0, 880]) stops 20 ft south of HR9, RVb ([1150, 1250] x [920, 1500]) goes on
    # 20 ft north of it: a bridge not mapped. Before: "no stream crossing", pass. Now one review at the road
    # across from the ends' middles (1200, 880) and (1200, 920): (1200, 900), 100 ft along HR9, a 40-ft gap
    _, f = hr9(vestal, [box(1150, 0, 1250, 880), box(1150, 920, 1250, 1500)], ["RVa", "RVb"])
    assert f["status"] == "review"
    m = f["message"]
    assert "possible crossing the stream map leaves out" in m and "culvert or bridge" in m
    assert "stream RVa (perennial, its polygon ending bank to bank) stops 20.0 ft from it on one side" in m
    assert "stream RVb (perennial, its polygon ending bank to bank) stops 20.0 ft from it on the other" in m
    assert "a gap of 40.0 ft across it" in m
    assert (f.geometry.x - X0, f.geometry.y - Y0) == pytest.approx((1200.0, 900.0))
    assert f["measured"] == pytest.approx(100.0) and f["unit"] == "ft"


def test_a_river_polygon_stopping_short_of_a_road_on_one_side_is_a_possible_crossing(vestal) -> None:
    # RV ([1150, 1250] x [0, 870]) ends 30 ft south of HR9 and nothing is mapped north: it may run on under the
    # road unmapped, or truly end there; the ground tells. The finding is across from the end's middle
    _, f = hr9(vestal, [box(1150, 0, 1250, 870)], ["RV"])
    assert f["status"] == "review"
    assert "stream RV (perennial, its polygon ending bank to bank) stops 30.0 ft from it, touching no other " \
           "stream feature, within 50 ft (stream_end_distance_ft)" in f["message"]
    assert "truly ends there" in f["message"]
    assert (f.geometry.x - X0, f.geometry.y - Y0) == pytest.approx((1200.0, 900.0))


@pytest.mark.parametrize("d, status", [(49.99, "review"), (50.0, "review"), (50.01, "pass")])
def test_polygon_end_distance_at_just_under_and_just_over_50_ft(vestal, d, status) -> None:
    # stream_end_distance_ft (50, the limit included) holds for a polygon's end as for a line's
    _, f = hr9(vestal, [box(1150, 0, 1250, 900 - d)], ["RV"])
    assert f["status"] == status
    if status == "review":
        assert f"stops {d:,.1f} ft from it" in f["message"]
    else:
        assert "no stream line stops within 50 ft of it, nor does a stream polygon end there" in f["message"]


def test_an_oblique_river_polygon_ending_at_a_road_is_a_possible_crossing(vestal) -> None:
    # a 60-ft river running north-east at 45 degrees, its end squared across its flow, the nearest corner 10 ft
    # south of HR9: the end's bank goes across the channel, bank to bank
    y = 890 - 30 / 2 ** 0.5  # the end's middle: its north-west corner at (1178.8, 890)
    rv = LineString([(900, y - 300), (1200, y)]).buffer(30, cap_style="flat")
    _, f = hr9(vestal, [rv], ["RV"])
    assert f["status"] == "review" and "stream RV (perennial, its polygon ending bank to bank)" in f["message"]


def bend(centre=(1200.0, 750.0), outer=130.0, inner=70.0):
    """A river bend 60 ft wide, its outer bank's apex at v = 880 (20 ft south of HR9), its arms going south."""
    c = Point(*centre)
    return c.buffer(outer, 256).difference(c.buffer(inner, 256)).intersection(box(900, centre[1], 1500, 1100))


def test_a_polygons_bank_along_a_road_or_bending_near_it_is_no_possible_crossing(vestal) -> None:
    # HR7 runs 5,000 ft along v = -300 beside the river RA ([900, 6300] x [-270, -210]), 30 ft from its bank:
    # a river beside a road for a mile is no crossing. RB's bend comes within 20 ft of HR9 and turns away:
    # no end, no crossing. Both pass, as before
    roads = layer(["HR9", "HR7"], [LineString([(1100, 900), (1300, 900)]), LineString([(1000, -300), (6000, -300)])])
    res = check_harvest(scene(streams=streams(["RA", "RB"], [box(900, -270, 6300, -210), bend()]),
                              haul_roads=roads), vestal)
    for rid in ("HR7", "HR9"):
        f = one(res, "HRV-013", rid)
        assert f["status"] == "pass", f["message"]


def test_far_polygons_and_mapped_crossings_give_no_new_finding(vestal) -> None:
    # RF ends 300 ft south of HR9 (a real end, far from every road): pass
    _, f = hr9(vestal, [box(1150, 0, 1250, 600)], ["RF"])
    assert f["status"] == "pass"
    # HR9 crosses RX ([1150, 1250] x [800, 1000]): the mapped crossing, listed once, no possible crossing
    res = check_harvest(scene(streams=streams(["RX"], [box(1150, 800, 1250, 1000)]), haul_roads=HR9), vestal)
    f = pick(res, "HRV-013", "HR9")
    assert len(f) == 1 and "crossing of stream RX" in f["message"].iloc[0]
    assert "possible crossing" not in f["message"].iloc[0]


def test_a_polygon_running_on_as_a_line_across_the_road_is_no_possible_crossing(vestal) -> None:
    # RV ends 20 ft south of HR9 and runs on as the line S7 from its end across the road: the crossing is mapped
    # (S7's); RV's end touches another stream (S7) and is not a gap
    res = check_harvest(scene(streams=streams(["RV", "S7"], [box(1150, 0, 1250, 880),
                                                             LineString([(1200, 880), (1200, 1100)])]),
                              haul_roads=HR9), vestal)
    f = pick(res, "HRV-013", "HR9")
    assert len(f) == 1 and "crossing of stream S7" in f["message"].iloc[0]
    assert "possible crossing" not in f["message"].iloc[0]


def test_the_field_file_places_a_polygons_possible_crossing(vestal) -> None:
    res, _ = hr9(vestal, [box(1150, 0, 1250, 880), box(1150, 920, 1250, 1500)], ["RVa", "RVb"])
    pts = field_points(res)
    x = pts[(pts["kind"] == "stream_crossing") & pts["description"].str.contains("HR9")]
    assert len(x) == 1 and "possible crossing" in x.iloc[0]["description"]


# ------------------------------------------------------------------------------------------
# a stream line ending exactly on a road: the stream ends on it (a possible crossing), not a run "inside a
# channel 0.0 ft wide"


def test_a_stream_line_ending_on_a_haul_road_is_a_possible_crossing_not_a_zero_width_channel(vestal) -> None:
    # S3 runs up u = 1200 and ends on HR9 at (1200, 900); nothing north. Before: "10.0 ft inside a channel 0.0 ft
    # wide (... along the channel)": HR9 lay along the flat end of the 10-ft channel drawn round S3's line
    _, f = hr9(vestal, [LineString([(1200, 0), (1200, 900)])], ["S3"])
    m = f["message"]
    assert f["status"] == "review" and "0.0 ft wide" not in m and "runs along inside" not in m
    assert "possible crossing the stream map leaves out" in m and "stream S3 (perennial) ends on it, touching no other " \
           "stream line" in m
    assert (f.geometry.x - X0, f.geometry.y - Y0) == pytest.approx((1200.0, 900.0))


def test_a_stream_line_ending_on_a_road_and_resuming_across_it_is_one_gap(vestal) -> None:
    # S3a ends on HR9, S3b starts 20 ft north of it: one gap of 20 ft
    _, f = hr9(vestal, [LineString([(1200, 0), (1200, 900)]), LineString([(1200, 920), (1200, 1100)])],
               ["S3a", "S3b"])
    assert f["status"] == "review"
    assert "stream S3a (perennial) ends on it on one side and stream S3b (perennial) stops 20.0 ft from it on the " \
           "other, a gap of 20.0 ft across it" in f["message"]


def test_a_skid_trail_across_a_stream_lines_end_is_no_skidding_in_the_channel(vestal) -> None:
    # S3 ends on T9 (v = 600). Before: HRV-012 violation, "10 ft of skid trail in a stream channel ... 0.0 ft
    # wide". The trail only touches the stream's end: no skidding in it; HRV-013 lists the possible crossing
    trails = layer(["T9"], [LineString([(1100, 600), (1300, 600)])])
    res = check_harvest(scene(streams=streams(["S3"], [LineString([(1200, 0), (1200, 600)])]), skid_trails=trails),
                        vestal)
    f12 = one(res, "HRV-012", "T9")
    assert f12["status"] == "pass" and "0.0 ft wide" not in f12["message"]
    f13 = one(res, "HRV-013", "T9")
    assert f13["status"] == "review" and "stream S3 (perennial) ends on it" in f13["message"]


def test_a_skid_trail_along_a_polygons_bank_says_so(vestal) -> None:
    # T9 runs 100 ft exactly along the north bank of RV ([1100, 1300] x [500, 560]): the edge belongs to the
    # channel (skidding in it, as before) but the finding says where it runs, not "a channel 0.0 ft wide"
    trails = layer(["T9"], [LineString([(1150, 560), (1250, 560)])])
    res = check_harvest(scene(streams=streams(["RV"], [box(1100, 500, 1300, 560)]), skid_trails=trails), vestal)
    f = one(res, "HRV-012", "T9")
    assert f["status"] == "violation" and "0.0 ft wide" not in f["message"]
    assert "100.0 ft along the bank, on the channel's edge (the edge belongs to the channel)" in f["message"]


def test_a_river_polygon_whose_end_touches_the_road_is_a_possible_crossing(vestal) -> None:
    # RV's pointed end touches HR9 at (1200, 900) without entering it: no part of the road lies inside the river
    # (no mapped crossing), and before nothing was said at all (pass). Now its end is on the road
    rv = Polygon([(1150, 0), (1250, 0), (1250, 850), (1200, 900), (1150, 850)])
    _, f = hr9(vestal, [rv], ["RV"])
    assert f["status"] == "review"
    assert "stream RV (perennial, its polygon ending bank to bank) ends on it, touching no other stream feature" \
        in f["message"]
    assert (f.geometry.x - X0, f.geometry.y - Y0) == pytest.approx((1200.0, 900.0))
