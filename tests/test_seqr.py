"""Tests for geoconstraints.seqr (SQR-001) and the ``seqr`` command.

Classification cases sit at and around every bound of the Type II list in Vestal Code § 6-28(b)
(values from the vestal rulebook): multiple residence < 30 units, subdivision < 40 houses, minor
alteration <= 50 %, restoration / reconstruction < 50 %, highway maintenance site <= 50 %,
highway reconstruction < 3 acres of right-of-way per mile and no effect on wetlands, parklands,
floodplains or historic sites, surplus property except parcels over 25 acres, C-1/C-2/CD
construction not needing board approval.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from geoconstraints.cli import main
from geoconstraints.commands import classify_action
from geoconstraints.errors import InputError, RulebookError
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rules.seqr import action_types

RB = load_rulebook("vestal")

PASS, REVIEW, NE = "pass", "review", "not_evaluated"

CASES = [
    # action_type, options, expected status, text the message must hold
    ("multiple_residence", {"units": 29}, PASS, "29 units is less than 30"),
    ("multiple_residence", {"units": 30}, REVIEW, "30 units is not less than 30"),
    ("multiple_residence", {"units": 31}, REVIEW, "not Type II"),
    ("multiple_residence", {}, NE, "give units"),
    ("small_subdivision", {"lots": 39, "chapter_24": True}, PASS, "39 houses is less than 40"),
    ("small_subdivision", {"lots": 40, "chapter_24": True}, REVIEW, "40 houses is not less than 40"),
    ("small_subdivision", {"lots": 41, "chapter_24": True}, REVIEW, "41 houses is not less than 40"),
    # § 6-28(b)(1): "houses which have been developed in accordance with chapter 24" must be stated
    ("small_subdivision", {"lots": 39}, NE, "say whether the subdivision's houses are developed in accordance"),
    ("small_subdivision", {"lots": 39, "chapter_24": False}, REVIEW, "not developed in accordance with chapter 24"),
    ("minor_alteration", {"expansion_pct": 50}, PASS, "50 % is not more than 50"),
    ("minor_alteration", {"expansion_pct": 50.1}, REVIEW, "50.1 % is more than 50"),
    ("restoration_reconstruction", {"expansion_pct": 49.9}, PASS, "49.9 % is less than 50"),
    ("restoration_reconstruction", {"expansion_pct": 50}, REVIEW, "50 % is not less than 50"),
    ("highway_maintenance_site_expansion", {"expansion_pct": 50}, PASS, "not more than 50"),
    ("highway_maintenance_site_expansion", {"expansion_pct": 51}, REVIEW, "not Type II"),
    ("highway_reconstruction", {"acres": 2.99, "lanes": 1, "no_effect_on": ("all",)}, PASS,
     "2.99 acres per mile of right-of-way is less than 3"),
    ("highway_reconstruction", {"acres": 3, "lanes": 1, "no_effect_on": ("all",)}, REVIEW,
     "3 acres per mile of right-of-way is not less than 3"),
    # § 6-28(b)(9)b: no significant effect on historic sites, wetlands, parklands, floodplains: each stated
    ("highway_reconstruction", {"acres": 1, "lanes": 1}, NE,
     "state whether the action has a significant effect on wetlands, parklands, floodplains, historic"),
    ("highway_reconstruction", {"acres": 1, "lanes": 1, "no_effect_on": ("wetlands", "parklands", "floodplains")},
     NE, "significant effect on historic"),
    ("highway_reconstruction", {"acres": 1, "lanes": 1, "no_effect_on": ("wetlands", "parklands", "floodplains",
                                                                          "historic")}, PASS,
     "stated: no significant effect on wetlands, parklands, floodplains, historic"),
    ("highway_reconstruction", {"acres": 1, "affects": ("wetlands",)}, REVIEW, "affects wetlands"),
    ("highway_reconstruction", {"acres": 1, "affects": ("historic", "parklands")}, REVIEW, "affects historic, parklands"),
    # § 6-28(b)(9): "the addition of not more than one (1) travel lane": 1 -> Type II, 2 -> not
    ("highway_reconstruction", {"acres": 1, "lanes": 1, "no_effect_on": ("all",)}, PASS,
     "1 travel lanes added is not more than 1"),
    ("highway_reconstruction", {"acres": 1, "lanes": 0, "no_effect_on": ("all",)}, PASS,
     "0 travel lanes added is not more than 1"),
    ("highway_reconstruction", {"acres": 1, "lanes": 2}, REVIEW, "2 travel lanes added is more than 1"),
    ("highway_reconstruction", {"acres": 1}, NE, "give lanes"),
    # § 6-28(b)(8): repaving "not involving the addition of new travel lanes": 0 -> Type II, 1 -> not
    ("highway_repaving", {"lanes": 0}, PASS, "0 travel lanes added is not more than 0"),
    ("highway_repaving", {"lanes": 1}, REVIEW, "1 travel lanes added is more than 0"),
    ("highway_repaving", {}, NE, "give lanes"),
    ("surplus_property_sale", {"acres": 25}, PASS, "25 acres is not more than 25"),
    ("surplus_property_sale", {"acres": 25.5}, REVIEW, "not Type II"),
    ("commercial_zone_construction", {"district": "C-1", "board_approval": False, "eis_completed": True,
                                      "type_i": False}, PASS, "C-1 is one of C-1, C-2, CD"),
    ("commercial_zone_construction", {"district": "cd", "board_approval": False, "eis_completed": True,
                                      "type_i": False}, PASS, "Type II"),
    # the district compared as the harvest rules compare it: case, spaces, hyphens, dots do not count
    ("commercial_zone_construction", {"district": "c 1", "board_approval": False, "eis_completed": True,
                                      "type_i": False}, PASS, "c 1 is one of C-1, C-2, CD"),
    ("commercial_zone_construction", {"district": "C2", "board_approval": False, "eis_completed": True,
                                      "type_i": False}, PASS, "Type II"),
    # § 6-28(b)(3): "upon completion of an environmental impact statement ... not otherwise ... type I"
    ("commercial_zone_construction", {"district": "C-1", "board_approval": False}, NE,
     "say whether an environmental impact statement has been completed (--eis-completed or --eis-not-completed)"),
    ("commercial_zone_construction", {"district": "C-1", "board_approval": False, "eis_completed": True}, NE,
     "say whether the action falls within a Type I designation"),
    ("commercial_zone_construction", {"district": "C-1", "board_approval": False, "eis_completed": False,
                                      "type_i": False}, REVIEW, "no environmental impact statement has been completed"),
    ("commercial_zone_construction", {"district": "C-1", "board_approval": False, "eis_completed": True,
                                      "type_i": True}, REVIEW, "the action falls within a Type I designation"),
    ("commercial_zone_construction", {"district": "C-1", "board_approval": True}, REVIEW, "needs town board"),
    ("commercial_zone_construction", {"district": "RA-1", "board_approval": False}, REVIEW, "RA-1 is not one of"),
    ("commercial_zone_construction", {"district": "C-2"}, NE, "--board-approval"),
    ("one_two_family_residence", {}, PASS, "Type II"),
    ("one_two_family_residence", {"units": 1}, PASS, "1 units is not more than 2"),
    ("one_two_family_residence", {"units": 2}, PASS, "2 units is not more than 2"),
    ("one_two_family_residence", {"units": 3}, REVIEW, "3 units is more than 2"),
    # § 6-28(b)(19): town actions "except as either specifically set forth in type I activities": stated
    ("budget_and_town_actions", {}, NE, "say whether the action falls within a Type I designation"),
    ("budget_and_town_actions", {"type_i": True}, REVIEW, "not Type II under Vestal Code § 6-28(b)(19)"),
    # ... "or unless the town board shall determine by resolution that the activity may have a
    # significant impact on the environment": stated too (was Type II with --not-type-i alone)
    ("budget_and_town_actions", {"type_i": False}, NE,
     ("say whether the town board has determined by resolution that the activity may have a significant impact "
      "on the environment (--board-resolved-significant or --no-board-resolution)")),
    ("budget_and_town_actions", {"type_i": False, "board_resolved_significant": True}, REVIEW,
     "stated: the town board has determined by resolution that the activity may have a significant impact"),
    ("budget_and_town_actions", {"type_i": False, "board_resolved_significant": False}, PASS,
     "stated: the action falls within no Type I designation; stated: the town board has made no resolution"),
    ("budget_and_town_actions", {"type_i": True, "board_resolved_significant": False}, REVIEW,
     "stated: the action falls within a Type I designation"),
    # § 6-22(8) actions of the town "except as specifically provided in this article to the contrary":
    # Type I actions "shall always require environmental assessment" (§ 6-28(a)); was exempt unasked
    ("legislature_court_town", {}, NE, "say whether the action falls within a Type I designation"),
    ("legislature_court_town", {"type_i": True}, REVIEW, "not exempt under Vestal Code § 6-22(8)"),
    ("legislature_court_town", {"type_i": False}, PASS, "exempt action"),
    ("sign_permit", {}, PASS, "§ 6-28(b)(2)"),
    ("ministerial_action", {}, PASS, "exempt action"),
    ("emergency_action", {}, PASS, "§ 6-22(7)"),
    ("type_i", {}, REVIEW, "always requires environmental assessment"),
    ("unlisted", {}, REVIEW, "fee of $50"),
]


@pytest.mark.parametrize("action, opts, status, text", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_classification_table(action, opts, status, text):
    res = classify_action(RB, action_type=action, **opts)
    assert len(res.findings) == 1
    f = res.findings.iloc[0]
    assert f["rule_id"] == "SQR-001"
    assert f["status"] == status, f["message"]
    assert text in f["message"]


def test_type_ii_names_item_and_citation_and_bound():
    f = classify_action(RB, action_type="multiple_residence", units=12).findings.iloc[0]
    assert "A multiple residence with less than 30 units" in f["message"]
    assert "Vestal Code § 6-28(b)(1)" in f["message"]
    assert f["measured"] == 12 and f["threshold"] == 30 and f["unit"] == "units"


def test_review_carries_determination_and_deis_fee():
    f = classify_action(RB, action_type="small_subdivision", lots=45).findings.iloc[0]
    assert f["status"] == "review"
    assert "determination of significance" in f["message"]
    assert "$50" in f["message"] and "6-26" in f["message"] and "6-23" in f["message"]


def test_threshold_changes_in_a_user_rulebook_move_the_bound(tmp_path):
    p = tmp_path / "mytown.yaml"
    p.write_text("extends: vestal\nrulebook: mytown\nrules:\n  - id: SQR-001\n    thresholds:\n"
                 "      multiple_residence_limit_units: 20\n")
    rb = load_rulebook(p)
    f = classify_action(rb, action_type="multiple_residence", units=25).findings.iloc[0]
    assert f["status"] == "review" and f["threshold"] == 20 and "25 units is not less than 20" in f["message"]
    # the list item's text and the bound both say 20, never the shipped 30
    ok = classify_action(rb, action_type="multiple_residence", units=12).findings.iloc[0]
    assert "with less than 20 units" in ok["message"] and "12 units is less than 20" in ok["message"]
    assert "30 units" not in ok["message"] + f["message"]  # (30 calendar days after a final EIS is another number)
    assert rb["SQR-001"].p("type_ii_actions")[1]["text_template"].startswith(
        "A multiple residence with less than {multiple_residence_limit_units} units")
    assert classify_action(RB, action_type="multiple_residence", units=25).findings["status"][0] == "pass"


def test_unknown_action_type_lists_known_ones():
    with pytest.raises(InputError, match=r"unknown SEQR action type 'skyscraper'.*multiple_residence"):
        classify_action(RB, action_type="skyscraper")


def test_bad_values():
    with pytest.raises(InputError, match="seqr units = -1: -1 is negative"):
        classify_action(RB, action_type="multiple_residence", units=-1)
    for bad in (float("nan"), float("inf")):  # from Python as from the CLI: never read against a bound
        with pytest.raises(InputError, match="seqr units = .*not a finite number"):
            classify_action(RB, action_type="multiple_residence", units=bad)
        with pytest.raises(InputError, match="seqr acres = .*not a finite number"):
            classify_action(RB, action_type="highway_reconstruction", acres=bad)
    with pytest.raises(InputError, match="--affects forests"):
        classify_action(RB, action_type="highway_reconstruction", acres=1, affects=("forests",))
    with pytest.raises(InputError, match="--no-effect-on forests"):
        classify_action(RB, action_type="highway_reconstruction", acres=1, no_effect_on=("forests",))
    with pytest.raises(InputError, match="wetlands: stated both affected"):
        classify_action(RB, action_type="highway_reconstruction", acres=1, affects=("wetlands",),
                        no_effect_on=("all",))


FRACTIONS = [  # the counts SQR-001's bounds compare (thresholds _units, _lots, _lanes_count), each just under
    # a bound where the fraction read as a pass: 29.5 units "less than 30", 39.5 houses "less than 40",
    # 1.5 units "not more than 2", 0.5 lanes "not more than 1" (reconstruction) or more than 0 (repaving)
    ("multiple_residence", {"units": 29.5}, "units", "29.5"),
    ("one_two_family_residence", {"units": 1.5}, "units", "1.5"),
    ("small_subdivision", {"lots": 39.5, "chapter_24": True}, "lots", "39.5"),
    ("highway_reconstruction", {"acres": 1, "lanes": 0.5, "no_effect_on": ("all",)}, "lanes", "0.5"),
    ("highway_repaving", {"lanes": 0.25}, "lanes", "0.25"),
]


@pytest.mark.parametrize("action, opts, name, value", FRACTIONS, ids=[f[0] for f in FRACTIONS])
def test_a_count_with_a_fraction_is_refused_from_python(action, opts, name, value):
    # the CLI's --units/--lots/--lanes took whole numbers only; classify_action classified 29.5 dwelling units
    # as Type II (< 30). A count is whole: refused naming the value and the fix, as the CLI refuses it
    with pytest.raises(InputError, match=(rf"^seqr {name} = {value}: {value} is not a whole number\. "
                                          r"Give a whole number of 0 or more \(a count\), or leave it out \(None\)$")):
        classify_action(RB, action_type=action, **opts)


def test_a_whole_count_written_as_a_float_is_the_count():
    # 30.0 is 30 units (pandas, numpy and JSON give whole counts as floats): at the bound, not refused
    assert classify_action(RB, action_type="multiple_residence", units=30.0).findings["status"][0] == REVIEW
    assert classify_action(RB, action_type="multiple_residence", units=29.0).findings["status"][0] == PASS
    # sizes that are no counts keep their fractions
    assert classify_action(RB, action_type="minor_alteration", expansion_pct=49.5).findings["status"][0] == PASS


def test_lockport_has_no_seqr_rule():
    with pytest.raises(RulebookError, match="SQR-001"):
        classify_action(load_rulebook("lockport"), action_type="multiple_residence", units=3)


def test_action_types_lists_selectable_entries():
    types = action_types()
    assert "multiple_residence" in types and "ministerial_action" in types and "type_i" in types
    assert "type_ii_action" not in types  # choose the Type II item itself
    assert types["multiple_residence"].startswith("Type II:")
    assert types["ministerial_action"].startswith("exempt:")
    n = sum(len(RB["SQR-001"].p(g)) for g in ("exempt_actions", "type_ii_actions", "other_actions"))
    assert len(types) == n - 1


# CLI ---------------------------------------------------------------------------------------------

def test_cli_seqr_type_ii_and_review():
    r = CliRunner().invoke(main, ["seqr", "--action-type", "multiple-residence", "--units", "29"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("SQR-001 pass:") and "Type II" in r.output
    r = CliRunner().invoke(main, ["seqr", "--action-type", "multiple_residence", "--units", "30"])
    assert r.exit_code == 0 and "SQR-001 review:" in r.output


def test_cli_seqr_highway_flags():
    r = CliRunner().invoke(main, ["seqr", "--action-type", "highway_reconstruction", "--acres", "2",
                                  "--affects", "floodplains"])
    assert r.exit_code == 0 and "review" in r.output and "affects floodplains" in r.output
    r = CliRunner().invoke(main, ["seqr", "--action-type", "highway_reconstruction", "--acres", "2",
                                  "--lanes", "2"])
    assert r.exit_code == 0 and "review" in r.output and "2 travel lanes added is more than 1" in r.output
    r = CliRunner().invoke(main, ["seqr", "--action-type", "commercial_zone_construction", "--district", "C-2",
                                  "--no-board-approval"])
    assert r.exit_code == 0 and "SQR-001 not_evaluated" in r.output and "--eis-completed" in r.output
    r = CliRunner().invoke(main, ["seqr", "--action-type", "commercial_zone_construction", "--district", "C-2",
                                  "--no-board-approval", "--eis-completed", "--not-type-i"])
    assert r.exit_code == 0 and "SQR-001 pass" in r.output
    r = CliRunner().invoke(main, ["seqr", "--action-type", "highway_reconstruction", "--acres", "2", "--lanes", "1"])
    assert r.exit_code == 0 and "SQR-001 not_evaluated" in r.output and "--no-effect-on" in r.output
    r = CliRunner().invoke(main, ["seqr", "--action-type", "highway_reconstruction", "--acres", "2", "--lanes", "1",
                                  "--no-effect-on", "all"])
    assert r.exit_code == 0 and "SQR-001 pass" in r.output
    r = CliRunner().invoke(main, ["seqr", "--action-type", "small_subdivision", "--lots", "12",
                                  "--per-chapter-24"])
    assert r.exit_code == 0 and "SQR-001 pass" in r.output


def test_cli_seqr_town_action_board_resolution():
    # § 6-28(b)(19): a town action is Type II only when not Type I and no board resolution is stated
    base = ["seqr", "--action-type", "budget_and_town_actions", "--not-type-i"]
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 0, r.output
    assert "SQR-001 not_evaluated" in r.output and "--board-resolved-significant or --no-board-resolution" in r.output
    r = CliRunner().invoke(main, [*base, "--board-resolved-significant"])
    assert r.exit_code == 0 and "SQR-001 review" in r.output and "determined by resolution" in r.output
    r = CliRunner().invoke(main, [*base, "--no-board-resolution"])
    assert r.exit_code == 0 and "SQR-001 pass" in r.output and "made no resolution" in r.output
    # the statement is shown among the run's options
    assert classify_action(RB, action_type="budget_and_town_actions", type_i=False,
                           board_resolved_significant=False).options["board_resolved_significant"] is False


def test_cli_seqr_unknown_exits_2():
    r = CliRunner().invoke(main, ["seqr", "--action-type", "skyscraper"])
    assert r.exit_code == 2
    assert "unknown SEQR action type" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_cli_seqr_list_actions():
    r = CliRunner().invoke(main, ["seqr", "--list-actions"])
    assert r.exit_code == 0
    assert "multiple_residence: Type II" in r.output
    assert len(r.output.strip().splitlines()) == len(action_types())


def test_cli_seqr_writes_outputs(tmp_path):
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["seqr", "--action-type", "sign_permit", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert (out / "findings.geojson").exists() and (out / "report.html").exists()


# the district of a SEQR list item read with the rulebook's town_districts (a value naming none of the
# town's districts is unknown, as the harvest rules read zoning values), not "not one of"

_TOWN = "[RA-1, RA-2, RC, RR, C-1, C-2, CD]"
_C1 = {"action_type": "commercial_zone_construction", "board_approval": False, "eis_completed": True, "type_i": False}


@pytest.fixture(scope="module")
def town_rb(tmp_path_factory):
    path = tmp_path_factory.mktemp("town") / "town.yaml"
    path.write_text(f"extends: vestal\ntown_districts: {_TOWN}\n")
    return load_rulebook(path)


def test_misspelt_district_with_town_districts_is_unknown_not_a_failed_condition(town_rb):
    f = classify_action(town_rb, **_C1, district="C-l").findings.iloc[0]
    assert f["status"] == NE, f["message"]  # before: review, "district C-l is not one of C-1, C-2, CD"
    assert ("give a zoning district of the town: 'C-l' names none of the town's districts "
            "(RA-1, RA-2, RC, RR, C-1, C-2, CD), so whether it is one of C-1, C-2, CD is unknown") in f["message"]
    assert "is not one of" not in f["message"]


def test_district_with_and_without_town_districts(town_rb):
    # a spelling of one of the town's districts reads as before, with or without town_districts
    for rb in (RB, town_rb):
        assert classify_action(rb, **_C1, district="c 1").findings["status"][0] == PASS
        f = classify_action(rb, **_C1, district="RA-1").findings.iloc[0]
        assert f["status"] == REVIEW and "district RA-1 is not one of C-1, C-2, CD" in f["message"]
    # without town_districts the rulebook cannot tell a typo from another district: not one of (not a pass)
    f = classify_action(RB, **_C1, district="C-l").findings.iloc[0]
    assert f["status"] == REVIEW and "district C-l is not one of C-1, C-2, CD" in f["message"]
    # a failed condition still outweighs the unknown district: board approval needed is not Type II
    f = classify_action(town_rb, **{**_C1, "board_approval": True}, district="C-l").findings.iloc[0]
    assert f["status"] == REVIEW and "needs town board" in f["message"]
    # blank is no district given
    f = classify_action(town_rb, **_C1, district=" ").findings.iloc[0]
    assert f["status"] == NE and "give the zoning district (the item covers C-1, C-2, CD)" in f["message"]


def test_cli_seqr_unknown_district_of_the_town(tmp_path):
    rb = tmp_path / "town.yaml"
    rb.write_text(f"extends: vestal\ntown_districts: {_TOWN}\n")
    r = CliRunner().invoke(main, ["seqr", "--rulebook", str(rb), "--action-type", "commercial_zone_construction",
                                  "--district", "C-l", "--no-board-approval", "--eis-completed", "--not-type-i"])
    assert r.exit_code == 0, r.output
    assert "SQR-001 not_evaluated" in r.output and "'C-l' names none of the town's districts" in r.output
