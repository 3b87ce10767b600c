"""Opening a DEM: horizontal and vertical units checked (feet or metres, never guessed),
elevations read in feet (the band's scale and offset applied, fill values and impossible cells
read as nodata, a raster with no relief refused or warned about), bilinear sampling at points in
any CRS.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import shlex
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import affine
import numpy as np
import pyproj
import shapely
from shapely.geometry import Polygon, shape

from geoconstraints.errors import CRSError, DemError, LayerReadError
from geoconstraints.io.paths import check_file, gdal_path, is_virtual, local_archive
from geoconstraints.io.sources import file_stamp
from geoconstraints.text import redact, visible_text
from geoconstraints.units import FT_PER_M, ft_per_unit, normalize_length_unit

logger = logging.getLogger(__name__)

# rasterio is imported by the functions that read a DEM: a run without one (a screening) does
# not pay its import.

Z_UNITS: tuple[str, ...] = ("ft", "m")

_UNIT_TAG_KEYS: tuple[str, ...] = (
    "UNITTYPE",
    "UNIT_TYPE",
    "VERTICAL_UNITS",
    "VERTICAL_UNIT",
    "VERT_UNITS",
    "Z_UNITS",
    "ZUNITS",
    "Z_UNIT",
    "UNITS",
    "UNIT",
    "ELEVATION_UNITS",
)


def to_pyproj(crs: Any) -> pyproj.CRS:
    """Any CRS-like (EPSG string/int, WKT, rasterio CRS, pyproj CRS) as a :class:`pyproj.CRS`."""
    if crs is None:
        raise CRSError("no CRS given: pass the CRS of the coordinates (e.g. 'EPSG:2261')")
    if isinstance(crs, pyproj.CRS):
        return crs
    if hasattr(crs, "to_wkt"):
        return pyproj.CRS.from_wkt(crs.to_wkt())
    return pyproj.CRS.from_user_input(crs)


@functools.lru_cache(maxsize=64)
def _transformer(src_wkt: str, dst_wkt: str) -> pyproj.Transformer:
    """A cached always-xy transformer between two CRSs given as WKT."""
    return pyproj.Transformer.from_crs(src_wkt, dst_wkt, always_xy=True)


def same_crs(a: pyproj.CRS, b: pyproj.CRS) -> bool:
    """True when two CRSs are equivalent (no transformation needed)."""
    return a is b or a == b


def _transform_xy(x: np.ndarray, y: np.ndarray, src: pyproj.CRS, dst: pyproj.CRS):
    """Transform coordinate arrays from ``src`` to ``dst`` (no-op when they are the same)."""
    if same_crs(src, dst):
        return x, y
    t = _transformer(src.to_wkt(), dst.to_wkt())
    return t.transform(x, y)


# --------------------------------------------------------------------------------------------
# DEM
# --------------------------------------------------------------------------------------------


@dataclass
class Dem:
    """A DEM opened for sampling, with known horizontal and vertical units.

    Attributes
    ----------
    path : Path
        The GeoTIFF.
    crs : pyproj.CRS
        Its CRS (never ``None``: :func:`open_dem` refuses a DEM without one).
    transform : affine.Affine
        Pixel-corner affine transform.
    width, height : int
        Size in cells.
    nodata : float or None
        The band's nodata value (``None`` when not set, e.g. the Muncy lidar DEM).
    z_units : str
        ``'ft'`` or ``'m'``: the unit of the elevations (stored value x ``z_scale`` +
        ``z_offset``). :meth:`read_ft` converts.
    z_units_source : str
        ``'metadata'`` or ``'user'``: where ``z_units`` came from (for provenance).
    xy_unit_ft : float or None
        Feet per CRS horizontal unit (1.000002 for US survey feet, 3.2808 for metres);
        ``None`` for a geographic CRS.
    z_scale, z_offset : float
        The band's scale factor and offset (GDAL's ``-scale``/``-offset``, rasterio's
        ``scales``/``offsets``): elevation = stored value x ``z_scale`` + ``z_offset``, in
        ``z_units``. 1 and 0 for most DEMs; an integer DEM in hundredths of a foot has scale 0.01.
        Every read applies them.
    band_count : int
        The raster's bands (band 1 is read): named when a DEM without relief is refused or warned about.
    """

    path: Path
    crs: pyproj.CRS
    transform: affine.Affine
    width: int
    height: int
    nodata: float | None
    z_units: str
    z_units_source: str
    xy_unit_ft: float | None
    z_scale: float = 1.0
    z_offset: float = 0.0
    band_count: int = 1
    uri: str | None = None
    """A GDAL virtual path or URL the DEM is read from (``path`` is then its text, for messages)."""
    stamp: tuple[int, int] | None = field(default=None, repr=False, compare=False)
    """``(size, mtime_ns)`` of the file when it was opened (:func:`~geoconstraints.io.sources.file_stamp`):
    a DEM rewritten during the run differs when the outputs are written."""
    focus: tuple[int, int, int, int] | None = field(default=None, repr=False, compare=False)
    """``(row0, row1, col0, col1)``: the area the run needs (the layers' extent plus a margin,
    set by :meth:`set_focus`); read once, and every window inside it is a slice of it."""
    _cache: dict[tuple[int, int, int, int], np.ndarray] = field(default_factory=dict, init=False, repr=False,
                                                                 compare=False)
    _warned: set[tuple[int, int, int, int]] = field(default_factory=set, init=False, repr=False, compare=False)
    """Windows whose cells read as nodata (fills, impossible values) have been warned about."""
    _relief: bool = field(default=False, init=False, repr=False, compare=False)
    """A window read held two valid cells of different elevations (the DEM is no flat raster)."""

    @property
    def cell_size_ft(self) -> float:
        """Mean cell size in feet (for a geographic CRS: approximate, at the centre latitude)."""
        t = self.transform
        sx = math.hypot(t.a, t.d)
        sy = math.hypot(t.b, t.e)
        if self.xy_unit_ft is not None:
            return 0.5 * (sx + sy) * self.xy_unit_ft
        cx, cy = apply_transform(t, self.width / 2.0, self.height / 2.0)
        geod = pyproj.Geod(ellps="WGS84")
        _, _, dx_m = geod.inv(cx - sx / 2, cy, cx + sx / 2, cy)
        _, _, dy_m = geod.inv(cx, cy - sy / 2, cx, cy + sy / 2)
        return 0.5 * (dx_m + dy_m) * FT_PER_M

    @property
    def max_cell_size_ft(self) -> float:
        """The larger of the cell's width and height in international feet: the coarser direction of
        the grid, which sets the shortest stretch of ground it can show (a DEM is only as fine as its
        coarsest side). The CRS's horizontal unit is read (US survey feet, metres), never assumed; for
        a geographic CRS the sides are measured on the ellipsoid at the centre of the raster.

        Examples
        --------
        >>> from geoconstraints.io.sample import sample_path
        >>> round(open_dem(sample_path("dem.tif")).max_cell_size_ft, 4)  # 10 US survey feet
        10.0
        """
        t = self.transform
        sx = math.hypot(t.a, t.d)
        sy = math.hypot(t.b, t.e)
        if self.xy_unit_ft is not None:
            return max(sx, sy) * self.xy_unit_ft
        cx, cy = apply_transform(t, self.width / 2.0, self.height / 2.0)
        geod = pyproj.Geod(ellps="WGS84")
        _, _, dx_m = geod.inv(cx - sx / 2, cy, cx + sx / 2, cy)
        _, _, dy_m = geod.inv(cx, cy - sy / 2, cx, cy + sy / 2)
        return max(dx_m, dy_m) * FT_PER_M

    @property
    def z_factor_ft(self) -> float:
        """Multiplier from elevations in ``z_units`` to feet (1.0 for a feet DEM, 3.2808 for metres)."""
        return 1.0 if self.z_units == "ft" else FT_PER_M

    @property
    def z_description(self) -> str:
        """The vertical unit, where it came from, and the band scale/offset when not 1 and 0.

        Examples
        --------
        >>> from geoconstraints.io.sample import sample_path
        >>> open_dem(sample_path("dem.tif")).z_description
        'ft (metadata)'
        """
        text = f"{self.z_units} ({self.z_units_source})"
        if self.z_scale != 1.0 or self.z_offset != 0.0:
            text += f"; stored values x {self.z_scale:g} + {self.z_offset:g} (band scale and offset)"
        return text

    def read_ft(self, window: Any = None) -> np.ndarray:
        """Elevations in feet as float32 (float64 for a float64 DEM), NaN where nodata (or masked),
        read from the file window by window (never the whole band unless asked and small enough).

        The band's scale and offset are applied (stored value x ``z_scale`` + ``z_offset``). Cells
        holding a common no-data fill (:data:`FILL_VALUES`) the DEM does not declare, or an
        elevation no land has (outside :data:`MIN_GROUND_FT` .. :data:`MAX_GROUND_FT`), are NaN
        as nodata, with a warning naming the DEM and the count: a measurement on them is not
        evaluated, never flat ground. The area the run needs (:attr:`focus`) holding 0 ft in every
        valid cell, and a few small windows across the raster too, is refused; another single value
        is warned about (:func:`_check_relief`).

        Parameters
        ----------
        window : rasterio.windows.Window or ((row_start, row_stop), (col_start, col_stop)), optional
            The cells to read (clipped to the DEM); the whole DEM when omitted.

        Returns
        -------
        numpy.ndarray
            ``(rows, cols)`` elevations in feet, read-only: float32, which holds the integer and
            float32 cells of lidar DEMs exactly (float64 only for a float64 DEM).

        Raises
        ------
        DemError
            The window holds more than :data:`MAX_WINDOW_CELLS` cells, or infinite values, or the
            DEM declares no nodata value and holds a common fill value (or a value further than
            :data:`MAX_ELEVATION_FT` from sea level): declaring it is the fix. Or the window is the
            focus and every valid cell read holds 0 ft (an empty band, a placeholder).

        Examples
        --------
        >>> from geoconstraints.io.sample import sample_path
        >>> z = open_dem(sample_path("dem.tif")).read_ft(((0, 2), (0, 3)))
        >>> z.shape, z.dtype.name, bool((z > 800).all())
        ((2, 3), 'float32', True)
        """
        if window is None:
            r0, r1, c0, c1 = 0, self.height, 0, self.width
        else:
            from rasterio.windows import Window  # see the note on imports at the top

            win = window if isinstance(window, Window) else Window.from_slices(*window)
            (r0, r1), (c0, c1) = win.toranges()
        r0, r1 = min(max(r0, 0), self.height), min(max(r1, 0), self.height)
        c0, c1 = min(max(c0, 0), self.width), min(max(c1, 0), self.width)
        key = (r0, max(r1, r0), c0, max(c1, c0))
        f = self.focus
        if f is not None and f[0] <= key[0] and key[1] <= f[1] and f[2] <= key[2] and key[3] <= f[3]:
            z = self._read(f)
            return z[key[0] - f[0]:key[1] - f[0], key[2] - f[2]:key[3] - f[2]]
        return self._read(key)

    def _read(self, key: tuple[int, int, int, int]) -> np.ndarray:
        """One window from the file, cached: the focus, and the last windows read while all of
        them hold at most 2 x :data:`MAX_WINDOW_CELLS` cells."""
        if key not in self._cache:
            z = _read_window_ft(self, key)
            while self._cache and (len(self._cache) >= _CACHED_WINDOWS
                                   or sum(a.size for a in self._cache.values()) + z.size > 2 * MAX_WINDOW_CELLS):
                old = next((k for k in self._cache if k != self.focus), None)
                if old is None:
                    break
                del self._cache[old]
            self._cache[key] = z
        return self._cache[key]

    def set_focus(self, bounds: tuple[float, float, float, float], crs: Any, margin_ft: float = 0.0) -> bool:
        """Read only around ``bounds`` (in ``crs``) plus ``margin_ft``: windows inside it come from
        one read. Not set (and False returned) when that area is off the DEM or larger than
        :data:`MAX_WINDOW_CELLS` (each window is then read on its own)."""
        win = self.window_of(bounds, crs, margin_ft)
        if win is None or (win[1] - win[0]) * (win[3] - win[2]) > MAX_WINDOW_CELLS:
            self.focus = None
            return False
        self.focus = win
        return True

    def window_of(self, bounds: tuple[float, float, float, float], crs: Any,
                  margin_ft: float = 0.0) -> tuple[int, int, int, int] | None:
        """``(row0, row1, col0, col1)`` of the cells covering ``bounds`` (in ``crs``) plus
        ``margin_ft`` and one cell, clipped to the DEM; None when it misses the DEM."""
        xmin, ymin, xmax, ymax = bounds
        if not all(math.isfinite(v) for v in bounds):
            return None
        xs = np.linspace(xmin, xmax, 21)
        ys = np.linspace(ymin, ymax, 21)
        ex = np.concatenate([xs, xs, np.full(21, xmin), np.full(21, xmax)])
        ey = np.concatenate([np.full(21, ymin), np.full(21, ymax), ys, ys])
        dx, dy = _transform_xy(ex, ey, to_pyproj(crs), self.crs)
        col, row = apply_transform(~self.transform, np.asarray(dx), np.asarray(dy))
        if not (np.isfinite(col).all() and np.isfinite(row).all()):
            return None
        pad = 1 + (margin_ft / self.cell_size_ft if margin_ft > 0 else 0)
        r0, r1 = math.floor(row.min() - pad), math.ceil(row.max() + pad)
        c0, c1 = math.floor(col.min() - pad), math.ceil(col.max() + pad)
        r0, r1, c0, c1 = max(r0, 0), min(r1, self.height), max(c0, 0), min(c1, self.width)
        return (r0, r1, c0, c1) if r0 < r1 and c0 < c1 else None

    def sample(self, x, y, crs, *, relief: list[tuple[float, float, int]] | None = None) -> np.ndarray:
        """Bilinear elevations in feet at points given in ``crs``.

        Points are transformed to the DEM CRS with pyproj, then interpolated between the four
        surrounding cell centres. Within the outer half cell of the DEM (outside the outermost
        cell centres but inside its footprint) the edge cells are extended. Only the window of
        cells around the points is read (in pieces along a long line).

        Parameters
        ----------
        x, y : array-like
            Coordinates in ``crs``.
        crs : CRS-like
            CRS of ``x``/``y``.
        relief : list, optional
            When given, ``(lowest, highest, count)`` of the valid cells (feet) of each window of
            cells read for the points is appended to it (NaN, NaN, 0 for a window without data):
            whether the DEM has any relief around them (:func:`cells_relief`).

        Returns
        -------
        numpy.ndarray
            float64 elevations in feet, NaN off the DEM, or where any neighbour cell with a
            non-zero bilinear weight is nodata.
        """
        x = np.asarray(x, dtype="float64")
        y = np.asarray(y, dtype="float64")
        xd, yd = _transform_xy(x, y, to_pyproj(crs), self.crs)
        col, row = apply_transform(~self.transform, np.asarray(xd, dtype="float64"), np.asarray(yd, dtype="float64"))
        inside = np.isfinite(col) & np.isfinite(row) & (col >= 0) & (col <= self.width) & (row >= 0) & (row <= self.height)
        out = np.full(np.shape(col), np.nan)
        if not inside.any():
            return out
        out[inside] = self._sample_cells(col[inside], row[inside], relief)
        return out

    def _sample_cells(self, ci: np.ndarray, ri: np.ndarray,
                      relief: list[tuple[float, float, int]] | None = None) -> np.ndarray:
        """Bilinear values at fractional cells (all on the DEM), read window by window: points
        whose window would exceed :data:`MAX_WINDOW_CELLS` are split in halves, in their order
        (the points of a long road profile are in order along it, so each half stays narrow)."""
        r0 = max(math.floor(ri.min()) - 1, 0)
        c0 = max(math.floor(ci.min()) - 1, 0)
        r1 = min(math.floor(ri.max()) + 2, self.height)  # the lower/right neighbours (even of weight 0)
        c1 = min(math.floor(ci.max()) + 2, self.width)
        if (r1 - r0) * (c1 - c0) > MAX_WINDOW_CELLS // 4 and len(ci) > 1:
            half = len(ci) // 2
            return np.concatenate([self._sample_cells(ci[:half], ri[:half], relief),
                                   self._sample_cells(ci[half:], ri[half:], relief)])
        z = self.read_ft(((r0, r1), (c0, c1)))
        if relief is not None:
            relief.append(cells_relief(z))
        return _bilinear(z, ci, ri, (r0, c0), (self.height, self.width))

    def bounds_polygon(self, crs=None) -> Polygon:
        """The DEM footprint (outer cell edges) as a polygon in ``crs`` (default: the DEM CRS).

        Edges are densified (100 points per side) before reprojection so curved edges stay
        faithful.
        """
        t = self.transform
        cols = np.array([0, self.width, self.width, 0, 0], dtype="float64")
        rows = np.array([0, 0, self.height, self.height, 0], dtype="float64")
        xs = t.a * cols + t.b * rows + t.c
        ys = t.d * cols + t.e * rows + t.f
        poly = Polygon(np.column_stack([xs, ys]))
        if crs is None:
            return poly
        dst = to_pyproj(crs)
        if same_crs(self.crs, dst):
            return poly
        side = max(abs(t.a) * self.width, abs(t.e) * self.height) / 100.0
        dense = shapely.segmentize(poly, side)
        tr = _transformer(self.crs.to_wkt(), dst.to_wkt())
        return shapely.transform(dense, lambda c: np.column_stack(tr.transform(c[:, 0], c[:, 1])))

    def nodata_area(self, bounds: tuple[float, float, float, float], crs: Any) -> Any:
        """The cells without an elevation (nodata, masked, a fill or impossible value: NaN as
        :meth:`read_ft` reads them) around ``bounds`` (in ``crs``), as one (multi)polygon of their
        outer edges in ``crs``; empty when every cell there has data or ``bounds`` misses the DEM.

        Only the window of cells covering ``bounds`` is read (:meth:`window_of`: a slice of the
        :attr:`focus` when inside it). Cells outside the DEM's extent are not part of it (see
        :meth:`bounds_polygon`).

        Examples
        --------
        >>> from geoconstraints.io.sample import sample_path
        >>> dem = open_dem(sample_path("dem.tif"))
        >>> dem.nodata_area(dem.bounds_polygon().bounds, dem.crs).is_empty
        True
        """
        import rasterio.features  # see the note on imports at the top

        win = self.window_of(bounds, crs)
        if win is None:
            return Polygon()
        r0, r1, c0, c1 = win
        missing = ~np.isfinite(self.read_ft(((r0, r1), (c0, c1))))
        if not missing.any():
            return Polygon()
        at = self.transform @ affine.Affine.translation(c0, r0)
        cells = [shape(s) for s, _ in
                 rasterio.features.shapes(missing.astype("uint8"), mask=missing, transform=at)]
        area = shapely.union_all(cells)
        dst = to_pyproj(crs)
        if same_crs(self.crs, dst):
            return area
        dense = shapely.segmentize(area, max(abs(self.transform.a), abs(self.transform.e)))
        tr = _transformer(self.crs.to_wkt(), dst.to_wkt())
        return shapely.transform(dense, lambda c: np.column_stack(tr.transform(c[:, 0], c[:, 1])))


def rotated_fix(dem: Dem) -> str:
    """How to turn a rotated (or sheared) DEM grid north-up: ``gdalwarp`` into its own CRS, which aligns
    the cells with north (the sentence after "rotated grids are not supported").

    Examples
    --------
    >>> d = Dem(path=Path("lidar tile.tif"), crs=pyproj.CRS.from_epsg(2261), transform=affine.Affine(9.8, 2, 0, 2, -9.8, 0),
    ...         width=10, height=10, nodata=None, z_units="ft", z_units_source="metadata", xy_unit_ft=1.0)
    >>> rotated_fix(d)
    "Make it north-up with gdalwarp, into its own CRS: gdalwarp -t_srs EPSG:2261 'lidar tile.tif' 'lidar tile_north_up.tif', and give that file"
    """
    epsg = dem.crs.to_epsg() if dem.crs is not None else None
    target = f"EPSG:{epsg}" if epsg else "<its CRS>"
    out = dem.path.with_name(f"{dem.path.stem}_north_up.tif").name
    return (f"Make it north-up with gdalwarp, into its own CRS: gdalwarp -t_srs {target} "
            f"{shlex.quote(visible_text(dem.path.name))} {shlex.quote(visible_text(out))}, and give that file")


def apply_transform(t: affine.Affine, x, y):
    """Apply an affine transform to coordinates (scalars or arrays) without ``*``."""
    return t.a * x + t.b * y + t.c, t.d * x + t.e * y + t.f


MAX_WINDOW_CELLS = 25_000_000
"""Most DEM cells read at once (100 MB as float32: 5,000 x 5,000 cells, 1-m lidar over 5 km x 5 km).
A larger window (a plan or road spanning more of a fine DEM) is refused with a clear message."""

_CACHED_WINDOWS = 8
"""Windows kept in memory besides the focus (a road's profile window is read once per road)."""

MAX_ELEVATION_FT = 1e7
"""A cell further from sea level than this (3,000 km) is no elevation but a fill value (-3.4e38...):
refused when the DEM declares no nodata value."""

FILL_VALUES = (-9999.0, -32768.0, -32767.0, -3.4028234663852886e38)
"""Common "no data" fills (stored values, before the band's scale and offset): refused when the DEM
declares no nodata value (``gdal_edit.py -a_nodata`` is the fix); nodata, with a warning, when it
declares another one (a band has a single nodata value)."""

MIN_GROUND_FT = -1_500.0
"""Lowest elevation of the Earth's land surface, with a margin (the Dead Sea shore is -1,410 ft):
a cell below it is no ground but a fill or a wrong scale, read as nodata with a warning."""

MAX_GROUND_FT = 30_000.0
"""Highest elevation of the Earth's land surface, with a margin (Everest is 29,032 ft): a cell
above it is no ground but a fill (65535 in a uint16 DEM) or a wrong scale, read as nodata with a
warning."""


def _read_window_ft(dem: Dem, key: tuple[int, int, int, int]) -> np.ndarray:
    """Read cells ``(row0, row1, col0, col1)`` of band 1 as float32 feet (float64 for a float64
    DEM), the band's scale and offset applied; NaN where masked, and where a cell holds a fill
    value or no ground elevation (:func:`_mask_impossible`).

    The only place DEM values are read: every window, the focus and whole-band reads come here.
    """
    r0, r1, c0, c1 = key
    cells = (r1 - r0) * (c1 - c0)
    name = dem.path.name
    if cells > MAX_WINDOW_CELLS:
        raise DemError(
            f"DEM {name}: the area needed is {r1 - r0:,} x {c1 - c0:,} cells, more than the {MAX_WINDOW_CELLS:,} "
            f"read at once. Clip the DEM to the plan's area (gdalwarp -te ...) or resample it to coarser cells"
        )
    import rasterio.errors  # see the note on imports at the top

    scaled = dem.z_scale != 1.0 or dem.z_offset != 0.0
    try:
        with rasterio.open(dem.uri or dem.path) as src:
            float64 = src.dtypes[0] == "float64"  # float32 is exact for the cells of the rest
            stored, z = _read_stored(src, dem, key, "float64" if float64 or scaled else "float32")
    except (rasterio.errors.RasterioError, MemoryError) as exc:
        raise LayerReadError(
            f"DEM {name}: cannot be read ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}). "
            f"Check the file is a complete GeoTIFF."
        ) from None
    _check_values(stored, z, dem)
    _mask_impossible(stored, z, dem, key)
    if scaled and not float64:
        z = z.astype("float32")
    _check_relief(dem, key, z)
    z.flags.writeable = False
    return z


def _read_stored(src: Any, dem: Dem, key: tuple[int, int, int, int], dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """``(stored, z_ft)``: cells ``(row0, row1, col0, col1)`` of band 1 of the open ``src`` as read
    (NaN where masked) and as feet (the band's scale and offset and the unit applied; ``stored``
    itself when none changes it)."""
    from rasterio.windows import Window  # see the note on imports at the top

    r0, r1, c0, c1 = key
    band = src.read(1, window=Window(c0, r0, c1 - c0, r1 - r0), masked=True, out_dtype=dtype)
    stored = np.ma.filled(band, np.nan)
    scaled = dem.z_scale != 1.0 or dem.z_offset != 0.0
    z = stored * dem.z_scale + dem.z_offset if scaled else stored  # float64 for a scaled band
    if dem.z_factor_ft != 1.0:
        z = z * z.dtype.type(dem.z_factor_ft)
    return stored, z


def cells_relief(z: np.ndarray) -> tuple[float, float, int]:
    """``(lowest, highest, count)`` of the valid (finite) cells of ``z``; NaN, NaN, 0 when none.

    Examples
    --------
    >>> cells_relief(np.array([[800.0, np.nan], [800.5, 801.0]]))
    (800.0, 801.0, 3)
    """
    n = int(np.count_nonzero(np.isfinite(z)))
    if n == 0:
        return float("nan"), float("nan"), 0
    return float(np.nanmin(z)), float(np.nanmax(z)), n


PROBE_GRID = 3
"""A DEM holding one value in the whole area a run needs is probed in PROBE_GRID x PROBE_GRID small
windows spread across the raster before it is refused (:func:`_check_relief`)."""

PROBE_CELLS = 16
"""Side in cells of each probe window: 9 windows of 16 x 16 cells, never the whole raster."""


def _check_relief(dem: Dem, key: tuple[int, int, int, int], z: np.ndarray) -> None:
    """Check the area the run needs (the focus: the plan's layers plus a margin) has relief.

    When every valid cell of it holds one value, a few small windows across the raster are read
    too (:data:`PROBE_GRID` x :data:`PROBE_GRID` windows of :data:`PROBE_CELLS` cells, never the
    whole band). If they hold that value (or no data) the raster has no relief:

    - all 0 ft is refused (:class:`DemError`): zero is what an empty band, a mask or a raster never
      written holds (GDAL reads unwritten blocks as 0), never the ground across a plan; every grade
      on it would be 0 % and every highest adjacent grade 0 ft;
    - another single value is read with a warning naming the DEM and the likely fix (the wrong band,
      a placeholder): a synthetic flat site is an input the rules take (a building pad's highest
      adjacent grade), and what needs relief is not evaluated on it (a road's grade,
      :func:`geoconstraints.geometry.terrain.road_terrain`).

    A flat area around the plan in a raster with relief elsewhere (a hydro-flattened lake, an
    undeclared constant fill) is warned about too. Real lidar is never one exact value across a
    plan and a 1,000-ft margin. Other windows are the sampler's plain reads (:meth:`Dem.sample`
    reports their relief to its caller).
    """
    lo, hi, n = cells_relief(z)
    if n >= 2 and hi > lo:
        dem._relief = True
        return
    if n < 2 or key != dem.focus:
        return
    name = dem.path.name
    whole = key == (0, dem.height, 0, dem.width)
    others = None if whole else _probe(dem)
    if others is not None and len(others[others != lo]):  # relief elsewhere: the plan's area is flat (water, a patch)
        dem._relief = True
        logger.warning("DEM %s: every one of the %s valid cells around the plan holds %s ft, while the raster has "
                       "relief elsewhere (%s ft to %s ft sampled): what is measured there is not evaluated. A water "
                       "body's flattened surface, or a no-data fill the DEM does not declare (gdal_edit.py -a_nodata)?",
                       name, f"{n:,}", f"{lo:,.2f}", f"{float(np.min(others)):,.2f}", f"{float(np.max(others)):,.2f}")
        return
    where = (f"all {n:,} valid cells of the raster" if whole else
             f"{n:,} around the plan, and {PROBE_GRID * PROBE_GRID} windows sampled across the raster"
             + (" hold the same" if others is not None and len(others) else " hold no data"))
    likely = (f"band 1 of its {dem.band_count} bands is read: extract the elevation band (gdal_translate -b N "
              f"{name} dem.tif), or it is a placeholder raster" if dem.band_count > 1 else
              "it is the wrong file or band (a mask, an empty export) or a placeholder raster")
    check = f"Check it with gdalinfo -stats {name} (its minimum equals its maximum) and give the DEM of the ground"
    if lo == 0:
        raise DemError(f"DEM {name}: every valid cell read holds 0 ft ({where}): no relief, as an empty band or a "
                       f"raster never written holds; every grade on it would be 0 %. Likely {likely}. {check}")
    logger.warning("DEM %s: every valid cell read holds %s ft (%s): no relief, so grades are not evaluated on it. "
                   "If the ground is not this flat, %s. %s", name, f"{lo:,.2f}", where, likely, check)


def _probe(dem: Dem) -> np.ndarray | None:
    """The valid elevations (ft) of :data:`PROBE_GRID` x :data:`PROBE_GRID` windows of
    :data:`PROBE_CELLS` cells spread across the whole raster (fills and impossible values left
    out, as :func:`_mask_impossible` reads them); None when the file cannot be read there."""
    import rasterio.errors  # see the note on imports at the top

    half = PROBE_CELLS // 2
    keys = {(max(r - half, 0), min(r + half, dem.height), max(c - half, 0), min(c + half, dem.width))
            for r in (int((i + 0.5) * dem.height / PROBE_GRID) for i in range(PROBE_GRID))
            for c in (int((j + 0.5) * dem.width / PROBE_GRID) for j in range(PROBE_GRID))}
    values = []
    try:
        with rasterio.open(dem.uri or dem.path) as src:
            for key in sorted(keys):
                stored, z = _read_stored(src, dem, key, "float64")
                with np.errstate(invalid="ignore"):
                    bad = _impossible(stored, z)[1] | (np.abs(z) > MAX_ELEVATION_FT) | ~np.isfinite(z)
                values.append(z[~bad])
    except (rasterio.errors.RasterioError, MemoryError):
        return None
    return np.concatenate(values) if values else np.array([])


def _check_values(stored: np.ndarray, z_ft: np.ndarray, dem: Dem) -> None:
    """Refuse infinite cells, and, in a DEM declaring no nodata value, fill values (its ``stored``
    values) and values no elevation has (``z_ft``, feet): declaring the fill is the fix."""
    name = dem.path.name
    inf = np.isinf(stored) | np.isinf(z_ft)
    if inf.any():
        raise DemError(f"DEM {name}: {int(inf.sum()):,} cell(s) in the area needed hold infinity, which is no "
                       f"elevation. Set them to nodata (e.g. gdal_calc.py) or fix the DEM")
    if dem.nodata is not None or not np.isfinite(stored).any():
        return  # with a nodata value declared, fills are read as nodata (_mask_impossible)
    lo = float(np.nanmin(stored))
    fill = next((f for f in FILL_VALUES if lo == np.float32(f)), None)
    far = np.abs(z_ft) > MAX_ELEVATION_FT
    if fill is not None or far.any():
        bad = fill if fill is not None else float(stored[far][np.argmax(np.abs(z_ft[far]))])
        raise DemError(f"DEM {name}: cells in the area needed hold {bad:g}, which is no elevation (a no-data fill "
                       f"the DEM does not declare?). Declare it: gdal_edit.py -a_nodata {bad:g} {name}")


def _mask_impossible(stored: np.ndarray, z_ft: np.ndarray, dem: Dem, key: tuple[int, int, int, int]) -> None:
    """Set to NaN (nodata) in ``z_ft`` the cells holding a common fill value the DEM does not declare
    (it declares another) or an elevation outside :data:`MIN_GROUND_FT` .. :data:`MAX_GROUND_FT`,
    warning once per window with the DEM's name and the count: never read as ground."""
    with np.errstate(invalid="ignore"):
        fills, bad = _impossible(stored, z_ft)
    if not bad.any():
        return
    values = np.unique(stored[bad])  # before ``z_ft`` (maybe ``stored`` itself) is set to NaN
    z_ft[bad] = np.nan
    if key in dem._warned:
        return
    dem._warned.add(key)
    name = dem.path.name
    shown = (", ".join(f"{v:.9g}" for v in values) if len(values) <= 3
             else f"{len(values):,} values from {values[0]:.9g} to {values[-1]:.9g}")
    why = []
    if fills.any():
        declared = "declares no nodata value" if dem.nodata is None else f"declares nodata {dem.nodata:g}"
        why.append(f"a no-data fill the DEM does not declare (it {declared})")
    if (bad & ~fills).any():
        how = " with the band's scale and offset" if dem.z_scale != 1.0 or dem.z_offset != 0.0 else ""
        why.append(f"an elevation no ground has{how} (below {MIN_GROUND_FT:,.0f} ft or above {MAX_GROUND_FT:,.0f} ft)")
    fix = "nodata" if dem.nodata is None else f"the DEM's nodata value {dem.nodata:g}"
    logger.warning("DEM %s: %s cell(s) in the area read hold %s (stored value): %s. Read as nodata: what lies on "
                   "them is not evaluated. Set them to %s (gdal_calc.py), or fix the DEM's units, scale or offset",
                   name, f"{int(bad.sum()):,}", shown, " or ".join(why), fix)


def _impossible(stored: np.ndarray, z_ft: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(fills, bad)``: the cells holding a common fill value (:data:`FILL_VALUES`, stored), and
    those or an elevation outside :data:`MIN_GROUND_FT` .. :data:`MAX_GROUND_FT` (``z_ft``)."""
    fills = np.isin(stored, np.asarray(FILL_VALUES, dtype=stored.dtype))
    return fills, fills | (z_ft < MIN_GROUND_FT) | (z_ft > MAX_GROUND_FT)


def _bilinear(z: np.ndarray, col: np.ndarray, row: np.ndarray, origin: tuple[int, int],
              shape: tuple[int, int]) -> np.ndarray:
    """Vectorized bilinear interpolation of cell-centre values at fractional (col, row) of the whole
    DEM (``shape`` rows x cols), from the window ``z`` whose first cell is ``origin`` (row, col).

    Points must lie on the DEM (0 <= col <= width, 0 <= row <= height); within the outer half
    cell the edge cells are extended.
    """
    h, w = shape
    fc = np.clip(col - 0.5, 0.0, w - 1.0)
    fr = np.clip(row - 0.5, 0.0, h - 1.0)
    c0 = np.floor(fc).astype(np.intp)
    r0 = np.floor(fr).astype(np.intp)
    c1 = np.minimum(c0 + 1, w - 1)
    r1 = np.minimum(r0 + 1, h - 1)
    tx = fc - c0
    ty = fr - r0
    orow, ocol = origin
    out = np.zeros(col.shape, dtype="float64")
    for rr, cc, wt in (
        (r0, c0, (1 - tx) * (1 - ty)),
        (r0, c1, tx * (1 - ty)),
        (r1, c0, (1 - tx) * ty),
        (r1, c1, tx * ty),
    ):
        # A neighbour with zero weight (point on a cell-centre line) does not matter, even if nodata.
        out += np.where(wt > 0, z[rr - orow, cc - ocol].astype("float64") * wt, 0.0)
    return out


_OTHER_LENGTH_UNITS: frozenset[str] = frozenset({
    "cm", "centimeter", "centimeters", "centimetre", "centimetres", "mm", "millimeter", "millimeters",
    "millimetre", "millimetres", "dm", "decimeter", "decimeters", "decimetre", "decimetres", "in", "inch", "inches",
    "yd", "yard", "yards", "km", "kilometer", "kilometers", "kilometre", "kilometres", "mi", "mile", "miles",
})
"""Length units a DEM's metadata may name that are neither feet nor metres (an integer DEM in
centimetres): such a unit beside a feet or metre one elsewhere in the metadata is a contradiction."""


def _vertical_unit_from_metadata(src) -> tuple[str | None, str | None]:
    """(normalized unit, raw text) from band units, unit tags, or a compound CRS.

    Every place is read: when two of them name different units (band unit ``ft`` but a
    ``UNITTYPE=metre`` tag, or a compound CRS whose vertical axis is in metres; or ``cm`` beside
    ``metre``) the unit is ``None`` and the raw text says which places disagree, so the user must
    say (``--dem-z-units``): taking the first one found made a metre DEM read as feet (grades
    3.28 times too gentle) without a word.
    """
    candidates: list[tuple[str, str]] = []
    units = getattr(src, "units", None) or ()
    if units and units[0]:
        candidates.append(("band unit", str(units[0])))
    for where, tags in (("band tag", src.tags(1)), ("dataset tag", src.tags())):
        upper = {str(k).upper(): (str(k), v) for k, v in tags.items()}
        candidates += [(f"{where} {upper[k][0]}", str(upper[k][1])) for k in _UNIT_TAG_KEYS if upper.get(k, ("", ""))[1]]
    if src.crs is not None:
        try:
            c = pyproj.CRS.from_wkt(src.crs.to_wkt())
            for sub in c.sub_crs_list if c.is_compound else [c]:
                if sub.is_vertical and sub.axis_info:
                    candidates.append((f"vertical CRS {sub.name}", sub.axis_info[0].unit_name))
        except pyproj.exceptions.CRSError:  # pragma: no cover - rasterio already parsed it
            pass
    stated: list[tuple[str, str, str]] = []  # (where, raw, unit: ft / m / the other unit's name)
    for where, raw in candidates:
        unit = normalize_length_unit(raw)
        if unit is None and raw.strip().lower() in _OTHER_LENGTH_UNITS:
            unit = raw.strip().lower()
        if unit is not None:
            stated.append((where, raw, unit))
    if len({u for _, _, u in stated}) > 1:
        said = "; ".join(f"{where} {raw!r}" for where, raw, _ in stated)
        return None, f"{CONFLICT_MARK}{said}"
    for _, raw, unit in stated:
        if unit in Z_UNITS:
            return unit, raw
    return None, (candidates[0][1] if candidates else None)


CONFLICT_MARK = "contradicting metadata: "
"""How :func:`_vertical_unit_from_metadata` marks metadata naming two vertical units."""


def open_dem(path: str | Path, *, z_units: str | None = None) -> Dem:
    """Open a GeoTIFF DEM and establish its horizontal and vertical units.

    Parameters
    ----------
    path : str or Path
        The GeoTIFF.
    z_units : {'ft', 'm'}, optional
        Vertical unit of the stored values. Required when the file's metadata does not say;
        refused when it contradicts the metadata (one of the two is wrong: a metre DEM read as
        feet turns grades over the limit into grades under it).

    Returns
    -------
    Dem

    Raises
    ------
    LayerReadError
        Missing, zero-byte, corrupt or non-raster file, or not a regular file (a pipe, a device).
    DemError
        No CRS, a local (engineering) CRS, vertical units unknown, an invalid ``z_units`` or one
        that contradicts the metadata.

    Examples
    --------
    >>> from geoconstraints.io.sample import sample_path
    >>> dem = open_dem(sample_path("dem.tif"))
    >>> dem.crs.to_epsg(), dem.z_units, dem.z_units_source
    (2261, 'ft', 'metadata')
    """
    text = os.fspath(path)
    uri = gdal_path(text) if is_virtual(text) else None
    path = Path(text)
    if uri is not None:  # the provenance hashes the DEM's file: it must be on this machine
        archive = local_archive(text)
        if archive is None or not archive.is_file():
            raise DemError(f"DEM {redact(text)}: a DEM must be a file on this machine (a GeoTIFF, or one inside a "
                           f"local .zip through /vsizip/), so the report can record its SHA-256. Download it and "
                           f"give its path")
        path = archive
    name = path.name
    user_unit = _user_z_units(name, z_units)
    stamp = file_stamp(path)  # before any byte is read
    meta = _read_dem_header(path, uri)
    if not meta["placed"]:
        how = ("it is georeferenced by ground control points (or RPCs) only, not as a grid. Warp it to a "
               f"north-up grid in a projected CRS: gdalwarp -t_srs EPSG:XXXX {name} {path.stem}_grid.tif" if meta["gcps"]
               else "it has no geotransform (no origin or cell size), so no cell lies anywhere. Export it again as a "
               f"georeferenced GeoTIFF, or assign its corners: gdal_edit.py -a_ullr ULX ULY LRX LRY {name}")
        raise DemError(f"DEM {name}: its cells are not placed on the map: {how}")
    _refuse_image(name, meta)
    if meta["crs"] is None:
        raise DemError(
            f"DEM {name}: has no coordinate reference system. Assign the one it was made in "
            f"(e.g. gdal_edit.py -a_srs EPSG:2261 {name}) and run again."
        )
    crs = pyproj.CRS.from_wkt(meta["crs"].to_wkt())
    if crs.is_engineering or not (crs.is_projected or crs.is_geographic):
        raise DemError(f"DEM {name}: its CRS ({crs.name}) is a local engineering system, not tied to the earth, "
                       f"so it cannot be placed under the layers. Assign the real CRS (gdal_edit.py -a_srs EPSG:XXXX "
                       f"{name})")
    nodata = meta["nodata"]
    unit, source = _z_units_and_source(name, user_unit, meta["unit"], meta["raw_unit"])
    scale, offset = _scale_and_offset(name, meta["scale"], meta["offset"])
    dem = Dem(path=path, crs=crs, transform=meta["transform"], width=int(meta["width"]),
              height=int(meta["height"]), nodata=None if nodata is None else float(nodata),
              z_units=unit, z_units_source=source, xy_unit_ft=ft_per_unit(crs), z_scale=scale, z_offset=offset,
              band_count=int(meta["count"]), uri=uri, stamp=stamp)
    logger.info("DEM %s: %dx%d cells of %.3f ft, z in %s, nodata=%s",
                name, dem.width, dem.height, dem.cell_size_ft, dem.z_description, dem.nodata)
    return dem


IMAGE_COLOURS = frozenset({"red", "green", "blue", "alpha", "hue", "saturation", "lightness", "cyan", "magenta",
                           "yellow", "black", "Y", "Cb", "Cr"})
"""GDAL colour interpretations of a band of a picture (``ColorInterp=Red`` ...): never elevations."""


def _refuse_image(name: str, meta: dict[str, Any]) -> None:
    """Refuse a raster whose band 1 is a colour channel of a picture (an RGB map, a coloured hillshade
    or colour relief) or an 8-bit band with a colour table: its 0-255 values read as feet made a
    road's grades what the colours happen to be (a 660 ft run over 25 % read as a pass).

    Examples
    --------
    >>> _refuse_image("dem.tif", {"colour": "gray", "dtype": "float32", "count": 1})
    >>> _refuse_image("map.tif", {"colour": "red", "dtype": "uint8", "count": 3})
    Traceback (most recent call last):
    ...
    geoconstraints.errors.DemError: DEM map.tif: band 1 is the red channel of a colour image (3 bands of 8-bit values), not ground elevations: a map, a coloured hillshade or a colour relief was given as the DEM. Give the elevation raster itself (gdalinfo shows its one band as ColorInterp=Gray or Undefined, with elevations as values)
    """
    colour, dtype = str(meta.get("colour", "")), str(meta.get("dtype", ""))
    bits = "8-bit" if dtype == "uint8" else dtype
    if colour in IMAGE_COLOURS:
        what = f"the {colour} channel of a colour image ({meta.get('count', 1)} band(s) of {bits} values)"
    elif colour == "palette" and dtype == "uint8":
        what = "the colour indexes of a paletted image (8-bit values with a colour table)"
    else:
        return
    raise DemError(f"DEM {name}: band 1 is {what.replace('band(s)', 'bands' if meta.get('count', 1) > 1 else 'band')}, "
                   f"not ground elevations: a map, a coloured hillshade or a colour relief was given as the DEM. Give "
                   f"the elevation raster itself (gdalinfo shows its one band as ColorInterp=Gray or Undefined, with "
                   f"elevations as values)")


def _scale_and_offset(name: str, scale: Any, offset: Any) -> tuple[float, float]:
    """The band's scale and offset as floats (1 and 0 when not set); a zero or non-finite one is
    refused (it would turn every cell into one value, or none)."""
    s = 1.0 if scale is None else float(scale)
    o = 0.0 if offset is None else float(offset)
    if not (math.isfinite(s) and s != 0.0 and math.isfinite(o)):
        raise DemError(f"DEM {name}: its band scale {s:g} and offset {o:g} (elevation = stored value x scale + "
                       f"offset) give no elevations. Fix them, e.g. gdal_edit.py -scale 1 -offset 0 {name} if the "
                       f"stored values are the elevations")
    return s, o


def _user_z_units(name: str, z_units: str | None) -> str | None:
    """The user's vertical unit as ``'ft'``/``'m'`` (None when not given); refuse any other."""
    if z_units is None:
        return None
    norm = normalize_length_unit(z_units)
    if norm is None:
        raise DemError(
            f"DEM {name}: z_units {z_units!r} is not a vertical unit: use one of ft, m "
            "(--dem-z-units ft or --dem-z-units m)."
        )
    return norm


def _read_dem_header(path: Path, uri: str | None = None) -> dict[str, Any]:
    """CRS, transform, size, nodata, band 1's scale and offset and the metadata's vertical unit of a
    GeoTIFF (no pixels read)."""
    if uri is None:
        if not path.exists():
            raise LayerReadError(
                f"DEM {path}: cannot be read (no such file). Check the file is a GeoTIFF and the path is right."
            )
        if path.is_file() and path.stat().st_size == 0:
            raise LayerReadError(
                f"DEM {path}: cannot be read (the file is empty, 0 bytes). Check the file is a "
                "GeoTIFF and copy it again."
            )
        try:
            check_file(path, "DEM")
        except LayerReadError as exc:
            raise LayerReadError(f"{exc} (a GeoTIFF)") from None
    import rasterio.errors  # see the note on imports at the top

    try:
        with warnings.catch_warnings():
            # no geotransform: refused by open_dem, naming the DEM (not rasterio's own warning line)
            warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)
            with rasterio.open(uri or path) as src:
                if src.count < 1:
                    raise LayerReadError(
                        f"DEM {path}: cannot be read (it has no raster band). Check the file is a GeoTIFF DEM."
                    )
                unit, raw_unit = _vertical_unit_from_metadata(src)
                transform = src.transform
                placed = not (transform.is_identity or transform.determinant == 0)
                return {"unit": unit, "raw_unit": raw_unit, "crs": src.crs, "transform": transform,
                        "width": src.width, "height": src.height, "nodata": src.nodata,
                        "scale": src.scales[0], "offset": src.offsets[0], "count": src.count,
                        "placed": placed, "gcps": bool(src.gcps[0]) or bool(src.rpcs),
                        "colour": src.colorinterp[0].name, "dtype": src.dtypes[0]}
    except rasterio.errors.RasterioError as exc:
        raise LayerReadError(
            f"DEM {redact(uri) if uri else path}: cannot be read ({str(exc).splitlines()[0][:200]}). Check the file "
            "is a GeoTIFF (not a zero-byte, truncated or renamed file)."
        ) from None


def _z_units_and_source(name: str, user_unit: str | None, meta_unit: str | None,
                        raw_unit: str | None) -> tuple[str, str]:
    """The vertical unit and where it came from: the user's, else the metadata's; neither, or the
    two contradicting each other, is an error (never guessed)."""
    conflict = raw_unit[len(CONFLICT_MARK):] if raw_unit and raw_unit.startswith(CONFLICT_MARK) else None
    if user_unit is not None:
        if meta_unit is not None and meta_unit != user_unit:
            raise DemError(
                f"DEM {name}: --dem-z-units {user_unit} contradicts the DEM's own metadata, which says its "
                f"elevations are in {raw_unit!r} ({meta_unit}). One of them is wrong: leave --dem-z-units out to use "
                f"the metadata, or fix the metadata (gdal_edit.py -units) if it is wrong"
            )
        return user_unit, "user"
    if meta_unit is not None:
        return meta_unit, "metadata"
    if conflict is not None:
        raise DemError(
            f"DEM {name}: vertical units unknown: its metadata contradicts itself ({conflict}). Say which is right "
            f"with --dem-z-units ft or --dem-z-units m, and fix the metadata (gdal_edit.py -units, or -unsetmd for the "
            f"wrong tag) (a metre DEM read as feet gives grades 3.28 times off)."
        )
    why = f"its metadata unit {raw_unit!r} is not feet or metres" if raw_unit else "no unit in its metadata"
    raise DemError(
        f"DEM {name}: vertical units unknown ({why}). Say which with --dem-z-units ft or "
        "--dem-z-units m (a metre DEM read as feet gives grades 3.28 times off)."
    )
