"""Terrain from a DEM: profiles along lines, grade runs, water-bar placement, contours, HAG.

Pure functions over a :class:`~geoconstraints.io.dem.Dem` (elevations in feet) and lines in a
projected CRS in feet. Profiles are sampled bilinearly at a fixed step along each line; grade
runs, water bars and the highest adjacent grade are computed from them with numpy.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely
from shapely.geometry import LineString, MultiLineString, MultiPolygon, Point, Polygon
from shapely.ops import substring

from geoconstraints.errors import CRSError, DemError, GeometryError, InputError
from geoconstraints.io.dem import Dem, apply_transform, rotated_fix, same_crs, to_pyproj
from geoconstraints.units import at_most, ft_per_unit, over_limit, under_limit

logger = logging.getLogger(__name__)

RUN_LENGTHS: tuple[str, ...] = ("horizontal", "slope")
"""How a grade run's length is compared with ``max_run_ft`` (HRV-010 rulebook switch)."""

SPACING_ENDS: tuple[str, ...] = ("shorter", "longer")
"""Which end of a water bar spacing range is used (HRV-030 switch ``spacing_end``; Vestal: the shorter)."""

BETWEEN_BANDS: tuple[str, ...] = ("steeper", "shallower")
"""Band taken by a grade that falls between two table bands (5.5 %; Vestal: the steeper). The
spelling is the rulebook's (HRV-030 switch ``between_bands``)."""


def _check_option(name: str, value: str, allowed: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise :class:`InputError`."""
    if value not in allowed:
        raise InputError(f"{value!r} is not a valid option for {name}, must be one of {', '.join(allowed)}")
    return value


# --------------------------------------------------------------------------------------------
# Profiles
# --------------------------------------------------------------------------------------------


@dataclass
class Profile:
    """Elevations sampled along a line.

    Attributes
    ----------
    x, y : numpy.ndarray
        Sample coordinates in ``crs`` (the line's CRS).
    dist_ft : numpy.ndarray
        Cumulative horizontal distance from the line start, feet (strictly increasing).
    z_ft : numpy.ndarray
        Elevation in feet, NaN off the DEM or at nodata.
    line : LineString
        The line, in ``crs``.
    crs : pyproj.CRS
        CRS of ``x``, ``y`` and ``line``.
    ft_per_unit : float
        Feet per unit of ``crs`` (to turn ``dist_ft`` back into line distances).
    cells_ft : tuple of (float, float, int)
        Lowest and highest valid DEM cell (feet) of the windows of cells sampled around the line,
        and their count (NaN, NaN, 0 when none holds data): see :attr:`flat_ft`.
    """

    x: np.ndarray
    y: np.ndarray
    dist_ft: np.ndarray
    z_ft: np.ndarray
    line: LineString | None = None
    crs: pyproj.CRS | None = None
    ft_per_unit: float = 1.0
    cells_ft: tuple[float, float, int] = (float("nan"), float("nan"), 0)

    @property
    def flat_ft(self) -> float | None:
        """The one value every valid DEM cell around the line holds (at least two cells), None when
        they differ (or hold no data). Zero relief is no grade measured: a water body's flattened
        surface, a no-data fill the DEM does not declare, or a placeholder raster. Real ground on a
        lidar DEM is never one exact value across the cells around a road."""
        lo, hi, n = self.cells_ft
        return lo if n >= 2 and lo == hi else None

    @property
    def length_ft(self) -> float:
        """Horizontal length of the profile, feet."""
        return float(self.dist_ft[-1]) if len(self.dist_ft) else 0.0


def _as_linestring(line) -> LineString:
    """A single LineString (a MultiLineString that merges into one is accepted)."""
    if isinstance(line, MultiLineString):
        merged = shapely.line_merge(line)
        if isinstance(merged, LineString):
            return merged
        raise GeometryError(
            f"a multi-part line ({len(line.geoms)} parts) cannot be profiled as one road: "
            "explode it into single lines first (e.g. gdf.explode(ignore_index=True))."
        )
    if not isinstance(line, LineString):
        raise GeometryError(f"expected a LineString, got {getattr(line, 'geom_type', type(line))}")
    if line.is_empty or line.length == 0:
        raise GeometryError("cannot profile an empty or zero-length line")
    return line


def densify(line: LineString, step_ft: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points along a line at most ``step_ft`` apart, keeping every vertex.

    Each segment is cut into ``ceil(length / step)`` equal parts, so the spacing is at most
    ``step_ft`` (within a relative 1e-5) and vertices (where the grade may change) are samples. Distances are in the
    line's own units, which are feet when the line is in the (feet) working CRS.

    Parameters
    ----------
    line : LineString
        The line (Z ignored; repeated vertices dropped).
    step_ft : float
        Maximum distance between samples (> 0).

    Returns
    -------
    xs, ys, dist : numpy.ndarray
        Coordinates and cumulative horizontal distance from the start; ``dist`` is strictly
        increasing and ``dist[-1]`` equals ``line.length``.
    """
    if not step_ft > 0:
        raise InputError(f"densify step must be > 0 ft, got {step_ft!r}")
    line = _as_linestring(line)
    coords = shapely.get_coordinates(line)
    seg = np.diff(coords, axis=0)
    seglen = np.hypot(seg[:, 0], seg[:, 1])
    keep = np.concatenate([[True], seglen > 0])
    coords = coords[keep]
    seg = np.diff(coords, axis=0)
    seglen = np.hypot(seg[:, 0], seg[:, 1])
    cum = np.concatenate([[0.0], np.cumsum(seglen)])
    # A relative slack of 1e-5 keeps e.g. a 10-ft step on a US-survey-foot line (10 / 1.000002
    # units) from adding one sample per segment.
    n = np.maximum(1, np.ceil(seglen / step_ft * (1 - 1e-5))).astype(np.intp)
    idx = np.repeat(np.arange(len(seglen)), n)
    k = np.arange(idx.size) - np.repeat(np.cumsum(n) - n, n)
    t = k / n[idx]
    xs = np.append(coords[idx, 0] + t * seg[idx, 0], coords[-1, 0])
    ys = np.append(coords[idx, 1] + t * seg[idx, 1], coords[-1, 1])
    dist = np.append(cum[idx] + t * seglen[idx], cum[-1])
    return xs, ys, dist


def line_profile(dem: Dem, line, crs, *, step_ft: float | None = None) -> Profile:
    """Sample a DEM along a line.

    Parameters
    ----------
    dem : Dem
    line : LineString
        The road or trail, in ``crs`` (a projected CRS in feet or metres).
    crs : CRS-like
        CRS of ``line``.
    step_ft : float, optional
        Sample spacing in feet. Default: the DEM cell size. Bilinear interpolation is linear
        between cell centres, so samples closer than a cell add no information (and amplify
        noise in the grade), while coarser samples would skip cells and smear short steep
        pitches; one cell is the natural resolution.

    Returns
    -------
    Profile

    Raises
    ------
    CRSError
        ``crs`` is geographic (distances in degrees are not feet).
    """
    crs = to_pyproj(crs)
    k = ft_per_unit(crs)
    if k is None:
        raise CRSError(
            f"line CRS {crs.name} is geographic: reproject the roads to a projected CRS in feet "
            "(e.g. EPSG:2261) before measuring grades."
        )
    line = _as_linestring(line)
    step = dem.cell_size_ft if step_ft is None else float(step_ft)
    xs, ys, dist = densify(line, step / k)
    windows: list[tuple[float, float, int]] = []
    z = dem.sample(xs, ys, crs, relief=windows)
    lows = [w[0] for w in windows if w[2]]
    highs = [w[1] for w in windows if w[2]]
    cells = ((min(lows), max(highs), sum(w[2] for w in windows)) if lows
             else (float("nan"), float("nan"), 0))
    return Profile(
        x=xs, y=ys, dist_ft=dist * k, z_ft=z, line=line, crs=crs, ft_per_unit=k, cells_ft=cells
    )


def _valid_stretch_bounds(valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each sample, the [first, last] index of the contiguous valid stretch holding it."""
    n = valid.size
    idx = np.arange(n)
    breaks = np.where(valid, -1, idx)  # invalid samples are walls
    last_wall = np.maximum.accumulate(breaks)
    first = last_wall + 1
    rbreaks = np.where(valid, n, idx)[::-1]
    next_wall = np.minimum.accumulate(rbreaks)[::-1]
    last = next_wall - 1
    return first, last


# --------------------------------------------------------------------------------------------
# Grade runs (HRV-010)
# --------------------------------------------------------------------------------------------


@dataclass
class Run:
    """A maximal contiguous stretch steeper than the limit.

    Attributes
    ----------
    start_ft, end_ft : float
        Distances along the line (feet, horizontal).
    length_ft : float
        Horizontal (map) length.
    slope_length_ft : float
        Length along the ground, sum of dh × sqrt(1 + grade²) over its segments.
    mean_grade_pct : float
        Length-weighted mean of the segments' filtered |grade| (:func:`filter_grades`).
    max_grade_pct : float
        Steepest segment (filtered grade).
    exceeds : bool
        The compared length (horizontal or slope, per ``run_length``) is more than ``max_run_ft``,
        alone or with the steep runs it meets (of other roads, or of its own line where it meets or
        crosses itself: :func:`join_runs`).
    geometry : LineString or None
        The sub-line from ``start_ft`` to ``end_ft``, in the profile's CRS.
    joined_ft : float
        The compared length of the longest stretch of steep runs joined end to end that holds this
        run, when that stretch goes on to other runs (over the limit or not; NaN when it meets no other
        steep run).
    joined_with : str
        The roads of the other runs of that stretch (``layer id, ...``, the run's own road marked
        when its line meets or crosses itself there: :func:`joined_roads_text`; '' when none).
    join_cut_short : bool
        The search for the longest stretch of joined runs through this run stopped at its bound
        (:data:`_JOIN_MAX_STEPS`) before it was over the limit: a longer stretch may exist, so the run
        is not known to be within the limit (``joined_ft``: the longest found).
    slope_profile : tuple of numpy.ndarray or None
        ``(distance along the line ft, slope length from the run's start ft)`` at the run's samples,
        for the slope length of a part of it (:func:`join_runs` splits runs where another ends on them).
    """

    start_ft: float
    end_ft: float
    length_ft: float
    slope_length_ft: float
    mean_grade_pct: float
    max_grade_pct: float
    exceeds: bool
    geometry: LineString | None = None
    joined_ft: float = float("nan")
    joined_with: str = ""
    join_cut_short: bool = False
    slope_profile: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)


@dataclass
class Stretch:
    """A stretch of line whose grade could not be evaluated: ``why`` holds the key of the reason, for a
    rule to word it: ``off_dem`` (off the DEM or on nodata cells) or ``no_relief`` (a part of a road on
    DEM cells that all hold one height, ``flat_ft``: no relief)."""

    start_ft: float
    end_ft: float
    length_ft: float
    geometry: LineString | None = None
    why: str = "off_dem"
    flat_ft: float = float("nan")


@dataclass
class RunResult:
    """Result of :func:`grade_runs`.

    Attributes
    ----------
    runs : list of Run
        Every steep run (exceeding or not); see :attr:`exceeding`.
    not_evaluated : list of Stretch
        Stretches without DEM data: never counted as gentle.
    evaluated_length_ft, total_length_ft : float
        Horizontal lengths.
    max_grade_pct : float
        Steepest evaluated segment, filtered grade (NaN when nothing was evaluated).
    run_length : str
        ``'horizontal'`` or ``'slope'``: the length compared with the limit.
    window_ft : float
        Window of the grade filter used (:func:`filter_grades`; 0 = raw grades).
    """

    runs: list[Run]
    not_evaluated: list[Stretch]
    evaluated_length_ft: float
    total_length_ft: float
    max_grade_pct: float
    run_length: str = "horizontal"
    window_ft: float = 0.0

    @property
    def exceeding(self) -> list[Run]:
        """Runs longer than the limit (the HRV-010 offences)."""
        return [r for r in self.runs if r.exceeds]

    @property
    def fully_evaluated(self) -> bool:
        """True when the DEM covered the whole line."""
        return not self.not_evaluated


def segment_grades(dist_ft, z_ft) -> np.ndarray:
    """|dz| / dh × 100 between consecutive samples (NaN where either end is NaN)."""
    return np.abs(np.diff(z_ft)) / np.diff(dist_ft) * 100.0


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Row-wise weighted median (NaN values carry weight 0); the mean of the two middle values on a tie."""
    v = np.where(weights > 0, values, np.inf)
    order = np.argsort(v, axis=1, kind="stable")
    v = np.take_along_axis(v, order, axis=1)
    cw = np.cumsum(np.take_along_axis(weights, order, axis=1), axis=1)
    half = cw[:, -1:] / 2.0
    k = v.shape[1] - 1
    lo = np.minimum(under_limit(cw, half).sum(axis=1), k)  # a weight of half within float noise is half
    hi = np.minimum(at_most(cw, half).sum(axis=1), k)
    rows = np.arange(v.shape[0])
    return 0.5 * (v[rows, lo] + v[rows, np.maximum(hi, lo)])


def filter_grades(dist_ft, z_ft, window_ft: float) -> np.ndarray:
    """The |grade| of each segment of a profile, cleaned of DEM noise without moving slope breaks.

    Each segment's grade (|dz| / dh × 100) is replaced by the running median of the segment
    grades over a window of ``window_ft`` centred on the segment's middle, each neighbour
    weighted by the length it has inside the window. Near a line end or a nodata gap the window
    shrinks symmetrically, so it never reaches past them. A median keeps a step in grade where
    it is (more than half of a centred window lies on the segment's own side of the break) and
    leaves a monotone stretch unchanged, so a run of steep segments keeps its exact length
    whatever the window (unlike a moving average of the elevations, which turns every slope
    break into a ramp and cuts about one window off every run); a pitch or a dip shorter than
    half the window, what single-cell DEM noise looks like, is removed.

    Parameters
    ----------
    dist_ft, z_ft : array-like
        Increasing distances and elevations (feet), NaN where there is no DEM data.
    window_ft : float
        Full window (>= 0); 0 returns the raw segment grades.

    Returns
    -------
    numpy.ndarray
        One value per segment (``len(dist_ft) - 1``), NaN where a segment touches a NaN sample.

    Examples
    --------
    A 3-ft bump on a 5 % road sampled every 10 ft: raw grades 35 % and 25 % either side of it,
    gone with a 50-ft window; a 5 %/40 % slope break stays exactly where it is:

    >>> d = np.arange(0.0, 110.0, 10.0)
    >>> z = 0.05 * d + np.where(d == 50, 3.0, 0.0)
    >>> np.round(filter_grades(d, z, 0)[3:7], 2)
    array([ 5., 35., 25.,  5.])
    >>> np.round(filter_grades(d, z, 50)[3:7], 2)
    array([5., 5., 5., 5.])
    >>> z = np.interp(d, [0, 50, 100], [0, 2.5, 22.5])
    >>> filter_grades(d, z, 50).round(2).tolist()
    [5.0, 5.0, 5.0, 5.0, 5.0, 40.0, 40.0, 40.0, 40.0, 40.0]
    """
    d = np.asarray(dist_ft, dtype="float64")
    z = np.asarray(z_ft, dtype="float64")
    if not window_ft >= 0:
        raise InputError(f"grade filter window must be >= 0 ft, got {window_ft!r}")
    if d.size < 2:
        return np.zeros(0)
    raw = segment_grades(d, z)
    valid = np.isfinite(raw)
    if window_ft == 0 or not valid.any():
        return raw
    first, last = _valid_stretch_bounds(valid)
    mid = 0.5 * (d[:-1] + d[1:])
    h = np.minimum(window_ft / 2.0, np.minimum(mid - d[np.clip(first, 0, raw.size - 1)],
                                               d[np.clip(last, 0, raw.size - 1) + 1] - mid))
    a, b = mid - h, mid + h
    lo = np.searchsorted(d[1:], a, side="right")  # first segment ending after a
    hi = np.searchsorted(d[:-1], b, side="left") - 1  # last segment starting before b
    idx = np.flatnonzero(valid)
    out = np.full(raw.size, np.nan)
    width = int((hi[idx] - lo[idx]).max()) + 1
    for s in range(0, idx.size, max(1, 2_000_000 // width)):  # rows in blocks: bounded memory
        rows = idx[s: s + max(1, 2_000_000 // width)]
        j = lo[rows, None] + np.arange(width)[None, :]
        inside = j <= hi[rows, None]
        j = np.minimum(j, raw.size - 1)
        w = np.clip(np.minimum(b[rows, None], d[j + 1]) - np.maximum(a[rows, None], d[j]), 0.0, None)
        w = np.where(inside & valid[j], w, 0.0)
        # a window too small to hold any length (float underflow): the segment's own grade
        out[rows] = np.where(w.sum(axis=1) > 0, _weighted_median(np.where(w > 0, raw[j], 0.0), w), raw[rows])
    return out


def effective_window_ft(window_ft: float, cells: float, cell_size_ft: float) -> float:
    """The grade filter's window: ``window_ft``, or ``cells`` DEM cells when that is wider.

    A window shorter than about three samples (one sample per DEM cell) leaves the median of a
    segment's own grade and its neighbours' and does nothing; the cell count keeps the filter
    working on coarse DEMs (3 cells of a 10 m DEM: 98.4 ft).

    >>> effective_window_ft(15, 3, 16.404)
    49.212
    >>> effective_window_ft(15, 3, 3.2808)
    15
    """
    return max(window_ft, cells * cell_size_ft)


def _true_stretches(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, stop) segment indices (stop exclusive) of each maximal run of True in ``mask``."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


def _sub_line(profile: Profile, start_ft: float, end_ft: float) -> LineString | None:
    """The part of the profile's line between two distances (feet)."""
    if profile.line is None:
        return None
    k = profile.ft_per_unit
    return substring(profile.line, start_ft / k, end_ft / k)


def grade_runs(
    profile: Profile,
    *,
    max_grade_pct: float,
    max_run_ft: float,
    smoothing_window_ft: float = 0,
    run_length: str = "horizontal",
) -> RunResult:
    """Find stretches of a road steeper than a grade for longer than a length (HRV-010).

    The grade is measured *along the line*: |dz| / dh between consecutive samples, so uphill and
    downhill both count and a road on the contour of a steep hillside has ~0 % grade, then
    cleaned of DEM noise by :func:`filter_grades` (a running median that keeps slope breaks in
    place, so a run's length does not depend on the window). A run is a maximal contiguous
    stretch of segments whose filtered grade is over ``max_grade_pct``; a gentler segment
    splits it. Segments touching a NaN sample are not evaluated (reported apart, never gentle).
    A grade or length equal to its limit (within 1e-9 of it, relative, float noise:
    :func:`geoconstraints.units.over_limit`) is not over it.

    Parameters
    ----------
    profile : Profile
        From :func:`line_profile`.
    max_grade_pct : float
        Grade limit (25 for Vestal); a segment steeper than this is steep.
    max_run_ft : float
        Length limit (200 for Vestal); a run longer than this exceeds.
    smoothing_window_ft : float, default 0
        Window of the grade filter (:func:`filter_grades`); 0 takes the raw grades.
    run_length : {'horizontal', 'slope'}
        Length compared with ``max_run_ft``: map length (default) or ground (slope) length.

    Returns
    -------
    RunResult
        Run lengths, mean and max grades and slope lengths from the filtered grades.
    """
    _check_option("run_length", run_length, RUN_LENGTHS)
    d = np.asarray(profile.dist_ft, dtype="float64")
    total = float(d[-1]) if d.size else 0.0
    if d.size < 2:
        return RunResult([], [], 0.0, total, float("nan"), run_length, smoothing_window_ft)
    dh = np.diff(d)
    grade = filter_grades(d, profile.z_ft, smoothing_window_ft)
    evaluated = np.isfinite(grade)
    steep = evaluated & over_limit(grade, max_grade_pct, min_scale=1.0)  # a grade: noise of at least 1e-9 %
    g0 = np.where(evaluated, grade, 0.0)
    cum_gl = np.concatenate([[0.0], np.cumsum(g0 * dh)])
    cum_sl = np.concatenate([[0.0], np.cumsum(dh * np.hypot(1.0, g0 / 100.0))])

    runs = _steep_runs(profile, d, steep, grade, cum_gl, cum_sl, max_run_ft, run_length)
    gaps: list[Stretch] = []
    g_starts, g_stops = _true_stretches(~evaluated)
    for a, b in zip(g_starts, g_stops):
        s, e = float(d[a]), float(d[b])
        gaps.append(Stretch(start_ft=s, end_ft=e, length_ft=e - s, geometry=_sub_line(profile, s, e)))

    evaluated_len = float(dh[evaluated].sum())
    max_grade = float(np.max(grade[evaluated])) if evaluated.any() else float("nan")
    logger.debug(
        "grade_runs: %d runs (%d > %s ft), %.1f of %.1f ft evaluated",
        len(runs),
        sum(r.exceeds for r in runs),
        max_run_ft,
        evaluated_len,
        total,
    )
    return RunResult(runs, gaps, evaluated_len, total, max_grade, run_length, smoothing_window_ft)


def _steep_runs(profile: Profile, d: np.ndarray, steep: np.ndarray, grade: np.ndarray, cum_gl: np.ndarray,
                cum_sl: np.ndarray, max_run_ft: float, run_length: str) -> list[Run]:
    """The maximal stretches of steep segments as :class:`Run` (lengths, grades, whether they exceed)."""
    starts, stops = _true_stretches(steep)
    if not starts.size:
        return []
    length = d[stops] - d[starts]
    slope_len = cum_sl[stops] - cum_sl[starts]
    mean_g = (cum_gl[stops] - cum_gl[starts]) / length
    max_g = np.maximum.reduceat(np.where(steep, grade, -np.inf), starts)
    compared = length if run_length == "horizontal" else slope_len
    exceeds = over_limit(compared, max_run_ft)
    runs = []
    for i in range(starts.size):
        s, e = float(d[starts[i]]), float(d[stops[i]])
        a, b = int(starts[i]), int(stops[i]) + 1
        runs.append(Run(start_ft=s, end_ft=e, length_ft=float(length[i]), slope_length_ft=float(slope_len[i]),
                        mean_grade_pct=float(mean_g[i]), max_grade_pct=float(max_g[i]),
                        exceeds=bool(exceeds[i]), geometry=_sub_line(profile, s, e),
                        slope_profile=(d[a:b].copy(), cum_sl[a:b] - cum_sl[a])))
    return runs


# --------------------------------------------------------------------------------------------
# Water bars (HRV-030)
# --------------------------------------------------------------------------------------------


_END_TOL_FT = 0.1
"""A water bar this close to the road end is "at the end" (rounding, ftUS vs ft) and not placed."""


@dataclass(frozen=True)
class _Bands:
    """A water bar table as sorted arrays."""

    lo: np.ndarray
    hi: np.ndarray
    min_sp: np.ndarray
    max_sp: np.ndarray
    labels: tuple[str, ...]


def _band_label(lo: float, hi: float) -> str:
    return f"{lo:g} % and greater" if math.isinf(hi) else f"{lo:g}-{hi:g} %"


def _parse_table(table: list[dict]) -> _Bands:
    """Validate and sort a water bar table (rows of min/max grade and min/max spacing)."""
    if not table:
        raise InputError("water bar table is empty: give at least one grade band")
    need = ("min_grade_pct", "max_grade_pct", "min_spacing_ft", "max_spacing_ft")
    rows = []
    for i, row in enumerate(table):
        missing = [k for k in need if k not in row]
        if missing:
            raise InputError(f"water bar table row {i + 1}: missing {', '.join(missing)}")
        hi = math.inf if row["max_grade_pct"] is None else float(row["max_grade_pct"])
        lo = float(row["min_grade_pct"])
        mn = float(row["min_spacing_ft"])
        mx = mn if row["max_spacing_ft"] is None else float(row["max_spacing_ft"])
        if not (lo <= hi and 0 < mn <= mx):
            raise InputError(f"water bar table row {i + 1}: inconsistent values {row!r}")
        rows.append((lo, hi, mn, mx))
    rows.sort()
    arr = np.array(rows, dtype="float64")
    if np.any(arr[1:, 0] < arr[:-1, 1]):
        raise InputError("water bar table: grade bands overlap")
    return _Bands(
        arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], tuple(_band_label(lo, hi) for lo, hi, _, _ in rows)
    )


_GRADE_EPS = 1e-7
"""Grades within this (percent) of a band's bound, or of ``min_grade_pct``, are at it (float noise
on exact planes): 2 % computed as 1.99999999 % is 2 %."""


def under_min_grade(grade: Any, min_grade_pct: float) -> Any:
    """True where a net grade is under ``min_grade_pct`` (no water bar needed; HRV-030), the one test of
    it: a grade within 1e-7 % of it (float noise on an exact plane) is at it, not under.

    Examples
    --------
    >>> under_min_grade(np.array([1.99, 2.0 - 1e-9, 2.0, 2.01]), 2.0).tolist()
    [True, False, False, False]
    """
    return np.asarray(grade) < min_grade_pct - _GRADE_EPS


def _band_index(bands: _Bands, grade: np.ndarray, between_bands: str) -> np.ndarray:
    """Band index for each grade; -1 below the first band. Gaps go to the steeper/shallower band."""
    g = np.asarray(grade, dtype="float64")
    i = np.searchsorted(bands.lo, g + _GRADE_EPS, side="right") - 1
    safe = np.clip(i, 0, None)
    in_gap = (i >= 0) & (g > bands.hi[safe] + _GRADE_EPS)
    if between_bands == "steeper":
        i = np.where(in_gap, np.minimum(i + 1, bands.lo.size - 1), i)
    return np.where(np.isnan(g), -1, i)


WATER_BAR_COLUMNS_PLACED = ["dist_ft", "x", "y", "grade_pct", "band", "spacing_ft", "min_spacing_ft",
                            "max_spacing_ft", "shortened"]
"""Columns of :func:`place_water_bars` (plus point geometry)."""


@dataclass
class WaterBarWalk:
    """What :func:`walk_water_bars` found along one profile.

    Attributes
    ----------
    bars : list of tuple
        ``(distance ft, net grade % of the stretch drained, band index, spacing ft, shortened)``
        per bar; ``shortened`` when the spacing is under the band's own (a steeper stretch follows).
    steepest_grade_pct : float
        Steepest net grade of any stretch the walk weighed (NaN when none had DEM data).
    """

    bars: list[tuple[float, float, int, float, bool]]
    steepest_grade_pct: float


def _net_grades(d: np.ndarray, z: np.ndarray, bad_cum: np.ndarray, p: float, ends: np.ndarray) -> np.ndarray:
    """Net grade |z(end) - z(p)| / (end - p) × 100 of each stretch [p, end]; NaN where the
    stretch (with the samples either side of its ends) touches a sample without DEM data."""
    i0 = max(int(np.searchsorted(d, p, side="right")) - 1, 0)
    i1 = np.minimum(np.searchsorted(d, ends, side="left"), d.size - 1)
    gap = bad_cum[i1 + 1] - bad_cum[i0] > 0
    zp, ze = np.interp(p, d, z), np.interp(ends, d, z)
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.abs(ze - zp) / (ends - p) * 100.0
    return np.where(gap | ~(ends > p), np.nan, g)


def walk_water_bars(d: np.ndarray, z: np.ndarray, *, table: list[dict], min_grade_pct: float = 2,
                    spacing_end: str = "shorter", between_bands: str = "steeper") -> tuple[WaterBarWalk, _Bands]:
    """Walk a profile (distances ``d``, elevations ``z``, feet) from its start placing water bars.

    At each bar ``p`` (the road start first), the candidate spacings are the table's spacings at
    ``spacing_end``. A candidate ``s`` is allowed when the *net* grade of the stretch it drains,
    |z(p + s) - z(p)| / s (rise over run), falls in a band whose spacing is at least ``s``; the
    next bar goes at the longest allowed candidate. Rise over run over at least the shortest
    spacing (100 ft in the model-law table) is what the road's grade is: summing the absolute
    steps of a DEM profile instead adds up its noise (half a foot of noise per cell makes a
    level road look like 5 %). A stretch whose net grade is under ``min_grade_pct`` needs no
    bar: the walk moves on by the shortest spacing. Stretches touching a sample without DEM
    data are skipped the same way (the caller reports them as not evaluated).

    Returns
    -------
    (WaterBarWalk, _Bands)
        The bars and the parsed table.
    """
    _check_option("spacing_end", spacing_end, SPACING_ENDS)
    _check_option("between_bands", between_bands, BETWEEN_BANDS)
    bands = _parse_table(table)
    band_sp = bands.min_sp if spacing_end == "shorter" else bands.max_sp
    candidates = np.unique(band_sp)  # ascending
    step_min = float(candidates[0])
    bad_cum = np.concatenate([[0], np.cumsum(~np.isfinite(z))])
    total = float(d[-1]) if d.size else 0.0
    bars: list[tuple[float, float, int, float, bool]] = []
    steepest = np.nan
    p = 0.0
    while p + step_min < total:
        ends = np.minimum(p + candidates, total)
        g = _net_grades(d, z, bad_cum, p, ends)
        if np.isfinite(g).any():
            steepest = max(float(np.nanmax(g)), steepest) if np.isfinite(steepest) else float(np.nanmax(g))
        b = _band_index(bands, g, between_bands)
        no_bar = under_min_grade(g, min_grade_pct) | (b < 0)
        required = np.where(no_bar, np.inf, band_sp[np.clip(b, 0, None)])
        required[np.isnan(g)] = np.nan
        fits = np.flatnonzero(required >= candidates)  # NaN never fits
        if not fits.size or no_bar[fits[-1]]:
            p += step_min  # no DEM data ahead, or flatter than min_grade_pct: no bar
            continue
        k = int(fits[-1])
        s = float(candidates[k])
        if p + s >= total - _END_TOL_FT:
            break
        p += s
        bars.append((p, float(g[k]), int(b[k]), s, bool(required[k] > s)))
    return WaterBarWalk(bars, float(steepest)), bands


def place_water_bars(
    profile: Profile,
    line=None,
    *,
    table: list[dict],
    min_grade_pct: float = 2,
    spacing_end: str = "shorter",
    between_bands: str = "steeper",
) -> gpd.GeoDataFrame:
    """Place water bars along a haul road from its DEM profile (HRV-030).

    See :func:`walk_water_bars` for the walk (net grade of the stretch each bar drains, the
    longest table spacing that stretch allows). Readings (the rulebook's switches):

    * a stretch whose net grade is under ``min_grade_pct`` needs no bar;
    * a grade between two bands (5.5 %) takes the steeper band (``between_bands='steeper'``);
    * the spacing is the shorter end of the band's range (``spacing_end='shorter'``), reported
      with the range; a bar closer than its band's spacing because a steeper stretch follows
      is flagged ``shortened``;
    * no bar is placed at (within 0.1 ft of) or beyond the road end.

    Parameters
    ----------
    profile : Profile
    line : LineString, optional
        Line for the bar positions; default ``profile.line``.
    table : list of dict
        Rows with ``min_grade_pct``, ``max_grade_pct`` (None for the open top band),
        ``min_spacing_ft``, ``max_spacing_ft``.
    min_grade_pct : float, default 2
    spacing_end : {'shorter', 'longer'}
    between_bands : {'steeper', 'shallower'}
        Band of a grade between two bands (the rulebook switch of the same name).

    Returns
    -------
    geopandas.GeoDataFrame
        One row per bar: ``dist_ft``, ``x``, ``y``, ``grade_pct`` (net grade of the stretch
        from the previous bar), ``band``, ``spacing_ft``, ``min_spacing_ft``,
        ``max_spacing_ft``, ``shortened``, point geometry, in the profile's CRS; the steepest
        net grade weighed is in ``attrs["steepest_grade_pct"]``.
    """
    line = profile.line if line is None else _as_linestring(line)
    if line is None:
        raise InputError("place_water_bars needs the road line (profile.line is not set)")
    walk, bands = walk_water_bars(np.asarray(profile.dist_ft, dtype="float64"),
                                  np.asarray(profile.z_ft, dtype="float64"), table=table,
                                  min_grade_pct=min_grade_pct, spacing_end=spacing_end, between_bands=between_bands)
    rows: list[dict] = []
    for p, grade, bi, s, short in walk.bars:
        pt = line.interpolate(p / profile.ft_per_unit)
        rows.append({"dist_ft": p, "x": pt.x, "y": pt.y, "grade_pct": grade, "band": bands.labels[bi],
                     "spacing_ft": s, "min_spacing_ft": float(bands.min_sp[bi]),
                     "max_spacing_ft": float(bands.max_sp[bi]), "shortened": short})
    geoms = [Point(r["x"], r["y"]) for r in rows]
    out = gpd.GeoDataFrame(rows, columns=WATER_BAR_COLUMNS_PLACED, geometry=geoms, crs=profile.crs)
    out["shortened"] = out["shortened"].astype(bool)
    out.attrs["steepest_grade_pct"] = walk.steepest_grade_pct
    return out


# --------------------------------------------------------------------------------------------
# Contours (HRV-002)
# --------------------------------------------------------------------------------------------


MAX_CONTOUR_LEVELS = 5_000
"""The most contour levels :func:`contours` traces over one area: 5,000 levels at 1 ft is 5,000 ft of
relief. More means an interval too small for the ground (``0.0001`` ft traced millions of levels and
never ended): refused, giving the smallest interval that fits."""


def contours(
    dem: Dem,
    interval_ft: float,
    *,
    bounds: tuple[float, float, float, float] | None = None,
    crs=None,
) -> gpd.GeoDataFrame:
    """Contour lines of a DEM at a fixed interval in feet (HRV-002: 10 ft or less).

    Uses contourpy on the cell-centre grid (linear interpolation, the same surface as
    :meth:`Dem.sample`); nodata cells are masked.

    Parameters
    ----------
    dem : Dem
    interval_ft : float
        Contour interval, feet (> 0); levels are multiples of it.
    bounds : (xmin, ymin, xmax, ymax), optional
        Area in the DEM CRS; default the whole DEM.
    crs : CRS-like, optional
        Output CRS; default the DEM CRS.

    Returns
    -------
    geopandas.GeoDataFrame
        One row per level with ``elev_ft`` and a (Multi)LineString geometry.
    """
    import contourpy

    if not interval_ft > 0:
        raise InputError(f"contour interval must be > 0 ft, got {interval_ft!r}")
    t = dem.transform
    if t.b != 0 or t.d != 0:
        raise DemError(f"DEM {dem.path.name}: rotated grids are not supported for contours. {rotated_fix(dem)}")
    r0, r1, c0, c1 = 0, dem.height, 0, dem.width
    if bounds is not None:
        xmin, ymin, xmax, ymax = bounds
        inv = ~t
        cs, rs = apply_transform(inv, np.array([xmin, xmin, xmax, xmax]), np.array([ymin, ymax, ymin, ymax]))
        c0, c1 = max(0, math.floor(cs.min())), min(dem.width, math.ceil(cs.max()))
        r0, r1 = max(0, math.floor(rs.min())), min(dem.height, math.ceil(rs.max()))
    z = dem.read_ft(((r0, r1), (c0, c1)))
    out_crs = dem.crs if crs is None else to_pyproj(crs)
    empty = gpd.GeoDataFrame({"elev_ft": []}, geometry=[], crs=out_crs)
    if z.size == 0 or not np.isfinite(z).any() or min(z.shape) < 2:
        return empty
    xs = t.c + t.a * (np.arange(c0, c1) + 0.5)
    ys = t.f + t.e * (np.arange(r0, r1) + 0.5)
    gen = contourpy.contour_generator(
        x=xs,
        y=ys,
        z=np.ma.masked_invalid(z),
        line_type=contourpy.LineType.Separate,
    )
    zmin, zmax = float(np.nanmin(z)), float(np.nanmax(z))
    first, last = math.ceil(zmin / interval_ft), math.floor(zmax / interval_ft)
    if last - first + 1 > MAX_CONTOUR_LEVELS:
        need = (zmax - zmin) / MAX_CONTOUR_LEVELS
        raise InputError(f"contour interval {interval_ft:g} ft over the {zmax - zmin:,.1f} ft of relief of DEM "
                         f"{dem.path.name} here gives {last - first + 1:,} contour levels; at most "
                         f"{MAX_CONTOUR_LEVELS:,} are traced. Give a contour interval of at least {need:.2g} ft "
                         f"(the rulebook's contour_interval_ft)")
    levels = np.arange(first, last + 1) * interval_ft
    elev, geoms = [], []
    for level in levels:
        parts = [LineString(a) for a in gen.lines(float(level)) if len(a) >= 2]
        if not parts:
            continue
        elev.append(float(level))
        geoms.append(parts[0] if len(parts) == 1 else MultiLineString(parts))
    if not geoms:
        return empty
    gdf = gpd.GeoDataFrame({"elev_ft": elev}, geometry=geoms, crs=dem.crs)
    return gdf if same_crs(dem.crs, out_crs) else gdf.to_crs(out_crs)


# --------------------------------------------------------------------------------------------
# Highest adjacent grade (FLD-004)
# --------------------------------------------------------------------------------------------


def highest_adjacent_grade(
    dem: Dem,
    footprint: Polygon | MultiPolygon,
    crs,
    *,
    step_ft: float | None = None,
) -> tuple[float, float, float]:
    """Highest and lowest natural grade along a building footprint's walls (FLD-004).

    The exterior ring of each part is densified (every corner kept, default step one DEM cell)
    and sampled bilinearly: the HAG is the highest grade *next to* the proposed walls, i.e. on
    the wall line itself, from a pre-construction DEM.

    Parameters
    ----------
    dem : Dem
    footprint : Polygon or MultiPolygon
        In ``crs`` (projected, feet or metres).
    crs : CRS-like
    step_ft : float, optional
        Sample spacing along the walls, feet; default the DEM cell size.

    Returns
    -------
    (max_ft, min_ft, fraction_evaluated) : tuple of float
        ``max_ft``/``min_ft`` are NaN if nothing could be sampled; ``fraction_evaluated`` is the
        share of the perimeter whose wall segments have DEM data at both ends (0..1).
    """
    crs = to_pyproj(crs)
    k = ft_per_unit(crs)
    if k is None:
        raise CRSError(f"footprint CRS {crs.name} is geographic: reproject it to feet first")
    if isinstance(footprint, Polygon):
        parts = [footprint]
    elif isinstance(footprint, MultiPolygon):
        parts = list(footprint.geoms)
    else:
        raise GeometryError(f"expected a Polygon footprint, got {footprint.geom_type}")
    if not parts or all(p.is_empty for p in parts):
        raise GeometryError("cannot take the highest adjacent grade of an empty footprint")
    step = (dem.cell_size_ft if step_ft is None else float(step_ft)) / k
    zs, seg_len, seg_ok = [], [], []
    for part in parts:
        xs, ys, dist = densify(LineString(part.exterior.coords), step)
        z = dem.sample(xs, ys, crs)
        zs.append(z)
        seg_len.append(np.diff(dist))
        seg_ok.append(np.isfinite(z[:-1]) & np.isfinite(z[1:]))
    z_all = np.concatenate(zs)
    lengths = np.concatenate(seg_len)
    ok = np.concatenate(seg_ok)
    frac = float(lengths[ok].sum() / lengths.sum()) if lengths.sum() > 0 else 0.0
    if not np.isfinite(z_all).any():
        return float("nan"), float("nan"), frac
    return float(np.nanmax(z_all)), float(np.nanmin(z_all)), frac



# --------------------------------------------------------------------------------------------
# Every road of a plan at once (grade runs, water bars, the road table)
# --------------------------------------------------------------------------------------------


@dataclass
class RoadTerrain:
    """Grade runs and water bars of one road line (all its parts).

    Attributes
    ----------
    layer, feature_id : str
        The road's layer (``haul_roads``, ``skid_trails``) and id.
    length_ft, evaluated_length_ft : float
        Horizontal length in international feet (the CRS's feet converted, like the profile's
        distances), and the part the DEM covered (never more than ``length_ft``).
    runs : list of Run
        Steep runs of every part (see :func:`grade_runs`).
    gaps : list of Stretch
        Stretches off the DEM or on nodata cells, or parts on cells without relief (:attr:`Stretch.why`).
    max_grade_pct, mean_grade_pct : float
        Steepest segment and length-weighted mean, of the filtered grades (:func:`filter_grades`;
        NaN when nothing evaluated).
    window_ft : float
        Window of the grade filter used (0 = raw grades).
    window_note : str
        How the window was chosen (the rulebook's, or widened to a number of DEM cells).
    water_bars : GeoDataFrame or None
        Bars placed along it (:func:`place_water_bars`), None when none were asked for.
    steepest_net_grade_pct : float
        Steepest net grade (rise over run) of any stretch the water-bar walk weighed (NaN when
        none was weighed: no bars asked for, no DEM data, or a road shorter than the spacing).
    error : str
        Why the road could not be profiled at all (no DEM, a line the DEM cannot take, cells without
        relief), in the engine's words (the road table's ``note``); '' when it was profiled.
    why : str
        The key of ``error``, for a rule to word it: ``no_dem`` (no DEM given), ``no_relief`` (every cell
        around the road holds ``flat_ft``, on the DEM ``dem_name``) or ``line_error`` (a line the engine
        cannot profile: ``error`` is the :class:`~geoconstraints.errors.GeometryError`'s message);
        '' when it was profiled.
    flat_ft : float
        The height every DEM cell around the road holds (``why`` ``no_relief``; NaN otherwise).
    dem_name : str
        The file name of the DEM the road was profiled on ('' without a DEM).
    dem_cell_ft : float
        The DEM's cell, the larger of its width and height in feet
        (:attr:`~geoconstraints.io.dem.Dem.max_cell_size_ft`; NaN without a DEM): the shortest
        stretch the profile can show, which a rule's pass weighs against its ``max_dem_cell_ft``.
    """

    layer: str
    feature_id: str
    length_ft: float
    runs: list[Run] = field(default_factory=list)
    gaps: list[Stretch] = field(default_factory=list)
    evaluated_length_ft: float = 0.0
    max_grade_pct: float = float("nan")
    mean_grade_pct: float = float("nan")
    window_ft: float = 0.0
    window_note: str = ""
    water_bars: gpd.GeoDataFrame | None = None
    steepest_net_grade_pct: float = float("nan")
    error: str = ""
    dem_cell_ft: float = float("nan")
    why: str = ""
    flat_ft: float = float("nan")
    dem_name: str = ""

    @property
    def fully_evaluated(self) -> bool:
        """True when the DEM covered the whole road."""
        return not self.error and not self.gaps


def grade_window(dem: Dem, grade: Mapping[str, Any] | None) -> tuple[float, str]:
    """The grade filter's window for ``dem`` from the settings (``smoothing_window_ft`` and
    ``smoothing_window_cells``), and a sentence saying how it was chosen."""
    if grade is None:
        return 0.0, "raw grades (no filter)"
    w = float(grade.get("smoothing_window_ft", 0.0))
    cells = float(grade.get("smoothing_window_cells", 0.0))
    if w == 0 and cells == 0:
        return 0.0, "raw grades (no filter)"
    eff = effective_window_ft(w, cells, dem.cell_size_ft)
    how = (f"running median of the grades over {eff:,.1f} ft"
           + (f" ({cells:g} DEM cells of {dem.cell_size_ft:,.1f} ft; the rulebook's {w:g} ft window is "
              f"smaller than that)" if eff > w else ""))
    return eff, how


def road_terrain(
    dem: Dem | None,
    line: Any,
    crs: Any,
    *,
    layer: str = "",
    feature_id: str = "",
    grade: Mapping[str, Any] | None = None,
    water_bars: Mapping[str, Any] | None = None,
) -> RoadTerrain:
    """Profile one road line (every part of a MultiLineString) and measure its grades.

    Parameters
    ----------
    dem : Dem or None
        None gives a :class:`RoadTerrain` with ``error`` set (nothing measured).
    line : LineString or MultiLineString
        In ``crs`` (feet).
    crs : CRS-like
    layer, feature_id : str
        Recorded on the result.
    grade : mapping, optional
        ``max_grade_pct``, ``max_run_ft``, ``run_length`` of :func:`grade_runs`, and the grade
        filter's ``smoothing_window_ft`` and ``smoothing_window_cells`` (the window is the wider
        of the two, :func:`grade_window`); None measures raw grades without a limit.
    water_bars : mapping, optional
        Keyword arguments of :func:`place_water_bars` (``table``, ``min_grade_pct``,
        ``spacing_end``, ``between_bands``); None places none.

    Returns
    -------
    RoadTerrain
    """
    # in international feet like the profile's distances: a US-survey-foot CRS's length is 2 ppm short of
    # them (S-3 of the sample: 494.97 ft long, 494.98 ft evaluated)
    rt = RoadTerrain(layer, str(feature_id), float(shapely.length(line)) * (ft_per_unit(crs) or 1.0))
    if dem is None:
        rt.error, rt.why = "no DEM given (--dem)", "no_dem"
        return rt
    merged = shapely.line_merge(line) if line.geom_type == "MultiLineString" else line
    rt.dem_cell_ft, rt.dem_name = dem.max_cell_size_ft, dem.path.name
    rt.window_ft, rt.window_note = grade_window(dem, grade)
    limits: dict[str, Any] = {"max_grade_pct": np.inf, "max_run_ft": np.inf}
    if grade is not None:
        limits = {k: grade[k] for k in ("max_grade_pct", "max_run_ft", "run_length") if k in grade}
    bars: list[gpd.GeoDataFrame] = []
    maxg: list[float] = []
    gl_sum = ev_sum = 0.0
    steepest = np.nan
    flat: list[float] = []  # the value of each part on cells without relief
    for part in shapely.get_parts(merged):
        if part.length == 0:
            continue
        try:
            prof = line_profile(dem, part, crs)
        except GeometryError as exc:  # an error's own message (a line the loaders refuse: not reached from them)
            rt.error, rt.why = str(exc), "line_error"
            break
        if prof.flat_ft is not None:  # zero relief is no grade measured: never a pass
            flat.append(prof.flat_ft)
            rt.gaps.append(Stretch(0.0, prof.length_ft, prof.length_ft, part, why="no_relief", flat_ft=prof.flat_ft))
            continue
        res = grade_runs(prof, **limits, smoothing_window_ft=rt.window_ft)
        rt.runs.extend(res.runs)
        rt.gaps.extend(res.not_evaluated)
        rt.evaluated_length_ft += res.evaluated_length_ft
        if np.isfinite(res.max_grade_pct):
            maxg.append(res.max_grade_pct)
        g = filter_grades(prof.dist_ft, prof.z_ft, rt.window_ft)
        ok = np.isfinite(g)
        gl_sum += float((g[ok] * np.diff(prof.dist_ft)[ok]).sum())
        ev_sum += float(np.diff(prof.dist_ft)[ok].sum())
        if water_bars is not None:
            wb = place_water_bars(prof, **water_bars)
            st = float(wb.attrs.get("steepest_grade_pct", np.nan))
            steepest = st if not np.isfinite(steepest) else max(steepest, st) if np.isfinite(st) else steepest
            bars.append(wb)
    if flat and len(flat) == len(rt.gaps) and not rt.error and rt.evaluated_length_ft == 0:
        # the whole road: one reason, not a stretch list
        rt.error, rt.why, rt.flat_ft = no_relief_note(dem, flat[0]), "no_relief", flat[0]
    rt.evaluated_length_ft = min(rt.evaluated_length_ft, rt.length_ft)  # the sum of the pieces: float noise over
    rt.max_grade_pct = max(maxg) if maxg else float("nan")
    rt.mean_grade_pct = gl_sum / ev_sum if ev_sum > 0 else float("nan")
    rt.steepest_net_grade_pct = float(steepest)
    if bars:
        rt.water_bars = pd.concat(bars, ignore_index=True) if len(bars) > 1 else bars[0]
    return rt


def no_relief_note(dem: Dem, value_ft: float) -> str:
    """Why a road on DEM cells that all hold ``value_ft`` is not evaluated, in the engine's words (the road
    table's ``note``; a rule words :attr:`RoadTerrain.why` ``no_relief`` with its own phrase)."""
    return (f"every cell of DEM {dem.path.name} around the road holds {value_ft:,.2f} ft: no relief, so no grade "
            f"measured (a water body's flattened surface, a no-data fill the DEM does not declare, or a placeholder "
            f"raster?)")


def roads_terrain(
    dem: Dem | None,
    roads: Mapping[str, gpd.GeoDataFrame | None],
    crs: Any,
    *,
    grade: Mapping[str, Any] | None = None,
    water_bars: Mapping[str, Any] | None = None,
    water_bar_layers: Sequence[str] = ("haul_roads",),
) -> dict[tuple[str, str], RoadTerrain]:
    """:func:`road_terrain` of every road of every layer, keyed ``(layer, feature_id)``.

    Parameters
    ----------
    roads : mapping
        Layer name -> lines with ``feature_id`` (or None: skipped).
    water_bar_layers : sequence of str
        Layers that get water bars (when ``water_bars`` is given).

    Examples
    --------
    >>> out = roads_terrain(None, {"haul_roads": gpd.GeoDataFrame(
    ...     {"feature_id": ["R1"]}, geometry=[LineString([(0, 0), (300, 400)])])}, None)
    >>> rt = out[("haul_roads", "R1")]
    >>> rt.length_ft, rt.error, rt.why
    (500.0, 'no DEM given (--dem)', 'no_dem')
    """
    out: dict[tuple[str, str], RoadTerrain] = {}
    for layer, g in roads.items():
        if g is None:
            continue
        bars = water_bars if layer in water_bar_layers else None
        for fid, geom in zip(g["feature_id"].astype(str), g.geometry.values):
            out[(layer, fid)] = road_terrain(dem, geom, crs, layer=layer, feature_id=fid, grade=grade,
                                             water_bars=bars)
        if grade is not None and "max_run_ft" in grade:  # a road digitised in pieces is one road
            runs = [(fid, r) for (lay, fid), rt in out.items() if lay == layer for r in rt.runs]
            joined = join_runs(runs, max_run_ft=float(grade["max_run_ft"]),
                               run_length=str(grade.get("run_length", "horizontal")), within=True)
            for i, j in joined.items():
                run = runs[i][1]
                run.joined_ft, run.joined_with = j.length_ft, joined_roads_text(layer, runs[i][0], j.others)
                run.exceeds = not j.cut_short and bool(over_limit(j.length_ft, float(grade["max_run_ft"])))
                run.join_cut_short = j.cut_short
    return out


def joined_roads_text(layer: str, road_id: str, others: Sequence[str]) -> str:
    """The roads of a joined stretch's other runs as :attr:`Run.joined_with` says them: ``layer id, ...``,
    the run's own road marked (its line meets or crosses itself there: a ring's start/end vertex, a
    figure-eight's crossing, two parts of it meeting); '' when none.

    Examples
    --------
    >>> joined_roads_text("haul_roads", "A", ["B", "C"])
    'haul_roads B, C'
    >>> joined_roads_text("haul_roads", "A", ["A", "B"])
    'haul_roads A (its own line, where it meets or crosses itself), B'
    >>> joined_roads_text("haul_roads", "A", [])
    ''
    """
    if not others:
        return ""
    names = [f"{o} (its own line, where it meets or crosses itself)" if o == road_id else o for o in others]
    return f"{layer} {', '.join(names)}"


_JOIN_TOL = 1e-6
"""Run ends this close (units of the line CRS) are one point: roads digitised end to end share the
vertex (numerical, not law)."""

_JOIN_MAX_STEPS = 5_000
"""The most path extensions :func:`join_runs` tries from one run (a bound on its work over a dense
network of steep runs; a real plan's joined runs take a handful)."""


class JoinedRun(NamedTuple):
    """What :func:`join_runs` found for one run (see there)."""

    length_ft: float
    """Compared length of the longest stretch of joined runs through it found, ft."""
    others: list[str]
    """The ids of the roads of the other runs on that stretch (the run's own road among them when
    another of its runs is there: a line meeting or crossing itself)."""
    cut_short: bool
    """The search stopped at :data:`_JOIN_MAX_STEPS` with no stretch over the limit found."""


def join_runs(runs: Sequence[tuple[str, Run]], *, max_run_ft: float,
              run_length: str = "horizontal", within: bool = False) -> dict[int, JoinedRun]:
    """The steep runs not over the limit alone that are, joined with other steep runs.

    A haul road digitised in pieces (split at a junction, a vertex, a map sheet) is one road on
    the ground: a run steeper than the limit that reaches the end of one piece goes on along the
    steep run starting where it ends. The runs of one road are joined as those of two: a ring road
    steep across its start/end vertex (the runs measured from the line's start and from its end
    meet there), a line crossing itself (a figure-eight) steep through the crossing both times,
    the parts of one road meeting at a junction. A run is first split where another run ends on it (a spur
    leaving the middle of a steep run) and where two runs cross or touch (two haul roads crossing
    in an X, each steep through the crossing: a vehicle turns there, so half of one and half of
    the other are one steep stretch) (:func:`_node_runs`); the pieces are the edges of a graph
    whose nodes are their end points (ends within 1e-6 of a unit are one point); the longest
    simple path of pieces through each run is compared with ``max_run_ft`` (two runs meeting at a
    junction form a path, whichever way the roads continue). The search from one piece stops after
    :data:`_JOIN_MAX_STEPS` path extensions: a run whose search stopped before finding a path over
    the limit is returned ``cut_short`` (not known to be within it).

    Parameters
    ----------
    runs : sequence of (str, Run)
        The runs of one layer, each with the id of its road (runs without geometry are skipped).
    max_run_ft : float
        The length limit; a path of exactly it does not exceed (1e-9 relative, float noise).
    run_length : {'horizontal', 'slope'}
        The length compared.
    within : bool, default False
        Also return the runs whose longest path with another run is within the limit (their length is
        then at most ``max_run_ft``: :func:`~geoconstraints.units.over_limit` tells them apart), so that a
        pass can give the length of the joined stretch, not of the run alone.

    Returns
    -------
    dict
        Index in ``runs`` -> :class:`JoinedRun` (compared length of the longest path through it
        found, ft; the ids of the roads of the other runs on that path; whether the search was cut
        short), for the runs not over the limit alone whose path holds another run and is over the
        limit, those whose search was cut short, and with ``within`` those whose path holds another
        run within the limit.

    Examples
    --------
    One road split in two pieces, 150 ft of 40 % on each side of the joint, and a third road apart:

    >>> def run(a, b):
    ...     return Run(0.0, 150.0, 150.0, 161.6, 40.0, 40.0, False, LineString([a, b]))
    >>> join_runs([("A", run((0, 0), (150, 0))), ("B", run((150, 0), (300, 0))),
    ...            ("C", run((0, 50), (150, 50)))], max_run_ft=200)
    {0: JoinedRun(length_ft=300.0, others=['B'], cut_short=False), 1: JoinedRun(length_ft=300.0, others=['A'], cut_short=False)}

    A spur starting at the middle of a steep run: 75 ft along it, then 150 ft up the spur.

    >>> join_runs([("A", run((0, 0), (150, 0))), ("B", run((75, 0), (75, 150)))], max_run_ft=200)
    {0: JoinedRun(length_ft=225.0, others=['B'], cut_short=False), 1: JoinedRun(length_ft=225.0, others=['A'], cut_short=False)}

    Two runs crossing in an X, 110 ft along one and 100 ft up the other from the crossing (no end
    shared): 210 ft.

    >>> join_runs([("A", run((0, 0), (150, 0))), ("B", run((40, -50), (40, 100)))], max_run_ft=200)
    {0: JoinedRun(length_ft=210.0, others=['B'], cut_short=False), 1: JoinedRun(length_ft=210.0, others=['A'], cut_short=False)}

    A ring road A steep across its start/end vertex (0, 0): 150 ft from its start, 150 ft into its end.

    >>> join_runs([("A", run((0, 0), (150, 0))), ("A", run((-150, 0), (0, 0)))], max_run_ft=200)
    {0: JoinedRun(length_ft=300.0, others=['A'], cut_short=False), 1: JoinedRun(length_ft=300.0, others=['A'], cut_short=False)}

    A spur of 125 ft from the middle: 75 + 125 = 200 ft, not over the limit; ``within`` still gives it.

    >>> b = Run(0.0, 125.0, 125.0, 134.6, 40.0, 40.0, False, LineString([(75, 0), (75, 125)]))
    >>> spur = [("A", run((0, 0), (150, 0))), ("B", b)]
    >>> join_runs(spur, max_run_ft=200), join_runs(spur, max_run_ft=200, within=True)[0]
    ({}, JoinedRun(length_ft=200.0, others=['B'], cut_short=False))
    """
    _check_option("run_length", run_length, RUN_LENGTHS)
    keep = [i for i, (_, r) in enumerate(runs) if r.geometry is not None and not r.geometry.is_empty]
    if len(keep) < 2:
        return {}
    parent, geoms, length = _node_runs([runs[i][1] for i in keep], run_length)
    pts = np.concatenate([shapely.get_point(geoms, 0), shapely.get_point(geoms, -1)])
    a, b = shapely.STRtree(pts).query(pts, predicate="dwithin", distance=_JOIN_TOL)
    from scipy.sparse import coo_matrix  # imported here: a screening does not pay scipy's import
    from scipy.sparse.csgraph import connected_components

    node = connected_components(coo_matrix((np.ones(len(a)), (a, b)), shape=(len(pts),) * 2), directed=False)[1]
    m = len(geoms)
    ends = [(int(node[e]), int(node[m + e])) for e in range(m)]
    adj: dict[int, list[tuple[int, int]]] = {}
    for e, (u, v) in enumerate(ends):
        adj.setdefault(u, []).append((v, e))
        adj.setdefault(v, []).append((u, e))
    found: dict[int, tuple[float, list[str], bool]] = {}  # index in keep -> longest, others' roads, cut short
    for e, (u, v) in enumerate(ends):
        k = int(parent[e])
        if runs[keep[k]][1].exceeds or len(adj[u]) + len(adj[v]) <= 2:
            continue
        best, path, complete = _longest_path_through(adj, length, e, u, v)
        # the roads of the other runs on it: its own road too (a ring's seam, a figure-eight's crossing)
        others = sorted({runs[keep[int(parent[f])]][0] for f in path if int(parent[f]) != k})
        old = found.get(k, (-1.0, [], False))
        found[k] = (*((best, others) if best > old[0] else old[:2]), old[2] or not complete)
    out: dict[int, JoinedRun] = {}
    for k, (best, others, cut) in found.items():
        if over_limit(best, max_run_ft) and others:  # pieces of the run alone: at most its length
            out[keep[k]] = JoinedRun(best, others, False)  # a path over the limit exists, however far the search went
        elif cut:
            out[keep[k]] = JoinedRun(best, others, True)
        elif within and others:
            out[keep[k]] = JoinedRun(best, others, False)
    return out


def _node_runs(runs: Sequence[Run], run_length: str) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """The runs split where the end of another lies on them (within :data:`_JOIN_TOL`) and where two
    runs cross or touch (:func:`_run_cuts`): (index of each piece's run, the pieces' lines, their
    compared lengths, ft).

    A piece's horizontal length is its share of the run's; its slope length is read from the run's
    :attr:`Run.slope_profile` (its share of the run's when that is not known: a uniform grade).

    Examples
    --------
    >>> r = Run(0.0, 150.0, 150.0, 161.6, 40.0, 40.0, False, LineString([(0, 0), (150, 0)]))
    >>> spur = Run(0.0, 150.0, 150.0, 161.6, 40.0, 40.0, False, LineString([(50, 0), (50, 150)]))
    >>> parent, pieces, length = _node_runs([r, spur], "horizontal")
    >>> parent.tolist(), [p.wkt for p in pieces[:2]], length
    ([0, 0, 1], ['LINESTRING (0 0, 50 0)', 'LINESTRING (50 0, 150 0)'], [50.0, 100.0, 150.0])
    """
    geoms = np.array([r.geometry for r in runs], dtype=object)
    glen = shapely.length(geoms)
    gi, at = _run_cuts(geoms)
    cuts: dict[int, list[float]] = {}
    for g, t in zip(gi.tolist(), at.tolist()):
        if _JOIN_TOL < t < glen[g] - _JOIN_TOL:  # not at the run's own ends (those are nodes already)
            cuts.setdefault(g, []).append(t)
    parent: list[int] = []
    pieces: list[Any] = []
    length: list[float] = []
    for k, r in enumerate(runs):
        full = r.length_ft if run_length == "horizontal" else r.slope_length_ft
        if k not in cuts:
            parent.append(k)
            pieces.append(r.geometry)
            length.append(full)
            continue
        at_ = [0.0, *_distinct(cuts[k]), float(glen[k])]
        ft = np.array(at_) / glen[k] * r.length_ft  # along the run, horizontal ft
        if run_length == "horizontal":
            cum = ft
        elif r.slope_profile is not None:
            cum = np.interp(r.start_ft + ft, *r.slope_profile)
        else:
            cum = ft / r.length_ft * r.slope_length_ft if r.length_ft > 0 else ft * 0.0
        for j in range(len(at_) - 1):
            parent.append(k)
            pieces.append(substring(r.geometry, at_[j], at_[j + 1]))
            length.append(float(cum[j + 1] - cum[j]))
    return np.array(parent, dtype=int), np.array(pieces, dtype=object), length


def _run_cuts(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each run is to be split (:func:`_node_runs`): (index of the run, distance along its line,
    line units), at every end of another run lying on it (within :data:`_JOIN_TOL`) and at every point
    where two runs intersect (a crossing, interior points touching, the ends of a shared stretch).

    Pairs are found with one STRtree query and their intersections computed at once (no loop over
    pairs); the cuts at a run's own ends are the caller's to drop.

    Examples
    --------
    Two runs crossing in an X at (60, 0), and a third ending on the first at (100, 0):

    >>> g = np.array([LineString([(0, 0), (150, 0)]), LineString([(60, -50), (60, 50)]),
    ...               LineString([(100, 0), (100, 80)])], dtype=object)
    >>> gi, at = _run_cuts(g)
    >>> sorted(zip(gi.tolist(), at.tolist()))
    [(0, 60.0), (0, 100.0), (0, 100.0), (1, 50.0), (2, 0.0)]
    """
    m = len(geoms)
    tree = shapely.STRtree(geoms)
    ends = np.concatenate([shapely.get_point(geoms, 0), shapely.get_point(geoms, -1)])
    pi, gi = tree.query(ends, predicate="dwithin", distance=_JOIN_TOL)  # an end of one on another
    other = pi % m != gi
    pts, runs_ = [ends[pi[other]]], [gi[other]]
    a, b = tree.query(geoms, predicate="intersects")  # two runs meeting anywhere
    a, b = a[a < b], b[a < b]
    if len(a):
        xy, pair = shapely.get_coordinates(shapely.intersection(geoms[a], geoms[b]), return_index=True)
        meet = shapely.points(xy)
        pts += [meet, meet]
        runs_ += [a[pair], b[pair]]
    p, g = np.concatenate(pts), np.concatenate(runs_).astype(int)
    return g, (shapely.line_locate_point(geoms[g], p) if len(g) else np.array([], dtype="float64"))


def _distinct(at: Sequence[float]) -> list[float]:
    """The distances sorted, those within :data:`_JOIN_TOL` of the one before dropped (one cut found
    twice: an end on the run and the point where the two meet).

    Examples
    --------
    >>> _distinct([100.0, 60.0, 100.0 + 1e-9])
    [60.0, 100.0]
    """
    out: list[float] = []
    for t in sorted(at):
        if not out or t - out[-1] > _JOIN_TOL:
            out.append(t)
    return out


def _longest_path_through(adj: Mapping[int, list[tuple[int, int]]], length: Sequence[float], e: int, u: int,
                          v: int) -> tuple[float, list[int], bool]:
    """The longest simple path of edges through edge ``e`` (``u`` - ``v``), its edges, and whether the
    search was complete: grown first at ``v``, then at ``u`` (each path once), at most
    :data:`_JOIN_MAX_STEPS` extensions (then False: the longest found)."""
    def options(a: int, b: int, phase: int) -> Any:
        return iter(([(1, n, f) for n, f in adj[b]] if phase == 0 else []) + [(0, n, f) for n, f in adj[a]])

    seen, path, total = {u, v}, [e], length[e]
    best, best_path = total, [e]
    stack: list[tuple[int, int, int, Any, int, int]] = [(u, v, 0, options(u, v, 0), -1, -1)]
    steps, stopped = 0, False
    while stack:
        a, b, _phase, it, added, via = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            if via >= 0:
                seen.discard(added)
                path.pop()
                total -= length[via]
            continue
        side, n, f = nxt
        if n in seen:
            continue
        if steps >= _JOIN_MAX_STEPS:
            stopped = True  # an extension left untried: the search is incomplete
            continue
        steps += 1
        seen.add(n)
        path.append(f)
        total += length[f]
        if total > best:
            best, best_path = total, list(path)
        na, nb, nph = (a, n, 0) if side == 1 else (n, b, 1)
        stack.append((na, nb, nph, options(na, nb, nph), n, f))
    if stopped:
        logger.warning("join_runs: more than %d paths of steep runs joined end to end; the longest found is "
                       "%.1f ft", _JOIN_MAX_STEPS, best)
    return best, best_path, not stopped


GRADE_RUN_COLUMNS = ["road_layer", "road_id", "start_ft", "end_ft", "length_ft", "slope_length_ft",
                     "mean_grade_pct", "max_grade_pct", "exceeds", "joined_ft", "joined_with", "cut_short"]
WATER_BAR_COLUMNS = ["road_id", "dist_ft", "grade_pct", "band", "spacing_ft", "min_spacing_ft", "max_spacing_ft",
                     "shortened"]
ROAD_TABLE_COLUMNS = ["road_layer", "road_id", "length_ft", "evaluated_length_ft", "max_grade_pct",
                      "mean_grade_pct", "grade_window_ft", "steep_runs", "runs_over_limit", "runs_cut_short",
                      "not_evaluated_ft", "water_bars", "note"]


def grade_runs_layer(terrain: Mapping[tuple[str, str], RoadTerrain], crs: Any) -> gpd.GeoDataFrame:
    """Every steep stretch of every road as a line layer (:data:`GRADE_RUN_COLUMNS`), saying what
    HRV-010 finds of it: ``exceeds`` (a violation: over the limit alone or joined with other steep
    runs, of other roads or of its own line where it meets or crosses itself), else ``cut_short``
    (review: the search of the runs joined to it stopped at its bound, so it is not known to be
    within the limit), else within it. ``joined_ft`` is the length of the joined stretch through it
    (over the limit, or the longest found when cut short; NaN when none) and ``joined_with`` the
    roads of its other runs (:func:`joined_roads_text`; '' when none).

    Examples
    --------
    >>> rt = RoadTerrain("haul_roads", "R1", 80.0, runs=[Run(0.0, 80.0, 80.0, 86.2, 40.0, 40.0, False,
    ...     LineString([(0, 0), (80, 0)]), joined_ft=160.0, joined_with="haul_roads R2", join_cut_short=True)])
    >>> grade_runs_layer({("haul_roads", "R1"): rt}, None)[["exceeds", "joined_ft", "cut_short"]].values.tolist()
    [[False, 160.0, True]]
    """
    rows = [(layer, fid, r.start_ft, r.end_ft, r.length_ft, r.slope_length_ft, r.mean_grade_pct,
             r.max_grade_pct, bool(r.exceeds), float(r.joined_ft), r.joined_with, bool(r.join_cut_short), r.geometry)
            for (layer, fid), rt in terrain.items() for r in rt.runs]
    df = pd.DataFrame([r[:-1] for r in rows], columns=GRADE_RUN_COLUMNS)
    return gpd.GeoDataFrame(df, geometry=gpd.GeoSeries([r[-1] for r in rows], crs=crs).values, crs=crs)


def water_bars_layer(terrain: Mapping[tuple[str, str], RoadTerrain], crs: Any) -> gpd.GeoDataFrame:
    """Every water bar placed as a point layer (``road_id`` first)."""
    frames = []
    for (_layer, fid), rt in terrain.items():
        if rt.water_bars is not None and len(rt.water_bars):
            wb = rt.water_bars.copy()
            wb.insert(0, "road_id", fid)
            frames.append(wb)
    if not frames:
        return gpd.GeoDataFrame(pd.DataFrame(columns=WATER_BAR_COLUMNS),
                                geometry=gpd.GeoSeries([], crs=crs).values, crs=crs)
    out = pd.concat(frames, ignore_index=True)
    return gpd.GeoDataFrame(out[WATER_BAR_COLUMNS], geometry=out.geometry.values, crs=crs)


def road_table(terrain: Mapping[tuple[str, str], RoadTerrain]) -> pd.DataFrame:
    """One row per road (:data:`ROAD_TABLE_COLUMNS`): length, grades, runs, water bars (a count:
    nullable integers, blank for the layers that get none, ``skid_trails``).

    ``runs_over_limit`` counts the runs over HRV-010's limit (violations), ``runs_cut_short`` those
    whose search of the steep runs joined to them was cut short (review: not known to be within the
    limit, :attr:`Run.join_cut_short`), so a road with neither is one whose runs are all within it;
    ``not_evaluated_ft`` and ``note`` say what was not measured.

    Examples
    --------
    >>> rt = RoadTerrain("haul_roads", "C2", 80.0, runs=[Run(0.0, 80.0, 80.0, 86.2, 40.0, 40.0, False,
    ...     LineString([(0, 0), (80, 0)]), joined_ft=160.0, join_cut_short=True)], evaluated_length_ft=80.0)
    >>> road_table({("haul_roads", "C2"): rt})[["steep_runs", "runs_over_limit", "runs_cut_short"]].values.tolist()
    [[1, 0, 1]]
    """
    rows = [{
        "road_layer": layer, "road_id": fid, "length_ft": rt.length_ft,
        "evaluated_length_ft": rt.evaluated_length_ft, "max_grade_pct": rt.max_grade_pct,
        "mean_grade_pct": rt.mean_grade_pct, "grade_window_ft": rt.window_ft, "steep_runs": len(rt.runs),
        "runs_over_limit": sum(bool(r.exceeds) for r in rt.runs),
        "runs_cut_short": sum(bool(r.join_cut_short) and not r.exceeds for r in rt.runs),
        "not_evaluated_ft": float(sum(s.length_ft for s in rt.gaps)),
        "water_bars": None if layer != "haul_roads" else (len(rt.water_bars) if rt.water_bars is not None else 0),
        "note": rt.error,
    } for (layer, fid), rt in terrain.items()]
    return pd.DataFrame(rows, columns=ROAD_TABLE_COLUMNS).astype({"water_bars": "Int64"})


def empty_contours(crs: Any) -> gpd.GeoDataFrame:
    """A contour layer without lines (``elev_ft`` + geometry)."""
    return gpd.GeoDataFrame({"elev_ft": pd.Series(dtype="float64")}, geometry=gpd.GeoSeries([], crs=crs).values,
                            crs=crs)


def plan_contours(dem: Dem | None, extent: Polygon | None, interval_ft: float, crs: Any) -> gpd.GeoDataFrame:
    """Contour lines at ``interval_ft`` clipped to ``extent`` (empty without DEM, extent or overlap)."""
    empty = empty_contours(crs)
    if dem is None or extent is None:
        return empty
    in_dem = gpd.GeoSeries([extent], crs=crs).to_crs(dem.crs)
    if not in_dem.intersects(dem.bounds_polygon()).iloc[0]:
        return empty
    lines = contours(dem, interval_ft, bounds=tuple(in_dem.total_bounds), crs=crs)
    if not len(lines):
        return empty
    clipped = shapely.intersection(lines.geometry.values, extent)
    keep = ~shapely.is_empty(clipped)
    return gpd.GeoDataFrame({"elev_ft": lines["elev_ft"].to_numpy()[keep]}, geometry=clipped[keep], crs=crs)
