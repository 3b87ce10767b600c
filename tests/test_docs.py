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
