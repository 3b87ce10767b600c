"""Property tests of the inputs (hypothesis): random valid and invalid polygons, lines and DEM
windows fed to every check through the commands (screen, flood-site, harvest, stormwater).

Whatever the geometry (bow-ties, zero-area rings, spikes, repeated and collinear vertices,
sub-foot slivers, holes, multipolygons, zero-length lines) and whatever the DEM (partly or not
at all under the plan, holes of nodata, steep or flat): a command either returns a result or
refuses with one :class:`~geoconstraints.errors.GeoConstraintsError` line; no check fails
(a failing check would show as "its check failed"); every status is one of the fixed set; every
share is within [0, 1]. Kept to a few examples per command (``max_examples``) so the module
runs in a minute or two.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import rasterio
from affine import Affine
from common import NY_FT, X0, Y0
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shapely.geometry import LineString, MultiPolygon, Point, Polygon, box

import geoconstraints as gc
from geoconstraints.errors import GeoConstraintsError
from geoconstraints.rulebook.findings import STATUSES

RB = gc.load_rulebook("vestal")
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

coord = st.integers(-40, 60).map(lambda v: v * 20.0)  # a 2,000-ft square near Vestal, 20-ft steps


@st.composite
def polygons(draw):
    """A polygon as counties have them: valid or not."""
    kind = draw(st.sampled_from(["box", "bowtie", "zero_area", "spike", "holed", "multi", "random", "sliver",
                                 "repeated"]))
    x, y = draw(coord), draw(coord)
    w, h = draw(st.integers(1, 25).map(lambda v: v * 20.0)), draw(st.integers(1, 25).map(lambda v: v * 20.0))
    x, y = X0 + x, Y0 + y
    if kind == "box":
        return box(x, y, x + w, y + h)
    if kind == "bowtie":
        return Polygon([(x, y), (x + w, y + h), (x + w, y), (x, y + h)])
    if kind == "zero_area":
        return Polygon([(x, y), (x + w, y), (x + 2 * w, y)])
    if kind == "spike":
        return Polygon([(x, y), (x + w, y), (x + w, y + h), (x + w / 2, y + h), (x + w / 2, y + 3 * h),
                        (x + w / 2, y + h), (x, y + h)])
    if kind == "holed":
        return Polygon(box(x, y, x + w, y + h).exterior.coords,
                       [box(x + w / 4, y + h / 4, x + w / 2, y + h / 2).exterior.coords])
    if kind == "multi":
        return MultiPolygon([box(x, y, x + w, y + h), box(x + w + 20, y, x + 2 * w + 20, y + h)])
    if kind == "sliver":
        return box(x, y, x + w, y + 0.01)
    if kind == "repeated":
        return Polygon([(x, y), (x, y), (x + w, y), (x + w, y + h), (x + w, y + h), (x, y + h)])
    pts = draw(st.lists(st.tuples(coord, coord), min_size=3, max_size=7))
    return Polygon([(X0 + a, Y0 + b) for a, b in pts])


@st.composite
def lines(draw):
    kind = draw(st.sampled_from(["random", "zero_length", "closed", "repeated"]))
    x, y = X0 + draw(coord), Y0 + draw(coord)
    if kind == "zero_length":
        return LineString([(x, y), (x, y)])
    pts = draw(st.lists(st.tuples(coord, coord), min_size=2, max_size=6))
    coords = [(X0 + a, Y0 + b) for a, b in pts]
    if kind == "closed":
        coords = coords + [coords[0]]
    if kind == "repeated":
        coords = [coords[0], *coords]
    return LineString(coords)


@st.composite
def dems(draw):
    """A DEM window: where it lies against the plan, its cell size, grade, and nodata holes."""
    cell = draw(st.sampled_from([2.0, 5.0, 10.0, 25.0]))
    n = draw(st.integers(2, 60))
    m = draw(st.integers(2, 60))
    left = X0 + draw(st.integers(-60, 40)) * 20.0
    top = Y0 + draw(st.integers(-20, 80)) * 20.0
    gx, gy = draw(st.floats(-0.6, 0.6)), draw(st.floats(-0.6, 0.6))
    hole = draw(st.floats(0, 1))
    return cell, n, m, left, top, gx, gy, hole


def write_dem(path: Path, spec) -> Path:
    cell, n, m, left, top, gx, gy, hole = spec
    cols, rows = np.meshgrid(np.arange(m), np.arange(n))
    z = 800.0 + gx * cols * cell + gy * rows * cell
    z = np.where((cols < m * hole / 2) & (rows < n * hole), -9999.0, z).astype("float32")
    with rasterio.open(path, "w", driver="GTiff", width=m, height=n, count=1, dtype="float32", crs=NY_FT,
                       transform=Affine(cell, 0, left, 0, -cell, top), nodata=-9999.0) as dst:
        dst.write(z, 1)
        dst.update_tags(1, UNITTYPE="ft")
    return path


def frame(geoms, **cols) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({k: list(v) for k, v in cols.items()}, geometry=list(geoms), crs=NY_FT)


def check_result(res) -> None:
    f = res.findings
    assert set(f["status"]) <= set(STATUSES)
    failed = f["message"].astype(str).str.contains("its check failed")
    assert not failed.any(), f.loc[failed, "message"].tolist()
    for name, table in res.tables.items():
        for col in table.columns:
            if col.endswith(("_share", "_fraction")):
                v = pd.to_numeric(table[col], errors="coerce").dropna().to_numpy()
                assert ((v >= 0) & (v <= 1 + 1e-9)).all(), (name, col, v)


def run(fn):
    """The command's result, or None when it refused the input with one GeoConstraintsError line."""
    try:
        res = fn()
    except GeoConstraintsError as exc:
        assert str(exc) and "\n" not in str(exc).strip() and "could not complete" not in str(exc)
        return None
    if isinstance(res, gc.Result):
        check_result(res)
    return res


@SETTINGS
@given(parcels=st.lists(polygons(), min_size=1, max_size=6), zones=st.lists(polygons(), min_size=1, max_size=4),
       kinds=st.lists(st.sampled_from(["AE", "A", "X", "VE", "D", "AO"]), min_size=4, max_size=4),
       bfe=st.lists(st.one_of(st.just(-9999.0), st.floats(500, 1500)), min_size=4, max_size=4))
def test_screen_never_fails(parcels, zones, kinds, bfe):
    layers = run(lambda: gc.load_layers(
        parcels=frame(parcels, parcel_id=[f"P{i}" for i in range(len(parcels))]),
        flood_zones=frame(zones, FLD_ZONE=kinds[:len(zones)], STATIC_BFE=bfe[:len(zones)])))
    if layers is not None:
        run(lambda: gc.screen_parcels(layers, RB))


@SETTINGS
@given(footprints=st.lists(polygons(), min_size=1, max_size=3), zones=st.lists(polygons(), min_size=1, max_size=3),
       dem=dems(), floor=st.floats(700, 900), enclosed=st.floats(0, 5000), openings=st.integers(0, 6))
def test_flood_site_never_fails(footprints, zones, dem, floor, enclosed, openings):
    with tempfile.TemporaryDirectory() as tmp:
        path = write_dem(Path(tmp) / "dem.tif", dem)
        layers = run(lambda: gc.load_layers(
            footprints=frame(footprints, id=[f"F{i}" for i in range(len(footprints))]),
            flood_zones=frame(zones, FLD_ZONE=["AE"] * len(zones), STATIC_BFE=[810.0] * len(zones)), dem=path))
        if layers is not None:
            res = run(lambda: gc.check_site(layers, RB, use="residential", lowest_floor_ft=floor, enclosed_sqft=enclosed,
                                            openings=openings, openings_sqin=openings * 100.0))
            if res is not None and "footprints" in res.tables:
                hag = pd.to_numeric(res.tables["footprints"].get("hag_ft"), errors="coerce")
                assert not np.isinf(hag).any()


@SETTINGS
@given(areas=st.lists(polygons(), min_size=1, max_size=3), roads=st.lists(lines(), min_size=0, max_size=3),
       trails=st.lists(lines(), min_size=0, max_size=3), streams=st.lists(lines(), min_size=0, max_size=2),
       public=st.lists(lines(), min_size=0, max_size=2), dem=st.one_of(st.none(), dems()),
       landing=st.tuples(coord, coord))
def test_harvest_never_fails(areas, roads, trails, streams, public, dem, landing):
    layers_in = {"harvest_area": frame(areas, id=[f"H{i}" for i in range(len(areas))]),
                 "landings": frame([Point(X0 + landing[0], Y0 + landing[1])], id=["L1"])}
    if roads:
        layers_in["haul_roads"] = frame(roads, id=[f"R{i}" for i in range(len(roads))])
    if trails:
        layers_in["skid_trails"] = frame(trails, id=[f"S{i}" for i in range(len(trails))])
    if streams:
        layers_in["streams"] = frame(streams, id=[f"W{i}" for i in range(len(streams))], kind=["perennial"] * len(streams))
    if public:
        layers_in["roads"] = frame(public, id=[f"P{i}" for i in range(len(public))])
    with tempfile.TemporaryDirectory() as tmp:
        path = write_dem(Path(tmp) / "dem.tif", dem) if dem is not None else None
        layers = run(lambda: gc.load_layers(dem=path, **layers_in))
        if layers is not None:
            res = run(lambda: gc.check_harvest(layers, RB))
            if res is not None and dem is not None:
                grades = res.findings.loc[res.findings["rule_id"] == "HRV-010", "measured"].dropna()
                assert np.isfinite(grades.to_numpy(dtype=float)).all()


@SETTINGS
@given(areas=st.lists(polygons(), min_size=1, max_size=4),
       days=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 90)), min_size=4, max_size=4))
def test_stormwater_never_fails(areas, days):
    start = pd.Timestamp("2024-04-01")
    starts = [(start + pd.Timedelta(days=a)).date().isoformat() for a, _ in days[:len(areas)]]
    ends = [(start + pd.Timedelta(days=a + b)).date().isoformat() for a, b in days[:len(areas)]]
    layers = run(lambda: gc.load_layers(disturbance=frame(areas, id=[f"D{i}" for i in range(len(areas))],
                                                           phase=list(range(1, len(areas) + 1)),
                                                           start=starts, stabilized=ends)))
    if layers is not None:
        rain = pd.DataFrame({"date": pd.date_range("2024-03-25", "2024-09-30", freq="D")})
        rain["precip_in"] = np.where(np.arange(len(rain)) % 9 == 0, 0.6, 0.0)
        res = run(lambda: gc.check_stormwater(layers, RB, rainfall=rain))
        if res is not None:
            acres = pd.to_numeric(res.findings["measured"], errors="coerce").dropna().to_numpy()
            assert np.isfinite(acres).all() and (acres >= 0).all()


@settings(max_examples=25, deadline=None, derandomize=True)
@given(spec=dems(), pts=st.lists(st.tuples(st.floats(-2000, 3000), st.floats(-2000, 3000)), min_size=1, max_size=40))
def test_dem_sample_is_the_whole_band_bilinear(spec, pts):
    # the windowed sampler gives what bilinear interpolation on the whole band gives (an
    # independent implementation: scipy's RegularGridInterpolator over cell centres)
    from scipy.interpolate import RegularGridInterpolator

    with tempfile.TemporaryDirectory() as tmp:
        dem = gc.open_dem(write_dem(Path(tmp) / "dem.tif", spec))
        x = np.array([X0 + a for a, _ in pts])
        y = np.array([Y0 + b for _, b in pts])
        got = dem.sample(x, y, NY_FT)
        with rasterio.open(dem.path) as src:
            z = src.read(1, masked=True).filled(np.nan).astype("float64")
    cell, n, m, left, top, *_ = spec
    col, row = (x - left) / cell, (top - y) / cell
    inside = (col >= 0) & (col <= m) & (row >= 0) & (row <= n)
    interp = RegularGridInterpolator((np.arange(n) + 0.5, np.arange(m) + 0.5), z, bounds_error=False, fill_value=None)
    want = interp(np.column_stack([np.clip(row, 0.5, n - 0.5), np.clip(col, 0.5, m - 0.5)]))
    assert np.isnan(got[~inside]).all()
    ok = inside & np.isfinite(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=1e-3)
    assert math.isfinite(float(np.nansum(got)))
