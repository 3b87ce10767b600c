"""The check registry: ``@check("ID")`` binds a function to a rule id; :func:`run_group` runs
every rule of a group and collects the findings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

import geopandas as gpd

from geoconstraints.errors import RulebookError
from geoconstraints.rulebook.findings import Finding
from geoconstraints.rulebook.model import Rule, Rulebook

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------
# check registry

CheckFn = Callable[[Any, Rule], Iterable[Finding | gpd.GeoDataFrame]]
CHECKS: dict[str, CheckFn] = {}


def check(rule_id: str) -> Callable[[CheckFn], CheckFn]:
    """Register the check function of ``rule_id``.

    The function takes ``(ctx, rule)`` and returns findings (records or frames). ``ctx`` is
    the domain's context (layers, DEM, derived layers); the function must not read files or
    print, and must take every number from ``rule``.
    """

    def deco(fn: CheckFn) -> CheckFn:
        if rule_id in CHECKS and CHECKS[rule_id] is not fn:
            raise RuntimeError(f"two checks registered for {rule_id}")
        CHECKS[rule_id] = fn
        return fn

    return deco


def run_group(rulebook: Rulebook, group: str, ctx: Any) -> list[Finding | gpd.GeoDataFrame]:
    """Run every rule of ``group`` in ``rulebook`` against ``ctx``; collect all findings.

    Every rule runs (none stops the others). A rule with no registered check is an error
    naming the rule, since it would otherwise be silently skipped.
    """
    out: list[Finding | gpd.GeoDataFrame] = []
    for rule in rulebook.require_group(group):
        fn = CHECKS.get(rule.id)
        if fn is None:
            raise RulebookError(
                f"rule {rule.id} ({rule.title}) in rulebook {rulebook.name!r} has no check "
                f"function; register one with @geoconstraints.rules.check({rule.id!r})"
            )
        log.debug("running %s", rule.id)
        res = fn(ctx, rule)
        out.extend(res if res is not None else [])
    return out

