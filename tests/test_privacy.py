"""Exact privacy checks of the direct-encoding mechanisms.

The budgets of IPRR are checked on the full channel matrix, computed independently of the
mechanism's own report, and the definitions are written out here from the papers.

The channels run on the 2^-32 grid (:func:`pldp.mechanisms.direct.grid_weights`): the keep
probability is the textbook one rounded *down* to a multiple of 2^-32, as far as the budgets require
and no further, and every dishonest probability at least what it must be, so every realised epsilon is
within its budget exactly and below it by no more than the rounding (``assert_grid_budgets``), and
the channel entries are the textbook ones to within the steps the rounding moved them (``_grid_atol``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pldp
from pldp.channel.exact import ratio_within
from pldp.channel.sampling import GRID
from pldp.privacy import check_channel
from tests.conftest import SPREAD_STEPS, assert_grid_budgets, fig1_budgets
from tests.tolerances import FLOAT_RTOL


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


def _grid_atol(n_sensitive: int) -> float:
    """Largest move of a channel entry from its textbook value on the grid, for the small budget
    sets of these tests: each ``q_y`` moves by fewer than ``SPREAD_STEPS + 1`` steps and ``delta`` falls
    by fewer than ``2 n_sensitive + 1`` (see ``assert_grid_budgets``), so ``q_y + delta`` moves by
    less than their sum."""
    return (SPREAD_STEPS + 2 * n_sensitive + 2) / GRID


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
    # condition (3): ratio of each sensitive output's column within e^eps_y (float check of the
    # matrix; the exact one on the integers follows), and tight up to the grid's rounding
    log_ratio = np.log(Q.max(axis=0)[sens]) - np.log(Q.min(axis=0)[sens])
    assert np.all(log_ratio <= eps[sens] + 1e-12)
    w, k = mech.weights, mech.keep_threshold
    assert np.array_equal(np.diag(Q)[sens] * GRID, (w + k)[sens]) and np.array_equal(Q.min(axis=0) * GRID, w)
    assert all(ratio_within(int(w[y]) + k, int(w[y]), float(eps[y])) for y in np.flatnonzero(sens))
    # condition (4): non-sensitive outputs only from their own input, with positive probability
    off = Q - np.diag(np.diag(Q))
    assert np.all(off[:, ~sens] == 0)
    assert np.all(np.diag(Q)[~sens] > 0)
    # the library's own report agrees: within every budget, and below it only by the grid's rounding
    rep = mech.privacy()
    assert rep.holds and rep.notion == "IPLDP"
    assert_grid_budgets(mech)
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
    """eps-LDP exactly on the grid: one weight W for every item, ``ln(1 + K / W) <= eps``, below
    it only by the rounding; beyond ln(2^32 + 1) the realised epsilon is capped at ln(1 + K), K = 2^32 - d."""
    mech = pldp.KRR(eps, d)
    rep = mech.privacy()
    assert rep.holds and rep.notion == "LDP"
    w, k = mech.weights, mech.keep_threshold
    assert np.all(w == w[0])  # symmetric, as KRR is
    assert rep.ldp_epsilon == pytest.approx(math.log1p(k / int(w[0])), rel=FLOAT_RTOL)
    assert rep.ldp_epsilon <= eps
    assert_grid_budgets(mech)
    if eps == 50.0:  # the cap: every weight is the smallest, 1, and K = 2^32 - d
        assert w.tolist() == [1] * d and k == GRID - d
        assert rep.ldp_epsilon == pytest.approx(math.log(GRID - d + 1), rel=FLOAT_RTOL) and rep.ldp_epsilon < 22.2


def test_urr_is_uldp_and_not_ldp() -> None:
    sens = np.array([True, True, False, True, False])
    mech = pldp.URR(0.7, sens)
    rep = mech.privacy()
    assert rep.holds and rep.notion == "ULDP"
    # at most the budget, below it only by the grid's rounding (one weight for the three sensitive items)
    assert rep.uldp_epsilon <= 0.7
    assert rep.uldp_epsilon == pytest.approx(math.log1p(mech.keep_threshold / int(mech.weights[0])), rel=FLOAT_RTOL)
    assert_grid_budgets(mech)
    assert rep.ldp_epsilon == math.inf  # non-sensitive outputs reveal their input
    assert rep.invertible.tolist() == [False, False, True, False, True]


def test_fig1_probabilities_from_definition_5() -> None:
    """q, q-bar, q-tilde computed by hand from Li et al. Def. 5 for E = {0.1, 0.5, 1.0}, |D_N| = 2.

    The grid moves q-tilde (the keep probability) down and every q-bar by a few steps of 2^-32, so
    the entries match the definition to ``_grid_atol(3)`` (2.1e-9), and q-tilde is exactly
    ``1 - sum(q-bar)`` of the grid channel."""
    e = [0.1, 0.5, 1.0]
    total = 1.0 + sum(1.0 / (math.exp(x) - 1.0) for x in e)
    qbar = [1.0 / ((math.exp(x) - 1.0) * total) for x in e]
    q = [math.exp(x) * qb for x, qb in zip(e, qbar, strict=True)]
    qtilde = 1.0 / total
    Q = pldp.IPRR(fig1_budgets()).channel()
    tol = _grid_atol(3)
    for y in range(3):
        assert Q[y, y] == pytest.approx(q[y], rel=0, abs=tol)
        for x in range(5):
            if x != y:
                assert Q[x, y] == pytest.approx(qbar[y], rel=0, abs=tol)
                assert Q[y, y] / Q[x, y] <= math.exp(e[y])  # rounded towards more privacy
    for y in (3, 4):
        assert Q[y, y] == pytest.approx(qtilde, rel=0, abs=tol)
        assert Q[y, y] <= qtilde  # the keep probability is rounded down
        assert Q[y, y] == 1 - Q[4 if y == 3 else 3, :3].sum()  # 1 - sum of the grid's q-bar (another row's), exactly
    # ERRATA IPRR-5: a non-sensitive user reports the most sensitive item with probability 0.75
    assert Q[3, 0] == pytest.approx(0.7527, abs=1e-4)


@pytest.mark.parametrize("eps", [0.01, 0.8, 4.0])
@pytest.mark.parametrize("d", [2, 5, 60])
def test_iprr_with_equal_budgets_is_krr(eps: float, d: int) -> None:
    """Reduction (Li et al. Sec. 5.1): the textbook KRR channel, written out here, to within the
    grid's rounding (``_grid_atol(d)``); IPRR and KRR run the very same grid channel."""
    Q = pldp.IPRR(pldp.ItemBudgets.uniform(eps, d)).channel()
    keep = math.exp(eps) / (math.exp(eps) + d - 1)
    other = 1.0 / (math.exp(eps) + d - 1)
    expected = np.full((d, d), other) + np.eye(d) * (keep - other)
    np.testing.assert_allclose(Q, expected, rtol=0, atol=_grid_atol(d))
    assert np.array_equal(pldp.KRR(eps, d).channel(), Q)


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
    Q = pldp.IPRR(budgets).channel()
    # to within the grid's rounding (``_grid_atol(|D_S|)``); the zeros (no lie reports a D_N item) exactly
    np.testing.assert_allclose(Q, expected, rtol=0, atol=_grid_atol(ds))
    assert np.array_equal(Q == 0, expected == 0)
    assert np.array_equal(pldp.URR(eps, sens).channel(), Q)


def test_by_frequency_budgets_are_private_at_large_domains() -> None:
    counts = np.random.default_rng(3).integers(0, 1000, size=10_000)
    b = pldp.ItemBudgets.by_frequency(counts, 0.1, 10.0, 4, 0.5)
    mech = pldp.IPRR(b)
    assert mech.privacy().holds
    # each budget met exactly; with 10,000 items the rounding of the weights takes up to 2 steps
    # each from K, so the realised epsilons lie up to ~0.7 % below the budgets here (see assert_grid_budgets)
    assert_grid_budgets(mech)
