"""Local hashing: the hash family, the node's program and claim, and OLH's estimates against theory."""

from __future__ import annotations

import math
from typing import Any

import jsonschema_rs
import numpy as np
import pytest

from pldp.channel import check_claims
from pldp.channel.hashed import SEEDS, HashedNode, collision_rates, hash_values, seed_shift, xxh32_index
from pldp.channel.sampling import GRID
from pldp.channel.schema import node_schema
from pldp.channel.words import Cursor
from pldp.errors import ParameterError, ReportError, SpecError
from pldp.mechanisms.hashed import FLH_SEEDS, OLH, olh_g, support_counts
from pldp.testing import OracleCase, parametrize_with_checks
from pldp.testing.cases import COUNTS, VARIANT
from tests.test_large_domains import theory_variance

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


def test_the_variance_factor_is_wang_et_al_s() -> None:
    """V = (e^eps + g - 1)^2 / ((e^eps - 1)^2 (g - 1)) per report at an absent item: the estimate's
    reported variance at the grid's p* matches it to the grid's rounding.

    ``weight`` is within one step of ``2**32 / (e^eps + g - 1)``, so ``p* = (2**32 - (g - 1) weight) / 2**32``
    moves by at most ``(g - 1) 2**-32`` from its ideal, ``q* = 1/g`` not at all; ``V`` moves by the
    relative ``2 dp / (p* - q*)`` to first order (the second order is ``dp / (p* - q*)`` smaller, under
    ``1e-8``): the tolerance, with one percent for it and the float arithmetic."""
    for eps, g in ((1.0, 3), (2.0, 8), (4.0, 2)):
        m = OLH(eps, 100, g=g)
        v = (math.exp(eps) + g - 1) ** 2 / ((math.exp(eps) - 1) ** 2 * (g - 1))
        p, q = m.sampler().support
        rel = 1.01 * 2 * (g - 1) / GRID / (p - q)
        assert q * (1 - q) / (p - q) ** 2 == pytest.approx(v, rel=rel)


# ---------------------------------------------------------------------------- FLH: a small family
def test_a_small_family_s_program_takes_the_top_bits_of_the_first_word() -> None:
    """FLH's seed is the first word's top log2(S) bits: 2**8 seeds read w0 >> 24, OLH's w0 >> 1."""
    node = OLH(1.0, 100, seeds=2**8).sampler()
    first = np.array([0, 0x00FFFFFF, 0x01000000, 0xABCDEF12, 0xFFFFFFFF], dtype=np.uint32)
    n = first.size
    words = np.stack([first, np.zeros(n, dtype=np.uint32)], axis=1).ravel()  # w1 = 0 < keep: H_s(x) is kept
    out = node.empty_columns(n)
    node.draw(np.full(n, 42), Cursor(words, 2 * np.arange(n)), np.arange(n), out)
    assert out["seed"].tolist() == [0, 0, 1, 0xAB, 0xFF]
    assert out["value"].tolist() == hash_values(42, out["seed"], node.g).tolist()
    assert seed_shift(SEEDS) == 1 and seed_shift(2) == 31


def test_a_small_family_s_json_names_its_size_and_refuses_others() -> None:
    olh, flh = OLH(1.0, 300).sampler(), OLH(1.0, 300, seeds=2**10).sampler()
    assert "seeds" not in olh.to_json()  # OLH's form (and its spec ids and fingerprints) as before
    assert flh.to_json()["seeds"] == 2**10 and list(flh.to_json())[4] == "seeds"
    assert HashedNode.parse(flh.to_json(), "root") == flh
    assert [c.size for c in flh.columns()] == [2**10, flh.g]
    schema = HashedNode.json_schema(lambda name: {})["properties"]["seeds"]
    assert schema["enum"][0] == 2 and schema["enum"][-1] == SEEDS // 2 and len(schema["enum"]) == 30
    validator = jsonschema_rs.Draft202012Validator(node_schema())  # the schema agrees with parse
    assert validator.is_valid(flh.to_json()) and validator.is_valid(olh.to_json())
    for seeds, why in (
        (3, "not a power of two"),
        (6, "not a power"),
        (1, "outside"),
        (2**31, "outside"),  # OLH's family is written by leaving seeds out: one form per node
        (2**32, "outside"),
        (True, "integer"),
    ):
        with pytest.raises(SpecError, match=why):
            HashedNode.parse({**flh.to_json(), "seeds": seeds}, "root")
        assert not validator.is_valid({**flh.to_json(), "seeds": seeds})
        if not isinstance(seeds, bool) and seeds != 2**31:
            with pytest.raises(ParameterError):
                OLH(1.0, 300, seeds=seeds)


def test_flh_and_blh_are_settings_of_olh() -> None:
    flh, blh = OLH.flh(2.0, 50), OLH.blh(2.0, 50)
    assert (flh.seeds, flh.g) == (FLH_SEEDS, olh_g(2.0)) and (blh.seeds, blh.g) == (SEEDS, 2)
    assert OLH.from_params(flh.params()) == flh and flh.fingerprint != OLH(2.0, 50).fingerprint
    assert "seeds" not in OLH(2.0, 50).params() and repr(flh).endswith(f"seeds={FLH_SEEDS})")
    with pytest.raises(ReportError, match=f"seed {FLH_SEEDS} is not in"):
        flh.tally(np.array([[0, 0], [FLH_SEEDS, 0]]))
    # the public count checks its input as the tally does (a seed past the family would index past its table)
    with pytest.raises(ReportError, match=f"report 1: seed {FLH_SEEDS} is not in") as err:
        support_counts(np.array([[0, 0], [FLH_SEEDS, 0]]), 50, flh.g, FLH_SEEDS)
    assert err.value.index == 1
    with pytest.raises(ReportError, match="report 0: value -1"):
        support_counts(np.array([[0, -1]]), 50, flh.g)


@pytest.mark.parametrize(("n", "seeds", "g"), [(3000, 2**6, 3), (3000, 2**8, 8), (100, 2**10, 5), (5000, 2**4, 2**5)])
def test_a_small_family_s_counts_are_the_direct_count(n: int, seeds: int, g: int) -> None:
    """The grouped count (a (seed, value) table, S d hashes) equals the report-by-report count, also
    with fewer reports than seeds (then the direct path runs) and with g a power of two (a mask)."""
    d = 70
    rng = np.random.default_rng(n + seeds + g)
    rep = np.stack([rng.integers(0, seeds, n), rng.integers(0, g, n)], axis=1)
    direct = [int(np.sum(hash_values(v, rep[:, 0], g) == rep[:, 1])) for v in range(d)]
    assert support_counts(rep, d, g, seeds).tolist() == direct
    assert support_counts(rep, d, g).tolist() == direct  # OLH's family: the n d path


def test_collision_rates_over_a_whole_small_family_are_binomial() -> None:
    """Over all S seeds, 300 random pairs' collision rates depart from 1/g as S independent draws
    would: mean within 4.5 standard errors of 1/g, and the mean squared departure over
    (1/g)(1 - 1/g)/S within 5 of its standard deviations (sqrt(2/300) = 0.082) of 1, from 2**10 to
    2**17 seeds (so the departures shrink as 1/sqrt(S), 11 times from the first to the last)."""
    rng = np.random.default_rng(20261130)
    pairs = rng.integers(0, 10**6, size=(300, 2))
    for seeds, g in ((2**10, 4), (2**14, 3), (2**17, 8)):
        dep = collision_rates(pairs, seeds, g) - 1 / g
        var = (1 / g) * (1 - 1 / g) / seeds
        assert abs(dep.mean()) < 4.5 * math.sqrt(var / pairs.shape[0])
        assert abs(float(np.mean(dep**2)) / var - 1) < 5 * math.sqrt(2 / pairs.shape[0])


def _family_mean(m: OLH, f: np.ndarray) -> np.ndarray:
    """The unbiased estimate's exact expectation under a given family: f_v + g/(g-1) sum_x f_x (c_xv - 1/g)."""
    d, g = f.size, m.g
    i, j = np.triu_indices(d, 1)
    c = np.full((d, d), 1 / g)
    c[i, j] = c[j, i] = collision_rates(np.stack([i, j], axis=1), m.seeds, g)
    np.fill_diagonal(c, 1 / g)
    return f + g / (g - 1) * (f @ (c - 1 / g))


def test_flh_estimates_are_centred_on_the_family_s_own_mean() -> None:
    """FLH over 2**8 seeds, 60 runs of 20,000 users, 40 items, half of them on item 0: every item's
    mean estimate within 4.5 standard errors of the exact mean under the family (its collision
    rates counted over all seeds), and that mean departs from the truth by the predicted bias
    (sd sqrt(sum_x f_x^2 / ((g - 1) S)) = 0.021 here): some item's departure is over 4.5 of the
    runs' standard errors, so the family's own mean is what the first assertion could tell apart.
    False alarms of the first: the largest of 40 items' |z| over 4.5, at most 40 * 6.8e-6 = 2.7e-4
    (Bonferroni, normal approximation)."""
    m, n, runs, d = OLH(1.0, 40, seeds=2**8), 20_000, 60, 40
    counts = np.full(d, n // 2 // (d - 1))
    counts[0] = n - counts[1:].sum()
    f = counts / n
    x = np.repeat(np.arange(d), counts)
    rng = np.random.default_rng(20261130)
    est = np.array([m.estimate(m.tally(m.perturb(x, rng))).frequencies for _ in range(runs)])
    se = np.sqrt(theory_variance(m, f, n) / runs)
    mean = _family_mean(m, f)
    assert np.max(np.abs(est.mean(axis=0) - mean) / se) < 4.5
    assert np.max(np.abs(mean - f) / se) > 4.5
    predicted = math.sqrt(float(np.sum(f[1:] ** 2) + f[0] ** 2) / ((m.g - 1) * m.seeds))
    spread = float(np.std(mean[1:] - f[1:]))  # items 1.. carry item 0's collisions: about f_0 / sqrt((g-1) S)
    assert 0.5 * predicted < spread < 1.5 * predicted


@parametrize_with_checks(
    [
        OracleCase(
            lambda: OLH.flh(1.0, 5),
            data=(COUNTS,),
            variant=lambda: OLH.flh(VARIANT, 5),
            bad=(lambda: OLH.flh(1.0, 5, seeds=3), lambda: OLH.flh(1.0, 5, seeds=2**32)),
            name="flh",
        )
    ]
)
def test_flh_conforms(case: OracleCase, check: Any) -> None:
    check(case)


def test_deployed_flh_reports_decode_to_the_oracle_s_tally_and_refuse_a_seed_outside_the_family() -> None:
    """The client's reports of an FLH spec (OS randomness) hold seeds of the family only; ``decode``
    tallies them as the oracle does and refuses a seed the family lacks (its column's size)."""
    from pldp.client import Client
    from pldp.deploy import Spec, decode
    from pldp.deploy.decode import native_reports

    m = OLH.flh(1.0, 300, seeds=2**6)
    spec = Spec.from_mechanism(m, question="items")
    batch = Client(spec).reports(np.arange(3000) % 300)
    (rep,) = native_reports(spec, batch)
    assert 0 <= rep[:, 0].min() and rep[:, 0].max() < 2**6
    assert decode(spec, batch).counts.tolist() == m.tally(rep).counts.tolist()
    batch.columns["seed"][0] = 2**6
    with pytest.raises(ReportError, match="seed 64"):
        decode(spec, batch)
