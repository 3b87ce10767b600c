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
_COMPARE = {"lt": ("less_than", "not_less_than", lambda v, lim: v < lim),
            "le": ("not_more_than", "more_than", lambda v, lim: v <= lim)}
"""A bound's comparison: the rule's phrases naming it met and failed, and the test."""


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
        word_key, neg_key, ok = _COMPARE[b.get("comparison", "lt")]
        word, neg = rule.phrase(word_key), rule.phrase(neg_key)
        value = getattr(action, name)
        uw = rule.phrase(f"unit_{name}")
        uw = rule.phrase("per_mile", unit=uw) if unit_of(limit) == "acres_per_mile" else uw
        if k == 0:  # the first bound is the finding's measured / threshold
            unit, threshold, measured = unit_of(limit), lim, (None if value is None else float(value))
        if value is None:
            if b.get("optional"):
                met.append(rule.phrase("bound_not_given", value=name, comparison=word, bound=_num(lim), unit=uw))
            else:
                missing.append(rule.phrase("give_value", option=name.replace("_", "-"), comparison=word,
                                           bound=_num(lim), unit=uw, limit=limit))
        else:
            met_it = ok(float(value), lim)
            (met if met_it else fails).append(rule.phrase("bound", value=_num(float(value)), unit=uw,
                                                          comparison=word if met_it else neg, bound=_num(lim),
                                                          limit=limit))
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
            missing.append(rule.phrase("say_statement", statement=st["if_yes"], option=st["option"]))
        elif bool(said) == bool(want):
            met.append(rule.phrase("stated", statement=st["if_yes"] if want else st["if_no"]))
        else:
            fails.append(rule.phrase("stated", statement=st["if_yes"] if said else st["if_no"]))


def _effects(rule: Rule, e: dict[str, Any], action: Action, met: list[str], fails: list[str],
             missing: list[str]) -> None:
    """Each resource of ``no_effect_on`` must be stated affected or not significantly affected."""
    no_effect = list(e.get("no_effect_on") or [])
    if not no_effect:
        return
    hit = [a for a in action.affects if a in no_effect]
    if hit:
        fails.append(rule.phrase("affects", resources=hit, required=no_effect))
        return
    unsaid = [r for r in no_effect if r not in action.no_effect_on]
    if unsaid:
        missing.append(rule.phrase("state_effect", resources=unsaid))
    else:
        met.append(rule.phrase("no_effect", resources=no_effect))


def _conditions(rule: Rule, e: dict[str, Any], action: Action, met: list[str], fails: list[str],
                missing: list[str]) -> None:
    """Compare the action with the other conditions of list item ``e`` (district, board approval)."""
    districts = e.get("districts")
    if districts:
        allowed = {str(x).strip().upper() for x in districts}
        town = action.town_districts
        given = "" if action.district is None else str(action.district).strip()
        read = norm_district(pd.Series([given]), districts, town).iloc[0]  # C1, c 1: C-1; with town: RA-l unknown
        names = ", ".join(map(str, districts))
        if read in allowed:
            met.append(rule.phrase("district_in", district=given, allowed=names))
        elif not given:
            missing.append(rule.phrase("give_district", allowed=names))
        elif pd.isna(read):  # names no district of the town: perhaps one of the item's, misspelt
            missing.append(rule.phrase("district_unknown", district=repr(given), town=", ".join(town or ()),
                                       allowed=names))
        else:
            fails.append(rule.phrase("district_out", district=given, allowed=names))
    if "board_approval" in e:
        want = bool(e["board_approval"])
        if action.board_approval is None:
            missing.append(rule.phrase("say_board"))
        elif bool(action.board_approval) == want:
            met.append(rule.phrase("board_given" if want else "no_board_needed"))
        else:
            fails.append(rule.phrase("board_not_given" if want else "board_needed"))


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
    needed = rule.phrase("determination", **{c: rule.p(c, rule.citation) for c in (
        "determination_citation", "deis_fee_citation", "feis_decision_citation")})
    common: dict[str, Any] = {"subject_layer": "action", "subject_id": key}
    if kind not in ("exempt", "Type II"):
        return rule.findings("review", **common, detail=rule.phrase("other_action", item=item, determination=needed))
    met: list[str] = []
    fails: list[str] = []
    missing: list[str] = []
    measured, threshold, unit = _bounds(rule, e, action, met, fails, missing)
    _conditions(rule, e, action, met, fails, missing)
    _statements(rule, e, action, met, fails, missing)
    _effects(rule, e, action, met, fails, missing)
    at = {**common, "measured": measured, "threshold": threshold, "unit": unit}
    if fails:
        return rule.findings("review", **at, detail=rule.phrase("not_of_kind", kind=kind, citation=e["citation"],
                                                                fails="; ".join(fails), determination=needed))
    if missing:
        so_far = f" {rule.phrase('so_far', met='; '.join(met))}" if met else ""
        return rule.findings("not_evaluated", **at, detail=rule.phrase("conditional", kind=kind, item=item,
                                                                        missing="; ".join(missing)) + so_far)
    bounds = ("; " + "; ".join(met)) if met else ""
    return rule.findings("pass", **at, detail=rule.phrase("exempt" if kind == "exempt" else "type_ii", item=item,
                                                          bounds=bounds))


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

