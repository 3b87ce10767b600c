"""FLD-001, FLD-002 and FLD-005..FLD-010 (the flood screening rules, and the flood-site rules beside the floor
rules) worded wholly by the rulebook's phrases: a town file that rewrites every phrase of them (and their
messages to ``{detail}``) sees its words alone in every finding of ``screen`` and ``flood-site``, with the values
the checks measured; no sentence of rules/flood.py is left, the notes appended to a detail (slivers ignored,
partial coverage, the square feet near a lot-size limit, the dollars near the substantial improvement share)
included. A sentence several rules write (no flood layer, off the map, partial data) is a phrase of each."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import geopandas as gpd
import pandas as pd
import pytest
import yaml
from common import NY_FT
from test_flood import _ae_with_lines, _site_layers, parcels, screen, sq, zones
from test_rule_phrases import _code_words
from test_rule_phrases import _marked as marked

from geoconstraints import load_rulebook
from geoconstraints.commands import check_site
from geoconstraints.errors import RulebookError
from geoconstraints.io.tables import DATE_FORMS, date_forms_text
from geoconstraints.rules.flood import FloodContext, check_adopted_map, check_substantial_improvement

WORDED = ("FLD-001", "FLD-002", "FLD-005", "FLD-006", "FLD-007", "FLD-008", "FLD-009", "FLD-010")
"""The flood rules of this file, whose every detail sentence is a phrase."""

RB = load_rulebook("vestal")

STATE, COMMUNITY = "STATE ENCROACHMENT AREA", "COMMUNITY ENCROACHMENT AREA"


def _marks(message: str) -> set[str]:
    return {m[1:].split(" ")[0].rstrip("]") for m in re.findall(r"\[[a-z_]+[ \]]", message)}


def _layout(subtype=lambda s: s):
    """(parcels, flood zones) of a town reaching the branches of the screening rules, one parcel per 1,000 ft
    block; ``subtype`` maps each polygon's ZONE_SUBTY (the layer read as it is, or stripped, or coded)."""
    blocks: list[tuple] = []  # (parcel, [(zone polygon, FLD_ZONE, ZONE_SUBTY, SFHA_TF)])

    def at(i: int, x0: float, y0: float, x1: float, y1: float):
        return sq(1000 * i + x0, y0, 1000 * i + x1, y1)

    def add(w: float, h: float, *zs: tuple) -> None:
        i = len(blocks)
        blocks.append((at(i, 0, 0, w, h), [(at(i, *z[0]), *z[1:]) for z in zs]))

    whole = (-10, -10, 610, 610)
    add(200, 200, ((-10, -10, 100, 210), "AE", None, "T"), ((100, -10, 210, 210), "X", None, "F"))  # half AE
    add(200, 200, (whole, "X", None, "F"))  # outside the SFHA
    add(200, 200, ((-10, -10, 100, 210), "X", None, "F"))  # half off the map
    add(200, 200)  # off the map
    add(200, 200, ((-10, -10, 100, 210), "D", None, "F"), ((100, -10, 210, 210), "AE", None, "T"))  # zone D part
    add(200, 200, ((-10, -10, 100, 210), "AE", None, "T"), ((100, -10, 210, 210), "AE", "FLOODWAY", "T"))
    add(200, 200, ((-10, -10, 300, 210), "AE", None, "T"), ((300, -10, 400, 210), "AE", "FLOODWAY", "T"))  # reach
    add(200, 200, ((-10, -10, 199.5, 210), "AE", None, "T"), ((199.5, -10, 400, 210), "AE", "FLOODWAY", "T"))
    add(200, 200, (whole, "AE", STATE, "T"))  # a floodway-like area only
    add(200, 200, ((-10, -10, 100, 210), "AE", "FLOODWAY", "T"), ((100, -10, 150, 210), "AE", COMMUNITY, "T"),
        ((150, -10, 210, 210), "AE", STATE, "T"))  # floodway and two floodway-like areas
    add(200, 200, ((-10, -10, 198.4, 210), "AE", None, "T"), ((198.4, -10, 199.2, 210), "AE", STATE, "T"),
        ((199.2, -10, 400, 210), "AE", COMMUNITY, "T"))  # two floodway-like slivers, together not one
    add(200, 200, ((-10, -10, 199.5, 210), "AE", None, "T"), ((199.5, -10, 400, 210), "AE", STATE, "T"))
    add(200, 200, (whole, "A", None, "T"))
    add(200, 200, (whole, "AO", None, "T"))
    add(200, 200, (whole, "AR", None, "T"))  # in no list
    add(200, 200, (whole, "", None, "T"))  # no FLD_ZONE value
    add(100, 100, (whole, "X", COMMUNITY, "F"))  # a floodway-like area drawn on X
    add(200, 200, ((-10, -10, 199.2, 210), "X", None, "F"), ((199.2, -10, 400, 210), "AE", None, "T"))  # SFHA sliver
    add(500, 500, ((-10, -10, 610, 100), "AE", None, "T"), ((-10, 100, 610, 610), "X", None, "F"))  # over 5 acres
    add(500, 500, ((-10, -10, 250, 610), "X", None, "F"))  # over 5 acres, half off the map
    add(435.62, 500, ((-10, -10, 610, 100), "AE", None, "T"), ((-10, 100, 610, 610), "X", None, "F"))  # just over
    add(435.58, 500, ((-10, -10, 610, 100), "AE", None, "T"), ((-10, 100, 610, 610), "X", None, "F"))  # just under
    add(145.25, 150, (whole, "AE", None, "T"))  # just over 0.5 acre
    add(145.15, 150, (whole, "AE", None, "T"))  # just under 0.5 acre
    add(100, 100, (whole, "AE", None, "T"))  # a small lot
    add(15, 15, ((-10, -10, 5, 610), "X", None, "F"), ((5, -10, 10, 610), "B", None, "F"),
        ((10, -10, 610, 610), "C", None, "F"))  # 75 sq ft in each zone, under the minimum area: no zone named
    add(200, 200, ((-10, -10, 100, 210), "AE", STATE, "T"), ((100, -10, 210, 210), "AE", COMMUNITY, "T"))
    # an SFHA subtype none of FEMA's (FLD-002's known_subtypes): alone, beside the floodway, beside a floodway-like area
    add(200, 200, (whole, "AE", "FLODWAY", "T"))
    add(200, 200, ((-10, -10, 100, 210), "AE", "FLOODWAY", "T"), ((100, -10, 210, 210), "AE", "FLODWAY", "T"))
    add(200, 200, ((-10, -10, 100, 210), "AE", "FLODWAY", "T"), ((100, -10, 210, 210), "AE", STATE, "T"))
    p = parcels(*(b[0] for b in blocks))
    rows = [{"FLD_ZONE": z, "ZONE_SUBTY": subtype(s), "SFHA_TF": tf, "STATIC_BFE": -9999.0, "V_DATUM": "NAVD88",
             "DFIRM_ID": "36007C", "EFF_DATE": "2010-06-16", "geometry": g}
            for _, zs in blocks for g, z, s, tf in zs]
    return p, gpd.GeoDataFrame(rows, geometry="geometry", crs=NY_FT)


def _fld010(rule, ids: list, eff: list) -> str:
    """FLD-010's message for a flood layer holding DFIRM_ID ``ids`` and EFF_DATE ``eff``."""
    flood = gpd.GeoDataFrame({"FLD_ZONE": ["X"] * len(eff), "DFIRM_ID": pd.Series(ids, dtype=object),
                              "EFF_DATE": pd.Series(eff, dtype=object)}, geometry=[sq(0, 0, 10, 10)] * len(eff),
                             crs=NY_FT)
    table = gpd.GeoDataFrame({"parcel_id": []}, geometry=[], crs=NY_FT)
    ctx = FloodContext("screen", SimpleNamespace(get_layer={"flood_zones": flood}.get), table, "parcels", True)
    return check_adopted_map(ctx, rule).iloc[0]["message"]


def _fld008(rule, cost: float, value: float) -> str:
    """FLD-008's message for a cost and market value that check_site refuses (a value under $1)."""
    table = gpd.GeoDataFrame({"feature_id": ["F1"]}, geometry=[sq(0, 0, 10, 10)], crs=NY_FT)
    ctx = FloodContext("site", SimpleNamespace(get_layer=lambda name: None), table, "footprints", True,
                       site={"improvement_cost": cost, "market_value": value})
    return check_substantial_improvement(ctx, rule).iloc[0]["message"]


def _screens(tmp_path: Path, rb):
    """(name, findings) of the screenings: the layer as it is, stripped of ZONE_SUBTY, coded, none given."""
    p, fz = _layout()
    out = [("text", screen(tmp_path / "text", rb, parcels=p, flood_zones=fz).findings)]
    p, fz = _layout(lambda s: None)
    out.append(("blank", screen(tmp_path / "blank", rb, parcels=p, flood_zones=fz).findings))
    codes = {None: "9999", "FLOODWAY": "1100", STATE: "1210", COMMUNITY: "1030"}
    p, fz = _layout(codes.get)
    out.append(("coded", screen(tmp_path / "coded", rb, parcels=p, flood_zones=fz).findings))
    out.append(("no layer", screen(tmp_path / "none", rb, parcels=p).findings))
    # FLD-010 on a layer of no DFIRM_ID, of no EFF_DATE, of neither, of the adopted map
    bare = zones((sq(-10, -10, 210, 210), "X"))
    for name, cols in (("no id", {"EFF_DATE": "1998-03-02"}), ("no date", {"DFIRM_ID": "360057"}), ("bare", {}),
                       ("adopted", {"DFIRM_ID": "360057", "EFF_DATE": "1998-03-02"})):
        f = screen(tmp_path / name, rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=bare.assign(**cols)).findings
        out.append((name, f.loc[f["rule_id"] == "FLD-010"]))
    return out


def _sites(tmp_path: Path, rb):
    """(name, findings) of flood-site runs reaching FLD-001, FLD-002, FLD-007 and FLD-008 (and the others')."""
    fz, bl, st = _ae_with_lines()
    like = zones((sq(-500, -200, 1500, 200), "AE"), (sq(-500, 200, 1500, 600), "AE", STATE),
                 (sq(-500, 600, 1500, 900), "X"))
    places = {"AE": _site_layers(tmp_path / "ae", sq(0, 0, 100, 100), fz=fz, bl=bl, streams=st),
              "floodway": _site_layers(tmp_path / "fw", sq(0, 300, 100, 350), fz=fz, bl=bl, streams=st),
              "floodway-like": _site_layers(tmp_path / "like", sq(0, 150, 100, 250), fz=like),
              "X": _site_layers(tmp_path / "x", sq(0, 700, 100, 800), fz=fz, bl=bl, streams=st),
              "off the map": _site_layers(tmp_path / "off", sq(5000, 0, 5100, 100), fz=fz, bl=bl, streams=st),
              "no layer": _site_layers(tmp_path / "none", sq(0, 0, 100, 100))}
    ok = {"enclosed_sqft": 800, "openings": 2, "openings_sqin": 800, "opening_bottom_ft": 1.0}
    options = [{}, ok, {**ok, "openings": 1, "openings_sqin": 799, "opening_bottom_ft": 1.5},
               {"enclosed_sqft": 800, "openings": 2}, {"enclosed_sqft": 0},
               {"improvement_cost": 50_000, "market_value": 100_000},
               {"improvement_cost": 40_000, "market_value": 100_000},
               {"improvement_cost": 49_999.99, "market_value": 100_000},
               {"improvement_cost": 50_000.01, "market_value": 100_000}]
    out = []
    for name, layers in places.items():
        for kw in options[:2] if name != "AE" else options:
            for no_rise in (False, True):
                out.append((name, check_site(layers, rb, use="residential", lowest_floor_ft=900,
                                             no_rise_evaluation=no_rise, **kw).findings))
    return out


def _code_words_of(rid: str, msg: str) -> str:
    """:func:`_code_words` of a message, FLD-010's value texts left out: why an EFF_DATE value is no date
    (io/tables.py's reasons, e.g. "a year alone names no day") and the date forms it reads (DATE_FORMS)."""
    if rid == "FLD-010":
        msg = re.sub(r"'[^']*' \([^()]*\)", "", msg.replace(date_forms_text(DATE_FORMS), ""))
    return _code_words(msg)


def test_every_sentence_of_the_flood_screening_rules_is_the_rulebooks(tmp_path) -> None:
    rb = marked(tmp_path, WORDED)
    cap = marked(tmp_path, WORDED, "not_covered", {"FLD-006": {"no_elevation_zones_reading": "not_covered"}})
    seen: dict[str, set[str]] = {rid: set() for rid in WORDED}
    statuses: dict[str, set[str]] = {rid: set() for rid in WORDED}
    runs = [*_screens(tmp_path / "a", rb), *_sites(tmp_path / "b", rb)]
    p, fz = _layout()
    runs.append(("not covered", screen(tmp_path / "c", cap, parcels=p, flood_zones=fz).findings))
    bad = ["1998", "13/2/1998", "March 2nd", "3/2/98", "1998-02-30"]
    extra = {"FLD-010": [_fld010(rb["FLD-010"], ["360057"], bad), _fld010(rb["FLD-010"], ["36007C"], ["1998-03-02"]),
                         _fld010(rb["FLD-010"], ["360057"], ["2010-06-16"])],
             "FLD-008": [_fld008(rb["FLD-008"], 1.0, 0.0), _fld008(rb["FLD-008"], 1e308, 1.0)]}
    for name, f in runs:
        f = f.loc[f["rule_id"].isin(WORDED).to_numpy()]
        assert len(f), name
        for rid, status, msg in zip(f["rule_id"], f["status"], f["message"]):
            assert msg and _code_words_of(rid, msg) == "", (name, rid, msg)
            seen[rid] |= _marks(msg)
            statuses[rid].add(status)
    for rid, msgs in extra.items():
        for msg in msgs:
            assert msg and _code_words_of(rid, msg) == "", (rid, msg)
            seen[rid] |= _marks(msg)
    for rid in WORDED:  # every phrase of every rule, in some branch
        assert seen[rid] == set(RB[rid].phrases), (rid, sorted(set(RB[rid].phrases) - seen[rid]))
    assert statuses["FLD-001"] == {"pass", "review", "not_evaluated"}, statuses
    assert statuses["FLD-002"] == {"pass", "review", "violation", "not_evaluated"}, statuses
    assert statuses["FLD-005"] == {"pass", "review", "info", "not_evaluated"}, statuses
    assert statuses["FLD-006"] == {"pass", "review", "info", "not_evaluated"}, statuses


@pytest.mark.parametrize("rid", WORDED)
def test_the_shipped_phrases_of_the_screening_rules_are_read_from_vestal(rid) -> None:
    rule = RB[rid]
    assert rule.phrases, rid
    for key, template in rule.phrases.items():
        assert template.strip() and not template.startswith("["), (rid, key)


def test_a_sentence_several_rules_write_is_the_same_phrase_in_each() -> None:
    shared = ("no_flood_layer", "not_covered", "partial_data", "undetermined_part")
    for key in shared:
        texts = {rid: RB[rid].phrases[key] for rid in ("FLD-001", "FLD-002", "FLD-004", "FLD-005", "FLD-006",
                                                        "FLD-007", "FLD-009") if key in RB[rid].phrases}
        assert len(texts) >= 5 and len(set(texts.values())) == 1, (key, texts)


def test_the_shipped_words_are_the_checks_words(tmp_path) -> None:
    p, fz = _layout()
    f = screen(tmp_path, RB, parcels=p, flood_zones=fz).findings
    msg = dict(zip(f["rule_id"] + " " + f["subject_id"], f["message"]))
    assert msg["FLD-001 P1"] == ("parcels P1: 0.46 acres in the area of special flood hazard, development permit "
                                 "required (50.0% of the parcel, zones AE; X).")
    assert msg["FLD-009 P23"] == ("parcels P23: lot of 0.5 acres (over 0.5 acre: a variance needs more technical "
                                  "justification as the lot size increases; 21,787.5 sq ft, over the 21,780 sq ft of "
                                  "0.5 acre).")
    assert ("parcels P10: in the regulatory floodway (0.46 acres, 50.0% of the parcel: encroachments prohibited "
            "unless a technical evaluation shows no rise; also in a floodway-like area (ZONE_SUBTY "
            "COMMUNITY ENCROACHMENT AREA and STATE ENCROACHMENT AREA)") in msg["FLD-002 P10"]


def test_a_town_may_reword_one_screening_phrase(tmp_path) -> None:
    p = tmp_path / "town.yaml"
    p.write_text(yaml.safe_dump({"extends": "vestal", "rules": [
        {"id": "FLD-001", "phrases": {"in_sfha": "{share} of this {subject} lies in {zones}"}},
        {"id": "FLD-009", "phrases": {"floodway_condition": "ask the town engineer about the floodway"}}]}), "utf-8")
    town = load_rulebook(p)
    pa, fz = _layout()
    f = screen(tmp_path / "s", town, parcels=pa, flood_zones=fz).findings
    msg = dict(zip(f["rule_id"] + " " + f["subject_id"], f["message"]))
    assert "(50.0% of this parcel lies in AE; X)" in msg["FLD-001 P1"], msg["FLD-001 P1"]
    assert msg["FLD-009 P6"].endswith("; ask the town engineer about the floodway)."), msg["FLD-009 P6"]
    assert "if they do, ask the town engineer about the floodway" in msg["FLD-009 P9"], msg["FLD-009 P9"]
    # the other phrases, and the other rules' same-named phrases, are the shipped ones
    assert town["FLD-001"].phrases["zones"] == RB["FLD-001"].phrases["zones"]
    assert town["FLD-002"].phrases == RB["FLD-002"].phrases


@pytest.mark.parametrize("rid, phrases, said", [
    ("FLD-001", {"in_floodway": "{share}"}, "rule FLD-001 phrases.in_floodway: not a phrase the toolkit writes"),
    ("FLD-005", {"near_over": "{sqft} sq ft over {max_lots} lots of {acres}"},
     "rule FLD-005 phrases.near_over: field {acres} is not a name this template may use"),
    ("FLD-009", {"floodway_open": "open ({why}): {reason}"}, "rule FLD-009 phrases.floodway_open: field {reason}"),
    ("FLD-010", {"map_read": "DFIRM_ID {ids} of {panels}"}, "rule FLD-010 phrases.map_read: field {panels}"),
])
def test_an_unknown_screening_phrase_or_field_is_refused_at_load(tmp_path, rid, phrases, said) -> None:
    p = tmp_path / "town.yaml"
    p.write_text(yaml.safe_dump({"extends": "vestal", "rules": [{"id": rid, "phrases": phrases}]}), "utf-8")
    with pytest.raises(RulebookError) as err:
        load_rulebook(p)
    assert said in str(err.value), str(err.value)
