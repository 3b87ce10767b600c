"""The status colours (output/styles.py): apart from each other for colour-blind readers, and
apart from every flood-zone colour, measured with CIEDE2000 (coloraide) and its CVD simulations."""

from __future__ import annotations

import itertools

import pytest
from coloraide import Color

from geoconstraints.output import styles
from geoconstraints.rulebook.findings import STATUSES

CVD = ("protan", "deutan", "tritan")
"""Full-severity simulations of protanopia, deuteranopia and tritanopia (coloraide's filters)."""

MIN_PAIR_NORMAL = 20.0
"""Smallest CIEDE2000 difference between two status colours for normal colour vision."""

MIN_PAIR_CVD = 10.0
"""... and under each simulation (a difference of 10 is plainly visible side by side)."""


def _de(a: str, b: str, cvd: str | None = None) -> float:
    ca, cb = Color(a), Color(b)
    if cvd:
        ca, cb = ca.filter(cvd), cb.filter(cvd)
    return float(ca.delta_e(cb, method="2000"))


def test_every_status_has_a_colour_and_a_label():
    assert set(styles.STATUS_COLORS) == set(STATUSES) == set(styles.STATUS_LABELS)
    assert len({c.lower() for c in styles.STATUS_COLORS.values()}) == len(STATUSES)


@pytest.mark.parametrize("cvd", [None, *CVD])
def test_status_colours_are_distinct_for_colour_blind_readers(cvd):
    limit = MIN_PAIR_NORMAL if cvd is None else MIN_PAIR_CVD
    for a, b in itertools.combinations(STATUSES, 2):
        d = _de(styles.STATUS_COLORS[a], styles.STATUS_COLORS[b], cvd)
        assert d >= limit, (cvd, a, b, round(d, 1))


def test_no_status_colour_is_near_a_flood_zone_colour():
    zones = dict(styles.FLOOD_ZONE_COLORS, unknown=styles.FLOOD_UNKNOWN_COLOR)
    for status, c in styles.STATUS_COLORS.items():
        for zone, z in zones.items():
            assert c.lower() != z.lower(), (status, zone)
            d = _de(c, z)
            assert d >= styles.MIN_DELTA_E_FLOOD, (status, zone, round(d, 1))
    # the two clashes this palette replaced: review orange was zone X (0.2 %) orange, info blue near zone A
    assert _de(styles.STATUS_COLORS["review"], styles.flood_zone_color("X (0.2% annual chance)")) > 25
    assert _de(styles.STATUS_COLORS["info"], styles.flood_zone_color("A")) > 30


def test_encroachment_outline_is_apart_from_statuses_zones_and_the_floodway():
    # an encroachment area (FLD-002: floodway not determined) must read neither as a finding, a zone nor the floodway
    others = {**styles.STATUS_COLORS, **styles.FLOOD_ZONE_COLORS, "unknown": styles.FLOOD_UNKNOWN_COLOR,
              "floodway": styles.LAYER_STYLES["floodway_overlaps"].color}
    for name, c in others.items():
        assert _de(styles.ENCROACHMENT_COLOR, c) >= 20.0, (name, round(_de(styles.ENCROACHMENT_COLOR, c), 1))


def test_map_and_report_read_the_one_palette(tmp_path):
    from geoconstraints.output.webmap import finding_styles

    for status, c in styles.STATUS_COLORS.items():
        assert finding_styles(status)["polygon"]["color"] == c
        assert styles.status_style(status, "line").color == c
    sym = styles.qml_for("findings", __import__("geopandas").GeoDataFrame(
        {"status": ["violation"]}, geometry=__import__("geopandas").points_from_xy([0], [0]), crs=4326))
    r, g, b = (int(styles.STATUS_COLORS["violation"][i:i + 2], 16) for i in (1, 3, 5))
    assert f"{r},{g},{b}," in sym  # the QGIS style of findings uses the same colours
