"""Non-spatial inputs: the daily rainfall series and the inspection log (CSV or DataFrame),
with dates parsed strictly and gaps refused; and the one strict reader of dates (:func:`read_days`),
which the layers' dates (phasing, a flood map's ``EFF_DATE``) are read with too.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Collection, Sequence
from datetime import date, datetime
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
"""First and last year (inclusive) a date read by :func:`read_days` may fall in, whatever its options: a
disturbance's ``start`` or ``stabilized``, a rainfall day, an inspection, a flood map's ``EFF_DATE``. Outside
them a date is a typing error (2999 for 2029, 0001 for an empty date field, a FIRM dated 1066 or 9999: the
flood insurance maps date from 1968 on), and past 2262 it no longer fits the day arithmetic (nanosecond
timestamps)."""

MAX_DAILY_PRECIP_IN = 72.0
"""Most rain one day of a rainfall series may hold: just over the greatest 24-hour rainfall ever
recorded (1,825 mm = 71.9 in, Foc-Foc, La Réunion, January 1966). A larger value is a typing error or
another unit, and huge ones overflow the storm totals."""

DATE_FORMS: dict[str, str] = {"iso": "YYYY-MM-DD", "ymd_slash": "YYYY/MM/DD", "ymd": "YYYYMMDD", "us": "US M/D/YYYY"}
"""The text forms of a day :func:`read_days` can read (its ``forms`` option), by name: ``iso``; ``ymd_slash``,
GDAL's text of a date field; ``ymd``, a shapefile's (dBase) date field, also as a whole number (``19980302``,
``19980302.0``); ``us``, month/day/year (which order :func:`read_days` takes is its ``order`` option).
``YYYY-MM-DD`` and ``YYYY/MM/DD`` may be followed by ``T`` or one space and ``HH:MM``, optional ``:SS`` and
fraction, ``Z`` or an offset (``T00:00:00.000Z``); ``M/D/YYYY`` by one space and ``H:MM``, optional ``:SS`` and
``AM`` / ``PM`` (Esri's ``3/2/1998 12:00:00 AM``). Any other time part (``T`` after ``M/D/YYYY``, two spaces,
``0:30 AM``, ``25:00``) is no date: a value written another way is refused, never a guessed day."""

DATE_ORDERS: tuple[str, ...] = ("proven", "us")
"""The values of :func:`read_days`'s ``order`` option (how ``M/D/YYYY`` is taken)."""

DATE_TIMES: tuple[str, ...] = ("ignore", "midnight")
"""The values of :func:`read_days`'s ``time`` option (what a time of day after the date means)."""

_ISO_TIME = r"(?:[T ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.(?P<f>\d+))?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?"
_US_TIME = r"(?: (?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?(?: ?(?P<ap>[AaPp][Mm]))?)?"
_FORM_RES = {  # a, b: the two numbers beside the year (month and day, in the order the form or `order` says)
    "iso": re.compile(r"(?P<y>\d{4})-(?P<a>\d{2})-(?P<b>\d{2})" + _ISO_TIME),
    "ymd_slash": re.compile(r"(?P<y>\d{4})/(?P<a>\d{2})/(?P<b>\d{2})" + _ISO_TIME),
    "ymd": re.compile(r"(?P<y>\d{4})(?P<a>\d{2})(?P<b>\d{2})"),
    "us": re.compile(r"(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{4})" + _US_TIME),
}
_YEAR_FIRST = ("iso", "ymd_slash", "ymd")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_WRITE_ISO = "Write dates as YYYY-MM-DD"


def date_forms_text(forms: Collection[str]) -> str:
    """The :data:`DATE_FORMS` named in ``forms``, as a message lists them.

    Examples
    --------
    >>> date_forms_text(("us", "iso")), date_forms_text(DATE_FORMS)
    ('YYYY-MM-DD or US M/D/YYYY', 'YYYY-MM-DD, YYYY/MM/DD, YYYYMMDD or US M/D/YYYY')
    """
    names = [text for name, text in DATE_FORMS.items() if name in forms]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


class DateIssue(NamedTuple):
    """The first refused date of :func:`read_days`: where it is, its value, and why (with the fix)."""

    kind: str
    """``unreadable``, ``year_alone``, ``time`` (not midnight), ``mixed`` (slashes beside ``YYYY-MM-DD``),
    ``day_month``, ``ambiguous`` or ``years``."""
    column: str
    rows: np.ndarray
    """Positions (0-based) of the rows refused for this reason in ``column``."""
    value: Any
    """The first refused value, as given (a date-typed one as ``YYYY-MM-DD``)."""
    why: str
    """What is wrong with ``value`` and the fix, to follow it in a sentence: ``"is not a date. Write dates as
    YYYY-MM-DD"``."""
    reason: str
    """The same in a clause of its own, without the fix: ``"a year alone names no day"``."""


def _midnight(m: re.Match[str]) -> bool | None:
    """Whether the time part of a matched date is midnight (True without one); None when it is no time
    (``25:00``, ``0:30 AM``, ``13:00 PM``)."""
    t = m.groupdict()
    if t.get("h") is None:
        return True
    h, mi, s = int(t["h"]), int(t["mi"]), int(t["s"] or 0)
    if t.get("ap"):
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if t["ap"].upper() == "PM" else 0)
    if h > 23 or mi > 59 or s > 60:
        return None
    return h == mi == s == 0 and not int(t.get("f") or 0)


def _one_date(v: Any, forms: Collection[str]) -> tuple[str, tuple[int, int, int], bool]:
    """One value's form (``blank``, ``typed``, ``year`` for a year alone, ``bad``, or the name of one of
    ``forms``), its numbers ``(y, a, b)`` (0 where none) and whether its time of day is midnight (or none)."""
    if isinstance(v, np.datetime64):
        v = pd.Timestamp(v)
    if is_blank(v):
        return "blank", (0, 0, 0), True
    if isinstance(v, date):  # a datetime and a pandas Timestamp too; a time zone is kept (the day is the one in it)
        clock = (v.hour, v.minute, v.second, v.microsecond, getattr(v, "nanosecond", 0)) if isinstance(v, datetime) else ()
        return "typed", (v.year, v.month, v.day), not any(clock)
    whole = isinstance(v, (int, np.integer)) or (isinstance(v, (float, np.floating)) and float(v).is_integer())
    if whole and not isinstance(v, bool) and "ymd" in forms:  # (np.bool_ is no integer)
        v = str(int(v))
    if not isinstance(v, str):
        return "bad", (0, 0, 0), True
    text = v.strip()
    if re.fullmatch(r"\d{4}", text):
        return "year", (int(text), 0, 0), True
    for name in forms:
        m = _FORM_RES[name].fullmatch(text)
        if m is not None:
            midnight = _midnight(m)
            if midnight is None:
                break
            return name, (int(m["y"]), int(m["a"]), int(m["b"])), midnight
    return "bad", (0, 0, 0), True


def _date_parts(values: pd.Series, forms: Collection[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per value (:func:`_one_date`): its form, its numbers ``(y, a, b)`` (year, then month and day, for
    ``a/b/yyyy`` the first and second number) and whether its time of day is midnight."""
    s = pd.Series(values).reset_index(drop=True)
    if pd.api.types.is_datetime64_any_dtype(s):
        ok = s.notna().to_numpy()
        form = np.where(ok, "typed", "blank").astype(object)
        num = np.zeros((len(s), 3), dtype=np.int64)
        num[ok] = np.column_stack([s.dt.year[ok], s.dt.month[ok], s.dt.day[ok]]).astype(np.int64)
        return form, num, (s.dt.normalize() == s).to_numpy() | ~ok
    got = [_one_date(v, forms) for v in s]  # one value per day of a table or feature of a layer: a few thousand
    return (np.array([g[0] for g in got], dtype=object), np.array([g[1] for g in got], dtype=np.int64).reshape(-1, 3),
            np.array([g[2] for g in got], dtype=bool))


def _calendar_ok(num: np.ndarray) -> np.ndarray:
    """Rows ``(year, month, day)`` of ``num`` that are days of the calendar (no 2025-02-30)."""
    y, m, d = num[:, 0], num[:, 1], num[:, 2]
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    dim = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])[np.clip(m, 1, 12) - 1] + (leap & (m == 2))
    return (m >= 1) & (m <= 12) & (d >= 1) & (d <= dim)


def read_days(frame: pd.DataFrame, *, scope: str = "table", order: str = "proven", time: str = "ignore",
              forms: Collection[str] = ("iso", "us")) -> tuple[pd.DataFrame, DateIssue | None]:
    """Parse date columns to midnight timestamps (the law counts days), strictly: a date is read one way
    or refused, never guessed.

    The one reader of dates: the rainfall series, the inspection log and the disturbance's ``start`` /
    ``stabilized`` with the defaults; FLD-010's ``EFF_DATE`` (:func:`~geoconstraints.rules.flood.effective_date`)
    with ``order="us"``, ``time="midnight"`` and every form. Read: a date-typed value (``datetime.date``,
    ``datetime``, pandas ``Timestamp``, ``numpy.datetime64``; a time zone is kept: the day is the one in it)
    and the text of :data:`DATE_FORMS` named in ``forms``. Always refused: anything else (free text, a
    two-digit year, a number where ``YYYYMMDD`` is not read, a time that is no time), a year alone
    (``"2012"``: ``pd.to_datetime`` read it as 2012-01-01), ``M/D/YYYY`` whose first number is over 12
    (day/month/year), a day not in the calendar (2025-02-30), and a year outside :data:`DATE_YEARS` (a
    typing error, in a table as in a flood map).

    Parameters
    ----------
    frame : DataFrame
        The date columns (text, numbers, dates or datetimes; blank values are allowed).
    scope : str
        What the frame is, for the messages (``"file"``, ``"layer"``, ``"table"``).
    order : {"proven", "us"}
        How ``M/D/YYYY`` is taken. ``"proven"`` (the tables and layers a user types or exports): as
        month/day/year only where that is the one reading of the whole frame (every column): refused
        when no second number over 12 tells month/day from day/month (``07/04/2025`` could be July 4 or
        7 April; ``5/5/2025`` reads the same either way), and when the frame mixes slashes with
        year-first dates (two sources, two orders). ``"us"`` (FEMA's ``EFF_DATE``): month/day/year
        without proof, as FEMA and Esri's US exports write it; a layer holds one effective date, so
        proof would rarely be found. The risk taken: a day-first date whose day is 12 or less.
    time : {"ignore", "midnight"}
        What a time of day after the date means. ``"ignore"``: the day is the date's, whatever the
        hour (an inspection at ``16:30`` was on that day; the law counts days). ``"midnight"`` (a value
        meant as a day, as a GIS date field): only midnight is read; another time is a day shifted by
        a time zone (an Esri date stored in UTC) and is refused, as the day it meant is unknown.
    forms : collection of str
        The names of :data:`DATE_FORMS` read. The default, ``("iso", "us")``, is what the tables and the
        disturbance layer document: there ``YYYYMMDD`` (``20240315`` in a CSV) and ``YYYY/MM/DD`` stay
        refused with "Write dates as YYYY-MM-DD", as before, rather than a column of numbers (a
        spreadsheet's serial day, 45366, is one too) read as days. ``EFF_DATE`` reads all four: a
        shapefile's date field is ``YYYYMMDD`` and GDAL's text of a date ``YYYY/MM/DD``.

    Returns
    -------
    days : DataFrame of datetime64
        Aligned with ``frame``; ``NaT`` where a value is blank (and everywhere if ``issue``).
    issue : DateIssue or None
        The first refused date (the caller names its file and line, or layer and feature), in this
        order: not a date, a year alone, a time other than midnight, mixed forms, day/month/year, month
        and day ambiguous, no such day, outside the years.

    Raises
    ------
    ValueError
        An option not among its values.

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
    >>> eff = dict(order="us", time="midnight", forms=tuple(DATE_FORMS))
    >>> days = read_days(pd.DataFrame({"EFF_DATE": ["3/2/1998 12:00:00 AM", 19980302, "1998/03/02"]}), **eff)[0]
    >>> days["EFF_DATE"].dt.strftime("%Y-%m-%d").tolist()
    ['1998-03-02', '1998-03-02', '1998-03-02']
    >>> [read_days(pd.DataFrame({"EFF_DATE": [v]}), **eff)[1].reason for v in ("1998-03-02 05:00", "2012")]
    ['a time of day other than midnight (a day shifted by a time zone?)', 'a year alone names no day']
    """
    for name, value, allowed in (("order", order, DATE_ORDERS), ("time", time, DATE_TIMES)):
        if value not in allowed:
            raise ValueError(f"{value!r} is not a valid option for {name}, must be one of {', '.join(allowed)}")
    if not forms or not set(forms) <= DATE_FORMS.keys():
        raise ValueError(f"{forms!r} is not a valid option for forms, must be some of {', '.join(DATE_FORMS)}")
    parts = {c: _date_parts(frame[c], forms) for c in frame.columns}
    read_as = [*forms, "typed"]
    year_first = any(np.isin(f, _YEAR_FIRST).any() for f, _, _ in parts.values())
    # month/day/year is taken (order="us") or shown by a valid one with a second number over 12 (04/14/2025)
    proven_md = order == "us" or any(((f == "us") & (n[:, 2] > 12) & _calendar_ok(n)).any() for f, n, _ in parts.values())
    lo, hi = DATE_YEARS
    not_date = (lambda v: f"not a date in a form read ({date_forms_text(forms)})", lambda v: f"is not a date. {_WRITE_ISO}")
    checks: list[tuple[str, Any, Any, Any]] = [  # (kind, rows refused given form, numbers and midnight; reason and
        ("unreadable",                         #  why given the numbers)
         lambda f, n, t: (f == "bad") | ((f == "us") & ((n[:, 1] > 12) & (n[:, 2] > 12) | (n[:, 1] < 1) | (n[:, 2] < 1))),
         *not_date),
        ("year_alone", lambda f, n, t: f == "year",
         lambda v: "a year alone names no day", lambda v: f"is a year alone, which names no day. {_WRITE_ISO}"),
        ("time", lambda f, n, t: np.isin(f, read_as) & ~t & (time == "midnight"),
         lambda v: "a time of day other than midnight (a day shifted by a time zone?)",
         lambda v: f"has a time of day other than midnight (a day shifted by a time zone?). {_WRITE_ISO}"),
        ("mixed", lambda f, n, t: (f == "us") & (order == "proven") & year_first,
         lambda v: f"slashes where other dates of this {scope} are year first",
         lambda v: f"has slashes where other dates of this {scope} are YYYY-MM-DD. Write every date as YYYY-MM-DD"),
        ("day_month", lambda f, n, t: (f == "us") & (n[:, 1] > 12),
         lambda v: f"no month {v[1]}: a day-first date is not read (only month/day/year)",
         lambda v: f"is day/month/year (there is no month {v[1]}); a date with slashes is read as month/day/year "
                   f"only. {_WRITE_ISO}"),
        ("ambiguous", lambda f, n, t: (f == "us") & (n[:, 1] != n[:, 2]) & (not proven_md),
         lambda v: f"could be {_MONTHS[v[1] - 1]} {v[2]}, {v[0]} or {v[1]} {_MONTHS[v[2] - 1]} {v[0]}",
         lambda v: f"could be {_MONTHS[v[1] - 1]} {v[2]}, {v[0]} or {v[1]} {_MONTHS[v[2] - 1]} {v[0]}: no date of "
                   f"this {scope} has a day over 12 to tell month/day/year from day/month/year. {_WRITE_ISO}"),
        ("unreadable", lambda f, n, t: np.isin(f, read_as) & ~_calendar_ok(n),
         lambda v: "no such day", not_date[1]),
        ("years", lambda f, n, t: np.isin(f, read_as) & ((n[:, 0] < lo) | (n[:, 0] > hi)),
         lambda v: f"a year outside {lo} to {hi}: a typing error?",
         lambda v: f"is outside the years {lo} to {hi}: correct the date (a typing error?)"),
    ]
    for kind, refused, reason, why in checks:
        for col, (form, num, midnight) in parts.items():
            rows = np.flatnonzero(refused(form, num, midnight))
            if len(rows):
                nat = pd.DataFrame({c: pd.Series(pd.NaT, index=frame.index, dtype="datetime64[us]") for c in frame})
                y, m, d = v = num[rows[0]]
                value = f"{y:04d}-{m:02d}-{d:02d}" if form[rows[0]] == "typed" else frame[col].iloc[rows[0]]
                return nat, DateIssue(kind, str(col), rows, value, why(v), reason(v))
    out = {}
    for col, (form, num, _) in parts.items():
        text = [f"{y:04d}-{m:02d}-{d:02d}" if f != "blank" else None for f, (y, m, d) in zip(form, num)]
        out[col] = pd.to_datetime(pd.Series(text, index=frame.index, dtype=object), format="%Y-%m-%d")
    return pd.DataFrame(out, index=frame.index), None


# ------------------------------------------------------------------------------------------------
# rainfall and inspections (SWP-007)

def _read_table(source: str | os.PathLike[str] | pd.DataFrame, what: str) -> tuple[pd.DataFrame, str, bool]:
    """A CSV (as text) or a DataFrame copy with stripped lower-case column names; a header naming a
    column twice, or a file separated by semicolons or tabs, is refused."""
    if isinstance(source, pd.DataFrame):
        df, label, is_file = source.copy(), f"{what} table", False
        names = [str(c) for c in df.columns]
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
            # the header as written: read_csv renames a repeated column (precip_in, precip_in.1)
            head = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True, header=None, nrows=1)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise InputError(f"{what} file {path.name}: not a readable CSV ({str(exc).splitlines()[0]}). "
                             f"Save it as comma-separated text with a header row") from None
        names = [str(c) for c in head.iloc[0]] if len(head) else [str(c) for c in df.columns]
        _check_separator(names, what, label)
    _check_header(names, f"{what} file {label}" if is_file else label)
    df.columns = [str(c).strip().lower() for c in df.columns]
    return df.reset_index(drop=True), label, is_file


def _check_separator(names: list[str], what: str, label: str) -> None:
    """Refuse a table whose one column's name holds a semicolon, tab or bar: a CSV saved with another
    separator (a European spreadsheet's ``date;precip_in``), whose numbers may use decimal commas too."""
    if len(names) != 1:
        return
    for sep, called in ((";", "semicolons"), ("\t", "tabs"), ("|", "bars")):
        if sep in names[0]:
            raise InputError(f"{what} file {label}: its columns are separated by {called}, not commas (header "
                             f"{names[0]!r}). Save it as comma-separated text (CSV) with a header row and a point as "
                             f"the decimal mark")


def _check_header(names: list[str], where: str) -> None:
    """Refuse a header naming one column twice (ignoring case and spaces): only one of them would be
    read (the first ``precip_in`` of two, the storm in the second never seen)."""
    norm = [n.strip().lower() for n in names]
    dups = sorted({n for n in norm if n and norm.count(n) > 1})
    if dups:
        raise InputError(f"{where}: column "
                         f"{', '.join(dups)} appears more than once in the header row "
                         f"({', '.join(repr(n) for n in names)}), so which one holds the data is unclear. Delete "
                         f"or rename the extra column")


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

