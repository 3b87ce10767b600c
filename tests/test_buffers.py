"""Buffer strips of HRV-020..022 (geoconstraints.buffers), checked against hand arithmetic.

Coordinates are local (a few thousand feet) shifted to Vestal, NY in EPSG:2261 (US survey feet).
Buffers are drawn with 16 segments per quarter circle, so a round cap of radius r has area
0.5 * 64 * r**2 * sin(2*pi/64) = 0.99839 * pi * r**2: tolerances below allow for that (0.2 %).
"""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pytest
import shapely
from common import NY_FT, X0, Y0, at
from shapely.geometry import LineString, Point, box

from geoconstraints.errors import InputError
from geoconstraints.geometry import buffers as bf
from geoconstraints.io.validate import polygonal_parts
from geoconstraints.units import SQFT_PER_ACRE

ARC = 0.5 * 64 * math.sin(2 * math.pi / 64) / math.pi  # polygonal circle / true circle = 0.99839


def layer(ids, geoms, **cols) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"feature_id": list(ids), **cols}, geometry=[at(g) for g in geoms], crs=NY_FT)


def test_straight_stream_buffer_area() -> None:
    # 1,000 ft stream, 50 ft each side + two half-circle caps: 2*50*1000 + pi*50**2 = 107,853.98 sq ft
    s = layer(["S1"], [LineString([(0, 0), (1000, 0)])], kind=["perennial"])
    out = bf.stream_buffers(s, 50)
    assert list(out.columns) == [*bf.BUFFER_COLUMNS, "geometry"]
    expected = 2 * 50 * 1000 + ARC * math.pi * 50**2  # 107,841.3 with the polygonal caps
    assert out.area.iloc[0] == pytest.approx(expected, rel=1e-6)
    assert 2 * 50 * 1000 + math.pi * 50**2 == pytest.approx(107_853.98, abs=0.01)
    assert out.area.iloc[0] == pytest.approx(107_853.98, rel=2e-4)
    row = out.iloc[0]
    assert (row["kind"], row["rule_id"], row["source_id"], row["width_ft"], row["measured_from"]) == (
        "stream",
        "HRV-020",
        "S1",
        50.0,
        "stream line",
    )


def test_intermittent_switch_and_unknown_kind() -> None:
    s = layer(
        ["P", "I", "U", "E"],
        [LineString([(0, y), (100, y)]) for y in (0, 500, 1000, 1500)],
        kind=["perennial", "intermittent", None, "ephemeral"],
    )
    assert set(bf.stream_buffers(s, 50)["source_id"]) == {"P", "U"}
    assert set(bf.stream_buffers(s, 50, include_intermittent=True)["source_id"]) == {"P", "I", "U"}


def test_stream_polygon_is_buffered_from_the_bank() -> None:
    # a 100 x 20 ft pond buffered 50 ft: rectangle (200 x 120) minus 4 corner squares + 4 quarter circles
    # = 100*20 + 2*50*100 + 2*50*20 + pi*50**2 = 2,000 + 10,000 + 2,000 + 7,853.98 = 21,853.98
    s = layer(["W"], [box(0, 0, 100, 20)], kind=[None])
    out = bf.stream_buffers(s, 50)
    assert out["measured_from"].iloc[0] == "stream bank (polygon)"
    assert out.area.iloc[0] == pytest.approx(14_000 + ARC * math.pi * 2500, rel=1e-6)


def test_clip_to_extent_keeps_batches_small() -> None:
    far = LineString([(50_000, 0), (51_000, 0)])
    s = layer(["near", "far"], [LineString([(0, 0), (1000, 0)]), far], kind=["perennial"] * 2)
    ext = at(box(0, -200, 500, 200))
    out = bf.stream_buffers(s, 50, extent=ext)
    assert list(out["source_id"]) == ["near"]
    # clipped to x in [0, 500]: 500 * 100 = 50,000 sq ft exactly
    assert out.area.iloc[0] == pytest.approx(50_000, rel=1e-9)


def test_plan_extent() -> None:
    ha = layer(["H"], [box(0, 0, 100, 50)])
    lg = layer(["L"], [Point(300, 20)])
    ext = bf.plan_extent([ha, None, lg], 10)
    assert ext.bounds == pytest.approx((X0 - 10, Y0 - 10, X0 + 310, Y0 + 60))
    assert bf.plan_extent([None], 10) is None
    with pytest.raises(InputError):
        bf.plan_extent([ha], -1)


def test_road_buffer_from_centre_line_and_from_row() -> None:
    roads = layer(
        ["R1", "R2"],
        [LineString([(0, 0), (1000, 0)]), LineString([(0, 5000), (1000, 5000)])],
        row_width_ft=[60.0, np.nan],
    )
    centre = bf.road_buffers(roads, 50)
    assert set(centre["measured_from"]) == {"road centre line"}
    assert centre.area.iloc[0] == pytest.approx(100_000 + ARC * math.pi * 2500, rel=1e-6)
    # a 60 ft ROW polygon along R1 only: R1 measured from the ROW line, R2 still from its centre line
    row = layer(["W1"], [box(0, -30, 1000, 30)])
    both = bf.road_buffers(roads, 50, row=row)
    by_src = both.set_index("source_id")
    assert by_src.loc["row W1", "measured_from"] == "right-of-way line"
    assert by_src.loc["R2", "measured_from"] == "road centre line"
    assert "R1" not in by_src.index
    # 1000 x 60 ROW grown by 50: 1000*160 + 2*50*60 + pi*50**2 = 160,000 + 6,000 + 7,853.98
    assert both.set_index("source_id").geometry["row W1"].area == pytest.approx(
        166_000 + ARC * math.pi * 2500, rel=1e-6
    )


def test_row_polygons_use_row_width_or_default() -> None:
    roads = layer(
        ["R1", "R2"],
        [LineString([(0, 0), (1000, 0)]), LineString([(0, 5000), (1000, 5000)])],
        row_width_ft=[60.0, np.nan],
    )
    rows = bf.row_polygons(roads, None, default_row_width_ft=50)
    # flat ends: 1000 x 60 and 1000 x 50
    assert list(rows.area) == pytest.approx([60_000, 50_000])
    assert list(rows["row_width_ft"]) == [60.0, 50.0]
    assert list(rows["width_assumed"]) == [False, True]  # R2 has no width: the default, and said so


def _town() -> dict[str, gpd.GeoDataFrame]:
    # P1 (RR) above P2 (RA-1), P3 (C-1) east of both, P4 (RR) far away
    parcels = layer(
        ["P1", "P2", "P3", "P4"],
        [
            box(0, 0, 1000, 1000),
            box(0, -1000, 1000, 0),
            box(1000, -1000, 2000, 1000),
            box(5000, 0, 6000, 1000),
        ],
        zoning=["RR", "RA-1", "C-1", "RR"],
    )
    return {"parcels": parcels}


def test_property_line_readings_a_b_c() -> None:
    parcels = _town()["parcels"]
    a = bf.property_line_buffers(parcels, 100, districts=["RA-1", "RA-2", "RC"], reading="a")
    b = bf.property_line_buffers(parcels, 100, districts=["RA-1", "RA-2", "RC"], reading="b")
    c = bf.property_line_buffers(parcels, 100, districts=["RA-1", "RA-2", "RC"], reading="c")
    assert set(a["source_id"]) == {"P2"}
    assert set(b["source_id"]) == {"P1", "P3"}  # the neighbours bordering the RA-1 parcel, not far P4
    assert set(c["source_id"]) == {"P1", "P2", "P3"}
    assert a["measured_from"].iloc[0] == "property line of a RA-1 parcel"
    assert set(b["measured_from"]) == {"property line bordering RA-1 parcel P2"}
    # (a) ring of a 1000 x 1000 square buffered 100 ft both sides:
    # outside 1000*1000 + 4*100*1000 + pi*100**2 - inner square (800 x 800)
    ring = 1_000_000 + 400_000 + ARC * math.pi * 10_000 - 640_000
    assert a.area.iloc[0] == pytest.approx(ring, rel=1e-6)
    # (b) only the shared 1,000-ft lines (P1|P2 along v=0, P3|P2 along u=1000), each buffered:
    # 2*100*1000 + pi*100**2 = 231,415.9; the 1-ft touch tolerance adds 1-ft stubs at the ends
    # (at most 2 * 200 sq ft), hence rel 2e-3
    for area in b.area:
        assert area == pytest.approx(200_000 + ARC * math.pi * 10_000, rel=2e-3)
    # the shared strips lie inside the ring of (a): (c) covers the ground of (a)
    assert shapely.union_all(c.geometry.values).area == pytest.approx(a.area.iloc[0], rel=2e-3)
    with pytest.raises(InputError):
        bf.property_line_buffers(parcels, 100, districts=["RA-1"], reading="d")


def test_property_lines_from_zoning_layer_largest_overlap() -> None:
    parcels = _town()["parcels"].drop(columns="zoning")
    # RA-2 covers all of P2 and a 10 ft sliver of P1: P1 stays RR (largest overlap)
    zoning = layer(
        ["Z1", "Z2"], [box(-10, -1010, 1010, 10), box(-10, 10, 1010, 1010)], district=["ra-2", "RR"]
    )
    d = bf.parcel_districts(parcels, zoning)
    assert list(d) == ["RR", "RA-2", "RA-2", None]  # P3 overlaps RA-2 by a 10-ft strip only (no other)
    out = bf.property_line_buffers(parcels, 100, districts=["RA-2"], reading="a", zoning=zoning, with_sources=True)
    assert set(out["source_id"]) == {"P1", "P2", "P3"}
    # P1 (RR by area) has only its lines in the RA-2 sliver as strips (audit round 22): "a property line
    # within an RA-2 district" is one the map puts there, however little of the parcel lies in it
    p1 = out[out["source_id"] == "P1"]
    assert set(p1["measured_from"]) == {"property line within RA-2 zoning (a split-zoned parcel)"}
    assert shapely.length(shapely.union_all(p1["source_geometry"].to_numpy())) == pytest.approx(1000 + 2 * 10)


def test_dwelling_buffer_only_in_rr() -> None:
    parcels = _town()["parcels"]
    dw = layer(["D1", "D2", "D3"], [Point(500, 500), Point(500, -500), Point(9000, 9000)])
    out = bf.dwelling_buffers(dw, 100, districts=["RR"], parcels=parcels)
    assert list(out["source_id"]) == ["D1"]  # D2 in RA-1, D3 in no parcel: no buffer
    assert out["measured_from"].iloc[0] == "dwelling in RR"
    assert out.area.iloc[0] == pytest.approx(math.pi * 100**2, rel=2e-3)  # 31,415.9 sq ft
    zoning = layer(["Z"], [box(-100, -2000, 2000, 2000)], district=["RR"])
    assert set(bf.dwelling_buffers(dw, 100, districts=["RR"], zoning=zoning)["source_id"]) == {"D1", "D2"}


def test_zoning_source() -> None:
    parcels = _town()["parcels"]
    assert bf.zoning_source(None, parcels) == "parcels.zoning field"
    assert bf.zoning_source(None, parcels.drop(columns="zoning")) is None
    assert bf.zoning_source(layer(["Z"], [box(0, 0, 1, 1)], district=["RR"]), None) == "zoning layer"


def test_acres_inside_counts_overlaps_once() -> None:
    areas = layer(["H"], [box(0, 0, 1000, 1000)])
    strips = gpd.GeoDataFrame(
        {
            "kind": ["stream", "road"],
            "rule_id": "HRV-020",
            "source_id": ["a", "b"],
            "width_ft": 50.0,
            "measured_from": "",
        },
        geometry=[at(box(0, 0, 100, 1000)), at(box(0, 0, 1000, 100))],
        crs=NY_FT,
    )
    by_kind = bf.acres_inside(areas, strips)
    assert by_kind.loc["H", "stream"] == pytest.approx(100_000 / SQFT_PER_ACRE)
    assert by_kind.loc["H", "road"] == pytest.approx(100_000 / SQFT_PER_ACRE)
    # union: 100,000 + 100,000 - 10,000 overlap = 190,000 sq ft = 4.3618 acres
    assert bf.acres_inside(areas, strips, by=None).loc["H", "all"] == pytest.approx(190_000 / SQFT_PER_ACRE)


def test_polygonal_drops_stray_parts() -> None:
    gc = shapely.GeometryCollection([box(0, 0, 1, 1), LineString([(1, 1), (2, 2)])])
    nested = shapely.GeometryCollection([gc, shapely.MultiPolygon([box(5, 5, 6, 6), box(7, 7, 9, 9)])])
    out = polygonal_parts([gc, box(0, 0, 2, 2), nested, None])
    assert out[0].geom_type == "Polygon" and out[0].area == 1.0
    assert out[1].area == 4.0 and out[1].equals(box(0, 0, 2, 2))
    assert out[2].geom_type == "MultiPolygon" and out[2].area == 1.0 + 1.0 + 4.0  # parts of a nested collection
    assert out[3] is None  # missing stays missing
    # a clip that only touches leaves a bare point or line: no polygonal part, so empty
    touch = shapely.intersection(box(0, 0, 1, 1), box(1, 1, 2, 2))  # POINT (1 1)
    edge = shapely.intersection(box(0, 0, 1, 1), box(1, 0, 2, 1))  # LINESTRING
    out = polygonal_parts([touch, edge])
    assert [g.geom_type for g in out] == ["Polygon", "Polygon"] and all(g.is_empty for g in out)


def test_side_road_crossing_another_roads_row_keeps_its_own_strip() -> None:
    # R1 along v=0 inside its ROW W1 = [0,1000] x [-30,30]; side road R2 from (500,0) north to
    # (500,530) has no ROW polygon of its own. Only R2's stretch inside W1 (v in [0,30]) is
    # measured from the ROW line; the remaining 500 ft (v in [30,530]) is measured from its
    # centre line: 500 * 100 + pi * 50**2 (two round half caps) = 50,000 + 7,853.98 sq ft.
    roads = layer(["R1", "R2"], [LineString([(0, 0), (1000, 0)]), LineString([(500, 0), (500, 530)])])
    row = layer(["W1"], [box(0, -30, 1000, 30)])
    strips = bf.road_buffers(roads, 50, row=row).set_index("source_id")
    assert "R2" in strips.index and "R1" not in strips.index
    assert strips.loc["R2", "measured_from"] == "road centre line"
    assert strips.geometry["R2"].area == pytest.approx(50_000 + ARC * math.pi * 2500, rel=1e-6)
    # 40 ft east of R2, 300 ft north of W1: inside R2's 50 ft strip
    assert strips.geometry["R2"].contains(at(Point(540, 300)))


def test_row_polygons_widen_the_part_of_a_road_outside_every_row() -> None:
    # same layout: R2's 500 ft outside W1 widened to the default 50 ft ROW with flat ends:
    # 500 * 50 = 25,000 sq ft; R1 (inside W1) adds nothing
    roads = layer(["R1", "R2"], [LineString([(0, 0), (1000, 0)]), LineString([(500, 0), (500, 530)])])
    row = layer(["W1"], [box(0, -30, 1000, 30)])
    rows = bf.row_polygons(roads, row, default_row_width_ft=50).set_index("source_id")
    assert set(rows.index) == {"W1", "R2"}
    assert rows.geometry["R2"].area == pytest.approx(25_000, rel=1e-9)
    assert rows.loc["R2", "measured_from"] == "road centre line"


def test_possible_strips_of_unknown_districts() -> None:
    # D3 lies in no parcel: its district is unknown, it may be RR -> the strip it would have (pi 100^2)
    parcels = _town()["parcels"]
    dw = layer(["D1", "D2", "D3"], [Point(500, 500), Point(500, -500), Point(9000, 9000)])
    maybe = bf.dwelling_buffers(dw, 100, districts=["RR"], parcels=parcels, unknown_districts=True)
    assert list(maybe["source_id"]) == ["D3"] and maybe["measured_from"].iloc[0] == "dwelling in district unknown"
    assert maybe.area.iloc[0] == pytest.approx(ARC * math.pi * 100**2, rel=1e-6)
    # P2 (RA-1) loses its zoning value: reading (a) builds its ring as a possible strip, none as a certain one
    parcels.loc[parcels["feature_id"] == "P2", "zoning"] = None
    assert len(bf.property_line_buffers(parcels, 100, districts=["RA-1"], reading="a")) == 0
    a = bf.property_line_buffers(parcels, 100, districts=["RA-1"], reading="a", unknown_districts=True)
    assert list(a["source_id"]) == ["P2"] and a["measured_from"].iloc[0] == "property line of a district unknown parcel"
    # the ring of a 1000-ft square buffered 100 ft both sides: 1,200^2 - 800^2 + the corners' arcs
    assert a.area.iloc[0] == pytest.approx(1_000_000 + 400_000 + ARC * math.pi * 10_000 - 640_000, rel=1e-6)


def test_strips_carry_the_geometry_they_are_drawn_around() -> None:
    # HRV-024/025 measure a landing at a strip's curved edge to the strip's source. The source was found
    # again from the strip's text: by id (real county layers repeat ids: the second D1 answered for
    # the first) and by splitting measured_from on " parcel " (a zoned parcel "Lot 4 parcel 2" was
    # looked up as "2"). Each strip now carries what it is drawn around, apart from the written layer.
    dw = layer(["D1", "D1"], [Point(0, 0), Point(3000, 0)])
    parcels = layer(["N", "Lot 4 parcel 2", "2"], [box(-500, 0, 500, 1000), box(-500, -1000, 500, 0),
                                                   box(5000, 5000, 6000, 6000)], zoning=["RR", "ra1", "C-1"])
    d = bf.dwelling_buffers(dw, 100, districts=["RR"], parcels=layer(["P"], [box(-500, -500, 4000, 500)],
                                                                          zoning=["rr"]), with_sources=True)
    assert list(d.columns) == [*bf.BUFFER_COLUMNS, *bf.SOURCE_COLUMNS, "geometry"]
    assert [g.equals(at(p)) for g, p in zip(d["source_geometry"], (Point(0, 0), Point(3000, 0)))] == [True, True]
    assert list(d["district_value"]) == ["rr", "rr"] and list(d["bordering"]) == [None, None]
    b = bf.property_line_buffers(parcels, 100, districts=["RA-1"], reading="b", with_sources=True)
    assert list(b["source_id"]) == ["N"] and list(b["bordering"]) == ["Lot 4 parcel 2"]
    assert b["measured_from"].iloc[0] == "property line bordering RA-1 parcel Lot 4 parcel 2"
    assert b["district_value"].iloc[0] == "ra1"
    # N's line where it borders the zoned parcel (1-ft touch tolerance): the shared 1,000 ft and 1-ft stubs
    want = shapely.intersection(shapely.boundary(at(box(-500, 0, 500, 1000))),
                                shapely.buffer(at(box(-500, -1000, 500, 0)), 1.0))
    assert b["source_geometry"].iloc[0].equals(want) and want.length == pytest.approx(1002.0)
    a = bf.property_line_buffers(parcels, 100, districts=["RA-1"], reading="a", with_sources=True)
    assert a["source_geometry"].iloc[0].equals(shapely.boundary(at(box(-500, -1000, 500, 0))))
    # a right-of-way polygon, and the stretch of a road outside it
    roads = layer(["R1", "R1"], [LineString([(0, 0), (1000, 0)]), LineString([(500, 0), (500, 530)])])
    row = layer(["W1"], [box(0, -30, 1000, 30)])
    r = bf.road_buffers(roads, 50, row=row, with_sources=True)
    assert list(r["source_id"]) == ["row W1", "R1"]
    assert r["source_geometry"].iloc[0].equals(at(box(0, -30, 1000, 30)))
    assert r["source_geometry"].iloc[1].equals(at(LineString([(500, 30), (500, 530)])))
    rows = bf.row_polygons(roads, row, default_row_width_ft=50)
    assert rows.set_index("source_layer")["source_geometry"]["roads"].equals(at(LineString([(500, 30), (500, 530)])))
    # build_buffers keeps them apart from the strips it writes (buffer_strips has no second geometry column)
    settings = {"dwelling": {"width_ft": 100.0, "clip_margin_ft": 600.0, "rule_id": "HRV-022", "districts": ["RR"]},
                "property_line": {"width_ft": 100.0, "clip_margin_ft": 0.0, "rule_id": "HRV-021",
                                  "districts": ["RA-1"], "reading": "c", "touch_tolerance_ft": 1.0}}
    in_n = layer(["D1", "D1"], [Point(0, 500), Point(-400, 500)])  # both in N (RR)
    built = bf.build_buffers({"dwellings": in_n, "parcels": parcels}, settings,
                             plan=[layer(["H"], [box(-50, -50, 50, 50)])], crs=NY_FT)
    assert list(built.strips.columns) == [*bf.BUFFER_COLUMNS, "geometry"]
    assert list(built.sources.columns) == bf.SOURCE_COLUMNS and built.sources.index.equals(built.strips.index)
    dwell = (built.strips["kind"] == "dwelling").to_numpy()
    drawn_around = built.sources.loc[dwell, "source_geometry"]
    assert [g.equals(at(p)) for g, p in zip(drawn_around, (Point(0, 500), Point(-400, 500)))] == [True, True]
    assert built.sources.loc[~dwell, "bordering"].tolist() == [None, "Lot 4 parcel 2"]
