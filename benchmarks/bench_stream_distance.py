"""Benchmark: the stream distance of ``screen`` (:func:`geoconstraints.geometry.overlay.distance_to_lines`)
over the line index it builds, against the index of round 12 and against a brute-force peer.

One synthetic county (``town.make_county``: N parcels, 300 streams). The nearest search of every
parcel outline (what ``distance_to_lines`` asks GEOS, one thread, CPU time, best of 3) over a tree of:

* **round 12**: 2-point segments, 4 entries per node;
* **pieces x capacity**: pieces of 1, 2, 4, 6, 8 segments (``line_segments(lines, per_piece=k)``),
  2 / 3 / 4 entries per node; the row marked ``*`` is what ``distance_to_lines`` uses
  (``DISTANCE_PIECE_SEGMENTS``, ``DISTANCE_NODE_CAPACITY``).

Every variant's distances are compared with round 12's, bit for bit (``identical``), and a sample of
parcels with plain ``shapely.distance`` to every stream (the peer: no index at all), to 1e-9 ft.
Ratios are CPU time / round 12's.

Run::

    . .venv/bin/activate
    python benchmarks/bench_stream_distance.py                    # 100,000 parcels
    python benchmarks/bench_stream_distance.py --parcels 1000000 --subjects 200000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import shapely
from shapely import STRtree

from geoconstraints.geometry import overlay

sys.path.insert(0, str(Path(__file__).resolve().parent))
from town import make_county


def nearest_cpu(outline: np.ndarray, lines: np.ndarray, per_piece: int, capacity: int,
                repeat: int = 3) -> tuple[float, np.ndarray, int]:
    """(CPU seconds of the nearest search, best of ``repeat``; the distances; items in the tree)
    for one index layout."""
    items, _ = overlay.line_segments(lines, per_piece)
    tree = STRtree(items, node_capacity=capacity)
    tree.query(shapely.box(0.0, 0.0, 0.0, 0.0))  # built before timing
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        (_, _), dist = tree.query_nearest(outline, return_distance=True, all_matches=False)
        best = min(best, time.process_time() - t)
    return best, dist, len(items)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parcels", type=int, default=100_000, help="parcels in the county (default 100,000)")
    ap.add_argument("--subjects", type=int, default=None, help="search from the first N parcels only (default all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--check", type=int, default=300, help="parcels compared with plain shapely.distance (default 300)")
    args = ap.parse_args(argv)
    parcels, _, streams = make_county(args.parcels, seed=args.seed)
    geoms = np.asarray(parcels.geometry.values, dtype=object)[: args.subjects]
    lines = np.asarray(streams.geometry.values, dtype=object)
    outline = shapely.boundary(geoms)
    print(f"county: {args.parcels:,} parcels ({len(geoms):,} searched), {len(lines)} streams")
    base_cpu, base, n_seg = nearest_cpu(outline, lines, 1, 4)
    sample = np.random.default_rng(0).choice(len(geoms), min(args.check, len(geoms)), replace=False)
    peer = shapely.distance(outline[sample][:, None], lines[None, :]).min(axis=1)
    print(f"round 12 (2-point segments, 4 per node): {n_seg:,} segments, {base_cpu:.2f} s CPU; "
          f"against plain shapely.distance on {len(sample)} parcels: max |diff| "
          f"{np.max(np.abs(base[sample] - peer)):.1e} ft")
    print("\n| segments per piece | entries per node | items | CPU (s) | / round 12 | identical |")
    print("|---:|---:|---:|---:|---:|---|")
    for k in (1, 2, 4, 6, 8):
        for cap in (2, 3, 4):
            cpu, dist, n = nearest_cpu(outline, lines, k, cap)
            mark = " *" if (k, cap) == (overlay.DISTANCE_PIECE_SEGMENTS, overlay.DISTANCE_NODE_CAPACITY) else ""
            same = np.array_equal(dist, base)
            assert same and np.max(np.abs(dist[sample] - peer)) <= 1e-9, (k, cap)
            print(f"| {k}{mark} | {cap} | {n:,} | {cpu:.2f} | {cpu / base_cpu:.2f}x | {same} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
