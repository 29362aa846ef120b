"""The empirical privacy audit (pldp.audit): bounds, exact tests, LDP-Auditor's findings, power."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

import pldp
import pldp.channel.direct
import pldp.channel.unary
from pldp.audit import Input, Pair, audit, clopper_pearson, default_pairs, ldp_auditor_test, optimal_test
from pldp.audit.events import statistic
from pldp.audit.targets import OracleTarget
from pldp.channel.exact import log_ratio
from pldp.channel.sampling import GRID, direct_table
from pldp.client import Client
from pldp.deploy import Spec
from pldp.errors import ParameterError
from pldp.protocols import FEBSF, MPLDP, PaddingSampling
from tests.tolerances import EPS, SUM_RTOL

#: scipy's exact binomial interval (``binomtest(...).proportion_ci(method="exact")``) finds each end by
#: brentq at its default xtol = 2e-12 and rtol = 4 eps: the reference is only that accurate (measured:
#: 4.5e-13 from the beta quantiles pldp takes, which are exact to a few ulps).
BRENTQ_ATOL = 2e-12 + 8 * EPS


# --------------------------------------------------------------------------- bounds
@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (731, 1000), (5, 10**6)])
def test_clopper_pearson_is_scipys_exact_interval(k: int, n: int) -> None:
    lo, hi = clopper_pearson(k, n, 0.01)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.99, method="exact")
    assert lo == pytest.approx(ci.low, abs=BRENTQ_ATOL) and hi == pytest.approx(ci.high, abs=BRENTQ_ATOL)


def test_clopper_pearson_refuses_nonsense() -> None:
    for args in ((1, 0, 0.1), (3, 2, 0.1), (1, 2, 0.0), (1, 2, 1.0)):
        with pytest.raises(ParameterError):
            clopper_pearson(*args)


# --------------------------------------------------------------------------- exact tests
def _all_outputs_ratio(p0: np.ndarray, p1: np.ndarray) -> float:
    """Largest log-ratio of two laws over every output (brute force)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.max(np.where(p0 > 0, np.log(p0) - np.log(p1), -np.inf)))


def _unary_law(node: Any, x: int) -> np.ndarray:
    """Law of all 2^d unary outputs of item x (bit k of output v is (v >> k) & 1)."""
    q = np.asarray(node.b, dtype=float) / GRID
    q[x] = node.a[x] / GRID
    bits = (np.arange(1 << node.d)[:, None] >> np.arange(node.d)) & 1
    return np.prod(np.where(bits == 1, q, 1 - q), axis=1)


@pytest.mark.parametrize(
    "mech",
    [
        pldp.KRR(1.0, 4),
        pldp.IPRR(pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf])),
        pldp.OUE(1.0, 5),
        pldp.RAPPOR(2.0, 4),
        pldp.IDUE(pldp.ItemBudgets.from_array([0.5, 0.5, 1.0, 2.0, 2.0])),
    ],
    ids=repr,
)
def test_optimal_test_reaches_the_largest_ratio_over_every_output(mech: Any) -> None:
    node = mech.sampler()
    for i, j in itertools.permutations(range(mech.d), 2):
        test = optimal_test(node, Pair("item", Input(i), Input(j)))
        if isinstance(mech, pldp.DirectEncoding):
            ch = np.asarray(mech.channel())
            p0, p1 = ch[i], ch[j]
        else:
            p0, p1 = _unary_law(node, i), _unary_law(node, j)
        # the same log ratios, by the test's search and by brute force: rounding only (measured 6 eps)
        assert test.log_ratio == pytest.approx(_all_outputs_ratio(p0, p1), rel=SUM_RTOL, abs=SUM_RTOL)


def test_optimal_level_test_of_febsf_is_the_whole_reports_worst_case() -> None:
    """Level pairs: brute force over (item report, level report), and ERRATA FEBSF-6's worst case."""
    for oracle in ("krr", "oue"):
        febsf = FEBSF([0.5, 1.0, 2.0], 0.3, 4, oracle)  # type: ignore[arg-type]
        node = febsf.sampler()
        best = -math.inf
        pi = febsf.level_mechanism.channel()
        for s, u in itertools.permutations(range(3), 2):
            test = optimal_test(node, Pair("level", Input(0, s), Input(0, u)))
            if oracle == "krr":
                i0, i1 = febsf.mechanisms[s].channel()[0], febsf.mechanisms[u].channel()[0]
            else:
                i0, i1 = _unary_law(node.items[s], 0), _unary_law(node.items[u], 0)
            brute = _all_outputs_ratio(np.outer(i0, pi[s]).ravel(), np.outer(i1, pi[u]).ravel())
            assert test.log_ratio == pytest.approx(brute, rel=SUM_RTOL)
            best = max(best, test.log_ratio)
        num, den = node.level_ratio()
        assert best == pytest.approx(log_ratio(num, den), rel=SUM_RTOL)


def test_optimal_item_set_test_matches_padding_and_samplings_exact_check() -> None:
    ps = PaddingSampling(pldp.OUE(1.0, 4), 2)
    node = ps.sampler()
    rep = ps.verify_privacy()
    index = {s: k for k, s in enumerate(rep.subsets)}
    for s0, s1 in [((0,), (1,)), ((0,), ()), ((), (2,)), ((0, 1), (2, 3)), ((0, 1, 2), (3,))]:
        test = optimal_test(node, Pair("item-set", Input(s0), Input(s1)))
        assert test.log_ratio == pytest.approx(rep.realised[index[s0], index[s1]], rel=SUM_RTOL)


def test_statistic_law_matches_the_samplers_reports() -> None:
    """The statistic's exact law against 200,000 real reports (chi-square, p >= 1e-4): FEBSF-OUE's
    level pair (bit x and the count of other set bits, times the level report) and an item-set pair."""
    rng = np.random.default_rng(5)
    cases = [
        (FEBSF([0.5, 1.0, 2.0], 0.3, 6, "oue"), Pair("level", Input(1, 0), Input(1, 2))),
        (PaddingSampling(pldp.RAPPOR(1.0, 5), 2), Pair("item-set", Input((0, 3)), Input((1,)))),
        (MPLDP([3, 4], [1.0, 2.0]), Pair("item", Input((0, 1), (2, 0)), Input((0, 3), (2, 0)), 1)),
    ]
    for oracle, pair in cases:
        target = OracleTarget(oracle)
        stat = statistic(target.node, pair.x0, pair.x1)
        for inp, pmf in ((pair.x0, stat.pmf0), (pair.x1, stat.pmf1)):
            values = stat.classify(target.sample(inp, 200_000, rng))
            seen = np.bincount(values, minlength=pmf.size)
            keep = pmf * 200_000 >= 5
            expected = np.append(pmf[keep], pmf[~keep].sum()) * 200_000
            observed = np.append(seen[keep], seen[~keep].sum())
            if expected[-1] == 0:
                expected, observed = expected[:-1], observed[:-1]
            assert stats.chisquare(observed, expected).pvalue >= 1e-4


def test_trial_aware_test_sees_febsfs_level_leak_where_the_rarest_outputs_cannot() -> None:
    node = FEBSF(np.arange(1, 11) / 10, 0.3, 16, "oue").sampler()
    pair = Pair("level", Input(0, 0), Input(0, 9))
    rare, chosen = optimal_test(node, pair), optimal_test(node, pair, 10**6, 0.01)
    assert rare.log_ratio == pytest.approx(8.832, abs=1e-3) and rare.p0 * 10**6 < 2  # about 2 hits in 10^6
    assert 5.0 < chosen.log_ratio < rare.log_ratio and chosen.p0 > 1e-3


# --------------------------------------------------------------------------- audits
def test_default_pairs_cover_items_sets_levels_and_attributes() -> None:
    assert len(default_pairs(pldp.KRR(1.0, 10).sampler())) == 90
    assert [p.label() for p in default_pairs(pldp.KRR(1.0, 100).sampler())] == ["0 vs 1", "1 vs 0"]
    eps = np.array([0.5] * 8 + [1.0] * 8)
    iprr = default_pairs(pldp.IPRR(pldp.ItemBudgets.from_array(eps)).sampler())
    assert 6 <= len(iprr) <= 64  # item classes: equal budgets and equal integer weights
    assert {(eps[p.x0.item], eps[p.x1.item]) for p in iprr} == set(itertools.product([0.5, 1.0], repeat=2))
    febsf = default_pairs(FEBSF([0.5, 1.0, 2.0], 0.3, 4, "krr").sampler())
    assert sum(p.secret == "level" for p in febsf) == 6 and sum(p.secret == "item" for p in febsf) == 36
    assert all(p.secret == "item-set" for p in default_pairs(PaddingSampling(pldp.OUE(1.0, 4), 2).sampler()))
    mp = default_pairs(MPLDP([3, 4], [1.0, 2.0]).sampler())
    assert {p.part for p in mp} == {0, 1} and all(p.secret == "item" for p in mp)


def test_febsfs_level_leak_is_flagged_against_the_papers_claim_but_not_the_specs() -> None:
    febsf = FEBSF(np.arange(1, 11) / 10, 0.3, 16, "oue")
    paper = audit(febsf, trials=50_000, rng=np.random.default_rng(2))
    spec = audit(Spec.from_mechanism(febsf, question="q"), trials=50_000, rng=np.random.default_rng(2))
    levels = [r for r in paper.rows if r.secret == "level"]
    assert all(r.claimed == 0.3 for r in levels) and max(r.audited for r in levels) > 2.0
    assert {r.secret for r in paper.flagged} == {"level"}
    assert spec.ok and spec.faithful and paper.faithful


def test_same_seed_same_result_and_dask_agrees_with_serial() -> None:
    mech = pldp.OUE(1.0, 4)
    one = audit(mech, trials=70_000, rng=np.random.default_rng(3))
    two = audit(mech, trials=70_000, rng=np.random.default_rng(3))
    spread = audit(mech, trials=70_000, rng=np.random.default_rng(3), workers=2)
    assert [(r.tpr, r.fpr) for r in one.rows] == [(r.tpr, r.fpr) for r in two.rows]
    assert [(r.tpr, r.fpr) for r in one.rows] == [(r.tpr, r.fpr) for r in spread.rows]


def test_result_table_json_pandas_and_plot() -> None:
    res = audit(pldp.KRR(1.0, 3), trials=5_000, rng=np.random.default_rng(4))
    frame = res.to_pandas()
    assert list(frame.columns[:4]) == ["secret", "pair", "claimed", "exact"] and len(frame) == 6
    assert res.to_json()["flagged"] == 0 and "0 vs 1" in res.table() and "no pair above its claim" in res.summary()
    import matplotlib

    matplotlib.use("Agg")
    ax = res.plot()
    assert ax.get_xlabel().startswith("claimed")


def test_bad_arguments_are_refused() -> None:
    mech = pldp.KRR(1.0, 3)
    for kwargs in ({"attack": "guess"}, {"trials": 0}, {"alpha": 1.5}, {"pairs": []}, {"pairs": "all"}):
        with pytest.raises(ParameterError):
            audit(mech, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="attack='optimal'"):
        audit(FEBSF([0.5, 1.0], 0.3, 3), attack="ldp-auditor", pairs=[Pair("level", Input(0, 0), Input(0, 1))])
    with pytest.raises(ParameterError, match="same law"):
        audit(mech, pairs=[(1, 1)])
    with pytest.raises(ParameterError, match="own randomness"):
        audit(Client(Spec.from_mechanism(mech, question="q")), workers=2, trials=10)
    with pytest.raises(ParameterError, match="cannot audit"):
        audit(object())


# --------------------------------------------------------------------------- LDP-Auditor
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("k", [2, 10, 200])
def test_ldp_auditor_grr_audits_tight(eps: float, k: int) -> None:
    """Their finding 1: GRR audits within 0.1 of epsilon at 10^6 trials and alpha = 0.01."""
    res = audit(pldp.KRR(eps, k), pairs=[(0, 1)], attack="ldp-auditor", rng=np.random.default_rng(int(eps * 10) + k))
    assert eps - 0.1 <= res.rows[0].audited <= eps


@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_ldp_auditor_unary_attack_recovers_about_half_of_rappors_epsilon(eps: float) -> None:
    """Their finding 2, and the optimal test's answer: tight."""
    mech = pldp.RAPPOR(eps, 16)
    theirs = audit(mech, pairs=[(0, 1)], attack="ldp-auditor", rng=np.random.default_rng(7))
    ours = audit(mech, pairs=[(0, 1)], rng=np.random.default_rng(7))
    assert 0.4 * eps <= theirs.rows[0].audited <= 0.62 * eps
    assert eps - 0.1 <= ours.rows[0].audited <= eps
    limit = ldp_auditor_test(mech.sampler(), Pair("item", Input(0), Input(1))).log_ratio
    assert theirs.rows[0].limit == pytest.approx(limit)


# --------------------------------------------------------------------------- power
def _krr_spec() -> Spec:
    return Spec.from_mechanism(pldp.KRR(1.0, 4), question="q")


def test_a_direct_sampler_keeping_ten_percent_too_often_is_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _krr_spec()
    assert audit(spec, rng=np.random.default_rng(8)).ok
    node = spec.root
    keep = int(node.keep * 1.1)
    rest = GRID - keep
    weights = [rest // node.d] * node.d
    weights[-1] += rest - sum(weights)
    broken = direct_table(keep, weights)
    original = pldp.channel.direct.direct_draw
    monkeypatch.setattr(pldp.channel.direct, "direct_draw", lambda x, w, table: original(x, w, broken))
    res = audit(spec, rng=np.random.default_rng(8))
    assert not res.ok and not res.faithful


def test_a_unary_sampler_with_one_threshold_raised_is_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = Spec.from_mechanism(pldp.OUE(1.0, 6), question="q")
    original = pldp.channel.unary.unary_bits

    def raised(x: np.ndarray, coins: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a = a.copy()
        a[2] = min(int(a[2] * 1.1), GRID - 1)
        return original(x, coins, a, b)

    monkeypatch.setattr(pldp.channel.unary, "unary_bits", raised)
    res = audit(spec, rng=np.random.default_rng(9))
    assert not res.ok
    assert all("2" in r.pair.split(" vs ") for r in res.flagged)  # only pairs of item 2
    assert all(r.audited <= r.exact for r in res.rows if "2" not in r.pair.split(" vs "))


def _repeating(period: int, patterns: np.ndarray) -> Any:
    """A word source whose every report (``period`` words) is one of ``patterns`` in turn."""
    state = {"k": 0}

    def words(n: int) -> np.ndarray:
        reports = n // period
        idx = (state["k"] + np.arange(reports)) % len(patterns)
        state["k"] += reports
        return patterns[idx].reshape(-1)

    return words


def _seeded_patterns(period: int, seeds: range) -> np.ndarray:
    return np.stack([np.random.default_rng(s).integers(0, GRID, size=period, dtype=np.uint64) for s in seeds]).astype(
        np.uint32
    )


def test_a_client_reseeding_its_generator_with_the_same_value_per_report_is_flagged() -> None:
    """Every report of an input is then the same; where that report depends on the input, the
    test fires always on x0 and never on x1. (A stream under which reports do not depend on the
    input leaks nothing, and is rightly not flagged: with k-RR that happens when the word falls
    outside the keep region.)"""
    spec = Spec.from_mechanism(pldp.OUE(1.0, 8), question="q")
    client = Client(spec, random=_repeating(12, _seeded_patterns(12, range(1))))  # 4 id words + 8 bits
    res = audit(client, rng=np.random.default_rng(10))
    assert not res.ok and max(r.audited for r in res.rows) > 10


def test_a_client_seeded_per_report_from_an_eight_bit_clock_is_flagged() -> None:
    spec = _krr_spec()
    for start in (0, 100, 200):
        source = _repeating(5, np.roll(_seeded_patterns(5, range(256)), -start, axis=0))
        res = audit(Client(spec, random=source), rng=np.random.default_rng(start))
        assert not res.ok


# --------------------------------------------------------------------------- command line
def test_cli_audits_a_spec_and_a_mechanism_and_writes_table_json_and_figure(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from pldp.cli import main

    spec_path = tmp_path / "spec.json"
    spec_path.write_text(Spec.from_mechanism(pldp.OUE(1.0, 4), question="q").to_json())
    out = tmp_path / "out"
    assert main(["audit", str(spec_path), "--trials", "20000", "--seed", "1", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "12 pairs" in text and "no pair above its claim" in text
    data = json.loads((out / "audit.json").read_text())
    assert len(data["rows"]) == 12 and data["flagged"] == 0
    assert (out / "audit.svg").read_text().lstrip().startswith("<?xml")
    assert main(["audit", "rappor", "--eps", "2", "--d", "6", "--trials", "20000", "--attack", "ldp-auditor",
                 "--pairs", "3", "--seed", "2", "--no-progress"]) == 0  # fmt: skip
    assert "3 pairs" in capsys.readouterr().out


def test_cli_exits_1_when_a_pair_is_flagged(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pldp.cli import main

    spec = _krr_spec()
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(spec.to_json())
    original = pldp.channel.direct.direct_draw
    broken = direct_table(GRID - 3 * (1 << 20), [1 << 20] * 3 + [0])  # keeps far too often
    monkeypatch.setattr(pldp.channel.direct, "direct_draw", lambda x, w, table: original(x, w, broken))
    assert main(["audit", str(spec_path), "--trials", "20000", "--seed", "3", "--no-progress"]) == 1
    assert "ABOVE CLAIM" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["audit", str(tmp_path / "missing.json")])
