"""Tests for geoconstraints.geometry.flow: the flow window is read by the DEM's own reader."""

from __future__ import annotations

import numpy as np
import pytest
import rasterio
from affine import Affine
from shapely.geometry import LineString, box

from geoconstraints.errors import DemError
from geoconstraints.geometry.flow import fill_shallow_depressions, trace_flow
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


# ------------------------------------------------------------------------------------------
# fill_shallow_depressions: values worked by hand

def test_fill_shallow_depressions_depth_and_spill():
    # a 6 x 7 plane at 10 ft; a two-cell dip (9.6 and 9.2 ft: 0.8 ft deep below the 10-ft rim) and a
    # one-cell pit 2 ft deep elsewhere. With 1 ft: the dip is filled to 10 ft, the pit stays.
    z = np.full((6, 7), 10.0)
    z[2, 2], z[2, 3] = 9.6, 9.2
    z[4, 5] = 8.0
    out, n = fill_shallow_depressions(z, 1.0)
    assert n == 1
    assert out[2, 2] == 10.0 and out[2, 3] == 10.0 and out[4, 5] == 8.0
    assert np.array_equal(np.delete(out.ravel(), [2 * 7 + 2, 2 * 7 + 3]), np.delete(z.ravel(), [2 * 7 + 2, 2 * 7 + 3]))
    assert z[2, 3] == 9.2  # the input is not modified
    out, n = fill_shallow_depressions(z, 2.0)  # the pit is exactly 2 ft deep: kept (a depression)
    assert n == 1 and out[4, 5] == 8.0
    out, n = fill_shallow_depressions(z, 2.01)  # both shallower than 2.01 ft
    assert n == 2 and out[4, 5] == 10.0
    out, n = fill_shallow_depressions(z, 0.0)  # 0: nothing filled
    assert n == 0 and np.array_equal(out, z)


def test_fill_shallow_depressions_spill_point_is_the_lowest_rim_cell():
    # a pit at 5 ft in a ring whose lowest cell is 7 ft (the others 9 ft), outside it 6 ft: the pit fills
    # to its spill point, 7 ft (2 ft deep), not to the ring's 9 ft
    z = np.full((7, 7), 6.0)
    z[2:5, 2:5] = 9.0
    z[3, 3] = 5.0
    z[2, 3] = 7.0
    out, n = fill_shallow_depressions(z, 2.5)
    assert n == 1 and out[3, 3] == 7.0 and out[2, 3] == 7.0 and out[2, 2] == 9.0
    assert fill_shallow_depressions(z, 2.0)[1] == 0  # exactly 2 ft deep: kept


def test_fill_shallow_depressions_nodata_drains_and_stays_nodata():
    # the dip beside a nodata cell is open to it (water leaves the grid there): nothing to fill
    z = np.full((5, 5), 10.0)
    z[2, 2] = 9.5
    z[2, 3] = np.nan
    out, n = fill_shallow_depressions(z, 1.0)
    assert n == 0 and out[2, 2] == 9.5 and np.isnan(out[2, 3])
    z[2, 3] = 10.0
    z[0, 0] = np.nan  # nodata far from it: the dip is closed, filled; the nodata cell stays NaN
    out, n = fill_shallow_depressions(z, 1.0)
    assert n == 1 and out[2, 2] == 10.0 and np.isnan(out[0, 0])


def test_fill_shallow_depressions_edge_cells_are_outlets():
    # a low cell on the window's edge is not a depression: water leaves the window there
    z = np.full((4, 4), 10.0)
    z[0, 1] = 9.0
    out, n = fill_shallow_depressions(z, 5.0)
    assert n == 0 and out[0, 1] == 9.0
