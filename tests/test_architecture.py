"""The shape of ``src/goldgate`` that ARCHITECTURE.md promises, checked on every run.

Read from the source with ``ast`` (nothing is imported), counting imports inside functions
too: an import that runs only on one path is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "goldgate"

#: vendored code, kept as its authors wrote it (see THIRD_PARTY_NOTICES.md)
VENDORED = {"goldgate.metrics.text.porter"}
MAX_LINES = 800
#: the one package that may import dask and distributed
DASK_PACKAGE = "goldgate.execution.dask"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported_names(path: Path) -> Iterator[tuple[str, int]]:
    """Every absolute module path the file imports, with its line, at any depth."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from goldgate import wording`` imports the module goldgate.wording; ``from
            # goldgate.errors import UsageError`` imports goldgate.errors
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                yield (submodule if submodule in MODULES else node.module), node.lineno


def _owner(name: str) -> str | None:
    """The goldgate module an import path lands in (the longest known prefix)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for imported, _ in _imported_names(path):
            if imported.split(".")[0] != "goldgate":
                continue
            target = _owner(imported)
            if target is not None and target != name:
                graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
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
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    assert _cycles(_graph()) == []


def test_no_module_over_800_lines_but_vendored_code() -> None:
    long = {
        name: count
        for name, path in MODULES.items()
        if name not in VENDORED
        and (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


@pytest.mark.parametrize("library", ["dask", "distributed"])
def test_dask_is_imported_in_one_package(library: str) -> None:
    importers = {
        f"{name}:{line}"
        for name, path in MODULES.items()
        for imported, line in _imported_names(path)
        if imported.split(".")[0] == library and not name.startswith(DASK_PACKAGE)
    }
    assert importers == set()


def test_only_the_backend_registry_reaches_the_dask_backend() -> None:
    """Outside ``execution/``, nothing imports the Dask package: the pipeline asks the
    registry for the configured backend and never tests for Dask."""
    importers = {
        f"{name}:{line}"
        for name, path in MODULES.items()
        if not name.startswith("goldgate.execution")
        for imported, line in _imported_names(path)
        if imported.startswith(DASK_PACKAGE)
    }
    assert importers == set()
    # ... and the registry names it by a string, so importing it costs nothing
    registry_text = "\n".join(
        path.read_text(encoding="utf-8")
        for name, path in MODULES.items()
        if name.startswith("goldgate.execution") and not name.startswith(DASK_PACKAGE)
    )
    assert DASK_PACKAGE in registry_text


def test_the_top_level_is_small() -> None:
    """The top of the package holds the entry points and what every layer shares; the rest
    lives in packages that say what they hold."""
    top = sorted(path.stem for path in PACKAGE.glob("*.py"))
    assert top == [
        "__init__",
        "__main__",
        "_version",
        "config",  # re-export of goldgate.model.config (a documented path)
        "crash",
        "errors",
        "result",  # re-export of goldgate.model.result (a documented path)
        "runner",
        "wording",
    ]
