"""Numerics at the edges the design names: epsilon from 1e-3 to 50, domains from 2 to 100,000."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pldp
from pldp.channel.sampling import GRID
from tests.conftest import assert_grid_budgets, assert_grid_channel
from tests.tolerances import FLOAT_RTOL


@pytest.mark.parametrize("eps", [1e-3, 1.0, 50.0])
def test_large_domain_end_to_end(eps: float) -> None:
    rng = np.random.default_rng(1)
    d = 100_000
    b = pldp.ItemBudgets.random_levels(d, eps, rng)
    mech = pldp.IPRR(b)
    rep = mech.privacy()
    assert rep.holds
    # every budget met exactly on the 2^-32 grid, the keep threshold as large as the grid allows
    assert_grid_channel(mech)
    assert_grid_budgets(mech)
    k_star = GRID / (1.0 + float(np.sum(1.0 / np.expm1(b.epsilons))))  # delta* 2^32
    if eps == 1e-3:  # delta* 2^32 = 79.4: K = 79, and the budgets are met to within 1 / 79
        assert mech.keep_threshold == math.floor(k_star) == 79
        assert np.all(rep.realised > b.epsilons * (1 - 1 / 79))
    if eps == 1.0:
        # rounding K r_y up costs K at most d / (1 + sum r) steps (5.2 here) and the integer one more;
        # the realised epsilons move relatively by no more than K does (ln(1 + x) is concave)
        lost = d * k_star / GRID + 1
        assert k_star - lost < mech.keep_threshold <= k_star
        np.testing.assert_allclose(rep.realised, b.epsilons, rtol=2 * lost / k_star)
        assert np.all(rep.realised > b.epsilons * (1 - 3e-5))  # rounding each weight up alone: 1.846 for the 2.0s
    if eps == 50.0:  # the cap: budgets 50..100 are beyond ln(2^32 + 1), every weight is 1
        assert np.all(mech.weights == 1) and mech.keep_threshold == GRID - d
        np.testing.assert_allclose(rep.realised, math.log(GRID - d + 1), rtol=FLOAT_RTOL)  # the same log
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
