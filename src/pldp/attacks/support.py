"""What the attack rules of the support-count oracles (OLH, HR, SS) share: the input strategy, the fakes' support.

A report of these oracles supports a set of items (:mod:`pldp.mechanisms.support`). Under the
``input`` strategy a fake runs the honest randomizer on a target drawn uniformly, so it supports
each target with probability ``q* + (p* - q*) / r``; under the maximal gain attack (``mga`` and the
strategies that fall back on it) the kind builds a report that supports the targets, each with the
probability :meth:`SupportRule.mga_support` (1 unless a report cannot hold them all), and any other
item with probability ``q*``. :class:`SupportRule` holds both; a kind writes its maximal gain
reports (:meth:`SupportRule.mga_reports`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.attacks.base import Attack
from pldp.attacks.pure import ALL_RULES, PureRule, _choose
from pldp.oracle import FrequencyOracle

__all__ = ["SupportRule"]


class SupportRule(PureRule):
    """A rule for a support-count oracle: the ``input`` strategy, the fakes' support (module
    docstring); a kind writes :meth:`mga_reports`."""

    def reports(self, oracle: FrequencyOracle, attack: Attack, m: int, rng: np.random.Generator) -> np.ndarray:
        mech: Any = oracle
        if ALL_RULES[attack.strategy] == "input":
            return mech.perturb(_choose(attack.targets, m, rng), rng)
        return self.mga_reports(mech, attack.targets, m, rng)

    def mga_reports(self, mech: Any, targets: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """``m`` fake reports of the maximal gain attack on ``targets``, in the oracle's report format."""
        raise NotImplementedError

    def mga_support(self, mech: Any, targets: np.ndarray) -> float:
        """The probability that a fake report of the maximal gain attack supports each target: 1."""
        return 1.0

    def support(self, mech: Any, targets: np.ndarray, how: str) -> np.ndarray:
        p, q = mech.support
        s = q.copy()
        if how == "input":
            s[targets] += (p[targets] - q[targets]) / targets.size
        else:
            s[targets] = self.mga_support(mech, targets)
        return s
