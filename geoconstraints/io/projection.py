"""Choosing and checking the working CRS: projected, in feet (NY State Plane by location,
else UTM in US feet); a geographic or unknown CRS never reaches a distance.
"""

from __future__ import annotations

import logging
import math

import pyproj
from pyproj import CRS
from shapely.geometry import Point, Polygon

from geoconstraints.errors import CRSError

log = logging.getLogger(__name__)

# A coarse outline of New York State (lon, lat), good to a few miles: enough to pick a State
# Plane zone. Data near the state line should name --crs explicitly.
_NY_OUTLINE = Polygon([
    (-79.76, 42.00), (-75.36, 42.00), (-75.07, 41.80), (-74.98, 41.48), (-74.69, 41.36),
    (-74.21, 41.13), (-73.90, 40.99), (-74.26, 40.50), (-73.95, 40.53), (-72.00, 40.95),
    (-71.85, 41.07), (-72.30, 41.20), (-73.66, 40.98), (-73.49, 41.21), (-73.55, 41.30),
    (-73.48, 42.05), (-73.26, 42.75), (-73.27, 43.57), (-73.41, 45.01), (-74.74, 45.00),
    (-75.30, 44.85), (-76.35, 44.20), (-76.20, 43.55), (-77.50, 43.30), (-79.06, 43.30),
    (-79.07, 43.08), (-78.90, 42.90), (-79.76, 42.27),
])
# Counties west of about 77.4°W are in the West zone, east of about 75.1°W in the East zone
# (Long Island: south of 41.1°N and east of 74.05°W). Approximate county lines.
_NY_WEST_OF = -77.40
_NY_EAST_OF = -75.10


def crs_unit(crs: CRS) -> str:
    """Name of the horizontal axis unit of ``crs`` (``'US survey foot'``, ``'metre'``, ``'degree'``)."""
    return crs.axis_info[0].unit_name if crs.axis_info else "unknown"


def is_feet(crs: CRS) -> bool:
    """True when ``crs`` is projected with a foot unit (US survey or international)."""
    return bool(crs.is_projected and "foot" in crs_unit(crs).lower())


def ny_state_plane(lon: float, lat: float) -> str | None:
    """EPSG code of the NY State Plane zone (ftUS) at ``lon, lat``, or None outside New York."""
    if not _NY_OUTLINE.contains(Point(lon, lat)):
        return None
    if lat < 41.1 and lon > -74.05:
        return "EPSG:2263"
    if lon < _NY_WEST_OF:
        return "EPSG:2262"
    if lon > _NY_EAST_OF:
        return "EPSG:2260"
    return "EPSG:2261"


def utm_feet(lon: float, lat: float) -> CRS:
    """The UTM zone at ``lon, lat`` on NAD83 (North America) or WGS 84, in US survey feet."""
    zone = int((lon + 180) // 6) + 1
    south = " +south" if lat < 0 else ""
    datum = "+datum=NAD83" if (-170 < lon < -50 and lat > 0) else "+datum=WGS84"
    return CRS.from_proj4(f"+proj=utm +zone={zone}{south} {datum} +units=us-ft +no_defs +type=crs")


def parse_crs(value: str | int | CRS, *, what: str = "--crs") -> CRS:
    """Parse a user-given CRS (``EPSG:2261``, ``2261``, WKT, PROJ string) or raise CRSError."""
    try:
        return CRS.from_user_input(value)
    except pyproj.exceptions.CRSError as exc:
        raise CRSError(f"{what} {value!r} is not a CRS pyproj knows ({exc}). Use e.g. EPSG:2261") from None


def check_working_crs(crs: CRS, *, what: str = "--crs") -> CRS:
    """Refuse a working CRS that is not projected in feet."""
    if not crs.is_projected:
        raise CRSError(
            f"{what} {crs.to_string()} is geographic (degrees): distances and areas need a "
            f"projected CRS in feet, e.g. EPSG:2261 (NY Central, US survey feet)"
        )
    if not is_feet(crs):
        raise CRSError(
            f"{what} {crs.to_string()} is in {crs_unit(crs)}; geoconstraints works in feet. "
            f"Use a State Plane CRS in US survey feet, e.g. EPSG:2261, or leave --crs out"
        )
    return crs


def choose_working_crs(
    *,
    user_crs: str | CRS | None = None,
    primary_crs: CRS | None = None,
    lonlat_bounds: tuple[float, float, float, float] | None = None,
) -> tuple[CRS, str]:
    """Pick the working CRS and say why.

    Parameters
    ----------
    user_crs : str or CRS, optional
        ``--crs``: used as given (must be projected in feet).
    primary_crs : CRS, optional
        CRS of the parcels or the harvest plan; used when projected in feet.
    lonlat_bounds : tuple, optional
        (west, south, east, north) of all data in degrees, for the State Plane / UTM choice.

    Returns
    -------
    (CRS, str)
        The CRS and a one-line reason for the provenance stamp.
    """
    if user_crs is not None:
        crs = check_working_crs(parse_crs(user_crs))
        return crs, "given with --crs"
    if primary_crs is not None and is_feet(primary_crs):
        return primary_crs, "the primary layer's own projected CRS (feet)"
    if lonlat_bounds is None:
        raise CRSError("cannot choose a working CRS: no layer has a usable location. Give --crs")
    w, s, e, n = lonlat_bounds
    lon, lat = (w + e) / 2, (s + n) / 2
    code = ny_state_plane(lon, lat)
    if code:
        return CRS.from_user_input(code), f"NY State Plane zone for the data's location ({code})"
    return utm_feet(lon, lat), "UTM zone of the data's location, in US survey feet"


def lonlat_bounds(bounds: tuple[float, float, float, float], crs: CRS) -> tuple[float, float, float, float]:
    """Transform ``bounds`` in ``crs`` to (west, south, east, north) degrees."""
    t = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True)
    return t.transform_bounds(*bounds, densify_pts=5)


def check_location(bounds: tuple[float, float, float, float], crs: CRS, *, what: str) -> None:
    """Refuse a layer whose coordinates fall far outside where its CRS is used.

    That is the sign of a wrong CRS label (feet read as metres, lon/lat labelled State Plane).
    """
    if any(math.isnan(v) for v in bounds):
        return
    if crs.is_projected and -180 <= bounds[0] <= bounds[2] <= 180 and -90 <= bounds[1] <= bounds[3] <= 90:
        # every coordinate within 180 units of the false origin: degrees labelled as a projection
        raise CRSError(
            f"{what}: its coordinates (x {bounds[0]:.6g}..{bounds[2]:.6g}, y {bounds[1]:.6g}..{bounds[3]:.6g}) "
            f"look like longitude/latitude, but its CRS says {crs.to_string()} ({crs.name}). Fix the .prj "
            f"or layer CRS to EPSG:4326 or EPSG:4269, e.g. with ogr2ogr -a_srs EPSG:4326"
        )
    aou = crs.area_of_use
    if aou is None:
        return
    try:
        w, s, e, n = lonlat_bounds(bounds, crs)
    except Exception:  # noqa: BLE001 - transform failure means coordinates are wild
        w = s = e = n = float("nan")
    lon, lat = (w + e) / 2, (s + n) / 2
    inside_lat = aou.south - 2 <= lat <= aou.north + 2
    if aou.west <= aou.east:
        inside_lon = aou.west - 2 <= lon <= aou.east + 2
    else:  # the area of use crosses the antimeridian (NAD83, WGS 84 regions)
        inside_lon = lon >= aou.west - 2 or lon <= aou.east + 2
    if not (inside_lat and inside_lon):
        raise CRSError(
            f"{what}: its coordinates (x {bounds[0]:.6g}..{bounds[2]:.6g}, y {bounds[1]:.6g}.."
            f"{bounds[3]:.6g}) do not lie where its CRS {crs.to_string()} ({crs.name}) is used "
            f"(lon {aou.west:.1f}..{aou.east:.1f}, lat {aou.south:.1f}..{aou.north:.1f}). The CRS label is probably wrong (e.g. lon/lat or metres labelled as "
            f"feet): fix the .prj or layer CRS, e.g. with ogr2ogr -a_srs"
        )


def crs_label(crs: CRS | None) -> str:
    """``EPSG:2261``, or the CRS name when it has no EPSG code, or ``none``."""
    if crs is None:
        return "none"
    epsg = crs.to_epsg()
    return f"EPSG:{epsg}" if epsg else crs.name
