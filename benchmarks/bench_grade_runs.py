"""Benchmark: vectorized ``line_profile`` + ``grade_runs`` against a naive per-point loop.

A synthetic 1-m DEM (smooth analytic hills, metres, EPSG:32618 UTM 18N) is written to a
temporary GeoTIFF; N one-mile (5,280 ft) roads with a bend are laid on it at random. Both
methods sample the *same* densified points (one per DEM cell, ~1,610 per road):

* vectorized: :func:`geoconstraints.terrain.line_profile` (bilinear, numpy over all points of a
  road) and :func:`geoconstraints.terrain.grade_runs` (array run finding);
* naive: ``rasterio.DatasetReader.sample`` over the road's points (nearest cell; rasterio reads a
  one-pixel window per point), then a Python loop over segments for grades and runs.

Run from the repository root::

    PYTHONPATH=src python benchmarks/bench_grade_runs.py            # 1,000 roads, ~2 minutes
    PYTHONPATH=src python benchmarks/bench_grade_runs.py --roads 100

This is not a test: it prints timings (and a rough agreement figure) to stdout.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from shapely.geometry import LineString

from geoconstraints.geometry.terrain import densify, grade_runs, line_profile
from geoconstraints.io.dem import open_dem
from geoconstraints.units import FT_PER_M

CRS = "EPSG:32618"
X0, YTOP = 400_000.0, 4_666_000.0  # upper-left corner, metres
MILE_M = 5280 / FT_PER_M  # 1,609.344 m
MAX_GRADE_PCT, MAX_RUN_FT = 25.0, 200.0


def surface(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Smooth hills in metres; grades up to ~40 % so steep runs exist."""
    return (
        200
        + 60 * np.sin(x / 400.0) * np.cos(y / 550.0)
        + 30 * np.sin((x + y) / 170.0)
        + 8 * np.cos((x - 2 * y) / 90.0)
    )


def write_dem(path: Path, n: int) -> None:
    """Write an n x n 1-m float32 DEM (band unit metre), in row blocks to bound memory."""
    profile = {
        "driver": "GTiff",
        "width": n,
        "height": n,
        "count": 1,
        "dtype": "float32",
        "crs": CRS,
        "transform": Affine(1.0, 0.0, X0, 0.0, -1.0, YTOP),
        "tiled": True,
        "blockxsize": 256,
        "blockysize": 256,
    }
    xc = np.arange(n) + 0.5
    with rasterio.open(path, "w", **profile) as dst:
        dst.units = ("metre",)
        for r0 in range(0, n, 512):
            rows = np.arange(r0, min(n, r0 + 512))
            X, Y = np.meshgrid(xc, rows + 0.5)
            z = surface(X, -Y)  # y grows north: -row
            dst.write(z.astype("float32"), 1, window=rasterio.windows.Window(0, r0, n, len(rows)))


def random_roads(count: int, n: int, seed: int = 0) -> list[LineString]:
    """One-mile roads with one bend (two legs of half a mile), fully inside the DEM."""
    rng = np.random.default_rng(seed)
    half = MILE_M / 2
    margin = MILE_M + 5
    roads = []
    for _ in range(count):
        sx = X0 + rng.uniform(margin, n - margin)
        sy = YTOP - rng.uniform(margin, n - margin)
        a1 = rng.uniform(0, 2 * math.pi)
        a2 = a1 + rng.uniform(-1.0, 1.0)
        mx, my = sx + half * math.cos(a1), sy + half * math.sin(a1)
        ex, ey = mx + half * math.cos(a2), my + half * math.sin(a2)
        roads.append(LineString([(sx, sy), (mx, my), (ex, ey)]))
    return roads


def naive_runs(src, xs, ys, dist_ft) -> tuple[int, np.ndarray]:
    """Per-point nearest sampling and a per-segment Python loop; returns (exceeding, z_ft)."""
    z = np.array([v[0] for v in src.sample(zip(xs, ys))], dtype="float64") * FT_PER_M
    exceeding, run_start = 0, None
    for i in range(len(z) - 1):
        grade = abs(z[i + 1] - z[i]) / (dist_ft[i + 1] - dist_ft[i]) * 100
        if grade > MAX_GRADE_PCT:
            if run_start is None:
                run_start = dist_ft[i]
        elif run_start is not None:
            exceeding += (dist_ft[i] - run_start) > MAX_RUN_FT
            run_start = None
    if run_start is not None:
        exceeding += (dist_ft[-1] - run_start) > MAX_RUN_FT
    return exceeding, z


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--roads", type=int, default=1000, help="number of one-mile roads (1000)")
    ap.add_argument("--size", type=int, default=6000, help="DEM size in 1-m cells (6000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.size < 2 * MILE_M + 20:
        ap.error(f"--size must be at least {math.ceil(2 * MILE_M + 20)} cells to hold a mile each way")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic_1m.tif"
        t = time.perf_counter()
        write_dem(path, args.size)
        print(f"DEM {args.size} x {args.size} 1-m cells written in {time.perf_counter() - t:.1f} s")
        roads = random_roads(args.roads, args.size, args.seed)

        # vectorized
        t0 = time.perf_counter()
        dem = open_dem(path)
        dem.read_ft()  # load + cache once (counted)
        t_load = time.perf_counter() - t0
        n_pts, exceeding_vec, profiles = 0, 0, []
        t1 = time.perf_counter()
        for road in roads:
            prof = line_profile(dem, road, CRS)
            res = grade_runs(prof, max_grade_pct=MAX_GRADE_PCT, max_run_ft=MAX_RUN_FT)
            exceeding_vec += len(res.exceeding)
            n_pts += prof.x.size
            profiles.append(prof)
        t_vec = time.perf_counter() - t1 + t_load

        # naive (same densified points)
        t2 = time.perf_counter()
        exceeding_naive, max_dz = 0, 0.0
        with rasterio.open(path) as src:
            for road, prof in zip(roads, profiles):
                xs, ys, d = densify(road, dem.cell_size_ft / FT_PER_M)
                count, z = naive_runs(src, xs, ys, d * FT_PER_M)
                exceeding_naive += count
                max_dz = max(max_dz, float(np.max(np.abs(z - prof.z_ft))))
        t_naive = time.perf_counter() - t2

    print(
        f"roads: {args.roads} x 5,280 ft, {n_pts:,} sample points "
        f"({n_pts / args.roads:.0f} per road, step {dem.cell_size_ft:.3f} ft)"
    )
    print(
        f"vectorized line_profile+grade_runs: {t_vec:8.2f} s "
        f"(of which DEM read {t_load:.2f} s; {t_vec / args.roads * 1e3:.2f} ms/road)"
    )
    print(f"naive rasterio.sample + loop      : {t_naive:8.2f} s ({t_naive / args.roads * 1e3:.2f} ms/road)")
    print(
        f"ratio naive / vectorized          : {t_naive / t_vec:8.1f} x (including the one-time "
        f"DEM read), {t_naive / (t_vec - t_load):.1f} x (per-road work only)"
    )
    print(
        f"runs > {MAX_RUN_FT:g} ft at > {MAX_GRADE_PCT:g} %: vectorized (bilinear) "
        f"{exceeding_vec}, naive (nearest cell) {exceeding_naive}; "
        f"max |z bilinear - z nearest| = {max_dz:.2f} ft"
    )


if __name__ == "__main__":
    main()
