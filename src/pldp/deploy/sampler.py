"""The client program of a spec: sampler nodes with integer thresholds (``docs/wire-format.md`` §2).

A sampler is a small tree of nodes, each a frozen dataclass that reads and writes its JSON form
and validates it (every integer on the ``2**32`` grid, every length consistent):

* :class:`DirectNode` (KRR, URR, IPRR; PLDP-FEBSF's level report): one word per report;
* :class:`UnaryNode` (RAPPOR, OUE, IDUE): one word per bit;
* :class:`PaddingNode` (padding-and-sampling around a unary node);
* :class:`LeveledNode` (a budget level chosen by the user: PLDP-FEBSF, RCF, APLDP, PBP, PPDA, and
  each attribute of MPLDP);
* :class:`AttributesNode` (MPLDP: one part per attribute).

:func:`sampler_of` writes the sampler of any pldp oracle; :func:`parse_node` reads one back,
refusing malformed input with a :class:`~pldp.errors.SpecError` that names the offending path.
The privacy claims the nodes carry are checked by :mod:`pldp.deploy.verify`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from pldp.errors import SpecError
from pldp.sampling import GRID, GRID_BITS, DirectTable, direct_table

__all__ = [
    "AttributesNode",
    "DirectNode",
    "LeveledNode",
    "Node",
    "PaddingNode",
    "UnaryNode",
    "parse_node",
    "sampler_of",
]

DIRECT_NOTIONS = ("LDP", "ULDP", "IPLDP")
UNARY_NOTIONS = ("LDP", "MinID-LDP", "AvgID-LDP")
LEVEL_REPORTS = ("perturbed", "clear", "hidden")


def _budget_json(e: float) -> float | str:
    return "inf" if e == math.inf else float(e)


def _int(value: Any, path: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"{path} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise SpecError(f"{path} = {value} is outside [{lo}, {hi}]")
    return value


def _ints(value: Any, path: str, n: int, lo: int, hi: int) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) != n:
        raise SpecError(f"{path} must be a list of {n} integers")
    return tuple(_int(v, f"{path}[{i}]", lo, hi) for i, v in enumerate(value))


def _budget(value: Any, path: str, allow_inf: bool) -> float:
    if value == "inf" and allow_inf:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        alt = ' or "inf"' if allow_inf else ""
        raise SpecError(f"{path} must be a budget > 0{alt}, got {value!r}")
    return float(value)


def _budgets(value: Any, path: str, n: int, allow_inf: bool) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != n:
        raise SpecError(f"{path} must be a list of {n} budgets")
    return tuple(_budget(v, f"{path}[{i}]", allow_inf) for i, v in enumerate(value))


def _keys(obj: Any, path: str, required: set[str], optional: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    if not isinstance(obj, dict):
        raise SpecError(f"{path} must be an object")
    missing = required - obj.keys()
    extra = obj.keys() - required - optional
    if missing:
        raise SpecError(f"{path} lacks {sorted(missing)}")
    if extra:
        raise SpecError(f"{path} has unknown members {sorted(extra)}")
    return obj


@dataclass(frozen=True)
class DirectNode:
    """A direct-encoding sampler: ``Pr(y | x) = (weights[y] + keep [x = y]) / 2**32``."""

    kind: ClassVar[str] = "direct"
    d: int
    keep: int
    weights: tuple[int, ...]
    notion: str
    epsilons: tuple[float, ...]

    @cached_property
    def table(self) -> DirectTable:
        """The thresholds prepared for :func:`pldp.sampling.direct_draw`."""
        return direct_table(self.keep, self.weights)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "direct",
            "d": self.d,
            "keep": self.keep,
            "weights": list(self.weights),
            "notion": self.notion,
            "epsilons": [_budget_json(e) for e in self.epsilons],
        }

    @classmethod
    def parse(cls, obj: Any, path: str) -> DirectNode:
        _keys(obj, path, {"kind", "d", "keep", "weights", "notion", "epsilons"})
        d = _int(obj["d"], f"{path}.d", 2, 2**31)
        keep = _int(obj["keep"], f"{path}.keep", 1, GRID)
        weights = _ints(obj["weights"], f"{path}.weights", d, 0, GRID)
        if keep + sum(weights) != GRID:
            raise SpecError(f"{path}: keep + sum(weights) = {keep + sum(weights)} must be 2**{GRID_BITS} = {GRID}")
        if obj["notion"] not in DIRECT_NOTIONS:
            raise SpecError(f"{path}.notion must be one of {DIRECT_NOTIONS}, got {obj['notion']!r}")
        eps = _budgets(obj["epsilons"], f"{path}.epsilons", d, allow_inf=True)
        return cls(d, keep, weights, obj["notion"], eps)


@dataclass(frozen=True)
class UnaryNode:
    """A unary-encoding sampler: bit ``k`` is 1 w.p. ``a[k] / 2**32`` if ``k = x``, else ``b[k] / 2**32``."""

    kind: ClassVar[str] = "unary"
    d: int
    a: tuple[int, ...]
    b: tuple[int, ...]
    notion: str
    epsilons: tuple[float, ...]

    @cached_property
    def thresholds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(a, b)`` as ``uint32`` arrays; ``a`` is ``2**32 - 1`` at most, so it fits."""
        return np.asarray(self.a, dtype=np.uint32), np.asarray(self.b, dtype=np.uint32)

    @property
    def nbytes(self) -> int:
        """Bytes of a packed report."""
        return (self.d + 7) // 8

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "unary",
            "d": self.d,
            "a": list(self.a),
            "b": list(self.b),
            "notion": self.notion,
            "epsilons": [float(e) for e in self.epsilons],
        }

    @classmethod
    def parse(cls, obj: Any, path: str) -> UnaryNode:
        _keys(obj, path, {"kind", "d", "a", "b", "notion", "epsilons"})
        d = _int(obj["d"], f"{path}.d", 2, 2**24)
        a = _ints(obj["a"], f"{path}.a", d, 1, GRID - 1)
        b = _ints(obj["b"], f"{path}.b", d, 1, GRID - 1)
        bad = [k for k in range(d) if not b[k] < a[k]]
        if bad:
            raise SpecError(f"{path}: need b[k] < a[k] for every bit; not so at {bad[:5]}")
        if obj["notion"] not in UNARY_NOTIONS:
            raise SpecError(f"{path}.notion must be one of {UNARY_NOTIONS}, got {obj['notion']!r}")
        eps = _budgets(obj["epsilons"], f"{path}.epsilons", d, allow_inf=False)
        return cls(d, a, b, obj["notion"], eps)


@dataclass(frozen=True)
class PaddingNode:
    """Padding-and-sampling: pad a set to ``ell`` items, sample one, report it with ``inner``."""

    kind: ClassVar[str] = "padding"
    d: int
    ell: int
    inner: UnaryNode

    def to_json(self) -> dict[str, Any]:
        return {"kind": "padding", "d": self.d, "ell": self.ell, "inner": self.inner.to_json()}

    @classmethod
    def parse(cls, obj: Any, path: str) -> PaddingNode:
        _keys(obj, path, {"kind", "d", "ell", "inner"})
        d = _int(obj["d"], f"{path}.d", 1, 2**24)
        ell = _int(obj["ell"], f"{path}.ell", 1, 2**24)
        inner = parse_node(obj["inner"], f"{path}.inner")
        if not isinstance(inner, UnaryNode) or inner.d != d + ell:
            raise SpecError(f"{path}.inner must be a unary node over d + ell = {d + ell} items")
        return cls(d, ell, inner)


@dataclass(frozen=True)
class LeveledNode:
    """A user-chosen budget level: her item through ``items[level]``, then the level report."""

    kind: ClassVar[str] = "leveled"
    d: int
    levels: tuple[float, ...]
    items: tuple[DirectNode | UnaryNode, ...]
    level_report: str
    level_sampler: DirectNode | None = None
    level_epsilon: float | None = None

    @property
    def t(self) -> int:
        """Number of levels."""
        return len(self.levels)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "leveled",
            "d": self.d,
            "levels": [float(e) for e in self.levels],
            "items": [node.to_json() for node in self.items],
            "level_report": self.level_report,
        }
        if self.level_sampler is not None:
            out["level_sampler"] = self.level_sampler.to_json()
        if self.level_epsilon is not None:
            out["level_epsilon"] = _budget_json(self.level_epsilon)
        return out

    @classmethod
    def parse(cls, obj: Any, path: str) -> LeveledNode:
        _keys(obj, path, {"kind", "d", "levels", "items", "level_report"}, {"level_sampler", "level_epsilon"})
        levels = obj["levels"]
        if not isinstance(levels, list) or not levels:
            raise SpecError(f"{path}.levels must be a non-empty list of budgets")
        lv = _budgets(levels, f"{path}.levels", len(levels), allow_inf=False)
        items_json = obj["items"]
        if not isinstance(items_json, list) or len(items_json) != len(lv):
            raise SpecError(f"{path}.items must hold one node per level ({len(lv)})")
        parsed = [parse_node(o, f"{path}.items[{i}]") for i, o in enumerate(items_json)]
        items = tuple(node for node in parsed if isinstance(node, (DirectNode, UnaryNode)))
        if len(items) != len(parsed):
            raise SpecError(f"{path}.items must be direct or unary nodes")
        d = _int(obj["d"], f"{path}.d", 2, min(node.d for node in items))
        mode = obj["level_report"]
        if mode not in LEVEL_REPORTS:
            raise SpecError(f"{path}.level_report must be one of {LEVEL_REPORTS}, got {mode!r}")
        if mode != "clear" and len({(type(node), node.d) for node in items}) > 1:
            raise SpecError(f"{path}: with the level {mode}, every level's node must have the same kind and size")
        if any(len({node.d for node in items if isinstance(node, k)}) > 1 for k in (DirectNode, UnaryNode)):
            raise SpecError(f"{path}: the levels' nodes of one kind must have the same size (one payload column each)")
        sampler = None
        if mode == "perturbed":
            if "level_sampler" not in obj:
                raise SpecError(f"{path} needs a level_sampler to perturb the level")
            node = parse_node(obj["level_sampler"], f"{path}.level_sampler")
            if not isinstance(node, DirectNode) or node.d != len(lv):
                raise SpecError(f"{path}.level_sampler must be a direct node over the {len(lv)} levels")
            sampler = node
        elif "level_sampler" in obj:
            raise SpecError(f"{path}.level_sampler is only for a perturbed level")
        level_eps = None
        if mode == "clear":
            if "level_epsilon" in obj:
                raise SpecError(f"{path}.level_epsilon makes no sense for a level sent in the clear")
        else:
            if "level_epsilon" not in obj:
                raise SpecError(f"{path} must state level_epsilon, the protection of the {mode} level")
            level_eps = _budget(obj["level_epsilon"], f"{path}.level_epsilon", allow_inf=True)
        for i, (node, e) in enumerate(zip(items, lv, strict=True)):
            if any(b != e for b in node.epsilons if b != math.inf):
                raise SpecError(f"{path}.items[{i}] must claim the level's budget {e} for every item")
        return cls(d, lv, items, mode, sampler, level_eps)


@dataclass(frozen=True)
class AttributesNode:
    """Several attributes, each reported by its own part (MPLDP)."""

    kind: ClassVar[str] = "attributes"
    parts: tuple[Node, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": "attributes", "parts": [p.to_json() for p in self.parts]}

    @classmethod
    def parse(cls, obj: Any, path: str) -> AttributesNode:
        _keys(obj, path, {"kind", "parts"})
        parts = obj["parts"]
        if not isinstance(parts, list) or not parts:
            raise SpecError(f"{path}.parts must be a non-empty list of nodes")
        nodes = tuple(parse_node(o, f"{path}.parts[{i}]") for i, o in enumerate(parts))
        if any(isinstance(n, (AttributesNode, PaddingNode)) for n in nodes):
            raise SpecError(f"{path}.parts must be direct, unary or leveled nodes")
        return cls(nodes)


Node = DirectNode | UnaryNode | PaddingNode | LeveledNode | AttributesNode
_KINDS: dict[str, Any] = {c.kind: c for c in (DirectNode, UnaryNode, PaddingNode, LeveledNode, AttributesNode)}


def parse_node(obj: Any, path: str = "sampler.root") -> Node:
    """Read a node from its JSON form, validating it (:class:`~pldp.errors.SpecError` on any defect)."""
    if not isinstance(obj, dict) or obj.get("kind") not in _KINDS:
        kind = obj.get("kind") if isinstance(obj, dict) else None
        raise SpecError(f"{path} must be a node with kind one of {sorted(_KINDS)}, got {kind!r}")
    node: Node = _KINDS[obj["kind"]].parse(obj, path)
    return node


# --------------------------------------------------------------------------- from oracles
def sampler_of(oracle: Any) -> Node:
    """The sampler that runs ``oracle``'s client exactly (its integer thresholds and claims)."""
    from pldp.deploy.verify import level_ratio
    from pldp.exact import epsilon_ceiling
    from pldp.mechanisms.direct import DirectEncoding
    from pldp.mechanisms.unary import UnaryEncoding
    from pldp.protocols import FEBSF, MPLDP, PBP, PPDA, RCF, PaddingSampling

    if isinstance(oracle, DirectEncoding):
        return DirectNode(
            oracle.d,
            oracle.keep_threshold,
            tuple(int(w) for w in oracle.weights),
            oracle.notion,
            tuple(float(e) for e in oracle.budgets.epsilons),
        )
    if isinstance(oracle, UnaryEncoding):
        shift = GRID_BITS - oracle.coin_bits
        a, b = (tuple(int(v) << shift for v in arr) for arr in oracle.thresholds)
        return UnaryNode(oracle.d, a, b, oracle.notion, tuple(float(e) for e in oracle.budgets.epsilons))
    if isinstance(oracle, PaddingSampling):
        inner = sampler_of(oracle.inner)
        assert isinstance(inner, UnaryNode)
        return PaddingNode(oracle.d, oracle.ell, inner)
    if isinstance(oracle, MPLDP):
        parts = tuple(
            LeveledNode(
                oracle.k[i],
                tuple(float(e) for e in oracle.level_eps[i]),
                tuple(_leaf(m) for m in oracle.mechanisms[i]),
                "clear",
            )
            for i in range(oracle.n_attributes)
        )
        return AttributesNode(parts)
    if isinstance(oracle, (FEBSF, RCF, PBP, PPDA)):
        levels = tuple(float(e) for e in oracle.levels)
        items = tuple(_leaf(m) for m in oracle.mechanisms)
        if isinstance(oracle, RCF) or (isinstance(oracle, FEBSF) and oracle.level_mechanism is None):
            return LeveledNode(oracle.d, levels, items, "clear")
        level_sampler = None
        if isinstance(oracle, FEBSF):
            node = sampler_of(oracle.level_mechanism)
            assert isinstance(node, DirectNode)
            level_sampler = node
        mode = "perturbed" if level_sampler else "hidden"
        num, den = level_ratio(LeveledNode(oracle.d, levels, items, mode, level_sampler, math.inf))
        return LeveledNode(oracle.d, levels, items, mode, level_sampler, epsilon_ceiling(num, den))
    raise SpecError(f"no sampler for {type(oracle).__name__}")


def _leaf(mech: Any) -> DirectNode | UnaryNode:
    node = sampler_of(mech)
    assert isinstance(node, (DirectNode, UnaryNode))
    return node
