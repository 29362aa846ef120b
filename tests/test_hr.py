"""Hadamard response: the node's program and claim, the transform's counts, and HR's estimates against theory."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

from pldp.attacks.hadamard import common_indices, null_basis
from pldp.channel import check_claims
from pldp.channel.hadamard import HadamardNode, hadamard_order, in_half, into_half
from pldp.channel.sampling import GRID
from pldp.channel.words import Cursor
from pldp.errors import ParameterError, ReportError, SpecError
from pldp.mechanisms.hadamard import HR, hr_keep, support_counts, walsh_hadamard


def test_the_halves_are_the_rows_of_the_hadamard_matrix() -> None:
    """``C_x`` is the +1 columns of row ``x + 1`` of the Sylvester matrix (built by its recursion):
    ``K/2`` indices each, ``K/4`` shared by two items; the transform is that matrix's product."""
    h = np.array([[1]])
    while h.shape[0] < 16:
        h = np.block([[h, h], [h, -h]])
    ys = np.arange(16)
    halves = np.array([in_half(x, ys) for x in range(15)])
    assert (halves == (h[1:] == 1)).all()
    assert set(halves.sum(axis=1).tolist()) == {8}
    assert {int((halves[a] & halves[b]).sum()) for a, b in combinations(range(15), 2)} == {4}
    c = np.random.default_rng(11).integers(0, 100, 16)
    assert walsh_hadamard(c).tolist() == (h @ c).tolist()
    assert [hadamard_order(d) for d in (2, 3, 4, 1000, 1024)] == [4, 4, 8, 1024, 2048]


@pytest.mark.parametrize("order", [1 << 12, 1 << 13, 1 << 17])
def test_the_floating_point_transform_is_exact(order: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """From order 2**12 the transform multiplies Sylvester blocks in floating point: it equals the integer
    butterflies exactly with ``K`` times the largest entry near ``2**52`` (within a factor 2 of the bound
    that keeps every partial sum exact in a float), and transforming twice gives ``K c``."""
    import pldp.mechanisms.hadamard as hadamard

    c = np.random.default_rng(order).integers(-(1 << 52) // order, (1 << 52) // order, order)
    assert 2**51 < order * np.abs(c).max() < 2**53  # the floating-point path
    fast = walsh_hadamard(c)
    monkeypatch.setattr(hadamard, "_FLOAT_ORDER", 1 << 40)  # the butterflies alone
    assert fast.dtype == np.int64 and fast.tolist() == walsh_hadamard(c).tolist()
    monkeypatch.undo()
    small = c >> 32  # |H c| below 2**20: K times it stays below 2**53
    assert (walsh_hadamard(walsh_hadamard(small)) == order * small).all()


def test_past_the_exact_bound_the_transform_keeps_to_the_integers() -> None:
    """With ``K`` times the largest entry past ``2**53`` a float sum would round (``2**52 + 1`` plus
    ``2**52`` is ``2**53 + 1``, not a float): the transform takes the integer butterflies and stays
    exact, where the floating-point blocks alone are off by one in thousands of entries."""
    from pldp.mechanisms.hadamard import _sylvester_blocks

    c = np.zeros(1 << 12, dtype=np.int64)
    c[:3] = [2**52 + 1, 2**52, 1]
    exact = walsh_hadamard(c)
    sign = 1 - 2 * (np.array([bin(j & 1).count("1") for j in range(1 << 12)]) % 2)  # column 1 of H
    assert exact.tolist() == (c[0] + sign * c[1] + c[2] * (1 - 2 * (np.arange(1 << 12) >> 1 & 1))).tolist()
    assert (_sylvester_blocks(c.astype(np.float64)).astype(np.int64) != exact).sum() > 1000


@pytest.mark.parametrize("native", [True, False])
def test_the_parity_needs_no_numpy_2(native: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The halves' parity agrees with Python's count of ones, with numpy's ``bitwise_count`` and with
    the xor-folding used where numpy (1.26) has none, up to the largest index ``2**31 - 1``."""
    import pldp.bitcount

    if not native:
        monkeypatch.setattr(pldp.bitcount, "_BITWISE_COUNT", None)
    v = np.random.default_rng(12).integers(0, 1 << 31, 5000)
    v[:3] = (0, 1, (1 << 31) - 1)
    want = [bin(int(a)).count("1") % 2 for a in v]
    assert pldp.bitcount.parity(v).tolist() == want
    x, y = v[:2500] % (1 << 20), v[2500:]
    assert in_half(x, y).tolist() == [bin(int(a + 1) & int(b)).count("1") % 2 == 0 for a, b in zip(x, y, strict=True)]


def test_the_program_maps_words_to_an_index_of_the_wanted_half() -> None:
    """Crafted words for item 42 (row 43 = 0b0101011, lowest set bit 1) with ``K = 128`` (7 top bits):
    ``w0 < keep`` asks for ``C_x``; an index of the other half has its bit 0 flipped."""
    node = HR(1.0, 100).sampler()
    keep, low = node.keep, (1 << 25) - 1  # the low 25 bits of w1 are not read
    cases = [  # (w0, r, the report)
        (0, 0, 0),
        (keep - 1, 1, 0),  # 43 & 1 is odd: flipped into C_x
        (keep, 0, 1),
        (GRID - 1, 1, 1),
        (keep - 1, 127, 127),  # 43 & 127 = 43 has 4 bits set
        (keep, 127, 126),
    ]
    words = np.array([w for w0, r, _ in cases for w in (w0, r << 25 | low)], dtype=np.uint32)
    n = len(cases)
    out = node.empty_columns(n)
    node.draw(np.full(n, 42), Cursor(words, 2 * np.arange(n)), np.arange(n), out)
    assert out["value"].tolist() == [want for *_, want in cases]


@pytest.mark.parametrize("x", [0, 5, 6, 14])
def test_each_half_is_hit_uniformly(x: int) -> None:
    """Over all ``K`` values of ``r``, each index of the wanted half is reached exactly twice (``r`` and
    ``r`` with the flipped bit): ``Pr(y | x) = 2 keep / (K 2**32)`` on ``C_x``,
    ``2 (2**32 - keep) / (K 2**32)`` off it."""
    r = np.arange(16)
    for inside in (True, False):
        y = into_half(x, r, inside)
        assert (in_half(x, y) == inside).all()
        hits = np.bincount(y, minlength=16)
        assert sorted(set(hits.tolist())) == [0, 2] and ((hits == 2) == (in_half(x, r) == inside)).all()


def test_the_claim_is_exact_and_can_fail() -> None:
    for eps in (0.01, 1.0, 3.0, 30.0):
        keep = hr_keep(eps)
        node = HadamardNode(100, 128, keep, eps)
        v = check_claims(node)
        assert v.holds and v.rows[0].realised <= eps
        # keep is the largest on the grid: one step more breaks the claim (below 2**32)
        if keep < GRID - 1:
            assert not check_claims(HadamardNode(100, 128, keep + 1, eps)).holds
        assert not check_claims(HadamardNode(100, 128, keep, v.rows[0].realised * (1 - 1e-9))).holds
    # a keep below one half: the ratio is the other way round, and claimed as such
    assert not check_claims(HadamardNode(100, 128, GRID // 4, 1.0)).holds
    assert check_claims(HadamardNode(100, 128, GRID // 4, math.log(3))).holds
    assert HR(2.0, 1000).privacy().holds


def test_the_json_form_round_trips_and_refuses_bad_nodes() -> None:
    node = HR(1.5, 300).sampler()
    assert node.K == 512 and node.takes_one_item and not (node.takes_itemsets or node.multi_attribute)
    assert [(c.name, c.size) for c in node.columns("a0.")] == [("a0.value", 512)]
    assert HadamardNode.parse(node.to_json(), "root") == node
    bad = [
        ("power of two", {**node.to_json(), "K": 768}),
        ("power of two", {**node.to_json(), "K": 256}),  # K <= d
        ("outside", {**node.to_json(), "keep": GRID}),
        ("outside", {**node.to_json(), "keep": 0}),
        ("epsilon", {**node.to_json(), "epsilon": "inf"}),
        ("keep", {k: v for k, v in node.to_json().items() if k != "keep"}),
    ]
    for why, obj in bad:
        with pytest.raises(SpecError, match=why):
            HadamardNode.parse(obj, "root")
    with pytest.raises(SpecError, match=r"root\.K"):
        HadamardNode.parse({**node.to_json(), "K": 512.0}, "root")


def test_parameters_and_refusals() -> None:
    m = HR(2.0, 50)
    assert m.K == 64 and HR.from_params(m.params()) == m and m.fingerprint == HR(2.0, 50).fingerprint
    assert m.fingerprint != HR(2.0, 51).fingerprint
    for make in (lambda: HR(0.0, 5), lambda: HR(1.0, 1), lambda: HR(1e-10, 5)):  # 1e-10: keep = 2**31
        with pytest.raises(ParameterError):
            make()
    with pytest.raises(ReportError, match="report 1: value 64"):
        m.tally(np.array([0, 64]))
    with pytest.raises(ReportError):
        m.tally(np.zeros((3, 2), dtype=int))
    # the public count checks its input as the tally does (an index of K or more would wrap the transform)
    with pytest.raises(ReportError, match="report 2: value -1 is not in") as err:
        support_counts(np.array([0, 3, -1, 99]), 50, m.K)
    assert err.value.index == 2


def test_same_seed_same_reports_and_counts_match_a_direct_count() -> None:
    m = HR(1.0, 40)
    x = np.arange(500) % 40
    a, b = m.perturb(x, np.random.default_rng(7)), m.perturb(x, np.random.default_rng(7))
    assert a.tobytes() == b.tobytes() and a.min() >= 0 and a.max() < m.K
    direct = [int(in_half(v, a).sum()) for v in range(40)]
    assert support_counts(a, 40, m.K).tolist() == direct
    assert m.tally(a).counts.tolist() == direct


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 5.0])
def test_the_variance_factor_is_binary_randomized_response_s(eps: float) -> None:
    """V = ((e^eps + 1) / (e^eps - 1))^2 per report at an absent item, at the grid's p*: keep is
    within one step of 2**32 e^eps / (e^eps + 1), so p* - 1/2 moves by at most 2**-32, a relative
    2**-32 / (p* - 1/2) < 2e-8 here, doubled by the square: rel=1e-7."""
    p, q = HR(eps, 100).sampler().support
    assert q == 0.5
    assert q * (1 - q) / (p - q) ** 2 == pytest.approx(((math.exp(eps) + 1) / (math.exp(eps) - 1)) ** 2, rel=1e-7)


@pytest.mark.parametrize("targets", [[0], [0, 2, 5], [3, 4, 9, 10, 11]])
def test_the_attack_s_indices_are_in_every_target_s_half(targets: list[int]) -> None:
    """Every fake index supports each target; the fakes are uniform over the ``2**(bits - rank)``
    common indices (each seen, 4,000 fakes over at most 8 of them)."""
    tg = np.array(targets)
    basis = null_basis([t + 1 for t in targets], 4)
    ys = common_indices(tg, 16, 4000, np.random.default_rng(9))
    assert in_half(tg[:, None], ys[None, :]).all()
    every = np.arange(16)[in_half(tg[:, None], np.arange(16)[None, :]).all(axis=0)]
    assert every.size == 2 ** len(basis) and set(ys.tolist()) == set(every.tolist())


def test_simulate_has_the_reports_covariances() -> None:
    """The support counts of items 0 and 1 covary through the holders of item 2 (rows 1 xor 2 = 3):
    ``t (2 p* - 1) / 4``; those of 0 and 3 (rows 1 xor 4 = 5, item 4, held by none) do not. Over 400
    draws each sample covariance is within 4.5 of its standard errors ``sqrt((s_u^2 s_v^2 + c^2) / 399)``
    (normal theory); independent counts would miss the first by about 8 of them."""
    m, t = HR(1.0, 20), np.zeros(20, dtype=int)
    t[2] = 1000
    sims = np.array([m.simulate(t, np.random.default_rng(seed)).counts for seed in range(400)], dtype=float)
    p, q = m.sampler().support
    var = t * p * (1 - p) + (t.sum() - t) * q * (1 - q)
    for u, v, want in ((0, 1, 1000 * (2 * p - 1) / 4), (0, 3, 0.0)):
        got = float(np.cov(sims[:, u], sims[:, v])[0, 1])
        assert abs(got - want) < 4.5 * math.sqrt((var[u] * var[v] + want**2) / 399)
