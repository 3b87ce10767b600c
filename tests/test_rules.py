"""Tests for geoconstraints.rules: the shipped catalogues, user rulebooks (extend, change,
waive), validation of rulebook files, message templates, findings built by rules, the check
registry, and the ``geoconstraints rules`` command."""

from __future__ import annotations

import numpy as np
import pytest
from shapely.geometry import Point

import geoconstraints.rules  # noqa: F401  (registers the checks)
from geoconstraints.cli import main
from geoconstraints.errors import RulebookError
from geoconstraints.rulebook.findings import STATUSES
from geoconstraints.rulebook.loader import available_rulebooks, load_rulebook
from geoconstraints.rulebook.model import Rule, unit_of
from geoconstraints.rulebook.registry import CHECKS, check, run_group

VESTAL_IDS = (
    ["HRV-001", "HRV-002", "HRV-003", "HRV-010", "HRV-011", "HRV-012", "HRV-013", "HRV-020", "HRV-021",
     "HRV-022", "HRV-023", "HRV-024", "HRV-025", "HRV-026", "HRV-027", "HRV-030", "HRV-040"]
    + [f"FLD-{i:03d}" for i in range(1, 11)]
    + [f"SWP-{i:03d}" for i in range(1, 9)]
    + ["SQR-001"]
)
LOCKPORT_IDS = [f"SWP-{i:03d}" for i in range(1, 9)]


def _yaml(tmp_path, text, name="mine.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


# ------------------------------------------------------------------------------------------
# shipped catalogues

def test_available_rulebooks():
    assert available_rulebooks() == ["lockport", "vestal"]


def test_vestal_catalogue_has_all_36_ids():
    rb = load_rulebook("vestal")
    assert len(VESTAL_IDS) == 36
    assert sorted(r.id for r in rb) == sorted(VESTAL_IDS)
    assert rb.name == "vestal" and rb.version
    for r in rb:
        assert r.title and r.citation and r.rulebook == "vestal" and r.waived == ""
        assert r.group == {"HRV": "harvest", "FLD": "flood", "SWP": "stormwater", "SQR": "seqr"}[r.id[:3]]


def test_lockport_catalogue_is_the_stormwater_rules():
    rb = load_rulebook("lockport")
    assert sorted(r.id for r in rb) == LOCKPORT_IDS
    assert all("Lockport" in r.citation for r in rb)


def test_thresholds_read_from_the_law_and_their_units():
    # values as read in the seeds (Vestal ch. 6, Lockport ch. 159); units from the name's suffix
    v, lk = load_rulebook("vestal"), load_rulebook("lockport")
    assert v["HRV-010"].thresholds == {"max_grade_pct": 25, "max_run_ft": 200, "smoothing_window_ft": 15,
                                       "smoothing_window_cells_count": 3,
                                       "max_dem_cell_ft": 50,  # a quarter of the run: not the law's, the DEM's
                                       "dem_blur_cells_count": 2}  # a cell lost at each run end: the DEM's
    assert (v["HRV-025"].t("min_distance_ft"), v["HRV-020"].t("buffer_width_ft"), v["HRV-021"].t("buffer_width_ft")) == (
        150, 50, 100)
    assert (v["FLD-004"].t("hag_freeboard_ft"), v["FLD-009"].t("variance_max_lot_acres")) == (2, 0.5)
    assert v["FLD-004"].thresholds == {"hag_freeboard_ft": 2, "elevation_precision_ft": 0.01,
                                       "max_dem_cell_ft": 10,  # not the law's: the HAG's DEM (0.5 ft low at 10 %)
                                       "max_stated_bfe_below_grade_ft": 20}  # not the law's: a BFE in metres
    assert (v["SWP-008"].t("max_jail_months"), lk["SWP-008"].t("max_jail_days"), lk["SWP-008"].t("smo_decision_days")) == (
        6, 15, 45)
    assert lk["SWP-001"].thresholds == {"min_disturbed_acres": 1, "common_plan_aggregate_acres": 1}
    assert v["SWP-001"].p("common_plan_aggregate_acres") is None  # Vestal sets no aggregate
    assert [unit_of(k) for k in v["FLD-007"].thresholds] == ["count", "sqin_per_sqft", "ft"]
    assert unit_of(next(iter(v["SQR-001"].thresholds))) == "units"
    assert unit_of("highway_row_added_acres_per_mile") == "acres_per_mile" and unit_of("max_grade") == ""


def test_every_message_template_formats():
    # each template may use only the rule's own names plus the standard ones; a template that
    # shows the detail shows it whole, and no field is left unfilled
    for name in available_rulebooks():
        for r in load_rulebook(name):
            f = r.findings(list(STATUSES), subject_layer="parcels", subject_id=["P1"] * 5, measured=1.5, threshold=2.0,
                           unit="ft", detail="DETAIL-TEXT")
            for status, msg in zip(STATUSES, f["message"]):
                assert "{" not in msg and "}" not in msg, (r.id, status, msg)
                assert ("DETAIL-TEXT" in msg) == ("{detail}" in r.template(status)), (r.id, status, msg)


def test_rule_accessors():
    r = load_rulebook("vestal")["HRV-010"]
    assert r.t("max_grade_pct") == 25.0 and r.t("max_run_ft") == 200.0
    assert r.s("run_length") == "horizontal"
    assert r.reading == "run_length=horizontal"
    with pytest.raises(RulebookError, match="rule HRV-010 in rulebook 'vestal' has no threshold 'max_x_ft'"):
        r.t("max_x_ft")
    with pytest.raises(RulebookError, match="has no switch 'nope'"):
        r.s("nope")
    with pytest.raises(RulebookError, match="has no param 'nope'"):
        r.p("nope")
    assert r.p("nope", None) is None
    with pytest.raises(RulebookError, match="has no rule HRV-999"):
        load_rulebook("vestal")["HRV-999"]


# ------------------------------------------------------------------------------------------
# user rulebooks

def test_user_rulebook_extends_changes_threshold_and_switch(tmp_path):
    p = _yaml(tmp_path, "extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n      max_grade_pct: 30\n"
                        "    switches:\n      run_length: slope\n")
    rb = load_rulebook(p)
    assert rb["HRV-010"].t("max_grade_pct") == 30.0
    assert rb["HRV-010"].t("max_run_ft") == 200.0  # unchanged thresholds are inherited
    assert rb["HRV-010"].s("run_length") == "slope"
    assert rb["HRV-010"].switches["run_length"]["choices"] == ["horizontal", "slope"]
    assert len(rb) == 36
    # a changed rulebook is named after its file, never passes for 'vestal'
    assert rb.name == "mine" and rb.extends == "vestal"
    f = rb["HRV-010"].findings("pass", subject_layer="haul_roads", subject_id="R1")
    assert f["rulebook"].tolist() == ["mine"]
    assert "steeper than 30 %" in f["message"].iloc[0] and "25" not in f["message"].iloc[0]
    assert load_rulebook("vestal")["HRV-010"].t("max_grade_pct") == 25.0  # shipped one untouched


def test_user_rulebook_named(tmp_path):
    p = _yaml(tmp_path, "extends: vestal\nrulebook: vestal-2027-draft\n")
    assert load_rulebook(p).name == "vestal-2027-draft"


def test_user_rulebook_chain_relative_to_its_file(tmp_path, monkeypatch):
    _yaml(tmp_path, "extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n      max_grade_pct: 30\n", "base.yaml")
    (tmp_path / "sub").mkdir()
    p = _yaml(tmp_path / "sub", "extends: ../base.yaml\nrules:\n  HRV-010:\n    thresholds:\n      max_run_ft: 150\n")
    monkeypatch.chdir(tmp_path.parent)  # not the files' folder
    rb = load_rulebook(p)
    assert rb["HRV-010"].t("max_grade_pct") == 30.0 and rb["HRV-010"].t("max_run_ft") == 150.0


def test_waiver_is_recorded_in_findings(tmp_path):
    p = _yaml(tmp_path, "extends: vestal\nwaive:\n  HRV-040: \"checklist reviewed at the pre-application meeting\"\n")
    rb = load_rulebook(p)
    rule = rb["HRV-040"]
    assert rule.waived == "checklist reviewed at the pre-application meeting"
    f = rule.findings("review", subject_layer="harvest_area", subject_id="H1", detail="x").iloc[0]
    assert f["waived"] == rule.waived
    assert f["message"] == "Licence condition H1: x [waived: checklist reviewed at the pre-application meeting]"
    assert rb["HRV-010"].waived == ""


def test_new_rule_added(tmp_path):
    p = _yaml(tmp_path, "extends: lockport\nrules:\n  - id: LOC-001\n    title: Local rule\n    group: stormwater\n"
                        "    citation: Local law 1\n    thresholds:\n      max_area_acres: 5\n")
    rb = load_rulebook(p)
    assert "LOC-001" in rb and rb["LOC-001"].t("max_area_acres") == 5.0 and len(rb) == 9


@pytest.mark.parametrize(("text", "match"), [
    ("extends: vestal\nwaive:\n  HRV-040: ''\n", "waiver of HRV-040 needs a reason"),
    ("extends: vestal\nwaive:\n  HRV-999: because\n", "cannot waive HRV-999: no such rule"),
    ("extends: vestal\nwaive: [HRV-040]\n", "'waive' must map rule ids to reasons"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n      max_grade: 30\n",
     "threshold 'max_grade' must end with a unit suffix"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n      max_grade_pct: '30 %'\n",
     r"threshold max_grade_pct = '30 %' is not a number"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    switches:\n      run_length: diagonal\n",
     "switch run_length = 'diagonal' is not one of horizontal, slope"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    switches:\n      colour: red\n", "has no switch 'colour'"),
    ("extends: vestal\nrules:\n  - title: no id\n", "every rule needs an 'id'"),
    ("extends: vestal\nrules:\n  - id: HRV-99\n    title: t\n    group: harvest\n    citation: c\n",
     "rule id 'HRV-99' is not like 'HRV-010'"),
    ("extends: vestal\nrules:\n  - id: HRV-099\n    title: t\n    group: zoning\n    citation: c\n",
     "group 'zoning' is not one of harvest, flood, stormwater, seqr"),
    ("extends: vestal\nrules:\n  - id: HRV-099\n    title: t\n    group: harvest\n", "rule HRV-099 needs a 'citation'"),
    ("extends: nowhere\n", "unknown rulebook 'nowhere'. Available rulebooks: lockport, vestal"),
    ("- just\n- a list\n", "expected a mapping with 'rules:'"),
    ("extends: vestal\nrules: [\n", "not valid YAML at line"),
    ("extends: vestal\nrules: !!python/object/apply:os.system ['echo hi']\n", "Python tags"),
])
def test_bad_user_rulebooks(tmp_path, text, match):
    with pytest.raises(RulebookError, match=match):
        load_rulebook(_yaml(tmp_path, text))


def test_python_tag_is_never_executed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = _yaml(tmp_path, "rules: !!python/object/apply:os.system ['touch pwned.txt']\n")
    with pytest.raises(RulebookError):
        load_rulebook(p)
    assert not (tmp_path / "pwned.txt").exists()


def test_extends_loop(tmp_path):
    _yaml(tmp_path, "extends: b.yaml\n", "a.yaml")
    _yaml(tmp_path, "extends: a.yaml\n", "b.yaml")
    with pytest.raises(RulebookError, match="loops back"):
        load_rulebook(tmp_path / "a.yaml")


def test_unknown_name_lists_available():
    with pytest.raises(RulebookError, match=r"unknown rulebook 'endicott'\. Available rulebooks: lockport, vestal"):
        load_rulebook("endicott")


# ------------------------------------------------------------------------------------------
# findings built by rules, templates, registry

@pytest.mark.parametrize(("key", "text", "match"), [
    ("messages:\n      pass", "'ok {slope_of_moon}'", r"rule HRV-010 messages\.pass: field \{slope_of_moon\} is not a name"),
    ("messages:\n      pass", "'{subject_id.__class__.__mro__}'", r"rule HRV-010 messages\.pass: .*not a plain name"),
    ("messages:\n      violation", "'{detail:>3000000000}'", r"rule HRV-010 messages\.violation: .*width of at most 80"),
    ("messages:\n      review", "'{detail!r}'", r"rule HRV-010 messages\.review: .*conversion"),
    ("messages:\n      fail", "'{detail}'", r"rule HRV-010 messages\.fail: not a status"),
    ("title", "'Steeper than {detail}'", r"rule HRV-010 title: field \{detail\} is not a name"),
    ("summary", "'{max_grade_pct.real}'", r"rule HRV-010 summary: .*not a plain name"),
])
def test_bad_templates_refused_at_load(tmp_path, key, text, match):
    p = _yaml(tmp_path, f"extends: vestal\nrules:\n  - id: HRV-010\n    {key}: {text}\n")
    with pytest.raises(RulebookError, match=match):
        load_rulebook(p)


def test_a_rule_name_may_not_shadow_a_standard_field(tmp_path):
    p = _yaml(tmp_path, "extends: vestal\nrules:\n  - id: HRV-010\n    params:\n      detail: x\n")
    with pytest.raises(RulebookError, match="rule HRV-010 names a threshold, param or switch 'detail'"):
        load_rulebook(p)


def test_finding_fields():
    r = load_rulebook("vestal")["HRV-010"]
    f = r.findings("violation", subject_layer="haul_roads", subject_id=7, measured=412.345, threshold=200,
                   unit="ft", geometry=Point(1, 2), crs="EPSG:2261", detail="from station 0+50")
    assert len(f) == 1 and f.crs.to_epsg() == 2261
    row = f.iloc[0]
    assert (row["rule_id"], row["rulebook"], row["status"], row["subject_id"], row["unit"]) == (
        "HRV-010", "vestal", "violation", "7", "ft")
    assert row["measured"] == 412.345 and row["threshold"] == 200.0 and row.geometry == Point(1, 2)
    assert row["citation"] == r.citation and row["title"] == r.title and row["reading"] == "run_length=horizontal"
    # numbers in messages: 2 decimals, thousands separators, trailing zeros dropped
    assert row["message"] == ("haul_roads 7: 412.35 ft (horizontal length) steeper than 25 %, limit 200 ft "
                              "(from station 0+50).")


def test_bad_status_refused():
    r = load_rulebook("vestal")["HRV-010"]
    with pytest.raises(ValueError, match="status 'ok' is not one of"):
        r.findings("ok", subject_layer="haul_roads", subject_id="R1")
    with pytest.raises(ValueError, match="2 values for 3 subjects"):
        r.findings(["pass", "pass"], subject_id=["R1", "R2", "R3"])
    with pytest.raises(ValueError, match="2 values for 3 subjects"):  # a numeric array is checked too
        r.findings("pass", subject_id=["R1", "R2", "R3"], measured=np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="status 'None' is not one of"):
        r.findings(["pass", None], subject_id=["R1", "R2"])


def test_run_group_without_check_names_the_rule(monkeypatch):
    rb = load_rulebook("lockport")
    monkeypatch.setattr("geoconstraints.rulebook.registry.CHECKS", {})
    with pytest.raises(RulebookError, match=r"rule SWP-001 .* has no check function"):
        run_group(rb, "stormwater", None)


def test_run_group_runs_every_rule(monkeypatch):
    rb = load_rulebook("lockport")
    registry: dict = {}
    monkeypatch.setattr("geoconstraints.rulebook.registry.CHECKS", registry)
    for rule in rb:
        check(rule.id)(lambda ctx, rule: rule.findings("pass", subject_layer="disturbance", subject_id=ctx))
    out = run_group(rb, "stormwater", "D1")
    assert out["rule_id"].tolist() == LOCKPORT_IDS and set(out["subject_id"]) == {"D1"}
    # a group the rulebook does not cover is refused, not an empty (clean-looking) run
    with pytest.raises(RulebookError, match="has no harvest rules"):
        run_group(rb, "harvest", None)


def test_a_check_must_return_a_findings_frame(monkeypatch):
    rb = load_rulebook("lockport")
    registry: dict = {}
    monkeypatch.setattr("geoconstraints.rulebook.registry.CHECKS", registry)
    for rule in rb:
        check(rule.id)(lambda ctx, rule: rule.findings("pass", subject_id="D1"))
    registry["SWP-003"] = lambda ctx, rule: [rule.findings("pass", subject_id="D1")]  # a list, not a frame
    monkeypatch.setattr("geoconstraints.rulebook.registry.RERAISE", True)  # as with --debug
    with pytest.raises(TypeError, match="the check of SWP-003 .* returned list, not a findings frame"):
        run_group(rb, "stormwater", None)
    monkeypatch.setattr("geoconstraints.rulebook.registry.RERAISE", False)  # a run: that rule is not evaluated
    f = run_group(rb, "stormwater", None)
    row = f[f["rule_id"] == "SWP-003"]
    assert row["status"].tolist() == ["not_evaluated"] and "returned list, not a findings frame" in row["message"].iloc[0]


def test_double_registration_refused(monkeypatch):
    registry: dict = {}
    monkeypatch.setattr("geoconstraints.rulebook.registry.CHECKS", registry)

    def first(c, r):
        return r.findings("pass")

    check("ZZZ-001")(first)
    with pytest.raises(RuntimeError, match="two checks registered for ZZZ-001"):
        check("ZZZ-001")(lambda c, r: r.findings("pass"))
    assert registry == {"ZZZ-001": first}
    check("ZZZ-001")(first)  # the same function again is no conflict
    assert registry == {"ZZZ-001": first}


def test_every_shipped_rule_has_a_check():
    for name in available_rulebooks():
        for r in load_rulebook(name):
            assert r.id in CHECKS, (name, r.id)


# ------------------------------------------------------------------------------------------
# the `rules` command

def test_rules_command_prints_catalogue(runner):
    res = runner.invoke(main, ["rules"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("# rulebook vestal") and "36 rules" in lines[0]
    assert [ln.split()[0] for ln in lines[1:]] == sorted(VESTAL_IDS)
    hrv010 = next(ln for ln in lines if ln.startswith("HRV-010"))
    assert "Vestal Code 1966 § 44-VI-6(F)(1)" in hrv010
    assert "max_grade_pct=25" in hrv010 and "max_run_ft=200" in hrv010 and "run_length=horizontal" in hrv010


def test_rules_command_lockport(runner):
    res = runner.invoke(main, ["rules", "--rulebook", "lockport"])
    assert res.exit_code == 0
    assert [ln.split()[0] for ln in res.stdout.splitlines()[1:]] == LOCKPORT_IDS


def test_rules_command_unknown(runner):
    res = runner.invoke(main, ["rules", "--rulebook", "endicott"])
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.strip() == ("error: unknown rulebook 'endicott'. Available rulebooks: lockport, vestal "
                                  "(or a path to your own .yaml file that extends one)")


def test_rules_command_user_file(runner, tmp_path):
    p = _yaml(tmp_path, "extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n      max_grade_pct: 30\n"
                        "waive:\n  HRV-040: done on paper\n")
    res = runner.invoke(main, ["rules", "--rulebook", str(p)])
    assert res.exit_code == 0, res.output
    hrv010 = next(ln for ln in res.stdout.splitlines() if ln.startswith("HRV-010"))
    assert "max_grade_pct=30" in hrv010
    hrv040 = next(ln for ln in res.stdout.splitlines() if ln.startswith("HRV-040"))
    assert hrv040.endswith("[waived: done on paper]")
    assert res.stdout.startswith("# rulebook mine")


@pytest.mark.parametrize("fmt", ["csv", "json", "markdown"])
def test_rules_command_formats(runner, fmt):
    res = runner.invoke(main, ["rules", "--rulebook", "lockport", "--format", fmt])
    assert res.exit_code == 0
    for rid in LOCKPORT_IDS:
        assert rid in res.stdout


def test_rule_dataclass_defaults():
    r = Rule(id="ABC-001", title="t", group="seqr", citation="c")
    f = r.findings("info", detail="hello")
    assert f["message"].tolist() == ["hello"] and f["subject_id"].tolist() == [""]


def test_a_rulebook_without_the_commands_rules_is_refused(tmp_path) -> None:
    # lockport carries only stormwater rules: a harvest or screen run with it must not report
    # "no findings" as if the plan were clean
    from click.testing import CliRunner

    from geoconstraints import sample_path
    from geoconstraints.cli import main

    for cmd in (["harvest", str(sample_path("vestal_sample.gpkg"))],
                ["screen", str(sample_path("vestal_sample.gpkg"))]):
        r = CliRunner().invoke(main, [*cmd, "--rulebook", "lockport", "--out", str(tmp_path / cmd[0])])
        assert r.exit_code == 2, r.output
        assert "rulebook 'lockport' has no" in r.output and "covers stormwater" in r.output
        assert "Traceback" not in r.output
