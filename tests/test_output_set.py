"""The output folder is one set, all or nothing (issue 11 item 2, issue 12 item 9).

Every failure leaves ``--out`` as it was (its files byte for byte): a writer that fails after
the first file, a folder named like an output, a full disk, SIGKILL, SIGTERM, SIGINT, a second
run writing the same folder. A complete set is swapped in whole; ``provenance.json`` lists it
and every file carries the one run id.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import geopandas as gpd
import pyarrow.parquet as pq
import pyogrio
import pytest
from catalogue import harvest_area, parcels, sample_gpkg, screen, write_gpkg
from conftest import tree_hashes

from geoconstraints.cli import main
from geoconstraints.errors import OutputError
from geoconstraints.output import files, outset

PY = sys.executable

# The CLI in a subprocess with one writer made to stop at a point the test controls: it writes
# the file named by $GC_TEST_PAUSED (what it was doing) and sleeps until killed. No hook in the
# package: the wrapper replaces the writer the way a test's monkeypatch does.
WRAPPER = r'''
import faulthandler, os, signal, sys, time
faulthandler.register(signal.SIGUSR1, all_threads=True)  # a run that hangs shows its threads (_ended)
import geoconstraints.output.files as files
import geoconstraints.output.outset as outset

where = os.environ["GC_TEST_PAUSE_IN"]

def mark(what):
    with open(os.environ["GC_TEST_PAUSED"] + ".part", "w") as fh:
        fh.write(what)
    os.replace(os.environ["GC_TEST_PAUSED"] + ".part", os.environ["GC_TEST_PAUSED"])  # seen only when written

def pause(what):
    mark(what)
    time.sleep(600)

if where == "stuck-cleanup":  # as "csv", and removing the unfinished set blocks forever (a lock never released)
    import shutil, threading
    import geoconstraints.cli as cli
    cli.CLEANUP_LIMIT_S = 3
    never = threading.Lock()
    never.acquire()
    def rmtree(*args, **kwargs):
        never.acquire()
    shutil.rmtree = rmtree
if where in ("csv", "stuck-cleanup"):  # the set half written: findings.geojson and results.gpkg are done
    orig_csv = files.write_csv
    def write_csv(df, target):
        out = orig_csv(df, target)
        pause(str(target))
        return out
    files.write_csv = write_csv
elif where == "lost-signal":  # SIGTERM handled inside a finalizer, where Python ignores what is raised
    orig_csv = files.write_csv
    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the handler runs here, inside the finalizer: its Terminated is ignored
    def write_csv(df, target):
        out = orig_csv(df, target)
        mark(str(target))
        Finalized()  # collected at once: its finalizer runs
        time.sleep(600)  # a long step the lost signal would not end
        return out
    files.write_csv = write_csv
elif where == "swallowed-signal":  # the signal handled inside a library that clears every exception it meets
    orig_csv = files.write_csv
    def write_csv(df, target):
        out = orig_csv(df, target)
        mark(str(target))
        end = time.monotonic() + 5
        while time.monotonic() < end:  # as pyarrow converting a pandas column of Arrow text can
            try:
                time.sleep(0.05)  # the handler runs here
            except BaseException:
                pass
        return out  # the step ends as if never signalled
    files.write_csv = write_csv
elif where == "swapped":  # the new set just swapped in, the earlier one not yet removed
    orig_swap = outset.swap_in
    def swap_in(new, out):
        orig_swap(new, out)
        pause(str(out))
    outset.swap_in = swap_in
elif where == "pdf":  # report.pdf laid out by the child process, whose `weasyprint` pauses it
    import geoconstraints.output as output
    output.PDF_CHILD_MIN_CHARS = 0
    sys.path.insert(0, os.environ["GC_TEST_FAKE_WEASYPRINT"])  # the child gets the parent's sys.path

from geoconstraints.cli import main
sys.exit(main(sys.argv[1:], prog_name="geoconstraints"))
'''


@pytest.fixture
def town(tmp_path):
    """A 3-parcel town and a complete first set in tmp/out (the 'old' set)."""
    gpkg = sample_gpkg(tmp_path)
    from click.testing import CliRunner

    res = CliRunner().invoke(main, screen(tmp_path, gpkg, "--findings", "all"))
    assert res.exit_code == 0, res.output
    return gpkg, tmp_path / "out"


def _beside(out: Path) -> list[str]:
    """What a run left beside --out (temporary folders, lock files)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def _consistent(out: Path) -> dict:
    """The set in ``out`` is complete and of one run: provenance.json lists exactly its files,
    with their sizes and hashes, and every file carrying a run id carries that one."""
    prov = json.loads((out / "provenance.json").read_text("utf-8"))
    listed = {o["path"]: o for o in prov["outputs"]}
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {"provenance.json"}
    assert set(listed) == on_disk
    hashes = {p.relative_to(out).as_posix(): h for p, h in tree_hashes(out).items()}
    for rel, o in listed.items():
        assert o["sha256"] == hashes[rel] and o["bytes"] == (out / rel).stat().st_size, rel
    rid = prov["run_id"]
    assert json.loads((out / "findings.geojson").read_text("utf-8"))["geoconstraints"]["run_id"] == rid
    assert pyogrio.read_info(out / "results.gpkg", layer="parcels")["dataset_metadata"]["GEOCONSTRAINTS_RUN_ID"] == rid
    for name in ("findings_point", "findings_polygon", "findings_nogeom"):
        assert pyogrio.read_info(out / "results.gpkg", layer=name)["layer_metadata"]["GEOCONSTRAINTS_RUN_ID"] == rid
    meta = json.loads(pq.read_schema(out / "findings.parquet").metadata[b"geoconstraints"])
    assert meta["run_id"] == rid
    for page in ("report.html", "map.html"):
        assert f'<meta name="geoconstraints-run-id" content="{rid}">' in (out / page).read_text("utf-8")
    return prov


def test_a_set_is_consistent_and_records_one_run_id(town):
    _, out = town
    prov = _consistent(out)
    assert prov["command"] == "screen" and prov["findings_scope"] == "all"
    assert {o["path"] for o in prov["outputs"]} >= {
        "findings.geojson", "results.gpkg", "findings.csv", "findings.parquet", "parcels.csv",
        "parcels.parquet", "report.html", "map.html"}
    assert prov["inputs"][0]["sha256"] and prov["output_set_format"] == 1
    assert _beside(out) == []  # no temporary folder, no lock file


def test_injected_failure_after_the_first_write_keeps_the_old_set(town, monkeypatch, runner):
    gpkg, out = town
    before = tree_hashes(out)
    written = []
    orig = files.write_geojson

    def geojson(*a, **k):
        written.append(orig(*a, **k))
        return written[-1]

    def boom(*a, **k):
        raise RuntimeError("the GeoPackage writer broke")

    monkeypatch.setattr(files, "write_geojson", geojson)
    monkeypatch.setattr(files, "write_gpkg", boom)
    res = runner.invoke(main, screen(out.parent, gpkg, "--overwrite"))
    assert res.exit_code == 2 and "could not complete (RuntimeError: the GeoPackage writer broke)" in res.stderr
    assert written and not written[0].exists()  # it was written, into the set that was thrown away
    assert tree_hashes(out) == before
    assert _beside(out) == []


def test_a_folder_named_like_an_output_is_refused_before_any_work(town, runner):
    gpkg, out = town
    (out / "results.gpkg").unlink()
    (out / "results.gpkg").mkdir()  # the earlier set's file is now a folder: not ours
    before = tree_hashes(out)
    res = runner.invoke(main, screen(out.parent, gpkg, "--overwrite"))
    assert res.exit_code == 2
    assert "holds results.gpkg, which the earlier run there" in res.stderr and "will not be emptied" in res.stderr
    assert tree_hashes(out) == before and (out / "results.gpkg").is_dir()
    # a fresh folder holding only such a folder: no provenance, so nothing in it is ours
    fresh = out.parent / "fresh"
    (fresh / "results.gpkg").mkdir(parents=True)
    res = runner.invoke(main, ["screen", str(gpkg), "--out", str(fresh), "--overwrite"])
    assert res.exit_code == 2 and "holds results.gpkg, which geoconstraints did not write" in res.stderr
    assert (fresh / "results.gpkg").is_dir() and list(fresh.iterdir()) == [fresh / "results.gpkg"]


@pytest.mark.parametrize("how", ["oserror", "gdal"])
def test_no_space_left_on_device(town, monkeypatch, runner, how):
    gpkg, out = town
    before = tree_hashes(out)
    if how == "oserror":  # the disk fills while parcels.csv is written (the error names the temporary file)
        orig_csv = files.write_csv

        def write_csv(df, target):
            if target.name == "parcels.csv":
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))
            return orig_csv(df, target)

        monkeypatch.setattr(files, "write_csv", write_csv)
        expect = out / "parcels.csv"
    else:  # GDAL reports it as text inside its own error
        def write_gpkg(*a, **k):
            raise pyogrio.errors.DataSourceError("sqlite3_step() failed: database or disk is full")

        monkeypatch.setattr(files, "write_gpkg", write_gpkg)
        expect = out / "results.gpkg"
    res = runner.invoke(main, screen(out.parent, gpkg, "--overwrite"))
    assert res.exit_code == 2, res.output
    assert f"error: no space left on device writing {expect.resolve()}" in res.stderr
    assert "nothing in --out" in res.stderr and res.stderr.count("\n") == 1
    assert tree_hashes(out) == before
    assert _beside(out) == []


# the `weasyprint` of the child in the "pdf" pause: it says its pid and sleeps until killed
PAUSING_WEASYPRINT = """
import os, time
class HTML:
    def __init__(self, string):
        pass
    def render(self):
        with open(os.environ["GC_TEST_PAUSED"] + ".part", "w") as fh:
            fh.write(str(os.getpid()))
        os.replace(os.environ["GC_TEST_PAUSED"] + ".part", os.environ["GC_TEST_PAUSED"])
        time.sleep(600)
"""


def _ended(proc: subprocess.Popen, timeout: float = 60) -> str:
    """The run's stderr once it has ended; a run still going after ``timeout`` s fails the test with
    the stacks of its threads (faulthandler on SIGUSR1, registered by the wrapper). A run that ended
    while a process it started still holds its stderr open fails the test too, saying so (never
    waiting for that process)."""
    try:
        return proc.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        pass
    if proc.poll() is not None:
        proc.stdout.close()
        proc.stderr.close()
        raise AssertionError(f"the run ended (exit code {proc.returncode}) but a process it started still held its "
                             f"stderr {timeout:g} s after the signal")
    proc.send_signal(signal.SIGUSR1)
    time.sleep(2)
    proc.kill()
    err = proc.communicate(timeout=30)[1]
    raise AssertionError(f"the run did not end {timeout:g} s after the signal; its threads:\n{err[-6000:]}")


def _signalled(tmp_path: Path, gpkg: Path, pause_in: str, sig: int, timeout: float) -> tuple[subprocess.Popen, str, float]:
    """A screening run into tmp/out (``--overwrite``) started up to ``pause_in`` and sent ``sig``: the
    process, its stderr once ended (:func:`_ended`) and the seconds from the signal to its end."""
    proc, _ = _start(tmp_path, screen(tmp_path, gpkg, "--overwrite"), pause_in)
    t0 = time.monotonic()
    proc.send_signal(sig)
    err = _ended(proc, timeout=timeout)
    return proc, err, time.monotonic() - t0


def _start(tmp_path: Path, args: list[str], pause_in: str) -> tuple[subprocess.Popen, Path]:
    script = tmp_path / "wrapper.py"
    script.write_text(WRAPPER)
    paused = tmp_path / f"paused-{pause_in}-{time.monotonic_ns()}"
    fake = tmp_path / "fake_weasyprint"
    fake.mkdir(exist_ok=True)
    (fake / "weasyprint.py").write_text(PAUSING_WEASYPRINT)
    env = {**os.environ, "GC_TEST_PAUSE_IN": pause_in, "GC_TEST_PAUSED": str(paused),
           "GC_TEST_FAKE_WEASYPRINT": str(fake)}
    proc = subprocess.Popen([PY, str(script), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while not paused.exists():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before the pause: {proc.communicate()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("the run did not reach the pause in 120 s")
        time.sleep(0.1)
    return proc, paused


def test_sigkill_mid_write_leaves_the_old_set_and_the_next_run_tidies(town, tmp_path):
    gpkg, out = town
    before = tree_hashes(out)
    old_id = json.loads((out / "provenance.json").read_text())["run_id"]
    proc, paused = _start(tmp_path, screen(tmp_path, gpkg, "--overwrite"), "csv")
    assert Path(paused.read_text()).parent.name.startswith(".out.")  # it was writing the new set beside out
    proc.kill()
    proc.wait(30)
    assert tree_hashes(out) == before  # the old set, whole: no new file beside old ones
    left = _beside(out)
    assert any(n.endswith(".tmp") for n in left) and ".out.lock" in left  # what SIGKILL cannot tidy
    # the next run is not blocked by the dead run's lock file and removes its unfinished set
    from click.testing import CliRunner

    res = CliRunner().invoke(main, screen(tmp_path, gpkg, "--overwrite"))
    assert res.exit_code == 0, res.output
    prov = _consistent(out)
    assert prov["run_id"] != old_id
    assert _beside(out) == []


def test_sigkill_after_the_swap_leaves_the_new_set_complete(town, tmp_path):
    gpkg, out = town
    old_id = json.loads((out / "provenance.json").read_text())["run_id"]
    proc, _ = _start(tmp_path, screen(tmp_path, gpkg, "--overwrite"), "swapped")
    proc.kill()
    proc.wait(30)
    prov = _consistent(out)  # the new set, whole, never mixed with the old
    assert prov["run_id"] != old_id and prov["findings_scope"] == "person"


@pytest.mark.parametrize("sig, text", [(signal.SIGTERM, "terminated (SIGTERM)"), (signal.SIGINT, "interrupted")])
def test_sigterm_and_sigint_clean_up(town, tmp_path, sig, text):
    gpkg, out = town
    before = tree_hashes(out)
    proc, _ = _start(tmp_path, screen(tmp_path, gpkg, "--overwrite"), "csv")
    proc.send_signal(sig)
    err = _ended(proc)
    assert proc.returncode == 2
    assert err.strip().splitlines()[-1] == f"error: {text}"
    assert tree_hashes(out) == before
    assert _beside(out) == []  # no temporary folder, no lock file


@pytest.mark.parametrize("sig, text", [(signal.SIGTERM, "terminated (SIGTERM)"), (signal.SIGINT, "interrupted")])
def test_sigterm_and_sigint_while_the_child_lays_out_report_pdf(town, tmp_path, sig, text):
    # the parent is signalled while its child process lays out report.pdf: the child is killed
    # (and waited for) before the unfinished set is removed; --out stays as it was
    gpkg, out = town
    before = tree_hashes(out)
    proc, paused = _start(tmp_path, screen(tmp_path, gpkg, "--overwrite"), "pdf")
    child = int(paused.read_text())
    assert child != proc.pid
    proc.send_signal(sig)
    err = _ended(proc)
    assert proc.returncode == 2
    assert err.strip().splitlines()[-1] == f"error: {text}"
    assert tree_hashes(out) == before
    assert _beside(out) == []
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running into the removed folder
        os.kill(child, 0)


def test_a_signal_handled_inside_a_finalizer_is_not_lost(town, tmp_path):
    # the signal lands while the garbage collector runs a finalizer (or a weakref callback), where
    # Python ignores the Terminated the handler raises: it is sent again and the run ends at once
    # (seen in CI: the run went on waiting for its child, then the 30 s backstop ended it)
    gpkg, out = town
    before = tree_hashes(out)
    proc, _ = _start(tmp_path, screen(tmp_path, gpkg, "--overwrite"), "lost-signal")
    t0 = time.monotonic()
    err = _ended(proc, timeout=60)
    assert time.monotonic() - t0 < 20  # not the 600 s step, not the 30 s backstop
    assert proc.returncode == 2
    assert err.strip().splitlines()[-1] == "error: terminated (SIGTERM)"
    assert "Exception ignored" not in err
    assert tree_hashes(out) == before
    assert _beside(out) == []


@pytest.mark.parametrize("sig, text", [(signal.SIGTERM, "terminated (SIGTERM)"), (signal.SIGINT, "interrupted")])
def test_a_signal_a_library_swallowed_stops_the_run_at_the_next_step(town, tmp_path, sig, text):
    # the handler's exception is cleared by the code it was raised in (seen: pyarrow converting a pandas column of
    # Arrow text, then a wait for the GIS child until the 30 s backstop): the next output step raises it again,
    # so the run stops there and --out keeps the earlier set (without it the run went on and swapped its set in)
    gpkg, out = town
    before = tree_hashes(out)
    proc, err, took = _signalled(tmp_path, gpkg, "swallowed-signal", sig, timeout=60)
    assert took < 20  # the rest of the swallowing step (5 s), not the 30 s backstop
    assert proc.returncode == 2, err
    assert err.strip().splitlines()[-1] == f"error: {text}", err[-6000:]
    assert tree_hashes(out) == before
    assert _beside(out) == []


def test_a_step_raises_a_swallowed_signal_before_it_writes(tmp_path):
    from geoconstraints import interrupt

    wrote = []
    with pytest.raises(KeyboardInterrupt), outset.output_set(tmp_path / "out", set()) as s:
        assert s.step("a.txt", lambda folder: wrote.append("a") or {}) == {}
        interrupt.raised(KeyboardInterrupt())
        try:
            s.step("b.txt", lambda folder: wrote.append("b") or {})
        finally:
            interrupt.forget()
    assert wrote == ["a"] and not (tmp_path / "out").exists()


@pytest.mark.parametrize("sig, text", [(signal.SIGTERM, "terminated (SIGTERM)"), (signal.SIGINT, "interrupted")])
def test_a_cleanup_that_blocks_ends_within_the_limit(town, tmp_path, sig, text):
    # the backstop: whatever blocks the cleanup after the signal, the run ends CLEANUP_LIMIT_S
    # (3 s here) later with exit code 2, one error line last and the threads' stacks above it
    gpkg, out = town
    before = tree_hashes(out)
    proc, err, took = _signalled(tmp_path, gpkg, "stuck-cleanup", sig, timeout=40)
    assert took < 30
    assert proc.returncode == 2
    assert err.strip().splitlines()[-1] == (f"error: {text}; the cleanup did not end within 3 s (the stacks "
                                            f"above are for a bug report)")
    assert "in rmtree" in err  # the stack of the blocked main thread
    assert tree_hashes(out) == before  # --out untouched; the unfinished set is left for the next run


# Exceptions raised by a signal handler (every ~10 us) while jobs are handed to a paused child:
# whatever the handler interrupted, killing the child afterwards ends within the bound. With
# queue.Queue an interrupted put() could leave its mutex held (Condition.__enter__/__exit__ are
# Python code around it) and close() then blocked forever putting its own end mark.
STORM = r'''
import contextlib, os, signal, sys, threading, time
from pathlib import Path
sys.path.insert(0, os.environ["GC_TEST_FAKE_WEASYPRINT"])  # the child gets this sys.path: its layout pauses
from geoconstraints.output.child import Child

class Boom(BaseException):
    pass

armed = False

def on_alarm(signum, frame):  # an exception raised by a signal handler, as the CLI's SIGTERM raises Terminated
    global armed
    if armed:
        armed = False
        raise Boom()

folder = Path(sys.argv[1])
signal.signal(signal.SIGALRM, on_alarm)
child = Child()
child.submit("first.pdf", folder / "first.pdf", {"kind": "pdf", "page": "<p>first</p>", "max_pages": None})
while not Path(os.environ["GC_TEST_PAUSED"]).exists():
    time.sleep(0.01)
# 1. where a signal lands that leaves a lock held: right after a Python-level __enter__ took it
# (what an exception from a handler does there; measured: a fifth of those landing in a
# queue.Queue put). A hand-over taking such a lock stops here with the lock held.
enter = threading.Condition.__enter__
def interrupted_enter(self):
    global armed
    taken = enter(self)
    if armed and threading.current_thread() is threading.main_thread():
        armed = False
        raise Boom()
    return taken
threading.Condition.__enter__ = interrupted_enter
armed = True
with contextlib.suppress(Boom):
    child.submit("second.pdf", folder / "second.pdf", {"kind": "pdf", "page": "<p>second</p>", "max_pages": None})
armed = False
threading.Condition.__enter__ = enter
# 2. a storm of real signals while more jobs are handed over
signal.setitimer(signal.ITIMER_REAL, 1e-5, 1e-5)
hits = 0
for i in range(int(sys.argv[2])):
    try:  # armed and disarmed inside the try: a Boom landing between two hand-overs is caught too
        armed = True
        child.submit(f"p{i}.pdf", folder / f"p{i}.pdf", {"kind": "pdf", "page": "<p>page</p>", "max_pages": None})
        armed = False
    except Boom:
        hits += 1
armed = False
signal.setitimer(signal.ITIMER_REAL, 0)
child.close(kill=True)
print("closed", hits, flush=True)
'''


def test_exceptions_raised_by_signals_while_handing_jobs_never_block_killing_the_child(tmp_path):
    fake = tmp_path / "fake_weasyprint"
    fake.mkdir()
    (fake / "weasyprint.py").write_text(PAUSING_WEASYPRINT)
    paused = tmp_path / "paused"
    script = tmp_path / "storm.py"
    script.write_text(STORM)
    env = {**os.environ, "GC_TEST_FAKE_WEASYPRINT": str(fake), "GC_TEST_PAUSED": str(paused)}
    proc = subprocess.Popen([PY, str(script), str(tmp_path), "500"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        out = proc.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("killing the child did not end within 60 s after the interrupted hand-overs") from None
    finally:
        if paused.exists():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(paused.read_text()), signal.SIGKILL)
    assert proc.returncode == 0 and out.startswith("closed ")
    assert int(out.split()[1]) > 50  # the handler did interrupt the hand-overs many times
    child = int(paused.read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(child, 0)


def test_two_runs_into_one_folder_one_is_refused(town, tmp_path, runner):
    gpkg, out = town
    before = tree_hashes(out)
    first, _ = _start(tmp_path, screen(tmp_path, gpkg, "--overwrite"), "csv")
    try:
        res = runner.invoke(main, screen(tmp_path, gpkg, "--overwrite"))
        assert res.exit_code == 2
        assert f"--out {out} is being written by another geoconstraints run (pid {first.pid} on" in res.stderr
        assert tree_hashes(out) == before  # the second run wrote nothing
        # the library refuses too, whichever thread or process asks
        with pytest.raises(OutputError, match="being written by another geoconstraints run"), outset.out_lock(out):
            pass
    finally:
        first.terminate()
        first.communicate(timeout=60)
    assert first.returncode == 2 and tree_hashes(out) == before and _beside(out) == []


# ------------------------------------------------------------------------------------------
# --overwrite

def test_an_earlier_set_needs_overwrite_and_is_replaced_whole(tmp_path, runner):
    plan = write_gpkg(tmp_path / "plan.gpkg", {"harvest_area": harvest_area(), "parcels": parcels()})
    out = tmp_path / "out"
    res = runner.invoke(main, ["harvest", str(plan), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "field.kml").exists() and (out / "field.gpx").exists()
    before = tree_hashes(out)
    gpkg = sample_gpkg(tmp_path)
    res = runner.invoke(main, screen(tmp_path, gpkg))
    assert res.exit_code == 2
    assert f"--out {out} holds the outputs of an earlier run (harvest, " in res.stderr
    assert "give --overwrite to replace them" in res.stderr
    assert tree_hashes(out) == before
    res = runner.invoke(main, screen(tmp_path, gpkg, "--overwrite"))
    assert res.exit_code == 0, res.output
    prov = _consistent(out)
    assert prov["command"] == "screen"
    # nothing of the harvest set stays behind: no field files, no roads/landings tables
    assert not (out / "field.kml").exists() and not (out / "field.gpx").exists()
    assert not any(p.name.startswith(("roads", "landings", "profile_")) for p in out.rglob("*"))


def test_a_folder_with_files_that_are_not_ours_is_never_emptied(town, runner):
    gpkg, out = town
    (out / "notes.txt").write_text("the clerk's notes\n")
    before = tree_hashes(out)
    res = runner.invoke(main, screen(out.parent, gpkg, "--overwrite"))
    assert res.exit_code == 2
    assert "holds notes.txt, which the earlier run there" in res.stderr
    assert tree_hashes(out) == before
    # a folder of the user's without any provenance: refused, named, untouched
    mine = out.parent / "mine"
    mine.mkdir()
    (mine / "budget.xlsx").write_bytes(b"PK")
    res = runner.invoke(main, ["screen", str(gpkg), "--out", str(mine), "--overwrite"])
    assert res.exit_code == 2 and "holds budget.xlsx, which geoconstraints did not write" in res.stderr
    assert [p.name for p in mine.iterdir()] == ["budget.xlsx"]


def test_an_empty_folder_is_used(tmp_path, runner):
    gpkg = sample_gpkg(tmp_path)
    (tmp_path / "out").mkdir()
    res = runner.invoke(main, screen(tmp_path, gpkg))
    assert res.exit_code == 0, res.output
    _consistent(tmp_path / "out")


def test_the_same_result_written_again_needs_no_overwrite(tmp_path):
    from geoconstraints import load_layers, load_rulebook, screen_parcels, write_result

    res = screen_parcels(load_layers(sample_gpkg(tmp_path)), load_rulebook("vestal"), findings="all")
    write_result(res, tmp_path / "out")
    write_result(res, tmp_path / "out", findings="all")  # the same run: its own set is replaced
    assert _consistent(tmp_path / "out")["findings_scope"] == "all"
    other = screen_parcels(load_layers(tmp_path / "town.gpkg"), load_rulebook("vestal"))
    with pytest.raises(OutputError, match="holds the outputs of an earlier run"):
        write_result(other, tmp_path / "out")


def test_an_input_inside_out_is_refused(tmp_path, runner):
    out = tmp_path / "out"
    out.mkdir()
    gpkg = sample_gpkg(out)
    res = runner.invoke(main, ["screen", str(gpkg), "--out", str(out), "--overwrite"])
    assert res.exit_code == 2
    assert f"{gpkg} is one of the inputs and lies inside --out {out}" in res.stderr
    assert [p.name for p in out.iterdir()] == ["town.gpkg"]


# ------------------------------------------------------------------------------------------
# the parts

def test_swap_without_an_atomic_exchange(tmp_path, monkeypatch):
    monkeypatch.setattr(outset, "_exchange", lambda a, b: False)
    out = tmp_path / "out"
    with outset.output_set(out, provenance={"toolkit": "geoconstraints"}) as s:
        (s.folder / "a.txt").write_text("1")
    with outset.output_set(out, overwrite=True, provenance={"toolkit": "geoconstraints"}) as s:
        (s.folder / "b.txt").write_text("2")
    assert sorted(p.name for p in out.iterdir()) == ["b.txt", "provenance.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_recover_puts_back_a_set_moved_aside(tmp_path):
    # a crash between the two renames of the fallback swap: out missing, the earlier set aside
    out = tmp_path / "out"
    aside = tmp_path / ".out.0123456789ab.old"
    aside.mkdir()
    (aside / "report.html").write_text("old")
    unfinished = tmp_path / ".out.ba9876543210.tmp"
    unfinished.mkdir()
    other = tmp_path / ".out.b.0123456789ab.tmp"  # another folder's (out.b) set: left alone
    other.mkdir()
    outset.recover(out)
    assert (out / "report.html").read_text() == "old"
    assert not aside.exists() and not unfinished.exists() and other.exists()


def test_a_stale_lock_file_does_not_block(tmp_path):
    out = tmp_path / "out"
    outset.lock_path(out).write_text('{"pid": 999999, "host": "gone"}')
    with outset.out_lock(out), outset.out_lock(out):  # and re-entrant in one thread
        assert outset.lock_path(out).exists()
    assert not outset.lock_path(out).exists()


def test_provenance_json_never_holds_a_password(tmp_path):
    from browser_util import SECRET, make_synthetic_result

    from geoconstraints.output import write_result

    res = make_synthetic_result(tmp_path / "in")
    write_result(res, tmp_path / "out")
    text = (tmp_path / "out" / "provenance.json").read_text("utf-8")
    assert "clerk:***@db" in text and SECRET not in text
    con = sqlite3.connect(tmp_path / "out" / "results.gpkg")
    assert not any(SECRET in str(r) for r in con.execute("SELECT * FROM gpkg_metadata"))
    con.close()
    assert gpd.read_file(tmp_path / "out" / "results.gpkg", layer="findings_polygon").crs.to_epsg() == 2261


# ------------------------------------------------------------------------------------------
# every command that writes --out writes a set

def test_siteplan_writes_a_set_and_needs_overwrite(town, runner):
    import geoconstraints as gc

    _, out = town  # a screening's set
    args = ["siteplan", str(gc.sample_path("vestal_sample.gpkg")), "--dem", str(gc.sample_path("dem.tif")),
            "--out", str(out)]
    res = runner.invoke(main, args)
    assert res.exit_code == 2 and "holds the outputs of an earlier run (screen, " in res.stderr
    res = runner.invoke(main, [*args, "--overwrite"])
    assert res.exit_code == 0, res.output
    prov = json.loads((out / "provenance.json").read_text("utf-8"))
    listed = {o["path"] for o in prov["outputs"]}
    assert {"siteplan.pdf", "field.kml", "field.gpx"} <= listed and "plots/profile_haul_roads_H-1.png" in listed
    assert {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} == listed | {"provenance.json"}
    assert prov["command"] == "harvest" and not (out / "parcels.csv").exists()


def test_findings_option_and_the_defaults_per_command(tmp_path, runner):
    # seqr (a plan-level command): all findings by default, its one pass included
    res = runner.invoke(main, ["seqr", "--action-type", "small_subdivision", "--lots", "12", "--per-chapter-24",
                               "--out", str(tmp_path / "seqr")])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "seqr" / "findings.geojson").read_text("utf-8"))
    assert [f["properties"]["status"] for f in data["features"]] == ["pass"]
    assert data["geoconstraints"]["findings"] == "all"
    res = runner.invoke(main, ["seqr", "--action-type", "small_subdivision", "--lots", "12", "--per-chapter-24", "--findings", "person",
                               "--out", str(tmp_path / "seqr"), "--overwrite"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "seqr" / "findings.geojson").read_text("utf-8"))["features"] == []
    prov = json.loads((tmp_path / "seqr" / "provenance.json").read_text("utf-8"))
    assert prov["findings_scope"] == "person" and prov["findings_total"]["pass"] == 1
    assert sum(prov["findings_written"].values()) == 0
    assert [n for n, _ in pyogrio.list_layers(tmp_path / "seqr" / "results.gpkg")] == ["findings_nogeom", "layer_styles"]
    res = runner.invoke(main, ["seqr", "--action-type", "small_subdivision", "--findings", "some",
                               "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "'some' is not one of 'person', 'all'" in res.stderr


def test_gdals_sidecar_of_an_output_is_part_of_the_set_and_an_open_geopackage_is_said(town, runner):
    # reading results.gpkg with geopandas makes GDAL write results.gpkg.aux.xml beside it (its PAM metadata):
    # that is no file of the user's, so --overwrite replaces it with the set; SQLite's -wal beside a
    # GeoPackage says a program has it open: refused, saying so, the folder untouched
    gpkg, out = town
    gpd.read_file(out / "results.gpkg", layer="parcels")
    sidecar = out / "results.gpkg.aux.xml"
    if not sidecar.exists():  # GDAL versions differ in when they write it: the file as GDAL 3.12 writes it
        sidecar.write_text("<PAMDataset><Metadata><MDI key=\"GEOCONSTRAINTS_COMMAND\">screen</MDI></Metadata></PAMDataset>\n")
    old_run = json.loads((out / "provenance.json").read_text())["run_id"]
    res = runner.invoke(main, screen(out.parent, gpkg, "--overwrite"))
    assert res.exit_code == 0, res.stderr
    assert not sidecar.exists() and json.loads((out / "provenance.json").read_text())["run_id"] != old_run
    assert "results.gpkg.aux.xml" not in {o["path"] for o in json.loads((out / "provenance.json").read_text())["outputs"]}
    (out / "results.gpkg-wal").write_bytes(b"")
    before = tree_hashes(out)
    res = runner.invoke(main, screen(out.parent, gpkg, "--overwrite"))
    assert res.exit_code == 2
    assert ("results.gpkg-wal says a program (QGIS, ArcGIS, a notebook) has results.gpkg of the earlier run open; "
            "close it there and run again") in res.stderr
    assert tree_hashes(out) == before
    # a sidecar of a file the set does not list is still someone else's
    (out / "results.gpkg-wal").unlink()
    (out / "budget.xlsx.aux.xml").write_text("<PAMDataset/>")
    res = runner.invoke(main, screen(out.parent, gpkg, "--overwrite"))
    assert res.exit_code == 2 and "holds budget.xlsx.aux.xml, which the earlier run there" in res.stderr


# ------------------------------------------------------------------------------------------
# what provenance.json says was read; file names a case-insensitive file system keeps apart

def test_provenance_names_the_layers_not_read_and_hashes_a_users_rulebook(tmp_path, runner):
    # a GeoPackage holding a layer no role names (the clerk's notes): inputs lists what the run read,
    # inputs_not_read what it did not; a user's rulebook file (extending a bundled one) gets its
    # SHA-256 as the bundled one does
    gpkg = sample_gpkg(tmp_path)
    write_gpkg(gpkg, {"notes": harvest_area().rename(columns={"id": "note"})})
    book = tmp_path / "my-town.yaml"
    book.write_text("extends: vestal\nrulebook: my-town\nversion: '1'\nrules:\n  FLD-001:\n    citation: my code\n",
                    encoding="utf-8")
    res = runner.invoke(main, screen(tmp_path, gpkg, "--rulebook", str(book), "--outputs", "csv"))
    assert res.exit_code == 0, res.output
    prov = json.loads((tmp_path / "out" / "provenance.json").read_text("utf-8"))
    assert {(i["role"], i["layer"]) for i in prov["inputs"]} == {("parcels", "parcels"), ("flood_zones", "flood_zones")}
    assert prov["inputs_not_read"] == [{"file": "town.gpkg", "path": str(gpkg), "layer": "notes"}]
    assert prov["rulebook_source"] == str(book)
    assert prov["rulebook_sha256"] == hashlib.sha256(book.read_bytes()).hexdigest()
    mine, base = prov["rulebook_files"]
    assert (mine["file"], mine["bundled"], mine["size_bytes"]) == ("my-town.yaml", False, book.stat().st_size)
    assert (base["rulebook"], base["bundled"], len(base["sha256"])) == ("vestal", True, 64)
    # a run reading only the roles it is told reads fewer layers of the same file, and says so
    from geoconstraints import load_layers, load_rulebook, screen_parcels
    from geoconstraints.output import write_result

    layers = load_layers(gpkg, roles=("parcels",))
    write_result(screen_parcels(layers, load_rulebook("vestal")), tmp_path / "two", outputs="csv")
    prov = json.loads((tmp_path / "two" / "provenance.json").read_text("utf-8"))
    assert [i["layer"] for i in prov["inputs"]] == ["parcels"]
    assert sorted(i["layer"] for i in prov["inputs_not_read"]) == ["flood_zones", "notes"]
    assert prov["rulebook_files"][0]["bundled"] and prov["rulebook_sha256"] == prov["rulebook_files"][0]["sha256"]


def test_road_profiles_of_ids_that_differ_only_in_case_are_two_files(tmp_path):
    # haul roads H-1 and h-1: two plots whose names differ once case is folded (macOS, Windows),
    # both in the set and in provenance.json
    import geoconstraints as gc
    from geoconstraints.commands import check_harvest
    from geoconstraints.output import write_result

    roads = gpd.read_file(gc.sample_path("vestal_sample.gpkg"), layer="haul_roads")
    roads["id"] = ["H-1", "h-1", *roads["id"].iloc[2:]]
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"), dem=gc.sample_path("dem.tif"), haul_roads=roads)
    written = write_result(check_harvest(layers, gc.load_rulebook("vestal")), tmp_path / "out", outputs="csv,plots")
    plots = sorted(n for n in written if n.startswith("plots/profile_haul_roads_"))
    assert len(plots) == len(roads) and len({n.casefold() for n in plots}) == len(plots)
    hashed = {f"plots/profile_haul_roads_{i}-{hashlib.sha256(i.encode()).hexdigest()[:8]}.png" for i in ("H-1", "h-1")}
    assert hashed <= set(plots)
    assert f"plots/profile_haul_roads_{roads['id'].iloc[2]}.png" in plots  # an id clashing with none is itself
    listed = {o["path"] for o in json.loads((tmp_path / "out" / "provenance.json").read_text("utf-8"))["outputs"]}
    assert set(plots) <= listed


def test_the_rulebook_is_hashed_as_loaded_and_the_report_lists_it_and_the_layers_not_read(tmp_path):
    # a rulebook file edited between loading and writing the set: provenance.json and report.html give
    # the SHA-256 of the bytes applied, not of the file as it is now; report.html (and report.pdf, laid
    # out from it) lists the rulebook file(s) among the inputs and the layers not read, as
    # provenance.json does, escaped as every name is
    import re
    from html import unescape

    from geoconstraints import load_layers, load_rulebook, screen_parcels
    from geoconstraints.output import write_result

    gpkg = sample_gpkg(tmp_path)
    write_gpkg(gpkg, {"notes": harvest_area().rename(columns={"id": "note"}),
                      "sketch": harvest_area().rename(columns={"id": "note"})})
    book = tmp_path / "my <town> &co.yaml"
    applied = b"extends: vestal\nrulebook: my-town\nversion: '1'\n"
    book.write_bytes(applied)
    result = screen_parcels(load_layers(gpkg), load_rulebook(book))
    book.write_bytes(b"extends: vestal\nrulebook: my-town\nversion: '2'\n")  # edited before the set is written
    write_result(result, tmp_path / "out", outputs="csv,report")
    prov = json.loads((tmp_path / "out" / "provenance.json").read_text("utf-8"))
    assert prov["rulebook_sha256"] == hashlib.sha256(applied).hexdigest() != hashlib.sha256(book.read_bytes()).hexdigest()
    assert [(f["file"], f["size_bytes"]) for f in prov["rulebook_files"]] == [(book.name, len(applied)),
                                                                              ("vestal.yaml", prov["rulebook_files"][1]["size_bytes"])]
    assert sorted(i["layer"] for i in prov["inputs_not_read"]) == ["notes", "sketch"]
    page = (tmp_path / "out" / "report.html").read_text("utf-8")
    section = re.search(r'<section id="provenance".*?</section>', page, re.DOTALL).group(0)
    assert "<town>" not in section and "my &lt;town&gt; &amp;co.yaml" in section  # escaped, never markup
    rows = [[" ".join(unescape(re.sub(r"<[^>]+>", "", c)).split()) for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.DOTALL)]
            for r in re.findall(r'<tr class="rulebook-file">(.*?)</tr>', section, re.DOTALL)]
    assert rows == [["rulebook", book.name, "", "", "", f"{len(applied):,}", prov["rulebook_sha256"]],
                    ["rulebook (extended)", "vestal.yaml (bundled with geoconstraints)", "", "", "",
                     f"{prov['rulebook_files'][1]['size_bytes']:,}", prov["rulebook_files"][1]["sha256"]]]
    not_read = re.search(r'<p class="note" id="inputs-not-read">(.*?)</p>', section, re.DOTALL).group(1)
    assert " ".join(unescape(not_read).split()) == (
        "Present in the input files but not read by this run (no check used them, no output draws them): "
        f"town.gpkg: {', '.join(i['layer'] for i in prov['inputs_not_read'])}.")
    # every layer read: no such line
    (tmp_path / "two").mkdir()
    layers = load_layers(sample_gpkg(tmp_path / "two"))
    write_result(screen_parcels(layers, load_rulebook("vestal")), tmp_path / "out2", outputs="csv,report")
    page = (tmp_path / "out2" / "report.html").read_text("utf-8")
    assert 'id="inputs-not-read"' not in page and page.count('<tr class="rulebook-file">') == 1


# ------------------------------------------------------------------------------------------
# an input changed while the run was under way (read, then re-exported before the set is written)

def _screened(tmp_path: Path, flood: gpd.GeoDataFrame | None = None):
    from catalogue import flood_zones, write_dem

    from geoconstraints import load_layers, load_rulebook, screen_parcels

    gpkg = write_gpkg(tmp_path / "town.gpkg", {"parcels": parcels(), "flood_zones": flood_zones() if flood is None
                                               else flood})
    dem = write_dem(tmp_path / "dem.tif", units="ft")
    return gpkg, dem, screen_parcels(load_layers(gpkg, dem=dem), load_rulebook("vestal"))


def _changed_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelname == "WARNING" and "changed while the run" in r.getMessage()]


def test_an_input_rewritten_between_read_and_write_is_flagged(tmp_path, caplog):
    from geoconstraints.output import write_result

    gpkg, dem, result = _screened(tmp_path)
    read = gpkg.stat()
    write_gpkg(gpkg, {"parcels": parcels(4)})  # re-exported while the run was under way
    st = dem.stat()
    os.utime(dem, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))  # the DEM touched: same size, later time
    with caplog.at_level("WARNING"):
        write_result(result, tmp_path / "out", outputs="csv")  # not failed
    prov = json.loads((tmp_path / "out" / "provenance.json").read_text("utf-8"))
    assert prov["changed_during_run"] is True
    changed = {c["role"]: c for c in prov["inputs_changed_during_run"]}
    assert set(changed) == {"parcels", "flood_zones", "dem"}
    p = changed["parcels"]
    assert p["path"] == str(gpkg) and p["sha256_in_inputs"] == "the file as read"
    assert (p["read"]["size_bytes"], p["read"]["mtime_ns"]) == (read.st_size, read.st_mtime_ns)
    assert (p["at_write"]["size_bytes"], p["at_write"]["mtime_ns"]) == (gpkg.stat().st_size, gpkg.stat().st_mtime_ns)
    d = changed["dem"]
    assert d["read"]["size_bytes"] == d["at_write"]["size_bytes"] == dem.stat().st_size
    assert d["at_write"]["mtime_ns"] - d["read"]["mtime_ns"] == 2_000_000_000
    assert [i["role"] for i in prov["inputs"] if i.get("changed_during_run")] == ["parcels", "flood_zones", "dem"]
    warned = _changed_warnings(caplog)
    assert len(warned) == 2  # one per file
    assert warned[0].startswith(f"input {gpkg} (parcels, flood_zones) changed while the run was under way: it is now "
                                f"{gpkg.stat().st_size:,} bytes")
    assert all("The outputs describe the file as this run read it, not as it is now" in w for w in warned)
    assert warned[1].startswith(f"input {dem} (dem) changed while the run was under way")


def test_a_removed_input_is_flagged_and_a_normal_run_is_not(tmp_path, caplog):
    from geoconstraints.output import write_result

    gpkg, _dem, result = _screened(tmp_path)
    with caplog.at_level("WARNING"):
        write_result(result, tmp_path / "out", outputs="csv")
    prov = json.loads((tmp_path / "out" / "provenance.json").read_text("utf-8"))
    assert prov["changed_during_run"] is False and prov["inputs_changed_during_run"] == []
    assert not any("changed_during_run" in i for i in prov["inputs"]) and _changed_warnings(caplog) == []
    gpkg.unlink()
    write_result(result, tmp_path / "out2", outputs="csv")
    prov = json.loads((tmp_path / "out2" / "provenance.json").read_text("utf-8"))
    assert [(c["role"], c["at_write"]) for c in prov["inputs_changed_during_run"]] == [("parcels", None),
                                                                                       ("flood_zones", None)]
    assert _changed_warnings(caplog)[-1].startswith(f"input {gpkg} (parcels, flood_zones) changed while the run was "
                                                    f"under way: it is gone")


@pytest.mark.parametrize(("eff", "raw", "iso"), [
    (["3/2/1998", "3/2/1998"], "3/2/1998", "1998-03-02"),  # FEMA's US order
    (["2012", "20100616"], "20100616, 2012", "2010-06-16, not a date"),  # a year alone states no day
    (["2012", None], "2012", None),  # no value states a day: no ISO field
])
def test_provenance_gives_the_flood_map_s_effective_day_beside_the_raw_text(tmp_path, eff, raw, iso):
    from catalogue import flood_zones

    from geoconstraints.output import write_result

    _, _, result = _screened(tmp_path, flood_zones().assign(EFF_DATE=eff))
    write_result(result, tmp_path / "out", outputs="csv")
    nfhl = json.loads((tmp_path / "out" / "provenance.json").read_text("utf-8"))["nfhl"]["flood_zones"]
    assert nfhl["effective_date"] == raw
    assert nfhl.get("effective_date_iso") == iso


def test_a_dem_gone_before_the_write_is_said_not_a_traceback(tmp_path, caplog):
    from geoconstraints.output import write_result

    _gpkg, dem, result = _screened(tmp_path)
    dem.unlink()  # the DEM is hashed when the set is written: gone by then
    with caplog.at_level("WARNING"):
        write_result(result, tmp_path / "out", outputs="csv,report")
    prov = json.loads((tmp_path / "out" / "provenance.json").read_text("utf-8"))
    assert "<td>dem</td><td>dem.tif</td>" in (page := (tmp_path / "out" / "report.html").read_text("utf-8"))
    assert "gone when the outputs were written: not hashed" in page
    entry = next(i for i in prov["inputs"] if i["role"] == "dem")
    assert (entry["size_bytes"], entry["sha256"], entry["gone_at_write"]) == (None, "", True)
    assert [(c["role"], c["at_write"]) for c in prov["inputs_changed_during_run"]] == [("dem", None)]
    assert _changed_warnings(caplog)[-1].startswith(f"input {dem} (dem) changed while the run was under way: it is gone")


def test_siteplan_says_an_input_changed_while_it_drew(tmp_path, runner, monkeypatch):
    # the siteplan command writes its own set (not through write_result): its provenance.json says, too, that
    # an input was replaced between the read and the write (here while the plots were drawn)
    import shutil

    import geoconstraints as gc
    from geoconstraints import cli

    gpkg = tmp_path / "plan.gpkg"
    shutil.copy(gc.sample_path("vestal_sample.gpkg"), gpkg)
    drawn = cli.write_plots

    def plots_then_touch(result, folder):
        st = gpkg.stat()
        os.utime(gpkg, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # re-exported meanwhile
        return drawn(result, folder)

    monkeypatch.setattr(cli, "write_plots", plots_then_touch)
    res = runner.invoke(main, ["siteplan", str(gpkg), "--dem", str(gc.sample_path("dem.tif")),
                               "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    prov = json.loads((tmp_path / "out" / "provenance.json").read_text("utf-8"))
    assert prov["changed_during_run"] is True
    changed = prov["inputs_changed_during_run"]
    assert changed and {c["path"] for c in changed} == {str(gpkg)}
    assert all(c["at_write"]["mtime_ns"] - c["read"]["mtime_ns"] == 5_000_000_000 for c in changed)


def test_a_rainfall_table_changed_or_gone_before_the_write_is_said(tmp_path, caplog):
    # the tables a command reads by path are stamped when read, as the layers are: a rainfall CSV edited
    # after the check (and an inspection log removed) is listed, not hashed as if the run had read it so
    import shutil

    import geoconstraints as gc
    from geoconstraints import check_stormwater, load_layers, load_rulebook
    from geoconstraints.output import write_result

    rain, log = tmp_path / "rainfall.csv", tmp_path / "inspection_log.csv"
    shutil.copy(gc.sample_path("rainfall.csv"), rain)
    shutil.copy(gc.sample_path("inspection_log.csv"), log)
    res = check_stormwater(load_layers(gc.sample_path("vestal_sample.gpkg")), load_rulebook("vestal"),
                           rainfall=rain, inspection_log=log)
    read = rain.stat().st_size
    with rain.open("a", encoding="utf-8") as fh:
        fh.write("\n")  # edited after the run read it
    log.unlink()
    with caplog.at_level("WARNING"):
        write_result(res, tmp_path / "out", outputs="csv")
    prov = json.loads((tmp_path / "out" / "provenance.json").read_text("utf-8"))
    changed = {c["role"]: c for c in prov["inputs_changed_during_run"]}
    assert set(changed) == {"rainfall", "inspection_log"} and prov["changed_during_run"] is True
    assert (changed["rainfall"]["read"]["size_bytes"], changed["rainfall"]["at_write"]["size_bytes"]) == (read, read + 1)
    assert changed["inspection_log"]["at_write"] is None
    entry = {i["role"]: i for i in prov["inputs"]}
    assert entry["inspection_log"]["gone_at_write"] is True and entry["rainfall"]["changed_during_run"] is True
    assert any(f"input {rain} (rainfall) changed while the run was under way" in w for w in _changed_warnings(caplog))
