"""Units: feet and acres at the edges, the CRS unit read from the CRS (never assumed).

Length factors come from PROJ's unit table (:func:`pyproj.get_units_map`), so the foot here is
the one PROJ and the EPSG registry use for every CRS.

Here too is the one test of "over a limit, beyond float noise" every rule uses (:data:`REL_NOISE`,
:func:`over_limit`, :func:`at_most`, :func:`under_limit`, :func:`at_least`) and the absolute noise of
a length (:data:`LENGTH_NOISE_FT`), and the noise of a geometry's repair (:data:`REPAIR_REL_NOISE`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyproj

_PROJ_UNITS = pyproj.get_units_map()

M_PER_FT: float = _PROJ_UNITS["foot"].conv_factor
"""Metres per international foot (EPSG:9002, 0.3048)."""

FT_PER_M: float = 1.0 / M_PER_FT
"""International feet per metre (3.28084)."""

SQFT_PER_ACRE = 43_560.0
"""1 acre = 43,560 sq ft."""

FT_PER_MILE = 5_280.0
"""1 statute mile = 5,280 ft."""

MAX_MAGNITUDE = 1e15
"""The largest magnitude a number given to the tool may have (a layer's field, an option): beyond any
quantity a layer measures (1e15 ft is about 190 billion miles), and small enough that a rule's unit
conversions and sums stay finite numbers (``1e308`` cords was ``inf`` cu ft). A larger value is refused."""

LOWEST_GROUND_FT = -300.0
"""The lowest believable elevation (ft), below the lowest ground in the United States (Badwater Basin,
Death Valley, -282 ft): a base flood elevation or a floor under it is no elevation (a lost sign, a code)."""

HIGHEST_GROUND_FT = 20_310.0
"""The highest believable elevation (ft): the highest ground in the United States (Denali, 20,310 ft).
A base flood elevation or a floor over it is no elevation (a slip of the decimal point, another unit)."""


def sqft_to_acres(sqft):
    """Square feet to acres (works on scalars, numpy arrays and pandas Series).

    Examples
    --------
    >>> sqft_to_acres(87_120.0)
    2.0
    """
    return sqft / SQFT_PER_ACRE


def ft_per_unit(crs: Any) -> float | None:
    """International feet per horizontal unit of a projected CRS; ``None`` for a geographic
    (or any other unprojected) CRS and for ``None``.

    Parameters
    ----------
    crs : CRS-like or None
        Anything :meth:`pyproj.CRS.from_user_input` accepts (EPSG string or int, WKT, a pyproj
        or rasterio CRS). A compound CRS counts by its horizontal part.

    Returns
    -------
    float or None
        The axis unit's factor to metres (``axis_info[0].unit_conversion_factor``) over
        :data:`M_PER_FT`: 1.0 for international feet, 1.000002 for US survey feet, 3.28084 for
        metres.

    Examples
    --------
    >>> round(ft_per_unit("EPSG:2261"), 6)  # NY Central, US survey feet
    1.000002
    >>> round(ft_per_unit("EPSG:32618"), 5)  # UTM 18N, metres
    3.28084
    >>> ft_per_unit("EPSG:4326") is None
    True
    """
    if crs is None:
        return None
    c = pyproj.CRS.from_user_input(crs)
    if not c.is_projected:
        return None
    if c.is_compound:
        c = next(s for s in c.sub_crs_list if not s.is_vertical)
    return float(c.axis_info[0].unit_conversion_factor) / M_PER_FT


_LENGTH_UNIT_ALIASES = {
    "ft": "ft", "foot": "ft", "feet": "ft", "us survey foot": "ft", "us-ft": "ft", "ftus": "ft",
    "us_survey_foot": "ft", "survey foot": "ft", "international foot": "ft", "f": "ft",
    "m": "m", "metre": "m", "meter": "m", "metres": "m", "meters": "m",
}


def normalize_length_unit(name: str | None) -> str | None:
    """Map a length unit name from metadata or the user to ``'ft'`` or ``'m'``; ``None`` when unknown.

    Examples
    --------
    >>> [normalize_length_unit(u) for u in ("Feet", "US survey foot", "METERS", "furlong", None)]
    ['ft', 'ft', 'm', None, None]
    """
    if name is None:
        return None
    return _LENGTH_UNIT_ALIASES.get(str(name).strip().lower())


def number_problem(value: Any, *, minimum: float | None = None, above: bool = False,
                   maximum: float | None = None, whole: bool = False) -> str:
    """Why ``value`` is not a usable number ('' when it is): not a number (text with ``_``, which
    Python's ``float`` reads as a digit separator: ``8_13`` is no way to write 813), NaN or infinity
    (which compare false with every limit and would turn a violation into a pass), beyond
    :data:`MAX_MAGNITUDE`, under ``minimum`` (``above=True``: at or under it) or over ``maximum``;
    with ``whole=True`` (a count: dwelling units, lots, travel lanes, flood openings) a fraction too
    (29.5 units is no number of units, and read against a bound of 30 it passed). ``True`` and
    ``False`` (Python's or numpy's) are no number either, though Python reads them as 1 and 0: a
    yes/no given for a count or a measure (``units=True``) is refused, never read as 1 unit.
    Numpy's integer and float scalars are numbers (``np.int64(29)``, ``np.float32(12.5)``).

    Examples
    --------
    >>> number_problem("nan"), number_problem(-800, minimum=0), number_problem(0, minimum=0, above=True)
    ('nan is not a finite number (NaN and infinity are refused)', '-800 is negative', '0 is not more than 0')
    >>> number_problem("1e400"), number_problem("12.5", minimum=0), number_problem("8_13")
    ('1e400 is not a finite number (NaN and infinity are refused)', '', "'8_13' is not a number")
    >>> number_problem(1e300), number_problem(1e15), number_problem(20310.5, maximum=HIGHEST_GROUND_FT)
    ('1e+300 is too large (over 1e+15), beyond any quantity measured here', '', '20310.5 is more than 20310')
    >>> number_problem(29.5, minimum=0, whole=True), number_problem("30.0", minimum=0, whole=True)
    ('29.5 is not a whole number', '')
    >>> number_problem(True, minimum=0, whole=True), number_problem(np.False_), number_problem(np.int64(29), whole=True)
    ('True is not a number (a yes/no value)', 'False is not a number (a yes/no value)', '')
    """
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype.kind == "b"):
        return f"{bool(value)} is not a number (a yes/no value)"  # float(True) is 1.0: 1 unit, 1 opening
    if isinstance(value, str) and "_" in value:
        return f"{value!r} is not a number"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return f"{value!r} is not a number"
    if not math.isfinite(x):
        return f"{value} is not a finite number (NaN and infinity are refused)"
    if abs(x) > MAX_MAGNITUDE:
        return f"{value} is too large (over {MAX_MAGNITUDE:g}), beyond any quantity measured here"
    if minimum is not None and (x <= minimum if above else x < minimum):
        return f"{value} is not more than {minimum:g}" if above else (
            f"{value} is negative" if minimum == 0 else f"{value} is less than {minimum:g}")
    if maximum is not None and x > maximum:
        return f"{value} is more than {maximum:g}"
    if whole and not x.is_integer():
        return f"{value} is not a whole number"
    return ""


def elevation_problem(value: Any) -> str:
    """Why ``value`` is not a believable elevation in feet ('' when it is): :func:`number_problem`
    within :data:`LOWEST_GROUND_FT` and :data:`HIGHEST_GROUND_FT`, saying why those.

    Examples
    --------
    >>> elevation_problem(812.5), elevation_problem(81240)
    ('', '81240 is more than 20310 ft, higher than any ground in the United States (Denali, 20,310 ft)')
    >>> elevation_problem(20310), elevation_problem(-300), elevation_problem(-300.5)[:30]
    ('', '', '-300.5 is less than -300 ft, l')
    >>> elevation_problem(-450)
    '-450 is less than -300 ft, lower than any ground in the United States (Death Valley, -282 ft)'
    """
    why = number_problem(value, minimum=LOWEST_GROUND_FT, maximum=HIGHEST_GROUND_FT)
    if why.endswith(f"more than {HIGHEST_GROUND_FT:g}"):
        return why + " ft, higher than any ground in the United States (Denali, 20,310 ft)"
    if why.endswith(f"less than {LOWEST_GROUND_FT:g}"):
        return why + " ft, lower than any ground in the United States (Death Valley, -282 ft)"
    return why


# ------------------------------------------------------------------------------------------
# Float noise: "over the limit" means beyond it by more than the noise of floating point

REL_NOISE = 1e-9
"""Relative float noise of a measured quantity (an area, a length, a grade, a volume), compared with a
limit: numerical, never a legal threshold (those live in the rulebook). Coordinates in State Plane feet lie
about 1e6 ft from the origin, so a measure computed from them carries noise in its last digits: a 0.5-acre
lot drawn as exactly 150 x 145.2 ft measures 21,779.999999993 or 21,780.000000012 sq ft by where it lies
(relative noise ~5e-13), a plane of exactly 25 % sampled along a road measures 25 % within ~1e-14. A
quantity within ``REL_NOISE`` of its limit (relative to the limit: 0.00002 sq ft at 0.5 acre, 0.0000002 ft at
200 ft) is *at* the limit, neither over nor under it: a lot of exactly 0.5 acre is not "more than 0.5 acre".
Used by :func:`over_limit`, :func:`at_most`, :func:`under_limit` and :func:`at_least`, the one test of it."""

LENGTH_NOISE_FT = 1e-6
"""Absolute float noise of a position, distance or elevation (ft): numerical, never a legal threshold, only
so that a value computed two ways (a position along a stream, a BFE interpolated at two points) compares
equal. Coordinates of ~1e6 ft carry ~1e-10 ft of noise; 1e-6 ft (a millionth of a foot) is far above that
and far below any measure the law makes. Every comparison it loosens must widen a bound, never turn a
violation into a pass."""

REPAIR_REL_NOISE = 1e-6
"""Relative noise of a geometry's repair (``make_valid``), of the feature's size (the diagonal of its bounding
box, ``size``): numerical, never a legal threshold. The repair puts new nodes where rings cross, rounded to
the nearest double, and the drawing and its repair are compared through an overlay that rounds again; a part
of the drawing the repair left out (:func:`geoconstraints.io.validate.repair_losses`) is a loss only when its
area is more than ``REPAIR_REL_NOISE * size ** 2`` or its length more than ``REPAIR_REL_NOISE * size``. For a
parcel 300 ft across (size 424 ft) that is 0.18 sq ft or 0.0004 ft: far above the rounding, far below any part
a person draws. Not :data:`REL_NOISE`, the noise of a measure compared with a limit, nor
:data:`LENGTH_NOISE_FT`, an absolute one: a repair's rounding grows with the feature."""


def _noise_bound(limit: Any, side: float, min_scale: float) -> Any:
    """``limit`` moved by its float noise, up (``side`` 1.0) or down (-1.0): by :data:`REL_NOISE` times its
    magnitude (``limit * (1 + REL_NOISE)`` for a limit of 0 or more), or times ``min_scale`` where that is
    larger."""
    lim = np.asarray(limit, dtype=float)
    if min_scale > 0:
        return lim + side * REL_NOISE * np.maximum(np.abs(lim), min_scale)
    return np.where(lim < 0, lim * (1.0 - side * REL_NOISE), lim * (1.0 + side * REL_NOISE))


def over_limit(value: Any, limit: Any, *, min_scale: float = 0.0) -> Any:
    """Whether ``value`` is greater than ``limit`` beyond float noise (:data:`REL_NOISE`, relative to the
    limit): the law's "more than", "exceeds". A value at the limit within noise is not over it.

    Parameters
    ----------
    value, limit : float or array-like
        Scalars, numpy arrays or pandas Series (broadcast as numpy does), in the same unit. A negative
        limit is allowed (its noise is relative to its magnitude); at a limit of 0 there is no noise
        (unless ``min_scale``): any positive value is over it.
    min_scale : float, default 0
        The noise is relative to the larger of ``|limit|`` and this: for a ratio such as a grade in
        percent (1.0: a limit of 0 % still has 1e-9 % of noise). 0: relative to the limit alone.

    Returns
    -------
    numpy.bool_ or numpy.ndarray of bool
        ``value > limit * (1 + REL_NOISE)`` (a limit of 0 or more, no ``min_scale``). NaN (value or limit)
        is never over: False, as in every test of this set (so ``~over_limit(v, lim)`` is True for NaN
        where :func:`at_most` is False).

    Examples
    --------
    >>> sqft = np.array([21_780.0, 21_780.000000012, 21_779.999999993, 21_781.5, np.nan])
    >>> over_limit(sqft / SQFT_PER_ACRE, 0.5).tolist()  # 0.5 acre: exactly, drawn exactly, over by 1.5 sq ft
    [False, False, False, True, False]
    >>> bool(over_limit(200.0000001, 200.0)), bool(over_limit(200.01, 200.0))
    (False, True)
    >>> over_limit([-1e-12, 0.0, 1e-12], 0.0).tolist(), over_limit([-2.0, -1.99], -2.0).tolist()
    ([False, False, True], [False, True])
    >>> over_limit([1e-12, 1e-8], 0.0, min_scale=1.0).tolist()  # a grade over 0 %
    [False, True]
    """
    return np.asarray(value, dtype=float) > _noise_bound(limit, 1.0, min_scale)


SURVEY_FOOT_REL = 1e-5
"""Relative margin of a DEM cell compared with a rulebook's ``max_dem_cell_ft`` (:func:`cell_within`):
numerical, never a legal threshold. A grid of 50 US survey feet is 50.0001 international feet, a 50-ft grid
all the same (the US survey foot is 2 parts in a million longer)."""


def cell_within(cell_ft: Any, limit_ft: Any) -> bool:
    """Whether a DEM's cell (the larger side, feet) is within a rule's ``max_dem_cell_ft``: at the limit (to
    :data:`SURVEY_FOOT_REL`: a grid in US survey feet) is within it; an unknown (NaN) cell is not.

    Examples
    --------
    >>> cell_within(50.0001, 50), cell_within(50.1, 50), cell_within(float("nan"), 50)
    (True, False, False)
    """
    return bool(at_most(cell_ft, float(limit_ft) * (1 + SURVEY_FOOT_REL)))


def at_most(value: Any, limit: Any, *, min_scale: float = 0.0) -> Any:
    """Whether ``value`` is at most ``limit`` within float noise (:data:`REL_NOISE`, ``min_scale`` as in
    :func:`over_limit`): not :func:`over_limit`, except that NaN is never at most anything (False).

    Examples
    --------
    >>> at_most(np.array([200.0, 200.0000001, 200.01, np.nan]), 200.0).tolist()
    [True, True, False, False]
    """
    return np.asarray(value, dtype=float) <= _noise_bound(limit, 1.0, min_scale)


def under_limit(value: Any, limit: Any, *, min_scale: float = 0.0) -> Any:
    """Whether ``value`` is less than ``limit`` beyond float noise (:data:`REL_NOISE`, relative to the
    limit, ``min_scale`` as in :func:`over_limit`): the law's "less than". A value at the limit within noise
    is not under it; NaN is never under (False).

    Examples
    --------
    >>> sqft = np.array([21_780.0, 21_780.000000012, 21_779.999999993, 21_779.99, np.nan])
    >>> under_limit(sqft / SQFT_PER_ACRE, 0.5).tolist()
    [False, False, False, True, False]
    >>> bool(under_limit(1.0 - 1e-10, 1.0)), bool(under_limit(0.999, 1.0)), bool(under_limit(-2.0, -2.0))
    (False, True, False)
    """
    return np.asarray(value, dtype=float) < _noise_bound(limit, -1.0, min_scale)


def at_least(value: Any, limit: Any, *, min_scale: float = 0.0) -> Any:
    """Whether ``value`` is at least ``limit`` within float noise (:data:`REL_NOISE`, ``min_scale`` as in
    :func:`over_limit`): not :func:`under_limit`, except that NaN is never at least anything (False).

    Examples
    --------
    >>> at_least(np.array([1.0, 1.0 - 1e-10, 0.999, np.nan]), 1.0).tolist()  # a share: whole within noise
    [True, True, False, False]
    """
    return np.asarray(value, dtype=float) >= _noise_bound(limit, -1.0, min_scale)
