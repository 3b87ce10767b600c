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


def test_repr_html_and_repr_show_invisible_characters_as_code_points(result):
    # a rule id, a title and a rulebook name holding U+202E (right-to-left override: "FLD-001\u202eXSS" would
    # read "FLD-001SSX", and the rest of the notebook cell reversed) are shown as <U+202E>, as every other
    # display shows them (geoconstraints.text.visible_text), then escaped
    from dataclasses import replace

    f = result.findings.copy()
    mine = f["rule_id"] == "FLD-001"
    f.loc[mine, "rule_id"] = "FLD-001\u202eXSS"
    f.loc[mine, "title"] = "Flood\u200b zone \u202egnp.exe"
    odd = replace(result, findings=f, command="screen\u202e", rulebook=replace(result.rulebook, name="vestal\u202ebad"))
    page = odd._repr_html_()
    assert "\u202e" not in page and "\u200b" not in page
    assert "<td>FLD-001&lt;U+202E&gt;XSS</td>" in page  # the per-rule count table
    assert "<td>Flood&lt;U+200B&gt; zone &lt;U+202E&gt;gnp.exe</td>" in page
    assert "geoconstraints screen&lt;U+202E&gt;</b> with rulebook vestal&lt;U+202E&gt;bad" in page
    text = repr(odd)
    assert "\u202e" not in text and str(odd) == text
    assert text.startswith("<Result screen<U+202E>: rulebook vestal<U+202E>bad ")
    assert len(text.splitlines()) == 4  # line feeds kept


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


def test_a_result_that_left_findings_out_counts_them(result):
    # the same findings, split as screen_parcels(..., findings="person") splits them (by hand: the 2
    # water bars' info and 1 pass go, the 2 violation, 1 review and 1 not_evaluated stay, and so does the
    # run-wide FLD-010 info: no status column holds its outcome)
    from dataclasses import replace

    import pandas as pd

    from geoconstraints.result import split_scope

    kept, omitted = split_scope(result.findings, "person")
    assert sorted(kept["status"]) == ["info", "not_evaluated", "review", "violation", "violation"]
    assert kept.loc[kept["status"] == "info", ["rule_id", "subject_id"]].values.tolist() == [["FLD-010", ""]]
    assert omitted[["rule_id", "status", "waived", "n"]].values.tolist() == [
        ["FLD-001", "pass", "", 1], ["HRV-030", "info", "", 2]]
    person = replace(result, findings=kept, scope="person", omitted=omitted)
    assert person.n_findings == result.n_findings == 8
    assert person.counts() == result.counts()
    pd.testing.assert_frame_equal(person.summary(), result.summary())
    assert [person.has(s) for s in gc.STATUSES] == [result.has(s) for s in gc.STATUSES]
    lines = repr(person).splitlines()
    assert lines[1] == "  findings: 8 (2 violation, 1 review, 1 not_evaluated, 3 info, 1 pass), 5 kept"
    assert lines[2].startswith("  3 info and pass findings are not kept (findings scope person): each subject's "
                               "outcome per rule is in the status_<rule> columns of the parcels table")
    assert "3 info and pass findings are not kept" in person._repr_html_()
    # a waived finding left out is no unwaived one: has() says so
    waived = replace(person, omitted=omitted.assign(waived="waived by the town board"))
    assert not waived.has("pass") and waived.counts() == result.counts()
    assert waived.has("info")  # the run-wide FLD-010 info is kept, unwaived
    # nothing left out: an empty table, and the repr of a complete result says nothing of it
    assert split_scope(result.findings, "all")[1].empty and "kept" not in repr(result)
    with pytest.raises(ValueError, match="scope 'some' is not one of person, all"):
        split_scope(result.findings, "some")


def test_status_columns_and_worst_status_come_from_one_group_by():
    # by hand: P1 has a review (FLD-001) and an info (FLD-002), P2 a pass, P3 nothing, and a run-wide
    # violation (no subject) counts for no parcel
    import pandas as pd

    from geoconstraints.result import add_rule_status_columns
    from geoconstraints.rulebook.findings import worst_status_by

    f = pd.DataFrame({"rule_id": ["FLD-001", "FLD-002", "FLD-001", "FLD-010"],
                      "status": ["review", "info", "pass", "violation"],
                      "subject_layer": ["parcels", "parcels", "parcels", ""], "subject_id": ["P1", "P1", "P2", ""]})
    table = pd.DataFrame({"parcel_id": ["P1", "P2", "P3"], "area": [1.0, 2.0, 3.0]})
    out = add_rule_status_columns(table, f, "parcels", "parcel_id", worst=True)
    assert list(out.columns) == ["parcel_id", "area", "status_FLD_001", "status_FLD_002", "worst_status"]
    assert out["status_FLD_001"].tolist() == ["review", "pass", ""]
    assert out["status_FLD_002"].tolist() == ["info", "", ""]
    assert out["worst_status"].tolist() == ["review", "pass", "not_evaluated"]
    sub = f[f["subject_id"] != ""]
    assert out["worst_status"].tolist() == worst_status_by(sub["subject_id"], sub["status"], index=table["parcel_id"]).tolist()
    assert "worst_status" not in add_rule_status_columns(table, f, "parcels", "parcel_id").columns


def test_status_columns_are_text_held_by_arrow_equal_to_python_strings():
    # built from the six names in C (pyarrow take), they are the same column pandas makes of Python
    # strings: dtype str, same values, same Parquet/CSV; worst_status_of still answers a numpy array
    import numpy as np
    import pandas as pd

    from geoconstraints.result import add_rule_status_columns, worst_status_of

    rng = np.random.default_rng(5)
    statuses = np.array(["violation", "review", "not_evaluated", "info", "pass"], dtype=object)
    n = 2_000
    ids = np.array([f"P{i}" for i in range(n)], dtype=object)
    f = pd.DataFrame({"rule_id": np.repeat(["FLD-001", "FLD-002"], n), "status": statuses[rng.integers(0, 5, 2 * n)],
                      "subject_layer": "parcels", "subject_id": np.concatenate([ids, ids])})
    f = f.drop(index=rng.choice(2 * n, 300, replace=False))  # some parcels without a finding of a rule
    out = add_rule_status_columns(pd.DataFrame({"parcel_id": ids}), f, "parcels", "parcel_id", worst=True)
    rank = {s: k for k, s in enumerate(statuses)}
    for rule, col in (("FLD-001", "status_FLD_001"), ("FLD-002", "status_FLD_002")):
        expect = pd.Series("", index=ids, dtype=object)
        fr = f[f["rule_id"] == rule]
        expect[fr["subject_id"].to_numpy()] = fr["status"].to_numpy()
        assert isinstance(out[col].dtype, pd.StringDtype)
        assert out[col].equals(pd.Series(expect.to_numpy(), name=col))
    worst = [min((s for s in pair if s), key=rank.get, default="not_evaluated")
             for pair in zip(out["status_FLD_001"], out["status_FLD_002"])]
    assert out["worst_status"].tolist() == worst and isinstance(out["worst_status"].dtype, pd.StringDtype)
    got = worst_status_of(f, "parcels", ids)
    assert isinstance(got, np.ndarray) and got.dtype == object and got.tolist() == worst


def test_status_columns_edge_cases_by_hand():
    # several findings of one rule about one subject: the most severe; a subject the table lacks and
    # another layer's subject are not counted; numeric subject ids match the table's text ids; rules in
    # id order; an unknown status counts as not_evaluated
    import pandas as pd

    from geoconstraints.result import rule_status_columns

    f = pd.DataFrame({"rule_id": ["FLD-009", "FLD-009", "FLD-001", "FLD-001", "FLD-001", "FLD-001"],
                      "status": ["pass", "violation", "info", "odd", "review", "pass"],
                      "subject_layer": ["parcels", "parcels", "parcels", "parcels", "parcels", "footprints"],
                      "subject_id": ["7", "7", 7, "8", "P9", "7"]})
    out = rule_status_columns(f, "parcels", ["7", "8", "10"])
    assert list(out.columns) == ["status_FLD_001", "status_FLD_009"]
    assert out["status_FLD_001"].tolist() == ["info", "not_evaluated", ""]
    assert out["status_FLD_009"].tolist() == ["violation", "", ""]
    assert rule_status_columns(f, "dwellings", ["7"]).shape == (1, 0)


def test_omitted_counts_split_a_rule_whose_title_or_waiver_varies():
    import pandas as pd

    from geoconstraints.result import split_scope

    f = pd.DataFrame({"rule_id": ["R-1"] * 5, "title": ["a", "a", "b", "a", "a"],
                      "status": ["pass", "pass", "pass", "info", "review"], "waived": ["", "", "", "w", ""],
                      "subject_id": ["P1", "P2", "P3", "P4", "P5"]})
    kept, omitted = split_scope(f, "person")
    assert kept["status"].tolist() == ["review"]
    assert sorted(omitted.values.tolist()) == [["R-1", "a", "info", "w", 1], ["R-1", "a", "pass", "", 2],
                                               ["R-1", "b", "pass", "", 1]]
    assert omitted["status"].tolist()[-1] == "pass"  # most severe first within a rule


def test_status_columns_of_aligned_blocks_equal_those_of_the_index_lookup():
    # findings in blocks of one rule aligned with the table's ids (as the FLD checks return them) take the
    # block path; the same findings shuffled take the index lookup: the same columns, by hand too
    import numpy as np
    import pandas as pd

    from geoconstraints.result import rule_status_columns, worst_status_of

    ids = ["P1", "P2", "P3"]
    f = pd.DataFrame({"rule_id": ["FLD-002"] * 3 + ["FLD-001"] * 3 + ["FLD-002"] * 3,
                      "status": ["pass", "info", "review", "review", "pass", "pass", "violation", "pass", "pass"],
                      "subject_layer": "parcels", "subject_id": ids * 3})
    aligned = rule_status_columns(f, "parcels", ids)
    shuffled = f.iloc[np.random.default_rng(3).permutation(len(f))].reset_index(drop=True)
    pd.testing.assert_frame_equal(aligned, rule_status_columns(shuffled, "parcels", ids))
    assert aligned.to_dict("list") == {"status_FLD_001": ["review", "pass", "pass"],
                                       "status_FLD_002": ["violation", "info", "review"]}
    assert worst_status_of(f, "parcels", ids).tolist() == ["violation", "info", "review"]
    # a block whose ids are in another order is not aligned: still the right columns
    g = f.assign(subject_id=["P1", "P2", "P3", "P3", "P2", "P1", "P1", "P2", "P3"])
    assert rule_status_columns(g, "parcels", ids)["status_FLD_001"].tolist() == ["pass", "pass", "review"]


def test_omitted_groups_equal_those_of_np_unique():
    import numpy as np

    from geoconstraints.result import _groups

    rng = np.random.default_rng(5)
    cols = {"a": np.repeat(np.array(["R-2", "R-1", "R-2", None], dtype=object), [40, 7, 3, 5]),
            "b": rng.choice(np.array(["pass", "info"], dtype=object), 55)}
    first, n, group = _groups(cols, ["a", "b"])
    key = np.array([f"{a}|{b}" for a, b in zip(cols["a"], cols["b"])], dtype=object)
    codes = {"R-2": 0, "R-1": 1, None: 2}  # by first appearance, as the groups number them
    b_codes = {v: i for i, v in enumerate(dict.fromkeys(cols["b"]))}
    num = np.array([codes[a] * 2 + b_codes[b] for a, b in zip(cols["a"], cols["b"])])
    _, f0, g0, n0 = np.unique(num, return_index=True, return_inverse=True, return_counts=True)
    assert first.tolist() == f0.tolist() and n.tolist() == n0.tolist() and group.tolist() == g0.tolist()
    assert n.sum() == 55 and len(set(key[first])) == len(first)


def test_the_checks_frames_are_split_and_counted_unstacked_as_stacked():
    # screen_parcels hands split_scope and add_rule_status_columns the checks' frames (run_checks), never
    # stacking their millions of pass/info rows: the answers must be those of the stacked frame. Frames by
    # hand: FLD-001 aligned with the table (one row per parcel), FLD-002 about P2 only and twice (the most
    # severe wins), a run-wide FLD-010 finding, an empty frame, and FLD-001 again in a later frame.
    import geopandas as gpd
    import pandas as pd
    from shapely.geometry import box

    from geoconstraints.result import add_rule_status_columns, split_scope
    from geoconstraints.rulebook.findings import concat_findings

    def frame(rule, statuses, subjects, waived=""):
        n = len(statuses)
        return gpd.GeoDataFrame({"rule_id": [rule] * n, "title": [f"title {rule}"] * n, "status": statuses,
                                 "waived": [waived] * n, "subject_layer": ["parcels" if s else "" for s in subjects],
                                 "subject_id": subjects},
                                geometry=[box(i, 0, i + 1, 1) for i in range(n)], crs="EPSG:2261")

    frames = [frame("FLD-001", ["pass", "review", "info"], ["P1", "P2", "P3"]),
              frame("FLD-002", ["pass", "violation"], ["P2", "P2"], waived="by the board"),
              frame("FLD-010", ["info"], [""]),
              frame("FLD-009", [], []),
              frame("FLD-001", ["not_evaluated"], ["P3"])]
    stacked = concat_findings(frames)
    table = pd.DataFrame({"parcel_id": ["P1", "P2", "P3", "P4"]})
    by_list = add_rule_status_columns(table, frames, "parcels", "parcel_id", worst=True)
    pd.testing.assert_frame_equal(by_list, add_rule_status_columns(table, stacked, "parcels", "parcel_id", worst=True))
    assert by_list["status_FLD_001"].tolist() == ["pass", "review", "not_evaluated", ""]
    assert by_list["status_FLD_002"].tolist() == ["", "violation", "", ""]
    assert by_list["worst_status"].tolist() == ["pass", "violation", "not_evaluated", "not_evaluated"]
    for scope in ("person", "all"):
        kept, omitted = split_scope(frames, scope)
        kept_s, omitted_s = split_scope(stacked, scope)
        pd.testing.assert_frame_equal(kept.reset_index(drop=True), kept_s.reset_index(drop=True))
        pd.testing.assert_frame_equal(omitted, omitted_s)
    kept, omitted = split_scope(frames, "person")  # the run-wide FLD-010 info is kept in every scope
    assert kept["status"].tolist() == ["review", "violation", "info", "not_evaluated"] and kept.crs == "EPSG:2261"
    assert omitted[["rule_id", "status", "waived", "n"]].values.tolist() == [
        ["FLD-001", "info", "", 1], ["FLD-001", "pass", "", 1], ["FLD-002", "pass", "by the board", 1]]
    assert split_scope([], "person")[0].empty and split_scope([], "person")[1].empty


def test_outcomes_answer_as_the_frames_of_every_row():
    # Rule.findings within rows_only_for builds the rows of the statuses kept and records every row's
    # status: the status columns, the findings kept and the omitted counts are those of the frames of
    # every row (rules of the vestal rulebook, statuses as numpy text and as objects, a run-wide finding,
    # a subject the table does not have, ids as numbers, a rule whose every row is left out)
    import geopandas as gpd
    import numpy as np
    import pandas as pd
    from shapely.geometry import box

    from geoconstraints.result import add_rule_status_columns, split_scope
    from geoconstraints.rulebook.findings import PERSON_STATUSES, Outcomes, rows_only_for

    rb = gc.load_rulebook("vestal")
    geoms = [box(i, 0, i + 1, 1) for i in range(4)]

    def calls():
        return [lambda: rb["FLD-001"].findings(np.array(["pass", "review", "info", "not_evaluated"]),
                                               subject_layer="parcels", subject_id=["P1", "P2", "P3", "P9"],
                                               measured=[0.0, 1.5, 0.0, np.nan], unit="acres", geometry=geoms,
                                               crs=2261, detail=np.array(["a", "b", "c", "d"], dtype=object)),
                lambda: rb["FLD-002"].findings(np.array(["violation", "pass", "pass", "review"], dtype=object),
                                               subject_layer="parcels", subject_id=np.array([1, 2, 3, 4]),
                                               measured=np.array([3.0, 0.0, 0.0, 1.0]), geometry=geoms[0], crs=2261),
                lambda: rb["FLD-009"].findings("info", subject_layer="parcels", subject_id=["P1", "P2", "P3", "P4"],
                                               geometry=pd.Series(geoms), crs=2261),
                lambda: rb["FLD-010"].findings("pass", subject_layer="flood_zones", crs=2261, detail="ok")]

    frames = [make() for make in calls()]
    with rows_only_for(PERSON_STATUSES) as outcomes:
        lean = [make() for make in calls()]
    # the run-wide FLD-010 pass is kept in every scope: no row of its call is left out, so no Outcomes
    assert [type(x) for x in outcomes] == [Outcomes] * 3 and [o.frame for o in outcomes] == lean[:3]
    assert [len(f) for f in lean] == [2, 2, 0, 1] and lean[1]["subject_id"].tolist() == ["1", "4"]
    assert lean[3]["message"].tolist() == frames[3]["message"].tolist() != [""]
    got = [*outcomes, lean[3]]  # as run_checks hands them on
    table = pd.DataFrame({"parcel_id": ["P1", "P2", "P3", "P4", "1", "4"]})
    want = add_rule_status_columns(table, frames, "parcels", "parcel_id", worst=True)
    pd.testing.assert_frame_equal(add_rule_status_columns(table, got, "parcels", "parcel_id", worst=True), want)
    assert want["status_FLD_001"].tolist() == ["pass", "review", "info", "", "", ""]
    assert want["worst_status"].tolist() == ["info", "review", "info", "info", "violation", "review"]
    kept, omitted = split_scope(frames, "person")
    kept_lean, omitted_lean = split_scope(got, "person")
    pd.testing.assert_frame_equal(kept_lean.drop(columns="geometry").reset_index(drop=True),
                                  kept.drop(columns="geometry").reset_index(drop=True))
    assert kept_lean.geometry.equals(kept.geometry.reset_index(drop=True))
    pd.testing.assert_frame_equal(omitted_lean, omitted)
    assert omitted[["rule_id", "status", "n"]].values.tolist() == [
        ["FLD-001", "info", 1], ["FLD-001", "pass", 1], ["FLD-002", "pass", 2], ["FLD-009", "info", 4]]
    assert kept.loc[kept["rule_id"] == "FLD-010", "status"].tolist() == ["pass"]
    # outcomes and frames in one list: the frame's rows are filtered there, the counts merged
    mixed = [got[0], frames[1], got[2], frames[3]]
    pd.testing.assert_frame_equal(split_scope(mixed, "person")[1], omitted)
    pd.testing.assert_frame_equal(add_rule_status_columns(table, mixed, "parcels", "parcel_id", worst=True), want)
    with pytest.raises(ValueError, match="FLD-001 were built for the statuses"):
        split_scope(got, "all")  # the rows left out cannot be given back
    assert isinstance(kept_lean, gpd.GeoDataFrame)


def test_rows_only_for_refuses_a_status_that_is_not_one():
    from geoconstraints.rulebook.findings import rows_only_for

    with pytest.raises(ValueError, match="'passed' is not one of"), rows_only_for(["passed"]):
        pass


def test_a_status_that_is_not_one_is_refused_in_numpy_text_too():
    import numpy as np

    rule = gc.load_rulebook("vestal")["FLD-001"]
    for status in (np.array(["pass", "passed"]), np.array(["pass", "passed"], dtype=object)):
        with pytest.raises(ValueError, match="'passed' is not one of"):
            rule.findings(status, subject_layer="parcels", subject_id=["P1", "P2"])
