"""The BFE over a subject's part in the SFHA: a parcel's (``screen``) and a proposed footprint's
(``flood-site``).

Built on the sampler of :mod:`geoconstraints.geometry.bfe` (:func:`~geoconstraints.geometry.bfe.bfe_sampler`,
:func:`~geoconstraints.geometry.bfe.bfe_at_points`, :func:`~geoconstraints.geometry.bfe.bfe_upper_bound`): the
BFE is read at many points of the part, not at one, and summed up conservatively: the highest whatever its
method, never a BFE read off the BFE lines where the FIRM gives none (zone A beside AE), never two vertical
datums compared.

* :func:`bfe_for_overlaps`: the BFE columns of the parcels table (:data:`PARCEL_BFE_COLUMNS`), a million
  parcels at once.
* :func:`site_bfe`: the BFE of each proposed footprint (:data:`SITE_BFE_COLUMNS`), with the areas of its SFHA
  part stating a ``STATIC_BFE`` and where the FIRM gives none.

Rule-agnostic like the rest of :mod:`geoconstraints.geometry`: the caller passes the search radius, the
:class:`~geoconstraints.geometry.overlay.FloodZoneSpec` and, for a footprint, the test of whether the FIRM
gives a BFE on it (:func:`geoconstraints.rules.flood.firm_gives_bfe`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from shapely import STRtree

from geoconstraints.geometry.bfe import (
    BFE_METHODS,
    bfe_at_points,
    bfe_sampler,
    bfe_upper_bound,
    static_bfe_polygons,
)
from geoconstraints.geometry.overlay import FloodZoneSpec, classify_flood_zones
from geoconstraints.text import ft_text
from geoconstraints.units import LENGTH_NOISE_FT

# ------------------------------------------------------------------------------------------
# the flood zone polygons, as the FIRM gives a BFE on them


class FirmZones(NamedTuple):
    """What the FIRM says of each flood zone polygon, classified once for :func:`site_bfe`,
    :func:`bfe_for_overlaps` and their helpers (masks aligned with the flood layer's rows; empty without a
    layer)."""

    zone: np.ndarray
    """The zone of each polygon (:func:`~geoconstraints.geometry.overlay.classify_flood_zones`)."""
    sfha: np.ndarray
    """In the SFHA."""
    bfe_zone: np.ndarray
    """Of a zone with BFEs on the FIRM (AE, AH, A1-A30, VE, V1-V30)."""
    static: np.ndarray
    """Stating a ``STATIC_BFE`` (:func:`~geoconstraints.geometry.bfe.static_bfe_polygons`)."""


def _firm_zones(flood: gpd.GeoDataFrame | None, spec: FloodZoneSpec) -> FirmZones:
    """:class:`FirmZones` of the flood layer."""
    if flood is None or not len(flood):
        none = np.zeros(0, dtype=bool)
        return FirmZones(np.zeros(0, dtype=object), none, none, none)
    cls = classify_flood_zones(flood, spec)
    return FirmZones(cls["zone"].to_numpy(), cls["sfha"].to_numpy(dtype=bool), cls["bfe_zone"].to_numpy(dtype=bool),
                     static_bfe_polygons(flood))


# ------------------------------------------------------------------------------------------
# a parcel's BFE (screen)

PARCEL_BFE_COLUMNS = ("bfe_ft", "bfe_lowest_ft", "bfe_method", "bfe_datum", "bfe_note")
"""The BFE columns of the parcels table (:func:`bfe_for_overlaps`), in order."""

PARCEL_SAMPLED = "points sampled on the parcel's SFHA part"
"""How the parcels table's notes name the points a parcel's BFE is read at (:func:`_parcel_bfe_points`)."""


def empty_parcel_bfe(n: int) -> dict[str, np.ndarray]:
    """The BFE columns (:data:`PARCEL_BFE_COLUMNS`) of ``n`` parcels with no part in the SFHA: no BFE (NaN,
    ``none``), the note saying why; :func:`bfe_for_overlaps` fills in those of the parcels with one.

    Examples
    --------
    >>> c = empty_parcel_bfe(2)
    >>> sorted(c) == sorted(PARCEL_BFE_COLUMNS), c["bfe_method"].tolist(), c["bfe_note"][0]
    (True, ['none', 'none'], 'not in the area of special flood hazard')
    """
    return {
        "bfe_ft": np.full(n, np.nan), "bfe_method": np.full(n, "none", dtype=object),
        "bfe_datum": np.full(n, "", dtype=object),
        "bfe_note": np.full(n, "not in the area of special flood hazard", dtype=object),
        "bfe_lowest_ft": np.full(n, np.nan)}


def bfe_for_overlaps(overlaps: np.ndarray, *, flood: gpd.GeoDataFrame | None,
                     bfe_lines: gpd.GeoDataFrame | None, streams: gpd.GeoDataFrame | None,
                     search_radius_ft: float, spec: FloodZoneSpec,
                     m: pd.DataFrame | None = None) -> dict[str, np.ndarray]:
    """The BFE columns of the parcels table (:data:`PARCEL_BFE_COLUMNS`) from each parcel's part in the SFHA
    (``overlaps``: the overlay's ``_sfha`` geometries, None where none), as arrays: the table takes them as
    they are (no frame built of a million rows to be taken apart).

    The BFE is read (:func:`~geoconstraints.geometry.bfe.bfe_sampler`: the layers' work once, then vectorized
    calls: the points on surface, the corners of :func:`_parcel_bfe_points` (those farthest the way the BFE
    rises with their notes, the others without), every corner of the parts where the cap does not hold
    (:func:`_off_the_cap`), and the notes of the few points giving the highest read without one) and summed up
    by :func:`_parcel_bfe` as flood-site sums up a footprint's: ``bfe_ft`` the highest whatever the method
    (its method, datum and note), ``bfe_lowest_ft`` the lowest, so a parcel the BFE varies across reads as a range; the note
    (:func:`_parcel_bfe_notes`) states the range, a stronger method's lower BFE elsewhere, the points without
    a BFE and the part where the FIRM gives none. With the overlay's metrics ``m``, only the parcels whose SFHA
    part is not wholly in zones with BFEs (``sfha_raw_sqft`` above ``bfe_zone_raw_sqft``: zone A beside AE)
    have their points classified by zone (without: every parcel): as on a footprint, a BFE the BFE lines give
    at a point where the FIRM gives none (zone A, :func:`_off_the_firm`) is not the parcel's.

    Parameters
    ----------
    overlaps : array of geometries
        Each parcel's part in the SFHA, None where none.
    flood, bfe_lines, streams : GeoDataFrame or None
        The ``flood_zones``, ``bfe_lines`` and ``streams`` layers (None: not given).
    search_radius_ft : float
        How far from a point a stream or BFE line is sought (FLD-003's ``bfe_search_radius_ft``).
    spec : FloodZoneSpec
        How the flood zones are read: the zones with BFEs, those of the SFHA (the rulebook's, exact).
    m : DataFrame, optional
        :func:`~geoconstraints.geometry.overlay.flood_metrics`' metrics of the same parcels.

    Returns
    -------
    dict of arrays
        :data:`PARCEL_BFE_COLUMNS`, one value per parcel (``none`` and ``not in the area of special flood
        hazard`` where no part: :func:`empty_parcel_bfe`).

    Examples
    --------
    A parcel 400 ft along a stream crossed by BFE lines of 848 ft at x = 0 and 850 ft at x = 400, its point on
    surface halfway (849 ft), and one outside the SFHA:

    >>> from shapely.geometry import LineString, box
    >>> spec = FloodZoneSpec(sfha_zones=frozenset({"A", "AE"}), undetermined_zones=frozenset({"D"}),
    ...                      unnumbered_a_zones=frozenset({"A"}), bfe_zones=frozenset({"AE"}),
    ...                      floodway_word="FLOODWAY", zone_field="FLD_ZONE", sfha_field="SFHA_TF",
    ...                      subtype_field="ZONE_SUBTY",
    ...                      sliver_tolerance_ft=0, min_overlap_sqft=0, floodway_sliver_tolerance_ft=0,
    ...                      floodway_min_overlap_sqft=0, non_sfha_zones=frozenset({"X"}))
    >>> ae = gpd.GeoDataFrame({"FLD_ZONE": ["AE"]}, geometry=[box(-300, -200, 800, 300)])
    >>> bl = gpd.GeoDataFrame({"ELEV": [848.0, 850.0], "V_DATUM": ["NAVD88"] * 2},
    ...                       geometry=[LineString([(0, -150), (0, 250)]),
    ...                                 LineString([(400, -150), (400, 250)])])
    >>> st = gpd.GeoDataFrame(geometry=[LineString([(-250, 50), (750, 50)])])
    >>> c = bfe_for_overlaps(np.array([box(0, 0, 400, 100), None]), flood=ae, bfe_lines=bl, streams=st,
    ...                      search_radius_ft=5000, spec=spec)
    >>> c["bfe_ft"].tolist(), c["bfe_lowest_ft"].tolist(), c["bfe_method"].tolist()
    ([850.0, nan], [848.0, nan], ['interpolated_along_stream', 'none'])
    >>> print(c["bfe_note"][0])
    848.0 to 850.0 ft at the points read on the parcel's SFHA part; the highest read is given (the site projects onto a BFE line: its
    ELEV (screening estimate))
    """
    out = empty_parcel_bfe(len(overlaps))
    has = ~pd.isna(overlaps)
    if not has.any():
        return out
    at = np.flatnonzero(has)
    parts = np.asarray(overlaps[has], dtype=object)
    sample = bfe_sampler(flood=flood, bfe_lines=bfe_lines, streams=streams,
                         search_radius_ft=search_radius_ft)  # the layers' work once
    if m is None:
        mixed = cut = np.ones(len(parts), dtype=bool)
    else:
        in_bfe_zone = m["bfe_zone_raw_sqft"].to_numpy(dtype=float)[at]
        mixed = m["sfha_raw_sqft"].to_numpy(dtype=float)[at] > in_bfe_zone + LENGTH_NOISE_FT ** 2
        cut = mixed & (in_bfe_zone > LENGTH_NOISE_FT ** 2)
    pos = shapely.point_on_surface(parts)
    first = sample(pos, notes=False, direction=True)  # one point each (a note of its own where it gives none)
    if ((bfe_lines is None or not len(bfe_lines) or "ELEV" not in bfe_lines.columns)
            and not static_bfe_polygons(flood).any()):
        for c in ("bfe_method", "bfe_datum", "bfe_note"):  # no BFE anywhere (no BFE lines, no STATIC_BFE): the
            out[c][at] = first[c].to_numpy(dtype=object)  # point on surface says why, no other point to read
        return out
    fz = _firm_zones(flood, spec)
    pts, owner, e_pts, e_owner, capped, top = _parcel_bfe_points(parts, first, flood, fz, mixed, cut)
    rest = pd.concat([sample(pts[:top], direction=True),  # the corners farthest the way the BFE rises: noted
                      sample(pts[top:], notes=False, direction=True)], ignore_index=True)
    bent = _off_the_cap(first, rest, owner, capped)
    xy, own = shapely.get_coordinates(parts[bent], return_index=True)
    more_xy, more_owner = _distinct([(xy, np.flatnonzero(bent)[own])])  # every corner where the cap does not hold
    more = shapely.points(more_xy)
    keep = ~bent[owner]  # a bent parcel's two extremes are among its corners: read once
    b = pd.concat([first.drop(columns=["bfe_dx", "bfe_dy"]), rest[keep].drop(columns=["bfe_dx", "bfe_dy"]),
                   sample(more, notes=False), sample(e_pts, notes=False, static=False)], ignore_index=True)
    noted = np.r_[np.zeros(len(pos), dtype=bool), (np.arange(len(pts)) < top)[keep],
                  np.zeros(len(more) + len(e_pts), dtype=bool)]
    owner = np.concatenate([np.arange(len(parts)), owner[keep], more_owner, e_owner])
    where = np.concatenate([pos, pts[keep], more, e_pts])
    lines_side = np.r_[np.zeros(len(where) - len(e_pts), dtype=bool), np.ones(len(e_pts), dtype=bool)]
    off = np.zeros(len(b), dtype=bool)
    if mixed.any() and len(fz.zone):
        check = np.flatnonzero(mixed[owner])
        off[check] = _off_the_firm(where[check], b["bfe_method"].to_numpy()[check], flood, fz)
    cols = _parcel_bfe(b, owner, off, len(parts))
    for side in (False, True):  # the highest at a point without its own note: read it again, with its note
        redo = np.flatnonzero((cols["row"] >= 0) & ~noted[cols["row"]] & (lines_side[cols["row"]] == side))
        if len(redo):
            cols["note"][redo] = sample(where[cols["row"][redo]], static=not side)["bfe_note"].to_numpy(dtype=object)
    cols["bfe_note"] = _parcel_bfe_notes(cols, _no_bfe_zone_names(m, at, mixed, fz) if cols["off"].any()
                                         else np.full(len(parts), "", dtype=object))
    for c in PARCEL_BFE_COLUMNS:
        out[c][at] = cols[c]
    return out


def _parcel_bfe_points(parts: np.ndarray, first: pd.DataFrame, flood: gpd.GeoDataFrame | None, fz: FirmZones,
                       mixed: np.ndarray, cut: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """(points, owner, edge_points, edge_owner, capped, top): where the BFE of each parcel's SFHA part is read
    besides its point on surface (``first``: the BFE there, with the direction it rises along); the edge
    points without the ``STATIC_BFE`` of the polygons (the BFE lines' side of a static polygon's edge);
    which parcels are capped (their two extreme corners only: :func:`_off_the_cap` checks them); and how many
    of the points, the first, are the capped parts' corners farthest the way the BFE rises (the likely
    highest: read with their notes).

    Along a stream the BFE is a function of the position along it, so on a parcel whose point on surface takes
    its BFE from the stream the highest and the lowest lie, as far as the stream runs straight past it, at the
    corners of its SFHA part farthest up- and downstream: those two corners (the extremes of the corners'
    projections on the direction of the stream segment the point on surface projects onto; from the nearest
    lines, on the direction towards the nearest line) are the screening's cap (two more points a parcel, not
    all of its corners). Every corner where that does not hold: a point on surface with a static BFE or none
    (the part may reach a BFE elsewhere);
    and for a part meeting a polygon stating a ``STATIC_BFE`` or ``cut`` (partly in a zone with BFEs, partly
    in the SFHA without: zone A beside AE), the corners of its pieces in each flood zone polygon
    (:func:`_zone_pieces`: a polygon inside it, the edge between the zones) and, where it meets a static
    polygon, those of its part outside them without the static BFE (:func:`_static_edges`). A ``mixed`` part
    not ``cut`` (in no zone with BFEs) has its point on surface only, unless it meets a static polygon.

    Examples
    --------
    A part 400 ft along a stream running along x (direction (1, 0)): its two end corners, x = 0 and x = 400.

    >>> from shapely.geometry import box
    >>> first = pd.DataFrame({"bfe_method": ["interpolated_along_stream"], "bfe_dx": [1.0], "bfe_dy": [0.0]})
    >>> no = np.array([False])
    >>> pts, owner, _, _, capped, top = _parcel_bfe_points(np.array([box(0, -30, 400, 30)]), first, None,
    ...                                                    _firm_zones(None, None), no, no)
    >>> shapely.get_x(pts).tolist(), owner.tolist(), capped.tolist(), top
    ([400.0, 0.0], [0, 0], [True], 1)
    """
    xy, own = shapely.get_coordinates(parts, return_index=True)
    along = np.isfinite(first["bfe_dx"].to_numpy(dtype=float))  # interpolated: along the stream, between lines
    meets = np.zeros(len(parts), dtype=bool)
    if len(fz.zone) and fz.static.any() and flood is not None:
        si, _ = STRtree(np.asarray(flood.geometry.values[fz.static], dtype=object)).query(parts, predicate="intersects")
        meets[si] = True
    every = (~along | cut | meets) & ~(mixed & ~cut & ~meets)
    capped = along & ~every & ~mixed & PARCEL_BFE_CAP
    every |= along & ~capped & ~(mixed & ~cut & ~meets)
    # the up- and downstream extremes of the capped parts' corners
    take = capped[own]
    cx, co = xy[take], own[take]
    proj = cx[:, 0] * first["bfe_dx"].to_numpy()[co] + cx[:, 1] * first["bfe_dy"].to_numpy()[co]
    order = np.lexsort((proj, co))
    starts = np.flatnonzero(np.r_[True, co[order][1:] != co[order][:-1]]) if len(co) else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], len(co)] - 1 if len(co) else starts
    pick = order[np.concatenate([ends, starts])]  # the farthest the way the BFE rises first
    # every corner of the others (and of their pieces), each once (a ring's closing corner is its first)
    groups = [(xy[every[own]], own[every[own]])]
    sel = np.flatnonzero(cut | meets)
    if len(sel):
        sfha_polys = flood[fz.sfha | fz.static] if flood is not None else None  # no zone X polygon cut
        c, k = shapely.get_coordinates(_zone_pieces(parts[sel], sfha_polys), return_index=True)
        groups.append((c, sel[k]))
    ex, eo = _distinct(groups)
    edge_xy, edge_owner = np.zeros((0, 2)), np.zeros(0, dtype=np.int64)
    if meets.any():
        at = np.flatnonzero(meets)
        c, k = shapely.get_coordinates(_static_edges(parts[at], flood, fz)[0], return_index=True)
        edge_xy, edge_owner = _distinct([(c, at[k])])
    return (shapely.points(np.concatenate([cx[pick], ex])), np.concatenate([co[pick], eo]),
            shapely.points(edge_xy), edge_owner, capped, len(ends))


PARCEL_BFE_CAP = True
"""False: every corner of every parcel's SFHA part is read (:func:`_parcel_bfe_points`), not its two extreme
corners along the stream: in a synthetic county of 100,000 parcels with BFE lines on every river, the parcels'
BFE then takes about 1 s more (about 2.5 s, not 1.5 s)."""

CAP_TURN_COS = float(np.cos(np.radians(20.0)))
"""The cap (two extreme corners) holds where the direction the BFE varies along at the extremes is within 20
degrees of that at the point on surface (:func:`_off_the_cap`)."""

CAP_MONOTONE_FT = 0.01
"""The cap holds only where the BFE at the point on surface lies between the two extreme corners' (ft): by
more than this outside them, the BFE is not monotone across the part and every corner is read
(:func:`_off_the_cap`). A choice of where to sample, never a legal threshold."""


def _off_the_cap(first: pd.DataFrame, rest: pd.DataFrame, owner: np.ndarray, capped: np.ndarray) -> np.ndarray:
    """Which capped parcels (:func:`_parcel_bfe_points`) have every corner read after all: where the BFE need
    not be highest at the extremes along the stream, as its answers show: the direction the BFE varies along at
    an extreme corner turns from that at the point on surface by more than 20 degrees (a bend of the stream, or
    another stream nearer: ``first`` and ``rest``' ``bfe_dx, bfe_dy``; NaN, a corner with no BFE, does not
    count), or the point on surface's BFE lies outside the extremes' (by more than :data:`CAP_MONOTONE_FT`,
    0.01 ft: not monotone across the part).

    Examples
    --------
    >>> first = pd.DataFrame({"bfe_ft": [849.0, 849.0, 849.0], "bfe_dx": [1.0, 1.0, 1.0], "bfe_dy": [0.0] * 3})
    >>> rest = pd.DataFrame({"bfe_ft": [848.0, 850.0, 848.0, 850.0, 849.5, 849.8],
    ...                      "bfe_dx": [1.0, 1.0, 1.0, 0.0, 1.0, 1.0], "bfe_dy": [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]})
    >>> _off_the_cap(first, rest, np.array([0, 0, 1, 1, 2, 2]), np.array([True, True, True])).tolist()
    [False, True, True]
    """
    n = len(first)
    out = np.zeros(n, dtype=bool)
    rows = np.flatnonzero(capped[owner])
    if not len(rows):
        return out
    o = owner[rows]
    u0 = first[["bfe_dx", "bfe_dy"]].to_numpy(dtype=float)
    u = rest[["bfe_dx", "bfe_dy"]].to_numpy(dtype=float)[rows]
    turned = np.abs((u * u0[o]).sum(axis=1)) < CAP_TURN_COS  # the axis, whichever way the BFE rises; NaN: False
    out[o[turned]] = True
    ft = rest["bfe_ft"].to_numpy(dtype=float)[rows]
    lo = pd.Series(ft).groupby(o).min()
    hi = pd.Series(ft).groupby(o).max()
    mid = first["bfe_ft"].to_numpy(dtype=float)[lo.index.to_numpy()]
    outside = (mid < lo.to_numpy() - CAP_MONOTONE_FT) | (mid > hi.to_numpy() + CAP_MONOTONE_FT)  # NaN: False
    out[lo.index.to_numpy()[outside]] = True
    return out & capped


def _distinct(groups: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(xy, owner) of the points of ``groups`` (``(xy, owner)`` pairs), each point once per owner.

    Examples
    --------
    >>> xy, owner = _distinct([(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]), np.array([0, 0, 0])),
    ...                        (np.array([[0.0, 0.0]]), np.array([1]))])
    >>> xy.tolist(), owner.tolist()
    ([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]], [0, 0, 1])
    """
    xy = np.concatenate([g[0] for g in groups]) if groups else np.zeros((0, 2))
    owner = np.concatenate([g[1] for g in groups]).astype(np.int64) if groups else np.zeros(0, dtype=np.int64)
    if not len(owner):
        return np.zeros((0, 2)), owner
    key = np.unique(np.column_stack([owner.astype(float), xy]), axis=0)
    return key[:, 1:], key[:, 0].astype(np.int64)


def _parcel_bfe(b: pd.DataFrame, owner: np.ndarray, off: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Per parcel, from the BFE at its points (``b``: :func:`~geoconstraints.geometry.bfe.bfe_at_points`' rows,
    the parcel ``owner`` of each; ``off``: a point where the FIRM gives no BFE, :func:`_off_the_firm`), as
    flood-site reads a footprint's (:func:`_footprint_bfe`): ``bfe_ft`` the highest whatever its method (a lower
    static BFE at one point never replaces a higher interpolated one at another: ``above`` names it), the first
    method of :data:`~geoconstraints.geometry.bfe.BFE_METHODS` on a tie, ``bfe_lowest_ft`` the lowest; none
    (NaN) where they are in different vertical datums (never compared). Also ``row`` (the row of ``b`` giving
    the highest, -1 where none), ``note`` (its note), the counts ``sampled``, ``missing`` (points having no
    BFE, not ``off``) and ``off``, ``why`` (the note of its first point with none) and ``datums`` (their
    names where more than one).

    Examples
    --------
    >>> b = pd.DataFrame({"bfe_ft": [848.0, 850.0, np.nan, 805.0, 809.0], "bfe_method": [
    ...     "interpolated_along_stream"] * 3 + ["static", "interpolated_along_stream"], "bfe_datum": ["NAVD88"] * 5,
    ...     "bfe_note": ["a", "b", "upstream of the last line", "static", "c"]})
    >>> r = _parcel_bfe(b, np.array([0, 0, 0, 1, 1]), np.zeros(5, dtype=bool), 2)
    >>> r["bfe_ft"].tolist(), r["bfe_lowest_ft"].tolist(), r["missing"].tolist(), r["above"].tolist()
    ([850.0, 809.0], [848.0, 805.0], [1, 0], ['', 'static BFE of 805.0 ft'])
    """
    ft, method = b["bfe_ft"].to_numpy(dtype=float), b["bfe_method"].to_numpy(dtype=object)
    datum, note = b["bfe_datum"].to_numpy(dtype=object), b["bfe_note"].to_numpy(dtype=object)
    rank = pd.Series(method).map({k: i for i, k in enumerate(BFE_METHODS)}).to_numpy(dtype=np.int64)
    valid = np.isfinite(ft) & ~off
    count = functools.partial(np.bincount, minlength=n)
    r: dict[str, Any] = {"sampled": count(owner), "off": count(owner[off]),
                         "missing": count(owner[~np.isfinite(ft) & ~off]),
                         "bfe_ft": np.full(n, np.nan), "bfe_lowest_ft": np.full(n, np.nan),
                         "bfe_method": np.full(n, "none", dtype=object), "bfe_datum": np.full(n, "", dtype=object),
                         "row": np.full(n, -1), "note": np.full(n, "", dtype=object),
                         "datums": np.full(n, "", dtype=object), "above": np.full(n, "", dtype=object),
                         "why": np.full(n, "", dtype=object)}
    lacking = np.flatnonzero(~np.isfinite(ft) & ~off)
    if len(lacking):  # the first point of each parcel with no BFE: its note says why
        o, k = np.unique(owner[lacking], return_index=True)
        r["why"][o] = note[lacking[k]]
    rows = np.flatnonzero(valid)
    if not len(rows):
        return r
    o = owner[rows]
    top = rows[np.lexsort((rank[rows], -ft[rows], o))]  # per parcel: the highest first, the stronger method on a tie
    head = np.r_[True, owner[top][1:] != owner[top][:-1]]
    best, who = top[head], owner[top][head]
    r["bfe_ft"][who], r["row"][who] = ft[best], best
    r["bfe_method"][who], r["bfe_datum"][who], r["note"][who] = method[best], datum[best], note[best]
    r["bfe_lowest_ft"][who] = pd.Series(ft[rows]).groupby(o).min().loc[who].to_numpy()
    codes = pd.factorize(datum[rows])[0]
    lo_c, hi_c = (pd.Series(codes).groupby(o).agg(f).loc[who].to_numpy() for f in ("min", "max"))
    for i in who[lo_c != hi_c]:  # the few parcels across a datum boundary: never compared
        r["datums"][i] = ", ".join(sorted({d or "not stated" for d in datum[rows][o == i]}))
    split = r["datums"] != ""
    r["bfe_ft"][split], r["bfe_lowest_ft"][split], r["row"][split] = np.nan, np.nan, -1
    r["bfe_method"][split], r["bfe_datum"][split] = "none", ""
    strongest = pd.Series(rank[rows]).groupby(o).min().loc[who].to_numpy()
    for i in who[(strongest < rank[r["row"][who]]) & ~split[who]]:  # a stronger method's lower BFE elsewhere
        mine = rows[(o == i) & (rank[rows] == rank[rows][o == i].min())]
        k = mine[np.argmax(ft[mine])]
        r["above"][i] = f"{method[k].replace('_', ' ')} BFE of {ft_text(ft[k])} ft"
    return r


RANGE_SHOWN_FT = 0.05
"""The least spread of a parcel's BFE (highest less lowest, ft) its note states as a range
(:func:`_parcel_bfe_notes`): one that shows at the 0.1 ft the BFEs are printed at."""


def _parcel_bfe_notes(r: dict[str, np.ndarray], no_bfe_zones: np.ndarray) -> np.ndarray:
    """``bfe_note`` of each parcel in the SFHA from :func:`_parcel_bfe`'s ``r`` (``no_bfe_zones``: the zones
    without BFEs of its SFHA part, ``'A'``): the range where the BFE varies across it (``845.2 to 848.9 ft
    at the points read on the parcel's SFHA part; the highest read is given``), the note of the point giving the highest, a
    stronger method's lower BFE elsewhere on it, and, never left out, the points with no BFE (the BFE is not
    known on all of the part) and those where the FIRM gives none (zone A).

    Examples
    --------
    >>> r = {"bfe_ft": np.array([850.0, np.nan]), "bfe_lowest_ft": np.array([848.0, np.nan]),
    ...      "note": np.array(["interpolated", ""], dtype=object), "above": np.array(["", ""], dtype=object),
    ...      "datums": np.array(["", ""], dtype=object), "sampled": np.array([3, 3]), "missing": np.array([1, 0]),
    ...      "off": np.array([0, 3]), "why": np.array(["upstream of the last line", ""], dtype=object)}
    >>> notes = _parcel_bfe_notes(r, np.array(["", "A"], dtype=object))
    >>> print(notes[0])
    848.0 to 850.0 ft at the points read on the parcel's SFHA part; the highest read is given (interpolated); no BFE at 1 of the 3
    points sampled on the parcel's SFHA part (upstream of the last line): the BFE is not known on all of it
    >>> print(notes[1])
    no BFE on the FIRM on the parcel's SFHA part (zone A): none read off the BFE lines there is used
    """
    hi, lo = r["bfe_ft"], r["bfe_lowest_ft"]
    spread = hi - lo >= RANGE_SHOWN_FT  # a range that shows at 0.1 ft (NaN: False)
    notes = np.asarray(r["note"], dtype=object).copy()
    notes[spread] = [f"{ft_text(a)} to {ft_text(b)} ft at the points read on the parcel's SFHA part; the highest read is given ({t})"
                     for a, b, t in zip(lo[spread], hi[spread], notes[spread])]
    plain = (np.isfinite(hi) & (r["above"] == "") & (r["missing"] == 0) & (r["off"] == 0)
             & (r["datums"] == ""))
    for i in np.flatnonzero(~plain):  # the parcels with more to say: few
        known, missing, off = not np.isnan(r["bfe_ft"][i]), r["missing"][i], r["off"][i]
        zone = f"zone {no_bfe_zones[i] or 'A'}"
        if off and off == r["sampled"][i]:
            notes[i] = f"no BFE on the FIRM on the parcel's SFHA part ({zone}): none read off the BFE lines there is used"
            continue
        if r["datums"][i]:
            text = f"the BFEs at the {PARCEL_SAMPLED} are in different vertical datums ({r['datums'][i]}): not compared"
        elif not known:
            text = str(r["why"][i])  # no point has one: why, as before at the point on surface
        else:
            text = str(notes[i])  # the range and the highest's note
        if r["above"][i]:
            text += f"; above the {r['above'][i]} elsewhere on the parcel's SFHA part"
        if missing and known:
            text += (f"; no BFE at {missing} of the {r['sampled'][i]} {PARCEL_SAMPLED} ({r['why'][i]}): the BFE is not "
                     f"known on all of it")
        if off:
            text += f"; its part in {zone} has no BFE on the FIRM (none read off the BFE lines there is used)"
        notes[i] = text
    return notes


def _no_bfe_zone_names(m: pd.DataFrame | None, at: np.ndarray, mixed: np.ndarray, fz: FirmZones) -> np.ndarray:
    """The zones of the SFHA without BFEs each parcel lies in (``'A'``, ``'A, AO'``; ``''`` where none), from
    the overlay's ``flood_zones`` of the parcels ``at`` (``mixed``: those partly outside zones with BFEs)."""
    names = np.full(len(at), "", dtype=object)
    if m is None or "flood_zones" not in m:
        return names
    without = set(fz.zone[fz.sfha & ~fz.bfe_zone & ~fz.static]) if len(fz.zone) else set()
    zones = np.asarray(m["flood_zones"].to_numpy(dtype=object))[at]
    for i in np.flatnonzero(mixed):
        names[i] = ", ".join(sorted(z for z in str(zones[i]).split("; ") if z in without))
    return names


# ------------------------------------------------------------------------------------------
# a footprint's BFE (flood-site)

SITE_BFE_COLUMNS = ("bfe_ft", "bfe_method", "bfe_datum", "bfe_note", "bfe_known_ft", "bfe_known_datum",
                    "bfe_known_method", "static_bfe_sqft", "no_bfe_sqft", "no_bfe_zones")
"""The columns of :func:`site_bfe`: those of :func:`_footprint_bfe`, the area of the footprint's part in
the SFHA that lies in flood zone polygons stating a ``STATIC_BFE``, and the area and zones of its part in
the SFHA where the FIRM gives no BFE (:func:`_no_bfe_parts`)."""


def site_bfe(geoms: np.ndarray, sfha: np.ndarray, bfe_zone_sqft: np.ndarray, *,
             flood: gpd.GeoDataFrame | None, bfe_lines: gpd.GeoDataFrame | None,
             streams: gpd.GeoDataFrame | None, search_radius_ft: float, spec: FloodZoneSpec,
             firm_gives_bfe: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> pd.DataFrame:
    """The BFE of each footprint (see :func:`_footprint_bfe`) from the BFE at its corners, its centroid
    and the corners of its part in the SFHA (``sfha``: the overlay's ``_sfha`` geometries, None where
    none), so that where a footprint leaves the zone the BFE at the zone's edge is sampled too; the
    corners of that part cut along the edges of each flood zone polygon (:func:`_zone_pieces`), so that
    a polygon lying wholly inside the footprint (an island: a higher ``STATIC_BFE``, an AE area without
    a BFE) is sampled; and where its SFHA part crosses the edge of a polygon stating a ``STATIC_BFE``,
    the corners of the part outside such polygons, sampled both ways: the static BFE of the polygon they
    touch, and the BFE the BFE lines give there (the other side's BFE at the edge, else missed: an
    interpolated BFE rising towards the edge is highest on it). A footprint lying partly where the FIRM
    gives a BFE (``bfe_zone_sqft``: the overlay's area in a zone with BFEs; or a ``STATIC_BFE`` polygon)
    and partly in the SFHA where it gives none (zone A: :func:`_no_bfe_parts`) takes no BFE read off the
    BFE lines at a point of the latter (:func:`_off_the_firm`): § 6-137(d) governs that part (FLD-004),
    and the BFE lines give no BFE of the FIRM there.

    Parameters
    ----------
    geoms : array of geometries
        The footprints.
    sfha : array of geometries
        Each footprint's part in the SFHA, None where none.
    bfe_zone_sqft : array of float
        The area of each footprint in zones with BFEs (the overlay's ``bfe_zone_sqft``).
    flood, bfe_lines, streams : GeoDataFrame or None
        The ``flood_zones``, ``bfe_lines`` and ``streams`` layers (None: not given).
    search_radius_ft : float
        How far from a point a stream or BFE line is sought (FLD-003's ``bfe_search_radius_ft``).
    spec : FloodZoneSpec
        How the flood zones are read: the zones with BFEs, those of the SFHA (the rulebook's, exact).
    firm_gives_bfe : callable
        ``(bfe_zone_sqft, static_bfe_sqft) -> bool array``: whether the FIRM gives a BFE on each footprint
        (:func:`geoconstraints.rules.flood.firm_gives_bfe`, the rules' own test).

    Returns
    -------
    DataFrame
        :data:`SITE_BFE_COLUMNS`, one row per footprint (positional index).

    Examples
    --------
    A footprint 50 ft square in zone AE, 100 to 150 ft along a stream crossed by BFE lines of 848 ft at x = 0
    and 850 ft at x = 400: its BFE is the highest, at its corners at x = 150 (848.75 ft).

    >>> from shapely.geometry import LineString, box
    >>> spec = FloodZoneSpec(sfha_zones=frozenset({"A", "AE"}), undetermined_zones=frozenset({"D"}),
    ...                      unnumbered_a_zones=frozenset({"A"}), bfe_zones=frozenset({"AE"}),
    ...                      floodway_word="FLOODWAY", zone_field="FLD_ZONE", sfha_field="SFHA_TF",
    ...                      subtype_field="ZONE_SUBTY",
    ...                      sliver_tolerance_ft=0, min_overlap_sqft=0, floodway_sliver_tolerance_ft=0,
    ...                      floodway_min_overlap_sqft=0, non_sfha_zones=frozenset({"X"}))
    >>> ae = gpd.GeoDataFrame({"FLD_ZONE": ["AE"]}, geometry=[box(-300, -200, 800, 300)])
    >>> bl = gpd.GeoDataFrame({"ELEV": [848.0, 850.0], "V_DATUM": ["NAVD88"] * 2},
    ...                       geometry=[LineString([(0, -150), (0, 250)]),
    ...                                 LineString([(400, -150), (400, 250)])])
    >>> st = gpd.GeoDataFrame(geometry=[LineString([(-250, 25), (750, 25)])])
    >>> fp = np.array([box(100, 0, 150, 50)])
    >>> t = site_bfe(fp, fp, np.array([2500.0]), flood=ae, bfe_lines=bl, streams=st, search_radius_ft=5000,
    ...              spec=spec, firm_gives_bfe=lambda bfe_zone, static: (bfe_zone > 0) | (static > 0))
    >>> t[["bfe_ft", "bfe_method", "bfe_datum", "no_bfe_sqft"]].to_numpy().tolist()
    [[848.75, 'interpolated_along_stream', 'NAVD88', 0.0]]
    """
    n = len(geoms)
    sfha = np.asarray(sfha, dtype=object)
    fz = _firm_zones(flood, spec)
    edge, static_sqft = _static_edges(sfha, flood, fz)
    groups = [geoms, sfha, _zone_pieces(sfha, flood), edge]  # n geometries each; the edges last
    coords, owner = shapely.get_coordinates(np.concatenate(groups), return_index=True)
    n_edge = int((owner >= (len(groups) - 1) * n).sum())
    owner = owner % max(n, 1)  # a part's, a piece's or an edge's corners: its footprint's
    pts = np.concatenate([shapely.points(coords), shapely.centroid(geoms)])
    sample = functools.partial(bfe_at_points, bfe_lines=bfe_lines, streams=streams,
                               search_radius_ft=search_radius_ft)
    b = sample(pts, flood=flood)
    b["owner"] = np.concatenate([owner, np.arange(n)])
    b["in_bfe_zone"] = _in_bfe_zone(pts, flood, fz)
    where = pts
    if n_edge:  # the edges' corners again, without the static BFE: the BFE lines' side of the edge
        e_pts = pts[len(coords) - n_edge:len(coords)]
        e = sample(e_pts, flood=None)
        e["owner"] = owner[len(coords) - n_edge:]
        e["in_bfe_zone"] = _in_bfe_zone(e_pts, flood, fz, without_static=True)
        b = pd.concat([b, e], ignore_index=True)
        where = np.concatenate([pts, e_pts])
    no_bfe_sqft, no_bfe_zones = _no_bfe_parts(sfha, flood, fz)
    mixed = firm_gives_bfe(bfe_zone_sqft, static_sqft) & (no_bfe_sqft > 0)
    if mixed.any():
        off = mixed[b["owner"].to_numpy()] & _off_the_firm(where, b["bfe_method"].to_numpy(), flood, fz)
        b = b[~off].reset_index(drop=True)
    b["bound"] = False
    # the highest BFE the BFE lines can give anywhere on the part where they give it: an upper bound the
    # samples may not reach (past a stream's bend), or where part of it may have none, a point without one
    u = bfe_upper_bound(_lines_part(sfha, flood, fz), bfe_lines=bfe_lines, streams=streams,
                        search_radius_ft=search_radius_ft)
    has_u = np.flatnonzero(u["bound_ft"].notna().to_numpy() | u["unbounded"].to_numpy())
    if len(has_u):
        un = u["unbounded"].to_numpy()[has_u]
        b = pd.concat([b, pd.DataFrame({
            "bfe_ft": np.where(un, np.nan, u["bound_ft"].to_numpy()[has_u]),
            "bfe_method": np.where(un, "none", u["bound_method"].to_numpy()[has_u]),
            "bfe_datum": np.where(un, "", u["bound_datum"].to_numpy()[has_u]),
            "bfe_note": u["bound_note"].to_numpy()[has_u], "owner": has_u, "in_bfe_zone": True, "bound": True})],
            ignore_index=True)
    b["rank"] = b["bfe_method"].map({k: i for i, k in enumerate(BFE_METHODS)})
    found = {o: _footprint_bfe(p) for o, p in b.groupby("owner", sort=True)}
    none = (np.nan, "none", "", "the footprint has no corners: no BFE", np.nan, "", "none")
    out = pd.DataFrame([found.get(i, none) for i in range(n)], columns=list(SITE_BFE_COLUMNS[:7]))
    note = out["bfe_note"].to_numpy(dtype=object)
    for i in np.flatnonzero(mixed):  # a handful of proposed footprints
        note[i] += (f"; its part in zone {no_bfe_zones[i]} has no BFE on the FIRM (none read off the BFE lines there "
                    f"is used): FLD-004 applies to that part")
    out["bfe_note"] = note
    out["static_bfe_sqft"] = static_sqft
    out["no_bfe_sqft"], out["no_bfe_zones"] = no_bfe_sqft, no_bfe_zones
    return out


def _no_bfe_parts(sfha: np.ndarray, flood: gpd.GeoDataFrame | None,
                  fz: FirmZones) -> tuple[np.ndarray, np.ndarray]:
    """(sqft, zones) per footprint: the area of its SFHA part where the FIRM gives no BFE (§ 6-137(d)):
    in flood zone polygons of the SFHA of no zone with BFEs and stating no ``STATIC_BFE`` (zone A; AO,
    A99, ...), outside every polygon that gives one; and those polygons' zones (``'A'``; ``''`` where
    none). A polygon merely touching the part adds nothing."""
    sqft = np.zeros(len(sfha))
    names = np.full(len(sfha), "", dtype=object)
    if flood is None or not len(flood):
        return sqft, names
    gives = fz.bfe_zone | fz.static
    without = np.flatnonzero(fz.sfha & ~gives)
    if not len(without):
        return sqft, names
    polys = np.asarray(flood.geometry.values, dtype=object)
    zone = fz.zone
    si, pi = STRtree(polys[without]).query(sfha, predicate="intersects")
    giving = polys[gives]
    tree = STRtree(giving) if len(giving) else None
    for i in np.unique(si):  # a handful of proposed footprints
        near = without[pi[si == i]]
        hit = shapely.area(shapely.intersection(sfha[i], polys[near])) > 0
        if not hit.any():
            continue
        part = shapely.intersection(sfha[i], shapely.union_all(polys[near[hit]]))
        if tree is not None:
            g = tree.query(sfha[i], predicate="intersects")
            if len(g):
                part = shapely.difference(part, shapely.union_all(giving[g]))
        sqft[i] = float(shapely.area(part))
        names[i] = ", ".join(sorted(set(zone[near[hit]]))) if sqft[i] > 0 else ""
    return sqft, names


def _off_the_firm(pts: np.ndarray, method: np.ndarray, flood: gpd.GeoDataFrame | None,
                  fz: FirmZones) -> np.ndarray:
    """Which samples are no BFE of the FIRM on a footprint lying partly where the FIRM gives none: a
    BFE read off the BFE lines (or none) at a point in (or on the edge of) an SFHA polygon giving no
    BFE (zone A, :func:`_no_bfe_parts`) and in no polygon of a zone with BFEs taking its BFE from the
    BFE lines. A static BFE is the polygon's own; a point on the edge between zone A and AE keeps the
    AE BFE; a point outside the SFHA (zone X) is not affected."""
    if flood is None or not len(flood):
        return np.zeros(len(pts), dtype=bool)
    in_a = _on_polygons(pts, flood, fz.sfha & ~fz.bfe_zone & ~fz.static)
    return (method != "static") & in_a & ~_in_bfe_zone(pts, flood, fz, without_static=True)


def _on_polygons(pts: np.ndarray, flood: gpd.GeoDataFrame, which: np.ndarray) -> np.ndarray:
    """Whether each point lies in (or on the edge of) one of the flood zone polygons ``which`` (a mask)."""
    inside = np.zeros(len(pts), dtype=bool)
    if which.any():
        hit, _ = STRtree(np.asarray(flood.geometry.values[which], dtype=object)).query(pts, predicate="intersects")
        inside[hit] = True
    return inside


def _zone_pieces(sfha: np.ndarray, flood: gpd.GeoDataFrame | None) -> np.ndarray:
    """Per footprint: its SFHA part cut along the edges of every flood zone polygon it meets, the
    polygonal parts of its intersection with each polygon in one collection (None where none), whose
    corners are sampled: a polygon lying wholly inside the footprint, touching none of its corners (an
    AE area in zone A, a polygon stating a higher ``STATIC_BFE``), is otherwise never sampled. A polygon
    merely touching the part (a line or point in common) adds nothing."""
    out = np.full(len(sfha), None, dtype=object)
    if flood is None or not len(flood):
        return out
    polys = np.asarray(flood.geometry.values, dtype=object)
    si, pi = STRtree(polys).query(sfha, predicate="intersects")
    if not len(si):
        return out
    parts, k = shapely.get_parts(shapely.intersection(sfha[si], polys[pi]), return_index=True)
    areal = (shapely.get_type_id(parts) == 3) & (shapely.area(parts) > 0)
    parts, owner = parts[areal], si[k[areal]]
    for i in np.unique(owner):  # a handful of proposed footprints
        out[i] = shapely.geometrycollections(parts[owner == i])
    return out


def _lines_part(sfha: np.ndarray, flood: gpd.GeoDataFrame | None, fz: FirmZones) -> np.ndarray:
    """Per footprint: the polygonal parts of its SFHA part in flood zone polygons of a zone with BFEs stating
    no ``STATIC_BFE`` (where the BFE lines give the BFE), one collection each (None where none). Where such a
    polygon overlaps one stating a ``STATIC_BFE`` the overlap is kept: a larger area only raises the bound."""
    out = np.full(len(sfha), None, dtype=object)
    which = fz.bfe_zone & ~fz.static
    if flood is None or not which.any():
        return out
    polys = np.asarray(flood.geometry.values[which], dtype=object)
    si, pi = STRtree(polys).query(sfha, predicate="intersects")
    if not len(si):
        return out
    parts = shapely.intersection(sfha[si], polys[pi])
    areal = shapely.area(parts) > 0
    if not areal.any():
        return out
    order = np.argsort(si[areal], kind="stable")
    return shapely.geometrycollections(parts[areal][order], indices=si[areal][order], out=out)


def _static_edges(sfha: np.ndarray, flood: gpd.GeoDataFrame | None, fz: FirmZones) -> tuple[np.ndarray, np.ndarray]:
    """(edge, sqft) per footprint: its SFHA part outside the polygons stating a ``STATIC_BFE``, where
    that part meets such a polygon (None elsewhere: nothing more to sample), and the area of its SFHA
    part inside them."""
    edge = np.full(len(sfha), None, dtype=object)
    sqft = np.zeros(len(sfha))
    has = fz.static
    if flood is None or not has.any():
        return edge, sqft
    polys = np.asarray(flood.geometry.values[has], dtype=object)
    si, pi = STRtree(polys).query(sfha, predicate="intersects")
    for i in np.unique(si):  # a handful of proposed footprints
        static = shapely.union_all(polys[pi[si == i]])
        sqft[i] = shapely.area(shapely.intersection(sfha[i], static))
        rest = shapely.difference(sfha[i], static)
        if not shapely.is_empty(rest):
            edge[i] = rest
    return edge, sqft


def _in_bfe_zone(pts: np.ndarray, flood: gpd.GeoDataFrame | None, fz: FirmZones, *,
                 without_static: bool = False) -> np.ndarray:
    """Whether each point lies in (or on the edge of) a flood zone polygon of a zone with BFEs on the
    FIRM (FLD-006 ``bfe_zones``: AE, AH, A1-A30, VE, V1-V30); ``without_static``: one stating no
    ``STATIC_BFE`` (its BFE comes from the BFE lines)."""
    if flood is None or not len(flood):
        return np.zeros(len(pts), dtype=bool)
    return _on_polygons(pts, flood, fz.bfe_zone & ~fz.static if without_static else fz.bfe_zone)


SITE_SAMPLED = "corners, centroid and the corners of its parts in each flood zone polygon"
"""The points a footprint's BFE is sampled at (:func:`site_bfe`), as its notes name them."""


def _footprint_bfe(p: pd.DataFrame) -> tuple[float, str, str, str, float, str, str]:
    """(bfe_ft, bfe_method, bfe_datum, bfe_note, bfe_known_ft, bfe_known_datum, bfe_known_method) of one
    footprint from its samples and the bound of the BFE the BFE lines give on it.

    The BFE is the highest the footprint can reach: the highest ``bfe_ft`` of the points whatever its method
    (conservative: a lower ``STATIC_BFE`` at one corner never replaces a higher interpolated BFE at another),
    or where the BFE lines can give more elsewhere on it (a row with ``bound`` True:
    :func:`~geoconstraints.geometry.bfe.bfe_upper_bound`; past a stream's bend the highest point need not be
    sampled) that upper bound, with ``bfe_known_ft`` the highest sampled (the BFE lies between the two). The
    method, datum and note are those of the row giving it (the first method of
    :data:`~geoconstraints.geometry.bfe.BFE_METHODS` on a tie). Not determined (NaN, ``none``, the note says
    why) when a point in a BFE zone has no BFE or the bound says part of the footprint may have none (that
    part's BFE may be higher than the rest's: the rest gives only a lower bound), or when the BFEs are in
    different vertical datums (never compared). ``bfe_known_ft`` is the highest BFE reached at a sample
    point, in ``bfe_known_datum``, found by ``bfe_known_method``: the BFE itself where a sample reaches the
    bound, else a lower bound of it (NaN and ``none`` when nothing is known or the datums differ).

    Parameters
    ----------
    p : DataFrame
        :func:`~geoconstraints.geometry.bfe.bfe_at_points`' rows of the footprint's corners and
        centroid, with ``rank`` (position of the method in ``BFE_METHODS``) and ``in_bfe_zone``; and
        optionally ``bound`` (True on the rows of the upper bound: its value, or NaN where part of the
        footprint may have no BFE).

    Examples
    --------
    >>> p = pd.DataFrame({"bfe_ft": [805.0, 809.4, np.nan], "bfe_method": ["static", "interpolated_along_stream",
    ...                   "none"], "rank": [0, 1, 3], "bfe_datum": ["NAVD88", "NAVD88", ""],
    ...                   "bfe_note": ["static BFE", "interpolated", "upstream of the last BFE line"],
    ...                   "in_bfe_zone": [True, True, False]})
    >>> _footprint_bfe(p)[:3]
    (809.4, 'interpolated_along_stream', 'NAVD88')
    >>> p.loc[2, "in_bfe_zone"] = True  # the point with no BFE lies in the BFE zone
    >>> bfe, method, _, note, known, _, known_method = _footprint_bfe(p)
    >>> bfe, method, known, known_method
    (nan, 'none', 809.4, 'interpolated_along_stream')
    >>> print(note)
    part of the footprint in a BFE zone has no BFE (upstream of the last BFE line); elsewhere on the
    footprint the BFE reaches 809.4 ft, so the site's BFE is at least that

    Where the BFE lines can give more than any sample point (810.1 ft), that bound is the BFE:

    >>> p.loc[2, "in_bfe_zone"] = False
    >>> up = pd.DataFrame({"bfe_ft": [810.1], "bfe_method": ["interpolated_along_stream"], "rank": [1],
    ...                    "bfe_datum": ["NAVD88"], "bfe_note": ["the lines' highest"], "in_bfe_zone": [True],
    ...                    "bound": [True]})
    >>> bfe, method, _, note, known, _, _ = _footprint_bfe(pd.concat([p.assign(bound=False), up]))
    >>> bfe, method, known
    (810.1, 'interpolated_along_stream', 809.4)
    """
    bound = p["bound"].to_numpy(dtype=bool) if "bound" in p.columns else np.zeros(len(p), dtype=bool)
    up, p = p[bound], p[~bound]
    has = p[p["bfe_ft"].notna()]
    if not len(has):
        if not len(p):
            return np.nan, "none", "", "the footprint has no corners: no BFE", np.nan, "", "none"
        return (np.nan, "none", "", (f"highest over the footprint's {SITE_SAMPLED} "
                                     f"({p['bfe_note'].iloc[0]})"),
                np.nan, "", "none")
    datums = sorted(set(has["bfe_datum"]))
    top = has.sort_values(["bfe_ft", "rank"], ascending=[False, True], kind="stable").iloc[0]
    known, known_datum, known_method = ((float(top["bfe_ft"]), datums[0], str(top["bfe_method"])) if len(datums) == 1
                                        else (np.nan, "", "none"))
    lacking = p[p["in_bfe_zone"].to_numpy() & p["bfe_ft"].isna().to_numpy()]
    maybe = up[up["bfe_ft"].isna()]
    if len(lacking) or len(maybe):
        why = "; ".join(dict.fromkeys([*lacking["bfe_note"], *maybe["bfe_note"]]))
        return np.nan, "none", "", (f"part of the footprint in a BFE zone {'has' if len(lacking) else 'may have'} "
                                    f"no BFE ({why}); elsewhere on the footprint the BFE reaches "
                                    f"{ft_text(has['bfe_ft'].max())} ft, so the site's BFE is at least that"), \
            known, known_datum, known_method
    if len(datums) > 1:
        return np.nan, "none", "", (f"the BFEs at the footprint's {SITE_SAMPLED} are in different vertical "
                                    f"datums ({', '.join(d or 'not stated' for d in datums)}): not compared"), \
            np.nan, "", "none"
    better = has[has["rank"] < top["rank"]].sort_values("rank", kind="stable")
    above = "" if not len(better) else (f"; above the {better.iloc[0]['bfe_method'].replace('_', ' ')} BFE of "
                                        f"{ft_text(better.iloc[0]['bfe_ft'])} ft elsewhere on the footprint")
    if len(up) and float(up["bfe_ft"].max()) > known + LENGTH_NOISE_FT:  # the samples may miss the highest point
        u = up.sort_values("bfe_ft", ascending=False, kind="stable").iloc[0]
        if u["bfe_datum"] != known_datum:
            return np.nan, "none", "", (f"the BFE lines give the footprint up to {ft_text(u['bfe_ft'])} ft "
                                        f"({u['bfe_datum'] or 'datum not stated'}) and its {SITE_SAMPLED} "
                                        f"{ft_text(known)} ft ({known_datum or 'datum not stated'}): different "
                                        f"vertical datums, not compared"), np.nan, "", "none"
        return (float(u["bfe_ft"]), str(u["bfe_method"]), str(u["bfe_datum"]),
                (f"at most {ft_text(u['bfe_ft'])} ft, the highest the BFE can reach on the footprint "
                 f"({u['bfe_note']}); at least {ft_text(known)} ft, the highest at its {SITE_SAMPLED} "
                 f"({top['bfe_note']}){above}"),
                known, known_datum, known_method)
    note = (f"the highest the BFE can reach on the footprint, at one of its {SITE_SAMPLED} "
            f"({top['bfe_note']}){above}")
    return (float(top["bfe_ft"]), str(top["bfe_method"]), str(top["bfe_datum"]), note, float(top["bfe_ft"]),
            str(top["bfe_datum"]), str(top["bfe_method"]))
