"""map.html: offline (Leaflet inlined, no web URL), layers by kind and status, escaped text, fitted view."""

from __future__ import annotations

import copy
import re

import folium
import pytest
from browser_util import XSS_ID, make_synthetic_result
from pyproj import Transformer

from geoconstraints.output import explore, styles, webmap
from geoconstraints.output.webmap import build_map, external_resources, leaflet_assets, write_map


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return make_synthetic_result(tmp_path_factory.mktemp("webmap") / "inputs")


@pytest.fixture(scope="module")
def page(result, tmp_path_factory) -> str:
    target = tmp_path_factory.mktemp("map") / "map.html"
    assert write_map(result, target) == target
    return target.read_text("utf-8")


def test_offline_map_has_no_web_resources(page):
    assert external_resources(page) == []
    assert "cdn.jsdelivr.net" not in page and "code.jquery.com" not in page
    assert "Leaflet 1.9.4" in page  # inlined from the package assets
    assert "url(images/" not in page  # Leaflet's control images inlined as data URIs
    assert "tile.openstreetmap" not in page


def test_online_map_keeps_cdn_links(result, tmp_path):
    online = write_map(result, tmp_path / "map.html", offline=False).read_text("utf-8")
    assert any("leaflet" in t for t in external_resources(online))


def test_external_resources_detects_links():
    assert external_resources('<script src="https://x/y.js"></script>') != []
    assert external_resources("<link rel='stylesheet' href='//x/y.css'>") != []
    assert external_resources('<link rel="icon" href="data:,"><script src="map_files/l.js"></script>') == []


def test_folium_class_defaults_untouched(result):
    before = list(folium.Map.default_js)
    build_map(result, offline=True)
    assert folium.Map.default_js == before  # offline drops links on the instance only


def test_layers_by_kind_and_status(page):
    names = set(re.findall(r'"((?:Findings|Flood zone|Input|Buffer|Steep|Water|Contours)[^"]*)"', page))
    # the counts are the report's: every finding of a status (FLD-010's information has no place)
    for expected in ("Findings: violation (2)", "Findings: needs review (1)", "Findings: pass (1)",
                     "Findings: information (3)", "Findings: not evaluated (1)",
                     "Flood zone AE (1)", "Flood zone X (0.2% annual chance) (1)", "Input: parcels (4)",
                     "Buffer strips (1)", "Steep grade runs (1)", "Water bars (2)", "Contours (10 ft) (3)"):
        assert expected in names, (expected, sorted(names))


def test_map_text_is_escaped(page):
    # the id is inside JSON only, with < and > as \\u003c / \\u003e: no tag can open
    assert XSS_ID not in page
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in page
    assert "<b>bold</b>" not in page
    # popups are built with textContent, never innerHTML
    assert "textContent = String(v)" in page
    assert "innerHTML" not in page.replace(leaflet_assets()["js"], "")


def test_popup_fields_carry_rule_citation_and_values(result):
    props = webmap.finding_properties(result.findings)
    row = props[props["rule_id"] == "HRV-010"].iloc[0]
    assert row["measured_text"] == "261 ft" and row["threshold_text"] == "200 ft"
    assert row["citation"] == result.rulebook["HRV-010"].citation
    assert [f for f, _ in webmap.FINDING_POPUP][:2] == ["rule_id", "title"]


def test_map_is_fitted_to_the_data(result, page):
    m = re.search(r"map_[0-9a-f]+\.fitBounds\(\s*\[\[([-\d.]+),\s*([-\d.]+)\],\s*\[([-\d.]+),\s*([-\d.]+)\]\]", page)
    assert m, "no fitBounds call"
    s, w, n, e = map(float, m.groups())
    # a screening is framed on the parcels and the findings: the four parcels span
    # x 964,000..964,800 and y 760,000..760,200 ft (EPSG:2261); the grade-run finding reaches
    # y 760,438.3; pyproj gives those corners in degrees independently
    t = Transformer.from_crs(2261, 4326, always_xy=True)
    lon0, lat0 = t.transform(964_000.0, 760_000.0)
    lon1, lat1 = t.transform(964_800.0, 760_438.3)
    tol = 1e-5  # about 3 ft
    assert w <= lon0 + tol and e >= lon1 - tol and s <= lat0 + tol and n >= lat1 - tol
    assert (e - w) < 0.01 and (n - s) < 0.01  # not the whole world (0.01 degree ~ 0.5 mile)


def test_explore_returns_a_folium_map(result):
    m = explore(result)
    assert isinstance(m, folium.Map)
    assert external_resources(m.get_root().render()) == []


def test_large_context_layer_is_cut_to_the_area(result):
    # a flood zone far away (10 miles east) is left out of the map
    import geopandas as gpd
    from shapely.geometry import box

    fz = result.layers.frames["flood_zones"]
    far = gpd.GeoDataFrame(fz.iloc[[0]].copy(), geometry=[box(1_017_000, 760_000, 1_018_000, 761_000)],
                           crs=fz.crs)
    far["feature_id"] = "FAR"
    far["FLD_ZONE"] = "VE"
    result.layers.frames["flood_zones"] = gpd.pd.concat([fz, far], ignore_index=True)
    try:
        html = build_map(result).get_root().render()
    finally:
        result.layers.frames["flood_zones"] = fz
    assert "Flood zone VE" not in html and '"FAR"' not in html


def test_encroachment_area_is_drawn_apart_from_plain_ae(tmp_path):
    # E-1 lies in an AE polygon whose ZONE_SUBTY is STATE ENCROACHMENT AREA: FLD-002 says "floodway not
    # determined". Before, map.html drew that polygon as plain "Flood zone AE" (one layer with the floodway's and
    # E-3's polygons), no legend entry, nothing on the feature, and no layer of the parcel's part in it
    import json

    from browser_util import make_encroachment_result

    result = make_encroachment_result(tmp_path / "inputs")
    f = result.findings
    assert f.loc[(f["rule_id"] == "FLD-002") & (f["subject_id"] == "E-1"), "status"].tolist() == ["not_evaluated"]
    page = build_map(result).get_root().render()
    label = "Flood zone AE: floodway-like area (floodway not determined)"
    # the plain AE and, apart, the floodway (before: one layer "Flood zone AE (2)", the floodway unmarked)
    assert f'"{label} (1)"' in page and '"Flood zone AE (1)"' in page
    assert '"Flood zone AE: regulatory floodway (1)"' in page
    items = json.loads(re.search(r"var items = (\[.*?\]), title", page).group(1))
    legend = {i["label"]: i for i in items}
    fw = legend["Flood zone AE: regulatory floodway"]
    assert fw["color"] == styles.LAYER_STYLES["floodway_overlaps"].color and "regulatory floodway" in fw["detail"]
    assert legend[label]["color"] == styles.ENCROACHMENT_COLOR != legend["Flood zone AE"]["color"]
    assert "local administrator" in legend[label]["detail"]
    part = legend["parts in a floodway-like area (floodway not determined)"]  # the parcel's part, as the floodway's
    assert part["color"] == styles.ENCROACHMENT_COLOR and "parts in the floodway" in legend
    # the feature carries the class FLD-002 reads (the rulebook's encroachment_subtypes_contain), so does its popup
    feats = [ft for gj in re.findall(r"geo_json_[0-9a-f]+_add\((\{.*?\})\);", page)
             for ft in json.loads(gj)["features"] if "FLD_ZONE" in ft["properties"]]
    cls = {ft["properties"]["ZONE_SUBTY"]: ft["properties"][webmap.FLOODWAY_CLASS_FIELD] for ft in feats}
    assert cls == {"STATE ENCROACHMENT AREA": styles.ENCROACHMENT_KEY, "FLOODWAY": "floodway", "": ""}


def test_findings_at_the_same_place_are_one_place() -> None:
    import geopandas as gpd
    import numpy as np
    from shapely.geometry import Point, box

    from geoconstraints.output.mapdata import place_keys

    parcel = box(0, 0, 1, 1)
    # the same object twice, an equal copy, and another place: three findings at two places
    geoms = np.array([parcel, parcel, box(0, 0, 1, 1), Point(5, 5)], dtype=object)
    assert place_keys(geoms).tolist() == [0, 0, 0, 1]
    assert place_keys(gpd.GeoSeries([], crs=4326).values).tolist() == []


def test_legend_counts_are_the_reports(result):
    from geoconstraints.output.report import status_counts

    m = build_map(result)
    counts = {s: c.total for s, c in m.gc_counts.items()}
    assert counts == status_counts(result.findings) == result.counts()
    info = m.gc_counts["info"]
    # three information findings: two water bars drawn, FLD-010 run-wide (no place): said in the legend
    assert (info.total, info.places, info.unlocated) == (3, 2, 1)
    page = m.get_root().render()
    assert "information: 3 findings" in page and "1 run-wide, without a place on the map" in page


def test_finding_polygons_are_outlines_parcels_lightly_filled():
    from geoconstraints.output.webmap import finding_styles

    for status in ("violation", "review", "not_evaluated", "info", "pass"):
        st = finding_styles(status)
        assert st["polygon"]["fill"] is False and st["polygon"]["fillOpacity"] == 0.0  # a harvest area: outline
        assert st["line"]["fill"] is False  # a filled polyline would draw a wedge
        assert st["polygon_fill"]["fillOpacity"] <= 0.25  # a parcel: a light tint, never opaque


def test_hillshade_of_the_dem_window_under_the_map():
    """With a DEM the map's background is its hillshade: a PNG in the page, over the DEM cut to the map."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    from geoconstraints.commands import check_harvest
    from geoconstraints.demo import sample_path
    from geoconstraints.io.layers import load_layers
    from geoconstraints.rulebook.loader import load_rulebook

    layers = load_layers(sample_path("vestal_sample.gpkg"), dem=sample_path("dem.tif"), primary=("harvest_area",),
                         roles=("harvest_area", "haul_roads", "streams"))
    res = check_harvest(layers, load_rulebook("vestal"))
    page = build_map(res).get_root().render()
    m = re.search(r'L\.imageOverlay\(\s*"data:image/png;base64,([A-Za-z0-9+/=]+)",\s*'
                  r'\[\[([-\d.]+),\s*([-\d.]+)\],\s*\[([-\d.]+),\s*([-\d.]+)\]\]', page)
    assert m, "no hillshade image overlay"
    img = np.asarray(Image.open(io.BytesIO(base64.b64decode(m.group(1)))).convert("RGBA"))
    s, w, n, e = map(float, m.groups()[1:])
    dem_box = layers.dem.bounds_polygon(4326).bounds  # (west, south, east, north)
    cell = 2e-5  # about one 5-ft cell in degrees, for the warp's rounding
    assert dem_box[0] - cell <= w < e <= dem_box[2] + cell and dem_box[1] - cell <= s < n <= dem_box[3] + cell
    plan = layers["harvest_area"].to_crs(4326).total_bounds
    assert w <= plan[0] and e >= plan[2] and s <= plan[1] and n >= plan[3]  # covers the plan
    alpha = img[..., 3]
    assert (alpha > 0).mean() > 0.5  # shaded over most of it (flat ground stays clear)
    dark, light = img[..., 0] == 0, img[..., 0] == 255
    assert (dark & (alpha > 0)).any() and (light & (alpha > 0)).any()  # shadows and sunlit slopes
    assert "Contours (10 ft)" in page and "hillshade of the DEM" in page


def test_raw_element_writes_its_text_as_it_is():
    # a payload is not a Jinja template: braces, a Jinja comment opener and a trailing newline stay
    text = '<script type="application/json">{"a": "{{ x }} {% if %} {# c"}</script>\n'
    m = folium.Map()
    m.get_root().html.add_child(webmap.raw_element(text), name="raw")
    assert text in m.get_root().render()


def _render_geojson(cls: type, data: dict) -> str:
    m = folium.Map(tiles=None)
    cls(copy.deepcopy(data), name="layer", style_function=lambda _f: {"color": "#123456"}).add_to(m)
    return re.sub(r"[0-9a-f]{32}", "ID", m.get_root().render())


def test_raw_scripts_render_as_branca_and_never_read_data_as_jinja():
    feature = {"type": "Feature", "properties": {"name": "A\r\nB"},
               "geometry": {"type": "Point", "coordinates": [-76.05, 42.08]}}
    data = {"type": "FeatureCollection", "features": [feature]}
    # the same page as folium's own GeoJson (whose script Jinja re-reads), a line break in the data included
    assert _render_geojson(webmap.raw_scripts(folium.GeoJson), data) == _render_geojson(folium.GeoJson, data)
    # attribute text with Jinja syntax is data: folium's own class evaluated "{{ 7*7 }}" (it wrote "49") and failed on "{#"
    feature["properties"]["name"] = "{{ 7*7 }} {# x"
    raw = _render_geojson(webmap.raw_scripts(folium.GeoJson), data)
    assert '"{{ 7*7 }} {# x"' in raw and '"49' not in raw
    assert webmap.raw_scripts(folium.GeoJson) is webmap.raw_scripts(folium.GeoJson)  # one class per base


def test_left_out_parcels_note_says_where_pass_and_info_are():
    import geopandas as gpd
    from shapely.geometry import box

    parcels = gpd.GeoDataFrame(geometry=[box(i, 0, i + 1, 1) for i in range(3)], crs="EPSG:2261")
    every = webmap.plan_layers([("input", "parcels", parcels)], 2).note()
    assert "3 input parcels (each is drawn by its findings)" in every and "every finding is in findings.geojson" in every
    person = webmap.plan_layers([("input", "parcels", parcels)], 2, scoped=True).note()
    assert "3 input parcels (those with a finding that needs a person are drawn by it)" in person
    assert "each parcel's outcome (worst_status, status_<rule>) in parcels.csv" in person
    assert "every finding is in" not in person  # findings.geojson holds those that need a person only
