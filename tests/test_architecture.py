"""The package layout is the data flow: no module imports upward, and there are no cycles.

Layers, lowest first: the core (``errors``, ``units``, ``text``, ``parallel``, ``interrupt``, ``_version``) < ``io`` < ``rulebook`` <
``geometry`` < ``rules`` < ``result`` < ``commands`` < ``output`` < ``demo`` / ``cli``.
``geometry`` is rule-agnostic: it never imports ``rulebook``. Imports of the package's own
modules sit at the top of each module (none hidden inside functions).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "geoconstraints"

RANK = {
    "errors": 0, "units": 0, "text": 0, "parallel": 0, "interrupt": 0, "_version": 0,
    "io": 1, "rulebook": 2, "geometry": 3, "rules": 4, "result": 5, "commands": 6, "output": 7,
    "demo": 8, "cli": 9,
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported geoconstraints module, inside a function?) for every import in ``path``."""
    tree = ast.parse(path.read_text("utf-8"))
    inner = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
             for n in ast.walk(f)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("geoconstraints"):
            base = node.module
            for alias in node.names:  # `from geoconstraints.io import projection` imports a module
                cand = f"{base}.{alias.name}"
                sub = PKG.parent / Path(*cand.split("."))
                target = cand if (sub.with_suffix(".py").exists() or (sub / "__init__.py").exists()) else base
                out.append((target, id(node) in inner))
        elif isinstance(node, ast.Import):
            out += [(a.name, id(node) in inner) for a in node.names if a.name.startswith("geoconstraints")]
    return out


MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}
NON_ROOT = [m for m in MODULES if m != "geoconstraints"]


@pytest.mark.parametrize("module", NON_ROOT)
def test_no_upward_import(module: str) -> None:
    here = RANK[_room(module)]
    for target, _inner in _imports(MODULES[module]):
        if target == "geoconstraints":
            raise AssertionError(f"{module} imports the package root (import the module itself)")
        there = RANK[_room(target)]
        assert there <= here, f"{module} ({_room(module)}) imports {target} ({_room(target)}), a room above it"
        if _room(module) == "geometry":
            assert _room(target) != "rulebook", f"{module} imports {target}: geometry is rule-agnostic"


@pytest.mark.parametrize("module", NON_ROOT)
def test_no_hidden_imports(module: str) -> None:
    hidden = [t for t, inner in _imports(MODULES[module]) if inner]
    assert not hidden, f"{module} imports {hidden} inside a function; import at the top"


def test_no_cycles() -> None:
    graph = {m: {t for t, _ in _imports(p) if t in MODULES and t != m} for m, p in MODULES.items()}
    graph["geoconstraints"] = set()  # the root imports lazily (PEP 562) by design
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycle = stack[stack.index(t):] + [t]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_every_room_is_known() -> None:
    rooms = {_room(m) for m in NON_ROOT}
    assert rooms <= set(RANK), f"modules outside the known rooms: {sorted(rooms - set(RANK))}"
