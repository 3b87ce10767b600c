"""The overlay engine at county scale: tiles like ST_Subdivide, threads and chunks that change
nothing, stream distances within a bound.

Expected values come from an independent computation with plain shapely on the untiled,
undissolved inputs (``shapely.area(shapely.intersection(parcel, union))`` per parcel and
``shapely.distance`` to every line), never from the engine itself.
"""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from shapely.geometry import LineString, Point, box

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import screen_parcels
from geoconstraints.errors import InputError
from geoconstraints.geometry.overlay import (
    TILE_MAX_VERTICES,
    CoverIndex,
    _surely_thick,
    _thin,
    _tile,
    distance_to_lines,
    line_segments,
    overlay_areas,
    sort_overlay,
    spatial_order,
    start_distance_to_lines,
    tile_span,
)

CRS = 2261
X0, Y0 = 955_000.0, 740_000.0
AREA_TOL_SQFT = 1e-6
"""Threads and chunks must not change an area by more than floating noise (sq ft)."""


def _county(k: int = 60, seed: int = 3, encroachment: bool = False
            ) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame, gpd.GeoDataFrame]:
    """k x k jittered 100-ft parcels, an X zone over all, meandering AE zones with floodways, streams.

    ``encroachment``: along the east half of the first river a STATE ENCROACHMENT AREA band beside its
    floodway, and of the second a COMMUNITY ENCROACHMENT AREA over its floodway and a little beyond (NFHL
    subtypes FLD-002 cannot read as floodway or as not floodway)."""
    rng = np.random.default_rng(seed)
    gx, gy = np.meshgrid(np.arange(k + 1) * 100.0, np.arange(k + 1) * 100.0)
    jit = rng.uniform(-25, 25, size=(2, k + 1, k + 1))
    vx, vy = X0 + gx + jit[0], Y0 + gy + jit[1]
    i, j = np.divmod(np.arange(k * k), k)
    ring = np.stack([np.stack([vx[i, j], vy[i, j]], -1), np.stack([vx[i, j + 1], vy[i, j + 1]], -1),
                     np.stack([vx[i + 1, j + 1], vy[i + 1, j + 1]], -1), np.stack([vx[i + 1, j], vy[i + 1, j]], -1),
                     np.stack([vx[i, j], vy[i, j]], -1)], axis=1)
    parcels = gpd.GeoDataFrame({"parcel_id": [f"P{n:05d}" for n in range(k * k)]}, geometry=shapely.polygons(ring),
                               crs=CRS)
    side = k * 100.0
    geoms, zones, sub = [box(X0 - 600, Y0 - 600, X0 + side + 600, Y0 + side + 600)], ["X"], [None]
    lines = []
    t = np.linspace(0, 1, 300)
    for r in range(3):
        y = Y0 + side * (r + 0.5) / 3 + side * 0.07 * np.sin(t * 23 + r)
        river = LineString(np.column_stack([X0 - 200 + t * (side + 400), y]))
        geoms += [river.buffer(side * 0.04, quad_segs=4), river.buffer(side * 0.015, quad_segs=4),
                  river.buffer(side * 0.03, quad_segs=4).intersection(box(X0, Y0, X0 + side / 2, Y0 + side))]
        zones += ["AE", "AE", "AE"]
        sub += [None, "FLOODWAY", None]
        lines.append(river)
        east = box(X0 + side / 2, Y0 - 600, X0 + side + 600, Y0 + side + 600)
        if encroachment and r == 0:
            geoms.append(river.buffer(side * 0.055, quad_segs=4).difference(river.buffer(side * 0.015, quad_segs=4))
                         .intersection(east))
            zones.append("AE")
            sub.append("STATE ENCROACHMENT AREA")
        if encroachment and r == 1:
            geoms.append(river.buffer(side * 0.025, quad_segs=4).intersection(east))
            zones.append("AE")
            sub.append("COMMUNITY ENCROACHMENT AREA")
    lines += [LineString([(X0 + side * 0.2, Y0 + side * 0.9), (X0 + side * 0.35, Y0 + side * 0.6)]),
              box(X0 + side * 0.7, Y0 + side * 0.05, X0 + side * 0.75, Y0 + side * 0.1)]  # a pond
    flood = gpd.GeoDataFrame({"FLD_ZONE": zones, "ZONE_SUBTY": sub}, geometry=geoms, crs=CRS)
    streams = gpd.GeoDataFrame({"kind": ["perennial"] * len(lines)}, geometry=lines, crs=CRS)
    return parcels, flood, streams


@pytest.fixture(scope="module")
def county():
    return _county()


# ------------------------------------------------------------------------------------------
# tiles


def test_tiles_are_small_disjoint_and_keep_the_area(county):
    _, flood, _ = county
    union = shapely.union_all(flood.geometry.values[(flood["FLD_ZONE"] == "AE").to_numpy()])
    assert shapely.get_num_coordinates(union) > 5 * TILE_MAX_VERTICES  # the test really cuts
    tiles, origin = _tile(np.array([union], dtype=object), max_vertices=TILE_MAX_VERTICES, max_span=800.0)
    assert (origin == 0).all()
    assert shapely.get_num_coordinates(tiles).max() <= TILE_MAX_VERTICES
    b = shapely.bounds(tiles)
    assert np.maximum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]).max() <= 800.0 + 1e-6
    assert (shapely.get_type_id(tiles) == 3).all()  # single polygons only
    # disjoint and complete: the tiles' areas add up to the union's, and so does their union
    assert math.isclose(shapely.area(tiles).sum(), union.area, rel_tol=1e-9)
    assert math.isclose(shapely.union_all(tiles).area, union.area, rel_tol=1e-9)


def test_no_subject_meets_a_county_sized_polygon(county):
    parcels, flood, _ = county
    span = tile_span(parcels.geometry.values)
    widths = parcels.geometry.bounds
    assert span == pytest.approx(32 * np.median(np.maximum(widths.maxx - widths.minx, widths.maxy - widths.miny)))
    cover = CoverIndex.build([("_covered", flood.geometry.values)], max_span=span)
    b = shapely.bounds(cover.parts)
    assert np.maximum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]).max() <= span + 1e-6
    whole = shapely.bounds(shapely.union_all(flood.geometry.values))
    assert whole[2] - whole[0] > 1.5 * span and len(cover.parts) >= 4  # the X zone over the town was cut


def test_keys_with_the_same_polygons_share_one_cover(county):
    _, flood, _ = county
    g = flood.geometry.values
    ae = g[(flood["FLD_ZONE"] == "AE").to_numpy()]
    cover = CoverIndex.build([("zone:AE", ae), ("_sfha", ae), ("zone:X", g[:1]), ("_covered", g),
                              ("_floodway", g[(flood["ZONE_SUBTY"] == "FLOODWAY").to_numpy()])])
    # AE = SFHA (same polygons); X = everything (same shape: X covers the town): three covers
    assert sorted(map(list, cover.cover_keys)) == [[0, 1], [2, 3], [4]]


# ------------------------------------------------------------------------------------------
# areas against plain shapely


def test_areas_match_plain_shapely_intersections(county):
    parcels, flood, _ = county
    g = np.asarray(parcels.geometry.values, dtype=object)
    ae = flood.geometry.values[(flood["FLD_ZONE"] == "AE").to_numpy()]
    cover = CoverIndex.build([("_sfha", ae)], max_span=500.0)  # small tiles: many parcels cross a cut
    ov = overlay_areas(g, cover, tolerance_ft=0.0, min_area_sqft=0.0, workers=2, chunk_size=500)
    got = np.zeros(len(g))
    got[ov["subject"].to_numpy()] = ov["raw_sqft"].to_numpy()
    want = shapely.area(shapely.intersection(g, shapely.union_all(ae)))
    assert (want > 0).sum() > 500 and ((want > 0) & (want < shapely.area(g) - 1)).sum() > 100
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    # the merged overlap geometry is the intersection itself
    geo = ov["geometry"].to_numpy()
    np.testing.assert_allclose(shapely.area(geo), ov["raw_sqft"].to_numpy(), atol=1e-6)
    sym = shapely.area(shapely.symmetric_difference(geo, shapely.intersection(g[ov["subject"].to_numpy()],
                                                                                 shapely.union_all(ae))))
    assert sym.max() < 1e-6


@pytest.mark.parametrize("workers,chunk", [(2, 97), (2, 1000), (1, 333)])
def test_threads_and_chunks_change_nothing(county, workers, chunk):
    parcels, flood, _ = county
    g = np.asarray(parcels.geometry.values, dtype=object)
    fl = flood.geometry.values
    cover = CoverIndex.build([("_sfha", fl[(flood["FLD_ZONE"] == "AE").to_numpy()]), ("_covered", fl),
                              ("_floodway", fl[(flood["ZONE_SUBTY"] == "FLOODWAY").to_numpy()])], max_span=700.0)
    kw = {"tolerance_ft": {"*": 1.0, "_floodway": 2.0}, "min_area_sqft": {"*": 100.0, "_floodway": 50.0},
          "keep_geometry": ("_sfha", "_floodway")}
    one = overlay_areas(g, cover, workers=1, chunk_size=len(g), **kw)
    many = overlay_areas(g, cover, workers=workers, chunk_size=chunk, **kw)
    assert len(one) > len(g)  # every parcel is covered, many in the SFHA
    assert one["sliver"].any() and not one["sliver"].all()
    pd.testing.assert_frame_equal(one.drop(columns="geometry"), many.drop(columns="geometry"),
                                  check_exact=False, rtol=0, atol=AREA_TOL_SQFT)
    a, b = one["geometry"].to_numpy(), many["geometry"].to_numpy()
    assert (pd.isna(a) == pd.isna(b)).all()
    has = ~pd.isna(a)
    assert shapely.area(shapely.symmetric_difference(a[has], b[has])).max() < AREA_TOL_SQFT


def test_the_overlay_table_sorts_keys_given_as_codes_or_as_text_alike(county):
    # chunks hand back their keys as codes into cover.keys (no string per row); a chunk made elsewhere may
    # give them as text: the table is the same, sorted by subject then key in cover.keys' order, keys as text
    parcels, flood, _ = county
    g = np.asarray(parcels.geometry.values, dtype=object)
    cover = CoverIndex.build([("_sfha", flood.geometry.values[(flood["FLD_ZONE"] == "AE").to_numpy()]),
                              ("_covered", flood.geometry.values)], max_span=700.0)
    ov = overlay_areas(g, cover, workers=2, chunk_size=500, tolerance_ft=1.0, min_area_sqft=100.0)
    assert ov["key"].dtype == pd.Series(["_sfha"]).dtype  # text, as pandas holds text
    rank = {k: i for i, k in enumerate(cover.keys)}
    pairs = list(zip(ov["subject"], [rank[k] for k in ov["key"]]))
    assert pairs == sorted(pairs) and len(set(pairs)) == len(pairs)
    assert set(ov["key"]) == {"_sfha", "_covered"}
    rev = ov.iloc[::-1]  # chunks in another order, keys as text or as codes
    as_text = [rev.iloc[:700].reset_index(drop=True), rev.iloc[700:].reset_index(drop=True)]
    as_codes = [f.assign(key=pd.Categorical(f["key"], categories=cover.keys)) for f in as_text]
    for frames in (as_text, as_codes):
        pd.testing.assert_frame_equal(sort_overlay(frames, cover), ov)


def test_screen_is_the_same_on_one_thread_and_two(tmp_path, county):
    parcels, flood, streams = county
    path = tmp_path / "county.gpkg"
    for name, gdf in (("parcels", parcels), ("flood_zones", flood), ("streams", streams)):
        gdf.to_file(path, layer=name)
    layers, rb = load_layers(path), load_rulebook("vestal")
    one = screen_parcels(layers, rb, workers=1, chunk_size=100_000, findings="all")
    two = screen_parcels(layers, rb, workers=2, chunk_size=211, findings="all")
    t1, t2 = one.tables["parcels"], two.tables["parcels"]
    assert (t1["sfha_acres"] > 0).sum() > 300
    pd.testing.assert_frame_equal(pd.DataFrame(t1.drop(columns="geometry")), pd.DataFrame(t2.drop(columns="geometry")),
                                  check_exact=False, rtol=0, atol=AREA_TOL_SQFT / 43_560.0)
    cols = ["rule_id", "subject_id", "status", "message"]
    pd.testing.assert_frame_equal(one.findings[cols], two.findings[cols])


def test_encroachment_areas_are_measured_in_the_same_pass_as_plain_shapely_and_alike_on_any_threads(tmp_path):
    # the encroachment cover rides the one overlay pass: its areas per parcel are those of plain shapely against
    # the union of the encroachment polygons, its subtypes named, and one thread or two give the same table
    from geoconstraints.geometry.overlay import flood_metrics
    from geoconstraints.rules.flood import flood_zone_spec

    parcels, flood, streams = _county(k=40, seed=7, encroachment=True)
    rb = load_rulebook("vestal")
    m, overlaps = flood_metrics(parcels, flood, flood_zone_spec(rb), workers=2, chunk_size=157)
    g = np.asarray(parcels.geometry.values, dtype=object)
    enc = flood.geometry.values[flood["ZONE_SUBTY"].fillna("").str.contains("ENCROACHMENT").to_numpy()]
    want = shapely.area(shapely.intersection(g, shapely.union_all(enc)))
    assert np.abs(m["encroachment_raw_sqft"].to_numpy() - want).max() < 1e-6
    counted = m["encroachment_sqft"].to_numpy() > 0
    assert counted.sum() > 50 and (m["encroachment_sliver"].to_numpy() <= (want > 0)).all()
    names = m["encroachment_subtypes"].to_numpy()
    assert set(names[counted]) <= {"STATE ENCROACHMENT AREA", "COMMUNITY ENCROACHMENT AREA",
                                   "COMMUNITY ENCROACHMENT AREA; STATE ENCROACHMENT AREA"}
    assert (names[~counted] == "").all() and (~pd.isna(overlaps["_encroachment"][counted])).all()
    path = tmp_path / "county.gpkg"
    for name, gdf in (("parcels", parcels), ("flood_zones", flood), ("streams", streams)):
        gdf.to_file(path, layer=name)
    layers = load_layers(path)
    one = screen_parcels(layers, rb, workers=1, chunk_size=100_000, findings="all")
    two = screen_parcels(layers, rb, workers=2, chunk_size=211, findings="all")
    pd.testing.assert_frame_equal(pd.DataFrame(one.tables["parcels"].drop(columns="geometry")),
                                  pd.DataFrame(two.tables["parcels"].drop(columns="geometry")),
                                  check_exact=False, rtol=0, atol=AREA_TOL_SQFT / 43_560.0)
    cols = ["rule_id", "subject_id", "status", "message"]
    pd.testing.assert_frame_equal(one.findings[cols], two.findings[cols])
    f = one.findings[one.findings["rule_id"] == "FLD-002"].set_index("subject_id")
    ids = parcels["parcel_id"].to_numpy()
    only = counted & (m["floodway_sqft"].to_numpy() == 0)
    assert only.sum() > 20 and (f.loc[ids[only], "status"] == "not_evaluated").all()
    assert f.loc[ids[only], "message"].str.contains("ENCROACHMENT AREA").all()
    both = counted & (m["floodway_sqft"].to_numpy() > 0)
    assert both.sum() > 5 and (f.loc[ids[both], "status"] == "review").all()


def test_spatial_order_keeps_neighbours_together(county):
    parcels, _, _ = county
    order = spatial_order(parcels.geometry.values)
    assert sorted(order) == list(range(len(parcels)))
    c = shapely.centroid(parcels.geometry.values[order])
    step = shapely.distance(c[1:], c[:-1])
    assert np.median(step) < 150  # consecutive parcels are mostly neighbours (100 ft apart)


def test_partial_geometry_keys_return_the_overlap_only_where_it_is_not_the_whole_subject():
    cover = CoverIndex.build([("_covered", [box(0, 0, 100, 100)]), ("_sfha", [box(0, 0, 100, 100)])])
    inside, half = box(10, 10, 20, 20), box(90, 10, 110, 20)  # by hand: 100 sq ft whole, 100 of 200 sq ft
    ov = overlay_areas([inside, half], cover, tolerance_ft=1.0, min_area_sqft=1.0, workers=1,
                       partial_geometry=["_covered"])
    got = {(r.subject, r.key): r for r in ov.itertuples()}
    assert got[(0, "_covered")].raw_sqft == 100.0 and got[(0, "_covered")].geometry is None
    assert shapely.equals(got[(0, "_sfha")].geometry, inside)  # not a partial-geometry key: kept
    assert got[(1, "_covered")].raw_sqft == 100.0 and shapely.equals(got[(1, "_covered")].geometry,
                                                                     box(90, 10, 100, 20))


def test_thin_skips_the_buffer_only_for_polygons_that_cannot_vanish(county):
    # an independent check: the plain negative buffer of every overlap of a parcel with the AE zones
    parcels, flood, _ = county
    ae = shapely.union_all(flood.geometry.values[(flood["FLD_ZONE"] == "AE").to_numpy()])
    pieces = shapely.intersection(np.asarray(parcels.geometry.values, dtype=object), ae)
    pieces = pieces[~shapely.is_empty(pieces) & (shapely.area(pieces) > 0)]
    pieces = np.concatenate([pieces, [box(0, 0, 100, 0.9), box(0, 0, 100, 1.1), box(0, 0, 3, 3)]])
    for tol in (1.0, 4.0, 30.0):
        shrunk = shapely.buffer(pieces, -tol / 2, quad_segs=2)
        want = shapely.is_empty(shrunk) | (shapely.area(shrunk) <= 0)
        assert want.any() and (~want).any()
        np.testing.assert_array_equal(_thin(pieces, np.full(len(pieces), tol)), want)
    skipped = _surely_thick(pieces, np.full(len(pieces), 0.5))
    assert skipped.sum() > len(pieces) / 2  # most overlaps are not buffered at a 1-ft tolerance


# ------------------------------------------------------------------------------------------
# stream distance


def test_stream_distance_matches_brute_force_within_the_bound(county):
    parcels, _, streams = county
    g = np.asarray(parcels.geometry.values, dtype=object)
    lines = np.asarray(streams.geometry.values, dtype=object)
    got = distance_to_lines(g, lines, max_distance_ft=400.0, workers=2, chunk_size=300)
    want = shapely.distance(g[:, None], lines[None, :]).min(axis=1)  # every parcel to every line
    near = want <= 400.0
    assert near.sum() > 1000 and (~near).sum() > 100
    np.testing.assert_allclose(got[near], want[near], rtol=0, atol=1e-9)
    assert np.isnan(got[~near]).all()
    pond = lines[-1]
    in_pond = shapely.intersects(g, pond)
    assert in_pond.any() and (got[in_pond] == 0).all()


def test_a_stream_inside_a_parcel_is_at_zero_and_bad_bounds_are_refused():
    parcel = box(0, 0, 100, 100)
    far = box(0, 1000, 100, 1100)
    inner = LineString([(40, 40), (60, 60)])  # touches no edge of the parcel
    got = distance_to_lines([parcel, far], [inner, Point(0, 0).buffer(1).exterior], max_distance_ft=900)
    assert got[0] == 0.0 and np.isnan(got[1])
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(InputError, match="max_distance_ft"):
            distance_to_lines([parcel], [inner], max_distance_ft=bad)


def test_a_chunk_whose_subjects_all_touch_a_line_needs_no_nearest_search():
    # two subjects the line crosses (0 ft) and one 25 ft below it (by hand), in chunks of 2; then only
    # crossed subjects: the nearest search gets no subject at all
    line = LineString([(5, -5), (5, 20), (100, 20)])
    crossed = [box(0, 0, 10, 10), box(90, 15, 110, 25)]
    got = distance_to_lines(crossed + [box(30, -20, 40, -5)], [line], max_distance_ft=100, workers=2, chunk_size=2)
    assert got.tolist() == [0.0, 0.0, 25.0]
    assert distance_to_lines(crossed, [line], max_distance_ft=100, workers=1).tolist() == [0.0, 0.0]


def test_edge_subjects_match_plain_shapely():
    """Multipart and holed subjects, a holed cover, a missing geometry, a subject touching the cover only."""
    ring = box(0, 0, 1000, 1000).difference(box(400, 400, 600, 600))  # a cover with a hole
    cover = CoverIndex.build([("zone", [ring, box(900, 0, 1500, 300)])], max_span=150.0)  # overlapping, tiny tiles
    subjects = np.array([
        shapely.MultiPolygon([box(-50, -50, 120, 130), box(380, 380, 450, 450)]),  # two parts, one at the hole
        box(300, 300, 700, 700).difference(box(350, 350, 650, 650)),  # holed subject around the cover's hole
        None,
        box(1500, 0, 1600, 100),  # touches the cover along an edge: no area
        box(950, 250, 1100, 400),  # over both polygons of the cover (dissolved: counted once)
    ], dtype=object)
    ov = overlay_areas(subjects, cover, tolerance_ft=0.0, min_area_sqft=0.0, workers=2, chunk_size=2)
    union = shapely.union_all([ring, box(900, 0, 1500, 300)])
    want = shapely.area(shapely.intersection(subjects, union))
    got = np.zeros(len(subjects))
    got[ov["subject"].to_numpy()] = ov["raw_sqft"].to_numpy()
    np.testing.assert_allclose(got[[0, 1, 3, 4]], want[[0, 1, 3, 4]], rtol=0, atol=1e-6)
    assert 2 not in set(ov["subject"]) and 3 not in set(ov["subject"])
    geo = dict(zip(ov["subject"], ov["geometry"]))
    for i in (0, 1, 4):
        assert shapely.area(shapely.symmetric_difference(geo[i], shapely.intersection(subjects[i], union))) < 1e-6


def test_subjects_crossing_only_cuts_between_tiles_are_not_intersected(monkeypatch):
    # a cover with a hole cut into 150-ft tiles, 40-ft subjects on a 37-ft grid over it: many cross a cut
    # between tiles only (wholly in the cover: their overlap is themselves, no intersection computed), others
    # cross the cover's outline or its hole's (intersected). Every area against plain shapely on the untiled
    # cover; the intersections counted
    from geoconstraints.geometry import overlay as ov_mod

    donut = box(0, 0, 1000, 1000).difference(box(400, 400, 600, 600))
    cover = CoverIndex.build([("zone", [donut])], max_span=150.0)
    assert len(cover.parts) > 40 and cover.edges is not None and len(cover.edge_cover) == 8  # 2 rings of 4 edges
    xs = np.arange(-60.0, 1040.0, 37.0)
    subjects = np.array([box(x, y, x + 40, y + 40) for x in xs for y in xs], dtype=object)
    counted: list[int] = []
    real = shapely.intersection

    def counting(a, b, **kw):
        counted.append(int(np.size(a)))
        return real(a, b, **kw)

    monkeypatch.setattr(ov_mod.shapely, "intersection", counting)
    got_ov = overlay_areas(subjects, cover, tolerance_ft=0.0, min_area_sqft=0.0, workers=1, chunk_size=len(subjects),
                           keep_geometry=("zone",))
    monkeypatch.setattr(ov_mod.shapely, "intersection", real)
    want = shapely.area(shapely.intersection(subjects, donut))
    got = np.zeros(len(subjects))
    got[got_ov["subject"].to_numpy()] = got_ov["raw_sqft"].to_numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    edge = shapely.intersects(subjects, shapely.boundary(donut))
    tiles_met = np.array([len(cover.tree.query(s, predicate="intersects")) for s in subjects])
    cut_only = ~edge & (tiles_met > 1)  # in the cover, over a cut between tiles
    assert cut_only.sum() > 100 and (edge & (want > 0)).sum() > 50
    whole = got_ov.set_index("subject")
    assert (whole.loc[np.flatnonzero(cut_only), "raw_sqft"].to_numpy() == shapely.area(subjects[cut_only])).all()
    geo = whole.loc[np.flatnonzero(cut_only), "geometry"].to_numpy()
    assert shapely.equals(geo, subjects[cut_only]).all()  # the overlap kept is the subject itself
    # only the pairs of subjects over the cover's outline were intersected
    assert sum(counted) <= int(tiles_met[edge].sum())


def test_stream_distance_of_a_multipart_stream_has_no_segment_between_its_parts():
    # the end of one part and the start of the next are not joined: a parcel between them is 1 ft from the
    # nearer part (by hand), not on a line that does not exist
    from shapely.geometry import MultiLineString

    stream = MultiLineString([[(0, 0), (1, 0)], [(5, 0), (6, 0)]])
    parcel = box(2, -1, 3, 1)
    got = distance_to_lines([parcel], [stream], max_distance_ft=100)
    assert got.tolist() == [1.0] == [shapely.distance(parcel, stream)]
    holed = box(0, 0, 100, 100).difference(box(40, 40, 60, 60))  # a pond with an island: two rings
    inside_island = box(45, 45, 50, 50)
    assert distance_to_lines([inside_island], [holed], max_distance_ft=100).tolist() == [5.0]


def test_a_multipart_subject_with_a_part_outside_the_cover_is_intersected():
    # one part in the cover over a cut between tiles, the other far outside it, neither touching the cover's
    # outline: the overlap is the inside part only (by hand: 20 x 20 ft), not the whole subject
    from shapely.geometry import MultiPolygon

    cover = CoverIndex.build([("zone", [box(0, 0, 1000, 1000)])], max_span=150.0)
    inside = box(115, 115, 135, 135)  # the tiles are 125 ft wide
    assert len(cover.tree.query(inside, predicate="intersects")) > 1  # it crosses a cut between tiles
    subjects = np.array([MultiPolygon([inside, box(2000, 2000, 2100, 2100)]), inside], dtype=object)
    ov = overlay_areas(subjects, cover, tolerance_ft=0.0, min_area_sqft=0.0, workers=1, keep_geometry=("zone",))
    assert ov["raw_sqft"].tolist() == [400.0, 400.0]
    assert shapely.equals(ov["geometry"].iloc[0], inside) and shapely.equals(ov["geometry"].iloc[1], inside)


def test_line_pieces_are_the_lines_segments_grouped_in_order():
    # lines of 1 to 9 segments, a multipart line and a holed polygon's outline (two rings), cut into pieces of
    # 1 to 5 segments: each piece has at most that many, the pieces of a part share their end points, and cut
    # into 2-point segments again they are exactly the 2-point segments of the lines, in order, same owners
    from shapely.geometry import MultiLineString

    rng = np.random.default_rng(7)
    lines = [LineString(rng.uniform(0, 100, (n + 1, 2))) for n in range(1, 10)]
    lines.append(MultiLineString([[(0, 0), (1, 0), (2, 1)], [(5, 5), (6, 5)], [(9, 9), (9, 10), (8, 10), (8, 9)]]))
    lines.append(box(0, 0, 100, 100).difference(box(40, 40, 60, 60)).boundary)
    lines = np.array(lines, dtype=object)
    segs, owner = line_segments(lines)
    assert len(segs) == sum(range(1, 10)) + 6 + 8 and (shapely.get_num_coordinates(segs) == 2).all()
    for k in range(1, 6):
        pieces, p_owner = line_segments(lines, per_piece=k)
        n = shapely.get_num_coordinates(pieces)
        assert ((n >= 2) & (n <= k + 1)).all()
        again, again_piece = line_segments(pieces)
        assert shapely.equals_exact(again, segs, tolerance=0).all()
        np.testing.assert_array_equal(p_owner[again_piece], owner)
    with pytest.raises(InputError, match="per_piece"):
        line_segments(lines, per_piece=0)
    with pytest.raises(InputError, match="per_piece"):
        line_segments(lines, per_piece=1.5)
    assert len(line_segments(np.array([None, LineString()], dtype=object), per_piece=3)[0]) == 0


def test_stream_distance_from_pieces_is_the_distance_from_single_segments_bit_for_bit(county, monkeypatch):
    # the index of pieces of DISTANCE_PIECE_SEGMENTS segments on nodes of DISTANCE_NODE_CAPACITY gives the very
    # numbers of an index of 2-point segments on nodes of 10 (GEOS computes the same segment-to-segment distances)
    from geoconstraints.geometry import overlay as ov_mod

    parcels, _, streams = county
    g = np.asarray(parcels.geometry.values, dtype=object)
    lines = np.asarray(streams.geometry.values, dtype=object)
    assert ov_mod.DISTANCE_PIECE_SEGMENTS > 1
    got = distance_to_lines(g, lines, max_distance_ft=5000.0, workers=2, chunk_size=300)
    monkeypatch.setattr(ov_mod, "DISTANCE_PIECE_SEGMENTS", 1)
    monkeypatch.setattr(ov_mod, "DISTANCE_NODE_CAPACITY", 10)
    single = distance_to_lines(g, lines, max_distance_ft=5000.0, workers=2, chunk_size=300)
    assert np.isfinite(got).sum() > 1000 and (got > 0).sum() > 1000
    np.testing.assert_array_equal(got, single)


def test_stream_distance_begun_in_the_background_is_distance_to_lines_bit_for_bit(county):
    parcels, _, streams = county
    g = np.asarray(parcels.geometry.values, dtype=object)
    lines = np.asarray(streams.geometry.values, dtype=object)
    want = distance_to_lines(g, lines, max_distance_ft=400.0, workers=2, chunk_size=300)
    job = start_distance_to_lines(g, lines, max_distance_ft=400.0, workers=2, chunk_size=300)
    got = job.result()
    assert np.isfinite(want).sum() > 1000 and np.isnan(want).sum() > 100
    np.testing.assert_array_equal(got, want)
    assert np.isnan(start_distance_to_lines(g[:5], [], max_distance_ft=400.0).result()).all()
    assert len(start_distance_to_lines([], lines, max_distance_ft=400.0).result()) == 0
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(InputError, match="max_distance_ft"):
            start_distance_to_lines(g[:5], lines, max_distance_ft=bad)


def test_a_screening_that_fails_stops_its_background_distance_search(tmp_path, county, monkeypatch):
    # the checks fail after the search was begun: the search is cancelled (no more chunks begun) and the
    # checks' error is the one raised
    from geoconstraints import commands
    from geoconstraints.geometry import overlay as ov_mod

    parcels, flood, streams = county
    path = tmp_path / "county.gpkg"
    parcels.to_file(path, layer="parcels")
    flood.to_file(path, layer="flood_zones")
    streams.to_file(path, layer="streams")
    layers = load_layers(path, primary=("parcels",))
    cancelled: list[bool] = []
    real_cancel = ov_mod.PendingDistances.cancel

    def cancel(self):
        cancelled.append(True)
        real_cancel(self)

    def failing_checks(*a, **k):
        raise RuntimeError("a check failed")

    monkeypatch.setattr(ov_mod.PendingDistances, "cancel", cancel)
    monkeypatch.setattr(commands, "run_checks", failing_checks)
    with pytest.raises(RuntimeError, match="a check failed"):
        screen_parcels(layers, load_rulebook("vestal"))
    assert cancelled == [True]
