"""Padding-and-sampling for item-sets (IDUE-PS, OUE-PS, RAPPOR-PS)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import pldp
from pldp.itemsets import ItemSets
from pldp.mechanisms.unary import UnaryEncoding
from pldp.protocols import PaddingSampling, propose_ell
from tests.tolerances import FLOAT_RTOL

K = 4.0  # Monte Carlo checks: a mean may lie K standard errors from its expectation
ALPHA = 1e-3  # goodness-of-fit and two-sample tests reject below this p-value


def _sets(rng: np.random.Generator, n: int, d: int, max_size: int) -> ItemSets:
    sizes = rng.integers(0, max_size + 1, size=n)
    weights = 1.0 / np.arange(1, d + 1)
    rows = [rng.choice(d, size=s, replace=False, p=weights / weights.sum()) for s in sizes]
    return ItemSets.from_lists(rows, d)


def _idue_like() -> UnaryEncoding:
    """Three levels with RAPPOR-structured (a, b): tau = (0.4, 0.55, 0.6) satisfies
    tau_i + tau_j <= min(eps_i, eps_j) for eps = (1.0, 1.2, 2.0), levels of sizes 1, 1, 3."""
    tau = np.array([0.4, 0.55, 0.6, 0.6, 0.6])
    a = 1 / (1 + np.exp(-tau))
    return UnaryEncoding(a, 1 - a, pldp.ItemBudgets.from_array([1.0, 1.2, 2.0, 2.0, 2.0]), pair_rule="min")


def test_itemsets_from_lists() -> None:
    dom = pldp.Domain(["a", "b", "c"])
    s = ItemSets.from_lists([["a", "c"], [], ["b", "b"], ["c"]], dom)
    assert s.n == 4 and s.sizes.tolist() == [2, 0, 1, 1]
    assert s.item_counts().tolist() == [1, 1, 2]
    assert s.first_items().tolist() == [0, 1, 2]
    with pytest.raises(pldp.DomainError, match="zz"):
        ItemSets.from_lists([["zz"]], dom)


def test_sampling_follows_algorithm_1() -> None:
    """Each padded set's sampled outputs fit Algorithm 1's distribution (chi-square GOF, not
    rejected at ALPHA); power check: a distribution one percentage point off is rejected."""
    ps = PaddingSampling(pldp.OUE(1.0, 6), ell=3)
    rng = np.random.default_rng(0)
    for itemset in ([], [2], [0, 4], [1, 2, 3], [0, 1, 2, 3, 5]):
        sets = ItemSets.from_lists([itemset] * 60_000, 6)
        obs = np.bincount(ps.sample(sets, rng), minlength=9)
        w = ps.sampling_distribution(itemset)
        # written out: real items 1/max(s, ell), dummies (1 - s/max(s, ell)) / ell
        s = len(itemset)
        by_hand = np.zeros(9)
        by_hand[list(itemset)] = 1 / max(s, 3)
        by_hand[6:] = (1 - s / max(s, 3)) / 3
        np.testing.assert_allclose(w, by_hand)
        assert obs[w == 0].sum() == 0
        assert stats.chisquare(obs[w > 0], 60_000 * w[w > 0]).pvalue > ALPHA
        # power: moving one percentage point between two possible outputs is rejected (5 SE per cell)
        wrong = w.copy()
        first, last = np.flatnonzero(w > 0)[[0, -1]]
        wrong[first], wrong[last] = wrong[first] - 0.01, wrong[last] + 0.01
        assert stats.chisquare(obs[w > 0], 60_000 * wrong[w > 0]).pvalue < ALPHA * 1e-3


@pytest.mark.parametrize("make", [lambda: pldp.OUE(1.5, 8), lambda: pldp.RAPPOR(1.5, 8)], ids=["oue", "rappor"])
def test_unbiased_when_no_set_exceeds_ell(make) -> None:
    rng = np.random.default_rng(1)
    sets = _sets(rng, 4000, 8, max_size=3)
    ps = PaddingSampling(make(), ell=3)
    truth = sets.item_counts() / sets.n
    np.testing.assert_allclose(ps.expected_estimate(sets), truth, atol=1e-12)
    est = np.array([pldp.estimate(ps, ps.simulate(sets, rng)).frequencies for _ in range(2000)])
    assert est.shape == (2000, 8)  # dummy items are never reported
    se = est.std(axis=0, ddof=1) / math.sqrt(est.shape[0])
    assert np.all(np.abs(est.mean(axis=0) - truth) < K * se)


def test_truncation_bias_matches_its_expectation() -> None:
    rng = np.random.default_rng(2)
    sets = _sets(rng, 4000, 8, max_size=6)
    ps = PaddingSampling(pldp.OUE(2.0, 8), ell=2)
    truth = sets.item_counts() / sets.n
    expected = ps.expected_estimate(sets)
    assert np.all(expected <= truth + 1e-12) and np.any(expected < truth - 0.02)
    est = np.array([pldp.estimate(ps, ps.simulate(sets, rng)).frequencies for _ in range(2000)])
    se = est.std(axis=0, ddof=1) / math.sqrt(est.shape[0])
    assert np.all(np.abs(est.mean(axis=0) - expected) < K * se)
    assert np.any(np.abs(est.mean(axis=0) - truth) > 10 * se)  # power: the bias is real and detected


def test_per_user_path_and_simulate_agree() -> None:
    """Every count of the tally has the same law on both paths (two-sample KS, not rejected at
    ALPHA / 7); power check: the simulation at budget 1.3 instead of 1.0 is rejected."""
    rng = np.random.default_rng(3)
    sets = _sets(rng, 300, 5, max_size=4)
    ps = PaddingSampling(pldp.OUE(1.0, 5), ell=2)
    a = np.array([ps.tally(ps.perturb(sets, rng)).counts for _ in range(3000)])
    b = np.array([ps.simulate(sets, rng).counts for _ in range(3000)])
    other = PaddingSampling(pldp.OUE(1.3, 5), ell=2)
    c = np.array([other.simulate(sets, rng).counts for _ in range(3000)])
    for k in range(7):
        assert stats.ks_2samp(a[:, k], b[:, k]).pvalue > ALPHA / 7  # Bonferroni over the 7 counts
    assert min(stats.ks_2samp(a[:, k], c[:, k]).pvalue for k in range(7)) < ALPHA * 1e-3  # power


@pytest.mark.parametrize("ell", [1, 2, 3])
@pytest.mark.parametrize(
    "base",
    [
        lambda: pldp.OUE(1.0, 5),
        lambda: pldp.RAPPOR(0.7, 6),
        lambda: _idue_like(),
        lambda: pldp.IDUE(pldp.ItemBudgets.from_array([0.5, 0.6, 1.0, 1.0, 1.0, 1.0]), model="opt0"),
        lambda: pldp.IDUE(
            pldp.ItemBudgets.from_array([1.0, 2.0, 2.0, 4.0, 4.0]), model="opt1", pair_rule="avg", same_level="always"
        ),
    ],
    ids=["oue", "rappor", "idue-like", "idue-opt0", "idue-opt1-avg"],
)
def test_theorem4_exactly_on_small_universes(base, ell: int) -> None:
    mech = base()
    assert mech.privacy().holds
    rep = PaddingSampling(mech, ell).verify_privacy()
    assert rep.holds, rep.slack
    assert rep.bound_holds
    assert len(rep.subsets) == 2**mech.d


def test_itemset_budget_eq15() -> None:
    mech = UnaryEncoding([0.55] * 4, [0.45] * 4, pldp.ItemBudgets.from_array([0.5, 1.0, 2.0, 2.0]), pair_rule="min")
    ps = PaddingSampling(mech, ell=3)
    assert ps.epsilon_star == 0.5
    # |x| = 2 < ell: eta = 2/3
    by_hand = math.log(2 / 3 * (math.exp(1.0) + math.exp(2.0)) / 2 + 1 / 3 * math.exp(0.5))
    assert ps.itemset_epsilon([1, 2]) == pytest.approx(by_hand, rel=FLOAT_RTOL)
    assert ps.itemset_epsilon([]) == 0.5


def test_propose_ell() -> None:
    assert propose_ell([1, 1, 2, 2, 2, 3, 3, 4, 9, 10]) == 10  # 90th percentile 9.1, rounded up
    assert propose_ell(np.ones(100)) == 1
    sizes = np.arange(1, 101)
    assert propose_ell(sizes) == math.ceil(np.percentile(sizes, 90))
    with pytest.raises(pldp.ParameterError):
        propose_ell([])


def test_dummies_need_the_same_level_constraint() -> None:
    """ERRATA IDUE-3 drops (i, i) for single-item levels; padding adds dummies to the
    smallest-budget level, so there it is needed again: PS refuses a base that lacks it."""
    budgets = pldp.ItemBudgets.from_array([1.0, 2.0, 2.0, 4.0, 4.0])
    base = pldp.IDUE(budgets, model="opt1", pair_rule="avg")  # level eps = 1 holds a single item
    with pytest.raises(pldp.BudgetError, match="same_level"):
        PaddingSampling(base, ell=2)


def test_from_lists_in_one_encoding_reads_and_refuses_what_the_per_set_encoding_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ItemSets.from_lists: the same sets, or the same error, with and without the whole-batch path."""
    import pldp.itemsets as itemsets_module

    labels = pldp.Domain(["a", "b", ("t", 1), 7, "e"])
    rng = np.random.default_rng(311)
    cases: list[tuple[list, object]] = [
        ([], 4),
        ([[]], 4),
        ([[3, 1, 3], [], [0], (2, 1)], 4),
        ([[np.int64(2), 1.0], {0, 3}], 4),
        ([[4]], 4),
        ([[-1]], 4),
        ([["a"]], 4),
        ([[[0, 1]]], 4),  # a list inside a set
        ([[0], [[1, 2]]], 4),
        ([["b", "a", "b"], [("t", 1), 7], []], labels),
        ([["a"], ["z"], ["y"]], labels),
        ([["a", 7], [7, "e"]], labels),
        ([[{"a"}]], labels),
        ("ab", labels),
        ([list(rng.integers(0, 9, size=int(rng.integers(0, 7)))) for _ in range(300)], 9),
    ]

    def outcome(sets: list, domain: object) -> tuple:
        try:
            got = ItemSets.from_lists(sets, domain)  # type: ignore[arg-type]
        except Exception as exc:  # the error itself is what is compared
            return ("refused", type(exc).__name__, str(exc))
        return ("read", got.indptr.tolist(), got.indices.tolist(), got.d)

    for sets, domain in cases:
        got = outcome(sets, domain)
        with monkeypatch.context() as m:
            m.setattr(itemsets_module, "_encode_whole", lambda *args: None)
            want = outcome(sets, domain)
        assert got == want, sets
