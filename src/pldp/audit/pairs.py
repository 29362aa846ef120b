"""What an audit compares: inputs of a sampler, pairs of them, and the secret each pair tests.

An :class:`Input` is one user's input to a sampler node (:mod:`pldp.channel`): an item
(direct and unary nodes), an item-set (padding-and-sampling), an item and a budget level (leveled
nodes: PLDP-FEBSF, RCF, APLDP, PBP, PPDA), or one of those per attribute (MPLDP). A :class:`Pair`
is two inputs that differ in one *secret*:

* ``"item"``: the item, at the same level (every notion protects it);
* ``"item-set"``: the whole set of padding-and-sampling (Gu et al., ICDE 2020, Theorem 4);
* ``"level"``: the budget level, at the same item, for protocols that claim to hide it
  (PLDP-FEBSF's perturbed level, PBP's and PPDA's hidden one). A level sent in the clear (RCF,
  APLDP, MPLDP) is not a secret and gets no pairs.

:func:`default_pairs` chooses the pairs an audit runs when none are given: every ordered pair of
distinct items when the domain has at most :data:`SMALL_DOMAIN` items; otherwise one pair per
ordered pair of *item classes* (items whose thresholds and budgets are equal, so that the exact
channel treats them alike), at most :data:`MAX_CLASS_PAIRS` of them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp.channel import AttributesNode, DirectNode, LeveledNode, MemoNode, Node, NodeVisitor, PaddingNode, UnaryNode
from pldp.channel.node import groups
from pldp.errors import ParameterError

__all__ = ["MAX_CLASS_PAIRS", "SMALL_DOMAIN", "Input", "Pair", "default_pairs", "item_classes"]

#: Domains of at most this many items are audited on every ordered pair of distinct items.
SMALL_DOMAIN = 10
#: At most this many ordered pairs of item classes on larger domains.
MAX_CLASS_PAIRS = 64
#: At most this many levels get every ordered level pair; more get neighbours and extremes.
SMALL_LEVELS = 10

Item = int | tuple[int, ...]


@dataclass(frozen=True)
class Input:
    """One user's input to a sampler.

    Attributes
    ----------
    item : int or tuple
        The item index; a sorted tuple of item indices (padding-and-sampling); or one entry per
        attribute (MPLDP), each an item index.
    level : int, tuple or None
        The budget level index (leveled nodes); one per attribute, ``None`` for a part without
        levels (attributes); ``None`` otherwise.
    """

    item: Any
    level: Any = None

    def label(self) -> str:
        """Short text, e.g. ``"3"``, ``"{1,4}"``, ``"3@level 2"`` or ``"(3@1, 0@0)"``."""
        return _label(self.item, self.level)


def _label(item: Any, level: Any) -> str:
    if isinstance(item, tuple) and isinstance(level, tuple):
        return "(" + ", ".join(_label(i, lv) for i, lv in zip(item, level, strict=True)) + ")"
    text = "{" + ",".join(map(str, item)) + "}" if isinstance(item, tuple) else str(item)
    return text if level is None else f"{text}@{level}"


@dataclass(frozen=True)
class Pair:
    """Two inputs that differ in one secret; the audit asks how well a report tells ``x0`` from ``x1``.

    Attributes
    ----------
    secret : {"item", "item-set", "level"}
        What differs (module docstring).
    x0, x1 : Input
        The inputs; the test guesses ``x0``.
    part : int or None
        The attribute that differs (MPLDP), else None.
    """

    secret: str
    x0: Input
    x1: Input
    part: int | None = None

    def label(self) -> str:
        """``"x0 vs x1"`` with the attribute when there is one."""
        where = "" if self.part is None else f"attribute {self.part}: "
        return f"{where}{self.x0.label()} vs {self.x1.label()}"


class _ItemKeys(NodeVisitor[list[tuple[Any, ...]]]):
    """Each item's thresholds and budget: what the channel of a leaf node knows of it."""

    def direct(self, node: DirectNode) -> list[tuple[Any, ...]]:
        return [(w, e) for w, e in zip(node.weights, node.epsilons, strict=True)]

    def unary(self, node: UnaryNode) -> list[tuple[Any, ...]]:
        return [(a, b, e) for a, b, e in zip(node.a, node.b, node.epsilons, strict=True)]

    def leaf(self, node: Node) -> list[tuple[Any, ...]]:
        return node.item_keys()


def item_classes(node: Node) -> list[list[int]]:
    """Items grouped by equal thresholds and budgets (the channel cannot tell them apart)."""
    return list(groups(node.accept(_ItemKeys())).values())


def _item_pairs(node: Node, d: int) -> list[tuple[int, int]]:
    """Ordered pairs of distinct items among the first ``d`` (module docstring)."""
    if d <= SMALL_DOMAIN:
        return [(i, j) for i in range(d) for j in range(d) if i != j]
    classes = [[i for i in c if i < d] for c in item_classes(node)]
    classes = [c for c in classes if c]
    out: list[tuple[int, int]] = []
    for g, h in itertools.product(range(len(classes)), repeat=2):
        cg, ch = classes[g], classes[h]
        if g != h:
            out.append((cg[0], ch[0]))
        elif len(cg) >= 2:
            out += [(cg[0], cg[1]), (cg[1], cg[0])]
    return out[:MAX_CLASS_PAIRS]


def _level_pairs(t: int) -> list[tuple[int, int]]:
    if t <= SMALL_LEVELS:
        return [(i, j) for i in range(t) for j in range(t) if i != j]
    near = {(i, i + 1) for i in range(t - 1)} | {(0, t - 1)}
    return sorted(near | {(j, i) for i, j in near})


def _one_item_pairs(node: Node, d: int) -> list[Pair]:
    """The item pairs of a node whose input is one item of ``d``."""
    return [Pair("item", Input(i), Input(j)) for i, j in _item_pairs(node, d)]


class _Pairs(NodeVisitor[list[Pair]]):
    """The default pairs of a node: ``node.accept(_PAIRS)``."""

    def direct(self, node: DirectNode) -> list[Pair]:
        return _one_item_pairs(node, node.d)

    def unary(self, node: UnaryNode) -> list[Pair]:
        return _one_item_pairs(node, node.d)

    def leaf(self, node: Any) -> list[Pair]:
        """The item pairs of a leaf of ``d`` items."""
        return _one_item_pairs(node, node.d)

    def padding(self, node: PaddingNode) -> list[Pair]:
        singles = [Pair("item-set", Input((i,)), Input((j,))) for i, j in _item_pairs(node.inner, node.d)]
        empty = [Pair("item-set", Input((0,)), Input(())), Pair("item-set", Input(()), Input((0,)))]
        return singles + empty

    def leveled(self, node: LeveledNode) -> list[Pair]:
        pairs = [
            Pair("item", Input(i, t), Input(j, t))
            for t, item_node in enumerate(node.item_channels())
            for i, j in _item_pairs(item_node, node.d)
        ]
        if node.hides_level:
            pairs += [Pair("level", Input(0, s), Input(0, u)) for s, u in _level_pairs(node.t)]
        return pairs

    def attributes(self, node: AttributesNode) -> list[Pair]:
        base_items = tuple(0 for _ in node.parts)
        base_levels = tuple(None if p.as_leveled() is None else 0 for p in node.parts)
        out = []
        for k, part in enumerate(node.parts):
            for p in part.accept(self):
                x0 = Input(_put(base_items, k, p.x0.item), _put(base_levels, k, p.x0.level))
                x1 = Input(_put(base_items, k, p.x1.item), _put(base_levels, k, p.x1.level))
                out.append(Pair(p.secret, x0, x1, k))
        return out

    def memo(self, node: MemoNode) -> list[Pair]:
        return node.one_report().accept(self)


_PAIRS = _Pairs()


def _put(values: tuple[Any, ...], k: int, value: Any) -> tuple[Any, ...]:
    return (*values[:k], value, *values[k + 1 :])


def default_pairs(node: Node, max_pairs: int | None = None, rng: np.random.Generator | None = None) -> list[Pair]:
    """The pairs an audit of ``node`` runs by default (module docstring).

    Parameters
    ----------
    node : Node
        The sampler.
    max_pairs : int, optional
        Keep a uniform random sample of this many (drawn with ``rng``), in their original order.
    rng : numpy.random.Generator, optional
        Needed with ``max_pairs``.

    Examples
    --------
    >>> import pldp
    >>> [p.label() for p in default_pairs(pldp.KRR(1.0, 3).sampler())]
    ['0 vs 1', '0 vs 2', '1 vs 0', '1 vs 2', '2 vs 0', '2 vs 1']
    """
    pairs = node.accept(_PAIRS)
    if max_pairs is not None and max_pairs < len(pairs):
        if max_pairs < 1:
            raise ParameterError(f"max_pairs must be >= 1, got {max_pairs}")
        gen = rng if rng is not None else np.random.default_rng()
        keep = np.sort(gen.choice(len(pairs), size=max_pairs, replace=False))
        pairs = [pairs[i] for i in keep]
    return pairs
