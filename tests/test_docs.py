"""The README and docs/RULES.md stay in step with the rulebooks; the README's commands exist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_rule_reference_is_current() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_rules_doc.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_readme_lists_every_vestal_rule_and_both_commands() -> None:
    from geoconstraints import load_rulebook

    readme = (ROOT / "README.md").read_text("utf-8")
    for rule in load_rulebook("vestal"):
        assert f"| {rule.id} |" in readme
    assert "bash scripts/demo.sh" in readme and "bash scripts/test.sh" in readme
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "scripts/test.sh" in ci
    for script in ("demo.sh", "test.sh", "setup.sh"):
        assert (ROOT / "scripts" / script).is_file()


def test_every_rule_links_to_its_check_and_to_tests_that_exist() -> None:
    import ast
    import re

    import geoconstraints.rules  # noqa: F401  (registers the checks)
    from geoconstraints.rulebook.loader import available_rulebooks, load_rulebook
    from geoconstraints.rulebook.registry import check_of

    text = (ROOT / "docs" / "RULES.md").read_text("utf-8")
    sections = re.split(r"^### ", text, flags=re.MULTILINE)[1:]
    ids = [s.split(" ", 1)[0] for s in sections]
    assert sorted(ids) == sorted(r.id for name in available_rulebooks() for r in load_rulebook(name))
    for rid, sec in zip(ids, sections):
        check = re.search(r"\*Check:\* \[`([^`]+)::(\w+)`\]\(\.\./([^)]+)\)", sec)
        assert check, rid
        path, fn, link = check.groups()
        assert path == link and fn in {n.name for n in ast.walk(ast.parse((ROOT / path).read_text("utf-8")))
                                       if isinstance(n, ast.FunctionDef)}, (rid, path, fn)
        registered = check_of(rid)
        assert (registered.__module__.replace(".", "/") + ".py", registered.__name__) == (path, fn), rid
        tests = re.search(r"\*Tests:\* (.*)", sec).group(1)
        files = re.findall(r"\[`(tests/test_\w+\.py)`\]", tests)
        assert files, f"{rid}: no test names this rule"
        for f in files:
            names = {n.name for n in ast.parse((ROOT / f).read_text("utf-8")).body if isinstance(n, ast.FunctionDef)}
            listed = re.search(re.escape(f"[`{f}`](../{f}): ") + r"([^;]*)", tests).group(1)
            assert set(re.findall(r"`(\w+)`", listed)) <= names, (rid, f)
