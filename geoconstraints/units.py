"""Unit constants and conversions. Feet and acres at the edges; the CRS unit is checked in io.
"""

from __future__ import annotations

SQFT_PER_ACRE = 43_560.0
"""1 acre = 43,560 sq ft (SPEC §2)."""

FT_PER_M = 1.0 / 0.3048
"""International feet per metre."""

US_FT_PER_M = 39.37 / 12.0
"""US survey feet per metre (NY State Plane EPSG:2260-2263)."""

M_PER_FT = 0.3048


def sqft_to_acres(sqft):
    """Square feet to acres (works on scalars, numpy arrays and pandas Series)."""
    return sqft / SQFT_PER_ACRE


def acres_to_sqft(acres):
    """Acres to square feet."""
    return acres * SQFT_PER_ACRE


_Z_UNIT_ALIASES = {
    "ft": "ft", "foot": "ft", "feet": "ft", "us survey foot": "ft", "us-ft": "ft", "ftus": "ft",
    "us_survey_foot": "ft", "survey foot": "ft", "international foot": "ft", "f": "ft",
    "m": "m", "metre": "m", "meter": "m", "metres": "m", "meters": "m",
}


def normalize_length_unit(name: str | None) -> str | None:
    """Map a unit name from metadata or the user (``'feet'``, ``'US survey foot'``, ``'metre'``)
    to ``'ft'`` or ``'m'``; ``None`` when unknown."""
    if name is None:
        return None
    return _Z_UNIT_ALIASES.get(str(name).strip().lower())


def to_feet(value, unit: str):
    """Convert a length in ``unit`` ('ft' or 'm') to feet."""
    if unit == "ft":
        return value
    if unit == "m":
        return value * FT_PER_M
    raise ValueError(f"unknown length unit {unit!r}: use 'ft' or 'm'")

