"""Maximum-likelihood estimation on the exact likelihood of the reports.

For a direct-encoding mechanism the tally :math:`C` is multinomial with cell probabilities
:math:`m = pQ`, so the log-likelihood is :math:`\\ell(p) = \\sum_y C_y \\ln m_y` (Kairouz et
al., ICML 2016). Two solvers are provided:

* :func:`mle_direct` solves the problem *exactly* for the direct family
  (:math:`m_y = q_y + \\delta p_y`). The problem is concave and separable in :math:`m`
  with one linear constraint; its KKT conditions give

  .. math:: m_y = \\max(q_y, C_y / \\nu), \\qquad \\sum_y m_y = 1,

  a water-filling problem solved by one sort (O(d log d), no iterations). When the
  unbiased estimate is non-negative it *is* the MLE (``nu = n``).
* :func:`ibu` is the EM algorithm / iterative Bayesian update (Agrawal & Aggarwal 2001)
  for any channel matrix, started from a given point (by default the projected unbiased
  estimate). Stopping rule: the largest absolute change of a frequency in one iteration
  falls below ``tol`` (default 1e-10), or ``max_iter`` iterations (default 100,000) are
  reached, in which case ``converged`` is False. EM increases the likelihood at every
  step; it is slow when the optimum has many zeros, which is why the direct family uses
  the exact solver.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ibu", "log_likelihood_direct", "mle_direct"]


def mle_direct(counts: np.ndarray, q: np.ndarray, delta: float) -> np.ndarray:
    """Exact MLE of a direct-encoding channel ``Q(y|x) = q_y + delta [x = y]``.

    Parameters
    ----------
    counts : ndarray of int
        Report counts :math:`C_y` (``n = sum(counts) > 0``).
    q : ndarray
        Dishonest probabilities :math:`q_y \\ge 0`, with :math:`\\sum q = 1 - \\delta`.
    delta : float
        Honesty gap.

    Returns
    -------
    ndarray
        The maximizer of :math:`\\sum_y C_y \\ln(q_y + \\delta p_y)` over the simplex.
    """
    c = np.asarray(counts, dtype=float)
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(c > 0, np.where(q > 0, c / np.where(q > 0, q, 1.0), np.inf), 0.0)
    order = np.argsort(-t, kind="stable")
    ts = t[order]
    cum_c = np.cumsum(c[order])
    rest_q = q.sum() - np.cumsum(q[order])  # q mass of the items not (yet) active
    nu = cum_c / np.maximum(1.0 - rest_q, np.finfo(float).tiny)
    nxt = np.append(ts[1:], 0.0)
    ok = (ts > 0) & (ts >= nu * (1 - 1e-12)) & (nu >= nxt * (1 - 1e-12))
    k = int(np.flatnonzero(ok)[0]) if ok.any() else int(np.flatnonzero(ts > 0)[-1])
    v = nu[k]
    m = np.maximum(q, c / v)
    p = np.maximum(m - q, 0.0) / delta
    return p / p.sum()


def log_likelihood_direct(counts: np.ndarray, q: np.ndarray, delta: float, p: np.ndarray) -> float:
    """:math:`\\sum_y C_y \\ln(q_y + \\delta p_y)` (``-inf`` if a reported item is impossible)."""
    m = q + delta * np.asarray(p, dtype=float)
    c = np.asarray(counts, dtype=float)
    pos = c > 0
    with np.errstate(divide="ignore"):
        return float(np.sum(c[pos] * np.log(m[pos])))


def ibu(
    channel: np.ndarray,
    counts: np.ndarray,
    p0: np.ndarray,
    tol: float = 1e-10,
    max_iter: int = 100_000,
) -> tuple[np.ndarray, int, bool]:
    """EM / iterative Bayesian update for a general channel (rows = inputs).

    .. math:: p^{(t+1)}_x = p^{(t)}_x \\sum_y \\frac{C_y}{n} \\frac{Q(y|x)}{m^{(t)}_y},
              \\qquad m^{(t)} = p^{(t)} Q.

    Returns ``(p, iterations, converged)``; see the module docstring for the stopping rule.
    """
    Q = np.asarray(channel, dtype=float)
    w = np.asarray(counts, dtype=float)
    w = w / w.sum()
    pos = w > 0
    Qp = Q[:, pos]
    wp = w[pos]
    p = np.asarray(p0, dtype=float).copy()
    p = np.maximum(p, 0.0)
    p /= p.sum()
    for it in range(1, max_iter + 1):
        m = p @ Qp
        new = p * (Qp @ (wp / m))
        new /= new.sum()
        change = np.max(np.abs(new - p))
        p = new
        if change < tol:
            return p, it, True
    return p, max_iter, False
