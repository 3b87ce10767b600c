"""report.html: a self-contained, printable compliance report (Jinja2 with autoescape).
"""

from __future__ import annotations

import logging
import math
import re
from typing import TYPE_CHECKING, Any, cast

import jinja2
import pandas as pd

from geoconstraints.errors import InputError
from geoconstraints.output.overview import overview_data_uri
from geoconstraints.output.styles import STATUS_COLORS, STATUS_LABELS
from geoconstraints.rulebook.findings import STATUS_RANK, STATUSES, worst_status
from geoconstraints.rulebook.model import Rule, unit_of
from geoconstraints.text import redact, redact_all

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from .result import Result

COMMAND_GROUPS: dict[str, tuple[str, ...]] = {
    "harvest": ("harvest",), "screen": ("flood",), "flood-site": ("flood",),
    "stormwater": ("stormwater",), "seqr": ("seqr",),
    "demo": ("harvest", "flood", "stormwater", "seqr"),
}
"""Rulebook groups each command runs (a group with findings is shown whatever the command)."""

UNIT_TEXT: dict[str, str] = {
    "ft": "ft", "pct": "%", "acres": "acres", "sqft": "sq ft", "in": "in", "sqin": "sq in",
    "sqin_per_sqft": "sq in per sq ft", "acres_per_mile": "acres per mile", "days": "days",
    "hours": "hours", "months": "months", "cords": "cords", "cuft": "cu ft", "bf": "board ft",
    "count": "", "usd": "USD", "lots": "lots", "units": "units", "ratio": "", "miles": "mi",
    "ft_per_in": "ft per in",
}
"""How a unit code of findings and threshold names is printed."""

MAX_PASS_ROWS = 50
"""``pass`` findings listed per rule in report.html; the others are counted in a note."""

MAX_FINDING_ROWS = 1_000
"""Other findings (violation, review, not evaluated, info) listed per rule in report.html, most
severe first; above it a note says how many more there are and that every finding is in
findings.geojson and results.gpkg (and the per-parcel outcome in parcels.csv)."""

MAX_PARCEL_ROWS = 5_000
"""Rows of the sortable parcels table in report.html; a larger screening lists its most severe
parcels (by ``worst_status``) and a note says how many more are in parcels.csv and results.gpkg."""

PARCEL_ID_COLUMNS = ("parcel_id", "feature_id", "id")
"""Columns of the parcels table that may hold the parcel id (first present wins)."""

# -- formatting --------------------------------------------------------------------------------
def format_value(value: Any, unit: str = "") -> str:
    """A number with its unit for the report (``412.35 ft``, ``27.3 %``, ``1,200 sq ft``).

    ``""`` for a missing value (None or NaN).
    """
    if value is None:
        return ""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(v):
        return ""
    if v == int(v) and abs(v) < 1e15:
        num = f"{int(v):,}"
    elif abs(v) >= 100:
        num = f"{v:,.1f}"
    else:
        num = f"{v:,.2f}".rstrip("0").rstrip(".")
    u = UNIT_TEXT.get(unit, unit)
    if not u:
        return num
    return f"{num} %" if u == "%" else f"{num} {u}"


def threshold_rows(rule: Rule) -> list[dict[str, str]]:
    """The rule's thresholds as ``{"name": "max run", "value": "200 ft"}`` rows."""
    rows = []
    for name, v in rule.thresholds.items():
        unit = unit_of(name)
        label = name[: -len(unit) - 1] if unit else name
        rows.append({"name": label.replace("_", " "), "value": format_value(v, unit)})
    return rows


# -- content -----------------------------------------------------------------------------------
def groups_run(result: Result) -> list[str]:
    """Rulebook groups shown in the report: the command's groups and those with findings."""
    groups = list(COMMAND_GROUPS.get(result.command, ()))
    if len(result.findings):
        for rid in result.findings["rule_id"].unique():
            if rid in result.rulebook:
                g = result.rulebook[rid].group
                if g not in groups:
                    groups.append(g)
    return groups


def _finding_rows(f: pd.DataFrame) -> list[dict[str, Any]]:
    """Template rows of findings (measured and threshold formatted with units)."""
    if not len(f):
        return []
    meas = [format_value(v, u) for v, u in zip(f["measured"], f["unit"])]
    thr = [format_value(v, u) for v, u in zip(f["threshold"], f["unit"])]
    out = pd.DataFrame({
        "status": f["status"].values, "subject_layer": f["subject_layer"].values,
        "subject_id": f["subject_id"].values, "measured": meas, "threshold": thr,
        "message": f["message"].values, "waived": f["waived"].values, "reading": f["reading"].values,
    })
    return cast("list[dict[str, Any]]", out.to_dict("records"))


def rule_sections(result: Result, findings: pd.DataFrame, *, max_pass_rows: int = MAX_PASS_ROWS,
                  max_rows: int = MAX_FINDING_ROWS, only_with_findings: bool = False) -> list[dict[str, Any]]:
    """One section per rule of the groups that ran, in rulebook order.

    Parameters
    ----------
    result : Result
    findings : DataFrame
        The findings to show (all, or one parcel's).
    max_pass_rows : int
        ``pass`` findings listed per rule; the rest are counted (they are all in
        ``findings.geojson`` and ``results.gpkg``).
    max_rows : int
        Other findings listed per rule, most severe first (the order of ``findings``); the
        rest are counted in ``hidden_other``.
    only_with_findings : bool
        Leave out rules with no finding (the one-parcel report).

    Returns
    -------
    list of dict
        ``id, title, citation, summary, status, counts, thresholds, readings, waived, rows,
        hidden_pass, shown_other, hidden_other``.
    """
    rb = result.rulebook
    rules: list[Rule] = [r for g in groups_run(result) for r in rb.group(g)]
    known = {r.id for r in rules}
    extra = [rid for rid in (findings["rule_id"].unique() if len(findings) else []) if rid not in known]
    by_rule = {rid: f for rid, f in findings.groupby("rule_id", sort=False)} if len(findings) else {}
    sections = []
    for rule in rules + [rb[rid] for rid in extra if rid in rb]:
        f = by_rule.get(rule.id, findings.iloc[0:0])
        if only_with_findings and not len(f):
            continue
        unwaived = f[f["waived"] == ""] if len(f) else f
        status = worst_status(unwaived["status"]) if len(unwaived) else ("waived" if len(f) else "")
        counts = {s: int((f["status"] == s).sum()) for s in STATUSES} if len(f) else {}
        passing = f[f["status"] == "pass"] if len(f) else f
        other = f[f["status"] != "pass"] if len(f) else f
        shown = pd.concat([other.iloc[:max_rows], passing.iloc[:max_pass_rows]]) if len(f) else f
        sections.append({
            "id": rule.id, "title": rule.title, "citation": rule.citation, "summary": rule.summary,
            "group": rule.group, "status": status, "status_label": STATUS_LABELS.get(status, status),
            "counts": counts, "thresholds": threshold_rows(rule),
            "readings": [{"name": k.replace("_", " "), "value": str(v.get("value"))}
                         for k, v in sorted(rule.switches.items())],
            "waived": rule.waived, "rows": _finding_rows(shown),
            "hidden_pass": max(0, len(passing) - max_pass_rows),
            "hidden_other": max(0, len(other) - max_rows), "shown_other": min(len(other), max_rows),
            "n": len(f),
        })
    return sections


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if math.isnan(v) else format_value(v)
    if isinstance(v, (list, tuple, set, dict)):
        return ", ".join(map(str, v)) if not isinstance(v, dict) else str(v)
    try:
        if pd.isna(v):
            return ""
    except (TypeError, ValueError):
        pass
    return str(v)


def table_rows(df: pd.DataFrame) -> tuple[list[str], list[dict[str, Any]]]:
    """Columns and rows (text cells with a numeric sort key) of a table, geometry left out."""
    geom = getattr(df, "_geometry_column_name", None)
    cols = [str(c) for c in df.columns if c != geom and c != "geometry"]
    rows = []
    for rec in df[cols].itertuples(index=False, name=None):
        cells = []
        for v in rec:
            num = None
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not (
                    isinstance(v, float) and math.isnan(v)):
                num = repr(float(v))
            cells.append({"text": _cell(v), "sort": num})
        rows.append({"cells": cells})
    return cols, rows


def parcel_table_rows(table: pd.DataFrame, max_rows: int = MAX_PARCEL_ROWS) -> pd.DataFrame:
    """The parcels listed in the report: all of them, or the ``max_rows`` most severe.

    With more than ``max_rows`` parcels the table is ordered by ``worst_status`` (violation
    first; table order within a status) and cut; without that column the first ``max_rows``
    are kept.
    """
    if len(table) <= max_rows:
        return table
    if "worst_status" in table.columns:
        rank = table["worst_status"].map(STATUS_RANK).fillna(len(STATUSES)).to_numpy()
        order = pd.Series(rank).sort_values(kind="stable").index[:max_rows]
        return table.iloc[order]
    return table.iloc[:max_rows]


def parcel_id_column(table: pd.DataFrame) -> str | None:
    """The id column of a parcels table (see :data:`PARCEL_ID_COLUMNS`)."""
    return next((c for c in PARCEL_ID_COLUMNS if c in table.columns), None)


def parcel_row(result: Result, parcel: str) -> pd.DataFrame:
    """The parcels-table row(s) of one parcel.

    Raises
    ------
    InputError
        No parcels table, or the id is not in it (the message lists a few ids).
    """
    table = result.tables.get("parcels")
    if table is None:
        ids = result.findings.loc[result.findings["subject_layer"] == "parcels", "subject_id"]
        if str(parcel) in set(ids):
            return pd.DataFrame({"parcel_id": [str(parcel)]})
        raise InputError(f"--parcel {parcel}: this run has no parcels table; the one-parcel report "
                         f"is for `screen` runs")
    col = parcel_id_column(table)
    if col is None:
        raise InputError(f"--parcel {parcel}: the parcels table has no column "
                         f"{' / '.join(PARCEL_ID_COLUMNS)} to find it by")
    hit = table[table[col].astype(str) == str(parcel)]
    if not len(hit):
        sample = ", ".join(map(str, table[col].astype(str).head(5)))
        raise InputError(f"--parcel {parcel}: no parcel with {col} {parcel!r} in the parcels layer "
                         f"(ids look like: {sample}). Check the id")
    return hit


def parcel_report_name(parcel: str) -> str:
    """File name of the one-parcel report: ``report_parcel_<id>.html`` with a file-safe id."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", str(parcel)).strip("._") or "parcel"
    return f"report_parcel_{safe[:80]}.html"


def parcel_findings(findings: pd.DataFrame, parcel: str) -> pd.DataFrame:
    """The findings whose subject is parcel ``parcel``."""
    if not len(findings):
        return findings
    return findings[(findings["subject_id"] == str(parcel))
                    & findings["subject_layer"].isin(["parcels", ""])]


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("geoconstraints.output", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_report(result: Result, *, parcel: str | None = None, max_pass_rows: int = MAX_PASS_ROWS,
                  max_finding_rows: int = MAX_FINDING_ROWS, max_parcel_rows: int = MAX_PARCEL_ROWS,
                  overview: bool = True) -> str:
    """Render ``report.html`` for ``result``.

    Parameters
    ----------
    result : Result
    parcel : str, optional
        Make the one-parcel report of this parcel id instead: its row of the parcels table,
        its findings and a map zoomed to it, nothing about other parcels.
    max_pass_rows : int
        ``pass`` findings listed per rule (the rest are counted).
    max_finding_rows : int
        Other findings listed per rule, most severe first; a note counts the rest.
    max_parcel_rows : int
        Rows of the parcels table; a larger screening lists its most severe parcels and a
        note counts the rest. Nothing is dropped silently: each note says how many were left
        out and that every finding is in findings.geojson / results.gpkg and every parcel in
        parcels.csv / results.gpkg.
    overview : bool
        Draw the overview map (matplotlib); ``False`` leaves it out (faster).

    Returns
    -------
    str
        A self-contained HTML document: no network access needed to view or print it.

    Raises
    ------
    InputError
        ``parcel`` is not in the parcels table.
    """

    findings = result.findings
    parcel_cols: list[str] = []
    parcel_rows: list[dict[str, Any]] = []
    if parcel is not None:
        parcel = str(parcel)
        row = parcel_row(result, parcel)
        parcel_cols, parcel_rows = table_rows(row)
        findings = parcel_findings(findings, parcel)
    n_parcels = 0
    if parcel is None and result.tables.get("parcels") is not None:
        table = result.tables["parcels"]
        n_parcels = len(table)
        parcel_cols, parcel_rows = table_rows(parcel_table_rows(table, max_parcel_rows))
    counts = {s: int((findings["status"] == s).sum()) if len(findings) else 0 for s in STATUSES}
    sections = rule_sections(result, findings, max_pass_rows=max_pass_rows, max_rows=max_finding_rows,
                             only_with_findings=parcel is not None)
    image = ""
    map_error = ""
    if overview:
        try:
            image = overview_data_uri(result, parcel=parcel)
        except Exception as exc:  # a drawing bug must not withhold the findings
            log.warning("overview map not drawn: %s", exc, exc_info=True)
            map_error = f"The overview map could not be drawn ({type(exc).__name__}: {exc}); see map.html."
    prov = redact_all(result.provenance())
    notes = [] if parcel is not None else list(prov.get("warnings", [])) + list(prov.get("notes", []))
    if map_error:
        notes.append(redact(map_error))
    options = sorted(prov.get("options", {}).items())
    return _env().get_template("report.html.j2").render(
        prov=prov, counts=counts, statuses=STATUSES, status_labels=STATUS_LABELS,
        status_colors=STATUS_COLORS, sections=sections, parcel=parcel, parcel_cols=parcel_cols,
        parcel_rows=parcel_rows, is_screen=result.tables.get("parcels") is not None,
        image=image, notes=notes, options=options, rulebook_title=result.rulebook.title,
        n_findings=len(findings), n_parcels=n_parcels,
        parcels_by_severity=len(parcel_rows) < n_parcels and "worst_status" in parcel_cols,
    )

