"""Exact privacy checks of the direct-encoding mechanisms.

The budgets of IPRR are checked on the full channel matrix, computed independently of the
mechanism's own report, and the definitions are written out here from the papers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pldp
from pldp.privacy import check_channel
from tests.conftest import fig1_budgets


@st.composite
def budget_sets(draw: st.DrawFn) -> np.ndarray:
    """2-200 items, eps log-uniform in [1e-3, 50], 0-50 % non-sensitive (>= 1 sensitive)."""
    d = draw(st.integers(2, 200))
    log_eps = draw(st.lists(st.floats(math.log(1e-3), math.log(50.0)), min_size=d, max_size=d))
    eps = np.exp(np.array(log_eps))
    frac = draw(st.floats(0.0, 0.5))
    n_ns = min(int(frac * d), d - 1)
    ns = draw(st.permutations(range(d)))[:n_ns]
    eps[list(ns)] = np.inf
    return eps


def _ipldp_ratios(Q: np.ndarray) -> np.ndarray:
    """max_x Q(y|x) / min_x Q(y|x) per output column (inf where a zero occurs)."""
    with np.errstate(divide="ignore"):
        return Q.max(axis=0) / Q.min(axis=0)


@settings(max_examples=500, deadline=None)
@given(eps=budget_sets())
def test_iprr_channel_satisfies_ipldp_exactly(eps: np.ndarray) -> None:
    mech = pldp.IPRR(pldp.ItemBudgets.from_array(eps))
    Q = mech.channel()
    sens = np.isfinite(eps)
    # a stochastic matrix
    assert np.all(Q >= 0)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # condition (3): ratio of each sensitive output's column within e^eps_y, tight (q = e^eps q-bar)
    log_ratio = np.log(Q.max(axis=0)[sens]) - np.log(Q.min(axis=0)[sens])
    assert np.all(log_ratio <= eps[sens] + 1e-12)
    np.testing.assert_allclose(np.diag(Q)[sens] / mech.q[sens], np.exp(eps[sens]), rtol=1e-12)
    # condition (4): non-sensitive outputs only from their own input, with positive probability
    off = Q - np.diag(np.diag(Q))
    assert np.all(off[:, ~sens] == 0)
    assert np.all(np.diag(Q)[~sens] > 0)
    # the library's own report agrees, and is tight
    rep = mech.privacy()
    assert rep.holds and rep.notion == "IPLDP"
    np.testing.assert_allclose(rep.realised[sens], eps[sens], rtol=1e-12, atol=1e-12)
    assert check_channel(Q, eps).holds


def test_checker_rejects_a_channel_that_leaks() -> None:
    mech = pldp.IPRR(fig1_budgets())
    Q = mech.channel()
    Q[0, 0] *= 1.0 + 1e-9  # output x1 now slightly more likely from its own input
    rep = check_channel(Q, fig1_budgets().epsilons)
    assert not rep.holds and rep.violations.tolist() == [0]
    # a non-sensitive output reachable from another input violates condition (4)
    Q = mech.channel()
    Q[0, 3], Q[0, 0] = 1e-6, Q[0, 0] - 1e-6
    rep = check_channel(Q, fig1_budgets().epsilons)
    assert rep.violations.tolist() == [3]


@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("d", [2, 7, 1000])
def test_krr_is_exactly_eps_ldp(eps: float, d: int) -> None:
    mech = pldp.KRR(eps, d)
    rep = mech.privacy()
    assert rep.holds and rep.notion == "LDP"
    # on the 2^32 grid the realised epsilon ln(1 + K/W) is at most eps, and at least what one more
    # grid unit of W would give (the rounding is one unit); a weight cannot go below 1 (eps > ~22)
    w, k = int(mech.weights[0]), mech.keep_threshold
    assert rep.ldp_epsilon <= eps
    assert rep.ldp_epsilon >= min(eps, math.log1p(k / w)) - math.log1p(1 / w) - 1e-12
    assert w > 1 or eps > math.log(2**32 / d)


def test_urr_is_uldp_and_not_ldp() -> None:
    sens = np.array([True, True, False, True, False])
    rep = pldp.URR(0.7, sens).privacy()
    assert rep.holds and rep.notion == "ULDP"
    assert 0.7 - 1e-8 <= rep.uldp_epsilon <= 0.7  # the 2^32 grid rounds towards more privacy
    assert rep.ldp_epsilon == math.inf  # non-sensitive outputs reveal their input
    assert rep.invertible.tolist() == [False, False, True, False, True]


def test_fig1_probabilities_from_definition_5() -> None:
    """q, q-bar, q-tilde computed by hand from Li et al. Def. 5 for E = {0.1, 0.5, 1.0}, |D_N| = 2."""
    e = [0.1, 0.5, 1.0]
    total = 1.0 + sum(1.0 / (math.exp(x) - 1.0) for x in e)
    qbar = [1.0 / ((math.exp(x) - 1.0) * total) for x in e]
    q = [math.exp(x) * qb for x, qb in zip(e, qbar, strict=True)]
    qtilde = 1.0 / total
    Q = pldp.IPRR(fig1_budgets()).channel()
    for y in range(3):
        assert Q[y, y] == pytest.approx(q[y], rel=1e-13)
        for x in range(5):
            if x != y:
                assert Q[x, y] == pytest.approx(qbar[y], rel=1e-13)
    for y in (3, 4):
        assert Q[y, y] == pytest.approx(qtilde, rel=1e-13)
        assert Q[y, y] == pytest.approx(1 - sum(qbar), rel=1e-13)
    # ERRATA IPRR-5: a non-sensitive user reports the most sensitive item with probability 0.75
    assert Q[3, 0] == pytest.approx(0.7527, abs=1e-4)


@pytest.mark.parametrize("eps", [0.01, 0.8, 4.0])
@pytest.mark.parametrize("d", [2, 5, 60])
def test_iprr_with_equal_budgets_is_krr(eps: float, d: int) -> None:
    """Reduction (Li et al. Sec. 5.1): the textbook KRR channel, written out here."""
    Q = pldp.IPRR(pldp.ItemBudgets.uniform(eps, d)).channel()
    keep = math.exp(eps) / (math.exp(eps) + d - 1)
    other = 1.0 / (math.exp(eps) + d - 1)
    expected = np.full((d, d), other) + np.eye(d) * (keep - other)
    grid = d / 2**32  # the grid moves each weight by < 1 unit and the keep threshold by < d units
    np.testing.assert_allclose(Q, expected, rtol=0, atol=grid)
    np.testing.assert_allclose(pldp.KRR(eps, d).channel(), expected, rtol=0, atol=grid)


@pytest.mark.parametrize("eps", [0.05, 1.0, 6.0])
def test_iprr_with_equal_budgets_and_dn_is_urr(eps: float) -> None:
    """Reduction (Li et al. Sec. 5.2): Murakami & Kawamoto's URR, written out here."""
    sens = np.array([True, False, True, True, False, False, True])
    ds = int(sens.sum())
    den = ds + math.exp(eps) - 1
    d = sens.size
    expected = np.zeros((d, d))
    for x in range(d):
        for y in range(d):
            if sens[x]:
                expected[x, y] = math.exp(eps) / den if x == y else (1 / den if sens[y] else 0.0)
            else:
                expected[x, y] = 1 - ds / den if x == y else (1 / den if sens[y] else 0.0)
    budgets = pldp.ItemBudgets.from_array(np.where(sens, eps, np.inf))
    np.testing.assert_allclose(pldp.IPRR(budgets).channel(), expected, rtol=0, atol=d / 2**32)
    np.testing.assert_allclose(pldp.URR(eps, sens).channel(), expected, rtol=1e-12, atol=1e-300)


def test_by_frequency_budgets_are_private_at_large_domains() -> None:
    counts = np.random.default_rng(3).integers(0, 1000, size=10_000)
    b = pldp.ItemBudgets.by_frequency(counts, 0.1, 10.0, 4, 0.5)
    rep = pldp.IPRR(b).privacy()
    assert rep.holds
    np.testing.assert_allclose(rep.realised[b.sensitive], b.epsilons[b.sensitive], rtol=1e-12)
