"""Constants and small builders shared by the tests (in the manner of shapely's ``tests/common.py``).

The synthetic town sits in Vestal, NY (around lon -76.05, lat 42.08) in EPSG:2261 (NAD83 / New
York Central, US survey feet), the default working CRS there. Real public data the tests read is
in ``tests/data/real`` (origins and licences in its SOURCES.md), so a fresh clone tests itself.
"""

from __future__ import annotations

from pathlib import Path

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
