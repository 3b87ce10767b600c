"""Tests for geoconstraints.projection: the working-CRS choice and the CRS/units gate."""

from __future__ import annotations

import pytest
from pyproj import CRS, Transformer

from geoconstraints.errors import CRSError
from geoconstraints.io.projection import (
    check_location,
    check_working_crs,
    choose_working_crs,
    feet_crs_at,
    is_feet,
    lonlat_bounds,
    parse_crs,
)
from geoconstraints.units import FT_PER_M, M_PER_FT, ft_per_unit


@pytest.mark.parametrize(
    ("place", "lon", "lat", "epsg"),
    [
        ("Vestal (Broome County)", -76.05, 42.08, 2261),
        ("Ithaca (Tompkins County)", -76.50, 42.44, 2261),
        ("Lockport (Niagara County)", -78.69, 43.17, 2262),
        ("Buffalo (Erie County)", -78.88, 42.89, 2262),
        ("Albany", -73.76, 42.65, 2260),
        ("Manhattan", -73.97, 40.78, 2263),
        ("Riverhead (Long Island)", -72.66, 40.92, 2263),
        ("Muncy PA", -76.80, 41.20, 2271),               # NAD83 / Pennsylvania North (ftUS)
        ("Hartford CT", -72.70, 41.76, 2234),            # NAD83 / Connecticut (ftUS)
        ("Cambridge MA", -71.11, 42.37, 2249),           # NAD83 / Massachusetts Mainland (ftUS)
        ("Lexington VA", -79.45, 37.78, 2284),           # NAD83 / Virginia South (ftUS)
        ("Chicago IL", -87.63, 41.88, 3435),             # NAD83 / Illinois East (ftUS)
        ("Seattle WA", -122.33, 47.61, 2285),            # NAD83 / Washington North (ftUS)
    ],
)
def test_state_plane_zone_from_the_epsg_database(place, lon, lat, epsg):
    # the zone comes from PROJ's EPSG database by area of use (the codes checked against epsg.io's
    # names in the comments), in NY and outside it
    crs, why = feet_crs_at(lon, lat)
    assert crs.to_epsg() == epsg, (place, crs.name)
    assert is_feet(crs) and f"EPSG:{epsg}" in why and "State Plane" in why


def test_utm_in_feet_where_no_state_plane_zone_in_feet():
    # Anchorage: Alaska's zones have no feet version in EPSG; the UTM zone in US survey feet does
    crs, why = feet_crs_at(-149.9, 61.2)
    assert crs.to_epsg() == 4426 and crs.name == "NAD83 / BLM 6N (ftUS)" and "UTM" in why
    assert crs.axis_info[0].unit_conversion_factor == pytest.approx(1200 / 3937)


def test_no_feet_crs_outside_the_us_is_refused():
    with pytest.raises(CRSError, match=r"no State Plane or UTM zone in feet.*lon 151\.2000.*Give --crs"):
        feet_crs_at(151.2, -33.9)


def test_feet_helpers():
    assert M_PER_FT == 0.3048 and FT_PER_M == pytest.approx(3.280839895, rel=1e-10)  # from PROJ's unit table
    assert is_feet(CRS.from_epsg(2261))
    assert not is_feet(CRS.from_epsg(32618))
    assert not is_feet(CRS.from_epsg(4326))
    # 1 US survey ft = 1200/3937 m = 1.000002 international ft (0.3048 m)
    assert ft_per_unit(CRS.from_epsg(2261)) == pytest.approx(1200 / 3937 / 0.3048, rel=1e-12)
    assert ft_per_unit(CRS.from_epsg(32618)) == pytest.approx(1 / 0.3048, rel=1e-12)
    assert ft_per_unit(CRS.from_epsg(2271)) == pytest.approx(1200 / 3937 / 0.3048, rel=1e-12)  # PA North ftUS
    assert ft_per_unit(CRS.from_epsg(2263)) != ft_per_unit("+proj=tmerc +units=ft +type=crs")  # ftUS is not ft
    assert ft_per_unit("+proj=tmerc +units=ft +type=crs") == 1.0
    assert ft_per_unit(CRS.from_epsg(4269)) is None and ft_per_unit(None) is None
    assert ft_per_unit("EPSG:2261+5703") == ft_per_unit(2261)  # compound: the horizontal part


def test_choose_order():
    crs, why = choose_working_crs(user_crs="EPSG:2262", primary_crs=CRS.from_epsg(2261),
                                  lonlat_bounds=(-76.1, 42.0, -76.0, 42.1))
    assert crs.to_epsg() == 2262 and why == "given with --crs"
    crs, why = choose_working_crs(primary_crs=CRS.from_epsg(2261), lonlat_bounds=(-73.8, 42.6, -73.7, 42.7))
    assert crs.to_epsg() == 2261 and "primary" in why
    # a primary CRS in metres (Web Mercator) is not used: location decides
    crs, why = choose_working_crs(primary_crs=CRS.from_epsg(3857), lonlat_bounds=(-73.8, 42.6, -73.7, 42.7))
    assert crs.to_epsg() == 2260 and "State Plane" in why
    crs, why = choose_working_crs(lonlat_bounds=(-79.5, 37.7, -79.4, 37.8))
    assert crs.to_epsg() == 2284 and "Virginia South" in why
    with pytest.raises(CRSError, match="Give --crs"):
        choose_working_crs()


@pytest.mark.parametrize(("value", "match"), [
    ("EPSG:4326", "is geographic"),
    ("EPSG:32618", "is in metre"),
    ("EPSG:3857", "is in metre"),
])
def test_working_crs_must_be_projected_feet(value, match):
    with pytest.raises(CRSError, match=match):
        check_working_crs(parse_crs(value))


def test_parse_crs_error():
    with pytest.raises(CRSError, match="--crs 'not a crs' is not a CRS pyproj knows"):
        parse_crs("not a crs")
    assert parse_crs(2261).to_epsg() == 2261


def test_lonlat_bounds_round_trip():
    t = Transformer.from_crs(4326, 2261, always_xy=True)
    x0, y0 = t.transform(-76.06, 42.07)
    x1, y1 = t.transform(-76.04, 42.09)
    w, s, e, n = lonlat_bounds((x0, y0, x1, y1), CRS.from_epsg(2261))
    assert (w, s, e, n) == pytest.approx((-76.06, 42.07, -76.04, 42.09), abs=1e-3)


def test_check_location_accepts_right_label():
    t = Transformer.from_crs(4326, 2261, always_xy=True)
    x, y = t.transform(-76.05, 42.08)
    check_location((x, y, x + 100, y + 100), CRS.from_epsg(2261), what="layer parcels")


def test_check_location_refuses_lonlat_labelled_projected():
    with pytest.raises(CRSError, match="look like longitude/latitude, but its CRS says EPSG:2262"):
        check_location((-78.7, 43.1, -78.6, 43.2), CRS.from_epsg(2262), what="layer parcels (a.shp)")


def test_check_location_refuses_metres_labelled_feet():
    # Vestal in UTM 18N metres (x ~ 413 km, y ~ 4.66e6) labelled as NY Central ftUS: the
    # numbers read as feet put it hundreds of km north of the zone
    t = Transformer.from_crs(4326, 32618, always_xy=True)
    x, y = t.transform(-76.05, 42.08)
    with pytest.raises(CRSError, match="do not lie where its CRS EPSG:2261"):
        check_location((x, y, x + 100, y + 100), CRS.from_epsg(2261), what="layer parcels")
