"""The estimators of a pure frequency oracle, from its support probabilities and a count tally.

A *pure* oracle (Wang et al., USENIX Security 2017) has per-item support probabilities
:math:`p^*_y = \\Pr[\\text{report supports } y \\mid x = y]` and
:math:`q^*_y = \\Pr[\\text{report supports } y \\mid x \\ne y]`. Direct encoding (KRR, URR, IPRR;
a report supports one item) and unary encoding (RAPPOR, OUE, IDUE; a report supports the items
whose bit is set) are both pure, and so are the server's pooled views of some protocols (PBP)
and the sampled item of padding-and-sampling. :func:`estimate_counts` is their one estimator;
mechanisms call it from ``estimate`` after checking the tally.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from pldp.domain import Domain
from pldp.errors import EstimationError
from pldp.estimation.consistency import norm_sub
from pldp.estimation.mle import ibu, log_likelihood_direct, log_likelihood_unary, mle_direct, mle_unary
from pldp.estimation.recover import recover
from pldp.estimation.result import Estimate
from pldp.estimation.unbiased import invert, plugin_variance
from pldp.methods import STANDARD_METHODS, check_method

__all__ = ["COUNT_METHODS", "SOLVERS", "estimate_counts"]

#: MLE solvers: ``"exact"`` (closed-form KKT), ``"em"`` (direct encoding only), ``"auto"`` (exact).
SOLVERS = ("auto", "exact", "em")
#: The methods of :func:`estimate_counts` (names of the table :mod:`pldp.methods`).
COUNT_METHODS: tuple[str, ...] = (*STANDARD_METHODS, "recover")


def estimate_counts(
    family: str,
    support: tuple[np.ndarray, np.ndarray],
    domain: Domain,
    n: int,
    counts: np.ndarray,
    method: str = "unbiased",
    *,
    solver: Literal["auto", "exact", "em"] = "auto",
    tol: float = 1e-10,
    max_iter: int = 100_000,
    delta: float | None = None,
    targets: Any = None,
) -> Estimate:
    """Estimate the item distribution from the support counts of ``n`` reports of a pure oracle.

    Parameters
    ----------
    family : {"direct", "unary"}
        Report family (decides the likelihood of ``"mle"``).
    support : (ndarray, ndarray)
        :math:`(p^*, q^*)` per item. For direct encoding :math:`p^* - q^*` is one common gap
        :math:`\\delta` (the channel is :math:`Q = \\delta I + 1 q^{*T}`).
    domain : Domain
        Item labels.
    n : int
        Number of reports (> 0).
    counts : ndarray
        Support count of each item.
    method : {"unbiased", "norm_sub", "mle", "recover"}
        * ``"unbiased"``: :math:`\\hat f_y = (C_y/n - q^*_y)/(p^*_y - q^*_y)` (Li et al. eq. 12
          for IPRR). Unbiased; entries may be negative; for direct encoding they sum to 1
          exactly, for unary encoding only in expectation.
        * ``"norm_sub"``: Norm-Sub of Wang et al. (NDSS 2020) applied to the unbiased estimate:
          the Euclidean projection onto the probability simplex.
        * ``"mle"``: maximum likelihood. Direct encoding: the exact multinomial likelihood of
          the reports (Kairouz et al. 2016), solved exactly through its KKT conditions
          (``solver="exact"``, no iterations) or by EM / iterative Bayesian update
          (``solver="em"``, started from the Norm-Sub estimate mixed with 1 % of the uniform
          distribution; see :mod:`pldp.estimation.mle` for the stopping rule). Unary encoding:
          the count-based likelihood of independent binomials per bit
          (:func:`~pldp.estimation.mle.mle_unary`; counts are not sufficient for unary reports,
          so this is the standard approximation).
        * ``"recover"``: the fakes' contribution estimated from the items they push below zero
          and subtracted, then projected onto the simplex (:func:`pldp.estimation.recover.recover`;
          ``targets`` names suspected targets). Cost without attack: that of ``"norm_sub"``
          whenever no estimate lies :math:`z` standard errors below 0 (probability >= 95 %).
    solver, tol, max_iter
        MLE options.
    delta : float, optional
        Direct encoding: the channel's gap :math:`\\delta` as the mechanism holds it (default
        ``p*[0] - q*[0]``, which can differ from it in the last bit).
    targets : array_like of int, optional
        ``"recover"``: the items suspected to be promoted.

    Returns
    -------
    Estimate
        The variance is the i.i.d.-model variance of the unbiased estimator,
        :math:`m_y(1-m_y)/(n(p^*_y-q^*_y)^2)`, at the observed ``m = C/n`` for ``"unbiased"``
        and ``"norm_sub"`` (for the latter it describes the estimate before projection) and at
        the fitted ``m`` for ``"mle"`` (the inverse Fisher information of an interior optimum,
        where MLE and inversion coincide).
    """
    if solver not in SOLVERS:
        raise EstimationError(f"unknown solver {solver!r}; choose one of {SOLVERS}")
    check_method(method, COUNT_METHODS, "estimate_counts")
    p_star, q_star = support
    raw = invert(counts, n, p_star, q_star)
    if method == "unbiased":
        return _result(raw, counts / n, n, support, domain, method, on_simplex=False)
    if method == "recover":
        var = plugin_variance(counts / n, n, p_star, q_star)
        freq, var, info = recover(raw, var, support, family, float(counts.sum() / n), targets)
        return Estimate(freq, var, n, method, domain, 0, True, info, True)
    if method == "norm_sub":
        freq, rounds = norm_sub(raw)
        return _result(freq, counts / n, n, support, domain, method, iterations=rounds)
    if family == "unary":
        if solver == "em":
            raise EstimationError("solver='em' applies to direct encoding; unary MLE uses its exact KKT solver")
        freq, steps = mle_unary(counts, n, p_star, q_star)
        info = {"solver": "kkt-bisection", "log_likelihood": log_likelihood_unary(counts, n, p_star, q_star, freq)}
        return _result(freq, None, n, support, domain, method, iterations=steps, info=info)
    gap = float(p_star[0] - q_star[0]) if delta is None else float(delta)
    return _mle_direct(raw, counts, n, support, gap, domain, solver, tol, max_iter)


def _mle_direct(
    raw: np.ndarray,
    counts: np.ndarray,
    n: int,
    support: tuple[np.ndarray, np.ndarray],
    delta: float,
    domain: Domain,
    solver: str,
    tol: float,
    max_iter: int,
) -> Estimate:
    """The direct-encoding MLE, exact (KKT) or by EM on the channel ``Q = 1 q^T + delta I``."""
    _, q_star = support
    iterations, converged = 0, True
    if solver == "em":
        channel = np.tile(q_star, (q_star.size, 1))
        channel[np.diag_indices(q_star.size)] += delta
        start = 0.99 * norm_sub(raw)[0] + 0.01 / q_star.size  # interior: EM cannot revive a zero
        freq, iterations, converged = ibu(channel, counts, start, tol, max_iter)
    else:
        freq = mle_direct(counts, q_star, delta)
    info = {
        "solver": "em" if solver == "em" else "exact",
        "log_likelihood": log_likelihood_direct(counts, q_star, delta, freq),
    }
    return _result(freq, None, n, support, domain, "mle", iterations=iterations, converged=converged, info=info)


def _result(
    freq: np.ndarray,
    m: np.ndarray | None,
    n: int,
    support: tuple[np.ndarray, np.ndarray],
    domain: Domain,
    method: str,
    *,
    on_simplex: bool = True,
    iterations: int = 0,
    converged: bool = True,
    info: dict[str, Any] | None = None,
) -> Estimate:
    """An :class:`Estimate` with the plug-in variance at ``m`` (default: the fitted ``m``)."""
    p_star, q_star = support
    freq = np.asarray(freq, dtype=float)
    if m is None:
        m = q_star + (p_star - q_star) * freq
    var = plugin_variance(np.asarray(m, dtype=float), n, p_star, q_star)
    return Estimate(freq, var, n, method, domain, iterations, converged, info or {}, on_simplex)
