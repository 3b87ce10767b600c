"""Write outputs in a child process while the parent writes the others: report PDFs
(WeasyPrint) and GDAL layers (findings.geojson, results.gpkg).

WeasyPrint's layout is pure-Python CPU work (7-8 s for a county's report.pdf) and pyogrio holds
the GIL while GDAL writes (2-14 s for a county's GeoPackage and GeoJSON), so threads cannot put
them on the machine's other core. :class:`Child` starts one child interpreter and hands it jobs
of one kind, each a line of JSON naming the file to write (in the output set's folder):

``pdf``
    a page already rendered as HTML, laid out and written as a PDF (``max_pages``: written only
    when it fits);
``layers``
    Arrow tables in Arrow IPC files (a scratch folder of the set), each written as a layer by
    :func:`write_arrow_layers`, the function an in-process writer calls with the same tables and
    arguments (:mod:`geoconstraints.output.files`), so the file is the same.

:meth:`Job.result` later gives back what the child did: its answer, or the error raised in the
child, raised again in the parent (an ``OSError`` keeps its errno and file name, a pyogrio error
its class and text, so the output set reports it exactly as an in-process writer's).

How the child starts, deliberately: a fresh interpreter running this file
(``python -I child.py``, like :mod:`multiprocessing`'s ``spawn``), never ``fork``. The
parent has run thread pools (the overlay's, GDAL's, Arrow's): a forked child inherits their
locks but not the threads holding them and can deadlock. ``spawn``/``forkserver`` would unpickle
a function of :mod:`geoconstraints.output` in the child, importing the whole package and the
CLI's script again (about 1.8 s of CPU); this file imports only the standard library at the top,
and WeasyPrint (0.5-0.8 s) or pyarrow and pyogrio (0.2-0.6 s) when the first job of their kind
arrives, or at once in a child started early (:func:`prestart`: a county's screening starts its
children while it checks the parcels).
The child gets the parent's ``sys.path`` (so it finds the libraries the parent would), runs in
its own process group (a Ctrl-C at the terminal reaches the parent only, which kills the child)
and exits when its input closes, so a parent killed with SIGKILL leaves it running for at most
one job.

This module imports nothing of geoconstraints: it is run as a script. :mod:`geoconstraints.output`
registers :func:`geoconstraints.interrupt.check` in :data:`BEFORE_WAIT`.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import pickle
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self, cast

log = logging.getLogger(__name__)

KILL_WAIT_S = 10.0
"""At most this long for a killed child to be reaped and its feeding thread to end."""

BEFORE_WAIT: list[Callable[[], None]] = []
"""Called in the parent before it waits for a child's answer or its end. :mod:`geoconstraints.output`
registers :func:`geoconstraints.interrupt.check`: a Ctrl-C or SIGTERM whose exception a library
swallowed is raised there, not lost in a wait for a child that may never answer."""


def _before_wait() -> None:
    for fn in BEFORE_WAIT:
        fn()


_LIVE: set[subprocess.Popen[str]] = set()  # the children started and not yet reaped (kill_all)


def kill_all() -> None:
    """SIGKILL every child still running, without waiting (the CLI's last resort before ``os._exit``:
    a child in its own process group would otherwise outlive the run, holding its stderr)."""
    for proc in list(_LIVE):
        with contextlib.suppress(OSError):
            proc.kill()


# -- the child ----------------------------------------------------------------------------------
def _write_pdf(doc: Any, target: Path) -> None:
    """Write the document to ``target`` through a temporary file beside it (never half a PDF).

    The temporary name is reserved and freed before WeasyPrint creates the file, so the PDF gets
    the permissions of every other output (``0666`` less the umask), not ``mkstemp``'s ``0600``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp" + target.suffix, dir=target.parent)
    os.close(fd)
    os.unlink(tmp)
    try:
        doc.write_pdf(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _lay_out(job: dict[str, Any], weasyprint: Any) -> dict[str, Any]:
    """Lay out one page; write it unless it runs over ``max_pages``. The answer: pages, written."""
    doc = weasyprint.HTML(string=job["page"]).render()
    pages = len(doc.pages)
    fits = job.get("max_pages") is None or pages <= job["max_pages"]
    if fits:
        _write_pdf(doc, Path(job["target"]))
    return {"pages": pages, "written": fits}


def import_weasyprint() -> tuple[Any, dict[str, Any] | None]:
    """(weasyprint, None), or (None, the answer saying it is missing: type and first line of the error).

    The one import of WeasyPrint, here and in :func:`geoconstraints.output.report.html_to_pdf`
    (its own loggers quietened)."""
    try:
        import weasyprint
    except (ImportError, OSError) as exc:  # OSError: the wheel is there but pango is not
        return None, {"missing": [type(exc).__name__, str(exc).splitlines()[0] if str(exc) else ""]}
    logging.getLogger("weasyprint").setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    return weasyprint, None


GDAL_WRITE_CONFIG: dict[str, str] = {"OGR_SQLITE_SYNCHRONOUS": "OFF"}
"""GDAL configuration while :func:`write_arrow_layers` writes. ``OGR_SQLITE_SYNCHRONOUS=OFF``: SQLite
does not wait for the disk after each transaction of a GeoPackage (1.0-1.5 s of the 10 s results.gpkg
of a million parcels takes). The file is a temporary one, moved in place only once complete and
discarded when the run fails or is killed (as every other output, none of which waits for the disk),
so a crash can never leave a half-written results.gpkg in the output folder."""


@contextlib.contextmanager
def gdal_config(options: dict[str, str]) -> Iterator[None]:
    """GDAL's configuration ``options`` set for the block, the values before restored after it."""
    import pyogrio

    before = {k: pyogrio.get_gdal_config_option(k) for k in options}
    pyogrio.set_gdal_config_options(options)
    try:
        yield
    finally:
        pyogrio.set_gdal_config_options(before)


def write_arrow_layers(target: Any, layers: Iterable[tuple[Any, dict[str, Any]]]) -> None:
    """Write each ``(table, arguments)`` of ``layers`` into the GDAL dataset ``target``, in order,
    with :func:`pyogrio.write_arrow` (``arguments``: ``layer``, ``driver``, ``geometry_name``,
    ``crs``, creation options, metadata...), under :data:`GDAL_WRITE_CONFIG`. The one call of
    GDAL's writer for findings.geojson and results.gpkg, in the parent or in the child (``table``
    a path there: an Arrow IPC file). ``target``: a path, or a binary file object (pyogrio writes
    it in memory, then copies it)."""
    import pyarrow as pa
    import pyogrio

    with gdal_config(GDAL_WRITE_CONFIG):
        for table, kwargs in layers:
            if isinstance(table, str):
                with pa.memory_map(table) as src:
                    table = pa.ipc.open_file(src).read_all()
            pyogrio.write_arrow(table, os.fspath(target) if isinstance(target, (str, os.PathLike)) else target,
                                **kwargs)


def _layers(job: dict[str, Any]) -> dict[str, Any]:
    """Write the layers of a ``layers`` job into its temporary file ``into``; the parent moves it in place."""
    write_arrow_layers(job["into"], [(lay["table"], lay["write"]) for lay in job["layers"]])
    return {"written": True}


def _failure(exc: BaseException) -> dict[str, Any]:
    """The answer for an exception: the exception pickled, its type and text, the traceback."""
    try:
        blob = base64.b64encode(pickle.dumps(exc)).decode("ascii")
    except Exception:  # noqa: BLE001 - an exception that does not pickle: its type and text are enough
        blob = ""
    return {"error": blob, "type": type(exc).__name__, "text": str(exc),
            "traceback": "".join(traceback.format_exception(exc))}


def serve(stdin: IO[str], stdout: IO[str], warm: str | None = None) -> None:
    """The child's loop: one JSON job a line in (``kind``: ``pdf`` with ``page``, ``target``,
    ``max_pages``; ``layers`` with ``target`` and ``layers``), one JSON answer a line out, until
    ``stdin`` closes. ``warm``: the kind of job whose libraries are imported before the first
    job comes (a child started early, :func:`prestart`)."""
    weasyprint: Any = None
    missing: dict[str, Any] | None = None
    if warm == "pdf":
        weasyprint, missing = import_weasyprint()
    elif warm == "layers":
        with contextlib.suppress(ImportError):  # else the first job says what is missing
            import pyarrow  # noqa: F401 - imported now, while the parent is still checking
            import pyogrio  # noqa: F401
    for line in stdin:
        job = json.loads(line)
        try:
            if job["kind"] == "layers":
                answer = _layers(job)
            else:
                if weasyprint is None and missing is None:
                    weasyprint, missing = import_weasyprint()
                answer = missing or _lay_out(job, weasyprint)
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the parent, raised there
            answer = _failure(exc)
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()


def main() -> None:
    """Entry of the child: ``python -I child.py '<the parent's sys.path as JSON>' [KIND]``, KIND
    the kind of job to import the libraries of at once (:func:`prestart`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides: it kills the child
    sys.path[:] = json.loads(sys.argv[1])
    answers, sys.stdout = sys.stdout, sys.stderr  # stdout carries the answers only: a stray print goes to stderr
    serve(sys.stdin, answers, warm=sys.argv[2] if len(sys.argv) > 2 else None)


# -- children started early ---------------------------------------------------------------------
KINDS = ("pdf", "layers")
"""The kinds of child: laying out PDFs (WeasyPrint) and writing GDAL layers (pyarrow, pyogrio)."""

_SPARE: dict[str, subprocess.Popen[str]] = {}  # started by prestart, not yet taken by a Child


def _spawn(warm: str | None = None) -> subprocess.Popen[str]:
    """A child interpreter running this file (see the module docstring), in its own process group."""
    cmd = [sys.executable, "-I", str(Path(__file__).resolve()), json.dumps(sys.path), *([warm] if warm else [])]
    group: dict[str, Any] = {"process_group": 0} if os.name == "posix" else {}
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            encoding="utf-8", **group)
    _LIVE.add(proc)
    return proc


def prestart(kind: str) -> bool:
    """Start a child of ``kind`` (:data:`KINDS`) now, importing its libraries (WeasyPrint: 0.8 s;
    pyarrow and pyogrio: 0.6 s) while this process does other work; the next :class:`Child` of that
    kind takes it instead of starting one. A county's screening starts both once its layers are
    loaded, so the imports run during the check, not on the critical path of the writers.
    :func:`discard_spares` ends those not taken. False when no child can be started."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of child {kind!r}: one of {', '.join(KINDS)}")
    if kind in _SPARE and _SPARE[kind].poll() is None:
        return True
    try:
        _SPARE[kind] = _spawn(kind)
    except OSError as exc:
        log.info("no child process started early for %s (%s)", kind, exc)
        return False
    return True


def _take_spare(kind: str) -> subprocess.Popen[str] | None:
    """The spare child of ``kind`` if one is running (see :func:`prestart`)."""
    proc = _SPARE.pop(kind, None)
    if proc is not None and proc.poll() is not None:  # it died: not usable
        _LIVE.discard(proc)
        return None
    return proc


def _kill_and_reap(proc: subprocess.Popen[str], doing: str) -> bool:
    """SIGKILL ``proc`` (stopped or not) and reap it, waiting at most :data:`KILL_WAIT_S`; False
    (and a warning) when it did not end."""
    with contextlib.suppress(OSError):
        proc.kill()
    try:
        proc.wait(KILL_WAIT_S)  # with a timeout Popen polls: no lock a signal could have left held
    except subprocess.TimeoutExpired:
        log.warning("the process %s (pid %s) did not end after SIGKILL", doing, proc.pid)
        return False
    return True


def discard_spares() -> None:
    """Kill and reap the children :func:`prestart` started that no :class:`Child` took."""
    while _SPARE:
        kind, proc = _SPARE.popitem()
        if not _kill_and_reap(proc, f"started early for {kind}"):
            continue
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        _LIVE.discard(proc)


# -- the parent ---------------------------------------------------------------------------------
class ChildError(RuntimeError):
    """An exception of the child that could not be rebuilt in the parent (its type and text)."""


def _rebuild(answer: dict[str, Any], doing: str) -> BaseException:
    """The child's exception, raised again in the parent, its traceback added as a note."""
    exc: BaseException
    try:
        exc = pickle.loads(base64.b64decode(answer["error"]))  # our own child wrote it
    except Exception:  # noqa: BLE001 - a class the parent cannot import
        exc = ChildError(f"{answer.get('type')}: {answer.get('text')}")
    exc.add_note(f"raised in the process {doing}:\n" + str(answer.get("traceback", "")).rstrip())
    return exc


@dataclass
class Job:
    """One file the child writes: ``result()`` waits for it (see :class:`Child`).

    Attributes
    ----------
    name : str
        The output's name (the step a failure is reported against).
    target : Path
        The file the parent names in errors (the output in the set's folder).
    params : dict
        What the parent needs to finish the job (e.g. ``max_pages`` of a PDF, the temporary file
        and the scratch files of a ``layers`` job).
    """

    name: str
    target: Path
    params: dict[str, Any]
    owner: Child = field(repr=False)
    index: int = 0

    def result(self) -> dict[str, Any]:
        """Wait for the child: its answer (``pdf``: ``{"pages": n, "written": bool}``, or
        ``{"missing": [type, text]}`` when WeasyPrint cannot be imported there; ``layers``:
        ``{"written": True}``).

        Raises
        ------
        Exception
            What the child raised (an ``OSError`` with its errno and file name), or
            ``ChildProcessError`` naming the target when the child died without answering.
        """
        answer = self.owner.answer(self.index, self.target)
        if "error" in answer:
            raise _rebuild(answer, self.owner.doing)
        return answer


class Child:
    """A child process writing outputs; a context manager that kills it if the block fails.

    Jobs are sent as they come (:meth:`submit`, which does not wait) and answered in order;
    leaving the block normally waits for the child to finish, leaving it by an exception (a
    failed writer, Ctrl-C, the CLI's SIGTERM) kills it first, so nothing writes into the
    output set's folder once it is removed.

    Parameters
    ----------
    doing : str
        What the child does, for messages: "the process <doing> was killed by SIGKILL".
    kind : {"pdf", "layers"}
        The kind of jobs it gets: a child of that kind started early (:func:`prestart`) is taken.
    """

    def __init__(self, doing: str = "laying out the PDF", kind: str = "pdf") -> None:
        self.doing = doing
        self.kind = kind
        self.proc: subprocess.Popen[str] | None = None
        self.jobs: list[Job] = []
        self._answers: list[dict[str, Any]] = []
        # SimpleQueue: put() is one C call holding no lock across bytecode, so an exception a signal
        # handler raises (Ctrl-C, the CLI's SIGTERM) can never leave it locked for close() (queue.Queue
        # can: its Condition.__enter__/__exit__ are Python code around the mutex)
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._feeder: threading.Thread | None = None

    def _start(self) -> subprocess.Popen[str]:
        proc = _take_spare(self.kind) or _spawn(self.kind)  # importing its kind's libraries at once
        self._feeder = threading.Thread(target=self._feed, args=(proc,), name="child-feed", daemon=True)
        self._feeder.start()
        return proc

    def begin(self) -> bool:
        """Start the child now, before its first job, so that it imports its libraries while this
        process prepares that job. False when no child can be started (:meth:`submit` then says so)."""
        if self.proc is None:
            try:
                self.proc = self._start()
            except OSError:
                return False
        return True

    def _feed(self, proc: subprocess.Popen[str]) -> None:
        """Write the queued jobs to the child (a thread: a long page never blocks the parent)."""
        stdin = cast(IO[str], proc.stdin)  # _start opens it with stdin=PIPE
        with contextlib.suppress(OSError, ValueError):  # the child died or was killed: its answer says
            while (line := self._queue.get()) is not None:
                stdin.write(line)
                stdin.flush()
        with contextlib.suppress(OSError, ValueError):
            stdin.close()

    def submit(self, name: str, target: Path, job: dict[str, Any], **params: Any) -> Job | None:
        """Have the child run ``job`` (its ``kind`` and what that kind reads; ``target`` is added)
        for the output ``name``; returns at once. ``params`` are kept on the :class:`Job` for the
        parent. ``None`` when no child can be started (no Python executable: an embedding application)."""
        if self.proc is None:
            try:
                self.proc = self._start()
            except OSError as exc:
                log.info("no child process for %s (%s): written in this process", name, exc)
                return None
        handle = Job(name, Path(target), params, self, len(self.jobs))
        self.jobs.append(handle)
        self._queue.put(json.dumps({"target": str(target), **job}) + "\n")
        return handle

    def answer(self, index: int, target: Path) -> dict[str, Any]:
        """The child's answer to job ``index`` (waiting for it); no job can be submitted after."""
        self._queue.put(None)  # every job is in: the child exits after the last answer
        proc = self.proc
        if proc is None or proc.stdout is None:  # a Job comes from submit, which started the child
            raise TypeError("no child process to answer: submit a job first")
        while len(self._answers) <= index:
            _before_wait()  # a signal a library swallowed: raised, not lost waiting for a child that may never answer
            line = proc.stdout.readline()
            if not line:
                code = proc.wait()
                how = (f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}")
                raise ChildProcessError(0, f"the process {self.doing} {how}", str(target))
            self._answers.append(json.loads(line))
        return self._answers[index]

    def close(self, *, kill: bool) -> None:
        """Stop the child: kill it (``kill``) or let it finish its jobs; wait for it either way.

        Killing is bounded: SIGKILL first, then at most :data:`KILL_WAIT_S` for the child to be
        reaped and for the feeding thread (whose write to the dead child fails at once) to end. An
        exception while waiting for a child finishing its jobs (a signal) kills it too."""
        if self.proc is None:
            return
        self._queue.put(None)
        if not kill:
            try:
                _before_wait()  # a signal a library swallowed: the child is killed, not waited for
                self.proc.wait()
            except BaseException:
                self._kill()
                raise
        else:
            self._kill()
        if self.proc.returncode is not None:
            _LIVE.discard(self.proc)
        if self._feeder is not None:
            self._feeder.join(KILL_WAIT_S)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def _kill(self) -> None:
        """SIGKILL the child (stopped or not) and reap it (:func:`_kill_and_reap`); nothing without one."""
        if self.proc is not None:
            _kill_and_reap(self.proc, self.doing)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(kill=exc_type is not None or len(self._answers) < len(self.jobs))


if __name__ == "__main__":
    main()
