"""Closed forms of pldp.theory against the paper's formulas, written out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

import pldp
from pldp import theory
from tests.conftest import fig1_budgets, zipf_iprr


def _r_and_s(eps: np.ndarray) -> tuple[np.ndarray, float]:
    r = np.where(np.isfinite(eps), 1.0 / (np.exp(eps) - 1.0), 0.0)
    return r, 1.0 / (1.0 + r.sum())


def test_expected_losses_match_eq13_and_eq14() -> None:
    mech, counts = zipf_iprr()
    n, p = int(counts.sum()), counts / counts.sum()
    r, s = _r_and_s(mech.budgets.epsilons)
    f = (p + r) * (1 / s - (p + r))  # Li et al. Definition 6
    assert theory.expected_l2(mech, p, n) == pytest.approx(f.sum() / n, rel=1e-10)
    assert theory.expected_l1(mech, p, n) == pytest.approx(math.sqrt(2 / (n * math.pi)) * np.sqrt(f).sum(), rel=1e-10)


def test_fixed_population_formula_of_errata_ipprr1() -> None:
    mech, counts = zipf_iprr()
    n = int(counts.sum())
    Q = mech.channel()
    s = mech.delta
    by_hand = sum(counts[x] * Q[x] * (1 - Q[x]) for x in range(mech.d)).sum() / (n * s) ** 2
    assert theory.expected_l2(mech, counts / n, n, model="fixed") == pytest.approx(by_hand, rel=1e-10)


@pytest.mark.parametrize(
    "eps",
    [
        [0.1, 0.5, 1.0, np.inf, np.inf],
        [1.1, 5.0, 5.0, np.inf, np.inf],
        [0.3] * 6,
        [0.05, 0.1, 2.0, 4.0, 8.0, np.inf],
        [8.0, 9.0, 10.0, np.inf],
    ],
)
def test_worst_case_is_the_maximizer_of_lemma2(eps: list[float]) -> None:
    e = np.array(eps)
    mech = pldp.IPRR(pldp.ItemBudgets.from_array(e))
    n = 1000
    wc = theory.worst_case(mech, n)
    r, s = _r_and_s(e)
    # p*_x = max(lambda - r_x, 0) (ERRATA IPRR-3), summing to one
    lam = brentq_level(r)
    np.testing.assert_allclose(wc.p, np.maximum(lam - r, 0), atol=1e-12)
    # eq. 19 written out
    dstar = wc.p > 0
    s_star = 1 / (1 + r[dstar].sum())
    eq19 = (1 / s**2 - 1 / (dstar.sum() * s_star**2) - np.sum(r[~dstar] ** 2)) / n
    assert wc.l2 == pytest.approx(eq19, rel=1e-9)
    assert wc.l2 == pytest.approx(theory.expected_l2(mech, wc.p, n), rel=1e-12)
    assert wc.l1 == pytest.approx(theory.expected_l1(mech, wc.p, n), rel=1e-12)
    # no other distribution does worse (random points and a numerical optimiser)
    rng = np.random.default_rng(0)
    for p in rng.dirichlet(np.ones(e.size) * 0.5, size=2000):
        assert theory.expected_l2(mech, p, n) <= wc.l2 * (1 + 1e-12)
        assert theory.expected_l1(mech, p, n) <= wc.l1 * (1 + 1e-12)
    res = optimize.minimize(
        lambda z: -theory.expected_l2(mech, np.exp(z) / np.exp(z).sum(), n), np.zeros(e.size), method="Nelder-Mead"
    )
    assert -res.fun <= wc.l2 * (1 + 1e-9)


def brentq_level(r: np.ndarray) -> float:
    from scipy.optimize import brentq

    return brentq(lambda lam: np.maximum(lam - r, 0).sum() - 1.0, 0.0, r.max() + 2.0, xtol=1e-15)


def test_high_privacy_regime_theorem5() -> None:
    """As eps_max -> 0 the worst-case l2 approaches (1/n) sum_{x != x'} 1/(eps eps')."""
    base = np.array([1.0, 2.0, 3.0, 4.0, np.inf, np.inf])
    n = 500
    prev = None
    for scale in (1e-1, 1e-2, 1e-3):
        b = pldp.ItemBudgets.from_array(base * scale)
        wc = theory.worst_case(pldp.IPRR(b), n)
        l2, l1 = theory.high_privacy_losses(b, n)
        rel = abs(l2 / wc.l2 - 1)
        assert prev is None or rel < prev
        prev = rel
    assert prev < 0.01
    e = base[:4] * 1e-3
    double = sum(1 / (a * c) for i, a in enumerate(e) for j, c in enumerate(e) if i != j)
    assert l2 == pytest.approx(double / n, rel=1e-12)
    assert l1 == pytest.approx(math.sqrt(2 * 4 / (n * math.pi)) * math.sqrt(double), rel=1e-12)
    # URR in the same regime (Murakami & Kawamoto via Li et al.): |D_S|(|D_S|-1) / (n eps^2)
    u = pldp.ItemBudgets.from_array([1e-3] * 4 + [np.inf] * 2)
    assert theory.high_privacy_losses(u, n)[0] == pytest.approx(4 * 3 / (n * 1e-6), rel=1e-12)


def test_low_privacy_regime_theorem6_with_errata() -> None:
    n = 1000
    b = pldp.ItemBudgets.from_array([6.0, 7.0, 8.0, np.inf])
    assert theory.low_privacy_is_exact(b)
    wc = theory.worst_case(pldp.IPRR(b), n)
    l2, l1 = theory.low_privacy_losses(b, n)
    assert l2 == pytest.approx(wc.l2, rel=1e-10)  # with the 1/n of ERRATA IPRR-3
    assert l1 == pytest.approx(wc.l1, rel=1e-10)
    np.testing.assert_allclose(wc.p[:3] > 0, True)
    # counter-example of ERRATA IPRR-3: eps_min > ln(|D_N| + 1) yet D* != D
    ce = pldp.ItemBudgets.from_array([1.1, 5.0, 5.0, np.inf, np.inf])
    assert min(ce.epsilons) > math.log(2 + 1)
    assert not theory.low_privacy_is_exact(ce)
    wc = theory.worst_case(pldp.IPRR(ce), n)
    assert not wc.support.all()
    assert theory.low_privacy_losses(ce, n)[0] > wc.l2 * 1.001  # the formula is not the worst case


def test_krr_variance_is_the_textbook_one() -> None:
    """Wang et al. (USENIX Security 2017): Var = q(1-q)/(n (p-q)^2) + f(1-p-q)/(n (p-q)) for a
    fixed population; drawing users i.i.d. adds the sampling term f(1-f)/n."""
    eps, d, n = 1.3, 9, 5000
    f = pldp.datasets.synthetic.zipf_probabilities(d)
    e = math.exp(eps)
    pk, qk = e / (e + d - 1), 1 / (e + d - 1)
    wang = qk * (1 - qk) / (n * (pk - qk) ** 2) + f * (1 - pk - qk) / (n * (pk - qk))
    mech = pldp.KRR(eps, d)
    np.testing.assert_allclose(theory.item_variance(mech, f, n, model="fixed"), wang, rtol=1e-12)
    np.testing.assert_allclose(theory.item_variance(mech, f, n, model="iid"), wang + f * (1 - f) / n, rtol=1e-12)


def test_iprr_beats_urr_at_eps_min_lemma1() -> None:
    """Lemma 1: with budgets >= eps_min the loss of IPRR is below URR's at eps_min."""
    mech = pldp.IPRR(fig1_budgets())
    urr = pldp.URR(0.1, fig1_budgets().sensitive)
    rng = np.random.default_rng(1)
    for p in rng.dirichlet(np.ones(5), size=200):
        assert theory.expected_l2(mech, p, 100) < theory.expected_l2(urr, p, 100)
