"""SEQR classification: SQR-001 (the town's SEQR law; lists, bounds and citations from the rulebook).

An action is exempt, Type II (within the exact bounds of its list item), or needs a
determination of significance.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

import geopandas as gpd
import pandas as pd

from geoconstraints.errors import InputError
from geoconstraints.geometry.buffers import norm_district
from geoconstraints.rulebook.loader import load_rulebook
from geoconstraints.rulebook.model import Rule, Rulebook, unit_of
from geoconstraints.rulebook.registry import check

log = logging.getLogger(__name__)

RULE_ID = "SQR-001"
_GROUPS = (("exempt_actions", "exempt"), ("type_ii_actions", "Type II"),
           ("other_actions", "determination needed"))
_VALUE_OF_UNIT = {"acres_per_mile": "acres", "count": "lanes", "units": "units", "lots": "lots",
                  "pct": "expansion_pct", "acres": "acres"}
"""The action's value a bound compares, by the unit (:func:`~geoconstraints.rulebook.model.unit_of`)
of the bound's threshold."""
_UNIT_WORD = {"units": "units", "lots": "houses", "expansion_pct": "%", "acres": "acres",
              "lanes": "travel lanes added"}
_COMPARE = {"lt": ("less than", "not less than", lambda v, lim: v < lim),
            "le": ("not more than", "more than", lambda v, lim: v <= lim)}


STATEMENTS = ("eis_completed", "type_i", "chapter_24", "board_resolved_significant")
"""Yes/no statements a list item may require (``requires:`` in the rulebook); None = not stated."""


@dataclass(frozen=True)
class Action:
    """An action to classify (the CLI's options): the SEQR check's context, plain data.

    Nothing is assumed: a statement (``board_approval``, ``eis_completed``, ``type_i``,
    ``chapter_24``, ``board_resolved_significant``: the town board has determined by resolution that
    the activity may have a significant impact) is None until the user makes it, and each resource a
    list item names must be stated affected (``affects``) or not significantly affected
    (``no_effect_on``). ``town_districts`` is not the user's: it is the rulebook's list of the town's
    every district (:meth:`in_town`), with which a ``district`` naming none of them is unknown.
    """

    action_type: str
    units: int | None = None
    lots: int | None = None
    expansion_pct: float | None = None
    acres: float | None = None
    district: str | None = None
    board_approval: bool | None = None
    affects: tuple[str, ...] = field(default_factory=tuple)
    lanes: int | None = None
    no_effect_on: tuple[str, ...] = field(default_factory=tuple)
    eis_completed: bool | None = None
    type_i: bool | None = None
    chapter_24: bool | None = None
    board_resolved_significant: bool | None = None
    town_districts: tuple[str, ...] | None = None

    def in_town(self, town_districts: tuple[str, ...] | None) -> Action:
        """This action, its ``district`` read against the town's every district (the rulebook's
        ``town_districts``; None: the rulebook does not list them)."""
        return replace(self, town_districts=town_districts)


def norm_key(v: str) -> str:
    """An action type or resource as a key (``"Small subdivision"`` -> ``small_subdivision``)."""
    return str(v).strip().lower().replace("-", "_").replace(" ", "_")


def _entries(rule: Rule) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for group, kind in _GROUPS:
        for e in rule.p(group, []) or []:
            if e.get("selectable", True) is False:
                continue
            out.append((kind, e))
    return out


def action_types(rulebook: Rulebook | str | None = None) -> dict[str, str]:
    """The action types a rulebook knows: key -> "class: description (citation)".

    Parameters
    ----------
    rulebook : Rulebook or str, optional
        Default: the ``vestal`` rulebook.

    Examples
    --------
    >>> action_types()["multiple_residence"][:7]
    'Type II'
    """
    rb = load_rulebook(rulebook or "vestal") if not isinstance(rulebook, Rulebook) else rulebook
    return {e["key"]: f"{kind}: {str(e['text']).rstrip('.')} ({e['citation']})" for kind, e in _entries(rb[RULE_ID])}


def _value_name(limit: str) -> str:
    """The action's value a bound compares, from the unit of the bound's threshold name."""
    name = _VALUE_OF_UNIT.get(unit_of(limit))
    if name is None or (name == "lanes" and not limit.endswith("_lanes_count")):
        raise InputError(f"rule {RULE_ID}: limit {limit!r} bounds no value the classifier knows; its unit must be "
                         f"one of {', '.join(sorted(_VALUE_OF_UNIT))} (a count of travel lanes: _lanes_count)")
    return name


def _num(v: float) -> str:
    return f"{v:g}"


def _bounds(rule: Rule, e: dict[str, Any], action: Action, met: list[str], fails: list[str],
            missing: list[str]) -> tuple[float | None, float | None, str]:
    """Compare the action with the numeric bounds of list item ``e``; (measured, threshold, unit)
    of the first bound."""
    measured = threshold = None
    unit = ""
    bounds_of = ([{"limit": e["limit"], "comparison": e.get("comparison", "lt"), "optional": e.get("optional")}]
                 if e.get("limit") else []) + list(e.get("limits") or [])
    for k, b in enumerate(bounds_of):  # one or two bounds of one list item
        limit = str(b["limit"])
        lim = rule.t(limit)
        name = _value_name(limit)
        word, neg, ok = _COMPARE[b.get("comparison", "lt")]
        value = getattr(action, name)
        uw = _UNIT_WORD[name] + (" per mile of right-of-way" if unit_of(limit) == "acres_per_mile" else "")
        if k == 0:  # the first bound is the finding's measured / threshold
            unit, threshold, measured = unit_of(limit), lim, (None if value is None else float(value))
        if value is None:
            if b.get("optional"):
                met.append(f"no {name} given; the item covers {word} {_num(lim)} {uw}")
            else:
                missing.append(f"give {name.replace('_', '-')} (the bound is {word} {_num(lim)} {uw}, {limit})")
        elif ok(float(value), lim):
            met.append(f"{_num(float(value))} {uw} is {word} {_num(lim)} ({limit})")
        else:
            fails.append(f"{_num(float(value))} {uw} is {neg} {_num(lim)} ({limit})")
    return measured, threshold, unit


def _statements(rule: Rule, e: dict[str, Any], action: Action, met: list[str], fails: list[str],
                missing: list[str]) -> None:
    """Compare the action with the yes/no statements list item ``e`` requires (``requires:``)."""
    known = {str(x["key"]): x for x in rule.p("statements", []) or []}
    for key, want in (e.get("requires") or {}).items():
        st = known.get(str(key))
        if st is None or key not in STATEMENTS:
            raise InputError(f"rule {RULE_ID}: list item {e['key']} requires {key!r}, which is not one of the "
                             f"statements the classifier asks ({', '.join(STATEMENTS)}) with a text in params.statements")
        said = getattr(action, str(key))
        if said is None:
            missing.append(f"say whether {st['if_yes']} ({st['option']})")
        elif bool(said) == bool(want):
            met.append(f"stated: {st['if_yes'] if want else st['if_no']}")
        else:
            fails.append(f"stated: {st['if_yes'] if said else st['if_no']}")


def _effects(e: dict[str, Any], action: Action, met: list[str], fails: list[str], missing: list[str]) -> None:
    """Each resource of ``no_effect_on`` must be stated affected or not significantly affected."""
    no_effect = list(e.get("no_effect_on") or [])
    if not no_effect:
        return
    hit = [a for a in action.affects if a in no_effect]
    if hit:
        fails.append(f"affects {', '.join(hit)} (the item requires no significant effect on {', '.join(no_effect)})")
        return
    unsaid = [r for r in no_effect if r not in action.no_effect_on]
    if unsaid:
        missing.append(f"state whether the action has a significant effect on {', '.join(unsaid)} "
                       f"(--affects RESOURCE or --no-effect-on RESOURCE; --no-effect-on all for every one)")
    else:
        met.append(f"stated: no significant effect on {', '.join(no_effect)}")


def _conditions(e: dict[str, Any], action: Action, met: list[str], fails: list[str], missing: list[str]) -> None:
    """Compare the action with the other conditions of list item ``e`` (district, board approval)."""
    districts = e.get("districts")
    if districts:
        allowed = {str(x).strip().upper() for x in districts}
        town = action.town_districts
        given = "" if action.district is None else str(action.district).strip()
        read = norm_district(pd.Series([given]), districts, town).iloc[0]  # C1, c 1: C-1; with town: RA-l unknown
        if read in allowed:
            met.append(f"district {given} is one of {', '.join(districts)}")
        elif not given:
            missing.append(f"give the zoning district (the item covers {', '.join(districts)})")
        elif pd.isna(read):  # names no district of the town: perhaps one of the item's, misspelt
            missing.append(f"give a zoning district of the town: {given!r} names none of the town's districts "
                           f"({', '.join(town or ())}), so whether it is one of {', '.join(districts)} is unknown")
        else:
            fails.append(f"district {given} is not one of {', '.join(districts)}")
    if "board_approval" in e:
        want = bool(e["board_approval"])
        if action.board_approval is None:
            missing.append("say whether town board or zoning board of appeals approval is needed "
                           "(--board-approval / --no-board-approval)")
        elif bool(action.board_approval) == want:
            met.append("no town board or zoning board of appeals approval needed" if not want else
                       "board approval given")
        else:
            fails.append("needs town board or zoning board of appeals approval" if not want else
                         "board approval not given")


def classify(rule: Rule, action: Action) -> gpd.GeoDataFrame:
    """Classify one action under SQR-001; its finding (one row).

    ``pass`` for exempt and Type II (naming the list item, its citation and the bound met),
    ``review`` when a determination of significance is needed (with the draft-EIS fee),
    ``not_evaluated`` when a value a bound needs or a statement the item requires was not given.
    An exempt item is checked like a Type II one: a statement it requires (``requires:``, e.g.
    actions of the town, § 6-22(8), not Type I) must be made before it is ``pass``.

    Examples
    --------
    >>> rule = load_rulebook("vestal")[RULE_ID]
    >>> f = classify(rule, Action("small_subdivision", lots=39, chapter_24=True)).iloc[0]
    >>> f["status"], float(f["measured"]), float(f["threshold"]), f["unit"]
    ('pass', 39.0, 40.0, 'lots')
    >>> town = [classify(rule, Action("budget_and_town_actions", type_i=False, board_resolved_significant=said))
    ...         for said in (None, True, False)]
    >>> [t["status"].iloc[0] for t in town]
    ['not_evaluated', 'review', 'pass']
    """
    key = norm_key(action.action_type)
    found = {e["key"]: (kind, e) for kind, e in _entries(rule)}
    if key not in found:
        raise InputError(f"unknown SEQR action type {action.action_type!r}; known types: "
                         f"{', '.join(found)} (see geoconstraints seqr --list-actions)")
    kind, e = found[key]
    item = f"{str(e['text']).rstrip('.')} ({e['citation']})"
    needed = (f"the town determines whether the action may have a significant effect on the environment "
              f"({rule.p('determination_citation', rule.citation)}); if so a draft EIS is filed with a fee of "
              f"${rule.t('deis_fee_usd'):,.0f} ({rule.p('deis_fee_citation', rule.citation)}), and the decision on the "
              f"action comes within {rule.t('feis_decision_days'):,.0f} calendar days of the filing of the final EIS unless "
              f"extended by mutual consent ({rule.p('feis_decision_citation', rule.citation)})")
    common: dict[str, Any] = {"subject_layer": "action", "subject_id": key}
    if kind not in ("exempt", "Type II"):
        return rule.findings("review", **common, detail=f"{item}; {needed}")
    met: list[str] = []
    fails: list[str] = []
    missing: list[str] = []
    measured, threshold, unit = _bounds(rule, e, action, met, fails, missing)
    _conditions(e, action, met, fails, missing)
    _statements(rule, e, action, met, fails, missing)
    _effects(e, action, met, fails, missing)
    at = {**common, "measured": measured, "threshold": threshold, "unit": unit}
    if fails:
        return rule.findings("review", **at, detail=f"not {kind} under {e['citation']}: {'; '.join(fails)}; {needed}")
    if missing:
        return rule.findings("not_evaluated", **at, detail=(f"{kind} item {item} holds only on conditions not yet "
                                                             f"stated: {'; '.join(missing)}"
                                                             + (f" (so far: {'; '.join(met)})" if met else "")))
    bounds = ("; " + "; ".join(met)) if met else ""
    if kind == "exempt":
        return rule.findings("pass", **at, detail=(f"exempt action: {item}{bounds}; no SEQR review, provided the "
                                                   f"article's other requirements are met"))
    return rule.findings("pass", **at, detail=f"Type II action: {item}{bounds}; may be processed without regard to "
                                              f"the SEQR article")


@check(RULE_ID)
def check_seqr(action: Action, rule: Rule) -> gpd.GeoDataFrame:
    """SQR-001 check: classify the action (one finding)."""
    return classify(rule, action)


def resources(rule: Rule) -> list[str]:
    """The resources the rulebook's list items name (``no_effect_on``), sorted."""
    return sorted({str(r) for _k, e in _entries(rule) for r in (e.get("no_effect_on") or [])})


def validate_action(rule: Rule, action: Action) -> None:
    """Refuse resources the rulebook does not name, and a resource stated both affected and not
    affected (InputError). The action's numbers (negative, NaN, a fraction of a count) are refused
    with the command's other numbers, before the action is built
    (:data:`~geoconstraints.commands.SEQR_NUMBER_BOUNDS`)."""
    known = resources(rule)
    for opt, given in (("--affects", action.affects), ("--no-effect-on", action.no_effect_on)):
        bad = [a for a in given if a not in known]
        if bad:
            raise InputError(f"SEQR {opt} {', '.join(bad)}: not a resource the rulebook names; use "
                             f"{', '.join(known)}" + (" or all" if opt == "--no-effect-on" else ""))
    both = sorted(set(action.affects) & set(action.no_effect_on))
    if both:
        raise InputError(f"SEQR {', '.join(both)}: stated both affected (--affects) and not significantly affected "
                         f"(--no-effect-on); state each resource once")

