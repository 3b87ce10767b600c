"""Rule text rendering: message templates, titles and summaries filled from a rule's data.

One renderer for all rule text. A template is literal text with fields ``{name}`` or
``{name:spec}``:

* ``name`` is a plain field name: a threshold, param or switch of the rule, or (messages
  only) one of :data:`STANDARD_FIELDS`. No attribute or index lookups (``{a.b}``, ``{a[0]}``),
  no conversions (``{a!r}``), no positional fields (``{}``, ``{0}``).
* ``spec`` may only align and pad: ``[[fill]align][width]`` with a width of at most
  :data:`MAX_WIDTH` (``{subject_id:>8}``). Every value is text by then (numbers are written by
  :func:`fmt_num`), so no numeric spec applies.

The loader refuses any other template with a :class:`~geoconstraints.errors.RulebookError`
naming the rule and the key, so a rulebook cannot print Python internals or allocate
gigabytes. Messages of many findings are filled at once by array concatenation
(:func:`render_messages`); one finding is the case n = 1.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from geoconstraints.errors import RulebookError

STANDARD_FIELDS: tuple[str, ...] = ("subject_layer", "subject_id", "measured", "threshold", "unit", "detail")
"""Fields every message template may use besides the rule's own names."""

MAX_WIDTH = 80
"""Largest field width a template may ask for."""

_ALIGN = re.compile(r"(?:[^{}]?[<>^])?(?P<width>[1-9]\d*)?")
_FORMATTER = string.Formatter()

Part = tuple[str, str | None, str]
"""One piece of a parsed template: (literal text, field name or None, format spec)."""


# ------------------------------------------------------------------------------------------
# numbers and values as text

MESSAGE_DECIMALS = 2
"""Decimals of a number in a message (:func:`fmt_num`): 0.01 acre, 0.01 ft."""

SMALL_SIGNIFICANT = 2
"""Significant figures of a nonzero number too small for :data:`MESSAGE_DECIMALS` (under 0.01):
0.0043 acres (186 sq ft) is written ``0.0043``, never ``0``."""

_SMALL = 10.0 ** -MESSAGE_DECIMALS


def fmt_num(v: Any) -> str:
    """A number as message text: the one rule for every number a message or detail prints.

    * 0.01 and more (in magnitude): up to 2 decimals (:data:`MESSAGE_DECIMALS`), thousands
      separators, trailing zeros dropped; a million and more without decimals.
    * Not zero but under 0.01: 2 significant figures (:data:`SMALL_SIGNIFICANT`), so a nonzero
      quantity never reads as ``0``: an SFHA of 0.0043 acres (186 sq ft) needs a permit, and a
      sliver of 0.023 sq ft was measured, not nothing.
    * Zero is ``0``; NaN and None are ``n/a``.

    Examples
    --------
    >>> [fmt_num(x) for x in (150.0, 2560, 0.125, 1_234_567.8, float("nan"), None)]
    ['150', '2,560', '0.12', '1,234,568', 'n/a', 'n/a']
    >>> [fmt_num(x) for x in (0.0043, 0.023, 0.01, 0.0099, 0.0101, -0.00123, 0.0)]
    ['0.0043', '0.02', '0.01', '0.0099', '0.01', '-0.0012', '0']
    """
    if v is None:
        return "n/a"
    x = float(v)
    if np.isnan(x):
        return "n/a"
    if x != 0 and abs(x) < _SMALL:
        decimals = SMALL_SIGNIFICANT - 1 - math.floor(math.log10(abs(x)))
        return f"{x:.{decimals}f}".rstrip("0").rstrip(".")
    return f"{x:,.{MESSAGE_DECIMALS}f}".rstrip("0").rstrip(".") if abs(x) < 1e6 else f"{x:,.0f}"


def share_texts(shares: Any, decimals: int = 1) -> np.ndarray:
    """Shares (0 to 1) as per cent text, ``decimals`` after the point, that never read 0 % for a
    nonzero share nor 100 % for a part: a share that rounds to 0 is written as :func:`fmt_num` writes
    it, one that rounds to 100 but is not whole says ``over 99.9%``.

    Examples
    --------
    >>> share_texts([0.25, 0.0004, 0.00004, 1.0, 0.99996, 0.0, float("nan")]).tolist()
    ['25.0%', '0.04%', '0.004%', '100.0%', 'over 99.9%', '0.0%', 'n/a']
    >>> share_texts([0.004, 0.998, 0.5], decimals=0).tolist()
    ['0.4%', 'over 99%', '50%']
    """
    x = np.asarray(shares, dtype="float64")
    pct = 100.0 * x
    out = np.array(["n/a" if np.isnan(v) else f"{v:.{decimals}f}%" for v in pct], dtype=object)
    half = 0.5 * 10.0 ** -decimals
    tiny = (x > 0) & (pct < half)
    out[tiny] = [f"{fmt_num(v)}%" for v in pct[tiny]]
    out[(x < 1) & (pct >= 100.0 - half)] = f"over {100.0 - 2 * half:.{decimals}f}%"
    return out


def num_texts(values: Any) -> np.ndarray:
    """:func:`fmt_num` of every value of a float array, formatting each distinct value once."""
    v = np.asarray(values, dtype="float64")
    if not len(v):
        return np.empty(0, dtype=object)
    _bits, first, inverse = np.unique(v.view(np.int64), return_index=True, return_inverse=True)  # -0.0 kept apart
    u = v[first]
    texts = np.full(len(u), "n/a", dtype=object)  # NaN
    mag = np.abs(u)
    tiny = (mag > 0) & (mag < _SMALL)  # fmt_num's significant figures (rare)
    small = (mag < 1e6) & ~tiny  # the two other branches of fmt_num, without its per-value checks
    big = ~small & ~tiny & ~np.isnan(u)
    texts[tiny] = [fmt_num(x) for x in u[tiny].tolist()]
    texts[small] = [f"{x:,.{MESSAGE_DECIMALS}f}".rstrip("0").rstrip(".") for x in u[small].tolist()]
    texts[big] = [f"{x:,.0f}" for x in u[big].tolist()]
    return texts[inverse.reshape(-1)]


def value_text(v: Any) -> str:
    """One value as template text: floats by :func:`fmt_num`, lists joined by commas.

    Examples
    --------
    >>> value_text(["RA-1", "RA-2", "RC"]), value_text(25), value_text("horizontal"), value_text(None)
    ('RA-1, RA-2, RC', '25', 'horizontal', 'n/a')
    """
    if isinstance(v, str):
        return v
    if v is None or isinstance(v, (bool, np.bool_)):
        return "n/a" if v is None else str(v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return fmt_num(v)
    if isinstance(v, (list, tuple)):
        return ", ".join(value_text(x) for x in v)
    if v is pd.NaT:
        return "n/a"
    return str(v)


def value_texts(values: Any) -> np.ndarray:
    """:func:`value_text` of every value of a 1-D array-like (floats formatted once per value)."""
    arr = values.to_numpy() if isinstance(values, pd.Series) else values
    if not isinstance(arr, np.ndarray) or arr.ndim != 1:
        seq = list(arr)
        arr = np.empty(len(seq), dtype=object)
        arr[:] = seq
    if arr.dtype.kind == "f":
        return num_texts(arr)
    if arr.dtype.kind in "iub":
        uniq, inverse = np.unique(arr, return_inverse=True)
        return np.array([str(x) for x in uniq.tolist()], dtype=object)[inverse.reshape(-1)]
    if pd.api.types.infer_dtype(arr, skipna=False) == "string":  # text already (type checks in C)
        return np.asarray(arr, dtype=object)
    return np.array([v if type(v) is str else value_text(v) for v in arr], dtype=object)


# ------------------------------------------------------------------------------------------
# templates

@lru_cache(maxsize=4096)
def _parse(template: str) -> tuple[tuple[Part, ...], str]:
    """The parts of a template, or ``((), why)`` when it breaks the template rules."""
    try:
        raw = list(_FORMATTER.parse(template))
    except ValueError as exc:
        return (), f"is not a valid template ({exc}); write a literal brace as {{{{ or }}}}"
    parts: list[Part] = []
    for literal, name, spec, conv in raw:
        if name is None:
            parts.append((literal, None, ""))
            continue
        field = "{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
        if not name.isidentifier():
            return (), (f"field {field} is not a plain name: a template may use only names like "
                        f"{{measured}}, no attribute or index lookups and no positional fields")
        if conv:
            return (), f"field {field} uses a conversion (!{conv}); write {{{name}}}"
        m = _ALIGN.fullmatch(spec or "")
        if spec and (m is None or int(m.group("width") or 0) > MAX_WIDTH):
            return (), (f"field {field} has the format spec {spec!r}; only alignment and a width of at "
                        f"most {MAX_WIDTH} are allowed (e.g. {{{name}:>8}})")
        parts.append((literal, name, spec or ""))
    return tuple(parts), ""


def check_template(template: str, names: Collection[str], *, where: str) -> tuple[Part, ...]:
    """Parse ``template`` and check it uses only ``names``; a RulebookError naming ``where`` else.

    Parameters
    ----------
    template : str
    names : collection of str
        The field names the template may use.
    where : str
        What the template is, for the error (``rulebook vestal: rule HRV-010 messages.pass``).

    Examples
    --------
    >>> len(check_template("{measured} ft, limit {max_run_ft} ft", ["measured", "max_run_ft"], where="t"))
    3
    >>> check_template("{subject_id.__class__}", ["subject_id"], where="rule X-001 messages.pass")
    Traceback (most recent call last):
    ...
    geoconstraints.errors.RulebookError: rule X-001 messages.pass: field {subject_id.__class__} is not a plain name: a template may use only names like {measured}, no attribute or index lookups and no positional fields
    """
    parts, why = _parse(str(template))
    if why:
        raise RulebookError(f"{where}: {why}")
    unknown = sorted({n for _, n, _ in parts if n is not None and n not in names})
    if unknown:
        raise RulebookError(
            f"{where}: field {{{unknown[0]}}} is not a name this template may use; use "
            f"{', '.join('{' + n + '}' for n in sorted(names))}"
        )
    return parts


def fields_of(template: str) -> frozenset[str]:
    """The field names a template uses (none for a template the loader would refuse).

    Examples
    --------
    >>> sorted(fields_of("{subject_id}: {measured} ft, limit {max_run_ft:>6} ft"))
    ['max_run_ft', 'measured', 'subject_id']
    """
    return frozenset(n for _, n, _ in _parse(str(template))[0] if n is not None)


def render_text(template: str, texts: Mapping[str, str], *, where: str) -> str:
    """Fill one template (a title, a summary) from name -> text.

    Examples
    --------
    >>> render_text("Landings at least {min_distance_ft} ft from a road", {"min_distance_ft": "150"}, where="t")
    'Landings at least 150 ft from a road'
    """
    parts = check_template(template, texts.keys(), where=where)
    return "".join(lit + ("" if n is None else format(texts[n], spec)) for lit, n, spec in parts)


_MESSAGE_STATUSES: ContextVar[frozenset[str] | None] = ContextVar("message_statuses", default=None)


@contextmanager
def messages_only_for(statuses: Collection[str] | None) -> Iterator[None]:
    """Within the block, :func:`render_messages` fills the messages of these statuses only (the
    others are ``""``); None: every status (the default).

    For a command that keeps only some findings (a screening keeps those that need a person):
    the messages of the rows it drops right after the checks are never composed.

    Examples
    --------
    >>> tpl = {"pass": "ok {subject_id}", "review": "look at {subject_id}"}.get
    >>> st = np.array(["pass", "review"], dtype=object)
    >>> with messages_only_for(["review"]):
    ...     render_messages(tpl, st, {"subject_id": np.array(["P1", "P2"], dtype=object)}, where="t").tolist()
    ['', 'look at P2']
    """
    token = _MESSAGE_STATUSES.set(None if statuses is None else frozenset(statuses))
    try:
        yield
    finally:
        _MESSAGE_STATUSES.reset(token)


def message_statuses() -> frozenset[str] | None:
    """The statuses whose messages are filled here (None: every one; see :func:`messages_only_for`)."""
    return _MESSAGE_STATUSES.get()


def render_messages(
    template_of: Callable[[str], str],
    status: np.ndarray,
    texts: Mapping[str, str | np.ndarray],
    *,
    where: str,
    suffix: str = "",
) -> np.ndarray:
    """The message of every row: each status's template filled by array concatenation.

    Parameters
    ----------
    template_of : callable
        Status -> template.
    status : ndarray of str
        The status of each row.
    texts : mapping
        Field name -> its text: one string for every row, or an object array aligned with
        the rows.
    where : str
        The rule, for errors (``rule HRV-010``).
    suffix : str
        Appended to every message (the waiver note).

    Returns
    -------
    ndarray of str
        Stripped messages aligned with ``status`` (``""`` for a status left out by
        :func:`messages_only_for`).
    """
    out = np.empty(len(status), dtype=object)
    only = message_statuses()
    for s in pd.unique(status):
        rows = np.flatnonzero(status == s)
        if only is not None and s not in only:
            out[rows] = ""
            continue
        parts = check_template(template_of(str(s)), texts.keys(), where=f"{where} messages.{s}")
        frame, columns = "", []  # the template as a %-frame: constants inlined, one %s per array field
        for literal, name, spec in parts:
            frame += literal.replace("%", "%%")
            if name is None:
                continue
            t = texts[name]
            if isinstance(t, str):
                frame += (format(t, spec) if spec else t).replace("%", "%%")
                continue
            col = t[rows].tolist()
            columns.append([format(x, spec) for x in col] if spec else col)
            frame += "%s"
        if not columns:
            out[rows] = (frame % ()).strip() + suffix
        elif suffix or _may_strip(frame, columns):
            out[rows] = [(frame % row).strip() + suffix for row in zip(*columns)]
        else:  # nothing to strip and no suffix: the row's text as formatted
            out[rows] = [frame % row for row in zip(*columns)]
    return out


def _may_strip(frame: str, columns: list[list[str]]) -> bool:
    """True when ``(frame % row).strip()`` may differ from ``frame % row`` for some row.

    That happens only when the frame starts or ends with whitespace or with a field (``%s``)
    whose text may be empty or begin / end with whitespace; a frame that starts and ends with
    other literal text never needs the strip.

    Examples
    --------
    >>> _may_strip("parcels %s: %s.", [["P1"], ["x"]]), _may_strip("%s: %s", [["P1"], [""]])
    (False, True)
    >>> _may_strip("%s: %s", [["P1", "P2"], ["a", "b"]]), _may_strip("%s: x", [[" P1"]])
    (False, True)
    """
    head, tail = frame.lstrip(), frame.rstrip()
    if head != frame or tail != frame or not frame:
        return True
    edges = ([columns[0]] if head.startswith("%s") else []) + ([columns[-1]] if tail.endswith("%s") else [])
    return any(v == "" or v[0].isspace() or v[-1].isspace() for col in edges for v in set(col))
