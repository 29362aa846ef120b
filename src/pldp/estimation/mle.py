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

from pldp.errors import ParameterError, SolverError

__all__ = ["ibu", "log_likelihood_direct", "log_likelihood_unary", "mle_direct", "mle_unary"]


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


def _unary_m(lam: np.ndarray, c: np.ndarray, n: float) -> np.ndarray:
    """The ``m`` in [0, 1] with ``c/m - (n-c)/(1-m) = lam`` (root of ``lam m^2 - (lam+n) m + c``)."""
    s = np.sqrt((lam + n - 2 * c) ** 2 + 4 * c * (n - c))  # sqrt of the discriminant, >= 0
    den = lam + n + s
    if (den > 0).all():  # the stable root everywhere (the usual case; the same numbers as below)
        return np.minimum(np.maximum(2 * c / den, 0.0), 1.0)  # np.clip's numbers, without its wrapper
    with np.errstate(divide="ignore", invalid="ignore"):
        stable = np.where(den > 0, 2 * c / np.where(den > 0, den, 1.0), 0.0)
        other = np.where(lam != 0, (lam + n - s) / (2 * np.where(lam != 0, lam, 1.0)), c / n)
    return np.clip(np.where(den > 0, stable, other), 0.0, 1.0)


def mle_unary(counts: np.ndarray, n: int, a: np.ndarray, b: np.ndarray, tol: float = 1e-13) -> tuple[np.ndarray, int]:
    """Maximum likelihood for unary encoding on the per-bit counts.

    Maximizes :math:`\\sum_k C_k \\ln m_k + (n - C_k) \\ln(1 - m_k)` with
    :math:`m_k = b_k + (a_k - b_k) p_k` over the simplex: the likelihood of the counts if the
    bits were independent across items. They are not (a user's own bit is 1 with probability
    ``a`` and every other with ``b``, so bits of one report are dependent through the item),
    and the counts are not sufficient statistics of unary reports; this is the standard
    count-based approximation, and it is concave in ``p``.

    KKT: on the support :math:`(a_k - b_k)[C_k/m_k - (n-C_k)/(1-m_k)] = \\mu`; each ``m_k`` is
    then the root of a quadratic, and ``mu`` is found by bisection so that the ``p_k`` sum to
    one (to ``tol``).

    Returns
    -------
    (ndarray, int)
        The estimate and the number of bisection steps.

    Raises
    ------
    ParameterError
        Probabilities outside ``0 <= b < a < 1``, counts outside ``[0, n]``, or shapes that differ.
    SolverError
        The multiplier could not be bracketed (not expected for valid input).
    """
    c = np.asarray(counts, dtype=float)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if not (c.shape == a.shape == b.shape and c.ndim == 1):
        raise ParameterError(f"counts, a and b must be vectors of one length, got {c.shape}, {a.shape}, {b.shape}")
    if not np.all((b >= 0) & (b < a) & (a < 1)):
        raise ParameterError("unary MLE needs 0 <= b < a < 1 for every bit")
    if not (n > 0 and np.all((c >= 0) & (c <= n))):
        raise ParameterError(f"counts must lie in [0, n] with n > 0, got n={n}")
    gap = a - b
    nf = float(n)

    def p_of(mu: float) -> np.ndarray:
        m = _unary_m(mu / gap, c, nf)
        return np.maximum(m - b, 0.0) / gap

    # at mu_hi every p with b > 0 is 0: the derivative at p = 0 is below mu_hi there; a bit of b = 0
    # (ULDP's non-sensitive items) has an infinite derivative at 0 if counted, so mu_hi doubles
    # until the p sum to at most 1
    with np.errstate(divide="ignore", invalid="ignore"):
        d0 = np.where(b > 0, gap * (c / np.where(b > 0, b, 1.0) - (nf - c) / (1 - b)), 0.0)
    hi = float(np.max(d0)) + 1.0
    steps = 0
    while p_of(hi).sum() > 1.0:
        hi *= 2.0
        steps += 1
        if steps > 2000:  # pragma: no cover - p_of(mu) -> 0 as mu grows
            raise SolverError(f"unary MLE: could not bracket the multiplier (n={n}, d={c.size})")
    lo = -1.0
    while p_of(lo).sum() < 1.0:
        lo *= 2.0
        steps += 1
        if steps > 2000:  # pragma: no cover - cannot happen for 0 < b < a < 1
            raise SolverError(f"unary MLE: could not bracket the multiplier (n={n}, d={c.size})")
    for _ in range(400):
        steps += 1
        mid = 0.5 * (lo + hi)
        if p_of(mid).sum() > 1.0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= tol * max(1.0, abs(mid)):
            break
    p = p_of(0.5 * (lo + hi))
    return p / p.sum(), steps


def log_likelihood_unary(counts: np.ndarray, n: int, a: np.ndarray, b: np.ndarray, p: np.ndarray) -> float:
    """:math:`\\sum_k C_k \\ln m_k + (n - C_k) \\ln(1 - m_k)`, :math:`m = b + (a - b) p`."""
    c = np.asarray(counts, dtype=float)
    m = b + (a - b) * np.asarray(p, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(c > 0, c * np.log(m), 0.0) + np.where(n - c > 0, (n - c) * np.log1p(-m), 0.0)
    return float(np.sum(terms))
