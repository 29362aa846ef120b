"""pldp.metrics against hand computations of the papers' formulas."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from pldp import metrics
from pldp.errors import ParameterError
from tests.tolerances import FLOAT_RTOL

# A small example: d = 6 items, n = 20 users; the last item never occurs.
TRUE = np.array([8, 5, 4, 2, 1, 0])
EST = np.array([6.0, 7.0, 4.0, -1.0, 1.5, 0.5])
N = 20
ERR = EST - TRUE  # -2, 2, 0, -3, 0.5, 0.5

PAIRWISE: dict[str, Callable[..., object]] = {
    "mse": metrics.mse,
    "nse": metrics.nse,
    "relative_error": metrics.relative_error,
    "mae": metrics.mae,
    "l1": metrics.l1,
    "l2": metrics.l2,
    "max_abs_error": metrics.max_abs_error,
}
TOP_K: dict[str, Callable[..., object]] = {
    "re_top_k": metrics.re_top_k,
    "precision_top_k": metrics.precision_top_k,
}


def _call(name: str, true: object, est: object) -> object:
    if name in TOP_K:
        return TOP_K[name](true, est, k=3)
    return PAIRWISE[name](true, est)


ALL = sorted([*PAIRWISE, *TOP_K])


# --- hand computations ------------------------------------------------------------------


def test_mse_is_total_squared_count_error_over_n() -> None:
    # Li et al. eq. 25 / Gu et al. Sec. VII: sum_x (f_x - f_hat_x)^2 / n
    by_hand = (4 + 4 + 0 + 9 + 0.25 + 0.25) / 20
    assert metrics.mse(TRUE, EST) == pytest.approx(by_hand, rel=FLOAT_RTOL)
    assert metrics.mse(TRUE, EST, n=35) == pytest.approx(17.5 / 35, rel=FLOAT_RTOL)  # item-set data: n given


def test_nse_is_summed_square_error_over_n() -> None:
    # MPLDP Sec. VI: NSE = SE / n, SE summed over every cell of a two-attribute histogram.
    true = np.array([6, 4, 3, 5, 2])  # attribute 1 (k=2) and attribute 2 (k=3), 10 users each
    est = np.array([7, 2, 3, 4, 3])
    assert metrics.nse(true, est, n=10) == pytest.approx((1 + 4 + 0 + 1 + 1) / 10, rel=FLOAT_RTOL)
    assert metrics.nse(TRUE, EST) == metrics.mse(TRUE, EST)


def test_relative_error_sums_over_items_and_skips_zero_counts() -> None:
    # Li et al. eq. 25: sum_x |f_x - f_hat_x| / f_x; item 5 (count 0) is skipped.
    by_hand = 2 / 8 + 2 / 5 + 0 / 4 + 3 / 2 + 0.5 / 1
    assert metrics.relative_error(TRUE, EST) == pytest.approx(by_hand, rel=FLOAT_RTOL)
    # however wrong the estimate of a zero-count item, it does not count
    assert metrics.relative_error(TRUE, np.append(EST[:-1], 1e9)) == pytest.approx(by_hand, rel=FLOAT_RTOL)
    assert metrics.relative_error([0, 0, 0], [1.0, -2.0, 3.0]) == 0.0


def test_re_top_k_averages_over_the_true_top_k() -> None:
    # Gu et al. Sec. VII: RE(k) = (1/k) sum_{i in T(k)} |c_hat_i - c_i| / c_i, T(3) = {0, 1, 2}
    assert metrics.re_top_k(TRUE, EST, k=3) == pytest.approx((2 / 8 + 2 / 5 + 0 / 4) / 3, rel=FLOAT_RTOL)
    assert metrics.re_top_k(TRUE, EST, k=1) == pytest.approx(2 / 8, rel=FLOAT_RTOL)
    # T(k) comes from the true counts only: item 4 estimated far above the rest changes nothing
    wild = EST.copy()
    wild[4] = 100.0
    assert metrics.re_top_k(TRUE, wild, k=3) == metrics.re_top_k(TRUE, EST, k=3)


def test_precision_top_k_counts_estimated_top_items_in_the_true_top() -> None:
    # estimated ranking: 1 (7), 0 (6), 2 (4), 4 (1.5), 5 (0.5), 3 (-1)
    assert metrics.precision_top_k(TRUE, EST, k=1) == 0.0  # {1} vs {0}
    assert metrics.precision_top_k(TRUE, EST, k=2) == 1.0  # {1, 0} vs {0, 1}
    assert metrics.precision_top_k(TRUE, EST, k=4) == 0.75  # {1, 0, 2, 4} vs {0, 1, 2, 3}
    assert metrics.precision_top_k(TRUE, EST, k=6) == 1.0  # every item: always 1


def test_mae_is_mean_absolute_frequency_error() -> None:
    # PLDP-FEBSF: (1/d) sum_x |f_hat_x - f_x| with f = counts / n
    by_hand = (2 + 2 + 0 + 3 + 0.5 + 0.5) / 20 / 6
    assert metrics.mae(TRUE, EST) == pytest.approx(by_hand, rel=FLOAT_RTOL)
    assert metrics.mae(TRUE, EST, n=40) == pytest.approx(by_hand / 2, rel=FLOAT_RTOL)
    # frequencies in, frequencies used (their sum is 1)
    assert metrics.mae(TRUE / N, EST / N) == pytest.approx(by_hand, rel=FLOAT_RTOL)


def test_l1_and_l2_on_frequencies() -> None:
    # Li et al. Sec. 3.4: l1 = sum |p_hat - p|, l2 = sum (p_hat - p)^2 with no root
    p, p_hat = TRUE / N, EST / N
    assert metrics.l1(p, p_hat) == pytest.approx(8 / 20, rel=FLOAT_RTOL)
    assert metrics.l2(p, p_hat) == pytest.approx(17.5 / 400, rel=FLOAT_RTOL)
    assert metrics.l2([1.0, 0.0], [0.0, 1.0]) == 2.0  # a root would give sqrt(2)


def test_max_abs_error() -> None:
    # MPLDP eq. 25: d_k = max_j |H_hat_j - H_j|
    assert metrics.max_abs_error(TRUE, EST) == 3.0
    assert metrics.max_abs_error(TRUE / N, EST / N) == pytest.approx(3 / 20, rel=FLOAT_RTOL)


# --- identities and invariances ---------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_a_perfect_estimate_has_no_error(name: str) -> None:
    expected = 1.0 if name == "precision_top_k" else 0.0
    assert _call(name, TRUE, TRUE.astype(float)) == expected


def test_mse_is_n_times_l2_of_frequencies() -> None:
    assert metrics.mse(TRUE, EST) == pytest.approx(N * metrics.l2(TRUE / N, EST / N), rel=FLOAT_RTOL)
    assert metrics.mae(TRUE, EST) == pytest.approx(metrics.l1(TRUE / N, EST / N) / TRUE.size, rel=FLOAT_RTOL)


def test_relations_between_losses(rng: np.random.Generator) -> None:
    p = rng.dirichlet(np.ones(9), size=50)
    q = p + rng.normal(0, 0.05, size=p.shape)
    l1, l2, mx = metrics.l1(p, q), metrics.l2(p, q), metrics.max_abs_error(p, q)
    assert np.all(mx <= l1 + 1e-15) and np.all(l1 <= 9 * mx + 1e-15)
    assert np.all(mx**2 <= l2 + 1e-15) and np.all(l2 <= l1 * mx + 1e-15)
    assert np.allclose(metrics.l1(q.clip(0), p), metrics.l1(p, q.clip(0)))  # symmetric


def test_ranking_metrics_ignore_a_monotone_rescaling_of_the_estimate() -> None:
    for k in range(1, 7):
        assert metrics.precision_top_k(TRUE, 3 * EST + 7, k) == metrics.precision_top_k(TRUE, EST, k)
        assert metrics.precision_top_k(TRUE / N, EST, k) == metrics.precision_top_k(TRUE, EST, k)


def test_integer_and_float_inputs_agree() -> None:
    est_int = np.array([6, 7, 4, -1, 2, 0])
    for name in ALL:
        assert _call(name, TRUE, est_int) == _call(name, TRUE.astype(float), est_int.astype(float)), name
    assert metrics.mse(list(TRUE), list(EST)) == metrics.mse(TRUE, EST)  # plain lists


def test_unsigned_counts_rank_correctly() -> None:
    true = np.array([1, 9, 4], dtype=np.uint64)
    assert metrics.precision_top_k(true, [0.0, 5.0, 1.0], k=1) == 1.0
    assert metrics.re_top_k(true, [0.0, 6.0, 1.0], k=1) == pytest.approx(3 / 9)


# --- ties -------------------------------------------------------------------------------


def test_top_k_ties_go_to_the_smaller_index() -> None:
    true = np.array([3, 5, 5, 5, 1])  # T(2) = {1, 2}: item 3 loses the tie
    est = np.array([0.0, 5.0, 5.0, 9.0, 0.0])
    assert metrics.re_top_k(true, est, k=2) == 0.0  # item 3's error is not counted
    assert metrics.re_top_k(true, est, k=3) == pytest.approx((4 / 5) / 3)
    # estimated ranking 3, then the tie 1 = 2 -> {3, 1}: one of the two is right
    assert metrics.precision_top_k(true, est, k=2) == 0.5
    # an all-tied estimate ranks by index: {0, 1} vs {1, 2}
    assert metrics.precision_top_k(true, np.ones(5), k=2) == 0.5
    # the tie-break depends on the item order, as documented: {0} vs {0}, then {0} vs {1}
    assert metrics.precision_top_k([5, 5, 1], np.zeros(3), k=1) == 1.0
    assert metrics.precision_top_k([1, 5, 5], np.zeros(3), k=1) == 0.0


def test_top_k_tie_break_is_the_same_in_a_batch() -> None:
    true = np.array([[3, 5, 5, 5, 1], [5, 5, 5, 3, 1]])
    est = np.array([[0.0, 5.0, 5.0, 9.0, 0.0], [9.0, 9.0, 9.0, 9.0, 9.0]])
    got = metrics.precision_top_k(true, est, k=2)
    assert got.tolist() == [metrics.precision_top_k(t, e, k=2) for t, e in zip(true, est, strict=True)] == [0.5, 1.0]


# --- batches ----------------------------------------------------------------------------


def _batch(rng: np.random.Generator, trials: int = 7, d: int = 8) -> tuple[np.ndarray, np.ndarray]:
    true = rng.integers(1, 30, size=(trials, d))
    true[:, 0] = 0  # a zero count in every row (relative_error skips it)
    true[2, 3] = true[2, 4]  # a tie
    est = true + rng.normal(0, 6, size=(trials, d))
    return true, est


@pytest.mark.parametrize("name", ALL)
def test_batch_equals_a_loop_of_single_calls(name: str, rng: np.random.Generator) -> None:
    true, est = _batch(rng)
    got = _call(name, true, est)
    assert isinstance(got, np.ndarray) and got.shape == (true.shape[0],) and got.dtype == float
    loop = [_call(name, t, e) for t, e in zip(true, est, strict=True)]
    assert all(isinstance(v, float) for v in loop)
    np.testing.assert_allclose(got, loop, rtol=FLOAT_RTOL, atol=0)


@pytest.mark.parametrize("name", ALL)
def test_one_truth_is_shared_by_a_batch_of_estimates(name: str, rng: np.random.Generator) -> None:
    true, est = _batch(rng)
    got = _call(name, true[0], est)
    assert got.shape == (est.shape[0],)
    np.testing.assert_allclose(got, [_call(name, true[0], e) for e in est], rtol=FLOAT_RTOL, atol=0)
    np.testing.assert_allclose(got, _call(name, np.tile(true[0], (est.shape[0], 1)), est), rtol=FLOAT_RTOL, atol=0)


def test_default_n_is_per_trial_and_explicit_n_is_shared(rng: np.random.Generator) -> None:
    true, est = _batch(rng)
    np.testing.assert_allclose(metrics.mse(true, est), ((est - true) ** 2).sum(1) / true.sum(1), rtol=FLOAT_RTOL)
    np.testing.assert_allclose(metrics.mse(true, est, n=100), ((est - true) ** 2).sum(1) / 100, rtol=FLOAT_RTOL)
    np.testing.assert_allclose(metrics.mae(true, est, n=100), np.abs(est - true).mean(1) / 100, rtol=FLOAT_RTOL)


def test_single_trial_batch_keeps_its_axis() -> None:
    got = metrics.mse(TRUE[None, :], EST[None, :])
    assert isinstance(got, np.ndarray) and got.shape == (1,)
    assert got[0] == metrics.mse(TRUE, EST)


# --- validation -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize(
    ("true", "est", "match"),
    [
        ([1, 2, 3], [1.0, 2.0], r"est has 2 items, expected 3 \(the length of true\)"),
        ([1, -2, 3], [1.0, 2.0, 3.0], r"true must be non-negative; negative entries at 1: -2\.0"),
        ([1, 2, 3], [1.0, np.nan, 3.0], r"est must be finite; bad entries at 1: nan"),
        ([1, np.inf, 3], [1.0, 2.0, 3.0], r"true must be finite; bad entries at 1: inf"),
        ([[1, 2], [3, 4]], [[1.0, 2.0], [3.0, np.nan]], r"est must be finite; bad entries at \(1, 1\): nan"),
        ([[1, 2], [3, -4]], [[1.0, 2.0], [3.0, 4.0]], r"true must be non-negative; .* at \(1, 1\): -4"),
        ([[1, 2]] * 3, [[1.0, 2.0]] * 2, r"true has 3 trials and est has 2"),
        (np.ones((2, 2, 2)), np.ones((2, 2, 2)), r"true must be 1-D \(d,\) or 2-D \(trials, d\), got shape"),
        ([], [], r"true must hold at least one item"),
        (["a", "b", "c"], [1, 2, 3], r"true must hold real numbers, got dtype <U1"),
        ([True, False, True], [1, 2, 3], r"true must hold real numbers, got dtype bool"),
        ([1, 2, 3], [1, 2j, 3], r"est must hold real numbers, got dtype complex"),
        ([[1, 2], [3]], [1, 2], r"true must be a 1-D or 2-D numeric array, got a ragged sequence"),
    ],
)
def test_bad_arrays_are_refused_by_name(name: str, true: object, est: object, match: str) -> None:
    if name in ("l1", "l2"):  # these name their arguments true_p, est_p
        match = match.replace("true", "true_p").replace("est", "est_p")
    with pytest.raises(ParameterError, match=match):
        _call(name, true, est)


def test_frequency_metrics_name_their_own_arguments() -> None:
    with pytest.raises(ParameterError, match=r"true_p must be non-negative"):
        metrics.l1([-0.1, 1.1], [0.5, 0.5])
    with pytest.raises(ParameterError, match=r"est_p has 3 items, expected 2 \(the length of true_p\)"):
        metrics.l2([0.5, 0.5], [0.2, 0.3, 0.5])


def test_estimates_may_be_negative() -> None:
    assert metrics.mse([1, 1], [-1.0, 1.0]) == 2.0


@pytest.mark.parametrize("func", [metrics.mse, metrics.nse, metrics.mae])
def test_n_must_be_positive_and_real(func: Callable[..., object]) -> None:
    for bad, match in [
        (0, r"n must be finite and > 0, got 0"),
        (-5, r"n must be finite and > 0, got -5"),
        (np.inf, r"n must be finite and > 0, got inf"),
        (np.nan, r"n must be finite and > 0, got nan"),
        (True, r"n must be a positive real number, got True"),
        ("10", r"n must be a positive real number, got '10'"),
        ([10, 20], r"n must be a positive real number, got \[10, 20\]"),
    ]:
        with pytest.raises(ParameterError, match=match):
            func(TRUE, EST, n=bad)
    assert func(TRUE, EST, n=np.int64(20)) == func(TRUE, EST)


@pytest.mark.parametrize("func", [metrics.mse, metrics.nse, metrics.mae])
def test_n_cannot_default_to_a_zero_total(func: Callable[..., object]) -> None:
    with pytest.raises(ParameterError, match=r"the true counts sum to 0, so n cannot default to their sum; pass n"):
        func([0, 0], [1.0, 0.0])
    with pytest.raises(ParameterError, match=r"sum to 0 in trials 1, so n cannot default"):
        func([[1, 0], [0, 0]], [[1.0, 0.0], [1.0, 0.0]])
    assert func([0, 0], [1.0, 0.0], n=4) > 0


@pytest.mark.parametrize("func", [metrics.re_top_k, metrics.precision_top_k])
def test_k_must_be_an_integer_in_1_to_d(func: Callable[..., object]) -> None:
    for bad, match in [
        (0, r"k must be >= 1, got 0"),
        (7, r"k must be <= the number of items d = 6, got 7"),
        (2.5, r"k must be an integer, got 2.5"),
        (True, r"k must be an integer, got True"),
        ("3", r"k must be an integer, got '3'"),
    ]:
        with pytest.raises(ParameterError, match=match):
            func(TRUE, EST, k=bad)
    assert func(TRUE, EST, k=3.0) == func(TRUE, EST, k=3)


def test_re_top_k_refuses_a_zero_count_in_the_true_top_k() -> None:
    assert metrics.re_top_k(TRUE, EST, k=5) == pytest.approx((2 / 8 + 2 / 5 + 0 + 3 / 2 + 0.5) / 5)
    with pytest.raises(ParameterError, match=r"undefined when a true top-k item has count 0: k=6"):
        metrics.re_top_k(TRUE, EST, k=6)
    with pytest.raises(ParameterError, match=r"k=2 exceeds .* \(trials 1\)"):
        metrics.re_top_k([[1, 1, 0], [1, 0, 0]], np.ones((2, 3)), k=2)
    # precision is defined whatever the counts
    assert metrics.precision_top_k(TRUE, EST, k=6) == 1.0


def test_inputs_are_not_modified() -> None:
    true, est = TRUE.copy(), EST.copy()
    for name in ALL:
        _call(name, true, est)
    assert np.array_equal(true, TRUE) and np.array_equal(est, EST)
