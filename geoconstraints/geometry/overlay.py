"""The overlay engine: exact areas of intersection of many subjects with dissolved, tiled cover
polygons (flood zones, corridors, districts), with sliver and coverage handling.

Cover polygons are dissolved per key (so overlapping polygons are never counted twice), split
into parts, large parts tiled like PostGIS ``ST_Subdivide``, indexed once in an STRtree and
intersected with the subjects on aligned arrays (:func:`overlay_areas`). Overlaps thinner than a
sliver tolerance or smaller than a minimum area are reported as slivers, not as "in" the zone.
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

from geoconstraints.errors import InputError
from geoconstraints.units import SQFT_PER_ACRE

log = logging.getLogger(__name__)

TILE_MAX_VERTICES = 256
"""Cover parts with more vertices than this are cut into tiles before intersecting (speed only)."""

CHUNK_SIZE = 100_000
"""Subjects per chunk in :func:`overlay_areas`; a progress bar shows when there is more than one."""
"""How a BFE at a site was obtained (``bfe_method`` column)."""
"""Share of the walls the DEM must cover for the highest adjacent grade to be complete (numerical)."""

POLYGON_TYPES = (3, 6)  # shapely type ids: Polygon, MultiPolygon


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


def norm_text(values: pd.Series) -> pd.Series:
    return values.map(lambda v: str(v).strip().upper() if isinstance(v, str) and v.strip() else "")


@dataclass(frozen=True)
class FloodZoneSpec:
    """How to read an NFHL flood zone layer and when an overlap counts (from the FLD rules).

    Attributes
    ----------
    sfha_zones, undetermined_zones, unnumbered_a_zones, bfe_zones : frozenset of str
        Zone names (upper case, ranges expanded with :func:`expand_zone_list`).
    floodway_word : str
        ``ZONE_SUBTY`` text that marks the regulatory floodway (``FLOODWAY``).
    zone_field, sfha_field, subtype_field : str
        Field names of the zone, the SFHA flag and the zone subtype.
    sliver_tolerance_ft, min_overlap_sqft : float
        An overlap thinner than the tolerance or smaller than the area is a sliver.
    floodway_sliver_tolerance_ft, floodway_min_overlap_sqft : float
        The same for the floodway.
    """

    sfha_zones: frozenset[str]
    undetermined_zones: frozenset[str]
    unnumbered_a_zones: frozenset[str]
    bfe_zones: frozenset[str]
    floodway_word: str
    zone_field: str
    sfha_field: str
    subtype_field: str
    sliver_tolerance_ft: float
    min_overlap_sqft: float
    floodway_sliver_tolerance_ft: float
    floodway_min_overlap_sqft: float

    @property
    def tolerances(self) -> tuple[dict[str, float], dict[str, float]]:
        """Sliver tolerance and minimum area per cover key (``"*"`` for every key but the floodway)."""
        return ({"*": self.sliver_tolerance_ft, "_floodway": self.floodway_sliver_tolerance_ft},
                {"*": self.min_overlap_sqft, "_floodway": self.floodway_min_overlap_sqft})


def classify_flood_zones(flood: pd.DataFrame, spec: FloodZoneSpec) -> pd.DataFrame:
    """Classify NFHL flood zone records for the FLD rules (one row per record, same index).

    Parameters
    ----------
    flood : DataFrame
        NFHL ``S_FLD_HAZ_AR`` records with the zone field and optional SFHA flag and subtype.
    spec : FloodZoneSpec
        Zone lists and field names.

    Returns
    -------
    DataFrame
        ``zone`` (upper case), booleans ``undetermined`` (zone D, AREA NOT INCLUDED or blank: not
        "no hazard"), ``covered`` (= not undetermined), ``sfha`` (zone in ``sfha_zones`` or
        ``SFHA_TF = 'T'``, never when undetermined), ``floodway`` (subtype contains FLOODWAY),
        ``unnumbered_a``, ``bfe_zone``.
    """
    if spec.zone_field not in flood.columns:
        raise InputError(f"flood zones: field {spec.zone_field} missing; map the flood zone field to "
                         f"{spec.zone_field} in a project file")
    zone = norm_text(flood[spec.zone_field])
    undetermined = zone.isin(spec.undetermined_zones) | (zone == "")
    flag = (norm_text(flood[spec.sfha_field]).str[:1] if spec.sfha_field in flood.columns
            else pd.Series("", index=flood.index))
    sfha = (zone.isin(spec.sfha_zones) | (flag == "T")) & ~undetermined
    sub = (norm_text(flood[spec.subtype_field]) if spec.subtype_field in flood.columns
           else pd.Series("", index=flood.index))
    floodway = sub.str.contains(spec.floodway_word.upper(), regex=False) & ~undetermined
    return pd.DataFrame({
        "zone": zone, "undetermined": undetermined, "covered": ~undetermined, "sfha": sfha,
        "floodway": floodway,
        "unnumbered_a": zone.isin(spec.unnumbered_a_zones) & sfha,
        "bfe_zone": zone.isin(spec.bfe_zones) & sfha,
    }, index=flood.index)


# ------------------------------------------------------------------------------------------
# the overlay engine

def _polygon_parts(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Polygon parts of ``geoms`` and the index of the geometry each came from."""
    parts, idx = shapely.get_parts(np.asarray(geoms, dtype=object), return_index=True)
    keep = np.isin(shapely.get_type_id(parts), POLYGON_TYPES) & ~shapely.is_empty(parts)
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
    geom_out = masked(keep_k[g_code], merged)
    return pd.DataFrame({
        "subject": g_subj[ok] + offset,
        "key": np.array(cover.keys, dtype=object)[g_code[ok]],
        "raw_sqft": raw[ok], "sliver": sliver[ok],
        "area_sqft": np.where(sliver[ok], 0.0, raw[ok]),
        "geometry": geom_out[ok],
    })


def masked(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
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


def line_segments(lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
# metrics per subject

def _flood_cover_layers(flood: gpd.GeoDataFrame, spec: FloodZoneSpec) -> tuple[list[tuple[str, np.ndarray]], pd.DataFrame]:
    cls = classify_flood_zones(flood, spec)
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


def flood_metrics(
    subjects: gpd.GeoDataFrame,
    flood: gpd.GeoDataFrame | None,
    spec: FloodZoneSpec,
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
    spec : FloodZoneSpec
        Zone lists, field names and sliver tolerances.
    extra : sequence of (key, geometries)
        Other polygon layers to measure in the same pass (``_corridor``, ``district:RA-1``...).

    Returns
    -------
    (DataFrame, dict)
        The metrics (one row per subject, positional index) and the overlap geometries per
        key (``_sfha``, ``_floodway``) aligned with the subjects (None where no overlap).
    """
    tol, mins = spec.tolerances
    tol1, min1 = spec.sliver_tolerance_ft, spec.min_overlap_sqft
    geoms = np.asarray(subjects.geometry.values, dtype=object)
    n = len(geoms)
    area = shapely.area(geoms)
    layers: list[tuple[str, np.ndarray]] = []
    if flood is not None and len(flood):
        flood_layers, _ = _flood_cover_layers(flood, spec)
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
            unc = shapely.difference(geoms[ci], masked(~pd.isna(cg), cg))
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


def acres_of(sqft: Any) -> Any:
    return np.asarray(sqft, dtype=float) / SQFT_PER_ACRE


def share_of(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    whole = np.asarray(whole, dtype=float)
    return np.clip(np.divide(part, whole, out=np.zeros_like(whole), where=whole > 0), 0.0, 1.0)

