"""Pooling the budget levels of a heavy-hitter protocol: by inverse variance, or robustly (every report
moves an estimate alike whatever level it claims), and what fake users claiming the largest budget
gain under each (:func:`pldp.heavy.pooled.absent_weights`, :func:`pldp.attacks.heavy.pooled_expected_share`)."""

from __future__ import annotations

import numpy as np
import pytest

import pldp
from pldp.attacks.heavy import pem_fake_reports, pooled_expected_share
from pldp.errors import ParameterError
from pldp.heavy.pooled import absent_weights, level_nodes, pooled_estimates, randomize
from tests.heavy_answers import population
from tests.tolerances import FLOAT_RTOL


def test_robust_weights_give_every_report_the_same_influence_and_one_level_both_poolings_agree() -> None:
    nodes = level_nodes(np.array([0.5, 1.0, 4.0]))
    n = np.array([30_000, 5_000, 1_000])
    w, _ = absent_weights(nodes, n, "robust")
    influence = [w[t] * (1 - q) / (n[t] * (p - q)) for t, (p, q) in enumerate(node.support for node in nodes)]
    np.testing.assert_allclose(influence, influence[0], rtol=FLOAT_RTOL)  # a supporting report moves it alike
    wv, _ = absent_weights(nodes, n, "variance")
    assert wv[2] / w[2] > 3  # by inverse variance, the largest budget's reports weigh several times more
    one = level_nodes(np.array([2.0]))
    (wr, ser), (wv1, sev) = absent_weights(one, np.array([500]), "robust"), absent_weights(one, np.array([500]))
    assert wr.tolist() == wv1.tolist() == [1.0] and ser == pytest.approx(sev, rel=FLOAT_RTOL)
    with pytest.raises(ParameterError, match="pooling must be one of"):
        absent_weights(one, np.array([500]), "median")


@pytest.mark.parametrize("pooling", ["variance", "robust"])
def test_the_standard_error_at_an_absent_item_is_the_spread_of_estimates_of_absent_items(pooling: str) -> None:
    """2,000 fingerprints nobody holds, estimated from 40,000 reports at two levels: their spread
    matches the stated standard error (the sample sd of k values is within ~5 / sqrt(2k) = 8 % of it)."""
    nodes = level_nodes(np.array([1.0, 4.0]))
    rng = np.random.default_rng(17)
    level = rng.integers(0, 2, 40_000)
    items = rng.integers(0, 2**31 - 1, 40_000)
    rows = np.zeros((40_000, 3), dtype=np.int64)
    rows[:, 0] = level
    for t, node in enumerate(nodes):
        at = np.flatnonzero(level == t)
        part = np.zeros((at.size, 3), dtype=np.int64)
        randomize(part, 1, (node,), np.zeros(at.size, dtype=np.int64), items[at], rng)
        rows[at, 1:] = part[:, 1:]
    absent = np.arange(2**30, 2**30 + 2_000)  # none of the users' items, almost surely
    f, _, se = pooled_estimates(nodes, rows, absent, pooling=pooling)
    assert abs(float(f.std(ddof=1)) / se - 1) < 5 / np.sqrt(2 * absent.size)


def test_fakes_claiming_the_largest_budget_gain_less_under_robust_pooling_as_the_closed_form_says() -> None:
    """PEM at levels 1 and 4, 20,000 honest users at each, and 800 fakes (2 %) promoting "zzz" at the
    largest budget (the honest users' levels drawn apart from their answers): the planted answers
    and the target are found under each pooling, the target's estimate its closed form within 4
    standard errors; robust pooling lowers it (7.7 % to 4.9 % expected) and raises the floor."""
    pem = pldp.PEM([1.0, 4.0], max_bytes=4)
    rng = np.random.default_rng(2029)
    answers = population({"spam": 0.2, "eggs": 0.15}, 40_000, rng, tail=2_000)
    honest = pem.perturb(answers, rng, level=rng.permutation(np.repeat([0, 1], 20_000)))  # apart from the answers
    attacked = np.vstack([honest, pem_fake_reports(pem, "zzz", 800, rng)])
    found = {}
    for pooling in ("variance", "robust"):
        d = pem.discover(attacked, top=5, width=10, pooling=pooling)
        assert {"spam", "eggs", "zzz"} <= set(d.confident) and d.estimate.info["pooling"] == pooling
        i = d.answers.index("zzz")
        expected = pooled_expected_share(pem.nodes, [20_000, 20_000], 800, pooling=pooling)
        assert abs(d.estimate.frequencies[i] - expected) < 4 * d.estimate.std_error[i], (pooling, expected)
        found[pooling] = (expected, d.floor)
    assert found["robust"][0] < 0.7 * found["variance"][0] and found["robust"][1] > 2 * found["variance"][1]
