"""Screening a whole town: 20,000 parcels through screen_parcels -> Result.write.

The findings files hold every finding that needs a person (screen's default) and the parcels
table every outcome (a status column per rule), with the same counts as the per-rule table;
report.html and map.html must stay small enough for a browser and say exactly what they leave
out and where it is.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
from common import NY_FT
from shapely.geometry import LineString, box

from geoconstraints import load_layers, load_rulebook
from geoconstraints.commands import screen_parcels
from geoconstraints.errors import OutputError
from geoconstraints.output import report, webmap, write_result
from geoconstraints.output.files import FINDINGS_LAYERS
from geoconstraints.output.styles import STATUS_LABELS
from geoconstraints.result import status_column
from geoconstraints.rulebook.findings import PERSON_STATUSES, STATUS_RANK, STATUSES, worst_status_by

X0, Y0 = 955_000.0, 740_000.0  # EPSG:2261 feet, south of Vestal NY
K = 142  # a 142 x 142 grid of 100 ft parcels, cut to N
N = 20_000
REPORT_MAX_BYTES = 8_000_000
"""report.html of N parcels with the default limits (measured 3.4 MB; the table of 5,000 parcels dominates)."""
MAP_MAX_BYTES = 30_000_000
"""map.html with the default 20,000-feature limit (about 1 KB per feature)."""


def _town(folder: Path) -> Path:
    """N square 100-ft parcels; an AE band with a floodway inside it across the middle; X everywhere."""
    i, j = np.divmod(np.arange(N), K)
    parcels = gpd.GeoDataFrame(
        {"parcel_id": [f"P{n:06d}" for n in range(N)]},
        geometry=[box(X0 + c * 100, Y0 + r * 100, X0 + c * 100 + 100, Y0 + r * 100 + 100) for r, c in zip(i, j)],
        crs=NY_FT)
    river = LineString([(X0 - 500, Y0 + 7_000), (X0 + 15_000, Y0 + 7_600)])
    flood = gpd.GeoDataFrame(
        {"FLD_ZONE": ["X", "AE", "AE"], "ZONE_SUBTY": ["", "", "FLOODWAY"],
         "DFIRM_ID": ["36007C"] * 3, "EFF_DATE": ["2010-08-03"] * 3},
        geometry=[box(X0 - 1_000, Y0 - 1_000, X0 + 16_000, Y0 + 16_000), river.buffer(900), river.buffer(250)],
        crs=NY_FT)
    path = folder / "town.gpkg"
    parcels.to_file(path, layer="parcels", driver="GPKG")
    flood.to_file(path, layer="flood_zones", driver="GPKG")
    return path


@pytest.fixture(scope="module")
def town_layers(tmp_path_factory):
    return load_layers(_town(tmp_path_factory.mktemp("town")))


@pytest.fixture(scope="module")
def town(town_layers, tmp_path_factory):
    """The default screening (findings scope person: pass and info counted, not kept) and its outputs."""
    res = screen_parcels(town_layers, load_rulebook("vestal"))
    written = write_result(res, tmp_path_factory.mktemp("town_out") / "out")
    return res, written


@pytest.fixture(scope="module")
def town_all(town_layers):
    """The same screening keeping every finding (``findings="all"``)."""
    return screen_parcels(town_layers, load_rulebook("vestal"), findings="all")


def test_findings_files_hold_every_finding_that_needs_a_person(town, town_all):
    # screen's default (--findings person): findings.geojson/.csv/.parquet and the findings layers
    # carry the violation, review and not_evaluated findings, every one of them, in order, and the run-wide
    # ones whatever their status (FLD-010: the map is not the adopted one, info)
    res, written = town
    f = town_all.findings
    person = f[f["status"].isin(PERSON_STATUSES) | (f["subject_id"] == "")].reset_index(drop=True)
    assert 0 < len(person) < len(f)
    assert person.loc[~person["status"].isin(PERSON_STATUSES), ["rule_id", "status"]].values.tolist() == [["FLD-010", "info"]]
    data = json.loads(written["findings.geojson"].read_text("utf-8"))
    feats = data["features"]
    assert len(feats) == len(person)
    got = {s: 0 for s in STATUSES}
    for ft in feats:
        got[ft["properties"]["status"]] += 1
    assert got == {s: (n if s in PERSON_STATUSES else int(s == "info")) for s, n in res.counts().items()}
    assert data["geoconstraints"]["findings"] == "person"
    for k in (0, len(person) // 2, len(person) - 1):  # same order, same values
        p = feats[k]["properties"]
        assert (p["rule_id"], p["subject_id"], p["message"]) == (
            person["rule_id"][k], person["subject_id"][k], person["message"][k])
    gpkg = written["results.gpkg"]
    n = sum(pyogrio.read_info(gpkg, layer=name)["features"] for name in FINDINGS_LAYERS.values())
    assert n == len(person)
    assert pyogrio.read_info(gpkg, layer="parcels")["features"] == N
    assert sum(1 for _ in written["parcels.csv"].open(encoding="utf-8")) == N + 1
    assert sum(1 for _ in written["findings.csv"].open(encoding="utf-8")) == len(person) + 1
    prov = json.loads(written["provenance.json"].read_text("utf-8"))
    assert prov["findings_total"] == res.counts()
    assert sum(prov["findings_written"].values()) == len(person)


def test_parcels_table_status_columns_count_every_finding(town, town_all):
    # every outcome of every parcel: one status column per rule; each column's counts are the
    # counts of that rule's findings, which are the numbers of the report's per-rule table
    res, written = town
    t = res.tables["parcels"]
    f = town_all.findings
    rules = sorted(f.loc[f["subject_id"] != "", "rule_id"].unique())
    cols = [status_column(r) for r in rules]
    assert cols == [c for c in t.columns if c.startswith("status_")]
    assert list(t.columns).index(cols[-1]) + 1 == list(t.columns).index("worst_status")
    summary = res.summary().set_index("rule_id")
    for rule, col in zip(rules, cols):
        mine = f[f["rule_id"] == rule]
        col_counts = t[col].value_counts().to_dict()
        assert sum(col_counts.values()) == len(mine) == N, rule  # one finding per parcel, none missing
        assert col_counts == mine["status"].value_counts().to_dict(), rule
        assert {s: int(summary.loc[rule, s]) for s in STATUSES if summary.loc[rule, s]} == col_counts, rule
    # worst_status is the most severe of the row's statuses
    ranks = np.stack([t[c].map(STATUS_RANK).to_numpy() for c in cols])
    assert (np.array(STATUSES, dtype=object)[ranks.min(axis=0)] == t["worst_status"].to_numpy()).all()
    # the run-wide FLD-010 finding has no column; the totals match result.counts()
    totals = {s: int(summary[s].sum()) for s in STATUSES}
    assert totals == res.counts()
    head = written["parcels.csv"].open(encoding="utf-8").readline().rstrip("\n").split(",")
    assert cols == [c for c in head if c.startswith("status_")]
    back = gpd.read_parquet(written["parcels.parquet"])
    assert back[cols].equals(pd.DataFrame(t[cols]).reset_index(drop=True))


def test_report_is_bounded_and_says_what_it_leaves_out(town):
    res, written = town
    page = written["report.html"].read_text("utf-8")
    assert len(page.encode()) < REPORT_MAX_BYTES
    # the parcels table: 5,000 of 20,000 rows, most severe first, and a note with the exact counts
    table = re.search(r'<table id="parcels-table" class="sortable">(.*?)</table>', page, re.DOTALL).group(1)
    assert table.count("<tr>") == 1 + report.MAX_PARCEL_ROWS
    note = unescape(re.search(r'<p class="note" id="parcels-left-out">(.*?)</p>', page, re.DOTALL).group(1))
    top, rest = report.MAX_PARCEL_ROWS, N - report.MAX_PARCEL_ROWS
    assert note == (f"This table lists the {top:,} most severe of the 20,000 parcels (by worst status (violation, "
                    f"needs review, not evaluated, information, pass), then the most rules at that status first, then the "
                    f"largest floodway share first, then the largest SFHA share first); the other "
                    f"{rest:,} are left out of this report. Every parcel is in parcels.csv, parcels.parquet "
                    f"and results.gpkg (layer parcels).")
    parcels = res.tables["parcels"]
    listed = set(re.findall(r"<tr><td[^>]*>(P\d{6})</td>", table))
    assert len(listed) == report.MAX_PARCEL_ROWS
    rank = parcels["worst_status"].map(STATUS_RANK)
    inside = parcels["parcel_id"].isin(listed).to_numpy()
    assert rank[inside].max() <= rank[~inside].min()  # nothing left out is more severe than what is listed
    # nor at the same worst status under more rules (the second key of the order)
    at_worst = sum((parcels[c] == parcels["worst_status"]).astype(int)
                   for c in parcels.columns if c.startswith("status_"))
    key = list(zip(rank.tolist(), (-at_worst).tolist()))
    assert max(k for k, i in zip(key, inside) if i) <= min(k for k, i in zip(key, inside) if not i)
    # each rule: at most 1,000 non-pass and 50 pass rows, and a note counting exactly the rest
    f = res.findings
    notes = {rid: int(n) for rid, n in re.findall(r'data-rule="([A-Z]+-\d+)" data-left-out="(\d+)"', page)}
    for rid, fr in f.groupby("rule_id"):
        other = int((fr["status"] != "pass").sum())
        expect = max(0, other - report.MAX_FINDING_ROWS)
        assert notes.get(rid, 0) == expect, rid
        section = re.search(rf'<div class="rule" id="rule-{rid}">(.*?)</div>\n<div class="rule"|'
                            rf'<div class="rule" id="rule-{rid}">(.*?)</section>', page, re.DOTALL)
        body = section.group(1) or section.group(2)
        rows = body.count("<tr><td><span class=\"badge")
        passing = int((fr["status"] == "pass").sum())
        assert rows == min(other, report.MAX_FINDING_ROWS) + min(passing, report.MAX_PASS_ROWS), rid
        if expect:
            assert (f"… and {expect:,} more {rid} findings that are not pass, left out of this report "
                    f"(the {report.MAX_FINDING_ROWS:,} most severe are listed); every finding is in findings.geojson and results.gpkg, "
                    f"and each parcel's outcome in parcels.csv, parcels.parquet and results.gpkg.") in unescape(body)
    assert notes, "20,000 parcels must exceed the per-rule limit somewhere"
    # the pass and info findings not kept in memory: counted per rule, and the note says where they are
    left = {rid: int(n) for rid, n in re.findall(r'data-rule="([A-Z]+-\d+)" data-omitted="(\d+)"', page)}
    assert left == {str(k): int(v) for k, v in res.omitted.groupby("rule_id")["n"].sum().items()}
    fld1 = res.omitted.set_index(["rule_id", "status"])["n"]
    assert (f"{fld1['FLD-001', 'pass']:,} pass FLD-001 findings, not in findings.geojson and results.gpkg "
            f"(findings scope person): each "
            f"parcel's outcome is in the status_FLD_001 column of parcels.csv, parcels.parquet and results.gpkg; "
            f"rerun with --findings all to list them.") in unescape(page)
    # the summary still counts every finding
    counts = dict(re.findall(r'<div class="count (\w+)"><b>([\d,]+)</b>', page))
    assert {k: int(v.replace(",", "")) for k, v in counts.items()} == res.counts()


def _report_numbers(page: str) -> tuple[dict[str, int], list[tuple[str, list[int]]]]:
    """(the summary's count per status, each row of the per-rule table: rule id and its counts)."""
    counts = {k: int(v.replace(",", "")) for k, v in re.findall(r'<div class="count (\w+)"><b>([\d,]+)</b>', page)}
    table = re.search(r'<table class="rules-summary">(.*?)</table>', page, re.DOTALL).group(1)
    rows = [(rid, [int(n.replace(",", "")) for n in re.findall(r'<td class="num[^"]*">([\d,]+)</td>', body)])
            for rid, body in re.findall(r'<td class="rid"><a href="#rule-[^"]+">([^<]+)</a>(.*?)</tr>', table, re.DOTALL)]
    return counts, rows


def test_person_scope_keeps_exactly_the_findings_that_need_a_person(town, town_all):
    res, _ = town
    full = town_all.findings
    assert (res.scope, town_all.scope) == ("person", "all") and town_all.omitted.empty
    want = full[(full["status"].isin(PERSON_STATUSES) | (full["subject_id"] == "")).to_numpy()].reset_index(drop=True)
    assert 0 < len(want) < len(full)
    pd.testing.assert_frame_equal(res.findings.reset_index(drop=True), want)
    # the parcels table (status columns, worst_status) is the same, built from every finding
    pd.testing.assert_frame_equal(res.tables["parcels"], town_all.tables["parcels"])
    t = res.tables["parcels"]
    by_hand = worst_status_by(full.loc[full["subject_id"] != "", "subject_id"].to_numpy(),
                              full.loc[full["subject_id"] != "", "status"].to_numpy(), index=t["parcel_id"])
    assert (by_hand.to_numpy() == t["worst_status"].to_numpy()).all()
    # what was left out is counted, rule by rule: the totals are those of every finding
    out = full[~(full["status"].isin(PERSON_STATUSES) | (full["subject_id"] == "")).to_numpy()]  # FLD-010 is kept
    assert res.omitted.set_index(["rule_id", "status"])["n"].to_dict() == out.groupby(["rule_id", "status"]).size().to_dict()
    assert set(res.omitted["status"]) == {"pass", "info"}
    assert res.n_findings == town_all.n_findings == len(full) == 5 * N + 1
    assert res.counts() == town_all.counts() == {s: int((full["status"] == s).sum()) for s in STATUSES}
    pd.testing.assert_frame_equal(res.summary(), town_all.summary())
    present = [town_all.counts()[s] > 0 for s in STATUSES]  # no waiver: has(s) is "some finding has s"
    assert [res.has(s) for s in STATUSES] == [town_all.has(s) for s in STATUSES] == present
    assert res.has("pass") and res.has("info")  # only counted in res.omitted
    text = repr(res)
    assert f"findings: {len(full):,} (" in text and f"{len(want):,} kept" in text
    assert f"{len(out):,} info and pass findings are not kept (findings scope person)" in text
    assert "omitted" not in repr(town_all) and "not kept" not in repr(town_all)


def test_report_and_map_count_the_same_whatever_the_scope(town, town_all):
    res, written = town
    person = written["report.html"].read_text("utf-8")
    every = report.render_report(town_all, overview=False, figures=False)
    counts, rows = _report_numbers(person)
    assert (counts, rows) == _report_numbers(every)
    assert counts == town_all.counts() and len(rows) == 10  # every rule of the flood group, FLD-001..010
    summary = town_all.summary().set_index("rule_id")
    assert rows == [(rid, [int(summary.loc[rid, s]) if rid in summary.index else 0 for s in STATUSES])
                    for rid, _ in rows]
    assert f"Findings by status: {res.n_findings:,} in all; " in person
    # the map legend: the same totals; the pass and info ones not kept say where they are
    got = {s: c.total for s, c in webmap.build_map(town_all).gc_counts.items()}
    assert got == {s: c.total for s, c in webmap.build_map(res).gc_counts.items()} == town_all.counts()
    page = written["map.html"].read_text("utf-8")
    page = page.replace("\\u0027", "'").replace("\\u003c", "<").replace("\\u003e", ">")  # the legend's JSON
    n_pass = town_all.counts()["pass"]
    assert f"{STATUS_LABELS['pass']}: {n_pass:,} findings" in page
    assert (f"{n_pass:,} not in findings.geojson and results.gpkg, not drawn: each parcel's outcome is in the "
            f"status_<rule> columns of "
            f"parcels.csv, parcels.parquet and results.gpkg") in page


def test_writing_every_finding_needs_a_result_that_kept_them(town, town_layers, tmp_path):
    res, _ = town
    with pytest.raises(OutputError, match=r'left out\); rerun with screen_parcels\(\.\.\., findings="all"\) or '
                                          r'`geoconstraints screen --findings all`'):
        write_result(res, tmp_path / "out", findings="all")
    assert not (tmp_path / "out").exists()
    with pytest.raises(OutputError, match="--findings 'everything': choose one of person, all"):
        screen_parcels(town_layers, load_rulebook("vestal"), findings="everything")


def _legend_note(page: str) -> str:
    m = re.search(r'note = ("(?:[^"\\]|\\.)*");', page)
    assert m, "no legend note"
    return json.loads(m.group(1))


def test_map_is_bounded_and_draws_every_finding(town):
    res, written = town
    page = written["map.html"].read_text("utf-8")
    assert len(page.encode()) < MAP_MAX_BYTES
    assert page.count('"type": "Feature"') <= webmap.MAX_FEATURES
    note = _legend_note(page)
    assert note.startswith("Not drawn, to keep this page small enough for a browser (over 20,000 features): ")
    assert f"{N:,} input parcels (those with a finding that needs a person are drawn by it)" in note  # person scope
    # findings are never left out: each status's layer and legend count every finding (the report's numbers)
    counts = res.counts()
    for status in STATUSES:
        if counts[status]:
            assert f"{STATUS_LABELS[status]}: {counts[status]:,} finding" in page, status
    m = webmap.build_map(res)
    assert {s: c.total for s, c in m.gc_counts.items()} == counts
    assert all(d["layer"] in ("parcels", "sfha_overlaps", "floodway_overlaps") for d in m.gc_left_out)


def test_map_draws_every_severe_place_whatever_the_budget(town):
    res, _ = town
    f = res.findings
    located = f[f.geometry.notna() & ~f.geometry.is_empty]
    m = webmap.build_map(res, max_features=50)  # once the budget cut severe findings to their first places
    c = m.gc_counts["review"]
    review = located[located["status"] == "review"]
    assert c.total == int((f["status"] == "review").sum()) == len(review)  # every review finding has a place
    # no violation here: every place with a review finding is drawn in the review layer, each once
    assert int((f["status"] == "violation").sum()) == 0
    assert c.under == 0 and c.places == len({g.wkb for g in review.geometry.values})
    assert not any(d["layer"].startswith("findings") for d in m.gc_left_out)


def test_small_run_leaves_nothing_out(town):
    res, _ = town
    plan = webmap.plan_layers([("input", "parcels", res.tables["parcels"].iloc[:10])], 100)
    assert plan.left_out == [] and plan.note() == ""


def test_overview_draws_a_town_as_a_raster(town):
    from geoconstraints.output.overview import rank_grid

    # two unit squares in a 4 x 4 image of a 4 x 4 extent: the severe one wins where they overlap,
    # and a speck smaller than a pixel still marks the pixel of its centroid
    geoms = np.array([box(0, 0, 2, 2), box(1, 1, 3, 3), box(3.2, 3.2, 3.3, 3.3)], dtype=object)
    grid = rank_grid(geoms, np.array([3, 0, 1]), (0.0, 0.0, 4.0, 4.0), (4, 4))
    # row 0 is the top (y 3-4); pixel centres at 0.5, 1.5, 2.5, 3.5
    assert grid.tolist() == [[-1, -1, -1, 1],
                             [-1, 0, 0, -1],
                             [3, 0, 0, -1],
                             [3, 3, -1, -1]]
    _, written = town
    page = written["report.html"].read_text("utf-8")
    png = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert png and len(png.group(1)) < 1_500_000  # the image does not grow with the parcels
