"""The BFE over a subject's SFHA part (:mod:`geoconstraints.geometry.bfe_sample`): plain values in, no rulebook;
the commands' wrappers read the rulebook for it.

Values are hand computations: a BFE interpolated along a straight stream between lines of 848 ft at x = 0 and
852 ft at x = 800 is ``848 + 4 * x / 800`` (tolerance 0.01 ft).
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
from shapely.geometry import LineString, box

from geoconstraints import load_rulebook
from geoconstraints.commands import _bfe_for_overlaps
from geoconstraints.geometry.bfe_sample import (
    PARCEL_BFE_COLUMNS,
    bfe_for_overlaps,
    empty_parcel_bfe,
    site_bfe,
)
from geoconstraints.io.layers import Layers
from geoconstraints.rules.flood import firm_gives_bfe, flood_zone_spec

TOL_FT = 0.01
RADIUS_FT = 5000.0  # how far a stream or BFE line is sought (the vestal rulebook's search radius)


@pytest.fixture(scope="module")
def rb():
    return load_rulebook("vestal")


@pytest.fixture(scope="module")
def town() -> dict[str, gpd.GeoDataFrame]:
    # zone AE west of x = 400, zone A east of it; a stream along y = 25 crossed by BFE lines at x = 0 and 800
    flood = gpd.GeoDataFrame({"FLD_ZONE": ["AE", "A"]}, geometry=[box(-300, -200, 400, 300), box(400, -200, 900, 300)])
    lines = gpd.GeoDataFrame({"ELEV": [848.0, 852.0], "V_DATUM": ["NAVD88"] * 2},
                             geometry=[LineString([(0, -150), (0, 250)]), LineString([(800, -150), (800, 250)])])
    streams = gpd.GeoDataFrame(geometry=[LineString([(-250, 25), (1000, 25)])])
    return {"flood": flood, "bfe_lines": lines, "streams": streams}


def test_no_parcel_in_the_sfha_reads_nothing_of_the_rulebook() -> None:
    class NoRulebook:
        def __getitem__(self, key):
            raise AssertionError(f"the rulebook's {key} was read")

    c = _bfe_for_overlaps(Layers({}, crs=None), NoRulebook(), np.array([None, None], dtype=object))
    empty = empty_parcel_bfe(2)
    for col in PARCEL_BFE_COLUMNS:
        np.testing.assert_array_equal(c[col], empty[col])
    assert c["bfe_note"].tolist() == ["not in the area of special flood hazard"] * 2


def test_a_footprint_in_ae_and_zone_a_takes_no_bfe_from_its_zone_a_part(town, rb) -> None:
    # x 350..450: its AE half reaches 850.0 ft at the zone edge (x = 400); the BFE lines would give its zone A
    # corners 850.25 ft (x = 450), no BFE of the FIRM
    fp = np.array([box(350, 0, 450, 50)])
    t = site_bfe(fp, fp, np.array([2500.0]), flood=town["flood"], bfe_lines=town["bfe_lines"],
                 streams=town["streams"], search_radius_ft=RADIUS_FT, spec=flood_zone_spec(rb, exact=True),
                 firm_gives_bfe=firm_gives_bfe)
    row = t.iloc[0]
    assert row["bfe_ft"] == pytest.approx(850.0, abs=TOL_FT)
    assert row["bfe_method"] == "interpolated_along_stream"
    assert row["no_bfe_sqft"] == pytest.approx(2500.0)
    assert row["no_bfe_zones"] == "A"
    assert row["static_bfe_sqft"] == 0.0
    assert ("; its part in zone A has no BFE on the FIRM (none read off the BFE lines there is used)"
            in row["bfe_note"])


def test_a_parcel_in_ae_and_zone_a_reads_its_ae_part_only(town, rb) -> None:
    c = bfe_for_overlaps(np.array([box(350, 0, 450, 50)]), flood=town["flood"], bfe_lines=town["bfe_lines"],
                         streams=town["streams"], search_radius_ft=RADIUS_FT, spec=flood_zone_spec(rb, exact=True))
    assert c["bfe_ft"][0] == pytest.approx(850.0, abs=TOL_FT)
    assert c["bfe_lowest_ft"][0] == pytest.approx(849.75, abs=TOL_FT)
    assert c["bfe_method"][0] == "interpolated_along_stream"
    assert "its part in zone A has no BFE on the FIRM (none read off the BFE lines there is used)" in c["bfe_note"][0]
