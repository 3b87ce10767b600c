"""Base flood elevation at sites: NFHL ``STATIC_BFE``, or interpolated between the S_BFE lines
that bracket the site along its flooding source; the datum is never mixed silently.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from shapely import STRtree

from geoconstraints.geometry.overlay import norm_text
from geoconstraints.io.validate import nfhl_no_value
from geoconstraints.text import ft_text
from geoconstraints.units import FT_PER_M, LENGTH_NOISE_FT, normalize_length_unit

log = logging.getLogger(__name__)

BFE_METHODS = ("static", "interpolated_along_stream", "nearest_lines", "none")


# ------------------------------------------------------------------------------------------
# BFE at sites

def _norm_datum(v: Any) -> str:
    if not isinstance(v, str) or not v.strip() or v.strip().upper() in ("NP", "NONE", "NULL"):
        return ""
    return re.sub(r"[\s_-]", "", v.strip().upper())


def _elev_ft(df: pd.DataFrame, field_name: str) -> np.ndarray:
    """Elevations in feet; NFHL "no value" codes (-9999 and the like, 0: :func:`nfhl_no_value`) and any
    non-number are missing, never an elevation."""
    vals = pd.to_numeric(df[field_name], errors="coerce").to_numpy(dtype=float)
    vals = np.where(nfhl_no_value(vals, field_name), np.nan, vals)
    if "LEN_UNIT" in df.columns:
        metres = df["LEN_UNIT"].map(normalize_length_unit).eq("m").to_numpy()
        vals = np.where(metres, vals * FT_PER_M, vals)
    return vals


def _stream_lines(streams: gpd.GeoDataFrame | None) -> np.ndarray:
    """Stream centre lines, the features of one named stream merged end to end.

    Features sharing a ``name`` (or NHD ``GNIS_NAME``) are dissolved and line-merged, so a river
    split at its confluences stays one flooding source; unnamed features are merged only within
    themselves. Tributaries are never merged into the river. Polygons are not used.
    """
    if streams is None or not len(streams):
        return np.array([], dtype=object)
    g = streams.geometry.values
    is_line = np.isin(shapely.get_type_id(g), (1, 2, 5))
    if not is_line.any():
        return np.array([], dtype=object)
    name_col = next((c for c in ("name", "GNIS_NAME", "gnis_name") if c in streams.columns), None)
    names = (norm_text(streams[name_col]) if name_col else pd.Series("", index=streams.index)).to_numpy()
    lines = gpd.GeoDataFrame({"name": names[is_line]}, geometry=np.asarray(g[is_line], dtype=object),
                             crs=streams.crs)
    named = lines[lines["name"] != ""]
    merged = [np.asarray(shapely.line_merge(lines.loc[lines["name"] == "", "geometry"].values), dtype=object)]
    if len(named):
        merged.append(np.asarray(shapely.line_merge(named.dissolve(by="name").geometry.values), dtype=object))
    parts = shapely.get_parts(np.concatenate(merged))
    return parts[np.isin(shapely.get_type_id(parts), (1, 2))]


def bfe_at_points(
    points: np.ndarray | gpd.GeoSeries,
    *,
    flood: gpd.GeoDataFrame | None = None,
    bfe_lines: gpd.GeoDataFrame | None = None,
    streams: gpd.GeoDataFrame | None = None,
    search_radius_ft: float,
    notes: bool = True,
    direction: bool = False,
) -> pd.DataFrame:
    """Base flood elevation at points (the rule catalogue's "BFE at a site").

    In order: the ``STATIC_BFE`` of the flood zone polygon(s) containing the point (highest when
    several); otherwise linear interpolation, by distance along the nearest stream line, between
    the two ``S_BFE`` lines (``ELEV``) that cross that stream on either side of the point's
    projection; without stream lines, the nearest BFE line on each side of the point weighted by
    inverse distance (never two lines on one side: no extrapolation). -9999 (any value at or below
    -999) and a BFE of 0 are no value.
    Vertical datums (``V_DATUM``) are never mixed: bracketing lines in different datums give no
    value and a note. ``LEN_UNIT`` metres are converted to feet.

    Parameters
    ----------
    points : array of Points
        Sites in the working CRS (feet).
    flood, bfe_lines, streams : GeoDataFrame, optional
        Loaded ``flood_zones``, ``bfe_lines`` and ``streams`` layers (working CRS).
    search_radius_ft : float
        Streams and BFE lines farther than this from a site are not used (FLD-003
        ``bfe_search_radius_ft``).
    notes : bool
        False: an interpolated value's ``bfe_note`` is the method's sentence without the lines'
        elevations and the share of the way (:data:`BRIEF_NOTES`), not one sentence built per point:
        for many points of which only a few notes are read (the values are the same).
    direction : bool
        True: two more columns ``bfe_dx, bfe_dy``, a unit direction along which the BFE rises at each site
        interpolated along a stream or from the nearest lines (NaN elsewhere): that of the stream segment it
        projects onto, turned the way the bracketing lines rise (as the line is drawn where the site is not
        between two lines, or the lines are level); from the nearest lines, towards the higher one.

    Returns
    -------
    DataFrame
        One row per point: ``bfe_ft`` (NaN when none), ``bfe_method`` (one of
        :data:`BFE_METHODS`), ``bfe_datum``, ``bfe_note`` (a sentence), ``bfe_low_ft``,
        ``bfe_high_ft`` (the two elevations interpolated between), ``stream_position_ft``.

    Examples
    --------
    A stream along the x axis crossed by BFE lines of 850 ft at x = 0 and 848 ft at x = 400:

    >>> from shapely.geometry import LineString
    >>> st = gpd.GeoDataFrame(geometry=[LineString([(-100, 0), (500, 0)])])
    >>> bl = gpd.GeoDataFrame({"ELEV": [850.0, 848.0], "V_DATUM": ["NAVD88", "NAVD88"]},
    ...                       geometry=[LineString([(0, -50), (0, 50)]), LineString([(400, -50), (400, 50)])])
    >>> b = bfe_at_points(shapely.points([(100, 20), (450, 0)]), bfe_lines=bl, streams=st, search_radius_ft=1000,
    ...                   direction=True)
    >>> b["bfe_ft"].round(3).tolist(), b["bfe_method"].tolist(), b["bfe_dx"].tolist()
    ([849.5, nan], ['interpolated_along_stream', 'none'], [-1.0, 1.0])
    >>> print(b.loc[0, "bfe_note"])
    screening estimate: interpolated along the stream between BFE lines of 850.0 and 848.0 ft NAVD88, 25% of the
    way; not a surveyed BFE
    """
    return bfe_sampler(flood=flood, bfe_lines=bfe_lines, streams=streams,
                       search_radius_ft=search_radius_ft)(points, notes=notes, direction=direction)


def bfe_sampler(
    *,
    flood: gpd.GeoDataFrame | None = None,
    bfe_lines: gpd.GeoDataFrame | None = None,
    streams: gpd.GeoDataFrame | None = None,
    search_radius_ft: float,
) -> Callable[..., pd.DataFrame]:
    """:func:`bfe_at_points` of these layers as a function of ``(points, *, notes=True, direction=False,
    static=True)`` (``static`` False: the ``STATIC_BFE`` of the flood zone polygons is not read, the BFE lines'
    value is, as with ``flood=None``),
    the layers' work done once (the stream lines merged, the BFE lines' crossings, the segments' tree): for
    several calls on the same layers (the points of a second call depending on the first's answers).

    Examples
    --------
    >>> from shapely.geometry import LineString
    >>> st = gpd.GeoDataFrame(geometry=[LineString([(-100, 0), (500, 0)])])
    >>> bl = gpd.GeoDataFrame({"ELEV": [850.0, 848.0]}, geometry=[LineString([(0, -50), (0, 50)]),
    ...                                                           LineString([(400, -50), (400, 50)])])
    >>> at = bfe_sampler(bfe_lines=bl, streams=st, search_radius_ft=1000)
    >>> at(shapely.points([(200, 10)]))["bfe_ft"].tolist(), at(shapely.points([(300, -10)]))["bfe_ft"].tolist()
    ([849.0], [848.5])
    """
    has_static = flood is not None and len(flood) and "STATIC_BFE" in flood.columns
    if bfe_lines is None or not len(bfe_lines) or "ELEV" not in bfe_lines.columns:
        lines_why = "no STATIC_BFE at the site and no BFE lines (bfe_lines layer): no BFE"
        lines, l_elev, l_dat = np.zeros(0, dtype=object), np.zeros(0), np.zeros(0, dtype=object)
    else:
        lines, l_elev, l_dat = _line_arrays(bfe_lines)
        lines_why = "" if len(lines) else "no STATIC_BFE at the site and the BFE lines carry no ELEV values: no BFE"
    stream_lines = _stream_lines(streams) if len(lines) else np.zeros(0, dtype=object)
    prep = _stream_prep(stream_lines, lines) if len(stream_lines) else None
    why = ("no stream lines (streams layer)" if streams is None or not len(streams)
           else "the streams layer has no centre lines")

    def sample(points: np.ndarray | gpd.GeoSeries, *, notes: bool = True, direction: bool = False,
               static: bool = True) -> pd.DataFrame:
        pts = np.asarray(points.values if isinstance(points, gpd.GeoSeries) else points, dtype=object)
        n = len(pts)
        bfe = np.full(n, np.nan)
        method = np.full(n, "none", dtype=object)
        datum = np.full(n, "", dtype=object)
        note = np.full(n, "", dtype=object)
        lo_e, hi_e, spos = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
        udir = np.full((n, 2), np.nan)
        todo = np.ones(n, dtype=bool)
        if has_static and static:  # 1. static BFE of the containing flood polygon
            _static_bfe(pts, flood, bfe, method, datum, note, todo)
        idx = np.flatnonzero(todo)
        if lines_why:
            note[todo] = lines_why
        elif prep is not None and len(idx):
            _along_stream(pts, idx, prep, l_elev, l_dat, search_radius_ft,
                          bfe, method, datum, note, lo_e, hi_e, spos, udir, notes)
        elif len(idx):
            _nearest_lines(pts, idx, lines, l_elev, l_dat, search_radius_ft, why,
                           bfe, method, datum, note, lo_e, hi_e, notes, udir)
        out = bfe_frame(bfe, method, datum, note, lo_e, hi_e, spos)
        if direction:
            out["bfe_dx"], out["bfe_dy"] = udir[:, 0], udir[:, 1]
        return out

    return sample


def _line_arrays(bfe_lines: gpd.GeoDataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(geometries, ELEV in feet, normalized V_DATUM) of the BFE lines that state an elevation."""
    l_elev = _elev_ft(bfe_lines, "ELEV")
    l_dat = (bfe_lines["V_DATUM"].map(_norm_datum).to_numpy() if "V_DATUM" in bfe_lines.columns
             else np.full(len(bfe_lines), "", dtype=object))
    good = np.isfinite(l_elev)
    return np.asarray(bfe_lines.geometry.values[good], dtype=object), l_elev[good], l_dat[good]


def _static_bfe(pts: np.ndarray, flood: gpd.GeoDataFrame, bfe: np.ndarray, method: np.ndarray,
                datum: np.ndarray, note: np.ndarray, todo: np.ndarray) -> None:
    """Fill in (in place) the ``STATIC_BFE`` of the flood polygon(s) containing each point (the
    highest when several; a note when they state different datums)."""
    elev = _elev_ft(flood, "STATIC_BFE")
    has = np.isfinite(elev)
    if not has.any():
        return
    polys = flood.geometry.values[has]
    pi_, fi_ = STRtree(polys).query(pts, predicate="intersects")
    if not len(pi_):
        return
    ev = elev[has][fi_]
    dat = (flood["V_DATUM"].map(_norm_datum).to_numpy()[has][fi_]
           if "V_DATUM" in flood.columns else np.full(len(fi_), "", dtype=object))
    d = pd.DataFrame({"p": pi_, "e": ev, "d": dat}).sort_values(["p", "e"])
    top = d.groupby("p").tail(1)
    ndat = d.groupby("p")["d"].nunique()
    p = top["p"].to_numpy()
    bfe[p], datum[p], method[p] = top["e"].to_numpy(), top["d"].to_numpy(), "static"
    for_mixed = ndat[ndat > 1].index.to_numpy()
    note[p] = "static BFE of the flood zone polygon (STATIC_BFE)"
    note[for_mixed] = ("static BFE of the flood zone polygon (STATIC_BFE); overlapping polygons state different "
                       "vertical datums: highest value used, check the datum")
    todo[p] = False


def static_bfe_polygons(flood: gpd.GeoDataFrame | None) -> np.ndarray:
    """Which flood zone polygons state a ``STATIC_BFE`` (a value: not -9999, another no-value code or 0).

    Examples
    --------
    >>> f = gpd.GeoDataFrame({"STATIC_BFE": [805.0, -9999.0, 0.0]}, geometry=[None, None, None])
    >>> static_bfe_polygons(f).tolist(), static_bfe_polygons(None).tolist()
    ([True, False, False], [])
    """
    if flood is None or "STATIC_BFE" not in flood.columns:
        return np.zeros(0 if flood is None else len(flood), dtype=bool)
    return np.isfinite(_elev_ft(flood, "STATIC_BFE"))


BFE_COLUMNS = ("bfe_ft", "bfe_method", "bfe_datum", "bfe_note", "bfe_low_ft", "bfe_high_ft", "stream_position_ft")
"""The columns of :func:`bfe_at_points`' table, in order."""


def bfe_frame(bfe, method, datum, note, lo_e, hi_e, spos) -> pd.DataFrame:
    return pd.DataFrame(dict(zip(BFE_COLUMNS, (bfe, method, datum, note, lo_e, hi_e, spos))))




BRIEF_NOTES = {
    "interpolated_along_stream": "screening estimate: interpolated along the stream between BFE lines; not a surveyed BFE",
    "nearest_lines": "screening estimate: the nearest BFE line on each side weighted by inverse distance; not a surveyed BFE",
}
"""The ``bfe_note`` of an interpolated value when :func:`bfe_at_points` builds no note per point (``notes=False``)."""


NO_STUDIED_STREAM = "no stream line is crossed by two BFE lines: no BFE interpolated"


def _crossings(streams: np.ndarray, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                                  float, np.ndarray]:
    """Where the BFE lines cross the stream lines: ``(key, stream, line, position, span, studied)``, sorted
    by ``key = stream * span + position`` (``span`` longer than any stream, so the crossings of one stream
    are consecutive and in order along it); ``studied``: the streams crossed by two BFE lines or more."""
    li, sk = STRtree(streams).query(lines, predicate="intersects")
    cx = shapely.intersection(lines[li], streams[sk])
    cpts, cidx = shapely.get_parts(cx, return_index=True)
    isp = shapely.get_type_id(cpts) == 0
    cpts, cidx = cpts[isp], cidx[isp]
    c_stream, c_line = sk[cidx], li[cidx]
    c_s = shapely.line_locate_point(streams[c_stream], cpts) if len(cpts) else np.zeros(0)
    studied = np.flatnonzero(np.bincount(c_stream, minlength=len(streams)) >= 2)
    span = float(shapely.length(streams).max()) + 10.0
    ckey = c_stream * span + c_s
    order = np.argsort(ckey, kind="stable")
    return ckey[order], c_stream[order], c_line[order], c_s[order], span, studied


def _located_segments(streams: np.ndarray) -> tuple[np.ndarray, ...]:
    """The segments of the stream lines with their position along them: start ``a``, end ``b``, length,
    the stream (index into ``streams``) and the position of the start along it (zero-length segments
    dropped: a point on one is on its neighbours' ends too).

    Examples
    --------
    >>> from shapely.geometry import LineString
    >>> a, b, length, stream, s0 = _located_segments(np.array([LineString([(0, 0), (3, 4), (3, 4), (3, 10)]),
    ...                                                         LineString([(0, 0), (0, 2)])], dtype=object))
    >>> length.tolist(), stream.tolist(), s0.tolist()
    ([5.0, 6.0, 2.0], [0, 0, 1], [0.0, 5.0, 0.0])
    """
    coords, si = shapely.get_coordinates(streams, return_index=True)
    same = si[:-1] == si[1:]
    a, b, st = coords[:-1][same], coords[1:][same], si[:-1][same]
    length = np.hypot(b[:, 0] - a[:, 0], b[:, 1] - a[:, 1])
    first = np.r_[True, st[1:] != st[:-1]] if len(st) else np.zeros(0, dtype=bool)
    before = np.cumsum(length) - length
    s0 = before - before[np.maximum.accumulate(np.where(first, np.arange(len(st)), 0))] if len(st) else before
    keep = length > 0
    return a[keep], b[keep], length[keep], st[keep], s0[keep]


def _stream_prep(streams: np.ndarray, lines: np.ndarray) -> tuple[Any, ...]:
    """What :func:`_along_stream` reads of the layers, whatever the sites: the crossings
    (:func:`_crossings`), the studied streams' segments (:func:`_located_segments`) and their tree."""
    crossings = _crossings(streams, lines)
    studied = crossings[-1]
    if not len(studied):
        return crossings, None
    a, b, seg_len, seg_line, s0 = _located_segments(streams[studied])
    return crossings, (a, b, seg_len, seg_line, s0, STRtree(shapely.linestrings(np.stack([a, b], axis=1))))


def _along_stream(pts, idx, prep, l_elev, l_dat, radius, bfe, method, datum, note,
                  lo_e, hi_e, spos, udir, notes=True) -> None:
    """Interpolate by distance along the nearest studied stream between bracketing BFE lines.

    A stream is a flooding source with BFEs when at least two BFE lines cross it; the site is
    projected onto the nearest such stream (``prep``: :func:`_stream_prep`).
    """
    (ckey, c_stream, c_line, c_s, span, studied), segments = prep
    if segments is None:
        note[idx] = NO_STUDIED_STREAM
        return
    a, b, seg_len, seg_line, s0, tree = segments
    # every nearest segment (ties too), the first along the stream kept: GEOS's line_locate_point takes the first
    # nearest segment, so the position is the same, without walking the whole stream once per site
    (pp, sg), dist = tree.query_nearest(pts[idx], return_distance=True, all_matches=True)
    first = np.lexsort((sg, pp))
    first = first[np.r_[True, pp[first][1:] != pp[first][:-1]]] if len(first) else first
    pp, sg, dist = pp[first], sg[first], dist[first]
    site, sj = idx[pp], studied[seg_line[sg]]
    far = dist > radius
    note[site[far]] = (f"no stream line crossed by BFE lines within {radius:,.0f} ft of the site: "
                       f"no BFE interpolated")
    site, sj, sg = site[~far], sj[~far], sg[~far]
    if not len(site):
        return
    xy = shapely.get_coordinates(pts[site])
    r = np.clip(((xy - a[sg]) * (b[sg] - a[sg])).sum(axis=1) / seg_len[sg] ** 2, 0.0, 1.0)
    s_site = s0[sg] + r * seg_len[sg]  # the position along the stream (line_locate_point's)
    udir[site] = (b[sg] - a[sg]) / seg_len[sg][:, None]
    spos[site] = s_site
    skey = sj * span + s_site
    # a site within 1e-6 ft of a crossing (either side: float noise, a corner drawn on the line) is on it
    pos = np.searchsorted(ckey, skey + 1e-6, side="right")
    lo, hi = pos - 1, pos
    valid = (lo >= 0) & (hi < len(ckey))
    lo_c, hi_c = np.clip(lo, 0, len(ckey) - 1), np.clip(hi, 0, len(ckey) - 1)
    valid &= (c_stream[lo_c] == sj) & (c_stream[hi_c] == sj)
    exact = (lo >= 0) & (c_stream[lo_c] == sj) & np.isclose(c_s[lo_c], s_site, rtol=0.0, atol=1e-6)
    note[site[~valid & ~exact]] = ("the site is not between two BFE lines along its stream (upstream or "
                                   "downstream of the last line): no BFE interpolated")
    e_lo, e_hi = l_elev[c_line[lo_c]], l_elev[c_line[hi_c]]
    udir[site[valid & (e_hi < e_lo)]] *= -1.0  # the way the BFE rises: upstream
    d_lo, d_hi = l_dat[c_line[lo_c]], l_dat[c_line[hi_c]]
    # exactly on a BFE line: its elevation
    ex = exact
    bfe[site[ex]] = e_lo[ex]
    datum[site[ex]] = d_lo[ex]
    method[site[ex]] = "interpolated_along_stream"
    note[site[ex]] = "the site projects onto a BFE line: its ELEV (screening estimate)"
    lo_e[site[ex]], hi_e[site[ex]] = e_lo[ex], e_lo[ex]
    v = valid & ~exact
    mixed = v & (d_lo != d_hi)
    for k in np.flatnonzero(mixed):  # only the mixed-datum sites, to name both datums
        note[site[k]] = (f"the bracketing BFE lines are in different vertical datums "
                         f"({d_lo[k] or 'not stated'}, {d_hi[k] or 'not stated'}): not interpolated")
    lo_e[site[mixed]], hi_e[site[mixed]] = e_lo[mixed], e_hi[mixed]
    ok = v & ~mixed
    t = (s_site[ok] - c_s[lo_c][ok]) / (c_s[hi_c][ok] - c_s[lo_c][ok])
    val = e_lo[ok] + t * (e_hi[ok] - e_lo[ok])
    so = site[ok]
    bfe[so], datum[so], method[so] = val, d_lo[ok], "interpolated_along_stream"
    lo_e[so], hi_e[so] = e_lo[ok], e_hi[ok]
    note[so] = ([f"screening estimate: interpolated along the stream between BFE lines of {ft_text(a)} and "
                 f"{ft_text(b)} ft{(' ' + d) if d else ''}, {tt:.0%} of the way; not a surveyed BFE"
                 for a, b, d, tt in zip(e_lo[ok], e_hi[ok], d_lo[ok], t)] if notes
                else BRIEF_NOTES["interpolated_along_stream"])


def _nearest_lines(pts, idx, lines, l_elev, l_dat, radius, why, bfe, method, datum, note,
                   lo_e, hi_e, notes=True, udir=None) -> None:
    """The nearest BFE line on each side of the site, weighted by inverse distance.

    Without a flooding-source line the two lines must still bracket the site: the second line is
    the nearest one lying on the other side of the site from the nearest line (the directions from
    the site to their nearest points point apart, a negative dot product). Two lines on the same
    side would extrapolate, so the site gets no BFE. A site on a BFE line takes its elevation.
    """
    tree = STRtree(lines)
    pi_, li_ = tree.query(pts[idx], predicate="dwithin", distance=radius)
    if not len(pi_):
        note[idx] = f"{why}, and no BFE line within {radius:,.0f} ft: no BFE"
        return
    site_pts = pts[idx][pi_]
    near = shapely.get_coordinates(shapely.shortest_line(site_pts, lines[li_])).reshape(-1, 2, 2)
    vec = near[:, 1, :] - near[:, 0, :]  # from the site to the line's nearest point
    d = np.hypot(vec[:, 0], vec[:, 1])
    df = pd.DataFrame({"p": idx[pi_], "l": li_, "d": d, "vx": vec[:, 0], "vy": vec[:, 1]})
    df = df.sort_values(["p", "d"], kind="stable")
    first = df.groupby("p").head(1).set_index("p")
    note[idx] = f"{why}, and no two BFE lines within {radius:,.0f} ft on either side of the site: no BFE"
    f_of = first.loc[df["p"].to_numpy()]
    other = ((df["vx"].to_numpy() * f_of["vx"].to_numpy() + df["vy"].to_numpy() * f_of["vy"].to_numpy()) < 0)
    second = df[other].groupby("p").head(1).set_index("p")
    on_line = first.index[first["d"].to_numpy() == 0].to_numpy()
    if len(on_line):
        l0 = first.loc[on_line, "l"].to_numpy()
        bfe[on_line], datum[on_line], method[on_line] = l_elev[l0], l_dat[l0], "nearest_lines"
        lo_e[on_line], hi_e[on_line] = l_elev[l0], l_elev[l0]
        note[on_line] = [f"screening estimate: {why}; the site is on a BFE line of {ft_text(e)} ft; not a surveyed BFE"
                         for e in l_elev[l0]]
    one_side = np.setdiff1d(first.index.to_numpy(), np.concatenate([second.index.to_numpy(), on_line]))
    two = df.groupby("p").size()
    many = one_side[two.loc[one_side].to_numpy() >= 2] if len(one_side) else one_side
    note[many] = (f"{why}, and the BFE lines within {radius:,.0f} ft all lie on one side of the site (they do "
                  f"not bracket it): no BFE extrapolated")
    p = np.setdiff1d(second.index.to_numpy(), on_line)
    if not len(p):
        return
    l1, l2 = first.loc[p, "l"].to_numpy(), second.loc[p, "l"].to_numpy()
    d1, d2 = first.loc[p, "d"].to_numpy(), second.loc[p, "d"].to_numpy()
    e1, e2, t1, t2 = l_elev[l1], l_elev[l2], l_dat[l1], l_dat[l2]
    mixed = t1 != t2
    lo_e[p], hi_e[p] = np.minimum(e1, e2), np.maximum(e1, e2)
    for k in np.flatnonzero(mixed):  # only the mixed-datum sites, to name both datums
        note[p[k]] = (f"{why}; the two bracketing BFE lines are in different vertical datums "
                      f"({t1[k] or 'not stated'}, {t2[k] or 'not stated'}): not interpolated")
    ok = ~mixed
    w = d2 / (d1 + d2)  # d2 > 0: the second line lies on the other side of the site
    val = w * e1 + (1 - w) * e2
    po = p[ok]
    bfe[po], datum[po], method[po] = val[ok], t1[ok], "nearest_lines"
    if udir is not None:  # across the lines, towards the higher one: the way the BFE rises
        udir[po] = first.loc[po, ["vx", "vy"]].to_numpy() / d1[ok][:, None] * np.where(e1 < e2, -1.0, 1.0)[ok][:, None]
    note[po] = ([f"screening estimate: {why}, so the nearest BFE line on each side of the site ({ft_text(a)} ft at "
                 f"{da:,.0f} ft, {ft_text(b)} ft at {db:,.0f} ft{(', ' + t) if t else ''}) weighted by inverse "
                 f"distance; not a surveyed BFE"
                 for a, b, da, db, t in zip(e1[ok], e2[ok], d1[ok], d2[ok], t1[ok])] if notes
                else BRIEF_NOTES["nearest_lines"])



# ------------------------------------------------------------------------------------------
# The highest BFE over an area

BOUND_COLUMNS = ("bound_ft", "bound_method", "bound_datum", "bound_note", "unbounded")
"""The columns of :func:`bfe_upper_bound`'s table, in order."""


def bfe_upper_bound(
    regions: np.ndarray | gpd.GeoSeries,
    *,
    bfe_lines: gpd.GeoDataFrame | None = None,
    streams: gpd.GeoDataFrame | None = None,
    search_radius_ft: float,
) -> pd.DataFrame:
    """The highest BFE the ``S_BFE`` lines can give at any point of each region: an upper bound of the
    BFE :func:`bfe_at_points` reads off the lines anywhere in it, never of its corners only.

    Along a stream the BFE is piecewise linear in the position along it, but the positions the points of
    an area project to are not those of its corners (past a bend, the nearest stretch of a hairpin
    switching arms). Every point of a region lies within ``D`` (its distance to the studied streams plus
    its bounding box's diagonal) of its nearest stream point, so only the stream segments within ``D``
    can be nearest; a point nearest to the inside of a segment projects onto it within the projection of
    the region's convex hull, and one nearest to a vertex lies where the projections onto both its
    segments reach past it. The bound is the BFE's maximum over those positions (their ends and every BFE
    line crossing between): exact where the projection's ends are reached (a straight stream), higher
    than the true maximum at worst, never lower. Without stream lines the inverse-distance BFE between
    two lines is never above the higher line, so the bound is the highest ``ELEV`` of the lines within
    ``search_radius_ft`` of the region. Static BFEs are not read: the region is where the lines give the
    BFE.

    Parameters
    ----------
    regions : array of geometries
        One (multi)polygon or collection of polygons per site, None or empty where none; the working
        CRS (feet).
    bfe_lines, streams : GeoDataFrame, optional
        The ``bfe_lines`` and ``streams`` layers, as for :func:`bfe_at_points`.
    search_radius_ft : float
        As for :func:`bfe_at_points`.

    Returns
    -------
    DataFrame
        One row per region (:data:`BOUND_COLUMNS`): ``bound_ft`` (NaN where the lines give nothing to
        bound), ``bound_method`` (``interpolated_along_stream``, ``nearest_lines`` or ``none``),
        ``bound_datum``, ``bound_note``; ``unbounded`` True where some point of the region may get no BFE
        from the lines (its position along the stream past the last BFE line, between lines of different
        vertical datums, or farther than ``search_radius_ft`` from the stream): ``bound_note`` says why,
        and ``bound_ft`` bounds the rest only.

    Examples
    --------
    An L-shaped stream, (0, 0) to (1000, 0) to (1000, 2000), crossed by a BFE line of 800 ft at 500 ft
    along it and one of 812 ft at 1,500 ft. A square on the inner side of the bend (x 900..990,
    y 10..100) projects onto the vertical arm up to y = 100, 1,100 ft along the stream:
    800 + 12 * 600 / 1000 = 807.2 ft. Part of a square past the last line (x 1010..1050, y 1600..1640)
    has no BFE.

    >>> from shapely.geometry import LineString, box
    >>> st = gpd.GeoDataFrame(geometry=[LineString([(0, 0), (1000, 0), (1000, 1000), (1000, 2000)])])
    >>> bl = gpd.GeoDataFrame({"ELEV": [800.0, 812.0], "V_DATUM": ["NAVD88", "NAVD88"]},
    ...                       geometry=[LineString([(500, -50), (500, 50)]), LineString([(950, 500), (1050, 500)])])
    >>> b = bfe_upper_bound([box(900, 10, 990, 100), box(1010, 1600, 1050, 1640)], bfe_lines=bl, streams=st,
    ...                     search_radius_ft=5000)
    >>> round(float(b.loc[0, "bound_ft"]), 3), b.loc[0, "bound_datum"], b["unbounded"].tolist()
    (807.2, 'NAVD88', [False, True])
    """
    geoms = np.asarray(regions.values if isinstance(regions, gpd.GeoSeries) else regions, dtype=object)
    n = len(geoms)
    bound, unb = np.full(n, np.nan), np.zeros(n, dtype=bool)
    method, datum, note = np.full(n, "none", dtype=object), np.full(n, "", dtype=object), np.full(n, "", dtype=object)

    def table() -> pd.DataFrame:
        return pd.DataFrame(dict(zip(BOUND_COLUMNS, (bound, method, datum, note, unb))))

    if bfe_lines is None or not len(bfe_lines) or "ELEV" not in bfe_lines.columns:
        return table()
    lines, l_elev, l_dat = _line_arrays(bfe_lines)
    p1, o1 = shapely.get_parts(geoms, return_index=True)
    parts, o2 = shapely.get_parts(p1, return_index=True)
    areal = np.isin(shapely.get_type_id(parts), (3, 6)) & (shapely.area(parts) > 0)
    parts, owner = parts[areal], o1[o2][areal]
    if not len(lines) or not len(parts):
        return table()
    stream_lines = _stream_lines(streams)
    if len(stream_lines):
        _bound_along_stream(parts, owner, stream_lines, lines, l_elev, l_dat, search_radius_ft, bound, method,
                            datum, note, unb)
    else:
        why = ("no stream lines (streams layer)" if streams is None or not len(streams)
               else "the streams layer has no centre lines")
        _bound_nearest_lines(parts, owner, lines, l_elev, l_dat, search_radius_ft, why, bound, method, datum,
                             note, unb)
    return table()


def _expand(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The indices ``start[i] .. start[i] + count[i] - 1`` of every ``i``, one block after the other."""
    return np.repeat(start, count) + (np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count))


def _stream_segments(streams: np.ndarray) -> tuple[np.ndarray, ...]:
    """The segments of the stream lines: start, unit direction, length, the stream (index into
    ``streams``), the position of the start along it, and whether each is its stream's first or last
    (zero-length segments dropped)."""
    coords, si = shapely.get_coordinates(streams, return_index=True)
    same = si[:-1] == si[1:]
    a, b, st = coords[:-1][same], coords[1:][same], si[:-1][same]
    vec = b - a
    length = np.hypot(vec[:, 0], vec[:, 1])
    before = np.cumsum(length) - length  # every preceding segment's length, all streams
    first = np.r_[True, st[1:] != st[:-1]] if len(st) else np.zeros(0, dtype=bool)
    s0 = before - before[np.maximum.accumulate(np.where(first, np.arange(len(st)), 0))] if len(st) else before
    keep = length > 0
    a, vec, length, st, s0 = a[keep], vec[keep], length[keep], st[keep], s0[keep]
    first = np.r_[True, st[1:] != st[:-1]] if len(st) else np.zeros(0, dtype=bool)
    last = np.r_[st[1:] != st[:-1], True] if len(st) else np.zeros(0, dtype=bool)
    return a, vec / length[:, None], length, st, s0, first, last


def _bound_along_stream(parts, owner, streams, lines, l_elev, l_dat, radius, bound, method, datum, note,
                        unb) -> None:
    """:func:`bfe_upper_bound` by interpolation along the studied streams (in place, per owner)."""
    ckey, c_stream, c_line, c_s, span, studied = _crossings(streams, lines)
    sites = np.unique(owner)
    if not len(studied):
        unb[sites], note[sites] = True, NO_STUDIED_STREAM
        return
    a, u, length, sst, s0, first, last = _stream_segments(streams[studied])
    sst = studied[sst]
    segs = shapely.linestrings(np.stack([a, a + u * length[:, None]], axis=1))
    tree = STRtree(segs)
    (pi, _), d = tree.query_nearest(parts, return_distance=True, all_matches=False)
    reach = np.full(len(parts), np.inf)
    reach[pi] = d
    bx = shapely.bounds(parts)
    reach += np.hypot(bx[:, 2] - bx[:, 0], bx[:, 3] - bx[:, 1])  # no point of the part is farther from a stream
    far = np.zeros(len(sites) and int(owner.max()) + 1, dtype=bool)
    far[owner[reach > radius]] = True
    # the segments each part's points can be nearest to: within `reach` of it
    pk, sg = tree.query(parts, predicate="dwithin", distance=reach + LENGTH_NOISE_FT)
    order = np.lexsort((sg, pk))
    pk, sg = pk[order], sg[order]
    pc, pix = shapely.get_coordinates(parts, return_index=True)
    cnt = np.bincount(pix, minlength=len(parts))
    rep = cnt[pk]
    at = _expand((np.cumsum(cnt) - cnt)[pk], rep)
    blocks = np.cumsum(rep) - rep
    t = ((pc[at] - np.repeat(a[sg], rep, axis=0)) * np.repeat(u[sg], rep, axis=0)).sum(axis=1)
    tmin, tmax = np.minimum.reduceat(t, blocks), np.maximum.reduceat(t, blocks)
    seg_len = length[sg]
    # inside a segment: the hull's projection onto it (past a stream's end: its end)
    lo = np.maximum(tmin, np.where(first[sg], -np.inf, 0.0))
    hi = np.minimum(tmax, np.where(last[sg], np.inf, seg_len))
    inside = lo <= hi + LENGTH_NOISE_FT
    iv = [(pk[inside], sg[inside], s0[sg][inside] + np.clip(lo[inside], 0, seg_len[inside]),
           s0[sg][inside] + np.clip(np.maximum(hi, lo)[inside], 0, seg_len[inside]))]
    # at a vertex: where the part reaches past the end of one segment and before the start of the next
    key = pk.astype(np.int64) * len(segs) + sg
    nxt = np.searchsorted(key, key + 1)
    nxt_c = np.minimum(nxt, len(key) - 1)
    vertex = (~last[sg] & (nxt < len(key)) & (key[nxt_c] == key + 1) & (tmax >= seg_len - LENGTH_NOISE_FT)
              & (tmin[nxt_c] <= LENGTH_NOISE_FT))
    v_s = (s0[sg] + seg_len)[vertex]
    iv.append((pk[vertex], sg[vertex], v_s, v_s))
    i_part, i_seg, i_lo, i_hi = (np.concatenate(x) for x in zip(*iv))
    i_stream = sst[i_seg]
    # the BFE's maximum over each interval: its ends and the crossings inside
    nc = len(ckey)
    ia = np.searchsorted(ckey, i_stream * span + i_lo + LENGTH_NOISE_FT, side="right") - 1
    ib = np.searchsorted(ckey, i_stream * span + i_hi - LENGTH_NOISE_FT, side="left")
    ia_c, ib_c = np.clip(ia, 0, nc - 1), np.clip(ib, 0, nc - 1)
    ok = (ia >= 0) & (ib < nc) & (c_stream[ia_c] == i_stream) & (c_stream[ib_c] == i_stream)
    ib = np.maximum(ib_c, ia_c)
    ce, codes = l_elev[c_line], pd.factorize(l_dat[c_line])[0]
    span_n = np.where(ok, ib - ia_c + 1, 0)
    flat = _expand(ia_c[ok], span_n[ok])
    starts = np.cumsum(span_n[ok]) - span_n[ok]
    mixed = np.zeros(len(ok), dtype=bool)
    top = np.full(len(ok), -np.inf)
    if len(flat):
        mixed[ok] = np.minimum.reduceat(codes[flat], starts) != np.maximum.reduceat(codes[flat], starts)
        inner = ce[flat]
        inner[starts] = -np.inf  # the bracketing crossings count through the ends' values only
        inner[np.cumsum(span_n[ok]) - 1] = -np.inf
        top[ok] = np.maximum.reduceat(inner, starts)

    def value(s: np.ndarray) -> np.ndarray:
        j = np.clip(np.searchsorted(ckey, i_stream * span + s, side="right") - 1, ia_c, np.maximum(ib - 1, ia_c))
        k = np.minimum(j + 1, ib)
        den = c_s[k] - c_s[j]
        w = np.clip((s - c_s[j]) / np.where(den > 0, den, 1.0), 0.0, 1.0)
        return np.where(den > 0, ce[j] + w * (ce[k] - ce[j]), np.maximum(ce[j], ce[k]))

    val = np.fmax(top, np.fmax(value(i_lo), value(i_hi)))
    i_owner = owner[i_part]
    good = ok & ~mixed
    past = np.zeros_like(far)
    past[i_owner[~ok]] = True
    mix = np.zeros_like(far)
    mix[i_owner[ok & mixed]] = True
    g = pd.DataFrame({"o": i_owner[good], "v": val[good], "d": l_dat[c_line][ia_c[good]]})
    if len(g):
        per = g.groupby("o").agg(v=("v", "max"), d=("d", "first"), nd=("d", "nunique"))
        o = per.index.to_numpy()
        bound[o], datum[o], method[o] = per["v"].to_numpy(), per["d"].to_numpy(), "interpolated_along_stream"
        note[o] = ("screening estimate: the highest BFE interpolated along the stream between the BFE lines at any "
                   "position the area can project to; not a surveyed BFE")
        mix[o[per["nd"].to_numpy() > 1]] = True
    for i in np.flatnonzero(far | past | mix):  # the few sites whose area may lack a BFE, to say why
        why = [w for w, f in ((f"part of it may lie farther than {radius:,.0f} ft from a stream crossed by BFE lines",
                               far[i]),
                              (("part of it may project onto its stream beyond the last BFE line (not between two "
                                "BFE lines)"), past[i]),
                              ("part of it may lie between BFE lines in different vertical datums", mix[i])) if f]
        unb[i] = True
        note[i] = "; ".join(why) + ": no BFE interpolated there" + (f" (elsewhere {note[i]})" if note[i] else "")


def _bound_nearest_lines(parts, owner, lines, l_elev, l_dat, radius, why, bound, method, datum, note,
                         unb) -> None:
    """:func:`bfe_upper_bound` without stream lines: the highest ``ELEV`` of the BFE lines within ``radius``
    of the region (an inverse-distance BFE lies between its two lines' elevations), in place per owner."""
    pk, li = STRtree(lines).query(parts, predicate="dwithin", distance=radius)
    if not len(pk):
        return
    g = pd.DataFrame({"o": owner[pk], "e": l_elev[li], "d": l_dat[li]}).sort_values(["o", "e"])
    per = g.groupby("o").agg(e=("e", "max"), d=("d", "last"), nd=("d", "nunique"))
    o = per.index.to_numpy()
    bound[o], datum[o], method[o] = per["e"].to_numpy(), per["d"].to_numpy(), "nearest_lines"
    note[o] = (f"screening estimate: {why}, so the highest ELEV of the BFE lines within {radius:,.0f} ft of the "
               f"area (an inverse-distance BFE between two lines is never above the higher); not a surveyed BFE")
    mixed = o[per["nd"].to_numpy() > 1]
    unb[mixed] = True
    note[mixed] = (f"{why}, and the BFE lines within {radius:,.0f} ft of the area are in different vertical datums: "
                   f"no BFE bound")
