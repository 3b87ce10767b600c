"""A pass is given only on a DEM fine enough to show what the law measures (HRV-010, HRV-030).

A DEM cell holds one elevation for its whole width: a grid whose cells are as long as the law's
run cannot show a 200-ft stretch over 25 % (the sample's road H-1, 660 ft over 25 % on 10-ft
cells, read 0 % on 1,000-ft cells averaged from them, a pass). The rulebook's ``max_dem_cell_ft``
of each rule is the coarsest cell (the larger of its width and height, in feet, the DEM's CRS unit
read) a pass is given on; over it a pass is ``not_evaluated`` saying the cell size, the limit and
the fix, and a violation or review found stays, saying the cell size.

DEMs are planes (or a ramp between flats) written with rasterio in tmp_path: in NY Central (US
survey feet, the plan's CRS), in UTM 18N (metres) and in geographic degrees, each around the same
road, so the cell size in feet is computed from the DEM's own unit. Cell sizes are taken from the
rulebook's limit: at it, 0.1 ft under and 0.1 ft over.
"""

from __future__ import annotations

import math
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from affine import Affine
from common import NY_FT, X0, Y0
from pyproj import Transformer
from shapely import affinity
from shapely.geometry import LineString

from geoconstraints.commands import check_harvest
from geoconstraints.io.dem import open_dem
from geoconstraints.io.layers import load_layers
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.units import M_PER_FT

RB = load_rulebook("vestal")
K_US = 1200 / 3937 / M_PER_FT
"""International feet per US survey foot (1.000002)."""
UTM_M = "EPSG:32618"


def _limit(rid: str) -> float:
    return RB[rid].t("max_dem_cell_ft")


def _road(length: float) -> gpd.GeoDataFrame:
    """One haul road R from local (0, 0) east for ``length`` ft (NY Central, US survey feet)."""
    line = affinity.translate(LineString([(0.0, 0.0), (length, 0.0)]), X0, Y0)
    return gpd.GeoDataFrame({"id": ["R"]}, geometry=[line], crs=NY_FT)


def _ny_dem(path: Path, z_of_u, cell_us: float, *, fine: float | None = None,
            extent: tuple[float, float, float, float] = (-1500.0, -1500.0, 2500.0, 1500.0)) -> Path:
    """A DEM in NY Central (cells of ``cell_us`` US survey feet, z in feet) with the elevation
    ``z_of_u(u)`` (u local feet east). ``fine``: each cell is the mean of a ``fine``-ft grid inside
    it (as ``gdalwarp -r average`` makes a coarse DEM), else the value at the cell centre."""
    u0, v0, u1, v1 = extent
    nx, ny = math.ceil((u1 - u0) / cell_us), math.ceil((v1 - v0) / cell_us)
    k = 1 if fine is None else round(cell_us / fine)
    sub = cell_us / k
    uc = u0 + sub * (np.arange(nx * k) + 0.5)
    z = np.broadcast_to(z_of_u(uc), (ny, nx * k)).reshape(ny, nx, k).mean(axis=2)
    with rasterio.open(path, "w", driver="GTiff", width=nx, height=ny, count=1, dtype="float64", crs=NY_FT,
                       transform=Affine(cell_us, 0, X0 + u0, 0, -cell_us, Y0 + v1)) as dst:
        dst.write(z, 1)
        dst.set_band_unit(1, "ft")
    return path


def _other_dem(path: Path, crs: str, cell: float, grade_pct: float) -> Path:
    """A DEM in ``crs`` (UTM metres, or degrees) over the roads' area, cells of ``cell`` CRS units, z in
    metres: a plane rising ``grade_pct`` % to the east (its grade measured in metres on the ground)."""
    to = Transformer.from_crs(NY_FT, crs, always_xy=True)
    xs, ys = to.transform([X0 - 1500, X0 + 2500], [Y0 - 1500, Y0 + 1500])
    nx, ny = math.ceil((xs[1] - xs[0]) / cell), math.ceil((ys[1] - ys[0]) / cell)
    back = Transformer.from_crs(crs, NY_FT, always_xy=True)
    cx = xs[0] + cell * (np.arange(nx) + 0.5)
    cy = ys[1] - cell * (np.arange(ny) + 0.5)
    gx, gy = np.meshgrid(cx, cy)
    u, _ = back.transform(gx, gy)  # US survey feet east of the plan's origin
    z_m = 100 + grade_pct / 100 * (u - X0) * K_US * M_PER_FT
    with rasterio.open(path, "w", driver="GTiff", width=nx, height=ny, count=1, dtype="float64", crs=crs,
                       transform=Affine(cell, 0, xs[0], 0, -cell, ys[1])) as dst:
        dst.write(z_m, 1)
        dst.set_band_unit(1, "m")
    return path


def _check(dem: Path, length: float, rulebook=RB):
    return check_harvest(load_layers(haul_roads=_road(length), dem=dem), rulebook).findings


def _row(findings: gpd.GeoDataFrame, rid: str):
    f = findings[(findings["rule_id"] == rid) & (findings["subject_id"] == "R")]
    assert len(f) == 1, f
    return f.iloc[0]


def _plane(grade_pct: float):
    return lambda u: 100 + grade_pct / 100 * u * K_US


# ------------------------------------------------------------------------------------------
# HRV-010: 25 % for more than 200 ft


@pytest.mark.parametrize("delta,expected", [(-0.1, "pass"), (0.0, "pass"), (0.1, "not_evaluated")])
def test_hrv010_pass_at_under_and_over_the_cell_limit(tmp_path, delta, expected) -> None:
    # 150 ft at 30 %: steep, but not for more than 200 ft; a pass on cells at most max_dem_cell_ft
    # (the cell in US survey feet: 50 US ft is 50.0001 ft, at the limit), not evaluated over it
    cell = _limit("HRV-010") + delta
    row = _row(_check(_ny_dem(tmp_path / "dem.tif", _plane(30), cell), 150.0), "HRV-010")
    assert row["status"] == expected
    if expected == "pass":
        assert "max_dem_cell_ft" not in row["message"]
    else:
        msg = row["message"]
        assert f"the DEM's cells are {cell * K_US:,.1f} ft" in msg
        assert f"over the {_limit('HRV-010'):g} ft a pass needs (max_dem_cell_ft)" in msg
        assert "a stretch of 200 ft steeper than 25 %" in msg
        assert "give a finer DEM: USGS 3DEP 1 m lidar" in msg
        assert (row["measured"], row["threshold"]) == (pytest.approx(cell * K_US), _limit("HRV-010"))


def test_hrv010_coarse_dem_hides_the_violation(tmp_path) -> None:
    # a ramp of 660 ft at 30 % between flats (the sample's H-1): on 10-ft cells a violation of
    # 660 ft; averaged into 1,000-ft cells it reads 0 ft over 25 %: a pass before, now not evaluated
    def ramp(u):
        return 100 + 0.3 * np.clip(u * K_US - 200, 0, 660)

    fine = _row(_check(_ny_dem(tmp_path / "fine.tif", ramp, 10.0), 1000.0), "HRV-010")
    # (each grade break is blurred over the 10-ft cell interval around it: 640 ft read steep)
    assert fine["status"] == "violation" and fine["measured"] == pytest.approx(660, abs=20)
    assert "max_dem_cell_ft" not in fine["message"]
    coarse = _row(_check(_ny_dem(tmp_path / "coarse.tif", ramp, 1000.0, fine=10.0), 1000.0), "HRV-010")
    assert coarse["status"] == "not_evaluated"
    assert "the DEM's cells are 1,000.0 ft" in coarse["message"]
    assert "longest 0.0 ft" in coarse["message"]  # what the coarse grid showed, for the record


@pytest.mark.parametrize("delta", [0.0, 0.1, 50.0])
def test_hrv010_violation_on_a_coarse_dem_stays_and_says_the_cell(tmp_path, delta) -> None:
    # 400 ft at 30 %: a violation on any grid; over the limit its message says the cell size
    cell = _limit("HRV-010") + delta
    row = _row(_check(_ny_dem(tmp_path / "dem.tif", _plane(30), cell), 400.0), "HRV-010")
    assert row["status"] == "violation"
    note = f"measured on DEM cells of {cell * K_US:,.1f} ft, coarser than the {_limit('HRV-010'):g} ft limit"
    assert (note in row["message"]) == (delta > 0)


def test_hrv010_limit_follows_the_rulebook(tmp_path) -> None:
    # a town asking for finer data: max_dem_cell_ft 20 makes a pass on 25-ft cells not evaluated
    rb = tmp_path / "fine.yaml"
    rb.write_text("extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n      max_dem_cell_ft: 20\n", "utf-8")
    dem = _ny_dem(tmp_path / "dem.tif", _plane(30), 25.0)
    assert _row(_check(dem, 150.0), "HRV-010")["status"] == "pass"
    row = _row(_check(dem, 150.0, load_rulebook(rb)), "HRV-010")
    assert row["status"] == "not_evaluated" and "over the 20 ft a pass needs" in row["message"]


@pytest.mark.parametrize("cell_m,expected", [(15.2, "pass"), (50 * M_PER_FT, "pass"), (15.3, "not_evaluated")])
def test_hrv010_metre_dem_cells_are_read_in_metres(tmp_path, cell_m, expected) -> None:
    # the unit comes from the DEM's CRS: 15.24 m is 50 ft (at the limit), 15.3 m is 50.2 ft (over it);
    # read as feet, every one of these would be far under the limit
    assert _limit("HRV-010") == 50  # the cells below are this limit in metres
    dem = _other_dem(tmp_path / "utm.tif", UTM_M, cell_m, 30.0)
    assert open_dem(dem).max_cell_size_ft == pytest.approx(cell_m / M_PER_FT)
    row = _row(_check(dem, 150.0), "HRV-010")
    assert row["status"] == expected
    if expected != "pass":
        assert "the DEM's cells are 50.2 ft" in row["message"]


def test_hrv010_geographic_dem_uses_its_larger_side(tmp_path) -> None:
    # a 1 arc-second DEM (USGS 3DEP 1"): about 101 ft north-south and 75 ft east-west at 42° N; the
    # larger side is weighed, so it is too coarse for a pass (its mean, 88 ft, would be too)
    dem = _other_dem(tmp_path / "geo.tif", "EPSG:4269", 1 / 3600, 30.0)
    d = open_dem(dem)
    assert 100 < d.max_cell_size_ft < 102 and d.cell_size_ft < d.max_cell_size_ft
    row = _row(_check(dem, 150.0), "HRV-010")
    assert row["status"] == "not_evaluated" and f"the DEM's cells are {d.max_cell_size_ft:,.1f} ft" in row["message"]


# ------------------------------------------------------------------------------------------
# HRV-030: no water bar needed under 2 % only on a fine DEM


@pytest.mark.parametrize("delta,expected", [(-0.1, "pass"), (0.0, "pass"), (0.1, "not_evaluated")])
def test_hrv030_no_bar_at_under_and_over_the_cell_limit(tmp_path, delta, expected) -> None:
    # 1,000 ft at 1 %: under min_grade_pct, no water bar; that pass needs cells at most max_dem_cell_ft
    cell = _limit("HRV-030") + delta
    row = _row(_check(_ny_dem(tmp_path / "dem.tif", _plane(1), cell), 1000.0), "HRV-030")
    assert (row["status"], row["measured"]) == (expected, 0)
    if expected == "pass":
        assert "max_dem_cell_ft" not in row["message"]
    else:
        msg = row["message"]
        assert "water bars not evaluated" in msg
        assert f"the DEM's cells are {cell * K_US:,.1f} ft" in msg and "max_dem_cell_ft" in msg
        assert "a stretch of 100 ft (the shortest spacing) at 2 % or more" in msg
        assert "give a finer DEM" in msg


def test_hrv030_coarse_dem_hides_the_bars(tmp_path) -> None:
    # 100-ft pitches of 10 % up and down (a washboard road, net 0): each needs bars on 10-ft cells;
    # averaged into 300-ft cells it reads under 2 %: no bar required before, now not evaluated
    def washboard(u):
        return 100 + 10 - 0.1 * np.abs(np.mod(u * K_US, 200) - 100)

    fine = _row(_check(_ny_dem(tmp_path / "fine.tif", washboard, 10.0), 1000.0), "HRV-030")
    assert fine["status"] == "info" and fine["measured"] > 0
    coarse = _row(_check(_ny_dem(tmp_path / "coarse.tif", washboard, 300.0, fine=10.0), 1000.0), "HRV-030")
    assert (coarse["status"], coarse["measured"]) == ("not_evaluated", 0)
    assert "the DEM's cells are 300.0 ft" in coarse["message"]


def test_hrv030_bars_from_a_coarse_dem_say_the_cell(tmp_path) -> None:
    # 1,000 ft at 10 %: bars every 200 ft on any grid; over the limit the finding says the cell size
    over = _limit("HRV-030") + 10
    row = _row(_check(_ny_dem(tmp_path / "dem.tif", _plane(10), over), 1000.0), "HRV-030")
    assert (row["status"], row["measured"]) == ("info", 4)
    assert f"DEM cells of {over * K_US:,.1f} ft, coarser than the {_limit('HRV-030'):g} ft limit" in row["message"]
    assert "a steeper stretch it flattened may need more bars" in row["message"]
