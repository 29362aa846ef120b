"""TreeHist: the prefix tree's steps, discovery of planted strings, the word estimates' mean and variance,
the exact claim of the two-part report, and its refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pldp.errors import EstimationError, ParameterError, ReportError
from pldp.heavy import PEM, TreeHist
from pldp.heavy.prefixes import extend, prefix_rows
from tests.tolerances import FLOAT_RTOL


def _possible(bits: int) -> set[bytes]:
    """Every prefix of ``bits`` bits of every 2-byte answer row (first byte not 0x00, nothing after a 0x00)."""
    first = np.repeat(np.arange(1, 256, dtype=np.uint8), 256)
    second = np.tile(np.arange(256, dtype=np.uint8), 255)
    rows = np.column_stack([first, second])
    rows = rows[(rows[:, 0] != 0)]
    return {r.tobytes() for r in prefix_rows(rows, bits)}


@pytest.mark.parametrize("step", [1, 2, 4, 8])
def test_a_step_grows_the_prefixes_answers_can_have_into_exactly_the_next_ones(step: int) -> None:
    """Over 2-byte answers, growing every possible prefix of ``b`` bits gives every possible prefix of
    ``b + s`` bits and nothing else, once each (``"a"`` then padding is possible; 0x00 then ``"a"``
    is not)."""
    assert b"\x61\x00" in _possible(16) and b"\x00\x61" not in _possible(16)
    kept = np.zeros((1, 0), dtype=np.uint8)
    for bits in range(0, 16, step):
        grown = extend(kept, bits, step)
        got = [r.tobytes() for r in grown]
        assert len(got) == len(set(got)) and set(got) == _possible(bits + step)
        kept = grown


def test_the_planted_strings_are_found_and_their_word_estimates_lie_within_their_errors() -> None:
    """Four strings at 30, 20, 10 and 5 % among random ones, ε = 6 split evenly, 40,000 users: each
    depth's group is 6,667 users, so a step's standard error at ε = 3 is about 0.006; the four are
    found, in order, and each word estimate (over all users) lies within 4.5 standard errors."""
    rng = np.random.default_rng(41_000)
    shares = {"tea": 0.30, "coffee": 0.20, "cocoa": 0.10, "mate": 0.05}
    n = 40_000
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    answers = [s for s, f in shares.items() for _ in range(round(f * n))]
    answers += ["".join(rng.choice(letters, 6)) for _ in range(n - len(answers))]
    tree = TreeHist(6.0, max_bytes=6)
    found = tree.discover(tree.perturb(answers, rng), top=4)
    assert found.answers == list(shares)
    est = found.estimate
    assert np.all(np.abs(est.frequencies - np.array(list(shares.values()))) < 4.5 * est.std_error)
    assert found.confident == list(shares) and est.n == n


def test_a_binary_tree_finds_them_too() -> None:
    """The paper's binary tree (``step_bits = 1``) over 2-byte answers: 16 depths of 1,250 users at
    ε = 4 (2 a part); ``"hi"`` at 60 % and ``"yo"`` at 40 % are found, in order."""
    rng = np.random.default_rng(1616)
    answers = ["hi"] * 12_000 + ["yo"] * 8_000
    tree = TreeHist(4.0, max_bytes=2, step_bits=1)
    found = tree.discover(tree.perturb(answers, rng), top=2)
    assert found.answers == ["hi", "yo"]


def test_the_word_estimates_are_unbiased_with_olh_s_variance_over_all_users() -> None:
    """150 runs of 3,000 users, ``"ab"`` at 80 % and ``"cd"`` at 20 %, ε = 4 split evenly: the word
    part estimates every candidate from all 3,000 users, so given the candidates its mean is the share
    (within 4.5 standard errors of the mean) and its variance is OLH's at ε = 2 over 3,000 users, with
    no group-sampling term: the empirical variance is within 5 standard deviations (``sqrt(2 / 149)``,
    relative) of the stated one."""
    rng = np.random.default_rng(3001)
    answers = ["ab"] * 2400 + ["cd"] * 600
    tree = TreeHist(4.0, max_bytes=2)
    runs = 150
    est, var = np.zeros((runs, 2)), np.zeros((runs, 2))
    for r in range(runs):
        found = tree.discover(tree.perturb(answers, rng), top=2)
        order = [found.answers.index(s) for s in ("ab", "cd")]
        est[r], var[r] = found.estimate.frequencies[order], found.estimate.variance[order]
    truth = np.array([0.8, 0.2])
    assert np.all(np.abs(est.mean(axis=0) - truth) < 4.5 * np.sqrt(var.mean(axis=0) / runs))
    for k in range(2):
        ratio = est[:, k].var(ddof=1) / var[:, k].mean()
        assert abs(ratio - 1) < 5 * math.sqrt(2 / (runs - 1))


def test_the_whole_report_is_the_sum_of_its_parts_exactly() -> None:
    """Each level's report: the prefix part's claim at split times the budget, the word part's at the
    rest, each exact on the grid, and the whole report's epsilon their sum."""
    tree = TreeHist([1.0, 4.0], max_bytes=4, split=0.25)
    for eps, check in zip([1.0, 4.0], tree.privacy(), strict=True):
        assert check.holds and math.isclose(check.ldp_epsilon, eps)
        (prefix,), (word,), (whole,) = [
            [r for r in check.rows if r.part == p] for p in ("prefix", "word", "whole report")
        ]
        assert whole.holds and math.isclose(whole.realised, prefix.realised + word.realised, rel_tol=FLOAT_RTOL)
        assert math.isclose(prefix.claimed, 0.25 * eps) and math.isclose(word.claimed, 0.75 * eps)
        assert prefix.realised <= prefix.claimed and word.realised <= word.claimed
        assert prefix.realised > prefix.claimed - 1e-6  # the grid rounds down by under 2^-20 of a word


def test_the_depth_and_the_seeds_do_not_depend_on_the_answer() -> None:
    """Under the same randomness two populations of different answers get the same depths and seeds:
    only the values read the answer."""
    tree = TreeHist(2.0, max_bytes=4, step_bits=4)
    a = tree.perturb(["spam"] * 500, np.random.default_rng(9))
    b = tree.perturb(["eggs"] * 500, np.random.default_rng(9))
    assert np.array_equal(a[:, [0, 1, 2, 4]], b[:, [0, 1, 2, 4]]) and not np.array_equal(a[:, 5], b[:, 5])


def test_levels_pool_and_the_threshold_prunes() -> None:
    """Half the users at ε = 1 and half at ε = 6: ``"x"`` at 70 % and ``"y"`` at 30 % are found; a
    threshold above every share keeps nothing, and the discovery says so."""
    rng = np.random.default_rng(2200)
    answers = ["x"] * 7000 + ["y"] * 3000
    level = np.tile([0, 1], 5000)
    tree = TreeHist([1.0, 6.0], max_bytes=1)
    rep = tree.perturb(answers, rng, level=level)
    assert tree.discover(rep, top=2).answers == ["x", "y"]
    assert tree.discover(rep, top=2, threshold=0.5).answers == ["x"]
    with pytest.raises(EstimationError, match=r"threshold 0\.9 keeps no prefix of 8 bits"):
        tree.discover(rep, top=2, threshold=0.9)


def test_treehist_s_final_estimates_are_tighter_than_pem_s_on_the_same_users() -> None:
    """The word part sees all ``n`` users at half the budget, PEM's last group ``n / L`` at the whole
    one: at ε = 4 over 8 bytes the stated standard error of ``"alpha"`` is below PEM's."""
    rng = np.random.default_rng(808)
    answers = ["alpha"] * 6000 + ["beta"] * 4000
    t = TreeHist(4.0, max_bytes=8).discover(TreeHist(4.0, max_bytes=8).perturb(answers, rng), top=2)
    p = PEM(4.0, max_bytes=8).discover(PEM(4.0, max_bytes=8).perturb(answers, rng), top=2)
    assert t.answers == p.answers == ["alpha", "beta"]
    assert t.estimate.std_error[0] < p.estimate.std_error[0]


def test_refusals() -> None:
    with pytest.raises(ParameterError, match="step_bits"):
        TreeHist(1.0, step_bits=3)
    with pytest.raises(ParameterError, match="split"):
        TreeHist(1.0, split=1.0)
    tree = TreeHist(1.0, max_bytes=2)
    rep = tree.perturb(["ok"] * 200, np.random.default_rng(1))
    with pytest.raises(ReportError, match=r"\(n, 6\)"):
        tree.discover(rep[:, :4])
    bad = rep.copy()
    bad[3, 5] = tree.word_nodes[0].g
    with pytest.raises(ReportError, match=r"report 3: word_value 3 is not in \[0, 3\)"):
        tree.discover(bad)
    with pytest.raises(ReportError, match="depth 1"):
        tree.discover(rep[rep[:, 1] == 0])


def test_fakes_promote_a_string_nobody_holds_by_the_expected_share() -> None:
    """2 % of fake users (Cao et al.'s maximal gain attack: both parts at the target, spread over the
    depths) put ``"zzz"``, which no honest user holds, among the confident answers, its word estimate
    within 4.5 standard errors of ``beta (1 - q_w) / (p_w - q_w)`` at the word part's ε = 3."""
    from pldp.attacks.heavy import treehist_expected_share, treehist_fake_reports

    rng = np.random.default_rng(20_001)
    answers = ["tea"] * 10_000 + ["coffee"] * 6_000 + ["cocoa"] * 4_000
    tree = TreeHist(6.0, max_bytes=4)
    honest = tree.perturb(answers, rng)
    fakes = treehist_fake_reports(tree, "zzz", 400, rng)
    assert np.array_equal(np.bincount(fakes[:, 1]), np.full(4, 100))  # spread evenly over the depths
    found = tree.discover(np.concatenate([honest, fakes]), top=4)
    assert "zzz" in found.confident and "zzz" not in tree.discover(honest, top=4).answers
    i = found.answers.index("zzz")
    expected = treehist_expected_share(tree, 20_000, 400)
    assert 0.035 < expected < 0.045  # about twice the share of fakes
    assert abs(found.estimate.frequencies[i] - expected) < 4.5 * found.estimate.std_error[i]
