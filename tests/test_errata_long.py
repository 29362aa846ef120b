"""ERRATA LONG-1 (docs/errata.md): every number of the erratum, recomputed.

Arcolezi et al.'s printed L-GRR IRR (``grr_irr_paper``) against the exact one (``grr_irr``), at
eps_inf = 2, eps_1 = 1 throughout. multi-freq-ldpy 0.2.5 is not a dependency of pldp: its L-GRR
aggregators and variance are written below as the formulas they compute (read in its source, not
copied: ``L_GRR_Aggregator_MI`` and ``MI_long``, matrix inversion; ``L_GRR_Aggregator_IBU`` and
``IBU``, iterative Bayesian updates with its matrix and defaults; ``VAR_Long_Pure``), and fed
*exact* expected frequencies (no sampling noise), so that every difference is the formula's.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from pldp.mechanisms.longitudinal.formulas import (
    chain_variance,
    chained,
    grr_irr,
    grr_irr_paper,
    longitudinal_variance,
)

EPS_PERM, EPS_1 = 2.0, 1.0


def _prr(k: int) -> tuple[float, float]:
    """GRR at eps_inf over k items: the permanent response, the same in the paper and in pldp."""
    a = math.exp(EPS_PERM)
    return a / (a + k - 1), 1 / (a + k - 1)


def _one_report(k: int, irr: Callable[[float, float, int], tuple[float, float]] = grr_irr_paper) -> tuple[float, float]:
    """(p*, q*) of one report of the chain: the PRR then the IRR, both GRR over k items."""
    return chained(*_prr(k), *irr(EPS_PERM, EPS_1, k))


# --------------------------------------------------------------------------- multi-freq-ldpy 0.2.5
def _mfl_mi_long(obs_freq: np.ndarray, p1: float, q1: float, p2: float, q2: float) -> np.ndarray:
    """``MI_long(count_report, n, p1, q1, p2, q2)`` with ``count_report = n * obs_freq``."""
    est = ((obs_freq - q1 * (p2 - q2) - q2) / ((p1 - q1) * (p2 - q2))).clip(0)
    return est / est.sum() if est.sum() > 0 else est


def _mfl_ibu_matrix(k: int) -> np.ndarray:
    """The matrix ``A`` of ``L_GRR_Aggregator_IBU``: ``p = p1 p2 + (1 - p1) q2``, ``q = p1 q2 + q1 p2``."""
    p1, q1 = _prr(k)
    p2, q2 = grr_irr_paper(EPS_PERM, EPS_1, k)
    a = np.full((k, k), p1 * q2 + q1 * p2)
    np.fill_diagonal(a, p1 * p2 + (1 - p1) * q2)
    return a


def _mfl_ibu(a: np.ndarray, obs_freq: np.ndarray, nb_iter: int = 10000, tol: float = 1e-12) -> np.ndarray:
    """``IBU(k, A, obs_freq, nb_iter, tol, "max_abs")`` with ``L_GRR_Aggregator_IBU``'s defaults."""
    est = np.ones(len(obs_freq)) / len(obs_freq)
    for _ in range(nb_iter):
        new = est * np.dot(a, obs_freq / np.dot(a, est))
        if np.abs(est - new).max() < tol:
            return new
        est = new
    return est


def _mfl_var_long_pure(p1: float, q1: float, p2: float, q2: float, n: int = 1, f: float = 0.0) -> float:
    """``VAR_Long_Pure(p1, q1, p2, q2, n, f)``."""
    sig = f * (2 * p1 * p2 - 2 * p1 * q2 + 2 * q2 - 1) + p2 * q1 + q2 * (1 - q1)
    return sig * (1 - sig) / (n * (p1 - q1) ** 2 * (p2 - q2) ** 2)


def _expected_frequencies(k: int, f: np.ndarray) -> np.ndarray:
    """What multi-freq-ldpy's own client (the printed IRR) reports on average for true frequencies f."""
    p, q = _one_report(k)
    return q + f * (p - q)  # (p* - q*) f + q* sum(f), sum(f) = 1


# --------------------------------------------------------------------------- the erratum
def test_long1_one_report_of_the_printed_irr_is_grr_below_eps_1() -> None:
    """One report of the printed chain is GRR at 0.948 for k = 3 and 0.166 for k = 100, not at
    eps_1 = 1; at k = 2 it is exactly eps_1. The exact IRR gives eps_1 at every k."""
    realised = {k: math.log(p / q) for k in (2, 3, 100) for p, q in [_one_report(k)]}
    assert realised[2] == pytest.approx(EPS_1, rel=1e-12)
    assert round(realised[3], 3) == 0.948 and round(realised[100], 3) == 0.166
    for k in (2, 3, 100):
        p, q = _one_report(k, grr_irr)
        assert math.log(p / q) == pytest.approx(EPS_1, rel=1e-12)


def test_long1_is_a_utility_bug_both_guarantees_hold() -> None:
    """Both guarantees hold with the printed IRR: the PRR is the same GRR at eps_inf (so any number of
    reports of one value stay within eps_inf), and one report stays within eps_1 for every k; the
    printed IRR is a valid GRR, tight (one report exactly at eps_1) only for k = 2."""
    for k in range(2, 201):
        p1, q1 = _prr(k)
        assert math.log(p1 / q1) == pytest.approx(EPS_PERM, rel=1e-12)
        p2, q2 = grr_irr_paper(EPS_PERM, EPS_1, k)
        assert 0 < q2 < p2 < 1 and p2 + (k - 1) * q2 == pytest.approx(1.0, rel=1e-12)
        p, q = _one_report(k)
        realised = math.log(p / q)
        assert realised <= EPS_1 * (1 + 1e-12)
        assert (realised == pytest.approx(EPS_1, rel=1e-12)) == (k == 2)


def test_long1_variance_ratio_is_89_6_at_f_0_and_88_at_f_1_over_k() -> None:
    """The variance of the unbiased estimate, m(1 - m)/(n (p* - q*)^2) with m = q* + f (p* - q*)
    (``longitudinal_variance``), printed IRR over exact, at k = 100, eps_inf = 2, eps_1 = 1: 89.6x for
    an item of frequency f = 0, 88.3x at f = 1/k; n cancels."""
    k = 100

    def ratio(f: float) -> float:
        paper = longitudinal_variance("L-GRR (paper)", EPS_PERM, EPS_1, k, 10_000, f)
        return paper / longitudinal_variance("L-GRR", EPS_PERM, EPS_1, k, 10_000, f)

    assert round(ratio(0.0), 1) == 89.6
    assert round(ratio(1 / k), 1) == 88.3 and round(ratio(1 / k)) == 88
    # the closed form is chain_variance of the chained (p*, q*)
    p, q = _one_report(k)
    assert longitudinal_variance("L-GRR (paper)", EPS_PERM, EPS_1, k, 1, 0.0) == pytest.approx(chain_variance(p, q))


def test_long1_multi_freq_ldpy_ibu_matrix_rows_do_not_sum_to_one() -> None:
    """``L_GRR_Aggregator_IBU``'s matrix uses q = p1 q2 + q1 p2 (the k = 2 form, where 1 - q1 = p1) for
    q* = q1 p2 + (1 - q1) q2: its rows sum to 0.965 at k = 3, 0.115 at k = 100 (1 at k = 2), and
    only its diagonal p* is right."""
    sums = {k: float(_mfl_ibu_matrix(k).sum(axis=1)[0]) for k in (2, 3, 10, 100)}
    assert sums[2] == pytest.approx(1.0, rel=1e-12)
    assert round(sums[3], 3) == 0.965 and round(sums[100], 3) == 0.115
    for k in (3, 10, 100):
        a, (p, q) = _mfl_ibu_matrix(k), _one_report(k)
        assert a[0, 0] == pytest.approx(p, rel=1e-12) and a[0, 1] < q


def test_long1_multi_freq_ldpy_mi_is_unbiased_and_ibu_is_not() -> None:
    """Fed the exact expected frequencies of its own client's reports, multi-freq-ldpy's matrix
    inversion (``L_GRR_Aggregator_MI``) returns the true frequencies, at every k; its IBU returns
    them only for the uniform distribution: at k = 10 it is 0.127 off in the largest error of a
    frequency for Zipf(1) (f_i proportional to 1/i), 0.288 for Zipf(2), and 0.475 for a point mass."""
    for k in (3, 10, 100):
        p1, q1 = _prr(k)
        p2, q2 = grr_irr_paper(EPS_PERM, EPS_1, k)
        for f in (np.eye(k)[0], np.ones(k) / k, 1 / np.arange(1, k + 1) / np.sum(1 / np.arange(1, k + 1))):
            mi = _mfl_mi_long(_expected_frequencies(k, f), p1, q1, p2, q2)
            assert np.abs(mi - f).max() < 1e-12
    k = 10
    a = _mfl_ibu_matrix(k)

    def ibu_error(f: np.ndarray) -> float:
        return float(np.abs(_mfl_ibu(a, _expected_frequencies(k, f)) - f).max())

    zipf1 = 1 / np.arange(1, k + 1)
    zipf2 = zipf1**2
    assert ibu_error(np.ones(k) / k) < 1e-12
    assert round(ibu_error(zipf1 / zipf1.sum()), 3) == 0.127
    assert round(ibu_error(zipf2 / zipf2.sum()), 3) == 0.288
    assert round(ibu_error(np.eye(k)[0]), 3) == 0.475


def test_long1_multi_freq_ldpy_variance_uses_the_k2_coefficient_of_f() -> None:
    """``VAR_Long_Pure``'s m is f (2 p1 p2 - 2 p1 q2 + 2 q2 - 1) + q*: the coefficient of f equals
    p* - q* = (p1 - q1)(p2 - q2) only for k = 2. So it is right at k = 2 and at f = 0, and wrong
    elsewhere: with the printed IRR at k = 10 it gives 0.30 times the variance at f = 0.1, and a
    negative variance at f = 0.5."""
    for k in (2, 3, 10, 100):
        p1, q1 = _prr(k)
        p2, q2 = grr_irr_paper(EPS_PERM, EPS_1, k)
        p, q = chained(p1, q1, p2, q2)
        assert p - q == pytest.approx((p1 - q1) * (p2 - q2), rel=1e-12)
        assert _mfl_var_long_pure(p1, q1, p2, q2, f=0.0) == pytest.approx(chain_variance(p, q), rel=1e-12)
        coefficient = 2 * p1 * p2 - 2 * p1 * q2 + 2 * q2 - 1
        assert (coefficient == pytest.approx(p - q, rel=1e-12)) == (k == 2)
    p1, q1 = _prr(10)
    p2, q2 = grr_irr_paper(EPS_PERM, EPS_1, 10)
    p, q = chained(p1, q1, p2, q2)
    assert round(_mfl_var_long_pure(p1, q1, p2, q2, f=0.1) / chain_variance(p, q, f=0.1), 2) == 0.30
    assert _mfl_var_long_pure(p1, q1, p2, q2, f=0.5) < 0
