"""MPLDP's ``"robust"`` (equal influence per attribute) and ``"huber"`` methods and the optimising
attacker across its attributes (issue 34, items 3 and 6).

Setting (that of ``benchmarks/mpldp_attack.py`` and ``docs/attacks.md``, smaller where noted):
two attributes of ``d = 16`` values, Zipf(2) each, budget 0.9 per attribute (levels 0.3, 0.45,
0.9), even level shares, the rarest value as target, β = 1 %.
"""

from __future__ import annotations

import numpy as np
import pytest

from pldp.attacks import expected_gain, fake_reports, shift
from pldp.attacks.atoms import atoms_of
from pldp.attacks.optimal import search, split_reports, worst_case
from pldp.datasets.synthetic import zipf_probabilities
from pldp.errors import ParameterError
from pldp.estimation.level_bound import MEAN_BOUND_MODEL as HUBER_MODEL
from pldp.estimation.spread import influence, spread_robust
from pldp.mechanisms import OUE
from pldp.protocols import MPLDP, MPLDPReports

D = 16
TARGET = np.array([D - 1])
NONE = np.empty(0, dtype=np.int64)
FAST = {"chunks": 8, "shadows": 2}


def _users(n: int, seed: int = 346) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = zipf_probabilities(D)
    return np.stack([rng.choice(D, n, p=p) for _ in range(2)], axis=1), rng.choice(3, size=(n, 2))


def _m(n: int, beta: float = 0.01) -> int:
    return round(beta * n / (1 - beta))


@pytest.fixture(scope="module")
def mp() -> MPLDP:
    return MPLDP([D, D], [0.9, 0.9])


def test_robust_is_the_equal_influence_combination_per_attribute(mp: MPLDP) -> None:
    """One piece of code with RCF's (spread_robust): weights proportional to n_tau r_tau, the bound
    of any split of a share beta of fakes, stated per attribute."""
    assert mp.methods[:3] == ("unbiased", "norm_sub", "mle") and {"robust", "huber"} <= set(mp.methods)
    values, levels = _users(20_000)
    tally = mp.simulate(values, levels, np.random.default_rng(1))
    for i, e in enumerate(mp.estimate(tally, "robust", beta=0.02)):
        f_tau, n_tau = e.info["level_estimates"], tally.sizes[i]
        support = tuple(np.stack([m.support[j] for m in mp.mechanisms[i]]) for j in (0, 1))
        var_tau = np.broadcast_to(np.ones(D), f_tau.shape)  # the variances do not enter the estimate
        freq, _, info = spread_robust(f_tau, var_tau, n_tau, (support[0], support[1]), beta=0.02)
        assert np.allclose(e.frequencies, freq) and np.allclose(e.info["bound"], info["bound"])
        r = influence(support)
        assert np.allclose(e.info["weights"], n_tau[:, None] * r / np.sum(n_tau[:, None] * r, axis=0))
        assert e.info["beta"] == 0.02 and np.all(e.info["bound"] > e.info["linear_bound"])
        assert e.info["spread_bound"] is e.info["bound"] and e.info["bound_model"].startswith("per attribute")
        assert "any split" in e.info["bound_model"] and "every attribute" in e.info["bound_model"]
        assert np.all(e.frequencies >= 0) and e.frequencies.sum() <= 1 + 1e-12 and np.all(e.variance > 0)
    assert mp.estimate(tally, "robust", attribute=0).info["beta"] == 0.05


def test_huber_is_the_former_robust_and_states_its_bound_model(mp: MPLDP) -> None:
    values, levels = _users(20_000)
    tally = mp.simulate(values, levels, np.random.default_rng(1))
    ests = mp.estimate(tally, "huber")
    assert len(ests) == 2
    for e in ests:
        assert e.method == "huber" and e.frequencies.shape == (D,) and np.all(e.variance > 0)
        assert e.info["bound_model"] == HUBER_MODEL and e.info["spread_bound"] is None
        assert e.info["bound"].shape == (D,) and np.all(e.info["bound"] > 0)
        assert np.allclose(e.info["weights"].sum(axis=0), 1.0) and e.info["weights"].max() <= 0.5 + 1e-12
    one = mp.estimate(tally, "huber", attribute=1, cap=0.6, k=1.5)
    assert one.info["cap"] == 0.6 and one.info["k"] == 1.5
    # no level above half the weight; uncapped (cap=1, huge k) it is OC
    oc = mp.estimate(tally, "unbiased", attribute=0)
    loose = mp.estimate(tally, "huber", attribute=0, cap=1.0, k=1e9)
    assert np.allclose(loose.frequencies, oc.frequencies, atol=1e-3)


def test_huber_honest_mse_against_unbiased(mp: MPLDP) -> None:
    """Without attack "huber" costs x1.37 the MSE of "unbiased" (these users at n = 10^5, 100
    tallies; here n = 2 x 10^4, 60 tallies: x1.36): the largest level holds 74 % of OC's weight
    and is capped to half. Norm-Sub (x0.64) stays the better estimate on honest data."""
    values, levels = _users(20_000)
    truth = np.stack([np.bincount(values[:, i], minlength=D) / values.shape[0] for i in range(2)])
    rng = np.random.default_rng(2)
    err: dict[str, list[float]] = {"unbiased": [], "huber": []}
    for _ in range(60):
        tally = mp.simulate(values, levels, rng)
        for method, out in err.items():
            out.append(sum(np.sum((e.frequencies - truth[i]) ** 2) for i, e in enumerate(mp.estimate(tally, method))))
    ratio = np.mean(err["huber"]) / np.mean(err["unbiased"])
    assert 1.1 < ratio < 1.6


@pytest.mark.parametrize("beta", [0.01, 0.045])
def test_huber_one_level_bound_holds_against_the_one_level_optimal_attacker(mp: MPLDP, beta: float) -> None:
    """The stated threat model (on the attacked attribute every fake claims one level, the one the
    attacker finds best): mean gain <= mean reported bound + 3 standard errors (n = 10^5)."""
    values, levels = _users(100_000)
    m = _m(100_000, beta)
    targets = [TARGET, NONE]
    w = worst_case(
        mp, targets, m, values, levels, rng=np.random.default_rng([3461, round(beta * 1000)]), defence="huber",
        repeats=8, spread=False, population=100_000, **FAST,
    )  # fmt: skip
    rows = w.search.counts.reshape(2, 2, 3).sum(axis=1)  # (attribute, [MGA-style, alone], level)
    assert np.count_nonzero(rows[0]) == 1 and rows[0].sum() == m and rows[1].sum() == m
    rng = np.random.default_rng([3462, round(beta * 1000)])
    bounds = [
        float(
            mp.estimate(
                mp.simulate(values, levels, rng) + mp.tally(split_reports(mp, targets, w.search.counts, rng)),
                "huber",
                attribute=0,
            ).info["bound"][TARGET[0]]
        )
        for _ in range(4)
    ]
    assert w.gain <= np.mean(bounds) + 3 * w.se


@pytest.mark.parametrize("defence", ["sum", "unbiased", "robust", "huber"])
def test_optimal_matches_or_beats_the_fixed_strategies(mp: MPLDP, defence: str) -> None:
    n = 20_000
    s = search(mp, [TARGET, TARGET], _m(n), rng=np.random.default_rng(3463), defence=defence, population=n, **FAST)
    levels = [[f"a{i} level {t}" for t in range(3)] for i in range(2)]
    assert s.atoms == atoms_of(mp) == tuple(a for i in range(2) for a in levels[i] + [f"{x} alone" for x in levels[i]])
    rows = s.counts.reshape(2, 2, 3).sum(axis=1)
    assert rows.sum(axis=1).tolist() == [_m(n), _m(n)]
    assert set(s.fixed) >= {"level 0", "level 1", "level 2", "mga", "shares", "knows_defence"}
    assert s.objective >= max(s.fixed.values())
    if defence == "sum":  # the baseline adds the levels' counts: the smallest level debiases most
        assert rows[:, 0].tolist() == [_m(n), _m(n)]
    if defence == "unbiased":  # OC: a fake is worth e^{eps/2} - 1 at its level, most at the largest
        assert rows[:, 2].tolist() == [_m(n), _m(n)]
        closed = expected_gain(mp, [TARGET, TARGET], _m(n), *_users(n), strategy="optimal", split=s.counts)
        assert closed == pytest.approx(expected_gain(mp, [TARGET, TARGET], _m(n), *_users(n), strategy="max_level"))


def test_two_attacked_attributes_each_gain(mp: MPLDP) -> None:
    """A fake reports on every attribute: attacking both, each attribute gains what one attacked
    attribute gains (per attribute within 4 SE) and the total doubles, under "sum" and "huber"."""
    n = 50_000
    values, levels = _users(n)
    m = _m(n)
    for defence in ("sum", "huber"):
        one, two = [], []
        for targets, out in (([TARGET, NONE], one), ([TARGET, TARGET], two)):
            s = search(mp, targets, m, rng=np.random.default_rng(3464), defence=defence, population=n, **FAST)
            rng = np.random.default_rng(3465)
            for _ in range(8):
                d = shift(
                    mp, mp.simulate(values, levels, rng), mp.tally(split_reports(mp, targets, s.counts, rng)), defence
                )
                out.append([float(np.sum(x[t])) for x, t in zip(d, targets, strict=True)])
        a, b = np.array(one), np.array(two)
        se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
        assert abs(a[:, 1]).mean() < 4 * se[1] + 1e-3  # attribute 1 not attacked: no gain
        assert b[:, 1].mean() > 0.5 * a[:, 0].mean()  # attacked: it gains too
        for i in range(2):
            assert abs(b[:, i].mean() - a[:, 0].mean()) <= 4 * np.hypot(se[0], se[i])
        assert b.sum(axis=1).mean() == pytest.approx(2 * a[:, 0].mean(), rel=0.3)


def test_split_table_reports_and_refusals(mp: MPLDP) -> None:
    rng = np.random.default_rng(3466)
    split = np.array([[10, 0, 20], [5, 5, 20]])
    fake = fake_reports(mp, [TARGET, NONE], 30, rng=rng, strategy="optimal", split=split)
    assert isinstance(fake, MPLDPReports) and fake.levels.shape == (30, 2)
    assert np.bincount(fake.levels[:, 0], minlength=3).tolist() == [10, 0, 20]
    assert np.bincount(fake.levels[:, 1], minlength=3).tolist() == [5, 5, 20]
    bits = mp.mechanisms[0][0].unpack(fake.bits[0])
    assert bits[:, TARGET[0]].all()  # MGA on the attacked attribute
    assert fake_reports(mp, [TARGET, NONE], 30, rng=rng, strategy="optimal", split=split.reshape(-1)).levels.shape
    with pytest.raises(ParameterError, match="every attribute's row"):
        fake_reports(mp, [TARGET, NONE], 30, rng=rng, strategy="optimal", split=[[10, 0, 20], [5, 5, 10]])
    with pytest.raises(ParameterError, match="must hold the 30 fakes"):
        fake_reports(mp, [TARGET, NONE], 30, rng=rng, strategy="optimal", split=[[10, 0, 10], [5, 5, 10]])
    with pytest.raises(ParameterError, match="2 x 3"):
        split_reports(mp, [TARGET, NONE], [1, 2, 3], rng)
    # the second row of an attribute: fakes that set the target bits alone (one bit each)
    table = np.array([[[10, 0, 0], [0, 0, 20]], [[5, 5, 20], [0, 0, 0]]])
    fake = fake_reports(mp, [TARGET, NONE], 30, rng=rng, strategy="optimal", split=table)
    at_top = fake.levels[:, 0] == 2
    assert np.bincount(fake.levels[:, 0], minlength=3).tolist() == [10, 0, 20]
    ones = mp.mechanisms[0][2].unpack(fake.bits[0][at_top])
    assert ones[:, TARGET[0]].all() and ones.sum(axis=1).tolist() == [1] * 20
    mga = mp.mechanisms[0][0].unpack(fake.bits[0][~at_top])
    assert mga[:, TARGET[0]].all() and mga.sum() > 10
    assert split_reports(mp, [TARGET, NONE], table.reshape(-1), rng).levels.shape == (30, 2)


def test_spread_split_beats_huber_one_level_bound_and_unbiased(mp: MPLDP) -> None:
    """Why "huber" is not the default: fakes spread over the two small levels (the split the
    attacker finds against "huber", benchmarks/mpldp_attack.py: 0.064 at n = 10^5) gain more than
    the one-level bound (0.040) and more than OC gains from the same fakes (0.023): the honest
    largest level, capped and of the narrowest clip, is clipped. The bound says it covers one level."""
    values, levels = _users(100_000)
    targets = [TARGET, NONE]
    split = np.array([[401, 609, 0], [337, 337, 336]])
    rng = np.random.default_rng(3467)
    rob, unb, bound = [], [], []
    for _ in range(6):
        honest = mp.simulate(values, levels, rng)
        fake = mp.tally(split_reports(mp, targets, split, rng))
        rob.append(float(shift(mp, honest, fake, "huber")[0][TARGET[0]]))
        unb.append(float(shift(mp, honest, fake)[0][TARGET[0]]))
        info = mp.estimate(honest + fake, "huber", attribute=0).info
        bound.append(float(info["bound"][TARGET[0]]))
        assert "one level" in info["bound_model"] and info["spread_bound"] is None
    assert np.mean(rob) > 1.3 * np.mean(bound)
    assert np.mean(rob) > 2 * np.mean(unb)


def _random_reports(mp: MPLDP, split: np.ndarray, rng: np.random.Generator) -> MPLDPReports:
    """Fakes claiming the levels of ``split`` (one row per attribute), each sending random bits."""
    m = int(split[0].sum())
    levels = np.stack([rng.permutation(np.repeat(np.arange(3), row)) for row in split], axis=1)
    bits = tuple(rng.integers(0, 256, size=(m, (k + 7) // 8), dtype=np.uint8) for k in mp.k)
    return MPLDPReports(bits, levels)


def test_robust_bound_holds_for_random_splits_and_reports(mp: MPLDP) -> None:
    """The bound is deterministic (any split, any reports): every attacked tally's shift of every
    item is within the bound the attacked tally reports, beta the share of fakes."""
    n = 20_000
    values, levels = _users(n)
    rng = np.random.default_rng(3468)
    for trial in range(12):
        beta = (0.01, 0.045)[trial % 2]
        m = _m(n, beta)
        split = np.stack([rng.multinomial(m, rng.dirichlet(np.full(3, 0.5))) for _ in range(2)])
        honest = mp.simulate(values, levels, rng)
        if trial % 3 == 0:
            fake = mp.tally(_random_reports(mp, split, rng))
            targets = [np.arange(D), np.arange(D)]
        else:
            targets = [TARGET, TARGET] if trial % 3 == 1 else [np.array([0, D - 1]), NONE]
            fake = mp.tally(split_reports(mp, targets, split, rng))
        moved = shift(mp, honest, fake, "robust")
        for i, e in enumerate(mp.estimate(honest + fake, "robust", beta=m / (n + m))):
            assert np.all(moved[i] <= e.info["bound"] + 1e-12), (trial, i)
            assert np.all(-moved[i] <= e.info["bound"] + np.max(e.info["linear_bound"]) + 1e-9), (trial, i)


@pytest.mark.parametrize("attacked", [1, 2])
def test_robust_bound_holds_against_the_optimal_attacker(mp: MPLDP, attacked: int) -> None:
    n = 20_000
    values, levels = _users(n)
    m = _m(n)
    targets = [TARGET, TARGET if attacked == 2 else NONE]
    s = search(mp, targets, m, rng=np.random.default_rng(3469), defence="robust", population=n, **FAST)
    rng = np.random.default_rng(3470)
    for _ in range(4):
        honest = mp.simulate(values, levels, rng)
        fake = mp.tally(split_reports(mp, targets, s.counts, rng))
        moved = shift(mp, honest, fake, "robust")
        for i, e in enumerate(mp.estimate(honest + fake, "robust", beta=m / (n + m))):
            assert np.all(moved[i] <= e.info["bound"] + 1e-12)


def test_robust_meets_the_aim_against_the_optimal_attacker(mp: MPLDP) -> None:
    """benchmarks/mpldp_attack.py (n = 10^5, β = 1 %, attribute 0 attacked, 30 tallies): the
    optimal attacker against "robust" gains 0.0413 ± 0.0014 (every fake on the smallest level, 153
    of 1,010 with the target bit alone), x0.87 MGA against OUE at the mean budget 0.55 (0.0473); OC
    gives it 0.0601, "huber" 0.0617. Here 8 tallies (a smaller search): within 4 SE of that, and
    below MGA."""
    n = 100_000
    values, levels = _users(n)
    m = _m(n)
    targets = [TARGET, NONE]
    s = search(mp, targets, m, rng=np.random.default_rng(3471), defence="robust", population=n, **FAST)
    rng = np.random.default_rng(3472)
    g = []
    for _ in range(8):
        honest = mp.simulate(values, levels, rng)
        g.append(float(shift(mp, honest, mp.tally(split_reports(mp, targets, s.counts, rng)), "robust")[0][D - 1]))
    se = np.std(g, ddof=1) / np.sqrt(len(g))
    mga = expected_gain(OUE(0.55, D), TARGET, m, np.bincount(values[:, 0], minlength=D))
    assert mga == pytest.approx(0.0473, abs=5e-4)
    assert abs(np.mean(g) - 0.0413) <= 4 * np.hypot(se, 0.0014)
    assert np.mean(g) + 3 * se < mga


def test_robust_honest_mse_against_norm_sub_and_oc(mp: MPLDP) -> None:
    """Without attack (benchmarks/mpldp_attack.py --mse, n = 10^5, 100 tallies): "robust" x1.21
    the MSE of Norm-Sub and x0.78 that of OC (its projection helps more than its weights cost);
    here n = 2 x 10^4, 60 tallies."""
    values, levels = _users(20_000)
    truth = np.stack([np.bincount(values[:, i], minlength=D) / values.shape[0] for i in range(2)])
    rng = np.random.default_rng(3473)
    err: dict[str, list[float]] = {"unbiased": [], "norm_sub": [], "robust": []}
    for _ in range(60):
        tally = mp.simulate(values, levels, rng)
        for method, out in err.items():
            out.append(sum(np.sum((e.frequencies - truth[i]) ** 2) for i, e in enumerate(mp.estimate(tally, method))))
    assert 1.0 < np.mean(err["robust"]) / np.mean(err["norm_sub"]) < 1.45
    assert np.mean(err["robust"]) < np.mean(err["unbiased"])


def test_robust_states_its_margin_against_oc_and_when_its_bound_is_vacuous(mp: MPLDP) -> None:
    """MPLDP's ``"robust"`` carries the same margin as RCF's, against OC: fakes on the smallest level
    raise it more than OC (little weight there), by less than ``info["margin"]``; a tiny campaign's
    bound is 1 and marked vacuous."""
    values, levels = _users(20_000)
    rng = np.random.default_rng(3431)
    m = 202
    targets = [np.array([D - 1]), np.empty(0, dtype=np.int64)]
    excess = []
    for _ in range(3):
        honest = mp.simulate(values, levels, rng)
        fake = mp.tally(fake_reports(mp, targets, m, rng=rng, strategy="min_level"))
        beta = m / (honest.n + m)
        est = {k: (mp.estimate(honest, k, attribute=0), mp.estimate(honest + fake, k, attribute=0, beta=beta))
               for k in ("robust", "unbiased")}  # fmt: skip
        gains = {k: float(a.frequencies[D - 1] - b.frequencies[D - 1]) for k, (b, a) in est.items()}
        excess.append(gains["robust"] - gains["unbiased"])
        assert excess[-1] <= float(est["robust"][1].info["margin"][D - 1])
        assert "unbiased" in str(est["robust"][1].info["margin_model"])
    assert np.mean(excess) > 0.01
    small_values, small_levels = _users(300)
    info = mp.estimate(mp.simulate(small_values, small_levels, rng), "robust", attribute=0, beta=0.3).info
    assert np.all(info["vacuous"]) and np.all(info["bound"] == 1.0)
