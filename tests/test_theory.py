"""Closed forms of pldp.theory against the paper's formulas by hand, the exact worst case and Monte Carlo.

The direct mechanisms run on the 2^-32 grid: their ``q`` and ``delta`` are the textbook ones rounded
towards more privacy by a few steps of 2^-32 (``assert_grid_channel``). So the paper's formulas are
checked tightly at the mechanism's own parameters (``r_y = q_y / delta``, ``S = delta``: Li et al.
Sec. 5.3 read backwards) and against the textbook budgets to the tolerance the grid implies
(``grid_rtol``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

import pldp
from pldp import theory
from tests.conftest import assert_grid_channel, fig1_budgets, grid_rtol, zipf_iprr
from tests.tolerances import FLOAT_RTOL, SUM_RTOL


def _r_and_s(eps: np.ndarray) -> tuple[np.ndarray, float]:
    """Li et al.'s r and S from the budgets (the textbook channel)."""
    r = np.where(np.isfinite(eps), 1.0 / (np.exp(eps) - 1.0), 0.0)
    return r, 1.0 / (1.0 + r.sum())


class _Textbook:
    """The real-valued IPRR channel of the budgets (Li et al. Sec. 5.3), off the grid: what the
    theorems are about. Only ``d`` and ``support`` are needed by ``theory.worst_case``."""

    def __init__(self, budgets: pldp.ItemBudgets) -> None:
        r, s = _r_and_s(budgets.epsilons)
        self.d = budgets.d
        self.support = (r * s + s, r * s)


def _grid_r_and_s(mech: pldp.DirectEncoding) -> tuple[np.ndarray, float]:
    """r and S of the channel the mechanism runs: q_y = r_y S and delta = S, so r = q / delta."""
    assert_grid_channel(mech)
    return mech.q / mech.delta, mech.delta


def test_expected_losses_match_eq13_and_eq14() -> None:
    mech, counts = zipf_iprr()
    n, p = int(counts.sum()), counts / counts.sum()
    # at the channel's own r and S: the same closed form, rounding only (measured 1 eps)
    for (r, s), rtol in ((_grid_r_and_s(mech), SUM_RTOL), (_r_and_s(mech.budgets.epsilons), grid_rtol(mech))):
        f = (p + r) * (1 / s - (p + r))  # Li et al. Definition 6
        assert theory.expected_l2(mech, p, n) == pytest.approx(f.sum() / n, rel=rtol)
        l1 = math.sqrt(2 / (n * math.pi)) * np.sqrt(f).sum()
        assert theory.expected_l1(mech, p, n) == pytest.approx(l1, rel=rtol)


def test_fixed_population_formula_of_errata_ipprr1() -> None:
    mech, counts = zipf_iprr()
    n = int(counts.sum())
    Q = mech.channel()
    s = mech.delta
    by_hand = sum(counts[x] * Q[x] * (1 - Q[x]) for x in range(mech.d)).sum() / (n * s) ** 2
    assert theory.expected_l2(mech, counts / n, n, model="fixed") == pytest.approx(by_hand, rel=SUM_RTOL)


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
    # at the channel's own r and S (to rounding: the water-filling is exact, brentq_level is within
    # 1e-15 + 4 eps lambda of the level; measured 1.5 eps), and at the budgets' (to the grid's rounding)
    for (r, s), rtol in ((_grid_r_and_s(mech), SUM_RTOL), (_r_and_s(e), grid_rtol(mech))):
        # p*_x = max(lambda - r_x, 0) (ERRATA IPRR-3), summing to one
        lam = brentq_level(r)
        np.testing.assert_allclose(wc.p, np.maximum(lam - r, 0), rtol=0, atol=max(SUM_RTOL, rtol * r.max()))
        # eq. 19 written out
        dstar = wc.p > 0
        s_star = 1 / (1 + r[dstar].sum())
        eq19 = (1 / s**2 - 1 / (dstar.sum() * s_star**2) - np.sum(r[~dstar] ** 2)) / n
        assert wc.l2 == pytest.approx(eq19, rel=rtol)
    assert wc.l2 == pytest.approx(theory.expected_l2(mech, wc.p, n), rel=FLOAT_RTOL)
    assert wc.l1 == pytest.approx(theory.expected_l1(mech, wc.p, n), rel=FLOAT_RTOL)
    # no other distribution does worse (random points and a numerical optimiser): the worst case is
    # exact, so any value at a point of the simplex is at most it, up to rounding (Nelder-Mead's
    # result is such a value, whatever its stopping rule)
    rng = np.random.default_rng(0)
    for p in rng.dirichlet(np.ones(e.size) * 0.5, size=2000):
        assert theory.expected_l2(mech, p, n) <= wc.l2 * (1 + SUM_RTOL)
        assert theory.expected_l1(mech, p, n) <= wc.l1 * (1 + SUM_RTOL)
    res = optimize.minimize(
        lambda z: -theory.expected_l2(mech, np.exp(z) / np.exp(z).sum(), n), np.zeros(e.size), method="Nelder-Mead"
    )
    assert -res.fun <= wc.l2 * (1 + SUM_RTOL)


def brentq_level(r: np.ndarray) -> float:
    """The water level by scipy's brentq, an independent reference: it stops within xtol + 4 eps
    lambda (about 1e-14 here) of the root, whatever scipy's release."""
    from scipy.optimize import brentq

    return brentq(lambda lam: np.maximum(lam - r, 0).sum() - 1.0, 0.0, r.max() + 2.0, xtol=1e-15)


def _cauchy_schwarz_l1(eps: np.ndarray, n: int) -> float:
    """The l1 this module returned before: eq. 22 with the square root of ERRATA IPRR-2, which
    is only the Cauchy-Schwarz upper bound taken in the proof (B.5), not the limit."""
    double = sum(1 / (a * c) for i, a in enumerate(eps) for j, c in enumerate(eps) if i != j)
    return math.sqrt(2 * eps.size / (n * math.pi)) * math.sqrt(double)


def test_high_privacy_losses_are_the_theorem5_limit_written_out() -> None:
    """l2 = (1/n) sum_{x != x'} 1/(eps eps') (eq. 21); l1 = sqrt(2/(n pi)) sum_x sqrt(r_x (R - r_x))
    with r = 1/eps; for one budget both are the URR values Li et al. quote from [28]."""
    e = np.array([1.0, 4.0, 16.0, 64.0]) * 1e-3
    n = 500
    l2, l1 = theory.high_privacy_losses(pldp.ItemBudgets.from_array([*e, np.inf]), n)
    double = sum(1 / (a * c) for i, a in enumerate(e) for j, c in enumerate(e) if i != j)
    assert l2 == pytest.approx(double / n, rel=FLOAT_RTOL)
    r = 1 / e
    by_hand = math.sqrt(2 / (n * math.pi)) * sum(math.sqrt(x * (r.sum() - x)) for x in r)
    assert l1 == pytest.approx(by_hand, rel=FLOAT_RTOL)
    # URR (one budget on D_S): |D_S|(|D_S|-1)/(n eps^2) and sqrt(2/(n pi)) |D_S| sqrt(|D_S|-1)/eps
    u = pldp.ItemBudgets.from_array([1e-3] * 4 + [np.inf] * 2)
    l2u, l1u = theory.high_privacy_losses(u, n)
    assert l2u == pytest.approx(4 * 3 / (n * 1e-6), rel=FLOAT_RTOL)
    assert l1u == pytest.approx(math.sqrt(2 / (n * math.pi)) * 4 * math.sqrt(3) / 1e-3, rel=FLOAT_RTOL)


@pytest.mark.parametrize("mech", [pldp.OUE(1.0, 5), pldp.RAPPOR(2.0, 7)], ids=repr)
def test_worst_case_of_unary_encoding_with_one_gap(mech: pldp.UnaryEncoding) -> None:
    """OUE and RAPPOR (one gap, i.i.d.): the water-filling over sum(m) = d q + gap, here uniform,
    and no random distribution does worse (this used to raise IndexError)."""
    n = 1000
    wc = theory.worst_case(mech, n)
    np.testing.assert_allclose(wc.p, np.full(mech.d, 1 / mech.d), atol=1e-12)
    rng = np.random.default_rng(1)
    for p in rng.dirichlet(np.ones(mech.d) * 0.5, size=500):
        assert theory.expected_l2(mech, p, n) <= wc.l2 * (1 + SUM_RTOL)
        assert theory.expected_l1(mech, p, n) <= wc.l1 * (1 + SUM_RTOL)


@pytest.mark.parametrize(("base", "bound_gap"), [((1, 4, 16, 64), 0.09), ((1, 2, 3, 4), 0.012)])
def test_high_privacy_l1_is_the_worst_case_limit_not_the_cauchy_schwarz_bound(
    base: tuple[int, ...], bound_gap: float
) -> None:
    """At budgets 1e-3 * base (D_N empty) both losses agree with the exact worst case of
    Lemma 2 to well under 1 %, while the Cauchy-Schwarz bound is ``bound_gap`` or more above it."""
    e = np.array(base, dtype=float) * 1e-3
    n = 1000
    wc = theory.worst_case(pldp.IPRR(pldp.ItemBudgets.from_array(e)), n, model="iid")
    l2, l1 = theory.high_privacy_losses(pldp.ItemBudgets.from_array(e), n)
    assert abs(l2 / wc.l2 - 1) < 0.003  # the dropped terms are O(eps_max) = 0.2 % here
    assert abs(l1 / wc.l1 - 1) < 0.001
    assert _cauchy_schwarz_l1(e, n) / wc.l1 - 1 > bound_gap


def test_high_privacy_losses_converge_to_the_worst_case_at_their_rates() -> None:
    """With non-sensitive items (where the worst case then puts its mass) the relative error of
    l2 falls like eps_max and that of l1 like sqrt(eps_max) (the D_N term of the proof, B.5)."""
    base = np.array([1.0, 2.0, 3.0, 4.0, np.inf, np.inf])
    n = 500
    prev = (np.inf, np.inf)
    for scale in (1e-2, 1e-3, 1e-4, 1e-5):
        b = pldp.ItemBudgets.from_array(base * scale)
        # the limit is a statement about the real-valued channel: at scale 1e-5 the grid channel's
        # worst case is off it by ~1e-4 (its rounding, grid_rtol), more than the rate's 7e-6
        mech = pldp.IPRR(b)
        wc = theory.worst_case(_Textbook(b), n)
        assert theory.worst_case(mech, n).l2 == pytest.approx(wc.l2, rel=grid_rtol(mech))
        assert np.all(wc.p[4:] == 0.5)  # D* = D_N
        l2, l1 = theory.high_privacy_losses(b, n)
        rel = (abs(l2 / wc.l2 - 1), abs(l1 / wc.l1 - 1))
        assert rel[0] < prev[0] and rel[1] < prev[1]
        prev = rel
        # measured: 0.18 eps_max and 0.30 sqrt(eps_max); the Cauchy-Schwarz l1 tends to +1.35 % instead
        assert rel[0] < 1.0 * scale * base[3]
        assert rel[1] < 0.5 * math.sqrt(scale * base[3])


def test_high_privacy_losses_match_monte_carlo() -> None:
    """Users drawn i.i.d. from the worst case p* of 4 sensitive items with budgets
    1e-3 * (1, 4, 16, 64), n = 100,000: the mean l1 and l2 of the unbiased estimator over 20,000
    count-level trials lie within K = 4 standard errors of ``high_privacy_losses``, while the
    Cauchy-Schwarz l1 is more than 20 SE away (10 % of l1, about 27 SE)."""
    k = 4.0
    e = np.array([1.0, 4.0, 16.0, 64.0]) * 1e-3
    budgets = pldp.ItemBudgets.from_array(e)
    mech, n, trials = pldp.IPRR(budgets), 100_000, 20_000
    wc = theory.worst_case(mech, n, model="iid")
    rng = np.random.default_rng(31)
    true_counts = rng.multinomial(n, wc.p, size=trials)
    est = np.array([pldp.estimate(mech, mech.simulate(c, rng), "unbiased").frequencies for c in true_counts])
    l1_loss = np.abs(est - wc.p).sum(axis=1)
    l2_loss = ((est - wc.p) ** 2).sum(axis=1)
    se1 = l1_loss.std(ddof=1) / math.sqrt(trials)  # 0.38 % of l1
    se2 = l2_loss.std(ddof=1) / math.sqrt(trials)  # 0.8 % of l2
    l2, l1 = theory.high_privacy_losses(budgets, n)
    assert abs(l1_loss.mean() - l1) < k * se1, (l1_loss.mean() - l1) / se1
    assert abs(l2_loss.mean() - l2) < k * se2, (l2_loss.mean() - l2) / se2
    assert abs(l1_loss.mean() - _cauchy_schwarz_l1(e, n)) > 20 * se1  # power: the old l1 is rejected


def test_low_privacy_regime_theorem6_with_errata() -> None:
    n = 1000
    b = pldp.ItemBudgets.from_array([6.0, 7.0, 8.0, np.inf])
    assert theory.low_privacy_is_exact(b)
    wc = theory.worst_case(_Textbook(b), n)  # of the real-valued channel: the theorem's
    l2, l1 = theory.low_privacy_losses(b, n)
    assert l2 == pytest.approx(wc.l2, rel=SUM_RTOL)  # with the 1/n of ERRATA IPRR-3 (closed forms: rounding only)
    assert l1 == pytest.approx(wc.l1, rel=SUM_RTOL)
    mech = pldp.IPRR(b)  # the grid channel's worst case: the same to its rounding (2.8e-6 here)
    wc_grid = theory.worst_case(mech, n)
    assert (wc_grid.l2, wc_grid.l1) == pytest.approx((wc.l2, wc.l1), rel=grid_rtol(mech))
    np.testing.assert_array_equal(wc_grid.support, wc.support)
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
    # to the grid's rounding (about 5e-8 here); at the mechanism's own p and q to rounding error
    rtol = grid_rtol(mech)
    np.testing.assert_allclose(theory.item_variance(mech, f, n, model="fixed"), wang, rtol=rtol)
    np.testing.assert_allclose(theory.item_variance(mech, f, n, model="iid"), wang + f * (1 - f) / n, rtol=rtol)
    assert_grid_channel(mech)
    pk, qk = mech.diagonal[0], mech.q[0]
    own = qk * (1 - qk) / (n * (pk - qk) ** 2) + f * (1 - pk - qk) / (n * (pk - qk))
    np.testing.assert_allclose(theory.item_variance(mech, f, n, model="fixed"), own, rtol=FLOAT_RTOL)
    np.testing.assert_allclose(theory.item_variance(mech, f, n, model="iid"), own + f * (1 - f) / n, rtol=FLOAT_RTOL)


def test_iprr_beats_urr_at_eps_min_lemma1() -> None:
    """Lemma 1: with budgets >= eps_min the loss of IPRR is below URR's at eps_min."""
    mech = pldp.IPRR(fig1_budgets())
    urr = pldp.URR(0.1, fig1_budgets().sensitive)
    rng = np.random.default_rng(1)
    for p in rng.dirichlet(np.ones(5), size=200):
        assert theory.expected_l2(mech, p, 100) < theory.expected_l2(urr, p, 100)
