"""Local hashing: the hash family, the node's program and claim, and OLH's estimates against theory."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pldp.channel import check_claims
from pldp.channel.hashed import SEEDS, HashedNode, hash_values, xxh32_index
from pldp.channel.sampling import GRID
from pldp.channel.words import Cursor
from pldp.errors import ParameterError, ReportError, SpecError
from pldp.mechanisms.hashed import OLH, olh_g, support_counts

#: XXH32 of ``x.to_bytes(4, "little")`` with ``seed``, from the reference implementation
#: (``xxhash.xxh32_intdigest``, python-xxhash 3.6 over libxxhash 0.8).
REFERENCE = [
    (0, 0, 148298089),
    (1, 0, 4089149075),
    (0, 1, 2012518600),
    (12345, 987654321, 3404038053),
    (2**31 - 1, 2**31 - 1, 551811927),
    (7, 42, 3531369764),
]


def test_the_family_is_xxh32_of_the_index_bytes() -> None:
    x, s, want = (np.array(c) for c in zip(*REFERENCE, strict=True))
    assert xxh32_index(x, s).tolist() == want.tolist()
    assert hash_values(x, s, 7).tolist() == (want % 7).tolist()


@pytest.mark.parametrize(("i", "j", "g"), [(0, 1, 7), (5, 1000, 2), (12345, 54321, 13)])
def test_two_items_collide_with_probability_one_over_g(i: int, j: int, g: int) -> None:
    """What the estimators assume of the family, over 2**20 consecutive seeds: within 4.5
    binomial standard errors of 1/g (a real departure of 1e-3 would be 3 standard errors)."""
    seeds = np.arange(1 << 20)
    rate = float(np.mean(hash_values(i, seeds, g) == hash_values(j, seeds, g)))
    se = math.sqrt((1 / g) * (1 - 1 / g) / seeds.size)
    assert abs(rate - 1 / g) < 4.5 * se


def test_the_program_maps_words_to_the_seed_and_the_response() -> None:
    node = OLH(1.0, 100).sampler()
    keep, weight, g = node.keep, node.weight, node.g
    second = [0, keep - 1, keep, keep + weight - 1, keep + weight, GRID - 1]
    words = np.array([w for v in second for w in (0xFFFFFFFF, v)], dtype=np.uint32)
    n = len(second)
    out = node.empty_columns(n)
    node.draw(np.full(n, 42), Cursor(words, 2 * np.arange(n)), np.arange(n), out)
    own = int(hash_values(42, SEEDS - 1, g))
    assert out["seed"].tolist() == [SEEDS - 1] * n
    assert out["value"].tolist() == [own, own, 0, 0, 1, g - 1]


def test_the_claim_is_exact_and_can_fail() -> None:
    node = OLH(2.0, 1000).sampler()
    v = check_claims(node)
    assert v.holds and v.rows[0].realised <= 2.0
    # realised ratio (weight + keep) / weight: a claim just below it fails
    tight = HashedNode(node.d, node.g, node.family, node.keep, node.weight, v.rows[0].realised * (1 - 1e-9))
    assert not check_claims(tight).holds
    assert OLH(2.0, 1000).privacy().holds


def test_the_json_form_round_trips_and_refuses_bad_nodes() -> None:
    node = OLH(1.5, 300, g=5).sampler()
    assert node.takes_one_item and not (node.takes_itemsets or node.multi_attribute or node.memoized)
    assert [(c.name, c.size) for c in node.columns("a0.")] == [("a0.seed", SEEDS), ("a0.value", 5)]
    assert HashedNode.parse(node.to_json(), "root") == node
    bad = [
        {**node.to_json(), "keep": node.keep + 1},
        {**node.to_json(), "family": "md5"},
        {**node.to_json(), "g": 1},
        {**node.to_json(), "epsilon": "inf"},
        {k: v for k, v in node.to_json().items() if k != "weight"},
    ]
    for obj in bad:
        with pytest.raises(SpecError):
            HashedNode.parse(obj, "root")


def test_parameters_and_refusals() -> None:
    assert olh_g(math.log(7)) == 8 and OLH(0.1, 10).g == 2  # round(e^eps) + 1, at least 2 (BLH)
    m = OLH(2.0, 50, g=3)
    assert OLH.from_params(m.params()) == m and m.fingerprint == OLH(2.0, 50, g=3).fingerprint
    for make in (lambda: OLH(0.0, 5), lambda: OLH(1.0, 1), lambda: OLH(1.0, 5, g=1), lambda: OLH(1.0, 5, g=2**25)):
        with pytest.raises(ParameterError):
            make()
    with pytest.raises(ReportError, match="report 1: value 3"):
        m.tally(np.array([[0, 0], [5, 3]]))


def test_same_seed_same_reports_and_counts_match_a_direct_count() -> None:
    m = OLH(1.0, 40)
    x = np.arange(500) % 40
    a, b = m.perturb(x, np.random.default_rng(7)), m.perturb(x, np.random.default_rng(7))
    assert a.tobytes() == b.tobytes()
    direct = [sum(int(hash_values(v, s, m.g)) == y for s, y in a) for v in range(40)]
    assert support_counts(a, 40, m.g).tolist() == direct


def _theory_variance(m: OLH, f: np.ndarray, n: int) -> np.ndarray:
    p, q = m.sampler().support
    return (f * p * (1 - p) + (1 - f) * q * (1 - q)) / (n * (p - q) ** 2)


def test_the_unbiased_estimate_is_unbiased_with_the_stated_variance() -> None:
    """Real reports (the hash family's collisions included), 80 runs of 4,000 users over 64 items:
    every item's mean estimate within 4.5 standard errors of the truth, and the pooled ratio of
    the empirical to the theoretical variance within 5 of its standard deviations
    (sqrt(2 / 79 / 64) = 0.02) of 1."""
    m, n, runs = OLH(1.0, 64), 4000, 80
    counts = np.zeros(64, dtype=int)
    counts[:4] = [1600, 800, 400, 200]
    counts[4:] = np.diff(np.linspace(0, n - counts[:4].sum(), 61).astype(int))
    f = counts / n
    x = np.repeat(np.arange(64), counts)
    rng = np.random.default_rng(20261130)
    est = np.array([m.estimate(m.tally(m.perturb(x, rng))).frequencies for _ in range(runs)])
    var = _theory_variance(m, f, n)
    z = (est.mean(axis=0) - f) / np.sqrt(var / runs)
    assert np.max(np.abs(z)) < 4.5
    ratio = float(np.mean(est.var(axis=0, ddof=1) / var))
    assert abs(ratio - 1) < 5 * math.sqrt(2 / (runs - 1) / 64)


def test_the_variance_factor_is_wang_et_al_s() -> None:
    """V = (e^eps + g - 1)^2 / ((e^eps - 1)^2 (g - 1)) per report at an absent item: the estimate's
    reported variance at the grid's p* matches it to the grid's rounding (2**-32 relative to weight)."""
    for eps, g in ((1.0, 3), (2.0, 8), (4.0, 2)):
        m = OLH(eps, 100, g=g)
        v = (math.exp(eps) + g - 1) ** 2 / ((math.exp(eps) - 1) ** 2 * (g - 1))
        p, q = m.sampler().support
        assert q * (1 - q) / (p - q) ** 2 == pytest.approx(v, rel=1e-6)  # p* moves by < g/2**32 from its ideal


def test_simulate_has_the_reports_law() -> None:
    """simulate's support counts have the real counts' means (to 4.5 standard errors over 400 draws)."""
    m, t = OLH(1.0, 20), np.arange(20) * 10
    rng = np.random.default_rng(5)
    sims = np.array([m.simulate(t, rng).counts for _ in range(400)])
    p, q = m.sampler().support
    n = t.sum()
    mean = t * p + (n - t) * q
    sd = np.sqrt(t * p * (1 - p) + (n - t) * q * (1 - q))
    assert np.max(np.abs(sims.mean(axis=0) - mean) / (sd / 20)) < 4.5
