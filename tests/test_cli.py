"""Tests for geoconstraints.cli: the way a user runs it (CliRunner and real processes).

Exit codes: 0 done; 1 only with --fail-on; 2 bad input or usage, as one line on stderr and never
a traceback; 141 when the reader of stdout goes away (``geoconstraints rules | head``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from catalogue import flood_zones, parcels, sample_gpkg, screen, write_gpkg
from conftest import tree_hashes

from geoconstraints import cli
from geoconstraints.cli import main
from geoconstraints.errors import InputError

EXE = Path(sys.executable).with_name("geoconstraints")


def test_help_lists_commands(runner):
    res = runner.invoke(main, ["--help"])
    assert res.exit_code == 0
    for cmd in ("rules", "layers", "harvest", "screen", "flood-site", "stormwater", "seqr", "demo"):
        assert cmd in res.stdout


def test_version(runner):
    res = runner.invoke(main, ["--version"])
    assert res.exit_code == 0 and "version" in res.stdout


def test_screen_options_are_unique(runner):
    # a second --flood-zones-preliminary option made click warn on every `screen` run
    res = runner.invoke(main, ["screen", "--help"])
    assert res.exit_code == 0
    assert "UserWarning" not in res.output and "used more than once" not in res.output
    assert res.stdout.count("--flood-zones-preliminary") == 1


def test_usage_error_exits_2(runner):
    res = runner.invoke(main, ["rules", "--format", "xml"])
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_error_is_one_line(runner, monkeypatch):
    def boom(name):
        raise InputError("first line\nsecond line")

    monkeypatch.setattr("geoconstraints.cli.load_rulebook", boom)
    res = runner.invoke(main, ["rules"])
    assert res.exit_code == 2
    assert res.stderr == "error: first line second line\n"


def test_unexpected_error_is_one_line_and_debug_reraises(runner, monkeypatch):
    def boom(name):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr("geoconstraints.cli.load_rulebook", boom)
    res = runner.invoke(main, ["rules"])
    assert res.exit_code == 2
    assert res.stderr.startswith("error: could not complete (ZeroDivisionError: division by zero)")
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.output
    res = runner.invoke(main, ["--debug", "rules"])
    assert isinstance(res.exception, ZeroDivisionError)


def test_broken_pipe_is_quiet_in_process(runner, monkeypatch):
    def closed(*a, **k):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli.click, "echo", closed)
    res = runner.invoke(main, ["rules"])
    assert res.exit_code == 141
    assert res.stderr == ""


def test_broken_pipe_is_quiet_for_real():
    # like `geoconstraints rules | head -0`: the reader is gone before the first write
    proc = subprocess.Popen([str(EXE), "rules"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_real_process_bad_input(tmp_path):
    (tmp_path / "empty.gpkg").write_bytes(b"")
    run = subprocess.run([str(EXE), "screen", str(tmp_path / "empty.gpkg"), "--out", str(tmp_path / "out")], check=False,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("error: file ")
    assert "empty.gpkg is empty (0 bytes). Export the layer again" in run.stderr
    assert not (tmp_path / "out").exists()


def test_input_errors_come_before_domain_import(runner, tmp_path, monkeypatch):
    # a broken or unfinished domain module must not hide the input error
    monkeypatch.setitem(sys.modules, "geoconstraints.flood", None)
    monkeypatch.setitem(sys.modules, "geoconstraints.harvest", None)
    p = parcels()
    p.loc[2, "parcel_id"] = "P1"
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"parcels": p})
    res = runner.invoke(main, ["--strict", "screen", str(gpkg), "--out", str(tmp_path / "out")])
    assert res.exit_code == 2
    assert "duplicate ids in field parcel_id: P1" in res.stderr
    res = runner.invoke(main, ["--strict", "harvest", str(gpkg), "--out", str(tmp_path / "out")])
    assert "duplicate ids" in res.stderr


def test_out_checked_before_the_check_runs(runner, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "geoconstraints.flood", None)  # would fail if reached
    gpkg = sample_gpkg(tmp_path)
    res = runner.invoke(main, ["screen", str(gpkg), "--out", str(gpkg)])
    assert res.exit_code == 2
    assert "is an existing file (one of the inputs)" in res.stderr


def test_layers_command(runner, tmp_path):
    gpkg = write_gpkg(tmp_path / "town.gpkg", {"parcels": parcels(), "flood_zones": flood_zones(4269)})
    before = tree_hashes(tmp_path)
    res = runner.invoke(main, ["layers", str(gpkg)])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] == "town.gpkg: 2 layers"
    assert "layer parcels -> role parcels: 3 features (Polygon), CRS EPSG:2261" in res.stdout
    assert "layer flood_zones -> role flood_zones: 2 features (Polygon), CRS EPSG:4269" in res.stdout
    assert tree_hashes(tmp_path) == before


def test_layers_command_unreadable_file(runner, tmp_path):
    good = sample_gpkg(tmp_path)
    bad = tmp_path / "bad.gpkg"
    bad.write_text("garbage" * 100)
    res = runner.invoke(main, ["layers", str(good), str(bad)])
    assert res.exit_code == 2
    assert "town.gpkg: 2 layers" in res.stdout  # the good file is still described
    assert "bad.gpkg" in res.stdout and "cannot be read" in res.stdout
    assert "Traceback" not in res.output


def test_layers_warnings_not_repeated_on_stderr(runner, tmp_path):
    p = parcels()
    p.loc[1, "parcel_id"] = None
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"parcels": p})
    res = runner.invoke(main, ["layers", str(gpkg)])
    assert res.exit_code == 0
    assert "warning: layer parcels (t.gpkg:parcels): id field parcel_id is empty in rows 2" in res.stdout
    assert res.stderr == ""


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_rules_formats_parse(runner, fmt):
    import io
    import json

    import pandas as pd

    res = runner.invoke(main, ["rules", "--format", fmt])
    assert res.exit_code == 0
    body = res.stdout.split("\n", 1)[1]
    table = pd.DataFrame(json.loads(body)) if fmt == "json" else pd.read_csv(io.StringIO(body))
    assert len(table) == 36 and {"id", "title", "citation", "thresholds"} <= set(table.columns)



def test_screen_output_limits(runner, tmp_path):
    # a whole county's report and map summarise; here 3 parcels with tiny limits show the notes
    gpkg = sample_gpkg(tmp_path)
    res = runner.invoke(main, screen(tmp_path, gpkg, "--map-max-features", "1", "--report-max-parcels", "1",
                                     "--report-max-findings", "0"))
    assert res.exit_code == 0, res.output
    page = (tmp_path / "out" / "report.html").read_text("utf-8")
    assert "This table lists 1 of the 3 parcels, the most severe first (by worst status); the other 2 are left out" in page
    assert 'data-rule="FLD-001" data-left-out="' in page
    page = (tmp_path / "out" / "map.html").read_text("utf-8")
    assert "Not drawn, to keep this page small enough for a browser (over 1 features)" in page
    assert "every finding in findings.geojson" in page
    bad = runner.invoke(main, screen(tmp_path, gpkg, "--map-max-features", "-1"))
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_harvest_from_role_options_only_never_passes_what_it_cannot_check(tmp_path):
    # PLAN is optional like screen's LAYERS: the roles can all come from --ROLE options. With only the
    # harvest areas given (no DEM, streams, roads, zoning, landings ...) nothing may be reported as pass.
    import json

    from click.testing import CliRunner

    from geoconstraints import sample_path
    from geoconstraints.cli import main

    out = tmp_path / "h"
    r = CliRunner().invoke(main, ["harvest", "--harvest-area", f"{sample_path()}:harvest_area", "--out", str(out)])
    assert r.exit_code == 0, r.output
    props = [f["properties"] for f in json.loads((out / "findings.geojson").read_text())["features"]]
    assert props and not [p for p in props if p["status"] == "pass"]
    assert {p["status"] for p in props if p["rule_id"] == "HRV-010"} == {"not_evaluated"}
