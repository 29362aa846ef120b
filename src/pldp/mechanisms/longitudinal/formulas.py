"""Closed forms of the memoized chains: the instantaneous response that meets :math:`\\varepsilon_1`, and variances.

A chain runs a permanent randomized response (PRR) with support probabilities
:math:`(p_1, q_1)` and an instantaneous one (IRR) with :math:`(p_2, q_2)`: for a direct chain the
IRR keeps the PRR's item w.p. :math:`p_2` and reports each other item w.p. :math:`q_2`; for a unary
chain it keeps a set bit w.p. :math:`p_2` and raises a clear one w.p. :math:`q_2`. One report then
supports the user's item w.p. :math:`p^* = p_1 p_2 + (1 - p_1) q_2` and another item w.p.
:math:`q^* = q_1 p_2 + (1 - q_1) q_2` (:func:`chained`), so :math:`p^* - q^* = (p_1 - q_1)(p_2 - q_2)`.

* Direct chain (L-GRR): its one-report channel is again :math:`\\delta I + 1 q^{*T}` with
  :math:`\\delta = \\delta_1 \\delta_2`; the ratio :math:`p^*/q^* = e^{\\varepsilon_1}` has the one
  solution (:func:`grr_irr`)

  .. math::

      e^{\\varepsilon_{IRR}} = \\frac{e^{\\varepsilon_\\infty + \\varepsilon_1} + (k - 2) e^{\\varepsilon_1} - (k - 1)}
                                   {e^{\\varepsilon_\\infty} - e^{\\varepsilon_1}},

  and then the one-report channel *is* GRR at :math:`\\varepsilon_1`. Arcolezi et al.'s formula
  (:func:`grr_irr_paper`) writes :math:`q^* = p_1 q_2 + q_1 p_2`, true only for :math:`k = 2`; for
  :math:`k > 2` one report of its chain is GRR at a budget below :math:`\\varepsilon_1` (0.948 at
  :math:`k = 3`, 0.166 at :math:`k = 100`, for :math:`\\varepsilon_\\infty = 2`,
  :math:`\\varepsilon_1 = 1`). A utility bug, not a privacy bug: both claims still hold, the printed
  IRR is tight only for :math:`k = 2`, and its variance is larger (89.6 times at :math:`k = 100`,
  :math:`f = 0`; ``docs/errata.md``, LONG-1).
* Unary chains (Arcolezi, Couchot, Bouna, Xiao 2022): the PRR is OUE or SUE at
  :math:`\\varepsilon_\\infty` and the IRR of the OUE shape (:math:`p_2 = 1/2`) or the SUE shape
  (:math:`p_2 + q_2 = 1`), with :math:`p^*(1-q^*)/(q^*(1-p^*)) = e^{\\varepsilon_1}` (:func:`ue_irr`,
  the root of a quadratic). L-OSUE (OUE then SUE) gives :math:`p^* = 1/2`, hence
  :math:`q^* = 1/(e^{\\varepsilon_1} + 1)`: its one-report channel *is* OUE at :math:`\\varepsilon_1`,
  the unary encoding of least variance, which is why it is their best.
* Any target :math:`(p, q)` that some IRR reaches from :math:`(p_1, q_1)` (:func:`garbling`):
  exactly when :math:`p/q \\le p_1/q_1` and :math:`(1-q)/(1-p) \\le (1-q_1)/(1-p_1)`.

Variances (:func:`chain_variance`): the unbiased estimator of frequency :math:`f` from ``n`` users
has variance :math:`m(1-m)/(n (p^* - q^*)^2)`, :math:`m = q^* + f (p^* - q^*)` (Arcolezi et al.'s
eq.; multi-freq-ldpy's ``VAR_Long_Pure`` has the same form but the :math:`k = 2` coefficient of
:math:`f`, right only for :math:`k = 2` or :math:`f = 0`: ERRATA LONG-1).
"""

from __future__ import annotations

import math

import numpy as np

from pldp.errors import BudgetError, ParameterError

__all__ = [
    "UE_SHAPES",
    "chain_variance",
    "chained",
    "garbling",
    "grr_irr",
    "grr_irr_paper",
    "longitudinal_variance",
    "ue_irr",
    "ue_prr",
]

#: The shapes of a unary randomized response: OUE (keep a set bit w.p. 1/2) and SUE (``p + q = 1``).
UE_SHAPES = ("oue", "sue")


def chained(p1: float, q1: float, p2: float, q2: float) -> tuple[float, float]:
    """:math:`(p^*, q^*)` of the chain of :math:`(p_1, q_1)` then :math:`(p_2, q_2)` (module docstring)."""
    return p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2


def _check(eps_perm: float, eps_1: float) -> None:
    if not (0 < eps_1 < eps_perm < math.inf):
        raise BudgetError(
            "need 0 < eps_1 < eps_perm < inf (one report, then any number of reports of one value); "
            f"got {eps_1!r}, {eps_perm!r}"
        )


def grr_irr(eps_perm: float, eps_1: float, k: int) -> tuple[float, float]:
    """:math:`(p_2, q_2)` of L-GRR's IRR: GRR over ``k`` items whose chain with GRR at ``eps_perm`` is
    GRR at ``eps_1`` exactly (module docstring).

    Examples
    --------
    >>> p2, q2 = grr_irr(2.0, 1.0, 3)
    >>> p1, q1 = math.exp(2) / (math.exp(2) + 2), 1 / (math.exp(2) + 2)
    >>> p, q = chained(p1, q1, p2, q2)
    >>> round(math.log(p / q), 12)
    1.0
    """
    _check(eps_perm, eps_1)
    a, b = math.exp(eps_perm), math.exp(eps_1)
    e_irr = (a * b + (k - 2) * b - (k - 1)) / (a - b)
    return e_irr / (e_irr + k - 1), 1.0 / (e_irr + k - 1)


def grr_irr_paper(eps_perm: float, eps_1: float, k: int) -> tuple[float, float]:
    """:math:`(p_2, q_2)` of L-GRR's IRR as Arcolezi et al. (and multi-freq-ldpy 0.2.5) compute it:
    tight for ``k = 2`` only; for ``k > 2`` one report meets a budget below ``eps_1`` (a utility
    bug, not a privacy bug: ERRATA LONG-1; :func:`grr_irr` is the exact one)."""
    _check(eps_perm, eps_1)
    a, b = math.exp(eps_perm), math.exp(eps_1)
    p2 = (a * b - 1) / (-k * b + (k - 1) * a + b + a * b - 1)
    return p2, (1 - p2) / (k - 1)


def ue_prr(shape: str, eps: float) -> tuple[float, float]:
    """:math:`(p, q)` of OUE (:math:`1/2, 1/(e^\\varepsilon + 1)`) or SUE
    (:math:`e^{\\varepsilon/2}/(e^{\\varepsilon/2} + 1)`, its complement) at ``eps``."""
    if shape == "oue":
        return 0.5, 1.0 / (math.exp(eps) + 1.0)
    half = math.exp(eps / 2)
    return half / (half + 1.0), 1.0 / (half + 1.0)


def _irr(shape: str, t: float) -> tuple[float, float]:
    return (0.5, t) if shape == "oue" else (t, 1.0 - t)


def ue_irr(p1: float, q1: float, eps_1: float, shape: str) -> tuple[float, float]:
    """The IRR :math:`(p_2, q_2)` of the OUE shape (:math:`p_2 = 1/2`) or the SUE shape
    (:math:`q_2 = 1 - p_2`) whose chain with the PRR :math:`(p_1, q_1)` has one-report ratio
    :math:`p^*(1-q^*)/(q^*(1-p^*)) = e^{\\varepsilon_1}` exactly (up to rounding).

    The ratio falls from the PRR's own (or, for the OUE shape, that of :math:`q_2 \\to 0`) to 1 as
    :math:`q_2 \\to p_2`; the equation is a quadratic in the IRR's free parameter, solved by bracketing.

    Raises
    ------
    BudgetError
        ``eps_1`` is at or above what the shape can reach from this PRR.

    Examples
    --------
    L-OSUE's IRR (Arcolezi et al.; multi-freq-ldpy's closed form):

    >>> p1, q1 = ue_prr("oue", 2.0)
    >>> p2, q2 = ue_irr(p1, q1, 1.0, "sue")
    >>> a, b = math.exp(2.0), math.exp(1.0)
    >>> math.isclose(p2, (1 - a * b) / (b - a - a * b + 1), rel_tol=1e-12)  # brentq: to 4 eps, either side
    True
    """
    target = math.log(math.expm1(eps_1)) if eps_1 < 30 else eps_1  # compare log(ratio - 1): no cancellation

    def excess(t: float) -> float:
        p, q = chained(p1, q1, *_irr(shape, t))
        return math.log((p - q) / (q * (1 - p))) - target  # log(ratio - 1) = log((p - q) / (q (1 - p)))

    lo, hi = (1e-300, 0.5) if shape == "oue" else (0.5, 1.0 - 1e-16)
    inner = hi - 1e-12 if shape == "oue" else lo + 1e-12  # near the uninformative end
    outer = lo if shape == "oue" else hi
    if not excess(outer) > 0:
        raise BudgetError(
            f"eps_1 = {eps_1:g} is too close to the permanent response's budget for an IRR of the {shape.upper()} "
            "shape: no such IRR reaches it (choose a smaller eps_1)"
        )
    if excess(inner) > 0:
        raise BudgetError(f"eps_1 = {eps_1:g} is too small for the double-precision grid of the IRR")
    from scipy.optimize import (
        brentq,  # scipy is imported where it is used: `import pldp` and the clients load without it
    )

    t = float(brentq(excess, min(outer, inner), max(outer, inner), xtol=1e-300, rtol=4 * np.finfo(float).eps))
    return _irr(shape, t)


def garbling(p1: float, q1: float, p: float, q: float) -> tuple[float, float]:
    """The IRR :math:`(p_2, q_2)` that takes the bit probabilities :math:`(p_1, q_1)` to :math:`(p, q)`:
    :math:`p_2 - q_2 = (p - q)/(p_1 - q_1)`, :math:`q_2 = q - q_1 (p_2 - q_2)`.

    It exists (both in [0, 1]) exactly when :math:`p/q \\le p_1/q_1` and
    :math:`(1 - q)/(1 - p) \\le (1 - q_1)/(1 - p_1)`; the result is clipped into [0, 1] (the caller
    checks the chain exactly).

    Examples
    --------
    L-OSUE's IRR is the garbling of OUE at :math:`\\varepsilon_\\infty` into OUE at :math:`\\varepsilon_1`:

    >>> p1, q1 = ue_prr("oue", 2.0)
    >>> p2, q2 = garbling(p1, q1, *ue_prr("oue", 1.0))
    >>> math.isclose(p2, ue_irr(p1, q1, 1.0, "sue")[0], rel_tol=1e-12), round(p2 + q2, 12)
    (True, 1.0)
    """
    g = (p - q) / (p1 - q1)
    q2 = q - q1 * g
    return min(max(q2 + g, 0.0), 1.0), min(max(q2, 0.0), 1.0)


def chain_variance(p_star: float, q_star: float, n: int = 1, f: float = 0.0) -> float:
    """Variance of the unbiased frequency estimate of an item of frequency ``f`` from ``n`` reports
    of support probabilities :math:`(p^*, q^*)`: :math:`m(1-m)/(n(p^*-q^*)^2)`, :math:`m = q^* + f(p^* - q^*)`."""
    m = q_star + f * (p_star - q_star)
    return m * (1 - m) / (n * (p_star - q_star) ** 2)


def longitudinal_variance(protocol: str, eps_perm: float, eps_1: float, k: int, n: int = 1, f: float = 0.0) -> float:
    """The closed-form variance of one round of a uniform memoized chain (real-valued parameters):
    ``protocol`` one of ``"L-GRR"``, ``"L-GRR (paper)"`` (Arcolezi et al.'s IRR, ERRATA LONG-1),
    ``"L-OUE"``, ``"L-OSUE"``, ``"L-SUE"``, ``"L-SOUE"``.

    Examples
    --------
    L-OSUE's one report is OUE at :math:`\\varepsilon_1`: :math:`4 e^{\\varepsilon_1}/(e^{\\varepsilon_1} - 1)^2`.

    >>> v = longitudinal_variance("L-OSUE", 2.0, 1.0, 100)
    >>> round(v / (4 * math.e / (math.e - 1) ** 2), 9)
    1.0
    """
    if protocol in ("L-GRR", "L-GRR (paper)"):
        a = math.exp(eps_perm)
        p1, q1 = a / (a + k - 1), 1 / (a + k - 1)
        p2, q2 = (grr_irr if protocol == "L-GRR" else grr_irr_paper)(eps_perm, eps_1, k)
        return chain_variance(*chained(p1, q1, p2, q2), n, f)
    shapes = {"L-OUE": ("oue", "oue"), "L-OSUE": ("oue", "sue"), "L-SUE": ("sue", "sue"), "L-SOUE": ("sue", "oue")}
    if protocol not in shapes:
        raise ParameterError(f"unknown protocol {protocol!r}; choose one of {['L-GRR', 'L-GRR (paper)', *shapes]}")
    _check(eps_perm, eps_1)
    first, second = shapes[protocol]
    p1, q1 = ue_prr(first, eps_perm)
    return chain_variance(*chained(p1, q1, *ue_irr(p1, q1, eps_1, second)), n, f)
