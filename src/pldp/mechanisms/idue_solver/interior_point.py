"""A primal-dual interior-point method for a separable convex objective under pair constraints.

Solves :math:`\\min f(x)` subject to :math:`A x \\le c`, where :math:`f(x) = \\sum_i f_i(x_i)` is
convex on an open box and every row of :math:`A` touches at most two variables
(:class:`_PairConstraints`). Such are opt1 and opt2 of IDUE
(:mod:`~pldp.mechanisms.idue_solver.convex`): the Newton systems are ``t x t`` whatever the
number of rows, and the Lagrange dual function is a sum of one-dimensional minimisations
(:class:`_Separable`), evaluated exactly, so every iterate carries a certified duality gap.
Nothing here is specific to IDUE.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class _PairConstraints:
    """``K`` linear constraints ``ci x[li] + cj x[lj] <= rhs`` (``lj = li``, ``cj = 0`` for one variable)."""

    def __init__(self, t: int, li: np.ndarray, lj: np.ndarray, ci: np.ndarray, cj: np.ndarray, rhs: np.ndarray):
        self.t, self.li, self.lj, self.ci, self.cj, self.rhs = t, li, lj, ci, cj, rhs
        # scatter patterns of A^T w and of A^T diag(w) A (t x t, flattened)
        self._gidx = np.concatenate([li, lj])
        self._gcoef = np.concatenate([ci, cj])
        self._hidx = np.concatenate([li * t + li, lj * t + lj, li * t + lj, lj * t + li])
        self._hcoef = np.concatenate([ci * ci, cj * cj, ci * cj, ci * cj])

    def __len__(self) -> int:
        return int(self.rhs.size)

    def apply(self, x: np.ndarray) -> np.ndarray:
        """:math:`A x`."""
        return self.ci * x[self.li] + self.cj * x[self.lj]

    def rmatvec(self, w: np.ndarray) -> np.ndarray:
        """:math:`A^T w`."""
        return np.bincount(self._gidx, weights=self._gcoef * np.tile(w, 2), minlength=self.t)

    def gram(self, w: np.ndarray) -> np.ndarray:
        """:math:`A^T \\operatorname{diag}(w) A`."""
        t = self.t
        return np.bincount(self._hidx, weights=self._hcoef * np.tile(w, 4), minlength=t * t).reshape(t, t)


@dataclass(frozen=True)
class _Separable:
    """A separable convex objective on the open box ``(lower, upper)``.

    ``terms(x)`` returns the per-coordinate values and first and second derivatives;
    ``conj(w)`` returns :math:`\\inf_x [f_i(x) + w_i x]` per coordinate (for the dual function).
    """

    terms: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]
    conj: Callable[[np.ndarray], np.ndarray]
    lower: float
    upper: float


@dataclass
class _ConvexResult:
    x: np.ndarray
    lam: np.ndarray
    iterations: int
    gap: float
    converged: bool


def _dual_value(obj: _Separable, cons: _PairConstraints, lam: np.ndarray) -> float:
    """Lagrange dual function :math:`q(\\lambda) = \\inf_x f(x) + \\lambda^T(Ax - c)`, a lower bound."""
    return float(obj.conj(cons.rmatvec(lam)).sum() - lam @ cons.rhs)


def _max_step(v: np.ndarray, dv: np.ndarray) -> float:
    """Largest ``alpha <= 1`` with ``v + alpha dv >= 0``."""
    neg = dv < 0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if neg.any() else 1.0


def _wnorm(weights: tuple[np.ndarray, ...], parts: tuple[np.ndarray, ...]) -> float:
    """Weighted 2-norm of the stacked residual parts."""
    return math.sqrt(sum(float(np.sum((w * p) ** 2)) for w, p in zip(weights, parts, strict=True)))


#: Barrier target of the interior-point method: ``mu = _MU_FACTOR * gap / K`` (Boyd & Vandenberghe 11.7).
_MU_FACTOR = 0.1
#: Smallest positive normal double: keeps the weights and the Jacobi scaling finite.
_TINY = np.finfo(float).tiny


def _interior_point(
    obj: _Separable, x0: np.ndarray, cons: _PairConstraints, rtol: float, max_iter: int
) -> _ConvexResult:
    """Primal-dual interior-point method for ``min f(x) s.t. A x <= c`` (``f`` separable, convex).

    Newton steps on the perturbed KKT conditions with explicit slacks (Nocedal & Wright,
    *Numerical Optimization*, 2nd ed., Sec. 19.2-19.3; Boyd & Vandenberghe Sec. 11.7),

    .. math::

        \\nabla f(x) + A^T\\lambda = 0, \\qquad Ax + s = c, \\qquad s \\circ \\lambda = \\mu,

    through the reduced ``t x t`` system
    :math:`(\\nabla^2 f + A^T \\operatorname{diag}(\\lambda/s) A)\\,\\Delta x = \\dots`
    (Jacobi-scaled Cholesky), with fraction-to-boundary 0.99 on :math:`s`, :math:`\\lambda` and
    the box of ``f``, and backtracking until the KKT residual decreases (2-norm, each component
    relative to the size of its terms: a descent direction of any fixed weighting). The barrier
    parameter follows the certified gap :math:`G = f(x) - q(\\lambda)` (``q`` the Lagrange dual
    function, exact): :math:`\\mu \\leftarrow \\min(\\mu, 0.1\\,G/K)` at every iteration,
    starting from :math:`f(x_0)/K` (on the central path :math:`G = K\\mu`; Boyd & Vandenberghe
    11.7 use the surrogate gap instead). Started at a strictly feasible ``x0``, every iterate stays
    feasible up to rounding (the constraints are linear). Stops when :math:`G \\le`
    ``rtol`` :math:`\\cdot f(x)`, or after 20 iterations without a 1 % gain (rounding), or at
    ``max_iter``; then the iterate with the smallest gap is returned.
    """
    K = len(cons)
    cur, mu = _start(obj, x0, cons)
    converged = False
    best = (math.inf, cur.x, cur.lam)
    stalled = 0
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - reported
        gap = cur.f - _dual_value(obj, cons, cur.lam)
        stalled = 0 if gap < 0.99 * best[0] else stalled + 1
        if gap < best[0]:
            best = (gap, cur.x, cur.lam)
        if gap <= rtol * abs(cur.f):
            converged = True
            break
        if stalled >= 20:  # rounding limits the attainable gap: stop
            break
        mu = min(mu, _MU_FACTOR * max(gap, 0.0) / K)
        nxt = _newton_step(obj, cons, cur, mu)
        if nxt is None:  # no progress possible in floating point
            break
        cur = nxt
    else:
        gap = cur.f - _dual_value(obj, cons, cur.lam)
        if gap < best[0]:
            best = (gap, cur.x, cur.lam)
    gap, x, lam = (gap, cur.x, cur.lam) if converged else best
    return _ConvexResult(x, lam, it, gap, converged)


class _Iterate(NamedTuple):
    """An iterate: primal ``x``, slacks ``s``, multipliers ``lam``; ``f(x)``, its gradient ``g`` and Hessian ``h``
    (diagonal, ``f`` being separable)."""

    x: np.ndarray
    s: np.ndarray
    lam: np.ndarray
    g: np.ndarray
    h: np.ndarray
    f: float


def _start(obj: _Separable, x0: np.ndarray, cons: _PairConstraints) -> tuple[_Iterate, float]:
    """The first iterate at the strictly feasible ``x0``, on the central path of :math:`\\mu = f(x_0)/K`, and that
    :math:`\\mu`."""
    x = x0.astype(float).copy()
    s = cons.rhs - cons.apply(x)
    vals, g, h = obj.terms(x)
    f = float(vals.sum())
    mu = abs(f) / len(cons)
    return _Iterate(x, s, mu / s, g, h, f), mu


def _kkt_residual(
    cons: _PairConstraints, x: np.ndarray, s: np.ndarray, lam: np.ndarray, g: np.ndarray, mu: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dual, primal and complementarity residuals: :math:`\\nabla f + A^T\\lambda`, :math:`Ax + s - c`,
    :math:`s \\circ \\lambda - \\mu`."""
    return g + cons.rmatvec(lam), cons.apply(x) + s - cons.rhs, s * lam - mu


def _residual_weights(cons: _PairConstraints, cur: _Iterate, mu: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each residual relative to the size of its terms (fixed during the line search), so that a rounding-level
    dual residual cannot mask progress in complementarity."""
    return (
        1.0 / (np.abs(cur.g) + np.abs(cons.rmatvec(cur.lam)) + _TINY),
        1.0 / (np.abs(cons.rhs) + np.abs(cons.apply(cur.x)) + cur.s + _TINY),
        1.0 / (cur.s * cur.lam + mu + _TINY),
    )


def _newton_direction(
    cons: _PairConstraints, cur: _Iterate, residual: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Newton direction ``(dx, ds, dl)`` of the perturbed KKT conditions.

    ``dx`` solves the reduced ``t x t`` system
    :math:`(\\nabla^2 f + A^T \\operatorname{diag}(\\lambda/s) A)\\,\\Delta x = -r_d + A^T((r_c - \\lambda r_p)/s)`
    (Jacobi-scaled Cholesky; least squares if it fails); ``ds`` and ``dl`` follow.
    """
    rd, rp, rc = residual
    s, lam = cur.s, cur.lam
    M = cons.gram(lam / s)
    M[np.diag_indices_from(M)] += cur.h
    sc = 1.0 / np.sqrt(np.maximum(np.diag(M), _TINY))
    Ms = M * sc[:, None] * sc[None, :]
    rhs = sc * (-rd + cons.rmatvec((rc - lam * rp) / s))
    from scipy.linalg import (  # scipy is imported where it is used: `import pldp` and the clients load without it
        LinAlgError,
        cho_factor,
        cho_solve,
    )

    try:
        dx = sc * cho_solve(cho_factor(Ms, check_finite=False), rhs, check_finite=False)
    except (LinAlgError, ValueError):
        dx = sc * np.linalg.lstsq(Ms, rhs, rcond=None)[0]
    ds = -rp - cons.apply(dx)
    dl = (-rc - lam * ds) / s
    return dx, ds, dl


def _boundary_step(obj: _Separable, cur: _Iterate, dx: np.ndarray, ds: np.ndarray, dl: np.ndarray) -> float:
    """Fraction-to-boundary 0.99 on :math:`s`, :math:`\\lambda` and the box of ``f``, at most a full step."""
    step = min(_max_step(cur.s, ds), _max_step(cur.lam, dl), _max_step(cur.x - obj.lower, dx))
    if math.isfinite(obj.upper):
        step = min(step, _max_step(obj.upper - cur.x, -dx))
    return min(1.0, 0.99 * step)


def _newton_step(obj: _Separable, cons: _PairConstraints, cur: _Iterate, mu: float) -> _Iterate | None:
    """One damped Newton step at barrier parameter ``mu``: from the fraction to the boundary, halved until the
    weighted KKT residual decreases. None if it cannot decrease in floating point (or the step would leave the
    domain, which the step rule prevents)."""
    residual = _kkt_residual(cons, cur.x, cur.s, cur.lam, cur.g, mu)
    weights = _residual_weights(cons, cur, mu)
    norm0 = _wnorm(weights, residual)
    dx, ds, dl = _newton_direction(cons, cur, residual)
    step = _boundary_step(obj, cur, dx, ds, dl)
    for _ in range(60):  # backtrack until the KKT residual decreases
        xn, sn, ln = cur.x + step * dx, cur.s + step * ds, cur.lam + step * dl
        vn, gn, hn = obj.terms(xn)
        if _wnorm(weights, _kkt_residual(cons, xn, sn, ln, gn, mu)) <= (1.0 - 0.01 * step) * norm0:
            break
        step *= 0.5
    else:
        return None  # no progress possible in floating point
    if not (np.all(sn > 0) and np.all(ln > 0) and np.all(xn > obj.lower) and np.all(xn < obj.upper)):
        return None  # the step rule prevents this; never leave the domain
    return _Iterate(xn, sn, ln, gn, hn, float(vn.sum()))
