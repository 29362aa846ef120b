"""Fake reports of subset selection (SS): the targets, filled up to ``k`` items with random others.

A report is a set of exactly ``k`` items (:meth:`pldp.SS.tally` refuses any other size) and
supports the items it holds. Cao, Jia, Gong's maximal gain attack (USENIX Security 2021, Sec. 4)
puts the ``r`` targets in every fake report: when ``r <= k``, a fake holds every target and
``k - r`` other items drawn uniformly; when ``r > k``, a uniform ``k``-subset of the targets.

Strategies: ``mga`` (and ``sensitive``, ``knows_defence``, ``adaptive``: every honest report holds
``k`` items, so a fake of ``k`` items is already what a test on the size sees, and every budget is
equal) and ``input`` (the honest randomizer run on a target). The expected gain is
:func:`pldp.robustness.support_gain` with a fake's support ``min(1, k / r)`` at each target
(``mga``) or ``q* + (p* - q*) / r`` (``input``), exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.attacks.base import rule_for
from pldp.attacks.pure import unary_rows
from pldp.attacks.support import SupportRule
from pldp.mechanisms.subset import SS

__all__ = ["SubsetRule"]


@rule_for(SS)
class SubsetRule(SupportRule):
    """SS: a report is ``k`` of the ``d`` items (module docstring)."""

    def mga_reports(self, mech: Any, targets: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        return unary_rows(mech.d, targets, np.full(m, mech.k, dtype=np.int64), rng)

    def mga_support(self, mech: Any, targets: np.ndarray) -> float:
        """``min(1, k / r)``: a fake holds every target, or ``k`` of them when ``r > k``."""
        return min(1.0, mech.k / targets.size)
