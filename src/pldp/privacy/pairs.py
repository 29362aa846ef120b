"""Exact check of input-discriminative claims of unary encodings (ID-LDP, MinID-LDP, AvgID-LDP).

ID-LDP (Gu, Li, Xiong, Cao, ICDE 2020, Def. 2) bounds the log-likelihood ratio of every pair of
distinct inputs ``(i, j)`` by a pair budget :math:`r(\\varepsilon_i, \\varepsilon_j)`: the smaller
budget for MinID-LDP (Def. 3), the mean for AvgID-LDP (Sec. VIII); plain LDP is one budget for
every pair. For unary encoding the largest ratio over all outputs is
:math:`a_i(1-b_j)/(b_i(1-a_j))` (eq. 5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pldp.errors import ParameterError
from pldp.privacy.base import TOLERANCE, PrivacyCheck

__all__ = ["PairPrivacyReport", "pair_budgets"]


def pair_budgets(eps: np.ndarray, pair_rule: str = "min") -> np.ndarray:
    """The pair budget :math:`r(\\varepsilon_i, \\varepsilon_j)` for all pairs (ID-LDP, Gu et al. ICDE 2020, Def. 2).

    ``pair_rule="min"``: MinID-LDP (Def. 3), :math:`\\min(\\varepsilon_i, \\varepsilon_j)`;
    ``"avg"``: AvgID-LDP (Sec. VIII), :math:`(\\varepsilon_i + \\varepsilon_j)/2`. (Plain LDP is the
    ``"min"`` rule applied to equal budgets.)

    Raises
    ------
    ParameterError
        Any other rule.
    """
    e = np.asarray(eps, dtype=float)
    if pair_rule == "min":
        return np.minimum.outer(e, e)
    if pair_rule == "avg":
        return np.add.outer(e, e) / 2.0
    raise ParameterError(f"pair_rule must be 'min' or 'avg', got {pair_rule!r}")


@dataclass(frozen=True, repr=False)
class PairPrivacyReport(PrivacyCheck):
    """Exact check of an input-discriminative claim (ID-LDP, LDP) of a unary mechanism.

    Items with equal ``(a, b, epsilon)`` form a group; ``realised[g, h]`` is
    :math:`\\ln[a_g(1-b_h)/(b_g(1-a_h))]`, the largest log-likelihood ratio between an input
    of group ``g`` and one of group ``h`` over all outputs (Gu et al. eq. 5), and
    ``claimed[g, h]`` the budget the notion grants the pair. A diagonal entry counts only
    when its group holds two or more items (a pair of *distinct* inputs, ERRATA IDUE-3).

    Attributes
    ----------
    notion : str
        ``"LDP"``, ``"MinID-LDP"`` or ``"AvgID-LDP"``.
    group_epsilon : ndarray
        Budget of each group.
    group_items : list of ndarray
        Item indices of each group.
    claimed, realised : ndarray, shape (t, t)
    invertible : bool
        Some outputs reveal their input (ULDP: a non-sensitive item's set bit); ``realised`` is then
        over the protected outputs and :attr:`ldp_epsilon` is infinite.
    """

    notion: str
    group_epsilon: np.ndarray
    group_items: list[np.ndarray]
    claimed: np.ndarray
    realised: np.ndarray
    tolerance: float = TOLERANCE
    invertible: bool = False

    @property
    def pair_mask(self) -> np.ndarray:
        """Which group pairs hold a pair of distinct inputs."""
        sizes = np.array([len(g) for g in self.group_items])
        mask = np.ones(self.claimed.shape, dtype=bool)
        np.fill_diagonal(mask, sizes >= 2)
        return mask

    @property
    def slack(self) -> float:
        """Smallest ``claimed - realised`` over the pairs (>= -tolerance when it holds)."""
        m = self.pair_mask
        return float(np.min((self.claimed - self.realised)[m])) if m.any() else math.inf

    @property
    def violations(self) -> list[tuple[int, int]]:
        """Group pairs whose constraint fails."""
        bad = self.pair_mask & (self.realised > self.claimed + self.tolerance)
        return [(int(i), int(j)) for i, j in zip(*np.nonzero(bad), strict=True)]

    @property
    def holds(self) -> bool:
        """True when every pair of distinct inputs satisfies its budget."""
        return not self.violations

    @property
    def ldp_epsilon(self) -> float:
        """Plain-LDP epsilon of the mechanism: the largest realised ratio over distinct inputs (``inf``
        with invertible outputs)."""
        if self.invertible:
            return math.inf
        m = self.pair_mask
        return float(np.max(self.realised[m])) if m.any() else 0.0

    @property
    def lemma1_epsilon(self) -> float:
        """The LDP epsilon that MinID-LDP guarantees, ``min(max E, 2 min E)`` (Gu et al. Lemma 1);
        ``inf`` when a report may reveal its input (ULDP's invertible outputs)."""
        if self.invertible:
            return math.inf
        e = self.group_epsilon
        return float(min(e.max(), 2 * e.min()))

    def summary(self) -> str:
        """One human-readable line."""
        state = "holds" if self.holds else f"FAILS at group pairs {self.violations[:5]}"
        return (
            f"{self.notion} {state}; {len(self.group_items)} group(s), slack={self.slack:.3g}, "
            f"LDP eps={self.ldp_epsilon:.6g}"
        )
