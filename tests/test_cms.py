"""Apple's count-mean sketches (CMS, HCMS): the nodes' programs and claims, refusals, the sketch's
support counts against Apple's server, and the estimates against the expectation and variance over
random hash families (with the hash-collision term) and for the family itself."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pldp.attacks import expected_gain, fake_reports, gain
from pldp.channel import check_claims, parse_node
from pldp.channel.hadamard import in_half
from pldp.channel.sampling import GRID
from pldp.channel.sketch import CMSNode, HCMSNode, hadamard_entry, sketch_hashes
from pldp.channel.words import Cursor
from pldp.errors import ParameterError, ReportError, SpecError
from pldp.mechanisms.hadamard import hr_keep
from pldp.mechanisms.sketch import CMS, HCMS, cms_flip, collision_variance
from pldp.testing import check_oracle
from tests.deploy_cases import spec_of
from tests.tolerances import FLOAT_RTOL

ROOT = Path(__file__).resolve().parent.parent


def _bits(packed: np.ndarray, m: int) -> np.ndarray:
    return np.unpackbits(np.asarray(packed, dtype=np.uint8), axis=1)[:, :m].astype(bool)


# ------------------------------------------------------------------ the programs
def test_the_cms_program_maps_crafted_words_to_its_report() -> None:
    """Item 3 with ``k = 4`` (row: the top 2 bits of w0), ``m = 8``: bit ``l`` is set when exactly one
    of ``l = h_j(3)`` and ``w(1+l) < flip`` holds."""
    node = CMS(1.0, 10, k=4, m=8).sampler()
    f = node.flip
    rows = [0, 3, 2]
    flips = [
        [False] * 8,  # nothing flipped: the one-hot vector
        [True] * 8,  # everything flipped: its complement
        [True, False, True, False, False, False, True, True],
    ]
    low = (1 << 30) - 1  # the low 30 bits of w0 are not read
    words = []
    for j, fl in zip(rows, flips, strict=True):
        words += [j << 30 | low] + [f - 1 if x else f for x in fl]
    n = len(rows)
    out = node.empty_columns(n)
    node.draw(np.full(n, 3), Cursor(np.array(words, dtype=np.uint32), 9 * np.arange(n)), np.arange(n), out)
    assert out["row"].tolist() == rows
    got = _bits(out["bits"], 8)
    for i, (j, fl) in enumerate(zip(rows, flips, strict=True)):
        h = int(sketch_hashes(3, j, 8))
        want = [bool(x) != (col == h) for col, x in enumerate(fl)]
        assert got[i].tolist() == want


def test_the_hcms_program_maps_crafted_words_to_its_report() -> None:
    """Item 5 with ``k = 2``, ``m = 16``: the row and column are the top 1 and 4 bits of w0 and w1;
    the bit is ``H[h_j(5), l]`` (1 for +1) when ``w2 < keep``, its negation otherwise."""
    node = HCMS(1.0, 10, k=2, m=16).sampler()
    keep = node.keep
    cases = [(0, 0, keep - 1), (1, 15, keep - 1), (1, 9, keep), (0, 6, GRID - 1), (1, 3, 0)]
    words = [w for j, col, w2 in cases for w in (j << 31 | 12345, col << 28 | 777, w2)]
    n = len(cases)
    out = node.empty_columns(n)
    node.draw(np.full(n, 5), Cursor(np.array(words, dtype=np.uint32), 3 * np.arange(n)), np.arange(n), out)
    assert out["row"].tolist() == [j for j, _, _ in cases] and out["index"].tolist() == [c for _, c, _ in cases]
    for i, (j, col, w2) in enumerate(cases):
        entry = int(hadamard_entry(sketch_hashes(5, j, 16), col) == 1)
        assert out["bit"][i] == (entry if w2 < keep else 1 - entry)


def test_a_single_row_reads_no_bit_of_its_word() -> None:
    """``k = 1``: the row is 0 whatever the first word is (no shift by 32)."""
    node = HCMS(1.0, 10, k=1, m=4).sampler()
    out = node.empty_columns(2)
    words = np.array([GRID - 1, 0, 0, 1 << 31, GRID - 1, GRID - 1], dtype=np.uint32)
    node.draw(np.array([1, 2]), Cursor(words, np.array([0, 3])), np.arange(2), out)
    assert out["row"].tolist() == [0, 0] and out["index"].tolist() == [0, 3]


def test_the_hadamard_entries_are_the_sylvester_matrix_s() -> None:
    """``H[r, l]`` by popcount is the Sylvester recursion's matrix, and row ``r + 1``'s +1 columns are
    the Hadamard-response node's half ``C_r``."""
    h = np.array([[1]])
    while h.shape[0] < 32:
        h = np.block([[h, h], [h, -h]])
    r = np.arange(32)
    assert (hadamard_entry(r[:, None], r[None, :]) == h).all()
    assert ((hadamard_entry(r[1:, None], r[None, :]) == 1) == in_half(r[:-1, None], r[None, :])).all()


# ------------------------------------------------------------------ the claims
@pytest.mark.parametrize("eps", [0.05, 1.0, 3.0, 20.0])
def test_the_claims_are_exact_and_fail_one_grid_step_more_generous(eps: float) -> None:
    """CMS: ``flip`` is the smallest with ``((2**32 - flip) / flip)^2 <= e^eps``: ``flip - 1`` breaks
    the claim. HCMS: ``keep`` the largest: ``keep + 1`` breaks it. A claim just below the realised
    budget fails too."""
    flip, keep = cms_flip(eps), hr_keep(eps)
    cms, hcms = CMSNode(100, 16, 64, "xxh32", eps, flip), HCMSNode(100, 16, 64, "xxh32", eps, keep)
    for node, looser in ((cms, CMSNode(100, 16, 64, "xxh32", eps, flip - 1)), (hcms, None)):
        v = check_claims(node)
        assert v.holds and v.rows[0].realised <= eps
        assert not check_claims(type(node)(100, 16, 64, "xxh32", v.rows[0].realised * (1 - 1e-9), node.threshold)).holds
        if looser is not None:
            assert not check_claims(looser).holds
    if keep < GRID - 1:
        assert not check_claims(HCMSNode(100, 16, 64, "xxh32", eps, keep + 1)).holds
    # the ratio of two flipped coordinates: the square of one coordinate's
    assert check_claims(cms).rows[0].realised == pytest.approx(2 * math.log((GRID - flip) / flip), rel=FLOAT_RTOL)
    assert CMS(eps, 100).privacy().holds and HCMS(eps, 100).privacy().holds


def test_the_pair_laws_are_the_reports_laws() -> None:
    """The categories of 40,000 reports of item 2 against item 7 (``k = 4``, ``m = 8``): every rate
    within 4.5 binomial standard errors of the law, and category 0's ratio the claimed one."""
    rng = np.random.default_rng(12)
    for mech in (CMS(1.0, 10, k=4, m=8), HCMS(1.0, 10, k=4, m=8)):
        node = mech.sampler()
        p0, p1, classify = node.pair_law(2, 7, "")
        assert p0.sum() == pytest.approx(1, abs=1e-12) and p1.tolist() == [p0[1], p0[0], p0[2]]
        num, den = node.ratio()
        assert p0[0] / p1[0] == pytest.approx(num / den, rel=FLOAT_RTOL)
        n = 40_000
        cat = classify(mech.report_columns(mech.perturb(np.full(n, 2), rng)))
        rate = np.bincount(cat, minlength=3) / n
        assert np.all(np.abs(rate - p0) < 4.5 * np.sqrt(p0 * (1 - p0) / n))


# ------------------------------------------------------------------ forms and refusals
def test_the_json_forms_round_trip_and_refuse_bad_nodes() -> None:
    for mech, t in ((CMS(1.5, 300, k=8, m=64), "flip"), (HCMS(1.5, 300, k=8, m=64), "keep")):
        node = mech.sampler()
        assert parse_node(node.to_json()) == node and node.takes_one_item
        obj = node.to_json()
        bad = [
            ("power of two", {**obj, "k": 12}),
            ("power of two", {**obj, "m": 48}),
            (r"root\.m", {**obj, "m": 1}),
            (r"root\.k", {**obj, "k": 1 << 17}),
            ("family", {**obj, "family": "md5"}),
            (rf"root\.{t}", {**obj, t: 0}),
            (rf"root\.{t}", {**obj, t: GRID}),
            ("epsilon", {**obj, "epsilon": "inf"}),
            (t, {k: v for k, v in obj.items() if k != t}),
        ]
        for why, o in bad:
            with pytest.raises(SpecError, match=why):
                parse_node(o, "root")
    assert HCMSNode.parse({**HCMS(1.0, 10).sampler().to_json(), "m": 1 << 24}, "r").m == 1 << 24
    with pytest.raises(SpecError, match=r"r\.m"):
        CMSNode.parse({**CMS(1.0, 10).sampler().to_json(), "m": 1 << 17}, "r")


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_the_wire_format_example_is_the_node(cls: Any) -> None:
    text = (ROOT / "docs" / "wire-format.md").read_text(encoding="utf-8")
    block = text.split(f"The node of `pldp.{cls.__name__}(1.0, 1000)`", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    assert parse_node(json.loads(block)) == cls(1.0, 1000).sampler()


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_parameters_and_refusals(cls: Any) -> None:
    m = cls(2.0, 50, k=4, m=32)
    assert cls.from_params(m.params()) == m and m.fingerprint == cls(2.0, 50, k=4, m=32).fingerprint
    assert m.fingerprint != cls(2.0, 50, k=4, m=64).fingerprint != cls(2.0, 50, k=8, m=32).fingerprint
    for make in (
        lambda: cls(0.0, 5),
        lambda: cls(1.0, 1),
        lambda: cls(1.0, 5, k=3),
        lambda: cls(1.0, 5, k=0),
        lambda: cls(1.0, 5, m=1),
        lambda: cls(1.0, 5, m=96),
        lambda: cls(1.0, 5, k=1 << 17),
        lambda: cls(1e-10, 5),  # the grid cannot tell the threshold from one half
    ):
        with pytest.raises(ParameterError):
            make()


def test_the_tallies_refuse_malformed_reports() -> None:
    cms = CMS(1.0, 10, k=4, m=4)  # one byte of bits, its low 4 bits padding
    good = cms.perturb(np.arange(3), np.random.default_rng(1))
    assert good.shape == (3, 5) and good.dtype == np.uint8
    for bad, why in (
        (good.astype(np.int64), "uint8"),
        (good[:, :4], "uint8"),
        (np.concatenate([np.full((3, 1), 4, dtype=np.uint8), good[:, 1:]], axis=1), "report 0: row 4"),
        (np.concatenate([good[:, :4], good[:, 4:] | 1], axis=1), "padding"),
    ):
        with pytest.raises(ReportError, match=why):
            cms.tally(bad)
    hcms = HCMS(1.0, 10, k=4, m=8)
    for bad, why in (
        (np.array([[0, 0, 1], [4, 0, 1]]), "report 1: row 4"),
        (np.array([[0, 8, 1]]), "report 0: index 8"),
        (np.array([[0, 0, 2]]), "report 0: bit 2"),
        (np.array([[0, 0]]), r"\(n, 3\)"),
        (np.zeros((2, 3)), r"\(n, 3\)"),
    ):
        with pytest.raises(ReportError, match=why):
            hcms.tally(bad)


# ------------------------------------------------------------------ the server
def _apple_estimate(mech: Any, reports: np.ndarray) -> np.ndarray:
    """Apple's A_server-CMS / A_server-HCMS, written out: the debiased sketch ``M``, then
    ``(m / (m - 1)) (sum_j M[j, h_j(x)] / k - n / m) / n``, with the grid's flip (keep) in ``c_eps``."""
    k, m, d = mech.k, mech.m, mech.d
    big = np.zeros((k, m))
    cols = mech.report_columns(reports)
    if isinstance(mech, CMS):
        c = 1.0 / (1.0 - 2.0 * mech.sampler().flip / GRID)
        v = 2.0 * _bits(cols["bits"], m) - 1.0
        np.add.at(big, cols["row"], k * (c / 2.0 * v + 0.5))
    else:
        c = 1.0 / (2.0 * mech.sampler().keep / GRID - 1.0)
        np.add.at(big, (cols["row"], cols["index"]), k * c * (2.0 * cols["bit"] - 1.0))
        big = big @ hadamard_entry(np.arange(m)[:, None], np.arange(m)[None, :]).T
    n = reports.shape[0]
    h = sketch_hashes(np.arange(d)[None, :], np.arange(k)[:, None], m)
    return (m / (m - 1)) * (big[np.arange(k)[:, None], h].sum(axis=0) / k - n / m) / n


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_the_support_counts_give_apple_s_estimate_and_count_each_report(cls: Any) -> None:
    """The tally's support counts (read off the sketch) are the reports that support each item,
    counted one by one, and the unbiased estimate is Apple's server estimate: equal to float
    rounding over sums of 3,000 terms of size ``k c`` (abs 1e-9)."""
    mech = cls(1.5, 40, k=8, m=16)
    x = np.random.default_rng(3).integers(0, 40, 3000)
    rep = mech.perturb(x, np.random.default_rng(4))
    cols = mech.report_columns(rep)
    h = sketch_hashes(np.arange(40)[None, :], cols["row"][:, None], 16)  # (n, d)
    if cls is CMS:
        supports = np.take_along_axis(_bits(cols["bits"], 16), h, axis=1)
    else:
        supports = hadamard_entry(h, cols["index"][:, None]) == 2 * cols["bit"][:, None] - 1
    tally = mech.tally(rep)
    assert tally.counts.tolist() == supports.sum(axis=0).tolist()
    assert np.allclose(mech.estimate(tally).frequencies, _apple_estimate(mech, rep), rtol=0, atol=1e-9)


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_tallies_merge_and_round_trip(cls: Any) -> None:
    mech = cls(1.0, 30, k=4, m=16)
    rng = np.random.default_rng(8)
    a, b = mech.perturb(rng.integers(0, 30, 500), rng), mech.perturb(rng.integers(0, 30, 700), rng)
    whole = mech.tally(np.concatenate([a, b]))
    assert mech.tally(a) + mech.tally(b) == whole and whole.n == 1200 and whole.d == 30
    assert mech.load_tally(json.loads(json.dumps(whole.to_dict()))) == whole
    same = mech.perturb(np.arange(30), np.random.default_rng(2))
    assert same.tobytes() == mech.perturb(np.arange(30), np.random.default_rng(2)).tobytes()


# ------------------------------------------------------------------ estimates
def _placed(d: int, freq: list[float], n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Counts with ``freq`` at distinct random items of ``[0, d)`` (a random hash family, in effect:
    the XXH32 values of random items), and those items."""
    items = rng.choice(d, size=len(freq), replace=False)
    t = np.zeros(d, dtype=np.int64)
    t[items] = np.round(np.array(freq) * n).astype(np.int64)
    return t, items


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_over_random_families_the_estimate_is_unbiased_with_the_collision_term(cls: Any) -> None:
    """A small sketch (``k = 2``, ``m = 8``) and 20,000 users on four items placed at random among
    4,096 (so the family's collisions are random): over 600 runs the mean estimate of the first item
    is within 4.5 standard errors of its frequency, and the empirical variance within 4.5 of its own
    standard errors (from the sample's fourth moment: the law is far from normal) of

    ``[f p(1-p) + (1-f) q(1-q)] / (n (p-q)^2) + sum_{x' != x} f_x' (f_x' - 1/n) / (k (m - 1))``.

    The collision term is about 100 times the sampling term here: without it the variance misses."""
    n, freq, runs = 20_000, [0.2, 0.3, 0.3, 0.2], 600
    mech = cls(2.0, 4096, k=2, m=8)
    p, q = mech.sampler().support
    rng = np.random.default_rng(20261130)
    est = np.empty(runs)
    for r in range(runs):
        t, items = _placed(4096, freq, n, rng)
        est[r] = mech.estimate(mech.simulate(t, rng)).frequencies[items[0]]
    f = np.array(freq)
    sampling = (f[0] * p * (1 - p) + (1 - f[0]) * q * (1 - q)) / (n * (p - q) ** 2)
    collision = float(collision_variance(f, n, 2, 8)[0])
    assert collision > 50 * sampling
    var = sampling + collision
    assert abs(est.mean() - f[0]) < 4.5 * math.sqrt(var / runs)
    s2 = est.var(ddof=1)
    m4 = float(np.mean((est - est.mean()) ** 4))
    se = math.sqrt((m4 - s2**2) / runs)
    assert abs(s2 - var) < 4.5 * se
    assert abs(s2 - sampling) > 4.5 * se  # Apple's variance alone is refuted


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_for_the_family_itself_the_estimate_has_its_exact_expectation(cls: Any) -> None:
    """With the family fixed (items 0..5, ``k = 2``, ``m = 4``, so the rows collide often), the mean
    of 400 estimates is ``expected_counts / n``, not the truth: within 4.5 standard errors of the
    sampling variance (no collision term given the family), while the truth is far off for some item."""
    mech, n, runs = cls(2.0, 6, k=2, m=4), 10_000, 400
    t = np.array([4000, 3000, 1500, 1000, 500, 0])
    rng = np.random.default_rng(77)
    est = np.array([mech.estimate(mech.simulate(t, rng)).frequencies for _ in range(runs)])
    want = mech.expected_counts(t, np.arange(6)) / n
    se = est.std(axis=0, ddof=1) / math.sqrt(runs)
    assert np.all(np.abs(est.mean(axis=0) - want) < 4.5 * se)
    assert np.max(np.abs(want - t / n) / se) > 10
    # over all placements the expectations average to the truth: the bias is the family's
    kappa = mech.collided(np.arange(6))
    assert np.allclose(np.diag(kappa), 1.0) and kappa.shape == (6, 6)


def test_the_collision_variance_is_the_other_items_squares() -> None:
    f = np.array([0.5, 0.25, 0.25, -0.1])  # a negative estimate counts as 0
    got = collision_variance(f, 100, 4, 17)
    each = f.clip(0) * np.maximum(f.clip(0) - 0.01, 0)
    assert np.allclose(got, (each.sum() - each) / 64, rtol=FLOAT_RTOL)


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_every_method_states_the_collision_term(cls: Any) -> None:
    mech = cls(1.0, 20, k=4, m=8)
    tally = mech.simulate(np.arange(20) * 50, np.random.default_rng(6))
    for method in mech.methods:
        est = mech.estimate(tally, method)
        extra = collision_variance(est.frequencies, tally.n, 4, 8)
        assert np.all(est.variance >= extra) and np.all(extra > 0)


# ------------------------------------------------------------------ attacks, clients, battery
@pytest.mark.parametrize("cls", [CMS, HCMS])
@pytest.mark.parametrize("targets", [[3], [0, 5, 9]])
def test_mga_fakes_support_every_target_and_the_gain_is_exact(cls: Any, targets: list[int]) -> None:
    """Every fake supports every target (the tally counts each fake for each); the mean gain over
    150 repeats within 4.5 standard errors of the closed form for the family."""
    mech, tg = cls(1.0, 12, k=4, m=16), np.array(targets)
    rng = np.random.default_rng(len(targets))
    counts = np.array([300, 200, 150, 100, 80, 60, 40, 30, 20, 10, 6, 4])
    fake = fake_reports(mech, tg, 500, rng=rng)
    assert mech.tally(fake).counts[tg].tolist() == [500] * tg.size
    gains = np.array(
        [
            gain(mech, mech.simulate(counts, rng), mech.tally(fake_reports(mech, tg, 100, rng=rng)), tg)
            for _ in range(150)
        ]
    )
    want = expected_gain(mech, tg, 100, counts)
    assert abs(gains.mean() - want) < 4.5 * gains.std(ddof=1) / math.sqrt(150)


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_input_fakes_gain_what_the_family_s_collisions_say(cls: Any) -> None:
    """The honest randomizer run on three targets in a narrow sketch (``m = 4``: targets collide):
    the mean gain over 200 repeats within 4.5 standard errors of the closed form."""
    mech, tg = cls(1.0, 12, k=2, m=4), np.array([0, 5, 9])
    rng = np.random.default_rng(31)
    counts = np.array([300, 200, 150, 100, 80, 60, 40, 30, 20, 10, 6, 4])
    gains = np.array(
        [
            gain(
                mech, mech.simulate(counts, rng), mech.tally(fake_reports(mech, tg, 400, rng=rng, strategy="input")), tg
            )
            for _ in range(200)
        ]
    )
    want = expected_gain(mech, tg, 400, counts, strategy="input")
    assert abs(gains.mean() - want) < 4.5 * gains.std(ddof=1) / math.sqrt(200)


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_the_js_client_writes_the_same_bytes_with_one_row(tmp_path: Path, cls: Any) -> None:
    """Both clients on the same words for ``k = 1`` (no row bits) and ``m = 32``, single reports and a
    batch (tests/test_js_client.py's driver); the standard cases' are covered there."""
    from tests.test_js_client import _node, _python_lines

    spec = spec_of(cls(1.0, 12, k=1, m=32), cls.__name__.lower())
    rng = np.random.default_rng(9)
    calls: list[dict[str, Any]] = [
        {"method": "report", "answer": int(a), "choices": {}} for a in rng.integers(0, 12, 4)
    ]
    calls.append({"method": "reports", "answers": [int(a) for a in rng.integers(0, 12, 20)], "choices": {}})
    words = np.random.default_rng(7).integers(0, GRID, size=20_000, dtype=np.uint64).astype(np.uint32)
    assert _node(tmp_path, spec.to_json(), words, calls) == _python_lines(spec, words, calls)


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_the_conformance_battery_passes_on_a_wider_domain(cls: Any) -> None:
    """The standard case is 5 items with the default ``k = 16``, ``m = 128``; here every check of the
    battery on 40 items in a sketch of ``k = 4``, ``m = 16`` (collisions common), the variant one
    budget step more generous."""
    results = check_oracle(cls(1.0, 40, k=4, m=16), variant=cls(1.25, 40, k=4, m=16), bad=(lambda: cls(1.0, 40, k=5),))
    assert set(results.values()) == {"passed"}
