"""Tests for geoconstraints.stormwater (SWP-001..008) and the ``stormwater`` command.

Geometry is built from squares of known acreage: a square of side sqrt(43,560 * k) ft is exactly
k acres (1 acre = 43,560 sq ft). Overlaps are chosen so the union is hand arithmetic, written
beside each case. Areas are compared with a tolerance of 1e-6 acres (about 0.04 sq ft, floating
point only). Layers are written to a GeoPackage in tmp_path (EPSG:2261, NY Central, US ft) near
Vestal and loaded with load_layers, the way a user's files are.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from common import MUNCY_DEM
from common import one_finding as finding
from shapely.geometry import LineString, Point, box

from geoconstraints.cli import main
from geoconstraints.commands import check_stormwater
from geoconstraints.errors import FieldError, InputError, LayerReadError, RulebookError
from geoconstraints.geometry.phasing import (
    harvest_footprints,
    inspection_schedule,
    match_inspections,
    storm_events,
)
from geoconstraints.io.layers import load_layers
from geoconstraints.io.tables import read_inspection_log, read_rainfall
from geoconstraints.rulebook.loader import load_rulebook

CRS = "EPSG:2261"
X0, Y0 = 965_000.0, 760_000.0  # Vestal, NY in EPSG:2261 (ft)
SQFT = 43_560.0
TOL = 1e-6  # acres
ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"


def side(acres: float) -> float:
    """Side (ft) of a square of exactly ``acres``: sqrt(43,560 * acres)."""
    return math.sqrt(SQFT * acres)


def square(acres: float, dx: float = 0.0, dy: float = 0.0):
    s = side(acres)
    return box(X0 + dx, Y0 + dy, X0 + dx + s, Y0 + dy + s)


def write_layers(tmp_path: Path, disturbance=None, **others) -> Path:
    """Write role layers to tmp_path/plan.gpkg. ``disturbance`` is a list of dicts with geometry."""
    path = tmp_path / "plan.gpkg"
    path.unlink(missing_ok=True)  # a fresh file each time (to_file adds layers to an existing one)
    layers = {"disturbance": disturbance, **others}
    for role, rows in layers.items():
        if rows is None:
            continue
        gdf = gpd.GeoDataFrame(pd.DataFrame(rows).drop(columns="geometry"),
                               geometry=[r["geometry"] for r in rows], crs=CRS)
        gdf.to_file(path, layer=role, driver="GPKG")
    return path


def run(tmp_path: Path, disturbance=None, rulebook: str = "vestal", **kw) -> object:
    others = {k: kw.pop(k) for k in list(kw) if k in ("landings", "haul_roads", "impaired_waters", "harvest_area")}
    path = write_layers(tmp_path, disturbance, **others)
    return check_stormwater(load_layers(path, primary=("disturbance",)), load_rulebook(rulebook), **kw)


def dpoly(fid: str, geom, start=None, stab=None, use=None) -> dict:
    return {"id": fid, "start": start, "stabilized": stab, "use": use, "geometry": geom}


def rain_frame(start: str, values: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"date": pd.date_range(start, periods=len(values), freq="D").strftime("%Y-%m-%d"),
                         "precip_in": values})


# --------------------------------------------------------------------------------------------
# disturbed acreage: SWP-001, SWP-003, SWP-004
# --------------------------------------------------------------------------------------------

def test_union_of_overlapping_squares_is_not_double_counted(tmp_path):
    # Two 4-acre squares (side a = sqrt(4 * 43,560) = 417.42 ft), the second shifted a/2 east:
    # overlap = a/2 * a = 2 acres, union = 4 + 4 - 2 = 6 acres (the sum would be 8).
    a = side(4)
    res = run(tmp_path, [dpoly("A", square(4)), dpoly("B", square(4, dx=a / 2))])
    f1, f3, f4 = finding(res, "SWP-001"), finding(res, "SWP-003"), finding(res, "SWP-004")
    assert f1["measured"] == pytest.approx(6.0, abs=TOL)
    assert f1["status"] == "review"  # >= 1 acre: SWPPP required
    assert f3["status"] == "review" and f3["measured"] == pytest.approx(6.0, abs=TOL)  # Condition B: 6 >= 5
    assert f4["status"] == "pass" and "Condition B applies instead" in f4["message"]
    assert res.derived["disturbed_area"]["acres"].iloc[0] == pytest.approx(6.0, abs=TOL)


@pytest.mark.parametrize("acres, swp001, swp003, swp004", [
    (0.999, "pass", "pass", "pass"),      # under 1 acre, no common plan
    (1.0, "review", "pass", "review"),    # exactly 1 acre: "equal to or greater than one acre"; C is 1 to 5
    (4.999, "review", "pass", "review"),
    (5.0, "review", "review", "pass"),    # exactly 5 acres: Condition B ("five or more"), not C
])
def test_acreage_thresholds_at_the_bounds(tmp_path, acres, swp001, swp003, swp004):
    res = run(tmp_path, [dpoly("A", square(acres), use="commercial")], larger_common_plan=False)
    assert finding(res, "SWP-001")["status"] == swp001
    assert finding(res, "SWP-003")["status"] == swp003
    assert finding(res, "SWP-004")["status"] == swp004
    assert finding(res, "SWP-001")["measured"] == pytest.approx(acres, abs=TOL)


def test_larger_common_plan_vestal_any_part_vs_lockport_aggregate(tmp_path):
    d = [dpoly("A", square(0.5))]
    # Vestal: any part of a larger common plan is covered.
    v = run(tmp_path, d, larger_common_plan=True)
    assert finding(v, "SWP-001")["status"] == "review"
    assert "any_part" in finding(v, "SWP-001")["message"]
    # Lockport: covered only when the plan disturbs 1 acre or more in the aggregate.
    lk_small = run(tmp_path, d, rulebook="lockport", larger_common_plan=0.8)
    assert finding(lk_small, "SWP-001")["status"] == "pass"
    lk_big = run(tmp_path, d, rulebook="lockport", larger_common_plan=1.0)
    assert finding(lk_big, "SWP-001")["status"] == "review"
    lk_unknown = run(tmp_path, d, rulebook="lockport", larger_common_plan=True)
    assert finding(lk_unknown, "SWP-001")["status"] == "review"
    assert "confirm" in finding(lk_unknown, "SWP-001")["message"]
    # stated not part of a common plan: under 1 acre passes; not stated: nothing is assumed
    stated = run(tmp_path, d, larger_common_plan=False)
    assert finding(stated, "SWP-001")["status"] == "pass"
    none = run(tmp_path, d)
    f = finding(none, "SWP-001")
    assert f["status"] == "not_evaluated" and "--larger-common-plan" in f["message"]
    # at 1 acre or more the statement does not matter
    assert finding(run(tmp_path, [dpoly("A", square(1.0))]), "SWP-001")["status"] == "review"


def test_condition_c_single_family_is_pass_with_reason(tmp_path):
    # 2 acres, single-family: Condition C excludes it.
    res = run(tmp_path, [dpoly("H1", square(2), use="single_family")])
    f = finding(res, "SWP-004")
    assert f["status"] == "pass"
    assert "single-family" in f["message"] and "single_family" in f["message"]
    # the same 2 acres as a commercial use: Condition C applies
    res = run(tmp_path, [dpoly("H1", square(2), use="commercial")])
    assert finding(res, "SWP-004")["status"] == "review"
    # mixed: one polygon agricultural, one commercial -> not excluded
    res = run(tmp_path, [dpoly("F", square(1)), dpoly("G", square(1, dx=1000), use="agricultural")])
    assert finding(res, "SWP-004")["status"] == "review"


def test_landings_and_haul_roads_count_toward_disturbance(tmp_path):
    # Disturbance 0.6 acre (side s = 161.66 ft). A straight haul road starts on its east edge and
    # runs 1,000 ft east, footprint 1,000 x 12 ft (rulebook haul_road_width_ft) = 12,000 sq ft,
    # touching the square along an edge (no overlap); a 100 x 100 ft landing polygon touches the
    # road's far end: 10,000 sq ft. Total = 0.6 + 22,000 / 43,560 = 0.6 + 0.505051 = 1.105051 acres.
    s = side(0.6)
    d = [dpoly("A", square(0.6))]
    road = [{"id": "R1", "geometry": LineString([(X0 + s, Y0 + 10), (X0 + s + 1000, Y0 + 10)])}]
    landing = [{"id": "L1", "geometry": box(X0 + s + 1000, Y0, X0 + s + 1100, Y0 + 100)}]
    res = run(tmp_path, d, haul_roads=road, landings=landing)
    f = finding(res, "SWP-001")
    assert f["subject_id"] == "project"
    assert f["measured"] == pytest.approx(0.6 + 22_000 / SQFT, abs=TOL)
    assert f["status"] == "review"
    assert "1,000 ft of haul road x 12 ft" in f["message"] and "1 landing(s)" in f["message"]
    fp = res.derived["harvest_footprints"].set_index("feature_id")
    assert fp.loc["R1", "area_sqft"] == pytest.approx(12_000, abs=1e-6)
    assert fp.loc["L1", "area_sqft"] == pytest.approx(10_000, abs=1e-6)
    # without the harvest plan the same disturbance is under 1 acre
    assert finding(run(tmp_path, d, larger_common_plan=False), "SWP-001")["status"] == "pass"


def test_unconnected_harvest_is_its_own_activity(tmp_path):
    # The same 0.6 acre and a harvest 2,000 ft away (road 1,000 ft x 12 ft = 12,000 sq ft, landing
    # point = default_landing_area_sqft 10,000 sq ft): two subjects, neither 1 acre:
    # project 0.6 acre; harvest plan 22,000 / 43,560 = 0.505051 acre.
    d = [dpoly("A", square(0.6))]
    road = [{"id": "R1", "geometry": LineString([(X0 + 2000, Y0), (X0 + 3000, Y0)])}]
    landing = [{"id": "L1", "geometry": Point(X0 + 2000, Y0 + 500)}]
    res = run(tmp_path, d, haul_roads=road, landings=landing, larger_common_plan=False)
    proj, harv = finding(res, "SWP-001", "project"), finding(res, "SWP-001", "landings and haul roads")
    assert proj["measured"] == pytest.approx(0.6, abs=TOL) and proj["status"] == "pass"
    # the landing is a point: at max_point_landing_area_sqft (43,560) the plan would be 12,000 + 43,560 sq ft,
    # over 1 acre, so its pass was no promise (tests/test_stormwater_audit23.py); the acreage stays as counted
    assert harv["measured"] == pytest.approx(22_000 / SQFT, abs=TOL) and harv["status"] == "not_evaluated"
    assert "landing L1 is mapped as a point" in harv["message"] and "map the landing's extent" in harv["message"]
    assert harv["subject_layer"] == "harvest plan" and "not connected" in harv["message"]
    # a harvest alone (no disturbance layer) is measured the same way
    alone = run(tmp_path, None, haul_roads=road, landings=landing)
    assert finding(alone, "SWP-001")["measured"] == pytest.approx(22_000 / SQFT, abs=TOL)


def test_haul_road_overlapping_disturbance_counted_once(tmp_path):
    # A 1-acre square (side s = 208.71 ft) and a 12-ft road running along its full width inside it:
    # the road footprint (s x 12) lies within the square, so the union stays 1 acre.
    s = side(1)
    road = [{"id": "R1", "geometry": LineString([(X0, Y0 + 100), (X0 + s, Y0 + 100)])}]
    res = run(tmp_path, [dpoly("A", square(1))], haul_roads=road)
    assert finding(res, "SWP-001")["measured"] == pytest.approx(1.0, abs=TOL)


def test_no_disturbance_is_not_evaluated(tmp_path):
    res = run(tmp_path, None, impaired_waters=[{"id": "W", "geometry": LineString([(X0, Y0), (X0 + 10, Y0)])}])
    for rid in ("SWP-001", "SWP-002", "SWP-003", "SWP-004", "SWP-005"):
        assert finding(res, rid)["status"] == "not_evaluated"


# --------------------------------------------------------------------------------------------
# SWP-002 Condition A
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("gap, status", [(400.0, "review"), (500.0, "review"), (501.0, "not_evaluated")])
def test_condition_a_proximity_screen(tmp_path, gap, status):
    # impaired stream parallel to the square's east edge, `gap` ft away; screening distance 500 ft.
    # Beyond it, without a DEM, discharge is not analysed: never pass.
    s = side(2)
    water = [{"id": "W1", "name": "Choconut Creek", "geometry":
              LineString([(X0 + s + gap, Y0 - 100), (X0 + s + gap, Y0 + s + 100)])}]
    res = run(tmp_path, [dpoly("A", square(2))], impaired_waters=water)
    f = finding(res, "SWP-002")
    assert f["status"] == status
    assert f["measured"] == pytest.approx(gap, abs=1e-6)
    assert "Choconut Creek" in f["message"]
    assert ("proximity stands in for discharge" if status == "review" else "discharge not analysed") in f["message"]


def test_condition_a_without_impaired_waters_is_not_evaluated(tmp_path):
    f = finding(run(tmp_path, [dpoly("A", square(2))]), "SWP-002")
    assert f["status"] == "not_evaluated" and "impaired_waters" in f["message"]


# --------------------------------------------------------------------------------------------
# SWP-005 phasing
# --------------------------------------------------------------------------------------------

def phased_plan() -> list[dict]:
    """P1 3 acres [05-01, 06-01); P2 3 acres, disjoint, [05-15, 06-15); P3 2 acres overlapping P2
    by exactly 1 acre, [06-01, 07-01). P2 has side a = sqrt(3 * 43,560) = 361.50 ft; P3 is an a-tall
    rectangle 2 * 43,560 / a wide whose first 43,560 / a ft lie inside P2."""
    a = side(3)
    p2x = 1000.0
    wo, w3 = SQFT / a, 2 * SQFT / a
    p3 = box(X0 + p2x + a - wo, Y0, X0 + p2x + a - wo + w3, Y0 + a)
    return [dpoly("P1", square(3), "2024-05-01", "2024-06-01", "commercial"),
            dpoly("P2", square(3, dx=p2x), "2024-05-15", "2024-06-15", "commercial"),
            dpoly("P3", p3, "2024-06-01", "2024-07-01", "commercial")]


def test_phasing_peak_by_hand(tmp_path):
    # Disturbed on [start, stabilized):
    #   05-01..05-14  P1          3 acres
    #   05-15..05-31  P1 + P2     3 + 3 = 6 acres   <- peak, over 5
    #   06-01..06-14  P2 + P3     3 + 2 - 1 (overlap) = 4 acres (P1 stabilised on 06-01)
    #   06-15..06-30  P3          2 acres
    res = run(tmp_path, phased_plan())
    tl = res.tables["disturbance_timeline"]
    assert list(tl["date_from"].dt.strftime("%m-%d")) == ["05-01", "05-15", "06-01", "06-15"]
    assert list(tl["date_to"].dt.strftime("%m-%d")) == ["05-14", "05-31", "06-14", "06-30"]
    assert list(tl["days"]) == [14, 17, 14, 16]
    np.testing.assert_allclose(tl["disturbed_acres"], [3, 6, 4, 2], atol=TOL)
    assert list(tl["active_ids"]) == ["P1", "P1, P2", "P2, P3", "P3"]
    assert list(tl["peak"]) == [False, True, False, False]
    f = finding(res, "SWP-005")
    assert f["status"] == "violation"
    assert f["measured"] == pytest.approx(6.0, abs=TOL) and f["threshold"] == 5
    assert "2024-05-15 to 2024-05-31" in f["message"]
    assert res.derived["peak_disturbance"]["acres"].iloc[0] == pytest.approx(6.0, abs=TOL)
    # the whole project disturbs 3 + 3 + 2 - 1 = 7 acres in the course of the project
    assert finding(res, "SWP-003")["measured"] == pytest.approx(7.0, abs=TOL)


def test_phasing_with_approved_swppp_is_info(tmp_path):
    f = finding(run(tmp_path, phased_plan(), approved_swppp=True), "SWP-005")
    assert f["status"] == "info" and "approved SWPPP" in f["message"]
    assert f["measured"] == pytest.approx(6.0, abs=TOL)


def test_phasing_overlap_in_time_and_space_counted_once_and_limit_is_inclusive(tmp_path):
    # Two 4-acre squares overlapping by 3 acres (second shifted a/4 east: overlap 3/4 * 4 = 3 acres),
    # both disturbed at once: union 4 + 4 - 3 = 5 acres = the limit ("not more than 5") -> pass.
    a = side(4)
    d = [dpoly("A", square(4), "2024-05-01", "2024-05-20"), dpoly("B", square(4, dx=a / 4), "2024-05-10", "2024-05-30")]
    res = run(tmp_path, d)
    f = finding(res, "SWP-005")
    assert f["measured"] == pytest.approx(5.0, abs=TOL)
    assert f["status"] == "pass"


def test_stabilized_day_is_not_disturbed(tmp_path):
    # A [05-01, 05-10) and B [05-10, 05-20), both 3 acres, disjoint: they never overlap in time,
    # so the peak is 3 acres, not 6.
    d = [dpoly("A", square(3), "2024-05-01", "2024-05-10"), dpoly("B", square(3, dx=1000), "2024-05-10", "2024-05-20")]
    f = finding(run(tmp_path, d), "SWP-005")
    assert f["measured"] == pytest.approx(3.0, abs=TOL) and f["status"] == "pass"


def test_gap_between_phases_is_a_zero_row(tmp_path):
    d = [dpoly("A", square(1), "2024-05-01", "2024-05-05"), dpoly("B", square(1, dx=1000), "2024-05-10", "2024-05-12")]
    tl = run(tmp_path, d).tables["disturbance_timeline"]
    assert list(tl["active_ids"]) == ["A", "", "B"]
    np.testing.assert_allclose(tl["disturbed_acres"], [1, 0, 1], atol=TOL)


def test_undated_polygon_makes_phasing_not_evaluated(tmp_path):
    d = [dpoly("A", square(1), "2024-05-01", "2024-05-05"), dpoly("B", square(1, dx=1000), "2024-05-02", None)]
    res = run(tmp_path, d)
    f = finding(res, "SWP-005")
    assert f["status"] == "not_evaluated" and "B" in f["message"]
    assert "disturbance_timeline" not in res.tables
    assert finding(res, "SWP-007", "schedule")["status"] == "not_evaluated"


def test_date_typed_fields_and_us_style_dates(tmp_path):
    # The same phasing as test_stabilized_day_is_not_disturbed, once with GeoPackage DATE fields and
    # once with M/D/YYYY text: peak 3 acres either way.
    d = [dpoly("A", square(3), pd.Timestamp("2024-05-01"), pd.Timestamp("2024-05-10")),
         dpoly("B", square(3, dx=1000), pd.Timestamp("2024-05-10"), pd.Timestamp("2024-05-20"))]
    f = finding(run(tmp_path, d), "SWP-005")
    assert f["measured"] == pytest.approx(3.0, abs=TOL) and "2024-05-01 to 2024-05-19" in f["message"]
    d = [dpoly("A", square(3), "5/1/2024", "5/10/2024"), dpoly("B", square(3, dx=1000), "5/10/2024", "5/20/2024")]
    tl = run(tmp_path, d).tables["disturbance_timeline"]
    assert list(tl["date_from"].dt.strftime("%Y-%m-%d")) == ["2024-05-01", "2024-05-10"]


def test_reversed_dates_are_an_input_error_naming_the_polygon(tmp_path):
    d = [dpoly("A", square(1), "2024-05-01", "2024-05-05"), dpoly("B7", square(1, dx=1000), "2024-06-10", "2024-06-01")]
    with pytest.raises(InputError, match=r"B7 \(start 2024-06-10, stabilized 2024-06-01\)"):
        run(tmp_path, d)


def test_stabilized_on_the_start_date_is_an_input_error_not_a_polygon_left_out_of_the_peak(tmp_path):
    # A polygon counts as disturbed on the days start <= day < stabilized, so one stabilized on its
    # start date was disturbed on no day and dropped out of SWP-005: A and B, two disjoint 4-acre
    # squares both starting 2024-05-01, gave a peak of 4 acres (pass) with A left out, although 8
    # acres are disturbed on 05-01 ("not more than five acres ... at any one time"); refused instead.
    a = side(4)
    d = [dpoly("A", square(4), "2024-05-01", "2024-05-01"), dpoly("B", square(4, dx=a + 100), "2024-05-01", "2024-06-01")]
    with pytest.raises(InputError, match=r"^layer disturbance: stabilized on the start date for polygons A "
                                         r"\(2024-05-01\).*Give the first day it is stabilised"):
        run(tmp_path, d)
    # a landing whose filled-in stabilisation (the project's last, 06-01) falls on its own start
    # was left out the same way: 4 + 2 acres touching, peak 4 (pass); refused naming it
    landing = [{"id": "L1", "start": "2024-06-01", "stabilized": None, "geometry": square(2, dx=a)}]
    with pytest.raises(InputError, match=r"^landings / haul roads landing L1: a stabilized date on or before"):
        run(tmp_path, d[1:], landings=landing)
    # one day apart: disturbed on its start day, counted (4 + 4 = 8 acres on 05-01)
    d[0]["stabilized"] = "2024-05-02"
    f = finding(run(tmp_path, d), "SWP-005")
    assert f["status"] == "violation" and f["measured"] == pytest.approx(8.0, abs=TOL)
    assert "2024-05-01 to 2024-05-01" in f["message"]


def test_a_landing_missing_one_date_is_described_by_the_date_filled_in(tmp_path):
    # Disturbance A (4 acres) 05-01..05-31. Landing L1 (2 acres, touching) given a start of 05-10 but no
    # stabilized date: only its end is filled in (the project's last stabilisation, 05-31), so it counts
    # 05-10..05-30; the finding said it was "assumed disturbed for the whole project, 2024-05-01 to
    # 2024-05-31" although it was not counted before 05-10.
    a = side(4)
    d = [dpoly("A", square(4), "2024-05-01", "2024-05-31")]
    landing = [{"id": "L1", "start": "2024-05-10", "stabilized": None, "geometry": square(2, dx=a)}]
    f = finding(run(tmp_path, d, landings=landing), "SWP-005")
    assert f["measured"] == pytest.approx(6.0, abs=TOL) and "at its peak from 2024-05-10 to 2024-05-30" in f["message"]
    assert "whole project" not in f["message"]
    assert ("landing L1 carries a start date but no stabilized date and is assumed disturbed from its start until "
            "the project's last stabilisation, 2024-05-31 (give its stabilized date to narrow this)") in f["message"]
    # stabilized 05-20 but no start: from the project's first start (05-01) until 05-20
    landing[0].update(start=None, stabilized="2024-05-20")
    f = finding(run(tmp_path, d, landings=landing), "SWP-005")
    assert "at its peak from 2024-05-01 to 2024-05-19" in f["message"] and "whole project" not in f["message"]
    assert ("landing L1 carries a stabilized date but no start date and is assumed disturbed from the project's "
            "first start, 2024-05-01, until its stabilisation") in f["message"]
    # neither date: the whole project, as before
    landing[0].update(stabilized=None)
    f = finding(run(tmp_path, d, landings=landing), "SWP-005")
    assert ("landing L1 carries no start / stabilized date and is assumed disturbed for the whole project, "
            "2024-05-01 to 2024-05-31") in f["message"]


def test_unparseable_date_is_an_input_error(tmp_path):
    d = [dpoly("A", square(1), "2024-05-01", "next spring")]
    with pytest.raises(InputError, match="stabilized.*A.*next spring"):
        run(tmp_path, d)


@pytest.mark.parametrize(("start", "stab", "refused"), [
    ("1899-12-31", "1900-01-10", "start"),  # just under the first year
    ("1900-01-01", "1900-01-10", None),  # at it
    ("1900-01-02", "1900-01-10", None),
    ("2100-12-20", "2100-12-30", None),
    ("2100-12-20", "2100-12-31", None),  # at the last day
    ("2100-12-20", "2101-01-01", "stabilized"),  # just over
    ("2024-05-01", "2999-01-01", "stabilized"),  # was OutOfBoundsDatetime, "could not complete"
    ("0001-01-01", "2024-05-01", "start"),
    (pd.Timestamp("2024-05-01"), pd.Timestamp("2999-01-01"), "stabilized"),  # a GeoPackage DATETIME field
])
def test_dates_outside_1900_to_2100_refused_naming_layer_polygon_field(tmp_path, start, stab, refused):
    d = [dpoly("A", square(1), "2024-05-01", "2024-05-05"), dpoly("B7", square(1, dx=1000), start, stab)]
    if refused is None:
        d = d[1:]
        tl = run(tmp_path, d).tables["disturbance_timeline"]
        assert tl["date_from"].iloc[0] == pd.Timestamp(start)
        assert tl["date_to"].iloc[-1] == pd.Timestamp(stab) - pd.Timedelta(days=1)
        return
    value = start if refused == "start" else stab
    shown = value if isinstance(value, str) else f"{value:%Y-%m-%d}( 00:00:00)?"  # as the loader gives it
    with pytest.raises(InputError, match=rf"^layer disturbance: field {refused} of polygon B7: date '{shown}' is "
                                         r"outside the years 1900 to 2100: correct the date"):
        run(tmp_path, d)


@pytest.mark.parametrize(("start", "stab", "pattern"), [
    # no second number over 12 in the layer: 5/1/2024 could be May 1 or 5 January
    (["5/1/2024", "5/2/2024"], ["5/3/2024", "5/4/2024"],
     r"field start of polygons A, B: date '5/1/2024' could be May 1, 2024 or 5 January 2024: no date of this layer"),
    (["2024-05-01", "2024-05-02"], ["5/20/2024", "2024-05-20"],
     r"field stabilized of polygon A: date '5/20/2024' has slashes where other dates of this layer are YYYY-MM-DD"),
    (["13/5/2024", "1/5/2024"], ["20/5/2024", "2/5/2024"],
     r"field start of polygon A: date '13/5/2024' is day/month/year \(there is no month 13\)"),
])
def test_dates_read_two_ways_refused(tmp_path, start, stab, pattern):
    d = [dpoly(i, square(1, dx=1000 * k), a, b) for k, (i, a, b) in enumerate(zip("AB", start, stab))]
    with pytest.raises(InputError, match=pattern):
        run(tmp_path, d)


# --------------------------------------------------------------------------------------------
# rainfall, storm events
# --------------------------------------------------------------------------------------------

def test_storm_threshold_just_under_at_and_above():
    rain = read_rainfall(rain_frame("2024-05-01", [0.49, 0.0, 0.50, 0.0, 0.51, 0.0]))
    ev = storm_events(rain, storm_threshold_in=0.5, storm_event="daily")
    assert list(ev["trigger_date"].dt.strftime("%m-%d")) == ["05-03", "05-05"]  # 0.49 is not a storm
    np.testing.assert_allclose(ev["precip_in"], [0.50, 0.51])


def test_consecutive_wet_days_switch():
    # 0.3 + 0.2 on consecutive days = 0.5 -> one event ending 05-02 (daily reading: none);
    # 0.3, dry, 0.2 -> no event either way; 0.1+0.1+0.1+0.1+0.1 = 0.5 -> one event ending 05-11.
    vals = [0.3, 0.2, 0.0, 0.3, 0.0, 0.2, 0.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.0]
    rain = read_rainfall(rain_frame("2024-05-01", vals))
    assert len(storm_events(rain, storm_threshold_in=0.5, storm_event="daily")) == 0
    ev = storm_events(rain, storm_threshold_in=0.5, storm_event="consecutive_wet_days", wet_day_min_in=0.01)
    assert list(ev["trigger_date"].dt.strftime("%m-%d")) == ["05-02", "05-12"]
    assert list(ev["first_day"].dt.strftime("%m-%d")) == ["05-01", "05-08"]
    np.testing.assert_allclose(ev["precip_in"], [0.5, 0.5])


@pytest.mark.parametrize("frame, pattern", [
    (pd.DataFrame({"date": ["2024-05-01", "2024-05-02", "2024-05-04"], "precip_in": [0, 0, 0]}),
     r"missing.*2024-05-03.*not a dry day"),
    (pd.DataFrame({"date": ["2024-05-01", "2024-05-02"], "precip_in": ["0", "-0.2"]}), r"row 2.*negative"),
    (pd.DataFrame({"date": ["2024-05-01", "2024-05-02"], "precip_in": ["0", "T"]}), r"row 2.*'T' is not a number"),
    (pd.DataFrame({"date": ["2024-05-01", "2024-05-02"], "precip_in": ["0", ""]}), r"row 2.*empty"),
    (pd.DataFrame({"date": ["2024-05-01", "May the 2nd"], "precip_in": [0, 0]}), r"row 2.*not a date"),
    (pd.DataFrame({"date": ["2024-05-01", "2024-05-01"], "precip_in": [0, 0]}), r"2024-05-01 appear more than once"),
])
def test_bad_rainfall_is_an_input_error(frame, pattern):
    with pytest.raises(InputError, match=pattern):
        read_rainfall(frame)


@pytest.mark.parametrize(("value", "refused"), [
    ("71.99", False), ("72", False), ("72.01", True), ("1e308", True),  # 1e308 overflowed the CSV rounding
])
def test_rainfall_over_72_inches_a_day_refused(value, refused):
    frame = pd.DataFrame({"date": ["2024-05-01", "2024-05-02"], "precip_in": ["0", value]})
    if not refused:
        assert read_rainfall(frame)["precip_in"].iloc[1] == float(value)
        return
    with pytest.raises(InputError, match=rf"rainfall table row 2: precip_in '{value}' is more than 72 in, more rain "
                                         r"than any day has had. Give the day's total in inches"):
        read_rainfall(frame)


@pytest.mark.parametrize(("day", "refused"), [
    ("1899-12-31", True), ("1900-01-01", False), ("2100-12-31", False), ("2101-01-01", True),
])
def test_rainfall_dates_outside_1900_to_2100_refused(day, refused):
    frame = pd.DataFrame({"date": [day], "precip_in": [0.1]})
    if not refused:
        assert read_rainfall(frame)["date"].iloc[0] == pd.Timestamp(day)
        return
    with pytest.raises(InputError, match=rf"rainfall table row 1: date '{day}' is outside the years 1900 to 2100"):
        read_rainfall(frame)


def test_rainfall_file_errors_name_the_line(tmp_path):
    p = tmp_path / "rain.csv"
    p.write_text("date,precip_in\n2024-05-01,0.1\n2024-05-02,abc\n")
    with pytest.raises(InputError, match=r"rain.csv line 3"):
        read_rainfall(p)
    p.write_text("day,rain\n2024-05-01,0.1\n")
    with pytest.raises(FieldError, match="date, precip_in missing"):
        read_rainfall(p)
    with pytest.raises(LayerReadError, match="does not exist"):
        read_rainfall(tmp_path / "nope.csv")


def test_rainfall_must_cover_the_schedule(tmp_path):
    d = [dpoly("A", square(2), "2024-05-01", "2024-05-29")]
    rain = rain_frame("2024-05-05", [0.0] * 10)  # 05-05..05-14
    with pytest.raises(InputError, match=r"add daily values for 2024-05-01 to 2024-05-04 and 2024-05-15 to 2024-05-28"):
        run(tmp_path, d, rainfall=rain)


# --------------------------------------------------------------------------------------------
# SWP-007 inspections
# --------------------------------------------------------------------------------------------

def inspection_case() -> tuple[list[dict], pd.DataFrame]:
    # One 2-acre commercial polygon disturbed [05-01, 05-29). Weekly inspections due 05-08, 05-15,
    # 05-22, 05-29 (start + 7k up to the stabilisation date). Storms: 0.49 in on 05-05 (no),
    # 0.50 in on 05-10 (yes: due by 05-11), 0.80 in on 05-20 (yes: due by 05-21).
    d = [dpoly("A", square(2), "2024-05-01", "2024-05-29", "commercial")]
    vals = [0.0] * 31
    vals[4], vals[9], vals[19] = 0.49, 0.50, 0.80
    return d, rain_frame("2024-05-01", vals)


def test_schedule_weekly_and_storms(tmp_path):
    d, rain = inspection_case()
    res = run(tmp_path, d, rainfall=rain)
    sch = res.tables["inspections"]
    assert list(zip(sch["due"].dt.strftime("%m-%d"), sch["reason"])) == [
        ("05-08", "weekly"), ("05-11", "storm"), ("05-15", "weekly"), ("05-21", "storm"), ("05-22", "weekly"),
        ("05-29", "weekly")]
    storms = sch[sch["reason"] == "storm"]
    assert list(storms["trigger_date"].dt.strftime("%m-%d")) == ["05-10", "05-20"]
    np.testing.assert_allclose(storms["precip_in"], [0.5, 0.8])
    f = finding(res, "SWP-007", "schedule")
    assert f["status"] == "info" and f["measured"] == 6
    assert "at least 4 with no more than 7 days between consecutive inspections" in f["message"]
    assert "2 after storm events" in f["message"]


def test_inspection_log_missed_weekly_and_missed_storm(tmp_path):
    d, rain = inspection_case()
    # Disturbed 05-01..05-29. Logged: 05-08, 05-14, 05-21, 05-29. Gaps: start 05-01 -> 05-08 = 7 days,
    # 05-08 -> 05-14 = 6, 05-14 -> 05-21 = 7, 05-21 -> 05-29 = 8 days: more than 7, a violation.
    # Storms: 05-10 (window 05-10..05-11: nothing logged, missed), 05-20 (met by 05-21).
    log = pd.DataFrame({"date": ["2024-05-08", "2024-05-14", "2024-05-21", "2024-05-29"],
                        "inspector": ["J. Doe"] * 4})
    res = run(tmp_path, d, rainfall=rain, inspection_log=log)
    f = res.findings[res.findings["rule_id"] == "SWP-007"]
    assert sorted(f.loc[f["status"] == "violation", "subject_id"]) == [
        "gap from 2024-05-21 to 2024-05-29", "storm of 2024-05-10"]
    gap = finding(res, "SWP-007", "gap from 2024-05-21 to 2024-05-29")
    assert gap["measured"] == 8 and gap["threshold"] == 7 and gap["unit"] == "days"
    assert "no inspection for 8 days" in gap["message"] and "one was due by 2024-05-28" in gap["message"]
    assert (f["status"] == "pass").sum() == 4  # 05-08, 05-14, 05-21 and the storm of 05-20
    # Add 05-28: the last gap is 7 days (05-21 -> 05-28), then 1 day to 05-29: no interval violation.
    res = run(tmp_path, d, rainfall=rain, inspection_log=pd.concat(
        [log, pd.DataFrame({"date": ["2024-05-28"], "inspector": ["J. Doe"]})]))
    f = res.findings[res.findings["rule_id"] == "SWP-007"]
    assert sorted(f.loc[f["status"] == "violation", "subject_id"]) == ["storm of 2024-05-10"]
    # Drop 05-21: 05-14 -> 05-28 is 14 days and the storm of 05-20 is missed too.
    res = run(tmp_path, d, rainfall=rain, inspection_log=pd.DataFrame(
        {"date": ["2024-05-08", "2024-05-14", "2024-05-28", "2024-05-29"], "inspector": ["J. Doe"] * 4}))
    f = res.findings[res.findings["rule_id"] == "SWP-007"]
    assert sorted(f.loc[f["status"] == "violation", "subject_id"]) == [
        "gap from 2024-05-14 to 2024-05-28", "storm of 2024-05-10", "storm of 2024-05-20"]
    tbl = res.tables["inspections"]
    weekly = tbl[tbl["reason"] == "weekly"].set_index("next_inspection")
    assert weekly.loc[pd.Timestamp("2024-05-14"), "status"] == "met"
    assert weekly.loc[pd.Timestamp("2024-05-28"), "status"] == "missed"
    assert weekly.loc[pd.Timestamp("2024-05-28"), "due"] == pd.Timestamp("2024-05-21")  # 05-14 + 7


def test_thirteen_day_gap_fails_although_fixed_weekly_windows_would_be_met(tmp_path):
    # Disturbed 05-01..05-15. Inspections on 05-02 and 05-15: the fixed windows 05-02..05-08 and
    # 05-09..05-15 would each hold one, yet 05-02 -> 05-15 is 13 days between consecutive inspections.
    d = [dpoly("A", square(2), "2024-05-01", "2024-05-15", "commercial")]
    log = pd.DataFrame({"date": ["2024-05-02", "2024-05-15"], "inspector": ["J. Doe"] * 2})
    res = run(tmp_path, d, inspection_log=log)
    f = finding(res, "SWP-007", "gap from 2024-05-02 to 2024-05-15")
    assert f["status"] == "violation" and f["measured"] == 13


def test_inspection_log_with_no_inspection_in_the_period_is_checked(tmp_path):
    # A log given with its header only (no inspection made) stopped the run with a TypeError, and a
    # project of at most 7 days with none logged in it left SWP-007 "could not be evaluated (bug)".
    empty = tmp_path / "log.csv"
    empty.write_text("date,inspector,notes\n")
    # disturbed 05-01..05-29 with none logged: one gap of 28 days, a violation
    d = [dpoly("A", square(2), "2024-05-01", "2024-05-29", "commercial")]
    f = finding(run(tmp_path, d, inspection_log=empty), "SWP-007", "gap from 2024-05-01 to 2024-05-29")
    assert f["status"] == "violation" and f["measured"] == 28 and "one was due by 2024-05-08" in f["message"]
    # 05-01..05-08 (7 days, the interval: "every seven days" as a gap rule) with none logged in it,
    # the header-only log or one whose inspections are outside the period: nothing was due
    d = [dpoly("A", square(2), "2024-05-01", "2024-05-08", "commercial")]
    for log in (empty, pd.DataFrame({"date": ["2024-04-20"], "inspector": ["J. Doe"]})):
        res = run(tmp_path, d, inspection_log=log)
        f = finding(res, "SWP-007", "schedule")
        assert f["status"] == "pass" and f["measured"] == 7 and f["threshold"] == 7, f["message"]
        assert "no interval inspection was due: 7 days from the start of disturbance on 2024-05-01" in f["message"]
        assert not res.findings["message"].str.contains("bug").any()
    # 05-01..05-09 (8 days) with none logged: a violation
    d = [dpoly("A", square(2), "2024-05-01", "2024-05-09", "commercial")]
    f = finding(run(tmp_path, d, inspection_log=empty), "SWP-007", "gap from 2024-05-01 to 2024-05-09")
    assert f["status"] == "violation" and f["measured"] == 8


def test_storm_inspection_24_hours_means_same_or_next_day():
    sch = inspection_schedule(pd.Timestamp("2024-05-01"), pd.Timestamp("2024-05-05"),
                              pd.DataFrame({"trigger_date": [pd.Timestamp("2024-05-02")], "precip_in": [0.7]}),
                              inspection_interval_days=7, inspection_within_hours=24)
    assert list(sch["reason"]) == ["storm"]  # the project is shorter than 7 days: no weekly one
    next_day = match_inspections(sch, read_inspection_log(pd.DataFrame({"date": ["2024-05-03"]})))
    two_days = match_inspections(sch, read_inspection_log(pd.DataFrame({"date": ["2024-05-04"]})))
    same_day = match_inspections(sch, read_inspection_log(pd.DataFrame({"date": ["2024-05-02 16:30"]})))
    assert next_day["status"].iloc[0] == "met" and same_day["status"].iloc[0] == "met"
    assert two_days["status"].iloc[0] == "missed"


def test_no_rainfall_weekly_only_and_storms_not_evaluated(tmp_path):
    d, _ = inspection_case()
    res = run(tmp_path, d)
    assert list(res.tables["inspections"]["reason"]) == ["weekly"] * 4
    assert finding(res, "SWP-007", "storm inspections")["status"] == "not_evaluated"


def test_inspection_log_bad_date(tmp_path):
    p = tmp_path / "log.csv"
    p.write_text("date,inspector\n2024-05-08,JD\n,JD\n")
    with pytest.raises(InputError, match=r"log.csv line 3"):
        read_inspection_log(p)


LOG_DAYS = ["2025-04-07", "2025-04-14", "2025-05-05", "2025-05-15"]


@pytest.mark.parametrize("written", [
    LOG_DAYS,
    ["2025-04-07T09:30", "2025-04-14 16:45:00", "2025-05-05T08:00:00Z", "2025-05-15T23:30:00-04:00"],
    ["4/7/2025", "4/14/2025", "5/5/2025", "5/15/2025"],  # month/day/year, shown by the 14 and the 15
    ["04/07/2025 9:30 AM", "04/14/2025", "05/05/2025", "05/15/2025"],
])
def test_inspection_log_iso_and_us_dates_read_alike(tmp_path, written):
    p = tmp_path / "log.csv"
    p.write_text("date,inspector\n" + "".join(f"{d},JD\n" for d in written))
    assert list(read_inspection_log(p)["date"].dt.strftime("%Y-%m-%d")) == LOG_DAYS


@pytest.mark.parametrize(("written", "pattern"), [
    # day/month/year with no day over 12: the first reading invented gaps (format="mixed", one date at a time)
    (["07/04/2025", "08/04/2025", "05/05/2025", "12/05/2025"],
     (r"^log.csv lines 2, 3, 5: date '07/04/2025' could be July 4, 2025 or 7 April 2025: no date of this file has "
      r"a day over 12 to tell month/day/year from day/month/year. Write dates as YYYY-MM-DD$")),
    (["07/04/2025", "14/04/2025", "05/05/2025", "15/05/2025"],
     (r"^log.csv lines 3, 5: date '14/04/2025' is day/month/year \(there is no month 14\); a date with slashes is "
      r"read as month/day/year only. Write dates as YYYY-MM-DD$")),
    (["2025-04-07", "4/14/2025", "2025-05-05", "2025-05-15"],
     r"^log.csv line 3: date '4/14/2025' has slashes where other dates of this file are YYYY-MM-DD"),
    (["2025-04-07", "2025-04-14", "2025-05-05", "5/15/25"], r"^log.csv line 5: date '5/15/25' is not a date"),
    (["2025-04-07", "2025-02-30", "2025-05-05", "2025-05-15"], r"^log.csv line 3: date '2025-02-30' is not a date"),
    (["2025-04-07", "2025-04-14", "2025-05-05", "2999-05-05"],
     r"^log.csv line 5: date '2999-05-05' is outside the years 1900 to 2100"),
])
def test_inspection_log_dates_read_two_ways_or_wrong_refused(tmp_path, written, pattern):
    p = tmp_path / "log.csv"
    p.write_text("date,inspector\n" + "".join(f"{d},JD\n" for d in written))
    with pytest.raises(InputError, match=pattern):
        read_inspection_log(p)


def test_inspection_log_one_reading_either_way_is_kept():
    # 5/5/2025 reads the same both ways: no other date needed to tell
    log = read_inspection_log(pd.DataFrame({"date": ["5/5/2025", "12/12/2025"]}))
    assert list(log["date"].dt.strftime("%Y-%m-%d")) == ["2025-05-05", "2025-12-12"]


def test_blank_inspector_in_a_dataframe_log_is_not_stated_not_none_or_nan(tmp_path):
    # A log passed as a DataFrame with None / NaN inspectors showed "(None)" and "(nan)" in the messages
    d, rain = inspection_case()
    log = pd.DataFrame({"date": ["2024-05-08", "2024-05-11", "2024-05-15", "2024-05-21", "2024-05-28"],
                        "inspector": [None, np.nan, "  ", pd.NA, "J. Doe"]})
    res = run(tmp_path, d, rainfall=rain, inspection_log=log)
    msgs = res.findings.loc[res.findings["rule_id"] == "SWP-007", "message"]
    assert not msgs.str.contains(r"\bNone\b|\bnan\b|<NA>").any(), msgs.tolist()
    assert "inspection logged 2024-05-08 (inspector not stated)" in finding(res, "SWP-007", "inspection 2024-05-08")[
        "message"]
    assert "inspection logged 2024-05-11 (inspector not stated)" in finding(res, "SWP-007", "storm of 2024-05-10")[
        "message"]
    assert "(J. Doe)" in finding(res, "SWP-007", "inspection 2024-05-28")["message"]
    assert set(res.tables["inspections"]["inspector"]) == {"", "J. Doe"}
    # the phasing functions read such a frame alike
    sch = res.tables["inspections"]
    raw = pd.DataFrame({"date": pd.to_datetime(["2024-05-11"]), "inspector": [None]})
    assert match_inspections(sch[sch["reason"] == "storm"], raw)["inspector"].tolist() == ["", ""]


def qualified_case() -> list[dict]:
    # A 6-acre commercial project (Condition B in Lockport: inspections required in both towns),
    # disturbed 05-01..05-15: inspections on 05-08 and 05-15 meet the 7-day gap rule.
    return [dpoly("A", square(6), "2024-05-01", "2024-05-15", "commercial")]


def swp007_rows(res) -> pd.DataFrame:
    f = res.findings[res.findings["rule_id"] == "SWP-007"]
    return f[f["subject_id"].str.startswith(("inspection 2", "gap from ", "storm of "))].set_index("subject_id")


def test_lockport_inspection_by_a_qualified_professional_is_stated_not_assumed(tmp_path):
    # Lockport § 159-7A(2): "the applicant shall have a qualified professional conduct site inspections";
    # a logged inspection passed whoever made it. Vestal § 6-234(a)(2): "the applicant or developer or
    # their representative ... shall inspect": no qualification, the same log passes.
    d = qualified_case()
    log = pd.DataFrame({"date": ["2024-05-08", "2024-05-15"], "inspector": ["J. Doe", "A. Chen"]})
    v = swp007_rows(run(tmp_path, d, "vestal", inspection_log=log))
    assert list(v["status"]) == ["pass", "pass"]
    # Lockport without a qualified column: counted, but not pass
    lk = swp007_rows(run(tmp_path, d, "lockport", inspection_log=log))
    assert list(lk["status"]) == ["not_evaluated", "not_evaluated"], lk["message"].tolist()
    msg = lk.loc["inspection 2024-05-15", "message"]
    assert "Lockport Code § 159-7A(2) requires inspections by a qualified professional" in msg
    assert "does not state whether the inspector on 2024-05-08 and 2024-05-15 is one" in msg  # the gap runs from 05-08
    assert "inspector's qualification missing" in msg
    # stated yes for both: pass, saying so
    yes = swp007_rows(run(tmp_path, d, "lockport", inspection_log=log.assign(qualified=["yes", "Y"])))
    assert list(yes["status"]) == ["pass", "pass"]
    assert "(J. Doe, stated a qualified professional), 7 days after" in yes.loc["inspection 2024-05-08", "message"]
    # 05-08 stated not qualified: not counted (listed), so 05-01 -> 05-15 is a 14-day gap
    res = run(tmp_path, d, "lockport", inspection_log=log.assign(qualified=["no", "yes"]))
    no = swp007_rows(res)
    assert no.loc["gap from 2024-05-01 to 2024-05-15", "status"] == "violation"
    assert no.loc["gap from 2024-05-01 to 2024-05-15", "measured"] == 14
    assert no.loc["inspection 2024-05-08 not counted", "status"] == "info"
    assert "states the inspector is not a qualified professional" in no.loc["inspection 2024-05-08 not counted",
                                                                             "message"]
    assert res.tables["inspections"]["inspector_qualified"].tolist() == [""]  # the missed gap: no inspection
    # ... while Vestal counts it (no qualification in its text)
    v = swp007_rows(run(tmp_path, d, "vestal", inspection_log=log.assign(qualified=["no", "yes"])))
    assert list(v["status"]) == ["pass", "pass"]


def test_lockport_short_project_needs_no_qualification_where_nothing_was_due(tmp_path):
    # 05-01..05-08 (7 days, the interval): no interval inspection was due, so one logged on 05-04 by an
    # inspector whose qualification the log does not state leaves nothing unmet (it was not_evaluated);
    # one day longer (8 days) the gap 05-04 -> 05-09 ends at the stabilisation and the inspection is due
    log = pd.DataFrame({"date": ["2024-05-04"], "inspector": ["J. Doe"]})
    short = swp007_rows(run(tmp_path, [dpoly("A", square(6), "2024-05-01", "2024-05-08", "commercial")], "lockport",
                            inspection_log=log))
    assert list(short["status"]) == ["pass"], short["message"].tolist()
    assert "qualified professional" not in short["message"].iloc[0]
    longer = swp007_rows(run(tmp_path, [dpoly("A", square(6), "2024-05-01", "2024-05-09", "commercial")], "lockport",
                             inspection_log=log))
    assert longer.loc["inspection 2024-05-04", "status"] == "not_evaluated", longer["message"].tolist()


def test_lockport_qualified_column_read_from_the_log_file_and_storms(tmp_path):
    # the column read from a CSV whose lines are out of date order; a storm on 05-10 (due by 05-11)
    # met by an unstated inspection on 05-10 and a qualified one on 05-11: the qualified one is reported
    d = qualified_case()
    vals = [0.0] * 20
    vals[9] = 0.8
    p = tmp_path / "log.csv"
    p.write_text("date,inspector,qualified\n2024-05-15,A. Chen,yes\n2024-05-11,A. Chen,yes\n"
                 "2024-05-10,J. Doe,\n2024-05-08,A. Chen,yes\n")
    rows = swp007_rows(run(tmp_path, d, "lockport", rainfall=rain_frame("2024-05-01", vals), inspection_log=p))
    assert rows.loc["storm of 2024-05-10", "status"] == "pass"
    assert "inspection logged 2024-05-11 (A. Chen, stated a qualified professional)" in rows.loc[
        "storm of 2024-05-10", "message"]
    # the gaps 05-08 -> 05-10 (unstated) -> 05-11: the two ending at or running from 05-10 are not pass
    assert rows["status"].to_dict() == {
        "inspection 2024-05-08": "pass", "inspection 2024-05-10": "not_evaluated",
        "inspection 2024-05-11": "not_evaluated", "inspection 2024-05-15": "pass", "storm of 2024-05-10": "pass"}
    # through the CLI with Lockport's rulebook: the same log, an inspection stated not qualified listed
    p.write_text("date,inspector,qualified\n2024-05-08,J. Doe,no\n2024-05-08,A. Chen,yes\n2024-05-15,A. Chen,yes\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["stormwater", str(write_layers(tmp_path, d)), "--rulebook", "lockport",
                                  "--inspection-log", str(p), "--out", str(out)])
    assert r.exit_code == 0, r.output
    insp = pd.read_csv(out / "inspections.csv", keep_default_na=False)
    assert insp["inspector_qualified"].tolist() == ["yes", "yes"]  # 05-08: A. Chen's (stated) counted
    assert insp["inspector"].tolist() == ["A. Chen", "A. Chen"]


def test_qualified_inspector_required_must_be_true_or_false(tmp_path):
    rb = tmp_path / "lk.yaml"
    rb.write_text("extends: lockport\nrulebook: lk\nrules:\n  - id: SWP-007\n    params:\n"
                  "      qualified_inspector_required: sometimes\n")
    log = pd.DataFrame({"date": ["2024-05-08", "2024-05-15"], "inspector": ["J. Doe"] * 2})
    path = write_layers(tmp_path, qualified_case())
    with pytest.raises(RulebookError, match=r"qualified_inspector_required = 'sometimes' is a text; it must be true "
                                            r"or false"):
        check_stormwater(load_layers(path, primary=("disturbance",)), load_rulebook(rb), inspection_log=log)


# --------------------------------------------------------------------------------------------
# Vestal vs Lockport: same input, different findings
# --------------------------------------------------------------------------------------------

def test_vestal_vs_lockport_inspections_and_logging(tmp_path):
    # 2-acre single-family house lot; a logging landing (point: 10,000 sq ft) and a 500-ft haul road
    # (x 12 ft = 6,000 sq ft) elsewhere; an impaired water 3,000 ft away.
    d = [dpoly("H", square(2), "2024-05-01", "2024-05-29", "single_family")]
    road = [{"id": "R", "geometry": LineString([(X0 + 2000, Y0), (X0 + 2500, Y0)])}]
    landing = [{"id": "L", "geometry": Point(X0 + 2000, Y0 + 400)}]
    water = [{"id": "W", "geometry": LineString([(X0 + 6000, Y0), (X0 + 6000, Y0 + 500)])}]
    kw = {"haul_roads": road, "landings": landing, "impaired_waters": water, "rainfall": inspection_case()[1]}
    v = run(tmp_path, d, "vestal", **kw)
    lk = run(tmp_path, d, "lockport", **kw)
    harvest = 10_000 / SQFT + 6_000 / SQFT  # the harvest is not connected to the house lot
    for res in (v, lk):
        assert finding(res, "SWP-001", "project")["measured"] == pytest.approx(2.0, abs=TOL)
        assert finding(res, "SWP-001", "landings and haul roads")["measured"] == pytest.approx(harvest, abs=TOL)
    # SWP-006 logging: Vestal only under a timber management plan (review); Lockport silviculture (info)
    assert finding(v, "SWP-006", "logging")["status"] == "review"
    assert "timber management plan" in finding(v, "SWP-006", "logging")["message"]
    assert finding(lk, "SWP-006", "logging")["status"] == "info"
    assert "silvicultural activity is exempt" in finding(lk, "SWP-006", "logging")["message"]

    kw2 = {"impaired_waters": water, "rainfall": inspection_case()[1]}
    v2 = run(tmp_path, d, "vestal", **kw2)
    lk2 = run(tmp_path, d, "lockport", **kw2)
    # Vestal: every land development activity (2 acres >= 1) is inspected.
    assert finding(v2, "SWP-007", "schedule")["status"] == "info"
    assert v2.tables["inspections"]["required"].all()
    # Lockport: only for Conditions A, B, C: 2 acres single-family is not C, under 5 not B; the water is
    # 3,000 ft away, beyond the screening distance, and without a DEM discharge to it is not analysed,
    # so whether Condition A applies is unknown: not_evaluated, never "not required".
    f = finding(lk2, "SWP-007", "schedule")
    assert f["status"] == "not_evaluated" and "discharge not analysed" in f["message"]
    assert lk2.tables["inspections"]["required"].isna().all()
    # Lockport without the impaired-waters layer: Condition A unknown -> not_evaluated
    lk3 = run(tmp_path, d, "lockport", rainfall=inspection_case()[1])
    assert finding(lk3, "SWP-007", "schedule")["status"] == "not_evaluated"


def _lockport_without(*rule_ids: str):
    """Lockport's rulebook with ``rule_ids`` left out (a custom rulebook lacking the rule a condition needs)."""
    from geoconstraints.rulebook.model import Rulebook

    lk = load_rulebook("lockport")
    return Rulebook("lockport-custom", "1", "Lockport without " + ", ".join(rule_ids),
                    {r.id: r for r in lk if r.id not in rule_ids})


@pytest.mark.parametrize(("missing", "acres", "use", "undecided"), [
    (("SWP-002",), 2, "single_family", "Condition A"),  # B: under 5 acres; C: single-family excluded
    (("SWP-002", "SWP-003"), 6, "single_family", "Conditions A"),  # C: 5 acres or more is B's, not C's
    (("SWP-002", "SWP-004"), 2, "commercial", "Conditions A"),  # B: under 5 acres
])
def test_swp007_a_condition_whose_rule_is_missing_is_undecided_never_not_required(tmp_path, missing, acres, use,
                                                                                     undecided):
    # Lockport inspects only under Condition A, B or C. A custom rulebook without the rule defining a
    # condition skipped that condition: with the others not applying, SWP-007 said "none of Conditions
    # A, B, C applies, so inspections are not required", a pass on a condition never examined.
    _d, rain = inspection_case()
    d = [dpoly("H", square(acres), "2024-05-01", "2024-05-29", use)]
    layers = load_layers(write_layers(tmp_path, d), primary=("disturbance",))
    res = check_stormwater(layers, _lockport_without(*missing), rainfall=rain)
    f = finding(res, "SWP-007", "schedule")
    assert f["status"] == "not_evaluated", f["message"]
    assert "not required" not in f["message"]
    assert f"{undecided} (the rulebook has no SWP-002" in f["message"]
    for rid in missing:
        assert f"the rulebook has no {rid}, the rule defining Condition" in f["message"]
    assert "could not be decided" in f["message"]


def test_swp007_a_missing_rule_does_not_hide_a_condition_that_applies(tmp_path):
    # Without SWP-002 Condition A is undecided, but 6 acres meet Condition B: inspections required.
    d, rain = inspection_case()
    d = [dpoly("H", square(6), "2024-05-01", "2024-05-29", "commercial")]
    layers = load_layers(write_layers(tmp_path, d), primary=("disturbance",))
    res = check_stormwater(layers, _lockport_without("SWP-002"), rainfall=rain)
    f = finding(res, "SWP-007", "schedule")
    assert f["status"] == "info" and "Condition B applies" in f["message"]
    assert res.tables["inspections"]["required"].all()


def test_use_matching_an_exemption_is_listed(tmp_path):
    res = run(tmp_path, [dpoly("G", square(0.2), use="cemetery_graves"), dpoly("B", square(2, dx=1000))])
    f = finding(res, "SWP-006", "G")
    assert f["status"] == "info" and "Cemetery graves" in f["message"]
    other = finding(res, "SWP-006", "other exemptions")["message"]
    assert "routine_maintenance" in other and "cemetery_graves" not in other
    # Vestal lists its prior-subdivision exemption; Lockport has none
    assert "prior_subdivision" in other
    lk = run(tmp_path, [dpoly("B", square(2))], rulebook="lockport")
    assert "prior_subdivision" not in finding(lk, "SWP-006", "other exemptions")["message"]


def test_checklist_differs_by_town(tmp_path):
    v = run(tmp_path, [dpoly("A", square(2))])
    lk = run(tmp_path, [dpoly("A", square(2))], rulebook="lockport")
    assert "6 months" in finding(v, "SWP-008", "penalties")["message"]
    assert "15 days" in finding(lk, "SWP-008", "penalties")["message"]
    assert "45 days" in finding(lk, "SWP-008", "SMO deadlines")["message"]
    assert not (v.findings["subject_id"] == "SMO deadlines").any()
    assert "1 inch = 100 ft" in finding(v, "SWP-008", "site map")["message"]


def test_harvest_footprints_function_point_disc_area_is_exact():
    pts = gpd.GeoDataFrame({"feature_id": ["a", "b"]}, geometry=[Point(0, 0), box(0, 0, 50, 40)], crs=CRS)
    fp = harvest_footprints(pts, None, haul_road_width_ft=12, default_landing_area_sqft=7_500)
    np.testing.assert_allclose(fp["area_sqft"], [7_500, 2_000], atol=1e-6)  # polygon: 50 * 40


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------

def test_cli_stormwater_writes_tables(tmp_path):
    path = write_layers(tmp_path, phased_plan())
    rain = tmp_path / "rain.csv"
    rain_frame("2024-05-01", [0.0] * 61).to_csv(rain, index=False)
    log = tmp_path / "log.csv"
    log.write_text("date,inspector,notes\n2024-05-08,JD,ok\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["stormwater", str(path), "--rainfall", str(rain), "--inspection-log", str(log),
                                  "--out", str(out)])
    assert r.exit_code == 0, r.output
    tl = pd.read_csv(out / "disturbance_timeline.csv")
    assert tl["disturbed_acres"].max() == pytest.approx(6.0, abs=TOL)
    assert list(tl["date_from"])[:2] == ["2024-05-01", "2024-05-15"]
    insp = pd.read_csv(out / "inspections.csv")
    assert {"due", "reason", "trigger_date", "precip_in", "status"} <= set(insp.columns)
    assert (out / "findings.geojson").exists()
    # --approved-swppp turns the peak into info
    r = CliRunner().invoke(main, ["stormwater", str(path), "--approved-swppp", "--out", str(tmp_path / "o2")])
    assert r.exit_code == 0, r.output


def test_cli_stormwater_bad_rainfall_exits_2(tmp_path):
    path = write_layers(tmp_path, phased_plan())
    rain = tmp_path / "rain.csv"
    rain.write_text("date,precip_in\n2024-05-01,0.1\n2024-05-03,0.2\n")
    r = CliRunner().invoke(main, ["stormwater", str(path), "--rainfall", str(rain), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert "2024-05-02" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


@pytest.mark.parametrize(("layout", "message"), [
    ("%d/%m/%Y", ("error: log.csv lines 3, 4, 5, 8, 9, 10, 14, 15, 17, 18 (+9 more): date '14/04/2025' is "
                  "day/month/year (there is no month 14)")),
    ("dd/mm, no day over 12", "error: log.csv lines "),
    ("%Y-%m-%d", None),
    ("%m/%d/%Y", None),
])
def test_cli_sample_inspection_log_day_month_refused_iso_and_us_unchanged(tmp_path, layout, message):
    # the sample log in day/month/year read one date at a time gave 9 violations instead of 4 (exit 0)
    log = pd.read_csv(SAMPLE / "inspection_log.csv", dtype=str)
    days = pd.to_datetime(log["date"], format="%Y-%m-%d")
    if layout.startswith("dd/mm"):
        log, days = log[days.dt.day <= 12], days[days.dt.day <= 12]
        layout = "%d/%m/%Y"
    log["date"] = days.dt.strftime(layout)
    log.to_csv(tmp_path / "log.csv", index=False)
    gpkg = str(SAMPLE / "vestal_sample.gpkg")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["stormwater", "--disturbance", f"{gpkg}:disturbance", "--rainfall",
                                  str(SAMPLE / "rainfall.csv"), "--inspection-log", str(tmp_path / "log.csv"),
                                  "--outputs", "csv", "--out", str(out)])
    if message is not None:
        assert r.exit_code == 2 and r.stdout == "" and "Traceback" not in r.output
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(message), r.stderr
        assert "Write dates as YYYY-MM-DD" in lines[0] and not out.exists()
        return
    assert r.exit_code == 0, r.output
    f = pd.read_csv(out / "findings.csv")
    f7 = f[(f["rule_id"] == "SWP-007") & (f["status"] == "violation")]
    assert sorted(f7["subject_id"]) == [
        "gap from 2025-06-16 to 2025-06-30", "gap from 2025-09-01 to 2025-09-15", "storm of 2025-08-12"]


@pytest.mark.parametrize(("field", "value"), [("stabilized", "2999-01-01"), ("start", "0001-01-01")])
def test_cli_far_future_or_ancient_disturbance_date_exits_2(tmp_path, field, value):
    d = [dpoly("D1", square(1), "2024-05-01", "2024-05-20")]
    d[0][field] = value
    path = write_layers(tmp_path, d)
    r = CliRunner().invoke(main, ["stormwater", str(path), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "Traceback" not in r.output and "could not complete" not in r.output
    assert r.stderr.strip().splitlines() == [
        (f"error: layer disturbance: field {field} of polygon D1: date '{value}' is outside the years 1900 to 2100: "
         f"correct the date (a typing error?)")]


def test_cli_rainfall_1e308_exits_2(tmp_path):
    path = write_layers(tmp_path, [dpoly("D1", square(1), "2024-05-01", "2024-05-05")])
    rain = tmp_path / "rain.csv"
    rain.write_text("date,precip_in\n2024-05-01,0\n2024-05-02,1e308\n2024-05-03,0\n2024-05-04,0\n")
    r = CliRunner().invoke(main, ["stormwater", str(path), "--rainfall", str(rain), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "Traceback" not in r.output and "overflow" not in r.output
    assert r.stderr.strip().splitlines() == [
        ("error: rain.csv line 3: precip_in '1e308' is more than 72 in, more rain than any day has had. Give the "
         "day's total in inches (millimetres / 25.4)")]


SAMPLE_ROLES = ("disturbance", "landings", "haul_roads", "impaired_waters", "harvest_area")


def _sample(rulebook="vestal"):
    layers = load_layers(SAMPLE / "vestal_sample.gpkg", roles=SAMPLE_ROLES, primary=("disturbance",))
    rb = rulebook if not isinstance(rulebook, str) else load_rulebook(rulebook)
    return check_stormwater(layers, rb, rainfall=SAMPLE / "rainfall.csv",
                            inspection_log=SAMPLE / "inspection_log.csv")


def test_sample_reproduces_readme_peak_and_missed_inspections():
    # data/sample/README.md states the phasing peak, e.g.
    # "**Peak: 269,600 sq ft = 6.189 ac, 2025-08-04 .. 2025-08-24**" -- read it and reproduce it.
    readme = (SAMPLE / "README.md").read_text(encoding="utf-8")
    m = re.search(r"Peak: ([\d,]+) sq ft = ([\d.]+) ac, (\d{4}-\d\d-\d\d) \.\. (\d{4}-\d\d-\d\d)", readme)
    assert m, "the sample README no longer states the phasing peak in the expected form"
    sqft, first, last = float(m.group(1).replace(",", "")), m.group(3), m.group(4)
    res = _sample()
    f = finding(res, "SWP-005", "project")
    assert f["status"] == "violation"
    assert f["measured"] == pytest.approx(sqft / SQFT, abs=TOL)
    assert f"{first} to {last}" in f["message"]
    # README: union 600 x 580 = 348,000 sq ft = 7.989 ac for the subdivision, and the harvest
    # plan (elsewhere in town) is its own activity.
    assert finding(res, "SWP-001", "project")["measured"] == pytest.approx(348_000 / SQFT, abs=TOL)
    assert finding(res, "SWP-003", "project")["status"] == "review"
    # README: missed weekly 2025-06-23 and 2025-09-08 and the storm of 2025-08-12 (1.20 in);
    # 0.49 in on 2025-04-22 is no storm; 0.50 in on 2025-05-14 is (inspected 2025-05-15).
    # (weekly every Monday except 06-23 and 09-08: two gaps of 14 days, 06-16 -> 06-30 and 09-01 -> 09-15)
    f7 = res.findings[res.findings["rule_id"] == "SWP-007"]
    assert sorted(f7.loc[f7["status"] == "violation", "subject_id"]) == [
        "gap from 2025-06-16 to 2025-06-30", "gap from 2025-09-01 to 2025-09-15", "storm of 2025-08-12"]
    assert (f7["subject_id"] == "storm of 2025-05-14").any()
    assert not (f7["subject_id"] == "storm of 2025-04-22").any()


def test_sample_consecutive_wet_days_switch(tmp_path):
    # README: with the consecutive-days switch also 0.30 + 0.30 in on 2025-07-02/03 is a storm,
    # and no inspection was logged by 2025-07-04.
    p = tmp_path / "rb.yaml"
    p.write_text("extends: vestal\nrulebook: vestal-wet\nrules:\n  - id: SWP-007\n    switches:\n"
                 "      storm_event: consecutive_wet_days\n")
    res = _sample(load_rulebook(p))
    f7 = res.findings[res.findings["rule_id"] == "SWP-007"]
    missed = sorted(f7.loc[f7["status"] == "violation", "subject_id"])
    assert "storm of 2025-07-03" in missed
    assert "storm_event=consecutive_wet_days" in f7["reading"].iloc[0]


def _wet_rulebook(tmp_path: Path):
    p = tmp_path / "rb-wet.yaml"
    p.write_text("extends: vestal\nrulebook: vestal-wet\nrules:\n  - id: SWP-007\n    switches:\n"
                 "      storm_event: consecutive_wet_days\n")
    return load_rulebook(p)


def test_consecutive_wet_days_never_treat_days_before_the_series_as_dry(tmp_path):
    # Disturbed [05-01, 05-29). The rainfall series starts on 05-01 with 0.30 in, then dry days.
    # Under consecutive_wet_days the run containing 05-01 may have begun on 04-30 (not in the
    # series): 0.30 + (04-30 unknown) could be >= 0.50 in, a storm ending 05-01 inside the schedule.
    # Reading the unknown 04-30 as dry would silently drop that storm inspection: an input error
    # asking for the days before. With a dry 04-30 added, the run is 0.30 in: no storm.
    d = [dpoly("A", square(2), "2024-05-01", "2024-05-29", "commercial")]
    vals = [0.0] * 31
    vals[0] = 0.30
    path = write_layers(tmp_path, d)
    layers = load_layers(path, primary=("disturbance",))
    with pytest.raises(InputError, match=r"2024-05-01.*wet.*before"):
        check_stormwater(layers, _wet_rulebook(tmp_path), rainfall=rain_frame("2024-05-01", vals))
    res = check_stormwater(layers, _wet_rulebook(tmp_path), rainfall=rain_frame("2024-04-30", [0.0] + vals))
    assert (res.tables["inspections"]["reason"] == "storm").sum() == 0
    # 04-30 wet too (0.25 in): 0.25 + 0.30 = 0.55 in >= 0.50 -> one storm ending 05-01, due by 05-02.
    # The series still starts on a wet day, but the known part of the run already makes a storm and
    # its last day (the trigger) is known: no earlier day is needed.
    res = check_stormwater(layers, _wet_rulebook(tmp_path), rainfall=rain_frame("2024-04-30", [0.25] + vals))
    storms = res.tables["inspections"][res.tables["inspections"]["reason"] == "storm"]
    assert list(storms["trigger_date"].dt.strftime("%m-%d")) == ["05-01"]
    assert storms["precip_in"].iloc[0] == pytest.approx(0.55, abs=1e-12)
    # the daily reading needs no earlier day: each day's total stands alone
    res = run(tmp_path, d, rainfall=rain_frame("2024-05-01", vals))
    assert (res.tables["inspections"]["reason"] == "storm").sum() == 0


# --------------------------------------------------------------------------------------------
# SWP-002 on a real DEM (issue 10 items 12 and 14)
# --------------------------------------------------------------------------------------------

def test_flow_path_on_real_lidar_descends_and_off_the_dem_is_not_evaluated(tmp_path):
    """Real PAMAP lidar DEM (Muncy PA, EPSG:2271, US survey feet, 16.4-ft cells). A 1-acre site in the
    middle and an impaired-water line far to the north (beyond 500 ft). Whatever the outcome, the traced
    path must run downhill: the DEM cells under its vertices (read with rasterio, independently of the
    tracer) never rise along it, beyond float noise (across a flat it stays level). A site at the DEM's east
    edge cannot be traced
    completely: its paths run off the DEM, so the finding is not_evaluated, never pass."""
    import rasterio

    with rasterio.open(MUNCY_DEM) as src:
        b, crs = src.bounds, src.crs.to_string()
    cx, cy = (b.left + b.right) / 2, (b.bottom + b.top) / 2
    s = side(1)
    path = tmp_path / "real.gpkg"
    sites = {"middle": box(cx, cy, cx + s, cy + s), "edge": box(b.right - s / 2, cy, b.right + s / 2, cy + s)}
    water = gpd.GeoDataFrame({"id": ["W1"]}, geometry=[LineString([(b.left, b.top - 50), (b.right, b.top - 50)])],
                             crs=crs)
    for name, geom in sites.items():
        path.unlink(missing_ok=True)
        gpd.GeoDataFrame({"id": ["A"], "start": ["2024-05-01"], "stabilized": ["2024-05-29"]}, geometry=[geom],
                         crs=crs).to_file(path, layer="disturbance")
        water.to_file(path, layer="impaired_waters")
        layers = load_layers(path, dem=MUNCY_DEM, dem_z_units="ft", primary=("disturbance",))
        res = check_stormwater(layers, load_rulebook("vestal"), larger_common_plan=False)
        f = finding(res, "SWP-002")
        if name == "edge":
            assert f["status"] == "not_evaluated" and "runs off the DEM" in f["message"]
            continue
        # here the paths reach the river's flattened surface, a flat running to the DEM's edge (and a few
        # lidar pits): not shown either way, so not_evaluated; the longest path traced is still reported
        assert f["status"] == "not_evaluated" and "edge" in f["message"], f["message"]
        line = res.derived["flow_paths"].iloc[0].geometry
        xy = gpd.GeoSeries([line], crs=layers.crs).to_crs(crs).get_coordinates().to_numpy()
        with rasterio.open(MUNCY_DEM) as src:
            z = np.array([v[0] for v in src.sample(xy)], dtype=float)
        assert len(z) >= 2 and np.all(np.diff(z) <= 1e-6), z


def test_cli_stormwater_dem_traces_the_flow_path(tmp_path):
    # the sample project is 937 ft from the impaired Sample River (beyond 500 ft): without --dem SWP-002 is
    # not_evaluated; with --dem its flow path reaches the river (review) and the path is a derived layer
    import json

    import pyogrio

    out1, out2 = tmp_path / "no-dem", tmp_path / "dem"
    gpkg = str(SAMPLE / "vestal_sample.gpkg")
    roles = ["--disturbance", f"{gpkg}:disturbance", "--impaired-waters", f"{gpkg}:impaired_waters"]
    r = CliRunner().invoke(main, ["stormwater", *roles, "--no-larger-common-plan", "--out", str(out1)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["stormwater", *roles, "--dem", str(SAMPLE / "dem.tif"), "--out", str(out2)])
    assert r.exit_code == 0, r.output

    def swp002(out):
        feats = json.loads((out / "findings.geojson").read_text())["features"]
        return [f["properties"]["status"] for f in feats if f["properties"]["rule_id"] == "SWP-002"]

    assert swp002(out1) == ["not_evaluated"] and swp002(out2) == ["review"]
    assert "flow_paths" in pyogrio.list_layers(out2 / "results.gpkg")[:, 0]
