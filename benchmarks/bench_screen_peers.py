"""Benchmark: the whole ``geoconstraints screen`` process against PostGIS and DuckDB spatial, side by side.

One synthetic county (``town.make_county``: N parcels, 211 flood polygons, 300 streams) in a
GeoPackage; then, in one run:

* **ours, whole process**: ``geoconstraints screen county.gpkg --out DIR`` in a subprocess (load,
  check, every default output), wall time and peak RSS;
* **ours, check alone**: ``load_layers`` then ``screen_parcels`` in this process (default engine,
  every core), and with ``--dask`` the dask engine on a local cluster of 2 worker processes;
* **PostGIS, tuned** (``--pg-url`` or ``$GEOCONSTRAINTS_PG_URL``): COPY of the three layers, GIST
  indexes, ``ST_Union`` per class cut with ``ST_Subdivide(.., 256)``, streams cut into segments
  (``ST_DumpSegments``), then per parcel the SFHA, floodway and mapped (covered) square feet
  (``SUM(ST_Area(ST_Intersection))`` joined on ``ST_Intersects``) and the distance to the nearest
  stream segment (KNN ``<->``); the session may use 2 parallel workers;
* **DuckDB spatial** (``--duckdb``; extension loaded by path from the ``duckdb-extension-spatial``
  package, offline): the same load, unions cut into pieces of at most 256 vertices by halving in
  SQL round after round (DuckDB has no ST_Subdivide; cutting with a grid of 1,000-ft boxes, each
  intersected with the whole union, took 7.7 s of its 20 s at 100,000 parcels), the same
  per-parcel areas, and the distance to the nearest segment
  within ``--duck-radius`` ft (DuckDB has no KNN join; an ``ST_DWithin`` join over the full
  5,000-ft radius took minutes at 20,000 parcels).

The peers compute the core overlay table only (areas per class, stream distance); ours computes
it plus every FLD rule, five findings per parcel and (whole process) all outputs. The areas are
compared (max |difference| over parcels, sq ft). Ratios printed are peer time / ours.

Run::

    . .venv/bin/activate; eval "$(bash scripts/postgis.sh)"
    pip install -e ".[bench,dask]"
    python benchmarks/bench_screen_peers.py --parcels 100000 --duckdb --dask
    python benchmarks/bench_screen_peers.py --parcels 1000000 --no-postgis   # ours only, 1M
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import shapely

sys.path.insert(0, str(Path(__file__).resolve().parent))
from town import SRID, make_county, write_county

ROOT = Path(__file__).resolve().parents[1]


def run_ours_cli(src: Path, out: Path, extra: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of ``geoconstraints screen`` in a child process."""
    exe = Path(sys.executable).with_name("geoconstraints")
    t0 = time.perf_counter()
    subprocess.run([str(exe), "screen", str(src), "--out", str(out), *extra], check=True,
                   stdout=subprocess.DEVNULL)
    dt = time.perf_counter() - t0
    return dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0


def run_ours_check(src: Path, engine: str = "default", workers: int | None = None) -> tuple[float, float, pd.DataFrame]:
    from geoconstraints import load_layers, load_rulebook
    from geoconstraints.commands import screen_parcels

    t0 = time.perf_counter()
    layers = load_layers(src)
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = screen_parcels(layers, load_rulebook("vestal"), engine=engine, workers=workers)
    return t_load, time.perf_counter() - t0, res.tables["parcels"]


def _ewkb(geoms: np.ndarray) -> np.ndarray:
    return shapely.to_wkb(shapely.set_srid(np.asarray(geoms, dtype=object), SRID), hex=True, include_srid=True)


def run_postgis(url: str, parcels, flood, streams) -> tuple[float, pd.DataFrame]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bp, bf, bs, bcov, bseg")
        conn.execute("SET max_parallel_workers_per_gather = 2")
        t0 = time.perf_counter()
        conn.execute(f"CREATE TABLE bp (id text, geom geometry(Polygon, {SRID}))")
        conn.execute(f"CREATE TABLE bf (zone text, subty text, geom geometry(Geometry, {SRID}))")
        conn.execute(f"CREATE TABLE bs (geom geometry(LineString, {SRID}))")
        with conn.cursor() as cur:
            for table, cols, rows in (
                    ("bp", "id, geom", zip(parcels["parcel_id"], _ewkb(parcels.geometry.values))),
                    ("bf", "zone, subty, geom", zip(flood["FLD_ZONE"], flood["ZONE_SUBTY"], _ewkb(flood.geometry.values))),
                    ("bs", "geom", ((h,) for h in _ewkb(streams.geometry.values)))):
                with cur.copy(f"COPY {table} ({cols}) FROM STDIN") as cp:
                    for r in rows:
                        cp.write_row(r)
        for sql in (
                "CREATE INDEX ON bp USING GIST (geom)", "ANALYZE bp",
                """CREATE TABLE bcov AS SELECT k, ST_Subdivide(ST_Union(geom), 256) AS geom FROM (
                     SELECT 'sfha' AS k, geom FROM bf WHERE zone = 'AE'
                     UNION ALL SELECT 'floodway', geom FROM bf WHERE subty = 'FLOODWAY'
                     UNION ALL SELECT 'covered', geom FROM bf) x GROUP BY k""",
                "CREATE INDEX ON bcov USING GIST (geom)", "ANALYZE bcov",
                "CREATE TABLE bseg AS SELECT (ST_DumpSegments(geom)).geom AS geom FROM bs",
                "CREATE INDEX ON bseg USING GIST (geom)", "ANALYZE bseg"):
            conn.execute(sql)
        areas = conn.execute("""SELECT p.id, c.k, SUM(ST_Area(ST_Intersection(p.geom, c.geom)))
                                FROM bp p JOIN bcov c ON ST_Intersects(p.geom, c.geom) GROUP BY p.id, c.k""").fetchall()
        dist = conn.execute("""SELECT p.id, (SELECT ST_Distance(p.geom, s.geom) FROM bseg s
                                             ORDER BY p.geom <-> s.geom LIMIT 1) FROM bp p""").fetchall()
        dt = time.perf_counter() - t0
        conn.execute("DROP TABLE IF EXISTS bp, bf, bs, bcov, bseg")
    return dt, _frame(parcels, areas, dist)


def _frame(parcels, areas, dist) -> pd.DataFrame:
    a = pd.DataFrame(areas, columns=["id", "k", "sqft"]).pivot_table(index="id", columns="k", values="sqft",
                                                                     aggfunc="sum")
    out = pd.DataFrame(index=parcels["parcel_id"])
    for k in ("sfha", "floodway", "covered"):
        out[k] = a[k].reindex(out.index).fillna(0.0).to_numpy() if k in a else 0.0
    out["stream_ft"] = pd.Series(dict(dist)).reindex(out.index).to_numpy(dtype=float)
    return out


def duckdb_connect():
    import duckdb
    import duckdb_extension_spatial

    ext = sorted(Path(duckdb_extension_spatial.__file__).parent.glob("extensions/*/spatial.duckdb_extension"))
    if not ext:
        raise SystemExit("duckdb-extension-spatial has no spatial.duckdb_extension file")
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False,
                                 "allow_unsigned_extensions": True, "threads": os.cpu_count() or 2})
    con.execute(f"LOAD '{ext[-1]}'")
    return con


def subdivide(con, table: str, max_vertices: int, rounds: int = 40) -> None:
    """``ST_Subdivide`` for DuckDB (which has none): halve pieces over ``max_vertices`` at the middle of
    the longer side of their bounds, round after round, in SQL (as geoconstraints' ``_tile``)."""
    for _ in range(rounds):
        if not con.execute(f"SELECT count(*) FROM {table} WHERE ST_NPoints(geom) > {max_vertices}").fetchone()[0]:
            return
        con.execute(f"""CREATE OR REPLACE TABLE {table} AS
            SELECT k, geom FROM {table} WHERE ST_NPoints(geom) <= {max_vertices}
            UNION ALL
            SELECT k, g AS geom FROM (
                SELECT k, unnest(ST_Dump(ST_Intersection(geom, CASE WHEN x1 - x0 >= y1 - y0
                    THEN ST_MakeEnvelope(x0 + side * (x1 - x0) / 2, y0, x0 + (side + 1) * (x1 - x0) / 2, y1)
                    ELSE ST_MakeEnvelope(x0, y0 + side * (y1 - y0) / 2, x1, y0 + (side + 1) * (y1 - y0) / 2) END))).geom AS g
                FROM (SELECT k, geom, ST_XMin(geom) AS x0, ST_YMin(geom) AS y0, ST_XMax(geom) AS x1, ST_YMax(geom) AS y1
                      FROM {table} WHERE ST_NPoints(geom) > {max_vertices}) big, (VALUES (0), (1)) s(side))
            WHERE ST_GeometryType(g) = 'POLYGON'""")


def run_duckdb(parcels, flood, streams, max_vertices: int, radius_ft: float) -> tuple[float, pd.DataFrame]:
    con = duckdb_connect()
    t0 = time.perf_counter()
    p = pd.DataFrame({"id": parcels["parcel_id"].to_numpy(), "wkb": shapely.to_wkb(parcels.geometry.values)})
    f = pd.DataFrame({"zone": flood["FLD_ZONE"].to_numpy(), "subty": flood["ZONE_SUBTY"].fillna("").to_numpy(),
                      "wkb": shapely.to_wkb(flood.geometry.values)})
    s = pd.DataFrame({"wkb": shapely.to_wkb(streams.geometry.values)})
    con.register("p_df", p)
    con.register("f_df", f)
    con.register("s_df", s)
    for sql in (
            "CREATE TABLE p AS SELECT id, ST_GeomFromWKB(wkb) AS geom FROM p_df",
            "CREATE TABLE f AS SELECT zone, subty, ST_GeomFromWKB(wkb) AS geom FROM f_df",
            "CREATE TABLE s AS SELECT ST_GeomFromWKB(wkb) AS geom FROM s_df",
            """CREATE TABLE u AS SELECT k, ST_Union_Agg(geom) AS geom FROM (
                 SELECT 'sfha' AS k, geom FROM f WHERE zone = 'AE'
                 UNION ALL SELECT 'floodway', geom FROM f WHERE subty = 'FLOODWAY'
                 UNION ALL SELECT 'covered', geom FROM f) GROUP BY k""",
            "CREATE TABLE cov AS SELECT k, unnest(ST_Dump(geom)).geom AS geom FROM u"):
        con.execute(sql)
    subdivide(con, "cov", max_vertices)
    con.execute("""CREATE TABLE seg AS SELECT ST_MakeLine(ST_PointN(geom, i::INTEGER), ST_PointN(geom, (i + 1)::INTEGER))
                   AS geom FROM s, range(1, ST_NPoints(geom)) r(i)""")
    areas = con.execute("""SELECT p.id, c.k, SUM(ST_Area(ST_Intersection(p.geom, c.geom)))
                           FROM p JOIN cov c ON ST_Intersects(p.geom, c.geom) GROUP BY p.id, c.k""").fetchall()
    t_areas = time.perf_counter() - t0
    dist = con.execute(f"""SELECT p.id, MIN(ST_Distance(p.geom, seg.geom)) FROM p JOIN seg
                            ON ST_DWithin(p.geom, seg.geom, {radius_ft}) GROUP BY p.id""").fetchall()
    print(f"DuckDB: load + tiles + areas {t_areas:.2f} s, stream distance within {radius_ft:g} ft "
          f"{time.perf_counter() - t0 - t_areas:.2f} s")
    dt = time.perf_counter() - t0
    con.close()
    return dt, _frame(parcels, areas, dist)


def compare(ours: pd.DataFrame, peer: pd.DataFrame) -> str:
    """Largest area differences, apart from the overlaps the flood rules set to 0 as slivers."""
    t = ours.set_index("parcel_id")
    out = []
    for col, k in (("sfha_acres", "sfha"), ("floodway_acres", "floodway")):
        o, p = t[col].to_numpy() * 43_560.0, peer[k].to_numpy()
        kept = (o > 0) | (p == 0)  # not zeroed as a sliver (thinner than 1 ft or under 100 sq ft)
        out.append(f"{k}: max |diff| {np.abs(o - p)[kept].max():.1e} sq ft ({(~kept).sum():,} slivers of at most "
                   f"{p[~kept].max() if (~kept).any() else 0:.0f} sq ft set to 0 by the rules)")
    s_o, s_p = t["stream_distance_ft"].to_numpy(), peer["stream_ft"].to_numpy()
    both = np.isfinite(s_o) & np.isfinite(s_p)  # DuckDB: only within its radius
    out.append(f"stream distance: max |diff| {np.abs(s_o[both] - s_p[both]).max():.1e} ft")
    return "; ".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parcels", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pg-url", default=os.environ.get("GEOCONSTRAINTS_PG_URL"))
    ap.add_argument("--no-postgis", action="store_true")
    ap.add_argument("--duckdb", action="store_true", help="also run DuckDB spatial (pip install -e '.[bench]')")
    ap.add_argument("--duck-radius", type=float, default=300.0,
                    help="DuckDB has no nearest-neighbour join: stream distance only within this many ft (default 300)")
    ap.add_argument("--dask", action="store_true", help="also time the dask engine (2 local worker processes)")
    ap.add_argument("--no-whole", action="store_true", help="skip the whole screen process (outputs)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "county.gpkg"
        parcels, flood, streams = make_county(args.parcels, args.seed)
        write_county(str(src), parcels, flood, streams)
        print(f"county: {len(parcels):,} parcels, {len(flood)} flood polygons, {len(streams)} streams")
        rows = []
        if not args.no_whole:
            t_whole, rss = run_ours_cli(src, Path(d) / "out", [])
            rows.append(("geoconstraints screen, whole process (load + check + all outputs)", t_whole, rss))
        t_load, t_check, ours = run_ours_check(src)
        rows.append(("geoconstraints load_layers", t_load, None))
        rows.append(("geoconstraints screen_parcels (check, default engine, threads)", t_check, None))
        if args.dask:
            _, t_dask, dask_t = run_ours_check(src, engine="dask", workers=2)
            same = np.allclose(dask_t["sfha_acres"], ours["sfha_acres"], rtol=0, atol=1e-9)
            rows.append((f"geoconstraints screen_parcels, dask engine, 2 local workers (same sfha: {same})", t_dask, None))
        peers = {}
        if not args.no_postgis and args.pg_url:
            t_pg, pg = run_postgis(args.pg_url, parcels, flood, streams)
            peers["PostGIS"] = t_pg
            rows.append(("PostGIS tuned: COPY + GIST + ST_Union/ST_Subdivide + query", t_pg, None))
            print("PostGIS vs ours:", compare(ours, pg))
        if args.duckdb:
            t_dk, dk = run_duckdb(parcels, flood, streams, 256, args.duck_radius)
            peers["DuckDB"] = t_dk
            rows.append(("DuckDB spatial: load + unions cut like ST_Subdivide(.., 256) + query", t_dk, None))
            print("DuckDB vs ours:", compare(ours, dk))
        print("\n| run | seconds | peak RSS (MiB) |\n|---|---:|---:|")
        for name, sec, rss in rows:
            print(f"| {name} | {sec:,.2f} | {'' if rss is None else f'{rss:,.0f}'} |")
        check_total = t_load + t_check
        for peer, t in peers.items():
            if not args.no_whole:
                print(f"whole screen / {peer}: {t_whole / t:.2f}x")
            print(f"check (load + screen_parcels) / {peer}: {check_total / t:.2f}x")
            if "DuckDB" in peers and peer == "PostGIS":
                print(f"DuckDB / PostGIS: {peers['DuckDB'] / t:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
