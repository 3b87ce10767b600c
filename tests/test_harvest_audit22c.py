"""Harvest rules, audit round 22c: passes that the inputs could not promise (each test failed before
its fix). The scene is test_harvest's hand-checkable plan (local feet, shifted to Vestal)."""

from __future__ import annotations

import pytest
from shapely.geometry import LineString, Point, box
from test_harvest import layer, one, scene

from geoconstraints.commands import check_harvest
from geoconstraints.rulebook.loader import load_rulebook


@pytest.fixture(scope="module")
def vestal():
    return load_rulebook("vestal")


# ------------------------------------------------------------------------------------------
# HRV-001: the law's volume ("greater than 20 standard cords ... or 10,000 board feet") is the
# harvest's, in any of its measures. A plan of sawtimber in board feet and pulpwood in cords was read
# as one volume in two measures: 9,000 board feet and 15 cords, each under its own limit, passed,
# though together they are 33 cords (500 board feet to the cord, the law's own 10,000 to 20)


def _area(**vols):
    return layer(["H1"], [box(0, 0, 1000, 1000)], owner=["A"], **vols)


def _hrv001(vestal, ha, hid="H1"):
    return one(check_harvest(scene(harvest_area=ha), vestal), "HRV-001", hid)


def test_sawtimber_in_board_feet_and_pulpwood_in_cords_are_summed(vestal) -> None:
    f = _hrv001(vestal, _area(cords=[15.0], board_feet=[9000.0]))
    assert (f["status"], f["measured"], f["threshold"], f["unit"]) == ("review", 33.0, 20.0, "cords"), f["message"]
    assert "together 33 cords, board feet counted at 500 to the cord" in f["message"]
    assert ("a licence is needed if the cords and board feet given for H1 are two products (sawtimber in board "
            "feet, pulpwood or firewood in cords), which the inputs cannot tell; read as one volume in two measures "
            "(the larger) the harvest is 18 cords, within the limits") in f["message"]
    # the brief's example: 25 cords alone is over 20 (a licence whatever the board feet are)
    f = _hrv001(vestal, _area(cords=[25.0], board_feet=[9000.0]))
    assert (f["status"], f["measured"]) == ("review", 25.0) and "which the inputs cannot tell" not in f["message"]
    assert "as two products, together 43 cords" in f["message"]
    # cubic feet are cords: 1,920 cu ft (15 cords) and 9,000 board feet
    assert _hrv001(vestal, _area(cubic_feet=[1920.0], board_feet=[9000.0]))["status"] == "review"


@pytest.mark.parametrize("vols", [{"cords": [10.0]}, {"cubic_feet": [1280.0]}])
def test_cords_and_board_feet_summed_at_under_and_over_the_limit(vestal, vols) -> None:
    # 10 cords and 5,000 board feet are 20 cords together, not "greater than" 20: no licence even as
    # two products; 0.01 board feet more is over (review); 0.01 less passes. The sum is what is compared
    for bf, status in ((4999.99, "pass"), (5000.0, "pass"), (5000.01, "review")):
        f = _hrv001(vestal, _area(board_feet=[bf], **vols))
        assert f["status"] == status, (bf, f["message"])
        assert (f["measured"], f["unit"]) == (pytest.approx(10.0 + bf / 500.0), "cords")
        assert "together 20 cords" in f["message"]


def test_areas_giving_different_measures_are_summed(vestal) -> None:
    # H1's 9,000 board feet and H2's 15 cords (two areas: two volumes) on one parcel: 33 cords, a licence
    # (it was not_evaluated, "no common sum")
    ha = layer(["H1", "H2"], [box(0, 0, 1000, 1000), box(1000, 0, 1500, 1000)], owner=["A", "A"],
               cords=[None, 15.0], board_feet=[9000.0, None])
    f = _hrv001(vestal, ha)
    assert (f["status"], f["measured"]) == ("review", 33.0) and "two products" not in f["message"]
    assert "; together 33 cords" in f["message"]  # two areas: two volumes, summed without a doubt
    # 3,000 board feet and 5 cords: 11 cords, every volume given: no licence (it was not_evaluated)
    ha = layer(["H1", "H2"], [box(0, 0, 1000, 1000), box(1000, 0, 1500, 1000)], owner=["A", "A"],
               cords=[None, 5.0], board_feet=[3000.0, None])
    f = _hrv001(vestal, ha, "H2")
    assert (f["status"], f["measured"]) == ("pass", 11.0), f["message"]


def test_the_board_feet_to_the_cord_is_the_rulebooks(vestal, tmp_path) -> None:
    rule = vestal["HRV-001"]
    assert rule.t("cord_equivalent_bf") == rule.t("volume_limit_bf") / rule.t("volume_limit_cords") == 500.0
    # a town counting 400 board feet to the cord: 10 cords and 4,000.1 board feet exceed 20 cords
    rb = tmp_path / "mine.yaml"
    rb.write_text("extends: vestal\nrules:\n  - id: HRV-001\n    thresholds:\n      cord_equivalent_bf: 400\n")
    mine = load_rulebook(str(rb))
    assert _hrv001(mine, _area(cords=[10.0], board_feet=[4000.1]))["status"] == "review"
    assert _hrv001(vestal, _area(cords=[10.0], board_feet=[4000.1]))["status"] == "pass"


# ------------------------------------------------------------------------------------------
# HRV-024, HRV-025: a landing mapped as a point was measured as a point, so a point 150 ft from a
# right-of-way (or just outside a buffer strip) passed, though a landing is a pad, often 1/4 to 1 acre,
# whose edge reaches nearer. A point passes only beyond the limit plus point_landing_radius_ft (120 ft);
# a landing mapped as a polygon is measured edge to edge, without the allowance


def _landing(geom):
    return layer(["L"], [geom])


def _hrv(vestal, rule_id, geom, **over):
    return one(check_harvest(scene(landings=_landing(geom), **over), vestal), rule_id, "L")


def test_a_point_landing_passes_hrv025_only_beyond_the_limit_and_the_pads_radius(vestal) -> None:
    # road R1 along v = 1030 with a 50-ft right-of-way: its edge at v = 1005; the point d ft south of it,
    # and a 100 x 100 ft pad whose north edge is d ft from it
    for d, status in ((149.9, "violation"), (150.0, "review"), (150.1, "review"), (269.9, "review"),
                      (270.0, "pass"), (270.1, "pass")):
        f = _hrv(vestal, "HRV-025", Point(1300, 1005 - d))
        assert (f["status"], f["measured"]) == (status, pytest.approx(d, abs=1e-6)), (d, f["message"])
        said = ("the landing is a point, and its pad may reach up to 120 ft around it (point_landing_radius_ft), "
                "nearer than 150 ft to the right-of-way" in f["message"])
        assert said == (status == "review"), f["message"]
        if status == "review":
            assert "map its extent (a polygon)" in f["message"] and "may be nearer than 150 ft" in f["message"]
        pad = _hrv(vestal, "HRV-025", box(1250, 905 - d, 1350, 1005 - d))
        assert (pad["status"], pad["measured"]) == ("violation" if d < 150 else "pass", pytest.approx(d, abs=1e-6))
        assert "is a point" not in pad["message"]


def test_a_point_landing_beside_a_road_of_unknown_width(vestal) -> None:
    # R1 without row_width_ft: 25 ft each side at the default 50 ft, 50 ft at the assumed 100 ft; a pass
    # from a point holds at 150 + 120 ft from the wider right-of-way: d >= 320 ft from the centre line
    roads = layer(["R1"], [LineString([(-100, 1030), (1600, 1030)])])
    for d, status in ((174.9, "violation"), (175.0, "review"), (199.9, "review"), (200.0, "review"),
                      (319.9, "review"), (320.0, "pass"), (320.1, "pass")):
        f = _hrv(vestal, "HRV-025", Point(1300, 1030 - d), roads=roads)
        assert f["status"] == status, (d, f["message"])
        assert ("width is not given" in f["message"]) == (status == "review" and d < 200.0), f["message"]
        assert ("its pad may reach up to 120 ft" in f["message"]) == (status == "review"), f["message"]


def test_a_point_landing_near_a_buffer_strip_is_review(vestal) -> None:
    # dwelling D1 (900, 600) in the RR parcel P1: its 100-ft strip; the point d ft south of the strip's edge
    # (measured to the dwelling: the strip's curved outline is drawn up to 0.12 ft inside the true circle).
    # A pad up to 120 ft around the point reaching the strip is in it (touching is within). A 40 x 40 ft
    # pad d ft south of the strip is outside it
    for d, status in ((0.0, "violation"), (0.1, "review"), (119.9, "review"), (120.0, "review"), (120.1, "pass")):
        res = check_harvest(scene(landings=_landing(Point(900, 500 - d))), vestal)
        f = one(res, "HRV-024", "L")
        assert f["status"] == status, (d, f["message"])
        assert ("its pad may reach up to 120 ft around it (point_landing_radius_ft), into dwelling buffer of D1: "
                "map its extent (a polygon)" in f["message"]) == (status == "review"), f["message"]
        in_buffer = res.tables["landings"].set_index("landing_id").loc["L", "in_buffer"]
        assert in_buffer == {"violation": True, "review": None, "pass": False}[status]
        if d > 0:
            assert _hrv(vestal, "HRV-024", box(880, 460 - d, 920, 500 - d))["status"] == "pass"


def test_a_point_landing_near_a_strip_of_unknown_district_is_review(vestal) -> None:
    # P2 of unknown district below v = -50: its property-line strip would reach v = 50; a point 60 ft
    # north of that (v = 110) may have its pad in it
    parcels = layer(["P1", "P2", "P3"], [box(-200, -50, 1600, 1005), box(-200, -600, 1600, -50),
                                         box(1600, -600, 2400, 1005)], zoning=["RR", None, "C-1"])
    f = _hrv(vestal, "HRV-024", Point(500, 110), parcels=parcels)
    assert f["status"] == "review" and "its pad may reach up to 120 ft" in f["message"], f["message"]
    assert _hrv(vestal, "HRV-024", Point(500, 171), parcels=parcels)["status"] == "pass"


# ------------------------------------------------------------------------------------------
# HRV-003: a landing mapped as a point 300.1 ft from RA-1 passed ("no RA-1 zoning within 300 ft"), though
# its pad may reach within 300 ft. As in HRV-024/025 the point is a disk of point_landing_radius_ft (120)
# for the pass; the point itself within 300 ft is review as before (edges: tests/test_threshold_edges.py)


def test_the_point_landing_sentence_is_the_rulebooks(vestal, tmp_path) -> None:
    # the words are the rulebook's (HRV-025 phrases.point_pad), the values the check's: a town rewording it
    # sees its words in the finding, with its own radius
    p = tmp_path / "town.yaml"
    p.write_text("extends: vestal\nrules:\n  - id: HRV-025\n    thresholds: {point_landing_radius_ft: 60}\n"
                 "    phrases:\n      point_pad: \"a point: the log deck may reach {point_landing_radius_ft} ft "
                 "nearer; draw the deck\"\n", "utf-8")
    town = load_rulebook(p)
    f = _hrv(town, "HRV-025", Point(1300, 1005 - 200.0))
    assert f["status"] == "review" and "a point: the log deck may reach 60 ft nearer; draw the deck" in f["message"]
    assert "its pad may reach" not in f["message"]
    # beyond 150 + 60 ft it passes under the town's radius, where the shipped 120 ft is still review
    assert _hrv(town, "HRV-025", Point(1300, 1005 - 210.0))["status"] == "pass"
    assert _hrv(vestal, "HRV-025", Point(1300, 1005 - 210.0))["status"] == "review"


def _hrv003(tmp_path, landing, zoning):
    from law.harvest_cases import run_plan
    res = run_plan(tmp_path, "ft", {"landings": [("L", landing, {})], "zoning": zoning})
    f = res.findings
    return f.loc[(f["rule_id"] == "HRV-003") & (f["subject_id"] == "L")].iloc[0]


def test_hrv003_a_point_landing_whose_pad_may_reach_ra1_is_not_a_pass(tmp_path) -> None:
    # RA-1 from v = 450 up; C-1 below. The point at (300, 100) is 350 ft from RA-1: beyond 300, within 420
    zoning = [("Z1", box(-900, -900, 1500, 450), {"district": "C-1"}),
              ("Z2", box(-900, 450, 1500, 1500), {"district": "RA-1"})]
    f = _hrv003(tmp_path / "p", Point(300, 100), zoning)
    assert f["status"] == "not_evaluated", f["message"]
    assert f["measured"] == pytest.approx(350.0, abs=1e-6)
    assert ("the landing is a point, and its pad may reach up to 120 ft around it (point_landing_radius_ft), "
            "within 300 ft of RA-1 property: map its extent (a polygon)") in f["message"]
    assert "a landing mapped as a point whose pad may reach" in f["message"]
    # the same landing mapped as a pad 40 ft across (its edge 330 ft from RA-1): measured as drawn, a pass
    f = _hrv003(tmp_path / "q", box(280, 80, 320, 120), zoning)
    assert (f["status"], f["measured"]) == ("pass", pytest.approx(330.0, abs=1e-6)), f["message"]


def test_hrv003_a_point_landing_near_a_district_unknown_or_unzoned_land_is_not_a_pass(tmp_path) -> None:
    # a zoning polygon of no district 350 ft north of the point: within its pad's reach, not a pass
    zoning = [("Z1", box(-900, -900, 1500, 450), {"district": "C-1"}),
              ("Z2", box(-900, 450, 1500, 1500), {"district": None})]
    f = _hrv003(tmp_path / "u", Point(300, 100), zoning)
    assert f["status"] == "not_evaluated", f["message"]
    assert "district unknown for zoning polygons Z2 within 420 ft (300 ft and a pad of 120 ft around the point)" in \
        f["message"]
    # at 430 ft (beyond 420) the unknown district is out of reach: pass
    zoning = [("Z1", box(-900, -900, 1500, 530), {"district": "C-1"}),
              ("Z2", box(-900, 530, 1500, 1500), {"district": None})]
    assert _hrv003(tmp_path / "v", Point(300, 100), zoning)["status"] == "pass"
    # the zoning layer ends 350 ft north of the point (no polygon beyond): land within the pad's reach
    # that the layer does not cover is no data, not no district
    f = _hrv003(tmp_path / "w", Point(300, 100), [("Z1", box(-900, -900, 1500, 450), {"district": "C-1"})])
    assert f["status"] == "not_evaluated" and "not covered by the zoning layer" in f["message"], f["message"]
    # a polygon landing whose 300 ft all lies on the layer passes
    f = _hrv003(tmp_path / "x", box(280, 80, 320, 120), [("Z1", box(-900, -900, 1500, 450), {"district": "C-1"})])
    assert f["status"] == "pass", f["message"]
