"""The rulebook: a registry of rules as data, and the check functions bound to rule ids.

A rulebook is YAML shipped in ``geoconstraints/rulebooks/`` (``vestal``, ``lockport``) or a
user's file that ``extends`` one, changes thresholds and switches, and waives rules with a
recorded reason. Thresholds, citations and message templates live only here; checks read
them from the :class:`Rule` they are given.

Adding a rule is one YAML entry plus one function decorated with :func:`check`.
"""

from __future__ import annotations

import copy
import logging
import re
import string
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import yaml

from .errors import RulebookError
from .findings import STATUSES, Finding

log = logging.getLogger(__name__)

GROUPS = ("harvest", "flood", "stormwater", "seqr")
UNIT_SUFFIXES = (
    "_sqin_per_sqft", "_acres_per_mile", "_ft", "_pct", "_acres", "_sqft", "_in", "_sqin", "_days",
    "_hours", "_months", "_cords", "_cuft", "_bf", "_count", "_usd", "_lots", "_units", "_ratio",
    "_miles",
)
_ID_RE = re.compile(r"^[A-Z]{2,5}-\d{3}$")


def _unit_of(name: str) -> str:
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


# ------------------------------------------------------------------------------------------
# loading

def available_rulebooks() -> list[str]:
    """Names of the rulebooks shipped with the package."""
    folder = resources.files("geoconstraints") / "rulebooks"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def _read_yaml(text: str, where: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).strip().splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        hint = (" Python tags (!!python/...) are never loaded: rulebooks are plain data."
                if "python/" in problem else "")
        raise RulebookError(f"rulebook {where}: not valid YAML{at} ({problem}).{hint} Fix the file.") from None
    if not isinstance(data, dict):
        raise RulebookError(f"rulebook {where}: expected a mapping with 'rules:' at the top")
    return data


def _raw_rulebook(name_or_path: str | Path, _seen: tuple[str, ...] = ()) -> tuple[dict, str]:
    key = str(name_or_path)
    if key in _seen:
        raise RulebookError(f"rulebook {key}: 'extends' loops back to itself ({' -> '.join(_seen)})")
    shipped = available_rulebooks()
    if key in shipped:
        text = (resources.files("geoconstraints") / "rulebooks" / f"{key}.yaml").read_text("utf-8")
        return _read_yaml(text, key), key
    path = Path(key)
    if path.suffix.lower() in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise RulebookError(
                f"rulebook file {path} does not exist. Available rulebooks: {', '.join(shipped)}, "
                f"or a path to a .yaml file"
            )
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RulebookError(f"rulebook file {path}: cannot be read ({exc})") from None
        return _read_yaml(text, str(path)), str(path)
    raise RulebookError(
        f"unknown rulebook {key!r}. Available rulebooks: {', '.join(shipped)} "
        f"(or a path to your own .yaml file that extends one)"
    )


def _merge_rule(base: dict[str, Any], over: dict[str, Any], where: str) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if k == "switches":
            sw = out.setdefault("switches", {})
            for name, val in (v or {}).items():
                if name not in sw:
                    if isinstance(val, dict):
                        sw[name] = val
                        continue
                    raise RulebookError(
                        f"rulebook {where}: rule {base.get('id')} has no switch {name!r} "
                        f"(it has {', '.join(sw) or 'none'})"
                    )
                if isinstance(val, dict):
                    sw[name].update(val)
                else:
                    sw[name]["value"] = val
        elif k in ("thresholds", "params", "messages", "tables") and isinstance(v, dict):
            out.setdefault(k, {}).update(v)
        else:
            out[k] = v
    return out


def _resolve(name_or_path: str | Path, _seen: tuple[str, ...] = ()) -> dict[str, Any]:
    raw, where = _raw_rulebook(name_or_path, _seen)
    rules_raw = raw.get("rules", [])
    if isinstance(rules_raw, dict):  # allow {ID: {...}} in user files
        rules_raw = [{"id": k, **(v or {})} for k, v in rules_raw.items()]
    if not isinstance(rules_raw, list):
        raise RulebookError(f"rulebook {where}: 'rules' must be a list of rules")
    parent = raw.get("extends")
    shipped = available_rulebooks()
    user_file = where not in shipped
    if parent and str(parent) not in shipped and not Path(str(parent)).is_absolute() and user_file:
        beside = Path(where).parent / str(parent)  # a file path is relative to the file extending it
        if beside.exists() or beside.suffix.lower() in (".yaml", ".yml"):
            parent = str(beside)
    waive_raw = raw.get("waive") or {}
    if not isinstance(waive_raw, dict):
        raise RulebookError(
            f"rulebook {where}: 'waive' must map rule ids to reasons, e.g. waive: {{HRV-040: \"why\"}}"
        )
    if parent:
        base = _resolve(parent, (*_seen, str(name_or_path)))
        rules = dict(base["rules"])
        for r in rules_raw:
            rid = r.get("id") if isinstance(r, dict) else None
            if not rid:
                raise RulebookError(f"rulebook {where}: every rule needs an 'id'")
            rules[rid] = _merge_rule(rules[rid], r, where) if rid in rules else r
        meta = {**base["meta"], **{k: v for k, v in raw.items() if k not in ("rules", "waive")}}
        if user_file:  # a changed rulebook must not pass for the one it extends
            meta["rulebook"] = Path(where).stem
        waive = {**base["waive"], **waive_raw}
    else:
        rules = {}
        for r in rules_raw:
            if not isinstance(r, dict) or not r.get("id"):
                raise RulebookError(f"rulebook {where}: every rule needs an 'id'")
            rules[r["id"]] = r
        meta = {k: v for k, v in raw.items() if k not in ("rules", "waive")}
        waive = dict(waive_raw)
    meta.setdefault("rulebook", raw.get("rulebook") or raw.get("name") or Path(where).stem)
    meta["path"] = where
    meta["extends"] = str(parent or "")
    if "rulebook" in raw or "name" in raw:
        meta["rulebook"] = raw.get("rulebook") or raw.get("name")
    return {"rules": rules, "meta": meta, "waive": waive}


def _build_rule(d: dict[str, Any], book: str, where: str) -> Rule:
    rid = d["id"]
    if not _ID_RE.match(str(rid)):
        raise RulebookError(f"rulebook {where}: rule id {rid!r} is not like 'HRV-010'")
    for key in ("title", "group", "citation"):
        if not d.get(key):
            raise RulebookError(f"rulebook {where}: rule {rid} needs a {key!r}")
    if d["group"] not in GROUPS:
        raise RulebookError(
            f"rulebook {where}: rule {rid} group {d['group']!r} is not one of {', '.join(GROUPS)}"
        )
    thresholds = dict(d.get("thresholds") or {})
    for k, v in thresholds.items():
        if not _unit_of(k):
            raise RulebookError(
                f"rulebook {where}: rule {rid} threshold {k!r} must end with a unit suffix "
                f"({', '.join(UNIT_SUFFIXES)})"
            )
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise RulebookError(f"rulebook {where}: rule {rid} threshold {k} = {v!r} is not a number")
    switches: dict[str, dict] = {}
    for k, v in (d.get("switches") or {}).items():
        sw = dict(v) if isinstance(v, dict) else {"value": v}
        choices = sw.get("choices")
        if choices is not None and sw.get("value") not in choices:
            raise RulebookError(
                f"rulebook {where}: rule {rid} switch {k} = {sw.get('value')!r} is not one of "
                f"{', '.join(map(str, choices))}"
            )
        switches[k] = sw
    return Rule(
        id=rid, title=str(d["title"]), group=d["group"], citation=str(d["citation"]),
        summary=str(d.get("summary") or ""), thresholds=thresholds,
        params=dict(d.get("params") or {}), switches=switches, tables=dict(d.get("tables") or {}),
        messages=dict(d.get("messages") or {}), notes=str(d.get("notes") or ""), rulebook=book,
    )


def load_rulebook(name_or_path: str | Path = "vestal") -> Rulebook:
    """Load a shipped rulebook by name or a user's rulebook file.

    Parameters
    ----------
    name_or_path : str or Path
        ``"vestal"``, ``"lockport"``, or the path of a YAML file. A user's file may say
        ``extends: vestal`` and then list only the rules it changes (thresholds, switches,
        params, citations, messages), add rules, and ``waive: {RULE-ID: "reason"}``.

    Raises
    ------
    RulebookError
        Unknown name (the message lists the available ones), malformed YAML, a threshold
        without a unit suffix, a switch value outside its choices, a waiver of an unknown rule.

    Examples
    --------
    >>> rb = load_rulebook("vestal")
    >>> rb["HRV-010"].t("max_grade_pct")
    25.0
    """
    resolved = _resolve(name_or_path)
    meta, where = resolved["meta"], resolved["meta"]["path"]
    book = str(meta.get("rulebook"))
    rules = {rid: _build_rule(d, book, where) for rid, d in sorted(resolved["rules"].items())}
    for rid, reason in resolved["waive"].items():
        if rid not in rules:
            raise RulebookError(f"rulebook {where}: cannot waive {rid}: no such rule")
        if not reason or not str(reason).strip():
            raise RulebookError(f"rulebook {where}: waiver of {rid} needs a reason")
        rules[rid].waived = str(reason).strip()
    return Rulebook(name=book, version=str(meta.get("version", "")), title=str(meta.get("title", "")),
                    rules=rules, source=str(meta.get("source", "")), path=where,
                    extends=meta.get("extends", ""))


# ------------------------------------------------------------------------------------------
# check registry

CheckFn = Callable[[Any, Rule], Iterable[Finding | gpd.GeoDataFrame]]
CHECKS: dict[str, CheckFn] = {}


def check(rule_id: str) -> Callable[[CheckFn], CheckFn]:
    """Register the check function of ``rule_id``.

    The function takes ``(ctx, rule)`` and returns findings (records or frames). ``ctx`` is
    the domain's context (layers, DEM, derived layers); the function must not read files or
    print, and must take every number from ``rule``.
    """

    def deco(fn: CheckFn) -> CheckFn:
        if rule_id in CHECKS and CHECKS[rule_id] is not fn:
            raise RuntimeError(f"two checks registered for {rule_id}")
        CHECKS[rule_id] = fn
        return fn

    return deco


def run_group(rulebook: Rulebook, group: str, ctx: Any) -> list[Finding | gpd.GeoDataFrame]:
    """Run every rule of ``group`` in ``rulebook`` against ``ctx``; collect all findings.

    Every rule runs (none stops the others). A rule with no registered check is an error
    naming the rule, since it would otherwise be silently skipped.
    """
    out: list[Finding | gpd.GeoDataFrame] = []
    for rule in rulebook.require_group(group):
        fn = CHECKS.get(rule.id)
        if fn is None:
            raise RulebookError(
                f"rule {rule.id} ({rule.title}) in rulebook {rulebook.name!r} has no check "
                f"function; register one with @geoconstraints.rules.check({rule.id!r})"
            )
        log.debug("running %s", rule.id)
        res = fn(ctx, rule)
        out.extend(res if res is not None else [])
    return out
