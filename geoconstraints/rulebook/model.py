"""Rules and rulebooks as data: :class:`Rule` (thresholds, params, switches, tables, messages)
and :class:`Rulebook`; findings are built from a rule with its message templates.
"""

from __future__ import annotations

import logging
import re
import string
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd

from geoconstraints.errors import RulebookError
from geoconstraints.rulebook.findings import STATUSES, Finding

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


class _Template(dict):
    """Mapping for ``str.format_map`` that reports an unknown key clearly."""

    def __init__(self, rule_id: str, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.rule_id = rule_id

    def __missing__(self, key: str) -> str:
        raise RulebookError(
            f"rule {self.rule_id}: message template uses {{{key}}}, which the check does not "
            f"supply. Use only the rule's thresholds, params, switches, or subject_id, "
            f"subject_layer, measured, threshold, unit, detail."
        )


def _fmt_num(v: Any) -> Any:
    if isinstance(v, (float, np.floating)):
        if np.isnan(v):
            return "n/a"
        return f"{v:,.2f}".rstrip("0").rstrip(".") if abs(float(v)) < 1e6 else f"{v:,.0f}"
    if v is None:
        return "n/a"
    return v


_FORMATTER = string.Formatter()


def _fmt_num_texts(values: np.ndarray) -> np.ndarray:
    """``str(_fmt_num(v))`` of every float of ``values`` (NaN -> ``n/a``), formatting each distinct value once."""
    v = np.asarray(values, dtype="float64")
    if not len(v):
        return np.empty(0, dtype=object)
    _bits, first, inverse = np.unique(v.view(np.int64), return_index=True, return_inverse=True)  # -0.0 kept apart
    u = v[first]
    texts = np.full(len(u), "n/a", dtype=object)  # NaN
    small = np.abs(u) < 1e6  # the two branches of _fmt_num, without its per-value checks
    big = ~small & ~np.isnan(u)
    texts[small] = [f"{x:,.2f}".rstrip("0").rstrip(".") for x in u[small].tolist()]
    texts[big] = [f"{x:,.0f}" for x in u[big].tolist()]
    return texts[inverse.reshape(-1)]


def _value_texts(values: np.ndarray) -> np.ndarray:
    """``str(_fmt_num(v))`` of every value of an array (text of a per-row template value)."""
    if values.dtype.kind == "f":
        return _fmt_num_texts(values)
    if values.dtype.kind in "iub":
        uniq, inverse = np.unique(values, return_inverse=True)
        return np.array([str(x) for x in uniq.astype(object)], dtype=object)[inverse.reshape(-1)]
    return np.array([v if type(v) is str else str(_fmt_num(v)) for v in values], dtype=object)


def _row_array(v: Any) -> np.ndarray:
    """A per-row template value (Series, array, list, tuple) as a 1-D numpy array."""
    if isinstance(v, pd.Series):
        return v.to_numpy()
    if isinstance(v, np.ndarray) and v.ndim == 1:
        return v
    out = np.empty(len(v), dtype=object)
    out[:] = list(v)
    return out


def _geometry_array(geometry: Any, n: int, crs: Any) -> Any:
    """Geometries (array, GeoSeries, list or None) as a GeometryArray of ``n`` rows in ``crs``."""
    if geometry is None:
        return gpd.array.from_shapely(np.full(n, None, dtype=object), crs=crs)
    if isinstance(geometry, (gpd.GeoSeries, pd.Series)):
        geometry = geometry.values
    arr = np.asarray(geometry, dtype=object) if not isinstance(geometry, (list, tuple)) else None
    if arr is None or arr.ndim != 1:
        arr = np.empty(len(geometry), dtype=object)
        arr[:] = list(geometry)
    return gpd.array.from_shapely(arr, crs=crs)


@dataclass
class Rule:
    """One rule of a rulebook.

    Attributes
    ----------
    id, title, group, citation, summary : str
        Identity and source of the rule.
    thresholds : dict[str, float]
        Named numeric thresholds; the unit is the name's suffix (``max_run_ft``).
    params : dict[str, Any]
        Non-numeric data (district lists, adopted map id, checklists).
    switches : dict[str, dict]
        Readings of ambiguous law: ``{name: {"value": ..., "choices": [...], "doc": ...}}``.
    tables : dict[str, list]
        Tabular data (water-bar spacing).
    messages : dict[str, str]
        ``str.format`` templates per status, ``default`` otherwise.
    rulebook : str
        Name of the rulebook the rule belongs to.
    waived : str
        Waiver reason from the user's rulebook, ``""`` when not waived.
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
    notes: str = ""
    rulebook: str = ""
    waived: str = ""

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

    def _context(self) -> dict[str, Any]:
        ctx: dict[str, Any] = {}
        ctx.update(self.params)
        ctx.update({k: _fmt_num(float(v)) for k, v in self.thresholds.items()})
        ctx.update({k: v["value"] for k, v in self.switches.items()})
        return ctx

    def _template(self, status: str) -> str:
        return self.messages.get(status) or self.messages.get("default") or "{detail}"

    def message(self, status: str, **values: Any) -> str:
        """Format the message template for ``status`` with the rule's data and ``values``."""
        ctx = _Template(self.id, self._context())
        ctx.setdefault("detail", "")
        ctx.update({k: _fmt_num(v) for k, v in values.items()})
        text = self._template(status).format_map(ctx).strip()
        if self.waived:
            text += f" [waived: {self.waived}]"
        return text

    # -- findings ----------------------------------------------------------------------------
    def finding(
        self,
        status: str,
        *,
        subject_layer: str = "",
        subject_id: Any = "",
        measured: float | None = None,
        threshold: float | None = None,
        unit: str = "",
        geometry: Any = None,
        **values: Any,
    ) -> Finding:
        """Build one :class:`Finding` of this rule; ``values`` fill the message template."""
        msg = self.message(
            status, subject_layer=subject_layer, subject_id=subject_id, measured=measured,
            threshold=threshold, unit=unit, **values,
        )
        return Finding(
            rule_id=self.id, rulebook=self.rulebook, status=status, citation=self.citation,
            subject_layer=subject_layer, subject_id=str(subject_id),
            measured=None if measured is None else float(measured),
            threshold=None if threshold is None else float(threshold), unit=unit, message=msg,
            geometry=geometry, title=self.title, reading=self.reading, waived=self.waived,
        )

    def findings(
        self,
        status: Any,
        *,
        subject_layer: str,
        subject_id: Iterable[Any],
        measured: Any = None,
        threshold: Any = None,
        unit: str = "",
        geometry: Any = None,
        crs: Any = None,
        **values: Any,
    ) -> gpd.GeoDataFrame:
        """Vectorized :meth:`finding` for many subjects (batch screening).

        Every argument may be a scalar or an array aligned with ``subject_id``. Returns a
        GeoDataFrame with the standard finding columns.
        """
        ids = pd.Series(list(subject_id), dtype=object).astype(str).reset_index(drop=True)
        n = len(ids)

        def col(v: Any) -> pd.Series:
            if isinstance(v, (pd.Series, np.ndarray, list, tuple, gpd.GeoSeries)):
                s = pd.Series(list(v), dtype=object) if not isinstance(v, pd.Series) else v
                return s.reset_index(drop=True)
            return pd.Series([v] * n, dtype=object)

        st = col(status).astype(str)
        bad = set(st.unique()) - set(STATUSES)
        if bad:
            raise ValueError(f"status {sorted(bad)} not one of {STATUSES}")
        meas = pd.to_numeric(col(measured), errors="coerce").astype("float64")
        thr = pd.to_numeric(col(threshold), errors="coerce").astype("float64")
        # the text of every template field, one array (or one constant) per name: row values
        # override the rule's own names, as in :meth:`message`
        texts: dict[str, Any] = {k: str(v) for k, v in self._context().items()}
        texts.setdefault("detail", "")
        texts.update(subject_layer=str(subject_layer), unit=str(unit), subject_id=ids.to_numpy(dtype=object),
                     measured=_fmt_num_texts(meas.to_numpy()), threshold=_fmt_num_texts(thr.to_numpy()))
        for k, v in values.items():
            texts[k] = (_value_texts(_row_array(v)) if isinstance(v, (pd.Series, np.ndarray, list, tuple))
                        else str(_fmt_num(v)))

        def raw() -> dict[str, Any]:  # the per-row values of :meth:`message`, for the rare template
            out: dict[str, Any] = {
                "subject_layer": subject_layer, "unit": unit, "subject_id": ids.tolist(),
                "measured": [_fmt_num(None if pd.isna(x) else float(x)) for x in meas.tolist()],
                "threshold": [_fmt_num(None if pd.isna(x) else float(x)) for x in thr.tolist()]}
            out.update({k: [_fmt_num(x) for x in col(v).tolist()] for k, v in values.items()})
            return out

        msgs = self._messages(st.to_numpy(dtype=object), texts, n, raw)
        geom = _geometry_array(geometry, n, crs)
        df = pd.DataFrame({
            "rule_id": self.id, "rulebook": self.rulebook, "status": st, "citation": self.citation,
            "subject_layer": subject_layer, "subject_id": ids, "measured": meas, "threshold": thr,
            "unit": unit, "message": msgs, "title": self.title, "reading": self.reading,
            "waived": self.waived,
        }, index=range(n))
        return gpd.GeoDataFrame(df, geometry=geom, crs=crs)

    def _messages(self, status: np.ndarray, texts: dict[str, Any], n: int,
                  raw: Callable[[], dict[str, Any]]) -> np.ndarray:
        """The message of every row: each status's template filled by array concatenation.

        ``texts`` maps a template name to its text: an array aligned with the rows, or one
        string. The result is the text :meth:`message` gives for each row. A template whose
        field has a format spec, a conversion or an attribute/index lookup is formatted row by
        row with ``str.format_map`` from ``raw()`` (name -> per-row list, or one value).
        """
        out = np.empty(n, dtype=object)
        for s in pd.unique(status):
            rows = np.flatnonzero(status == s)
            template = self._template(str(s))
            parts = list(_FORMATTER.parse(template))
            if any(name is not None and (spec or conv or not name.isidentifier())
                   for _, name, spec, conv in parts):
                base = _Template(self.id, self._context())
                base.setdefault("detail", "")
                per_row = raw()
                scalars = {k: v for k, v in per_row.items() if not isinstance(v, list)}
                lists = {k: v for k, v in per_row.items() if isinstance(v, list)}
                for i in rows:
                    ctx = _Template(self.id, base)
                    ctx.update(scalars)
                    ctx.update({k: v[i] for k, v in lists.items()})
                    out[i] = template.format_map(ctx).strip() + (f" [waived: {self.waived}]" if self.waived else "")
                continue
            # the template as a %-frame: constant text inlined, one %s per per-row field
            frame, columns = "", []
            for literal, name, _spec, _conv in parts:
                frame += literal.replace("%", "%%")
                if name is None:
                    continue
                if name not in texts:
                    _Template(self.id).__missing__(name)  # raises the RulebookError naming the key
                t = texts[name]
                if isinstance(t, str):
                    frame += t.replace("%", "%%")
                else:
                    frame += "%s"
                    columns.append(t[rows].tolist())
            suffix = f" [waived: {self.waived}]" if self.waived else ""
            if columns:
                out[rows] = [(frame % row).strip() + suffix for row in zip(*columns)]
            else:
                out[rows] = (frame % ()).strip() + suffix
        return out

    def to_dict(self) -> dict[str, Any]:
        """The rule as plain data (for the catalogue and reports)."""
        return {
            "id": self.id, "title": self.title, "group": self.group, "citation": self.citation,
            "summary": self.summary, "thresholds": dict(self.thresholds), "params": dict(self.params),
            "switches": {k: v.get("value") for k, v in self.switches.items()},
            "waived": self.waived, "notes": self.notes,
        }


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
            thr = ", ".join(f"{k}={_fmt_num(float(v))}" for k, v in r.thresholds.items())
            sw = ", ".join(f"{k}={v['value']}" for k, v in r.switches.items())
            rows.append({"id": r.id, "title": r.title, "group": r.group, "citation": r.citation,
                         "thresholds": thr, "switches": sw, "waived": r.waived})
        return pd.DataFrame(rows, columns=["id", "title", "group", "citation", "thresholds",
                                           "switches", "waived"])

    def _repr_html_(self) -> str:  # notebooks
        return (f"<p><b>Rulebook {self.name}</b> v{self.version}: {len(self)} rules</p>"
                + self.catalogue().to_html(index=False, escape=True))

