"""The whole-plan engines moved out of the harvest context: geometry.buffers.build_buffers and
geometry.terrain.roads_terrain / road_table / grade_runs_layer / plan_contours, on hand-made
inputs with values worked out by hand (rule-agnostic: every number is an argument)."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import rasterio
from rasterio.transform import from_origin
from shapely.geometry import LineString, Point, box

from geoconstraints.geometry.buffers import BUFFER_KINDS, build_buffers
from geoconstraints.geometry.terrain import (
    grade_runs_layer,
    plan_contours,
    road_table,
    roads_terrain,
    water_bars_layer,
)
from geoconstraints.io.dem import open_dem

CRS = "EPSG:2261"
X0, Y0 = 964_988.0, 758_256.0


def gdf(ids, geoms, **cols):
    return gpd.GeoDataFrame({"feature_id": ids, **cols}, geometry=list(geoms), crs=CRS)


def _s(width=50.0, **kw):
    return {"width_ft": width, "clip_margin_ft": 500.0, "rule_id": "R-001", **kw}


def test_build_buffers_kinds_asked_for_and_missing_inputs() -> None:
    plan = [gdf(["H"], [box(X0, Y0, X0 + 1000, Y0 + 1000)])]
    streams = gdf(["S1", "S2"], [LineString([(X0 + 200, Y0 - 100), (X0 + 200, Y0 + 1100)]),
                                 LineString([(X0 + 800, Y0 - 100), (X0 + 800, Y0 + 1100)])],
                  kind=["perennial", "intermittent"])
    settings = {"stream": _s(include_intermittent=False), "road": _s(),
                "property_line": _s(100.0, districts=["RA-1"], reading="c", touch_tolerance_ft=1.0),
                "dwelling": _s(100.0, districts=["RR"])}
    b = build_buffers({"streams": streams}, settings, plan=plan, crs=CRS)
    # only S1 (perennial): 100 ft wide along the 1,200 ft line within 500 ft of the plan, caps clipped by
    # the plan extent grown by 500 ft (v -500..1500): the whole line plus both round caps
    assert b.strips["source_id"].tolist() == ["S1"] and b.strips.crs.to_epsg() == 2261
    assert b.strips.area.iloc[0] == pytest.approx(100 * 1200 + np.pi * 50**2, rel=2e-3)
    assert b.missing == {"road": "no roads or row layer", "property_line": "no parcels layer",
                         "dwelling": "no dwellings layer"}
    assert list(b.missing) == [k for k in BUFFER_KINDS if k in b.missing]
    assert "perennial streams only" in b.notes["stream"]
    # a kind not asked for is neither built nor listed as missing (the caller says why)
    only = build_buffers({"streams": streams}, {"road": _s()}, plan=plan, crs=CRS)
    assert len(only.strips) == 0 and only.missing == {"road": "no roads or row layer"} and only.notes == {}
    both = build_buffers({"streams": streams}, {"stream": _s(include_intermittent=True)}, plan=plan, crs=CRS)
    assert sorted(both.strips["source_id"]) == ["S1", "S2"]


def _plane_dem(path, grade_pct: float):
    """z = 1000 + grade * u (feet) on 5-ft cells over u -50..1100, v -50..1100."""
    cell, w, h = 5.0, 230, 230
    u = -50 + cell * (np.arange(w) + 0.5)
    z = np.tile(1000 + grade_pct / 100 * u, (h, 1))
    with rasterio.open(path, "w", driver="GTiff", width=w, height=h, count=1, dtype="float64", crs=CRS,
                       transform=from_origin(X0 - 50, Y0 + 1100, cell, cell)) as dst:
        dst.write(z, 1)
        dst.set_band_unit(1, "ft")
    return open_dem(path)


def test_roads_terrain_runs_bars_and_table(tmp_path) -> None:
    dem = _plane_dem(tmp_path / "p.tif", 30.0)
    roads = {"haul_roads": gdf(["UP", "ACROSS"], [LineString([(X0, Y0 + 100), (X0 + 300, Y0 + 100)]),
                                                  LineString([(X0 + 500, Y0), (X0 + 500, Y0 + 1000)])]),
             "skid_trails": gdf(["OFF"], [LineString([(X0 + 1000, Y0 + 500), (X0 + 1300, Y0 + 500)])]),
             "nothing": None}
    grade = {"max_grade_pct": 25.0, "max_run_ft": 200.0, "smoothing_window_ft": 0.0, "run_length": "horizontal"}
    bars = {"table": [{"min_grade_pct": 2, "max_grade_pct": None, "min_spacing_ft": 100, "max_spacing_ft": 100}],
            "min_grade_pct": 2.0, "spacing_end": "shorter", "between_bands": "steeper"}
    t = roads_terrain(dem, roads, CRS, grade=grade, water_bars=bars)
    assert list(t) == [("haul_roads", "UP"), ("haul_roads", "ACROSS"), ("skid_trails", "OFF")]
    up = t[("haul_roads", "UP")]
    # 300 ft at 30 %: one run over the whole road, longer than 200 ft; bars every 100 ft short of the end
    assert [(r.length_ft, r.exceeds) for r in up.runs] == [(pytest.approx(300.0, abs=0.01), True)]
    assert up.max_grade_pct == pytest.approx(30.0, abs=1e-3) and up.mean_grade_pct == pytest.approx(30.0, abs=1e-3)
    assert up.water_bars["dist_ft"].tolist() == pytest.approx([100.0, 200.0])
    across = t[("haul_roads", "ACROSS")]  # along the contour: flat, no run, no bar
    assert across.runs == [] and across.max_grade_pct == pytest.approx(0.0) and len(across.water_bars) == 0
    off = t[("skid_trails", "OFF")]  # DEM ends at u=1100: 200 ft off it (+- one cell), never a pass
    assert not off.fully_evaluated and sum(g.length_ft for g in off.gaps) == pytest.approx(200.0, abs=5)
    assert off.water_bars is None  # skid trails get no water bars
    table = road_table(t).set_index("road_id")
    assert table.loc["UP", ["steep_runs", "runs_over_limit", "water_bars"]].tolist() == [1, 1, 2]
    assert table["water_bars"].dtype == "Int64"  # a count: integers, blank where none are placed
    assert table.loc["OFF", "water_bars"] is pd.NA and table.loc["ACROSS", "water_bars"] == 0
    runs = grade_runs_layer(t, CRS)
    # every steep stretch, flagged: UP's 300 ft (over the limit) and the ~100 ft of OFF on the DEM (not)
    assert runs["road_id"].tolist() == ["UP", "OFF"] and runs["exceeds"].tolist() == [True, False]
    assert runs.geometry.length.tolist() == pytest.approx([300.0, 100.0], abs=5)
    wb = water_bars_layer(t, CRS)
    assert wb["road_id"].tolist() == ["UP", "UP"]
    assert wb.geometry.iloc[0].distance(Point(X0 + 100, Y0 + 100)) < 1e-3  # US survey ft vs ft: 2e-6 of 100


def test_roads_terrain_without_dem_says_so() -> None:
    t = roads_terrain(None, {"haul_roads": gdf(["R"], [LineString([(0, 0), (300, 400)])])}, CRS)
    rt = t[("haul_roads", "R")]
    # 500 US survey feet = 500.001 ft (international feet, as every length of the profile)
    assert rt.length_ft == pytest.approx(500.001, abs=1e-6)
    assert (rt.error, rt.runs, rt.fully_evaluated) == ("no DEM given (--dem)", [], False)
    assert road_table(t)["note"].tolist() == ["no DEM given (--dem)"]
    assert len(grade_runs_layer(t, CRS)) == 0 and len(water_bars_layer(t, CRS)) == 0


def test_plan_contours_clipped_and_empty_off_the_dem(tmp_path) -> None:
    dem = _plane_dem(tmp_path / "p.tif", 10.0)
    ext = box(X0 + 95, Y0 + 95, X0 + 305, Y0 + 305)
    c = plan_contours(dem, ext, 10.0, CRS)
    # z = 1000 + 0.1 u; the cells read cover u 95..305 (centres 97.5..302.5): levels 1010..1030 at
    # u = 100, 200, 300, each running between the cell centres read in v (97.5..302.5)
    assert c["elev_ft"].tolist() == [1010.0, 1020.0, 1030.0]
    assert [g.bounds[0] - X0 for g in c.geometry] == pytest.approx([100.0, 200.0, 300.0], abs=1e-6)
    assert [g.length for g in c.geometry] == pytest.approx([205.0, 205.0, 205.0])
    assert len(plan_contours(dem, box(X0 + 5000, Y0, X0 + 6000, Y0 + 100), 10.0, CRS)) == 0
    assert len(plan_contours(None, ext, 10.0, CRS)) == 0 and len(plan_contours(dem, None, 10.0, CRS)) == 0


def test_build_buffers_keeps_possible_strips_apart() -> None:
    # D1 in the RR parcel makes a strip; D2 in the parcel without a zoning value makes a possible one
    plan = [gdf(["H"], [box(X0, Y0, X0 + 1000, Y0 + 1000)])]
    parcels = gdf(["P1", "P2"], [box(X0 - 200, Y0 - 200, X0 + 500, Y0 + 1200), box(X0 + 500, Y0 - 200, X0 + 1200,
                                                                                   Y0 + 1200)], zoning=["RR", None])
    dw = gdf(["D1", "D2"], [Point(X0 + 200, Y0 + 500), Point(X0 + 800, Y0 + 500)])
    b = build_buffers({"parcels": parcels, "dwellings": dw}, {"dwelling": _s(100.0, districts=["RR"])}, plan=plan,
                      crs=CRS)
    assert b.strips["source_id"].tolist() == ["D1"] and b.possible["source_id"].tolist() == ["D2"]
    assert b.possible.crs.to_epsg() == 2261 and b.missing == {}


def test_road_terrain_window_from_the_cell_size_and_net_grade(tmp_path) -> None:
    # 5-ft (US survey) cells: 3 cells = 15.00003 ft, narrower than a 20-ft window; 10 % plane: the
    # steepest net grade of any stretch the water-bar walk weighs is 10 %
    dem = _plane_dem(tmp_path / "p.tif", 10.0)
    grade = {"max_grade_pct": 25.0, "max_run_ft": 200.0, "smoothing_window_ft": 20.0, "smoothing_window_cells": 3,
             "run_length": "horizontal"}
    bars = {"table": [{"min_grade_pct": 2, "max_grade_pct": None, "min_spacing_ft": 100, "max_spacing_ft": 100}],
            "min_grade_pct": 2.0, "spacing_end": "shorter", "between_bands": "steeper"}
    t = roads_terrain(dem, {"haul_roads": gdf(["UP"], [LineString([(X0, Y0 + 100), (X0 + 300, Y0 + 100)])])}, CRS,
                      grade=grade, water_bars=bars)
    up = t[("haul_roads", "UP")]
    assert up.window_ft == 20.0 and up.window_note == "running median of the grades over 20.0 ft"
    assert up.steepest_net_grade_pct == pytest.approx(10.0 / 1.000002, rel=1e-6)  # z ft over ftUS
    wide = dict(grade, smoothing_window_cells=5)  # 5 cells of 5.00001 ft: 25.00005 ft > 20 ft
    up = roads_terrain(dem, {"haul_roads": gdf(["UP"], [LineString([(X0, Y0 + 100), (X0 + 300, Y0 + 100)])])}, CRS,
                       grade=wide)[("haul_roads", "UP")]
    assert up.window_ft == pytest.approx(25.0, rel=1e-5) and "5 DEM cells of 5.0 ft" in up.window_note


def test_roads_csv_counts_are_integers_and_never_more_evaluated_than_long(tmp_path) -> None:
    # The sample's S-3 is a 350 x 350 US survey ft diagonal: 494.9747 ftUS = 494.9757 ft. Before, roads.csv had
    # length_ft 494.97 (CRS units) and evaluated_length_ft 494.98 (feet, the profile's), and water_bars 2.0.
    from geoconstraints.output.files import write_csv

    dem = _plane_dem(tmp_path / "p.tif", 30.0)
    diag = LineString([(X0 + 100, Y0 + 100), (X0 + 450, Y0 + 450)])
    roads = {"haul_roads": gdf(["UP"], [LineString([(X0, Y0 + 100), (X0 + 300, Y0 + 100)])]),
             "skid_trails": gdf(["S-3"], [diag])}
    bars = {"table": [{"min_grade_pct": 2, "max_grade_pct": None, "min_spacing_ft": 100, "max_spacing_ft": 100}],
            "min_grade_pct": 2.0, "spacing_end": "shorter", "between_bands": "steeper"}
    t = roads_terrain(dem, roads, CRS, grade={"max_grade_pct": 25.0, "max_run_ft": 200.0}, water_bars=bars)
    s3 = t[("skid_trails", "S-3")]
    assert s3.fully_evaluated and s3.length_ft == pytest.approx(494.97474683 * 1.000002, abs=1e-6)
    assert s3.evaluated_length_ft <= s3.length_ft and s3.evaluated_length_ft == pytest.approx(s3.length_ft)
    write_csv(road_table(t), tmp_path / "roads.csv")
    text = (tmp_path / "roads.csv").read_text().splitlines()
    assert text[1].startswith("haul_roads,UP,300.0,300.0,") and text[1].endswith(",2,")  # 2 water bars, not 2.0
    assert text[2].startswith("skid_trails,S-3,494.98,494.98,") and text[2].endswith(",,")  # none asked for: blank
    back = pd.read_csv(tmp_path / "roads.csv")
    assert (back["evaluated_length_ft"] <= back["length_ft"]).all()
