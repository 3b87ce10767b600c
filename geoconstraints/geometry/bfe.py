"""Base flood elevation at sites: NFHL ``STATIC_BFE``, or interpolated between the S_BFE lines
that bracket the site along its flooding source; the datum is never mixed silently.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from shapely import STRtree

from geoconstraints.geometry.overlay import line_segments, norm_text
from geoconstraints.io.validate import nfhl_no_value
from geoconstraints.text import ft_text
from geoconstraints.units import FT_PER_M, normalize_length_unit

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

    Returns
    -------
    DataFrame
        One row per point: ``bfe_ft`` (NaN when none), ``bfe_method`` (one of
        :data:`BFE_METHODS`), ``bfe_datum``, ``bfe_note`` (a sentence), ``bfe_low_ft``,
        ``bfe_high_ft`` (the two elevations interpolated between), ``stream_position_ft``.
    """
    pts = np.asarray(points.values if isinstance(points, gpd.GeoSeries) else points, dtype=object)
    n = len(pts)
    bfe = np.full(n, np.nan)
    method = np.full(n, "none", dtype=object)
    datum = np.full(n, "", dtype=object)
    note = np.full(n, "", dtype=object)
    lo_e, hi_e, spos = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    todo = np.ones(n, dtype=bool)

    # 1. static BFE of the containing flood polygon
    if flood is not None and len(flood) and "STATIC_BFE" in flood.columns:
        _static_bfe(pts, flood, bfe, method, datum, note, todo)

    if bfe_lines is None or not len(bfe_lines) or "ELEV" not in bfe_lines.columns:
        note[todo] = "no STATIC_BFE at the site and no BFE lines (bfe_lines layer): no BFE"
        return bfe_frame(bfe, method, datum, note, lo_e, hi_e, spos)
    lines = bfe_lines.geometry.values
    l_elev = _elev_ft(bfe_lines, "ELEV")
    l_dat = (bfe_lines["V_DATUM"].map(_norm_datum).to_numpy() if "V_DATUM" in bfe_lines.columns
             else np.full(len(bfe_lines), "", dtype=object))
    good = np.isfinite(l_elev)
    lines, l_elev, l_dat = np.asarray(lines[good], dtype=object), l_elev[good], l_dat[good]
    if not len(lines):
        note[todo] = "no STATIC_BFE at the site and the BFE lines carry no ELEV values: no BFE"
        return bfe_frame(bfe, method, datum, note, lo_e, hi_e, spos)

    stream_lines = _stream_lines(streams)
    idx = np.flatnonzero(todo)
    if len(stream_lines) and len(idx):
        _along_stream(pts, idx, stream_lines, lines, l_elev, l_dat, search_radius_ft,
                      bfe, method, datum, note, lo_e, hi_e, spos)
    elif len(idx):
        why = ("no stream lines (streams layer)" if streams is None or not len(streams)
               else "the streams layer has no centre lines")
        _nearest_lines(pts, idx, lines, l_elev, l_dat, search_radius_ft, why,
                       bfe, method, datum, note, lo_e, hi_e)
    return bfe_frame(bfe, method, datum, note, lo_e, hi_e, spos)


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




def _along_stream(pts, idx, streams, lines, l_elev, l_dat, radius, bfe, method, datum, note,
                  lo_e, hi_e, spos) -> None:
    """Interpolate by distance along the nearest studied stream between bracketing BFE lines.

    A stream is a flooding source with BFEs when at least two BFE lines cross it; the site is
    projected onto the nearest such stream.
    """
    # BFE line crossings with every stream: (stream, position along it, elevation, datum)
    li, sk = STRtree(streams).query(lines, predicate="intersects")
    cx = shapely.intersection(lines[li], streams[sk])
    cpts, cidx = shapely.get_parts(cx, return_index=True)
    isp = shapely.get_type_id(cpts) == 0
    cpts, cidx = cpts[isp], cidx[isp]
    c_stream, c_line = sk[cidx], li[cidx]
    c_s = shapely.line_locate_point(streams[c_stream], cpts) if len(cpts) else np.zeros(0)
    studied = np.flatnonzero(np.bincount(c_stream, minlength=len(streams)) >= 2)
    if not len(studied):
        note[idx] = "no stream line is crossed by two BFE lines: no BFE interpolated"
        return
    segs, seg_line = line_segments(streams[studied])
    (pp, sg), dist = STRtree(segs).query_nearest(pts[idx], return_distance=True, all_matches=False)
    site, sj = idx[pp], studied[seg_line[sg]]
    far = dist > radius
    note[site[far]] = (f"no stream line crossed by BFE lines within {radius:,.0f} ft of the site: "
                       f"no BFE interpolated")
    site, sj = site[~far], sj[~far]
    if not len(site):
        return
    s_site = shapely.line_locate_point(streams[sj], pts[site])
    spos[site] = s_site
    span = float(shapely.length(streams).max()) + 10.0
    ckey = c_stream * span + c_s
    order = np.argsort(ckey, kind="stable")
    ckey, c_stream, c_line, c_s = ckey[order], c_stream[order], c_line[order], c_s[order]
    skey = sj * span + s_site
    pos = np.searchsorted(ckey, skey, side="right")
    lo, hi = pos - 1, pos
    valid = (lo >= 0) & (hi < len(ckey))
    lo_c, hi_c = np.clip(lo, 0, len(ckey) - 1), np.clip(hi, 0, len(ckey) - 1)
    valid &= (c_stream[lo_c] == sj) & (c_stream[hi_c] == sj)
    exact = (lo >= 0) & (c_stream[lo_c] == sj) & np.isclose(c_s[lo_c], s_site, rtol=0.0, atol=1e-6)
    note[site[~valid & ~exact]] = ("the site is not between two BFE lines along its stream (upstream or "
                                   "downstream of the last line): no BFE interpolated")
    e_lo, e_hi = l_elev[c_line[lo_c]], l_elev[c_line[hi_c]]
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
    note[so] = [f"screening estimate: interpolated along the stream between BFE lines of {ft_text(a)} and "
                f"{ft_text(b)} ft{(' ' + d) if d else ''}, {tt:.0%} of the way; not a surveyed BFE"
                for a, b, d, tt in zip(e_lo[ok], e_hi[ok], d_lo[ok], t)]


def _nearest_lines(pts, idx, lines, l_elev, l_dat, radius, why, bfe, method, datum, note,
                   lo_e, hi_e) -> None:
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
    note[po] = [f"screening estimate: {why}, so the nearest BFE line on each side of the site ({ft_text(a)} ft at "
                f"{da:,.0f} ft, {ft_text(b)} ft at {db:,.0f} ft{(', ' + t) if t else ''}) weighted by inverse "
                f"distance; not a surveyed BFE"
                for a, b, da, db, t in zip(e1[ok], e2[ok], d1[ok], d2[ok], t1[ok])]

