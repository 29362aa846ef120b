"""Maximization over the probability simplex of separable concave functions.

Used by the joint maximum-likelihood estimators of grouped protocols
(:mod:`pldp.estimation.groups`) and by :func:`pldp.theory.worst_case`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["maximize_on_simplex"]


def maximize_on_simplex(slope: Callable[[np.ndarray], np.ndarray], d: int, iters: int = 200) -> np.ndarray:
    """Maximize a separable concave :math:`\\sum_i F_i(p_i)` over the probability simplex.

    ``slope(p)`` returns :math:`F_i'(p_i)` for a vector ``p`` (non-increasing in each
    coordinate). KKT: :math:`p_i(\\mu) = \\arg\\max_{[0,1]} F_i(p) - \\mu p`, found by
    bisection on ``p_i`` for each ``mu``, and ``mu`` by bisection so that ``sum p = 1``.
    """
    zeros, ones = np.zeros(d), np.ones(d)
    s0, s1 = slope(zeros), slope(ones)
    finite = np.concatenate([s0[np.isfinite(s0)], s1[np.isfinite(s1)]])
    big = 1.0 + (np.max(np.abs(finite)) if finite.size else 1.0)

    def p_of(mu: float) -> np.ndarray:
        lo, hi = zeros.copy(), ones.copy()
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            up = slope(mid) > mu
            lo = np.where(up, mid, lo)
            hi = np.where(up, hi, mid)
        return 0.5 * (lo + hi)

    mu_lo, mu_hi = -big, big
    for _ in range(iters):
        mid = 0.5 * (mu_lo + mu_hi)
        if p_of(mid).sum() > 1.0:
            mu_lo = mid
        else:
            mu_hi = mid
        if mu_hi - mu_lo <= 1e-15 * max(1.0, abs(mid)):
            break
    # p(mu) may jump where some F_i is linear (ties): mix the two sides to sum exactly to one
    p_hi, p_lo = p_of(mu_hi), p_of(mu_lo)
    s_hi, s_lo = p_hi.sum(), p_lo.sum()
    t = 0.0 if s_lo - s_hi <= 1e-15 else (1.0 - s_hi) / (s_lo - s_hi)
    p = p_hi + min(max(t, 0.0), 1.0) * (p_lo - p_hi)
    return p / p.sum()
