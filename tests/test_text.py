"""Tests for geoconstraints.text: the one redaction (report provenance and database errors), truthy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from geoconstraints.text import is_blank, redact, redact_all, truthy

# (text, secrets, expected): the cases of the report's old redact and of PgSource.scrub, which
# now share one function
REDACT_CASES = [
    # report.html (provenance, notes)
    ("PG:host=db password='a b' user=x", (), "PG:host=db password=*** user=x"),
    ("PG:host=db user=me password=hunter2 dbname=gis", (), "PG:host=db user=me password=*** dbname=gis"),
    ("https://u:p@host/x", (), "https://u:***@host/x"),
    ("postgresql://me:hunter2@db:5432/gis", (), "postgresql://me:***@db:5432/gis"),
    ('token: "abc def" api_key=XYZ; secret=s', (), 'token: *** api_key=*** secret=***'),
    ("plain text, pass rate 80 %", (), "plain text, pass rate 80 %"),
    # database errors (libpq/psycopg echo the URL or conninfo)
    ("bad postgresql://gis:pa%3Ass:w@db.town.gov:6543/gis?table=town.parcels&sslmode=require and password=pa:ss:w",
     ("pa:ss:w", "pa%3Ass:w"),
     "bad postgresql://gis:***@db.town.gov:6543/gis?table=town.parcels&sslmode=require and password=***"),
    ("x pa:ss:w y", ("pa:ss:w",), "x *** y"),
    # a password holding ':' and '/' in a URL of any scheme; quoted with libpq escapes; PGPASSWORD
    ("postgres://u:a/b:c@h/db", (), "postgres://u:***@h/db"),
    (r"host=h password='it\'s secret' dbname=d", (), "host=h password=*** dbname=d"),
    ("PGPASSWORD=hunter2 psql", (), "PGPASSWORD=*** psql"),
    ("password=pa;ss user=x", (), "password=*** user=x"),
]


@pytest.mark.parametrize(("text", "secrets", "expected"), REDACT_CASES)
def test_redact(text: str, secrets: tuple[str, ...], expected: str) -> None:
    out = redact(text, secrets)
    assert out == expected
    for s in secrets:
        assert s not in out


def test_redact_leaves_other_values_and_walks_nested() -> None:
    assert redact(3) == 3 and redact(None) is None
    prov = {"inputs": [{"path": "postgresql://gis:pw1@h/db?table=t", "sha256": "ab"}], "n": 2,
            "crs": ("EPSG:2261", "password=pw2")}
    assert redact_all(prov) == {"inputs": [{"path": "postgresql://gis:***@h/db?table=t", "sha256": "ab"}], "n": 2,
                                "crs": ["EPSG:2261", "password=***"]}


@pytest.mark.parametrize(("value", "expected"), [
    ("yes", True), ("Y", True), (" TRUE ", True), ("t", True), ("1", True), (1, True), (2.0, True), (True, True),
    ("no", False), ("n", False), ("0", False), ("false", False), (" F ", False), (0, False), (0.0, False),
    (False, False), (np.int64(0), False),
    (None, None), (float("nan"), None), (np.float32("nan"), None), ("", None), ("   ", None), (pd.NA, None),
    (pd.NaT, None),
])
def test_truthy_keeps_not_stated_apart_from_no(value, expected) -> None:
    assert truthy(value) is expected
    assert is_blank(value) is (expected is None)


@pytest.mark.parametrize("word", ["maybe", "unknown", "2", "-1", "yes please", "nope", "?", "TBD"])
def test_truthy_word_neither_yes_nor_no_is_not_stated(word) -> None:
    # "maybe" used to be read as no: a constructed skid trail on a designated slope became a pass
    assert truthy(word) is None
    assert not is_blank(word)  # given, but not a yes/no word
