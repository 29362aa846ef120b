"""LLevels: a memoized chain per user-chosen budget level (issue 27 item 1, user-level protocols).

Both claims of every level decided exactly and tight; a wrong instantaneous threshold fails them;
two reports of one user agree as one permanent response through two instantaneous ones (and a
permanent response redrawn each round is caught); the estimators' means, variances and intervals
by seeded Monte Carlo with tolerances from standard errors; a spec refuses the sampler.
"""

from __future__ import annotations

import zlib
from dataclasses import replace

import numpy as np
import pytest

from pldp.channel import DirectIRR, LeveledNode, MemoNode, UnaryIRR, check_claims
from pldp.channel.leveled import MEMO_LEVELS_REFUSAL
from pldp.channel.sampling import GRID
from pldp.deploy import Spec
from pldp.errors import BudgetError, ParameterError, SpecError
from pldp.protocols import RCF, LLevels

PERM = [1.0, 2.0, 4.0]
ONE = [0.5, 1.0, 2.0]
CHAINS = ("lgrr", "losue")


def _rng(text: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(text.encode()))


def _memo_node(proto: LLevels, level: int) -> MemoNode:
    node = proto.sampler().items[level]
    assert isinstance(node, MemoNode)
    return node


@pytest.mark.parametrize("chain", CHAINS)
def test_both_claims_hold_exactly_and_are_tight_per_level(chain: str) -> None:
    proto = LLevels(PERM, ONE, 5, chain=chain)  # type: ignore[arg-type]
    rep = proto.privacy()
    assert rep.holds and len(rep) == 3
    for part, perm, one in zip(rep.values(), PERM, ONE, strict=True):
        # tight: the realised epsilons sit on the budgets (a hair under: the coin grids)
        assert one - 1e-3 < part.ldp_epsilon <= one + 1e-9  # type: ignore[attr-defined]
        assert perm - 1e-3 < part.permanent_epsilon <= perm + 1e-9  # type: ignore[attr-defined]
    assert rep.ldp_epsilon == pytest.approx(max(ONE), abs=1e-3)
    node = proto.sampler()
    assert node.memoized and node.level_report == "clear" and node.levels == tuple(ONE)
    rows, total = node.claims()
    assert all(r.holds for r in rows) and total == max(ONE)
    assert check_claims(node).holds
    for level, (perm, one) in enumerate(zip(PERM, ONE, strict=True)):
        mine = [r for r in rows if f"level {level} " in r.part]
        permanent = [r for r in mine if "permanent" in r.part]
        single = [r for r in mine if "one report" in r.part]
        assert permanent and single and len(permanent) + len(single) == len(mine)
        assert max(r.realised for r in permanent) == pytest.approx(perm, abs=1e-3)
        assert max(r.realised for r in single) == pytest.approx(one, abs=1e-3)


@pytest.mark.parametrize("chain", CHAINS)
def test_a_wrong_instantaneous_threshold_fails_the_one_report_claim(chain: str) -> None:
    """Move the IRR of level 1 towards the identity by a few grid steps: its one-report claim (tight)
    fails exactly, only at that level, and the permanent claims still hold."""
    proto = LLevels(PERM, ONE, 5, chain=chain)  # type: ignore[arg-type]
    node = proto.sampler()
    item = _memo_node(proto, 1)
    irr = item.instantaneous
    bad: DirectIRR | UnaryIRR
    if isinstance(irr, DirectIRR):
        step = 1 << 12
        bad = DirectIRR(irr.keep + step * len(irr.weights), tuple(w - step for w in irr.weights))
    else:
        step = 1 << 20
        bad = UnaryIRR(tuple(min(a + step, GRID - 1) for a in irr.a), tuple(max(b - step, 1) for b in irr.b))
    broken = replace(node, items=(node.items[0], replace(item, instantaneous=bad), node.items[2]))
    rows, _ = broken.claims()
    failing = [r for r in rows if not r.holds]
    assert failing and all("level 1 " in r.part and "one report" in r.part for r in failing)
    assert not check_claims(broken).holds
    assert all(r.holds for r in rows if "permanent" in r.part)


def _agreement(proto: LLevels, level: int, reports: tuple[np.ndarray, np.ndarray], x: int) -> np.ndarray:
    """Per user, whether her two reports agree (direct: the item; unary: her value's bit)."""
    a, b = reports
    if proto.chain == "lgrr":
        return np.asarray(a == b)
    bits = [np.unpackbits(r, axis=1, count=proto.d)[:, x] for r in (a, b)]
    return np.asarray(bits[0] == bits[1])


def _expected_agreement(node: MemoNode, x: int, memoized: bool) -> float:
    """Pr(two reports of value ``x`` agree), exactly from the thresholds: one permanent response
    through two instantaneous ones (memoized), or two independent one-report draws (fresh)."""
    perm, irr = node.permanent, node.instantaneous
    if isinstance(irr, DirectIRR):
        d = node.d
        p1 = (np.asarray(perm.weights, float) + perm.keep * np.eye(d)[x]) / GRID  # type: ignore[union-attr]
        p2 = (np.asarray(irr.weights, float)[None, :] + irr.keep * np.eye(d)) / GRID
        if memoized:
            return float(p1 @ (p2**2).sum(axis=1))
        chained = p1 @ p2
        return float((chained**2).sum())
    a1 = perm.a[x] / GRID  # type: ignore[union-attr]
    a2, b2 = irr.a[x] / GRID, irr.b[x] / GRID
    if memoized:
        return a1 * (a2**2 + (1 - a2) ** 2) + (1 - a1) * (b2**2 + (1 - b2) ** 2)
    p = a1 * a2 + (1 - a1) * b2
    return p**2 + (1 - p) ** 2


def _agrees_as_one_permanent_response(agree: np.ndarray, expected: float) -> bool:
    """The seeded test: the agreement rate within 4.5 standard errors of one permanent response's."""
    se = np.sqrt(expected * (1 - expected) / agree.size)
    return bool(abs(agree.mean() - expected) <= 4.5 * se)


@pytest.mark.parametrize("chain", CHAINS)
def test_two_reports_of_one_user_agree_as_one_permanent_response(chain: str) -> None:
    proto = LLevels(PERM, ONE, 5, chain=chain)  # type: ignore[arg-type]
    rng = _rng(f"agree-{chain}")
    n, x, level = 20_000, 1, 2
    items, levels = np.full(n, x), np.full(n, level)
    memo = proto.memo()
    first, memo = proto.perturb(items, levels, rng, memo=memo)
    second, memo_after = proto.perturb(items, levels, rng, memo=memo)
    assert [len(m) for m in memo] == [0, 0, n] and [len(m) for m in memo_after] == [0, 0, n]
    node = _memo_node(proto, level)
    memoized = _expected_agreement(node, x, memoized=True)
    fresh = _expected_agreement(node, x, memoized=False)
    assert memoized - fresh > 0.03  # the test has power: 4.5 standard errors are 0.016 at n = 20 000
    agree = _agreement(proto, level, (first.data[level], second.data[level]), x)
    assert _agrees_as_one_permanent_response(agree, memoized)
    # a permanent response redrawn each round (no memo) fails the same test, and agrees as fresh draws
    redrawn = _agreement(
        proto, level, (proto.perturb(items, levels, rng).data[level], proto.perturb(items, levels, rng).data[level]), x
    )
    assert not _agrees_as_one_permanent_response(redrawn, memoized)
    assert _agrees_as_one_permanent_response(redrawn, fresh)


def test_the_memo_is_kept_per_level_and_per_value() -> None:
    proto = LLevels(PERM, ONE, 4)
    rng = _rng("memo-keys")
    memo = proto.memo()
    _, memo = proto.perturb([0, 1, 2], [0, 1, 1], rng, memo=memo, users=[7, 8, 9])
    assert [len(m) for m in memo] == [1, 2, 0]
    again, same = proto.perturb([0, 1, 2], [0, 1, 1], rng, memo=memo, users=[7, 8, 9])
    assert [len(m) for m in same] == [1, 2, 0] and all(
        np.array_equal(a.keys, b.keys) for a, b in zip(memo, same, strict=True)
    )
    # user 8 changes her value: a new permanent response; user 7 moves to level 2: one there too
    _, grown = proto.perturb([0, 3], [2, 1], rng, memo=same, users=[7, 8])
    assert [len(m) for m in grown] == [1, 3, 1]
    assert proto.tally(again).n == 3 and again.level.tolist() == [0, 1, 1]


def test_bad_memos_and_budgets_are_refused() -> None:
    proto = LLevels(PERM, ONE, 4)
    with pytest.raises(ParameterError, match="fingerprint"):
        proto.perturb([0, 1], [0, 1], _rng("x"), memo=proto.memo()[::-1])
    with pytest.raises(ParameterError, match="one per level"):
        proto.perturb([0, 1], [0, 1], _rng("x"), memo=proto.memo()[:2])
    with pytest.raises(ParameterError, match="memo"):
        proto.perturb([0, 1], [0, 1], _rng("x"), users=[3, 4])
    with pytest.raises(BudgetError, match="level 1"):
        LLevels([1.0, 2.0], [0.5, 2.0], 4)
    with pytest.raises(ParameterError, match="chain"):
        LLevels(PERM, ONE, 4, chain="rappor")  # type: ignore[arg-type]


def test_one_report_node_is_each_levels_chained_channel() -> None:
    proto = LLevels(PERM, ONE, 5, chain="losue")
    one = proto.sampler().one_report()
    assert isinstance(one, LeveledNode) and not one.memoized
    for item, chain in zip(one.items, proto.chains, strict=True):
        assert item.kind == "unary"
        assert np.allclose(np.asarray(item.a) / GRID, chain.a, atol=2**-32)  # type: ignore[union-attr]
    # the same shape as RCF's node over OUE at eps_1: one report of a level is OUE at eps_1
    assert [c.kind for c in one.columns()] == [c.kind for c in RCF(ONE, 5, oracle="oue").sampler().columns()]


def test_a_spec_refuses_the_memoized_leveled_sampler() -> None:
    proto = LLevels(PERM, ONE, 4)
    with pytest.raises(SpecError, match="memoized leveled sampler cannot be deployed yet") as info:
        Spec.from_mechanism(proto, question="Which one?")
    assert MEMO_LEVELS_REFUSAL in str(info.value)


# ------------------------------------------------------------------------------- estimators
P = np.array([0.4, 0.25, 0.15, 0.1, 0.1])
LEVEL_USERS = np.array([3000, 4000, 5000])
REPEATS = 300


def _monte_carlo(chain: str, methods: tuple[str, ...], repeats: int) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Estimates of ``repeats`` i.i.d. populations (users from ``P`` at every level), and the share of
    the 95 % intervals (of every item and repeat) that cover ``P``, per method."""
    proto = LLevels(PERM, ONE, 5, chain=chain)  # type: ignore[arg-type]
    rng = _rng(f"estimators-{chain}-{'-'.join(methods)}")
    est = {m: np.empty((repeats, 5)) for m in methods}
    covered = dict.fromkeys(methods, 0)
    for r in range(repeats):
        tally = proto.simulate(np.stack([rng.multinomial(n, P) for n in LEVEL_USERS]), rng)
        for method in methods:
            e = proto.estimate(tally, method)
            est[method][r] = e.frequencies
            lo, hi = e.ci(0.95)
            covered[method] += int(np.sum((lo <= P) & (P <= hi)))
    return est, {m: hits / (repeats * 5) for m, hits in covered.items()}


def _mean_within(est: np.ndarray, z: float = 4.5) -> bool:
    se = est.std(axis=0, ddof=1) / np.sqrt(est.shape[0])
    return bool(np.all(np.abs(est.mean(axis=0) - P) <= z * se))


@pytest.mark.parametrize("chain", CHAINS)
def test_unbiased_and_norm_sub_by_seeded_monte_carlo(chain: str) -> None:
    """The unbiased estimate's mean within 4.5 standard errors of ``P``; its Monte Carlo variance
    within 4.5 standard errors of the closed form (``expected_variance``); its 95 % intervals cover
    92-98 %; Norm-Sub (the Euclidean projection onto the simplex) is never farther from ``P`` than
    the estimate it projects."""
    est, coverage = _monte_carlo(chain, ("unbiased", "norm_sub"), REPEATS)
    unbiased = est["unbiased"]
    assert _mean_within(unbiased)
    closed = LLevels(PERM, ONE, 5, chain=chain).expected_variance(P, LEVEL_USERS)  # type: ignore[arg-type]
    ratio = unbiased.var(axis=0, ddof=1) / closed
    assert np.all(np.abs(ratio - 1) <= 4.5 * np.sqrt(2 / (REPEATS - 1)))
    assert 0.92 <= coverage["unbiased"] <= 0.98, coverage
    dist = {m: np.linalg.norm(est[m] - P, axis=1) for m in est}
    assert np.all(dist["norm_sub"] <= dist["unbiased"] + 1e-12)
    assert np.allclose(est["norm_sub"].sum(axis=1), 1) and np.all(est["norm_sub"] >= 0)


@pytest.mark.slow
@pytest.mark.parametrize("chain", CHAINS)
def test_mle_by_seeded_monte_carlo(chain: str) -> None:
    """The joint MLE over the levels (0.1 s a tally): mean within 4.5 standard errors of ``P``, and
    its 95 % intervals (``joint_mle_variance``) cover 92-98 %."""
    est, coverage = _monte_carlo(chain, ("mle",), 200)
    assert _mean_within(est["mle"])
    assert 0.92 <= coverage["mle"] <= 0.98, coverage


def test_a_memoized_round_has_the_law_of_a_fresh_one() -> None:
    """Round two of a memo (every user's permanent response from round one) tallies as ``simulate``
    does: each level's mean support count within 4.5 standard errors of its expectation."""
    proto = LLevels(PERM, ONE, 5)
    rng = _rng("round-two")
    cells = np.array([[300, 200, 100, 50, 50], [250, 150, 100, 100, 50], [200, 200, 100, 100, 100]])
    items = np.concatenate([np.repeat(np.arange(5), row) for row in cells])
    levels = np.repeat(np.arange(3), cells.sum(axis=1))
    counts = []
    for _ in range(200):
        memo = proto.memo()
        _, memo = proto.perturb(items, levels, rng, memo=memo)
        second, _ = proto.perturb(items, levels, rng, memo=memo)
        counts.append(np.stack([t.counts for t in proto.tally(second).tallies]))
    c = np.array(counts, dtype=float)
    for level, chain in enumerate(proto.chains):
        p_star, q_star = chain.support
        n = cells[level].sum()
        expected = q_star * n + (p_star - q_star) * cells[level]
        se = c[:, level].std(axis=0, ddof=1) / np.sqrt(len(counts))
        assert np.all(np.abs(c[:, level].mean(axis=0) - expected) <= 4.5 * se)


def test_the_audit_reads_one_report_of_each_level_off_the_memoized_node() -> None:
    """Audited as it is (no one-report substitution): every pair's claim is its level's eps_1, and
    no audited epsilon exceeds it."""
    from pldp.audit import audit
    from pldp.audit.targets import OracleTarget

    proto = LLevels(PERM, ONE, 5, chain="losue")
    target = OracleTarget(proto)
    assert target.node.memoized
    res = audit(target, trials=5000, rng=_rng("audit"))
    assert res.ok and len(res.rows) == 3 * 5 * 4
    assert sorted({row.claimed for row in res.rows}) == ONE
