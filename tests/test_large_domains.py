"""The oracles for large domains (OLH, HR, SS) against theory on real reports: unbiased estimates with
the stated variance, one test for the three; simulate's marginals, one test for OLH and HR."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pldp.mechanisms.hadamard import HR
from pldp.mechanisms.hashed import OLH
from pldp.mechanisms.subset import SS

#: Standard normal two-sided tail beyond 4.5: 6.8e-6.
_TAIL_4_5 = math.erfc(4.5 / math.sqrt(2))


def theory_variance(m: Any, f: np.ndarray, n: int) -> np.ndarray:
    """The unbiased estimate's variance per item, from the counts' binomial marginals:
    ``(f p*(1 - p*) + (1 - f) q*(1 - q*)) / (n (p* - q*)^2)`` (the unary oracles' form)."""
    p, q = m.sampler().support
    return np.asarray((f * p * (1 - p) + (1 - f) * q * (1 - q)) / (n * (p - q) ** 2))


@pytest.mark.parametrize("m", [OLH(1.0, 64), HR(1.0, 60), SS(1.0, 64)], ids=repr)
def test_the_unbiased_estimate_is_unbiased_with_the_stated_variance(m: Any) -> None:
    """Real reports (OLH's hash family's collisions included), 80 runs of 4,000 users over ``d``
    items: every item's mean estimate within 4.5 standard errors of the truth, and the pooled ratio
    of the empirical to the theoretical variance within 5 of its standard deviations
    (``sqrt(2 / 79 / d)``, 0.02) of 1.

    False alarms: a mean of 80 runs is close to normal, so each item's ``|z| > 4.5`` has probability
    ``6.8e-6`` and the largest of ``d <= 64`` items (Bonferroni) at most ``64 * 6.8e-6 = 4.4e-4``; the
    pooled ratio's 5 standard deviations, ``5.7e-7`` under its normal approximation: a family-wise
    alpha under ``5e-4`` per oracle."""
    d, n, runs = m.d, 4000, 80
    assert d * _TAIL_4_5 < 4.5e-4  # the bound the docstring states
    counts = np.zeros(d, dtype=int)
    counts[:4] = [1600, 800, 400, 200]
    counts[4:] = np.diff(np.linspace(0, n - counts[:4].sum(), d - 3).astype(int))
    f = counts / n
    x = np.repeat(np.arange(d), counts)
    rng = np.random.default_rng(20261130)
    est = np.array([m.estimate(m.tally(m.perturb(x, rng))).frequencies for _ in range(runs)])
    var = theory_variance(m, f, n)
    z = (est.mean(axis=0) - f) / np.sqrt(var / runs)
    assert np.max(np.abs(z)) < 4.5
    ratio = float(np.mean(est.var(axis=0, ddof=1) / var))
    assert abs(ratio - 1) < 5 * math.sqrt(2 / (runs - 1) / d)


@pytest.mark.parametrize("m", [OLH(1.0, 20), HR(1.0, 20)], ids=repr)
def test_simulate_has_the_reports_marginals(m: Any) -> None:
    """simulate's support counts have the real counts' marginals, Bin(t, p*) + Bin(n - t, q*): 400
    draws, means within 4.5 standard errors, the pooled variance ratio within 5 of its standard
    deviations (sqrt(2 / 399 / 20) = 0.016) of 1 (HR: items of few and of many users take both of its
    paths, K = 32). False alarms: the largest of 20 items' |z| over 4.5 at most 20 * 6.8e-6 = 1.4e-4
    (Bonferroni), the ratio's 5 sd 5.7e-7 (normal approximations). SS's counts have their own test
    (tests/test_ss.py: its per-user counts sum to n k, simulate's do not)."""
    t = np.arange(20) * 10
    rng = np.random.default_rng(5)
    sims = np.array([m.simulate(t, rng).counts for _ in range(400)])
    p, q = m.sampler().support
    n = t.sum()
    mean = t * p + (n - t) * q
    var = t * p * (1 - p) + (n - t) * q * (1 - q)
    assert np.max(np.abs(sims.mean(axis=0) - mean) / np.sqrt(var / 400)) < 4.5
    ratio = float(np.mean(sims.var(axis=0, ddof=1) / var))
    assert abs(ratio - 1) < 5 * math.sqrt(2 / 399 / 20)
