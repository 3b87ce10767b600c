"""Flood damage prevention (Vestal L.L. No. 2 of 1987, Code §§ 6-101 ff.): FLD-001..FLD-010.

Two entry points:

* :func:`screen_parcels` (command ``screen``) measures, for every parcel, the exact area of
  intersection with the area of special flood hazard (SFHA), the regulatory floodway, each flood
  zone, the stream corridor and critical slopes; the flood map's coverage; the base flood
  elevation (BFE) at the parcel's SFHA part; and emits FLD-001, 002, 005, 006, 009 per parcel and
  FLD-010 once. With a preliminary FIRM it also compares the two maps parcel by parcel.
* :func:`check_site` (command ``flood-site``) checks proposed structure footprints: FLD-001, 002,
  003, 004 (required lowest floor from the BFE or the highest adjacent grade), 006, 007
  (openings), 008 (substantial improvement) and 010.

The geometry work is vectorized: flood polygons are dissolved per class (so overlapping
polygons are never counted twice), split into parts (large parts are tiled so every
intersection stays cheap), indexed once in an STRtree, and intersected with the subjects on
aligned arrays (:func:`overlay_areas`). Overlaps thinner than the rulebook sliver tolerance, or
smaller than the minimum area, do not put a subject in a zone: they are reported as ignored
slivers. No data is not "no hazard": a subject outside the flood map's coverage (or in zone D /
AREA NOT INCLUDED) is ``not_evaluated``.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from shapely import STRtree

from .errors import InputError
from .findings import STATUS_RANK, STATUSES, Finding
from .layers import NFHL_SENTINEL, Layers
from .result import Result, make_result
from .rules import Rule, Rulebook, check, run_group
from .units import SQFT_PER_ACRE

log = logging.getLogger(__name__)

TILE_MAX_VERTICES = 256
"""Cover parts with more vertices than this are cut into tiles before intersecting (speed only)."""

CHUNK_SIZE = 100_000
"""Subjects per chunk in :func:`overlay_areas`; a progress bar shows when there is more than one."""

BFE_METHODS = ("static", "interpolated_along_stream", "nearest_lines", "none")
"""How a BFE at a site was obtained (``bfe_method`` column)."""

HAG_FULL_FRACTION = 1.0 - 1e-9
"""Share of the walls the DEM must cover for the highest adjacent grade to be complete (numerical)."""

_POLYGON_TYPES = (3, 6)  # shapely type ids: Polygon, MultiPolygon
_M_UNITS = ("M", "METER", "METERS", "METRE", "METRES")


# ------------------------------------------------------------------------------------------
# zone classification

def expand_zone_list(zones: Iterable[str]) -> frozenset[str]:
    """Expand a rulebook zone list (``["A", "AE", "A1-A30"]``) into the set of zone names.

    A range ``A1-A30`` stands for ``A1, A2, ..., A30``; names are compared upper case.

    Examples
    --------
    >>> sorted(expand_zone_list(["AE", "V1-V3"]))
    ['AE', 'V1', 'V2', 'V3']
    """
    out: set[str] = set()
    for z in zones or ():
        text = str(z).strip().upper()
        m = re.fullmatch(r"([A-Z]+)(\d+)\s*-\s*([A-Z]*)(\d+)", text)
        if m and (not m.group(3) or m.group(3) == m.group(1)):
            lo, hi = int(m.group(2)), int(m.group(4))
            out.update(f"{m.group(1)}{i}" for i in range(min(lo, hi), max(lo, hi) + 1))
        elif text:
            out.add(text)
    return frozenset(out)


def _norm_text(values: pd.Series) -> pd.Series:
    return values.map(lambda v: str(v).strip().upper() if isinstance(v, str) and v.strip() else "")


def classify_flood_zones(flood: pd.DataFrame, rulebook: Rulebook) -> pd.DataFrame:
    """Classify NFHL flood zone records for the FLD rules (one row per record, same index).

    Parameters
    ----------
    flood : DataFrame
        NFHL ``S_FLD_HAZ_AR`` records with ``FLD_ZONE`` and optional ``ZONE_SUBTY``, ``SFHA_TF``
        (the field names are the rulebook's ``zone_field`` / ``sfha_field`` / ``subtype_field``).
    rulebook : Rulebook
        Supplies FLD-001 ``sfha_zones`` / ``undetermined_zones``, FLD-002
        ``floodway_subtype_contains``, FLD-006 ``unnumbered_a_zones`` / ``bfe_zones``.

    Returns
    -------
    DataFrame
        ``zone`` (upper case), booleans ``undetermined`` (zone D, AREA NOT INCLUDED or blank: not
        "no hazard"), ``covered`` (= not undetermined), ``sfha`` (zone in ``sfha_zones`` or
        ``SFHA_TF = 'T'``, never when undetermined), ``floodway`` (subtype contains FLOODWAY),
        ``unnumbered_a``, ``bfe_zone``.
    """
    r1, r2, r6 = rulebook["FLD-001"], rulebook["FLD-002"], rulebook["FLD-006"]
    zone_field = r1.p("zone_field", "FLD_ZONE")
    sfha_field = r1.p("sfha_field", "SFHA_TF")
    sub_field = r2.p("subtype_field", "ZONE_SUBTY")
    if zone_field not in flood.columns:
        raise InputError(f"flood zones: field {zone_field} missing; map the flood zone field to "
                         f"{zone_field} in a project file")
    zone = _norm_text(flood[zone_field])
    sfha_zones = expand_zone_list(r1.p("sfha_zones"))
    undet_zones = expand_zone_list(r1.p("undetermined_zones", ["D", "AREA NOT INCLUDED"]))
    undetermined = zone.isin(undet_zones) | (zone == "")
    flag = (_norm_text(flood[sfha_field]).str[:1] if sfha_field in flood.columns
            else pd.Series("", index=flood.index))
    sfha = (zone.isin(sfha_zones) | (flag == "T")) & ~undetermined
    sub = (_norm_text(flood[sub_field]) if sub_field in flood.columns
           else pd.Series("", index=flood.index))
    fw_word = str(r2.p("floodway_subtype_contains", "FLOODWAY")).upper()
    floodway = sub.str.contains(fw_word, regex=False) & ~undetermined
    return pd.DataFrame({
        "zone": zone, "undetermined": undetermined, "covered": ~undetermined, "sfha": sfha,
        "floodway": floodway,
        "unnumbered_a": zone.isin(expand_zone_list(r6.p("unnumbered_a_zones", ["A"]))) & sfha,
        "bfe_zone": zone.isin(expand_zone_list(r6.p("bfe_zones", ["AE"]))) & sfha,
    }, index=flood.index)


# ------------------------------------------------------------------------------------------
# the overlay engine

def _polygon_parts(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Polygon parts of ``geoms`` and the index of the geometry each came from."""
    parts, idx = shapely.get_parts(np.asarray(geoms, dtype=object), return_index=True)
    keep = np.isin(shapely.get_type_id(parts), _POLYGON_TYPES) & ~shapely.is_empty(parts)
    return parts[keep], idx[keep]


def _tile(parts: np.ndarray, max_vertices: int = TILE_MAX_VERTICES, max_rounds: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Cut parts with many vertices into grid tiles (area preserved, tiles disjoint).

    Like PostGIS ``ST_Subdivide``: a part over ``max_vertices`` is cut by a grid over its
    bounds, and pieces still over the limit are cut again (at most ``max_rounds`` rounds).
    Returns the pieces and the index of the part each came from. Only the few large parts are
    iterated (to build their grids); the cutting itself is one vectorized intersection.
    """
    pieces, origin = parts, np.arange(len(parts))
    for _ in range(max_rounds):
        nv = shapely.get_num_coordinates(pieces)
        big = np.flatnonzero(nv > max_vertices)
        if not len(big):
            break
        boxes, owner = [], []
        for i in big:  # one grid per large piece (a handful), not per subject
            x0, y0, x1, y1 = shapely.bounds(pieces[i])
            k = max(2, math.ceil(math.sqrt(nv[i] / max_vertices)))
            xs, ys = np.linspace(x0, x1, k + 1), np.linspace(y0, y1, k + 1)
            gx0, gy0 = np.meshgrid(xs[:-1], ys[:-1])
            gx1, gy1 = np.meshgrid(xs[1:], ys[1:])
            boxes.append(shapely.box(gx0.ravel(), gy0.ravel(), gx1.ravel(), gy1.ravel()))
            owner.append(np.full(k * k, i))
        box_arr, own = np.concatenate(boxes), np.concatenate(owner)
        cut, cidx = _polygon_parts(shapely.intersection(pieces[own], box_arr))
        small = np.setdiff1d(np.arange(len(pieces)), big)
        pieces = np.concatenate([pieces[small], cut])
        origin = np.concatenate([origin[small], origin[own[cidx]]])
    return pieces, origin


@dataclass
class CoverIndex:
    """Polygons dissolved per key, split into disjoint parts, tiled and indexed (STRtree).

    Build it once with :meth:`build` and intersect any number of subjects with it.
    """

    keys: list[str]
    parts: np.ndarray
    part_key: np.ndarray  # int code into keys
    tree: STRtree = field(repr=False)

    @classmethod
    def build(cls, layers: Sequence[tuple[str, np.ndarray]]) -> CoverIndex:
        """Dissolve the polygons of each ``(key, geometries)`` and index the parts.

        Geometries under one key are unioned first, so overlapping polygons are counted once.
        """
        keys: list[str] = []
        all_parts, all_codes = [], []
        for key, geoms in layers:
            geoms = np.asarray(geoms, dtype=object)
            geoms = geoms[~(shapely.is_missing(geoms) | shapely.is_empty(geoms))] if len(geoms) else geoms
            if key in keys:
                raise ValueError(f"duplicate cover key {key}")
            keys.append(key)
            if not len(geoms):
                continue
            merged = shapely.union_all(geoms)
            parts, _ = _polygon_parts(np.array([merged], dtype=object))
            parts, _ = _tile(parts)
            all_parts.append(parts)
            all_codes.append(np.full(len(parts), len(keys) - 1))
        parts = np.concatenate(all_parts) if all_parts else np.array([], dtype=object)
        codes = np.concatenate(all_codes) if all_codes else np.array([], dtype=int)
        shapely.prepare(parts)
        return cls(keys, parts, codes, STRtree(parts))


def _thin(geoms: np.ndarray, tolerance_ft: np.ndarray) -> np.ndarray:
    """True where a polygon vanishes under a negative buffer of half the tolerance (a sliver)."""
    if not len(geoms):
        return np.zeros(0, dtype=bool)
    shrunk = shapely.buffer(geoms, -np.asarray(tolerance_ft, dtype=float) / 2.0, quad_segs=2)
    return shapely.is_empty(shrunk) | (shapely.area(shrunk) <= 0)


def overlay_areas(
    subjects: np.ndarray | gpd.GeoSeries,
    cover: CoverIndex,
    *,
    tolerance_ft: float | dict[str, float],
    min_area_sqft: float | dict[str, float],
    keep_geometry: Iterable[str] | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> pd.DataFrame:
    """Exact areas of intersection of every subject with every key of ``cover``.

    Parameters
    ----------
    subjects : array of polygons
        In the same projected CRS as ``cover`` (feet).
    cover : CoverIndex
    tolerance_ft, min_area_sqft : float or dict key -> float
        Sliver tolerance (an overlap that vanishes under a negative buffer of half of it is a
        sliver) and minimum area: one value for all keys, or per key with ``"*"`` as default.
    keep_geometry : iterable of str, optional
        Keys whose intersection geometries are returned (all when None).
    chunk_size : int
        Subjects per chunk; a tqdm progress bar is shown when there is more than one chunk.

    Returns
    -------
    DataFrame
        One row per (subject, key) with a non-empty polygonal overlap: ``subject`` (position in
        ``subjects``), ``key``, ``raw_sqft`` (area of the overlap), ``sliver`` (bool: thinner than
        the tolerance or smaller than the minimum area), ``area_sqft`` (0 for slivers),
        ``geometry`` (the merged overlap, or None).
    """
    geoms = np.asarray(subjects.values if isinstance(subjects, gpd.GeoSeries) else subjects, dtype=object)
    n = len(geoms)
    nk = len(cover.keys)
    def per_key(v: float | dict[str, float]) -> np.ndarray:
        return np.array([v.get(k, v["*"]) if isinstance(v, dict) else v for k in cover.keys], dtype=float)

    tol_k, min_k = per_key(tolerance_ft), per_key(min_area_sqft)
    keep_k = (np.ones(nk, dtype=bool) if keep_geometry is None
              else np.isin(np.array(cover.keys, dtype=object), list(keep_geometry)))
    starts = list(range(0, n, max(int(chunk_size), 1))) or [0]
    frames = []
    iterator: Iterable[int] = starts
    if len(starts) > 1:
        from tqdm.auto import tqdm

        iterator = tqdm(starts, desc="flood overlay", unit="chunk", leave=False)
    for s0 in iterator:
        frames.append(_overlay_chunk(geoms[s0:s0 + chunk_size], s0, cover, tol_k, min_k, keep_k))
    out = pd.concat(frames, ignore_index=True) if frames else _overlay_chunk(geoms[:0], 0, cover, tol_k, min_k, keep_k)
    return out


def _overlay_chunk(geoms: np.ndarray, offset: int, cover: CoverIndex, tol_k: np.ndarray,
                   min_k: np.ndarray, keep_k: np.ndarray) -> pd.DataFrame:
    cols = ["subject", "key", "raw_sqft", "sliver", "area_sqft", "geometry"]
    if not len(geoms) or not len(cover.parts):
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("key", "geometry") else
                                          ("bool" if c == "sliver" else "float64" if "sqft" in c else "int64"))
                             for c in cols})
    si, pi = cover.tree.query(geoms, predicate="intersects")
    subj, parts = geoms[si], cover.parts[pi]
    inside = shapely.contains(parts, subj)  # parts are prepared: fast; piece = the subject itself
    pieces = subj.copy()
    cross = ~inside
    if cross.any():
        pieces[cross] = shapely.intersection(subj[cross], parts[cross])
    code = cover.part_key[pi]
    # group pieces by (subject, key); pieces of one key are disjoint (dissolved parts, tiles)
    gkey = si.astype(np.int64) * len(cover.keys) + code
    uniq, ginv = np.unique(gkey, return_inverse=True)
    polys, pidx = _polygon_parts(pieces)
    gid = ginv[pidx]
    order = np.argsort(gid, kind="stable")
    polys, gid = polys[order], gid[order]
    merged = np.full(len(uniq), None, dtype=object)
    if len(polys):
        merged = shapely.multipolygons(polys, indices=gid, out=merged)
    count = np.bincount(gid, minlength=len(uniq))
    multi = count > 1
    if multi.any():  # adjacent pieces (tiles, parts of a multipolygon subject): merge them
        merged[multi] = shapely.make_valid(merged[multi], method="structure", keep_collapsed=False)
    has = count > 0
    g_subj = (uniq // len(cover.keys)).astype(np.int64)
    g_code = (uniq % len(cover.keys)).astype(np.int64)
    raw = np.zeros(len(uniq))
    raw[has] = shapely.area(merged[has])
    subj_area = shapely.area(geoms[g_subj])
    sliver = raw < min_k[g_code]
    test = has & ~sliver & (raw < subj_area * (1 - 1e-9))
    if test.any():
        sliver[test] = _thin(merged[test], tol_k[g_code[test]])
    ok = has & (raw > 0)
    geom_out = _masked(keep_k[g_code], merged)
    return pd.DataFrame({
        "subject": g_subj[ok] + offset,
        "key": np.array(cover.keys, dtype=object)[g_code[ok]],
        "raw_sqft": raw[ok], "sliver": sliver[ok],
        "area_sqft": np.where(sliver[ok], 0.0, raw[ok]),
        "geometry": geom_out[ok],
    })


def _masked(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` where ``mask``, None elsewhere (an object array)."""
    out = np.full(len(mask), None, dtype=object)
    out[mask] = np.asarray(values, dtype=object)[mask]
    return out


def _per_subject(ov: pd.DataFrame, key: str, n: int, column: str = "area_sqft") -> np.ndarray:
    sub = ov[ov["key"] == key]
    out = np.zeros(n) if column != "geometry" else np.full(n, None, dtype=object)
    if column == "sliver":
        out = np.zeros(n, dtype=bool)
    out[sub["subject"].to_numpy(dtype=np.int64)] = sub[column].to_numpy()
    return out


def _joined_keys(ov: pd.DataFrame, prefix: str, n: int) -> np.ndarray:
    """``'AE; X'``: the keys with ``prefix`` each subject is (non-sliver) in, sorted.

    Loops over the few distinct keys (zones, districts), never over subjects.
    """
    sub = ov[ov["key"].str.startswith(prefix) & (ov["area_sqft"] > 0)]
    out = np.full(n, "", dtype=object)
    for key in sorted(sub["key"].unique()):
        idx = sub.loc[sub["key"] == key, "subject"].to_numpy(dtype=np.int64)
        out[idx] = np.where(out[idx] == "", "", out[idx] + "; ") + key[len(prefix):]
    return out


def _segments(lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every line cut into its 2-point segments, and the index of the line each came from.

    A tree of short segments answers nearest-line queries much faster than a tree of long,
    many-vertex lines (the distance to a long line visits every vertex).
    """
    coords, idx = shapely.get_coordinates(lines, return_index=True)
    if len(coords) < 2:
        return np.array([], dtype=object), np.array([], dtype=np.int64)
    same = idx[1:] == idx[:-1]
    a, b = coords[:-1][same], coords[1:][same]
    segs = shapely.linestrings(np.stack([a, b], axis=1))
    return segs, idx[:-1][same]


# ------------------------------------------------------------------------------------------
# BFE at sites

def _norm_datum(v: Any) -> str:
    if not isinstance(v, str) or not v.strip() or v.strip().upper() in ("NP", "NONE", "NULL"):
        return ""
    return re.sub(r"[\s_-]", "", v.strip().upper())


def _elev_ft(df: pd.DataFrame, field_name: str) -> np.ndarray:
    """Elevations in feet; the NFHL sentinel -9999 (and any non-number) is missing, never an elevation."""
    vals = pd.to_numeric(df[field_name], errors="coerce").to_numpy(dtype=float)
    vals = np.where(vals == NFHL_SENTINEL, np.nan, vals)
    if "LEN_UNIT" in df.columns:
        unit = _norm_text(df["LEN_UNIT"])
        vals = np.where(unit.isin(_M_UNITS), vals / 0.3048, vals)
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
    names = (_norm_text(streams[name_col]) if name_col else pd.Series("", index=streams.index)).to_numpy()
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
    """Base flood elevation at points (SPEC §1 "BFE at a site").

    In order: the ``STATIC_BFE`` of the flood zone polygon(s) containing the point (highest when
    several); otherwise linear interpolation, by distance along the nearest stream line, between
    the two ``S_BFE`` lines (``ELEV``) that cross that stream on either side of the point's
    projection; without stream lines, the nearest BFE line on each side of the point weighted by
    inverse distance (never two lines on one side: no extrapolation). -9999 is no value.
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
        elev = _elev_ft(flood, "STATIC_BFE")
        has = np.isfinite(elev)
        if has.any():
            polys = flood.geometry.values[has]
            pi_, fi_ = STRtree(polys).query(pts, predicate="intersects")
            if len(pi_):
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
                note[for_mixed] = "static BFE of the flood zone polygon (STATIC_BFE); overlapping polygons state different vertical datums: highest value used, check the datum"
                todo[p] = False

    if bfe_lines is None or not len(bfe_lines) or "ELEV" not in bfe_lines.columns:
        note[todo] = "no STATIC_BFE at the site and no BFE lines (bfe_lines layer): no BFE"
        return _bfe_frame(bfe, method, datum, note, lo_e, hi_e, spos)
    lines = bfe_lines.geometry.values
    l_elev = _elev_ft(bfe_lines, "ELEV")
    l_dat = (bfe_lines["V_DATUM"].map(_norm_datum).to_numpy() if "V_DATUM" in bfe_lines.columns
             else np.full(len(bfe_lines), "", dtype=object))
    good = np.isfinite(l_elev)
    lines, l_elev, l_dat = np.asarray(lines[good], dtype=object), l_elev[good], l_dat[good]
    if not len(lines):
        note[todo] = "no STATIC_BFE at the site and the BFE lines carry no ELEV values: no BFE"
        return _bfe_frame(bfe, method, datum, note, lo_e, hi_e, spos)

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
    return _bfe_frame(bfe, method, datum, note, lo_e, hi_e, spos)


def _bfe_frame(bfe, method, datum, note, lo_e, hi_e, spos) -> pd.DataFrame:
    return pd.DataFrame({"bfe_ft": bfe, "bfe_method": method, "bfe_datum": datum, "bfe_note": note,
                         "bfe_low_ft": lo_e, "bfe_high_ft": hi_e, "stream_position_ft": spos})


def _fmt(v: float) -> str:
    return f"{v:,.1f}"


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
    segs, seg_line = _segments(streams[studied])
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
    note[so] = [f"screening estimate: interpolated along the stream between BFE lines of {_fmt(a)} and "
                f"{_fmt(b)} ft{(' ' + d) if d else ''}, {tt:.0%} of the way; not a surveyed BFE"
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
        note[on_line] = [f"screening estimate: {why}; the site is on a BFE line of {_fmt(e)} ft; not a surveyed BFE"
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
    note[po] = [f"screening estimate: {why}, so the nearest BFE line on each side of the site ({_fmt(a)} ft at "
                f"{da:,.0f} ft, {_fmt(b)} ft at {db:,.0f} ft{(', ' + t) if t else ''}) weighted by inverse "
                f"distance; not a surveyed BFE"
                for a, b, da, db, t in zip(e1[ok], e2[ok], d1[ok], d2[ok], t1[ok])]


# ------------------------------------------------------------------------------------------
# metrics per subject

def _flood_cover_layers(flood: gpd.GeoDataFrame, rulebook: Rulebook) -> tuple[list[tuple[str, np.ndarray]], pd.DataFrame]:
    cls = classify_flood_zones(flood, rulebook)
    g = flood.geometry.values
    layers: list[tuple[str, np.ndarray]] = []
    for z in sorted(set(cls["zone"]) - {""}):
        layers.append((f"zone:{z}", g[(cls["zone"] == z).to_numpy()]))
    # BFE zone polygons that neither are nor touch a floodway polygon: "no floodway determined"
    bz = cls["bfe_zone"].to_numpy() & ~cls["floodway"].to_numpy()
    no_fw = bz.copy()
    fw = cls["floodway"].to_numpy()
    if fw.any() and bz.any():
        hit, _ = STRtree(g[fw]).query(g[bz], predicate="intersects")
        touched = np.zeros(int(bz.sum()), dtype=bool)
        touched[hit] = True
        no_fw[np.flatnonzero(bz)[touched]] = False
    layers += [
        ("_covered", g[cls["covered"].to_numpy()]),
        ("_undetermined", g[cls["undetermined"].to_numpy()]),
        ("_sfha", g[cls["sfha"].to_numpy()]),
        ("_floodway", g[fw]),
        ("_unnumbered", g[cls["unnumbered_a"].to_numpy()]),
        ("_bfe_no_floodway", g[no_fw]),
        ("_bfe_zone", g[cls["bfe_zone"].to_numpy()]),
    ]
    return layers, cls


def _tolerances(rulebook: Rulebook) -> tuple[dict[str, float], dict[str, float], float, float]:
    r1, r2 = rulebook["FLD-001"], rulebook["FLD-002"]
    tol1, min1 = r1.t("sliver_tolerance_ft"), r1.t("min_overlap_sqft")
    tol2, min2 = r2.t("sliver_tolerance_ft"), r2.t("min_overlap_sqft")
    return {"*": tol1, "_floodway": tol2}, {"*": min1, "_floodway": min2}, tol1, min1


def flood_metrics(
    subjects: gpd.GeoDataFrame,
    flood: gpd.GeoDataFrame | None,
    rulebook: Rulebook,
    *,
    extra: Sequence[tuple[str, np.ndarray]] = (),
    chunk_size: int = CHUNK_SIZE,
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Per-subject flood measurements (areas in sq ft and acres, zones, coverage).

    Parameters
    ----------
    subjects : GeoDataFrame
        Parcels or footprints (working CRS, feet).
    flood : GeoDataFrame or None
        The ``flood_zones`` layer; None gives ``flood_data = 'no_data'`` everywhere.
    rulebook : Rulebook
    extra : sequence of (key, geometries)
        Other polygon layers to measure in the same pass (``_corridor``, ``district:RA-1``...).

    Returns
    -------
    (DataFrame, dict)
        The metrics (one row per subject, positional index) and the overlap geometries per
        key (``_sfha``, ``_floodway``) aligned with the subjects (None where no overlap).
    """
    tol, mins, tol1, min1 = _tolerances(rulebook)
    geoms = np.asarray(subjects.geometry.values, dtype=object)
    n = len(geoms)
    area = shapely.area(geoms)
    layers: list[tuple[str, np.ndarray]] = []
    if flood is not None and len(flood):
        flood_layers, _ = _flood_cover_layers(flood, rulebook)
        layers += flood_layers
    layers += list(extra)
    cover = CoverIndex.build(layers)
    ov = overlay_areas(geoms, cover, tolerance_ft=tol, min_area_sqft=mins,
                       keep_geometry=("_sfha", "_floodway", "_covered"), chunk_size=chunk_size)
    m = pd.DataFrame(index=pd.RangeIndex(n))
    m["area_sqft"] = area
    for key, name in (("_sfha", "sfha"), ("_floodway", "floodway"), ("_covered", "covered"),
                      ("_undetermined", "undetermined"), ("_unnumbered", "unnumbered_a"),
                      ("_bfe_no_floodway", "bfe_no_floodway"), ("_bfe_zone", "bfe_zone")):
        m[f"{name}_sqft"] = _per_subject(ov, key, n)
        m[f"{name}_raw_sqft"] = _per_subject(ov, key, n, "raw_sqft")
        m[f"{name}_sliver"] = _per_subject(ov, key, n, "sliver")
    m["flood_zones"] = _joined_keys(ov, "zone:", n)
    m["sliver_zones"] = _joined_keys(ov.assign(area_sqft=np.where(ov["sliver"], 1.0, 0.0)), "zone:", n)
    overlaps = {k: _per_subject(ov, k, n, "geometry") for k in ("_sfha", "_floodway", "_covered")}

    # coverage: full / partial / no_data (uncovered slivers along the map edge are ignored)
    if flood is None or not len(flood):
        m["flood_data"] = "no_data"
    else:
        cov = m["covered_sqft"].to_numpy()
        unc_raw = np.clip(area - m["covered_raw_sqft"].to_numpy(), 0.0, None)
        state = np.where(cov > 0, "full", "no_data").astype(object)
        check_unc = (cov > 0) & (unc_raw > 1e-9 * np.maximum(area, 1.0))
        if check_unc.any():
            ci = np.flatnonzero(check_unc)
            cg = overlaps["_covered"][ci]
            unc = shapely.difference(geoms[ci], _masked(~pd.isna(cg), cg))
            unc_area = shapely.area(unc)
            thin = np.zeros(len(ci), dtype=bool)
            big = unc_area >= min1
            thin[big] = _thin(unc[big], np.full(int(big.sum()), tol1))
            real = big & ~thin
            state[ci[real]] = "partial"
        m["flood_data"] = state
    m["uncovered_sqft"] = np.where(m["flood_data"] == "full", 0.0,
                                   np.clip(area - m["covered_sqft"].to_numpy(), 0.0, None))
    for key, _g in extra:
        m[f"{key}_sqft"] = _per_subject(ov, key, n)
    m["districts"] = _joined_keys(ov, "district:", n)
    return m, overlaps


def _acres(sqft: Any) -> Any:
    return np.asarray(sqft, dtype=float) / SQFT_PER_ACRE


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    whole = np.asarray(whole, dtype=float)
    return np.clip(np.divide(part, whole, out=np.zeros_like(whole), where=whole > 0), 0.0, 1.0)


# ------------------------------------------------------------------------------------------
# context shared by the checks

@dataclass
class FloodContext:
    """What the FLD checks read: the mode, the measured subjects and the inputs.

    Attributes
    ----------
    mode : str
        ``"screen"`` (parcels) or ``"site"`` (footprints).
    layers : Layers
    table : GeoDataFrame
        One row per subject with the metrics (see :func:`screen_parcels`).
    subject_layer : str
        ``parcels`` or ``footprints``.
    flood_given : bool
        A ``flood_zones`` layer with features was given.
    overlaps : dict
        Overlap geometries per key, aligned with ``table``.
    site : dict
        check_site options (use, lowest floor, ...).
    """

    mode: str
    layers: Layers
    table: gpd.GeoDataFrame
    subject_layer: str
    flood_given: bool
    overlaps: dict[str, np.ndarray] = field(default_factory=dict)
    site: dict[str, Any] = field(default_factory=dict)
    statuses: dict[str, np.ndarray] = field(default_factory=dict)


def _geom_or(overlap: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    ov = np.asarray(overlap, dtype=object)
    return np.where(pd.isna(ov), fallback, ov)


def _sliver_note(t: pd.DataFrame, kind: str) -> np.ndarray:
    """``'; a sliver of 37 sq ft along the SFHA was ignored (...)'`` or ``''``."""
    raw = t[f"{kind}_raw_sqft"].to_numpy()
    sl = t[f"{kind}_sliver"].to_numpy(dtype=bool)
    label = {"sfha": "area of special flood hazard", "floodway": "floodway"}[kind]
    out = np.full(len(t), "", dtype=object)
    out[sl] = [f"; a sliver of {r:,.0f} sq ft along the {label} was ignored (thinner than the "
               f"sliver tolerance or under the minimum area)" for r in raw[sl]]
    return out


def _coverage_note(t: pd.DataFrame) -> np.ndarray:
    fd = t["flood_data"].to_numpy()
    unc = _acres(t["uncovered_sqft"].to_numpy())
    und = t["undetermined_sqft"].to_numpy() > 0
    out = np.full(len(t), "", dtype=object)
    part = fd == "partial"
    out[part] = [f"; partial flood data: {a:,.2f} acres outside the flood map's coverage not evaluated"
                 for a in unc[part]]
    out[und] = out[und] + "; zone D / AREA NOT INCLUDED (undetermined hazard) is not 'no flood hazard'"
    return out


def _rule_frame(rule: Rule, ctx: FloodContext, status: np.ndarray, *, measured: Any = None,
                threshold: Any = None, unit: str = "", geometry: Any = None,
                detail: Any = "") -> gpd.GeoDataFrame:
    ctx.statuses[rule.id] = np.asarray(status, dtype=object)
    t = ctx.table
    return rule.findings(status, subject_layer=ctx.subject_layer, subject_id=t["feature_id"],
                         measured=measured, threshold=threshold, unit=unit,
                         geometry=geometry if geometry is not None else t.geometry.values,
                         crs=t.crs, detail=detail)


def _not_covered(t: pd.DataFrame) -> np.ndarray:
    return (t["flood_data"] == "no_data").to_numpy()


def _no_flood_detail(ctx: FloodContext) -> str:
    return ("no flood_zones layer given: give --flood-zones (FEMA NFHL S_FLD_HAZ_AR)" if not ctx.flood_given
            else "outside the flood map's coverage, or in zone D / AREA NOT INCLUDED (undetermined hazard), "
                 "which is not 'no flood hazard'")


@check("FLD-001")
def check_sfha(ctx: FloodContext, rule: Rule) -> list[gpd.GeoDataFrame]:
    """FLD-001: development in the SFHA needs a permit; acres and share per subject."""
    t = ctx.table
    n = len(t)
    sfha = t["sfha_sqft"].to_numpy()
    share = _share(sfha, t["area_sqft"].to_numpy())
    nc = _not_covered(t)
    partial = (t["flood_data"] == "partial").to_numpy()
    status = np.where(nc, "not_evaluated", np.where(sfha > 0, "review", np.where(partial, "not_evaluated", "pass")))
    cov_note, sl_note = _coverage_note(t), _sliver_note(t, "sfha")
    zones = t["flood_zones"].to_numpy()
    detail = np.empty(n, dtype=object)
    for_review = [f"{s:.1%} of the {ctx.subject_layer[:-1]}, zones {z or 'n/a'}" for s, z in zip(share, zones)]
    detail[:] = [f"zones {z}" if z else "no mapped zone" for z in zones]
    rv = status == "review"
    detail[rv] = np.array(for_review, dtype=object)[rv]
    ne_part = (status == "not_evaluated") & ~nc
    detail[ne_part] = [f"the covered part is outside the SFHA (zones {z or 'n/a'})" for z in zones[ne_part]]
    detail[nc] = _no_flood_detail(ctx)
    detail = detail + cov_note + sl_note
    geom = _geom_or(_masked(rv, ctx.overlaps.get("_sfha", np.full(n, None, dtype=object))), t.geometry.values)
    return [_rule_frame(rule, ctx, status, measured=np.where(nc, np.nan, _acres(sfha)), unit="acres",
                        geometry=geom, detail=detail)]


@check("FLD-002")
def check_floodway(ctx: FloodContext, rule: Rule) -> list[gpd.GeoDataFrame]:
    """FLD-002: floodway encroachment (site: violation / review with a no-rise evaluation)."""
    t = ctx.table
    n = len(t)
    fw = t["floodway_sqft"].to_numpy()
    nc = _not_covered(t)
    partial = (t["flood_data"] == "partial").to_numpy()
    share = _share(fw, t["area_sqft"].to_numpy())
    in_fw = fw > 0
    sl = _sliver_note(t, "floodway")
    cov = _coverage_note(t)
    if ctx.mode == "site":
        no_rise = bool(ctx.site.get("no_rise_evaluation"))
        hit = "review" if no_rise else "violation"
        status = np.where(nc, "not_evaluated", np.where(in_fw, hit, np.where(partial, "not_evaluated", "pass")))
        detail = np.full(n, "", dtype=object)
        why = ("a no-rise technical evaluation is supplied: it must demonstrate no increase in flood levels "
               "during the base flood" if no_rise else "no no-rise technical evaluation supplied")
        detail[in_fw] = [f"{s:.0%} of the footprint; {why}" for s in share[in_fw]]
        measured = np.where(nc, np.nan, fw)
        unit = "sqft"
    else:
        status = np.where(nc, "not_evaluated", np.where(in_fw, "review", np.where(partial, "not_evaluated", "pass")))
        detail = np.full(n, "", dtype=object)
        detail[in_fw] = [f"{a:,.2f} acres, {s:.1%} of the parcel: encroachments prohibited unless a technical "
                         f"evaluation shows no rise" for a, s in zip(_acres(fw[in_fw]), share[in_fw])]
        measured = np.where(nc, np.nan, _acres(fw))
        unit = "acres"
    detail[~in_fw & ~nc] = "no regulatory floodway mapped on it"
    ne_part = (status == "not_evaluated") & ~nc
    detail[ne_part] = "no floodway on the covered part"
    info = ctx.layers.info.get("flood_zones")
    if info is not None and "ZONE_SUBTY" in info.absent_fields:
        # without ZONE_SUBTY a floodway cannot be told from the rest of the SFHA: only parcels with
        # no SFHA at all (a floodway always lies in the SFHA) can pass
        unknown = ~nc & (t["sfha_sqft"].to_numpy() > 0)
        status = np.where(unknown, "not_evaluated", status)
        measured = np.where(unknown, np.nan, measured)
        detail[unknown] = ("the flood layer has no ZONE_SUBTY field, so the floodway cannot be told from the "
                           "rest of the SFHA: give the NFHL S_FLD_HAZ_AR layer with ZONE_SUBTY")
    detail[nc] = _no_flood_detail(ctx)
    detail = detail + cov + sl
    geom = _geom_or(_masked(in_fw, ctx.overlaps.get("_floodway", np.full(n, None, dtype=object))),
                    t.geometry.values)
    return [_rule_frame(rule, ctx, status, measured=measured, unit=unit, geometry=geom, detail=detail)]


@check("FLD-003")
def check_bfe_floor(ctx: FloodContext, rule: Rule) -> list[gpd.GeoDataFrame]:
    """FLD-003: lowest floor at or above the BFE where the FIRM gives one (site check only)."""
    if ctx.mode != "site":
        return []
    t = ctx.table
    n = len(t)
    use = ctx.site.get("use")
    floor = ctx.site.get("lowest_floor_ft")
    user_bfe = ctx.site.get("bfe_ft")
    free = rule.t("min_freeboard_ft")
    status = np.full(n, "not_evaluated", dtype=object)
    detail = np.full(n, "", dtype=object)
    threshold = np.full(n, np.nan)
    for i in range(n):  # a handful of proposed footprints, not a batch
        row = t.iloc[i]
        gate = _site_gate(ctx, row, "§ 6-137 elevation standards do not apply")
        if gate is not None:
            status[i], detail[i] = gate
            continue
        if use == "manufactured":
            status[i], detail[i] = "info", "manufactured home: elevation checked under FLD-004 (§ 6-136(b)(2))"
            continue
        if not _firm_gives_bfe(row):
            status[i], detail[i] = "info", f"no BFE on the FIRM here (zone {row['flood_zones']}): FLD-004 applies"
            continue
        bfe, src = _site_bfe(row, user_bfe)
        if bfe is None:
            detail[i] = f"BFE zone, but no BFE could be determined at the site ({row['bfe_note']}); give --bfe-ft"
            continue
        req = bfe + free
        threshold[i] = req
        dat = f" ({row['bfe_datum']})" if row["bfe_datum"] else ""
        if floor is None:
            detail[i] = f"BFE {_fmt(req)} ft{dat}; no lowest floor elevation given (--lowest-floor-ft); {src}"
        elif float(floor) >= req:
            status[i] = "pass"
            detail[i] = f"lowest floor {_fmt(float(floor))} ft at or above the BFE of {_fmt(req)} ft{dat}; {src}"
        elif use == "nonresidential":
            status[i] = "review"
            detail[i] = (f"lowest floor {_fmt(float(floor))} ft is below the BFE of {_fmt(req)} ft{dat}: lawful only if "
                         f"floodproofed watertight to the BFE, certified by a licensed engineer or architect; {src}")
        else:
            status[i] = "violation"
            detail[i] = f"{src}; the floor elevation must be in the BFE's vertical datum{dat}"
    measured = np.full(n, np.nan if floor is None else float(floor))
    return [_rule_frame(rule, ctx, status, measured=measured, threshold=threshold, unit="ft", detail=detail)]


def _site_gate(ctx: FloodContext, row: pd.Series, outside: str) -> tuple[str, str] | None:
    """(status, detail) when a footprint is not in the SFHA or not covered; None otherwise."""
    if row["flood_data"] == "no_data":
        return "not_evaluated", _no_flood_detail(ctx)
    if row["sfha_sqft"] <= 0:
        if row["flood_data"] == "partial":
            return "not_evaluated", "part of the footprint is outside the flood map's coverage"
        return "pass", f"outside the area of special flood hazard: {outside}"
    return None


def _firm_gives_bfe(row: pd.Series) -> bool:
    """The footprint's SFHA is a zone with BFEs on the FIRM (AE, A1-A30, ...) or has a STATIC_BFE."""
    return bool(row["bfe_zone_sqft"] > 0 or row["bfe_method"] == "static")


def _site_bfe(row: pd.Series, user_bfe: float | None) -> tuple[float | None, str]:
    """The FIRM's BFE at the site, else the user's BFE from other data, with a phrase saying which."""
    if np.isfinite(row["bfe_ft"]):
        return float(row["bfe_ft"]), f"BFE {row['bfe_method'].replace('_', ' ')}, {row['bfe_note']}"
    if user_bfe is not None:
        return float(user_bfe), f"BFE {_fmt(float(user_bfe))} ft given by the user (--bfe-ft): {row['bfe_note']}"
    return None, ""


@check("FLD-004")
def check_no_bfe_floor(ctx: FloodContext, rule: Rule) -> list[gpd.GeoDataFrame]:
    """FLD-004: no BFE on the FIRM: floor >= max(BFE from other data, HAG + 2 ft); manufactured homes."""
    if ctx.mode != "site":
        return []
    t = ctx.table
    n = len(t)
    use = ctx.site.get("use")
    floor = ctx.site.get("lowest_floor_ft")
    user_bfe = ctx.site.get("bfe_ft")
    fb = rule.t("hag_freeboard_ft")
    status = np.full(n, "not_evaluated", dtype=object)
    detail = np.full(n, "", dtype=object)
    threshold = np.full(n, np.nan)
    no_floor = "no lowest floor elevation given (--lowest-floor-ft)"
    for i in range(n):  # a handful of proposed footprints
        row = t.iloc[i]
        gate = _site_gate(ctx, row, "§ 6-137(d) does not apply")
        if gate is not None:
            status[i], detail[i] = gate
            continue
        if _firm_gives_bfe(row):
            if use != "manufactured":
                status[i], detail[i] = "info", "the FIRM gives a BFE here: FLD-003 applies"
                continue
            bfe, src = _site_bfe(row, user_bfe)  # manufactured home: at or above the BFE
            if bfe is None:
                detail[i] = f"manufactured home in a BFE zone, but no BFE could be determined ({row['bfe_note']}); give --bfe-ft"
                continue
            req, parts = bfe, f"manufactured home: at or above the BFE {_fmt(bfe)} ft ({src})"
        else:
            hag, frac = row["hag_ft"], row["hag_fraction"]
            cands, words = [], []
            if user_bfe is not None:
                cands.append(float(user_bfe))
                words.append(f"BFE from other data {_fmt(float(user_bfe))} ft")
            if np.isfinite(hag):
                cands.append(float(hag) + fb)
                words.append(f"highest adjacent grade {_fmt(float(hag))} ft + {fb:g} ft = {_fmt(float(hag) + fb)} ft"
                             + (f" (DEM covers {frac:.0%} of the walls)" if frac < HAG_FULL_FRACTION else ""))
            if not cands:
                detail[i] = ("no BFE on the FIRM, no BFE from other data (--bfe-ft) and no pre-construction DEM "
                             "(--dem) under the footprint for the highest adjacent grade")
                continue
            req = max(cands)
            parts = ("required = max(" + ", ".join(words) + f") = {_fmt(req)} ft; the DEM's and the BFE's "
                     "vertical datums must agree")
            if not np.isfinite(hag):
                threshold[i] = req
                if floor is not None and float(floor) < req:
                    status[i] = "violation"
                    detail[i] = parts + "; the highest adjacent grade is unknown (no DEM under the footprint)"
                else:
                    detail[i] = (parts + "; the 2 ft above highest adjacent grade test needs a pre-construction "
                                 "DEM (--dem)" + ("" if floor is not None else "; " + no_floor))
                continue
        threshold[i] = req
        part_walls = not _firm_gives_bfe(row) and row["hag_fraction"] < HAG_FULL_FRACTION
        if floor is None:
            detail[i] = f"{parts}; {no_floor}"
        elif float(floor) >= req and part_walls:
            detail[i] = (f"lowest floor {_fmt(float(floor))} ft meets {_fmt(req)} ft from the sampled walls, but the "
                         f"DEM covers only {row['hag_fraction']:.0%} of the walls: the highest adjacent grade may be "
                         f"higher on the rest ({parts})")
        elif float(floor) >= req:
            status[i] = "pass"
            detail[i] = f"lowest floor {_fmt(float(floor))} ft, required {_fmt(req)} ft: {parts}"
        else:
            status[i] = "violation"
            detail[i] = parts
    measured = np.full(n, np.nan if floor is None else float(floor))
    return [_rule_frame(rule, ctx, status, measured=measured, threshold=threshold, unit="ft", detail=detail)]


@check("FLD-005")
def check_bfe_data_large(ctx: FloodContext, rule: Rule) -> list[gpd.GeoDataFrame]:
    """FLD-005: proposals over 50 lots or 5 acres in the SFHA provide BFE data (parcels)."""
    if ctx.mode != "screen":
        return []
    t = ctx.table
    acres = t["area_acres"].to_numpy()
    lim = rule.t("max_acres")
    nc = _not_covered(t)
    in_sfha = t["sfha_sqft"].to_numpy() > 0
    partial = (t["flood_data"] == "partial").to_numpy()
    big = acres > lim
    status = np.where(nc, "not_evaluated", np.where(in_sfha & big, "review",
                      np.where(partial & big, "not_evaluated", "pass")))
    lots = f"lot count not known for a parcel: area test only ({rule.t('max_lots'):g} lots)"
    detail = np.full(len(t), "", dtype=object)
    detail[in_sfha & big] = [f"{lots}; BFE on the FIRM here: {m}" for m in t["bfe_method"].to_numpy()[in_sfha & big]]
    detail[in_sfha & ~big] = f"{lots}: parcel not greater than {lim:g} acres"
    detail[~in_sfha] = "outside the area of special flood hazard"
    detail[~in_sfha & big & partial] = f"over {lim:g} acres, no SFHA on the covered part"
    detail = detail + _coverage_note(t)
    detail[nc] = _no_flood_detail(ctx)
    return [_rule_frame(rule, ctx, status, measured=acres, threshold=lim, unit="acres", detail=detail)]


@check("FLD-006")
def check_encroachment(ctx: FloodContext, rule: Rule) -> list[gpd.GeoDataFrame]:
    """FLD-006: unnumbered A zones (capacity analysis) and BFE zones without floodway (1 ft rise)."""
    t = ctx.table
    nc = _not_covered(t)
    unn = t["unnumbered_a_sqft"].to_numpy() > 0
    nofw = t["bfe_no_floodway_sqft"].to_numpy() > 0
    in_sfha = t["sfha_sqft"].to_numpy() > 0
    partial = (t["flood_data"] == "partial").to_numpy()
    rise = rule.t("max_cumulative_rise_ft")
    status = np.where(nc, "not_evaluated", np.where(unn | nofw, "review",
                      np.where(partial, "not_evaluated", "pass")))
    d1 = np.where(unn, "unnumbered A zone: development must be analysed for its effect on the flood-carrying "
                       "capacity (§ 6-136(f)(1))", "")
    d2 = np.where(nofw, f"BFE zone with no floodway determined: cumulative rise of the base flood with all other "
                        f"development at most {rise:g} ft (§ 6-136(f)(2)), hydraulic analysis needed", "")
    detail = np.array(["; ".join(x for x in pair if x) for pair in zip(d1, d2)], dtype=object)
    rest = ~(unn | nofw)
    detail[rest & in_sfha] = "SFHA with a floodway determined: § 6-138 applies (FLD-002)"
    detail[rest & ~in_sfha] = "outside the area of special flood hazard"
    detail = detail + _coverage_note(t)
    detail[nc] = _no_flood_detail(ctx)
    return [_rule_frame(rule, ctx, status, threshold=rise, unit="ft", detail=detail)]


@check("FLD-007")
def check_openings(ctx: FloodContext, rule: Rule) -> list[gpd.GeoDataFrame]:
    """FLD-007: openings in enclosed areas below the lowest floor (site check only)."""
    if ctx.mode != "site":
        return []
    t = ctx.table
    n = len(t)
    o = ctx.site
    encl, sqin, count, bottom = (o.get("enclosed_sqft"), o.get("openings_sqin"), o.get("openings"),
                                 o.get("opening_bottom_ft"))
    need_n = rule.t("min_openings_count")
    per = rule.t("min_opening_sqin_per_sqft")
    max_b = rule.t("max_opening_bottom_above_grade_ft")
    in_sfha = t["sfha_sqft"].to_numpy() > 0
    nc = _not_covered(t)
    req = np.nan if encl is None else float(encl) * per
    if encl is None:
        st, det = "not_evaluated", "enclosed area below the lowest floor not given (--enclosed-sqft)"
    elif float(encl) <= 0:
        st, det = "pass", "no enclosed area below the lowest floor"
    else:
        missing = [name for name, v in (("--openings", count), ("--openings-sqin", sqin),
                                        ("--opening-bottom-ft", bottom)) if v is None]
        if missing or count is None or sqin is None or bottom is None:
            st, det = "not_evaluated", f"opening data missing: {', '.join(missing)}"
        else:
            fails = []
            if count < need_n:
                fails.append(f"{count} opening(s), at least {need_n:g} needed")
            if sqin < req:
                fails.append(f"net area {sqin:,.0f} sq in, at least {req:,.0f} sq in needed "
                             f"({per:g} sq in per sq ft of {float(encl):,.0f} sq ft enclosed)")
            if bottom > max_b:
                fails.append(f"opening bottoms {bottom:g} ft above grade, at most {max_b:g} ft")
            if fails:
                st, det = "review", "; ".join(fails)
            else:
                st, det = "pass", (f"{count} openings, {sqin:,.0f} sq in for {float(encl):,.0f} sq ft enclosed "
                                   f"(at least {req:,.0f}), bottoms {bottom:g} ft above grade")
    status = np.full(n, st, dtype=object)
    detail = np.full(n, det, dtype=object)
    out = ~in_sfha & ~nc & (t["flood_data"].to_numpy() == "full")
    status[out] = "pass"
    detail[out] = "outside the area of special flood hazard: no opening requirement"
    status[nc] = "not_evaluated"
    detail[nc] = _no_flood_detail(ctx)
    return [_rule_frame(rule, ctx, status, measured=np.nan if sqin is None else float(sqin), threshold=req,
                        unit="sqin", detail=detail)]


@check("FLD-008")
def check_substantial_improvement(ctx: FloodContext, rule: Rule) -> list[gpd.GeoDataFrame]:
    """FLD-008: improvement cost >= 50 % of market value = substantial improvement (site only)."""
    if ctx.mode != "site":
        return []
    n = len(ctx.table)
    cost, value = ctx.site.get("improvement_cost"), ctx.site.get("market_value")
    lim = rule.t("substantial_improvement_pct")
    excl = "; excluded: code work solely for safe living conditions, listed historic structures"
    if cost is None or value is None:
        st, pct, det = "not_evaluated", np.nan, "give --improvement-cost and --market-value" + excl
    elif float(value) <= 0:
        st, pct, det = "not_evaluated", np.nan, f"market value {value} is not positive" + excl
    else:
        pct = 100.0 * float(cost) / float(value)
        if pct >= lim:
            st, det = "review", ("treated as new construction: FLD-003/004/007 apply to the whole structure" + excl)
        else:
            st, det = "pass", "not a substantial improvement" + excl
    return [_rule_frame(rule, ctx, np.full(n, st, dtype=object), measured=pct, threshold=lim, unit="pct",
                        detail=det)]


@check("FLD-009")
def check_variance(ctx: FloodContext, rule: Rule) -> list[gpd.GeoDataFrame]:
    """FLD-009: variance checklist per parcel (info, with the lot size)."""
    if ctx.mode != "screen":
        return []
    t = ctx.table
    acres = t["area_acres"].to_numpy()
    lim = rule.t("variance_max_lot_acres")
    nc = _not_covered(t)
    in_sfha = t["sfha_sqft"].to_numpy() > 0
    in_fw = t["floodway_sqft"].to_numpy() > 0
    status = np.where(nc, "not_evaluated", "info")
    small = acres <= lim
    detail = np.where(small, f"{lim:g} acre or less: a variance may generally be considered if contiguous to and "
                             f"surrounded by lots with existing structures below the base flood level (not checked)",
                      f"over {lim:g} acre: a variance needs more technical justification as the lot size increases")
    detail = detail.astype(object)
    detail[in_fw] = detail[in_fw] + "; no variance within the floodway if any increase in flood levels would result"
    detail[~in_sfha & ~nc] = "outside the area of special flood hazard: no flood variance needed"
    detail = detail + _coverage_note(t)
    detail[nc] = _no_flood_detail(ctx)
    return [_rule_frame(rule, ctx, status, measured=acres, threshold=lim, unit="acres", detail=detail)]


def _date_text(v: Any) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ""
    ts = pd.to_datetime(v, errors="coerce")
    if pd.isna(ts):
        return str(v).strip()
    return ts.strftime("%Y-%m-%d")


@check("FLD-010")
def check_adopted_map(ctx: FloodContext, rule: Rule) -> list[Finding]:
    """FLD-010: the flood map's DFIRM_ID / effective date against the adopted map (once per run)."""
    flood = ctx.layers.get_layer("flood_zones")
    if flood is None:
        return [rule.finding("not_evaluated", subject_layer="flood_zones", detail="no flood_zones layer given")]
    ids = sorted({str(v).strip() for v in flood["DFIRM_ID"].dropna()} - {""}) if "DFIRM_ID" in flood else []
    dates = sorted({_date_text(v) for v in flood["EFF_DATE"].dropna()} - {""}) if "EFF_DATE" in flood else []
    if not ids and not dates:
        return [rule.finding("not_evaluated", subject_layer="flood_zones",
                             detail="the layer has no DFIRM_ID or EFF_DATE values")]
    want_id = str(rule.p("adopted_dfirm_id")).strip()
    want_date = _date_text(rule.p("adopted_effective_date"))
    text = f"DFIRM_ID {', '.join(ids) or 'not stated'}, effective {', '.join(dates) or 'not stated'}"
    if ids == [want_id] and dates == [want_date]:
        return [rule.finding("pass", subject_layer="flood_zones", detail=text)]
    diff = []
    if ids != [want_id]:
        diff.append("DFIRM_ID differs" if ids else "DFIRM_ID not stated")
    if dates != [want_date]:
        diff.append("effective date differs" if dates else "effective date not stated")
    return [rule.finding("info", subject_layer="flood_zones", detail=f"{text} ({', '.join(diff)})")]


# ------------------------------------------------------------------------------------------
# entry points

def _other_cover_layers(layers: Layers, subjects: gpd.GeoDataFrame) -> tuple[list[tuple[str, np.ndarray]], bool]:
    extra: list[tuple[str, np.ndarray]] = []
    for role, key in (("stream_corridor", "_corridor"), ("critical_slopes", "_critical")):
        g = layers.get_layer(role)
        if g is not None:
            extra.append((key, g.geometry.values))
    z = layers.get_layer("zoning")
    if z is not None and "district" in z.columns:
        d = _norm_text(z["district"])
        for name in sorted(set(d) - {""}):
            extra.append((f"district:{name}", z.geometry.values[(d == name).to_numpy()]))
    return extra, z is not None


def _stream_distance(layers: Layers, geoms: np.ndarray) -> np.ndarray:
    streams = layers.get_layer("streams")
    if streams is None or not len(geoms):
        return np.full(len(geoms), np.nan)
    g = np.asarray(streams.geometry.values, dtype=object)
    lines = np.where(np.isin(shapely.get_type_id(g), _POLYGON_TYPES), shapely.boundary(g), g)
    segs, _ = _segments(lines)
    (gi, _), dist = STRtree(segs).query_nearest(geoms, return_distance=True, all_matches=False)
    inside = np.zeros(len(geoms), dtype=bool)
    poly = g[np.isin(shapely.get_type_id(g), _POLYGON_TYPES)]
    if len(poly):  # a parcel overlapping a stream mapped as a polygon is at distance 0
        hit, _ = STRtree(poly).query(geoms, predicate="intersects")
        inside[hit] = True
    out = np.full(len(geoms), np.nan)
    out[gi] = dist
    out[inside] = 0.0
    return out


def _bfe_for_overlaps(layers: Layers, rulebook: Rulebook, overlaps: np.ndarray) -> pd.DataFrame:
    n = len(overlaps)
    has = ~pd.isna(overlaps)
    res = _bfe_frame(np.full(n, np.nan), np.full(n, "none", dtype=object), np.full(n, "", dtype=object),
                     np.full(n, "not in the area of special flood hazard", dtype=object),
                     np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan))
    if has.any():
        pts = shapely.point_on_surface(np.asarray(overlaps[has], dtype=object))
        sub = bfe_at_points(pts, flood=layers.get_layer("flood_zones"), bfe_lines=layers.get_layer("bfe_lines"),
                            streams=layers.get_layer("streams"),
                            search_radius_ft=rulebook["FLD-003"].t("bfe_search_radius_ft"))
        res.loc[np.flatnonzero(has)] = sub.to_numpy()
    for c in ("bfe_ft", "bfe_low_ft", "bfe_high_ft", "stream_position_ft"):
        res[c] = res[c].astype(float)
    return res


def _subject_table(subjects: gpd.GeoDataFrame, id_name: str, m: pd.DataFrame, layers: Layers,
                   zoning_given: bool) -> gpd.GeoDataFrame:
    area = m["area_sqft"].to_numpy()
    t = pd.DataFrame({
        id_name: subjects["feature_id"].astype(str).to_numpy(),
        "area_acres": _acres(area),
        "sfha_acres": _acres(m["sfha_sqft"]), "sfha_share": _share(m["sfha_sqft"].to_numpy(), area),
        "floodway_acres": _acres(m["floodway_sqft"]),
        "floodway_share": _share(m["floodway_sqft"].to_numpy(), area),
        "flood_zones": m["flood_zones"].to_numpy(), "flood_data": m["flood_data"].to_numpy(),
        "uncovered_acres": _acres(m["uncovered_sqft"]),
        "slivers_ignored": m["sliver_zones"].to_numpy(),
    })
    for key, col, role in (("_corridor", "stream_corridor_acres", "stream_corridor"),
                           ("_critical", "critical_slope_acres", "critical_slopes")):
        t[col] = _acres(m[f"{key}_sqft"]) if f"{key}_sqft" in m else np.nan
    if zoning_given:
        t["zoning_districts"] = m["districts"].to_numpy()
    elif "zoning" in subjects.columns:
        t["zoning_districts"] = _norm_text(subjects["zoning"]).to_numpy()
    else:
        t["zoning_districts"] = ""
    return gpd.GeoDataFrame(t, geometry=subjects.geometry.values, crs=subjects.crs)


def _internal(m: pd.DataFrame) -> pd.DataFrame:
    keep = [c for c in m.columns if c.endswith(("_sqft", "_sliver"))]
    return m[keep]


def _worst(statuses: dict[str, np.ndarray], n: int) -> np.ndarray:
    rank = np.full(n, STATUS_RANK["pass"])
    for st in statuses.values():
        rank = np.minimum(rank, pd.Series(st).map(STATUS_RANK).to_numpy())
    return np.array(STATUSES, dtype=object)[rank]


def _compare_maps(table: gpd.GeoDataFrame, m_pre: pd.DataFrame, min_sqft: float) -> gpd.GeoDataFrame:
    pre_sfha = _acres(m_pre["sfha_sqft"])
    table["prelim_flood_zones"] = m_pre["flood_zones"].to_numpy()
    table["prelim_flood_data"] = m_pre["flood_data"].to_numpy()
    table["prelim_sfha_acres"] = pre_sfha
    table["sfha_acres_change"] = pre_sfha - table["sfha_acres"].to_numpy()
    eff, pre = table["flood_zones"].to_numpy(), table["prelim_flood_zones"].to_numpy()
    was, will = table["sfha_acres"].to_numpy() > 0, pre_sfha > 0
    change = np.where(eff == pre, "", [f"{a or 'none'} -> {b or 'none'}" for a, b in zip(eff, pre)]).astype(object)
    change[~was & will] = change[~was & will] + "; enters the SFHA"
    change[was & ~will] = change[was & ~will] + "; leaves the SFHA"
    table["zone_change"] = [c.lstrip("; ") for c in change]
    return table


def screen_parcels(layers: Layers, rulebook: Rulebook, *, chunk_size: int = CHUNK_SIZE) -> Result:
    """Screen every parcel against the flood maps (command ``screen``).

    Parameters
    ----------
    layers : Layers
        ``parcels`` (required), ``flood_zones`` (NFHL S_FLD_HAZ_AR), optional ``bfe_lines``,
        ``streams``, ``stream_corridor``, ``critical_slopes``, ``zoning`` and
        ``flood_zones_preliminary`` (a preliminary FIRM to compare).
    rulebook : Rulebook
        Supplies FLD-001..FLD-010 (thresholds, zone lists, adopted map).
    chunk_size : int
        Parcels per overlay chunk (a progress bar shows when there is more than one).

    Returns
    -------
    Result
        Findings FLD-001, 002, 005, 006, 009 per parcel and FLD-010 once; ``tables["parcels"]``
        (a GeoDataFrame, one row per parcel: ``parcel_id, area_acres, sfha_acres, sfha_share,
        floodway_acres, floodway_share, flood_zones, flood_data, uncovered_acres,
        slivers_ignored, bfe_ft, bfe_method, bfe_datum, bfe_note, stream_distance_ft,
        stream_corridor_acres, critical_slope_acres, zoning_districts, worst_status`` and, with a
        preliminary map, ``prelim_flood_zones, prelim_sfha_acres, sfha_acres_change,
        zone_change``); ``tables["map_comparison"]`` (parcels whose zone or SFHA acres change);
        derived layers ``sfha_overlaps`` and ``floodway_overlaps``.

    Raises
    ------
    InputError
        No parcels layer.

    Examples
    --------
    >>> import geoconstraints as gc
    >>> layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"))   # doctest: +SKIP
    >>> res = screen_parcels(layers, gc.load_rulebook("vestal"))        # doctest: +SKIP
    >>> res.tables["parcels"][["parcel_id", "sfha_acres", "flood_data"]].head()  # doctest: +SKIP
    """
    rulebook.require_group("flood")
    parcels = layers.get_layer("parcels")
    if parcels is None:
        raise InputError("screen needs a parcels layer: give --parcels PATH[:LAYER] or a GeoPackage with a "
                         "layer named 'parcels'")
    flood = layers.get_layer("flood_zones")
    if flood is None:
        log.warning("no flood_zones layer: every parcel is not_evaluated for the flood rules")
    extra, zoning_given = _other_cover_layers(layers, parcels)
    m, overlaps = flood_metrics(parcels, flood, rulebook, extra=extra, chunk_size=chunk_size)
    table = _subject_table(parcels, "parcel_id", m, layers, zoning_given)
    bfe = _bfe_for_overlaps(layers, rulebook, overlaps["_sfha"])
    for c in ("bfe_ft", "bfe_method", "bfe_datum", "bfe_note"):
        table[c] = bfe[c].to_numpy()
    table["stream_distance_ft"] = _stream_distance(layers, np.asarray(parcels.geometry.values, dtype=object))
    work = pd.concat([table.reset_index(drop=True), _internal(m)], axis=1)
    work["feature_id"] = table["parcel_id"].to_numpy()
    work = gpd.GeoDataFrame(work, geometry=table.geometry.values, crs=parcels.crs)
    ctx = FloodContext("screen", layers, work, "parcels", flood is not None, overlaps)
    items = run_group(rulebook, "flood", ctx)
    table["worst_status"] = _worst(ctx.statuses, len(table))
    tables: dict[str, pd.DataFrame] = {}
    notes = [("Areas are exact intersections in the working CRS; overlapping flood polygons are dissolved per "
              "class before measuring. An interpolated BFE is a screening estimate, not a surveyed BFE.")]
    pre = layers.get_layer("flood_zones_preliminary")
    if pre is not None:
        m_pre, _ = flood_metrics(parcels, pre, rulebook, chunk_size=chunk_size)
        table = _compare_maps(table, m_pre, rulebook["FLD-001"].t("min_overlap_sqft"))
        min_acres = rulebook["FLD-001"].t("min_overlap_sqft") / SQFT_PER_ACRE
        changed = (table["zone_change"] != "") | (table["sfha_acres_change"].abs() >= min_acres)
        cols = ["parcel_id", "area_acres", "flood_zones", "prelim_flood_zones", "sfha_acres", "prelim_sfha_acres",
                "sfha_acres_change", "zone_change", "flood_data", "prelim_flood_data"]
        tables["map_comparison"] = gpd.GeoDataFrame(table.loc[changed, cols].reset_index(drop=True),
                                                    geometry=table.geometry.values[changed.to_numpy()], crs=parcels.crs)
        notes.append(f"Preliminary map compared: {int(changed.sum())} parcel(s) change zone or SFHA acres.")
    tables = {"parcels": table, **tables}
    derived = {}
    for key, name in (("_sfha", "sfha_overlaps"), ("_floodway", "floodway_overlaps")):
        g = overlaps[key]
        has = ~pd.isna(g)
        derived[name] = gpd.GeoDataFrame({"parcel_id": table["parcel_id"].to_numpy()[has],
                                          "acres": _acres(shapely.area(np.asarray(g[has], dtype=object)))},
                                         geometry=np.asarray(g[has], dtype=object), crs=parcels.crs)
    res = make_result("screen", rulebook, items, layers, derived=derived, tables=tables)
    res.notes.extend(notes)
    return res


def check_site(
    layers: Layers,
    rulebook: Rulebook,
    *,
    use: str,
    lowest_floor_ft: float | None = None,
    bfe_ft: float | None = None,
    enclosed_sqft: float | None = None,
    openings_sqin: float | None = None,
    openings: int | None = None,
    opening_bottom_ft: float | None = None,
    improvement_cost: float | None = None,
    market_value: float | None = None,
    no_rise_evaluation: bool = False,
) -> Result:
    """Check proposed structure footprints against the flood standards (command ``flood-site``).

    Parameters
    ----------
    layers : Layers
        ``footprints`` (required), ``flood_zones``, optional ``bfe_lines``, ``streams`` and a
        pre-construction DEM (``layers.dem``) for the highest adjacent grade.
    rulebook : Rulebook
    use : {"residential", "nonresidential", "manufactured"}
    lowest_floor_ft : float, optional
        Proposed lowest floor (basement included), ft, in the BFE's vertical datum.
    bfe_ft : float, optional
        BFE from other data (§ 6-121(b)(5)) where the FIRM gives none.
    enclosed_sqft, openings_sqin, openings, opening_bottom_ft : optional
        Enclosed area below the lowest floor and its flood openings (FLD-007).
    improvement_cost, market_value : float, optional
        For the substantial-improvement test (FLD-008).
    no_rise_evaluation : bool
        A no-rise technical evaluation is supplied (FLD-002 becomes ``review``).

    Returns
    -------
    Result
        Findings FLD-001, 002, 003, 004, 006, 007, 008 per footprint and FLD-010 once;
        ``tables["footprints"]`` with the measurements, BFE, highest adjacent grade and the
        required lowest floor.

    Raises
    ------
    InputError
        No footprints layer, or an unknown ``use``.
    """
    rulebook.require_group("flood")
    uses = ("residential", "nonresidential", "manufactured")
    if use not in uses:
        raise InputError(f"use {use!r} is not one of {', '.join(uses)}")
    fps = layers.get_layer("footprints")
    if fps is None:
        raise InputError("flood-site needs a footprint: give the FOOTPRINT file (or --footprints PATH[:LAYER])")
    flood = layers.get_layer("flood_zones")
    if flood is None:
        log.warning("no flood_zones layer: the flood rules are not evaluated")
    m, overlaps = flood_metrics(fps, flood, rulebook)
    table = _subject_table(fps, "footprint_id", m, layers, False)
    geoms = np.asarray(fps.geometry.values, dtype=object)
    # BFE: the highest value over the footprint's corners and centroid (conservative)
    coords, owner = shapely.get_coordinates(geoms, return_index=True)
    pts = np.concatenate([shapely.points(coords), shapely.centroid(geoms)])
    owner = np.concatenate([owner, np.arange(len(geoms))])
    b = bfe_at_points(pts, flood=flood, bfe_lines=layers.get_layer("bfe_lines"), streams=layers.get_layer("streams"),
                      search_radius_ft=rulebook["FLD-003"].t("bfe_search_radius_ft"))
    b["owner"] = owner
    b["rank"] = b["bfe_method"].map({k: i for i, k in enumerate(BFE_METHODS)})
    b = b.sort_values(["owner", "rank", "bfe_ft"], ascending=[True, True, False], na_position="last")
    best = b.groupby("owner").head(1).set_index("owner").reindex(range(len(geoms)))
    in_sfha = m["sfha_sqft"].to_numpy() > 0
    table["bfe_ft"] = np.where(in_sfha, best["bfe_ft"].to_numpy(dtype=float), np.nan)
    table["bfe_method"] = np.where(in_sfha, best["bfe_method"].to_numpy(), "none")
    table["bfe_datum"] = np.where(in_sfha, best["bfe_datum"].to_numpy(), "")
    table["bfe_note"] = np.where(in_sfha, [f"highest over the footprint's corners and centroid ({x})" for x in best["bfe_note"]],
                                 "not in the area of special flood hazard")
    hag = np.full(len(geoms), np.nan)
    frac = np.zeros(len(geoms))
    if layers.dem is not None:
        from .terrain import highest_adjacent_grade

        for i, g in enumerate(geoms):  # a handful of proposed footprints
            hag[i], _, frac[i] = highest_adjacent_grade(layers.dem, g, layers.crs)
    table["hag_ft"], table["hag_fraction"] = hag, frac
    table["stream_distance_ft"] = _stream_distance(layers, geoms)
    work = pd.concat([table.reset_index(drop=True), _internal(m)], axis=1)
    work["feature_id"] = table["footprint_id"].to_numpy()
    work = gpd.GeoDataFrame(work, geometry=table.geometry.values, crs=fps.crs)
    opts = {"use": use, "lowest_floor_ft": lowest_floor_ft, "bfe_ft": bfe_ft, "enclosed_sqft": enclosed_sqft,
            "openings_sqin": openings_sqin, "openings": openings, "opening_bottom_ft": opening_bottom_ft,
            "improvement_cost": improvement_cost, "market_value": market_value,
            "no_rise_evaluation": no_rise_evaluation}
    ctx = FloodContext("site", layers, work, "footprints", flood is not None, overlaps, opts)
    items = run_group(rulebook, "flood", ctx)
    f3 = next((f for f in items if isinstance(f, gpd.GeoDataFrame) and len(f) and f["rule_id"].iloc[0] == "FLD-003"), None)
    f4 = next((f for f in items if isinstance(f, gpd.GeoDataFrame) and len(f) and f["rule_id"].iloc[0] == "FLD-004"), None)
    req = np.full(len(geoms), np.nan)
    for f in (f3, f4):
        if f is not None:
            thr = f["threshold"].to_numpy(dtype=float)
            req = np.where(np.isfinite(thr) & ~np.isfinite(req), thr, req)
    table["required_lowest_floor_ft"] = req
    table["worst_status"] = _worst(ctx.statuses, len(table))
    res = make_result("flood-site", rulebook, items, layers, tables={"footprints": table},
                      options={k: v for k, v in opts.items() if v is not None})
    res.notes.append("An interpolated BFE is a screening estimate, not a surveyed BFE; the lowest floor, BFE and "
                     "DEM must share one vertical datum.")
    return res


__all__ = [
    "BFE_METHODS", "CoverIndex", "FloodContext", "bfe_at_points", "check_site", "classify_flood_zones",
    "expand_zone_list", "flood_metrics", "overlay_areas", "screen_parcels",
]
