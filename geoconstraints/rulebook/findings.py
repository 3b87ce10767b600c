"""The findings table that flows from every check to every output, and the order of statuses.

A check returns one GeoDataFrame built with :meth:`~geoconstraints.rulebook.model.Rule.findings`
(one row per subject examined, ``pass`` included); :func:`findings_frame` collects them into
the table of a run, with exactly :data:`FINDING_COLUMNS` plus geometry.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa

from geoconstraints.errors import OutputError

STATUSES: tuple[str, ...] = ("violation", "review", "not_evaluated", "info", "pass")
"""Status values of a finding, most severe first."""

STATUS_RANK = {s: i for i, s in enumerate(STATUSES)}

FINDING_COLUMNS: list[str] = [
    "rule_id", "rulebook", "status", "citation", "subject_layer", "subject_id", "measured", "threshold",
    "unit", "message", "title", "reading", "waived",
]
"""Attribute columns of every findings table, in output order.

``rule_id`` (``HRV-010``), ``rulebook`` (its name), ``status`` (one of :data:`STATUSES`),
``citation`` (the section of the law), ``subject_layer`` (input role or derived layer of the
subject, or ``""``), ``subject_id`` (feature id, or ``""`` for a run-wide finding), ``measured``
and ``threshold`` (numbers in ``unit``, NaN when none), ``unit`` (``ft``, ``acres``, ``pct``,
``count`` ... or ``""``), ``message`` (the rule's template filled in), ``title`` (the rule's
title), ``reading`` (the switches in force, ``name=value; ...``), ``waived`` (the waiver reason,
or ``""``). Geometry: where the finding is, in the working CRS, or None.
"""

_NUMERIC = ("measured", "threshold")

FINDINGS_SCOPES: tuple[str, ...] = ("person", "all")
"""Which findings a run keeps and its findings files carry: ``person`` those that need a person
(:data:`PERSON_STATUSES`) and the run-wide ones (:func:`run_wide`), ``all`` every finding, pass and
info included."""

PERSON_STATUSES: tuple[str, ...] = ("violation", "review", "not_evaluated")
"""The statuses that need a person: kept by ``--findings person``."""

DEFAULT_SCOPE: dict[str, str] = {"screen": "person"}
"""Default findings scope per command (others: ``all``). A screening has a pass and an info for
most rules and parcels (a county: millions), and its parcels table has every outcome in its status
columns; a plan-level check (harvest, flood-site, stormwater, seqr) has tens of findings, and its
pass findings document what was examined, so they stay."""


def findings_scope(command: str, scope: str | None = None) -> str:
    """The findings scope of a run: ``scope`` when given, else the command's default
    (:data:`DEFAULT_SCOPE`: ``person`` for ``screen``, ``all`` for the plan-level commands).

    Raises
    ------
    OutputError
        ``scope`` is not one of :data:`FINDINGS_SCOPES`.

    Examples
    --------
    >>> findings_scope("screen"), findings_scope("harvest"), findings_scope("screen", "all")
    ('person', 'all', 'all')
    """
    if scope is None:
        return DEFAULT_SCOPE.get(command, "all")
    if scope not in FINDINGS_SCOPES:
        raise OutputError(f"--findings {scope!r}: choose one of {', '.join(FINDINGS_SCOPES)}")
    return scope


def scope_statuses(scope: str) -> tuple[str, ...] | None:
    """The statuses a scope keeps: :data:`PERSON_STATUSES` for ``person``, None (every one) for ``all``.

    Examples
    --------
    >>> scope_statuses("person"), scope_statuses("all")
    (('violation', 'review', 'not_evaluated'), None)
    """
    return None if scope == "all" else PERSON_STATUSES


def run_wide(subject_ids: Any) -> np.ndarray:
    """Boolean mask of the run-wide findings: about no one subject (``subject_id`` ``""``: the flood
    map against the adopted one, a rule whose check failed). Every findings scope keeps them
    (:func:`in_scope`): they are few, and no status column of a subjects table holds their outcome.

    Examples
    --------
    >>> run_wide(["", "P1"]).tolist()
    [True, False]
    """
    return np.asarray(subject_ids, dtype=object) == ""


def in_scope(statuses: Any, scope: str, subject_ids: Any) -> np.ndarray:
    """Boolean mask of the findings of ``scope`` (``all``: every one; ``person``: those of
    :data:`PERSON_STATUSES` and the run-wide ones of any status, :func:`run_wide`).

    Examples
    --------
    >>> in_scope(["pass", "review", "info", "not_evaluated", "info"], "person", ["P1", "P1", "P1", "P2", ""]).tolist()
    [False, True, False, True, True]
    """
    vals = pd.Series(np.asarray(statuses, dtype=object), dtype=object)  # no conversion to a text dtype
    keep = scope_statuses(scope)
    return np.ones(len(vals), dtype=bool) if keep is None else vals.isin(keep).to_numpy() | run_wide(subject_ids)


@dataclass(eq=False)
class Outcomes:
    """Every subject's status from one :meth:`~geoconstraints.rulebook.model.Rule.findings` call made
    within :func:`rows_only_for`, and the findings it built: those of the statuses kept and the run-wide
    ones (:func:`run_wide`) only.

    A screening of a county keeps the findings that need a person; its parcels table still has every
    rule's status of every parcel (:func:`geoconstraints.result.add_rule_status_columns`) and the
    findings left out are counted (:func:`geoconstraints.result.split_scope`), both from here: the
    millions of pass and info rows are never built.

    Attributes
    ----------
    rule_id, title, waived : str
        Of the rule, as in its findings.
    subject_layer : str or ndarray
        The subject layer of every row (one text for all).
    subject_id : ndarray
        The subject id of every row (object array of str).
    rank : ndarray
        The rank in :data:`STATUSES` of every row's status (int8).
    statuses : frozenset of str
        The statuses kept (a run-wide row is kept whatever its status).
    frame : GeoDataFrame
        The findings of the rows kept (not :meth:`left_out`), as :meth:`Rule.findings` builds them.
    """

    rule_id: str
    title: str
    waived: str
    subject_layer: Any
    subject_id: np.ndarray
    rank: np.ndarray
    statuses: frozenset[str]
    frame: gpd.GeoDataFrame

    def left_out(self) -> np.ndarray:
        """Boolean mask of the rows left out of :attr:`frame`: a status not kept, about a subject."""
        kept = np.array([s in self.statuses for s in STATUSES], dtype=bool)[self.rank]
        return ~(kept | run_wide(self.subject_id))


_ROWS_KEPT: ContextVar[tuple[frozenset[str], list[Outcomes]] | None] = ContextVar("rows_kept", default=None)


@contextmanager
def rows_only_for(statuses: Collection[str]) -> Iterator[list[Outcomes]]:
    """Within the block, :meth:`~geoconstraints.rulebook.model.Rule.findings` builds the findings of
    these statuses and the run-wide ones (:func:`run_wide`) only and records every row's status in the
    list it yields (one :class:`Outcomes` per call that left a row out).

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rule = load_rulebook("vestal")["HRV-025"]
    >>> with rows_only_for(["violation"]) as got:
    ...     f = rule.findings(["violation", "pass"], subject_layer="landings", subject_id=["L1", "L2"],
    ...                       measured=[95.0, 420.5], threshold=150, unit="ft")
    >>> f["subject_id"].tolist(), got[0].subject_id.tolist(), got[0].rank.tolist(), got[0].frame is f
    (['L1'], ['L1', 'L2'], [0, 4], True)
    """
    bad = set(statuses) - set(STATUSES)
    if bad:
        raise ValueError(f"status {', '.join(map(repr, sorted(bad)))} is not one of {', '.join(STATUSES)}")
    got: list[Outcomes] = []
    token = _ROWS_KEPT.set((frozenset(statuses), got))
    try:
        yield got
    finally:
        _ROWS_KEPT.reset(token)


@contextmanager
def every_row() -> Iterator[None]:
    """Within the block, :meth:`Rule.findings` builds every row again (undoes :func:`rows_only_for`)."""
    token = _ROWS_KEPT.set(None)
    try:
        yield
    finally:
        _ROWS_KEPT.reset(token)


def rows_kept() -> tuple[frozenset[str], list[Outcomes]] | None:
    """The statuses :func:`rows_only_for` keeps and its list of :class:`Outcomes`; None outside it."""
    return _ROWS_KEPT.get()


def findings_in_scope(findings: gpd.GeoDataFrame, scope: str) -> gpd.GeoDataFrame:
    """The findings of ``scope`` (:func:`in_scope`): those of :data:`PERSON_STATUSES` and the run-wide
    ones for ``person``, all for ``all``."""
    if scope_statuses(scope) is None:
        return findings
    return findings[in_scope(findings["status"].to_numpy(), scope, findings["subject_id"].to_numpy())]


def empty_findings(crs: Any = None) -> gpd.GeoDataFrame:
    """An empty findings GeoDataFrame with the standard columns."""
    df = pd.DataFrame({c: pd.Series(dtype="float64" if c in _NUMERIC else "object") for c in FINDING_COLUMNS})
    return gpd.GeoDataFrame(df, geometry=gpd.GeoSeries([], crs=crs), crs=crs)


def concat_findings(frames: Iterable[gpd.GeoDataFrame], crs: Any = None) -> gpd.GeoDataFrame:
    """Stack finding frames into one, in one CRS, keeping every column (extra ones included).

    ``crs`` defaults to the first CRS among the frames; a frame without a CRS (a run-wide
    finding with no place) takes it. Empty frames are dropped; with none left the result is
    :func:`empty_findings`.
    """
    frames = [f for f in frames if f is not None and len(f)]
    if crs is None:
        crs = next((f.crs for f in frames if f.crs is not None), None)
    if not frames:
        return empty_findings(crs)
    if crs is not None:
        frames = [f if f.crs == crs else f.set_crs(crs, allow_override=True) for f in frames]
    out = _concat_alike(frames)
    if out is None:
        out = pd.concat(frames, ignore_index=True)
    return gpd.GeoDataFrame(out, geometry="geometry", crs=crs, copy=False)  # a new frame: taken as it is


def _concat_alike(frames: list[gpd.GeoDataFrame]) -> pd.DataFrame | None:
    """``pd.concat(frames, ignore_index=True)`` of frames with the same columns of the same numpy
    dtypes (the checks of a group, millions of rows), one column at a time into columns of their own
    (no consolidation of the text columns into one block); None for frames that differ (pandas then
    resolves the columns and dtypes)."""
    first = frames[0]
    cols = list(first.columns)
    if len(frames) < 2 or "geometry" not in cols or first.columns.has_duplicates or any(
            list(f.columns) != cols or getattr(f, "_geometry_column_name", None) != "geometry" or f.crs != first.crs or
            any(not isinstance(d, np.dtype) for d in f.dtypes[f.columns != "geometry"]) or
            not f.dtypes.equals(first.dtypes) for f in frames):
        return None
    index = pd.RangeIndex(sum(len(f) for f in frames))
    data = {}
    for c in cols:
        if c == "geometry":
            geoms = [f.geometry.values for f in frames]
            data[c] = gpd.GeoSeries(type(geoms[0])._concat_same_type(geoms), index=index, crs=first.crs)
        else:
            data[c] = pd.Series(np.concatenate([f[c].to_numpy() for f in frames]), index=index,
                                dtype=first[c].dtype, copy=False)
    return pd.DataFrame(data, index=index, copy=False)


def findings_frame(items: gpd.GeoDataFrame | Iterable[gpd.GeoDataFrame], crs: Any = None) -> gpd.GeoDataFrame:
    """The findings table of a run: the standard columns only, typed and sorted.

    Parameters
    ----------
    items : GeoDataFrame or iterable of GeoDataFrame
        What :func:`~geoconstraints.rulebook.registry.run_group` returned (or several such
        frames). Columns beyond :data:`FINDING_COLUMNS` (the per-subject values a check adds
        for the command's tables) are dropped here.
    crs : CRS-like, optional
        The working CRS.

    Returns
    -------
    GeoDataFrame
        :data:`FINDING_COLUMNS` + geometry, sorted by rule id, then severity, then subject, so
        outputs are reproducible; ``measured``/``threshold`` float, the others text (``""``
        for none, never ``"None"``).
    """
    frames = [items] if isinstance(items, gpd.GeoDataFrame) else list(items)
    out = concat_findings(frames, crs)
    if not len(out):
        return empty_findings(out.crs if crs is None else crs)
    missing = [c for c in FINDING_COLUMNS if c not in out.columns]
    if missing:
        raise ValueError(f"findings lack the columns {', '.join(missing)}: build them with Rule.findings")
    key = {c: out[c].fillna("").astype(str).to_numpy() for c in ("rule_id", "status", "subject_id")}
    order = pd.DataFrame({"r": key["rule_id"], "s": pd.Series(key["status"]).map(STATUS_RANK), "i": key["subject_id"]})
    pos = order.sort_values(["r", "s", "i"], kind="stable").index.to_numpy()
    cols: dict[str, pd.Series] = {}
    for c in FINDING_COLUMNS:
        if c in _NUMERIC:
            cols[c] = pd.Series(pd.to_numeric(out[c], errors="coerce").to_numpy(dtype="float64")[pos])
            continue
        # sorted first, typed as text after: the object columns of Rule.findings are taken as pointers
        v = out[c]
        cols[c] = _text(v.to_numpy()[pos]) if v.dtype == object else v.take(pos).reset_index(drop=True).fillna("").astype(str)
    frame = pd.DataFrame(cols)
    return gpd.GeoDataFrame(frame, geometry=out.geometry.values[pos], crs=out.crs)


_TEXT = pd.Series([""]).astype(str).dtype  # pandas' text dtype (pyarrow-backed when pyarrow is installed)


def _text(values: np.ndarray) -> pd.Series:
    """An object array as a text Series (``""`` for None/NaN), built by pyarrow in one pass when
    every value is a str already (the text columns of :meth:`Rule.findings`)."""
    if getattr(_TEXT, "storage", "") == "pyarrow" and pd.api.types.infer_dtype(values, skipna=False) == "string":
        return pd.Series(pd.array(pa.array(values, type=pa.large_string()), dtype=_TEXT))
    return pd.Series(values, dtype=object).fillna("").astype(str)


def status_counts(findings: pd.DataFrame) -> dict[str, int]:
    """Number of findings per status, every status present (0 when none).

    Examples
    --------
    >>> status_counts(pd.DataFrame({"status": ["pass", "review", "review"]}))["review"]
    2
    """
    counts = findings["status"].value_counts() if len(findings) else pd.Series(dtype=int)
    return {s: int(counts.get(s, 0)) for s in STATUSES}


def status_ranks(statuses: Any, unknown: int = -1) -> np.ndarray:
    """The rank of each status in :data:`STATUSES` (0 = violation), ``unknown`` for another value or
    a missing one; looked up once per distinct value (millions of findings, five statuses).

    Examples
    --------
    >>> status_ranks(pd.Series(["pass", "violation", "odd", None])).tolist()
    [4, 0, -1, -1]
    """
    values = statuses if isinstance(statuses, pd.Series) else np.asarray(statuses, dtype=object)
    codes, uniq = pd.factorize(values)  # a missing value: code -1, the lookup's last entry
    return np.array([STATUS_RANK.get(u, unknown) for u in uniq] + [unknown], dtype=np.int64)[codes]


def waived_flags(waived: Any) -> np.ndarray:
    """Whether each finding is waived: its ``waived`` text is not empty (a missing value counts as
    waived, as ``astype(str) != ""`` reads it); looked up once per distinct value.

    Examples
    --------
    >>> waived_flags(pd.Series(["", "board decision", None])).tolist()
    [False, True, True]
    """
    values = waived if isinstance(waived, pd.Series) else np.asarray(waived, dtype=object)
    codes, uniq = pd.factorize(values)
    return np.array([not (isinstance(u, str) and u == "") for u in uniq] + [True], dtype=bool)[codes]


def _ranks(statuses: Any) -> np.ndarray:
    s = pd.Series(np.asarray(statuses, dtype=object))
    rank = s.map(STATUS_RANK)
    if rank.isna().any():
        bad = sorted(set(s[rank.isna()].astype(str)))
        raise ValueError(f"status {', '.join(bad)} is not one of {', '.join(STATUSES)}")
    return rank.to_numpy(dtype=int)


def worst_status(statuses: Iterable[str]) -> str:
    """The most severe status of a set; ``not_evaluated`` for an empty set.

    Nothing examined is never a ``pass``: a pass is a promise that the law's input was
    examined and the law is met.

    Examples
    --------
    >>> worst_status(["pass", "info", "review"])
    'review'
    >>> worst_status([])
    'not_evaluated'
    """
    vals = statuses.to_numpy(dtype=object) if isinstance(statuses, pd.Series) else np.asarray(list(statuses), dtype=object)
    rank = _ranks(pd.unique(vals)) if len(vals) else np.zeros(0, dtype=int)  # each distinct status once
    return STATUSES[int(rank.min())] if len(rank) else "not_evaluated"


def worst_status_by(keys: Any, statuses: Any, index: Any = None) -> pd.Series:
    """The worst status per key (per parcel, per rule ...), vectorized.

    Parameters
    ----------
    keys : array-like
        The key of each status (``subject_id`` of each finding).
    statuses : array-like
        Statuses aligned with ``keys``.
    index : array-like, optional
        The keys wanted, in order (the parcels of a table). A key without any status is
        ``not_evaluated``. Default: the keys present, sorted.

    Returns
    -------
    pandas.Series
        Worst status indexed by key.

    Examples
    --------
    >>> worst_status_by(["P1", "P1", "P2"], ["pass", "review", "pass"], index=["P1", "P2", "P3"]).tolist()
    ['review', 'pass', 'not_evaluated']
    """
    rank = pd.Series(_ranks(statuses)).groupby(np.asarray(keys, dtype=object)).min()
    names = np.array(STATUSES, dtype=object)
    out = pd.Series(names[rank.to_numpy()], index=rank.index, dtype=object)
    if index is not None:
        out = out.reindex(pd.Index(np.asarray(index, dtype=object))).fillna("not_evaluated")
    return out
