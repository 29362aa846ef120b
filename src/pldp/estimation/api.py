"""``pldp.estimate``: one entry point for every estimator of a mechanism's tally."""

from __future__ import annotations

from typing import Literal

import numpy as np

from pldp.errors import EstimationError
from pldp.estimation.consistency import norm_sub
from pldp.estimation.mle import ibu, log_likelihood_direct, log_likelihood_unary, mle_direct, mle_unary
from pldp.estimation.result import Estimate
from pldp.estimation.unbiased import invert, plugin_variance
from pldp.mechanisms.base import Mechanism
from pldp.tally import Tally

__all__ = ["METHODS", "estimate"]

Method = Literal["unbiased", "norm_sub", "mle"]
METHODS: tuple[str, ...] = ("unbiased", "norm_sub", "mle")


def estimate(
    mechanism: Mechanism,
    tally: Tally,
    method: Method = "unbiased",
    *,
    solver: Literal["auto", "exact", "em"] = "auto",
    tol: float = 1e-10,
    max_iter: int = 100_000,
) -> Estimate:
    """Estimate the item distribution from a tally of ``mechanism``'s reports.

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism that produced the reports (its public parameters).
    tally : Tally
        The aggregated reports (:meth:`Mechanism.tally`, :meth:`Mechanism.simulate`, or a
        merge of several).
    method : {"unbiased", "norm_sub", "mle"}
        * ``"unbiased"``: the generic pure-protocol inversion
          :math:`\\hat f_y = (C_y/n - q^*_y)/(p^*_y - q^*_y)` (Li et al. eq. 12 for IPRR).
          Unbiased; entries may be negative; they sum to 1.
        * ``"norm_sub"``: Norm-Sub of Wang et al. (NDSS 2020) applied to the unbiased
          estimate: the Euclidean projection onto the probability simplex.
        * ``"mle"``: maximum likelihood. Direct encoding: the exact multinomial likelihood
          of the reports (Kairouz et al. 2016). Unary encoding: the count-based likelihood
          of independent binomials per bit (:func:`~pldp.estimation.mle.mle_unary`; counts
          are not sufficient for unary reports, so this is the standard approximation).
          For direct encoding the exact KKT solution is
          used (``solver="exact"``, no iterations); ``solver="em"`` runs the EM /
          iterative Bayesian update on the channel instead, started from the Norm-Sub
          estimate mixed with 1 % of the uniform distribution (an interior point); see
          :mod:`pldp.estimation.mle` for the stopping rule.
    solver, tol, max_iter
        MLE options.

    Returns
    -------
    Estimate
        Frequencies, counts, a per-item variance and confidence intervals. The variance
        is the i.i.d.-model variance of the unbiased estimator,
        :math:`m_y(1-m_y)/(n(p^*_y-q^*_y)^2)`, evaluated at the observed ``m = C/n`` for
        ``"unbiased"`` and ``"norm_sub"`` (for the latter it describes the estimate before
        projection) and at the fitted ``m`` for ``"mle"`` (the inverse Fisher information
        of an interior optimum, where MLE and inversion coincide).

    Raises
    ------
    EstimationError
        Unknown method, a tally of another family or size, or a tally with no reports.
    """
    from pldp.protocols.base import Protocol

    if isinstance(mechanism, Protocol):
        return mechanism.estimate(tally, method, solver=solver, tol=tol, max_iter=max_iter)
    if not isinstance(mechanism, Mechanism):
        raise EstimationError(f"expected a pldp mechanism, got {type(mechanism).__name__}")
    if not isinstance(tally, Tally):
        raise EstimationError(f"expected a Tally, got {type(tally).__name__}")
    if tally.kind != mechanism.family or tally.d != mechanism.d:
        raise EstimationError(
            f"a {tally.kind} tally over {tally.d} items does not fit {mechanism!r} "
            f"({mechanism.family}, d={mechanism.d})"
        )
    if tally.n <= 0:
        raise EstimationError("the tally holds no reports (n = 0)")
    if method not in METHODS:
        raise EstimationError(f"unknown method {method!r}; choose one of {METHODS}")
    if solver not in ("auto", "exact", "em"):
        raise EstimationError(f"unknown solver {solver!r}; choose 'auto', 'exact' or 'em'")

    p_star, q_star = mechanism.support
    n, counts = tally.n, tally.counts
    raw = invert(counts, n, p_star, q_star)
    iterations, converged, info = 0, True, {}
    if method == "unbiased":
        freq = raw
        m = counts / n
    elif method == "norm_sub":
        freq, iterations = norm_sub(raw)
        m = counts / n
    elif mechanism.family == "unary":
        if solver == "em":
            raise EstimationError("solver='em' applies to direct encoding; unary MLE uses its exact KKT solver")
        freq, iterations = mle_unary(counts, n, p_star, q_star)
        info["solver"] = "kkt-bisection"
        info["log_likelihood"] = log_likelihood_unary(counts, n, p_star, q_star, freq)
        m = q_star + (p_star - q_star) * freq
    else:
        q, delta = mechanism.q, mechanism.delta  # type: ignore[attr-defined]
        if solver == "em":
            start = 0.99 * norm_sub(raw)[0] + 0.01 / mechanism.d  # interior: EM cannot revive a zero
            freq, iterations, converged = ibu(mechanism.channel(), counts, start, tol, max_iter)
            info["solver"] = "em"
        else:
            freq = mle_direct(counts, q, delta)
            info["solver"] = "exact"
        info["log_likelihood"] = log_likelihood_direct(counts, q, delta, freq)
        m = q_star + (p_star - q_star) * freq
    var = plugin_variance(np.asarray(m, dtype=float), n, p_star, q_star)
    return Estimate(np.asarray(freq, dtype=float), var, n, method, mechanism.domain, iterations, converged, info)
