"""The leaves that protect every pair of items alike at one budget: local hashing, Hadamard response, subset selection.

Such a leaf takes one item per report, and a report *supports* some items (its hash value, its
half, its subset): a holder's report supports the holder's item with probability ``p*`` and any
other item with probability ``q*`` (:attr:`EveryPairLeaf.support`). Under two items ``i, j`` the
likelihood of a report depends only on which of the two it supports, so that four categories,

    0 ``i`` and not ``j``, 1 ``j`` and not ``i``, 2 both, 3 neither,

are a sufficient statistic, with laws mirrored between ``i`` and ``j``: under ``i``,
``(p - b, q - b, b, 1 - p - q + b)`` for ``p`` the probability of supporting ``i``, ``q`` of
supporting ``j`` and ``b`` of supporting both (:meth:`EveryPairLeaf.pair_support`); under ``j`` the
first two swap. The node's one claim is that the largest ratio of a report's probabilities under
two items, ``num / den`` (:meth:`EveryPairLeaf.claim_ratio`), is at most :math:`e^{\\varepsilon}`.

Two nodes of one report format (:attr:`EveryPairLeaf.report_format`: one kind, one ``d`` and the
same outputs, a local-hashing node's ``g`` and seeds, a subset node's ``k``) differ only in their
budget's threshold. Under an item ``x`` the outputs fall in two classes, those that support ``x``
and those that do not, each of a size the format fixes, and an output's probability is its class's
mass (:attr:`EveryPairLeaf.hit_mass` over ``2**32``, or the rest) divided by that size. So the
largest ratio of an output's probabilities under the two nodes, for any item, is the larger of the
two masses' ratios (:meth:`EveryPairLeaf.ratio_to`): the level's protection of a hidden level
(:class:`~pldp.channel.LeveledNode`).

:class:`EveryPairLeaf` writes the leaf rules' methods (:meth:`~pldp.channel.node.Node.claims`,
:meth:`~pldp.channel.node.Node.item_keys`, :meth:`~pldp.channel.node.Node.pair_claim`,
:meth:`~pldp.channel.node.Node.pair_law`) once from those hooks; each kind keeps its JSON form,
schema, columns and program in its own module.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from pldp.channel.node import Node, Row, every_pair_row
from pldp.channel.sampling import GRID

__all__ = ["EveryPairLeaf"]


class EveryPairLeaf(Node):
    """A leaf sampler that protects every pair of items alike at one budget ``epsilon`` (module docstring).

    A kind supplies :meth:`claim_ratio`, :attr:`support`, :meth:`pair_support` and :meth:`supports`;
    its dataclass has the members ``d`` (items) and ``epsilon`` (the budget it claims).
    """

    d: int
    epsilon: float

    @property
    def takes_one_item(self) -> bool:
        return True

    # ------------------------------------------------------------------ the kind's hooks
    @abstractmethod
    def claim_ratio(self) -> tuple[int, int]:
        """``(num, den)``, ``num >= den``: the largest ratio of a report's probabilities under two items,
        attained by a report that supports the one and not the other."""

    @property
    @abstractmethod
    def support(self) -> tuple[float, float]:
        """``(p*, q*)``: the probabilities that a report supports its holder's item, and another item."""

    @abstractmethod
    def pair_support(self, i: int, j: int) -> tuple[float, float, float]:
        """``(p, q, b)``: under item ``i``, the probabilities that a report supports ``i``, ``j``, and both."""

    @property
    @abstractmethod
    def report_format(self) -> tuple[Any, ...]:
        """What fixes the outputs and how many of them support an item, everything but the budget:
        two nodes of one format differ only in :attr:`hit_mass`."""

    @property
    @abstractmethod
    def hit_mass(self) -> int:
        """The probability that a report supports its holder's item, times ``2**32`` (in ``[1, 2**32)``):
        spread evenly over the outputs that do, the rest over those that do not."""

    @abstractmethod
    def supports(self, cols: Mapping[str, np.ndarray], item: int, column_prefix: str) -> np.ndarray:
        """Per report of the payload columns ``cols`` (named ``column_prefix`` + the column's name),
        whether it supports ``item`` (bool)."""

    # ------------------------------------------------------------------ claims and the leaf rules
    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        return [every_pair_row(*self.claim_ratio(), self.epsilon, part)], self.epsilon

    def item_keys(self) -> list[tuple[Any, ...]]:
        return [(*self.claim_ratio(), self.epsilon)] * self.d  # every item alike to the channel

    def pair_claim(self, i: int, j: int) -> float:
        return float(self.epsilon)

    def pair_law(
        self, i: int, j: int, column_prefix: str
    ) -> tuple[np.ndarray, np.ndarray, Callable[[Mapping[str, np.ndarray]], np.ndarray]]:
        """A report's category (0 supports ``i`` and not ``j``, 1 ``j`` and not ``i``, 2 both, 3 neither)
        and its exact laws under ``i`` and ``j`` (module docstring). Category 0 has the ratio
        :meth:`claim_ratio`."""
        p, q, both = self.pair_support(i, j)
        p0 = np.array([p - both, q - both, both, 1 - p - q + both])
        p1 = p0[[1, 0, 2, 3]]

        def classify(cols: Mapping[str, np.ndarray]) -> np.ndarray:
            hi, hj = self.supports(cols, i, column_prefix), self.supports(cols, j, column_prefix)
            return np.where(hi & hj, 2, np.where(hi, 0, np.where(hj, 1, 3))).astype(np.int64)

        return p0, p1, classify

    def ratio_to(self, other: EveryPairLeaf) -> Fraction | None:
        """``max Pr(o | x, self) / Pr(o | x, other)`` over items ``x`` and outputs ``o``, exactly (module
        docstring): the larger of ``hit / hit'`` and ``(2**32 - hit) / (2**32 - hit')``, every item
        having outputs of both classes. None (not bounded here) for a node of another format."""
        if type(other) is not type(self) or other.report_format != self.report_format:
            return None
        hit, hit2 = self.hit_mass, other.hit_mass
        return max(Fraction(hit, hit2), Fraction(GRID - hit, GRID - hit2))

    # ------------------------------------------------------------------ the program
    def reports(self, inp: Any) -> int:
        return int(inp.size)
