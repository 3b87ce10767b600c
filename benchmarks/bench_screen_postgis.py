"""Benchmark: the parcel screening's core overlay (SFHA acres per parcel) vs PostGIS.

Synthetic town: an N-parcel grid of jittered quadrilaterals (about 100 x 100 ft) and NFHL-like
flood polygons (three meandering rivers buffered into AE zones with thousands of vertices,
overlapping AE polygons, floodways, and one X polygon over everything). Both sides compute the
same thing, SFHA square feet per parcel with overlapping polygons dissolved:

* geoconstraints: ``CoverIndex.build`` (union, split into parts, tiles of at most 256
  vertices, STRtree) + ``overlay_areas`` (vectorized shapely intersection and areas);
* PostGIS: ``ST_Union`` of the SFHA polygons, ``ST_Subdivide(.., 256)`` (the idiomatic way to
  keep intersections cheap), a GIST index, then ``SUM(ST_Area(ST_Intersection(...)))`` per
  parcel joined on ``ST_Intersects`` (parcels also GIST-indexed).

Upload times are reported separately and not counted. The answers are compared (max
difference in acres). The full ``screen_parcels`` run (all rules, findings, BFE) is timed too.

Run::

    eval "$(bash scripts/postgis.sh)"        # exports GEOCONSTRAINTS_PG_URL
    python benchmarks/bench_screen_postgis.py --parcels 100000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely
from shapely.geometry import LineString, box

sys.path.insert(0, str(Path(__file__).resolve().parent))
from town import ACRE, SRID, X0, Y0, parcels_grid


def make_town(n_parcels: int, seed: int = 1) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
    """A ``k x k`` grid (k = ceil(sqrt(N))) of jittered 100-ft parcels and flood polygons."""
    rng = np.random.default_rng(seed)
    parcels, side = parcels_grid(n_parcels, rng)
    geoms, zones, subty = [box(X0 - 500, Y0 - 500, X0 + side + 500, Y0 + side + 500)], ["X"], [None]
    t = np.linspace(0, 1, 2000)
    for r in range(3):
        y = Y0 + side * (r + 0.5) / 3 + side * 0.08 * np.sin(t * 40 + r) + side * 0.02 * np.sin(t * 173)
        river = LineString(np.column_stack([X0 - 300 + t * (side + 600), y]))
        width = side * 0.03
        geoms += [river.buffer(width, quad_segs=4), river.buffer(width * 0.4, quad_segs=4),
                  river.buffer(width * 0.8, quad_segs=4).intersection(box(X0, Y0, X0 + side / 2, Y0 + side))]
        zones += ["AE", "AE", "AE"]
        subty += [None, "FLOODWAY", None]
    flood = gpd.GeoDataFrame({"FLD_ZONE": zones, "ZONE_SUBTY": subty}, geometry=geoms, crs=SRID)
    return parcels, flood


def time_ours(parcels: gpd.GeoDataFrame, flood: gpd.GeoDataFrame) -> tuple[float, np.ndarray]:
    from geoconstraints.geometry.overlay import CoverIndex, overlay_areas

    t0 = time.perf_counter()
    sfha = flood.geometry.values[(flood["FLD_ZONE"] == "AE").to_numpy()]
    cover = CoverIndex.build([("_sfha", sfha)])
    ov = overlay_areas(parcels.geometry.values, cover, tolerance_ft=0.0, min_area_sqft=0.0, keep_geometry=())
    out = np.zeros(len(parcels))
    np.add.at(out, ov["subject"].to_numpy(), ov["raw_sqft"].to_numpy())
    return time.perf_counter() - t0, out


def upload(url: str, parcels: gpd.GeoDataFrame, flood: gpd.GeoDataFrame) -> float:
    import psycopg

    t0 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        conn.execute("DROP TABLE IF EXISTS bench_parcels, bench_flood, bench_sfha")
        conn.execute(f"CREATE TABLE bench_parcels (id text, geom geometry(Polygon, {SRID}))")
        conn.execute(f"CREATE TABLE bench_flood (zone text, subty text, geom geometry(Geometry, {SRID}))")
        hexes = shapely.to_wkb(shapely.set_srid(parcels.geometry.values, SRID), hex=True, include_srid=True)
        with conn.cursor() as cur:
            with cur.copy("COPY bench_parcels (id, geom) FROM STDIN") as cp:
                for pid, h in zip(parcels["parcel_id"], hexes):
                    cp.write_row((pid, h))
            fh = shapely.to_wkb(shapely.set_srid(flood.geometry.values, SRID), hex=True, include_srid=True)
            with cur.copy("COPY bench_flood (zone, subty, geom) FROM STDIN") as cp:
                for z, s, h in zip(flood["FLD_ZONE"], flood["ZONE_SUBTY"], fh):
                    cp.write_row((z, s, h))
        conn.execute("CREATE INDEX ON bench_parcels USING GIST (geom)")
        conn.execute("ANALYZE bench_parcels")
    return time.perf_counter() - t0


def time_postgis(url: str, ids: list[str]) -> tuple[float, np.ndarray]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        t0 = time.perf_counter()
        conn.execute("CREATE TABLE bench_sfha AS SELECT ST_Subdivide(ST_Union(geom), 256) AS geom "
                     "FROM bench_flood WHERE zone = 'AE'")
        conn.execute("CREATE INDEX ON bench_sfha USING GIST (geom)")
        conn.execute("ANALYZE bench_sfha")
        rows = conn.execute("""
            SELECT p.id, SUM(ST_Area(ST_Intersection(p.geom, s.geom)))
            FROM bench_parcels p JOIN bench_sfha s ON ST_Intersects(p.geom, s.geom)
            GROUP BY p.id""").fetchall()
        dt = time.perf_counter() - t0
        conn.execute("DROP TABLE IF EXISTS bench_parcels, bench_flood, bench_sfha")
    got = dict(rows)
    return dt, np.array([got.get(i, 0.0) for i in ids])


def time_full_screen(parcels: gpd.GeoDataFrame, flood: gpd.GeoDataFrame, tmp: Path) -> float:
    from geoconstraints import load_layers, load_rulebook
    from geoconstraints.commands import screen_parcels

    path = tmp / "bench_town.gpkg"
    parcels.to_file(path, layer="parcels")
    flood.to_file(path, layer="flood_zones")
    layers = load_layers(path)
    t0 = time.perf_counter()
    screen_parcels(layers, load_rulebook("vestal"))
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parcels", type=int, default=100_000, help="number of parcels (default 100,000)")
    ap.add_argument("--pg-url", default=os.environ.get("GEOCONSTRAINTS_PG_URL"),
                    help="PostGIS URL (default $GEOCONSTRAINTS_PG_URL, else runs scripts/postgis.sh)")
    ap.add_argument("--full-screen", action="store_true", help="also time the whole screen_parcels run")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    url = args.pg_url
    if not url:
        script = Path(__file__).resolve().parents[1] / "scripts" / "postgis.sh"
        url = subprocess.run(["bash", str(script), "--url"], check=True, capture_output=True, text=True).stdout.strip()
    t0 = time.perf_counter()
    parcels, flood = make_town(args.parcels, args.seed)
    nv = int(shapely.get_num_coordinates(flood.geometry.values).sum())
    print(f"synthetic town: {len(parcels):,} parcels, {len(flood)} flood polygons ({nv:,} vertices), "
          f"built in {time.perf_counter() - t0:.1f} s")
    t_ours, ours = time_ours(parcels, flood)
    t_up = upload(url, parcels, flood)
    t_pg, theirs = time_postgis(url, parcels["parcel_id"].tolist())
    diff = np.abs(ours - theirs).max() / ACRE
    n_hit = int((theirs > 0).sum())
    print(f"parcels touching the SFHA: {n_hit:,}; max |difference| {diff:.2e} acres")
    print(f"geoconstraints overlay (union + tiles + STRtree + intersection): {t_ours:8.2f} s")
    print(f"PostGIS (ST_Union + ST_Subdivide + GIST + ST_Intersection):      {t_pg:8.2f} s   (upload {t_up:.1f} s not counted)")
    print(f"ratio PostGIS / geoconstraints: {t_pg / t_ours:.2f}x")
    if args.full_screen:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            t_full = time_full_screen(parcels, flood, Path(d))
        print(f"full screen_parcels (all FLD rules, findings, BFE): {t_full:.1f} s")
    return 0 if diff < 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
