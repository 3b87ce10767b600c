"""FLD-004 passes a floor only on a DEM fine enough to read the highest adjacent grade (HAG).

Where the FIRM gives no BFE, the lowest floor must be at least ``hag_freeboard_ft`` above the highest
grade beside the walls, read from the DEM along them. A DEM cell holds the average ground of its whole
width, so on a slope the DEM reads that grade low by up to about the slope x half a cell (1.65 ft on a
10 % ridge on 33-ft cells, against a 2-ft freeboard): a floor could pass a requirement too low. The
rulebook's ``max_dem_cell_ft`` of FLD-004 is the coarsest cell (the larger side, in feet, the DEM's CRS
unit read) a pass is given on; over it a pass is ``not_evaluated`` saying the cell size, the limit and
the fix, and a violation stays, saying the cell size. FLD-003's requirement is the BFE, not the DEM's.

DEMs are written with rasterio in tmp_path (as in tests/test_dem_resolution.py): flat ones (the HAG
exact on any grid) in NY Central (US survey feet) and in UTM 18N (metres), and a ridge averaged into
coarse cells. Cell sizes are taken from the rulebook's limit: at it, 0.1 ft under and 0.1 ft over.
"""

from __future__ import annotations

import math
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from affine import Affine
from common import NY_FT, UTM18, X0, Y0, square
from pyproj import Transformer

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import check_site
from geoconstraints.units import M_PER_FT

RB = load_rulebook("vestal")
K_US = 1200 / 3937 / M_PER_FT
"""International feet per US survey foot (1.000002)."""
FOOTPRINT = square(0, 0, 40, 40)


def _limit() -> float:
    return RB["FLD-004"].t("max_dem_cell_ft")


def _ny_dem(path: Path, z_of_u, cell: float, *, u0: float = -200.0, fine: float | None = None) -> Path:
    """A DEM in NY Central, cells of ``cell`` US survey feet from local ``u0`` (west) and ``u0`` (south),
    z in feet ``z_of_u(u)`` (u local feet east). ``fine``: each cell the mean of a ``fine``-ft grid
    inside it (as ``gdalwarp -r average`` makes a coarse DEM), else the value at the cell centre."""
    n = math.ceil((240.0 - u0) / cell)
    k = 1 if fine is None else round(cell / fine)
    uc = u0 + cell / k * (np.arange(n * k) + 0.5)
    z = np.broadcast_to(z_of_u(uc), (n, n * k)).reshape(n, n, k).mean(axis=2)
    with rasterio.open(path, "w", driver="GTiff", width=n, height=n, count=1, dtype="float64", crs=NY_FT,
                       transform=Affine(cell, 0, X0 + u0, 0, -cell, Y0 + u0 + n * cell)) as dst:
        dst.write(z, 1)
    return path


def _utm_dem(path: Path, z_ft: float, cell_m: float) -> Path:
    """A flat DEM at ``z_ft`` feet (written in metres) in UTM 18N, cells of ``cell_m`` metres."""
    to = Transformer.from_crs(NY_FT, UTM18, always_xy=True)
    xs, ys = to.transform([X0 - 200, X0 + 240], [Y0 - 200, Y0 + 240])
    nx, ny = math.ceil((xs[1] - xs[0]) / cell_m), math.ceil((ys[1] - ys[0]) / cell_m)
    with rasterio.open(path, "w", driver="GTiff", width=nx, height=ny, count=1, dtype="float64", crs=UTM18,
                       transform=Affine(cell_m, 0, xs[0], 0, -cell_m, ys[1])) as dst:
        dst.write(np.full((ny, nx), z_ft * M_PER_FT), 1)
    return path


def _flat(z: float):
    return lambda u: np.full_like(u, z)


def _fld004(folder: Path, dem: Path, floor: float, *, z_units: str = "ft", rulebook=RB):
    """FLD-004's finding for FOOTPRINT, residential, wholly in zone A (no BFE on the FIRM)."""
    folder.mkdir(parents=True, exist_ok=True)
    gpkg = folder / "in.gpkg"
    gpd.GeoDataFrame({"id": ["F1"]}, geometry=[FOOTPRINT], crs=NY_FT).to_file(gpkg, layer="footprints")
    gpd.GeoDataFrame({"FLD_ZONE": ["A"], "ZONE_SUBTY": [None], "STATIC_BFE": [-9999.0], "V_DATUM": ["NAVD88"]},
                     geometry=[square(-500, -500, 500, 500)], crs=NY_FT).to_file(gpkg, layer="flood_zones")
    layers = load_layers(gpkg, dem=dem, dem_z_units=z_units, primary=("footprints",))
    res = check_site(layers, rulebook, use="residential", lowest_floor_ft=floor)
    f = res.findings
    hit = f[(f["rule_id"] == "FLD-004") & (f["subject_id"] == "F1")]
    assert len(hit) == 1, hit
    return hit.iloc[0], res.tables["footprints"].iloc[0]


@pytest.mark.parametrize("delta,expected", [(-0.1, "pass"), (0.0, "pass"), (0.1, "not_evaluated")])
def test_fld004_pass_at_under_and_over_the_cell_limit(tmp_path, delta, expected) -> None:
    # a flat DEM at 100 ft: HAG 100 on any grid, required 102; a floor of 102.5 passes on cells of at most
    # max_dem_cell_ft (in US survey feet: 10 US ft is 10.00002 ft, at the limit), not evaluated over it
    cell = _limit() + delta
    row, t = _fld004(tmp_path, _ny_dem(tmp_path / "dem.tif", _flat(100.0), cell), 102.5)
    assert t["hag_ft"] == pytest.approx(100.0)
    assert row["status"] == expected
    if expected == "pass":
        assert "max_dem_cell_ft" not in row["message"]
    else:
        msg = row["message"]
        # the coarse-DEM sentence the HRV and SWP rules share (rules/dem_cells.py), with FLD-004's own fix
        assert f"the DEM's cells are {cell * K_US:,.1f} ft (the larger of their width and height)" in msg
        assert f"over the {_limit():g} ft a pass needs (max_dem_cell_ft)" in msg
        assert "the coarse grid showed: a highest adjacent grade of 100.0 ft" in msg
        assert "the slope x half a cell" in msg
        assert "give a finer pre-construction DEM: USGS 3DEP 1 m lidar" in msg
        assert f"cells of at most {_limit():g} ft" in msg  # the message template names the limit
        assert (row["measured"], row["threshold"]) == (102.5, pytest.approx(102.0))


def test_fld004_coarse_dem_reads_the_ridge_low(tmp_path) -> None:
    # a ridge along the east wall (u = 40), falling 10 % each way: the true HAG is 110 ft, required 112.
    # On 2-ft cells (an edge on the wall) the HAG reads 109.9; averaged into 33-ft cells with an edge on
    # the wall, each cell beside it holds the ground 0 to 33 ft away: 110 - 0.1 x 16.5 = 108.35 (slope x
    # half a cell low), so a floor of 110.35 met the coarse requirement (a pass before), a violation on
    # the fine DEM: now not evaluated
    def ridge(u):
        return 110 - 0.1 * np.abs(u - 40)

    fine, t = _fld004(tmp_path / "f", _ny_dem(tmp_path / "fine.tif", ridge, 2.0, u0=-224.0), 110.35)
    assert t["hag_ft"] == pytest.approx(109.9)
    assert fine["status"] == "violation" and "max_dem_cell_ft" not in fine["message"]
    coarse, t = _fld004(tmp_path / "c", _ny_dem(tmp_path / "coarse.tif", ridge, 33.0, u0=-224.0, fine=1.0), 110.35)
    assert t["hag_ft"] == pytest.approx(108.35)
    assert coarse["status"] == "not_evaluated"
    assert "the DEM's cells are 33.0 ft" in coarse["message"] and "(1.7 ft at 10 %)" in coarse["message"]
    assert "the coarse grid showed: a highest adjacent grade of 108.3 ft" in coarse["message"]
    assert "highest adjacent grade 108.3 ft + 2 ft = 110.3 ft" in coarse["message"]  # the coarse grid's, shown


@pytest.mark.parametrize("delta", [0.0, 0.1, 23.0])
def test_fld004_violation_on_a_coarse_dem_stays_and_says_the_cell(tmp_path, delta) -> None:
    # HAG 100 ft, a floor of 101.5: below 102 on any grid; over the limit the message says the cell size
    cell = _limit() + delta
    row, _ = _fld004(tmp_path, _ny_dem(tmp_path / "dem.tif", _flat(100.0), cell), 101.5)
    assert row["status"] == "violation"
    note = (f"measured on DEM cells of {cell * K_US:,.1f} ft, coarser than the {_limit():g} ft limit "
            f"(max_dem_cell_ft): the highest adjacent grade is the coarse grid's")
    assert (note in row["message"]) == (delta > 0)
    assert "max_dem_cell_ft" not in row["message"] or delta > 0


@pytest.mark.parametrize("cell_m,expected", [(3.0, "pass"), (10 * M_PER_FT, "pass"), (3.1, "not_evaluated")])
def test_fld004_metre_dem_cells_are_read_in_metres(tmp_path, cell_m, expected) -> None:
    # the unit comes from the DEM's CRS: 3.048 m is 10 ft (at the limit), 3.0 m 9.84 ft (under), 3.1 m
    # 10.17 ft (over); read as feet, every one would be far under the limit
    assert _limit() == 10  # the cells below are this limit in metres
    row, t = _fld004(tmp_path, _utm_dem(tmp_path / "utm.tif", 100.0, cell_m), 102.5, z_units="m")
    assert t["hag_ft"] == pytest.approx(100.0, abs=1e-6)
    assert row["status"] == expected
    if expected != "pass":
        assert "the DEM's cells are 10.2 ft" in row["message"]


def test_fld004_limit_follows_the_rulebook(tmp_path) -> None:
    # a town asking for lidar: max_dem_cell_ft 5 makes a pass on 10-ft cells not evaluated
    rb = tmp_path / "fine.yaml"
    rb.write_text("extends: vestal\nrules:\n  - id: FLD-004\n    thresholds:\n      max_dem_cell_ft: 5\n", "utf-8")
    dem = _ny_dem(tmp_path / "dem.tif", _flat(100.0), 10.0)
    assert _fld004(tmp_path / "a", dem, 102.5)[0]["status"] == "pass"
    row, _ = _fld004(tmp_path / "b", dem, 102.5, rulebook=load_rulebook(rb))
    assert row["status"] == "not_evaluated" and "over the 5 ft a pass needs" in row["message"]
