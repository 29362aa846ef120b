"""Numerics at the edges the design names: epsilon from 1e-3 to 50, domains from 2 to 100,000."""

from __future__ import annotations

import numpy as np
import pytest

import pldp


@pytest.mark.parametrize("eps", [1e-3, 1.0, 50.0])
def test_large_domain_end_to_end(eps: float) -> None:
    rng = np.random.default_rng(1)
    d = 100_000
    b = pldp.ItemBudgets.random_levels(d, eps, rng)
    mech = pldp.IPRR(b)
    rep = mech.privacy()
    assert rep.holds
    np.testing.assert_allclose(rep.realised, b.epsilons, rtol=1e-12)
    counts = rng.multinomial(200_000, pldp.datasets.synthetic.zipf_probabilities(d, 1.1))
    tally = mech.simulate(counts, rng)
    assert tally.n == 200_000 and tally.counts.sum() == 200_000
    reports = mech.perturb(np.repeat(np.arange(d), counts), rng)
    assert reports.min() >= 0 and reports.max() < d
    for method in pldp.estimation.METHODS:
        e = pldp.estimate(mech, tally, method)
        assert np.all(np.isfinite(e.frequencies)) and np.all(np.isfinite(e.variance))
        assert e.frequencies.sum() == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("eps", [1e-3, 50.0])
def test_two_items(eps: float) -> None:
    mech = pldp.KRR(eps, 2)
    tally = mech.simulate(np.array([700, 300]), np.random.default_rng(2))
    for method in pldp.estimation.METHODS:
        f = pldp.estimate(mech, tally, method).frequencies
        assert np.all(np.isfinite(f))
    if eps == 50.0:  # essentially no noise: the estimate is the truth
        np.testing.assert_allclose(pldp.estimate(mech, tally).frequencies, [0.7, 0.3], atol=1e-12)
