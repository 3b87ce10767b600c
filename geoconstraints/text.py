"""Small text helpers shared by messages, warnings and reports (no geometry, no rules)."""

from __future__ import annotations

from collections.abc import Iterable
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
    if v is None or v is pd.NaT:
        return True
    if isinstance(v, float) and np.isnan(v):
        return True
    return isinstance(v, str) and not v.strip()


def truthy(v: Any) -> bool | None:
    """A yes/no value as True / False, or None when not stated (None, NaN, blank text).

    Text reads as yes for ``1, true, t, yes, y`` (any case), else no. A caller decides what
    "not stated" means (a rulebook switch, ``not_evaluated``): never a silent ``False``.

    Examples
    --------
    >>> [truthy(v) for v in ("Yes", "no", " ", None, float("nan"), 1, 0, True)]
    [True, False, None, None, None, True, False, True]
    """
    if v is pd.NA or is_blank(v):
        return None
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true", "t", "yes", "y")
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


def ft_text(v: float) -> str:
    """An elevation or length in feet at 0.1 ft (``847.4``)."""
    return f"{v:,.1f}"
