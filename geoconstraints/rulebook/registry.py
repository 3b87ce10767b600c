"""The check registry: ``@check("ID")`` binds a function to a rule id; :func:`run_group` runs
every rule of a group and stacks their findings.

The contract of a check
-----------------------
``fn(ctx, rule) -> GeoDataFrame``: ``ctx`` is the command's context (plain data: the layers and
what the command derived from them), ``rule`` the :class:`~geoconstraints.rulebook.model.Rule`
to apply. The check returns ONE frame built with :meth:`Rule.findings
<geoconstraints.rulebook.model.Rule.findings>`, aligned to its subjects: one row per subject
examined, ``pass`` included (a subject may have several rows, e.g. one per steep run of a
road); a run-wide finding is a row with an empty ``subject_id``. A check is pure: it reads no
file, writes nothing into ``ctx`` and takes every number, citation and text from ``rule``.

The frame may carry extra per-subject columns beyond
:data:`~geoconstraints.rulebook.findings.FINDING_COLUMNS` (``row_distance_ft`` of HRV-025,
``via`` of HRV-027 ...): the command reads them from what :func:`run_group` returns to build
its per-feature tables, and :func:`~geoconstraints.rulebook.findings.findings_frame` (called by
``make_result``) keeps only the standard columns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import geopandas as gpd

from geoconstraints.errors import RulebookError
from geoconstraints.rulebook.findings import FINDING_COLUMNS, concat_findings
from geoconstraints.rulebook.model import Rule, Rulebook

log = logging.getLogger(__name__)


CheckFn = Callable[[Any, Rule], gpd.GeoDataFrame]
CHECKS: dict[str, CheckFn] = {}


def check(rule_id: str) -> Callable[[CheckFn], CheckFn]:
    """Register the check function of ``rule_id`` (see the module's contract of a check)."""

    def deco(fn: CheckFn) -> CheckFn:
        if rule_id in CHECKS and CHECKS[rule_id] is not fn:
            raise RuntimeError(f"two checks registered for {rule_id}")
        CHECKS[rule_id] = fn
        return fn

    return deco


def check_of(rule_id: str) -> CheckFn | None:
    """The check function registered for ``rule_id`` (None when there is none)."""
    return CHECKS.get(rule_id)


def run_group(rulebook: Rulebook, group: str, ctx: Any) -> gpd.GeoDataFrame:
    """Run every rule of ``group`` in ``rulebook`` against ``ctx``; stack their findings.

    Every rule runs (none stops the others). A rule with no registered check is an error
    naming the rule, since it would otherwise be silently skipped; so is a check that returns
    anything but a findings frame.

    Returns
    -------
    GeoDataFrame
        The frames of all checks, in rule order, with their extra columns.
    """
    frames: list[gpd.GeoDataFrame] = []
    for rule in rulebook.require_group(group):
        fn = CHECKS.get(rule.id)
        if fn is None:
            raise RulebookError(
                f"rule {rule.id} ({rule.title}) in rulebook {rulebook.name!r} has no check "
                f"function; register one with @geoconstraints.rulebook.check({rule.id!r})"
            )
        log.debug("running %s", rule.id)
        res = fn(ctx, rule)
        if not isinstance(res, gpd.GeoDataFrame) or not set(FINDING_COLUMNS) <= set(res.columns):
            raise TypeError(f"the check of {rule.id} ({getattr(fn, '__qualname__', fn)}) returned "
                            f"{type(res).__name__}, not a findings frame built with Rule.findings")
        frames.append(res)
    return concat_findings(frames)
