"""Confidence bounds of a distinguishing game: Clopper–Pearson intervals and the epsilon lower bound.

An audit runs a test ``T`` (an event of the report) ``n0`` times on input ``x`` and ``n1`` times
on ``x'``, and counts ``k0`` and ``k1`` hits. If the mechanism is :math:`\\varepsilon`-LDP for the
pair, :math:`\\Pr[T \\mid x] \\le e^{\\varepsilon} \\Pr[T \\mid x']`. With exact (Clopper–Pearson)
intervals :math:`[\\mathrm{TPR}_{lo}, \\cdot]` and :math:`[\\cdot, \\mathrm{FPR}_{hi}]` of
confidence :math:`1-\\alpha` each,

.. math::

    \\hat\\varepsilon = \\ln \\frac{\\mathrm{TPR}_{lo}}{\\mathrm{FPR}_{hi}}

is below the true :math:`\\ln(\\Pr[T|x]/\\Pr[T|x'])` with probability at least :math:`1-\\alpha`
(each one-sided tail has :math:`\\alpha/2`; Jagielski, Ullman & Oprea, NeurIPS 2020; Arcolezi &
Gambs, PETS 2024, who use the same two-sided intervals).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from pldp.errors import ParameterError

__all__ = ["clopper_pearson", "epsilon_lower_bound"]


def clopper_pearson(k: int | np.ndarray, n: int | np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided confidence interval of a binomial proportion (Clopper & Pearson, 1934).

    Parameters
    ----------
    k, n : int or array_like
        Successes and trials (``0 <= k <= n``, ``n >= 1``).
    alpha : float
        One minus the confidence level: each tail has probability at most ``alpha / 2``.

    Returns
    -------
    lo, hi : ndarray
        :math:`B(\\alpha/2; k, n-k+1)` and :math:`B(1-\\alpha/2; k+1, n-k)`, the beta quantiles
        (0 when ``k = 0``, 1 when ``k = n``).

    Examples
    --------
    >>> lo, hi = clopper_pearson(0, 10, 0.05)
    >>> float(lo), round(float(hi), 4)
    (0.0, 0.3085)
    """
    if not 0.0 < alpha < 1.0:
        raise ParameterError(f"alpha must lie in (0, 1), got {alpha!r}")
    k_arr, n_arr = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    if np.any(n_arr < 1) or np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ParameterError("need 0 <= k <= n and n >= 1")
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k_arr > 0, stats.beta.ppf(alpha / 2, k_arr, n_arr - k_arr + 1), 0.0)
        hi = np.where(k_arr < n_arr, stats.beta.ppf(1 - alpha / 2, k_arr + 1, n_arr - k_arr), 1.0)
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def epsilon_lower_bound(k0: int, n0: int, k1: int, n1: int, alpha: float) -> float:
    """The audited epsilon :math:`\\ln(\\mathrm{TPR}_{lo} / \\mathrm{FPR}_{hi})` (module docstring).

    ``-inf`` when the test never fired on the first input (nothing can be concluded).

    Examples
    --------
    A test that fires 73 % of the time on ``x`` and 27 % on ``x'`` (k-RR, d = 2, epsilon = 1):

    >>> round(epsilon_lower_bound(731_000, 10**6, 269_000, 10**6, 0.01), 3)
    0.994
    """
    lo, _ = clopper_pearson(k0, n0, alpha)
    _, hi = clopper_pearson(k1, n1, alpha)
    if lo <= 0.0:
        return -math.inf
    return float(math.log(float(lo)) - math.log(float(hi)))
