"""A hillshade of the DEM for the web map's background (numpy; no tiles, no network).

The DEM is cut to the map's area (a window of its array), shaded with the usual formula (the
cosine between the sun and the surface normal; sun from the north-west, 45 degrees up), warped
to Web Mercator (rasterio) so that Leaflet places it exactly, and written as a PNG whose pixels
darken (shadows) or lighten (sunlit slopes) what lies under them.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyproj

from geoconstraints.io.dem import Dem

SHADOW_ALPHA = 0.55
"""Opacity of the darkest shadow (black)."""

LIGHT_ALPHA = 0.35
"""Opacity of the brightest sunlit slope (white)."""


@dataclass
class Hillshade:
    """A hillshade image placed on the map.

    Attributes
    ----------
    data_uri : str
        ``data:image/png;base64,...``.
    bounds_latlon : list
        ``[[south, west], [north, east]]`` of the image (Web Mercator pixels, so Leaflet's
        linear placement is exact).
    shape : (int, int)
        Rows and columns of the image.
    """

    data_uri: str
    bounds_latlon: list[list[float]]
    shape: tuple[int, int]


def shade(z_ft: np.ndarray, cell_x_ft: float, cell_y_ft: float, *, azimuth: float = 315.0,
          altitude: float = 45.0) -> np.ndarray:
    """Illumination 0-1 of each cell (NaN where the elevation is NaN).

    Rows run south (as in a north-up raster). ``cos`` of the angle between the sun and the
    surface normal ``(-dz/dx, -dz/dy, 1)``; flat ground gets ``sin(altitude)``.

    Examples
    --------
    >>> z = np.array([[10.0, 10.0], [10.0, 10.0]])
    >>> round(float(shade(z, 1.0, 1.0)[0, 0]), 4)  # flat: sin(45 degrees)
    0.7071
    >>> west_up = np.array([[2.0, 1.0, 0.0]] * 3)  # falls to the east: faces the sun less
    >>> bool(shade(west_up, 1.0, 1.0)[1, 1] < 0.7071)
    True
    """
    dz_drow, dz_dcol = np.gradient(np.asarray(z_ft, dtype=float), cell_y_ft, cell_x_ft)
    dzdx, dzdy = dz_dcol, -dz_drow  # y points north, rows south
    az, alt = math.radians(azimuth), math.radians(altitude)
    sun = np.array([math.sin(az) * math.cos(alt), math.cos(az) * math.cos(alt), math.sin(alt)])
    norm = np.sqrt(dzdx ** 2 + dzdy ** 2 + 1.0)
    return np.clip((-dzdx * sun[0] - dzdy * sun[1] + sun[2]) / norm, 0.0, 1.0)


def _rgba(light: np.ndarray, altitude: float) -> np.ndarray:
    """Black (shadow) or white (sunlit) with an opacity growing away from flat ground; NaN transparent."""
    flat = math.sin(math.radians(altitude))
    out = np.zeros(light.shape + (4,), dtype=np.uint8)
    dark = np.clip((flat - light) / flat, 0, 1) * SHADOW_ALPHA
    bright = np.clip((light - flat) / (1 - flat), 0, 1) * LIGHT_ALPHA
    up = light > flat
    out[..., :3] = np.where(up, 255, 0)[..., None]
    alpha = np.where(up, bright, dark) * 255
    nodata = np.isnan(light)
    out[..., 3] = np.round(np.where(nodata, 0.0, alpha)).astype(np.uint8)  # NaN never reaches the cast
    out[nodata] = 0
    return out


def hillshade_image(dem: Dem, area: Any, crs: Any, *, max_px: int = 1600, azimuth: float = 315.0,
                    altitude: float = 45.0) -> Hillshade | None:
    """The hillshade of ``dem`` over ``area`` (a polygon in ``crs``), or None when they do not meet.

    Parameters
    ----------
    dem : Dem
    area : shapely geometry
        The map's area in ``crs``.
    crs : CRS-like
    max_px : int
        Longest side of the image; the DEM is read at a coarser step when the window is larger.
    azimuth, altitude : float
        Sun direction in degrees.
    """
    import rasterio.windows  # imported here: a run without a DEM does not pay rasterio's import

    x0, y0, x1, y1 = area.bounds
    tr = pyproj.Transformer.from_crs(pyproj.CRS(crs), dem.crs, always_xy=True)
    xs, ys = tr.transform([x0, x1, x0, x1], [y0, y0, y1, y1])
    win = rasterio.windows.from_bounds(min(xs), min(ys), max(xs), max(ys), dem.transform)
    win = win.round_offsets().round_lengths().intersection(
        rasterio.windows.Window(0, 0, dem.width, dem.height))
    if win.width < 3 or win.height < 3:
        return None
    step = max(1, math.ceil(max(win.width, win.height) / max_px))
    z = np.array(dem.read_ft(win)[::step, ::step], dtype=float)
    t = dem.transform
    cell_x = math.hypot(t.a, t.d) * step * (dem.xy_unit_ft or 1.0)
    cell_y = math.hypot(t.b, t.e) * step * (dem.xy_unit_ft or 1.0)
    if dem.xy_unit_ft is None:  # a geographic DEM: its mean cell size in feet
        cell_x = cell_y = dem.cell_size_ft * step
    rgba = _rgba(shade(z, cell_x, cell_y, azimuth=azimuth, altitude=altitude), altitude)
    src_t = rasterio.windows.transform(win, t) * t.scale(step, step) if step > 1 else rasterio.windows.transform(win, t)
    return _warp_png(rgba, src_t, dem.crs, max_px)


def _warp_png(rgba: np.ndarray, src_t: Any, src_crs: pyproj.CRS, max_px: int) -> Hillshade:
    """Warp an RGBA array to Web Mercator and encode it as a PNG data URI placed by its bounds."""
    from PIL import Image
    from rasterio.warp import Resampling, calculate_default_transform, reproject  # as in hillshade_image

    h, w = rgba.shape[:2]
    left, top = src_t.c, src_t.f
    right, bottom = left + src_t.a * w, top + src_t.e * h
    dst_t, dw, dh = calculate_default_transform(src_crs.to_wkt(), "EPSG:3857", w, h,
                                                left=left, bottom=bottom, right=right, top=top)
    scale = max(1.0, max(dw, dh) / max_px)
    dw, dh = max(1, int(dw / scale)), max(1, int(dh / scale))
    dst_t = dst_t * dst_t.scale(scale, scale)
    out = np.zeros((4, dh, dw), dtype=np.uint8)
    for b in range(4):
        reproject(np.ascontiguousarray(rgba[..., b]), out[b], src_transform=src_t, src_crs=src_crs.to_wkt(),
                  dst_transform=dst_t, dst_crs="EPSG:3857", resampling=Resampling.bilinear, src_nodata=None,
                  dst_nodata=0)
    buf = io.BytesIO()
    Image.fromarray(np.moveaxis(out, 0, -1), "RGBA").save(buf, format="PNG", optimize=True)
    to_ll = pyproj.Transformer.from_crs(3857, 4326, always_xy=True)
    west, north = to_ll.transform(dst_t.c, dst_t.f)
    east, south = to_ll.transform(dst_t.c + dst_t.a * dw, dst_t.f + dst_t.e * dh)
    return Hillshade("data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii"),
                     [[float(south), float(west)], [float(north), float(east)]], (dh, dw))
