"""Tests for geoconstraints.units' float-noise tests: over_limit, at_most, under_limit, at_least.

"At the limit" means within REL_NOISE (1e-9) of it, relative to the limit; the expected values are
hand computed (0.5 acre = 21,780 sq ft; 1e-9 of it is 0.0000218 sq ft), and the old inline formulas
the functions replaced (``value > limit * (1 + 1e-9)``, the grade's ``limit + 1e-9 * max(|limit|, 1)``)
are checked bit for bit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from geoconstraints.units import (
    LENGTH_NOISE_FT,
    REL_NOISE,
    SQFT_PER_ACRE,
    at_least,
    at_most,
    over_limit,
    under_limit,
)

HALF_ACRE_SQFT = 21_780.0

# sq ft -> (over, at most, under, at least) against 0.5 acre
HALF_ACRE_CASES = [
    (21_780.0, False, True, False, True),  # exactly
    (21_780.000000012, False, True, False, True),  # drawn exactly, measured just over (float noise)
    (21_779.999999993, False, True, False, True),  # drawn exactly, measured just under (float noise)
    (21_781.5, True, False, False, True),  # over by 1.5 sq ft
    (21_779.99, False, True, True, False),  # under by 0.01 sq ft
    (21_780.0 * (1 + 2e-9), True, False, False, True),  # beyond the noise: over
    (21_780.0 * (1 - 2e-9), False, True, True, False),  # beyond the noise: under
]


def test_constants() -> None:
    assert REL_NOISE == 1e-9 and LENGTH_NOISE_FT == 1e-6


@pytest.mark.parametrize("sqft, over, most, under, least", HALF_ACRE_CASES)
def test_half_acre_at_just_under_and_just_over(sqft, over, most, under, least) -> None:
    acres = sqft / SQFT_PER_ACRE
    got = (over_limit(acres, 0.5), at_most(acres, 0.5), under_limit(acres, 0.5), at_least(acres, 0.5))
    assert tuple(bool(g) for g in got) == (over, most, under, least)
    # the same in square feet: the noise is relative, so the unit does not matter
    got_sqft = (over_limit(sqft, HALF_ACRE_SQFT), at_most(sqft, HALF_ACRE_SQFT), under_limit(sqft, HALF_ACRE_SQFT),
                at_least(sqft, HALF_ACRE_SQFT))
    assert tuple(bool(g) for g in got_sqft) == (over, most, under, least)


def test_arrays_give_the_scalars_answers_element_wise() -> None:
    sqft = np.array([c[0] for c in HALF_ACRE_CASES])
    acres = sqft / SQFT_PER_ACRE
    for fn, col in ((over_limit, 1), (at_most, 2), (under_limit, 3), (at_least, 4)):
        want = [c[col] for c in HALF_ACRE_CASES]
        got = fn(acres, 0.5)
        assert isinstance(got, np.ndarray) and got.dtype == bool and got.shape == acres.shape
        assert got.tolist() == want, fn.__name__
        assert fn(pd.Series(acres), 0.5).tolist() == want  # a Series too
        assert fn(list(acres), 0.5).tolist() == want  # a list too
        assert fn(acres, np.full(len(acres), 0.5)).tolist() == want  # a limit per element


def test_scalars_give_numpy_bools() -> None:
    for fn in (over_limit, at_most, under_limit, at_least):
        out = fn(200.0, 200.0)
        assert isinstance(out, np.bool_) and np.ndim(out) == 0
    assert bool(over_limit(200.01, 200)) and not over_limit(200, 200)  # ints are fine


def test_broadcasting_a_limit_per_row() -> None:
    values = np.array([[0.5, 1.0, 1.5], [3.0, 4.0, 5.0]])
    half = np.array([[1.0], [4.0]])
    assert under_limit(values, half).tolist() == [[True, False, False], [True, False, False]]
    assert at_most(values, half).tolist() == [[True, True, False], [True, True, False]]


def test_nan_is_never_over_under_at_most_or_at_least() -> None:
    for fn in (over_limit, at_most, under_limit, at_least):
        assert not fn(np.nan, 0.5), fn.__name__  # value NaN
        assert not fn(0.5, np.nan), fn.__name__  # limit NaN
        assert fn(np.array([np.nan, 0.5]), 0.5).tolist()[0] is False
    # hence "not over" is not "at most" for NaN: a caller picks which it means
    assert bool(~over_limit(np.nan, 0.5)) and not at_most(np.nan, 0.5)


def test_infinities() -> None:
    assert bool(over_limit(np.inf, 1e15)) and not over_limit(-np.inf, 0.0)
    assert bool(under_limit(-np.inf, 0.0)) and bool(at_most(1e15, np.inf)) and not over_limit(np.inf, np.inf)


def test_a_limit_of_zero_has_no_relative_noise() -> None:
    # relative to nothing: any positive value is over 0, any negative one under it
    assert over_limit([-1e-300, 0.0, -0.0, 1e-300, 1.0], 0.0).tolist() == [False, False, False, True, True]
    assert under_limit([-1e-300, 0.0, -0.0, 1e-300], 0.0).tolist() == [True, False, False, False]
    assert at_most([0.0, 1e-300], 0.0).tolist() == [True, False]
    assert at_least([0.0, -1e-300], 0.0).tolist() == [True, False]


def test_min_scale_gives_a_limit_of_zero_noise() -> None:
    # a grade: the noise is relative to at least 1 %, so 1e-9 % of noise over a 0 % limit
    assert over_limit([1e-10, 1e-9, 2e-9], 0.0, min_scale=1.0).tolist() == [False, False, True]
    assert under_limit([-2e-9, -1e-10], 0.0, min_scale=1.0).tolist() == [True, False]
    # over a limit larger than min_scale, min_scale changes nothing (up to the last bit of the bound)
    assert over_limit([25.0, 25.0 * (1 + 0.5e-9), 25.0 * (1 + 2e-9)], 25.0, min_scale=1.0).tolist() == [
        False, False, True]


def test_negative_values_and_limits() -> None:
    # negative values against a positive limit: never over, always under
    assert over_limit([-5.0, -0.5], 0.5).tolist() == [False, False]
    assert under_limit([-5.0, -0.5], 0.5).tolist() == [True, True]
    # a negative limit: its noise is relative to its magnitude, on the same side as for a positive one
    lim = -2.0
    vals = [-2.0, -2.0 * (1 - 0.5e-9), -2.0 * (1 + 0.5e-9), -1.99, -2.01]
    assert over_limit(vals, lim).tolist() == [False, False, False, True, False]
    assert at_most(vals, lim).tolist() == [True, True, True, False, True]
    assert under_limit(vals, lim).tolist() == [False, False, False, False, True]
    assert at_least(vals, lim).tolist() == [True, True, True, True, False]


def test_at_most_is_not_over_and_at_least_is_not_under_for_numbers() -> None:
    rng = np.random.default_rng(7)
    lim = rng.uniform(-1e6, 1e6, 500)
    vals = lim * (1 + rng.choice([-3e-9, -1e-9, -0.5e-9, 0.0, 0.5e-9, 1e-9, 3e-9], 500))
    assert (at_most(vals, lim) == ~over_limit(vals, lim)).all()
    assert (at_least(vals, lim) == ~under_limit(vals, lim)).all()
    assert not (over_limit(vals, lim) & under_limit(vals, lim)).any()


def test_a_lot_drawn_exactly_at_state_plane_coordinates_is_at_the_limit() -> None:
    # 150 x 145.2 ft = 21,780 sq ft = 0.5 acre, drawn at coordinates of NY Central (ftUS) and elsewhere:
    # the measured area is off in its last digits, never over or under the limit
    origins = [(0, 0), (900_000, 700_000), (1_000_123.4, 750_321.7), (2_000_000, 800_000), (300_000.3, 200_000.9)]
    areas = np.array([shapely.box(x, y, x + 150, y + 145.2).area for x, y in origins])
    assert (areas != HALF_ACRE_SQFT).any()  # the noise is real
    acres = areas / SQFT_PER_ACRE
    assert not over_limit(acres, 0.5).any() and not under_limit(acres, 0.5).any()
    assert at_most(acres, 0.5).all() and at_least(acres, 0.5).all()


@settings(max_examples=300, deadline=None)
@given(st.floats(0, 1e12, allow_nan=False), st.floats(-1e-8, 1e-8, allow_nan=False), st.floats(-1e12, 1e12))
def test_bit_for_bit_the_formulas_replaced(limit, rel, value) -> None:
    # the inline tests the functions replaced, for the limits the rulebook allows (0 or more)
    for v in (value, limit * (1 + rel), limit + rel):
        assert bool(over_limit(v, limit)) == (v > limit * (1 + 1e-9))
        assert bool(at_most(v, limit)) == (v <= limit * (1 + 1e-9))
        assert bool(under_limit(v, limit)) == (v < limit * (1 - 1e-9))
        assert bool(at_least(v, limit)) == (v >= limit * (1 - 1e-9))
        assert bool(over_limit(v, limit, min_scale=1.0)) == (v > limit + 1e-9 * max(abs(limit), 1.0))


# ------------------------------------------------------------------------------------------
# A yes/no is not a number: Python reads True as 1 and False as 0 (float(True) == 1.0)

@pytest.mark.parametrize("value, said", [
    (True, "True"), (False, "False"), (np.True_, "True"), (np.False_, "False"), (np.array(True), "True"),
])
def test_a_bool_is_not_a_number(value, said) -> None:
    from geoconstraints.units import elevation_problem, number_problem

    why = f"{said} is not a number (a yes/no value)"
    assert number_problem(value) == why
    assert number_problem(value, minimum=0, whole=True) == why  # units=True was 1 unit, openings=False 0 openings
    assert number_problem(value, minimum=0, above=True) == why
    assert elevation_problem(value) == why


@pytest.mark.parametrize("value", [np.int64(29), np.int32(0), np.uint8(7), np.float64(12.5), np.float32(0.25),
                                   29, 12.5, "30.0"])
def test_numpy_integers_and_floats_are_numbers(value) -> None:
    from geoconstraints.units import elevation_problem, number_problem

    assert number_problem(value, minimum=0) == "" and elevation_problem(value) == ""
    assert number_problem(np.int64(30), minimum=0, whole=True) == ""
    assert number_problem(np.float64(29.5), minimum=0, whole=True) == "29.5 is not a whole number"


def test_a_bool_given_for_a_number_from_python_is_refused_naming_it() -> None:
    from geoconstraints import load_layers, load_rulebook, sample_path
    from geoconstraints.commands import check_site, classify_action
    from geoconstraints.errors import InputError

    rb = load_rulebook("vestal")
    with pytest.raises(InputError, match=r"^seqr units = True: True is not a number \(a yes/no value\)\. Give a whole "
                                         r"number of 0 or more \(a count\), or leave it out \(None\)$"):
        classify_action(rb, action_type="multiple_residence", units=True)  # was 1 unit: Type II, pass
    with pytest.raises(InputError, match=r"^seqr acres = np\.False_: False is not a number"):
        classify_action(rb, action_type="surplus_property_sale", acres=np.False_)
    layers = load_layers(sample_path("vestal_sample.gpkg"))
    for name, value in (("market_value", True), ("openings", False), ("lowest_floor_ft", True),
                        ("improvement_cost", np.True_)):
        with pytest.raises(InputError, match=rf"^flood-site {name} = .*: (True|False) is not a number \(a yes/no"):
            check_site(layers, rb, use="residential", **{name: value})
    # numpy's integers are numbers: 29 units a pass, 30 a review, as the ints
    assert classify_action(rb, action_type="multiple_residence", units=np.int64(29)).findings["status"][0] == "pass"
    assert classify_action(rb, action_type="multiple_residence", units=np.int64(30)).findings["status"][0] == "review"


def test_numpy_yes_no_for_larger_common_plan_reads_as_the_python_one(tmp_path) -> None:
    # larger_common_plan takes a yes/no or the plan's aggregate acres: np.False_ is no, not a plan (it was
    # read as "part of a larger common plan", review, since np.False_ is not the object False)
    import geopandas as gpd
    from shapely.geometry import box

    from geoconstraints import load_layers, load_rulebook
    from geoconstraints.commands import check_stormwater

    x0, y0, side = 965_000.0, 760_000.0, (0.5 * SQFT_PER_ACRE) ** 0.5  # 0.5 acre: under SWP-001's 1 acre
    path = tmp_path / "plan.gpkg"
    gpd.GeoDataFrame({"id": ["A"]}, geometry=[box(x0, y0, x0 + side, y0 + side)], crs="EPSG:2261").to_file(
        path, layer="disturbance", driver="GPKG")
    layers, rb = load_layers(path, primary=("disturbance",)), load_rulebook("vestal")

    def swp001(plan):
        f = check_stormwater(layers, rb, larger_common_plan=plan).findings
        return f.loc[f["rule_id"] == "SWP-001", "status"].tolist()

    assert swp001(np.False_) == swp001(False) == ["pass"]
    assert swp001(np.True_) == swp001(True) == ["review"]


# ------------------------------------------------------------------------------------------
# The noise of a geometry's repair (io.validate.repair_losses)

@pytest.mark.parametrize("x0, y0", [(0.0, 0.0), (965_000.0, 760_000.0)])  # at the origin and in NY Central ftUS
def test_a_repair_loss_just_under_the_noise_is_none_just_over_is_one(x0, y0) -> None:
    # a 300 x 300 ft parcel (size: its diagonal, 424.26 ft) whose repair opened a hole 1 ft wide: the
    # tolerance is REPAIR_REL_NOISE * size ** 2 = 1e-6 * 180,000 = 0.18 sq ft of land lost
    from geoconstraints.io.validate import repair_losses
    from geoconstraints.units import REPAIR_REL_NOISE

    assert REPAIR_REL_NOISE == 1e-6  # the literal repair_losses had: no outcome changes
    edge = REPAIR_REL_NOISE * (300.0 ** 2 + 300.0 ** 2)
    assert edge == pytest.approx(0.18)
    drawn = shapely.box(x0, y0, x0 + 300, y0 + 300)
    cases = {0.99: False, 1.01: True, 0.5: False, 2.0: True}  # hole area / the tolerance -> lost
    fixed = [drawn.difference(shapely.box(x0 + 100, y0 + 100, x0 + 101, y0 + 100 + k * edge)) for k in cases]
    got = repair_losses(np.array([drawn] * len(cases), dtype=object), np.array(fixed, dtype=object))
    assert got.tolist() == list(cases.values())
    # a line the repair left out: a spike of length d beyond the square, read against REPAIR_REL_NOISE * size
    d = 0.5
    spiked = shapely.Polygon([(x0, y0), (x0 + 300, y0), (x0 + 300, y0 + 150), (x0 + 300 + d, y0 + 150),
                              (x0 + 300, y0 + 150), (x0 + 300, y0 + 300), (x0, y0 + 300)])
    assert repair_losses(np.array([spiked], dtype=object), np.array([drawn], dtype=object)).tolist() == [True]
    tiny = shapely.Polygon([(x0, y0), (x0 + 300, y0), (x0 + 300, y0 + 150), (x0 + 300 + 1e-5, y0 + 150),
                            (x0 + 300, y0 + 150), (x0 + 300, y0 + 300), (x0, y0 + 300)])  # 1e-5 ft: rounding
    assert repair_losses(np.array([tiny], dtype=object), np.array([drawn], dtype=object)).tolist() == [False]
