"""Seeded Monte Carlo checks: sampling paths, unbiasedness, variance against theory."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import pldp
from pldp.theory import expected_l2, item_variance
from tests.conftest import fig1_budgets, zipf_iprr


def _tally_rows(reports: np.ndarray, d: int) -> np.ndarray:
    """Per-row bincount of a (trials, n) array of reports."""
    t = reports.shape[0]
    flat = reports + d * np.arange(t)[:, None]
    return np.bincount(flat.ravel(), minlength=t * d).reshape(t, d)


def _homogeneity_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """Chi-square test that two samples of count vectors come from one distribution."""
    keys_a = [tuple(r) for r in a.tolist()]
    keys_b = [tuple(r) for r in b.tolist()]
    cats = sorted(set(keys_a) | set(keys_b))
    index = {k: i for i, k in enumerate(cats)}
    table = np.zeros((2, len(cats)))
    for row, keys in enumerate((keys_a, keys_b)):
        np.add.at(table[row], [index[k] for k in keys], 1)
    # pool rare categories so that every expected cell is >= 5
    order = np.argsort(table.sum(axis=0))
    pooled, acc = [], np.zeros(2)
    for j in order:
        acc = acc + table[:, j]
        if acc.sum() >= 10:
            pooled.append(acc)
            acc = np.zeros(2)
    if acc.sum() and pooled:
        pooled[-1] = pooled[-1] + acc
    return float(stats.chi2_contingency(np.array(pooled).T)[1])


# The homogeneity and goodness-of-fit tests below are hypothesis tests: ALPHA is the p-value
# below which they reject (a false rejection is a 1-in-1000 event per test; the seeds are fixed).
# Each is paired with a power check: the same test on a mechanism with other budgets rejects.
ALPHA = 1e-3
PATHS = {
    "krr": (pldp.KRR(1.0, 3), pldp.KRR(1.3, 3)),
    "iprr3": (
        pldp.IPRR(pldp.ItemBudgets.from_array([0.3, 1.5, np.inf])),
        pldp.IPRR(pldp.ItemBudgets.from_array([0.3, 1.9, np.inf])),
    ),
    "iprr-fig1": (pldp.IPRR(fig1_budgets()), pldp.IPRR(pldp.ItemBudgets.from_array([0.1, 0.5, 1.3, np.inf, np.inf]))),
}


def _path_tallies(mech: pldp.DirectEncoding, sim: pldp.DirectEncoding, rng: np.random.Generator) -> tuple:
    """20,000 tallies of a fixed small population by ``mech``'s per-user path and by ``sim.simulate``."""
    d, trials = mech.d, 20_000
    x = np.repeat(np.arange(d), [6, 4, 2, 1, 1][:d])
    per_user = _tally_rows(mech.perturb(np.tile(x, trials), rng).reshape(trials, -1), d)
    simulated = np.array([sim.simulate(np.bincount(x, minlength=d), rng).counts for _ in range(trials)])
    return per_user, simulated


@pytest.mark.parametrize("name", list(PATHS))
def test_per_user_path_and_simulate_have_the_same_distribution(name: str) -> None:
    """Chi-square homogeneity of the whole tally vector: not rejected at ALPHA."""
    mech, _ = PATHS[name]
    assert _homogeneity_pvalue(*_path_tallies(mech, mech, np.random.default_rng(11))) > ALPHA


@pytest.mark.parametrize("name", list(PATHS))
def test_the_homogeneity_test_detects_a_wrong_simulator(name: str) -> None:
    """Power check: the same test rejects (far below ALPHA) the simulator of a mechanism whose
    largest budget differs by 25-30 %."""
    mech, wrong = PATHS[name]
    assert _homogeneity_pvalue(*_path_tallies(mech, wrong, np.random.default_rng(12))) < ALPHA * 1e-3


@pytest.mark.parametrize(
    ("mech", "wrong", "one_uniform"),
    [
        (
            pldp.IPRR(pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, 3.0, np.inf, np.inf])),
            pldp.IPRR(pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, 3.3, np.inf, np.inf])),
            True,
        ),  # alias
        (pldp.KRR(1.0, 3), pldp.KRR(1.05, 3), True),  # uniform q
        (
            pldp.IPRR(pldp.ItemBudgets.from_array([3.0, 4.0, np.inf])),
            pldp.IPRR(pldp.ItemBudgets.from_array([3.0, 4.2, np.inf])),
            False,
        ),  # alias
        (pldp.KRR(3.0, 4), pldp.KRR(3.1, 4), False),  # uniform q
    ],
    ids=["iprr-one-uniform", "krr-one-uniform", "iprr-mask-and-alias", "krr-mask-and-integers"],
)
def test_perturb_rows_match_the_channel(
    mech: pldp.DirectEncoding, wrong: pldp.DirectEncoding, one_uniform: bool
) -> None:
    """Each input's empirical report distribution fits its channel row (chi-square GOF, rejected
    below ALPHA / d: Bonferroni over the d rows), on both sampling paths of
    :meth:`DirectEncoding.perturb` (one uniform per user when at least half the users lie, else
    a Bernoulli mask and a second draw for the liars). Power check: the same rows are rejected
    against the channel of a mechanism with one budget 3-10 % off."""
    assert (mech.delta <= 0.5) == one_uniform
    rng = np.random.default_rng(13)
    Q, W = mech.channel(), wrong.channel()
    users = 200_000
    wrong_p = []
    for x in range(mech.d):
        obs = np.bincount(mech.perturb(np.full(users, x), rng), minlength=mech.d)
        exp = users * Q[x]
        support = exp > 0
        assert obs[~support].sum() == 0  # impossible reports never happen
        pval = stats.chisquare(obs[support], exp[support]).pvalue
        assert pval > ALPHA / mech.d, (x, obs, exp)
        wrong_p.append(stats.chisquare(obs[support], users * W[x][support]).pvalue)
    assert min(wrong_p) < ALPHA / mech.d * 1e-3, wrong_p


def test_same_seed_same_output() -> None:
    mech, counts = zipf_iprr()
    x = np.repeat(np.arange(mech.d), counts)
    a = mech.perturb(x, np.random.default_rng(5))
    b = mech.perturb(x, np.random.default_rng(5))
    assert np.array_equal(a, b)
    assert mech.simulate(counts, np.random.default_rng(5)) == mech.simulate(counts, np.random.default_rng(5))


# Monte Carlo of the unbiased estimator's loss. Settings where the fixed-population and i.i.d.
# losses (ERRATA IPRR-1) differ by 14-30 % (the between-user sampling term sum p(1-p)/n is large
# against the perturbation noise: a concentrated Zipf distribution, budgets 1-4, n = 2000), so that
# with TRIALS count-level trials they are 25-60 standard errors apart and each test can tell them
# apart. K is the number of (Monte Carlo) standard errors a statistic may lie from its expectation.
K = 4.0
SEPARATION = 8.0  # at least this many SE between the model a test accepts and the one it rejects
TRIALS = 20_000
_ZIPF10 = pldp.datasets.zipf_counts(2000, 10, np.random.default_rng(7))
SETTINGS = {
    "krr": lambda: (pldp.KRR(2.0, 5), pldp.datasets.zipf_counts(2000, 5, np.random.default_rng(7))),
    "urr": lambda: (pldp.URR(2.0, np.arange(10) >= 5), _ZIPF10),
    "iprr": lambda: (pldp.IPRR(pldp.ItemBudgets.by_frequency(_ZIPF10, 1.0, 4.0, 4, 0.5)), _ZIPF10),
}


def _z_of_mean(x: np.ndarray, expected: np.ndarray | float) -> np.ndarray:
    """(mean - expected) / SE of the mean, the SE estimated from the replicates (rows)."""
    return (x.mean(axis=0) - expected) / (x.std(axis=0, ddof=1) / np.sqrt(x.shape[0]))


def _z_of_variance(x: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """(sample variance - expected) / its SE, the SE of the sample variance estimated from the
    replicates as sd((x - mean)^2) / sqrt(T) (no normality assumed)."""
    dev2 = (x - x.mean(axis=0)) ** 2
    return (x.var(axis=0, ddof=1) - expected) / (dev2.std(axis=0, ddof=1) / np.sqrt(x.shape[0]))


def _wald_coverage(mech: pldp.DirectEncoding, p: np.ndarray, n: int, level: float) -> np.ndarray:
    """Exact coverage of the interval ``f_hat +/- z sqrt(m_hat (1 - m_hat) / (n delta^2))`` of each
    item when its support count is Bin(n, m_y) (users i.i.d.): a sum over all n + 1 counts."""
    z = stats.norm.ppf(0.5 + level / 2)
    p_star, q_star = mech.support
    c = np.arange(n + 1)[:, None]
    m_hat = c / n
    f_hat = (m_hat - q_star) / (p_star - q_star)
    half = z * np.sqrt(m_hat * (1 - m_hat) / n) / (p_star - q_star)
    m = pldp.theory.support_distribution(mech, p)
    return np.sum(stats.binom.pmf(c, n, m) * (np.abs(f_hat - p) <= half), axis=0)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_unbiased_estimator_mean_and_fixed_population_loss(name: str) -> None:
    """Fixed dataset, only the perturbation random (ERRATA IPRR-1, model="fixed"): every item's
    mean is the truth, the mean l2 loss is the fixed-population loss, each item's variance is
    the fixed-population variance, and the mean reported (plug-in) variance is its exact
    expectation; each within K SE, and each rejects the i.i.d. model (power check)."""
    mech, counts = SETTINGS[name]()
    n, p = int(counts.sum()), counts / counts.sum()
    rng = np.random.default_rng(21)
    est = np.empty((TRIALS, mech.d))
    reported = np.empty((TRIALS, mech.d))
    for t in range(TRIALS):
        e = pldp.estimate(mech, mech.simulate(counts, rng))
        est[t], reported[t] = e.frequencies, e.variance
    assert np.all(np.abs(_z_of_mean(est, p)) < K)
    # l2 loss: fixed model within K SE; the i.i.d. loss (eq. 13) is >= 8 SE away and rejected
    l2 = np.sum((est - p) ** 2, axis=1)
    se = l2.std(ddof=1) / np.sqrt(TRIALS)
    fixed, iid = expected_l2(mech, p, n, model="fixed"), expected_l2(mech, p, n, model="iid")
    assert abs(l2.mean() - fixed) < K * se, (l2.mean() - fixed) / se
    assert (iid - fixed) / se > SEPARATION
    assert abs(l2.mean() - iid) > K * se  # power: the same check rejects eq. 13
    # per-item variance: the fixed variances fit every item, the i.i.d. ones do not
    v_fixed, v_iid = item_variance(mech, p, n, "fixed"), item_variance(mech, p, n, "iid")
    assert np.max(np.abs(_z_of_variance(est, v_fixed))) < K
    assert np.max(np.abs(_z_of_variance(est, v_iid))) > K
    # the plug-in m_hat (1 - m_hat) / (n delta^2) is the i.i.d. formula at m_hat: its exact mean is
    # v_iid - Var(m_hat) / (n delta^2) = v_iid - v_fixed / n here; it is not the fixed variance
    assert np.all(np.abs(_z_of_mean(reported, v_iid - v_fixed / n)) < K)
    assert np.max(np.abs(_z_of_mean(reported, v_fixed))) > K


@pytest.mark.parametrize("name", list(SETTINGS))
def test_unbiased_estimator_iid_loss_matches_eq13(name: str) -> None:
    """Users drawn i.i.d. from p in every trial (model="iid"): the mean l2 loss is eq. 13 within
    K SE and rejects the fixed-population loss (power check); each item's 95 % interval covers
    the truth as often as its exact coverage under Bin(n, m_y) (K SE), which is 93-97 % for every
    item with an expected support count of 100 or more."""
    mech, counts = SETTINGS[name]()
    n, p = int(counts.sum()), counts / counts.sum()
    rng = np.random.default_rng(22)
    l2 = np.empty(TRIALS)
    covered = np.zeros((TRIALS, mech.d))
    for t in range(TRIALS):
        e = pldp.estimate(mech, mech.simulate(rng.multinomial(n, p), rng))
        l2[t] = np.sum((e.frequencies - p) ** 2)
        lo, hi = e.ci(0.95)
        covered[t] = (lo <= p) & (p <= hi)
    se = l2.std(ddof=1) / np.sqrt(TRIALS)
    fixed, iid = expected_l2(mech, p, n, model="fixed"), expected_l2(mech, p, n, model="iid")
    assert abs(l2.mean() - iid) < K * se, (l2.mean() - iid) / se
    assert (iid - fixed) / se > SEPARATION
    assert abs(l2.mean() - fixed) > K * se  # power: the same check rejects the fixed-population loss
    exact = _wald_coverage(mech, p, n, 0.95)
    assert np.all(np.abs(_z_of_mean(covered, exact)) < K)
    normal = n * pldp.theory.support_distribution(mech, p) >= 100
    assert normal.sum() >= 3 and np.all(np.abs(exact[normal] - 0.95) < 0.02), exact


def test_fixed_population_loss_is_smaller_than_iid() -> None:
    mech, counts = zipf_iprr()
    n, p = int(counts.sum()), counts / counts.sum()
    assert expected_l2(mech, p, n, "fixed") < expected_l2(mech, p, n, "iid")
