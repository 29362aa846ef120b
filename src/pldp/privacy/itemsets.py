"""Exact item-set privacy of padding-and-sampling (Gu et al., ICDE 2020, Theorem 4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pldp.privacy.base import TOLERANCE, PrivacyCheck

__all__ = ["ItemSetPrivacyReport"]


@dataclass(frozen=True, repr=False)
class ItemSetPrivacyReport(PrivacyCheck):
    """Exact MinID-LDP (or AvgID-LDP) check on every pair of item-sets of a small universe.

    ``realised[x, x']`` is the exact largest log-likelihood ratio over all outputs between the
    item-sets ``subsets[x]`` and ``subsets[x']``, ``bound`` is Lemma 2's eq. 14 and ``claimed``
    the pair budget of the set budgets of eq. 15 (:math:`\\min(\\varepsilon_x, \\varepsilon_{x'})`,
    or the mean under AvgID-LDP).
    """

    subsets: list[tuple[int, ...]]
    itemset_epsilon: np.ndarray
    claimed: np.ndarray
    realised: np.ndarray
    bound: np.ndarray
    notion: str = "MinID-LDP on item-sets"
    tolerance: float = TOLERANCE

    @property
    def holds(self) -> bool:
        """Every pair of item-sets within its budget."""
        return bool(np.all(self.realised <= self.claimed + self.tolerance))

    @property
    def bound_holds(self) -> bool:
        """Lemma 2's eq. 14 bounds every exact ratio."""
        return bool(np.all(self.realised <= self.bound + self.tolerance))

    @property
    def slack(self) -> float:
        """Smallest ``claimed - realised``."""
        return float(np.min(self.claimed - self.realised))

    @property
    def ldp_epsilon(self) -> float:
        """The largest realised ratio over all pairs of item-sets."""
        return float(np.max(self.realised))

    def summary(self) -> str:
        state = "holds" if self.holds else "FAILS"
        return (
            f"{self.notion} {state}; {len(self.subsets)} item-sets, slack={self.slack:.3g}, "
            f"eq. 14 bound {'holds' if self.bound_holds else 'FAILS'}, LDP eps={self.ldp_epsilon:.6g}"
        )
