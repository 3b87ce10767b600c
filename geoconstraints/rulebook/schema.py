"""The rulebook schema: types, ranges and known keys of a rulebook file and of each rule.

Validated with pydantic v2 (declared in ``pyproject.toml``): ``extra="forbid"`` refuses an
unknown key (the typo ``threshold:`` is named, with the key it probably meant), strict number
types refuse a string or a bool where a number belongs, and ``allow_inf_nan=False`` refuses NaN
and infinity, which compare false with everything and would turn every violation into a pass.
Thresholds are not a fixed list: any name ending with a unit suffix (``_ft``, ``_pct``...) is a
threshold, and every suffix names a magnitude, so a negative value is refused; a step, divisor,
conversion factor or size (a name with a word of :data:`POSITIVE_WORDS`: ``contour_interval_ft``,
``standard_cord_cuft``) must be more than 0, and an interval in days a whole number of days, 1 or
more. Params and tables are free-form data, but any
number in them must be finite, and a number under a key with a unit suffix must not be negative.

Two levels are checked (:mod:`geoconstraints.rulebook.loader` calls both):

* :func:`check_file` on every file read (shipped or user, before ``extends`` merging): a user
  file may list only the parts of a rule it changes, so only ``id`` is required there;
* :func:`check_rule` on every rule after merging: ``title``, ``group`` and ``citation`` are
  required, and each switch's value must be one of its choices.

Every problem becomes a :class:`~geoconstraints.errors.RulebookError` of one line naming the
file, the rule, the key and the fix.

Examples
--------
>>> check_file({"extends": "vestal", "rules": [{"id": "HRV-010", "thresholds": {"max_grade_pct": 30}}]}, "mine.yaml")
>>> check_file({"extends": "vestal", "rules": [{"id": "HRV-010", "threshold": {"max_grade_pct": 30}}]}, "mine.yaml")
Traceback (most recent call last):
...
geoconstraints.errors.RulebookError: rulebook mine.yaml: rule HRV-010: unknown key 'threshold' (did you mean 'thresholds'?). Keys of a rule are id, title, group, citation, summary, thresholds, params, switches, tables, messages, phrases, inputs, notes. Fix the rulebook
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from geoconstraints.errors import RulebookError
from geoconstraints.io.roles import ROLES
from geoconstraints.rulebook.findings import STATUSES
from geoconstraints.rulebook.model import GROUPS, RULE_ID_PATTERN, UNIT_SUFFIXES, rule_districts, unit_of
from geoconstraints.units import number_problem as finite_problem

SIGNED_UNITS: frozenset[str] = frozenset()
"""Unit suffixes whose values may be negative (none today: every suffix names a magnitude)."""

POSITIVE_WORDS: dict[str, str] = {
    "interval": "an interval (the step between contours, or between inspections)",
    "precision": "a rounding step (elevations are divided by it)",
    "scale": "a map scale (feet of ground per inch of paper)",
    "standard": "a conversion factor (e.g. the cubic feet in a standard cord)",
    "period": "a period of time",
    "width": "a width (a strip of no width covers nothing)",
    "area": "an area given to a feature",
}
"""Words of a threshold's name (between underscores, before the unit) that make it a step, divisor,
conversion factor or size: its value must be more than 0, since 0 divides by zero, never ends or
draws nothing (``contour_interval_ft``, ``standard_cord_cuft``, ``haul_road_width_ft``). To turn a
rule off, waive it."""

COUNTED_UNITS: frozenset[str] = frozenset({"days"})
"""Units an interval is counted in: such an interval (``inspection_interval_days``) is a whole
number, 1 or more."""

RULE_KEYS: tuple[str, ...] = ("id", "title", "group", "citation", "summary", "thresholds", "params", "switches",
                              "tables", "messages", "phrases", "inputs", "notes")
FILE_KEYS: tuple[str, ...] = ("rulebook", "name", "version", "title", "source", "extends", "notes", "town_districts",
                              "rules", "waive")

_Text = Annotated[str, Field(strict=True)]
_Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
_Name = Annotated[str, Field(strict=True, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


def _fail(message: str) -> PydanticCustomError:
    return PydanticCustomError("geoconstraints", message)


def number_problem(key: str, value: Any) -> str:
    """Why ``value`` cannot be the number named ``key`` ('' when it can).

    Examples
    --------
    >>> number_problem("buffer_width_ft", -50), number_problem("max_grade_pct", float("inf"))
    ('= -50 is negative: a length in feet is 0 or more', '= inf is not a finite number (NaN and infinity are refused)')
    >>> number_problem("max_access_points_count", -1), number_problem("min_distance_ft", 150)
    ('= -1 is negative: a count is 0 or more', '')
    >>> number_problem("standard_cord_cuft", 0)
    '= 0 is not more than 0: a conversion factor (e.g. the cubic feet in a standard cord) must be more than 0 (to turn the rule off, waive it)'
    >>> number_problem("inspection_interval_days", 0.5), number_problem("inspection_interval_days", 1)
    ('= 0.5 is not a whole number of days (1 or more): an interval in days counts whole days', '')
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            as_number = float(value) if isinstance(value, str) else None
        except ValueError:
            as_number = None
        if as_number is not None and math.isfinite(as_number):  # YAML reads 1e12 as text
            return f"= {value!r} is text to YAML, not a number; write it as {as_number!r}"
        return f"= {value!r} is not a number"
    if not math.isfinite(value):
        return f"= {finite_problem(value)}"  # the words of the CLI's and the checks' numbers
    unit = unit_of(key)
    if unit and unit not in SIGNED_UNITS and value < 0:
        return f"= {value:g} is negative: {_MAGNITUDE.get(unit, f'a value in {unit}')} is 0 or more"
    words = set(key[: len(key) - len(unit) - 1].split("_")) if unit else set()
    what = next((POSITIVE_WORDS[w] for w in POSITIVE_WORDS if w in words), "")
    if what and unit in COUNTED_UNITS and "interval" in words and not (value >= 1 and float(value).is_integer()):
        return f"= {value:g} is not a whole number of {unit} (1 or more): an interval in {unit} counts whole {unit}"
    if what and value <= 0:
        return f"= {value:g} is not more than 0: {what} must be more than 0 (to turn the rule off, waive it)"
    return ""


_MAGNITUDE = {"ft": "a length in feet", "in": "a length in inches", "miles": "a length in miles",
              "sqft": "an area", "sqin": "an area", "acres": "an area", "pct": "a percentage",
              "days": "a number of days", "hours": "a number of hours", "months": "a number of months",
              "usd": "an amount of money", "ratio": "a ratio", "cords": "a volume", "cuft": "a volume",
              "bf": "a volume", "count": "a count", "lots": "a number of lots", "units": "a number of units"}


def data_problem(value: Any, path: str, depth: int = 0) -> str:
    """The first number in free-form data (params, tables) that is not finite, or a negative number
    under a key with a unit suffix, as ``'path = value ...'`` ('' when there is none)."""
    if depth > 20:
        return f"{path} is nested more than 20 levels deep"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path} = {value!r} is not a finite number (NaN and infinity are refused)"
    if isinstance(value, Mapping):
        for k, v in value.items():
            sub = f"{path}.{k}"
            if unit_of(str(k)) and isinstance(v, bool):  # YAML's true is no length (float(True) read 1.0)
                return f"{sub} = {v!r} is a yes/no value, not {_MAGNITUDE.get(unit_of(str(k)), 'a number')}"
            if unit_of(str(k)) and isinstance(v, (int, float)) and not isinstance(v, bool):
                why = number_problem(str(k), v)
                if why:
                    return f"{sub} {why}"
            why = data_problem(v, sub, depth + 1)
            if why:
                return why
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            why = data_problem(v, f"{path}[{i}]", depth + 1)
            if why:
                return why
    return ""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, hide_input_in_errors=True)


class Switch(_Strict):
    """A reading of ambiguous law: its value, the allowed choices and why."""

    value: Any = None
    choices: list[Any] | None = None
    doc: _Text | None = None


class Inputs(_Strict):
    """What a rule reads: roles, the fields of each role, whether it needs the DEM, command options."""

    roles: list[_Name] = []
    fields: dict[_Name, list[_Text]] = {}
    dem: bool = False
    options: list[_Name] = []

    @field_validator("roles")
    @classmethod
    def _known_roles(cls, roles: list[str]) -> list[str]:
        unknown = [r for r in roles if r not in ROLES]
        if unknown:
            raise _fail(f"inputs.roles: {unknown[0]!r} is not an input role{_did_you_mean(unknown[0], ROLES)}; roles are "
                        + ", ".join(ROLES))
        return roles

    @field_validator("fields")
    @classmethod
    def _fields_of_known_roles(cls, fields: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = [r for r in fields if r not in ROLES]
        if unknown:
            raise _fail(f"inputs.fields: {unknown[0]!r} is not an input role{_did_you_mean(unknown[0], ROLES)}")
        return fields


class RulePart(_Strict):
    """A rule as a file gives it: everything but ``id`` optional (a user file changes parts)."""

    id: Any
    title: _Text | None = None
    group: _Text | None = None
    citation: _Text | None = None
    summary: _Text | None = None
    thresholds: dict[_Text, Any] | None = None
    params: dict[_Text, Any] | None = None
    switches: dict[_Text, Switch | bool | int | float | str] | None = None
    tables: dict[_Text, list[dict[_Text, Any]]] | None = None
    messages: dict[_Text, _Text] | None = None
    phrases: dict[_Name, _Text] | None = None
    """Sentences a check puts into a finding's ``{detail}`` (:meth:`~geoconstraints.rulebook.model.Rule.phrase`)."""
    inputs: Inputs | None = None
    notes: _Text | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, v: Any) -> str:
        if v is None or v == "":
            raise _fail("every rule needs an 'id'")
        if not isinstance(v, str) or not RULE_ID_PATTERN.match(v):
            raise _fail(f"rule id {v!r} is not like 'HRV-010'")
        return v

    @field_validator("group")
    @classmethod
    def _group(cls, v: str | None) -> str | None:
        if v is not None and v not in GROUPS:
            raise _fail(f"group {v!r} is not one of {', '.join(GROUPS)}")
        return v

    @field_validator("thresholds")
    @classmethod
    def _thresholds(cls, t: dict[str, Any] | None) -> dict[str, Any] | None:
        for k, v in (t or {}).items():
            if not unit_of(k):
                raise _fail(f"threshold {k!r} must end with a unit suffix ({', '.join(UNIT_SUFFIXES)})"
                            + _did_you_mean_suffix(k))
            why = number_problem(k, v)
            if why:
                raise _fail(f"threshold {k} {why}")
        return t

    @field_validator("params", "tables")
    @classmethod
    def _data(cls, v: dict[str, Any] | None, info: Any) -> dict[str, Any] | None:
        why = data_problem(v or {}, info.field_name)
        if why:
            raise _fail(why)
        return v

    @field_validator("switches")
    @classmethod
    def _switches(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        for k, s in (v or {}).items():
            value = s.value if isinstance(s, Switch) else s
            if isinstance(value, float) and not math.isfinite(value):
                raise _fail(f"switch {k} = {value!r} is not a finite number")
        return v

    @field_validator("messages")
    @classmethod
    def _messages(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        for key in v or {}:
            if key not in (*STATUSES, "default"):
                raise _fail(f"messages.{key}: not a status; use {', '.join(STATUSES)} or default")
        return v


class Rule(RulePart):
    """A whole rule, after ``extends`` merging: title, group and citation required."""

    @model_validator(mode="after")
    def _complete(self) -> Rule:
        for key in ("title", "group", "citation"):
            if not getattr(self, key):
                raise _fail(f"needs a {key!r}")
        for k, s in (self.switches or {}).items():
            if isinstance(s, Switch) and s.choices is not None and s.value not in s.choices:
                raise _fail(f"switch {k} = {s.value!r} is not one of {', '.join(map(str, s.choices))}")
        return self


class RulebookFile(_Strict):
    """One rulebook file: its names, what it extends, its rules and its waivers."""

    rulebook: _Text | None = None
    name: _Text | None = None
    version: _Text | int | float | None = None
    title: _Text | None = None
    source: _Text | None = None
    extends: _Text | None = None
    notes: _Text | None = None
    town_districts: list[_Text] | None = None
    messages: dict[_Text, _Text] | None = None
    """Sentences about the inputs rather than one rule (``geometry_repaired`` ...): see
    :data:`~geoconstraints.rulebook.model.RUN_MESSAGES`."""
    rules: list[RulePart] | None = None
    waive: dict[_Text, _Text | None] | None = None

    @field_validator("town_districts", mode="before")
    @classmethod
    def _town_districts(cls, v: Any) -> Any:
        why = town_districts_problem(v)
        if why:
            raise _fail(why)
        return v

    @field_validator("version")
    @classmethod
    def _version(cls, v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            raise _fail(f"version {v!r} is not a version; write it as text, e.g. version: \"2027.1\"")
        return v

    @field_validator("waive", mode="before")
    @classmethod
    def _waive(cls, v: Any) -> Any:
        if v is not None and not isinstance(v, dict):
            raise _fail("'waive' must map rule ids to reasons, e.g. waive: {HRV-040: \"why\"}")
        return v


# ------------------------------------------------------------------------------------------
# errors as one line

_TYPE_WORDS = {"string": "text", "float": "a number", "int": "a whole number", "bool": "true or false",
               "dict": "a mapping (name: value)", "list": "a list", "model": "a mapping (name: value)",
               "model_attributes": "a mapping (name: value)"}


def _did_you_mean(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _did_you_mean_suffix(key: str) -> str:
    close = difflib.get_close_matches(key, [key + s for s in UNIT_SUFFIXES], n=1, cutoff=0.0)
    return f"; e.g. {close[0]!r}" if close else ""


def _where(loc: tuple[Any, ...], data: Any) -> tuple[str, tuple[Any, ...]]:
    """(``rule HRV-010``, the rest of ``loc``) for a loc inside the rules list; ('', loc) else."""
    if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
        rules = data.get("rules") if isinstance(data, Mapping) else None
        rule = rules[loc[1]] if isinstance(rules, list) and loc[1] < len(rules) else None
        rid = rule.get("id") if isinstance(rule, Mapping) else None
        return (f"rule {rid}" if rid else f"rule #{loc[1] + 1}"), loc[2:]
    return "", loc


def _strip_union(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """pydantic adds the union member tried (``Switch``, ``str``, ``function-after[...]``): drop it."""
    return tuple(p for p in loc if not (isinstance(p, str) and (p in ("Switch", "bool", "int", "float", "str")
                                                                 or "[" in p)))


def _message(err: Mapping[str, Any], data: Any) -> str:
    """One pydantic error as ``rule HRV-010 thresholds ...``."""
    full = _strip_union(tuple(err["loc"]))
    rule, loc = _where(full, data)
    typ = str(err["type"])
    path = ".".join(str(p) for p in loc)
    head = " ".join(x for x in (rule, path) if x)
    if typ == "extra_forbidden":
        parent, key = ".".join(map(str, loc[:-1])), str(loc[-1])
        if not parent:
            options, what = (RULE_KEYS, "a rule") if rule else (FILE_KEYS, "a rulebook")
        else:
            options = tuple(Inputs.model_fields) if parent == "inputs" else tuple(Switch.model_fields)
            what = parent
        return (f"{rule + ': ' if rule else ''}unknown key {key!r}{_did_you_mean(key, options)}. "
                f"Keys of {what} are {', '.join(options)}")
    if typ == "geoconstraints":  # our own messages name the key themselves
        return err["msg"] if not rule or loc == ("id",) else f"{rule} {err['msg']}"
    if typ == "missing":
        return "every rule needs an 'id'" if loc == ("id",) else f"{head or 'rulebook'}: needs a value"
    got = _value_at(data, full)
    if len(loc) == 2 and loc[0] == "switches":
        return (f"{head} = {got!r} is not a switch: give its value, or value, choices and doc "
                f"(e.g. {loc[1]}: {{value: a, choices: [a, b], doc: why}})")
    kind = typ.split("_")[0] if typ.endswith(("_type", "_parsing")) else ""
    if kind in _TYPE_WORDS or typ in ("model_attributes_type", "model_type"):
        return f"{head} = {got!r} is not {_TYPE_WORDS.get(kind, _TYPE_WORDS['model'])}"
    if typ == "finite_number":
        return f"{head} = {got!r} is not a finite number (NaN and infinity are refused)"
    if typ == "string_pattern_mismatch":
        return f"{head} = {got!r} is not a plain name (letters, digits and _)"
    return f"{head}: {err['msg']}"


def _union_free(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """``loc`` up to the first union member pydantic tried (where the alternatives part)."""
    out = []
    for p in loc:
        if _strip_union((p,)) == ():
            break
        out.append(p)
    return tuple(out)


def _value_at(data: Any, loc: tuple[Any, ...]) -> Any:
    cur = data
    for p in loc:
        try:
            cur = cur[p]
        except (KeyError, IndexError, TypeError):
            return "?"
    return cur


def _raise(exc: ValidationError, data: Any, where: str, prefix: tuple[Any, ...] = ()) -> None:
    errors: list[dict[str, Any]] = [{**e, "loc": prefix + tuple(e["loc"])} for e in exc.errors(include_url=False)]
    first = _message(errors[0], data)
    n = len({_union_free(e["loc"]) for e in errors}) - 1  # a union's members fail at one place
    more = f" (and {n} more problem{'s' if n > 1 else ''})" if n > 0 else ""
    raise RulebookError(f"rulebook {where}: {first}{more}. Fix the rulebook") from None


def check_file(data: Mapping[str, Any], where: str) -> None:
    """Validate one rulebook file as read (rules as a list); RulebookError naming the problem.

    Parameters
    ----------
    data : mapping
        The parsed YAML (a dict of ``rules: {ID: {...}}`` turned into a list first).
    where : str
        The file (or shipped name) for the message.
    """
    try:
        RulebookFile.model_validate(data)
    except ValidationError as exc:
        _raise(exc, data, where)


def check_rule(rule: Mapping[str, Any], where: str) -> None:
    """Validate one whole rule after ``extends`` merging; RulebookError naming the problem."""
    try:
        Rule.model_validate(rule)
    except ValidationError as exc:
        _raise(exc, {"rules": [rule]}, where, ("rules", 0))


def town_districts_problem(value: Any) -> str:
    """Why ``value`` cannot be a rulebook's ``town_districts`` ('' when it can, or is None): it must
    be a list of the town's zoning districts, each non-blank text, none twice.

    Examples
    --------
    >>> town_districts_problem(["RA-1", "C-1"]), town_districts_problem(None)
    ('', '')
    >>> town_districts_problem(["RA-1", " "])
    'town_districts[1] is blank: every entry names a zoning district of the town'
    >>> town_districts_problem(["RA-1", 12])
    'town_districts[1] = 12 is not text; write it in quotes ("12")'
    """
    example = "e.g. town_districts: [RA-1, RA-2, RC, RR, C-1]"
    if value is None:
        return ""
    if not isinstance(value, list):
        return f"town_districts = {value!r} is not a list of the town's zoning districts ({example})"
    if not value:
        return f"town_districts is empty: list the town's zoning districts ({example}), or leave the key out"
    seen: dict[str, int] = {}
    for i, d in enumerate(value):
        if not isinstance(d, str):
            return (f"town_districts[{i}] = {d!r} is not text; write it in quotes (\"{d}\")" if d is not None
                    and not isinstance(d, (dict, list)) else f"town_districts[{i}] = {d!r} is not a district name")
        if not d.strip():
            return f"town_districts[{i}] is blank: every entry names a zoning district of the town"
        key = d.strip().upper()
        if key in seen:
            return f"town_districts lists {d.strip()!r} twice (entries {seen[key]} and {i})"
        seen[key] = i
    return ""


def check_town_districts(town: Any, rules: Mapping[str, Mapping[str, Any]], where: str) -> None:
    """RulebookError when a rulebook's ``town_districts`` (after ``extends`` merging) leaves out a
    district that a rule names (its ``districts`` params, :func:`~geoconstraints.rulebook.model.rule_districts`):
    the list is the town's every district, so a value of the zoning layer naming none of them is
    an unknown district. Nothing to check when ``town`` is None.

    Examples
    --------
    >>> rules = {"HRV-003": {"params": {"districts": ["RA-1", "RA-2"]}}}
    >>> check_town_districts(["ra-1", "RA-2", "C-1"], rules, "mine.yaml")
    >>> check_town_districts(["RA-1", "RA2", "C-1"], rules, "mine.yaml")
    Traceback (most recent call last):
    ...
    geoconstraints.errors.RulebookError: rulebook mine.yaml: rule HRV-003 names district RA-2, which town_districts does not list (did you mean 'RA2'?); town_districts must list every district of the town, the rules' included, spelled as the rules spell them. Fix the rulebook
    """
    if town is None:
        return
    why = town_districts_problem(town)
    if why:
        raise RulebookError(f"rulebook {where}: {why}. Fix the rulebook")
    listed = {str(d).strip().upper() for d in town}
    for rid, rule in sorted(rules.items()):
        for d in rule_districts(rule.get("params") or {}):
            if d not in listed:
                raise RulebookError(
                    f"rulebook {where}: rule {rid} names district {d}, which town_districts does not list"
                    f"{_did_you_mean(d, sorted(listed))}; town_districts must list every district of the town, the "
                    f"rules' included, spelled as the rules spell them. Fix the rulebook")


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a rulebook file (for editors: yaml-language-server, VS Code).

    Examples
    --------
    >>> sorted(json_schema()["properties"])[:4]
    ['extends', 'messages', 'name', 'notes']
    """
    return RulebookFile.model_json_schema()
