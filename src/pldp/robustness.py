"""Robustness to fake users in closed form: how far a fake report moves an unbiased estimate.

A collector cannot tell a fake report from a real one (Cao, Jia, Gong, USENIX Security 2021).
For a pure frequency oracle with per-item support probabilities :math:`p_x` (a report of ``x``
supports ``x``) and :math:`q_x` (a report of another item supports ``x``), the unbiased
estimate from ``n`` reports is :math:`\\hat f_x = (C_x/n - q_x)/(p_x - q_x)`, so one report that
supports ``x`` rather than a typical one moves it by

.. math::

    g_x = \\frac{1 - q_x}{n\\,(p_x - q_x)} \\quad\\text{(at most; at least } -q_x/(n(p_x-q_x))\\text{)},

the *per-fake gain* (:func:`per_fake_gain`, in units of :math:`1/n`). It grows like
:math:`1/(p_x - q_x)`: a budget that makes an item's gap small, as personalized mechanisms do for
their most sensitive items (IDUE) or for every item at once (IPRR, whose common gap is
:math:`S = 1/(1 + \\sum_y r_y)` with :math:`r_y = 1/(e^{\\varepsilon_y} - 1)`), makes every fake
report count for more. :func:`amplification` compares it with the uniform mechanism of the same
family at the same mean budget (:func:`uniform_counterpart`).

Expected gain of an attack. ``m`` fake users join ``n`` honest ones (:math:`\\beta = m/(n+m)`);
each fake report supports target ``t`` with probability :math:`s_t`. For the unbiased estimator,
the estimate with the fakes minus the estimate without them is, exactly,
:math:`\\beta(\\bar S - \\hat f_t)` per target with :math:`\\bar S` the fakes' mean of
:math:`(1[\\text{supports } t] - q_t)/(p_t - q_t)`, so the expected frequency gain of the targets
``T`` is

.. math::

    G = \\beta \\Big(\\sum_{t \\in T} \\frac{s_t - q_t}{p_t - q_t} - f_T\\Big)

(:func:`support_gain`). Cao et al.'s maximal gain attack (MGA) reports a target (k-RR:
:math:`s_t = 1/r` for ``r`` targets) or sets every target bit (OUE: :math:`s_t = 1`), which gives
their closed forms (:func:`krr_mga_gain`, :func:`oue_mga_gain`); input poisoning (the honest
randomizer on a target) gives :math:`\\beta(1 - f_T)` for every pure oracle (:func:`input_gain`).

Protocols that combine per-level estimates :math:`\\hat f = \\sum_\\ell w_\\ell \\hat f_\\ell` (RCF,
APLDP, MPLDP) let a fake choose its level: at level :math:`\\ell` with :math:`n_\\ell` users it moves
the combination by :math:`w_\\ell g_{\\ell}` with :math:`g_\\ell = (1 - q_\\ell)/(n_\\ell(p_\\ell - q_\\ell))`
(:func:`level_gains`); :func:`combined_gain` is the exact expected gain with weights recomputed
from the level sizes with the fakes.

References
----------
Cao, Jia, Gong. Data Poisoning Attacks to Local Differential Privacy Protocols, USENIX Security
2021 (MGA, Theorems for k-RR and OUE). Wang, Blocki, Li, Jha. Locally Differentially Private
Protocols for Frequency Estimation, USENIX Security 2017 (pure protocols).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pldp._validation import check_epsilon, check_int, check_probability
from pldp.errors import ParameterError
from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.direct import KRR
from pldp.mechanisms.unary import OUE

__all__ = [
    "amplification",
    "combined_gain",
    "fake_shift",
    "input_gain",
    "krr_mga_gain",
    "level_gains",
    "mean_budget",
    "oue_mga_gain",
    "per_fake_gain",
    "support_gain",
    "uniform_counterpart",
]


def fake_shift(p_star: Any, q_star: Any) -> np.ndarray:
    """:math:`(1 - q)/(p - q)`: how far one report supporting an item moves its unbiased estimate
    (times ``n``), from support probabilities ``p_star`` and ``q_star`` (arrays of one shape)."""
    p = np.asarray(p_star, dtype=float)
    q = np.asarray(q_star, dtype=float)
    if p.shape != q.shape or np.any(~(p > q)):
        raise ParameterError("need p_star > q_star item by item (arrays of one shape)")
    return (1.0 - q) / (p - q)


def per_fake_gain(mechanism: Mechanism) -> np.ndarray:
    """Per item, the largest move of its unbiased estimate one fake report can cause, times ``n``.

    :math:`(1 - q_x)/(p_x - q_x)`: for direct encoding (KRR, URR, IPRR) :math:`1/\\delta - r_x`
    with the common gap :math:`\\delta`; for unary encoding (RAPPOR, OUE, IDUE)
    :math:`(1 - b_x)/(a_x - b_x)`.

    Examples
    --------
    >>> import numpy as np, pldp
    >>> round(float(per_fake_gain(pldp.KRR(1.0, 16))[0]), 4)  # (e + 14) / (e - 1)
    9.7297
    >>> round(float(per_fake_gain(pldp.OUE(1.0, 16))[0]), 4)  # 2e / (e - 1)
    3.164
    """
    return fake_shift(*mechanism.support)


def mean_budget(mechanism: Mechanism) -> float:
    """The mean of the finite budgets of a mechanism (non-sensitive items left out)."""
    eps = mechanism.budgets.epsilons
    return float(eps[np.isfinite(eps)].mean())


def uniform_counterpart(mechanism: Mechanism) -> Mechanism:
    """The uniform mechanism a personalized one is compared with: same family and domain, the mean budget.

    Direct encoding: ``KRR(mean, domain)``; unary encoding: ``OUE(mean, domain)`` (the uniform unary
    encoding of least variance, Wang et al. 2017). A mechanism whose items share one budget and is
    already of that kind (KRR, OUE) is its own counterpart; basic RAPPOR is compared with OUE.
    """
    eps = mean_budget(mechanism)
    return KRR(eps, mechanism.domain) if mechanism.family == "direct" else OUE(eps, mechanism.domain)


def amplification(mechanism: Mechanism) -> np.ndarray:
    """Per item, :func:`per_fake_gain` over that of :func:`uniform_counterpart`: how many times more
    one fake report moves the item's estimate than under the uniform mechanism at the mean budget.

    Examples
    --------
    Budgets 1.0, 0.7, 0.4 and 0.1, four items each (mean 0.55): under IPRR every item's estimate
    moves further per fake report than under KRR at 0.55 (IPRR's common gap is small), the least
    sensitive item most (:math:`1/\\delta - r_x`); under IDUE (MinID-LDP, which binds every pair
    by its smaller budget) the most sensitive items' move 5.4 times as far as under OUE at 0.55,
    and even the least sensitive items' 3.75 times.

    >>> import numpy as np, pldp
    >>> b = pldp.ItemBudgets.from_array(np.repeat([1.0, 0.7, 0.4, 0.1], 4))
    >>> np.round(amplification(pldp.IPRR(b))[[0, -1]], 2).tolist()
    [2.46, 2.05]
    >>> np.round(amplification(pldp.IDUE(b))[[0, -1]], 2).tolist()
    [3.75, 5.4]
    """
    return per_fake_gain(mechanism) / per_fake_gain(uniform_counterpart(mechanism))


def _beta(beta: float) -> float:
    b = check_probability(beta, "beta")
    if b >= 1.0:
        raise ParameterError(f"beta must be below 1 (some honest users), got {beta!r}")
    return b


def support_gain(p_star: Any, q_star: Any, support: Any, targets: Any, beta: float, f_targets: float) -> float:
    """:math:`\\beta(\\sum_{t \\in T} (s_t - q_t)/(p_t - q_t) - f_T)`: the expected frequency gain of
    the targets when a share ``beta`` of all reports are fake (module docstring).

    Parameters
    ----------
    p_star, q_star : array_like, shape (d,)
        Support probabilities of the oracle the server estimates with.
    support : array_like, shape (d,)
        :math:`s_x`, the probability that a fake report supports ``x`` (only the targets' are read).
    targets : array_like of int
        The target items ``T``.
    beta : float
        :math:`m/(n+m)`, the share of fake reports.
    f_targets : float
        :math:`f_T`, the expected honest estimate of the targets' total frequency (their true
        frequency for an unbiased estimator).
    """
    t = np.asarray(targets, dtype=np.int64)
    p, q, s = (np.asarray(a, dtype=float) for a in (p_star, q_star, support))
    return _beta(beta) * (float(np.sum((s[t] - q[t]) / (p[t] - q[t]))) - float(f_targets))


def krr_mga_gain(epsilon: float, d: int, r: int, beta: float, f_targets: float) -> float:
    """Cao et al.'s expected gain of MGA against k-RR: :math:`\\beta(1 - f_T) + \\beta(d - r)/(e^\\varepsilon - 1)`.

    Each fake reports one of the ``r`` targets: :math:`s_t = 1/r`, and with
    :math:`p = e^\\varepsilon/(e^\\varepsilon + d - 1)`, :math:`q = 1/(e^\\varepsilon + d - 1)`,
    :math:`\\sum_t (1/r - q)/(p - q) = (e^\\varepsilon + d - 1 - r)/(e^\\varepsilon - 1)`.

    Examples
    --------
    The setting of the attacks page's best moves: :math:`\\varepsilon = 1`, 16 items, the rarest of
    Zipf(2) as target, 1 % fakes.

    >>> round(krr_mga_gain(1.0, 16, 1, 0.01, 0.00247), 4)
    0.0973
    """
    e = math.expm1(check_epsilon(epsilon))
    d = check_int(d, "d", 2)
    r = check_int(r, "r", 1)
    if r > d:
        raise ParameterError(f"r = {r} targets exceed the domain of {d} items")
    b = _beta(beta)
    return b * (1.0 - float(f_targets)) + b * (d - r) / e


def oue_mga_gain(epsilon: float, r: int, beta: float, f_targets: float) -> float:
    """Cao et al.'s expected gain of MGA against OUE: :math:`\\beta(2 r e^\\varepsilon/(e^\\varepsilon - 1) - f_T)`.

    Each fake sets every target bit: :math:`s_t = 1`, and with :math:`p = 1/2`,
    :math:`q = 1/(e^\\varepsilon + 1)`, :math:`(1 - q)/(p - q) = 2e^\\varepsilon/(e^\\varepsilon - 1)`.

    Examples
    --------
    >>> round(oue_mga_gain(1.0, 1, 0.01, 0.00247), 4)
    0.0316
    """
    e = check_epsilon(epsilon)
    r = check_int(r, "r", 1)
    return _beta(beta) * (2.0 * r * math.exp(e) / math.expm1(e) - float(f_targets))


def input_gain(beta: float, f_targets: float) -> float:
    """Expected gain of input poisoning (fakes run the honest randomizer on a target), :math:`\\beta(1 - f_T)`,
    for every pure oracle: its unbiased estimate counts each fake as one holder of a target."""
    return _beta(beta) * (1.0 - float(f_targets))


def level_gains(weights: Any, sizes: Any, p_star: Any, q_star: Any) -> np.ndarray:
    """Per level, the move of a combined estimate :math:`\\sum_\\ell w_\\ell \\hat f_\\ell` that one fake
    report at that level causes (to first order, the weights held fixed).

    :math:`w_\\ell (1 - q_\\ell) / (n_\\ell (p_\\ell - q_\\ell))`, for weights, level sizes and the levels'
    support probabilities (arrays of ``t`` entries, or ``(t, d)`` per item); ``inf`` for a level
    without users (a fake there is the level's only report).
    """
    w = np.asarray(weights, dtype=float)
    n = np.asarray(sizes, dtype=float)
    shift = fake_shift(p_star, q_star)
    n_b = n if n.ndim == shift.ndim else n.reshape(n.shape + (1,) * (shift.ndim - n.ndim))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n_b > 0, w * shift / np.where(n_b > 0, n_b, 1.0), np.inf)


def combined_gain(before: Any, after: Any, honest: Any, shift: Any, sizes: Any, fakes: Any, targets: Any) -> float:
    """Exact expected gain of a combination of per-level unbiased estimates whose weights depend
    only on the level sizes (RCF, APLDP, MPLDP's OC).

    With :math:`n_\\ell` honest and :math:`m_\\ell` fake users at level :math:`\\ell`,
    :math:`\\beta_\\ell = m_\\ell/(n_\\ell + m_\\ell)`, the level estimate with the fakes has mean
    :math:`(1 - \\beta_\\ell) f_\\ell + \\beta_\\ell S_\\ell`, so

    .. math::

        G = \\sum_{t \\in T} \\Big[\\sum_\\ell w'_\\ell\\big((1 - \\beta_\\ell) f_{\\ell t}
            + \\beta_\\ell S_{\\ell t}\\big)
            - \\sum_\\ell w_\\ell f_{\\ell t}\\Big].

    Parameters
    ----------
    before, after : array_like, shape (t,) or (t, d)
        The weights :math:`w` (honest sizes) and :math:`w'` (with the fakes).
    honest : array_like, shape (t, d)
        :math:`f_\\ell`, the honest users' item shares within each level (any row where
        :math:`n_\\ell = 0`).
    shift : array_like, shape (t, d)
        :math:`S_\\ell = (s_\\ell - q_\\ell)/(p_\\ell - q_\\ell)`, the mean standardized support of a
        fake report at level :math:`\\ell`.
    sizes, fakes : array_like, shape (t,)
        :math:`n_\\ell` and :math:`m_\\ell`.
    targets : array_like of int
    """
    n = np.asarray(sizes, dtype=float)
    m = np.asarray(fakes, dtype=float)
    f = np.asarray(honest, dtype=float)
    s = np.asarray(shift, dtype=float)
    t = np.asarray(targets, dtype=np.int64)
    total = n + m
    beta = np.divide(m, total, out=np.zeros_like(total), where=total > 0)[:, None]
    w0 = np.asarray(before, dtype=float)
    w1 = np.asarray(after, dtype=float)
    w0 = w0 if w0.ndim == 2 else np.broadcast_to(w0[:, None], f.shape)
    w1 = w1 if w1.ndim == 2 else np.broadcast_to(w1[:, None], f.shape)
    mean_after = np.where(total[:, None] > 0, (1.0 - beta) * f + beta * s, 0.0)
    return float(np.sum((w1 * mean_after)[:, t]) - np.sum((w0 * np.where(n[:, None] > 0, f, 0.0))[:, t]))
