"""Tests for geoconstraints.rulebook.findings (the findings table, worst status) and
geoconstraints.rulebook.render (the one message renderer)."""

from __future__ import annotations

import copy

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from shapely.geometry import Point

from geoconstraints.errors import RulebookError
from geoconstraints.rulebook.findings import (
    FINDING_COLUMNS,
    STATUSES,
    concat_findings,
    empty_findings,
    findings_frame,
    status_counts,
    worst_status,
    worst_status_by,
)
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rulebook.model import Rule
from geoconstraints.rulebook.render import check_template, fmt_num, num_texts, value_text

PUBLISHED = ["rule_id", "rulebook", "status", "citation", "subject_layer", "subject_id", "measured",
             "threshold", "unit", "message"]  # the published GeoJSON properties, in order


@pytest.fixture(scope="module")
def vestal():
    return load_rulebook("vestal")


def test_columns_start_with_the_published_properties():
    assert FINDING_COLUMNS[:10] == PUBLISHED
    assert FINDING_COLUMNS[10:] == ["title", "reading", "waived"]
    assert STATUSES == ("violation", "review", "not_evaluated", "info", "pass")


def test_bad_status_refused(vestal):
    with pytest.raises(ValueError, match="status 'fail' is not one of violation, review"):
        vestal["HRV-010"].findings("fail", subject_layer="haul_roads", subject_id="R1")


def test_frame_sorted_typed_and_extra_columns_dropped(vestal):
    r = vestal["HRV-010"]
    a = r.findings(["pass", "violation"], subject_layer="haul_roads", subject_id=["b", "c"], measured=[1.0, 3.0],
                   threshold=[np.nan, 2.0], unit="ft", geometry=[None, Point(1, 1)], crs="EPSG:2261")
    a["road_note"] = ["x", "y"]  # a per-subject column a command may read; not a finding column
    b = vestal["FLD-001"].findings("not_evaluated", subject_layer="parcels", subject_id="a")
    c = r.findings("review", subject_id="d", measured=7)
    out = findings_frame([a, b, c], crs="EPSG:2261")
    assert list(out.columns) == FINDING_COLUMNS + ["geometry"]
    # by rule id, then severity (violation first), then subject
    assert list(zip(out["rule_id"], out["status"], out["subject_id"])) == [
        ("FLD-001", "not_evaluated", "a"), ("HRV-010", "violation", "c"), ("HRV-010", "review", "d"),
        ("HRV-010", "pass", "b")]
    assert out["measured"].dtype == "float64" and out["measured"].tolist()[1:] == [3.0, 7.0, 1.0]
    assert np.isnan(out["threshold"].iloc[0]) and out["threshold"].iloc[1] == 2.0
    assert out["waived"].tolist() == ["", "", "", ""]  # no waiver -> "", never "None"
    assert out.crs.to_epsg() == 2261
    assert out.geometry.iloc[0] is None and out.geometry.iloc[1] == Point(1, 1)


def test_frame_types_object_and_text_columns_alike(vestal):
    # Rule.findings hands over object columns (sorted, then typed once); a frame whose columns are
    # typed as text already, with a None and a number among them, gives the same table
    r = vestal["FLD-001"]
    ids = [f"P{i:03d}" for i in range(50, 0, -1)]
    st = np.where(np.arange(50) % 3 == 0, "review", "pass").astype(object)
    a = r.findings(st, subject_layer="parcels", subject_id=ids, measured=np.arange(50.0), unit="acres")
    assert a["message"].dtype == object and a["subject_id"].dtype == object
    typed = a.copy()
    for c in FINDING_COLUMNS:
        if c not in ("measured", "threshold"):
            typed[c] = typed[c].astype(str)
    out, out_typed = findings_frame(a), findings_frame(typed)
    assert out.equals(out_typed) and list(out.dtypes) == list(out_typed.dtypes)
    assert out["message"].dtype == out_typed["message"].dtype == pd.Series(["x"]).astype(str).dtype
    assert out["subject_id"].tolist()[:3] == ["P002", "P005", "P008"]  # reviews first, then by id
    odd = a.iloc[:2].copy()
    odd["waived"] = pd.Series([None, 7], dtype=object)
    assert findings_frame(odd)["waived"].tolist() == ["", "7"]  # None -> "", never "None"


def test_frame_of_one_frame_and_of_nothing():
    out = findings_frame([], crs="EPSG:2261")
    assert len(out) == 0 and list(out.columns) == FINDING_COLUMNS + ["geometry"]
    assert out.crs.to_epsg() == 2261
    assert len(empty_findings()) == 0 and len(concat_findings([])) == 0
    with pytest.raises(ValueError, match="lack the columns"):
        findings_frame(gpd.GeoDataFrame({"rule_id": ["X"]}, geometry=[None]))


def test_concat_keeps_extra_columns_and_gives_the_crs_to_placeless_rows(vestal):
    a = vestal["HRV-025"].findings("pass", subject_layer="landings", subject_id="L1", geometry=Point(0, 0),
                                   crs="EPSG:2261")
    a["row_distance_ft"] = 420.0
    b = vestal["HRV-040"].findings("info", subject_id="fee")  # no place, no CRS
    out = concat_findings([a, b])
    assert out.crs.to_epsg() == 2261 and len(out) == 2
    assert out["row_distance_ft"].iloc[0] == 420.0 and np.isnan(out["row_distance_ft"].iloc[1])


def test_counts():
    df = pd.DataFrame({"status": ["pass", "review", "review", "info"]})
    assert status_counts(df) == {"violation": 0, "review": 2, "not_evaluated": 0, "info": 1, "pass": 1}
    assert status_counts(empty_findings()) == dict.fromkeys(STATUSES, 0)


def test_worst_status_of_a_set_and_of_nothing():
    assert worst_status(pd.Series(["pass", "review", "review", "info"])) == "review"
    assert worst_status(["info", "not_evaluated"]) == "not_evaluated"
    assert worst_status(["pass", "info"]) == "info"
    assert worst_status(["violation"]) == "violation"
    # nothing examined is never a pass
    assert worst_status(pd.Series([], dtype=object)) == "not_evaluated"
    assert worst_status([]) == "not_evaluated"
    with pytest.raises(ValueError, match="status ok is not one of"):
        worst_status(["pass", "ok"])


def test_worst_status_by_key():
    keys = ["P1", "P2", "P1", "P3", "P3", "P3"]
    st = ["pass", "info", "violation", "pass", "not_evaluated", "review"]
    got = worst_status_by(keys, st)
    assert got.to_dict() == {"P1": "violation", "P2": "info", "P3": "review"}
    # wanted keys in order; a key with no finding is not_evaluated, never pass
    aligned = worst_status_by(keys, st, index=["P3", "P9", "P2"])
    assert aligned.tolist() == ["review", "not_evaluated", "info"]
    assert worst_status_by([], [], index=["P1"]).tolist() == ["not_evaluated"]


# ------------------------------------------------------------------------------------------
# the renderer

def test_numbers_in_messages():
    # 2 decimals, thousands separators, trailing zeros dropped; 1e6 and above without decimals
    assert [fmt_num(x) for x in (0.0, -0.0, 1.005, 0.125, 12_345.678, -3.5, 999_999.996, 1e6, 2.5e7)] == [
        "0", "-0", "1", "0.12", "12,345.68", "-3.5", "1,000,000", "1,000,000", "25,000,000"]
    assert fmt_num(np.nan) == "n/a" and fmt_num(None) == "n/a" and fmt_num(np.inf) == "inf"
    assert num_texts(np.array([1.5, np.nan, 1.5, 2e6])).tolist() == ["1.5", "n/a", "1.5", "2,000,000"]
    assert value_text(["RA-1", "RC"]) == "RA-1, RC" and value_text(7) == "7" and value_text(7.25) == "7.25"


@pytest.mark.parametrize(("value", "text"), [
    # the cut-off 0.01: at it and just over, 2 decimals; just under, 2 significant figures (never "0")
    (0.01, "0.01"), (0.0101, "0.01"), (0.0149, "0.01"), (0.0099, "0.0099"), (0.00999, "0.01"),
    (0.0043, "0.0043"),  # 186 sq ft in acres: an SFHA review finding
    (0.023, "0.02"),  # a sliver in sq ft
    (0.005, "0.005"), (0.0049, "0.0049"), (0.00012345, "0.00012"), (1e-9, "0.000000001"),
    (-0.0043, "-0.0043"), (-0.023, "-0.02"), (0.0, "0"),
])
def test_a_nonzero_number_never_prints_as_zero(value, text):
    assert fmt_num(value) == text
    assert num_texts(np.array([value, value, 1.5])).tolist() == [text, text, "1.5"]
    assert value_text(value) == text


def test_messages_by_status_filled_by_hand(vestal):
    rule = vestal["FLD-001"]
    f = rule.findings(["review", "pass", "not_evaluated", "info"], subject_layer="parcels",
                      subject_id=["P1", "P2", "P3", "P4"], measured=[1_234.5, 0.0, np.nan, 2.0], unit="acres",
                      detail=["zone AE", "zones X", "no data", 1.5])
    assert f["message"].tolist() == [
        "parcels P1: 1,234.5 acres in the area of special flood hazard, development permit required (zone AE).",
        "parcels P2: outside the area of special flood hazard (zones X).",
        "parcels P3: flood hazard not determined, not evaluated (no data).",
        "parcels P4: 1.5",  # info: "{subject_layer} {subject_id}: {detail}"
    ]
    assert f["title"].tolist() == [rule.title] * 4 and (f["citation"] == rule.citation).all()


def test_text_with_percent_and_braces_is_kept_verbatim(vestal):
    f = vestal["FLD-001"].findings("info", subject_layer="parcels", subject_id="P%s", detail="50 % of {x} %d")
    assert f["message"].iloc[0] == "parcels P%s: 50 % of {x} %d"


def test_one_subject_and_many_give_the_same_row(vestal):
    r = vestal["HRV-010"]
    many = r.findings(["violation", "pass"], subject_layer="haul_roads", subject_id=["R1", "R2"],
                      measured=[250.0, 10.0], threshold=200.0, unit="ft", detail=["a", "b"])
    one = r.findings("violation", subject_layer="haul_roads", subject_id="R1", measured=250.0, threshold=200.0,
                     unit="ft", detail="a")
    assert len(one) == 1 and one["message"].iloc[0] == many["message"].iloc[0] == (
        "haul_roads R1: 250 ft (horizontal length) steeper than 25 %, limit 200 ft (a).")


def test_waiver_note_on_every_message(vestal):
    r = copy.deepcopy(vestal["FLD-001"])
    r.waived = "variance granted"
    f = r.findings(["review", "pass"], subject_layer="parcels", subject_id=["P1", "P2"], detail="d")
    assert f["message"].str.endswith(" [waived: variance granted]").all()
    assert (f["waived"] == "variance granted").all()


def test_alignment_specs_are_applied():
    r = Rule(id="ABC-001", title="t", group="seqr", citation="c",
             messages={"default": "[{subject_id:>5}] [{detail:*<6}] [{unit:^5}]"})
    f = r.findings("info", subject_id=["A", "BBBBBBB"], unit="ft", detail="xy")
    assert f["message"].tolist() == ["[    A] [xy****] [ ft  ]", "[BBBBBBB] [xy****] [ ft  ]"]


@pytest.mark.parametrize(("template", "why"), [
    ("{subject_id.__class__.__mro__}", "is not a plain name"),
    ("{subject_id[0]}", "is not a plain name"),
    ("{}", "is not a plain name"),
    ("{0}", "is not a plain name"),
    ("{detail!r}", "uses a conversion"),
    ("{detail:>3000000000}", "only alignment and a width of at most 80"),
    ("{detail:>81}", "only alignment and a width of at most 80"),
    ("{measured:.2f}", "only alignment"),
    ("{detail:{unit}}", "only alignment"),
    ("{detail", "is not a valid template"),
    ("{slope_of_moon}", "is not a name this template may use"),
])
def test_templates_outside_the_grammar_are_refused(template, why):
    with pytest.raises(RulebookError, match=r"rule X-001 messages\.pass: .*" + why.replace("(", r"\(")):
        check_template(template, ["subject_id", "detail", "unit", "measured"], where="rule X-001 messages.pass")
    assert check_template("{detail:>80}", ["detail"], where="w")[0] == ("", "detail", ">80")


def test_concat_of_check_frames_equals_pandas_concat(vestal):
    # the frames of a group's checks (same columns and dtypes) are stacked column by column: the same
    # frame as pd.concat; frames that differ go through pd.concat
    r1, r2 = vestal["FLD-001"], vestal["FLD-002"]
    a = r1.findings(["review", "pass"], subject_layer="parcels", subject_id=["P1", "P2"], measured=[0.5, 0.0],
                    unit="acres", geometry=[Point(0, 0), Point(1, 1)], crs=2262, detail="d")
    b = r2.findings("pass", subject_layer="parcels", subject_id=["P1", "P2"], crs=2262)
    expected = gpd.GeoDataFrame(pd.concat([a, b], ignore_index=True), geometry="geometry", crs=2262)
    out = concat_findings([a, b])
    pd.testing.assert_frame_equal(out, expected)
    assert out.crs == expected.crs and out["threshold"].isna().all()
    c = b.assign(extra=1)
    pd.testing.assert_frame_equal(concat_findings([a, c]), gpd.GeoDataFrame(pd.concat([a, c], ignore_index=True),
                                                                            geometry="geometry", crs=2262))
