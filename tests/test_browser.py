"""map.html and report.html in a real browser: headless Debian chromium driven by selenium.

The outputs of a small synthetic screening run (with a parcel id ``<script>alert(1)</script>``)
are written offline and served from 127.0.0.1; the pages must draw their features, log no
console error, show the script-like id as text (no alert) and keep the report's parcel table
sortable. Screenshots are saved in the test's tmp folder.

Needs chromium, chromium-driver and selenium: ``bash scripts/browser_deps.sh`` (CI runs it
first). When they are missing the tests FAIL with that instruction; they are never skipped.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from browser_util import XSS_ID, find_browser, make_driver, make_synthetic_result, serve

from geoconstraints.output import write_result

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Outputs written offline into a folder served on 127.0.0.1, and a headless driver."""
    find_browser()  # fails with the install hint when chromium is missing
    base = tmp_path_factory.mktemp("browser")
    result = make_synthetic_result(base / "inputs")
    out = base / "out"
    # every finding in the files and so on the map (the script id's parcel passes FLD-001: a default set would
    # leave its pass out of the files and the map)
    written = write_result(result, out, offline=True, parcel=XSS_ID, findings="all")
    driver = make_driver(base / "profile")
    driver.set_page_load_timeout(30)
    with serve(out) as url:
        yield {"driver": driver, "url": url, "out": out, "written": written, "result": result}
    driver.quit()


def _severe(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def _no_alert(driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        text = driver.switch_to.alert.text
    except NoAlertPresentException:
        return
    raise AssertionError(f"a script from the data ran: alert({text!r})")


def _wait(driver, script: str, timeout: float = 10.0):
    end = time.monotonic() + timeout
    value = None
    while time.monotonic() < end:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    return value


MAP_JS = """
var maps = Object.keys(window).filter(function (k) {
  return k.indexOf("map_") === 0 && window[k] instanceof L.Map; });
return maps.length ? maps[0] : null;
"""


def test_map_draws_layers_offline_without_errors(site):
    d = site["driver"]
    d.get(site["url"] + "/map.html")
    name = _wait(d, MAP_JS)
    assert name, "no Leaflet map object in map.html"
    # drawn on one canvas: 4 parcels + 2 flood zones + stream + haul road + buffer + grade run
    # + 4 parcel findings + 1 grade-run finding + 2 water bars = at least 16 vector shapes
    n_paths = _wait(d, f"var n = 0; window['{name}'].eachLayer(function (l) {{ if (l instanceof L.Path) {{ n++; }} }});"
                       "return n >= 16 ? n : 0;")
    assert n_paths >= 16, n_paths
    assert d.execute_script("return document.querySelectorAll('.leaflet-overlay-pane canvas').length;") == 1
    layers = d.execute_script(f"var n = 0; window['{name}'].eachLayer(function () {{ n++; }}); return n;")
    assert layers > 20, layers
    control = d.execute_script(
        "return Array.from(document.querySelectorAll('.leaflet-control-layers-overlays label'))"
        ".map(function (l) { return l.textContent.trim(); });")
    assert any(t.startswith("Findings: violation") for t in control), control
    assert any(t.startswith("Flood zone AE") for t in control), control
    assert any(t.startswith("Buffer strips") for t in control), control
    assert any(t.startswith("Steep grade runs") for t in control), control
    assert any(t.startswith("Water bars") for t in control), control
    legend = d.execute_script("var l = document.querySelector('.gc-legend'); return l ? l.textContent : '';")
    assert "violation" in legend and "buffer strips" in legend
    # every script came from the page itself: nothing requested from another host
    hosts = d.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; });")
    assert all(h.startswith((site["url"], "data:")) for h in hosts), hosts
    _no_alert(d)
    assert _severe(d) == []
    d.save_screenshot(str(site["out"].parent / "map.png"))


def test_map_popup_shows_script_id_as_text(site):
    d = site["driver"]
    d.get(site["url"] + "/map.html")
    name = _wait(d, MAP_JS)
    text = d.execute_script(f"""
var map = window['{name}'], place = gcFindings.placeOf({"parcels " + XSS_ID!r}), found = null;
gcFindings.layers.forEach(function (l) {{ if (!found && map.hasLayer(l)) {{ found = l.gcShapes(place)[0] || null; }} }});
if (!found) {{ return null; }}
// a user's click on the canvas, at the centre of the parcel
var pt = map.latLngToContainerPoint(found.getBounds().getCenter());
var box = map.getContainer().getBoundingClientRect();
var canvas = document.querySelector('.leaflet-overlay-pane canvas');
canvas.dispatchEvent(new MouseEvent("click", {{bubbles: true, cancelable: true, view: window,
  clientX: box.left + pt.x, clientY: box.top + pt.y}}));
var p = document.querySelector('.leaflet-popup-content');
return p ? p.textContent : null;
""")
    assert text is not None, "no finding feature for the parcel with the script id"
    assert XSS_ID in text  # shown literally
    assert "FLD-001" in text and "Vestal Code" in text  # rule id and citation in the popup
    n_script = d.execute_script("return document.querySelectorAll('.leaflet-popup-content script').length;")
    assert n_script == 0
    _no_alert(d)
    assert _severe(d) == []
    _wait(d, "var p = document.querySelector('.leaflet-popup');"
             "return p !== null && getComputedStyle(p).opacity === '1';")  # fade-in done
    d.save_screenshot(str(site["out"].parent / "map_popup.png"))


def test_report_table_sorts_and_escapes(site):
    d = site["driver"]
    d.get(site["url"] + "/report.html")
    assert d.execute_script("return document.querySelectorAll('#parcels-table tbody tr').length;") == 4
    cells = d.execute_script(
        "return Array.from(document.querySelectorAll('#parcels-table tbody tr td:first-child'))"
        ".map(function (c) { return c.textContent; });")
    assert XSS_ID in cells
    # click "SFHA (sq ft)" (numbers): ascending puts 0 first, the empty (NaN) cell last
    heads = d.execute_script(
        "return Array.from(document.querySelectorAll('#parcels-table thead th')).map(function (h) "
        "{ return h.textContent.trim(); });")
    col = heads.index("SFHA (sq ft)")
    d.execute_script(f"document.querySelectorAll('#parcels-table thead th')[{col}].click();")
    ids = d.execute_script(
        "return Array.from(document.querySelectorAll('#parcels-table tbody tr td:first-child'))"
        ".map(function (c) { return c.textContent; });")
    assert ids == [XSS_ID, "P-2", "P-1", "P&4"], ids  # 0, 10,000, 40,000, empty
    img_ok = d.execute_script(
        "var i = document.querySelector('#map img'); return i && i.complete && i.naturalWidth > 300;")
    assert img_ok
    assert d.execute_script("return document.querySelectorAll('script').length;") == 1  # the sort script only
    _no_alert(d)
    assert _severe(d) == []
    d.save_screenshot(str(site["out"].parent / "report.png"))


def test_one_parcel_report_in_browser(site):
    d = site["driver"]
    name = next(k for k in site["written"] if k.startswith("report_parcel_"))
    d.get(f"{site['url']}/{name}")
    h1 = d.execute_script("return document.querySelector('h1').textContent;")
    assert XSS_ID in h1
    card = d.execute_script("return document.querySelector('#parcel-row').textContent;")
    assert XSS_ID in card and "SFHA share (%)" in card
    body = d.execute_script("return document.body.textContent;")
    assert "P-1" not in body and "Ada" not in body  # nothing about other parcels
    _no_alert(d)
    assert _severe(d) == []
    d.save_screenshot(str(site["out"].parent / "report_parcel.png"))
    assert Path(site["out"].parent / "report_parcel.png").stat().st_size > 10_000


def test_map_numbers_read_as_the_report_prints_them(site):
    from geoconstraints.output.report import format_value

    d = site["driver"]
    d.get(site["url"] + "/map.html")
    _wait(d, MAP_JS)
    cases = [(412.345, "ft"), (27.34, "pct"), (1200.0, "sqft"), (0.997, "acres"), (0.0004, "acres"),
             (40000.0, "sqft"), (261.0, "ft"), (5.5, "ft"), (123456.78, "sqft"), (0.683, ""), (-3.25, "ft")]
    got = d.execute_script("return arguments[0].map(function (c) { return gcFindings.fmt(c[0], c[1]); });",
                           [list(c) for c in cases])
    assert got == [format_value(v, u) for v, u in cases]
    assert _severe(d) == []


def test_cdn_map_loads_leaflet_before_the_findings_script(site, tmp_path):
    """With --cdn Leaflet comes from the web; the page must still load it before findings.js runs."""
    from geoconstraints.output.webmap import write_map

    page = write_map(site["result"], tmp_path / "map.html", offline=False).read_text("utf-8")
    leaflet = min(m.start() for m in __import__("re").finditer(r'<script src="[^"]*leaflet[^"]*\.js"', page))
    assert leaflet < page.index("window.gcFindings = {") < page.index("gcFindings.layer(")
