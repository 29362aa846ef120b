"""The architecture as tests: the layers of ``src/pldp``, no import circle, small modules, and node
dispatch kept with the nodes (``docs/architecture.md``).

Each check reads the source (:mod:`tests.import_graph`), so it fails on the change that breaks the
rule, naming the modules and imports at fault.
"""

from __future__ import annotations

import ast
import importlib
import itertools
import pkgutil
import re
from typing import Any

import pytest

import pldp
from pldp.channel import NODE_KINDS, NodeVisitor, to_leaf
from tests.import_graph import ROOT, circles, graph, group, lines, modules

#: The parts of pldp from the bottom up. A module may import its own part and the parts of lower
#: layers; parts of one layer do not import each other. ``pldp`` itself (the package's
#: ``__init__``, the public facade) is exempt.
LAYERS: list[set[str]] = [
    {"errors"},
    {"_validation", "_text", "_lazy", "fingerprint", "bitcount", "parallel", "devicefiles", "methods", "text", "xxh32"},
    {"channel", "metrics"},
    {"domain"},
    {"budgets", "itemsets", "tally"},
    {"params", "privacy"},
    {"oracle"},
    {"registry", "estimation"},
    {"mechanisms"},
    {"theory", "robustness"},
    {"protocols"},
    {"heavy"},
    {"attacks"},
    {"datasets"},
    {"experiments", "demo"},
    {"deploy"},
    {"ledger"},
    {"client"},
    {"aggregate", "audit", "service"},
    {"testing"},
    {"cli"},
]
LAYER = {part: i for i, parts in enumerate(LAYERS) for part in parts}
#: The largest module, in lines.
MAX_LINES = 500


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {group(name) for name in modules()} - {"pldp"}
    assert parts <= set(LAYER), f"parts without a layer in LAYERS: {sorted(parts - set(LAYER))}"


def test_no_import_circle() -> None:
    """No strongly connected component, counting imports made inside functions."""
    found = circles(graph())
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_each_part_imports_only_its_own_layer_and_below() -> None:
    bad = []
    for name, targets in graph().items():
        here = group(name)
        if here == "pldp":
            continue
        for target in targets:
            there = group(target)
            if there == "pldp":
                if target == "pldp":  # `import pldp` loads the facade, and with it every library layer
                    if LAYER[here] < LAYER["protocols"]:
                        bad.append(f"{name} imports the pldp facade")
                continue
            if there != here and LAYER[there] >= LAYER[here]:
                bad.append(f"{name} ({here}, layer {LAYER[here]}) imports {target} ({there}, layer {LAYER[there]})")
    assert not bad, "imports against the layers:\n" + "\n".join(sorted(bad))


def test_the_channel_layer_imports_only_itself_the_errors_and_bit_counting() -> None:
    """The channel runs on the devices: besides itself, the errors and bit counting, it imports only the
    normalisation of text answers and XXH32 of byte rows, which the heavy-hitter node's items are made
    of (both below it, each importing only the errors)."""
    edges = graph()
    outside = {
        (name, target)
        for name, targets in edges.items()
        if group(name) == "channel"
        for target in targets
        if group(target) != "channel" and target not in ("pldp.errors", "pldp.bitcount", "pldp.text", "pldp.xxh32")
    }
    assert not outside, f"pldp.channel imports {sorted(outside)}"


def test_no_module_is_over_500_lines() -> None:
    big = {name: n for name, n in lines() if n > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines: {big}"


def _branches_on_a_node_type(tree: ast.AST) -> list[int]:
    """Lines of ``if``/``elif``/conditional expressions that test ``isinstance(x, <a node class>)``."""
    names = {cls.__name__ for cls in NODE_KINDS.values()}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp)):
            for sub in ast.walk(node.test):
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Name)
                    and sub.func.id == "isinstance"
                    and len(sub.args) == 2
                    and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(sub.args[1]))
                ):
                    found.append(node.lineno)
    return found


def test_no_module_outside_the_channel_branches_on_the_type_of_a_node() -> None:
    """Dispatch over node kinds lives with the nodes: a method of the node, or a NodeVisitor."""
    bad = {}
    for name, module in modules().items():
        if group(name) == "channel":
            continue
        found = _branches_on_a_node_type(ast.parse(module.path.read_text(encoding="utf-8")))
        if found:
            bad[str(module.path.relative_to(ROOT))] = found
    assert not bad, f"isinstance branches on node classes (use node.accept(visitor) or a node method): {bad}"


#: Objects whose ``kind`` is not a node's though it may share a node kind's name: a tally's family
#: (``"direct"``, ``"unary"``: :class:`pldp.tally.Tally`, the FEBSF tally), and an estimator's or
#: a class's own ``kind`` (``self``: no node class lives outside the channel).
_NOT_NODES = {"self", "tally", "other", "protocol", "model"}


def _receiver(expr: ast.expr) -> str | None:
    """The name of what ``expr`` is: ``node`` of ``node`` and of ``spec.node``."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _names_a_node_kind(op: ast.cmpop, other: ast.expr) -> bool:
    """Whether ``<x>.kind <op> <other>`` compares with a node kind's name (``==``/``!=`` a string,
    ``in``/``not in`` a literal tuple, list or set holding one)."""
    if isinstance(op, (ast.Eq, ast.NotEq)):
        values = [other]
    elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(other, (ast.Tuple, ast.List, ast.Set)):
        values = list(other.elts)
    else:
        return False
    return any(isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value in NODE_KINDS for v in values)


def _compares_a_node_kind(tree: ast.AST) -> list[int]:
    """Lines that compare ``<x>.kind`` with the name of a node kind (``node.kind == "attributes"``,
    ``root.kind in ("direct", "unary")``); ``arr.dtype.kind == "f"`` and a tally's kind are not."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for left, op, right in zip(operands, node.ops, operands[1:], strict=False):
            for attr, other in ((left, right), (right, left)):
                if (
                    isinstance(attr, ast.Attribute)
                    and attr.attr == "kind"
                    and _receiver(attr.value) not in _NOT_NODES
                    and _names_a_node_kind(op, other)
                ):
                    found.append(node.lineno)
    return sorted(set(found))


def test_the_node_kind_check_sees_kind_dispatch() -> None:
    """The check below finds each way of testing a node's kind, and nothing else (so that its
    silence means something)."""
    source = (
        'a = root.kind == "attributes"\n'  # 1: flagged
        'b = "memo" != spec.root.kind\n'  # 2: flagged (either side)
        'c = node.kind in ("direct", "unary")\n'  # 3: flagged
        'd = arr.dtype.kind == "f"\n'  # 4: a dtype's kind
        'e = tally.kind == "direct"\n'  # 5: a tally's family
        'f = self.kind == "unary"\n'  # 6: a class's own kind
        'g = c.kind == "bits"\n'  # 7: a column's kind is no node kind
        "h = node.kind in KINDS\n"  # 8: not a literal
        'i = x < node.kind == "leveled"\n'  # 9: flagged (a chain)
    )
    assert _compares_a_node_kind(ast.parse(source)) == [1, 2, 3, 9]


def test_no_module_outside_the_channel_compares_the_kind_of_a_node() -> None:
    """What a node kind means is the node's to say (a node property or method, a column descriptor,
    a NodeVisitor): no module outside the channel compares ``<node>.kind`` with a kind's name."""
    bad = {}
    for name, module in modules().items():
        if group(name) == "channel":
            continue
        found = _compares_a_node_kind(ast.parse(module.path.read_text(encoding="utf-8")))
        if found:
            bad[str(module.path.relative_to(ROOT))] = found
    assert not bad, f"node kind tests (use a node property or method, its columns, or a NodeVisitor): {bad}"


#: The readers and writers of payload columns: they loop over a node's column descriptors
#: (:class:`pldp.channel.Column`) and ask them, and test no kind, of node or of column.
COLUMN_CONSUMERS = [
    "pldp.deploy.wire",
    "pldp.deploy.count",
    "pldp.deploy.dedupe",
    "pldp.deploy.memostore",
    "pldp.aggregate.parquet",
    "pldp.service.store.reports",
    "pldp.service.ingest",
    "pldp.service.jsonlimits",
]


def _compares_a_kind(tree: ast.AST) -> list[int]:
    """Lines that compare ``<x>.kind`` (not a dtype's) with a string: a node's or a column's kind."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for left, right in itertools.pairwise(operands):
                for attr, other in ((left, right), (right, left)):
                    if (
                        isinstance(attr, ast.Attribute)
                        and attr.attr == "kind"
                        and _receiver(attr.value) != "dtype"
                        and isinstance(other, ast.Constant)
                        and isinstance(other.value, str)
                    ):
                        found.append(node.lineno)
    return sorted(set(found))


def test_the_readers_of_payload_columns_test_no_kind() -> None:
    """The wire format, the checks, the store's rows, report files, their merge, the memo store and
    the collector's bounds ask the columns (codecs, widths, ranges), never a kind."""
    assert _compares_a_kind(ast.parse('a = c.kind == "bits"\nb = x.dtype.kind == "i"\nc = n.kind != "memo"')) == [1, 3]
    bad = {}
    for name in COLUMN_CONSUMERS:
        found = _compares_a_kind(ast.parse(modules()[name].path.read_text(encoding="utf-8")))
        if found:
            bad[name] = found
    assert not bad, f"kind tests in readers of payload columns (ask the Column): {bad}"


def _all_visitors() -> list[type[NodeVisitor]]:
    for info in pkgutil.walk_packages(pldp.__path__, "pldp."):
        if info.name.split(".")[1] not in ("service", "cli"):  # optional extras; no visitors there
            importlib.import_module(info.name)
    out, todo = [], list(NodeVisitor.__subclasses__())
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo += cls.__subclasses__()
    return out


#: Kinds that some concerns do not cover *yet*, and those concerns. The memo node (issue 27): the
#: clients' inputs landed with their memo store (item 2), its one-report audit with the audit over
#: time (item 5: the statistic, claim, pairs and users of a memo node are its one report's); the
#: audit of a *client* (``_Answer``: the answers a client is driven with) still refuses a memo node
#: with a TypeError naming it. Remove an entry when its rules land.
PENDING = {"memo": {"_Answer"}}


#: The concerns that must cover every kind (wire, checks, client inputs, audit).
COMPLETE = {"_Payload", "_Reader", "_Check", "_Inputs", "_Statistic", "_Claim", "_Pairs", "_Answer", "_Users"}


def _complete_visitors() -> dict[str, type[NodeVisitor]]:
    visitors = {cls.__name__: cls for cls in _all_visitors() if cls.__module__.startswith("pldp.")}
    assert COMPLETE <= set(visitors), sorted(COMPLETE - set(visitors))
    return {name: visitors[name] for name in COMPLETE}


def covers(visitor: type[NodeVisitor], kind: str, base: type[NodeVisitor] = NodeVisitor) -> bool:
    """Whether ``visitor`` has a rule for ``kind``: the kind's own, or, for a kind whose method of
    ``base`` delegates to ``leaf`` (:meth:`NodeVisitor.delegates_to_leaf`), its rule for leaves."""
    if getattr(visitor, kind) is not getattr(base, kind):
        return True
    return base.delegates_to_leaf(kind) and visitor.leaf is not base.leaf


@pytest.mark.parametrize("kind", sorted(NODE_KINDS))
def test_every_visitor_names_the_kinds_it_does_not_cover(kind: str) -> None:
    """A visitor either has a rule for a kind (its own, or its rule for leaves when the kind is a
    leaf's) or, by the base class, refuses it with a TypeError; the :data:`COMPLETE` concerns cover
    every kind (but :data:`PENDING`)."""
    visitors = _complete_visitors()
    for name in COMPLETE - PENDING.get(kind, set()):
        assert covers(visitors[name], kind), f"{name} has no rule for {kind}"


def test_every_complete_visitor_has_a_rule_for_leaves() -> None:
    """A new leaf kind is covered by the concerns' rules for leaves (``docs/architecture.md``): each
    :data:`COMPLETE` concern has one, and no kind of today relies on it but through its mark."""
    visitors = _complete_visitors()
    lacking = sorted(name for name, cls in visitors.items() if cls.leaf is NodeVisitor.leaf)
    assert not lacking, f"concerns with no rule for leaves: {lacking}"
    marked = [kind for kind in NODE_KINDS if NodeVisitor.delegates_to_leaf(kind)]
    for kind in marked:  # a marked kind's base rule is the visitor's rule for leaves
        probe = type("_Probe", (NodeVisitor,), {"leaf": lambda self, node, *args: ("leaf", node, args)})()
        assert getattr(probe, kind)("node", 1) == ("leaf", "node", (1,)), f"NodeVisitor.{kind} does not call leaf"


def test_covers_takes_a_leaf_rule_for_a_marked_kind_only() -> None:
    """:func:`covers` on a base with a marked leaf kind: a visitor covers it by its own rule or its
    rule for leaves; an unmarked kind needs its own rule."""

    class Base(NodeVisitor):
        @to_leaf
        def probe_leaf(self, node: Any, *args: Any) -> Any:
            return self.leaf(node, *args)

        def probe_plain(self, node: Any, *args: Any) -> Any:
            return self._missing(node)

    class ByLeaf(Base):
        def leaf(self, node: Any, *args: Any) -> Any:
            return "leaf"

    class ByOwn(Base):
        def probe_leaf(self, node: Any, *args: Any) -> Any:
            return "own"

    class Neither(Base):
        pass

    assert [covers(v, "probe_leaf", Base) for v in (ByLeaf, ByOwn, Neither)] == [True, True, False]
    assert [covers(v, "probe_plain", Base) for v in (ByLeaf, ByOwn, Neither)] == [False, False, False]


def test_no_js_module_is_over_500_lines_and_the_static_modules_import_no_circle() -> None:
    """The JS the collector serves (``pldp/service/static/*.mjs``, the client's modules linked from
    ``clients/js``): small modules, every ``./x.mjs`` or ``/static/x.mjs`` import one of them, no
    import circle among them."""
    import re

    static = ROOT / "pldp" / "service" / "static"
    files = {p.name: p for p in sorted(ROOT.rglob("*.mjs"))}
    big = {name: n for name, p in files.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not big, f"JS modules over {MAX_LINES} lines: {big}"
    imports = re.compile(r"""^\s*(?:import|export)\b[^;'"]*?\bfrom\s*["'](?:\./|/static/)([^"']+\.mjs)["']""", re.M)
    edges = {
        p.name: set(imports.findall(p.read_text(encoding="utf-8"))) - {p.name} for p in sorted(static.glob("*.mjs"))
    }
    missing = {name: sorted(targets - set(edges)) for name, targets in edges.items() if targets - set(edges)}
    assert not missing, f"static modules import modules that are not served: {missing}"
    found = circles(edges)
    assert not found, "JS import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


# ------------------------------------------------------------------------------------ the collector's layers
#: The collector's package, and its package that alone speaks SQL.
SERVICE, STORE = "pldp.service", "pldp.service.store"
#: How an SQL statement starts (upper case, as the store writes them), in a string that is not a docstring.
_SQL = re.compile(
    r"^\s*(SELECT\b|INSERT\s+(OR\s+\w+\s+)?INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b|CREATE\s+(UNIQUE\s+)?"
    r"(TABLE|INDEX)\b|PRAGMA\b|BEGIN\b|COMMIT\b|ROLLBACK\b|SAVEPOINT\b|RELEASE\s+\w|WITH\s+RECURSIVE\b)"
)
#: The cursor methods that run SQL.
_RUNS_SQL = {"execute", "executemany", "executescript"}


def _service_modules(outside: str | None = None) -> dict[str, Any]:
    """The collector's modules (those of ``outside`` and below left out)."""
    return {
        name: module
        for name, module in modules().items()
        if (name == SERVICE or name.startswith(SERVICE + "."))
        and not (outside and (name == outside or name.startswith(outside + ".")))
    }


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module and of its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _imports_sqlite(tree: ast.AST) -> bool:
    """Whether ``tree`` (a module, or one statement) imports :mod:`sqlite3`."""
    return any(
        (isinstance(n, ast.Import) and any(a.name.split(".")[0] == "sqlite3" for a in n.names))
        or (isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "sqlite3")
        for n in ast.walk(tree)
    )


def _sql_outside_the_store(tree: ast.AST) -> list[str]:
    """What of ``tree`` speaks SQL: an import of sqlite3, a call of ``execute``/``executemany``/
    ``executescript``, a string (not a docstring) that starts an SQL statement; with its line."""
    docs, found = _docstrings(tree), []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and _imports_sqlite(node):
            found.append(f"line {node.lineno}: imports sqlite3")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RUNS_SQL:
            found.append(f"line {node.lineno}: .{node.func.attr}(...)")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and _SQL.match(node.value)
        ):
            found.append(f"line {node.lineno}: SQL {node.value.strip()[:40]!r}")
    return found


def test_the_sql_check_sees_sql() -> None:
    """The check below finds each way of speaking SQL (so that its silence means something)."""
    source = 'import sqlite3\ndef f(c):\n    """SELECT in a docstring is prose."""\n'
    source += '    c.execute("SELECT 1")\n    c.executemany(q, [])\n    return "UPDATE tokens SET x = 1"\n'
    found = _sql_outside_the_store(ast.parse(source))
    assert sorted(f.split(":")[0] for f in found) == ["line 1", "line 4", "line 4", "line 5", "line 6"], found


def test_sql_lives_only_in_the_store_package() -> None:
    """No module of the collector outside :mod:`pldp.service.store` imports sqlite3, runs a statement
    or holds one: its SQL is behind the store's named functions (``docs/architecture.md``)."""
    bad = {}
    for name, module in _service_modules(outside=STORE).items():
        found = _sql_outside_the_store(ast.parse(module.path.read_text(encoding="utf-8")))
        if found:
            bad[name] = found
    assert not bad, f"SQL outside {STORE}: {bad}"
    store = _service_modules()[STORE]
    assert store.package and _sql_outside_the_store(ast.parse(store.path.read_text(encoding="utf-8"))) == []


def test_the_routes_import_no_sqlite_nor_a_table_of_the_store() -> None:
    """The routes reach the store through :mod:`pldp.service.store`'s package functions and the
    services (writer jobs, reads), never SQLite nor a module of the store's tables."""
    routes = {n: m for n, m in _service_modules().items() if n.startswith(SERVICE + ".routes.")}
    assert len(routes) > 5
    sqlite = sorted(n for n, m in routes.items() if _imports_sqlite(ast.parse(m.path.read_text(encoding="utf-8"))))
    assert not sqlite, f"routes importing sqlite3: {sqlite}"
    edges = graph()
    tables = {n: sorted(t for t in edges[n] if t.startswith(STORE + ".")) for n in routes}
    assert not any(tables.values()), f"routes importing the store's modules of tables: {tables}"


#: What an HTTP refusal is called: the collector's own, FastAPI's and Starlette's, a JSON answer,
#: and the helper that makes a 503 (:func:`pldp.service.collect.unavailable`).
_HTTP_ERRORS = {"CollectError", "HTTPException", "StarletteHTTPException", "JSONResponse", "unavailable"}


def _functions(module: Any) -> tuple[dict[str, ast.FunctionDef], dict[str, str]]:
    """A module's top-level functions by name, and what its names of service modules stand for
    (``from pldp.service import collect`` -> ``collect: pldp.service.collect``; a function
    imported by name -> its module and name)."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(SERVICE):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return defs, names


def _writer_jobs() -> dict[str, ast.FunctionDef]:
    """Every writer job of the collector (a function whose first parameter is a ``Context``,
    :class:`pldp.service.jobs.Context`) and every function of the service they call, transitively,
    by qualified name."""
    table = {name: _functions(module) for name, module in _service_modules().items()}

    def resolve(here: str, call: ast.expr) -> str | None:
        defs, names = table[here]
        if isinstance(call, ast.Name):
            if call.id in defs:
                return f"{here}.{call.id}"
            return names.get(call.id)
        if isinstance(call, ast.Attribute) and isinstance(call.value, ast.Name) and call.value.id in names:
            return f"{names[call.value.id]}.{call.attr}"
        return None

    todo = [
        f"{name}.{fn}"
        for name, (defs, _) in table.items()
        for fn, node in defs.items()
        if node.args.args
        and isinstance(node.args.args[0].annotation, ast.Name)
        and node.args.args[0].annotation.id == "Context"
    ]
    found: dict[str, ast.FunctionDef] = {}
    while todo:
        qual = todo.pop()
        module, _, fn = qual.rpartition(".")
        if qual in found or module not in table or fn not in table[module][0] or module.startswith(STORE):
            continue
        found[qual] = node = table[module][0][fn]
        todo += [t for c in ast.walk(node) if isinstance(c, ast.Call) and (t := resolve(module, c.func))]
    return found


def test_writer_jobs_raise_domain_errors_not_http_ones() -> None:
    """A writer job refuses with a :class:`pldp.service.refusals.RefusalError`, which
    :mod:`pldp.service.errors` maps to HTTP in one table: no job, nor a function of the service it
    calls, names an HTTP refusal (:data:`_HTTP_ERRORS`)."""
    jobs = _writer_jobs()
    known = {
        "collect.store_batch",
        "collect.round_to_store",
        "collect.add_token",
        "codes.store_coded",
        "codes.add_codes",
    }
    assert {f"{SERVICE}.{k}" for k in known} <= set(jobs), sorted(jobs)
    bad = {
        qual: sorted(
            {
                f"line {n.lineno}: {n.id if isinstance(n, ast.Name) else n.attr}"
                for n in ast.walk(node)
                if (isinstance(n, ast.Name) and n.id in _HTTP_ERRORS)
                or (isinstance(n, ast.Attribute) and n.attr in _HTTP_ERRORS)
            }
        )
        for qual, node in jobs.items()
    }
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"writer jobs naming HTTP errors: {bad}"


def test_every_refusal_has_one_http_status() -> None:
    """Each kind of refusal of :mod:`pldp.service.refusals` is in the one table of
    :mod:`pldp.service.errors`."""
    from pldp.service import errors, refusals

    kinds = {getattr(refusals, n) for n in refusals.__all__} - {refusals.RefusalError}
    assert set(errors.REFUSAL_STATUS) == kinds
    assert errors.as_http(refusals.ConflictError("campaign_closed", "closed")).status == 409
