"""Benchmark: ``geoconstraints screen`` end to end on a synthetic town of N parcels.

The county is ``town.make_county`` (an N-parcel grid of jittered ~100 x 100 ft quadrilaterals in
EPSG:2261, 211 flood polygons: 70 meandering rivers buffered into AE zones, floodways and a
second AE polygon each, one X polygon over everything; 300 streams), written to a GeoPackage. The script
then runs the real CLI path, ``load_layers -> screen_parcels -> Result.write``, and times each
stage: load, check, and every writer (findings.geojson, results.gpkg and its QGIS layer
styles, parcels.csv, report.html with its overview PNG, map.html), with the process's peak
resident memory (``resource.getrusage``) after each stage and the size of every output.

Run::

    . .venv/bin/activate
    python benchmarks/bench_screen_scale.py                      # 100,000 parcels
    python benchmarks/bench_screen_scale.py --parcels 1000000 --out /tmp/scale_1m
    python benchmarks/bench_screen_scale.py --outputs gpkg,report,map   # only some files of the set

``--profile STAGE`` prints the top of a cProfile of one stage (``check``, ``write``).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import io
import pstats
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from geoconstraints.output import write_result

sys.path.insert(0, str(Path(__file__).resolve().parent))
from town import make_county, write_county

TIMES: list[tuple[float, str, float, float]] = []
"""(start, stage, seconds, peak RSS in MiB after the stage); printed in order of start."""


def peak_mib() -> float:
    """Peak resident memory of this process so far, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    t0 = time.perf_counter()
    yield
    TIMES.append((t0, name, time.perf_counter() - t0, peak_mib()))


def timed(module: Any, attr: str, name: str) -> None:
    """Wrap ``module.attr`` so each call is recorded as stage ``name``."""
    fn: Callable[..., Any] = getattr(module, attr)

    @functools.wraps(fn)
    def wrapper(*a: Any, **kw: Any) -> Any:
        label = name
        if name in ("csv", "parquet") and a:
            label = f"{name} {Path(a[1]).name}" if len(a) > 1 else name
        with stage(label):
            return fn(*a, **kw)

    setattr(module, attr, wrapper)


def instrument() -> None:
    """Time each writer inside ``Result.write`` (they are looked up as module attributes)."""
    from geoconstraints.output import files as writers
    from geoconstraints.output import outset, overview, plots, report, styles, webmap

    timed(writers, "write_geojson", "findings.geojson")
    timed(writers, "write_gpkg", "results.gpkg (incl. styles)")
    timed(styles, "add_layer_styles", "  of which layer styles")
    timed(writers, "write_csv", "csv")
    timed(writers, "write_parquet", "parquet")
    timed(plots, "write_plots", "plots/*.png")
    timed(outset, "write_provenance", "provenance.json (SHA-256 of every file)")
    timed(outset, "swap_in", "swap the set in (and remove the earlier one)")
    timed(report, "render_report", "report.html render (incl. PNG)")
    timed(overview, "overview_data_uri", "  of which overview PNG")
    timed(webmap, "build_map", "map.html build")
    timed(webmap, "write_map", "map.html build + render + write")


def profile(fn: Callable[[], Any], top: int = 30) -> Any:
    pr = cProfile.Profile()
    out = pr.runcall(fn)
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(top)
    print(s.getvalue())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parcels", type=int, default=100_000, help="number of parcels (default 100,000)")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: a temporary one)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", choices=["check", "write"], default=None,
                    help="print a cProfile of one stage")
    ap.add_argument("--no-write", action="store_true", help="stop after the check (time load + check only)")
    ap.add_argument("--findings", choices=["person", "all"], default=None,
                    help="findings kept in memory and in the findings files (default: screen's, person)")
    ap.add_argument("--outputs", default=None,
                    help="files of the set to write, comma-separated (geoconstraints screen --outputs; default all)")
    args = ap.parse_args(argv)

    from geoconstraints import load_layers, load_rulebook
    from geoconstraints.commands import screen_parcels

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        out = args.out or tmp / "out"
        src = tmp / "town.gpkg"
        with stage("make county + write gpkg (setup)"):
            parcels, flood, streams = make_county(args.parcels, args.seed)
            write_county(str(src), parcels, flood, streams)
            del parcels, flood, streams
        base_rss = peak_mib()
        with stage("load_layers"):
            layers = load_layers(src)
        rb = load_rulebook("vestal")
        with stage("screen_parcels (check)"):
            if args.profile == "check":
                res = profile(lambda: screen_parcels(layers, rb, findings=args.findings))
            else:
                res = screen_parcels(layers, rb, findings=args.findings)
        if args.no_write:
            for _, name, sec, rss in sorted(TIMES):
                print(f"| {name} | {sec:,.2f} | {rss:,.0f} |")
            return 0
        instrument()
        t0 = time.perf_counter()
        if args.profile == "write":
            written = profile(lambda: write_result(res, out, findings=args.findings, overwrite=True,
                                                   outputs=args.outputs))
        else:
            written = write_result(res, out, findings=args.findings, overwrite=True, outputs=args.outputs)
        TIMES.append((t0, "Result.write total", time.perf_counter() - t0, peak_mib()))

        n_par, n_find = len(res.tables["parcels"]), res.n_findings  # kept + counted (Result.omitted)
        counts = res.counts()
        print(f"\n{n_par:,} parcels, {n_find:,} findings "
              f"({', '.join(f'{v:,} {k}' for k, v in counts.items() if v)}); "
              f"RSS after building the town {base_rss:,.0f} MiB")
        print("\n| stage | seconds | peak RSS so far (MiB) |\n|---|---:|---:|")
        for _, name, sec, rss in sorted(TIMES):
            print(f"| {name} | {sec:,.2f} | {rss:,.0f} |")
        print("\n| output | size (MB) |\n|---|---:|")
        for name, p in written.items():
            print(f"| {name} | {Path(p).stat().st_size / 1e6:,.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
