"""Generate the rule reference (docs/RULES.md) and the README's catalogue table from the rulebooks.

    python scripts/gen_rules_doc.py          # rewrite both
    python scripts/gen_rules_doc.py --check  # exit 1 when either is out of date (used by the tests)

Each rule of docs/RULES.md links to its check function, taken from the check registry
(``@check("ID")``), and to the tests that name its id, found by parsing tests/**/test_*.py
(tests/law/ included): a string holding the id anywhere in a test function, its decorators
included; the id in the function's name (``test_hrv020_...`` is HRV-020's); or, for a function
naming no rule, the one rule id the first line of its module's docstring names
(``tests/law/test_seqr_thresholds.py``: "Every threshold of SQR-001 ...").
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

import geoconstraints.rules  # noqa: F401  (registers the checks)
from geoconstraints.rulebook.loader import available_rulebooks, load_rulebook
from geoconstraints.rulebook.registry import check_of

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- rules:start -->", "<!-- rules:end -->"
RULE_ID = re.compile(r"\b[A-Z]{2,5}-\d{3}\b")
NAME_ID = re.compile(r"(?:^|_)([a-z]{2,5})_?(\d{3})(?=_|$)")
"""A rule id in a test function's name: ``test_hrv020_stream_buffer_width``, ``test_fld_001_...``."""


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def readme_table() -> str:
    rb = load_rulebook("vestal")
    lock = load_rulebook("lockport")
    lines = ["| id | rule | citation (vestal) | thresholds (vestal) | in lockport |", "|---|---|---|---|---|"]
    for r in rb:
        thr = ", ".join(f"`{k}={v:g}`" for k, v in r.thresholds.items() if isinstance(v, (int, float)))
        lines.append(f"| {r.id} | {_cell(r.title)} | {_cell(r.citation)} | {thr} | "
                     f"{_cell(lock[r.id].citation) if r.id in lock else '—'} |")
    return "\n".join(lines)


def tests_naming_rules(folder: Path = ROOT / "tests") -> dict[str, list[str]]:
    """Rule id -> ``tests/test_x.py::test_name`` of every test function whose strings name it."""
    found: dict[str, list[str]] = defaultdict(list)
    known = {r.id for name in available_rulebooks() for r in load_rulebook(name)}
    for path in sorted(folder.rglob("test_*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        about = set(RULE_ID.findall((ast.get_docstring(tree) or "").split("\n", 1)[0])) & known
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test"):
                continue
            texts = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            ids = {m for t in texts for m in RULE_ID.findall(t)}
            ids |= {f"{a.upper()}-{n}" for a, n in NAME_ID.findall(node.name)} & known
            if not ids and len(about) == 1:
                ids = about
            for rid in sorted(ids):
                found[rid].append(f"{path.relative_to(ROOT).as_posix()}::{node.name}")
    return found


def check_link(rule_id: str) -> str:
    """``[geoconstraints/rules/x.py::check_fn](../geoconstraints/rules/x.py)`` from the registry."""
    fn = check_of(rule_id)
    if fn is None:
        return "no check registered"
    path = fn.__module__.replace(".", "/") + ".py"
    return f"[`{path}::{fn.__name__}`](../{path})"


def test_links(tests: list[str]) -> str:
    by_file: dict[str, list[str]] = defaultdict(list)
    for t in tests:
        f, name = t.split("::")
        by_file[f].append(name)
    return "; ".join(f"[`{f}`](../{f}): " + ", ".join(f"`{n}`" for n in names) for f, names in by_file.items())


def rules_md() -> str:
    intro = ("Generated from the shipped rulebooks by `python scripts/gen_rules_doc.py`; do not edit by hand. "
             "Each rule links to its check function (from the check registry) and to the tests that name "
             "its id (by a string, by the test's name such as `test_hrv020_...`, or by the first line of the "
             "test module's docstring), tests/law/ included. Every rule is also under the guard, which runs "
             "every rule without each input it reads and fails on a `pass` earned by the missing input: "
             "[`tests/law/test_guard.py`](../tests/law/test_guard.py) (every shipped rulebook) and "
             "[`tests/law/test_harvest_guard.py`](../tests/law/test_harvest_guard.py) (the HRV rules on one "
             "rich plan).")
    tests = tests_naming_rules()
    out = ["# Rule reference", "", intro, ""]
    for name in available_rulebooks():
        rb = load_rulebook(name)
        out += [f"## Rulebook `{rb.name}` (version {rb.version})", "", rb.title, "", rb.source, ""]
        for r in rb:
            out += [f"### {r.id} — {r.title}", "", f"*Group:* {r.group} · *Citation:* {r.citation}", "",
                    r.summary, "", f"*Check:* {check_link(r.id)}", "",
                    f"*Tests:* {test_links(tests.get(r.id, [])) or 'none name this rule'}", ""]
            if r.thresholds:
                out += ["| threshold | value |", "|---|---|"]
                out += [f"| `{k}` | {v} |" for k, v in r.thresholds.items()]
                out.append("")
            if r.switches:
                out += ["| reading (switch) | default | choices | meaning |", "|---|---|---|---|"]
                for k, v in r.switches.items():
                    out.append(f"| `{k}` | `{v.get('value')}` | {', '.join(map(str, v.get('choices') or []))} | "
                               f"{_cell(v.get('doc', ''))} |")
                out.append("")
            if r.notes:
                out += [f"*Notes:* {r.notes}", ""]
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    readme = (ROOT / "README.md").read_text("utf-8")
    head, _, rest = readme.partition(START)
    _, _, tail = rest.partition(END)
    new_readme = f"{head}{START}\n{readme_table()}\n{END}{tail}"
    target = ROOT / "docs" / "RULES.md"
    new_rules = rules_md()
    if args.check:
        stale = [p for p, new in ((ROOT / "README.md", new_readme), (target, new_rules))
                 if not p.exists() or p.read_text("utf-8") != new]
        for p in stale:
            print(f"{p} is out of date: run python scripts/gen_rules_doc.py", file=sys.stderr)
        return 1 if stale else 0
    (ROOT / "README.md").write_text(new_readme, "utf-8")
    target.write_text(new_rules, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
