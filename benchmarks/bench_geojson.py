"""Benchmark: findings.geojson written by GDAL (pyogrio, ``RFC7946=YES``) vs the hand-written
streaming encoder it replaced.

The findings are those of a parcel screening: N parcels (jittered 9-vertex polygons about
100 x 100 ft in EPSG:2261, near Vestal, NY), each the subject of several rules, so several
findings share one geometry object (what ``screen_parcels`` produces), plus one finding in ten
without a place (``geometry`` null). A second case gives every finding its own polygon. Both
writers write the same frame to a file; the best of ``--repeat`` runs is reported, with the
file sizes and the ratios new / old.

The old writer is read from git history (``geoconstraints/output/files.py`` at commit
:data:`OLD_COMMIT`), so this script needs the repository's ``.git``.

Run::

    . .venv/bin/activate
    python benchmarks/bench_geojson.py                   # 100,000 findings
    python benchmarks/bench_geojson.py --findings 10000  # quick
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely

from geoconstraints.output import files
from geoconstraints.rulebook.findings import FINDING_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
OLD_COMMIT = "892b76f"
"""The last commit with the hand-written GeoJSON encoder (``iter_geojson``)."""

X0, Y0 = 964_988.0, 758_256.0  # Vestal, NY in EPSG:2261 (US survey feet)
RULES = ("FLD-001", "FLD-002", "FLD-003", "FLD-005", "FLD-008")


def old_writer() -> Callable[..., Path]:
    """``write_geojson`` of the hand-written encoder, loaded from git history."""
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:geoconstraints/output/files.py"],
                         check=True, capture_output=True, text=True).stdout
    mod = types.ModuleType("old_files")
    exec(compile(src, f"{OLD_COMMIT}:geoconstraints/output/files.py", "exec"), mod.__dict__)  # noqa: S102
    return mod.write_geojson


def parcels(n: int, seed: int = 0) -> np.ndarray:
    """``n`` jittered 9-vertex polygons on a 100-ft grid (clockwise, as GEOS overlays give them)."""
    rng = np.random.default_rng(seed)
    k = int(np.ceil(np.sqrt(n)))
    i, j = np.divmod(np.arange(n), k)
    ang = -np.linspace(0, 2 * np.pi, 9, endpoint=False)  # clockwise
    r = 45.0 + rng.uniform(-5, 5, size=(n, 9))
    x = X0 + j[:, None] * 100.0 + r * np.cos(ang)
    y = Y0 + i[:, None] * 100.0 + r * np.sin(ang)
    ring = np.stack([x, y], axis=-1)
    return shapely.polygons(np.concatenate([ring, ring[:, :1]], axis=1))


def findings(n: int, *, shared: bool) -> gpd.GeoDataFrame:
    """``n`` screening findings: ``len(RULES)`` per parcel (sharing its geometry when ``shared``),
    one in ten without a place."""
    per = len(RULES) if shared else 1
    polys = parcels(-(-n // per))
    geom = np.repeat(polys, per)[:n] if shared else polys[:n]
    geom = np.where(np.arange(n) % 10 == 9, None, geom)
    status = np.array(["violation", "review", "pass", "not_evaluated", "pass"], dtype=object)[np.arange(n) % 5]
    pid = np.char.add("P", (np.arange(n) // per).astype(str))
    df = pd.DataFrame({
        "rule_id": np.array(RULES, dtype=object)[np.arange(n) % len(RULES)], "rulebook": "vestal",
        "status": status, "citation": "Vestal Code § 6-137(a) (L.L. 2/1987 § 5.1)", "subject_layer": "parcels",
        "subject_id": pid.astype(object), "measured": np.round(np.arange(n) * 0.0137 % 9, 4),
        "threshold": np.where(np.arange(n) % 3 == 0, np.nan, 0.5), "unit": "acres",
        "message": "Parcel " + pd.Series(pid) + ": 0.42 acres in the special flood hazard area (zone AE)",
        "title": "Development in the special flood hazard area", "reading": "sliver_tolerance_sqft=10", "waived": "",
    })
    return gpd.GeoDataFrame(df[FINDING_COLUMNS], geometry=gpd.GeoSeries(geom, crs=2261), crs=2261)


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def compare(name: str, f: gpd.GeoDataFrame, old: Callable[..., Path], folder: Path, repeat: int) -> None:
    a, b = folder / f"old_{name}.geojson", folder / f"new_{name}.geojson"
    t_old = best_of(lambda: old(f, a), repeat)
    t_new = best_of(lambda: files.write_geojson(f, b), repeat)
    ja, jb = json.loads(a.read_text("utf-8")), json.loads(b.read_text("utf-8"))
    assert len(ja["features"]) == len(jb["features"]) == len(f)
    assert [x["properties"] for x in ja["features"]] == [x["properties"] for x in jb["features"]]
    s_old, s_new = a.stat().st_size, b.stat().st_size
    print(f"{name:<9} {len(f):>9,} findings | old {t_old:7.2f} s {s_old / 1e6:8.1f} MB | "
          f"new {t_new:7.2f} s {s_new / 1e6:8.1f} MB | new/old time {t_new / t_old:5.2f} x, size {s_new / s_old:5.3f} x")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--findings", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3, help="runs per writer; the best is reported")
    args = ap.parse_args(argv)
    old = old_writer()
    print(f"pyogrio {pyogrio.__version__}, GDAL {pyogrio.__gdal_version_string__}, shapely {shapely.__version__}")
    with tempfile.TemporaryDirectory(prefix="bench_geojson_") as tmp:
        for shared in (True, False):
            compare("shared" if shared else "distinct", findings(args.findings, shared=shared), old, Path(tmp),
                    args.repeat)


if __name__ == "__main__":
    sys.exit(main())
