"""Every threshold of every SWP rule (vestal and lockport), at, just under and just over its value.

Areas come from squares of known acreage (side sqrt(acres x 43,560) ft); the arithmetic is in each
comment. Layers are written in EPSG:2261 (US survey feet) near Vestal, and again in EPSG:32618
(metres) where a length or an area is involved: reprojected to the feet working CRS the areas move
by a few parts in 10,000 (grid scale factors), so the metre cases sit 1 % from a threshold. Flow
paths (SWP-002) are traced on synthetic DEMs whose paths are known cell by cell: a plane falling
0.1 ft per ft to the east, a bowl, a flat, a terrace, a DEM ending short of the water.
"""

from __future__ import annotations

import math
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import rasterio
from affine import Affine
from common import ACRE, NY_FT, UTM18, X0, Y0
from common import one_finding as one
from shapely.geometry import LineString, Point, box

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import check_stormwater
from geoconstraints.geometry.phasing import harvest_footprints
from geoconstraints.units import ft_per_unit

BOOKS = ("vestal", "lockport")
TOL = 1e-6  # acres


def side(acres: float) -> float:
    return math.sqrt(acres * ACRE)


def sq(acres: float, dx: float = 0.0, dy: float = 0.0):
    s = side(acres)
    return box(X0 + dx, Y0 + dy, X0 + dx + s, Y0 + dy + s)


def frame(rows: list[dict]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(pd.DataFrame(rows).drop(columns="geometry"), geometry=[r["geometry"] for r in rows],
                            crs=NY_FT)


def run(folder: Path, book: str | Path = "vestal", *, crs: str = NY_FT, dem: Path | None = None, **kw):
    layers = {k: kw.pop(k) for k in list(kw) if k in ("disturbance", "landings", "haul_roads", "impaired_waters")}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "plan.gpkg"
    path.unlink(missing_ok=True)
    for role, rows in layers.items():
        g = frame(rows)
        (g if crs == NY_FT else g.to_crs(crs)).to_file(path, layer=role, driver="GPKG")
    loaded = load_layers(path, dem=dem, dem_z_units="ft" if dem is not None else None,
                         primary=("disturbance", "landings", "haul_roads"))
    return check_stormwater(loaded, load_rulebook(book), **kw)


def d(fid: str, geom, start=None, stab=None, use="commercial") -> dict:
    return {"id": fid, "start": start, "stabilized": stab, "use": use, "geometry": geom}


# ------------------------------------------------------------------------------------------
# SWP-001 min_disturbed_acres = 1; lockport common_plan_aggregate_acres = 1

@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("acres, expect", [(0.999, "pass"), (1.0, "review"), (1.001, "review")])
def test_swp001_one_acre(tmp_path, book, acres, expect):
    # "one acre or more"; stated not part of a larger common plan. 1 acre = 43,560 sq ft = 4,046.9 m2.
    res = run(tmp_path, book, disturbance=[d("A", sq(acres))], larger_common_plan=False)
    assert one(res, "SWP-001")["status"] == expect
    assert one(res, "SWP-001")["measured"] == pytest.approx(acres, abs=TOL)


@pytest.mark.parametrize("acres, expect", [(0.99, "pass"), (1.01, "review")])
def test_swp001_one_acre_in_metres(tmp_path, acres, expect):
    res = run(tmp_path, crs=UTM18, disturbance=[d("A", sq(acres))], larger_common_plan=False)
    assert one(res, "SWP-001")["status"] == expect


@pytest.mark.parametrize("plan_acres, expect", [(0.999, "pass"), (1.0, "review"), (1.001, "review")])
def test_swp001_lockport_common_plan_aggregate(tmp_path, plan_acres, expect):
    # a 0.5-acre activity in a common plan disturbing `plan_acres` in the aggregate ("one acre or more")
    res = run(tmp_path, "lockport", disturbance=[d("A", sq(0.5))], larger_common_plan=plan_acres)
    assert one(res, "SWP-001")["status"] == expect


# ------------------------------------------------------------------------------------------
# SWP-002 impaired_water_distance_ft = 500 (152.4 m); max_flow_path_ft (on a DEM)

def water_at(x_local: float) -> list[dict]:
    return [{"id": "W1", "name": "Choconut Creek",
             "geometry": LineString([(X0 + x_local, Y0 - 200), (X0 + x_local, Y0 + 300)])}]


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("gap, expect", [(499.0, "review"), (500.0, "review"), (501.0, "not_evaluated")])
def test_swp002_screening_distance_without_a_dem(tmp_path, book, gap, expect):
    # the stream `gap` ft east of a 2-acre square: within 500 ft proximity stands in for discharge;
    # beyond it discharge is not analysed without a DEM: never pass
    s = side(2)
    res = run(tmp_path, book, disturbance=[d("A", sq(2))], impaired_waters=water_at(s + gap))
    f = one(res, "SWP-002")
    assert f["status"] == expect and f["measured"] == pytest.approx(gap, abs=1e-6)


@pytest.mark.parametrize("gap, expect", [(495.0, "review"), (505.0, "not_evaluated")])
def test_swp002_screening_distance_in_metres(tmp_path, gap, expect):
    # 495 ft = 150.9 m and 505 ft = 153.9 m against 500 ft = 152.4 m
    s = side(2)
    res = run(tmp_path, crs=UTM18, disturbance=[d("A", sq(2))], impaired_waters=water_at(s + gap))
    assert one(res, "SWP-002")["status"] == expect


def dem_tif(folder: Path, z_of, *, crs: str = NY_FT, cols: int = 80, rows: int = 40) -> Path:
    """A DEM of 10-ft cells (3.048 m in EPSG:32618) whose cell (row, col) centre lies at local feet
    u = -95 + 10 col east of X0 and v = 95 - 10 row north of Y0; z_of(u, v) gives feet."""
    u = -95.0 + 10.0 * np.arange(cols)
    v = 95.0 - 10.0 * np.arange(rows)
    z = z_of(u[None, :], v[:, None]) + np.zeros((rows, cols))
    path = folder / "dem.tif"
    if crs == NY_FT:
        x0, y0, cell = X0 - 100, Y0 + 100, 10.0
    else:
        o = gpd.GeoSeries([Point(X0, Y0)], crs=NY_FT).to_crs(crs).iloc[0]
        x0, y0, cell = o.x - 30.48, o.y + 30.48, 3.048
    with rasterio.open(path, "w", driver="GTiff", width=cols, height=rows, count=1, dtype="float64", crs=crs,
                       transform=Affine(cell, 0, x0, 0, -cell, y0), nodata=-9999.0) as dst:
        dst.write(z, 1)
    return path


def one_cell_site(crs: str) -> list[dict]:
    """The site: exactly the cell centred on local (5, 5) ft (x 0..10, y 0..10), in ``crs`` terms."""
    if crs == NY_FT:
        g = box(X0, Y0, X0 + 10, Y0 + 10)
    else:  # the same cell of the metre DEM, back in feet: the loader reprojects it there
        o = gpd.GeoSeries([Point(X0, Y0)], crs=NY_FT).to_crs(crs).iloc[0]
        g = gpd.GeoSeries([box(o.x, o.y, o.x + 3.048, o.y + 3.048)], crs=crs).to_crs(NY_FT).iloc[0]
    return [d("A", g, "2024-05-01", "2024-05-29")]


def water_metres(u_ft: float, crs: str) -> list[dict]:
    if crs == NY_FT:
        return water_at(u_ft)
    o = gpd.GeoSeries([Point(X0, Y0)], crs=NY_FT).to_crs(crs).iloc[0]
    x = o.x + u_ft * 0.3048
    line = gpd.GeoSeries([LineString([(x, o.y - 60), (x, o.y + 90)])], crs=crs).to_crs(NY_FT).iloc[0]
    return [{"id": "W1", "name": "Choconut Creek", "geometry": line}]


def rulebook_with(folder: Path, book: str, **values) -> Path:
    """A user rulebook extending ``book`` with SWP-002 thresholds / switches changed."""
    lines = [f"extends: {book}", f"rulebook: {book}-test", "rules:", "  - id: SWP-002"]
    thr = {k: v for k, v in values.items() if k.endswith("_ft")}
    sw = {k: v for k, v in values.items() if not k.endswith("_ft")}
    if thr:
        lines += ["    thresholds:"] + [f"      {k}: {v}" for k, v in thr.items()]
    if sw:
        lines += ["    switches:"] + [f"      {k}: {v}" for k, v in sw.items()]
    p = folder / f"{book}-test.yaml"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("crs", [NY_FT, UTM18])
@pytest.mark.parametrize("steps, expect", [
    # Water at u = 605 ft (a cell centre): its column and, widened by one cell, u = 595..615. The source
    # cell (u = 5) drains east one cell per step: it reaches u = 595 after 59 steps. A cell is 10 US survey
    # ft = 10.00002 ft in EPSG:2261 (59 steps = 590.0012 ft), and 3.048 m = 10 ft exactly in EPSG:32618
    # (590 ft). The site's east edge is 595 ft from the water: beyond the 500-ft screening distance.
    (59, "review"),  # at: max_flow_path_ft = the path's length: followed to the water
    (58, "not_evaluated"),  # under (580 ft): the path is cut off still draining east, not followed to its end
    (60, "review"),  # over (600 ft)
])
def test_swp002_flow_path_length_limit(tmp_path, crs, steps, expect):
    cell_ft = 10.0 * ft_per_unit(NY_FT) if crs == NY_FT else 3.048 / 0.3048
    limit = repr(steps * cell_ft)
    dem = dem_tif(tmp_path, lambda u, v: 1000.0 - 0.1 * u, crs=crs)
    rb = rulebook_with(tmp_path, "vestal", max_flow_path_ft=limit)
    res = run(tmp_path, rb, crs=crs, dem=dem, disturbance=one_cell_site(crs), impaired_waters=water_metres(605, crs))
    f = one(res, "SWP-002")
    assert f["status"] == expect, f["message"]
    if expect == "review":
        assert f["measured"] == pytest.approx(59 * cell_ft, rel=1e-9) and "reaches impaired water W1" in f["message"]
        assert f.geometry.geom_type == "LineString" and f.geometry.length == pytest.approx(590.0, rel=1e-3)
        assert res.derived["flow_paths"].iloc[0]["outcome"] == "target"
    else:
        assert f["measured"] == pytest.approx(58 * cell_ft, rel=1e-9) and f.geometry.geom_type in ("MultiPoint", "Point")
        assert "stopped at max_flow_path_ft = 580 ft" in f["message"] and "1 limit" in f["message"], f["message"]
        assert "no_discharge" not in f["message"]
        assert res.derived["flow_paths"].iloc[0]["outcome"] == "limit"


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("reading", ["no_discharge", "not_evaluated"])
def test_swp002_path_stopped_at_the_length_limit_is_never_pass(tmp_path, book, reading):
    # the plane falls east toward the water at u = 605; max_flow_path_ft = 400 stops the path at u = 405,
    # still running downhill: it was not followed to its end, so discharge is not shown either way and
    # undrained_path_end (a reading of closed depressions only) does not turn it into a pass
    dem = dem_tif(tmp_path, lambda u, v: 1000.0 - 0.1 * u)
    rb = rulebook_with(tmp_path, book, max_flow_path_ft=400.0, undrained_path_end=reading)
    res = run(tmp_path, rb, dem=dem, disturbance=one_cell_site(NY_FT), impaired_waters=water_at(605))
    f = one(res, "SWP-002")
    assert f["status"] == "not_evaluated", f["message"]
    assert "not followed to its end (stopped at max_flow_path_ft = 400 ft)" in f["message"], f["message"]
    assert "undrained_path_end" not in f["message"]


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("water_u, expect", [(3405.0, "review"), (8405.0, "not_evaluated")])
def test_swp002_shipped_one_mile_limit_on_a_plane_draining_to_the_water(tmp_path, book, water_u, expect):
    # the shipped max_flow_path_ft (5,280 ft) and undrained_path_end (no_discharge): a plane falling 2 %
    # east, no pits, the water 3,400 ft or 8,400 ft east of the site. The near water is reached (3,390 ft
    # of path: u = 5 to the widened water at u = 3,395); the far one lies beyond the mile the path is
    # followed, so the path is cut off still draining toward it: not_evaluated naming the limit, never pass
    dem = dem_tif(tmp_path, lambda u, v: 1000.0 - 0.02 * u, cols=900)
    res = run(tmp_path, book, dem=dem, disturbance=one_cell_site(NY_FT), impaired_waters=water_at(water_u))
    f = one(res, "SWP-002")
    assert f["status"] == expect, f["message"]
    if expect == "review":
        assert f["measured"] == pytest.approx(3390.0, abs=0.1) and "reaches impaired water W1" in f["message"]
    else:
        assert "stopped at max_flow_path_ft = 5,280 ft" in f["message"] and "limit" in f["message"], f["message"]
        assert f["measured"] <= 5280.0 * (1 + 1e-9)


def bowl_at(u0: float, v0: float, depth: float = 4.0):
    """The plane falling 0.1 ft per ft east, with the cell centred on local (u0, v0) `depth` ft lower: a
    closed depression `depth` - 1 ft deep (its spill point is its lowest neighbour, the next cell east,
    1 ft lower on the plane)."""
    return lambda u, v: 1000.0 - 0.1 * u - np.where((np.abs(u - u0) < 1) & (np.abs(v - v0) < 1), depth, 0.0)


@pytest.mark.parametrize("reading, expect", [("no_discharge", "pass"), ("not_evaluated", "not_evaluated")])
def test_swp002_closed_depression_follows_the_undrained_path_end_reading(tmp_path, reading, expect):
    # the path from the site (u = 5) runs east into a 3-ft-deep closed depression at u = 105 (4 ft below the
    # plane, whose next cell east is 1 ft lower: at least min_depression_depth_ft = 1 ft deep) and ends there,
    # inside the DEM and far short of max_flow_path_ft: the switch decides, and the limit is no part of it
    dem = dem_tif(tmp_path, bowl_at(105.0, 5.0))
    rb = rulebook_with(tmp_path, "vestal", undrained_path_end=reading)
    res = run(tmp_path, rb, dem=dem, disturbance=one_cell_site(NY_FT), impaired_waters=water_at(605))
    f = one(res, "SWP-002")
    assert f["status"] == expect, f["message"]
    assert f"undrained_path_end={reading}" in f["message"] and "1 pit" in f["message"]
    assert "closed depression at least 1 ft deep" in f["message"] and "max_flow_path_ft" not in f["message"]
    assert f["measured"] == pytest.approx(100.0, rel=1e-4)  # u = 5 to 105


def test_swp002_one_path_in_a_depression_and_one_stopped_at_the_limit_is_not_evaluated(tmp_path):
    # two disturbance polygons, one site: the north cell (v = 5) drains into the depression at u = 105; the
    # south cell (v = -195, 200 ft away, out of the depression's reach) runs east on the plane until
    # max_flow_path_ft = 400 stops it. One path not followed to its end: not_evaluated, not pass
    dem = dem_tif(tmp_path, bowl_at(105.0, 5.0))
    rb = rulebook_with(tmp_path, "vestal", max_flow_path_ft=400.0)
    site = [d("A", box(X0, Y0, X0 + 10, Y0 + 10), "2024-05-01", "2024-05-29"),
            d("B", box(X0, Y0 - 200, X0 + 10, Y0 - 190), "2024-05-01", "2024-05-29")]
    res = run(tmp_path, rb, dem=dem, disturbance=site, impaired_waters=water_at(605))
    f = one(res, "SWP-002")
    assert f["status"] == "not_evaluated", f["message"]
    assert "1 limit" in f["message"] and "1 pit" in f["message"] and "stopped at max_flow_path_ft" in f["message"]


def test_swp002_pit_flat_edge_and_terrace(tmp_path):
    site, water = one_cell_site(NY_FT), water_at(605)
    cases = {
        # a bowl around the cell at u = 205 (z rises 0.1 ft per ft from it): every path ends in the pit,
        # complete inside the DEM and never at the water -> pass (undrained_path_end=no_discharge)
        "pit": (lambda u, v: 1000.0 + 0.1 * np.hypot(u - 205.0, v - 5.0), "pass"),
        # a flat DEM: no cell has a lower neighbour and the flat reaches the DEM's edge -> runs off
        "flat": (lambda u, v: 1000.0 + 0.0 * u, "not_evaluated"),
        # the plane, but the DEM ends at u = 300 ft (30 columns), before the water: runs off the DEM
        "edge": (lambda u, v: 1000.0 - 0.1 * u, "not_evaluated"),
        # a valley (walls rising 0.5 ft per ft from v = 5) falling east, with a flat terrace on its floor
        # at u = 105..145 (z 989.5): the flat drains through its outlet at u = 145 and the path goes on
        # to the water: 590 ft (the 40-ft jump across the flat counted as a straight line)
        "terrace": (lambda u, v: np.where((np.abs(v - 5.0) < 1) & (u >= 104) & (u <= 146), 989.5,
                                          1000.0 - 0.1 * u + 0.5 * np.abs(v - 5.0)), "review"),
    }
    for name, (z_of, expect) in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        dem = dem_tif(folder, z_of, cols=30 if name == "edge" else 80)
        res = run(folder, dem=dem, disturbance=site, impaired_waters=water)
        f = one(res, "SWP-002")
        assert f["status"] == expect, (name, f["message"])
        if name == "pit":
            assert "closed depression" in f["message"] and "pit" in f["message"]
            assert f.geometry.geom_type in ("Point", "MultiPoint")
            pt = f.geometry if f.geometry.geom_type == "Point" else f.geometry.geoms[0]
            assert (pt.x - X0, pt.y - Y0) == pytest.approx((205.0, 5.0), abs=1e-6)  # the bottom of the bowl
        if name in ("flat", "edge"):
            assert "runs off the DEM" in f["message"]
        if name == "terrace":
            assert f["measured"] == pytest.approx(590.0, abs=0.01)


def test_swp002_lockport_conditions_abc_not_required_when_the_path_misses(tmp_path):
    # Lockport SWP-007 applies only under Condition A, B or C. 0.5 acre is under Condition C's 1 acre and
    # B's 5 acres; the water is 600 ft away and every path from the site ends in a bowl (z rising 0.1 ft per
    # ft from local (45, 45), inside the site) -> Condition A does not apply -> inspections not required
    dem = dem_tif(tmp_path, lambda u, v: 1000.0 + 0.1 * np.hypot(u - 45.0, v - 45.0), cols=80)
    res = run(tmp_path, "lockport", dem=dem, disturbance=[d("A", sq(0.5), "2024-05-01", "2024-05-29")],
              impaired_waters=water_at(side(0.5) + 600))
    f2 = one(res, "SWP-002")
    assert f2["status"] == "pass" and "pit" in f2["message"], f2["message"]
    f7 = one(res, "SWP-007", "schedule")
    assert f7["status"] == "pass" and "not required" in f7["message"]


def test_swp002_lockport_conditions_abc_undecided_when_the_path_is_stopped_at_the_limit(tmp_path):
    # the same 0.5-acre site (neither B nor C), but the plane falls EAST, toward the water 600 ft away, and
    # max_flow_path_ft = 300 stops every path still draining toward it: Condition A is not decided, so
    # SWP-007 cannot say the inspections are not required
    dem = dem_tif(tmp_path, lambda u, v: 1000.0 - 0.1 * u, cols=90)
    rb = rulebook_with(tmp_path, "lockport", max_flow_path_ft=300.0)
    res = run(tmp_path, rb, dem=dem, disturbance=[d("A", sq(0.5), "2024-05-01", "2024-05-29")],
              impaired_waters=water_at(side(0.5) + 600))
    f2 = one(res, "SWP-002")
    assert f2["status"] == "not_evaluated" and "stopped at max_flow_path_ft = 300 ft" in f2["message"], f2["message"]
    f7 = one(res, "SWP-007", "schedule")
    assert f7["status"] == "not_evaluated" and "not required" not in f7["message"], f7["message"]
    assert "Condition A (" in f7["message"] and "max_flow_path_ft" in f7["message"]


# ------------------------------------------------------------------------------------------
# SWP-003 min_acres = 5; SWP-004 min_acres = 1, max_acres = 5

@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("acres, b, c", [
    (0.999, "pass", "pass"),    # under 1 acre: neither B nor C
    (1.0, "pass", "review"),    # C: "between 1 and 5 acres", 1 included
    (1.001, "pass", "review"),
    (4.999, "pass", "review"),
    (5.0, "review", "pass"),    # B: "5 acres or more"; C gives way to B
    (5.001, "review", "pass"),
])
def test_swp003_swp004_bounds(tmp_path, book, acres, b, c):
    res = run(tmp_path, book, disturbance=[d("A", sq(acres))])
    assert one(res, "SWP-003")["status"] == b and one(res, "SWP-004")["status"] == c


@pytest.mark.parametrize("acres, b, c", [(0.99, "pass", "pass"), (1.01, "pass", "review"), (4.95, "pass", "review"),
                                         (5.05, "review", "pass")])
def test_swp003_swp004_in_metres(tmp_path, acres, b, c):
    res = run(tmp_path, crs=UTM18, disturbance=[d("A", sq(acres))])
    assert one(res, "SWP-003")["status"] == b and one(res, "SWP-004")["status"] == c


# ------------------------------------------------------------------------------------------
# SWP-005 max_concurrent_acres = 5, landings and haul roads counted

@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("acres, expect", [(4.999, "pass"), (5.0, "pass"), (5.001, "violation")])
def test_swp005_five_acres_at_once(tmp_path, book, acres, expect):
    # one polygon of `acres` disturbed 05-01..05-10 and a 3-acre one far away 05-10..05-20: never at once,
    # peak = `acres` ("not more than five acres")
    dist = [d("A", sq(acres), "2024-05-01", "2024-05-10"), d("B", sq(3, dx=2000), "2024-05-10", "2024-05-20")]
    f = one(run(tmp_path, book, disturbance=dist), "SWP-005", "project")
    assert f["status"] == expect and f["measured"] == pytest.approx(acres, abs=TOL)


@pytest.mark.parametrize("acres, expect", [(4.95, "pass"), (5.05, "violation")])
def test_swp005_in_metres(tmp_path, acres, expect):
    res = run(tmp_path, crs=UTM18, disturbance=[d("A", sq(acres), "2024-05-01", "2024-05-10")])
    assert one(res, "SWP-005", "project")["status"] == expect


def test_swp005_counts_landings_and_haul_roads(tmp_path):
    # Disturbance 4.9 acres (side s), dated 05-01..05-31. A 100 x 100 ft landing (10,000 sq ft =
    # 0.229568 acre) touching its east edge, and a 500-ft haul road from the landing (x 12 ft = 6,000 sq
    # ft = 0.137741 acre). Undated: assumed disturbed 05-01..05-31 -> 4.9 + 0.229568 + 0.137741 =
    # 5.267309 acres > 5: violation, and the finding says they were assumed.
    s = side(4.9)
    dist = [d("A", sq(4.9), "2024-05-01", "2024-05-31")]
    landing = [{"id": "L1", "geometry": box(X0 + s, Y0, X0 + s + 100, Y0 + 100)}]
    road = [{"id": "H1", "geometry": LineString([(X0 + s + 100, Y0 + 50), (X0 + s + 600, Y0 + 50)])}]
    res = run(tmp_path, disturbance=dist, landings=landing, haul_roads=road)
    f = one(res, "SWP-005", "project")
    assert f["status"] == "violation"
    assert f["measured"] == pytest.approx(4.9 + 10_000 / ACRE + 6_000 / ACRE, abs=TOL)
    assert "landing L1, haul road H1 carry no start / stabilized date and are assumed disturbed" in f["message"]
    assert "2024-05-01 to 2024-05-31" in f["message"]
    # dated landings and roads, disturbed after the disturbance is stabilised: peak 4.9 acres -> pass
    landing[0].update(start="2024-06-01", stabilized="2024-06-10")
    road[0].update(start="2024-06-01", stabilized="2024-06-10")
    res = run(tmp_path, disturbance=dist, landings=landing, haul_roads=road)
    f = one(res, "SWP-005", "project")
    assert f["status"] == "pass" and f["measured"] == pytest.approx(4.9, abs=TOL)
    assert "assumed" not in f["message"]
    # a project with no dates at all: not_evaluated, never pass (even 4.9 + 0.37 acres could be at once)
    res = run(tmp_path, disturbance=[d("A", sq(4.9))], landings=[{"id": "L1", "geometry": landing[0]["geometry"]}])
    f = one(res, "SWP-005", "project")
    assert f["status"] == "not_evaluated" and "no start / stabilized dates" in f["message"]
    # a harvest plan alone, undated: not_evaluated as well
    res = run(tmp_path, landings=[{"id": "L1", "geometry": landing[0]["geometry"]}])
    assert one(res, "SWP-005")["status"] == "not_evaluated"


# ------------------------------------------------------------------------------------------
# SWP-006 haul_road_width_ft = 12, default_landing_area_sqft = 10,000

@pytest.mark.parametrize("width", [11.99, 12.0, 12.01])
def test_swp006_haul_road_width(width):
    # a straight 1,000-ft road is a strip of exactly 1,000 x width sq ft (flat ends)
    road = gpd.GeoDataFrame({"feature_id": ["H"]}, geometry=[LineString([(0, 0), (1000, 0)])], crs=NY_FT)
    fp = harvest_footprints(None, road, haul_road_width_ft=width, default_landing_area_sqft=10_000)
    assert fp["area_sqft"].iloc[0] == pytest.approx(1000 * width, abs=1e-6)


@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("extra_ft, expect", [(-1.0, "pass"), (0.0, "review"), (1.0, "review")])
def test_swp006_footprints_reach_one_acre(tmp_path, book, extra_ft, expect):
    # A point landing (a disc of default_landing_area_sqft = 10,000 sq ft) and a haul road far from it of
    # length L (x 12 ft): 10,000 + 12 L = 43,560 sq ft = 1 acre when L = 33,560 / 12 = 2,796.67 ft.
    # One foot shorter: 43,548 sq ft, under 1 acre; one foot longer: 43,572 sq ft. Under 1 acre the point
    # landing at max_point_landing_area_sqft (43,560) would reach it: not_evaluated, not pass
    # (tests/test_stormwater_audit23.py); the same landing drawn as a 100 x 100 ft polygon passes where the
    # road's width is no guess either (max_haul_road_width_ft = haul_road_width_ft; at the shipped 30 ft the
    # road alone is 83,870 sq ft: not_evaluated, tests/test_stormwater_audit24.py).
    length = 33_560 / 12 + extra_ft
    road = [{"id": "H1", "geometry": LineString([(X0 + 500, Y0), (X0 + 500 + length, Y0)])}]
    exact = tmp_path / f"{book}-road-12.yaml"
    exact.write_text(f"extends: {book}\nrules:\n  - id: SWP-006\n    thresholds: {{max_haul_road_width_ft: 12}}\n")
    for landing, status in (([{"id": "L1", "geometry": Point(X0, Y0)}], "not_evaluated" if expect == "pass" else expect),
                            ([{"id": "L1", "geometry": box(X0 - 50, Y0 - 50, X0 + 50, Y0 + 50)}], expect)):
        res = run(tmp_path, exact, landings=landing, haul_roads=road, larger_common_plan=False)
        f = one(res, "SWP-001")
        assert f["status"] == status and f["measured"] * ACRE == pytest.approx(43_560 + 12 * extra_ft, abs=1e-4)


# ------------------------------------------------------------------------------------------
# SWP-007 inspection_interval_days = 7, storm_threshold_in = 0.5, inspection_within_hours = 24,
# wet_day_min_in = 0.01

@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("gap, expect", [(6, "pass"), (7, "pass"), (8, "violation")])
def test_swp007_gap_between_inspections(tmp_path, book, gap, expect):
    # 6-acre project (Condition B: inspections required in both towns) 2024-05-01..05-21; inspections on
    # 05-01, then 05-01 + gap, then every 7 days after that to the end: only the one gap varies
    start = pd.Timestamp("2024-05-01")
    dates = [start, start + pd.Timedelta(days=gap)]
    while dates[-1] + pd.Timedelta(days=7) <= pd.Timestamp("2024-05-21"):
        dates.append(dates[-1] + pd.Timedelta(days=7))
    if pd.Timestamp("2024-05-21") - dates[-1] > pd.Timedelta(days=7):
        dates.append(pd.Timestamp("2024-05-21"))
    log = pd.DataFrame({"date": [x.strftime("%Y-%m-%d") for x in dates], "inspector": "QP", "qualified": "yes"})
    res = run(tmp_path, book, disturbance=[d("A", sq(6), "2024-05-01", "2024-05-21")], inspection_log=log)
    f = res.findings[res.findings["rule_id"] == "SWP-007"]
    second = (start + pd.Timedelta(days=gap)).strftime("%Y-%m-%d")
    label = f"inspection {second}" if expect == "pass" else f"gap from 2024-05-01 to {second}"
    row = f[f["subject_id"] == label]
    assert len(row) == 1 and row.iloc[0]["status"] == expect and row.iloc[0]["measured"] == gap
    assert (f["status"] == "violation").sum() == (expect == "violation")


@pytest.mark.parametrize("rain, storm", [(0.49, False), (0.5, True), (0.51, True)])
def test_swp007_storm_threshold(tmp_path, rain, storm):
    # one day of `rain` in on 05-10: a storm event produces 0.5 in or more
    vals = [0.0] * 31
    vals[9] = rain
    rainfall = pd.DataFrame({"date": pd.date_range("2024-05-01", periods=31).strftime("%Y-%m-%d"), "precip_in": vals})
    res = run(tmp_path, disturbance=[d("A", sq(2), "2024-05-01", "2024-05-29")], rainfall=rainfall)
    sch = res.tables["inspections"]
    assert bool((sch["reason"] == "storm").sum() == 1) == storm


@pytest.mark.parametrize("days_after, expect", [(0, "pass"), (1, "pass"), (2, "violation")])
def test_swp007_within_24_hours(tmp_path, days_after, expect):
    # storm of 0.8 in on 05-10; daily data read as "on the storm day or the next day" (24 hours)
    vals = [0.0] * 31
    vals[9] = 0.8
    rainfall = pd.DataFrame({"date": pd.date_range("2024-05-01", periods=31).strftime("%Y-%m-%d"), "precip_in": vals})
    when = (pd.Timestamp("2024-05-10") + pd.Timedelta(days=days_after)).strftime("%Y-%m-%d")
    log = pd.DataFrame({"date": ["2024-05-01", "2024-05-08", when, "2024-05-15", "2024-05-22", "2024-05-29"],
                        "inspector": "QP", "qualified": "yes"})
    res = run(tmp_path, disturbance=[d("A", sq(2), "2024-05-01", "2024-05-29")], rainfall=rainfall, inspection_log=log)
    assert one(res, "SWP-007", "storm of 2024-05-10")["status"] == expect


@pytest.mark.parametrize("middle, storm", [(0.009, False), (0.01, True), (0.011, True)])
def test_swp007_wet_day_minimum(tmp_path, middle, storm):
    # consecutive_wet_days: 0.25, `middle`, 0.25 in on 05-09..05-11. A day of at least 0.01 in is wet and
    # joins the run (0.25 + 0.01 + 0.25 = 0.51 in >= 0.5: a storm); 0.009 in is dry and splits it into
    # two runs of 0.25 in (no storm).
    rb = tmp_path / "wet.yaml"
    rb.write_text("extends: vestal\nrulebook: vestal-wet\nrules:\n  - id: SWP-007\n    switches:\n"
                  "      storm_event: consecutive_wet_days\n")
    vals = [0.0] * 31
    vals[8], vals[9], vals[10] = 0.25, middle, 0.25
    rainfall = pd.DataFrame({"date": pd.date_range("2024-05-01", periods=31).strftime("%Y-%m-%d"), "precip_in": vals})
    res = run(tmp_path, rb, disturbance=[d("A", sq(2), "2024-05-01", "2024-05-29")], rainfall=rainfall)
    assert bool((res.tables["inspections"]["reason"] == "storm").sum() == 1) == storm


# ------------------------------------------------------------------------------------------
# SWP-008: checklist numbers (info only: nothing to pass or fail)

@pytest.mark.parametrize("book, texts", [
    ("vestal", ["1 inch = 100 ft", "reduced by 50 %", "48 hours' notice", "up to $350", "$700 to $1,000",
                "within 5 years", "6 months"]),
    ("lockport", ["1 inch = 100 ft", "reduced by 50 %", "48 hours' notice", "45 days to recommendation",
                  "45 days to decision", "15 days"]),
])
def test_swp008_checklist_numbers(tmp_path, book, texts):
    f = run(tmp_path, book, disturbance=[d("A", sq(2))]).findings
    msgs = " ".join(f.loc[f["rule_id"] == "SWP-008", "message"])
    assert set(f.loc[f["rule_id"] == "SWP-008", "status"]) == {"info"}
    for t in texts:
        assert t in msgs, t


# SWP-002 min_depression_depth_ft = 1: a closed depression shallower than it is filled before tracing
@pytest.mark.parametrize("book", BOOKS)
@pytest.mark.parametrize("crs", [NY_FT, UTM18])
@pytest.mark.parametrize("depth, expect", [
    # The plane falling east 1 ft per 10-ft cell, with the cell at u = 205 on the path's row lowered to
    # `depth` ft below its spill point, its east neighbour (z = 1000 - 21.5 = 978.5): a one-cell pit.
    (0.99, "review"),  # under: filled to 978.5, it drains east through its spill point; the path reaches the water
    (1.0, "pass"),     # at: a closed depression, the path ends in it (undrained_path_end=no_discharge)
    (1.01, "pass"),    # over: the same
])
def test_swp002_min_depression_depth(tmp_path, book, crs, depth, expect):
    def z_of(u, v):
        z = 1000.0 - 0.1 * u + 0.0 * v
        return np.where((np.abs(u - 205.0) < 1) & (np.abs(v - 5.0) < 1), 978.5 - depth, z)

    dem = dem_tif(tmp_path, z_of, crs=crs)
    res = run(tmp_path, book, crs=crs, dem=dem, disturbance=one_cell_site(crs), impaired_waters=water_metres(605, crs))
    f = one(res, "SWP-002")
    assert f["status"] == expect, f["message"]
    if expect == "review":
        assert "1 closed depression(s) shallower than 1 ft (min_depression_depth_ft) filled first" in f["message"]
        assert "reaches impaired water W1" in f["message"]
    else:
        pt = f.geometry if f.geometry.geom_type == "Point" else f.geometry.geoms[0]
        want = Point(X0 + 205.0, Y0 + 5.0)  # the bottom of the pit: the centre of the lowered cell
        if crs != NY_FT:  # the metre grid's cell, laid out along its own axes from the origin
            o = gpd.GeoSeries([Point(X0, Y0)], crs=NY_FT).to_crs(crs).iloc[0]
            want = gpd.GeoSeries([Point(o.x + 205 * 0.3048, o.y + 5 * 0.3048)], crs=crs).to_crs(NY_FT).iloc[0]
        assert (pt.x, pt.y) == pytest.approx((want.x, want.y), abs=0.05)
        assert "filled first" not in f["message"]
