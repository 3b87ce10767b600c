"""The overlay engine: exact areas of intersection of many subjects with dissolved, tiled cover
polygons (flood zones, corridors, districts), with sliver and coverage handling; distances to lines.

Cover polygons are dissolved per key (so overlapping polygons are never counted twice), cut into
small disjoint tiles like PostGIS ``ST_Subdivide`` (at most :data:`TILE_MAX_VERTICES` vertices and
a few dozen subjects across, so no subject is ever intersected with a county-sized polygon),
indexed once in an STRtree and intersected with the subjects on aligned arrays
(:func:`overlay_areas`). Subjects are sorted along a Hilbert curve and measured in chunks on a
pool of threads (shapely releases the GIL). Overlaps thinner than a sliver tolerance or smaller
than a minimum area are reported as slivers, not as "in" the zone.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from shapely import STRtree

from geoconstraints.errors import InputError
from geoconstraints.parallel import Background, parallel_map
from geoconstraints.text import is_blank
from geoconstraints.units import REL_NOISE, SQFT_PER_ACRE, at_least, number_problem, under_limit

log = logging.getLogger(__name__)

TILE_MAX_VERTICES = 256
"""A cover tile has at most this many vertices (as ``ST_Subdivide(geom, 256)``)."""

TILE_SPAN_SUBJECTS = 32.0
"""A cover tile is at most this many typical subjects wide (see :func:`tile_span`)."""

CHUNK_SIZE = 20_000
"""Subjects per chunk in :func:`overlay_areas` (chunks are spatially compact and run on threads)."""

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


NULL_SUBTYPE_TEXTS: frozenset[str] = frozenset({"<NULL>", "NULL", "-9999"})
"""``ZONE_SUBTY`` texts that stand for no value (upper case): a GIS export writing a null as the text ``<Null>``
(343 polygons of FEMA's national flood hazard layer do), or FIRM's numeric null ``-9999`` written into a text
field. Read as blank, as the FIRM Database's text null ``""`` is: not a subtype FEMA's domain could hold."""


def subtype_texts(values: pd.Series) -> pd.Series:
    """A ``ZONE_SUBTY`` column as the FLD rules read it: stripped, upper case, ``""`` where blank or a
    :data:`NULL_SUBTYPE_TEXTS` text.

    Examples
    --------
    >>> subtype_texts(pd.Series([" Floodway", "<Null>", "-9999", None, "1100"])).tolist()
    ['FLOODWAY', '', '', '', '1100']
    """
    sub = norm_text(values)
    return sub.mask(sub.isin(NULL_SUBTYPE_TEXTS), "")


@dataclass(frozen=True)
class FloodZoneSpec:
    """How to read an NFHL flood zone layer and when an overlap counts (from the FLD rules).

    Attributes
    ----------
    sfha_zones, undetermined_zones, unnumbered_a_zones, bfe_zones : frozenset of str
        Zone names (upper case, ranges expanded with :func:`expand_zone_list`).
    non_sfha_zones : frozenset of str
        Mapped zones outside the SFHA (X, B, C ...). A zone in none of ``sfha_zones``,
        ``non_sfha_zones`` and ``undetermined_zones`` is unknown: undetermined, never "no hazard".
    floodway_word : str
        ``ZONE_SUBTY`` text that marks the regulatory floodway (``FLOODWAY``).
    zone_field, sfha_field, subtype_field : str
        Field names of the zone, the SFHA flag and the zone subtype.
    sliver_tolerance_ft, min_overlap_sqft : float
        An overlap thinner than the tolerance or smaller than the area is a sliver.
    floodway_sliver_tolerance_ft, floodway_min_overlap_sqft : float
        The same for the floodway (and the encroachment areas).
    encroachment_words : tuple of str
        ``ZONE_SUBTY`` texts that mark a polygon as floodway-like but not the floodway (FLD-002's
        ``encroachment_subtypes_contain``: ``ENCROACHMENT`` for NFHL's COMMUNITY / STATE ENCROACHMENT
        AREA, ``FLOWAGE EASEMENT`` and ``DENSITY FRINGE`` for its FLOWAGE EASEMENT AREA and DENSITY
        FRINGE AREA): whether the floodway's provisions apply there is not decided (FLD-002). The name
        says encroachment for all of them (the first kind read). Empty: no polygon is one.
    known_subtypes : frozenset of str or None
        Every ``ZONE_SUBTY`` text the rulebook knows (FLD-002's ``known_subtypes``: FEMA's D_Zone_Subtype
        domain, upper case). An SFHA polygon whose subtype is none of them, nor floodway nor floodway-like, is
        read as floodway not determined (``odd_subtype``), never as "no floodway": a misspelt ``FLODWAY`` or a
        county's own code. None: every text is known (a rulebook without the list).
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
    non_sfha_zones: frozenset[str] = frozenset()
    encroachment_words: tuple[str, ...] = ()
    known_subtypes: frozenset[str] | None = None

    @property
    def tolerances(self) -> tuple[dict[str, float], dict[str, float]]:
        """Sliver tolerance and minimum area per cover key (``"*"`` for every key but the floodway and the
        encroachment areas, which have the floodway's; see :meth:`key_tolerances` for the keys per subtype)."""
        return ({"*": self.sliver_tolerance_ft, "_floodway": self.floodway_sliver_tolerance_ft,
                 "_encroachment": self.floodway_sliver_tolerance_ft},
                {"*": self.min_overlap_sqft, "_floodway": self.floodway_min_overlap_sqft,
                 "_encroachment": self.floodway_min_overlap_sqft})

    def key_tolerances(self, keys: Iterable[str]) -> tuple[dict[str, float], dict[str, float]]:
        """:attr:`tolerances` with those of the floodway for the ``keys`` of :data:`ENCROACHMENT_PREFIX`
        (one per encroachment subtype, measured to name the subtype a subject is in)."""
        tol, mins = self.tolerances
        enc = [k for k in keys if k.startswith(ENCROACHMENT_PREFIX)]
        return ({**tol, **dict.fromkeys(enc, self.floodway_sliver_tolerance_ft)},
                {**mins, **dict.fromkeys(enc, self.floodway_min_overlap_sqft)})


SUBTYPE_CODE = re.compile(r"\d+(\.0+)?")
"""A ``ZONE_SUBTY`` value that is one of FEMA's domain codes (D_Zone_Subtype: ``1100`` for FLOODWAY, ``1210``
for STATE ENCROACHMENT AREA), not its text: a bare whole number (``1100.0`` as a float field writes it)."""


def subtype_problem(flood: pd.DataFrame | None, field: str = "ZONE_SUBTY") -> tuple[str, tuple[str, ...]]:
    """Why a flood layer's zone subtypes cannot tell the floodway from the rest of the SFHA, and its coded values.

    No text of the rulebook's lists (FLOODWAY, ENCROACHMENT ...) can match a subtype that is not there or a code,
    so the whole layer's floodway is unread: not "no floodway".

    Parameters
    ----------
    flood : DataFrame or None
        The whole flood zone layer (not a part of it: a part with no subtype may lie beside a floodway).
    field : str
        The subtype field (``ZONE_SUBTY``).

    Returns
    -------
    tuple of (str, tuple of str)
        ``""`` (the subtypes are read), ``"missing"`` (no layer or no field), ``"blank"`` (no value on any
        polygon: a stripped export) or ``"coded"`` (any value is a :data:`SUBTYPE_CODE`: FEMA's domain codes
        instead of their text); and the coded values, sorted, at most five.

    Examples
    --------
    >>> f = pd.DataFrame({"ZONE_SUBTY": ["FLOODWAY", None, " ", "<Null>"]})
    >>> subtype_problem(f), subtype_problem(f.iloc[1:]), subtype_problem(f, "SUBTYPE")
    (('', ()), ('blank', ()), ('missing', ()))
    >>> subtype_problem(pd.DataFrame({"ZONE_SUBTY": ["FLOODWAY", "1210", "1100.0", None]}))
    ('coded', ('1100.0', '1210'))
    """
    if flood is None or field not in flood.columns:
        return "missing", ()
    col = flood[field]
    given = col[~col.map(is_blank)].astype(str).str.strip()
    given = given[~given.str.upper().isin(NULL_SUBTYPE_TEXTS)]
    if not len(given):
        return "blank", ()
    coded = sorted(set(given[given.str.fullmatch(SUBTYPE_CODE.pattern)]))
    return ("coded", tuple(coded[:5])) if coded else ("", ())


ENCROACHMENT_PREFIX = "encroachment:"
"""Cover key prefix of the encroachment polygons of one ``ZONE_SUBTY`` text (``encroachment:STATE
ENCROACHMENT AREA``), as ``zone:`` is of one ``FLD_ZONE``."""


def classify_flood_zones(flood: pd.DataFrame, spec: FloodZoneSpec, *,
                         whole: pd.DataFrame | None = None) -> pd.DataFrame:
    """Classify NFHL flood zone records for the FLD rules (one row per record, same index).

    Parameters
    ----------
    flood : DataFrame
        NFHL ``S_FLD_HAZ_AR`` records with the zone field and optional SFHA flag and subtype.
    spec : FloodZoneSpec
        Zone lists and field names.
    whole : DataFrame, optional
        The whole layer ``flood`` is a part of (a map's view): whether its subtypes are read is the
        whole layer's (:func:`subtype_problem`). Default: ``flood`` itself.

    Returns
    -------
    DataFrame
        ``zone`` (upper case), booleans ``unknown`` (a zone in none of the spec's lists, e.g.
        ``ZONE AE`` or a coded value, and not flagged ``SFHA_TF = 'T'``), ``undetermined`` (zone D,
        AREA NOT INCLUDED, unknown, or blank and not flagged ``SFHA_TF = 'T'``: not "no hazard"), ``covered``
        (= not undetermined),
        ``sfha`` (zone in ``sfha_zones`` or ``SFHA_TF = 'T'``, never when undetermined),
        ``floodway`` (subtype contains FLOODWAY), ``encroachment`` (subtype contains one of the spec's
        ``encroachment_words`` and not FLOODWAY, never when undetermined: floodway-like, whether the
        floodway's provisions apply not decided; and every ``odd_subtype`` polygon), ``odd_subtype`` (an SFHA
        polygon whose subtype is none of the spec's ``known_subtypes`` nor floodway nor floodway-like:
        floodway not determined), ``unnumbered_a``, ``bfe_zone``, ``subtype``
        (the ``ZONE_SUBTY`` text, upper case, ``""`` where blank, a :data:`NULL_SUBTYPE_TEXTS` text or the
        field is missing),
        ``subtype_unread`` (the same on every row: the layer's subtypes cannot tell the floodway,
        :func:`subtype_problem`: no field, no value on any polygon, or FEMA's domain codes) and
        ``floodway_unknown`` (``subtype_unread`` and ``sfha``: whether the polygon is floodway is not
        known, never "no floodway").

    Examples
    --------
    >>> spec = FloodZoneSpec(sfha_zones=frozenset({"AE"}), undetermined_zones=frozenset({"D"}),
    ...                      unnumbered_a_zones=frozenset(), bfe_zones=frozenset({"AE"}), floodway_word="FLOODWAY",
    ...                      zone_field="FLD_ZONE", sfha_field="SFHA_TF", subtype_field="ZONE_SUBTY",
    ...                      sliver_tolerance_ft=1, min_overlap_sqft=100, floodway_sliver_tolerance_ft=1,
    ...                      floodway_min_overlap_sqft=100, non_sfha_zones=frozenset({"X"}))
    >>> c = classify_flood_zones(pd.DataFrame({"FLD_ZONE": ["AE", "X", "D", "Zone AE", "AR", None],
    ...                                        "SFHA_TF": [None, None, None, None, "T", None]}), spec)
    >>> c[["unknown", "undetermined", "sfha"]].to_numpy().tolist()  # doctest: +NORMALIZE_WHITESPACE
    [[False, False, True], [False, False, False], [False, True, False], [True, True, False],
     [False, False, True], [False, True, False]]

    NFHL's STATE and COMMUNITY ENCROACHMENT AREA subtypes do not contain FLOODWAY: with
    ``encroachment_words`` they are encroachment areas, never read as "not floodway" unnoticed.

    >>> from dataclasses import replace
    >>> sub = ["FLOODWAY", "STATE ENCROACHMENT AREA", " community encroachment area", None, "ENCROACHMENT"]
    >>> f = pd.DataFrame({"FLD_ZONE": ["AE", "AE", "AE", "AE", "D"], "ZONE_SUBTY": sub})
    >>> c = classify_flood_zones(f, replace(spec, encroachment_words=("ENCROACHMENT",)))
    >>> c[["floodway", "encroachment"]].to_numpy().tolist()  # doctest: +NORMALIZE_WHITESPACE
    [[True, False], [False, True], [False, True], [False, False], [False, False]]
    >>> c["subtype"].tolist()[:3], bool(classify_flood_zones(f, spec)["encroachment"].any())
    (['FLOODWAY', 'STATE ENCROACHMENT AREA', 'COMMUNITY ENCROACHMENT AREA'], False)
    >>> bool(c["subtype_unread"].any())
    False

    With the rulebook's list of FEMA's subtypes, an SFHA subtype it does not hold is floodway not determined
    (with the floodway-like areas), never "no floodway"; the null text ``<Null>`` is no subtype:

    >>> f = pd.DataFrame({"FLD_ZONE": ["AE", "AE", "AE", "X"],
    ...                   "ZONE_SUBTY": ["FLODWAY", "<Null>", "RIVERINE FLOODPLAIN", "FLODWAY"]})
    >>> c = classify_flood_zones(f, replace(spec, known_subtypes=frozenset({"RIVERINE FLOODPLAIN"})))
    >>> c[["floodway", "encroachment", "odd_subtype"]].to_numpy().tolist()  # doctest: +NORMALIZE_WHITESPACE
    [[False, True, True], [False, False, False], [False, False, False], [False, False, False]]

    A layer whose ZONE_SUBTY holds FEMA's domain codes (or no value, or no such field) tells no floodway: its
    SFHA polygons are ``floodway_unknown``, not "no floodway".

    >>> c = classify_flood_zones(pd.DataFrame({"FLD_ZONE": ["AE", "AE", "X"], "ZONE_SUBTY": ["1100", None, None]}),
    ...                          spec)
    >>> c[["floodway", "subtype_unread", "floodway_unknown"]].to_numpy().tolist()
    [[False, True, True], [False, True, True], [False, True, False]]
    """
    if spec.zone_field not in flood.columns:
        raise InputError(f"flood zones: field {spec.zone_field} missing; map the flood zone field to "
                         f"{spec.zone_field} in a project file")
    zone = norm_text(flood[spec.zone_field])
    flag = (norm_text(flood[spec.sfha_field]).str[:1] if spec.sfha_field in flood.columns
            else pd.Series("", index=flood.index))
    # a zone the rulebook does not know is not "no hazard" (an older FIRM's "ZONE AE", "UNDES", a coded
    # value): undetermined, unless the layer itself flags it SFHA
    unknown = ~zone.isin(spec.sfha_zones | spec.non_sfha_zones | spec.undetermined_zones) & (zone != "") & (flag != "T")
    # a blank zone is undetermined too, unless the layer flags it SFHA (the flag read as given, as for a zone
    # value the rulebook does not know)
    undetermined = zone.isin(spec.undetermined_zones) | ((zone == "") & (flag != "T")) | unknown
    sfha = (zone.isin(spec.sfha_zones) | (flag == "T")) & ~undetermined
    sub = (subtype_texts(flood[spec.subtype_field]) if spec.subtype_field in flood.columns
           else pd.Series("", index=flood.index))
    floodway = sub.str.contains(spec.floodway_word.upper(), regex=False) & ~undetermined
    # floodway-like subtypes whose reading the rulebook leaves open (NFHL's STATE / COMMUNITY ENCROACHMENT
    # AREA, FLOWAGE EASEMENT AREA, DENSITY FRINGE AREA): not the floodway, and not "no floodway" either
    encroachment = pd.Series(False, index=flood.index)
    for word in spec.encroachment_words:
        if str(word).strip():
            encroachment |= sub.str.contains(str(word).strip().upper(), regex=False)
    encroachment &= ~floodway & ~undetermined
    unread = subtype_problem(flood if whole is None else whole, spec.subtype_field)[0] != ""
    # an SFHA subtype the rulebook's list of FEMA's values does not hold (a misspelt FLODWAY, a county's own
    # code) may be the floodway: read as floodway not determined, with the floodway-like areas
    odd = pd.Series(False, index=flood.index)
    if spec.known_subtypes is not None and not unread:
        odd = sfha & (sub != "") & ~floodway & ~encroachment & ~sub.isin(spec.known_subtypes)
    return pd.DataFrame({
        "zone": zone, "unknown": unknown, "undetermined": undetermined, "covered": ~undetermined, "sfha": sfha,
        "floodway": floodway, "encroachment": encroachment | odd, "odd_subtype": odd,
        "unnumbered_a": zone.isin(spec.unnumbered_a_zones) & sfha,
        "bfe_zone": zone.isin(spec.bfe_zones) & sfha,
        "subtype": sub,
        "subtype_unread": pd.Series(unread, index=flood.index, dtype=bool),
        "floodway_unknown": sfha & unread,
    }, index=flood.index)


# ------------------------------------------------------------------------------------------
# the overlay engine

def _polygon_parts(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Polygon parts of ``geoms`` and the index of the geometry each came from."""
    parts, idx = shapely.get_parts(np.asarray(geoms, dtype=object), return_index=True)
    keep = np.isin(shapely.get_type_id(parts), POLYGON_TYPES) & ~shapely.is_empty(parts)
    return parts[keep], idx[keep]


def _single_polygons(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every polygon inside ``geoms`` (multipolygons and collections opened to any depth)."""
    parts, idx = np.asarray(geoms, dtype=object), np.arange(len(geoms))
    for _ in range(8):
        multi = ~np.isin(shapely.get_type_id(parts), (0, 1, 2, 3)) & ~shapely.is_missing(parts)
        if not multi.any():
            break
        sub, j = shapely.get_parts(parts[multi], return_index=True)
        parts = np.concatenate([parts[~multi], sub])
        idx = np.concatenate([idx[~multi], idx[np.flatnonzero(multi)[j]]])
    keep = (shapely.get_type_id(parts) == 3) & ~shapely.is_empty(parts)
    return parts[keep], idx[keep]


def tile_span(subjects: np.ndarray, factor: float = TILE_SPAN_SUBJECTS) -> float:
    """Largest tile width for ``subjects``: ``factor`` times their median bounding-box width (ft).

    Few subjects then cross a tile edge (about ``2 / factor`` of them), and none is intersected
    with a polygon much larger than itself. ``inf`` when there are no subjects.
    """
    geoms = np.asarray(subjects, dtype=object)
    b = shapely.bounds(geoms[~(shapely.is_missing(geoms) | shapely.is_empty(geoms))])
    if not len(b):
        return math.inf
    width = np.maximum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1])
    return float(factor * max(float(np.median(width)), 1.0))


def _tile(parts: np.ndarray, max_vertices: int = TILE_MAX_VERTICES, max_span: float = math.inf,
          max_rounds: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Cut polygons into tiles of at most ``max_vertices`` vertices and ``max_span`` ft across.

    Like PostGIS ``ST_Subdivide``: a piece over either limit is cut in two at the middle of the
    longer side of its bounds, and the halves are cut again while they are over a limit. Tiles
    are disjoint polygons and together have the area of the input. Each round is one vectorized
    intersection of the pieces still too large with their two half boxes, so a county-wide
    polygon of V vertices costs about V log V, never a grid of boxes each cut from all of it.
    Returns the tiles and the index of the part each came from.
    """
    pieces, origin = _single_polygons(parts)
    done, done_origin = [], []
    for _ in range(max_rounds):
        b = shapely.bounds(pieces)
        w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
        big = (shapely.get_num_coordinates(pieces) > max_vertices) | (np.maximum(w, h) > max_span)
        done.append(pieces[~big])
        done_origin.append(origin[~big])
        pieces, origin, b, w, h = pieces[big], origin[big], b[big], w[big], h[big]
        if not len(pieces):
            break
        wide = w >= h
        mx, my = (b[:, 0] + b[:, 2]) / 2.0, (b[:, 1] + b[:, 3]) / 2.0
        low = shapely.box(b[:, 0], b[:, 1], np.where(wide, mx, b[:, 2]), np.where(wide, b[:, 3], my))
        high = shapely.box(np.where(wide, mx, b[:, 0]), np.where(wide, b[:, 1], my), b[:, 2], b[:, 3])
        halves = shapely.intersection(np.concatenate([pieces, pieces]), np.concatenate([low, high]))
        pieces, j = _single_polygons(halves)
        origin = np.concatenate([origin, origin])[j]
    done.append(pieces)  # anything left after max_rounds (never seen in practice)
    done_origin.append(origin)
    return np.concatenate(done), np.concatenate(done_origin).astype(np.int64)


@dataclass
class CoverIndex:
    """Polygons dissolved per key, cut into small disjoint tiles and indexed (STRtree).

    Build it once with :meth:`build` and intersect any number of subjects with it. Keys whose
    dissolved polygons are the same shape (``zone:AE`` and ``_sfha`` when every SFHA polygon is
    AE) share one *cover*: it is tiled and intersected once and reported under each key.

    Attributes
    ----------
    keys : list of str
    parts : array of Polygon
        The tiles (at most ``max_vertices`` vertices and ``max_span`` ft across).
    part_cover : array of int
        The cover of each tile.
    cover_keys : list of array of int
        The key codes (into ``keys``) of each cover.
    tree : STRtree
        Of ``parts``; built on construction, read-only afterwards (shared by threads).
    edges : STRtree or None
        Of the 2-point segments of the covers' outlines (their real edges, not the cuts between
        tiles): a subject no segment of a cover touches but that meets one of its tiles lies
        wholly in the cover, and is not intersected with the tiles it spans. None: every subject
        crossing a tile edge is intersected.
    edge_cover : ndarray of int
        The cover of each segment of ``edges``.
    """

    keys: list[str]
    parts: np.ndarray
    part_cover: np.ndarray
    cover_keys: list[np.ndarray]
    tree: STRtree = field(repr=False)
    edges: STRtree | None = field(default=None, repr=False)
    edge_cover: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)

    @classmethod
    def build(cls, layers: Sequence[tuple[str, np.ndarray]], *, max_vertices: int = TILE_MAX_VERTICES,
              max_span: float = math.inf, workers: int | None = None) -> CoverIndex:
        """Dissolve the polygons of each ``(key, geometries)``, tile and index them.

        Geometries under one key are unioned first, so overlapping polygons are counted once.
        Keys given the same polygons (the same objects) are unioned once; unions of the same
        shape share their tiles. ``max_span`` (ft) is the widest a tile may be (see
        :func:`tile_span`); the unions run on ``workers`` threads.
        """
        keys: list[str] = []
        sets: dict[tuple[int, ...], int] = {}
        inputs: list[np.ndarray] = []
        members: list[list[int]] = []
        for key, geoms in layers:
            if key in keys:
                raise ValueError(f"duplicate cover key {key}")
            keys.append(key)
            geoms = np.asarray(geoms, dtype=object)
            geoms = geoms[~(shapely.is_missing(geoms) | shapely.is_empty(geoms))] if len(geoms) else geoms
            if not len(geoms):
                continue
            ident = tuple(sorted(map(id, geoms)))  # the same polygon objects give the same union
            if ident not in sets:
                sets[ident] = len(inputs)
                inputs.append(geoms)
                members.append([])
            members[sets[ident]].append(len(keys) - 1)
        unions = parallel_map(shapely.union_all, inputs, workers)
        cover_keys: list[list[int]] = []
        cover_geoms: list[Any] = []
        for u, m in zip(unions, members):
            same = next((c for c, v in enumerate(cover_geoms) if _same_shape(u, v)), None)
            if same is None:
                same = len(cover_geoms)
                cover_geoms.append(u)
                cover_keys.append([])
            cover_keys[same].extend(m)
        parts, cover = _tile(np.array(cover_geoms, dtype=object), max_vertices, max_span)
        tree = STRtree(parts)
        edges, edge_cover = _edge_index(np.array(cover_geoms, dtype=object))
        for t in (tree, edges):
            t.query(shapely.box(0.0, 0.0, 0.0, 0.0))  # builds the tree now, before threads share it
        return cls(keys, parts, cover, [np.array(sorted(k), dtype=np.int64) for k in cover_keys], tree, edges,
                   edge_cover)

    def key_codes(self, names: Iterable[str]) -> np.ndarray:
        """Boolean mask over ``keys``: True for the keys in ``names``."""
        return np.isin(np.array(self.keys, dtype=object), list(names))


def _edge_index(covers: np.ndarray) -> tuple[STRtree, np.ndarray]:
    """(STRtree of the 2-point segments of the covers' outlines, the cover of each segment)."""
    segs, owner = line_segments(shapely.boundary(covers)) if len(covers) else (np.zeros(0, dtype=object),
                                                                               np.zeros(0, dtype=np.int64))
    return STRtree(segs, node_capacity=NEAREST_NODE_CAPACITY), np.asarray(owner, dtype=np.int64)


def _same_shape(a: Any, b: Any) -> bool:
    """True when two dissolved covers are the same point set (bounds and area first: cheap)."""
    if not np.allclose(shapely.bounds(a), shapely.bounds(b), rtol=0, atol=1e-9):
        return False
    if not math.isclose(shapely.area(a), shapely.area(b), rel_tol=1e-12, abs_tol=1e-9):
        return False
    return bool(shapely.equals(a, b))


def _thin(geoms: np.ndarray, tolerance_ft: np.ndarray) -> np.ndarray:
    """True where a polygon vanishes under a negative buffer of half the tolerance (a sliver): one at most as
    wide as the tolerance (a strip exactly as wide collapses to a line: a sliver, as the rulebook's notes say).

    Only polygons that may be thin are buffered: within r of the boundary of a polygon of
    perimeter L and N vertices lies at most ``L r + N pi r^2 / 2`` of its area (a strip along each
    edge and a sector at each reflex corner), so one whose area is over twice ``L r + N pi r^2``
    keeps most of its area under the buffer (:func:`_surely_thick`).

    Examples
    --------
    >>> from shapely.geometry import box
    >>> _thin(np.array([box(0, 0, 100, 0.8), box(0, 0, 100, 1.2), box(0, 0, 100, 100)]), np.full(3, 1.0)).tolist()
    [True, False, False]
    >>> _thin(np.array([box(0, 0, 100, 0.99), box(0, 0, 100, 1.0), box(0, 0, 100, 1.01)]), np.full(3, 1.0)).tolist()
    [True, True, False]
    """
    if not len(geoms):
        return np.zeros(0, dtype=bool)
    tol = np.broadcast_to(np.asarray(tolerance_ft, dtype=float), (len(geoms),))
    out = np.zeros(len(geoms), dtype=bool)
    test = ~_surely_thick(geoms, tol / 2.0)
    if test.any():
        shrunk = shapely.buffer(geoms[test], -tol[test] / 2.0, quad_segs=2)
        out[test] = shapely.is_empty(shrunk) | (shapely.area(shrunk) <= 0)
    return out


def _surely_thick(geoms: np.ndarray, r: np.ndarray) -> np.ndarray:
    """True where a polygon's area is over ``2 (L r + N pi r^2)``: a negative buffer of ``r`` cannot empty it.

    Examples
    --------
    >>> from shapely.geometry import box
    >>> # 10 x 10: L = 40, N = 5; r = 1: 2 (40 + 5 pi) = 111.4 > 100; r = 0.5: 2 (20 + 1.25 pi) = 47.9 < 100
    >>> _surely_thick(np.array([box(0, 0, 10, 10)] * 2), np.array([1.0, 0.5])).tolist()
    [False, True]
    """
    bound = shapely.length(geoms) * r + shapely.get_num_coordinates(geoms) * math.pi * r * r
    return shapely.area(geoms) > 2.0 * bound


@dataclass(frozen=True)
class OverlayParams:
    """Per-key settings of an overlay (arrays aligned with ``CoverIndex.keys``).

    ``keep_geometry``: the key's overlap geometries are returned; ``partial_geometry``: only
    where the overlap is not the whole subject (a caller that needs the overlap only where it
    differs from the subject is spared a copy of every subject).
    """

    tolerance_ft: np.ndarray
    min_area_sqft: np.ndarray
    keep_geometry: np.ndarray
    partial_geometry: np.ndarray

    @classmethod
    def of(cls, cover: CoverIndex, tolerance_ft: float | dict[str, float], min_area_sqft: float | dict[str, float],
           keep_geometry: Iterable[str] | None = None, partial_geometry: Iterable[str] = ()) -> OverlayParams:
        def per_key(v: float | dict[str, float]) -> np.ndarray:
            return np.array([v.get(k, v["*"]) if isinstance(v, dict) else v for k in cover.keys], dtype=float)

        keep = (np.ones(len(cover.keys), dtype=bool) if keep_geometry is None
                else cover.key_codes(keep_geometry))
        return cls(per_key(tolerance_ft), per_key(min_area_sqft), keep, cover.key_codes(partial_geometry))


def spatial_order(geoms: np.ndarray) -> np.ndarray:
    """Positions of ``geoms`` sorted along a Hilbert curve (by bounding-box centre), stable.

    Consecutive subjects are then near each other, so a chunk of them touches few tiles.
    """
    geoms = np.asarray(geoms, dtype=object)
    ok = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
    key = np.zeros(len(geoms), dtype=np.int64)
    if ok.any():
        g = gpd.GeoSeries(geoms[ok])
        key[ok] = g.hilbert_distance(total_bounds=g.total_bounds, level=16).to_numpy()
    return np.argsort(key, kind="stable")


ChunkRunner = Callable[[np.ndarray, list[np.ndarray], "CoverIndex", "OverlayParams"], list[pd.DataFrame]]
"""``run(geoms, chunks, cover, params)`` of :func:`overlay_areas`: the chunks' tables, computed elsewhere."""


def overlay_areas(
    subjects: np.ndarray | gpd.GeoSeries,
    cover: CoverIndex,
    *,
    tolerance_ft: float | dict[str, float],
    min_area_sqft: float | dict[str, float],
    keep_geometry: Iterable[str] | None = None,
    partial_geometry: Iterable[str] = (),
    chunk_size: int = CHUNK_SIZE,
    workers: int | None = None,
    run: ChunkRunner | None = None,
) -> pd.DataFrame:
    """Exact areas of intersection of every subject with every key of ``cover``.

    Subjects are sorted along a Hilbert curve and cut into chunks of ``chunk_size``; the chunks
    run on ``workers`` threads. The answer does not depend on the chunks or the threads: every
    subject is measured on its own, and the rows are sorted by subject and key.

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
    partial_geometry : iterable of str
        Keys among those whose geometry is returned only where the overlap is not the whole
        subject (None where it is).
    chunk_size : int
        Subjects per chunk.
    workers : int, optional
        Threads (default: :func:`geoconstraints.parallel.default_workers`, every core).
    run : callable, optional
        ``run(geoms, chunks, cover, params) -> list of DataFrame``: runs :func:`overlay_chunk` on
        each chunk (positions into ``geoms``) elsewhere, e.g. on a dask cluster
        (:func:`geoconstraints.geometry.overlay_dask.overlay_areas_dask`); default: threads here.

    Returns
    -------
    DataFrame
        One row per (subject, key) with a non-empty polygonal overlap, sorted by subject and key
        (in the order of ``cover.keys``): ``subject`` (position in ``subjects``), ``key``,
        ``raw_sqft`` (area of the overlap), ``sliver`` (bool: thinner than the tolerance or
        smaller than the minimum area), ``area_sqft`` (0 for slivers), ``geometry`` (the overlap
        as a MultiPolygon or Polygon, or None).

    Examples
    --------
    >>> from shapely.geometry import box
    >>> cover = CoverIndex.build([("zone", [box(0, 0, 10, 10), box(5, 0, 20, 10)])])
    >>> ov = overlay_areas([box(15, 0, 25, 10)], cover, tolerance_ft=1.0, min_area_sqft=1.0, workers=1)
    >>> ov[["subject", "key", "raw_sqft", "sliver"]].to_dict("records")
    [{'subject': 0, 'key': 'zone', 'raw_sqft': 50.0, 'sliver': False}]
    """
    geoms = np.asarray(subjects.values if isinstance(subjects, gpd.GeoSeries) else subjects, dtype=object)
    params = OverlayParams.of(cover, tolerance_ft, min_area_sqft, keep_geometry, partial_geometry)
    why = number_problem(chunk_size, minimum=1, whole=True)
    if why:  # 2.5 had failed deep in a range, True had read as 1
        raise InputError(f"chunk_size: {why}; give a whole number of 1 or more")
    chunk_size = int(chunk_size)
    order = spatial_order(geoms)  # chunks are compact patches of the map (Hilbert order)
    chunks = [order[s:s + chunk_size] for s in range(0, len(geoms), chunk_size)]
    if run is not None:
        return sort_overlay(run(geoms, chunks, cover, params) if chunks else [], cover)
    frames = parallel_map(lambda idx: overlay_chunk(geoms[idx], idx, cover, params), chunks, workers)
    return sort_overlay(frames, cover)


def empty_overlay() -> pd.DataFrame:
    """An overlay table without rows (the columns of :func:`overlay_areas`)."""
    return pd.DataFrame({"subject": pd.Series(dtype="int64"), "key": pd.Series(dtype=object),
                         "raw_sqft": pd.Series(dtype="float64"), "sliver": pd.Series(dtype="bool"),
                         "area_sqft": pd.Series(dtype="float64"), "geometry": pd.Series(dtype=object)})


def sort_overlay(frames: Sequence[pd.DataFrame], cover: CoverIndex) -> pd.DataFrame:
    """Concatenate chunk results and sort them by subject, then key (the order of ``cover.keys``)."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_overlay()
    out = pd.concat(frames, ignore_index=True)
    key = out["key"]
    if isinstance(key.dtype, pd.CategoricalDtype) and list(key.cat.categories) == list(cover.keys):
        code = key.cat.codes.to_numpy()  # the chunks' keys as codes: no text hashed
    else:
        code = pd.Categorical(key, categories=cover.keys).codes
    order = np.lexsort((code, out["subject"].to_numpy()))
    out = out.iloc[order].reset_index(drop=True)
    # the key as text (pandas' "str", Arrow), taken from the few distinct keys: no Python string per row
    import pyarrow as pa

    out["key"] = pd.Series(pa.array(list(cover.keys), type=pa.large_string()).take(pa.array(code[order])),
                           dtype="str")
    return out


def _key_rows(g_cover: np.ndarray, cover: CoverIndex) -> tuple[np.ndarray, np.ndarray]:
    """Expand (subject, cover) groups into (group, key code) rows, one per key of the cover."""
    sizes = np.array([len(k) for k in cover.cover_keys], dtype=np.int64)
    flat = np.concatenate(cover.cover_keys)
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rep = sizes[g_cover]
    row_g = np.repeat(np.arange(len(g_cover)), rep)
    within = np.arange(len(row_g)) - np.repeat(np.cumsum(rep) - rep, rep)
    return row_g, flat[np.repeat(start[g_cover], rep) + within]


def _merge_pieces(pieces: np.ndarray, ginv: np.ndarray, want: np.ndarray, full: np.ndarray,
                  subjects: np.ndarray, n_tiles: np.ndarray) -> np.ndarray:
    """The overlap of each wanted group as one geometry (None for the others).

    A group covering its subject whole is the subject; otherwise its polygon pieces (one per
    tile) are gathered into a MultiPolygon, merged where pieces from adjacent tiles touch.
    """
    merged = np.full(len(want), None, dtype=object)
    if not want.any():
        return merged
    whole = want & full
    if whole.any():
        polys, idx = _polygon_parts(subjects[whole])
        merged[np.flatnonzero(whole)] = shapely.multipolygons(polys, indices=idx)
    some = want & ~full
    if some.any():
        sel = some[ginv]
        polys, pidx = _polygon_parts(pieces[sel])
        gid = ginv[sel][pidx]
        order = np.argsort(gid, kind="stable")
        polys, gid = polys[order], gid[order]
        rank = np.cumsum(some) - 1  # group -> position among the groups in `some`
        out = np.full(int(some.sum()), None, dtype=object)
        if len(polys):
            out = shapely.multipolygons(polys, indices=rank[gid], out=out)
        merged[some] = out
        multi = some & (n_tiles > 1)
        if multi.any():  # pieces from adjacent tiles: merge them along the cut
            merged[multi] = shapely.make_valid(merged[multi], method="structure", keep_collapsed=False)
    return merged


def overlay_chunk(geoms: np.ndarray, positions: np.ndarray, cover: CoverIndex, params: OverlayParams) -> pd.DataFrame:
    """The overlay rows of one chunk of subjects (see :func:`overlay_areas`, not sorted).

    ``positions`` are the subjects' positions in the whole input. The tiles this chunk touches
    are copied and prepared here, so threads never share a prepared GEOS geometry (GEOS'
    prepared geometries are not thread-safe); the STRtree is only read.
    """
    if not len(geoms) or not len(cover.parts):
        return empty_overlay()
    si, pi = cover.tree.query(geoms)  # bounding boxes; the prepared tiles test the rest (faster)
    if not len(si):
        return empty_overlay()
    touched, local = np.unique(pi, return_inverse=True)
    tiles = shapely.from_wkb(shapely.to_wkb(cover.parts[touched]))  # this thread's own copies
    shapely.prepare(tiles)
    inside = shapely.contains(tiles[local], geoms[si])  # a subject inside a tile is its own piece
    hit = inside.copy()
    hit[~inside] = shapely.intersects(tiles[local[~inside]], geoms[si[~inside]])
    order = np.lexsort((pi[hit], si[hit]))  # per subject, tiles in index order: the same in any chunk
    si, pi, local, inside = si[hit][order], pi[hit][order], local[hit][order], inside[hit][order]
    if not len(si):
        return empty_overlay()
    subj = geoms[si]
    pieces = subj.copy()
    ncov = len(cover.cover_keys)
    pair = si.astype(np.int64) * ncov + cover.part_cover[pi]  # (subject, cover) of each pair
    whole = _within_cover(geoms, si, pair, ~inside, cover)  # crosses only cuts between tiles of a cover
    cross = ~inside & ~whole
    if cross.any():
        pieces[cross] = shapely.intersection(subj[cross], tiles[local[cross]])
    uniq, ginv = np.unique(pair, return_inverse=True)
    g_subj, g_cover = uniq // ncov, uniq % ncov
    subj_area = shapely.area(geoms)[g_subj]
    raw = np.bincount(ginv, weights=np.where(whole, 0.0, shapely.area(pieces)), minlength=len(uniq))
    in_whole = np.zeros(len(uniq), dtype=bool)
    in_whole[ginv[whole]] = True
    raw[in_whole] = subj_area[in_whole]  # the subject lies in the cover: its overlap is itself
    n_tiles = np.bincount(ginv, minlength=len(uniq))
    full = at_least(raw, subj_area)  # all of the subject, within float noise
    row_g, row_k = _key_rows(g_cover, cover)
    row_raw = raw[row_g]
    sliver = row_raw < params.min_area_sqft[row_k]
    test = ~sliver & ~full[row_g] & (row_raw > 0)
    keep = params.keep_geometry[row_k] & (row_raw > 0) & ~(params.partial_geometry[row_k] & full[row_g])
    want = np.zeros(len(uniq), dtype=bool)
    want[row_g[test | keep]] = True
    merged = _merge_pieces(pieces, ginv, want, full, geoms[g_subj], n_tiles)
    if test.any():  # one thinness test per (group, tolerance), however many keys share the cover
        tol_values, tol_id = np.unique(params.tolerance_ft, return_inverse=True)
        pair = row_g[test] * len(tol_values) + tol_id[row_k[test]]
        upair, pinv = np.unique(pair, return_inverse=True)
        thin = _thin(merged[upair // len(tol_values)], tol_values[upair % len(tol_values)])
        sliver[np.flatnonzero(test)] = thin[pinv]
    ok = row_raw > 0
    geom = np.where(keep, merged[row_g], None)
    return pd.DataFrame({
        "subject": np.asarray(positions, dtype=np.int64)[g_subj[row_g[ok]]],
        "key": pd.Categorical.from_codes(row_k[ok], categories=pd.Index(cover.keys)),  # text once, in sort_overlay
        "raw_sqft": row_raw[ok], "sliver": sliver[ok],
        "area_sqft": np.where(sliver[ok], 0.0, row_raw[ok]),
        "geometry": geom[ok],
    })


def _within_cover(geoms: np.ndarray, si: np.ndarray, pair: np.ndarray, cross: np.ndarray,
                  cover: CoverIndex) -> np.ndarray:
    """Which of the pairs ``cross`` (a subject meeting a tile it is not inside) need no intersection: the
    subject is one polygon and no edge of the tile's cover touches it, so it lies wholly in the cover (it
    meets one of its tiles and crosses none of its edges) and only crosses cuts between the cover's tiles (a
    county's grid of tiles: most subjects crossing a tile edge). A multi-part subject is always intersected:
    one part may lie in the cover and another outside it, neither touching an edge."""
    out = np.zeros(len(si), dtype=bool)
    if cover.edges is None or not cross.any():
        return out
    cross = cross & (shapely.get_type_id(geoms[si]) == shapely.GeometryType.POLYGON)  # one polygon only
    if not cross.any():
        return out
    subjects = np.unique(si[cross])
    s_hit, e_hit = cover.edges.query(geoms[subjects], predicate="intersects")
    touched = np.unique(subjects[s_hit].astype(np.int64) * len(cover.cover_keys) + cover.edge_cover[e_hit])
    out[cross] = ~np.isin(pair[cross], touched)
    return out


def masked(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` where ``mask``, None elsewhere (an object array)."""
    out = np.full(len(mask), None, dtype=object)
    out[mask] = np.asarray(values, dtype=object)[mask]
    return out


class _ByKey:
    """The rows of an overlay table grouped by key once (not one string comparison per lookup)."""

    def __init__(self, ov: pd.DataFrame) -> None:
        self.ov = ov
        self.rows = {k: np.asarray(v) for k, v in ov.groupby("key", sort=False).indices.items()} if len(ov) else {}

    def get(self, key: str, n: int, column: str = "area_sqft") -> np.ndarray:
        out = np.zeros(n) if column != "geometry" else np.full(n, None, dtype=object)
        if column == "sliver":
            out = np.zeros(n, dtype=bool)
        idx = self.rows.get(key)
        if idx is not None:
            out[self.ov["subject"].to_numpy(dtype=np.int64)[idx]] = self.ov[column].to_numpy()[idx]
        return out


def _count_split_sfha(ov: pd.DataFrame, by_key: _ByKey, n: int, area: np.ndarray, zone_keys: Sequence[str],
                      class_keys: Sequence[str]) -> None:
    """Count, in place, the SFHA zones' parts of subjects whose SFHA part counts but none of whose SFHA zones'
    parts does alone (each a sliver: 50 sq ft of A beside 50 sq ft of AE, or a 1.01-ft strip half A, half AE).

    The sliver test reads each cover alone, so such a subject was in the SFHA (FLD-001) but in no zone of it
    (FLD-006: "zone X is in the area of special flood hazard"). For these subjects only, every part of an SFHA
    zone (``zone_keys``) and of the zone classes (``class_keys``: unnumbered A, BFE zones) larger than the
    area's float noise counts at its raw area. Subjects with a zone counted alone keep the sliver test as it
    is. Loops over the few keys, never over subjects.

    Examples
    --------
    >>> ov = pd.DataFrame({"subject": [0, 0, 0, 1], "key": ["_sfha", "zone:A", "zone:AE", "zone:AE"],
    ...                    "area_sqft": [100.0, 0.0, 0.0, 0.0], "raw_sqft": [100.0, 50.0, 50.0, 40.0],
    ...                    "sliver": [False, True, True, True]})
    >>> _count_split_sfha(ov, _ByKey(ov), 2, np.array([4e4, 4e4]), ["zone:A", "zone:AE"], ())
    >>> ov["area_sqft"].tolist(), ov["sliver"].tolist()
    ([100.0, 50.0, 50.0, 0.0], [False, False, False, True])
    """
    if not len(ov):
        return
    subj = ov["subject"].to_numpy(dtype=np.int64)
    counted_area = ov["area_sqft"].to_numpy(dtype=float)
    zone_counted = np.zeros(n, dtype=bool)
    for k in zone_keys:
        idx = by_key.rows.get(k)
        if idx is not None:
            zone_counted[subj[idx][counted_area[idx] > 0]] = True
    split = (by_key.get("_sfha", n) > 0) & ~zone_counted
    if not split.any():
        return
    raw = ov["raw_sqft"].to_numpy(dtype=float)
    new_area, sliver = counted_area.copy(), ov["sliver"].to_numpy(dtype=bool).copy()
    for k in (*zone_keys, *class_keys):
        idx = by_key.rows.get(k)
        if idx is None:
            continue
        s = subj[idx]
        take = idx[split[s] & (raw[idx] > REL_NOISE * np.maximum(area[s], 1.0))]
        new_area[take], sliver[take] = raw[take], False
    ov["area_sqft"], ov["sliver"] = new_area, sliver


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


NEAREST_NODE_CAPACITY = 4
"""Entries per node of the index of the covers' outline segments (:class:`CoverIndex`'s ``edges``,
asked which subjects cross a cover's outline)."""

DISTANCE_NODE_CAPACITY = 2
"""Entries per node of the line index of :func:`distance_to_lines`: the nearest search over small
nodes visits fewer lines. Measured with :data:`DISTANCE_PIECE_SEGMENTS` = 1 on 41,800 stream
segments, one thread, CPU: 100,000 parcel outlines 0.95 s at 4, 0.77 s at 2, 1.55 s at the STRtree
default of 10; 200,000 outlines of the 1,000,000-parcel county 1.94 s at 4, 1.52 s at 2. The same
distances, bit for bit."""

DISTANCE_PIECE_SEGMENTS = 4
"""Segments per piece of line in the index of :func:`distance_to_lines` (:func:`line_segments`).
A tree of short pieces answers nearest-line queries much faster than one of whole many-vertex
lines (the distance to a long line visits every vertex), and a piece of a few segments beats single
segments (a smaller tree, the same vertices compared). Measured as above with
:data:`DISTANCE_NODE_CAPACITY` = 2: 100,000 outlines 0.77 s with 1 segment per piece, 0.67 s with
4, 0.70 s with 6 or 8, 0.83 s with 12; 200,000 outlines of the 1,000,000-parcel county 1.52 s with 1,
1.31 s with 4. The same distances, bit for bit: the distance to a piece is the least of the
distances to its segments, each computed as GEOS computes it for the segment alone."""


def line_segments(lines: np.ndarray, per_piece: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Every line cut into pieces of ``per_piece`` consecutive segments (the last piece of a line
    may have fewer), and the index of the line each came from. ``per_piece=1``: 2-point segments.

    The pieces share their end points and keep the line's direction, so together they are the
    line. The parts of a multi-part line (a MultiLineString, a polygon's outline with holes) are
    cut each on its own: no piece joins the end of one part to the start of the next. A part of
    fewer than two coordinates gives no piece.

    Examples
    --------
    >>> from shapely.geometry import LineString, MultiLineString
    >>> segs, idx = line_segments(np.array([MultiLineString([[(0, 0), (1, 0)], [(5, 5), (6, 5), (6, 6)]]),
    ...                                     LineString([(9, 9), (9, 10)])], dtype=object))
    >>> [s.wkt for s in segs], idx.tolist()
    (['LINESTRING (0 0, 1 0)', 'LINESTRING (5 5, 6 5)', 'LINESTRING (6 5, 6 6)', 'LINESTRING (9 9, 9 10)'], [0, 0, 0, 1])
    >>> pieces, idx = line_segments(np.array([LineString([(0, 0), (1, 0), (2, 0), (3, 1), (4, 1)])], dtype=object),
    ...                             per_piece=3)
    >>> [p.wkt for p in pieces], idx.tolist()
    (['LINESTRING (0 0, 1 0, 2 0, 3 1)', 'LINESTRING (3 1, 4 1)'], [0, 0])
    """
    if int(per_piece) != per_piece or per_piece < 1:
        raise InputError(f"per_piece must be a whole number of segments, 1 or more (got {per_piece})")
    k = int(per_piece)
    parts, owner = shapely.get_parts(np.asarray(lines, dtype=object), return_index=True)
    coords, idx = shapely.get_coordinates(parts, return_index=True)
    counts = np.bincount(idx, minlength=len(parts)) if len(idx) else np.zeros(len(parts), dtype=np.int64)
    segments = np.maximum(counts - 1, 0)
    pieces = -(-segments // k)  # ceil: pieces per part
    if not pieces.sum():
        return np.array([], dtype=object), np.array([], dtype=np.int64)
    start = np.cumsum(counts) - counts  # each part's first coordinate
    part = np.repeat(np.arange(len(parts)), pieces)
    nth = np.arange(len(part)) - np.repeat(np.cumsum(pieces) - pieces, pieces)  # piece number within its part
    first = start[part] + nth * k
    size = np.minimum(k, segments[part] - nth * k) + 1  # coordinates of each piece
    at = np.repeat(first, size) + (np.arange(size.sum()) - np.repeat(np.cumsum(size) - size, size))
    out = shapely.linestrings(coords[at], indices=np.repeat(np.arange(len(first)), size))
    return out, np.asarray(owner, dtype=np.int64)[part]


def distance_to_lines(
    subjects: np.ndarray | gpd.GeoSeries,
    lines: np.ndarray | gpd.GeoSeries,
    *,
    max_distance_ft: float,
    chunk_size: int = CHUNK_SIZE,
    workers: int | None = None,
) -> np.ndarray:
    """Distance (ft) from each subject to the nearest of ``lines``, up to ``max_distance_ft``.

    Lines are cut into pieces of :data:`DISTANCE_PIECE_SEGMENTS` segments (:func:`line_segments`)
    and indexed once. A subject that a line crosses or lies in is at distance 0 (an ``intersects``
    query finds them first); the outline of every other subject asks the index for its nearest
    piece (STRtree branch-and-bound ``query_nearest``, which visits only the pieces near the
    subject).
    Distances over ``max_distance_ft`` are not reported. Polygons among ``lines`` (streams
    mapped as water areas) count by their outline, and a subject overlapping one is at 0.
    Chunks of spatially sorted subjects run on ``workers`` threads.

    The line index has :data:`DISTANCE_NODE_CAPACITY` entries per node.
    (``query_nearest(..., max_distance=D)`` was measured slower than the unbounded search for
    D = 5,000 ft on 100,000 parcels and 42,000 stream segments: 4.3 s against 2.6 s, as GEOS then
    first collects every segment within D; so the bound is applied to the answer.)

    Parameters
    ----------
    subjects, lines : arrays of geometries
        In one projected CRS in feet.
    max_distance_ft : float
        Farthest distance reported (must be finite and not negative).

    Returns
    -------
    ndarray of float
        The distance, NaN where no line is within ``max_distance_ft`` (or there are no lines).

    Examples
    --------
    >>> from shapely.geometry import LineString, box
    >>> distance_to_lines([box(0, 0, 10, 10), box(0, 500, 10, 510)], [LineString([(20, 0), (20, 10)])],
    ...                   max_distance_ft=100).tolist()
    [10.0, nan]
    """
    _check_bound(max_distance_ft)
    n, nearest, chunks = _nearest_search(subjects, lines, chunk_size)
    return _distances(n, max_distance_ft, parallel_map(nearest, chunks, workers))


def _check_bound(max_distance_ft: float) -> None:
    if not (math.isfinite(max_distance_ft) and max_distance_ft >= 0):
        raise InputError(f"max_distance_ft must be a finite distance of 0 or more (got {max_distance_ft})")


DistanceChunk = tuple[np.ndarray, np.ndarray, np.ndarray]
"""One chunk's answer in :func:`distance_to_lines`: (subjects searched, their distances, subjects at 0)."""


def _nearest_search(subjects: np.ndarray | gpd.GeoSeries, lines: np.ndarray | gpd.GeoSeries, chunk_size: int
                    ) -> tuple[int, Callable[[np.ndarray], DistanceChunk], list[np.ndarray]]:
    """(number of subjects, the search of one chunk, the chunks of spatially sorted subjects) of
    :func:`distance_to_lines`; no chunk when there is no subject or no line. The indexes are
    built here, before threads share them."""
    geoms = np.asarray(subjects.values if isinstance(subjects, gpd.GeoSeries) else subjects, dtype=object)
    g = np.asarray(lines.values if isinstance(lines, gpd.GeoSeries) else lines, dtype=object)
    g = g[~(shapely.is_missing(g) | shapely.is_empty(g))] if len(g) else g
    if not len(geoms) or not len(g):
        return len(geoms), lambda idx: (idx, np.zeros(0), idx[:0]), []
    is_poly = np.isin(shapely.get_type_id(g), POLYGON_TYPES)
    segs, _ = line_segments(np.where(is_poly, shapely.boundary(g), g), DISTANCE_PIECE_SEGMENTS)
    seg_tree = STRtree(segs, node_capacity=DISTANCE_NODE_CAPACITY)
    poly_tree = STRtree(g[is_poly])
    for tree in (seg_tree, poly_tree):
        tree.query(shapely.box(0.0, 0.0, 0.0, 0.0))  # build before threads share it

    def nearest(idx: np.ndarray) -> DistanceChunk:
        crossed, _ = seg_tree.query(geoms[idx], predicate="intersects")
        inside, _ = poly_tree.query(geoms[idx], predicate="intersects")
        zero = np.zeros(len(idx), dtype=bool)
        zero[crossed] = zero[inside] = True
        rest = idx[~zero]  # only subjects no line touches need the nearest search (the others are at 0)
        sub = geoms[rest]
        outline = np.where(np.isin(shapely.get_type_id(sub), POLYGON_TYPES), shapely.boundary(sub), sub)
        (gi, _), dist = seg_tree.query_nearest(outline, return_distance=True, all_matches=False)
        return rest[gi], dist, idx[zero]

    order = spatial_order(geoms)
    return len(geoms), nearest, [order[s:s + chunk_size] for s in range(0, len(geoms), chunk_size)]


def _distances(n: int, max_distance_ft: float, answers: Iterable[DistanceChunk]) -> np.ndarray:
    """The distances of ``n`` subjects from the chunks' answers (NaN beyond ``max_distance_ft``)."""
    out = np.full(n, np.nan)
    for pos, dist, inside in answers:
        out[pos] = np.where(dist <= max_distance_ft, dist, np.nan)
        out[inside] = 0.0
    return out


class PendingDistances:
    """Stream distances being measured in the background (:func:`start_distance_to_lines`).

    A thread of normal priority builds the indexes and the chunks (about 0.5 s for 1,000,000
    parcels: the caller goes on meanwhile), then hands the chunks to a
    :class:`~geoconstraints.parallel.Background` job.
    """

    def __init__(self, subjects: np.ndarray | gpd.GeoSeries, lines: np.ndarray | gpd.GeoSeries,
                 max_distance_ft: float, chunk_size: int, workers: int | None) -> None:
        self.max_distance_ft = float(max_distance_ft)
        self.n = 0
        self._job: Background | None = None
        self._error: BaseException | None = None
        self._cancelled = False
        self._lock = threading.Lock()
        self._setup = threading.Thread(target=self._begin, args=(subjects, lines, chunk_size, workers),
                                       name="gc-background-setup", daemon=True)
        self._setup.start()

    def _begin(self, subjects: Any, lines: Any, chunk_size: int, workers: int | None) -> None:
        try:
            n, nearest, chunks = _nearest_search(subjects, lines, chunk_size)
            with self._lock:
                self.n = n
                self._job = Background(nearest, [] if self._cancelled else chunks, workers)
        except BaseException as exc:  # noqa: BLE001 -- handed to the caller: raised again by result()
            self._error = exc

    def result(self) -> np.ndarray:
        """The distances, as :func:`distance_to_lines` returns them (waiting for, or finishing, the search)."""
        self._setup.join()
        if self._error is not None:
            raise self._error
        job = cast(Background, self._job)  # set by _begin, which ended without an error
        return _distances(self.n, self.max_distance_ft, job.result())

    def cancel(self) -> None:
        """Start no more chunks in the background (when the run stops before it needs the distances)."""
        with self._lock:
            self._cancelled = True
            if self._job is not None:
                self._job.cancel()


def start_distance_to_lines(
    subjects: np.ndarray | gpd.GeoSeries,
    lines: np.ndarray | gpd.GeoSeries,
    *,
    max_distance_ft: float,
    chunk_size: int = CHUNK_SIZE,
    workers: int | None = None,
) -> PendingDistances:
    """:func:`distance_to_lines` begun now on ``workers`` threads of the lowest priority
    (:class:`~geoconstraints.parallel.Background`); ``.result()`` gives the same array.

    The indexes are built on a thread of normal priority while the caller goes on; the search then
    runs on cores the caller's other work (an overlay's threads, pandas on this thread) leaves idle,
    and ``.result()`` finishes what is left at normal priority. A screening starts it before its
    overlay: at 1,000,000 parcels the nearest search (~8 s of CPU) is then done in the gaps of the
    overlay and the checks, before the checks end, instead of beside the checks.

    Chunks of :data:`CHUNK_SIZE` subjects: chunks of 5,000 made the 1,000,000-parcel check 0.7 s
    slower (each chunk's Python steps take the GIL from a thread of the lowest priority), and a
    chunk a background thread has begun when ``.result()`` comes is searched again there, at most
    ``workers`` chunks (~0.15 s of one core each).

    Examples
    --------
    >>> from shapely.geometry import LineString, box
    >>> job = start_distance_to_lines([box(0, 0, 10, 10), box(0, 500, 10, 510)], [LineString([(20, 0), (20, 10)])],
    ...                               max_distance_ft=100)
    >>> job.result().tolist()
    [10.0, nan]
    """
    _check_bound(max_distance_ft)
    return PendingDistances(subjects, lines, max_distance_ft, chunk_size, workers)


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
        # floodway-like areas whose reading is not decided (FLD-002), all together and per subtype text (its
        # name for the finding); a layer without any adds empty keys, nothing to intersect. One subtype (the
        # usual case): the same polygons, one cover intersected once for both keys
        ("_encroachment", g[cls["encroachment"].to_numpy()]),
    ]
    enc = cls["encroachment"].to_numpy()
    for s in sorted(set(cls["subtype"][enc])):
        layers.append((f"{ENCROACHMENT_PREFIX}{s}", g[enc & (cls["subtype"] == s).to_numpy()]))
    return layers, cls


def _coverage_state(geoms: np.ndarray, area: np.ndarray, m: pd.DataFrame, covered: np.ndarray,
                    undetermined: np.ndarray, tol_ft: float, min_sqft: float) -> tuple[np.ndarray, np.ndarray]:
    """(``full`` / ``partial`` / ``no_data``, the uncovered sq ft) per subject: how much of it the flood map
    covers (uncovered slivers along the map's edge, thinner than ``tol_ft`` or under ``min_sqft``, are ignored).
    ``covered`` and ``undetermined`` are the subject's parts in the covered and the undetermined polygons where
    they are not the whole subject (None: the whole subject, or no part; only those of subjects with such a
    part are read).

    Where an undetermined polygon (zone D, AREA NOT INCLUDED, a value the rulebook does not know) overlaps a
    mapped one (the layer contradicts itself there), the overlap is not covered: the mapped polygon under it
    does not make its hazard known (a subject whose SFHA part lies under it is ``partial``: in the SFHA, the
    rest of its hazard not known)."""
    cov = m["covered_sqft"].to_numpy(dtype=float, copy=True)
    cov_raw = m["covered_raw_sqft"].to_numpy(dtype=float, copy=True)
    cov_geom = np.asarray(covered, dtype=object).copy()
    both = (cov > 0) & (m["undetermined_raw_sqft"].to_numpy() > 0)
    if both.any():  # subjects touching both (most lie side by side: nothing changes for them)
        bi = np.flatnonzero(both)
        cg = np.where(pd.isna(cov_geom[bi]), geoms[bi], cov_geom[bi])
        ug = np.asarray(undetermined, dtype=object)[bi]
        ug = np.where(pd.isna(ug), geoms[bi], ug)
        det = shapely.difference(cg, ug)
        det_area = shapely.area(det)
        cut = under_limit(det_area, cov_raw[bi])
        cov_raw[bi[cut]] = det_area[cut]
        cov_geom[bi[cut]] = det[cut]
        ok = np.zeros(len(bi), dtype=bool)
        keep = cut & (det_area >= min_sqft)
        ok[keep] = ~_thin(det[keep], np.full(int(keep.sum()), tol_ft))
        cov[bi[cut & ~ok]] = 0.0  # only a sliver of the covered part is determined: no data
    unc_raw = np.clip(area - cov_raw, 0.0, None)
    state = np.where(cov > 0, "full", "no_data").astype(object)
    # an SFHA polygon under an undetermined one still puts the subject in the SFHA: partial, never "no data"
    in_sfha = (cov <= 0) & (m["sfha_sqft"].to_numpy() > 0)
    state[in_sfha] = "partial"
    check_unc = (cov > 0) & (unc_raw > REL_NOISE * np.maximum(area, 1.0))  # more than the area's float noise
    if check_unc.any():
        ci = np.flatnonzero(check_unc)
        cg = cov_geom[ci]
        unc = shapely.difference(geoms[ci], masked(~pd.isna(cg), cg))
        unc_area = shapely.area(unc)
        thin = np.zeros(len(ci), dtype=bool)
        big = unc_area >= min_sqft
        thin[big] = _thin(unc[big], np.full(int(big.sum()), tol_ft))
        state[ci[big & ~thin]] = "partial"
    uncovered = np.where(state == "full", 0.0, np.where((cov > 0) | in_sfha, unc_raw, area))
    return state, uncovered


def _warn_unknown_zones(cls: pd.DataFrame, spec: FloodZoneSpec, layer: str) -> None:
    """Say which zone values of ``layer`` :func:`classify_flood_zones` found unknown, and what became of them."""
    counts = cls.loc[cls["unknown"], "zone"].value_counts()
    if not len(counts):
        return
    shown = ", ".join(f"{z!r} ({n})" for z, n in counts.head(8).items()) + (", ..." if len(counts) > 8 else "")
    log.warning("layer %s: %d feature(s) have a %s value the rulebook's zone lists do not know (%s): "
                "their flood hazard counts as undetermined (not evaluated), not as 'no flood hazard'. Give the NFHL "
                "zone names (A, AE, X ...), or %s = 'T' where the zone is in the SFHA, or add the values to the "
                "rulebook's zone lists", layer, int(counts.sum()), spec.zone_field, shown, spec.sfha_field)


def flood_metrics(
    subjects: gpd.GeoDataFrame,
    flood: gpd.GeoDataFrame | None,
    spec: FloodZoneSpec,
    *,
    extra: Sequence[tuple[str, np.ndarray]] = (),
    chunk_size: int = CHUNK_SIZE,
    workers: int | None = None,
    overlay: Callable[..., pd.DataFrame] | None = None,
    layer: str = "flood_zones",
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
    chunk_size, workers : int
        Subjects per chunk and threads (see :func:`overlay_areas`).
    overlay : callable, optional
        The engine: a function with the signature and result of :func:`overlay_areas` (the
        default), e.g. :func:`geoconstraints.geometry.overlay_dask.overlay_areas_dask`.
    layer : str
        The role of ``flood`` (``flood_zones``, ``flood_zones_preliminary``), for the warning naming
        zone values the spec does not know (:func:`classify_flood_zones`: undetermined).

    Returns
    -------
    (DataFrame, dict)
        The metrics (one row per subject, positional index) and the overlap geometries per
        key (``_sfha``, ``_floodway``, ``_encroachment``) aligned with the subjects (None where no
        overlap). The metrics hold ``<name>_sqft``, ``<name>_raw_sqft`` and ``<name>_sliver`` of
        ``sfha``, ``floodway``, ``encroachment`` (the polygons of :func:`classify_flood_zones`'
        ``encroachment``, with the floodway's tolerances) ..., ``flood_zones``, ``sliver_zones``,
        ``encroachment_subtypes`` (``'STATE ENCROACHMENT AREA'``, ``''`` where none), ``flood_data``,
        ``uncovered_sqft`` and ``districts``.
    """
    tol1, min1 = spec.sliver_tolerance_ft, spec.min_overlap_sqft
    geoms = np.asarray(subjects.geometry.values, dtype=object)
    n = len(geoms)
    area = shapely.area(geoms)
    layers: list[tuple[str, np.ndarray]] = []
    if flood is not None and len(flood):
        flood_layers, cls = _flood_cover_layers(flood, spec)
        layers += flood_layers
        _warn_unknown_zones(cls, spec, layer)
    layers += list(extra)
    tol, mins = spec.key_tolerances(k for k, _g in layers)  # the floodway's for the encroachment keys
    cover = CoverIndex.build(layers, max_span=tile_span(geoms), workers=workers)
    engine = overlay_areas if overlay is None else overlay
    ov = engine(geoms, cover, tolerance_ft=tol, min_area_sqft=mins,
                keep_geometry=("_sfha", "_floodway", "_encroachment", "_covered", "_undetermined"),
                partial_geometry=("_covered", "_undetermined"),
                chunk_size=chunk_size, workers=workers)
    by_key = _ByKey(ov)
    if flood is not None and len(flood):
        sfha_keys = [f"zone:{z}" for z in sorted(set(cls.loc[cls["sfha"], "zone"]) - {""})]
        _count_split_sfha(ov, by_key, n, area, sfha_keys, ("_unnumbered", "_bfe_no_floodway", "_bfe_zone"))
    m = pd.DataFrame(index=pd.RangeIndex(n))
    m["area_sqft"] = area
    for key, name in (("_sfha", "sfha"), ("_floodway", "floodway"), ("_covered", "covered"),
                      ("_undetermined", "undetermined"), ("_unnumbered", "unnumbered_a"),
                      ("_bfe_no_floodway", "bfe_no_floodway"), ("_bfe_zone", "bfe_zone"),
                      ("_encroachment", "encroachment")):
        m[f"{name}_sqft"] = by_key.get(key, n)
        m[f"{name}_raw_sqft"] = by_key.get(key, n, "raw_sqft")
        m[f"{name}_sliver"] = by_key.get(key, n, "sliver")
    m["flood_zones"] = _joined_keys(ov, "zone:", n)
    m["sliver_zones"] = _joined_keys(ov.assign(area_sqft=np.where(ov["sliver"], 1.0, 0.0)), "zone:", n)
    # the encroachment subtypes each subject is (non-sliver) in ('STATE ENCROACHMENT AREA'); a layer without
    # any (the usual case): no scan of the overlay's keys
    m["encroachment_subtypes"] = (_joined_keys(ov, ENCROACHMENT_PREFIX, n)
                                  if any(k.startswith(ENCROACHMENT_PREFIX) for k in cover.keys)
                                  else np.full(n, "", dtype=object))
    overlaps = {k: by_key.get(k, n, "geometry") for k in ("_sfha", "_floodway", "_encroachment")}

    if flood is None or not len(flood):
        m["flood_data"], m["uncovered_sqft"] = "no_data", area
    else:
        m["flood_data"], m["uncovered_sqft"] = _coverage_state(
            geoms, area, m, by_key.get("_covered", n, "geometry"), by_key.get("_undetermined", n, "geometry"),
            tol1, min1)
    for key, _g in extra:
        m[f"{key}_sqft"] = by_key.get(key, n)
    m["districts"] = _joined_keys(ov, "district:", n)
    return m, overlaps


def acres_of(sqft: Any) -> Any:
    return np.asarray(sqft, dtype=float) / SQFT_PER_ACRE


def share_of(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    whole = np.asarray(whole, dtype=float)
    return np.clip(np.divide(part, whole, out=np.zeros_like(whole), where=whole > 0), 0.0, 1.0)

