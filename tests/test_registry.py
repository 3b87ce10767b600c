"""Tests for geoconstraints.rulebook.registry.run_group: a failing check does not take the run down.

An exception in a check (a bug) makes that rule one run-wide ``not_evaluated`` finding naming
the error, with a logged warning; every other rule still runs and the command builds its
tables. A GeoConstraintsError (a problem of the input) still stops the run.
"""

from __future__ import annotations

import json
import logging

import pytest

import geoconstraints as gc
from geoconstraints.cli import main
from geoconstraints.commands import check_harvest, check_stormwater, screen_parcels
from geoconstraints.errors import FieldError
from geoconstraints.rulebook import registry

RB = gc.load_rulebook("vestal")


@pytest.fixture(scope="module")
def town():
    return gc.load_layers(gc.sample_path(), dem=gc.sample_path("dem.tif"))


def boom(ctx, rule):
    raise ZeroDivisionError("boom")


RUNS = {
    "harvest": lambda layers: check_harvest(layers, RB),
    "flood": lambda layers: screen_parcels(layers, RB, findings="all"),
    "stormwater": lambda layers: check_stormwater(layers, RB, rainfall=gc.sample_path("rainfall.csv"),
                                                  inspection_log=gc.sample_path("inspection_log.csv")),
}


# the rules whose extra per-subject columns feed the command's tables, and a run-wide one
@pytest.mark.parametrize("rule_id", ["HRV-025", "HRV-010", "FLD-001", "FLD-010", "SWP-007", "SWP-005"])
def test_a_failing_check_is_not_evaluated_and_the_others_run(rule_id, town, monkeypatch, caplog):
    group = RB[rule_id].group
    whole = RUNS[group](town)
    monkeypatch.setitem(registry.CHECKS, rule_id, boom)
    monkeypatch.setattr(registry, "RERAISE", False)
    with caplog.at_level(logging.WARNING, logger="geoconstraints.rulebook.registry"):
        res = RUNS[group](town)
    mine = res.findings[res.findings["rule_id"] == rule_id]
    assert len(mine) == 1 and mine["status"].iloc[0] == "not_evaluated" and mine["subject_id"].iloc[0] == ""
    assert mine["message"].iloc[0].startswith(f"{rule_id} not evaluated: its check failed (ZeroDivisionError: boom)")
    assert "bug" in mine["message"].iloc[0]
    others = res.findings[res.findings["rule_id"] != rule_id]
    expected = whole.findings[whole.findings["rule_id"] != rule_id]
    assert sorted(map(tuple, others[["rule_id", "subject_id", "status"]].to_numpy())) == \
        sorted(map(tuple, expected[["rule_id", "subject_id", "status"]].to_numpy()))
    assert any(f"rule {rule_id} could not be evaluated" in r.getMessage() for r in caplog.records)


def test_a_wrong_return_value_is_a_failed_check(town, monkeypatch):
    monkeypatch.setitem(registry.CHECKS, "FLD-010", lambda ctx, rule: "not a frame")
    monkeypatch.setattr(registry, "RERAISE", False)
    res = screen_parcels(town, RB)
    msg = res.findings.loc[res.findings["rule_id"] == "FLD-010", "message"].iloc[0]
    assert "TypeError: the check of FLD-010" in msg and "not a findings frame" in msg


def test_an_input_error_still_stops_the_run(town, monkeypatch):
    def missing(ctx, rule):
        raise FieldError("layer parcels: field X missing")

    monkeypatch.setitem(registry.CHECKS, "FLD-010", missing)
    with pytest.raises(FieldError, match="field X missing"):
        screen_parcels(town, RB)


def test_a_signal_a_check_swallowed_stops_before_the_next_rule(town, monkeypatch):
    # a Ctrl-C whose exception a library cleared inside a check (geoconstraints.interrupt): the rules after it
    # do not run, and it is not turned into a failed check's not_evaluated finding
    from geoconstraints import interrupt

    ran: list[str] = []
    first, second = [r.id for r in RB.require_group("flood")][:2]

    def record(rule_id):
        real = registry.CHECKS[rule_id]

        def fn(ctx, rule):
            ran.append(rule.id)
            if rule.id == first:
                interrupt.raised(KeyboardInterrupt())  # the handler ran, its exception was swallowed
            return real(ctx, rule)
        return fn

    for rid in (first, second):
        monkeypatch.setitem(registry.CHECKS, rid, record(rid))
    monkeypatch.setattr(registry, "RERAISE", False)
    try:
        with pytest.raises(KeyboardInterrupt):
            screen_parcels(town, RB)
    finally:
        interrupt.forget()
    assert ran == [first]


def test_reraise_for_debugging(town, monkeypatch):
    monkeypatch.setitem(registry.CHECKS, "FLD-010", boom)
    monkeypatch.setattr(registry, "RERAISE", True)
    with pytest.raises(ZeroDivisionError):
        screen_parcels(town, RB)


def test_cli_run_completes_and_debug_shows_the_traceback(runner, tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "RERAISE", False)  # restored after the --debug run below set it
    monkeypatch.setitem(registry.CHECKS, "FLD-010", boom)
    res = runner.invoke(main, ["screen", str(gc.sample_path()), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert "warning: rule FLD-010 could not be evaluated: its check failed (ZeroDivisionError: boom)" in res.stderr
    found = json.loads((tmp_path / "out" / "findings.geojson").read_text("utf-8"))["features"]
    fld10 = [f["properties"] for f in found if f["properties"]["rule_id"] == "FLD-010"]
    assert [f["status"] for f in fld10] == ["not_evaluated"]
    assert any(f["properties"]["rule_id"] == "FLD-001" for f in found)
    res = runner.invoke(main, ["--debug", "screen", str(gc.sample_path()), "--out", str(tmp_path / "out2")])
    assert isinstance(res.exception, ZeroDivisionError)


# ------------------------------------------------------------------------------------------
# keep=: the findings of some statuses built, every row's status recorded (a screening's person scope)

def test_keep_gives_each_checks_statuses_and_only_the_findings_kept(town):
    from geoconstraints.rulebook.findings import PERSON_STATUSES, Outcomes

    full = screen_parcels(town, RB, findings="all")
    ctx = _flood_context(town)
    every = registry.run_checks(RB, "flood", ctx)
    lean = registry.run_checks(RB, "flood", ctx, keep=PERSON_STATUSES)
    assert len(lean) == len(every) == len(RB.require_group("flood"))
    for whole, got in zip(every, lean):
        if isinstance(got, Outcomes):  # the statuses of every row, the rows of the statuses kept
            assert got.rank.tolist() == [gc.STATUSES.index(s) for s in whole["status"]]
            assert got.subject_id.tolist() == whole["subject_id"].tolist()
            want = whole[whole["status"].isin(PERSON_STATUSES).to_numpy()].reset_index(drop=True)
            assert got.frame["status"].isin(PERSON_STATUSES).all()
            cols = ["rule_id", "status", "subject_id", "message", "measured", "threshold", "geometry"]
            assert got.frame[cols].reset_index(drop=True).equals(want[cols])
        else:  # no row left out (a site-only rule gives none; FLD-010's run-wide info): the frame is the whole frame
            assert (whole["status"].isin(PERSON_STATUSES) | (whole["subject_id"] == "")).all()
            assert got[["rule_id", "status", "subject_id", "message"]].equals(whole[["rule_id", "status", "subject_id", "message"]])
    assert sum(isinstance(o, Outcomes) for o in lean) >= 4
    assert full.n_findings == sum(len(f) for f in every)


def _flood_context(layers):
    """The context screen_parcels gives the flood checks (the table of the sample town)."""
    import numpy as np

    from geoconstraints.commands import _measured, _other_cover_layers, _subject_table
    from geoconstraints.geometry.overlay import flood_metrics
    from geoconstraints.rules.flood import FloodContext, flood_zone_spec

    parcels, flood = layers.get_layer("parcels"), layers.get_layer("flood_zones")
    extra, given = _other_cover_layers(layers, parcels)
    m, overlaps = flood_metrics(parcels, flood, flood_zone_spec(RB), extra=extra)
    table = _subject_table(parcels, "parcel_id", m, layers, given)
    for c in ("bfe_ft", "bfe_method", "bfe_datum", "bfe_note"):
        table[c] = np.nan if c == "bfe_ft" else ""
    return FloodContext("screen", layers, _measured(table, "parcel_id", m), "parcels", True, overlaps)


def test_keep_runs_again_a_check_that_changes_its_frame(town, monkeypatch):
    # a check that filters (or stacks) the frame Rule.findings built cannot say the status of the rows it
    # was not given: it runs again building every row, and its whole frame is split like any other
    from geoconstraints.result import split_scope
    from geoconstraints.rulebook.findings import PERSON_STATUSES, Outcomes

    original = registry.CHECKS["FLD-001"]
    calls = []

    def reordered(ctx, rule):
        calls.append(1)
        f = original(ctx, rule)
        return f.iloc[::-1].reset_index(drop=True)  # the same rows, another frame

    monkeypatch.setitem(registry.CHECKS, "FLD-001", reordered)
    ctx = _flood_context(town)
    lean = registry.run_checks(RB, "flood", ctx, keep=PERSON_STATUSES)
    assert len(calls) == 2  # once building the kept rows, once every row
    got = lean[[r.id for r in RB.require_group("flood")].index("FLD-001")]
    assert not isinstance(got, Outcomes) and len(got) == len(ctx.table)
    assert set(got["status"]) - set(PERSON_STATUSES)  # pass/info rows are there, split_scope drops them
    kept, omitted = split_scope(lean, "person")
    assert kept["status"].isin(PERSON_STATUSES).sum() == len(kept) - 1  # and the run-wide FLD-010 info
    assert kept.loc[~kept["status"].isin(PERSON_STATUSES), ["rule_id", "subject_id"]].values.tolist() == [["FLD-010", ""]]
    assert omitted.loc[omitted["rule_id"] == "FLD-001", "n"].sum() == (~got["status"].isin(PERSON_STATUSES)).sum()


def test_keep_a_failing_check_is_still_one_not_evaluated_finding(town, monkeypatch):
    from geoconstraints.rulebook.findings import PERSON_STATUSES

    monkeypatch.setitem(registry.CHECKS, "FLD-002", boom)
    monkeypatch.setattr(registry, "RERAISE", False)
    lean = registry.run_checks(RB, "flood", _flood_context(town), keep=PERSON_STATUSES)
    f = lean[[r.id for r in RB.require_group("flood")].index("FLD-002")]
    assert f["status"].tolist() == ["not_evaluated"] and "ZeroDivisionError: boom" in f["message"].iloc[0]
