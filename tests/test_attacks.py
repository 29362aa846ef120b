"""pldp.attacks: fake reports in every oracle's format, what each strategy sends, and the gains.

Monte Carlo checks compare a mean over seeded repeats with a closed form within ``Z`` standard
errors of that mean (two-sided 1e-5 each), so they fail on a wrong formula or a wrong report and
pass on noise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pldp
from pldp.attacks import STRATEGIES, expected_gain, fake_reports, gain, gain_is_exact, promoted, rule_of
from pldp.attacks.base import RULES
from pldp.attacks.pure import DirectRule, honest_ones, ones_law
from pldp.bitcount import row_ones
from pldp.errors import ParameterError
from pldp.experiments.paths import users_of
from pldp.protocols import FEBSF, MPLDP, PBP, RCF
from pldp.robustness import (
    amplification,
    combined_gain,
    input_gain,
    krr_mga_gain,
    level_gains,
    oue_mga_gain,
    per_fake_gain,
    support_gain,
    uniform_counterpart,
)
from pldp.testing import OracleCase, check_attack, standard_cases
from pldp.testing.attack import _format

CASES = standard_cases()
Z = 4.42


def _targets(name: str) -> list:
    return [[2], [3]] if name == "mpldp" else [3]


def _strategies(oracle: pldp.FrequencyOracle) -> list[str]:
    return [s for s in STRATEGIES if s in rule_of(oracle).strategies]


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_strategy_sends_what_perturb_sends_and_merges(name: str) -> None:
    case = CASES[name]
    oracle, rng = case.oracle, np.random.default_rng(7)
    honest = oracle.simulate(*case.data, rng)
    real = oracle.perturb(*users_of(*case.data), rng)
    for strategy in _strategies(oracle):
        level = 1 if strategy == "level" else None
        for m in (0, 1, 37):
            fake = fake_reports(oracle, _targets(name), m, rng=rng, strategy=strategy, level=level)
            _format(fake, real, m, honest.n)
            tally = oracle.tally(fake)
            assert tally.n == m and (honest + tally).n == honest.n + m


def test_strategies_apply_where_they_should() -> None:
    assert _strategies(pldp.KRR(1.0, 4)) == ["mga", "adaptive", "input", "sensitive", "knows_defence"]
    for case in ("febsf-oue", "rcf", "pbp", "ppda", "mpldp"):
        assert "sensitive" not in _strategies(CASES[case].oracle)
        assert {"min_level", "max_level", "level"} <= set(_strategies(CASES[case].oracle))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: fake_reports(pldp.KRR(1.0, 4), [4], 3, rng=np.random.default_rng()), "targets must lie in"),
        (lambda: fake_reports(pldp.KRR(1.0, 4), [], 3, rng=np.random.default_rng()), "non-empty"),
        (lambda: fake_reports(pldp.KRR(1.0, 4), [1, 1], 3, rng=np.random.default_rng()), "distinct"),
        (lambda: fake_reports(pldp.KRR(1.0, 4), [1.5], 3, rng=np.random.default_rng()), "integer"),
        (lambda: fake_reports(pldp.KRR(1.0, 4), [1], -1, rng=np.random.default_rng()), "m must be"),
        (lambda: fake_reports(pldp.KRR(1.0, 4), [1], 3, rng=0), "Generator"),  # type: ignore[arg-type]
        (lambda: fake_reports(pldp.KRR(1.0, 4), [1], 3, rng=np.random.default_rng(), strategy="x"), "unknown"),
        (
            lambda: fake_reports(pldp.KRR(1.0, 4), [1], 3, rng=np.random.default_rng(), strategy="max_level"),
            "does not apply to KRR",
        ),
        (
            lambda: fake_reports(RCF([1.0, 2.0], 4), [1], 3, rng=np.random.default_rng(), strategy="sensitive"),
            "does not apply to RCF",
        ),
        (
            lambda: fake_reports(RCF([1.0, 2.0], 4), [1], 3, rng=np.random.default_rng(), strategy="level", level=2),
            r"index in \[0, 2\)",
        ),
        (lambda: fake_reports(RCF([1.0, 2.0], 4), [1], 3, rng=np.random.default_rng(), level=1), "level= is for"),
        (
            lambda: fake_reports(
                RCF([1.0, 2.0], 4), [1], 3, rng=np.random.default_rng(), strategy="adaptive", shares=[0.5, 0.6]
            ),
            "shares must be",
        ),
        (lambda: fake_reports(MPLDP([3, 4], [1.0, 2.0]), [[], []], 3, rng=np.random.default_rng()), "at least one"),
        (lambda: fake_reports(object(), [1], 3, rng=np.random.default_rng()), "expected a pldp"),
    ],
)
def test_bad_attacks_are_refused(call, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ParameterError, match=match):
        call()


def test_mga_direct_reports_a_target_uniformly() -> None:
    fake = fake_reports(pldp.KRR(1.0, 8), [2, 5], 20_000, rng=np.random.default_rng(1))
    counts = np.bincount(fake, minlength=8)
    assert counts[[0, 1, 3, 4, 6, 7]].sum() == 0
    assert abs(counts[2] - 10_000) < Z * math.sqrt(20_000 * 0.25)


def test_mga_unary_sets_the_targets_and_the_expected_ones() -> None:
    oue = pldp.OUE(1.0, 16)
    l_honest = 0.5 + 15 * float(oue.b[0])  # 4.53: Cao et al.'s l, rounded to 5
    bits = oue.unpack(fake_reports(oue, [14, 15], 5000, rng=np.random.default_rng(2)))
    assert bits[:, [14, 15]].all() and (bits.sum(axis=1) == round(l_honest)).all()
    others = bits[:, :14].sum(axis=0)  # the 3 random others, uniform over the 14 non-targets
    assert np.all(np.abs(others - 5000 * 3 / 14) < Z * math.sqrt(5000 * 3 / 14))
    # more targets than honest ones: only the targets
    many = oue.unpack(fake_reports(oue, np.arange(8), 10, rng=np.random.default_rng(2)))
    assert (many.sum(axis=1) == 8).all() and many[:, :8].all()


def test_adaptive_unary_reports_have_the_honest_law_of_the_ones_count() -> None:
    """A chi-square test of the fakes' ones counts against the exact honest law, and of honest
    reports' counts against it (so the law itself is right); MGA's fixed count fails it."""
    from scipy import stats

    idue = CASES["idue-opt0-min"].oracle
    rng = np.random.default_rng(3)
    law = ones_law(idue)
    m = 20_000

    def pvalue(counts: np.ndarray) -> float:
        observed = np.bincount(counts, minlength=law.size)
        keep = law * m >= 5  # the rare counts pooled into one cell
        exp = np.append(law[keep], law[~keep].sum()) * m
        obs = np.append(observed[keep], observed[~keep].sum())
        return float(stats.chisquare(obs[exp > 0], exp[exp > 0]).pvalue)

    fake = row_ones(fake_reports(idue, [4], m, rng=rng, strategy="adaptive"))
    assert pvalue(fake) > 1e-4
    assert pvalue(honest_ones(idue, m, rng)) > 1e-4
    assert pvalue(row_ones(fake_reports(idue, [4], m, rng=rng))) < 1e-12


def test_input_poisoning_runs_the_honest_randomizer_on_a_target() -> None:
    krr = pldp.KRR(1.0, 4)
    fake = fake_reports(krr, [3], 40_000, rng=np.random.default_rng(4), strategy="input")
    share = np.bincount(fake, minlength=4) / fake.size
    assert abs(share[3] - krr.diagonal[3]) < Z * math.sqrt(krr.diagonal[3] / fake.size)


def test_sensitive_promotes_the_smallest_budgets() -> None:
    iprr = pldp.IPRR(pldp.ItemBudgets.from_array([1.0, 0.1, 0.5, np.inf, 0.1]))
    assert promoted(iprr, [3, 0], "sensitive").tolist() == [1, 4]
    assert promoted(iprr, [3, 0]).tolist() == [0, 3]
    ps = CASES["idue-ps"].oracle  # base budgets 0.5, 1, 1, 2, 2
    assert promoted(ps, [4], "sensitive").tolist() == [0]
    fake = fake_reports(iprr, [3], 100, rng=np.random.default_rng(5), strategy="sensitive")
    assert set(np.unique(fake).tolist()) <= {1, 4}


def test_level_claims() -> None:
    rng = np.random.default_rng(6)
    febsf = FEBSF([0.5, 1.0, 2.0], 0.5, 5, oracle="oue")
    assert (fake_reports(febsf, [1], 50, rng=rng, strategy="min_level").level == 0).all()
    assert (fake_reports(febsf, [1], 50, rng=rng, strategy="max_level").level == 2).all()
    assert (fake_reports(febsf, [1], 50, rng=rng, strategy="level", level=1).level == 1).all()
    even = fake_reports(febsf, [1], 50, rng=rng).level  # mga: 17, 17, 16
    assert np.bincount(even).tolist() == [17, 17, 16]
    rcf = RCF([0.5, 1.0, 2.0], 5, "oue")
    rep = fake_reports(rcf, [1], 30, rng=rng, strategy="max_level")
    assert (rep.level == 2).all() and [len(d) for d in rep.data] == [0, 0, 30]
    adaptive = fake_reports(rcf, [1], 30_000, rng=rng, strategy="adaptive", shares=[0.7, 0.2, 0.1])
    share = np.bincount(adaptive.level) / 30_000
    assert np.all(np.abs(share - [0.7, 0.2, 0.1]) < Z * np.sqrt(np.array([0.21, 0.16, 0.09]) / 30_000))
    # PLDP-FEBSF's honest-looking fakes perturb their level report: every level is reported
    spread = fake_reports(febsf, [1], 3000, rng=rng, strategy="adaptive", shares=[1.0, 0.0, 0.0]).level
    assert set(np.unique(spread).tolist()) == {0, 1, 2}


def test_knows_defence_moves_every_level_alike() -> None:
    """Claims in proportion to shares / S_l: each level's estimate of the target moves by the same
    amount (to first order), so a weighted median of the levels moves as their mean does."""
    rcf = RCF([0.5, 1.0, 2.0], 16, "krr")
    cells = np.full((3, 16), 2000)
    rng = np.random.default_rng(8)
    fake = fake_reports(rcf, [15], 3000, rng=rng, strategy="knows_defence")
    honest = rcf.simulate(cells, rng)
    poisoned = honest + rcf.tally(fake)
    moves = rcf.estimate(poisoned).info["level_estimates"][:, 15] - rcf.estimate(honest).info["level_estimates"][:, 15]
    assert moves.min() > 0.6 * moves.max()
    concentrated = honest + rcf.tally(fake_reports(rcf, [15], 3000, rng=rng, strategy="min_level"))
    lopsided = (
        rcf.estimate(concentrated).info["level_estimates"][:, 15] - rcf.estimate(honest).info["level_estimates"][:, 15]
    )
    assert lopsided[1:].max() < 0.05 * lopsided[0]


# ------------------------------------------------------------------------------------ closed forms
def _mean_gain(oracle, targets, m, data, repeats, seed, **kw):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    g = np.array(
        [
            gain(
                oracle,
                oracle.simulate(*data, rng),
                oracle.tally(fake_reports(oracle, targets, m, rng=rng, **kw)),
                targets,
            )
            for _ in range(repeats)
        ]
    )
    return float(g.mean()), float(g.std(ddof=1) / math.sqrt(repeats))


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("r", [1, 3])
def test_cao_et_al_closed_forms_match_simulation(eps: float, r: int) -> None:
    """Theorems of Cao et al. for k-RR and OUE (beta = m/(n+m)), checked against the measured gain."""
    d, n, m = 32, 20_000, 1_000
    counts = np.full(d, n // d)
    targets = np.arange(d - r, d)
    beta, f_t = m / (n + m), r / d
    for mech, closed in (
        (pldp.KRR(eps, d), krr_mga_gain(eps, d, r, beta, f_t)),
        (pldp.OUE(eps, d), oue_mga_gain(eps, r, beta, f_t)),
    ):
        # OUE's coins are rounded to the 2^-16 grid: the closed form of the exact b differs by < 1e-3
        assert expected_gain(mech, targets, m, counts) == pytest.approx(closed, rel=2e-3)
        mean, se = _mean_gain(mech, targets, m, (counts,), 60, seed=int(eps * 10) + r)
        assert abs(mean - expected_gain(mech, targets, m, counts)) <= Z * se


def test_input_gain_is_one_holder_per_fake() -> None:
    d, n, m = 8, 20_000, 2000
    counts = np.full(d, n // d)
    for mech in (
        pldp.KRR(1.0, d),
        pldp.OUE(1.0, d),
        CASES["iprr"].oracle.__class__(pldp.ItemBudgets.from_array([0.5] * 4 + [1.0] * 4)),
    ):
        assert expected_gain(mech, [2], m, counts, strategy="input") == pytest.approx(input_gain(m / (n + m), 1 / d))
        mean, se = _mean_gain(mech, [2], m, (counts,), 60, seed=11, strategy="input")
        assert abs(mean - input_gain(m / (n + m), 1 / d)) <= Z * se


OTHER = [
    (name, strategy)
    for name in ("iprr", "idue-opt0-min", "rappor-ps", "rcf", "apldp", "pbp", "mpldp")
    for strategy in ("max_level", "adaptive", "sensitive", "knows_defence", "input")
    if strategy in rule_of(CASES[name].oracle).strategies and gain_is_exact(CASES[name].oracle, strategy)
]


@pytest.mark.parametrize(("name", "strategy"), OTHER)
def test_closed_forms_of_other_strategies(name: str, strategy: str) -> None:
    case = CASES[name]
    oracle = case.oracle
    targets = promoted(oracle, _targets(name), strategy)
    n = oracle.simulate(*case.data, np.random.default_rng(0)).n
    m = n // 10
    expected = expected_gain(oracle, targets, m, *case.data, strategy=strategy)
    mean, se = _mean_gain(oracle, targets, m, case.data, 150, seed=12, strategy=strategy)
    assert abs(mean - expected) <= Z * se, (mean, se, expected)


def test_febsf_first_order_gain() -> None:
    """AUEM's gain at the expected counts (first order) is within 5 % of the measured mean at n = 50,000."""
    febsf = FEBSF(np.round(np.linspace(0.1, 1.0, 10), 2), 0.3, 16, oracle="krr")
    w = 1.0 / np.arange(1, 17) ** 2
    cells = np.tile(np.round(5000 * w / w.sum()).astype(int), (10, 1))
    for strategy in ("max_level", "adaptive"):
        expected = expected_gain(febsf, [15], 500, cells, strategy=strategy)
        mean, se = _mean_gain(febsf, [15], 500, (cells,), 40, seed=13, strategy=strategy)
        assert abs(mean - expected) <= Z * se + 0.05 * abs(expected)
        assert not gain_is_exact(febsf, strategy)


def test_robustness_closed_forms() -> None:
    krr, oue = pldp.KRR(1.0, 16), pldp.OUE(1.0, 16)
    assert per_fake_gain(krr) == pytest.approx((math.e + 14) / (math.e - 1))
    assert per_fake_gain(oue)[0] == pytest.approx(2 * math.e / (math.e - 1), rel=1e-3)
    # Cao et al.'s forms are the generic support gain
    p, q = krr.support
    s = np.zeros(16)
    s[[3, 4]] = 0.5
    assert support_gain(p, q, s, [3, 4], 0.05, 0.1) == pytest.approx(krr_mga_gain(1.0, 16, 2, 0.05, 0.1))
    assert uniform_counterpart(pldp.IDUE(pldp.ItemBudgets.from_array([0.5, 1.5]))).__class__ is pldp.OUE
    assert np.allclose(amplification(krr), 1.0) and np.allclose(amplification(oue), 1.0)
    # IPRR's per-fake gain is 1/delta - r_x
    iprr = pldp.IPRR(pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf]))
    assert np.allclose(per_fake_gain(iprr), 1 / iprr.delta - iprr.r)
    # level weights: a fake at level l moves the combination by w_l (1 - q_l) / (n_l (p_l - q_l))
    g = level_gains([0.25, 0.75], [100, 300], [0.6, 0.8], [0.2, 0.1])
    assert g.tolist() == pytest.approx([0.25 * 2 / 100, 0.75 * (0.9 / 0.7) / 300])
    # with no fakes there is no gain, whatever the weights
    f = np.array([[0.1, 0.9], [0.3, 0.7]])
    assert combined_gain([0.5, 0.5], [0.5, 0.5], f, f * 0 + 9, [10, 10], [0, 0], [0]) == 0.0
    with pytest.raises(ParameterError):
        krr_mga_gain(1.0, 4, 5, 0.1, 0.0)
    with pytest.raises(ParameterError):
        oue_mga_gain(1.0, 1, 1.0, 0.0)


def test_mpldp_targets_per_attribute() -> None:
    mp = MPLDP([3, 4], [2.0, 3.0])
    rng = np.random.default_rng(9)
    rep = fake_reports(mp, [[], [3]], 200, rng=rng, strategy="max_level")
    assert (rep.levels[:, 1] == 2).all()  # the attacked attribute claims its largest level
    bits = np.unpackbits(rep.bits[1], axis=1, count=4).astype(bool)
    assert bits[:, 3].all()
    flat = promoted(mp, [2])  # a flat array names attribute 0's values
    assert flat[0].tolist() == [2] and flat[1].size == 0


def test_pbp_expected_gain_uses_its_public_shares() -> None:
    pbp = PBP([0.5, 1.0, 2.0], [0.5, 0.3, 0.2], 5)
    cells = CASES["pbp"].data[0]
    assert expected_gain(pbp, [4], 200, cells) == pytest.approx(
        expected_gain(pbp, [4], 200, cells, strategy="max_level")
    )


# --------------------------------------------------------------------------- the conformance check
class _RandomKRR(pldp.KRR):
    """A KRR whose fakes report uniform random items: its gain is not MGA's."""


class _RandomRule(DirectRule):
    def reports(self, oracle, attack, m, rng):  # type: ignore[no-untyped-def]
        return rng.integers(0, oracle.d, size=m)


class _WrongDtype(DirectRule):
    def reports(self, oracle, attack, m, rng):  # type: ignore[no-untyped-def]
        return super().reports(oracle, attack, m, rng).astype(np.int16)


@pytest.mark.parametrize(("rule", "match"), [(_RandomRule, "standard errors"), (_WrongDtype, "dtype int16")])
def test_check_attack_catches_a_wrong_attack(rule: type, match: str) -> None:
    RULES[_RandomKRR] = rule()
    try:
        with pytest.raises(AssertionError, match=match):
            check_attack(OracleCase(_RandomKRR(1.0, 5), name="random"))
    finally:
        del RULES[_RandomKRR]
    check_attack(OracleCase(_RandomKRR(1.0, 5), name="inherits the KRR rule"))


def test_knows_defence_supports_non_targets_at_the_honest_rate() -> None:
    """Against a recovery that reads the fakes' share from the items they push below zero: MGA
    pushes every non-target's estimate down by beta q / delta; knows_defence does not (each
    non-target is reported at its rate q), at the price of the reports spent on non-targets."""
    iprr = pldp.IPRR(pldp.ItemBudgets.from_array([0.5, 0.5, 1.0, 1.0, 2.0, np.inf]))
    counts = np.array([4000, 3000, 2000, 1000, 0, 0])
    n, m, rng = int(counts.sum()), 2000, np.random.default_rng(21)
    beta = m / (n + m)
    fake = fake_reports(iprr, [5], 200_000, rng=rng, strategy="knows_defence")
    share = np.bincount(fake, minlength=6) / fake.size
    assert np.all(np.abs(share[:5] - iprr.q[:5]) < Z * np.sqrt(iprr.q[:5] / fake.size))
    for strategy, push in (("mga", -beta * iprr.q[4] / iprr.delta), ("knows_defence", 0.0)):
        shifts = np.array(
            [
                pldp.attacks.shift(
                    iprr,
                    iprr.simulate(counts, rng),
                    iprr.tally(fake_reports(iprr, [5], m, rng=rng, strategy=strategy)),
                )[4]
                for _ in range(200)
            ]
        )
        assert abs(shifts.mean() - push) <= Z * shifts.std(ddof=1) / math.sqrt(200)
    # the price: the reports spent on non-targets
    assert expected_gain(iprr, [5], m, counts, strategy="knows_defence") == pytest.approx(
        beta * ((1 - iprr.q[:5].sum() - iprr.q[5]) / iprr.delta)
    )


def test_knows_defence_against_recover_in_user_level_protocols() -> None:
    rcf = RCF([0.5, 1.0, 2.0], 8, "krr")
    rng = np.random.default_rng(22)
    plain = fake_reports(rcf, [7], 3000, rng=rng, strategy="knows_defence")
    hidden = fake_reports(rcf, [7], 3000, rng=rng, strategy="knows_defence", defence="recover")
    assert all(np.all(d == 7) for d in plain.data)  # k-RR levels: honest counts are nothing to mimic
    assert 0.2 < np.mean(np.concatenate(hidden.data) == 7) < 0.9  # the rest supports non-targets
    cells = np.full((3, 8), 1000)
    assert expected_gain(rcf, [7], 3000, cells, strategy="knows_defence", defence="recover") < expected_gain(
        rcf, [7], 3000, cells, strategy="knows_defence"
    )
