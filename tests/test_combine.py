"""Variance-weighted combination of group estimates (MPLDP Theorem 2, RCF, APLDP)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pldp
from pldp.estimation.combine import (
    combine,
    combined_variance,
    data_free_variance,
    level_sampling_variance,
    min_variance_weights,
)
from pldp.estimation.unbiased import invert, plugin_variance
from tests.conftest import grid_rtol
from tests.tolerances import FLOAT_RTOL, SUM_RTOL

K = 4.0  # Monte Carlo checks: a statistic may lie K standard errors from its expectation


def _z_of_variance(x: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """(sample variance - expected) / SE, the SE estimated from the replicates: sd((x - mean)^2) / sqrt(T)."""
    dev2 = (x - x.mean(axis=0)) ** 2
    return (x.var(axis=0, ddof=1) - expected) / (dev2.std(axis=0, ddof=1) / math.sqrt(x.shape[0]))


def test_weights_match_mpldp_theorem_2() -> None:
    """Theorem 2 (eq. 10-11) written out: three levels eps/3, eps/2, eps of basic RAPPOR (BRR),
    D_tau = n_tau (e^{eps_tau/2} - 1)^2 / e^{eps_tau/2}, w_tau = D_tau / sum D, and the
    count-scale MSE over k items is k n^2 / sum D."""
    eps, k = 3.0, 10
    levels = np.array([eps / 3, eps / 2, eps])
    n_tau = np.array([3000, 5000, 2000])
    n = n_tau.sum()
    e_half = np.exp(levels / 2)
    D = n_tau * (e_half - 1) ** 2 / e_half
    by_hand = D / D.sum()
    # from the closed-form BRR variance of a level's frequency estimate, 1 / D_tau
    v = e_half / (n_tau * (e_half - 1) ** 2)
    np.testing.assert_allclose(v, 1 / D, rtol=FLOAT_RTOL)
    np.testing.assert_allclose(min_variance_weights(v), by_hand, rtol=FLOAT_RTOL)
    np.testing.assert_allclose(combined_variance(by_hand, v), 1 / D.sum(), rtol=FLOAT_RTOL)
    assert k * n**2 * float(combined_variance(by_hand, v)) == pytest.approx(k * n**2 / D.sum(), rel=FLOAT_RTOL)
    # from the mechanisms themselves (a, b rounded to the coin grid, within 0.1 %: see pldp.mechanisms.unary)
    mech_v = np.stack([data_free_variance(pldp.RAPPOR(e, k), m) for e, m in zip(levels, n_tau, strict=True)])
    np.testing.assert_allclose(mech_v, np.repeat(v[:, None], k, axis=1), rtol=5e-3)
    w = min_variance_weights(mech_v)
    assert w.shape == (3, k)
    np.testing.assert_allclose(w, np.repeat(by_hand[:, None], k, axis=1), rtol=5e-3)
    np.testing.assert_allclose(w.sum(axis=0), 1.0, rtol=FLOAT_RTOL)
    # the plain sum of the level estimates (weights n_tau / n) is worse (MPLDP Fig. 3)
    assert combined_variance(n_tau / n, v) > 1.2 * combined_variance(by_hand, v)


def test_data_free_variance_closed_forms() -> None:
    """q(1-q)/(n delta^2): (e + d - 2)/(e - 1)^2 for KRR, 4e/(e - 1)^2 for OUE (Wang et al. 2017)."""
    e = math.exp(1.3)
    krr = pldp.KRR(1.3, 7)
    q, delta = krr.q[0], krr.delta  # on the 2^-32 grid
    np.testing.assert_allclose(data_free_variance(krr, 10), q * (1 - q) / delta**2 / 10, rtol=FLOAT_RTOL)
    # the textbook value to within the grid's rounding (q up by < 2 steps, delta down by < 14: ~3e-8 here)
    np.testing.assert_allclose(data_free_variance(krr, 10), (e + 5) / (e - 1) ** 2 / 10, rtol=grid_rtol(krr))
    oue = pldp.OUE(1.3, 7)
    b = oue.b[0]  # on the coin grid
    np.testing.assert_allclose(data_free_variance(oue, 10), b * (1 - b) / (0.5 - b) ** 2 / 10, rtol=FLOAT_RTOL)
    np.testing.assert_allclose(data_free_variance(oue, 10), 4 * e / (e - 1) ** 2 / 10, rtol=5e-3)
    assert np.all(np.isinf(data_free_variance(pldp.KRR(1.3, 7), 0)))


def test_minimum_variance_weights_are_optimal() -> None:
    """Any other convex weights give a larger combined variance (per group and per item)."""
    rng = np.random.default_rng(1)
    v = rng.uniform(0.5, 5.0, size=4)
    best = float(combined_variance(min_variance_weights(v), v))
    assert best == pytest.approx(1 / np.sum(1 / v), rel=FLOAT_RTOL)
    others = rng.dirichlet(np.ones(4), size=5000)
    assert np.all((others**2 * v).sum(axis=1) >= best * (1 - SUM_RTOL))
    # small perturbations along the simplex raise the variance to second order only
    w = min_variance_weights(v)
    for _ in range(100):
        step = rng.normal(size=4)
        step -= step.mean()
        assert combined_variance(w + 1e-3 * step, v) > best
    vm = rng.uniform(0.5, 5.0, size=(3, 6))
    wm = min_variance_weights(vm)
    bestm = combined_variance(wm, vm)
    for alt in rng.dirichlet(np.ones(3), size=500):
        assert np.all(combined_variance(alt, vm) >= bestm * (1 - SUM_RTOL))


def test_empty_groups_get_no_weight() -> None:
    w = min_variance_weights([2.0, np.inf, 2.0])
    assert w.tolist() == [0.5, 0.0, 0.5]
    est = np.array([[0.2, 0.8], [np.nan, np.nan], [0.4, 0.6]])
    f, var = combine(est, w, [1e-3, np.inf, 1e-3])
    np.testing.assert_allclose(f, [0.3, 0.7])
    np.testing.assert_allclose(var, [5e-4, 5e-4])
    with pytest.raises(pldp.EstimationError, match="infinite"):
        min_variance_weights([np.inf, np.inf])
    with pytest.raises(pldp.EstimationError, match="items"):
        min_variance_weights([[1.0, np.inf], [2.0, np.inf]])


def test_bad_input() -> None:
    with pytest.raises(pldp.ParameterError, match="> 0"):
        min_variance_weights([1.0, 0.0])
    with pytest.raises(pldp.ParameterError, match="> 0"):
        min_variance_weights([1.0, np.nan])
    with pytest.raises(pldp.ParameterError, match="shape"):
        min_variance_weights(np.ones((2, 2, 2)))
    with pytest.raises(pldp.ParameterError, match="sum to one"):
        combine(np.ones((2, 3)) / 3, [0.5, 0.6], [1.0, 1.0])
    with pytest.raises(pldp.ParameterError, match="weights must have shape"):
        combine(np.ones((2, 3)) / 3, [0.2, 0.3, 0.5], [1.0, 1.0])
    with pytest.raises(pldp.ParameterError, match="variances must have shape"):
        combine(np.ones((2, 3)) / 3, [0.5, 0.5], np.ones((2, 4)))
    with pytest.raises(pldp.ParameterError, match="non-finite"):
        combine([[np.nan, 1.0], [0.5, 0.5]], [0.5, 0.5], [1.0, 1.0])
    with pytest.raises(pldp.ParameterError, match="weight 0"):
        level_sampling_variance([0.5, 0.5], [0.5, 0.5], [0, 10])
    with pytest.raises(pldp.ParameterError, match="mechanism"):
        data_free_variance("KRR", 10)  # type: ignore[arg-type]


def test_combined_variance_matches_monte_carlo() -> None:
    """Fixed groups (KRR, OUE, RAPPOR at different budgets), data-free weights: the combination
    is unbiased and its variance is sum w^2 V_g with the exact fixed-population V_g (K SE per
    item); power check: the same check rejects the i.i.d. V_g."""
    d = 5
    p = np.array([0.4, 0.3, 0.15, 0.1, 0.05])
    mechs = [pldp.KRR(0.5, d), pldp.OUE(1.0, d), pldp.RAPPOR(2.5, d)]
    sizes = [2000, 3000, 1000]
    cells = [np.round(n * p).astype(int) for n in sizes]
    w = min_variance_weights(np.stack([data_free_variance(m, n) for m, n in zip(mechs, sizes, strict=True)]))
    v_true = np.stack([pldp.theory.item_variance(m, p, n, "fixed") for m, n in zip(mechs, sizes, strict=True)])
    rng = np.random.default_rng(2)
    trials = 3000
    out = np.empty((trials, d))
    for r in range(trials):
        est = [pldp.estimate(m, m.simulate(c, rng)).frequencies for m, c in zip(mechs, cells, strict=True)]
        out[r] = combine(np.array(est), w, v_true)[0]
    _, var = combine(np.zeros((3, d)), w, v_true)
    se = out.std(axis=0, ddof=1) / math.sqrt(trials)
    assert np.all(np.abs(out.mean(axis=0) - p) < K * se)
    assert np.max(np.abs(_z_of_variance(out, var))) < K
    # power: with the i.i.d. group variances (28 % more for the top item, 11 SE) the check fails
    v_iid = np.stack([pldp.theory.item_variance(m, p, n, "iid") for m, n in zip(mechs, sizes, strict=True)])
    assert np.max(np.abs(_z_of_variance(out, combine(np.zeros((3, d)), w, v_iid)[1]))) > K


def test_level_sampling_variance_matches_monte_carlo() -> None:
    """ERRATA MPLDP-1: a fixed dataset split at random into levels of fixed sizes; the exact
    within-group shares, combined with weights w, vary by f(1-f) sum n_g (c_g - 1)^2 / (n(n-1))
    (K SE); power check: the variance of independently sampled groups is rejected."""
    holders = np.array([300, 200, 100])  # n = 600 users, d = 3 items
    sizes = np.array([100, 200, 300])
    n = holders.sum()
    w = np.array([0.5, 0.3, 0.2])
    rng = np.random.default_rng(3)
    trials = 40_000
    rest = np.tile(holders, (trials, 1))
    combined = np.zeros((trials, 3))
    for g, size in enumerate(sizes):
        drawn = _hypergeometric_rows(rng, rest, size) if g < sizes.size - 1 else rest
        rest = rest - drawn
        combined += w[g] * drawn / size
    theory = level_sampling_variance(holders / n, w, sizes)
    assert np.all(np.abs(combined.mean(axis=0) - holders / n) < K * np.sqrt(theory / trials))
    assert np.max(np.abs(_z_of_variance(combined, theory))) < K
    # power: groups drawn independently (binomial within each group) would give 2.2x the variance
    f = holders / n
    assert np.min(np.abs(_z_of_variance(combined, f * (1 - f) * np.sum(w**2 / sizes)))) > K
    # the pooled estimate (w = n_g / n) has no level-sampling variance: zero up to the rounding of terms
    # of size 1e-3 (eps x 1e-3 = 2e-19)
    np.testing.assert_allclose(level_sampling_variance(holders / n, sizes / n, sizes), 0.0, atol=1e-18)


def _hypergeometric_rows(rng: np.random.Generator, colors: np.ndarray, size: int) -> np.ndarray:
    """One multivariate hypergeometric draw of ``size`` per row of ``colors`` (3 colours), vectorised."""
    first = rng.hypergeometric(colors[:, 0], colors[:, 1] + colors[:, 2], size)
    second = rng.hypergeometric(colors[:, 1], colors[:, 2], size - first)
    return np.stack([first, second, size - first - second], axis=1)


def test_plugin_weights_bias_the_combination_data_free_weights_do_not() -> None:
    """Small KRR groups, users i.i.d.: weights from the plug-in variances m(1-m)/(n delta^2)
    correlate with the estimates and bias the combination; data-free weights do not."""
    p = np.array([0.05, 0.15, 0.3, 0.5])
    mechs = [pldp.KRR(0.5, 4), pldp.KRR(2.0, 4)]
    sizes = [60, 60]
    rng = np.random.default_rng(4)
    trials = 40_000
    est, var = [], []
    for mech, n in zip(mechs, sizes, strict=True):
        p_star, q_star = mech.support
        counts = rng.multinomial(n, q_star + (p_star - q_star) * p, size=trials)  # i.i.d. users
        est.append(invert(counts, n, p_star, q_star))
        var.append(np.maximum(plugin_variance(counts / n, n, p_star, q_star), 1e-12))
    est, var = np.stack(est, axis=1), np.stack(var, axis=1)  # (trials, G, d)
    w_free = min_variance_weights(np.stack([data_free_variance(m, n) for m, n in zip(mechs, sizes, strict=True)]))
    free = np.sum(w_free[None] * est, axis=1)
    w_plug = (1 / var) / np.sum(1 / var, axis=1, keepdims=True)
    plug = np.sum(w_plug * est, axis=1)
    # the vectorised plug-in combination is the module's, trial by trial (the same formula: rounding only)
    np.testing.assert_allclose(plug[0], combine(est[0], min_variance_weights(var[0]), var[0])[0], rtol=FLOAT_RTOL)

    def z(x: np.ndarray) -> np.ndarray:
        return (x.mean(axis=0) - p) / (x.std(axis=0, ddof=1) / math.sqrt(trials))

    assert np.all(np.abs(z(free)) < K)
    assert np.max(np.abs(z(plug))) > 6  # power: the plug-in bias is detected
