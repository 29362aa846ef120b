"""SFP, the sequence fragment puzzle: discovery of planted strings, the word estimates' mean and variance,
the fragment estimates against their definition, the puzzle, the exact claim of a report, and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pldp.channel.hashed import hash_values
from pldp.channel.sampling import GRID
from pldp.errors import ParameterError, ReportError
from pldp.heavy import SFP
from pldp.heavy.discovery import noise_quantile
from pldp.heavy.pooled import level_nodes
from pldp.heavy.sfp import assemble_words
from pldp.heavy.strings import answer_rows, fingerprints
from tests.heavy_answers import population
from tests.tolerances import FLOAT_RTOL, SUM_RTOL


def _factor(p: float, q: float) -> float:
    """OLH's variance factor at an absent item on a node's grid, ``q (1 - q) / (p - q)^2``."""
    return q * (1 - q) / (p - q) ** 2


def test_the_planted_strings_are_found_among_random_ones() -> None:
    """Four strings at 30, 20, 10 and 5 % among 35 % of 500 random ones (each 0.07 %), 60,000 users, ε = 4
    split evenly, three positions of two bytes: a position's 20,000 users estimate a fragment with a
    standard error of about ``sqrt(0.73 / 20,000) = 0.006`` (``g = 8`` at ε = 2), so the largest noise
    among the ``2^20`` fragment items is some 0.035 and the four fragments stand above it at every
    position. The four are found, in order, each word estimate within 4.5 of its standard errors of
    its share; the random strings (0.07 % each, far below the floor) are not."""
    rng = np.random.default_rng(60_000)
    shares = {"tea": 0.30, "coffee": 0.20, "cocoa": 0.10, "mate": 0.05}
    answers = population(shares, 60_000, rng, tail=500)
    sfp = SFP(4.0, max_bytes=6, hash_bits=4)
    found = sfp.discover(sfp.perturb(answers, rng), top=4)
    assert found.answers == list(shares)
    est = found.estimate
    assert np.all(np.abs(est.frequencies - np.array(list(shares.values()))) < 4.5 * est.std_error)
    assert found.confident == list(shares) and 0.0 < found.floor < 0.05
    assert "longer than 6 bytes" in found.limits and "3 positions" in sfp.limits


def test_the_word_estimates_are_unbiased_with_the_stated_variance() -> None:
    """150 runs of 3,000 users, ``"ab"`` at 90 % and ``"xy"`` at 10 %, ε = 8 split evenly, two one-byte
    positions: every run finds both (their fragments are some 13 standard errors above the noise). The
    word reports are independent of the candidates, so given them each estimate is unbiased for the
    population's share with OLH's variance and no sampling term (every user reports her word). The
    means lie within 4.5 standard errors of the truth, and the empirical variance of ``"ab"``'s
    estimate is within 5 standard deviations (``sqrt(2 / 149)``, relative) of the stated one."""
    rng = np.random.default_rng(3000)
    shares = {"ab": 0.9, "xy": 0.1}
    answers = population(shares, 3000, rng)
    sfp = SFP(8.0, max_bytes=2, fragment_bytes=1, hash_bits=2)
    runs = 150
    est, var = np.zeros((runs, 2)), np.zeros((runs, 2))
    for r in range(runs):
        found = sfp.discover(sfp.perturb(answers, rng), top=2)
        order = [found.answers.index(s) for s in shares]
        est[r], var[r] = found.estimate.frequencies[order], found.estimate.variance[order]
    truth = np.array(list(shares.values()))
    assert np.all(np.abs(est.mean(axis=0) - truth) < 4.5 * np.sqrt(var.mean(axis=0) / runs))
    ratio = est[:, 0].var(ddof=1) / var[:, 0].mean()
    assert abs(ratio - 1) < 5 * math.sqrt(2 / (runs - 1))
    (p, q), n = sfp.word_nodes[0].support, 3000  # the stated variance is OLH's at f = 0.9, all users
    assert var[:, 0].mean() == pytest.approx((0.9 * p * (1 - p) + 0.1 * q * (1 - q)) / (n * (p - q) ** 2), rel=0.05)


def test_the_fragment_estimates_are_the_pooled_olh_estimates_of_their_definition() -> None:
    """Two levels, one-byte fragments tagged by one hash bit (``d_F = 512``): at each position the pooled
    estimate of every item equals the one computed here from its definition, each report hashed by the
    Toeplitz family directly (``[H_s(v) = y]`` for every item), each level's OLH estimate, and the
    weights ``n_t / V_t``. The counts are exact integers; the two sides differ only in the order of a
    few floating-point operations over sums of hundreds of terms: a long computation done another way
    (``SUM_RTOL``, relative and absolute, the estimates being of order 1)."""
    rng = np.random.default_rng(512)
    sfp = SFP([1.0, 3.0], max_bytes=2, fragment_bytes=1, hash_bits=1)
    answers = ["".join(rng.choice(list("abc"), 2)) for _ in range(600)]
    reports = sfp.perturb(answers, rng, level=np.arange(600) % 2)
    items = np.arange(512)
    for j in range(2):
        mine = reports[reports[:, 1] == j]
        fs, ws = [], []
        for t, node in enumerate(sfp.fragment_nodes):
            at = mine[mine[:, 0] == t]
            counts = (hash_values(items[None, :], at[:, 2:3], node.g, "toeplitz") == at[:, 3:4]).sum(axis=0)
            p, q = node.support
            fs.append((counts / at.shape[0] - q) / (p - q))
            ws.append(at.shape[0] / _factor(p, q))
        direct = np.array(ws) @ np.array(fs) / sum(ws)
        np.testing.assert_allclose(sfp.fragment_estimates(reports, j), direct, rtol=SUM_RTOL, atol=SUM_RTOL)


def test_the_puzzle_keeps_the_rows_that_are_answers_of_their_own_hash() -> None:
    """Three one-byte positions, two hash bits: the rows are the product of each common hash value's
    fragments, less those that are not padded answers (a first byte 0x00, a 0x00 then another byte)
    and those whose own hash differs from the value they were assembled under; a planted word always
    stays. With a cap, the hash value of the largest product loses its smallest estimates first."""
    words = [b"abc", b"de"]
    rows = answer_rows(words, 3)
    tags = (fingerprints(rows) & 3).tolist()
    extra = [0, ord("z")]  # fragments tagged by the first word's hash: 0x00 and "z", at every position
    kept = [
        np.array(
            [tags[0] * 256 + int(rows[0, j]), tags[1] * 256 + int(rows[1, j])] + [tags[0] * 256 + b for b in extra]
        )
        for j in range(3)
    ]
    out, fps, assembled = assemble_words(kept, 1, 2)
    got = {bytes(r) for r in out}
    assert {b"abc", b"de\x00"} <= got and fps.tolist() == fingerprints(out).tolist()
    expected, product = set(), 0
    for t in sorted(set(tags)):
        per = [[int(x) & 255 for x in k if int(x) >> 8 == t] for k in kept]
        product += math.prod(len(x) for x in per)
        for a in per[0]:
            for b in per[1]:
                for c in per[2]:
                    row = bytes([a, b, c])
                    valid = a != 0 and not any(row[i] == 0 and row[i + 1] != 0 for i in range(2))
                    if valid and (fingerprints(np.frombuffer(row, np.uint8)[None, :])[0] & 3) == t:
                        expected.add(row)
    assert got == expected and assembled == product
    few, _, capped = assemble_words(kept, 1, 2, cap=9)
    assert capped <= 9 < product and b"abc" in {bytes(r) for r in few}  # "abc" is the first of its hash everywhere
    none, _, zero = assemble_words([np.array([1 * 256 + 97]), np.array([2 * 256 + 98])], 1, 2)
    assert none.shape == (0, 2) and zero == 0  # no hash value kept at both positions


def test_a_report_is_exactly_the_sum_of_its_two_claims() -> None:
    """Each level's two nodes hold their claims exactly, and their product is within the level's budget:
    the realised budget is the sum of theirs and falls short of the level's by no more than the two
    grids' rounding (one step of ``weight`` each) plus the float rounding of ``eps - split eps``."""
    sfp = SFP([0.5, 2.0, 6.0], split=0.3)
    for check, eps, frag, word in zip(sfp.privacy(), sfp.levels, sfp.fragment_nodes, sfp.word_nodes, strict=True):
        assert check.holds and check.ldp_epsilon == eps
        rows = {row.part: row for row in check.rows}
        assert set(rows) == {"fragment", "word", "whole report"}
        parts = rows["fragment"].realised + rows["word"].realised
        assert rows["whole report"].realised == pytest.approx(parts, rel=FLOAT_RTOL)  # log of a product, sum of logs
        assert frag.epsilon == pytest.approx(0.3 * eps, rel=FLOAT_RTOL) and frag.epsilon + word.epsilon <= eps * (
            1 + FLOAT_RTOL
        )
        step = sum(math.log((GRID / (n.weight - 1) - (n.g - 1)) / (GRID / n.weight - (n.g - 1))) for n in (frag, word))
        assert eps - step - FLOAT_RTOL * eps <= rows["whole report"].realised <= eps
    greedy = SFP(2.0)
    greedy.word_nodes = level_nodes(np.array([1.5]))  # 1 + 1.5 > 2: each node holds, the report does not
    (check,) = greedy.privacy()
    rows = {row.part: row for row in check.rows}
    assert rows["fragment"].holds and rows["word"].holds and not rows["whole report"].holds and not check.holds


def test_the_position_and_seeds_do_not_depend_on_the_answer() -> None:
    """The same randomness gives the same levels, positions and both seeds whatever the answers."""
    sfp = SFP([1.0, 4.0], max_bytes=4, hash_bits=4)
    level = np.arange(300) % 2
    a = sfp.perturb(["x"] * 300, np.random.default_rng(5), level=level)
    b = sfp.perturb(["yes, quite different"] * 300, np.random.default_rng(5), level=level)
    assert a[:, [0, 1, 2, 4]].tolist() == b[:, [0, 1, 2, 4]].tolist()
    assert a.dtype == np.int64 and a.shape == (300, 6) and set(a[:, 1].tolist()) == {0, 1}
    assert a[:, [3, 5]].tolist() != b[:, [3, 5]].tolist()


def test_levels_pool_by_inverse_variance() -> None:
    """Half the users at ε = 1, half at 4, the same answers at each: the planted strings are found with
    word estimates within 4.5 standard errors, the floor is ``z / sqrt(sum_t n_t / V_t)`` over every
    user's word report (computed here from the nodes), and each level's report is checked at its own
    budget."""
    rng = np.random.default_rng(40_001)
    shares = {"red": 0.4, "blue": 0.25, "green": 0.1}
    answers = population(shares, 40_000, rng, tail=300)
    sfp = SFP([1.0, 4.0], max_bytes=6, hash_bits=4)
    level = np.arange(40_000) % 2
    found = sfp.discover(sfp.perturb(answers, rng, level=level), top=3)
    assert found.answers == list(shares)
    est = found.estimate
    assert np.all(np.abs(est.frequencies - np.array(list(shares.values()))) < 4.5 * est.std_error)
    pooled = sum(20_000 / _factor(*node.support) for node in sfp.word_nodes)
    z = noise_quantile(est.info["candidates"])
    assert found.floor == pytest.approx(z / math.sqrt(pooled), rel=FLOAT_RTOL)  # the same sum, another order
    assert [c.ldp_epsilon for c in sfp.privacy()] == [1.0, 4.0] and all(c.holds for c in sfp.privacy())


def test_bad_reports_and_parameters_are_refused() -> None:
    sfp = SFP(1.0, max_bytes=4, hash_bits=4)  # g = 4 for both nodes at 0.5
    good = sfp.perturb(["ab", "cd"], np.random.default_rng(0))
    g_frag, g_word = sfp.fragment_nodes[0].g, sfp.word_nodes[0].g
    cases = [
        (0, 1, "level 1 is not in"),
        (1, 2, "position 2 is not in"),
        (2, -1, "fragment_seed -1 is not in"),
        (3, g_frag, f"fragment_value {g_frag} is not in \\[0, {g_frag}\\)"),
        (4, 2**31, "word_seed 2147483648 is not in"),
        (5, g_word, f"word_value {g_word} is not in"),
    ]
    for col, value, why in cases:
        bad = good.copy()
        bad[1, col] = value
        with pytest.raises(ReportError, match=f"report 1: {why}"):
            sfp.discover(bad)
    with pytest.raises(ReportError, match="shape"):
        sfp.discover(good[:, :5])
    with pytest.raises(ReportError, match="shape"):
        sfp.discover(good.astype(float))
    with pytest.raises(ReportError, match="position 1 has no reports"):
        sfp.discover(np.array([[0, 0, 5, 1, 5, 1]]))
    with pytest.raises(ParameterError, match="width"):
        sfp.discover(good, top=5, width=2)
    with pytest.raises(ParameterError, match="position must lie in"):
        sfp.fragment_estimates(good, 2)
    with pytest.raises(ParameterError, match="level needs one index per answer"):
        sfp.perturb(["a", "b"], np.random.default_rng(0), level=[0])
    with pytest.raises(ParameterError, match=r"level index \(an integer\)"):
        SFP([1.0, 4.0], max_bytes=4, hash_bits=4).perturb(["a"], np.random.default_rng(0), level=[1.0])
    with pytest.raises(ParameterError, match="answer 0 holds a byte 0x00"):
        sfp.perturb(["a\x00b"], np.random.default_rng(0))
    with pytest.raises(ParameterError, match="multiple of fragment_bytes"):
        SFP(1.0, max_bytes=5)
    with pytest.raises(ParameterError, match="at most 64"):
        SFP(1.0, max_bytes=66)
    with pytest.raises(ParameterError, match="too large"):
        SFP(1.0, max_bytes=6, fragment_bytes=3, hash_bits=7)  # 7 + 24 bits > 30
    for split in (0.0, 1.0, 1.5, -0.2):
        with pytest.raises(ParameterError, match="split"):
            SFP(1.0, split=split)
    for make in (lambda: SFP(0.0), lambda: SFP([2.0, 1.0]), lambda: SFP(1.0, hash_bits=0)):
        with pytest.raises(ParameterError):
            make()
