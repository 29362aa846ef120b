"""Unary encoding: RAPPOR, OUE, IDUE core - parameters, sampling, privacy, estimation, theory."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import pldp
from pldp.estimation.mle import log_likelihood_unary
from pldp.mechanisms.unary import UnaryEncoding, coin_width
from tests.tolerances import FLOAT_RTOL, SUM_RTOL

GRID = 2.0**-16  # the coarsest coin grid (see pldp.mechanisms.unary.coin_width)
K = 4.0  # Monte Carlo checks: a statistic may lie K standard errors from its expectation
#: A worst case found numerically (``maximize_on_simplex``: each p_i bisected to 2**-60, the multiplier
#: to 1e-15) against the value at any point of the simplex: the maximum is flat, so its value is exact
#: to rounding; 1e-9 is far above that and far below what a wrong maximizer loses.
SIMPLEX_RTOL = 1e-9


def test_rappor_and_oue_parameters_from_their_definitions() -> None:
    for eps in (0.01, 1.0, 5.0, 20.0):
        r, o = pldp.RAPPOR(eps, 7), pldp.OUE(eps, 7)
        a_r = math.exp(eps / 2) / (math.exp(eps / 2) + 1)
        np.testing.assert_allclose(r.a, a_r, atol=GRID)
        np.testing.assert_allclose(r.b, 1 - a_r, atol=GRID)
        np.testing.assert_allclose(o.a, 0.5, atol=0)
        np.testing.assert_allclose(o.b, 1 / (math.exp(eps) + 1), atol=GRID)
        # the implemented probabilities lie on the 2^-32 grid, a rounded down and b up
        for m in (r, o):
            step = 2.0 ** -coin_width(m.a, m.b)
            assert np.all(m.a / step == np.round(m.a / step)) and np.all(m.b / step == np.round(m.b / step))
        assert np.all(r.a <= a_r) and np.all(o.b >= 1 / (math.exp(eps) + 1))


@pytest.mark.parametrize("cls", [pldp.RAPPOR, pldp.OUE])
@pytest.mark.parametrize("eps", [1e-3, 0.5, 3.0, 20.0])
def test_rappor_and_oue_are_exactly_eps_ldp(cls: type, eps: float) -> None:
    rep = cls(eps, 9).privacy()
    assert rep.holds and rep.notion == "LDP"
    assert rep.ldp_epsilon <= eps + 1e-12
    # tight up to the coin-grid rounding (< 0.1 % of b, 1 - a and a - b, or 2^-32 when b ~ 1e-9)
    assert rep.ldp_epsilon == pytest.approx(eps, rel=2e-3, abs=1e-6 if eps <= 5 else 0.1)


def test_privacy_check_can_fail() -> None:
    budgets = pldp.ItemBudgets.from_array([1.0, 1.0, 2.0])
    # a_0 (1 - b_2) / (b_0 (1 - a_2)) = 0.7 * 0.8 / (0.2 * 0.3) = 9.33 > e^1
    mech = UnaryEncoding([0.7, 0.6, 0.7], [0.2, 0.3, 0.2], budgets, pair_rule="min")
    rep = mech.privacy()
    assert not rep.holds and rep.violations
    ok = UnaryEncoding([0.55, 0.55, 0.55], [0.45, 0.45, 0.45], budgets, pair_rule="min")
    assert ok.privacy().holds


def test_single_item_level_needs_no_diagonal_constraint() -> None:
    """ERRATA IDUE-3: a level with one item has no pair of distinct inputs."""
    budgets = pldp.ItemBudgets.from_array([0.5, 3.0, 3.0])
    # item 0 alone in its level: its own ratio a0(1-b0)/(b0(1-a0)) may exceed e^0.5
    a = np.array([0.8, 0.6, 0.6])
    b = np.array([0.5, 0.4, 0.4])
    rep = UnaryEncoding(a, b, budgets, pair_rule="min").privacy()
    g0 = next(i for i, items in enumerate(rep.group_items) if items.tolist() == [0])
    assert rep.realised[g0, g0] > 0.5  # would violate if the pair existed
    assert not rep.pair_mask[g0, g0]


def test_perturb_memory_and_shape() -> None:
    m = pldp.OUE(1.0, 100)
    rep = m.perturb(np.arange(100).repeat(3), np.random.default_rng(0))
    assert rep.dtype == np.uint8 and rep.shape == (300, 13)
    assert rep.nbytes == 300 * m.nbytes_per_report  # one bit per item (rounded up to bytes)
    bits = m.unpack(rep)
    assert bits.shape == (300, 100)
    np.testing.assert_array_equal(m.pack(bits), rep)
    tally = m.tally(rep)
    ones = bits.sum(axis=1)
    tails = {int(s): bits[ones == s].sum(axis=0) for s in np.unique(ones) if m.tail_region[s]}  # within TALLY_BAND
    assert tally == pldp.Tally(300, bits.sum(axis=0), "unary", m.fingerprint, np.bincount(ones, minlength=101), tails)
    assert set(tally.tails or {}) <= set(np.flatnonzero(m.tail_region).tolist())


def test_per_bit_probabilities_match_a_and_b() -> None:
    """Every bit is 1 with probability a (own item) or b (other items): z-scores with the exact
    binomial SE below 4.5 (25 bits); bits are uncorrelated (4.5 SE of a correlation, 1/sqrt(N)).
    Power check: coins one percentage point off (6.4 SE) are rejected by the same z-scores."""
    k_bits = 4.5  # 25 z-scores per test: P(max |z| > 4.5) < 25 * 6.8e-6 under the model
    budgets = pldp.ItemBudgets.from_array([0.5, 1.0, 2.0, 4.0, 4.0])
    mech = UnaryEncoding([0.6, 0.62, 0.7, 0.55, 0.8], [0.4, 0.35, 0.3, 0.1, 0.2], budgets, pair_rule="avg")
    rng = np.random.default_rng(1)
    users = 100_000
    for x in range(5):
        bits = mech.unpack(mech.perturb(np.full(users, x), rng))
        expected = np.where(np.arange(5) == x, mech.a, mech.b)
        se = np.sqrt(expected * (1 - expected) / users)
        z = (bits.mean(axis=0) - expected) / se
        assert np.all(np.abs(z) < k_bits), (x, z)
        assert np.min(np.abs((bits.mean(axis=0) - (expected + 0.01)) / se)) > k_bits  # power
        # bits are independent: correlation of two other bits is ~0
        o = [j for j in range(5) if j != x][:2]
        assert abs(np.corrcoef(bits[:, o[0]], bits[:, o[1]])[0, 1]) < k_bits / math.sqrt(users)


def test_simulate_matches_the_per_user_path() -> None:
    """Each bit count has the same law on both paths (chi-square homogeneity, rejected below
    ALPHA = 1e-3), counts of different bits are uncorrelated on both paths (K SE of a
    correlation, 1/sqrt(trials)); power check: the simulator of OUE at another budget is rejected.
    The per-user path runs once for the users of all trials (they are independent), each trial's
    bit counts summed from its reports and their total checked against the tally of them all."""
    alpha = 1e-3
    mech = pldp.OUE(1.0, 3)
    rng = np.random.default_rng(2)
    x = np.array([0, 0, 0, 1, 1, 2])
    trials = 20_000
    reports = mech.perturb(np.tile(x, trials), rng)
    per_user = mech.unpack(reports).reshape(trials, x.size, 3).sum(axis=1)
    assert np.array_equal(per_user.sum(axis=0), mech.tally(reports).counts)
    sim = np.array([mech.simulate(np.bincount(x, minlength=3), rng).counts for _ in range(trials)])
    other = pldp.OUE(1.3, 3)
    wrong = np.array([other.simulate(np.bincount(x, minlength=3), rng).counts for _ in range(trials)])

    def pvalue(a: np.ndarray, b: np.ndarray) -> float:
        table = np.array([np.bincount(a, minlength=7), np.bincount(b, minlength=7)])
        return stats.chi2_contingency(table[:, table.sum(axis=0) > 0])[1]

    for k in range(3):
        assert pvalue(per_user[:, k], sim[:, k]) > alpha
    assert min(pvalue(per_user[:, k], wrong[:, k]) for k in range(3)) < alpha * 1e-3  # power
    for counts in (per_user, sim):
        for i, j in ((0, 1), (0, 2), (1, 2)):
            assert abs(np.corrcoef(counts[:, i], counts[:, j])[0, 1]) < K / math.sqrt(trials)


def _z_of_variance(x: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """(sample variance - expected) / SE, the SE estimated from the replicates: sd((x - mean)^2) / sqrt(T)."""
    dev2 = (x - x.mean(axis=0)) ** 2
    return (x.var(axis=0, ddof=1) - expected) / (dev2.std(axis=0, ddof=1) / math.sqrt(x.shape[0]))


@pytest.mark.parametrize("mech", [pldp.RAPPOR(2.0, 20), pldp.OUE(2.0, 20), pldp.OUE(4.0, 20)], ids=str)
def test_unbiased_estimator_and_eq7_variance(mech: UnaryEncoding) -> None:
    """Fixed dataset, 6,000 count-level trials: every item's mean within K SE of the truth, every
    item's variance within K SE of Gu et al. eq. 7 (the fixed-population variance); power check:
    the i.i.d. variance, 17-63 % above eq. 7 for the top item (9.5-35 SE), is rejected."""
    counts = pldp.datasets.zipf_counts(5000, 20, np.random.default_rng(3))
    n, p = int(counts.sum()), counts / counts.sum()
    rng = np.random.default_rng(4)
    est = np.array([pldp.estimate(mech, mech.simulate(counts, rng)).frequencies for _ in range(6000)])
    se = est.std(axis=0, ddof=1) / math.sqrt(est.shape[0])
    assert np.all(np.abs(est.mean(axis=0) - p) < K * se)
    # Gu et al. eq. 7 (fixed population), written out here on the count scale
    a, b = mech.a, mech.b
    eq7 = (n * b * (1 - b)) / (a - b) ** 2 + counts * (1 - a - b) / (a - b)
    assert np.max(np.abs(_z_of_variance(est, eq7 / n**2))) < K
    assert np.max(np.abs(_z_of_variance(est, pldp.theory.item_variance(mech, p, n, "iid")))) > K
    np.testing.assert_allclose(pldp.theory.item_variance(mech, p, n, "fixed") * n**2, eq7, rtol=FLOAT_RTOL)


def test_unary_mle_kkt_and_likelihood() -> None:
    mech = pldp.OUE(0.5, 30)
    counts = pldp.datasets.zipf_counts(3000, 30, np.random.default_rng(5))
    rng = np.random.default_rng(6)
    for _ in range(20):
        tally = mech.simulate(counts, rng)
        mle = pldp.estimate(mech, tally, "mle")
        ns = pldp.estimate(mech, tally, "norm_sub")
        p = mle.frequencies
        assert np.all(p >= 0) and p.sum() == pytest.approx(1.0, abs=1e-12)
        ll = log_likelihood_unary(tally.counts, tally.n, mech.a, mech.b, p)
        assert ll >= log_likelihood_unary(tally.counts, tally.n, mech.a, mech.b, ns.frequencies) - 1e-7
        # KKT: gradient equal on the support, not larger off it
        m = mech.b + (mech.a - mech.b) * p
        c, n = tally.counts, tally.n
        grad = (mech.a - mech.b) * (c / m - (n - c) / (1 - m))
        on = p > 1e-9
        mu = np.median(grad[on])
        np.testing.assert_allclose(grad[on], mu, rtol=1e-6, atol=1e-6 * abs(mu))
        assert np.all(grad[~on] <= mu + 1e-6 * abs(mu))
        # random feasible perturbations never improve the likelihood
        for q in np.random.default_rng(7).dirichlet(np.ones(30), size=20):
            mix = 0.99 * p + 0.01 * q
            assert log_likelihood_unary(c, n, mech.a, mech.b, mix) <= ll + 1e-9


def test_unary_worst_case_fixed_is_the_opt0_objective() -> None:
    budgets = pldp.ItemBudgets.from_array([0.5, 1.0, 1.0, 2.0])
    mech = UnaryEncoding([0.55, 0.6, 0.6, 0.5], [0.45, 0.4, 0.4, 0.2], budgets, pair_rule="min")
    a, b = mech.a, mech.b
    f = np.sum(b * (1 - b) / (a - b) ** 2) + np.max((1 - a - b) / (a - b))  # Gu et al. eq. 8
    n = 1000
    wc = pldp.theory.worst_case(mech, n, model="fixed")
    assert wc.l2 * n == pytest.approx(f, rel=FLOAT_RTOL)
    rng = np.random.default_rng(8)
    for p in rng.dirichlet(np.ones(4) * 0.3, size=500):
        assert pldp.theory.expected_l2(mech, p, n, "fixed") <= wc.l2 * (1 + SUM_RTOL)  # an exact maximum
        assert pldp.theory.expected_l1(mech, p, n, "fixed") <= wc.l1 * (1 + SIMPLEX_RTOL)


def test_unary_worst_case_iid_is_the_maximum() -> None:
    budgets = pldp.ItemBudgets.from_array([0.5, 1.0, 1.0, 2.0, 3.0])
    mech = UnaryEncoding([0.55, 0.6, 0.6, 0.5, 0.7], [0.45, 0.4, 0.4, 0.2, 0.1], budgets, pair_rule="min")
    wc = pldp.theory.worst_case(mech, 100, model="iid")
    assert wc.p.sum() == pytest.approx(1.0) and wc.p_l1.sum() == pytest.approx(1.0)
    rng = np.random.default_rng(9)
    for p in rng.dirichlet(np.ones(5) * 0.5, size=2000):
        assert pldp.theory.expected_l2(mech, p, 100) <= wc.l2 * (1 + SIMPLEX_RTOL)
        assert pldp.theory.expected_l1(mech, p, 100) <= wc.l1 * (1 + SIMPLEX_RTOL)


def test_generic_worst_case_agrees_with_water_filling() -> None:
    """The numerical maximizer used for unary encoding reproduces Lemma 2 on IPRR."""
    from pldp.theory import maximize_on_simplex

    mech = pldp.IPRR(pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, 2.0, np.inf, np.inf]))
    q, gap = mech.q, mech.delta
    p = maximize_on_simplex(lambda p: (1 - 2 * (q + gap * p)) / gap, mech.d)
    # bisections to 2**-60 (each p_i) and 1e-15 (the multiplier) against the exact water-filling:
    # measured 4e-19; 1e-9 fails on a level off by 1e-9
    np.testing.assert_allclose(p, pldp.theory.worst_case(mech, 10).p, atol=1e-9)


def test_bad_reports_rejected() -> None:
    m = pldp.OUE(1.0, 10)
    with pytest.raises(pldp.TallyError, match="shape"):
        m.tally(np.zeros((5, 3), dtype=np.uint8))
    with pytest.raises(pldp.TallyError, match="uint8"):
        m.tally(np.zeros((5, 2), dtype=np.int64))
    with pytest.raises(pldp.TallyError, match="padding"):
        m.tally(np.full((5, 2), 255, dtype=np.uint8))
    with pytest.raises(pldp.DomainError, match="10"):
        m.perturb(np.array([3, 10]), np.random.default_rng(0))
    with pytest.raises(pldp.BudgetError, match="non-sensitive"):
        UnaryEncoding([0.6, 0.6], [0.4, 0.4], pldp.ItemBudgets.from_array([1.0, None]))
    with pytest.raises(pldp.ParameterError, match="0 < b < a < 1"):
        UnaryEncoding([0.4, 0.6], [0.5, 0.4], pldp.ItemBudgets.from_array([1.0, 1.0]))
    with pytest.raises(pldp.EstimationError, match="em"):
        pldp.estimate(m, m.simulate(np.ones(10, dtype=int), np.random.default_rng(0)), "mle", solver="em")


TABLE1 = pldp.ItemBudgets.from_array([math.log(4)] + [math.log(6)] * 4)


@pytest.mark.parametrize("model", ["opt0", "opt1", "opt2"])
def test_idue_mechanism_on_table1(model: str) -> None:
    """pldp.IDUE wires the solver to items: Table I's levels, MinID-LDP holds exactly, and
    the worst-case total of the mechanism equals the solver's objective."""
    mech = pldp.IDUE(TABLE1, model=model)
    rep = mech.privacy()
    assert rep.holds and rep.notion == "MinID-LDP"
    assert rep.lemma1_epsilon == pytest.approx(min(math.log(6), 2 * math.log(4)))
    assert rep.ldp_epsilon <= rep.lemma1_epsilon + 1e-12
    np.testing.assert_array_equal(mech.a[1:], mech.a[1])  # one (a, b) per level
    wc = pldp.theory.worst_case(mech, 1000, model="fixed")
    assert wc.l2 * 1000 == pytest.approx(mech.solution.objective, rel=5e-3)  # coin-grid rounding
    if model == "opt0":
        np.testing.assert_allclose(1 - mech.a[[0, 1]], [0.41, 0.33], atol=0.005)
        np.testing.assert_allclose(mech.b[[0, 1]], [0.33, 0.28], atol=0.005)
        assert wc.l2 * 1000 < 8.86  # below the paper's rounded 8.86n (ERRATA IDUE-1)


def test_idue_estimation_is_unbiased_with_eq7_variance() -> None:
    """IDUE opt0, fixed dataset, 6,000 trials: means within K SE of the truth, variances within
    K SE of the fixed-population variance; power check: the i.i.d. variance (16 % above it for
    the top item, 9 SE) is rejected."""
    rng = np.random.default_rng(30)
    budgets = pldp.ItemBudgets.random_levels(30, 1.0, rng)
    mech = pldp.IDUE(budgets, model="opt0")
    counts = pldp.datasets.zipf_counts(8000, 30, rng)
    n, p = int(counts.sum()), counts / counts.sum()
    est = np.array([pldp.estimate(mech, mech.simulate(counts, rng)).frequencies for _ in range(6000)])
    se = est.std(axis=0, ddof=1) / math.sqrt(est.shape[0])
    assert np.all(np.abs(est.mean(axis=0) - p) < K * se)
    assert np.max(np.abs(_z_of_variance(est, pldp.theory.item_variance(mech, p, n, "fixed")))) < K
    assert np.max(np.abs(_z_of_variance(est, pldp.theory.item_variance(mech, p, n, "iid")))) > K


def test_idue_rejects_non_sensitive_items() -> None:
    with pytest.raises(pldp.BudgetError, match="non-sensitive"):
        pldp.IDUE(pldp.ItemBudgets.from_array([1.0, None, 2.0]))


def test_coin_width_is_16_only_when_rounding_is_negligible() -> None:
    assert coin_width(pldp.OUE(1.0, 5).a, pldp.OUE(1.0, 5).b) == 16
    for mech in (pldp.RAPPOR(1e-3, 5), pldp.OUE(20.0, 5)):  # tiny gap / tiny b: 32-bit coins
        assert coin_width(mech.a, mech.b) == 32
    for eps in (1e-3, 0.3, 1.0, 4.0, 12.0, 30.0):  # the rounding never costs more than 0.1 % of the gap
        for cls in (pldp.RAPPOR, pldp.OUE):
            m = cls(eps, 4)
            exact_gap = (m.a - m.b)[0]
            ideal = (
                (math.exp(eps / 2) - 1) / (math.exp(eps / 2) + 1)
                if cls is pldp.RAPPOR
                else 0.5 - 1 / (math.exp(eps) + 1)
            )
            assert ideal * (1 - 1e-3) <= exact_gap <= ideal
