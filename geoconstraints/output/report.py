"""report.html and report.pdf: a self-contained, printable compliance report (Jinja2 with autoescape).

:func:`render_report` gives the HTML (the same document prints from a browser and is the source of
the PDF); :func:`write_report_pdf` writes ``report.pdf`` with WeasyPrint (US Letter, page numbers);
with ``parcel=`` both give the one-page handout of one parcel. A screening of a whole county lists
its totals, the most severe parcels (the top N, saying which and how many are left out), the SFHA
share histogram and the overview map; every parcel is in parcels.csv / results.gpkg.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import jinja2
import markupsafe
import numpy as np
import pandas as pd

from geoconstraints.errors import InputError, MissingToolError
from geoconstraints.output import child, plots
from geoconstraints.output.files import atomic_path, distinct_file_parts, id_file_part
from geoconstraints.output.overview import overview_data_uri
from geoconstraints.output.provenance import layers_not_read, rulebook_files
from geoconstraints.output.report_table import (
    PARCEL_ID_COLUMNS,
    STATUS_SHORT,
    ParcelTable,
    parcel_card,
    parcel_id_column,
    parcel_table,
)
from geoconstraints.output.selection import ALL_OUTPUTS, Holders
from geoconstraints.output.styles import STATUS_COLORS, STATUS_LABELS
from geoconstraints.result import status_column
from geoconstraints.rulebook.findings import (
    STATUS_RANK,
    STATUSES,
    findings_scope,
    in_scope,
    scope_statuses,
    worst_status,
)
from geoconstraints.rulebook.model import Rule, unit_of
from geoconstraints.text import and_list, redact, redact_all, visible_text

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

MAX_PASS_ROWS = 10
"""``pass`` findings listed per rule in the report; the others are counted in a note."""

MAX_FINDING_ROWS = 50
"""Other findings (violation, review, not evaluated, info) listed per rule in the report, most
severe first; above it a note says how many more there are and that every finding is in
findings.geojson and results.gpkg (and the per-parcel outcome in parcels.csv). With 50 a county
screening's rules take a few printed pages, not hundreds."""

MAX_PARCEL_ROWS = 100
"""Rows of the parcels table in the report: the most severe parcels (by ``worst_status``, then
SFHA share); a note says which and how many more are in parcels.csv and results.gpkg."""

HANDOUT_MAX_ROWS = (14, 9, 6, 3)
"""Findings listed on the one-parcel handout at each fitting step (see :func:`write_report_pdf`)."""

HANDOUT_MESSAGE_CHARS = (0, 0, 260, 160)
"""Longest message on the handout at each fitting step (0: whole)."""

PDF_HINT = ("pip install weasyprint (a dependency of geoconstraints) and the pango library "
            "(Debian/Ubuntu: apt-get install libpango-1.0-0 libpangoft2-1.0-0, or bash scripts/pdf_deps.sh)")
"""How to get what report.pdf needs."""


# -- formatting --------------------------------------------------------------------------------
def format_value(value: Any, unit: str = "") -> str:
    """A number with its unit for the report (``412.3 ft``, ``27.34 %``, ``1,200 sq ft``).

    ``""`` for a missing value (None or NaN). Under 100, two decimals or three significant
    figures, whichever shows more, so a small number never rounds to 0 or to the next integer.

    Examples
    --------
    >>> format_value(412.345, "ft"), format_value(0.997), format_value(0.0004, "acres")
    ('412.3 ft', '0.997', '0.0004 acres')
    """
    if value is None:
        return ""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(v):
        return ""
    if math.isinf(v):
        num = "∞" if v > 0 else "-∞"
    elif v == int(v) and abs(v) < 1e15:
        num = f"{int(v):,}"
    elif abs(v) >= 100:
        num = f"{v:,.1f}"
    else:  # two decimals, or three significant figures when that shows more: 0.997, never 1; 0.0004, never 0
        decimals = max(2, 2 - math.floor(math.log10(abs(v))))
        num = f"{v:,.{decimals}f}".rstrip("0").rstrip(".")
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
    rule_ids = [*result.findings["rule_id"].unique(), *result.omitted["rule_id"].unique()]
    if rule_ids:
        for rid in rule_ids:
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


def _omitted_by_rule(result: Result, omitted: pd.DataFrame | None) -> dict[str, dict[str, Any]]:
    """Per rule id: ``counts`` (status -> n), ``unwaived`` (statuses of unwaived ones), ``text``
    (``"8,645 pass and 2,701 info"``) and ``column`` (the parcels table's status column of the rule, or "")
    of the findings a result left out (:attr:`Result.omitted`)."""
    if omitted is None or not len(omitted):
        return {}
    table = result.tables.get("parcels")
    out: dict[str, dict[str, Any]] = {}
    for rid, o in omitted.groupby("rule_id", sort=False):
        counts = {str(k): int(v) for k, v in o.groupby("status")["n"].sum().items()}
        col = status_column(str(rid))
        out[str(rid)] = {"counts": counts, "unwaived": sorted(set(o.loc[o["waived"] == "", "status"])),
                         "text": " and ".join(f"{counts[st]:,} {st}" for st in STATUSES if counts.get(st)),
                         "column": col if table is not None and col in table.columns else ""}
    return out


def rule_sections(result: Result, findings: pd.DataFrame, *, max_pass_rows: int = MAX_PASS_ROWS,
                  max_rows: int = MAX_FINDING_ROWS, only_with_findings: bool = False,
                  omitted: pd.DataFrame | None = None) -> list[dict[str, Any]]:
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
    omitted : DataFrame, optional
        The findings ``result`` left out of memory (:attr:`Result.omitted`, with ``findings``
        all of the kept ones): counted in each rule's ``counts``, ``status`` and ``n``, and
        said in ``omitted_n``, ``omitted_text`` and ``omitted_column``.

    Returns
    -------
    list of dict
        ``id, title, citation, summary, status, counts, thresholds, readings, waived, rows,
        hidden_pass, shown_other, hidden_other, n, omitted_n, omitted_text, omitted_column``.
    """
    rb = result.rulebook
    rules: list[Rule] = [r for g in groups_run(result) for r in rb.group(g)]
    known = {r.id for r in rules}
    left = _omitted_by_rule(result, omitted)
    extra = [rid for rid in dict.fromkeys([*(findings["rule_id"].unique() if len(findings) else []), *left])
             if rid not in known]
    # positions per rule, in the order of ``findings``; only the rows listed are taken from the frame
    by_rule = findings.groupby("rule_id", sort=False).indices if len(findings) else {}
    status_of = findings["status"].to_numpy(dtype=object)
    waived_of = findings["waived"].to_numpy(dtype=object)
    sections = []
    for rule in rules + [rb[rid] for rid in extra if rid in rb]:
        f = np.asarray(by_rule.get(rule.id, np.zeros(0, dtype=np.int64)))
        o = left.get(rule.id, {"counts": {}, "unwaived": [], "text": "", "column": ""})
        n_left = sum(o["counts"].values())
        if only_with_findings and not len(f) and not n_left:
            continue
        st = status_of[f]
        unwaived = [*st[waived_of[f] == ""], *o["unwaived"]]
        status = worst_status(unwaived) if len(unwaived) else ("waived" if len(f) or n_left else "")
        counts = {s: int((st == s).sum()) + o["counts"].get(s, 0) for s in STATUSES} if len(f) or n_left else {}
        passing, other = f[st == "pass"], f[st != "pass"]
        shown = findings.iloc[np.concatenate([other[:max_rows], passing[:max_pass_rows]])]
        sections.append({
            "id": rule.id, "title": rule.title, "citation": rule.citation, "summary": rule.summary,
            "group": rule.group, "status": status, "status_label": STATUS_LABELS.get(status, status),
            "counts": counts, "thresholds": threshold_rows(rule),
            "readings": [{"name": k.replace("_", " "), "value": str(v.get("value"))}
                         for k, v in sorted(rule.switches.items())],
            "waived": rule.waived, "rows": _finding_rows(shown),
            "hidden_pass": max(0, len(passing) - max_pass_rows),
            "hidden_other": max(0, len(other) - max_rows), "shown_other": min(len(other), max_rows),
            "n": len(f) + n_left, "omitted_n": n_left, "omitted_text": o["text"], "omitted_column": o["column"],
        })
    return sections


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


def parcel_report_name(parcel: str, among: Iterable[Any] | None = None) -> str:
    """File name of the one-parcel report: ``report_parcel_<id>.html`` with a file-safe id (:func:`id_file_part`).

    ``among``: the ids of every parcel whose handout goes into the same folder (a set holds one
    handout; a notebook may write many): the name is then distinct from theirs under case folding
    (:func:`~geoconstraints.output.files.distinct_file_parts`), so the handouts of ``A-1`` and ``a-1``
    are two files on a case-insensitive file system too.

    Examples
    --------
    >>> parcel_report_name("A-1"), parcel_report_name("A-1", among=["A-1", "a-1"])
    ('report_parcel_A-1.html', 'report_parcel_A-1-bc4e7be9.html')
    """
    part = id_file_part(parcel) if among is None else distinct_file_parts([*map(str, among), str(parcel)])[str(parcel)]
    return f"report_parcel_{part}.html"


def parcel_findings(findings: pd.DataFrame, parcel: str) -> pd.DataFrame:
    """The findings whose subject is parcel ``parcel``."""
    if not len(findings):
        return findings
    return findings[(findings["subject_id"] == str(parcel))
                    & findings["subject_layer"].isin(["parcels", ""])]


def _shown(value: Any) -> Any:
    """The templates' finalize: each value a ``{{ }}`` outputs, with its invisible characters
    (bidirectional controls, zero-width spaces) visible as ``<U+202E>``
    (:func:`~geoconstraints.text.visible_text`); autoescape then escapes it, ``<`` of the visible
    form with the rest. A macro's output (Markup) is already made of such values."""
    return value if isinstance(value, markupsafe.Markup) else visible_text(value)


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("geoconstraints.output", "templates"),
        autoescape=True,
        finalize=_shown,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


# -- plots --------------------------------------------------------------------------------------
PLOT_PLACES: tuple[tuple[str, str, str], ...] = (
    ("profile_", "HRV-010", ("Profile of {what}: elevation from the DEM against distance along the line, shaded by "
                             "grade class; runs over HRV-010's limit hatched in red; water bars (HRV-030) marked.")),
    ("disturbance_timeline", "SWP-005", ("Soil disturbed at one time over the phasing plan; dashed: SWP-005's limit; "
                                         "red: the peak.")),
    ("sfha_share", "parcels", "Parcels by the share of their area in the special flood hazard area."),
)
"""(plot name prefix, where it goes: a rule id or ``parcels``, caption) of the plots of :mod:`plots`;
``{what}`` is the plot's :attr:`~geoconstraints.output.plots.Plot.subject` (the road's own id, never
the file name, which may carry a hash of it)."""


def report_figures(result: Result) -> tuple[dict[str, list[dict[str, str]]], str]:
    """The PNG plots of :func:`geoconstraints.output.plots.drawn_plots` by the section they illustrate.

    Returns
    -------
    (dict, str)
        ``{"HRV-010": [{"src", "caption", "name"}], "SWP-005": [...], "parcels": [...]}`` (a plot
        whose rule is not in the report goes under ``"other"``), and a note when drawing failed.
        A caption names the feature drawn by its id (``Profile of haul road H-1: ...``), escaped
        with the page; ``name`` is the file's name in plots/.
    """
    try:
        drawn = plots.drawn_plots(result)
    except Exception as exc:  # a drawing bug must not withhold the findings
        log.warning("plots not drawn: %s", exc, exc_info=True)
        return {}, f"The plots could not be drawn ({type(exc).__name__}: {exc}); see plots/ if written."
    out: dict[str, list[dict[str, str]]] = {}
    for plot in drawn:
        src = plots.data_uri(plot.png)
        for prefix, place, caption in PLOT_PLACES:
            if plot.name.startswith(prefix):
                text = caption.format(what=plot.subject) if "{what}" in caption else caption
                out.setdefault(place, []).append({"src": src, "name": plot.name, "caption": text})
                break
        else:
            out.setdefault("other", []).append({"src": src, "name": plot.name, "caption": plot.subject or plot.name})
    return out, ""


# -- the report ---------------------------------------------------------------------------------
def status_counts(findings: pd.DataFrame) -> dict[str, int]:
    """Findings per status (every status, 0 included): the numbers the report and the map show."""
    return {s: int((findings["status"] == s).sum()) if len(findings) else 0 for s in STATUSES}


def _parcel_summary(table: pd.DataFrame | None) -> dict[str, int]:
    """Parcels per worst status (``""`` counted as not evaluated)."""
    if table is None or "worst_status" not in table.columns:
        return {}
    ws = table["worst_status"]
    counts = {str(k): int(v) for k, v in ws.dropna().value_counts().items()}  # one pass, not one per status
    counts["not_evaluated"] = counts.get("not_evaluated", 0) + counts.pop("", 0) + int(ws.isna().sum())
    return {s: counts.get(s, 0) for s in STATUSES}


def render_report(result: Result, *, parcel: str | None = None, max_pass_rows: int = MAX_PASS_ROWS,
                  max_finding_rows: int = MAX_FINDING_ROWS, max_parcel_rows: int = MAX_PARCEL_ROWS,
                  overview: bool = True, figures: bool = True, handout_step: int = 0,
                  outputs: Iterable[str] = ALL_OUTPUTS, scope: str | None = None) -> str:
    """Render ``report.html`` for ``result``.

    Parameters
    ----------
    result : Result
    parcel : str, optional
        Make the one-page handout of this parcel id instead: its row of the parcels table,
        its findings and a map zoomed to it, nothing about other parcels.
    max_pass_rows : int
        ``pass`` findings listed per rule (the rest are counted).
    max_finding_rows : int
        Other findings listed per rule, most severe first; a note counts the rest.
    max_parcel_rows : int
        Rows of the parcels table: the most severe parcels; a note says which and how many
        were left out. Nothing is dropped silently: the notes say which files of the set hold
        every finding and every parcel (``outputs``).
    overview : bool
        Draw the overview map (matplotlib); ``False`` leaves it out (faster).
    figures : bool
        Embed the plots of :mod:`geoconstraints.output.plots` (road profiles, phasing timeline,
        SFHA share histogram) in the sections they illustrate.
    handout_step : int
        For ``parcel``: how hard to squeeze the handout onto one page (0-3: fewer findings
        listed, a smaller map, shorter messages); :func:`write_report_pdf` raises it as needed.
    outputs : iterable of str
        The outputs of the set the report belongs to (:mod:`~geoconstraints.output.selection`;
        default every one): its notes name only those files.
    scope : {"person", "all"}, optional
        For ``parcel``: the findings scope of the set's findings files (default the command's,
        :func:`~geoconstraints.rulebook.findings.findings_scope`): the handout's note on the findings
        left out for room names those files only for the findings they hold
        (:func:`handout_left_out`). The report itself is made from the findings as written
        (:meth:`Result.as_written <geoconstraints.result.Result.as_written>`).

    Returns
    -------
    str
        A self-contained HTML document: no network access needed to view or print it.

    Raises
    ------
    InputError
        ``parcel`` is not in the parcels table.
    """
    if parcel is not None:
        return _render_handout(result, str(parcel), overview=overview, step=handout_step, outputs=outputs,
                               scope=scope)
    findings = result.findings
    table = result.tables.get("parcels")
    ptable = parcel_table(table, max_parcel_rows) if table is not None and len(table) else None
    sections = rule_sections(result, findings, max_pass_rows=max_pass_rows, max_rows=max_finding_rows,
                             omitted=result.omitted)
    figs, fig_note = report_figures(result) if figures else ({}, "")
    image, map_error = _overview(result, None, overview)
    where = Holders(frozenset(outputs))
    prov = redact_all(result.provenance())
    notes = list(prov.get("warnings", [])) + list(prov.get("notes", []))
    notes += [redact(n) for n in (map_error, fig_note) if n]
    # the provenance section lists what provenance.json lists: the rulebook file(s) with the SHA-256 they
    # had when loaded, and the layers of the input GeoPackages present but not read
    not_read: dict[str, list[str]] = {}
    for layer in redact_all(layers_not_read(result)):
        not_read.setdefault(layer["file"], []).append(layer["layer"])
    return _env().get_template("report.html.j2").render(
        prov=prov, rulebook_files=redact_all(rulebook_files(result.rulebook)), not_read=not_read,
        counts=result.counts(), statuses=STATUSES, status_labels=STATUS_LABELS,
        status_colors=STATUS_COLORS, status_short=STATUS_SHORT, sections=sections, parcel=None,
        ptable=ptable, parcel_summary=_parcel_summary(table), is_screen=table is not None,
        image=image, figures=figs, notes=notes, options=sorted(prov.get("options", {}).items()),
        rulebook_title=result.rulebook.title, n_findings=result.n_findings, omitted=result.omitted_text(where.parcels),
        scope=result.scope, where=where,
    )


def _overview(result: Result, parcel: str | None, overview: bool, **kwargs: Any) -> tuple[str, str]:
    """(data URI of the overview map or "", a note when it could not be drawn)."""
    if not overview:
        return "", ""
    try:
        return overview_data_uri(result, parcel=parcel, **kwargs), ""
    except Exception as exc:  # a drawing bug must not withhold the findings
        log.warning("overview map not drawn: %s", exc, exc_info=True)
        return "", f"The overview map could not be drawn ({type(exc).__name__}: {exc}); see map.html."


def _handout_rows(findings: pd.DataFrame, step: int) -> tuple[list[dict[str, Any]], pd.DataFrame, list[str]]:
    """(rows of the non-pass findings listed, the non-pass findings left out, rule ids that pass) of one parcel."""
    other = findings[findings["status"] != "pass"] if len(findings) else findings
    if len(other):
        rank = other["status"].map(STATUS_RANK).fillna(len(STATUSES)).to_numpy()
        other = other.iloc[pd.Series(rank).sort_values(kind="stable").index]
    limit = HANDOUT_MAX_ROWS[min(step, len(HANDOUT_MAX_ROWS) - 1)]
    rows = _finding_rows(other.iloc[:limit])
    chars = HANDOUT_MESSAGE_CHARS[min(step, len(HANDOUT_MESSAGE_CHARS) - 1)]
    rule_ids = list(other["rule_id"].iloc[:limit]) if len(other) else []
    for r, rid in zip(rows, rule_ids):
        r["rule_id"] = rid
        if chars and len(str(r["message"])) > chars:
            r["message"] = str(r["message"])[: chars - 1].rstrip() + "…"
    passing = sorted(set(findings.loc[findings["status"] == "pass", "rule_id"])) if len(findings) else []
    return rows, other.iloc[limit:], passing


def handout_left_out(result: Result, left: pd.DataFrame, scope: str | None = None,
                     outputs: Iterable[str] = ALL_OUTPUTS) -> dict[str, Any]:
    """What the handout's notes say of the findings ``left`` out of it for room, split by where they are.

    The findings files of the set (findings.geojson, results.gpkg, findings.csv, findings.parquet,
    as far as ``outputs`` has them) hold the findings of ``scope`` only (default: the command's,
    :func:`~geoconstraints.rulebook.findings.findings_scope`): with ``person`` (a screening's
    default) a parcel's ``info`` findings are in none of them, only each rule's status in the
    parcels table's ``status_<rule>`` columns. Neither report.pdf nor report.html is named: they
    list a limited number of findings per rule.

    Returns
    -------
    dict
        ``held`` (how many are in the findings files), ``held_in`` (those files, in words),
        ``elsewhere`` (how many are in none of them), ``elsewhere_text`` (``"2 info"``),
        ``columns`` (the parcels table's status columns of their rules, ``""`` when the table lacks
        one), ``parcels_in`` (the files holding the parcels table) and ``scope``.
    """
    scope = findings_scope(result.command, scope)
    where = Holders(frozenset(outputs))
    mask = in_scope(left["status"].to_numpy(), scope, left["subject_id"].to_numpy()) if len(left) else np.zeros(0, bool)
    held, rest = left[mask], left[~mask]
    table = result.tables.get("parcels")
    cols = [status_column(str(r)) for r in dict.fromkeys(rest["rule_id"])] if len(rest) else []
    has_cols = bool(cols) and table is not None and all(c in table.columns for c in cols)
    counts = rest["status"].value_counts() if len(rest) else pd.Series(dtype="int64")
    return {"held": len(held), "held_in": where.findings, "elsewhere": len(rest),
            "elsewhere_text": " and ".join(f"{int(counts[s]):,} {s.replace('_', ' ')}" for s in STATUSES
                                           if s in counts.index),
            "columns": ", ".join(cols) if has_cols else "", "parcels_in": where.parcels, "scope": scope}


def handout_not_kept(result: Result, row: pd.DataFrame, findings: pd.DataFrame,
                     outputs: Iterable[str] = ALL_OUTPUTS) -> dict[str, Any]:
    """The outcomes of the parcel's rules whose findings the run did not keep in memory, from its
    row of the parcels table.

    A screening made with ``findings="person"`` (``screen_parcels``' default) keeps only the
    findings that need a person (:func:`~geoconstraints.result.split_scope`): the parcel's pass and
    info findings are counted in :attr:`Result.omitted <geoconstraints.result.Result.omitted>` for
    the whole run, never per parcel, so the handout can neither list nor count them. The parcels
    table still holds each rule's most severe status for the parcel (``status_<rule>``): a rule whose
    column holds a status the run did not keep, and with no finding of the parcel in memory, is
    named by that status. ``row``: :func:`parcel_row`; ``findings``: :func:`parcel_findings`.

    Returns
    -------
    dict
        ``rules`` (status -> rule ids, most severe status first; empty when the run kept every
        finding), ``n`` (how many rules), ``columns`` (their status columns, in words), ``parcels_in``
        (the files of the set holding the parcels table) and ``scope`` (the run's findings scope).
    """
    kept = scope_statuses(result.scope)
    out: dict[str, Any] = {"rules": {}, "n": 0, "columns": "", "parcels_in": Holders(frozenset(outputs)).parcels,
                           "scope": result.scope}
    if kept is None:
        return out
    in_memory = set(findings["rule_id"].astype(str)) if len(findings) else set()
    found: dict[str, list[str]] = {}
    for rule in result.rulebook:
        col = status_column(rule.id)
        if col not in row.columns or rule.id in in_memory:
            continue
        values = [v for v in row[col] if isinstance(v, str) and v in STATUS_RANK]
        status = worst_status(values) if values else ""
        if status and status not in kept:
            found.setdefault(status, []).append(rule.id)
    out["rules"] = {s: found[s] for s in STATUSES if s in found}
    cols = [status_column(rid) for rids in out["rules"].values() for rid in rids]  # in the order named
    out["n"] = len(cols)
    out["columns"] = and_list(cols)
    return out


def _render_handout(result: Result, parcel: str, *, overview: bool, step: int,
                    outputs: Iterable[str] = ALL_OUTPUTS, scope: str | None = None) -> str:
    """The one-page handout of one parcel (see :func:`render_report`)."""
    row = parcel_row(result, parcel)
    findings = parcel_findings(result.findings, parcel)
    rows, left, passing = _handout_rows(findings, step)
    size = {0: (7.4, 3.5), 1: (7.4, 3.0), 2: (7.4, 2.5)}.get(step)
    image, _ = _overview(result, parcel, overview and size is not None,
                         **({"width_in": size[0], "height_in": size[1], "dpi": 130} if size else {}))
    rb = result.rulebook
    cites = {rid: rb[rid].citation for rid in {r["rule_id"] for r in rows} if rid in rb}
    titles = {rid: rb[rid].title for rid in cites}
    prov = redact_all(result.provenance())
    # a result that kept only the findings needing a person: the other rules' outcomes from the parcels table
    not_kept = handout_not_kept(result, row, findings, outputs)
    passing = sorted({*passing, *not_kept["rules"].get("pass", [])})
    statuses = [*findings["status"], *not_kept["rules"]] if len(findings) else list(not_kept["rules"])
    return _env().get_template("handout.html.j2").render(
        prov=prov, parcel=parcel, card=parcel_card(row), rows=rows, passing=passing,
        more=handout_left_out(result, left, scope, outputs), not_kept=not_kept,
        counts=status_counts(findings), statuses=STATUSES, status_labels=STATUS_LABELS,
        status_colors=STATUS_COLORS, image=image, cites=cites, titles=titles, step=step,
        rulebook_title=rb.title, worst=worst_status(statuses) if statuses else "",
        where=Holders(frozenset(outputs)),
    )


# -- PDF ----------------------------------------------------------------------------------------
def pdf_tool_missing(kind: str, text: str) -> MissingToolError:
    """The error saying WeasyPrint or pango is missing (``kind``: the import error's type, ``text``
    its first line), in the parent or in the child process laying out the PDF."""
    return MissingToolError(f"report.pdf needs WeasyPrint and pango ({kind}: {text}): {PDF_HINT}")


def html_to_pdf(page: str) -> Any:
    """Lay out an HTML page for print with WeasyPrint; returns the WeasyPrint ``Document``.

    Raises
    ------
    MissingToolError
        WeasyPrint or the pango library it needs is missing (the message says how to install them).
    """
    weasyprint, missing = child.import_weasyprint()
    if missing is not None:  # (None, what it says) where it cannot import
        raise pdf_tool_missing(*missing["missing"])
    return weasyprint.HTML(string=page).render()


def write_report_pdf(result: Result, path: str | os.PathLike[str], *, parcel: str | None = None,
                     page: str | None = None, handout_step: int = 0, **kwargs: Any) -> Path:
    """Write ``report.pdf`` (or, with ``parcel``, the one-page handout of that parcel) atomically.

    The PDF is the report's HTML laid out by WeasyPrint for US Letter, with page numbers
    ("page 3 of 7") in the footer. A handout that runs over one page is laid out again with
    fewer findings listed, a smaller map and shorter messages until it fits (the findings left
    out are counted on the page, which says which files of the set hold them: :func:`handout_left_out`).

    Parameters
    ----------
    result : Result
    path : path
        The file to write (``report.pdf``, ``report_parcel_<id>.pdf``).
    parcel : str, optional
        The parcel of the handout.
    page : str, optional
        report.html already rendered by :func:`render_report` (not for a handout): laid out as
        it is, so the overview map and plots are not drawn twice.
    handout_step : int
        The first shortening of the handout to try (0: none; later steps list fewer findings).
    **kwargs
        Passed to :func:`render_report` (``max_parcel_rows``, ``max_finding_rows`` ...).

    Returns
    -------
    Path

    Raises
    ------
    MissingToolError
        WeasyPrint or pango is missing.
    InputError
        ``parcel`` is not in the parcels table.
    """
    target = Path(path)
    if parcel is None:
        doc = html_to_pdf(page if page is not None else render_report(result, **kwargs))
    else:
        for step in range(min(handout_step, len(HANDOUT_MAX_ROWS) - 1), len(HANDOUT_MAX_ROWS)):
            doc = html_to_pdf(render_report(result, parcel=str(parcel), handout_step=step, **kwargs))
            if len(doc.pages) == 1:
                break
        if len(doc.pages) > 1:
            log.warning("the handout of parcel %s takes %d pages", parcel, len(doc.pages))
    with atomic_path(target) as tmp:
        doc.write_pdf(tmp)
    return target


def parcel_pdf_name(parcel: str, among: Iterable[Any] | None = None) -> str:
    """File name of the one-parcel handout PDF: ``report_parcel_<id>.pdf`` (``among``: see :func:`parcel_report_name`)."""
    return parcel_report_name(parcel, among)[: -len(".html")] + ".pdf"


__all__ = ["MAX_FINDING_ROWS", "MAX_PARCEL_ROWS", "MAX_PASS_ROWS", "ParcelTable", "format_value", "html_to_pdf",
           "parcel_pdf_name", "parcel_report_name", "pdf_tool_missing", "render_report", "write_report_pdf"]
