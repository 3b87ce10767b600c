"""The output folder as one set: all of a run's outputs or none of them.

A run writes into a new hidden folder beside ``--out`` (``.<name>.<hex>.tmp``, same file
system) and, only when every output is complete, swaps it in for ``--out`` in one step
(Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere two renames, repaired by the next run if a
crash falls between them) and removes the earlier set. A failure or a signal before that leaves
``--out`` as it was; a killed process leaves at most the hidden folder, removed by the next run.

One run at a time per ``--out``: :func:`out_lock` holds an ``flock`` on ``.<name>.lock`` beside
it. The kernel drops the lock when its process dies, so a lock left by a killed run is never
stale; the file is removed on release.

Each set ends with ``provenance.json``: the run id, the run's provenance and the list of its
files with their sizes and SHA-256. It is how a folder is known to be ours (:func:`check_out_folder`):
a folder holding anything its ``provenance.json`` does not list is never emptied, and a
complete earlier set is replaced only with ``overwrite``.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime as dt
import errno
import json
import logging
import os
import re
import shutil
import socket
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from geoconstraints import interrupt
from geoconstraints.errors import OutputError
from geoconstraints.io.paths import sha256_file
from geoconstraints.parallel import parallel_map
from geoconstraints.text import redact_all

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows: msvcrt's byte-range lock, also dropped when the process dies
    fcntl = None  # type: ignore[assignment]
    import msvcrt

log = logging.getLogger(__name__)

PROVENANCE_NAME = "provenance.json"
"""The file that ends every output set (see :func:`write_provenance`)."""

SET_FORMAT = 1
"""Version of the layout of ``provenance.json``."""

_TMP_RE = r"[0-9a-f]{12}"
_held: dict[tuple[str, int], int] = {}  # (out folder, thread) -> depth: out_lock is re-entrant per thread
_held_guard = threading.Lock()


def canonical(out_dir: str | os.PathLike[str]) -> Path:
    """The absolute, symlink-free path of an output folder (which may not exist yet)."""
    return Path(os.path.realpath(os.path.abspath(os.fspath(out_dir))))


def refuse_file_out(out_dir: str | os.PathLike[str], inputs: Iterable[Path] = ()) -> Path:
    """Refuse an ``--out`` that is an existing file (one of the inputs or another); return its
    :func:`canonical` path. Creates nothing.

    Raises
    ------
    OutputError
        ``out_dir`` is a file, or empty (``--out ""``, an unset shell variable: it named the folder
        the run was started in).
    """
    if not os.fspath(out_dir).strip():
        raise OutputError(f"--out {os.fspath(out_dir)!r} names no folder (an empty or unset variable?). Give the "
                          f"folder for the outputs, e.g. --out results (it is created if missing)")
    out = canonical(out_dir)
    is_input = any(canonical(p) == out for p in inputs)
    if is_input or (out.exists() and not out.is_dir()):
        raise OutputError(f"--out {os.fspath(out_dir)} is an existing file{' (one of the inputs)' if is_input else ''}, "
                          f"not a folder. Choose a folder name (it is created if missing)")
    return out


def lock_path(out: Path) -> Path:
    """``<parent>/.<name>.lock``: the lock file of output folder ``out``."""
    return out.parent / f".{out.name}.lock"


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return "another process"
    return f"pid {info.get('pid', '?')} on {info.get('host', '?')} since {info.get('since', '?')}"


def _mkparent(out: Path, shown: str) -> None:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"--out {shown}: cannot create the folder {out.parent} ({exc.strerror})") from None


@contextlib.contextmanager
def out_lock(out_dir: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the lock of an output folder: a second run writing the same ``--out`` is refused.

    Re-entrant within one thread (the CLI takes it before the check runs, :func:`output_set`
    again when writing). Creates the parent folder if missing.

    Raises
    ------
    OutputError
        Another process (or thread) holds the lock: its pid, host and start time are named.
    """
    out, shown = canonical(out_dir), os.fspath(out_dir)
    key = (str(out), threading.get_ident())
    with _held_guard:
        if key in _held:
            _held[key] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield lock_path(out)
        finally:
            with _held_guard:
                _held[key] -= 1
        return
    _mkparent(out, shown)
    path = lock_path(out)
    fd = _acquire(path, shown)
    with _held_guard:
        _held[key] = 1
    try:
        yield path
    finally:
        with _held_guard:
            del _held[key]
        with contextlib.suppress(OSError):
            os.unlink(path)  # still holding the lock: a waiting opener sees a new inode and retries
        os.close(fd)


def _try_lock(fd: int) -> None:
    """An exclusive, non-blocking lock on ``fd``; ``OSError`` (EWOULDBLOCK/EACCES) when held elsewhere."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    else:  # pragma: no cover
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)


def _acquire(path: Path, shown: str) -> int:
    for _ in range(100):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                raise OutputError(f"--out {shown[:60]}...: a name in this path is longer than the system allows "
                                  f"(usually 255 bytes). Choose a shorter --out folder") from None
            raise OutputError(f"--out {shown}: cannot create the lock file {path} ({exc.strerror})") from None
        try:
            _try_lock(fd)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise OutputError(f"--out {shown} is being written by another geoconstraints run "
                                  f"({_holder(path)}); wait for it to finish or choose another --out folder") from None
            raise OutputError(f"--out {shown}: cannot lock {path} ({exc.strerror})") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a file its previous holder unlinked after we opened it
            info = {"pid": os.getpid(), "host": socket.gethostname(),
                    "since": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps(info).encode())
            return fd
        os.close(fd)
    raise OutputError(f"--out {shown}: could not take the lock {path}; try again")  # pragma: no cover


# ------------------------------------------------------------------------------------------
# what a folder holds

def read_provenance(out: Path) -> dict[str, Any] | None:
    """The ``provenance.json`` of an earlier set in ``out``, or ``None`` (missing, not ours, unreadable)."""
    p = Path(out) / PROVENANCE_NAME
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("toolkit") != "geoconstraints" or not isinstance(data.get("outputs"), list):
        return None
    return data


def _entries(out: Path) -> tuple[list[str], list[str]]:
    """(regular files, other entries: folders and symlinks) under ``out``, as POSIX paths relative to it."""
    files_: list[str] = []
    other: list[str] = []
    for root, dirs, names in os.walk(out):
        base = Path(root)
        for d in list(dirs):
            other.append((base / d).relative_to(out).as_posix())
            if (base / d).is_symlink():
                dirs.remove(d)
        for n in names:
            p = base / n
            rel = p.relative_to(out).as_posix()
            (files_ if p.is_file() and not p.is_symlink() else other).append(rel)
    return sorted(files_), sorted(other)


def _input_inside(out: Path, inputs: Iterable[Path]) -> Path | None:
    for p in inputs:
        try:
            rp = canonical(p)
        except (OSError, ValueError):
            continue
        if rp == out or out in rp.parents:
            return Path(p)
    return None


GDAL_SIDECAR = ".aux.xml"
"""GDAL's own file beside a dataset it has read (PAM metadata: opening results.gpkg with
``geopandas.read_file`` writes ``results.gpkg.aux.xml``). Beside an output of an earlier set, it is
part of that output: the new set replaces it with the rest, never a reason to refuse the folder."""

SQLITE_OPEN_MARKS = ("-wal", "-shm", "-journal")
"""SQLite's files beside a GeoPackage that a program has open (``results.gpkg-wal`` while QGIS shows it):
the folder is refused with a message saying so (the program would keep writing a file that is gone)."""


def check_out_folder(out_dir: str | os.PathLike[str], inputs: Iterable[Path] = (), *, overwrite: bool = False,
                     run_id: str | None = None) -> Path:
    """Refuse an ``--out`` that a run must not replace; create nothing. Return its canonical path.

    Accepted: a folder that does not exist, an empty folder, a folder holding exactly an earlier
    set of this same run (``run_id``), and, with ``overwrite``, one holding exactly an earlier
    set (every file listed in its ``provenance.json``, and GDAL's :data:`GDAL_SIDECAR` files
    beside them), which the new set then replaces whole.

    Raises
    ------
    OutputError
        ``--out`` is a file; an input lies inside it (it would be replaced with the folder);
        it holds a file or folder that no earlier set of geoconstraints lists (named; such a
        folder is never emptied); a GeoPackage of the earlier set is open in a program
        (:data:`SQLITE_OPEN_MARKS`); or it holds an earlier set and ``overwrite`` is false.
    """
    shown = os.fspath(out_dir)
    inputs = list(inputs)
    out = refuse_file_out(out_dir, inputs)
    inside = _input_inside(out, inputs)
    if inside is not None:
        raise OutputError(f"{inside} is one of the inputs and lies inside --out {shown}, which a run replaces "
                          f"whole; it will not be overwritten. Choose another --out folder")
    try:
        here = canonical(os.getcwd())
    except OSError:  # the working folder was deleted: nothing to protect
        here = None
    if here is not None and (here == out or out in here.parents):
        raise OutputError(f"--out {shown} is the folder this run was started in{'' if here == out else ' (or holds it)'}; "
                          f"a run replaces the --out folder whole, so the shell would be left in a deleted folder "
                          f"showing no outputs. Give a folder of its own, e.g. --out results")
    if not out.exists():
        return out
    files_, other = _entries(out)
    if not files_ and not other:
        return out
    prov = read_provenance(out)
    if prov is None:
        first = (files_ or other)[0]
        raise OutputError(f"--out {shown} holds {first}, which geoconstraints did not write (there is no "
                          f"{PROVENANCE_NAME} of an earlier run), so it will not be emptied. Choose a new or "
                          f"empty --out folder")
    listed = {str(o.get("path")) for o in prov["outputs"] if isinstance(o, dict)} | {PROVENANCE_NAME}
    dirs = {p.as_posix() for rel in listed for p in Path(rel).parents if p.as_posix() != "."}
    in_use = [(rel, rel + mark) for rel in sorted(listed) for mark in SQLITE_OPEN_MARKS if rel + mark in files_]
    if in_use:
        name, mark = in_use[0]
        raise OutputError(f"--out {shown}: {mark} says a program (QGIS, ArcGIS, a notebook) has {name} of the earlier "
                          f"run open; close it there and run again (a program that crashed can leave it: delete it "
                          f"then), or choose another --out folder")
    gdal = {rel + GDAL_SIDECAR for rel in listed}  # written by GDAL beside an output it read: part of that output
    foreign = [f for f in files_ if f not in listed and f not in gdal] + [o for o in other if o not in dirs]
    if foreign:
        raise OutputError(f"--out {shown} holds {foreign[0]}, which the earlier run there (run id "
                          f"{prov.get('run_id', '?')}) did not write, so the folder will not be emptied. "
                          f"Move that file away or choose another --out folder")
    if run_id is not None and prov.get("run_id") == run_id:
        return out
    if not overwrite:
        raise OutputError(f"--out {shown} holds the outputs of an earlier run ({prov.get('command', '?')}, "
                          f"{prov.get('run_time_utc', '?')}, run id {prov.get('run_id', '?')}); give --overwrite "
                          f"to replace them, or choose another --out folder")
    return out


# ------------------------------------------------------------------------------------------
# the set

def _tmp_names(out: Path, suffix: str) -> list[Path]:
    pat = re.compile(re.escape(f".{out.name}.") + _TMP_RE + re.escape(suffix) + "$")
    try:
        return [p for p in out.parent.iterdir() if pat.match(p.name) and p.is_dir() and not p.is_symlink()]
    except OSError:
        return []


def recover(out: Path) -> None:
    """Tidy what a killed run left beside ``out`` (call holding :func:`out_lock`).

    Unfinished sets (``.<name>.<hex>.tmp``) are removed. An earlier set moved aside
    (``.<name>.<hex>.old``, only on systems without an atomic exchange) is put back when
    ``out`` is missing (the crash fell between the two renames), else removed.
    """
    for p in _tmp_names(out, ".tmp"):
        log.info("removing %s, left by an interrupted run", p)
        shutil.rmtree(p, ignore_errors=True)
    for p in _tmp_names(out, ".old"):
        if not out.exists():
            log.warning("restoring %s from %s: an earlier run stopped while swapping its outputs in", out, p)
            os.rename(p, out)
        else:
            shutil.rmtree(p, ignore_errors=True)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically (Linux ``renameat2``); ``False`` where unsupported."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):  # not Linux, or a C library without renameat2
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    e = ctypes.get_errno()
    if e in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(e, os.strerror(e), os.fspath(b))


def swap_in(new: Path, out: Path) -> None:
    """Put the complete folder ``new`` at ``out``, removing what was there; ``new`` is gone after."""
    if not out.exists():
        os.rename(new, out)
        return
    if _exchange(new, out):  # one step: out now holds the new set, new the earlier one
        shutil.rmtree(new, ignore_errors=True)
        return
    aside = out.parent / f".{out.name}.{uuid.uuid4().hex[:12]}.old"
    os.rename(out, aside)
    os.rename(new, out)
    shutil.rmtree(aside, ignore_errors=True)


def write_provenance(folder: Path, provenance: dict[str, Any]) -> Path:
    """Write ``folder/provenance.json``: ``provenance`` (redacted) plus ``outputs``, every file of
    ``folder`` with its size and SHA-256, and ``output_set_format``."""
    files_, _ = _entries(folder)
    rels = [rel for rel in files_ if rel != PROVENANCE_NAME]
    digests = parallel_map(lambda rel: sha256_file(folder / rel), rels)  # hashlib releases the GIL: every core
    outputs = [{"path": rel, "bytes": (folder / rel).stat().st_size, "sha256": digest}
               for rel, digest in zip(rels, digests)]
    data = {**redact_all(provenance), "output_set_format": SET_FORMAT, "outputs": outputs}
    target = folder / PROVENANCE_NAME
    target.write_text(json.dumps(data, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return target


def _no_space(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    return "no space left on device" in text or "database or disk is full" in text or "disk quota exceeded" in text


@dataclass
class Item:
    """One item of a :class:`Progress` (a writer step): ``name`` is shown while it runs; ``wrote``,
    set by the writer when the step has run, says what it wrote (the line logged at its end).

    Examples
    --------
    >>> it = Item("findings.csv")
    >>> it.label
    'findings.csv'
    >>> it.wrote = written_label(["findings.csv", "parcels.csv"], [])
    >>> it.label
    'findings.csv, parcels.csv'
    """

    name: str
    wrote: str = ""

    @property
    def label(self) -> str:
        """``wrote`` once known, else ``name``."""
        return self.wrote or self.name


def written_label(files: Iterable[str], handed: Iterable[str]) -> str:
    """What a writer step did, in words: the ``files`` it wrote and those it ``handed`` to a child process.

    Examples
    --------
    >>> written_label(["report.html"], ["report.pdf"])
    'report.html; report.pdf handed to a child process'
    >>> written_label([], ["findings.geojson"])
    'findings.geojson handed to a child process'
    >>> written_label([], [])
    ''
    """
    here, there = ", ".join(files), ", ".join(handed)
    return "; ".join(p for p in (here, there and f"{there} handed to a child process") if p)


class Progress(Protocol):
    """What follows the writers of a set (the CLI's progress bar and ``-v``, ``cli.Stages``):
    :meth:`expect` announces how many items will run, then each runs inside ``with progress(name)
    as item:``, which sets ``item.wrote`` (:class:`Item`) when its step has run."""

    def expect(self, n: int) -> None:
        """``n`` more items will run."""

    def __call__(self, name: str) -> contextlib.AbstractContextManager[Item]:
        """The context one item (``name``: the file its step is reported against) runs in."""


def progress_item(progress: Progress | None, name: str) -> contextlib.AbstractContextManager[Item]:
    """``progress(name)``, or a context giving an :class:`Item` and doing nothing else when nothing
    follows the writers."""
    return contextlib.nullcontext(Item(name)) if progress is None else progress(name)


@dataclass
class OutputSet:
    """An output set being written (see :func:`output_set`).

    Attributes
    ----------
    out : Path
        The ``--out`` folder (canonical), replaced when the set is complete.
    folder : Path
        The temporary folder beside it that the writers write into.
    shown : str
        ``--out`` as the user gave it (for messages).
    provenance : dict
        Written as ``provenance.json`` when the set is complete; add to it while writing.
    """

    out: Path
    folder: Path
    shown: str
    provenance: dict[str, Any] = field(default_factory=dict)

    def final(self, path: Path | str) -> Path:
        """Where a path of the temporary folder will be once the set is swapped in."""
        p = Path(path)
        try:
            return self.out / p.relative_to(self.folder)
        except ValueError:
            return p

    def step(self, name: str, write: Callable[[Path], dict[str, Path]]) -> dict[str, Path]:
        """Run one writer ``write(folder) -> {name: path}``; a full disk or another OS error
        becomes one line naming the file (``name`` when the error does not say).

        Returns
        -------
        dict
            The writer's names -> their paths in the temporary folder.
        """
        interrupt.check()  # a signal a library swallowed in the step before (geoconstraints.interrupt)
        try:
            return write(self.folder)
        except OutputError as exc:
            if _no_space(exc):
                raise OutputError(self._no_space_text(self.out / name)) from None
            raise
        except Exception as exc:
            if not isinstance(exc, OSError) and not _no_space(exc):
                raise
            fn = getattr(exc, "filename", None)
            where = self.final(fn) if fn else self.out / name
            if _no_space(exc):
                raise OutputError(self._no_space_text(where)) from None
            raise OutputError(f"cannot write {where} ({getattr(exc, 'strerror', None) or exc}); nothing in --out {self.shown} "
                              f"was changed") from None

    def _no_space_text(self, where: Path) -> str:
        return (f"no space left on device writing {where}; nothing in --out {self.shown} was changed (the "
                f"unfinished outputs were removed). Free some space and run again")


def _umask() -> int:
    """The process umask, read without changing it (``os.umask`` would, for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


@contextlib.contextmanager
def output_set(out_dir: str | os.PathLike[str], inputs: Iterable[Path] = (), *, overwrite: bool = False,
               run_id: str | None = None, provenance: dict[str, Any] | None = None) -> Iterator[OutputSet]:
    """Write a set of outputs all or nothing: yield an :class:`OutputSet` whose ``folder`` the
    writers fill; when the block ends normally, write ``provenance.json`` and swap the folder in
    for ``out_dir``. An exception (a failed writer, ``KeyboardInterrupt``, the CLI's SIGTERM)
    removes the unfinished folder and leaves ``out_dir`` as it was.

    Parameters
    ----------
    out_dir : path
        The output folder (``--out``); created if missing (with its parents).
    inputs : iterable of Path
        The run's input files (none may lie inside ``out_dir``).
    overwrite : bool
        Replace an earlier run's set (:func:`check_out_folder`).
    run_id : str, optional
        This run's id: a set of the same run is replaced without ``overwrite``.
    provenance : dict, optional
        The start of ``provenance.json`` (``run_id`` is added).

    Raises
    ------
    OutputError
        Another run holds the folder, or :func:`check_out_folder` refuses it.

    Examples
    --------
    >>> import tempfile
    >>> base = Path(tempfile.mkdtemp())
    >>> with output_set(base / "out", provenance={"toolkit": "geoconstraints"}) as s:
    ...     _ = (s.folder / "a.txt").write_text("one")
    >>> sorted(p.name for p in (base / "out").iterdir())
    ['a.txt', 'provenance.json']
    >>> sorted(p.name for p in base.iterdir())  # no temporary folder, no lock file left
    ['out']
    """
    shown = os.fspath(out_dir)
    out = canonical(out_dir)
    with out_lock(out_dir):
        recover(out)
        check_out_folder(out_dir, inputs, overwrite=overwrite, run_id=run_id)
        folder = out.parent / f".{out.name}.{uuid.uuid4().hex[:12]}.tmp"
        try:
            folder.mkdir(mode=0o700)
        except OSError as exc:
            raise OutputError(f"--out {shown}: cannot create a folder beside it ({exc.strerror})") from None
        s = OutputSet(out, folder, shown, {**(provenance or {}), **({"run_id": run_id} if run_id else {})})
        try:
            yield s
            s.step(PROVENANCE_NAME, lambda f: {PROVENANCE_NAME: write_provenance(f, s.provenance)})
            os.chmod(folder, 0o777 & ~_umask())  # as a plain mkdir would have made it
            try:
                swap_in(folder, out)
            except OSError as exc:
                raise OutputError(f"--out {shown}: cannot put the new outputs in place ({exc.strerror}); they were "
                                  f"removed and --out is unchanged. If --out is a mount point, choose a folder "
                                  f"inside it") from None
        finally:
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)


__all__ = ["PROVENANCE_NAME", "OutputSet", "check_out_folder", "out_lock", "output_set", "read_provenance",
           "recover", "swap_in", "write_provenance"]
