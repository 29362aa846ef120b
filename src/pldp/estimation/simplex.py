"""Maximization over the probability simplex of separable concave functions.

Used by the joint maximum-likelihood estimators of grouped protocols
(:mod:`pldp.estimation.groups`) and by :func:`pldp.theory.worst_case`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["WIDTH", "maximize_on_simplex"]

#: The width to which each coordinate's bracket is halved: :math:`2^{-60}`, as 60 halvings of ``[0, 1]``.
WIDTH = 2.0**-60


def maximize_on_simplex(slope: Callable[[np.ndarray], np.ndarray], d: int, iters: int = 200) -> np.ndarray:
    """Maximize a separable concave :math:`\\sum_i F_i(p_i)` over the probability simplex.

    ``slope(p)`` returns :math:`F_i'(p_i)` for a vector ``p`` (non-increasing in each
    coordinate). KKT: :math:`p_i(\\mu) = \\arg\\max_{[0,1]} F_i(p) - \\mu p`, found by
    bisection on ``p_i`` for each ``mu`` (started from the brackets that the ends of ``mu``'s
    bracket left, so that later ones take a few halvings, not 60), and ``mu`` so that
    ``sum p = 1`` by regula falsi (Illinois), with a bisection where it is slower than one.
    """
    zeros, ones = np.zeros(d), np.ones(d)
    s0, s1 = slope(zeros), slope(ones)
    finite = np.concatenate([s0[np.isfinite(s0)], s1[np.isfinite(s1)]])
    big = 1.0 + (np.max(np.abs(finite)) if finite.size else 1.0)

    def p_of(mu: float, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bracket ``[lo, hi]`` of each :math:`p_i(\\mu)`, halved from the given one (which
        holds it, and is at most ``[0, 1]``) until each is no wider than :data:`WIDTH` or than the
        floats allow (its ends adjacent): at most 60 halvings, as many as the widest needs."""
        lo, hi = lo.copy(), hi.copy()
        # halved in place: d is small, so numpy's calls, not their work, take the time
        mid, width, wide, up = np.empty(d), np.empty(d), np.empty(d, dtype=bool), np.empty(d, dtype=bool)
        for _ in range(60):
            np.add(lo, hi, out=mid)
            mid *= 0.5
            np.subtract(hi, lo, out=width)
            np.greater(width, WIDTH, out=wide)
            wide &= lo < mid
            wide &= mid < hi
            if not wide.any():
                break
            np.greater(slope(mid), mu, out=up)
            np.copyto(lo, mid, where=up)
            np.logical_not(up, out=up)
            np.copyto(hi, mid, where=up)
        return lo, hi

    # p_i(mu) does not increase with mu: between mu_lo and mu_hi it lies in [lo(mu_hi), hi(mu_lo)],
    # so each bisection on p starts from the brackets the two ends of mu's bracket left
    mu_lo, mu_hi = -big, big
    at_lo, at_hi = p_of(mu_lo, zeros, ones), p_of(mu_hi, zeros, ones)  # brackets of p(mu_lo), p(mu_hi)

    def excess(bracket: tuple[np.ndarray, np.ndarray]) -> float:
        return float((0.5 * (bracket[0] + bracket[1])).sum()) - 1.0  # > 0 below the root, <= 0 above

    f_lo, f_hi, side = excess(at_lo), excess(at_hi), 0
    before = mu_hi - mu_lo  # the width two steps ago
    for step in range(iters):
        # the Illinois variant of regula falsi (the stale end's value halved); a bisection where two
        # steps did not halve mu's bracket, so that it at least halves every three steps whatever
        # p(mu) does (it jumps where some F_i is linear)
        if step % 2 == 0:
            halve, before = mu_hi - mu_lo > 0.5 * before, mu_hi - mu_lo
        else:
            halve = False
        mid = mu_lo + (mu_hi - mu_lo) * f_lo / (f_lo - f_hi) if not halve and f_lo > f_hi else mu_lo
        if not mu_lo < mid < mu_hi:
            mid = 0.5 * (mu_lo + mu_hi)
        bracket = p_of(mid, at_hi[0], at_lo[1])
        f_mid = excess(bracket)
        if f_mid > 0.0:
            mu_lo, at_lo, f_lo = mid, bracket, f_mid
            f_hi = f_hi / 2 if side == -1 else f_hi
            side = -1
        else:
            mu_hi, at_hi, f_hi = mid, bracket, f_mid
            f_lo = f_lo / 2 if side == 1 else f_lo
            side = 1
        if mu_hi - mu_lo <= 1e-15 * max(1.0, abs(mid)):
            break
    # p(mu) may jump where some F_i is linear (ties): mix the two sides to sum exactly to one
    p_hi, p_lo = 0.5 * (at_hi[0] + at_hi[1]), 0.5 * (at_lo[0] + at_lo[1])
    s_hi, s_lo = p_hi.sum(), p_lo.sum()
    t = 0.0 if s_lo - s_hi <= 1e-15 else (1.0 - s_hi) / (s_lo - s_hi)
    p = p_hi + min(max(t, 0.0), 1.0) * (p_lo - p_hi)
    return p / p.sum()
