"""Closed-form accuracy of the unbiased estimator: variances, expected losses, worst cases.

One code path serves every pure mechanism: direct encoding (KRR, URR, IPRR) and unary
encoding (RAPPOR, OUE, IDUE) are both described by their support probabilities
:math:`p^*_y` (:math:`Q(y|y)`, or :math:`a_y`) and :math:`q^*_y` (:math:`Q(y|x \\ne y)`, or
:math:`b_y`), with gap :math:`\\delta_y = p^*_y - q^*_y` (one common gap, :math:`S_{D_S}` of
Li et al., for direct encoding). Per-item variances are the same for both families (each
support count is a sum of independent Bernoullis); they differ only in the covariances
between items, which no loss here needs. For unary encoding the fixed-population variance
is Gu et al. eq. 7.

The memoized chains (L-GRR, L-OUE, ...; :mod:`pldp.mechanisms.longitudinal`) are pure mechanisms
of one report too: every function here takes them through their chained support, and
:func:`longitudinal_variance` gives the closed form of the uniform ones from their two budgets
(Arcolezi et al. 2022; ERRATA LONG-1).

Two sampling models are offered (ERRATA IPRR-1):

* ``model="iid"``: users are drawn i.i.d. from ``p``, so each report is an independent
  draw from :math:`m = q^* + \\delta p` and :math:`C_y \\sim \\mathrm{Bin}(n, m_y)`. This is
  the model of Li et al., Theorem 3 (eq. 13-14).
* ``model="fixed"``: the dataset (``n_y = n p_y`` holders of each item) is fixed and only
  the perturbation is random; then
  :math:`\\mathrm{Var}(C_y) = n_y p^*_y (1 - p^*_y) + (n - n_y) q^*_y (1 - q^*_y)`, which is
  smaller (the between-user sampling term is gone).

References
----------
Li, Zhu, Zhang, Xie. Item-Oriented Personalized LDP for Discrete Distribution Estimation:
Theorems 3-6, Lemma 2; corrections from ``ERRATA.md`` (IPRR-1..4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from pldp._validation import as_frequencies, check_int
from pldp.budgets import ItemBudgets
from pldp.errors import ParameterError
from pldp.estimation.simplex import maximize_on_simplex
from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.direct import URR
from pldp.mechanisms.hashed_items import two_level_hashing
from pldp.mechanisms.longitudinal.formulas import longitudinal_variance
from pldp.mechanisms.uldp import URAP

__all__ = [
    "WorstCase",
    "expected_l1",
    "expected_l2",
    "hashing_against_uldp",
    "high_privacy_losses",
    "item_variance",
    "longitudinal_variance",
    "low_privacy_is_exact",
    "low_privacy_losses",
    "support_distribution",
    "worst_case",
]

Model = Literal["iid", "fixed"]
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gap(mechanism: Mechanism) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p_star, q_star = mechanism.support
    return p_star, q_star, p_star - q_star


def support_distribution(mechanism: Mechanism, p: np.ndarray) -> np.ndarray:
    """:math:`m_y = q^*_y + (p^*_y - q^*_y) p_y`: the probability that a report supports ``y``
    (for direct encoding, the output distribution :math:`m = pQ`; Li et al. eq. 7, 12)."""
    p = as_frequencies(p, mechanism.d)
    _, q_star, gap = _gap(mechanism)
    return q_star + gap * p


def item_variance(mechanism: Mechanism, p: np.ndarray, n: int, model: Model = "iid") -> np.ndarray:
    """Variance of each unbiased frequency estimate :math:`\\hat f_y` from ``n`` users.

    ``iid``: :math:`m_y(1-m_y) / (n \\delta_y^2)` (Li et al., proof of Thm 3).
    ``fixed``: :math:`[n_y p^*_y(1-p^*_y) + (n-n_y) q^*_y(1-q^*_y)] / (n \\delta_y)^2` with
    :math:`n_y = n p_y` (ERRATA IPRR-1).
    """
    n = check_int(n, "n", 1)
    p = as_frequencies(p, mechanism.d)
    p_star, q_star, gap = _gap(mechanism)
    if model == "iid":
        m = q_star + gap * p
        return m * (1.0 - m) / (n * gap**2)
    if model == "fixed":
        ny = n * p
        return (ny * p_star * (1 - p_star) + (n - ny) * q_star * (1 - q_star)) / (n * gap) ** 2
    raise ParameterError(f"model must be 'iid' or 'fixed', got {model!r}")


def expected_l2(mechanism: Mechanism, p: np.ndarray, n: int, model: Model = "iid") -> float:
    """Expected :math:`l_2` loss :math:`E\\sum_y(\\hat f_y - p_y)^2` of the unbiased estimator.

    With ``model="iid"`` this is Li et al. eq. 13,
    :math:`\\frac1n\\sum_x (p_x + r_x)(S^{-1} - p_x - r_x)`, for IPRR, and the textbook
    variance for KRR/URR. ``model="fixed"`` gives the fixed-population loss of ERRATA IPRR-1.
    """
    return float(item_variance(mechanism, p, n, model).sum())


def expected_l1(mechanism: Mechanism, p: np.ndarray, n: int, model: Model = "iid") -> float:
    """Large-``n`` expected :math:`l_1` loss, :math:`\\sqrt{2/\\pi}\\sum_y \\mathrm{sd}(\\hat f_y)`
    (Li et al. eq. 14 for ``model="iid"``; the normal approximation)."""
    return float(_SQRT_2_OVER_PI * np.sqrt(item_variance(mechanism, p, n, model)).sum())


@dataclass(frozen=True)
class WorstCase:
    """The distributions that maximize the expected losses, and the losses there.

    Attributes
    ----------
    p : ndarray
        Maximizer :math:`p^*` of the :math:`l_2` loss (Li et al. Lemma 2 for direct encoding).
    l2 : float
        Expected :math:`l_2` loss at ``p`` (eq. 19 for IPRR; the opt0 objective of Gu et al.
        eq. 8, divided by ``n``, for unary encoding with ``model="fixed"``).
    p_l1 : ndarray
        Maximizer of the large-``n`` :math:`l_1` loss (equal to ``p`` for direct encoding).
    l1 : float
        Expected :math:`l_1` loss at ``p_l1`` (eq. 20 for IPRR).
    support : ndarray of bool
        :math:`D^*`, the items with :math:`p^*_x > 0`.
    model : str
        Sampling model.
    """

    p: np.ndarray
    l2: float
    p_l1: np.ndarray
    l1: float
    support: np.ndarray
    model: str


def worst_case(mechanism: Mechanism, n: int, model: Model = "iid") -> WorstCase:
    """Worst case over the simplex of the expected losses of the unbiased estimator.

    ``model="iid"``: every loss :math:`\\sum_y g(m_y(1-m_y))` with concave increasing ``g`` is
    concave in ``p``. For direct encoding (one gap :math:`\\delta`) it is symmetric in
    :math:`m`, and its maximizer is the water-filling :math:`m^*_y = \\max(q^*_y, L)`, i.e.
    :math:`p^*_x = \\max(\\lambda - r_x, 0)` in Li et al.'s notation (Lemma 2, ERRATA
    IPRR-3), the same for :math:`l_1` and :math:`l_2`; so for unary encoding with one gap (OUE,
    RAPPOR), whose :math:`\\sum_y m_y = \\sum_y q^*_y + \\delta`. With per-item gaps (IDUE)
    the maximizers are found numerically (:func:`maximize_on_simplex`).

    ``model="fixed"``: the :math:`l_2` loss is linear in ``p``, so the worst case puts every
    user on one item: :math:`\\frac1n[\\sum_k \\frac{q_k(1-q_k)}{\\delta_k^2} + \\max_k
    \\frac{1 - p^*_k - q^*_k}{\\delta_k}]`, which for unary encoding is the opt0 objective of Gu
    et al. (eq. 8) divided by ``n``.
    """
    n = check_int(n, "n", 1)
    if model not in ("iid", "fixed"):
        raise ParameterError(f"model must be 'iid' or 'fixed', got {model!r}")
    p_star, q_star, gap = _gap(mechanism)
    d = mechanism.d

    def variance(p: np.ndarray) -> np.ndarray:
        return item_variance(mechanism, p / p.sum(), n, model)

    if model == "fixed":
        lin = (p_star * (1 - p_star) - q_star * (1 - q_star)) / gap**2  # slope of n * var in p
        p2 = np.zeros(d)
        p2[int(np.argmax(lin))] = 1.0

        def slope_l1(p: np.ndarray) -> np.ndarray:
            v = (q_star * (1 - q_star) / gap**2 + p * lin) / n
            with np.errstate(divide="ignore"):
                return lin / n / (2 * np.sqrt(np.maximum(v, 0.0)))

        p1 = maximize_on_simplex(slope_l1, d)
    elif np.allclose(gap, gap[0], rtol=1e-12, atol=0):
        # sum_y m_y = sum_y q_y + gap: 1 for direct encoding, d q + gap for unary (OUE, RAPPOR)
        level = _water_level(q_star, float(q_star.sum() + gap[0]))
        p2 = (np.maximum(q_star, level) - q_star) / gap
        p2 = p2 / p2.sum()
        p1 = p2
    else:

        def slope_l2(p: np.ndarray) -> np.ndarray:
            return (1 - 2 * (q_star + gap * p)) / gap

        def slope_l1(p: np.ndarray) -> np.ndarray:
            m = q_star + gap * p
            with np.errstate(divide="ignore", invalid="ignore"):
                return (1 - 2 * m) / (2 * np.sqrt(m * (1 - m)))

        p2 = maximize_on_simplex(slope_l2, d)
        p1 = maximize_on_simplex(slope_l1, d)
    l2 = float(variance(p2).sum())
    l1 = float(_SQRT_2_OVER_PI * np.sqrt(variance(p1)).sum())
    return WorstCase(p2, l2, p1, l1, p2 > 0, model)


def _water_level(floor: np.ndarray, total: float) -> float:
    """The ``L`` with ``sum(max(floor, L)) = total`` (``total >= sum(floor)``)."""
    f = np.sort(floor)
    k = np.arange(1, f.size + 1)
    # with the k smallest floors raised to L: L = (total - sum of the other floors) / k
    rest = f.sum() - np.cumsum(f)
    cand = (total - rest) / k
    nxt = np.append(f[1:], np.inf)
    ok = (cand >= f) & (cand <= nxt)
    return float(cand[np.flatnonzero(ok)[0]])


def _sensitive_eps(budgets: ItemBudgets | Mechanism) -> tuple[np.ndarray, int]:
    b = budgets if isinstance(budgets, ItemBudgets) else getattr(budgets, "budgets", None)
    if not isinstance(b, ItemBudgets):
        raise ParameterError(f"expected ItemBudgets or a mechanism built from them, got {type(budgets).__name__}")
    eps = b.epsilons[b.sensitive]
    if eps.size == 0:
        raise ParameterError("the budgets have no sensitive item")
    return eps, b.d


def high_privacy_losses(budgets: ItemBudgets | Mechanism, n: int) -> tuple[float, float]:
    """Worst-case ``(l2, l1)`` of IPRR in the high-privacy limit (Li et al. Theorem 5, eq. 21-22).

    With :math:`r_x = 1/\\varepsilon_x` (:math:`e^{\\varepsilon_x} - 1 \\approx \\varepsilon_x`) and
    :math:`R = \\sum_{x \\in D_S} r_x`, the worst-case item variance of IPRR (Lemma 2, eq. 19) is
    :math:`q_x(1-q_x)/(n S^2) \\approx r_x (R - r_x)/n` as :math:`\\varepsilon_{max} \\to 0`, so

    .. math::

        l_2 \\approx \\frac1n \\sum_{x \\in D_S} r_x (R - r_x)
        = \\frac1n \\sum_{x \\in D_S}\\sum_{x' \\in D_S\\setminus x}
        \\frac{1}{\\varepsilon_x\\varepsilon_{x'}}, \\qquad
        l_1 \\approx \\sqrt{\\frac{2}{n\\pi}} \\sum_{x \\in D_S} \\sqrt{r_x (R - r_x)}.

    ``l2`` is eq. 21. Eq. 22 as printed lacks the square root over the double sum (ERRATA
    IPRR-2), and even with it, :math:`\\sqrt{2|D_S|/(n\\pi)}\\sqrt{\\sum_x\\sum_{x' \\ne x}
    1/(\\varepsilon_x\\varepsilon_{x'})}` (what this function returned before) is only the
    Cauchy-Schwarz *upper bound* of the limit above, taken in the proof (B.5): the two agree
    only for equal budgets (1.3 % apart for budgets proportional to (1, 2, 3, 4), 10 % for
    (1, 4, 16, 64)).

    Both are leading terms as :math:`\\varepsilon_{max} \\to 0`. The terms dropped (``1/2`` in
    :math:`r_x`, the ``1`` in :math:`S^{-1} = 1 + \\sum r`, and the worst case's mass
    :math:`p^*`, which lies on :math:`D_N` when it is non-empty) are a relative
    :math:`O(\\varepsilon_{max})` of ``l2`` and of ``l1``, except that the items of a non-empty
    :math:`D_N` add :math:`\\sqrt{2/(n\\pi)}\\sqrt{|D_N| S^{-1} - 1}` to ``l1``, a relative
    :math:`O(\\sqrt{\\varepsilon_{max}})`. Use :func:`worst_case` for the exact value at any
    budgets.
    """
    n = check_int(n, "n", 1)
    eps, _ = _sensitive_eps(budgets)
    r = 1.0 / eps
    total = r.sum()
    per_item = r * (total - r)  # n times the worst-case variance of each sensitive item
    return float(per_item.sum()) / n, _SQRT_2_OVER_PI * float(np.sqrt(per_item).sum()) / math.sqrt(n)


def low_privacy_losses(budgets: ItemBudgets | Mechanism, n: int) -> tuple[float, float]:
    """Worst-case ``(l2, l1)`` when the worst case covers all of D (Li et al. Thm 6, eq. 23-24).

    .. math::

        l_2 = \\frac1n \\Big[\\sum_{x \\in D_S}\\frac{|D_S| + e^{\\varepsilon_x} - 1}
        {|D_S|(e^{\\varepsilon_x}-1)}\\Big]^2\\Big(1 - \\frac1{|D|}\\Big),\\qquad
        l_1 = \\sqrt{\\frac{2(|D|-1)}{n\\pi}}\\sum_{x \\in D_S}\\frac{|D_S| + e^{\\varepsilon_x} - 1}
        {|D_S|(e^{\\varepsilon_x}-1)}

    Eq. 23 as printed lacks the factor ``1/n`` (ERRATA IPRR-3). The formulas are exact
    exactly when :func:`low_privacy_is_exact` holds; the paper's condition
    :math:`\\varepsilon_{min} > \\ln(|D_N|+1)` does not guarantee it. Use :func:`worst_case`
    for the exact value in every regime.
    """
    n = check_int(n, "n", 1)
    eps, d = _sensitive_eps(budgets)
    ds = eps.size
    inv_s = float(np.sum((ds + np.expm1(eps)) / (ds * np.expm1(eps))))  # = 1 / S
    return inv_s**2 * (1 - 1 / d) / n, math.sqrt(2 * (d - 1) / (n * math.pi)) * inv_s


def low_privacy_is_exact(budgets: ItemBudgets | Mechanism) -> bool:
    """Whether the worst case is the uniform output (:math:`D^* = D`), i.e.
    :math:`\\max_x r_x S \\le 1/|D|`, so that :func:`low_privacy_losses` is exact."""
    eps, d = _sensitive_eps(budgets)
    r = 1.0 / np.expm1(eps)
    s = 1.0 / (1.0 + r.sum())
    return bool(r.max() * s <= 1.0 / d * (1 + 1e-12))


def hashing_against_uldp(eps_s: float, s: int, d: int, eps_n: float = math.inf) -> dict[str, float]:
    """The total variance at the uniform distribution (``sum_v n Var[f_hat_v]``) of OLH at ``eps_s``
    (every item sensitive), item-level hashing
    (:func:`~pldp.mechanisms.hashed_items.two_level_hashing`), and the ULDP mechanisms
    uRAP (``theta = 1/2``) and uRR with the same ``s`` sensitive items at ``eps_s``.

    Examples
    --------
    >>> out = hashing_against_uldp(1.0, 10, 1000)
    >>> out["item-level hashing"] < out["OLH"], out["uRAP"] < out["item-level hashing"]
    (True, True)
    """
    p = np.full(d, 1.0 / d)
    mask = np.zeros(d, dtype=bool)
    mask[:s] = True
    olh = two_level_hashing(eps_s, eps_s, s, d)
    item = two_level_hashing(eps_s, eps_n, s, d)
    out = {}
    for name, m in (("OLH", olh), ("item-level hashing", item)):
        v_s, v_n = m.variance(1.0 / d)
        out[name] = s * v_s + (d - s) * v_n
    out["uRAP"] = float(np.sum(item_variance(URAP(eps_s, mask), p, 1, "iid")))
    out["uRR"] = float(np.sum(item_variance(URR(eps_s, mask), p, 1, "iid")))
    return out
