"""report.html: self-contained, escaped, stamped with provenance; the one-parcel report; the overview map."""

from __future__ import annotations

import base64
import hashlib
import io
import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
from browser_util import PARCEL_IDS, SECRET, XSS_ID, make_synthetic_result
from common import NY_FT, X0, Y0
from shapely.geometry import Polygon, box

from geoconstraints import __version__, load_layers
from geoconstraints.commands import screen_parcels
from geoconstraints.errors import InputError
from geoconstraints.output import write_result
from geoconstraints.output.overview import nice_scale_length, render_overview
from geoconstraints.output.report import format_value, parcel_report_name, render_report, threshold_rows
from geoconstraints.output.styles import STATUS_COLORS
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
    m = re.search(r'<section id="map">\s*(?:<h2>[^<]*</h2>\s*)?<figure><img src="data:image/png;base64,([A-Za-z0-9+/=]+)"',
                  page)
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
    assert "Passes: FLD-001." in parcel_page  # its one finding: FLD-001 pass
    assert "HRV-010" not in parcel_page  # not a finding of this parcel
    assert '<table id="parcel-row" class="card">' in parcel_page
    assert "parcels-table" not in parcel_page
    # the card: human headers, the share to three significant figures (0.0004 -> 0.04 %, not 0)
    assert "SFHA share (%)</th><td>0.04</td>" in parcel_page
    assert "Owner</th><td>Cy &lt;b&gt;bold&lt;/b&gt;</td>" in parcel_page


def test_one_parcel_report_unknown_id(result):
    with pytest.raises(InputError, match="no parcel with parcel_id 'P-99'"):
        render_report(result, parcel="P-99")


def test_parcel_report_name_is_file_safe():
    assert parcel_report_name(XSS_ID) == "report_parcel_script_alert_1_script-5c140d35.html"
    assert parcel_report_name("../../etc") == "report_parcel_etc-74ccf3c5.html"
    assert parcel_report_name("1014.-14-1") == "report_parcel_1014.-14-1.html"  # a safe id is itself


def test_parcel_report_name_is_bounded_and_unique():
    # ids of 64 characters (at), 63 (under) and 65 (over) the limit; two long ids sharing a prefix
    assert parcel_report_name("P" * 63) == f"report_parcel_{'P' * 63}.html"
    assert parcel_report_name("P" * 64) == f"report_parcel_{'P' * 64}.html"
    over = parcel_report_name("P" * 65)
    assert over.startswith("report_parcel_" + "P" * 55 + "-") and len(over) == len("report_parcel_.html") + 64
    a, b = parcel_report_name("P" * 300 + "a"), parcel_report_name("P" * 300 + "b")
    assert a != b and len(a) == len(b) == len(over)


def test_format_value_and_units():
    assert format_value(412.345, "ft") == "412.3 ft"
    assert format_value(27.34, "pct") == "27.34 %"
    assert format_value(1200.0, "sqft") == "1,200 sq ft"
    assert format_value(float("nan"), "ft") == ""
    assert format_value(None) == ""
    # never a false round number: 0.997 is not 1, 0.0004 is not 0
    assert format_value(0.997, "acres") == "0.997 acres"
    assert format_value(0.0004, "acres") == "0.0004 acres"
    assert format_value(5.5, "ft") == "5.5 ft"
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
    # the HRV-010 violation is a line drawn opaque in the violation colour (vermillion #D55E00)
    assert _count(full, _rgb(STATUS_COLORS["violation"])) > 50
    zoomed = _pixels(_png(parcel_page))
    # zoomed to the one parcel (a pass): filled in the pass green #009E73 at 35 % over the
    # background (greenish pixels: G well above R), no vermillion of a violation anywhere
    r, g, b = zoomed[..., 0], zoomed[..., 1], zoomed[..., 2]
    assert int(((g > r + 40) & (g > b - 10)).sum()) > 20_000
    assert _count(zoomed, _rgb(STATUS_COLORS["violation"]), tol=30) == 0


def _rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    return tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))


def test_overview_png_without_features(result):
    from geoconstraints.result import Result

    empty = Result(command="screen", rulebook=result.rulebook, findings=result.findings.iloc[0:0])
    png = render_overview(empty)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def _parcels_table(page: str) -> str:
    m = re.search(r'<table id="parcels-table" class="sortable">(.*?)</table>', page, re.DOTALL)
    assert m, "no parcels table"
    return m.group(1)


def test_parcel_table_is_for_people(page):
    from browser_util import BFE_NOTE

    table = _parcels_table(page)
    heads = [unescape(h) for h in re.findall(r'<th class="[^"]*" scope="col" data-col="[^"]*">([^<]*)</th>', table)]
    # id and worst status first, then the rule's status; human headers with units; empty and constant columns gone
    assert heads == ["Parcel", "Worst status", "FLD-001", "Owner", "SFHA (sq ft)", "SFHA share (%)", "Flood zone",
                     "BFE note"]
    assert "zone_change" not in heads and "Zone change" not in heads
    assert "Columns empty for every parcel listed, left out: zone_change." in page
    assert "Same for every parcel listed: Area (acres): <b>0.918</b>." in page
    # most severe first: violation, review, not evaluated, pass
    ids = [unescape(i) for i in re.findall(r"<tr><td[^>]*>([^<]*)</td>", table)]
    assert ids == ["P-1", "P-2", "P&4", XSS_ID]
    # three significant figures: 0.997 -> 99.7 %, 0.0004 -> 0.04 % (never 100 or 0); no data stays blank
    shares = re.findall(r'data-col="sfha_share"', table)
    assert shares
    assert 'data-sort="99.7">99.7</td>' in table and 'data-sort="25.0">25</td>' in table
    assert 'data-sort="0.04">0.04</td>' in table
    # the repeated note: a reference in each row, its text once in the legend
    assert table.count(">[1]</td>") == 3
    assert page.count(BFE_NOTE) == 1 + 3  # the legend, and the title (tooltip) of each of the 3 cells
    assert f"<li>[1] {BFE_NOTE}</li>" in page


def test_parcels_by_worst_status_and_top_n(result):
    from geoconstraints.output.report_table import parcel_table

    page = render_report(result, max_parcel_rows=2, overview=False, figures=False)
    note = unescape(re.search(r'<p class="note" id="parcels-left-out">(.*?)</p>', page, re.DOTALL).group(1))
    assert note.startswith("This table lists the 2 most severe of the 4 parcels (by worst status")
    assert "the other 2 are left out of this report" in note
    assert "The 2 most severe parcels of 4" in page
    counts = re.search(r'<table class="parcel-counts" id="parcel-counts">(.*?)</table>', page, re.DOTALL).group(1)
    assert re.findall(r"<td>(\d+)</td>", counts) == ["1", "1", "1", "0", "1", "4"]
    t = parcel_table(result.tables["parcels"], 2)
    assert (t.n_listed, t.n_total) == (2, 4)


def test_significant_figures():
    from geoconstraints.output.report_table import column_header, significant

    assert significant(99.7) == "99.7" and significant(0.04) == "0.04"
    assert significant(99.99999, upper=100.0) == "99.99999"  # under 100 % never shows as 100
    assert significant(100.0, upper=100.0) == "100"
    assert significant(1234567.0) == "1,230,000" and significant(0.000123456) == "0.000123"
    assert significant(float("nan")) == "" and significant(0.0) == "0"
    assert column_header("floodway_share") == ("Floodway share (%)", 100.0)
    assert column_header("bfe_ft") == ("BFE (ft)", 1.0)


def test_feet_and_counts_in_the_parcel_table(result):
    # the sample's 1026.-13-1 (BFE 846.51 ft) showed as 847 and 1026.-13-5 (846.5) as 846: three
    # significant figures are whole feet at these elevations, and FLD-003 compares at 0.01 ft
    import dataclasses

    import pandas as pd

    from geoconstraints.output.report_table import feet_text, parcel_table

    table = pd.DataFrame({
        "parcel_id": ["A", "B", "C", "D"], "worst_status": ["review"] * 4,
        "bfe_ft": [846.51, 846.5, 1234.567, np.nan], "stream_distance_ft": [343.29, 0.004, 0.005, 12.0],
        "sfha_acres": [0.4564, 0.0043, 0.0, 1234.5], "sfha_share": [0.997, 0.0004, 0.0, 1.0],
        "footprints": pd.array([1, 1234, None, 0], dtype="Int64"), "floors": np.array([1, 2, 3, 4]),
    })
    t = parcel_table(table)
    ids = [r[0]["text"] for r in t.rows]  # most severe (largest share) first
    texts = {c.name: [t.rows[ids.index(i)][j]["text"] for i in "ABCD"] for j, c in enumerate(t.columns)}
    assert texts["bfe_ft"] == ["846.51", "846.50", "1,234.57", ""]  # 0.01 ft, trailing zeros kept
    assert texts["stream_distance_ft"] == ["343.29", "0.004", "0.01", "12.00"]  # nonzero never 0.00
    assert texts["sfha_acres"] == ["0.456", "0.0043", "0", "1,230"]  # significant: a small area never 0
    assert texts["sfha_share"] == ["99.7", "0.04", "0", "100"]
    assert texts["footprints"] == ["1", "1,234", "", "0"] and texts["floors"] == ["1", "2", "3", "4"]  # counts
    # the 0.01 ft cut-off: at, just under and just over half of it
    assert [feet_text(x) for x in (0.01, 0.006, 0.0049, -0.0049, 846.505001, 846.504999)] == [
        "0.01", "0.01", "0.0049", "-0.0049", "846.51", "846.50"]
    # and in report.html (and so report.pdf, drawn from the same page)
    page = render_report(dataclasses.replace(result, tables={"parcels": table}), overview=False, figures=False)
    body = _parcels_table(page)
    assert 'data-sort="846.51">846.51</td>' in body and 'data-sort="846.5">846.50</td>' in body
    assert ">847<" not in body and ">846<" not in body


@pytest.fixture(scope="module")
def sample_results():
    from geoconstraints.commands import check_harvest, check_stormwater
    from geoconstraints.demo import sample_path
    from geoconstraints.io.layers import load_layers

    gpkg, dem = sample_path("vestal_sample.gpkg"), sample_path("dem.tif")
    vestal = load_rulebook("vestal")
    harvest = check_harvest(load_layers(gpkg, dem=dem, primary=("harvest_area",), roles=(
        "harvest_area", "landings", "haul_roads", "skid_trails", "streams", "roads", "row", "parcels",
        "dwellings", "critical_slopes", "stream_corridor")), vestal)
    storm = check_stormwater(load_layers(gpkg, roles=("disturbance", "impaired_waters", "landings", "haul_roads"),
                                         primary=("disturbance",)), vestal,
                             rainfall=sample_path("rainfall.csv"), inspection_log=sample_path("inspection_log.csv"))
    return {"harvest": harvest, "stormwater": storm}


def _rule_div(page: str, rid: str) -> str:
    m = re.search(rf'<div class="rule" id="rule-{rid}">(.*?)(?=<div class="rule" id=|</section>)', page, re.DOTALL)
    assert m, rid
    return m.group(1)


def test_plots_sit_in_the_sections_they_illustrate(sample_results, page):
    from geoconstraints.output import plots

    harvest = render_report(sample_results["harvest"], overview=False)
    names = [n for n in plots.render_plots(sample_results["harvest"]) if n.startswith("profile_")]
    assert names, "the sample harvest has haul roads on a DEM"
    hrv10 = _rule_div(harvest, "HRV-010")
    assert re.findall(r'data-plot="(profile_[^"]+)"', hrv10) == names  # every road profile under HRV-010
    assert "hatched in red" in hrv10
    storm = render_report(sample_results["stormwater"], overview=False)
    assert 'data-plot="disturbance_timeline.png"' in _rule_div(storm, "SWP-005")
    # the SFHA share histogram in the parcels section of a screening
    parcels = re.search(r'<section id="parcels">(.*?)</section>', page, re.DOTALL).group(1)
    assert 'data-plot="sfha_share.png"' in parcels
    for doc in (harvest, storm, page):
        for src in re.findall(r'<figure class="plot" data-plot="[^"]+"><img src="([^"]+)"', doc):
            assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_first_parcels_of_the_report_are_those_of_the_whole_order():
    # severity_order(limit=N) orders by id only the parcels that can be among the first N by status and
    # share (ties at the cut kept): the first N must be those of ordering every parcel, whatever the ties,
    # missing shares, unknown or missing statuses and repeated ids
    import pandas as pd

    from geoconstraints.output.report_table import severity_order

    rng = np.random.default_rng(7)
    for trial in range(200):
        n = int(rng.integers(0, 50))
        t = pd.DataFrame({"parcel_id": [f"P{rng.integers(0, 20):03d}" for _ in range(n)],
                          "worst_status": rng.choice(["pass", "review", "info", "violation", "not_evaluated", "odd"], n),
                          "sfha_share": rng.choice([0.0, 0.1, 0.2, np.nan, 0.5], n)})
        if trial % 2:  # the per-rule statuses and the floodway share: more keys, more ties at the cut
            for c in ("status_FLD_001", "status_FLD_002"):
                t[c] = rng.choice(["pass", "review", "violation", None], n)
            t["floodway_share"] = rng.choice([0.0, 0.3, np.nan], n)
        if trial % 7 == 0 and n:
            t.loc[0, "worst_status"] = None
        t = t.drop(columns=[c for c, k in (("sfha_share", 3), ("worst_status", 5)) if trial % k == 0])
        full, said = severity_order(t)
        assert sorted(full.tolist()) == list(range(n))
        for limit in (0, 1, 3, 10, n, n + 5):
            got, said_too = severity_order(t, limit)
            assert got.tolist() == full[:limit].tolist() and said_too == said
    t = pd.DataFrame({"parcel_id": ["B", "A", "C"], "worst_status": ["review", "review", "violation"],
                      "sfha_share": [0.5, 0.5, 0.0]})
    assert severity_order(t, 2)[0].tolist() == [2, 1]  # by hand: the violation, then A before B (a tie)


def test_the_parcels_under_more_rules_and_in_the_floodway_come_first():
    # among parcels of one worst status, the one needing review under more rules (in the floodway: FLD-001
    # and FLD-002) comes before one only in the SFHA, whatever their SFHA shares; then the larger floodway
    # share; the order is said in the note
    import pandas as pd

    from geoconstraints.output.report_table import parcel_table, severity_order

    t = pd.DataFrame({
        "parcel_id": ["SFHA-all", "FW-small", "FW-big", "X", "FW-tie"],
        "sfha_share": [1.0, 0.2, 0.6, 0.0, 0.6],
        "floodway_share": [0.0, 0.05, 0.4, 0.0, 0.4],
        "status_FLD_001": ["review", "review", "review", "pass", "review"],
        "status_FLD_002": ["pass", "review", "review", "pass", "review"],
        "worst_status": ["review", "review", "review", "pass", "review"],
    })
    order, said = severity_order(t)
    assert t["parcel_id"].iloc[order].tolist() == ["FW-big", "FW-tie", "FW-small", "SFHA-all", "X"]
    assert said == ("by worst status (violation, needs review, not evaluated, information, pass), then the most "
                    "rules at that status first, then the largest floodway share first, then the largest SFHA "
                    "share first")
    assert severity_order(t, 2)[0].tolist() == order[:2].tolist()
    # a blank status does not count: FW-small is under one rule, as SFHA-all, and its floodway share keeps it
    # first; a status other than the worst one does not count either (SFHA-all's FLD-002 pass)
    t.loc[1, "status_FLD_002"] = None
    t.loc[1, "floodway_share"] = 0.0
    assert t["parcel_id"].iloc[severity_order(t)[0]].tolist()[2:4] == ["SFHA-all", "FW-small"]  # by SFHA share
    t.loc[1, "floodway_share"] = 0.05
    assert t["parcel_id"].iloc[severity_order(t)[0]].tolist()[2:4] == ["FW-small", "SFHA-all"]
    assert [r[0]["text"] for r in parcel_table(t, 3).rows] == ["FW-big", "FW-tie", "FW-small"]


@pytest.mark.parametrize("dtype", [object, "str", "category"])
def test_parcel_summary_counts_each_worst_status_once(dtype):
    # the report's parcels-per-status counts (one value_counts pass over a county's worst_status): a missing or
    # empty worst status counts as not evaluated, whatever the column's type
    import pandas as pd

    from geoconstraints.output.report import _parcel_summary
    from geoconstraints.rulebook.findings import STATUSES

    values = ["violation", "review", "pass", "pass", "info", "", None, "not_evaluated", "review", "pass"]
    table = pd.DataFrame({"worst_status": pd.Series(values, dtype=dtype)})
    counts = _parcel_summary(table)
    assert list(counts) == list(STATUSES)
    assert {k: v for k, v in counts.items() if v} == {"violation": 1, "review": 2, "pass": 3, "info": 1,
                                                      "not_evaluated": 3}
    assert sum(counts.values()) == len(values)
    assert _parcel_summary(table.iloc[:0]) == dict.fromkeys(STATUSES, 0)
    assert _parcel_summary(pd.DataFrame({"a": [1]})) == {} and _parcel_summary(None) == {}


# -- the handout's notes on what it leaves out for room -------------------------------------------

@pytest.fixture(scope="module")
def town_every_finding():
    """The sample town screened keeping every finding (as ``screen --parcel`` does)."""
    from common import SAMPLE

    from geoconstraints.commands import screen_parcels
    from geoconstraints.io.layers import load_layers

    return screen_parcels(load_layers(SAMPLE / "vestal_sample.gpkg"), load_rulebook("vestal"), findings="all")


def _handout_notes(page: str) -> dict[str, str]:
    return {k: " ".join(unescape(re.sub(r"<[^>]+>", "", v)).split())
            for k, v in re.findall(r'<p class="note" id="(handout-more[^"]*)"[^>]*>(.*?)</p>', page, re.DOTALL)}


def test_handout_names_only_files_that_hold_the_findings_it_leaves_out(town_every_finding):
    # squeezed to three findings, parcel 1006.-12-1 leaves out one not_evaluated finding (in the findings
    # files of a screening's default scope, person) and one info finding (in none of them: only its rule's
    # status is in the parcels table)
    from geoconstraints.output.selection import select_outputs
    from geoconstraints.result import status_column

    res, pid = town_every_finding, "1006.-12-1"
    mine = res.findings[(res.findings["subject_id"] == pid) & (res.findings["status"] != "pass")]
    assert sorted(mine["status"]) == ["info"] + ["not_evaluated"] * 4
    info_rule = mine.loc[mine["status"] == "info", "rule_id"].iloc[0]
    page = render_report(res, parcel=pid, handout_step=3, overview=False, outputs=select_outputs("csv,report"))
    notes = _handout_notes(page)
    assert notes["handout-more"] == ("… and 1 more findings of this parcel that are not pass, left out to keep this "
                                     "page to one sheet: they are in findings.csv.")
    assert notes["handout-more-elsewhere"] == (
        f"Also 1 info findings of this parcel, left out to keep this page to one sheet and not in findings.csv "
        f"(findings scope person): each rule's outcome for this parcel is in the {status_column(info_rule)} column "
        f"of parcels.csv; rerun with --findings all to keep them in the findings files.")
    assert 'data-left-out="1"' in page
    for absent in ("findings.geojson", "results.gpkg", "report.pdf", "parcels.parquet"):
        assert absent not in page, absent
    assert "Inputs and their SHA-256 are listed in report.html and provenance.json." in " ".join(page.split())
    # every finding in the files (--findings all): one note, the two findings in it
    page = render_report(res, parcel=pid, handout_step=3, overview=False, scope="all")
    notes = _handout_notes(page)
    assert list(notes) == ["handout-more"]
    assert notes["handout-more"].startswith("… and 2 more findings") and "in findings.geojson and results.gpkg." in (
        notes["handout-more"])
    assert "listed in report.pdf, report.html and provenance.json." in " ".join(page.split())
    # nothing left out: no note
    assert _handout_notes(render_report(res, parcel=pid, overview=False)) == {}


@pytest.fixture(scope="module")
def town_person_findings():
    """The sample town screened through the Python API with its default scope: only the findings that
    need a person kept in memory, the pass and info ones counted (``findings="person"``)."""
    from common import SAMPLE

    from geoconstraints.commands import screen_parcels
    from geoconstraints.io.layers import load_layers

    return screen_parcels(load_layers(SAMPLE / "vestal_sample.gpkg"), load_rulebook("vestal"))


def _handout_text(page: str, element_id: str) -> str:
    m = re.search(rf'<p class="[^"]*" id="{element_id}"[^>]*>(.*?)</p>', page, re.DOTALL)
    return " ".join(unescape(re.sub(r"<[^>]+>", "", m.group(1))).split()) if m else ""


def _outcome_badge(page: str) -> str:
    return re.search(r'<p class="outcome" id="outcome">Outcome: <span class="badge ([^"]+)">', page).group(1)


def test_handout_of_a_result_that_kept_only_the_findings_needing_a_person(town_person_findings, town_every_finding):
    # write_report_pdf / render_report(parcel=...) on a result screened with findings="person": the parcel's pass
    # and info findings were never in memory. The handout no longer counts the findings it leaves out as if they
    # were all, says which rules' outcomes it has only from the parcels table, lists their passes, and never
    # gives "no finding" as the outcome of a parcel whose findings were all pass or info
    from geoconstraints.output.selection import select_outputs
    from geoconstraints.result import status_column

    res, every = town_person_findings, town_every_finding
    assert res.scope == "person" and len(res.omitted)
    chosen = select_outputs("csv,report")

    def rules(pid: str, status: str) -> list[str]:
        f = every.findings
        return sorted(set(f.loc[(f["subject_id"] == pid) & (f["status"] == status), "rule_id"]))

    pid = "1003.-11-1"  # three findings to review (kept), one pass and one info (not kept)
    info, passed = rules(pid, "info"), rules(pid, "pass")
    assert len(info) == len(passed) == 1
    page = render_report(res, parcel=pid, overview=False, outputs=chosen)
    assert _handout_text(page, "handout-not-kept") == (
        "Counted and listed here: the findings this run kept, those that need a person (findings scope person). "
        f"Its parcels table gives the outcome of the other rules for this parcel: {info[0]} information; "
        f"{passed[0]} pass (the {status_column(info[0])} and {status_column(passed[0])} columns of parcels.csv); "
        'their findings were not kept. Screen with findings="all" (--findings all) to list them.')
    assert 'data-not-kept="2"' in page
    full = render_report(every, parcel=pid, overview=False, outputs=chosen)
    assert _handout_text(page, "handout-passes") == _handout_text(full, "handout-passes") == f"Passes: {passed[0]}."
    assert _outcome_badge(page) == _outcome_badge(full) == "review"
    assert 'id="handout-not-kept"' not in full  # every finding kept: listed and counted, no such note

    # squeezed to three findings: the one left out is counted as one that needs a person, the info one named apart
    pid = "1006.-12-1"
    page = render_report(res, parcel=pid, handout_step=3, overview=False, outputs=chosen)
    assert _handout_text(page, "handout-more") == (
        "… and 1 more findings of this parcel that need a person, left out to keep this page to one sheet: "
        "they are in findings.csv.")
    assert _handout_text(page, "handout-not-kept").endswith(
        f"rules for this parcel: {rules(pid, 'info')[0]} information (the {status_column(rules(pid, 'info')[0])} "
        'column of parcels.csv); their findings were not kept. Screen with findings="all" (--findings all) to '
        "list them.")

    # a parcel with only pass and info findings: nothing to do, its outcome is not "no finding"
    table = every.tables["parcels"]
    pid = str(table.loc[table["worst_status"] == "info", "parcel_id"].iloc[0])
    page = render_report(res, parcel=pid, overview=False, outputs=chosen)
    full = render_report(every, parcel=pid, overview=False, outputs=chosen)
    assert _outcome_badge(page) == _outcome_badge(full) == "info"
    assert "Nothing to do: no violation, review or missing input for this parcel." in page
    assert _handout_text(page, "handout-passes") == _handout_text(full, "handout-passes")
    assert _handout_text(page, "handout-not-kept")


def test_the_report_counts_and_names_the_repaired_features_and_the_files_flag_them(tmp_path):
    # P7 a bow-tie parcel across the AE: its invalid geometry was repaired. The report says so in one
    # line of its notes; parcels.csv, parcels.parquet and the parcels layer of results.gpkg flag it
    bow = Polygon([(X0 + 400, Y0), (X0 + 600, Y0 + 200), (X0 + 600, Y0), (X0 + 400, Y0 + 200)])
    pcl = gpd.GeoDataFrame({"parcel_id": ["P1", "P7"]}, geometry=[box(X0, Y0, X0 + 200, Y0 + 200), bow], crs=NY_FT)
    fz = gpd.GeoDataFrame({"FLD_ZONE": ["AE"], "STATIC_BFE": [-9999.0]},
                          geometry=[box(X0 - 50, Y0 - 50, X0 + 650, Y0 + 100)], crs=NY_FT)
    res = screen_parcels(load_layers(parcels=pcl, flood_zones=fz), load_rulebook("vestal"))
    line = ("Invalid geometries repaired: 1 feature (parcels: P7) had an invalid geometry repaired with make_valid "
            "when loaded; the outcome of every finding about it rests on the repaired shape and its message says so")
    page = render_report(res, overview=False)
    notes = page[page.index('<section id="notes">'):]
    assert unescape(notes).count(line) == 1
    written = write_result(res, tmp_path / "out", outputs=("gpkg", "csv", "parquet", "report"))
    csv = pd.read_csv(written["parcels.csv"], dtype={"parcel_id": str})
    assert dict(zip(csv["parcel_id"], csv["geometry_repaired"])) == {"P1": False, "P7": True}
    pq = pd.read_parquet(written["parcels.parquet"])
    assert dict(zip(pq["parcel_id"], pq["geometry_repaired"])) == {"P1": False, "P7": True}
    gp = pyogrio.read_dataframe(written["results.gpkg"], layer="parcels")
    assert dict(zip(gp["parcel_id"], gp["geometry_repaired"].astype(bool))) == {"P1": False, "P7": True}
    assert line in unescape(Path(written["report.html"]).read_text("utf-8"))
