"""Variance-weighted combination of independent group estimates.

Protocols that split users into groups (privacy levels) and estimate the item frequencies
separately in each group (RCF, APLDP, MPLDP) combine the ``G`` group estimates
:math:`\\hat f_g` linearly,

.. math::

    \\hat f = \\sum_{g=1}^G w_g \\hat f_g, \\qquad \\sum_g w_g = 1, \\qquad
    \\mathrm{Var}(\\hat f) = \\sum_g w_g^2 V_g,

where :math:`V_g = \\mathrm{Var}(\\hat f_g)` and the groups are independent (disjoint sets of
users). The weights that minimise the variance under the constraint are

.. math::

    w_g = \\frac{1 / V_g}{\\sum_h 1 / V_h}, \\qquad \\mathrm{Var}(\\hat f) = \\Big(\\sum_g 1/V_g\\Big)^{-1}

(Lagrange; every other choice of weights summing to one gives a larger variance). This is
Theorem 2 of MPLDP (Feng & Zhang, IEEE Access 2024, eq. 8-11): with basic RAPPOR ("BRR",
:math:`\\varepsilon_\\tau / 2` per bit) the variance of a level's frequency estimate is
:math:`V_\\tau = e^{\\varepsilon_\\tau/2} / (n_\\tau (e^{\\varepsilon_\\tau/2}-1)^2) = 1/D_\\tau`,
so :math:`w_\\tau = D_\\tau / \\sum D` with :math:`D_\\tau = n_\\tau (e^{\\varepsilon_\\tau/2}-1)^2 /
e^{\\varepsilon_\\tau/2}` and the combined count-scale MSE over :math:`k_i` items is
:math:`k_i n^2 / \\sum_\\tau D_\\tau` (eq. 11). Nie et al.'s RCF (TKDE 2019) combines its groups
by the same principle.

Unbiasedness. If every :math:`\\hat f_g` is unbiased and the weights do not depend on the
reports (e.g. they are computed from ``n_g`` and the budgets only, as
:func:`data_free_variance` does), the combination is unbiased, also when the ``n_g``
themselves are random, as long as the users' levels are independent of their items: then
:math:`E[\\hat f \\mid n_1, \\dots, n_G] = \\sum_g w_g f = f`. *Plug-in* variances that depend on
the estimates (e.g. :math:`\\hat m (1 - \\hat m) / (n \\delta^2)` at the observed support
frequency) correlate the weights with the estimates and bias the combination (a group whose
estimate of an item is low also reports a low variance for it and gets more weight); the bias
is of order :math:`1/n_g` and shows in small groups.

Variance models. The combined variance :math:`\\sum_g w_g^2 V_g` is exact for whatever model
the :math:`V_g` describe, given the group sizes. When the dataset is *fixed* and the users'
levels are assigned at random (the finite-population view of MPLDP, ERRATA MPLDP-1), the
group estimates are unbiased only for the items' shares *within* each group, and the split
itself adds the level-sampling term of :func:`level_sampling_variance`, which the caller adds
to the fixed-model group variances. When users are drawn i.i.d. from the population (the
model of :func:`pldp.estimate`'s variances) there is no such term.

References
----------
Feng, Zhang. MPLDP: Multi-Level Personalized Local Differential Privacy, IEEE Access 2024:
Lemma 1, Theorem 2 (eq. 8-18); ERRATA MPLDP-1. Nie, Yang, Huang, Xie, Zhao, Wang. A
Utility-Optimized Framework for Personalized Private Histogram Estimation, IEEE TKDE 31(4),
2019. Wang, Blocki, Li, Jha. Locally Differentially Private Protocols for Frequency
Estimation, USENIX Security 2017 (the variance :math:`q^*(1-q^*)/(n(p^*-q^*)^2)`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp._validation import _show
from pldp.errors import EstimationError, ParameterError

__all__ = [
    "combine",
    "combined_variance",
    "data_free_variance",
    "level_sampling_variance",
    "min_variance_weights",
]

#: Tolerance on ``sum(weights) == 1``.
_SUM_TOL = 1e-9


def _as_variances(variances: Any) -> np.ndarray:
    """``variances`` as a float array of shape (G,) or (G, d), every entry > 0 (``inf`` allowed)."""
    v = np.asarray(variances, dtype=float)
    if v.ndim not in (1, 2) or v.shape[0] == 0 or v.size == 0:
        raise ParameterError(f"variances must have shape (G,) or (G, d) with G >= 1, got shape {v.shape}")
    bad = np.isnan(v) | (v <= 0)
    if bad.any():
        raise ParameterError(
            f"variances must be > 0 (inf marks a group without information); bad entries: {_show(v[bad])}"
        )
    return v


def data_free_variance(mechanism: Any, n: int | float) -> np.ndarray:
    """Per-item variance of a pure mechanism's estimate that does not depend on the data.

    .. math:: V = \\frac{q^*(1-q^*)}{n\\,(p^* - q^*)^2}

    the variance of the unbiased estimate of an item that nobody holds (:math:`p_y = 0`), the
    usual approximate variance of Wang et al. (USENIX Security 2017): ``(e^eps + d - 2) /
    (n (e^eps - 1)^2)`` for KRR, ``4 e^eps / (n (e^eps - 1)^2)`` for OUE and
    ``e^(eps/2) / (n (e^(eps/2) - 1)^2)`` for basic RAPPOR (MPLDP's :math:`1/D_\\tau`). Weights
    computed from it keep a combination unbiased.

    Parameters
    ----------
    mechanism : Mechanism
        A pure mechanism (its ``support`` gives :math:`p^*, q^*` per item).
    n : int
        Number of users of the group (``0`` gives ``inf``: a group without information).

    Returns
    -------
    ndarray, shape (d,)
    """
    if not hasattr(mechanism, "support"):
        raise ParameterError(f"expected a pldp mechanism, got {type(mechanism).__name__}")
    n_f = float(n)
    if not n_f >= 0 or not np.isfinite(n_f):
        raise ParameterError(f"n must be a finite number >= 0, got {n!r}")
    p_star, q_star = mechanism.support
    per_user = q_star * (1.0 - q_star) / (p_star - q_star) ** 2
    if n_f == 0:
        return np.full(per_user.shape, np.inf)
    return per_user / n_f


def min_variance_weights(variances: Any) -> np.ndarray:
    """Weights proportional to ``1 / V_g``, normalised to sum to one.

    Parameters
    ----------
    variances : array_like, shape (G,) or (G, d)
        Variance of each group's estimate: one per group, or one per group and item (then
        the weights are computed per item, each column summing to one). ``inf`` marks a
        group without information (no users): its weight is 0.

    Returns
    -------
    ndarray
        Same shape as ``variances``.

    Raises
    ------
    ParameterError
        A NaN, zero or negative variance, or a wrong shape.
    EstimationError
        Every group has infinite variance (for some item): nothing to combine.

    Examples
    --------
    >>> min_variance_weights([1.0, 3.0, np.inf]).tolist()
    [0.75, 0.25, 0.0]
    """
    v = _as_variances(variances)
    precision = 1.0 / v  # inf -> 0
    total = precision.sum(axis=0)
    empty = total == 0
    if np.any(empty):
        where = "" if v.ndim == 1 else f" for items {_show(np.flatnonzero(empty))}"
        raise EstimationError(f"every group has infinite variance{where}: no group holds information")
    return precision / total


def combined_variance(weights: Any, variances: Any) -> np.ndarray:
    """:math:`\\sum_g w_g^2 V_g` (independent groups); a group of weight 0 adds nothing, even with ``V = inf``.

    ``weights`` and ``variances`` have shape (G,) or (G, d) (broadcast against each other).
    Returns a scalar array for two 1-D inputs, else shape (d,).
    """
    w = np.asarray(weights, dtype=float)
    v = _as_variances(variances)
    w, v = _broadcast_groups(w, v)
    with np.errstate(invalid="ignore"):
        terms = np.where(w != 0, w**2 * v, 0.0)
    return terms.sum(axis=0)


def _broadcast_groups(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Broadcast two (G,) / (G, d) arrays along the group axis (0)."""
    if a.ndim not in (1, 2) or b.ndim not in (1, 2) or a.shape[0] != b.shape[0]:
        raise ParameterError(
            f"group arrays must have shapes (G,) or (G, d) with the same G; got {a.shape} and {b.shape}"
        )
    if a.ndim == 1 and b.ndim == 2:
        a = a[:, None]
    elif b.ndim == 1 and a.ndim == 2:
        b = b[:, None]
    try:
        aa, bb = np.broadcast_arrays(a, b)
        return aa, bb
    except ValueError:
        raise ParameterError(f"group arrays do not broadcast: shapes {a.shape} and {b.shape}") from None


def combine(estimates: Any, weights: Any, variances: Any) -> tuple[np.ndarray, np.ndarray]:
    """Linear combination of independent group estimates and its variance.

    .. math::

        \\hat f = \\sum_g w_g \\hat f_g, \\qquad \\mathrm{Var}(\\hat f) = \\sum_g w_g^2 V_g

    Parameters
    ----------
    estimates : array_like, shape (G, d)
        One estimate per group (row). Rows of groups with weight 0 are ignored and may hold
        NaN (e.g. a group without users).
    weights : array_like, shape (G,) or (G, d)
        Weights summing to one over the groups (per item when 2-D); see
        :func:`min_variance_weights`. Negative weights are accepted (the combination stays
        unbiased) but the minimum-variance weights are never negative.
    variances : array_like, shape (G,) or (G, d)
        Variance of each group's estimate (``inf`` allowed where the weight is 0).

    Returns
    -------
    (ndarray, ndarray)
        The combined estimate and its variance, each of shape (d,).

    Raises
    ------
    ParameterError
        Shapes that do not match, weights that do not sum to one, or a non-finite estimate
        with non-zero weight.

    Examples
    --------
    >>> f, v = combine([[0.2, 0.8], [0.4, 0.6]], [0.75, 0.25], [1e-4, 3e-4])
    >>> np.round(f, 12).tolist(), np.round(v, 12).tolist()
    ([0.25, 0.75], [7.5e-05, 7.5e-05])
    """
    est = np.asarray(estimates, dtype=float)
    if est.ndim != 2 or est.shape[0] == 0:
        raise ParameterError(f"estimates must have shape (G, d), got {est.shape}")
    w = np.asarray(weights, dtype=float)
    if w.shape not in ((est.shape[0],), est.shape):
        raise ParameterError(f"weights must have shape ({est.shape[0]},) or {est.shape}, got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ParameterError(f"weights must be finite, got {_show(w.reshape(-1))}")
    total = w.sum(axis=0)
    if np.any(np.abs(total - 1.0) > _SUM_TOL):
        raise ParameterError(
            f"weights must sum to one over the groups (unbiasedness); they sum to {_show(np.atleast_1d(total))}"
        )
    w2 = w if w.ndim == 2 else np.broadcast_to(w[:, None], est.shape)
    used = w2 != 0
    if np.any(used & ~np.isfinite(est)):
        rows = np.unique(np.nonzero(used & ~np.isfinite(est))[0])
        raise ParameterError(f"groups {_show(rows)} have non-zero weight but non-finite estimates")
    freq = np.where(used, w2 * np.where(used, est, 0.0), 0.0).sum(axis=0)
    var = combined_variance(w2, _expand(variances, est.shape))
    return freq, var


def _expand(variances: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Variances of shape (G,) or (G, d) -> (G, d)."""
    v = _as_variances(variances)
    if v.shape not in ((shape[0],), shape):
        raise ParameterError(f"variances must have shape ({shape[0]},) or {shape}, got {v.shape}")
    return np.broadcast_to(v[:, None], shape) if v.ndim == 1 else v


def level_sampling_variance(frequencies: Any, weights: Any, sizes: Any) -> np.ndarray:
    """Extra variance of a combination when a *fixed* dataset is split into levels at random.

    With ``n`` users of whom a share :math:`f_j` hold item ``j``, split uniformly at random into
    groups of sizes :math:`n_g` (independently of the items), the group estimates are unbiased
    for the items' shares *within* the groups; the combination
    :math:`\\sum_g w_g \\hat f_g` therefore varies with the split by (ERRATA MPLDP-1, here on
    the frequency scale)

    .. math::

        \\mathrm{Var}_{\\text{split}} = \\frac{f_j (1 - f_j)}{n (n - 1)} \\sum_g n_g (c_g - 1)^2,
        \\qquad c_g = \\frac{n w_g}{n_g},

    the variance of a linear rank statistic under a random permutation. It vanishes when
    :math:`w_g = n_g / n` (the pooled estimate). Add it to the fixed-dataset variance
    :math:`\\sum_g w_g^2 V_g`; under the i.i.d.-users model there is no such term.

    Parameters
    ----------
    frequencies : array_like, shape (d,)
        Item shares :math:`f_j` (true or estimated).
    weights : array_like, shape (G,) or (G, d)
        Combination weights (summing to one; groups with ``n_g = 0`` must have weight 0).
    sizes : array_like of int, shape (G,)
        Group sizes :math:`n_g`, summing to ``n >= 2``.

    Returns
    -------
    ndarray, shape (d,)
    """
    f = np.asarray(frequencies, dtype=float)
    if f.ndim != 1:
        raise ParameterError(f"frequencies must be a vector, got shape {f.shape}")
    sz = np.asarray(sizes, dtype=float)
    if sz.ndim != 1 or np.any(~np.isfinite(sz)) or np.any(sz < 0):
        raise ParameterError(f"sizes must be a vector of group sizes >= 0, got {sizes!r}")
    n = float(sz.sum())
    if n < 2:
        raise ParameterError(f"the groups must hold at least 2 users, got {n:g}")
    w = np.asarray(weights, dtype=float)
    if w.shape not in ((sz.size,), (sz.size, f.size)):
        raise ParameterError(f"weights must have shape ({sz.size},) or ({sz.size}, {f.size}), got {w.shape}")
    w2 = w if w.ndim == 2 else np.broadcast_to(w[:, None], (sz.size, f.size))
    if np.any((sz == 0)[:, None] & (w2 != 0)):
        raise ParameterError("a group without users must have weight 0")
    nz = sz > 0
    c = n * w2[nz] / sz[nz, None]
    spread = np.sum(sz[nz, None] * (c - 1.0) ** 2, axis=0)
    fc = np.clip(f, 0.0, 1.0)
    return fc * (1.0 - fc) * spread / (n * (n - 1.0))
