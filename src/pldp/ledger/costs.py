"""What a spec's reports cost (:mod:`pldp.ledger`, the accounting rule): its family, the worst-case
epsilon of one fresh report, and that of a new memoized value."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import numpy as np

from pldp.channel import MemoNode, Node
from pldp.deploy.spec import Spec

__all__ = ["SpecCost", "new_values", "spec_cost"]


@dataclass(frozen=True)
class SpecCost:
    """What one spec's reports charge (:mod:`pldp.ledger`): its family, :math:`\\bar\\varepsilon` per
    fresh report, :math:`\\bar\\varepsilon_\\infty` per new memoized value, and one report's bound."""

    family: str
    per_report: float
    per_value: float
    report_epsilon: float
    memoized: bool

    def charge(self, reports: int, values: int) -> float:
        """:math:`c`: ``values`` times :math:`\\bar\\varepsilon_\\infty` if memoized, else ``reports`` times
        :math:`\\bar\\varepsilon` (0 times an infinite budget is 0)."""
        count, eps = (values, self.per_value) if self.memoized else (reports, self.per_report)
        return 0.0 if count == 0 else count * eps


@lru_cache(maxsize=64)
def spec_cost(spec: Spec) -> SpecCost:
    """The :class:`SpecCost` of a spec (its claims read once per spec)."""
    root = spec.root
    _, one = root.claims()
    if root.memoized:
        perm = max(cast(MemoNode, root).permanent_epsilons)
        return SpecCost(spec.memo_key or spec.id, one, perm, one, True)
    return SpecCost(spec.id, one, 0.0, one, False)


def new_values(root: Node, inp: Any) -> int:
    """How many distinct values of a batch draw their permanent response (new to the memo): the
    reports of a memo node's input that draw one (``source[i] == i``, :class:`pldp.channel.MemoInput`);
    0 for a node that is not memoized."""
    if not root.memoized:
        return 0
    source = np.asarray(inp.source)
    return int(np.count_nonzero(source == np.arange(source.size)))
