"""Feasibility in floating point: the parameterisations of ``(a, b)``, the caps and the tightening.

Every solver variable maps to ``(a, b)`` through one parameterisation: :math:`(\\alpha, \\beta)`
(opt0), :math:`\\tau` (opt1, RAPPOR structure) or :math:`b` (opt2, OUE structure). A candidate
is accepted from the floating-point ``(a, b)`` it gives (:func:`_tighten`): every constrained
pair keeps a log-space slack of at least :math:`4\\cdot 10^{-15}(1 + r_{ij})`, and a level that
misses it is tightened by the amount it misses. Pair budgets are capped at :data:`R_CAP` and
:math:`\\tau`, :math:`\\beta` at 30 so that the probabilities stay representable (see the
package notes, :mod:`pldp.mechanisms.idue_solver`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pldp.mechanisms.idue_solver.solution import idue_log_ratios, idue_objective

#: Pair budgets above this are lowered to it inside the solvers (stricter, hence still private).
R_CAP = 60.0
#: Cap on tau (opt1) and beta (opt0), so that 1 - a >= ~exp(-30) stays representable next to 1.
_BETA_CAP = 30.0
#: Safety floor of the log-space slack of pair (i, j): ``_FLOOR * (1 + r_ij)``.
_FLOOR = 4e-15


def _ab_from_alpha_beta(ab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :math:`\\alpha = \\ln(a/b)`, :math:`\\beta = \\ln((1-b)/(1-a))` for stacked ``(alpha, beta) > 0``."""
    t = ab.size // 2
    alpha, beta = ab[:t], ab[t:]
    d = np.expm1(alpha + beta)
    b = np.expm1(beta) / d
    one_minus_a = np.expm1(alpha) / d
    a = np.where(one_minus_a < 0.5, 1.0 - one_minus_a, np.exp(alpha) * b)
    return a, b


def _alpha_beta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Stacked :math:`(\\alpha, \\beta)` of ``(a, b)``: the inverse of :func:`_ab_from_alpha_beta`."""
    return np.concatenate([np.log(a) - np.log(b), np.log1p(-b) - np.log1p(-a)])


def _tau_to_ab(tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RAPPOR structure (eq. 9): :math:`a = e^\\tau/(e^\\tau + 1)`, :math:`b = 1/(e^\\tau + 1)`."""
    b = 1.0 / (1.0 + np.exp(tau))
    return 1.0 - b, b


def _oue_to_ab(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OUE structure: :math:`a = 1/2`."""
    return np.full(b.size, 0.5), b.copy()


@dataclass
class _Point:
    """A feasible candidate: the solver variables, ``(a, b)`` and bookkeeping."""

    x: np.ndarray
    a: np.ndarray
    b: np.ndarray
    margin: float
    objective: float
    success: bool = False


def _bump(v: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``d`` where positive, raised to a few ulps of ``v`` so that the change is representable."""
    return np.where(d > 0, np.maximum(d, 4.0 * np.finfo(float).eps * np.abs(v)), 0.0)


def _lower_tau(tau: np.ndarray, drow: np.ndarray, dcol: np.ndarray) -> np.ndarray:
    """opt1: :math:`L_{ij} = \\tau_i + \\tau_j`; lower :math:`\\tau_i` by the larger deficit of row and column ``i``."""
    return tau - _bump(tau, np.maximum(drow, dcol))


def _lower_b(b: np.ndarray, drow: np.ndarray, dcol: np.ndarray) -> np.ndarray:
    """opt2: :math:`L_{ij} = \\ln(1 - b_j) - \\ln b_i`; :math:`b_i e^{d_i}` lowers row ``i`` by :math:`d_i`."""
    return b * np.exp(_bump(np.ones_like(b), drow))


def _lower_ab(ab: np.ndarray, drow: np.ndarray, dcol: np.ndarray) -> np.ndarray:
    """opt0: :math:`L_{ij} = \\alpha_i + \\beta_j`; lower :math:`\\alpha_i` by the deficit of row ``i``."""
    t = drow.size
    out = ab.copy()
    out[:t] -= _bump(ab[:t], drow)
    return out


def _tighten(
    x: np.ndarray,
    to_ab: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    lower: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    R: np.ndarray,
    mask: np.ndarray,
    m: np.ndarray,
) -> _Point | None:
    """The point itself if its floating-point ``(a, b)`` meet every constraint with the safety
    floor :math:`4\\cdot 10^{-15}(1 + r_{ij})` of log-space slack; otherwise the levels with a
    deficit are tightened (``lower`` lowers the log ratios of row/column ``i`` by the given
    amounts) until they do. Returns None if ``(a, b)`` leaves :math:`0 < b < a < 1`.
    """
    floor = _FLOOR * (1.0 + R)
    y = x
    for _ in range(60):
        with np.errstate(all="ignore"):
            a, b = to_ab(y)
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and np.all((b > 0) & (b < a) & (a < 1))):
            return None
        sl = R - idue_log_ratios(a, b)
        deficit = np.where(mask, floor - sl, -np.inf)
        if deficit.max() <= 0.0:
            return _Point(y, a, b, float(sl[mask].min()), idue_objective(a, b, m))
        d = 1.5 * np.maximum(deficit, 0.0)
        y = lower(y, d.max(axis=1), d.max(axis=0))
    return None
