"""Tests for geoconstraints.findings: the Finding record and the findings table."""

from __future__ import annotations

import dataclasses

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from shapely.geometry import Point

from geoconstraints.rulebook.findings import (
    FINDING_COLUMNS,
    STATUSES,
    Finding,
    empty_findings,
    findings_frame,
    status_counts,
    worst_status,
)

SPEC_PROPERTIES = ["rule_id", "rulebook", "status", "citation", "subject_layer", "subject_id", "measured",
                   "threshold", "unit", "message"]  # SPEC §5


def _f(rule="HRV-010", status="pass", sid="1", **kw):
    return Finding(rule_id=rule, rulebook="vestal", status=status, citation="c", subject_id=sid, **kw)


def test_columns_start_with_spec_properties():
    assert FINDING_COLUMNS[:10] == SPEC_PROPERTIES
    assert FINDING_COLUMNS[10:] == ["title", "reading", "waived"]
    assert STATUSES == ("violation", "review", "not_evaluated", "info", "pass")


def test_bad_status():
    with pytest.raises(ValueError, match="status 'fail' is not one of violation, review"):
        _f(status="fail")


def test_finding_is_frozen():
    f = _f()
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.status = "violation"  # type: ignore[misc]


def test_frame_sorted_and_typed():
    items = [
        _f("HRV-010", "pass", "b", measured=1.0),
        _f("HRV-010", "violation", "c", measured=3.0, threshold=2.0, geometry=Point(1, 1)),
        _f("FLD-001", "not_evaluated", "a"),
    ]
    frame = gpd.GeoDataFrame({c: ["x"] for c in FINDING_COLUMNS}, geometry=[Point(0, 0)], crs="EPSG:2261")
    frame["rule_id"], frame["status"], frame["measured"], frame["threshold"] = "HRV-010", "review", 7, None
    out = findings_frame(items + [frame], crs="EPSG:2261")
    assert list(out.columns) == FINDING_COLUMNS + ["geometry"]
    # by rule id, then severity (violation first), then subject
    assert list(zip(out["rule_id"], out["status"])) == [
        ("FLD-001", "not_evaluated"), ("HRV-010", "violation"), ("HRV-010", "review"), ("HRV-010", "pass")]
    assert out["measured"].dtype == "float64" and out["measured"].tolist()[1:3] == [3.0, 7.0]
    assert np.isnan(out["threshold"].iloc[0])
    assert out["waived"].tolist() == ["", "", "x", ""]  # missing text -> "", never "None"
    assert out.crs.to_epsg() == 2261
    assert out.geometry.iloc[0] is None and out.geometry.iloc[1] == Point(1, 1)


def test_frame_empty():
    out = findings_frame([], crs="EPSG:2261")
    assert len(out) == 0 and list(out.columns) == FINDING_COLUMNS + ["geometry"]
    assert out.crs.to_epsg() == 2261
    assert len(empty_findings()) == 0


def test_counts_and_worst():
    df = pd.DataFrame({"status": ["pass", "review", "review", "info"]})
    assert status_counts(df) == {"violation": 0, "review": 2, "not_evaluated": 0, "info": 1, "pass": 1}
    assert status_counts(empty_findings()) == dict.fromkeys(STATUSES, 0)
    assert worst_status(df["status"]) == "review"
    assert worst_status(pd.Series([], dtype=object)) == "pass"
    assert worst_status(pd.Series(["info", "not_evaluated"])) == "not_evaluated"


def test_vectorized_messages_match_rule_message():
    """Rule.findings fills templates by array concatenation; the text must equal Rule.message's, row by row."""
    import copy

    from geoconstraints.rulebook.loader import load_rulebook

    rule = load_rulebook("vestal")["FLD-001"]
    measured = np.array([0.0, -0.0, 1.005, 0.125, 1e6, 999_999.996, np.nan, -3.5, 12_345.678, np.inf])
    status = np.array(["review", "pass", "info", "not_evaluated", "review", "pass", "info", "review", "pass",
                       "review"], dtype=object)
    detail = np.array(["AE", None, 1.5, 2, np.nan, "a/b %s {x}", "", "X", True, np.float32(0.1)], dtype=object)
    ids = [f"P{i}" for i in range(len(measured))]
    waived = copy.deepcopy(rule)
    waived.waived = "variance granted"
    spec = copy.deepcopy(rule)  # a format spec: filled row by row
    spec.messages = {"default": "{subject_id} {measured:>8} {detail!r} {min_overlap_sqft}"}
    for r in (rule, waived, spec):
        f = r.findings(status, subject_layer="parcels", subject_id=ids, measured=measured,
                       threshold=measured[::-1], unit="acres", detail=detail)
        expect = [r.message(s, subject_layer="parcels", subject_id=i, measured=None if np.isnan(m) else float(m),
                            threshold=None if np.isnan(t) else float(t), unit="acres", detail=d)
                  for s, i, m, t, d in zip(status, ids, measured, measured[::-1], detail)]
        assert f["message"].tolist() == expect
    # spot values by hand: 1e6 -> "1,000,000" (the no-decimals branch); -3.5 -> "-3.5"; detail 1.5 -> "1.5"
    f = rule.findings(status, subject_layer="parcels", subject_id=ids, measured=measured, detail=detail)
    assert f["message"][4].startswith("parcels P4: 1,000,000 acres in the area of special flood hazard")
    assert f["message"][2] == "parcels P2: 1.5"  # info: "{subject_layer} {subject_id}: {detail}"
    assert f["message"][7].startswith("parcels P7: -3.5 acres")
