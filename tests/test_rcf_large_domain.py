"""RCF and APLDP over the large-domain oracles (OLH, HR, SS), the level in the clear.

The leveled node with hashed, Hadamard and subset levels (columns, per-level range checks,
refusals), the protocols' refusals of those oracles where the level is not sent as is, the
selection criterion, and a seeded Monte Carlo check of the combined estimate's variance.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import pldp
from pldp.channel import LeveledNode, check_columns, parse_node
from pldp.client import Client
from pldp.deploy import Spec, decode
from pldp.deploy.count import count_table
from pldp.errors import ParameterError, ReportError, SpecError
from pldp.estimation.combine import data_free_variance
from pldp.protocols import APLDP, FEBSF, RCF
from pldp.protocols.apldp import select_mechanism
from pldp.theory import expected_l2
from tests.tolerances import FLOAT_RTOL

LEVELS = [0.5, 1.0, 2.0, 4.0]


def _olh_factor(eps: float, g: int) -> float:
    """OLH's per-user variance factor :math:`(e^\\varepsilon + g - 1)^2 / ((e^\\varepsilon - 1)^2 (g - 1))`."""
    e = math.exp(eps)
    return (e + g - 1) ** 2 / ((e - 1) ** 2 * (g - 1))


#: OLH's thresholds lie on the 2**32 grid: ``weight`` is an integer, so ``q*`` is within 2**-32 of
#: ``1/g`` and ``p*`` within ``g 2**-32`` of ``e^eps / (e^eps + g - 1)``; the factor
#: ``q(1-q)/(p-q)^2`` then moves by a relative ``< 4 g 2**-32 / (q (p - q))``, at most about 1e-6 for
#: the levels here (g <= 56, q >= 1/56, p - q >= 0.1). The tolerance is that bound.
GRID_RTOL = 1e-6


def test_each_level_gets_its_own_g_and_the_weights_are_inverse_variances() -> None:
    rcf = RCF(LEVELS, 50, oracle="olh")
    assert [m.g for m in rcf.mechanisms] == [round(math.exp(e)) + 1 for e in LEVELS] == [3, 4, 8, 56]
    factors = np.array([_olh_factor(e, m.g) for e, m in zip(LEVELS, rcf.mechanisms, strict=True)])
    n = np.array([3000, 3000, 3000, 3000])
    per_level = np.array([data_free_variance(m, k)[0] for m, k in zip(rcf.mechanisms, n, strict=True)])
    np.testing.assert_allclose(per_level, factors / n, rtol=GRID_RTOL)
    w = rcf.weights(n)[:, 0]
    np.testing.assert_allclose(w, (1 / factors) / np.sum(1 / factors), rtol=GRID_RTOL)
    # an item nobody holds: the combined variance is 1 / sum(n_tau / V_tau) (here n / sum(1 / V_tau))
    p = np.r_[np.full(49, 1 / 49), 0.0]
    var = rcf.expected_variance(p, n)
    np.testing.assert_allclose(var[-1], 1 / np.sum(n / factors), rtol=GRID_RTOL)


def test_select_mechanism_scores_the_large_domain_oracles_by_their_closed_forms() -> None:
    """OLH's score is the expected l2 loss of one user at the uniform ``p``: ``d`` items of
    ``m (1 - m) / delta^2`` with ``m = q + delta / d``, from its closed-form ``p*, q*``."""
    d = 64
    for eps in (0.5, 2.0):
        name, scores = select_mechanism(eps, d, ("krr", "oue", "olh", "hr", "ss"))
        g = round(math.exp(eps)) + 1
        p, q = math.exp(eps) / (math.exp(eps) + g - 1), 1 / g
        m = q + (p - q) / d
        assert scores["olh"] == pytest.approx(d * m * (1 - m) / (p - q) ** 2, rel=GRID_RTOL)
        # the same function on the same numbers, another call: rounding only
        assert scores["hr"] == pytest.approx(expected_l2(pldp.HR(eps, d), np.full(d, 1 / d), 1), rel=FLOAT_RTOL)
        assert name == min(scores, key=lambda c: scores[c]) == "ss"  # subset selection wins at d = 64
    assert APLDP([0.5, 1.0, 4.0], 16, candidates=("krr", "olh", "hr")).choices == ("olh", "olh", "krr")
    assert APLDP([0.5, 4.0], 16).candidates == ("krr", "oue", "rappor")  # the default is unchanged


@pytest.mark.parametrize("oracle", ["olh", "hr", "ss"])
def test_perturb_tally_and_every_estimator(oracle: str) -> None:
    rcf = RCF([0.5, 2.0], 6, oracle=oracle)  # type: ignore[arg-type]
    rng = np.random.default_rng(sum(map(ord, oracle)))
    items, levels = rng.integers(0, 6, 4000), rng.integers(0, 2, 4000)
    reports = rcf.perturb(items, levels, rng)
    tally = rcf.tally(reports)
    assert tally.level_counts.tolist() == np.bincount(levels).tolist()
    assert rcf.tally(*rcf.reports_from_columns(rcf.report_columns(reports))) == tally
    truth = np.bincount(items, minlength=6) / items.size
    for method in ("unbiased", "norm_sub", "mle"):
        est = rcf.estimate(tally, method)
        # within 5 standard errors of the truth (the unbiased estimate's, for every method)
        sd = np.sqrt(rcf.expected_variance(truth, tally.level_counts))
        assert np.all(np.abs(est.frequencies - truth) < 5 * sd), method
    assert rcf.privacy().holds


def test_the_node_checks_each_report_against_its_own_level() -> None:
    rcf = RCF([0.5, 2.0], 6, oracle="olh")  # g = 3 and 8
    node = rcf.sampler()
    assert [(c.name, c.size) for c in node.columns()] == [("level", 2), ("seed", 2**31), ("value", 8)]
    assert node.level_sizes("value").tolist() == [3, 8]
    cols = node.empty_columns(3)
    cols["level"][:] = [1, 0, 1]
    cols["seed"][:] = [5, 6, 7]
    cols["value"][:] = [7, 2, 0]
    check_columns(node, cols, 3)
    cols["value"][1] = 5  # below the largest g, not below level 0's
    with pytest.raises(ReportError, match="report 1: value 5 is out of range"):
        check_columns(node, cols, 3)
    # a subset level: its own check (k items) on its own reports only
    subsets = pldp.SS(0.5, 8).sampler()
    node = LeveledNode(8, (0.5, 4.0), (subsets, pldp.KRR(4.0, 8).sampler()), "clear")
    cols = node.empty_columns(2)
    cols["level"][:] = [1, 0]
    cols["item"][0] = 3
    k = subsets.k
    cols["bits"][1] = np.packbits(np.arange(8) < k)
    check_columns(node, cols, 2)
    cols["bits"][1] = np.packbits(np.arange(8) < k + 1)
    with pytest.raises(ReportError, match=f"report 1: {k + 1} items, not k = {k}"):
        check_columns(node, cols, 2)


def test_a_hidden_level_over_levels_of_another_format_and_a_sketch_are_refused() -> None:
    # RCF's OLH levels have their own g (3 and 8): hidden, the hash range would tell the level
    root = RCF([0.5, 2.0], 6, oracle="olh").sampler().to_json()
    hidden = {**root, "level_report": "hidden", "level_epsilon": "inf"}
    with pytest.raises(SpecError, match="with the level hidden, every level's node must have the same kind and size"):
        parse_node(json.loads(json.dumps(hidden)))
    sketch = {**root, "items": [pldp.CMS(0.5, 6).sampler().to_json(), root["items"][1]]}
    with pytest.raises(SpecError, match="items must be direct, unary, hashed, hadamard or subset nodes"):
        parse_node(sketch)
    with pytest.raises(ParameterError, match="derived for k-RR and unary reports only"):
        FEBSF(LEVELS, 0.5, 6, oracle="olh")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="derived for k-RR and unary reports only"):
        FEBSF(LEVELS, 0.5, 6, oracle="ss")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="oracle must be one of"):
        RCF(LEVELS, 6, oracle="blh")  # type: ignore[arg-type]


@pytest.mark.slow
def test_olh_levels_combine_without_bias_at_the_predicted_variance() -> None:
    """Seeded Monte Carlo: RCF-OLH at four budgets with unequal users per level, users i.i.d. from
    ``p`` (the cells multinomial per level, then :meth:`RCF.simulate`): the combined unbiased
    estimate's mean is ``p`` and its variance :meth:`RCF.expected_variance`.

    Tolerances. Over ``R`` trials the mean is off by ``N(0, sigma^2 / R)``; the sample variance
    ``s^2`` of near-normal estimates (sums of thousands of Bernoulli draws) has
    ``(R - 1) s^2 / sigma^2 ~ chi^2_{R-1}``. Each of the ``2 d`` checks is two-sided at
    ``1e-5 / (2 d)`` (Bonferroni: a false failure once in 100,000 runs), the variance ratio checked
    against the chi-square quantiles themselves.
    """
    d, trials = 8, 2000
    rcf = RCF(LEVELS, d, oracle="olh")
    p = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.08, 0.07, 0.0])
    n = np.array([4000, 2500, 1500, 800])
    rng = np.random.default_rng(20240517)
    est = np.empty((trials, d))
    for r in range(trials):
        cells = np.stack([rng.multinomial(k, p) for k in n])
        est[r] = rcf.estimate(rcf.simulate(cells, rng), "unbiased").frequencies
    sigma2 = rcf.expected_variance(p, n)
    alpha = 1e-5 / (2 * d)
    z = stats.norm.isf(alpha / 2)
    assert np.all(np.abs(est.mean(axis=0) - p) <= z * np.sqrt(sigma2 / trials))
    ratio = est.var(axis=0, ddof=1) / sigma2
    lo, hi = stats.chi2.ppf([alpha / 2, 1 - alpha / 2], trials - 1) / (trials - 1)
    assert np.all((lo <= ratio) & (ratio <= hi)), (ratio, lo, hi)
    # the item nobody holds: 1 / sum(n_tau / V_tau) with OLH's closed-form V_tau
    factors = np.array([_olh_factor(e, m.g) for e, m in zip(LEVELS, rcf.mechanisms, strict=True)])
    np.testing.assert_allclose(sigma2[-1], 1 / np.sum(n / factors), rtol=GRID_RTOL)


@pytest.mark.parametrize(
    "oracle",
    [
        APLDP([0.5, 1.0, 4.0], 16, candidates=("krr", "olh", "hr")),  # OLH (g = 3, 4) and k-RR levels
        RCF([0.5, 2.0], 6, oracle="ss"),
    ],
    ids=["apldp-olh-krr", "rcf-ss"],
)
def test_deployed_reports_tally_alike_from_json_arrow_and_files(oracle: pldp.FrequencyOracle) -> None:
    pytest.importorskip("pyarrow")
    spec = Spec.from_mechanism(oracle, question="q?")
    rng = np.random.default_rng(7)
    words = np.random.default_rng(8)
    client = Client(spec, random=lambda n: words.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32))
    batch = client.reports(rng.integers(0, oracle.d, 400), level=rng.integers(0, len(oracle.levels), 400))
    tally = decode(spec, batch.to_json())
    assert tally.n == 400 and decode(spec, batch.to_arrow()) == tally
    assert count_table(spec, batch.to_arrow()) == tally
    data = batch.to_json()
    level0 = next(r for r in data["reports"] if r["payload"]["level"] == 0)
    if isinstance(level0["payload"]["data"], dict):  # OLH at level 0: g = 3, the largest g is 4
        level0["payload"]["data"]["value"] = 3
        with pytest.raises(ReportError, match="value 3 is out of range"):
            decode(spec, data)


def test_the_audit_statistic_of_two_levels_of_different_kinds_is_refused_not_a_crash() -> None:
    """APLDP may pick HR at one level and k-RR at another (one index column each): a pair across the
    two levels has no common statistic, and the audit says so (it used to call k-RR's rule on HR)."""
    from pldp.audit.events import statistic
    from pldp.audit.pairs import Input

    m = APLDP([0.5, 4.0], 1000, candidates=("krr", "hr"))
    assert m.choices == ("hr", "krr")
    with pytest.raises(ParameterError, match="different kinds"):
        statistic(m.sampler(), Input(0, 0), Input(0, 1))
