"""Local hashing with item-level budgets: the derivation, the two-level keep probabilities, the exact check.

A local-hashing user with item ``x`` draws a hash function ``h`` from a family mapping the ``d``
items onto ``g`` values and reports ``(h, y)``: ``y = h(x)`` with probability :math:`a_x`, any
other value with probability :math:`b_x = (1 - a_x)/(g - 1)` each. With a keep probability per
item (what IPRR and IDUE do for their channels) the report's law is

.. math::

    \\Pr[(h, y) \\mid x] = \\Pr[h]\\, \\bigl(a_x [y = h(x)] + b_x [y \\ne h(x)]\\bigr).

**Privacy.** For two items :math:`x \\ne x'` the family has functions with ``h(x) = h(x')`` and
with ``h(x) != h(x')``, so the largest ratio is :math:`\\max(a_x / b_{x'}, a_{x'} / b_x)` (a
report ``y = h(x) != h(x')``) and MinID-LDP, a budget :math:`\\min(\\varepsilon_x,
\\varepsilon_{x'})` for every pair, is

.. math::

    (g - 1)\\, a_x \\le e^{\\min(\\varepsilon_x, \\varepsilon_{x'})} (1 - a_{x'})
    \\qquad \\text{for all } x \\ne x'.

These constraints are linear in the keeps. Unlike direct encoding (IPRR), every pair meets on
every output: a hash value never names an item. So no item can be revealed; a non-sensitive
item's keep can grow only as far as the sensitive items' allow: with two levels
(:math:`\\varepsilon_S < \\varepsilon_N`), the pair constraints give
:math:`a_S + a_N \\le 2 e^{\\varepsilon_S}/(e^{\\varepsilon_S} + g - 1)`: raising :math:`a_N`
above OLH's keep at :math:`\\varepsilon_S` costs the sensitive items at least as much.

**Estimation.** With a pairwise-uniform family a report supports ``v != x`` (``h(v) = y``) with
probability :math:`a_x/g + (1 - 1/g) b_x = 1/g` whatever :math:`a_x`, so the support count
:math:`C_v` has mean :math:`n_v a_v + (n - n_v)/g` and
:math:`\\hat f_v = (C_v/n - 1/g)/(a_v - 1/g)` is unbiased, with variance

.. math::

    \\operatorname{Var}[\\hat f_v] = \\frac{f_v a_v (1 - a_v) + (1 - f_v) \\frac1g (1 - \\frac1g)}{n (a_v - 1/g)^2}.

**Against ULDP.** uRR and uRAP (:class:`~pldp.URR`, :class:`~pldp.URAP`) spend nothing on a
non-sensitive item because an output may *reveal* it (an invertible output); a hash value cannot,
so the item-level hashing keeps every pair at the smaller budget and gains much less
(:func:`pldp.theory.hashing_against_uldp`; ``docs/guide/notions.md``). What it keeps is the stronger claim:
no input is ever revealed.

This module is the derivation and its exact check on the ``2**32`` grid; an item-level hashing
oracle with a deployable node is not built (the hashed node holds one keep).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from scipy.optimize import minimize_scalar

from pldp._validation import check_epsilon, check_int
from pldp.channel.exact import largest_within, ratio_within
from pldp.channel.sampling import GRID
from pldp.errors import ParameterError

__all__ = ["TwoLevelHashing", "pair_ratios_within", "two_level_hashing"]


@dataclass(frozen=True)
class TwoLevelHashing:
    """Item-level local hashing with ``s`` sensitive items at ``eps_s`` and ``d - s`` at ``eps_n``.

    ``w_s`` and ``w_n`` are the integer weights on the ``2**32`` grid: an item's other values each
    have probability ``w / 2**32``, its own ``1 - (g - 1) w / 2**32``.
    """

    eps_s: float
    eps_n: float
    s: int
    d: int
    g: int
    w_s: int
    w_n: int

    @property
    def keeps(self) -> tuple[Fraction, Fraction]:
        """``(a_S, a_N)``, exactly."""
        return tuple(Fraction(GRID - (self.g - 1) * w, GRID) for w in (self.w_s, self.w_n))  # type: ignore[return-value]

    def variance(self, f: float = 0.0) -> tuple[float, float]:
        """``n Var[f_hat_v]`` of a sensitive and of a non-sensitive item of frequency ``f`` (module docstring)."""
        q = 1.0 / self.g
        out = []
        for a in (float(k) for k in self.keeps):
            out.append((f * a * (1 - a) + (1 - f) * q * (1 - q)) / (a - q) ** 2)
        return out[0], out[1]

    def total_variance(self) -> float:
        """The sum over items of ``n Var[f_hat_v]`` at ``f = 0``: what the keeps minimise."""
        v_s, v_n = self.variance()
        return self.s * v_s + (self.d - self.s) * v_n

    def holds(self) -> bool:
        """MinID-LDP decided exactly on the grid (:func:`pair_ratios_within`)."""
        return pair_ratios_within(self.g, (self.w_s, self.w_n), (self.eps_s, self.eps_n), (self.s, self.d - self.s))


def pair_ratios_within(g: int, weights: tuple[int, ...], epsilons: tuple[float, ...], sizes: tuple[int, ...]) -> bool:
    """Whether every pair of distinct items meets :math:`a_x/b_{x'} \\le e^{\\min(\\varepsilon_x, \\varepsilon_{x'})}`.

    Items come in levels: ``sizes[i]`` items of weight ``weights[i]`` and budget ``epsilons[i]``;
    two items of one level are a pair only if the level holds two. Decided exactly
    (:func:`~pldp.channel.exact.ratio_within`): ``a_x / b_x' = (2**32 - (g - 1) w_x) / w_x'``.
    That pair ratio is the largest only where every keep is above ``1/g`` (``a > b``: a report
    supports its holder's item likelier than another's), so weights with ``a <= b`` at some level
    are refused (False): there ``b_x / a_x'`` would be the ratio to bound, and such keeps estimate
    nothing (:math:`a_v - 1/g \\le 0`).
    """
    if any(GRID - (g - 1) * w <= w for w, n in zip(weights, sizes, strict=True) if n):
        return False
    for i, (w_i, e_i, n_i) in enumerate(zip(weights, epsilons, sizes, strict=True)):
        for j, (w_j, e_j, n_j) in enumerate(zip(weights, epsilons, sizes, strict=True)):
            if n_i == 0 or n_j == 0 or (i == j and n_i < 2):
                continue
            if w_j <= 0 or not ratio_within(GRID - (g - 1) * w_i, w_j, min(e_i, e_j)):
                return False
    return True


def _keep_n(a_s: float, e_s: float, e_n: float, g: int, pairs_n: bool) -> float:
    """The largest non-sensitive keep the pair constraints allow beside a sensitive keep ``a_s``."""
    big = g - 1
    cap = min(e_s * (1 - a_s) / big, 1 - big * a_s / e_s)
    if pairs_n:
        cap = min(cap, e_n / (e_n + big))
    return cap


def _on_grid(a_s: float, a_n: float, eps: tuple[float, float], g: int, sizes: tuple[int, int]) -> tuple[int, int]:
    """Integer weights near the keeps ``(a_s, a_n)`` that hold exactly: rounded up (a larger weight
    lowers the item's keep and raises what it allows the other) and raised a step at a time until
    they hold; then the non-sensitive weight lowered as far as it holds (its keep the largest the
    sensitive weight allows: one grid step more fails)."""
    w = [math.ceil((1 - a) * GRID / (g - 1)) for a in (a_s, a_n)]
    for _ in range(64):
        if pair_ratios_within(g, (w[0], w[1]), eps, sizes):
            break
        w = [v + 1 for v in w]
    else:  # pragma: no cover (the ideal keeps hold, and a few steps absorb the rounding)
        raise ParameterError("no grid weights hold for these keeps")
    tight = largest_within(-w[1], -w[1], -1, lambda v: pair_ratios_within(g, (w[0], -v), eps, sizes))
    return w[0], -tight if tight is not None else w[1]


def two_level_hashing(eps_s: float, eps_n: float, s: int, d: int, g: int | None = None) -> TwoLevelHashing:
    """The keeps of item-level local hashing that minimise the total variance at ``f = 0``.

    Parameters
    ----------
    eps_s, eps_n : float
        The sensitive and the non-sensitive items' budgets, ``eps_s <= eps_n`` (``inf`` allowed for ``eps_n``).
    s : int
        Number of sensitive items, ``1 <= s < d``.
    d : int
        Number of items.
    g : int, optional
        Hash range; default the best found scanning up from 2 until 8 ranges in a row do worse (the
        total variance is unimodal in ``g`` in every case measured; at most 4,096).

    Notes
    -----
    For a sensitive keep ``a_S`` the best non-sensitive keep is the largest the pairs allow
    (:math:`a_N \\le e^{\\varepsilon_S}(1 - a_S)/(g-1)`, :math:`a_N \\le 1 - (g-1) a_S / e^{\\varepsilon_S}`,
    and OLH's keep at :math:`\\varepsilon_N` when two non-sensitive items are a pair); the total
    :math:`s V(a_S) + (d - s) V(a_N)` is then minimised over ``a_S`` (bounded scalar search),
    and the keeps are put on the grid so that :meth:`TwoLevelHashing.holds`.

    Examples
    --------
    >>> m = two_level_hashing(1.0, 1.0, 10, 100, g=4)
    >>> a_s, a_n = m.keeps
    >>> round(float(a_s), 6) == round(float(a_n), 6) == round(math.e / (math.e + 3), 6), m.holds()
    (True, True)
    """
    e_s, e_n = check_epsilon(eps_s), float(eps_n)
    if not (e_n >= e_s):
        raise ParameterError(f"eps_n must be at least eps_s, got {eps_n!r} < {eps_s!r}")
    d = check_int(d, "d", 2)
    s = check_int(s, "s", 1)
    if s >= d:
        raise ParameterError(f"s must be below d, got s = {s}, d = {d}")
    if g is None:  # scan up from 2; stop after 8 hash ranges in a row worse than the best so far
        best = two_level_hashing(e_s, e_n, s, d, 2)
        k, worse = 2, 0
        while worse < 8 and k < 4096:
            k += 1
            cand = two_level_hashing(e_s, e_n, s, d, k)
            if cand.total_variance() < best.total_variance():
                best, worse = cand, 0
            else:
                worse += 1
        return best
    g = check_int(g, "g", 2)
    big_s, big_n = math.exp(e_s), math.exp(e_n) if math.isfinite(e_n) else math.inf
    q = 1.0 / g
    a_uniform = big_s / (big_s + g - 1)  # OLH's keep at eps_s: the sensitive keep's cap (pairs S-S, S-N)

    def total(a_s: float) -> float:
        a_n = _keep_n(a_s, big_s, big_n, g, d - s >= 2)
        if a_n <= q or a_s <= q:
            return math.inf
        return s * q * (1 - q) / (a_s - q) ** 2 + (d - s) * q * (1 - q) / (a_n - q) ** 2

    res = minimize_scalar(total, bounds=(q, a_uniform), method="bounded", options={"xatol": 1e-12})
    a_s = float(res.x) if total(float(res.x)) <= total(a_uniform) else a_uniform
    a_n = _keep_n(a_s, big_s, big_n, g, d - s >= 2)
    w_s, w_n = _on_grid(a_s, a_n, (e_s, e_n), g, (s, d - s))
    return TwoLevelHashing(e_s, e_n, s, d, g, w_s, w_n)
