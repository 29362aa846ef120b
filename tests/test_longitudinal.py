"""Memoized chains (issue 27 item 1): L-GRR, L-OUE, L-OSUE, L-SUE, L-SOUE, L-IPRR, L-IDUE.

* Both claims decided exactly on the sampler node: the permanent response's (eps_perm, any number
  of reports of one value) and the chained one-report channel's (eps_1), tight where the IRR meets
  eps_1 with equality; a deliberately wrong IRR fails the check.
* The IRR formulas: L-GRR's exact one against Arcolezi et al.'s (ERRATA LONG-1), the unary shapes'
  ratio equations, L-OSUE's one report being OUE at eps_1.
* The estimators through the chained channel: seeded Monte Carlo of ``simulate`` (unbiased mean,
  variance against ``pldp.theory`` and the closed form, interval coverage; norm_sub and mle close
  to the truth) and of the per-user path.
* Memo rounds: one permanent response per (user, value), reused, seeded, refused across mechanisms;
  the joint law of two reports of one user is the memoized one, not that of two fresh reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pldp
from pldp import theory
from pldp.channel import DirectIRR, MemoNode, UnaryIRR, check_claims
from pldp.channel.sampling import GRID
from pldp.deploy import Spec
from pldp.errors import BudgetError, ParameterError
from pldp.mechanisms.longitudinal import direct as ldirect
from pldp.mechanisms.longitudinal import unary as lunary
from pldp.mechanisms.longitudinal.formulas import (
    chained,
    grr_irr,
    grr_irr_paper,
    longitudinal_variance,
    ue_irr,
    ue_prr,
)
from tests.tolerances import FLOAT_RTOL, SUM_RTOL

UNIFORM = {"L-GRR": pldp.LGRR, "L-OUE": pldp.LOUE, "L-OSUE": pldp.LOSUE, "L-SUE": pldp.LSUE, "L-SOUE": pldp.LSOUE}
PERM = pldp.ItemBudgets.from_array([1.0, 2.0, 2.0, 4.0, 4.0])
ONE = pldp.ItemBudgets.from_array([0.5, 1.0, 1.0, 2.0, 2.0])


def _personalized() -> dict[str, Callable[[], Any]]:
    return {
        "L-IPRR": lambda: pldp.LIPRR(
            pldp.ItemBudgets.from_array([0.2, 1.0, 2.0, np.inf, 4.0]),
            pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, 1.0]),
        ),
        "L-IDUE": lambda: pldp.LIDUE(PERM, ONE),
    }


def _all_mechanisms() -> dict[str, Callable[[], Any]]:
    out: dict[str, Callable[[], Any]] = {name: (lambda cls=cls: cls(4.0, 1.0, 5)) for name, cls in UNIFORM.items()}
    return {**out, **_personalized()}


# ----------------------------------------------------------------------------------- claims
@pytest.mark.parametrize("name", sorted(UNIFORM))
@pytest.mark.parametrize(("eps_perm", "eps_1", "d"), [(4.0, 1.0, 5), (1.0, 0.5, 2), (2.0, 1.2, 100), (0.3, 0.1, 20)])
def test_uniform_chains_meet_both_claims_exactly_and_tightly(name: str, eps_perm: float, eps_1: float, d: int) -> None:
    m = UNIFORM[name](eps_perm, eps_1, d)
    rep = m.privacy()
    verification = check_claims(m.sampler())
    assert rep.holds and rep.exact and verification.holds, rep.summary()
    assert rep.permanent_epsilon <= eps_perm + 1e-12 and rep.ldp_epsilon <= eps_1 + 1e-12
    # the IRR meets eps_1 with equality up to its coin grid (2^-16 or 2^-32 steps)
    assert rep.ldp_epsilon == pytest.approx(eps_1, rel=2e-3)
    assert rep.permanent_epsilon == pytest.approx(eps_perm, rel=2e-3)
    one_rows = [r for r in verification.rows if "one report" in r.part]
    perm_rows = [r for r in verification.rows if "permanent" in r.part]
    assert one_rows and perm_rows and len(one_rows) + len(perm_rows) == len(verification.rows)
    # the same ratio as the verification evaluates it and as the report does: rounding only (measured 159 eps)
    assert max(r.realised for r in one_rows) == pytest.approx(rep.ldp_epsilon, rel=SUM_RTOL)


@pytest.mark.parametrize("name", sorted(_personalized()))
def test_personalized_chains_meet_every_item_claim(name: str) -> None:
    m = _personalized()[name]()
    rep = m.privacy()
    assert rep.holds and rep.exact, rep.summary()
    assert check_claims(m.sampler()).holds
    assert m.permanent_budgets == m.permanent_mechanism.budgets
    assert np.all(m.budgets.epsilons <= m.permanent_budgets.epsilons)


def test_liprr_one_report_is_iprr_at_the_one_report_budgets() -> None:
    """L-IPRR's IRR takes every per-output bound with equality: one report is IPRR at eps_1 (its delta is
    IPRR's, up to the 2^-32 grids of both stages)."""
    m = _personalized()["L-IPRR"]()
    one_shot = pldp.IPRR(m.budgets)
    assert m.delta == pytest.approx(one_shot.delta, rel=1e-6)
    assert np.allclose(m.q, one_shot.q, rtol=1e-5, atol=1e-12)


@pytest.mark.parametrize("one", [ONE.epsilons, [0.9, 0.5, 1.9, 1.0, 3.9], [0.2, 1.9, 0.3, 3.9, 0.5]])
def test_lidue_one_report_is_idue_at_the_one_report_budgets_where_reachable(one: Any) -> None:
    """Where every item's target is reachable, one report of L-IDUE is IDUE at eps_1 (Gu et al.'s one-shot
    optimum of its model): the same bit probabilities and variances, up to the coin grids."""
    budgets = pldp.ItemBudgets.from_array(one)
    m = pldp.LIDUE(PERM, budgets)
    assert m.reached is not None and m.reached.all()
    target = pldp.IDUE(budgets)
    assert np.allclose(m.a, target.a, atol=1e-4) and np.allclose(m.b, target.b, atol=1e-4)
    p = np.full(5, 0.2)
    ratio = theory.item_variance(m, p, 10_000) / theory.item_variance(target, p, 10_000)
    assert np.all(ratio < 1.001)


def _wrong_direct(node: MemoNode, step: int) -> MemoNode:
    irr = node.instantaneous
    assert isinstance(irr, DirectIRR)
    weights = tuple(max(w - step, 0) for w in irr.weights)
    wrong = DirectIRR(GRID - sum(weights), weights)
    return MemoNode(node.d, node.permanent, wrong, node.notion, node.epsilons)


def _wrong_unary(node: MemoNode, step: int) -> MemoNode:
    irr = node.instantaneous
    assert isinstance(irr, UnaryIRR)
    wrong = UnaryIRR(tuple(min(a + step, GRID - 1) for a in irr.a), tuple(max(b - step, 1) for b in irr.b))
    return MemoNode(node.d, node.permanent, wrong, node.notion, node.epsilons)


@pytest.mark.parametrize("name", sorted(_all_mechanisms()))
def test_an_irr_slightly_too_informative_fails_the_exact_check(name: str) -> None:
    """The node's IRR with its keep probability raised by 2^-20 per output (direct) or its bit probabilities
    moved out by 2^-14 (unary): the one-report claims fail, the permanent ones still hold."""
    node = _all_mechanisms()[name]().sampler()
    if isinstance(node.instantaneous, DirectIRR):
        wrong = _wrong_direct(node, GRID >> 20)
    else:  # four steps of the IRR's 2^-16 coin grid: more than its rounding leaves
        wrong = _wrong_unary(node, GRID >> 14)
    rows = check_claims(wrong).rows
    assert all(r.holds for r in rows if "permanent" in r.part)
    assert not all(r.holds for r in rows if "one report" in r.part)
    assert check_claims(node).holds


def test_a_wrong_irr_in_the_mechanism_makes_its_privacy_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """``privacy()`` checks the chain it runs: L-GRR built with an IRR that keeps the permanent item a
    little more often than the exact one reports that its one-report claim fails."""
    exact = ldirect.irr_weights

    def greedy(prr: Any, one: np.ndarray) -> tuple[int, np.ndarray]:
        keep, w = exact(prr, one)
        step = np.minimum(w, GRID >> 16)
        return keep + int(step.sum()), w - step

    monkeypatch.setattr(ldirect, "irr_weights", greedy)
    rep = pldp.LGRR(4.0, 1.0, 5).privacy()
    assert not rep.holds and not rep.exact and not rep.one_report.holds and rep.permanent.holds
    assert rep.ldp_epsilon > 1.0
    assert "FAILS" in rep.summary()


def test_an_unrounded_unary_irr_is_refused_or_fixed() -> None:
    """An IRR far more informative than eps_1 allows is refused; the constructor never builds a chain
    whose one report exceeds eps_1."""
    one = pldp.ItemBudgets.uniform(1.0, pldp.Domain.range(5))
    with pytest.raises(BudgetError):
        pldp.LongitudinalUnary(pldp.OUE(4.0, 5), 0.95, 0.01, one)
    p1, q1 = ue_prr("oue", 4.0)
    a2, b2 = ue_irr(p1, q1, 1.0, "oue")
    m = pldp.LongitudinalUnary(pldp.OUE(4.0, 5), a2 + 1e-6, b2 - 1e-6, one)  # a hair too informative
    assert m.privacy().holds and m.privacy().ldp_epsilon <= 1.0


def test_a_wrong_unary_irr_in_the_mechanism_makes_its_privacy_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the IRR's rounding and exact check removed, a too informative IRR is built and ``privacy()``
    says it fails."""

    def unchecked(prr: Any, a2: np.ndarray, b2: np.ndarray, one: Any, notion: str, width: int) -> tuple:
        scale = 1 << width
        return np.round(a2 * scale).astype(np.int64), np.round(b2 * scale).astype(np.int64)

    monkeypatch.setattr(lunary, "_irr_thresholds", unchecked)
    one = pldp.ItemBudgets.uniform(1.0, pldp.Domain.range(5))
    p1, q1 = ue_prr("oue", 4.0)
    a2, b2 = ue_irr(p1, q1, 1.2, "oue")  # the IRR of eps_1 = 1.2, claimed as 1.0
    rep = pldp.LongitudinalUnary(pldp.OUE(4.0, 5), a2, b2, one).privacy()
    assert not rep.holds and not rep.exact and rep.ldp_epsilon == pytest.approx(1.2, rel=1e-3)


def test_eps_1_must_stay_below_eps_perm() -> None:
    for cls in UNIFORM.values():
        with pytest.raises(BudgetError, match="eps_1"):
            cls(1.0, 1.0, 5)
    with pytest.raises(BudgetError, match="eps_1 must not exceed eps_perm"):
        pldp.LIPRR(ONE, PERM)


def test_a_memoized_mechanism_deploys_with_a_memo_key() -> None:
    """(The clients' memo store: tests/test_memo_client.py.)"""
    spec = Spec.from_mechanism(pldp.LGRR(2.0, 1.0, 3), question="q")
    assert spec.memo_key is not None and Spec.from_json(spec.to_json()) == spec


# --------------------------------------------------------------------------------- formulas
@pytest.mark.parametrize("k", [2, 3, 10, 100])
def test_lgrr_exact_irr_and_the_papers(k: int) -> None:
    """The exact IRR makes one report GRR at eps_1; Arcolezi et al.'s (multi-freq-ldpy's) agrees for
    k = 2 and for k > 2 leaves one report more private than eps_1 (ERRATA LONG-1)."""
    eps_perm, eps_1 = 2.0, 1.0
    a = math.exp(eps_perm)
    p1, q1 = a / (a + k - 1), 1 / (a + k - 1)
    p, q = chained(p1, q1, *grr_irr(eps_perm, eps_1, k))
    assert math.log(p / q) == pytest.approx(eps_1, rel=FLOAT_RTOL)  # closed forms: rounding only
    p_paper, q_paper = chained(p1, q1, *grr_irr_paper(eps_perm, eps_1, k))
    realised = math.log(p_paper / q_paper)
    if k == 2:
        assert realised == pytest.approx(eps_1, rel=FLOAT_RTOL)
    else:
        assert realised < eps_1 - 0.02
        exact = longitudinal_variance("L-GRR", eps_perm, eps_1, k, 1000)
        assert longitudinal_variance("L-GRR (paper)", eps_perm, eps_1, k, 1000) > exact


@pytest.mark.parametrize("shapes", [("oue", "oue"), ("oue", "sue"), ("sue", "sue"), ("sue", "oue")])
@pytest.mark.parametrize(("eps_perm", "eps_1"), [(4.0, 1.0), (1.0, 0.5), (0.5, 0.05), (8.0, 4.0)])
def test_unary_irr_meets_eps_1_in_its_shape(shapes: tuple[str, str], eps_perm: float, eps_1: float) -> None:
    p1, q1 = ue_prr(shapes[0], eps_perm)
    p2, q2 = ue_irr(p1, q1, eps_1, shapes[1])
    assert 0 < q2 < p2 < 1
    assert p2 == 0.5 if shapes[1] == "oue" else p2 + q2 == pytest.approx(1.0, abs=1e-15)
    p, q = chained(p1, q1, p2, q2)
    # ue_irr brackets the IRR's parameter by brentq to 4 eps relative; the log ratio moves by that times
    # its condition (measured: 12.5 eps at most over these 16 cases)
    assert math.log(p * (1 - q) / (q * (1 - p))) == pytest.approx(eps_1, rel=SUM_RTOL)


def test_an_oue_shaped_irr_cannot_reach_every_eps_1() -> None:
    """An IRR that keeps a set bit w.p. 1/2 caps one report's ratio (L-OUE at eps_perm = 2 reaches at most
    about 1.66, L-SOUE about 1.31): a larger eps_1 is refused and says why; the SUE shape reaches it."""
    for cls in (pldp.LOUE, pldp.LSOUE):
        with pytest.raises(BudgetError, match="too close to the permanent"):
            cls(2.0, 1.9, 10)
    assert pldp.LSUE(2.0, 1.9, 10).privacy().holds and pldp.LOSUE(2.0, 1.9, 10).privacy().holds


def test_losue_one_report_is_oue_at_eps_1() -> None:
    m = pldp.LOSUE(3.0, 1.0, 50)
    one_shot = pldp.OUE(1.0, 50)
    assert np.allclose(m.a, 0.5, atol=1e-4) and np.allclose(m.b, one_shot.b, atol=1e-4)
    for protocol in ("L-OUE", "L-SUE", "L-SOUE"):
        assert longitudinal_variance(protocol, 3.0, 1.0, 50) > longitudinal_variance("L-OSUE", 3.0, 1.0, 50)


@pytest.mark.parametrize("name", sorted(UNIFORM))
def test_closed_form_variance_is_that_of_the_mechanism(name: str) -> None:
    """``pldp.theory.longitudinal_variance`` (real-valued parameters) against ``theory.item_variance`` of
    the mechanism as it runs (its grid-rounded chain), at every item's frequency."""
    eps_perm, eps_1, d, n = 3.0, 1.0, 5, 10_000
    m = UNIFORM[name](eps_perm, eps_1, d)
    p = np.array([0.4, 0.25, 0.15, 0.1, 0.1])
    by_mechanism = theory.item_variance(m, p, n)
    by_formula = [theory.longitudinal_variance(name, eps_perm, eps_1, d, n, f) for f in p]
    assert np.allclose(by_mechanism, by_formula, rtol=2e-3)


# ------------------------------------------------------------------------------- estimators
COUNTS = np.array([8_000, 5_000, 3_000, 2_000, 2_000])
REPEATS = 200


@pytest.mark.parametrize("name", sorted(_all_mechanisms()))
def test_estimators_through_the_chained_channel(name: str) -> None:
    """Seeded Monte Carlo of ``simulate``: the unbiased estimate's mean is within 4.5 standard errors of
    the truth, its spread matches ``pldp.theory.item_variance`` (fixed population) and the reported
    variance, its 95% intervals cover the truth 95% of the time; norm_sub and mle are as close."""
    m = _all_mechanisms()[name]()
    rng = np.random.default_rng(sum(map(ord, name)))
    n, truth = int(COUNTS.sum()), COUNTS / COUNTS.sum()
    tallies = [m.simulate(COUNTS, rng) for _ in range(REPEATS)]
    estimates = [m.estimate(t) for t in tallies]
    est = np.array([e.frequencies for e in estimates])
    reported = np.array([e.variance for e in estimates])
    var = theory.item_variance(m, truth, n, model="fixed")
    se = np.sqrt(var / REPEATS)
    assert np.all(np.abs(est.mean(axis=0) - truth) < 4.5 * se), (est.mean(axis=0) - truth) / se
    # the sample variance of 200 draws is within 45% of the truth (its relative sd is 0.1; 4.5 sd)
    assert np.allclose(est.var(axis=0, ddof=1), var, rtol=0.45)
    assert np.allclose(reported.mean(axis=0), theory.item_variance(m, truth, n), rtol=0.05)
    lo, hi = zip(*(e.ci(0.95) for e in estimates), strict=True)
    covered = ((np.array(lo) <= truth) & (truth <= np.array(hi))).mean()
    assert 0.92 <= covered <= 0.98
    for method in ("norm_sub", "mle"):
        other = np.array([m.estimate(t, method).frequencies for t in tallies[:50]])
        assert np.all(np.abs(other.mean(axis=0) - truth) < 4.5 * np.sqrt(var / 50)), method
        assert np.allclose(other.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", sorted(_all_mechanisms()))
def test_per_user_path_estimates_the_truth(name: str) -> None:
    """``perturb`` + ``tally`` (fresh permanent responses) estimates the truth within 4.5 standard errors."""
    m = _all_mechanisms()[name]()
    x = np.repeat(np.arange(5), COUNTS * 5)
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    tally = m.tally(m.perturb(x, rng))
    truth = COUNTS / COUNTS.sum()
    est = m.estimate(tally)
    assert tally.n == x.size
    assert np.all(np.abs(est.frequencies - truth) < 4.5 * np.sqrt(theory.item_variance(m, truth, x.size, "fixed")))


# ------------------------------------------------------------------------------------- memo
@pytest.mark.parametrize("name", sorted(_all_mechanisms()))
def test_memo_keeps_one_permanent_response_per_user_and_value(name: str) -> None:
    m = _all_mechanisms()[name]()
    rng = np.random.default_rng(7)
    x = rng.integers(0, 5, 300)
    _, memo1 = m.perturb(x, rng, memo=m.memo())
    assert len(memo1) == 300
    prr, again = m.remember(x, rng, memo1)
    assert again is memo1  # nothing new drawn
    idx, found = memo1.lookup(np.arange(300) * m.d + x)
    assert found.all() and np.array_equal(prr, memo1.responses[idx])
    _, memo2 = m.perturb(x, rng, memo=memo1)
    assert np.array_equal(memo2.keys, memo1.keys) and np.array_equal(memo2.responses, memo1.responses)
    # a user whose value changes draws a new permanent response, and gets her old one back later
    moved = (x + 1) % 5
    _, memo3 = m.perturb(moved[:100], rng, memo=memo2)
    assert len(memo3) == 400
    back, memo4 = m.remember(x, rng, memo3)
    assert memo4 is memo3 and np.array_equal(back, prr)
    # the same (user, value) twice in one batch: one draw
    twice, memo5 = m.remember([x[0], x[0]], rng, m.memo(), users=[9, 9])
    assert len(memo5) == 1 and np.array_equal(twice[0], twice[1])


def test_memo_refusals() -> None:
    m, other = pldp.LGRR(2.0, 1.0, 5), pldp.LGRR(3.0, 1.0, 5)
    with pytest.raises(ParameterError, match="another mechanism"):
        m.perturb([0, 1], np.random.default_rng(0), memo=other.memo())
    with pytest.raises(ParameterError, match="memo"):
        m.perturb([0, 1], np.random.default_rng(0), users=[0, 1])
    with pytest.raises(ParameterError, match="entries"):
        m.perturb([0, 1], np.random.default_rng(0), memo=m.memo(), users=[0])


@pytest.mark.parametrize("name", sorted(_all_mechanisms()))
def test_same_seed_same_bytes_with_a_memo(name: str) -> None:
    m = _all_mechanisms()[name]()
    x = np.arange(40) % 5

    def rounds(seed: int) -> list[bytes]:
        rng = np.random.default_rng(seed)
        first, memo = m.perturb(x, rng, memo=m.memo())
        second, memo = m.perturb(x[::-1], rng, memo=memo, users=np.arange(40)[::-1])
        return [first.tobytes(), second.tobytes(), memo.keys.tobytes(), memo.responses.tobytes()]

    assert rounds(1) == rounds(1)
    assert rounds(1) != rounds(2)


def _agreement_direct(m: Any, x: int) -> tuple[float, float]:
    """P(two reports of one user holding ``x`` are equal): with a memo (one PRR, two IRRs) and fresh."""
    keep, w = m.instantaneous_thresholds
    irr = np.tile(w / GRID, (m.d, 1)) + np.eye(m.d) * keep / GRID  # Pr(y | z)
    prr = m.permanent_mechanism.channel()[x]
    memo = float(prr @ (irr**2).sum(axis=1))
    fresh = float((m.channel()[x] ** 2).sum())
    return memo, fresh


def _agreement_unary(m: Any, x: int) -> tuple[float, float]:
    """P(bit 0 of two reports of one user holding ``x`` agree): with a memo and fresh."""
    a2, b2 = m.instantaneous_probabilities
    a1, b1 = m.permanent_mechanism.a[0], m.permanent_mechanism.b[0]
    p1 = a1 if x == 0 else b1
    memo = p1 * (a2[0] ** 2 + (1 - a2[0]) ** 2) + (1 - p1) * (b2[0] ** 2 + (1 - b2[0]) ** 2)
    p = m.a[0] if x == 0 else m.b[0]
    return float(memo), float(p**2 + (1 - p) ** 2)


#: Chains whose IRR adds little to the PRR (eps_1 near eps_perm): memoized reports agree far more often
#: than fresh ones.
CLOSE: dict[str, Callable[[], Any]] = {
    "L-GRR": lambda: pldp.LGRR(1.0, 0.8, 5),
    "L-IPRR": lambda: pldp.LIPRR(PERM, pldp.ItemBudgets.from_array(0.8 * PERM.epsilons)),
    "L-OUE": lambda: pldp.LOUE(2.0, 1.5, 5),
    "L-SUE": lambda: pldp.LSUE(2.0, 1.5, 5),
    "L-IDUE": lambda: pldp.LIDUE(PERM, pldp.ItemBudgets.from_array(0.8 * PERM.epsilons)),
}


@pytest.mark.parametrize("name", sorted(CLOSE))
def test_two_reports_of_one_user_share_their_permanent_response(name: str) -> None:
    """Two rounds with a memo: the two reports of each user agree as often as one PRR seen through two
    IRRs makes them (and far from two fresh reports); without the memo they agree as fresh ones do."""
    m = CLOSE[name]()
    n = 40_000
    x = np.zeros(n, dtype=np.int64)
    rng = np.random.default_rng(11)
    first, memo = m.perturb(x, rng, memo=m.memo())
    second, _ = m.perturb(x, rng, memo=memo)
    fresh = m.perturb(x, rng)
    if m.family == "direct":
        memo_p, fresh_p = _agreement_direct(m, 0)
        agree, agree_fresh = np.mean(first == second), np.mean(first == fresh)
    else:
        memo_p, fresh_p = _agreement_unary(m, 0)
        bit = [m.unpack(r)[:, 0] for r in (first, second, fresh)]
        agree, agree_fresh = np.mean(bit[0] == bit[1]), np.mean(bit[0] == bit[2])
    se = math.sqrt(memo_p * (1 - memo_p) / n)
    assert abs(memo_p - fresh_p) > 12 * se  # the test can tell the two apart
    assert abs(agree - memo_p) < 4.5 * se
    assert abs(agree_fresh - fresh_p) < 4.5 * math.sqrt(fresh_p * (1 - fresh_p) / n)


def test_instantaneous_reports_are_the_irr_of_the_permanent_response() -> None:
    m = pldp.LGRR(3.0, 1.0, 4)
    rng = np.random.default_rng(5)
    prr = np.full(50_000, 2)
    reports = m.instantaneous(prr, rng)
    keep, w = m.instantaneous_thresholds
    p_keep = (keep + w[2]) / GRID
    assert abs(np.mean(reports == 2) - p_keep) < 4.5 * math.sqrt(p_keep * (1 - p_keep) / prr.size)
    assert np.array_equal(m.permanent([1, 2], np.random.default_rng(1)), m.permanent([1, 2], np.random.default_rng(1)))


@pytest.mark.parametrize("name", sorted(_all_mechanisms()))
def test_one_draw_rounds_and_two_stage_rounds_have_the_chained_law(name: str) -> None:
    """``perturb`` without a memo (one draw from the chained channel where the grid allows it, L-GRR and
    the 16-bit unary chains) and ``instantaneous(permanent(x))`` (the two stages) both support the user's
    item with probability p* and another item k with probability q*_k, for every item."""
    m = _all_mechanisms()[name]()
    n = 20_000
    x = np.repeat(np.arange(5), n)
    rng = np.random.default_rng(sum(map(ord, name)) + 2)
    p_star, q_star = m.support
    for reports in (m.perturb(x, rng), m.instantaneous(m.permanent(x, rng), rng)):
        hits = reports[:, None] == np.arange(5) if m.family == "direct" else m.unpack(reports)  # supports item k
        own = hits[np.arange(x.size), x].reshape(5, n).mean(axis=1)
        assert np.all(np.abs(own - p_star) < 4.5 * np.sqrt(p_star * (1 - p_star) / n)), (own, p_star)
        other = np.array([hits[x != k, k].mean() for k in range(5)])
        assert np.all(np.abs(other - q_star) <= 4.5 * np.sqrt(q_star * (1 - q_star) / (4 * n))), (other, q_star)


def test_the_fast_paths_are_taken_where_the_grid_allows() -> None:
    assert pldp.LGRR(2.0, 1.0, 5)._equal_weight > 0 and not pldp.LIPRR(PERM, ONE)._equal_weight
    assert pldp.LOUE(2.0, 1.0, 100)._chain_thresholds is not None
