"""The static overview map of the report (matplotlib): inputs, findings, scale bar, north arrow.
"""

from __future__ import annotations

import base64
import io
import logging
import math
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely

from geoconstraints.io.roles import PLAN_ROLES, SITE_ROLES
from geoconstraints.output import styles
from geoconstraints.result import STATUS_COLUMN_PREFIX, status_column
from geoconstraints.rulebook.findings import STATUSES, scope_statuses, status_ranks, waived_flags
from geoconstraints.rules.flood import flood_zone_classes
from geoconstraints.units import FT_PER_MILE, ft_per_unit

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .result import Result

PRIMARY_ROLES = ("parcels",) + PLAN_ROLES + SITE_ROLES
"""Input roles drawn whole on the web map (other inputs are cut to the area of interest)."""


MAX_VECTOR_FEATURES = 10_000
"""Above this many features (in view) a layer of the overview map is drawn as a raster at the
image's own resolution instead of as vector shapes: each pixel takes the most severe status
(or the layer's colour) of the features covering its centre, and a feature covering no pixel's
centre marks the pixel of its bounding box's centre, so none vanishes for being smaller than a
pixel. A county of a million
parcels draws in seconds and the PNG stays the same size."""

FOCUS_ROLES: dict[str, tuple[str, ...]] = {
    "harvest": PLAN_ROLES,
    "stormwater": ("disturbance",), "flood-site": ("footprints",), "seqr": SITE_ROLES,
    "screen": (),
}
"""The plan roles each command's maps are framed on (besides the findings); another command is
framed on any plan or site role present."""


def focus_frames(result: Result) -> list[gpd.GeoDataFrame]:
    """The frames whose extent the maps show: the plan (or else the parcels) and the findings.

    A harvest plan or site plan is shown, not the whole town its parcels layer covers; a
    parcel screening shows every parcel.
    """
    f = result.findings
    g = f.geometry
    # only the extent is read: the located geometries, without the text columns (a county has millions)
    frames = [gpd.GeoDataFrame(geometry=g[g.notna() & ~g.is_empty], crs=f.crs)] if len(f) else []
    layers = result.layers
    if layers is None:
        return frames
    roles = FOCUS_ROLES.get(result.command, PLAN_ROLES + SITE_ROLES)
    plan = [g for r in roles if (g := layers.get_layer(r)) is not None]
    if plan:
        return frames + plan
    parcels = layers.get_layer("parcels")
    return frames + ([parcels] if parcels is not None else [])


def nice_scale_length(span_ft: float, fraction: float = 0.25) -> tuple[float, str]:
    """A round scale-bar length near ``fraction`` of ``span_ft``, and its label.

    Lengths under half a mile are 1, 2 or 5 × 10^k feet; longer ones are 0.5, 1, 2 or
    5 × 10^k miles.

    Parameters
    ----------
    span_ft : float
        Width of the map in feet (> 0).
    fraction : float
        Target share of the width.

    Returns
    -------
    (float, str)
        Length in feet and its label (``"500 ft"``, ``"1 mi"``).

    Examples
    --------
    >>> nice_scale_length(2000.0)
    (500.0, '500 ft')
    >>> nice_scale_length(30000.0)
    (5280.0, '1 mi')
    """
    if not span_ft > 0 or not math.isfinite(span_ft):
        raise ValueError(f"map width must be a positive number of feet, got {span_ft!r}")
    target = span_ft * fraction
    if target < FT_PER_MILE / 2:
        unit, per = "ft", 1.0
    else:
        unit, per = "mi", FT_PER_MILE
    t = target / per
    k = 10 ** math.floor(math.log10(t))
    step = max((m * k for m in (1, 2, 5) if m * k <= t), default=k)
    label = f"{step:,.0f} ft" if unit == "ft" else f"{step:g} mi"
    return step * per, label


def draw_scale_bar(ax: Axes, ft_per_unit: float, *, segments: int = 2) -> None:
    """Draw an alternating black/white scale bar in the lower left of ``ax`` (feet or miles)."""
    from matplotlib.patches import Rectangle

    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    length_ft, label = nice_scale_length((x1 - x0) * ft_per_unit)
    length = length_ft / ft_per_unit
    h = (y1 - y0) * 0.012
    bx, by = x0 + (x1 - x0) * 0.04, y0 + (y1 - y0) * 0.05
    ax.add_patch(Rectangle((bx - (x1 - x0) * 0.015, by - h * 2.2), length + (x1 - x0) * 0.03, h * 6.5,
                           facecolor="white", edgecolor="none", alpha=0.8, zorder=300))
    seg = length / segments
    for i in range(segments):
        ax.add_patch(Rectangle((bx + i * seg, by), seg, h, facecolor="black" if i % 2 == 0 else "white",
                               edgecolor="black", linewidth=0.8, zorder=301))
    ax.text(bx, by + h * 1.6, "0", ha="center", va="bottom", fontsize=7, zorder=302)
    ax.text(bx + length, by + h * 1.6, label, ha="center", va="bottom", fontsize=7, zorder=302)


def draw_north_arrow(ax: Axes) -> None:
    """Draw a north arrow (grid north of the projected CRS) in the upper right of ``ax``."""
    ax.annotate("N", xy=(0.95, 0.95), xytext=(0.95, 0.84), xycoords="axes fraction",
                ha="center", va="center", fontsize=11, fontweight="bold", zorder=302,
                arrowprops={"facecolor": "black", "edgecolor": "black", "width": 3, "headwidth": 10,
                            "headlength": 9},
                bbox={"boxstyle": "circle,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})


def _families(gdf: gpd.GeoDataFrame) -> dict[str, gpd.GeoDataFrame]:
    """Split a frame into point / line / polygon parts (vectorized on geometry type ids)."""
    g = gdf[gdf.geometry.notna() & ~gdf.geometry.is_empty]
    if not len(g):
        return {}
    tid = shapely.get_type_id(g.geometry.values)
    # 0 point, 4 multipoint; 1 linestring, 2 linearring, 5 multilinestring; 3 polygon, 6 multipolygon
    out = {}
    for fam, ids in (("polygon", (3, 6)), ("line", (1, 2, 5)), ("point", (0, 4))):
        part = g[np.isin(tid, ids)]
        if len(part):
            out[fam] = part
    if np.isin(tid, (7,)).any():  # geometry collections: explode into their parts
        gc = g[tid == 7].explode(index_parts=False)
        for fam, part in _families(gc).items():
            out[fam] = gpd.GeoDataFrame(
                gpd.pd.concat([out[fam], part]) if fam in out else part, crs=g.crs)
    return out


def _draw(ax: Axes, gdf: gpd.GeoDataFrame, st: styles.LayerStyle, z: int, handles: list | None,
          label: str | None = None, alpha_scale: float = 1.0) -> None:
    """Draw a frame with a web style; append one legend handle (none when ``handles`` is None)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    parts = _families(gdf)
    if not parts:
        return
    dash: Any = (0.0, tuple(float(v) / 2 for v in st.dash.split())) if st.dash else "solid"
    for fam, part in parts.items():
        if fam == "polygon":
            _plot_polygons(ax, part.geometry.values, facecolor=st.fill if st.fill else "none",
                           alpha=None, edgecolor=st.color, linewidth=st.weight * 0.75, linestyle=dash, zorder=z)
            if st.fill:  # fill transparency without fading the outline
                for coll in ax.collections[-1:]:
                    coll.set_facecolor([(*_rgb(st.fill), st.fill_opacity * alpha_scale)])
        elif fam == "line":
            part.plot(ax=ax, color=st.color, linewidth=st.weight * 0.75, linestyle=dash,
                      alpha=st.opacity * alpha_scale, zorder=z)
        else:
            size = st.radius * (1.6 if alpha_scale >= 1 else 1.0)  # inputs' markers smaller
            part.plot(ax=ax, color=st.fill or st.color, edgecolor=st.color, markersize=size ** 2,
                      linewidth=0.8, alpha=min(1.0, st.opacity * alpha_scale), zorder=z + 1)
    if handles is None:
        return
    fam = "polygon" if "polygon" in parts else ("line" if "line" in parts else "point")
    text = (label or st.label).replace("$", r"\$")  # matplotlib would read $...$ as math
    text = text if len(text) <= 44 else text[:43] + "…"
    if fam == "polygon":
        handles.append(Patch(facecolor=(*_rgb(st.fill), st.fill_opacity) if st.fill else "none",
                             edgecolor=st.color, linestyle=dash, label=text))
    elif fam == "line":
        handles.append(Line2D([], [], color=st.color, linewidth=st.weight * 0.75, linestyle=dash, label=text))
    else:
        handles.append(Line2D([], [], marker="o", linestyle="none", markerfacecolor=st.fill or st.color,
                              markeredgecolor=st.color, markersize=st.radius * 1.4, label=text))


def polygon_paths(geoms: np.ndarray) -> list[Any]:
    """The matplotlib paths of (multi)polygons as ``GeoSeries.plot`` makes them: rings normalized,
    each ring closed, one compound path per geometry; built from coordinate arrays (geopandas
    makes a ``PathPatch`` per polygon, seconds for ten thousand).

    Examples
    --------
    >>> from shapely.geometry import box
    >>> p = polygon_paths(np.array([box(0, 0, 1, 1)]))[0]
    >>> p.vertices.tolist(), p.codes.tolist()
    ([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]], [1, 2, 2, 2, 79])
    """
    from matplotlib.path import Path

    parts, part_geom = shapely.get_parts(shapely.normalize(np.asarray(geoms, dtype=object)), return_index=True)
    rings, ring_part = shapely.get_rings(parts, return_index=True)
    xy = shapely.get_coordinates(rings)
    n = shapely.get_num_coordinates(rings)
    ends = np.cumsum(n)
    codes = np.full(len(xy), Path.LINETO, dtype=Path.code_type)
    codes[ends - n] = Path.MOVETO
    codes[ends - 1] = Path.CLOSEPOLY
    per_geom = np.bincount(part_geom[ring_part], weights=n, minlength=len(geoms)).astype(np.int64)
    cut = np.cumsum(per_geom)[:-1]
    return [Path(v, c) for v, c in zip(np.split(xy, cut), np.split(codes, cut))]


def _plot_polygons(ax: Axes, geoms: np.ndarray, **kwargs: Any) -> None:
    """``GeoSeries(geoms).plot(ax=ax, **kwargs)`` for non-empty (multi)polygons in a projected CRS:
    the same paths (:func:`polygon_paths`) in one collection with the same style, set in the same order."""
    from matplotlib.collections import PathCollection

    coll = PathCollection(polygon_paths(geoms), facecolor=kwargs.pop("facecolor"), **kwargs)
    ax.set_aspect("equal")
    ax.add_collection(coll, autolim=True)
    ax.autoscale_view()


def rank_grid(geoms: np.ndarray, ranks: np.ndarray, bounds: tuple[float, float, float, float],
              shape: tuple[int, int], *, memo: PixelCover | None = None) -> np.ndarray:
    """Rasterize features: the smallest rank of the features at each pixel (``-1`` where none).

    A pixel gets the features that contain or touch its centre, and a feature touching no pixel's
    centre marks the pixel the centre of its bounding box falls in, so every feature marks at
    least one pixel however small it is. Each distinct
    geometry is tested (prepared) against the centres of the pixels in its bounding box only.

    Parameters
    ----------
    geoms : ndarray of shapely geometries
        Non-empty geometries in the map's CRS.
    ranks : ndarray of int
        Rank of each geometry (0 = drawn on top, e.g. the most severe status).
    bounds : (xmin, ymin, xmax, ymax)
        The extent of the image.
    shape : (rows, columns)
        Size of the image in pixels.
    memo : PixelCover, optional
        The pixels of geometries rasterized before on this grid, reused for the same objects
        (a county's parcels: the parcels layer, then again as findings).

    Returns
    -------
    ndarray of int, shape ``shape``
        Row 0 is the top (north) edge.

    Examples
    --------
    >>> from shapely.geometry import Point, box
    >>> rank_grid(np.array([box(0, 0, 2, 1), box(1, 0, 3, 1), Point(3.5, 0.5)]), np.array([1, 0, 2]),
    ...           (0.0, 0.0, 4.0, 1.0), (1, 4)).tolist()
    [[1, 0, 0, 2]]
    """
    ny, nx = shape
    sentinel = np.iinfo(np.int32).max
    grid = np.full(ny * nx, sentinel, dtype=np.int64)
    geoms = np.asarray(geoms, dtype=object)
    ranks = np.asarray(ranks, dtype=np.int64)
    if len(geoms):
        geoms, ranks = _distinct_objects(geoms, ranks)
        gi, cell = (memo if memo is not None else PixelCover()).pixels(geoms, bounds, shape)
        np.minimum.at(grid, cell, ranks[gi])
    grid[grid == sentinel] = -1
    return grid.reshape(ny, nx)


def _pixels(geoms: np.ndarray, bounds: tuple[float, float, float, float],
            shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(geometry index, flat pixel index) of every pixel each of ``geoms`` marks in :func:`rank_grid`:
    the pixel centres it contains or touches, else the pixel of its bounding box's centre (not its
    centroid: at 1,000,000 parcels 40 % of them are on no pixel's centre, and their centroids took
    1.4 s)."""
    ny, nx = shape
    xmin, ymin, xmax, ymax = bounds
    px, py = (xmax - xmin) / nx, (ymax - ymin) / ny
    boxes = shapely.bounds(geoms)
    gi, cell = _box_pixels(boxes, bounds, shape)
    xs = xmin + (cell % nx + 0.5) * px  # the pixel centres, as pixel_range computes them
    ys = ymax - (cell // nx + 0.5) * py
    hit = _hits(geoms, gi, xs, ys)
    lost = np.flatnonzero(np.bincount(gi[hit], minlength=len(geoms)) == 0)  # on no pixel's centre
    x, y = (boxes[lost, 0] + boxes[lost, 2]) / 2, (boxes[lost, 1] + boxes[lost, 3]) / 2
    col = np.floor((x - xmin) / px).astype(np.int64)
    row = np.floor((ymax - y) / py).astype(np.int64)
    inside = (col >= 0) & (col < nx) & (row >= 0) & (row < ny)
    return (np.concatenate([gi[hit], lost[inside]]),
            np.concatenate([cell[hit], row[inside] * nx + col[inside]]))


class PixelCover:
    """The pixels of the geometries :func:`rank_grid` has rasterized on one grid, by geometry
    object: a county's parcels are the parcels layer of the overview, then the same objects again
    as the findings and the parcels whose findings were left out (a million pixel-centre tests
    saved at 1,000,000 parcels). Keeps the largest set of objects it was given (and them alive,
    so their ``id`` stays theirs); other grids and other objects are computed as they come.

    Examples
    --------
    >>> from shapely.geometry import box
    >>> memo, a, b = PixelCover(), box(0, 0, 2, 1), box(1, 0, 3, 1)
    >>> memo.pixels(np.array([a, b]), (0.0, 0.0, 4.0, 1.0), (1, 4))[1].tolist()
    [0, 1, 1, 2]
    >>> memo.pixels(np.array([b]), (0.0, 0.0, 4.0, 1.0), (1, 4))[1].tolist()  # b's pixels, remembered
    [1, 2]
    """

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._geoms = np.empty(0, dtype=object)
        self._ids: Any = pd.Index(np.empty(0, dtype=np.int64))
        self._start = np.zeros(1, dtype=np.int64)
        self._cells = np.empty(0, dtype=np.int64)

    def pixels(self, geoms: np.ndarray, bounds: tuple[float, float, float, float],
               shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """(index into ``geoms``, flat pixel index) of every pixel each of ``geoms`` (distinct
        objects) marks; the pixels of objects seen before on this grid are not computed again."""
        key = (tuple(bounds), tuple(shape))
        ids = np.fromiter(map(id, geoms), dtype=np.int64, count=len(geoms))
        pos = self._ids.get_indexer(ids) if key == self._key else np.full(len(geoms), -1, dtype=np.int64)
        new = np.flatnonzero(pos < 0)
        gi, cell = _pixels(geoms[new], bounds, shape)
        gi = new[gi]
        if len(new) > len(self._geoms):  # remember the largest set (the parcels layer)
            self._remember(key, geoms[new], ids[new], new, gi, cell)
        old = np.flatnonzero(pos >= 0)
        if not len(old):
            return gi, cell
        n = np.diff(self._start)[pos[old]]
        at = np.repeat(self._start[pos[old]] - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
        return np.concatenate([gi, np.repeat(old, n)]), np.concatenate([cell, self._cells[at]])

    def _remember(self, key: tuple[Any, ...], geoms: np.ndarray, ids: np.ndarray, index: np.ndarray,
                  gi: np.ndarray, cell: np.ndarray) -> None:
        """Keep the pixels of ``geoms`` (``index``: their positions in the ``gi`` numbering)."""
        local = np.searchsorted(index, gi)  # index is sorted: positions among geoms
        order = np.argsort(local, kind="stable")
        self._key, self._geoms, self._ids = key, geoms, pd.Index(ids)
        self._start = np.concatenate([[0], np.cumsum(np.bincount(local, minlength=len(geoms)))]).astype(np.int64)
        self._cells = cell[order]


Raster = tuple[tuple[float, float, float, float], tuple[int, int], PixelCover]
"""The overview's pixel grid for layers drawn as a raster: (bounds, (rows, columns), the pixels of
the geometries drawn so far)."""


PREPARE_TESTS_PER_GEOMETRY = 2.0
"""Geometries are prepared (GEOS indexes their edges) for the pixel-centre tests of
:func:`rank_grid` only when there are more tests than this per geometry: a county's parcels
smaller than a pixel are tested once or not at all, and preparing a million of them costs more
than the tests."""


def _hits(geoms: np.ndarray, gi: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """``shapely.intersects_xy(geoms[gi], xs, ys)``, the geometries prepared first where
    :data:`PREPARE_TESTS_PER_GEOMETRY` says it pays."""
    if len(gi) > PREPARE_TESTS_PER_GEOMETRY * len(geoms):
        fresh = ~shapely.is_prepared(geoms)
        shapely.prepare(geoms)
        hit = shapely.intersects_xy(geoms[gi], xs, ys)
        shapely.destroy_prepared(geoms[fresh])  # the findings' objects live on in the Result: free their indexes
    else:
        hit = shapely.intersects_xy(geoms[gi], xs, ys)
    return hit


def _distinct_objects(geoms: np.ndarray, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each geometry object once (several findings of one parcel share it) with its smallest rank."""
    codes, _ = pd.factorize(np.fromiter(map(id, geoms), dtype=np.int64, count=len(geoms)))
    sentinel = np.iinfo(np.int64).max
    best = np.full(int(codes.max()) + 1, sentinel, dtype=np.int64)
    np.minimum.at(best, codes, ranks)
    first = np.full(len(best), len(geoms), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(geoms)))
    return geoms[first], best


def pixel_range(lo: np.ndarray, hi: np.ndarray, start: float, step: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first and last index ``i`` in ``[0, n)`` with ``lo <= start + (i + 0.5) * step <= hi``
    (``step`` may be negative: rows counted down from the top), exact in floating point: the
    estimate from a division is moved by one where the centre computed as the grid computes it
    says so. An empty range has first > last.

    Examples
    --------
    >>> pixel_range(np.array([0.5, 1.2]), np.array([0.5, 3.0]), 0.0, 1.0, 4)
    (array([0, 1]), array([0, 2]))
    >>> pixel_range(np.array([0.0]), np.array([1.0]), 4.0, -1.0, 4)  # rows from y = 4 down: centre 0.5 is row 3
    (array([3]), array([3]))
    """
    a, b = (lo, hi) if step > 0 else (hi, lo)
    i0 = np.ceil((a - start) / step - 0.5).astype(np.int64)
    i1 = np.floor((b - start) / step - 0.5).astype(np.int64)

    def inside(i: np.ndarray) -> np.ndarray:
        c = start + (i + 0.5) * step
        return (c >= lo) & (c <= hi)

    i0 = np.where(inside(i0 - 1), i0 - 1, np.where(inside(i0), i0, i0 + 1))
    i1 = np.where(inside(i1 + 1), i1 + 1, np.where(inside(i1), i1, i1 - 1))
    return np.maximum(i0, 0), np.minimum(i1, n - 1)


def _box_pixels(boxes: np.ndarray, bounds: tuple[float, float, float, float],
                shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(geometry index, flat pixel index) of every pixel centre inside each bounding box."""
    ny, nx = shape
    xmin, ymin, xmax, ymax = bounds
    c0, c1 = pixel_range(boxes[:, 0], boxes[:, 2], xmin, (xmax - xmin) / nx, nx)
    r0, r1 = pixel_range(boxes[:, 1], boxes[:, 3], ymax, -(ymax - ymin) / ny, ny)
    w, h = np.maximum(c1 - c0 + 1, 0), np.maximum(r1 - r0 + 1, 0)
    n = w * h
    gi = np.repeat(np.arange(len(boxes)), n)
    k = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    wg = w[gi]
    return gi, (r0[gi] + k // wg) * nx + c0[gi] + k % wg


def _draw_raster(ax: Axes, geoms: np.ndarray, ranks: np.ndarray, colors: list[tuple[float, float, float, float]],
                 raster: Raster, z: int) -> None:
    """Draw features as an RGBA image: the colour of each pixel's smallest rank (see :func:`rank_grid`)."""
    bounds, shape, memo = raster
    grid = rank_grid(geoms, ranks, bounds, shape, memo=memo)
    lut = np.array(list(colors) + [(0.0, 0.0, 0.0, 0.0)], dtype=float)
    img = lut[np.where(grid < 0, len(colors), grid)]
    xmin, ymin, xmax, ymax = bounds
    ax.imshow(img, extent=(xmin, xmax, ymin, ymax), origin="upper", interpolation="nearest", zorder=z,
              aspect="auto")


def _layer_raster_color(st: styles.LayerStyle, alpha_scale: float = 1.0) -> tuple[float, float, float, float]:
    """The one colour of a layer drawn as a raster: its fill (or stroke) colour, at least 35 % opaque."""
    alpha = max(st.fill_opacity if st.fill else 0.35, 0.35) * alpha_scale
    return (*_rgb(st.fill or st.color), min(1.0, alpha))


def _draw_layer(ax: Axes, gdf: gpd.GeoDataFrame, st: styles.LayerStyle, z: int, handles: list | None,
                raster: Raster | None,
                label: str | None = None, alpha_scale: float = 1.0) -> None:
    """:func:`_draw`, or the raster of :func:`_draw_raster` when the layer has more than
    :data:`MAX_VECTOR_FEATURES` features and ``raster`` (:data:`Raster`) is given."""
    if raster is None or len(gdf) <= MAX_VECTOR_FEATURES:
        _draw(ax, gdf, st, z, handles, label=label, alpha_scale=alpha_scale)
        return
    from matplotlib.patches import Patch

    g = gdf.geometry.values
    g = np.asarray(g[~(shapely.is_missing(g) | shapely.is_empty(g))], dtype=object)
    color = _layer_raster_color(st, alpha_scale)
    _draw_raster(ax, g, np.zeros(len(g), dtype=np.int64), [color], raster, z)
    if handles is not None:
        text = (label or st.label).replace("$", r"\$")
        text = text if len(text) <= 44 else text[:43] + "…"
        handles.append(Patch(facecolor=color, edgecolor="none", label=text))


def _rgb(hex_color: str) -> tuple[float, float, float]:
    h = hex_color.lstrip("#")
    return tuple(int(h[i:i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]


def _bounds(frames: Iterable[gpd.GeoDataFrame]) -> tuple[float, float, float, float] | None:
    boxes = [f.total_bounds for f in frames if f is not None and len(f) and f.geometry.notna().any()]
    boxes = [b for b in boxes if np.all(np.isfinite(b))]
    if not boxes:
        return None
    a = np.array(boxes)
    return float(a[:, 0].min()), float(a[:, 1].min()), float(a[:, 2].max()), float(a[:, 3].max())


def _frame_extent(bounds: tuple[float, float, float, float], aspect: float, margin: float,
                  min_span: float) -> tuple[float, float, float, float]:
    """Grow ``bounds`` by ``margin`` (share) and to the axes' width/height ``aspect``."""
    x0, y0, x1, y1 = bounds
    w, h = max(x1 - x0, min_span), max(y1 - y0, min_span)
    w, h = w * (1 + 2 * margin), h * (1 + 2 * margin)
    if w / h < aspect:
        w = h * aspect
    else:
        h = w / aspect
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2


def most_severe_per_geometry(findings: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """One finding per distinct geometry: the most severe (waived findings rank last).

    Parameters
    ----------
    findings : GeoDataFrame
        Findings with ``status`` and ``waived`` columns.

    Returns
    -------
    GeoDataFrame
        A subset of ``findings`` (rows with an empty geometry dropped).
    """
    f = findings[findings.geometry.notna() & ~findings.geometry.is_empty]
    if not len(f):
        return f
    rank = f["status"].map({s: i for i, s in enumerate(STATUSES)}).fillna(len(STATUSES))
    rank = rank + (f["waived"].astype(str) != "") * len(STATUSES)
    key = shapely.to_wkb(shapely.normalize(f.geometry.values), hex=True)
    order = gpd.pd.DataFrame({"rank": rank.values, "key": key}, index=f.index).sort_values("rank", kind="stable")
    keep = order.drop_duplicates("key").index
    return f.loc[f.index.isin(keep)]


def status_rank(f: pd.DataFrame, unknown: int) -> np.ndarray:
    """The drawing rank of each finding: its status's place in :data:`STATUSES` (``unknown`` for
    another value), plus ``len(STATUSES)`` when it is waived (non-empty ``waived`` text); computed
    once per distinct value.

    Examples
    --------
    >>> status_rank(pd.DataFrame({"status": ["pass", "violation", "odd"], "waived": ["", "yes", ""]}), 4).tolist()
    [4, 5, 4]
    """
    rank = status_ranks(f["status"], unknown)
    if "waived" in f:
        rank = rank + waived_flags(f["waived"]) * len(STATUSES)
    return rank


def in_view(geoms: np.ndarray, view: Any) -> np.ndarray:
    """``shapely.intersects(geoms, view)`` for a rectangle ``view``: decided by the bounding box
    where it lies wholly inside or outside the view, by GEOS only for the others.

    Examples
    --------
    >>> from shapely.geometry import LineString, Point, box
    >>> in_view(np.array([Point(1, 1), Point(5, 5), LineString([(-1, 3), (3, -1)]), None]), box(0, 0, 2, 2)).tolist()
    [True, False, True, False]
    """
    geoms = np.asarray(geoms, dtype=object)
    b = shapely.bounds(geoms)  # NaN for a missing or empty geometry: decided by GEOS
    x0, y0, x1, y1 = shapely.bounds(view)
    inside = (b[:, 0] >= x0) & (b[:, 2] <= x1) & (b[:, 1] >= y0) & (b[:, 3] <= y1)
    outside = (b[:, 2] < x0) | (b[:, 0] > x1) | (b[:, 3] < y0) | (b[:, 1] > y1)
    todo = ~(inside | outside)
    inside[todo] = shapely.intersects(geoms[todo], view)
    return inside


def _draw_findings_raster(ax: Axes, f: gpd.GeoDataFrame, totals: Any,
                          raster: Raster,
                          handles: list) -> None:
    """Findings as one raster, each pixel in the colour of its most severe status (waived ones rank last)."""
    from matplotlib.patches import Patch

    k = len(STATUSES)
    rank = status_rank(f, unknown=k - 1)
    colors = []
    for status in STATUSES:
        st = styles.status_style(status, "polygon")
        colors.append((*_rgb(st.fill or st.color), 0.45 if status in ("pass", "info") else 0.8))
    _draw_raster(ax, np.asarray(f.geometry.values, dtype=object), rank, colors + colors, raster, 100)
    for status, color in zip(STATUSES, colors):
        n = int(totals.get(status, 0))
        if n:
            label = f"{styles.STATUS_LABELS[status]} ({n} finding{'s' if n != 1 else ''})"
            handles.append(Patch(facecolor=color, edgecolor="none", label=label))


def parcel_geometry(result: Result, parcel: str) -> Any:
    """The geometry of parcel ``parcel`` (by ``feature_id``) from the inputs or the parcels table."""
    cands: list[gpd.GeoDataFrame] = []
    parcels = result.layers.get_layer("parcels") if result.layers is not None else None
    if parcels is not None:
        cands.append(parcels)
    t = result.tables.get("parcels")
    if isinstance(t, gpd.GeoDataFrame):
        cands.append(t)
    for g in cands:
        for col in ("feature_id", "parcel_id"):
            if col in g.columns:
                hit = g[g[col].astype(str) == str(parcel)]
                if len(hit):
                    return shapely.union_all(hit.geometry.values)
    return None


def render_overview(result: Result, *, parcel: str | None = None, width_in: float = 9.0,
                    height_in: float = 6.5, dpi: int = 110) -> bytes:
    """Draw the overview map of ``result`` and return it as PNG bytes.

    Parameters
    ----------
    result : Result
    parcel : str, optional
        Zoom to this parcel (``feature_id``), outline it, and draw only its findings.
    width_in, height_in : float
        Figure size in inches (the legend sits to the right of the map).
    dpi : int
        Resolution.

    Returns
    -------
    bytes
        A PNG image.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=dpi)
    ax = fig.add_axes((0.01, 0.02, 0.70, 0.96))
    ax.set_facecolor("#fbfbf8")
    crs = result.crs
    handles: list = []
    findings = _working(result.findings, crs)
    if findings is not None and parcel is not None:
        findings = findings[(findings["subject_id"] == str(parcel))
                            & findings["subject_layer"].isin(["parcels", ""])]
    layers = result.layers
    inputs = {r: _working(layers.get_layer(r), crs) for r in layers} if layers is not None else {}
    inputs = {r: g for r, g in inputs.items() if g is not None}

    pgeom = parcel_geometry(result, parcel) if parcel is not None else None
    bounds, margin = _overview_bounds(result, pgeom, inputs)
    if bounds is None:
        ax.text(0.5, 0.5, "no mapped features", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return _png(fig)
    box_w, box_h = fig.get_size_inches() * np.array([0.70, 0.96])
    ft = ft_per_unit(crs) or 1.0
    extent = _frame_extent(bounds, box_w / box_h, margin, min_span=200.0 / ft)
    # pixel grid of the map's axes, for layers drawn as a raster
    raster: Raster = (extent, (max(1, round(box_h * dpi)), max(1, round(box_w * dpi))), PixelCover())
    view = shapely.box(*extent)

    z = _draw_inputs(ax, inputs, view, handles, raster, result.rulebook)
    _draw_derived(ax, result, view, handles, raster, z)
    if pgeom is not None:  # the parcel of a one-parcel report
        _draw_parcel_outline(ax, pgeom, crs, str(parcel), handles)
    left_out = left_out_parcels(result) if parcel is None else None  # a handout: screened with every finding
    totals: Any = None
    if left_out is not None:  # the parcels whose findings were left out of memory, in their worst status
        findings = pd.concat([f for f in (_drawn_columns(findings), left_out) if f is not None], ignore_index=True)
        findings = gpd.GeoDataFrame(findings, geometry="geometry", crs=left_out.crs)
        totals = result.counts()  # the legend counts every finding, as with them all in memory
    if findings is not None and len(findings):
        _draw_findings(ax, findings, view, handles, raster, one_parcel=parcel is not None, totals=totals)
    _finish_map(fig, ax, extent, crs, handles)
    return _png(fig)


def _working(g: gpd.GeoDataFrame | None, crs: Any) -> gpd.GeoDataFrame | None:
    """``g`` in the working CRS ``crs``; None for a missing or empty frame."""
    if g is None or not isinstance(g, gpd.GeoDataFrame) or not len(g):
        return None
    if crs is not None and g.crs is not None and not g.crs.equals(crs):
        return g.to_crs(crs)
    return g


def _overview_bounds(result: Result, pgeom: Any,
                     inputs: dict[str, gpd.GeoDataFrame]) -> tuple[tuple[float, float, float, float] | None, float]:
    """The bounds the map frames and the margin around them: the parcel of a one-parcel report,
    else the plan and findings, the derived layers or the inputs."""
    if pgeom is not None:
        x0, y0, x1, y1 = (float(v) for v in shapely.bounds(pgeom))
        return (x0, y0, x1, y1), 0.35
    bounds = _bounds(focus_frames(result)) or _bounds(result.derived.values()) or _bounds(inputs.values())
    return bounds, 0.06


def _draw_inputs(ax: Axes, inputs: dict[str, gpd.GeoDataFrame], view: Any, handles: list,
                 raster: Raster, rulebook: Any = None) -> int:
    """The inputs in ``view``, lightly (flood zones by zone, FLD-002's floodway-like areas apart as the
    rulebook reads them, an SFHA zone whose floodway the layer's ZONE_SUBTY cannot tell labelled
    "floodway not determined"); returns the next z-order."""
    z = 1
    for role, whole in inputs.items():
        if not styles.style_for(role).show:  # zoning, rights-of-way, preliminary zones: web map only
            continue
        g = whole[in_view(whole.geometry.values, view)]
        if not len(g):
            continue
        if role == "flood_zones" and "FLD_ZONE" in g.columns:
            # the whole layer's subtypes say whether the floodway is read (a view without one may lie beside it)
            classes = flood_zone_classes(g, rulebook, whole=whole) if rulebook is not None else None
            enc = np.zeros(len(g), dtype=bool) if classes is None else classes["encroachment"].to_numpy(dtype=bool)
            unk = np.zeros(len(g), dtype=bool) if classes is None else classes["floodway_unknown"].to_numpy(dtype=bool)
            fw = np.zeros(len(g), dtype=bool) if classes is None else classes["floodway"].to_numpy(dtype=bool)
            keys = [styles.flood_zone_key(a, b, encroachment=e, floodway=w) for a, b, e, w in
                    zip(g["FLD_ZONE"], g["ZONE_SUBTY"] if "ZONE_SUBTY" in g else [None] * len(g), enc, fw)]
            g = g.assign(_zone=keys, _unknown=unk)
            for key, sub in g.groupby("_zone", sort=True):
                st = styles.flood_zone_style(str(key))
                note = f" ({styles.FLOODWAY_UNKNOWN_NOTE})" if sub["_unknown"].any() else ""
                _draw_layer(ax, sub, st, z, handles, raster, label=f"flood zone {key}{note}")
        else:
            _draw_layer(ax, g, styles.style_for(role), z, handles, raster, alpha_scale=0.7)
        z += 1
    return z


def _draw_derived(ax: Axes, result: Result, view: Any, handles: list,
                  raster: Raster, z: int) -> None:
    """The derived layers in ``view`` (contours labelled with their interval)."""
    for name, g in result.derived.items():
        g = _working(g, result.crs)
        if g is None:
            continue
        g = g[in_view(g.geometry.values, view)]
        if not len(g):
            continue
        st = styles.style_for(name, styles.geom_family(g))
        if name == "contours":
            label = "contours"
            if "elev_ft" in g.columns and g["elev_ft"].notna().sum() > 1:
                lv = np.sort(g["elev_ft"].dropna().unique())
                step = float(np.min(np.diff(lv))) if len(lv) > 1 else 0.0
                label = f"contours ({step:g} ft)" if step > 0 else label
            _draw_layer(ax, g, st, 40, handles, raster, label=label)
        else:
            _draw_layer(ax, g, st, 50 + z, handles, raster)
        z += 1


def _draw_parcel_outline(ax: Axes, pgeom: Any, crs: Any, parcel: str, handles: list) -> None:
    from matplotlib.lines import Line2D

    gpd.GeoSeries([pgeom], crs=crs).boundary.plot(ax=ax, color="black", linewidth=2.5, zorder=200)
    handles.append(Line2D([], [], color="black", linewidth=2.5, label=f"parcel {parcel}".replace("$", r"\$")))


def _drawn_columns(findings: gpd.GeoDataFrame | None) -> gpd.GeoDataFrame | None:
    """The columns of the findings the overview reads (not the text), the geometry as ``geometry``."""
    if findings is None:
        return None
    cols = [c for c in ("status", "waived", "subject_layer") if c in findings.columns]
    out = pd.DataFrame({c: findings[c].to_numpy(dtype=object) for c in cols})
    return gpd.GeoDataFrame(out, geometry=findings.geometry.values, crs=findings.crs)


def left_out_parcels(result: Result) -> gpd.GeoDataFrame | None:
    """The parcels of a screening in the status of their findings that were left out of memory,
    as rows the overview draws like findings (``status``, ``waived``, ``subject_layer``, geometry,
    in the working CRS); None when nothing was left out.

    A parcel's status here is the most severe of its per-rule statuses (``status_<rule>`` columns
    of the parcels table) that the findings scope does not keep (``info``, ``pass``), a waived
    rule's (:attr:`Result.omitted <geoconstraints.result.Result.omitted>` says which) ranked after
    every other as the drawing ranks waived findings (:func:`status_rank`): with its findings in
    memory (drawn in their own geometry, often the part of the parcel in a flood zone) the overview
    is the one of every finding. A table without status columns: the parcels whose
    ``worst_status`` is such a status.
    """
    table = result.tables.get("parcels")
    if (not len(result.omitted) or int(result.omitted["n"].sum()) == 0 or not isinstance(table, gpd.GeoDataFrame)
            or "worst_status" not in table.columns):
        return None
    kept = scope_statuses(result.scope) or STATUSES
    left = np.array([i for i, s in enumerate(STATUSES) if s not in kept])
    k = len(STATUSES)
    none = 2 * k  # below it: a status's rank, plus k where its rule is waived
    omitted = result.omitted
    waived = {status_column(r) for r in omitted.loc[waived_flags(omitted["waived"]), "rule_id"]}
    cols = [c for c in table.columns if str(c).startswith(STATUS_COLUMN_PREFIX)] or ["worst_status"]
    best = np.full(len(table), none, dtype=np.int64)
    for c in cols:
        rank = status_ranks(table[c], none)
        rank = np.where(np.isin(rank, left), rank + (k if c in waived else 0), none)
        best = np.minimum(best, rank)
    g = table.geometry.values
    sel = (best < none) & ~(shapely.is_missing(g) | shapely.is_empty(g))
    if not sel.any():
        return None
    n = int(sel.sum())
    marks = np.full(n, "", dtype=object)  # one shared "" (a county: a million rows), "waived" where so
    marks[best[sel] >= k] = "waived"  # drawn, never printed
    rows = pd.DataFrame({"status": np.array(STATUSES, dtype=object)[best[sel] % k], "waived": marks,
                         "subject_layer": np.full(n, "parcels", dtype=object)})
    return _working(gpd.GeoDataFrame(rows, geometry=g[sel], crs=table.crs), result.crs)


def _draw_findings(ax: Axes, findings: gpd.GeoDataFrame, view: Any, handles: list,
                   raster: Raster, *, one_parcel: bool,
                   totals: Any = None) -> None:
    """Findings by status, most severe on top; where several findings share one geometry (one
    parcel checked by several rules) only the most severe is drawn; a whole town as a raster.
    ``totals`` (status -> count) are the legend's numbers (default: of ``findings``)."""
    g = findings.geometry
    keep = in_view(g.values, view)  # a missing or empty geometry is in no view
    cols = [c for c in ("status", "waived", "subject_layer") if c in findings.columns]
    f = findings.loc[keep, cols + [findings.geometry.name]]  # the columns drawn, not the text
    if totals is None:
        totals = findings["status"].value_counts()
    if len(f) > MAX_VECTOR_FEATURES:  # a whole town: each pixel in its most severe status
        _draw_findings_raster(ax, f, totals, raster, handles)
        return
    f = most_severe_per_geometry(f)
    for i, status in enumerate(reversed(STATUSES)):
        sub = f[f["status"] == status]
        if not len(sub):
            continue
        n = int(totals.get(status, 0))
        label = f"{styles.STATUS_LABELS[status]} ({n} finding{'s' if n != 1 else ''})"
        first = True
        for fam, part in sorted(_families(sub).items(), key=lambda kv: -len(kv[1])):
            # each geometry family in its own weight; one legend entry per status
            st = styles.status_style(status, fam)
            if fam == "polygon":  # outlines (a harvest area never hides its roads); parcels lightly filled
                quiet = status in ("pass", "info") and not one_parcel
                filled = not quiet and bool((part["subject_layer"].astype(str) == "parcels").any())
                st = replace(st, weight=0.9 if quiet else 2.0, fill=st.fill if filled else None,
                             fill_opacity=(0.4 if one_parcel else 0.22) if filled else 0.0)
            _draw(ax, part, st, 100 + 2 * i, handles if first else None, label=label)
            first = False


def _finish_map(fig: Any, ax: Axes, extent: tuple[float, float, float, float], crs: Any, handles: list) -> None:
    """Frame the axes on ``extent``; scale bar (projected CRS), north arrow, legend and CRS note."""
    xmin, ymin, xmax, ymax = extent
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel("")
    ax.set_ylabel("")
    for s in ax.spines.values():
        s.set_edgecolor("#888888")
    ft = ft_per_unit(crs)
    if ft is not None:
        draw_scale_bar(ax, ft)
    draw_north_arrow(ax)
    if handles:
        fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.725, 0.98), fontsize=7.5,
                   frameon=False, title="Legend", title_fontsize=9, alignment="left")
    if crs is not None:
        fig.text(0.725, 0.03, f"{pyproj.CRS(crs).name}\nGrid north; scale in feet", fontsize=6.5, color="#555555")


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def overview_data_uri(result: Result, **kwargs: Any) -> str:
    """:func:`render_overview` as a ``data:image/png;base64,...`` URI for an ``<img src>``."""
    return "data:image/png;base64," + base64.b64encode(render_overview(result, **kwargs)).decode("ascii")

