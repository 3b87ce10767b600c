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
