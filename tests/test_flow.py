"""Tests for geoconstraints.geometry.flow: the flow window is read by the DEM's own reader."""

from __future__ import annotations

import numpy as np
import pytest
import rasterio
from affine import Affine
from shapely.geometry import LineString, box

from geoconstraints.errors import DemError
from geoconstraints.geometry.flow import trace_flow
from geoconstraints.io.dem import open_dem


def _plane(path, fill_at=None):
    # z = 100 - 0.1 x on 10-ft cells: the path from the west side runs east, 50 ft to the water line
    z = np.tile(100 - 0.1 * (5 + 10 * np.arange(40)), (40, 1)).astype("float32")
    if fill_at is not None:
        z[fill_at] = -9999.0  # a fill value the DEM does not declare as nodata
    with rasterio.open(path, "w", driver="GTiff", width=40, height=40, count=1, dtype="float32",
                       crs="EPSG:2261", transform=Affine(10, 0, 0, 0, -10, 400)) as dst:
        dst.write(z, 1)
    return open_dem(str(path), z_units="ft")


def _trace(dem):
    return trace_flow(dem, box(100, 190, 110, 200), [LineString([(165, 0), (165, 400)])], "EPSG:2261",
                      max_length_ft=200)


def test_path_reaches_the_water_on_a_plane(tmp_path):
    t = _trace(_plane(tmp_path / "plane.tif"))
    # EPSG:2261 is in US survey feet: 50 US ft = 50.0001 ft
    assert t.outcome == "target" and t.length_ft == pytest.approx(50.0001, abs=1e-4)


def test_an_undeclared_fill_value_is_refused_not_read_as_a_pit(tmp_path):
    # a -9999 cell on the path used to end it as a "closed depression" (SWP-002: pass)
    dem = _plane(tmp_path / "fill.tif", fill_at=(20, 12))
    with pytest.raises(DemError, match="-9999, which is no elevation.*gdal_edit.py -a_nodata -9999"):
        _trace(dem)
