"""The package's layers stand on each other without circles.

Walks every ``import`` statement in ``gradnb/`` (module-level and inside functions alike) with
``ast`` and fails on any import cycle, naming it. Run it alone to draw the import graph's
circles: ``python -m pytest tests/test_layers.py -q``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gradnb"

# The floors, lowest first: a module may import its own floor and those below it, never above.
FLOORS = ("gradnb._core", "gradnb.ops", "gradnb.autograd")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    """Every module: the Python files, and the C extensions by their sources (which import no
    gradnb module: the Python side hands them what they use)."""
    return {_module_name(p): p for pattern in ("*.py", "*.c") for p in PACKAGE.rglob(pattern)}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The gradnb modules ``name`` imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    if path.suffix == ".c":
        return found
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                       for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the gradnb modules it imports."""
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_import_cycle_in_gradnb():
    cycles = find_cycles(import_graph())
    assert not cycles, "import circles in gradnb/:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def _floor(name: str) -> int | None:
    for i, floor in enumerate(FLOORS):
        if name == floor or name.startswith(floor + "."):
            return i
    return None


def test_each_floor_imports_only_itself_and_below():
    upward = []
    for name, targets in import_graph().items():
        mine = _floor(name)
        if mine is None:
            continue
        for target in targets:
            theirs = _floor(target)
            if theirs is not None and theirs > mine or theirs is None and target != "gradnb":
                upward.append(f"{name} -> {target}")
    assert not upward, "imports that climb a floor:\n" + "\n".join(sorted(upward))
