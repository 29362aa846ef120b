"""PEM over local hashing: discovery of planted heavy hitters, the estimates' mean and variance, the exact
claim of a report, what it cannot see, and its refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pldp.channel import check_claims
from pldp.channel.hashed import HashedNode
from pldp.errors import ParameterError, ReportError
from pldp.heavy import PEM, mix_cost
from pldp.heavy.discovery import noise_quantile
from pldp.heavy.strings import answer_rows, fingerprints, shown
from pldp.xxh32 import xxh32
from tests.heavy_answers import population
from tests.tolerances import FLOAT_RTOL


def test_the_planted_heavy_hitters_are_found_in_order_among_random_strings() -> None:
    """Four strings at 30, 20, 10 and 5 % among 35 % of 500 random ones (each 0.07 %): with ε = 4 and
    10,000 users a group, one group's standard error is about 0.003, so the four are found, in order,
    and each estimate lies within 4.5 of its standard errors of its share."""
    rng = np.random.default_rng(40_000)
    shares = {"tea": 0.30, "coffee": 0.20, "cocoa": 0.10, "mate": 0.05}
    answers = population(shares, 40_000, rng, tail=500)
    pem = PEM(4.0, max_bytes=6)
    found = pem.discover(pem.perturb(answers, rng), top=4)
    assert found.answers == list(shares)
    est = found.estimate
    assert np.all(np.abs(est.frequencies - np.array(list(shares.values()))) < 4.5 * est.std_error)
    assert 0.0 < found.floor < 0.05 and "longer than 6 bytes" in found.limits


def test_the_estimates_are_unbiased_with_the_stated_variance_split_included() -> None:
    """150 runs of 3,000 users, ``"abc"`` at 90 % and ``"xyz"`` at 10 %, three groups of about 1,000,
    ε = 8 with ``g = 16``: OLH's own variance of ``"abc"``'s estimate is about ``0.012 / n_j`` and the
    group's sampling adds ``0.9 * 0.1 * 2/3 / n_j = 0.06 / n_j``. The estimates' means lie within 4.5
    standard errors of the truth, and the empirical variance of ``"abc"``'s is within 5 standard
    deviations (``sqrt(2 / 149)``, relative) of the stated one; without the sampling term the stated
    variance would be about a sixth of it."""
    rng = np.random.default_rng(3000)
    shares = {"abc": 0.9, "xyz": 0.1}
    answers = population(shares, 3000, rng)
    pem = PEM(8.0, max_bytes=3, g=16)
    runs = 150
    est, var = np.zeros((runs, 2)), np.zeros((runs, 2))
    for r in range(runs):
        found = pem.discover(pem.perturb(answers, rng), top=2)
        order = [found.answers.index(s) for s in shares]  # every run finds both
        est[r], var[r] = found.estimate.frequencies[order], found.estimate.variance[order]
    truth = np.array(list(shares.values()))
    assert np.all(np.abs(est.mean(axis=0) - truth) < 4.5 * np.sqrt(var.mean(axis=0) / runs))
    ratio = est[:, 0].var(ddof=1) / var[:, 0].mean()
    assert abs(ratio - 1) < 5 * math.sqrt(2 / (runs - 1))


def test_with_levels_the_variance_counts_each_level_s_own_group_sample() -> None:
    """200 runs of 4,000 users, half at ε = 0.5 and half at 8 (``g = 16``), ``"a"`` and ``"b"`` at 50 %:
    the pooled estimate of ``"a"`` weighs the ε = 8 level's group almost alone, so its sampling term
    is that level's group sample, about twice the pooled one. The empirical variance is within 5
    standard deviations (``sqrt(2 / 199)``, relative) of the stated one; with the pooled sampling
    term the stated one would be about 0.56 of it."""
    rng = np.random.default_rng(4001)
    answers = ["a", "b"] * 2000
    pem = PEM([0.5, 8.0], max_bytes=2, g=16)
    level = np.repeat([0, 1], 2000)
    runs = 200
    est, var = np.zeros(runs), np.zeros(runs)
    for r in range(runs):
        found = pem.discover(pem.perturb(answers, rng, level=level), top=2)
        i = found.answers.index("a")
        est[r], var[r] = found.estimate.frequencies[i], found.estimate.variance[i]
    assert abs(est.mean() - 0.5) < 4.5 * math.sqrt(var.mean() / runs)
    assert abs(est.var(ddof=1) / var.mean() - 1) < 5 * math.sqrt(2 / (runs - 1))


def test_a_report_is_the_oracle_s_claim_and_its_group_ignores_the_answer() -> None:
    """The claim is the OLH node's, checked exactly (a claim a hair below the realised ratio fails);
    the same randomness gives the same groups whatever the answers."""
    pem = PEM(2.0, max_bytes=5)
    (verdict,) = pem.privacy()
    assert verdict.holds and verdict.rows[0].realised <= 2.0
    (node,) = pem.nodes
    tight = HashedNode(node.d, node.g, node.family, node.keep, node.weight, verdict.rows[0].realised * (1 - 1e-9))
    assert not check_claims(tight).holds
    a = pem.perturb(["x"] * 300, np.random.default_rng(5))
    b = pem.perturb(["yes, quite different"] * 300, np.random.default_rng(5))
    assert a[:, :3].tolist() == b[:, :3].tolist()  # level, group and seed


def test_strings_rows_prefixes_and_fingerprints() -> None:
    """Text is normalised (NFC, trimmed), cut to the bound and padded; a prefix's fingerprint is XXH32
    of its bytes, padding included, modulo 2**31 - 1; a row cut inside a character stays bytes."""
    rows = answer_rows([" cafe\u0301 ", b"\xff\xfe", "abcdef"], 4)
    assert [bytes(r) for r in rows] == ["café".encode()[:4], b"\xff\xfe\x00\x00", b"abcd"]
    assert fingerprints(rows[1:2, :3]).tolist() == [xxh32(b"\xff\xfe\x00") % (2**31 - 1)]
    assert shown(rows[2]) == "abcd" and shown(rows[1]) == b"\xff\xfe" and shown(rows[0]) == b"caf\xc3"


def test_a_long_answer_is_found_as_its_first_bytes() -> None:
    """Text past the bound is cut, not refused, even past the 256 bytes a hashed answer may hold."""
    rng = np.random.default_rng(3)
    pem = PEM(4.0, max_bytes=3)
    found = pem.discover(pem.perturb(["kangaroo"] * 3000 + ["emu"] * 1500 + ["y" * 300] * 500, rng), top=2)
    assert found.answers == ["kan", "emu"]
    assert bytes(answer_rows(["y" * 300], 3)[0]) == b"yyy"


@pytest.mark.parametrize(
    ("answers", "why"),
    [
        ([b""], "answer 0 is empty"),
        (["ok", "a\x00b"], "answer 1 holds a byte 0x00"),
        (["ok", 7], "answer 1 is a int"),
        (["   "], "answer 0: the answer's text is empty"),
    ],
)
def test_bad_answers_are_refused_by_their_place(answers: list[object], why: str) -> None:
    with pytest.raises(ParameterError, match=why):
        PEM(1.0, max_bytes=4).perturb(answers, np.random.default_rng(0))


def test_bad_reports_and_parameters_are_refused() -> None:
    pem = PEM(1.0, max_bytes=4)
    with pytest.raises(ReportError, match="report 1: group 4 is not in"):
        pem.discover(np.array([[0, 0, 0, 0], [0, 4, 0, 0]]))
    with pytest.raises(ReportError, match=r"report 0: value 4 is not in \[0, 4\)"):  # g = 4 at eps = 1
        pem.discover(np.array([[0, 0, 0, 4]]))
    with pytest.raises(ReportError, match="report 0: level 1 is not in"):
        pem.discover(np.array([[1, 0, 0, 0]]))
    with pytest.raises(ReportError, match="shape"):
        pem.discover(np.zeros((3, 3), dtype=int))
    with pytest.raises(ParameterError, match="level needs one index per answer"):
        pem.perturb(["a", "b"], np.random.default_rng(0), level=[0])
    with pytest.raises(ParameterError, match=r"level index \(an integer\), got dtype float64"):
        PEM([1.0, 4.0]).perturb(["a", "b"], np.random.default_rng(0), level=[1.0, 1.9])
    with pytest.raises(ParameterError, match=r"level must lie in \[0, 2\)"):
        PEM([1.0, 4.0]).perturb(["a"], np.random.default_rng(0), level=[2])
    with pytest.raises(ReportError, match=r"group 1 .* has no reports"):
        PEM(1.0, max_bytes=2).discover(np.array([[0, 0, 5, 1]]))
    for make in (lambda: PEM(1.0, max_bytes=0), lambda: PEM(1.0, max_bytes=65), lambda: PEM(0.0)):
        with pytest.raises(ParameterError):
            make()
    with pytest.raises(ParameterError, match="width"):
        pem.discover(np.zeros((3, 4), dtype=int), top=5, width=2)


def test_levels_combine_by_inverse_variance_and_find_what_one_level_alone_misses() -> None:
    """Half the users at ε = 0.5, half at 4, the same answers at each: the pooled estimate's variance at
    an absent item is ``1 / sum_t n_tj / V_t`` (the floor: three of its standard errors), the planted
    strings are found with estimates within 4.5 standard errors, and each level's report is checked
    at its own budget."""
    rng = np.random.default_rng(12_000)
    shares = {"red": 0.4, "blue": 0.25, "green": 0.1}
    answers = population(shares, 12_000, rng, tail=300)
    pem = PEM([0.5, 4.0], max_bytes=5)
    level = np.arange(12_000) % 2
    reports = pem.perturb(answers, rng, level=level)
    found = pem.discover(reports, top=3)
    assert found.answers == list(shares)
    assert np.all(np.abs(found.estimate.frequencies - np.array(list(shares.values()))) < 4.5 * found.estimate.std_error)
    last = reports[reports[:, 1] == 4]
    pooled = sum(
        np.sum(last[:, 0] == t) * (p - q) ** 2 / (q * (1 - q)) for t, (p, q) in enumerate(n.support for n in pem.nodes)
    )
    z = noise_quantile(found.estimate.info["candidates"])
    assert found.floor == pytest.approx(z / math.sqrt(pooled), rel=FLOAT_RTOL) and found.confident == list(shares)
    assert [v.rows[0].claimed for v in pem.privacy()] == [0.5, 4.0] and all(v.holds for v in pem.privacy())


def test_mix_cost_is_the_pooled_factor_over_the_mean_budget_s() -> None:
    """Against OLH's factor computed here: one level costs nothing, and half at 1 and half at 4 pools
    to a factor well below the factor at 2.5 (a factor falls faster than linearly in the budget)."""

    def factor(e: float) -> float:
        g = round(math.exp(e)) + 1
        return (math.exp(e) + g - 1) ** 2 / ((math.exp(e) - 1) ** 2 * (g - 1))

    assert mix_cost([2.0], [1.0]) == pytest.approx(1.0, rel=FLOAT_RTOL)
    pooled = 1 / (0.5 / factor(1.0) + 0.5 / factor(4.0))
    assert mix_cost([1.0, 4.0], [0.5, 0.5]) == pytest.approx(pooled / factor(2.5), rel=FLOAT_RTOL)
    assert mix_cost([1.0, 4.0], [0.5, 0.5]) < 0.5
    with pytest.raises(ParameterError, match="summing to 1"):
        mix_cost([1.0, 4.0], [0.5, 0.6])


def test_fakes_promote_a_string_nobody_holds_by_the_expected_share() -> None:
    """2 % of fake users (Cao et al.'s maximal gain attack, spread over the groups) put ``"zzz"``, which
    no honest user holds, among the discovered answers, its estimate within 4.5 standard errors of
    the closed form ``beta (1 - q) / (p - q)`` (about 4 % at ε = 4)."""
    from pldp.attacks.heavy import pem_expected_share, pem_fake_reports

    rng = np.random.default_rng(20_000)
    answers = population({"tea": 0.5, "coffee": 0.3}, 20_000, rng, tail=200)
    pem = PEM(4.0, max_bytes=4)
    honest = pem.perturb(answers, rng)
    fakes = pem_fake_reports(pem, "zzz", 400, rng)
    found = pem.discover(np.concatenate([honest, fakes]), top=3)
    assert "zzz" in found.confident and "zzz" not in pem.discover(honest, top=3).answers
    i = found.answers.index("zzz")
    expected = pem_expected_share(pem, 20_000, 400)
    assert 0.035 < expected < 0.045
    assert abs(found.estimate.frequencies[i] - expected) < 4.5 * found.estimate.std_error[i]
