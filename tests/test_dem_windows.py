"""The DEM is read in windows around the plan, never the whole band (geoconstraints.io.dem).

A 270-kB GeoTIFF declaring 60,000 x 60,000 float32 cells (13.4 GiB) asked for 13.4 GiB; a sparse
16,000^2 one made a small harvest take 37 s and 3.2 GB. Here every window the harvest command reads
is recorded: all lie inside the plan's extent plus the margin, and their cells are counted.
"""

from __future__ import annotations

import numpy as np
import pytest
from catalogue import big_sparse_dem, harvest_area, write_gpkg
from common import NY_FT, X0, Y0
from shapely.geometry import LineString

import geoconstraints as gc
from geoconstraints.errors import DemError
from geoconstraints.io import dem as dem_module
from geoconstraints.io.layers import DEM_MARGIN_FT


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    return big_sparse_dem(tmp_path_factory.mktemp("dem") / "big.tif")


def test_the_whole_band_is_refused_by_the_cap(big):
    dem = gc.open_dem(big)
    assert dem.width == dem.height == 60_000
    with pytest.raises(DemError, match=r"60,000 x 60,000 cells, more than the 25,000,000 read at once.*Clip the DEM"):
        dem.read_ft()


def test_a_harvest_reads_only_around_the_plan(big, tmp_path, monkeypatch):
    import geopandas as gpd

    road = gpd.GeoDataFrame({"id": ["R1"]}, geometry=[LineString([(X0 + 10, Y0 + 10), (X0 + 480, Y0 + 390)])], crs=NY_FT)
    gpkg = write_gpkg(tmp_path / "plan.gpkg", {"harvest_area": harvest_area(), "haul_roads": road})
    reads: list[tuple[int, int, int, int]] = []
    real = dem_module._read_window_ft

    def spy(dem, key):
        reads.append(key)
        return real(dem, key)

    monkeypatch.setattr(dem_module, "_read_window_ft", spy)
    layers = gc.load_layers(gpkg, dem=big)
    r0, r1, c0, c1 = layers.dem.focus
    # the plan is 500 x 400 ft of 1-ft cells; the margin 1,000 ft on every side (plus a cell)
    assert (r1 - r0, c1 - c0) == (400 + 2 * 1001, 500 + 2 * 1001)
    res = gc.check_harvest(layers, gc.load_rulebook("vestal"))
    assert reads == [layers.dem.focus]  # one read; every profile and contour is a slice of it
    assert (r1 - r0) * (c1 - c0) * 4 < 30e6  # about 12 MB instead of 13.4 GiB
    grades = res.findings.loc[res.findings["rule_id"] == "HRV-010", "status"]
    assert len(grades) and set(grades) <= {"pass", "violation", "not_evaluated"}
    assert DEM_MARGIN_FT == 1_000.0


def test_a_long_road_is_sampled_in_pieces(big):
    # a road 50,000 ft long across the DEM: its bounding window (about 1.25e9 cells) is never read
    dem = gc.open_dem(big)
    xs = np.linspace(X0 - 25_000, X0 + 25_000, 20_001)
    ys = np.linspace(Y0 - 25_000, Y0 + 25_000, 20_001)
    z = dem.sample(xs, ys, NY_FT)
    assert len(z) == 20_001
    assert all((r1 - r0) * (c1 - c0) <= dem_module.MAX_WINDOW_CELLS // 4 for r0, r1, c0, c1 in dem._cache)
    assert sum(a.size for a in dem._cache.values()) <= 2 * dem_module.MAX_WINDOW_CELLS
    inside = np.abs(xs - X0) < 200
    assert np.isfinite(z[inside]).all() and np.isnan(z[np.abs(xs - X0) > 2_000]).all()  # data only near the plan


def test_windows_equal_the_whole_band(tmp_path):
    # on a small DEM: a window read on its own equals the same cells of the whole band
    from catalogue import write_dem

    dem = gc.open_dem(write_dem(tmp_path / "d.tif", units="ft"))
    whole = dem.read_ft()
    part = gc.open_dem(dem.path).read_ft(((5, 17), (3, 29)))
    np.testing.assert_array_equal(part, whole[5:17, 3:29])
    assert part.dtype == np.float32 and not part.flags.writeable
