"""Buffer strips (streams, roads and rights-of-way, property lines, dwellings) as pure functions.

Every width comes from the caller (the rulebook); geometry is vectorized and clipped to the
plan's neighbourhood before buffering.
"""

from __future__ import annotations

import logging
import math
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from shapely.geometry import Polygon
from shapely.geometry.base import BaseGeometry

from geoconstraints.errors import InputError
from geoconstraints.io.validate import polygonal_parts
from geoconstraints.units import sqft_to_acres

log = logging.getLogger(__name__)


BUFFER_COLUMNS: list[str] = ["kind", "rule_id", "source_id", "width_ft", "measured_from"]
"""Attribute columns of the ``buffer_strips`` derived layer (plus ``geometry``)."""

SOURCE_COLUMNS: list[str] = ["source_geometry", "district_value", "bordering"]
"""What a strip builder keeps of each strip's making when asked (``with_sources``), apart from the
written layer: ``source_geometry``, the geometry the strip is drawn around (a point is in a strip
``width_ft`` wide exactly when it lies within ``width_ft`` of it: the outline is drawn up to
:func:`arc_error_ft` inside that); ``district_value``, the district value that makes a property-line
or dwelling strip as the layer writes it (None where none, and for streams and roads);
``bordering``, the zoned parcel whose district that is when the line is a neighbour's bordering it
(reading b; else None)."""

BUFFER_KINDS: tuple[str, ...] = ("stream", "road", "property_line", "dwelling")
"""Kinds of buffer strip, in report order."""

PROPERTY_LINE_READINGS: tuple[str, ...] = ("a", "b", "c")

_QUAD_SEGS = 16  # buffer arcs: 64 segments per circle (area error < 0.2 %)


def empty_buffers(crs: Any = None) -> gpd.GeoDataFrame:
    """An empty buffer-strip frame with :data:`BUFFER_COLUMNS`."""
    df = pd.DataFrame(
        {c: pd.Series(dtype="float64" if c == "width_ft" else "object") for c in BUFFER_COLUMNS}
    )
    return gpd.GeoDataFrame(df, geometry=gpd.GeoSeries([], crs=crs), crs=crs)


def _frame(kind: str, rule_id: str, source_id: Any, width_ft: float, measured_from: Any, sources: Any,
           extent: BaseGeometry | None, crs: Any, *, district_value: Any = None,
           bordering: Any = None) -> gpd.GeoDataFrame:
    """Strips ``width_ft`` wide around ``sources`` clipped to ``extent``, the empty ones left out:
    :data:`BUFFER_COLUMNS` and :data:`SOURCE_COLUMNS` (``measured_from``, ``district_value`` and
    ``bordering`` one value for all, or one per source)."""
    ids = pd.Series(list(source_id), dtype=object).astype(str)
    n = len(ids)
    if n == 0:
        return empty_buffers(crs)

    def each(v: Any) -> list:
        return list(v) if isinstance(v, (list, np.ndarray, pd.Series)) else [v] * n

    src = np.asarray(sources, dtype=object)
    df = pd.DataFrame(
        {
            "kind": kind,
            "rule_id": rule_id,
            "source_id": ids.to_numpy(),
            "width_ft": float(width_ft),
            "measured_from": each(measured_from),
            "source_geometry": src,
            "district_value": each(district_value),
            "bordering": each(bordering),
        },
        index=range(n),
    )
    out = gpd.GeoDataFrame(df, geometry=gpd.GeoSeries(list(_clip(_buffer(src, width_ft), extent)), crs=crs).values,
                           crs=crs)
    keep = ~(out.geometry.isna() | out.geometry.is_empty)
    return out.loc[keep].reset_index(drop=True)


def _columns(strips: gpd.GeoDataFrame, with_sources: bool) -> gpd.GeoDataFrame:
    """``strips`` with :data:`BUFFER_COLUMNS`, and :data:`SOURCE_COLUMNS` when ``with_sources``."""
    return strips.reindex(columns=[*BUFFER_COLUMNS, *(SOURCE_COLUMNS if with_sources else ()), "geometry"])


def plan_extent(frames: Iterable[gpd.GeoDataFrame | None], margin_ft: float) -> Polygon | None:
    """The bounding box of the plan layers grown by ``margin_ft`` on every side.

    Parameters
    ----------
    frames : iterable of GeoDataFrame or None
        Plan layers (harvest areas, landings, haul roads, skid trails), all in one CRS in feet.
    margin_ft : float
        Margin added on every side (>= 0).

    Returns
    -------
    shapely.Polygon or None
        ``None`` when no frame has features.

    Examples
    --------
    >>> ha = gpd.GeoDataFrame(geometry=[shapely.box(0, 0, 100, 50)])
    >>> plan_extent([ha, None], 10).bounds
    (-10.0, -10.0, 110.0, 60.0)
    """
    if margin_ft < 0:
        raise InputError(f"plan extent margin must be >= 0 ft, got {margin_ft!r}")
    bounds = [f.total_bounds for f in frames if f is not None and len(f)]
    if not bounds:
        return None
    b = np.array(bounds)
    return shapely.box(
        b[:, 0].min() - margin_ft,
        b[:, 1].min() - margin_ft,
        b[:, 2].max() + margin_ft,
        b[:, 3].max() + margin_ft,
    )


def _near(gdf: gpd.GeoDataFrame, extent: BaseGeometry | None, distance_ft: float) -> gpd.GeoDataFrame:
    """Features of ``gdf`` within ``distance_ft`` of ``extent`` (all of them when no extent)."""
    if extent is None or not len(gdf):
        return gdf
    idx = gdf.sindex.query(extent, predicate="dwithin", distance=distance_ft)
    return gdf.iloc[np.sort(idx)]


def _clip(geoms: np.ndarray, extent: BaseGeometry | None) -> np.ndarray:
    if extent is None:
        return geoms
    return polygonal_parts(shapely.intersection(geoms, extent))


def _crs_of(*frames: gpd.GeoDataFrame | None) -> Any:
    return next((f.crs for f in frames if f is not None), None)


def _buffer(geoms: Any, width_ft: float) -> np.ndarray:
    return shapely.buffer(np.asarray(geoms, dtype=object), width_ft, quad_segs=_QUAD_SEGS)


def arc_error_ft(width_ft: Any) -> Any:
    """How far inside the true line ``width_ft`` away a strip's outline may lie.

    A strip's arcs (a dwelling's circle, the round ends and outer bends of a stream's strip) are
    drawn as polygons of ``4 * 16`` sides whose corners lie on the true circle; the middle of
    each side is ``width_ft * (1 - cos(pi / 64))`` inside it. A point that close outside the outline
    may still be within ``width_ft`` of the source. Straight sides are exact.

    Examples
    --------
    >>> round(arc_error_ft(50.0), 3), round(arc_error_ft(100.0), 3)
    (0.06, 0.12)
    """
    return width_ft * (1.0 - math.cos(math.pi / (4 * _QUAD_SEGS)))  # a float, or an array of widths


_FINE_TOL_FT = 1e-7
"""How far inside the true line :func:`fine_buffer` may draw an arc (feet; numerical, not law)."""


def fine_buffer(geom: Any, width_ft: float, *, cap_style: str = "round") -> Any:
    """``geom`` buffered by ``width_ft`` with its arcs drawn within 1e-7 ft of the true line.

    For measuring one landing against one strip where the strip's outline (:func:`arc_error_ft`)
    is too coarse: a strip with flat ends (a right-of-way drawn from a road centre line) is not
    the set of points within ``width_ft`` of its source, so the distance to the source does not
    give it.

    Examples
    --------
    >>> bend = shapely.LineString([(0, 0), (100, 0), (100, 100)])
    >>> p = shapely.Point(100 + 100 * math.cos(math.pi / 64), -100 * math.sin(math.pi / 64))  # 100 ft from the bend
    >>> float(round(shapely.distance(p, shapely.buffer(bend, 25, cap_style="flat", quad_segs=_QUAD_SEGS)), 4))
    75.0301
    >>> float(round(shapely.distance(p, fine_buffer(bend, 25, cap_style="flat")), 6))
    75.0
    """
    width_ft = float(width_ft)
    if width_ft <= _FINE_TOL_FT:
        return shapely.buffer(geom, width_ft, cap_style=cap_style)
    quad = math.ceil(math.pi / (4 * math.acos(1.0 - _FINE_TOL_FT / width_ft)))
    return shapely.buffer(geom, width_ft, cap_style=cap_style, quad_segs=min(quad, 1_000_000))


# ------------------------------------------------------------------------------------------
# streams and roads (HRV-020)


def select_streams(streams: gpd.GeoDataFrame, *, include_intermittent: bool) -> gpd.GeoDataFrame:
    """Streams that count as "streams" for the buffer rule.

    Perennial streams and streams of unknown kind (treated as streams: the cautious reading),
    plus intermittent ones when ``include_intermittent``. Ephemeral channels never.
    """
    kind = (
        streams["kind"] if "kind" in streams.columns else pd.Series(None, index=streams.index, dtype=object)
    )
    ok = kind.isna() | (kind == "perennial")
    if include_intermittent:
        ok |= kind == "intermittent"
    return streams.loc[ok.to_numpy()]


def stream_buffers(
    streams: gpd.GeoDataFrame,
    width_ft: float,
    *,
    include_intermittent: bool = False,
    extent: BaseGeometry | None = None,
    rule_id: str = "HRV-020",
    with_sources: bool = False,
) -> gpd.GeoDataFrame:
    """Buffer strips ``width_ft`` wide along streams (HRV-020).

    Parameters
    ----------
    streams : GeoDataFrame
        Stream lines or polygons with ``feature_id`` and optional ``kind``.
    width_ft : float
        Strip width (50 ft in Vestal).
    include_intermittent : bool, default False
        Also buffer intermittent streams (rulebook switch; the law defines a "stream" as
        flowing continuously).
    extent : shapely geometry, optional
        Clip the strips to this area (the plan extent).
    rule_id : str
    with_sources : bool, default False
        Also :data:`SOURCE_COLUMNS` (the stream each strip is drawn around).

    Returns
    -------
    GeoDataFrame
        :data:`BUFFER_COLUMNS`; ``measured_from`` is ``stream line`` or ``stream bank (polygon)``.

    Examples
    --------
    A straight 1,000 ft stream gives 2 * 50 * 1000 + pi * 50**2 = 107,853.98 sq ft (107,841 with
    the caps drawn as 64-sided polygons):

    >>> s = gpd.GeoDataFrame({"feature_id": ["s1"], "kind": ["perennial"]},
    ...                      geometry=[shapely.LineString([(0, 0), (1000, 0)])])
    >>> int(stream_buffers(s, 50).area.iloc[0])
    107841
    """
    sel = _near(select_streams(streams, include_intermittent=include_intermittent), extent, width_ft)
    geoms = sel.geometry.values
    poly = np.isin(shapely.get_type_id(geoms), (3, 6))
    measured = np.where(poly, "stream bank (polygon)", "stream line")
    return _columns(_frame("stream", rule_id, sel["feature_id"], width_ft, measured, geoms, extent, streams.crs),
                    with_sources)


def _outside_row(lines: np.ndarray, row: gpd.GeoDataFrame | None) -> np.ndarray:
    """The stretches of each road centre line outside every ``row`` polygon (empty where a
    right-of-way polygon covers the whole line)."""
    lines = np.asarray(lines, dtype=object)
    if row is None or not len(row) or not len(lines):
        return lines
    _, ri = row.sindex.query(lines, predicate="intersects")
    if not len(ri):
        return lines
    return shapely.difference(lines, shapely.union_all(row.geometry.values[np.unique(ri)]))


def row_polygons(
    roads: gpd.GeoDataFrame | None,
    row: gpd.GeoDataFrame | None,
    *,
    default_row_width_ft: float,
) -> gpd.GeoDataFrame:
    """Public rights-of-way as polygons.

    Every ``row`` polygon, plus, for each road centre line, its stretches outside every ``row``
    polygon buffered by half its right-of-way width (``row_width_ft`` of the road, else
    ``default_row_width_ft``) with flat ends. A side road crossing another road's mapped
    right-of-way thus keeps a right-of-way of its own beyond it.

    Returns
    -------
    GeoDataFrame
        ``source_layer`` (``row``/``roads``), ``source_id``, ``row_width_ft`` (NaN for ``row``
        polygons), ``measured_from`` (``right-of-way line`` or ``road centre line``),
        ``width_assumed`` (the road has no ``row_width_ft``: ``default_row_width_ft`` was used),
        ``source_geometry`` (what the right-of-way is drawn around: the ``row`` polygon itself, the
        stretches of centre line), geometry.
    """
    crs = _crs_of(row, roads)
    parts: list[gpd.GeoDataFrame] = []
    if row is not None and len(row):
        parts.append(
            gpd.GeoDataFrame(
                {
                    "source_layer": "row",
                    "source_id": row["feature_id"].astype(str).to_numpy(),
                    "row_width_ft": np.nan,
                    "measured_from": "right-of-way line",
                    "width_assumed": False,
                    "source_geometry": np.asarray(row.geometry.values, dtype=object),
                },
                geometry=row.geometry.values,
                crs=crs,
            )
        )
    if roads is not None and len(roads):
        outside = _outside_row(roads.geometry.values, row)
        keep = ~shapely.is_empty(outside)
        rest = roads.loc[keep]
        outside = outside[keep]
        if "row_width_ft" in rest.columns:
            width = pd.to_numeric(rest["row_width_ft"], errors="coerce").to_numpy(dtype="float64")
        else:
            width = np.full(len(rest), np.nan)
        assumed = ~(np.isfinite(width) & (width > 0))
        width = np.where(assumed, default_row_width_ft, width)
        geoms = shapely.buffer(outside, width / 2.0, cap_style="flat", quad_segs=_QUAD_SEGS)
        parts.append(
            gpd.GeoDataFrame(
                {
                    "source_layer": "roads",
                    "source_id": rest["feature_id"].astype(str).to_numpy(),
                    "row_width_ft": width,
                    "measured_from": "road centre line",
                    "width_assumed": assumed,
                    "source_geometry": outside,
                },
                geometry=geoms,
                crs=crs,
            )
        )
    if not parts:
        return gpd.GeoDataFrame(
            {"source_layer": [], "source_id": [], "row_width_ft": [], "measured_from": [], "width_assumed": [],
             "source_geometry": []},
            geometry=[],
            crs=crs,
        )
    return pd.concat(parts, ignore_index=True)


def road_buffers(
    roads: gpd.GeoDataFrame | None,
    width_ft: float,
    *,
    row: gpd.GeoDataFrame | None = None,
    extent: BaseGeometry | None = None,
    rule_id: str = "HRV-020",
    with_sources: bool = False,
) -> gpd.GeoDataFrame:
    """Buffer strips ``width_ft`` wide along public roads (HRV-020).

    Measured from the right-of-way line where a ``row`` polygon covers the road (the ROW
    polygon buffered by ``width_ft``), else from the road centre line: the stretches of each
    centre line outside every ``row`` polygon are buffered (a side road crossing another
    road's mapped right-of-way keeps its own strip beyond it). With ``with_sources``, also
    :data:`SOURCE_COLUMNS` (the ROW polygon, the stretches of centre line).

    Returns
    -------
    GeoDataFrame
        :data:`BUFFER_COLUMNS`; ``source_id`` is the ROW or road id.
    """
    crs = _crs_of(row, roads)
    frames: list[gpd.GeoDataFrame] = []
    if row is not None and len(row):
        sel = _near(row, extent, width_ft)
        frames.append(_frame("road", rule_id, "row " + sel["feature_id"].astype(str), width_ft, "right-of-way line",
                             sel.geometry.values, extent, crs))
    if roads is not None and len(roads):
        sel = _near(roads, extent, width_ft)
        frames.append(_frame("road", rule_id, sel["feature_id"], width_ft, "road centre line",
                             _outside_row(sel.geometry.values, row), extent, crs))
    frames = [f for f in frames if len(f)]
    return _columns(pd.concat(frames, ignore_index=True) if frames else empty_buffers(crs), with_sources)


# ------------------------------------------------------------------------------------------
# districts


def parcel_districts(parcels: gpd.GeoDataFrame, zoning: gpd.GeoDataFrame | None = None, *,
                     districts: Iterable[str] = (), town_districts: Iterable[str] | None = None) -> pd.Series:
    """Zoning district of each parcel, aligned with ``parcels`` (named as :func:`norm_district`
    names them: a spelling of one of ``districts`` comes back spelled as there; with
    ``town_districts``, a value naming none of them is unknown).

    With a ``zoning`` layer: the district covering the largest part of the parcel (None where
    no district overlaps). Without: the parcel's own ``zoning`` field (None when absent).
    """
    return _none_for_missing(norm_district(parcel_district_values(parcels, zoning), districts, town_districts))


def parcel_district_values(parcels: gpd.GeoDataFrame, zoning: gpd.GeoDataFrame | None = None) -> pd.Series:
    """The district value of each parcel as the layer writes it (not normalised), aligned with
    ``parcels``: the ``district`` of the zoning polygon covering the largest part of the parcel,
    else the parcel's own ``zoning`` field; None where there is none (:func:`parcel_districts`)."""
    out = pd.Series(None, index=parcels.index, dtype=object)
    if zoning is not None and len(zoning) and len(parcels):
        pi, zi = zoning.sindex.query(parcels.geometry.values, predicate="intersects")
        if len(pi):
            area = shapely.area(shapely.intersection(parcels.geometry.values[pi], zoning.geometry.values[zi]))
            t = pd.DataFrame({"p": pi, "d": zoning["district"].to_numpy()[zi], "a": area})
            t = t[t["a"] > 0]
            best = t.loc[t.groupby("p")["a"].idxmax()]
            out.iloc[best["p"].to_numpy()] = best["d"].to_numpy()
        return _none_for_missing(out)
    if "zoning" in parcels.columns:
        return _none_for_missing(parcels["zoning"].astype(object))
    return out


def _none_for_missing(s: pd.Series) -> pd.Series:
    return s.astype(object).where(s.notna(), None)


def norm_district(s: pd.Series, districts: Iterable[str] = (),
                  town_districts: Iterable[str] | None = None) -> pd.Series:
    """District names as they are compared: stripped and upper-cased, missing for blanks, and
    a spelling of one of ``districts`` spelled as there.

    Case, spaces, hyphens, underscores and dots do not tell districts apart: ``RA1``, ``ra 1``,
    ``RA_1`` and ``R.A.-1`` are the rulebook's ``RA-1``; so are the typographic forms a word
    processor or spreadsheet writes (an en or em dash, a non-breaking hyphen, a minus sign,
    full-width letters, a zero-width space: :func:`_district_key`). A value of only such marks
    (``-``) is blank. Every comparison of districts goes
    through this function, with the rulebook's list of the districts it looks for.

    Parameters
    ----------
    s : Series
        District values (the zoning layer's ``district``, the parcels' ``zoning``). A value that
        is not text, or blank, is an unknown district.
    districts : iterable of str
        The districts looked for, as the rulebook spells them.
    town_districts : iterable of str, optional
        Every district of the town (the rulebook's ``town_districts``). Given, a value that is a
        spelling of none of them nor of ``districts`` (a typo ``RA-l``, ``RA-1A``, a coded ``12``)
        is an unknown district too: it may be a listed one misspelt. None: any other text is a
        district the rulebook does not list (:func:`unlisted_districts` counts them).

    Returns
    -------
    Series
        Aligned with ``s``; missing (unknown district) where ``s`` is not text or blank, or
        names no district of ``town_districts``.

    Examples
    --------
    >>> d = norm_district(pd.Series(["RA1", " ra 1", "RA_1", "rc", "c-1", " ", None]), ["RA-1", "RA-2", "RC"])
    >>> d.tolist()[:5], d.isna().tolist()[5:]
    (['RA-1', 'RA-1', 'RA-1', 'RC', 'C-1'], [True, True])
    >>> t = norm_district(pd.Series(["RA-l", "c1", "ra 1"]), ["RA-1"], ["RA-1", "C-1"])  # the town's districts
    >>> t.isna().tolist(), t.tolist()[1:]
    ([True, False, False], ['C-1', 'RA-1'])
    >>> u = norm_district(pd.Series(["RA\u20131", "ra\u20111", "\uff32\uff21\uff0d\uff11", "RA-1\u200b", "\u2013"]), ["RA-1"])
    >>> u.tolist()[:4], u.isna().tolist()[4:]  # en dash, non-breaking hyphen, full width, zero-width space; a dash alone
    (['RA-1', 'RA-1', 'RA-1', 'RA-1'], [True])
    """
    spelled = {_district_key(d): str(d).strip().upper() for d in town_districts or ()}
    spelled.update({_district_key(d): str(d).strip().upper() for d in districts})
    closed = town_districts is not None

    def one(v: Any) -> str | None:
        if not isinstance(v, str) or not _district_key(v):
            return None
        if closed:
            return spelled.get(_district_key(v))
        return spelled.get(_district_key(v), v.strip().upper())

    return s.map(one)


def unlisted_districts(s: pd.Series, districts: Iterable[str],
                       town_districts: Iterable[str] | None = None) -> dict[str, int]:
    """Each distinct value of ``s`` that is neither blank nor a spelling of one of ``districts``
    (nor, when given, of ``town_districts``), as written (stripped), with how many features hold it.

    Without ``town_districts`` these values are read as districts the rulebook does not list (no
    strip, no board review); with it, as unknown districts. Either way the run says which
    (:func:`geoconstraints.rules.harvest.district_warnings`). A value that is not text (a number)
    is left out: it is an unknown district already, like a blank.

    Examples
    --------
    >>> unlisted_districts(pd.Series(["RA-1A", "C-1", "ra1", "RA-1A", None, " ", 12]), ["RA-1", "RR"])
    {'RA-1A': 2, 'C-1': 1}
    >>> unlisted_districts(pd.Series(["RA-1A", "c1", "ra1"]), ["RA-1"], ["RA-1", "C-1"])
    {'RA-1A': 1}
    """
    known = {_district_key(d) for d in (*districts, *(town_districts or ()))}
    out: dict[str, int] = {}
    for v in s:
        if isinstance(v, str) and _district_key(v) and _district_key(v) not in known:
            out[v.strip()] = out.get(v.strip(), 0) + 1
    return out


def unknown_district(v: Any) -> str:
    """How a strip or message names a district not known: ``district unknown``, with the value
    the layer gives when it gives one.

    Examples
    --------
    >>> unknown_district(None), unknown_district("RA-l")
    ('district unknown', 'district unknown ("RA-l")')
    """
    if v is None or (not isinstance(v, str) and pd.isna(v)) or not str(v).strip():
        return "district unknown"
    return f'district unknown ("{str(v).strip()}")'


def _district_key(v: Any) -> str:
    """A district name without case, spaces, dashes, underscores or dots (``ra-1`` -> ``RA1``), in
    its compatibility form (NFKC: full-width ``ＲＡ１`` is ``RA1``): every dash (Unicode ``Pd``: the
    en dash ``RA–1`` of a word processor, the non-breaking hyphen), the minus sign and invisible
    format characters (``Cf``: a zero-width space, a soft hyphen) are left out like the hyphen.

    Examples
    --------
    >>> [_district_key(v) for v in ("R.A.-1", "RA\u20131", "RA\u22121", "ra\u00ad1\u200b", "\uff32\uff21\uff0d\uff11")]
    ['RA1', 'RA1', 'RA1', 'RA1', 'RA1']
    """
    text = unicodedata.normalize("NFKC", str(v))
    return "".join(c for c in text if not (c.isspace() or c in "_.\u2212"
                                           or unicodedata.category(c) in ("Pd", "Cf"))).upper()


def point_districts(
    geoms: gpd.GeoSeries,
    *,
    zoning: gpd.GeoDataFrame | None = None,
    parcels: gpd.GeoDataFrame | None = None,
    districts: Iterable[str] = (),
    town_districts: Iterable[str] | None = None,
) -> pd.Series:
    """District at each geometry's representative point: the ``zoning`` layer, else the
    ``zoning`` field of the parcel holding the point. None where unknown; named as
    :func:`norm_district` names them (a spelling of one of ``districts`` spelled as there; with
    ``town_districts``, a value naming none of them is unknown)."""
    return _none_for_missing(norm_district(point_district_values(geoms, zoning=zoning, parcels=parcels), districts,
                                           town_districts))


def point_district_values(geoms: gpd.GeoSeries, *, zoning: gpd.GeoDataFrame | None = None,
                          parcels: gpd.GeoDataFrame | None = None) -> pd.Series:
    """The district value at each geometry's representative point as the layer writes it (not
    normalised; None where none), aligned with ``geoms`` (:func:`point_districts`)."""
    out = pd.Series(None, index=geoms.index, dtype=object)
    pts = shapely.point_on_surface(geoms.values)
    if zoning is not None and len(zoning):
        src, field = zoning, "district"
    elif parcels is not None and len(parcels) and "zoning" in parcels.columns:
        src, field = parcels, "zoning"
    else:
        return out
    gi, si = src.sindex.query(pts, predicate="within")
    if len(gi):
        first = pd.DataFrame({"g": gi, "s": si}).drop_duplicates("g")
        out.iloc[first["g"].to_numpy()] = src[field].to_numpy()[first["s"].to_numpy()]
    return _none_for_missing(out)


def zoning_source(zoning: gpd.GeoDataFrame | None, parcels: gpd.GeoDataFrame | None) -> str | None:
    """Where district information comes from: ``'zoning layer'``, ``'parcels.zoning field'``
    or None when neither exists."""
    if zoning is not None and len(zoning):
        return "zoning layer"
    if (
        parcels is not None
        and len(parcels)
        and "zoning" in parcels.columns
        and parcels["zoning"].notna().any()
    ):
        return "parcels.zoning field"
    return None


# ------------------------------------------------------------------------------------------
# property lines (HRV-021) and dwellings (HRV-022)


def property_line_buffers(
    parcels: gpd.GeoDataFrame,
    width_ft: float,
    *,
    districts: Sequence[str],
    reading: str = "c",
    zoning: gpd.GeoDataFrame | None = None,
    extent: BaseGeometry | None = None,
    touch_tolerance_ft: float = 1.0,
    rule_id: str = "HRV-021",
    unknown_districts: bool = False,
    town_districts: Sequence[str] | None = None,
    with_sources: bool = False,
) -> gpd.GeoDataFrame:
    """Buffer strips within ``width_ft`` of property lines in RA-1/RA-2/RC districts (HRV-021).

    Parameters
    ----------
    parcels : GeoDataFrame
        Parcels with ``feature_id`` (and ``zoning`` when there is no ``zoning`` layer).
    width_ft : float
        100 ft in Vestal; the strip extends this far on both sides of the line.
    districts : sequence of str
        Districts whose property lines are buffered (``RA-1, RA-2, RC``).
    reading : {'a', 'b', 'c'}
        ``a``: lines of parcels zoned in ``districts``; ``b``: the lines of neighbouring
        parcels where they border such a parcel (shared lines, gaps up to
        ``touch_tolerance_ft``); ``c``: both.
    zoning : GeoDataFrame, optional
        Zoning polygons with ``district``; wins over the parcels' ``zoning`` field.
    extent : shapely geometry, optional
        Clip to this area.
    touch_tolerance_ft : float
        Gap still counted as "bordering" (digitising slivers).
    unknown_districts : bool, default False
        Instead, the strips the parcels of *unknown* district would have if their district were
        a listed one (possible strips: no data is not no district).
    town_districts : sequence of str, optional
        Every district of the town: a value naming none of them is an unknown district
        (:func:`norm_district`).
    with_sources : bool, default False
        Also :data:`SOURCE_COLUMNS`: the line each strip is drawn around (a zoned parcel's
        boundary; a neighbour's line where it borders one), the zoned parcel's district value, and
        for a neighbour's line, the zoned parcel's id.

    Returns
    -------
    GeoDataFrame
        :data:`BUFFER_COLUMNS`; ``measured_from`` says ``property line of a <district> parcel``
        or ``property line bordering <district> parcel <id>`` (``district unknown``, with the
        value the layer gives if any, for the possible strips: :func:`unknown_district`).
    """
    if reading not in PROPERTY_LINE_READINGS:
        raise InputError(
            f"{reading!r} is not a valid option for property_line_reading, must be one of a, b, c"
        )
    crs = parcels.crs
    if not len(parcels):
        return _columns(empty_buffers(crs), with_sources)
    want = {str(d).strip().upper() for d in districts}
    near = (
        parcels.iloc[np.sort(parcels.sindex.query(extent, predicate="dwithin", distance=width_ft))]
        if extent is not None
        else parcels
    )
    if not len(near):
        return _columns(empty_buffers(crs), with_sources)
    # the near parcels and the ring of parcels touching them (whose zoning makes a near one "bordering")
    ring = np.unique(
        parcels.sindex.query(near.geometry.values, predicate="dwithin", distance=touch_tolerance_ft)[1]
    )
    pool = parcels.iloc[ring]
    raw = parcel_district_values(pool, zoning)
    dist = norm_district(raw, want, town_districts)
    zoned = dist.isna().to_numpy() if unknown_districts else dist.isin(want).to_numpy()
    # a parcel not zoned so (its district is the one covering most of it) whose part lies in such a district
    split = ~zoned & (dist.notna().to_numpy() if unknown_districts else True)
    if unknown_districts:
        dist = dist.astype(object).where(dist.notna(), raw.map(unknown_district))
    in_near = pool["feature_id"].astype(str).isin(set(near["feature_id"].astype(str))).to_numpy()
    frames: list[gpd.GeoDataFrame] = []
    districts_of = pd.DataFrame({"dist": dist, "raw": raw})
    if reading in ("a", "c"):
        frames.append(_zoned_line_strips(pool.loc[zoned & in_near], districts_of, width_ft, extent, rule_id))
        if zoning is not None and len(zoning):
            zd = norm_district(zoning["district"].astype(object), want, town_districts)
            zpick = zd.isna().to_numpy() if unknown_districts else zd.isin(want).to_numpy()
            frames.append(_split_zoned_line_strips(pool.loc[split & in_near], zoning, zpick, sorted(want), width_ft,
                                                   touch_tolerance_ft, extent, rule_id, unknown=unknown_districts))
    if reading in ("b", "c"):
        frames.append(_bordering_line_strips(pool.loc[~zoned & in_near], pool.loc[zoned], districts_of, width_ft,
                                             touch_tolerance_ft, extent, rule_id))
    frames = [f for f in frames if len(f)]
    return _columns(pd.concat(frames, ignore_index=True) if frames else empty_buffers(crs), with_sources)


def _zoned_line_strips(z: gpd.GeoDataFrame, districts_of: pd.DataFrame, width_ft: float,
                       extent: BaseGeometry | None, rule_id: str) -> gpd.GeoDataFrame:
    """Reading (a): strips along the whole property line of each zoned parcel ``z`` (``districts_of``:
    the district of each parcel as named, ``dist``, and as the layer writes it, ``raw``)."""
    zd = districts_of.loc[z.index]
    return _frame("property_line", rule_id, z["feature_id"], width_ft,
                  ("property line of a " + zd["dist"].astype(str) + " parcel").to_numpy(),
                  shapely.boundary(z.geometry.values), extent, z.crs, district_value=zd["raw"])


def _split_zoned_line_strips(cand: gpd.GeoDataFrame, zoning: gpd.GeoDataFrame, zpick: np.ndarray,
                             districts: Sequence[str], width_ft: float, touch_tolerance_ft: float,
                             extent: BaseGeometry | None, rule_id: str, *, unknown: bool = False) -> gpd.GeoDataFrame:
    """Reading (a) for a split-zoned parcel: strips along the stretches of the lines of each parcel of
    ``cand`` (whose own district, the one covering most of it, is not a listed one) that lie in a
    zoning polygon ``zpick`` of ``zoning`` (a listed district, named as in ``districts``; with
    ``unknown``, a district unknown: the possible strips). Such a stretch is "a property line within" that district though most of
    the parcel is not; stretches no longer than ``touch_tolerance_ft`` (a digitising sliver at a
    corner) are left out.

    Examples
    --------
    A parcel 60 % RR, 40 % RA-1: its lines in the RA-1 part (2 x 400 ft of side, 1,000 ft of base) are strips:

    >>> p = gpd.GeoDataFrame({"feature_id": ["P"]}, geometry=[shapely.box(0, 0, 1000, 1000)])
    >>> z = gpd.GeoDataFrame({"district": ["RA-1", "RR"]},
    ...                      geometry=[shapely.box(-50, -50, 1050, 400), shapely.box(-50, 400, 1050, 1050)])
    >>> s = _split_zoned_line_strips(p, z, np.array([True, False]), ["RA-1"], 100.0, 1.0, None, "HRV-021")
    >>> round(float(shapely.length(shapely.union_all(s["source_geometry"].to_numpy())))), s["measured_from"].iloc[0]
    (1800, 'property line within RA-1 zoning (a split-zoned parcel)')
    """
    zsel = zoning.loc[np.asarray(zpick, dtype=bool)]
    if not len(cand) or not len(zsel):
        return empty_buffers(cand.crs)
    ci, zi = zsel.sindex.query(cand.geometry.values, predicate="intersects")
    if not len(ci):
        return empty_buffers(cand.crs)
    stretch = shapely.intersection(shapely.boundary(cand.geometry.values[ci]), zsel.geometry.values[zi])
    parts, k = shapely.get_parts(stretch, return_index=True)
    keep = np.isin(shapely.get_type_id(parts), (1, 2))  # lines; a point where a line touches the polygon is no stretch
    # one stretch per run of line (a ring's start splits one): merged per parcel and zoning polygon
    merged = [shapely.get_parts(shapely.line_merge(shapely.multilinestrings(parts[keep & (k == j)])))
              for j in np.unique(k[keep])]
    k = np.concatenate([np.full(len(m), j) for j, m in zip(np.unique(k[keep]), merged)]) if merged else k[:0]
    parts = np.concatenate(merged) if merged else parts[:0]
    long = shapely.length(parts) > touch_tolerance_ft
    parts, k = parts[long], k[long]
    if not len(parts):
        return empty_buffers(cand.crs)
    zraw = zsel["district"].astype(object).to_numpy()[zi[k]]
    zname = (pd.Series(zraw, dtype=object).map(unknown_district) if unknown
             else norm_district(pd.Series(zraw, dtype=object), districts)).astype(str).to_numpy()
    mf = [f"property line within {n} zoning (a split-zoned parcel)" for n in zname]
    return _frame("property_line", rule_id, cand["feature_id"].astype(str).to_numpy()[ci[k]], width_ft, mf, parts,
                  extent, cand.crs, district_value=zraw)


def _bordering_line_strips(cand: gpd.GeoDataFrame, zpool: gpd.GeoDataFrame, districts_of: pd.DataFrame,
                           width_ft: float, touch_tolerance_ft: float, extent: BaseGeometry | None,
                           rule_id: str) -> gpd.GeoDataFrame:
    """Reading (b): strips along the lines of the parcels ``cand`` where they border a zoned
    parcel of ``zpool`` (gaps up to ``touch_tolerance_ft``; ``districts_of`` as for
    :func:`_zoned_line_strips`)."""
    if not len(zpool):
        return empty_buffers(cand.crs)
    ci, zi = zpool.sindex.query(cand.geometry.values, predicate="dwithin", distance=touch_tolerance_ft)
    if not len(ci):
        return empty_buffers(cand.crs)
    # the neighbour's line where it borders the zoned parcel (gaps up to the tolerance)
    shared = shapely.intersection(
        shapely.boundary(cand.geometry.values[ci]),
        shapely.buffer(zpool.geometry.values[zi], touch_tolerance_ft),
    )
    zids = zpool["feature_id"].astype(str).to_numpy()[zi]
    zd = districts_of.loc[zpool.index]
    mf = [f"property line bordering {d} parcel {i}" for d, i in zip(zd["dist"].astype(str).to_numpy()[zi], zids)]
    return _frame("property_line", rule_id, cand["feature_id"].astype(str).to_numpy()[ci], width_ft, mf, shared,
                  extent, cand.crs, district_value=zd["raw"].to_numpy()[zi], bordering=zids)


def dwelling_buffers(
    dwellings: gpd.GeoDataFrame,
    width_ft: float,
    *,
    districts: Sequence[str],
    zoning: gpd.GeoDataFrame | None = None,
    parcels: gpd.GeoDataFrame | None = None,
    extent: BaseGeometry | None = None,
    rule_id: str = "HRV-022",
    unknown_districts: bool = False,
    town_districts: Sequence[str] | None = None,
    with_sources: bool = False,
) -> gpd.GeoDataFrame:
    """Buffer strips within ``width_ft`` of residential dwellings in RR districts (HRV-022).

    A dwelling's district is the one at its representative point (``zoning`` layer, else the
    ``zoning`` field of the parcel holding it). A dwelling in another (or an unknown) district
    makes no buffer. A dwelling polygon is buffered from its walls. With ``unknown_districts``,
    the strips of the dwellings whose district is unknown instead (possible strips: such a
    dwelling may be in RR). With ``town_districts``, a value naming none of the town's districts
    is unknown (:func:`norm_district`). With ``with_sources``, also :data:`SOURCE_COLUMNS` (the
    dwelling, the district value at it).

    Returns
    -------
    GeoDataFrame
        :data:`BUFFER_COLUMNS`.
    """
    crs = dwellings.crs
    sel = _near(dwellings, extent, width_ft)
    if not len(sel):
        return _columns(empty_buffers(crs), with_sources)
    want = {str(d).strip().upper() for d in districts}
    raw = point_district_values(sel.geometry, zoning=zoning, parcels=parcels)
    dist = norm_district(raw, want, town_districts)
    keep = dist.isna().to_numpy() if unknown_districts else dist.isin(want).to_numpy()
    sel, raw = sel.loc[keep], raw.loc[keep]
    dist = dist.loc[keep].astype(object).where(dist.loc[keep].notna(), raw.map(unknown_district))
    mf = ("dwelling in " + dist.astype(str)).to_numpy()
    return _columns(_frame("dwelling", rule_id, sel["feature_id"], width_ft, mf, sel.geometry.values, extent, crs,
                           district_value=raw), with_sources)


# ------------------------------------------------------------------------------------------
# measuring


def acres_inside(
    areas: gpd.GeoDataFrame, strips: gpd.GeoDataFrame, *, by: str | None = "kind"
) -> pd.DataFrame:
    """Acres of buffer strip inside each area (overlaps between strips counted once).

    Parameters
    ----------
    areas : GeoDataFrame
        Harvest areas with ``feature_id``.
    strips : GeoDataFrame
        Buffer strips (:data:`BUFFER_COLUMNS`).
    by : str or None
        Group strips by this column (one column of acres per value), or ``None`` for the union
        of all strips (one column ``all``).

    Returns
    -------
    DataFrame
        Index ``feature_id`` of ``areas``; one float column of acres per group.
    """
    idx = pd.Index(areas["feature_id"].astype(str), name="feature_id")
    groups = {"all": strips} if by is None else {k: g for k, g in strips.groupby(by)}
    out = pd.DataFrame(index=idx)
    for key, g in groups.items():
        if not len(g):
            out[key] = 0.0
            continue
        union = shapely.union_all(g.geometry.values)
        out[key] = sqft_to_acres(shapely.area(shapely.intersection(areas.geometry.values, union)))
    return out


def buffers_inside(areas: gpd.GeoDataFrame, strips: gpd.GeoDataFrame) -> np.ndarray:
    """The part of each area covered by any strip (geometry array aligned with ``areas``)."""
    if not len(strips):
        return np.array([shapely.Polygon()] * len(areas), dtype=object)
    return shapely.intersection(areas.geometry.values, shapely.union_all(strips.geometry.values))


# ------------------------------------------------------------------------------------------
# every kind at once


@dataclass
class BufferBuild:
    """Buffer strips of every kind asked for, and what could not be built.

    Attributes
    ----------
    strips : GeoDataFrame
        :data:`BUFFER_COLUMNS` + geometry, clipped around the plan.
    possible : GeoDataFrame
        The strips that dwellings and parcels of unknown district would have if their district
        were a listed one (same columns; ``measured_from`` says ``district unknown``).
    missing : dict[str, str]
        Buffer kind -> why it was not built, or not built whole (an input layer missing: road
        strips from right-of-way polygons without the roads layer are partial; or a reason the
        caller adds: the rule is not in the rulebook), in :data:`BUFFER_KINDS` order.
    notes : dict[str, str]
        Buffer kind -> how it was measured (for the run's notes).
    why : dict[str, str]
        Buffer kind (of ``missing``) -> the key of its reason, for a rule to word it: ``no_streams``,
        ``no_roads``, ``row_only`` (strips from the right-of-way polygons alone), ``no_parcels``,
        ``no_dwellings``, ``no_zoning`` or ``rule_absent`` (the caller's).
    how : dict[str, str]
        Buffer kind (of ``notes``) -> the key of how it was measured: ``stream_perennial``,
        ``stream_intermittent``, ``road_row``, ``road_centre``, ``property_line_note``, ``dwelling_note``.
    sources, possible_sources : DataFrame
        :data:`SOURCE_COLUMNS` of each strip of ``strips`` (of ``possible``), on its index: what
        it is drawn around, kept apart from the strips, which are written as layers (a second
        geometry column is no column of a GIS layer). Missing where not told (a build made by hand).
    """

    strips: gpd.GeoDataFrame
    missing: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)
    possible: gpd.GeoDataFrame = field(default_factory=empty_buffers)
    sources: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SOURCE_COLUMNS))
    possible_sources: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SOURCE_COLUMNS))


def _apart(frames: list[gpd.GeoDataFrame], crs: Any) -> tuple[gpd.GeoDataFrame, pd.DataFrame]:
    """Strips with :data:`SOURCE_COLUMNS` (``with_sources``) as one layer of :data:`BUFFER_COLUMNS`
    and those columns apart, on the same index (:class:`BufferBuild`)."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_buffers(crs), pd.DataFrame(columns=SOURCE_COLUMNS)
    cat = pd.concat(frames, ignore_index=True)
    return (gpd.GeoDataFrame(cat[[*BUFFER_COLUMNS, "geometry"]], geometry="geometry", crs=crs),
            pd.DataFrame(cat[SOURCE_COLUMNS]))


def _stream_and_road(inputs: Mapping[str, Any], s: Mapping[str, Any], kinds: Sequence[str],
                     extent: Any, out: BufferBuild, frames: list) -> None:
    streams, roads, row = inputs.get("streams"), inputs.get("roads"), inputs.get("row")
    w, rid = s["width_ft"], s["rule_id"]
    if "stream" in kinds:
        if streams is None:
            out.missing["stream"], out.why["stream"] = "no streams layer", "no_streams"
        else:
            inter = bool(s.get("include_intermittent"))
            frames.append(stream_buffers(streams, w, include_intermittent=inter, extent=extent, rule_id=rid,
                                         with_sources=True))
            out.how["stream"] = "stream_intermittent" if inter else "stream_perennial"
            out.notes["stream"] = ("perennial and intermittent streams" if inter else
                                   "perennial streams only (intermittent streams excluded, switch "
                                   "include_intermittent=false)") + "; a stream of unknown kind counts as a stream"
    if "road" in kinds:
        if roads is None and row is None:
            out.missing["road"], out.why["road"] = "no roads or row layer", "no_roads"
        else:
            frames.append(road_buffers(roads, w, row=row, extent=extent, rule_id=rid, with_sources=True))
            out.how["road"] = "road_row" if row is not None else "road_centre"
            out.notes["road"] = ("measured from the right-of-way line (row layer); stretches of road outside every "
                                 "row polygon from their centre line" if row is not None
                                 else "measured from the road centre line (no row layer)")
            if roads is None:  # built from the row polygons, but a road without one is not known
                out.missing["road"] = ("no roads layer: only the right-of-way polygons given, a public road "
                                       "without one is not known")
                out.why["road"] = "row_only"


def _district_strips(inputs: Mapping[str, Any], settings: Mapping[str, Mapping[str, Any]], plan: list,
                     out: BufferBuild, frames: list, crs: Any) -> None:
    """The property-line and dwelling strips (and the possible ones of unknown districts) into
    ``frames`` and ``out.possible``; why a kind cannot be built into ``out.missing``."""
    parcels, zoning = inputs.get("parcels"), inputs.get("zoning")
    zsrc = zoning_source(zoning, parcels)
    maybe: list[gpd.GeoDataFrame] = []
    if "property_line" in settings:
        s = settings["property_line"]
        if parcels is None:
            out.missing["property_line"], out.why["property_line"] = "no parcels layer", "no_parcels"
        elif zsrc is None:
            out.missing["property_line"] = "no zoning layer and no parcels.zoning field"
            out.why["property_line"] = "no_zoning"
        else:
            kw = {"districts": s["districts"], "reading": str(s["reading"]), "zoning": zoning,
                  "extent": plan_extent(plan, s["clip_margin_ft"]), "touch_tolerance_ft": s["touch_tolerance_ft"],
                  "rule_id": s["rule_id"], "town_districts": s.get("town_districts"), "with_sources": True}
            frames.append(property_line_buffers(parcels, s["width_ft"], **kw))
            maybe.append(property_line_buffers(parcels, s["width_ft"], unknown_districts=True, **kw))
            out.notes["property_line"] = f"districts from the {zsrc}; reading {s['reading']}"
            out.how["property_line"] = "property_line_note"
    if "dwelling" in settings:
        s, dw = settings["dwelling"], inputs.get("dwellings")
        if dw is None:
            out.missing["dwelling"], out.why["dwelling"] = "no dwellings layer", "no_dwellings"
        elif zsrc is None:
            out.missing["dwelling"] = "no zoning layer and no parcels.zoning field"
            out.why["dwelling"] = "no_zoning"
        else:
            kw = {"districts": s["districts"], "zoning": zoning, "parcels": parcels,
                  "extent": plan_extent(plan, s["clip_margin_ft"]), "rule_id": s["rule_id"],
                  "town_districts": s.get("town_districts"), "with_sources": True}
            frames.append(dwelling_buffers(dw, s["width_ft"], **kw))
            maybe.append(dwelling_buffers(dw, s["width_ft"], unknown_districts=True, **kw))
            out.notes["dwelling"] = f"district at each dwelling from the {zsrc}"
            out.how["dwelling"] = "dwelling_note"
    out.possible, out.possible_sources = _apart(maybe, crs)


def build_buffers(
    inputs: Mapping[str, gpd.GeoDataFrame | None],
    settings: Mapping[str, Mapping[str, Any]],
    *,
    plan: Iterable[gpd.GeoDataFrame | None],
    crs: Any,
) -> BufferBuild:
    """Buffer strips of every kind in ``settings`` that the inputs allow.

    Property-line and dwelling strips come with the *possible* strips of the parcels and
    dwellings whose district is unknown (:attr:`BufferBuild.possible`): no data is not "not in
    a listed district".

    Parameters
    ----------
    inputs : mapping
        Role -> layer or None: ``streams``, ``roads``, ``row``, ``parcels``, ``zoning``,
        ``dwellings``.
    settings : mapping
        Kind (:data:`BUFFER_KINDS`) -> its numbers: ``width_ft``, ``clip_margin_ft``,
        ``rule_id``; ``include_intermittent`` (stream); ``districts``, ``reading``,
        ``touch_tolerance_ft`` (property_line); ``districts`` (dwelling); optional
        ``town_districts`` (property_line, dwelling: :func:`norm_district`). Kinds left out are
        not built (the caller says why in :attr:`BufferBuild.missing`). ``stream`` and
        ``road`` must share ``width_ft`` and ``clip_margin_ft`` when both are given.
    plan : iterable of GeoDataFrame or None
        The plan's layers: strips are built within ``clip_margin_ft`` of their bounding box.
    crs : CRS-like
        The working CRS (of the empty result).

    Returns
    -------
    BufferBuild

    Examples
    --------
    >>> s = gpd.GeoDataFrame({"feature_id": ["s1"]}, geometry=[shapely.LineString([(0, 0), (1000, 0)])])
    >>> ha = gpd.GeoDataFrame({"feature_id": ["h1"]}, geometry=[shapely.box(0, -100, 1000, 100)])
    >>> b = build_buffers({"streams": s}, {"stream": {"width_ft": 50, "clip_margin_ft": 0, "rule_id": "R-001"}},
    ...                   plan=[ha], crs=None)
    >>> round(float(b.strips.area.sum())), b.missing
    (100000, {})
    """
    out = BufferBuild(empty_buffers(crs), possible=empty_buffers(crs))
    frames: list[gpd.GeoDataFrame] = []
    plan = list(plan)
    sr = [k for k in ("stream", "road") if k in settings]
    if sr:
        s = settings[sr[0]]
        _stream_and_road(inputs, s, sr, plan_extent(plan, s["clip_margin_ft"]), out, frames)
    _district_strips(inputs, settings, plan, out, frames, crs)
    out.strips, out.sources = _apart(frames, crs)
    return out
