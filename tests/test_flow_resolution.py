"""SWP-002's pass (no discharge to an impaired water) is given only on a DEM fine enough to show the
ditch that drains a depression (and Lockport's SWP-007, which reads Condition A from it).

A DEM cell holds one elevation for its whole width: a 20-ft ditch carrying the runoff of a 5-ft bowl
out through its rim to a water 1,400 ft away is traced to the water on 10-ft cells (review), but
averaged into 100-ft cells the ditch is gone and the bowl reads as a closed depression: every flow
path ends in it, a pass. The rulebook's ``max_dem_cell_ft`` of SWP-002 is the coarsest cell (the larger
of its width and height, in feet, the DEM's CRS unit read) a pass is given on; over it the pass is
``not_evaluated`` saying the cell size, the limit and the fix, and a path found reaching the water
stays ``review``, saying the cell size.

DEMs are written with rasterio in tmp_path, in NY Central (US survey feet, the plan's CRS), in UTM 18N
(metres) and on the geographic 1/3 arc-second grid USGS publishes its 10 m DEM on, each around the same
site, so the cell size in feet is computed from the DEM's own unit. Cell sizes are taken from the
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
from common import NY_FT, UTM18, X0, Y0
from pyproj import Transformer
from shapely.geometry import LineString, box

from geoconstraints.commands import check_stormwater
from geoconstraints.errors import RulebookError
from geoconstraints.io.layers import load_layers
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rulebook.schema import check_file
from geoconstraints.units import M_PER_FT

BOOKS = ("vestal", "lockport")
K_US = 1200 / 3937 / M_PER_FT
"""International feet per US survey foot (1.000002)."""
WATER_U = 1500.0
"""The impaired water: a north-south line this many feet east of the site's centre (1,400 ft from its
east edge, beyond the 500-ft screening distance)."""
EXTENT = (-2000.0, -2000.0, 2500.0, 2000.0)
"""The DEMs' extent in local feet around the site's centre (u east, v north): every path traced here
ends in it, at a pit or at the water."""


def _limit(book: str = "vestal") -> float:
    return load_rulebook(book)["SWP-002"].t("max_dem_cell_ft")


def bowl(u, v):
    """A bowl 5 ft deep and 600 ft in radius around the site, the ground beyond it falling east to the
    water (and on past it)."""
    r = np.hypot(u, v)
    return np.where(r < 600, 100 + 5 * (r / 600) ** 2, 105 - 0.005 * np.clip(u - 600, 0, None))


def bowl_and_ditch(u, v):
    """The bowl with a ditch 20 ft wide along v = 0 from its centre east past the water, its bed falling
    from 99 ft (1 ft below the bowl's bottom) 0.4 ft per 100 ft: 1.0 to 8.4 ft deep through the bowl."""
    return np.where((np.abs(v) < 10) & (u > -10), np.minimum(bowl(u, v), 99 - 0.004 * u), bowl(u, v))


def plane(u, v):
    """Ground falling 1 ft per 100 ft east to the water."""
    return 100 - 0.01 * u + 0 * v


def ny_dem(path: Path, z_of, cell_us: float, *, fine: float | None = None) -> Path:
    """A DEM in NY Central (cells of ``cell_us`` US survey feet, z in feet) of ``z_of(u, v)`` (local feet).
    ``fine``: each cell is the mean of a ``fine``-ft grid inside it (as ``gdalwarp -r average`` makes a
    coarse DEM), else the value at the cell centre."""
    u0, v0, u1, v1 = EXTENT
    nx, ny = math.ceil((u1 - u0) / cell_us), math.ceil((v1 - v0) / cell_us)
    k = 1 if fine is None else round(cell_us / fine)
    sub = cell_us / k
    uc = u0 + sub * (np.arange(nx * k) + 0.5)
    vc = v1 - sub * (np.arange(ny * k) + 0.5)
    z = z_of(uc[None, :], vc[:, None]).reshape(ny, k, nx, k).mean(axis=(1, 3))
    with rasterio.open(path, "w", driver="GTiff", width=nx, height=ny, count=1, dtype="float64", crs=NY_FT,
                       transform=Affine(cell_us, 0, X0 + u0, 0, -cell_us, Y0 + v1)) as dst:
        dst.write(z, 1)
        dst.set_band_unit(1, "ft")
    return path


def other_dem(path: Path, crs: str, cell_x: float, cell_y: float, z_of) -> Path:
    """A DEM in ``crs`` (UTM metres, or degrees) over the same ground, cells of ``cell_x`` by ``cell_y``
    CRS units, z in feet at each cell centre (its local feet found through NY Central)."""
    to = Transformer.from_crs(NY_FT, crs, always_xy=True)
    xs, ys = to.transform([X0 + EXTENT[0], X0 + EXTENT[2]], [Y0 + EXTENT[1], Y0 + EXTENT[3]])
    nx, ny = math.ceil((xs[1] - xs[0]) / cell_x), math.ceil((ys[1] - ys[0]) / cell_y)
    gx, gy = np.meshgrid(xs[0] + cell_x * (np.arange(nx) + 0.5), ys[1] - cell_y * (np.arange(ny) + 0.5))
    x, y = Transformer.from_crs(crs, NY_FT, always_xy=True).transform(gx, gy)
    with rasterio.open(path, "w", driver="GTiff", width=nx, height=ny, count=1, dtype="float64", crs=crs,
                       transform=Affine(cell_x, 0, xs[0], 0, -cell_y, ys[1])) as dst:
        dst.write(z_of(x - X0, y - Y0), 1)
        dst.set_band_unit(1, "ft")
    return path


def run(dem: Path, book="vestal"):
    """Stormwater on a 200-ft square site (0.92 acre) centred on the local origin, the water at WATER_U."""
    site = gpd.GeoDataFrame({"id": ["A"]}, geometry=[box(X0 - 100, Y0 - 100, X0 + 100, Y0 + 100)], crs=NY_FT)
    water = gpd.GeoDataFrame({"id": ["W1"], "name": ["Test Creek"]}, crs=NY_FT,
                             geometry=[LineString([(X0 + WATER_U, Y0 - 1500), (X0 + WATER_U, Y0 + 1500)])])
    rb = book if not isinstance(book, str) else load_rulebook(book)
    layers = load_layers(disturbance=site, impaired_waters=water, dem=dem)
    return check_stormwater(layers, rb, larger_common_plan=False).findings


def row(findings, rid: str, subject: str = "project"):
    f = findings[(findings["rule_id"] == rid) & (findings["subject_id"] == subject)]
    assert len(f) == 1, f
    return f.iloc[0]


def _coarse_pass(msg: str, cell_ft: float, book: str = "vestal") -> None:
    assert f"the DEM's cells are {cell_ft:,.1f} ft (the larger of their width and height)" in msg, msg
    assert f"over the {_limit(book):g} ft a pass needs (max_dem_cell_ft)" in msg, msg
    assert "a ditch, swale or culvert channel narrower than a cell" in msg, msg
    assert "the coarse grid showed: every downslope flow path" in msg and "closed depression" in msg, msg
    assert "give a finer DEM: USGS 3DEP 1 m lidar" in msg, msg


# ------------------------------------------------------------------------------------------
# the limit: at, under and over it


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("delta,expected", [(-0.1, "pass"), (0.0, "pass"), (0.1, "not_evaluated")])
def test_swp002_pass_at_under_and_over_the_cell_limit(tmp_path, book, delta, expected) -> None:
    # the bowl without the ditch: every path ends at its bottom, 5 ft deep, far from the water: a pass on
    # cells of at most max_dem_cell_ft (35 US survey ft is 35.00007 ft, at the limit), not evaluated over it
    cell = _limit(book) + delta
    f = row(run(ny_dem(tmp_path / "dem.tif", bowl, cell), book), "SWP-002")
    assert f["status"] == expected, f["message"]
    if expected == "pass":
        assert "max_dem_cell_ft" not in f["message"]
    else:
        _coarse_pass(f["message"], cell * K_US, book)
        assert "discharge to an impaired water not analysed" in f["message"]
        assert (f["measured"], f["threshold"], f["unit"]) == (pytest.approx(cell * K_US), _limit(book), "ft")


@pytest.mark.parametrize("crs, cell, expected", [
    (UTM18, 10.0, "pass"),                  # the 10 m DEM projected: 32.8 ft
    (UTM18, 35 * M_PER_FT, "pass"),         # 35 ft exactly
    (UTM18, 10.7, "not_evaluated"),         # 35.1 ft
    ("EPSG:4269", 1 / 3 / 3600, "pass"),    # the 1/3 arc-second grid: 33.7 ft north-south, 25.2 ft east-west here
    ("EPSG:4269", 1 / 3600, "not_evaluated"),  # the 1 arc-second grid: 101 ft north-south
])
def test_swp002_cell_read_from_the_dems_unit(tmp_path, crs, cell, expected) -> None:
    assert _limit() == 35
    f = row(run(other_dem(tmp_path / "dem.tif", crs, cell, cell, bowl)), "SWP-002")
    assert f["status"] == expected, f["message"]


# ------------------------------------------------------------------------------------------
# the false pass the limit removes, and what stays


def test_swp002_coarse_dem_hides_the_ditch(tmp_path) -> None:
    # on 10-ft cells the ditch carries the bowl's runoff to the water: review; averaged into 100-ft cells
    # (and 50-ft ones) the ditch is gone and the bowl is closed: every path ends in it, a pass before, now
    # not evaluated
    fine = row(run(ny_dem(tmp_path / "fine.tif", bowl_and_ditch, 10.0)), "SWP-002")
    assert fine["status"] == "review" and "reaches impaired water W1 (Test Creek)" in fine["message"]
    assert "max_dem_cell_ft" not in fine["message"]
    for cell in (50.0, 100.0):
        coarse = row(run(ny_dem(tmp_path / f"c{cell:g}.tif", bowl_and_ditch, cell, fine=10.0)), "SWP-002")
        assert coarse["status"] == "not_evaluated", coarse["message"]
        _coarse_pass(coarse["message"], cell * K_US)


@pytest.mark.parametrize("delta", [0.0, 0.1, 65.0])
def test_swp002_review_on_a_coarse_dem_stays_and_says_the_cell(tmp_path, delta) -> None:
    # ground falling east to the water: the path reaches it on any grid (review); over the limit the
    # finding says the cell size
    cell = _limit() + delta
    f = row(run(ny_dem(tmp_path / "dem.tif", plane, cell)), "SWP-002")
    assert f["status"] == "review" and "reaches impaired water W1" in f["message"], f["message"]
    note = (f"measured on DEM cells of {cell * K_US:,.1f} ft, coarser than the {_limit():g} ft limit "
            f"(max_dem_cell_ft): the flow paths are those of the coarse grid")
    assert (note in f["message"]) == (delta > 0), f["message"]


def test_swp002_undecided_reading_on_a_coarse_dem_says_the_cell(tmp_path) -> None:
    # undrained_path_end=not_evaluated leaves the bowl undecided on any grid; on a coarse one it says why
    # a finer DEM would not settle it alone
    rb = tmp_path / "undecided.yaml"
    rb.write_text("extends: vestal\nrules:\n  - id: SWP-002\n    switches:\n      undrained_path_end: not_evaluated\n",
                  "utf-8")
    f = row(run(ny_dem(tmp_path / "dem.tif", bowl, 100.0), load_rulebook(rb)), "SWP-002")
    assert f["status"] == "not_evaluated" and "undrained_path_end=not_evaluated" in f["message"]
    assert f"measured on DEM cells of {100 * K_US:,.1f} ft, coarser than the 35 ft limit" in f["message"]


def test_swp007_lockport_not_required_only_on_a_fine_dem(tmp_path) -> None:
    # Lockport inspects only under Conditions A, B or C; the 0.92-acre site meets neither B (5 acres) nor C
    # (1 acre): "not required" (a pass) rests on Condition A's pass. On the ditch averaged into 100-ft
    # cells Condition A is undecided, so whether inspections are required is not known
    fine = row(run(ny_dem(tmp_path / "bowl.tif", bowl, 10.0), "lockport"), "SWP-007", "schedule")
    assert fine["status"] == "pass" and "none of Conditions A, B, C applies" in fine["message"]
    coarse = row(run(ny_dem(tmp_path / "c.tif", bowl_and_ditch, 100.0, fine=10.0), "lockport"), "SWP-007",
                 "schedule")
    assert coarse["status"] == "not_evaluated", coarse["message"]
    assert "Condition A (the DEM's cells are 100.0 ft" in coarse["message"]
    assert "over the 35 ft a pass needs (max_dem_cell_ft)" in coarse["message"]


# ------------------------------------------------------------------------------------------
# the rulebook


def test_limit_in_both_rulebooks_and_the_schema() -> None:
    assert [_limit(b) for b in BOOKS] == [35, 35]
    for book in BOOKS:
        assert "max_dem_cell_ft" in load_rulebook(book)["SWP-002"].notes
    check_file({"extends": "lockport", "rules": [{"id": "SWP-002", "thresholds": {"max_dem_cell_ft": 3.3}}]}, "mine.yaml")
    with pytest.raises(RulebookError, match="max_dem_cell_ft = -1 is negative"):
        check_file({"extends": "vestal", "rules": [{"id": "SWP-002", "thresholds": {"max_dem_cell_ft": -1}}]},
                   "mine.yaml")


def test_swp002_limit_follows_the_rulebook(tmp_path) -> None:
    # a town asking for lidar: max_dem_cell_ft 5 makes a pass on 10-ft cells not evaluated
    rb = tmp_path / "lidar.yaml"
    rb.write_text("extends: lockport\nrules:\n  - id: SWP-002\n    thresholds:\n      max_dem_cell_ft: 5\n", "utf-8")
    dem = ny_dem(tmp_path / "dem.tif", bowl, 10.0)
    assert row(run(dem, "lockport"), "SWP-002")["status"] == "pass"
    f = row(run(dem, load_rulebook(rb)), "SWP-002")
    assert f["status"] == "not_evaluated" and "over the 5 ft a pass needs (max_dem_cell_ft)" in f["message"]
