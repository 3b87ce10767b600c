"""The overview map's raster of a county (output/overview.py): rank_grid and its helpers, values
worked out by hand on grids of a few pixels and checked against GEOS point by point."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import shapely
from shapely.geometry import LineString, Point, Polygon, box

from geoconstraints.output import overview
from geoconstraints.output.overview import in_view, pixel_range, rank_grid, status_rank


def _reference_grid(geoms, ranks, bounds, shape):
    """rank_grid by brute force: every pixel centre against every geometry (shapely.intersects), then the
    bounding-box centres of the geometries on no pixel centre."""
    ny, nx = shape
    xmin, ymin, xmax, ymax = bounds
    px, py = (xmax - xmin) / nx, (ymax - ymin) / ny
    grid = np.full((ny, nx), 10 ** 9)
    on_a_centre = set()
    for r in range(ny):
        for c in range(nx):
            pt = Point(xmin + (c + 0.5) * px, ymax - (r + 0.5) * py)
            for i, (g, k) in enumerate(zip(geoms, ranks)):
                if g.intersects(pt):
                    grid[r, c] = min(grid[r, c], k)
                    on_a_centre.add(i)
    for i, (g, k) in enumerate(zip(geoms, ranks)):
        if i in on_a_centre:
            continue
        x0, y0, x1, y1 = g.bounds
        x, y = (x0 + x1) / 2, (y0 + y1) / 2
        c, r = int(np.floor((x - xmin) / px)), int(np.floor((ymax - y) / py))
        if 0 <= c < nx and 0 <= r < ny:
            grid[r, c] = min(grid[r, c], k)
    grid[grid == 10 ** 9] = -1
    return grid


def test_rank_grid_by_hand():
    # a 4 x 2 grid of 1-unit pixels over (0, 0)-(4, 2); centres at x = .5 .. 3.5, y = 1.5 (row 0), .5 (row 1)
    big = box(0, 0, 2, 2)              # centres (.5, 1.5) (1.5, 1.5) (.5, .5) (1.5, .5): rank 3
    edge = box(1.5, 0, 3, 1)           # its left edge passes through the centre (1.5, .5): touching counts
    tiny = box(3.9, 1.9, 3.95, 1.95)   # covers no centre: marks the pixel of its box's centre (row 0, column 3)
    grid = rank_grid(np.array([big, edge, tiny], dtype=object), np.array([3, 1, 2]), (0.0, 0.0, 4.0, 2.0), (2, 4))
    assert grid.tolist() == [[3, 3, -1, 2],
                             [3, 1, 1, -1]]


def test_rank_grid_shared_object_takes_its_smallest_rank():
    parcel = box(0, 0, 1, 1)
    # three findings of one parcel (the same object): the most severe (0) wins
    grid = rank_grid(np.array([parcel, parcel, parcel], dtype=object), np.array([4, 0, 2]), (0.0, 0.0, 1.0, 1.0), (1, 1))
    assert grid.tolist() == [[0]]


def test_rank_grid_matches_geos_point_by_point():
    rng = np.random.default_rng(13)
    geoms = []
    for _ in range(60):
        x, y = rng.uniform(0, 50, 2)
        w, h = rng.uniform(0.2, 12, 2)
        geoms.append(box(x, y, x + w, y + h) if rng.random() < 0.5 else
                     Polygon([(x, y), (x + w, y + h / 3), (x + w / 2, y + h)]))
    geoms += [LineString([(3, 3), (40, 20)]), Point(25.0, 25.0), box(10, 10, 10.5, 10.5)]
    geoms.append(box(1.0, 1.0, 5.0, 5.0))  # edges through pixel centres (first grid: pixels of 2, centres at odd numbers)
    ranks = rng.integers(0, 10, len(geoms))
    g = np.array(geoms, dtype=object)
    for bounds, shape in (((0.0, 0.0, 60.0, 60.0), (30, 30)), ((-5.3, 2.1, 48.7, 41.3), (17, 23))):
        assert np.array_equal(rank_grid(g, ranks, bounds, shape), _reference_grid(geoms, ranks, bounds, shape))


def test_pixel_range_exact_at_the_centres():
    # pixels of width 1 from 0: centres .5 1.5 2.5 3.5
    lo = np.array([0.5, 0.50001, 1.0, -3.0, 3.6, 0.6])
    hi = np.array([0.5, 2.5, 1.4, 9.0, 9.0, 0.9])
    first, last = pixel_range(lo, hi, 0.0, 1.0, 4)
    assert first.tolist() == [0, 1, 2, 0, 4, 2]
    assert last.tolist() == [0, 2, -1, 3, 3, -1]  # first > last: no centre in the interval
    # rows counted down from y = 4: centres 3.5 (row 0) .. .5 (row 3)
    first, last = pixel_range(np.array([1.5]), np.array([3.5]), 4.0, -1.0, 4)
    assert (first.tolist(), last.tolist()) == ([0], [2])


def test_pixel_range_with_steps_that_do_not_divide_evenly():
    rng = np.random.default_rng(7)
    start, step, n = -5.3, 54.0 / 23, 23
    centres = start + (np.arange(n) + 0.5) * step
    lo = np.concatenate([rng.uniform(-10, 55, 200), centres, np.nextafter(centres, np.inf)])
    hi = lo + np.concatenate([rng.uniform(0, 20, 200), np.zeros(n), np.full(n, 3.0)])
    first, last = pixel_range(lo, hi, start, step, n)
    for a, b, i, j in zip(lo, hi, first, last):
        want = np.flatnonzero((centres >= a) & (centres <= b))
        assert (list(range(i, j + 1))) == want.tolist()


def test_in_view_is_geos_intersects():
    view = box(0, 0, 10, 10)
    geoms = np.array([box(1, 1, 2, 2), box(-5, -5, -1, -1), box(9, 9, 12, 12), box(10, 0, 11, 1),
                      LineString([(-1, 5), (5, 11.5)]), LineString([(-1, 9.5), (1.5, 12)]),
                      Point(10, 10), Point(10.000001, 10), Polygon(), None], dtype=object)
    # inside; outside; crossing the edge; touching it; crossing the corner; passing the corner outside;
    # on the corner; just outside; empty; missing
    assert in_view(geoms, view).tolist() == [True, False, True, True, True, False, True, False, False, False]
    assert in_view(geoms[:9], view).tolist() == shapely.intersects(geoms[:9], view).tolist()


def test_status_rank():
    f = pd.DataFrame({"status": ["violation", "review", "not_evaluated", "info", "pass", "odd", None],
                      "waived": ["", "", "ok", "", "yes", "", None]})
    # statuses 0..4, another or no status as `unknown`, plus 5 when waived (a missing waiver text counts as text)
    assert status_rank(f, 4).tolist() == [0, 1, 7, 3, 9, 4, 9]
    assert status_rank(f.drop(columns="waived"), 2).tolist() == [0, 1, 2, 3, 4, 2, 2]


@pytest.mark.parametrize("n", [0, 1])
def test_rank_grid_empty_and_single(n):
    geoms = np.array([box(0, 0, 1, 1)][:n], dtype=object)
    grid = rank_grid(geoms, np.zeros(n, dtype=np.int64), (0.0, 0.0, 2.0, 1.0), (1, 2))
    assert grid.tolist() == ([[-1, -1]] if n == 0 else [[0, -1]])


def _holed_and_multi():
    from shapely.geometry import MultiPolygon

    holed = Polygon([(0, 0), (10, 0), (10, 10), (0, 10)], [[(1, 1), (2, 1), (2, 2)], [(5, 5), (6, 5), (6, 6), (5, 6)]])
    tri = Polygon([(20, 0), (21, 0), (20, 1)])  # counter-clockwise: normalized to clockwise
    return np.array([box(0, 0, 1, 1), MultiPolygon([holed, tri]), holed, tri], dtype=object)


def test_polygon_paths_are_geopandas_paths():
    import geopandas as gpd
    from geopandas.plotting import _PolygonPatch

    from geoconstraints.output.overview import polygon_paths

    geoms = _holed_and_multi()
    want = [_PolygonPatch(g).get_path() for g in gpd.GeoSeries(geoms).normalize()]
    got = polygon_paths(geoms)
    assert len(got) == len(want) == 4
    for a, b in zip(got, want):
        assert np.array_equal(a.vertices, b.vertices) and np.array_equal(a.codes, b.codes)


def test_plot_polygons_draws_what_geopandas_draws():
    import io

    import geopandas as gpd
    from matplotlib.figure import Figure

    from geoconstraints.output.overview import _plot_polygons

    def png(draw):
        fig = Figure(figsize=(3, 2), dpi=80)
        ax = fig.add_axes((0, 0, 1, 1))
        draw(ax)
        ax.set_xlim(-1, 22)
        ax.set_ylim(-1, 11)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata={"Software": None})
        return buf.getvalue()

    style = {"facecolor": "#3366cc", "alpha": None, "edgecolor": "#112233", "linewidth": 1.5,
             "linestyle": (0.0, (2.0, 1.0)), "zorder": 3}
    geoms = _holed_and_multi()
    ours = png(lambda ax: _plot_polygons(ax, geoms, **style))
    theirs = png(lambda ax: gpd.GeoSeries(geoms, crs=2261).plot(ax=ax, **style))
    assert ours == theirs


@pytest.mark.parametrize("waive", ["", "FLD-002", "FLD-009"])  # a waived rule's left-out findings: drawn waived
@pytest.mark.parametrize("max_vector", [0, overview.MAX_VECTOR_FEATURES])  # raster (a county) and vector shapes
def test_person_scope_overview_colours_every_parcel_as_with_every_finding(tmp_path, monkeypatch, max_vector, waive):
    from catalogue import flood_zones, parcels, write_gpkg

    from geoconstraints import load_layers, load_rulebook
    from geoconstraints.commands import screen_parcels

    monkeypatch.setattr(overview, "MAX_VECTOR_FEATURES", max_vector)
    layers = load_layers(write_gpkg(tmp_path / "t.gpkg", {"parcels": parcels(3), "flood_zones": flood_zones()}))
    book = "vestal"
    if waive:
        book = tmp_path / "waived.yaml"
        book.write_text(f"extends: vestal\nwaive:\n  {waive}: decided by the town board\n")
    person = screen_parcels(layers, load_rulebook(book), findings="person")
    every = screen_parcels(layers, load_rulebook(book), findings="all")
    if waive:  # some of the waived rule's findings were left out of memory
        assert (person.omitted.loc[person.omitted["rule_id"] == waive, "waived"] != "").any()
    assert int(person.omitted["n"].sum()) > 0  # pass and info findings left out of memory
    left = overview.left_out_parcels(person)
    table = person.tables["parcels"]
    # P3 lies in zone X: every finding of it is pass or info, none is in memory
    assert set(table.loc[table["worst_status"].isin(["pass", "info"]), "parcel_id"]) == {"P3"}
    assert len(left) >= 1 and set(left["status"]) <= {"pass", "info"}
    assert overview.left_out_parcels(every) is None  # nothing left out: drawn from the findings
    assert overview.render_overview(person) == overview.render_overview(every)  # the same picture, byte for byte


def test_pixel_cover_reuses_the_pixels_of_the_same_objects_only():
    # the overview rasterizes a county's parcels as a layer, then the same objects again as findings: the
    # second grid must be the one computed afresh (brute force), with the pixels of the objects seen before
    # taken from the memo (counted) and new objects, and another grid, computed as they come
    rng = np.random.default_rng(5)
    parcels = [box(x, y, x + w, y + h) for x, y, w, h in zip(*rng.uniform(0, 40, (2, 80)), *rng.uniform(0.3, 6, (2, 80)))]
    bounds, shape = (0.0, 0.0, 50.0, 50.0), (25, 25)
    memo = overview.PixelCover()
    first = rank_grid(np.array(parcels, dtype=object), np.zeros(80, dtype=int), bounds, shape, memo=memo)
    assert np.array_equal(first, _reference_grid(parcels, [0] * 80, bounds, shape))
    fresh = [box(44, 44, 46, 46), Point(48.2, 1.1)]
    # parcels 0-39 again (same objects) twice with different ranks, plus two new objects
    again = parcels[:40] + parcels[:40] + fresh
    ranks = np.concatenate([rng.integers(0, 5, 80), [1, 2]])
    calls = []
    real = overview._pixels
    try:
        overview._pixels = lambda g, b, s: (calls.append(len(g)), real(g, b, s))[1]
        second = rank_grid(np.array(again, dtype=object), ranks, bounds, shape, memo=memo)
        other = rank_grid(np.array(again, dtype=object), ranks, (0.0, 0.0, 60.0, 60.0), (10, 10), memo=memo)
    finally:
        overview._pixels = real
    assert calls == [2, 42]  # only the two new objects, then everything on a grid the memo does not hold
    assert np.array_equal(second, _reference_grid(again, ranks, bounds, shape))
    assert np.array_equal(other, _reference_grid(again, ranks, (0.0, 0.0, 60.0, 60.0), (10, 10)))
    # equal but distinct objects are not taken for the remembered ones (identity, not equality)
    copies = [shapely.from_wkb(shapely.to_wkb(p)) for p in parcels[:3]]
    assert np.array_equal(rank_grid(np.array(copies, dtype=object), np.array([0, 1, 2]), bounds, shape, memo=memo),
                          _reference_grid(copies, [0, 1, 2], bounds, shape))
