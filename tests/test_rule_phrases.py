"""The rules worded wholly by the rulebook's phrases (HRV-001, HRV-003, HRV-024..027, SQR-001): a town file that
rewrites every phrase of them (and their messages to ``{detail}``) sees its words alone in every finding,
with the values the checks measured; no sentence of the checks' code is left (rulebook/model.py
``Rule.phrase``, rulebook/loader.py)."""

from __future__ import annotations

import re

import pytest
import yaml
from shapely.geometry import LineString, Point, box
from test_harvest import layer, scene

from geoconstraints.commands import check_harvest
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rulebook.render import fields_of
from geoconstraints.rules.seqr import RULE_ID, Action, _entries, classify

WORDED = ("HRV-001", "HRV-003", "HRV-024", "HRV-025", "HRV-026", "HRV-027", "SQR-001")
"""The rules whose every detail sentence is a phrase."""

MARK = re.compile(r"\[[a-z_]+(?: [^\[\]]*)?\]")
"""One phrase as the marked rulebook writes it: ``[key value value]`` (values hold no brackets)."""


def _marked(tmp_path, worded: tuple[str, ...] = WORDED, name: str = "marked", switches=None):
    """vestal with every phrase of ``worded`` (:data:`WORDED`) written ``[key {field} ...]``, messages
    ``{detail}`` (and ``switches``: rule id -> the switches its entry sets), as ``tmp_path/<name>.yaml``."""
    base = load_rulebook("vestal")
    rules = []
    for rid in worded:
        r = base[rid]
        assert r.phrases, rid
        phrases = {k: "[" + " ".join([k, *(f"{{{f}}}" for f in sorted(fields_of(t)))]) + "]"
                   for k, t in r.phrases.items()}
        rules.append({"id": rid, "phrases": phrases, "messages": {"default": "{detail}", **{
            s: "{detail}" for s in r.messages}}, **({"switches": switches[rid]} if switches and rid in switches else {})})
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump({"extends": "vestal", "rules": rules}), "utf-8")
    return load_rulebook(p)


def _code_words(message: str) -> str:
    """What is left of a message once every marked phrase (innermost first) is taken out: the
    checks' own punctuation, and any sentence they still compose themselves."""
    before = None
    while before != message:
        before, message = message, MARK.sub("", message)
    return re.sub(r"[\s;:,()]", "", message)


def _vars():
    far_streams = layer(["S9"], [LineString([(5000, 5000), (5100, 5000)])], kind=["perennial"])
    return {
        "base": scene(),
        "row": scene(row=True),
        "no width": scene(roads=layer(["R1"], [LineString([(-100, 1030), (600, 1030), (1600, 1300)])],
                                      row_width_ft=[None])),
        "far": scene(streams=far_streams, roads=layer(["R9"], [LineString([(5000, 6000), (5100, 6000)])],
                                                      row_width_ft=[50.0]),
                     parcels=layer(["P1"], [box(-200, -600, 2400, 1005)], zoning=["C-1"])),
        "unknown": scene(parcels=layer(["P1", "P2", "P3"], [box(-200, -50, 1600, 1005), box(-200, -600, 1600, -50),
                                                            box(1600, -600, 2400, 1005)], zoning=["RR", "", "C-1"])),
    }


def test_every_sentence_of_the_landing_rules_is_the_rulebooks(tmp_path) -> None:
    marked = _marked(tmp_path)
    pts = [Point(x, y) for x in (150, 230, 420, 790, 905, 1300) for y in (-120, -40, 60, 700, 860, 940, 990)]
    # and a point on haul road HR1's end (connected to R1), one 350 ft from RA-1 (its pad may reach)
    lands = pts + [box(p.x - 30, p.y - 20, p.x + 30, p.y + 20) for p in pts] + [Point(500, 500), Point(300, 300)]
    seen: set[str] = set()
    for name, lay in _vars().items():
        lay.frames["landings"] = layer([f"L{i}" for i in range(len(lands))], lands)
        f = check_harvest(lay, marked).findings
        f = f.loc[f["rule_id"].isin(WORDED).to_numpy()]
        assert len(f) > 100, name
        for rid, msg in zip(f["rule_id"], f["message"]):
            assert _code_words(msg) == "", (name, rid, msg)
            seen |= {f"{rid}.{m.split(' ', 1)[0][1:].rstrip(']')}" for m in re.findall(r"\[[a-z_]+[ \]]", msg)}
    # the scenes reach most of the phrases (the others are checked in their rules' own tests)
    assert {"HRV-003.within", "HRV-003.nearest", "HRV-003.point_pad", "HRV-003.gap", "HRV-003.point_scope",
            "HRV-024.inside", "HRV-024.point_pad", "HRV-024.nearest", "HRV-025.nearest_centre_line",
            "HRV-025.nearest_default_width", "HRV-025.width_unknown", "HRV-025.point_pad", "HRV-025.nearest_row",
            "HRV-026.meet", "HRV-027.no_haul_road", "HRV-027.via"} <= seen, sorted(seen)


def test_every_sentence_of_the_licence_volume_is_the_rulebooks(tmp_path) -> None:
    marked = _marked(tmp_path)
    areas = [box(0, 0, 1000, 1000), box(1000, 0, 1500, 1000)]
    volumes = [{"cords": [15.0, 10.0]}, {"cords": [15.0, 2.0], "board_feet": [9000.0, 0.0]},
               {"cords": [None, 5.0]}, {"cords": [0.0, None], "board_feet": [9000.0, None]},
               {"cubic_feet": [3000.0, 100.0]}, {"cords": [5.0, 5.0]}, {"cords": [15.0, 10.0], "owner": [None, None]}]
    parcels = layer(["P1", "P2"], [box(-200, -50, 1000, 1005), box(1000, -50, 1600, 1005)], zoning=["RR", "RR"],
                    owner=["A", None])
    seen: set[str] = set()
    for cols in volumes:
        for over in ({}, {"parcels": parcels}, {"parcels": None}):
            lay = scene(harvest_area=layer(["H1", "H2"], areas, **{"owner": ["A", "A"], **cols}),
                        **{k: v for k, v in over.items() if v is not None})
            if "parcels" in over and over["parcels"] is None:
                lay.frames.pop("parcels")
            f = check_harvest(lay, marked).findings
            for msg in f.loc[(f["rule_id"] == "HRV-001").to_numpy(), "message"]:
                assert _code_words(msg) == "", msg
                seen |= {m[1:].split(" ")[0].rstrip("]") for m in re.findall(r"\[[a-z_]+[ \]]", msg)}
    assert {"cords", "board_feet", "together_two_products", "two_products", "summed", "on_parcel", "on_parcels",
            "if_one_owner", "no_parcels_layer", "not_given", "zero_read_as_blank",
            "exemptions_not_assessed"} <= seen, sorted(seen)


def test_every_sentence_of_the_seqr_classification_is_the_rulebooks(tmp_path) -> None:
    marked = _marked(tmp_path)
    rule = marked[RULE_ID]
    town = tuple(marked.named_districts())
    seen: set[str] = set()
    for _, e in _entries(rule):
        for sizes in ({}, {"units": 10, "lots": 10, "expansion_pct": 10.0, "acres": 1.0, "lanes": 0},
                      {"units": 100, "lots": 100, "expansion_pct": 100.0, "acres": 100.0, "lanes": 5}):
            for said in ({}, {"eis_completed": True, "type_i": False, "chapter_24": True, "board_approval": False,
                              "board_resolved_significant": False, "district": "C-1", "no_effect_on": ("wetlands",)},
                         {"eis_completed": False, "type_i": True, "chapter_24": False, "board_approval": True,
                          "board_resolved_significant": True, "district": "RA-l", "affects": ("wetlands",)}):
                msg = classify(rule, Action(e["key"], **sizes, **said).in_town(town)).iloc[0]["message"]
                assert _code_words(msg) == "", msg
                seen |= {m[1:].split(" ")[0].rstrip("]") for m in re.findall(r"\[[a-z_]+[ \]]", msg)}
    assert {"determination", "bound", "give_value", "conditional", "exempt", "type_ii", "not_of_kind",
            "say_statement", "stated", "district_in", "unit_lots", "less_than"} <= seen, sorted(seen)


@pytest.mark.parametrize("rid", WORDED)
def test_the_shipped_phrases_of_a_worded_rule_are_read_from_vestal(rid) -> None:
    rule = load_rulebook("vestal")[rid]
    for key, template in rule.phrases.items():
        assert template.strip() and not template.startswith("["), (rid, key)


ABSENT = ("HRV-001", "HRV-003", "HRV-012", "HRV-013", "HRV-024", "HRV-025", "HRV-026", "HRV-027")
"""The rules worded before round 25 whose "no ... layer given" sentence became their phrases ``no_layer``,
``empty_layer`` (and HRV-012/013's ``no_stream``)."""


def test_a_layer_not_given_empty_or_with_no_stream_is_said_in_each_rules_words(tmp_path) -> None:
    # before: harvest._absent wrote these sentences itself for these rules (in code, whatever the rulebook said)
    marked = _marked(tmp_path, ABSENT, "absent")
    # a plan needs one layer: the skid trails alone, then the harvest areas alone; given but empty alike
    rest = ("landings", "haul_roads", "streams", "roads", "parcels", "dwellings")
    none, empty = dict.fromkeys(rest), {k: layer([], []) for k in rest}
    ditch = layer(["S1"], [LineString([(200, -100), (200, 1100)])], waterway=["dam"])  # OSM: not_stream
    scenes = {"trails alone": scene(**none, harvest_area=None), "areas alone": scene(**none, skid_trails=None),
              "trails, the rest empty": scene(**empty, harvest_area=layer([], [])),
              "areas, the rest empty": scene(**empty, skid_trails=layer([], [])),
              "no stream": scene(streams=ditch), "roads empty": scene(roads=layer([], []))}
    seen: set[str] = set()
    for name, lay in scenes.items():
        f = check_harvest(lay, marked).findings
        f = f.loc[f["rule_id"].isin(ABSENT).to_numpy()]
        assert len(f) >= len(ABSENT), name
        for rid, msg in zip(f["rule_id"], f["message"]):
            assert _code_words(msg) == "", (name, rid, msg)
            seen |= {f"{rid}.{m[1:].split(' ')[0].rstrip(']')}" for m in re.findall(r"\[[a-z_]+[ \]]", msg)}
    for rid in ABSENT:
        assert {f"{rid}.no_layer", f"{rid}.empty_layer"} <= seen, (rid, sorted(k for k in seen if k.startswith(rid)))
    assert {"HRV-012.no_stream", "HRV-013.no_stream"} <= seen, sorted(seen)
    # the shipped words are the code's of before, for every rule that says them
    rb = load_rulebook("vestal")
    for rid in ABSENT:
        assert rb[rid].phrase("no_layer", layer="roads") == "no roads layer given"
        assert rb[rid].phrase("empty_layer", layer="roads") == "the roads layer given is empty (no feature)"
