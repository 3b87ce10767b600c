"""The parcels table's BFE over the parcel's whole SFHA part (``screen``): the highest BFE of its points
(``bfe_ft``, with that point's method, datum and note), the lowest (``bfe_lowest_ft``), and notes that never
let a parcel read as if the BFE were known everywhere on it.

Values are checked against hand computations: a BFE interpolated along a straight stream between lines of
``e0`` at position ``s0`` and ``e1`` at ``s1`` is ``e0 + (e1 - e0) * (s - s0) / (s1 - s0)`` (tolerance 0.01 ft).
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from common import NY_FT, X0, Y0
from shapely import affinity
from shapely.geometry import LineString, Point
from test_flood import parcels, sq, write, zones

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import screen_parcels
from geoconstraints.geometry.bfe import bfe_at_points

TOL_FT = 0.01


@pytest.fixture(scope="module")
def rb():
    return load_rulebook("vestal")


def line(x0: float, y0: float, x1: float, y1: float) -> LineString:
    return LineString([(X0 + x0, Y0 + y0), (X0 + x1, Y0 + y1)])


def bfe_lines(*specs: tuple[LineString, float], datum: str = "NAVD88") -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"ELEV": [e for _, e in specs], "V_DATUM": datum, "LEN_UNIT": "Feet"},
                            geometry=[g for g, _ in specs], crs=NY_FT)


def streams(*geoms: LineString) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"name": ["Test Creek"] * len(geoms)}, geometry=list(geoms), crs=NY_FT)


def run(tmp_path, rb, **layers) -> pd.DataFrame:
    res = screen_parcels(load_layers(write(tmp_path, **layers)), rb, findings="all")
    return res.tables["parcels"].set_index("parcel_id")


def turned(g, angle: float):
    return affinity.rotate(g, angle, origin=(X0, Y0))


@pytest.mark.parametrize("angle", [0.0, 30.0, 90.0, 200.0])
def test_a_parcel_along_a_stream_gets_the_highest_bfe_and_the_lowest(tmp_path, rb, angle) -> None:
    # a parcel 400 ft along a straight stream, BFE lines of 848 ft at x = 0 and 850 ft at x = 400 crossing it,
    # the SFHA (AE) covering it: its BFE ranges from 848 (x = 0) to 850 (x = 400); before, the point on surface
    # (the middle, x = 200) gave 849.0 as the parcel's BFE
    t = run(tmp_path, rb,
            parcels=parcels(turned(sq(0, 0, 400, 100), angle)),
            flood_zones=zones((turned(sq(-300, -200, 800, 300), angle), "AE")),
            bfe_lines=bfe_lines((turned(line(0, -150, 0, 250), angle), 848.0),
                                (turned(line(400, -150, 400, 250), angle), 850.0)),
            streams=streams(turned(line(-250, 50, 750, 50), angle))).loc["P1"]
    assert t["bfe_ft"] == pytest.approx(850.0, abs=TOL_FT)
    assert t["bfe_lowest_ft"] == pytest.approx(848.0, abs=TOL_FT)
    assert t["bfe_method"] == "interpolated_along_stream" and t["bfe_datum"] == "NAVD88"
    assert t["bfe_note"].startswith("848.0 to 850.0 ft at the points read on the parcel's SFHA part; the highest read is given (")
    assert "projects onto a BFE line" in t["bfe_note"]


def test_a_uniform_bfe_keeps_its_note_and_the_lowest_equals_the_highest(tmp_path, rb) -> None:
    # a STATIC_BFE polygon over the whole parcel: 812.5 ft everywhere, no range to state
    t = run(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 100)),
            flood_zones=zones((sq(-100, -100, 300, 200), "AE", None, 812.5))).loc["P1"]
    assert (t["bfe_ft"], t["bfe_lowest_ft"], t["bfe_method"]) == (812.5, 812.5, "static")
    assert t["bfe_note"] == "static BFE of the flood zone polygon (STATIC_BFE)"


def _static_scene(static_poly, static_ft: float) -> dict:
    # AE everywhere, BFE lines 808 ft at x = -100 and 812 ft at x = 300 along a stream on y = 50:
    # 808 + 4 * (x + 100) / 400 -> 809.0 at x = 0, 810.0 at x = 100, 811.0 at x = 200
    return {"parcels": parcels(sq(0, 0, 200, 100)),
            "flood_zones": zones((sq(-300, -200, 500, 300), "AE"), (static_poly, "AE", None, static_ft)),
            "bfe_lines": bfe_lines((line(-100, -150, -100, 250), 808.0), (line(300, -150, 300, 250), 812.0)),
            "streams": streams(line(-250, 50, 450, 50))}


def test_a_static_bfe_island_inside_the_parcel_is_sampled(tmp_path, rb) -> None:
    # a polygon stating 815 ft lies wholly inside the parcel, away from its point on surface (x = 100): the
    # corners of the parcel's piece in it are sampled; before, the parcel read 810.0 (interpolated, the middle)
    t = run(tmp_path, rb, **_static_scene(sq(20, 20, 60, 60), 815.0)).loc["P1"]
    assert t["bfe_ft"] == pytest.approx(815.0, abs=TOL_FT) and t["bfe_method"] == "static"
    assert t["bfe_lowest_ft"] == pytest.approx(809.0, abs=TOL_FT)  # the corner at x = 0
    assert t["bfe_note"].startswith("809.0 to 815.0 ft at the points read on the parcel's SFHA part; the highest read is given (static")


def test_a_higher_interpolated_bfe_over_a_lower_static_one_says_so(tmp_path, rb) -> None:
    # the parcel's right part (x 150..200) states 805 ft; the BFE lines give up to 811.0 ft at x = 200 ... but
    # that corner is in the static polygon (805); outside it the highest is 810.5 ft at x = 150 (its edge)
    t = run(tmp_path, rb, **_static_scene(sq(150, -100, 400, 200), 805.0)).loc["P1"]
    assert t["bfe_ft"] == pytest.approx(810.5, abs=TOL_FT) and t["bfe_method"] == "interpolated_along_stream"
    assert t["bfe_lowest_ft"] == pytest.approx(805.0, abs=TOL_FT)
    assert "; above the static BFE of 805.0 ft elsewhere on the parcel's SFHA part" in t["bfe_note"]


def test_a_parcel_half_in_zone_a_takes_no_bfe_read_off_the_lines_there(tmp_path, rb) -> None:
    # AE for x < 80, zone A (no BFE on the FIRM) for x >= 80; the BFE lines (846 ft at x = -100, 852 ft at
    # x = 500, 846 + (x + 100) / 100) would give 848.0 at the parcel's middle (x = 100, in zone A: what it read
    # before) and up to 849.0 at x = 200; on the AE part the BFE is 847.0 (x = 0) to 847.8 (x = 80)
    t = run(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 100), sq(300, 0, 400, 100)),
            flood_zones=zones((sq(-300, -200, 80, 300), "AE"), (sq(80, -200, 600, 300), "A")),
            bfe_lines=bfe_lines((line(-100, -150, -100, 250), 846.0), (line(500, -150, 500, 250), 852.0)),
            streams=streams(line(-250, 50, 650, 50)))
    p1, p2 = t.loc["P1"], t.loc["P2"]
    assert p1["bfe_ft"] == pytest.approx(847.8, abs=TOL_FT)
    assert p1["bfe_lowest_ft"] == pytest.approx(847.0, abs=TOL_FT)
    assert "; its part in zone A has no BFE on the FIRM (none read off the BFE lines there is used)" in p1["bfe_note"]
    # wholly in zone A: no BFE on the FIRM, none read off the lines is given (before: 849.5 ft, interpolated)
    assert np.isnan(p2["bfe_ft"]) and np.isnan(p2["bfe_lowest_ft"]) and p2["bfe_method"] == "none"
    assert p2["bfe_note"] == ("no BFE on the FIRM on the parcel's SFHA part (zone A): none read off the BFE lines "
                              "there is used")


def test_a_parcel_partly_past_the_last_bfe_line_says_the_bfe_is_not_known_everywhere(tmp_path, rb) -> None:
    # lines of 848 ft at x = 0 and 850 ft at x = 400; the parcel (x 300..500) reaches past the last line: its
    # corners at x = 500 have no BFE. The highest found is 850.0 (x = 400, its point on surface), the lowest
    # 849.5 (x = 300); the point on surface above both extremes read, every corner is (5 points, 2 without a
    # BFE); before, the note was the point on surface's alone
    t = run(tmp_path, rb, parcels=parcels(sq(300, 0, 500, 100)),
            flood_zones=zones((sq(-300, -200, 800, 300), "AE")),
            bfe_lines=bfe_lines((line(0, -150, 0, 250), 848.0), (line(400, -150, 400, 250), 850.0)),
            streams=streams(line(-250, 50, 750, 50))).loc["P1"]
    assert t["bfe_ft"] == pytest.approx(850.0, abs=TOL_FT)
    assert t["bfe_lowest_ft"] == pytest.approx(849.5, abs=TOL_FT)
    assert "no BFE at 2 of the 5 points sampled on the parcel's SFHA part (the site is not between two BFE lines" \
        in t["bfe_note"]
    assert t["bfe_note"].endswith("the BFE is not known on all of it")


def test_datums_are_never_compared_across_the_parcel(tmp_path, rb) -> None:
    # a STATIC_BFE polygon in NGVD29 over half of the parcel, the other half under one in NAVD88
    fz = zones((sq(-100, -100, 100, 200), "AE", None, 810.0), (sq(100, -100, 300, 200), "AE", None, 811.0))
    fz["V_DATUM"] = ["NAVD88", "NGVD29"]
    t = run(tmp_path, rb, parcels=parcels(sq(0, 0, 200, 100)), flood_zones=fz).loc["P1"]
    assert np.isnan(t["bfe_ft"]) and np.isnan(t["bfe_lowest_ft"]) and t["bfe_method"] == "none"
    assert "different vertical datums (NAVD88, NGVD29): not compared" in t["bfe_note"]


def test_a_parcel_outside_the_sfha_has_no_bfe(tmp_path, rb) -> None:
    t = run(tmp_path, rb, parcels=parcels(sq(0, 0, 100, 100)), flood_zones=zones((sq(-100, -100, 300, 300), "X")),
            bfe_lines=bfe_lines((line(0, -150, 0, 250), 848.0), (line(400, -150, 400, 250), 850.0)),
            streams=streams(line(-250, 50, 750, 50))).loc["P1"]
    assert np.isnan(t["bfe_ft"]) and np.isnan(t["bfe_lowest_ft"]) and t["bfe_method"] == "none"
    assert t["bfe_note"] == "not in the area of special flood hazard"


def test_the_columns_sit_side_by_side(tmp_path, rb) -> None:
    t = run(tmp_path, rb, parcels=parcels(sq(0, 0, 100, 100)), flood_zones=zones((sq(-100, -100, 300, 300), "X")))
    cols = list(t.columns)
    i = cols.index("bfe_ft")
    assert cols[i:i + 6] == ["bfe_ft", "bfe_lowest_ft", "bfe_method", "bfe_datum", "bfe_note", "stream_distance_ft"]


def test_the_position_along_the_stream_is_line_locate_points() -> None:
    # bfe_at_points projects a site onto its nearest stream segment (no walk along the whole stream): the same
    # position as shapely.line_locate_point, a bend's inside (two segments equally near) included
    rng = np.random.default_rng(3)
    xy = np.column_stack([np.linspace(0, 3000, 60), 200 * np.sin(np.linspace(0, 9, 60))]) + (X0, Y0)
    river = LineString(xy)
    lines = [LineString([(x - 1, y - 400), (x + 1, y + 400)]) for x, y in xy[[2, 58]]]
    pts = shapely.points(rng.uniform([X0, Y0 - 300], [X0 + 3000, Y0 + 300], (400, 2)))
    pts = np.concatenate([pts, [Point(X0 + 1500, Y0 + 150)]])
    b = bfe_at_points(pts, bfe_lines=bfe_lines((lines[0], 900.0), (lines[1], 880.0)), streams=streams(river),
                      search_radius_ft=5000)
    got = b["stream_position_ft"].to_numpy()
    ok = np.isfinite(got)
    assert ok.sum() > 300
    np.testing.assert_allclose(got[ok], shapely.line_locate_point(river, pts[ok]), rtol=0, atol=1e-6)


def test_the_sampler_gives_what_bfe_at_points_gives_without_notes_the_same_values() -> None:
    from geoconstraints.geometry.bfe import bfe_sampler  # new with the parcels' sampling
    river = line(-250, 50, 750, 50)
    bl = bfe_lines((line(0, -150, 0, 250), 848.0), (line(400, -150, 400, 250), 850.0))
    pts = shapely.points([(X0 + x, Y0 + 20) for x in (-10, 0, 100, 250, 400, 600)])
    at = bfe_sampler(bfe_lines=bl, streams=streams(river), search_radius_ft=5000)
    full, brief = at(pts), at(pts, notes=False, direction=True)
    pd.testing.assert_frame_equal(full.drop(columns="bfe_note"), brief.drop(columns=["bfe_note", "bfe_dx",
                                                                                      "bfe_dy"]))
    assert full.drop(columns="bfe_note").equals(
        bfe_at_points(pts, bfe_lines=bl, streams=streams(river), search_radius_ft=5000).drop(columns="bfe_note"))
    assert brief["bfe_dx"].dropna().eq(1.0).all()
    assert full.loc[2, "bfe_ft"] == pytest.approx(848.5, abs=TOL_FT)


def test_without_streams_the_nearest_lines_give_the_range_too(tmp_path, rb) -> None:
    # no streams layer: the nearest BFE line on each side weighted by inverse distance, 848 ft at x = 0 and 850 ft
    # at x = 400: 848 + 2 * x / 400 between them; the parcel (x 100..300) ranges from 848.5 to 849.5 ft (before:
    # 849.0, its middle)
    t = run(tmp_path, rb, parcels=parcels(sq(100, 0, 300, 100)),
            flood_zones=zones((sq(-300, -200, 800, 300), "AE")),
            bfe_lines=bfe_lines((line(0, -150, 0, 250), 848.0), (line(400, -150, 400, 250), 850.0))).loc["P1"]
    assert t["bfe_ft"] == pytest.approx(849.5, abs=TOL_FT) and t["bfe_method"] == "nearest_lines"
    assert t["bfe_lowest_ft"] == pytest.approx(848.5, abs=TOL_FT)
    assert t["bfe_note"].startswith("848.5 to 849.5 ft at the points read on the parcel's SFHA part; the highest read is given (")
