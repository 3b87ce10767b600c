"""Tests for geoconstraints.text: the one redaction (report provenance and database errors), truthy, visible_text."""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pandas as pd
import pytest

from geoconstraints.text import HIDDEN_CHARACTERS, is_blank, redact, redact_all, truthy, visible_text

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


# bidirectional controls and zero-width characters: shown, never obeyed (display spoofing)
SPOOFERS = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e",
            "\u200f", "\u061c", "\u200b", "\u200c", "\u200d", "\ufeff", "\u2060", "\u00ad", "\U000e0041"]


@pytest.mark.parametrize("ch", SPOOFERS)
def test_visible_text_shows_each_spoofing_character(ch) -> None:
    shown = visible_text(f"P1{ch}gnp.exe")
    assert shown == f"P1<U+{ord(ch):04X}>gnp.exe" and ch not in shown
    assert visible_text(shown) == shown  # idempotent: shown twice reads the same


def test_visible_text_leaves_other_text_alone() -> None:
    for text in ("P-1", "Zoë's lot § 44-VI", "AE — floodway", "قطعة ١٢", "区画 7", "lot \U0001f332", "a b\n\tc", ""):
        assert visible_text(text) == text
    assert visible_text(12) == "12" and visible_text(None) == "None"  # as str() of it, like xml_text


@pytest.mark.parametrize("text, shown", [
    ("P7\x1b[2K\rP1", "P7<U+001B>[2K<U+000D>P1"),  # a terminal escape erasing the line, a carriage return
    ("a\x01b\n", "a<U+0001>b\n"), ("a\x7fb", "a<U+007F>b"), ("P\x9b1", "P<U+009B>1"),  # DEL, C1's CSI
    ("a\tb\nc", "a\tb\nc"),  # tab and line feed are layout, kept
])
def test_visible_text_shows_control_characters(text, shown) -> None:
    assert visible_text(text) == shown and visible_text(shown) == shown


def test_visible_text_covers_every_format_control_that_draws_nothing() -> None:
    # the invisible format characters (Unicode category Cf: bidi controls, zero widths, tags ...)
    # all shown; the visible Cf signs (Arabic number signs, U+0600-0605, U+06DD ...) are glyphs
    hidden = {c for a, b in HIDDEN_CHARACTERS for c in range(a, b + 1)}
    every = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000).replace("<", "")
    shown = visible_text(every)
    assert {int(h, 16) for h in re.findall(r"<U\+([0-9A-F]{4,6})>", shown)} == hidden
    assert not any(chr(c) in shown for c in hidden)
    assert len(shown) == len(every) + sum(len(f"<U+{c:04X}>") - 1 for c in hidden)  # nothing else changed
    cf = {cp for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Cf"}
    visible_signs = {*range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD,
                     *range(0x13430, 0x13440), 0xFFF9, 0xFFFA, 0xFFFB}
    assert cf - visible_signs <= hidden, sorted(hex(c) for c in cf - visible_signs - hidden)
