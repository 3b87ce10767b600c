"""Loading rulebooks: the shipped YAML (``vestal``, ``lockport``) or a user's file that
``extends`` one, changes thresholds and switches, and waives rules with a recorded reason.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from geoconstraints.errors import RulebookError
from geoconstraints.io.paths import MAX_TEXT_BYTES, decode_text, read_small_bytes
from geoconstraints.rulebook import schema
from geoconstraints.rulebook.findings import STATUSES
from geoconstraints.rulebook.model import Rule, Rulebook
from geoconstraints.rulebook.render import STANDARD_FIELDS, check_template, fields_of, fmt_num
from geoconstraints.rulebook.repairs import RUN_MESSAGE_FIELDS, RUN_MESSAGES

log = logging.getLogger(__name__)

MAX_YAML_ALIASES = 100
"""Most aliases (``*name``) a rulebook may use (the shipped ones use none)."""

MAX_YAML_NODES = 200_000
"""Most values a rulebook may hold with every alias expanded (Vestal's: about 3,000). Bounds a
"billion laughs" file: a few hundred bytes of nested aliases that expand to 10^9 values."""


YAML_PARSER = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader
"""The safe loader a rulebook is read with: libyaml's C parser where PyYAML has it (the PyPI
wheels do: Vestal's rulebook in 0.02 s instead of 0.18 s), else PyYAML's Python one. Both build
the same nodes and the same plain data (``SafeConstructor``); libyaml also refuses nesting more
than 1,000 levels deep (a ``YAMLError``), where the Python parser hits Python's recursion limit."""


class BoundedLoader(YAML_PARSER):  # type: ignore[misc,valid-type]
    """:data:`YAML_PARSER` that refuses more than :data:`MAX_YAML_ALIASES` aliases, a recursive
    alias, or more than :data:`MAX_YAML_NODES` values once aliases are expanded (checked on the
    composed nodes, before any value is built: :func:`expanded_size`)."""

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        expanded_size(node)
        return self.construct_document(node)


def expanded_size(root: yaml.Node) -> int:
    """Number of values under ``root`` with every alias expanded; RulebookError over
    :data:`MAX_YAML_NODES`, for an alias inside itself, or for more than :data:`MAX_YAML_ALIASES`
    aliases. Linear in the distinct nodes.

    An alias is the anchored node itself, composed once: each alias is one more edge into a node
    already there, so the aliases are the edges less the distinct nodes but the root.

    Examples
    --------
    >>> expanded_size(yaml.compose("a: &x [1, 2]\\nb: *x\\nc: *x"))  # 1 + 3 keys + 3 x [1, 2]
    13
    """
    size: dict[int, int] = {}
    on_path: set[int] = set()
    edges = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        children = _children(node)
        if done:
            on_path.discard(id(node))
            size[id(node)] = 1 + sum(size[id(c)] for c in children)
            if size[id(node)] > MAX_YAML_NODES:
                raise RulebookError(f"expands to more than {MAX_YAML_NODES:,} values (nested aliases); "
                                    f"write the values out")
            continue
        if id(node) in size:
            continue
        if id(node) in on_path:
            raise RulebookError("has an alias inside its own anchor (a recursive value); write the values out")
        on_path.add(id(node))
        edges += len(children)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in size)
    if edges - (len(size) - 1) > MAX_YAML_ALIASES:
        raise RulebookError(f"uses more than {MAX_YAML_ALIASES} aliases (*name); write the values out")
    return size[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for kv in node.value for n in kv]
    return []


# ------------------------------------------------------------------------------------------
# loading

def available_rulebooks() -> list[str]:
    """Names of the rulebooks shipped with the package."""
    folder = resources.files("geoconstraints.rulebook")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def _read_yaml(text: str, where: str) -> dict[str, Any]:
    try:
        data = yaml.load(text, Loader=BoundedLoader)  # a SafeLoader subclass: plain data only
    except RulebookError as exc:
        raise RulebookError(f"rulebook {where}: {exc}") from None
    except RecursionError:
        raise RulebookError(f"rulebook {where}: nested too deeply to be a rulebook. Fix the file") from None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).strip().splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        if "maximum nesting depth" in problem:  # libyaml's limit: what Python's recursion limit says above
            raise RulebookError(f"rulebook {where}: nested too deeply to be a rulebook{at}. Fix the file") from None
        hint = (" Python tags (!!python/...) are never loaded: rulebooks are plain data."
                if "python/" in problem else "")
        raise RulebookError(f"rulebook {where}: not valid YAML{at} ({problem}).{hint} Fix the file.") from None
    if not isinstance(data, dict):
        raise RulebookError(f"rulebook {where}: expected a mapping with 'rules:' at the top")
    return data


def rulebook_file_entry(where: str, data: bytes, bundled: bool) -> dict[str, Any]:
    """One entry of :attr:`Rulebook.files <geoconstraints.rulebook.model.Rulebook.files>`: the file
    ``where`` (a bundled rulebook's name, or a user's path) and the SHA-256 and size of ``data``,
    the bytes read from it and parsed.

    Examples
    --------
    >>> e = rulebook_file_entry("town.yaml", b"rules: []\\n", bundled=False)
    >>> e["file"], e["size_bytes"], e["sha256"][:12]
    ('town.yaml', 10, 'e0dfa70eb69d')
    """
    return {"rulebook": where, "bundled": bundled, "file": f"{where}.yaml" if bundled else Path(where).name,
            "path": "" if bundled else where, "size_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _raw_rulebook(name_or_path: str | Path, _seen: tuple[str, ...] = ()) -> tuple[dict, str, dict[str, Any]]:
    """(the parsed mapping, where: the bundled name or the path, :func:`rulebook_file_entry` of the
    bytes parsed) of one rulebook file, not yet merged with what it ``extends``."""
    key = str(name_or_path)
    if key in _seen:
        raise RulebookError(f"rulebook {key}: 'extends' loops back to itself ({' -> '.join(_seen)})")
    shipped = available_rulebooks()
    if key in shipped:
        data = (resources.files("geoconstraints.rulebook") / f"{key}.yaml").read_bytes()
        return (_read_yaml(decode_text(data, f"rulebook {key}", error=RulebookError), key), key,
                rulebook_file_entry(key, data, bundled=True))
    path = Path(key)
    if path.suffix.lower() in (".yaml", ".yml") or path.exists():
        if not path.exists():
            raise RulebookError(
                f"rulebook file {path} does not exist. Available rulebooks: {', '.join(shipped)}, "
                f"or a path to a .yaml file"
            )
        data = read_small_bytes(path, "rulebook file", limit=MAX_TEXT_BYTES, error=RulebookError)
        return (_read_yaml(decode_text(data, f"rulebook file {path}", error=RulebookError), str(path)), str(path),
                rulebook_file_entry(str(path), data, bundled=False))
    raise RulebookError(
        f"unknown rulebook {key!r}. Available rulebooks: {', '.join(shipped)} "
        f"(or a path to your own .yaml file that extends one)"
    )


def _merge_rule(base: dict[str, Any], over: dict[str, Any], where: str) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if k == "switches":
            sw = out.setdefault("switches", {})
            for name, val in (v or {}).items():
                if name not in sw:
                    if isinstance(val, dict):
                        sw[name] = val
                        continue
                    raise RulebookError(
                        f"rulebook {where}: rule {base.get('id')} has no switch {name!r} "
                        f"(it has {', '.join(sw) or 'none'})"
                    )
                if isinstance(val, dict):
                    sw[name].update(val)
                else:
                    sw[name]["value"] = val
        elif k in ("thresholds", "params", "messages", "phrases", "tables") and isinstance(v, dict):
            out.setdefault(k, {}).update(v)
        else:
            out[k] = v
    return out


def _resolve(name_or_path: str | Path, _seen: tuple[str, ...] = ()) -> dict[str, Any]:
    raw, where, entry = _raw_rulebook(name_or_path, _seen)
    rules_raw = raw.get("rules") or []
    if isinstance(rules_raw, dict):  # allow {ID: {...}} in user files
        bad = next((k for k, v in rules_raw.items() if v is not None and not isinstance(v, dict)), None)
        if bad is not None:
            raise RulebookError(f"rulebook {where}: rule {bad} must be a mapping of its keys (thresholds: ...), "
                                f"not {rules_raw[bad]!r}. Fix the rulebook")
        rules_raw = [{"id": k, **(v or {})} for k, v in rules_raw.items()]
    schema.check_file({**raw, "rules": rules_raw}, where)
    ids = [r["id"] for r in rules_raw]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise RulebookError(f"rulebook {where}: rule {twice[0]} is listed twice; merge the two entries")
    parent = raw.get("extends")
    shipped = available_rulebooks()
    user_file = where not in shipped
    if parent and str(parent) not in shipped and not Path(str(parent)).is_absolute() and user_file:
        beside = Path(where).parent / str(parent)  # a file path is relative to the file extending it
        if beside.exists() or beside.suffix.lower() in (".yaml", ".yml"):
            parent = str(beside)
    waive_raw = raw.get("waive") or {}
    if not isinstance(waive_raw, dict):
        raise RulebookError(
            f"rulebook {where}: 'waive' must map rule ids to reasons, e.g. waive: {{HRV-040: \"why\"}}"
        )
    if parent:
        base = _resolve(parent, (*_seen, str(name_or_path)))
        rules = dict(base["rules"])
        for r in rules_raw:
            rid = r.get("id") if isinstance(r, dict) else None
            if not rid:
                raise RulebookError(f"rulebook {where}: every rule needs an 'id'")
            rules[rid] = _merge_rule(rules[rid], r, where) if rid in rules else r
        meta = {**base["meta"], **{k: v for k, v in raw.items() if k not in ("rules", "waive")}}
        meta["messages"] = {**(base["meta"].get("messages") or {}), **(raw.get("messages") or {})}  # key by key
        if user_file:  # a changed rulebook must not pass for the one it extends
            meta["rulebook"] = Path(where).stem
        waive = {**base["waive"], **waive_raw}
        files = [entry, *base["files"]]
    else:
        rules = {}
        for r in rules_raw:
            if not isinstance(r, dict) or not r.get("id"):
                raise RulebookError(f"rulebook {where}: every rule needs an 'id'")
            rules[r["id"]] = r
        meta = {k: v for k, v in raw.items() if k not in ("rules", "waive")}
        waive = dict(waive_raw)
        files = [entry]
    meta.setdefault("rulebook", raw.get("rulebook") or raw.get("name") or Path(where).stem)
    meta["path"] = where
    meta["extends"] = str(parent or "")
    if "rulebook" in raw or "name" in raw:
        meta["rulebook"] = raw.get("rulebook") or raw.get("name")
    return {"rules": rules, "meta": meta, "waive": waive, "files": files}


def _build_rule(d: dict[str, Any], book: str, where: str) -> Rule:
    schema.check_rule(d, where)  # types, ranges, unknown keys, required keys, switch choices
    rid = d["id"]
    thresholds = dict(d.get("thresholds") or {})
    switches = {k: dict(v) if isinstance(v, dict) else {"value": v} for k, v in (d.get("switches") or {}).items()}
    params = dict(d.get("params") or {})
    messages = _check_texts(d, rid, where, set(thresholds) | set(params) | set(switches))
    phrases = _check_phrases(d, rid, where, set(thresholds) | set(params) | set(switches))
    try:
        return Rule(
            id=rid, title=str(d["title"]), group=d["group"], citation=str(d["citation"]),
            summary=str(d.get("summary") or ""), thresholds=thresholds, params=params, switches=switches,
            tables=dict(d.get("tables") or {}), messages=messages, phrases=phrases, notes=str(d.get("notes") or ""), rulebook=book,
        )
    except RulebookError as exc:  # a list param's text template
        raise RulebookError(f"rulebook {where}: {exc}") from None


def _check_texts(d: dict[str, Any], rid: str, where: str, names: set[str]) -> dict[str, str]:
    """Check the title, summary and message templates of a rule; the messages as a dict.

    Titles and summaries may use the rule's own names; messages also the standard fields.
    """
    clash = sorted(names & set(STANDARD_FIELDS))
    if clash:
        raise RulebookError(f"rulebook {where}: rule {rid} names a threshold, param or switch {clash[0]!r}, "
                            f"which is a standard message field ({', '.join(STANDARD_FIELDS)}); rename it")
    for key in ("title", "summary"):
        check_template(str(d.get(key) or ""), names, where=f"rulebook {where}: rule {rid} {key}")
    messages = d.get("messages") or {}
    if not isinstance(messages, dict):
        raise RulebookError(f"rulebook {where}: rule {rid} messages must map a status to a template")
    for key, text in messages.items():
        if key not in (*STATUSES, "default"):
            raise RulebookError(f"rulebook {where}: rule {rid} messages.{key}: not a status; use "
                                f"{', '.join(STATUSES)} or default")
        check_template(str(text), names | set(STANDARD_FIELDS), where=f"rulebook {where}: rule {rid} messages.{key}")
    return {str(k): str(v) for k, v in messages.items()}


def _check_phrases(d: dict[str, Any], rid: str, where: str, names: set[str]) -> dict[str, str]:
    """The phrases of a rule (``phrases``: the sentences its check puts into ``{detail}``), checked, with
    the shipped text of any the rule does not give (a user's file that extends none).

    A phrase is one the toolkit writes for that rule (a shipped rulebook gives it), and may use the
    rule's own names and the fields its shipped text uses (the values the check gives).
    """
    shipped = _shipped_phrases().get(rid, {})
    given = {str(k): str(v) for k, v in (d.get("phrases") or {}).items()}
    for key, text in given.items():
        at = f"rulebook {where}: rule {rid} phrases.{key}"
        if key not in shipped:
            raise RulebookError(f"{at}: not a phrase the toolkit writes for {rid}; its phrases are "
                                f"{', '.join(sorted(shipped)) or 'none'}")
        check_template(text, names | shipped[key][1], where=at)
    return {**{k: t for k, (t, _) in shipped.items()}, **given}


@functools.lru_cache(maxsize=1)
def _shipped_phrases() -> dict[str, dict[str, tuple[str, frozenset[str]]]]:
    """rule id -> phrase -> (the first shipped rulebook's text, the fields every shipped text of it uses)."""
    out: dict[str, dict[str, tuple[str, frozenset[str]]]] = {}
    for name in available_rulebooks():
        for rid, d in _resolve(name)["rules"].items():
            for key, text in (d.get("phrases") or {}).items():
                first, fields = out.setdefault(rid, {}).get(key, (str(text), frozenset()))
                out[rid][key] = (first, fields | fields_of(str(text)))
    return out


def value_kind(value: Any) -> str:
    """The YAML shape of a param value, as a clerk would name it.

    Examples
    --------
    >>> value_kind([1]), value_kind("A"), value_kind(5), value_kind(True), value_kind({"a": 1})
    ('a list', 'a text', 'a number', 'true or false', 'a mapping')
    """
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a text" if isinstance(value, str) else type(value).__name__


@functools.lru_cache(maxsize=1)
def _shipped_params() -> dict[tuple[str, str], Any]:
    """(rule id, param) -> the shipped value, for params whose shape every shipped rulebook agrees on."""
    seen: dict[tuple[str, str], Any] = {}
    clash: set[tuple[str, str]] = set()
    for name in available_rulebooks():
        for rid, d in _resolve(name)["rules"].items():
            for key, value in (d.get("params") or {}).items():
                if (rid, key) in seen and value_kind(seen[rid, key]) != value_kind(value):
                    clash.add((rid, key))
                seen.setdefault((rid, key), value)
    return {k: v for k, v in seen.items() if k not in clash and v is not None}


def check_param_kinds(rules: dict[str, dict[str, Any]], where: str) -> None:
    """RulebookError when a user's rulebook gives a shipped rule's param another shape than the
    code reads (``sfha_zones: 5`` where a list of zones is expected), naming the rule, the key and
    the shipped value as the example."""
    shipped = _shipped_params()
    for rid, d in rules.items():
        for key, value in (d.get("params") or {}).items():
            model = shipped.get((rid, key))
            if model is None or value is None or value_kind(value) == value_kind(model):
                continue
            example = value_text_short(model)
            raise RulebookError(f"rulebook {where}: rule {rid} params.{key} = {value!r} is {value_kind(value)}; "
                                f"it must be {value_kind(model)}, as in the shipped rulebook ({key}: {example}). "
                                f"Fix the rulebook")


def value_text_short(value: Any, limit: int = 60) -> str:
    """A YAML-like rendering of ``value`` cut to ``limit`` characters.

    Examples
    --------
    >>> value_text_short(["A", "AE"]), value_text_short("SFHA_TF")
    ('[A, AE]', 'SFHA_TF')
    """
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    text = text.removesuffix("\n...").removesuffix("...").strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


THRESHOLD_ORDER: tuple[tuple[str, str, str, str], ...] = (
    ("SWP-006", "default_landing_area_sqft", "max_point_landing_area_sqft",
     "the largest area of a landing mapped as a point is at least the area it is counted as"),
    ("SWP-006", "haul_road_width_ft", "max_haul_road_width_ft",
     "the widest clearing of a haul road mapped as a line is at least the width it is counted at"),
)
"""``(rule id, counted, largest, why)``: thresholds of one rule where ``largest`` bounds a size the
check counts at ``counted`` (the largest plausible size of a feature whose size the layers do not
give), so a rulebook giving it less is refused when it loads (:func:`threshold_order_problem`)."""


def threshold_order_problem(rule: Rule, largest: str | None = None) -> str:
    """Why the thresholds of ``rule`` are out of the order :data:`THRESHOLD_ORDER` requires ('' when
    they are not, or the rule lacks one of a pair: its check names the missing one); only the pair
    of ``largest`` when given.

    Examples
    --------
    >>> r = Rule(id="SWP-006", title="t", group="stormwater", citation="c",
    ...          thresholds={"haul_road_width_ft": 12, "max_haul_road_width_ft": 11.9})
    >>> threshold_order_problem(r)
    'max_haul_road_width_ft (11.9) is under haul_road_width_ft (12); the widest clearing of a haul road mapped as a line is at least the width it is counted at'
    >>> threshold_order_problem(load_rulebook("vestal")["SWP-006"])
    ''
    """
    th = rule.thresholds
    for rid, small, big, why in THRESHOLD_ORDER:
        if rule.id != rid or (largest is not None and big != largest) or small not in th or big not in th:
            continue
        if float(th[big]) < float(th[small]):
            return f"{big} ({fmt_num(float(th[big]))}) is under {small} ({fmt_num(float(th[small]))}); {why}"
    return ""


def load_rulebook(name_or_path: str | Path = "vestal") -> Rulebook:
    """Load a shipped rulebook by name or a user's rulebook file.

    Parameters
    ----------
    name_or_path : str or Path
        ``"vestal"``, ``"lockport"``, or the path of a YAML file. A user's file may say
        ``extends: vestal`` and then list only the rules it changes (thresholds, switches,
        params, citations, messages), add rules, ``waive: {RULE-ID: "reason"}``, and list the
        town's zoning districts (``town_districts: [RA-1, RA-2, RC, RR, C-1]``: every district a
        rule names among them; a zoning value naming none of them is then an unknown district).

    Raises
    ------
    RulebookError
        Unknown name (the message lists the available ones), malformed YAML, a threshold
        without a unit suffix, a switch value outside its choices, a waiver of an unknown rule, a
        largest size under the size it bounds (:data:`THRESHOLD_ORDER`: SWP-006's
        ``max_point_landing_area_sqft`` under ``default_landing_area_sqft``, ``max_haul_road_width_ft``
        under ``haul_road_width_ft``).

    Examples
    --------
    >>> rb = load_rulebook("vestal")
    >>> rb["HRV-010"].t("max_grade_pct")
    25.0
    """
    resolved = _resolve(name_or_path)
    meta, where = resolved["meta"], resolved["meta"]["path"]
    book = str(meta.get("rulebook"))
    if where not in available_rulebooks():
        check_param_kinds(resolved["rules"], where)
    town = meta.get("town_districts")
    schema.check_town_districts(town, resolved["rules"], where)  # every district a rule names is listed
    rules = {rid: _build_rule(d, book, where) for rid, d in sorted(resolved["rules"].items())}
    for rid, rule in rules.items():  # a largest size under the size counted (SWP-006)
        why = threshold_order_problem(rule)
        if why:
            raise RulebookError(f"rulebook {where}: rule {rid}: {why}. Fix the rulebook")
    for rid, reason in resolved["waive"].items():
        if rid not in rules:
            raise RulebookError(f"rulebook {where}: cannot waive {rid}: no such rule")
        if not reason or not str(reason).strip():
            raise RulebookError(f"rulebook {where}: waiver of {rid} needs a reason")
        rules[rid].waived = str(reason).strip()
    messages = _run_messages(meta.get("messages") or {}, where)
    return Rulebook(name=book, version=str(meta.get("version", "")), title=str(meta.get("title", "")),
                    rules=rules, source=str(meta.get("source", "")), path=where,
                    extends=meta.get("extends", ""), files=resolved["files"],
                    town_districts=None if town is None else tuple(str(d).strip().upper() for d in town),
                    messages=messages)


def _run_messages(given: dict[str, Any], where: str) -> dict[str, str]:
    """The rulebook's run-wide sentences (top-level ``messages``, :data:`RUN_MESSAGES`), checked, with
    the shipped ones for any it does not give (a user's file that extends none)."""
    for key, text in given.items():
        if key not in RUN_MESSAGES:
            raise RulebookError(f"rulebook {where}: messages.{key}: not a message the toolkit writes; the top-level "
                                f"messages are {', '.join(RUN_MESSAGES)} (a rule's messages go under the rule)")
        check_template(str(text), RUN_MESSAGE_FIELDS, where=f"rulebook {where}: messages.{key}")
    shipped = {} if set(RUN_MESSAGES) <= set(given) else _shipped_run_messages()
    return {k: str(given.get(k, shipped.get(k, ""))) for k in RUN_MESSAGES}


@functools.lru_cache(maxsize=1)
def _shipped_run_messages() -> dict[str, str]:
    """The top-level ``messages`` of the shipped ``vestal`` rulebook (every shipped rulebook gives them)."""
    return {str(k): str(v) for k, v in (_resolve("vestal")["meta"].get("messages") or {}).items()}


def run_messages(rulebook: Rulebook) -> dict[str, str]:
    """The run-wide sentences of ``rulebook`` (:attr:`Rulebook.messages
    <geoconstraints.rulebook.model.Rulebook.messages>`), the shipped ones where it has none (a
    rulebook made in code).

    Examples
    --------
    >>> run_messages(load_rulebook("lockport"))["geometry_repaired"][:38]
    "{subject_id}'s geometry was invalid an"
    """
    return {**_shipped_run_messages(), **{k: v for k, v in rulebook.messages.items() if v}}

