"""HRV-012's opposite_bank_arc_ratio (2) read where HRV-013 reads a stream polygon's end: at it, just under it
and just over it, in feet and in metres (tests/law/harvest_cases.py), and wherever the polygon lies.

A river mapped as a polygon stops short of haul road R (v = 0, u -1000..1000); its end is a tip pointing at the
road, apex at (u0, -20), 20 ft from R (within stream_end_distance_ft, 50), its two banks at the half-angle ``a``
either side of the river's axis, ``1 / sin a = ratio``; 200 ft below the apex the tip meets a narrow channel
(20 ft wide) running 1,780 ft on south. HRV-013 reads as the polygon's end the stretch of its bank nearest R
reaching as far again as the polygon is wide (``w``, the diameter of its largest inner circle: some 132 ft
here, inside the tip, 200 ft deep), and takes it for an end when its two ends lie on opposite banks: the
shorter way round the bank between them more than ratio x the straight distance. ``h`` below the apex
(any ``h`` within the tip) the stretch runs from (u0 - h tan a, -20 - h) up to the apex and down to
(u0 + h tan a, -20 - h): round 2 h / cos a, straight 2 h tan a, their ratio 1 / sin a (the other way round
the ring is some 4,000 ft). So a tip of ``1 / sin a`` = 2.01 is an end (a possible crossing, review) and 1.99 is
one bank (pass: a bend coming near the road). At 2 (a = 30 degrees, an equilateral tip) the stretch may be
either: HRV-013 reads it as an end (review, its cautious side: no pass resting on the ratio's last digit);
HRV-012 reads a skid trail's piece whose ends are exactly at the ratio as leaving by the bank it entered
(skidding in the channel, violation: its cautious side, and "more than" as the rule says).

Tolerance: 2.01 and 1.99 are 0.5 % off the ratio; at 2 the comparison is made beyond float noise
(units.under_limit / over_limit, REL_NOISE = 1e-9 of the limit), since the round way and twice the straight
distance, equal in arithmetic, are computed from irrational corners (sqrt 3) and differ by some 1e-13 ft,
either way by where the tip lies: the plain ``>`` had read an equilateral tip at (0, -20) in local feet as
an end (305.9222643146222 against 305.92226431462194 ft) and the same tip placed in State Plane as none (a
pass), and HRV-012 a trail straight across such a tip as leaving by the other bank (a crossing, HRV-012 pass)
at 206 of 296 placements.
"""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pytest
from harvest_cases import UNITS, rows_of, run_plan, status_of
from shapely.geometry import LineString, Polygon

from geoconstraints.rules.harvest import _polygon_stream_ends

ROAD = [("R", LineString([(-1000, 0), (1000, 0)]), {})]
"""Haul road R along v = 0, 2,000 ft long."""


def tip(ratio: float, u0: float = 0.0) -> Polygon:
    """A river ending in a tip at (u0, -20), its banks at asin(1 / ratio) to its axis for 200 ft, then a
    20-ft-wide channel on south to v = -2000."""
    hw = 200.0 * math.tan(math.asin(1.0 / ratio))
    return Polygon([(u0 + u, v) for u, v in [(0, -20), (hw, -220), (10, -220), (10, -2000), (-10, -2000),
                                             (-10, -220), (-hw, -220)]])


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("u0", [0.0, 0.3])
@pytest.mark.parametrize("ratio,expected", [(1.99, "pass"), (2.0, "review"), (2.01, "review")])
def test_hrv013_polygon_end_at_the_opposite_bank_arc_ratio(tmp_path, units, u0, ratio, expected) -> None:
    # the tip's round way is 1 / sin a = ratio times its straight way (module docstring): more than
    # opposite_bank_arc_ratio (2) is an end 20 ft from R, a possible crossing, and so is exactly 2 (either
    # bank may hold the stretch's far end: the cautious reading); under it, one bank
    res = run_plan(tmp_path, units, {"haul_roads": ROAD, "streams": [("RV", tip(ratio, u0), {"kind": "perennial"})]})
    assert status_of(res, "HRV-013", "R") == expected
    m = rows_of(res, "HRV-013", "R")["message"].iloc[0]
    if expected == "review":
        assert "stream RV (perennial, its polygon ending bank to bank) stops 20.0 ft from it, touching no other " \
               "stream feature" in m
        # across from the apex: 1,000 + u0 ft along R
        assert rows_of(res, "HRV-013", "R")["measured"].iloc[0] == pytest.approx(1000.0 + u0, abs=1e-3)
    else:
        assert "nor does a stream polygon end there" in m


@pytest.mark.parametrize("units", UNITS)
@pytest.mark.parametrize("u0", [0.0, 0.3])
@pytest.mark.parametrize("ratio,expected", [(1.99, "violation"), (2.0, "violation"), (2.01, "pass")])
def test_hrv012_a_trail_across_a_tip_at_the_opposite_bank_arc_ratio(tmp_path, units, u0, ratio, expected) -> None:
    # skid trail T runs straight across the tip 100 ft below its apex (v = -120): inside it from
    # (u0 - 100 tan a, -120) to (u0 + 100 tan a, -120), 200 tan a ft (115.5 ft at 2), the shorter way round the
    # bank between them 200 / cos a (231 ft at 2): 1 / sin a times. More than opposite_bank_arc_ratio (2): it
    # leaves by the other bank and is no longer than 2 x the channel's width there (2 x 100 sin a, the
    # farthest it gets from the banks being 100 sin a: 200 tan a <= 200 sin a x 2 while cos a >= 1/2), a
    # crossing (HRV-012 pass, HRV-013 review); at or under it, it leaves by the bank it entered: skidding
    # in the channel (violation)
    trails = [("T", LineString([(u0 - 300, -120), (u0 + 300, -120)]), {})]
    res = run_plan(tmp_path, units, {"skid_trails": trails, "streams": [("RV", tip(ratio, u0), {"kind": "perennial"})]})
    assert status_of(res, "HRV-012", "T") == expected
    assert status_of(res, "HRV-013", "T") == ("review" if expected == "pass" else "pass")


@pytest.mark.parametrize("ratio,ends", [(1.99, 0), (2.0, 1), (2.01, 1)])
def test_hrv013_polygon_end_reading_at_the_ratio_wherever_the_river_lies(ratio, ends) -> None:
    # the reading itself (rules/harvest.py _polygon_stream_ends, at opposite_bank_arc_ratio 2 and
    # stream_end_distance_ft 50), the tip and road moved by (du, dv) in local feet and in State Plane feet: at
    # 2 the round way equals twice the straight way in arithmetic, and no placement may tip it out of an end
    for du in (0.0, 0.3, 7.3, 123.456, 964_988.0):
        for dv in (0.0, 0.7, 758_256.0):
            rv = Polygon([(u + du, v + dv) for u, v in tip(ratio).exterior.coords])
            s = gpd.GeoDataFrame({"feature_id": ["RV"], "kind": ["perennial"]}, geometry=[rv])
            road = np.array([LineString([(du - 1000, dv), (du + 1000, dv)])])
            pt, _, _, d = _polygon_stream_ends(s, s, road, 50.0, 2.0)
            assert len(pt) == ends, (du, dv)
            assert d.tolist() == pytest.approx([20.0] * ends)
