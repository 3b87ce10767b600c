"""Tests for geoconstraints.output.field: KML and GPX for field crews, parsed back with xml.etree."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
import shapely
from pyproj import Transformer

import geoconstraints as gc
from geoconstraints.commands import check_harvest
from geoconstraints.output import field

KML = "{http://www.opengis.net/kml/2.2}"
GPX = "{http://www.topografix.com/GPX/1/1}"


@pytest.fixture(scope="module")
def result(sample_harvest):
    return sample_harvest


@pytest.fixture(scope="module")
def written(result, tmp_path_factory):
    return field.write_field_files(result, tmp_path_factory.mktemp("field"))


def expected(result) -> dict[str, dict[str, tuple[float, float]]]:
    """Kind -> name -> (lon, lat), from the Result's geometries transformed here with pyproj."""
    to_wgs = Transformer.from_crs(result.crs, "EPSG:4326", always_xy=True)
    out: dict[str, dict[str, tuple[float, float]]] = {}
    lan = result.layers.get_layer("landings")
    pts = shapely.point_on_surface(lan.geometry.values)
    out["landing"] = {i: to_wgs.transform(p.x, p.y) for i, p in zip(lan["feature_id"].astype(str), pts)}
    wb = result.derived["water_bars"].sort_values(["road_id", "dist_ft"])
    seq = wb.groupby("road_id").cumcount() + 1
    out["water_bar"] = {f"WB {r}-{n:02d}": to_wgs.transform(p.x, p.y)
                        for r, n, p in zip(wb["road_id"], seq, wb.geometry.values)}
    f = result.findings
    x = f[(f["rule_id"] == "HRV-013") & (f.geometry.geom_type == "Point")]
    out["stream_crossing"] = {f"X {s}": to_wgs.transform(p.x, p.y) for s, p in zip(x["subject_id"], x.geometry.values)}
    return out


def test_kml_parses_with_the_results_counts_names_and_places(written, result):
    root = ET.parse(written["field.kml"]).getroot()
    folders = {f.findtext(f"{KML}name"): f for f in root.iter(f"{KML}Folder")}
    want = expected(result)
    assert {k: len(v) for k, v in want.items()} == {"landing": 3, "water_bar": 20, "stream_crossing": 3}
    for kind, folder_name in field.KINDS.items():
        pms = folders[folder_name].findall(f"{KML}Placemark")
        assert len(pms) == len(want[kind])
        for pm in pms:
            name = pm.findtext(f"{KML}name")
            lon, lat = (float(v) for v in pm.findtext(f"{KML}Point/{KML}coordinates").split(","))
            assert (lon, lat) == pytest.approx(want[kind][name], abs=1e-6)


def test_kml_descriptions_carry_rule_and_status(written):
    root = ET.parse(written["field.kml"]).getroot()
    pms = {pm.findtext(f"{KML}name"): pm for pm in root.iter(f"{KML}Placemark")}
    l2 = pms["L-2"]
    assert "HRV-024 violation" in l2.findtext(f"{KML}description")
    assert l2.findtext(f"{KML}styleUrl") == "#status-violation"
    data = {d.get("name"): d.findtext(f"{KML}value") for d in l2.iter(f"{KML}Data")}
    assert data["status"] == "violation" and "HRV-024" in data["rules"]
    x = pms["X H-2"]
    assert x.findtext(f"{KML}description").startswith("HRV-013 review: haul_roads H-2: stream crossing")
    assert pms["WB H-1-01"].findtext(f"{KML}description").startswith("HRV-030 info: water bar on haul road H-1")


def test_gpx_parses_with_the_same_waypoints(written, result):
    root = ET.parse(written["field.gpx"]).getroot()
    wpts = root.findall(f"{GPX}wpt")
    want = {n: ll for names in expected(result).values() for n, ll in names.items()}
    assert len(wpts) == len(want) == 26
    for w in wpts:
        name = w.findtext(f"{GPX}name")
        assert (float(w.get("lon")), float(w.get("lat"))) == pytest.approx(want[name], abs=1e-6)
        assert w.findtext(f"{GPX}desc")
    types = [w.findtext(f"{GPX}type") for w in wpts]
    assert types.count("landing") == 3 and types.count("stream_crossing") == 3


def test_text_is_escaped(result, tmp_path):
    layers = result.layers
    saved = layers.frames["landings"]
    try:
        layers.frames["landings"] = saved.assign(feature_id=["L<1>&\"x\"", "L-2", "L-3"])
        out = field.write_field_files(result, tmp_path)
    finally:
        layers.frames["landings"] = saved
    names = [pm.findtext(f"{KML}name") for pm in ET.parse(out["field.kml"]).getroot().iter(f"{KML}Placemark")]
    assert 'L<1>&"x"' in names
    gpx = [w.findtext(f"{GPX}name") for w in ET.parse(out["field.gpx"]).getroot().findall(f"{GPX}wpt")]
    assert 'L<1>&"x"' in gpx


def test_plan_without_field_points(tmp_path):
    layers = gc.load_layers(gc.sample_path("vestal_sample.gpkg"), overrides={})
    for role in ("landings", "haul_roads", "skid_trails"):
        layers.frames.pop(role, None)
    res = check_harvest(layers, gc.load_rulebook("vestal"))
    out = field.write_field_files(res, tmp_path)
    assert not list(ET.parse(out["field.kml"]).getroot().iter(f"{KML}Placemark"))
    assert not ET.parse(out["field.gpx"]).getroot().findall(f"{GPX}wpt")


def test_field_points_frame(result):
    pts = field.field_points(result)
    assert pts.crs.to_epsg() == 4326
    assert list(pts["kind"].unique()) == ["landing", "water_bar", "stream_crossing"]
    assert np.all(pts.geometry.geom_type == "Point")
