"""Stormwater permits (SWP-001..008): disturbed acreage, Conditions A/B/C, phasing, inspections.

Vestal L.L. No. 3 of 2007 and Lockport Code ch. 159 are the same model law with differences;
the differences are data in each rulebook (``applies_to`` of SWP-007, ``logging_exempt`` of
SWP-006, the ``common_plan_test`` switch of SWP-001). This module computes:

* **Disturbed acreage** -- the area of the *union* of the ``disturbance`` polygons (overlaps
  counted once) together with the footprints of landings and log haul roads, which the logging
  exemption does not cover (SWP-006): a landing polygon as mapped, a landing point as a disc of
  ``default_landing_area_sqft``, a haul road as a flat-ended strip ``haul_road_width_ft`` wide
  (length x width on a straight road; bends and overlaps counted once). Footprints connected to
  the disturbance (touching it, directly or through each other) belong to that project; the others
  are measured as a second activity, the harvest plan (see :func:`build_sites`).
* **Phasing** (SWP-005) -- from ``start`` and ``stabilized`` dates a sweep over the sorted change
  dates. A polygon is disturbed on the days ``start <= day < stabilized``: the stabilisation date
  itself counts as stabilised. In each interval the active polygons are unioned, so overlapping
  phases count once. The series is the ``disturbance_timeline`` table; its maximum is the peak.
* **Inspections** (SWP-007) -- every ``inspection_interval_days`` from the first start to the last
  stabilisation, and after each storm event of ``storm_threshold_in`` or more (one day's total, or
  with the ``storm_event`` switch the total of consecutive wet days), from a daily rainfall CSV;
  an inspection log is matched against that schedule.

Every number comes from the rulebook; checks return a finding for every subject they examine.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from .errors import FieldError, InputError, LayerReadError, RulebookError
from .findings import Finding
from .layers import Layers
from .result import Result, make_result
from .rules import Rule, Rulebook, check, run_group
from .units import sqft_to_acres

log = logging.getLogger(__name__)

AREA_TOL_ACRES = 1e-6
"""Numerical tolerance (about 0.04 sq ft) when comparing a computed area with an acreage
threshold, so a square drawn to be exactly 5 acres is 5 acres. Not a legal threshold."""

PRECIP_TOL_IN = 1e-9
"""Numerical tolerance for summed rainfall compared with the storm threshold."""

DAY = pd.Timedelta(days=1)
SUBJECT = "project"
_LANDING_SEGMENTS = 16  # quarter-circle segments of the disc drawn for a landing point


# ------------------------------------------------------------------------------------------------
# small helpers

def _fmt(v: float, nd: int = 2) -> str:
    return f"{v:,.{nd}f}"


def _day(ts: Any) -> str:
    return pd.Timestamp(ts).strftime("%Y-%m-%d")


def _list(items: Sequence[str], n: int = 10) -> str:
    items = list(items)
    return ", ".join(items[:n]) + (f" (+{len(items) - n} more)" if len(items) > n else "")


def _blank(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and np.isnan(v):
        return True
    if v is pd.NaT:
        return True
    return isinstance(v, str) and not v.strip()


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
        two apart with :func:`_blank` and raise on the latter).
    """
    s = pd.Series(values)
    if pd.api.types.is_datetime64_any_dtype(s):
        out = pd.to_datetime(s)
    else:
        clean = s.map(lambda v: None if _blank(v) else
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


def _norm_use(v: Any) -> str:
    if _blank(v):
        return ""
    return str(v).strip().lower().replace("-", "_").replace(" ", "_")


# ------------------------------------------------------------------------------------------------
# disturbed area

def harvest_footprints(
    landings: gpd.GeoDataFrame | None,
    haul_roads: gpd.GeoDataFrame | None,
    *,
    haul_road_width_ft: float,
    default_landing_area_sqft: float,
) -> gpd.GeoDataFrame:
    """Footprints of landings and log haul roads, which count as disturbance (SWP-006).

    Parameters
    ----------
    landings : GeoDataFrame or None
        Points or polygons. A polygon is its own footprint; a point becomes a disc whose area is
        exactly ``default_landing_area_sqft``.
    haul_roads : GeoDataFrame or None
        Lines; each becomes a strip ``haul_road_width_ft`` wide with flat ends (area = length x
        width for a straight road).
    haul_road_width_ft, default_landing_area_sqft : float
        From the rulebook (SWP-006).

    Returns
    -------
    GeoDataFrame
        Columns ``feature_id``, ``kind`` (``landing``/``haul_road``), ``length_ft``, ``area_sqft``,
        ``acres`` and the footprint geometry, in the input CRS.
    """
    frames: list[gpd.GeoDataFrame] = []
    crs = None
    if landings is not None and len(landings):
        crs = landings.crs
        geoms = landings.geometry.values
        pts = np.isin(shapely.get_type_id(geoms), (0, 4))  # Point, MultiPoint
        n = 4 * _LANDING_SEGMENTS  # vertices of the buffered disc: area = n/2 r^2 sin(2 pi / n)
        radius = math.sqrt(default_landing_area_sqft / (n / 2 * math.sin(2 * math.pi / n)))
        foot = np.where(pts, shapely.buffer(geoms, radius, quad_segs=_LANDING_SEGMENTS), geoms)
        frames.append(gpd.GeoDataFrame({"feature_id": landings["feature_id"].astype(str).to_numpy(),
                                        "kind": "landing", "length_ft": np.nan}, geometry=foot, crs=crs))
    if haul_roads is not None and len(haul_roads):
        crs = haul_roads.crs
        geoms = haul_roads.geometry.values
        foot = shapely.buffer(geoms, haul_road_width_ft / 2.0, cap_style="flat", join_style="mitre")
        frames.append(gpd.GeoDataFrame({"feature_id": haul_roads["feature_id"].astype(str).to_numpy(),
                                        "kind": "haul_road", "length_ft": shapely.length(geoms)},
                                       geometry=foot, crs=crs))
    if not frames:
        return gpd.GeoDataFrame({"feature_id": [], "kind": [], "length_ft": [], "area_sqft": [], "acres": []},
                                geometry=gpd.GeoSeries([], crs=crs), crs=crs)
    out = pd.concat(frames, ignore_index=True)
    out = gpd.GeoDataFrame(out, geometry="geometry", crs=crs)
    out["area_sqft"] = shapely.area(out.geometry.values)
    out["acres"] = sqft_to_acres(out["area_sqft"])
    return out


def union_acres(geoms: Any) -> tuple[Any, float]:
    """Union of polygons (overlaps counted once) and its area in acres (CRS in feet)."""
    arr = np.asarray(geoms, dtype=object)
    if len(arr) == 0:
        return None, 0.0
    u = shapely.union_all(arr)
    return u, float(sqft_to_acres(shapely.area(u)))


# ------------------------------------------------------------------------------------------------
# phasing (SWP-005)

@dataclass
class Phasing:
    """The concurrently disturbed area over the whole schedule.

    Attributes
    ----------
    timeline : DataFrame
        One row per interval between change dates: ``date_from``, ``date_to`` (last day, inclusive),
        ``days``, ``active_ids``, ``n_active``, ``disturbed_acres``, ``peak``.
    peak_acres : float
        Largest concurrently disturbed area.
    peak_periods : list of (Timestamp, Timestamp)
        First and last day (inclusive) of each period at the peak.
    peak_ids : list of str
        Polygons disturbed during the first peak period.
    peak_geometry : shapely geometry or None
        Their union.
    start, end : Timestamp
        First start and last stabilisation date.
    """

    timeline: pd.DataFrame
    peak_acres: float
    peak_periods: list[tuple[pd.Timestamp, pd.Timestamp]]
    peak_ids: list[str]
    peak_geometry: Any
    start: pd.Timestamp
    end: pd.Timestamp


@dataclass
class PhasingDates:
    """Parsed phasing dates of the disturbance polygons."""

    start: pd.Series
    stabilized: pd.Series
    undated: list[str] = field(default_factory=list)
    has_fields: bool = True

    @property
    def complete(self) -> bool:
        """Every polygon has both dates."""
        return self.has_fields and not self.undated


def phasing_dates(disturbance: gpd.GeoDataFrame, *, what: str = "layer disturbance") -> PhasingDates:
    """Read ``start`` and ``stabilized`` of each disturbance polygon.

    Raises
    ------
    InputError
        A date that cannot be read, or a stabilisation date before the start (naming the polygons).
    """
    ids = disturbance["feature_id"].astype(str)
    if "start" not in disturbance.columns or "stabilized" not in disturbance.columns:
        nat = pd.Series(pd.NaT, index=disturbance.index, dtype="datetime64[ns]")
        return PhasingDates(nat, nat, list(ids), has_fields=False)
    parsed = {}
    for col in ("start", "stabilized"):
        raw = disturbance[col]
        days = parse_days(raw)
        bad = days.isna() & ~raw.map(_blank)
        if bad.any():
            shown = [f"{i} ({raw[k]!r})" for k, i in zip(raw.index[bad], ids[bad])]
            raise InputError(f"{what}: field {col} holds values that are not dates for polygons "
                             f"{_list(shown)}. Write dates as YYYY-MM-DD")
        parsed[col] = days
    start, stab = parsed["start"], parsed["stabilized"]
    rev = start.notna() & stab.notna() & (stab < start)
    if rev.any():
        shown = [f"{i} (start {_day(a)}, stabilized {_day(b)})"
                 for i, a, b in zip(ids[rev], start[rev], stab[rev])]
        raise InputError(f"{what}: stabilized date before the start date for polygons {_list(shown)}. "
                         f"Fix the dates (or swap them)")
    undated = list(ids[start.isna() | stab.isna()])
    return PhasingDates(start, stab, undated)


def phasing_timeline(disturbance: gpd.GeoDataFrame, dates: PhasingDates) -> Phasing:
    """Sweep the sorted change dates; in each interval union the polygons then disturbed.

    A polygon is disturbed on the days ``start <= day < stabilized`` (the stabilisation date
    counts as stabilised). Intervals with nothing disturbed between phases are kept (0 acres).

    Parameters
    ----------
    disturbance : GeoDataFrame
        Polygons with ``feature_id``, in a CRS in feet.
    dates : PhasingDates
        Complete dates (see :func:`phasing_dates`).

    Returns
    -------
    Phasing
    """
    if not dates.complete:
        raise InputError(f"layer disturbance: polygons {_list(dates.undated)} have no start or stabilized "
                         f"date; the phasing timeline needs both for every polygon")
    geoms = disturbance.geometry.values
    ids = disturbance["feature_id"].astype(str).to_numpy()
    start = dates.start.to_numpy(dtype="datetime64[ns]")
    stab = dates.stabilized.to_numpy(dtype="datetime64[ns]")
    change = np.unique(np.concatenate([start, stab]))
    t0, t1 = change[:-1], change[1:]
    active = (start[:, None] <= t0[None, :]) & (stab[:, None] > t0[None, :])  # polygon x interval
    acres = np.zeros(len(t0))
    sets, inverse = (np.unique(active.T, axis=0, return_inverse=True) if len(t0)
                     else (np.zeros((0, len(ids)), bool), np.zeros(0, int)))
    inverse = np.asarray(inverse).ravel()
    set_union: list[Any] = []
    set_acres = np.zeros(len(sets))
    for k, row in enumerate(sets):  # one union per distinct set of active polygons (time, not features)
        u, a = union_acres(geoms[row]) if row.any() else (None, 0.0)
        set_union.append(u)
        set_acres[k] = a
    if len(t0):
        acres = set_acres[inverse]
    peak = float(acres.max()) if len(acres) else 0.0
    is_peak = (acres >= peak - AREA_TOL_ACRES) & (peak > 0) if len(acres) else np.zeros(0, bool)
    timeline = pd.DataFrame({
        "date_from": pd.to_datetime(t0),
        "date_to": pd.to_datetime(t1) - DAY,
        "days": ((t1 - t0) / np.timedelta64(1, "D")).astype(int) if len(t0) else np.zeros(0, int),
        "active_ids": [", ".join(ids[active[:, j]]) for j in range(len(t0))],
        "n_active": active.sum(axis=0).astype(int),
        "disturbed_acres": acres,
        "peak": is_peak,
    })
    periods: list[tuple[pd.Timestamp, pd.Timestamp]] = []
    for j in np.flatnonzero(is_peak):
        p_start, p_end = pd.Timestamp(t0[j]), pd.Timestamp(t1[j]) - DAY
        if periods and periods[-1][1] + DAY == p_start:
            periods[-1] = (periods[-1][0], p_end)
        else:
            periods.append((p_start, p_end))
    first = int(np.flatnonzero(is_peak)[0]) if is_peak.any() else None
    peak_ids = list(ids[active[:, first]]) if first is not None else []
    peak_geom = set_union[inverse[first]] if first is not None else None
    return Phasing(timeline, peak, periods, peak_ids, peak_geom,
                   pd.Timestamp(change.min()), pd.Timestamp(change.max()))


# ------------------------------------------------------------------------------------------------
# rainfall and inspections (SWP-007)

def _read_table(source: str | os.PathLike[str] | pd.DataFrame, what: str) -> tuple[pd.DataFrame, str, bool]:
    """A CSV (as text) or a DataFrame copy with stripped lower-case column names."""
    if isinstance(source, pd.DataFrame):
        df, label, is_file = source.copy(), f"{what} table", False
    else:
        path = Path(source)
        label, is_file = path.name, True
        if not path.is_file():
            raise LayerReadError(f"{what} file {path} does not exist. Give the path of a CSV file")
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
    return f"{label} {'line' if is_file else 'row'}{'s' if len(rows) > 1 else ''} {_list(rows)}"


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
    blank = np.flatnonzero(raw_p.map(_blank).to_numpy())
    if len(blank):
        raise InputError(f"{_where(label, is_file, blank)}: precip_in is empty. A missing day is not a dry "
                         f"day: enter the gauge value (0 for a dry day)")
    precip = pd.to_numeric(raw_p, errors="coerce")
    nonnum = np.flatnonzero(precip.isna().to_numpy())
    if len(nonnum):
        raise InputError(f"{_where(label, is_file, nonnum)}: precip_in {raw_p.iloc[nonnum[0]]!r} is not a "
                         f"number. Give inches as a number (0 for a dry day or a trace)")
    neg = np.flatnonzero((precip < 0).to_numpy())
    if len(neg):
        raise InputError(f"{_where(label, is_file, neg)}: precip_in {precip.iloc[neg[0]]:g} is negative. "
                         f"Rainfall is 0 or more inches")
    dup = days.duplicated(keep=False)
    if dup.any():
        shown = sorted({_day(d) for d in days[dup]})
        raise InputError(f"rainfall {label}: dates {_list(shown)} appear more than once. Give one total per day")
    out = pd.DataFrame({"date": days, "precip_in": precip.astype(float)}).sort_values("date", ignore_index=True)
    full = pd.date_range(out["date"].iloc[0], out["date"].iloc[-1], freq="D")
    missing = full.difference(pd.DatetimeIndex(out["date"]))
    if len(missing):
        raise InputError(f"rainfall {label}: {len(missing)} day(s) missing from the series: "
                         f"{_list([_day(d) for d in missing])}. A missing day is not a dry day: add "
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


def storm_events(
    rainfall: pd.DataFrame,
    *,
    storm_threshold_in: float,
    storm_event: str = "daily",
    wet_day_min_in: float = 0.01,
) -> pd.DataFrame:
    """Storm events producing ``storm_threshold_in`` or more.

    Parameters
    ----------
    rainfall : DataFrame
        From :func:`read_rainfall` (consecutive days).
    storm_threshold_in : float
        A storm produces at least this much (``>=``).
    storm_event : {"daily", "consecutive_wet_days"}
        ``daily``: one day's total is an event. ``consecutive_wet_days``: a run of consecutive days
        each with at least ``wet_day_min_in`` is one event with the run's total; it ends (and the
        24 hours start) on the run's last day.
    wet_day_min_in : float
        Smallest daily total of a wet day (rulebook).

    Returns
    -------
    DataFrame
        ``first_day``, ``trigger_date`` (the day the event ends), ``days``, ``precip_in``.
    """
    if storm_event not in ("daily", "consecutive_wet_days"):
        raise RulebookError(f"SWP-007 switch storm_event={storm_event!r} is not one of daily, "
                            f"consecutive_wet_days")
    r = rainfall.reset_index(drop=True)
    if storm_event == "daily":
        ev = r[r["precip_in"] >= storm_threshold_in - PRECIP_TOL_IN]
        return pd.DataFrame({"first_day": ev["date"].to_numpy(), "trigger_date": ev["date"].to_numpy(),
                             "days": 1, "precip_in": ev["precip_in"].to_numpy()})
    wet = r["precip_in"] >= wet_day_min_in - PRECIP_TOL_IN
    run = (~wet).cumsum()  # consecutive wet days share a run number (the series has no gaps)
    g = r[wet].groupby(run[wet])
    runs = pd.DataFrame({"first_day": g["date"].min(), "trigger_date": g["date"].max(),
                         "days": g["date"].size(), "precip_in": g["precip_in"].sum()})
    runs = runs[runs["precip_in"] >= storm_threshold_in - PRECIP_TOL_IN]
    return runs.reset_index(drop=True)


def inspection_schedule(
    start: pd.Timestamp,
    end: pd.Timestamp,
    events: pd.DataFrame | None,
    *,
    inspection_interval_days: float,
    inspection_within_hours: float,
) -> pd.DataFrame:
    """Required inspections from the first start to the last stabilisation.

    Weekly: due every ``inspection_interval_days`` after ``start`` up to and including ``end``; met
    by a logged inspection in the ``inspection_interval_days`` days ending on the due date. Storm:
    one per event whose trigger date is in ``[start, end)``, due within ``inspection_within_hours``
    (daily data: on the trigger day or the next day for 24 h).

    Returns
    -------
    DataFrame
        ``due``, ``reason`` (``weekly``/``storm``), ``trigger_date``, ``precip_in``,
        ``window_start``, ``window_end``, sorted by due date.
    """
    step = int(inspection_interval_days)
    within = math.ceil(inspection_within_hours / 24.0)
    n = int((end - start).days // step) if end > start else 0
    due = pd.DatetimeIndex([start + pd.Timedelta(days=step * k) for k in range(1, n + 1)])
    weekly = pd.DataFrame({"due": due, "reason": "weekly", "trigger_date": pd.NaT, "precip_in": np.nan,
                           "window_start": due - pd.Timedelta(days=step - 1), "window_end": due})
    frames = [weekly]
    if events is not None and len(events):
        ev = events[(events["trigger_date"] >= start) & (events["trigger_date"] < end)]
        trig = pd.DatetimeIndex(ev["trigger_date"])
        frames.append(pd.DataFrame({"due": trig + pd.Timedelta(days=within), "reason": "storm",
                                    "trigger_date": trig, "precip_in": ev["precip_in"].to_numpy(),
                                    "window_start": trig, "window_end": trig + pd.Timedelta(days=within)}))
    out = pd.concat([f for f in frames if len(f)] or [weekly], ignore_index=True)
    out["trigger_date"] = pd.to_datetime(out["trigger_date"])
    return out.sort_values(["due", "reason"], kind="stable", ignore_index=True)


def match_inspections(schedule: pd.DataFrame, inspections: pd.DataFrame | None) -> pd.DataFrame:
    """Mark each required inspection ``met`` or ``missed`` against a log (``scheduled`` without one).

    A required inspection is met by any logged inspection dated within its window
    (``window_start`` to ``window_end``, inclusive); the earliest such date is reported.
    """
    out = schedule.copy()
    if inspections is None:
        out["status"] = "scheduled"
        out["inspection_date"] = pd.NaT
        out["inspector"] = ""
        return out
    dates = inspections["date"].to_numpy(dtype="datetime64[ns]")
    lo = np.searchsorted(dates, out["window_start"].to_numpy(dtype="datetime64[ns]"), side="left")
    hi = np.searchsorted(dates, out["window_end"].to_numpy(dtype="datetime64[ns]"), side="right")
    met = lo < hi
    idx = np.minimum(lo, max(len(dates) - 1, 0))
    out["status"] = np.where(met, "met", "missed")
    out["inspection_date"] = pd.to_datetime(np.where(met, dates[idx] if len(dates) else np.datetime64("NaT"),
                                                     np.datetime64("NaT")))
    insp = inspections["inspector"].astype(str).to_numpy()
    out["inspector"] = np.where(met, insp[idx] if len(insp) else "", "")
    return out


# ------------------------------------------------------------------------------------------------
# sites (the land development activities measured) and context

@dataclass
class Site:
    """One land development activity measured for SWP-001..004.

    The ``disturbance`` layer is one project, together with every landing / haul-road footprint
    connected to it (touching it directly or through other footprints). Footprints not connected
    to it form a second subject, the harvest plan, so an unrelated logging job elsewhere in the
    same GeoPackage is not added to a subdivision's acreage.
    """

    layer: str
    id: str
    geometry: Any
    acres: float
    detail: str
    uses: list[str]
    dated: bool = False


def _footprint_clause(fp: gpd.GeoDataFrame, road_width_ft: float) -> str:
    nl = int((fp["kind"] == "landing").sum())
    roads = fp[fp["kind"] == "haul_road"]
    bits = []
    if nl:
        bits.append(f"{nl} landing(s)")
    if len(roads):
        bits.append(f"{_fmt(float(roads['length_ft'].sum()), 0)} ft of haul road x {_fmt(road_width_ft, 0)} ft")
    return " and ".join(bits)


def build_sites(disturbance: gpd.GeoDataFrame | None, footprints: gpd.GeoDataFrame, *,
                road_width_ft: float) -> list[Site]:
    """Group the disturbance polygons and the harvest footprints into the activities measured.

    Returns
    -------
    list of Site
        The disturbance project (with the footprints connected to it) first, then the harvest
        plan's other footprints; areas are unions (overlaps counted once), in acres.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    sites: list[Site] = []
    fp = footprints
    attached = np.zeros(len(fp), dtype=bool)
    if disturbance is not None:
        dgeoms = disturbance.geometry.values
        d_union, d_acres = union_acres(dgeoms)
        if len(fp):
            nodes = np.concatenate([[d_union], fp.geometry.values])
            a, b = shapely.STRtree(nodes).query(nodes, predicate="intersects")
            graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(len(nodes), len(nodes)))
            _n, label = connected_components(graph, directed=False)
            attached = label[1:] == label[0]
        geom, acres = union_acres(np.concatenate([dgeoms, fp.geometry.values[attached]]))
        detail = f"union of {len(disturbance)} disturbance polygon(s): {_fmt(d_acres)} acres"
        if attached.any():
            detail += (f"; plus connected {_footprint_clause(fp[attached], road_width_ft)}; "
                       f"together {_fmt(acres)} acres")
        uses = list(disturbance["use"]) if "use" in disturbance.columns else [""] * len(disturbance)
        sites.append(Site("disturbance", SUBJECT, geom, acres, detail + "; overlaps counted once",
                          uses + [""] * int(attached.sum()), dated=True))
    rest = fp[~attached]
    if len(rest):
        geom, acres = union_acres(rest.geometry.values)
        detail = (f"{_footprint_clause(rest, road_width_ft)}: {_fmt(acres)} acres, overlaps counted once; the "
                  f"harvest area itself is not counted (SWP-006)")
        if disturbance is not None:
            detail += "; not connected to the disturbance layer, so measured as its own activity"
        sites.append(Site("harvest plan", "landings and haul roads", geom, acres, detail, [""] * len(rest)))
    return sites


@dataclass
class StormwaterContext:
    """What the SWP checks read: layers, the measured sites and the parsed schedule inputs."""

    layers: Layers
    rulebook: Rulebook
    disturbance: gpd.GeoDataFrame | None
    footprints: gpd.GeoDataFrame
    sites: list[Site] = field(default_factory=list)
    dates: PhasingDates | None = None
    phasing: Phasing | None = None
    rainfall: pd.DataFrame | None = None
    inspections_log: pd.DataFrame | None = None
    schedule: pd.DataFrame | None = None
    approved_swppp: bool = False
    larger_common_plan: bool | float = False
    road_width_ft: float = 0.0

    @property
    def crs(self) -> Any:
        return self.layers.crs

    @property
    def project(self) -> Site | None:
        """The disturbance project (the dated one), if a disturbance layer was given."""
        return next((s for s in self.sites if s.dated), None)

    @property
    def footprint_acres(self) -> float:
        """Acres of all landing and haul-road footprints (union)."""
        return union_acres(self.footprints.geometry.values)[1] if len(self.footprints) else 0.0


# ------------------------------------------------------------------------------------------------
# conditions shared by several rules

def land_development(acres: float, larger_common_plan: bool | float, rule: Rule) -> tuple[bool, str, str]:
    """SWP-001: is this a land development activity? ``(applies, status, detail)``."""
    min_acres = rule.t("min_disturbed_acres")
    if acres >= min_acres - AREA_TOL_ACRES:
        return True, "review", f"at least {min_acres:g} acre"
    if larger_common_plan is False or larger_common_plan is None:
        return False, "pass", "not stated to be part of a larger common plan of development or sale"
    test = rule.s("common_plan_test")
    if test == "any_part":
        return True, "review", ("under the acreage, but part of a larger common plan of development or "
                                "sale (reading common_plan_test=any_part)")
    agg = rule.thresholds.get("common_plan_aggregate_acres", rule.params.get("common_plan_aggregate_acres"))
    if agg is None:
        raise RulebookError(f"rule SWP-001 in rulebook {rule.rulebook!r}: common_plan_test=aggregate_min needs "
                            f"a threshold common_plan_aggregate_acres")
    agg = float(agg)
    if isinstance(larger_common_plan, (bool, np.bool_)):
        return True, "review", (f"part of a larger common plan; covered if the plan disturbs {agg:g} acre or "
                                f"more in the aggregate (reading common_plan_test=aggregate_min): the "
                                f"aggregate was not given, confirm it")
    total = float(larger_common_plan)
    if total >= agg - AREA_TOL_ACRES:
        return True, "review", (f"part of a larger common plan disturbing {_fmt(total)} acres in the "
                                f"aggregate, at least {agg:g} acre")
    return False, "pass", (f"the larger common plan disturbs {_fmt(total)} acres in the aggregate, under "
                           f"{agg:g} acre")


def condition_b(acres: float, rule: Rule) -> bool:
    """SWP-003 Condition B: at least ``min_acres`` disturbed."""
    return acres >= rule.t("min_acres") - AREA_TOL_ACRES


def condition_c(acres: float, uses: Sequence[str], rule: Rule) -> tuple[bool, str, str]:
    """SWP-004 Condition C: ``min_acres`` to under ``max_acres``, except exempt uses.

    Returns ``(applies, status, detail)``. The exclusion applies when every disturbance polygon's
    ``use`` is one of ``exempt_uses`` (a project wholly of single-family or agricultural construction).
    """
    lo, hi = rule.t("min_acres"), rule.t("max_acres")
    a = _fmt(acres)
    if acres < lo - AREA_TOL_ACRES:
        return False, "pass", f"{a} acres disturbed, under {lo:g} acre: Condition C does not apply"
    if acres >= hi - AREA_TOL_ACRES:
        return False, "pass", (f"{a} acres disturbed, {hi:g} acres or more: Condition B applies instead "
                               f"(SWP-003), not Condition C")
    exempt = {_norm_use(u) for u in rule.p("exempt_uses")}
    used = [_norm_use(u) for u in uses]
    if used and all(u in exempt for u in used):
        kinds = ", ".join(sorted(set(used)))
        return False, "pass", (f"{a} acres disturbed, but Condition C excludes the construction of single-family "
                               f"residences and construction at agricultural properties: every disturbance "
                               f"polygon's use is {kinds}")
    if not any(used):
        return True, "review", "no use stated, so the single-family / agricultural exclusion is not established"
    others = sorted({u or "not stated" for u in used if u not in exempt})
    return True, "review", (f"uses {', '.join(others)} are not excluded (only single-family or agricultural "
                            f"construction is)")


def _impaired_distance(ctx: StormwaterContext, site: Site) -> tuple[float, str, Any] | None:
    """Distance (ft) from a site to the nearest impaired water, its label, and the shortest line."""
    waters = ctx.layers.get_layer("impaired_waters")
    if waters is None or site.geometry is None:
        return None
    d = shapely.distance(site.geometry, waters.geometry.values)
    k = int(np.argmin(d))
    name = waters["name"].iloc[k] if "name" in waters.columns and not _blank(waters["name"].iloc[k]) else ""
    label = f"{waters['feature_id'].iloc[k]}" + (f" ({name})" if name else "")
    return float(d[k]), label, shapely.shortest_line(site.geometry, waters.geometry.values[k])


def _rule_or_none(rb: Rulebook, rid: str) -> Rule | None:
    return rb.rules.get(rid)


def swp007_applies(ctx: StormwaterContext, rule: Rule, site: Site | None) -> tuple[bool | None, str]:
    """Whether SWP-007 inspections are required for ``site``, from ``applies_to`` and the conditions.

    ``all_land_development`` (Vestal): every land development activity (SWP-001).
    ``conditions_abc`` (Lockport): only when Condition A, B or C applies. ``None`` when unknown.
    """
    applies_to = rule.p("applies_to")
    if site is None:
        return None, "no disturbance layer given"
    rb = ctx.rulebook
    acres = site.acres
    if applies_to == "all_land_development":
        r1 = _rule_or_none(rb, "SWP-001")
        if r1 is None:
            return True, "the rulebook has no SWP-001; inspections taken as required"
        ok, _st, why = land_development(acres, ctx.larger_common_plan, r1)
        if ok:
            return True, f"land development activity ({_fmt(acres)} acres; {why}); applies_to=all_land_development"
        return False, (f"not a land development activity ({_fmt(acres)} acres; {why}), so no inspections "
                       f"are required (applies_to=all_land_development)")
    if applies_to == "conditions_abc":
        met, unknown = [], []
        r3, r4, r2 = (_rule_or_none(rb, i) for i in ("SWP-003", "SWP-004", "SWP-002"))
        if r3 is not None and condition_b(acres, r3):
            met.append("B")
        if r4 is not None and condition_c(acres, site.uses, r4)[0]:
            met.append("C")
        if r2 is not None:
            dist = _impaired_distance(ctx, site)
            if dist is None:
                unknown.append("A (no impaired_waters layer)")
            elif dist[0] <= r2.t("impaired_water_distance_ft"):
                met.append("A")
        if met:
            return True, f"Condition {', '.join(met)} applies (applies_to=conditions_abc)"
        if unknown:
            return None, (f"Conditions B and C do not apply and Condition {', '.join(unknown)} could not be "
                          f"checked (applies_to=conditions_abc)")
        return False, ("none of Conditions A, B, C applies, so inspections are not required "
                       "(applies_to=conditions_abc)")
    raise RulebookError(f"rule SWP-007 in rulebook {rule.rulebook!r}: param applies_to={applies_to!r} is not "
                        f"all_land_development or conditions_abc")


# ------------------------------------------------------------------------------------------------
# checks

def _no_site(rule: Rule) -> list[Finding]:
    return [rule.finding("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT,
                         detail="no disturbance layer and no landings or haul roads given")]


@check("SWP-001")
def check_swppp_required(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-001: disturbance of 1 acre or more (or part of a larger common plan) needs an SWPPP."""
    if not ctx.sites:
        return _no_site(rule)
    out = []
    for s in ctx.sites:  # at most two activities (the project, the harvest plan)
        _ok, status, why = land_development(s.acres, ctx.larger_common_plan, rule)
        out.append(rule.finding(status, subject_layer=s.layer, subject_id=s.id, measured=s.acres,
                                threshold=rule.t("min_disturbed_acres"), unit="acres", geometry=s.geometry,
                                detail=s.detail + ("; " + why if status == "review" else "")))
    return out


@check("SWP-002")
def check_condition_a(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-002 Condition A: proximity of the disturbance to a 303(d)/TMDL impaired water.

    The law turns on runoff *discharging* a pollutant of concern to the impaired water; the check
    screens by distance (``impaired_water_distance_ft``) as a proxy and says so, and a human
    confirms the drainage path (``review``).
    """
    if not ctx.sites:
        return _no_site(rule)
    limit = rule.t("impaired_water_distance_ft")
    method = (f"proximity screening: the law turns on runoff discharging a pollutant of concern to the water; "
              f"distance within {limit:g} ft (rulebook impaired_water_distance_ft) is used as a proxy for "
              f"discharge, so a human confirms the drainage path")
    out = []
    for s in ctx.sites:
        dist = _impaired_distance(ctx, s)
        if dist is None:
            out.append(rule.finding("not_evaluated", subject_layer=s.layer, subject_id=s.id, threshold=limit,
                                    unit="ft", detail="no impaired_waters layer given (303(d) / TMDL waters)"))
            continue
        d, label, line = dist
        out.append(rule.finding("review" if d <= limit else "pass", subject_layer=s.layer, subject_id=s.id,
                                measured=d, threshold=limit, unit="ft", geometry=line if d > 0 else s.geometry,
                                detail=f"nearest impaired water {label} at {_fmt(d, 0)} ft; {method}"))
    return out


@check("SWP-003")
def check_condition_b(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-003 Condition B: 5 acres or more disturbed during the course of the project."""
    if not ctx.sites:
        return _no_site(rule)
    return [rule.finding("review" if condition_b(s.acres, rule) else "pass", subject_layer=s.layer,
                         subject_id=s.id, measured=s.acres, threshold=rule.t("min_acres"), unit="acres",
                         geometry=s.geometry, detail=s.detail) for s in ctx.sites]


@check("SWP-004")
def check_condition_c(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-004 Condition C: 1 to 5 acres, except single-family residences and agricultural properties."""
    if not ctx.sites:
        return _no_site(rule)
    out = []
    for s in ctx.sites:
        _ok, status, why = condition_c(s.acres, s.uses, rule)
        out.append(rule.finding(status, subject_layer=s.layer, subject_id=s.id, measured=s.acres,
                                threshold=rule.t("min_acres"), unit="acres", geometry=s.geometry,
                                detail=why if status == "pass" else f"{s.detail}; {why}"))
    return out


@check("SWP-005")
def check_phasing(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-005: peak concurrently disturbed area from the phasing dates, at most 5 acres."""
    limit = rule.t("max_concurrent_acres")
    if ctx.disturbance is None:
        return [rule.finding("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT, threshold=limit,
                             unit="acres", detail="no disturbance layer with start / stabilized dates given")]
    dates = ctx.dates
    assert dates is not None
    if not dates.has_fields:
        return [rule.finding("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT, threshold=limit,
                             unit="acres", detail="the disturbance layer has no start and stabilized fields")]
    if dates.undated:
        return [rule.finding("not_evaluated", subject_layer="disturbance", subject_id=SUBJECT, threshold=limit,
                             unit="acres", detail=(f"polygons {_list(dates.undated)} have no start or stabilized "
                                                   f"date, so the peak cannot be known"))]
    ph = ctx.phasing
    assert ph is not None
    when = "; ".join(f"{_day(a)} to {_day(b)}" for a, b in ph.peak_periods) or "never"
    detail = (f"at its peak from {when} ({', '.join(ph.peak_ids) or 'none'} disturbed); a polygon counts as "
              f"disturbed from its start date up to the day before its stabilized date; overlapping phases "
              f"counted once; series in disturbance_timeline")
    if len(ctx.footprints):
        detail += "; landings and haul roads carry no dates and are not in the timeline"
    over = ph.peak_acres > limit + AREA_TOL_ACRES
    if over and ctx.approved_swppp:
        status, detail = "info", detail + "; the phasing is stated to follow an approved SWPPP"
    else:
        status = "violation" if over else "pass"
    return [rule.finding(status, subject_layer="disturbance", subject_id=SUBJECT, measured=ph.peak_acres,
                         threshold=limit, unit="acres", geometry=ph.peak_geometry, detail=detail)]


@check("SWP-006")
def check_exemptions(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-006: which exemptions apply; landings and log haul roads are never exempt."""
    out: list[Finding] = []
    exemptions = {e["key"]: e for e in rule.p("exemptions")}
    logging_exempt = rule.p("logging_exempt")
    log_key = next((k for k in ("silviculture", "logging_under_timber_plan") if k in exemptions), None)
    harvest = [r for r in ("harvest_area", "landings", "haul_roads") if ctx.layers.get_layer(r) is not None]
    fp = ctx.footprints
    counted = (f"landing areas and log haul roads are subject to the law and counted as disturbance: "
               f"{_fmt(ctx.footprint_acres)} acres ({int((fp['kind'] == 'landing').sum())} landing(s), "
               f"{_fmt(float(fp.loc[fp['kind'] == 'haul_road', 'length_ft'].sum()), 0)} ft of haul road); "
               f"the harvest area itself is not in the disturbance count")
    cite = f" ({exemptions[log_key]['citation']})" if log_key else ""
    if not harvest:
        out.append(rule.finding("info", subject_layer="harvest plan", subject_id="logging",
                                detail=f"no harvest_area, landings or haul_roads given: the logging exemption{cite} "
                                       f"was not considered"))
    elif logging_exempt == "timber_management_plan_only":
        out.append(rule.finding("review", subject_layer="harvest plan", subject_id="logging", geometry=(
            shapely.union_all(fp.geometry.values) if len(fp) else None), measured=ctx.footprint_acres, unit="acres",
            detail=(f"logging is exempt only under a timber management plan prepared or approved by the county soil "
                    f"and water conservation district or the DEC{cite} (a town timber harvesting licence is not "
                    f"such a plan): confirm the plan, otherwise the harvest's soil disturbance is not exempt; "
                    f"{counted}")))
    elif logging_exempt == "silviculture_except_landings_haul_roads":
        out.append(rule.finding("info", subject_layer="harvest plan", subject_id="logging", geometry=(
            shapely.union_all(fp.geometry.values) if len(fp) else None), measured=ctx.footprint_acres, unit="acres",
            detail=f"silvicultural activity is exempt{cite}, except that {counted}"))
    else:
        raise RulebookError(f"rule SWP-006 in rulebook {rule.rulebook!r}: param logging_exempt={logging_exempt!r} "
                            f"is not timber_management_plan_only or silviculture_except_landings_haul_roads")
    claimed: set[str] = set()
    d = ctx.disturbance
    if d is not None and "use" in d.columns:
        uses = d["use"].map(_norm_use)
        hit = uses.isin(list(exemptions))
        for fid, use, geom in zip(d["feature_id"][hit], uses[hit], d.geometry.values[hit.to_numpy()]):
            e = exemptions[use]
            claimed.add(use)
            out.append(rule.finding("info", subject_layer="disturbance", subject_id=fid, geometry=geom, detail=(
                f"use {use} matches the exemption '{e['text']}' ({e['citation']}): exempt only if the facts bear "
                f"it out (a human confirms); the polygon is still counted in the acreage"
                + ("; construction at an agricultural property is not agricultural activity (it is only "
                   "excluded from Condition C)" if use == "agricultural" else ""))))
    rest = [f"{e['key']} ({e['citation']})" for k, e in exemptions.items() if k not in claimed and k != log_key]
    out.append(rule.finding("info", subject_layer="disturbance", subject_id="other exemptions",
                            detail=(f"not shown by the layers, to confirm with the applicant: {', '.join(rest)}")))
    return out


@check("SWP-007")
def check_inspections(ctx: StormwaterContext, rule: Rule) -> list[Finding | gpd.GeoDataFrame]:
    """SWP-007: required inspections every 7 days and after 0.5 in storms; the log checked against them."""
    subj = "inspections"
    out: list[Finding | gpd.GeoDataFrame] = []
    for s in ctx.sites:  # undated activities (the harvest plan's landings and haul roads)
        if not s.dated and swp007_applies(ctx, rule, s)[0] is not False:
            out.append(rule.finding("not_evaluated", subject_layer=subj, subject_id=s.id, detail=(
                f"{s.layer} {s.id} carry no start / stabilized dates, so the inspections they need cannot be "
                f"scheduled")))
    applies, why = swp007_applies(ctx, rule, ctx.project)
    if applies is False:
        return out + [rule.finding("pass", subject_layer=subj, subject_id="schedule",
                                   detail=f"not required: {why}")]
    if applies is None:
        return out + [rule.finding("not_evaluated", subject_layer=subj, subject_id="schedule", detail=why)]
    dates = ctx.dates
    if dates is None or not dates.complete:
        missing = "no start / stabilized dates" if dates is None or not dates.has_fields else (
            f"polygons {_list(dates.undated)} have no start or stabilized date")
        return out + [rule.finding("not_evaluated", subject_layer=subj, subject_id="schedule",
                                   detail=f"{missing}, so the inspection period is unknown; {why}")]
    sch = ctx.schedule
    assert sch is not None and ctx.phasing is not None
    who = str(rule.p("inspector")).replace("_", " ")
    period = f"{_day(ctx.phasing.start)} to {_day(ctx.phasing.end)}"
    thr = rule.t("storm_threshold_in")
    if ctx.rainfall is None:
        out.append(rule.finding("not_evaluated", subject_layer=subj, subject_id="storm inspections",
                                threshold=thr, unit="in",
                                detail="no rainfall series given (--rainfall), so inspections after storm events "
                                       "are not scheduled or checked"))
    nw = int((sch["reason"] == "weekly").sum())
    ns = int((sch["reason"] == "storm").sum())
    reading = f"storm_event={rule.s('storm_event')}"
    if ctx.inspections_log is None:
        storms = f"{ns} after storm events of {thr:g} in or more ({reading})" if ctx.rainfall is not None else \
            "storm inspections not scheduled (no rainfall)"
        out.append(rule.finding("info", subject_layer=subj, subject_id="schedule", measured=len(sch), unit="count",
                                detail=(f"{len(sch)} inspections required by the {who} from {period}: {nw} every "
                                        f"{rule.t('inspection_interval_days'):g} days and {storms}; {why}; no "
                                        f"inspection log given, so none is checked; list in inspections")))
        return out
    labels = np.where(sch["reason"] == "weekly", "weekly due " + sch["due"].dt.strftime("%Y-%m-%d"),
                      "storm of " + sch["trigger_date"].dt.strftime("%Y-%m-%d"))
    met = sch["status"] == "met"
    win = sch["window_start"].dt.strftime("%Y-%m-%d") + " to " + sch["window_end"].dt.strftime("%Y-%m-%d")
    insp = sch["inspector"].where(sch["inspector"].str.strip() != "", "inspector not stated")
    found = ("inspection logged " + sch["inspection_date"].dt.strftime("%Y-%m-%d") + " (" + insp + ")")
    rain = np.where(sch["reason"] == "storm",
                    sch["precip_in"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}") + " in; ", "")
    detail = pd.Series(rain, dtype=object) + pd.Series(
        np.where(met, found + ", within " + win, "no logged inspection from " + win), dtype=object)
    out.append(rule.findings(np.where(met, "pass", "violation"), subject_layer=subj, subject_id=labels,
                             measured=sch["precip_in"], threshold=np.where(sch["reason"] == "storm", thr, np.nan),
                             unit="in", detail=detail, crs=ctx.crs))
    return out


@check("SWP-008")
def check_checklist(ctx: StormwaterContext, rule: Rule) -> list[Finding]:
    """SWP-008: checklist items the geometry cannot check (``info``), from the rulebook's numbers."""
    th = rule.thresholds
    out: list[Finding] = []

    def item(subject: str, text: str) -> None:
        out.append(rule.finding("info", subject_id=subject, detail=text))

    if "site_map_scale_ft_per_in" in th:
        item("site map", f"SWPPP site map at a scale no smaller than 1 inch = {th['site_map_scale_ft_per_in']:g} ft")
    if "sediment_trap_cleanout_pct" in th:
        item("sediment traps", f"sediment removed from traps and ponds when their design capacity is reduced by "
                               f"{th['sediment_trap_cleanout_pct']:g} %")
    if "notice_hours" in th:
        stages = ", ".join(str(s).replace("_", " ") for s in rule.p("notice_stages", []))
        to = str(rule.p("notice_to", "the town")).replace("_", " ")
        item("notice", f"{th['notice_hours']:g} hours' notice to the {to} before: {stages}")
    smo = [f"{th[k]:g} days to {k.split('_')[1]}" for k in ("smo_recommendation_days", "smo_decision_days") if k in th]
    if smo:
        item("SMO deadlines", "stormwater management officer: " + "; ".join(smo))
    if "first_offence_max_fine_usd" in th:
        jail = (f"{th['max_jail_days']:g} days" if "max_jail_days" in th else
                f"{th['max_jail_months']:g} months" if "max_jail_months" in th else "as the law provides")
        window = f" within {th['repeat_offence_window_months'] / 12:g} years" if "repeat_offence_window_months" in th else ""
        item("penalties", (f"first offence fine up to ${th['first_offence_max_fine_usd']:,.0f}; second "
                           f"${th.get('second_offence_min_fine_usd', 0):,.0f} to ${th.get('second_offence_max_fine_usd', 0):,.0f}; "
                           f"third ${th.get('third_offence_min_fine_usd', 0):,.0f} to "
                           f"${th.get('third_offence_max_fine_usd', 0):,.0f}{window}; imprisonment up to {jail}; "
                           f"each week's continued violation is a separate violation"))
    prep = rule.p("swppp_preparer", None)
    if prep:
        item("SWPPP preparer", "prepared by: " + ", ".join(str(p).replace("_", " ") for p in prep))
    return out


# ------------------------------------------------------------------------------------------------
# entry point

def _derived(ctx: StormwaterContext) -> dict[str, gpd.GeoDataFrame]:
    crs = ctx.crs
    out: dict[str, gpd.GeoDataFrame] = {}
    if ctx.sites:
        out["disturbed_area"] = gpd.GeoDataFrame(
            {"subject_layer": [s.layer for s in ctx.sites], "subject_id": [s.id for s in ctx.sites],
             "acres": [s.acres for s in ctx.sites]}, geometry=[s.geometry for s in ctx.sites], crs=crs)
    if len(ctx.footprints):
        out["harvest_footprints"] = ctx.footprints.copy()
    if ctx.phasing is not None and ctx.phasing.peak_geometry is not None:
        ph = ctx.phasing
        out["peak_disturbance"] = gpd.GeoDataFrame(
            {"acres": [ph.peak_acres], "active_ids": [", ".join(ph.peak_ids)],
             "date_from": [_day(ph.peak_periods[0][0])], "date_to": [_day(ph.peak_periods[0][1])]},
            geometry=[ph.peak_geometry], crs=crs)
    return out


def check_stormwater(
    layers: Layers,
    rulebook: Rulebook,
    *,
    rainfall: str | os.PathLike[str] | pd.DataFrame | None = None,
    inspection_log: str | os.PathLike[str] | pd.DataFrame | None = None,
    approved_swppp: bool = False,
    larger_common_plan: bool | float = False,
) -> Result:
    """Run the stormwater rules (SWP-001..008) on a disturbance / phasing plan.

    Parameters
    ----------
    layers : Layers
        ``disturbance`` polygons (optional ``start``, ``stabilized``, ``use``); optional
        ``landings`` and ``haul_roads`` (counted as disturbance), ``harvest_area``,
        ``impaired_waters``.
    rulebook : Rulebook
        ``vestal``, ``lockport`` or a user's rulebook with the SWP rules.
    rainfall : path or DataFrame, optional
        Daily rainfall (``date``, ``precip_in``) covering the first start to the last stabilisation.
    inspection_log : path or DataFrame, optional
        Inspections made (``date``, optional ``inspector``, ``notes``), checked against the schedule.
    approved_swppp : bool
        The phasing follows an approved SWPPP: a peak over the limit is ``info``, not a violation.
    larger_common_plan : bool or float
        The activity is part of a larger common plan of development or sale; a number is the plan's
        aggregate disturbed acres (for Lockport's aggregate test).

    Returns
    -------
    Result
        Findings; tables ``disturbance_timeline`` and ``inspections`` (when dates are complete);
        derived layers ``disturbed_area``, ``harvest_footprints``, ``peak_disturbance``.

    Raises
    ------
    InputError
        Unreadable or reversed dates, rainfall with gaps / negative / non-numeric values or not
        covering the schedule, an unreadable inspection log.

    Examples
    --------
    >>> from geoconstraints import load_layers, load_rulebook, sample_path
    >>> layers = load_layers(sample_path("vestal_sample.gpkg"))
    >>> res = check_stormwater(layers, load_rulebook("vestal"), rainfall=sample_path("rainfall.csv"))
    >>> "disturbance_timeline" in res.tables
    True
    """
    d = layers.get_layer("disturbance")
    sw6 = rulebook.rules.get("SWP-006")
    landings, roads = layers.get_layer("landings"), layers.get_layer("haul_roads")
    if (landings is not None or roads is not None) and sw6 is None:
        raise RulebookError(f"rulebook {rulebook.name!r} has no SWP-006, which sets haul_road_width_ft and "
                            f"default_landing_area_sqft for counting landings and haul roads")
    width = sw6.t("haul_road_width_ft") if sw6 is not None and roads is not None else 0.0
    fp = harvest_footprints(landings, roads, haul_road_width_ft=width,
                            default_landing_area_sqft=(sw6.t("default_landing_area_sqft")
                                                       if sw6 is not None and landings is not None else 0.0))
    ctx = StormwaterContext(layers=layers, rulebook=rulebook, disturbance=d, footprints=fp,
                            approved_swppp=bool(approved_swppp), larger_common_plan=larger_common_plan)
    ctx.road_width_ft = width
    ctx.sites = build_sites(d, fp, road_width_ft=width)
    tables: dict[str, pd.DataFrame] = {}
    extra: dict[str, Path] = {}
    if d is not None:
        ctx.dates = phasing_dates(d)
        if ctx.dates.complete:
            ctx.phasing = phasing_timeline(d, ctx.dates)
            tables["disturbance_timeline"] = ctx.phasing.timeline
    if rainfall is not None:
        ctx.rainfall = read_rainfall(rainfall)
        if not isinstance(rainfall, pd.DataFrame):
            extra["rainfall"] = Path(rainfall)
    if inspection_log is not None:
        ctx.inspections_log = read_inspection_log(inspection_log)
        if not isinstance(inspection_log, pd.DataFrame):
            extra["inspection_log"] = Path(inspection_log)
    r7 = rulebook.rules.get("SWP-007")
    if r7 is not None and ctx.phasing is not None:
        ph = ctx.phasing
        events = None
        if ctx.rainfall is not None:
            _check_coverage(ctx.rainfall, ph.start, ph.end, rainfall)
            if r7.s("storm_event") == "consecutive_wet_days":
                _check_open_first_run(ctx.rainfall, ph.start, ph.end, rainfall,
                                      storm_threshold_in=r7.t("storm_threshold_in"),
                                      wet_day_min_in=r7.t("wet_day_min_in"))
            events = storm_events(ctx.rainfall, storm_threshold_in=r7.t("storm_threshold_in"),
                                  storm_event=r7.s("storm_event"), wet_day_min_in=r7.t("wet_day_min_in"))
        sch = inspection_schedule(ph.start, ph.end, events,
                                  inspection_interval_days=r7.t("inspection_interval_days"),
                                  inspection_within_hours=r7.t("inspection_within_hours"))
        ctx.schedule = match_inspections(sch, ctx.inspections_log)
        required, _why = swp007_applies(ctx, r7, ctx.project)
        table = ctx.schedule.copy()
        table.insert(2, "required", required)
        tables["inspections"] = table
    items = run_group(rulebook, "stormwater", ctx)
    opts = {"approved_swppp": approved_swppp, "larger_common_plan": larger_common_plan,
            "rainfall": "" if rainfall is None else ("DataFrame" if isinstance(rainfall, pd.DataFrame) else rainfall),
            "inspection_log": "" if inspection_log is None else (
                "DataFrame" if isinstance(inspection_log, pd.DataFrame) else inspection_log)}
    return make_result("stormwater", rulebook, items, layers, derived=_derived(ctx), tables=tables,
                       extra_inputs=extra, options=opts)


def _check_coverage(rain: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp, source: Any) -> None:
    """The rainfall series must cover every day a storm inspection could be needed: start to end - 1."""
    first, last = rain["date"].iloc[0], rain["date"].iloc[-1]
    need_to = max(start, end - DAY)
    gaps = []
    if start < first:
        gaps.append(f"{_day(start)} to {_day(min(first - DAY, need_to))}")
    if need_to > last:
        gaps.append(f"{_day(max(last + DAY, start))} to {_day(need_to)}")
    if gaps:
        name = "table" if isinstance(source, pd.DataFrame) else Path(source).name
        raise InputError(f"rainfall {name} covers {_day(first)} to {_day(last)} but the disturbance runs "
                         f"{_day(start)} to {_day(end)}: add daily values for {' and '.join(gaps)}")


def _check_open_first_run(rain: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp, source: Any, *,
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
    raise InputError(f"rainfall {name} starts on {_day(first)}, a wet day ({_fmt(total)} in through {_day(last)}, "
                     f"under the {storm_threshold_in:g} in storm threshold): with storm_event=consecutive_wet_days "
                     f"the days before it are needed to know whether that run was a storm event; add daily values "
                     f"before {_day(first)} back to a dry day")
