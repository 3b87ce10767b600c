"""Non-spatial inputs: the daily rainfall series and the inspection log (CSV or DataFrame),
with dates parsed strictly and gaps refused.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from geoconstraints.errors import FieldError, InputError, LayerReadError
from geoconstraints.io.paths import check_file
from geoconstraints.text import day_text, fixed, id_list, is_blank

log = logging.getLogger(__name__)

PRECIP_TOL_IN = 1e-9

MAX_TABLE_BYTES = 64 << 20
"""Largest rainfall series or inspection log read (64 MiB: a century of days is 2 MB)."""

DAY = pd.Timedelta(days=1)



def parse_days(values: pd.Series) -> pd.Series:
    """Parse dates to midnight timestamps (the law counts days).

    Parameters
    ----------
    values : Series
        Strings (ISO ``YYYY-MM-DD`` preferred; ``M/D/YYYY`` accepted), dates or datetimes.

    Returns
    -------
    Series of datetime64
        Aligned with ``values``; ``NaT`` where a value is blank *or* unparseable (callers tell the
        two apart with :func:`is_blank` and raise on the latter).
    """
    s = pd.Series(values)
    if pd.api.types.is_datetime64_any_dtype(s):
        out = pd.to_datetime(s)
    else:
        clean = s.map(lambda v: None if is_blank(v) else
                      (pd.Timestamp(v).isoformat() if hasattr(v, "year") else str(v).strip()))
        out = pd.to_datetime(clean, errors="coerce", format="ISO8601")
        retry = out.isna() & clean.notna()
        if retry.any():
            out = out.astype("datetime64[ns]")
            out.loc[retry] = pd.to_datetime(clean[retry], errors="coerce", format="mixed")
    out = pd.to_datetime(out)
    if getattr(out.dt, "tz", None) is not None:
        out = out.dt.tz_localize(None)
    return out.dt.normalize()


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
    """The ``date`` column parsed to days; InputError naming the first unreadable line."""
    raw = df["date"]
    days = parse_days(raw)
    bad = np.flatnonzero(days.isna().to_numpy())
    if len(bad):
        raise InputError(f"{_where(label, is_file, bad)}: date {raw.iloc[bad[0]]!r} is not a date. "
                         f"Write dates as YYYY-MM-DD")
    return days


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
        Missing columns, a date that cannot be read, a duplicated date, a blank, non-numeric or
        negative value, or missing days inside the series (a missing day is never taken as dry).
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
    """Read an inspection log: a ``date`` column, optional ``inspector`` and ``notes``.

    Returns
    -------
    DataFrame
        ``date`` (midnight), ``inspector``, ``notes``, sorted by date.

    Raises
    ------
    InputError
        No ``date`` column, or a blank or unreadable date (naming the line).
    """
    df, label, is_file = _read_table(source, "inspection log")
    if "date" not in df.columns:
        raise FieldError(f"inspection log {label}: column date missing (columns: "
                         f"{', '.join(df.columns) or 'none'}). Give a header row 'date,inspector,notes'")
    days = _date_column(df, label, is_file)
    out = pd.DataFrame({
        "date": days,
        "inspector": df["inspector"].astype(str) if "inspector" in df.columns else "",
        "notes": df["notes"].astype(str) if "notes" in df.columns else "",
    })
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

