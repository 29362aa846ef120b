"""The architecture as tests: the layers of ``src/pldp``, no import circle, small modules, and node
dispatch kept with the nodes (``docs/architecture.md``).

Each check reads the source (:mod:`tests.import_graph`), so it fails on the change that breaks the
rule, naming the modules and imports at fault.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil

import pytest

import pldp
from pldp.channel import NODE_KINDS, NodeVisitor
from tests.import_graph import ROOT, circles, graph, group, lines, modules

#: The parts of pldp from the bottom up. A module may import its own part and the parts of lower
#: layers; parts of one layer do not import each other. ``pldp`` itself (the package's
#: ``__init__``, the public facade) is exempt.
LAYERS: list[set[str]] = [
    {"errors"},
    {"_validation", "_text", "_lazy", "fingerprint", "bitcount", "parallel", "devicefiles"},
    {"channel", "metrics"},
    {"domain"},
    {"budgets", "itemsets", "tally"},
    {"params", "privacy"},
    {"oracle"},
    {"registry", "estimation"},
    {"mechanisms"},
    {"theory", "robustness"},
    {"protocols"},
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


def test_the_channel_layer_imports_only_itself_and_the_errors() -> None:
    edges = graph()
    outside = {
        (name, target)
        for name, targets in edges.items()
        if group(name) == "channel"
        for target in targets
        if group(target) != "channel" and target != "pldp.errors"
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


@pytest.mark.parametrize("kind", sorted(NODE_KINDS))
def test_every_visitor_names_the_kinds_it_does_not_cover(kind: str) -> None:
    """A visitor either has a rule for a kind or, by the base class, refuses it with a TypeError; the
    concerns that must cover every kind (wire, checks, client inputs, audit) do (but :data:`PENDING`)."""
    complete = {"_Payload", "_Reader", "_Check", "_Inputs", "_Statistic", "_Claim", "_Pairs", "_Answer", "_Users"}
    visitors = {cls.__name__: cls for cls in _all_visitors()}
    assert complete <= set(visitors), sorted(complete - set(visitors))
    for name in complete - PENDING.get(kind, set()):
        assert getattr(visitors[name], kind) is not getattr(NodeVisitor, kind), f"{name} has no rule for {kind}"


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
