"""Every threshold of SQR-001 (Vestal Code § 6-28(b)), at, just under and just over its value.

Each bound is "less than" (lt) or "not more than" (le) as the law words it; the comment beside each
case quotes it. Every statement the Type II item needs is given, so the bound alone decides; the
bounds are counts, percentages and acres (no length or map), so there is no metre case.
"""

from __future__ import annotations

import pytest

from geoconstraints.commands import classify_action
from geoconstraints.rulebook.loader import load_rulebook

RB = load_rulebook("vestal")
PASS, REVIEW = "pass", "review"


def status(**kw) -> str:
    return classify_action(RB, **kw).findings.iloc[0]["status"]


@pytest.mark.parametrize("kw, value, expect", [
    # multiple_residence_limit_units = 30: "a multiple residence with less than thirty (30) units"
    ({"action_type": "multiple_residence"}, {"units": 29}, PASS),
    ({"action_type": "multiple_residence"}, {"units": 30}, REVIEW),
    ({"action_type": "multiple_residence"}, {"units": 31}, REVIEW),
    # subdivision_limit_lots = 40: "a subdivision with less than forty (40) houses" (chapter 24 stated)
    ({"action_type": "small_subdivision", "chapter_24": True}, {"lots": 39}, PASS),
    ({"action_type": "small_subdivision", "chapter_24": True}, {"lots": 40}, REVIEW),
    ({"action_type": "small_subdivision", "chapter_24": True}, {"lots": 41}, REVIEW),
    # one_two_family_max_units = 2: "a single-family or two-family residence"
    ({"action_type": "one_two_family_residence"}, {"units": 1}, PASS),
    ({"action_type": "one_two_family_residence"}, {"units": 2}, PASS),
    ({"action_type": "one_two_family_residence"}, {"units": 3}, REVIEW),
    # minor_alteration_limit_pct = 50: "not exceeding fifty (50) percent of original size"
    ({"action_type": "minor_alteration"}, {"expansion_pct": 49.9}, PASS),
    ({"action_type": "minor_alteration"}, {"expansion_pct": 50.0}, PASS),
    ({"action_type": "minor_alteration"}, {"expansion_pct": 50.1}, REVIEW),
    # reconstruction_expansion_limit_pct = 50: "expanded by less than fifty (50) percent"
    ({"action_type": "restoration_reconstruction"}, {"expansion_pct": 49.9}, PASS),
    ({"action_type": "restoration_reconstruction"}, {"expansion_pct": 50.0}, REVIEW),
    ({"action_type": "restoration_reconstruction"}, {"expansion_pct": 50.1}, REVIEW),
    # highway_maintenance_expansion_limit_pct = 50: "will not increase its size or usage by more than fifty"
    ({"action_type": "highway_maintenance_site_expansion"}, {"expansion_pct": 49.9}, PASS),
    ({"action_type": "highway_maintenance_site_expansion"}, {"expansion_pct": 50.0}, PASS),
    ({"action_type": "highway_maintenance_site_expansion"}, {"expansion_pct": 50.1}, REVIEW),
    # highway_row_added_acres_per_mile = 3: "less than three (3) additional acres of right-of-way per mile"
    ({"action_type": "highway_reconstruction", "lanes": 1, "no_effect_on": ("all",)}, {"acres": 2.99}, PASS),
    ({"action_type": "highway_reconstruction", "lanes": 1, "no_effect_on": ("all",)}, {"acres": 3.0}, REVIEW),
    ({"action_type": "highway_reconstruction", "lanes": 1, "no_effect_on": ("all",)}, {"acres": 3.01}, REVIEW),
    # highway_added_travel_lanes_count = 1: "the addition of not more than one (1) travel lane"
    ({"action_type": "highway_reconstruction", "acres": 1.0, "no_effect_on": ("all",)}, {"lanes": 0}, PASS),
    ({"action_type": "highway_reconstruction", "acres": 1.0, "no_effect_on": ("all",)}, {"lanes": 1}, PASS),
    ({"action_type": "highway_reconstruction", "acres": 1.0, "no_effect_on": ("all",)}, {"lanes": 2}, REVIEW),
    # highway_repaving_added_lanes_count = 0: "not involving the addition of new travel lanes" (under 0: none)
    ({"action_type": "highway_repaving"}, {"lanes": 0}, PASS),
    ({"action_type": "highway_repaving"}, {"lanes": 1}, REVIEW),
    # surplus_property_limit_acres = 25: "other than parcels of land exceeding twenty-five (25) acres"
    ({"action_type": "surplus_property_sale"}, {"acres": 24.99}, PASS),
    ({"action_type": "surplus_property_sale"}, {"acres": 25.0}, PASS),
    ({"action_type": "surplus_property_sale"}, {"acres": 25.01}, REVIEW),
])
def test_type_ii_bounds(kw, value, expect):
    f = classify_action(RB, **kw, **value).findings.iloc[0]
    assert f["status"] == expect, f["message"]
    key = next(iter(value))
    if key != "lanes" or kw["action_type"] == "highway_repaving":
        assert f["measured"] == pytest.approx(float(value[key]))


def test_money_and_days_are_stated():
    # deis_fee_usd = 50 ("a fee of fifty dollars ($50.00)"); feis_decision_days = 30 ("within thirty (30)
    # calendar days of the filing of the final environmental impact statement"): stated in every review
    f = classify_action(RB, action_type="unlisted").findings.iloc[0]
    assert f["status"] == REVIEW
    assert "fee of $50" in f["message"] and "within 30 calendar days" in f["message"]
    assert "unless extended by mutual consent" in f["message"]


@pytest.mark.parametrize("given, expect", [
    # C-1 / C-2 / CD construction: Type II only upon a completed EIS, without board approval, not Type I
    ({}, "not_evaluated"),
    ({"eis_completed": True}, "not_evaluated"),
    ({"eis_completed": True, "type_i": False}, PASS),
    ({"eis_completed": False, "type_i": False}, REVIEW),
    ({"eis_completed": True, "type_i": True}, REVIEW),
])
def test_commercial_zone_statements(given, expect):
    assert status(action_type="commercial_zone_construction", district="C-2", board_approval=False, **given) == expect


@pytest.mark.parametrize("no_effect_on, affects, expect", [
    # highway reconstruction: "no significant effect on ... historic sites, wetlands, parklands and floodplains"
    ((), (), "not_evaluated"),
    (("wetlands", "parklands", "floodplains"), (), "not_evaluated"),  # historic not stated
    (("wetlands", "parklands", "floodplains", "historic"), (), PASS),
    (("all",), (), PASS),
    (("wetlands", "parklands", "floodplains"), ("historic",), REVIEW),
])
def test_highway_reconstruction_effects_stated_one_by_one(no_effect_on, affects, expect):
    assert status(action_type="highway_reconstruction", acres=1.0, lanes=1, no_effect_on=no_effect_on,
                  affects=affects) == expect
