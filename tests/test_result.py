"""The Result in a notebook (issue 12 item 8): short repr, HTML repr, findings.explore(), dir(gc)."""

from __future__ import annotations

import socket
import uuid

import folium
import pytest
from browser_util import XSS_ID, make_synthetic_result

import geoconstraints as gc


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return make_synthetic_result(tmp_path_factory.mktemp("result") / "in")


def test_repr_is_short_and_says_what_is_there(result):
    text = repr(result)
    lines = text.splitlines()
    assert len(lines) == 4 and len(text) < 600  # not the frames: the dataclass default printed every row
    assert lines[0] == f"<Result screen: rulebook vestal {result.rulebook.version}, run {result.run_id}"
    # 4 parcels (violation, review, pass, not_evaluated), 1 grade run (violation), 2 water bars (info), FLD-010 (info)
    assert lines[1] == "  findings: 8 (2 violation, 1 review, 1 not_evaluated, 3 info, 1 pass)"
    assert lines[2] == "  tables: parcels (4 rows)"
    assert lines[3] == "  derived layers: buffer_strips (1), grade_runs (1), water_bars (2), contours (3)>"
    assert uuid.UUID(result.run_id).version == 4


def test_repr_html_escapes_and_counts(result):
    page = result._repr_html_()
    assert "2 violation, 1 review" in page and "parcels (4 rows)" in page and result.run_id in page
    assert XSS_ID not in page  # attribute text is escaped (the parcel id is in the findings' messages)
    assert "<td>FLD-001</td>" in page  # the per-rule count table


def test_findings_explore_is_a_folium_map_without_network(result, monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("explore() touched the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    m = result.findings.explore(column="status")  # categorical colours: mapclassify is not needed for this
    assert isinstance(m, folium.Map)
    html = m.get_root().render()
    assert "violation" in html
    m2 = result.findings.explore(column="measured", scheme="quantiles", k=3)  # needs mapclassify
    assert isinstance(m2, folium.Map)


def test_dir_lists_the_lazy_api():
    names = dir(gc)
    for name in ("load_layers", "load_rulebook", "screen_parcels", "check_harvest", "write_result", "explore",
                 "Result", "sample_path", "STATUSES"):
        assert name in names, name
        assert getattr(gc, name) is not None  # and each loads
    assert names == sorted(gc.__all__)
