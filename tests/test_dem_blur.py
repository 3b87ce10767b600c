"""HRV-010: a pass only where the steep run measured plus what the DEM can hide is within the limit.

A DEM grid spreads each change of grade over about one cell, so a steep run reads up to about a
cell shorter at each end inside the road (a 30 % ramp between flats: true 210 ft read 190 ft on
10-ft cells). A pass needs the longest run measured plus ``dem_blur_cells_count`` cells (one per
run end inside the road) within ``max_run_ft``; between the two it is ``review``, never ``pass``;
a run measured over the limit stays a violation. Margins and limits are read from the rulebook.
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
from shapely import affinity
from shapely.geometry import LineString

from geoconstraints.commands import check_harvest
from geoconstraints.geometry import terrain as tr
from geoconstraints.io.layers import load_layers
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rulebook.model import FindingRows
from geoconstraints.rules import harvest
from geoconstraints.units import M_PER_FT

RB = load_rulebook("vestal")
RULE = RB["HRV-010"]
K_US = 1200 / 3937 / M_PER_FT
"""International feet per US survey foot."""


def _road(length: float) -> gpd.GeoDataFrame:
    line = affinity.translate(LineString([(0.0, 0.0), (length, 0.0)]), X0, Y0)
    return gpd.GeoDataFrame({"id": ["R"]}, geometry=[line], crs=NY_FT)


def _ramp_dem(path: Path, start: float, run: float, cell: float) -> Path:
    """A 30 % ramp of ``run`` ft from ``start`` ft east between flats, cells of ``cell`` US survey feet,
    each cell the mean of a 1-ft grid inside it (as ``gdalwarp -r average`` makes a DEM)."""
    u0, v0, u1, v1 = -500.0, -500.0, 1500.0, 500.0
    nx, ny = math.ceil((u1 - u0) / cell), math.ceil((v1 - v0) / cell)
    k = round(cell)
    uc = u0 + cell / k * (np.arange(nx * k) + 0.5)
    z = 100 + 0.3 * np.clip(uc * K_US - start, 0, run)
    z = np.broadcast_to(z, (ny, nx * k)).reshape(ny, nx, k).mean(axis=2)
    with rasterio.open(path, "w", driver="GTiff", width=nx, height=ny, count=1, dtype="float64", crs=NY_FT,
                       transform=Affine(cell, 0, X0 + u0, 0, -cell, Y0 + v1)) as dst:
        dst.write(z, 1)
        dst.set_band_unit(1, "ft")
    return path


def _hrv010(dem: Path, length: float) -> gpd.GeoDataFrame:
    f = check_harvest(load_layers(haul_roads=_road(length), dem=dem), RB).findings
    return f[(f["rule_id"] == "HRV-010") & (f["subject_id"] == "R")]


def _margin(cell: float, ends: int = 2) -> float:
    return RULE.t("dem_blur_cells_count") * cell * ends / 2


def test_ramp_of_210_ft_on_10_ft_cells_is_review_not_pass(tmp_path) -> None:
    # true 210 ft at 30 % (over the 200-ft limit) reads about 190 ft on 10-ft cells: a pass before
    f = _hrv010(_ramp_dem(tmp_path / "dem.tif", 300.0, 210.0, 10.0), 1000.0)
    assert len(f) == 1, f
    row = f.iloc[0]
    assert row["status"] == "review"
    assert row["measured"] < RULE.t("max_run_ft") < row["measured"] + _margin(10.0)
    msg = row["message"]
    assert "can hide up to 20 ft" in msg and "check in the field" in msg and "dem_blur_cells_count" in msg


def _rows(start: float, measured: float, *, road: float = 500.0, cell: float = 10.0, joined: float = np.nan):
    """HRV-010's findings of one road with one steep run of ``measured`` ft from ``start``."""
    run = tr.Run(start, start + measured, measured, measured * 1.04, 30.0, 30.0,
                 exceeds=bool(measured > RULE.t("max_run_ft")), joined_ft=joined,
                 joined_with="haul_roads S" if np.isfinite(joined) else "")
    rt = tr.RoadTerrain("haul_roads", "R", road, runs=[run], evaluated_length_ft=road, max_grade_pct=30.0,
                        dem_cell_ft=cell, window_note="raw grades (no filter)")
    rows = FindingRows(RULE)
    harvest._road_grades(rows, rt, LineString([(0, 0), (road, 0)]), RULE)
    return rows.frame()


@pytest.mark.parametrize("delta,expected", [(-0.1, "pass"), (0.0, "pass"), (0.1, "review")])
def test_run_under_at_and_over_limit_less_margin(delta, expected) -> None:
    # a run inside the road (two blurred ends): pass up to max_run_ft - margin, review over it
    measured = RULE.t("max_run_ft") - _margin(10.0) + delta
    f = _rows(100.0, measured)
    assert f["status"].tolist() == [expected]
    assert f["measured"].iloc[0] == pytest.approx(measured)


@pytest.mark.parametrize("delta,expected", [(-0.1, "pass"), (0.0, "pass"), (0.1, "review")])
def test_run_reaching_the_road_end_has_one_blurred_end(delta, expected) -> None:
    # a run from 0 ft (the road's start): only its other end is blurred, half the margin
    measured = RULE.t("max_run_ft") - _margin(10.0, ends=1) + delta
    f = _rows(0.0, measured)
    assert f["status"].tolist() == [expected]
    # the same run inside the road: both ends blurred, review
    assert _rows(50.0, measured)["status"].tolist() == ["review"]


def test_joined_run_counts_both_ends() -> None:
    # a run from the road's start joined with another road's run: the stretch's ends are elsewhere
    joined = RULE.t("max_run_ft") - _margin(10.0, ends=1)
    assert _rows(0.0, 100.0, joined=joined)["status"].tolist() == ["review"]
    assert _rows(0.0, 100.0, joined=RULE.t("max_run_ft") - _margin(10.0))["status"].tolist() == ["pass"]


def test_violation_stays_violation() -> None:
    # over the limit by less than the margin, and clearly over it: a violation either way
    limit = RULE.t("max_run_ft")
    for measured in (limit + 0.1, limit + _margin(10.0) / 2, 2 * limit):
        f = _rows(100.0, measured)
        assert f["status"].tolist() == ["violation"], measured
        assert "check in the field" not in f["message"].iloc[0]


def test_ramp_clear_violation_on_dem(tmp_path) -> None:
    # 300 ft at 30 % on 10-ft cells: read about 280 ft, over the limit plus margin: a violation
    f = _hrv010(_ramp_dem(tmp_path / "dem.tif", 300.0, 300.0, 10.0), 1000.0)
    assert f["status"].tolist() == ["violation"]
    assert f["measured"].iloc[0] > RULE.t("max_run_ft") + _margin(10.0)
