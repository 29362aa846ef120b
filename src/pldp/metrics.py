"""Error metrics of the experiments in the papers pldp reproduces.

Every metric compares a true vector with an estimate of it, item by item:

* counts: :func:`mse`, :func:`nse`, :func:`relative_error`, :func:`re_top_k`,
  :func:`precision_top_k`, and :func:`mae` (which turns counts into frequencies itself);
* frequencies: :func:`l1`, :func:`l2`;
* either scale: :func:`max_abs_error` (MPLDP applies it to counts).

The last axis indexes the items. A 1-D pair of length ``d`` gives a float. A batch of
``trials`` estimates, shape ``(trials, d)``, gives one value per trial as an array of shape
``(trials,)`` (vectorised); ``true`` may then be one vector of length ``d`` shared by every
trial, or a ``(trials, d)`` array of its own. Inputs must be finite and the true values
non-negative; estimates may be negative (unbiased estimators give negative counts) and are
never truncated or renormalised here. Bad input raises :class:`~pldp.errors.ParameterError`
naming the argument and the offending entries.

Two things the papers share a name for differ, so mind the scale:

* "MSE" in Li et al. (eq. 25) and Gu et al. (Sec. VII) is a *total* squared count error
  divided by ``n`` (:func:`mse`), not a mean over items. It equals ``n`` times the
  :math:`l_2` loss of the frequencies: ``mse(c, c_hat) == n * l2(c / n, c_hat / n)``.
* MPLDP's NSE (Sec. VI) is the same quantity, square error over ``n`` (:func:`nse`).

References
----------
Li, Zhu, Zhang, Xie. Item-Oriented Personalized LDP for Discrete Distribution Estimation:
Sec. 3.4 (:math:`l_1`, :math:`l_2`), Sec. 7.1 eq. 25 (MSE, RE).
Gu, Li, Xiong, Cao. Providing Input-Discriminative Protection for LDP (ICDE 2020): Sec. VII
"Evaluation Metrics" (MSE, RE(k)), Sec. VII-B (precision of the top k).
Wu, Zhu, Zhang, Xie. Overcoming Challenges in PLDP (PLDP-FEBSF): Sec. 7.1 (MSE, MAE).
Feng, Zhang. MPLDP: Multi-Level Personalized LDP (IEEE Access 2024): Sec. VI (NSE), eq. 25 and
Table 3 (maximum absolute error).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from pldp._validation import _show, check_int
from pldp.errors import ParameterError

__all__ = [
    "l1",
    "l2",
    "mae",
    "max_abs_error",
    "mse",
    "nse",
    "precision_top_k",
    "re_top_k",
    "relative_error",
]

Metric = float | np.ndarray


def _as_array(values: Any, name: str) -> np.ndarray:
    """``values`` as a finite float array of shape ``(d,)`` or ``(trials, d)``, ``d >= 1``."""
    try:
        arr = np.asarray(values)
    except ValueError:  # ragged nested sequences
        raise ParameterError(f"{name} must be a 1-D or 2-D numeric array, got a ragged sequence") from None
    if arr.dtype.kind not in "iuf":
        raise ParameterError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim not in (1, 2):
        raise ParameterError(f"{name} must be 1-D (d,) or 2-D (trials, d), got shape {arr.shape}")
    if arr.shape[-1] == 0:
        raise ParameterError(f"{name} must hold at least one item, got shape {arr.shape}")
    arr = arr.astype(float, copy=False)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ParameterError(f"{name} must be finite; bad entries at {_where(bad)}: {_show(arr[bad])}")
    return arr


def _where(mask: np.ndarray) -> str:
    """Positions of the ``True`` entries: item indices (1-D) or ``(trial, item)`` pairs (2-D)."""
    pos = np.argwhere(mask)
    return _show([int(p[0]) for p in pos] if mask.ndim == 1 else [tuple(int(i) for i in p) for p in pos])


def _pair(true: Any, est: Any, true_name: str = "true", est_name: str = "est") -> tuple[np.ndarray, np.ndarray]:
    """Validate a (true, estimate) pair; both come back broadcast to one shape."""
    t = _as_array(true, true_name)
    e = _as_array(est, est_name)
    if t.shape[-1] != e.shape[-1]:
        raise ParameterError(f"{est_name} has {e.shape[-1]} items, expected {t.shape[-1]} (the length of {true_name})")
    if t.ndim == 2 and e.ndim == 2 and t.shape[0] != e.shape[0]:
        raise ParameterError(
            f"{true_name} has {t.shape[0]} trials and {est_name} has {e.shape[0]}; a 2-D batch needs one row per trial"
        )
    neg = t < 0
    if neg.any():
        raise ParameterError(f"{true_name} must be non-negative; negative entries at {_where(neg)}: {_show(t[neg])}")
    t, e = np.broadcast_arrays(t, e)
    return t, e


def _out(values: np.ndarray) -> Metric:
    """A float for a single pair, the per-trial array for a batch."""
    return float(values) if values.ndim == 0 else values


def _check_n(n: Any) -> float:
    """Return ``n`` as a finite positive float."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Real):
        raise ParameterError(f"n must be a positive real number, got {n!r}")
    value = float(n)
    if not math.isfinite(value) or value <= 0.0:
        raise ParameterError(f"n must be finite and > 0, got {n!r}")
    return value


def _total(t: np.ndarray, n: Any) -> float | np.ndarray:
    """``n`` if given, else the sum of the true counts (per trial for a batch)."""
    if n is not None:
        return _check_n(n)
    total = t.sum(axis=-1)
    zero = total <= 0
    if np.any(zero):
        where = "" if t.ndim == 1 or zero.all() else f" in trials {_show(np.flatnonzero(zero))}"
        raise ParameterError(f"the true counts sum to 0{where}, so n cannot default to their sum; pass n")
    return total


def _check_k(k: Any, d: int) -> int:
    k = check_int(k, "k", 1)
    if k > d:
        raise ParameterError(f"k must be <= the number of items d = {d}, got {k!r}")
    return k


def _top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest entries along the last axis, ties to the smaller index."""
    return np.argsort(-values, axis=-1, kind="stable")[..., :k]


def mse(true: Any, est: Any, n: Any = None) -> Metric:
    """Total squared count error over ``n``: "MSE" as Li et al. and Gu et al. define it.

    .. math:: \\mathrm{MSE} = \\sum_{x \\in \\mathcal D} \\frac{(f_x - \\hat f_x)^2}{n}

    with :math:`f_x` (resp. :math:`\\hat f_x`) the true (resp. estimated) *count* of item
    ``x`` (Li et al. eq. 25; Gu et al. Sec. VII "Evaluation Metrics",
    :math:`\\sum_i (\\hat c_i - c^*_i)^2 / n`). Despite the name it is a sum over items, not a
    mean; it equals ``n * l2(true / n, est / n)``.

    Parameters
    ----------
    true, est : array_like, shape (d,) or (trials, d)
        True and estimated counts.
    n : positive number, optional
        The number of users. Defaults to the sum of the true counts (per trial), which is
        ``n`` for single-item data; pass it for item-set data (Gu et al. Sec. VII, a user
        holds several items) or a histogram over several attributes.

    Returns
    -------
    float or ndarray of shape (trials,)

    Notes
    -----
    MPLDP (Feng & Zhang, Sec. VI) calls the same quantity NSE, :math:`\\mathrm{SE}/n` with SE the
    square error summed over all cells of the count histogram, and plots :math:`\\log_{10}` of
    it as "total MSE" (Fig. 3-4); :data:`nse` is this function. For MPLDP's concatenated
    ``l``-attribute histogram the true counts sum to ``l * n``, so pass ``n`` explicitly.

    See Also
    --------
    l2 : PLDP-FEBSF's MSE (it cites Wang & Bovik without a formula) is, in the usual sense,
        the mean over items of the squared frequency error, ``l2(p, p_hat) / d``.

    Examples
    --------
    >>> mse([6, 3, 1], [5, 5, 0])  # (1 + 4 + 1) / 10
    0.6
    >>> nse([6, 4, 3, 7], [5, 5, 2, 8], n=10)  # two attributes, 10 users: 4 / 10
    0.4
    """
    t, e = _pair(true, est)
    return _out(np.sum((e - t) ** 2, axis=-1) / _total(t, n))


#: MPLDP's standardized square error :math:`\mathrm{NSE} = \mathrm{SE}/n` (Feng & Zhang, Sec. VI) is
#: the same quantity as :func:`mse`: the square error summed over every cell of the count
#: histogram (for several attributes, their histograms concatenated), divided by ``n``.
nse = mse


def relative_error(true: Any, est: Any) -> Metric:
    """Li et al.'s relative error, summed over the items with a positive true count.

    .. math:: \\mathrm{RE} = \\sum_{x \\in \\mathcal D,\\ f_x > 0} \\frac{|f_x - \\hat f_x|}{f_x}

    with counts :math:`f_x`, :math:`\\hat f_x` (Li et al. eq. 25, a sum, not a mean).

    Eq. 25 is undefined for an item with :math:`f_x = 0`; such items are *skipped* (they
    contribute nothing however wrong their estimate), so if every true count is 0 the result
    is 0. Filter the domain first if that is not what an experiment needs.

    Parameters
    ----------
    true, est : array_like, shape (d,) or (trials, d)
        True and estimated counts.

    Returns
    -------
    float or ndarray of shape (trials,)

    Examples
    --------
    >>> relative_error([4, 2, 0], [3, 3, 5])  # 1/4 + 1/2; the zero-count item is skipped
    0.75
    """
    t, e = _pair(true, est)
    pos = t > 0
    terms = np.abs(e - t) / np.where(pos, t, 1.0)
    return _out(np.sum(np.where(pos, terms, 0.0), axis=-1))


def re_top_k(true: Any, est: Any, k: int) -> Metric:
    """Gu et al.'s RE(k): mean relative count error over the true top-``k`` items.

    .. math:: \\mathrm{RE}(k) = \\frac1k \\sum_{i \\in \\mathcal T(k)}
              \\frac{|\\hat c_i - c^*_i|}{c^*_i}

    with :math:`\\mathcal T(k)` the ``k`` items of largest *true* count (Gu et al. Sec. VII
    "Evaluation Metrics"). Ties in the true counts are broken by index: of equal counts the
    smaller item index ranks higher, so :math:`\\mathcal T(k)` is deterministic.

    Parameters
    ----------
    true, est : array_like, shape (d,) or (trials, d)
        True and estimated counts.
    k : int
        ``1 <= k <= d``.

    Returns
    -------
    float or ndarray of shape (trials,)

    Raises
    ------
    ParameterError
        If an item of :math:`\\mathcal T(k)` has a true count of 0 (fewer than ``k`` items
        occur), where RE(k) is undefined.

    Examples
    --------
    >>> re_top_k([10, 2, 4, 4], [5, 9, 3, 6], k=2)  # tie 4 = 4 -> T(2) = {0, 2}: (5/10 + 1/4) / 2
    0.375
    """
    t, e = _pair(true, est)
    k = _check_k(k, t.shape[-1])
    top = _top_k(t, k)
    c = np.take_along_axis(t, top, axis=-1)
    zero = c == 0
    if zero.any():
        where = "" if t.ndim == 1 else f" (trials {_show(np.flatnonzero(zero.any(axis=-1)))})"
        raise ParameterError(
            f"re_top_k is undefined when a true top-k item has count 0: k={k} exceeds the number "
            f"of items with a positive true count{where}"
        )
    c_hat = np.take_along_axis(e, top, axis=-1)
    return _out(np.mean(np.abs(c_hat - c) / c, axis=-1))


def precision_top_k(true: Any, est: Any, k: int) -> Metric:
    """Share of the estimated top-``k`` items that are in the true top ``k``.

    .. math:: \\mathrm{precision}(k) = \\frac{|\\hat{\\mathcal T}(k) \\cap \\mathcal T(k)|}{k}

    where :math:`\\hat{\\mathcal T}(k)` is ranked by the estimated and :math:`\\mathcal T(k)`
    by the true counts: "the proportion of correct selections over all predicted top frequent
    items" (Gu et al. Sec. VII-B, Fig. 6). Both rankings break ties by index (the smaller
    item index ranks higher), so with tied counts at the ``k``-th place the sets, and the
    precision, are deterministic but depend on the item order.

    Parameters
    ----------
    true, est : array_like, shape (d,) or (trials, d)
        True and estimated counts (or frequencies: only the ranking matters).
    k : int
        ``1 <= k <= d``.

    Returns
    -------
    float or ndarray of shape (trials,)
        In ``{0, 1/k, ..., 1}``.

    Examples
    --------
    >>> precision_top_k([10, 8, 1, 5], [9, 2, 7, 6], k=2)  # {0, 2} vs {0, 1}
    0.5
    """
    t, e = _pair(true, est)
    k = _check_k(k, t.shape[-1])
    in_true = np.zeros(t.shape, dtype=bool)
    np.put_along_axis(in_true, _top_k(t, k), True, axis=-1)
    hits = np.take_along_axis(in_true, _top_k(e, k), axis=-1)
    return _out(hits.sum(axis=-1) / k)


def mae(true: Any, est: Any, n: Any = None) -> Metric:
    """Mean absolute error of the frequencies (PLDP-FEBSF Sec. 7.1).

    .. math:: \\mathrm{MAE} = \\frac1d \\sum_{x=1}^{d} |\\hat f_x - f_x|, \\qquad
              f_x = c_x / n,\\ \\hat f_x = \\hat c_x / n

    PLDP-FEBSF uses MAE (citing Hodson 2022) without writing it out; this is the standard
    mean over the ``d`` items, on the frequency scale its estimators output. The estimate is
    divided by the same ``n`` as the truth, not renormalised by its own sum.

    Parameters
    ----------
    true, est : array_like, shape (d,) or (trials, d)
        True and estimated counts. Frequencies work too: if ``true`` sums to 1, the default
        ``n`` is 1 and the values are used as given.
    n : positive number, optional
        The number of users; defaults to the sum of the true counts (per trial).

    Returns
    -------
    float or ndarray of shape (trials,)

    Examples
    --------
    >>> mae([6, 3, 1], [5, 5, 0])  # |f_hat - f| = 0.1, 0.2, 0.1
    0.13333333333333333
    """
    t, e = _pair(true, est)
    return _out(np.mean(np.abs(e - t), axis=-1) / _total(t, n))


def l1(true_p: Any, est_p: Any) -> Metric:
    """:math:`l_1` loss :math:`\\sum_x |\\hat{\\mathbf p}_x - \\mathbf p_x|` (Li et al. Sec. 3.4).

    Parameters
    ----------
    true_p, est_p : array_like, shape (d,) or (trials, d)
        True and estimated frequencies. Neither is required to sum to 1 and nothing is
        normalised: the loss is computed on whatever scale is passed.

    Returns
    -------
    float or ndarray of shape (trials,)

    Examples
    --------
    >>> l1([0.5, 0.5, 0.0], [0.25, 0.5, 0.25])
    0.5
    """
    t, e = _pair(true_p, est_p, "true_p", "est_p")
    return _out(np.sum(np.abs(e - t), axis=-1))


def l2(true_p: Any, est_p: Any) -> Metric:
    """:math:`l_2` loss :math:`\\sum_x (\\hat{\\mathbf p}_x - \\mathbf p_x)^2` (Li et al. Sec. 3.4).

    The sum of squares, with no square root (the loss of eq. 13 and
    :func:`pldp.theory.expected_l2`).

    Parameters
    ----------
    true_p, est_p : array_like, shape (d,) or (trials, d)
        True and estimated frequencies (not normalised here).

    Returns
    -------
    float or ndarray of shape (trials,)

    Examples
    --------
    >>> l2([0.5, 0.5, 0.0], [0.25, 0.5, 0.25])
    0.125
    """
    t, e = _pair(true_p, est_p, "true_p", "est_p")
    return _out(np.sum((e - t) ** 2, axis=-1))


def max_abs_error(true: Any, est: Any) -> Metric:
    """Maximum absolute error over the items, MPLDP's :math:`d_k` (Feng & Zhang eq. 25).

    .. math:: d_k = \\max_{1 \\le j \\le k_i} |\\hat{\\mathbf H}_{ij} - \\mathbf H_{ij}|

    MPLDP takes it per attribute ``i`` on the count histogram :math:`\\mathbf H_i` (its
    Table 3 averages it over the attributes); the formula is scale-free, so pass counts to
    reproduce that, or frequencies for the frequency scale (counts divided by ``n``). Call it
    once per attribute: attributes of different sizes ``k_i`` do not form a batch.

    Parameters
    ----------
    true, est : array_like, shape (d,) or (trials, d)
        True and estimated values of one attribute.

    Returns
    -------
    float or ndarray of shape (trials,)

    Examples
    --------
    >>> max_abs_error([6, 3, 1], [5, 5, 0])
    2.0
    """
    t, e = _pair(true, est)
    return _out(np.max(np.abs(e - t), axis=-1))
