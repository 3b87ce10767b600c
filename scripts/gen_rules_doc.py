"""Generate the rule reference (docs/RULES.md) and the README's catalogue table from the rulebooks.

    python scripts/gen_rules_doc.py          # rewrite both
    python scripts/gen_rules_doc.py --check  # exit 1 when either is out of date (used by the tests)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from geoconstraints.rulebook.loader import available_rulebooks, load_rulebook

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- rules:start -->", "<!-- rules:end -->"


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


def rules_md() -> str:
    intro = "Generated from the shipped rulebooks by `python scripts/gen_rules_doc.py`; do not edit by hand."
    out = ["# Rule reference", "", intro, ""]
    for name in available_rulebooks():
        rb = load_rulebook(name)
        out += [f"## Rulebook `{rb.name}` (version {rb.version})", "", rb.title, "", rb.source, ""]
        for r in rb:
            out += [f"### {r.id} — {r.title}", "", f"*Group:* {r.group} · *Citation:* {r.citation}", "",
                    r.summary, ""]
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
