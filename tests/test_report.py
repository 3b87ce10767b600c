"""report.html: self-contained, escaped, stamped with provenance; the one-parcel report; the overview map."""

from __future__ import annotations

import base64
import hashlib
import io
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from browser_util import PARCEL_IDS, SECRET, XSS_ID, make_synthetic_result

from geoconstraints import __version__
from geoconstraints.errors import InputError
from geoconstraints.output.overview import nice_scale_length, render_overview
from geoconstraints.output.report import format_value, parcel_report_name, render_report, threshold_rows
from geoconstraints.rulebook.loader import load_rulebook


class _Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))


def _tags(page: str) -> list[tuple[str, dict[str, str]]]:
    p = _Tags()
    p.feed(page)
    return p.tags


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return make_synthetic_result(tmp_path_factory.mktemp("report") / "inputs")


@pytest.fixture(scope="module")
def page(result) -> str:
    return render_report(result)


@pytest.fixture(scope="module")
def parcel_page(result) -> str:
    return render_report(result, parcel=XSS_ID)


def _png(page: str) -> bytes:
    m = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert m, "no inline PNG overview map"
    return base64.b64decode(m.group(1))


def test_report_is_self_contained(page):
    tags = _tags(page)
    urls = [a.get(k, "") for t, a in tags for k in ("src", "href") if t in ("script", "link", "img", "iframe")]
    assert not [u for u in urls if re.match(r"(?i)^\s*(https?:)?//", u)], urls
    assert "http://" not in page and "https://" not in page  # no link of any kind to the web
    assert [t for t, a in tags if t == "script" and a.get("src")] == []  # only inline script
    assert any(t == "style" for t, _ in tags)
    assert any(t == "img" and a["src"].startswith("data:image/png;base64,") for t, a in tags)


def test_report_escapes_attribute_text(page):
    assert XSS_ID not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>bold</b>" not in page and "Cy &lt;b&gt;bold&lt;/b&gt;" in page
    assert "P&amp;4" in page and "P&4<" not in page
    assert sum(1 for t, _ in _tags(page) if t == "script") == 1  # the table-sort script only


def test_report_provenance_stamp(result, page):
    digest = hashlib.sha256(Path(result.layers.info["parcels"].path).read_bytes()).hexdigest()
    assert digest in page
    assert "36007C" in page and "2010-08-03" in page  # NFHL DFIRM_ID and effective date
    assert "vestal" in page and result.rulebook.version in page
    assert f"geoconstraints {__version__}" in page
    assert "NAD83 / New York Central (ftUS)" in page
    assert result.started.strftime("%Y-%m-%d %H:%M") in page


def test_report_redacts_credentials(page):
    assert SECRET not in page
    assert "password=***" in page
    assert "postgresql://clerk:***@db:5432/gis" in page


def test_report_lists_rules_with_values_and_units(result, page):
    # every rule of the groups that ran is there with its citation
    for rule in result.rulebook.group("flood"):
        assert f'id="rule-{rule.id}"' in page
    hrv10 = result.rulebook["HRV-010"]
    assert hrv10.citation in page
    assert "261 ft" in page and "200 ft" in page  # measured against threshold, with units
    assert "max grade = 25 %" in page and "max run = 200 ft" in page
    assert "40,000 sq ft" in page
    # counts by status: 2 violations (FLD-001 P-1, HRV-010 R1), 3 info, 1 each review/pass/not evaluated
    counts = dict(re.findall(r'<div class="count (\w+)"><b>(\d+)</b>', page))
    assert counts == {"violation": "2", "review": "1", "not_evaluated": "1", "info": "3", "pass": "1"}


def test_report_parcel_table_is_sortable(page):
    m = re.search(r'<table id="parcels-table" class="sortable">(.*?)</table>', page, re.DOTALL)
    assert m
    assert m.group(1).count("<tr>") == 1 + len(PARCEL_IDS)
    assert 'data-sort="40000.0"' in m.group(1)
    assert "thead { display: table-header-group; }" in page  # headers repeat on printed pages


def test_one_parcel_report_holds_only_that_parcel(parcel_page):
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in parcel_page
    assert XSS_ID not in parcel_page
    for other in ("P-1", "P-2", "P&amp;4", "Ada", "Di &amp; Co"):
        assert other not in parcel_page, other
    assert 'id="rule-FLD-001"' in parcel_page
    assert 'id="rule-HRV-010"' not in parcel_page  # not a finding of this parcel
    assert '<table id="parcel-row">' in parcel_page
    assert "parcels-table" not in parcel_page


def test_one_parcel_report_unknown_id(result):
    with pytest.raises(InputError, match="no parcel with parcel_id 'P-99'"):
        render_report(result, parcel="P-99")


def test_parcel_report_name_is_file_safe():
    assert parcel_report_name(XSS_ID) == "report_parcel_script_alert_1_script.html"
    assert parcel_report_name("../../etc") == "report_parcel_etc.html"


def test_format_value_and_units():
    assert format_value(412.345, "ft") == "412.3 ft"
    assert format_value(27.34, "pct") == "27.34 %"
    assert format_value(1200.0, "sqft") == "1,200 sq ft"
    assert format_value(float("nan"), "ft") == ""
    assert format_value(None) == ""
    # threshold names read by the rulebook's unit_of: label, value and unit text
    rb = load_rulebook("vestal")
    rows = {r["name"]: r["value"] for r in threshold_rows(rb["FLD-007"])}
    assert rows == {"min openings": "2", "min opening": "1 sq in per sq ft", "max opening bottom above grade": "1 ft"}
    assert {r["name"]: r["value"] for r in threshold_rows(rb["HRV-002"])}["min scale"] == "500 ft per in"


def test_scale_bar_lengths():
    # 2,000 ft wide: a quarter is 500 ft -> 500 ft; 30,000 ft: 7,500 ft = 1.42 mi -> 1 mi = 5,280 ft
    assert nice_scale_length(2000.0) == (500.0, "500 ft")
    assert nice_scale_length(1100.0) == (200.0, "200 ft")  # 275 -> 200
    assert nice_scale_length(30000.0) == (5280.0, "1 mi")
    assert nice_scale_length(12000.0) == (2640.0, "0.5 mi")  # 3,000 ft = 0.568 mi -> 0.5 mi
    with pytest.raises(ValueError):
        nice_scale_length(0.0)


def _pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def _count(img: np.ndarray, rgb: tuple[int, int, int], tol: int = 6) -> int:
    return int((np.abs(img - np.array(rgb)).max(axis=2) <= tol).sum())


def test_overview_map_draws_findings_by_status(result, page, parcel_page):
    full = _pixels(_png(page))
    assert full.shape[1] > 800
    # the HRV-010 violation is a line drawn opaque in the violation colour #d7191c
    assert _count(full, (0xd7, 0x19, 0x1c)) > 50
    zoomed = _pixels(_png(parcel_page))
    # zoomed to the one parcel (a pass): filled in the pass green #1a9641 at 35 % over the
    # background (greenish pixels: G well above R and B), no red of a violation anywhere
    r, g, b = zoomed[..., 0], zoomed[..., 1], zoomed[..., 2]
    assert int(((g > r + 40) & (g > b + 30)).sum()) > 20_000
    assert int(((r > g + 120) & (r > b + 120)).sum()) == 0
    r, g, b = full[..., 0], full[..., 1], full[..., 2]
    assert int(((r > g + 120) & (r > b + 120)).sum()) > 50


def test_overview_png_without_features(result):
    from geoconstraints.result import Result

    empty = Result(command="screen", rulebook=result.rulebook, findings=result.findings.iloc[0:0])
    png = render_overview(empty)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
