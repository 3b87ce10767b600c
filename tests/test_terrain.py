"""Tests for geoconstraints.terrain: DEM units, profiles, grade runs (HRV-010), water bars
(HRV-030), contours (HRV-002) and highest adjacent grade (FLD-004).

Synthetic DEMs are written to tmp_path with rasterio. Every expected value is either hand
arithmetic (written in the comments) or an independent computation (scipy map_coordinates on
the raw array with our own pixel arithmetic, a brute-force Python loop), with stated tolerances.

Synthetic DEM layout (unless said otherwise): cell size ``c`` ft, upper-left corner at
(-c/2, ny*c - c/2), so cell centres sit on multiples of ``c``. Bilinear interpolation of a
function that is linear between cell centres reproduces it exactly, so planes and piecewise-
linear profiles with breakpoints on multiples of ``c`` are sampled exactly.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyproj
import pytest
import rasterio
from affine import Affine
from common import MUNCY_DEM, NY_FT, UTM18
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.ndimage import map_coordinates
from shapely.geometry import LineString, MultiLineString, Polygon, box

from geoconstraints.errors import CRSError, DemError, InputError, LayerReadError
from geoconstraints.geometry.terrain import (
    Profile,
    contours,
    densify,
    effective_window_ft,
    filter_grades,
    grade_runs,
    highest_adjacent_grade,
    line_profile,
    place_water_bars,
)
from geoconstraints.io.dem import Dem, open_dem
from geoconstraints.units import FT_PER_M, M_PER_FT

MUNCY = MUNCY_DEM

WATER_BAR_TABLE = [  # the model-law water bar table (HRV-030)
    {"min_grade_pct": 2, "max_grade_pct": 5, "min_spacing_ft": 300, "max_spacing_ft": 500},
    {"min_grade_pct": 6, "max_grade_pct": 10, "min_spacing_ft": 200, "max_spacing_ft": 300},
    {"min_grade_pct": 11, "max_grade_pct": 15, "min_spacing_ft": 100, "max_spacing_ft": 200},
    {"min_grade_pct": 16, "max_grade_pct": None, "min_spacing_ft": 100, "max_spacing_ft": 100},
]


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def write_dem(
    path: Path,
    fn,
    *,
    cell: float = 10.0,
    nx: int = 200,
    ny: int = 100,
    x0: float | None = None,
    ytop: float | None = None,
    crs: str | None = NY_FT,
    units: str | None = "ft",
    nodata: float | None = None,
    dtype: str = "float64",
    tags: dict | None = None,
    mask_fn=None,
    scale: float | None = None,
    offset: float | None = None,
) -> Path:
    """Write a 1-band GeoTIFF whose cell-centre values are ``fn(X, Y)`` (map coordinates), stored
    as given: ``scale``/``offset`` set the band's scale and offset (elevation = stored x scale + offset)."""
    x0 = -cell / 2 if x0 is None else x0
    ytop = ny * cell - cell / 2 if ytop is None else ytop
    xc = x0 + (np.arange(nx) + 0.5) * cell
    yc = ytop - (np.arange(ny) + 0.5) * cell
    X, Y = np.meshgrid(xc, yc)
    z = np.asarray(fn(X, Y), dtype="float64")
    if mask_fn is not None:
        z = np.where(mask_fn(X, Y), nodata, z)
    profile = {
        "driver": "GTiff",
        "width": nx,
        "height": ny,
        "count": 1,
        "dtype": dtype,
        "transform": Affine(cell, 0.0, x0, 0.0, -cell, ytop),
    }
    if crs is not None:
        profile["crs"] = crs
    if nodata is not None:
        profile["nodata"] = nodata
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(z.astype(dtype), 1)
        if units is not None:
            dst.units = (units,)
        if tags:
            dst.update_tags(**tags)
        if scale is not None:
            dst.scales = (scale,)
        if offset is not None:
            dst.offsets = (offset,)
    return path


def piecewise(knots_x, knots_z):
    """z(x) linear between knots (z independent of y)."""
    return lambda X, Y: np.interp(X, knots_x, knots_z)


def knots_from_grades(stretches):
    """Knots of a profile made of (length_ft, grade_pct) stretches, starting at x=0, z=100."""
    xs, zs = [0.0], [100.0]
    for length, grade in stretches:
        xs.append(xs[-1] + length)
        zs.append(zs[-1] + length * grade / 100.0)
    return np.array(xs), np.array(zs)


def run_spans(result):
    return [(r.start_ft, r.end_ft) for r in result.runs]


def synthetic_profile(stretches, step=10.0):
    """A Profile built directly (no DEM) from (length_ft, grade_pct) stretches along x."""
    kx, kz = knots_from_grades(stretches)
    d = np.arange(0.0, kx[-1] + step / 2, step)
    return Profile(
        x=d.copy(),
        y=np.zeros_like(d),
        dist_ft=d,
        z_ft=np.interp(d, kx, kz),
        line=LineString([(0, 0), (kx[-1], 0)]),
        crs=pyproj.CRS(NY_FT),
    )


# --------------------------------------------------------------------------------------------
# open_dem: units, errors
# --------------------------------------------------------------------------------------------


def test_open_dem_reads_units_and_geometry(tmp_path):
    p = write_dem(tmp_path / "plane.tif", lambda X, Y: 0.3 * X)
    dem = open_dem(p)
    assert dem.z_units == "ft" and dem.z_units_source == "metadata"
    assert dem.xy_unit_ft == pytest.approx(1200 / 3937 / M_PER_FT, rel=1e-12)  # ftUS ≈ 1.000002
    assert dem.cell_size_ft == pytest.approx(10 * 1.000002, rel=1e-6)
    assert dem.width == 200 and dem.height == 100 and dem.nodata is None
    z = dem.read_ft()
    assert z.dtype == np.float64 and z.shape == (100, 200)
    assert z[0, 0] == pytest.approx(0.0) and z[0, 1] == pytest.approx(3.0)  # 0.3 * 10 ft
    assert dem.read_ft(((0, 2), (0, 3))).shape == (2, 3)
    poly = dem.bounds_polygon(NY_FT)
    assert poly.bounds == pytest.approx((-5.0, -5.0, 1995.0, 995.0))


def test_metre_dem_same_grades_as_feet(tmp_path):
    # Same 30 % plane: z_ft = 0.3 x; stored in metres z_m = 0.3 x * 0.3048.
    ft = open_dem(write_dem(tmp_path / "ft.tif", lambda X, Y: 0.3 * X, units=None), z_units="ft")
    m = open_dem(write_dem(tmp_path / "m.tif", lambda X, Y: 0.3 * X * M_PER_FT, units=None), z_units="m")
    assert m.z_units == "m" and m.z_units_source == "user"
    road = LineString([(100, 500), (1500, 500)])
    pf, pm = line_profile(ft, road, NY_FT), line_profile(m, road, NY_FT)
    np.testing.assert_allclose(pm.z_ft, pf.z_ft, rtol=0, atol=1e-9)
    gm = np.diff(pm.z_ft) / np.diff(pm.dist_ft) * 100
    # ftUS horizontal vs int-ft elevations: 30 / 1.000002 = 29.99994 %
    np.testing.assert_allclose(gm, 30.0, atol=0.01)


def test_metre_dem_without_units_refused(tmp_path):
    p = write_dem(tmp_path / "muncy.tif", lambda X, Y: 0.3 * X * M_PER_FT, units=None)
    with pytest.raises(DemError) as exc:
        open_dem(p)
    msg = str(exc.value)
    assert "muncy.tif" in msg and "--dem-z-units" in msg and "vertical units unknown" in msg
    assert "\n" not in msg


@pytest.mark.parametrize(
    "unit,expected", [("metre", "m"), ("m", "m"), ("US survey foot", "ft"), ("feet", "ft")]
)
def test_band_unit_metadata_detected(tmp_path, unit, expected):
    dem = open_dem(write_dem(tmp_path / "u.tif", lambda X, Y: X * 0, units=unit))
    assert dem.z_units == expected and dem.z_units_source == "metadata"


@pytest.mark.parametrize(
    "tags,expected",
    [({"VERTICAL_UNITS": "feet"}, "ft"), ({"UNITTYPE": "metre"}, "m"), ({"z_units": "m"}, "m")],
)
def test_unit_tags_detected(tmp_path, tags, expected):
    dem = open_dem(write_dem(tmp_path / "t.tif", lambda X, Y: X * 0, units=None, tags=tags))
    assert dem.z_units == expected


def test_compound_crs_vertical_unit(tmp_path):
    # NAD83 / NY Central (ftUS) + NAVD88 height (ftUS): vertical unit from the compound CRS.
    dem = open_dem(write_dem(tmp_path / "c.tif", lambda X, Y: X * 0, units=None, crs="EPSG:2261+6360"))
    assert dem.z_units == "ft" and dem.xy_unit_ft == pytest.approx(1.000002, rel=1e-6)


def test_unknown_metadata_unit_refused(tmp_path):
    p = write_dem(tmp_path / "cm.tif", lambda X, Y: X * 0, units="centimetre")
    with pytest.raises(DemError, match="centimetre"):
        open_dem(p)


def test_user_z_units_contradicting_metadata_refused(tmp_path):
    # a metre DEM read as feet turns grade violations into passes: refuse, naming both units
    p = write_dem(tmp_path / "w.tif", lambda X, Y: X * 0, units="metre")
    with pytest.raises(DemError, match=r"--dem-z-units ft contradicts the DEM's own metadata.*'metre' \(m\)"):
        open_dem(p, z_units="ft")
    dem = open_dem(p, z_units="m")  # agreeing with the metadata is fine
    assert dem.z_units == "m" and dem.z_units_source == "user"


def test_invalid_z_units(tmp_path):
    p = write_dem(tmp_path / "x.tif", lambda X, Y: X * 0)
    with pytest.raises(DemError, match="ft, m"):
        open_dem(p, z_units="yards")


def test_no_crs_refused(tmp_path):
    p = write_dem(tmp_path / "nocrs.tif", lambda X, Y: X * 0, crs=None)
    with pytest.raises(DemError, match="nocrs.tif.*coordinate reference system"):
        open_dem(p)


def test_unreadable_files(tmp_path):
    empty = tmp_path / "empty.tif"
    empty.write_bytes(b"")
    corrupt = tmp_path / "corrupt.tif"
    corrupt.write_bytes(b"II*\x00 this is not really a tiff" * 10)
    for p in (tmp_path / "missing.tif", empty, corrupt):
        with pytest.raises(LayerReadError, match="cannot be read.*GeoTIFF"):
            open_dem(p, z_units="ft")
    # LayerReadError is also an OSError for generic handlers
    with pytest.raises(OSError):
        open_dem(empty)


# --------------------------------------------------------------------------------------------
# densify / sample / smoothing
# --------------------------------------------------------------------------------------------


def test_densify_keeps_vertices_and_spacing():
    line = LineString([(0, 0), (25, 0), (25, 7), (25, 7), (0, 7)])  # repeated vertex dropped
    xs, ys, d = densify(line, 10.0)
    # 25 ft -> 3 parts of 8.333; 7 ft -> 1 part; 25 ft -> 3 parts: 7 samples + end = 8
    assert len(xs) == 8
    assert d[-1] == pytest.approx(line.length)
    assert np.all(np.diff(d) > 0) and np.all(np.diff(d) <= 10.0 + 1e-12)
    pts = set(zip(np.round(xs, 9), np.round(ys, 9)))
    assert {(0, 0), (25, 0), (25, 7), (0, 7)} <= pts
    with pytest.raises(InputError):
        densify(line, 0)


def test_sample_bilinear_and_edges(tmp_path):
    dem = open_dem(write_dem(tmp_path / "p.tif", lambda X, Y: 2 * X + 3 * Y + 7, nx=10, ny=10))
    # DEM footprint x,y in [-5, 95]; plane reproduced exactly inside the cell-centre hull,
    # edge cells extended in the outer half cell; NaN outside the footprint.
    z = dem.sample([12.5, 47.0, 90.0, -2.0, 96.0], [33.3, 81.0, 90.0, 50.0, 50.0], NY_FT)
    np.testing.assert_allclose(z[:3], [2 * 12.5 + 3 * 33.3 + 7, 2 * 47 + 3 * 81 + 7, 457.0], atol=1e-9)
    assert z[3] == pytest.approx(2 * 0 + 3 * 50 + 7)  # x=-2 clamps to the x=0 centre column
    assert np.isnan(z[4])


# --------------------------------------------------------------------------------------------
# grades on planes
# --------------------------------------------------------------------------------------------


@pytest.fixture
def plane30(tmp_path) -> Dem:
    # z = 0.3 x: 30 % grade in +x; 400 x 400 cells of 10 ft.
    return open_dem(write_dem(tmp_path / "p30.tif", lambda X, Y: 0.3 * X, nx=400, ny=400))


@pytest.fixture
def plane40(tmp_path) -> Dem:
    return open_dem(write_dem(tmp_path / "p40.tif", lambda X, Y: 0.4 * X, nx=400, ny=400))


def grades(profile):
    return np.abs(np.diff(profile.z_ft)) / np.diff(profile.dist_ft) * 100


def test_fall_line_grade_30(plane30):
    p = line_profile(plane30, LineString([(200, 2000), (3200, 2000)]), NY_FT)
    # 30 % in int-ft per ftUS: 30 / 1.000002; tolerance 0.01 %
    np.testing.assert_allclose(grades(p), 30.0, atol=0.01)
    # downhill counts the same
    p2 = line_profile(plane30, LineString([(3200, 2000), (200, 2000)]), NY_FT)
    np.testing.assert_allclose(grades(p2), 30.0, atol=0.01)
    r = grade_runs(p, max_grade_pct=25, max_run_ft=200)
    assert len(r.runs) == 1 and r.runs[0].exceeds
    assert r.runs[0].length_ft == pytest.approx(3000 * 1.000002, rel=1e-9)
    assert r.max_grade_pct == pytest.approx(30.0, abs=0.01)
    assert r.evaluated_length_ft == pytest.approx(r.total_length_ft)
    assert r.runs[0].geometry.length == pytest.approx(3000.0)


def test_contour_road_has_zero_grade(plane40):
    p = line_profile(plane40, LineString([(2005, 100), (2005, 3800)]), NY_FT)
    np.testing.assert_allclose(grades(p), 0.0, atol=1e-9)
    assert grade_runs(p, max_grade_pct=25, max_run_ft=200).runs == []


def test_diagonal_road_on_40pct_plane(plane40):
    # 45 degrees to the fall line: 40 * cos 45 = 40 / sqrt(2) = 28.284 %
    p = line_profile(plane40, LineString([(100, 100), (3000, 3000)]), NY_FT)
    np.testing.assert_allclose(grades(p), 40 / math.sqrt(2), atol=0.01)


# --------------------------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------------------------


def profile_dem(tmp_path, stretches, cell=10.0, nx=220):
    kx, kz = knots_from_grades(stretches)
    return open_dem(write_dem(tmp_path / "prof.tif", piecewise(kx, kz), cell=cell, nx=nx, ny=20))


def test_two_steep_runs_split_by_gentle_stretch(tmp_path):
    # 0-300 at 5 %, 300-600 at 30 %, 600-700 at 10 %, 700-1000 at 30 %, 1000-1500 at 5 %.
    # Expected: runs [300, 600] and [700, 1000], 300 ft each, both > 200 ft.
    # Tolerance: one step (10 ft); knots fall on cell centres so in practice exact.
    dem = profile_dem(tmp_path, [(300, 5), (300, 30), (100, 10), (300, 30), (500, 5)])
    p = line_profile(dem, LineString([(0, 95), (1500, 95)]), NY_FT, step_ft=10.0)
    r = grade_runs(p, max_grade_pct=25, max_run_ft=200)
    assert len(r.runs) == 2
    for run, (s, e) in zip(r.runs, [(300, 600), (700, 1000)]):
        assert run.start_ft == pytest.approx(s, abs=10) and run.end_ft == pytest.approx(e, abs=10)
        assert run.length_ft == pytest.approx(300, abs=10)
        assert run.exceeds
        assert run.mean_grade_pct == pytest.approx(30.0, abs=0.01)
        assert run.max_grade_pct == pytest.approx(30.0, abs=0.01)
        # slope length = 300 * sqrt(1 + 0.3^2) = 313.21 ft
        assert run.slope_length_ft == pytest.approx(300 * math.sqrt(1.09), abs=10)
        assert run.geometry.length == pytest.approx(run.length_ft, rel=1e-5)
    assert r.runs[0].geometry.coords[0] == pytest.approx((300, 95), abs=1e-6)


def test_190_and_210_ft_runs_only_longer_exceeds(tmp_path):
    # 0-200 5 %, 200-390 30 % (190 ft), 390-500 5 %, 500-710 30 % (210 ft), 710-1000 5 %.
    dem = profile_dem(tmp_path, [(200, 5), (190, 30), (110, 5), (210, 30), (290, 5)])
    p = line_profile(dem, LineString([(0, 95), (1000, 95)]), NY_FT, step_ft=10.0)
    r = grade_runs(p, max_grade_pct=25, max_run_ft=200)
    assert [round(x.length_ft) for x in r.runs] == [190, 210]
    assert [x.exceeds for x in r.runs] == [False, True]
    assert len(r.exceeding) == 1 and r.exceeding[0].start_ft == pytest.approx(500 * 1.000002)


def test_slope_length_switch(tmp_path):
    # 195 ft at 30 %: slope length 195 * sqrt(1.09) = 203.58 ft.
    # Cell 5 ft so the knots (100, 295) fall on cell centres.
    dem = profile_dem(tmp_path, [(100, 5), (195, 30), (205, 5)], cell=5.0, nx=110)
    p = line_profile(dem, LineString([(0, 45), (500, 45)]), NY_FT, step_ft=5.0)
    h = grade_runs(p, max_grade_pct=25, max_run_ft=200)
    s = grade_runs(p, max_grade_pct=25, max_run_ft=200, run_length="slope")
    assert len(h.runs) == 1 and len(s.runs) == 1
    assert h.runs[0].length_ft == pytest.approx(195.0, rel=1e-5)  # ftUS/ft ratio
    assert h.runs[0].slope_length_ft == pytest.approx(195 * math.sqrt(1.09), abs=0.01)
    assert not h.runs[0].exceeds and s.runs[0].exceeds
    with pytest.raises(InputError, match="horizontal, slope"):
        grade_runs(p, max_grade_pct=25, max_run_ft=200, run_length="ground")


def test_grade_filter_removes_a_one_cell_spike(tmp_path):
    # 5 % road with one 3-ft bump at x=500. Raw: 490->500 rises 0.5 + 3 = 3.5 ft in 10 ft
    # = 35 % (a run); 500->510 falls 3 - 0.5 = 2.5 ft = 25 % (not steeper than 25 %).
    # A 50-ft running median (5 segments of 10 ft around each) sees at most the two bumped
    # segments among five: the median is the road's 5 % everywhere.
    kx = np.array([0, 490, 500, 510, 1000.0])
    kz = 0.05 * kx + np.array([0, 0, 3, 0, 0])
    dem = open_dem(write_dem(tmp_path / "s.tif", piecewise(kx, kz), nx=110, ny=10))
    p = line_profile(dem, LineString([(0, 45), (1000, 45)]), NY_FT, step_ft=10)
    raw = grade_runs(p, max_grade_pct=25, max_run_ft=5)
    smooth = grade_runs(p, max_grade_pct=25, max_run_ft=5, smoothing_window_ft=50)
    k = 1.000002  # z in ft over x in ftUS: grades are 1.000002 times smaller in ft per ft
    assert len(raw.runs) == 1 and raw.max_grade_pct == pytest.approx(35 / k, abs=1e-3)
    assert smooth.runs == [] and smooth.max_grade_pct == pytest.approx(5 / k, abs=1e-3)
    assert smooth.window_ft == 50


def _weighted_median_brute(values, weights):
    """Weighted median by brute force: sort, walk the cumulative weight; the mean of the two
    middle values when the cumulative weight hits exactly one half."""
    pairs = sorted((v, w) for v, w in zip(values, weights) if w > 0)
    total = sum(w for _, w in pairs)
    acc = 0.0
    for k, (v, w) in enumerate(pairs):
        acc += w
        if abs(acc - total / 2) <= 1e-9 * total and k + 1 < len(pairs):
            return (v + pairs[k + 1][0]) / 2
        if acc > total / 2:
            return v
    return pairs[-1][0]


def brute_filter(d, z, window):
    """filter_grades written as loops: each segment's window centred on its middle, half-width
    min(window/2, distance to the ends of its stretch of valid segments), neighbours weighted by
    their overlap with it."""
    n = len(d) - 1
    g = [abs(z[i + 1] - z[i]) / (d[i + 1] - d[i]) * 100 for i in range(n)]
    ok = [math.isfinite(x) for x in g]
    out = [math.nan] * n
    for i in range(n):
        if not ok[i]:
            continue
        a = i
        while a > 0 and ok[a - 1]:
            a -= 1
        b = i
        while b < n - 1 and ok[b + 1]:
            b += 1
        mid = (d[i] + d[i + 1]) / 2
        h = min(window / 2, mid - d[a], d[b + 1] - mid)
        vals, ws = [], []
        for j in range(a, b + 1):
            w = min(mid + h, d[j + 1]) - max(mid - h, d[j])
            if w > 0:
                vals.append(g[j])
                ws.append(w)
        out[i] = _weighted_median_brute(vals, ws) if window > 0 and ws else g[i]
    return np.array(out)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(-8, 8, allow_nan=False), min_size=2, max_size=60),
       st.lists(st.floats(1, 15), min_size=60, max_size=60), st.floats(0, 80), st.booleans())
def test_filter_grades_matches_brute_force(dzs, steps, window, hole):
    z = np.concatenate([[100.0], 100 + np.cumsum(dzs)])
    d = np.concatenate([[0.0], np.cumsum(steps[: len(z) - 1])])
    if hole and len(z) > 6:
        z[len(z) // 2] = np.nan
    np.testing.assert_allclose(filter_grades(d, z, window), brute_filter(d, z, window), atol=1e-9)


def test_filter_keeps_a_slope_break_where_it_is():
    # 5 % for 100 ft then 40 % for 100 ft, samples every 10 ft. A moving average of the elevations
    # over 30 ft ramps the grade from 5 to 40 % across 90..110 ft; the running median over 30 ft
    # keeps every segment's grade: the 40 % run starts at 100 ft whatever the window.
    d = np.arange(0.0, 210.0, 10.0)
    z = np.interp(d, [0, 100, 200], [0, 5, 45])
    for w in (0, 15, 30, 60, 150):
        r = grade_runs(synthetic_profile([(100, 5), (100, 40)]), max_grade_pct=25, max_run_ft=50, smoothing_window_ft=w)
        assert [(x.start_ft, x.end_ft) for x in r.runs] == [(100.0, 200.0)], w
        assert r.runs[0].mean_grade_pct == pytest.approx(40.0)
        np.testing.assert_allclose(filter_grades(d, z, w), [5.0] * 10 + [40.0] * 10)


def test_effective_window_from_the_cell_size():
    # 3 cells of 16.4 ft = 49.2 ft > 15 ft; 3 cells of 1 m = 9.84 ft < 15 ft: the rulebook's 15 ft
    assert effective_window_ft(15, 3, 16.4) == pytest.approx(49.2)
    assert effective_window_ft(15, 3, FT_PER_M) == 15


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-8, 8, allow_nan=False), min_size=2, max_size=80), st.floats(0, 20), st.floats(0, 60)
)
def test_runs_match_brute_force(dzs, limit, max_run):
    z = np.concatenate([[100.0], 100 + np.cumsum(dzs)])
    z[len(z) // 3] = np.nan if len(z) > 6 else z[len(z) // 3]
    d = np.arange(len(z)) * 10.0
    prof = Profile(x=d, y=0 * d, dist_ft=d, z_ft=z)
    r = grade_runs(prof, max_grade_pct=limit, max_run_ft=max_run)
    # brute force: walk the segments one by one
    runs, cur = [], None
    for i in range(len(z) - 1):
        g = abs(z[i + 1] - z[i]) / 10 * 100
        if np.isfinite(g) and g > limit + 1e-9 * max(limit, 1.0):  # at the limit within float noise: not over
            cur = [d[i], d[i + 1]] if cur is None else [cur[0], d[i + 1]]
        elif cur is not None:
            runs.append(tuple(cur))
            cur = None
    if cur is not None:
        runs.append(tuple(cur))
    assert run_spans(r) == runs
    assert [x.exceeds for x in r.runs] == [(e - s) > max_run * (1 + 1e-9) for s, e in runs]
    n_nan = int(np.sum(~np.isfinite(np.diff(z))))
    assert r.evaluated_length_ft == pytest.approx(d[-1] - 10 * n_nan)


# --------------------------------------------------------------------------------------------
# off the DEM and nodata
# --------------------------------------------------------------------------------------------


def test_off_dem_and_nodata_hole_not_evaluated(tmp_path):
    # 30 % plane, 100 x 10 cells of 10 ft: footprint x in [-5, 995]. Nodata in the cells
    # centred at x = 400..450 (6 cells, edges 395..455). Road y=45 from x=0 to x=1200, step 10.
    # Bilinear needs the neighbours with weight > 0, so samples x in (390, 460) are NaN:
    #   hole stretch [390, 460] = 70 ft (hole 60 ft + one cell);
    #   off the DEM: samples up to 990 are inside (edge half-cell extended), 1000 is NaN:
    #   stretch [990, 1200] = 210 ft.
    p = write_dem(
        tmp_path / "hole.tif",
        lambda X, Y: 0.3 * X,
        nx=100,
        ny=10,
        nodata=-9999.0,
        mask_fn=lambda X, Y: (X >= 400) & (X <= 450),
    )
    dem = open_dem(p)
    assert dem.nodata == -9999.0
    assert np.isnan(dem.read_ft()[:, 40:46]).all() and np.isfinite(dem.read_ft()[:, 39]).all()
    prof = line_profile(dem, LineString([(0, 45), (1200, 45)]), NY_FT, step_ft=10)
    r = grade_runs(prof, max_grade_pct=25, max_run_ft=200)
    k = 1.000002  # ftUS -> ft (dist_ft is in international feet)
    spans = [(g.start_ft / k, g.end_ft / k) for g in r.not_evaluated]
    assert spans == [pytest.approx((390, 460)), pytest.approx((990, 1200))]
    assert [g.length_ft / k for g in r.not_evaluated] == [pytest.approx(70), pytest.approx(210)]
    assert r.not_evaluated[1].geometry.length == pytest.approx(210)
    assert r.evaluated_length_ft / k == pytest.approx(1200 - 70 - 210)
    # the steep stretches either side of the hole stay separate runs: [0, 390] and [460, 990]
    assert [(a / k, b / k) for a, b in run_spans(r)] == [pytest.approx((0, 390)), pytest.approx((460, 990))]
    assert not r.fully_evaluated


def test_road_entirely_off_dem(plane30):
    prof = line_profile(plane30, LineString([(10_000, 0), (11_000, 0)]), NY_FT)
    r = grade_runs(prof, max_grade_pct=25, max_run_ft=200)
    assert r.runs == [] and r.evaluated_length_ft == 0 and math.isnan(r.max_grade_pct)
    assert len(r.not_evaluated) == 1
    assert r.not_evaluated[0].length_ft == pytest.approx(r.total_length_ft)


# --------------------------------------------------------------------------------------------
# stored values: the band's scale and offset, fill values and impossible cells
# --------------------------------------------------------------------------------------------


def tilted(X, Y):
    """z = 0.3 x + 0.1 y + 900 ft: 30 % along x; whole hundredths of a foot at every cell centre."""
    return 0.3 * X + 0.1 * Y + 900


@pytest.mark.parametrize(
    ("stored", "dtype", "scale", "offset"),
    [
        (lambda X, Y: np.round(tilted(X, Y) * 100), "int32", 0.01, None),  # hundredths of a foot
        (lambda X, Y: tilted(X, Y) - 1000, "float32", None, 1000.0),  # elevation - 1000
        (lambda X, Y: np.round((tilted(X, Y) - 1000) * 100), "int32", 0.01, 1000.0),  # both
    ],
    ids=["scale", "offset", "scale_and_offset"],
)
def test_band_scale_and_offset_give_the_plain_dems_values(tmp_path, stored, dtype, scale, offset):
    # Once read was the stored value: 100 x the grades and elevations (4,348 contour levels instead of
    # 43 on the sample), or elevations 1,000 ft low (FLD-004 passed on a highest adjacent grade of -147 ft).
    plain = open_dem(write_dem(tmp_path / "plain.tif", tilted, nx=100, ny=100))
    dem = open_dem(write_dem(tmp_path / "s.tif", stored, nx=100, ny=100, dtype=dtype, scale=scale, offset=offset))
    z = dem.read_ft()
    # cell (row 0, col 0) is centred at (0, 990): 0 + 99 + 900 = 999 ft; (99, 99) at (990, 0): 297 + 900 = 1,197 ft.
    # Tolerance 1e-3 ft: float32 holds 1,197 to 1.2e-4 ft.
    assert z[0, 0] == pytest.approx(999, abs=1e-3) and z[99, 99] == pytest.approx(1197, abs=1e-3)
    np.testing.assert_allclose(z, plain.read_ft(), atol=1e-3)
    # grade along x: 30 % (per US survey foot: 30 / 1.000002), tolerance 0.01 %
    p = line_profile(dem, LineString([(100, 500), (900, 500)]), NY_FT)
    np.testing.assert_allclose(grades(p), 30.0, atol=0.01)
    assert grade_runs(p, max_grade_pct=25, max_run_ft=200).max_grade_pct == pytest.approx(30.0, abs=0.01)
    # HAG of (200,300)-(260,340): max at (260, 340): 78 + 34 + 900 = 1,012; min at (200, 300): 60 + 30 + 900 = 990
    hi, lo, frac = highest_adjacent_grade(dem, box(200, 300, 260, 340), NY_FT)
    assert (hi, lo, frac) == (pytest.approx(1012, abs=1e-3), pytest.approx(990, abs=1e-3), 1.0)
    # contours: z spans 900 (0, 0) .. 1,296 (990, 990): the 10-ft levels 900 .. 1,290, as on the plain DEM
    c = contours(dem, 10)
    assert list(c["elev_ft"]) == pytest.approx(list(np.arange(900, 1300, 10)))
    assert list(c["elev_ft"]) == list(contours(plain, 10)["elev_ft"])
    assert (dem.z_scale, dem.z_offset) == (scale or 1.0, offset or 0.0)
    # the DEM's description says so (the log line of open_dem)
    assert dem.z_description == f"ft (metadata); stored values x {scale or 1:g} + {offset or 0:g} (band scale and offset)"


def test_a_zero_band_scale_is_refused(tmp_path):
    with pytest.raises(DemError, match=r"z.tif: its band scale 0 .*gdal_edit.py -scale 1 -offset 0 z.tif"):
        open_dem(write_dem(tmp_path / "z.tif", tilted, nx=10, ny=10, scale=0.0))


def test_an_undeclared_fill_under_a_road_is_nodata_not_flat_ground(tmp_path, dem_warnings):
    # A 30 % plane declaring nodata -9999 whose cells centred at x = 400..600 (21 columns x 10 rows)
    # hold -32768, an int16 fill it does not declare. Read as ground they were flat: a road on them
    # had grade 0 % (HRV-010 pass) and a footprint on them a highest adjacent grade of -32,768 ft.
    p = write_dem(tmp_path / "fill.tif", lambda X, Y: np.where((X >= 400) & (X <= 600), -32768.0, 0.3 * X + 100),
                  nx=100, ny=10, nodata=-9999.0, dtype="float32")
    dem = open_dem(p)
    z = dem.read_ft()
    assert np.isnan(z[:, 40:61]).all() and np.isfinite(z[:, 39]).all() and np.isfinite(z[:, 61]).all()
    assert len(dem_warnings) == 1
    assert dem_warnings[0].startswith("DEM fill.tif: 210 cell(s) in the area read hold -32768 (stored value): a "
                                      "no-data fill the DEM does not declare (it declares nodata -9999). Read as "
                                      "nodata: what lies on them is not evaluated.")
    on = grade_runs(line_profile(dem, LineString([(420, 45), (580, 45)]), NY_FT, step_ft=10),
                    max_grade_pct=25, max_run_ft=200)
    assert on.runs == [] and on.evaluated_length_ft == 0 and math.isnan(on.max_grade_pct)
    assert len(on.not_evaluated) == 1 and not on.fully_evaluated
    # across it: samples in (390, 610) touch a hole cell (bilinear neighbours of weight > 0)
    across = grade_runs(line_profile(dem, LineString([(0, 45), (900, 45)]), NY_FT, step_ft=10),
                        max_grade_pct=25, max_run_ft=200)
    k = 1.000002  # ftUS -> ft
    assert [(g.start_ft / k, g.end_ft / k) for g in across.not_evaluated] == [pytest.approx((390, 610))]
    hi, _, frac = highest_adjacent_grade(dem, box(450, 10, 550, 80), NY_FT)
    assert math.isnan(hi) and frac == 0.0


@pytest.mark.parametrize(
    ("value", "dtype", "nodata", "why"),
    [
        (65535, "uint16", None, "an elevation no ground has (below -1,500 ft or above 30,000 ft)"),
        (-3.4028234663852886e38, "float32", -9999.0, "a no-data fill the DEM does not declare (it declares nodata -9999)"),
        (-5000.0, "float32", -9999.0, "an elevation no ground has"),
        (99999.0, "float32", None, "an elevation no ground has"),
    ],
    ids=["uint16_max", "float32_fill_other_nodata", "below_the_dead_sea", "above_everest"],
)
def test_cells_no_ground_has_are_nodata_with_a_warning(tmp_path, dem_warnings, value, dtype, nodata, why):
    # 2 x 3 cells of a 10 x 10 plane (0.3 x + 100 ft, whole feet) hold ``value``: nodata, never ground
    # (65535 was read as a 65,535-ft peak; -3.4e38 beside a declared -9999 stopped the run).
    def fn(X, Y):
        z = np.round(0.3 * X + 100)
        z[2:4, 5:8] = value
        return z

    dem = open_dem(write_dem(tmp_path / "odd.tif", fn, nx=10, ny=10, nodata=nodata, dtype=dtype))
    z = dem.read_ft()
    assert np.isnan(z[2:4, 5:8]).all() and np.isfinite(z).sum() == 100 - 6
    assert z[0, 0] == 100 and z[9, 9] == 100 + 0.3 * 90
    assert len(dem_warnings) == 1 and dem_warnings[0].startswith("DEM odd.tif: 6 cell(s) in the area read hold ")
    assert why in dem_warnings[0]
    dem.read_ft()  # cached: no second warning
    assert len(dem_warnings) == 1



def _lake_dem(tmp_path):
    """A 30 % plane (0.3 x + 100 ft, 200 x 100 cells of 10 ft) holding a lake whose hydro-flattened
    surface is 150 ft exactly in every cell centred at 400 <= x <= 900, 200 <= y <= 700."""
    def fn(X, Y):
        return np.where((X >= 400) & (X <= 900) & (Y >= 200) & (Y <= 700), 150.0, 0.3 * X + 100)

    return open_dem(write_dem(tmp_path / "lake.tif", fn, nodata=-9999.0, dtype="float32"))


def test_a_road_on_cells_without_relief_is_not_evaluated_never_flat_ground(tmp_path):
    # Every DEM cell around the road holds 150 ft: grade 0 %, "fully evaluated", no run, a pass. A
    # lake's flattened surface (a bridge), a no-data fill the DEM does not declare or a placeholder
    # raster: no grade was measured. The road is not evaluated, with the reason.
    from geoconstraints.geometry.terrain import road_terrain

    dem = _lake_dem(tmp_path)
    on = road_terrain(dem, LineString([(500, 400), (800, 450)]), NY_FT, layer="haul_roads", feature_id="B",
                      grade=GRADE)
    assert not on.fully_evaluated and on.runs == [] and on.evaluated_length_ft == 0
    assert on.error == ("every cell of DEM lake.tif around the road holds 150.00 ft: no relief, so no grade measured "
                        "(a water body's flattened surface, a no-data fill the DEM does not declare, or a placeholder "
                        "raster?)")
    assert (on.why, on.flat_ft, on.dem_name) == ("no_relief", 150.0, "lake.tif")  # the key a rule words
    # a road onto the shore is measured: the cells around it differ (30 % up to the lake, then level)
    across = road_terrain(dem, LineString([(100, 400), (800, 400)]), NY_FT, grade=GRADE)
    assert not across.error and across.fully_evaluated and across.max_grade_pct == pytest.approx(30, abs=0.5)
    # a road of two parts, one on the lake: that part is a stretch not evaluated, the other measured
    two = road_terrain(dem, MultiLineString([[(500, 400), (800, 400)], [(1200, 400), (1500, 400)]]), NY_FT,
                       grade=GRADE)
    assert not two.error and len(two.gaps) == 1
    assert (two.gaps[0].why, two.gaps[0].flat_ft) == ("no_relief", 150.0)  # a rule words it (no_relief_stretch)
    assert two.gaps[0].length_ft == pytest.approx(300, abs=0.01)
    assert two.evaluated_length_ft == pytest.approx(300, abs=0.01) and two.max_grade_pct == pytest.approx(30, abs=0.5)


def test_a_flat_area_around_the_plan_in_a_dem_with_relief_is_read_with_a_warning(tmp_path, dem_warnings):
    # The area the run needs (the focus) lies in the lake: one value in every cell. The DEM has
    # relief elsewhere (its windows probed across the raster): real data, not refused; warned.
    dem = _lake_dem(tmp_path)
    assert dem.set_focus((500, 300, 800, 600), NY_FT)
    r0, r1, c0, c1 = dem.focus
    z = dem.read_ft(((r0, r1), (c0, c1)))
    assert (r1 - r0, c1 - c0) == (33, 33) and (z == 150).all()  # x 490 .. 810, y 290 .. 610: in the lake
    assert len(dem_warnings) == 1 and dem_warnings[0].startswith(
        "DEM lake.tif: every one of the 1,089 valid cells around the plan holds 150.00 ft, while the raster has relief "
        "elsewhere (150.00 ft to 619.00 ft sampled)")


def test_a_dem_of_one_value_is_sampled_as_it_is_but_its_grades_are_not_evaluated(tmp_path):
    # open_dem(...).sample is a faithful sampler (no plan, no focus: nothing refused); what a
    # grade would be measured on is judged by its caller: no relief, not evaluated.
    from geoconstraints.geometry.terrain import road_terrain

    dem = open_dem(write_dem(tmp_path / "zero.tif", lambda X, Y: 0.0 * X, dtype="float32"))
    assert (dem.sample([100.0, 500.0], [100.0, 500.0], NY_FT) == 0).all()
    rt = road_terrain(dem, LineString([(100, 100), (900, 600)]), NY_FT, grade=GRADE)
    assert rt.error.startswith("every cell of DEM zero.tif around the road holds 0.00 ft: no relief")


def test_geographic_line_crs_refused(plane30):
    with pytest.raises(CRSError, match="geographic"):
        line_profile(plane30, LineString([(-76, 42), (-76.01, 42)]), "EPSG:4326")


# --------------------------------------------------------------------------------------------
# DEM in another CRS
# --------------------------------------------------------------------------------------------


def test_utm_dem_sampled_from_state_plane_line(tmp_path):
    # DEM in UTM 18N (metres) near Vestal NY; plane z_m = 0.3 (E - E0) + 0.1 (N - N0).
    to_utm = pyproj.Transformer.from_crs("EPSG:4326", UTM18, always_xy=True)
    e0, n0 = to_utm.transform(-76.03, 42.08)
    e0, n0 = round(e0), round(n0)
    cell, n = 2.0, 1000  # 2 km square
    p = write_dem(
        tmp_path / "utm.tif",
        lambda X, Y: 0.3 * (X - e0) + 0.1 * (Y - n0),
        cell=cell,
        nx=n,
        ny=n,
        x0=e0,
        ytop=n0 + n * cell,
        crs=UTM18,
        units="metre",
    )
    dem = open_dem(p)
    assert dem.z_units == "m" and dem.xy_unit_ft == pytest.approx(FT_PER_M)
    # Line in NY Central ftUS: starts 500 m inside the DEM corner, runs 3,000 ft east, then NE.
    utm_to_ny = pyproj.Transformer.from_crs(UTM18, NY_FT, always_xy=True)
    sx, sy = utm_to_ny.transform(e0 + 500.0, n0 + 500.0)
    line = LineString([(sx, sy), (sx + 3000, sy), (sx + 3500, sy + 500)])
    prof = line_profile(dem, line, NY_FT)
    assert np.isfinite(prof.z_ft).all()
    # Analytic: transform the sample points ourselves, evaluate the plane, metres -> feet.
    ny_to_utm = pyproj.Transformer.from_crs(NY_FT, UTM18, always_xy=True)
    E, N = ny_to_utm.transform(prof.x, prof.y)
    z_true = (0.3 * (E - e0) + 0.1 * (N - n0)) * FT_PER_M
    np.testing.assert_allclose(prof.z_ft, z_true, atol=1e-6)  # bilinear is exact on a plane
    g = grades(prof)
    g_true = np.abs(np.diff(z_true)) / np.diff(prof.dist_ft) * 100
    np.testing.assert_allclose(g, g_true, atol=1e-4)
    # Sanity: the east leg climbs ~30 % (UTM grid east vs NY-Central grid east differ by the
    # meridian-convergence difference, < 1 degree here, and scale factors ~1e-4: within 0.5 %).
    east = prof.dist_ft < 3000 * 1.000002 - 1
    assert np.all(np.abs(g[east[:-1]] - 30.0) < 0.5)


def test_line_in_metre_crs_distances_in_feet(tmp_path):
    p = write_dem(
        tmp_path / "m.tif",
        lambda X, Y: 0.3 * (X - 400000.0),  # 0 .. 90 m (0.3 X would be 120 km: no ground, nodata)
        cell=1.0,
        nx=300,
        ny=50,
        crs=UTM18,
        units="m",
        x0=400000.0,
        ytop=4660050.0,
    )
    dem = open_dem(p)
    prof = line_profile(dem, LineString([(400010, 4660020), (400210, 4660020)]), UTM18)
    assert prof.dist_ft[-1] == pytest.approx(200 * FT_PER_M)
    assert np.diff(prof.dist_ft).max() <= dem.cell_size_ft + 1e-9  # default step = 1 cell
    np.testing.assert_allclose(grades(prof), 30.0, atol=1e-6)  # z and xy both metres -> ft


# --------------------------------------------------------------------------------------------
# water bars
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "grade,kwargs,expected_positions,band",
    [
        (8, {}, [200, 400, 600, 800], "6-10 %"),  # 1,000 ft at 8 %: every 200 ft; none at 1,000
        (1, {}, [], None),  # under 2 %: no water bar
        (5.5, {}, [200, 400, 600, 800], "6-10 %"),  # between bands -> steeper band, 200 ft
        (5.5, {"between_bands": "shallower"}, [300, 600, 900], "2-5 %"),
        (3, {}, [300, 600, 900], "2-5 %"),
        (20, {}, [100 * k for k in range(1, 10)], "16 % and greater"),
        (8, {"spacing_end": "longer"}, [300, 600, 900], "6-10 %"),
    ],
)
def test_water_bars_constant_grade(grade, kwargs, expected_positions, band):
    prof = synthetic_profile([(1000, grade)])
    bars = place_water_bars(prof, table=WATER_BAR_TABLE, **kwargs)
    assert list(bars["dist_ft"]) == pytest.approx(expected_positions)
    if band:
        assert set(bars["band"]) == {band}
        assert bars["grade_pct"].to_numpy() == pytest.approx(grade)
        np.testing.assert_allclose(bars.geometry.x, bars["dist_ft"])  # road along x from 0
    assert bars.crs == pyproj.CRS(NY_FT)


def test_water_bars_flat_then_steep():
    # 500 ft at 1 % then 1,000 ft at 8 % (total 1,500 ft). Walk (candidates 100/200/300 ft):
    # p=0..200: every window ahead averages 1 % -> no bar, step 100 ft.
    # p=300: [300, 600] mean = (200*1 + 100*8)/300 = 3.33 % -> 2-5 band, 300 ft fits -> bar 600.
    # p=600 onwards: 8 % -> 200 ft: bars at 800, 1000, 1200, 1400; 1600 is past the end.
    bars = place_water_bars(synthetic_profile([(500, 1), (1000, 8)]), table=WATER_BAR_TABLE)
    assert list(bars["dist_ft"]) == pytest.approx([600, 800, 1000, 1200, 1400])
    assert bars["grade_pct"].iloc[0] == pytest.approx(10 / 3)
    assert list(bars["band"]) == ["2-5 %"] + ["6-10 %"] * 4
    assert list(bars["min_spacing_ft"]) == [300] + [200] * 4
    assert list(bars["max_spacing_ft"]) == [500] + [300] * 4


def test_water_bars_from_dem(tmp_path):
    # 8 % plane along x, road 1,000 ft (ftUS) on it: 4 bars as in the constant-grade case.
    dem = open_dem(write_dem(tmp_path / "p8.tif", lambda X, Y: 0.08 * X, nx=120, ny=10))
    prof = line_profile(dem, LineString([(0, 45), (1000, 45)]), NY_FT)
    bars = place_water_bars(prof, table=WATER_BAR_TABLE)
    assert len(bars) == 4
    # bars every 200 international ft = 200 / 1.000002 ftUS along the line
    np.testing.assert_allclose(bars.geometry.x, np.array([200, 400, 600, 800]) / 1.000002, atol=1e-6)


def test_water_bar_options_validated():
    prof = synthetic_profile([(500, 8)])
    with pytest.raises(InputError, match="shorter, longer"):
        place_water_bars(prof, table=WATER_BAR_TABLE, spacing_end="middle")
    # one spelling, the rulebook's: "shallower" (the old "gentler" is refused, not translated)
    with pytest.raises(InputError, match="steeper, shallower"):
        place_water_bars(prof, table=WATER_BAR_TABLE, between_bands="gentler")
    with pytest.raises(InputError, match="missing"):
        place_water_bars(prof, table=[{"min_grade_pct": 2}])


# --------------------------------------------------------------------------------------------
# contours and HAG
# --------------------------------------------------------------------------------------------


def test_contours_on_plane_are_straight_lines(tmp_path):
    # z = 0.3 x on cell centres x = 0..990 -> z 0..297; 10-ft levels 0..290 -> vertical lines
    # at x = level / 0.3.
    dem = open_dem(write_dem(tmp_path / "c.tif", lambda X, Y: 0.3 * X, nx=100, ny=50))
    c = contours(dem, 10)
    assert list(c["elev_ft"]) == pytest.approx(list(np.arange(0, 300, 10)))
    for level, geom in zip(c["elev_ft"], c.geometry):
        xy = np.asarray(geom.coords)
        np.testing.assert_allclose(xy[:, 0], level / 0.3, atol=1e-6)
        assert np.ptp(xy[:, 1]) == pytest.approx(490)  # full height between outer centres
    sub = contours(dem, 10, bounds=(100, 0, 300, 400))
    assert sub["elev_ft"].min() >= 30 and sub["elev_ft"].max() <= 90
    assert contours(dem, 10, crs="EPSG:4326").crs == pyproj.CRS("EPSG:4326")


def test_contours_refuse_an_interval_too_small_for_the_ground(tmp_path, monkeypatch):
    # z = 0.3 x on cell centres x = 0..990: relief 297 ft. With at most 100 levels (the limit set low here), a
    # 3-ft interval traces levels 0..297 = 100 (at the limit), 2.97 ft traces 101 (over): refused, naming the
    # interval, the relief and the smallest interval that fits (297 / 100 = 2.97 ft, shown as 3). A 0.0001-ft
    # interval used to trace millions of levels and never end.
    import geoconstraints.geometry.terrain as tr

    dem = open_dem(write_dem(tmp_path / "c.tif", lambda X, Y: 0.3 * X, nx=100, ny=50))
    monkeypatch.setattr(tr, "MAX_CONTOUR_LEVELS", 100)
    # at the limit: traced (level 297, the last column of cell centres, gives no line: 0..294 drawn)
    assert contours(dem, 3.0)["elev_ft"].tolist() == pytest.approx(list(np.arange(0, 297, 3)))
    with pytest.raises(InputError, match=r"^contour interval 2.97 ft over the 297.0 ft of relief of DEM c.tif here gives "
                                         r"101 contour levels; at most 100 are traced. Give a contour interval of at "
                                         r"least 3 ft \(the rulebook's contour_interval_ft\)$"):
        contours(dem, 2.97)
    monkeypatch.setattr(tr, "MAX_CONTOUR_LEVELS", 5_000)
    with pytest.raises(InputError, match="2,970,001 contour levels"):
        contours(dem, 0.0001)


def test_hag_on_sloping_plane(tmp_path):
    # z = 0.3 x + 0.1 y + 100; footprint (200,300)-(260,340):
    # max at (260, 340): 78 + 34 + 100 = 212; min at (200, 300): 60 + 30 + 100 = 190.
    dem = open_dem(write_dem(tmp_path / "h.tif", lambda X, Y: 0.3 * X + 0.1 * Y + 100, nx=100, ny=100))
    hi, lo, frac = highest_adjacent_grade(dem, box(200, 300, 260, 340), NY_FT)
    assert (hi, lo, frac) == (pytest.approx(212), pytest.approx(190), 1.0)
    # An L-shaped footprint: the highest corner is (250, 380): 75 + 38 + 100 = 213
    ell = Polygon([(200, 300), (260, 300), (260, 340), (250, 340), (250, 380), (200, 380)])
    assert highest_adjacent_grade(dem, ell, NY_FT)[0] == pytest.approx(213)
    # Half off the DEM (footprint x edge at 995): walls x in [900, 1100], y in [0, 100]:
    # evaluated perimeter = bottom and top 90 ft each + left wall 100 = 280 of 600 -> 0.4667
    # (samples up to x=990 inside; segment 990..1000 touches NaN: step 10 on the 200-ft walls).
    hi, lo, frac = highest_adjacent_grade(dem, box(900, 0, 1100, 100), NY_FT, step_ft=10)
    assert frac == pytest.approx(280 / 600, abs=1e-6)
    assert hi == pytest.approx(0.3 * 990 + 0.1 * 100 + 100)
    far = highest_adjacent_grade(dem, box(5000, 0, 5100, 100), NY_FT)
    assert math.isnan(far[0]) and far[2] == 0.0


# --------------------------------------------------------------------------------------------
# the real Muncy lidar DEM (EPSG:2271 ftUS, feet, uint16, no nodata, 16.404 ft cells)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def muncy():
    assert MUNCY.exists(), f"real data missing: {MUNCY}"
    dem = open_dem(MUNCY, z_units="ft")
    with rasterio.open(MUNCY) as src:
        arr = src.read(1).astype("float64")
        gt = src.transform
    return dem, arr, gt


MUNCY_LINES = [
    # across the western ridge (up to 1,333 ft)
    LineString([(2220300, 386000), (2224000, 381000)]),
    # into the south-eastern hills, a polyline
    LineString([(2228000, 373500), (2230500, 371500), (2234000, 372200), (2237500, 370800)]),
    # a long west-east transect over the valley and the eastern hills
    LineString([(2221000, 380000), (2239000, 375000)]),
]


def independent_profile(arr, gt, xs, ys):
    """Bilinear by scipy on the raw array, with our own pixel arithmetic (north-up grid):
    fractional row/col of the cell-centre grid = (coordinate - corner) / cell - 0.5."""
    col = (xs - gt.c) / gt.a - 0.5
    row = (ys - gt.f) / gt.e - 0.5
    return map_coordinates(arr, [row, col], order=1, mode="nearest")


def test_muncy_without_z_units_refused():
    with pytest.raises(DemError, match="--dem-z-units"):
        open_dem(MUNCY)


def test_muncy_metadata(muncy):
    dem, arr, _ = muncy
    assert dem.nodata is None and dem.z_units == "ft" and dem.z_units_source == "user"
    assert dem.crs.to_epsg() == 2271
    assert dem.cell_size_ft == pytest.approx(16.404, abs=0.001)
    assert np.isfinite(dem.read_ft()).all() and dem.read_ft().max() == arr.max() == 1333


@pytest.mark.parametrize("line", MUNCY_LINES, ids=["west-ridge", "se-hills", "transect"])
def test_muncy_profile_matches_independent(muncy, line):
    dem, arr, gt = muncy
    prof = line_profile(dem, line, "EPSG:2271")
    assert np.isfinite(prof.z_ft).all()
    # elevations: same bilinear surface -> agree to 1e-6 ft
    z_ind = independent_profile(arr, gt, prof.x, prof.y)
    np.testing.assert_allclose(prof.z_ft, z_ind, atol=1e-6)
    # distances: horizontal length of the line (ftUS) -> international ft (x 1.000002)
    assert prof.dist_ft[-1] == pytest.approx(line.length * 1.000002, rel=1e-9)
    # bilinear values lie within the 4 surrounding cells (nearest-cell reads, as
    # gdallocationinfo would give): check against min/max of the 2x2 block
    col = (prof.x - gt.c) / gt.a - 0.5
    row = (prof.y - gt.f) / gt.e - 0.5
    c0, r0 = np.floor(col).astype(int), np.floor(row).astype(int)
    block = np.stack([arr[r0, c0], arr[r0, c0 + 1], arr[r0 + 1, c0], arr[r0 + 1, c0 + 1]])
    assert np.all(prof.z_ft >= block.min(0) - 1e-9) and np.all(prof.z_ft <= block.max(0) + 1e-9)
    # nearest-cell sampling through rasterio: looser, |diff| <= the 2x2 relief, median < 2 ft
    with rasterio.open(MUNCY) as src:
        z_near = np.array([v[0] for v in src.sample(zip(prof.x, prof.y))], dtype=float)
    assert np.median(np.abs(z_near - prof.z_ft)) < 2.0
    assert np.all(np.abs(z_near - prof.z_ft) <= np.ptp(block, axis=0) + 1e-9)


@pytest.mark.parametrize("line", MUNCY_LINES, ids=["west-ridge", "se-hills", "transect"])
@pytest.mark.parametrize("window", [0.0, 50.0])
def test_muncy_grade_runs_match_brute_force(muncy, line, window):
    dem, arr, gt = muncy
    prof = line_profile(dem, line, "EPSG:2271")
    r = grade_runs(prof, max_grade_pct=25, max_run_ft=200, smoothing_window_ft=window)
    # Independent: scipy elevations, the running median written as loops, run finding in Python.
    d = prof.dist_ft
    z = independent_profile(arr, gt, prof.x, prof.y)
    gf = brute_filter(d, z, window)
    runs, cur = [], None
    for i in range(len(d) - 1):
        g = gf[i]
        if g > 25:
            cur = [i, i + 1] if cur is None else [cur[0], i + 1]
        elif cur is not None:
            runs.append(cur)
            cur = None
    if cur is not None:
        runs.append(cur)
    assert len(r.runs) == len(runs) >= 3  # the real hills exercise the rule: never a vacuous comparison
    for got, (a, b) in zip(r.runs, runs):
        assert got.start_ft == pytest.approx(d[a], abs=1e-6)
        assert got.end_ft == pytest.approx(d[b], abs=1e-6)
        mean = (gf[a:b] * np.diff(d[a : b + 1])).sum() / (d[b] - d[a])
        assert got.mean_grade_pct == pytest.approx(mean, abs=1e-6)
        assert got.exceeds == (d[b] - d[a] > 200)
    assert r.max_grade_pct == pytest.approx(gf.max(), abs=1e-6)
    assert r.not_evaluated == [] and r.evaluated_length_ft == pytest.approx(d[-1])


def test_muncy_contours_and_hag(muncy):
    dem, arr, gt = muncy
    c = contours(dem, 10, bounds=(2220000, 380000, 2224000, 384000))
    assert len(c) > 20 and (c["elev_ft"] % 10 == 0).all()
    # HAG of a 60 x 40 ft footprint: max/min within the sampled cell range
    fp = box(2230000, 372000, 2230060, 372040)
    hi, lo, frac = highest_adjacent_grade(dem, fp, "EPSG:2271")
    xs, ys, _ = densify(LineString(fp.exterior.coords), dem.cell_size_ft / 1.000002)
    z = independent_profile(arr, gt, xs, ys)
    assert frac == 1.0 and hi == pytest.approx(z.max(), abs=1e-6)
    assert lo == pytest.approx(z.min(), abs=1e-6)


# --------------------------------------------------------------------------------------------
# HRV-010: a run's length does not depend on the grade filter (planes, exact grades and lengths)
# --------------------------------------------------------------------------------------------

K_US = 1200 / 3937 / M_PER_FT
"""Feet per US survey foot (1.000002): EPSG:2261 coordinates are US survey feet."""

PLANE_CELLS = {"1 m": 1 / M_PER_FT, "3 m": 3 / M_PER_FT, "10 m": 10 / M_PER_FT, "5 ft": 5.0, "16.4 ft": 16.4}
"""Cell sizes, in feet."""

GRADE = {"max_grade_pct": 25, "max_run_ft": 200, "smoothing_window_ft": 15, "smoothing_window_cells": 3,
         "run_length": "horizontal"}
"""The vestal rulebook's HRV-010 numbers (the filter window: 15 ft or 3 cells, the wider)."""


def plane_case(tmp_path, units, cell_ft, grade_pct, stretches):
    """A plane rising ``grade_pct`` % along +u and a road of ``stretches`` on it: (length ft, grade %)
    pieces, each drawn in the direction whose grade on the plane is that grade (cos angle =
    grade / plane grade), the steep ones straight up the plane. In feet: EPSG:2261 (US survey
    feet), z in feet; in metres: UTM 18N, z in metres. Returns (dem, line, crs)."""
    crs, k = (NY_FT, K_US) if units == "ft" else (UTM18, FT_PER_M)  # feet per CRS unit
    x0, y0 = (964_988.0, 758_256.0) if units == "ft" else (416_000.0, 4_658_000.0)
    u, v, pts = 0.0, 0.0, [(0.0, 0.0)]
    for length, g in stretches:
        c = min(g / grade_pct, 1.0)
        u, v = u + length * c, v + length * math.sqrt(1 - c * c)
        pts.append((u, v))
    cell = cell_ft / k  # CRS units
    umin, umax = -3 * cell_ft - 10, u + 3 * cell_ft + 10
    vmax = v + 3 * cell_ft + 10
    nx, ny = math.ceil((umax - umin) / cell_ft) + 1, math.ceil((vmax + 3 * cell_ft + 10) / cell_ft) + 1
    ox, oy = x0 + umin / k, y0 + vmax / k
    z_per_unit = grade_pct / 100 * k / (1 if units == "ft" else FT_PER_M)  # z units per CRS unit of x
    dem = open_dem(write_dem(tmp_path / f"plane_{units}.tif", lambda X, Y: 100 + z_per_unit * (X - x0), cell=cell,
                             nx=nx, ny=ny, x0=ox, ytop=oy, crs=crs, units="ft" if units == "ft" else "m"))
    line = LineString([(x0 + a / k, y0 + b / k) for a, b in pts])
    return dem, line, crs


# (plane grade %, road stretches (length ft, grade %), expected run length ft or None, exceeds)
# 25.0 % is not steeper than 25 %: no run at all; 25.1 % for 199 / 200 ft is not more than 200 ft;
# 201 ft is. A steep stretch between 5 % ones keeps its exact length (the median keeps the breaks).
PLANE_CASES = {
    "uniform 25.0 % 201 ft": (25.0, [(201, 25.0)], None, False),
    "uniform 25.1 % 199 ft": (25.1, [(199, 25.1)], 199.0, False),
    "uniform 25.1 % 200 ft": (25.1, [(200, 25.1)], 200.0, False),
    "uniform 25.1 % 201 ft": (25.1, [(201, 25.1)], 201.0, True),
    "26 % 201 ft between 5 %": (26.0, [(100, 5), (201, 26.0), (100, 5)], 201.0, True),
    "26 % 199 ft between 5 %": (26.0, [(100, 5), (199, 26.0), (100, 5)], 199.0, False),
    "40 % 210 ft between 5 %": (40.0, [(100, 5), (210, 40.0), (100, 5)], 210.0, True),
    "40 % 190 ft between 5 %": (40.0, [(100, 5), (190, 40.0), (100, 5)], 190.0, False),
    "25.0 % 201 ft between 5 %": (25.0, [(100, 5), (201, 25.0), (100, 5)], None, False),
}


@pytest.mark.parametrize("units", ["ft", "m"])
@pytest.mark.parametrize("cell", list(PLANE_CELLS))
@pytest.mark.parametrize("case", list(PLANE_CASES))
def test_run_length_exact_on_planes_whatever_the_cell_and_units(tmp_path, units, cell, case):
    from geoconstraints.geometry.terrain import road_terrain

    plane, stretches, length, exceeds = PLANE_CASES[case]
    dem, line, crs = plane_case(tmp_path, units, PLANE_CELLS[cell], plane, stretches)
    rt = road_terrain(dem, line, crs, layer="haul_roads", feature_id="R", grade=GRADE)
    assert rt.fully_evaluated
    # the window is 15 ft or 3 cells, the wider, and the findings say which
    assert rt.window_ft == pytest.approx(max(15.0, 3 * PLANE_CELLS[cell]), rel=1e-5)
    if length is None:
        assert rt.runs == []
        return
    assert len(rt.runs) == 1
    run = rt.runs[0]
    # exact: the steep stretch is a straight segment between two vertices (samples) of the line
    assert run.length_ft == pytest.approx(length, abs=1e-6)
    assert run.mean_grade_pct == pytest.approx(plane, abs=1e-6)
    assert run.exceeds is exceeds
    assert run.geometry.length * (K_US if units == "ft" else FT_PER_M) == pytest.approx(length, abs=1e-6)


def test_band_scale_and_offset_are_said_by_layers(tmp_path):
    # `geoconstraints layers` (and provenance.json, from the same z_description) say the stored values were
    # scaled (the reader applies them: a clerk comparing with the raw file sees why the numbers differ)
    from geoconstraints.io.describe import as_lines, describe

    path = write_dem(tmp_path / "s.tif", lambda X, Y: np.round(tilted(X, Y) * 100), nx=20, ny=20, dtype="int32",
                     scale=0.01)
    text = "\n".join(as_lines(describe(path)))
    assert "stored values x 0.01 + 0 (band scale and offset)" in text
    assert open_dem(path).z_description == "ft (metadata); stored values x 0.01 + 0 (band scale and offset)"
    plain = write_dem(tmp_path / "p.tif", tilted, nx=20, ny=20)
    assert "band scale" not in "\n".join(as_lines(describe(plain)))


def test_join_runs_splits_a_run_where_a_spur_ends_on_it_with_its_own_slope_lengths() -> None:
    # HRV-010 (§ 44-VI-6(F)(1)) with run_length slope: a run split where another run ends on it takes each
    # piece's slope length from the run's profile (60 ft over its first 50 ft, 50 ft over the next 50), not
    # a share of the whole; with the 150-ft spur: 60 + 150 = 210 ft, over 200 ft and not over 210 ft
    from geoconstraints.geometry.terrain import Run, _node_runs, join_runs

    run = Run(0.0, 100.0, 100.0, 110.0, 40.0, 50.0, False, LineString([(0, 0), (100, 0)]),
              slope_profile=(np.array([0.0, 50.0, 100.0]), np.array([0.0, 60.0, 110.0])))
    spur = Run(0.0, 150.0, 150.0, 150.0, 30.0, 30.0, False, LineString([(50, 0), (50, 150)]))
    parent, _, length = _node_runs([run, spur], "slope")
    assert parent.tolist() == [0, 0, 1] and length == pytest.approx([60.0, 50.0, 150.0])
    out = join_runs([("A", run), ("B", spur)], max_run_ft=200, run_length="slope")
    assert out[0].length_ft == pytest.approx(210.0) and out[0].others == ["B"] and not out[0].cut_short
    assert join_runs([("A", run), ("B", spur)], max_run_ft=210, run_length="slope") == {}


def test_join_runs_joins_runs_crossing_or_touching_at_interior_points() -> None:
    # HRV-010 (§ 44-VI-6(F)(1)): two steep runs crossing in an X (no end shared) are joined at the crossing,
    # the longest stretch being the longer arm of each: 100 + 100 ft is not more than 200 ft, 100 + 100.5 ft
    # is; a run whose bend touches another's middle (interior points touching, no crossing) is joined too
    from geoconstraints.geometry.terrain import Run, join_runs

    def run(*xy):
        line = LineString(xy)
        return Run(0.0, line.length, line.length, line.length, 40.0, 40.0, False, line)

    a = run((0, 0), (150, 0))  # the crossing 100 ft along it
    assert join_runs([("A", a), ("B", run((100, -100), (100, 50)))], max_run_ft=200) == {}
    over = join_runs([("A", a), ("B", run((100, -100.5), (100, 50)))], max_run_ft=200)
    assert {k: (j.length_ft, j.others, j.cut_short) for k, j in over.items()} == {
        0: (pytest.approx(200.5), ["B"], False), 1: (pytest.approx(200.5), ["A"], False)}
    short = run((0, 0), (120, 0))  # 120 ft, V 100 ft (two 50-ft arms): each under 140 ft alone
    touch = join_runs([("A", short), ("V", run((70, 40), (100, 0), (130, 40)))], max_run_ft=140)  # V's bend on A
    assert touch[0].length_ft == pytest.approx(150.0) and touch[0].others == ["V"]  # 100 ft of A + 50 ft of V
    assert touch[1].length_ft == pytest.approx(150.0) and touch[1].others == ["A"]
    assert join_runs([("A", short), ("V", run((70, 40), (100, 0.001), (130, 40)))], max_run_ft=140) == {}  # apart


# --------------------------------------------------------------------------------------------
# HRV-010: a road whose line meets or crosses itself (a ring, a figure-eight)
# --------------------------------------------------------------------------------------------


def _loop_dem(tmp_path):
    """z = 1000 + 0.4 X: 40 % along +X (0.4 ft per US survey foot: 39.99992 %), 0 % along Y, 20 % at 60
    degrees from X (cos 60 = 0.5); 10-ft cells over X, Y in [-5, 1995] x [-5, 1495] (US survey feet)."""
    return open_dem(write_dem(tmp_path / "loop40.tif", lambda X, Y: 1000 + 0.4 * X, nx=200, ny=150))


def _haul_roads(ids, lines):
    """A haul_roads layer (EPSG:2261) of ``lines`` with ``feature_id`` ``ids``."""
    import geopandas as gpd

    return gpd.GeoDataFrame({"feature_id": list(ids)}, geometry=list(lines), crs=NY_FT)


def _loop_line(ox, oy, pts_ft):
    """A line through ``pts_ft`` (local international feet) placed at (ox, oy) in EPSG:2261 (US survey feet)."""
    return LineString([(ox + u / K_US, oy + v / K_US) for u, v in pts_ft])


def _ring_ft(first, last):
    """A closed ring on :func:`_loop_dem` (local feet) steep across its start/end vertex: ``first`` ft of 40 %
    from the start, 100 ft of 0 % (+Y), 2 (first + last) ft of 20 % (direction (-0.5, 0.866)), back down at
    0 % (-Y), and ``last`` ft of 40 % into the start. The line's first and last runs meet at the closing
    vertex: one steep stretch of first + last ft on the ground."""
    top = 100 + math.sqrt(3) * (first + last)
    return [(0, 0), (first, 0), (first, 100), (-last, top), (-last, 0), (0, 0)]


@pytest.mark.parametrize("first, last, over", [(100, 150, True), (100, 100, False), (100, 99.5, False),
                                               (100, 100.5, True)])
def test_hrv010_loop_closed_ring_steep_across_its_seam(tmp_path, first, last, over):
    # § 44-VI-6(F)(1): "more than two hundred (200) feet". A ring road (a closed line) whose steep part runs
    # across its start/end vertex: grade_runs, reading the line from its start, finds a run at each end (first
    # and last ft), one stretch on the ground. Before, each was judged alone (100, 150 ft: both pass; join_runs
    # joined only the runs of other roads). Now joined at the closing vertex: 100 + 150 = 250 ft and
    # 100 + 100.5 = 200.5 ft exceed; 100 + 100 = 200 ft (at the limit) and 100 + 99.5 = 199.5 ft do not
    from geoconstraints.geometry.terrain import road_table, roads_terrain

    dem = _loop_dem(tmp_path)
    ring = _loop_line(500, 200, _ring_ft(first, last))
    assert ring.is_closed and ring.is_simple
    roads = {"haul_roads": _haul_roads(["RING"], [ring])}
    rt = roads_terrain(dem, roads, NY_FT, grade=GRADE)[("haul_roads", "RING")]
    assert rt.fully_evaluated
    runs = sorted(rt.runs, key=lambda r: r.start_ft)
    assert [r.length_ft for r in runs] == [pytest.approx(first, abs=1e-6), pytest.approx(last, abs=1e-6)]
    assert runs[0].start_ft == 0 and runs[1].end_ft == pytest.approx(rt.length_ft, abs=1e-6)
    for r in runs:
        assert r.exceeds is over and not r.join_cut_short
        # over the limit or not, the stretch joined across the seam is measured (a pass gives its length)
        assert r.joined_ft == pytest.approx(first + last, abs=1e-6)
        assert r.joined_with.startswith("haul_roads RING (")  # its own line: see roads_terrain
    row = road_table({("haul_roads", "RING"): rt}).iloc[0]
    assert row["runs_over_limit"] == (2 if over else 0) and row["steep_runs"] == 2


def _figure_eight_ft(s1):
    """A closed line on :func:`_loop_dem` (local feet) crossing itself once, as a figure-eight: S1, 150 ft of
    40 % along +X from (0, 0), through P = (100, 0); a gentle way round (0 % down -Y, 20 %, 0 % up +Y, 50 ft)
    to S2, 150 ft of 32 % in direction (0.8, 0.6) crossing S1 at P, ``s1`` ft after its start; a gentle
    way back (0 % up +Y 50 ft, 20 %, 0 % down -Y) to the start."""
    d = np.array([0.8, 0.6])
    q = np.array([100.0, 0.0]) - s1 * d
    r = np.array([100.0, 0.0]) + (150 - s1) * d
    low = q[1] - 50  # the 20 % leg from (150, -h) reaches (q.x, low): dy = sqrt(3) (150 - q.x)
    h = math.sqrt(3) * (150 - q[0]) - low
    up = r[1] + 50
    top = up + math.sqrt(3) * r[0]
    return [(0, 0), (150, 0), (150, -h), (q[0], low), tuple(q), tuple(r), (r[0], up), (0, top), (0, 0)]


@pytest.mark.parametrize("s1, over", [(99.5, False), (100.0, False), (100.5, True)])
def test_hrv010_loop_self_crossing_figure_eight(tmp_path, s1, over):
    # § 44-VI-6(F)(1): one road whose line crosses itself (a figure-eight), steep through the crossing both
    # times: S1 150 ft of 40 % with the crossing 100 ft along it, S2 150 ft of 32 % with the crossing s1 ft
    # along it, the two apart along the line (gentle ways round between them). A vehicle turning at the
    # crossing drives 100 ft of S1 then s1 ft of S2, as at two roads crossing in an X. Before: the runs of one
    # road were never joined, each passed alone (150 ft). Now 100 + 100.5 = 200.5 ft exceeds; 100 + 100 = 200 ft
    # (at the limit) and 100 + 99.5 = 199.5 ft do not
    from geoconstraints.geometry.terrain import roads_terrain

    dem = _loop_dem(tmp_path)
    line = _loop_line(500, 600, _figure_eight_ft(s1))
    assert line.is_closed and not line.is_simple  # it crosses itself (once: at P)
    roads = {"haul_roads": _haul_roads(["EIGHT"], [line])}
    rt = roads_terrain(dem, roads, NY_FT, grade=GRADE)[("haul_roads", "EIGHT")]
    assert rt.fully_evaluated
    runs = sorted(rt.runs, key=lambda x: x.start_ft)
    assert [x.length_ft for x in runs] == [pytest.approx(150.0, abs=1e-6)] * 2
    assert [x.mean_grade_pct for x in runs] == [pytest.approx(40.0, abs=1e-3), pytest.approx(32.0, abs=1e-3)]
    for x in runs:
        assert x.exceeds is over and not x.join_cut_short
        assert x.joined_ft == pytest.approx(100 + s1, abs=1e-6)  # within the limit too: a pass gives it
        assert x.joined_with.startswith("haul_roads EIGHT (")


def test_hrv010_loop_join_runs_of_one_road_meeting_or_crossing_itself() -> None:
    # § 44-VI-6(F)(1): join_runs joins the runs of one road as it joins those of two: end to end (a ring's
    # start/end vertex, two parts of one road meeting at a junction) and crossing in an X; the road is named
    # among the roads of the stretch. A run alone is still judged alone (its own length), however it loops
    from geoconstraints.geometry.terrain import Run, join_runs

    def run(*xy):
        line = LineString(xy)
        return Run(0.0, line.length, line.length, line.length, 40.0, 40.0, False, line)

    seam = join_runs([("A", run((0, 0), (100, 0))), ("A", run((-150, 0), (0, 0)))], max_run_ft=200)
    assert {k: (j.length_ft, j.others, j.cut_short) for k, j in seam.items()} == {
        0: (pytest.approx(250.0), ["A"], False), 1: (pytest.approx(250.0), ["A"], False)}
    assert join_runs([("A", run((0, 0), (100, 0))), ("A", run((-100, 0), (0, 0)))], max_run_ft=200) == {}
    x = join_runs([("A", run((0, 0), (150, 0))), ("A", run((100, -100.5), (100, 50))),
                   ("B", run((1000, 0), (1100, 0)))], max_run_ft=200)  # B apart: not on the stretch
    assert {k: (j.length_ft, j.others) for k, j in x.items()} == {0: (pytest.approx(200.5), ["A"]),
                                                                  1: (pytest.approx(200.5), ["A"])}
    mixed = join_runs([("A", run((0, 0), (100, 0))), ("A", run((100, 0), (150, 0))), ("B", run((150, 0), (250, 0)))],
                      max_run_ft=200)  # A's two runs end to end, then B's: 250 ft, roads A and B
    assert mixed[0].others == ["A", "B"] and mixed[1].others == ["A", "B"] and mixed[2].others == ["A"]
    # one run looping back across itself (180 ft, crossing at 50 and 150 ft): nothing to join it with
    assert join_runs([("A", run((0, 0), (100, 0), (100, 50), (50, 50), (50, -30)))], max_run_ft=150) == {}


def test_hrv010_loop_ring_findings_say_the_road_goes_on_along_its_own_line(tmp_path) -> None:
    # § 44-VI-6(F)(1): the ring of 100 + 150 ft steep across its start/end vertex is two HRV-010 violations
    # (one per run) of 250 ft, saying the stretch goes on along the road's own line; 100 + 100 ft is a pass
    from pyproj import CRS

    from geoconstraints.commands import check_harvest
    from geoconstraints.io.layers import Layers
    from geoconstraints.rulebook.loader import load_rulebook

    dem = _loop_dem(tmp_path)
    roads = _haul_roads(["OVER", "AT"], [_loop_line(300, 200, _ring_ft(100, 150)),
                                         _loop_line(1300, 200, _ring_ft(100, 100))])
    res = check_harvest(Layers(frames={"haul_roads": roads}, crs=CRS.from_user_input(NY_FT), dem=dem),
                        load_rulebook("vestal"))
    f = res.findings[res.findings["rule_id"] == "HRV-010"]
    over, at = f[f["subject_id"] == "OVER"], f[f["subject_id"] == "AT"]
    assert over["status"].tolist() == ["violation", "violation"]
    assert over["measured"].tolist() == [pytest.approx(250.0, abs=0.01)] * 2
    assert all("goes on along the steep runs of haul_roads OVER (" in m and "250.0 ft together" in m
               for m in over["message"])
    # 200 ft across the seam is not over the limit, but a joined stretch's ends count as blurred
    # (dem_blur_cells_count): each of the two runs is review, within the DEM's resolution of the limit
    assert at["status"].tolist() == ["review", "review"]
    assert at["measured"].tolist() == [pytest.approx(200.0, abs=0.01)] * 2  # the stretch across the seam, not 100 ft
    assert all("joined with the steep runs of haul_roads AT (" in m for m in at["message"])
    assert res.tables["roads"].set_index("road_id").loc["OVER", "runs_over_limit"] == 2


# --------------------------------------------------------------------------------------------
# HRV-010: roads.csv counts the runs whose joined search was cut short (review)
# --------------------------------------------------------------------------------------------


def test_hrv010_roads_table_counts_cut_short_runs(tmp_path, monkeypatch) -> None:
    # § 44-VI-6(F)(1): three 80-ft pieces of 40 % end to end (240 ft). With the search bound at 1 extension
    # the middle piece's search finds 160 ft and stops: review (not known to be within 200 ft). Before,
    # roads.csv said only runs_over_limit 0 of it, as of a clean road; now runs_cut_short 1 beside it
    # (runs_over_limit keeps its meaning: HRV-010 violations)
    import pandas as pd

    from geoconstraints.geometry import terrain as tr
    from geoconstraints.output.files import write_csv

    monkeypatch.setattr(tr, "_JOIN_MAX_STEPS", 1)
    dem = _loop_dem(tmp_path)
    pieces = [_loop_line(300, 300, [(80 * j, 0), (80 * (j + 1), 0)]) for j in range(3)]
    roads = {"haul_roads": _haul_roads(["C1", "C2", "C3"], pieces)}
    t = tr.roads_terrain(dem, roads, NY_FT, grade=GRADE)
    table = tr.road_table(t).set_index("road_id")
    assert table.loc["C2", ["steep_runs", "runs_over_limit", "runs_cut_short"]].tolist() == [1, 0, 1]
    assert t[("haul_roads", "C2")].runs[0].joined_ft == pytest.approx(160.0, abs=1e-6)
    for rid in ("C1", "C2", "C3"):  # each a review here: a cut-short run is never counted as over the limit
        assert table.loc[rid, "runs_over_limit"] + table.loc[rid, "runs_cut_short"] == 1, rid
    write_csv(tr.road_table(t), tmp_path / "roads.csv")
    back = pd.read_csv(tmp_path / "roads.csv").set_index("road_id")
    assert back.loc["C2", "runs_cut_short"] == 1 and back.loc["C2", "runs_over_limit"] == 0
    monkeypatch.undo()
    clean = tr.road_table(tr.roads_terrain(dem, roads, NY_FT, grade=GRADE)).set_index("road_id")
    assert clean["runs_over_limit"].tolist() == [1, 1, 1] and clean["runs_cut_short"].tolist() == [0, 0, 0]
