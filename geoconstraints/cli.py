"""The ``geoconstraints`` command line: click options over the Python API, no logic.

Exit codes: 0 run completed (with or without findings); 1 only with ``--fail-on`` when such
findings exist; 2 bad input or usage, another run writing the same ``--out``, a write error, or
interrupted (SIGINT) / terminated (SIGTERM) (one line on stderr, never a traceback; ``--out``
keeps its earlier contents: the outputs are swapped in only when all are written). After the
signal the cleanup gets :data:`CLEANUP_LIMIT_S` seconds at most; a second signal ends the run at once.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import faulthandler
import functools
import io
import json
import logging
import math
import os
import shutil
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import click
from click.core import ParameterSource
from tqdm import tqdm

from geoconstraints import interrupt
from geoconstraints.commands import (
    ENGINES,
    SEQR_NUMBER_BOUNDS,
    SITE_NUMBER_BOUNDS,
    NumberBound,
    check_harvest,
    check_site,
    check_stormwater,
    classify_action,
    screen_parcels,
)
from geoconstraints.demo import run_demo
from geoconstraints.errors import GeoConstraintsError, OutputError
from geoconstraints.io.describe import RASTER_SUFFIXES, as_lines, describe, describe_project, role_of_layer
from geoconstraints.io.layers import load_layers
from geoconstraints.io.roles import ROLES, role_option
from geoconstraints.io.sources import (
    list_layers,
    parse_path_layer,
    read_project_file,
    sources_from_geopackage,
)
from geoconstraints.output import child, outset, prestart_writers, write_result
from geoconstraints.output.database import parse_db_target, write_database
from geoconstraints.output.field import write_field_files
from geoconstraints.output.plots import write_plots
from geoconstraints.output.provenance import changed_during_run
from geoconstraints.output.selection import OUTPUTS, select_outputs
from geoconstraints.output.siteplan import (
    MAX_SHEETS,
    ORIENTATIONS,
    PAPERS,
    SITEPLAN_NAME,
    check_scale,
    num_text,
    site_plan_rule,
    write_siteplan,
)
from geoconstraints.rulebook import registry
from geoconstraints.rulebook.findings import FINDINGS_SCOPES
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rules.harvest import classify_streams, stream_vocabulary
from geoconstraints.rules.seqr import action_types
from geoconstraints.text import is_blank, visible_text
from geoconstraints.units import elevation_problem, number_problem

log = logging.getLogger("geoconstraints")


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return visible_text(f"{record.levelname.lower()}: {record.getMessage()}")


def _say(text: str) -> None:
    """A line for a person on stdout, as every message of the CLI: an invisible character of an id,
    a name or a path (a bidirectional control, a zero-width space) as ``<U+202E>``
    (:func:`~geoconstraints.text.visible_text`). Data (``rules --format csv/json``, ``layers --json``)
    is echoed as it is."""
    click.echo(visible_text(text))


class _AboveTheBar(logging.StreamHandler):  # type: ignore[type-arg]
    """Each message on a line of its own above the progress bar (``tqdm.write`` clears the bar,
    writes the line and draws the bar again), never appended to the bar's line; without a bar, as
    a StreamHandler writes it."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.write(self.format(record), file=self.stream, nolock=True)  # no lock a signal could leave held
            self.flush()
        except RecursionError:
            raise
        except Exception:  # noqa: BLE001 - as logging.StreamHandler
            self.handleError(record)


def _setup_logging(verbose: int, quiet: bool) -> None:
    handler = _AboveTheBar(sys.stderr)
    handler.setFormatter(_OneLine())
    root = logging.getLogger("geoconstraints")
    root.handlers[:] = [handler]
    root.propagate = False
    root.setLevel(logging.ERROR if quiet else (logging.DEBUG if verbose > 1 else
                                               logging.INFO if verbose else logging.WARNING))
    for name in GDAL_LOGGERS:  # GDAL's messages through pyogrio/rasterio: one line each, as ours
        other = logging.getLogger(name)
        other.handlers[:] = [handler]
        other.propagate = False
        other.setLevel(logging.ERROR if quiet else logging.DEBUG if verbose > 1 else logging.WARNING)
    warnings.showwarning = _warning_line


GDAL_LOGGERS = ("pyogrio", "rasterio", "fiona")
"""Loggers through which GDAL speaks (``rasterio._env``, ``pyogrio._err``...)."""


def _warning_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """A library's ``warnings.warn`` (GDAL through pyogrio, say) as one ``warning:`` line, never
    the file and source line Python prints by default; deprecation notes only with -vv."""
    text = str(message).strip().splitlines()[0] if str(message).strip() else category.__name__
    if issubclass(category, (DeprecationWarning, PendingDeprecationWarning, FutureWarning)):
        log.debug("%s: %s", category.__name__, text)
    else:
        log.warning("%s", text)


def _fail(message: str, code: int = 2) -> None:
    message = " ".join(line.strip() for line in str(message).splitlines() if line.strip())  # one line
    click.echo(visible_text(f"error: {message}"), err=True)
    sys.exit(code)


def _quiet_broken_pipe() -> None:
    """The reader of stdout went away (``geoconstraints rules | head``): stop quietly.

    Exit status 141 (128 + SIGPIPE), as a shell reports for a program ended by a closed pipe.
    """
    try:  # Python docs' recipe: point stdout at devnull so the exit-time flush stays silent
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass
    sys.exit(141)


class Terminated(BaseException):
    """Raised in the main thread by SIGTERM, so cleanup (``finally``, context managers) runs."""


CLEANUP_LIMIT_S = 30
"""After SIGTERM or Ctrl-C the cleanup (the PDF child killed, the unfinished output set removed,
the lock of ``--out`` released) gets this many seconds; a cleanup still running then (a bug: an
exception raised by the signal inside a library's critical section can leave a lock held) ends
the process with exit code 2, the stacks of its threads on stderr for a bug report."""

RESEND_AFTER_S = 0.05
"""A signal whose exception a finalizer swallowed is sent again this much later (:func:`_lost_signal`)."""

_cleanup: dict[str, Any] = {}  # the SIGALRM handler before the limit was armed ("alarm")


def _on_signal(signum: int, frame: Any) -> None:
    """The first SIGTERM (SIGINT) raises :class:`Terminated` (``KeyboardInterrupt``) so cleanup runs,
    within :data:`CLEANUP_LIMIT_S`; a second one ends the process at once, as by default (what a
    killed run leaves is tidied by the next run). The exception is recorded
    (:func:`geoconstraints.interrupt.raised`): one that a library swallows is raised again before
    the next stage, output step or wait for a child process."""
    signal.signal(signum, signal.SIG_DFL)
    if _cleanup.get("stopping"):  # the first one's exception is on its way (see _resend): as a second signal
        os.kill(os.getpid(), signum)
        return
    if hasattr(signal, "SIGALRM") and "alarm" not in _cleanup:
        with contextlib.suppress(ValueError, OSError):
            _cleanup["alarm"] = signal.signal(signal.SIGALRM, functools.partial(_cleanup_overdue, signum))
            signal.alarm(CLEANUP_LIMIT_S)
    if "unraisable" not in _cleanup:
        _cleanup["unraisable"] = sys.unraisablehook
        sys.unraisablehook = functools.partial(_lost_signal, signum)
    exc = Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
    interrupt.raised(exc)  # raised again at the next check if a library swallows it
    raise exc


def _lost_signal(signum: int, unraisable: Any) -> None:
    """``sys.unraisablehook`` while a signal is handled: the exception :func:`_on_signal` raised
    inside a finalizer or a weakref callback (run by the garbage collector wherever the main thread
    is) is ignored by Python, so the run would go on as if never signalled. Send the signal again
    from a thread a moment later, when the main thread has left the finalizer (sent from here, its
    handler would run inside this hook, whose exceptions are ignored too; see :func:`_resend`)."""
    if isinstance(unraisable.exc_value, (Terminated, KeyboardInterrupt)):
        with contextlib.suppress(ValueError, OSError, RuntimeError):
            signal.signal(signum, _on_signal)
            again = threading.Timer(RESEND_AFTER_S, _resend, (signum, interrupt.times_raised_again()))
            again.daemon = True
            again.start()
            return
    _cleanup.get("unraisable", sys.__unraisablehook__)(unraisable)


def _resend(signum: int, seen: int) -> None:
    """Send the signal :func:`_lost_signal` saw lost again, unless a check
    (:func:`geoconstraints.interrupt.check`) has raised its exception again since (``seen``: the
    count then): the run is then already stopping and a second exception would land in its cleanup.
    A later signal then ends the run at once, as a second signal does (:func:`_on_signal`)."""
    if interrupt.times_raised_again() != seen:
        _cleanup["stopping"] = True
        return
    os.kill(os.getpid(), signum)


def _cleanup_overdue(signum: int, _alarm: int, frame: Any) -> None:
    with contextlib.suppress(Exception):
        faulthandler.dump_traceback(file=sys.__stderr__ or 2, all_threads=True)
    child.kill_all()  # a child in its own process group would outlive os._exit, holding stderr
    what = "terminated (SIGTERM)" if signum == signal.SIGTERM else "interrupted"
    with contextlib.suppress(OSError):
        os.write(2, f"error: {what}; the cleanup did not end within {CLEANUP_LIMIT_S} s (the stacks "
                    f"above are for a bug report)\n".encode())
    os._exit(2)


def _end_cleanup_limit() -> None:
    interrupt.forget()
    _cleanup.pop("stopping", None)
    if "alarm" in _cleanup:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, _cleanup.pop("alarm"))
    if "unraisable" in _cleanup:
        sys.unraisablehook = _cleanup.pop("unraisable")


def _catch_sigterm(ctx: click.Context) -> None:
    """SIGTERM raises :class:`Terminated` while a command runs, and SIGINT ``KeyboardInterrupt`` as
    by default (unless SIGINT is ignored: a background job), both bounded by :data:`CLEANUP_LIMIT_S`
    (see :func:`_on_signal`); the earlier handlers are restored after."""
    previous: dict[int, Any] = {}
    try:
        previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, _on_signal)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, _on_signal)
    except ValueError:  # not the main thread (an embedding application): leave signals alone
        return

    def restore() -> None:
        _end_cleanup_limit()
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    ctx.call_on_close(restore)


def _out_lock(out_dir: str | None) -> Any:
    """The lock of ``--out`` for the whole command, so a second run is refused before it works."""
    return outset.out_lock(out_dir) if out_dir else contextlib.nullcontext()


def guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn any error into one line on stderr and exit code 2 (``--debug`` re-raises); hold the
    lock of ``--out`` while the command runs."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        debug = ctx.find_root().params.get("debug", False)
        try:
            with _out_lock(kwargs.get("out_dir")):
                out = fn(*args, **kwargs)
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
            return out
        except BrokenPipeError:
            _quiet_broken_pipe()
        except GeoConstraintsError as exc:
            if debug:
                raise
            _fail(str(exc), exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except KeyboardInterrupt:
            _fail("interrupted", 2)
        except Terminated:
            _fail("terminated (SIGTERM)", 2)
        except Exception as exc:
            if debug:
                raise
            _fail(known_failure(exc, ctx.params.get("out_dir")) or
                  f"could not complete ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}). "
                  f"Check the inputs; rerun with --debug for the details and report it if the inputs are fine")

    return wrapper


class Stages:
    """One progress bar over a command's stages (on a terminal only); with ``-v`` each stage's time.

    A stage may hold items of its own (``write outputs``: each writer, :func:`write_result`'s
    ``progress``): :meth:`expect` adds them to the bar, which shows the stage and the item.

    >>> st = Stages(["load", "check"])
    >>> with st("load"):
    ...     pass
    """

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self._open: list[str] = []  # the stage running and its item
        self.bar = tqdm(total=len(self.names), unit="stage", file=sys.stderr, leave=False, disable=not _tty(),
                        bar_format="{desc} {bar} {n_fmt}/{total_fmt} stages [{elapsed}]")

    def expect(self, n: int) -> None:
        """``n`` more items on the bar (the writers of the stage running)."""
        self.bar.total += n
        self.bar.refresh()

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[outset.Item]:
        interrupt.check()  # a signal a library swallowed in the stage before (geoconstraints.interrupt)
        self._open.append(name)
        self.bar.set_description_str(": ".join(self._open))
        item = outset.Item(name)
        t0 = time.perf_counter()
        try:
            yield item
        finally:
            self._open.pop()
            log.info("%s: %.1f s", item.label, time.perf_counter() - t0)
        self.bar.update(1)
        if self._open:
            self.bar.set_description_str(": ".join(self._open))
        if self.bar.n >= self.bar.total:
            self.bar.close()

    def close(self) -> None:
        self.bar.close()


def _tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


LOW_DISK_BYTES = 16 << 20
"""A failed write where the output folder's disk has less free space than this (16 MiB) is
reported as a full disk (GDAL's own message, e.g. "Cannot write feature", does not say so)."""


def known_failure(exc: BaseException, out_dir: str | None) -> str:
    """One line for a failure of the machine rather than a bug: a full disk, a name too long,
    no permission, no memory; '' for anything else (a real bug: the generic line and --debug)."""
    code = getattr(exc, "errno", None)
    where = getattr(exc, "filename", None) or out_dir or "the outputs"
    if isinstance(exc, MemoryError):
        return ("ran out of memory. Run on a smaller area (clip the layers to it), or on a machine "
                "with more memory")
    if code == errno.ENAMETOOLONG:
        opt = "--out " if out_dir and Path(out_dir).name[:40] in str(where) else ""
        return (f"{opt}{str(where)[:60]}...: a name in this path is longer than the system allows (usually 255 "
                f"bytes). Choose a shorter {'--out folder' if opt else 'name'}")
    if code in (errno.ENOSPC, errno.EDQUOT) or (out_dir and _writing_failure(exc) and _low_disk(out_dir)):
        return f"no space left on device writing {where}. Free some space or choose another --out"
    if code in (errno.EACCES, errno.EPERM, errno.EROFS):
        why = "read-only file system" if code == errno.EROFS else "permission denied"
        return f"cannot write {where} ({why}). Choose another --out, a folder you can write to"
    return ""


def _writing_failure(exc: BaseException) -> bool:
    """An OSError, or a GDAL/pyogrio write error (they do not carry errno)."""
    return isinstance(exc, OSError) or type(exc).__module__.startswith(("pyogrio", "fiona", "rasterio", "sqlite3"))


def _low_disk(out_dir: str) -> bool:
    try:
        path = Path(out_dir).absolute()
        while not path.exists() and path != path.parent:
            path = path.parent
        return shutil.disk_usage(path).free < LOW_DISK_BYTES
    except OSError:
        return False


class Number(click.ParamType):
    """A finite number for an option: NaN and infinity refused (they compare false with every
    limit and would read as a pass), and values under ``minimum`` (meaningless negatives) too.

    Shared by every command: ``type=Number(minimum=0)`` for a size or a cost, ``Number()`` for
    an elevation (which may be negative), ``Number(minimum=0, integer=True)`` for a count.
    """

    name = "number"

    def __init__(self, *, minimum: float | None = None, above: bool = False, integer: bool = False,
                 elevation: bool = False) -> None:
        self.minimum, self.above, self.integer, self.elevation = minimum, above, integer, elevation
        self.name = "integer" if integer else "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
            text = repr(value)
        else:
            text = str(value).strip()
        why = (elevation_problem(text) if self.elevation
               else number_problem(text, minimum=self.minimum, above=self.above, whole=self.integer))
        if why:
            self.fail(f"{why}. {self._fix(param)}", param, ctx)
        x = float(text)
        return int(x) if self.integer else x

    def _fix(self, param: click.Parameter | None) -> str:
        opt = param.opts[0] if param is not None and getattr(param, "opts", None) else "the option"
        if self.integer:
            return f"Give a whole number of 0 or more, e.g. {opt} 2"
        if self.minimum is not None:
            return f"Give a number {'over' if self.above else 'of at least'} {self.minimum:g}, e.g. {opt} 100"
        if self.elevation:
            return f"Give an elevation in feet, e.g. {opt} 812.5"
        return f"Give a number, e.g. {opt} 812.5"


def site_number(name: str) -> Number:
    """The option type of ``flood-site``'s number ``name``, with the bounds
    :func:`~geoconstraints.commands.check_site` applies (:data:`SITE_NUMBER_BOUNDS`): one home for them."""
    return _bounded(SITE_NUMBER_BOUNDS[name])


def seqr_number(name: str) -> Number:
    """The option type of ``seqr``'s number ``name``, with the bounds
    :func:`~geoconstraints.commands.classify_action` applies (:data:`SEQR_NUMBER_BOUNDS`: a count whole)."""
    return _bounded(SEQR_NUMBER_BOUNDS[name])


def _bounded(lower: NumberBound | None) -> Number:
    if lower is None:
        return Number(elevation=True)
    return Number(minimum=lower.minimum, above=lower.above, integer=lower.whole)


class OneLineGroup(click.Group):
    """Usage errors (a bad option value, a missing option) as one ``error:`` line, exit code 2."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            text = exc.format_message().rstrip()
            hint = f" See '{exc.ctx.command_path} --help'." if exc.ctx is not None else ""
            _fail(text + ("" if text.endswith((".", "?", "!")) else ".") + hint, exc.exit_code)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except click.exceptions.Abort:
            _fail("interrupted", 2)
        sys.exit(rv if isinstance(rv, int) else 0)


# ---------------------------------------------------------------------------------------------
# shared options

def role_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--ROLE PATH[:LAYER]`` for every role, plus --project, --crs."""
    for role in reversed(list(ROLES)):
        fn = click.option(role_option(role), role, metavar="PATH[:LAYER]", default=None,
                          help=f"{ROLES[role].description} (overrides the GeoPackage layer '{role}')")(fn)
    fn = click.option("--project", type=click.Path(dir_okay=False), default=None,
                      help="Project file (TOML) mapping roles to files, layers and field names.")(fn)
    fn = click.option("--crs", default=None,
                      help="Working CRS, projected in feet (default: the parcels'/plan's, else NY State Plane, else UTM in feet).")(fn)
    return fn


def dem_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--dem-z-units", type=click.Choice(["ft", "m"]), default=None,
                      help="Vertical units of the DEM when its metadata does not say.")(fn)
    fn = click.option("--dem", type=click.Path(dir_okay=False), default=None, help="DEM GeoTIFF.")(fn)
    return fn


def overwrite_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--overwrite", is_flag=True,
                        help="Replace the outputs of an earlier run in --out (the whole earlier set). A folder "
                             "holding files geoconstraints did not write is never emptied.")(fn)


def findings_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--findings", "findings", type=click.Choice(list(FINDINGS_SCOPES)), default=None,
                        help="Findings in findings.geojson/.csv/.parquet and results.gpkg: person = violation, "
                             "review, not_evaluated; all = pass and info too. Default: person for screen (every "
                             "outcome is in parcels.csv's status_<rule> columns), all for the other commands. screen keeps only "
                             "these findings in memory too (less memory and time for a county).")(fn)


def _outputs(ctx: click.Context, param: click.Parameter, value: str | None) -> frozenset[str] | None:
    """``--outputs`` checked when given (before the layers are read and checked)."""
    if value is None:
        return None
    try:
        return select_outputs(value)
    except OutputError as exc:
        raise click.UsageError(str(exc), ctx) from None


def outputs_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--outputs", "outputs", default=None, callback=_outputs, metavar="NAME[,NAME...]",
                        help="Write only these files of the set (default: all): "
                             + "; ".join(f"{k} = {v}" for k, v in OUTPUTS.items())
                             + ". provenance.json is always written; one of gpkg, parquet, csv is needed (they hold "
                               "every finding and table).")(fn)


def output_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--out-db", default=None, metavar="postgresql://USER@HOST:PORT/DB[?schema=NAME]",
                      help="Also write the findings and tables into this PostGIS schema (default geoconstraints), "
                           "replacing the previous run's tables in one transaction. Give the password in "
                           "PGPASSWORD or ~/.pgpass.")(fn)
    fn = overwrite_option(fn)
    fn = outputs_option(fn)
    fn = findings_option(fn)
    fn = click.option("--fail-on", type=click.Choice(["violation", "review"]), default=None,
                      help="Exit 1 when findings of this status (or worse) exist.")(fn)
    fn = click.option("--offline/--cdn", default=True, show_default=True,
                      help="map.html with Leaflet bundled beside it (offline) or from a CDN.")(fn)
    fn = click.option("--out", "out_dir", required=True, type=click.Path(), help="Output folder (created if missing).")(fn)
    fn = click.option("--rulebook", default="vestal", show_default=True,
                      help="Rulebook name (vestal, lockport) or path of your own YAML rulebook.")(fn)
    return fn


def _overrides(kwargs: dict[str, Any]) -> dict[str, str]:
    """Pop the role options out of ``kwargs``; keep those given."""
    given = {r: kwargs.pop(r) for r in list(ROLES) if r in kwargs}
    return {r: v for r, v in given.items() if v is not None}


def _load(source: str | None, kwargs: dict[str, Any], **extra: Any) -> Any:

    overrides = _overrides(kwargs)
    strict = bool(click.get_current_context().find_root().params.get("strict"))
    layers = load_layers(source, overrides=overrides, project=kwargs.pop("project", None),
                         crs=kwargs.pop("crs", None), dem=kwargs.pop("dem", None),
                         dem_z_units=kwargs.pop("dem_z_units", None), strict=strict, **extra)
    params = click.get_current_context().params
    if params.get("out_dir") is not None:  # refuse a bad --out before the (possibly long) check runs
        outset.check_out_folder(params["out_dir"], layers.input_paths(), overwrite=params.get("overwrite", False))
    return layers


def _book(rulebook: str, source: str | None, kwargs: dict[str, Any]) -> Any:
    """The rulebook: ``--rulebook`` when given, else the project file's ``rulebook``, else the default."""
    ctx = click.get_current_context()
    if ctx.get_parameter_source("rulebook") is ParameterSource.DEFAULT:
        project = kwargs.get("project") or (source if source and str(source).lower().endswith(".toml") else None)
        if project is not None:
            named = read_project_file(Path(project))[1].get("rulebook")
            if named:
                log.info("rulebook %s (from the project file %s)", named, Path(project).name)
                return load_rulebook(named)
    return load_rulebook(rulebook)


def _finish(result: Any, out_dir: str, offline: bool, fail_on: str | None, parcel: str | None = None,
            out_db: str | None = None, stages: Stages | None = None, **limits: Any) -> None:
    params = click.get_current_context().params
    st = stages or Stages(["write outputs"] + (["write database"] if out_db else []))
    rows: dict[str, int] = {}

    def database(folder: Path) -> dict[str, Path]:  # inside the output set: a failure leaves --out as it was
        with st("write database"):
            rows.update(write_database(result, str(out_db)))
        return {}

    with st("write outputs"):
        written = write_result(result, out_dir, offline=offline, parcel=parcel, findings=params.get("findings"),
                               overwrite=params.get("overwrite", False), outputs=params.get("outputs"),
                               steps=[("database", database)] if out_db else [], progress=st, **limits)
    st.close()
    counts = result.counts()
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no findings"
    click.echo(f"{result.command}: {result.n_findings} findings ({summary})")
    _say(f"outputs in {Path(out_dir)}: {', '.join(written)}")
    if out_db:
        tables = ", ".join(f"{k} ({v:,} rows)" for k, v in rows.items())
        _say(f"database {parse_db_target(out_db).redacted}: {tables}")
    if fail_on:
        worst = ["violation"] if fail_on == "violation" else ["violation", "review"]
        if any(result.has(s) for s in worst):
            sys.exit(1)


def _check_out_db(out_db: str | None) -> None:
    if out_db:
        parse_db_target(out_db)  # a malformed URL fails before the (possibly long) check runs


# ---------------------------------------------------------------------------------------------
# commands

@click.group(name="geoconstraints", cls=OneLineGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="geoconstraints")
@click.option("-v", "--verbose", count=True, help="More messages (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors.")
@click.option("--debug", is_flag=True, help="Show tracebacks (for bug reports).")
@click.option("--strict", is_flag=True,
              help="Refuse layers with duplicate or blank feature ids (by default they are told apart as "
                   "'ID (row N)' with a warning).")
def main(verbose: int, quiet: bool, debug: bool, strict: bool) -> None:
    """geoconstraints: a linter for land. Checks GIS layers against flood, stream-corridor,
    timber-harvest and stormwater law and reports findings with citations and map locations."""
    _setup_logging(verbose, quiet)
    registry.RERAISE = debug  # a failing check: its traceback with --debug, else a not_evaluated finding
    _catch_sigterm(click.get_current_context())


@main.command("rules")
@click.option("--rulebook", default="vestal", show_default=True, help="Rulebook name or YAML path.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "markdown"]), default="table")
@guarded
def rules_cmd(rulebook: str, fmt: str) -> None:
    """Print the rule catalogue: id, title, citation, thresholds."""

    rb = load_rulebook(rulebook)
    cat = rb.catalogue()
    _say(f"# rulebook {rb.name} {rb.version}: {len(rb)} rules — {rb.title}")
    if fmt == "csv":
        click.echo(cat.to_csv(index=False), nl=False)
    elif fmt == "json":
        click.echo(cat.to_json(orient="records", indent=1))
    elif fmt == "markdown":
        _say(_markdown_table(cat))
    else:
        for r in rb:
            thr = ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}"
                            for k, v in r.thresholds.items())
            sw = ", ".join(f"{k}={v['value']}" for k, v in r.switches.items())
            extra = "; ".join(x for x in (thr, sw) if x)
            waived = f"  [waived: {r.waived}]" if r.waived else ""
            _say(f"{r.id}  {r.title}  |  {r.citation}" + (f"  |  {extra}" if extra else "") + waived)


def _markdown_table(frame: Any) -> str:
    """A GitHub-flavoured Markdown table of ``frame`` (``|`` in a cell escaped, no tabulate needed)."""

    def cell(v: Any) -> str:
        return "" if is_blank(v) else str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def _stream_kind_lines(path: Path, rulebook: Any) -> list[str]:
    """How the rulebook's stream vocabulary reads each streams layer of a file (kind, NHD FCODE,
    OSM waterway / fclass values), one line per value met."""
    if path.suffix.lower() in RASTER_SUFFIXES or not path.exists():
        return []
    try:
        names = list_layers(path)
    except GeoConstraintsError:
        return []
    out: list[str] = []
    for name in names:
        if role_of_layer(name, path.stem, len(names)) != "streams":
            continue
        try:
            layers = load_layers(overrides={"streams": f"{path}:{name}"}, roles=("streams",))
        except GeoConstraintsError:
            continue  # describe_file has already printed the problem
        _, kinds = classify_streams(layers.get_layer("streams"), stream_vocabulary(rulebook))
        out.append(f"  layer {name}: stream kinds as rulebook {rulebook.name} reads them (stream_kind_vocabulary):")
        for fld, value, kind, count in kinds.table[["field", "value", "kind", "count"]].itertuples(index=False,
                                                                                                 name=None):
            read = ("not mapped: counted as a stream of unknown kind" if kind == "unmapped" else
                    "a stream of unknown flow: counted as a stream" if kind == "unknown" else
                    "not a stream: left out" if kind == "not_stream" else kind)
            out.append(f"    {fld}={value} -> {read} ({count} feature{'' if count == 1 else 's'})")
        if kinds.blank:
            out.append(f"    no kind value -> counted as a stream of unknown kind ({kinds.blank} features)")
        if warn := kinds.warning():
            out.append(f"    warning: {warn}")
    return out


@main.command("layers")
@click.argument("files", nargs=-1, type=click.Path())
@click.option("--project", type=click.Path(dir_okay=False), default=None,
              help="Dry-run a project file: what each role maps to, the fields found and missing, problems.")
@click.option("--json", "as_json", is_flag=True, help="Print the description as JSON.")
@click.option("--rulebook", default="vestal", show_default=True,
              help="Rulebook whose stream vocabulary reads the streams' kinds (NHD FCODE, OSM waterway).")
@guarded
def layers_cmd(files: tuple[str, ...], project: str | None, as_json: bool, rulebook: str) -> None:
    """List what each FILE (or the --project file) holds per role: count, CRS, fields, problems,
    and how the rulebook reads the streams' kinds."""

    if not files and project is None:
        raise click.UsageError("give one or more FILEs, or --project FILE")
    described = [describe_project(project)] if project is not None else []
    described += [describe(f) for f in files]
    rb = load_rulebook(rulebook)
    kinds = {f: _stream_kind_lines(Path(f), rb) for f in files}
    if as_json:
        for d, f in zip(described[len(described) - len(files):], files):
            d["stream_kinds"] = [line.strip() for line in kinds[f]]
        click.echo(json.dumps(described if len(described) > 1 else described[0], indent=1, default=str))
    else:
        for i, d in enumerate(described):
            name = files[i - (len(described) - len(files))] if i >= len(described) - len(files) else None
            for line in as_lines(d) + (kinds[name] if name is not None and d["ok"] else []):
                _say(line)
    if any(not d["ok"] or (d["kind"] == "project" and (d["problem"] or any(e["problem"] for e in d["layers"])))
           for d in described):
        sys.exit(2)


@main.command("harvest")
@click.argument("plan", type=click.Path(), required=False)
@role_options
@dem_options
@output_options
@guarded
def harvest_cmd(plan: str | None, rulebook: str, out_dir: str, offline: bool, fail_on: str | None, **kwargs: Any) -> None:
    """Validate a timber-harvest site PLAN (GeoPackage with harvest_area, landings, haul_roads,
    skid_trails and context layers) against the HRV rules."""

    out_db = kwargs.pop("out_db")
    _check_out_db(out_db)
    rb = _book(rulebook, plan, kwargs)
    layers = _load(plan, kwargs, primary=("harvest_area", "parcels"))
    _finish(check_harvest(layers, rb), out_dir, offline, fail_on, out_db=out_db)


@main.command("siteplan")
@click.argument("plan", type=click.Path(), required=False)
@role_options
@dem_options
@click.option("--rulebook", default="vestal", show_default=True,
              help="Rulebook name (vestal, lockport) or path of your own YAML rulebook.")
@click.option("--scale", "scale", default=None, metavar="FT",
              help="Feet of ground per inch of paper: 1 in = FT ft. Default and largest allowed: the law's minimum "
                   "scale (HRV-002 min_scale_ft_per_in: 500 for Vestal); a smaller number draws larger, down to "
                   f"the scale that fits the plan on {MAX_SHEETS} sheets (a smaller one is refused, naming it).")
@click.option("--paper", type=click.Choice(list(PAPERS)), default="letter", show_default=True,
              help="Paper: letter (8.5 x 11 in), tabloid (11 x 17 in), arch-d (24 x 36 in).")
@click.option("--orientation", type=click.Choice(list(ORIENTATIONS)), default="auto", show_default=True,
              help="Sheet orientation; auto takes the one needing fewer sheets.")
@click.option("--applicant", default=None, help="Applicant printed in the title block (else 'not stated').")
@click.option("--out", "out_dir", required=True, type=click.Path(), help="Output folder (created if missing).")
@overwrite_option
@guarded
def siteplan_cmd(plan: str | None, rulebook: str, scale: str | None, paper: str, orientation: str,
                 applicant: str | None, out_dir: str, overwrite: bool, **kwargs: Any) -> None:
    """Draw the timber-harvest site PLAN for filing (Vestal § 44-VI-6(E)(4) a-k): siteplan.pdf, a
    true-scale, georeferenced vector PDF (tiled with a key map when it needs several sheets), plus
    field.kml / field.gpx for crews and plots/*.png (road profiles)."""

    rb = _book(rulebook, plan, kwargs)
    rule = site_plan_rule(rb)
    ft = check_scale(rule.t("min_scale_ft_per_in") if scale is None else scale, rule)
    layers = _load(plan, kwargs, primary=("harvest_area", "parcels"))
    result = check_harvest(layers, rb)
    written: dict[str, Path] = {}
    plans = []
    with outset.output_set(out_dir, layers.input_paths(), overwrite=overwrite, run_id=result.run_id,
                           provenance=result.provenance()) as s:  # all or nothing, as write_result

        def pdf(folder: Path) -> dict[str, Path]:
            path, plan_pdf = write_siteplan(result, folder, scale_ft_per_in=ft, paper=paper,
                                            orientation=orientation, applicant=applicant)
            plans.append(plan_pdf)
            return {SITEPLAN_NAME: path}

        written.update(s.step(SITEPLAN_NAME, pdf))
        written.update(s.step("field.kml", lambda folder: write_field_files(result, folder)))
        written.update(s.step("plots", lambda folder: write_plots(result, folder)))
        s.provenance.update(changed_during_run(result, s.provenance["inputs"]))  # as provenance.json is written
    written[outset.PROVENANCE_NAME] = s.out / outset.PROVENANCE_NAME
    sp = plans[0]
    maps = sum(not s.key_map for s in sp.sheets)
    key = " and a key map" if maps < len(sp.sheets) else ""
    click.echo(f"siteplan: {maps} sheet(s) at 1 in = {num_text(ft)} ft{key} on {paper} "
               f"({sp.layout.orientation}); {len(result.findings)} findings, {len(sp.marked)} rule/status marks")
    if sp.missing:
        _say(f"not supplied by the inputs (site plan elements): {'; '.join(sp.missing)}")
    _say(f"outputs in {Path(out_dir)}: {', '.join(written)}")


@main.command("screen")
@click.argument("layers_file", metavar="LAYERS", type=click.Path(), required=False)
@role_options
@dem_options
@output_options
@click.option("--parcel", default=None, help="Also write a one-parcel report for this parcel id.")
@click.option("--map-max-features", type=Number(minimum=0, integer=True), default=None,
              help="Most GeoJSON features of input and derived layers in map.html (default 20,000); a layer "
                   "over it is left out, named in the legend. Every finding is drawn whatever this is.")
@click.option("--report-max-parcels", type=Number(minimum=0, integer=True), default=None,
              help="Rows of the parcels table in report.html (default 100, most severe first; all are in parcels.csv).")
@click.option("--report-max-findings", type=Number(minimum=0, integer=True), default=None,
              help="Non-pass findings listed per rule in report.html (default 50; all are in findings.geojson).")
@click.option("--engine", type=click.Choice(list(ENGINES)), default="default", show_default=True,
              help="default: the overlay on threads on this machine; dask: on a dask cluster (pip install "
                   "'geoconstraints[dask]'), the same results.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="With --engine dask: a running dask scheduler (tcp://HOST:8786); without it a local cluster "
                   "of worker processes is started for the run.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Threads for the check (default: one per core), or local dask worker processes.")
@guarded
def screen_cmd(layers_file: str | None, rulebook: str, out_dir: str, offline: bool, fail_on: str | None,
               parcel: str | None, map_max_features: int | None, report_max_parcels: int | None,
               report_max_findings: int | None, engine: str, scheduler: str | None, workers: int | None,
               out_db: str | None, **kwargs: Any) -> None:
    """Screen every parcel against the flood maps (FLD rules): parcels.csv and findings.

    For a whole town or county (10^5-10^6 parcels), findings.geojson, results.gpkg and
    parcels.csv hold everything; report.html and map.html summarise and say what they leave out.
    """

    _check_out_db(out_db)
    st = Stages(["load", "check", "write outputs"] + (["write database"] if out_db else []))
    rb = _book(rulebook, layers_file, kwargs)
    with st("load"):
        layers = _load(layers_file, kwargs, primary=("parcels",))
    keep = kwargs.get("findings")
    if keep is None and (parcel is not None or out_db):  # the handout and the database get every finding
        keep = "all"
    try:
        if out_dir:  # a county's writers start now: their imports run during the check
            prestart_writers(len(layers["parcels"]), kwargs.get("outputs"))
        with st("check"):
            res = screen_parcels(layers, rb, engine=engine, scheduler=scheduler, workers=workers, findings=keep)
        _finish(res, out_dir, offline, fail_on, parcel=parcel, out_db=out_db, stages=st,
                map_max_features=map_max_features, report_max_parcels=report_max_parcels,
                report_max_findings=report_max_findings)
    finally:
        child.discard_spares()  # those the writers did not take (a run refused before writing)


@main.command("flood-site")
@click.argument("footprint", type=click.Path())
@role_options
@dem_options
@output_options
@click.option("--use", type=click.Choice(["residential", "nonresidential", "manufactured"]), required=True)
@click.option("--lowest-floor-ft", type=site_number("lowest_floor_ft"), default=None, help="Proposed lowest floor elevation (ft, BFE datum).")
@click.option("--bfe-ft", type=site_number("bfe_ft"), default=None, help="BFE from other data where the FIRM gives none (ft).")
@click.option("--enclosed-sqft", type=site_number("enclosed_sqft"), default=None, help="Enclosed area below the lowest floor (sq ft).")
@click.option("--openings-sqin", type=site_number("openings_sqin"), default=None, help="Total net area of flood openings (sq in).")
@click.option("--openings", type=site_number("openings"), default=None, help="Number of flood openings.")
@click.option("--opening-bottom-ft", type=site_number("opening_bottom_ft"), default=None, help="Height of the openings' bottoms above grade (ft).")
@click.option("--improvement-cost", type=site_number("improvement_cost"), default=None, help="Cost of the improvement ($).")
@click.option("--market-value", type=site_number("market_value"), default=None, help="Market value before the improvement ($).")
@click.option("--no-rise-evaluation", is_flag=True, help="A no-rise technical evaluation is supplied (floodway).")
@guarded
def flood_site_cmd(footprint: str, rulebook: str, out_dir: str, offline: bool, fail_on: str | None,
                   **kwargs: Any) -> None:
    """Check a proposed structure FOOTPRINT (FLD-002/003/004/007/008)."""

    opts = {k: kwargs.pop(k) for k in ("use", "lowest_floor_ft", "bfe_ft", "enclosed_sqft", "openings_sqin",
                                        "openings", "opening_bottom_ft", "improvement_cost", "market_value",
                                        "no_rise_evaluation")}
    p, layer = parse_path_layer(footprint)
    source = None
    if layer is None and p.suffix.lower() == ".gpkg" and p.exists() and "footprints" in sources_from_geopackage(p):
        source = str(p)
    elif kwargs.get("footprints") is None:
        kwargs["footprints"] = footprint
    out_db = kwargs.pop("out_db")
    _check_out_db(out_db)
    rb = _book(rulebook, source, kwargs)
    layers = _load(source, kwargs, primary=("footprints", "parcels"))
    _finish(check_site(layers, rb, **opts), out_dir, offline, fail_on, out_db=out_db)


@main.command("stormwater")
@click.argument("layers_file", metavar="LAYERS", type=click.Path(), required=False)
@role_options
@dem_options
@output_options
@click.option("--rainfall", type=click.Path(dir_okay=False), default=None, help="Daily rainfall CSV: date, precip_in.")
@click.option("--inspection-log", type=click.Path(dir_okay=False), default=None, help="Inspections made: CSV with a date column.")
@click.option("--approved-swppp", is_flag=True, help="The phasing follows an approved SWPPP (SWP-005).")
@click.option("--larger-common-plan/--no-larger-common-plan", default=None,
              help="Whether the activity is part of a larger common plan of development or sale (SWP-001); "
                   "an activity under 1 acre is not evaluated until this is stated.")
@guarded
def stormwater_cmd(layers_file: str | None, rulebook: str, out_dir: str, offline: bool, fail_on: str | None,
                   rainfall: str | None, inspection_log: str | None, approved_swppp: bool,
                   larger_common_plan: bool | None, **kwargs: Any) -> None:
    """Stormwater permits (SWP rules): disturbed acreage, Conditions A/B/C, phasing, inspections.

    With --dem, runoff beyond the screening distance of an impaired water is traced downslope (SWP-002)."""

    out_db = kwargs.pop("out_db")
    _check_out_db(out_db)
    rb = _book(rulebook, layers_file, kwargs)
    layers = _load(layers_file, kwargs, primary=("disturbance", "parcels"))
    res = check_stormwater(layers, rb, rainfall=rainfall, inspection_log=inspection_log,
                           approved_swppp=approved_swppp, larger_common_plan=larger_common_plan)
    _finish(res, out_dir, offline, fail_on, out_db=out_db)


@main.command("seqr")
@click.option("--action-type", required=True, help="Kind of action (see --list-actions).")
@click.option("--list-actions", is_flag=True, is_eager=True, expose_value=False,
              callback=lambda ctx, _p, v: _list_actions(ctx, v), help="List the action types and exit.")
@click.option("--units", type=seqr_number("units"), default=None, help="Dwelling units.")
@click.option("--lots", type=seqr_number("lots"), default=None, help="Lots / houses in a subdivision.")
@click.option("--expansion-pct", type=seqr_number("expansion_pct"), default=None, help="Expansion over the original size (%).")
@click.option("--acres", type=seqr_number("acres"), default=None, help="Acres (property sales, right-of-way per mile...).")
@click.option("--district", default=None, help="Zoning district (C-1, C-2, CD ...).")
@click.option("--board-approval/--no-board-approval", default=None, help="Needs planning/zoning board approval.")
@click.option("--affects", multiple=True, metavar="RESOURCE",
              help="A resource the action significantly affects (wetlands, parklands, floodplains, historic); repeatable.")
@click.option("--no-effect-on", multiple=True, metavar="RESOURCE",
              help="A resource the action does NOT significantly affect; repeatable; 'all' for every one. Highway "
                   "reconstruction is Type II only when each resource is stated.")
@click.option("--lanes", type=seqr_number("lanes"), default=None, help="Travel lanes added (highway repaving, reconstruction).")
@click.option("--eis-completed/--eis-not-completed", default=None,
              help="Whether an environmental impact statement has been completed (C-1/C-2/CD construction).")
@click.option("--type-i/--not-type-i", "type_i", default=None,
              help="Whether the action falls within a Type I designation (6 NYCRR 617.2).")
@click.option("--per-chapter-24/--not-per-chapter-24", "chapter_24", default=None,
              help="Whether the subdivision's houses are developed in accordance with chapter 24.")
@click.option("--board-resolved-significant/--no-board-resolution", "board_resolved_significant", default=None,
              help="Whether the town board has determined by resolution that the activity may have a significant "
                   "impact on the environment (budget and other town actions, Vestal § 6-28(b)(19)).")
@click.option("--rulebook", default="vestal", show_default=True)
@click.option("--out", "out_dir", default=None, type=click.Path(), help="Also write the outputs here.")
@findings_option
@outputs_option
@overwrite_option
@guarded
def seqr_cmd(rulebook: str, out_dir: str | None, findings: str | None, overwrite: bool,
             outputs: frozenset[str] | None, **kwargs: Any) -> None:
    """Classify an action under SEQR (SQR-001): exempt, Type II, or a determination is needed."""

    rb = load_rulebook(rulebook)
    res = classify_action(rb, **kwargs)
    for _, f in res.findings.iterrows():
        _say(f"{f['rule_id']} {f['status']}: {f['message']}")
    if out_dir:
        write_result(res, out_dir, findings=findings, overwrite=overwrite, outputs=outputs)
        _say(f"outputs in {out_dir}")


def _list_actions(ctx: click.Context, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return

    for key, text in action_types().items():
        click.echo(f"{key}: {text}")
    ctx.exit(0)


@main.command("demo")
@click.option("--out", "out_dir", default="demo-out", show_default=True, type=click.Path())
@guarded
def demo_cmd(out_dir: str) -> None:
    """Run every capability on the bundled sample town and say where the outputs are (an earlier
    demo's outputs in the same folder are replaced)."""

    for line in run_demo(Path(out_dir)):
        _say(line)


def exit_status(code: object) -> int:
    """The process exit status of ``SystemExit(code)``, as Python gives it: 0 for None, an int as it
    is, anything else printed on stderr and 1.

    Examples
    --------
    >>> exit_status(None), exit_status(2)
    (0, 2)
    """
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def end_process(code: object) -> NoReturn:
    """End the process with the status of ``SystemExit(code)``, without freeing what it holds.

    A county's run holds millions of Python objects (parcel ids, statuses, findings); Python frees
    them one by one at exit (0.4 s at 100,000 parcels, 1 s at 1,000,000) although the system takes the
    memory back at once. Here the exit handlers run (logging flushed, temporary folders removed),
    stdout and stderr are flushed (a reader gone away: status 141, as :func:`_quiet_broken_pipe`),
    and ``os._exit`` ends the process. While another non-daemon thread runs, or without
    ``atexit._run_exitfuncs``, Python's usual exit is taken (``SystemExit``), which waits for it.
    """
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if others or run_exit_handlers is None:
        raise SystemExit(code)
    status = exit_status(code)
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            status = status or 141
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(status)


def run() -> NoReturn:
    """The ``geoconstraints`` console script (and ``python -m geoconstraints.cli``): :data:`main`,
    then :func:`end_process` with its exit status. Tests and notebooks call :data:`main` (click's
    ``CliRunner``), which exits as usual."""
    try:
        main()
    except SystemExit as exc:
        end_process(exc.code)
    end_process(0)  # pragma: no cover - OneLineGroup.main always exits


if __name__ == "__main__":  # pragma: no cover
    run()
