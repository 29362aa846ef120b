"""What a spec's reports cost (:mod:`pldp.ledger`, the accounting rule): its family, the charge of a
batch (counts only: what the caps are checked against) and its per-value spend (display only)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import numpy as np

from pldp.channel import MemoNode, Node
from pldp.deploy.spec import Spec
from pldp.privacy.base import repeated

__all__ = ["SpecCost", "new_values", "spec_cost"]


@dataclass(frozen=True)
class SpecCost:
    """What one spec's reports charge (:mod:`pldp.ledger`): its family, :math:`\\bar\\varepsilon` per
    fresh report, :math:`\\bar\\varepsilon_\\infty` per value that can draw a permanent response, the
    number ``domain`` of such values (:math:`d`, 0 for a spec that is not memoized), and one report's
    bound."""

    family: str
    per_report: float
    per_value: float
    report_epsilon: float
    memoized: bool
    domain: int = 0

    def charge(self, reports: int, before: int) -> float:
        """:math:`c`, the charge of ``reports`` reports when the family has made ``before`` reports
        (all time): ``reports`` times :math:`\\bar\\varepsilon` if not memoized, else
        :math:`(\\min(R + n, d) - \\min(R, d))\\,\\bar\\varepsilon_\\infty`: every report as if its value
        were new to the memo, until :math:`d` reports, after which no value can be new.

        It depends on counts and the spec only, never on the answers: the caps are checked against it.
        """
        if not self.memoized:
            return repeated(reports, self.per_report)
        return repeated(min(before + reports, self.domain) - min(before, self.domain), self.per_value)

    def spend(self, reports: int, values: int) -> float:
        """The per-value spend of a batch whose ``values`` values were new to the memo: ``values``
        times :math:`\\bar\\varepsilon_\\infty` if memoized, else the charge. Display only: it
        depends on the answers, so no cap is ever checked against it."""
        return repeated(values, self.per_value) if self.memoized else repeated(reports, self.per_report)


@lru_cache(maxsize=64)
def spec_cost(spec: Spec) -> SpecCost:
    """The :class:`SpecCost` of a spec (its claims read once per spec)."""
    root = spec.root
    _, one = root.claims()
    if root.memoized:
        node = cast(MemoNode, root)
        return SpecCost(spec.memo_key or spec.id, one, max(node.permanent_epsilons), one, True, int(node.d))
    return SpecCost(spec.id, one, 0.0, one, False)


def new_values(root: Node, inp: Any) -> int:
    """How many distinct values of a batch draw their permanent response (new to the memo): the
    reports of a memo node's input that draw one (``source[i] == i``, :class:`pldp.channel.MemoInput`);
    0 for a node that is not memoized. What the ledger records as the per-value spend (display
    only, ``SpecCost.spend``)."""
    if not root.memoized:
        return 0
    source = np.asarray(inp.source)
    return int(np.count_nonzero(source == np.arange(source.size)))
