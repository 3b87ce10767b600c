"""A county-sized screening (100,000 parcels): map.html draws every flagged parcel, and the report
is a summary (totals, the most severe parcels, the SFHA share histogram, the overview map).

The county is benchmarks/bench_screen_postgis.py's synthetic town (three meandering rivers with
AE zones and floodways, one X zone over all), built once for this module (about a minute with
the screening). The map is opened in Debian's headless chromium from a local http.server (no
network): a review parcel on the last (northern) river must be on the canvas, the page must log
no error, and its size and load time are recorded (``-s`` prints them).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest
from browser_util import find_browser, make_driver, serve

from geoconstraints.commands import screen_parcels
from geoconstraints.io.layers import load_layers
from geoconstraints.output import report, webmap
from geoconstraints.output.styles import STATUS_COLORS
from geoconstraints.rulebook.loader import load_rulebook

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_screen_postgis import make_town

N = 100_000
MAP_MAX_MB = 30.0
"""map.html of N parcels (measured 23.9 MB: 156,318 places, 500,000 findings)."""

LOAD_MAX_S = 60.0
"""Opening map.html in headless chromium on the 2-core test machine (measured about 5-8 s)."""


@pytest.fixture(scope="module")
def county(tmp_path_factory):
    folder = tmp_path_factory.mktemp("county")
    parcels, flood = make_town(N)
    gpkg = folder / "county.gpkg"
    parcels.to_file(gpkg, layer="parcels", driver="GPKG")
    flood.to_file(gpkg, layer="flood_zones", driver="GPKG")
    res = screen_parcels(load_layers(gpkg), load_rulebook("vestal"))
    out = folder / "out"
    out.mkdir()
    t0 = time.perf_counter()
    m = webmap.build_map(res)
    (out / "map.html").write_text(m.get_root().render(), encoding="utf-8")
    print(f"\ncounty map.html: {(out / 'map.html').stat().st_size / 1e6:.1f} MB written in "
          f"{time.perf_counter() - t0:.1f} s")
    return res, m, out


def test_county_map_counts_every_finding_and_leaves_none_out(county):
    res, m, out = county
    size_mb = (out / "map.html").stat().st_size / 1e6
    assert size_mb < MAP_MAX_MB
    assert {s: c.total for s, c in m.gc_counts.items()} == res.counts()
    assert not any(d["layer"].startswith("findings") for d in m.gc_left_out)
    review = m.gc_counts["review"]
    assert review.total > 50_000 and review.places > 0 and review.under == 0


def _last_river_review_parcel(res) -> tuple[str, float]:
    """The review parcel farthest north: on the third (last) river of the town."""
    f = res.findings
    rev = f[(f["status"] == "review") & (f["subject_layer"] == "parcels")]
    y = rev.geometry.centroid.y.to_numpy()
    k = int(y.argmax())
    return str(rev["subject_id"].iloc[k]), float(y[k])


def _hex(c: str) -> list[int]:
    return [int(c[i:i + 2], 16) for i in (1, 3, 5)]


PIXEL_JS = """
var name = arguments[0], map = window[name], r = window.gcTestRenderer, c = r._container;
var p = map.latLngToLayerPoint(window.gcTestCenter).subtract(r._bounds.min);
var k = window.devicePixelRatio || 1;
var d = c.getContext("2d").getImageData(Math.round(p.x * k), Math.round(p.y * k), 1, 1).data;
return [d[0], d[1], d[2], d[3]];
"""


def test_flagged_parcel_on_the_last_river_is_drawn(county, tmp_path):
    res, _, out = county
    find_browser()
    pid, y = _last_river_review_parcel(res)
    assert y > 740_000.0 + 2 * 317 * 100 / 3  # north of the second river: the third (last) one
    driver = make_driver(tmp_path / "profile")
    driver.set_page_load_timeout(180)
    try:
        with serve(out) as url:
            t0 = time.perf_counter()
            driver.get(url + "/map.html")
            driver.execute_async_script(
                "var done = arguments[0]; requestAnimationFrame(function () { requestAnimationFrame(done); });")
            load_s = time.perf_counter() - t0
            print(f"\ncounty map.html opened and drawn in {load_s:.1f} s; findings.js timings "
                  f"{driver.execute_script('return gcFindings.timings;')}")
            assert load_s < LOAD_MAX_S
            name = driver.execute_script(
                "return Object.keys(window).filter(function (k) { return k.indexOf('map_') === 0 && "
                "window[k] instanceof L.Map; })[0];")
            shape = driver.execute_script(f"""
var map = window['{name}'], places = gcFindings.placesOf('parcels {pid}'), found = null;
gcFindings.layers.forEach(function (l) {{
  if (l.gcStatus !== 1) {{ return; }}
  places.forEach(function (i) {{ if (!found) {{ found = l.gcShapes(i)[0] || null; }} }});
}});
if (found && map.hasLayer(found)) {{
  map.fitBounds(found.getBounds(), {{maxZoom: 19}}); window.gcTestCenter = found.getCenter();
  window.gcTestRenderer = map.getRenderer(found); return true; }}
return false;""")
            assert shape, f"review parcel {pid} on the last river is not on the map"
            time.sleep(1.0)  # let the canvas redraw at the new view
            on = driver.execute_script(PIXEL_JS, name)
            driver.execute_script(f"gcFindings.layers.forEach(function (l) {{ if (l.gcStatus === 1) "
                                  f"{{ window['{name}'].removeLayer(l); }} }});")
            time.sleep(1.0)
            off = driver.execute_script(PIXEL_JS, name)
            review = _hex(STATUS_COLORS["review"])
            dist = [sum((a - b) ** 2 for a, b in zip(px[:3], review)) for px in (on, off)]
            assert dist[0] < dist[1], (on, off)  # the parcel's pixel is tinted with the review colour
            severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
            assert severe == []
            driver.save_screenshot(str(tmp_path / "county_parcel.png"))
    finally:
        driver.quit()


def test_county_report_is_a_summary(county, tmp_path):
    res, _, _ = county
    page = report.render_report(res)
    table = re.search(r'<table id="parcels-table" class="sortable">(.*?)</table>', page, re.DOTALL).group(1)
    assert table.count("<tr>") == 1 + report.MAX_PARCEL_ROWS
    assert f"The {report.MAX_PARCEL_ROWS} most severe parcels of {N:,}" in page
    assert f"the other {N - report.MAX_PARCEL_ROWS:,} are left out of this report" in page
    assert 'data-plot="sfha_share.png"' in page and '<section id="map">' in page
    counts = dict(re.findall(r'<div class="count (\w+)"><b>([\d,]+)</b>', page))
    assert {k: int(v.replace(",", "")) for k, v in counts.items()} == res.counts()
    pdf = report.write_report_pdf(res, tmp_path / "report.pdf")
    from pypdf import PdfReader

    pages = len(PdfReader(str(pdf)).pages)
    print(f"\ncounty report.pdf: {pages} pages, {pdf.stat().st_size / 1e6:.1f} MB")
    assert pages < 40  # never a print of 100,000 parcels
