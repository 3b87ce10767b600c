"""Flood zone subtypes (ZONE_SUBTY) read where the layer is classified: a layer whose subtypes cannot tell the
floodway (no field, no value, FEMA's domain codes) is "floodway not determined" for FLD-002, FLD-009 and the
maps alike; NFHL's FLOWAGE EASEMENT AREA and DENSITY FRINGE AREA are floodway-like areas as the encroachment
areas are (FLD-002 not_evaluated, never pass)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from common import NY_FT, X0, Y0
from shapely.geometry import Polygon, box

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import check_site, screen_parcels
from geoconstraints.geometry.overlay import classify_flood_zones
from geoconstraints.output import overview, styles, webmap
from geoconstraints.rulebook.model import Rule
from geoconstraints.rules.flood import flood_zone_classes, flood_zone_spec

FLOODWAY_CONDITION = "no variance within the floodway if any increase in flood levels would result"


@pytest.fixture(scope="module")
def rb():
    return load_rulebook("vestal")


def sq(x0: float, y0: float, x1: float, y1: float) -> Polygon:
    """A box in local feet from (X0, Y0)."""
    return box(X0 + x0, Y0 + y0, X0 + x1, Y0 + y1)


def parcels(*geoms: Polygon) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"parcel_id": [f"P{i + 1}" for i in range(len(geoms))]}, geometry=list(geoms), crs=NY_FT)


def zones(*specs: tuple) -> gpd.GeoDataFrame:
    """``(geometry, FLD_ZONE[, ZONE_SUBTY])`` tuples to an NFHL-like layer."""
    rows = [{"FLD_ZONE": s[1], "ZONE_SUBTY": s[2] if len(s) > 2 else None, "STATIC_BFE": -9999.0,
             "V_DATUM": "NAVD88", "geometry": s[0]} for s in specs]
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=NY_FT)


def write(folder: Path, **layers: gpd.GeoDataFrame) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "in.gpkg"
    for name, g in layers.items():
        g.to_file(path, layer=name, driver="GPKG")
    return path


def screen(folder: Path, rb, **layers):
    return screen_parcels(load_layers(write(folder, **layers)), rb, findings="all")


def finding(res, rule: str, sid: str) -> pd.Series:
    f = res.findings
    hit = f[(f["rule_id"] == rule) & (f["subject_id"] == sid)]
    assert len(hit) == 1, (rule, sid, len(hit))
    return hit.iloc[0]


# ------------------------------------------------------------------------------------------
# the rulebook's text-list param reader

def test_rule_texts_reads_one_text_or_a_list() -> None:
    # before: flood._text_list, a one-off of the flood rules; now the rule's own param reader
    r = Rule(id="FLD-002", title="t", group="flood", citation="c",
             params={"one": " ENCROACHMENT ", "many": ["FLOWAGE EASEMENT", "", None, "DENSITY FRINGE"]})
    assert r.texts("one") == ("ENCROACHMENT",)
    assert r.texts("many") == ("FLOWAGE EASEMENT", "DENSITY FRINGE")
    assert r.texts("absent", []) == () and r.texts("absent", "X") == ("X",)
    with pytest.raises(Exception, match="no param 'absent'"):
        r.texts("absent")


# ------------------------------------------------------------------------------------------
# the floodway unread, where the layer is classified

@pytest.mark.parametrize(("subtypes", "problem"), [
    (["1100", None, "2000"], "coded"),            # FEMA's D_Zone_Subtype codes, not their text
    (["FLOODWAY", "1210", None], "coded"),        # any code: the whole layer's subtypes are unread
    ([None, " ", None], "blank"),                 # a stripped export
    (None, "missing"),                            # no field at all
])
def test_classify_marks_the_floodway_unknown_in_the_sfha_of_an_unread_layer(rb, subtypes, problem) -> None:
    # before: classify_flood_zones had no word of it (the FLD rules alone knew): the maps read such a layer as
    # one with no floodway
    from geoconstraints.geometry.overlay import subtype_problem

    df = pd.DataFrame({"FLD_ZONE": ["AE", "AE", "X"]})
    if subtypes is not None:
        df["ZONE_SUBTY"] = subtypes
    assert subtype_problem(df)[0] == problem
    c = classify_flood_zones(df, flood_zone_spec(rb))
    assert c["subtype_unread"].tolist() == [True, True, True]
    assert c["floodway_unknown"].tolist() == [True, True, False]  # the floodway only lies in the SFHA
    assert not c["floodway"].any() or problem == "coded"


def test_classify_reads_the_floodway_of_a_layer_with_subtype_text(rb) -> None:
    df = pd.DataFrame({"FLD_ZONE": ["AE", "AE", "X"], "ZONE_SUBTY": ["FLOODWAY", None, None]})
    c = classify_flood_zones(df, flood_zone_spec(rb))
    assert not c["subtype_unread"].any() and not c["floodway_unknown"].any()
    assert c["floodway"].tolist() == [True, False, False]


def test_a_part_of_the_layer_is_read_as_the_whole_layer(rb) -> None:
    # a map's view holds only blank AE polygons of a layer whose floodway is elsewhere: "no floodway here", not
    # "floodway not determined"; and a view without a code of a coded layer: not determined
    whole = pd.DataFrame({"FLD_ZONE": ["AE", "AE", "AE"], "ZONE_SUBTY": ["FLOODWAY", None, None]})
    part = whole.iloc[1:]
    assert classify_flood_zones(part, flood_zone_spec(rb))["floodway_unknown"].all()  # the part alone: blank
    assert not flood_zone_classes(part, rb, whole=whole)["floodway_unknown"].any()
    coded = pd.DataFrame({"FLD_ZONE": ["AE", "AE"], "ZONE_SUBTY": ["1100", None]})
    assert flood_zone_classes(coded.iloc[1:], rb, whole=coded)["floodway_unknown"].all()


@pytest.mark.parametrize(("subtypes", "said"), [
    (["1100", "2000"], "FEMA's domain codes (1100, 2000)"),
    ([None, None], "no ZONE_SUBTY field (or no value in it)"),
])
def test_the_run_has_one_warning_of_an_unread_layer(subtypes, said) -> None:
    from geoconstraints.rules.flood import subtype_warning

    warn = subtype_warning(pd.DataFrame({"FLD_ZONE": ["AE", "X"], "ZONE_SUBTY": subtypes}))
    assert warn is not None and warn.startswith("layer flood_zones: ") and said in warn
    assert "floodway cannot be told" in warn and "FLD-002" in warn
    assert subtype_warning(pd.DataFrame({"FLD_ZONE": ["AE"], "ZONE_SUBTY": ["FLOODWAY"]})) is None


# ------------------------------------------------------------------------------------------
# FLD-009: the floodway condition open where the floodway is not determined

@pytest.mark.parametrize(("subtypes", "said"), [
    (["1100", "2000", "1100"], "FEMA's domain codes (1100, 2000)"),
    ([None, None, None], "no ZONE_SUBTY field (or no value in it)"),
    ("drop", "no ZONE_SUBTY field (or no value in it)"),
])
def test_fld009_keeps_the_floodway_condition_open_where_the_floodway_is_not_determined(tmp_path, rb, subtypes,
                                                                                       said) -> None:
    # P1 (0.92 acres) wholly in AE, P2 wholly in X, P3 (0.23 acres) wholly in AE: the layer's ZONE_SUBTY cannot
    # tell the floodway, FLD-002 is not_evaluated in the SFHA. Before: FLD-009 gave P1 and P3 the lot-size text
    # alone, silently leaving out the floodway's condition, as for an AE parcel known to lie outside the floodway
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200), sq(2000, 0, 2100, 100))
    fz = zones((sq(-10, -10, 210, 210), "AE"), (sq(990, -10, 1210, 210), "X"), (sq(1990, -10, 2110, 110), "AE"))
    if subtypes == "drop":
        fz = fz.drop(columns="ZONE_SUBTY")
    else:
        fz["ZONE_SUBTY"] = subtypes
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    for pid in ("P1", "P3"):
        assert finding(res, "FLD-002", pid)["status"] == "not_evaluated"  # FLD-002 as before
        f = finding(res, "FLD-009", pid)
        assert f["status"] == "info", f["message"]
        assert "the floodway is not determined" in f["message"] and said in f["message"], f["message"]
        assert f"if the parcel lies in the floodway (§ 6-138), {FLOODWAY_CONDITION}" in f["message"]
    f2 = finding(res, "FLD-009", "P2")
    assert "no flood variance needed" in f2["message"] and "not determined" not in f2["message"]
    assert finding(res, "FLD-002", "P2")["status"] == "pass"
    # the run names it once, in the report's notes (before: only each finding did)
    said_once = [n for n in res.notes if n.startswith("layer flood_zones: ") and "floodway cannot be told" in n]
    assert len(said_once) == 1 and said in said_once[0], res.notes


def test_flood_site_notes_an_unread_layer_once(tmp_path, rb) -> None:
    fz = zones((sq(-10, -10, 210, 210), "AE", "1100"), (sq(990, -10, 1210, 210), "X", None))
    fps = gpd.GeoDataFrame({"id": ["F1"]}, geometry=[sq(50, 50, 90, 90)], crs=NY_FT)
    res = check_site(load_layers(write(tmp_path, footprints=fps, flood_zones=fz)), rb, use="residential",
                     lowest_floor_ft=850)
    said = [n for n in res.notes if n.startswith("layer flood_zones: ")]
    assert len(said) == 1 and "FEMA's domain codes (1100)" in said[0], res.notes
    assert finding(res, "FLD-002", "F1")["status"] == "not_evaluated"


def test_fld009_says_nothing_of_it_where_the_floodway_is_read(tmp_path, rb) -> None:
    # the control: a layer with subtype text, P1 in plain AE beside a floodway polygon: no floodway on P1
    p = parcels(sq(0, 0, 200, 200))
    fz = zones((sq(-10, -10, 210, 210), "AE"), (sq(500, -10, 700, 210), "AE", "FLOODWAY"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    assert finding(res, "FLD-002", "P1")["status"] == "pass"
    f = finding(res, "FLD-009", "P1")
    assert "not determined" not in f["message"] and FLOODWAY_CONDITION not in f["message"]


# ------------------------------------------------------------------------------------------
# FLOWAGE EASEMENT AREA and DENSITY FRINGE AREA: floodway-like, never "outside the floodway"

FLOODWAY_LIKE = ["FLOWAGE EASEMENT AREA", "DENSITY FRINGE AREA"]


@pytest.mark.parametrize("subtype", FLOODWAY_LIKE)
def test_fld002_a_parcel_in_a_flowage_easement_or_density_fringe_area_is_not_a_pass(tmp_path, rb, subtype) -> None:
    # P1 wholly in an AE polygon of the subtype (no floodway on it). Before: read as "outside the regulatory
    # floodway", a pass. P2 in AE AREA OF SPECIAL CONSIDERATION: left as it was (a pass), the control
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200))
    fz = zones((sq(-10, -10, 210, 210), "AE", subtype), (sq(990, -10, 1210, 210), "AE", "AREA OF SPECIAL CONSIDERATION"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    f1 = finding(res, "FLD-002", "P1")
    assert f1["status"] == "not_evaluated" and np.isnan(f1["measured"]), f1["message"]
    assert f"in a floodway-like area (ZONE_SUBTY {subtype})" in f1["message"], f1["message"]
    assert "encroachment area" not in f1["message"]  # a flowage easement is not called an encroachment area
    assert "0.92 acres, 100.0% of the parcel" in f1["message"] and "local administrator" in f1["message"]
    assert "floodway not determined" in f1["message"]
    assert finding(res, "FLD-002", "P2")["status"] == "pass"
    f9 = finding(res, "FLD-009", "P1")
    assert f"in a floodway-like area (ZONE_SUBTY {subtype})" in f9["message"] and FLOODWAY_CONDITION in f9["message"]


@pytest.mark.parametrize("subtype", FLOODWAY_LIKE)
@pytest.mark.parametrize(("width", "side", "expect"), [
    # a strip `width` ft x 200 ft along the east edge: at most the 1 ft floodway tolerance is a sliver
    (0.99, None, "pass"), (1.0, None, "pass"), (1.01, None, "not_evaluated"),
    # a corner `side` x 10 ft against the floodway's 100 sq ft minimum
    (None, 9.9, "pass"), (None, 10.0, "not_evaluated"), (None, 10.1, "not_evaluated"),
])
def test_fld002_floodway_like_slivers_follow_the_floodway_sliver_rules(tmp_path, rb, subtype, width, side,
                                                                      expect) -> None:
    part = sq(200 - width, -10, 400, 210) if width is not None else sq(200 - side, 190, 400, 400)
    fz = zones((part, "AE", subtype), (sq(-10, -10, 400, 400).difference(part), "AE"))
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=fz)
    f = finding(res, "FLD-002", "P1")
    assert f["status"] == expect, f["message"]
    if expect == "pass":
        assert "along the floodway-like area" in f["message"]
    else:
        assert f"ZONE_SUBTY {subtype}" in f["message"]


@pytest.mark.parametrize("subtype", FLOODWAY_LIKE)
def test_site_footprint_in_a_floodway_like_area_is_not_evaluated(tmp_path, rb, subtype) -> None:
    # a 100 x 50 ft footprint half in the subtype's polygon. Before: "outside the regulatory floodway", pass
    fz = zones((sq(-500, -200, 1500, 200), "AE"), (sq(-500, 200, 1500, 600), "AE", subtype),
               (sq(-500, 600, 1500, 900), "X"))
    fp = gpd.GeoDataFrame({"id": ["F1"]}, geometry=[sq(0, 150, 100, 250)], crs=NY_FT)
    layers = load_layers(write(tmp_path, footprints=fp, flood_zones=fz))
    f = finding(check_site(layers, rb, use="residential"), "FLD-002", "F1")
    assert f["status"] == "not_evaluated", f["message"]
    assert "5,000 sq ft, 50% of the footprint" in f["message"] and f"ZONE_SUBTY {subtype}" in f["message"]


def test_the_maps_draw_flowage_easement_and_density_fringe_areas_as_floodway_like(rb) -> None:
    f = pd.DataFrame({"FLD_ZONE": ["AE", "AE", "AE", "AE"],
                      "ZONE_SUBTY": ["FLOWAGE EASEMENT AREA", "DENSITY FRINGE AREA", "AREA OF SPECIAL CONSIDERATION",
                                     "FLOODWAY"]})
    c = flood_zone_classes(f, rb)
    assert c["encroachment"].tolist() == [True, True, False, False]
    assert c["floodway"].tolist() == [False, False, False, True]
    assert styles.flood_zone_key("AE", "FLOWAGE EASEMENT AREA", encroachment=True) == \
        "AE: floodway-like area (floodway not determined)"


# ------------------------------------------------------------------------------------------
# the maps: an unread layer's SFHA is "floodway not determined", not "no floodway"

def _coded_result(folder: Path, rb):
    # C-1 in AE coded 1100 (FEMA's FLOODWAY), C-2 in X coded 2000
    p = gpd.GeoDataFrame({"parcel_id": ["C-1", "C-2"]}, geometry=[sq(0, 0, 200, 200), sq(1000, 0, 1200, 200)],
                         crs=NY_FT)
    fz = zones((sq(-10, -10, 210, 210), "AE", "1100"), (sq(990, -10, 1210, 210), "X", "2000"))
    return screen_parcels(load_layers(write(folder, parcels=p, flood_zones=fz)), rb, findings="all")


def test_web_map_says_the_floodway_is_not_determined_in_a_coded_layer(tmp_path, rb) -> None:
    # before: the AE polygon coded 1100 was drawn as plain "Flood zone AE" with no word of the floodway (no
    # floodway_class, no legend line): read as an AE area without floodway
    result = _coded_result(tmp_path, rb)
    page = webmap.build_map(result).get_root().render()
    items = json.loads(re.search(r"var items = (\[.*?\]), title", page).group(1))
    legend = {i["label"]: i for i in items}
    detail = legend["Flood zone AE"]["detail"]
    assert "FEMA's domain codes (1100, 2000)" in detail and "floodway not determined" in detail, detail
    assert "not determined" not in legend["Flood zone X"]["detail"]
    feats = [ft for gj in re.findall(r"geo_json_[0-9a-f]+_add\((\{.*?\})\);", page)
             for ft in json.loads(gj)["features"] if "FLD_ZONE" in ft["properties"]]
    cls = {ft["properties"]["FLD_ZONE"]: ft["properties"][webmap.FLOODWAY_CLASS_FIELD] for ft in feats}
    assert cls == {"AE": styles.FLOODWAY_UNKNOWN_NOTE, "X": ""}


def test_overview_legend_says_the_floodway_is_not_determined_in_a_coded_layer(tmp_path, rb) -> None:
    from matplotlib.figure import Figure

    result = _coded_result(tmp_path, rb)
    flood = result.layers.get_layer("flood_zones")
    ax = Figure().add_subplot()
    handles: list = []
    view = shapely.box(*flood.total_bounds)
    overview._draw_inputs(ax, {"flood_zones": flood}, view, handles, None, result.rulebook)  # type: ignore[arg-type]
    labels = [h.get_label() for h in handles]
    assert "flood zone AE (floodway not determined)" in labels and "flood zone X" in labels, labels
    # a view of a coded layer's AE polygon alone is read with the whole layer (the same here), and a layer with
    # subtype text says nothing of it
    flood2 = flood.assign(ZONE_SUBTY=["FLOODWAY", None])
    handles2: list = []
    overview._draw_inputs(ax, {"flood_zones": flood2}, view, handles2, None, result.rulebook)  # type: ignore[arg-type]
    assert "flood zone AE: regulatory floodway" in [h.get_label() for h in handles2]  # the floodway drawn as such


# ------------------------------------------------------------------------------------------
# a ZONE_SUBTY text FEMA's domain does not hold (FLD-002's known_subtypes): floodway not determined, never pass

ODD = ["FLODWAY", "FW", "REG FWY"]


@pytest.mark.parametrize("subtype", ODD)
def test_fld002_a_parcel_in_an_sfha_subtype_fema_does_not_list_is_not_a_pass(tmp_path, rb, subtype) -> None:
    # P1 wholly in an AE polygon whose ZONE_SUBTY is a misspelt or home-made floodway text; the layer's floodway
    # is read elsewhere (a FLOODWAY polygon), so the subtypes are read. Before: "no regulatory floodway mapped
    # on it", a pass. P2 in AE RIVERINE FLOODPLAIN (a value of FEMA's domain) and P3 in AE with the null text
    # <Null>: passes, the controls; P4 in X with the same odd text: outside the SFHA, a pass
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200), sq(2000, 0, 2200, 200), sq(3000, 0, 3200, 200))
    fz = zones((sq(-10, -10, 210, 210), "AE", subtype), (sq(990, -10, 1210, 210), "AE", "RIVERINE FLOODPLAIN"),
               (sq(1990, -10, 2210, 210), "AE", "<Null>"), (sq(2990, -10, 3210, 210), "X", subtype),
               (sq(5000, 0, 5100, 100), "AE", "FLOODWAY"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    f1 = finding(res, "FLD-002", "P1")
    assert f1["status"] == "not_evaluated" and np.isnan(f1["measured"]), f1["message"]
    assert f"ZONE_SUBTY {subtype}" in f1["message"], f1["message"]
    assert "not a value of FEMA's D_Zone_Subtype domain" in f1["message"], f1["message"]
    assert "known_subtypes" in f1["message"] and "0.92 acres, 100.0% of the parcel" in f1["message"]
    assert "floodway-like" not in f1["message"]  # not called a floodway-like area: its meaning is unknown
    for pid in ("P2", "P3", "P4"):
        f = finding(res, "FLD-002", pid)
        assert f["status"] == "pass", (pid, f["message"])
    # FLD-009 keeps the floodway's condition open for P1, as for a floodway-like area
    assert FLOODWAY_CONDITION in finding(res, "FLD-009", "P1")["message"]
    assert FLOODWAY_CONDITION not in finding(res, "FLD-009", "P2")["message"]
    # the run says it once, naming the value and its polygons
    said = [n for n in res.notes if n.startswith("layer flood_zones: ") and subtype in n]
    assert len(said) == 1 and "1 polygon in the SFHA" in said[0] and "known_subtypes" in said[0], res.notes


@pytest.mark.parametrize(("width", "expect"), [(0.99, "pass"), (1.0, "pass"), (1.01, "not_evaluated")])
def test_fld002_an_odd_subtype_sliver_follows_the_floodway_sliver_rules(tmp_path, rb, width, expect) -> None:
    # a strip `width` ft x 200 ft along P1's east edge in AE "FLODWAY": at most the floodway's 1 ft tolerance
    part = sq(200 - width, -10, 400, 210)
    fz = zones((part, "AE", "FLODWAY"), (sq(-10, -10, 400, 400).difference(part), "AE"),
               (sq(5000, 0, 5100, 100), "AE", "FLOODWAY"))
    f = finding(screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=fz), "FLD-002", "P1")
    assert f["status"] == expect, f["message"]


def test_a_layer_whose_only_subtype_is_the_null_text_tells_no_floodway(tmp_path, rb) -> None:
    # every ZONE_SUBTY is the text "<Null>" (an export that wrote its nulls as text): no subtype at all, so the
    # floodway cannot be told. Before: "<NULL>" was a subtype text, the layer "read", P1 in AE a pass
    fz = zones((sq(-10, -10, 210, 210), "AE", "<Null>"), (sq(990, -10, 1210, 210), "X", "<Null>"))
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200)), flood_zones=fz)
    f = finding(res, "FLD-002", "P1")
    assert f["status"] == "not_evaluated" and "floodway cannot be told" in f["message"], f["message"]
    assert finding(res, "FLD-002", "P2")["status"] == "pass"


def test_a_town_may_list_its_own_subtype_text(tmp_path, rb) -> None:
    # the same P1 in AE "REG FWY" with a town file listing it among the known subtypes: read as a subtype
    # that is not the floodway (the town says so), a pass
    import yaml

    known = list(rb["FLD-002"].p("known_subtypes"))
    town = tmp_path / "town.yaml"
    town.write_text(yaml.safe_dump({"extends": "vestal", "rules": [
        {"id": "FLD-002", "params": {"known_subtypes": [*known, "REG FWY"]}}]}), "utf-8")
    fz = zones((sq(-10, -10, 210, 210), "AE", "REG FWY"), (sq(5000, 0, 5100, 100), "AE", "FLOODWAY"))
    res = screen(tmp_path / "t", load_rulebook(town), parcels=parcels(sq(0, 0, 200, 200)), flood_zones=fz)
    assert finding(res, "FLD-002", "P1")["status"] == "pass"
    res = screen(tmp_path / "v", rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=fz)
    assert finding(res, "FLD-002", "P1")["status"] == "not_evaluated"


def test_site_footprint_in_an_odd_subtype_is_not_evaluated(tmp_path, rb) -> None:
    # a 100 x 50 ft footprint half in an AE "FLODWAY" polygon. Before: "outside the regulatory floodway", pass
    fz = zones((sq(-500, -200, 1500, 200), "AE"), (sq(-500, 200, 1500, 600), "AE", "FLODWAY"),
               (sq(-500, 600, 1500, 900), "AE", "FLOODWAY"))
    fp = gpd.GeoDataFrame({"id": ["F1"]}, geometry=[sq(0, 150, 100, 250)], crs=NY_FT)
    f = finding(check_site(load_layers(write(tmp_path, footprints=fp, flood_zones=fz)), rb, use="residential"),
                "FLD-002", "F1")
    assert f["status"] == "not_evaluated", f["message"]
    assert "5,000 sq ft, 50% of the footprint" in f["message"] and "ZONE_SUBTY FLODWAY" in f["message"]


def test_the_shipped_list_holds_femas_domain(rb) -> None:
    # FEMA's D_Zone_Subtype descriptions (the FIRM Database's Domain Tables Technical Reference) are all known,
    # so none of them is ever read as an odd subtype; each is upper case, as classify_flood_zones compares them
    known = set(rb["FLD-002"].p("known_subtypes"))
    for v in ("FLOODWAY", "RIVERINE FLOODPLAIN", "COASTAL FLOODPLAIN", "AREA OF SPECIAL CONSIDERATION",
              "1 PCT ANNUAL CHANCE FLOOD HAZARD CONTAINED IN CHANNEL", "AREA WITH REDUCED FLOOD RISK DUE TO LEVEE",
              "0.2 PCT ANNUAL CHANCE FLOOD HAZARD", "AREA OF MINIMAL FLOOD HAZARD", "NARROW FLOODWAY"):
        assert v in known, v
    assert all(v == v.upper().strip() for v in known)
    df = pd.DataFrame({"FLD_ZONE": ["AE"] * len(known), "ZONE_SUBTY": sorted(known)})
    assert not classify_flood_zones(df, flood_zone_spec(rb))["odd_subtype"].any()
