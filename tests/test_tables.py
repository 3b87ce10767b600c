"""Tests for geoconstraints.io.tables: the one strict date reader (:func:`read_days`) and its options.

Two option sets are in use: the defaults (rainfall series, inspection log, disturbance ``start`` /
``stabilized``: ``order="proven"``, ``time="ignore"``, ``YYYY-MM-DD`` and ``M/D/YYYY``) and FLD-010's
``EFF_DATE`` (:func:`~geoconstraints.rules.flood.effective_date`: ``order="us"``, ``time="midnight"``,
every form). Each option is tried at its boundary; the values whose outcome the merge of the two
readers changed are checked through the public entry points that existed before (effective_date,
FLD-010's finding, read_inspection_log, the phasing layer), so they fail on the code before.
"""

from __future__ import annotations

import datetime as dt
import re
from types import SimpleNamespace

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from common import NY_FT, X0, Y0
from shapely.geometry import box

from geoconstraints import load_rulebook
from geoconstraints.errors import InputError, RulebookError
from geoconstraints.geometry.phasing import phasing_dates
from geoconstraints.io import tables
from geoconstraints.io.tables import DATE_YEARS, read_days, read_inspection_log
from geoconstraints.rules.flood import FloodContext, check_adopted_map, effective_date

EFF = {"order": "us", "time": "midnight", "forms": ("iso", "ymd_slash", "ymd", "us")}
"""FLD-010's options (as effective_date passes them: every form of DATE_FORMS)."""


def one(value, **options):
    """(the day read as YYYY-MM-DD, or None for a blank; the issue) of a one-value column."""
    days, issue = read_days(pd.DataFrame({"date": pd.Series([value], dtype=object)}), **options)
    day = days["date"].iloc[0]
    return (None if pd.isna(day) else day.strftime("%Y-%m-%d")), issue


def kind(value, **options):
    """The kind of the issue of a one-value column, or its day."""
    day, issue = one(value, **options)
    return issue.kind if issue is not None else day


@pytest.fixture(scope="module")
def rb():
    return load_rulebook("vestal")


def fld010(rule, eff: list) -> pd.Series:
    """FLD-010's one finding for a flood layer of DFIRM_ID 360057 whose features hold the EFF_DATE values ``eff``."""
    geom = box(X0, Y0, X0 + 10, Y0 + 10)
    flood = gpd.GeoDataFrame({"FLD_ZONE": ["X"] * len(eff), "DFIRM_ID": ["360057"] * len(eff),
                              "EFF_DATE": pd.Series(eff, dtype=object)}, geometry=[geom] * len(eff), crs=NY_FT)
    table = gpd.GeoDataFrame({"parcel_id": []}, geometry=[], crs=NY_FT)
    ctx = FloodContext("screen", SimpleNamespace(get_layer={"flood_zones": flood}.get), table, "parcels", True)
    return check_adopted_map(ctx, rule).iloc[0]


# ------------------------------------------------------------------------------------------------
# the options, each at its boundary (both option sets)

@pytest.mark.parametrize(("value", "read"), [
    ("1899-12-31", False), ("1900-01-01", True), ("2100-12-31", True), ("2101-01-01", False),
    ("12/31/1899", False), ("1/1/1900", True), (dt.date(1899, 12, 31), False), (pd.Timestamp("2101-01-01"), False),
    ("0001-01-01", False), ("9999-12-31", False),
])
@pytest.mark.parametrize("options", [{}, EFF], ids=["tables", "eff_date"])
def test_years_1900_to_2100_in_every_reading(value, read, options):
    assert DATE_YEARS == (1900, 2100)
    day, issue = one(value, **options)
    if read:
        assert issue is None and day is not None
    else:
        assert issue.kind == "years" and day is None
        assert issue.why == "is outside the years 1900 to 2100: correct the date (a typing error?)"
        assert issue.reason == "a year outside 1900 to 2100: a typing error?"


@pytest.mark.parametrize(("value", "tables", "eff"), [
    ("2024-03-15", "2024-03-15", "2024-03-15"),
    ("2024-03-15 00:00", "2024-03-15", "2024-03-15"),
    ("2024-03-15T00:00:00.000Z", "2024-03-15", "2024-03-15"),
    ("2024-03-15 00:00:01", "2024-03-15", "time"),  # one second past midnight: a shifted day for a date field
    ("2024-03-15T00:00:00.001", "2024-03-15", "time"),
    ("2024-03-15 23:59:59", "2024-03-15", "time"),
    ("3/15/2024 12:00:00 AM", "2024-03-15", "2024-03-15"),  # Esri's midnight
    ("3/15/2024 12:00:01 AM", "2024-03-15", "time"),
    ("3/15/2024 12:00 PM", "2024-03-15", "time"),  # noon
    ("3/15/2024 0:00", "2024-03-15", "2024-03-15"),
    (pd.Timestamp("2024-03-15"), "2024-03-15", "2024-03-15"),
    (pd.Timestamp("2024-03-15 00:00:01"), "2024-03-15", "time"),
    (pd.Timestamp("2024-03-15", tz="America/New_York"), "2024-03-15", "2024-03-15"),  # the day in its own zone
    (dt.datetime(2024, 3, 15, 0, 0, 1), "2024-03-15", "time"),
    (np.datetime64("2024-03-15T00:00:00"), "2024-03-15", "2024-03-15"),
    (np.datetime64("2024-03-15T00:00:00.000000001"), "2024-03-15", "time"),
    ("2024-03-15 25:00", "unreadable", "unreadable"),  # a time that is no time
    ("3/15/2024 13:30 PM", "unreadable", "unreadable"),
    ("3/15/2024 0:30 AM", "unreadable", "unreadable"),
])
def test_time_ignore_or_midnight(value, tables, eff):
    assert kind(value) == tables
    assert kind(value, **EFF) == eff
    if eff == "time":
        assert one(value, **EFF)[1].reason == "a time of day other than midnight (a day shifted by a time zone?)"


def test_time_of_a_whole_datetime_column():
    # a GeoPackage DATETIME field comes as a datetime64 column: the same reading as value by value
    col = pd.DataFrame({"d": pd.Series([pd.Timestamp("2024-03-15"), pd.NaT, pd.Timestamp("2024-03-16 00:00:01")])})
    days, issue = read_days(col)
    assert issue is None and days["d"].dt.strftime("%Y-%m-%d").tolist() == ["2024-03-15", np.nan, "2024-03-16"]
    days, issue = read_days(col, **EFF)
    assert issue.kind == "time" and issue.rows.tolist() == [2] and issue.value == "2024-03-16"
    assert days["d"].isna().all()


@pytest.mark.parametrize(("values", "tables", "eff"), [
    (["03/04/2024"], "ambiguous", ["2024-03-04"]),  # March 4 or 3 April: no proof in the column
    (["03/04/2024", "03/14/2024"], ["2024-03-04", "2024-03-14"], ["2024-03-04", "2024-03-14"]),  # the 14 proves it
    (["03/03/2024"], ["2024-03-03"], ["2024-03-03"]),  # the same day either way
    (["14/03/2024"], "day_month", "day_month"),  # day first: refused in both
    (["03/04/2024", "2024-03-14"], "mixed", ["2024-03-04", "2024-03-14"]),  # slashes beside ISO
    (["13/14/2024"], "unreadable", "unreadable"),
])
def test_order_proven_or_us(values, tables, eff):
    for options, want in (({}, tables), (EFF, eff)):
        days, issue = read_days(pd.DataFrame({"date": values}), **options)
        got = issue.kind if issue is not None else days["date"].dt.strftime("%Y-%m-%d").tolist()
        assert got == want, options


def test_order_is_proven_over_every_column_of_the_frame():
    frame = pd.DataFrame({"start": ["03/04/2024"], "stabilized": ["03/14/2024"]})
    days, issue = read_days(frame, scope="layer")
    assert issue is None and days["start"].iloc[0] == pd.Timestamp("2024-03-04")
    _, issue = read_days(frame[["start"]], scope="layer")
    assert issue.kind == "ambiguous" and issue.column == "start"
    assert issue.why.startswith("could be March 4, 2024 or 3 April 2024: no date of this layer has a day over 12")
    assert issue.reason == "could be March 4, 2024 or 3 April 2024"


@pytest.mark.parametrize(("value", "tables", "eff"), [
    ("19980302", "unreadable", "1998-03-02"),  # a shapefile's date field as text
    (19980302, "unreadable", "1998-03-02"),
    (np.int64(19980302), "unreadable", "1998-03-02"),
    (20240315.0, "unreadable", "2024-03-15"),  # a whole float (a numeric column with a NaN)
    ("20240315.0", "unreadable", "unreadable"),  # text with a point is no YYYYMMDD
    (20240315.5, "unreadable", "unreadable"),
    (45366.0, "unreadable", "unreadable"),  # a spreadsheet's serial day for 2024-03-15
    ("19980230", "unreadable", "unreadable"),  # no such day
    ("18990302", "unreadable", "years"),
    ("1998/03/02", "unreadable", "1998-03-02"),  # GDAL's text of a date
    ("1998/03/02 00:00:00+00", "unreadable", "1998-03-02"),
    ("1998/3/2", "unreadable", "unreadable"),
])
def test_forms_yyyymmdd_and_yyyy_mm_dd_slashes_only_where_named(value, tables, eff):
    assert kind(value) == tables
    assert kind(value, **EFF) == eff


@pytest.mark.parametrize("value", ["2012", " 2012 ", 2012, 2012.0, np.int64(1998)])
def test_a_year_alone_names_no_day(value):
    if isinstance(value, str):
        day, issue = one(value)
        assert day is None and issue.kind == "year_alone" and issue.why == "is a year alone, which names no day. Write dates as YYYY-MM-DD"
    else:
        assert kind(value) == "unreadable"  # the tables read no numbers
    day, issue = one(value, **EFF)
    assert day is None and issue.kind == "year_alone" and issue.reason == "a year alone names no day"


@pytest.mark.parametrize("value", ["next spring", "March 2, 1998", "3/2/98", "98-03-02", "2024-3-15", True,
                                   np.bool_(False), 1.5, float("inf"), b"2024-03-15", [2024, 3, 15]])
@pytest.mark.parametrize("options", [{}, EFF], ids=["tables", "eff_date"])
def test_free_text_and_other_values_are_no_date(value, options):
    day, issue = one(value, **options)
    assert day is None and issue.kind == "unreadable"
    assert issue.why == "is not a date. Write dates as YYYY-MM-DD"
    assert issue.reason.startswith("not a date in a form read (YYYY-MM-DD")


@pytest.mark.parametrize("value", [None, float("nan"), np.nan, "", "   ", pd.NaT, np.datetime64("NaT"), pd.NA])
@pytest.mark.parametrize("options", [{}, EFF], ids=["tables", "eff_date"])
def test_blank_is_not_stated(value, options):
    assert one(value, **options) == (None, None)
    with pytest.raises(ValueError, match="^no date stated$"):
        effective_date(value)


@pytest.mark.parametrize("value", [pd.Timestamp("2024-03-15"), dt.date(2024, 3, 15), dt.datetime(2024, 3, 15),
                                   np.datetime64("2024-03-15"), pd.Timestamp("2024-03-15", tz="UTC")])
@pytest.mark.parametrize("options", [{}, EFF], ids=["tables", "eff_date"])
def test_date_typed_values(value, options):
    assert one(value, **options) == ("2024-03-15", None)


@pytest.mark.parametrize(("options", "message"), [
    ({"order": "dmy"}, "'dmy' is not a valid option for order, must be one of proven, us"),
    ({"time": "noon"}, "'noon' is not a valid option for time, must be one of ignore, midnight"),
    ({"forms": ("iso", "dmy")}, "is not a valid option for forms, must be some of iso, ymd_slash, ymd, us"),
    ({"forms": ()}, "is not a valid option for forms"),
])
def test_an_option_not_among_its_values_is_refused(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        read_days(pd.DataFrame({"date": ["2024-03-15"]}), **options)


def test_the_first_refused_kind_names_every_row_of_it():
    days, issue = read_days(pd.DataFrame({"date": ["2024-03-15", "2012", "next spring", "2020", "1066-01-01"]}))
    assert issue.kind == "unreadable" and issue.rows.tolist() == [2] and issue.value == "next spring"
    days, issue = read_days(pd.DataFrame({"date": ["2024-03-15", "2012", "1066-01-01", "2020"]}))
    assert issue.kind == "year_alone" and issue.rows.tolist() == [1, 3] and issue.value == "2012"
    assert days["date"].isna().all()


def test_effective_date_is_the_reader_with_fld010s_options():
    assert EFF["forms"] == tuple(tables.DATE_FORMS)
    values = ["1998-03-02", "3/2/1998", "03/02/1998 12:00:00 AM", 19980302, "1998/03/02", "1998-03-02 00:00:01",
              "13/2/1998", "2012", "1898-03-02", "next spring", pd.Timestamp("1998-03-02 05:00")]
    for v in values:
        day, issue = one(v, **EFF)
        if issue is None:
            assert str(effective_date(v)) == day
        else:
            with pytest.raises(ValueError, match=f"^{re.escape(issue.reason)}$"):
                effective_date(v)


# ------------------------------------------------------------------------------------------------
# outcomes the one reader changed (each fails on the code before it)

@pytest.mark.parametrize("eff", ["1066-10-14", "9999-12-31", "1899-12-31", "2101-01-01", dt.date(1850, 1, 1)])
def test_fld010_an_effective_date_outside_1900_to_2100_is_not_evaluated_naming_it(rb, eff):
    # before: read as a day and compared (info: "effective date differs"); a FIRM dated 1066 or 9999 is a typing error
    f = fld010(rb["FLD-010"], ["1998-03-02", eff])
    assert f["status"] == "not_evaluated", f["message"]
    shown = repr(eff) if isinstance(eff, str) else str(eff)
    assert f"EFF_DATE {shown} (a year outside 1900 to 2100: a typing error?) is not a date" in f["message"]


@pytest.mark.parametrize("adopted", ["1899-12-31", "2101-01-01"])
def test_fld010_an_adopted_date_outside_1900_to_2100_is_a_rulebook_error(tmp_path, adopted):
    # before: a rulebook adopting 1899-12-31 and a layer saying the same passed
    mine = tmp_path / "mine.yaml"
    mine.write_text(f'extends: vestal\nrules:\n  - id: FLD-010\n    params: {{adopted_effective_date: "{adopted}"}}\n')
    with pytest.raises(RulebookError, match=rf"adopted_effective_date = '{adopted}' is not a date \(a year outside "
                                            r"1900 to 2100: a typing error\?\)"):
        fld010(load_rulebook(mine)["FLD-010"], [adopted])


@pytest.mark.parametrize("eff", [
    "1998-03-02 0:00",  # a one-digit hour after YYYY-MM-DD (the tables never read it)
    "1998-03-02 12:00:00 AM", "1998-03-02 12:00 AM", "1998/03/02 12:00 AM",  # AM / PM after a year-first date
    "1998-03-02t00:00:00z",  # lower-case t and z
    "3/2/1998T00:00:00", "3/2/1998 00:00:00.000", "3/2/1998 00:00Z", "3/2/1998 00:00:00-05:00",  # ISO's time after M/D/YYYY
    np.datetime64("1998-03-02T00:00:00.000000001"),  # a nanosecond past midnight (datetime.time() dropped it)
])
def test_fld010_a_midnight_written_as_no_date_form_writes_it_is_not_evaluated(rb, eff):
    # before: read as midnight of 1998-03-02, the adopted day: pass. Now the time parts are the one grammar of
    # DATE_FORMS (the tables'), and these are outside it: not_evaluated naming the value, never a pass
    f = fld010(rb["FLD-010"], [eff])
    assert f["status"] == "not_evaluated", f["message"]
    assert "is not a date" in f["message"]


@pytest.mark.parametrize("eff", ["1998-03-02", "1998-03-02 00:00:00", "1998-03-02T00:00:00.000Z", "1998/03/02 00:00:00",
                                 "1998/03/02 00:00:00+00", "19980302", 19980302, 19980302.0, "3/2/1998", "3/2/1998 0:00",
                                 "03/02/1998 12:00:00 AM", "3/2/1998 12:00AM", "3/2/1998 12:00 am",
                                 pd.Timestamp("1998-03-02"), dt.date(1998, 3, 2)])
def test_fld010_the_adopted_day_as_gis_tools_write_it_still_passes(rb, eff):
    assert fld010(rb["FLD-010"], [eff, None, " "])["status"] == "pass"


@pytest.mark.parametrize("written", ["4/14/2025  9:30", "4/14/2025\t9:30", "4/14/2025 9:30  AM", "4/14/2025 13:30 PM",
                                     "4/14/2025 0:30 AM"])
def test_inspection_log_a_time_no_form_writes_is_refused(tmp_path, written):
    # before: read as 2025-04-14 (the time ignored). Two spaces or a tab before the time, two before AM, or an hour
    # that is no hour of a 12-hour clock: not a date of DATE_FORMS, refused naming the line as any other
    p = tmp_path / "log.csv"
    p.write_text(f'date,inspector\n4/7/2025,JD\n"{written}",JD\n')
    with pytest.raises(InputError, match=rf"^log.csv line 3: date {re.escape(repr(written))} is not a date. Write dates as "
                                         r"YYYY-MM-DD$"):
        read_inspection_log(p)


def test_inspection_log_a_year_alone_is_named_as_such(tmp_path):
    # before: "is not a date" (refused then too)
    p = tmp_path / "log.csv"
    p.write_text("date,inspector\n2025-04-07,JD\n2025,JD\n")
    with pytest.raises(InputError, match=r"^log.csv line 3: date '2025' is a year alone, which names no day. Write dates "
                                         r"as YYYY-MM-DD$"):
        read_inspection_log(p)


def test_phasing_a_year_alone_is_named_as_such():
    layer = gpd.GeoDataFrame({"feature_id": ["A", "B"], "start": ["2024-05-01", "2024"],
                              "stabilized": ["2024-05-10", "2024-06-01"]},
                             geometry=[box(X0, Y0, X0 + 10, Y0 + 10)] * 2, crs=NY_FT)
    with pytest.raises(InputError, match=r"^layer disturbance: field start of polygon B: date '2024' is a year alone, "
                                         r"which names no day"):
        phasing_dates(layer)
