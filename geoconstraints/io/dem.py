"""Opening a DEM: horizontal and vertical units checked (feet or metres, never guessed),
elevations read in feet, bilinear sampling at points in any CRS.
"""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import affine
import numpy as np
import pyproj
import rasterio
import rasterio.errors
import shapely
from rasterio.windows import Window
from shapely.geometry import Polygon

from geoconstraints.errors import CRSError, DemError, LayerReadError
from geoconstraints.units import FT_PER_M, ft_per_unit, normalize_length_unit

logger = logging.getLogger(__name__)

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
        ``'ft'`` or ``'m'``: the unit of the *stored* values. :meth:`read_ft` converts.
    z_units_source : str
        ``'metadata'`` or ``'user'``: where ``z_units`` came from (for provenance).
    xy_unit_ft : float or None
        Feet per CRS horizontal unit (1.000002 for US survey feet, 3.2808 for metres);
        ``None`` for a geographic CRS.
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
    _z_ft: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

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
    def z_factor_ft(self) -> float:
        """Multiplier from stored values to feet (1.0 for a feet DEM, 3.2808 for metres)."""
        return 1.0 if self.z_units == "ft" else FT_PER_M

    def read_ft(self, window: Window | tuple | None = None) -> np.ndarray:
        """Elevations in feet as float64, NaN where nodata (or masked).

        The full array is read once and cached (DEMs here are small-ish); the returned array is
        read-only (a view of the cache).

        Parameters
        ----------
        window : rasterio.windows.Window or ((row_start, row_stop), (col_start, col_stop)), optional
            Sub-array to return; the whole DEM when omitted.

        Returns
        -------
        numpy.ndarray
            ``(rows, cols)`` float64 elevations in feet.
        """
        if self._z_ft is None:
            self._z_ft = _read_band_ft(self.path, self.z_factor_ft)
        z = self._z_ft
        if window is None:
            return z
        win = window if isinstance(window, Window) else Window.from_slices(*window)
        (r0, r1), (c0, c1) = win.toranges()
        return z[max(r0, 0) : max(r1, 0), max(c0, 0) : max(c1, 0)]

    def sample(self, x, y, crs) -> np.ndarray:
        """Bilinear elevations in feet at points given in ``crs``.

        Points are transformed to the DEM CRS with pyproj, then interpolated between the four
        surrounding cell centres. Within the outer half cell of the DEM (outside the outermost
        cell centres but inside its footprint) the edge cells are extended.

        Parameters
        ----------
        x, y : array-like
            Coordinates in ``crs``.
        crs : CRS-like
            CRS of ``x``/``y``.

        Returns
        -------
        numpy.ndarray
            float64 elevations in feet, NaN off the DEM, or where any neighbour cell with a
            non-zero bilinear weight is nodata.
        """
        x = np.asarray(x, dtype="float64")
        y = np.asarray(y, dtype="float64")
        xd, yd = _transform_xy(x, y, to_pyproj(crs), self.crs)
        return _bilinear(self.read_ft(), self.transform, np.asarray(xd), np.asarray(yd))

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


def apply_transform(t: affine.Affine, x, y):
    """Apply an affine transform to coordinates (scalars or arrays) without ``*``."""
    return t.a * x + t.b * y + t.c, t.d * x + t.e * y + t.f


def _read_band_ft(path: Path, factor: float) -> np.ndarray:
    """Read band 1 as float64 feet with NaN where masked (nodata or a GDAL mask band)."""
    try:
        with rasterio.open(path) as src:
            band = src.read(1, masked=True)
    except rasterio.errors.RasterioError as exc:
        raise LayerReadError(
            f"DEM {path}: cannot be read ({exc}). Check the file is a complete GeoTIFF."
        ) from exc
    z = np.ma.filled(band.astype("float64"), np.nan)
    if factor != 1.0:
        z *= factor
    z.flags.writeable = False
    return z


def _bilinear(z: np.ndarray, transform: affine.Affine, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Vectorized bilinear interpolation of grid ``z`` (cell-centre values) at map points."""
    h, w = z.shape
    col, row = apply_transform(~transform, x, y)
    inside = np.isfinite(col) & np.isfinite(row) & (col >= 0) & (col <= w) & (row >= 0) & (row <= h)
    fc = np.clip(np.where(inside, col, 0.5) - 0.5, 0.0, w - 1.0)
    fr = np.clip(np.where(inside, row, 0.5) - 0.5, 0.0, h - 1.0)
    c0 = np.floor(fc).astype(np.intp)
    r0 = np.floor(fr).astype(np.intp)
    c1 = np.minimum(c0 + 1, w - 1)
    r1 = np.minimum(r0 + 1, h - 1)
    tx = fc - c0
    ty = fr - r0
    out = np.zeros(x.shape, dtype="float64")
    for rr, cc, wt in (
        (r0, c0, (1 - tx) * (1 - ty)),
        (r0, c1, tx * (1 - ty)),
        (r1, c0, (1 - tx) * ty),
        (r1, c1, tx * ty),
    ):
        # A neighbour with zero weight (point on a cell-centre line) does not matter, even if nodata.
        out += np.where(wt > 0, z[rr, cc] * wt, 0.0)
    out[~inside] = np.nan
    return out


def _vertical_unit_from_metadata(src) -> tuple[str | None, str | None]:
    """(normalized unit, raw text) from band units, unit tags, or a compound CRS."""
    candidates: list[str] = []
    units = getattr(src, "units", None) or ()
    if units and units[0]:
        candidates.append(str(units[0]))
    for tags in (src.tags(1), src.tags()):
        upper = {str(k).upper(): v for k, v in tags.items()}
        candidates += [upper[k] for k in _UNIT_TAG_KEYS if upper.get(k)]
    if src.crs is not None:
        try:
            c = pyproj.CRS.from_wkt(src.crs.to_wkt())
            for sub in c.sub_crs_list if c.is_compound else [c]:
                if sub.is_vertical and sub.axis_info:
                    candidates.append(sub.axis_info[0].unit_name)
        except pyproj.exceptions.CRSError:  # pragma: no cover - rasterio already parsed it
            pass
    for raw in candidates:
        unit = normalize_length_unit(raw)
        if unit is not None:
            return unit, raw
    return None, (candidates[0] if candidates else None)


def open_dem(path: str | Path, *, z_units: str | None = None) -> Dem:
    """Open a GeoTIFF DEM and establish its horizontal and vertical units.

    Parameters
    ----------
    path : str or Path
        The GeoTIFF.
    z_units : {'ft', 'm'}, optional
        Vertical unit of the stored values. Wins over metadata (a warning is logged when they
        disagree). Required when the file's metadata does not say.

    Returns
    -------
    Dem

    Raises
    ------
    LayerReadError
        Missing, zero-byte, corrupt or non-raster file.
    DemError
        No CRS, vertical units unknown, or an invalid ``z_units``.

    Examples
    --------
    >>> from geoconstraints.io.sample import sample_path
    >>> dem = open_dem(sample_path("dem.tif"))
    >>> dem.crs.to_epsg(), dem.z_units, dem.z_units_source
    (2261, 'ft', 'metadata')
    """
    path = Path(path)
    name = path.name
    user_unit = _user_z_units(name, z_units)
    meta = _read_dem_header(path)
    if meta["crs"] is None:
        raise DemError(
            f"DEM {name}: has no coordinate reference system. Assign the one it was made in "
            f"(e.g. gdal_edit.py -a_srs EPSG:2261 {name}) and run again."
        )
    crs = pyproj.CRS.from_wkt(meta["crs"].to_wkt())
    unit, source = _z_units_and_source(name, user_unit, meta["unit"], meta["raw_unit"])
    nodata = meta["nodata"]
    dem = Dem(path=path, crs=crs, transform=meta["transform"], width=int(meta["width"]),
              height=int(meta["height"]), nodata=None if nodata is None else float(nodata),
              z_units=unit, z_units_source=source, xy_unit_ft=ft_per_unit(crs))
    logger.info("DEM %s: %dx%d cells of %.3f ft, z in %s (%s), nodata=%s",
                name, dem.width, dem.height, dem.cell_size_ft, unit, source, dem.nodata)
    return dem


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


def _read_dem_header(path: Path) -> dict[str, Any]:
    """CRS, transform, size, nodata and the metadata's vertical unit of a GeoTIFF (no pixels read)."""
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
        with rasterio.open(path) as src:
            if src.count < 1:
                raise LayerReadError(
                    f"DEM {path}: cannot be read (it has no raster band). Check the file is a GeoTIFF DEM."
                )
            unit, raw_unit = _vertical_unit_from_metadata(src)
            return {"unit": unit, "raw_unit": raw_unit, "crs": src.crs, "transform": src.transform,
                    "width": src.width, "height": src.height, "nodata": src.nodata}
    except rasterio.errors.RasterioError as exc:
        raise LayerReadError(
            f"DEM {path}: cannot be read ({exc}). Check the file is a GeoTIFF (not a zero-byte, "
            "truncated or renamed file)."
        ) from exc


def _z_units_and_source(name: str, user_unit: str | None, meta_unit: str | None,
                        raw_unit: str | None) -> tuple[str, str]:
    """The vertical unit and where it came from: the user's (a warning when the metadata
    disagrees), else the metadata's; neither is an error (never guessed)."""
    if user_unit is not None:
        if meta_unit is not None and meta_unit != user_unit:
            logger.warning("DEM %s: metadata says vertical unit %r but z_units=%r was given; using %r.",
                           name, raw_unit, user_unit, user_unit)
        return user_unit, "user"
    if meta_unit is not None:
        return meta_unit, "metadata"
    why = f"its metadata unit {raw_unit!r} is not feet or metres" if raw_unit else "no unit in its metadata"
    raise DemError(
        f"DEM {name}: vertical units unknown ({why}). Say which with --dem-z-units ft or "
        "--dem-z-units m (a metre DEM read as feet gives grades 3.28 times off)."
    )
