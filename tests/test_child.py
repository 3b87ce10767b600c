"""The child processes of write_result (output/child.py): findings.geojson and results.gpkg written
by the GIS child are the files written in-process; its failures, death and a SIGTERM behave as an
in-process writer's; report.pdf from the PDF child has the permissions of every other output.

The child gets the parent's sys.path, so a fake `pyogrio` put first on it (after the parent has
imported the real one) stands in for the real one there: a full disk, a bug, a child killed, a
child that pauses until signalled. The PDF child's own failures are tested in test_report_pdf.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pyogrio
import pytest
from browser_util import make_synthetic_result
from catalogue import sample_gpkg, screen
from conftest import tree_hashes
from pandas.testing import assert_frame_equal

from geoconstraints import interrupt, output
from geoconstraints.errors import OutputError
from geoconstraints.output import child, outset, write_result


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A screening of every status (parcels, derived overlaps, findings of every geometry family)."""
    return make_synthetic_result(tmp_path_factory.mktemp("child") / "inputs")


@pytest.fixture
def jobs(monkeypatch) -> list[str]:
    """The kinds of the jobs handed to a child process during the test."""
    kinds: list[str] = []
    real = child.Child.submit

    def submit(self, name, target, job, **params):
        kinds.append(job["kind"])
        return real(self, name, target, job, **params)

    monkeypatch.setattr(child.Child, "submit", submit)
    return kinds


def _styles(gpkg: Path) -> list[tuple]:
    q = ("SELECT f_table_name, f_geometry_column, styleName, styleQML, styleSLD, useAsDefault, description "
         "FROM layer_styles ORDER BY f_table_name")
    with sqlite3.connect(gpkg) as con:
        return con.execute(q).fetchall()


def _same_gpkg(a: Path, b: Path) -> None:
    """Every layer read back equal (values, types, CRS, metadata), the same QGIS styles."""
    layers = pyogrio.list_layers(a)
    assert layers.tolist() == pyogrio.list_layers(b).tolist()
    for name in [n for n, _ in layers if n != "layer_styles"]:
        assert_frame_equal(pyogrio.read_dataframe(a, layer=name), pyogrio.read_dataframe(b, layer=name),
                           check_exact=True)
        ia, ib = pyogrio.read_info(a, layer=name), pyogrio.read_info(b, layer=name)
        for key in ("crs", "geometry_type", "fields", "dtypes", "features", "layer_metadata", "dataset_metadata"):
            assert str(ia[key]) == str(ib[key]), (name, key)
    assert _styles(a) == _styles(b) and len(_styles(a)) >= 4


@pytest.mark.parametrize("which", ["screen", "harvest"])
def test_the_gis_child_writes_the_in_process_files(synthetic, sample_harvest, tmp_path, monkeypatch, jobs, which):
    res = synthetic if which == "screen" else sample_harvest
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 10**12)
    here = write_result(res, tmp_path / "here")
    assert "layers" not in jobs
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 0)
    there = write_result(res, tmp_path / "child")
    assert jobs.count("layers") == 2  # findings.geojson and results.gpkg went to the child
    # the same result, so the same run id and time: the files are byte for byte the same
    assert there["findings.geojson"].read_bytes() == here["findings.geojson"].read_bytes()
    rid = json.loads(there["findings.geojson"].read_text("utf-8"))["geoconstraints"]["run_id"]
    assert rid == res.run_id
    assert pyogrio.read_info(there["results.gpkg"], layer="findings_nogeom")["dataset_metadata"]["GEOCONSTRAINTS_RUN_ID"] == rid
    _same_gpkg(there["results.gpkg"], here["results.gpkg"])
    for name in [n for n in here if n.endswith(".csv")]:
        assert there[name].read_bytes() == here[name].read_bytes(), name
    prov = {o["path"]: o for o in json.loads(there["provenance.json"].read_text("utf-8"))["outputs"]}
    prov_here = {o["path"]: o for o in json.loads(here["provenance.json"].read_text("utf-8"))["outputs"]}
    assert set(prov) == set(prov_here)  # no scratch file, no temporary file
    assert prov["findings.geojson"]["sha256"] == prov_here["findings.geojson"]["sha256"]
    on_disk = {p.relative_to(tmp_path / "child").as_posix() for p in (tmp_path / "child").rglob("*")}
    assert not any(".scratch" in p or ".tmp" in p for p in on_disk), on_disk
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_county_set_writes_its_geojson_and_geopackage_in_two_children(synthetic, tmp_path, monkeypatch):
    # from GIS_SPLIT_MIN_ROWS rows findings.geojson and results.gpkg go to two children, one each, and are the
    # files one child (or this process) writes; without findings.geojson in the set one child is enough
    by: dict[str, int] = {}
    real = child.Child.submit

    def submit(self, name, target, job, **params):
        by[name] = id(self)
        return real(self, name, target, job, **params)

    monkeypatch.setattr(child.Child, "submit", submit)
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 0)
    one = write_result(synthetic, tmp_path / "one")
    assert by["findings.geojson"] == by["results.gpkg"]  # the default threshold: one child for both
    rows = output.gis_rows(synthetic, "person")
    monkeypatch.setattr(output, "GIS_SPLIT_MIN_ROWS", rows + 1)
    by.clear()
    write_result(synthetic, tmp_path / "just_under")
    assert by["findings.geojson"] == by["results.gpkg"]
    monkeypatch.setattr(output, "GIS_SPLIT_MIN_ROWS", rows)
    by.clear()
    two = write_result(synthetic, tmp_path / "two")
    assert by["findings.geojson"] != by["results.gpkg"]  # two children
    assert two["findings.geojson"].read_bytes() == one["findings.geojson"].read_bytes()
    _same_gpkg(two["results.gpkg"], one["results.gpkg"])
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == sorted(p.name for p in (tmp_path / "one").iterdir())
    by.clear()
    write_result(synthetic, tmp_path / "gpkg_only", outputs="gpkg,report")
    assert list(by) == ["results.gpkg"]  # one GIS file: no second child
    assert not child._LIVE  # every child ended and was reaped


class _Recorder:
    """A write_result progress that records what it is told: ("expect", n), ("begin", name), ("end", label)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, object]] = []

    def expect(self, n):
        self.seen.append(("expect", n))

    @contextlib.contextmanager
    def __call__(self, name):
        self.seen.append(("begin", name))
        item = outset.Item(name)
        yield item
        self.seen.append(("end", item.label))

    def said(self, kind):
        return [x for k, x in self.seen if k == kind]


def test_the_progress_follows_each_writer_and_the_wait_for_the_children(synthetic, tmp_path, monkeypatch):
    # the CLI's bar and -v (write_result's progress): one item per writer step, in order, then the wait for what
    # the child processes write; announced before the first; each item ends saying what it wrote and handed over
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 0)
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 0)
    rec = _Recorder()
    out = write_result(synthetic, tmp_path / "out", progress=rec)
    begun, ended = rec.said("begin"), rec.said("end")
    assert rec.seen[0] == ("expect", len(begun)) and [k for k, _ in rec.seen[1:]] == ["begin", "end"] * len(begun)
    assert begun[:4] == ["findings.geojson", "results.gpkg", "report.html", "findings.csv"]
    assert ended[:4] == ["findings.geojson handed to a child process", "results.gpkg handed to a child process",
                         "report.html; report.pdf handed to a child process",
                         ", ".join(["findings.csv", *(f"{t}.csv" for t in synthetic.tables)])]
    assert begun[-1] == ended[-1] == "waiting for the child processes (report.pdf, findings.geojson, results.gpkg)"
    assert {"findings.geojson", "results.gpkg", "report.pdf"} <= set(out)


def test_the_progress_says_a_file_is_written_here_when_no_child_can_start(synthetic, tmp_path, monkeypatch):
    # an embedding application without a Python executable: nothing is handed over, and the items say so
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 0)
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 0)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    rec = _Recorder()
    out = write_result(synthetic, tmp_path / "out", progress=rec)
    ended = rec.said("end")
    assert ended[:3] == ["findings.geojson", "results.gpkg", "report.html, report.pdf"]
    assert ended[-1] == "waiting for the child processes (no files)"
    assert not [x for x in ended if "handed" in x] and {"findings.geojson", "report.pdf"} <= set(out)


def test_a_child_begun_early_without_a_job_ends_with_its_block(tmp_path):
    with child.Child("writing results.gpkg", kind="layers") as c:
        assert c.begin() and c.begin()  # started once
        proc = c.proc
        assert proc is not None and proc.poll() is None
    assert proc.returncode == 0 and proc not in child._LIVE


def test_a_small_run_writes_here(synthetic, tmp_path, jobs):
    # the default threshold: a run this small (a few dozen rows) is not worth a child's start
    assert output.gis_rows(synthetic, "person") < output.GIS_CHILD_MIN_ROWS
    out = write_result(synthetic, tmp_path / "out")
    assert "layers" not in jobs and out["results.gpkg"].is_file()


# a pyogrio package for the child only: MODE says what its write_arrow does; its errors module has the
# name of the real one's, so an error pickled in the child is rebuilt in the parent as the real class
FAKE_PYOGRIO = """
import os, signal, time
from pyogrio.errors import DataSourceError
MODE = {mode!r}
CONFIG = {{}}

def get_gdal_config_option(name):
    return CONFIG.get(name)

def set_gdal_config_options(options):
    CONFIG.update(options)

def write_arrow(table, path, **kwargs):
    if MODE == "nospace":  # what GDAL's GeoPackage and GeoJSON drivers say on a full disk
        raise DataSourceError("sqlite3_step() failed: database or disk is full")
    if MODE == "bug":
        raise ValueError("a bug in the writer")
    if MODE == "killed":
        os.kill(os.getpid(), signal.SIGKILL)
    if MODE == "pause":  # say its pid, sleep until killed
        paused = os.environ["GC_TEST_PAUSED"]
        with open(paused + ".part", "w") as fh:
            fh.write(str(os.getpid()))
        os.replace(paused + ".part", paused)
        time.sleep(600)
"""


def _fake_pyogrio(tmp_path: Path, mode: str) -> Path:
    fake = tmp_path / f"fake-pyogrio-{mode}"
    (fake / "pyogrio").mkdir(parents=True)
    (fake / "pyogrio" / "__init__.py").write_text(FAKE_PYOGRIO.format(mode=mode))
    (fake / "pyogrio" / "errors.py").write_text("class DataSourceError(RuntimeError):\n    pass\n")
    return fake


@pytest.mark.parametrize("mode, error, text", [
    ("nospace", OutputError, (r"^no space left on device writing {out}/findings\.geojson; nothing in --out {out} "
                              r"was changed \(the unfinished outputs were removed\)")),
    ("killed", OutputError, (r"^cannot write {out}/findings\.geojson \(the process writing the GIS files was "
                             r"killed by SIGKILL\); nothing in --out {out} was changed$")),
    ("bug", ValueError, r"^a bug in the writer\nraised in the process writing the GIS files:\nTraceback"),
])
def test_a_failing_gis_child_fails_as_the_writer_here(synthetic, tmp_path, monkeypatch, mode, error, text):
    out = tmp_path / "out"
    write_result(synthetic, out)
    before = tree_hashes(out)
    monkeypatch.syspath_prepend(str(_fake_pyogrio(tmp_path, mode)))  # the parent keeps the real pyogrio
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 0)
    with pytest.raises(error, match=text.format(out=re.escape(str(out)))) as info:
        write_result(synthetic, out, overwrite=True)
    if mode == "bug":  # the error's text is the child's; --debug shows where the child raised it
        assert str(info.value) == "a bug in the writer" and "in write_arrow" in "".join(info.value.__notes__)
    assert tree_hashes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []


def test_a_full_disk_says_the_same_in_the_child_and_here(synthetic, tmp_path, monkeypatch):
    # GDAL's own text of a full disk, raised by the GeoJSON writer here and in the child
    def full(target, layers):
        raise pyogrio.errors.DataSourceError("sqlite3_step() failed: database or disk is full")

    monkeypatch.setattr(child, "write_arrow_layers", full)
    with pytest.raises(OutputError) as here:
        write_result(synthetic, tmp_path / "out")
    monkeypatch.undo()
    monkeypatch.syspath_prepend(str(_fake_pyogrio(tmp_path, "nospace")))
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 0)
    with pytest.raises(OutputError) as there:
        write_result(synthetic, tmp_path / "out")
    assert str(there.value) == str(here.value)
    assert str(here.value).startswith(f"no space left on device writing {(tmp_path / 'out').resolve()}/findings.geojson")


def test_gdal_config_of_the_writes_is_set_for_them_and_restored(tmp_path, monkeypatch):
    # OGR_SQLITE_SYNCHRONOUS=OFF while GDAL writes (the file is a temporary one until complete), the value
    # before restored after, also when the write fails
    import geopandas as gpd
    from shapely.geometry import box

    from geoconstraints.output import files

    name = "OGR_SQLITE_SYNCHRONOUS"
    pyogrio.set_gdal_config_options({name: "NORMAL"})
    seen = []
    real = pyogrio.write_arrow

    def spy(table, path, **kw):
        seen.append(pyogrio.get_gdal_config_option(name))
        if kw["layer"] == "bad":
            raise RuntimeError("a failing write")
        return real(table, path, **kw)

    monkeypatch.setattr(pyogrio, "write_arrow", spy)
    gdf = gpd.GeoDataFrame({"a": [1]}, geometry=[box(0, 0, 1, 1)], crs=2262)
    try:
        child.write_arrow_layers(tmp_path / "t.gpkg", [files.arrow_layer(gdf, "t", driver="GPKG", geometry_type="Polygon")])
        assert seen == [False] and pyogrio.get_gdal_config_option(name) == "NORMAL"  # pyogrio reads OFF as False
        with pytest.raises(RuntimeError, match="a failing write"):
            child.write_arrow_layers(tmp_path / "u.gpkg", [files.arrow_layer(gdf, "bad", driver="GPKG", geometry_type="Polygon")])
        assert seen == [False, False] and pyogrio.get_gdal_config_option(name) == "NORMAL"
        assert len(pyogrio.read_dataframe(tmp_path / "t.gpkg")) == 1
    finally:
        pyogrio.set_gdal_config_options({name: None})


def test_no_child_process_writes_here(synthetic, tmp_path, monkeypatch):
    # an embedding application without a Python executable: the tables handed over are written here
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 0)
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 10**12)
    here = write_result(synthetic, tmp_path / "here")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    out = write_result(synthetic, tmp_path / "out")
    assert out["findings.geojson"].read_bytes() == here["findings.geojson"].read_bytes()
    _same_gpkg(out["results.gpkg"], here["results.gpkg"])
    assert not (tmp_path / "out" / output.SCRATCH_DIR).exists()


def test_report_pdf_of_the_child_has_the_permissions_of_the_others(synthetic, tmp_path, monkeypatch):
    # report.pdf used to be 0600 (mkstemp's) when the child wrote it: now 0666 less the umask, as all
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 0)
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 0)
    old = os.umask(0o027)
    try:
        out = write_result(synthetic, tmp_path / "out")
    finally:
        os.umask(old)
    modes = {name: path.stat().st_mode & 0o777 for name, path in out.items() if path.is_file()}
    assert {"report.pdf", "findings.geojson", "results.gpkg", "report.html"} <= set(modes)
    assert set(modes.values()) == {0o640}, modes


# -- SIGTERM / SIGINT while the GIS child writes ------------------------------------------------------
WRAPPER = r'''
import faulthandler, os, signal, sys
faulthandler.register(signal.SIGUSR1, all_threads=True)  # a run that hangs shows its threads
import pyogrio  # the real one, for this process
from geoconstraints import output
output.GIS_CHILD_MIN_ROWS = 0
sys.path.insert(0, os.environ["GC_TEST_FAKE_PYOGRIO"])  # the child gets the parent's sys.path: it pauses
from geoconstraints.cli import main
sys.exit(main(sys.argv[1:], prog_name="geoconstraints"))
'''


@pytest.mark.parametrize("sig, text", [(signal.SIGTERM, "terminated (SIGTERM)"), (signal.SIGINT, "interrupted")])
def test_sigterm_and_sigint_while_the_gis_child_writes(tmp_path, runner, sig, text):
    # the parent is signalled while its child writes findings.geojson: the child is killed (and
    # waited for) before the unfinished set is removed; --out stays as it was
    from geoconstraints.cli import main

    gpkg = sample_gpkg(tmp_path)
    assert runner.invoke(main, screen(tmp_path, gpkg)).exit_code == 0
    out = tmp_path / "out"
    before = tree_hashes(out)
    (tmp_path / "wrapper.py").write_text(WRAPPER)
    paused = tmp_path / "paused"
    env = {**os.environ, "GC_TEST_FAKE_PYOGRIO": str(_fake_pyogrio(tmp_path, "pause")), "GC_TEST_PAUSED": str(paused)}
    proc = subprocess.Popen([sys.executable, str(tmp_path / "wrapper.py"), *screen(tmp_path, gpkg, "--overwrite")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not paused.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the child did not reach write_arrow in 120 s"
        time.sleep(0.1)
    pid = int(paused.read_text())
    assert pid != proc.pid
    proc.send_signal(sig)
    try:
        err = proc.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        proc.kill()
        raise AssertionError(f"the run did not end 60 s after the signal:\n{proc.communicate()[1][-6000:]}") from None
    assert proc.returncode == 2
    assert err.strip().splitlines()[-1] == f"error: {text}", err[-12000:]  # a cleanup over its limit: its stacks
    assert tree_hashes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left writing into the removed folder
        os.kill(pid, 0)


def test_a_signal_a_library_swallowed_is_raised_before_waiting_for_a_child(tmp_path):
    # the CLI's handler raised KeyboardInterrupt inside a library that cleared it (pyarrow converting a pandas
    # column of Arrow text does): waiting for the child's answer, or for its end, raises it instead of waiting
    # (seen: a run that then waited for its paused GIS child until the 30 s backstop)
    assert interrupt.check in child.BEFORE_WAIT  # registered by geoconstraints.output
    for how in ("answer", "close"):
        c = child.Child("writing a test file")
        try:
            job = c.submit("x", tmp_path / "x", {"kind": "no such kind"})  # the child would answer at once
            assert job is not None
            interrupt.raised(KeyboardInterrupt())
            with pytest.raises(KeyboardInterrupt):
                job.result() if how == "answer" else c.close(kill=False)
            if how == "close":  # not waited for: killed
                assert c.proc.returncode == -signal.SIGKILL
        finally:
            interrupt.forget()
            c.close(kill=True)
        assert c.proc not in child._LIVE


def test_kill_all_sigkills_every_child_still_running_and_close_forgets_them(tmp_path):
    # the CLI's last resort before os._exit (cli.py): two children idle between jobs (each in its own process
    # group, waiting for more lines on stdin) are SIGKILLed without waiting, and say so when asked for an answer
    kids = [child.Child("writing a test file"), child.Child("laying out a test page")]
    try:
        for k, c in enumerate(kids):
            assert c.submit(f"x{k}", tmp_path / f"x{k}", {"kind": "no such kind"}) is not None
            assert c.proc is not None and c.proc.poll() is None and c.proc in child._LIVE
        child.kill_all()
        for c in kids:
            assert c.proc.wait(10) == -signal.SIGKILL
            with pytest.raises(ChildProcessError, match="was killed by SIGKILL"):
                c.answer(1, tmp_path / "y")  # its one answer may have come before the kill: ask for a second
    finally:
        for c in kids:
            c.close(kill=True)
    assert not {c.proc for c in kids} & child._LIVE  # reaped: kill_all no longer sees them
    child.kill_all()  # nothing left to kill: no error


def test_the_gis_files_are_handed_to_the_child_before_the_report(synthetic):
    # the GIS child's files take longest: handed over first, written while the report is; without the child
    # the report comes first (its PDF child lays it out while the rest is written)
    here = [name for name, _ in output.file_steps(synthetic, scope="person")]
    there = [name for name, _ in output.file_steps(synthetic, scope="person", gis=object())]
    assert here[:3] == ["report.html", "findings.geojson", "results.gpkg"]
    assert there[:3] == ["findings.geojson", "results.gpkg", "report.html"]
    assert sorted(here) == sorted(there)


@pytest.fixture
def no_spares():
    """Every child started early is gone after the test (taken and closed, or discarded)."""
    yield
    left = dict(child._SPARE)
    child.discard_spares()
    assert not left, f"children started early were left: {sorted(left)}"


def test_children_started_early_are_taken_and_write_the_same_files(synthetic, tmp_path, monkeypatch, no_spares):
    # a county's screening starts both children once its layers are loaded (prestart_writers); write_result's
    # children take them (the same processes, their libraries already imported) and write what the
    # children started there write
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 0)
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 0)
    cold = write_result(synthetic, tmp_path / "cold")
    assert output.prestart_writers(1) is True
    early = {kind: child._SPARE[kind].pid for kind in child.KINDS}
    assert all(child._SPARE[k].poll() is None and child._SPARE[k] in child._LIVE for k in child.KINDS)
    used: dict[str, int] = {}
    real = child.Child._start

    def start(self):
        proc = real(self)
        used[self.kind] = proc.pid
        return proc

    monkeypatch.setattr(child.Child, "_start", start)
    warm = write_result(synthetic, tmp_path / "warm")
    assert used == early and child._SPARE == {}
    assert not {p for p in child._LIVE if p.pid in early.values()}  # closed and reaped
    assert warm["findings.geojson"].read_bytes() == cold["findings.geojson"].read_bytes()
    _same_gpkg(warm["results.gpkg"], cold["results.gpkg"])
    assert warm["report.pdf"].read_bytes()[:5] == b"%PDF-" and warm["report.pdf"].stat().st_size > 10_000


def test_prestart_writers_only_for_a_run_that_uses_the_children(monkeypatch, no_spares):
    n = output.GIS_CHILD_MIN_ROWS
    assert output.prestart_writers(n - 1) is False and child._SPARE == {}  # one parcel under: no child
    assert output.prestart_writers(n) is True and sorted(child._SPARE) == sorted(child.KINDS)
    procs = list(child._SPARE.values())
    assert output.prestart_writers(n) is True and list(child._SPARE.values()) == procs  # not started twice
    child.discard_spares()
    assert child._SPARE == {} and all(p.returncode is not None for p in procs)  # killed and reaped
    assert not set(procs) & child._LIVE
    with pytest.raises(ValueError, match="unknown kind of child 'x'"):
        child.prestart("x")


def test_a_spare_that_died_is_not_taken(tmp_path, no_spares):
    # a child started early and killed since (by the system) is replaced by a fresh one, which does the job
    assert child.prestart("layers")
    dead = child._SPARE["layers"]
    dead.kill()
    dead.wait(10)
    kid = child.Child("writing a test file", kind="layers")
    try:
        job = kid.submit("x", tmp_path / "x", {"kind": "no such kind"})
        assert job is not None and kid.proc is not dead and kid.proc.poll() is None
        assert "error" in kid.answer(0, tmp_path / "x")  # the fresh child answered
    finally:
        kid.close(kill=True)
    assert child._SPARE == {} and dead not in child._LIVE


def test_the_cli_discards_the_children_a_refused_run_did_not_use(tmp_path, runner, monkeypatch, no_spares):
    # screen starts the writers' children after loading a county (threshold lowered for the sample town); a
    # run that fails in the check never writes: the children started for it are killed, none is left running
    from geoconstraints import cli
    from geoconstraints.errors import InputError

    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 1)
    started: list = []
    real = child.prestart

    def prestart(kind):
        ok = real(kind)
        started.append(child._SPARE[kind])
        return ok

    monkeypatch.setattr(child, "prestart", prestart)

    def fail(*a, **k):
        raise InputError("a test failure in the check")

    monkeypatch.setattr(cli, "screen_parcels", fail)
    gpkg = sample_gpkg(tmp_path)
    res = runner.invoke(cli.main, screen(tmp_path, gpkg))
    assert res.exit_code == 2 and "a test failure in the check" in res.output
    assert len(started) == 2 and all(p.returncode is not None for p in started)
    assert child._SPARE == {} and not set(started) & child._LIVE
    monkeypatch.undo()
    # and a run that writes takes them: none left over, the set written
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 1)
    res = runner.invoke(cli.main, screen(tmp_path, gpkg, "--overwrite"))
    assert res.exit_code == 0, res.output
    assert child._SPARE == {} and (tmp_path / "out" / "results.gpkg").is_file()
