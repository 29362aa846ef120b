"""Exact privacy arithmetic: is a ratio of integers at most :math:`e^\\varepsilon`?

Privacy claims of the integer-grid samplers (:mod:`pldp.channel.sampling`) are ratios of integers, and a
budget :math:`\\varepsilon` is a binary64 number, hence an exact rational. Whether
:math:`R \\le e^{\\varepsilon}` is decided here without rounding error: :func:`exp_bounds` gives
rational bounds :math:`lo \\le e^{x} \\le hi` (argument halving, a Taylor series with its
remainder bound, squaring back with outward rounding to a dyadic grid) that are refined until
they decide. Since :math:`e^{x}` is irrational for rational :math:`x \\ne 0` (Lindemann), the
refinement always ends.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

__all__ = ["epsilon_ceiling", "exp_bounds", "largest_within", "log_ratio", "ratio_within"]

#: Relative margin within which the floating-point pre-check defers to exact arithmetic.
_MARGIN = 1e-9


@lru_cache(maxsize=4096)
def exp_bounds(x: Fraction, bits: int = 64) -> tuple[Fraction, Fraction]:
    """Rational bounds ``(lo, hi)`` with ``lo <= e**x <= hi`` and ``hi / lo - 1`` about ``2**-bits``.

    Parameters
    ----------
    x : Fraction
        A non-negative rational.
    bits : int
        Working precision: the bounds are dyadic with ``bits + k + 8`` fraction bits, ``k`` the
        number of halvings.

    Examples
    --------
    >>> lo, hi = exp_bounds(Fraction(1))
    >>> float(lo) <= math.e <= float(hi), float(hi - lo) < 1e-17
    (True, True)
    """
    if x < 0:
        raise ValueError(f"exp_bounds needs x >= 0, got {x}")
    if x == 0:
        return Fraction(1), Fraction(1)
    k = 0
    y = x
    while y > Fraction(1, 2):
        y /= 2
        k += 1
    p = bits + k + 8
    scale = 1 << p
    tiny = Fraction(1, scale << 4)
    total, term, n = Fraction(0), Fraction(1), 0
    while True:
        total += term
        n += 1
        term = term * y / n
        if term < tiny:
            break
    # the remainder after the partial sum is at most term / (1 - y) <= 2 term, since y <= 1/2
    lo = Fraction(math.floor(total * scale), scale)
    hi = Fraction(math.ceil((total + 2 * term) * scale), scale)
    for _ in range(k):
        lo = Fraction(math.floor(lo * lo * scale), scale)
        hi = Fraction(math.ceil(hi * hi * scale), scale)
    return lo, hi


def log_ratio(num: int, den: int) -> float:
    """``ln(num / den)`` in floating point, for display (``inf`` when ``den == 0``)."""
    if den == 0:
        return math.inf
    return math.log(num) - math.log(den)


def ratio_within(num: int, den: int, epsilon: float | Fraction) -> bool:
    """Whether ``num / den <= e**epsilon``, decided exactly.

    ``num`` and ``den`` are non-negative integers (``den == 0`` is an infinite ratio, within only
    an infinite budget); ``epsilon`` is a budget ``>= 0`` or ``inf``, a float or an exact
    :class:`~fractions.Fraction` (e.g. the AvgID-LDP budget ``(e_i + e_j) / 2``). A floating-point comparison
    decides the clear cases; the close ones (within a relative ``1e-9``) are decided with
    :func:`exp_bounds`.

    Examples
    --------
    >>> ratio_within(271828182845904523, 10**17, 1.0)   # e rounded down
    True
    >>> ratio_within(271828182845904524, 10**17, 1.0)   # e rounded up
    False
    """
    if epsilon == math.inf:
        return True
    if den == 0:
        return False
    if num <= den:
        return True  # ratio <= 1 <= e**eps
    approx = log_ratio(num, den)
    eps_f = float(epsilon)
    if approx < eps_f * (1 - _MARGIN) - 1e-12:
        return True
    if approx > eps_f * (1 + _MARGIN) + 1e-12:
        return False
    ratio = Fraction(num, den)
    x = Fraction(epsilon)
    bits = 64
    while True:
        lo, hi = exp_bounds(x, bits)
        if ratio <= lo:
            return True
        if ratio > hi:
            return False
        bits *= 2


def largest_within(guess: int, lo: int, hi: int, within: Callable[[int], bool]) -> int | None:
    """The largest ``t`` in ``[lo, hi]`` with ``within(t)``, for a test true up to an edge and false
    above it (a claim decided exactly, e.g. by :func:`ratio_within`), found from a floating-point
    ``guess`` of the edge by single steps either way; None when ``within(lo)`` is false.

    The grid samplers round their parameters so: the float formula lands on the edge or a step
    beside it, and the exact claim decides.

    Examples
    --------
    >>> largest_within(10, 0, 100, lambda t: t * t <= 50)
    7
    >>> largest_within(3, 5, 9, lambda t: t < 5) is None
    True
    """
    t = min(max(guess, lo), hi)
    while t < hi and within(t + 1):
        t += 1  # the float guess was a step short
    while t >= lo and not within(t):
        t -= 1  # or a step long
    return t if t >= lo else None


def epsilon_ceiling(num: int, den: int, digits: int = 6) -> float:
    """The smallest ``digits``-decimal budget ``e`` with ``num / den <= e**e`` (exact; for claims).

    Examples
    --------
    >>> epsilon_ceiling(3, 1)   # ln 3 = 1.0986122886...
    1.098613
    """
    if den == 0:
        return math.inf
    step = 10.0**-digits
    e = max(0.0, math.ceil(log_ratio(num, den) / step) * step)
    e = round(e, digits)
    while not ratio_within(num, den, e):
        e = round(e + step, digits)
    return e
