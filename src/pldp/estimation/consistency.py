"""Consistency post-processing: Norm-Sub and the Euclidean projection onto the simplex."""

from __future__ import annotations

import numpy as np

__all__ = ["norm_sub", "project_simplex"]


def norm_sub(f: np.ndarray, total: float = 1.0, max_iter: int | None = None) -> tuple[np.ndarray, int]:
    """Norm-Sub (Wang et al., "Locally Differentially Private Frequency Estimation with
    Consistency", NDSS 2020, Sec. IV).

    Repeat: set negative entries to zero, then subtract the same amount from every positive
    entry so that the entries sum to ``total``; stop when no entry is negative. Each round
    zeroes at least one more entry, so it ends within ``d`` rounds. The fixed point is the
    Euclidean projection of ``f`` onto :math:`\\{g \\ge 0, \\sum g = \\text{total}\\}`.

    Returns
    -------
    (ndarray, int)
        The consistent estimate and the number of rounds.
    """
    g = np.asarray(f, dtype=float).copy()
    active = np.ones(g.size, dtype=bool)
    limit = g.size + 1 if max_iter is None else max_iter
    rounds = 0
    while rounds < limit:
        rounds += 1
        g[~active] = 0.0
        g[active] -= (g[active].sum() - total) / active.sum()
        neg = active & (g < 0)
        if not neg.any():
            break
        active &= ~neg
    g[~active] = 0.0
    return g, rounds


def project_simplex(v: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection onto :math:`\\{g \\ge 0, \\sum g = \\text{total}\\}` by sorting
    (Held et al. 1974; Duchi et al. 2008), O(d log d)."""
    v = np.asarray(v, dtype=float)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    k = np.arange(1, v.size + 1)
    rho = np.flatnonzero(u - css / k > 0)[-1]
    theta = css[rho] / (rho + 1)
    return np.maximum(v - theta, 0.0)
