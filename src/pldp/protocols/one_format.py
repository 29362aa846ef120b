"""One report format across hidden levels: the hash range ``g`` (OLH) and subset size ``k`` (SS) of PBP.

When the level is hidden (:class:`~pldp.protocols.PBP`) only the report is sent, so every level's
report must have one format: a level-optimal OLH range ``g = e^eps + 1`` or SS size
``k = d / (e^eps + 1)`` would tell the level by the report's shape alone. PBP therefore gives all
its levels one ``g`` (or one ``k``) and picks it to minimise the variance of its pooled estimator
at an item no one holds,

.. math::

    V(g) = \\frac{q^*(1 - q^*)}{(p^* - q^*)^2}, \\qquad
    p^* = \\sum_\\tau \\rho_\\tau p_\\tau(g), \\quad q^* = \\sum_\\tau \\rho_\\tau q_\\tau(g),

(per user: the estimate's variance is :math:`V/N`; at one level it is the mechanism's own factor,
which OLH's ``g = e^eps + 1`` minimises). OLH: :math:`p_\\tau = e^{\\varepsilon_\\tau} /
(e^{\\varepsilon_\\tau} + g - 1)`, :math:`q_\\tau = 1/g`, searched over the integers ``2 ..
ceil(e^{eps_max} + 1)`` (at most ``2**24``, the node's largest ``g``): beyond the largest level's
optimum every level's factor grows. SS: :math:`p_\\tau = k e^{\\varepsilon_\\tau} / (k
e^{\\varepsilon_\\tau} + d - k)`, :math:`q_\\tau = (k - p_\\tau)/(d - 1)`, over ``k = 1 .. d - 1``.
The closed forms are the ideal probabilities; the mechanisms' grid values differ by under
``2**-32`` relatively, which moves no choice but a tie.

The cost of hiding the level (:func:`hiding_cost`): RCF sends the level in the clear, so each level
may use its own optimal ``g`` and the server combines the levels' estimates with weights
:math:`\\propto n_\\tau / V_\\tau`, of variance :math:`1 / \\sum_\\tau (n_\\tau / V_\\tau)`; PBP's is
:math:`V(g)/N` at its one ``g``. The ratio, with :math:`n_\\tau = \\rho_\\tau N`, is
:math:`V(g) \\sum_\\tau \\rho_\\tau / V_\\tau \\ge 1`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pldp.channel.hashed import HASHED_G
from pldp.mechanisms.hashed import olh_factor, olh_g

__all__ = ["best_hash_range", "best_subset_size", "hiding_cost", "olh_factor", "pooled_factor"]

#: Candidates evaluated at once by the searches (a few MB of temporaries per level).
_BLOCK = 1 << 18


def pooled_factor(p_star: Any, q_star: Any) -> np.ndarray:
    """:math:`q^*(1 - q^*)/(p^* - q^*)^2`: ``N`` times the pooled estimate's variance at an absent item."""
    return np.asarray(q_star * (1.0 - q_star) / (p_star - q_star) ** 2)


def _search(
    hi: int,
    lo: int,
    levels: np.ndarray,
    rho: np.ndarray,
    laws: Callable[[np.ndarray, float], tuple[np.ndarray, np.ndarray]],
) -> int:
    """The size in ``[lo, hi]`` of smallest :func:`pooled_factor` (the smallest such on a tie), block by block."""
    best, best_v = lo, math.inf
    for start in range(lo, hi + 1, _BLOCK):
        size = np.arange(start, min(hi, start + _BLOCK - 1) + 1, dtype=np.float64)
        p_star, q_star = np.zeros_like(size), np.zeros_like(size)
        for e, r in zip(levels, rho, strict=True):
            p, q = laws(size, float(e))
            p_star += r * p
            q_star += r * q
        v = pooled_factor(p_star, q_star)
        i = int(np.argmin(v))
        if v[i] < best_v:
            best, best_v = int(size[i]), float(v[i])
    return best


def best_hash_range(levels: np.ndarray, rho: np.ndarray) -> int:
    """The one OLH range ``g`` of smallest pooled factor over ``2 .. ceil(e^{eps_max} + 1)`` (module docstring).

    Examples
    --------
    >>> best_hash_range(np.array([1.0]), np.array([1.0]))   # one level: OLH's own optimum, e + 1
    4
    >>> best_hash_range(np.array([0.5, 1.0, 2.0]), np.array([0.3, 0.3, 0.4]))  # not e^2 + 1: the low levels
    6
    """
    eps_max = float(np.max(levels))
    hi = HASHED_G[1] if eps_max > math.log(HASHED_G[1]) else min(HASHED_G[1], math.ceil(math.exp(eps_max) + 1))

    def laws(g: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
        e = math.exp(eps)
        return e / (e + g - 1), 1.0 / g

    return _search(max(hi, 2), 2, levels, rho, laws)


def best_subset_size(levels: np.ndarray, rho: np.ndarray, d: int) -> int:
    """The one SS size ``k`` of smallest pooled factor over ``1 .. d - 1`` (module docstring)."""

    def laws(k: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
        e = math.exp(eps)
        p = k * e / (k * e + d - k)
        return p, (k - p) / (d - 1)

    return _search(d - 1, 1, levels, rho, laws)


def hiding_cost(levels: np.ndarray, rho: np.ndarray, g: int | None = None) -> float:
    """PBP-OLH's variance at one ``g`` (default :func:`best_hash_range`) over RCF-OLH's with each level's
    own ``g`` (OLH's default, :func:`~pldp.mechanisms.hashed.olh_g`), at the same levels and shares:
    :math:`V(g) \\sum_\\tau \\rho_\\tau / V_\\tau` (module docstring; ideal probabilities, an absent item)."""
    g = best_hash_range(levels, rho) if g is None else g
    p_star = sum(r * math.exp(e) / (math.exp(e) + g - 1) for e, r in zip(levels, rho, strict=True))
    v_pbp = float(pooled_factor(p_star, 1.0 / g))
    return v_pbp * sum(r / olh_factor(e, olh_g(e)) for e, r in zip(levels, rho, strict=True))
