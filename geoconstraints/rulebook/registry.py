"""The check registry: ``@check("ID")`` binds a function to a rule id; :func:`run_group` runs
every rule of a group and stacks their findings (:func:`run_checks`: each rule's frame).

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

A screening of a county keeps the findings that need a person (``run_checks(..., keep=)``):
:meth:`Rule.findings <geoconstraints.rulebook.model.Rule.findings>` then builds the rows of those
statuses only and records the status of every row
(:class:`~geoconstraints.rulebook.findings.Outcomes`), so a check that returns its frame as
``Rule.findings`` built it costs nothing for the millions of pass and info rows; a check that
changes the frame afterwards (filters it, stacks two) is run again building every row.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import Any

import geopandas as gpd

from geoconstraints import interrupt
from geoconstraints.errors import GeoConstraintsError, RulebookError
from geoconstraints.rulebook.findings import FINDING_COLUMNS, Outcomes, concat_findings, rows_only_for
from geoconstraints.rulebook.loader import run_messages
from geoconstraints.rulebook.model import Rule, Rulebook
from geoconstraints.rulebook.repairs import repaired_subjects

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


RERAISE = False
"""Let a failing check's exception through (``geoconstraints --debug`` sets it, for the traceback)."""


def run_group(rulebook: Rulebook, group: str, ctx: Any) -> gpd.GeoDataFrame:
    """Run every rule of ``group`` in ``rulebook`` against ``ctx``; stack their findings.

    The frames of :func:`run_checks` (every rule runs; a failing check: see there) stacked by
    :func:`~geoconstraints.rulebook.findings.concat_findings`.

    Returns
    -------
    GeoDataFrame
        The frames of all checks, in rule order, with their extra columns.
    """
    return concat_findings(run_checks(rulebook, group, ctx))


def run_checks(rulebook: Rulebook, group: str, ctx: Any, *,
               keep: Collection[str] | None = None) -> list[gpd.GeoDataFrame | Outcomes]:
    """Run every rule of ``group`` in ``rulebook`` against ``ctx``: the findings frame of each, in rule
    order (a screening filters each before stacking them, :func:`geoconstraints.result.split_scope`).

    A finding whose subject is a feature the loader repaired (``ctx.layers``, :attr:`Layers.repairs
    <geoconstraints.io.layers.Layers.repairs>`) says so: :mod:`geoconstraints.rulebook.repairs`.

    Every rule runs (none stops the others). A rule with no registered check is an error
    naming the rule, since it would otherwise be silently skipped.

    Where the line is: a :class:`~geoconstraints.errors.GeoConstraintsError` raised by a check
    is about the input (a field or layer the user must fix) and stops the run (exit code 2 from
    the CLI), like any input error. Any other exception, or a check returning something other
    than a findings frame, is a bug in that check: its rule becomes one run-wide
    ``not_evaluated`` finding whose message gives the error, a warning is logged, and the
    other rules still run (set :data:`RERAISE` to get the exception instead).

    Parameters
    ----------
    keep : collection of str, optional
        Build the findings of these statuses only (a screening's person scope): a check that
        returns the frame of its :meth:`Rule.findings` call as it is gives an
        :class:`~geoconstraints.rulebook.findings.Outcomes` (every row's status, the findings
        kept); a check that changes the frame after building it (filters, stacks several) is run
        again building every row, and gives its frame.

    Returns
    -------
    list of GeoDataFrame or Outcomes
        One per rule, in rule order; a frame with the check's extra columns.
    """
    layers = getattr(ctx, "layers", None)  # the findings about a repaired feature say so (rulebook.repairs)
    with repaired_subjects(getattr(layers, "repairs", None), run_messages(rulebook)):
        return _run_checks(rulebook, group, ctx, keep)


def _run_checks(rulebook: Rulebook, group: str, ctx: Any,
                keep: Collection[str] | None) -> list[gpd.GeoDataFrame | Outcomes]:
    out: list[gpd.GeoDataFrame | Outcomes] = []
    for rule in rulebook.require_group(group):
        fn = CHECKS.get(rule.id)
        if fn is None:
            raise RulebookError(
                f"rule {rule.id} ({rule.title}) in rulebook {rulebook.name!r} has no check "
                f"function; register one with @geoconstraints.rulebook.check({rule.id!r})"
            )
        log.debug("running %s", rule.id)
        interrupt.check()  # a Ctrl-C a library swallowed in the rule before: the next one does not run
        try:
            if keep is None:
                res = _checked(fn, ctx, rule)
            else:
                with rows_only_for(keep) as got:
                    res = _checked(fn, ctx, rule)
                if len(got) == 1 and got[0].frame is res:  # the frame Rule.findings built, as it is
                    out.append(got[0])
                    continue
                if got:  # rows were left out of a frame the check then changed: every row again
                    res = _checked(fn, ctx, rule)
        except (GeoConstraintsError, MemoryError):
            raise
        except Exception as exc:  # a bug in one check must not take the run down
            if RERAISE:
                raise
            res = failed_check(rule, exc, getattr(ctx, "crs", None))
        out.append(res)
    return out


def _checked(fn: Callable[[Any, Rule], gpd.GeoDataFrame], ctx: Any, rule: Rule) -> gpd.GeoDataFrame:
    """``fn(ctx, rule)``, refused (TypeError) when it is not a findings frame."""
    res = fn(ctx, rule)
    if not isinstance(res, gpd.GeoDataFrame) or not set(FINDING_COLUMNS) <= set(res.columns):
        raise TypeError(f"the check of {rule.id} ({getattr(fn, '__qualname__', fn)}) returned "
                        f"{type(res).__name__}, not a findings frame built with Rule.findings")
    return res


def failed_check(rule: Rule, exc: BaseException, crs: Any = None) -> gpd.GeoDataFrame:
    """The one run-wide ``not_evaluated`` finding of a rule whose check failed, naming the error."""
    what = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else 'no message'}"
    log.warning("rule %s could not be evaluated: its check failed (%s); the other rules ran. This is a bug: "
                "rerun with --debug and report it", rule.id, what)
    f = rule.findings("not_evaluated", subject_layer="", subject_id="", crs=crs,
                      detail=f"the check failed ({what})")
    f["message"] = (f"{rule.id} not evaluated: its check failed ({what}). This is a bug in geoconstraints, not "
                    f"in the inputs: rerun with --debug and report it")
    return f
