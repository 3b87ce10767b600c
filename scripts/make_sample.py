#!/usr/bin/env python
"""Generate the SYNTHETIC sample town of geoconstraints (``data/sample/``).

Usage::

    python scripts/make_sample.py [--out data/sample] [--no-check]

Deterministic: every random choice comes from ``numpy.random.default_rng(SEED)`` and the
terrain is analytic (sum of logistic hill slopes, gaussian bumps and carved valleys), so two
runs write the same features, the same DEM cells and the same CSV/README text.  The
GeoPackage timestamps are pinned with GDAL's ``OGR_CURRENT_DATE``.

Nothing here imports the ``geoconstraints`` package: the sample must not depend on the code
it is meant to test.  The town is fictitious: it sits near Vestal, NY (lat 42.085,
lon -76.054) only so that the coordinates are plausible for EPSG:2261 (NAD83 / New York
Central, US survey feet).  It is NOT real Vestal data.

Geometry is designed in a local frame (feet, origin at the south-west corner of the town
box, x east, y north, town = 16,000 x 12,000 ft) and shifted to state-plane coordinates
when written.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import itertools
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("OGR_CURRENT_DATE", "2025-01-01T00:00:00Z")  # reproducible GPKG

import geopandas as gpd
import rasterio
import shapely
from pyproj import Transformer
from rasterio import features
from rasterio.transform import from_origin
from scipy import ndimage
from shapely.geometry import LineString, Point, Polygon, box, shape
from shapely.ops import substring, unary_union

SEED = 20250611
CRS = "EPSG:2261"
SQFT_PER_ACRE = 43560.0
CENTER_LONLAT = (-76.054, 42.085)

TOWN_W, TOWN_H = 16000.0, 12000.0  # local town box (ft)
MARGIN = 1000.0  # DEM margin around the town (ft)
CELL = 10.0  # DEM cell (ft)
X0, Y1 = -MARGIN, TOWN_H + MARGIN  # DEM upper-left corner, local frame
NCOLS = int((TOWN_W + 2 * MARGIN) / CELL)
NROWS = int((TOWN_H + 2 * MARGIN) / CELL)
LOCAL_TRANSFORM = from_origin(X0, Y1, CELL, CELL)

FLOOD_COVER_X = 12000.0  # the flood layers cover local x in [0, 12000]: the east is unmapped
DFIRM_ID = "36007C"
BFE_ABOVE_WS = 9.0  # effective BFE = normal water surface + 9 ft
FLOODWAY_BELOW_BFE = 5.0  # floodway = ground <= BFE - 5 ft (connected to the river)
XSHADED_ABOVE_BFE = 1.5  # 0.2 % chance flood = BFE + 1.5 ft

# --------------------------------------------------------------------------------------
# terrain (local frame, feet)
# --------------------------------------------------------------------------------------


def sig(t):
    return 1.0 / (1.0 + np.exp(-t))


def river_y(x):
    """Main river centre line (flows west)."""
    return 8500.0 + 250.0 * np.sin(2 * np.pi * np.asarray(x, float) / 8000.0 + 0.5)


def river_dydx(x):
    return 250.0 * 2 * np.pi / 8000.0 * np.cos(2 * np.pi * np.asarray(x, float) / 8000.0 + 0.5)


def water_surface(x):
    """Normal water surface of the main river (ft NAVD88), rising upstream (east)."""
    return 835.0 + 0.0008 * (np.asarray(x, float) + 1000.0)


def bfe_effective(x):
    return water_surface(x) + BFE_ABOVE_WS


def smoothstep(t):
    t = np.clip(t, 0.0, 1.0)
    return t * t * (3 - 2 * t)


def bfe_preliminary(x):
    """Preliminary revision: +2 ft in reach x 1500..4500 (wider AE), -2 ft in x 7000..10000."""
    x = np.asarray(x, float)
    up = smoothstep((x - 1000) / 500) * (1 - smoothstep((x - 4500) / 500))
    down = smoothstep((x - 6500) / 500) * (1 - smoothstep((x - 10000) / 500))
    return bfe_effective(x) + 2.0 * up - 2.0 * down


def hill_south(x, y):
    v = np.maximum(0.0, 7200.0 - y)
    h = 400.0 + 30.0 * np.sin(2 * np.pi * x / 7000.0)
    w = 260.0 + 60.0 * np.sin(2 * np.pi * (x - 2000.0) / 10000.0)
    v0 = 3000.0
    return h * (sig((v - v0) / w) - sig(-v0 / w)) + 0.005 * v


def hill_north(x, y):
    v = np.maximum(0.0, y - 9800.0)
    h, w, v0 = 230.0, 350.0, 1000.0
    return h * (sig((v - v0) / w) - sig(-v0 / w)) + 0.008 * v


def floodplain(x, y):
    d = np.abs(y - river_y(x))
    dc = 2080.0 * np.tanh(d / 2080.0)
    return 2.0 + 10.0 * (dc / 1300.0) ** 1.5 - 10.0 * np.exp(-((d / 90.0) ** 2))


BUMPS = [  # (x, y, amplitude ft, sigma ft)
    (2000, 1000, 60, 700),
    (3200, 1300, 130, 150),  # steep knob (> 40 %)
    (13300, 900, 90, 800),
    (7800, 700, 70, 600),
    (4000, 11900, 90, 900),
    (12200, 11600, 110, 700),
    (15000, 10800, 60, 500),
]
POND = (4800.0, 800.0, -22.0, 220.0)  # closed depression on the plateau (AE with static BFE)


# tributaries: name, kind, x(y) function, y_head, flows ('N' = north to the river, 'S')
def _mill(y):
    return 11000.0 + 70.0 * np.sin(2 * np.pi * (np.asarray(y, float) - 600.0) / 2400.0)


def _sample_creek(y):
    return 6000.0 + 150.0 * np.sin(2 * np.pi * np.asarray(y, float) / 3000.0)


def _west_int(y):
    return 2500.0 + 80.0 * np.sin(2 * np.pi * np.asarray(y, float) / 2000.0)


def _mill_int(y):
    return 12150.0 + 40.0 * np.sin(2 * np.pi * np.asarray(y, float) / 1800.0)


def _east_int(y):
    return 14200.0 + 100.0 * np.sin(2 * np.pi * np.asarray(y, float) / 2600.0)


def _north_int(y):
    return 8000.0 + 60.0 * np.sin(2 * np.pi * np.asarray(y, float) / 1500.0)


TRIBS = [
    # id, name, kind, fx, y_head, flow, d0, dcap, k, width
    ("ST-2", "Mill Brook", "perennial", _mill, 600.0, "N", 5.0, 35.0, 0.3, 150.0),
    ("ST-3", "Sample Creek", "perennial", _sample_creek, -1200.0, "N", 6.0, 45.0, 0.3, 230.0),
    ("ST-4", "West Run (intermittent)", "intermittent", _west_int, 5600.0, "N", 3.0, 17.0, 0.2, 120.0),
    (
        "ST-5",
        "Mill Brook tributary (intermittent)",
        "intermittent",
        _mill_int,
        2900.0,
        "N",
        3.0,
        12.0,
        0.15,
        110.0,
    ),
    ("ST-6", "East Run (intermittent)", "intermittent", _east_int, 2800.0, "N", 3.0, 22.0, 0.2, 140.0),
    ("ST-7", "North Run (intermittent)", "intermittent", _north_int, 13200.0, "S", 3.0, 22.0, 0.2, 140.0),
]


def trib_line(fx, y_head, flow, step=10.0):
    """Tributary centre line from its head to the main river centre line."""
    if flow == "N":
        ys = np.arange(y_head, 9000.0, step)
        xs = fx(ys)
        stop = np.flatnonzero(ys >= river_y(xs))[0]
    else:
        ys = np.arange(y_head, 8000.0, -step)
        xs = fx(ys)
        stop = np.flatnonzero(ys <= river_y(xs))[0]
    # refine the mouth on the river line
    ya, yb = ys[stop - 1], ys[stop]
    for _ in range(40):
        ym = 0.5 * (ya + yb)
        inside = (ym >= river_y(fx(ym))) if flow == "N" else (ym <= river_y(fx(ym)))
        if inside:
            yb = ym
        else:
            ya = ym
    xs = np.append(xs[:stop], fx(yb))
    ys = np.append(ys[:stop], yb)
    return LineString(np.column_stack([xs, ys]))


def grid_centres():
    xs = X0 + CELL / 2 + CELL * np.arange(NCOLS)
    ys = Y1 - CELL / 2 - CELL * np.arange(NROWS)
    return np.meshgrid(xs, ys)


def line_distance_grid(line, max_dist=900.0):
    """Exact distance (ft) from every cell centre to a line (inf beyond max_dist)."""
    mask = features.rasterize(
        [(line, 1)], out_shape=(NROWS, NCOLS), transform=LOCAL_TRANSFORM, all_touched=True, dtype="uint8"
    )
    approx = ndimage.distance_transform_edt(mask == 0, sampling=CELL)
    near = approx <= max_dist
    rr, cc = np.nonzero(near)
    px = X0 + CELL / 2 + CELL * cc
    py = Y1 - CELL / 2 - CELL * rr
    out = np.full((NROWS, NCOLS), np.inf)
    out[rr, cc] = shapely.distance(shapely.points(px, py), line)
    return out


def build_dem():
    X, Y = grid_centres()
    hs = hill_south(X, Y)
    hn = hill_north(X, Y)
    z = water_surface(X) + floodplain(X, Y) + hs + hn
    for bx, by, amp, sg in BUMPS + [POND]:
        z += amp * np.exp(-((X - bx) ** 2 + (Y - by) ** 2) / (2 * sg * sg))
    lines = {}
    for tid, name, kind, fx, y_head, flow, d0, dcap, k, width in TRIBS:
        line = trib_line(fx, y_head, flow)
        lines[tid] = line
        dist = line_distance_grid(line, max_dist=4 * width)
        hill = hs if flow == "N" else hn
        ramp = smoothstep((Y - y_head) / 400.0) if flow == "N" else smoothstep((y_head - Y) / 400.0)
        depth = (d0 + np.minimum(dcap, k * hill)) * ramp
        carve = np.where(np.isfinite(dist), depth * np.exp(-((dist / width) ** 2)), 0.0)
        z -= carve
    # quantise to 1/32 ft: exact binary fractions compress well (DEFLATE + predictor 3)
    z = np.round(z * 32.0) / 32.0
    return z, lines


class Sampler:
    """Bilinear DEM sampler in the local frame (cell centres as nodes)."""

    def __init__(self, z):
        self.z = z

    def __call__(self, x, y):
        x = np.asarray(x, float)
        y = np.asarray(y, float)
        c = (x - X0) / CELL - 0.5
        r = (Y1 - y) / CELL - 0.5
        c0 = np.clip(np.floor(c).astype(int), 0, NCOLS - 2)
        r0 = np.clip(np.floor(r).astype(int), 0, NROWS - 2)
        fc = c - c0
        fr = r - r0
        z = self.z
        return (1 - fr) * ((1 - fc) * z[r0, c0] + fc * z[r0, c0 + 1]) + fr * (
            (1 - fc) * z[r0 + 1, c0] + fc * z[r0 + 1, c0 + 1]
        )


def densify(line, step=5.0):
    n = max(2, math.ceil(line.length / step) + 1)
    d = np.linspace(0.0, line.length, n)
    pts = shapely.line_interpolate_point(line, d)
    return d, shapely.get_x(pts), shapely.get_y(pts)


def grade_profile(sampler, line, step=5.0):
    """Horizontal chainage, elevations and per-step grades (fraction) along a line."""
    d, xs, ys = densify(line, step)
    zz = sampler(xs, ys)
    g = np.diff(zz) / np.diff(d)
    return d, zz, g


def longest_run(d, g, thr):
    """Longest horizontal run (ft) where |grade| > thr, with its start/end chainage and mean/max grade."""
    best = (0.0, 0.0, 0.0, 0.0, 0.0)
    steep = np.abs(g) > thr
    i = 0
    n = len(g)
    while i < n:
        if steep[i]:
            j = i
            while j < n and steep[j]:
                j += 1
            length = d[j] - d[i]
            if length > best[0]:
                seg = np.abs(g[i:j])
                best = (length, d[i], d[j], float(seg.mean()), float(seg.max()))
            i = j
        else:
            i += 1
    return best


def contour_y(sampler, x, level, ylo, yhi):
    """y where z(x, y) = level, z decreasing with y on [ylo, yhi] (vectorised bisection)."""
    x = np.asarray(x, float)
    lo = np.full_like(x, ylo)
    hi = np.full_like(x, yhi)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        above = sampler(x, mid) > level
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return 0.5 * (lo + hi)


def descend_at_grade(sampler, start, grade, y_stop, step=10.0):
    """Path going north-west from ``start`` losing ``grade`` x step per step until y >= y_stop."""
    pts = [tuple(start)]
    x, y = start
    for _ in range(2000):
        z0 = float(sampler(x, y))
        target = z0 - grade * step

        def zat(phi, x=x, y=y):
            return float(sampler(x + step * math.cos(phi), y + step * math.sin(phi)))

        a, b = math.pi / 2, math.pi  # north .. west
        if zat(a) >= target:
            phi = a
        else:
            for _ in range(40):
                m = 0.5 * (a + b)
                if zat(m) > target:
                    b = m
                else:
                    a = m
            phi = 0.5 * (a + b)
        nx, ny = x + step * math.cos(phi), y + step * math.sin(phi)
        if ny >= y_stop:
            t = (y_stop - y) / (ny - y)
            pts.append((x + t * (nx - x), y_stop))
            break
        pts.append((nx, ny))
        x, y = nx, ny
    return pts


# --------------------------------------------------------------------------------------
# vector design
# --------------------------------------------------------------------------------------


def river_line(x_from=0.0, x_to=TOWN_W, step=20.0):
    xs = np.arange(x_from, x_to + step / 2, step)
    return LineString(np.column_stack([xs, river_y(xs)]))


def zoning_districts():
    xs = np.arange(0.0, TOWN_W + 1, 20.0)
    riv = list(zip(xs, river_y(xs)))
    south = Polygon([(0.0, 6300.0)] + riv + [(TOWN_W, 6300.0)])
    north = Polygon(riv + [(TOWN_W, 10600.0), (0.0, 10600.0)])
    c1 = box(3000, 6800, 8000, 7700)
    parts = [
        ("RC", box(0, 10600, TOWN_W, TOWN_H)),
        ("R-1", north.intersection(box(0, 0, 6500, TOWN_H))),
        ("R-2", north.intersection(box(6500, 0, 11000, TOWN_H))),
        ("RA-2", north.intersection(box(11000, 0, TOWN_W, TOWN_H))),
        ("C-1", c1),
        ("R-1", south.intersection(box(0, 0, 11000, TOWN_H)).difference(c1)),
        ("RA-2", south.intersection(box(11000, 0, TOWN_W, TOWN_H))),
        ("RR", box(0, 2500, TOWN_W, 6300)),
        ("RA-1", box(0, 0, 8000, 2500)),
        ("RA-2", box(8000, 0, TOWN_W, 2500)),
    ]
    return [(d, shapely.make_valid(g)) for d, g in parts]


LOT_ACRES = {"R-1": 0.4, "R-2": 0.6, "C-1": 1.0, "RR": 4.0, "RA-1": 20.0, "RA-2": 18.0, "RC": 14.0}
HARVEST_PARCELS = [box(10100, 2500, 11300, 4900), box(11300, 2500, 12400, 4900)]


def voronoi_cells(region, spacing, rng, jitter=0.38):
    minx, miny, maxx, maxy = region.bounds
    gx, gy = np.meshgrid(
        np.arange(minx + spacing / 2, maxx, spacing), np.arange(miny + spacing / 2, maxy, spacing)
    )
    gx = gx.ravel() + rng.uniform(-jitter, jitter, gx.size) * spacing
    gy = gy.ravel() + rng.uniform(-jitter, jitter, gy.size) * spacing
    keep = shapely.contains_xy(region, gx, gy)
    gx, gy = gx[keep], gy[keep]
    if gx.size < 2:
        return [region]
    vor = shapely.voronoi_polygons(
        shapely.multipoints(np.column_stack([gx, gy])), extend_to=region.envelope.buffer(4 * spacing)
    )
    cells = shapely.intersection(shapely.get_parts(vor), region)
    out = []
    for c in cells:
        c = shapely.make_valid(c)
        for p in shapely.get_parts(c):
            if p.geom_type == "Polygon" and p.area > 0:
                out.append(p)
    # merge slivers into the neighbour with the longest shared edge
    min_area = 0.25 * spacing * spacing
    changed = True
    while changed:
        changed = False
        areas = np.array([p.area for p in out])
        small = [i for i in np.argsort(areas) if areas[i] < min_area]
        if not small or len(out) < 2:
            break
        i = small[0]
        tree = shapely.STRtree(out)
        cand = [j for j in tree.query(out[i], predicate="intersects") if j != i]
        best, blen = None, 0.0
        for j in cand:
            ln = out[i].boundary.intersection(out[j].boundary).length
            if ln > blen:
                best, blen = j, ln
        if best is None:
            break
        merged = shapely.make_valid(out[best].union(out[i]))
        if merged.geom_type != "Polygon":
            break
        out[best] = merged
        del out[i]
        changed = True
    return out


FIRST = [
    "James",
    "Mary",
    "Robert",
    "Linda",
    "Michael",
    "Susan",
    "David",
    "Karen",
    "Thomas",
    "Nancy",
    "Daniel",
    "Lisa",
    "Paul",
    "Donna",
    "Mark",
    "Carol",
    "Steven",
    "Ruth",
    "Kevin",
    "Diane",
]
LAST = [
    "Miller",
    "Kowalski",
    "Hughes",
    "Brennan",
    "Fiorentino",
    "Novak",
    "Sullivan",
    "Whitcomb",
    "Dudek",
    "Hamlin",
    "Ostrander",
    "Pasquale",
    "Yurkewecz",
    "Carver",
    "Delaney",
    "Bartholf",
    "Lindqvist",
    "Marsh",
    "Petrosky",
    "Vandermark",
    "Osborne",
    "Truesdell",
    "Haskins",
    "Zabel",
    "Coddington",
]
LAND_USE = {  # district -> (values, probabilities)
    "R-1": (["residential", "vacant", "commercial"], [0.9, 0.08, 0.02]),
    "R-2": (["residential", "vacant"], [0.88, 0.12]),
    "C-1": (["commercial", "vacant", "residential"], [0.8, 0.1, 0.1]),
    "RR": (["residential", "forest", "vacant", "agricultural"], [0.5, 0.3, 0.15, 0.05]),
    "RA-1": (["agricultural", "forest", "residential"], [0.6, 0.3, 0.1]),
    "RA-2": (["agricultural", "forest", "residential"], [0.6, 0.25, 0.15]),
    "RC": (["forest", "residential", "vacant"], [0.6, 0.2, 0.2]),
}
HARVEST_OWNER = "Hillside Timber Holdings LLC"
ESCAPE_OWNER = "Smith & Sons <LLC>"

ROADS = [  # id, name, width, coordinates (local)
    ("R-01", "River Road", 66, [(0, 7250), (TOWN_W, 7250)]),
    ("R-02", "North Road", 50, [(0, 10300), (TOWN_W, 10300)]),
    ("R-03", "Hillside Road", 50, [(0, 4900), (TOWN_W, 4900)]),
    ("R-04", "Ridge Road", 50, [(0, 1900), (TOWN_W, 1900)]),
    ("R-05", "Creek Road", 50, None),  # follows Sample Creek 110 ft east of it
    ("R-06", "Bridge Street", 66, [(3500, 7250), (3500, 10300)]),
    ("R-07", "East Hill Road", 50, [(14550, 1900), (14550, 7250)]),
    ("R-08", "Elm Street", 50, [(300, 7800), (3500, 7800)]),
    ("R-09", "Maple Avenue", 50, [(1800, 7250), (1800, 8100)]),
    ("R-10", "Oak Street", 50, [(500, 9300), (6500, 9300)]),
    ("R-11", "West Lane", 50, [(1000, 9300), (1000, 10300)]),
]

HARVEST_AREAS = [  # id, polygon, parcel index in HARVEST_PARCELS, cords, cubic ft, board ft
    ("HA-1", box(10250, 2560, 11300, 4840), 0, 45.0, 5760.0, 22500.0),
    ("HA-2", box(11300, 2560, 12340, 4840), 1, 12.0, 1536.0, 6000.0),
]
L1 = box(11850, 2950, 11950, 3050)
L3 = box(11500, 4680, 11600, 4780)
HILLSIDE_Y = 4900.0

DWELLINGS_DESIGNED = [  # id, x, y, note
    ("DW-001", 12430.0, 3600.0, "RR dwelling 90 ft east of HA-2: 100-ft buffer reaches the harvest"),
    ("DW-002", 12800.0, 4000.0, "RR dwelling ~460 ft from the harvest: buffer does not reach it"),
    ("DW-003", 11800.0, 2470.0, "RA-2 dwelling 90 ft south of HA-2: not in RR, so no HRV-022 buffer"),
]

DIST_ORIGIN = (7000.0, 9500.0)
PHASES = [  # id, phase, local rectangle (relative), start, stabilized
    ("DP-1", 1, (0, 0, 320, 280), "2025-04-07", "2025-07-14"),
    ("DP-2", 2, (280, 0, 600, 280), "2025-05-05", "2025-08-25"),
    ("DP-3", 3, (0, 280, 320, 580), "2025-06-16", "2025-09-29"),
    ("DP-4", 4, (280, 260, 600, 580), "2025-08-04", "2025-10-27"),
]
RAIN_START, RAIN_END = dt.date(2025, 4, 1), dt.date(2025, 10, 31)
STORMS = {  # designed daily totals (in)
    "2025-04-22": 0.49,
    "2025-05-14": 0.50,
    "2025-06-10": 0.80,
    "2025-07-02": 0.30,
    "2025-07-03": 0.30,
    "2025-08-12": 1.20,
}
FOOTPRINTS = [  # id, use, local box, note
    ("FP-1", "residential", (5300, 8980, 5360, 9020), "AE zone, 50 ft east of the BFE 849 line"),
    ("FP-2", "residential", (1970, 8490, 2030, 8540), "in the regulatory floodway"),
]


# --------------------------------------------------------------------------------------
# builders
# --------------------------------------------------------------------------------------


def build_parcels(rng, zoning):
    region_parts = []
    for district, geom in zoning:
        if district == "RR":
            geom = geom.difference(unary_union(HARVEST_PARCELS))
        region_parts.append((district, geom))
    cells = []
    for district, geom in region_parts:
        spacing = math.sqrt(LOT_ACRES[district] * SQFT_PER_ACRE)
        for p in voronoi_cells(geom, spacing, rng):
            cells.append((district, p, False))
    for hp in HARVEST_PARCELS:
        cells.append(("RR", hp, True))
    geoms = [shapely.set_precision(c[1], 0.01) for c in cells]
    geoms = [shapely.make_valid(g) for g in geoms]
    cent = shapely.centroid(geoms)
    # ids: section from 2,000-ft tiles, block from 500-ft sub-tiles, lot running number
    cx, cy = shapely.get_x(cent), shapely.get_y(cent)
    col = np.clip((cx // 2000).astype(int), 0, 7)
    row = np.clip((cy // 2000).astype(int), 0, 5)
    section = 1001 + row * 8 + col
    block = 1 + ((cx % 2000) // 500).astype(int) + 4 * ((cy % 2000) // 500).astype(int)
    order = np.lexsort((np.round(cx, 1), -np.round(cy, 1), block, section))
    counters = {}
    ids = [None] * len(geoms)
    for i in order:
        key = (section[i], block[i])
        counters[key] = counters.get(key, 0) + 1
        ids[i] = f"{section[i]}.-{block[i]}-{counters[key]}"
    # zoning of the centroid
    zgeoms = [g for _, g in zoning]
    zdist = [d for d, _ in zoning]
    tree = shapely.STRtree(zgeoms)
    pi, zi = tree.query(cent, predicate="intersects")
    zone_of = {}
    for a, b in zip(pi, zi):
        zone_of.setdefault(a, zdist[b])
    zones = [zone_of.get(i, cells[i][0]) for i in range(len(geoms))]
    land_use, owners = [], []
    for i, (district, _, is_harvest) in enumerate(cells):
        if is_harvest:
            land_use.append("forest")
            owners.append(HARVEST_OWNER)
            continue
        vals, probs = LAND_USE[zones[i]]
        land_use.append(str(rng.choice(vals, p=probs)))
        owners.append(f"{FIRST[rng.integers(len(FIRST))]} {LAST[rng.integers(len(LAST))]}")
    gdf = gpd.GeoDataFrame(
        {"parcel_id": ids, "zoning": zones, "land_use": land_use, "owner": owners}, geometry=geoms, crs=None
    )
    # one owner that needs HTML escaping, on a commercial parcel in C-1
    c1 = gdf.index[(gdf.zoning == "C-1")]
    gdf.loc[c1[len(c1) // 2], ["owner", "land_use"]] = [ESCAPE_OWNER, "commercial"]
    r1 = gdf.index[(gdf.zoning == "R-1")]
    gdf.loc[r1[len(r1) // 3], "owner"] = 'O\'Brien "Riverside" Trust'
    gdf = gdf.iloc[np.lexsort((gdf.parcel_id.str.len(), gdf.parcel_id))].reset_index(drop=True)
    gdf = gdf.sort_values("parcel_id", key=lambda s: s.map(_sbl_key)).reset_index(drop=True)
    return gdf


def _sbl_key(s):
    a, b, c = s.replace(".-", "-").split("-")
    return (int(a), int(b), int(c))


def connected_to(mask, seeds):
    lab, _ = ndimage.label(mask)
    keep = np.unique(lab[seeds & mask])
    keep = keep[keep > 0]
    return np.isin(lab, keep)


def flood_label(z, bfe_fn, tribs):
    """Label raster of flood zones on the DEM grid (0 = outside the flood layer's coverage)."""
    X, Y = grid_centres()
    cover = (X > 0) & (X < FLOOD_COVER_X) & (Y > 0) & (Y < TOWN_H)
    bfe = bfe_fn(X)
    d = np.abs(Y - river_y(X))
    seeds = (d < 15) & cover
    xs_mask = connected_to((z <= bfe + XSHADED_ABOVE_BFE) & cover, seeds)
    ae_mask = connected_to((z <= bfe) & cover, seeds)
    fw_mask = connected_to((z <= bfe - FLOODWAY_BELOW_BFE) & cover, seeds)
    lab = np.where(cover, 8, 0).astype(np.int32)
    # unnumbered A along the lower reach of Sample Creek: valley floor within 5 ft of the creek
    creek = tribs["ST-3"]
    dist = line_distance_grid(creek, max_dist=400)
    zc = Sampler(z)(_sample_creek(Y), Y)
    a_mask = (dist <= 300) & (z <= zc + 5.0) & (Y >= 4000) & cover
    a_mask = connected_to(a_mask, (dist <= 15) & a_mask)
    # ponding AE with a static BFE
    px, py = POND[0], POND[1]
    pr, pc = int((Y1 - py) // CELL), int((px - X0) // CELL)
    win = z[pr - 30 : pr + 31, pc - 30 : pc + 31]
    zmin = win.min()
    seed = np.zeros_like(cover)
    seed[pr - 30 : pr + 31, pc - 30 : pc + 31] = win <= zmin
    near = (np.abs(X - px) < 700) & (np.abs(Y - py) < 700)
    spill = zmin
    while True:  # highest level whose connected water body stays in the depression
        m = connected_to((z <= spill + 0.25) & cover, seed)
        if (m & ~near).any():
            break
        spill += 0.25
    static_bfe = float(math.floor(spill - 1.0))
    pond_mask = connected_to((z <= static_bfe) & cover, seed)
    lab[xs_mask] = 5
    lab[a_mask & ~ae_mask] = 3
    lab[ae_mask] = 2
    lab[fw_mask] = 1
    lab[pond_mask] = 4
    lab[(X > 8500) & (Y > 11000) & (lab == 8)] = 6  # D
    lab[(X < 1500) & (Y > 10900) & (lab == 8)] = 7  # AREA NOT INCLUDED
    return lab, static_bfe


ZONE_ATTRS = {
    1: ("AE", "FLOODWAY", "T"),
    2: ("AE", None, "T"),
    3: ("A", None, "T"),
    4: ("AE", None, "T"),
    5: ("X", "0.2 PCT ANNUAL CHANCE FLOOD HAZARD", "F"),
    6: ("D", None, "F"),
    7: ("AREA NOT INCLUDED", None, "F"),
    8: ("X", "AREA OF MINIMAL FLOOD HAZARD", "F"),
}


def vectorize_flood(lab, static_bfe, eff_date, id_base):
    geoms, codes = [], []
    for g, v in features.shapes(lab, mask=lab > 0, transform=LOCAL_TRANSFORM, connectivity=4):
        geoms.append(shape(g))
        codes.append(int(v))
    geoms = shapely.coverage_simplify(np.array(geoms, dtype=object), tolerance=7.0)
    geoms = [shapely.make_valid(g) for g in geoms]
    rows = []
    for g, code in zip(geoms, codes):
        for p in shapely.get_parts(g):
            if p.geom_type != "Polygon" or p.area < 1.0:
                continue
            rows.append((code, p))
    rows.sort(key=lambda r: (r[0], -r[1].area))
    recs = []
    for k, (code, p) in enumerate(rows):
        zone, sub, sfha = ZONE_ATTRS[code]
        recs.append(
            {
                "DFIRM_ID": DFIRM_ID,
                "FLD_AR_ID": f"{DFIRM_ID}_{id_base + k}",
                "FLD_ZONE": zone,
                "ZONE_SUBTY": sub,
                "SFHA_TF": sfha,
                "STATIC_BFE": static_bfe if code == 4 else -9999.0,
                "DEPTH": -9999.0,
                "V_DATUM": "NAVD88",
                "LEN_UNIT": "Feet",
                "SOURCE_CIT": f"{DFIRM_ID}_FIS1" if eff_date < "2020" else f"{DFIRM_ID}_PRELIM1",
                "EFF_DATE": eff_date,
                "geometry": p,
            }
        )
    return gpd.GeoDataFrame(recs, geometry="geometry", crs=None)


def build_bfe_lines(flood_eff):
    sfha = flood_eff[(flood_eff.FLD_ZONE == "AE") & (flood_eff.STATIC_BFE == -9999.0)]
    riverine = shapely.make_valid(unary_union(list(sfha.geometry)))
    recs = []
    lo = math.ceil(float(bfe_effective(0.0)))
    hi = math.floor(float(bfe_effective(FLOOD_COVER_X)))
    for k, elev in enumerate(range(lo, hi + 1)):
        x = (elev - float(bfe_effective(0.0))) / 0.0008
        y = float(river_y(x))
        t = np.array([1.0, float(river_dydx(x))])
        t /= np.linalg.norm(t)
        n = np.array([-t[1], t[0]])
        ln = LineString([(x - 2500 * n[0], y - 2500 * n[1]), (x + 2500 * n[0], y + 2500 * n[1])])
        piece = ln.intersection(riverine)
        parts = [p for p in shapely.get_parts(piece) if p.geom_type == "LineString"]
        parts = [p for p in parts if p.distance(Point(x, y)) < 1.0]
        if not parts:
            continue
        recs.append(
            {
                "BFE_LN_ID": f"{DFIRM_ID}_{5001 + k}",
                "ELEV": float(elev),
                "LEN_UNIT": "Feet",
                "V_DATUM": "NAVD88",
                "DFIRM_ID": DFIRM_ID,
                "geometry": parts[0],
            }
        )
    return gpd.GeoDataFrame(recs, geometry="geometry", crs=None)


def build_critical_slopes(z):
    gy, gx = np.gradient(z, CELL)
    slope = np.hypot(gx, gy)
    X, Y = grid_centres()
    town = (X > 0) & (X < TOWN_W) & (Y > 0) & (Y < TOWN_H)
    mask = (slope > 0.25) & town
    lab, n = ndimage.label(mask)
    sizes = ndimage.sum(mask, lab, index=np.arange(1, n + 1))
    big = np.isin(lab, np.flatnonzero(sizes >= 100) + 1)
    holes = ndimage.binary_fill_holes(big) & ~big
    hl, hn = ndimage.label(holes)
    hsz = ndimage.sum(holes, hl, index=np.arange(1, hn + 1))
    big |= np.isin(hl, np.flatnonzero(hsz < 100) + 1)  # fill only tiny holes
    geoms = [shape(g) for g, v in features.shapes(big.astype(np.uint8), mask=big, transform=LOCAL_TRANSFORM)]
    out = []
    for g in geoms:
        g = shapely.make_valid(g.simplify(5.0, preserve_topology=True))
        for p in shapely.get_parts(g):
            if p.geom_type == "Polygon" and p.area >= 10000.0:
                out.append(p)
    out.sort(key=lambda p: (-p.centroid.y, p.centroid.x))
    return gpd.GeoDataFrame({"id": [f"CS-{i + 1:03d}" for i in range(len(out))]}, geometry=out, crs=None)


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "data" / "sample"))
    ap.add_argument("--no-check", action="store_true", help="skip the read-back checks")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    rng = np.random.default_rng(SEED)

    xc, yc = Transformer.from_crs("EPSG:4326", CRS, always_xy=True).transform(*CENTER_LONLAT)
    ox = round(xc - TOWN_W / 2, -2)
    oy = round(yc - TOWN_H / 2, -2)

    # ---- DEM --------------------------------------------------------------------------
    z, trib_lines = build_dem()
    S = Sampler(z)
    facts = {"origin": (ox, oy)}

    # ---- streams ----------------------------------------------------------------------
    town = box(0, 0, TOWN_W, TOWN_H)
    main_river = LineString(list(river_line(-1000, TOWN_W + 1000).coords)[::-1])  # digitised downstream
    stream_recs = [("ST-1", "Sample River", "perennial", main_river.intersection(town))]
    for tid, name, kind, *_ in TRIBS:
        stream_recs.append((tid, name, kind, trib_lines[tid].intersection(town)))
    streams = gpd.GeoDataFrame(
        {
            "id": [r[0] for r in stream_recs],
            "name": [r[1] for r in stream_recs],
            "kind": [r[2] for r in stream_recs],
            "FCODE": [46006 if r[2] == "perennial" else 46003 for r in stream_recs],
        },
        geometry=[shapely.line_merge(r[3]) for r in stream_recs],
        crs=None,
    )
    mill = streams.geometry[streams.id == "ST-2"].iloc[0]

    # ---- zoning + parcels -------------------------------------------------------------
    zoning_parts = zoning_districts()
    zoning = gpd.GeoDataFrame(
        {
            "id": [f"Z-{i + 1:02d}" for i in range(len(zoning_parts))],
            "district": [d for d, _ in zoning_parts],
        },
        geometry=[g for _, g in zoning_parts],
        crs=None,
    )
    parcels = build_parcels(rng, zoning_parts)
    hp_ids = []
    for hp in HARVEST_PARCELS:
        hit = parcels.index[parcels.geometry.symmetric_difference(hp).area < 1.0]
        hp_ids.append(parcels.parcel_id[hit[0]])

    # ---- flood ------------------------------------------------------------------------
    lab_e, static_bfe = flood_label(z, bfe_effective, trib_lines)
    lab_p, _ = flood_label(z, bfe_preliminary, trib_lines)
    flood = vectorize_flood(lab_e, static_bfe, "2010-06-16", 1001)
    flood_p = vectorize_flood(lab_p, static_bfe, "2027-01-01", 7001)
    bfe_lines = build_bfe_lines(flood)
    facts["static_bfe"] = static_bfe

    # ---- stream corridor, critical slopes ---------------------------------------------
    corr = unary_union(
        [
            main_river.buffer(300),
            streams.geometry[streams.id == "ST-2"].iloc[0].buffer(200),
            streams.geometry[streams.id == "ST-3"].iloc[0].buffer(200),
        ]
    ).intersection(town)
    corr_parts = sorted(shapely.get_parts(shapely.make_valid(corr)), key=lambda p: -p.area)
    stream_corridor = gpd.GeoDataFrame(
        {"id": [f"SC-{i + 1}" for i in range(len(corr_parts))]}, geometry=list(corr_parts), crs=None
    )
    critical = build_critical_slopes(z)

    # ---- roads + right-of-way ---------------------------------------------------------
    road_recs = []
    for rid, name, width, coords in ROADS:
        if coords is None:
            ys = np.arange(0.0, 7250.0 + 1, 50.0)
            coords = list(zip(_sample_creek(ys) + 110.0, ys))
        road_recs.append((rid, name, width, LineString(coords)))
    roads = gpd.GeoDataFrame(
        {
            "id": [r[0] for r in road_recs],
            "name": [r[1] for r in road_recs],
            "row_width_ft": [float(r[2]) for r in road_recs],
        },
        geometry=[r[3] for r in road_recs],
        crs=None,
    )
    row = gpd.GeoDataFrame(
        {
            "id": [f"ROW-{r[0]}" for r in road_recs],
            "road_id": [r[0] for r in road_recs],
            "name": [r[1] for r in road_recs],
        },
        geometry=[r[3].buffer(r[2] / 2.0, cap_style="flat").intersection(town) for r in road_recs],
        crs=None,
    )

    # ---- harvest plan -----------------------------------------------------------------
    harvest = gpd.GeoDataFrame(
        {
            "id": [h[0] for h in HARVEST_AREAS],
            "parcel_id": [hp_ids[h[2]] for h in HARVEST_AREAS],
            "cords": [h[3] for h in HARVEST_AREAS],
            "cubic_feet": [h[4] for h in HARVEST_AREAS],
            "board_feet": [h[5] for h in HARVEST_AREAS],
        },
        geometry=[h[1] for h in HARVEST_AREAS],
        crs=None,
    )

    # contour haul road H-2: pick the level where the lower flank at x=10,600 is ~28 % steep
    ys = np.arange(HILLSIDE_Y, 3500.0, -5.0)
    zz = S(np.full_like(ys, 10600.0), ys)
    slope_y = -np.gradient(zz, ys)
    i28 = np.flatnonzero(slope_y >= 0.28)[0]
    level = float(round(zz[i28]))
    # where Mill Brook's channel is at that level
    _, xm, ym = densify(mill, 2.0)
    zm = S(xm, ym)
    kx = np.flatnonzero(zm <= level)[0]
    cx = xm[kx] + 85.0  # 85 ft east of where the brook's channel is at the contour level
    cy = float(contour_y(S, [cx], level, 3800.0, HILLSIDE_Y)[0])
    L2 = box(cx - 50, cy - 50, cx + 50, cy + 50)
    cxs = np.arange(cx, 10350.0 - 0.1, -1.0)
    cys = contour_y(S, cxs, level, 3800.0, HILLSIDE_Y)
    contour = LineString(np.column_stack([cxs, cys])).simplify(0.05)
    contour_pts = [tuple(c) for c in np.round(np.asarray(contour.coords), 2)]
    descent = descend_at_grade(S, contour_pts[-1], 0.12, HILLSIDE_Y)
    h2 = LineString(contour_pts + descent[1:])
    h1 = LineString([(11900.0, 3050.0), (11900.0, HILLSIDE_Y)])
    h3 = LineString([(11550.0, 4780.0), (11550.0, HILLSIDE_Y)])
    landings = gpd.GeoDataFrame({"id": ["L-1", "L-2", "L-3"]}, geometry=[L1, L2, L3], crs=None)
    haul = gpd.GeoDataFrame(
        {"id": ["H-1", "H-2", "H-3"], "landing_id": ["L-1", "L-2", "L-3"]}, geometry=[h1, h2, h3], crs=None
    )
    facts["contour_level"] = level
    facts["h2_contour_len"] = LineString(contour_pts).length

    # skid trails
    ys1 = np.arange(3300.0, 3560.0 + 0.1, 10.0)
    s1 = LineString([(11200.0, 3260.0)] + list(zip(_mill(ys1) + 4.0, ys1)) + [(11200.0, 3600.0)])
    s2 = LineString([(10450.0, 3000.0), (11850.0, 3000.0)])
    s3 = LineString([(12300.0, 3350.0), (11950.0, 3000.0)])
    s4 = LineString([(11450.0, 3550.0), (11850.0, 3050.0)])
    skid = gpd.GeoDataFrame(
        {"id": ["S-1", "S-2", "S-3", "S-4"], "constructed": [False, True, False, False]},
        geometry=[s1, s2, s3, s4],
        crs=None,
    )
    facts["s1_channel_len"] = LineString(list(zip(_mill(ys1) + 4.0, ys1))).length

    # ---- dwellings --------------------------------------------------------------------
    harvest_zone = unary_union(HARVEST_PARCELS).buffer(600)
    fw_union = unary_union(list(flood.geometry[flood.ZONE_SUBTY == "FLOODWAY"]))
    cand = parcels[(parcels.land_use == "residential") & ~parcels.geometry.intersects(harvest_zone)]
    pick = np.sort(rng.choice(cand.index.to_numpy(), size=min(180, len(cand)), replace=False))
    dw_pts, dw_ids = [], []
    for x, y in [(d[1], d[2]) for d in DWELLINGS_DESIGNED]:
        dw_pts.append(Point(x, y))
    dw_ids = [d[0] for d in DWELLINGS_DESIGNED]
    for i in pick:
        p = parcels.geometry[i].representative_point()
        if p.intersects(fw_union):
            continue
        dw_pts.append(p)
        dw_ids.append(f"DW-{len(dw_ids) + 1:03d}")
    dwellings = gpd.GeoDataFrame(
        {"id": dw_ids, "use": ["residential"] * len(dw_ids)}, geometry=dw_pts, crs=None
    )

    # ---- disturbance ------------------------------------------------------------------
    dx0, dy0 = DIST_ORIGIN
    disturbance = gpd.GeoDataFrame(
        {
            "id": [p[0] for p in PHASES],
            "phase": [p[1] for p in PHASES],
            "start": [p[3] for p in PHASES],
            "stabilized": [p[4] for p in PHASES],
            "use": ["subdivision"] * len(PHASES),
        },
        geometry=[box(dx0 + r[0], dy0 + r[1], dx0 + r[2], dy0 + r[3]) for r in (p[2] for p in PHASES)],
        crs=None,
    )

    impaired = gpd.GeoDataFrame(
        {"id": ["IW-1"], "name": ["Sample River"], "listing": ["303(d)"], "pollutant": ["silt/sediment"]},
        geometry=[main_river.intersection(town)],
        crs=None,
    )
    xa = float(_sample_creek(6400.0))
    fps = FOOTPRINTS + [
        ("FP-3", "residential", (xa + 25, 6380, xa + 65, 6420), "unnumbered A zone of Sample Creek (no BFE)")
    ]
    footprints = gpd.GeoDataFrame(
        {"id": [f[0] for f in fps], "use": [f[1] for f in fps]}, geometry=[box(*f[2]) for f in fps], crs=None
    )

    layers = {
        "parcels": parcels,
        "zoning": zoning,
        "flood_zones": flood,
        "flood_zones_preliminary": flood_p,
        "bfe_lines": bfe_lines,
        "streams": streams,
        "stream_corridor": stream_corridor,
        "critical_slopes": critical,
        "roads": roads,
        "row": row,
        "dwellings": dwellings,
        "harvest_area": harvest,
        "landings": landings,
        "haul_roads": haul,
        "skid_trails": skid,
        "disturbance": disturbance,
        "impaired_waters": impaired,
        "footprints": footprints,
    }

    # ---- write ------------------------------------------------------------------------
    gpkg = out / "vestal_sample.gpkg"
    if gpkg.exists():
        gpkg.unlink()
    for name, gdf in layers.items():
        g = gdf.copy()
        g["geometry"] = shapely.transform(
            np.asarray(g.geometry.values, dtype=object), lambda c: c + np.array([ox, oy])
        )
        g = gpd.GeoDataFrame(g, geometry="geometry", crs=CRS)
        g.to_file(gpkg, layer=name, driver="GPKG", engine="pyogrio")

    write_dem(out / "dem.tif", z, ox, oy)
    rain = write_rainfall(out / "rainfall.csv", rng)
    write_inspections(out / "inspection_log.csv")
    facts.update(measure(layers, S, z, rain, hp_ids, facts))
    write_readme(out / "README.md", layers, facts)
    print(f"generated in {time.time() - t0:.1f} s -> {out}")
    if not args.no_check:
        ok = check(out, layers, facts)
        return 0 if ok else 1
    return 0


def write_dem(path, z, ox, oy):
    if path.exists():
        path.unlink()
    profile = {
        "driver": "GTiff",
        "width": NCOLS,
        "height": NROWS,
        "count": 1,
        "dtype": "float32",
        "crs": CRS,
        "transform": from_origin(ox + X0, oy + Y1, CELL, CELL),
        "nodata": -9999.0,
        "tiled": True,
        "blockxsize": 256,
        "blockysize": 256,
        "compress": "deflate",
        "predictor": 3,
        "zlevel": 9,
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(z.astype(np.float32), 1)
        dst.set_band_unit(1, "ft")
        dst.set_band_description(1, "ground elevation (ft, NAVD88) - SYNTHETIC")
        dst.update_tags(AREA_OR_POINT="Area", SOURCE="synthetic, scripts/make_sample.py")
        dst.update_tags(1, UNITTYPE="ft", VERTICAL_DATUM="NAVD88")


def write_rainfall(path, rng):
    days = [RAIN_START + dt.timedelta(days=i) for i in range((RAIN_END - RAIN_START).days + 1)]
    storm_days = {dt.date.fromisoformat(k) for k in STORMS}
    vals = {}
    prev_wet = False
    for d in days:
        if d.isoformat() in STORMS:
            vals[d] = STORMS[d.isoformat()]
            prev_wet = True
            continue
        near_storm = any(abs((d - s).days) <= 1 for s in storm_days)
        if not prev_wet and not near_storm and rng.random() < 0.22:
            vals[d] = round(float(rng.uniform(0.02, 0.24)), 2)
            prev_wet = True
        else:
            vals[d] = 0.0
            prev_wet = False
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["date", "precip_in"])
        for d in days:
            w.writerow([d.isoformat(), f"{vals[d]:.2f}"])
    return vals


def inspection_rows():
    rows = []
    start, end = dt.date(2025, 4, 7), dt.date(2025, 10, 27)
    missed_weekly = {dt.date(2025, 6, 23), dt.date(2025, 9, 8)}
    d = start
    while d <= end:
        if d not in missed_weekly:
            who = "J. Rivera (applicant's representative)" if d.month % 2 else "A. Chen, P.E."
            rows.append((d, who, "routine 7-day inspection; silt fence and inlet protection in place"))
        d += dt.timedelta(days=7)
    rows.append(
        (
            dt.date(2025, 5, 15),
            "A. Chen, P.E.",
            "post-storm inspection (0.50 in on 2025-05-14); minor rill on phase 1 slope, repaired",
        )
    )
    rows.append(
        (
            dt.date(2025, 6, 11),
            "J. Rivera (applicant's representative)",
            "post-storm inspection (0.80 in on 2025-06-10); sediment trap at 30 % capacity",
        )
    )
    rows.sort()
    return rows


def write_inspections(path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["date", "inspector", "notes", "qualified"])
        for d, who, note in inspection_rows():  # a licensed engineer: a qualified professional (Lockport § 159-7A(2))
            w.writerow([d.isoformat(), who, note, "yes"])


# --------------------------------------------------------------------------------------
# measurements (used by the README and the checks)
# --------------------------------------------------------------------------------------


def peak_disturbance(dist):
    dates = sorted(
        {dt.date.fromisoformat(s) for s in dist.start} | {dt.date.fromisoformat(s) for s in dist.stabilized}
    )
    best = (0.0, None, None)
    windows = []
    for a, b in itertools.pairwise(dates):
        active = dist[
            (dist.start.map(dt.date.fromisoformat) <= a) & (dist.stabilized.map(dt.date.fromisoformat) > a)
        ]
        area = unary_union(list(active.geometry)).area if len(active) else 0.0
        windows.append((a, b - dt.timedelta(days=1), area, list(active.id)))
        if area > best[0]:
            best = (area, a, b - dt.timedelta(days=1))
    return best, windows


def measure(layers, S, z, rain, hp_ids, facts):
    f = {}
    for name in ("haul_roads", "skid_trails"):
        for _, r in layers[name].iterrows():
            d, zz, g = grade_profile(S, r.geometry, 5.0)
            run = longest_run(d, g, 0.25)
            f[f"{r.id}_len"] = r.geometry.length
            f[f"{r.id}_maxgrade"] = float(np.abs(g).max())
            f[f"{r.id}_run25"] = run
            f[f"{r.id}_z"] = (float(zz[0]), float(zz[-1]))
    # H-2 contour stretch grade and the side slope under it
    h2 = layers["haul_roads"].geometry[1]
    return_len = facts["h2_contour_len"]
    part = substring(h2, 0.0, return_len)
    d, zz, g = grade_profile(S, part, 5.0)
    f["H-2_contour_maxgrade"] = float(np.abs(g).max())
    _, xs, ys = densify(part, 20.0)
    e = 5.0
    gx = (S(xs + e, ys) - S(xs - e, ys)) / (2 * e)
    gy = (S(xs, ys + e) - S(xs, ys - e)) / (2 * e)
    f["H-2_side_slope"] = float(np.mean(np.hypot(gx, gy)))
    st = layers["streams"]
    mill = st.geometry[st.id == "ST-2"].iloc[0]
    lds = layers["landings"].set_index("id").geometry
    f["L-2_stream_dist"] = lds["L-2"].distance(mill)
    f["L-3_row_dist"] = lds["L-3"].distance(unary_union(list(layers["row"].geometry)))
    fp1 = layers["footprints"].geometry[0]
    _, xs, ys = densify(fp1.exterior, 5.0)
    f["FP-1_ground"] = float(np.mean(S(xs, ys)))
    par = layers["parcels"]
    cover = box(0, 0, FLOOD_COVER_X, TOWN_H)
    f["parcels_uncovered"] = int((par.geometry.intersection(cover).area < 1.0).sum())
    zones = {}
    for key in ("flood_zones", "flood_zones_preliminary"):
        fz = layers[key].copy()
        fz["zkey"] = fz.FLD_ZONE + "/" + fz.ZONE_SUBTY.fillna("")
        ov = gpd.overlay(
            par[["parcel_id", "geometry"]], fz[["zkey", "geometry"]], how="intersection", keep_geom_type=True
        )
        ov["a"] = ov.area
        zones[key] = ov.sort_values("a").groupby("parcel_id").zkey.last()
    both = pd.concat(zones, axis=1).dropna()
    f["parcels_zone_changed"] = int((both.iloc[:, 0] != both.iloc[:, 1]).sum())
    f["zone_changes"] = both[both.iloc[:, 0] != both.iloc[:, 1]].value_counts().to_dict()
    crit = unary_union(list(layers["critical_slopes"].geometry))
    corr = unary_union(list(layers["stream_corridor"].geometry))
    inter = []
    for name in ("haul_roads", "skid_trails"):
        for _, r in layers[name].iterrows():
            xing = []
            for _, srow in st.iterrows():
                n = n_parts(r.geometry.intersection(srow.geometry))
                if n:
                    xing.append(f"{srow.id} x{n} ({srow.kind})")
            inter.append(
                {
                    "id": r.id,
                    "constructed": bool(r.get("constructed", True)),
                    "crit_ft": r.geometry.intersection(crit).length,
                    "corr_ft": r.geometry.intersection(corr).length,
                    "crossings": ", ".join(xing) or "none",
                }
            )
    f["interactions"] = inter
    site = unary_union(list(layers["disturbance"].geometry))
    fz = layers["flood_zones"]
    f["dist_ae_ac"] = (
        site.intersection(unary_union(list(fz.geometry[fz.SFHA_TF == "T"]))).area / SQFT_PER_ACRE
    )
    best, windows = peak_disturbance(layers["disturbance"])
    f["dist_peak"] = best
    f["dist_windows"] = windows
    f["dist_union_ac"] = unary_union(list(layers["disturbance"].geometry)).area / SQFT_PER_ACRE
    f["dist_sum_ac"] = float(layers["disturbance"].area.sum()) / SQFT_PER_ACRE
    return f


def n_parts(geom):
    return int(sum(1 for g in shapely.get_parts(geom) if not g.is_empty))


def fmt_run(run):
    length, a, b, mean, mx = run
    return f"{length:.0f} ft (chainage {a:.0f}-{b:.0f} ft, mean {100 * mean:.1f} %, max {100 * mx:.1f} %)"


def write_readme(path, layers, f):
    ox, oy = f["origin"]
    counts = "\n".join(
        f"| `{n}` | {g.geom_type.iloc[0]} | {len(g)} | "
        + ", ".join(f"`{c}`" for c in g.columns if c != "geometry")
        + " |"
        for n, g in layers.items()
    )
    peak_area = f["dist_peak"][0]
    win = "\n".join(
        f"| {a} .. {b} | {', '.join(ids) or '-'} | {area:,.0f} | {area / SQFT_PER_ACRE:.3f} |"
        for a, b, area, ids in f["dist_windows"]
    )
    h1 = f["H-1_run25"]
    ha = layers["harvest_area"]
    on = [r for r in f["interactions"] if r["crit_ft"] > 0 or r["corr_ft"] > 0]
    hrv011 = "; ".join(
        f"{r['id']} ({'critical slopes' if r['crit_ft'] > 0 else ''}"
        f"{' + ' if r['crit_ft'] > 0 and r['corr_ft'] > 0 else ''}"
        f"{'stream corridor' if r['corr_ft'] > 0 else ''})"
        for r in on
        if r["constructed"]
    )
    hrv011_not = ", ".join(r["id"] for r in on if not r["constructed"]) or "none"
    inter_tab = "\n".join(
        f"| {r['id']} | {'yes' if r['constructed'] else 'no'} | {r['crit_ft']:.0f} | "
        f"{r['corr_ft']:.0f} | {r['crossings']} |"
        for r in f["interactions"]
    )
    text = (
        f"""# Sample town (SYNTHETIC)

**This is synthetic data.  It is NOT real Town of Vestal data**: the parcels, owners, zoning,
flood zones, streams, roads, terrain and plans are invented by `scripts/make_sample.py` to exercise
every check of geoconstraints.  The town is merely placed near Vestal, NY (lat 42.085,
lon -76.054) so that its coordinates are plausible.  `DFIRM_ID` 36007C is Broome County's
real NFHL id, used only for the schema; the polygons are not FEMA's.

## Regenerate

```
. .venv/bin/activate
python scripts/make_sample.py            # writes data/sample/ (about 15 s), then checks it
python scripts/make_sample.py --out DIR  # elsewhere; --no-check skips the read-back checks
```

The generator is deterministic (numpy `default_rng({SEED})`, analytic terrain); it does not import
geoconstraints.  Regenerating gives the same features and DEM cells.

## CRS and units

* All vector layers: **EPSG:2261** (NAD83 / New York Central, US survey feet).  The generator
  designs in a local frame and adds the offset ({ox:.0f}, {oy:.0f}) ft: the town box is
  x {ox:.0f}..{ox + TOWN_W:.0f}, y {oy:.0f}..{oy + TOWN_H:.0f} (16,000 x 12,000 ft, about 4,400 acres).
* `dem.tif`: float32 GeoTIFF, EPSG:2261, cell 10 ft, {NCOLS} x {NROWS} cells covering the town plus
  a 1,000-ft margin; elevations in **feet** (NAVD88 by construction), band unit `ft`
  (`src.units == ('ft',)`); nodata -9999 (no nodata cell anywhere); DEFLATE, predictor 3, 256 x 256
  tiles; values quantised to 1/32 ft.
* Distances/areas in feet and square feet; 1 acre = 43,560 sq ft.  Flood elevations ft NAVD88.

## Files

| file | content |
|---|---|
| `vestal_sample.gpkg` | one layer per input role (table below) |
| `dem.tif` | terrain: river valley floor ~835-860 ft falling west, hills to ~1,400 ft, slopes from flat to > 50 % |
| `rainfall.csv` | `date,precip_in`: daily rainfall {RAIN_START} .. {RAIN_END}, complete |
| `inspection_log.csv` | `date,inspector,notes,qualified`: SWPPP inspections of the subdivision (some missing), each by a qualified professional |
| `README.md` | this file |

### Layers of `vestal_sample.gpkg`

| layer | geometry | features | fields |
|---|---|---|---|
{counts}

Notes:
* `parcels` tile the town box without gaps or overlaps (clipped Voronoi cells generated per zoning
  district: village lots ~0.4 ac in R-1, up to 20-60 ac in RA-1/RA-2/RC; parcels run to the road
  centre line, so `row` overlaps them).  `zoning` = district of the parcel centroid.  Owner texts
  include `{ESCAPE_OWNER}` and `O'Brien "Riverside" Trust` (HTML/CSV escaping).
* `zoning` districts tile the town: RC (north hills), R-1 and R-2 (village north of the river),
  R-1 and C-1 (south of the river), RA-2 (east floodplain and south-east), RR (the hillside belt
  y {oy + 2500:.0f}..{oy + 6300:.0f}), RA-1 (south-west).
* `flood_zones` (NFHL S_FLD_HAZ_AR schema, EFF_DATE 2010-06-16, i.e. later than the town's adopted
  1998 FIRM): derived from the DEM.  The effective BFE is the river's normal water surface + 9 ft,
  `BFE(x) = 844.8 + 0.0008 * (x - {ox:.0f})` ft (x = easting, ft), rising upstream (east).
  AE = ground <= BFE connected to the river; floodway (`ZONE_SUBTY` FLOODWAY) = ground <= BFE - 5 ft;
  X shaded (`0.2 PCT ANNUAL CHANCE FLOOD HAZARD`) = ground <= BFE + 1.5 ft; unnumbered `A` along the
  lower Sample Creek (ST-3); one ponding AE polygon with `STATIC_BFE` = {f["static_bfe"]:.0f} ft (a closed
  depression in the RA-1 uplands south of Ridge Road); a `D` block in the north hills; an `AREA NOT INCLUDED` block in
  the north-west corner; the rest X (`AREA OF MINIMAL FLOOD HAZARD`).  **Coverage ends at easting
  {ox + FLOOD_COVER_X:.0f}**: the eastern quarter of the town has no flood polygons (parcels there must be
  `not_evaluated`, not zone X).  Polygons tile the covered area without overlaps.
* `flood_zones_preliminary`: same schema, EFF_DATE 2027-01-01; BFE +2 ft for easting
  {ox + 1500:.0f}..{ox + 4500:.0f} (AE wider) and -2 ft for {ox + 7000:.0f}..{ox + 10000:.0f} (AE narrower), with 500-ft
  transitions.
* `bfe_lines` (NFHL S_BFE): whole-foot `ELEV` every 1 ft of the effective BFE profile (every 1,250 ft),
  perpendicular to the river, clipped to the riverine AE zone.
* `streams`: ST-1 Sample River (main river, perennial, FCODE 46006, digitised downstream, flows
  west), ST-2 Mill Brook and ST-3 Sample Creek (perennial), ST-4..ST-7 intermittent (FCODE 46003).
  Each tributary is the bottom of a valley carved into the DEM, descending to the river.
* `stream_corridor`: the "adopted" stream-corridor map: 300 ft each side of the river, 200 ft each
  side of Mill Brook and Sample Creek.
* `critical_slopes`: DEM slope > 25 %, pieces >= 10,000 sq ft, simplified 5 ft.
* `roads` (public, `row_width_ft` 50 or 66) and `row` (road buffered by half the width, one polygon
  per road).
* `dwellings`: DW-001..DW-003 designed near the harvest (below), the rest on residential parcels
  away from it.

## The harvest plan (HRV rules)

Owner `{HARVEST_OWNER}` holds two contiguous RR parcels, `{ha.parcel_id[0]}` and `{ha.parcel_id[1]}`,
on the north-facing hillside between Ridge Road and Hillside Road (R-03, row 50 ft).

| feature | design |
|---|---|
| HA-1 on `{ha.parcel_id[0]}` | 45 cords, 5,760 cu ft, 22,500 bf (above every licence threshold) |
| HA-2 on `{ha.parcel_id[1]}` | 12 cords, 1,536 cu ft, 6,000 bf (below alone; 57 cords / 7,296 cu ft / 28,500 bf with HA-1 on contiguous parcels of one owner) |
| L-1 | legal landing on the plateau (outside all buffers, > 150 ft from any right-of-way) |
| L-2 | landing {f["L-2_stream_dist"]:.0f} ft from Mill Brook (ST-2): inside the 50-ft stream buffer strip |
| L-3 | landing {f["L-3_row_dist"]:.0f} ft from the Hillside Road right-of-way (< 150 ft; outside the 50-ft road buffer) |
| H-1 | haul road L-1 -> Hillside Road straight down the fall line ({f["H-1_len"]:.0f} ft) |
| H-2 | haul road L-2 -> Hillside Road: follows the {f["contour_level"]:.0f}-ft contour for {f["h2_contour_len"]:.0f} ft across Mill Brook on a {100 * f["H-2_side_slope"]:.0f} % side slope (mean), then descends at 12 % |
| H-3 | haul road L-3 -> Hillside Road ({f["H-3_len"]:.0f} ft) |
| S-1 | skid trail (not constructed) running in Mill Brook's channel (4 ft off the centre line) for {f["s1_channel_len"]:.0f} ft |
| S-2 | constructed skid trail crossing Mill Brook once (to L-1) |
| S-3 | skid trail (not constructed) crossing the intermittent Mill Brook tributary ST-5 once |
| S-4 | skid trail (not constructed), no violation |

The harvest's south edge is 60 ft from the RA-2 parcels south of it (Ridge Road side).

## Deliberate violations and findings to expect

| rule | feature(s) | what |
|---|---|---|
| HRV-001 | HA-1 (+HA-2) | licence required: 45 cords on HA-1; 57 cords summed over the two contiguous same-owner parcels |
| HRV-003 | HA-1, HA-2 (and landings/roads within 300 ft) | harvest 60 ft from RA-2 parcels: town board review |
| HRV-010 | H-1 | steeper than 25 % for {fmt_run(h1)} (horizontal), limit 200 ft |
| HRV-010 (must NOT fire) | H-2 | on a {100 * f["H-2_side_slope"]:.0f} % side slope but its contour stretch grade is ~0 % (max step grade {100 * f["H-2_contour_maxgrade"]:.1f} %); descent at ~12 % |
| HRV-011 | {hrv011} | haul roads / constructed skid trails on designated slopes (lengths in the table below) |
| HRV-011 (not) | {hrv011_not} | on designated slopes but not constructed skid trails |
| HRV-012 | S-1 | skids along Mill Brook's channel for {f["s1_channel_len"]:.0f} ft (not a crossing) |
| HRV-012/013 crossings | H-2 x ST-2, S-2 x ST-2; S-3 x ST-5 (intermittent) | stream crossings: `review` |
| HRV-020 | HA-1 x ST-2; HA-1/HA-2 x Hillside Road ROW; ST-5 only with the intermittent switch | 50-ft buffers inside the harvest |
| HRV-021 | HA-1, HA-2 | 100 ft from RA-2 parcel lines (y {oy + 2500:.0f}) reaches 40 ft into the harvest |
| HRV-022 | DW-001 (RR) | 100-ft dwelling buffer reaches 10 ft into HA-2; DW-002 (RR, far) and DW-003 (RA-2) make no buffer inside the harvest |
| HRV-024 | L-2 | landing inside the 50-ft Mill Brook buffer strip |
| HRV-025 | L-3 | landing {f["L-3_row_dist"]:.0f} ft from a public right-of-way (< 150 ft) |
| HRV-026 | H-1, H-2, H-3 | three haul-road accesses onto Hillside Road |
| HRV-027 | L-1, L-2, L-3 | each connected by its haul road (pass) |
| FLD-001/002/003 | FP-1 | in AE (not floodway), BFE from `bfe_lines` (849 ft line 50 ft west); FP-1 ground ~{f["FP-1_ground"]:.1f} ft |
| FLD-002 | FP-2 | footprint in the floodway: violation (no no-rise evaluation) |
| FLD-006 | Sample Creek | unnumbered A zone along ST-3 |
| FLD-010 | flood layers | DFIRM 36007C effective 2010-06-16 (preliminary 2027-01-01) differs from the adopted 1998 FIRM 360057 |
| flood coverage | {f["parcels_uncovered"]} parcels | parcels east of easting {ox + FLOOD_COVER_X:.0f} with no flood polygon: `not_evaluated` |
| preliminary map | {f["parcels_zone_changed"]} parcels | the predominant zone changes between `flood_zones` and `flood_zones_preliminary` |
| FLD-001/005 | DP-1..DP-4 | {f["dist_ae_ac"]:.2f} ac of the subdivision (R-2) lie in AE; a subdivision over 5 ac must provide BFE data |
| SWP-001/003/005 | DP-1..DP-4 | subdivision {f["dist_union_ac"]:.3f} ac in total (> 5 ac), peak {peak_area / SQFT_PER_ACRE:.3f} ac disturbed at once |
| SWP-002 | DP-1..DP-4, IW-1 | the site drains to the 303(d)-listed Sample River (IW-1), about 937 ft away: beyond the `vestal` screening distance (`impaired_water_distance_ft` 500), so SWP-002 is `pass`; a rulebook distance of 1,000 ft makes it `review` |
| SWP-007 | inspection log | missed: weekly inspections of 2025-06-23 and 2025-09-08; post-storm inspection after 1.20 in on 2025-08-12 (none by 2025-08-13); with the consecutive-days switch also 0.30 + 0.30 in on 2025-07-02/03 (none by 2025-07-04) |

## Hand-computed facts (for tests)

### Disturbance (SWP-005)
Phases are rectangles (local offsets from ({ox + DIST_ORIGIN[0]:.0f}, {oy + DIST_ORIGIN[1]:.0f})):
DP-1 [0,320]x[0,280] = 89,600 sq ft; DP-2 [280,600]x[0,280] = 89,600; DP-3 [0,320]x[280,580] = 96,000;
DP-4 [280,600]x[260,580] = 102,400.  Overlaps: DP-1/DP-2 11,200; DP-2/DP-4 6,400; DP-3/DP-4 12,000;
DP-1/DP-4 800 (DP-1/DP-3 and DP-2/DP-3 only touch).  Union = 600 x 580 = 348,000 sq ft = 7.989 ac;
sum of phases 377,600 sq ft = 8.669 ac.  A phase is disturbed from `start` (inclusive) to
`stabilized` (exclusive).

| days (inclusive) | active | sq ft | acres |
|---|---|---|---|
{win}

**Peak: 269,600 sq ft = 6.189 ac, 2025-08-04 .. 2025-08-24** (DP-2 + DP-3 + DP-4: 89,600 + 96,000 +
102,400 - 6,400 - 12,000).  Also above 5 ac: 264,000 sq ft = 6.061 ac, 2025-06-16 .. 2025-07-13
(DP-1 + DP-2 + DP-3).  Site dates: 2025-04-07 .. 2025-10-27.

### Rainfall and inspections (SWP-007)
Storm days: 2025-04-22 0.49 in (just under 0.5: no inspection), 2025-05-14 0.50 in (exactly 0.5:
inspection due; done 2025-05-15), 2025-06-10 0.80 in (done 2025-06-11), 2025-08-12 1.20 in (missed),
2025-07-02 + 2025-07-03 0.30 + 0.30 in (a storm only when consecutive wet days are summed; missed).
Every other day is 0.00-0.24 in with no two consecutive wet days.  Weekly inspections every Monday
from 2025-04-07 to 2025-10-27 except 2025-06-23 and 2025-09-08.

### Haul roads and skid trails (DEM, bilinear, 5-ft steps, horizontal lengths)
| line | length ft | z start -> end ft | max step grade | longest run > 25 % |
|---|---|---|---|---|
"""
        + "\n".join(
            f"| {k} | {f[k + '_len']:.0f} | {f[k + '_z'][0]:.1f} -> {f[k + '_z'][1]:.1f} | {100 * f[k + '_maxgrade']:.1f} % | "
            + (fmt_run(f[k + "_run25"]) if f[k + "_run25"][0] > 0 else "none")
            + " |"
            for k in ("H-1", "H-2", "H-3", "S-1", "S-2", "S-3", "S-4")
        )
        + f"""

| line | constructed | ft on critical slopes | ft in stream corridor | stream crossings |
|---|---|---|---|---|
{inter_tab}

H-1's steep stretch: {fmt_run(h1)}.  H-2's first {f["h2_contour_len"]:.0f} ft lie on the
{f["contour_level"]:.0f}-ft contour (|grade| <= {100 * f["H-2_contour_maxgrade"]:.1f} % per 5-ft step), on ground sloping
{100 * f["H-2_side_slope"]:.0f} % on average across the road.
"""
    )
    path.write_text(text)


# --------------------------------------------------------------------------------------
# read-back checks
# --------------------------------------------------------------------------------------


def check(out, layers, f):
    import pyogrio

    ok = True

    def expect(cond, msg):
        nonlocal ok
        print(("  ok   " if cond else "  FAIL ") + msg)
        ok &= bool(cond)

    print("checks:")
    gpkg = out / "vestal_sample.gpkg"
    names = [n for n, _ in pyogrio.list_layers(gpkg)]
    expect(names == list(layers), f"layers: {', '.join(names)}")
    back = {}
    for n in names:
        g = gpd.read_file(gpkg, layer=n, engine="pyogrio")
        back[n] = g
        idf = (
            "parcel_id"
            if n == "parcels"
            else ("FLD_AR_ID" if n.startswith("flood") else "BFE_LN_ID" if n == "bfe_lines" else "id")
        )
        good = (
            g.crs is not None
            and g.crs.to_epsg() == 2261
            and g.geometry.is_valid.all()
            and (~g.geometry.is_empty).all()
            and g[idf].is_unique
            and len(g) > 0
        )
        expect(good, f"{n}: {len(g)} features, EPSG:{g.crs.to_epsg()}, valid, unique {idf}")
    p = back["parcels"]
    tot = p.area.sum()
    un = unary_union(list(p.geometry)).area
    expect(
        abs(tot - TOWN_W * TOWN_H) < 50 and abs(un - tot) < 50,
        f"parcels tile the town: sum {tot:,.0f} union {un:,.0f} sq ft; {len(p)} parcels",
    )
    ac = p.area / SQFT_PER_ACRE
    expect(
        2000 <= len(p) <= 4000,
        f"parcel sizes {ac.min():.2f}..{ac.max():.1f} ac, "
        f"{(ac >= 5).sum()} of >= 5 ac; zoning {dict(p.zoning.value_counts())}",
    )
    for n in ("zoning", "flood_zones", "flood_zones_preliminary"):
        g = back[n]
        expect(abs(g.area.sum() - unary_union(list(g.geometry)).area) < 50, f"{n}: no overlaps")
    fz = back["flood_zones"]
    expect(
        abs(fz.area.sum() - FLOOD_COVER_X * TOWN_H) < 50, "flood_zones cover x < 12,000 ft of the town only"
    )
    print("       zones:", dict(fz.groupby(["FLD_ZONE", fz.ZONE_SUBTY.fillna("")]).size()))
    with rasterio.open(out / "dem.tif") as src:
        a = src.read(1, masked=True)
        expect(
            src.units == ("ft",)
            and src.crs.to_epsg() == 2261
            and src.nodata == -9999
            and not np.ma.is_masked(a)
            and src.res == (CELL, CELL),
            f"dem.tif: units {src.units}, {src.width}x{src.height}, z {float(a.min()):.1f}..{float(a.max()):.1f} ft, no nodata cells",
        )
        rb = src.bounds
        tb = gpd.GeoSeries(pd_concat_geoms(back)).total_bounds
        expect(
            rb.left < tb[0] and rb.bottom < tb[1] and rb.right > tb[2] and rb.top > tb[3],
            "DEM covers every layer with margin",
        )
    S = Sampler(np.asarray(a, float))
    # streams descend
    for _, r in layers["streams"].iterrows():
        _, zz, _ = grade_profile(S, r.geometry, 10.0)
        expect(
            float(np.max(np.diff(zz))) < 0.35,
            f"stream {r.id} descends: {zz[0]:.1f} -> {zz[-1]:.1f} ft (max step rise {float(np.max(np.diff(zz))):.2f} ft)",
        )
    # grades
    h1 = f["H-1_run25"]
    expect(h1[0] > 300, f"H-1 > 25 % for {fmt_run(h1)}")
    for k in ("H-2", "H-3", "S-1", "S-2", "S-3", "S-4"):
        expect(f[k + "_run25"][0] < 200, f"{k}: longest run > 25 % = {f[k + '_run25'][0]:.0f} ft (< 200)")
    expect(
        f["H-2_contour_maxgrade"] < 0.01,
        f"H-2 contour stretch max grade {100 * f['H-2_contour_maxgrade']:.2f} %,"
        f" side slope {100 * f['H-2_side_slope']:.0f} %",
    )
    L = layers
    mill = L["streams"].geometry[L["streams"].id == "ST-2"].iloc[0]
    st5 = L["streams"].geometry[L["streams"].id == "ST-5"].iloc[0]
    all_streams = unary_union(list(L["streams"].geometry))
    row_u = unary_union(list(L["row"].geometry))
    lds = L["landings"].set_index("id").geometry
    expect(lds["L-2"].distance(mill) < 50, f"L-2 {lds['L-2'].distance(mill):.0f} ft from Mill Brook (< 50)")
    expect(
        50 <= lds["L-3"].distance(row_u) < 150, f"L-3 {lds['L-3'].distance(row_u):.0f} ft from ROW (50..150)"
    )
    expect(
        lds["L-1"].distance(row_u) >= 150 and lds["L-1"].distance(all_streams) >= 50,
        f"L-1 legal: {lds['L-1'].distance(row_u):.0f} ft from ROW, {lds['L-1'].distance(all_streams):.0f} ft from streams",
    )
    hv = unary_union(list(L["harvest_area"].geometry))
    par = L["parcels"]
    ra = unary_union(list(par.geometry[par.zoning.isin(["RA-1", "RA-2", "RC"])]))
    expect(
        hv.distance(ra) < 300 and not hv.intersects(ra.buffer(-1)),
        f"harvest {hv.distance(ra):.0f} ft from RA/RC parcels; harvest zoning "
        f"{sorted(set(par.zoning[par.geometry.intersects(hv.buffer(-1))]))}",
    )
    crit = unary_union(list(L["critical_slopes"].geometry))
    corr = unary_union(list(L["stream_corridor"].geometry))
    hr = L["haul_roads"].set_index("id").geometry
    sk = L["skid_trails"].set_index("id").geometry
    expect(
        hr["H-1"].intersects(crit) and hr["H-2"].intersects(crit) and not hr["H-3"].intersects(crit),
        "H-1, H-2 cross critical slopes; H-3 does not",
    )
    expect(
        hr["H-2"].intersects(mill)
        and not hr["H-1"].intersects(all_streams)
        and not hr["H-3"].intersects(all_streams),
        "H-2 crosses Mill Brook; H-1, H-3 cross no stream",
    )
    expect(hr["H-2"].intersects(corr) and sk["S-2"].intersects(corr), "H-2 and S-2 enter the stream corridor")
    n2 = n_parts(sk["S-2"].intersection(mill))
    n3 = n_parts(sk["S-3"].intersection(st5))
    expect(
        n2 == 1 and n3 == 1 and not sk["S-4"].intersects(all_streams),
        f"S-2 crosses ST-2 once ({n2}), S-3 crosses ST-5 once ({n3}), S-4 none",
    )
    along = sk["S-1"].intersection(mill.buffer(10)).length
    expect(along > 100, f"S-1 within 10 ft of Mill Brook for {along:.0f} ft")
    for i, r in L["haul_roads"].iterrows():
        touch = r.geometry.distance(unary_union(list(L["roads"].geometry))) < 0.01
        expect(
            touch and r.geometry.distance(lds[r.landing_id]) < 0.01,
            f"{r.id} joins {r.landing_id} to a public road",
        )
    dw = L["dwellings"].set_index("id").geometry
    zon = L["zoning"]
    for did in ("DW-001", "DW-002", "DW-003"):
        dist_ = zon.district[zon.contains(dw[did])].iloc[0]
        print(f"       {did}: district {dist_}, {dw[did].distance(hv):.0f} ft from the harvest")
    fpz = {}
    for _, r in L["footprints"].iterrows():
        hit = L["flood_zones"][L["flood_zones"].intersects(r.geometry)]
        fpz[r.id] = sorted(set(hit.FLD_ZONE + "/" + hit.ZONE_SUBTY.fillna("")))
    expect(
        fpz["FP-1"] == ["AE/"] and fpz["FP-2"] == ["AE/FLOODWAY"] and fpz["FP-3"] == ["A/"],
        f"footprint zones {fpz}",
    )
    expect(
        f["parcels_uncovered"] > 0 and f["parcels_zone_changed"] > 0,
        f"{f['parcels_uncovered']} parcels without flood data; {f['parcels_zone_changed']} change zone in the preliminary map",
    )
    peak, a0, b0 = f["dist_peak"]
    expect(
        abs(peak - 269600) < 1
        and str(a0) == "2025-08-04"
        and str(b0) == "2025-08-24"
        and abs(f["dist_union_ac"] - 348000 / SQFT_PER_ACRE) < 1e-6,
        f"disturbance peak {peak:,.0f} sq ft = {peak / SQFT_PER_ACRE:.3f} ac {a0}..{b0}; total {f['dist_union_ac']:.3f} ac",
    )
    rain = pd.read_csv(out / "rainfall.csv")
    days = pd.to_datetime(rain.date)
    expect(
        days.diff().dropna().dt.days.eq(1).all()
        and days.iloc[0] <= pd.Timestamp("2025-04-07")
        and days.iloc[-1] >= pd.Timestamp("2025-10-27"),
        f"rainfall complete {rain.date.iloc[0]}..{rain.date.iloc[-1]}; days >= 0.5 in: "
        f"{list(rain.date[rain.precip_in >= 0.5])}",
    )
    wet = rain.precip_in > 0
    pairs = rain.date[(wet & wet.shift(1, fill_value=False))].tolist()
    expect(pairs == ["2025-07-03"], f"consecutive wet days end on {pairs}")
    bfe = back["bfe_lines"]
    expect(
        bfe.ELEV.is_monotonic_increasing and (bfe.ELEV % 1 == 0).all(),
        f"BFE lines {bfe.ELEV.min():.0f}..{bfe.ELEV.max():.0f} ft, spacing "
        f"{np.diff(bfe.geometry.centroid.x).round(0).tolist()[:3]}... ft",
    )
    sizes = {p_.name: p_.stat().st_size for p_ in sorted(out.iterdir())}
    total = sum(sizes.values())
    expect(
        total < 15e6,
        "sizes: "
        + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sizes.items())
        + f"; total {total / 1e6:.2f} MB",
    )
    print("ALL CHECKS PASSED" if ok else "SOME CHECKS FAILED")
    return ok


def pd_concat_geoms(back):
    geoms = []
    for g in back.values():
        geoms.extend(list(g.geometry))
    return geoms


if __name__ == "__main__":
    sys.exit(main())
