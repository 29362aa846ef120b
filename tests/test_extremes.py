"""Numerics at the edges the design names: epsilon from 1e-3 to 50, domains from 2 to 100,000."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pldp
from pldp.sampling import GRID
from tests.conftest import assert_grid_budgets, assert_grid_channel


@pytest.mark.parametrize(
    "eps",
    [
        pytest.param(
            1e-3,
            marks=pytest.mark.xfail(
                raises=pldp.BudgetError,
                strict=True,
                reason=(
                    "grid_weights rounds each of the 100,000 weights up independently, which takes up to "
                    "100,000 steps of 2^-32 from K* = delta* 2^32 = 79.4 and leaves nothing to keep; yet a "
                    "grid channel within these budgets exists (K = 79, W_y = ceil(79 r_y), the rest added "
                    "to the weights). A refusal of the rounding, not of the budgets."
                ),
            ),
        ),
        1.0,
        50.0,
    ],
)
def test_large_domain_end_to_end(eps: float) -> None:
    rng = np.random.default_rng(1)
    d = 100_000
    b = pldp.ItemBudgets.random_levels(d, eps, rng)
    mech = pldp.IPRR(b)
    rep = mech.privacy()
    assert rep.holds
    # every budget met exactly on the 2^-32 grid, below it only by the rounding: at this d that is
    # far from negligible (eps = 1: the 2.0 items realise 1.846, as K loses a step per weight)
    assert_grid_channel(mech)
    assert_grid_budgets(mech)
    if eps == 50.0:  # the cap: budgets 50..100 are beyond ln(2^32 + 1), every weight is 1
        assert np.all(mech.weights == 1) and mech.keep_threshold == GRID - d
        np.testing.assert_allclose(rep.realised, math.log(GRID - d + 1), rtol=1e-15)
        assert np.all(rep.realised < b.epsilons)
    counts = rng.multinomial(200_000, pldp.datasets.synthetic.zipf_probabilities(d, 1.1))
    tally = mech.simulate(counts, rng)
    assert tally.n == 200_000 and tally.counts.sum() == 200_000
    reports = mech.perturb(np.repeat(np.arange(d), counts), rng)
    assert reports.min() >= 0 and reports.max() < d
    for method in pldp.estimation.METHODS:
        e = pldp.estimate(mech, tally, method)
        assert np.all(np.isfinite(e.frequencies)) and np.all(np.isfinite(e.variance))
        assert e.frequencies.sum() == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize(("eps", "d"), [(1e-10, 2), (1e-5, 100_000)])
def test_budgets_no_grid_channel_can_meet_are_refused(eps: float, d: int) -> None:
    """With r = 1/(e^eps - 1), any grid channel within the budgets has W_y >= K r (ratio 1 + K/W_y
    <= e^eps) and K >= 1, so it needs 1 + d ceil(r) <= 2^32: here d ceil(r) is above 2^32
    (2 x 2.1e9 and 1e5 x 1e5), and the mechanism must refuse, saying why."""
    r = 1 / math.expm1(eps)
    assert 1 + d * math.ceil(r) > GRID
    with pytest.raises(pldp.BudgetError, match=rf"too small for {d} items on the 2\^-32 grid"):
        pldp.IPRR(pldp.ItemBudgets.uniform(eps, d))
    with pytest.raises(pldp.BudgetError, match="reporting one's own item rounds to zero"):
        pldp.KRR(eps, d)


@pytest.mark.parametrize("eps", [1e-3, 50.0])
def test_two_items(eps: float) -> None:
    mech = pldp.KRR(eps, 2)
    tally = mech.simulate(np.array([700, 300]), np.random.default_rng(2))
    for method in pldp.estimation.METHODS:
        f = pldp.estimate(mech, tally, method).frequencies
        assert np.all(np.isfinite(f))
    if eps == 50.0:  # essentially no noise: the estimate is the truth
        np.testing.assert_allclose(pldp.estimate(mech, tally).frequencies, [0.7, 0.3], atol=1e-12)
