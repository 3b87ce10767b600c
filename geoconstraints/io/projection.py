"""Choosing and checking the working CRS: projected, in feet (a State Plane zone, else a UTM
zone in US feet, from PROJ's EPSG database by area of use); a geographic, local or unknown CRS
never reaches a distance.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from typing import Any

import numpy as np
import pyproj
from pyproj import CRS
from pyproj.database import query_crs_info
from pyproj.enums import PJType

from geoconstraints.errors import CRSError

log = logging.getLogger(__name__)

_STATE_PLANE = re.compile(r"^NAD83 / (?!BLM|UTM|Conus|Great Lakes|NCRS).+\((ftUS|ft)\)$")
"""NAD83 State Plane zones in feet (``NAD83 / New York Central (ftUS)``)."""
_LATER_NAD83 = re.compile(r"^NAD83\((HARN|NSRS2007|2011)\) / (?!BLM|UTM).+\((ftUS|ft)\)$")
"""Zones in feet of a later NAD83 realization (``NAD83(2011) / Alabama West (ftUS)``)."""
_UTM_FEET = re.compile(r"^NAD83 / BLM \d+N \(ftUS\)$")
"""UTM zones in US survey feet (EPSG calls them BLM zones)."""

Box = tuple[float, float, float, float]


@functools.lru_cache(maxsize=1)
def _feet_zones() -> tuple[tuple[str, str, str, Box, int], ...]:
    """(EPSG code, name, state, area-of-use box, kind) of every feet CRS a working CRS may be:
    kind 0 NAD83 State Plane, 1 a later NAD83 realization, 2 UTM in US feet."""
    out = []
    for info in query_crs_info(auth_name="EPSG", pj_types=PJType.PROJECTED_CRS, allow_deprecated=False):
        aou = info.area_of_use
        kind = next((k for k, pat in enumerate((_STATE_PLANE, _LATER_NAD83, _UTM_FEET)) if pat.match(info.name)), None)
        if kind is None or aou is None:
            continue
        parts = (aou.name or "").split(" - ")  # "United States (USA) - New York - counties of ..."
        state = parts[1] if kind < 2 and len(parts) > 1 else info.name
        out.append((info.code, info.name, state, (aou.west, aou.south, aou.east, aou.north), kind))
    return tuple(out)


def _centrality(box: Box, lon: float, lat: float) -> float:
    """How central ``lon, lat`` lies in ``box``: 1 at its centre, 0 on its edge, < 0 outside."""
    w, s, e, n = box
    return min(min(lon - w, e - lon) / max((e - w) / 2, 1e-9), min(lat - s, n - lat) / max((n - s) / 2, 1e-9))


def crs_unit(crs: CRS) -> str:
    """Name of the horizontal axis unit of ``crs`` (``'US survey foot'``, ``'metre'``, ``'degree'``)."""
    return crs.axis_info[0].unit_name if crs.axis_info else "unknown"


def is_feet(crs: CRS) -> bool:
    """True when ``crs`` is projected with a foot unit (US survey or international)."""
    return bool(crs.is_projected and "foot" in crs_unit(crs).lower())


def feet_crs_at(lon: float, lat: float) -> tuple[CRS, str]:
    """The projected CRS in feet for data centred at ``lon, lat``, from PROJ's EPSG database.

    The candidates are the EPSG CRSs in feet whose area of use contains the point: NAD83 State
    Plane zones first, then zones of a later NAD83 realization (for states whose NAD83 zones
    are in metres only), then UTM zones in US survey feet (EPSG's "BLM" zones). Areas of use
    are rectangles, and a state's rectangle overlaps its neighbours': the state chosen is the
    one whose whole extent (its zones' areas together) has the point most central, then its
    zone with the point most central (ftUS before ft). Within a few miles of a state line the
    neighbouring state's zone may still be chosen (it measures there to a few parts per
    million as well); give ``--crs`` to choose yourself.

    Returns
    -------
    (CRS, str)
        The CRS (always with an EPSG code) and the reason, for the provenance.

    Raises
    ------
    CRSError
        No such CRS covers the point (outside the United States): give ``--crs``.

    Examples
    --------
    >>> [feet_crs_at(lon, lat)[0].to_epsg() for lon, lat in [(-76.05, 42.08), (-71.11, 42.37), (-104.99, 39.74)]]
    [2261, 2249, 2232]
    """
    zones = _feet_zones()
    for kind, what in ((0, "State Plane zone"), (1, "State Plane zone"), (2, "UTM zone in US survey feet")):
        here = [z for z in zones if z[4] == kind and _centrality(z[3], lon, lat) >= 0]
        if not here:
            continue
        extent: dict[str, Box] = {}
        for _, _, state, (w, s, e, n), k in zones:
            if k == kind:
                b = extent.get(state, (w, s, e, n))
                extent[state] = (min(b[0], w), min(b[1], s), max(b[2], e), max(b[3], n))
        state = max({z[2] for z in here}, key=lambda st: _centrality(extent[st], lon, lat))
        code, name, *_ = max((z for z in here if z[2] == state),
                             key=lambda z: (round(_centrality(z[3], lon, lat), 6), "(ftUS)" in z[1]))
        crs = CRS.from_epsg(int(code))
        if is_feet(crs):
            return crs, f"{what} for the data's location: EPSG:{code} {name} (by EPSG area of use)"
    raise CRSError(f"no State Plane or UTM zone in feet in the EPSG database covers the data (lon {lon:.4f}, "
                   f"lat {lat:.4f}). Give --crs, a projected CRS in feet for that place")


def parse_crs(value: str | int | CRS, *, what: str = "--crs") -> CRS:
    """Parse a user-given CRS (``EPSG:2261``, ``2261``, WKT, PROJ string) or raise CRSError."""
    try:
        return CRS.from_user_input(value)
    except pyproj.exceptions.CRSError as exc:
        raise CRSError(f"{what} {value!r} is not a CRS pyproj knows ({exc}). Use e.g. EPSG:2261") from None


def check_working_crs(crs: CRS, *, what: str = "--crs") -> CRS:
    """Refuse a working CRS that is not projected in feet."""
    if crs.is_engineering or not (crs.is_projected or crs.is_geographic):
        raise CRSError(f"{what} {crs.name!r} is a local engineering system (LOCAL_CS), not tied to the earth. "
                       f"Use a State Plane CRS in US survey feet, e.g. EPSG:2261, or leave --crs out")
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


MAX_SCALE_ERROR = 1e-3
"""Most a working CRS given with ``--crs`` may stretch or shrink distances where the data lie (1 part in
1,000: 0.1 ft on a 100 ft setback, 0.2 % of an area). A State Plane zone keeps within 1 in 10,000 over
its own area; a zone of another state stretches by 0.3 % (California 3 at Vestal) to 1.3 % (Illinois
East), and every setback and acreage with it."""


def check_scale_at(crs: CRS, lonlat_box: tuple[float, float, float, float], *, what: str = "--crs") -> None:
    """Refuse a working CRS that distorts distances by more than :data:`MAX_SCALE_ERROR` anywhere
    on the data (its corners and centre), naming the CRS made for the data's location.

    Examples
    --------
    >>> check_scale_at(CRS.from_epsg(2261), (-76.08, 42.07, -76.02, 42.10))  # NY Central at Vestal
    >>> check_scale_at(CRS.from_epsg(3435), (-76.08, 42.07, -76.02, 42.10))  # Illinois East
    Traceback (most recent call last):
    ...
    geoconstraints.errors.CRSError: --crs EPSG:3435 (NAD83 / Illinois East (ftUS)) is made for lon -89.3..-87.0, lat 37.1..42.5; where the data lie (lon -76.08..-76.02, lat 42.07..42.10) it distorts distances by 1.28 % (areas 2.6 %), so every setback and acreage would be off. Use EPSG:2261 (NAD83 / New York Central (ftUS), the State Plane zone for the data's location), or leave --crs out
    """
    w, s, e, n = lonlat_box
    if not all(math.isfinite(v) for v in lonlat_box):
        return
    pts = [(w, s), (w, n), (e, s), (e, n), ((w + e) / 2, (s + n) / 2)]
    try:
        f = pyproj.Proj(crs).get_factors([p[0] for p in pts], [p[1] for p in pts], errcheck=False)
        scales = [float(v) for k in (f.meridional_scale, f.parallel_scale) for v in np.atleast_1d(k)]
    except Exception:  # noqa: BLE001 - PROJ cannot tell the scale there: the data lie outside the projection
        scales = [math.nan]
    worst = max((abs(k - 1) if math.isfinite(k) else math.inf for k in scales), default=0.0)
    if worst <= MAX_SCALE_ERROR:
        return
    aou = crs.area_of_use
    made = f" is made for lon {aou.west:.1f}..{aou.east:.1f}, lat {aou.south:.1f}..{aou.north:.1f};" if aou else ""
    how = (f"distorts distances by {worst * 100:.3g} % (areas {((1 + worst) ** 2 - 1) * 100:.2g} %)"
           if math.isfinite(worst) else "cannot measure distances")
    try:
        right, why = feet_crs_at((w + e) / 2, (s + n) / 2)
        use = f"Use {crs_label(right)} ({right.name}, the {why.split(' for ')[0]} for the data's location), or leave {what} out"
    except CRSError:
        use = f"Use the State Plane zone of the data's location, or leave {what} out"
    raise CRSError(f"{what} {crs_label(crs)} ({crs.name}){made} where the data lie (lon {w:.2f}..{e:.2f}, "
                   f"lat {s:.2f}..{n:.2f}) it {how}, so every setback and acreage would be off. {use}")


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
        if lonlat_bounds is not None:
            check_scale_at(crs, lonlat_bounds)
        return crs, "given with --crs"
    if primary_crs is not None and is_feet(primary_crs):
        return primary_crs, "the primary layer's own projected CRS (feet)"
    if lonlat_bounds is None:
        raise CRSError("cannot choose a working CRS: no layer has a usable location. Give --crs")
    w, s, e, n = lonlat_bounds
    return feet_crs_at((w + e) / 2, (s + n) / 2)


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
    m = AREA_MARGIN_DEG
    inside_lat = aou.south - m <= lat <= aou.north + m
    if aou.west <= aou.east:
        inside_lon = aou.west - m <= lon <= aou.east + m
    else:  # the area of use crosses the antimeridian (NAD83, WGS 84 regions)
        inside_lon = lon >= aou.west - m or lon <= aou.east + m
    if not (inside_lat and inside_lon):
        raise CRSError(
            f"{what}: its coordinates (x {bounds[0]:.6g}..{bounds[2]:.6g}, y {bounds[1]:.6g}.."
            f"{bounds[3]:.6g}) do not lie where its CRS {crs.to_string()} ({crs.name}) is used "
            f"(lon {aou.west:.1f}..{aou.east:.1f}, lat {aou.south:.1f}..{aou.north:.1f}). The CRS label is probably wrong (e.g. lon/lat or metres labelled as "
            f"feet): fix the .prj or layer CRS, e.g. with ogr2ogr -a_srs"
        )


AREA_MARGIN_DEG = 2.0
"""Degrees around a CRS's area of use within which a layer's coordinates are taken as placed right
(:func:`check_location`, :func:`features_off`)."""


def features_off(bounds: Any, crs: CRS) -> Any:
    """Which features lie wholly or partly outside where ``crs`` is used (its area of use plus
    :data:`AREA_MARGIN_DEG`), from each feature's bounds (an ``(n, 4)`` array): a feature typed a
    billion feet off, or drawn in another CRS, among features placed right. All False when the CRS has
    no area of use (or one crossing the antimeridian) or it cannot be drawn in the CRS.

    Examples
    --------
    >>> import numpy as np
    >>> features_off(np.array([[955900, 754100, 956300, 754500], [1e9, 754100, 1e9 + 400, 754500]]),
    ...              CRS.from_epsg(2261)).tolist()
    [False, True]
    """
    b = np.asarray(bounds, dtype="float64").reshape(-1, 4)
    none = np.zeros(len(b), dtype=bool)
    aou = crs.area_of_use
    if aou is None or aou.west > aou.east or not len(b):
        return none
    m = AREA_MARGIN_DEG
    w, s, e, n = max(aou.west - m, -180), max(aou.south - m, -90), min(aou.east + m, 180), min(aou.north + m, 90)
    try:
        t = pyproj.Transformer.from_crs("EPSG:4326", crs, always_xy=True)
        box = t.transform_bounds(w, s, e, n, densify_pts=21)
    except Exception:  # noqa: BLE001 - the area cannot be drawn in the CRS: no test
        return none
    if not all(math.isfinite(v) for v in box):
        return none
    with np.errstate(invalid="ignore"):
        off = (b[:, 0] < box[0]) | (b[:, 1] < box[1]) | (b[:, 2] > box[2]) | (b[:, 3] > box[3])
    return off & np.isfinite(b).all(axis=1)


def crs_label(crs: CRS | None) -> str:
    """``EPSG:2261``, or the CRS name when it has no EPSG code, or ``none``. A CRS without a name (a
    ``.prj`` saying ``PROJCS["unknown", ...]``, a PROJ string) is described by its projection and unit.

    Examples
    --------
    >>> crs_label(CRS.from_epsg(2261)), crs_label(None)
    ('EPSG:2261', 'none')
    >>> crs_label(CRS("+proj=tmerc +lat_0=40 +lon_0=-76.58 +k=0.9999375 +x_0=250000 +datum=NAD83 +units=ft"))
    'unnamed CRS (Transverse Mercator, foot)'
    """
    if crs is None:
        return "none"
    epsg = crs.to_epsg()
    if epsg:
        return f"EPSG:{epsg}"
    if crs.name and crs.name.strip().lower() not in ("unknown", "unnamed", "custom"):
        return crs.name
    op = crs.coordinate_operation
    method = op.method_name if op is not None else crs.type_name
    return f"unnamed CRS ({method}, {crs_unit(crs)})"
