"""Errata of the papers that no other test covers (``docs/errata.md`` maps every erratum to its test)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pldp
from pldp import theory
from pldp.errors import EstimationError
from pldp.protocols import FEBSF, MPLDP, auem, em

#: Tolerance of the Monte Carlo checks, in standard errors of the Monte Carlo mean.
K_SE = 4.0


def test_iprr4_eq14_constant_is_sqrt_2_over_pi() -> None:
    """IPRR-4: Proof B.1's limit is sqrt(2/pi), not sqrt(2/(n pi)); eq. 14 (expected l1) is right.

    Monte Carlo mean of the l1 loss of the unbiased estimate against theory.expected_l1 within
    K_SE standard errors; the misprinted constant is off by a factor sqrt(n) = 100.
    """
    mech = pldp.IPRR(pldp.ItemBudgets.from_array([0.5, 1.0, 2.0, np.inf]))
    p = np.array([0.1, 0.2, 0.3, 0.4])
    n, trials = 10_000, 4000
    rng = np.random.default_rng(1)
    counts = (p * n).astype(int)
    losses = np.array(
        [np.abs(pldp.estimate(mech, mech.simulate(counts, rng)).frequencies - p).sum() for _ in range(trials)]
    )
    se = losses.std(ddof=1) / math.sqrt(trials)
    expected = theory.expected_l1(mech, p, n, model="fixed")
    assert abs(losses.mean() - expected) < K_SE * se
    assert abs(losses.mean() - expected / math.sqrt(n)) > 10 * K_SE * se  # the misprinted constant is rejected


def _negative_rho_tally() -> tuple[FEBSF, object]:
    """Few users, almost all on the last level: rho-hat of eq. 4 goes negative."""
    proto = FEBSF([0.5, 1.0, 2.0], 0.3, 4, oracle="rappor")
    for seed in range(50):
        rng = np.random.default_rng(seed)
        tally = proto.simulate(np.array([[0, 0, 0, 0], [1, 1, 0, 0], [40, 30, 20, 10]]), rng)
        if auem(proto, tally).info["rho"].min() < 0:
            return proto, tally
    raise AssertionError("no negative rho-hat in 50 seeds")  # pragma: no cover


def test_febsf3_negative_rho_hat_is_kept_by_auem_and_projected_for_em() -> None:
    """FEBSF-3: eq. 4 can give negative shares; AUEM keeps them (projecting would bias the ratio),
    the EM starts from their projection and returns shares on the simplex."""
    proto, tally = _negative_rho_tally()
    rho = auem(proto, tally).info["rho"]
    assert rho.min() < 0 and rho.sum() == pytest.approx(1.0)
    fit = em(proto, tally)
    assert fit.info["rho"].min() >= 0 and fit.info["rho"].sum() == pytest.approx(1.0)


def test_febsf5_em_stopping_rule_and_cap() -> None:
    """FEBSF-5: the EM stops when the log-likelihood gain is below tol (1 + |ll|) and no parameter
    moves by more than 0.01 sqrt(tol); at the step cap it raises, saying how far it was from the
    rule, or (``on_cap="return"``) returns the last iterate marked as not converged."""
    proto = FEBSF([0.5, 1.0, 2.0], 0.5, 5, oracle="krr")
    rng = np.random.default_rng(2)
    tally = proto.simulate(rng.multinomial(np.full(5, 2000), [0.3, 0.3, 0.4]).T, rng)
    done = em(proto, tally, tol=1e-10)
    capped = em(proto, tally, tol=1e-10, max_iter=3, on_cap="return")
    with pytest.raises(EstimationError, match=r"max_iter = 3 steps without meeting its stopping rule"):
        em(proto, tally, tol=1e-10, max_iter=3)
    assert done.converged and done.iterations < 20_000 and "converged in" in done.info["stopped"]
    assert "max_iter = 3" in capped.info["stopped"]
    assert not capped.converged and capped.iterations <= 3
    assert capped.info["log_likelihood"] <= done.info["log_likelihood"] + 1e-9


def test_febsf6_the_level_is_protected_by_the_whole_report_not_at_eps_p() -> None:
    """FEBSF-6: with levels 0.1..1.0 and eps_p = 0.3 the level's worst-case privacy is 1.10 (k-RR,
    |D| = 16), 8.83 (OUE, 16) and 23.6 (OUE, 42), not 0.3, while each report keeps its own LDP; a
    Bayes guess of the level from the whole report (uniform items and levels) beats the level report
    alone by 0 (k-RR: its marginal does not depend on the level), a third (OUE, 16) and two thirds
    (OUE, 42)."""
    levels = np.arange(1, 11) / 10
    cases = {
        ("krr", 16): ("1.10", 0.1304, 0.0),
        ("oue", 16): ("8.83", 0.1752, 0.343),
        ("oue", 42): ("23.6", 0.2175, 0.668),
    }
    for (oracle, d), (worst, whole, gain) in cases.items():
        proto = FEBSF(levels, 0.3, d, oracle)
        rep = proto.privacy()
        lp = rep.level
        assert rep.holds and rep["level report"].ldp_epsilon <= 0.3  # the reports' own claims hold
        assert lp is not None and lp.claimed == 0.3
        assert f"{lp.worst_case:#.3g}" == worst and lp.worst_case > 3 * lp.claimed
        assert lp.level_report_epsilon == pytest.approx(0.3, abs=1e-8) and lp.level_report_epsilon <= 0.3
        assert lp.bayes_whole == pytest.approx(whole, abs=1e-4)
        assert lp.bayes_level_report == pytest.approx(0.1304, abs=1e-4) and lp.prior_guess == pytest.approx(0.1)
        assert lp.gain == pytest.approx(gain, abs=1e-3)


def test_mpldp2_levels_are_random_with_the_configured_shares_and_independent_of_the_data() -> None:
    """MPLDP-2: Algorithm 4's rows are sorted; levels are drawn at random, not in blocks."""
    proto = MPLDP([4], [2.0], level_shares=[0.2, 0.3, 0.5])
    n = 30_000
    values = np.sort(np.random.default_rng(3).integers(0, 4, n))[:, None]  # sorted, as Algorithm 4's
    levels = proto.assign_levels(n, np.random.default_rng(4))[:, 0]
    share = np.bincount(levels, minlength=3) / n
    se = np.sqrt(np.array([0.2, 0.3, 0.5]) * np.array([0.8, 0.7, 0.5]) / n)
    assert np.all(np.abs(share - [0.2, 0.3, 0.5]) < K_SE * se)
    table = np.bincount(values[:, 0] * 3 + levels, minlength=12).reshape(4, 3)
    from scipy.stats import chi2_contingency

    assert chi2_contingency(table).pvalue > 1e-3  # independent of the (sorted) values
    assert chi2_contingency(np.array([[5000, 0], [0, 5000]])).pvalue < 1e-3  # power: a block split is caught


def test_mpldp6_level_estimates_are_the_levels_own_counts() -> None:
    """MPLDP-6: Algorithm 2 estimates the level's own count H^tau (no n / n_tau scaling)."""
    proto = MPLDP([3], [3.0])
    rng = np.random.default_rng(5)
    values = rng.integers(0, 3, size=(6000, 1))
    levels = proto.assign_levels(6000, rng)
    within = np.stack([np.bincount(values[levels[:, 0] == t, 0], minlength=3) for t in range(3)])
    est = np.array([proto.level_estimates(proto.simulate(values, levels, rng), 0)[0] for _ in range(600)])
    se = est.std(axis=0, ddof=1) / math.sqrt(est.shape[0])
    assert np.all(np.abs(est.mean(axis=0) - within) < K_SE * se)
    assert np.all(np.abs(est.mean(axis=0) - within * 3) > K_SE * se)  # the scaled reading is far off
