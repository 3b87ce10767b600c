"""Tests for geoconstraints.cli: the way a user runs it (CliRunner and real processes).

Exit codes: 0 done; 1 only with --fail-on; 2 bad input or usage, as one line on stderr and never
a traceback; 141 when the reader of stdout goes away (``geoconstraints rules | head``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from catalogue import flood_zones, parcels, sample_gpkg, screen, write_gpkg
from conftest import tree_hashes

from geoconstraints import cli, interrupt
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


# ------------------------------------------------------------------------------------------
# the end of the process: exit handlers, flushed streams, the exit status, nothing freed

def test_console_script_is_run():
    # the installed script and `python -m geoconstraints.cli` end through cli.run
    assert "from geoconstraints.cli import run" in EXE.read_text()


class Ended(BaseException):
    pass


@pytest.fixture()
def ended(monkeypatch):
    calls: list = []
    monkeypatch.setattr(cli.atexit, "_run_exitfuncs", lambda: calls.append("exit handlers"))

    def _exit(status):
        calls.append(status)
        raise Ended

    monkeypatch.setattr(cli.os, "_exit", _exit)
    return calls


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (2, 2), (141, 141), ("boom", 1)])
def test_end_process_status(ended, code, status, capsys):
    with pytest.raises(Ended):
        cli.end_process(code)
    assert ended == ["exit handlers", status]  # the handlers ran before the end
    assert capsys.readouterr().err == ("boom\n" if code == "boom" else "")


def test_end_process_waits_for_a_running_thread(ended):
    import threading
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, daemon=False)
    worker.start()
    try:
        with pytest.raises(SystemExit) as exc:  # Python's usual exit, which joins the thread
            cli.end_process(2)
        assert exc.value.code == 2 and ended == []
    finally:
        stop.set()
        worker.join()
    hold = threading.Event()
    daemon = threading.Thread(target=hold.wait, daemon=True)  # a daemon thread is not waited for
    daemon.start()
    try:
        with pytest.raises(Ended):
            cli.end_process(0)
        assert ended == ["exit handlers", 0]
    finally:
        hold.set()
        daemon.join()


def test_real_process_ends_after_its_exit_handlers(tmp_path):
    # a real os._exit: an exit handler runs, the output piped is complete, the status is main's
    marker = tmp_path / "handler-ran"
    code = ("import atexit, pathlib, sys\n"
            f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'yes')\n"
            "from geoconstraints import cli\n"
            "sys.argv = ['geoconstraints'] + sys.argv[1:]\n"
            "cli.run()\n")
    done = subprocess.run([sys.executable, "-c", code, "rules"], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "yes"
    listed = subprocess.run([sys.executable, "-c", code, "rules", "--format", "json"], check=False, capture_output=True,
                            text=True, timeout=120)
    assert listed.returncode == 0 and len(json.loads(listed.stdout.split("\n", 1)[1])) >= 30  # flushed: parsed whole
    bad = subprocess.run([sys.executable, "-c", code, "screen", str(tmp_path / "none.gpkg"), "--out",
                          str(tmp_path / "out")], check=False, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and bad.stderr.count("\n") == 1
    assert "Traceback" not in bad.stderr


def test_cli_imports_no_writer_it_may_not_need():
    # psycopg (--out-db), pypdf and matplotlib's PDF backend (siteplan) come when they are used
    code = ("import sys, geoconstraints.cli\n"
            "print(' '.join(m for m in ('psycopg', 'pypdf', 'matplotlib.backends.backend_pdf') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "", done.stdout + done.stderr


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


def test_rules_markdown_is_a_table(runner):
    # a Markdown table with or without tabulate: header, rule line, one row per rule, same cells per row
    res = runner.invoke(main, ["rules", "--rulebook", "lockport", "--format", "markdown"])
    assert res.exit_code == 0
    lines = res.stdout.splitlines()[1:]
    assert lines[0].startswith("| id | title |") and set(lines[1]) <= set("|-")
    assert len(lines) == 2 + 8
    cells = [len(line.replace("\\|", "").split("|")) for line in lines]
    assert len(set(cells)) == 1 and lines[2].startswith("| SWP-001 |")


def test_screen_output_limits(runner, tmp_path):
    # a whole county's report and map summarise; here 3 parcels with tiny limits show the notes
    gpkg = sample_gpkg(tmp_path)
    res = runner.invoke(main, screen(tmp_path, gpkg, "--map-max-features", "1", "--report-max-parcels", "1",
                                     "--report-max-findings", "0"))
    assert res.exit_code == 0, res.output
    page = (tmp_path / "out" / "report.html").read_text("utf-8")
    assert "This table lists the 1 most severe of the 3 parcels (by worst status" in page
    assert "the other 2 are left out of this report" in page
    assert 'data-rule="FLD-001" data-left-out="2"' in page  # its 2 review findings; its pass is not in memory:
    assert 'data-rule="FLD-001" data-omitted="1"' in page  # counted, and the note names status_FLD_001
    page = (tmp_path / "out" / "map.html").read_text("utf-8")
    assert "Not drawn, to keep this page small enough for a browser (over 1 features)" in page
    # the screen kept only the findings that need a person: the note says where the pass and info outcomes are
    assert "the findings that need a person are in findings.geojson" in page and "every finding is in" not in page
    assert "each parcel\\u0027s outcome (worst_status, status_\\u003crule\\u003e) in parcels.csv" in page
    bad = runner.invoke(main, screen(tmp_path, gpkg, "--map-max-features", "-1"))
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_screen_findings_all_still_writes_every_finding(runner, tmp_path):
    # screen keeps only the findings that need a person in memory by default; --findings all keeps
    # (and writes) every one, pass and info included; the summary line counts every finding either way
    import pandas as pd

    from geoconstraints import load_layers, load_rulebook, screen_parcels

    gpkg = sample_gpkg(tmp_path)
    every = screen_parcels(load_layers(gpkg), load_rulebook("vestal"), findings="all")
    lines = {}
    for scope in ("person", "all"):
        res = runner.invoke(main, screen(tmp_path / scope, gpkg, "--findings", scope))
        assert res.exit_code == 0, res.output
        lines[scope] = res.output.splitlines()[0]
        got = pd.read_csv(tmp_path / scope / "out" / "findings.csv", dtype=str, keep_default_na=False)
        want = every.findings if scope == "all" else every.findings[every.findings["status"].isin(
            ["violation", "review", "not_evaluated"]) | (every.findings["subject_id"] == "")]  # and FLD-010's info
        assert got[["rule_id", "status", "subject_id"]].values.tolist() == \
            want[["rule_id", "status", "subject_id"]].values.tolist(), scope
        prov = json.loads((tmp_path / scope / "out" / "provenance.json").read_text("utf-8"))
        assert prov["findings_scope"] == scope and prov["findings_total"] == every.counts()
    # FLD-001 1, FLD-002 3, FLD-005 1 (the parcel outside the SFHA; the two in it under 5 acres: info), FLD-006 1
    assert (got["status"] == "pass").sum() == every.counts()["pass"] == 6
    assert lines["person"] == lines["all"] == "screen: 16 findings (4 review, 6 info, 6 pass)"


def _map_text(page: str) -> str:
    """map.html with the legend JSON's escapes undone."""
    return page.replace("\\u0027", "'").replace("\\u003c", "<").replace("\\u003e", ">")


def test_screen_parcel_report_and_map_say_only_what_the_findings_files_hold(runner, tmp_path):
    # --parcel keeps every finding in memory (the handout lists the parcel's pass and info ones), but the
    # findings files are those of the default scope (person): report.html and map.html list, count and
    # send a reader to what those files hold, as the same screening without --parcel does
    import re
    from html import unescape

    gpkg = sample_gpkg(tmp_path)
    for name, extra in (("default", ()), ("parcel", ("--parcel", "P1"))):
        res = runner.invoke(main, screen(tmp_path / name, gpkg, "--outputs", "report,geojson,csv,map", *extra))
        assert res.exit_code == 0, res.output
    out = tmp_path / "parcel" / "out"
    prov = json.loads((out / "provenance.json").read_text("utf-8"))
    feats = json.loads((out / "findings.geojson").read_text("utf-8"))["features"]
    rows = (out / "findings.csv").read_bytes().count(b"\r\n") - 1
    assert prov["findings_scope"] == "person" and sum(prov["findings_written"].values()) == len(feats) == rows
    assert prov["findings_total"]["pass"] > 0 and not [f for f in feats if f["properties"]["status"] == "pass"]
    page = unescape((out / "report.html").read_text("utf-8"))
    assert "every one in findings.geojson" not in page and "all findings are in" not in page
    # the counts it prints: every finding, less those it says are not in the files, are the files' rows
    total, left = re.search(r"Findings by status: ([\d,]+) in all; ([\d,]+) [a-z ]+ findings are not kept", page).groups()
    assert int(total.replace(",", "")) == sum(prov["findings_total"].values())
    assert int(total.replace(",", "")) - int(left.replace(",", "")) == len(feats)
    assert sum(int(n) for n in re.findall(r'data-omitted="(\d+)"', page)) == int(left.replace(",", ""))
    assert "pass FLD-002 findings, not in findings.geojson (findings scope person)" in page
    assert not re.findall(r'<tr><td><span class="badge pass">', page)  # no pass finding listed as if in the files
    # the map draws what the files hold, as without --parcel, and says the pass findings are not in them
    data = [re.search(r'id="gc-findings-data">(.*?)</script>', (tmp_path / d / "out" / "map.html").read_text("utf-8"),
                      re.DOTALL).group(1) for d in ("default", "parcel")]
    assert data[0] == data[1]
    assert f"{prov['findings_total']['pass']:,} not in findings.geojson, not drawn" in _map_text(
        (out / "map.html").read_text("utf-8"))
    # the handout still has the parcel's pass findings (why --parcel keeps them all)
    assert re.search(r"Passes: FLD-\d{3}", unescape(re.sub(r"<[^>]+>", "", (out / "report_parcel_P1.html").read_text("utf-8"))))


def test_screen_writes_the_run_wide_flood_map_finding_in_every_scope(runner, tmp_path):
    # FLD-010 (the flood map is not the adopted one: info) is about no parcel, so no status column holds
    # it: a default screen (findings scope person) keeps it and writes it, and the report says it
    import re
    from html import unescape

    import pandas as pd

    from geoconstraints import sample_path

    res = runner.invoke(main, screen(tmp_path, sample_path("vestal_sample.gpkg"), "--outputs", "report,geojson,csv"))
    assert res.exit_code == 0, res.output
    out = tmp_path / "out"
    csv = pd.read_csv(out / "findings.csv", dtype=str, keep_default_na=False)
    fld10 = csv[csv["rule_id"] == "FLD-010"]
    assert fld10[["status", "subject_id"]].values.tolist() == [["info", ""]]
    message = fld10["message"].iloc[0]
    assert "36007C" in message and "adopted map is 360057" in message
    feats = json.loads((out / "findings.geojson").read_text("utf-8"))["features"]
    got = [f for f in feats if f["properties"]["rule_id"] == "FLD-010"]
    assert len(got) == 1 and got[0]["properties"]["message"] == message and got[0]["geometry"] is None
    prov = json.loads((out / "provenance.json").read_text("utf-8"))
    assert prov["findings_scope"] == "person" and prov["findings_written"]["info"] == 1
    assert sum(prov["findings_written"].values()) == len(feats) == len(csv)
    page = (out / "report.html").read_text("utf-8")
    section = re.search(r'<div class="rule" id="rule-FLD-010">(.*?)(?:<div class="rule"|</section>)', page,
                        re.DOTALL).group(1)
    assert message in unescape(section) and "data-omitted" not in section
    # the report's counts: those not written are the per-parcel ones (status columns), the rest are the files'
    total, left = re.search(r"Findings by status: ([\d,]+) in all; ([\d,]+) [a-z ]+ findings are not kept",
                            unescape(page)).groups()
    assert int(total.replace(",", "")) - int(left.replace(",", "")) == len(csv)


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


# ------------------------------------------------------------------------------------------
# the machine's refusals: a full disk, no permission

def test_disk_full_is_named(runner, tmp_path, monkeypatch):
    # a real ENOSPC from the kernel: /dev/full refuses every write
    def write_to_full_disk(result, out, **kw):
        with open("/dev/full", "w") as fh:
            fh.write("x" * 100_000)
            fh.flush()

    monkeypatch.setattr(cli, "write_result", write_to_full_disk)
    res = runner.invoke(main, screen(tmp_path, sample_gpkg(tmp_path)))
    assert res.exit_code == 2
    assert res.stderr == f"error: no space left on device writing {tmp_path / 'out'}. Free some space or choose another --out\n"


def test_gdal_write_failure_on_a_nearly_full_disk_is_named(runner, tmp_path, monkeypatch):
    # GDAL says only "Cannot write feature" when the disk fills: the free space of --out tells
    import pyogrio.errors

    def gdal_fails(result, out, **kw):
        raise pyogrio.errors.FeatureError("Could not add feature to layer at index 341: Cannot write feature")

    monkeypatch.setattr(cli, "write_result", gdal_fails)
    monkeypatch.setattr(cli.shutil, "disk_usage", lambda p: type("U", (), {"free": 200_000})())
    res = runner.invoke(main, screen(tmp_path, sample_gpkg(tmp_path)))
    assert res.exit_code == 2 and "no space left on device writing" in res.stderr
    monkeypatch.setattr(cli.shutil, "disk_usage", lambda p: type("U", (), {"free": 50 << 30})())
    res = runner.invoke(main, screen(tmp_path, sample_gpkg(tmp_path)))
    assert res.exit_code == 2 and res.stderr.startswith("error: could not complete (FeatureError")


def test_read_only_out_is_named(runner, tmp_path, monkeypatch):
    import errno

    def denied(result, out, **kw):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "out" / "findings.geojson"))

    monkeypatch.setattr(cli, "write_result", denied)
    res = runner.invoke(main, screen(tmp_path, sample_gpkg(tmp_path)))
    assert res.exit_code == 2 and "cannot write" in res.stderr and "(permission denied)" in res.stderr


# ------------------------------------------------------------------------------------------
# layers --project (dry run) and --json

def test_layers_project_dry_run_lists_roles_fields_and_problems(runner, tmp_path):
    sample_gpkg(tmp_path)
    proj = tmp_path / "p.toml"
    proj.write_text('[layers.parcels]\npath = "town.gpkg"\nlayer = "parcels"\nfields = { owner = "zoning" }\n'
                    '[layers.flood_zones]\npath = "town.gpkg"\nlayer = "flood_zones"\nfields = { FLD_ZONE = "ZONE" }\n')
    res = runner.invoke(main, ["layers", "--project", str(proj)])
    assert res.exit_code == 2  # a role has a problem
    out = res.stdout
    assert "p.toml: project file, 2 roles" in out
    assert "role parcels <- town.gpkg:parcels" in out and "mapped: owner <- zoning" in out
    assert "fields found: parcel_id, owner" in out and "optional fields missing: zoning, land_use" in out
    assert "role flood_zones <- town.gpkg:flood_zones" in out and "field 'ZONE' (mapped to FLD_ZONE) not found" in out
    res = runner.invoke(main, ["layers", "--project", str(proj), "--json"])
    d = json.loads(res.stdout)
    roles = {e["role"]: e for e in d["layers"]}
    assert roles["parcels"]["mapped"] == {"owner": "zoning"} and roles["parcels"]["problem"] is None
    assert "not found" in roles["flood_zones"]["problem"] and d["working_crs"] is None


def test_layers_json_describes_every_file(runner, tmp_path):
    gpkg = write_gpkg(tmp_path / "town.gpkg", {"parcels": parcels(), "lots": parcels(2)})
    res = runner.invoke(main, ["layers", "--json", str(gpkg), str(tmp_path / "missing.gpkg")])
    assert res.exit_code == 2  # the missing file
    files = json.loads(res.stdout)
    assert [f["source"] for f in files] == ["town.gpkg", "missing.gpkg"]
    town, missing = files
    assert town["ok"] and not missing["ok"] and "does not exist" in missing["problem"]
    by_layer = {e["layer"]: e for e in town["layers"]}
    assert by_layer["parcels"]["role"] == "parcels" and by_layer["parcels"]["features"] == 3
    assert by_layer["parcels"]["working_crs"] == "EPSG:2261" and by_layer["parcels"]["fields"] == ["parcel_id", "zoning"]
    w, s, e, n = by_layer["parcels"]["extent_lonlat"]
    assert -76.06 < w < e < -76.04 and 42.07 < s < n < 42.09
    assert by_layer["lots"]["role"] is None and by_layer["lots"]["raw"]["features"] == 2


def test_layers_needs_a_file_or_a_project(runner):
    res = runner.invoke(main, ["layers"])
    assert res.exit_code == 2 and res.stderr.startswith("error: give one or more FILEs, or --project FILE")


# ------------------------------------------------------------------------------------------
# the project's rulebook, the --strict option, GDAL's warnings

def test_project_rulebook_is_used_unless_rulebook_is_given(runner, tmp_path):
    from catalogue import harvest_area

    write_gpkg(tmp_path / "site.gpkg", {"disturbance": harvest_area()})
    proj = tmp_path / "p.toml"
    proj.write_text('rulebook = "lockport"\n[layers.disturbance]\npath = "site.gpkg"\nlayer = "disturbance"\n')
    res = runner.invoke(main, ["stormwater", "--project", str(proj), "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    props = json.loads((tmp_path / "a" / "findings.geojson").read_text())["features"][0]["properties"]
    assert props["rulebook"] == "lockport"
    res = runner.invoke(main, ["stormwater", "--project", str(proj), "--rulebook", "vestal", "--out", str(tmp_path / "b")])
    props = json.loads((tmp_path / "b" / "findings.geojson").read_text())["features"][0]["properties"]
    assert props["rulebook"] == "vestal"


def test_strict_is_a_global_option(runner, tmp_path):
    p = parcels()
    p.loc[1, "parcel_id"] = "P1"
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"parcels": p, "flood_zones": flood_zones()})
    res = runner.invoke(main, screen(tmp_path, gpkg))
    assert res.exit_code == 0, res.output
    assert "warning: layer parcels (t.gpkg:parcels): 2 feature(s) share an id in field parcel_id (P1 (2x))" in res.stderr
    csv = (tmp_path / "out" / "parcels.csv").read_text("utf-8")
    assert "P1 (row 1)" in csv and "P1 (row 2)" in csv and "P3" in csv
    res = runner.invoke(main, ["--strict", *screen(tmp_path, gpkg)])
    assert res.exit_code == 2 and "duplicate ids in field parcel_id: P1" in res.stderr


def test_library_warnings_are_one_line(runner, tmp_path, monkeypatch):
    # a pyogrio UserWarning (as for measured shapefiles) reaches stderr as one 'warning:' line,
    # never as "path/to/file.py:123: UserWarning:" and its source line; deprecations only with -vv
    import warnings

    def noisy(result, out, **kw):
        warnings.warn("Measured (M) geometry types are not supported.", UserWarning, stacklevel=1)
        warnings.warn("old API", DeprecationWarning, stacklevel=1)
        return {}

    monkeypatch.setattr(cli, "write_result", noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        res = runner.invoke(main, screen(tmp_path, sample_gpkg(tmp_path)))
    assert res.exit_code == 0, res.output
    assert "warning: Measured (M) geometry types are not supported." in res.stderr
    assert "UserWarning" not in res.stderr and ".py:" not in res.stderr and "old API" not in res.stderr


def test_a_lost_signal_is_sent_again_only_while_no_check_has_raised_it(monkeypatch):
    # a signal lost in a finalizer is sent again 50 ms later (_lost_signal -> _resend); if a check has raised its
    # exception again meanwhile (geoconstraints.interrupt), the run is already stopping and a second exception
    # would land in its cleanup: not sent, and a later signal ends the run at once, as a second signal does
    sent: list[int] = []
    monkeypatch.setattr(cli.os, "kill", lambda pid, sig: sent.append(sig))
    try:
        interrupt.raised(cli.Terminated())
        seen = interrupt.times_raised_again()
        cli._resend(signal.SIGTERM, seen)
        assert sent == [signal.SIGTERM] and "stopping" not in cli._cleanup
        with pytest.raises(cli.Terminated):
            interrupt.check()
        assert interrupt.times_raised_again() == seen + 1
        cli._resend(signal.SIGTERM, seen)
        assert sent == [signal.SIGTERM] and cli._cleanup["stopping"]
        handlers: list[tuple[int, object]] = []
        monkeypatch.setattr(cli.signal, "signal", lambda sig, handler: handlers.append((sig, handler)))
        cli._on_signal(signal.SIGTERM, None)  # no exception: the default action, at once
        assert handlers == [(signal.SIGTERM, signal.SIG_DFL)] and sent == [signal.SIGTERM, signal.SIGTERM]
    finally:
        cli._end_cleanup_limit()
    assert "stopping" not in cli._cleanup and interrupt.pending() is None
