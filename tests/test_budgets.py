"""Tests of :class:`pldp.ItemBudgets` and its assignment policies."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pldp
from pldp import BudgetError, Domain, ItemBudgets, ParameterError

INF = math.inf


# ------------------------------------------------------------------------------ constructors
def test_from_array_basic():
    b = ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, np.inf])
    assert b.d == 5
    assert len(b) == 5
    assert b.domain == Domain.range(5)
    np.testing.assert_array_equal(b.epsilons, [0.1, 0.5, 1.0, INF, INF])
    assert b.epsilons.dtype == float


def test_from_array_numpy_input_is_copied():
    src = np.array([0.5, 1.0, 2.0])
    b = ItemBudgets.from_array(src)
    src[0] = 99.0
    assert b.epsilons[0] == 0.5


def test_epsilons_are_read_only():
    b = ItemBudgets([0.5, 1.0])
    with pytest.raises(ValueError, match="read-only"):
        b.epsilons[0] = 3.0
    assert b.epsilons[0] == 0.5


def test_none_and_inf_mark_non_sensitive():
    b = ItemBudgets([None, 1.0, float("inf"), np.inf, 0.2, math.inf])
    np.testing.assert_array_equal(b.sensitive, [False, True, False, False, True, False])
    np.testing.assert_array_equal(b.non_sensitive, [True, False, True, True, False, True])
    assert b.n_sensitive == 2
    assert np.all(np.isinf(b.epsilons[b.non_sensitive]))
    assert b.min_epsilon == 0.2
    assert b.max_epsilon == 1.0


def test_from_array_with_domain():
    dom = Domain(["HIV", "Flu", "Cancer"])
    b = ItemBudgets.from_array([0.1, None, 0.5], dom)
    assert b.domain is dom
    assert b.sensitive.tolist() == [True, False, True]


def test_from_mapping_fig1():
    b = ItemBudgets.from_mapping({"HIV": 0.1, "Cancer": 0.5, "Hepatitis": 1.0, "Flu": None, "None": None})
    assert b.domain.labels == ("HIV", "Cancer", "Hepatitis", "Flu", "None")
    assert b.sensitive.tolist() == [True, True, True, False, False]
    assert [(lv.epsilon, lv.items.tolist()) for lv in b.levels] == [(0.1, [0]), (0.5, [1]), (1.0, [2])]


def test_from_mapping_follows_domain_order_not_mapping_order():
    b = ItemBudgets.from_mapping({"c": 3.0, "a": 1.0, "b": None}, Domain("abc"))
    np.testing.assert_array_equal(b.epsilons, [1.0, INF, 3.0])
    b2 = ItemBudgets.from_mapping({"c": 3.0, "a": 1.0, "b": None}, ["b", "c", "a"])
    assert b2.domain == Domain(["b", "c", "a"])
    np.testing.assert_array_equal(b2.epsilons, [INF, 3.0, 1.0])


def test_from_mapping_missing_labels_named():
    with pytest.raises(BudgetError, match="no budget") as info:
        ItemBudgets.from_mapping({"a": 1.0}, Domain("abcd"))
    msg = str(info.value)
    for lab in "bcd":
        assert repr(lab) in msg
    assert "'a'" not in msg


def test_from_mapping_extra_labels_named():
    with pytest.raises(BudgetError, match="not in the domain") as info:
        ItemBudgets.from_mapping({"a": 1.0, "b": 1.0, "zz": 2.0, "yy": None}, Domain("ab"))
    msg = str(info.value)
    assert "'zz'" in msg and "'yy'" in msg
    assert "'a'" not in msg


def test_from_mapping_bad_value_named_by_label():
    with pytest.raises(BudgetError) as info:
        ItemBudgets.from_mapping({"ok": 1.0, "HIV": -0.5})
    assert "'HIV'" in str(info.value)
    assert "-0.5" in str(info.value)


@pytest.mark.parametrize("d", [1, 3, 10])
def test_uniform(d):
    b = ItemBudgets.uniform(0.7, d)
    assert b.d == d
    np.testing.assert_array_equal(b.epsilons, np.full(d, 0.7))
    assert b.n_sensitive == d
    assert [(lv.epsilon, len(lv)) for lv in b.levels] == [(0.7, d)]
    assert b.min_epsilon == b.max_epsilon == 0.7


def test_uniform_with_domain():
    dom = Domain("xyz")
    b = ItemBudgets.uniform(2.0, dom)
    assert b.domain is dom
    assert b.epsilons.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), "abc"])
def test_uniform_bad_epsilon(eps):
    with pytest.raises(ParameterError, match="epsilon") as info:
        ItemBudgets.uniform(eps, 3)
    assert repr(eps) in str(info.value)


@pytest.mark.parametrize("d", [0, 2.5])
def test_uniform_bad_d(d):
    with pytest.raises(pldp.PLDPError, match="d must"):
        ItemBudgets.uniform(1.0, d)


# ---------------------------------------------------------------------------- accessors
def test_levels_ascending_with_item_indices():
    b = ItemBudgets([0.5, INF, 0.1, 0.5, None, 2.0, 0.1])
    levels = b.levels
    assert [lv.epsilon for lv in levels] == [0.1, 0.5, 2.0]
    assert [lv.items.tolist() for lv in levels] == [[2, 6], [0, 3], [5]]
    assert [len(lv) for lv in levels] == [2, 2, 1]
    assert all(isinstance(lv, pldp.PrivacyLevel) for lv in levels)


def test_levels_partition_the_sensitive_items():
    rng = np.random.default_rng(11)
    eps = rng.choice([0.1, 0.3, 1.0, 3.0, INF], size=200)
    b = ItemBudgets(eps)
    levels = b.levels
    all_items = np.sort(np.concatenate([lv.items for lv in levels]))
    np.testing.assert_array_equal(all_items, np.flatnonzero(np.isfinite(eps)))
    for lv in levels:
        assert np.all(eps[lv.items] == lv.epsilon)
    assert [lv.epsilon for lv in levels] == sorted(lv.epsilon for lv in levels)


def test_no_sensitive_items_accessors():
    b = ItemBudgets([None, INF])
    assert b.n_sensitive == 0
    assert b.levels == []
    assert b.min_epsilon == INF
    assert b.max_epsilon == INF
    assert b.non_sensitive.all()


def test_equality_and_hash():
    a = ItemBudgets([0.5, None, 1.0])
    b = ItemBudgets.from_array(np.array([0.5, np.inf, 1.0]))
    assert a == b
    assert hash(a) == hash(b)
    assert a != ItemBudgets([0.5, None, 1.1])
    assert a != ItemBudgets([0.5, None, 1.0], Domain("abc"))
    assert a != [0.5, None, 1.0]


def test_repr():
    r = repr(ItemBudgets([0.5, None, 0.5, 1.0]))
    assert "d=4" in r
    assert "non_sensitive=1" in r
    assert "0.5x2" in r


# ------------------------------------------------------------------------ bad budgets
@pytest.mark.parametrize(
    ("bad", "shown"),
    [(0, "0"), (0.0, "0.0"), (-1.5, "-1.5"), (float("nan"), "nan"), ("high", "'high'"), (-INF, "-inf"), ([1], "[1]")],
)
def test_bad_budget_named_by_item(bad, shown):
    dom = Domain(["ok", "HIV", "flu"])
    with pytest.raises(BudgetError, match="> 0") as info:
        ItemBudgets([1.0, bad, None], dom)
    msg = str(info.value)
    assert "HIV" in msg
    assert shown in msg
    assert "ok" not in msg and "flu" not in msg
    assert isinstance(info.value, ValueError)


def test_several_bad_budgets_all_named():
    with pytest.raises(BudgetError) as info:
        ItemBudgets([0.5, 0, -1, float("nan"), -INF], Domain("abcde"))
    msg = str(info.value)
    for lab in "bcde":
        assert f"'{lab}" in msg
    assert "'a" not in msg


def test_bad_budget_in_numpy_array():
    with pytest.raises(BudgetError, match="nan"):
        ItemBudgets(np.array([1.0, np.nan]))


def test_empty_budgets():
    with pytest.raises(BudgetError, match="at least one"):
        ItemBudgets([])


@pytest.mark.parametrize(("n_eps", "d"), [(2, 3), (4, 3)])
def test_domain_length_mismatch(n_eps, d):
    with pytest.raises(BudgetError, match=f"domain has {d} labels but {n_eps} budgets"):
        ItemBudgets([1.0] * n_eps, Domain.range(d))


def test_domain_length_mismatch_with_bad_budget_still_named():
    with pytest.raises(BudgetError) as info:
        ItemBudgets([0.5, 0], Domain("abc"))
    assert "0" in str(info.value).split("bad:", 1)[1]


@pytest.mark.parametrize("bad", ["0.5", "inf", True, False, np.bool_(True), b"1", object()])
def test_numeric_strings_and_bools_are_not_budgets(bad):
    with pytest.raises(BudgetError, match="bad") as info:
        ItemBudgets([1.0, bad])
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("good", [np.float32(0.5), np.int64(2), 3, np.float64(0.25)])
def test_numpy_and_int_scalars_are_budgets(good):
    b = ItemBudgets([good, None])
    assert b.epsilons[0] == float(good)
    assert b.n_sensitive == 1


# ------------------------------------------------------------------------- by_frequency
def test_by_frequency_paper_example():
    """Li et al. Sec. 7.1: A..F, counts 6..1, eps in [0.1, 0.3], LC = 3, NR = 0.5."""
    b = ItemBudgets.by_frequency([6, 5, 4, 3, 2, 1], 0.1, 0.3, 3, 0.5, domain=Domain("ABCDEF"))
    assert b.domain.labels == tuple("ABCDEF")
    eps = dict(zip(b.domain.labels, b.epsilons.tolist(), strict=True))
    assert eps["A"] == eps["B"] == eps["C"] == INF
    assert eps["D"] == pytest.approx(0.3)
    assert eps["E"] == pytest.approx(0.2)
    assert eps["F"] == pytest.approx(0.1)
    assert b.non_sensitive.tolist() == [True, True, True, False, False, False]
    assert b.min_epsilon == pytest.approx(0.1)
    assert b.max_epsilon == pytest.approx(0.3)


def test_by_frequency_uneven_seven_in_three():
    # 7 sensitive items, 3 levels: sizes 2, 2, 3 from the largest to the smallest epsilon.
    b = ItemBudgets.by_frequency([70, 60, 50, 40, 30, 20, 10], 1.0, 3.0, 3, 0.0)
    np.testing.assert_allclose(b.epsilons, [3, 3, 2, 2, 1, 1, 1])
    assert [(lv.epsilon, lv.items.tolist()) for lv in b.levels] == [
        (pytest.approx(1.0), [4, 5, 6]),
        (pytest.approx(2.0), [2, 3]),
        (pytest.approx(3.0), [0, 1]),
    ]


def test_by_frequency_uneven_eight_in_three():
    # 8 = 2 + 3 + 3: the two extra items go to the two most private levels.
    b = ItemBudgets.by_frequency(np.arange(80, 0, -10), 1.0, 3.0, 3, 0.0)
    np.testing.assert_allclose(b.epsilons, [3, 3, 2, 2, 2, 1, 1, 1])


def test_by_frequency_uneven_with_non_sensitive_and_four_levels():
    # d = 10, NR = 0.3 -> 3 non-sensitive; 7 sensitive in 4 levels -> 1, 2, 2, 2.
    counts = [100, 90, 80, 70, 60, 50, 40, 30, 20, 10]
    b = ItemBudgets.by_frequency(counts, 0.5, 2.0, 4, 0.3)
    np.testing.assert_allclose(b.epsilons, [INF, INF, INF, 2.0, 1.5, 1.5, 1.0, 1.0, 0.5, 0.5])


def test_by_frequency_unsorted_counts():
    # The paper example with the items shuffled: the budget follows the count, not the index.
    counts = [2, 6, 1, 4, 3, 5]  # E, A, F, C, D, B
    b = ItemBudgets.by_frequency(counts, 0.1, 0.3, 3, 0.5)
    np.testing.assert_allclose(b.epsilons, [0.2, INF, 0.1, INF, 0.3, INF])


def test_by_frequency_ties_broken_by_index():
    # All equal: lower index ranks as more frequent -> non-sensitive / larger budget.
    b = ItemBudgets.by_frequency([5, 5, 5, 5], 1.0, 2.0, 2, 0.5)
    np.testing.assert_allclose(b.epsilons, [INF, INF, 2.0, 1.0])


def test_by_frequency_ties_across_level_boundary():
    # counts 9, 4, 4, 4, 1 with NR=0: ranks are 0, 1, 2, 3, 4 (ties kept in index order).
    # 5 in 2 levels -> sizes 2 (eps_max) and 3 (eps_min).
    b = ItemBudgets.by_frequency([4, 9, 4, 1, 4], 1.0, 2.0, 2, 0.0)
    # ranking: item1 (9), item0 (4), item2 (4), item4 (4), item3 (1)
    np.testing.assert_allclose(b.epsilons, [2.0, 2.0, 1.0, 1.0, 1.0])


def test_by_frequency_ties_at_non_sensitive_boundary():
    b = ItemBudgets.by_frequency([3, 7, 3, 3], 1.0, 1.0, 1, 0.5)
    # ranking: 1, 0, 2, 3 -> items 1 and 0 are non-sensitive
    assert b.non_sensitive.tolist() == [True, True, False, False]


def test_by_frequency_nr_zero_all_sensitive():
    b = ItemBudgets.by_frequency([6, 5, 4, 3, 2, 1], 0.1, 0.3, 3, 0.0)
    assert b.n_sensitive == 6
    np.testing.assert_allclose(b.epsilons, [0.3, 0.3, 0.2, 0.2, 0.1, 0.1])


def test_by_frequency_single_level_gets_eps_min():
    b = ItemBudgets.by_frequency([1, 2, 3, 4], 0.25, 4.0, 1, 0.25)
    np.testing.assert_array_equal(b.epsilons, [0.25, 0.25, 0.25, INF])


def test_by_frequency_equal_min_and_max():
    b = ItemBudgets.by_frequency([4, 3, 2, 1], 0.5, 0.5, 3, 0.0)
    np.testing.assert_allclose(b.epsilons, [0.5] * 4)


def test_by_frequency_levels_equal_sensitive_count():
    b = ItemBudgets.by_frequency([6, 5, 4, 3, 2, 1], 1.0, 4.0, 4, 0.34)
    # floor(0.34 * 6) = 2 non-sensitive, 4 items in 4 levels of one
    np.testing.assert_allclose(b.epsilons, [INF, INF, 4.0, 3.0, 2.0, 1.0])


def test_by_frequency_nr_floor_is_robust_to_rounding():
    # 0.7 * 10 = 7.000000000000001 and 0.29 * 100 = 28.999999999999996 in binary floating point.
    assert ItemBudgets.by_frequency(np.arange(10, 0, -1), 1.0, 2.0, 2, 0.7).n_sensitive == 3
    assert ItemBudgets.by_frequency(np.arange(100, 0, -1), 1.0, 2.0, 2, 0.29).n_sensitive == 71


def test_by_frequency_with_float_counts():
    b = ItemBudgets.by_frequency(np.array([6.0, 5.0, 4.0, 3.0, 2.0, 1.0]), 0.1, 0.3, 3, 0.5)
    np.testing.assert_allclose(b.epsilons, [INF, INF, INF, 0.3, 0.2, 0.1])


def test_by_frequency_too_few_sensitive_items():
    with pytest.raises(BudgetError, match=r"3 sensitive item.*4 levels"):
        ItemBudgets.by_frequency([6, 5, 4, 3, 2, 1], 0.1, 0.3, 4, 0.5)
    with pytest.raises(BudgetError):
        ItemBudgets.by_frequency([1, 1], 0.1, 0.3, 3, 0.0)


def test_by_frequency_eps_min_above_eps_max():
    with pytest.raises(ParameterError, match="eps_min") as info:
        ItemBudgets.by_frequency([6, 5, 4, 3, 2, 1], 0.3, 0.1, 3, 0.5)
    assert "0.3" in str(info.value) and "0.1" in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"eps_min": 0}, "eps_min"),
        ({"eps_min": float("nan")}, "eps_min"),
        ({"eps_max": float("inf")}, "eps_max"),
        ({"levels": 0}, "levels"),
        ({"levels": 1.5}, "levels"),
        ({"non_sensitive_ratio": 1.0}, "non_sensitive_ratio"),
        ({"non_sensitive_ratio": -0.1}, "non_sensitive_ratio"),
        ({"non_sensitive_ratio": float("nan")}, "non_sensitive_ratio"),
    ],
)
def test_by_frequency_bad_parameters(kwargs, match):
    args = {"counts": [6, 5, 4, 3, 2, 1], "eps_min": 0.1, "eps_max": 0.3, "levels": 3, "non_sensitive_ratio": 0.0}
    args.update(kwargs)
    with pytest.raises(ParameterError, match=match):
        ItemBudgets.by_frequency(**args)


@pytest.mark.parametrize("counts", [[3, -1, 2], [1.5, 2, 3], [[1, 2], [3, 4]], ["a", "b"]])
def test_by_frequency_bad_counts(counts):
    with pytest.raises(pldp.PLDPError):
        ItemBudgets.by_frequency(counts, 0.1, 0.3, 1, 0.0)


def test_by_frequency_domain_length_mismatch():
    with pytest.raises(BudgetError, match="domain has 3 labels"):
        ItemBudgets.by_frequency([3, 2, 1, 0], 0.1, 0.3, 1, 0.0, domain=Domain("abc"))


@settings(max_examples=80, deadline=None)
@given(
    counts=st.lists(st.integers(0, 20), min_size=1, max_size=40),
    lc=st.integers(1, 6),
    nr=st.floats(0.0, 0.95),
    eps_min=st.floats(0.01, 2.0),
    span=st.floats(0.0, 5.0),
)
def test_by_frequency_properties(counts, lc, nr, eps_min, span):
    d = len(counts)
    n_ns = math.floor(nr * d + 1e-9)
    n_s = d - n_ns
    eps_max = eps_min + span
    if n_s < lc:
        with pytest.raises(BudgetError):
            ItemBudgets.by_frequency(counts, eps_min, eps_max, lc, nr)
        return
    b = ItemBudgets.by_frequency(counts, eps_min, eps_max, lc, nr)
    eps = b.epsilons
    # rank: count descending, ties by index (independent sort: Python's stable sort)
    rank = sorted(range(d), key=lambda i: (-counts[i], i))
    ranked = eps[rank]
    assert np.all(np.isinf(ranked[:n_ns]))
    sens = ranked[n_ns:]
    assert np.all(np.isfinite(sens))
    # budgets never increase down the ranking
    assert np.all(np.diff(sens) <= 1e-12)
    assert sens.min() == pytest.approx(eps_min)
    if lc > 1 and span > 1e-9:
        assert sens.max() == pytest.approx(eps_max)
        # group sizes from largest to smallest epsilon: differ by at most one, non-decreasing
        _, sizes = np.unique(-sens, return_counts=True)
        assert sizes.size == lc
        assert sizes.max() - sizes.min() <= 1
        assert np.all(np.diff(sizes) >= 0)
        assert sizes.sum() == n_s
        np.testing.assert_allclose(np.unique(sens)[::-1], np.linspace(eps_max, eps_min, lc))


# ------------------------------------------------------------------------ random_levels
def test_random_levels_seeded_reproducible():
    a = ItemBudgets.random_levels(500, 0.8, np.random.default_rng(42))
    b = ItemBudgets.random_levels(500, 0.8, np.random.default_rng(42))
    c = ItemBudgets.random_levels(500, 0.8, np.random.default_rng(43))
    assert a == b
    np.testing.assert_array_equal(a.epsilons, b.epsilons)
    assert a != c


@pytest.mark.parametrize("exact", [False, True])
def test_random_levels_values(exact):
    eps = 0.7
    b = ItemBudgets.random_levels(2000, eps, np.random.default_rng(1), exact_shares=exact)
    allowed = eps * np.array([1.0, 1.2, 2.0])
    assert np.all(np.isin(b.epsilons, allowed))
    assert b.n_sensitive == 2000
    assert [lv.epsilon for lv in b.levels] == pytest.approx(allowed.tolist())


def test_random_levels_shares_within_binomial_tolerance():
    d = 10_000
    shares = np.array([0.05, 0.05, 0.90])
    eps = 1.0
    b = ItemBudgets.random_levels(d, eps, np.random.default_rng(2024))
    got = np.array([np.sum(b.epsilons == eps * m) for m in (1.0, 1.2, 2.0)])
    assert got.sum() == d
    sd = np.sqrt(d * shares * (1 - shares))
    assert np.all(np.abs(got - d * shares) <= 4 * sd), got


def test_random_levels_exact_shares():
    d = 10_000
    b = ItemBudgets.random_levels(d, 1.0, np.random.default_rng(5), exact_shares=True)
    assert [len(lv) for lv in b.levels] == [500, 500, 9000]


def test_random_levels_exact_shares_largest_remainder():
    # d = 7: raw sizes 0.35, 0.35, 6.3 -> floors 0, 0, 6; one left over goes to the largest
    # remainder (0.35, the first on ties) -> 1, 0, 6.
    b = ItemBudgets.random_levels(7, 1.0, np.random.default_rng(0), exact_shares=True)
    assert sorted(b.epsilons.tolist()) == [1.0] + [2.0] * 6


def test_random_levels_exact_shares_is_a_random_permutation():
    a = ItemBudgets.random_levels(100, 1.0, np.random.default_rng(1), exact_shares=True)
    b = ItemBudgets.random_levels(100, 1.0, np.random.default_rng(2), exact_shares=True)
    assert sorted(a.epsilons.tolist()) == sorted(b.epsilons.tolist())
    assert not np.array_equal(a.epsilons, b.epsilons)


def test_random_levels_custom_multipliers_and_domain():
    dom = Domain([f"i{k}" for k in range(40)])
    b = ItemBudgets.random_levels(dom, 0.5, np.random.default_rng(3), (1.0, 4.0), (0.5, 0.5), exact_shares=True)
    assert b.domain is dom
    assert [(lv.epsilon, len(lv)) for lv in b.levels] == [(0.5, 20), (2.0, 20)]


@pytest.mark.parametrize(
    ("mult", "shares", "match"),
    [
        ((1.0, 2.0), (0.5, 0.3), "shares"),
        ((1.0, 2.0), (0.5, 0.25, 0.25), "equal length"),
        ((), (), "non-empty"),
        ((1.0, 0.0), (0.5, 0.5), "multipliers"),
        ((1.0, -2.0), (0.5, 0.5), "multipliers"),
        ((1.0, float("inf")), (0.5, 0.5), "multipliers"),
        ((1.0, 2.0), (1.5, -0.5), "shares"),
    ],
)
def test_random_levels_bad_parameters(mult, shares, match):
    with pytest.raises(ParameterError, match=match):
        ItemBudgets.random_levels(10, 1.0, np.random.default_rng(0), mult, shares)


@pytest.mark.parametrize("eps", [0, -1, float("nan")])
def test_random_levels_bad_epsilon(eps):
    with pytest.raises(ParameterError, match="epsilon"):
        ItemBudgets.random_levels(10, eps, np.random.default_rng(0))
