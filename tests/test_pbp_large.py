"""PBP over the large-domain oracles (OLH, HR, SS): one report format across the hidden levels.

The library (one ``g`` / ``k`` for every level, chosen or given), the exact protection of the hidden
level against a brute-force enumeration of outputs, the deployed spec, and the pooled estimator's
law by seeded Monte Carlo.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import pldp
from pldp.audit.run import audit
from pldp.channel.every_pair import EveryPairLeaf
from pldp.channel.hadamard import in_half
from pldp.channel.hashed import hash_values
from pldp.channel.leveled import LeveledNode
from pldp.channel.payload import check_columns
from pldp.channel.sampling import GRID
from pldp.channel.words import Cursor
from pldp.client import Client
from pldp.deploy import Spec, decode
from pldp.errors import EstimationError, ParameterError, ReportError, SpecError
from pldp.protocols import PBP
from pldp.protocols.one_format import best_hash_range, hiding_cost
from tests.deploy_cases import answers_of, spec_of, words
from tests.tolerances import SUM_RTOL

LEVELS = [0.5, 1.0, 2.0]
RHO = [0.3, 0.3, 0.4]


# --------------------------------------------------------------------------- the library
def test_one_g_for_every_level_is_the_grid_argmin_of_the_pooled_variance() -> None:
    levels, rho = np.array(LEVELS), np.array(RHO)
    pbp = PBP(LEVELS, RHO, 30, "olh")
    assert {m.g for m in pbp.mechanisms} == {pbp.g}  # one format: the g does not tell the level
    # the search uses the ideal probabilities; the grid's give the same argmin over 2..ceil(e^2 + 1)
    absent = np.full(30, 1 / 30)
    var = {g: float(PBP(LEVELS, RHO, 30, "olh", g=g).expected_variance(absent, 1000)[0]) for g in range(2, 10)}
    assert pbp.g == min(var, key=var.__getitem__) == best_hash_range(levels, rho)
    assert pbp.g < pldp.OLH(2.0, 30).g  # the top level's own optimum would be e^2 + 1 = 8
    # one level: OLH's own g (round(e^eps) + 1), wherever it sits
    for eps in (0.3, 1.0, 2.5, 4.0):
        assert PBP([eps], [1.0], 30, "olh").g == pldp.OLH(eps, 30).g


def test_the_given_size_is_used_and_sizes_are_refused_where_they_do_not_belong() -> None:
    assert PBP(LEVELS, RHO, 30, "olh", g=3).g == 3
    ss = PBP(LEVELS, RHO, 30, "ss", k=4)
    assert {m.k for m in ss.mechanisms} == {4}
    hr = PBP(LEVELS, RHO, 30, "hr")
    assert {m.K for m in hr.mechanisms} == {32}  # K(d) at every budget: the format is one anyway
    for bad in ({"oracle": "hr", "g": 3}, {"oracle": "olh", "k": 3}, {"oracle": "krr", "g": 3}):
        with pytest.raises(ParameterError, match="neither"):
            PBP(LEVELS, RHO, 30, **bad)
    with pytest.raises(ParameterError, match="oracle must be one of"):
        PBP(LEVELS, RHO, 30, "cms")


@pytest.mark.parametrize("oracle", ["olh", "hr", "ss"])
def test_params_round_trip_and_support_oracles_offer_their_methods_only(oracle: str) -> None:
    pbp = PBP(LEVELS, RHO, 30, oracle)
    again = PBP.from_params(pbp.params())
    assert again == pbp and again.g == pbp.g and again.k == pbp.k
    assert pbp.methods == ("unbiased", "norm_sub", "mle", "robust", "recover")
    assert PBP(LEVELS, RHO, 30, "oue").methods[-3:] == ("robust", "detect", "recover")  # unchanged
    tally = pbp.simulate(np.full((3, 30), 20), np.random.default_rng(5))
    with pytest.raises(EstimationError, match="does not fit PBP"):
        pbp.estimate(tally, "detect")
    for method in pbp.methods:
        assert pbp.estimate(tally, method).n == 1800


@pytest.mark.parametrize("oracle", ["olh", "hr", "ss"])
def test_blended_budget_is_the_pooled_reports_own_ratio(oracle: str) -> None:
    """Every level's law depends only on whether a report supports the item, so the pooled law is
    the same-format law with mass p*: its budget is the largest ratio of pooled output
    probabilities, here enumerated (as floats) over every output of a small node."""
    pbp = PBP(LEVELS, RHO, 6, oracle)
    # a family of 4 seeds for enumeration: the thresholds, hence the ratios, do not depend on its size
    laws = [_output_law(replace(m.sampler(), seeds=4) if oracle == "olh" else m.sampler()) for m in pbp.mechanisms]
    pooled = sum(float(r) * law for r, law in zip(RHO, laws, strict=True))  # (x, o) probabilities
    ratio = max(float(np.max(pooled[x] / pooled[x2])) for x in range(6) for x2 in range(6))
    assert pbp.epsilon_blended is not None
    assert math.isclose(pbp.epsilon_blended, math.log(ratio), rel_tol=SUM_RTOL)  # float sums of a few terms


# --------------------------------------------------------------------------- the exact level claim
def _outputs(node: EveryPairLeaf) -> list[tuple[int, ...]]:
    if node.kind == "hashed":
        return [(s, y) for s in range(node.seeds) for y in range(node.g)]
    if node.kind == "hadamard":
        return [(y,) for y in range(node.K)]
    return list(itertools.combinations(range(node.d), node.k))


def _prob(node: EveryPairLeaf, x: int, o: tuple[int, ...]) -> Fraction:
    """Pr(o | x) from each kind's module docstring, exactly."""
    if node.kind == "hashed":
        s, y = o
        hit = int(hash_values(x, s, node.g)) == y
        return Fraction(node.weight + (node.keep if hit else 0), node.seeds * GRID)
    if node.kind == "hadamard":
        inside = bool(in_half(x, o[0]))
        return Fraction(2 * (node.keep if inside else GRID - node.keep), node.K * GRID)
    d, k = node.d, node.k
    if x in o:
        return Fraction(node.keep, GRID * math.comb(d - 1, k - 1))
    return Fraction(GRID - node.keep, GRID * math.comb(d - 1, k))


def _output_law(node: EveryPairLeaf) -> np.ndarray:
    outs = _outputs(node)
    return np.array([[float(_prob(node, x, o)) for o in outs] for x in range(node.d)])


def _brute_ratio(node: EveryPairLeaf, other: EveryPairLeaf) -> Fraction:
    outs = _outputs(node)
    assert sum(_prob(node, 0, o) for o in outs) == 1  # the enumeration is the whole law
    return max(_prob(node, x, o) / _prob(other, x, o) for x in range(node.d) for o in outs)


NODES = {
    "hashed": lambda e: pldp.OLH(e, 5, g=3, seeds=4).sampler(),
    "flh-g5": lambda e: pldp.OLH(e, 6, g=5, seeds=8).sampler(),
    "hadamard": lambda e: pldp.HR(e, 5).sampler(),
    "subset": lambda e: pldp.SS(e, 6, k=2).sampler(),
}


@pytest.mark.parametrize("kind", list(NODES))
def test_ratio_to_is_the_brute_force_largest_ratio_of_outputs(kind: str) -> None:
    nodes = [NODES[kind](e) for e in (0.3, 1.0, 2.5)]
    for a, b in itertools.permutations(nodes, 2):
        assert a.ratio_to(b) == _brute_ratio(a, b)
    leveled = LeveledNode(nodes[0].d, (0.3, 1.0, 2.5), tuple(nodes), "hidden", None, math.inf)
    num, den = leveled.level_ratio()
    assert Fraction(num, den) == max(_brute_ratio(a, b) for a, b in itertools.permutations(nodes, 2))


def test_nodes_of_another_format_are_not_bounded_and_are_refused_in_a_hidden_level() -> None:
    a, b = pldp.OLH(1.0, 5, g=3).sampler(), pldp.OLH(2.0, 5, g=4).sampler()
    assert a.ratio_to(b) is None and a.ratio_to(pldp.HR(1.0, 5).sampler()) is None
    spec = Spec.from_mechanism(PBP(LEVELS, RHO, 5, "olh"), question="q").to_dict()
    root = spec["sampler"]["root"]
    root["items"][2] = pldp.OLH(2.0, 5, g=root["items"][2]["g"] + 1).sampler().to_json()
    with pytest.raises(SpecError, match="same kind and size, and one report format"):
        LeveledNode.parse(root, "root", _parse_node)
    clear = {**Spec.from_mechanism(PBP(LEVELS, RHO, 5, "hr"), question="q").to_dict()["sampler"]["root"]}
    clear["level_report"] = "clear"
    del clear["level_epsilon"]
    # in the clear the same levels are RCF's: they parse, and the level travels as a column
    assert [c.name for c in LeveledNode.parse(clear, "root", _parse_node).columns()][:1] == ["level"]


def test_a_perturbed_level_over_hashed_nodes_is_drawn_checked_and_claimed_as_the_product() -> None:
    """The level report is independent of the item report given (x, t): the level ratio is the
    product of the level sampler's largest ratio and the items' (LeveledNode.level_ratio); the
    payload check reads the level column and one level's node checks the rest."""
    levels = (0.5, 1.0, 2.0)
    items = tuple(pldp.OLH(e, 6, g=4, seeds=4).sampler() for e in levels)
    level_sampler = pldp.KRR(1.0, 3).sampler()
    node = LeveledNode(6, levels, items, "perturbed", level_sampler, math.inf)
    items_only = Fraction(*LeveledNode(6, levels, items, "hidden", None, math.inf).level_ratio())
    level_only = max(level_sampler.max_output_ratio(t, u) for t, u in itertools.permutations(range(3), 2))
    assert Fraction(*node.level_ratio()) == items_only * level_only
    x, level = np.arange(60) % 6, np.arange(60) % 3
    cols = node.empty_columns(60)
    node.draw((x, level), Cursor(words(1)(240), 4 * np.arange(60)), np.arange(60), cols)
    assert [c.name for c in node.columns()] == ["level", "seed", "value"]
    check_columns(node, cols, 60)
    cols["value"][7] = 4  # g = 4: out of range
    with pytest.raises(ReportError, match="report 7"):
        check_columns(node, cols, 60)


def _parse_node(obj: object, path: str) -> object:
    from pldp.channel.parse import parse_node

    return parse_node(obj, path)


# --------------------------------------------------------------------------- deployment
@pytest.mark.parametrize("oracle", ["olh", "hr", "ss"])
def test_a_deployed_pbp_decodes_to_its_tally_and_one_by_one_reports_are_the_batch(oracle: str) -> None:
    pbp = PBP(LEVELS, RHO, 20, oracle)
    spec = spec_of(pbp, "q")
    answers, kw = answers_of("q", pbp, 200, np.random.default_rng(1))
    batch = Client(spec, random=words(2)).reports(answers, **kw)
    tally = decode(spec, batch)
    assert tally.n == 200 and decode(spec, batch.to_json()) == tally
    single = Client(spec, random=words(2))
    ones = [single.report(a, level=int(t)) for a, t in zip(answers[:10], kw["level"][:10], strict=True)]
    assert ones == list(batch.reports())[:10]
    assert spec.mechanism().estimate(tally).n == 200


def test_a_rejected_subset_choice_at_a_hidden_level_is_the_levels_own_ss_report() -> None:
    """A word past the last whole multiple of a choice's range is rejected: the client redraws the
    report word by word (LeveledNode.draw_one), and the level's report is then exactly what the
    level's own SS draws from the same words."""
    pbp = PBP(LEVELS, RHO, 20, "ss")
    stream = [7, 7, 7, 7, 5, GRID - 1, *range(1000, 1000 + 40)]  # id, membership, a rejected first choice

    def source() -> object:
        words = list(stream)
        return lambda n: np.array([words.pop(0) for _ in range(n)], dtype=np.uint32)

    for t, mech in enumerate(pbp.mechanisms):
        got = Client(spec_of(pbp, "q"), random=source()).report(3, level=t)
        want = Client(Spec.from_mechanism(mech, question="q"), random=source()).report(3)
        assert got["payload"] == {"data": want["payload"]}


@pytest.mark.parametrize("oracle", ["olh", "hr", "ss"])
def test_the_audit_s_exact_law_of_a_level_pair_attains_the_level_ratio(oracle: str) -> None:
    """The audit's exact channel of two levels of one item (hit or miss, each level's mass) reaches
    the hidden level's exact ratio (LeveledNode.level_ratio), and no item pair exceeds the top budget."""
    pbp = PBP(LEVELS, RHO, 3, oracle)
    result = audit(spec_of(pbp, "q"), trials=500, rng=np.random.default_rng(3))
    assert result.ok
    level_rows = [row for row in result.rows if row.secret == "level"]
    ratio = Fraction(*pbp.sampler().level_ratio())  # the largest over ordered pairs of levels
    assert math.isclose(max(row.exact for row in level_rows), math.log(ratio), rel_tol=SUM_RTOL)  # float logs
    item_rows = [row for row in result.rows if row.secret == "item"]
    assert max(row.exact for row in item_rows) <= max(LEVELS) * (1 + SUM_RTOL)  # claims hold exactly; logs round


# --------------------------------------------------------------------------- the estimator's law
def test_pbp_olh_is_unbiased_with_the_pooled_variance() -> None:
    """R replicates of N i.i.d. users (level ~ rho, item ~ f, independent: cells multinomial),
    simulated at the count level: each estimate's mean and sample variance against f and
    m(1-m)/(N(p*-q*)^2).

    Tolerances. The mean of R estimates has standard error sqrt(V/R): |mean - f| <= z sqrt(V/R).
    The sample variance s^2 of R draws of a normal law has (R-1) s^2/V ~ chi^2_{R-1}; the count is
    Bin(N, m), whose excess kurtosis (1 - 6m(1-m))/(N m(1-m)) < 1e-3 adds under 1e-3 R/2 ~ 2 % to
    Var(s^2)/(2V^2/(R-1)), covered by widening the chi-square quantiles' distance from 1 by 5 %.
    Every item is tested, two-sided, at a family-wise level of 1e-6 (Bonferroni over 2 d tests).
    """
    d, n, r = 8, 20_000, 3000
    pbp = PBP(LEVELS, RHO, d, "olh")
    f = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.08, 0.05, 0.02])
    rng = np.random.default_rng(20240611)
    cells_p = (np.array(RHO)[:, None] * f[None, :]).reshape(-1)
    est = np.empty((r, d))
    for i in range(r):
        cells = rng.multinomial(n, cells_p).reshape(3, d)
        est[i] = pbp.estimate(pbp.simulate(cells, rng)).frequencies
    v = pbp.expected_variance(f, n)
    alpha = 1e-6 / (2 * d)
    z = stats.norm.isf(alpha / 2)
    assert np.all(np.abs(est.mean(axis=0) - f) <= z * np.sqrt(v / r))
    lo, hi = stats.chi2.ppf(alpha / 2, r - 1) / (r - 1), stats.chi2.isf(alpha / 2, r - 1) / (r - 1)
    lo, hi = 1 - 1.05 * (1 - lo), 1 + 1.05 * (hi - 1)
    ratio = est.var(axis=0, ddof=1) / v
    assert np.all((lo <= ratio) & (ratio <= hi)), (ratio, lo, hi)


def test_the_cost_of_hiding_the_level_is_rcf_olh_against_pbp_olh() -> None:
    """hiding_cost (ideal probabilities) against the same ratio from the grid mechanisms: RCF-OLH's
    1/sum(n_t/V_t), each level at its own g, over PBP-OLH's expected variance, at an absent item.
    The grid's p differs from the ideal by under (e^eps + g)/2**32 < 1e-8 relatively, the factor
    moves by at most 2/(p* - q*) < 10 times that: rel_tol 1e-6."""
    levels, rho, n, d = np.array(LEVELS), np.array(RHO), 10_000, 30
    pbp = PBP(LEVELS, RHO, d, "olh")
    absent = np.zeros(d)
    absent[0] = 1.0  # item 1 is held by no one
    v_pbp = float(pbp.expected_variance(absent, n)[1])
    factors = []
    for e in LEVELS:
        p, q = (float(s[0]) for s in pldp.OLH(e, d).support)
        factors.append(q * (1 - q) / (p - q) ** 2)
    v_rcf = 1 / sum(r * n / v for r, v in zip(RHO, factors, strict=True))
    cost = hiding_cost(levels, rho)
    assert math.isclose(v_pbp / v_rcf, cost, rel_tol=1e-6)
    assert 1.4 < cost < 1.45  # the figure docs/protocols.md states (1.43)


def test_level_protection_refuses_large_domain_reports_with_a_reason() -> None:
    """The Bayes guess of a hidden level is computed for direct and unary reports; for OLH, HR and SS
    it is refused with the reason and where the exact worst case is, not a TypeError."""
    from pldp.errors import ParameterError
    from pldp.privacy import level_protection

    for oracle in ("olh", "hr", "ss"):
        with pytest.raises(ParameterError, match="level_ratio"):
            level_protection(PBP(LEVELS, RHO, 6, oracle))


@pytest.mark.parametrize("oracle", ["olh", "hr"])
def test_robust_bound_holds_against_fakes_that_know_it(oracle: str) -> None:
    """PBP's "robust" over support counts (the pooled unbiased estimate, Norm-Sub kept >= 0) states
    a bound for any reports of a share beta of fakes: MGA's fakes and the optimal attacker's (which
    knows the estimate) raise the target by no more than info["bound"], in every seeded tally."""
    from pldp.attacks import fake_reports, gain

    levels, d, target = [0.5, 1.0, 2.0, 4.0], 200, [7]
    pbp = PBP(levels, [0.25] * 4, d, oracle)
    rng = np.random.default_rng(sum(map(ord, oracle)) + 7)
    cells = rng.multinomial(20_000, np.full(4 * d, 1 / (4 * d))).reshape(4, d)
    n, m = int(cells.sum()), 204  # 1 % of the reports fake
    for strategy in ("mga", "optimal"):
        for _ in range(3):
            honest = pbp.simulate(cells, rng)
            fake = pbp.tally(fake_reports(pbp, target, m, rng=rng, strategy=strategy))
            bound = float(pbp.estimate(honest + fake, "robust", beta=m / (n + m)).info["bound"][target[0]])
            moved = gain(pbp, honest, fake, target, "robust")
            assert 0 < moved <= bound, (strategy, moved, bound)
