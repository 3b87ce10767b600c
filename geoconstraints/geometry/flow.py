"""Downslope flow paths on a DEM (D8), read windowed around a source area: where its runoff goes.

Rule-agnostic (every number is an argument). :func:`trace_flow` follows the steepest descent
from every DEM cell of a source area (D8: each cell drains to the one of its 8 neighbours with
the steepest drop per horizontal foot) until the path reaches a target (an impaired water), ends
in a closed depression, runs off the DEM (its edge or a nodata cell), or exceeds a length.
A flat stretch (cells with no lower neighbour) drains through its outlets, the cells of the same
elevation at its rim that do have a lower neighbour; a flat with no outlet is a closed
depression. A closed depression shallower than a minimum depth (from its lowest cell to its
spill point) is first filled to its spill elevation (:func:`fill_shallow_depressions`): a dip
within the DEM's vertical error holds no runoff and must not end a path. Only the window of the
DEM around the source plus the length limit is read.

Examples
--------
A plane falling 1 ft per 10-ft cell to the east (z = 100 - 0.1 x), a source cell at the west
side and a north-south water line 50 ft east of it: the path runs 5 cells east and reaches it.

>>> import rasterio, tempfile, os
>>> from affine import Affine
>>> from shapely.geometry import LineString, box
>>> from geoconstraints.io.dem import open_dem
>>> d = tempfile.mkdtemp(); path = os.path.join(d, "plane.tif")
>>> z = np.tile(100 - 0.1 * (5 + 10 * np.arange(40)), (40, 1)).astype("float32")
>>> with rasterio.open(path, "w", driver="GTiff", width=40, height=40, count=1, dtype="float32",
...                    crs="EPSG:2261", transform=Affine(10, 0, 0, 0, -10, 400)) as dst:
...     dst.write(z, 1)
>>> dem = open_dem(path, z_units="ft")
>>> t = trace_flow(dem, box(100, 190, 110, 200), [LineString([(165, 0), (165, 400)])], "EPSG:2261",
...                max_length_ft=200)
>>> t.outcome, round(t.length_ft)
('target', 50)
"""

from __future__ import annotations

import logging
import math
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyproj
import shapely
from affine import Affine
from shapely.geometry import LineString, MultiPoint, Point
from shapely.geometry.base import BaseGeometry

from geoconstraints.errors import DemError
from geoconstraints.io.dem import Dem, rotated_fix, same_crs, to_pyproj
from geoconstraints.units import over_limit

log = logging.getLogger(__name__)

# rasterio, scipy and scikit-image are imported by the functions that use them: a screening,
# which reads no DEM, does not pay their import (about 0.8 s of every run's start).

OUTCOMES = ("target", "edge", "limit", "pit")
"""How a traced path ends: it reaches a target; it runs off the DEM (its edge or nodata); it
exceeds the length limit; it ends in a closed depression (a pit or a flat without outlet)."""

_OFFSETS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


@dataclass
class FlowTrace:
    """Where the runoff of one source area goes.

    Attributes
    ----------
    outcome : str
        ``target`` when any path reaches a target; otherwise ``edge`` when any path runs off the
        DEM (the trace is incomplete); otherwise ``limit`` when any path exceeds the length limit;
        otherwise ``pit`` (every path ends in a closed depression).
    ends : dict
        Number of path ends of each outcome.
    path : LineString or Point or None
        The shortest path to a target (outcome ``target``), else the longest path traced, in the
        requested CRS.
    end_points : MultiPoint or None
        Where the traced paths end (every end, for outcomes other than ``target``).
    length_ft : float
        Length of ``path`` along the cells (horizontal feet).
    source_cells : int
        DEM cells of the source area.
    cell_size_ft : float
    filled : int
        Closed depressions of the window shallower than the minimum depth, filled before tracing.
    """

    outcome: str
    ends: dict[str, int] = field(default_factory=dict)
    path: BaseGeometry | None = None
    end_points: BaseGeometry | None = None
    length_ft: float = float("nan")
    source_cells: int = 0
    cell_size_ft: float = float("nan")
    filled: int = 0

    @property
    def reached(self) -> bool:
        """A path reaches a target."""
        return self.outcome == "target"

    @property
    def complete(self) -> bool:
        """Every path was followed to its end within the DEM: a target or a closed depression.

        A path that runs off the DEM (``edge``) or is cut off at the length limit (``limit``) was not.
        """
        return self.outcome not in ("edge", "limit")


# ------------------------------------------------------------------------------------------
# the window and the grids

@dataclass
class _Grid:
    z: np.ndarray
    transform: Any
    dx_ft: float
    dy_ft: float


def _to(crs_from: Any, crs_to: Any, geom: BaseGeometry) -> BaseGeometry:
    a, b = to_pyproj(crs_from), to_pyproj(crs_to)
    if same_crs(a, b):
        return geom
    tr = pyproj.Transformer.from_crs(a, b, always_xy=True)
    return shapely.transform(geom, lambda c: np.column_stack(tr.transform(c[:, 0], c[:, 1])))


def _cell_ft(dem: Dem, x: float, y: float) -> tuple[float, float]:
    """Cell width and height in feet (at the window centre for a geographic DEM)."""
    t = dem.transform
    if dem.xy_unit_ft is not None:
        return abs(t.a) * dem.xy_unit_ft, abs(t.e) * dem.xy_unit_ft
    geod = pyproj.Geod(ellps="WGS84")
    _, _, w = geod.inv(x - abs(t.a) / 2, y, x + abs(t.a) / 2, y)
    _, _, h = geod.inv(x, y - abs(t.e) / 2, x, y + abs(t.e) / 2)
    return w / 0.3048, h / 0.3048


def _read_window(dem: Dem, bounds: tuple[float, float, float, float], margin_ft: float) -> _Grid:
    """Elevations (ft, NaN for nodata) of the DEM window around ``bounds`` (DEM CRS) plus ``margin_ft``."""
    t = dem.transform
    if t.b != 0 or t.d != 0:
        raise DemError(f"DEM {dem.path.name}: rotated grids are not supported for flow paths. {rotated_fix(dem)}")
    cx, cy = (bounds[0] + bounds[2]) / 2, (bounds[1] + bounds[3]) / 2
    dx_ft, dy_ft = _cell_ft(dem, cx, cy)
    mx, my = margin_ft / dx_ft * abs(t.a), margin_ft / dy_ft * abs(t.e)
    c0, c1 = sorted(((bounds[0] - mx - t.c) / t.a, (bounds[2] + mx - t.c) / t.a))
    r0, r1 = sorted(((bounds[1] - my - t.f) / t.e, (bounds[3] + my - t.f) / t.e))
    c0, r0 = max(0, math.floor(c0)), max(0, math.floor(r0))
    c1, r1 = min(dem.width, math.ceil(c1)), min(dem.height, math.ceil(r1))
    if c1 <= c0 or r1 <= r0:
        return _Grid(np.zeros((0, 0)), t, dx_ft, dy_ft)
    # the DEM's own reader: GDAL virtual paths, the window size cap, undeclared fill values refused
    z = dem.read_ft(((r0, r1), (c0, c1))).astype("float64")
    return _Grid(z, Affine(t.a, 0.0, t.c + c0 * t.a, 0.0, t.e, t.f + r0 * t.e), dx_ft, dy_ft)


def _mask(geoms: list[BaseGeometry], grid: _Grid, *, all_touched: bool) -> np.ndarray:
    shapes = [(g, 1) for g in geoms if g is not None and not g.is_empty]
    if not shapes or not grid.z.size:
        return np.zeros(grid.z.shape, dtype=bool)
    import rasterio.features  # see the note on imports at the top

    return rasterio.features.rasterize(shapes, out_shape=grid.z.shape, transform=grid.transform, fill=0,
                                       all_touched=all_touched, dtype="uint8").astype(bool)


# ------------------------------------------------------------------------------------------
# D8 directions, flats and depressions

def fill_shallow_depressions(z: np.ndarray, min_depth_ft: float) -> tuple[np.ndarray, int]:
    """``z`` with every closed depression shallower than ``min_depth_ft`` filled to its spill elevation.

    The depressions are found by filling every one (morphological reconstruction by erosion from
    the window's edge and its nodata cells, where water leaves the grid; Soille 2004, as
    ``scikit-image``'s ``reconstruction``); a depression is a connected (8-neighbour) set of cells
    the filling raises, its depth the most it raises one. A depression at least ``min_depth_ft``
    deep stays as it is (a path may end in it); a shallower one takes its filled, flat surface,
    which drains through its spill point like any flat.

    Parameters
    ----------
    z : ndarray
        Elevations in feet, NaN for nodata.
    min_depth_ft : float
        Depth from a depression's lowest cell to its spill point below which it is filled
        (0: none is).

    Returns
    -------
    (ndarray, int)
        The elevations (a new array; NaN kept) and the number of depressions filled.

    Examples
    --------
    A 5 x 5 plane at 10 ft with one cell 0.5 ft lower in the middle:

    >>> z = np.full((5, 5), 10.0); z[2, 2] = 9.5
    >>> out, n = fill_shallow_depressions(z, 1.0)
    >>> float(out[2, 2]), n
    (10.0, 1)
    >>> float(fill_shallow_depressions(z, 0.5)[0][2, 2])  # exactly the minimum depth: a depression
    9.5
    """
    finite = np.isfinite(z)
    if min_depth_ft <= 0 or z.size == 0 or not finite.any():
        return z.copy(), 0
    low = float(np.min(z[finite])) - 1.0
    zz = np.where(finite, z, low)  # nodata drains: water leaves the grid there
    seed = np.full(z.shape, float(np.max(zz)))
    edge = ~finite
    edge[0, :] = edge[-1, :] = True
    edge[:, 0] = edge[:, -1] = True
    seed[edge] = zz[edge]
    from scipy import ndimage  # see the note on imports at the top
    from skimage.morphology import reconstruction

    filled = reconstruction(seed, zz, method="erosion", footprint=np.ones((3, 3), dtype=bool))
    depth = filled - zz
    region, n = ndimage.label(depth > 0, structure=np.ones((3, 3), dtype=bool))
    if not n:
        return z.copy(), 0
    deepest = np.asarray(ndimage.maximum(depth, region, index=np.arange(1, n + 1)))
    shallow = np.concatenate([[False], deepest < min_depth_ft])
    return np.where(shallow[region] & finite, filled, z), int(shallow.sum())


@dataclass
class _Drainage:
    receiver: np.ndarray      # flat index of the receiving cell, -1 where none
    step_ft: np.ndarray       # length of the step to it
    region: np.ndarray        # label of the no-descent region of each cell (0: the cell descends)
    region_edge: np.ndarray   # per label: the region touches the DEM's edge or nodata
    outlet_cells: np.ndarray  # outlets (same elevation, descending) of every region, sorted by label
    outlet_bounds: np.ndarray  # region k's outlets are outlet_cells[outlet_bounds[k]:outlet_bounds[k + 1]]

    def outlets(self, k: int) -> np.ndarray:
        """Flat indices of the outlets of region ``k`` (empty: a closed depression)."""
        return np.unique(self.outlet_cells[self.outlet_bounds[k]:self.outlet_bounds[k + 1]])


def _drainage(g: _Grid) -> _Drainage:
    from scipy import ndimage  # see the note on imports at the top

    z = g.z
    h, w = z.shape
    zp = np.pad(z, 1, constant_values=np.nan)
    lengths = np.array([math.hypot(dr * g.dy_ft, dc * g.dx_ft) for dr, dc in _OFFSETS])
    best = np.zeros(z.shape)
    k_best = np.full(z.shape, -1, dtype=np.int8)
    edge = np.zeros(z.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        for k, (dr, dc) in enumerate(_OFFSETS):  # eight array passes over views, not a loop over cells
            zn = zp[1 + dr:1 + dr + h, 1 + dc:1 + dc + w]
            edge |= np.isnan(zn)
            drop = (z - zn) / lengths[k]
            better = drop > best  # False where either elevation is missing
            best[better] = drop[better]
            k_best[better] = k
    idx = np.arange(h * w, dtype=np.int64).reshape(h, w)
    flat_off = np.array([dr * w + dc for dr, dc in _OFFSETS], dtype=np.int64)
    down = k_best >= 0
    rec = np.where(down, idx + flat_off[np.maximum(k_best, 0)], -1)
    step = np.where(down, lengths[np.maximum(k_best, 0)], 0.0)
    flat = np.isfinite(z) & ~down
    region, n = ndimage.label(flat, structure=np.ones((3, 3), dtype=bool))
    region_edge = np.zeros(n + 1, dtype=bool)
    region_edge[np.unique(region[flat & edge])] = True
    rp = np.pad(region, 1)
    pairs_r, pairs_c = [], []
    for dr, dc in _OFFSETS:  # descending cells at the same elevation as a neighbouring flat region
        lab = rp[1 + dr:1 + dr + h, 1 + dc:1 + dc + w]
        zn = zp[1 + dr:1 + dr + h, 1 + dc:1 + dc + w]
        hit = down & (lab > 0) & (zn == z)
        pairs_r.append(lab[hit])
        pairs_c.append(idx[hit])
    lab_all, cell_all = np.concatenate(pairs_r), np.concatenate(pairs_c)
    order = np.argsort(lab_all, kind="stable")
    lab_all, cell_all = lab_all[order], cell_all[order]
    bounds = np.searchsorted(lab_all, np.arange(n + 2))  # looked up only for the regions a path meets
    return _Drainage(rec.ravel(), step.ravel(), region.ravel(), region_edge, cell_all, bounds)


# ------------------------------------------------------------------------------------------
# tracing

@dataclass
class _Walk:
    dist: np.ndarray
    pred: np.ndarray
    ends: dict[str, list[int]]


def _walk(dr: _Drainage, g: _Grid, sources: np.ndarray, targets: np.ndarray, max_length_ft: float) -> _Walk:
    """Follow every source cell downslope at once (one array step per cell of path length)."""
    n = g.z.size
    w = g.z.shape[1]
    valid = np.isfinite(g.z).ravel()
    tgt = targets.ravel()
    dist = np.full(n, np.inf)
    pred = np.full(n, -1, dtype=np.int64)
    ends: dict[str, list[int]] = {k: [] for k in OUTCOMES}
    src = np.flatnonzero(sources.ravel())
    ends["edge"] += list(src[~valid[src]])  # a source cell without elevation
    front = src[valid[src]]
    dist[front] = 0.0
    while len(front):
        hit = tgt[front]
        ends["target"] += list(front[hit])
        front = front[~hit]
        down = dr.receiver[front] >= 0
        nxt = [dr.receiver[front[down]]]
        nd = [dist[front[down]] + dr.step_ft[front[down]]]
        frm = [front[down]]
        flat = front[~down]
        lab = dr.region[flat]
        ends["edge"] += list(flat[dr.region_edge[lab]])
        for f, k in zip(flat[~dr.region_edge[lab]], lab[~dr.region_edge[lab]]):  # cells on flats: a few
            outs = dr.outlets(int(k))
            if not len(outs):
                ends["pit"].append(int(f))
                continue
            r0, c0 = divmod(int(f), w)
            orow, ocol = np.divmod(outs, w)
            nxt.append(outs)
            nd.append(dist[f] + np.hypot((orow - r0) * g.dy_ft, (ocol - c0) * g.dx_ft))
            frm.append(np.full(len(outs), f))
        nxt_a, nd_a, frm_a = np.concatenate(nxt), np.concatenate(nd), np.concatenate(frm)
        over = over_limit(nd_a, max_length_ft)  # a path of exactly the limit is followed (float steps)
        ends["limit"] += list(np.unique(frm_a[over]))
        nxt_a, nd_a, frm_a = nxt_a[~over], nd_a[~over], frm_a[~over]
        order = np.lexsort((nd_a, nxt_a))
        nxt_a, nd_a, frm_a = nxt_a[order], nd_a[order], frm_a[order]
        first = np.ones(len(nxt_a), dtype=bool)
        first[1:] = nxt_a[1:] != nxt_a[:-1]
        nxt_a, nd_a, frm_a = nxt_a[first], nd_a[first], frm_a[first]
        better = nd_a < dist[nxt_a]
        dist[nxt_a[better]] = nd_a[better]
        pred[nxt_a[better]] = frm_a[better]
        front = nxt_a[better]
    return _Walk(dist, pred, {k: sorted(set(map(int, v))) for k, v in ends.items()})


def _path(walk: _Walk, cell: int, g: _Grid) -> BaseGeometry:
    """The cells from a source to ``cell`` (following the predecessors), as a line of cell centres."""
    chain = [cell]
    while walk.pred[chain[-1]] >= 0 and len(chain) <= walk.pred.size:
        chain.append(int(walk.pred[chain[-1]]))
    import rasterio.transform  # see the note on imports at the top

    rows, cols = np.divmod(np.array(chain[::-1]), g.z.shape[1])
    xs, ys = rasterio.transform.xy(g.transform, rows, cols)
    pts = np.column_stack([np.atleast_1d(xs), np.atleast_1d(ys)])
    return Point(pts[0]) if len(pts) == 1 else LineString(pts)


_TRACES_KEPT = 16
"""Most traces :func:`trace_flow` keeps (:data:`_traces`)."""

_traces: OrderedDict[tuple[Any, ...], tuple[weakref.ref[Dem], FlowTrace]] = OrderedDict()
"""The last traces made, by DEM (its ``id``, checked against a weak reference to it: a DEM opened
again is another DEM), source, targets, CRS and the two numbers: a check run again on the same
layers and DEM (a notebook, the guard's many runs of one plan) and a site measured again that came
out the same shape are traced once. A trace is a pure function of these; the result is never
changed by its readers."""


def trace_flow(
    dem: Dem,
    source: BaseGeometry,
    targets: list[BaseGeometry],
    crs: Any,
    *,
    max_length_ft: float,
    min_depression_depth_ft: float = 0.0,
) -> FlowTrace:
    """Trace the downslope flow paths from ``source`` until they reach one of ``targets``.

    The same trace asked again (the same DEM object, geometries, CRS and numbers) is the one made
    before (:data:`_traces`).

    Parameters
    ----------
    dem : Dem
        Read only in a window around ``source`` grown by ``max_length_ft`` (plus a cell).
    source : Polygon or MultiPolygon
        The area whose runoff is traced (every DEM cell whose centre lies in it; the cells it
        touches when it covers no centre).
    targets : list of geometries
        Lines or polygons the runoff may reach. Each is widened by one cell on the grid, so a
        diagonal D8 step cannot pass between the cells of a line.
    crs : CRS-like
        CRS of ``source`` and ``targets``; the returned geometries are in it too.
    max_length_ft : float
        Longest path followed (horizontal feet along the cells).
    min_depression_depth_ft : float
        Closed depressions of the DEM window shallower than this are filled before tracing
        (:func:`fill_shallow_depressions`); 0 traces the DEM as it is.

    Returns
    -------
    FlowTrace
    """
    key = (id(dem), shapely.to_wkb(source), tuple(shapely.to_wkb(t) for t in targets), to_pyproj(crs).to_wkt(),
           float(max_length_ft), float(min_depression_depth_ft))
    kept = _traces.get(key)
    if kept is not None and kept[0]() is dem:
        _traces.move_to_end(key)
        return kept[1]
    found = _trace_flow(dem, source, targets, crs, max_length_ft=max_length_ft,
                        min_depression_depth_ft=min_depression_depth_ft)
    _traces[key] = (weakref.ref(dem), found)
    while len(_traces) > _TRACES_KEPT:
        _traces.popitem(last=False)
    return found


def _trace_flow(dem: Dem, source: BaseGeometry, targets: list[BaseGeometry], crs: Any, *, max_length_ft: float,
                min_depression_depth_ft: float) -> FlowTrace:
    """:func:`trace_flow`, traced."""
    dem_crs = dem.crs
    src = _to(crs, dem_crs, source)
    tg = [_to(crs, dem_crs, t) for t in targets]
    grid = _read_window(dem, src.bounds, max_length_ft + 2 * max(dem.cell_size_ft, 1.0))
    if not grid.z.size:
        return FlowTrace("edge", {"edge": 1}, cell_size_ft=dem.cell_size_ft)
    sources = _mask([src], grid, all_touched=False)
    if not sources.any():
        sources = _mask([src], grid, all_touched=True)
    if not sources.any():
        return FlowTrace("edge", {"edge": 1}, cell_size_ft=dem.cell_size_ft)
    import rasterio.transform  # see the note on imports at the top
    from scipy import ndimage

    target = ndimage.binary_dilation(_mask(tg, grid, all_touched=True), structure=np.ones((3, 3), dtype=bool))
    grid.z, filled = fill_shallow_depressions(grid.z, min_depression_depth_ft)
    walk = _walk(_drainage(grid), grid, sources, target, max_length_ft)
    counts = {k: len(v) for k, v in walk.ends.items() if v}
    outcome = next(k for k in OUTCOMES if counts.get(k) or k == "pit")
    back = lambda geom: _to(dem_crs, crs, geom)
    size = 0.5 * (grid.dx_ft + grid.dy_ft)
    if outcome == "target":
        cells = np.array(walk.ends["target"])
        best = int(cells[np.argmin(walk.dist[cells])])
        return FlowTrace(outcome, counts, back(_path(walk, best, grid)), None, float(walk.dist[best]),
                         int(sources.sum()), size, filled)
    cells = np.array(sorted({c for v in walk.ends.values() for c in v}), dtype=np.int64)
    far = int(cells[np.argmax(np.where(np.isfinite(walk.dist[cells]), walk.dist[cells], -1))])
    rows, cols = np.divmod(cells, grid.z.shape[1])
    xs, ys = rasterio.transform.xy(grid.transform, rows, cols)
    ends = MultiPoint(np.column_stack([np.atleast_1d(xs), np.atleast_1d(ys)]))
    length = float(walk.dist[far]) if np.isfinite(walk.dist[far]) else 0.0
    return FlowTrace(outcome, counts, back(_path(walk, far, grid)), back(ends), length, int(sources.sum()), size,
                     filled)
