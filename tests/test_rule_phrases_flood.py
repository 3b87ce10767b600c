"""FLD-003 and FLD-004 (the lowest floor against the BFE, and where the FIRM gives none against the highest
adjacent grade + 2 ft) worded wholly by the rulebook's phrases: a town file that rewrites every phrase of them
(and their messages to ``{detail}``) sees its words alone in every finding of ``flood-site``, with the values
the checks measured; no sentence of rules/flood.py (nor of rules/dem_cells.py's coarse-DEM sentences, which
FLD-004 words in its own phrases) is left. And FLD-003 in an SFHA zone no list knows (AR/AE, SFHA_TF = T)
no longer says "FLD-004 applies" where FLD-004 is not evaluated: whether the FIRM gives a BFE there is not
known, so FLD-003 is ``not_evaluated`` too, naming the zone and the fix."""

from __future__ import annotations

import re
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
import yaml
from affine import Affine
from common import NY_FT, X0, Y0
from shapely.geometry import LineString
from test_flood import _ae_with_lines, _bfe_bound_l_stream, _river_ending_at_x1000, _site_layers, sq, zones
from test_rule_phrases import _code_words
from test_rule_phrases import _marked as marked

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import check_site
from geoconstraints.errors import RulebookError

WORDED = ("FLD-003", "FLD-004")
"""The flood rules whose every detail sentence is a phrase."""

RB = load_rulebook("vestal")


def _marked(tmp_path: Path):
    """vestal with every phrase of :data:`WORDED` written ``[key {field} ...]``, messages ``{detail}``."""
    return marked(tmp_path, WORDED)


def _dem(path: Path, *, cell: float = 10.0, from_x: float = -500.0) -> Path:
    """A flat DEM at 100 ft on ``cell``-ft cells from x = ``from_x`` (local feet) to x = 1500, y -500..1000."""
    w, h = int((1500 - from_x) / cell), int(1500 / cell)
    with rasterio.open(path, "w", driver="GTiff", width=w, height=h, count=1, dtype="float32", crs=NY_FT,
                       transform=Affine(cell, 0, X0 + from_x, 0, -cell, Y0 + 1000)) as dst:
        dst.write(np.full((h, w), 100.0, dtype="float32"), 1)
    return path


def _zone(geom, zone: str, *, static_bfe: float = -9999.0) -> dict:
    return {"FLD_ZONE": zone, "ZONE_SUBTY": None, "SFHA_TF": "T", "STATIC_BFE": static_bfe, "V_DATUM": "NAVD88",
            "geometry": geom}


def _flat(tmp_path: Path, fz: list[dict] | None, *, dem: dict | None = None, lines: bool = True):
    """The footprint x 0..50, y 0..40 on flood zones ``fz`` (None: no flood layer), with BFE lines of 110 ft either
    side across a river along y = 100 (``lines``) and a flat DEM at 100 ft (``dem``: :func:`_dem`'s options; None:
    no DEM)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    gpkg = tmp_path / "in.gpkg"
    gpd.GeoDataFrame({"id": ["F1"]}, geometry=[sq(0, 0, 50, 40)], crs=NY_FT).to_file(gpkg, layer="footprints")
    if fz is not None:
        gpd.GeoDataFrame(fz, geometry="geometry", crs=NY_FT).to_file(gpkg, layer="flood_zones")
    if lines:
        gpd.GeoDataFrame({"ELEV": [110.0, 110.0], "V_DATUM": ["NAVD88"] * 2}, crs=NY_FT,
                         geometry=[LineString([(X0 - 100, Y0 - 300), (X0 - 100, Y0 + 300)]),
                                   LineString([(X0 + 200, Y0 - 300), (X0 + 200, Y0 + 300)])]).to_file(
            gpkg, layer="bfe_lines")
        gpd.GeoDataFrame({"name": ["River"]}, crs=NY_FT,
                         geometry=[LineString([(X0 - 500, Y0 + 100), (X0 + 1000, Y0 + 100)])]).to_file(
            gpkg, layer="streams")
    dem_path = None if dem is None else _dem(tmp_path / "dem.tif", **dem)
    return load_layers(gpkg, dem=dem_path, dem_z_units="ft" if dem is not None else None, primary=("footprints",))


WHOLE = sq(-500, -500, 500, 500)
FLAT = {"cell": 10.0}


def _scenes(tmp_path: Path):
    """(name, layers, check_site options) reaching the branches of FLD-003 and FLD-004."""
    a, ar = [_zone(WHOLE, "A")], [_zone(WHOLE, "AR/AE")]
    mixed = [_zone(sq(-500, -500, 25, 500), "AE", static_bfe=101.0), _zone(sq(25, -500, 500, 500), "A")]
    mixed_ar = [_zone(sq(-500, -500, 25, 500), "AE", static_bfe=101.0), _zone(sq(25, -500, 500, 500), "AR/AE")]
    ae_static = [_zone(WHOLE, "AE", static_bfe=104.0)]

    def flat(name: str, fz: list[dict] | None, **kw):
        return _flat(tmp_path / name, fz, **kw)

    bl, st = _river_ending_at_x1000()
    upstream = _site_layers(tmp_path / "upstream", sq(950, 0, 1050, 50), fz=zones((sq(-500, -500, 3000, 500), "AE")),
                            bl=bl, streams=st)
    fz, bl2, st2 = _ae_with_lines()
    interpolated = _site_layers(tmp_path / "interp", sq(0, 0, 100, 100), fz=fz, bl=bl2, streams=st2)
    bend, _, _ = _bfe_bound_l_stream(tmp_path / "bend", 500.0, 812.0)
    many = {"zone A": flat("a", a, dem=FLAT), "AR/AE": flat("ar", ar, dem=FLAT),
            "mixed": flat("mixed", mixed, dem=FLAT), "mixed AR/AE": flat("mixed_ar", mixed_ar, dem=FLAT),
            "AE static": flat("ae", ae_static, dem=FLAT), "coarse": flat("coarse", a, dem={"cell": 40.0}),
            "no DEM": flat("nodem", a), "part DEM": flat("partdem", a, dem={"cell": 10.0, "from_x": 25.0})}
    few = {"blank zone": flat("blank", [_zone(WHOLE, "")], dem=FLAT),
           "AE no BFE": flat("ae_none", [_zone(WHOLE, "AE")], dem=FLAT, lines=False),
           "zone X": flat("x", [{**_zone(WHOLE, "X"), "SFHA_TF": "F"}], dem=FLAT),
           "zone X in part": flat("xpart", [{**_zone(sq(-500, -500, 25, 500), "X"), "SFHA_TF": "F"}], dem=FLAT),
           "no flood layer": flat("nofz", None, dem=FLAT),
           "off the map": flat("off", [_zone(sq(800, 800, 900, 900), "A")], dem=FLAT)}
    # (floors, BFEs stated) per layout: the branches each reaches
    combos = {"zone A": ((None, 101.0, 102.5), (None, 0.0, 105.0, 31.7)), "AR/AE": ((101.0, 102.5), (None, 105.0)),
              "mixed": ((102.5,), (None, 105.0)), "mixed AR/AE": ((102.5,), (None,)),
              "AE static": ((None, 102.5, 104.5), (None, 105.0)), "coarse": ((101.0, 102.5), (None,)),
              "no DEM": ((102.5,), (None, 105.0)), "part DEM": ((101.0, 102.5), (None,))}
    out = []
    for use in ("residential", "nonresidential", "manufactured"):
        for name, layers in many.items():
            floors, bfes = combos[name]
            out += [(name, layers, {"use": use, "lowest_floor_ft": floor, "bfe_ft": bfe})
                    for floor in floors for bfe in bfes]
        for floor, bfe in ((None, None), (805.0, None), (811.0, None), (805.0, 812.0), (811.0, 805.0)):
            out.append(("upstream", upstream, {"use": use, "lowest_floor_ft": floor, "bfe_ft": bfe}))
        out.append(("interpolated", interpolated, {"use": use, "lowest_floor_ft": 802.0, "bfe_ft": 790.0}))
        for floor in (807.0, 807.5):
            out.append(("bend", bend, {"use": use, "lowest_floor_ft": floor}))
        out += [(name, layers, {"use": use, "lowest_floor_ft": 102.5}) for name, layers in few.items()]
    return out


def _marks(message: str) -> set[str]:
    return {m[1:].split(" ")[0].rstrip("]") for m in re.findall(r"\[[a-z_]+[ \]]", message)}


def test_every_sentence_of_the_floor_rules_is_the_rulebooks(tmp_path) -> None:
    marked = _marked(tmp_path)
    seen: dict[str, set[str]] = {rid: set() for rid in WORDED}
    statuses: dict[str, set[str]] = {rid: set() for rid in WORDED}
    for name, layers, kw in _scenes(tmp_path):
        f = check_site(layers, marked, **kw).findings
        f = f.loc[f["rule_id"].isin(WORDED).to_numpy()]
        assert len(f) == 2, (name, kw)
        for rid, status, msg in zip(f["rule_id"], f["status"], f["message"]):
            assert msg and _code_words(msg) == "", (name, kw, rid, msg)
            seen[rid] |= _marks(msg)
            statuses[rid].add(status)
    assert statuses["FLD-004"] == {"pass", "violation", "not_evaluated", "info"}, statuses
    assert statuses["FLD-003"] == {"pass", "violation", "review", "not_evaluated", "info"}, statuses
    # the scenes reach most of the phrases, and these for sure
    must = {"FLD-004": {"no_flood_layer", "not_covered", "part_not_covered", "outside_sfha", "firm_gives_bfe",
                        "mh_bfe", "bfe_firm", "bfe_firm_known", "bfe_stated", "bfe_lower_bound", "zone_a_part",
                        "bfe_part", "higher_of_both", "other_data_bfe", "hag_plus", "hag_plus_partial",
                        "nothing_known", "required_max", "hag_unknown", "dem_part_of_walls", "coarse_cells",
                        "coarse_pass", "finer_dem", "unlisted_zone", "blank_zone", "far_below_grade", "no_floor",
                        "floor_required", "floor_between", "floor_below_range", "meets_known_so_far",
                        "meets_far_below_grade", "meets_unlisted", "meets_coarse", "zero_bfe", "at_least"},
            "FLD-003": {"no_flood_layer", "not_covered", "part_not_covered", "outside_sfha", "manufactured",
                        "no_bfe_zone", "unlisted_zone", "unlisted_zone_stated", "blank_zone", "bfe_undetermined",
                        "at_least", "datum", "bfe_firm", "stated_not_used_whole", "stated_not_used_part",
                        "bfe_firm_known", "bfe_stated", "bfe_lower_bound", "no_floor", "meets_part", "meets",
                        "meets_reached", "floodproofing", "below", "zero_bfe"}}
    for rid in WORDED:
        assert must[rid] <= seen[rid], (rid, sorted(must[rid] - seen[rid]))
        assert len(seen[rid]) >= 0.9 * len(RB[rid].phrases), (rid, sorted(set(RB[rid].phrases) - seen[rid]))


@pytest.mark.parametrize("rid", WORDED)
def test_the_shipped_phrases_of_the_floor_rules_are_read_from_vestal(rid) -> None:
    rule = RB[rid]
    assert {"outside_sfha", "unlisted_zone", "zero_bfe", "blank_zone"} <= set(rule.phrases)
    for key, template in rule.phrases.items():
        assert template.strip() and not template.startswith("["), (rid, key)


def test_the_shipped_words_are_the_checks_words(tmp_path) -> None:
    # the phrases hold the sentences the checks wrote: a zone A floor at HAG + 2.5, an AR/AE one, a coarse DEM
    f = check_site(_flat(tmp_path / "a", [_zone(WHOLE, "A")], dem=FLAT), RB, use="residential",
                   lowest_floor_ft=102.5).findings
    assert f.loc[f["rule_id"] == "FLD-004", "message"].iloc[0] == (
        "footprints F1: lowest floor 102.5 ft, required 102.0 ft (compared at 0.01 ft): required = max(highest "
        "adjacent grade 100.0 ft + 2 ft = 102.0 ft) = 102.0 ft; the DEM's and the BFE's vertical datums must agree.")
    f = check_site(_flat(tmp_path / "c", [_zone(WHOLE, "A")], dem={"cell": 40.0}), RB, use="residential",
                   lowest_floor_ft=102.5).findings
    msg = f.loc[f["rule_id"] == "FLD-004", "message"].iloc[0]
    assert ("but the DEM's cells are 40.0 ft (the larger of their width and height), over the 10 ft a pass needs "
            "(max_dem_cell_ft): each cell holds one elevation for its whole width, so on a slope the grade beside "
            "the walls reads low by up to about the slope x half a cell (2.0 ft at 10 %)") in msg
    assert "give a finer pre-construction DEM: USGS 3DEP 1 m lidar" in msg


def test_a_town_may_reword_one_floor_phrase(tmp_path) -> None:
    p = tmp_path / "town.yaml"
    p.write_text(yaml.safe_dump({"extends": "vestal", "rules": [{"id": "FLD-004", "phrases": {
        "unlisted_zone": "zone {zones} is not on our list ({listed}): ask the floodplain administrator for its BFE",
        "finer_dem": "survey the site"}}]}), "utf-8")
    town = load_rulebook(p)
    f = check_site(_flat(tmp_path / "ar", [_zone(WHOLE, "AR/AE")], dem=FLAT), town, use="residential",
                   lowest_floor_ft=102.5).findings
    f4 = f.loc[f["rule_id"] == "FLD-004"].iloc[0]
    assert f4["status"] == "not_evaluated"
    assert ("zone AR/AE is not on our list (A, A99, AO, V, VO): ask the floodplain administrator for its BFE"
            in f4["message"]), f4["message"]
    assert "whether the FIRM gives a BFE there is not known" not in f4["message"]
    f = check_site(_flat(tmp_path / "c", [_zone(WHOLE, "A")], dem={"cell": 40.0}), town, use="residential",
                   lowest_floor_ft=102.5).findings
    msg = f.loc[f["rule_id"] == "FLD-004", "message"].iloc[0]
    assert msg.count("; survey the site: ") == 1 and "3DEP" not in msg, msg
    # the other phrases, and the other rules' coarse-DEM sentences, are the shipped ones
    assert town["FLD-004"].phrases["coarse_pass"] == RB["FLD-004"].phrases["coarse_pass"]
    assert town["HRV-010"].phrases == RB["HRV-010"].phrases


@pytest.mark.parametrize("phrases, said", [
    ({"unlisted_zones": "zone {zones}"}, "rule FLD-004 phrases.unlisted_zones: not a phrase the toolkit writes"),
    ({"far_below_grade": "the BFE given, {bfe} ft, is {depth} ft below"},
     "rule FLD-004 phrases.far_below_grade: field {depth} is not a name this template may use"),
    ({"unlisted_zone": "zone {zones}: {hag}"}, "rule FLD-004 phrases.unlisted_zone: field {hag}"),
])
def test_an_unknown_floor_phrase_or_field_is_refused_at_load(tmp_path, phrases, said) -> None:
    p = tmp_path / "town.yaml"
    p.write_text(yaml.safe_dump({"extends": "vestal", "rules": [{"id": "FLD-004", "phrases": phrases}]}), "utf-8")
    with pytest.raises(RulebookError) as err:
        load_rulebook(p)
    assert said in str(err.value), str(err.value)


# ------------------------------------------------------------------------------------------
# FLD-003 in an SFHA zone no list knows


@pytest.mark.parametrize("zone, named", [("AR/AE", "AR/AE"), ("AR", "AR"), ("", "(no FLD_ZONE value)")])
def test_fld003_in_a_zone_no_list_knows_is_not_evaluated_and_says_why(tmp_path, zone, named) -> None:
    # before: info, "no BFE on the FIRM here (zone AR/AE): FLD-004 applies", while FLD-004 is not evaluated there
    # (it does not know the zone): whether the FIRM gives a BFE there, and FLD-003 applies, is not known
    f = check_site(_flat(tmp_path, [_zone(WHOLE, zone)], dem=FLAT), RB, use="residential",
                   lowest_floor_ft=102.5).findings
    f3, f4 = (f.loc[f["rule_id"] == r].iloc[0] for r in ("FLD-003", "FLD-004"))
    assert f4["status"] == "not_evaluated"
    assert f3["status"] == "not_evaluated", f3["message"]
    assert "FLD-004 applies" not in f3["message"]
    assert f"zone {named} lies in the area of special flood hazard (SFHA_TF = T)" in f3["message"], f3["message"]
    assert "whether the FIRM gives a BFE there, and so whether this rule applies, is not known" in f3["message"]
    assert "give it with --bfe-ft, or correct FLD_ZONE" in f3["message"]
    assert np.isnan(f3["threshold"])


def test_fld003_in_a_zone_no_list_knows_with_a_bfe_stated_names_fld004s_bfe(tmp_path) -> None:
    # with the FIRM panel's BFE stated (--bfe-ft), FLD-004 judges the floor against it: FLD-003 is info, saying so
    f = check_site(_flat(tmp_path, [_zone(WHOLE, "AR/AE")], dem=FLAT), RB, use="residential",
                   lowest_floor_ft=110.5, bfe_ft=110.0).findings
    f3, f4 = (f.loc[f["rule_id"] == r].iloc[0] for r in ("FLD-003", "FLD-004"))
    assert f4["status"] == "pass", f4["message"]
    assert f3["status"] == "info", f3["message"]
    assert "FLD-004 judges the floor against the BFE given (--bfe-ft)" in f3["message"]


@pytest.mark.parametrize("zone", ["A", "AO", "V"])
def test_fld003_in_a_zone_without_bfes_still_hands_over_to_fld004(tmp_path, zone) -> None:
    f = check_site(_flat(tmp_path, [_zone(WHOLE, zone)], dem=FLAT), RB, use="residential",
                   lowest_floor_ft=102.5).findings
    f3 = f.loc[f["rule_id"] == "FLD-003"].iloc[0]
    assert f3["status"] == "info"
    assert f3["message"] == f"footprints F1: no BFE on the FIRM here (zone {zone}): FLD-004 applies."
