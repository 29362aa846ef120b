"""The import graph of ``src/pldp``, read from the source (no module is imported).

Every ``import`` counts, those inside functions too (a circle held open by a function-level import
is still a circle), except those under ``if TYPE_CHECKING:``. An import of ``a.b.c`` is an edge to
the longest prefix that is a module of the package. ``tests/test_layout.py`` checks the graph.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src"


@dataclass(frozen=True)
class Module:
    """A module of the package: its dotted name, its file, whether it is a package's ``__init__``."""

    name: str
    path: Path
    package: bool


def modules(root: Path = ROOT) -> dict[str, Module]:
    """Every module under ``root`` (``src``) by dotted name."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts = parts[:-1]
        out[".".join(parts)] = Module(".".join(parts), path, package)
    return out


class _Imports(ast.NodeVisitor):
    def __init__(self, module: Module, known: dict[str, Module]) -> None:
        self.module, self.known, self.found = module, known, set[str]()

    def _resolve(self, name: str) -> str | None:
        while name and name not in self.known:
            name = name.rpartition(".")[0]
        return name or None

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        ):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            target = self._resolve(alias.name)
            if target:
                self.found.add(target)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.module.name.split(".")
            base = base if self.module.package else base[:-1]
            base = base[: len(base) - (node.level - 1)]
            name = ".".join(base + ([node.module] if node.module else []))
        else:
            name = node.module or ""
        for alias in node.names:
            sub = f"{name}.{alias.name}"
            target = sub if sub in self.known else self._resolve(name)
            if target:
                self.found.add(target)


@functools.cache
def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (itself excluded); read once per process (the
    source does not change during a test run), so callers must not change it."""
    known = modules(root)
    out = {}
    for name, module in known.items():
        visitor = _Imports(module, known)
        visitor.visit(ast.parse(module.path.read_text(encoding="utf-8")))
        out[name] = visitor.found - {name}
    return out


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found, key=len, reverse=True)


def group(name: str) -> str:
    """The part of the package a module belongs to: ``pldp.channel.node`` -> ``channel``."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def lines(root: Path = ROOT) -> Iterator[tuple[str, int]]:
    """Every module and its number of lines."""
    for name, module in modules(root).items():
        yield name, len(module.path.read_text(encoding="utf-8").splitlines())
