"""Disturbed areas and their phasing: unions in acres, the concurrent-disturbance sweep, storms
and the inspection schedule (rule-agnostic: every number is an argument).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geoconstraints.errors import InputError, RulebookError
from geoconstraints.io.tables import DAY, PRECIP_TOL_IN, read_days
from geoconstraints.text import day_text, id_list, stated_text, truthy
from geoconstraints.units import sqft_to_acres

log = logging.getLogger(__name__)

AREA_TOL_ACRES = 1e-6


SUBJECT = "project"
"""Subject id of the disturbance project in findings."""
_LANDING_SEGMENTS = 16  # quarter-circle segments of the disc drawn for a landing point


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
        ``acres``, ``start`` and ``stabilized`` (the layers' own phasing dates when they have them,
        else missing) and the footprint geometry, in the input CRS.
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
                                        "kind": "landing", "length_ft": np.nan, **_dates_of(landings)},
                                       geometry=foot, crs=crs))
    if haul_roads is not None and len(haul_roads):
        crs = haul_roads.crs
        geoms = haul_roads.geometry.values
        foot = shapely.buffer(geoms, haul_road_width_ft / 2.0, cap_style="flat", join_style="mitre")
        frames.append(gpd.GeoDataFrame({"feature_id": haul_roads["feature_id"].astype(str).to_numpy(),
                                        "kind": "haul_road", "length_ft": shapely.length(geoms), **_dates_of(haul_roads)},
                                       geometry=foot, crs=crs))
    if not frames:
        return gpd.GeoDataFrame({"feature_id": [], "kind": [], "length_ft": [], "area_sqft": [], "acres": [],
                                 "start": [], "stabilized": []}, geometry=gpd.GeoSeries([], crs=crs), crs=crs)
    out = pd.concat(frames, ignore_index=True)
    out = gpd.GeoDataFrame(out, geometry="geometry", crs=crs)
    out["area_sqft"] = shapely.area(out.geometry.values)
    out["acres"] = sqft_to_acres(out["area_sqft"])
    return out


def _dates_of(layer: gpd.GeoDataFrame) -> dict[str, np.ndarray]:
    """The ``start`` and ``stabilized`` values of a landing or haul-road layer (missing when it has none)."""
    return {c: (layer[c].to_numpy(dtype=object) if c in layer.columns else np.full(len(layer), None, dtype=object))
            for c in ("start", "stabilized")}


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
        A date that cannot be read, could be read two ways or falls outside
        :data:`~geoconstraints.io.tables.DATE_YEARS` (see :func:`~geoconstraints.io.tables.read_days`:
        both fields are read one way), or a stabilisation date before the start or on it (a polygon
        disturbed on no day; naming the polygons).
    """
    ids = disturbance["feature_id"].astype(str)
    if "start" not in disturbance.columns or "stabilized" not in disturbance.columns:
        nat = pd.Series(pd.NaT, index=disturbance.index, dtype="datetime64[ns]")
        return PhasingDates(nat, nat, list(ids), has_fields=False)
    raw = disturbance[["start", "stabilized"]]
    parsed, issue = read_days(raw, scope="layer")
    if issue is not None:
        col, rows = issue.column, issue.rows
        if issue.kind == "unreadable":
            shown = [f"{i} ({v!r})" for i, v in zip(ids.iloc[rows], raw[col].iloc[rows])]
            raise InputError(f"{what}: field {col} holds values that are not dates for polygons "
                             f"{id_list(shown)}. Write dates as YYYY-MM-DD")
        raise InputError(f"{what}: field {col} of polygon{'s' if len(rows) > 1 else ''} {id_list(ids.iloc[rows])}: "
                         f"date {issue.value!r} {issue.why}")
    start, stab = parsed["start"], parsed["stabilized"]
    rev = start.notna() & stab.notna() & (stab < start)
    if rev.any():
        shown = [f"{i} (start {day_text(a)}, stabilized {day_text(b)})"
                 for i, a, b in zip(ids[rev], start[rev], stab[rev])]
        raise InputError(f"{what}: stabilized date before the start date for polygons {id_list(shown)}. "
                         f"Fix the dates (or swap them)")
    same = start.notna() & (stab == start)  # disturbed on no day: it would drop out of the peak (SWP-005)
    if same.any():
        shown = [f"{i} ({day_text(a)})" for i, a in zip(ids[same], start[same])]
        raise InputError(f"{what}: stabilized on the start date for polygons {id_list(shown)}: a polygon counts as "
                         f"disturbed from its start date up to the day before its stabilized date, so it would never "
                         f"count. Give the first day it is stabilised (after the start)")
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
        raise InputError(f"layer disturbance: polygons {id_list(dates.undated)} have no start or stabilized "
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


QUALIFIED_YES, QUALIFIED_NO, QUALIFIED_UNSTATED = "yes", "no", "not stated"
"""An inspection log's ``qualified`` values (:func:`qualifications`): the log states the inspector a
qualified professional, states not, or does not say."""


def inspector_names(col: pd.Series) -> np.ndarray:
    """An inspection log's inspector names as text, a blank one (None, NaN, whitespace) as ``""``
    (not stated; never the text "None" or "nan").

    Examples
    --------
    >>> inspector_names(pd.Series(["J. Doe", None, float("nan"), " "])).tolist()
    ['J. Doe', '', '', '']
    """
    return np.array(stated_text(col), dtype=object)


def qualifications(inspections: pd.DataFrame) -> np.ndarray:
    """Whether each logged inspection was made by a qualified professional, as the log's optional
    ``qualified`` column states it: :data:`QUALIFIED_YES` (a yes word, :func:`~geoconstraints.text.truthy`),
    :data:`QUALIFIED_NO` (a no word) or :data:`QUALIFIED_UNSTATED` (blank, neither word, or no column).

    Examples
    --------
    >>> qualifications(pd.DataFrame({"qualified": ["yes", "N", "", None, "maybe"]})).tolist()
    ['yes', 'no', 'not stated', 'not stated', 'not stated']
    >>> qualifications(pd.DataFrame({"date": ["2024-05-01"]})).tolist()
    ['not stated']
    """
    if "qualified" not in inspections.columns:
        return np.full(len(inspections), QUALIFIED_UNSTATED, dtype=object)
    said = [truthy(v) for v in inspections["qualified"]]
    return np.array([QUALIFIED_UNSTATED if v is None else QUALIFIED_YES if v else QUALIFIED_NO for v in said],
                    dtype=object)


def _qualified_first(log: pd.DataFrame) -> pd.DataFrame:
    """The log by date, on each day an inspection stated qualified first (then unstated, then not)."""
    rank = pd.Series(qualifications(log), index=log.index).map({QUALIFIED_YES: 0, QUALIFIED_UNSTATED: 1,
                                                                QUALIFIED_NO: 2})
    order = np.lexsort((rank.to_numpy(), log["date"].to_numpy(dtype="datetime64[ns]")))
    return log.iloc[order]


def inspection_gaps(
    start: pd.Timestamp,
    end: pd.Timestamp,
    inspections: pd.DataFrame,
    *,
    inspection_interval_days: float,
) -> pd.DataFrame:
    """The interval inspections of a log as a gap rule: no more than ``inspection_interval_days``
    from the start to the first inspection, between consecutive inspections, and from the last
    inspection to the stabilisation date.

    Fixed weekly windows would let inspections on day 1 and day 14 (a 13-day gap) meet the windows
    "days 1-7" and "days 8-14"; the gap rule does not. Inspections outside ``[start, end]`` are
    not counted; several on one day count once (one stated made by a qualified professional first,
    :func:`qualifications`).

    Returns
    -------
    DataFrame
        One row per inspection (and one per stretch from the last inspection to ``end`` longer
        than the interval): ``due`` (the previous inspection, or the start, plus the interval),
        ``reason`` (``weekly``), ``window_start`` (the previous inspection or the start),
        ``window_end`` (= due), ``status`` (``met`` / ``missed``), ``inspection_date`` (when met),
        ``inspector`` (blank where not stated), ``inspector_qualified`` (:func:`qualifications`;
        blank without an inspection), ``gap_days`` and ``next_inspection`` (the inspection ending
        the gap; NaT at the stabilisation date).

    Examples
    --------
    >>> log = pd.DataFrame({"date": pd.to_datetime(["2024-05-01", "2024-05-14"]), "inspector": ["JD", "JD"]})
    >>> g = inspection_gaps(pd.Timestamp("2024-05-01"), pd.Timestamp("2024-05-15"), log, inspection_interval_days=7)
    >>> g[["status", "gap_days"]].values.tolist()
    [['met', 0], ['missed', 13]]
    """
    step = pd.Timedelta(days=float(inspection_interval_days))
    log = inspections[(inspections["date"] >= start) & (inspections["date"] <= end)]
    log = _qualified_first(log).drop_duplicates("date")
    dates = pd.DatetimeIndex(log["date"])
    prev = pd.DatetimeIndex(pd.DatetimeIndex([start]).append(dates[:-1]) if len(dates) else [])
    gap = dates - prev
    met = gap <= step
    rows = pd.DataFrame({
        "due": prev + step, "reason": "weekly", "trigger_date": pd.NaT, "precip_in": np.nan,
        "window_start": prev, "window_end": prev + step, "status": np.where(met, "met", "missed"),
        "inspection_date": dates.where(met), "inspector": np.where(met, inspector_names(log["inspector"]), ""),
        "inspector_qualified": np.where(met, qualifications(log), ""),
        "gap_days": (gap / DAY).astype(int), "next_inspection": dates})
    last = dates[-1] if len(dates) else start
    if end - last > step:  # the last stretch to the stabilisation date
        tail = pd.DataFrame({"due": [last + step], "reason": "weekly", "trigger_date": pd.NaT, "precip_in": np.nan,
                             "window_start": [last], "window_end": [last + step], "status": "missed",
                             "inspection_date": pd.NaT, "inspector": "", "inspector_qualified": "",
                             "gap_days": [int((end - last) / DAY)],
                             "next_inspection": pd.NaT})
        rows = pd.concat([rows, tail], ignore_index=True) if len(rows) else tail
    for c in ("trigger_date", "inspection_date", "next_inspection"):
        rows[c] = pd.to_datetime(rows[c])
    return rows.reset_index(drop=True)


def match_inspections(schedule: pd.DataFrame, inspections: pd.DataFrame | None) -> pd.DataFrame:
    """Mark each required inspection ``met`` or ``missed`` against a log (``scheduled`` without one).

    A required inspection is met by any logged inspection dated within its window
    (``window_start`` to ``window_end``, inclusive); the earliest such date is reported, or the
    earliest stated made by a qualified professional when one is (:func:`qualifications`), with its
    ``inspector`` (blank where not stated) and ``inspector_qualified``.

    Examples
    --------
    >>> sch = pd.DataFrame({"window_start": pd.to_datetime(["2024-05-10"]),
    ...                     "window_end": pd.to_datetime(["2024-05-11"])})
    >>> log = pd.DataFrame({"date": pd.to_datetime(["2024-05-10", "2024-05-11"]), "inspector": [None, "A. Chen"],
    ...                     "qualified": ["", "yes"]})
    >>> match_inspections(sch, log)[["status", "inspector", "inspector_qualified"]].values.tolist()
    [['met', 'A. Chen', 'yes']]
    >>> match_inspections(sch, log.iloc[:1])[["inspector", "inspector_qualified"]].values.tolist()
    [['', 'not stated']]
    """
    out = schedule.copy()
    if inspections is None:
        out["status"] = "scheduled"
        out["inspection_date"] = pd.NaT
        out["inspector"] = ""
        out["inspector_qualified"] = ""
        return out
    inspections = _qualified_first(inspections)
    dates = inspections["date"].to_numpy(dtype="datetime64[ns]")
    qual = qualifications(inspections)
    ws, we = out["window_start"].to_numpy(dtype="datetime64[ns]"), out["window_end"].to_numpy(dtype="datetime64[ns]")
    lo = np.searchsorted(dates, ws, side="left")
    met = lo < np.searchsorted(dates, we, side="right")
    idx = np.minimum(lo, max(len(dates) - 1, 0))
    yes = np.flatnonzero(qual == QUALIFIED_YES)  # a window holding a qualified inspection reports the earliest
    if len(yes):
        ylo = np.searchsorted(dates[yes], ws, side="left")
        ymet = ylo < np.searchsorted(dates[yes], we, side="right")
        idx = np.where(ymet, yes[np.minimum(ylo, len(yes) - 1)], idx)
    out["status"] = np.where(met, "met", "missed")
    out["inspection_date"] = pd.to_datetime(np.where(met, dates[idx] if len(dates) else np.datetime64("NaT", "ns"),
                                                     np.datetime64("NaT", "ns")))
    insp = inspector_names(inspections["inspector"]) if "inspector" in inspections.columns else np.full(len(dates), "")
    out["inspector"] = np.where(met, insp[idx] if len(insp) else "", "")
    out["inspector_qualified"] = np.where(met, qual[idx] if len(qual) else "", "")
    return out


# ------------------------------------------------------------------------------------------------
# sites (the land development activities measured) and context

_KIND_LAYER = {"disturbance": "disturbance", "landing": "landings", "haul_road": "haul_roads"}


@dataclass(frozen=True)
class SiteFacts:
    """What one site is made of, as :func:`build_sites` measured it: the facts its findings state, as
    keys and numbers (a rule words them with its own phrases: SWP-001's, SWP-003's and SWP-004's
    ``site_*``).

    Attributes
    ----------
    kind : str
        ``"project"`` (the disturbance polygons with the footprints connected to them) or
        ``"harvest_plan"`` (landings and haul roads connected to no disturbance polygon).
    polygons : int
        The disturbance polygons in it (0 in a harvest plan).
    polygons_acres : float
        Their union, in acres (overlaps counted once).
    landings, roads : int
        The landings and the haul roads in it (in a project: those connected to the polygons).
    road_ft : float
        The haul roads' total length, in ft.
    road_width_ft : float
        The width the haul roads are counted at.
    apart : bool
        A harvest plan measured as its own activity beside a disturbance layer given (connected to
        none of its polygons).
    """

    kind: str
    polygons: int = 0
    polygons_acres: float = 0.0
    landings: int = 0
    roads: int = 0
    road_ft: float = 0.0
    road_width_ft: float = 0.0
    apart: bool = False


@dataclass(eq=False)
class Site:
    """One land development activity measured for SWP-001..005.

    The ``disturbance`` layer is one project, together with every landing / haul-road footprint
    connected to it (touching it directly or through other footprints). Footprints not connected
    to it form a second subject, the harvest plan, so an unrelated logging job elsewhere in the
    same GeoPackage is not added to a subdivision's acreage.

    ``facts`` says what it is made of (:class:`SiteFacts`, worded by the rules). ``members`` holds
    the polygons measured: ``feature_id`` (``DP-1``, ``landing L-1``, ``haul road H-1``), ``kind``
    (``disturbance``, ``landing``, ``haul_road``), the raw ``start`` and ``stabilized`` values and
    the geometry.
    """

    layer: str
    id: str
    geometry: Any
    acres: float
    facts: SiteFacts
    uses: list[str]
    dated: bool = False
    members: gpd.GeoDataFrame | None = None


def site_facts(kind: str, fp: gpd.GeoDataFrame, road_width_ft: float, *, polygons: int = 0,
                polygons_acres: float = 0.0, apart: bool = False) -> SiteFacts:
    """The :class:`SiteFacts` of a site of ``polygons`` disturbance polygons (their union
    ``polygons_acres``) and the footprints ``fp`` (:func:`harvest_footprints` rows)."""
    roads = fp[(fp["kind"] == "haul_road").to_numpy()]
    return SiteFacts(kind, polygons, polygons_acres, int((fp["kind"] == "landing").sum()), len(roads),
                     float(roads["length_ft"].sum()) if len(roads) else 0.0, float(road_width_ft), apart)


def _members(disturbance: gpd.GeoDataFrame | None, fp: gpd.GeoDataFrame, crs: Any) -> gpd.GeoDataFrame:
    """The polygons of one site with their phasing dates, labelled by kind."""
    cols: dict[str, list[Any]] = {"feature_id": [], "kind": [], "start": [], "stabilized": []}
    geoms: list[Any] = []
    if disturbance is not None:
        cols["feature_id"] += list(disturbance["feature_id"].astype(str))
        cols["kind"] += ["disturbance"] * len(disturbance)
        for c in ("start", "stabilized"):
            cols[c] += list(disturbance[c]) if c in disturbance.columns else [None] * len(disturbance)
        geoms += list(disturbance.geometry.values)
    if len(fp):
        cols["feature_id"] += [f"{k.replace('_', ' ')} {i}" for k, i in zip(fp["kind"], fp["feature_id"])]
        cols["kind"] += list(fp["kind"])
        for c in ("start", "stabilized"):
            cols[c] += list(fp[c]) if c in fp.columns else [None] * len(fp)
        geoms += list(fp.geometry.values)
    return gpd.GeoDataFrame(cols, geometry=gpd.GeoSeries(geoms, crs=crs), crs=crs)


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
    crs = disturbance.crs if disturbance is not None else fp.crs
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
        facts = site_facts("project", fp[attached], road_width_ft, polygons=len(disturbance), polygons_acres=d_acres)
        uses = list(disturbance["use"]) if "use" in disturbance.columns else [""] * len(disturbance)
        sites.append(Site("disturbance", SUBJECT, geom, acres, facts, uses + [""] * int(attached.sum()), dated=True,
                          members=_members(disturbance, fp[attached], crs)))
    rest = fp[~attached]
    if len(rest):
        geom, acres = union_acres(rest.geometry.values)
        facts = site_facts("harvest_plan", rest, road_width_ft, apart=disturbance is not None)
        sites.append(Site("harvest plan", "landings and haul roads", geom, acres, facts, [""] * len(rest),
                          members=_members(None, rest, crs)))
    return sites


def _labels(fp: gpd.GeoDataFrame) -> np.ndarray:
    """The member labels of footprints (``landing L-1``, ``haul road H-1``), as :func:`_members` writes them."""
    return np.array([f"{k.replace('_', ' ')} {i}" for k, i in zip(fp["kind"], fp["feature_id"])], dtype=object)


@dataclass(eq=False)
class GrownSite:
    """A site measured again with every landing mapped as a point at its largest plausible size and
    every haul road at its widest plausible clearing.

    Attributes
    ----------
    site : Site
        The activity so measured: the disturbance project with every footprint connected to it at
        those sizes, or the harvest plan's own footprints at those sizes.
    points : list of str
        The landings mapped as points in it (feature ids).
    joined : list of str
        Footprints (member labels) connected to the disturbance only at those sizes.
    roads : list of str
        The haul roads in it counted wider (feature ids).
    """

    site: Site
    points: list[str]
    joined: list[str] = field(default_factory=list)
    roads: list[str] = field(default_factory=list)


def grown_sites(disturbance: gpd.GeoDataFrame | None, footprints: gpd.GeoDataFrame, grown: gpd.GeoDataFrame,
                sites: Sequence[Site], *, road_width_ft: float) -> list[GrownSite | None]:
    """The sites of :func:`build_sites` measured with the point landings and haul roads at their largest size.

    A landing mapped as a point is counted as a disc of a typical area, and a haul road mapped as a line
    as a strip of a typical width, but the pad and the clearing may be larger; their size can only add
    to a site's acreage and peak, and can connect it to the disturbance (acreage, peak and connection
    grow with the footprint, so the largest size bounds every size in between).

    Parameters
    ----------
    disturbance : GeoDataFrame or None
    footprints, grown : GeoDataFrame
        :func:`harvest_footprints` of the same layers with the typical and with the largest area of a
        point landing and width of a haul road (the same rows in the same order): the rows whose area
        differs are those that grew (a row measured as drawn has the same footprint in both).
    sites : sequence of Site
        ``build_sites(disturbance, footprints)``.
    road_width_ft : float
        The width the haul roads are counted at (:attr:`SiteFacts.road_width_ft` of the sites).

    Returns
    -------
    list of GrownSite or None
        Aligned with ``sites``; None where no footprint that grew is in the site or could join it.

    Examples
    --------
    >>> from shapely.geometry import LineString, Point, box
    >>> d = gpd.GeoDataFrame({"feature_id": ["D"]}, geometry=[box(0, 0, 100, 100)], crs="EPSG:2261")
    >>> pts = gpd.GeoDataFrame({"feature_id": ["L"]}, geometry=[Point(200, 50)], crs="EPSG:2261")
    >>> fp = harvest_footprints(pts, None, haul_road_width_ft=12, default_landing_area_sqft=10_000)
    >>> big = harvest_footprints(pts, None, haul_road_width_ft=12, default_landing_area_sqft=43_560)
    >>> sites = build_sites(d, fp, road_width_ft=12)
    >>> [s.id for s in sites], [round(s.acres, 3) for s in sites]
    (['project', 'landings and haul roads'], [0.23, 0.23])
    >>> g = grown_sites(d, fp, big, sites, road_width_ft=12)
    >>> round(g[0].site.acres, 3), g[0].points, g[0].joined, round(g[1].site.acres, 3)
    (1.197, ['L'], ['landing L'], 1.0)

    A haul road 1,000 ft long, 12 ft wide as counted (0.275 acre) and 30 ft at the widest (0.689 acre):

    >>> road = gpd.GeoDataFrame({"feature_id": ["H"]}, geometry=[LineString([(0, 500), (1000, 500)])],
    ...                         crs="EPSG:2261")
    >>> fp = harvest_footprints(None, road, haul_road_width_ft=12, default_landing_area_sqft=10_000)
    >>> big = harvest_footprints(None, road, haul_road_width_ft=30, default_landing_area_sqft=10_000)
    >>> g = grown_sites(None, fp, big, build_sites(None, fp, road_width_ft=12), road_width_ft=12)
    >>> round(g[0].site.acres, 3), g[0].points, g[0].roads
    (0.689, [], ['H'])
    """
    if len(footprints) != len(grown):
        raise ValueError("footprints and grown hold different rows")
    if not len(grown):
        return [None for _ in sites]
    kind = grown["kind"].to_numpy()
    grew = ~np.isclose(grown["area_sqft"].to_numpy(float), footprints["area_sqft"].to_numpy(float), rtol=1e-9)
    point, wide = grew & (kind == "landing"), grew & (kind == "haul_road")
    if not grew.any():
        return [None for _ in sites]
    big = build_sites(disturbance, grown, road_width_ft=road_width_ft)
    labels = _labels(grown)
    fids = grown["feature_id"].astype(str).to_numpy()
    out: list[GrownSite | None] = []
    for s in sites:  # at most two sites
        have = set(s.members["feature_id"]) if s.members is not None else set()
        if s.dated:
            g = next(b for b in big if b.dated)
        else:  # its own footprints grown (some may join the project at that size: then this bounds it)
            rows = grown[np.isin(labels, list(have))]
            geom, acres = union_acres(rows.geometry.values)
            facts = site_facts("harvest_plan", rows, road_width_ft, apart=s.facts.apart)
            g = Site(s.layer, s.id, geom, acres, facts, list(s.uses), members=_members(None, rows, grown.crs))
        inside = np.isin(labels, list(g.members["feature_id"])) if g.members is not None else np.zeros(len(labels), bool)
        ids = [str(i) for i in fids[point & inside]]
        roads = [str(i) for i in fids[wide & inside]]
        joined = [str(x) for x in g.members["feature_id"] if x not in have] if g.members is not None else []
        out.append(GrownSite(g, ids, joined, roads) if ids or roads else None)
    return out


@dataclass
class SitePhasing:
    """The phasing of one site: its timeline, or why there is none, and what was assumed.

    Attributes
    ----------
    phasing : Phasing or None
        None when the peak cannot be known (``why`` says why).
    why : str
        The key of why there is no phasing, for a rule to word it ('' when there is one):
        ``nothing_to_phase`` (a site without members), ``no_dates`` (no disturbance polygon carries both
        dates), ``undated`` (the polygons ``undated`` lack one: the peak cannot be known) or ``none_dated``
        (no polygon, landing or haul road of the site carries both).
    undated : list of str
        The disturbance polygons without a start or stabilized date (``why`` ``no_dates`` or ``undated``).
    assumed : list of str
        Landings and haul roads without both dates, their missing dates filled with the site's first
        start or last stabilisation.
    filled : dict of str to str
        Which date was filled, by feature id (those of ``assumed``): ``"both"`` (disturbed from the
        site's first start to its last stabilisation), ``"start"`` (from the site's first start to
        its own stabilized date) or ``"stabilized"`` (from its own start to the site's last
        stabilisation).
    """

    phasing: Phasing | None
    why: str = ""
    assumed: list[str] = field(default_factory=list)
    filled: dict[str, str] = field(default_factory=dict)
    undated: list[str] = field(default_factory=list)


class FilledDatesError(InputError):
    """Landings or haul roads of a site that, their missing dates filled with the site's span, would be
    disturbed on no day (:func:`site_phasing`): ``ids``, and the span's first start and last
    stabilisation (``start``, ``end``), for a rule that quotes it to word it."""

    def __init__(self, ids: Sequence[str], start: pd.Timestamp, end: pd.Timestamp) -> None:
        self.ids, self.start, self.end = [str(i) for i in ids], start, end
        super().__init__(f"landings / haul roads {id_list(self.ids)}: a stabilized date on or before the site's "
                         f"first start ({day_text(start)}) or a start on or after its last stabilisation "
                         f"({day_text(end)}); fix or complete their dates")


def site_phasing(site: Site) -> SitePhasing:
    """The concurrently disturbed area of one site over its phasing dates.

    Disturbance polygons must all be dated (a phasing plan with an undated phase cannot give the
    peak). Landings and haul roads are counted too ("landing areas and log haul roads are subject
    to this law"): a footprint without dates is assumed disturbed for the whole span of the
    site's dated polygons, a missing date filled with the span's start or end (one given a start
    only: from its start to the span's end; :attr:`SitePhasing.filled` says which). A site with no
    date at all has no phasing. Without one, :attr:`SitePhasing.why` holds the key of the reason.

    Raises
    ------
    InputError
        A date that cannot be read or a stabilisation on or before the start (naming layer and feature);
        :class:`FilledDatesError` where a filled date leaves a landing or haul road disturbed on no day.
    """
    m = site.members
    if m is None or not len(m):
        return SitePhasing(None, "nothing_to_phase")
    start = pd.Series(pd.NaT, index=m.index, dtype="datetime64[ns]")
    stab = start.copy()
    for kind, layer in _KIND_LAYER.items():
        part = m[m["kind"] == kind]
        if not len(part):
            continue
        d = phasing_dates(part, what=f"layer {layer}")
        start[part.index], stab[part.index] = d.start.to_numpy(), d.stabilized.to_numpy()
        if kind == "disturbance" and not d.complete:
            return SitePhasing(None, "no_dates" if len(d.undated) == len(part) else "undated", undated=d.undated)
    dated = start.notna() & stab.notna()
    if not dated.any():
        return SitePhasing(None, "none_dated")
    span0, span1 = start[dated].min(), stab[dated].max()
    assumed = list(m.loc[~dated, "feature_id"])
    gone = np.where(start.isna() & stab.isna(), "both", np.where(start.isna(), "start", "stabilized"))
    filled = dict(zip(assumed, gone[~dated.to_numpy()].tolist()))
    start, stab = start.fillna(span0), stab.fillna(span1)
    bad = stab <= start  # a filled date may leave a footprint disturbed on no day
    if bad.any():
        raise FilledDatesError(list(m.loc[bad, "feature_id"]), span0, span1)
    full = PhasingDates(start, stab)
    return SitePhasing(phasing_timeline(m, full), "", assumed, filled)
