"""Non-spatial inputs: the daily rainfall series and the inspection log (CSV or DataFrame),
with dates parsed strictly and gaps refused.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from geoconstraints.errors import FieldError, InputError, LayerReadError
from geoconstraints.io.paths import check_file
from geoconstraints.text import day_text, fixed, id_list, is_blank, stated_text

log = logging.getLogger(__name__)

PRECIP_TOL_IN = 1e-9

MAX_TABLE_BYTES = 64 << 20
"""Largest rainfall series or inspection log read (64 MiB: a century of days is 2 MB)."""

DAY = pd.Timedelta(days=1)

DATE_YEARS: tuple[int, int] = (1900, 2100)
"""First and last year (inclusive) a date of the inputs may fall in: a disturbance's ``start`` or
``stabilized``, a rainfall day, an inspection. Outside them a date is a typing error (2999 for 2029,
0001 for an empty date field), and past 2262 it no longer fits the day arithmetic (nanosecond
timestamps)."""

MAX_DAILY_PRECIP_IN = 72.0
"""Most rain one day of a rainfall series may hold: just over the greatest 24-hour rainfall ever
recorded (1,825 mm = 71.9 in, Foc-Foc, La Réunion, January 1966). A larger value is a typing error or
another unit, and huge ones overflow the storm totals."""

_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})"
                      r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?")
_US_DAY = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*[AaPp][Mm])?)?")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_WRITE_ISO = "Write dates as YYYY-MM-DD"


class DateIssue(NamedTuple):
    """The first refused date of :func:`read_days`: where it is, its value, and why (with the fix)."""

    kind: str
    """``unreadable``, ``mixed`` (slashes beside ``YYYY-MM-DD``), ``day_month``, ``ambiguous`` or ``years``."""
    column: str
    rows: np.ndarray
    """Positions (0-based) of the rows refused for this reason in ``column``."""
    value: Any
    """The first refused value, as given (a date-typed one as ``YYYY-MM-DD``)."""
    why: str
    """What is wrong with ``value`` and the fix: ``"is not a date. Write dates as YYYY-MM-DD"``."""


def _date_parts(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Per value: its form (``blank``, ``typed``, ``iso``, ``us``, ``bad``) and its numbers
    (``y, a, b``: year, then month, day for ISO and typed dates, first and second number for
    ``a/b/yyyy``; 0 where none)."""
    s = pd.Series(values).reset_index(drop=True)
    n = len(s)
    form = np.full(n, "bad", dtype=object)
    num = np.zeros((n, 3), dtype=np.int64)
    if pd.api.types.is_datetime64_any_dtype(s):
        ok = s.notna().to_numpy()
        form[~ok] = "blank"
        form[ok] = "typed"
        num[ok] = np.column_stack([s.dt.year[ok], s.dt.month[ok], s.dt.day[ok]]).astype(np.int64)
        return form, num
    for i, v in enumerate(s):  # one value per day of a table: a few thousand at most
        if is_blank(v):
            form[i] = "blank"
        elif isinstance(v, (date, np.datetime64)):
            t = pd.Timestamp(v) if isinstance(v, np.datetime64) else v
            form[i], num[i] = "typed", (t.year, t.month, t.day)
        elif isinstance(v, str) and (m := _ISO_DAY.fullmatch(v.strip()) or _US_DAY.fullmatch(v.strip())):
            g = [int(x) if x else 0 for x in m.groups()]
            if g[3] > 23 or g[4] > 59 or g[5] > 60:  # a time that is no time
                continue
            form[i] = "iso" if m.re is _ISO_DAY else "us"
            num[i] = g[:3] if m.re is _ISO_DAY else (g[2], g[0], g[1])
    return form, num


def _calendar_ok(num: np.ndarray) -> np.ndarray:
    """Rows ``(year, month, day)`` of ``num`` that are days of the calendar (no 2025-02-30)."""
    y, m, d = num[:, 0], num[:, 1], num[:, 2]
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    dim = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])[np.clip(m, 1, 12) - 1] + (leap & (m == 2))
    return (m >= 1) & (m <= 12) & (d >= 1) & (d <= dim)


def read_days(frame: pd.DataFrame, *, scope: str = "table") -> tuple[pd.DataFrame, DateIssue | None]:
    """Parse date columns to midnight timestamps (the law counts days), read one way for the frame.

    A date is ``YYYY-MM-DD`` (a time after it is ignored), a date-typed value, or ``M/D/YYYY``
    (US month/day/year). Dates with slashes are read as month/day/year only where that is the one
    reading of the whole frame (every column): they are refused when a first number over 12 shows
    day/month/year, when no second number over 12 tells month/day from day/month (``07/04/2025``
    could be July 4 or 7 April), or when the frame mixes them with ``YYYY-MM-DD``. A year outside
    :data:`DATE_YEARS` is refused as a typing error.

    Parameters
    ----------
    frame : DataFrame
        The date columns (text, dates or datetimes; blank values are allowed).
    scope : str
        What the frame is, for the messages (``"file"``, ``"layer"``, ``"table"``).

    Returns
    -------
    days : DataFrame of datetime64
        Aligned with ``frame``; ``NaT`` where a value is blank (and everywhere if ``issue``).
    issue : DateIssue or None
        The first refused date (the caller names its file and line, or layer and feature), in this
        order: not a date, mixed forms, day/month/year, month and day ambiguous, outside the years.

    Examples
    --------
    >>> days, issue = read_days(pd.DataFrame({"date": ["2024-05-01", "2024-05-02 16:30", ""]}))
    >>> [d.strftime("%Y-%m-%d") for d in days["date"].dropna()], issue
    (['2024-05-01', '2024-05-02'], None)
    >>> read_days(pd.DataFrame({"date": ["5/1/2024", "5/20/2024"]}))[0]["date"].dt.day.tolist()
    [1, 20]
    >>> read_days(pd.DataFrame({"date": ["07/04/2025", "08/04/2025"]}), scope="file")[1].why[:40]
    'could be July 4, 2025 or 7 April 2025: n'
    >>> read_days(pd.DataFrame({"date": ["2999-01-01"]}))[1].why
    'is outside the years 1900 to 2100: correct the date (a typing error?)'
    """
    parts = {c: _date_parts(frame[c]) for c in frame.columns}
    has_iso = any((f == "iso").any() for f, _ in parts.values())
    # month/day/year is shown by a valid one with a second number over 12 (04/14/2025)
    proven_md = any(((f == "us") & (n[:, 2] > 12) & _calendar_ok(n)).any() for f, n in parts.values())
    lo, hi = DATE_YEARS
    checks: list[tuple[str, Any, Any]] = [  # (kind, rows refused given form and numbers, why given the numbers)
        ("unreadable", lambda f, n: (f == "bad") | ((f == "us") & ((n[:, 1] > 12) & (n[:, 2] > 12)
                                                                    | (n[:, 1] < 1) | (n[:, 2] < 1))),
         lambda v: f"is not a date. {_WRITE_ISO}"),
        ("mixed", lambda f, n: (f == "us") & has_iso,
         lambda v: f"has slashes where other dates of this {scope} are YYYY-MM-DD. Write every date as YYYY-MM-DD"),
        ("day_month", lambda f, n: (f == "us") & (n[:, 1] > 12),
         lambda v: f"is day/month/year (there is no month {v[1]}); a date with slashes is read as month/day/year "
                   f"only. {_WRITE_ISO}"),
        ("ambiguous", lambda f, n: (f == "us") & (n[:, 1] != n[:, 2]) & (not proven_md),
         lambda v: f"could be {_MONTHS[v[1] - 1]} {v[2]}, {v[0]} or {v[1]} {_MONTHS[v[2] - 1]} {v[0]}: no date of "
                   f"this {scope} has a day over 12 to tell month/day/year from day/month/year. {_WRITE_ISO}"),
        ("unreadable", lambda f, n: np.isin(f, ["iso", "us", "typed"]) & ~_calendar_ok(n),
         lambda v: f"is not a date. {_WRITE_ISO}"),
        ("years", lambda f, n: np.isin(f, ["iso", "us", "typed"]) & ((n[:, 0] < lo) | (n[:, 0] > hi)),
         lambda v: f"is outside the years {lo} to {hi}: correct the date (a typing error?)"),
    ]
    for kind, refused, why in checks:
        for col, (form, num) in parts.items():
            rows = np.flatnonzero(refused(form, num))
            if len(rows):
                nat = pd.DataFrame({c: pd.Series(pd.NaT, index=frame.index, dtype="datetime64[us]") for c in frame})
                y, m, d = num[rows[0]]
                value = f"{y:04d}-{m:02d}-{d:02d}" if form[rows[0]] == "typed" else frame[col].iloc[rows[0]]
                return nat, DateIssue(kind, str(col), rows, value, why(num[rows[0]]))
    out = {}
    for col, (form, num) in parts.items():
        text = [f"{y:04d}-{m:02d}-{d:02d}" if f != "blank" else None for f, (y, m, d) in zip(form, num)]
        out[col] = pd.to_datetime(pd.Series(text, index=frame.index, dtype=object), format="%Y-%m-%d")
    return pd.DataFrame(out, index=frame.index), None


# ------------------------------------------------------------------------------------------------
# rainfall and inspections (SWP-007)

def _read_table(source: str | os.PathLike[str] | pd.DataFrame, what: str) -> tuple[pd.DataFrame, str, bool]:
    """A CSV (as text) or a DataFrame copy with stripped lower-case column names."""
    if isinstance(source, pd.DataFrame):
        df, label, is_file = source.copy(), f"{what} table", False
    else:
        path = Path(source)
        label, is_file = path.name, True
        if not path.exists():
            raise LayerReadError(f"{what} file {path} does not exist. Give the path of a CSV file")
        check_file(path, f"{what} file")
        if path.stat().st_size > MAX_TABLE_BYTES:
            raise InputError(f"{what} file {path}: larger than {MAX_TABLE_BYTES >> 20} MiB, the most read for a "
                             f"table of days. Is it the right file?")
        try:
            df = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise InputError(f"{what} file {path.name}: not a readable CSV ({str(exc).splitlines()[0]}). "
                             f"Save it as comma-separated text with a header row") from None
    df.columns = [str(c).strip().lower() for c in df.columns]
    return df.reset_index(drop=True), label, is_file


def _date_column(df: pd.DataFrame, label: str, is_file: bool) -> pd.Series:
    """The ``date`` column parsed to days (:func:`read_days`); InputError naming the lines of the
    first refused date (blank, unreadable, read two ways, outside :data:`DATE_YEARS`)."""
    raw = df[["date"]]
    blank = np.flatnonzero(raw["date"].map(is_blank).to_numpy())
    if len(blank):
        raise InputError(f"{_where(label, is_file, blank)}: date is empty. {_WRITE_ISO}")
    days, issue = read_days(raw, scope="file" if is_file else "table")
    if issue is not None:
        raise InputError(f"{_where(label, is_file, issue.rows)}: date {issue.value!r} {issue.why}")
    return days["date"]


def _where(label: str, is_file: bool, idx: Sequence[int] | np.ndarray) -> str:
    rows = [str(i + 2) if is_file else str(i + 1) for i in idx]
    return f"{label} {'line' if is_file else 'row'}{'s' if len(rows) > 1 else ''} {id_list(rows)}"


def read_rainfall(source: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """Read and validate a daily rainfall series.

    Parameters
    ----------
    source : path or DataFrame
        CSV with columns ``date`` and ``precip_in`` (inches of precipitation that day).

    Returns
    -------
    DataFrame
        ``date`` (datetime64, sorted, one row per day without gaps) and ``precip_in`` (float).

    Raises
    ------
    InputError
        Missing columns, a date that cannot be read or could be read two ways (see
        :func:`read_days`), a duplicated date, a blank, non-numeric or negative value or one over
        :data:`MAX_DAILY_PRECIP_IN`, or missing days inside the series (a missing day is never
        taken as dry).
    """
    df, label, is_file = _read_table(source, "rainfall")
    need = [c for c in ("date", "precip_in") if c not in df.columns]
    if need:
        raise FieldError(f"rainfall {label}: column {', '.join(need)} missing (columns: "
                         f"{', '.join(df.columns) or 'none'}). Give a header row 'date,precip_in'")
    if not len(df):
        raise InputError(f"rainfall {label}: no rows. Give one row per day with date and precip_in")
    days = _date_column(df, label, is_file)
    raw_p = df["precip_in"]
    blank = np.flatnonzero(raw_p.map(is_blank).to_numpy())
    if len(blank):
        raise InputError(f"{_where(label, is_file, blank)}: precip_in is empty. A missing day is not a dry "
                         f"day: enter the gauge value (0 for a dry day)")
    precip = pd.to_numeric(raw_p, errors="coerce")
    nonnum = np.flatnonzero(precip.isna().to_numpy())
    if len(nonnum):
        raise InputError(f"{_where(label, is_file, nonnum)}: precip_in {raw_p.iloc[nonnum[0]]!r} is not a "
                         f"number. Give inches as a number (0 for a dry day or a trace)")
    inf = np.flatnonzero(~np.isfinite(precip.to_numpy(dtype="float64")))
    if len(inf):
        raise InputError(f"{_where(label, is_file, inf)}: precip_in {raw_p.iloc[inf[0]]!r} is not a finite number. "
                         f"Give inches as a number (0 for a dry day)")
    neg = np.flatnonzero((precip < 0).to_numpy())
    if len(neg):
        raise InputError(f"{_where(label, is_file, neg)}: precip_in {precip.iloc[neg[0]]:g} is negative. "
                         f"Rainfall is 0 or more inches")
    big = np.flatnonzero((precip > MAX_DAILY_PRECIP_IN).to_numpy())
    if len(big):
        raise InputError(f"{_where(label, is_file, big)}: precip_in {raw_p.iloc[big[0]]!r} is more than "
                         f"{MAX_DAILY_PRECIP_IN:g} in, more rain than any day has had. Give the day's total in inches "
                         f"(millimetres / 25.4)")
    dup = days.duplicated(keep=False)
    if dup.any():
        shown = sorted({day_text(d) for d in days[dup]})
        raise InputError(f"rainfall {label}: dates {id_list(shown)} appear more than once. Give one total per day")
    out = pd.DataFrame({"date": days, "precip_in": precip.astype(float)}).sort_values("date", ignore_index=True)
    full = pd.date_range(out["date"].iloc[0], out["date"].iloc[-1], freq="D")
    missing = full.difference(pd.DatetimeIndex(out["date"]))
    if len(missing):
        raise InputError(f"rainfall {label}: {len(missing)} day(s) missing from the series: "
                         f"{id_list([day_text(d) for d in missing])}. A missing day is not a dry day: add "
                         f"those days (0 where it was dry)")
    return out


def read_inspection_log(source: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """Read an inspection log: a ``date`` column, optional ``inspector``, ``notes`` and ``qualified``.

    Returns
    -------
    DataFrame
        ``date`` (midnight), ``inspector``, ``notes`` (text; a blank one, None or NaN in a table, is
        ``""``: not stated, never the text "None" or "nan") and ``qualified`` as the log gives it
        (yes / no / blank, read by :func:`~geoconstraints.geometry.phasing.qualifications`; ``""``
        without the column), sorted by date.

    Raises
    ------
    InputError
        No ``date`` column, or a blank date or one :func:`read_days` refuses (unreadable, could be
        read two ways, outside :data:`DATE_YEARS`), naming the lines.

    Examples
    --------
    >>> log = read_inspection_log(pd.DataFrame({"date": ["2024-05-08", "2024-05-01"],
    ...                                         "inspector": ["J. Doe", None], "qualified": ["yes", float("nan")]}))
    >>> log["date"].dt.strftime("%m-%d").tolist(), log["inspector"].tolist(), log["qualified"].tolist()
    (['05-01', '05-08'], ['', 'J. Doe'], ['', 'yes'])
    """
    df, label, is_file = _read_table(source, "inspection log")
    if "date" not in df.columns:
        raise FieldError(f"inspection log {label}: column date missing (columns: "
                         f"{', '.join(df.columns) or 'none'}). Give a header row 'date,inspector,notes'")
    days = _date_column(df, label, is_file)
    out = pd.DataFrame({"date": days})
    for c in ("inspector", "notes", "qualified"):
        out[c] = stated_text(df[c]) if c in df.columns else ""
    return out.sort_values("date", kind="stable", ignore_index=True)


def check_rainfall_coverage(rain: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp, source: Any) -> None:
    """The rainfall series must cover every day a storm inspection could be needed: start to end - 1."""
    first, last = rain["date"].iloc[0], rain["date"].iloc[-1]
    need_to = max(start, end - DAY)
    gaps = []
    if start < first:
        gaps.append(f"{day_text(start)} to {day_text(min(first - DAY, need_to))}")
    if need_to > last:
        gaps.append(f"{day_text(max(last + DAY, start))} to {day_text(need_to)}")
    if gaps:
        name = "table" if isinstance(source, pd.DataFrame) else Path(source).name
        raise InputError(f"rainfall {name} covers {day_text(first)} to {day_text(last)} but the disturbance runs "
                         f"{day_text(start)} to {day_text(end)}: add daily values for {' and '.join(gaps)}")


def check_rainfall_first_run(rain: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp, source: Any, *,
                          storm_threshold_in: float, wet_day_min_in: float) -> None:
    """Consecutive-wet-days reading: the series must not begin inside an undecided wet run.

    A run of wet days that begins on the series' first day may have begun earlier: the days before
    the series are unknown, never dry. When that run ends inside the inspection period and its known
    total is under the storm threshold, whether it was a storm event depends on the missing days.
    (A known total at or over the threshold is a storm whatever came before.)
    """
    r = rain.reset_index(drop=True)
    wet = (r["precip_in"] >= wet_day_min_in - PRECIP_TOL_IN).to_numpy()
    if not len(r) or not wet[0]:
        return
    n = int(np.argmin(wet)) if not wet.all() else len(wet)  # length of the run at the series start
    last = r["date"].iloc[n - 1]
    total = float(r["precip_in"].iloc[:n].sum())
    if last < start or last >= end or total >= storm_threshold_in - PRECIP_TOL_IN:
        return
    first = r["date"].iloc[0]
    name = "table" if isinstance(source, pd.DataFrame) else Path(source).name
    raise InputError(f"rainfall {name} starts on {day_text(first)}, a wet day ({fixed(total)} in through {day_text(last)}, "
                     f"under the {storm_threshold_in:g} in storm threshold): with storm_event=consecutive_wet_days "
                     f"the days before it are needed to know whether that run was a storm event; add daily values "
                     f"before {day_text(first)} back to a dry day")

