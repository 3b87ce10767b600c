"""The parcel screening's SFHA and floodway acres against a real PostGIS (an independent tool).

PostGIS computes ``ST_Area(ST_Intersection(parcel, ST_Union(SFHA polygons)))`` from the raw
input geometries (its own zone selection, its own GEOS); geoconstraints loads the same layers
from a GeoPackage and screens them. They must agree within 0.01 acre for every parcel (the
screening sets overlaps thinner than 1 ft or under 100 sq ft to zero: at most a few hundred
sq ft here), and to 1e-4 acre for almost all parcels.

The database comes from ``scripts/postgis.sh``; ``scripts/test.sh`` (run by ``.ci/run``) evaluates
its output, which exports ``GEOCONSTRAINTS_PG_URL``. Without it this test fails (it is not skipped).
"""

from __future__ import annotations

import uuid

import geopandas as gpd
import numpy as np
import pytest
import shapely
from common import ACRE, NY_FT_SRID, X0, Y0
from conftest import pg_url
from shapely.geometry import LineString, box

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import screen_parcels


def _town(n: int = 20, cell: float = 150.0, seed: int = 7):
    """``n x n`` irregular parcels tiling a square (jittered shared corners) and NFHL-like polygons."""
    rng = np.random.default_rng(seed)
    gx, gy = np.meshgrid(np.arange(n + 1) * cell, np.arange(n + 1) * cell)
    jit = rng.uniform(-0.3, 0.3, size=(2, n + 1, n + 1)) * cell
    jit[:, [0, -1], :] = 0
    jit[:, :, [0, -1]] = 0
    vx, vy = X0 + gx + jit[0], Y0 + gy + jit[1]
    polys, ids = [], []
    for i in range(n):
        for j in range(n):
            ring = [(vx[i, j], vy[i, j]), (vx[i, j + 1], vy[i, j + 1]), (vx[i + 1, j + 1], vy[i + 1, j + 1]),
                    (vx[i + 1, j], vy[i + 1, j])]
            polys.append(shapely.Polygon(ring))
            ids.append(f"{i:02d}-{j:02d}")
    parcels = gpd.GeoDataFrame({"parcel_id": ids}, geometry=polys, crs=NY_FT_SRID)
    side = n * cell
    t = np.linspace(0, 1, 80)
    river = LineString(np.column_stack([X0 - 100 + t * (side + 200),
                                        Y0 + side * 0.45 + 400 * np.sin(t * 7.0)]))
    brook = LineString([(X0 + side * 0.3, Y0 + side + 100), (X0 + side * 0.55, Y0 + side * 0.4)])
    flood = gpd.GeoDataFrame({
        "FLD_ZONE": ["X", "AE", "AE", "A", "AE"],
        "ZONE_SUBTY": [None, None, "FLOODWAY", None, None],
    }, geometry=[
        box(X0 - 200, Y0 - 200, X0 + side + 200, Y0 + side + 200),
        river.buffer(260),
        river.buffer(90),                       # floodway, inside the AE (overlaps it: dissolved)
        brook.buffer(120),                      # unnumbered A, crossing the AE
        river.buffer(200).intersection(box(X0, Y0, X0 + side / 2, Y0 + side)),  # overlaps the first AE
    ], crs=NY_FT_SRID)
    return parcels, flood


def _postgis_areas(url: str, parcels: gpd.GeoDataFrame, flood: gpd.GeoDataFrame) -> dict[str, dict[str, float]]:
    import psycopg

    tag = uuid.uuid4().hex[:8]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        p_t, f_t = f"gc_parcels_{tag}", f"gc_flood_{tag}"
        conn.execute(f"CREATE TEMP TABLE {p_t} (id text, geom geometry(Polygon, {NY_FT_SRID}))")
        conn.execute(f"CREATE TEMP TABLE {f_t} (zone text, subty text, geom geometry(Geometry, {NY_FT_SRID}))")
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {p_t} VALUES (%s, ST_GeomFromWKB(%s, {NY_FT_SRID}))",
                            [(i, shapely.to_wkb(g)) for i, g in zip(parcels["parcel_id"], parcels.geometry)])
            cur.executemany(f"INSERT INTO {f_t} VALUES (%s, %s, ST_GeomFromWKB(%s, {NY_FT_SRID}))",
                            [(z, s, shapely.to_wkb(g)) for z, s, g in
                             zip(flood["FLD_ZONE"], flood["ZONE_SUBTY"], flood.geometry)])
        conn.execute(f"CREATE INDEX ON {p_t} USING GIST (geom)")
        rows = conn.execute(f"""
            WITH sfha AS (SELECT ST_Union(geom) AS g FROM {f_t} WHERE zone IN ('A', 'AE')),
                 fw AS (SELECT ST_Union(geom) AS g FROM {f_t} WHERE subty LIKE '%FLOODWAY%')
            SELECT p.id,
                   COALESCE(ST_Area(ST_Intersection(p.geom, sfha.g)), 0) / {ACRE},
                   COALESCE(ST_Area(ST_Intersection(p.geom, fw.g)), 0) / {ACRE},
                   ST_Area(p.geom) / {ACRE}
            FROM {p_t} p, sfha, fw ORDER BY p.id""").fetchall()
        version = conn.execute("SELECT postgis_lib_version()").fetchone()[0]
    assert version.startswith("3"), version
    return {"sfha": {r[0]: r[1] for r in rows}, "floodway": {r[0]: r[2] for r in rows},
            "area": {r[0]: r[3] for r in rows}}


@pytest.mark.parametrize("workers,chunk_size", [(1, 100_000), (2, 37)])
def test_sfha_acres_match_postgis(tmp_path, workers, chunk_size) -> None:
    url = pg_url()
    parcels, flood = _town()
    path = tmp_path / "town.gpkg"
    parcels.to_file(path, layer="parcels")
    flood.to_file(path, layer="flood_zones")
    res = screen_parcels(load_layers(path), load_rulebook("vestal"), workers=workers, chunk_size=chunk_size)
    t = res.tables["parcels"].set_index("parcel_id")
    pg = _postgis_areas(url, parcels, flood)
    ids = sorted(pg["sfha"])
    assert ids == sorted(t.index)
    ours = t.loc[ids, "sfha_acres"].to_numpy()
    theirs = np.array([pg["sfha"][i] for i in ids])
    # the layout really exercises partial overlaps, not just all-in / all-out
    partial = (theirs > 0.01) & (theirs < t.loc[ids, "area_acres"].to_numpy() - 0.01)
    assert partial.sum() >= 40
    assert np.abs(ours - theirs).max() < 0.01
    assert np.mean(np.abs(ours - theirs) < 1e-4) > 0.98
    # apart from the overlaps set to 0 as slivers (under 100 sq ft or thinner than 1 ft): within 5 sq ft
    kept = (ours > 0) | (theirs == 0)
    assert kept.mean() > 0.95
    assert np.abs(ours - theirs)[kept].max() * ACRE < 5.0
    fw_ours = t.loc[ids, "floodway_acres"].to_numpy()
    fw_theirs = np.array([pg["floodway"][i] for i in ids])
    assert (fw_theirs > 0.01).sum() >= 20
    assert np.abs(fw_ours - fw_theirs).max() < 0.01
    np.testing.assert_allclose(t.loc[ids, "area_acres"], [pg["area"][i] for i in ids], rtol=1e-9)
