"""Flood false passes, audit 23: a pass only where the rule examined what the law needs.

- FLD-004 (§ 6-137(d): no BFE on the FIRM, lowest floor at or above a BFE from other data and 2 ft above the
  highest adjacent grade) had read every part of a footprint in the SFHA without a BFE zone as a zone the FIRM
  gives no BFE in. A zone in the SFHA by ``SFHA_TF = T`` alone (AR/AE, AR, a value no list of the rulebook
  knows; FLD-006 leaves it "not classified") may have a BFE of the FIRM: an AR/AE footprint with BFE lines of
  110 ft beside it and a highest adjacent grade of 100 ft passed with a floor at 102.5 ft. Now such a part
  (in none of FLD-006's zones without BFEs, which FLD-004 reads) gives no pass unless a BFE is stated (``--bfe-ft``, which joins the
  requirement); a violation stays and says why.

Layers are small synthetic GeoPackages in EPSG:2261 (tests/common.py); the DEM is flat at 100 ft on 10-ft
cells (within FLD-004's ``max_dem_cell_ft``), so the highest adjacent grade is 100 ft and HAG + 2 = 102 ft.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from affine import Affine
from common import NY_FT, X0, Y0, square
from shapely.geometry import LineString

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import check_site

RB = load_rulebook("vestal")
FOOTPRINT = square(0, 0, 50, 40)
HAG = 100.0


def _dem(path: Path) -> Path:
    """A flat DEM at :data:`HAG` ft, 10-ft cells, x from X0 - 500, y down from Y0 + 1000."""
    with rasterio.open(path, "w", driver="GTiff", width=200, height=150, count=1, dtype="float32", crs=NY_FT,
                       transform=Affine(10, 0, X0 - 500, 0, -10, Y0 + 1000)) as dst:
        dst.write(np.full((150, 200), HAG, dtype="float32"), 1)
    return path


def _zone(geom, zone: str, *, sfha_tf: str = "T", static_bfe: float = -9999.0) -> dict:
    return {"FLD_ZONE": zone, "ZONE_SUBTY": None, "SFHA_TF": sfha_tf, "STATIC_BFE": static_bfe,
            "V_DATUM": "NAVD88", "geometry": geom}


def _bfe_lines() -> gpd.GeoDataFrame:
    """BFE lines of 110 ft either side of the footprint (x = -100 and x = 200), across a river along y = 100."""
    return gpd.GeoDataFrame({"ELEV": [110.0, 110.0], "V_DATUM": ["NAVD88"] * 2},
                            geometry=[LineString([(X0 - 100, Y0 - 300), (X0 - 100, Y0 + 300)]),
                                      LineString([(X0 + 200, Y0 - 300), (X0 + 200, Y0 + 300)])], crs=NY_FT)


def _site(tmp_path: Path, zones: list[dict], rb=None, **kw):
    """FLD-003 and FLD-004 of FOOTPRINT (residential unless ``use``) on ``zones``, with the BFE lines, a river and
    the flat DEM; and the footprints table's row."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    gpkg = tmp_path / "in.gpkg"
    gpd.GeoDataFrame({"id": ["F1"]}, geometry=[FOOTPRINT], crs=NY_FT).to_file(gpkg, layer="footprints")
    gpd.GeoDataFrame(zones, geometry="geometry", crs=NY_FT).to_file(gpkg, layer="flood_zones")
    _bfe_lines().to_file(gpkg, layer="bfe_lines")
    gpd.GeoDataFrame({"name": ["River"]}, geometry=[LineString([(X0 - 500, Y0 + 100), (X0 + 1000, Y0 + 100)])],
                     crs=NY_FT).to_file(gpkg, layer="streams")
    layers = load_layers(gpkg, dem=_dem(tmp_path / "dem.tif"), dem_z_units="ft", primary=("footprints",))
    kw.setdefault("use", "residential")
    res = check_site(layers, rb or RB, **kw)
    f = res.findings
    out = {r: f[(f["rule_id"] == r) & (f["subject_id"] == "F1")].iloc[0] for r in ("FLD-003", "FLD-004", "FLD-006")}
    return out, res.tables["footprints"].iloc[0]


WHOLE = square(-500, -500, 500, 500)


@pytest.mark.parametrize("zone", ["AR/AE", "AR", "ar/ae ", "AR/AO"])
def test_fld004_no_pass_in_an_sfha_zone_no_list_knows(tmp_path, zone) -> None:
    # the footprint wholly in a zone flagged SFHA_TF = T that no zone list holds: FLD-006 says it is not classified,
    # and FLD-004 passed a floor at HAG + 2.5 = 102.5 ft though the BFE lines give 110 ft there
    found, t = _site(tmp_path, [_zone(WHOLE, zone)], lowest_floor_ft=102.5)
    assert t["hag_ft"] == pytest.approx(HAG)
    assert found["FLD-006"]["status"] == "not_evaluated"  # "not classified", as before
    f4 = found["FLD-004"]
    assert f4["status"] == "not_evaluated", f4["message"]
    name = zone.strip().upper()
    assert f"its part in zone {name} lies in the area of special flood hazard (SFHA_TF = T)" in f4["message"]
    assert "whether the FIRM gives a BFE there is not known" in f4["message"]
    assert "give it with --bfe-ft" in f4["message"]
    assert f4["threshold"] == pytest.approx(HAG + 2)


def test_fld004_a_floor_below_hag_plus_2_in_such_a_zone_stays_a_violation_saying_why(tmp_path) -> None:
    found, _ = _site(tmp_path, [_zone(WHOLE, "AR/AE")], lowest_floor_ft=101.0)
    f4 = found["FLD-004"]
    assert f4["status"] == "violation"
    assert "its part in zone AR/AE lies in the area of special flood hazard" in f4["message"]


@pytest.mark.parametrize("floor, expected", [(109.99, "violation"), (110.0, "pass"), (110.01, "pass")])
def test_fld004_a_stated_bfe_joins_the_requirement_and_gives_the_pass_back(tmp_path, floor, expected) -> None:
    # the FIRM panel's BFE for the AR/AE zone given as a BFE from other data (--bfe-ft 110): required max(110, 102),
    # at, just under and just over it
    found, _ = _site(tmp_path, [_zone(WHOLE, "AR/AE")], lowest_floor_ft=floor, bfe_ft=110.0)
    f4 = found["FLD-004"]
    assert f4["status"] == expected, f4["message"]
    assert f4["threshold"] == pytest.approx(110.0)
    assert "lies in the area of special flood hazard (SFHA_TF = T)" not in f4["message"]


@pytest.mark.parametrize("zone", ["A", "AO", "A99", "V", "VO", " a "])
def test_fld004_zones_the_firm_gives_no_bfe_in_still_pass(tmp_path, zone) -> None:
    # § 6-137(d)'s zones (FLD-006's unnumbered_a_zones and no_elevation_zones): HAG + 2 is the whole requirement, a pass as before
    found, _ = _site(tmp_path, [_zone(WHOLE, zone)], lowest_floor_ft=102.5)
    assert found["FLD-004"]["status"] == "pass", found["FLD-004"]["message"]
    assert "SFHA_TF = T" not in found["FLD-004"]["message"]


def test_fld004_part_in_ae_part_in_an_unlisted_zone(tmp_path) -> None:
    # west half AE stating a BFE of 101 ft (FLD-003: a floor of 102.5 meets it), east half AR/AE where the FIRM's
    # BFE is not read: FLD-004 judged that half against HAG + 2 = 102 ft and passed
    zones = [_zone(square(-500, -500, 25, 500), "AE", static_bfe=101.0), _zone(square(25, -500, 500, 500), "AR/AE")]
    found, _ = _site(tmp_path, zones, lowest_floor_ft=102.5)
    # the AE part's BFE is met, but the FIRM may give a higher one on the AR/AE half (round 24: had passed)
    f3 = found["FLD-003"]
    assert f3["status"] == "not_evaluated", f3["message"]
    assert "its part in zone AR/AE lies in the area of special flood hazard" in f3["message"], f3["message"]
    assert "lowest floor 102.5 ft meets the BFE of 101.0 ft" in f3["message"], f3["message"]
    f4 = found["FLD-004"]
    assert f4["status"] == "not_evaluated", f4["message"]
    assert "its part in zone AR/AE lies in the area of special flood hazard" in f4["message"]
    # the same beside zone A: a pass, as before
    zones[1] = _zone(square(25, -500, 500, 500), "A")
    found, _ = _site(tmp_path / "a", zones, lowest_floor_ft=102.5)
    assert found["FLD-004"]["status"] == "pass", found["FLD-004"]["message"]
    assert found["FLD-003"]["status"] == "pass", found["FLD-003"]["message"]
    # the AR/AE half again with a BFE stated (--bfe-ft 101.5): FLD-003 on max(AE's 101, 101.5) = 101.5, met by 102.5
    zones[1] = _zone(square(25, -500, 500, 500), "AR/AE")
    found, _ = _site(tmp_path / "stated", zones, lowest_floor_ft=102.5, bfe_ft=101.5)
    assert found["FLD-003"]["status"] == "pass", found["FLD-003"]["message"]


def test_fld004_a_blank_zone_flagged_sfha_is_named(tmp_path) -> None:
    found, _ = _site(tmp_path, [_zone(WHOLE, "")], lowest_floor_ft=102.5)
    f4 = found["FLD-004"]
    assert f4["status"] == "not_evaluated", f4["message"]
    assert "its part in zone (no FLD_ZONE value)" in f4["message"]


def test_fld004_reads_its_zones_without_bfes_from_fld006(tmp_path) -> None:
    # one list, FLD-006's: FLD-004 keeps no copy of it (a copy had to be kept alike by hand). A town whose FLD-006
    # lists AR/AE among the zones without elevations has FLD-004 read an AR/AE part as § 6-137(d)'s: HAG + 2 passes
    assert "no_bfe_zones" not in RB["FLD-004"].params
    p = tmp_path / "town.yaml"
    p.write_text("extends: vestal\nrules:\n  - id: FLD-006\n    params:\n"
                 "      no_elevation_zones: [AO, A99, V, VO, AR/AE]\n", "utf-8")
    town = load_rulebook(p)
    found, _ = _site(tmp_path / "town", [_zone(WHOLE, "AR/AE")], rb=town, lowest_floor_ft=102.5)
    assert found["FLD-004"]["status"] == "pass", found["FLD-004"]["message"]
    found, _ = _site(tmp_path / "shipped", [_zone(WHOLE, "AR/AE")], lowest_floor_ft=102.5)
    assert found["FLD-004"]["status"] == "not_evaluated"
    assert "FLD-006's unnumbered_a_zones and no_elevation_zones: A, A99, AO, V, VO" in found["FLD-004"]["message"]
    # and the other way: a town dropping A99 from FLD-006 gives an A99 part no pass
    p.write_text("extends: vestal\nrules:\n  - id: FLD-006\n    params:\n"
                 "      no_elevation_zones: [AO, V, VO]\n", "utf-8")
    found, _ = _site(tmp_path / "a99", [_zone(WHOLE, "A99")], rb=load_rulebook(p), lowest_floor_ft=102.5)
    assert found["FLD-004"]["status"] == "not_evaluated", found["FLD-004"]["message"]


# ------------------------------------------------------------------------------------------
# a BFE stated as 0 (--bfe-ft 0, an elevation certificate's field left 0) is no BFE


def _upstream_of_the_last_line(tmp_path: Path, **kw):
    """A footprint (x 950..1050) in AE across the last BFE line (810 ft at x = 1000; 800 ft at x = 0, along a
    river at y = 100): its BFE is 810 ft where known, and not known on its part upstream of x = 1000, so 810 ft
    is a lower bound (a floor at or above it not_evaluated, never a pass)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    gpkg = tmp_path / "in.gpkg"
    gpd.GeoDataFrame({"id": ["F1"]}, geometry=[square(950, 0, 1050, 50)], crs=NY_FT).to_file(gpkg, layer="footprints")
    gpd.GeoDataFrame([_zone(square(-500, -500, 3000, 500), "AE")], geometry="geometry",
                     crs=NY_FT).to_file(gpkg, layer="flood_zones")
    gpd.GeoDataFrame({"ELEV": [800.0, 810.0], "V_DATUM": ["NAVD88"] * 2},
                     geometry=[LineString([(X0, Y0 - 200), (X0, Y0 + 400)]),
                               LineString([(X0 + 1000, Y0 - 200), (X0 + 1000, Y0 + 400)])],
                     crs=NY_FT).to_file(gpkg, layer="bfe_lines")
    gpd.GeoDataFrame({"name": ["River"]}, geometry=[LineString([(X0 - 500, Y0 + 100), (X0 + 3000, Y0 + 100)])],
                     crs=NY_FT).to_file(gpkg, layer="streams")
    res = check_site(load_layers(gpkg, primary=("footprints",)), RB, **kw)
    f = res.findings
    return {**{r: f[(f["rule_id"] == r) & (f["subject_id"] == "F1")].iloc[0] for r in ("FLD-003", "FLD-004")},
            "table": res.tables["footprints"].set_index("footprint_id").loc["F1"]}


@pytest.mark.parametrize("bfe_ft", [None, 0.0, -0.0])
def test_a_bfe_stated_as_0_is_none_and_the_lower_bound_stays_not_evaluated(tmp_path, bfe_ft) -> None:
    # before: --bfe-ft 0 read as a BFE of 0 ft from other data for the part without one, under the FIRM's 810 ft:
    # the 810 ft was then the BFE of the whole footprint and a floor of 811 ft passed FLD-003
    found = _upstream_of_the_last_line(tmp_path, use="residential", lowest_floor_ft=811.0, bfe_ft=bfe_ft)
    f3 = found["FLD-003"]
    assert f3["status"] == "not_evaluated", f3["message"]
    assert "part of the footprint has no BFE, so the true BFE may be higher" in f3["message"]
    assert ("(--bfe-ft 0) is read as none stated: no BFE is 0 ft" in f3["message"]) == (bfe_ft is not None)
    # a floor below the BFE known is a violation all the same
    low = _upstream_of_the_last_line(tmp_path / "low", use="residential", lowest_floor_ft=809.0, bfe_ft=bfe_ft)
    assert low["FLD-003"]["status"] == "violation"


def test_the_footprints_table_reads_a_bfe_stated_as_0_as_the_rules_do(tmp_path) -> None:
    # before: the table showed the FIRM's 810 ft "used instead of the lower BFE stated by the user (0 ft)"
    # while FLD-003 and FLD-004 read the 0 as no BFE stated; now it shows what it shows with none stated
    zero = _upstream_of_the_last_line(tmp_path / "z", use="residential", lowest_floor_ft=811.0, bfe_ft=0.0)["table"]
    none = _upstream_of_the_last_line(tmp_path / "n", use="residential", lowest_floor_ft=811.0)["table"]
    for col in ("bfe_ft", "bfe_method", "bfe_datum", "bfe_note"):
        assert str(zero[col]) == str(none[col]), col
    assert "stated by the user" not in str(zero["bfe_note"])
    # a BFE stated other than 0 is still shown where the rules use it
    used = _upstream_of_the_last_line(tmp_path / "u", use="residential", lowest_floor_ft=811.0, bfe_ft=812.0)["table"]
    assert used["bfe_ft"] == pytest.approx(812.0) and "stated by the user" in str(used["bfe_note"])


def test_a_bfe_stated_as_0_for_a_manufactured_home_is_none(tmp_path) -> None:
    # FLD-004 judges a manufactured home against the BFE (§ 6-136(b)(2)): the same lower bound, the same 0
    found = _upstream_of_the_last_line(tmp_path, use="manufactured", lowest_floor_ft=811.0, bfe_ft=0.0)
    f4 = found["FLD-004"]
    assert f4["status"] == "not_evaluated", f4["message"]
    assert "(--bfe-ft 0) is read as none stated" in f4["message"]


@pytest.mark.parametrize("bfe_ft, floor, expected", [(812.0, 811.99, "violation"), (812.0, 812.0, "pass"),
                                                     (812.0, 812.01, "pass"), (805.0, 811.0, "pass")])
def test_a_bfe_stated_other_than_0_still_stands_in_for_the_part_without_one(tmp_path, bfe_ft, floor,
                                                                            expected) -> None:
    # unchanged: a stated BFE above the FIRM's is the requirement (at, just under, just over it); one below it
    # leaves the FIRM's 810 ft, now known on the whole footprint
    found = _upstream_of_the_last_line(tmp_path, use="residential", lowest_floor_ft=floor, bfe_ft=bfe_ft)
    assert found["FLD-003"]["status"] == expected, found["FLD-003"]["message"]
    assert "read as none stated" not in found["FLD-003"]["message"]


def test_a_bfe_stated_as_0_in_zone_a_leaves_hag_plus_2(tmp_path) -> None:
    # zone A: max(0, HAG + 2) was HAG + 2 already; the requirement and the pass stay, the note says how 0 was read
    found, _ = _site(tmp_path, [_zone(WHOLE, "A")], lowest_floor_ft=102.5, bfe_ft=0.0)
    f4 = found["FLD-004"]
    assert f4["status"] == "pass" and f4["threshold"] == pytest.approx(HAG + 2)
    assert "BFE from other data" not in f4["message"] and "(--bfe-ft 0) is read as none stated" in f4["message"]


# ------------------------------------------------------------------------------------------
# a BFE stated far below the ground beside the walls (in metres, another datum's) is no BFE of the site


def _below_grade_limit() -> float:
    return RB["FLD-004"].t("max_stated_bfe_below_grade_ft")


@pytest.mark.parametrize("delta, expected", [(-0.01, "pass"), (0.0, "pass"), (0.01, "not_evaluated")])
def test_fld004_a_stated_bfe_at_under_and_over_the_limit_below_grade(tmp_path, delta, expected) -> None:
    # zone A, HAG 100 ft: a BFE from other data max_stated_bfe_below_grade_ft (20) below it is within the limit
    # (an approximate zone A can leave the ground that far above its BFE); 0.01 ft farther it is no BFE of the site
    bfe = HAG - _below_grade_limit() - delta
    found, _ = _site(tmp_path, [_zone(WHOLE, "A")], lowest_floor_ft=102.5, bfe_ft=bfe)
    f4 = found["FLD-004"]
    assert f4["status"] == expected, f4["message"]
    assert f4["threshold"] == pytest.approx(HAG + 2)
    assert ("(max_stated_bfe_below_grade_ft)" in f4["message"]) == (expected != "pass")


def test_fld004_a_bfe_given_in_metres_gives_no_pass(tmp_path) -> None:
    # the site's BFE of 104 ft typed as 31.7 (metres): max(31.7, HAG + 2 = 102) had passed a floor of 102.5 ft,
    # 1.5 ft under the base flood
    found, _ = _site(tmp_path, [_zone(WHOLE, "A")], lowest_floor_ft=102.5, bfe_ft=31.7)
    f4 = found["FLD-004"]
    assert f4["status"] == "not_evaluated", f4["message"]
    assert "the BFE given, 31.7 ft (--bfe-ft), is 68.3 ft below the highest adjacent grade of 100.0 ft" in f4["message"]
    assert "is it in metres, or another datum's?" in f4["message"]
    # a floor below HAG + 2 fails whatever the BFE: still a violation, saying the same
    low, _ = _site(tmp_path / "low", [_zone(WHOLE, "A")], lowest_floor_ft=101.5, bfe_ft=31.7)
    assert low["FLD-004"]["status"] == "violation" and "is it in metres" in low["FLD-004"]["message"]
    # in feet: max(104, 102) = 104
    ok, _ = _site(tmp_path / "ft", [_zone(WHOLE, "A")], lowest_floor_ft=104.0, bfe_ft=104.0)
    assert ok["FLD-004"]["status"] == "pass" and ok["FLD-004"]["threshold"] == pytest.approx(104.0)


def test_fld004_the_below_grade_limit_follows_the_rulebook(tmp_path) -> None:
    rb = tmp_path / "strict.yaml"
    rb.write_text("extends: vestal\nrules:\n  - id: FLD-004\n    thresholds:\n      max_stated_bfe_below_grade_ft: 5\n",
                  "utf-8")
    gpkg_dir = tmp_path / "run"
    found, _ = _site(gpkg_dir, [_zone(WHOLE, "A")], lowest_floor_ft=102.5, bfe_ft=94.0)
    assert found["FLD-004"]["status"] == "pass"  # 6 ft below, within vestal's 20
    layers = load_layers(gpkg_dir / "in.gpkg", dem=gpkg_dir / "dem.tif", dem_z_units="ft", primary=("footprints",))
    res = check_site(layers, load_rulebook(rb), use="residential", lowest_floor_ft=102.5, bfe_ft=94.0)
    f = res.findings
    row = f[(f["rule_id"] == "FLD-004") & (f["subject_id"] == "F1")].iloc[0]
    assert row["status"] == "not_evaluated" and "more than the 5 ft (max_stated_bfe_below_grade_ft)" in row["message"]
