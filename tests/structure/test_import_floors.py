"""The package's floors: catalog → estimate → report → api → web → cli, no arrow back up.

Every import of a tpscalc module, at module level or inside a function, is read from the source
(nothing is imported), so a circle hidden inside a function body counts too.
"""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "tpscalc"

# Lower number = lower floor. A module may import from its own floor or any floor below.
FLOORS = {
    "tpscalc.i18n": 0, "tpscalc.units": 0,
    "tpscalc.catalog": 1,
    "tpscalc.estimate": 2,
    "tpscalc.sources": 2, "tpscalc.machine": 2,  # the user's own file and machine
    "tpscalc.report": 3,
    "tpscalc.api": 4, "tpscalc": 4,
    "tpscalc.web": 5,
    "tpscalc.cli": 6, "tpscalc.__main__": 6,  # the console entry point; `serve` starts the site
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def floor_of(module: str) -> int:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        key = ".".join(parts[:n])
        if key in FLOORS:
            return FLOORS[key]
    raise AssertionError(f"{module} has no floor in FLOORS")


def imports(path: Path) -> set[str]:
    """The tpscalc modules `path` imports (from-imports of names resolve to their module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    known = {module_name(p) for p in SRC.rglob("*.py")}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("tpscalc"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            if not base.startswith("tpscalc"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    found.discard(here)
    return found


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in SRC.rglob("*.py")}


def test_no_import_runs_up_a_floor() -> None:
    upward = sorted(f"{a} → {b}" for a, deps in graph().items() for b in deps
                    if floor_of(b) > floor_of(a))
    assert upward == []


def test_no_import_circles() -> None:
    g = graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(g.get(node, ())):
            if dep not in g:
                continue
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(g):
        if node not in state:
            visit(node)
    assert [" → ".join(c) for c in cycles] == []


def test_floor_table_knows_every_module() -> None:
    for module in graph():
        floor_of(module)
