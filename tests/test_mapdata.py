"""The compact findings payload of map.html (output/mapdata.py): the helpers by hand, the places'
coordinates against geopandas' own reprojection."""

from __future__ import annotations

import base64

import geopandas as gpd
import numpy as np
import pandas as pd
from common import NY_FT, X0, Y0
from shapely.geometry import GeometryCollection, LineString, Point, box

from geoconstraints.output.mapdata import QUANTUM_DEG, encode_findings, status_ranks, text_codes
from geoconstraints.rulebook.loader import load_rulebook


def _decode(b64: str, dtype) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype=dtype)


def test_status_ranks_by_hand():
    exact, drawn = status_ranks(pd.Series(["info", "violation", "pass", "bogus", None, "review"], dtype="str"))
    assert exact.tolist() == [3, 0, 4, -1, -1, 1]
    assert drawn.tolist() == [3, 0, 4, 4, 4, 1]  # another or no status: drawn as the last one


def test_text_codes_sorted_distinct_values_of_the_rows_taken():
    s = pd.Series(["T-3", "T-1", "U-1", None, "T-1"], dtype="str")
    rows = np.array([4, 0, 1, 3])  # U-1 (row 2) is not taken: not in the table
    names, idx = text_codes(s, rows, missing="")
    assert names.tolist() == ["", "T-1", "T-3"]
    assert idx.tolist() == [1, 2, 1, 0]
    names, idx = text_codes(pd.Series([2.5, 10.0, 2.5]), np.array([0, 1, 2]))
    assert names.tolist() == ["10.0", "2.5"] and idx.tolist() == [1, 0, 1]  # as text, sorted as text


def _findings():
    parcel = box(X0, Y0, X0 + 200, Y0 + 100)
    rows = [("T-1", "review", "p1", parcel), ("T-3", "pass", "p1", parcel),
            ("T-1", "violation", "p2", box(X0 + 300, Y0, X0 + 500, Y0 + 100)),
            ("T-10", "info", "", None),
            ("T-8", "violation", "s1", LineString([(X0, Y0 - 50), (X0 + 400, Y0 - 60)])),
            ("T-4", "not_evaluated", "w1", Point(X0 + 100, Y0 + 300)),
            ("T-9", "pass", "c1", GeometryCollection([Point(X0 + 600, Y0), box(X0 + 600, Y0, X0 + 650, Y0 + 40)]))]
    return gpd.GeoDataFrame({
        "rule_id": [r[0] for r in rows], "status": [r[1] for r in rows], "citation": "§ 6-1",
        "subject_layer": ["parcels", "parcels", "parcels", "", "streams", "wells", "cuts"],
        "subject_id": [r[2] for r in rows], "measured": [1.0, 2.0, 3.0, np.nan, 4.0, np.nan, 5.0],
        "threshold": [10.0, np.nan, 10.0, np.nan, 50.0, np.nan, 1.0], "unit": ["ft", None, "ft", "", "ft", "", "ac"],
        "message": "m", "waived": ["", "", "", "", "", "", "ok"]}, geometry=[r[3] for r in rows], crs=NY_FT)


def test_encode_findings_places_and_coordinates():
    f = _findings()
    payload, counts = encode_findings(f, load_rulebook("vestal"))
    assert (payload["n_places"], payload["n_findings"]) == (5, 6)  # p1's two findings share one place
    assert counts["info"].unlocated == 1 and counts["violation"].places == 2
    assert counts["pass"].under == 1  # p1's pass finding is under its review
    # the places' coordinates equal geopandas' reprojection, quantized from the origin
    polys = gpd.GeoSeries([f.geometry[0], f.geometry[2], box(X0 + 600, Y0, X0 + 650, Y0 + 40)], crs=NY_FT)
    g4 = polys.simplify(1.0).to_crs(4326)
    origin = np.asarray(payload["origin"])
    geo = payload["geometry"]["polygon"]
    q = _decode(geo["coords"], np.int32).reshape(-1, 2)
    want = np.round((np.vstack([np.asarray(g.exterior.coords) for g in g4]) - origin) / QUANTUM_DEG)
    assert geo["n"] == 3 and np.array_equal(q, want)
    line = _decode(payload["geometry"]["line"]["coords"], np.int32).reshape(-1, 2)
    lw = gpd.GeoSeries([f.geometry[4]], crs=NY_FT).to_crs(4326).get_coordinates().to_numpy()
    assert np.array_equal(line, np.round((lw - origin) / QUANTUM_DEG))
    # the origin: the south-west corner of everything drawn, floored to 1e-4 degree
    allxy = np.vstack([np.vstack([np.asarray(g.exterior.coords) for g in g4]), lw,
                       gpd.GeoSeries([f.geometry[5]], crs=NY_FT).to_crs(4326).get_coordinates().to_numpy()])
    assert np.allclose(origin, np.floor(allxy.min(axis=0) * 1e4) / 1e4, rtol=0, atol=1e-12)
    assert [r["id"] for r in payload["rules"]] == ["T-1", "T-3", "T-4", "T-8", "T-9"]
    assert {r["title"] for r in payload["rules"]} == {""} and payload["rules"][0]["citation"] == "§ 6-1"  # not in the rulebook
    assert payload["units"] == ["", "ac", "ft"] and payload["thresholds"] == [1.0, 10.0, 50.0, None]
    # per finding, by place: status code (+8 waived)
    assert _decode(payload["f_status"], np.uint8).tolist() == [1, 4, 0, 0, 2, 12]


def test_polygon_ragged_is_shapelys_ragged_array():
    import shapely
    from shapely.geometry import MultiPolygon, Polygon

    from geoconstraints.output.mapdata import polygon_ragged

    holed = Polygon([(0, 0), (10, 0), (10, 10), (0, 10)], [[(1, 1), (2, 1), (2, 2)], [(5, 5), (6, 5), (6, 6), (5, 6)]])
    tri = Polygon([(20, 0), (21, 0), (20, 1)])
    cases = [
        [box(0, 0, 1, 1), tri],                                                 # polygons only: POLYGON
        [box(0, 0, 1, 1), MultiPolygon([holed, tri]), holed, MultiPolygon([tri])],  # mixed, holes in both
    ]
    for geoms in cases:
        g = np.array(geoms, dtype=object)
        kind, xy, offsets = polygon_ragged(g)
        want_kind, want_xy, want_offsets = shapely.to_ragged_array(g)
        assert kind == want_kind and np.array_equal(xy, want_xy[:, :2])
        assert len(offsets) == len(want_offsets)
        assert all(np.array_equal(a, b) for a, b in zip(offsets, want_offsets))
    # empty or other geometries: left to shapely
    assert polygon_ragged(np.array([box(0, 0, 1, 1), Polygon()], dtype=object)) is None
    assert polygon_ragged(np.array([box(0, 0, 1, 1), Point(1, 1)], dtype=object)) is None


def test_places_in_degrees_are_not_reprojected():
    f = _findings().to_crs(4326)
    payload, _ = encode_findings(f, load_rulebook("vestal"))
    origin = np.asarray(payload["origin"])
    q = _decode(payload["geometry"]["line"]["coords"], np.int32).reshape(-1, 2)
    want = f.geometry.iloc[[4]].get_coordinates().to_numpy()  # EPSG:4326: not simplified, not transformed
    assert np.array_equal(q, np.round((want - origin) / QUANTUM_DEG))
