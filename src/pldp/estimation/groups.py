"""Estimation from independent groups of users, each reporting through its own pure mechanism.

Protocols whose users are split into groups (budget levels) that the server can tell apart
(RCF, APLDP, MPLDP) have one tally per group. Two estimators use all groups:

* :func:`group_estimates`: each group's unbiased estimate and plug-in variance, to be combined
  linearly (:mod:`pldp.estimation.combine`);
* :func:`joint_mle`: the maximum likelihood of one distribution ``p`` from all groups together,
  with the variance of :func:`joint_mle_variance`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from pldp.estimation.simplex import maximize_on_simplex
from pldp.estimation.unbiased import plugin_variance

if TYPE_CHECKING:
    from pldp.mechanisms.base import Mechanism
    from pldp.tally import Tally

__all__ = ["group_estimates", "joint_mle", "joint_mle_variance"]


def group_estimates(mechanisms: Sequence[Mechanism], tallies: Sequence[Tally]) -> tuple[np.ndarray, np.ndarray]:
    """Each group's unbiased frequency estimate and its plug-in variance, shape ``(G, d)`` each.

    A group without users has NaN estimates and infinite variances (no information).
    """
    d = mechanisms[0].d
    est = np.full((len(mechanisms), d), np.nan)
    var = np.full((len(mechanisms), d), np.inf)
    for g, (mech, tal) in enumerate(zip(mechanisms, tallies, strict=True)):
        if tal.n > 0:
            e = mech.estimate(tal, "unbiased")
            est[g], var[g] = e.frequencies, e.variance
    return est, var


def joint_mle(mechanisms: Sequence[Mechanism], tallies: Sequence[Tally]) -> np.ndarray:
    """Maximum likelihood of ``p`` from independent groups, each a pure mechanism.

    Direct encoding contributes the multinomial log-likelihood :math:`\\sum_y C_y \\ln m_y`
    (exact), unary encoding and the support counts of the large-domain oracles (a tally of kind
    ``"unary"``) the count-based binomial one
    :math:`\\sum_k C_k \\ln m_k + (n - C_k)\\ln(1 - m_k)` (as :func:`pldp.estimation.mle.mle_unary`),
    with :math:`m = q^* + (p^* - q^*) p`. Both are separable and concave in ``p``, so the
    maximum over the simplex is found by the KKT bisection of
    :func:`~pldp.estimation.simplex.maximize_on_simplex`.
    """
    used = [(mech, tal) for mech, tal in zip(mechanisms, tallies, strict=True) if tal.n > 0]
    # one row per group with users: the slope is one array expression over (groups, items)
    d = mechanisms[0].d
    # p* and q* may be per item: each row broadcast to (d,)
    q_star = np.array([np.broadcast_to(mech.support[1], (d,)) for mech, _ in used], dtype=float).reshape(-1, d)
    gap = np.array([np.broadcast_to(mech.support[0] - mech.support[1], (d,)) for mech, _ in used], dtype=float)
    gap = gap.reshape(-1, d)
    c = np.array([tal.counts for _, tal in used], dtype=float).reshape(len(used), d)
    unary = np.array([tally.kind == "unary" for _, tally in used])[:, None]  # bit or support counts
    n = np.array([float(tal.n) for _, tal in used])[:, None]
    rest = np.where(unary, n - c, 0.0)  # n - C_k, unary only
    hit, miss = gap * c, gap * rest

    mixed, any_unary = bool(unary.any() and not unary.all()), bool(unary.any())

    def slope(p: np.ndarray) -> np.ndarray:
        m = q_star + gap * p
        out = hit / m
        if mixed:
            out -= np.where(unary, miss / (1.0 - m), 0.0)
        elif any_unary:  # every group unary: the same values with fewer of numpy's calls
            out -= miss / (1.0 - m)
        return out.sum(axis=0)

    with np.errstate(divide="ignore", invalid="ignore"):  # at p's bounds: once here, not per slope
        return maximize_on_simplex(slope, d)


def joint_mle_variance(mechanisms: Sequence[Mechanism], tallies: Sequence[Tally], p: np.ndarray) -> np.ndarray:
    """:math:`(\\sum_g 1/V_g(\\hat p))^{-1}`: the variance of the per-item inverse-variance combination
    of the groups' unbiased estimates, at the fitted ``p`` (the MLE's asymptotic variance is at
    most this)."""
    precision = np.zeros(p.size)
    for mech, tal in zip(mechanisms, tallies, strict=True):
        if tal.n > 0:
            p_star, q_star = mech.support
            precision += 1.0 / plugin_variance(q_star + (p_star - q_star) * p, tal.n, p_star, q_star)
    with np.errstate(divide="ignore"):
        return 1.0 / precision
