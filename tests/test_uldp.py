"""ULDP's unary mechanism (uRAP) and how the utility-optimized pair relates to IPRR and IDUE.

* uRAP's claims are the brute-force likelihood ratios on protected reports, every condition is tight
  on the ``2**32`` grid (one step more generous fails), a non-sensitive bit is set by its holder only;
* URR with sensitive set ``S`` at ``eps`` is IPRR with budgets ``eps`` on ``S`` and ``inf`` elsewhere
  (one channel, two notions);
* uRAP is the limit of two-level unary channels under AvgID-LDP as the non-sensitive budget grows
  (IDUE needs finite budgets), and beats the solved two-level IDUE under MinID-LDP and RAPPOR/OUE
  when most users hold non-sensitive items; a two-level AvgID-LDP IDUE beats it only by telling
  the two levels apart beyond ``eps``;
* its estimates are unbiased with the variance of :func:`pldp.theory.item_variance`.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import pldp
from pldp import theory
from pldp.channel import UnaryNode, check_claims, parse_node
from pldp.channel.sampling import GRID
from pldp.channel.words import Cursor
from pldp.errors import SpecError
from pldp.mechanisms.uldp import URAP, uldp_thresholds
from tests.tolerances import FLOAT_RTOL

EPS = (0.25, 1.0, 3.0)
MASK5 = np.array([True, True, True, False, False])
#: 3 sensitive items of 8, the setting where uRAP gains: most users hold a non-sensitive item.
MASK8 = np.array([True, True, True, False, False, False, False, False])
COUNTS8 = np.array([300, 200, 100, 4000, 2500, 1500, 900, 500])


def _rappor_theta(eps: float) -> float:
    return math.exp(eps / 2) / (math.exp(eps / 2) + 1)


def _law(node: UnaryNode, x: int, y: tuple[int, ...]) -> Fraction:
    """``Pr(y | x)`` of a unary node, exactly."""
    p = node.bit_thresholds(x)
    out = Fraction(1)
    for k, bit in enumerate(y):
        out *= Fraction(int(p[k]) if bit else GRID - int(p[k]), GRID)
    return out


def _fixed_variance(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Variance of the unbiased count estimate ``(C_k - n b_k) / (a_k - b_k)`` with fixed true counts ``t``."""
    n = t.sum()
    return (t * a * (1 - a) + (n - t) * b * (1 - b)) / (a - b) ** 2


# ------------------------------------------------------------------------------------ exact claims
def test_the_claims_are_the_largest_ratios_over_protected_reports_and_invertible_reports_name_one_input() -> None:
    node = URAP(1.0, MASK5).sampler()
    rows = {r.subject: r for r in check_claims(node).rows}
    sens = MASK5
    worst: dict[tuple[bool, bool], Fraction] = {}
    for y in itertools.product((0, 1), repeat=5):
        laws = [_law(node, x, y) for x in range(5)]
        if any(y[k] for k in np.flatnonzero(~sens)):  # invertible: one non-sensitive input only
            assert sum(law > 0 for law in laws) <= 1
            assert all(laws[x] == 0 for x in np.flatnonzero(sens))
            continue
        for i, j in itertools.permutations(range(5), 2):
            key = (bool(sens[i]), bool(sens[j]))
            worst[key] = max(worst.get(key, Fraction(0)), laws[i] / laws[j])
    assert len(rows) == 4  # groups: the sensitive items, the non-sensitive ones
    for r in rows.values():
        i_sens = r.subject.startswith("item 0")
        j_sens = " vs item 0" in r.subject
        # the row's log-ratio is the brute-force maximum (both exact to a double's rounding)
        assert r.realised == pytest.approx(math.log(worst[(i_sens, j_sens)]), abs=1e-12)
        assert r.holds and r.claimed == 1.0


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("shape", ["oue", "rappor"])
def test_every_condition_is_tight_one_grid_step_more_fails(eps: float, shape: str) -> None:
    theta = 0.5 if shape == "oue" else _rappor_theta(eps)
    node = URAP(eps, MASK5, theta=theta).sampler()
    assert check_claims(node).holds
    a_s, b_s, a_n = uldp_thresholds(eps, theta)
    assert node.a == (a_s,) * 3 + (a_n,) * 2 and node.b == (b_s,) * 3 + (0, 0)
    # b one step lower: sensitive vs sensitive fails; a_N one step higher: sensitive vs non-sensitive fails
    lower_b = UnaryNode(5, node.a, (b_s - 1,) * 3 + (0, 0), "ULDP", node.epsilons)
    higher_an = UnaryNode(5, (a_s,) * 3 + (a_n + 1,) * 2, node.b, "ULDP", node.epsilons)
    assert {r.subject for r in check_claims(lower_b).failures} == {
        "item 0 (+2) vs item 3 (+1)",
        "item 0 (+2) vs item 0 (+2)",
    }
    assert {r.subject for r in check_claims(higher_an).failures} == {"item 0 (+2) vs item 3 (+1)"}
    # the closed forms the grid rounds: b = theta / (theta + (1 - theta) e^eps), theta_N = theta (1 - e^-eps)
    assert b_s / GRID == pytest.approx(theta / (theta + (1 - theta) * math.exp(eps)), abs=2 / GRID)
    # theta_N moves with b's rounding up (at most a step): d theta_N / d b = theta / (b^2 e^eps)
    b = b_s / GRID
    tol = (theta / (b * b * math.exp(eps)) + 2) / GRID
    assert a_n / GRID == pytest.approx(theta * (1 - math.exp(-eps)), abs=tol)


def test_privacy_states_uldp_and_no_plain_ldp_epsilon() -> None:
    """The float map holds with the claims' slack, and a report that reveals its input has no LDP epsilon
    (as URR's); with every item sensitive uRAP is an LDP unary encoding whose epsilon is finite."""
    rep = URAP(1.0, MASK5).privacy()
    assert rep.notion == "ULDP" and rep.holds and 0 <= rep.slack < 1e-8
    assert rep.ldp_epsilon == math.inf == pldp.URR(1.0, MASK5).privacy().ldp_epsilon
    every = URAP(1.0, np.ones(5, dtype=bool)).privacy()
    assert every.holds and every.ldp_epsilon == pytest.approx(1.0, abs=1e-8)


def test_a_uldp_node_is_read_back_and_its_refusals() -> None:
    node = URAP(1.0, MASK5).sampler()
    obj = node.to_json()
    assert obj["epsilons"][3:] == ["inf", "inf"] and obj["b"][3:] == [0, 0]
    assert parse_node(obj) == node

    def edited(**members: object) -> dict[str, object]:
        return {**obj, **members}

    zero_iff_inf = r"under ULDP b\[k\] = 0 exactly for the items of budget inf"
    bad = {
        "b > 0 on an inf item": (edited(b=[*obj["b"][:3], 5, 0]), zero_iff_inf),
        "b = 0 on a sensitive item": (edited(b=[0, *obj["b"][1:]]), zero_iff_inf),
        "no sensitive item": (edited(epsilons=["inf"] * 5, b=[0] * 5), r"needs at least one sensitive item"),
        "b = 0 under LDP": (edited(notion="LDP", epsilons=[1.0] * 5), r"root\.b\[3\] = 0 is outside"),
        "inf under MinID-LDP": (edited(notion="MinID-LDP", b=[obj["b"][0]] * 5), r"epsilons\[3\]"),
    }
    for what, (o, message) in bad.items():
        with pytest.raises(SpecError, match=message):
            parse_node(o)
            pytest.fail(f"parsed a node with {what}")


def test_the_program_sets_a_non_sensitive_bit_for_its_holder_only_whatever_the_words() -> None:
    """``d`` words per report, bit ``k`` set iff ``w[k]`` is below its threshold: the word 0 sets every
    bit of positive threshold, never a non-sensitive bit of another item (``b = 0``); the own bit of a
    non-sensitive item flips between ``theta_N - 1`` and ``theta_N`` on the grid."""
    node = URAP(1.0, MASK5).sampler()
    a_n = node.a[3]
    rows = [(3, [0] * 5), (0, [0] * 5), (3, [GRID - 1] * 3 + [a_n - 1, 0]), (3, [0, 0, 0, a_n, 0])]
    words = np.array([w for _, ws in rows for w in ws], dtype=np.uint32)
    out = {"bits": np.zeros((len(rows), node.nbytes), dtype=np.uint8)}
    node.draw(np.array([x for x, _ in rows]), Cursor(words, 5 * np.arange(len(rows))), np.arange(len(rows)), out)
    bits = np.unpackbits(out["bits"], axis=1)[:, :5].tolist()
    assert bits == [[1, 1, 1, 1, 0], [1, 1, 1, 0, 0], [0, 0, 0, 1, 0], [1, 1, 1, 0, 0]]


def test_only_holders_set_a_non_sensitive_bit() -> None:
    m = URAP(1.0, MASK8)
    x = np.repeat(np.arange(8), 2000)
    bits = m.unpack(m.perturb(x, np.random.default_rng(20190814)))
    non = ~MASK8
    holders = np.zeros_like(bits)
    holders[np.arange(x.size), x] = True
    assert not (bits[:, non] & ~holders[:, non]).any()
    assert not bits[MASK8[x]][:, non].any()  # a sensitive input's report is always protected


# ------------------------------------------------------------------------------------ relations
@pytest.mark.parametrize("eps", EPS)
def test_urr_is_iprr_with_two_budget_levels(eps: float) -> None:
    """One channel (keep threshold and weights on the grid), two names of its notion: URR claims
    ULDP and IPRR with budgets ``eps`` on S and ``inf`` elsewhere claims IPLDP, output by output."""
    urr = pldp.URR(eps, MASK8)
    iprr = pldp.IPRR(pldp.ItemBudgets(np.where(MASK8, eps, np.inf)))
    u, i = urr.sampler(), iprr.sampler()
    assert (u.keep, u.weights, u.epsilons) == (i.keep, i.weights, i.epsilons)
    assert (u.notion, i.notion) == ("ULDP", "IPLDP")
    np.testing.assert_array_equal(urr.channel(), iprr.channel())
    ru, ri = check_claims(u).rows, check_claims(i).rows
    assert [(r.subject, r.claimed, r.realised) for r in ru] == [(r.subject, r.claimed, r.realised) for r in ri]


def _avgid_two_levels(eps: float, beta: int) -> tuple[UnaryNode, float]:
    """uRAP's thresholds with ``b = beta > 0`` on the non-sensitive bits, as an AvgID-LDP node of two
    levels, with the smallest non-sensitive budget ``eps_N`` whose claims hold (to 1e-9)."""
    ulike = URAP(eps, MASK5).sampler()
    b = (*ulike.b[:3], beta, beta)
    probe = UnaryNode(5, ulike.a, b, "AvgID-LDP", (eps,) * 3 + (1e6,) * 2)
    need = 0.0
    for r in check_claims(probe).rows:
        s_first, s_second = r.subject.startswith("item 0"), " vs item 0" in r.subject
        if s_first and s_second:
            assert r.realised <= eps
        elif s_first or s_second:
            need = max(need, 2 * r.realised - eps)  # (eps + eps_N) / 2 >= realised
        else:
            need = max(need, r.realised)
    eps_n = need + 1e-9
    return UnaryNode(5, ulike.a, b, "AvgID-LDP", (eps,) * 3 + (eps_n,) * 2), eps_n


@pytest.mark.parametrize("eps", EPS)
def test_urap_is_the_limit_of_two_level_avgid_channels_as_the_non_sensitive_budget_grows(eps: float) -> None:
    """IDUE's notions need finite budgets and ``b > 0``: the closest AvgID-LDP channel has
    ``b_N = beta``, and its non-sensitive budget grows like ``2 ln(1 / beta)`` as ``beta -> 0``
    while its variance tends to uRAP's (``|difference| = O(beta)``). MinID-LDP has no such
    limit: a non-sensitive item's pair with a sensitive one keeps the budget ``eps``."""
    urap = URAP(eps, MASK5)
    counts = np.array([50, 40, 30, 500, 380])
    v_urap = _fixed_variance(*urap.support, counts)
    budgets, gaps = [], []
    for shift in (6, 14, 22, 30):
        beta = GRID >> shift
        node, eps_n = _avgid_two_levels(eps, beta)
        assert check_claims(node).holds
        lower = UnaryNode(5, node.a, node.b, "AvgID-LDP", (eps,) * 3 + (eps_n - 1e-6,) * 2)
        assert not check_claims(lower).holds
        budgets.append(eps_n)
        a, b = (np.asarray(v, dtype=float) / GRID for v in (node.a, node.b))
        v = _fixed_variance(a, b, counts)
        np.testing.assert_array_equal(v[:3], v_urap[:3])  # the sensitive items' bits are uRAP's
        assert np.all(v[3:] > v_urap[3:])
        gaps.append(v[3:] - v_urap[3:])
    # the excess variance of a non-sensitive item is O(beta): 8 more bits of 1/beta divide it by about
    # 2**8 (the first step, beta = 1/64, is still short of linear: its ratio is below 2**-8 * 1.5)
    for before, after in itertools.pairwise(gaps):
        assert np.all(after <= before * 1.5 / 256)
    # 8 more bits of 1/beta: the non-sensitive budget grows by 2 * 8 ln 2 (the pair (N, S) is binding)
    steps = np.diff(budgets)
    np.testing.assert_allclose(steps, 16 * math.log(2), rtol=1e-3)  # 1e-3: the (1 - beta) factors
    with pytest.raises(SpecError):  # beta = 0 is no AvgID-LDP node: only ULDP states it
        parse_node({**URAP(eps, MASK5).sampler().to_json(), "notion": "AvgID-LDP"})


@pytest.mark.parametrize("eps", (1.0, 3.0))
def test_urap_beats_the_two_level_idue_and_rappor_oue_when_most_users_hold_non_sensitive_items(eps: float) -> None:
    """Total variance of the count estimates (fixed true counts) at one ``eps``: uRAP below the solved
    two-level IDUE (MinID-LDP, non-sensitive budget 4 eps: every pair with a sensitive item is still at
    eps, on every report) by more than 10 %, and below OUE and RAPPOR; on the sensitive items uRAP is OUE (same bits but
    for the grid: OUE's coins may be 16 bits, a change below 0.1 % per probability, 1 % on variance)."""
    urap = URAP(eps, MASK8)
    idue = pldp.IDUE(pldp.ItemBudgets(np.where(MASK8, eps, 4 * eps)), model="opt2")
    oue, rappor = pldp.OUE(eps, 8), pldp.RAPPOR(eps, 8)
    mechs = {"urap": urap, "idue": idue, "oue": oue, "rappor": rappor}
    total = {name: _fixed_variance(*m.support, COUNTS8) for name, m in mechs.items()}
    # MinID-LDP two-level IDUE (OUE structure) is OUE here: a non-sensitive bit must still hide its
    # holder from a sensitive one at eps, so its b cannot drop below OUE's (to the solver's tolerance)
    assert total["urap"].sum() < 0.9 * total["idue"].sum()
    assert total["idue"].sum() <= total["oue"].sum() * (1 + 1e-6)
    assert total["oue"].sum() < total["rappor"].sum()
    np.testing.assert_allclose(total["urap"][MASK8], total["oue"][MASK8], rtol=1e-2)
    # a non-sensitive item's variance is its holders' alone: t (1 - theta_N) / theta_N
    a_n = urap.support[0][3]
    np.testing.assert_allclose(total["urap"][~MASK8], COUNTS8[~MASK8] * (1 - a_n) / a_n, rtol=FLOAT_RTOL)


# ------------------------------------------------------------------------------------ estimation
def test_the_estimates_are_unbiased_with_the_stated_variance_and_gain_over_oue() -> None:
    """400 seeded simulate draws: each item's mean estimate within 4.5 standard errors of the truth,
    its sample variance within 4.5 standard errors of :func:`pldp.theory.item_variance` (``fixed``;
    relative SE of a sample variance ``sqrt(2 / (R - 1))`` for near-normal estimates), and the l2
    loss below OUE's by more than 4.5 standard errors of the paired difference."""
    rng = np.random.default_rng(2019)
    urap, oue = URAP(1.0, MASK8), pldp.OUE(1.0, 8)
    n, truth = int(COUNTS8.sum()), COUNTS8 / COUNTS8.sum()
    reps = 400
    est = np.array([urap.estimate(urap.simulate(COUNTS8, rng)).frequencies for _ in range(reps)])
    est_oue = np.array([oue.estimate(oue.simulate(COUNTS8, rng)).frequencies for _ in range(reps)])
    var = theory.item_variance(urap, truth, n, model="fixed")
    assert np.all(np.abs(est.mean(axis=0) - truth) <= 4.5 * np.sqrt(var / reps))
    ratio = est.var(axis=0, ddof=1) / var
    assert np.all(np.abs(ratio - 1) <= 4.5 * math.sqrt(2 / (reps - 1)))
    diff = ((est_oue - truth) ** 2).sum(axis=1) - ((est - truth) ** 2).sum(axis=1)
    assert diff.mean() > 4.5 * diff.std(ddof=1) / math.sqrt(reps)


def test_the_mle_and_the_other_estimators_take_b_zero() -> None:
    urap = URAP(1.0, MASK8)
    counts = 10 * COUNTS8
    tally = urap.simulate(counts, np.random.default_rng(7))
    truth = counts / counts.sum()
    n = int(counts.sum())
    # 6 roots of the unbiased estimator's expected l2 loss: it exceeds that with probability below
    # 1/36 (Markov), and the other estimators are pulled towards the simplex, which holds the truth
    radius = 6 * math.sqrt(theory.item_variance(urap, truth, n, model="fixed").sum())
    assert 0 < radius < 0.1
    for method in urap.methods:
        f = urap.estimate(tally, method).frequencies
        assert np.all(np.isfinite(f)), method
        assert np.linalg.norm(f - truth) <= radius, method


def test_an_avgid_idue_of_two_levels_can_beat_urap_only_by_giving_up_eps_between_the_levels() -> None:
    """AvgID-LDP grants a pair of a sensitive and a non-sensitive item ``(eps + eps_N) / 2``: with
    ``eps_N = 8 eps`` the solved IDUE (opt2) has a smaller total variance than uRAP, and a sensitive
    and a non-sensitive input are then told apart with a log-ratio above ``2 eps`` (4.5 here) on
    reports that reveal nothing (IDUE has no invertible report), which ULDP at ``eps`` forbids."""
    eps = 1.0
    urap = URAP(eps, MASK8)
    idue = pldp.IDUE(pldp.ItemBudgets(np.where(MASK8, eps, 8 * eps)), model="opt2", pair_rule="avg")
    assert _fixed_variance(*idue.support, COUNTS8).sum() < _fixed_variance(*urap.support, COUNTS8).sum()
    rep = idue.privacy()
    assert rep.holds
    sens = rep.group_epsilon == eps
    across = rep.realised[np.ix_(sens, ~sens)].max(), rep.realised[np.ix_(~sens, sens)].max()
    assert max(across) > 2 * eps
    assert urap.privacy().realised.max() <= eps + 1e-9  # uRAP: every pair within eps on protected reports


def test_a_uldp_node_is_refused_where_every_item_must_be_protected() -> None:
    """Padding-and-sampling's item-set claim and a level's claim assume every item protected (b > 0):
    a ULDP node (which may reveal a non-sensitive input) is refused inside them, by the spec's parser
    and by the library."""
    import json

    from pldp.channel import parse_node
    from pldp.errors import ParameterError, SpecError
    from pldp.protocols import PaddingSampling

    urap = pldp.URAP(1.0, np.array([True, True, False, False]))
    inner = urap.sampler().to_json()
    padding = {"kind": "padding", "d": 2, "ell": 2, "inner": inner}
    with pytest.raises(SpecError, match="inner must protect every item"):
        parse_node(json.loads(json.dumps(padding)))
    oue = pldp.OUE(1.0, 4).sampler().to_json()
    leveled = {"kind": "leveled", "d": 4, "levels": [1.0, 1.0], "items": [oue, inner], "level_report": "clear"}
    with pytest.raises(SpecError, match="items must protect every item"):
        parse_node(leveled)
    with pytest.raises(ParameterError, match="must protect every item"):
        PaddingSampling(urap, 2)


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_rappor_shaped_urap_has_the_published_closed_forms(eps: float) -> None:
    """At ``theta = e^(eps/2) / (e^(eps/2) + 1)`` the derived parameters are the closed forms of the
    RAPPOR-shaped uRAP as other implementations state them (a sensitive bit flips w.p.
    ``1/(e^(eps/2)+1)``, a non-sensitive holder keeps hers w.p. ``1 - e^(-eps/2)``), here
    derived independently of :func:`uldp_thresholds`: the closed forms, rounded to the grid
    the way the thresholds are (``A`` down, ``B`` and ``G - A_N`` up, each to a tight ratio),
    lie within two grid steps of what runs."""
    h = math.exp(eps / 2)
    theta = h / (h + 1)
    m = URAP(eps, np.array([True, True, False]), theta=theta)
    step = 2.0 / GRID  # the thresholds are tight integers; the closed forms sit within a step of each
    assert abs(float(m.a[0]) - theta) <= step
    assert abs(float(m.b[0]) - 1 / (h + 1)) <= step
    assert abs(float(m.a[2]) - (1 - 1 / h)) <= step
    assert float(m.b[2]) == 0.0
