"""opt1 and opt2 (Gu et al. eq. 10, 11): the convex models of IDUE, solved by the interior-point method.

opt1 (RAPPOR structure, :math:`a_i = e^{\\tau_i}/(e^{\\tau_i}+1)`, :math:`b_i = 1 - a_i`) minimises
:math:`\\sum_i m_i e^{\\tau_i}/(e^{\\tau_i}-1)^2` subject to :math:`\\tau_i + \\tau_j \\le r_{ij}`;
opt2 (OUE structure, :math:`a_i = 1/2`) minimises :math:`\\sum_i m_i b_i(1-b_i)/(1/2-b_i)^2`
subject to :math:`e^{r_{ij}} b_i + b_j \\ge 1`. Both objectives are separable with linear pair
constraints, so :func:`~pldp.mechanisms.idue_solver.interior_point._interior_point` applies;
the one-dimensional conjugates here (a monotone Newton iteration for opt1, closed form for
opt2) give its exact Lagrange dual function, hence the certified gap. The start is strictly
feasible: all :math:`\\tau_i = \\varepsilon_{\\min}/4`, resp. all :math:`b_i` halfway between OUE's
value at :math:`\\varepsilon_{\\min}` and 1/2.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from pldp.mechanisms.idue_solver.feasibility import (
    _BETA_CAP,
    _lower_b,
    _lower_tau,
    _oue_to_ab,
    _Point,
    _tau_to_ab,
    _tighten,
)
from pldp.mechanisms.idue_solver.interior_point import (
    _ConvexResult,
    _dual_value,
    _interior_point,
    _PairConstraints,
    _Separable,
)


def _rappor_terms(tau: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:math:`m\\,g(\\tau)` with :math:`g = e^\\tau/(e^\\tau-1)^2 = 1/(4\\sinh^2(\\tau/2))`, and derivatives."""
    u = 0.5 * tau
    sh = np.sinh(u)
    ch = np.cosh(u)
    inv = 1.0 / sh
    g0 = 0.25 * inv**2
    g1 = -0.25 * ch * inv**3
    g2 = 0.125 * inv**4 * (2.0 * ch**2 + 1.0)
    return m * g0, m * g1, m * g2


def _rappor_conj(w: np.ndarray, m: np.ndarray) -> np.ndarray:
    """:math:`\\inf_{\\tau > 0} m g(\\tau) + w\\tau` per coordinate (``w >= 0``; 0 when ``w = 0``).

    The minimiser solves :math:`\\cosh u/\\sinh^3 u = 4w/m` (:math:`u = \\tau/2`). Newton on
    :math:`\\psi(u) = \\ln\\cosh u - 3\\ln\\sinh u - \\ln(4w/m)`, convex and decreasing, from
    :math:`u_0 = \\operatorname{arsinh}((4w/m)^{-1/3})` (left of the root, where
    :math:`\\psi \\ge 0`) increases monotonically to the root.
    """
    out = np.zeros_like(w)
    pos = w > 0
    if not pos.any():
        return out
    mm, wp = m[pos], w[pos]
    logc = np.log(4.0 * wp / mm)
    u = np.arcsinh(np.exp(-logc / 3.0))
    ln2 = math.log(2.0)
    for _ in range(200):
        lsh = u - ln2 + np.log(-np.expm1(-2.0 * u))
        lch = u - ln2 + np.log1p(np.exp(-2.0 * u))
        th = np.tanh(u)
        du = -(lch - 3.0 * lsh - logc) / (th - 3.0 / th)
        u = u + du
        if np.all(np.abs(du) <= 1e-13 * u):  # quadratic convergence: the next step is at rounding level
            break
    out[pos] = mm * 0.25 / np.sinh(u) ** 2 + wp * 2.0 * u
    return out


def _oue_terms(b: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:math:`m\\,b(1-b)/v^2` with :math:`v = 1/2 - b`, and its derivatives :math:`m/(2v^3)`,
    :math:`3m/(2v^4)` (from :math:`b(1-b)/v^2 = 1/(4v^2) - 1`; the value is computed in the
    first form, accurate for tiny ``b`` too)."""
    v = 0.5 - b
    return m * b * (1.0 - b) / v**2, m * 0.5 / v**3, m * 1.5 / v**4


def _oue_conj(w: np.ndarray, m: np.ndarray) -> np.ndarray:
    """:math:`\\inf_{0 \\le b < 1/2} m\\,b(1-b)/(1/2-b)^2 + w b` per coordinate, in closed form.

    For ``w < 0`` the stationary point is :math:`1/2 - b = (m/(2|w|))^{1/3}`, i.e.
    :math:`b = -\\tfrac12 \\operatorname{expm1}(\\ln(4m/|w|)/3)` (accurate when ``b`` is tiny),
    clipped at ``b = 0``; for ``w >= 0`` the infimum is 0 at ``b = 0``.
    """
    b = np.zeros_like(w)
    neg = w < 0
    b[neg] = np.maximum(0.0, -0.5 * np.expm1(np.log(4.0 * m[neg] / -w[neg]) / 3.0))
    return m * b * (1.0 - b) / (0.5 - b) ** 2 + w * b


def _convex_problem(model: str, R: np.ndarray, mask: np.ndarray, m: np.ndarray) -> tuple[_Separable, _PairConstraints]:
    """The constraints of opt1 or opt2 as rows ``ci x[li] + cj x[lj] <= rhs``.

    opt1 (eq. 10) in :math:`\\tau`: one row :math:`\\tau_i + \\tau_j \\le r_{ij}` per unordered
    pair (:math:`2\\tau_i \\le \\varepsilon_i` on the diagonal), plus :math:`\\tau_i \\le 30` for a
    level whose pairs allow more (``_BETA_CAP``; only with budgets above 30). opt2 (eq. 11) in
    :math:`b`: one row per ordered pair, scaled by :math:`e^{-r_{ij}}` so that no coefficient
    exceeds 1, :math:`-b_i - e^{-r_{ij}} b_j \\le -e^{-r_{ij}}`
    (:math:`-(1 + e^{-\\varepsilon_i}) b_i \\le -e^{-\\varepsilon_i}` on the diagonal).
    """
    li, lj = np.nonzero(mask)
    mf = m.astype(float)
    if model == "opt1":
        keep = li <= lj
        li, lj = li[keep], lj[keep]
        same = li == lj
        ci = np.where(same, 2.0, 1.0)
        cj = np.where(same, 0.0, 1.0)
        rhs = R[li, lj]
        bound = np.where(mask, R, np.inf).min(axis=1)  # tau_i < min_j r_ij
        cap = np.flatnonzero(bound > _BETA_CAP)
        li, lj = np.concatenate([li, cap]), np.concatenate([lj, cap])
        ci, cj = np.concatenate([ci, np.ones(cap.size)]), np.concatenate([cj, np.zeros(cap.size)])
        rhs = np.concatenate([rhs, np.full(cap.size, _BETA_CAP)])
        obj = _Separable(lambda x: _rappor_terms(x, mf), lambda w: _rappor_conj(w, mf), 0.0, math.inf)
        return obj, _PairConstraints(m.size, li, lj, ci, cj, rhs)
    same = li == lj
    e = np.exp(-R[li, lj])
    ci = np.where(same, -(1.0 + e), -1.0)
    cj = np.where(same, 0.0, -e)
    obj = _Separable(lambda x: _oue_terms(x, mf), lambda w: _oue_conj(w, mf), 0.0, 0.5)
    return obj, _PairConstraints(m.size, li, lj, ci, cj, -e)


def _solve_convex(
    model: str, R: np.ndarray, mask: np.ndarray, m: np.ndarray, rtol: float, max_iter: int
) -> tuple[_Point | None, _ConvexResult, float, float]:
    """Solve opt1 or opt2; return the tightened feasible point (or None), the raw result, the
    model objective at the point and its certified gap."""
    obj, cons = _convex_problem(model, R, mask, m)
    e0 = float(R.min())
    to_ab: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    lower: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    if model == "opt1":
        x0 = np.full(m.size, e0 / 4.0)
        to_ab, lower = _tau_to_ab, _lower_tau
    else:
        x0 = np.full(m.size, 0.5 * (1.0 / (math.exp(e0) + 1.0) + 0.5))
        to_ab, lower = _oue_to_ab, _lower_b
    res = _interior_point(obj, x0, cons, rtol, max_iter)
    point = _tighten(res.x, to_ab, lower, R, mask, m)
    if point is None:
        return None, res, math.nan, math.nan
    point.success = res.converged
    own = float(obj.terms(point.x)[0].sum())
    return point, res, own, own - _dual_value(obj, cons, res.lam)
