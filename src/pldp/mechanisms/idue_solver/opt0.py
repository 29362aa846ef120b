"""opt0 (Gu et al. eq. 8): the worst-case MSE over all ``0 < b < a < 1``, by multi-start SLSQP.

The problem is non-convex (ERRATA IDUE-2). In :math:`(\\alpha, \\beta)` its constraints are linear,
:math:`\\alpha_i + \\beta_j \\le r_{ij}`, and its objective is
:math:`\\sum_i m_i x_i (1 + y_i) + \\max_i (y_i - x_i)` with :math:`x = 1/(e^\\alpha - 1)`,
:math:`y = 1/(e^\\beta - 1)`; SLSQP (analytic gradients) works in :math:`(\\alpha, \\beta, z)` with
an epigraph variable :math:`z \\ge y_i - x_i` for the max term (exact). The starts are RAPPOR and
OUE at :math:`\\varepsilon_{\\min}`, the opt1 and opt2 solutions (:func:`_opt0_seeds`) and
``n_random`` seeded random feasible points; every start is itself a candidate, so the result is
never worse than any of them. An opt0 local solution that violates a constraint by more than
:math:`10^{-6}` is discarded; the others are tightened into strict feasibility
(:func:`~pldp.mechanisms.idue_solver.feasibility._tighten`).
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy.optimize import OptimizeResult

from pldp.mechanisms.idue_solver.convex import _solve_convex
from pldp.mechanisms.idue_solver.feasibility import (
    _BETA_CAP,
    _ab_from_alpha_beta,
    _alpha_beta,
    _lower_ab,
    _Point,
    _tighten,
)

#: An opt0 local solution that violates a constraint by more than this (log space) is discarded.
_REPAIR_LIMIT = 1e-6


def _xy(v: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
    """:math:`x = 1/(e^\\alpha - 1)`, :math:`y = 1/(e^\\beta - 1)` for ``v = (alpha, beta, ...)``."""
    return 1.0 / np.expm1(v[:t]), 1.0 / np.expm1(v[t : 2 * t])


def _random_feasible(rng: np.random.Generator, R: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A random ``(alpha, beta)`` scaled into the polyhedron ``alpha_i + beta_j <= r_ij``."""
    t = R.shape[0]
    ab = rng.uniform(0.05, 1.0, 2 * t)
    load = (ab[:t, None] + ab[None, t:]) / R
    ab *= rng.uniform(0.5, 0.98) / load[mask].max()
    ab[t:] = np.minimum(ab[t:], 0.9 * _BETA_CAP)
    return ab


def _opt0_seeds(R: np.ndarray, mask: np.ndarray, m: np.ndarray, rtol: float, max_iter: int) -> tuple[list[_Point], int]:
    """The deterministic starts of opt0 that are feasible, and the interior-point iterations spent on them.

    RAPPOR (:math:`\\alpha = \\beta = \\varepsilon_{\\min}/2`) and OUE at :math:`\\varepsilon_{\\min}`
    (the smallest capped pair budget), then the opt1 and opt2 solutions (to the gap ``rtol``), each
    as the candidate it is, in :math:`(\\alpha, \\beta)`.
    """
    t = m.size
    e0 = float(R.min())
    b0 = 1.0 / (math.exp(e0) + 1.0)
    seeds: list[_Point] = []
    for ab in (
        np.full(2 * t, e0 / 2.0),  # RAPPOR at eps_min
        np.concatenate([np.full(t, math.log(0.5 / b0)), np.full(t, math.log(2.0 * (1.0 - b0)))]),  # OUE
    ):
        p = _tighten(ab, _ab_from_alpha_beta, _lower_ab, R, mask, m)
        if p is not None:
            seeds.append(p)
    iterations = 0
    for sub in ("opt1", "opt2"):  # the convex models' solutions: feasible, and candidates as returned
        p, res, _, _ = _solve_convex(sub, R, mask, m, rtol, max_iter)
        iterations += res.iterations
        if p is not None:
            seeds.append(_Point(_alpha_beta(p.a, p.b), p.a, p.b, p.margin, p.objective))
    return seeds, iterations


def _solve_opt0(
    R: np.ndarray,
    mask: np.ndarray,
    m: np.ndarray,
    seeds: list[_Point],
    n_random: int,
    seed: int | None,
    maxiter: int,
) -> tuple[_Point, int, int]:
    """Multi-start SLSQP on eq. 8 in ``(alpha, beta, z)``; the best feasible candidate.

    ``seeds`` are feasible points (``x`` in ``(alpha, beta)``), candidates themselves and starts
    of a local solve; ``n_random`` random feasible starts are added. Each start is solved on
    :class:`_ScaledOpt0` and its solution, if acceptable (:func:`_candidate`), is a candidate.
    Returns the best candidate, the SLSQP iterations summed over the starts and the number of
    starts; ``success`` of the best is whether a local solve that met SLSQP's stopping rule
    reached its objective (within a relative 1e-9).
    """
    candidates = list(seeds)
    rng = np.random.default_rng(seed)
    starts = [p.x for p in seeds]
    for _ in range(n_random):
        p = _tighten(_random_feasible(rng, R, mask), _ab_from_alpha_beta, _lower_ab, R, mask, m)
        if p is not None:
            candidates.append(p)
            starts.append(p.x)
    problem = _ScaledOpt0(R, mask, m, fs=min(c.objective for c in candidates))  # objective scale
    iterations = 0
    for s in starts:
        res = problem.local_solve(s, maxiter)
        iterations += int(res.nit)
        p = _candidate(problem.unscale(np.asarray(res.x, dtype=float)), R, mask, m)
        if p is not None:
            p.success = bool(res.success)
            candidates.append(p)
    best = min(candidates, key=lambda c: c.objective)
    # converged: a local solve that met SLSQP's stopping rule reached the best value (within 1e-9)
    best.success = any(c.success and c.objective <= best.objective * (1.0 + 1e-9) for c in candidates)
    return best, iterations, len(starts)


class _ScaledOpt0:
    """Eq. 8 as SLSQP sees it, in the scaled variables ``v = (alpha / sv[:t], beta / sv[t:], z)``.

    ``sv`` holds the largest feasible :math:`\\alpha_i` (:math:`\\min_j r_{ij}`) and :math:`\\beta_j`
    (:math:`\\min(30, \\min_i r_{ij})`), so that the scaled variables lie in (0, 1] whatever the
    budgets. The rows of eq. 5 are divided by :math:`r_{ij}`,
    :math:`1 - (\\alpha_i + \\beta_j)/r_{ij} \\ge 0`; the epigraph rows
    :math:`z - (y_i - x_i) \\ge 0` carry the max term; the objective
    :math:`\\sum_i m_i x_i (1 + y_i) + z` is divided by ``fs`` (the best start's value).
    """

    def __init__(self, R: np.ndarray, mask: np.ndarray, m: np.ndarray, fs: float):
        t = m.size
        self.t, self.mf, self.fs = t, m.astype(float), fs
        li, lj = np.nonzero(mask)
        Rm = np.where(mask, R, np.inf)
        # variable scales: the largest feasible alpha_i (min_j r_ij) and beta_j (min_i r_ij, <= 30)
        sv = np.concatenate([Rm.min(axis=1), np.minimum(Rm.min(axis=0), _BETA_CAP)])
        K = li.size
        rk = R[li, lj]
        jac_lin = np.zeros((K, 2 * t + 1))  # rows 1 - (alpha_i + beta_j) / r_ij >= 0, in scaled variables
        jac_lin[np.arange(K), li] = -sv[li] / rk
        jac_lin[np.arange(K), t + lj] = -sv[t + lj] / rk
        self.li, self.lj, self.rk, self.sv, self.jac_lin = li, lj, rk, sv, jac_lin

    def unscale(self, v: np.ndarray) -> np.ndarray:
        """``(alpha, beta)`` of the scaled ``v``."""
        return self.sv * v[: 2 * self.t]

    def objective(self, v: np.ndarray) -> tuple[float, np.ndarray]:
        """The scaled objective and its gradient."""
        t, mf, sv = self.t, self.mf, self.sv
        x, y = _xy(self.unscale(v), t)
        grad = np.empty_like(v)
        grad[:t] = -mf * (1.0 + y) * x * (1.0 + x) * sv[:t]
        grad[t : 2 * t] = -mf * x * y * (1.0 + y) * sv[t:]
        grad[-1] = 1.0
        return float(np.sum(mf * x * (1.0 + y)) + v[-1]) / self.fs, grad / self.fs

    def epi(self, v: np.ndarray) -> np.ndarray:
        """The epigraph rows, :math:`z - (y_i - x_i) \\ge 0`."""
        x, y = _xy(self.unscale(v), self.t)
        return v[-1] - y + x

    def epi_jac(self, v: np.ndarray) -> np.ndarray:
        """Jacobian of :meth:`epi`."""
        t, sv = self.t, self.sv
        x, y = _xy(self.unscale(v), t)
        jac = np.zeros((t, 2 * t + 1))
        idx = np.arange(t)
        jac[idx, idx] = -x * (1.0 + x) * sv[:t]
        jac[idx, t + idx] = y * (1.0 + y) * sv[t:]
        jac[:, -1] = 1.0
        return jac

    def lin(self, v: np.ndarray) -> np.ndarray:
        """The rows of eq. 5, :math:`1 - (\\alpha_i + \\beta_j)/r_{ij} \\ge 0`."""
        ab = self.unscale(v)
        return 1.0 - (ab[self.li] + ab[self.t + self.lj]) / self.rk

    def lin_jac(self, v: np.ndarray) -> np.ndarray:
        """Jacobian of :meth:`lin` (constant)."""
        return self.jac_lin

    def local_solve(self, start: np.ndarray, maxiter: int) -> OptimizeResult:
        """SLSQP from the feasible ``start`` in ``(alpha, beta)``, with ``z`` at its smallest feasible value."""
        from scipy.optimize import minimize  # scipy is imported where it is used: `import pldp` loads without it

        t = self.t
        x, y = _xy(start, t)
        v0 = np.append(np.minimum(start / self.sv, 1.0), np.max(y - x))
        constraints = [
            {"type": "ineq", "fun": self.lin, "jac": self.lin_jac},
            {"type": "ineq", "fun": self.epi, "jac": self.epi_jac},
        ]
        bounds = [(1e-9, 1.0)] * (2 * t) + [(None, None)]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return minimize(
                self.objective,
                v0,
                jac=True,
                method="SLSQP",
                bounds=bounds,
                constraints=constraints,
                options={"maxiter": maxiter, "ftol": 1e-12},
            )


def _candidate(ab: np.ndarray, R: np.ndarray, mask: np.ndarray, m: np.ndarray) -> _Point | None:
    """A local solution ``(alpha, beta)`` as a candidate: None if it is not finite and positive or violates a
    constraint by more than ``_REPAIR_LIMIT`` (log space), else tightened into strict feasibility."""
    t = m.size
    if not (np.all(np.isfinite(ab)) and np.all(ab > 0)):
        return None
    if (R - (ab[:t, None] + ab[None, t:]))[mask].min() < -_REPAIR_LIMIT:
        return None  # clearly infeasible: discard
    return _tighten(ab, _ab_from_alpha_beta, _lower_ab, R, mask, m)
