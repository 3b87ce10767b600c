"""Flood screening and site checks (FLD-001..010): hand-computed geometry, honest edges, BFE.

Synthetic layers sit in Vestal, NY in EPSG:2261 (US survey feet); every expected area below
is written out as arithmetic. Areas are compared within 0.5 sq ft (well under 1e-4 acre)
unless a reprojection is involved.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely
from click.testing import CliRunner
from common import ACRE, LEX, MUNCY_DEM, NY_FT, REALDATA, X0, Y0
from shapely.geometry import LineString, Point, Polygon, box

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import check_site, screen_parcels
from geoconstraints.errors import InputError
from geoconstraints.geometry.bfe import bfe_at_points
from geoconstraints.geometry.overlay import classify_flood_zones, expand_zone_list
from geoconstraints.rulebook.findings import STATUSES
from geoconstraints.rules.flood import flood_zone_spec


@pytest.fixture(scope="module")
def rb():
    return load_rulebook("vestal")


def sq(x0: float, y0: float, x1: float, y1: float) -> Polygon:
    """A box in local feet from (X0, Y0)."""
    return box(X0 + x0, Y0 + y0, X0 + x1, Y0 + y1)


def parcels(*geoms: Polygon, ids: list[str] | None = None, crs: str = NY_FT) -> gpd.GeoDataFrame:
    ids = ids or [f"P{i + 1}" for i in range(len(geoms))]
    return gpd.GeoDataFrame({"parcel_id": ids}, geometry=list(geoms), crs=crs)


def zones(*specs: tuple, crs: str = NY_FT, **cols) -> gpd.GeoDataFrame:
    """``(geometry, FLD_ZONE[, ZONE_SUBTY[, STATIC_BFE]])`` tuples to an NFHL-like layer."""
    rows = []
    for s in specs:
        g, z = s[0], s[1]
        sub = s[2] if len(s) > 2 else None
        bfe = s[3] if len(s) > 3 else -9999.0
        rows.append({"FLD_ZONE": z, "ZONE_SUBTY": sub, "STATIC_BFE": bfe, "V_DATUM": "NAVD88", "geometry": g})
    df = gpd.GeoDataFrame(rows, geometry="geometry", crs=crs)
    for k, v in cols.items():
        df[k] = v
    return df


def write(tmp_path: Path, name: str = "in.gpkg", **layers: gpd.GeoDataFrame) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / name
    for layer, gdf in layers.items():
        gdf.to_file(path, layer=layer, driver="GPKG")
    return path


def screen(tmp_path: Path, rb, **layers):
    return screen_parcels(load_layers(write(tmp_path, **layers)), rb, findings="all")


def row(res, pid: str) -> pd.Series:
    t = res.tables["parcels"]
    return t.loc[t["parcel_id"] == pid].iloc[0]


def finding(res, rule: str, sid: str) -> pd.Series:
    f = res.findings
    hit = f[(f["rule_id"] == rule) & (f["subject_id"] == sid)]
    assert len(hit) == 1, (rule, sid, len(hit))
    return hit.iloc[0]


# ------------------------------------------------------------------------------------------
# zone lists and classification

def test_expand_zone_list_ranges() -> None:
    z = expand_zone_list(["A", "AE", "A1-A30", "V1-V30", "a99"])
    assert {"A1", "A15", "A30", "V1", "V30", "A99", "AE", "A"} <= z
    assert "A31" not in z and "A0" not in z
    assert len(z) == 2 + 30 + 30 + 1


def test_lexington_attribute_table_classification(rb) -> None:
    """Real NFHL S_FLD_HAZ_AR attributes (Lexington VA, 938 rows): AE 446, X 400, A 92, FLOODWAY 22."""
    df = pyogrio.read_dataframe(LEX / "S_FLD_HAZ_AR_attributes_only.dbf", read_geometry=False)
    assert len(df) == 938
    c = classify_flood_zones(df, flood_zone_spec(rb))
    assert c["zone"].value_counts().to_dict() == {"AE": 446, "X": 400, "A": 92}
    assert int(c["sfha"].sum()) == 446 + 92  # the 2 A rows with a null SFHA_TF are SFHA by zone
    assert not c.loc[c["zone"] == "X", "sfha"].any()
    assert int(c["floodway"].sum()) == 22
    assert set(c.loc[c["floodway"], "zone"]) == {"AE"}
    assert int(c["unnumbered_a"].sum()) == 92
    assert int(c["bfe_zone"].sum()) == 446
    # X with "0.2 PCT ANNUAL CHANCE FLOOD HAZARD" is covered (determined), not SFHA
    shaded = c[df["ZONE_SUBTY"].fillna("").str.startswith("0.2 PCT")]
    assert len(shaded) == 340 and shaded["covered"].all() and not shaded["sfha"].any()


def test_zone_d_and_area_not_included_are_undetermined(rb) -> None:
    df = pd.DataFrame({"FLD_ZONE": ["D", "AREA NOT INCLUDED", "AE", "X", "A12", "VE"],
                       "SFHA_TF": ["F", "F", "T", "F", None, "T"]})
    c = classify_flood_zones(df, flood_zone_spec(rb))
    assert c["undetermined"].tolist() == [True, True, False, False, False, False]
    assert c["sfha"].tolist() == [False, False, True, False, True, True]


# ------------------------------------------------------------------------------------------
# exact areas, by hand

def test_half_in_ae_hand_computed(tmp_path, rb) -> None:
    # parcel 200 x 200 ft; AE covers x 100..300 -> overlap 100 x 200 = 20,000 sq ft
    # = 20,000 / 43,560 = 0.45914 acres, share 0.5. X covers the rest of the parcel.
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)),
                 flood_zones=zones((sq(100, -50, 300, 250), "AE"), (sq(-50, -50, 100, 250), "X")))
    r = row(res, "P1")
    assert r["area_acres"] == pytest.approx(40_000 / ACRE, abs=1e-6)
    assert r["sfha_acres"] == pytest.approx(20_000 / ACRE, abs=1e-5)
    assert round(r["sfha_acres"], 4) == 0.4591
    assert r["sfha_share"] == pytest.approx(0.5, abs=1e-6)
    assert r["flood_zones"] == "AE; X" and r["flood_data"] == "full"
    f = finding(res, "FLD-001", "P1")
    assert f["status"] == "review" and f["measured"] == pytest.approx(0.4591, abs=1e-4)
    assert "0.46 acres" in f["message"] and "50.0%" in f["message"]
    # the finding's geometry is the overlap itself: 20,000 sq ft
    assert f.geometry.area == pytest.approx(20_000, abs=0.5)
    assert res.derived["sfha_overlaps"].geometry.area.sum() == pytest.approx(20_000, abs=0.5)


def test_touching_along_an_edge_is_not_in_the_zone(tmp_path, rb) -> None:
    # AE shares the parcel's east edge x = 200 only: intersection is a line, area 0
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)),
                 flood_zones=zones((sq(200, 0, 400, 200), "AE"), (sq(-10, -10, 200, 210), "X")))
    r = row(res, "P1")
    assert r["sfha_acres"] == 0.0 and r["flood_zones"] == "X"
    assert finding(res, "FLD-001", "P1")["status"] == "pass"


def test_overlapping_ae_polygons_not_double_counted(tmp_path, rb) -> None:
    # AE1 x 0..150 and AE2 x 100..250 overlap on x 100..150. Over the 200 x 200 parcel:
    # union x 0..200 = 40,000 sq ft (0.9183 ac); the naive sum 30,000 + 20,000 = 50,000 would exceed the parcel.
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)),
                 flood_zones=zones((sq(0, -10, 150, 210), "AE"), (sq(100, -10, 250, 210), "AE")))
    r = row(res, "P1")
    assert r["sfha_acres"] * ACRE == pytest.approx(40_000, abs=0.5)
    assert r["sfha_share"] == pytest.approx(1.0)


def test_sliver_and_minimum_area_are_ignored_and_said(tmp_path, rb) -> None:
    # P1: AE overlaps a strip 0.8 ft x 200 ft = 160 sq ft (> 100 sq ft minimum) but thinner than 1 ft: sliver
    # P2: AE overlaps a strip 2 ft x 200 ft = 400 sq ft: counted (400 / 43,560 = 0.009183 ac)
    # P3: AE overlaps a 5 x 5 ft corner = 25 sq ft, under the 100 sq ft minimum: ignored
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200), sq(2000, 0, 2200, 200))
    fz = zones((sq(199.2, 0, 400, 200), "AE"), (sq(1198, 0, 1400, 200), "AE"), (sq(2195, 195, 2400, 400), "AE"),
               (sq(-10, -10, 2500, 500).difference(sq(199.2, 0, 400, 200)).difference(sq(1198, 0, 1400, 200))
                .difference(sq(2195, 195, 2400, 400)), "X"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    r1, r2, r3 = row(res, "P1"), row(res, "P2"), row(res, "P3")
    assert r1["sfha_acres"] == 0 and r1["flood_zones"] == "X" and r1["slivers_ignored"] == "AE"
    m1 = finding(res, "FLD-001", "P1")
    assert m1["status"] == "pass" and "sliver of 160 sq ft" in m1["message"] and "ignored" in m1["message"]
    assert r2["sfha_acres"] * ACRE == pytest.approx(400, abs=0.01)
    assert finding(res, "FLD-001", "P2")["status"] == "review"
    assert r3["sfha_acres"] == 0 and "sliver of 25 sq ft" in finding(res, "FLD-001", "P3")["message"]


def test_slivers_are_left_out_of_the_overlap_layers_and_a_floodway_sliver_is_said(tmp_path, rb) -> None:
    # P1: AE (not floodway) over the whole 200 x 200 parcel, and its floodway part a strip 0.5 ft x 200 ft = 100 sq
    # ft, thinner than 1 ft: the SFHA counts (40,000 sq ft), the floodway is an ignored sliver. P2: AE a strip
    # 0.8 x 200 ft = 160 sq ft: a sliver. Before: both slivers were features of sfha_overlaps / floodway_overlaps
    # while the parcels table measured 0 acres, and the floodway sliver was not in slivers_ignored.
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200))
    fz = zones((sq(-10, -10, 199.5, 210), "AE"), (sq(199.5, -10, 400, 210), "AE", "FLOODWAY"),
               (sq(1199.2, 0, 1400, 200), "AE"), (sq(900, -10, 1199.2, 210), "X"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    r1, r2 = row(res, "P1"), row(res, "P2")
    assert r1["sfha_acres"] * ACRE == pytest.approx(40_000, abs=0.5) and r1["floodway_acres"] == 0
    assert r1["slivers_ignored"] == "floodway" and r2["slivers_ignored"] == "AE" and r2["sfha_acres"] == 0
    f2 = finding(res, "FLD-002", "P1")
    assert f2["status"] == "pass" and "no regulatory floodway mapped on it" not in f2["message"]
    assert "sliver of 100 sq ft along the floodway was ignored" in f2["message"]
    sfha, fw = res.derived["sfha_overlaps"], res.derived["floodway_overlaps"]
    assert sfha["parcel_id"].tolist() == ["P1"] and sfha["acres"].iloc[0] * ACRE == pytest.approx(40_000, abs=0.5)
    assert len(fw) == 0


def test_floodway_acres_and_share(tmp_path, rb) -> None:
    # floodway x 150..250 over the 200 x 200 parcel: 50 x 200 = 10,000 sq ft = 0.2296 ac, share 0.25
    fz = zones((sq(150, -10, 250, 210), "AE", "FLOODWAY"), (sq(-10, -10, 150, 210), "AE"))
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=fz)
    r = row(res, "P1")
    assert r["floodway_acres"] * ACRE == pytest.approx(10_000, abs=0.5)
    assert r["floodway_share"] == pytest.approx(0.25)
    assert r["sfha_acres"] * ACRE == pytest.approx(40_000, abs=0.5)
    f = finding(res, "FLD-002", "P1")
    assert f["status"] == "review" and f["measured"] == pytest.approx(10_000 / ACRE, abs=1e-5)
    assert "25.0% of the parcel" in f["message"]
    # AE next to a floodway: § 6-138 applies, not the 1 ft rule
    assert finding(res, "FLD-006", "P1")["status"] == "pass"


def test_small_areas_that_need_action_never_print_as_zero(tmp_path, rb) -> None:
    # P1: AE a strip 2 ft x 93 ft = 186 sq ft (thicker than 1 ft, over the 100 sq ft minimum) = 0.00427 acres;
    # P2: floodway a strip 2 ft x 61 ft = 122 sq ft = 0.0028 acres; P3: AE a corner 0.1517 x 0.1517 ft =
    # 0.0230 sq ft, an ignored sliver. Before: "0 acres in the area of special flood hazard", "(0.00 acres, ...)"
    # and "a sliver of 0 sq ft".
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200), sq(2000, 0, 2200, 200))
    ae, fw, corner = sq(198, 0, 250, 93), sq(1198, 0, 1250, 61), sq(2199.8483, 199.8483, 2300, 300)
    fz = zones((ae, "AE"), (fw, "AE", "FLOODWAY"), (corner, "AE"),
               (sq(-10, -10, 2500, 500).difference(ae).difference(fw).difference(corner), "X"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    assert row(res, "P1")["sfha_acres"] * ACRE == pytest.approx(186, abs=0.01)
    m1 = finding(res, "FLD-001", "P1")
    assert m1["status"] == "review"
    assert m1["message"].startswith("parcels P1: 0.0043 acres in the area of special flood hazard, development permit")
    m2 = finding(res, "FLD-002", "P2")
    assert m2["status"] == "review" and "in the regulatory floodway (0.0028 acres, 0.3% of the parcel" in m2["message"]
    m3 = finding(res, "FLD-001", "P3")
    assert m3["status"] == "pass" and row(res, "P3")["slivers_ignored"] == "AE"
    assert "a sliver of 0.02 sq ft along the area of special flood hazard was ignored" in m3["message"]
    assert not any(t in m for m in res.findings["message"] for t in (" 0 acres", " 0.00 acres", " 0 sq ft"))


def test_shares_never_print_as_zero_or_whole(tmp_path, rb) -> None:
    # P1: 2,000 x 2,000 ft = 4,000,000 sq ft, AE a strip 2 x 100 ft = 200 sq ft: 0.005 % (was "0.0%");
    # P2: 200 x 200 ft, AE all but a 4 x 4 ft corner of X: 39,984 / 40,000 = 99.96 % (was "100.0%")
    p = parcels(sq(0, 0, 2000, 2000), sq(3000, 0, 3200, 200))
    strip, corner = sq(1998, 0, 2050, 100), sq(3196, 196, 3210, 210)
    fz = zones((strip, "AE"), (sq(2900, -10, 3210, 210).difference(corner), "AE"), (corner, "X"),
               (sq(-10, -10, 2100, 2100).difference(strip), "X"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    assert row(res, "P1")["sfha_share"] == pytest.approx(200 / 4e6)
    assert "(0.005% of the parcel, zones AE" in finding(res, "FLD-001", "P1")["message"]
    assert row(res, "P2")["sfha_share"] == pytest.approx(39_984 / 40_000)
    assert "(over 99.9% of the parcel, zones AE" in finding(res, "FLD-001", "P2")["message"]


# ------------------------------------------------------------------------------------------
# coverage: no data is not "no hazard"

def test_coverage_no_data_partial_and_zone_d(tmp_path, rb) -> None:
    # coverage: X over x -10..500 and zone D over x 1000..1300; P1 inside X, P2 half out (x 400..600),
    # P3 far away (no flood polygon), P4 in zone D.
    fz = zones((sq(-10, -10, 500, 210), "X"), (sq(1000, -10, 1300, 210), "D"))
    p = parcels(sq(0, 0, 200, 200), sq(400, 0, 600, 200), sq(3000, 0, 3200, 200), sq(1050, 0, 1250, 200))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    t = res.tables["parcels"].set_index("parcel_id")
    assert t["flood_data"].to_dict() == {"P1": "full", "P2": "partial", "P3": "no_data", "P4": "no_data"}
    # P2: x 500..600 uncovered = 100 x 200 = 20,000 sq ft
    assert t.loc["P2", "uncovered_acres"] * ACRE == pytest.approx(20_000, abs=0.5)
    assert finding(res, "FLD-001", "P1")["status"] == "pass"
    f2 = finding(res, "FLD-001", "P2")
    assert f2["status"] == "not_evaluated" and "partial flood data: 0.46 acres" in f2["message"]
    f3 = finding(res, "FLD-001", "P3")
    assert f3["status"] == "not_evaluated" and "coverage" in f3["message"]
    f4 = finding(res, "FLD-001", "P4")
    assert f4["status"] == "not_evaluated" and "zone D" in f4["message"] and t.loc["P4", "flood_zones"] == "D"
    for rule in ("FLD-002", "FLD-005", "FLD-006", "FLD-009"):
        assert finding(res, rule, "P3")["status"] == "not_evaluated"
    assert (t.loc[["P3", "P4"], "worst_status"] == "not_evaluated").all()


def test_flood_data_compared_as_arrow_text_gives_the_same_findings(tmp_path, rb, monkeypatch) -> None:
    # the checks' work table keeps flood_data as held (Arrow text, commands.COMPARED_ONLY): the findings and
    # the parcels table are those of the same checks reading it as Python strings
    from geoconstraints import commands

    fz = zones((sq(-10, -10, 500, 210), "X"), (sq(1000, -10, 1300, 210), "D"), (sq(100, -10, 180, 210), "AE"))
    p = parcels(sq(0, 0, 200, 200), sq(400, 0, 600, 200), sq(3000, 0, 3200, 200), sq(1050, 0, 1250, 200))
    seen = {}
    measured = commands._measured

    def spy(*a, **kw):
        work = measured(*a, **kw)
        seen.setdefault("dtype", work["flood_data"].dtype)
        return work

    monkeypatch.setattr(commands, "_measured", spy)
    arrow = screen(tmp_path / "a", rb, parcels=p, flood_zones=fz)
    assert isinstance(seen["dtype"], pd.StringDtype)
    monkeypatch.setattr(commands, "COMPARED_ONLY", ())
    seen.clear()
    python = screen(tmp_path / "b", rb, parcels=p, flood_zones=fz)
    assert seen["dtype"] == object
    # partial, no data, SFHA (FLD-005 on the partial parcel: info, its lot count being the proposal's)
    assert {"not_evaluated", "info", "review"} <= set(arrow.findings["status"])
    cols = ["rule_id", "subject_id", "status", "measured", "message"]
    pd.testing.assert_frame_equal(arrow.findings[cols].reset_index(drop=True), python.findings[cols].reset_index(drop=True))
    pd.testing.assert_frame_equal(arrow.tables["parcels"].drop(columns="geometry"),
                                  python.tables["parcels"].drop(columns="geometry"))


def test_screen_without_flood_zones_is_not_evaluated(tmp_path, rb) -> None:
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200), sq(300, 0, 500, 200)))
    f = res.findings
    assert set(f["status"]) == {"not_evaluated"}
    assert set(f["rule_id"]) == {"FLD-001", "FLD-002", "FLD-005", "FLD-006", "FLD-009", "FLD-010"}
    assert f["message"].str.contains("no flood_zones layer").all()


def test_screen_without_parcels_is_an_input_error(tmp_path, rb) -> None:
    layers = load_layers(write(tmp_path, flood_zones=zones((sq(0, 0, 100, 100), "AE"))))
    with pytest.raises(InputError, match="parcels"):
        screen_parcels(layers, rb)


# ------------------------------------------------------------------------------------------
# FLD-005, 006, 009, 010

def test_fld005_large_parcels_in_sfha(tmp_path, rb) -> None:
    # P1 500 x 500 ft = 250,000 sq ft = 5.739 ac (> 5 ac) touching AE: review
    # P2 400 x 500 ft = 200,000 sq ft = 4.591 ac touching AE: info (not over 5 acres; the lot count, the law's other
    # test, is the proposal's: never a pass); P3 5.739 ac outside the SFHA: pass
    # P4 435.6 x 500 ft = 217,800 sq ft = 5 ac exactly, touching AE: info (not greater than); P5 436 x 500 ft =
    # 218,000 sq ft = 5.0046 ac: review
    p = parcels(sq(0, 0, 500, 500), sq(600, 0, 1000, 500), sq(2000, 0, 2500, 500), sq(4000, 0, 4435.6, 500),
                sq(5000, 0, 5436, 500))
    fz = zones((sq(-10, -10, 1100, 100), "AE"), (sq(-10, 100, 6000, 600), "X"), (sq(1100, -10, 3900, 100), "X"),
               (sq(3900, -10, 6000, 100), "AE"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    f1 = finding(res, "FLD-005", "P1")
    assert f1["status"] == "review" and f1["measured"] == pytest.approx(250_000 / ACRE) and f1["threshold"] == 5
    f2 = finding(res, "FLD-005", "P2")
    assert f2["status"] == "info" and "into more than 50 lots would need BFE data" in f2["message"]
    assert finding(res, "FLD-005", "P3")["status"] == "pass"
    assert finding(res, "FLD-005", "P4")["status"] == "info"
    assert finding(res, "FLD-005", "P4")["measured"] == pytest.approx(5.0, abs=1e-9)
    assert finding(res, "FLD-005", "P5")["status"] == "review"
    f9 = finding(res, "FLD-009", "P2")
    assert f9["status"] == "info" and f9["measured"] == pytest.approx(200_000 / ACRE)


def test_fld006_unnumbered_a_and_no_floodway(tmp_path, rb) -> None:
    # P1 in an unnumbered A zone; P2 in an AE zone with no floodway anywhere; P3 outside. The X
    # polygons carry the NFHL subtype "AREA OF MINIMAL FLOOD HAZARD", so the layer has subtypes.
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200), sq(2000, 0, 2200, 200))
    x = "AREA OF MINIMAL FLOOD HAZARD"
    fz = zones((sq(-10, -10, 210, 100), "A"), (sq(990, -10, 1210, 100), "AE"),
               (sq(-10, 100, 2300, 300), "X", x), (sq(1900, -10, 2300, 100), "X", x))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    f1, f2, f3 = (finding(res, "FLD-006", s) for s in ("P1", "P2", "P3"))
    assert f1["status"] == "review" and "unnumbered A" in f1["message"]
    assert f2["status"] == "review" and "1 ft" in f2["message"] and "no floodway determined" in f2["message"]
    assert f3["status"] == "pass"
    # the same layer with ZONE_SUBTY blank on every polygon: whether a floodway is determined cannot be
    # told, so neither FLD-002 (floodway) nor FLD-006 (f)(2)/(f)(3) can pass the AE parcel
    blank = screen(tmp_path / "b", rb, parcels=p, flood_zones=fz.assign(ZONE_SUBTY=None))
    assert finding(blank, "FLD-006", "P2")["status"] == "not_evaluated"
    assert "ZONE_SUBTY" in finding(blank, "FLD-006", "P2")["message"]
    assert finding(blank, "FLD-002", "P2")["status"] == "not_evaluated"
    assert finding(blank, "FLD-002", "P3")["status"] == "pass"  # no SFHA at all: no floodway either


def test_fld010_adopted_map(tmp_path, rb) -> None:
    p = parcels(sq(0, 0, 100, 100))
    same = zones((sq(-10, -10, 110, 110), "X"), DFIRM_ID="360057", EFF_DATE="1998-03-02")
    other = zones((sq(-10, -10, 110, 110), "X"), DFIRM_ID="36007C", EFF_DATE="2010-06-16")
    bare = zones((sq(-10, -10, 110, 110), "X"))
    f_same = screen(tmp_path / "a", rb, parcels=p, flood_zones=same).findings
    f_other = screen(tmp_path / "b", rb, parcels=p, flood_zones=other).findings
    f_bare = screen(tmp_path / "c", rb, parcels=p, flood_zones=bare).findings
    one = lambda f: f[f["rule_id"] == "FLD-010"]
    assert len(one(f_same)) == 1 and one(f_same).iloc[0]["status"] == "pass"
    o = one(f_other).iloc[0]
    assert o["status"] == "info" and "36007C" in o["message"] and "360057" in o["message"]
    assert "2010-06-16" in o["message"]
    assert one(f_bare).iloc[0]["status"] == "not_evaluated"


def _fld010(rule, eff: list) -> pd.Series:
    """FLD-010's one finding for a flood layer of DFIRM_ID 360057 whose features hold the EFF_DATE values ``eff``."""
    from types import SimpleNamespace

    from geoconstraints.rules.flood import FloodContext, check_adopted_map
    flood = gpd.GeoDataFrame({"FLD_ZONE": ["X"] * len(eff), "DFIRM_ID": ["360057"] * len(eff),
                              "EFF_DATE": pd.Series(eff, dtype=object)},
                             geometry=[sq(0, 0, 10, 10)] * len(eff), crs=NY_FT)
    table = gpd.GeoDataFrame({"parcel_id": []}, geometry=[], crs=NY_FT)
    ctx = FloodContext("screen", SimpleNamespace(get_layer={"flood_zones": flood}.get), table, "parcels", True)
    return check_adopted_map(ctx, rule).iloc[0]


@pytest.mark.parametrize(("eff", "status"), [
    # the adopted 1998-03-02 as NFHL GeoPackages, shapefiles, Esri exports and FEMA write it: pass
    (["1998-03-02"], "pass"), (["1998-03-02 00:00:00"], "pass"), (["1998-03-02T00:00:00.000Z"], "pass"),
    (["1998/03/02 00:00:00"], "pass"), (["19980302"], "pass"), ([19980302], "pass"), (["3/2/1998"], "pass"),
    (["03/02/1998 12:00:00 AM"], "pass"), ([pd.Timestamp("1998-03-02")], "pass"),
    ([pd.Timestamp("1998-03-02", tz="America/New_York")], "pass"),  # a PostGIS timestamptz at midnight
    (["1998-03-02", " ", None], "pass"),  # blanks are not stated, as before
    (["2/3/1998"], "info"),  # FEMA's US order: February 3, another day
    # no day stated: not_evaluated naming the value. Before, pd.to_datetime guessed "13/2/1998" day-first
    # (1998-02-13) and "differs", kept "March 2nd" as text ("differs"), dropped the 05:00 of a shifted
    # Esri date (pass), and let one bad value among good ones pass
    (["13/2/1998"], "not_evaluated"), (["March 2nd"], "not_evaluated"), (["3/2/98"], "not_evaluated"),
    ([pd.Timestamp("1998-03-02 05:00")], "not_evaluated"), (["1998-03-02 05:00:00"], "not_evaluated"),
    (["1998-02-30"], "not_evaluated"), (["1998-03-02", "1998"], "not_evaluated"),
])
def test_fld010_reads_the_effective_date_strictly(rb, eff, status) -> None:
    f = _fld010(rb["FLD-010"], eff)
    assert f["status"] == status, f["message"]
    if status == "not_evaluated":
        bad = eff[-1]
        assert (repr(bad) if isinstance(bad, str) else str(bad)) in f["message"] and "is not a date" in f["message"]
        assert "not compared with the adopted map 360057 dated 1998-03-02" in f["message"]


def test_fld010_a_year_alone_is_no_date_and_never_passes(tmp_path, rb) -> None:
    # A rulebook adopting a map of 2012-01-01 and a flood layer whose EFF_DATE says only "2012": pd.to_datetime read
    # the year as 2012-01-01, and FLD-010 passed. Through the loader and the screening, as a clerk runs it.
    mine = tmp_path / "mine.yaml"
    mine.write_text('extends: vestal\nrules:\n  - id: FLD-010\n    params: {adopted_effective_date: "2012-01-01"}\n')
    rb12 = load_rulebook(mine)
    p = parcels(sq(0, 0, 100, 100))
    for eff, status in (("2012", "not_evaluated"), ("2012-01-01", "pass")):
        fz = zones((sq(-10, -10, 110, 110), "X"), DFIRM_ID="360057", EFF_DATE=eff)
        f = screen(tmp_path / eff, rb12, parcels=p, flood_zones=fz).findings
        f = f[f["rule_id"] == "FLD-010"].iloc[0]
        assert f["status"] == status, f["message"]
    assert "EFF_DATE '2012' (a year alone names no day) is not a date" in _fld010(rb12["FLD-010"], ["2012"])["message"]
    # a date column as a GeoPackage holds it (read as datetime64): midnight is the day; a time of day is not
    p = parcels(sq(0, 0, 100, 100))
    for when, status in (("2012-01-01 00:00", "pass"), ("2012-01-01 05:00", "not_evaluated")):
        fz = zones((sq(-10, -10, 110, 110), "X"), DFIRM_ID="360057", EFF_DATE=pd.Timestamp(when))
        res = screen(tmp_path / when.replace(":", ""), rb12, parcels=p, flood_zones=fz)
        assert str(res.layers.get_layer("flood_zones")["EFF_DATE"].dtype).startswith("datetime64")
        f = res.findings[res.findings["rule_id"] == "FLD-010"].iloc[0]
        assert f["status"] == status, f["message"]


@pytest.mark.parametrize("adopted", ["1998", "2/30/1998", "02.03.1998"])
def test_fld010_an_adopted_date_stating_no_day_is_a_rulebook_error(tmp_path, rb, adopted) -> None:
    from geoconstraints.errors import RulebookError
    mine = tmp_path / "mine.yaml"
    mine.write_text(f'extends: vestal\nrules:\n  - id: FLD-010\n    params: {{adopted_effective_date: "{adopted}"}}\n')
    p = parcels(sq(0, 0, 100, 100))
    fz = zones((sq(-10, -10, 110, 110), "X"), DFIRM_ID="360057", EFF_DATE="1998-03-02")
    with pytest.raises(RulebookError, match=rf"rule FLD-010 params.adopted_effective_date = '{re.escape(adopted)}' "
                                            rf"is not a date \(.+\); write it as YYYY-MM-DD.*Fix the rulebook"):
        screen(tmp_path, load_rulebook(mine), parcels=p, flood_zones=fz)


# ------------------------------------------------------------------------------------------
# bad input through the loader

def _base_case():
    p = parcels(sq(0, 0, 200, 200), sq(300, 0, 500, 300))
    fz = zones((sq(100, -50, 450, 100), "AE"), (sq(150, -50, 250, 150), "AE", "FLOODWAY"),
               (sq(-50, 100, 600, 400), "X"), (sq(-50, -50, 100, 100), "X"), (sq(450, -50, 600, 100), "X"))
    return p, fz


def test_lowercase_nfhl_fields_are_mapped(tmp_path, rb) -> None:
    p, fz = _base_case()
    ref = screen(tmp_path / "a", rb, parcels=p, flood_zones=fz).tables["parcels"]
    low = fz.rename(columns={c: c.lower() for c in fz.columns if c != "geometry"})
    assert "fld_zone" in low.columns
    got = screen(tmp_path / "b", rb, parcels=p, flood_zones=low).tables["parcels"]
    for c in ("sfha_acres", "floodway_acres", "flood_zones", "flood_data"):
        assert got[c].tolist() == ref[c].tolist()
    # P1: AE x 100..200, y 0..100 = 10,000 sq ft, plus the floodway (also SFHA) above it, x 150..200,
    # y 100..150 = 2,500 sq ft -> 12,500 sq ft; P2: AE x 300..450, y 0..100 = 15,000 sq ft
    assert (ref["sfha_acres"] * ACRE).round(3).tolist() == [12_500, 15_000]
    # floodway x 150..200, y 0..150 = 7,500 sq ft in P1
    assert ref["floodway_acres"].iloc[0] * ACRE == pytest.approx(7_500, abs=0.5)


@pytest.mark.parametrize("geo", ["EPSG:4326", "EPSG:4269"])
def test_geographic_layers_are_reprojected_and_areas_match(tmp_path, rb, geo) -> None:
    p, fz = _base_case()
    ref = screen(tmp_path / "a", rb, parcels=p, flood_zones=fz).tables["parcels"]
    layers = load_layers(write(tmp_path / "b", parcels=p.to_crs(geo), flood_zones=fz.to_crs(geo)))
    assert layers.crs.to_epsg() == 2261
    got = screen_parcels(layers, rb).tables["parcels"]
    # straight edges in lon/lat are not quite straight in EPSG:2261; 0.1 % is ample for 200-ft boxes
    np.testing.assert_allclose(got["sfha_acres"], ref["sfha_acres"], rtol=1e-3)
    np.testing.assert_allclose(got["area_acres"], ref["area_acres"], rtol=1e-3)
    assert got["flood_zones"].tolist() == ref["flood_zones"].tolist()


def test_missing_sfha_tf_is_not_guessed_and_the_zones_classify(tmp_path, rb) -> None:
    # without SFHA_TF the rulebook's zone lists classify the zones: the same areas as with the flag, and the
    # layer's SFHA_TF stays empty (never guessed from the zone's first letter)
    p, fz = _base_case()
    fz = fz.copy()
    fz["SFHA_TF"] = ["T", "T", "F", "F", "F"]
    with_flag = screen(tmp_path / "a", rb, parcels=p, flood_zones=fz).tables["parcels"]
    without = screen(tmp_path / "b", rb, parcels=p, flood_zones=fz.drop(columns="SFHA_TF")).tables["parcels"]
    layers = load_layers(write(tmp_path / "c", flood_zones=fz.drop(columns="SFHA_TF")))
    assert layers["flood_zones"]["SFHA_TF"].tolist() == [None] * 5
    assert without["sfha_acres"].tolist() == with_flag["sfha_acres"].tolist()
    assert with_flag["sfha_acres"].tolist() == pytest.approx([12_500 / ACRE, 15_000 / ACRE])


@pytest.mark.parametrize("value", ["Zone AE", "UNDES", "ANI", "2", "OPEN WATER"])
def test_a_zone_value_the_rulebook_does_not_know_is_undetermined_never_a_pass(tmp_path, rb, value, caplog) -> None:
    # an older FIRM's spelling or a coded value, wholly over a parcel: not "no flood hazard" (before: FLD-001 and
    # FLD-002 passed, and "ANI", area not included, starting with A, was made SFHA); the load names the value
    fz = zones((sq(-50, -50, 250, 250), value))
    with caplog.at_level(logging.WARNING):
        res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=fz)
    r = row(res, "P1")
    assert r["flood_data"] == "no_data" and r["sfha_acres"] == 0
    for rule in ("FLD-001", "FLD-002", "FLD-005", "FLD-006", "FLD-009"):
        f = finding(res, rule, "P1")
        assert f["status"] == "not_evaluated", (rule, f["message"])
        assert "a zone value the rulebook does not know" in f["message"]
    said = [m.getMessage() for m in caplog.records if "zone lists do not know" in m.getMessage()]
    assert len(said) == 1 and repr(value.upper()) in said[0] and "layer flood_zones:" in said[0]


def test_an_unknown_zone_flagged_sfha_is_in_the_sfha_and_known_zones_are_unchanged(tmp_path, rb) -> None:
    # the layer's own SFHA_TF = T for a zone outside the lists (AR): in the SFHA (review), 100 %; X, B, C and
    # X500 are mapped land outside it (pass)
    fz = zones((sq(-50, -50, 250, 250), "AR"))
    fz["SFHA_TF"] = ["T"]
    res = screen(tmp_path / "ar", rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=fz)
    assert finding(res, "FLD-001", "P1")["status"] == "review"
    assert row(res, "P1")["sfha_acres"] == pytest.approx(40_000 / ACRE)
    for z in ("X", "B", "C", "X500"):
        res = screen(tmp_path / z, rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=zones((sq(-50, -50, 250, 250), z)))
        assert finding(res, "FLD-001", "P1")["status"] == "pass", z
        assert row(res, "P1")["flood_data"] == "full"


def test_invalid_bow_tie_is_repaired(tmp_path, rb) -> None:
    # bow-tie AE over the parcel's west half: (0,0)-(100,200)-(100,0)-(0,200) crosses itself at (50,100);
    # make_valid gives two triangles with bases 200 ft on x = 0 and x = 100, apex (50,100):
    # each 1/2 * 200 * 50 = 5,000 sq ft -> 10,000 sq ft in the parcel.
    bow = Polygon([(X0, Y0), (X0 + 100, Y0 + 200), (X0 + 100, Y0), (X0, Y0 + 200)])
    assert not bow.is_valid
    fz = zones((bow, "AE"), (sq(-10, -10, 300, 300), "X"))
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=fz)
    assert any("repaired" in w for w in res.layers.warnings)
    assert row(res, "P1")["sfha_acres"] * ACRE == pytest.approx(10_000, abs=0.5)


REPAIRED = "geometry was invalid and was repaired (make_valid) before the check"
"""Words of the vestal rulebook's ``messages.geometry_repaired``."""


def test_a_repaired_bow_tie_parcel_says_so_in_its_findings_and_the_parcels_table(tmp_path, rb) -> None:
    # P7: a bow-tie (400,0)-(600,200)-(600,0)-(400,200), two triangles of 200 * 100 / 2 = 10,000 sq ft;
    # AE below v = 100 takes half of each: 10,000 sq ft in the SFHA -> FLD-001 review, kept as it is
    bow = Polygon([(X0 + 400, Y0), (X0 + 600, Y0 + 200), (X0 + 600, Y0), (X0 + 400, Y0 + 200)])
    fz = zones((sq(-50, -50, 650, 100), "AE"), (sq(-100, -100, 1300, 400).difference(sq(-50, -50, 650, 100)), "X"))
    pcl = parcels(sq(0, 0, 200, 200), bow, sq(1000, 0, 1200, 200), ids=["P1", "P7", "P3"])
    res = screen_parcels(load_layers(write(tmp_path, parcels=pcl, flood_zones=fz)), rb)  # the person scope
    f = finding(res, "FLD-001", "P7")
    assert f["status"] == "review" and f"P7's {REPAIRED}" in f["message"]
    assert f["message"].endswith("the outcome rests on the repaired shape; check it in a GIS.")
    assert row(res, "P7")["sfha_acres"] * ACRE == pytest.approx(10_000, abs=0.5)
    mine = res.findings["subject_id"] == "P7"
    assert res.findings.loc[mine, "message"].str.contains(REPAIRED, regex=False).all()
    assert not res.findings.loc[~mine, "message"].str.contains("make_valid", regex=False).any()
    assert finding(res, "FLD-001", "P1")["status"] == "review"  # P1 is in the AE too, not repaired
    t = res.tables["parcels"]
    assert t["geometry_repaired"].dtype == bool
    assert dict(zip(t["parcel_id"], t["geometry_repaired"])) == {"P1": False, "P7": True, "P3": False}
    assert any(n.startswith("Invalid geometries repaired: 1 feature (parcels: P7)") for n in res.notes)


def test_a_repair_that_drops_flood_land_is_not_a_pass(tmp_path, rb) -> None:
    # P8's ring winds twice around its middle square [100,200]^2: make_valid makes that square a hole, and
    # the AE inside it ([120,180]^2) falls out of the parcel. The repaired shape would pass FLD-001; the
    # drawn one is in the SFHA: not evaluated, saying why (P1 beside it, valid, still passes)
    pts = [(0, 0), (300, 0), (300, 300), (0, 300), (0, 0), (100, 100), (200, 100), (200, 200), (100, 200), (100, 100)]
    twice = Polygon([(X0 + u, Y0 + v) for u, v in pts])
    ae = sq(120, 120, 180, 180)
    fz = zones((ae, "AE"), (sq(-100, -100, 1300, 400).difference(ae), "X"), ZONE_SUBTY=None)
    res = screen(tmp_path, rb, parcels=parcels(sq(1000, 0, 1200, 200), twice, ids=["P1", "P8"]), flood_zones=fz)
    f = finding(res, "FLD-001", "P8")
    assert f["status"] == "not_evaluated"
    assert "left out land or lines the drawing covers" in f["message"] and "a pass is not evaluated" in f["message"]
    assert row(res, "P8")["status_FLD_001"] == "not_evaluated" and row(res, "P8")["geometry_repaired"]
    assert finding(res, "FLD-001", "P1")["status"] == "pass"


# ------------------------------------------------------------------------------------------
# BFE at a site

def _lines(*specs, crs=NY_FT) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"ELEV": [s[1] for s in specs], "V_DATUM": [s[2] for s in specs]},
                            geometry=[s[0] for s in specs], crs=crs)


def test_bfe_interpolated_along_a_bent_stream() -> None:
    # stream: (0,0) -> (1000,0) -> (1000,1000) (2,000 ft long). BFE 800 crosses at s = 200, BFE 812 at s = 1,600.
    # site (1030, 300) projects to (1000, 300): s = 1,300. BFE = 800 + 12 * (1300 - 200) / 1400 = 809.4286
    stream = gpd.GeoDataFrame(geometry=[LineString([(X0, Y0), (X0 + 1000, Y0), (X0 + 1000, Y0 + 1000)])], crs=NY_FT)
    bl = _lines((LineString([(X0 + 200, Y0 - 100), (X0 + 200, Y0 + 100)]), 800.0, "NAVD88"),
                (LineString([(X0 + 900, Y0 + 600), (X0 + 1100, Y0 + 600)]), 812.0, "NAVD88"))
    r = bfe_at_points([Point(X0 + 1030, Y0 + 300)], bfe_lines=bl, streams=stream, search_radius_ft=5000).iloc[0]
    assert r["bfe_method"] == "interpolated_along_stream"
    assert r["bfe_ft"] == pytest.approx(800 + 12 * 1100 / 1400, abs=1e-6)
    assert r["bfe_datum"] == "NAVD88" and "screening estimate" in r["bfe_note"]
    # straight-line nearest-lines weighting would give a different number: the stream matters
    near = bfe_at_points([Point(X0 + 1030, Y0 + 300)], bfe_lines=bl, search_radius_ft=5000).iloc[0]
    assert near["bfe_method"] == "nearest_lines"
    # distances: to the 812 line (y = 600, x 900..1100) 300 ft; to the 800 line (x = 200, y -100..100) 
    # hypot(830, 200) = 853.76 ft; BFE = (812 * 853.76 + 800 * 300) / 1153.76
    d1, d2 = 300.0, float(np.hypot(830, 200))
    assert near["bfe_ft"] == pytest.approx((812 * d2 + 800 * d1) / (d1 + d2), abs=1e-6)
    assert "screening estimate" in near["bfe_note"]


def test_bfe_never_mixes_datums_and_never_extrapolates() -> None:
    stream = gpd.GeoDataFrame(geometry=[LineString([(X0, Y0), (X0 + 2000, Y0)])], crs=NY_FT)
    bl = _lines((LineString([(X0 + 200, Y0 - 50), (X0 + 200, Y0 + 50)]), 800.0, "NGVD29"),
                (LineString([(X0 + 1200, Y0 - 50), (X0 + 1200, Y0 + 50)]), 801.0, "NAVD88"))
    pts = [Point(X0 + 700, Y0 + 10), Point(X0 + 1500, Y0 + 10)]
    r = bfe_at_points(pts, bfe_lines=bl, streams=stream, search_radius_ft=5000)
    assert r["bfe_method"].tolist() == ["none", "none"]
    assert r["bfe_ft"].isna().all()
    assert "different vertical datums (NGVD29, NAVD88)" in r.loc[0, "bfe_note"]
    assert "not between two BFE lines" in r.loc[1, "bfe_note"]


def test_static_bfe_wins_and_minus_9999_is_none(tmp_path, rb) -> None:
    fz = zones((sq(0, 0, 100, 100), "AE", None, 812.5), (sq(100, 0, 200, 100), "AE", None, -9999.0))
    layers = load_layers(write(tmp_path, flood_zones=fz))
    f = layers["flood_zones"]
    assert np.isnan(f["STATIC_BFE"].iloc[1])
    r = bfe_at_points([Point(X0 + 50, Y0 + 50), Point(X0 + 150, Y0 + 50)], flood=f, search_radius_ft=5000)
    assert r.loc[0, "bfe_method"] == "static" and r.loc[0, "bfe_ft"] == 812.5
    assert r.loc[1, "bfe_method"] == "none"


def test_real_lexington_bfe_lines_interpolation() -> None:
    """Real FEMA S_BFE lines (Lexington VA, EPSG:4269, NGVD29, ELEV ft).

    The snapshot has no stream centre lines, so the flooding source is a SYNTHETIC stream: a straight
    line through the midpoints of two real adjacent BFE lines (extended 20 ft past each). A site 30 %
    of the way between them, 40 ft off the line, must get e1 + 0.3 * (e2 - e1) within 0.1 ft.
    """
    layers = load_layers(overrides={"bfe_lines": str(LEX / "S_BFE.shp")})
    assert not layers.crs.is_geographic  # reprojected to a feet CRS (UTM in US feet outside NY)
    bl = layers["bfe_lines"]
    assert set(bl["V_DATUM"].dropna()) <= {"NGVD29", "NP"}
    g = np.asarray(bl.geometry.values, dtype=object)
    elev = bl["ELEV"].to_numpy()
    mids = shapely.line_interpolate_point(g, 0.5, normalized=True)
    tree = shapely.STRtree(g)
    pair = None
    for i in np.argsort(elev):  # deterministic: lowest ELEV first
        if not np.isfinite(elev[i]):
            continue
        cands = tree.query(mids[i], predicate="dwithin", distance=1500)
        for j in sorted(cands, key=lambda k: float(shapely.distance(mids[i], mids[k]))):
            if j == i or not np.isfinite(elev[j]) or not 0.5 <= elev[j] - elev[i] <= 5:
                continue
            seg = LineString([mids[i], mids[j]])
            if shapely.distance(mids[i], mids[j]) < 200:
                continue
            hits = tree.query(seg, predicate="intersects")
            if sorted(hits) == sorted([i, j]) and all(
                    shapely.get_type_id(shapely.intersection(seg, g[k])) == 0 for k in (i, j)):
                pair = (i, j)
                break
        if pair:
            break
    assert pair is not None, "no two adjacent real BFE lines found"
    i, j = pair
    a, b = np.array(mids[i].coords[0]), np.array(mids[j].coords[0])
    u = (b - a) / np.linalg.norm(b - a)
    stream = LineString([a - 20 * u, b + 20 * u])
    normal = np.array([-u[1], u[0]])
    site = Point(*(a + 0.3 * (b - a) + 40 * normal))
    streams = gpd.GeoDataFrame(geometry=[stream], crs=layers.crs)
    r = bfe_at_points([site], bfe_lines=bl, streams=streams, search_radius_ft=5000).iloc[0]
    e1, e2 = elev[i], elev[j]
    assert r["bfe_method"] == "interpolated_along_stream"
    assert min(e1, e2) <= r["bfe_ft"] <= max(e1, e2)
    assert r["bfe_ft"] == pytest.approx(e1 + 0.3 * (e2 - e1), abs=0.1)
    assert r["bfe_datum"] == "NGVD29"
    assert {r["bfe_low_ft"], r["bfe_high_ft"]} == {e1, e2}


# ------------------------------------------------------------------------------------------
# site checks

def _site_layers(tmp_path: Path, footprint: Polygon, *, dem: bool = False, fz=None, bl=None, streams=None):
    layers = {"footprints": gpd.GeoDataFrame({"id": ["F1"]}, geometry=[footprint], crs=NY_FT)}
    if fz is not None:
        layers["flood_zones"] = fz
    if bl is not None:
        layers["bfe_lines"] = bl
    if streams is not None:
        layers["streams"] = streams
    path = write(tmp_path, **layers)
    dem_path = None
    if dem:
        import rasterio
        from affine import Affine

        # plane z = 100 + 0.01 * (x - X0) ft on 10-ft cells (cell centres), x from X0-500, y down from Y0+1000
        xs = X0 - 500 + 5 + 10 * np.arange(200)
        z = np.tile(100 + 0.01 * (xs - X0), (150, 1)).astype("float32")
        dem_path = tmp_path / "dem.tif"
        with rasterio.open(dem_path, "w", driver="GTiff", width=200, height=150, count=1, dtype="float32",
                           crs=NY_FT, transform=Affine(10, 0, X0 - 500, 0, -10, Y0 + 1000)) as dst:
            dst.write(z, 1)
    return load_layers(path, dem=dem_path, dem_z_units="ft" if dem else None, primary=("footprints",))


def _ae_with_lines():
    fz = zones((sq(-500, -200, 1500, 200), "AE"), (sq(-500, 200, 1500, 600), "AE", "FLOODWAY"),
               (sq(-500, 600, 1500, 900), "X"))
    bl = _lines((LineString([(X0 - 100, Y0 - 200), (X0 - 100, Y0 + 900)]), 800.0, "NAVD88"),
                (LineString([(X0 + 900, Y0 - 200), (X0 + 900, Y0 + 900)]), 810.0, "NAVD88"))
    st = gpd.GeoDataFrame({"name": ["River"]}, geometry=[LineString([(X0 - 500, Y0 + 400), (X0 + 1500, Y0 + 400)])],
                          crs=NY_FT)
    return fz, bl, st


def site_status(res, rule: str) -> str:
    return finding(res, rule, "F1")["status"]


def test_site_floor_against_interpolated_bfe(tmp_path, rb) -> None:
    # footprint x 0..100, y 0..100 in AE. BFE lines 800 at x = -100 and 810 at x = 900 cross the river
    # (y = 400). The highest BFE over corners/centroid: x = 100 -> 800 + 10 * 200 / 1000 = 802.0 ft
    fz, bl, st = _ae_with_lines()
    layers = _site_layers(tmp_path, sq(0, 0, 100, 100), fz=fz, bl=bl, streams=st)
    below = check_site(layers, rb, use="residential", lowest_floor_ft=801.5)
    t = below.tables["footprints"].iloc[0]
    assert t["bfe_ft"] == pytest.approx(802.0, abs=1e-6) and t["bfe_method"] == "interpolated_along_stream"
    assert site_status(below, "FLD-003") == "violation"
    assert finding(below, "FLD-003", "F1")["threshold"] == pytest.approx(802.0)
    assert site_status(below, "FLD-004") == "info"
    assert site_status(below, "FLD-002") == "pass" and site_status(below, "FLD-001") == "review"
    assert site_status(check_site(layers, rb, use="residential", lowest_floor_ft=802.0), "FLD-003") == "pass"
    assert site_status(check_site(layers, rb, use="nonresidential", lowest_floor_ft=801.0), "FLD-003") == "review"
    assert site_status(check_site(layers, rb, use="residential"), "FLD-003") == "not_evaluated"
    # manufactured home with a BFE: FLD-004 compares with the BFE
    mh = check_site(layers, rb, use="manufactured", lowest_floor_ft=801.0)
    assert site_status(mh, "FLD-004") == "violation" and site_status(mh, "FLD-003") == "info"


def _river_ending_at_x1000():
    """A river along y = 100 (x -500..3000) crossed by BFE lines 800 at x = 0 and 810 at x = 1000, and none
    upstream of x = 1000: along it the BFE is 800 + 10 * x / 1000 ft for x in 0..1000, unknown beyond."""
    st = gpd.GeoDataFrame({"name": ["River"]}, geometry=[LineString([(X0 - 500, Y0 + 100), (X0 + 3000, Y0 + 100)])],
                          crs=NY_FT)
    bl = _lines((LineString([(X0, Y0 - 200), (X0, Y0 + 400)]), 800.0, "NAVD88"),
                (LineString([(X0 + 1000, Y0 - 200), (X0 + 1000, Y0 + 400)]), 810.0, "NAVD88"))
    return bl, st


def test_site_bfe_not_determined_where_part_of_the_footprint_in_the_bfe_zone_has_none(tmp_path, rb) -> None:
    # footprint x 900..1400, y 0..50, all in AE. Corners at x = 900: 800 + 10 * 900 / 1000 = 809.0 ft; corners at
    # x = 1400 and the centroid (x = 1150) lie upstream of the last BFE line: no BFE there, and the BFE upstream is
    # above 810 ft. Before: 809.0 ft from the downstream corners only, and a floor of 810.0 ft passed.
    bl, st = _river_ending_at_x1000()
    layers = _site_layers(tmp_path, sq(900, 0, 1400, 50), fz=zones((sq(-500, -200, 3000, 400), "AE")), bl=bl,
                          streams=st)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=810.0)
    t = res.tables["footprints"].iloc[0]
    assert np.isnan(t["bfe_ft"]) and t["bfe_method"] == "none"
    f = finding(res, "FLD-003", "F1")
    assert f["status"] == "not_evaluated", f["message"]
    assert "part of the footprint in a BFE zone has no BFE" in f["message"]
    assert "not between two BFE lines" in f["message"] and "809.0 ft" in f["message"]  # why, and the lower bound
    # a manufactured home (FLD-004, at or above the BFE) is not passed on the downstream corners either
    mh = check_site(layers, rb, use="manufactured", lowest_floor_ft=810.0)
    assert site_status(mh, "FLD-004") == "not_evaluated" and site_status(mh, "FLD-003") == "info"


def test_site_bfe_is_the_highest_whatever_the_method(tmp_path, rb) -> None:
    # footprint x 940..990, y 0..50 in AE. The AE polygon east of x = 950 has STATIC_BFE 805; west of it the BFE is
    # interpolated: 800 + 10 * x / 1000 ft, rising to 800 + 10 * 950 / 1000 = 809.5 ft at the static polygon's edge,
    # where the footprint crosses it (corners at x = 940 give only 809.4 ft). The site's BFE is the highest, 809.5 ft
    # (before: the static 805 ft won by its method, and a floor of 806.0 ft passed; then 809.4 ft from the corners
    # alone, and a floor of 809.4 ft passed). Tolerance 1e-6 ft: straight lines and axis-aligned edges.
    bl, st = _river_ending_at_x1000()
    fz = zones((sq(-500, -200, 950, 400), "AE"), (sq(950, -200, 3000, 400), "AE", None, 805.0))
    layers = _site_layers(tmp_path, sq(940, 0, 990, 50), fz=fz, bl=bl, streams=st)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=806.0)
    t = res.tables["footprints"].iloc[0]
    assert t["bfe_ft"] == pytest.approx(809.5, abs=1e-6) and t["bfe_method"] == "interpolated_along_stream"
    assert "above the static BFE of 805.0 ft elsewhere on the footprint" in t["bfe_note"]
    f = finding(res, "FLD-003", "F1")
    assert f["status"] == "violation" and f["threshold"] == pytest.approx(809.5, abs=1e-6)
    assert site_status(check_site(layers, rb, use="nonresidential", lowest_floor_ft=806.0), "FLD-003") == "review"
    for floor, expect in ((809.4, "violation"), (809.49, "violation"), (809.5, "pass"), (809.51, "pass")):
        assert site_status(check_site(layers, rb, use="residential", lowest_floor_ft=floor), "FLD-003") == expect, floor
    mh = check_site(layers, rb, use="manufactured", lowest_floor_ft=806.0)
    assert site_status(mh, "FLD-004") == "violation"


def test_site_bfe_is_sampled_where_a_static_bfe_strip_crosses_the_footprint(tmp_path, rb) -> None:
    # A static-BFE strip (AE, STATIC_BFE 805) at x 960..980 crosses footprint x 900..990 (y 0..50) and the corners
    # lie on either side of it, so no corner touches the strip's edges. West of it the interpolated BFE rises to
    # 800 + 10 * 960 / 1000 = 809.6 ft at x = 960; east of it from 809.8 ft at x = 980 to 809.9 ft at the corners at
    # x = 990, the highest. A strip with STATIC_BFE 815 instead: its BFE (815.0 ft) is sampled where the footprint
    # crosses its edges (before: no sample point in it, 809.9 ft, and a floor of 810 ft passed).
    bl, st = _river_ending_at_x1000()
    for strip_bfe, want in ((805.0, 809.9), (815.0, 815.0)):
        fz = zones((sq(-500, -200, 960, 400), "AE"), (sq(960, -200, 980, 400), "AE", None, strip_bfe),
                   (sq(980, -200, 3000, 400), "AE"))
        layers = _site_layers(tmp_path / str(strip_bfe), sq(900, 0, 990, 50), fz=fz, bl=bl, streams=st)
        res = check_site(layers, rb, use="residential", lowest_floor_ft=810.0)
        assert res.tables["footprints"].iloc[0]["bfe_ft"] == pytest.approx(want, abs=1e-6), strip_bfe
        assert site_status(res, "FLD-003") == ("pass" if want < 810.0 else "violation")


def test_site_bfe_is_sampled_where_the_footprint_leaves_the_bfe_zone(tmp_path, rb) -> None:
    # AE up to x = 980, X beyond. Footprint x 900..1400: corners at x = 900 give 809.0 ft; the corners at x = 1400
    # and the centroid are in zone X, upstream of the last BFE line (no BFE, and none needed there). The AE part
    # reaches x = 980, where the BFE is 800 + 10 * 980 / 1000 = 809.8 ft (before: 809.0 ft, a floor of 809.5 passed)
    bl, st = _river_ending_at_x1000()
    fz = zones((sq(-500, -200, 980, 400), "AE"), (sq(980, -200, 3000, 400), "X"))
    layers = _site_layers(tmp_path, sq(900, 0, 1400, 50), fz=fz, bl=bl, streams=st)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=809.5)
    assert res.tables["footprints"].iloc[0]["bfe_ft"] == pytest.approx(809.8, abs=1e-6)
    assert site_status(res, "FLD-003") == "violation"
    assert site_status(check_site(layers, rb, use="residential", lowest_floor_ft=809.8), "FLD-003") == "pass"


def test_site_floor_below_the_known_bfe_is_a_violation_though_part_has_none(tmp_path, rb) -> None:
    # The layout of test_site_bfe_not_determined_...: footprint x 900..1400 (y 0..50) all in AE; the corners at
    # x = 900 give 800 + 10 * 900 / 1000 = 809.0 ft, the rest lies upstream of the last BFE line (no BFE). The site's
    # BFE, the highest over the footprint, is at least 809.0 ft: a floor under that is below it whatever the rest
    # holds (before: not_evaluated); a floor at or above it may still be below the unknown part's BFE.
    bl, st = _river_ending_at_x1000()
    layers = _site_layers(tmp_path, sq(900, 0, 1400, 50), fz=zones((sq(-500, -200, 3000, 400), "AE")), bl=bl,
                          streams=st)
    for floor, expect in ((808.99, "violation"), (809.0, "not_evaluated"), (809.01, "not_evaluated")):
        f = finding(check_site(layers, rb, use="residential", lowest_floor_ft=floor), "FLD-003", "F1")
        assert f["status"] == expect, (floor, f["message"])
        assert f["threshold"] == pytest.approx(809.0, abs=1e-6)
        assert "part of the footprint has no BFE, so the true BFE may be higher" in f["message"]
    f = finding(check_site(layers, rb, use="residential", lowest_floor_ft=805.0), "FLD-003", "F1")
    assert "below the BFE of at least 809.0 ft (NAVD88)" in f["message"]
    assert "not between two BFE lines" in f["message"]  # why part of it has none
    assert site_status(check_site(layers, rb, use="nonresidential", lowest_floor_ft=805.0), "FLD-003") == "review"
    for floor, expect in ((808.99, "violation"), (809.0, "not_evaluated")):  # a manufactured home (FLD-004)
        assert site_status(check_site(layers, rb, use="manufactured", lowest_floor_ft=floor), "FLD-004") == expect
    assert site_status(check_site(layers, rb, use="residential"), "FLD-003") == "not_evaluated"  # no floor given


def test_a_stated_bfe_never_lowers_the_bar_below_the_firm(tmp_path, rb, caplog) -> None:
    # Same layout: the FIRM data gives 809.0 ft on part of the footprint, nothing on the rest. A BFE from other data
    # (--bfe-ft, § 6-121(b)(5)) stands in for the part without one: the site's BFE is the higher of the two. A stated
    # 805 ft used to replace the FIRM's 809.0 ft (a floor of 807 ft passed).
    bl, st = _river_ending_at_x1000()
    layers = _site_layers(tmp_path, sq(900, 0, 1400, 50), fz=zones((sq(-500, -200, 3000, 400), "AE")), bl=bl,
                          streams=st)
    with caplog.at_level(logging.WARNING):
        low = check_site(layers, rb, use="residential", lowest_floor_ft=807.0, bfe_ft=805.0)
    f = finding(low, "FLD-003", "F1")
    assert f["status"] == "violation" and f["threshold"] == pytest.approx(809.0, abs=1e-6)
    assert "used instead of the lower 805.0 ft given by the user (--bfe-ft)" in f["message"]
    assert any("below the 809.0 ft the FIRM data gives" in r.getMessage() for r in caplog.records)
    for floor, expect in ((808.99, "violation"), (809.0, "pass"), (809.01, "pass")):
        res = check_site(layers, rb, use="residential", lowest_floor_ft=floor, bfe_ft=805.0)
        assert site_status(res, "FLD-003") == expect, floor
    # a stated BFE above the FIRM's known part is the site's BFE (the part without one may be that high)
    for floor, expect in ((810.99, "violation"), (811.0, "pass"), (811.01, "pass")):
        res = check_site(layers, rb, use="residential", lowest_floor_ft=floor, bfe_ft=811.0)
        assert site_status(res, "FLD-003") == expect, floor
        assert finding(res, "FLD-003", "F1")["threshold"] == pytest.approx(811.0)
    mh = check_site(layers, rb, use="manufactured", lowest_floor_ft=807.0, bfe_ft=805.0)
    assert site_status(mh, "FLD-004") == "violation" and finding(mh, "FLD-004", "F1")["threshold"] == pytest.approx(809.0)
    # where the FIRM gives the BFE on the whole footprint (802.0 ft, test_site_floor_against_interpolated_bfe) a
    # stated BFE is not used, and the detail says so
    fz, bl2, st2 = _ae_with_lines()
    whole = _site_layers(tmp_path / "whole", sq(0, 0, 100, 100), fz=fz, bl=bl2, streams=st2)
    f = finding(check_site(whole, rb, use="residential", lowest_floor_ft=801.0, bfe_ft=790.0), "FLD-003", "F1")
    assert f["status"] == "violation" and f["threshold"] == pytest.approx(802.0, abs=1e-6)
    assert "the BFE given (790.0 ft, --bfe-ft) is not used" in f["message"]


def test_the_firm_gives_a_bfe_by_area_not_by_the_method_of_the_highest_point(tmp_path, rb) -> None:
    # (1) Zone A footprint x 940..990 (y 0..50) whose east part (x > 950) lies in a polygon stating STATIC_BFE 805;
    # the BFE lines give 809.4 ft at the west corners. The FIRM gives a BFE here (the static one), though the
    # highest point's BFE is interpolated: FLD-003 applies (before: FLD-004 read no BFE at all and a floor of
    # 804 ft, below the static 805, was not_evaluated). The west part (x < 950) is zone A without a BFE: the
    # lines' 809.4..809.5 ft there are no BFE of the FIRM (§ 6-137(d) governs it, FLD-004: no DEM here, so
    # not_evaluated), and the footprint's BFE is the static 805.0 ft (it was 809.5 ft, read off the lines at
    # x = 950 on the zone A side, and FLD-004 was info).
    bl, st = _river_ending_at_x1000()
    fz = zones((sq(-500, -200, 950, 400), "A"), (sq(950, -200, 3000, 400), "A", None, 805.0))
    layers = _site_layers(tmp_path, sq(940, 0, 990, 50), fz=fz, bl=bl, streams=st)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=804.0)
    f = finding(res, "FLD-003", "F1")
    assert f["status"] == "violation" and f["threshold"] == pytest.approx(805.0)
    assert site_status(res, "FLD-004") == "not_evaluated"
    # (2) Zone A footprint x 0..50 (y 0..40) only touching, along x = 0, an AE polygon with STATIC_BFE 101: none
    # of it lies where the FIRM gives a BFE, so FLD-004 applies (HAG + 2 ft), not FLD-003 with the neighbour's BFE
    # (before: a floor of 101.5 ft passed FLD-003 and FLD-004 was info). DEM plane z = 100 + 0.01 (x - X0): HAG
    # 100.5 ft along the walls, required 102.5 ft (tolerance 1e-3 ft, float32 DEM).
    fz = zones((sq(-200, -200, 0, 300), "AE", None, 101.0), (sq(0, -200, 300, 300), "A"))
    layers = _site_layers(tmp_path / "touch", sq(0, 0, 50, 40), dem=True, fz=fz)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=101.5)
    assert site_status(res, "FLD-003") == "info"
    f = finding(res, "FLD-004", "F1")
    assert f["status"] == "violation" and f["threshold"] == pytest.approx(102.5, abs=1e-3)
    for floor, expect in ((102.49, "violation"), (102.5, "pass"), (102.51, "pass")):
        assert site_status(check_site(layers, rb, use="residential", lowest_floor_ft=floor), "FLD-004") == expect


def test_the_footprints_table_shows_no_bfe_the_rules_did_not_use(tmp_path, rb) -> None:
    # (1) Zone A footprint x 0..50 (y 0..40) only touching, along x = 0, an AE polygon with STATIC_BFE 101: the
    # FIRM gives no BFE on it, so FLD-004 applies (HAG + 2 ft = 100.5 + 2 = 102.5 ft on the DEM plane
    # z = 100 + 0.01 (x - X0), tolerance 1e-3 ft, float32 DEM). The table's BFE is empty and its note says the
    # 101.0 ft found at the touching corners is not used (before: bfe_ft 101.0, method static, while the rules
    # used 102.5 ft).
    fz = zones((sq(-200, -200, 0, 300), "AE", None, 101.0), (sq(0, -200, 300, 300), "A"))
    layers = _site_layers(tmp_path / "touch", sq(0, 0, 50, 40), dem=True, fz=fz)
    for use in ("residential", "manufactured"):
        res = check_site(layers, rb, use=use, lowest_floor_ft=101.5)
        t = res.tables["footprints"].iloc[0]
        assert np.isnan(t["bfe_ft"]) and t["bfe_method"] == "none" and t["bfe_datum"] == "", use
        assert "no BFE on the FIRM on the footprint (zone A): FLD-004 applies" in t["bfe_note"]
        assert "the 101.0 ft found at its sample points (the STATIC_BFE of a neighbouring flood zone polygon it " \
               "only touches) is not its BFE and is not used" in t["bfe_note"]
        assert t["required_lowest_floor_ft"] == pytest.approx(102.5, abs=1e-3)
        f = finding(res, "FLD-004", "F1")
        assert f["status"] == "violation" and f["threshold"] == pytest.approx(102.5, abs=1e-3)
    # (2) Zone A footprint x 100..200 (y 0..50) beside a river whose BFE lines give 800 + 10 * x / 1000 ft: the
    # lines are no BFE of the FIRM in zone A (FLD-004: HAG 100 + 0.01 * 200 = 102.0 ft, + 2 = 104.0 ft). Before:
    # the table said 802.0 ft, interpolated, which no rule used.
    bl, st = _river_ending_at_x1000()
    layers = _site_layers(tmp_path / "lines", sq(100, 0, 200, 50), dem=True,
                          fz=zones((sq(-500, -200, 3000, 400), "A")), bl=bl, streams=st)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=101.5)
    t = res.tables["footprints"].iloc[0]
    assert np.isnan(t["bfe_ft"]) and t["bfe_method"] == "none"
    assert "the 802.0 ft found at its sample points (read off the BFE lines; the FIRM gives none in this zone) is " \
           "not its BFE and is not used" in t["bfe_note"]
    assert t["required_lowest_floor_ft"] == pytest.approx(104.0, abs=1e-3)
    assert finding(res, "FLD-004", "F1")["threshold"] == pytest.approx(104.0, abs=1e-3)
    # where the FIRM gives the BFE, the table still shows the one FLD-003 used (802.0 ft,
    # test_site_floor_against_interpolated_bfe)
    fz, bl2, st2 = _ae_with_lines()
    res = check_site(_site_layers(tmp_path / "ae", sq(0, 0, 100, 100), fz=fz, bl=bl2, streams=st2), rb,
                     use="residential", lowest_floor_ft=801.5)
    t = res.tables["footprints"].iloc[0]
    assert t["bfe_ft"] == pytest.approx(802.0, abs=1e-6) == t["required_lowest_floor_ft"]


def test_a_flood_zone_island_inside_the_footprint_is_sampled(tmp_path, rb) -> None:
    # (1) Footprint x 100..300 (y 0..50) in an AE polygon stating STATIC_BFE 805, with an island (x 120..160,
    # y 10..40) stating STATIC_BFE 815: a hole of the big polygon, or laid over it. The island touches none of the
    # footprint's corners and holds none of its centroid (200, 25). The site's BFE, the highest over the
    # footprint, is 815.0 ft (before: 805.0 ft, and a floor of 814.99 ft passed).
    island = sq(120, 10, 160, 40)
    holed = Polygon(sq(-500, -200, 3000, 400).exterior.coords, [island.exterior.coords[::-1]])
    for name, big in (("hole", holed), ("over", sq(-500, -200, 3000, 400))):
        fz = zones((big, "AE", None, 805.0), (island, "AE", None, 815.0))
        layers = _site_layers(tmp_path / name, sq(100, 0, 300, 50), fz=fz)
        res = check_site(layers, rb, use="residential", lowest_floor_ft=814.99)
        t = res.tables["footprints"].iloc[0]
        assert t["bfe_ft"] == pytest.approx(815.0) and t["bfe_method"] == "static", name
        assert "the corners of its parts in each flood zone polygon" in t["bfe_note"]
        for floor, expect in ((814.99, "violation"), (815.0, "pass"), (815.01, "pass")):
            f = finding(check_site(layers, rb, use="residential", lowest_floor_ft=floor), "FLD-003", "F1")
            assert f["status"] == expect and f["threshold"] == pytest.approx(815.0), (name, floor)
        mh = check_site(layers, rb, use="manufactured", lowest_floor_ft=814.99)
        assert site_status(mh, "FLD-004") == "violation"
    # (2) Zone A footprint x 900..1100 (y 0..50) with an AE island (x 1020..1080, y 10..40) upstream of the last
    # BFE line (x = 1000): the island is in a zone with BFEs but has none (before: the island was not sampled,
    # 810.0 ft read at the centroid was taken as the BFE and a floor of 810.0 ft passed). The corners at x = 900
    # (809.0 ft) and the centroid (x = 1000, on the 810 ft line) lie in zone A, where the BFE lines give no BFE of
    # the FIRM (§ 6-137(d) governs that part, FLD-004): the island's BFE is not determined, whatever the floor
    # (before this: "at least 810.0 ft" from those zone A points, and 809.99 ft was a violation).
    bl, st = _river_ending_at_x1000()
    island = sq(1020, 10, 1080, 40)
    fz = zones((Polygon(sq(-500, -200, 3000, 400).exterior.coords, [island.exterior.coords[::-1]]), "A"),
               (island, "AE"))
    layers = _site_layers(tmp_path / "a", sq(900, 0, 1100, 50), fz=fz, bl=bl, streams=st)
    t = check_site(layers, rb, use="residential", lowest_floor_ft=810.0).tables["footprints"].iloc[0]
    assert np.isnan(t["bfe_ft"]) and "its part in zone A has no BFE on the FIRM" in t["bfe_note"]
    for floor in (809.99, 810.0, 810.01):
        res = check_site(layers, rb, use="residential", lowest_floor_ft=floor)
        f = finding(res, "FLD-003", "F1")
        assert f["status"] == "not_evaluated" and np.isnan(f["threshold"]), (floor, f["message"])
        assert "no BFE could be determined" in f["message"] and "not between two BFE lines" in f["message"]
        assert site_status(res, "FLD-004") == "not_evaluated"  # the zone A part: no DEM


def _ae_beside_zone_a(tmp_path: Path, static_bfe: float, *, dem: bool = True, zone: str = "A",
                      depth: float | None = None):
    """Footprint x 0..50 (y 0..40): its west half (x < 25) in an AE polygon stating ``static_bfe``, its east half
    in ``zone`` A (no BFE; or AO with a base flood ``depth``). DEM plane z = 100 + 0.01 (x - X0): HAG 100.5 ft along
    the walls (x up to 50), so the zone A part needs HAG + 2 = 102.5 ft (§ 6-137(d)(1); tolerance 1e-3 ft, float32
    DEM)."""
    fz = zones((sq(-200, -200, 25, 300), "AE", None, static_bfe), (sq(25, -200, 300, 300), zone))
    if depth is not None:
        fz["DEPTH"] = [-9999.0, depth]
    return _site_layers(tmp_path, sq(0, 0, 50, 40), dem=dem, fz=fz)


def test_a_footprint_in_ae_and_zone_a_meets_both_the_bfe_and_hag_plus_2(tmp_path, rb) -> None:
    # § 6-137(b)(1) asks the AE part for the BFE, (d)(1) the zone A part for 2 ft above the highest adjacent grade
    # of the structure: the building meets both, the higher governs. Before: FLD-003 alone (the BFE), FLD-004
    # info, and a floor of 102.49 ft passed beside a zone A part needing 102.5 ft.
    # (1) AE STATIC_BFE 103.0 > 102.5: the BFE governs, required 103.0 ft
    layers = _ae_beside_zone_a(tmp_path / "bfe", 103.0)
    for floor, f3, f4 in ((102.99, "violation", "pass"), (103.0, "pass", "pass"), (103.01, "pass", "pass")):
        res = check_site(layers, rb, use="residential", lowest_floor_ft=floor)
        a, b = finding(res, "FLD-003", "F1"), finding(res, "FLD-004", "F1")
        assert (a["status"], b["status"]) == (f3, f4), (floor, a["message"], b["message"])
        assert a["threshold"] == pytest.approx(103.0) and b["threshold"] == pytest.approx(102.5, abs=1e-3)
        t = res.tables["footprints"].iloc[0]
        assert t["required_lowest_floor_ft"] == pytest.approx(103.0) and t["bfe_ft"] == pytest.approx(103.0)
        assert "its part in zone A has no BFE on the FIRM" in t["bfe_note"] and "FLD-004 applies" in a["message"]
        assert "§ 6-137(d) applies to it" in b["message"] and "100.5 ft + 2 ft = 102.5 ft" in b["message"]
    # (2) AE STATIC_BFE 101.0 < 102.5: HAG + 2 governs, required 102.5 ft; a floor meeting only the BFE fails
    layers = _ae_beside_zone_a(tmp_path / "hag", 101.0)
    for floor, f4 in ((102.49, "violation"), (102.5, "pass"), (102.51, "pass")):
        res = check_site(layers, rb, use="residential", lowest_floor_ft=floor)
        assert site_status(res, "FLD-003") == "pass" and site_status(res, "FLD-004") == f4, floor
        assert finding(res, "FLD-004", "F1")["threshold"] == pytest.approx(102.5, abs=1e-3)
        t = res.tables["footprints"].iloc[0]
        assert t["required_lowest_floor_ft"] == pytest.approx(102.5, abs=1e-3)
        assert t["worst_status"] == ("violation" if f4 == "violation" else "review")  # FLD-001: the permit
    # nonresidential: floodproofing answers the BFE (review), not the zone A part's 2 ft above grade
    res = check_site(layers, rb, use="nonresidential", lowest_floor_ft=100.0)
    assert site_status(res, "FLD-003") == "review" and site_status(res, "FLD-004") == "violation"
    # a BFE from other data (--bfe-ft 104) is the zone A part's (max(104, 102.5)); the FIRM's 101.0 ft stays the
    # AE part's
    res = check_site(layers, rb, use="residential", lowest_floor_ft=103.99, bfe_ft=104.0)
    a, b = finding(res, "FLD-003", "F1"), finding(res, "FLD-004", "F1")
    assert a["status"] == "pass" and a["threshold"] == pytest.approx(101.0)
    assert "(FLD-004 uses it for the part without one)" in a["message"]
    assert b["status"] == "violation" and b["threshold"] == pytest.approx(104.0)
    # a manufactured home (FLD-004 alone): the higher of the BFE and HAG + 2
    for bfe, floor, expect, req in ((101.0, 102.49, "violation", 102.5), (101.0, 102.5, "pass", 102.5),
                                    (103.0, 102.99, "violation", 103.0), (103.0, 103.0, "pass", 103.0)):
        res = check_site(_ae_beside_zone_a(tmp_path / f"mh{bfe}", bfe), rb, use="manufactured", lowest_floor_ft=floor)
        f = finding(res, "FLD-004", "F1")
        assert f["status"] == expect and f["threshold"] == pytest.approx(req, abs=1e-3), (bfe, floor, f["message"])
        assert site_status(res, "FLD-003") == "info"


@pytest.mark.parametrize("depth", [1.0, 3.0])
def test_a_footprint_in_ae_and_zone_ao_meets_the_bfe_and_hag_plus_2(tmp_path, rb, depth) -> None:
    # The layout of _ae_beside_zone_a with the east half in zone AO (shallow flooding, a base flood depth of
    # ``depth`` ft on the FIRM, no BFE). Vestal ch. 6 defines AO (§ 6-101 "area of shallow flooding": depths of 1 to
    # 3 ft) and puts it in the SFHA, but names no standard by depth: a part of the SFHA without base flood
    # elevations is § 6-137(d)'s, to or above a BFE from other data (§ 6-121(b)(5)) and "in addition" 2 ft above
    # the highest adjacent grade ((d)(1)), whatever the depth (a depth is no elevation). So as with zone A: FLD-003
    # judges the AE part's BFE, FLD-004 the AO part's HAG + 2 = 102.5 ft, and the higher governs.
    layers = _ae_beside_zone_a(tmp_path / "bfe", 103.0, zone="AO", depth=depth)
    for floor, f3, f4 in ((102.99, "violation", "pass"), (103.0, "pass", "pass")):
        res = check_site(layers, rb, use="residential", lowest_floor_ft=floor)
        a, b = finding(res, "FLD-003", "F1"), finding(res, "FLD-004", "F1")
        assert (a["status"], b["status"]) == (f3, f4), (floor, a["message"], b["message"])
        assert a["threshold"] == pytest.approx(103.0) and b["threshold"] == pytest.approx(102.5, abs=1e-3)
        assert "its part in zone AO has no BFE on the FIRM" in a["message"] and "FLD-004 applies" in a["message"]
        assert "its part in zone AO has no BFE on the FIRM, so § 6-137(d) applies to it" in b["message"]
        assert "100.5 ft + 2 ft = 102.5 ft" in b["message"]
        t = res.tables["footprints"].iloc[0]
        assert t["flood_zones"] == "AE; AO" and t["bfe_ft"] == pytest.approx(103.0) and t["bfe_method"] == "static"
        assert t["required_lowest_floor_ft"] == pytest.approx(103.0)
        assert site_status(res, "FLD-006") == "review"  # AO: analysed like an unnumbered A zone (§ 6-136(f)(1))
    # the AE part's BFE below HAG + 2: the AO part's 102.5 ft governs
    low = _ae_beside_zone_a(tmp_path / "hag", 101.0, zone="AO", depth=depth)
    for floor, f4 in ((102.49, "violation"), (102.5, "pass")):
        res = check_site(low, rb, use="residential", lowest_floor_ft=floor)
        assert site_status(res, "FLD-003") == "pass" and site_status(res, "FLD-004") == f4, floor
        assert res.tables["footprints"].iloc[0]["required_lowest_floor_ft"] == pytest.approx(102.5, abs=1e-3)
    # a BFE from other data (--bfe-ft) is the AO part's: FLD-004 max(104, 102.5); FLD-003 keeps the AE part's 103.0;
    # the table shows the FIRM's 103.0 ft and says the stated 104.0 ft is used for the AO part
    res = check_site(layers, rb, use="residential", lowest_floor_ft=103.5, bfe_ft=104.0)
    a, b = finding(res, "FLD-003", "F1"), finding(res, "FLD-004", "F1")
    assert (a["status"], a["threshold"]) == ("pass", pytest.approx(103.0))
    assert (b["status"], b["threshold"]) == ("violation", pytest.approx(104.0))
    t = res.tables["footprints"].iloc[0]
    assert t["bfe_ft"] == pytest.approx(103.0) and t["bfe_method"] == "static"
    assert t["required_lowest_floor_ft"] == pytest.approx(104.0)
    assert ("the BFE stated by the user (104.0 ft, --bfe-ft: other data, § 6-121(b)(5)) is used for its part in "
            "zone AO (FLD-004)") in t["bfe_note"]
    # a manufactured home: FLD-004 alone, the higher of the BFE and the AO part's HAG + 2
    mh = check_site(layers, rb, use="manufactured", lowest_floor_ft=102.99)
    f = finding(mh, "FLD-004", "F1")
    assert (f["status"], f["threshold"]) == ("violation", pytest.approx(103.0)) and site_status(mh, "FLD-003") == "info"


def test_the_footprints_table_shows_the_stated_bfe_the_rules_used(tmp_path, rb) -> None:
    # --bfe-ft (a BFE from other data, § 6-121(b)(5)) stood in for the FIRM's, but footprints.csv left bfe_ft empty
    # (bfe_method none) though the rules used it: the clerk could not see which BFE was used. The findings do not
    # change (thresholds as in test_site_zone_a_uses_hag_from_dem and test_a_stated_bfe_never_lowers_the_bar_...).
    # (1) Zone A, no BFE on the FIRM: FLD-004 requires max(stated BFE, HAG 100.5 + 2 ft)
    fz = zones((sq(-200, -200, 300, 300), "A"))
    layers = _site_layers(tmp_path / "a", sq(0, 0, 50, 40), dem=True, fz=fz)
    for stated, req in ((103.0, 103.0), (101.0, 102.5)):
        res = check_site(layers, rb, use="residential", lowest_floor_ft=102.6, bfe_ft=stated)
        t = res.tables["footprints"].iloc[0]
        assert (t["bfe_ft"], t["bfe_method"], t["bfe_datum"]) == (stated, "stated_other_data", ""), stated
        assert t["bfe_note"].startswith("no BFE on the FIRM on the footprint (zone A): FLD-004 applies")
        assert (f"the BFE stated by the user ({stated:.1f} ft, --bfe-ft: other data, § 6-121(b)(5)) is used "
                f"(FLD-004)") in t["bfe_note"]
        assert t["required_lowest_floor_ft"] == pytest.approx(req, abs=1e-3)
        assert finding(res, "FLD-004", "F1")["threshold"] == pytest.approx(req, abs=1e-3)
    t = check_site(layers, rb, use="residential", lowest_floor_ft=102.6).tables["footprints"].iloc[0]
    assert np.isnan(t["bfe_ft"]) and t["bfe_method"] == "none"  # nothing stated: still none
    # (2) All in AE, part of it upstream of the last BFE line (no BFE there; 809.0 ft known on the rest): a stated
    # BFE at or above the known one is FLD-003's BFE; a lower one is not used, the FIRM data's 809.0 ft is
    bl, st = _river_ending_at_x1000()
    layers = _site_layers(tmp_path / "ae", sq(900, 0, 1400, 50), fz=zones((sq(-500, -200, 3000, 400), "AE")),
                          bl=bl, streams=st)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=811.0, bfe_ft=811.0)
    t = res.tables["footprints"].iloc[0]
    assert (t["bfe_ft"], t["bfe_method"], t["bfe_datum"]) == (811.0, "stated_other_data", "")
    assert t["bfe_note"].startswith("The BFE stated by the user (811.0 ft, --bfe-ft: other data, § 6-121(b)(5)) "
                                    "stands in where the FIRM gives none: part of the footprint in a BFE zone has no BFE")
    assert t["required_lowest_floor_ft"] == pytest.approx(811.0) == finding(res, "FLD-003", "F1")["threshold"]
    res = check_site(layers, rb, use="residential", lowest_floor_ft=809.0, bfe_ft=805.0)
    t = res.tables["footprints"].iloc[0]
    assert t["bfe_ft"] == pytest.approx(809.0, abs=1e-6) == finding(res, "FLD-003", "F1")["threshold"]
    assert (t["bfe_method"], t["bfe_datum"]) == ("interpolated_along_stream", "NAVD88")
    assert t["bfe_note"].startswith("the 809.0 ft the FIRM data gives on part of the footprint, used instead of the "
                                    "lower BFE stated by the user (805.0 ft, --bfe-ft)")
    # (3) The FIRM gives the BFE on the whole footprint: the stated one is not used, and the table keeps the FIRM's
    fz, bl2, st2 = _ae_with_lines()
    whole = _site_layers(tmp_path / "whole", sq(0, 0, 100, 100), fz=fz, bl=bl2, streams=st2)
    t = check_site(whole, rb, use="residential", lowest_floor_ft=801.0, bfe_ft=790.0).tables["footprints"].iloc[0]
    assert t["bfe_ft"] == pytest.approx(802.0, abs=1e-6) and t["bfe_method"] == "interpolated_along_stream"
    assert "stated" not in t["bfe_note"]


def test_a_footprint_in_ae_and_zone_a_without_a_dem(tmp_path, rb) -> None:
    # The layout of _ae_beside_zone_a (AE STATIC_BFE 101.0) without a DEM: the zone A part's requirement is
    # unknown, so a floor at or above the BFE is not_evaluated under FLD-004 (before: info, and the building
    # passed); a floor below the BFE fails FLD-003 whatever the zone A part needs.
    layers = _ae_beside_zone_a(tmp_path, 101.0, dem=False)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=150.0)
    assert site_status(res, "FLD-003") == "pass"
    f = finding(res, "FLD-004", "F1")
    assert f["status"] == "not_evaluated" and "no pre-construction DEM" in f["message"], f["message"]
    res = check_site(layers, rb, use="residential", lowest_floor_ft=100.99)
    assert site_status(res, "FLD-003") == "violation" and site_status(res, "FLD-004") == "not_evaluated"
    assert res.tables["footprints"].iloc[0]["worst_status"] == "violation"
    mh = check_site(layers, rb, use="manufactured", lowest_floor_ft=100.99)  # below the BFE, a lower bound
    assert site_status(mh, "FLD-004") == "violation"
    assert site_status(check_site(layers, rb, use="manufactured", lowest_floor_ft=101.0), "FLD-004") == "not_evaluated"


def test_bfe_lines_read_at_zone_a_corners_are_no_bfe_of_the_firm(tmp_path, rb) -> None:
    # AE (BFE from the lines, 800 + 10 * x / 1000 ft) up to x = 950, zone A beyond. Footprint x 940..990 (y 0..50):
    # its corners at x = 990 and its centroid (x = 965) lie in zone A, where the lines give 809.9 / 809.65 ft but
    # the FIRM gives no BFE; the AE part's BFE is highest at its edge, x = 950: 809.5 ft (before: 809.9 ft from
    # the zone A corners, while a zone A point without one would not have counted as missing). The zone A part
    # needs HAG + 2: the DEM plane gives 100 + 0.01 * 990 = 109.9 ft along the walls, + 2 = 111.9 ft.
    bl, st = _river_ending_at_x1000()
    fz = zones((sq(-500, -200, 950, 400), "AE"), (sq(950, -200, 3000, 400), "A"))
    layers = _site_layers(tmp_path, sq(940, 0, 990, 50), dem=True, fz=fz, bl=bl, streams=st)
    for floor, expect in ((809.49, "violation"), (809.5, "pass"), (809.51, "pass")):
        res = check_site(layers, rb, use="residential", lowest_floor_ft=floor)
        f = finding(res, "FLD-003", "F1")
        assert f["status"] == expect and f["threshold"] == pytest.approx(809.5, abs=1e-6), (floor, f["message"])
        g = finding(res, "FLD-004", "F1")
        assert g["status"] == "pass" and g["threshold"] == pytest.approx(111.9, abs=1e-3), g["message"]
    t = res.tables["footprints"].iloc[0]
    assert t["bfe_ft"] == pytest.approx(809.5, abs=1e-6) == t["required_lowest_floor_ft"]
    assert "none read off the BFE lines there is used" in t["bfe_note"]


def test_site_in_floodway(tmp_path, rb) -> None:
    fz, bl, st = _ae_with_lines()
    layers = _site_layers(tmp_path, sq(0, 300, 100, 350), fz=fz, bl=bl, streams=st)
    v = check_site(layers, rb, use="residential", lowest_floor_ft=900)
    f = finding(v, "FLD-002", "F1")
    assert f["status"] == "violation" and f["measured"] == pytest.approx(5_000, abs=0.5)  # 100 x 50 ft
    assert site_status(check_site(layers, rb, use="residential", no_rise_evaluation=True), "FLD-002") == "review"


# ------------------------------------------------------------------------------------------
# encroachment areas: floodway-like ZONE_SUBTY values whose reading is not decided (FLD-002)

def test_classify_flood_zones_tells_encroachment_areas_from_the_floodway(rb) -> None:
    # NFHL's D_Zone_Subtype: the FLOODWAY subtypes contain FLOODWAY; STATE / COMMUNITY ENCROACHMENT AREA do not
    sub = ["FLOODWAY", "ADMINISTRATIVE FLOODWAY", "FLOODWAY CONTAINED IN CHANNEL", "STATE ENCROACHMENT AREA",
           "Community Encroachment Area", None, "STATE ENCROACHMENT AREA", "0.2 PCT ANNUAL CHANCE FLOOD HAZARD"]
    df = pd.DataFrame({"FLD_ZONE": ["AE", "AE", "AE", "AE", "A", "AE", "D", "X"], "ZONE_SUBTY": sub})
    c = classify_flood_zones(df, flood_zone_spec(rb))
    assert c["floodway"].tolist() == [True, True, True, False, False, False, False, False]
    # zone D is undetermined whatever its subtype: neither
    assert c["encroachment"].tolist() == [False, False, False, True, True, False, False, False]
    assert c.loc[4, "subtype"] == "COMMUNITY ENCROACHMENT AREA"


def test_fld002_a_parcel_in_a_state_encroachment_area_is_never_a_pass(tmp_path, rb) -> None:
    # P1 wholly in an AE polygon whose ZONE_SUBTY is STATE ENCROACHMENT AREA (no floodway on it): whether § 6-138
    # applies is the local administrator's reading, not evaluated. Before: read as "not floodway", a pass.
    # P2 half in a FLOODWAY polygon (x 1100..1300): review as before (100 x 200 = 20,000 sq ft). P3 in both the
    # floodway (x 2000..2100) and a COMMUNITY ENCROACHMENT AREA (x 2100..2300): the floodway's outcome, 20,000 sq ft.
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200), sq(2000, 0, 2200, 200), sq(3000, 0, 3200, 200))
    fz = zones((sq(-10, -10, 210, 210), "AE", "STATE ENCROACHMENT AREA"),
               (sq(990, -10, 1100, 210), "AE"), (sq(1100, -10, 1300, 210), "AE", "FLOODWAY"),
               (sq(1990, -10, 2100, 210), "AE", "FLOODWAY"), (sq(2100, -10, 2300, 210), "AE", "COMMUNITY ENCROACHMENT AREA"),
               (sq(2990, -10, 3210, 210), "AE"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    f1 = finding(res, "FLD-002", "P1")
    assert f1["status"] == "not_evaluated" and np.isnan(f1["measured"])
    assert "STATE ENCROACHMENT AREA" in f1["message"] and "0.92 acres, 100.0% of the parcel" in f1["message"]
    assert "§ 6-138" in f1["message"] and "local administrator" in f1["message"]
    assert "floodway not determined" in f1["message"]
    r1 = row(res, "P1")
    assert r1["status_FLD_002"] == "not_evaluated" and r1["floodway_acres"] == 0
    assert r1["sfha_acres"] * ACRE == pytest.approx(40_000, abs=0.5)
    assert finding(res, "FLD-001", "P1")["status"] == "review"
    assert res.derived["floodway_overlaps"]["parcel_id"].tolist() == ["P2", "P3"]
    f2 = finding(res, "FLD-002", "P2")
    assert f2["status"] == "review" and f2["measured"] * ACRE == pytest.approx(20_000, abs=0.5)
    assert "floodway-like area" not in f2["message"]
    f3 = finding(res, "FLD-002", "P3")
    assert f3["status"] == "review" and f3["measured"] * ACRE == pytest.approx(20_000, abs=0.5)
    assert "COMMUNITY ENCROACHMENT AREA" in f3["message"]
    assert finding(res, "FLD-002", "P4")["status"] == "pass"


def test_fld002_a_coded_zone_subtype_is_not_read_as_no_floodway(tmp_path, rb) -> None:
    # ZONE_SUBTY holding FEMA's D_Zone_Subtype codes (1100 = FLOODWAY, 2000 = AREA OF MINIMAL FLOOD HAZARD), not
    # their text: no list of the rulebook can match a code. Before: P1, wholly in the coded floodway, passed
    # FLD-002 ("no regulatory floodway on it"). Now the layer's subtypes are not read, as without the field:
    # a parcel with SFHA is not evaluated, naming the codes and the fix; one outside the SFHA still passes
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200))
    fz = zones((sq(-10, -10, 210, 210), "AE", "1100"), (sq(990, -10, 1210, 210), "X", "2000"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    f1 = finding(res, "FLD-002", "P1")
    assert f1["status"] == "not_evaluated", f1["message"]
    assert "domain codes (1100, 2000)" in f1["message"] and "D_Zone_Subtype" in f1["message"]
    assert finding(res, "FLD-002", "P2")["status"] == "pass"
    f6 = finding(res, "FLD-006", "P1")
    assert f6["status"] == "not_evaluated" and "FEMA's domain codes" in f6["message"], f6["message"]
    # the same layer with the codes' text: P1 in the floodway (review), as a control
    fz["ZONE_SUBTY"] = ["FLOODWAY", "AREA OF MINIMAL FLOOD HAZARD"]
    res = screen(tmp_path / "text", rb, parcels=p, flood_zones=fz)
    assert finding(res, "FLD-002", "P1")["status"] == "review"


@pytest.mark.parametrize(("width", "side", "expect"), [
    # a strip `width` ft x 200 ft along the east edge: at most the 1 ft floodway tolerance is a sliver
    (0.99, None, "pass"), (1.0, None, "pass"), (1.01, None, "not_evaluated"),
    # a corner `side` x 10 ft against the floodway's 100 sq ft minimum
    (None, 9.9, "pass"), (None, 10.0, "not_evaluated"), (None, 10.1, "not_evaluated"),
])
def test_fld002_an_encroachment_area_sliver_follows_the_floodway_sliver_rules(tmp_path, rb, width, side, expect):
    if width is not None:
        part = sq(200 - width, -10, 400, 210)
    else:
        part = sq(200 - side, 190, 400, 400)
    fz = zones((part, "AE", "STATE ENCROACHMENT AREA"), (sq(-10, -10, 400, 400).difference(part), "AE"))
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=fz)
    f = finding(res, "FLD-002", "P1")
    assert f["status"] == expect
    if expect == "pass":  # the sliver is said, and in the parcels table
        assert "along the floodway-like area" in f["message"]
        assert row(res, "P1")["slivers_ignored"] == "floodway-like area"


def test_fld009_in_an_encroachment_area_keeps_the_floodway_condition_open(tmp_path, rb) -> None:
    # P1 (0.92 acres) wholly in an AE STATE ENCROACHMENT AREA, no floodway: FLD-002 not_evaluated. Before: FLD-009
    # gave the lot-size text alone, without the floodway's condition, as for any AE parcel. P2 (0.23 acres) in an
    # X polygon whose ZONE_SUBTY is COMMUNITY ENCROACHMENT AREA: FLD-002 not_evaluated too. Before: FLD-009 said
    # "outside the area of special flood hazard: no flood variance needed". P3 in the floodway: as before.
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1100, 100), sq(2000, 0, 2200, 200))
    fz = zones((sq(-10, -10, 210, 210), "AE", "STATE ENCROACHMENT AREA"),
               (sq(990, -10, 1110, 110), "X", "COMMUNITY ENCROACHMENT AREA"),
               (sq(1990, -10, 2210, 210), "AE", "FLOODWAY"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    for pid, subtype in (("P1", "STATE ENCROACHMENT AREA"), ("P2", "COMMUNITY ENCROACHMENT AREA")):
        assert finding(res, "FLD-002", pid)["status"] == "not_evaluated"
        f = finding(res, "FLD-009", pid)
        assert f["status"] == "info", f["message"]
        assert "no flood variance needed" not in f["message"]
        assert f"in a floodway-like area (ZONE_SUBTY {subtype})" in f["message"], f["message"]
        assert "§ 6-138" in f["message"] and "local administrator" in f["message"]
        assert "no variance within the floodway if any increase in flood levels would result" in f["message"]
    assert "no SFHA mapped on it" in finding(res, "FLD-009", "P2")["message"]
    f3 = finding(res, "FLD-009", "P3")
    assert f3["status"] == "info" and "floodway-like area" not in f3["message"]
    assert f3["message"].endswith("no variance within the floodway if any increase in flood levels would result).")


def test_site_footprint_in_an_encroachment_area_is_not_evaluated_not_a_violation(tmp_path, rb) -> None:
    # a footprint 100 x 50 ft in a STATE ENCROACHMENT AREA (y 200..600) beside the AE: with or without a no-rise
    # evaluation not a violation and never a pass. Before: "outside the regulatory floodway", pass.
    fz = zones((sq(-500, -200, 1500, 200), "AE"), (sq(-500, 200, 1500, 600), "AE", "STATE ENCROACHMENT AREA"),
               (sq(-500, 600, 1500, 900), "X"))
    layers = _site_layers(tmp_path, sq(0, 150, 100, 250), fz=fz)  # 100 x 50 = 5,000 sq ft in it
    f = finding(check_site(layers, rb, use="residential"), "FLD-002", "F1")
    assert f["status"] == "not_evaluated" and "5,000 sq ft, 50% of the footprint" in f["message"]
    assert "STATE ENCROACHMENT AREA" in f["message"] and "no no-rise technical evaluation supplied" in f["message"]
    g = finding(check_site(layers, rb, use="residential", no_rise_evaluation=True), "FLD-002", "F1")
    assert g["status"] == "not_evaluated" and "a no-rise technical evaluation is supplied" in g["message"]


def test_site_zone_a_uses_hag_from_dem(tmp_path, rb) -> None:
    # DEM plane z = 100 + 0.01 (x - X0); footprint x 0..50: walls sampled up to x = 50 -> HAG = 100.5 ft;
    # required floor = HAG + 2 = 102.5 ft; with a BFE from other data of 103 ft: max(103, 102.5) = 103 ft
    fz = zones((sq(-200, -200, 300, 300), "A"))
    layers = _site_layers(tmp_path, sq(0, 0, 50, 40), dem=True, fz=fz)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=102.4)
    t = res.tables["footprints"].iloc[0]
    assert t["hag_ft"] == pytest.approx(100.5, abs=1e-3) and t["hag_fraction"] == pytest.approx(1.0)
    f4 = finding(res, "FLD-004", "F1")
    assert f4["status"] == "violation" and f4["threshold"] == pytest.approx(102.5, abs=1e-3)
    assert site_status(res, "FLD-003") == "info"
    assert site_status(check_site(layers, rb, use="residential", lowest_floor_ft=102.5), "FLD-004") == "pass"
    hi = check_site(layers, rb, use="residential", lowest_floor_ft=102.6, bfe_ft=103.0)
    assert finding(hi, "FLD-004", "F1")["threshold"] == pytest.approx(103.0)
    assert site_status(hi, "FLD-004") == "violation"
    assert site_status(check_site(layers, rb, use="manufactured", lowest_floor_ft=103.0, bfe_ft=103.0),
                       "FLD-004") == "pass"
    # FLD-006: unnumbered A
    assert site_status(res, "FLD-006") == "review"


def test_site_zone_a_without_dem_is_not_evaluated(tmp_path, rb) -> None:
    fz = zones((sq(-200, -200, 300, 300), "A"))
    layers = _site_layers(tmp_path, sq(0, 0, 50, 40), fz=fz)
    assert site_status(check_site(layers, rb, use="residential", lowest_floor_ft=150), "FLD-004") == "not_evaluated"
    # below the BFE from other data is a violation even without the HAG
    assert site_status(check_site(layers, rb, use="residential", lowest_floor_ft=99, bfe_ft=100),
                       "FLD-004") == "violation"


def test_site_openings_and_substantial_improvement(tmp_path, rb) -> None:
    fz, bl, st = _ae_with_lines()
    layers = _site_layers(tmp_path, sq(0, 0, 100, 100), fz=fz, bl=bl, streams=st)

    def s(rule, **kw):
        return site_status(check_site(layers, rb, use="residential", **kw), rule)

    # 800 sq ft enclosed needs >= 800 sq in in >= 2 openings, bottoms <= 1 ft above grade
    ok = {"enclosed_sqft": 800, "openings": 2, "openings_sqin": 800, "opening_bottom_ft": 1.0}
    assert s("FLD-007", **ok) == "pass"
    assert s("FLD-007", **{**ok, "openings_sqin": 799}) == "review"
    assert s("FLD-007", **{**ok, "openings": 1}) == "review"
    assert s("FLD-007", **{**ok, "opening_bottom_ft": 1.5}) == "review"
    assert s("FLD-007", enclosed_sqft=800) == "not_evaluated"
    assert s("FLD-007") == "not_evaluated"
    assert s("FLD-007", enclosed_sqft=0) == "pass"
    msg = finding(check_site(layers, rb, use="residential", **{**ok, "openings": 1}), "FLD-007", "F1")["message"]
    assert "engineer-certified design needed" in msg
    # 50,000 / 100,000 = 50 % -> substantial improvement (review); 49,999 -> pass; missing -> not_evaluated
    assert s("FLD-008", improvement_cost=50_000, market_value=100_000) == "review"
    assert s("FLD-008", improvement_cost=49_999, market_value=100_000) == "pass"
    assert s("FLD-008", improvement_cost=50_000) == "not_evaluated"


@pytest.mark.parametrize(("cost", "value", "status", "pct"), [
    (50_000, 100_000, "review", 50.0),           # "equals or exceeds 50 %": at it
    (49_999.99, 100_000, "pass", 49.99999),      # a cent under
    (50_000.01, 100_000, "review", 50.00001),    # a cent over
    # exactly half, but 100 * 5,687,822.94 / 11,375,645.88 is 49.99999999999999 in floats: read as "under 50 %"
    (5_687_822.94, 11_375_645.88, "review", 50.0),
    (0, 1, "pass", 0.0),                         # the bounds themselves
])
def test_fld008_substantial_improvement_at_the_cent(tmp_path, rb, cost, value, status, pct) -> None:
    fz, bl, st = _ae_with_lines()
    layers = _site_layers(tmp_path, sq(0, 0, 100, 100), fz=fz, bl=bl, streams=st)
    f = finding(check_site(layers, rb, use="residential", improvement_cost=cost, market_value=value), "FLD-008", "F1")
    assert (f["status"], f["measured"]) == (status, pct)


def test_fld008_a_cent_from_half_says_which_side(tmp_path, rb) -> None:
    # 49.99999 % prints as "50 %": the message must not read "cost is 50 % ..., under 50 %" alone
    fz, bl, st = _ae_with_lines()
    layers = _site_layers(tmp_path, sq(0, 0, 100, 100), fz=fz, bl=bl, streams=st)

    def msg(cost):
        return finding(check_site(layers, rb, use="residential", improvement_cost=cost, market_value=100_000),
                       "FLD-008", "F1")["message"]

    assert "$49,999.99, under the $50,000.00 that is 50 % of $100,000.00" in msg(49_999.99)
    assert "$50,000.01, over the $50,000.00 that is 50 % of $100,000.00" in msg(50_000.01)
    assert "$" not in msg(50_000) and "$" not in msg(40_000)


@pytest.mark.parametrize("value", [1e-300, 5e-324, 0.5, 0.999])
def test_fld008_market_value_under_a_dollar_refused_from_python(tmp_path, rb, value) -> None:
    # 1e-300 made the share overflow: FLD-008 said "cost is inf % of market value" (review); under $1 is
    # no appraisal of a structure. The Python API refuses it as the CLI does, before any rule runs.
    fz, bl, st = _ae_with_lines()
    layers = _site_layers(tmp_path, sq(0, 0, 100, 100), fz=fz, bl=bl, streams=st)
    with pytest.raises(InputError, match=r"flood-site market_value = .* is less than 1\. Give a number of at least 1"):
        check_site(layers, rb, use="residential", improvement_cost=1e15, market_value=value)


def test_site_outside_coverage_not_evaluated(tmp_path, rb) -> None:
    fz, bl, st = _ae_with_lines()
    layers = _site_layers(tmp_path, sq(5000, 0, 5100, 100), fz=fz, bl=bl, streams=st)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=900)
    for rule in ("FLD-001", "FLD-002", "FLD-003", "FLD-004"):
        assert site_status(res, rule) == "not_evaluated", rule


def test_site_needs_a_footprint(tmp_path, rb) -> None:
    layers = load_layers(write(tmp_path, flood_zones=zones((sq(0, 0, 100, 100), "AE"))))
    with pytest.raises(InputError, match="footprint"):
        check_site(layers, rb, use="residential")
    with pytest.raises(InputError, match="use"):
        check_site(layers, rb, use="barn")


# ------------------------------------------------------------------------------------------
# effective vs preliminary

def test_preliminary_map_comparison(tmp_path, rb) -> None:
    # P1: AE x 100..200 (0.4591 ac) in both; P2: X -> AE over x 300..400 (20,000 sq ft), enters the SFHA
    p = parcels(sq(0, 0, 200, 200), sq(300, 0, 500, 200))
    eff = zones((sq(100, -10, 200, 210), "AE"), (sq(-10, -10, 100, 210), "X"), (sq(200, -10, 600, 210), "X"))
    pre = zones((sq(100, -10, 200, 210), "AE"), (sq(300, -10, 400, 210), "AE"), (sq(-10, -10, 100, 210), "X"),
                (sq(200, -10, 300, 210), "X"), (sq(400, -10, 600, 210), "X"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=eff, flood_zones_preliminary=pre)
    t = res.tables["parcels"].set_index("parcel_id")
    assert t.loc["P1", "zone_change"] == "" and t.loc["P1", "sfha_acres_change"] == pytest.approx(0, abs=1e-9)
    assert t.loc["P2", "prelim_flood_zones"] == "AE; X"
    assert t.loc["P2", "sfha_acres_change"] * ACRE == pytest.approx(20_000, abs=0.5)
    assert t.loc["P2", "zone_change"] == "X -> AE; X; enters the SFHA"
    cmp_ = res.tables["map_comparison"]
    assert cmp_["parcel_id"].tolist() == ["P2"]
    assert not cmp_["geometry_repaired"].any()


def test_the_map_comparison_says_which_parcel_was_repaired(tmp_path, rb) -> None:
    # P2 a bow-tie (300,0)-(500,200)-(500,0)-(300,200): its triangles with bases on x = 300 and x = 500 meet at
    # (400,100); the preliminary AE over x 300..400 takes the west one, 200 * 100 / 2 = 10,000 sq ft, and P3
    # (valid) 100 x 200 = 20,000 sq ft: both enter the SFHA. map_comparison.csv had no geometry_repaired column
    bow = Polygon([(X0 + 300, Y0), (X0 + 500, Y0 + 200), (X0 + 500, Y0), (X0 + 300, Y0 + 200)])
    p = parcels(sq(0, 0, 200, 200), bow, sq(700, 0, 900, 200))
    eff = zones((sq(-10, -10, 1000, 210), "X"))
    pre = zones((sq(300, -10, 400, 210), "AE"), (sq(700, -10, 800, 210), "AE"), (sq(-10, -10, 300, 210), "X"),
                (sq(400, -10, 700, 210), "X"), (sq(800, -10, 1000, 210), "X"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=eff, flood_zones_preliminary=pre)
    cmp_ = res.tables["map_comparison"].set_index("parcel_id")
    assert cmp_.index.tolist() == ["P2", "P3"]
    assert cmp_.loc["P2", "sfha_acres_change"] * ACRE == pytest.approx(10_000, abs=0.5)
    assert cmp_["geometry_repaired"].dtype == bool and cmp_["geometry_repaired"].to_dict() == {"P2": True, "P3": False}
    assert row(res, "P2")["geometry_repaired"] and not row(res, "P1")["geometry_repaired"]


def test_the_footprints_table_says_which_footprint_was_repaired(tmp_path, rb) -> None:
    # F2 a bow-tie (200,0)-(300,100)-(300,0)-(200,100) in the AE: two triangles of 100 * 50 / 2 = 2,500 sq ft.
    # Its findings said it rested on the repair; footprints.csv (and its layer of results.gpkg) had no column
    bow = Polygon([(X0 + 200, Y0), (X0 + 300, Y0 + 100), (X0 + 300, Y0), (X0 + 200, Y0 + 100)])
    fps = gpd.GeoDataFrame({"id": ["F1", "F2"]}, geometry=[sq(0, 0, 100, 100), bow], crs=NY_FT)
    fz = zones((sq(-500, -200, 1500, 200), "AE"), (sq(-500, 200, 1500, 600), "X"))
    layers = load_layers(write(tmp_path, footprints=fps, flood_zones=fz), primary=("footprints",))
    assert layers.repairs == {"footprints": {"F2": False}}
    res = check_site(layers, rb, use="residential", lowest_floor_ft=810.0)
    t = res.tables["footprints"]
    assert t["geometry_repaired"].dtype == bool
    assert dict(zip(t["footprint_id"], t["geometry_repaired"])) == {"F1": False, "F2": True}
    assert finding(res, "FLD-001", "F2")["message"].count(REPAIRED) == 1
    assert REPAIRED not in finding(res, "FLD-001", "F1")["message"]
    from geoconstraints.output import write_result

    out = tmp_path / "out"
    write_result(res, out, outputs="csv")
    back = pd.read_csv(out / "footprints.csv")
    assert back.set_index("footprint_id")["geometry_repaired"].to_dict() == {"F1": False, "F2": True}


# ------------------------------------------------------------------------------------------
# CLI and sample town

def test_cli_screen_writes_parcels_csv(tmp_path) -> None:
    from geoconstraints.cli import main

    p, fz = _base_case()
    path = write(tmp_path, parcels=p, flood_zones=fz)
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["screen", str(path), "--out", str(out)])
    assert r.exit_code == 0, r.output
    csv = pd.read_csv(out / "parcels.csv")
    need = ["parcel_id", "area_acres", "sfha_acres", "sfha_share", "floodway_acres", "floodway_share",
            "flood_zones", "flood_data", "bfe_ft", "bfe_method", "bfe_datum", "stream_distance_ft",
            "stream_corridor_acres", "critical_slope_acres", "zoning_districts", "worst_status"]
    assert all(c in csv.columns for c in need)
    # see the lowercase test; parcels.csv rounds acres to 4 decimals (0.00005 acre = 2.2 sq ft)
    assert csv["sfha_acres"].tolist() == [round(12_500 / ACRE, 4), round(15_000 / ACRE, 4)]
    assert "parcels" in pyogrio.list_layers(out / "results.gpkg")[:, 0]


def test_sample_town_screen() -> None:
    from geoconstraints import sample_path

    layers = load_layers(sample_path("vestal_sample.gpkg"))
    res = screen_parcels(layers, load_rulebook("vestal"), findings="all")
    t = res.tables["parcels"]
    assert len(t) == len(layers["parcels"])
    # coverage ends at easting 967,900: every parcel wholly east of it has no flood data
    east = t.geometry.bounds["minx"] >= 967_900
    assert east.sum() >= 100 and (t.loc[east, "flood_data"] == "no_data").all()
    ids = set(t.loc[east, "parcel_id"])
    f1 = res.findings[(res.findings["rule_id"] == "FLD-001") & res.findings["subject_id"].isin(ids)]
    assert (f1["status"] == "not_evaluated").all()
    assert ((t["sfha_share"] >= 0) & (t["sfha_share"] <= 1)).all()
    # interpolated BFEs follow the sample's profile BFE(x) = 844.8 + 0.0008 (x - 955,900) within 0.5 ft
    interp = t[(t["bfe_method"] == "interpolated_along_stream") & (t["sfha_acres"] > 0)]  # (sfha_overlaps: no slivers)
    assert len(interp) > 100
    pts = res.derived["sfha_overlaps"].set_index("parcel_id").loc[interp["parcel_id"]].geometry.representative_point()
    err = interp["bfe_ft"].to_numpy() - (844.8 + 0.0008 * (pts.x.to_numpy() - 955_900))
    assert np.median(np.abs(err)) < 0.5
    assert (t["zoning_districts"] != "").mean() > 0.95
    assert (t["stream_corridor_acres"] > 0).sum() > 50 and (t["critical_slope_acres"] > 0).sum() > 50
    fl = res.findings[res.findings["rule_id"] == "FLD-010"]
    assert len(fl) == 1 and fl.iloc[0]["status"] == "info"
    # the comparison lists exactly the parcels whose zones change or whose SFHA acres change by the
    # rulebook's minimum overlap or more, each once; the sample's preliminary map moves the SFHA both ways
    cmp_ = res.tables["map_comparison"]
    min_acres = load_rulebook("vestal")["FLD-001"].t("min_overlap_sqft") / ACRE
    moved = (t["zone_change"] != "") | (t["sfha_acres_change"].abs() >= min_acres)
    assert sorted(cmp_["parcel_id"]) == sorted(t.loc[moved, "parcel_id"]) and cmp_["parcel_id"].is_unique
    assert cmp_["zone_change"].str.endswith("enters the SFHA").any()
    assert cmp_["zone_change"].str.endswith("leaves the SFHA").any()
    # worst status per parcel: the worst of its own findings
    f = res.findings[res.findings["subject_layer"] == "parcels"]
    rank = f["status"].map({s: i for i, s in enumerate(STATUSES)})
    worst = f.assign(r=rank).groupby("subject_id")["r"].min().map(dict(enumerate(STATUSES)))
    assert (t.set_index("parcel_id")["worst_status"] == worst.reindex(t["parcel_id"]).to_numpy()).all()


def test_chunked_overlay_gives_the_same_table(tmp_path, rb) -> None:
    # 12 parcels in chunks of 5 (3 chunks, progress bar) == one chunk
    p = parcels(*[sq(250 * i, 0, 250 * i + 200, 200) for i in range(12)])
    fz = zones((sq(-10, 50, 3000, 120), "AE"), (sq(900, 60, 1300, 110), "AE", "FLOODWAY"),
               (sq(-10, -10, 3000, 300), "X"))
    layers = load_layers(write(tmp_path, parcels=p, flood_zones=fz))
    one = screen_parcels(layers, rb).tables["parcels"]
    many = screen_parcels(layers, rb, chunk_size=5).tables["parcels"]
    cols = [c for c in one.columns if c != "geometry"]
    pd.testing.assert_frame_equal(one[cols], many[cols])
    # each parcel: AE strip y 50..120 over 200 ft = 14,000 sq ft (the floodway lies inside the strip)
    assert (one["sfha_acres"] * ACRE).round(3).tolist() == [14_000] * 12
    # floodway y 60..110 over x 900..1300: parcel 4 (x 750..950) 50 x 50 = 2,500; parcel 5 (x 1000..1200)
    # 200 x 50 = 10,000; parcel 6 (x 1250..1450) 50 x 50 = 2,500 sq ft
    assert (one["floodway_acres"] * ACRE).round(3).tolist()[3:6] == [2_500, 10_000, 2_500]


def test_context_columns_corridor_slopes_zoning_stream(tmp_path, rb) -> None:
    # parcel x 0..200, y 0..200. Stream corridor x -50..50 -> 50 x 200 = 10,000 sq ft (0.2296 ac);
    # critical slopes y 150..260 -> 200 x 50 = 10,000 sq ft; zoning RA-1 x < 100, RR x >= 100 -> both;
    # stream line x = 300 -> 100 ft from the parcel's east edge.
    p = parcels(sq(0, 0, 200, 200))
    fz = zones((sq(-100, -100, 400, 400), "X"))
    corridor = gpd.GeoDataFrame({"id": ["C1"]}, geometry=[sq(-50, -100, 50, 400)], crs=NY_FT)
    slopes = gpd.GeoDataFrame({"id": ["S1"]}, geometry=[sq(-100, 150, 400, 260)], crs=NY_FT)
    zoning = gpd.GeoDataFrame({"id": ["Z1", "Z2"], "district": ["RA-1", "RR"]},
                              geometry=[sq(-100, -100, 100, 400), sq(100, -100, 400, 400)], crs=NY_FT)
    streams = gpd.GeoDataFrame({"id": ["ST"]}, geometry=[LineString([(X0 + 300, Y0 - 100), (X0 + 300, Y0 + 400)])],
                               crs=NY_FT)
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz, stream_corridor=corridor, critical_slopes=slopes,
                 zoning=zoning, streams=streams)
    r = row(res, "P1")
    assert r["stream_corridor_acres"] * ACRE == pytest.approx(10_000, abs=0.5)
    assert r["critical_slope_acres"] * ACRE == pytest.approx(10_000, abs=0.5)
    assert r["zoning_districts"] == "RA-1; RR"
    assert r["stream_distance_ft"] == pytest.approx(100.0, abs=1e-6)
    # without those layers the columns say "not measured" (NaN), never 0
    bare = screen(tmp_path / "b", rb, parcels=p, flood_zones=fz)
    assert np.isnan(row(bare, "P1")["stream_corridor_acres"]) and np.isnan(row(bare, "P1")["stream_distance_ft"])


# ------------------------------------------------------------------------------------------
# review fixes (independent correctness review)

def test_fld004_dem_covering_part_of_the_walls_never_passes(tmp_path, rb) -> None:
    # The DEM of _site_layers spans x = X0 - 500 .. X0 + 1500 (cell centres up to x = 1495, plane
    # z = 100 + 0.01 (x - X0)). Footprint x 1480..1520: the walls past x ~ 1495 have no DEM, so the
    # sampled HAG (~ 100 + 0.01 * 1495 = 114.95 ft) is only a lower bound of the true HAG.
    # Floor 130 ft is above 114.95 + 2 = 116.95 ft, but the unsampled walls may be higher: not a pass.
    # Floor 110 ft is below even the sampled HAG + 2: a violation whatever the rest of the walls hold.
    fz = zones((sq(1300, -200, 1800, 300), "A"))
    layers = _site_layers(tmp_path, sq(1480, 0, 1520, 40), dem=True, fz=fz)
    hi = check_site(layers, rb, use="residential", lowest_floor_ft=130.0)
    t = hi.tables["footprints"].iloc[0]
    assert 0.0 < t["hag_fraction"] < 0.999
    assert t["hag_ft"] == pytest.approx(114.95, abs=0.1)
    f = finding(hi, "FLD-004", "F1")
    assert f["status"] == "not_evaluated", f["message"]
    assert "walls" in f["message"]
    assert site_status(check_site(layers, rb, use="residential", lowest_floor_ft=110.0), "FLD-004") == "violation"


def test_bfe_at_points_raw_minus_9999_is_no_bfe() -> None:
    # bfe_at_points on layers NOT passed through load_layers: the NFHL sentinel -9999 in STATIC_BFE
    # and in S_BFE ELEV is "no value", never an elevation of -9,999 ft.
    fz = zones((sq(0, 0, 100, 100), "AE", None, -9999.0), (sq(100, 0, 200, 100), "AE", None, 812.5))
    r = bfe_at_points([Point(X0 + 50, Y0 + 50), Point(X0 + 150, Y0 + 50)], flood=fz, search_radius_ft=5000)
    assert r.loc[0, "bfe_method"] == "none" and np.isnan(r.loc[0, "bfe_ft"])
    assert r.loc[1, "bfe_method"] == "static" and r.loc[1, "bfe_ft"] == 812.5
    # a -9999 BFE line and a real one: only one usable line, so no interpolated value
    bl = _lines((LineString([(X0 + 200, Y0 - 100), (X0 + 200, Y0 + 100)]), -9999.0, "NAVD88"),
                (LineString([(X0 + 400, Y0 - 100), (X0 + 400, Y0 + 100)]), 802.0, "NAVD88"))
    r2 = bfe_at_points([Point(X0 + 300, Y0)], bfe_lines=bl, search_radius_ft=5000).iloc[0]
    assert r2["bfe_method"] == "none" and np.isnan(r2["bfe_ft"])


@pytest.mark.parametrize("code", [-8888.0, -999.0, 0.0])
def test_bfe_at_points_raw_other_codes_and_zero_are_no_bfe(code) -> None:
    # like -9999: any value at or below -999, and a BFE of 0, is no value (FLD-003 passed floors
    # "at or above the BFE of -8,888.0 ft"); -998 is a number (refused by the loader, not here)
    fz = zones((sq(0, 0, 100, 100), "AE", None, code), (sq(100, 0, 200, 100), "AE", None, 812.5))
    r = bfe_at_points([Point(X0 + 50, Y0 + 50), Point(X0 + 150, Y0 + 50)], flood=fz, search_radius_ft=5000)
    assert r.loc[0, "bfe_method"] == "none" and np.isnan(r.loc[0, "bfe_ft"])
    assert r.loc[1, "bfe_ft"] == 812.5
    bl = _lines((LineString([(X0 + 200, Y0 - 100), (X0 + 200, Y0 + 100)]), code, "NAVD88"),
                (LineString([(X0 + 400, Y0 - 100), (X0 + 400, Y0 + 100)]), 802.0, "NAVD88"))
    r2 = bfe_at_points([Point(X0 + 300, Y0)], bfe_lines=bl, search_radius_ft=5000).iloc[0]
    assert r2["bfe_method"] == "none" and np.isnan(r2["bfe_ft"])
    fz.loc[0, "STATIC_BFE"] = -998.0  # just over the codes: a number, as given
    r3 = bfe_at_points([Point(X0 + 50, Y0 + 50)], flood=fz, search_radius_ft=5000).iloc[0]
    assert (r3["bfe_method"], r3["bfe_ft"]) == ("static", -998.0)


def test_nearest_lines_only_between_bracketing_lines() -> None:
    # No stream lines. BFE 800 at x = 200 and 802 at x = 400 (vertical, y -100..100).
    # Site at x = 700 is downstream/upstream of BOTH lines: nearest points (400, 0) and (200, 0)
    # are both to its west (dot product of the two directions > 0): no bracketing, no BFE (an inverse
    # distance weighting would give 0.625 * 802 + 0.375 * 800 = 801.25, an unfounded extrapolation).
    # Site at x = 250 lies between them: 800 + 2 * 50 / 200 = 800.5 ft (inverse distance: weights
    # 150/200 and 50/200 -> 0.75 * 800 + 0.25 * 802 = 800.5).
    bl = _lines((LineString([(X0 + 200, Y0 - 100), (X0 + 200, Y0 + 100)]), 800.0, "NAVD88"),
                (LineString([(X0 + 400, Y0 - 100), (X0 + 400, Y0 + 100)]), 802.0, "NAVD88"))
    r = bfe_at_points([Point(X0 + 700, Y0), Point(X0 + 250, Y0)], bfe_lines=bl, search_radius_ft=5000)
    assert r.loc[0, "bfe_method"] == "none" and np.isnan(r.loc[0, "bfe_ft"])
    assert "bracket" in r.loc[0, "bfe_note"]
    assert r.loc[1, "bfe_method"] == "nearest_lines"
    assert r.loc[1, "bfe_ft"] == pytest.approx(800.5, abs=1e-9)


def test_fld002_without_zone_subty_field_is_not_evaluated_in_the_sfha(tmp_path):
    # A flood layer with no ZONE_SUBTY field cannot say where the floodway is. Parcel A lies in the
    # AE polygon (0..200 ft), so FLD-002 cannot be decided: not_evaluated, never pass. Parcel B lies
    # in zone X only; a floodway is always inside the SFHA, so B passes.
    import geopandas as gpd
    from shapely.geometry import box

    import geoconstraints as gc

    x0, y0 = 960_000, 760_000  # near Vestal in EPSG:2261 (ftUS)

    def b(a, c, d, e):
        return box(x0 + a, y0 + c, x0 + d, y0 + e)

    parcels = gpd.GeoDataFrame({"parcel_id": ["A", "B"]},
                               geometry=[b(50, 50, 150, 150), b(450, 50, 550, 150)], crs=2261)
    flood = gpd.GeoDataFrame({"FLD_ZONE": ["AE", "X"], "SFHA_TF": ["T", "F"]},
                             geometry=[b(0, 0, 300, 200), b(300, 0, 700, 200)], crs=2261)
    path = tmp_path / "town.gpkg"
    parcels.to_file(path, layer="parcels")
    flood.to_file(path, layer="flood_zones")
    layers = gc.load_layers(path)
    assert "ZONE_SUBTY" in layers.info["flood_zones"].absent_fields
    res = gc.screen_parcels(layers, gc.load_rulebook("vestal"), findings="all")
    f = res.findings[res.findings["rule_id"] == "FLD-002"].set_index("subject_id")
    assert f.loc["A", "status"] == "not_evaluated" and "ZONE_SUBTY" in f.loc["A", "message"]
    assert f.loc["B", "status"] == "pass"


# ------------------------------------------------------------------------------------------
# FLD-006 says what is true (issue 10 item 9)

def test_fld006_says_what_is_true_for_ao_a99_and_the_floodway_of_the_reach(tmp_path, rb):
    # P1 in AO (shallow flooding: a depth, no BFE, no floodway); P2 in A99; P3 in AE whose polygon touches a
    # floodway polygon, but none of the floodway lies on P3; P4 with part of the floodway on it.
    x = "AREA OF MINIMAL FLOOD HAZARD"
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200), sq(2000, 0, 2200, 150), sq(2400, 0, 2600, 200))
    fz = zones((sq(-10, -10, 210, 210), "AO"), (sq(990, -10, 1210, 210), "A99"),
               (sq(1990, -10, 2800, 150), "AE"), (sq(1990, 150, 2800, 300), "AE", "FLOODWAY"),
               (sq(-10, 210, 1990, 400), "X", x), (sq(210, -10, 990, 210), "X", x), (sq(1210, -10, 1990, 210), "X", x))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    f1, f2, f3, f4 = (finding(res, "FLD-006", s) for s in ("P1", "P2", "P3", "P4"))
    # default reading: no_elevation_zones_reading=capacity_analysis (AO / A99 analysed like unnumbered A)
    assert f1["status"] == "review" and "zone AO: no base flood elevations and no floodway" in f1["message"]
    assert "capacity_analysis" in f1["message"] and "floodway determined" not in f1["message"]
    assert f2["status"] == "review" and "zone A99" in f2["message"]
    # P3: § 6-138 applies to the reach, and the finding says no floodway lies on P3 (FLD-002 agrees)
    assert f3["status"] == "pass" and "no floodway lies on this parcel" in f3["message"]
    assert "no regulatory floodway mapped on it" in finding(res, "FLD-002", "P3")["message"]
    assert f4["status"] == "pass" and "part of this parcel lies in the floodway" in f4["message"]
    assert finding(res, "FLD-002", "P4")["status"] == "review"
    # the other reading: § 6-136(f) names only unnumbered A zones -> info, never pass
    p2 = tmp_path / "rb.yaml"
    p2.write_text("extends: vestal\nrulebook: vestal-ao\nrules:\n  - id: FLD-006\n    switches:\n"
                  "      no_elevation_zones_reading: not_covered\n")
    other = screen_parcels(load_layers(write(tmp_path / "b", parcels=p, flood_zones=fz)), load_rulebook(p2),
                           findings="all")
    g1 = finding(other, "FLD-006", "P1")
    assert g1["status"] == "info" and "not_covered" in g1["message"]


# ------------------------------------------------------------------------------------------
# real data (issue 10 item 14): the screen on real parcels, and a rule whose input is partly missing

def test_real_parcels_screen_says_when_the_flood_map_covers_only_part(tmp_path, rb):
    """Real Tompkins County tax parcels (EPSG:3857, 4 parcels, 0.45 to 92 acres). With no flood layer
    every FLD finding is not_evaluated and says so; with a flood layer covering only the western half of
    the largest parcel (X), that parcel is not_evaluated with the uncovered acres, never pass."""
    path = REALDATA / "tompkins_ny" / "cayuga_nature_center_parcels.gpkg"
    bare = screen_parcels(load_layers(overrides={"parcels": str(path)}), rb)
    f = bare.findings
    assert set(f["status"]) == {"not_evaluated"} and f["message"].str.contains("no flood_zones layer").all()
    layers = load_layers(overrides={"parcels": str(path)})
    big = layers["parcels"].assign(a=layers["parcels"].area).sort_values("a").iloc[-1]
    x0, y0, x1, y1 = big.geometry.bounds
    half = gpd.GeoDataFrame({"FLD_ZONE": ["X"], "ZONE_SUBTY": ["AREA OF MINIMAL FLOOD HAZARD"]},
                            geometry=[box(x0 - 10, y0 - 10, (x0 + x1) / 2, y1 + 10)], crs=layers.crs)
    half_path = tmp_path / "half.gpkg"
    half.to_file(half_path, layer="flood_zones")
    res = screen_parcels(load_layers(overrides={"parcels": str(path), "flood_zones": str(half_path)}), rb,
                         findings="all")
    t = res.tables["parcels"].set_index("parcel_id")
    pid = big["feature_id"]
    assert t.loc[pid, "flood_data"] == "partial"
    # the uncovered part: the parcel's area east of the half line, measured independently with shapely
    east = big.geometry.difference(half.geometry.iloc[0])
    assert t.loc[pid, "uncovered_acres"] * ACRE == pytest.approx(east.area, rel=1e-6)
    f1 = finding(res, "FLD-001", pid)
    assert f1["status"] == "not_evaluated" and "partial flood data" in f1["message"]
    assert f"{east.area / ACRE:,.2f} acres outside the flood map's coverage" in f1["message"]


def test_real_dem_footprint_partly_off_the_dem_says_so(tmp_path, rb):
    """Real PAMAP lidar DEM (Muncy PA, EPSG:2271, feet). A 60 x 60 ft zone-A footprint straddling the
    DEM's east edge: the highest adjacent grade is only a lower bound, so a floor meeting it is
    not_evaluated and the message names the share of the walls the DEM covers; the sampled HAG equals
    the highest bilinear DEM value along the covered walls (checked with rasterio's sample of the cells)."""
    import rasterio

    with rasterio.open(MUNCY_DEM) as src:
        right, top = src.bounds.right, src.bounds.top
        crs = src.crs.to_string()
    fp = box(right - 30, top - 500, right + 30, top - 440)
    flood = gpd.GeoDataFrame({"FLD_ZONE": ["A"]}, geometry=[box(right - 500, top - 900, right + 500, top - 100)],
                             crs=crs)
    path = tmp_path / "site.gpkg"
    gpd.GeoDataFrame({"id": ["F1"]}, geometry=[fp], crs=crs).to_file(path, layer="footprints")
    flood.to_file(path, layer="flood_zones")
    layers = load_layers(path, dem=MUNCY_DEM, dem_z_units="ft", primary=("footprints",))
    res = check_site(layers, rb, use="residential", lowest_floor_ft=5_000.0)
    t = res.tables["footprints"].iloc[0]
    assert 0.3 < t["hag_fraction"] < 0.7  # about half the walls lie on the DEM
    f = finding(res, "FLD-004", "F1")
    assert f["status"] == "not_evaluated" and "the DEM covers only" in f["message"]
    with rasterio.open(MUNCY_DEM) as src:  # the cells next to the covered walls bound the sampled HAG
        win = src.read(1, window=src.window(right - 40, top - 510, right, top - 430))
    assert float(win.min()) - 1e-6 <= t["hag_ft"] <= float(win.max()) + 1e-6
    low = check_site(layers, rb, use="residential", lowest_floor_ft=float(t["hag_ft"]) + 1.0)
    assert finding(low, "FLD-004", "F1")["status"] == "violation"  # below even the sampled part + 2 ft


# ------------------------------------------------------------------------------------------
# the footprint's BFE bounds the BFE over the whole footprint, not over its sample points

def _bfe_bound_l_stream(tmp_path: Path, upper_line_y: float, upper_elev: float):
    """An L-shaped river (0, 0) -> (1000, 0) -> (1000, 1000) crossed by a BFE line of 800 ft at x = 500 (500 ft along
    it) and one of ``upper_elev`` where its vertical arm reaches y = ``upper_line_y`` (1000 + ``upper_line_y`` ft
    along it), all in AE; footprint A (780, 200), B (950, 100), C (960, 30), D (780, 30) inside the bend."""
    st = gpd.GeoDataFrame({"name": ["River"]}, crs=NY_FT,
                          geometry=[LineString([(X0, Y0), (X0 + 1000, Y0), (X0 + 1000, Y0 + 1000)])])
    bl = _lines((LineString([(X0 + 500, Y0 - 20), (X0 + 500, Y0 + 20)]), 800.0, "NAVD88"),
                (LineString([(X0 + 980, Y0 + upper_line_y), (X0 + 1020, Y0 + upper_line_y)]), upper_elev, "NAVD88"))
    fp = Polygon([(X0 + 780, Y0 + 200), (X0 + 950, Y0 + 100), (X0 + 960, Y0 + 30), (X0 + 780, Y0 + 30)])
    layers = _site_layers(tmp_path, fp, fz=zones((sq(-500, -500, 1500, 1500), "AE")), bl=bl, streams=st)
    return layers, bl, st


def test_bfe_bound_an_edge_point_past_the_bend_is_not_passed_on_the_corners(tmp_path, rb) -> None:
    # Along the river the BFE is 800 + 12 * (s - 500) / 1000 ft (s: ft along it). Inside the bend a point is nearest
    # the horizontal arm (s = x) below the bisector x + y = 1000 and the vertical arm (s = 1000 + y) above it.
    # Corners: A s = 780 (200 ft from the horizontal arm, 220 from the vertical), B s = 1100 (100 / 50), C s = 960
    # (30 / 40), D s = 780; the centroid (854.9, 92.8) s = 854.9: the highest sampled is B, 800 + 12 * 0.6 = 807.2 ft.
    # Edge AB, (780 + 170 u, 200 - 100 u), crosses the bisector at u = 2/7, (828.571, 171.429), where s jumps to
    # 1000 + 171.429: the BFE there is 800 + 12 * 0.671429 = 808.057 ft, above every corner (before: a floor of
    # 808.0 ft passed on the corners' 807.2 ft). The bound: the footprint projects onto the vertical arm up to
    # y = 200 (corner A), s = 1200: 800 + 12 * 0.7 = 808.4 ft. The BFE lies between 807.2 (reached) and 808.4 ft
    # (at most): a floor below 807.2 is a violation, from 808.4 a pass, between not evaluated. Tolerances: 1e-6 ft
    # (exact arithmetic on straight lines), 1e-3 ft for the edge point (placed 1e-4 ft past the bisector).
    layers, bl, st = _bfe_bound_l_stream(tmp_path, 500.0, 812.0)
    u = 2 / 7 + 1e-6
    edge = bfe_at_points([Point(X0 + 780 + 170 * u, Y0 + 200 - 100 * u)], bfe_lines=bl, streams=st,
                         search_radius_ft=5000).iloc[0]
    assert edge["bfe_ft"] == pytest.approx(808.0571, abs=1e-3) and edge["bfe_ft"] > 808.0
    res = check_site(layers, rb, use="residential", lowest_floor_ft=808.0)
    t = res.tables["footprints"].iloc[0]
    assert t["bfe_ft"] == pytest.approx(808.4, abs=1e-6) and t["bfe_method"] == "interpolated_along_stream"
    assert "at most 808.4 ft, the highest the BFE can reach on the footprint" in t["bfe_note"]
    assert "at least 807.2 ft" in t["bfe_note"]
    f = finding(res, "FLD-003", "F1")
    assert f["status"] == "not_evaluated" and f["threshold"] == pytest.approx(808.4, abs=1e-6), f["message"]
    assert "meets the BFE of 807.2 ft (NAVD88) reached on the footprint but not the 808.4 ft" in f["message"]
    for floor, expect in ((807.19, "violation"), (807.2, "not_evaluated"), (807.21, "not_evaluated"),
                          (808.39, "not_evaluated"), (808.4, "pass"), (808.41, "pass")):
        f = finding(check_site(layers, rb, use="residential", lowest_floor_ft=floor), "FLD-003", "F1")
        assert f["status"] == expect, (floor, f["message"])
    f = finding(check_site(layers, rb, use="residential", lowest_floor_ft=807.0), "FLD-003", "F1")
    assert "below the BFE of at least 807.2 ft (NAVD88)" in f["message"]
    assert site_status(check_site(layers, rb, use="nonresidential", lowest_floor_ft=808.0), "FLD-003") == "not_evaluated"
    assert site_status(check_site(layers, rb, use="nonresidential", lowest_floor_ft=807.0), "FLD-003") == "review"
    for floor, expect in ((807.19, "violation"), (807.2, "not_evaluated"), (808.39, "not_evaluated"),
                          (808.4, "pass")):  # a manufactured home (FLD-004, at or above the BFE)
        assert site_status(check_site(layers, rb, use="manufactured", lowest_floor_ft=floor), "FLD-004") == expect


def test_bfe_bound_an_edge_point_past_the_last_bfe_line_makes_the_bfe_a_lower_bound(tmp_path, rb) -> None:
    # The same bend, the upper line (ELEV 813) at y = 150 (s = 1150): along the river the BFE is
    # 800 + 13 * (s - 500) / 650 = 800 + 0.02 (s - 500) ft up to s = 1150, none beyond. Every sample point lies
    # between the lines (highest B, s = 1100: 812.0 ft), but the edge AB past the bisector projects up to
    # s = 1171.429, beyond the last line: part of the footprint has no BFE (before: a floor of 812.0 ft passed).
    # As wherever part of it has none, 812.0 ft is a lower bound (tolerance 1e-6 ft).
    layers, _, _ = _bfe_bound_l_stream(tmp_path, 150.0, 813.0)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=812.0)
    t = res.tables["footprints"].iloc[0]
    assert np.isnan(t["bfe_ft"]) and t["bfe_method"] == "none"
    assert "part of the footprint in a BFE zone may have no BFE" in t["bfe_note"]
    assert "beyond the last BFE line" in t["bfe_note"]
    for floor, expect in ((811.99, "violation"), (812.0, "not_evaluated"), (812.01, "not_evaluated"),
                          (813.5, "not_evaluated")):
        f = finding(check_site(layers, rb, use="residential", lowest_floor_ft=floor), "FLD-003", "F1")
        assert f["status"] == expect and f["threshold"] == pytest.approx(812.0, abs=1e-6), (floor, f["message"])
    assert site_status(check_site(layers, rb, use="manufactured", lowest_floor_ft=812.0), "FLD-004") == "not_evaluated"


def test_bfe_bound_without_streams_is_the_highest_line_within_reach(tmp_path, rb) -> None:
    # No streams layer: the BFE is the inverse-distance mean of the nearest BFE line on each side, which is never
    # above the higher of the two but need not be highest at a corner. Lines 800 at x = -100 and 810 at x = 900
    # (_ae_with_lines); footprint x 0..100: the corners reach (800 * 800 + 810 * 200) / 1000 = 802.0 ft at x = 100,
    # and the bound is the highest line within 5,000 ft, 810.0 ft (tolerance 1e-6 ft). Before: a floor of 805.0 ft
    # passed on the corners alone.
    fz, bl, _ = _ae_with_lines()
    layers = _site_layers(tmp_path, sq(0, 0, 100, 100), fz=fz, bl=bl)
    t = check_site(layers, rb, use="residential", lowest_floor_ft=805.0).tables["footprints"].iloc[0]
    assert t["bfe_ft"] == pytest.approx(810.0, abs=1e-6) and t["bfe_method"] == "nearest_lines"
    assert "at least 802.0 ft" in t["bfe_note"]
    for floor, expect in ((801.99, "violation"), (802.0, "not_evaluated"), (805.0, "not_evaluated"),
                          (809.99, "not_evaluated"), (810.0, "pass")):
        f = finding(check_site(layers, rb, use="residential", lowest_floor_ft=floor), "FLD-003", "F1")
        assert f["status"] == expect and f["threshold"] == pytest.approx(810.0, abs=1e-6), (floor, f["message"])


def test_bfe_bound_a_straight_stream_keeps_the_corner_value(tmp_path, rb) -> None:
    # A straight river drawn with a vertex every 10 ft (test_site_floor_against_interpolated_bfe's layout): the bound
    # is reached at a corner, so the BFE stays the corners' 802.0 ft and a floor of 802.0 ft passes (tolerance
    # 1e-6 ft).
    fz, bl, _ = _ae_with_lines()
    st = gpd.GeoDataFrame({"name": ["River"]}, crs=NY_FT,
                          geometry=[LineString([(X0 + x, Y0 + 400) for x in range(-500, 1510, 10)])])
    layers = _site_layers(tmp_path, sq(0, 0, 100, 100), fz=fz, bl=bl, streams=st)
    res = check_site(layers, rb, use="residential", lowest_floor_ft=802.0)
    t = res.tables["footprints"].iloc[0]
    assert t["bfe_ft"] == pytest.approx(802.0, abs=1e-6) and "at most" not in t["bfe_note"]
    assert "the highest the BFE can reach on the footprint, at one of its corners" in t["bfe_note"]
    for floor, expect in ((801.99, "violation"), (802.0, "pass"), (802.01, "pass")):
        assert site_status(check_site(layers, rb, use="residential", lowest_floor_ft=floor), "FLD-003") == expect


# ------------------------------------------------------------------------------------------
# audit of the parcel screening (screen_parcels): what a pass rests on

AUDIT_RULES = ("FLD-001", "FLD-002", "FLD-005", "FLD-006", "FLD-009")


def _statuses(res, pid: str) -> dict[str, str]:
    r = row(res, pid)
    return {rule: r[f"status_{rule.replace('-', '_')}"] for rule in AUDIT_RULES}


def test_screen_audit_an_undetermined_polygon_over_a_mapped_one_is_no_pass(tmp_path, rb) -> None:
    # Parcels 200 x 200 ft = 40,000 sq ft, each under a mapped polygon 300 x 300 ft and, over its middle, a second
    # polygon 100 x 100 ft = 10,000 sq ft = 0.2296 acres (the layer contradicts itself there):
    # P1 zone D over X; P2 'FW' (a value the rulebook does not know) with ZONE_SUBTY FLOODWAY over X; P3 D over
    # AE; P4 D and X both over the whole parcel. Before: P1, P2 passed FLD-001, FLD-002, FLD-005 and FLD-006
    # ("outside the area of special flood hazard ... zone D ... is not 'no flood hazard'"), P3 passed FLD-002,
    # P4 passed all four. Now the overlap is off the map's coverage: partial (P4: no data), never a pass.
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200), sq(2000, 0, 2200, 200), sq(3000, 0, 3200, 200))
    fz = zones((sq(-50, -50, 250, 250), "X", "AREA OF MINIMAL FLOOD HAZARD"), (sq(50, 50, 150, 150), "D"),
               (sq(950, -50, 1250, 250), "X"), (sq(1050, 50, 1150, 150), "FW", "FLOODWAY"),
               (sq(1950, -50, 2250, 250), "AE"), (sq(2050, 50, 2150, 150), "D"),
               (sq(2950, -50, 3250, 250), "X"), (sq(2950, -50, 3250, 250), "D"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    for pid in ("P1", "P2"):
        r = row(res, pid)
        assert r["flood_data"] == "partial" and r["uncovered_acres"] * ACRE == pytest.approx(10_000, abs=0.5)
        assert r["sfha_acres"] == 0
        assert _statuses(res, pid) == {"FLD-001": "not_evaluated", "FLD-002": "not_evaluated", "FLD-005": "info",
                                       "FLD-006": "not_evaluated", "FLD-009": "info"}, pid
        assert "partial flood data: 0.23 acres outside the flood map's coverage" in finding(res, "FLD-001", pid)["message"]
        assert "no flood variance needed" not in finding(res, "FLD-009", pid)["message"]
    r3 = row(res, "P3")
    assert r3["flood_data"] == "partial" and r3["sfha_acres"] * ACRE == pytest.approx(40_000, abs=0.5)
    assert _statuses(res, "P3") == {"FLD-001": "review", "FLD-002": "not_evaluated", "FLD-005": "info",
                                    "FLD-006": "review", "FLD-009": "info"}
    r4 = row(res, "P4")
    assert r4["flood_data"] == "no_data" and r4["uncovered_acres"] * ACRE == pytest.approx(40_000, abs=0.5)
    assert set(_statuses(res, "P4").values()) == {"not_evaluated"}
    assert not (res.tables["parcels"][[f"status_{r.replace('-', '_')}" for r in AUDIT_RULES]] == "pass").any().any()


def test_screen_audit_an_undetermined_sliver_over_a_mapped_polygon_is_still_ignored(tmp_path, rb) -> None:
    # Zone D overlapping X along the parcel's east edge by a strip 0.5 ft x 200 ft = 100 sq ft (thinner than the
    # 1 ft sliver tolerance: digitising noise between adjacent polygons) and P2 by a 9 x 9 ft = 81 sq ft corner
    # (under the 100 sq ft minimum): the parcels stay wholly covered and pass FLD-001 (unchanged behaviour).
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200))
    fz = zones((sq(-50, -50, 1250, 250), "X", "AREA OF MINIMAL FLOOD HAZARD"), (sq(199.5, -50, 400, 250), "D"),
               (sq(1191, 191, 1300, 300), "D"))
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    for pid in ("P1", "P2"):
        assert row(res, pid)["flood_data"] == "full" and row(res, pid)["uncovered_acres"] == 0
        assert finding(res, "FLD-001", pid)["status"] == "pass"


def test_screen_audit_fld009_never_says_no_variance_needed_for_a_parcel_partly_off_the_map(tmp_path, rb) -> None:
    # The flood layer (an extract) covers x -50..100 with X; the parcel x 0..200 lies half outside it (20,000 sq ft
    # = 0.46 acres uncovered). Before: FLD-009 said "outside the area of special flood hazard: no flood variance
    # needed" of a parcel whose other half is off the map.
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)),
                 flood_zones=zones((sq(-50, -50, 100, 250), "X", "AREA OF MINIMAL FLOOD HAZARD")))
    assert row(res, "P1")["flood_data"] == "partial"
    f = finding(res, "FLD-009", "P1")
    assert f["status"] == "info" and "no flood variance needed" not in f["message"]
    assert "no SFHA on the covered part, part of it off the flood map" in f["message"]
    assert "partial flood data: 0.46 acres" in f["message"]
    assert finding(res, "FLD-001", "P1")["status"] == "not_evaluated"


def test_screen_audit_acre_limits_at_under_and_over(tmp_path, rb) -> None:
    # FLD-009 (0.5 acre = 21,780 sq ft, "or less") and FLD-005 (5 acres = 217,800 sq ft, "greater than"), all in AE.
    # P1 147.3 x (21,780 / 147.3) ft: exactly 0.5 acre drawn, measured 21,780.0000000117 sq ft at these State Plane
    # coordinates (float noise, 5e-13 of it); P2 150 x 145.19 = 21,778.5 sq ft (under); P3 150 x 145.21 =
    # 21,781.5 sq ft (over); P4 147.3 x (217,800 / 147.3) ft: exactly 5 acres drawn, measured 217,800.00000007;
    # P5 150 x 1452.01 = 217,801.5 sq ft (over). Before: P1 read "over 0.5 acre" and P4 was a review "greater
    # than 5 acres", each printing the limit itself as the area; P3 and P5 printed "0.5 acres (over 0.5 acre" /
    # "5 acres, greater than 5 acres" without the square feet that show it. Areas to 0.01 sq ft.
    p = parcels(sq(0, 0, 147.3, 21_780 / 147.3), sq(1000, 0, 1150, 145.19), sq(2000, 0, 2150, 145.21),
                sq(3000, 0, 3147.3, 217_800 / 147.3), sq(4000, 0, 4150, 1452.01))
    res = screen(tmp_path, rb, parcels=p, flood_zones=zones((sq(-50, -50, 4500, 1600), "AE")))
    t = res.tables["parcels"].set_index("parcel_id")
    assert (t["area_acres"] * ACRE).tolist() == pytest.approx([21_780, 21_778.5, 21_781.5, 217_800, 217_801.5],
                                                              abs=0.01)
    m = {pid: finding(res, "FLD-009", pid)["message"] for pid in ("P1", "P2", "P3")}
    assert "(0.5 acre or less:" in m["P1"] and "sq ft" not in m["P1"]
    assert "(0.5 acre or less:" in m["P2"] and "21,778.5 sq ft, under the 21,780 sq ft of 0.5 acre" in m["P2"]
    assert "(over 0.5 acre:" in m["P3"] and "21,781.5 sq ft, over the 21,780 sq ft of 0.5 acre" in m["P3"]
    f4, f5 = finding(res, "FLD-005", "P4"), finding(res, "FLD-005", "P5")
    assert f4["status"] == "info" and "not greater than 5 acres" in f4["message"]
    assert f5["status"] == "review" and "217,801.5 sq ft, over the 217,800 sq ft of 5 acres" in f5["message"]


def test_screen_audit_a_blank_zone_flagged_sfha_is_in_the_sfha(tmp_path, rb) -> None:
    # A polygon with no FLD_ZONE value over the 200 x 200 ft parcel: SFHA_TF 'T' puts it in the SFHA (40,000 sq ft =
    # 0.9183 acres, review), as for a zone value the rulebook does not know; 'F' leaves it undetermined. Before:
    # both not_evaluated, the 'T' one described as "outside the flood map's coverage, or in zone D ...".
    p = parcels(sq(0, 0, 200, 200), sq(1000, 0, 1200, 200))
    fz = zones((sq(-50, -50, 250, 250), None), (sq(950, -50, 1250, 250), None), (sq(5000, 0, 5100, 100), "X", "AREA"))
    fz["SFHA_TF"] = ["T", "F", "F"]
    res = screen(tmp_path, rb, parcels=p, flood_zones=fz)
    assert row(res, "P1")["sfha_acres"] * ACRE == pytest.approx(40_000, abs=0.5)
    assert _statuses(res, "P1") == {"FLD-001": "review", "FLD-002": "pass", "FLD-005": "info",
                                    "FLD-006": "not_evaluated", "FLD-009": "info"}
    assert "a flood zone with no FLD_ZONE value (SFHA_TF = T)" in finding(res, "FLD-006", "P1")["message"]
    assert row(res, "P2")["flood_data"] == "no_data"
    assert set(_statuses(res, "P2").values()) == {"not_evaluated"}


def test_screen_audit_an_sfha_part_under_an_undetermined_polygon_stays_in_the_sfha(tmp_path, rb) -> None:
    # AE and zone D the same 100 x 200 ft polygon over the west half of the 200 x 200 ft parcel, nothing over the
    # east half: the AE part (20,000 sq ft = 0.4591 acres) is in the SFHA (FLD-001 review) although the D over it
    # leaves no part of the parcel determined; flood_data partial (never "no data" with SFHA acres), uncovered
    # the whole 40,000 sq ft = 0.9183 acres.
    fz = zones((sq(-50, -50, 100, 250), "AE"), (sq(-50, -50, 100, 250), "D"), (sq(5000, 0, 5100, 100), "X", "AREA"))
    res = screen(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 200)), flood_zones=fz)
    r = row(res, "P1")
    assert r["flood_data"] == "partial" and r["sfha_acres"] * ACRE == pytest.approx(20_000, abs=0.5)
    assert r["uncovered_acres"] * ACRE == pytest.approx(40_000, abs=0.5)
    assert _statuses(res, "P1") == {"FLD-001": "review", "FLD-002": "not_evaluated", "FLD-005": "info",
                                    "FLD-006": "review", "FLD-009": "info"}
