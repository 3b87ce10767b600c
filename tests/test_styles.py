"""QGIS styles in results.gpkg (layer_styles, QGIS schema), the shared palette, atomic writing."""

from __future__ import annotations

import sqlite3
import xml.etree.ElementTree as ET

import geopandas as gpd
import pyogrio
import pytest
from browser_util import make_synthetic_result
from shapely.geometry import Point

from geoconstraints.errors import OutputError
from geoconstraints.output import files as writers
from geoconstraints.output import styles, write_result
from geoconstraints.output.files import FINDINGS_LAYERS

QGIS_COLUMNS = ["id", "f_table_catalog", "f_table_schema", "f_table_name", "f_geometry_column", "styleName",
                "styleQML", "styleSLD", "useAsDefault", "description", "owner", "ui", "update_time"]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    base = tmp_path_factory.mktemp("styles")
    result = make_synthetic_result(base / "inputs")
    write_result(result, base / "out", findings="all")
    return base / "out"


def _rows(gpkg) -> dict[str, dict]:
    con = sqlite3.connect(gpkg)
    con.row_factory = sqlite3.Row
    try:
        return {r["f_table_name"]: dict(r) for r in con.execute("SELECT * FROM layer_styles")}
    finally:
        con.close()


def _qml(row: dict) -> ET.Element:
    return ET.fromstring(row["styleQML"])  # expat skips the DOCTYPE line


def _hex_to_rgb(h: str) -> str:
    h = h.lstrip("#")
    return ",".join(str(int(h[i:i + 2], 16)) for i in (0, 2, 4))


def test_every_layer_has_a_default_style(out):
    gpkg = out / "results.gpkg"
    con = sqlite3.connect(gpkg)
    cols = [r[1] for r in con.execute("PRAGMA table_info(layer_styles)")]
    contents = dict(con.execute("SELECT table_name, data_type FROM gpkg_contents"))
    con.close()
    assert cols == QGIS_COLUMNS
    assert contents["layer_styles"] == "attributes"  # registered as QGIS does
    rows = _rows(gpkg)
    for name in (*FINDINGS_LAYERS.values(), "buffer_strips", "grade_runs", "water_bars", "contours", "parcels"):
        assert name in rows, name
        assert rows[name]["useAsDefault"] == 1
        root = _qml(rows[name])
        assert root.tag == "qgis"
    for name in ("findings_point", "findings_line", "findings_polygon"):
        assert rows[name]["f_geometry_column"] == "geom"
    assert rows["findings_nogeom"]["f_geometry_column"] == ""
    assert rows["parcels"]["f_geometry_column"] == ""  # the parcels table has no geometry
    # one layer per geometry type: 4 parcels, 1 grade run, 2 water bars, 1 run-wide finding
    layers = dict(pyogrio.list_layers(gpkg))
    assert {k: layers[k] for k in FINDINGS_LAYERS.values()} == {
        "findings_point": "Point", "findings_line": "LineString", "findings_polygon": "Polygon",
        "findings_nogeom": None}
    counts = {k: pyogrio.read_info(gpkg, layer=k)["features"] for k in FINDINGS_LAYERS.values()}
    assert counts == {"findings_point": 2, "findings_line": 1, "findings_polygon": 4, "findings_nogeom": 1}
    assert "findings" not in layers  # no GEOMETRY-typed layer that QGIS draws with one symbol type
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("layer, symbol, geom_code, colour_key", [
    ("findings_point", "marker", "0", "color"), ("findings_line", "line", "1", "line_color"),
    ("findings_polygon", "fill", "2", "outline_color")])
def test_findings_categorized_by_status_with_map_colours(out, layer, symbol, geom_code, colour_key):
    root = _qml(_rows(out / "results.gpkg")[layer])
    r = root.find("renderer-v2")
    assert r.get("type") == "categorizedSymbol" and r.get("attr") == "status"
    cats = {c.get("value"): c.get("symbol") for c in r.iter("category")}
    assert set(cats) == set(styles.STATUS_COLORS) | {""}  # "" = QGIS's "all other values"
    syms = {s.get("name"): s for s in r.find("symbols")}
    for status, sym_name in cats.items():
        assert syms[sym_name].get("type") == symbol  # the symbol type of the layer's geometry
        opts = {o.get("name"): o.get("value") for o in syms[sym_name].iter("Option") if o.get("name")}
        want = styles.STATUS_COLORS.get(status, styles.STATUS_COLORS["not_evaluated"])
        assert opts[colour_key].startswith(_hex_to_rgb(want)), status
    assert root.findtext("layerGeometryType") == geom_code


def test_subject_table_categorized_by_worst_status(tmp_path):
    # a screening's parcels layer: drawn by its worst status, the colours of the findings
    g = gpd.GeoDataFrame({"parcel_id": ["P1", "P2", "P3"], "worst_status": ["violation", "pass", ""]},
                         geometry=[Point(0, 0).buffer(10), Point(50, 0).buffer(10), Point(99, 0).buffer(10)],
                         crs=2261)
    root = ET.fromstring(styles.qml_for("parcels", g))
    r = root.find("renderer-v2")
    assert (r.get("type"), r.get("attr")) == ("categorizedSymbol", "worst_status")
    assert {c.get("value") for c in r.iter("category")} == set(styles.STATUSES) | {""}
    sld = ET.fromstring(styles.sld_for("parcels", g))
    assert {e.text for e in sld.iter() if e.tag.endswith("PropertyName")} == {"worst_status"}
    # not a status column: a plain single symbol
    g2 = g.assign(worst_status=["high", "low", "mid"])
    assert ET.fromstring(styles.qml_for("parcels", g2)).find("renderer-v2").get("type") == "singleSymbol"


def test_empty_findings_layer_styled_by_its_declared_family():
    empty = gpd.GeoDataFrame({"status": []}, geometry=gpd.GeoSeries([], crs=2261))
    root = ET.fromstring(styles.qml_for("findings_line", empty, "line"))
    assert root.findtext("layerGeometryType") == "1"
    assert {s.get("type") for s in root.iter("symbol")} == {"line"}


def test_derived_layer_symbols(out):
    rows = _rows(out / "results.gpkg")
    runs = _qml(rows["grade_runs"]).find(".//symbol")
    assert runs.get("type") == "line"
    o = {x.get("name"): x.get("value") for x in runs.iter("Option") if x.get("name")}
    assert o["line_color"].startswith("227,26,28")  # #e31a1c, thick red
    assert float(o["line_width"]) == pytest.approx(5 * styles.PX_TO_MM, abs=0.01)  # 5 px = 1.3 mm
    bars = _qml(rows["water_bars"]).find(".//symbol")
    assert bars.get("type") == "marker"
    buf = _qml(rows["buffer_strips"]).find(".//symbol")
    o = {x.get("name"): x.get("value") for x in buf.iter("Option") if x.get("name")}
    alpha = int(o["color"].split(",")[3])
    assert buf.get("type") == "fill" and 0 < alpha < 255  # semi-transparent: 0.35 * 255 = 89
    assert alpha == 89


def test_sld_parses(out):
    rows = _rows(out / "results.gpkg")
    root = ET.fromstring(rows["findings_polygon"]["styleSLD"])
    assert root.tag.endswith("StyledLayerDescriptor")
    literals = [e.text for e in root.iter() if e.tag.endswith("Literal")]
    assert set(literals) == set(styles.STATUS_COLORS)
    assert rows["parcels"]["styleSLD"] == ""


def test_add_layer_styles_again_keeps_one_default(out, tmp_path):
    import shutil

    gpkg = tmp_path / "copy.gpkg"
    shutil.copy(out / "results.gpkg", gpkg)
    frame = gpd.read_file(gpkg, layer="grade_runs")
    assert styles.add_layer_styles(gpkg, {"grade_runs": frame, "not_in_file": frame}) == 1
    con = sqlite3.connect(gpkg)
    n = con.execute("SELECT count(*), sum(useAsDefault) FROM layer_styles WHERE f_table_name='grade_runs'").fetchone()
    con.close()
    assert n == (1, 1)


def test_add_layer_styles_refuses_a_non_geopackage(tmp_path):
    bad = tmp_path / "x.gpkg"
    bad.write_text("not a database")
    with pytest.raises(OutputError, match="x.gpkg"):
        styles.add_layer_styles(bad, {})
    with pytest.raises(OutputError, match="write the layers first"):
        styles.add_layer_styles(tmp_path / "missing.gpkg", {})


def test_styles_are_inside_the_atomic_write(tmp_path):
    g = gpd.GeoDataFrame({"status": ["violation"]}, geometry=[Point(964_000, 760_000)], crs=2261)
    target = tmp_path / "results.gpkg"

    def boom(tmp):
        assert tmp != target and tmp.exists()  # runs on the temporary file
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        writers.write_gpkg({"findings": g}, target, finalize=boom)
    assert not target.exists() and list(tmp_path.iterdir()) == []
    writers.write_gpkg({"findings": g}, target, finalize=lambda p: styles.add_layer_styles(p, {"findings": g}))
    assert _rows(target)["findings"]["styleName"] == "findings (geoconstraints)"


def test_the_family_of_a_layer_is_its_declared_type_without_a_pass_over_rows(tmp_path, monkeypatch):
    """A county's parcels: the family comes from gpkg_geometry_columns, not from a million rows;
    a layer declared GEOMETRY (mixed) still gets the family of most of its rows."""
    from shapely.geometry import LineString, box

    polys = gpd.GeoDataFrame({"worst_status": ["review", "pass"]},
                             geometry=[box(0, 0, 1, 1), box(1, 0, 2, 1)], crs=2261)
    mixed = gpd.GeoDataFrame({"name": ["a", "b", "c"]},
                             geometry=[LineString([(0, 0), (1, 1)]), LineString([(1, 1), (2, 0)]), Point(5, 5)],
                             crs=2261)
    target = tmp_path / "r.gpkg"
    writers.write_gpkg({"parcels": polys, "mixed": mixed}, target)
    con = sqlite3.connect(target)
    types = dict(con.execute("SELECT table_name, geometry_type_name FROM gpkg_geometry_columns"))
    con.close()
    assert types == {"parcels": "POLYGON", "mixed": "GEOMETRY"}
    calls = []
    real = styles.geom_family
    monkeypatch.setattr(styles, "geom_family", lambda df: calls.append(len(df)) or real(df))
    assert styles.add_layer_styles(target, {"parcels": polys, "mixed": mixed}) == 2
    assert calls == [3]  # only the mixed layer's rows were looked at
    rows = _rows(target)
    assert _qml(rows["parcels"]).find("layerGeometryType").text == "2"  # polygon
    assert _qml(rows["mixed"]).find("layerGeometryType").text == "1"  # line: two of three rows


class _Recording:
    """A sqlite3 connection that records the SQL run on it."""

    def __init__(self, con, seen):
        self._con, self._seen = con, seen

    def execute(self, sql, *args):
        self._seen.append(sql)
        return self._con.execute(sql, *args)

    def executemany(self, sql, rows):
        self._seen.append(sql)
        return self._con.executemany(sql, rows)

    def __enter__(self):
        return self._con.__enter__()

    def __exit__(self, *exc):
        return self._con.__exit__(*exc)

    def close(self):
        self._con.close()


@pytest.mark.parametrize("wait", [True, False])
def test_styles_wait_for_the_disk_unless_told_the_file_is_temporary(tmp_path, monkeypatch, wait):
    # a GeoPackage in place keeps SQLite's durable commit; write_result's temporary file (moved in place once
    # complete, as GDAL wrote it without waiting) is styled without flushing it to the disk
    g = gpd.GeoDataFrame({"status": ["violation"]}, geometry=[Point(964_000, 760_000)], crs=2261)
    target = writers.write_gpkg({"findings": g}, tmp_path / "r.gpkg")
    seen: list[str] = []
    real = sqlite3.connect
    monkeypatch.setattr(styles.sqlite3, "connect", lambda *a, **k: _Recording(real(*a, **k), seen))
    assert styles.add_layer_styles(target, {"findings": g}, wait_for_disk=wait) == 1
    monkeypatch.undo()
    assert ("PRAGMA synchronous = OFF" in seen) is (not wait)
    assert _rows(target)["findings"]["styleName"] == "findings (geoconstraints)"


def test_write_result_styles_its_temporary_geopackage_without_waiting_for_the_disk(tmp_path, monkeypatch):
    calls = []
    real = styles.add_layer_styles
    monkeypatch.setattr(styles, "add_layer_styles", lambda *a, **k: calls.append(k.get("wait_for_disk")) or real(*a, **k))
    write_result(make_synthetic_result(tmp_path / "inputs"), tmp_path / "set")
    assert calls == [False]


@pytest.mark.parametrize(("declared", "family"), [
    ("POINT", "point"), ("MultiPoint", "point"), ("LINESTRING", "line"), ("MULTILINESTRING", "line"),
    ("POLYGON", "polygon"), ("multipolygon", "polygon"), ("GEOMETRY", None), ("GEOMETRYCOLLECTION", None),
    (None, None), ("", None),
])
def test_declared_family(declared, family):
    assert styles.declared_family(declared) == family


@pytest.mark.parametrize(("zone", "sub", "key"), [
    ("AE", None, "AE"), ("X", "0.2 PCT ANNUAL CHANCE FLOOD HAZARD", "X (0.2% annual chance)"),
    ("X", "AREA OF MINIMAL FLOOD HAZARD", "X"), ("X", "AREA WITH REDUCED FLOOD RISK DUE TO LEVEE",
                                                 "X (protected by levee)"),
    (None, None, "unknown"), ("ve", "", "VE"),
])
def test_flood_zone_key(zone, sub, key):
    assert styles.flood_zone_key(zone, sub) == key


def test_encroachment_area_parts_have_their_own_styled_layer(tmp_path):
    # E-1 wholly in a STATE ENCROACHMENT AREA (FLD-002: floodway not determined). Before, results.gpkg held its
    # part only in sfha_overlaps, drawn as any SFHA part: nothing told it from plain AE. Now a layer of its own,
    # the floodway's dashed fill in another colour, each feature naming its subtype
    from browser_util import make_encroachment_result

    result = make_encroachment_result(tmp_path / "inputs")
    write_result(result, tmp_path / "out", outputs=["gpkg"])
    gpkg = tmp_path / "out" / "results.gpkg"
    enc = gpd.read_file(gpkg, layer="encroachment_overlaps")
    assert enc["parcel_id"].tolist() == ["E-1"] and enc["subtypes"].tolist() == ["STATE ENCROACHMENT AREA"]
    assert enc["acres"].iloc[0] == pytest.approx(40_000 / 43_560, rel=1e-6)  # 200 x 200 ft of the CRS's foot
    assert gpd.read_file(gpkg, layer="floodway_overlaps")["parcel_id"].tolist() == ["E-2"]
    rows = _rows(gpkg)
    opts = {}
    for name in ("encroachment_overlaps", "floodway_overlaps"):
        sym = _qml(rows[name]).find(".//symbol")
        opts[name] = {x.get("name"): x.get("value") for x in sym.iter("Option") if x.get("name")}
    e, fw = opts["encroachment_overlaps"], opts["floodway_overlaps"]
    assert e["outline_color"].startswith(_hex_to_rgb(styles.ENCROACHMENT_COLOR)) and e["outline_style"] == "dash"
    assert e["color"].split(",")[:3] != fw["color"].split(",")[:3] and fw["outline_style"] == "dash"
    assert styles.style_for("encroachment_overlaps").label == "parts in a floodway-like area (floodway not determined)"
    # the flood zone key and style of an encroachment area polygon (the class from classify_flood_zones)
    key = styles.flood_zone_key("AE", "STATE ENCROACHMENT AREA", encroachment=True)
    st = styles.flood_zone_style(key)
    assert st.label == "Flood zone AE: floodway-like area (floodway not determined)"
    assert st.fill == styles.flood_zone_style("AE").fill and st.color == styles.ENCROACHMENT_COLOR and st.dash


def test_style_for_unknown_and_buffer_names():
    assert styles.style_for("grade_runs").weight == 5.0
    assert styles.style_for("stream_buffers").fill == styles.LAYER_STYLES["buffer_strips"].fill
    # an unknown layer gets the neutral grey style, filled lightly when it has area
    assert (styles.style_for("something", "polygon").fill, styles.style_for("something", "polygon").fill_opacity) == (
        "#bdbdbd", 0.2)
    assert styles.style_for("something", "line").fill is None


def _family_by_names(gdf):
    """geom_family as it was computed from GeoSeries.geom_type names (the reference)."""
    geom = gdf.geometry
    types = geom[geom.notna() & ~geom.is_empty].geom_type
    fam = types.str.replace("Multi", "", regex=False).map(
        {"Point": "point", "LineString": "line", "LinearRing": "line", "Polygon": "polygon"}).dropna()
    return str(fam.value_counts().index[0]) if len(fam) else None


@pytest.mark.parametrize("geoms, expected", [
    (["pt", "box", "line", "box"], "polygon"),       # the most common
    (["line", "pt", "pt", "line"], "line"),          # a tie: the first in the frame
    (["pt", "line", "line", "pt"], "point"),
    (["mbox", "mline", "coll", "coll", "coll"], "polygon"),  # collections do not count; multi-parts do
    ([None, "empty", "ring", "pt"], "line"),         # missing and empty geometries do not count; a ring is a line
    ([None, "empty"], None),
    (["coll"], None),
])
def test_geom_family_from_type_ids_is_the_name_rule(geoms, expected):
    import pandas as pd
    import shapely
    from shapely.geometry import LineString, Polygon, box

    from geoconstraints.output.styles import geom_family

    make = {"pt": Point(0, 0), "box": box(0, 0, 1, 1), "line": LineString([(0, 0), (1, 1)]),
            "mbox": shapely.multipolygons([box(0, 0, 1, 1)]), "mline": shapely.multilinestrings([LineString([(0, 0), (1, 0)])]),
            "coll": shapely.geometrycollections([Point(1, 1), box(0, 0, 1, 1)]), "empty": Polygon(),
            "ring": shapely.linearrings([(0, 0), (1, 0), (1, 1)]), None: None}
    gdf = gpd.GeoDataFrame({"a": range(len(geoms))}, geometry=[make[g] for g in geoms])
    assert geom_family(gdf) == expected == _family_by_names(gdf)
    assert geom_family(gdf.iloc[:0]) is None and geom_family(pd.DataFrame({"a": [1]})) is None
