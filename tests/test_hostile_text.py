"""Hostile text from county files, rulebooks and options in every output; database passwords never shown.

The sample town is copied with its ids, names, owners and stream / road names replaced by markup,
template syntax, XML breakers, control characters, a right-to-left override and path tricks, and
checked with a rulebook whose titles and messages carry markup too. Every output is parsed back:
report.html and map.html with an HTML parser (no injected element or event attribute, no script
broken out of, the text kept as text), field.kml / field.gpx and the GeoPackage's QGIS styles with
an XML parser, the PDFs with pypdf; the file names built from ids stay inside the output folder.
A bidirectional override or zero-width space in an id is shown as ``<U+202E>`` wherever a person reads
it (report, PDFs, map data, field files, CLI messages) and kept byte for byte in the data files.
A PostGIS password (in the URL, in ``?password=``, in ``PGPASSWORD``) reaches no message, log line,
traceback or file, also when the connection fails or when the password holds ``/``, ``?`` or ``#``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import traceback
import uuid
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import geopandas as gpd
import pandas as pd
import pyogrio
import pypdf
import pytest
import yaml
from shapely.geometry import Point, box

import geoconstraints as gc
from geoconstraints.cli import main
from geoconstraints.errors import InputError, OutputError
from geoconstraints.io.postgis import parse_db_source
from geoconstraints.output import field, styles, webmap
from geoconstraints.output.database import parse_db_target
from geoconstraints.output.files import distinct_file_parts
from geoconstraints.rulebook.loader import BoundedLoader

KML = "{http://www.opengis.net/kml/2.2}"
GPX = "{http://www.topografix.com/GPX/1/1}"

CONTROL = "a\x01b\x1bc\x0bd\x7fe\x08\ufffe"
"""Characters XML 1.0 forbids (and DEL): a KML or QML holding one raw is not well-formed."""

HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "</script><script>alert(2)</script>",
           "{{ 7*7 }}", "${x}", "]]>", "&amp;", CONTROL, "\u202eevil", "line1\nline2\r\n", "javascript:alert(3)",
           "</style><style>*{}</style>", '<!DOCTYPE x [<!ENTITY e "boom">]>&e;', "<!--<script>", "'\"<>&",
           "{subject_id}{0}", "=HYPERLINK(\"http://x\")", "../../etc/x", "/etc/passwd", "CON"]
"""Attribute values (suffixed ``#N`` to stay distinct)."""

PATH_IDS = ["../../etc/x", "/etc/passwd", "CON"]
"""Haul road ids: profile plots are named after them."""

SKID_IDS = ["x" * 300, "<script>alert(1)</script>", CONTROL, "\u202eevil\nline"]
"""Skid trail ids: a long one, markup, control characters, an RTL override with a line break."""

RB_PREFIX = '<script>alert("rb")</script>"><img src=x onerror=alert(9)></style>]]>&amp;\u202e{{ 7*7 }} '
"""Put before every title, summary, message and note of the hostile rulebook."""

BIDI_ID, BIDI_SHOWN = "P1\u202egnp.exe", "P1<U+202E>gnp.exe"
"""An id with a right-to-left override (displayed raw it reads ``P1exe.png``), and how it is shown."""
ZW_ID, ZW_SHOWN = "P\u200b1&", "P<U+200B>1&"
"""An id with a zero-width space (displayed raw it looks like ``P1&``), and how it is shown."""
HIDDEN = ("\u202e", "\u200b")

APPLICANT = "<script>alert(7)</script>\u202e\x01\x1b&amp; ]]> {{ 7*7 }}"
DISTRICT = "<script>alert(8)</script>\u202e\x01"

KEEP = {"FLD_ZONE", "SFHA_TF", "V_DATUM", "LEN_UNIT", "ZONE_SUBTY", "kind", "use", "phase", "constructed",
        "zoning", "district", "start", "stabilized", "EFF_DATE", "landing_id", "road_id", "parcel_id"}
"""Text columns the checks read as codes or dates: left as they are (``parcel_id`` of parcels excepted)."""


def hostile_town(folder: Path) -> Path:
    """The sample town with hostile text, in a GeoPackage whose own name holds markup."""
    src = gc.sample_path("vestal_sample.gpkg")
    target = folder / 'town <b>&"x.gpkg'
    for name, _ in pyogrio.list_layers(src):
        gdf = gpd.read_file(src, layer=name)
        if name == "parcels":
            gdf = gdf.head(60)
        for col in gdf.columns:
            if col == "geometry" or not pd.api.types.is_string_dtype(gdf[col]):
                continue
            if col in KEEP and not (name == "parcels" and col == "parcel_id"):
                continue
            gdf[col] = [None if v is None else f"{HOSTILE[i % len(HOSTILE)]}#{i}" for i, v in enumerate(gdf[col])]
        if name == "haul_roads":
            gdf["id"] = PATH_IDS
        if name == "skid_trails":
            gdf["id"] = SKID_IDS
        if name in ("parcels", "landings"):  # the last rows: their patterns are on earlier rows too (parcels)
            gdf.loc[gdf.index[-2:], "parcel_id" if name == "parcels" else "id"] = [BIDI_ID, ZW_ID]
        if "name" in gdf.columns and len(gdf):
            gdf.loc[0, "name"] = "<b>long</b>" + "y" * 100_000
        gdf.to_file(target, layer=name, driver="GPKG", engine="pyogrio")
    return target


def hostile_rulebook(folder: Path) -> Path:
    rb = yaml.safe_load((Path(gc.__file__).parent / "rulebook" / "vestal.yaml").read_text("utf-8"))
    rb["title"] = RB_PREFIX + rb["title"]
    for r in rb["rules"]:
        for key in ("title", "summary", "notes"):
            if key in r:
                r[key] = RB_PREFIX + r[key]
        r["messages"] = {k: RB_PREFIX + v for k, v in r["messages"].items()}
    target = folder / "hostile <i>rulebook&.yaml"
    target.write_text(yaml.safe_dump(rb, allow_unicode=True, sort_keys=False), "utf-8")
    return target


# ------------------------------------------------------------------------------------------
# parsing the outputs back


class _Dom(HTMLParser):
    """What a browser would build: injected elements and attributes, script and style texts, text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.injected: list[str] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self.attr_text: list[str] = []
        self._raw: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for k, v in attrs:
            if k.startswith("on"):
                self.injected.append(f"<{tag} {k}={v!r}>")
            if k in ("href", "src") and (v or "").strip().lower().startswith("javascript:"):
                self.injected.append(f"<{tag} {k}={v!r}>")
            self.attr_text.append(v or "")
        if tag == "img" and dict(attrs).get("src") == "x":
            self.injected.append("<img src=x>")
        if tag in ("script", "style"):
            self._raw = [tag, ""]  # type: ignore[list-item]

    def handle_endtag(self, tag: str) -> None:
        if self._raw is not None and tag == self._raw[0]:
            (self.scripts if tag == "script" else self.styles).append(self._raw[1])
            self._raw = None

    def handle_data(self, data: str) -> None:
        if self._raw is not None:
            self._raw[1] += data
        else:
            self.text.append(data)


def parse_html(path: Path) -> _Dom:
    """``path`` parsed, asserting that no hostile text became markup."""
    page = path.read_text("utf-8")
    dom = _Dom()
    dom.feed(page)
    dom.close()
    assert dom.injected == [], (path.name, dom.injected[:5])
    for s in dom.scripts:
        # a '</script>' left unescaped ends the script early: what follows becomes a script of its own
        assert not re.match(r"\s*alert\(", s), (path.name, s[:80])
        # '<!--' in a script puts the HTML parser in its escaped states ('</script>' may no longer end it)
        assert "<!--" not in s, (path.name, s[max(0, s.find("<!--") - 40):][:120])
    assert not any("*{}" in s for s in dom.styles), path.name
    for raw in ("<script>alert", "<img src=x", "</style><style>"):
        assert raw not in page, (path.name, page[max(0, page.find(raw) - 60):][:120])
    return dom


def _xml(data: bytes | str) -> ET.Element:
    return ET.fromstring(data)


# ------------------------------------------------------------------------------------------
# the runs


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    return hostile_town(folder), hostile_rulebook(folder)


@pytest.fixture(scope="module")
def harvest_out(inputs, tmp_path_factory):
    from click.testing import CliRunner

    town, rb = inputs
    out = tmp_path_factory.mktemp("harvest") / "out"
    res = CliRunner().invoke(main, ["harvest", str(town), "--dem", str(gc.sample_path("dem.tif")),
                                    "--rulebook", str(rb), "--out", str(out)])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    return out


@pytest.fixture(scope="module")
def screen_out(inputs, tmp_path_factory):
    from click.testing import CliRunner

    town, rb = inputs
    out = tmp_path_factory.mktemp("screen") / "out"
    res = CliRunner().invoke(main, ["screen", str(town), "--rulebook", str(rb), "--findings", "all",
                                    "--parcel", f"{HOSTILE[0]}#0", "--out", str(out)])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    return out


def test_report_and_map_of_a_harvest_hold_the_text_as_text(harvest_out):
    report = parse_html(harvest_out / "report.html")
    text = "".join(report.text)
    assert "<script>alert(1)</script>" in text  # shown, escaped: not dropped
    assert '<script>alert("rb")</script>' in text and "{{ 7*7 }}" in text and "${x}" in text
    assert "town <b>&\"x.gpkg" in text  # the input file name
    parse_html(harvest_out / "map.html")


def test_report_map_and_handout_of_a_screen(screen_out):
    handouts = sorted(screen_out.glob("report_parcel_*.html"))
    assert len(handouts) == 1 and handouts[0].parent == screen_out
    for page in (screen_out / "report.html", screen_out / "map.html", handouts[0]):
        parse_html(page)
    assert "<script>alert(1)</script>#0" in "".join(parse_html(handouts[0]).text)


def test_map_data_keeps_the_text_in_its_json(screen_out):
    page = (screen_out / "map.html").read_text("utf-8")
    # the attribute text is in the page's data, with '<' escaped so that no '</script>' ends it
    assert r"\u003c/script\u003e\u003cscript\u003ealert(2)" in page
    assert r"\u003c!--\u003cscript\u003e" in page


def test_field_files_are_well_formed_with_the_text_round_tripped(harvest_out):
    kml = _xml((harvest_out / "field.kml").read_bytes())  # before: control characters written raw
    names = [pm.findtext(f"{KML}name") for pm in kml.iter(f"{KML}Placemark")]
    descs = " ".join(pm.findtext(f"{KML}description") or "" for pm in kml.iter(f"{KML}Placemark"))
    assert "X <script>alert(1)</script>" in names
    # names are read by a person: control characters shown visibly (text.visible_text), U+FFFE as U+FFFD
    assert "X a<U+0001>b<U+001B>c<U+000B>d<U+007F>e<U+0008>\ufffd" in names
    assert '<script>alert("rb")</script>' in descs and "]]>" in descs
    gpx = _xml((harvest_out / "field.gpx").read_bytes())
    gpx_names = [w.findtext(f"{GPX}name") for w in gpx.findall(f"{GPX}wpt")]
    assert set(names) == set(gpx_names)  # the same names in both files


def test_kml_and_gpx_of_control_characters_and_nul(tmp_path):
    pts = gpd.GeoDataFrame({"kind": ["landing", "water_bar"], "name": ["L\x00-1\x01", "WB <&]]>\x1b"],
                            "status": ["violation", "pass"], "rules": ["HRV-001", "HRV-030"],
                            "description": ["x\x0c\x00y \ufffe\uffff", "]]></description><x>"]},
                           geometry=[Point(-76.05, 42.08), Point(-76.06, 42.09)], crs="EPSG:4326")
    kml = _xml(field.kml_document(pts, "title \x00<&>"))
    names = [pm.findtext(f"{KML}name") for pm in kml.iter(f"{KML}Placemark")]
    # shown to a person: the controls visibly (text.visible_text); U+FFFE / U+FFFF, which XML forbids, as U+FFFD
    assert names == ["L<U+0000>-1<U+0001>", "WB <&]]><U+001B>"]
    assert kml.find(f"{KML}Document/{KML}name").text == "title <U+0000><&>"
    descs = [pm.findtext(f"{KML}description") for pm in kml.iter(f"{KML}Placemark")]
    assert descs == ["x<U+000C><U+0000>y \ufffd\ufffd", "]]></description><x>"]
    gpx = _xml(field.write_gpx(pts, tmp_path / "f.gpx").read_bytes())
    assert [w.findtext(f"{GPX}name") for w in gpx.findall(f"{GPX}wpt")] == names


def test_qgis_styles_of_hostile_zone_values_and_field_names_are_well_formed():
    df = gpd.GeoDataFrame({"FLD_ZONE": ["A\x01<b>&]]>", "AE"], "co\x02l<x>\"": [1, 2]},
                          geometry=[box(0, 0, 1, 1)] * 2, crs="EPSG:2261")
    qml = styles.qml_for("lay\x03er<&>", df)
    root = _xml(qml.split("\n", 1)[1])  # before: not well-formed (raw control characters)
    assert "A\ufffd<b>&]]>" in {c.get("value") for c in root.iter("category")}
    assert "co\ufffdl<x>\"" in {a.get("field") for a in root.iter("alias")}
    sld = _xml(styles.sld_for("lay\x03er<&>", df))
    assert any(e.text == "lay\ufffder<&>" for e in sld.iter() if e.tag.endswith("}Name"))


def test_geopackage_styles_parse(harvest_out, screen_out):
    for gpkg in (harvest_out / "results.gpkg", screen_out / "results.gpkg"):
        with sqlite3.connect(gpkg) as con:
            rows = con.execute("SELECT f_table_name, styleQML, styleSLD FROM layer_styles").fetchall()
        assert rows
        for _, qml, sld in rows:
            _xml(qml.split("\n", 1)[1])
            if sld:  # a table without geometry has a QML (field aliases) only
                _xml(sld)


def test_csv_cells_are_not_formulas(screen_out):
    parcels = (screen_out / "parcels.csv").read_text("utf-8")
    assert "'=HYPERLINK(" in parcels
    assert not re.search(r'(^|,)"?=HYPERLINK', parcels, re.MULTILINE)


def test_pdfs_draw_control_characters_and_rtl(harvest_out, screen_out):
    for pdf in (harvest_out / "report.pdf", screen_out / "report.pdf"):
        reader = pypdf.PdfReader(pdf)
        assert len(reader.pages) >= 1
    text = "".join(p.extract_text() or "" for p in pypdf.PdfReader(screen_out / "report.pdf").pages)
    assert "<script>alert(1)</script>" in text.replace("\x00", "")  # drawn as text


def test_siteplan_with_a_hostile_applicant(inputs, tmp_path, runner):
    town, rb = inputs
    out = tmp_path / "plan"
    res = runner.invoke(main, ["siteplan", str(town), "--dem", str(gc.sample_path("dem.tif")), "--rulebook", str(rb),
                               "--applicant", APPLICANT, "--out", str(out)])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    reader = pypdf.PdfReader(out / "siteplan.pdf")
    assert len(reader.pages) >= 1 and "alert(7)" in (reader.metadata.title or "")
    _xml((out / "field.kml").read_bytes())
    # the labels of the landings and the applicant in the title block: the bidi override and the
    # zero-width space drawn visibly (before: drawn as nothing, the id reversed)
    text = _pdf_text(out / "siteplan.pdf")
    assert BIDI_SHOWN in text and ZW_SHOWN in text and "</script><U+202E>" in text, text[:300]
    assert "<U+202E>" in reader.metadata.title
    _no_hidden(text + reader.metadata.title + res.stdout + res.stderr, "siteplan")


def test_seqr_with_a_hostile_district(inputs, tmp_path, runner):
    _, rb = inputs
    out = tmp_path / "seqr"
    res = runner.invoke(main, ["seqr", "--action-type", "commercial_zone_construction", "--district", DISTRICT,
                               "--rulebook", str(rb), "--out", str(out)])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    report = parse_html(out / "report.html")
    assert "<script>alert(8)</script>" in "".join(report.text)
    parse_html(out / "map.html")
    assert pypdf.PdfReader(out / "report.pdf").pages
    assert "<script>alert(8)</script><U+202E>" in "".join(report.text)  # the district as typed, shown
    for page in ("report.html", "map.html"):
        _no_hidden((out / page).read_text("utf-8"), page)
    _no_hidden(res.stdout + res.stderr + _pdf_text(out / "report.pdf"), "seqr")


# ------------------------------------------------------------------------------------------
# bidirectional controls and zero-width characters: shown visibly wherever a person reads them


def _pdf_text(path: Path) -> str:
    return "".join(p.extract_text() or "" for p in pypdf.PdfReader(path).pages).replace("\x00", "")


def _no_hidden(text: str, where: str) -> None:
    """No bidi override or zero-width space in ``text``, raw or as a JSON / JavaScript escape."""
    for ch in HIDDEN:
        at = text.find(ch)
        assert at < 0, (where, text[max(0, at - 60):at + 60])
    escaped = re.search(r"\\u(202e|200b)", text, re.IGNORECASE)
    assert escaped is None, (where, text[max(0, escaped.start() - 60):escaped.end() + 60])


def test_report_shows_bidi_and_zero_width_ids(screen_out, harvest_out):
    """Before: 'P1\\u202egnp.exe' in report.html as it is (a browser shows 'P1exe.png'), 'P\\u200b1&' as 'P1&'."""
    for out, handouts in ((screen_out, sorted(screen_out.glob("report_parcel_*.html"))), (harvest_out, [])):
        for path in [out / "report.html", *handouts]:
            page = path.read_text("utf-8")
            _no_hidden(page, path.name)  # in the text, in attributes (title=), in the rulebook's own text
        text = "".join(parse_html(out / "report.html").text)
        assert BIDI_SHOWN in text and ZW_SHOWN in text
        page = (out / "report.html").read_text("utf-8")
        assert "P&lt;U+200B&gt;1&amp;" in page and "&amp;lt;U+" not in page  # shown, then escaped once


def test_report_pdf_shows_bidi_and_zero_width_ids(screen_out, harvest_out):
    for out in (screen_out, harvest_out):
        text = _pdf_text(out / "report.pdf")
        assert BIDI_SHOWN in text and ZW_SHOWN in text, out
        _no_hidden(text, f"{out.name}/report.pdf")


def test_map_shows_bidi_and_zero_width_ids(screen_out, harvest_out):
    """The findings' data, the GeoJSON popups' properties and the legend hold the visible form; the
    scripts put them in the DOM with textContent only (nothing re-parsed as HTML)."""
    for out, layer in ((screen_out, "parcels"), (harvest_out, "landings")):
        page = (out / "map.html").read_text("utf-8")
        _no_hidden(page, f"{out.name}/map.html")
        data = json.loads(re.search(r'<script type="application/json" id="gc-findings-data">(\{.*?)</script>',
                                    page, re.DOTALL).group(1))
        assert {BIDI_SHOWN, ZW_SHOWN} <= set(data["place_subject"])
        assert {f"{layer} {BIDI_SHOWN}", f"{layer} {ZW_SHOWN}"} <= set(data["f_subject"])
        props = r'"feature_id": "P1\u003cU+202E\u003egnp.exe"'  # an input layer's popup (folium GeoJSON)
        assert props in page, out
        for popup in ("tr.insertCell().textContent = String(v);", "s.textContent = String("):
            assert popup in page
    js = webmap.findings_js()
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js and "tr.insertCell().textContent" in js


def test_field_files_show_bidi_and_zero_width_ids(harvest_out):
    kml = _xml((harvest_out / "field.kml").read_bytes())
    names = [pm.findtext(f"{KML}name") for pm in kml.iter(f"{KML}Placemark")]
    assert BIDI_SHOWN in names and ZW_SHOWN in names
    _no_hidden((harvest_out / "field.kml").read_text("utf-8"), "field.kml")
    gpx = _xml((harvest_out / "field.gpx").read_bytes())
    assert {BIDI_SHOWN, ZW_SHOWN} <= {w.findtext(f"{GPX}name") for w in gpx.findall(f"{GPX}wpt")}
    _no_hidden((harvest_out / "field.gpx").read_text("utf-8"), "field.gpx")


def test_data_files_keep_bidi_and_zero_width_ids(screen_out, harvest_out):
    """CSV, GeoJSON, GeoPackage and Parquet are data: the ids byte for byte."""
    parcels = pd.read_csv(screen_out / "parcels.csv", dtype=str, keep_default_na=False)
    assert {BIDI_ID, ZW_ID} <= set(parcels["parcel_id"])
    for out, layer in ((screen_out, "parcels"), (harvest_out, "landings")):
        findings = gpd.read_file(out / "findings.geojson")
        assert {BIDI_ID, ZW_ID} <= set(findings.loc[findings["subject_layer"] == layer, "subject_id"])
        assert {BIDI_ID, ZW_ID} <= set(pd.read_parquet(out / "findings.parquet")["subject_id"])
        with sqlite3.connect(out / "results.gpkg") as con:
            ids = {r[0] for r in con.execute("SELECT subject_id FROM findings_polygon UNION "
                                             "SELECT subject_id FROM findings_point UNION "
                                             "SELECT subject_id FROM findings_nogeom")}
        assert {BIDI_ID, ZW_ID} <= ids, out
        assert "<U+" not in (out / "findings.csv").read_text("utf-8")


def test_cli_messages_show_bidi_and_zero_width_characters(runner, tmp_path):
    """An error and a warning name a user's file and an id as read: visibly."""
    res = runner.invoke(main, ["rules", "--rulebook", str(tmp_path / f"{BIDI_ID}{ZW_ID}.yaml")])
    assert res.exit_code == 2 and f"{BIDI_SHOWN}{ZW_SHOWN}.yaml" in res.stderr, res.stderr
    _no_hidden(res.stdout + res.stderr, "rules")
    gpkg = tmp_path / "town.gpkg"
    parcels = gpd.read_file(gc.sample_path("vestal_sample.gpkg"), layer="parcels").head(3)
    parcels["parcel_id"] = [BIDI_ID, BIDI_ID, ZW_ID]  # a duplicate id: a warning names it
    parcels.to_file(gpkg, layer="parcels", driver="GPKG", engine="pyogrio")
    res = runner.invoke(main, ["screen", str(gpkg), "--outputs", "csv", "--out", str(tmp_path / "out")])
    assert BIDI_SHOWN in res.stderr, (res.stdout, res.stderr)
    _no_hidden(res.stdout + res.stderr, "screen")


def test_cli_messages_show_terminal_escapes(runner, tmp_path):
    """An id holding a terminal escape (ESC [2K erases the line, CR returns to its start) is printed
    visibly in a warning: it cannot rewrite or hide what the terminal shows."""
    gpkg = tmp_path / "town.gpkg"
    parcels = gpd.read_file(gc.sample_path("vestal_sample.gpkg"), layer="parcels").head(3)
    sneaky = "P7\x1b[2K\rP1"
    parcels["parcel_id"] = [sneaky, sneaky, "P2"]  # a duplicate id: a warning names it
    parcels.to_file(gpkg, layer="parcels", driver="GPKG", engine="pyogrio")
    res = runner.invoke(main, ["screen", str(gpkg), "--outputs", "csv", "--out", str(tmp_path / "out")])
    assert "P7<U+001B>[2K<U+000D>P1" in res.stderr, (res.stdout, res.stderr)
    assert "\x1b" not in res.stdout + res.stderr and "\r" not in res.stdout + res.stderr


# ------------------------------------------------------------------------------------------
# file names from ids


SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*\.(png|html|pdf)")


def test_plot_and_handout_names_stay_in_the_folder(harvest_out, screen_out):
    plots = sorted((harvest_out / "plots").iterdir())
    assert len(plots) == len(PATH_IDS) + len(SKID_IDS)
    for p in plots + sorted(screen_out.glob("report_parcel_*")):
        assert p.resolve().parent in (harvest_out.resolve() / "plots", screen_out.resolve())
        assert SAFE_NAME.fullmatch(p.name) and len(p.name) < 120, p.name
    assert not (harvest_out.parent / "etc").exists()


@pytest.mark.parametrize("value", ["../../etc/x", "/etc/passwd", "..", ".", "", "CON", "nul", "C:\\Windows",
                                   "a\x00b", "\u202eevil", "x" * 100_000, "..\\..\\x", "~root"])
def test_file_parts_of_hostile_ids(value):
    part = distinct_file_parts([value, value.upper()])[value]
    assert re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]*", part) and not part.endswith(".") and len(part) <= 64
    assert os.sep not in part and part not in (".", "..")


# ------------------------------------------------------------------------------------------
# YAML


@pytest.mark.parametrize("tag", ['!!python/object/apply:os.system ["touch {marker}"]',
                                 "!!python/name:os.system", "!!python/object:builtins.dict {{}}",
                                 '!<tag:yaml.org,2002:python/object/apply:os.system> ["touch {marker}"]'])
def test_rulebook_with_python_tags_is_refused(tmp_path, runner, tag):
    marker = tmp_path / "pwned"
    rb = tmp_path / "evil.yaml"
    rb.write_text(f'rulebook: evil\nversion: "1"\ntitle: {tag.format(marker=marker)}\nrules: []\n', "utf-8")
    res = runner.invoke(main, ["rules", "--rulebook", str(rb)])
    assert res.exit_code == 2 and "Python tags (!!python/...) are never loaded" in res.stderr, res.stderr
    assert not marker.exists()


def test_every_yaml_load_of_the_package_is_safe():
    root = Path(gc.__file__).parent
    loads = []
    for py in root.rglob("*.py"):
        for line in py.read_text("utf-8").splitlines():
            if re.search(r"yaml\.(load|unsafe_load|full_load|load_all)\b|Loader\s*=", line):
                loads.append((py.name, line.strip()))
    assert loads and all("BoundedLoader" in line for _, line in loads), loads
    assert issubclass(BoundedLoader, (yaml.SafeLoader, getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


# ------------------------------------------------------------------------------------------
# database passwords

SECRET = "s3cret-Hostile-7f3a"
"""A password (fixed: test ids name it; no real server accepts it but the trust-auth test cluster)."""


@pytest.mark.parametrize("password", [f"{SECRET}/x", f"{SECRET}#x", f"{SECRET}?x", f"a@{SECRET}/x", f"p?k={SECRET}"])
def test_password_holding_url_delimiters_is_refused_without_being_shown(password):
    """Before: 'user:pw/x@host' put the password's '/x@host' in the database name (and the password in
    every message); 'user:pw#x@host' named host 'user:pw'."""
    for url in (f"postgresql://gis:{password}@db.town.gov:5432/gis?table=town.parcels",
                f"postgres://gis:{password}@db.town.gov/gis?schema=flood"):
        for parse, error in ((parse_db_source, InputError), (parse_db_target, OutputError)):
            try:
                shown = parse(url).redacted
            except (InputError, OutputError) as exc:
                assert isinstance(exc, (error, InputError))
                shown = str(exc)
                assert "%2F" in shown and "PGPASSWORD" in shown
            else:
                pytest.fail(f"{parse.__name__} accepted {url}: {shown}")
            assert SECRET not in shown and "gis:" not in shown, shown


def test_password_in_a_query_value_with_an_at_is_kept_out_of_sight():
    src = parse_db_source(f"postgresql://gis@db.town.gov/gis?table=t&password={SECRET}@x")
    assert src.redacted == "postgresql://gis@db.town.gov/gis?table=t"
    assert f"{SECRET}@x" in src.secrets and SECRET not in repr(src)
    target = parse_db_target(f"postgresql://gis@db.town.gov/gis?schema=s&password={SECRET}@x")
    assert SECRET not in target.redacted + repr(target)


@pytest.mark.parametrize("form", ["userinfo", "query", "encoded"])
def test_failed_connection_shows_no_password(form, runner, tmp_path, caplog, monkeypatch):
    """Nothing listens on port 1: the messages (CLI, --debug traceback, every DEBUG log record of
    every logger, psycopg's too) name host and database only."""
    pw = {"userinfo": SECRET, "query": SECRET, "encoded": SECRET + "%2Fx%40y"}[form]
    url = (f"postgresql://gis@127.0.0.1:1/gis?password={pw}" if form == "query"
           else f"postgresql://gis:{pw}@127.0.0.1:1/gis")
    caplog.set_level(logging.DEBUG)
    sample = str(gc.sample_path("vestal_sample.gpkg"))
    for args in (["screen", sample, "--outputs", "csv", "--out-db", url],
                 ["screen", "--parcels", url + ("&" if "?" in url else "?") + "table=town.parcels", sample]):
        res = runner.invoke(main, ["-vv", *args, "--out", str(tmp_path / uuid.uuid4().hex)])
        assert res.exit_code == 2 and "cannot connect" in res.stderr, (res.stdout, res.stderr)
        debug = runner.invoke(main, ["--debug", *args, "--out", str(tmp_path / uuid.uuid4().hex)])
        assert debug.exception is not None and "cannot connect" in str(debug.exception)
        trace = "".join(traceback.format_exception(debug.exception))
        seen = res.stdout + res.stderr + debug.stdout + debug.stderr + trace + caplog.text
        assert SECRET not in seen, seen[-2000:]
        assert "127.0.0.1:1/gis" in seen
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert SECRET.encode() not in p.read_bytes(), p


def test_out_db_with_password_forms_never_writes_it(tmp_path, runner, caplog, monkeypatch):
    """A real PostGIS (scripts/postgis.sh): a password in the URL, in ?password= and in PGPASSWORD
    appears in no output file, log record, message or table."""
    import psycopg
    from conftest import pg_url

    base = urlsplit(pg_url())
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("PGPASSWORD", SECRET + "-env")
    schemas = [f"gc_hostile_{uuid.uuid4().hex[:6]}" for _ in range(2)]
    user = base.username or "postgres"
    urls = [urlunsplit((base.scheme, f"{user}:{SECRET}-url@{base.hostname}:{base.port}", base.path,
                        f"schema={schemas[0]}", "")),
            urlunsplit((base.scheme, f"{user}@{base.hostname}:{base.port}", base.path,
                        f"schema={schemas[1]}&password={SECRET}-query", ""))]
    try:
        for i, url in enumerate(urls):
            out = tmp_path / f"out{i}"
            res = runner.invoke(main, ["-vv", "screen", str(gc.sample_path("vestal_sample.gpkg")), "--out", str(out),
                                       "--outputs", "csv,report,map", "--out-db", url])
            assert res.exit_code == 0, (res.stdout, res.stderr)
            # ... and reading back a table of it, the password in the URL
            read = urlunsplit((base.scheme, f"{user}:{SECRET}-read@{base.hostname}:{base.port}", base.path,
                               f"table={schemas[i]}.parcels", ""))
            res2 = runner.invoke(main, ["-vv", "screen", "--parcels", read, "--out", str(tmp_path / f"read{i}"),
                                        "--outputs", "csv,report,map"])
            assert res2.exit_code == 0, (res2.stdout, res2.stderr)
            assert SECRET not in res.stdout + res.stderr + res2.stdout + res2.stderr + caplog.text
        for p in tmp_path.rglob("*"):
            if p.is_file():
                data = p.read_bytes()
                assert SECRET.encode() not in data and SECRET.encode("utf-16-le") not in data, p
        with psycopg.connect(pg_url()) as conn:
            for schema in schemas:
                for (table,) in conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                                             [schema]).fetchall():
                    rows = conn.execute(f'SELECT t::text FROM "{schema}"."{table}" t').fetchall()
                    assert not any(SECRET in r[0] for r in rows), (schema, table)
    finally:
        with psycopg.connect(pg_url(), autocommit=True) as conn:
            for schema in schemas:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
