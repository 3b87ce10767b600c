"""Rules and rulebooks as data: :class:`Rule` (thresholds, params, switches, tables, messages)
and :class:`Rulebook`; findings are built from a rule with its message templates.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
from shapely.geometry.base import BaseGeometry

from geoconstraints.errors import RulebookError
from geoconstraints.rulebook.findings import (
    FINDING_COLUMNS,
    STATUS_RANK,
    STATUSES,
    Outcomes,
    every_row,
    rows_kept,
    run_wide,
)
from geoconstraints.rulebook.render import (
    fields_of,
    fmt_num,
    message_statuses,
    messages_only_for,
    num_texts,
    render_messages,
    render_text,
    value_text,
    value_texts,
)
from geoconstraints.rulebook.repairs import mark_repaired, with_marks
from geoconstraints.text import visible_text

log = logging.getLogger(__name__)

GROUPS = ("harvest", "flood", "stormwater", "seqr")
UNIT_SUFFIXES = (
    "_sqin_per_sqft", "_acres_per_mile", "_ft_per_in", "_ft", "_pct", "_acres", "_sqft", "_in", "_sqin", "_days",
    "_hours", "_months", "_cords", "_cuft", "_bf", "_count", "_usd", "_lots", "_units", "_ratio",
    "_miles",
)
RULE_ID_PATTERN = re.compile(r"^[A-Z]{2,5}-\d{3}$")


def unit_of(name: str) -> str:
    for suffix in UNIT_SUFFIXES:
        if name.endswith(suffix):
            return suffix[1:]
    return ""


def _geometry_array(geometry: Any, n: int, crs: Any) -> Any:
    """Geometries (one geometry, array, GeoSeries, list or None) as a GeometryArray of ``n`` rows."""
    if geometry is None or isinstance(geometry, BaseGeometry):
        same = np.empty(n, dtype=object)
        same[:] = [geometry] * n
        return gpd.array.from_shapely(same, crs=crs)
    if isinstance(geometry, (gpd.GeoSeries, pd.Series)):
        geometry = geometry.values
    arr: np.ndarray | None = None if isinstance(geometry, (list, tuple)) else np.asarray(geometry, dtype=object)
    if arr is None or arr.ndim != 1:
        arr = np.empty(len(geometry), dtype=object)
        arr[:] = list(geometry)
    return gpd.array.from_shapely(arr, crs=crs)


def _column(v: Any, n: int, rule_id: str) -> np.ndarray:
    """A per-row value (checked to have ``n`` rows) or one value repeated, as an object array."""
    if _is_rows(v):
        a = np.asarray(v.to_numpy() if isinstance(v, pd.Series) else v, dtype=object)
        if len(a) != n:
            raise ValueError(f"rule {rule_id}: {len(a)} values for {n} subjects")
        return a
    out = np.empty(n, dtype=object)
    out[:] = [v] * n
    return out


def _floats(v: Any, n: int, rule_id: str) -> np.ndarray:
    """A per-row or one number as float64 (text and None: NaN); a numeric array is taken as it is.

    Examples
    --------
    >>> _floats(np.array([1, 2]), 2, "X").tolist(), _floats(["3.5", None], 2, "X").tolist(), _floats(7, 2, "X").tolist()
    ([1.0, 2.0], [3.5, nan], [7.0, 7.0])
    """
    if v is None or (isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))):
        return np.full(n, np.nan if v is None else float(v))  # one number (or none) for every row
    if _is_rows(v) and not isinstance(v, gpd.array.GeometryArray):
        a = np.asarray(v.to_numpy() if isinstance(v, pd.Series) else v)
        if a.ndim == 1 and a.dtype.kind in "fiu":
            if len(a) != n:
                raise ValueError(f"rule {rule_id}: {len(a)} values for {n} subjects")
            return a.astype("float64")
    return pd.to_numeric(pd.Series(_column(v, n, rule_id)), errors="coerce").to_numpy(dtype="float64")


def _status_texts(status: Any, n: int, rule_id: str) -> np.ndarray:
    """The status of each row as an object array of str (each distinct status converted once).

    Examples
    --------
    >>> _status_texts(np.array(["pass", "review", "pass"]), 3, "X").tolist(), _status_texts("info", 2, "X").tolist()
    (['pass', 'review', 'pass'], ['info', 'info'])
    """
    codes, uniq = _status_codes(status, n, rule_id)
    return uniq[codes]


def _status_codes(status: Any, n: int, rule_id: str) -> tuple[np.ndarray, np.ndarray]:
    """(code of each row, the distinct statuses as an object array of str): the statuses of ``n`` rows.

    A numpy text array (what ``np.where(..., "review", "pass")`` gives) is compared with each
    known status (no Python str made per row); anything else is factorized.

    Examples
    --------
    >>> codes, uniq = _status_codes(np.array(["pass", "review", "pass"]), 3, "X")
    >>> codes.tolist(), uniq.tolist()
    ([0, 1, 0], ['pass', 'review'])
    """
    if isinstance(status, np.ndarray) and status.dtype.kind == "U" and status.ndim == 1 and len(status) == n:
        codes = np.full(n, -1, dtype=np.int64)
        found: list[str] = []
        for s in STATUSES:
            hit = status == s
            if hit.any():
                codes[hit] = len(found)
                found.append(s)
        if (codes >= 0).all():  # else another value: the general way below names it
            order = np.argsort([int(np.argmax(codes == k)) for k in range(len(found))], kind="stable")
            remap = np.empty(len(found), dtype=np.int64)
            remap[order] = np.arange(len(found))  # codes by first appearance, as factorize gives them
            uniq = np.empty(len(found), dtype=object)
            uniq[:] = [found[k] for k in order]
            return remap[codes], uniq
    col = _column(status, n, rule_id)
    codes, uniq = pd.factorize(col, use_na_sentinel=False)
    if not all(type(u) is str for u in uniq):  # not text: as str() of each row
        codes, uniq = pd.factorize(col.astype(str).astype(object), use_na_sentinel=False)
    texts = np.empty(len(uniq), dtype=object)
    texts[:] = list(uniq)
    return codes, texts


def _id_texts(subject_id: Any) -> np.ndarray:
    """The subject ids as an object array of str (one id: one row); ids that are all text already
    are taken as they are (a county's parcel ids: no conversion per row)."""
    if _is_rows(subject_id) and not isinstance(subject_id, gpd.array.GeometryArray):
        a = np.asarray(subject_id.to_numpy() if isinstance(subject_id, pd.Series) else subject_id, dtype=object)
        if a.ndim == 1 and pd.api.types.infer_dtype(a, skipna=False) in ("string", "empty"):
            return a.copy()
    return pd.Series(list(subject_id) if _is_rows(subject_id) else [subject_id],
                     dtype=object).astype(str).to_numpy(dtype=object)


def _take(v: Any, take: np.ndarray, n: int, rule_id: str, *, geometry: bool = False) -> Any:
    """The rows ``take`` of a per-row value of ``n`` rows (checked); one value for all rows as it is.

    Examples
    --------
    >>> _take(np.array([1.0, 2.0, 3.0]), np.array([0, 2]), 3, "X").tolist(), _take("ft", np.array([0]), 3, "X")
    ([1.0, 3.0], 'ft')
    """
    if not _is_rows(v) or (geometry and isinstance(v, BaseGeometry)):
        return v
    if len(v) != n:
        raise ValueError(f"rule {rule_id}: {len(v)} values for {n} subjects")
    if isinstance(v, pd.Series):
        return v.values[take]
    if isinstance(v, (list, tuple)):
        a = np.empty(len(v), dtype=object)
        a[:] = list(v)
        return a[take]
    return v[take]


def _is_rows(v: Any) -> bool:
    """True for per-row values (array, Series, list, tuple), False for one value for all rows."""
    return isinstance(v, (pd.Series, np.ndarray, list, tuple, gpd.array.GeometryArray))


@dataclass
class Rule:
    """One rule of a rulebook.

    Attributes
    ----------
    id, group, citation : str
        Identity and source of the rule.
    title, summary : str
        Rendered from :attr:`title_template` / :attr:`summary_template` with the rule's own
        thresholds, params and switches, so a changed threshold changes the title too.
    thresholds : dict[str, float]
        Named numeric thresholds; the unit is the name's suffix (``max_run_ft``).
    params : dict[str, Any]
        Non-numeric data (district lists, adopted map id, checklists, citations of sub-sections).
    switches : dict[str, dict]
        Readings of ambiguous law: ``{name: {"value": ..., "choices": [...], "doc": ...}}``.
    tables : dict[str, list]
        Tabular data (water-bar spacing).
    messages : dict[str, str]
        Templates per status, ``default`` otherwise (see :mod:`geoconstraints.rulebook.render`).
    phrases : dict[str, str]
        Named sentences a check puts into a finding's ``{detail}`` (:meth:`phrase`): templates over
        the rule's names and the fields the check gives.
    rulebook : str
        Name of the rulebook the rule belongs to.
    waived : str
        Waiver reason from the user's rulebook, ``""`` when not waived.
    title_template, summary_template : str
        The raw templates (default: ``title`` / ``summary`` as given). The ``text`` of every
        entry of a list param (a checklist item, an exemption) is rendered the same way, its
        template kept as ``text_template``.

    Examples
    --------
    >>> r = Rule(id="ABC-001", title="At least {min_gap_ft} ft apart", group="harvest", citation="c",
    ...          thresholds={"min_gap_ft": 150})
    >>> r.title, r.title_template
    ('At least 150 ft apart', 'At least {min_gap_ft} ft apart')
    """

    id: str
    title: str
    group: str
    citation: str
    summary: str = ""
    thresholds: dict[str, float] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    switches: dict[str, dict] = field(default_factory=dict)
    tables: dict[str, Any] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)
    notes: str = ""
    rulebook: str = ""
    waived: str = ""
    title_template: str = ""
    summary_template: str = ""

    def __post_init__(self) -> None:
        self.title_template = self.title_template or self.title
        self.summary_template = self.summary_template or self.summary
        names = self.names()
        self.title = render_text(self.title_template, names, where=f"rule {self.id} title")
        self.summary = render_text(self.summary_template, names, where=f"rule {self.id} summary")
        self.params = {k: self._rendered_entries(k, v, names) for k, v in self.params.items()}

    def _rendered_entries(self, key: str, value: Any, names: dict[str, str]) -> Any:
        """A list param of entries with a ``text`` (checklists, exemptions, list items): each text
        rendered like the title, its template kept as ``text_template``."""
        if not isinstance(value, list) or not any(isinstance(e, dict) and "text" in e for e in value):
            return value
        out = []
        for i, e in enumerate(value):
            if isinstance(e, dict) and isinstance(e.get("text"), str):
                tmpl = str(e.get("text_template") or e["text"])
                e = {**e, "text_template": tmpl,
                     "text": render_text(tmpl, names, where=f"rule {self.id} params.{key}[{i}].text")}
            out.append(e)
        return out

    # -- data access -------------------------------------------------------------------------
    def t(self, name: str) -> float:
        """Threshold ``name`` (a number); a clear error names the rule when it is missing."""
        try:
            return float(self.thresholds[name])
        except KeyError:
            raise RulebookError(
                f"rule {self.id} in rulebook {self.rulebook!r} has no threshold {name!r}; "
                f"add it under thresholds: in the rulebook"
            ) from None

    def p(self, name: str, default: Any = ...) -> Any:
        """Param ``name``."""
        if name in self.params:
            return self.params[name]
        if default is not ...:
            return default
        raise RulebookError(f"rule {self.id} in rulebook {self.rulebook!r} has no param {name!r}")

    def texts(self, name: str, default: Any = ...) -> tuple[str, ...]:
        """Param ``name`` given as one text or a list of texts, as a tuple of the non-blank ones (stripped; an
        empty YAML entry, None, is none).

        A missing param is ``default`` read the same way (no default: a RulebookError, as :meth:`p`).

        Examples
        --------
        >>> r = Rule(id="ABC-001", title="t", group="flood", citation="c",
        ...          params={"one": "ENCROACHMENT", "many": ["STATE ENCROACHMENT AREA", " ", "FLOWAGE EASEMENT "]})
        >>> r.texts("one"), r.texts("many"), r.texts("none", [])
        (('ENCROACHMENT',), ('STATE ENCROACHMENT AREA', 'FLOWAGE EASEMENT'), ())
        """
        value = self.p(name, default)
        values = [value] if isinstance(value, str) else list(value or ())
        return tuple(str(v).strip() for v in values if v is not None and str(v).strip())

    def s(self, name: str) -> Any:
        """Current value of switch ``name``."""
        try:
            return self.switches[name]["value"]
        except KeyError:
            raise RulebookError(
                f"rule {self.id} in rulebook {self.rulebook!r} has no switch {name!r}"
            ) from None

    @property
    def reading(self) -> str:
        """The readings in force, ``name=value; ...`` (empty when the rule has no switch)."""
        return "; ".join(f"{k}={v['value']}" for k, v in sorted(self.switches.items()))

    def names(self) -> dict[str, str]:
        """The text of every name a template of this rule may use: params, thresholds, switches."""
        out = {k: value_text(v) for k, v in self.params.items()}
        out.update({k: fmt_num(v) for k, v in self.thresholds.items()})
        out.update({k: value_text(v.get("value")) for k, v in self.switches.items()})
        return out

    def phrase(self, name: str, **fields: Any) -> str:
        """The rule's phrase ``name`` (its ``phrases`` in the rulebook) filled from the rule's names and
        ``fields`` (numbers written by :func:`fmt_num`, lists joined by commas; a field given here wins
        over a rule name).

        A check composes its ``{detail}`` from phrases, so the words are the rulebook's while the
        check gives the values only it knows (a distance measured, the feature reached).

        Examples
        --------
        >>> r = Rule(id="ABC-001", title="t", group="harvest", citation="c", thresholds={"pad_radius_ft": 120},
        ...          phrases={"pad": "its pad may reach {pad_radius_ft} ft around it, into {into}"})
        >>> r.phrase("pad", into="the 100-ft strip of S1")
        'its pad may reach 120 ft around it, into the 100-ft strip of S1'
        >>> r.phrase("pad")
        Traceback (most recent call last):
        ...
        geoconstraints.errors.RulebookError: rule ABC-001 phrases.pad: field {into} is not a name this template may use; use {pad_radius_ft}
        """
        try:
            template = self.phrases[name]
        except KeyError:
            raise RulebookError(
                f"rule {self.id} in rulebook {self.rulebook!r} has no phrase {name!r}; add it under phrases: in "
                f"the rulebook (the shipped rulebook's text is a model)"
            ) from None
        texts = {**self.names(), **{k: value_text(v) for k, v in fields.items()}}
        return render_text(template, texts, where=f"rule {self.id} phrases.{name}")

    def template(self, status: str) -> str:
        """The message template of ``status`` (else ``default``, else ``{detail}``)."""
        return self.messages.get(status) or self.messages.get("default") or "{detail}"

    # -- findings ----------------------------------------------------------------------------
    def findings(
        self,
        status: Any,
        *,
        subject_layer: Any = "",
        subject_id: Any = "",
        measured: Any = None,
        threshold: Any = None,
        unit: Any = "",
        geometry: Any = None,
        crs: Any = None,
        **values: Any,
    ) -> gpd.GeoDataFrame:
        """The findings of this rule for one or many subjects, messages filled from the templates.

        Parameters
        ----------
        status : str or array of str
            One of :data:`~geoconstraints.rulebook.findings.STATUSES` per row (or one for all).
        subject_layer, subject_id : str or array
            The subject of each row; a single ``subject_id`` makes one row (``""`` for a
            run-wide finding).
        measured, threshold : float or array, optional
            In ``unit`` (NaN / None: none).
        unit : str or array
        geometry : geometry, array of geometries or None
            Where each finding is, in ``crs``.
        crs : CRS-like, optional
        **values
            Per-row or constant values of the template's fields (``detail`` = the sentence the
            check composes); they override the rule's own names.

        Returns
        -------
        GeoDataFrame
            :data:`~geoconstraints.rulebook.findings.FINDING_COLUMNS` + geometry, one row per
            subject. A check may add columns of its own (per-subject values for the command's
            tables); :func:`~geoconstraints.rulebook.findings.findings_frame` drops them.

        Examples
        --------
        >>> from geoconstraints.rulebook.loader import load_rulebook
        >>> rule = load_rulebook("vestal")["HRV-025"]
        >>> f = rule.findings(["violation", "pass"], subject_layer="landings", subject_id=["L1", "L2"],
        ...                   measured=[95.0, 420.5], threshold=150, unit="ft", detail="nearest: roads R1")
        >>> f["message"].tolist()[0]
        'landings L1 is 95 ft from a public right-of-way, minimum 150 ft (nearest: roads R1).'
        """
        ids = _id_texts(subject_id)
        n = len(ids)
        # a subject whose geometry the loader repaired: its message says so (and a pass whose repair lost part
        # of the drawing is not evaluated), decided before any row is left out so its status columns agree
        given = status  # the rows built again below are marked again from the statuses the check gave
        status, repaired = mark_repaired(status, subject_layer, ids)

        codes, uniq = _status_codes(status, n, self.id)
        bad = set(uniq) - set(STATUSES)
        if bad:
            raise ValueError(f"status {', '.join(map(repr, sorted(bad)))} is not one of {', '.join(STATUSES)}")
        lean = rows_kept()
        # within rows_only_for: the rows of the statuses kept and the run-wide ones only, every row's status recorded
        keep = (np.array([u in lean[0] for u in uniq], dtype=bool)[codes] | run_wide(ids)
                if lean is not None and not all(u in lean[0] for u in uniq) else None)
        if lean is not None and keep is not None and not keep.all():
            take = np.flatnonzero(keep)
            with every_row():
                frame = self.findings(_take(given, take, n, self.id),
                                      subject_layer=_take(subject_layer, take, n, self.id),
                                      subject_id=ids[take], measured=_take(measured, take, n, self.id),
                                      threshold=_take(threshold, take, n, self.id),
                                      unit=_take(unit, take, n, self.id),
                                      geometry=_take(geometry, take, n, self.id, geometry=True), crs=crs,
                                      **{k: _take(v, take, n, self.id) for k, v in values.items()})
            rank = np.array([STATUS_RANK[u] for u in uniq], dtype=np.int8)[codes]
            layer = value_texts(subject_layer).copy() if _is_rows(subject_layer) else value_text(subject_layer)
            lean[1].append(Outcomes(self.id, self.title, self.waived, layer, ids, rank, lean[0], frame))
            return frame
        st = uniq[codes]
        meas, thr = _floats(measured, n, self.id), _floats(threshold, n, self.id)
        # per-row texts copied: value_texts may hand back the caller's own array, and the frame takes it as is
        layer = value_texts(subject_layer).copy() if _is_rows(subject_layer) else value_text(subject_layer)
        units = value_texts(unit).copy() if _is_rows(unit) else value_text(unit)
        only = message_statuses()
        if only is not None and not set(st[run_wide(ids)]) <= only:
            only = None  # a run-wide finding is kept in every findings scope: its message too
        texts: dict[str, Any] = {**self.names(), "detail": ""}
        suffix = f" [waived: {self.waived}]" if self.waived else ""
        with messages_only_for(only):
            texts.update(subject_layer=layer, unit=units, subject_id=ids, measured=self._num_texts_where_used(
                         st, meas, "measured"), threshold=self._num_texts_where_used(st, thr, "threshold"))
            texts.update({k: value_texts(v) if _is_rows(v) else value_text(v) for k, v in values.items()})
            msgs = with_marks(render_messages(self.template, st, texts, where=f"rule {self.id}", suffix=suffix),
                              repaired, suffix)  # the repair's sentence before the waiver's
        text = {"rule_id": self.id, "rulebook": self.rulebook, "status": st, "citation": self.citation,
                "subject_layer": layer, "subject_id": ids, "unit": units, "message": msgs, "title": self.title,
                "reading": self.reading, "waived": self.waived}
        # text columns stay object arrays here (the same str objects, no conversion per row):
        # findings_frame sorts the run's findings, then types them as text once
        # every array here is this call's own: the frame takes them as its columns (copy=False: no copy,
        # no consolidation into one block of millions of pointers)
        nums = {"measured": meas, "threshold": thr}
        index = pd.RangeIndex(n)
        df = pd.DataFrame({c: pd.Series(text[c], dtype=object, index=index, copy=False) if c in text
                           else pd.Series(nums[c], dtype="float64", index=index, copy=False)
                           for c in FINDING_COLUMNS}, index=index, copy=False)
        return gpd.GeoDataFrame(df, geometry=_geometry_array(geometry, n, crs), crs=crs, copy=False)

    def _num_texts_where_used(self, status: np.ndarray, values: np.ndarray, name: str) -> np.ndarray:
        """:func:`num_texts` of ``values`` on the rows whose status's template uses field ``name``
        (None on the others: no message reads them; a pass message rarely prints the measure)."""
        only = message_statuses()
        use = [s for s in pd.unique(status) if name in fields_of(self.template(str(s))) and (only is None or s in only)]
        if len(use) == 1:
            need = status == use[0]
        else:
            need = np.isin(status, use) if use else np.zeros(len(status), dtype=bool)
        if need.all():
            return num_texts(values)
        out = np.full(len(values), None, dtype=object)
        if need.any():
            out[need] = num_texts(values[need])
        return out

    def to_dict(self) -> dict[str, Any]:
        """The rule as plain data (for the catalogue and reports)."""
        return {
            "id": self.id, "title": self.title, "group": self.group, "citation": self.citation,
            "summary": self.summary, "thresholds": dict(self.thresholds), "params": dict(self.params),
            "switches": {k: v.get("value") for k, v in self.switches.items()},
            "waived": self.waived, "notes": self.notes,
        }


class FindingRows:
    """Findings of one rule gathered one subject at a time, rendered in one :meth:`Rule.findings` call.

    For checks over a handful of subjects (a plan's roads, a project's sites) whose detail is
    easier to compose per subject; batch checks pass arrays to :meth:`Rule.findings` directly.

    Examples
    --------
    >>> from geoconstraints.rulebook.loader import load_rulebook
    >>> rows = FindingRows(load_rulebook("vestal")["HRV-030"])
    >>> rows.add("pass", subject_layer="haul_roads", subject_id="R1", detail="mean grade 1.2 %")
    >>> rows.frame()["message"].tolist()
    ['haul_roads R1: grade under 2 %, no water bars required (mean grade 1.2 %).']
    """

    _KEYS = ("status", "subject_layer", "subject_id", "measured", "threshold", "unit", "geometry", "detail")

    def __init__(self, rule: Rule, crs: Any = None) -> None:
        self.rule, self.crs = rule, crs
        self.cols: dict[str, list[Any]] = {k: [] for k in self._KEYS}

    def __len__(self) -> int:
        return len(self.cols["status"])

    def add(self, status: str, *, subject_layer: str = "", subject_id: Any = "", measured: Any = None,
            threshold: Any = None, unit: str = "", geometry: Any = None, detail: str = "") -> None:
        """Add the finding of one subject."""
        for k, v in zip(self._KEYS, (status, subject_layer, subject_id, measured, threshold, unit, geometry, detail)):
            self.cols[k].append(v)

    def frame(self) -> gpd.GeoDataFrame:
        """All rows added, as one findings frame."""
        return self.rule.findings(**{k: self.cols[k] for k in self._KEYS}, crs=self.crs)


def rule_districts(params: Mapping[str, Any]) -> list[str]:
    """The zoning districts a rule's ``params`` name: its ``districts`` list and the ``districts``
    of any list entry (SQR-001's exemptions), stripped and upper-cased, in first-seen order.

    Examples
    --------
    >>> rule_districts({"districts": ["RA-1", " rc"], "items": [{"key": "x", "districts": ["C-1", "RA-1"]}]})
    ['RA-1', 'RC', 'C-1']
    """
    found: list[Any] = list(params.get("districts") or []) if isinstance(params.get("districts"), list) else []
    for v in params.values():
        if isinstance(v, list):
            found += [d for e in v if isinstance(e, Mapping) and isinstance(e.get("districts"), list)
                      for d in e["districts"]]
    out: list[str] = []
    for d in found:
        t = str(d).strip().upper()
        if t not in out:
            out.append(t)
    return out


@dataclass
class Rulebook:
    """An ordered collection of :class:`Rule` objects, selected and parameterised for a town."""

    name: str
    version: str
    title: str
    rules: dict[str, Rule]
    source: str = ""
    path: str = ""
    extends: str = ""
    files: list[dict[str, Any]] = field(default_factory=list)
    """The rulebook file(s) read, hashed as they were loaded (the bytes hashed are the bytes parsed):
    the file named (a user's YAML file, or a bundled rulebook's inside the package), then in turn each
    file it ``extends``; each ``{"rulebook", "bundled", "file", "path", "size_bytes", "sha256"}``
    (:func:`~geoconstraints.rulebook.loader.rulebook_file_entry`). Empty for a rulebook made in code."""
    town_districts: tuple[str, ...] | None = None
    """Every zoning district of the town (the rulebook's ``town_districts``, stripped and upper-cased),
    or None when the rulebook does not list them. Given, a zoning value naming none of them is an
    unknown district (it may be a listed one misspelt); not given, any other value is read as a
    district the law does not name, and the run says which values it read so."""
    messages: dict[str, str] = field(default_factory=dict)
    """Sentences about the inputs rather than one rule, by key (the rulebook file's top-level
    ``messages``, :data:`~geoconstraints.rulebook.repairs.RUN_MESSAGES`): ``geometry_repaired`` ...
    A rulebook made in code without them uses the shipped ones
    (:func:`~geoconstraints.rulebook.loader.run_messages`)."""

    def named_districts(self, group: str | None = None) -> list[str]:
        """The districts the rules (of ``group``) name in their ``districts`` params, and in the
        ``districts`` of a param's list entries, stripped and upper-cased, in first-seen order."""
        out: list[str] = []
        for r in self.rules.values():
            if group is None or r.group == group:
                out += [d for d in rule_districts(r.params) if d not in out]
        return out

    def __getitem__(self, rule_id: str) -> Rule:
        try:
            return self.rules[rule_id]
        except KeyError:
            raise RulebookError(
                f"rulebook {self.name!r} has no rule {rule_id}; it has {', '.join(self.rules)}"
            ) from None

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self.rules

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules.values())

    def __len__(self) -> int:
        return len(self.rules)

    def group(self, group: str) -> list[Rule]:
        """Rules of one group (``harvest``, ``flood``, ``stormwater``, ``seqr``) in id order."""
        return [r for r in self.rules.values() if r.group == group]

    def require_group(self, group: str) -> list[Rule]:
        """The rules of ``group``; a RulebookError naming what the rulebook covers when it has none.

        A rulebook without, say, harvest rules must not produce an empty "no findings" run.
        """
        rules = self.group(group)
        if not rules:
            covers = sorted({r.group for r in self}) or ["nothing"]
            raise RulebookError(
                f"rulebook {self.name!r} has no {group} rules (it covers {', '.join(covers)}); "
                f"use a rulebook with {group} rules, e.g. --rulebook vestal, or one that extends it"
            )
        return rules

    def catalogue(self) -> pd.DataFrame:
        """One row per rule: id, title, citation, thresholds, switches, waived."""
        rows = []
        for r in self:
            thr = ", ".join(f"{k}={fmt_num(v)}" for k, v in r.thresholds.items())
            sw = ", ".join(f"{k}={v['value']}" for k, v in r.switches.items())
            rows.append({"id": r.id, "title": r.title, "group": r.group, "citation": r.citation,
                         "thresholds": thr, "switches": sw, "waived": r.waived})
        return pd.DataFrame(rows, columns=["id", "title", "group", "citation", "thresholds",
                                           "switches", "waived"])

    def _repr_html_(self) -> str:  # notebooks
        e = html.escape  # a user's rulebook names itself: shown as text, invisible characters visibly
        return (f"<p><b>Rulebook {e(visible_text(self.name))}</b> v{e(visible_text(str(self.version)))}: "
                f"{len(self)} rules</p>" + self.catalogue().map(visible_text).to_html(index=False, escape=True))

