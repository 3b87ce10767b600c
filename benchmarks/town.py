"""A synthetic county for the screening benchmarks (shared by every ``bench_screen_*.py``).

* parcels: an N-parcel grid (k = ceil(sqrt(N)) per side) of jittered ~100 x 100 ft quadrilaterals
  in EPSG:2261 (NY Central, US survey feet), south of Vestal NY;
* flood zones (NFHL-like, ``FLD_ZONE`` / ``ZONE_SUBTY``): one X polygon over everything and, for
  each of ``rivers`` meandering rivers, an AE polygon (buffer of the river), a FLOODWAY inside it
  and a second AE polygon overlapping half of the first (so unions matter): ``1 + 3 * rivers``
  polygons (211 with the default 70 rivers), each AE outline with about 1,600 vertices;
* streams: the ``rivers`` centre lines plus ``streams - rivers`` short meandering tributaries
  (300 lines by default).

The same seed gives the same county; everything scales with the side of the grid, so 100,000 and
1,000,000 parcels get the same density of rivers per square mile times ten.
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import shapely
from shapely.geometry import LineString, box

X0, Y0 = 955_000.0, 740_000.0  # south of Vestal, NY in EPSG:2261 (US survey feet)
SRID = 2261
ACRE = 43_560.0
CELL = 100.0


def parcels_grid(n_parcels: int, rng: np.random.Generator) -> tuple[gpd.GeoDataFrame, float]:
    """``n_parcels`` jittered quadrilaterals sharing corners, and the side of the grid (ft)."""
    k = int(np.ceil(np.sqrt(n_parcels)))
    gx, gy = np.meshgrid(np.arange(k + 1) * CELL, np.arange(k + 1) * CELL)
    jit = rng.uniform(-0.25, 0.25, size=(2, k + 1, k + 1)) * CELL
    vx, vy = X0 + gx + jit[0], Y0 + gy + jit[1]
    i, j = np.divmod(np.arange(k * k), k)
    ring = np.stack([
        np.stack([vx[i, j], vy[i, j]], -1), np.stack([vx[i, j + 1], vy[i, j + 1]], -1),
        np.stack([vx[i + 1, j + 1], vy[i + 1, j + 1]], -1), np.stack([vx[i + 1, j], vy[i + 1, j]], -1),
        np.stack([vx[i, j], vy[i, j]], -1)], axis=1)[:n_parcels]
    polys = shapely.polygons(ring)
    ids = np.char.add("P", np.char.zfill(np.arange(len(polys)).astype(str), 7)).astype(object)
    return gpd.GeoDataFrame({"parcel_id": ids}, geometry=polys, crs=SRID), k * CELL


def _meander(rng: np.random.Generator, start: np.ndarray, heading: float, length: float, n: int) -> LineString:
    """A smooth wandering line of ``n`` vertices and about ``length`` ft."""
    turn = np.cumsum(rng.normal(0, 0.05, n)) + 0.4 * np.sin(np.linspace(0, rng.uniform(6, 14), n))
    ang = heading + turn - turn.mean()
    step = length / n
    xy = start + np.cumsum(np.column_stack([np.cos(ang), np.sin(ang)]) * step, axis=0)
    return LineString(np.vstack([start, xy]))


def make_county(n_parcels: int, seed: int = 1, rivers: int = 70, streams: int = 300
                ) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame, gpd.GeoDataFrame]:
    """(parcels, flood_zones, streams) of a synthetic county (see the module docstring)."""
    rng = np.random.default_rng(seed)
    parcels, side = parcels_grid(n_parcels, rng)
    geoms = [box(X0 - 500, Y0 - 500, X0 + side + 500, Y0 + side + 500)]
    zones: list[str] = ["X"]
    subty: list[str | None] = [None]
    lines = []
    scale = side / 31_700.0  # widths relative to a 100,000-parcel county (31,700 ft across)
    for _ in range(rivers):
        start = rng.uniform([X0 - 0.1 * side, Y0], [X0 + 0.6 * side, Y0 + side])
        river = _meander(rng, start, rng.uniform(-0.6, 0.6), side * rng.uniform(0.3, 0.7), 400)
        width = rng.uniform(60.0, 200.0) * max(scale, 0.3) ** 0.5
        half = box(*river.bounds).centroid.x
        geoms += [river.buffer(width, quad_segs=4), river.buffer(width * 0.4, quad_segs=4),
                  river.buffer(width * 0.8, quad_segs=4).intersection(
                      box(X0 - side, Y0 - side, half, Y0 + 2 * side))]
        zones += ["AE", "AE", "AE"]
        subty += [None, "FLOODWAY", None]
        lines.append(river)
    for _ in range(max(streams - rivers, 0)):
        start = rng.uniform([X0, Y0], [X0 + side, Y0 + side])
        lines.append(_meander(rng, start, rng.uniform(0, 2 * np.pi), rng.uniform(800, 4000), 60))
    flood = gpd.GeoDataFrame({"FLD_ZONE": zones, "ZONE_SUBTY": subty}, geometry=geoms, crs=SRID)
    flood = flood[~flood.geometry.is_empty].reset_index(drop=True)
    stream_gdf = gpd.GeoDataFrame({"kind": ["perennial"] * len(lines)}, geometry=lines, crs=SRID)
    return parcels, flood, stream_gdf


def write_county(path: str, parcels: gpd.GeoDataFrame, flood: gpd.GeoDataFrame,
                 streams: gpd.GeoDataFrame) -> None:
    """Write the three layers to a GeoPackage with role-named layers (what ``screen`` reads)."""
    for name, g in (("parcels", parcels), ("flood_zones", flood), ("streams", streams)):
        g.to_file(path, layer=name, engine="pyogrio")
