"""Benchmark: HRV-026 (access points onto public roads) with a county streets file.

The sample plan (``data/sample/vestal_sample.gpkg``) gets a synthetic county streets layer:
its 11 sample roads plus N random winding streets (9,303 by default, the size of a county
centre-line file) spread over a 30 x 30 mile square around the plan. Timed:

* whole layer: the buffer of the union of every road (what HRV-026 drew before it cut the
  roads to the haul roads' neighbourhood);
* clipped: the check as it is, which keeps only the roads within twice the snap tolerance of a
  haul road and cuts them to the haul roads' bounding box grown by that margin.

Both give the same access points (asserted). Run from the repository root::

    python benchmarks/bench_access_points.py            # 9,303 streets
    python benchmarks/bench_access_points.py --streets 2000

Measured on the project machine (2 cores, 2026-12), 9,314 roads (186,226 vertices): whole layer
18.9 s, clipped 0.004 s, the same 3 access points; the whole ``check_harvest`` of the sample
plan with that roads layer (no DEM) takes 0.6 s. This is not a test: it prints timings.
"""

from __future__ import annotations

import argparse
import time

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geoconstraints.commands import harvest_context
from geoconstraints.io.layers import Layers, load_layers
from geoconstraints.io.sample import sample_path
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rules.harvest import check_access_points

MILE = 5280.0


def county_streets(n: int, centre: tuple[float, float], crs, seed: int = 1) -> gpd.GeoDataFrame:
    """``n`` winding streets of 20 vertices, 500 to 4,000 ft long, over 30 x 30 miles."""
    rng = np.random.default_rng(seed)
    start = np.column_stack([centre[0] + rng.uniform(-15, 15, n) * MILE, centre[1] + rng.uniform(-15, 15, n) * MILE])
    heading = rng.uniform(0, 2 * np.pi, n)[:, None] + np.cumsum(rng.normal(0, 0.3, (n, 19)), axis=1)
    step = rng.uniform(500, 4000, n)[:, None] / 19
    xy = np.concatenate([start[:, None, :], start[:, None, :] + np.cumsum(
        np.stack([step * np.cos(heading), step * np.sin(heading)], axis=2), axis=1)], axis=1)
    lines = shapely.linestrings(xy)
    return gpd.GeoDataFrame({"feature_id": [f"C{i}" for i in range(n)], "row_width_ft": np.nan},
                            geometry=lines, crs=crs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--streets", type=int, default=9303)
    n = ap.parse_args().streets
    layers = load_layers(sample_path("vestal_sample.gpkg"))
    rulebook = load_rulebook("vestal")
    rule = rulebook["HRV-026"]
    hr = layers.get_layer("haul_roads")
    cx, cy = shapely.centroid(shapely.union_all(hr.geometry.values)).coords[0]
    roads = pd.concat([layers.get_layer("roads"), county_streets(n, (cx, cy), layers.crs)], ignore_index=True)
    frames = {**layers.frames, "roads": gpd.GeoDataFrame(roads, geometry="geometry", crs=layers.crs)}
    big = Layers(frames=frames, crs=layers.crs, dem=None)
    print(f"{len(roads):,} roads, {shapely.get_num_coordinates(roads.geometry.values).sum():,} vertices")

    t = time.perf_counter()
    ctx = harvest_context(big, rulebook)
    built = time.perf_counter() - t
    t = time.perf_counter()
    f = check_access_points(ctx, rule)
    clipped = time.perf_counter() - t
    t = time.perf_counter()
    geoms = np.concatenate([np.asarray(g.geometry.values, dtype=object)
                            for g in (big.get_layer("roads"), big.get_layer("row")) if g is not None])
    zone = shapely.buffer(shapely.union_all(geoms), rule.t("snap_tolerance_ft"))
    whole = time.perf_counter() - t
    parts = shapely.get_parts(shapely.intersection(hr.geometry.values, zone))
    parts = parts[~shapely.is_empty(parts)]
    n_whole = len(shapely.get_parts(shapely.union_all(shapely.buffer(parts, rule.t("snap_tolerance_ft")))))
    assert n_whole == int(f["measured"].iloc[0]), (n_whole, f["measured"].iloc[0])
    print(f"whole layer: buffer of the union {whole:.1f} s; clipped: the check {clipped:.3f} s "
          f"(the harvest context, buffer strips included, {built:.1f} s); {n_whole} access points either way")


if __name__ == "__main__":
    main()
