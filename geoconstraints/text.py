"""Small text helpers shared by messages, warnings and reports (no geometry, no rules)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd


def id_list(values: Iterable[Any], n: int = 10) -> str:
    """The first ``n`` values joined by commas, and how many more there are.

    Examples
    --------
    >>> id_list(["P1", "P2", "P3"], 2)
    'P1, P2 (+1 more)'
    """
    vals = [str(v) for v in values]
    return ", ".join(vals[:n]) + (f" (+{len(vals) - n} more)" if len(vals) > n else "")


def is_blank(v: Any) -> bool:
    """True for None, NaN, NaT and strings of whitespace: a value not stated.

    Examples
    --------
    >>> [is_blank(v) for v in (None, float("nan"), " ", "0", 0)]
    [True, True, True, False, False]
    """
    if v is None or v is pd.NaT or v is pd.NA:
        return True
    if isinstance(v, (float, np.floating)) and np.isnan(v):
        return True
    return isinstance(v, str) and not v.strip()


def stated_text(values: Iterable[Any], blank: Any = "") -> list[Any]:
    """Each value as stripped text, ``blank`` where it is blank (:func:`is_blank`: None, NaN, whitespace),
    never the text "None" or "nan".

    Examples
    --------
    >>> stated_text(["  J. Doe ", None, float("nan"), " ", 12]), stated_text([None], blank=None)
    (['J. Doe', '', '', '', '12'], [None])
    """
    return [blank if is_blank(v) else str(v).strip() for v in values]


TRUE_WORDS: tuple[str, ...] = ("1", "true", "t", "yes", "y")
"""Text read as yes (case-insensitive)."""

FALSE_WORDS: tuple[str, ...] = ("0", "false", "f", "no", "n")
"""Text read as no (case-insensitive). Text that is neither a yes nor a no word is not stated."""


def truthy(v: Any) -> bool | None:
    """A yes/no flag as True or False, or ``None`` when not stated (None, NaN, blank text, or a
    word that is neither yes nor no).

    Text is yes when it is one of :data:`TRUE_WORDS` (``1, true, t, yes, y``, any case), no when
    it is one of :data:`FALSE_WORDS` (``0, false, f, no, n``); any other word ("maybe",
    "unknown") is ``None``, never a guessed no. Numbers and booleans by their truth. "Not stated"
    is kept apart from "no" so a rule can say ``not_evaluated`` instead of guessing.

    Examples
    --------
    >>> [truthy(v) for v in ("Yes", " y ", "no", "0", "maybe", 1, 0.0, True, None, float("nan"), "  ")]
    [True, True, False, False, None, True, False, True, None, None, None]
    """
    if is_blank(v):
        return None
    if isinstance(v, str):
        word = v.strip().lower()
        return True if word in TRUE_WORDS else False if word in FALSE_WORDS else None
    return bool(v)


def day_text(ts: Any) -> str:
    """A date as ``YYYY-MM-DD``.

    Examples
    --------
    >>> day_text("2026-04-01 13:00")
    '2026-04-01'
    """
    return pd.Timestamp(ts).strftime("%Y-%m-%d")


def fixed(v: float, nd: int = 2) -> str:
    """A number with thousands separators and ``nd`` decimals (``1,234.50``)."""
    return f"{v:,.{nd}f}"


def and_list(names: list[str] | tuple[str, ...]) -> str:
    """Words joined as a sentence lists them: ``a``, ``a and b``, ``a, b and c``; ``""`` for none.

    Examples
    --------
    >>> and_list([]), and_list(["A"]), and_list(["A", "B"]), and_list(["A", "B", "C"])
    ('', 'A', 'A and B', 'A, B and C')
    """
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def ft_text(v: float) -> str:
    """An elevation or length in feet at 0.1 ft (``847.4``)."""
    return f"{v:,.1f}"


HIDDEN_CHARACTERS: tuple[tuple[int, int], ...] = (
    (0x0000, 0x0008), (0x000B, 0x001F), (0x007F, 0x009F), (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
"""Code point ranges (first, last) of the characters Unicode lets a renderer draw as nothing
(``Default_Ignorable_Code_Point``): the bidirectional controls (U+202A-U+202E embeddings and
overrides, U+2066-U+2069 isolates, U+200E / U+200F marks, U+061C), the zero-width space, non-joiner
and joiner (U+200B-U+200D), the word joiner U+2060, the byte-order mark U+FEFF, the soft hyphen,
variation selectors, Hangul fillers and the tag characters U+E0000-U+E0FFF; and the C0 and C1 control
characters but tab and line feed (U+0000-U+001F, U+007F-U+009F: an ESC starts a terminal's escape sequence
that can rewrite what a CLI message showed, a carriage return writes over the line)."""


def _complement_class(ranges: tuple[tuple[int, int], ...]) -> str:
    """A regex class of the code points in ``ranges``, written as the negation of the others: a
    plain character matches the first range of a negated class, so the scan is about three times
    as fast as through the ranges themselves (0.1 s for a 13 MB page)."""
    parts, start = [], 0
    for first, last in ranges:
        if first > start:
            parts.append(f"\\U{start:08x}-\\U{first - 1:08x}")
        start = last + 1
    parts.append(f"\\U{start:08x}-\\U0010ffff")
    return "[^" + "".join(parts) + "]"


_HIDDEN = re.compile(_complement_class(HIDDEN_CHARACTERS))
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def visible_text(value: Any) -> str:
    """``value`` as text shown to a person, each invisible character (:data:`HIDDEN_CHARACTERS`) written as
    ``<U+XXXX>``: a parcel id ``"P1\\u202egnp.exe"`` reads ``P1<U+202E>gnp.exe``, never reversed as
    ``P1exe.png``, and ``"P1\\u200b"`` is not mistaken for ``P1``.

    The one convention for every display of attribute text, user file names and rulebook text:
    report.html / report.pdf (the templates' finalize), map.html's popups, tooltips and legend,
    the site plan's labels, field.kml / field.gpx names and descriptions, the CLI's messages. Data
    files (CSV, GeoJSON, GeoPackage, Parquet, database tables) keep the value as it is. Escape for
    the format afterwards (HTML, XML): the ``<`` of the visible form is escaped with the rest.
    Idempotent; printable ASCII is returned as it is (``str.isascii`` is O(1), ``isprintable`` one C pass).

    Examples
    --------
    >>> visible_text("P1\\u202egnp.exe"), visible_text("P\\u200b1"), visible_text("Zoë"), visible_text(12)
    ('P1<U+202E>gnp.exe', 'P<U+200B>1', 'Zoë', '12')
    >>> visible_text("P7\\x1b[2K\\rP1"), visible_text("line one\\nline two\\tend")
    ('P7<U+001B>[2K<U+000D>P1', 'line one\\nline two\\tend')
    """
    text = value if isinstance(value, str) else str(value)
    if text.isascii() and (text.isprintable() or not _CONTROL.search(text)):
        return text
    return _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


_SECRET_KV = re.compile(
    r"(?i)(\w*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)|\bpwd|\bpass)(\s*[=:]\s*)"
    r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)")
"""``password=...`` (also ``PGPASSWORD``, ``passwd``, ``pwd``, ``pass``, ``secret``, ``token``,
``api_key``, ``access_key``; ``=`` or ``:``): the value, quoted (libpq escapes) or up to the next space."""

_URL_CREDS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^/\s:@]*):([^@\s]*)@")
"""``scheme://user:password@``: the password may hold ``:`` and ``/`` (libpq URLs are not split on them)."""


def redact(text: Any, secrets: Iterable[str] = ()) -> Any:
    """A string without its secrets: each of ``secrets`` verbatim, ``password=...`` values and the
    password of ``scheme://user:password@`` URLs are replaced by ``***``.

    The one redaction of geoconstraints: database errors (:meth:`PgSource.scrub
    <geoconstraints.io.postgis.PgSource.scrub>`), the provenance and notes of report.html.

    Parameters
    ----------
    text : Any
        A string (other values are returned unchanged).
    secrets : iterable of str, optional
        Known secrets (a parsed password, its URL-encoded form) removed wherever they appear.

    Examples
    --------
    >>> redact("PG:host=db user=me password=hunter2 dbname=gis")
    'PG:host=db user=me password=*** dbname=gis'
    >>> redact("postgresql://me:pa:ss/w@db:5432/gis")
    'postgresql://me:***@db:5432/gis'
    >>> redact("could not connect: hunter2 rejected", secrets=["hunter2"])
    'could not connect: *** rejected'
    """
    if not isinstance(text, str):
        return text
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, "***")
    text = _URL_CREDS.sub(lambda m: f"{m.group(1)}{m.group(2)}:***@", text)
    return _SECRET_KV.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)


def redact_all(obj: Any) -> Any:
    """:func:`redact` applied to every string of nested dicts, lists and tuples (lists come back).

    Examples
    --------
    >>> redact_all({"dem": "dem.tif", "db": ["postgresql://u:pw@h/db", 3]})
    {'dem': 'dem.tif', 'db': ['postgresql://u:***@h/db', 3]}
    """
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, Mapping):
        return {k: redact_all(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact_all(v) for v in obj]
    return obj
