"""The import graph has no circles, the code index does not reach up into tasks, and
both build on the local search core (``tributary.engine.localsearch``) rather than on each other.

Imports inside functions count too: a lazy import that closes a circle still ties the
two modules to each other's internals. Read from the source, so nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` -> the modules of that package it imports (anywhere in it).

    A module's own parent packages are left out: a package's ``__init__`` re-exporting its
    submodules is not a circle.
    """
    modules = {_module_name(path): path for path in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for target in targets:
                if target in modules and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
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
                    found.append(sorted(component))
    return found


def test_circles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("package", ["tributary/engine", "tributary/app"])
def test_no_import_circles(package: str) -> None:
    assert circles(import_graph(package)) == []


def by_package(graph: dict[str, set[str]], depth: int = 3) -> dict[str, set[str]]:
    """A module graph with each module standing for its package, the first ``depth``
    dotted parts (``tributary.engine.index.store`` -> ``tributary.engine.index``)."""

    def group(module: str) -> str:
        return ".".join(module.split(".")[:depth])

    grouped: dict[str, set[str]] = {}
    for module, targets in graph.items():
        grouped.setdefault(group(module), set()).update(
            group(t) for t in targets if group(t) != group(module)
        )
    return grouped


def test_package_circles_are_found() -> None:
    graph = {"p.a.x": {"p.b.y"}, "p.b.y": set(), "p.b.z": {"p.a.w"}, "p.a.w": set()}
    assert circles(graph) == []
    assert circles(by_package(graph, depth=2)) == [["p.a", "p.b"]]


def test_no_package_circles_in_the_engine() -> None:
    """No package of the engine reaches up into one that imports it: shared parts live
    below both sides (``tributary.engine.localsearch``, ``tributary.engine.postgres``, small
    neutral modules), so the code index, the task history and the pipeline stay layers."""
    assert circles(by_package(import_graph("tributary/engine"))) == []


def test_the_code_index_does_not_import_the_task_history() -> None:
    graph = import_graph("tributary/engine")
    upward = {
        (module, target)
        for module, targets in graph.items() if module.startswith("tributary.engine.index")
        for target in targets if target.startswith("tributary.engine.tasks")
    }
    assert upward == set()


def _imports_from(package: str, prefix: str) -> set[tuple[str, str, str]]:
    """``(module, imported module, name)`` for each import of ``prefix``'s modules in
    ``package`` (``name`` is empty for ``import x``)."""
    found: set[tuple[str, str, str]] = set()
    for path in (ROOT / package).rglob("*.py"):
        name = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {(name, alias.name, "") for alias in node.names if alias.name.startswith(prefix)}
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(prefix):
                found |= {(name, node.module, alias.name) for alias in node.names}
    return found


def test_the_local_search_core_imports_neither_side() -> None:
    """tributary.engine.localsearch sits under both the code index and the task history."""
    graph = import_graph("tributary/engine")
    upward = {
        (module, target)
        for module, targets in graph.items() if module.startswith("tributary.engine.localsearch")
        for target in targets if target.startswith(("tributary.engine.index", "tributary.engine.tasks"))
    }
    assert upward == set()


def test_the_task_history_uses_the_core_not_the_code_index_storage() -> None:
    """tributary.engine.tasks opens its SQLite file, fuses and tokenises through tributary.engine.localsearch;
    of tributary.engine.index it uses only the backend choice and the default model's loader."""
    allowed = {
        ("tributary.engine.index.backend", "IndexBackend"),
        ("tributary.engine.index.backend", "resolve_backend"),
        ("tributary.engine.index.embed", "load_default_embedder"),
    }
    used = {(module, name) for _, module, name in _imports_from("tributary/engine/tasks", "tributary.engine.index")}
    assert not any(module == "tributary.engine.index.db" for module, _ in used)
    assert used <= allowed, used - allowed
