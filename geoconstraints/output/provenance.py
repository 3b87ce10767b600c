"""What the outputs say was read beyond :meth:`Result.provenance <geoconstraints.result.Result.provenance>`:
the layers of the input GeoPackages a run did not read, and the rulebook file(s) it applied with the
SHA-256 they had when they were loaded. provenance.json (``inputs_not_read``, ``rulebook_sha256``,
``rulebook_files``) and the provenance section of report.html / report.pdf say the same.

provenance.json also says whether an input file changed while the run was under way
(``changed_during_run``, :func:`changed_during_run`: its size or modification time when the outputs
are written differs from when it was read), and the day each flood map's ``EFF_DATE`` states
(``effective_date_iso`` beside the raw text, :func:`flood_map_dates`).
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any

from geoconstraints.errors import GeoConstraintsError
from geoconstraints.io.paths import is_virtual, local_archive
from geoconstraints.io.postgis import is_db_source
from geoconstraints.io.sources import file_stamp, list_layers
from geoconstraints.result import Result
from geoconstraints.rulebook.model import Rulebook
from geoconstraints.rules.flood import effective_date

log = logging.getLogger(__name__)


def layers_not_read(result: Result) -> list[dict[str, str]]:
    """The layers of the run's input GeoPackages that it did not read (``inputs_not_read`` of
    provenance.json): ``{"file", "path", "layer"}`` each, in the file's order.

    ``inputs`` lists every layer read, with its role (a command reads every layer named by a role
    unless told which, ``load_layers(..., roles=...)``); a layer named by no role (``notes``,
    QGIS's ``layer_styles``) or one left out by ``roles`` is read by no check and drawn in no
    output: it is named here, so that the file's SHA-256 in ``inputs`` is not taken for a
    statement about every layer in it. Only local GeoPackages (``.gpkg``) are looked into; a file
    that can no longer be opened is skipped.
    """
    if result.layers is None:
        return []
    read: dict[str, set[str]] = {}
    for info in result.layers.info.values():
        path = str(info.path)
        if is_db_source(path) or path == "GeoDataFrame" or Path(path).suffix.lower() != ".gpkg":
            continue
        read.setdefault(path, set()).add(str(info.layer or ""))
    out: list[dict[str, str]] = []
    for path, names in read.items():
        if not Path(path).is_file():
            continue
        try:
            present = list_layers(Path(path))
        except GeoConstraintsError:
            continue
        out += [{"file": Path(path).name, "path": path, "layer": n} for n in present if n not in names]
    return out


def rulebook_files(rulebook: Rulebook) -> list[dict[str, Any]]:
    """The rulebook file(s) a run applied, each with its size and SHA-256 (``rulebook_files`` of
    provenance.json; ``rulebook_sha256`` is the first one's): the file named (a user's YAML file, or
    a bundled rulebook's inside the package, ``bundled``), then in turn each file it ``extends``.

    Hashed when the rulebook was loaded (:attr:`Rulebook.files
    <geoconstraints.rulebook.model.Rulebook.files>`: the bytes hashed are the bytes parsed), so a file
    edited between loading and writing the outputs is not misreported. A rulebook made in code (not
    read from a file) lists none.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> [(f["rulebook"], f["bundled"], len(f["sha256"])) for f in rulebook_files(load_rulebook("vestal"))]
    [('vestal', True, 64)]
    """
    return [dict(f) for f in rulebook.files]


def _read_stamps(result: Result) -> list[tuple[str, str, Path, tuple[int, int], str]]:
    """(role, path as provenance.json shows it, local file, its (size, mtime_ns) when read, what the
    ``sha256`` of its ``inputs`` entry is of) for every input file whose stamp the run took when
    reading it: the layers' files, the DEM and the tables read by path (``extra_inputs``)."""
    out = []
    for role, info in (result.layers.info.items() if result.layers is not None else ()):
        if not info.mtime_ns or is_db_source(info.path):
            continue
        file = local_archive(info.path) if is_virtual(info.path) else Path(info.path)
        if file is not None:
            out.append((role, info.path, file, (info.size_bytes, info.mtime_ns), "the file as read"))
    dem = result.layers.dem if result.layers is not None else None
    if dem is not None and getattr(dem, "stamp", None) is not None:
        out.append(("dem", str(dem.path), Path(dem.path), dem.stamp,
                    "the file as it was when the outputs were written, not as read"))
    for role, p in result.extra_inputs.items():
        stamp = result.extra_stamps.get(role)
        if stamp is not None:
            out.append((role, str(p), Path(p), stamp, "the file as it was when the outputs were written, not as read"))
    return out


def _stamp(stamp: tuple[int, int]) -> dict[str, Any]:
    size, ns = stamp
    when = dt.datetime.fromtimestamp(ns / 1e9, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
    return {"size_bytes": size, "mtime_ns": ns, "modified_utc": when}


def changed_inputs(result: Result) -> list[dict[str, Any]]:
    """The input files that are not now as the run read them: their size or modification time
    (ns) differs from the stamp taken when they were read
    (:func:`~geoconstraints.io.sources.file_stamp`), or they are gone.

    A layer's file, the DEM and the tables a command reads by path (``rainfall``, ``inspection_log``:
    ``Result.extra_stamps``) are stamped when read.

    Returns
    -------
    list of dict
        ``{"role", "path", "read", "at_write", "sha256_in_inputs"}`` per role: ``read`` and
        ``at_write`` are ``{"size_bytes", "mtime_ns", "modified_utc"}`` (``at_write`` None for a
        file no longer there); ``sha256_in_inputs`` says what the ``sha256`` of the role's
        ``inputs`` entry describes (a layer's file is hashed when read, the DEM when the
        outputs are written).
    """
    out = []
    for role, shown, file, read, hashed in _read_stamps(result):
        now = file_stamp(file)
        if now != read:
            out.append({"role": role, "path": shown, "read": _stamp(read),
                        "at_write": None if now is None else _stamp(now), "sha256_in_inputs": hashed})
    return out


def changed_during_run(result: Result, inputs: list[dict[str, Any]]) -> dict[str, Any]:
    """provenance.json's account of the input files changed while the run was under way, taken when
    the set is written: ``changed_during_run`` (True when any did), ``inputs_changed_during_run``
    (:func:`changed_inputs`) and ``inputs`` with each changed role's entry marked
    ``"changed_during_run": true``. Each changed file is logged as a WARNING: the outputs describe
    the file as the run read it, not as it is now. The run is not failed.

    Parameters
    ----------
    result : Result
    inputs : list of dict
        The ``inputs`` of provenance.json (:meth:`Result.provenance
        <geoconstraints.result.Result.provenance>`), one entry per role.

    Returns
    -------
    dict
        The three keys, to update provenance.json with.
    """
    changed = changed_inputs(result)
    roles = {c["role"] for c in changed}
    by_path: dict[str, list[dict[str, Any]]] = {}
    for c in changed:
        by_path.setdefault(c["path"], []).append(c)
    for path, cs in by_path.items():
        read, now = cs[0]["read"], cs[0]["at_write"]
        what = ("is gone" if now is None else
                f"is now {now['size_bytes']:,} bytes modified {now['modified_utc']} "
                f"(read: {read['size_bytes']:,} bytes modified {read['modified_utc']})")
        log.warning("input %s (%s) changed while the run was under way: it %s. The outputs describe the file as "
                    "this run read it, not as it is now (provenance.json: changed_during_run); run again to check "
                    "the file as it is", path, ", ".join(c["role"] for c in cs), what)
    marked = [{**i, "changed_during_run": True} if i.get("role") in roles else i for i in inputs]
    return {"inputs": marked, "changed_during_run": bool(changed), "inputs_changed_during_run": changed}


def flood_map_dates(result: Result, nfhl: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """provenance.json's ``nfhl`` with, beside each flood layer's raw ``effective_date`` text, the
    day each value states as ``YYYY-MM-DD`` (``effective_date_iso``, in the same order; ``not a
    date`` for a value stating no single day), read by the strict reader of the flood rules
    (:func:`~geoconstraints.rules.flood.effective_date`). Left out where no value states a day.
    """
    out = {role: dict(v) for role, v in nfhl.items()}
    if result.layers is None:
        return out
    for role, entry in out.items():
        g = result.layers.get_layer(role)
        if g is None or "EFF_DATE" not in g:
            continue
        raw = g["EFF_DATE"].dropna()
        values = dict(zip(raw.astype(str), raw))  # keyed by the raw text as result.provenance() writes it
        days = [_iso_day(values[k]) for k in sorted(values)]
        if any(d != "not a date" for d in days):
            entry["effective_date_iso"] = ", ".join(days)
    return out


def _iso_day(value: Any) -> str:
    """``YYYY-MM-DD`` of the day an ``EFF_DATE`` value states, else ``not a date``.

    Examples
    --------
    >>> _iso_day("3/2/1998"), _iso_day(19980302), _iso_day("2012")
    ('1998-03-02', '1998-03-02', 'not a date')
    """
    try:
        return effective_date(value).isoformat()
    except ValueError:
        return "not a date"


__all__ = ["changed_during_run", "changed_inputs", "flood_map_dates", "layers_not_read", "rulebook_files"]
