"""HRV-012 (skidding in stream channels) and HRV-013 (stream crossings, and the possible crossings a stream map
leaves out) worded wholly by the rulebook's phrases: a town file that rewrites every phrase of them (and their
messages to ``{detail}``) sees its words alone in every finding, with the values the checks measured; no
sentence of the checks' code is left (rules/harvest.py; rulebook/model.py ``Rule.phrase``). A town may reword
one phrase; a phrase or a field the checks do not write is refused when the rulebook loads."""

from __future__ import annotations

import re

import pytest
import yaml
from shapely.geometry import LineString, MultiLineString, box
from test_harvest import layer, scene
from test_rule_phrases import _code_words
from test_rule_phrases import _marked as marked

from geoconstraints.commands import check_harvest
from geoconstraints.errors import RulebookError
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rulebook.model import Rulebook

WORDED = ("HRV-012", "HRV-013")
"""The stream rules whose every detail sentence is a phrase (but the shared one for a layer not given)."""

PIECE_WORDS = ("on_bank", "ends_inside", "same_bank", "too_long", "kind_unknown")
"""The phrases HRV-012 and HRV-013 both write of a part of a plan line inside a channel (one reading for both)."""


def _marked(tmp_path, name: str = "marked", **switches):
    """vestal with every phrase of :data:`WORDED` written ``[key {field} ...]``, messages ``{detail}``
    (and HRV-013's ``switches``)."""
    return marked(tmp_path, WORDED, name, {"HRV-013": switches} if switches else None)


def _road(u0: float, v: float = 900.0) -> LineString:
    return LineString([(u0 - 100, v), (u0 + 100, v)])


def _streams():
    """The scene's S1 (perennial, u = 200) and S2 (intermittent, u = 800), and beside plan lines placed 500 ft
    apart east of the harvest areas (u0): stream lines and polygons stopping short of a road (v = 900) or ending
    on it, and channels a road or trail runs in (v = 5000)."""
    u = {k: 3000.0 + 500.0 * i for i, k in enumerate(
        ("two", "same", "on", "pair_poly", "poly", "resume_on", "long", "v", "inside", "bank", "far"))}
    items = [
        ("S1", LineString([(200, -100), (200, 1100)]), "perennial"),
        ("S2", LineString([(800, -100), (800, 1100)]), "intermittent"),
        # two lines stopping 20 ft south and 30 ft north of G-two: one gap of 50 ft, two streams
        ("S3a", LineString([(u["two"], 0), (u["two"], 880)]), "perennial"),
        ("S3b", LineString([(u["two"], 930), (u["two"], 1500)]), "perennial"),
        # one feature in two parts, 15 ft short on the south, 35 ft on the north: it resumes across
        ("S4", MultiLineString([[(u["same"], 0), (u["same"], 885)], [(u["same"], 935), (u["same"], 1500)]]),
         "intermittent"),
        # a line of no kind ending on G-on, nothing north
        ("S5", LineString([(u["on"], 0), (u["on"], 900)]), None),
        # two river polygons stopping 20 ft either side of G-pair_poly
        ("RVa", box(u["pair_poly"] - 50, 0, u["pair_poly"] + 50, 880), "perennial"),
        ("RVb", box(u["pair_poly"] - 50, 920, u["pair_poly"] + 50, 1500), "perennial"),
        # a river polygon stopping 30 ft south of G-poly, nothing north
        ("RV", box(u["poly"] - 50, 0, u["poly"] + 50, 870), "perennial"),
        # one feature ending on G-resume_on and resuming on it 30 ft east (a skewed culvert)
        ("S6", MultiLineString([[(u["resume_on"], 0), (u["resume_on"], 900)],
                                [(u["resume_on"] + 30, 900), (u["resume_on"] + 30, 1500)]]), "perennial"),
        # channels along v = 5000: a line of no kind, and 60-ft-wide polygons
        ("SL", LineString([(u["long"] - 300, 5000), (u["long"] + 300, 5000)]), None),
        ("PV", box(u["v"] - 200, 5000, u["v"] + 200, 5060), "perennial"),
        ("PI", box(u["inside"] - 200, 5000, u["inside"] + 200, 5060), "perennial"),
        ("PB", box(u["bank"] - 200, 5000, u["bank"] + 200, 5060), "perennial"),
    ]
    return u, layer([i for i, _, _ in items], [g for _, g, _ in items], kind=[k for _, _, k in items])


def _lines(u):
    """Plan lines: a haul road at each stream end (v = 900), and in each channel (v = 5000) a haul road and a
    skid trail (G- and T-), one of them far from every stream."""
    dx = 50.0 * 8 ** 0.5  # at asin(1/3) to SL: 30 ft inside its 10-ft channel, more than twice its width
    chan = {
        "long": LineString([(u["long"] - dx, 4950), (u["long"] + dx, 5050)]),
        "v": LineString([(u["v"] - 50, 4950), (u["v"], 5030), (u["v"] + 50, 4950)]),  # in and out by one bank
        "inside": LineString([(u["inside"], 4950), (u["inside"], 5030)]),  # ends in the channel
        "bank": LineString([(u["bank"] - 100, 5060), (u["bank"] + 100, 5060)]),  # along the north bank
        "far": LineString([(u["far"], 8000), (u["far"] + 100, 8000)]),
    }
    # the scene's HR2 crosses S1 (a crossing), ST1 runs in S1's channel, ST2 crosses it
    roads = [("HR1", LineString([(500, 500), (500, 1030)])), ("HR2", LineString([(220, 500), (100, 500)]))]
    roads += [(f"G-{k}", _road(u[k])) for k in ("two", "same", "on", "pair_poly", "poly", "resume_on")]
    roads += [(f"G-{k}", g) for k, g in chan.items()]
    trails = [("ST1", LineString([(202, 100), (202, 400)])), ("ST2", LineString([(100, 700), (300, 700)]))]
    trails += [(f"T-{k}", g) for k, g in chan.items()]
    return layer(*zip(*roads)), layer(*zip(*trails))


def _plan():
    u, streams = _streams()
    roads, trails = _lines(u)
    return scene(streams=streams, haul_roads=roads, skid_trails=trails)


def _keys(msg: str) -> set[str]:
    return {m[1:].split(" ")[0].rstrip("]") for m in re.findall(r"\[[a-z_]+[ \]]", msg)}


def test_every_sentence_of_the_stream_crossing_rules_is_the_rulebooks(tmp_path) -> None:
    marked = _marked(tmp_path)
    runs = {"all kinds": (_plan(), marked),
            "perennial only": (_plan(), _marked(tmp_path, "perennial", include_intermittent=False)),
            "no HRV-012": (_plan(), Rulebook("m", "1", "HRV-013 alone", {"HRV-013": marked["HRV-013"]}))}
    seen: set[str] = set()
    statuses: set[tuple[str, str]] = set()
    for name, (lay, book) in runs.items():
        f = check_harvest(lay, book).findings
        f = f.loc[f["rule_id"].isin(WORDED).to_numpy()]
        assert len(f) > (10 if name == "no HRV-012" else 25), name
        for rid, status, msg in zip(f["rule_id"], f["status"], f["message"]):
            assert _code_words(msg) == "", (name, rid, msg)
            seen |= {f"{rid}.{k}" for k in _keys(msg)}
            statuses.add((rid, status))
    assert {("HRV-012", "violation"), ("HRV-012", "pass"), ("HRV-013", "review"), ("HRV-013", "pass"),
            ("HRV-013", "not_evaluated")} <= statuses
    # the scenes reach every phrase (each branch of the checks: a stream line's end near a road, alone, paired
    # with another stream or with itself across the road, on the road; a polygon's end, alone or paired; a
    # crossing; a haul road along a channel for each reason; no finding; no HRV-012 in the rulebook)
    book = load_rulebook("vestal")
    every = {f"{rid}.{k}" for rid in WORDED for k in book[rid].phrases
             if k not in ("no_layer", "empty_layer", "no_stream")}  # reached by test_rule_phrases.py's ABSENT scenes
    assert every <= seen, sorted(every - seen)


def test_the_sentences_name_what_the_checks_measured(tmp_path) -> None:
    # the marked phrases carry the values: the gap of 50 ft across G-two (20 + 30 ft), the ends' distances
    f = check_harvest(_plan(), _marked(tmp_path)).findings
    msg = dict(zip(f["rule_id"] + " " + f["subject_id"], f["message"]))
    # (a marked phrase gives its fields in name order: gap's ends, gap, station, stream_end_distance_ft;
    # two_stream_ends' other, other_stops, stops, stream)
    assert msg["HRV-013 G-two"] == ("[gap [two_stream_ends [stream_line perennial S3b] [stops 30.0] [stops 20.0] "
                                    "[stream_line perennial S3a]] 50.0 100 50]")
    assert msg["HRV-013 G-same"] == ("[gap [same_stream_ends [resumes 35.0] [stops 15.0] "
                                     "[stream_line intermittent S4]] 50.0 100 50]")
    assert msg["HRV-013 G-on"] == "[line_end 100 [ends_on] [stream_line [kind_unknown] S5] 50]"
    assert msg["HRV-013 G-resume_on"].startswith("[gap [same_stream_ends [resumes_on] [ends_on] ")
    assert msg["HRV-013 G-poly"] == "[polygon_end 100 [stops 30.0] [stream_polygon perennial RV] 50]"
    # G-long runs 30 ft in SL's 10-ft channel (at asin(1/3) to it), more than twice its width: along it
    assert msg["HRV-013 G-long"] == "[along [kind_unknown] 150 SL [too_long 30.0 2 10.0]]"
    assert msg["HRV-012 T-far"] == "[channel 10]; [not_in_channel]"


def test_the_shipped_wording_is_one_reading_for_both_rules() -> None:
    # a part of a plan line inside a channel is worded alike by HRV-012 and HRV-013 in the shipped rulebook
    book = load_rulebook("vestal")
    for key in PIECE_WORDS:
        assert book["HRV-012"].phrases[key] == book["HRV-013"].phrases[key], key
    for rid in WORDED:
        assert all(t.strip() and not t.startswith("[") for t in book[rid].phrases.values()), rid


def _town(tmp_path, rules: list[dict]):
    p = tmp_path / "town.yaml"
    p.write_text(yaml.safe_dump({"extends": "vestal", "rules": rules}), "utf-8")
    return load_rulebook(p)


def test_a_town_may_reword_one_phrase_and_sees_it(tmp_path) -> None:
    town = _town(tmp_path, [
        {"id": "HRV-013", "phrases": {"stops": "halts {distance} ft short of it",
                                      "too_long": "{length} ft in the bed, over {max_crossing_length_ratio} x {width} ft"}},
        {"id": "HRV-012", "phrases": {"not_in_channel": "clear of every channel"}}])
    assert town["HRV-013"].phrases["resumes"] == load_rulebook("vestal")["HRV-013"].phrases["resumes"]
    f = check_harvest(_plan(), town).findings
    msg = dict(zip(f["rule_id"] + " " + f["subject_id"], f["message"]))
    assert ("stream S3a (perennial) halts 20.0 ft short of it on one side and stream S3b (perennial) halts 30.0 ft "
            "short of it on the other, a gap of 50.0 ft across it") in msg["HRV-013 G-two"]
    assert "stream S4 (intermittent) halts 15.0 ft short of it on one side and resumes 35.0 ft from it" \
        in msg["HRV-013 G-same"]
    assert "30.0 ft in the bed, over 2 x 10.0 ft; any work in the stream bed" in msg["HRV-013 G-long"]
    # HRV-012 keeps its own words for the same trail
    assert "(more than 2 times the width: along the channel, not across it)" in msg["HRV-012 T-long"]
    assert msg["HRV-012 T-far"].endswith("10 ft wide along stream lines; clear of every channel).")


@pytest.mark.parametrize("rid,phrases,words", [
    ("HRV-013", {"stopz": "stops {distance} ft from it"}, ["rule HRV-013 phrases.stopz", "not a phrase",
                                                            "stops, stream_line"]),
    ("HRV-013", {"stops": "stops {distnace} ft from it"}, ["rule HRV-013 phrases.stops", "{distnace}"]),
    ("HRV-013", {"gap": "a gap of {gap} ft, {channel_width_ft} ft wide"}, ["rule HRV-013 phrases.gap",
                                                                            "{channel_width_ft}"]),
    ("HRV-012", {"piece": "{stream} at {station} ft ({gap} ft)"}, ["rule HRV-012 phrases.piece", "{gap}"]),
    ("HRV-012", {"crossing": "crossing of {stream}"}, ["rule HRV-012 phrases.crossing", "not a phrase"]),
])
def test_a_phrase_or_field_the_check_does_not_write_is_refused_at_load(tmp_path, rid, phrases, words) -> None:
    with pytest.raises(RulebookError) as err:
        _town(tmp_path, [{"id": rid, "phrases": phrases}])
    for w in words:
        assert w in str(err.value), (w, str(err.value))
