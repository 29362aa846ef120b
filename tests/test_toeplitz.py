"""The Toeplitz hash family of OLH: exact pairwise independence, the node's exact claim, the server's
spectral count against the direct one, and the estimates' mean and variance against OLH's theory."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pldp.attacks import expected_gain, fake_reports
from pldp.channel import check_claims
from pldp.channel.hashed import SEEDS, HashedNode, hash_values
from pldp.channel.toeplitz import item_bits, toeplitz_fits, toeplitz_values
from pldp.errors import ParameterError, SpecError
from pldp.mechanisms.hashed import OLH, support_counts, toeplitz_g
from pldp.mechanisms.toeplitz import toeplitz_support
from pldp.testing import OracleCase, parametrize_with_checks
from pldp.testing.cases import COUNTS, VARIANT
from tests.deploy_cases import words
from tests.test_large_domains import theory_variance


def _family_bits(d: int, g: int) -> int:
    """The seed bits the family reads: ``log2(g)`` of ``b`` and ``log2(g) + B - 1`` of ``tau``."""
    return 2 * (g.bit_length() - 1) + item_bits(d) - 1


def _pair_laws(d: int, g: int, seeds: np.ndarray) -> np.ndarray:
    """Per pair ``x < x'``, the counts of ``(H(x), H(x'))`` over ``seeds``: shape ``(pairs, g * g)``."""
    h = toeplitz_values(np.arange(d)[None, :], seeds[:, None], g).astype(np.int64)
    i, j = np.triu_indices(d, 1)
    cells = h[:, i] * g + h[:, j]  # (seeds, pairs)
    offsets = np.arange(i.size) * g * g
    return np.bincount((cells + offsets).ravel(), minlength=i.size * g * g).reshape(i.size, g * g)


@pytest.mark.parametrize(("d", "g"), [(2, 2), (5, 2), (8, 4), (50, 8), (33, 16)])
def test_every_pair_is_uniform_over_the_g_squared_hash_pairs_over_the_whole_family(d: int, g: int) -> None:
    """Every seed the family reads, enumerated: each pair of items takes each of the ``g^2`` pairs of
    values on exactly ``S / g^2`` seeds (exact pairwise independence, so a collision rate of exactly
    ``1/g``). With one seed bit fewer (the top bit the family reads fixed at 0), some pair is not."""
    bits = _family_bits(d, g)
    laws = _pair_laws(d, g, np.arange(1 << bits))
    assert (laws == (1 << bits) // (g * g)).all()
    if d > 2:
        fewer = _pair_laws(d, g, np.arange(1 << (bits - 1)))
        assert not (fewer == (1 << (bits - 1)) // (g * g)).all()


def test_the_hash_reads_only_the_family_s_bits_and_matches_the_worked_example() -> None:
    """``b = 1``, ``tau = 0b1011`` (docstring); a seed's bits above the family's do not move a value."""
    assert toeplitz_values([0, 1, 2, 3], 0b101101, 4).tolist() == [1, 2, 0, 3]
    rng = np.random.default_rng(20261130)
    s = rng.integers(0, SEEDS, 2000)
    x = rng.integers(0, 10_000, 2000)
    low = s & ((1 << _family_bits(10_000, 64)) - 1)
    assert (toeplitz_values(x, s, 64) == toeplitz_values(x, low, 64)).all()
    assert not (toeplitz_values(x, s, 64) == toeplitz_values(x, s ^ 1, 64)).any()  # b's low bit flips every value


@pytest.mark.parametrize(
    ("d", "g", "n"),
    [
        (2, 2, 1500),
        (7, 2, 1500),
        (50, 8, 1500),
        (1000, 64, 1500),
        (1024, 4, 1500),
        (4097, 32, 1500),
        (300, 256, 20_000),
        (3, 2**15, 200),
    ],
)
def test_the_spectral_count_is_the_direct_count(d: int, g: int, n: int) -> None:
    """``toeplitz_support`` (``O(n g + d log d)``) against every report hashed against every item; the
    last two span several blocks of reports (``2**21 / g`` a block), the last at the largest ``g`` the
    family holds (``2 * 15 + 2 - 1 = 31`` bits)."""
    rng = np.random.default_rng(d * 1000 + g)
    s, y = rng.integers(0, SEEDS, n), rng.integers(0, g, n)
    direct = (toeplitz_values(np.arange(d)[None, :], s[:, None], g) == y[:, None]).sum(axis=0)
    assert toeplitz_support(s, y, d, g).tolist() == direct.tolist()
    assert support_counts(np.stack([s, y], axis=1), d, g, SEEDS, "toeplitz").tolist() == direct.tolist()


def test_the_node_s_channel_enumerated_has_exactly_the_claimed_ratio() -> None:
    """Every output ``(s, y)`` of a small node (every seed the family reads: the full family is this
    law repeated), with integer masses ``weight + keep [H_s(x) = y]``: the largest ratio over pairs of
    items is ``(weight + keep) / weight``, what ``check_claims`` decides; a claim just below fails."""
    m = OLH(1.0, 8, hash="toeplitz")
    node = m.sampler()
    h = toeplitz_values(np.arange(8)[:, None], np.arange(1 << _family_bits(8, m.g))[None, :], m.g).astype(np.int64)
    mass = node.weight + node.keep * (h[:, :, None] == np.arange(m.g)).reshape(8, -1)
    ratio = max(int(a) * 1.0 / int(b) for a, b in zip(mass.max(axis=0), mass.min(axis=0), strict=True))
    assert ratio == (node.weight + node.keep) / node.weight
    verdict = check_claims(node)
    assert verdict.holds and verdict.rows[0].realised <= 1.0
    assert math.exp(verdict.rows[0].realised) == pytest.approx(ratio, rel=1e-12)
    tight = HashedNode(node.d, node.g, "toeplitz", node.keep, node.weight, verdict.rows[0].realised * (1 - 1e-9))
    assert not check_claims(tight).holds


def test_the_default_g_is_the_best_power_of_two_and_refusals_say_why() -> None:
    assert (toeplitz_g(1.0, 10_000), toeplitz_g(4.0, 10_000), toeplitz_g(4.0, 10**7), toeplitz_g(0.1, 10)) == (
        4,
        64,
        16,
        2,
    )
    assert OLH(4.0, 10_000, hash="toeplitz").g == 64
    with pytest.raises(ParameterError, match="power of two, got 56"):
        OLH(4.0, 10_000, g=56, hash="toeplitz")
    assert "2 * 6 + 24 - 1 = 35" in str(toeplitz_fits(10**7, 64))
    with pytest.raises(ParameterError, match="2 \\* 7 \\+ 20 - 1 = 33"):
        OLH(4.0, 2**20, g=128, hash="toeplitz")
    with pytest.raises(ParameterError, match="2\\*\\*31 seeds"):
        OLH(1.0, 50, seeds=2**8, hash="toeplitz")
    with pytest.raises(ParameterError, match="hash must be one of"):
        OLH(1.0, 50, hash="md5")
    with pytest.raises(ParameterError, match=r"cannot hold|seed bits"):
        toeplitz_g(1.0, 2**31 - 1)
    assert toeplitz_fits(2**30, 2) is None and toeplitz_fits(2**30 + 1, 2) is not None


def test_the_json_form_round_trips_and_refuses_what_the_family_cannot_hold() -> None:
    node = OLH(1.0, 50, hash="toeplitz").sampler()
    obj = node.to_json()
    assert obj["family"] == "toeplitz" and "seeds" not in obj and HashedNode.parse(obj, "root") == node
    three = {**OLH(1.0, 50, g=3).sampler().to_json(), "family": "toeplitz"}  # keep + 3 weight = 2**32
    for bad, why in ((three, "power of two"), ({**obj, "seeds": 2**8}, "names none")):
        with pytest.raises(SpecError, match=why):
            HashedNode.parse(bad, "root")
    with pytest.raises(SpecError, match="power of two"):
        HashedNode(50, 3, "toeplitz", node.keep, node.weight, 1.0)
    with pytest.raises(SpecError, match="must be one of"):
        HashedNode(50, 4, "md5", node.keep, node.weight, 1.0)
    with pytest.raises(SpecError, match="must be one of"):
        hash_values(1, 2, 4, "md5")


def test_estimates_are_unbiased_with_exactly_olh_s_variance() -> None:
    """Real reports, 200 runs of 3,000 users over 64 items (Zipf-like): every item's mean estimate
    within 4.5 standard errors of the truth, and the pooled ratio of the empirical variance to OLH's
    closed form within 5 of its standard deviations (``sqrt(2 / 199 / 64)``) of 1. The counts are
    exactly ``Bin(n_v, p*) + Bin(n - n_v, 1/g)``: no family term (the XXH32 and FLH families have one)."""
    m, n, runs, d = OLH(1.0, 64, hash="toeplitz"), 3000, 200, 64
    rng = np.random.default_rng(64_3000)
    weights = 1.0 / np.arange(1, d + 1)
    x = rng.choice(d, size=n, p=weights / weights.sum())
    f = np.bincount(x, minlength=d) / n
    est = np.array([m.estimate(m.tally(m.perturb(x, rng))).frequencies for _ in range(runs)])
    var = theory_variance(m, f, n)
    assert np.all(np.abs(est.mean(axis=0) - f) < 4.5 * np.sqrt(var / runs))
    ratio = float(np.mean(est.var(axis=0, ddof=1) / var))
    assert abs(ratio - 1) < 5 * math.sqrt(2 / (runs - 1) / d)


def test_merged_counts_and_deployed_reports_give_the_oracle_s_tally() -> None:
    """``count_reports`` of two parts merged, and the client's reports of a spec decoded, tally as the oracle does."""
    from pldp.client import Client
    from pldp.deploy import Spec, decode
    from pldp.deploy.decode import native_reports

    m = OLH(2.0, 300, hash="toeplitz")
    rng = np.random.default_rng(300)
    a, b = m.perturb(rng.integers(0, 300, 800), rng), m.perturb(rng.integers(0, 300, 700), rng)
    merged = m.tally_of(m.count_reports(a).merge(m.count_reports(b)))
    assert merged.counts.tolist() == m.tally(np.concatenate([a, b])).counts.tolist()
    spec = Spec.from_mechanism(m, question="items")
    assert Spec.from_json(spec.to_json()).id == spec.id
    batch = Client(spec, random=words(3)).reports(np.arange(3000) % 300)  # a seeded word stream
    (rep,) = native_reports(spec, batch)
    assert decode(spec, batch).counts.tolist() == m.tally(rep).counts.tolist()
    hashed = (hash_values(np.arange(3000) % 300, rep[:, 0], m.g, "toeplitz") == rep[:, 1]).mean()
    p_star = m.sampler().support[0]  # e^2 / (e^2 + 7) = 0.51 on the grid: a report keeps its own hash value
    assert abs(hashed - p_star) < 4.5 * math.sqrt(p_star * (1 - p_star) / 3000)


def test_the_maximal_gain_attack_supports_every_target_with_a_seed_below_g() -> None:
    """A seed below ``g`` hashes every item to one value: each fake supports all targets, however many,
    and the expected gain is stated for any number of them (a random seed would join three targets
    only about once in ``g^2`` tries)."""
    m = OLH(4.0, 10_000, hash="toeplitz")
    targets = [3, 7, 11, 5000, 9999]
    counts = np.full(10_000, 20)
    assert expected_gain(m, targets, 50, counts) is not None
    fakes = fake_reports(m, targets, 200, rng=np.random.default_rng(100))
    supported = hash_values(np.array(targets)[None, :], fakes[:, :1], m.g, "toeplitz") == fakes[:, 1:]
    assert supported.all() and fakes[:, 0].max() < m.g
    assert (m.tally(fakes).counts == 200).all()  # every item supported by every fake


@parametrize_with_checks(
    [
        OracleCase(
            lambda: OLH(1.0, 5, hash="toeplitz"),
            data=(COUNTS,),
            variant=lambda: OLH(VARIANT, 5, hash="toeplitz"),
            bad=(lambda: OLH(1.0, 5, g=3, hash="toeplitz"), lambda: OLH(1.0, 5, seeds=2**8, hash="toeplitz")),
            name="olh-toeplitz",
        )
    ]
)
def test_olh_toeplitz_conforms(case: OracleCase, check: Any) -> None:
    check(case)


def test_report_files_in_parts_aggregate_to_the_in_memory_tally(tmp_path: Any) -> None:
    """Report files in row groups: each part's tally is its count (``n g`` additions and one transform),
    and the merged tally equals the in-memory tally of the same reports byte for byte."""
    pytest.importorskip("pyarrow")
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from pldp import aggregate
    from pldp.client import Client
    from pldp.deploy import Spec, decode
    from pldp.deploy.files import write_reports

    m = OLH(2.0, 300, hash="toeplitz")
    spec = Spec.from_mechanism(m, question="toeplitz parts")
    rng = np.random.default_rng(300_2)
    paths = [
        write_reports(
            Client(spec, random=words(i)).reports(rng.integers(0, 300, n)),
            tmp_path,
            30_000 + i,
            name=f"f{i}",
            row_group=250,
        )
        for i, n in enumerate((700, 45))
    ]
    table = pa.concat_tables([pq.read_table(p) for p in paths])
    (reports,) = m.reports_from_columns({c: table.column(c).to_numpy() for c in ("seed", "value")})
    whole = spec.mechanism().tally(reports)  # the spec's labels: its own fingerprint
    assert whole.n == 745 and whole == decode(spec, table)
    result = aggregate.aggregate(spec, paths, workers=1, progress=False)
    assert result.parts == 4 and json.dumps(result.tally.to_dict()) == json.dumps(whole.to_dict())
