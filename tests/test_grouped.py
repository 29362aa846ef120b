"""Baselines of PLDP-FEBSF (Appendix A.5): RCF, APLDP, PBP, PPDA."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable

import numpy as np
import pytest

import pldp
from pldp.estimation.combine import combine
from pldp.estimation.mle import log_likelihood_direct, mle_unary
from pldp.protocols import APLDP, PBP, PPDA, RCF, GroupedReports, GroupedTally, select_mechanism
from tests.conftest import grid_rtol
from tests.test_statistics import _homogeneity_pvalue
from tests.tolerances import FLOAT_RTOL, SUM_RTOL

LEVELS = [0.5, 1.0, 3.0]
RHO = np.array([0.3, 0.3, 0.4])
P5 = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
P16 = pldp.datasets.synthetic.zipf_probabilities(16, 1.0)
K = 4.0  # Monte Carlo checks: a statistic may lie K standard errors from its expectation
ALPHA = 1e-3  # chi-square homogeneity tests reject below this p-value


def _cells(rng: np.random.Generator, n: int, p: np.ndarray, rho: np.ndarray = RHO) -> np.ndarray:
    """Users drawn i.i.d.: level and item independent (the model of the reported variances)."""
    return rng.multinomial(n, np.outer(rho, p).ravel()).reshape(rho.size, p.size)


CASES: dict[str, tuple[Callable[[], object], np.ndarray, np.ndarray]] = {
    "rcf-krr": (lambda: RCF(LEVELS, 5), P5, RHO),
    "rcf-oue": (lambda: RCF(LEVELS, 5, "oue"), P5, RHO),
    "rcf-rappor": (lambda: RCF(LEVELS, 5, "rappor"), P5, RHO),
    "apldp": (lambda: APLDP(LEVELS, 16), P16, RHO),
    "pbp-krr": (lambda: PBP(LEVELS, RHO, 5), P5, RHO),
    "pbp-oue": (lambda: PBP(LEVELS, RHO, 5, "oue"), P5, RHO),
    "pbp-rappor": (lambda: PBP(LEVELS, RHO, 5, "rappor"), P5, RHO),
    "ppda-rappor": (lambda: PPDA(LEVELS, 5), P5, RHO),
    "ppda-oue": (lambda: PPDA(LEVELS, 5, oracle="oue"), P5, RHO),
    "ppda-pooled-skewed": (
        lambda: PPDA(LEVELS, 5, extra_bits=2, oracle="oue", calibration="pooled"),
        P5,
        np.array([0.7, 0.1, 0.2]),
    ),
}


def _z_of_variance(x: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """(sample variance - expected) / SE, the SE estimated from the replicates: sd((x - mean)^2) / sqrt(T)."""
    dev2 = (x - x.mean(axis=0)) ** 2
    return (x.var(axis=0, ddof=1) - expected) / (dev2.std(axis=0, ddof=1) / math.sqrt(x.shape[0]))


@pytest.mark.parametrize("case", list(CASES))
def test_unbiased_and_reported_variance(case: str) -> None:
    """4000 count-level trials of N = 20,000 i.i.d. users: every item's mean within K SE of the
    truth (PPDA's ratio estimator has an O(1/N) bias, far below that); every item's Monte Carlo
    variance within K SE of the mean reported (plug-in) variance and of the closed-form expected
    variance; the mean l2 loss within K SE of the summed expected variance. Power check: the same
    l2 check rejects an expected variance 10 % off (9-15 SE)."""
    make, p, rho = CASES[case]
    proto = make()
    n, trials = 20_000, 4000
    rng = np.random.default_rng(100 + list(CASES).index(case))
    est, rep = np.empty((trials, p.size)), np.empty((trials, p.size))
    for r in range(trials):
        e = pldp.estimate(proto, proto.simulate(_cells(rng, n, p, rho), rng))  # Protocol delegation
        est[r], rep[r] = e.frequencies, e.variance
    se = est.std(axis=0, ddof=1) / math.sqrt(trials)
    assert np.all(np.abs(est.mean(axis=0) - p) < K * se), (est.mean(axis=0) - p) / se
    if isinstance(proto, PBP):
        expected = proto.expected_variance(p, n)
    elif isinstance(proto, PPDA):
        expected = proto.expected_variance(p, rho, n)
    else:
        expected = proto.expected_variance(p, np.round(n * rho))  # type: ignore[attr-defined]
    assert np.max(np.abs(_z_of_variance(est, rep.mean(axis=0)))) < K
    assert np.max(np.abs(_z_of_variance(est, expected))) < K
    l2 = np.sum((est - p) ** 2, axis=1)
    l2_se = l2.std(ddof=1) / math.sqrt(trials)
    assert abs(l2.mean() - expected.sum()) < K * l2_se
    for off in (0.9, 1.1):
        assert abs(l2.mean() - off * expected.sum()) > K * l2_se


@pytest.mark.parametrize("method", ["norm_sub", "mle"])
@pytest.mark.parametrize("case", ["rcf-oue", "apldp", "pbp-krr", "pbp-oue", "ppda-rappor"])
def test_consistent_estimators_lie_on_the_simplex(case: str, method: str) -> None:
    make, p, rho = CASES[case]
    proto = make()
    rng = np.random.default_rng(5)
    tally = proto.simulate(_cells(rng, 5000, p, rho), rng)  # type: ignore[attr-defined]
    e = pldp.estimate(proto, tally, method)  # type: ignore[arg-type]
    u = pldp.estimate(proto, tally)  # type: ignore[arg-type]
    assert e.method == method and np.all(e.frequencies >= 0)
    assert e.frequencies.sum() == pytest.approx(1.0, abs=1e-9)
    if method == "norm_sub":  # the projection onto the simplex, which holds p, is non-expansive
        assert np.sum((e.frequencies - p) ** 2) <= np.sum((u.frequencies - p) ** 2) + 1e-15
    # one draw, a sanity bound only: even the unbiased l2 exceeds 3x its mean with probability < 1/3
    assert np.sum((e.frequencies - p) ** 2) < 3 * np.sum(u.variance) + 1e-4
    assert np.all(np.isfinite(e.variance)) and np.all(e.variance > 0)


def test_joint_mle_reduces_to_the_mechanisms_mle_for_one_level() -> None:
    rng = np.random.default_rng(6)
    cells = rng.multinomial(3000, P5)[None, :]
    krr = RCF([1.0], 5)
    tally = krr.simulate(cells, rng)
    joint = krr.estimate(tally, "mle")
    single = pldp.estimate(pldp.KRR(1.0, 5), tally.tallies[0], "mle")
    # the joint MLE bisects its KKT multiplier to 1e-15 relative and each p_i to 2**-60
    # (maximize_on_simplex), the mechanisms' MLEs are a water-filling and a bisection to 1e-13: they
    # agree to ~1e-15 (measured 1.9e-16); 1e-8 allows another machine's rounding to flip a bisection's
    # last decisions and still fails on a probability off by 1e-7
    np.testing.assert_allclose(joint.frequencies, single.frequencies, atol=1e-8)
    np.testing.assert_allclose(joint.variance, single.variance, rtol=1e-6)
    oue = RCF([1.0], 5, "oue")
    tal = oue.simulate(cells, rng).tallies[0]
    a, b = oue.mechanisms[0].support
    np.testing.assert_allclose(
        oue.estimate(GroupedTally((tal,), oue.fingerprint), "mle").frequencies,
        mle_unary(tal.counts, tal.n, a, b)[0],
        atol=1e-8,
    )


def test_joint_mle_maximises_the_joint_likelihood() -> None:
    """Three k-RR levels: the joint MLE has a higher likelihood than nearby points of the simplex."""
    rcf = RCF([0.3, 1.0, 2.0], 4)
    rng = np.random.default_rng(7)
    tally = rcf.simulate(_cells(rng, 600, np.array([0.6, 0.3, 0.1, 0.0])), rng)

    def loglik(p: np.ndarray) -> float:
        return sum(
            log_likelihood_direct(t.counts, m.q, m.delta, p) for m, t in zip(rcf.mechanisms, tally.tallies, strict=True)
        )  # type: ignore[attr-defined]

    best = rcf.estimate(tally, "mle").frequencies  # a KKT bisection: the maximum to ~1e-15
    top = loglik(best)  # |top| ~ 1e3: a point 0.01 away is lower by ~1e-2, rounding is ~1e-13
    for _ in range(200):
        step = rng.normal(scale=0.01, size=4)
        step -= step.mean()
        other = best + step
        if np.all(other >= 0):
            assert loglik(other) <= top + 1e-9


@pytest.mark.parametrize(
    ("make", "cells"),
    [
        (lambda lo: RCF([lo, 2.0], 3), [[2, 0, 1], [0, 1, 0]]),
        (lambda lo: RCF([lo, 2.0], 3, "oue"), [[1, 0, 1], [0, 1, 0]]),
        (lambda lo: APLDP([0.6 * lo, 4.0], 10), [[1, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]]),
        (lambda lo: PBP([lo, 2.0], [0.5, 0.5], 3), [[2, 0, 1], [0, 1, 0]]),
        (lambda lo: PBP([lo, 2.0], [0.5, 0.5], 3, "rappor"), [[1, 0, 1], [0, 1, 0]]),
        (lambda lo: PPDA([lo, 2.0], 3, extra_bits=2), [[1, 0, 1], [0, 1, 0]]),
    ],
    ids=["rcf-krr", "rcf-oue", "apldp-mixed", "pbp-krr", "pbp-rappor", "ppda"],
)
def test_per_user_path_and_simulation_agree(make: Callable[[float], object], cells: list[list[int]]) -> None:
    """The whole count vector (all levels' tallies) has the same law both ways: chi-square
    homogeneity on the vector as a category, and on each count separately (not rejected at
    ALPHA, or ALPHA / 10 for each of the counts). Power check: the same tests reject the
    simulation of the protocol with its smallest budget tripled."""
    proto = make(0.5)
    c = np.array(cells)
    items = np.repeat(np.tile(np.arange(c.shape[1]), c.shape[0]), c.ravel())
    levels = np.repeat(np.repeat(np.arange(c.shape[0]), c.shape[1]), c.ravel())
    rng = np.random.default_rng(8)
    trials = 4000

    def counts(tally: object) -> np.ndarray:
        if isinstance(tally, GroupedTally):
            return np.concatenate([t.counts for t in tally.tallies])
        return tally.counts  # type: ignore[attr-defined]

    a = np.array([counts(proto.tally(proto.perturb(items, levels, rng))) for _ in range(trials)])  # type: ignore[attr-defined]
    b = np.array([counts(proto.simulate(c, rng)) for _ in range(trials)])  # type: ignore[attr-defined]
    assert _homogeneity_pvalue(a, b) > ALPHA
    for j in range(a.shape[1]):
        assert _homogeneity_pvalue(a[:, [j]], b[:, [j]]) > ALPHA / 10, j
    wrong = make(1.5)
    w = np.array([counts(wrong.simulate(c, rng)) for _ in range(trials)])  # type: ignore[attr-defined]
    assert _homogeneity_pvalue(a, w) < ALPHA * 1e-3
    assert min(_homogeneity_pvalue(a[:, [j]], w[:, [j]]) for j in range(a.shape[1])) < ALPHA * 1e-3
    if isinstance(proto, APLDP):
        assert proto.choices == ("oue", "krr") == wrong.choices  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", list(CASES))
def test_each_level_is_exactly_its_budget_ldp(case: str) -> None:
    proto = CASES[case][0]()
    reports = proto.privacy()  # type: ignore[attr-defined]
    assert len(reports) == len(LEVELS)
    for i, (eps, (key, rep)) in enumerate(zip(LEVELS, reports.items(), strict=True)):
        assert key == f"level {i} (eps={eps:g})"
        assert rep.holds, key
        assert eps - 2e-3 < rep.ldp_epsilon <= eps + 1e-12  # unary coins are rounded towards privacy


def test_ppda_reports_are_ldp_by_brute_force() -> None:
    """Enumerate all 2^(d+m) padded reports: the largest likelihood ratio between two items is
    e^eps of the user's level; the appended bits carry no information about the item."""
    d, m = 3, 2
    for data in ("rappor", "oue"):
        proto = PPDA([0.4, 1.7], d, extra_bits=m, oracle=data)
        outputs = np.array(list(itertools.product([0, 1], repeat=d + m)), dtype=bool)
        for eps, mech in zip(proto.levels, proto.mechanisms, strict=True):
            a, b = mech.a[0], mech.b[0]  # type: ignore[attr-defined]
            like = np.empty((d, outputs.shape[0]))
            for x in range(d):
                prob = np.where(np.arange(d + m) == x, a, b)
                like[x] = np.prod(np.where(outputs, prob, 1 - prob), axis=1)
            np.testing.assert_allclose(like.sum(axis=1), 1.0)
            ratio = np.log(like.max(axis=0)) - np.log(like.min(axis=0))
            assert ratio.max() <= eps + 1e-12 and ratio.max() > eps - 2e-3
            # the appended bits' marginal law does not depend on the item
            pad = outputs[:, d:].any(axis=1)
            np.testing.assert_allclose(like[:, pad].sum(axis=1), like[0, pad].sum())


def test_pbp_pooled_channel() -> None:
    """k-RR levels: the pooled report is one k-RR report, sum_l rho_l Q_l, with the blended epsilon."""
    proto = PBP([0.5, 1.0, 3.0], RHO, 6)
    mixture = sum(r * m.channel() for r, m in zip(RHO, proto.mechanisms, strict=True))
    p_star, q_star = proto.pooled_support
    np.testing.assert_allclose(np.diag(mixture), p_star, rtol=FLOAT_RTOL)
    np.testing.assert_allclose(mixture[~np.eye(6, dtype=bool)], q_star[0], rtol=FLOAT_RTOL)
    col = mixture[:, 0]
    assert proto.epsilon_blended == pytest.approx(math.log(col.max() / col.min()), rel=FLOAT_RTOL)
    assert 0.5 < proto.epsilon_blended < 3.0
    unary = PBP([0.5, 1.0, 3.0], RHO, 6, "oue")
    assert unary.epsilon_blended is None
    assert unary.p_star == 0.5 and unary.q_star == pytest.approx(RHO @ [m.b[0] for m in unary.mechanisms])  # type: ignore[attr-defined]


def test_grouping_with_weights_beats_pooling_when_levels_differ() -> None:
    """Levels 0.5 and 4 (k-RR, d = 8, half the users each), the same users for every method:
    RCF and APLDP (minimum-variance weights) beat PBP's pooled estimate (error ratio below 0.7)
    and the plain n-weighted combination of the same level estimates (below 0.3), in theory and
    in Monte Carlo (the ratio plus K SE below the bound; 1 is 30 SE or more away)."""
    d, n, trials = 8, 10_000, 300
    p = pldp.datasets.synthetic.zipf_probabilities(d, 1.0)
    rho = np.array([0.5, 0.5])
    rcf, apldp, pbp = RCF([0.5, 4.0], d), APLDP([0.5, 4.0], d), PBP([0.5, 4.0], rho, d)
    sizes = n * rho
    assert rcf.expected_variance(p, sizes).sum() < 0.6 * pbp.expected_variance(p, n).sum()
    assert apldp.expected_variance(p, sizes).sum() <= rcf.expected_variance(p, sizes).sum() * (1 + SUM_RTOL)
    rng = np.random.default_rng(10)
    err = {"rcf": [], "apldp": [], "pbp": [], "plain": []}
    for _ in range(trials):
        cells = _cells(rng, n, p, rho)
        truth = cells.sum(axis=0) / n
        e = rcf.estimate(rcf.simulate(cells, rng))
        err["rcf"].append(np.sum((e.frequencies - truth) ** 2))
        plain = combine(e.info["level_estimates"], e.info["level_counts"] / n, np.ones(2))[0]
        err["plain"].append(np.sum((plain - truth) ** 2))
        err["apldp"].append(np.sum((apldp.estimate(apldp.simulate(cells, rng)).frequencies - truth) ** 2))
        err["pbp"].append(np.sum((pbp.estimate(pbp.simulate(cells, rng)).frequencies - truth) ** 2))
    e = {k: np.array(v) for k, v in err.items()}
    for a, b, bound in (("rcf", "pbp", 0.7), ("apldp", "pbp", 0.7), ("rcf", "plain", 0.3)):
        # ratio of mean errors (same users, paired) and its delta-method SE; measured 0.44, 0.42
        # and 0.016, with SE 0.019, 0.017 and 0.0008: the ratio is below `bound` by more than K SE
        ratio = e[a].mean() / e[b].mean()
        se = np.std((e[a] - ratio * e[b]) / e[b].mean(), ddof=1) / math.sqrt(trials)
        assert ratio + K * se < bound, (a, b, ratio, se)


def test_rcf_weights_are_theorem_2_for_rappor() -> None:
    """Basic RAPPOR levels: w_tau = D_tau / sum D, D_tau = n_tau (e^{eps/2} - 1)^2 / e^{eps/2}
    (MPLDP Theorem 2), up to the 0.1 % coin-grid rounding of the mechanisms."""
    levels = np.array([1.0, 1.5, 3.0])
    sizes = np.array([400, 1000, 600])
    e = np.exp(levels / 2)
    D = sizes * (e - 1) ** 2 / e
    w = RCF(levels, 7, "rappor").weights(sizes)
    np.testing.assert_allclose(w, np.repeat((D / D.sum())[:, None], 7, axis=1), rtol=5e-3)
    w0 = RCF(levels, 7, "rappor").weights([400, 0, 600])
    assert np.all(w0[1] == 0) and np.allclose(w0.sum(axis=0), 1)


def test_apldp_selection() -> None:
    """k-RR for a small domain and a large budget, OUE for a large domain; the criterion is
    d q(1-q)/delta^2 + (1 - 2q)/delta - 1/d at the uniform p (written out here for k-RR)."""
    assert APLDP([4.0], 4).choices == ("krr",)
    assert APLDP([1.0], 64).choices == ("oue",)
    assert APLDP([0.5, 1.0, 6.0], 64).choices == ("oue", "oue", "krr")
    assert APLDP([1.0], 64, candidates=("krr", "rappor")).choices == ("rappor",)
    name, scores = select_mechanism(2.0, 10)
    e, d = math.exp(2.0), 10
    criterion = lambda q, gap: d * q * (1 - q) / gap**2 + (1 - 2 * q) / gap - 1 / d  # noqa: E731
    krr = pldp.KRR(2.0, d)  # on the 2^-32 grid: the criterion at its own q and delta, and the textbook one to the grid
    assert scores["krr"] == pytest.approx(criterion(krr.q[0], krr.delta), rel=FLOAT_RTOL)
    assert scores["krr"] == pytest.approx(criterion(1 / (e + d - 1), (e - 1) / (e + d - 1)), rel=grid_rtol(krr))
    assert name == min(scores, key=scores.get)  # type: ignore[arg-type]
    assert scores["oue"] < scores["rappor"]
    with pytest.raises(pldp.ParameterError, match="candidates"):
        APLDP([1.0], 8, candidates=("grr",))


def test_ppda_zero_bits_and_calibration() -> None:
    """Default calibration (appended bits only): more zero bits, less variance, down to the
    variance of eq. 3 with the true shares (PBP) minus the level-mix term that PPDA tracks
    and PBP does not, sum_i (1 - p_i)^2 Var_rho(b) / (N delta^2) for OUE. The pooled
    calibration (all bits) beats both."""
    rho, p, n = np.array([0.5, 0.5]), np.full(6, 1 / 6), 1000
    pbp = PBP([0.5, 2.0], rho, 6, "oue")
    v = [PPDA([0.5, 2.0], 6, extra_bits=m, oracle="oue").expected_variance(p, rho, n).sum() for m in (1, 6, 60, 60_000)]
    assert v[0] > v[1] > v[2] > v[3]
    b = PPDA([0.5, 2.0], 6, oracle="oue").b_levels
    spread = rho @ b**2 - (rho @ b) ** 2
    gap = 0.5 - rho @ b
    limit = pbp.expected_variance(p, n).sum() - np.sum((1 - p) ** 2) * spread / (n * gap**2)
    assert v[3] == pytest.approx(limit, rel=1e-4)
    pooled = PPDA([0.5, 2.0], 6, oracle="oue", calibration="pooled").expected_variance(p, rho, n).sum()
    assert pooled < 0.95 * pbp.expected_variance(p, n).sum()
    with pytest.raises(pldp.ParameterError, match="calibration"):
        PPDA([0.5, 2.0], 6, calibration="all")  # type: ignore[arg-type]


def test_ppda_mle_keeps_the_mixture_in_the_level_range() -> None:
    proto = PPDA(LEVELS, 5, oracle="oue")
    rng = np.random.default_rng(11)
    e = proto.estimate(proto.simulate(_cells(rng, 3000, P5), rng), "mle")
    lo, hi = proto.b_levels.min(), proto.b_levels.max()
    assert lo <= e.info["q_star"] <= hi
    lower, upper = e.info["variance_bounds"]
    assert np.all(lower <= e.variance + 1e-18) and np.all(e.variance <= upper + 1e-18)


def test_tallies_merge_and_round_trip() -> None:
    rng = np.random.default_rng(12)
    items, levels = rng.integers(0, 5, 3000), rng.integers(0, 3, 3000)
    for proto in (RCF(LEVELS, 5), APLDP(LEVELS, 16)):
        its = items if proto.d == 5 else rng.integers(0, 16, 3000)
        whole = proto.tally(proto.perturb(its, levels, rng))
        first = proto.tally(proto.perturb(its[:1000], levels[:1000], rng))
        second = proto.tally(proto.perturb(its[1000:], levels[1000:], rng))
        merged = first + second
        assert merged.n == whole.n == 3000
        np.testing.assert_array_equal(merged.level_counts, np.bincount(levels, minlength=3))
        back = GroupedTally.from_dict(json.loads(json.dumps(whole.to_dict())))
        assert back == whole
        np.testing.assert_allclose(proto.estimate(back).frequencies, proto.estimate(whole).frequencies)
    for proto in (PBP(LEVELS, RHO, 5, "oue"), PPDA(LEVELS, 5)):
        rep = proto.perturb(items, levels, rng)
        whole = proto.tally(rep)
        merged = proto.tally(rep[:1000]) + proto.tally(rep[1000:])
        assert merged == whole
        back = pldp.Tally.from_dict(json.loads(json.dumps(whole.to_dict())))
        np.testing.assert_allclose(proto.estimate(back).frequencies, proto.estimate(whole).frequencies)


def test_bad_input() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(pldp.ParameterError, match="> 0"):
        RCF([0.0, 1.0], 5)
    with pytest.raises(pldp.ParameterError, match="> 0"):
        PBP([-1.0, 1.0], [0.5, 0.5], 5)
    with pytest.raises(pldp.ParameterError, match="increasing"):
        APLDP([1.0, 0.5], 5)
    with pytest.raises(pldp.ParameterError, match="oracle"):
        RCF([1.0], 5, oracle="grr")  # type: ignore[arg-type]
    with pytest.raises(pldp.ParameterError, match="oracle"):
        PPDA([1.0], 5, oracle="krr")  # type: ignore[arg-type]
    with pytest.raises(pldp.ParameterError, match="extra_bits"):
        PPDA([1.0], 5, extra_bits=0)
    with pytest.raises(pldp.ParameterError, match="rho"):
        PBP([0.5, 1.0], [0.5, 0.6], 5)
    with pytest.raises(pldp.ParameterError, match="rho"):
        PBP([0.5, 1.0], [1.0], 5)
    with pytest.raises(pldp.ParameterError, match="d"):
        RCF([1.0], 1)
    for proto in (RCF(LEVELS, 5), APLDP(LEVELS, 5), PBP(LEVELS, RHO, 5), PPDA(LEVELS, 5)):
        with pytest.raises(pldp.DomainError, match="level indices"):
            proto.perturb(np.array([0, 1]), np.array([0, 3]), rng)
        with pytest.raises(pldp.DomainError, match="items"):
            proto.perturb(np.array([0, 5]), np.array([0, 1]), rng)  # for PPDA: not an appended bit
        with pytest.raises(pldp.ParameterError, match="equal length"):
            proto.perturb(np.array([0, 1]), np.array([0]), rng)
        with pytest.raises(pldp.ParameterError, match="integer"):
            proto.perturb(np.array([0.0, 1.0]), np.array([0, 1]), rng)
        with pytest.raises(pldp.ParameterError, match="shape"):
            proto.simulate(np.ones((2, 5), dtype=int), rng)
        with pytest.raises(pldp.TallyError):
            proto.simulate(-np.ones((3, 5), dtype=int), rng)
        good = proto.simulate(np.ones((3, 5), dtype=int), rng)
        with pytest.raises(pldp.EstimationError, match="method"):
            proto.estimate(good, "em")
    # tallies of another protocol
    rcf = RCF(LEVELS, 5)
    with pytest.raises(pldp.EstimationError, match="does not come from"):
        rcf.estimate(RCF([0.5, 1.0, 2.0], 5).simulate(np.ones((3, 5), dtype=int), rng))
    with pytest.raises(pldp.EstimationError, match="does not come from"):
        rcf.estimate(pldp.KRR(1.0, 5).simulate(np.ones(5, dtype=int), rng))
    with pytest.raises(pldp.EstimationError, match="does not come from"):
        PBP(LEVELS, RHO, 5).estimate(pldp.KRR(1.0, 6).simulate(np.ones(6, dtype=int), rng))
    with pytest.raises(pldp.EstimationError, match="does not come from"):
        PBP(LEVELS, RHO, 5, "oue").estimate(pldp.KRR(1.0, 5).simulate(np.ones(5, dtype=int), rng))
    with pytest.raises(pldp.EstimationError, match="does not come from"):
        PPDA(LEVELS, 5).estimate(pldp.RAPPOR(1.0, 5).simulate(np.ones(5, dtype=int), rng))
    with pytest.raises(pldp.EstimationError, match="no reports"):
        rcf.estimate(rcf.simulate(np.zeros((3, 5), dtype=int), rng))
    with pytest.raises(pldp.TallyError, match="different mechanisms or protocols"):
        rcf.simulate(np.ones((3, 5), dtype=int), rng) + APLDP(LEVELS, 5).simulate(np.ones((3, 5), dtype=int), rng)
    with pytest.raises(pldp.TallyError, match="GroupedReports"):
        rcf.tally(np.zeros(3, dtype=int))
    reports = rcf.perturb(np.array([0, 1, 2]), np.array([0, 0, 1]), rng)
    with pytest.raises(pldp.TallyError, match="level 0"):
        rcf.tally(GroupedReports(reports.data, np.array([0, 1, 1])))
    with pytest.raises(pldp.TallyError):
        GroupedTally.from_dict({"format": "other"})
