"""Constants, small builders and a catalogue of edge geometries shared by the tests (in the manner
of shapely's ``tests/common.py``).

The synthetic town sits in Vestal, NY (around lon -76.05, lat 42.08) in EPSG:2261 (NAD83 / New
York Central, US survey feet), the default working CRS there: local coordinates in feet are
shifted by (:data:`X0`, :data:`Y0`). Real public data the tests read is in ``tests/data/real``
(origins and licences in its SOURCES.md), so a fresh clone tests itself.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pandas as pd
from shapely import affinity
from shapely.geometry import LineString, MultiPolygon, Point, Polygon, box
from shapely.geometry.base import BaseGeometry

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SAMPLE = ROOT / "data" / "sample"
"""The bundled sample town (``geoconstraints demo``)."""
REALDATA = TESTS / "data" / "real"
"""Real public files read by the tests (SOURCES.md there)."""
LEX = REALDATA / "lexington_va"
"""FEMA NFHL layers of Lexington, VA (EPSG:4269, NGVD29)."""
MUNCY_DEM = REALDATA / "muncy_pa" / "Muncy_dem_resampled.tif"
"""PAMAP lidar DEM of Muncy, PA (EPSG:2271, feet, no nodata)."""

NY_FT = "EPSG:2261"
"""NAD83 / New York Central, US survey feet: the working CRS of the synthetic town."""
NY_FT_SRID = 2261
"""The same CRS as a PostGIS SRID."""
UTM18 = "EPSG:32618"
"""WGS 84 / UTM zone 18N, metres: a projected CRS that is not in feet."""
X0, Y0 = 964_988.0, 758_256.0
"""Vestal, NY in EPSG:2261 (pyproj: lon -76.05, lat 42.08)."""
ACRE = 43_560.0
"""Square feet per acre, written out (tests do not take it from the package)."""


def at(geom: BaseGeometry) -> BaseGeometry:
    """``geom`` in local feet, moved to Vestal (EPSG:2261 coordinates)."""
    return affinity.translate(geom, X0, Y0)


def square(x0: float, y0: float, x1: float, y1: float) -> Polygon:
    """A box in local feet from (X0, Y0)."""
    return box(X0 + x0, Y0 + y0, X0 + x1, Y0 + y1)


def frame(geoms: list, crs: str | int = NY_FT, **cols) -> gpd.GeoDataFrame:
    """A GeoDataFrame of ``geoms`` (EPSG:2261 coordinates) with the columns ``cols``."""
    return gpd.GeoDataFrame(dict(cols), geometry=list(geoms), crs=crs)


# ------------------------------------------------------------------------------------------
# edge geometries, in EPSG:2261 near (X0, Y0), each with what a loader must make of it

EDGE_GEOMETRIES: dict[str, BaseGeometry] = {
    "empty": Polygon(),
    "bowtie": Polygon([(X0, Y0), (X0 + 200, Y0 + 200), (X0 + 200, Y0), (X0, Y0 + 200)]),
    "sliver": square(0, 0, 200, 0.01),
    "multipart": MultiPolygon([square(0, 0, 100, 100), square(300, 0, 400, 100)]),
    "z": Polygon([(X0, Y0, 850.0), (X0 + 200, Y0, 851.0), (X0 + 200, Y0 + 200, 852.0), (X0, Y0 + 200, 853.0)]),
    "point": Point(X0, Y0),
    "line": LineString([(X0, Y0), (X0 + 100, Y0)]),
}
"""Edge geometries by name: an empty polygon, a self-crossing bow-tie (two triangles of 10,000 sq
ft each once repaired), a 200 x 0.01 ft sliver (2 sq ft), two 100-ft squares as one multipart
feature, a 200-ft square with Z values (elevations), a point and a line."""

EDGE_AREAS_SQFT: dict[str, float] = {
    "bowtie": 2 * (200 * 100 / 2), "sliver": 200 * 0.01, "multipart": 2 * 100 * 100, "z": 200 * 200,
}
"""The area each polygonal edge geometry has once loaded (by hand: triangles, boxes)."""


def one_finding(result, rule_id: str, subject_id: str | None = None) -> pd.Series:
    """The one finding of ``rule_id`` in ``result`` (of ``subject_id`` when given); fails unless exactly one."""
    f = result.findings[result.findings["rule_id"] == rule_id]
    if subject_id is not None:
        f = f[f["subject_id"] == subject_id]
    assert len(f) == 1, f[["rule_id", "subject_id", "status"]]
    return f.iloc[0]
