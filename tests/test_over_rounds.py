"""The whole-history privacy of memoized chains (:func:`pldp.privacy.over_rounds`, :func:`pldp.privacy.pair_loss`).

The references are an independent brute force (every pair of histories, every report sequence, the
PRR and IRR written out over whole memo states, bit vectors for unary chains) and the numbers of the
brief for L-GRR over two items at eps_inf = 2, eps_1 = 1, computed independently and known to two
decimals (or one): those checks allow the rounding of the last printed decimal plus 1e-3.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import pldp
from pldp.errors import ParameterError
from pldp.mechanisms.longitudinal import LongitudinalUnary
from pldp.privacy import RoundsPrivacy, over_rounds, pair_loss

GRID = 1 << 32
B = pldp.ItemBudgets.from_array


def lgrr2() -> pldp.LGRR:
    return pldp.LGRR(2.0, 1.0, 2)


def unary_per_item(d: int = 3) -> LongitudinalUnary:
    """A unary chain whose items differ (an IRR of its own per bit): no relabelling applies."""
    prr = pldp.OUE(2.0, d)
    a2, b2 = np.linspace(0.9, 0.7, d), np.linspace(0.2, 0.3, d)
    return LongitudinalUnary(prr, a2, b2, pldp.ItemBudgets.uniform(2.0, prr.domain))


# ----------------------------------------------------------------------------- the brute force
def matrices(mech: object, exact: bool = False) -> tuple[list[list[object]], list[list[object]]]:
    """PRR[v][x] and IRR[x][y] from the sampler's integer thresholds; memo states and reports are items
    (direct) or bit vectors (unary). Fractions when ``exact``."""
    node = mech.sampler()  # type: ignore[attr-defined]
    prr, irr, d = node.permanent, node.instantaneous, node.d

    def num(k: int) -> object:
        return Fraction(k, GRID) if exact else k / GRID

    if hasattr(prr, "keep"):
        P = [[num(prr.weights[x] + (prr.keep if x == v else 0)) for x in range(d)] for v in range(d)]
        Q = [[num(irr.weights[y] + (irr.keep if y == x else 0)) for y in range(d)] for x in range(d)]
        return P, Q
    states = list(itertools.product((0, 1), repeat=d))

    def bit(p: object, on: int) -> object:
        return p if on else 1 - p  # type: ignore[operator]

    def prr_bit(v: int, k: int) -> int:  # the PRR sets bit k of value v w.p. a[k] if k == v, else b[k]
        return prr.a[k] if k == v else prr.b[k]

    def irr_bit(x: tuple[int, ...], k: int) -> int:  # the IRR keeps a set bit w.p. a[k], raises a clear one w.p. b[k]
        return irr.a[k] if x[k] else irr.b[k]

    P = [[math.prod(bit(num(prr_bit(v, k)), x[k]) for k in range(d)) for x in states] for v in range(d)]
    Q = [[math.prod(bit(num(irr_bit(x, k)), y[k]) for k in range(d)) for y in states] for x in states]
    return P, Q


def likelihood(P: list[list[object]], Q: list[list[object]], y: tuple[int, ...], h: tuple[int, ...]) -> object:
    """P(y | h): a memo per distinct value, drawn once, every round's report from its value's memo."""
    total: object = 1
    for v in set(h):
        rounds = [t for t in range(len(h)) if h[t] == v]
        total *= sum(P[v][x] * math.prod(Q[x][y[t]] for t in rounds) for x in range(len(Q)))  # type: ignore[operator]
    return total


class Brute:
    """Every history of ``r`` rounds and its likelihood of every report sequence."""

    def __init__(self, mech: object, r: int, exact: bool = False) -> None:
        P, Q = matrices(mech, exact)
        self.histories = list(itertools.product(range(len(P)), repeat=r))
        outputs = list(itertools.product(range(len(Q[0])), repeat=r))
        self.lik = {h: [likelihood(P, Q, y, h) for y in outputs] for h in self.histories}

    def loss(self, h: tuple[int, ...], g: tuple[int, ...]) -> float:
        """max_y ln P(y | h) / P(y | h') (one direction)."""
        return max(math.log(a / b) for a, b in zip(self.lik[h], self.lik[g], strict=True))  # type: ignore[operator]

    def worst(self, same_pattern: bool = False) -> float:
        def pattern(h: tuple[int, ...]) -> tuple[int, ...]:
            return tuple(h.index(v) for v in h)

        return max(
            self.loss(h, g)
            for h in self.histories
            for g in self.histories
            if not same_pattern or pattern(h) == pattern(g)
        )


# ----------------------------------------------------------------------------- the brief's numbers
#: L-GRR, k = 2, eps_inf = 2, eps_1 = 1: the whole-history loss over all pairs, to two decimals.
BRIEF = {1: 1.00, 2: 2.00, 3: 2.64, 4: 3.36, 5: 4.02, 6: 4.75, 7: 5.42, 8: 6.16}
#: Known to two decimals: off by at most half the last decimal, plus the required 1e-3.
TWO_DECIMALS = 5e-3 + 1e-3


@pytest.mark.parametrize("r", sorted(BRIEF))
def test_lgrr_whole_history_matches_the_independent_numbers(r: int) -> None:
    rep = over_rounds(lgrr2(), r)
    assert rep.exact and rep.rounds == r
    assert abs(rep.epsilon - BRIEF[r]) < TWO_DECIMALS
    assert rep.fresh_epsilon == pytest.approx(r * rep.one_report_epsilon)


def test_one_value_against_a_change_halfway_grows_without_limit() -> None:
    m = lgrr2()
    # 20.9 and 70.1 are known to one decimal: half of it plus 1e-3
    assert abs(pair_loss(m, [0] * 30, [0] * 15 + [1] * 15) - 20.9) < 0.05 + 1e-3
    assert abs(pair_loss(m, [0] * 100, [0] * 50 + [1] * 50) - 70.1) < 0.05 + 1e-3
    assert over_rounds(m, 100, max_exact=0).bound >= 70.1  # the bound holds for that pair too


def test_one_unchanged_value_stays_within_eps_inf() -> None:
    m = lgrr2()
    assert abs(pair_loss(m, [0, 0], [1, 1]) - 1.64) < TWO_DECIMALS
    assert abs(pair_loss(m, [0] * 30, [1] * 30) - 2.00) < TWO_DECIMALS
    for r, expected in ((2, 1.64), (30, 2.00)):
        rep = over_rounds(m, r)
        assert abs(rep.unchanged_epsilon - expected) < TWO_DECIMALS
        assert rep.unchanged_epsilon <= rep.permanent_epsilon + 1e-12
        # two values that swap: one eps_1 each at r = 2; still at most eps_inf per distinct value
        assert rep.unchanged_epsilon <= rep.same_pattern_epsilon <= 2 * rep.permanent_epsilon + 1e-12
    assert over_rounds(m, 2).same_pattern_epsilon == pytest.approx(2 * over_rounds(m, 1).epsilon, abs=1e-12)


def test_one_report_is_eps_1() -> None:
    for m in (lgrr2(), pldp.LGRR(2.0, 1.0, 5), pldp.LOSUE(2.0, 1.0, 3)):
        rep = over_rounds(m, 1)
        assert rep.epsilon == pytest.approx(rep.one_report_epsilon, abs=1e-12)
        assert rep.epsilon == pytest.approx(m.privacy().ldp_epsilon, abs=1e-12)
        assert rep.epsilon == pytest.approx(1.0, abs=1e-4)  # eps_1 on the sampler's grid
        assert rep.bound == pytest.approx(rep.epsilon, abs=1e-12)


# ----------------------------------------------------------------------------- against the brute force
MECHANISMS = {
    "L-GRR k=2": (lgrr2, 4),
    "L-GRR k=3": (lambda: pldp.LGRR(2.0, 1.0, 3), 3),
    "L-GRR eps=(3, .5)": (lambda: pldp.LGRR(3.0, 0.5, 2), 4),
    "L-IPRR d=3": (lambda: pldp.LIPRR(B([1.0, 2.0, 4.0]), B([0.25, 0.5, 1.0])), 3),
    "L-OUE d=2": (lambda: pldp.LOUE(2.0, 1.0, 2), 3),
    "L-OSUE d=3": (lambda: pldp.LOSUE(2.0, 1.0, 3), 2),
    "unary per item d=3": (unary_per_item, 2),
}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_exact_search_agrees_with_the_brute_force(name: str) -> None:
    make, top = MECHANISMS[name]
    m = make()
    for r in range(1, top + 1):
        brute = Brute(m, r)
        rep = over_rounds(m, r)
        assert rep.exact
        assert rep.epsilon == pytest.approx(brute.worst(), abs=1e-9)
        assert rep.lower == rep.epsilon
        h, g = rep.worst_pair  # type: ignore[misc]
        assert brute.loss(h, g) == pytest.approx(rep.epsilon, abs=1e-9)  # the pair attains it, in this direction
        assert rep.same_pattern_epsilon == pytest.approx(brute.worst(same_pattern=True), abs=1e-9)
        sh, sg = rep.same_pattern_pair  # type: ignore[misc]
        assert brute.loss(sh, sg) == pytest.approx(rep.same_pattern_epsilon, abs=1e-9)
        assert rep.bound >= rep.epsilon - 1e-12


def test_exact_arithmetic_brute_force_agrees() -> None:
    """Fractions over the 2**-32 grid, a log taken at the very end."""
    for r in (1, 2, 3):
        brute = Brute(lgrr2(), r, exact=True)
        assert over_rounds(lgrr2(), r).epsilon == pytest.approx(brute.worst(), abs=1e-12)


def test_pair_loss_agrees_with_the_brute_force_both_ways() -> None:
    m = pldp.LIPRR(B([1.0, 2.0, 4.0]), B([0.25, 0.5, 1.0]))
    brute = Brute(m, 3)
    for h, g in (((0, 0, 1), (2, 1, 1)), ((0, 1, 2), (0, 0, 0)), ((2, 2, 2), (0, 0, 0))):
        assert pair_loss(m, h, g) == pytest.approx(max(brute.loss(h, g), brute.loss(g, h)), abs=1e-9)
        assert pair_loss(m, np.array(g), list(h)) == pytest.approx(pair_loss(m, h, g), abs=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda: pldp.LIPRR(B([1.0, 2.0, 4.0]), B([0.25, 0.5, 1.0])),
        lambda: pldp.LOUE(2.0, 1.0, 3),
        lambda: pldp.LGRR(2.0, 1.0, 4),
        unary_per_item,
    ],
)
def test_closed_forms_of_one_block_agree_with_the_enumeration(make: object) -> None:
    m = make()  # type: ignore[operator]
    for n in (1, 3, 12):
        rep = over_rounds(m, n, max_exact=0)
        worst = max(pair_loss(m, [v] * n, [w] * n) for v, w in itertools.permutations(range(m.d), 2))
        assert rep.unchanged_epsilon == pytest.approx(worst, abs=1e-9)
        assert pair_loss(m, *rep.same_pattern_pair) == pytest.approx(rep.same_pattern_epsilon, abs=1e-9)


# ----------------------------------------------------------------------------- bound, monotonicity, large r
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_the_bound_is_never_below_the_exact_value(name: str) -> None:
    m = MECHANISMS[name][0]()
    for r in range(1, 6 if m.d == 2 else 4):
        rep = over_rounds(m, r)
        assert rep.exact and rep.bound >= rep.epsilon - 1e-12, (r, rep.summary())


def test_losses_do_not_decrease_with_rounds() -> None:
    reps = [over_rounds(lgrr2(), r) for r in range(1, 13)]
    for a, b in itertools.pairwise(reps):
        assert b.epsilon >= a.epsilon - 1e-12
        assert b.same_pattern_epsilon >= a.same_pattern_epsilon - 1e-12
        assert b.unchanged_epsilon >= a.unchanged_epsilon - 1e-12
        assert b.bound >= a.bound
    assert reps[-1].epsilon > reps[-1].same_pattern_epsilon + 4  # a change leaks more than the values


def test_beyond_the_exact_search_the_bound_and_a_pair_bracket_the_loss() -> None:
    m = lgrr2()
    rep = over_rounds(m, 60)
    assert not rep.exact and rep.epsilon == rep.bound
    assert rep.worst_pair is not None and pair_loss(m, *rep.worst_pair) == pytest.approx(rep.lower, abs=1e-9)
    assert rep.same_pattern_epsilon <= rep.lower <= rep.bound
    assert rep.bound - rep.lower < 0.1 * 60  # both grow like r eps_IRR / 2 here
    forced = over_rounds(m, 8, max_exact=0)  # the bound at a size the search covers
    assert not forced.exact and forced.epsilon >= over_rounds(m, 8).epsilon


def test_large_domains_run_on_the_bound() -> None:
    rep = over_rounds(pldp.LOSUE(2.0, 1.0, 50), 20)
    assert not rep.exact and rep.lower > rep.fresh_epsilon  # 50 bits link the reports of one memo
    assert rep.unchanged_epsilon <= rep.permanent_epsilon + 1e-12
    assert isinstance(rep, RoundsPrivacy) and "20 reports" in rep.summary()


def test_many_unlike_unary_items_bound_the_same_pattern_loss() -> None:
    m = unary_per_item(8)  # more than six items that differ: the matching of values is relaxed
    rep = over_rounds(m, 3)
    assert not rep.same_pattern_exact and rep.same_pattern_pair is None
    for h in ((0, 1, 2), (5, 5, 7), (3, 3, 3)):
        for g in ((1, 2, 3), (6, 6, 0), (7, 7, 7)):
            same = [a == b for a in h for b in h] == [a == b for a in g for b in g]
            if same:
                assert pair_loss(m, h, g) <= rep.same_pattern_epsilon + 1e-12
    assert rep.unchanged_epsilon <= rep.same_pattern_epsilon and rep.lower <= rep.bound


def test_a_non_sensitive_item_makes_the_losses_infinite() -> None:
    m = pldp.LIPRR(B([1.0, 2.0, np.inf]), B([0.5, 1.0, np.inf]))
    assert over_rounds(m, 2).epsilon == math.inf
    assert math.isfinite(pair_loss(m, [0, 0], [1, 1]))


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("oracle", [pldp.KRR(1.0, 3), pldp.OUE(1.0, 4), object()])
def test_a_mechanism_without_a_memo_is_refused(oracle: object) -> None:
    with pytest.raises(ParameterError, match="memoized chain"):
        over_rounds(oracle, 3)


@pytest.mark.parametrize("rounds", [0, -1, 2.5, True, "3"])
def test_bad_rounds_are_refused(rounds: object) -> None:
    with pytest.raises(ParameterError, match="rounds"):
        over_rounds(lgrr2(), rounds)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("h", "g", "match"),
    [([0, 1], [0], "same length"), ([0, 2], [0, 1], r"\[0, 2\)"), ([], [], "non-empty"), ([0.5], [1], "item indices")],
)
def test_bad_histories_are_refused(h: list[object], g: list[object], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        pair_loss(lgrr2(), h, g)


def test_a_pair_too_large_for_max_exact_is_refused() -> None:
    with pytest.raises(ParameterError, match="max_exact"):
        pair_loss(lgrr2(), [0] * 100, [0] * 50 + [1] * 50, max_exact=100)
    with pytest.raises(ParameterError, match="max_exact"):
        over_rounds(lgrr2(), 3, max_exact=-1)
