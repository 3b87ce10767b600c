"""HRV-002, HRV-010, HRV-011, HRV-020..023, HRV-030 and HRV-040 worded by the rulebook's phrases: a town file
that rewrites every phrase of them (and their messages to ``{detail}``) sees its words alone in every finding,
with the values the checks measured (rules/harvest.py; rulebook/model.py ``Rule.phrase``). Why a road or a
stretch of it could not be profiled is the key the terrain engine recorded (geometry/terrain.py
``RoadTerrain.why``, ``Stretch.why``: no DEM, off the DEM, cells without relief), worded by the rule. A town may
reword one phrase; a phrase or a field the checks do not write is refused when the rulebook loads."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import yaml
from common import NY_FT
from pyproj import CRS
from shapely.geometry import LineString, MultiLineString, Point, box
from test_harvest import layer, profile_z, roads_for_grades, scene, write_dem
from test_rule_phrases import _code_words
from test_rule_phrases import _marked as marked

from geoconstraints.commands import check_harvest, harvest_context
from geoconstraints.errors import RulebookError
from geoconstraints.geometry import terrain as tr
from geoconstraints.io.dem import open_dem
from geoconstraints.io.layers import Layers
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rulebook.model import FindingRows, Rulebook
from geoconstraints.rules import harvest

BUFFERS = ("HRV-020", "HRV-021", "HRV-022", "HRV-023")
"""The buffer-strip rules (one shared wording of a harvest area's strips)."""


def _keys(msg: str) -> set[str]:
    return {m[1:].split(" ")[0].rstrip("]") for m in re.findall(r"\[[a-z_]+[ \]]", msg)}


def _weigh(runs: dict, rules: tuple[str, ...], strip=lambda name, msg: msg) -> tuple[set[str], set[tuple[str, str]]]:
    """Run each scene of ``runs`` (name -> (layers, rulebook)); every finding of ``rules`` must be the marked
    phrases alone (``strip`` takes out what an engine wrote). The phrases seen (``rule.key``) and statuses."""
    seen: set[str] = set()
    statuses: set[tuple[str, str]] = set()
    for name, (lay, book) in runs.items():
        f = check_harvest(lay, book).findings
        f = f.loc[f["rule_id"].isin(rules).to_numpy()]
        assert len(f), name
        for rid, status, msg in zip(f["rule_id"], f["status"], f["message"]):
            assert _code_words(strip(name, msg)) == "", (name, rid, msg)
            seen |= {f"{rid}.{k}" for k in _keys(msg)}
            statuses.add((rid, status))
    return seen, statuses


def _every(rules: tuple[str, ...]) -> set[str]:
    book = load_rulebook("vestal")
    return {f"{rid}.{k}" for rid in rules for k in book[rid].phrases}


# ------------------------------------------------------------------------------------------
# HRV-020..023 buffer strips


def _unknown_districts():
    """The scene's parcels with P1 of no district (its property lines and the dwelling D1 in it: possible
    strips) and the dwelling D3 in the RR parcel P4."""
    return {"parcels": layer(["P1", "P2", "P3", "P4"], [box(-200, -50, 1200, 1005), box(-200, -600, 1600, -50),
                                                          box(1600, -600, 2400, 1005), box(1200, -50, 1600, 1005)],
                             zoning=["", "RA-1", "C-1", "RR"]),
            "dwellings": layer(["D1", "D2", "D3"], [Point(900, 600), Point(2000, 0), Point(1300, 500)])}


def test_every_sentence_of_the_buffer_rules_is_the_rulebooks(tmp_path) -> None:
    book = marked(tmp_path, BUFFERS)
    wide = marked(tmp_path, BUFFERS, "wide", {"HRV-020": {"include_intermittent": True}})
    no_021 = Rulebook("m", "1", "no HRV-021", {r: book[r] for r in ("HRV-020", "HRV-022", "HRV-023")})
    no_zoning = layer(["P1"], [box(-200, -50, 1600, 1005)])
    runs = {
        "base": (scene(), book),
        "row": (scene(row=True), book),
        "row only": (scene(row=True, roads=None), book),
        "wide": (scene(), wide),
        "unknown districts": (scene(**_unknown_districts()), book),
        "nothing": (scene(streams=None, roads=None, parcels=None, dwellings=None), book),
        "no zoning": (scene(parcels=no_zoning), book),
        "far": (scene(streams=layer(["S9"], [LineString([(5000, 5000), (5100, 5000)])], kind=["perennial"]),
                      roads=layer(["R9"], [LineString([(5000, 6000), (5100, 6000)])], row_width_ft=[50.0]),
                      parcels=layer(["P1"], [box(-200, -600, 2400, 1005)], zoning=["C-1"])), book),
        "no HRV-021": (scene(), no_021),
        "no harvest area": (scene(harvest_area=None), book),
        "empty harvest area": (scene(harvest_area=layer([], [])), book),
    }
    seen, statuses = _weigh(runs, BUFFERS)
    assert {("HRV-020", "info"), ("HRV-020", "not_evaluated"), ("HRV-021", "not_evaluated"),
            ("HRV-023", "pass"), ("HRV-023", "info"), ("HRV-023", "not_evaluated")} <= statuses
    every = _every(BUFFERS)
    assert every <= seen, sorted(every - seen)


def test_the_buffer_sentences_name_what_the_checks_measured(tmp_path) -> None:
    book = marked(tmp_path, BUFFERS)
    f = check_harvest(scene(row=True, roads=None), book).findings
    msg = dict(zip(f["rule_id"] + " " + f["subject_id"] + " " + f["status"], f["message"]))
    # H2 [1000,1500]x[0,1000] holds 45 ft of W1's 50-ft strip below v = 1005 (500 x 45 ft = 0.52 acres)
    road = [m for k, m in msg.items() if k.startswith("HRV-020 H2") and "[road]" in m]
    assert road == ["[inside_from 0.52 [road] row W1]; [road_row]; [not_whole [row_only]]"], road
    f = check_harvest(scene(streams=None, roads=None, parcels=None, dwellings=None), book).findings
    h1 = f.loc[((f["rule_id"] == "HRV-023") & (f["subject_id"] == "H1")).to_numpy(), "message"].iloc[0]
    assert h1 == ("[no_kinds]; [not_built_kind [stream] [no_streams]]; [not_built_kind [road] [no_roads]]; "
                  "[not_built_kind [property_line] [no_parcels]]; [not_built_kind [dwelling] [no_dwellings]]")


def _town(tmp_path, rules: list[dict]):
    p = tmp_path / "town.yaml"
    p.write_text(yaml.safe_dump({"extends": "vestal", "rules": rules}), "utf-8")
    return load_rulebook(p)


def test_a_town_may_reword_one_buffer_phrase_and_sees_it(tmp_path) -> None:
    town = _town(tmp_path, [{"id": "HRV-020", "phrases": {"inside_from": "{acres} acres of {kind} strip, from {sources}",
                                                          "road": "highway"}},
                            {"id": "HRV-023", "phrases": {"no_streams": "the streams were not mapped"}}])
    assert town["HRV-020"].phrases["inside"] == load_rulebook("vestal")["HRV-020"].phrases["inside"]
    f = check_harvest(scene(streams=None), town).findings
    msg = f.loc[(f["rule_id"] == "HRV-020").to_numpy(), "message"].tolist()
    assert any("(0.23 acres of highway strip, from R1; measured from the road centre line" in m for m in msg), msg
    assert any("(stream buffer: no streams layer)" in m for m in msg), msg  # HRV-020 keeps its own words
    h1 = f.loc[((f["rule_id"] == "HRV-023") & (f["subject_id"] == "H1")).to_numpy(), "message"].iloc[0]
    assert "stream buffer not built (the streams were not mapped)" in h1, h1


@pytest.mark.parametrize("rid,phrases,words", [
    ("HRV-020", {"insid": "{acres} acres"}, ["rule HRV-020 phrases.insid", "not a phrase"]),
    ("HRV-021", {"possible": "{acres} acres of {stripz}"}, ["rule HRV-021 phrases.possible", "{stripz}"]),
    ("HRV-023", {"rule_absent": "rule {absent_rule} ({buffer_width_ft} ft)"},
     ["rule HRV-023 phrases.rule_absent", "{buffer_width_ft}"]),
])
def test_a_phrase_or_field_the_check_does_not_write_is_refused_at_load(tmp_path, rid, phrases, words) -> None:
    with pytest.raises(RulebookError) as err:
        _town(tmp_path, [{"id": rid, "phrases": phrases}])
    for w in words:
        assert w in str(err.value), (w, str(err.value))


# ------------------------------------------------------------------------------------------
# HRV-002 site plan, HRV-010 grades, HRV-011 designated slopes, HRV-030 water bars, HRV-040 licence


PLAN = ("HRV-002", "HRV-010", "HRV-011", "HRV-030", "HRV-040")
"""The plan, terrain and checklist rules."""


def _dem_scenes(tmp_path, book) -> dict:
    """Scenes on synthetic DEMs (test_harvest's): the graded roads on 5-ft and 60-ft cells (a haul road running
    off the DEM, one wholly on the fine DEM's flat top), a DEM covering part of the plan, one with a nodata hole,
    a gentle one no contour crosses."""
    fine = open_dem(write_dem(tmp_path / "fine.tif", lambda u, v: np.where(v > 950, 1234.0, profile_z(u)), cell=4.0))
    coarse = open_dem(write_dem(tmp_path / "coarse.tif", lambda u, v: profile_z(u), cell=60.0))
    roads = roads_for_grades()
    # a haul road running off the DEM, one of two parts: on the fine DEM's flat top (cells without relief) and off
    # it, and one wholly on the flat top (no relief around the whole road)
    two = MultiLineString([[(100, 990), (300, 990)], [(1500, 700), (1900, 700)]])
    roads["haul_roads"] = pd.concat([roads["haul_roads"], layer(["OFFH", "TWOP", "TOP"], [
        LineString([(1500, 600), (1900, 600)]), two, LineString([(400, 985), (700, 985)])])], ignore_index=True)
    part = open_dem(write_dem(tmp_path / "part.tif", lambda u, v: 1000 + 0.10 * u, bounds=(-300, -300, 1200, 1300)))
    hole = open_dem(write_dem(tmp_path / "hole.tif", lambda u, v: 1000 + 0.10 * u, bounds=(-300, -300, 1800, 1300),
                              nodata=-9999.0, hole=(400, 400, 600, 600)))
    gentle = open_dem(write_dem(tmp_path / "gentle.tif", lambda u, v: 1001 + 0.001 * u, bounds=(-300, -300, 1300, 1300)))
    areas = layer(["H1", "H2"], [box(0, 0, 1000, 1000), box(1000, 0, 1500, 1000)])
    plan = {"harvest_area": areas, "haul_roads": layer(["HR"], [LineString([(1400, 900), (1400, 1100)])]),
            "landings": layer(["L9"], [Point(1450, 500)])}
    crs = CRS.from_user_input(NY_FT)
    return {
        "fine": (Layers(frames=roads, crs=crs, dem=fine), book),
        "coarse": (Layers(frames=roads, crs=crs, dem=coarse), book),
        "part": (Layers(frames=plan, crs=crs, dem=part), book),
        "hole": (Layers(frames={"harvest_area": areas, "haul_roads": layer(["HR"], [LineString([(500, 300), (500, 700)])])},
                        crs=crs, dem=hole), book),
        "gentle": (Layers(frames={"harvest_area": layer(["H"], [box(0, 0, 1000, 1000)])}, crs=crs, dem=gentle), book),
    }


def _with(lay: Layers, **frames) -> Layers:
    lay.frames.update(frames)
    return lay


def _plan_scenes(book, tmp_path) -> dict:
    """Scenes without a DEM (test_harvest's plan, varied): every layer, none, empty ones, districts unknown."""
    no_021 = Rulebook("m", "1", "no HRV-021", {r: book[r] for r in book.rules if r != "HRV-021"})
    random = marked(tmp_path, PLAN, "random", {"HRV-011": {"unflagged_skid_trails": "treat_as_random_skidding"}})
    one_map = marked(tmp_path, PLAN, "one", {"HRV-011": {"covered_layers": "critical_slopes"}})
    site = book["HRV-002"]
    elements = [{**e, "roles": []} if e["key"] == "b" else e for e in site.p("elements")]
    no_dem_role = Rulebook("m", "1", "b without dem", {**book.rules, "HRV-002": replace(site, params={
        **site.params, "elements": elements})})
    empty = layer([], [])
    zoning = layer(["Z1"], [box(-200, -600, 2400, 1005)], district=["RR"])
    dams = layer(["S9"], [LineString([(200, -100), (200, 1100)])], waterway=["dam"])
    return {
        "base": (scene(ponds=empty), book),
        "row only": (scene(row=True, roads=None), book),
        "unknown districts": (scene(**_unknown_districts()), book),
        "no zoning": (scene(parcels=layer(["P1"], [box(-200, -50, 1600, 1005)]), zoning=empty), book),
        "empty layers": (_with(scene(streams=dams, roads=empty, dwellings=empty), row=empty), book),
        "no parcels": (scene(parcels=empty, zoning=zoning), book),
        "no HRV-021": (scene(), no_021),
        "no maps": (scene(critical_slopes=None, stream_corridor=None, haul_roads=empty, skid_trails=None), book),
        "one map missing": (scene(stream_corridor=None), book),
        "random skidding": (scene(), random),
        "one map": (scene(critical_slopes=None, haul_roads=None), one_map),
        "b without the DEM's role": (scene(), no_dem_role),
        "nothing": (scene(streams=None, roads=None, parcels=None, dwellings=None, harvest_area=None), book),
    }


def test_every_sentence_of_the_plan_rules_is_the_rulebooks(tmp_path) -> None:
    book = marked(tmp_path, PLAN)
    runs = {**_plan_scenes(book, tmp_path), **_dem_scenes(tmp_path, book)}
    seen, statuses = _weigh(runs, PLAN)
    # HRV-010's branches a synthetic DEM reaches seldom (test_dem_blur's roads): a run near the limit, alone and
    # joined; a search cut short, with and without the runs it met; a pass joined; raw grades
    rule = book["HRV-010"]
    for start, measured, joined, roads, cut in ((100.0, 185.0, np.nan, "", False),
                                                (100.0, 150.0, 190.0, "haul_roads S", False),
                                                (100.0, 150.0, 190.0, "haul_roads S", True),
                                                (100.0, 150.0, 150.0, "", True),
                                                (0.0, 150.0, 160.0, "haul_roads S", False),
                                                (100.0, 250.0, 300.0, "haul_roads S", False)):
        run = tr.Run(start, start + measured, measured, measured * 1.04, 30.0, 30.0,
                     exceeds=bool(max(measured, joined) > rule.t("max_run_ft")), joined_ft=joined,
                     joined_with=roads, join_cut_short=cut)
        rt = tr.RoadTerrain("haul_roads", "R", 500.0, runs=[run], evaluated_length_ft=500.0, max_grade_pct=30.0,
                            dem_cell_ft=10.0)
        rows = FindingRows(rule)
        window = rule.phrase("raw")  # a rulebook without a grade filter (smoothing windows 0)
        harvest._road_grades(rows, rt, LineString([(0, 0), (500, 0)]), rule, window)
        for status, msg in zip(rows.frame()["status"], rows.frame()["message"]):
            assert _code_words(msg) == "", msg
            seen |= {f"HRV-010.{k}" for k in _keys(msg)}
            statuses.add(("HRV-010", status))
    assert {("HRV-002", "info"), ("HRV-002", "not_evaluated"), ("HRV-010", "violation"), ("HRV-010", "review"),
            ("HRV-010", "pass"), ("HRV-010", "not_evaluated"), ("HRV-011", "violation"), ("HRV-011", "pass"),
            ("HRV-011", "not_evaluated"), ("HRV-030", "info"), ("HRV-030", "pass"), ("HRV-030", "not_evaluated"),
            ("HRV-040", "info")} <= statuses
    every = _every(PLAN)
    assert every <= seen, sorted(every - seen)


def test_the_plan_sentences_name_what_the_checks_measured(tmp_path) -> None:
    book = marked(tmp_path, PLAN)
    f = check_harvest(scene(ponds=layer([], [])), book).findings
    msg = dict(zip(f["rule_id"] + " " + f["subject_id"], f["message"]))
    assert msg["HRV-002 h"] == ("[element streams, ponds Location of all streams, intermittent streams, ponds, swamps "
                                "and wetlands.] [empty_given ponds]; [not_supplied wetlands]")
    assert msg["HRV-002 scale"] == "[scale 500]"
    assert msg["HRV-011 HR1"] == "[on_critical_slopes CS1 100]; [one_crossing]"
    assert msg["HRV-011 ST2"] == "[not_constructed]"
    assert msg["HRV-030 HR1"] == "[no_dem]"
    assert msg["HRV-040 application_fee"] == "[condition Vestal Code 1966 § 44-VI-6(E)(1) Permit fee of $100 with the application.]"


def test_why_a_road_was_not_profiled_is_the_rules_phrase_over_what_the_engine_measured(tmp_path) -> None:
    book = marked(tmp_path, PLAN)
    lay = _dem_scenes(tmp_path, book)["fine"][0]
    f = check_harvest(lay, book).findings
    msgs: dict[str, list[str]] = {}
    for rid, sid, m in zip(f["rule_id"], f["subject_id"], f["message"]):
        msgs.setdefault(f"{rid} {sid}", []).append(m)
    # TOP lies wholly on the flat top (1234 ft): one reason for the whole road, the DEM's name and the height
    assert msgs["HRV-010 TOP"] == msgs["HRV-030 TOP"] == ["[no_relief fine.tif 1,234.00]"]
    # TWOP: a part on the flat top (a stretch without relief) and a part off the DEM
    assert [m for m in msgs["HRV-010 TWOP"] if "no_relief" in m] == ["[gap 200 200 0 [no_relief_stretch 1,234.00]]"]
    assert any("[off_dem]" in m for m in msgs["HRV-010 TWOP"]), msgs["HRV-010 TWOP"]
    (bars,) = msgs["HRV-030 TWOP"]  # the bars of the part on the DEM, then the stretches not profiled
    assert bars.endswith("; [not_profiled 400 [no_relief_stretch 1,234.00][either_or][off_dem]]"), bars
    # the shipped phrases say what the engine says of it in the road table's note
    vestal = load_rulebook("vestal")
    top = harvest_context(lay, vestal).terrain[("haul_roads", "TOP")]
    for rid in ("HRV-010", "HRV-030"):
        assert harvest._not_profiled(vestal[rid], top) == top.error, rid
    # a line the engine cannot profile (the loaders refuse it first) is said by the error's own message
    bad = tr.RoadTerrain("haul_roads", "P", 10.0, error="expected a LineString, got Polygon", why="line_error")
    assert harvest._not_profiled(book["HRV-010"], bad) == "expected a LineString, got Polygon"


def test_a_town_may_reword_one_plan_phrase_and_sees_it(tmp_path) -> None:
    town = _town(tmp_path, [{"id": "HRV-011", "phrases": {"one_crossing": "a single crossing needs a waiver"}},
                            {"id": "HRV-040", "phrases": {"condition": "{text} [{citation}]"}},
                            {"id": "HRV-002", "phrases": {"scale": "scale 1:{min_scale_ft_per_in}"}}])
    f = check_harvest(scene(), town).findings
    msg = dict(zip(f["rule_id"] + " " + f["subject_id"], f["message"]))
    assert msg["HRV-011 HR1"].endswith("100 ft on critical slopes (CS1); a single crossing needs a waiver")
    assert msg["HRV-040 application_fee"].endswith("with the application. [Vestal Code 1966 § 44-VI-6(E)(1)]")
    assert msg["HRV-002 scale"] == "Site plan element scale: scale 1:500"


@pytest.mark.parametrize("rid,phrases,words", [
    ("HRV-011", {"one_crossin": "a waiver"}, ["rule HRV-011 phrases.one_crossin", "not a phrase"]),
    ("HRV-040", {"condition": "{text} ({citaton})"}, ["rule HRV-040 phrases.condition", "{citaton}"]),
    ("HRV-010", {"run": "from {start} ({max_grade_pct} %, {grade})"}, ["rule HRV-010 phrases.run", "{grade}"]),
    ("HRV-030", {"bars": "{count} bars, {spacing_ft}"}, ["rule HRV-030 phrases.bars", "{spacing_ft}"]),
    ("HRV-002", {"contour": "contours"}, ["rule HRV-002 phrases.contour", "not a phrase"]),
])
def test_a_plan_phrase_or_field_the_check_does_not_write_is_refused_at_load(tmp_path, rid, phrases, words) -> None:
    with pytest.raises(RulebookError) as err:
        _town(tmp_path, [{"id": rid, "phrases": phrases}])
    for w in words:
        assert w in str(err.value), (w, str(err.value))


@pytest.mark.parametrize("rid", BUFFERS + PLAN)
def test_the_shipped_phrases_of_these_rules_are_read_from_vestal(rid) -> None:
    rule = load_rulebook("vestal")[rid]
    assert rule.phrases, rid
    for key, template in rule.phrases.items():
        assert template.strip() and not template.startswith("["), (rid, key)
    # the sentence a rule says of a layer not given is one text for every rule that says it
    for key in ("no_layer", "empty_layer"):
        if key in rule.phrases:
            assert rule.phrases[key] == load_rulebook("vestal")["HRV-020"].phrases[key], (rid, key)
