"""Timber-harvest plan validation (geoconstraints.harvest): every HRV rule, hand-computed.

The synthetic plan sits in Vestal, NY (EPSG:2261, US survey feet); local coordinates (u, v)
in feet are shifted by (X0, Y0). Synthetic DEMs are GeoTIFFs written with rasterio in
tmp_path with exact planar grades, so grade runs and their lengths are known by construction.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import rasterio
from common import NY_FT, ROOT, X0, Y0
from pyproj import CRS, Transformer
from rasterio.transform import from_origin
from shapely import affinity
from shapely.geometry import LineString, MultiLineString, Point, Polygon, box

from geoconstraints.cli import main
from geoconstraints.commands import check_harvest
from geoconstraints.errors import InputError
from geoconstraints.io.dem import open_dem
from geoconstraints.io.layers import Layers, load_layers
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rules import harvest as hv
from geoconstraints.units import FT_PER_M, SQFT_PER_ACRE

ARC = 0.5 * 64 * math.sin(2 * math.pi / 64) / math.pi  # buffer circle (64 segments) / true circle


@pytest.fixture(scope="module")
def vestal():
    return load_rulebook("vestal")


def _g(geom):
    return affinity.translate(geom, X0, Y0)


def layer(ids, geoms, **cols) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"feature_id": list(ids), **cols}, geometry=[_g(g) for g in geoms], crs=NY_FT)


def scene(*, row: bool = False, dem=None, **over) -> Layers:
    """The hand-checkable plan (local feet; see each test for the arithmetic).

    Harvest areas H1 = [0,1000]x[0,1000], H2 = [1000,1500]x[0,1000]; perennial stream S1 at
    u=200, intermittent S2 at u=800; public road R1 along v=1030 (ROW 50 ft, or ROW polygon
    W1 = [1005,1055] when ``row``); parcels P1 (RR) = [-200,1600]x[-50,1005], P2 (RA-1) below it,
    P3 (C-1) east; dwellings D1 (500... in P1, RR) and D2 (in P3, C-1).
    """
    f = {
        "harvest_area": layer(
            ["H1", "H2"],
            [box(0, 0, 1000, 1000), box(1000, 0, 1500, 1000)],
            cords=[15.0, 10.0],
            owner=["A", "A"],
        ),
        "streams": layer(
            ["S1", "S2"],
            [LineString([(200, -100), (200, 1100)]), LineString([(800, -100), (800, 1100)])],
            kind=["perennial", "intermittent"],
        ),
        "roads": layer(["R1"], [LineString([(-100, 1030), (1600, 1030)])], row_width_ft=[50.0]),
        "landings": layer(["L1", "L2", "L3"], [Point(500, 500), Point(220, 500), box(600, 880, 650, 900)]),
        "haul_roads": layer(
            ["HR1", "HR2", "HR3", "HR4"],
            [
                LineString([(500, 500), (500, 1030)]),
                LineString([(220, 500), (100, 500)]),
                LineString([(625, 890), (500, 890)]),
                LineString([(1400, 900), (1400, 1100)]),
            ],
        ),
        "skid_trails": layer(
            ["ST1", "ST2"],
            [LineString([(202, 100), (202, 400)]), LineString([(100, 700), (300, 700)])],
            constructed=[None, False],
        ),
        "parcels": layer(
            ["P1", "P2", "P3"],
            [box(-200, -50, 1600, 1005), box(-200, -600, 1600, -50), box(1600, -600, 2400, 1005)],
            zoning=["RR", "RA-1", "C-1"],
        ),
        "dwellings": layer(["D1", "D2"], [Point(900, 600), Point(2000, 0)]),
        "critical_slopes": layer(["CS1"], [box(400, 600, 600, 700)]),
        "stream_corridor": layer(["SC1"], [box(150, 0, 250, 1000)]),
    }
    if row:
        f["row"] = layer(["W1"], [box(-100, 1005, 1600, 1055)])
    f.update(over)
    f = {k: v for k, v in f.items() if v is not None}
    return Layers(frames=f, crs=CRS.from_user_input(NY_FT), dem=dem)


def pick(result, rule_id: str, subject_id: str | None = None, status: str | None = None) -> pd.DataFrame:
    f = result.findings
    f = f[f["rule_id"] == rule_id]
    if subject_id is not None:
        f = f[f["subject_id"] == subject_id]
    if status is not None:
        f = f[f["status"] == status]
    return f


def one(result, rule_id: str, subject_id: str, status: str | None = None) -> pd.Series:
    f = pick(result, rule_id, subject_id, status)
    assert len(f) == 1, f[["rule_id", "status", "subject_id", "message"]]
    return f.iloc[0]


@pytest.fixture(scope="module")
def base(vestal):
    return check_harvest(scene(), vestal)


# ------------------------------------------------------------------------------------------
# input guard, structure


def test_plan_without_harvest_area_runs(vestal) -> None:
    # a forester checking haul roads alone: the rules about harvest areas name the missing layer,
    # the others run (HRV-025: L3 105 ft from the right-of-way, as with the harvest areas)
    res = check_harvest(scene(harvest_area=None), vestal)
    for rid in ("HRV-001", "HRV-020", "HRV-021", "HRV-022", "HRV-023"):
        f = pick(res, rid)
        assert list(f["status"]) == ["not_evaluated"], rid
        assert "no harvest_area layer given" in f["message"].iloc[0], rid
    assert one(res, "HRV-003", "", "not_evaluated")["subject_layer"] == "harvest_area"
    assert one(res, "HRV-025", "L3")["status"] == "violation"
    assert one(res, "HRV-027", "L2")["status"] == "violation"
    st = dict(zip(pick(res, "HRV-002")["subject_id"], pick(res, "HRV-002")["status"]))
    assert st["a"] == "not_evaluated" and "not supplied: harvest_area" in one(res, "HRV-002", "a")["message"]
    assert "pass" not in set(pick(res, "HRV-001")["status"])
    assert any("No harvest_area layer" in n for n in res.notes)


def test_refuses_a_plan_without_any_plan_layer(vestal) -> None:
    with pytest.raises(InputError, match="harvest_area, landings, haul_roads, skid_trails"):
        check_harvest(scene(harvest_area=None, landings=None, haul_roads=None, skid_trails=None), vestal)


def test_every_rule_reports_and_derived_layers(base, vestal) -> None:
    ids = {r.id for r in vestal.group("harvest")}
    assert set(base.findings["rule_id"]) == ids
    assert set(base.derived) == {"buffer_strips", "possible_buffer_strips", "grade_runs", "water_bars", "contours"}
    assert {"kind", "rule_id", "source_id", "width_ft", "measured_from"} <= set(
        base.derived["buffer_strips"].columns
    )
    assert (base.findings["citation"].str.len() > 0).all()
    assert set(base.tables) == {"roads", "landings"}


# ------------------------------------------------------------------------------------------
# buffers HRV-020..023


def test_stream_and_road_buffer_acres(base, vestal) -> None:
    st = pick(base, "HRV-020", "H1")
    assert set(st["status"]) == {"info"}
    stream = st[st["message"].str.contains("stream buffer")].iloc[0]
    road = st[st["message"].str.contains("road buffer")].iloc[0]
    # S1 at u=200, strip u in [150,250] across the full 1000 ft height: 100,000 sq ft
    assert stream["measured"] == pytest.approx(100_000 / SQFT_PER_ACRE, rel=1e-9)
    assert "perennial streams only" in stream["message"]
    # centre line v=1030 buffered 50: v >= 980 inside H1 -> 1000 * 20 = 20,000 sq ft
    assert road["measured"] == pytest.approx(20_000 / SQFT_PER_ACRE, rel=1e-9)
    assert "road centre line" in road["message"]
    with_row = check_harvest(scene(row=True), vestal)
    road = pick(with_row, "HRV-020", "H1")
    road = road[road["message"].str.contains("road buffer")].iloc[0]
    # ROW edge v=1005 grown by 50: v >= 955 inside H1 -> 1000 * 45 = 45,000 sq ft
    assert road["measured"] == pytest.approx(45_000 / SQFT_PER_ACRE, rel=1e-9)
    assert "right-of-way line" in road["message"]


def test_intermittent_switch(vestal, tmp_path) -> None:
    rb_path = tmp_path / "rb.yaml"
    rb_path.write_text(
        "extends: vestal\nrules:\n  - id: HRV-020\n    switches:\n      include_intermittent: true\n"
    )
    res = check_harvest(scene(), load_rulebook(rb_path))
    stream = pick(res, "HRV-020", "H1")
    stream = stream[stream["message"].str.contains("stream buffer")].iloc[0]
    # S1 + S2 strips: 2 * 100 * 1000 = 200,000 sq ft
    assert stream["measured"] == pytest.approx(200_000 / SQFT_PER_ACRE, rel=1e-9)
    assert "include_intermittent=true" in stream["reading"].lower()


def test_property_line_and_dwelling_buffers(base) -> None:
    # reading c: P2 (RA-1) lines -> band v in [0,50] in H1 (P2's top edge at v=-50 plus 100 ft);
    # P1 borders P2 along that same line (reading b adds the same ground).
    # H1: 1000*50 = 50,000 sq ft; H2 (500 wide): 500*50 = 25,000 sq ft
    assert one(base, "HRV-021", "H1")["measured"] == pytest.approx(50_000 / SQFT_PER_ACRE, rel=1e-9)
    assert one(base, "HRV-021", "H2")["measured"] == pytest.approx(25_000 / SQFT_PER_ACRE, rel=1e-9)
    strips = base.derived["buffer_strips"].query("kind == 'property_line'")
    assert set(strips["source_id"]) == {"P2", "P1", "P3"}
    # D1 (RR) -> circle of 100 ft fully inside H1; D2 is in C-1 and makes no buffer
    d = one(base, "HRV-022", "H1")
    assert d["measured"] * SQFT_PER_ACRE == pytest.approx(ARC * math.pi * 100**2, rel=1e-6)
    assert set(base.derived["buffer_strips"].query("kind == 'dwelling'")["source_id"]) == {"D1"}


def test_property_line_reading_b(tmp_path) -> None:
    rb_path = tmp_path / "rb.yaml"
    rb_path.write_text(
        "extends: vestal\nrules:\n  - id: HRV-021\n    switches:\n      property_line_reading: b\n"
    )
    res = check_harvest(scene(), load_rulebook(rb_path))
    # only the shared lines P1|P2 (v=-50) and P3|P2 (u=1600): still the band v in [0,50] of H1
    assert one(res, "HRV-021", "H1")["measured"] == pytest.approx(50_000 / SQFT_PER_ACRE, rel=1e-9)
    strips = res.derived["buffer_strips"].query("kind == 'property_line'")
    assert set(strips["source_id"]) == {"P1", "P3"}
    assert "reading b" in one(res, "HRV-021", "H1")["message"]


def test_buffer_union_inside_harvest_area(base) -> None:
    # union in H1: stream strip u in [150,250] (100,000) + property band v in [0,50] outside it
    # (900*50 = 45,000) + road band v in [980,1000] outside it (900*20 = 18,000) + dwelling circle
    # (not overlapping) 31,365.5 = 194,365.5 sq ft = 4.462 acres
    expected = 100_000 + 45_000 + 18_000 + ARC * math.pi * 100**2
    assert one(base, "HRV-023", "H1")["measured"] * SQFT_PER_ACRE == pytest.approx(expected, rel=1e-6)
    assert one(base, "HRV-023", "H1")["status"] == "info"


def test_missing_sources_not_evaluated(vestal) -> None:
    res = check_harvest(scene(streams=None, dwellings=None), vestal)
    st = pick(res, "HRV-020", "H1", "not_evaluated")
    assert len(st) == 1 and "no streams layer" in st.iloc[0]["message"]
    assert one(res, "HRV-022", "H1")["status"] == "not_evaluated"
    # L1 lies outside the strips that could be built, but the dwelling strips are missing
    assert one(res, "HRV-024", "L1")["status"] == "not_evaluated"
    no_zoning = check_harvest(scene(parcels=None), vestal)
    assert set(pick(no_zoning, "HRV-003", status="not_evaluated")["subject_layer"]) == {
        "harvest_area",
        "landings",
        "haul_roads",
        "skid_trails",  # the whole proposed plan (§ 44-VI-6(G)(c)(3))
    }
    assert one(no_zoning, "HRV-021", "H1")["status"] == "not_evaluated"


# ------------------------------------------------------------------------------------------
# landings HRV-024, 025, 027; HRV-003; HRV-026


def test_landing_in_buffer(base) -> None:
    l2 = one(base, "HRV-024", "L2")
    assert l2["status"] == "violation" and "stream buffer of S1" in l2["message"]
    # L1 at (500,500): nearest strip is the stream strip edge at u=250 -> 250 ft
    l1 = one(base, "HRV-024", "L1")
    assert (l1["status"], l1["measured"]) == ("pass", pytest.approx(250.0))
    # L3 top edge v=900; the road strip (centre line v=1030 less 50 ft) starts at v=980 -> 80 ft
    assert one(base, "HRV-024", "L3")["measured"] == pytest.approx(80.0)


def test_landing_at_the_curved_edge_of_a_strip_is_measured_to_its_source(vestal) -> None:
    # § 44-VI-6(F)(6): buffer strips within 100 ft of a dwelling in RR, no landing within them. The strip's
    # circle is a 64-sided polygon with its corners on the true circle: a landing 100 ft (or 99.9 ft) from the
    # dwelling between two corners lay outside the polygon and passed ("nearest buffer strip 0.12 ft away");
    # the same 50 ft beyond a stream's end. Measured to the dwelling (the stream) now: within the width is in
    # the strip; 100.1 ft between two corners (outside the true circle, inside the polygon's error) passes
    a = math.pi / 64  # half-way between two corners of the circle

    def at_angle(r, t, cx=0.0):
        return Point(cx + r * math.cos(t), r * math.sin(t))

    lay = Layers(frames={
        "landings": layer(["L100", "L99", "L0", "L100.1", "LS"],
                          [at_angle(100, a), at_angle(99.9, a), at_angle(100, 0), at_angle(100.1, a),
                           at_angle(50, a, 3000)]),
        "dwellings": layer(["D"], [Point(0, 0)]),
        "parcels": layer(["P"], [box(-1000, -1000, 4000, 1000)], zoning=["RR"]),
        "streams": layer(["S"], [LineString([(2500, 0), (3000, 0)])], kind=["perennial"]),
        "roads": layer(["R"], [LineString([(-1000, 900), (4000, 900)])], row_width_ft=[50.0]),
    }, crs=CRS.from_user_input(NY_FT))
    res = check_harvest(lay, vestal)
    for lid, kind in (("L100", "dwelling buffer of D"), ("L99", "dwelling buffer of D"), ("L0", "dwelling buffer of D"),
                      ("LS", "stream buffer of S")):
        f = one(res, "HRV-024", lid)
        assert f["status"] == "violation", lid
        assert kind in f["message"], lid
    assert "curved outline is drawn up to 0.12 ft inside" in one(res, "HRV-024", "L100")["message"]
    # round 22c: outside the strip, but a point landing: review (its pad may reach in), not known outside
    assert one(res, "HRV-024", "L100.1")["status"] == "review"
    table = res.tables["landings"].set_index("landing_id")
    assert table.loc["L100", "in_buffer"] is True and table.loc["L100", "buffer_kinds"] == "dwelling"
    assert table.loc["L100.1", "in_buffer"] is None


def test_landing_row_distance(base, vestal) -> None:
    # centre line v=1030, ROW 50 ft -> edge at v=1005; L3 top at v=900 -> 105 ft < 150
    l3 = one(base, "HRV-025", "L3")
    assert (l3["status"], l3["measured"], l3["threshold"]) == ("violation", pytest.approx(105.0), 150.0)
    assert "centre line" in l3["message"]
    l1 = one(base, "HRV-025", "L1")  # 1005 - 500 = 505 ft
    assert (l1["status"], l1["measured"]) == ("pass", pytest.approx(505.0))
    res = check_harvest(scene(row=True, roads=None), vestal)
    l3 = one(res, "HRV-025", "L3")
    assert l3["measured"] == pytest.approx(105.0) and "row W1" in l3["message"]
    none = check_harvest(scene(roads=None), vestal)
    assert one(none, "HRV-025", "L1")["status"] == "not_evaluated"


def test_landing_near_a_bend_of_a_road_is_measured_to_its_true_right_of_way(vestal) -> None:
    # § 44-VI-6(F)(7)(3): landings "at least 150 feet from any public right-of-way". The right-of-way drawn
    # from a road centre line (50 ft wide) rounds its bends with a 64-sided arc whose sides pass up to
    # 25 x (1 - cos(pi/64)) = 0.03 ft inside the true edge: a landing 149.99 ft from the true right-of-way
    # outside a bend, between two corners, measured 150.02 ft to the drawn one and passed. Measured to the
    # right-of-way drawn exactly from the centre line now: 150 ft (at) passes, 149.99 is a violation, 150.01
    # passes; beyond the road's flat end the centre line is not the measure (175 ft from its end is 150 ft)
    a = -math.pi / 64  # half-way between two corners of the bend's arc, outside it

    def from_bend(r):
        return Point(1000 + r * math.cos(a), 500 + r * math.sin(a))

    lay = Layers(frames={
        "landings": layer(["L150", "L149.99", "L150.01", "LEND"],
                          [from_bend(175.0), from_bend(174.99), from_bend(175.01), Point(1000, 1500 + 150.0)]),
        "roads": layer(["R"], [LineString([(0, 500), (1000, 500), (1000, 1500)])], row_width_ft=[50.0]),
    }, crs=CRS.from_user_input(NY_FT))
    res = check_harvest(lay, vestal)
    # round 22c: the landings are points, so at and beyond 150 ft they are review (a pad may reach nearer), no
    # longer pass; the measure is what this tests
    at = one(res, "HRV-025", "L150")
    assert (at["status"], at["measured"]) == ("review", pytest.approx(150.0, abs=1e-5))
    assert "drawn exactly from its centre line" in at["message"] and "0.03 ft inside" in at["message"]
    under = one(res, "HRV-025", "L149.99")
    assert (under["status"], under["measured"]) == ("violation", pytest.approx(149.99, abs=1e-5))
    assert one(res, "HRV-025", "L150.01")["status"] == "review"
    end = one(res, "HRV-025", "LEND")  # 150 ft beyond the flat end of the right-of-way, 150 ft from the centre line
    assert (end["status"], end["measured"]) == ("review", pytest.approx(150.0, abs=1e-5))
    assert res.tables["landings"].set_index("landing_id").loc["L149.99", "row_distance_ft"] == pytest.approx(149.99,
                                                                                                            abs=1e-5)


def test_an_empty_layer_is_said_to_be_empty_not_missing(vestal) -> None:
    # HRV-012 (§ 44-VI-6(F)(4)), HRV-013 (§ 44-VI-6(F)(3)), HRV-027 (§ 44-VI-6(E)(4)e): a streams or haul_roads
    # layer given with no feature is not_evaluated (nothing to measure on), but the finding said "streams
    # layer missing ... (no streams layer)" of a layer that was given; now it says the layer is empty
    res = check_harvest(scene(streams=layer([], [], kind=[]), haul_roads=layer([], [])), vestal)
    for rid, sid in (("HRV-012", "ST1"), ("HRV-013", "ST1"), ("HRV-027", "L1")):
        f = one(res, rid, sid)
        assert f["status"] == "not_evaluated", rid
        assert "layer given is empty" in f["message"] and "missing" not in f["message"], (rid, f["message"])
    assert "the streams layer given is empty" in one(res, "HRV-012", "ST1")["message"]
    assert "the haul_roads layer given is empty" in one(res, "HRV-027", "L1")["message"]
    gone = check_harvest(scene(streams=None), vestal)  # not given: said so
    assert "no streams layer given" in one(gone, "HRV-012", "ST1")["message"]


def test_landing_connected_by_haul_road(base) -> None:
    assert one(base, "HRV-027", "L1")["status"] == "pass"
    l3 = one(base, "HRV-027", "L3")  # via HR3 -> HR1 -> R1
    assert l3["status"] == "pass" and "HR1, HR3" in l3["message"]
    l2 = one(base, "HRV-027", "L2")
    assert l2["status"] == "violation" and "HR2" in l2["message"]
    assert base.tables["landings"].set_index("landing_id").loc["L2", "connected"] == False


def test_zoning_proximity(base) -> None:
    # H1 bottom v=0, RA-1 parcel P2 top v=-50 -> 50 ft
    h1 = one(base, "HRV-003", "H1")
    assert (h1["status"], h1["measured"]) == ("review", pytest.approx(50.0))
    assert "RA-1 property" in h1["message"]
    l1 = one(base, "HRV-003", "L1")  # v=500 -> 550 ft
    assert (l1["status"], l1["measured"]) == ("pass", pytest.approx(550.0))


def test_access_points(base, tmp_path) -> None:
    ap = one(base, "HRV-026", "all")
    # HR1 ends on R1 at (500,1030); HR4 crosses R1 at (1400,1030)
    assert (ap["status"], ap["measured"], ap["threshold"]) == ("info", 2.0, 2.0)
    rb_path = tmp_path / "rb.yaml"
    rb_path.write_text(
        "extends: vestal\nrules:\n  - id: HRV-026\n    thresholds:\n      max_access_points_count: 1\n"
    )
    res = check_harvest(scene(), load_rulebook(rb_path))
    assert one(res, "HRV-026", "all")["status"] == "review"


def test_access_points_ignore_roads_away_from_the_haul_roads(base, vestal) -> None:
    # FAR lies ten miles off; NEAR runs along u=1420, 20 ft from HR4 (u=1400) but never within the
    # 5 ft snap tolerance; R1 reaches 2 miles east. None changes HRV-026 (2 access points: HR1 and HR4 on R1)
    roads = layer(
        ["R1", "FAR", "NEAR"],
        [LineString([(-100, 1030), (11_000, 1030)]), LineString([(52_800, 0), (53_800, 0)]),
         LineString([(1420, 0), (1420, 1000)])],
        row_width_ft=[50.0, 50.0, 50.0],
    )
    res = check_harvest(scene(roads=roads), vestal)
    a, b = one(base, "HRV-026", "all"), one(res, "HRV-026", "all")
    assert (b["status"], b["measured"], b["message"]) == (a["status"], a["measured"], a["message"]) == (
        "info", 2.0, a["message"])
    assert b.geometry.equals(a.geometry) and len(b.geometry.geoms) == 2
    # only R1 is drawn, cut to the haul roads' box (u 100..1400) grown by twice the tolerance (10 ft)
    from geoconstraints.commands import harvest_context
    from geoconstraints.rules.harvest import _public_roads

    ctx = harvest_context(scene(roads=roads), vestal)
    geoms, ids = _public_roads(ctx, ctx.get("haul_roads").geometry.values, 10.0)
    assert ids.tolist() == ["roads R1"]
    assert geoms[0].length == pytest.approx(1400 + 10 - (100 - 10))


# ------------------------------------------------------------------------------------------
# slopes, channels, crossings HRV-011..013


def test_designated_slopes(base) -> None:
    hr1 = one(base, "HRV-011", "HR1")  # x=500 crosses CS1 v in [600,700]: 100 ft
    assert (hr1["status"], hr1["measured"]) == ("violation", pytest.approx(100.0))
    assert hr1.geometry.length == pytest.approx(100.0)
    hr2 = one(base, "HRV-011", "HR2")  # v=500 from u=220 to 100 inside SC1 u in [150,250]: 70 ft
    assert (hr2["status"], hr2["measured"]) == ("violation", pytest.approx(70.0))
    st1 = one(base, "HRV-011", "ST1")  # constructed unknown -> treated as constructed: 300 ft in SC1
    assert (st1["status"], st1["measured"]) == ("violation", pytest.approx(300.0))
    assert one(base, "HRV-011", "ST2")["status"] == "pass"  # constructed false
    assert one(base, "HRV-011", "HR3")["status"] == "pass"


def test_designated_slopes_missing_layers(vestal) -> None:
    res = check_harvest(scene(critical_slopes=None, stream_corridor=None), vestal)
    assert set(pick(res, "HRV-011")["status"]) <= {"not_evaluated", "pass"}
    assert one(res, "HRV-011", "HR1")["status"] == "not_evaluated"
    part = check_harvest(scene(stream_corridor=None), vestal)
    assert one(part, "HRV-011", "HR1")["status"] == "violation"
    assert one(part, "HRV-011", "HR3")["status"] == "not_evaluated"  # stream_corridor unknown: no pass


def test_skidding_in_channel(base) -> None:
    # ST1 at u=202 runs 300 ft inside the 10-ft channel (u in [195,205]) of S1
    st1 = one(base, "HRV-012", "ST1")
    assert (st1["status"], st1["measured"]) == ("violation", pytest.approx(300.0))
    st2 = one(base, "HRV-012", "ST2")  # crosses: 10 ft inside the channel
    assert (st2["status"], st2["measured"]) == ("pass", pytest.approx(10.0))


def test_stream_crossings(base) -> None:
    hr2 = one(base, "HRV-013", "HR2")
    assert hr2["status"] == "review"
    assert (hr2.geometry.x - X0, hr2.geometry.y - Y0) == pytest.approx((200.0, 500.0))
    assert hr2["measured"] == pytest.approx(20.0)  # 20 ft from HR2's start at u=220
    st2 = one(base, "HRV-013", "ST2")
    assert (st2.geometry.x - X0, st2.geometry.y - Y0) == pytest.approx((200.0, 700.0))
    assert one(base, "HRV-013", "HR1")["status"] == "pass"


def test_commercial_volume(base, vestal) -> None:
    # H1 (15 cords) and H2 (10 cords) both lie on parcel P1: 25 > 20 cords
    h1 = one(base, "HRV-001", "H1")
    assert (h1["status"], h1["measured"], h1["threshold"]) == ("review", 25.0, 20.0)
    assert "on parcel P1" in h1["message"]
    # A (2,560 cu ft = 20 cords, not greater than 20) and B (no volume) are both on P1: the
    # parcel's sum is unknown; A alone on P1 would pass
    ha = layer(["A", "B"], [box(0, 0, 100, 100), box(500, 0, 600, 100)], cubic_feet=[2560.0, np.nan])
    res = check_harvest(scene(harvest_area=ha), vestal)
    a = one(res, "HRV-001", "A")
    assert (a["status"], a["measured"]) == ("not_evaluated", 20.0) and "volume not given for B" in a["message"]
    res = check_harvest(scene(harvest_area=layer(["A"], [box(0, 0, 100, 100)], cubic_feet=[2560.0])), vestal)
    assert (one(res, "HRV-001", "A")["status"], one(res, "HRV-001", "A")["measured"]) == ("pass", 20.0)


def test_site_plan_checklist(base, vestal) -> None:
    f = pick(base, "HRV-002")
    st = dict(zip(f["subject_id"], f["status"]))
    assert st["b"] == "not_evaluated"  # no DEM
    assert st["f"] == "not_evaluated" and "not supplied: easements" in one(base, "HRV-002", "f")["message"]
    assert "not supplied: ponds, wetlands" in one(base, "HRV-002", "h")["message"]
    assert st["a"] == st["d"] == st["g"] == st["i"] == st["j"] == "info"
    # c: the parcels (the districts' source) leave land within 300 ft of H1 + H2 = [0,1500]x[0,1000]
    # uncovered. Parcels cover u in [-200,2400], v in [-600,1005]; the ROW of R1 [-100,1600]x[1005,1055].
    # West (u < -200): 100 x 1000 + 2 half circular segments of r 300 cut 200 from the centre
    #   (300^2 acos(2/3) - 200 sqrt(300^2 - 200^2)) / 2 = 15,487.4 each -> 130,974.8 sq ft.
    # North (v > 1005, u >= -200): 1500 x 295 + right corner (quarter disk 70,685.8 - strip 5 x 300)
    #   + left corner (70,685.8 - 15,487.4 - 5 x 200) - ROW 1700 x 50 = 480,884.2 sq ft.
    # 611,859 sq ft = 14.05 acres (64-segment arcs: within 0.2 %)
    c = one(base, "HRV-002", "c")
    assert c["status"] == "not_evaluated" and "acres within 300 ft of the harvest area not covered" in c["message"]
    from geoconstraints.commands import harvest_context
    from geoconstraints.rules.harvest import _zoning_frame, zoning_gaps

    ctx = harvest_context(scene(), vestal)
    z, _ = _zoning_frame(ctx)
    gap = zoning_gaps(ctx, [box(X0, Y0, X0 + 1500, Y0 + 1000)], z, 300, 50)[0]
    assert gap == pytest.approx(611_859, rel=2e-3)
    assert f"{gap / SQFT_PER_ACRE:,.2f} acres" in c["message"]
    assert st["scale"] == "info" and "1 in = 500 ft" in one(base, "HRV-002", "scale")["message"]
    lic = pick(base, "HRV-040")
    assert set(lic["status"]) == {"info"} and sorted(lic["subject_id"]) == sorted(
        c["key"] for c in vestal["HRV-040"].p("conditions"))
    fee = one(base, "HRV-040", "application_fee")["message"]
    assert fee == "Licence condition application_fee: Permit fee of $100 with the application. (Vestal Code 1966 § 44-VI-6(E)(1))"


# ------------------------------------------------------------------------------------------
# DEM: grade runs HRV-010, water bars HRV-030, contours HRV-002


SEGMENTS = [(100, 10), (300, 40), (100, 10), (300, 40), (100, 10), (190, 40), (110, 10), (210, 40), (190, 10)]
"""(length ft, grade %) along u: runs of 40 % of 300, 300, 190 (just under) and 210 ft (just over).
Smoothing (15 ft window) turns a 10 %/40 % kink into a ramp that crosses 25 % at the kink itself."""


def profile_z(u: np.ndarray) -> np.ndarray:
    knots_u = np.concatenate([[0.0], np.cumsum([s[0] for s in SEGMENTS])])
    knots_z = 1000.0 + np.concatenate([[0.0], np.cumsum([s[0] * s[1] / 100 for s in SEGMENTS])])
    return np.interp(u, knots_u, knots_z)


def write_dem(
    path: Path,
    z_of_uv,
    *,
    bounds=(-50, 0, 1700, 1000),
    cell=5.0,
    crs=NY_FT,
    unit: str | None = "ft",
    nodata=None,
    hole=None,
    z_scale=1.0,
) -> Path:
    """GeoTIFF with z = z_of_uv(u, v) (feet) at cell centres; u, v local feet in EPSG:2261."""
    umin, vmin, umax, vmax = bounds
    if crs == NY_FT:
        w, h = round((umax - umin) / cell), round((vmax - vmin) / cell)
        xs = X0 + umin + cell * (np.arange(w) + 0.5)
        ys = Y0 + vmax - cell * (np.arange(h) + 0.5)
        X, Y = np.meshgrid(xs, ys)
        transform = from_origin(X0 + umin, Y0 + vmax, cell, cell)
        U, V = X - X0, Y - Y0
    else:  # a grid in another CRS covering the same ground
        to = Transformer.from_crs(NY_FT, crs, always_xy=True)
        back = Transformer.from_crs(crs, NY_FT, always_xy=True)
        cx, cy = to.transform(
            [X0 + umin, X0 + umax, X0 + umin, X0 + umax], [Y0 + vmin, Y0 + vmin, Y0 + vmax, Y0 + vmax]
        )
        x0, y1 = min(cx), max(cy)
        w, h = math.ceil((max(cx) - x0) / cell), math.ceil((y1 - min(cy)) / cell)
        X, Y = np.meshgrid(x0 + cell * (np.arange(w) + 0.5), y1 - cell * (np.arange(h) + 0.5))
        bx, by = back.transform(X, Y)
        U, V = np.asarray(bx) - X0, np.asarray(by) - Y0
        transform = from_origin(x0, y1, cell, cell)
    Z = z_of_uv(U, V) * z_scale
    if hole is not None:
        hu0, hv0, hu1, hv1 = hole
        Z = np.where((U >= hu0) & (U <= hu1) & (V >= hv0) & (V <= hv1), nodata, Z)
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=w,
        height=h,
        count=1,
        dtype="float64",
        crs=crs,
        transform=transform,
        nodata=nodata,
    ) as dst:
        dst.write(Z, 1)
        if unit:
            dst.set_band_unit(1, unit)
    return path


def roads_for_grades() -> dict[str, gpd.GeoDataFrame]:
    return {
        "harvest_area": layer(["H"], [box(0, 0, 1600, 1000)]),
        "haul_roads": layer(
            ["TWO", "UNDER", "OVER", "FLAT"],
            [
                LineString([(0, 500), (900, 500)]),
                LineString([(850, 450), (1150, 450)]),
                LineString([(1150, 400), (1550, 400)]),
                LineString([(250, 100), (250, 900)]),
            ],
        ),
        "skid_trails": layer(["OFF"], [LineString([(1500, 300), (1900, 300)])]),
    }


def grade_layers(dem) -> Layers:
    return Layers(frames=roads_for_grades(), crs=CRS.from_user_input(NY_FT), dem=dem)


@pytest.fixture(scope="module")
def grade_dem(tmp_path_factory) -> Path:
    return write_dem(tmp_path_factory.mktemp("dem") / "dem.tif", lambda u, v: profile_z(u))


@pytest.fixture(scope="module")
def graded(grade_dem, vestal):
    return check_harvest(grade_layers(open_dem(grade_dem)), vestal)


def test_two_steep_runs_split_by_gentle_stretch(graded) -> None:
    v = pick(graded, "HRV-010", "TWO", "violation")
    assert len(v) == 2
    # 40 % from u=100 to 400 and 500 to 800: 300 ft each (+- one 5-ft cell at each kink)
    assert list(v["measured"]) == pytest.approx([300.0, 300.0], abs=10)
    assert [g.length for g in v.geometry] == pytest.approx([300.0, 300.0], abs=10)
    assert sorted(g.coords[0][0] - X0 for g in v.geometry) == pytest.approx([100, 500], abs=10)
    assert v["message"].str.contains("mean grade 3[89]|mean grade 40", regex=True).all()
    # slope length reported too: 300 * sqrt(1 + 0.4**2) = 323.1 ft
    assert v["message"].str.contains("slope length 32[0-6]", regex=True).all()
    assert pick(graded, "HRV-010", "TWO", "pass").empty


def test_runs_just_under_and_just_over_200_ft(graded) -> None:
    # 190 ft of 40 %: not more than 200 ft, but with the 2 cells (dem_blur_cells_count) a grid can
    # hide at the run's two inner ends it is within the DEM's resolution of the limit: review, not pass
    under = one(graded, "HRV-010", "UNDER")
    assert under["status"] == "review" and "check in the field" in under["message"]
    assert under["measured"] == pytest.approx(190.0, abs=10)
    over = one(graded, "HRV-010", "OVER")  # 210 ft of 40 %
    assert over["status"] == "violation"
    assert over["measured"] == pytest.approx(210.0, abs=10)
    assert over["measured"] > 200


def test_a_steep_road_digitised_in_pieces_is_one_road(tmp_path, vestal) -> None:
    # § 44-VI-6(F)(1): a haul road split into two features at a vertex, 150 ft of 40 % on each side of the
    # joint, is 300 ft of 40 % on the ground (before: each piece passed with "longest 150.0 ft"); two pieces
    # of exactly 100 ft (international feet: the CRS is in US survey feet) make exactly 200 ft, not more
    p = write_dem(tmp_path / "plane40.tif", lambda u, v: 1000 + 0.40 * u, bounds=(-50, 0, 1700, 1000))
    k = 1200 / 3937 / 0.3048  # feet per US survey foot
    h = 100 / k
    lay = Layers(frames={"haul_roads": layer(
        ["A", "B", "C", "D", "E"],
        [LineString([(100, 500), (250, 500)]), LineString([(250, 500), (400, 500)]),
         LineString([(100, 300), (100 + h, 300)]), LineString([(100 + h, 300), (100 + 2 * h, 300)]),
         LineString([(100, 800), (250, 800)])])}, crs=CRS.from_user_input(NY_FT), dem=open_dem(p))
    lay.frames["haul_roads"] = pd.concat([lay.frames["haul_roads"], layer(  # 100 + 100.5 ft: just over
        ["F", "G"], [LineString([(100, 150), (100 + h, 150)]), LineString([(100 + h, 150), (100 + 2.005 * h, 150)])])],
        ignore_index=True)
    res = check_harvest(lay, vestal)
    for rid, other in (("A", "B"), ("B", "A")):
        v = one(res, "HRV-010", rid)
        assert v["status"] == "violation"
        assert v["measured"] == pytest.approx(300.0, abs=0.01)
        assert f"steep runs of haul_roads {other}: 300.0 ft together" in v["message"]
    for rid in ("C", "D"):  # 100 + 100 = 200 ft: not more than 200 ft; joined, its ends count as blurred
        f = one(res, "HRV-010", rid)  # (dem_blur_cells_count): review, not a violation
        assert (f["status"], f["measured"]) == ("review", pytest.approx(200.0, abs=0.01))
    assert one(res, "HRV-010", "E")["status"] == "pass"  # 150 ft alone
    assert one(res, "HRV-010", "G")["measured"] == pytest.approx(200.5, abs=0.01)
    assert {one(res, "HRV-010", r)["status"] for r in ("F", "G")} == {"violation"}
    runs = res.derived["grade_runs"].set_index("road_id")
    assert runs.loc["A", "exceeds"] and runs.loc["B", "exceeds"] and not runs.loc["C", "exceeds"]


def _spur_scene(tmp_path):
    """Steep runs on the 40 % plane z = 1000 + 0.4 u + 0.4 v (40 % along u and along v): a 150-ft run
    along u and a spur along v starting at its middle, 125, 125.5 and 150 ft long (international feet:
    the CRS is in US survey feet); and three 80-ft pieces of one road end to end."""
    p = write_dem(tmp_path / "plane40uv.tif", lambda u, v: 1000 + 0.40 * u + 0.40 * v, bounds=(-50, 0, 1700, 1000))
    k = 1200 / 3937 / 0.3048  # feet per US survey foot
    ids, lines = [], []
    for n, (u0, spur) in enumerate(((100, 125.0), (500, 125.5), (900, 150.0)), start=1):
        mid = u0 + 75 / k
        ids += [f"A{n}", f"B{n}"]
        lines += [LineString([(u0, 300), (u0 + 150 / k, 300)]), LineString([(mid, 300), (mid, 300 + spur / k)])]
    for j, rid in enumerate(("C1", "C2", "C3")):
        lines.append(LineString([(100 + j * 80 / k, 700), (100 + (j + 1) * 80 / k, 700)]))
        ids.append(rid)
    return Layers(frames={"haul_roads": layer(ids, lines)}, crs=CRS.from_user_input(NY_FT), dem=open_dem(p))


def test_a_steep_spur_leaving_the_middle_of_a_steep_run_is_joined(tmp_path, vestal) -> None:
    # § 44-VI-6(F)(1): "more than two hundred (200) feet". A spur of 40 % starting at the middle of another
    # road's 150-ft run of 40 %: 75 ft along the run, then up the spur. Before: each run passed alone
    # ("longest 150.0 ft"), the spur's end lying on the run, not at its end. 75 + 125 = 200 ft is not more
    # than 200 ft; 75 + 125.5 ft and 75 + 150 ft are
    res = check_harvest(_spur_scene(tmp_path), vestal)
    for rid, other in (("A1", "B1"), ("B1", "A1")):  # the pass gives the joined stretch, not the run alone
        f = one(res, "HRV-010", rid)
        # 200 ft is not over the limit, but a joined stretch's ends count as blurred (dem_blur_cells_count)
        assert (f["status"], f["measured"]) == ("review", pytest.approx(200.0, abs=0.01)), rid
        assert "a steep run of 200.0 ft measured" in f["message"], rid
        assert f"joined with the steep runs of haul_roads {other}" in f["message"], rid
    for rid, other, total in (("A2", "B2", 200.5), ("B2", "A2", 200.5), ("A3", "B3", 225.0), ("B3", "A3", 225.0)):
        v = one(res, "HRV-010", rid)
        assert v["status"] == "violation", rid
        assert v["measured"] == pytest.approx(total, abs=0.01), rid
        assert f"steep runs of haul_roads {other}: {total:,.1f} ft together" in v["message"], rid
    assert {one(res, "HRV-010", r)["status"] for r in ("C1", "C2", "C3")} == {"violation"}  # 240 ft


def test_a_cut_short_search_of_joined_runs_is_never_a_pass(tmp_path, vestal, monkeypatch) -> None:
    # § 44-VI-6(F)(1): the search for the longest stretch of joined steep runs stops after _JOIN_MAX_STEPS
    # path extensions. With a bound of 1, three 80-ft pieces of 40 % end to end (240 ft) are found 160 ft
    # long: before, each passed ("longest 80.0 ft") with only a warning in the log; now review, saying so
    from geoconstraints.geometry import terrain as tr

    monkeypatch.setattr(tr, "_JOIN_MAX_STEPS", 1)
    res = check_harvest(_spur_scene(tmp_path), vestal)
    for rid in ("C1", "C2", "C3"):
        f = one(res, "HRV-010", rid)
        assert f["status"] == "review", rid
        assert f["measured"] == pytest.approx(160.0, abs=0.01), rid
        assert "cut short" in f["message"] and "not known to be within the limit" in f["message"], rid
    # a path over the limit found before the bound is a violation however far the search went (the spur's
    # first step: 150 + 75 ft); the run it leaves found only its own two halves first: review, not pass
    assert one(res, "HRV-010", "B3")["status"] == "violation"
    a3 = one(res, "HRV-010", "A3")
    assert (a3["status"], a3["measured"]) == ("review", pytest.approx(150.0, abs=0.01))


def test_the_grade_runs_table_says_what_the_finding_says_of_a_cut_short_search(tmp_path, vestal, monkeypatch) -> None:
    # § 44-VI-6(F)(1): a run whose search of joined runs was cut short is review (see above), but the derived
    # grade_runs layer said only exceeds = False of it, as of a run within the limit. Now its columns say
    # cut_short (review) with the longest joined stretch found (joined_ft, joined_with); a violation joined
    # with another road says its stretch; a run within the limit says neither
    from geoconstraints.geometry import terrain as tr

    monkeypatch.setattr(tr, "_JOIN_MAX_STEPS", 1)
    res = check_harvest(_spur_scene(tmp_path), vestal)
    runs = res.derived["grade_runs"].set_index("road_id")
    for rid in ("C1", "C2", "C3", "A3"):  # review
        assert (bool(runs.loc[rid, "exceeds"]), bool(runs.loc[rid, "cut_short"])) == (False, True), rid
        assert one(res, "HRV-010", rid)["measured"] == pytest.approx(runs.loc[rid, "joined_ft"]), rid
    assert runs.loc["C2", "joined_ft"] == pytest.approx(160.0, abs=0.01)
    assert runs.loc["B3", "exceeds"] and not runs.loc["B3", "cut_short"]  # violation: 150 + 75 ft
    assert (runs.loc["B3", "joined_ft"], runs.loc["B3", "joined_with"]) == (pytest.approx(225.0, abs=0.01),
                                                                          "haul_roads A3")
    for rid, row in runs.iterrows():  # every run (one per road here): the table's word is the finding's
        said = "violation" if row["exceeds"] else "review" if row["cut_short"] else "pass"
        assert one(res, "HRV-010", rid)["status"] == said, rid
    assert list(res.derived["grade_runs"].columns) == [*tr.GRADE_RUN_COLUMNS, "geometry"]
    monkeypatch.undo()
    a1 = check_harvest(_spur_scene(tmp_path), vestal).derived["grade_runs"].set_index("road_id").loc["A1"]
    assert not a1["exceeds"] and not a1["cut_short"]
    # within the limit, the run still says the stretch it is joined into (75 + 125 = 200 ft, with the spur)
    assert (a1["joined_ft"], a1["joined_with"]) == (pytest.approx(200.0, abs=0.01), "haul_roads B1")


def test_steep_roads_crossing_in_an_x_are_joined_at_the_crossing(tmp_path, vestal) -> None:
    # § 44-VI-6(F)(1): "more than two hundred (200) feet". Two haul roads crossing in an X on the 40 % plane
    # z = 1000 + 0.4 u + 0.4 v, each steep through the crossing and sharing no end: A 150 ft along u, 100 ft
    # of it before the crossing; B along v, 100 ft (X1) or 100.5 ft (X2) before the crossing and 50 ft after.
    # A vehicle turning at the crossing drives 100 ft of A then 100 (100.5) ft of B. Before: each road passed
    # alone ("longest 150.0 ft"), the roads meeting at no end; now 100 + 100 = 200 ft passes (not more than
    # 200 ft) and 100 + 100.5 = 200.5 ft is a violation for both roads
    p = write_dem(tmp_path / "plane40uv.tif", lambda u, v: 1000 + 0.40 * u + 0.40 * v, bounds=(-50, 0, 1700, 1000))
    k = 1200 / 3937 / 0.3048  # feet per US survey foot
    ids, lines = [], []
    for n, (u0, before) in enumerate(((100, 100.0), (500, 100.5)), start=1):
        ux, vy = u0 + 100 / k, 500
        ids += [f"A{n}", f"B{n}"]
        lines += [LineString([(u0, vy), (u0 + 150 / k, vy)]), LineString([(ux, vy - before / k), (ux, vy + 50 / k)])]
    res = check_harvest(Layers(frames={"haul_roads": layer(ids, lines)}, crs=CRS.from_user_input(NY_FT),
                               dem=open_dem(p)), vestal)
    for rid in ("A1", "B1"):  # 200 ft joined: within the DEM's blur of the limit (dem_blur_cells_count)
        f = one(res, "HRV-010", rid)
        assert f["status"] == "review", rid
    for rid, other in (("A2", "B2"), ("B2", "A2")):
        v = one(res, "HRV-010", rid)
        assert v["status"] == "violation", rid
        assert v["measured"] == pytest.approx(200.5, abs=0.01), rid
        assert f"steep runs of haul_roads {other}: 200.5 ft together" in v["message"], rid


def test_contour_road_on_steep_slope_passes(graded) -> None:
    flat = one(graded, "HRV-010", "FLAT")  # along v on the 40 % hillside: 0 % along the line
    assert flat["status"] == "pass"
    assert "max grade 0.0 %" in flat["message"]


def test_off_dem_not_evaluated_never_pass(graded) -> None:
    off = pick(graded, "HRV-010", "OFF")
    assert set(off["status"]) == {"not_evaluated"}
    # the DEM ends at u=1700: the stretch u in [1700,1900] (200 ft, +- a half cell) has no data
    assert off.iloc[0]["measured"] == pytest.approx(200.0, abs=5)
    assert off.iloc[0].geometry.bounds[2] - X0 == pytest.approx(1900.0)


def test_grade_runs_layer(graded) -> None:
    g = graded.derived["grade_runs"]
    two = g[g["road_id"] == "TWO"]
    assert len(two) == 2 and two["exceeds"].all()
    under = g[g["road_id"] == "UNDER"]
    assert len(under) == 1 and not under["exceeds"].iloc[0]
    assert (g["mean_grade_pct"] > 25).all()


def test_metre_dem_gives_same_grades(tmp_path, graded, vestal) -> None:
    # elevations stored in metres with band unit 'm' -> identical grades in feet
    p = write_dem(tmp_path / "m.tif", lambda u, v: profile_z(u), z_scale=1 / FT_PER_M, unit="m")
    res = check_harvest(grade_layers(open_dem(p)), vestal)
    a = pick(graded, "HRV-010", "TWO", "violation")["measured"].to_numpy()
    b = pick(res, "HRV-010", "TWO", "violation")["measured"].to_numpy()
    assert b == pytest.approx(a, abs=1e-6)
    # no unit in the metadata: the user says z_units='m'
    p2 = write_dem(tmp_path / "m2.tif", lambda u, v: profile_z(u), z_scale=1 / FT_PER_M, unit=None)
    res2 = check_harvest(grade_layers(open_dem(p2, z_units="m")), vestal)
    assert pick(res2, "HRV-010", "TWO", "violation")["measured"].to_numpy() == pytest.approx(a, abs=1e-6)


def test_dem_in_another_crs(tmp_path, vestal) -> None:
    # the same ground in UTM 18N (metres, 1.5 m cells); elevations still feet
    p = write_dem(tmp_path / "utm.tif", lambda u, v: profile_z(u), crs="EPSG:32618", cell=1.5)
    res = check_harvest(grade_layers(open_dem(p)), vestal)
    v = pick(res, "HRV-010", "TWO", "violation")
    assert list(v["measured"]) == pytest.approx([300.0, 300.0], abs=10)
    assert one(res, "HRV-010", "OVER")["status"] == "violation"
    assert one(res, "HRV-010", "UNDER")["status"] == "review"  # 190 ft + the blur of 1.5-m cells


def test_nodata_hole_not_evaluated(tmp_path, vestal) -> None:
    p = write_dem(tmp_path / "hole.tif", lambda u, v: profile_z(u), nodata=-9999.0, hole=(200, 400, 300, 600))
    res = check_harvest(grade_layers(open_dem(p)), vestal)
    flat = pick(res, "HRV-010", "FLAT")
    assert set(flat["status"]) == {"not_evaluated"}
    # hole v in [400,600] on FLAT (u=250), grown by up to one cell by the bilinear neighbourhood
    assert flat.iloc[0]["measured"] == pytest.approx(200.0, abs=12)


def test_no_contour_between_levels_is_named_so(tmp_path, vestal) -> None:
    # a gentle 0.1 % slope: the DEM covers the plan and its 200-ft margin (u -300..1300) from 1000.7 to
    # 1002.3 ft, so no 10-ft level (1000, 1010) crosses it; HRV-002 (b) is not supplied, and says why truly
    # (before: "the DEM does not cover the plan", which it does)
    p = write_dem(tmp_path / "gentle.tif", lambda u, v: 1001 + 0.001 * u, bounds=(-300, -300, 1300, 1300))
    lay = Layers(frames={"harvest_area": layer(["H"], [box(0, 0, 1000, 1000)])},
                 crs=CRS.from_user_input(NY_FT), dem=open_dem(p))
    res = check_harvest(lay, vestal)
    assert not len(res.derived["contours"])
    b = one(res, "HRV-002", "b")
    assert b["status"] == "not_evaluated"
    assert "lies between two such levels" in b["message"] and "does not cover the plan" not in b["message"]
    assert "multiple of 10 ft" in b["message"]


def _contours_element(vestal, dem_path, haul_roads) -> tuple[Layers, pd.Series]:
    """The harvest areas H1 [0, 1000] x [0, 1000] and H2 [1000, 1500] x [0, 1000] with ``haul_roads`` on the
    DEM at ``dem_path``: (the layers, HRV-002's element b, asserted not_evaluated with contours drawn)."""
    lay = Layers(frames={"harvest_area": layer(["H1", "H2"], [box(0, 0, 1000, 1000), box(1000, 0, 1500, 1000)]),
                         "haul_roads": haul_roads}, crs=CRS.from_user_input(NY_FT), dem=open_dem(dem_path))
    res = check_harvest(lay, vestal)
    assert len(res.derived["contours"])
    b = one(res, "HRV-002", "b")
    assert b["status"] == "not_evaluated"
    return lay, b


def test_contours_from_a_dem_covering_part_of_the_plan_name_the_rest(tmp_path, vestal) -> None:
    # § 44-VI-6(E)(4)b: the site plan shows "land contours at intervals of 10 feet or less". A DEM ending at
    # u = 1200 draws contours over H1 and part of H2 only: before, element b was info ("11 contour levels ...
    # derived from the DEM") as if the plan had them all; now not_evaluated, naming what has none: 300 ft x
    # 1,000 ft of H2 (6.89 acres) and the 200-ft haul road HR at u = 1400
    p = write_dem(tmp_path / "part.tif", lambda u, v: 1000 + 0.10 * u, bounds=(-300, -300, 1200, 1300))
    lay, b = _contours_element(vestal, p, layer(["HR"], [LineString([(1400, 900), (1400, 1100)])]))
    assert "does not cover all of the plan" in b["message"]
    assert f"harvest_area H2 ({300_000 / SQFT_PER_ACRE:.2f} acres outside it)" in b["message"]
    assert "haul_roads HR (200 ft outside it)" in b["message"] and "H1" not in b["message"]
    whole = write_dem(tmp_path / "whole.tif", lambda u, v: 1000 + 0.10 * u, bounds=(-300, -300, 1800, 1300))
    full = check_harvest(Layers(frames=lay.frames, crs=lay.crs, dem=open_dem(whole)), vestal)
    assert one(full, "HRV-002", "b")["status"] == "info"


def test_contours_from_a_dem_with_nodata_under_the_plan_name_what_lies_there(tmp_path, vestal) -> None:
    # § 44-VI-6(E)(4)b: the site plan shows "land contours at intervals of 10 feet or less". A DEM covering the
    # whole plan but with no data in the 200 ft x 200 ft square [400, 600] x [400, 600] inside H1: contourpy
    # drops the lines there, and before element b was info ("... contour levels ... derived from the DEM") as
    # if the plan had them all. Now not_evaluated, naming what lies on the nodata cells: 40,000 sq ft of H1
    # (0.92 acres) and 200 ft of the haul road HR crossing the square; H2 and the road R2 beside it are not named
    p = write_dem(tmp_path / "hole.tif", lambda u, v: 1000 + 0.10 * u, bounds=(-300, -300, 1800, 1300),
                  nodata=-9999.0, hole=(400, 400, 600, 600))
    lay, b = _contours_element(vestal, p, layer(["HR", "R2"], [LineString([(500, 300), (500, 700)]),
                                                               LineString([(700, 300), (700, 700)])]))
    assert "has no data (nodata cells) under part of the plan" in b["message"]
    assert f"harvest_area H1 ({40_000 / SQFT_PER_ACRE:.2f} acres on nodata)" in b["message"]
    assert "haul_roads HR (200 ft on nodata)" in b["message"]
    assert "H2" not in b["message"] and "R2" not in b["message"] and "does not cover" not in b["message"]
    whole = write_dem(tmp_path / "whole.tif", lambda u, v: 1000 + 0.10 * u, bounds=(-300, -300, 1800, 1300),
                      nodata=-9999.0)
    assert one(check_harvest(Layers(frames=lay.frames, crs=lay.crs, dem=open_dem(whole)), vestal),
               "HRV-002", "b")["status"] == "info"


def test_no_dem(base) -> None:
    assert set(pick(base, "HRV-010")["status"]) == {"not_evaluated"}
    assert set(pick(base, "HRV-030")["status"]) == {"not_evaluated"}


def test_water_bars_from_grade(tmp_path, vestal) -> None:
    # 10 % plane along u: band 6-10 %, spacing 200 ft (shorter end) -> bars at 200, 400, 600, 800 ft
    # on a 1,000-ft road; a road along v on the same plane is flat: no bars, pass
    p = write_dem(tmp_path / "ten.tif", lambda u, v: 1000 + 0.10 * u, bounds=(-50, -50, 1100, 1100))
    lay = Layers(
        frames={
            "harvest_area": layer(["H"], [box(0, 0, 1000, 1000)]),
            "haul_roads": layer(
                ["UP", "LEVEL"], [LineString([(0, 100), (1000, 100)]), LineString([(500, 0), (500, 1000)])]
            ),
        },
        crs=CRS.from_user_input(NY_FT),
        dem=open_dem(p),
    )
    res = check_harvest(lay, vestal)
    up = one(res, "HRV-030", "UP")
    assert (up["status"], up["measured"]) == ("info", 4.0)
    assert "200 ft for 6-10 %" in up["message"] and "200-300 ft" in up["message"]
    wb = res.derived["water_bars"]
    assert sorted(wb.loc[wb["road_id"] == "UP", "dist_ft"]) == pytest.approx([200, 400, 600, 800], abs=1e-6)
    assert one(res, "HRV-030", "LEVEL")["status"] == "pass"
    # 10 ft contours: the DEM's cell centres run u -47.5..1097.5, so z 995.25..1109.75 and the levels
    # 1000..1100; each is the line u = (z - 1000) / 0.1 across the grid (v -47.5..1097.5), inside the
    # plan extent grown by 200 ft
    c = res.derived["contours"]
    assert c["elev_ft"].tolist() == [1000.0 + 10 * k for k in range(11)]
    for z, g in zip(c["elev_ft"], c.geometry):
        assert (g.bounds[0] - X0, g.bounds[2] - X0) == pytest.approx(((z - 1000) * 10, (z - 1000) * 10), abs=1e-6)
        assert (g.bounds[1] - Y0, g.bounds[3] - Y0) == pytest.approx((-47.5, 1097.5), abs=1e-6)
    b = one(res, "HRV-002", "b")
    assert b["status"] == "info" and "11 contour levels at 10 ft" in b["message"]


# ------------------------------------------------------------------------------------------
# CLI


def _to_gpkg(path: Path, lay: Layers) -> Path:
    for role, gdf in lay.frames.items():
        g = gdf.rename(columns={"feature_id": "id"})
        g.to_file(path, layer=role, driver="GPKG", engine="pyogrio")
    return path


def test_cli_harvest(runner, tmp_path, grade_dem) -> None:
    plan = _to_gpkg(tmp_path / "plan.gpkg", scene())
    out = tmp_path / "out"
    res = runner.invoke(main, ["harvest", str(plan), "--dem", str(grade_dem), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "harvest:" in res.stdout
    fc = json.loads((out / "findings.geojson").read_text("utf-8"))
    props = [f["properties"] for f in fc["features"]]
    assert any(
        p["rule_id"] == "HRV-024" and p["subject_id"] == "L2" and p["status"] == "violation" for p in props
    )
    assert any(
        p["rule_id"] == "HRV-025" and p["subject_id"] == "L3" and p["status"] == "violation" for p in props
    )
    assert (out / "results.gpkg").is_file() and (out / "landings.csv").is_file()
    import pyogrio

    names = {r[0] for r in pyogrio.list_layers(out / "results.gpkg")}
    assert {"findings_point", "findings_line", "findings_polygon", "findings_nogeom", "buffer_strips", "grade_runs",
            "water_bars", "contours"} <= names
    # --fail-on violation exits 1; a plan without harvest_area exits 2 with one line
    res = runner.invoke(main, ["harvest", str(plan), "--out", str(tmp_path / "o2"), "--fail-on", "violation"])
    assert res.exit_code == 1
    bad = tmp_path / "bad.gpkg"
    scene().frames["parcels"].rename(columns={"feature_id": "id"}).to_file(bad, layer="parcels", driver="GPKG")
    res = runner.invoke(main, ["harvest", str(bad), "--out", str(tmp_path / "o3")])
    assert res.exit_code == 2 and "harvest_area, landings, haul_roads, skid_trails" in res.stderr
    errors = [ln for ln in res.stderr.strip().splitlines() if not ln.startswith("warning: ")]
    assert len(errors) == 1 and errors[0].startswith("error: ")  # warnings about the inputs may come first
    # landings alone (no harvest area) is a plan: it runs
    only = tmp_path / "only.gpkg"
    scene().frames["landings"].rename(columns={"feature_id": "id"}).to_file(only, layer="landings", driver="GPKG")
    res = runner.invoke(main, ["harvest", str(only), "--out", str(tmp_path / "o4")])
    assert res.exit_code == 0, res.output


# ------------------------------------------------------------------------------------------
# the sample town: the deliberate violations of data/sample/README.md, found by feature id

SAMPLE = ROOT / "data" / "sample"


@pytest.fixture(scope="module")
def sample_findings(tmp_path_factory) -> pd.DataFrame:
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("sample_out")
    res = CliRunner().invoke(
        main,
        ["harvest", str(SAMPLE / "vestal_sample.gpkg"), "--dem", str(SAMPLE / "dem.tif"), "--out", str(out)],
    )
    assert res.exit_code == 0, res.output
    fc = json.loads((out / "findings.geojson").read_text("utf-8"))
    rows = pd.DataFrame([f["properties"] for f in fc["features"]])
    rows["has_geometry"] = [f["geometry"] is not None for f in fc["features"]]
    strips = gpd.read_file(out / "results.gpkg", layer="buffer_strips")
    rows.attrs["strips"] = strips
    return rows


def _status(rows: pd.DataFrame, rule_id: str, subject_id: str) -> set[str]:
    return set(rows.loc[(rows["rule_id"] == rule_id) & (rows["subject_id"] == subject_id), "status"])


def _measured(rows: pd.DataFrame, rule_id: str, subject_id: str, status: str) -> list[float]:
    sel = rows[(rows["rule_id"] == rule_id) & (rows["subject_id"] == subject_id) & (rows["status"] == status)]
    return list(sel["measured"])


def test_sample_licence_zoning_and_grades(sample_findings) -> None:
    r = sample_findings
    assert _status(r, "HRV-001", "HA-1") == {"review"} and _status(r, "HRV-001", "HA-2") == {"review"}
    assert _measured(r, "HRV-001", "HA-2", "review") == [57.0]  # 45 + 12 cords, contiguous same owner
    assert _measured(r, "HRV-003", "HA-1", "review") == pytest.approx([60.0])  # 60 ft from RA-2
    # H-1: steeper than 25 % for 670 ft (chainage 815-1485 ft, unsmoothed); the 15-ft smoothing
    # window of the rulebook moves each end by up to one 10-ft DEM cell
    assert _measured(r, "HRV-010", "H-1", "violation") == pytest.approx([670.0], abs=15)
    assert _status(r, "HRV-010", "H-2") == {"pass"}  # contour stretch on a 32 % side slope
    for fid in ("H-1", "H-2", "S-2"):
        assert _status(r, "HRV-011", fid) == {"violation"}, fid
    assert _status(r, "HRV-011", "S-1") == {"pass"}  # not a constructed skid trail
    assert _measured(r, "HRV-011", "H-1", "violation") == pytest.approx([680.0], abs=2)


def test_sample_streams_buffers_and_landings(sample_findings) -> None:
    r = sample_findings
    assert _measured(r, "HRV-012", "S-1", "violation") == pytest.approx([261.0], abs=5)
    for fid in ("H-2", "S-2", "S-3"):
        assert _status(r, "HRV-013", fid) == {"review"}, fid
    # RA-2 lines at y 756600 reach 40 ft into HA-1 (1,050 ft wide): 42,000 sq ft = 0.964 acres
    assert _measured(r, "HRV-021", "HA-1", "info") == pytest.approx([42_000 / SQFT_PER_ACRE], rel=1e-3)
    assert _measured(r, "HRV-022", "HA-2", "info")[0] > 0  # DW-001 reaches 10 ft into HA-2
    strips = r.attrs["strips"]
    assert "DW-003" not in set(strips["source_id"])  # a dwelling in RA-2 makes no buffer
    stream = r[
        (r["rule_id"] == "HRV-020") & (r["subject_id"] == "HA-1") & r["message"].str.contains("stream")
    ]
    assert stream["measured"].iloc[0] > 0
    assert _status(r, "HRV-024", "L-2") == {"violation"}
    assert _status(r, "HRV-024", "L-1") == {"pass"}
    assert _measured(r, "HRV-025", "L-3", "violation") == pytest.approx([95.0], abs=0.5)
    assert _status(r, "HRV-025", "L-1") == {"pass"}
    assert _measured(r, "HRV-026", "all", "review") == [3.0]
    for fid in ("L-1", "L-2", "L-3"):
        assert _status(r, "HRV-027", fid) == {"pass"}, fid
    assert r.loc[r["rule_id"] == "HRV-010", "has_geometry"].all()


# ------------------------------------------------------------------------------------------
# review fixes: partly missing inputs, split streams, side roads, switch spelling


def test_side_road_row_distance_measured_from_its_own_widened_centre_line(vestal) -> None:
    # ROW polygon W1 (v in [1005,1055]) maps R1 only; side road R2 runs from (700,1030) south to
    # (700,600) and has no ROW polygon. Its 425 ft outside W1 is widened by half the default 50 ft
    # ROW: edge at u=675. L3 = [600,650] x [880,900] -> 675 - 650 = 25 ft (W1 is 1005 - 900 = 105 ft).
    roads = layer(
        ["R1", "R2"],
        [LineString([(-100, 1030), (1600, 1030)]), LineString([(700, 1030), (700, 600)])],
        row_width_ft=[50.0, np.nan],
    )
    res = check_harvest(scene(row=True, roads=roads), vestal)
    l3 = one(res, "HRV-025", "L3")
    assert (l3["status"], l3["measured"]) == ("violation", pytest.approx(25.0))
    assert "roads R2" in l3["message"]
    # and R2 gets its own 50 ft road buffer strip from its centre line
    strips = res.derived["buffer_strips"].query("kind == 'road'")
    assert set(strips["source_id"]) == {"row W1", "R2"}


def test_crossing_at_the_joint_of_two_stream_features_counted_once(vestal) -> None:
    # S1 split into S1a (v <= 500) and S1b (v >= 500) at (200,500), exactly where HR2 crosses
    streams = layer(
        ["S1a", "S1b", "S2"],
        [
            LineString([(200, -100), (200, 500)]),
            LineString([(200, 500), (200, 1100)]),
            LineString([(800, -100), (800, 1100)]),
        ],
        kind=["perennial", "perennial", "intermittent"],
    )
    res = check_harvest(scene(streams=streams), vestal)
    hr2 = one(res, "HRV-013", "HR2")  # one crossing, not two
    assert hr2["status"] == "review"
    assert (hr2.geometry.x - X0, hr2.geometry.y - Y0) == pytest.approx((200.0, 500.0))
    assert hr2["measured"] == pytest.approx(20.0)  # 220 - 200 ft along HR2
    assert "S1a" in hr2["message"] and "S1b" in hr2["message"]


def test_commercial_volume_partly_missing_or_mixed_units(vestal) -> None:
    # A and B touch (same owner by default): A 15 cords, B volume unknown -> the sum is unknown
    ab = [box(0, 0, 100, 100), box(100, 0, 200, 100)]
    res = check_harvest(scene(harvest_area=layer(["A", "B"], ab, cords=[15.0, np.nan])), vestal)
    assert one(res, "HRV-001", "A")["status"] == "not_evaluated"
    assert one(res, "HRV-001", "B")["status"] == "not_evaluated"
    # A 15 cords, B 1,280 cu ft = 1280 / 128 = 10 cords -> 25 cords > 20: licence required
    res = check_harvest(
        scene(harvest_area=layer(["A", "B"], ab, cords=[15.0, np.nan], cubic_feet=[np.nan, 1280.0])), vestal
    )
    a = one(res, "HRV-001", "A")
    assert (a["status"], a["measured"], a["threshold"]) == ("review", 25.0, 20.0)
    # the known part alone already exceeds: 25 cords > 20 whatever B holds
    res = check_harvest(scene(harvest_area=layer(["A", "B"], ab, cords=[25.0, np.nan])), vestal)
    assert one(res, "HRV-001", "B")["status"] == "review"


def test_commercial_volume_zero_cords_does_not_hide_cubic_feet(vestal) -> None:
    # § 44-VI-6(B): "greater than ... 2,560 cubic feet". An area giving cords 0 (a blank an export filled with
    # zero) and its volume in cu ft was judged on the 0 cords alone: 3,000 cu ft passed with "0 cords = 0 cu ft".
    # The larger of the two measures counts: 2,560 cu ft (= 20 cords) is at the limit, 2,561 just over it
    ha = layer(["A", "B", "C", "D"], [box(0, 0, 100, 100), box(300, 0, 400, 100), box(600, 0, 700, 100),
                                      box(900, 0, 1000, 100)],
               cords=[0.0, 0.0, 0.0, 25.0], cubic_feet=[3000.0, 2560.0, 2561.0, 1280.0], parcel_id=["P1", "P2", "P3", "P4"])
    parcels = layer(["P1", "P2", "P3", "P4"], [box(-10, -10, 110, 110), box(290, -10, 410, 110),
                                                box(590, -10, 710, 110), box(890, -10, 1010, 110)], owner=list("WXYZ"))
    res = check_harvest(_volume_scene(ha, parcels), vestal)
    a = one(res, "HRV-001", "A")
    assert (a["status"], a["measured"]) == ("review", pytest.approx(3000 / 128))
    assert "3,000 cu ft" in a["message"]
    assert one(res, "HRV-001", "B")["status"] == "pass"
    assert one(res, "HRV-001", "C")["status"] == "review"
    assert (one(res, "HRV-001", "D")["status"], one(res, "HRV-001", "D")["measured"]) == ("review", 25.0)


def test_commercial_volume_exemptions_from_the_rulebook(tmp_path) -> None:
    rb_path = tmp_path / "rb.yaml"
    rb_path.write_text(
        "extends: vestal\nrules:\n  - id: HRV-001\n    params:\n      exemptions:\n"
        "        - {key: orchard_clearing, text: 'Orchard clearing.', citation: 'Town Law § 9'}\n"
    )
    res = check_harvest(scene(), load_rulebook(rb_path))
    msg = one(res, "HRV-001", "H1")["message"]  # 25 cords: review
    assert "Orchard clearing" in msg and "Town Law § 9" in msg
    assert "44-VI-6(D)" not in msg and "Christmas" not in msg


def test_constructed_flag_as_text(vestal) -> None:
    # ST1 (300 ft in SC1) says "no": not constructed -> pass; ST2 (crosses SC1 u in [150,250]:
    # 100 ft) has an empty flag -> not stated -> treated as constructed (default switch)
    trails = layer(
        ["ST1", "ST2"],
        [LineString([(202, 100), (202, 400)]), LineString([(100, 700), (300, 700)])],
        constructed=["no", " "],
    )
    res = check_harvest(scene(skid_trails=trails), vestal)
    assert one(res, "HRV-011", "ST1")["status"] == "pass"
    st2 = one(res, "HRV-011", "ST2")
    assert (st2["status"], st2["measured"]) == ("violation", pytest.approx(100.0))


def test_constructed_word_neither_yes_nor_no_is_not_stated(vestal) -> None:
    # "maybe" was read as no, so ST1 (300 ft in SC1) passed as "not a constructed skid trail"; it is
    # not stated, as an empty flag is: treated as constructed (default switch) -> violation
    trails = layer(["ST1"], [LineString([(202, 100), (202, 400)])], constructed=["maybe"])
    st1 = one(check_harvest(scene(skid_trails=trails), vestal), "HRV-011", "ST1")
    assert (st1["status"], st1["measured"]) == ("violation", pytest.approx(300.0))
    assert "not a constructed skid trail" not in st1["message"]


def test_zoning_proximity_unknown_district_not_pass(vestal) -> None:
    # no zoning layer; P2's zoning field is empty and P2 lies 50 ft from H1: not a pass
    parcels = layer(
        ["P1", "P2", "P3"],
        [box(-200, -50, 1600, 1005), box(-200, -600, 1600, -50), box(1600, -600, 2400, 1005)],
        zoning=["RR", None, "C-1"],
    )
    res = check_harvest(scene(parcels=parcels), vestal)
    h1 = one(res, "HRV-003", "H1")
    assert h1["status"] == "not_evaluated" and "P2" in h1["message"]
    # L1 at (500,500): P2 is 550 ft away, P1 (RR) and P3 (C-1) are known -> pass
    assert one(res, "HRV-003", "L1")["status"] == "pass"



def _spelled_scene(rr: str, ra1: str, *, zoning_layer: bool) -> Layers:
    """The scene with P1's district written ``rr`` and P2's ``ra1`` (in the parcels' zoning field,
    or in a zoning layer of the same polygons), plus landing L9 at (700, 20): 70 ft above P2's top
    line, inside the 100-ft strip of an RA-1 property line (§ 44-VI-6(F)(6))."""
    ids = ["P1", "P2", "P3"]
    boxes = [box(-200, -50, 1600, 1005), box(-200, -600, 1600, -50), box(1600, -600, 2400, 1005)]
    landings = layer(["L1", "L2", "L3", "L9"],
                     [Point(500, 500), Point(220, 500), box(600, 880, 650, 900), Point(700, 20)])
    if zoning_layer:
        return scene(parcels=layer(ids, boxes), zoning=layer(["Z1", "Z2", "Z3"], boxes, district=[rr, ra1, "C-1"]),
                     landings=landings)
    return scene(parcels=layer(ids, boxes, zoning=[rr, ra1, "C-1"]), landings=landings)


@pytest.mark.parametrize("zoning_layer", [False, True], ids=["parcels.zoning", "zoning layer"])
@pytest.mark.parametrize("rr, ra1", [("rr", "RA1"), ("R R", "RA 1"), ("r-r", "ra-1"), ("R_R", "RA_1"),
                                     (" r.r. ", " Ra.1 ")])
def test_district_spelling_ignores_case_spaces_hyphens_underscores_dots(vestal, rr, ra1, zoning_layer) -> None:
    # "property zoned RA-1" (§ 44-VI-6(G)) and "a property line within an RA-1 ... district",
    # "a residential dwelling in an RR district" (§ 44-VI-6(F)(6)): P2 written RA1, "RA 1", ra-1 ... is
    # the rulebook's RA-1 and P1 written rr, "R R" ... its RR, so every harvest finding (status,
    # measure, message) is the one of the plan zoned "RR", "RA-1"
    ref = check_harvest(_spelled_scene("RR", "RA-1", zoning_layer=zoning_layer), vestal)
    res = check_harvest(_spelled_scene(rr, ra1, zoning_layer=zoning_layer), vestal)
    # the reference: H1 50 ft from RA-1 (review), the band v in [0,50] of H1 (50,000 sq ft), D1's RR
    # circle, L9 in P2's strip
    h1 = one(ref, "HRV-003", "H1")
    assert (h1["status"], h1["measured"]) == ("review", pytest.approx(50.0))
    assert one(ref, "HRV-021", "H1")["measured"] == pytest.approx(50_000 / SQFT_PER_ACRE, rel=1e-9)
    assert one(ref, "HRV-022", "H1")["measured"] * SQFT_PER_ACRE == pytest.approx(ARC * math.pi * 100**2, rel=1e-6)
    assert one(ref, "HRV-024", "L9")["status"] == "violation"
    cols = ["rule_id", "subject_layer", "subject_id", "status", "measured", "message"]
    key = ["rule_id", "subject_layer", "subject_id", "message"]
    want = ref.findings[cols].sort_values(key).reset_index(drop=True)
    got = res.findings[cols].sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    strips = ["kind", "source_id", "measured_from"]
    assert sorted(map(tuple, res.derived["buffer_strips"][strips].to_numpy().tolist())) == sorted(
        map(tuple, ref.derived["buffer_strips"][strips].to_numpy().tolist()))
    assert len(res.derived["possible_buffer_strips"]) == 0


def test_between_bands_switch_spelling(tmp_path) -> None:
    # 5.5 % plane along u; the rulebook's "shallower" takes the 2-5 % band: 300 ft spacing on a
    # 1,000 ft road -> bars at 300, 600, 900 ft
    p = write_dem(tmp_path / "g.tif", lambda u, v: 1000 + 0.055 * u, bounds=(-50, -50, 1100, 1100))
    rb_path = tmp_path / "rb.yaml"
    rb_path.write_text(
        "extends: vestal\nrules:\n  - id: HRV-030\n    switches:\n      between_bands: shallower\n"
    )
    lay = Layers(
        frames={
            "harvest_area": layer(["H"], [box(0, 0, 1000, 1000)]),
            "haul_roads": layer(["UP"], [LineString([(0, 100), (1000, 100)])]),
        },
        crs=CRS.from_user_input(NY_FT),
        dem=open_dem(p),
    )
    res = check_harvest(lay, load_rulebook(rb_path))
    wb = res.derived["water_bars"]
    assert sorted(wb["dist_ft"]) == pytest.approx([300, 600, 900], abs=1e-6)
    assert set(wb["band"]) == {"2-5 %"}
    from geoconstraints.rules import harvest

    assert not hasattr(harvest, "_BETWEEN_BANDS")  # no translation shim between spellings


def test_buffer_findings_without_strip_keep_the_harvest_area_as_place(base) -> None:
    # H2 = [1000,1500] x [0,1000] holds no dwelling strip (D1's circle ends at u=1000): 0 acres,
    # and the finding is placed on H2 itself (500 * 1000 = 500,000 sq ft), never without geometry
    h2 = one(base, "HRV-022", "H2")
    assert h2["measured"] == pytest.approx(0.0)
    assert h2.geometry is not None and h2.geometry.area == pytest.approx(500_000.0)


# ------------------------------------------------------------------------------------------
# the context: derived data only for the rules that read it; tables from the findings


def test_derived_data_only_when_a_rule_reads_it(vestal, grade_dem, monkeypatch) -> None:
    from geoconstraints.geometry import buffers, terrain
    from geoconstraints.rulebook.model import Rulebook

    calls: list[str] = []
    for mod, name in ((terrain, "roads_terrain"), (terrain, "plan_contours"), (buffers, "build_buffers")):
        real = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda *a, _real=real, _n=name, **k: calls.append(_n) or _real(*a, **k))
    only = Rulebook("two", "1", "two rules", {r: vestal[r] for r in ("HRV-001", "HRV-025")})
    res = check_harvest(scene(dem=open_dem(grade_dem)), only)
    assert calls == []  # nothing derived: no rule reads it
    assert set(res.findings["rule_id"]) == {"HRV-001", "HRV-025"}
    assert "roads" not in res.tables and len(res.derived["grade_runs"]) == len(res.derived["buffer_strips"]) == 0
    # the landings table carries what HRV-025 measured, and nothing it did not
    t = res.tables["landings"].set_index("landing_id")
    assert t["row_distance_ft"].to_dict() == pytest.approx({"L1": 505.0, "L2": 505.0, "L3": 105.0})
    assert t[["in_buffer", "connected"]].isna().all().all()
    calls.clear()
    with_grades = Rulebook("g", "1", "grades", {r: vestal[r] for r in ("HRV-010", "HRV-024")})
    res = check_harvest(scene(dem=open_dem(grade_dem)), with_grades)
    assert sorted(calls) == ["build_buffers", "roads_terrain"]
    # HRV-024 alone: the strips of the buffer rules absent from the rulebook are not built, and said so
    assert res.tables["landings"].set_index("landing_id").loc["L1", "in_buffer"] is None
    assert one(res, "HRV-024", "L1")["status"] == "not_evaluated"
    assert "rule HRV-020 is not in the rulebook" in one(res, "HRV-024", "L1")["message"]


def test_unstated_constructed_flag_follows_the_switch(tmp_path) -> None:
    # ST1 (300 ft in SC1) has no constructed value: read as random individual tree skidding -> pass,
    # saying so; ST2 says false -> pass as not constructed
    rb_path = tmp_path / "rb.yaml"
    rb_path.write_text(
        "extends: vestal\nrules:\n  - id: HRV-011\n    switches:\n      unflagged_skid_trails: treat_as_random_skidding\n"
    )
    res = check_harvest(scene(), load_rulebook(rb_path))
    st1 = one(res, "HRV-011", "ST1")
    assert st1["status"] == "pass" and "constructed not stated, read as random individual tree skidding" in st1["message"]
    assert np.isnan(st1["measured"])
    assert "not a constructed skid trail" in one(res, "HRV-011", "ST2")["message"]


# ------------------------------------------------------------------------------------------
# streams of any kind: the rulebook's vocabulary (issue 10 item 5)


def test_stream_vocabulary_reads_nhd_osm_and_free_text(vestal) -> None:
    from geoconstraints.rules.harvest import classify_streams, stream_vocabulary

    streams = gpd.GeoDataFrame(
        {"feature_id": [f"s{i}" for i in range(9)],
         "kind": ["Perennial", "river", None, None, None, None, "swale", None, "intermittent"],
         "FCODE": [None, None, 46003, 46007, 56600, None, None, None, 46006],
         "Waterway": [None, None, None, None, None, "canal", None, "dam", None]},
        geometry=[LineString([(0, i), (10, i)]) for i in range(9)])
    out, kinds = classify_streams(streams, stream_vocabulary(vestal))
    # s4 (FCODE 56600 coastline) and s7 (OSM dam) are not streams; the kind field wins over FCODE (s8)
    assert out["feature_id"].tolist() == ["s0", "s1", "s2", "s3", "s5", "s6", "s8"]
    assert out["kind"].tolist() == ["perennial", "perennial", "intermittent", "ephemeral", None, None, "intermittent"]
    assert kinds.unmapped == ["kind=swale (1)"] and kinds.blank == 0
    t = kinds.table.set_index(["field", "value"])["kind"]
    assert t[("FCODE", "46003")] == "intermittent" and t[("waterway", "canal")] == "unknown"
    assert "kind=swale (1)" in kinds.warning() and "counted as streams" in kinds.warning()


def test_streams_of_any_kind_count_never_dropped_silently(vestal) -> None:
    # S1 (u=200) "river" -> perennial; S2 (u=800) "canal" -> unknown flow, a stream; S3 (u=1300, in H2)
    # "swale" is not in the vocabulary -> a stream, with a warning; S4 (u=600) FCODE 46007 ephemeral: none.
    # Each counted stream makes a 100-ft strip across the 1,000-ft-high areas: 100,000 sq ft each
    streams = layer(["S1", "S2", "S3", "S4"],
                    [LineString([(u, -100), (u, 1100)]) for u in (200, 800, 1300, 600)],
                    kind=["river", "canal", "swale", None], FCODE=[None, None, None, 46007])
    res = check_harvest(scene(streams=streams), vestal)
    h1 = pick(res, "HRV-020", "H1")
    h1 = h1[h1["message"].str.contains("stream buffer")].iloc[0]
    assert h1["measured"] * SQFT_PER_ACRE == pytest.approx(200_000, rel=1e-9)  # S1 + S2, not S4
    h2 = pick(res, "HRV-020", "H2")
    assert h2[h2["message"].str.contains("stream buffer")].iloc[0]["measured"] * SQFT_PER_ACRE == pytest.approx(
        100_000, rel=1e-9)  # S3
    assert any("kind=swale (1)" in n for n in res.notes)
    # HR3 (u 500..625 at v=890) crosses the ephemeral S4 at u=600: not a stream crossing
    assert pick(res, "HRV-013", "HR3", "review").empty
    # a skid trail along inside the canal's channel is skidding in it
    trails = layer(["T"], [LineString([(802, 100), (802, 400)])])
    assert one(check_harvest(scene(streams=streams, skid_trails=trails), vestal), "HRV-012", "T")["status"] == \
        "violation"


def test_layers_command_shows_the_stream_vocabulary(runner, tmp_path) -> None:
    s = gpd.GeoDataFrame({"id": ["a", "b", "c"], "FCODE": [46003, 46006, 42800], "kind": [None, None, None]},
                         geometry=[LineString([(X0, Y0 + i), (X0 + 100, Y0 + i)]) for i in range(3)], crs=NY_FT)
    path = tmp_path / "streams.gpkg"
    s.to_file(path, layer="streams", driver="GPKG")
    res = runner.invoke(main, ["layers", str(path)])
    assert res.exit_code == 0, res.output
    assert "FCODE=46003 -> intermittent (1 feature)" in res.stdout
    assert "FCODE=42800 -> not mapped: counted as a stream of unknown kind (1 feature)" in res.stdout


# ------------------------------------------------------------------------------------------
# HRV-001: one parcel or a series of contiguous parcels in the same ownership (§ 44-VI-6(B), (C))


def _volume_scene(ha, parcels=None) -> Layers:
    f = {"harvest_area": ha}
    if parcels is not None:
        f["parcels"] = parcels
    return Layers(frames=f, crs=CRS.from_user_input(NY_FT))


TWO_AREAS = [box(0, 0, 100, 100), box(300, 0, 400, 100)]  # 200 ft apart
"""Two 100-ft squares 200 ft apart (u 100..300 between them)."""


def test_volume_summed_per_parcel_not_per_touching_polygon(vestal) -> None:
    # A and B (15 cords each) lie 200 ft apart on one parcel P: 15 + 15 = 30 > 20 cords
    ha = layer(["A", "B"], TWO_AREAS, cords=[15.0, 15.0])
    res = check_harvest(_volume_scene(ha, layer(["P"], [box(-50, -50, 450, 150)])), vestal)
    a = one(res, "HRV-001", "A")
    assert (a["status"], a["measured"]) == ("review", 30.0) and "on parcel P" in a["message"]
    # the same, named by the areas' parcel_id instead of a parcels layer
    ha2 = layer(["A", "B"], TWO_AREAS, cords=[15.0, 15.0], parcel_id=["P", "P"])
    assert one(check_harvest(_volume_scene(ha2), vestal), "HRV-001", "B")["measured"] == 30.0


def test_volume_summed_over_contiguous_parcels_of_one_owner(vestal) -> None:
    # P1 = u -50..200 and P2 = u 200..450 touch at u=200; A on P1, B on P2
    parcels = layer(["P1", "P2"], [box(-50, -50, 200, 150), box(200, -50, 450, 150)], owner=["Smith", " SMITH "])
    ha = layer(["A", "B"], TWO_AREAS, cords=[15.0, 15.0])
    a = one(check_harvest(_volume_scene(ha, parcels), vestal), "HRV-001", "A")
    assert (a["status"], a["measured"]) == ("review", 30.0)
    assert "contiguous parcels of one owner (P1, P2)" in a["message"]
    # two owners: each parcel holds 15 cords, not more than 20: no licence
    parcels2 = layer(["P1", "P2"], [box(-50, -50, 200, 150), box(200, -50, 450, 150)], owner=["Smith", "Jones"])
    res = check_harvest(_volume_scene(ha, parcels2), vestal)
    assert one(res, "HRV-001", "A")["status"] == one(res, "HRV-001", "B")["status"] == "pass"
    # one owner but the parcels do not touch (a 10-ft gap): not a series of contiguous parcels
    parcels3 = layer(["P1", "P2"], [box(-50, -50, 195, 150), box(205, -50, 450, 150)], owner=["Smith", "Smith"])
    assert one(check_harvest(_volume_scene(ha, parcels3), vestal), "HRV-001", "A")["status"] == "pass"


def test_volume_when_ownership_cannot_be_told(vestal) -> None:
    # no parcels layer, no parcel_id: A and B may lie on one owner's land -> review, saying so
    ha = layer(["A", "B"], TWO_AREAS, cords=[15.0, 15.0])
    a = one(check_harvest(_volume_scene(ha), vestal), "HRV-001", "A")
    assert (a["status"], a["measured"]) == ("review", 30.0)
    assert "which the inputs cannot tell" in a["message"] and "no parcels layer" in a["message"]
    # parcels touching but no owner field: the same
    parcels = layer(["P1", "P2"], [box(-50, -50, 200, 150), box(200, -50, 450, 150)])
    a = one(check_harvest(_volume_scene(ha, parcels), vestal), "HRV-001", "A")
    assert a["status"] == "review" and "owner not stated" in a["message"]
    # 10 + 10 = 20 cords, not more than 20, however they are grouped: pass, saying what was summed
    small = layer(["A", "B"], TWO_AREAS, cords=[10.0, 10.0])
    a = one(check_harvest(_volume_scene(small), vestal), "HRV-001", "A")
    assert (a["status"], a["measured"]) == ("pass", 20.0) and "may lie on one owner's land" in a["message"]
    # different stated owners on the areas themselves: never one ownership
    owned = layer(["A", "B"], TWO_AREAS, cords=[15.0, 15.0], owner=["Smith", "Jones"])
    assert one(check_harvest(_volume_scene(owned), vestal), "HRV-001", "A")["status"] == "pass"


# ------------------------------------------------------------------------------------------
# HRV-012 / HRV-013: crossing or skidding in the channel, by geometry (one reading for both)

CHANNEL_STREAMS = {
    # a stream line along v=0 (channel v -5..5) and a 60-ft river polygon v 300..360
    "SL": LineString([(-500, 0), (2500, 0)]),
    "SP": box(-500, 300, 2500, 360),
}

CHANNEL_TRAILS = {
    # id: (geometry, crossing?, length inside the channel, ft)
    "T1": (LineString([(0, -50), (0, 50)]), True, 10.0),  # straight across the line channel
    "T2": (LineString([(200, -50), (200, -2), (249, -2), (249, -50)]), False, 3 + 49 + 3),  # 49 ft along, same bank
    "T2b": (LineString([(400, -50), (400, -2), (449, -2), (449, 50)]), False, 3 + 49 + 7),  # 49 ft along, other bank
    "T3": (LineString([(600, 250), (600, 420)]), True, 60.0),  # straight across the 60-ft river
    "T4": (LineString([(800, 250), (970, 420)]), True, 60 * math.sqrt(2)),  # 45 degrees: 84.9 <= 2 x 60
    "T5": (LineString([(1000 - 50 / math.tan(math.radians(20)), -50), (1000 + 50 / math.tan(math.radians(20)), 50)]),
           False, 10 / math.sin(math.radians(20))),  # 20 degrees: 29.2 > 2 x 10 ft
    "T6": (LineString([(1200, 250), (1200, 330)]), False, 30.0),  # ends in the river
    "T7": (LineString([(1400, 250), (1420, 310), (1440, 250)]), False, 2 * math.hypot(10 / 3, 10)),  # dips in, out
    "T8": (LineString([(1600, 100), (1600, 200)]), None, 0.0),  # meets no channel
}


def _channel_result(vestal):
    trails = layer(list(CHANNEL_TRAILS), [g for g, _, _ in CHANNEL_TRAILS.values()])
    roads = layer(["HR1", "HR2"], [LineString([(1800, 250), (1800, 330), (2100, 330), (2100, 420)]),
                                   LineString([(2200, -50), (2200, 50)])])
    streams = layer(list(CHANNEL_STREAMS), list(CHANNEL_STREAMS.values()), kind=["perennial", "perennial"])
    return check_harvest(Layers(frames={"skid_trails": trails, "haul_roads": roads, "streams": streams},
                                crs=CRS.from_user_input(NY_FT)), vestal)


def test_crossing_or_skidding_is_one_of_the_two_for_every_trail(vestal) -> None:
    res = _channel_result(vestal)
    for tid, (_, crossing, inside) in CHANNEL_TRAILS.items():
        h12, h13 = one(res, "HRV-012", tid), pick(res, "HRV-013", tid)
        crossings = h13[h13["status"] == "review"]
        if crossing is None:
            assert h12["status"] == "pass" and list(h13["status"]) == ["pass"], tid
            continue
        # exactly one of the two: a crossing (HRV-013 review, HRV-012 pass) or skidding (HRV-012 violation)
        assert (len(crossings), h12["status"]) == ((1, "pass") if crossing else (0, "violation")), tid
        assert h12["measured"] == pytest.approx(inside, abs=1e-5), tid  # the edge is in: +1e-6 ft a side
    t3 = one(res, "HRV-013", "T3", "review")  # at the middle of the part across: (600, 330), 80 ft along
    assert (t3.geometry.x - X0, t3.geometry.y - Y0, t3["measured"]) == pytest.approx((600, 330, 80))
    assert "along the channel, not across it" in one(res, "HRV-012", "T2b")["message"]
    assert "ends inside the channel" in one(res, "HRV-012", "T6")["message"]
    assert "leaves by the bank it entered" in one(res, "HRV-012", "T7")["message"]
    # haul roads: the crossing and the stretch along inside the river both listed for review
    hr1 = one(res, "HRV-013", "HR1", "review")
    assert "runs along inside the channel" in hr1["message"]
    assert "crossing of stream SL" in one(res, "HRV-013", "HR2", "review")["message"]


# ------------------------------------------------------------------------------------------
# missing data is never no constraint (issue 10 item 6)


def test_zoning_layer_gap_is_not_a_pass(vestal) -> None:
    # a zoning layer covering u -400..1900, v -400..1000 only: the land north of v=1055 (beyond the
    # road's right-of-way v 1005..1055) within 300 ft of H1 is not covered -> not_evaluated, with acres.
    # L1 at (500,500): its 300-ft circle reaches v=800, covered -> pass
    zoning = layer(["Z1"], [box(-400, -400, 1900, 1000)], district=["RR"])
    zoning2 = layer(["Z1", "Z2"], [box(-400, -400, 1900, 1000), box(-400, 1000, 1900, 1400)], district=["RR", "C-1"])
    res = check_harvest(scene(zoning=zoning), vestal)
    l1 = one(res, "HRV-003", "L1")
    assert l1["status"] == "pass"
    hr1 = one(res, "HRV-003", "HR1")  # HR1 from (500,500) to (500,1030): its 300-ft ring reaches v=1330
    # uncovered: v 1055..1330 less the ring's rounded top; the strip v 1000..1005 is zoning up to 1000 and
    # ROW from 1005: 5 ft x 600 (u 200..800) = 3,000 sq ft of it uncovered too
    assert hr1["status"] == "not_evaluated" and "not covered by the zoning layer" in hr1["message"]
    full = check_harvest(scene(zoning=zoning2), vestal)
    assert one(full, "HRV-003", "HR1")["status"] == "pass"


def test_dwelling_of_unknown_district_makes_a_possible_strip(vestal) -> None:
    # D3 at (500,620) lies outside every parcel: its district is unknown, it may be RR. L1 at (500,500) is
    # 120 ft from it, inside its would-be 100-ft strip? No: 120 > 100. Move it to (500,580): 80 ft -> review.
    dw = layer(["D1", "D2", "D3"], [Point(900, 600), Point(2000, 0), Point(500, 580)])
    parcels = layer(["P1", "P2", "P3"], [box(-200, -50, 450, 1005), box(-200, -600, 1600, -50),
                                         box(1600, -600, 2400, 1005)], zoning=["RR", "RA-1", "C-1"])
    res = check_harvest(scene(dwellings=dw, parcels=parcels), vestal)
    l1 = one(res, "HRV-024", "L1")
    assert l1["status"] == "review" and "district unknown" in l1["message"] and "D3" in l1["message"]
    h1 = one(res, "HRV-022", "H1")
    assert h1["status"] == "not_evaluated" and "D3" in h1["message"]
    assert set(res.derived["possible_buffer_strips"]["source_id"]) >= {"D3"}
    assert one(res, "HRV-023", "H1")["status"] == "info"  # it holds known strips too
    # the landing table says not known rather than outside
    assert res.tables["landings"].set_index("landing_id").loc["L1", "in_buffer"] is None


def test_parcel_of_unknown_district_makes_property_line_strips_possible(vestal) -> None:
    # P2 (south of H1, 50 ft away) has no zoning value: it may be RA-1; its would-be 100-ft strip reaches
    # 50 ft into H1 and H2 -> HRV-021 not_evaluated, naming it
    parcels = layer(["P1", "P2", "P3"], [box(-200, -50, 1600, 1005), box(-200, -600, 1600, -50),
                                         box(1600, -600, 2400, 1005)], zoning=["RR", None, "C-1"])
    res = check_harvest(scene(parcels=parcels), vestal)
    h1 = one(res, "HRV-021", "H1")
    assert h1["status"] == "not_evaluated" and "P2" in h1["message"]
    # 1000 x 50 = 50,000 sq ft = 1.15 acres possible inside H1
    assert f"{50_000 / SQFT_PER_ACRE:.2f} acres" in h1["message"]


# ------------------------------------------------------------------------------------------
# HRV-030: water bars from the road's net grade, stable under reprojection and noise


def _muncy_variants(tmp_path):
    """The Muncy lidar DEM (EPSG:2271, feet), the same reprojected with rasterio to UTM 18N at 5 m with z
    in metres, and the same with seeded uniform noise of +-0.5 ft per cell."""
    from common import MUNCY_DEM
    from rasterio.warp import Resampling, calculate_default_transform, reproject

    with rasterio.open(MUNCY_DEM) as src:
        arr = src.read(1).astype("float64")
        t, w, h = calculate_default_transform(src.crs, "EPSG:32618", src.width, src.height, *src.bounds, resolution=5.0)
        utm = np.full((h, w), -9999.0)
        reproject(arr, utm, src_transform=src.transform, src_crs=src.crs, dst_transform=t, dst_crs="EPSG:32618",
                  resampling=Resampling.bilinear, dst_nodata=-9999.0)
        with rasterio.open(tmp_path / "utm.tif", "w", driver="GTiff", width=w, height=h, count=1, dtype="float64",
                           crs="EPSG:32618", transform=t, nodata=-9999.0) as dst:
            dst.write(np.where(utm == -9999.0, utm, utm * 0.3048), 1)
            dst.units = ("m",)
        prof = dict(src.profile, dtype="float64")
        with rasterio.open(tmp_path / "noisy.tif", "w", **prof) as dst:
            dst.write(arr + np.random.default_rng(7).uniform(-0.5, 0.5, arr.shape), 1)
    return {"ft": open_dem(MUNCY_DEM, z_units="ft"), "utm_m": open_dem(tmp_path / "utm.tif"),
            "noisy": open_dem(tmp_path / "noisy.tif", z_units="ft")}


MUNCY_ROADS = {
    "level": LineString([(2234000, 383000), (2235500, 383000)]),  # valley floor: 3 ft of relief in 1,500 ft
    "west-ridge": LineString([(2220300, 386000), (2224000, 381000)]),
    "se-hills": LineString([(2228000, 373500), (2230500, 371500), (2234000, 372200), (2237500, 370800)]),
    "transect": LineString([(2221000, 380000), (2239000, 375000)]),
}


@pytest.mark.parametrize(("steepest", "expected"), [
    (1.99, "pass"),  # just under 2 %: no water bar required
    (2.0 - 1e-9, "info"),  # 2 % as float noise computes it: at 2 %, as the bars are placed (before: pass)
    (2.0, "info"),  # at 2 %: the table's first band (2-5 %) starts there
    (2.01, "info"),  # just over
])
def test_water_bars_pass_only_under_the_minimum_grade_as_placed(vestal, steepest, expected) -> None:
    # § 44-VI-6(F)(8), the model-law table from 2 %: a road whose walk placed no bar (the next bar would
    # fall at its end) is pass, "grade under 2 %", only when its steepest net grade is under 2 % by the
    # same test that places the bars (terrain.under_min_grade), not by a bare `<` that called 2 % with
    # 1e-9 of float noise under it
    from geoconstraints.geometry import terrain as tr
    from geoconstraints.rulebook.model import FindingRows

    rule = vestal["HRV-030"]
    rows = FindingRows(rule, CRS.from_user_input(NY_FT))
    # profiled on 10-ft cells: a pass needs the DEM's cell size known and within max_dem_cell_ft
    rt = tr.RoadTerrain("haul_roads", "R", 150.0, evaluated_length_ft=150.0, steepest_net_grade_pct=steepest,
                        dem_cell_ft=10.0)
    hv._water_bar_row(rows, rt, _g(LineString([(0, 0), (150, 0)])), rule)
    f = rows.frame()
    assert f["status"].tolist() == [expected]
    assert tr.under_min_grade(steepest, rule.t("min_grade_pct")) == (expected == "pass")


def test_water_bars_stable_on_real_lidar_reprojected_and_noisy(tmp_path, vestal) -> None:
    dems = _muncy_variants(tmp_path)
    hr = gpd.GeoDataFrame({"feature_id": list(MUNCY_ROADS)}, geometry=list(MUNCY_ROADS.values()), crs="EPSG:2271")
    counts = {}
    for name, dem in dems.items():
        res = check_harvest(Layers(frames={"haul_roads": hr}, crs=CRS.from_user_input("EPSG:2271"), dem=dem), vestal)
        counts[name] = {fid: one(res, "HRV-030", fid)["measured"] for fid in MUNCY_ROADS}
        level = one(res, "HRV-030", "level")
        assert (level["status"], level["measured"]) == ("pass", 0.0), name  # net grade under 2 % throughout
    for fid in MUNCY_ROADS:
        ref = counts["ft"][fid]
        for name in ("utm_m", "noisy"):
            assert abs(counts[name][fid] - ref) <= max(2, 0.2 * ref), (fid, name, counts)
    assert counts["ft"]["se-hills"] >= 20  # the hills call for bars: never a vacuous comparison


def _pitch_dem(path: Path, noise: float = 0.0) -> Path:
    # level at 1,000 ft except a 200-ft pitch at 12 % (u 4000..4200, rising 24 ft), 5-ft cells
    return write_dem(path, lambda u, v: 1000 + 0.12 * np.clip(u - 4000, 0, 200)
                     + noise * np.random.default_rng(3).uniform(-1, 1, np.shape(u)), bounds=(-50, -50, 8300, 50))


def test_water_bars_of_a_level_road_with_one_pitch(tmp_path, vestal) -> None:
    # 8,200 ft level but for the pitch. Candidate spacings 100 / 200 / 300 ft (shorter ends). The walk
    # moves on 100 ft at a time while every stretch ahead is level (net 0 %); at p = 3,800:
    # [3800, 4100] rises 12 ft: 12 / 300 = 4 % -> band 2-5 %, spacing 300 -> bar at 4,100. At 4,100:
    # [4100, 4400] rises 12 ft: 4 % -> 300 ft allowed -> bar at 4,400. Then level: 2 bars. With +-0.5 ft
    # of noise the level stretches stay under 2 % (at most 1 ft in 100 ft = 1 %): still about 2.
    hr = layer(["R"], [LineString([(0, 0), (8200, 0)])])
    counts = []
    for noise in (0.0, 0.5):
        dem = open_dem(_pitch_dem(tmp_path / f"pitch{noise}.tif", noise))
        res = check_harvest(Layers(frames={"haul_roads": hr}, crs=CRS.from_user_input(NY_FT), dem=dem), vestal)
        r = one(res, "HRV-030", "R")
        counts.append(r["measured"])
        if not noise:
            wb = res.derived["water_bars"]
            assert sorted(wb["dist_ft"]) == pytest.approx([4100, 4400], abs=1e-6)  # ft along the road
            assert "2 at 300 ft for 2-5 % (table range 300-500 ft)" in r["message"]
    assert counts[0] == 2 and abs(counts[1] - counts[0]) <= 2


def test_water_bar_message_spacing_band_and_range_agree(tmp_path, vestal) -> None:
    # 300 ft at 4 % then 12 %: from 0, [0,300] is 4 % (300 ft allowed) but the bar still goes at 300;
    # from 300, [300,400] 12 % -> band 11-15 %, 100 ft, and so on. A bar closer than its own band's
    # spacing (a steeper stretch ahead) is said so: never "at 100 ft for 2-5 % (300-500 ft)".
    p = write_dem(tmp_path / "g.tif", lambda u, v: 1000 + 0.04 * np.minimum(u, 200) + 0.12 * np.clip(u - 200, 0, None),
                  bounds=(-50, -50, 1100, 150))
    hr = layer(["R"], [LineString([(0, 0), (1000, 0)])])
    res = check_harvest(Layers(frames={"haul_roads": hr}, crs=CRS.from_user_input(NY_FT), dem=open_dem(p)), vestal)
    msg = one(res, "HRV-030", "R")["message"]
    wb = res.derived["water_bars"]
    for row in wb.itertuples():
        if not row.shortened:
            assert row.min_spacing_ft <= row.spacing_ft <= row.max_spacing_ft
    # [0,100] 4 %: 300 allowed; [0,200] 4 %: 300 allowed; [0,300] (8 + 12) / 300 = 6.7 % -> 200 < 300: no.
    # So the first bar goes at 200 ft with the 2-5 % band: closer than 300, because a steeper stretch follows
    assert wb["dist_ft"].iloc[0] == pytest.approx(200, abs=1e-6) and bool(wb["shortened"].iloc[0])
    assert "1 at 200 ft, closer than the 2-5 % band's spacing (table range 300-500 ft) because a steeper" in msg


# ------------------------------------------------------------------------------------------
# HRV-002: every element a-k named when not supplied; the new roles; the site plan agrees


def test_site_plan_elements_from_the_new_roles(runner, tmp_path, vestal) -> None:
    plan = _to_gpkg(tmp_path / "plan.gpkg", scene())
    extra = tmp_path / "extra.gpkg"
    layer(["W1"], [box(100, 100, 150, 150)]).rename(columns={"feature_id": "id"}).to_file(extra, layer="wet")
    layer(["PO1"], [box(300, 300, 320, 320)]).rename(columns={"feature_id": "id"}).to_file(extra, layer="pond")
    layer(["E1"], [LineString([(0, 950), (1500, 950)])]).rename(columns={"feature_id": "id"}).to_file(extra, layer="gas")
    out = tmp_path / "out"
    res = runner.invoke(main, ["harvest", str(plan), "--wetlands", f"{extra}:wet", "--ponds", f"{extra}:pond",
                               "--easements", f"{extra}:gas", "--out", str(out)])
    assert res.exit_code == 0, res.output
    fc = json.loads((out / "findings.geojson").read_text("utf-8"))
    st = {f["properties"]["subject_id"]: f["properties"]["status"] for f in fc["features"]
          if f["properties"]["rule_id"] == "HRV-002"}
    assert st["f"] == st["h"] == "info"
    # role-named layers in the GeoPackage work the same
    for name, src in (("wetlands", "wet"), ("ponds", "pond"), ("easements", "gas")):
        gpd.read_file(extra, layer=src).to_file(plan, layer=name, driver="GPKG")
    from geoconstraints.io.layers import load_layers

    lay = load_layers(plan)
    assert {"wetlands", "ponds", "easements"} <= set(lay.frames)
    assert one(check_harvest(lay, vestal), "HRV-002", "f")["status"] == "info"


def test_site_plan_pdf_lists_what_hrv002_finds_missing(tmp_path, vestal) -> None:
    from geoconstraints import load_layers, sample_path
    from geoconstraints.output import siteplan as sp

    res = check_harvest(load_layers(sample_path("vestal_sample.gpkg")), vestal)  # no DEM: b and k missing too
    plan = sp.prepare_plan(res, 500)
    sp.load_frames(plan, plan.extent)
    pdf_missing = {el.key for el, _, m in plan.elements if m}
    f = pick(res, "HRV-002", status="not_evaluated")
    assert pdf_missing == set(f["subject_id"]) == {"b", "f", "h", "k"}
    names = {el.key: m for el, _, m in plan.elements}
    assert names["b"] == names["k"] == ["dem"] and names["f"] == ["easements"] and names["h"] == ["ponds", "wetlands"]


def test_stream_vocabulary_with_an_unknown_kind_is_refused(tmp_path) -> None:
    from geoconstraints.errors import RulebookError

    rb = tmp_path / "rb.yaml"
    rb.write_text("extends: vestal\nrules:\n  - id: HRV-020\n    params:\n      stream_kind_vocabulary:\n"
                  "        - {field: kind, values: {creek: seasonal}}\n")
    with pytest.raises(RulebookError, match="seasonal"):
        check_harvest(scene(), load_rulebook(rb))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_ownership_groups_equal_those_of_the_whole_layer_self_join(seed, monkeypatch, vestal):
    # HRV-001's grouping searches the parcels outward from the harvest areas' parcels instead of joining
    # the whole parcels layer with itself; on a 30 x 30 grid of 100-ft parcels with a few owners (some not
    # stated) and random areas, the groups (which areas go together, and the parcels of each group) are
    # those of the self-join reference
    rng = np.random.default_rng(seed)
    cells = [(c, r) for r in range(30) for c in range(30)]
    owners = rng.choice(np.array(["SMITH", "JONES", "LEE", None], dtype=object), len(cells), p=[0.4, 0.3, 0.2, 0.1])
    parcels = layer([f"P{i}" for i in range(len(cells))],
                    [box(100 * c, 100 * r, 100 * c + 100, 100 * r + 100) for c, r in cells], owner=list(owners))
    picks = rng.choice(len(cells), 6, replace=False)
    ha = layer([f"H{k}" for k in range(6)],
               [box(100 * cells[i][0] + 20, 100 * cells[i][1] + 20, 100 * cells[i][0] + 80, 100 * cells[i][1] + 80)
                for i in picks], owner=list(rng.choice(np.array(["SMITH", None], dtype=object), 6)))
    assert vestal["HRV-001"].t("contiguity_tolerance_ft") == 1.0
    got = hv._ownership(vestal["HRV-001"], ha, parcels)
    # the reference: every parcel queried against the whole layer, as before
    monkeypatch.setattr(hv, "_joinable_parcels", lambda p, own, seeds, distance: p.sindex.query(
        p.geometry.values, predicate="dwithin", distance=distance))
    want = hv._ownership(vestal["HRV-001"], ha, parcels)
    for name in ("certain", "possible"):
        ga, gb = getattr(got, name), getattr(want, name)
        assert (ga[:, None] == ga[None, :]).tolist() == (gb[:, None] == gb[None, :]).tolist()
    assert got.parcels == want.parcels and got.why_unknown == want.why_unknown
    assert {tuple(sorted(got.parcel_of_comp[int(c)])) for c in got.certain} == \
           {tuple(sorted(want.parcel_of_comp[int(c)])) for c in want.certain}
    assert max(len(v) for v in got.parcel_of_comp.values()) > 3  # groups of several parcels were found


# ------------------------------------------------------------------------------------------
# district values the rulebook does not name (§ 44-VI-6(F)(6), (G)): a misspelt RA-1 is never a pass

TOWN = ["RA-1", "RA-2", "RC", "RR", "C-1", "C-2", "CD"]
"""A town's districts for the tests (Vestal's text does not list them; its rules name these)."""


@pytest.fixture(scope="module")
def town_rulebook(tmp_path_factory):
    path = tmp_path_factory.mktemp("town") / "town.yaml"
    path.write_text(f"extends: vestal\ntown_districts: [{', '.join(TOWN)}]\n")
    return load_rulebook(path)


@pytest.mark.parametrize("zoning_layer", [False, True], ids=["parcels.zoning", "zoning layer"])
@pytest.mark.parametrize("ra1", ["RA-l", "RA-1A", "R A 1 (Res. Ag.)", "Residential Agricultural 1", "12"])
def test_misspelt_district_with_town_districts_is_unknown_not_pass(town_rulebook, vestal, ra1, zoning_layer) -> None:
    # P2 (below H1, 50 ft away) written ra1: with the town's districts listed, a value naming none of
    # them is district unknown (it may be RA-1): L9, 70 ft above P2's top line, is in its would-be
    # 100-ft strip -> HRV-024 review (not pass), naming P2; and within 300 ft of P2 -> HRV-003
    # not_evaluated (not pass), naming P2 and its value; HRV-021 for H1 not_evaluated
    lay = _spelled_scene("RR", ra1, zoning_layer=zoning_layer)
    before = check_harvest(lay, vestal)  # no town_districts: read as a district the law does not list
    assert one(before, "HRV-024", "L9")["status"] == "pass"
    assert one(before, "HRV-003", "L9")["status"] == "pass"
    res = check_harvest(lay, town_rulebook)
    l9 = one(res, "HRV-024", "L9")
    assert l9["status"] == "review" and "buffer of P2 (district unknown" in l9["message"]
    z9 = one(res, "HRV-003", "L9")
    p2 = "Z2" if zoning_layer else "P2"
    assert z9["status"] == "not_evaluated" and f'{p2} ("{ra1}")' in z9["message"]
    assert one(res, "HRV-003", "L1")["status"] == "pass"  # 550 ft from P2: every district within 300 ft known
    assert one(res, "HRV-021", "H1")["status"] == "not_evaluated"
    pos = res.derived["possible_buffer_strips"]
    assert f'property line of a district unknown ("{ra1}") parcel' in set(pos.loc[pos["source_id"] == "P2", "measured_from"])
    src = "zoning layer" if zoning_layer else "parcels.zoning field"
    assert (f"{src}: district values naming none of the rulebook's town_districts, read as district unknown "
            f"(each may be RA-1, RA-2, RC or RR: a strip or board review is possible there, never a pass): "
            f'"{ra1}" (1).') in res.notes


def test_misspelt_rr_dwelling_with_town_districts_makes_a_possible_strip(town_rulebook) -> None:
    # P1 (holding D1 at (900,600)) written "RR-" + "x": not a district of the town, so D1 may be in RR:
    # its would-be 100-ft circle is a possible strip and HRV-022 is not_evaluated for H1, never info/pass
    res = check_harvest(_spelled_scene("RRx", "RA-1", zoning_layer=False), town_rulebook)
    assert "D1" in set(res.derived["possible_buffer_strips"]["source_id"])
    assert set(res.derived["possible_buffer_strips"]["measured_from"]) >= {'dwelling in district unknown ("RRx")'}
    h1 = one(res, "HRV-022", "H1")
    assert h1["status"] == "not_evaluated" and "D1" in h1["message"]


@pytest.mark.parametrize("zoning_layer", [False, True], ids=["parcels.zoning", "zoning layer"])
@pytest.mark.parametrize("c1", ["C-1", "c 1", "C_1"])
def test_other_district_in_town_districts_reads_as_before(town_rulebook, vestal, c1, zoning_layer) -> None:
    # P3 written C-1 (a spelling of it): a district of the town the law does not name, as without the
    # list: every finding is the one of Vestal's rulebook, no possible strip, no note on district values
    lay = _spelled_scene("RR", "RA-1", zoning_layer=zoning_layer)
    key = "zoning" if zoning_layer else "parcels"
    col = "district" if zoning_layer else "zoning"
    lay.frames[key] = lay.frames[key].assign(**{col: ["RR", "RA-1", c1]})
    ref, res = check_harvest(lay, vestal), check_harvest(lay, town_rulebook)
    cols = ["rule_id", "subject_layer", "subject_id", "status", "measured", "message"]
    key_cols = ["rule_id", "subject_layer", "subject_id", "message"]
    pd.testing.assert_frame_equal(res.findings[cols].sort_values(key_cols).reset_index(drop=True),
                                  ref.findings[cols].sort_values(key_cols).reset_index(drop=True))
    assert len(res.derived["possible_buffer_strips"]) == 0
    assert not [n for n in res.notes if "district values" in n]
    assert one(res, "HRV-024", "L9")["status"] == "violation"  # P2's RA-1 strip


@pytest.mark.parametrize("zoning_layer", [False, True], ids=["parcels.zoning", "zoning layer"])
def test_without_town_districts_the_run_names_the_values_it_read_as_other_districts(vestal, zoning_layer,
                                                                                   caplog) -> None:
    # no town_districts (Vestal's text does not list the town's districts): a value no rule names is read
    # as a district the law does not list, as before, and the run says which values, with their counts
    ids = ["P1", "P2", "P3", "P4", "P5"]
    boxes = [box(-200, -50, 1600, 1005), box(-200, -600, 1600, -50), box(1600, -600, 2400, 1005),
             box(2400, -600, 3000, 1005), box(3000, -600, 3600, 1005)]
    values = ["RR", "RA-1A", "C-1", "RA-1A", None]
    if zoning_layer:
        lay = scene(parcels=layer(ids, boxes), zoning=layer([f"Z{i}" for i in range(1, 6)], boxes, district=values))
    else:
        lay = scene(parcels=layer(ids, boxes, zoning=values))
    with caplog.at_level("INFO", logger="geoconstraints"):
        res = check_harvest(lay, vestal)
    src = "zoning layer" if zoning_layer else "parcels.zoning field"
    want = (f'{src}: district values no rule names, treated as districts the law does not list: "C-1" (1), '
            f'"RA-1A" (2). If one is a spelling of RA-1, RA-2, RC or RR, correct the layer, or list the town\'s '
            f"districts in the rulebook (town_districts) so other values count as unknown")
    assert res.notes.count(want + ".") == 1  # one warning per layer, in the report's notes
    assert want + "." in res.provenance()["notes"]
    assert [r.levelname for r in caplog.records if want in r.getMessage()] == ["INFO"]  # -v shows it, no warning
    # read as before: L9 near P2 ("RA-1A", not RA-1) has no strip and passes HRV-003 (the note says why)
    assert one(res, "HRV-003", "L1")["status"] == "pass"


# ------------------------------------------------------------------------------------------
# a strip measured to its own source (HRV-024, HRV-025): not to one found again by its id or text


def test_landing_at_a_curved_edge_is_measured_to_its_own_source_when_ids_repeat(vestal) -> None:
    # § 44-VI-6(F)(6), (F)(7)(3). Real county layers repeat feature ids. A landing just outside a strip's
    # 64-sided outline is measured to the strip's source, which was looked up again by id: of two dwellings
    # "D", the second (3,000 ft away) answered for the first, and L99.9 (99.9 ft from the first, inside its
    # 100-ft strip) passed; of two roads "R", the straight one far away answered for the bent one, and
    # L149.99 (149.99 ft from the bent road's right-of-way) passed at 150.02 ft. Each strip carries its own
    a = math.pi / 64  # half-way between two corners of a circle of the strip's outline
    common = {"parcels": layer(["P"], [box(-1000, -1000, 9000, 3000)], zoning=["RR"]),
              "streams": layer(["S"], [LineString([(8000, -900), (8000, 2900)])], kind=["perennial"])}
    lay = Layers(frames={
        **common,
        "landings": layer(["L99.9", "L100.1"], [Point(99.9 * math.cos(a), 99.9 * math.sin(a)),
                                                Point(100.1 * math.cos(a), 100.1 * math.sin(a))]),
        "dwellings": layer(["D", "D"], [Point(0, 0), Point(3000, 0)]),
        "roads": layer(["R"], [LineString([(-1000, 2500), (9000, 2500)])], row_width_ft=[50.0]),
    }, crs=CRS.from_user_input(NY_FT))
    res = check_harvest(lay, vestal)
    f = one(res, "HRV-024", "L99.9")
    assert f["status"] == "violation" and "dwelling buffer of D" in f["message"]
    # outside the true circle; a point landing: review (round 22c: its pad may reach in), no longer pass
    assert one(res, "HRV-024", "L100.1")["status"] == "review"
    # the written layer keeps its columns: what a strip is drawn around is not written
    assert list(res.derived["buffer_strips"].columns) == ["kind", "rule_id", "source_id", "width_ft", "measured_from",
                                                         "geometry"]

    def from_bend(r):  # outside the bend of R at (1000, 500), half-way between two corners of its arc
        return Point(1000 + r * math.cos(-a), 500 + r * math.sin(-a))

    roads = Layers(frames={
        **common,
        "landings": layer(["L149.99", "L150.01"], [from_bend(174.99), from_bend(175.01)]),
        "roads": layer(["R", "R"], [LineString([(0, 500), (1000, 500), (1000, 1500)]),
                                    LineString([(5000, 0), (6000, 0)])], row_width_ft=[50.0, 50.0]),
    }, crs=CRS.from_user_input(NY_FT))
    res = check_harvest(roads, vestal)
    under = one(res, "HRV-025", "L149.99")
    assert (under["status"], under["measured"]) == ("violation", pytest.approx(149.99, abs=1e-5))
    assert one(res, "HRV-025", "L150.01")["status"] == "review"  # a point (round 22c): no longer pass


def test_landing_at_the_end_of_a_bordering_line_strip_whose_parcel_id_holds_parcel(tmp_path) -> None:
    # § 44-VI-6(F)(6), reading (b): the strip along N's line where it borders the RA-1 parcel "Lot 4 parcel 2"
    # (measured_from "property line bordering RA-1 parcel Lot 4 parcel 2"). Its source was redrawn from that
    # text split on " parcel ": parcel "2", far away, borders nothing, the source came out empty and L99.9,
    # 99.9 ft beyond the round end of the strip (inside it), passed. The strip carries its line
    rb = tmp_path / "rb.yaml"
    rb.write_text("extends: vestal\nrules:\n  - id: HRV-021\n    switches:\n      property_line_reading: b\n")
    a = math.pi / 2 + math.pi / 64  # north of the line's end (0, 1), half-way between two corners of the cap
    lay = Layers(frames={
        "landings": layer(["L99.9"], [Point(99.9 * math.cos(a), 1 + 99.9 * math.sin(a))]),
        "parcels": layer(["N", "Lot 4 parcel 2", "2"], [box(0, 0, 1000, 1000), box(0, -1000, 1000, 0),
                                                         box(5000, 5000, 6000, 6000)], zoning=["RR", "RA-1", "C-1"]),
        "dwellings": layer(["D"], [Point(5500, 5500)]),
        "streams": layer(["S"], [LineString([(-2000, -900), (-2000, 900)])], kind=["perennial"]),
        "roads": layer(["R"], [LineString([(-3000, 3000), (3000, 3000)])], row_width_ft=[50.0]),
    }, crs=CRS.from_user_input(NY_FT))
    res = check_harvest(lay, load_rulebook(rb))
    f = one(res, "HRV-024", "L99.9")
    assert f["status"] == "violation" and "property_line buffer of N" in f["message"]


def test_landing_in_a_strip_of_a_district_unknown_is_told_the_value(town_rulebook) -> None:
    # HRV-003 names the value a layer gives for a district it does not know ('P2 ("RA-l")'); HRV-024 said
    # only "district unknown". It names it too, and for a neighbour's line the parcel whose district it is
    res = check_harvest(_spelled_scene("RR", "RA-l", zoning_layer=False), town_rulebook)
    l9 = one(res, "HRV-024", "L9")
    assert l9["status"] == "review"
    assert ('inside property_line buffer of P1 (bordering P2, district unknown ("RA-l")), property_line buffer of P2 '
            '(district unknown ("RA-l")): a strip if it is a listed district') in l9["message"]
    lay = _spelled_scene("RRx", "RA-1", zoning_layer=False)  # D1 at (900, 600) in P1 written "RRx"
    lay.frames["landings"] = layer(["L5"], [Point(900, 650)])
    l5 = one(check_harvest(lay, town_rulebook), "HRV-024", "L5")
    assert l5["status"] == "review" and 'dwelling buffer of D1 (district unknown ("RRx"))' in l5["message"]


def test_findings_about_a_repaired_harvest_area_say_so(vestal) -> None:
    # H2 drawn as a bow-tie over its box [1000,1500]x[0,1000]: (1000,0)-(1500,1000)-(1500,0)-(1000,1000) crosses
    # itself at (1250,500); make_valid keeps its two triangles (2 * 1000 * 250 / 2 = 250,000 sq ft), what the
    # ring encloses, so the statuses stand; every finding about H2 says it rests on the repair, none about H1
    # or a landing does
    frames = {role: g.rename(columns={"feature_id": "parcel_id" if role == "parcels" else "id"})
              for role, g in scene().frames.items()}
    h = frames["harvest_area"]
    h.loc[1, "geometry"] = _g(Polygon([(1000, 0), (1500, 1000), (1500, 0), (1000, 1000)]))
    layers = load_layers(**frames)
    assert layers.repaired_ids("harvest_area") == ["H2"] and layers.repairs == {"harvest_area": {"H2": False}}
    assert layers["harvest_area"].geometry.area.iloc[1] == pytest.approx(250_000)
    res = check_harvest(layers, vestal)
    about_h2 = pick(res, "HRV-003", "H2")
    assert len(about_h2)
    f = res.findings
    h2 = f[(f["subject_layer"] == "harvest_area") & (f["subject_id"] == "H2")]
    assert len(h2) >= 3 and set(h2["rule_id"]) >= {"HRV-001", "HRV-003"}
    said = "H2's geometry was invalid and was repaired (make_valid) before the check"
    assert h2["message"].str.contains(said, regex=False).all()
    assert not f.loc[f["subject_id"] != "H2", "message"].str.contains("make_valid", regex=False).any()
    plain = check_harvest(load_layers(**{r: g for r, g in frames.items() if r != "harvest_area"},
                                      harvest_area=scene().frames["harvest_area"].rename(columns={"feature_id": "id"})),
                          vestal)
    assert not plain.findings["message"].str.contains("make_valid", regex=False).any()
    # the statuses stand: the same as with H2 drawn as its two triangles
    tri = frames["harvest_area"].copy()
    tri.loc[1, "geometry"] = layers["harvest_area"].geometry.iloc[1]
    same = check_harvest(load_layers(**{**frames, "harvest_area": tri}), vestal).findings
    mine = same[(same["subject_layer"] == "harvest_area") & (same["subject_id"] == "H2")]
    assert mine["status"].tolist() == h2["status"].tolist()


def test_landings_and_roads_tables_say_which_geometry_was_repaired(vestal) -> None:
    # landing L3 drawn as a bow-tie over its box [600,650]x[880,900]: (600,880)-(650,900)-(650,880)-(600,900)
    # crosses itself at (625,890); haul road HR2 drawn with a zero-length first part ((220,500),(220,500)) beside
    # its line (220,500)-(100,500) ("too few points"): make_valid keeps the line. landings.csv and roads.csv
    # had no word of it (only the findings' messages); a person filtering the tables sees it now. The skid
    # trail named HR2 too is another layer's feature: not repaired
    frames = {role: g.rename(columns={"feature_id": "parcel_id" if role == "parcels" else "id"})
              for role, g in scene().frames.items()}
    frames["landings"].loc[2, "geometry"] = _g(Polygon([(600, 880), (650, 900), (650, 880), (600, 900)]))
    frames["haul_roads"].loc[1, "geometry"] = _g(MultiLineString([[(220, 500), (220, 500)], [(220, 500), (100, 500)]]))
    frames["skid_trails"].loc[0, "id"] = "HR2"
    layers = load_layers(**frames)
    assert layers.repairs == {"landings": {"L3": False}, "haul_roads": {"HR2": False}}
    res = check_harvest(layers, vestal)
    landings = res.tables["landings"]
    assert landings["geometry_repaired"].dtype == bool
    assert dict(zip(landings["landing_id"], landings["geometry_repaired"])) == {"L1": False, "L2": False, "L3": True}
    roads = res.tables["roads"]
    assert roads["geometry_repaired"].dtype == bool
    assert {(r.road_layer, r.road_id) for r in roads.itertuples() if r.geometry_repaired} == {("haul_roads", "HR2")}
    assert len(roads) == 6 and roads.loc[roads["road_layer"] == "skid_trails", "road_id"].tolist() == ["HR2", "ST2"]
    # nothing repaired: the column is there, all False
    plain = check_harvest(scene(), vestal)
    assert not plain.tables["landings"]["geometry_repaired"].any()
    assert not plain.tables["roads"]["geometry_repaired"].any()
