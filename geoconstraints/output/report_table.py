"""The parcels table of report.html / report.pdf: readable headers, severity order, honest numbers.

A screening's ``parcels`` table has one row per parcel and columns named for machines
(``sfha_share``, ``bfe_note`` ...). :func:`parcel_table` turns the rows the report lists into a
table for people:

* headers with units (``sfha_acres`` -> "SFHA (acres)", ``sfha_share`` -> "SFHA share (%)");
* the most severe parcels first (``worst_status``, then the most rules at that status, the largest
  floodway share, the largest SFHA share: :func:`severity_order`);
* numbers by what they are (:func:`number_format`): elevations and lengths (``*_ft``) at 0.01 ft
  (:func:`feet_text`: a BFE of 846.51 shows as 846.51, never as 847), counts as integers, the rest
  (shares, acres, sq ft) to three significant figures (:func:`significant`): a share of 0.997
  shows as 99.7 %, never as 100, 0.0004 as 0.04 %, never as 0, and 0.0043 acres as 0.0043;
* no column that is empty in every listed row; a column with one value in every listed row is
  said once above the table; a long text repeated across rows (a note) becomes a numbered
  reference with a legend of notes under the table;
* the parcel id and ``worst_status`` first, then the per-rule status columns, so the columns
  that matter are never the ones a letter-size page cuts: columns beyond the printable width
  are marked ``print=False`` and named in a note (they are all in parcels.csv).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from geoconstraints.output.styles import STATUS_LABELS
from geoconstraints.result import STATUS_COLUMN_PREFIX
from geoconstraints.rulebook.findings import STATUS_RANK, STATUSES, status_ranks

PARCEL_ID_COLUMNS = ("parcel_id", "feature_id", "id")
"""Columns of the parcels table that may hold the parcel id (first present wins)."""

SIG_DIGITS = 3
"""Significant figures of the numbers in the parcels table that are not lengths or counts."""

FT_DECIMALS = 2
"""Decimals of an elevation or length (a ``*_ft`` column) in the parcels table: 0.01 ft, the
precision FLD-003 compares elevations at and parcels.csv keeps."""

UNIT_WORDS: dict[str, tuple[str, float]] = {
    "acres": ("acres", 1.0), "sqft": ("sq ft", 1.0), "ft": ("ft", 1.0), "pct": ("%", 1.0),
    "share": ("%", 100.0), "miles": ("mi", 1.0), "in": ("in", 1.0), "days": ("days", 1.0),
}
"""Name token -> (unit shown in the header, factor applied to the value). A share (0-1) is shown in percent."""

WORDS: dict[str, str] = {
    "sfha": "SFHA", "bfe": "BFE", "id": "ID", "fld": "FLD", "prelim": "preliminary", "nfhl": "NFHL",
    "dfirm": "DFIRM", "swp": "SWP", "hrv": "HRV", "seqr": "SEQR", "row": "ROW", "nhd": "NHD",
}
"""Name tokens written otherwise in a header (abbreviations in capitals)."""

STATUS_SHORT: dict[str, str] = {
    "violation": "V", "review": "R", "not_evaluated": "NE", "info": "i", "pass": "P",
}
"""Short status text of the per-rule status columns (explained in the key above the table)."""

NOTE_MIN_CHARS = 40
"""A text column named ``*note`` / ``*notes``, or whose longest value in the listed rows is at least
this long and whose values repeat (at most half as many distinct values as rows), is a column of
notes: its cells become numbered references to a legend under the table, each text said once."""

PRINT_WIDTH_IN = 7.4
"""Width the printed table may take (US Letter, 0.5 in margins, less a little for borders)."""

CHAR_IN = 0.058
"""Width of an average character of the printed table's font (7 pt DejaVu Sans Condensed), inches."""

CELL_PAD_IN = 0.09
"""Padding and borders of a printed cell, inches."""


# -- numbers ------------------------------------------------------------------------------------
def significant(value: float, digits: int = SIG_DIGITS, *, upper: float | None = None) -> str:
    """``value`` to ``digits`` significant figures, with thousands separators.

    A number that is not zero never shows as zero, and a number under ``upper`` (100 for a
    percentage) never shows as ``upper``: more digits are given until it does not.

    Parameters
    ----------
    value : float
    digits : int
        Significant figures (at least 1).
    upper : float, optional
        A bound the value must not appear to reach (the 100 of a share in percent).

    Returns
    -------
    str
        ``""`` for NaN or None.

    Examples
    --------
    >>> significant(99.7), significant(0.04), significant(1234.5), significant(0.0)
    ('99.7', '0.04', '1,230', '0')
    >>> significant(99.996, upper=100.0), significant(12.0), significant(-0.00123)
    ('99.996', '12', '-0.00123')
    """
    if value is None:
        return ""
    v = float(value)
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if v == 0:
        return "0"
    if upper is not None and abs(v) < upper and upper - abs(v) <= 1e-9 * upper:
        v = math.copysign(upper, v)  # floating-point noise of an area ratio: it is the bound
    for d in range(max(1, digits), 9):
        text = _sig(v, d)
        if upper is None or abs(v) >= upper or abs(float(text.replace(",", ""))) < upper:
            return text
    return _sig(v, 9)


def _sig(v: float, digits: int) -> str:
    decimals = digits - 1 - math.floor(math.log10(abs(v)))
    if decimals <= 0:
        return f"{round(v, decimals):,.0f}"
    return f"{v:,.{decimals}f}".rstrip("0").rstrip(".")


def feet_text(value: float, decimals: int = FT_DECIMALS) -> str:
    """An elevation or length in feet at a fixed precision (0.01 ft), thousands separators.

    Trailing zeros are kept (the column reads at one precision); a value that is not zero but
    would show as 0.00 is given to two significant figures instead (:func:`significant`).

    Examples
    --------
    >>> feet_text(846.51), feet_text(846.5), feet_text(1234.567), feet_text(0.0), feet_text(float("nan"))
    ('846.51', '846.50', '1,234.57', '0.00', '')
    >>> feet_text(0.005), feet_text(0.004), feet_text(-0.0031)
    ('0.01', '0.004', '-0.0031')
    """
    if value is None:
        return ""
    v = float(value) + 0.0  # -0.0 is 0.00
    if not math.isfinite(v):
        return significant(v)
    text = f"{v:,.{decimals}f}"
    if v != 0 and not text.strip("-0.,"):  # a nonzero value that rounds to zero
        return significant(v, 2)
    return text


def count_text(value: float) -> str:
    """A count as an integer with thousands separators (never ``1,230`` for 1,234).

    Examples
    --------
    >>> count_text(15), count_text(1234.0), count_text(float("nan"))
    ('15', '1,234', '')
    """
    if value is None:
        return ""
    v = float(value)
    return f"{round(v):,d}" if math.isfinite(v) else significant(v)


def number_format(name: str, s: pd.Series) -> str:
    """How the parcels table writes the numbers of column ``name``: ``'count'`` for an integer
    column, ``'feet'`` for a length or elevation (a ``*_ft`` name, :func:`feet_text`), else
    ``'significant'`` (:func:`significant`).

    Examples
    --------
    >>> number_format("bfe_ft", pd.Series([846.51])), number_format("stream_distance_ft", pd.Series([1.0]))
    ('feet', 'feet')
    >>> number_format("n_footprints", pd.Series([3], dtype="Int64")), number_format("sfha_acres", pd.Series([0.1]))
    ('count', 'significant')
    """
    if pd.api.types.is_integer_dtype(s.dtype):
        return "count"
    if column_header(name)[0].endswith("(ft)"):
        return "feet"
    return "significant"


NUMBER_TEXT = {"count": count_text, "feet": feet_text}
"""Formatter of each :func:`number_format` other than ``'significant'``."""


# -- headers ------------------------------------------------------------------------------------
def column_header(name: str) -> tuple[str, float]:
    """A header for people and the factor to apply to the column's numbers.

    Examples
    --------
    >>> column_header("sfha_acres"), column_header("sfha_share")
    (('SFHA (acres)', 1.0), ('SFHA share (%)', 100.0))
    >>> column_header("sfha_acres_change")[0], column_header("stream_distance_ft")[0]
    ('SFHA change (acres)', 'Stream distance (ft)')
    >>> column_header("worst_status")[0], column_header("prelim_flood_zones")[0]
    ('Worst status', 'Preliminary flood zones')
    """
    tokens = [t for t in re.split(r"[_\s]+", str(name)) if t]
    unit, factor, keep = "", 1.0, []
    for t in tokens:
        low = t.lower()
        if not unit and low in UNIT_WORDS and len(tokens) > 1:
            unit, factor = UNIT_WORDS[low]
            if low == "share":
                keep.append("share")
            continue
        keep.append(WORDS.get(low, t))
    text = " ".join(keep) or str(name)
    text = text[:1].upper() + text[1:]
    return (f"{text} ({unit})" if unit else text), factor


# -- the table ----------------------------------------------------------------------------------
@dataclass
class Column:
    """One column of the report's parcels table."""

    name: str
    header: str
    kind: str  # "id", "status", "rule_status", "number", "note", "text"
    factor: float = 1.0
    upper: float | None = None
    number: str = "significant"  # how numbers are written: "significant", "feet", "count" (number_format)
    print: bool = True
    width_in: float = 0.0


@dataclass
class ParcelTable:
    """The parcels table as the template draws it (see :func:`parcel_table`)."""

    columns: list[Column]
    rows: list[list[dict[str, Any]]]
    n_total: int
    n_listed: int
    constants: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[int, str]] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    order: str = ""

    @property
    def not_printed(self) -> list[str]:
        """Headers of the columns too wide for the printed page."""
        return [c.header for c in self.columns if not c.print]

    @property
    def has_rule_status(self) -> bool:
        return any(c.kind == "rule_status" for c in self.columns)


def parcel_id_column(table: pd.DataFrame) -> str | None:
    """The id column of a parcels table (see :data:`PARCEL_ID_COLUMNS`)."""
    return next((c for c in PARCEL_ID_COLUMNS if c in table.columns), None)


def _blank(s: pd.Series) -> np.ndarray:
    v = s.astype(object)
    return (v.isna() | v.map(lambda x: isinstance(x, str) and not x.strip())).to_numpy(dtype=bool)


def _is_status_column(s: pd.Series) -> bool:
    vals = s.astype(object)[~_blank(s)]
    return len(vals) > 0 and bool(vals.map(lambda x: isinstance(x, str) and x in STATUS_RANK).all())


def _rules_at_worst(table: pd.DataFrame) -> np.ndarray | None:
    """How many of each row's per-rule statuses (``status_<rule>`` columns) are its ``worst_status``;
    None without those columns. Statuses are compared as ranks, each distinct value looked up once.

    Examples
    --------
    >>> t = pd.DataFrame({"status_A": ["review", "review", "pass"], "status_B": ["review", "pass", None],
    ...                   "worst_status": ["review", "review", "pass"]})
    >>> _rules_at_worst(t).tolist()
    [2, 1, 1]
    """
    cols = [c for c in table.columns if str(c).startswith(STATUS_COLUMN_PREFIX)]
    if not cols or "worst_status" not in table.columns:
        return None
    worst = status_ranks(table["worst_status"])
    count = np.zeros(len(table), dtype=np.int64)
    for c in cols:
        count += (status_ranks(table[c]) == worst) & (worst >= 0)
    return count


def _share_key(table: pd.DataFrame, columns: tuple[str, ...]) -> tuple[np.ndarray, str] | None:
    """The first of ``columns`` the table has, as a sort key (largest first, a missing value last)
    and its name for people; None when it has none."""
    for col in columns:
        if col in table.columns:
            v = pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
            name = column_header(col)[0].split(" (")[0]  # "SFHA share", "Floodway share"
            return np.where(np.isnan(v), np.inf, -v), name[:1].lower() + name[1:] if name[1:2].islower() else name
    return None


def severity_order(table: pd.DataFrame, limit: int | None = None) -> tuple[np.ndarray, str]:
    """Row positions, most severe first: ``worst_status``; then the most rules at that status
    (``status_<rule>`` columns: a parcel in the floodway needs review under more rules than one only
    in the SFHA); then the largest floodway share, the largest SFHA share; then the id.

    Returns the positions (the first ``limit`` only when given) and a sentence saying the order.
    With ``limit``, only the rows that can be among the first ``limit`` by the keys before the id
    (ties at the cut included) are ordered by id: a county's million ids are not sorted for a table
    of 100.

    Examples
    --------
    >>> t = pd.DataFrame({"parcel_id": ["B", "A", "C", "D"], "worst_status": ["pass", "review", "review", "info"],
    ...                   "sfha_share": [0.0, 0.2, 0.2, 0.0]})
    >>> severity_order(t)[0].tolist(), severity_order(t, 2)[0].tolist()
    ([1, 2, 3, 0], [1, 2])
    >>> t["status_FLD_002"] = ["pass", "pass", "review", "pass"]
    >>> t["status_FLD_001"] = ["pass", "review", "review", "info"]
    >>> severity_order(t)[0].tolist()
    [2, 1, 3, 0]
    """
    n = len(table)
    by_rank: list[np.ndarray] = []  # the sort keys, most significant first
    said = []
    if "worst_status" in table.columns:
        by_rank.append(status_ranks(table["worst_status"], len(STATUSES)).astype(float))  # another value: last
        said.append("by worst status (violation, needs review, not evaluated, information, pass)")
        count = _rules_at_worst(table)
        if count is not None:
            by_rank.append(-count.astype(float))
            said.append("the most rules at that status first")
    for cols in (("floodway_share",), ("sfha_share", "sfha_acres")):
        share = _share_key(table, cols)
        if share is not None:
            by_rank.append(share[0])
            said.append(f"the largest {share[1]} first")
    keys = by_rank[::-1]  # least significant first, as np.lexsort takes them
    text = ", then ".join(said) if said else "by parcel id"
    id_col = parcel_id_column(table)
    if id_col is None and not keys:
        return (np.arange(n) if limit is None else np.arange(min(n, max(0, limit)))), "in the order of the parcels layer"
    rows = np.arange(n)
    if limit is not None and keys and limit < n:  # the rows that can be first by the keys, ties kept
        by = np.lexsort(keys)
        cut = by[max(0, limit - 1)] if limit > 0 else None
        if cut is None:
            return np.zeros(0, dtype=np.int64), text
        last = np.array([k[cut] for k in keys])
        before = np.zeros(n, dtype=bool)  # lexicographically before or equal to the row at the cut
        equal = np.ones(n, dtype=bool)
        for k, v in zip(reversed(keys), reversed(last)):  # the primary key last in lexsort's list
            before |= equal & (k < v)
            equal &= k == v
        rows = np.flatnonzero(before | equal)
    sub = [k[rows] for k in keys]
    if id_col is not None:
        sub.insert(0, table[id_col].astype(str).to_numpy()[rows])
    order = rows[np.lexsort(sub)]
    return (order if limit is None else order[:max(0, limit)]), text


def _column_kind(name: str, s: pd.Series, id_col: str | None) -> str:
    if name == id_col:
        return "id"
    if name == "worst_status":
        return "status"
    if _is_status_column(s):
        return "rule_status"
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
        return "number"
    vals = s.astype(object)[~_blank(s)].astype(str)
    if len(vals) and (str(name).endswith(("note", "notes")) or (
            vals.str.len().max() >= NOTE_MIN_CHARS and 2 * vals.nunique() <= len(vals))):
        return "note"
    return "text"


def _rule_status_header(name: str) -> str:
    m = re.search(r"[A-Z]{2,5}-\d{3}[a-z]?", name)
    return m.group(0) if m else column_header(re.sub(r"_?status_?", " ", name).strip() or name)[0]


def _make_column(name: str, s: pd.Series, id_col: str | None) -> Column:
    kind = _column_kind(name, s, id_col)
    if kind == "id":
        return Column(name, "Parcel" if name in ("parcel_id", "feature_id") else column_header(name)[0], kind)
    if kind == "rule_status":
        return Column(name, _rule_status_header(name), kind)
    header, factor = column_header(name)
    upper = 100.0 if header.endswith("(%)") and factor == 100.0 else None
    number = number_format(name, s) if kind == "number" else "significant"
    return Column(name, header, kind, factor=factor, upper=upper, number=number)


def _cell(col: Column, v: Any, notes: dict[str, int]) -> dict[str, Any]:
    """A template cell: ``text``, numeric ``sort`` key (or None), ``status`` (badge) and ``note``."""
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):  # pd.NA: a nullable integer's blank
        return {"text": "", "sort": None, "status": "", "note": 0}
    if col.kind in ("status", "rule_status"):
        s = str(v)
        text = STATUS_LABELS.get(s, s) if col.kind == "status" else STATUS_SHORT.get(s, s)
        return {"text": text, "sort": repr(float(STATUS_RANK.get(s, len(STATUSES)))), "status": s,
                "note": 0, "title": STATUS_LABELS.get(s, s)}
    if col.kind == "number" and isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        x = float(v) * col.factor
        text = NUMBER_TEXT[col.number](x) if col.number in NUMBER_TEXT else significant(x, upper=col.upper)
        return {"text": text, "sort": repr(x), "status": "", "note": 0}
    text = ", ".join(map(str, v)) if isinstance(v, (list, tuple, set)) else str(v)
    if col.kind == "note" and text.strip():
        n = notes.setdefault(text, len(notes) + 1)
        return {"text": f"[{n}]", "sort": None, "status": "", "note": n, "title": text}
    return {"text": text, "sort": None, "status": "", "note": 0}


def _cell_chars(c: dict[str, Any]) -> int:
    return len(c["text"])


PRINT_ALWAYS = ("id", "status", "rule_status", "note")
"""Kinds of columns always printed: the id, the statuses, and the narrow note references (their legend
is printed under the table)."""


def _fit_print_width(columns: list[Column], rows: list[list[dict[str, Any]]], width_in: float) -> None:
    """Mark the columns that do not fit the printed page (``print=False``): the id, statuses and note
    references always fit; the other columns in table order while the width lasts."""
    for j, col in enumerate(columns):
        longest_word = max((len(w) for w in col.header.split()), default=1)
        cells = max((_cell_chars(r[j]) for r in rows), default=0)
        col.width_in = max(longest_word, min(cells, 28), 2) * CHAR_IN + CELL_PAD_IN
    used = sum(c.width_in for c in columns if c.kind in PRINT_ALWAYS)
    for col in columns:
        if col.kind in PRINT_ALWAYS:
            continue
        if used + col.width_in <= width_in:
            used += col.width_in
        else:
            col.print = False


def parcel_table(table: pd.DataFrame, max_rows: int | None = None, *,
                 print_width_in: float = PRINT_WIDTH_IN) -> ParcelTable:
    """The parcels table of the report: the ``max_rows`` most severe parcels, for people.

    Parameters
    ----------
    table : DataFrame
        The Result's ``parcels`` table (every parcel; geometry ignored).
    max_rows : int, optional
        Rows listed (all when None).
    print_width_in : float
        Width the printed table may take; columns past it (the last ones) are not printed.

    Returns
    -------
    ParcelTable
    """
    geom = getattr(table, "_geometry_column_name", None)
    data = pd.DataFrame(table[[c for c in table.columns if c not in (geom, "geometry")]])
    order, said = severity_order(data, None if max_rows is None else max(0, int(max_rows)))
    n_total = len(data)
    keep = order
    shown = data.iloc[keep].reset_index(drop=True)
    id_col = parcel_id_column(shown)
    columns, empty, constants = [], [], []
    for name in shown.columns:
        s = shown[name]
        blank = _blank(s)
        if blank.all():
            empty.append(str(name))
            continue
        col = _make_column(str(name), s, id_col)
        vals = s.astype(object)[~blank].astype(str)
        if len(shown) > 1 and not blank.any() and vals.nunique() == 1 and col.kind not in ("id", "status"):
            constants.append((col.header, _cell(col, s.iloc[0], {})["text"] if col.kind != "note" else vals.iloc[0]))
            continue
        columns.append(col)
    rank = {"id": 0, "status": 1, "rule_status": 2}
    columns.sort(key=lambda c: rank.get(c.kind, 3))  # stable: table order within a kind
    notes: dict[str, int] = {}
    rows = [[_cell(c, v, notes) for c, v in zip(columns, rec)]
            for rec in shown[[c.name for c in columns]].itertuples(index=False, name=None)]
    _fit_print_width(columns, rows, print_width_in)
    return ParcelTable(columns, rows, n_total, len(shown), constants,
                       sorted((n, t) for t, n in notes.items()), empty, said)


def parcel_card(row: pd.DataFrame) -> list[dict[str, Any]]:
    """One parcel's row as (header, cell) pairs for the one-parcel handout, blanks left out."""
    t = parcel_table(row, None)
    notes = dict(t.notes)
    out = []
    for j, col in enumerate(t.columns):
        cell = dict(t.rows[0][j])
        if cell["note"]:
            cell["text"] = notes[cell["note"]]
        if col.kind == "rule_status":
            cell["text"] = STATUS_LABELS.get(cell["status"], cell["text"])
        out.append({"header": col.header, "cell": cell, "kind": col.kind})
    return out
