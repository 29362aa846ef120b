"""Perturbation probabilities of IDUE: the optimisation models opt0, opt1, opt2 of Gu et al.

IDUE (input-discriminative unary encoding; Gu, Li, Xiong, Cao, ICDE 2020, Sec. V-B) encodes
an item as a one-hot vector and flips each bit independently; every item of privacy level
:math:`i` (budget :math:`\\varepsilon_i`, :math:`m_i` items, :math:`i = 1..t`) keeps a 1 with
probability :math:`a_i` and raises a 0 with probability :math:`b_i`. The largest
likelihood ratio between inputs of levels :math:`i` and :math:`j` is attained by the output
with bit :math:`i` set and bit :math:`j` clear, so ID-LDP (Def. 2) holds iff (eq. 5)

.. math::

    \\frac{a_i (1 - b_j)}{b_i (1 - a_j)} \\le e^{r_{ij}}, \\qquad
    r_{ij} = \\min(\\varepsilon_i, \\varepsilon_j) \\ \\text{(MinID-LDP, Def. 3)} \\quad\\text{or}\\quad
    r_{ij} = (\\varepsilon_i + \\varepsilon_j)/2 \\ \\text{(AvgID-LDP, Sec. VIII)},

for every ordered pair of levels :math:`i \\ne j`, and for :math:`i = j` only when level
:math:`i` holds two or more items (ERRATA IDUE-3: a level with a single item has no pair of
distinct inputs). With the unbiased estimator :math:`\\hat c_i = (c_i - n b_i)/(a_i - b_i)`
(eq. 6) and its variance (eq. 7), the worst-case total MSE over all data sets is :math:`n f`
with (eq. 8)

.. math::

    f(a, b) = \\sum_{i=1}^t \\frac{m_i b_i (1 - b_i)}{(a_i - b_i)^2}
              + \\max_i \\frac{1 - a_i - b_i}{a_i - b_i}.

The three models of Sec. V-D minimise it over different sets:

* ``"opt0"`` (eq. 8): all :math:`0 < b_i < a_i < 1`. Non-convex (ERRATA IDUE-2).
* ``"opt1"`` (eq. 10): RAPPOR structure :math:`a_i = e^{\\tau_i}/(e^{\\tau_i}+1)`,
  :math:`b_i = 1 - a_i`; :math:`\\min \\sum_i m_i e^{\\tau_i}/(e^{\\tau_i}-1)^2` subject to
  :math:`\\tau_i + \\tau_j \\le r_{ij}`. Convex with linear constraints. (The max term of
  eq. 8 is 0.)
* ``"opt2"`` (eq. 11): OUE structure :math:`a_i = 1/2`;
  :math:`\\min \\sum_i m_i b_i (1-b_i)/(1/2-b_i)^2` subject to
  :math:`e^{r_{ij}} b_i + b_j \\ge 1`, :math:`0 < b_i < 1/2`. Convex with linear constraints.
  (The max term of eq. 8 is 1. ERRATA IDUE-4: the paper's derivation writes
  :math:`b_i(1-a_i)` in the denominator of the ratio where :math:`b_i(1-a_j)` belongs;
  harmless since every :math:`a = 1/2`.)

A change of variables makes every privacy constraint linear. With

.. math::

    \\alpha_i = \\ln\\frac{a_i}{b_i}, \\qquad \\beta_i = \\ln\\frac{1 - b_i}{1 - a_i},

the ratio of eq. 5 is :math:`e^{\\alpha_i + \\beta_j}`, so the constraints read
:math:`\\alpha_i + \\beta_j \\le r_{ij}`, and every :math:`\\alpha, \\beta > 0` is exactly one
:math:`0 < b < a < 1` (:math:`b = (e^\\beta - 1)/(e^{\\alpha+\\beta} - 1)`,
:math:`a = e^\\alpha b`). With :math:`x_i = 1/(e^{\\alpha_i} - 1)` and
:math:`y_i = 1/(e^{\\beta_i} - 1)` the terms of eq. 8 are
:math:`b_i(1-b_i)/(a_i-b_i)^2 = x_i (1 + y_i)` and
:math:`(1 - a_i - b_i)/(a_i - b_i) = y_i - x_i`. RAPPOR is :math:`\\alpha = \\beta = \\tau`.

Solvers
-------
* opt1, opt2: a primal-dual interior-point method with explicit slacks (Nocedal & Wright,
  *Numerical Optimization*, 2nd ed., Sec. 19.2-19.3) on the linear constraints, started from a
  strictly feasible point (all :math:`\\tau_i = \\varepsilon_{\\min}/4`, resp. all :math:`b_i`
  halfway between OUE's value at :math:`\\varepsilon_{\\min}` and 1/2). The Newton systems are
  ``t x t`` whatever the number of pair constraints. It stops when the *certified* duality gap
  :math:`f(x) - q(\\lambda)` is at most ``rtol`` (default ``1e-10``) times :math:`f(x)`, where
  the Lagrange dual function :math:`q` is evaluated exactly: the objectives are separable, so
  :math:`q` is a sum of one-dimensional minimisations (closed form for opt2, a monotone Newton
  iteration for opt1). ``t = 100`` levels (about 10^4 pair constraints) take tens of
  milliseconds.
* opt0: multi-start SLSQP (analytic gradients) in :math:`(\\alpha, \\beta, z)` with an epigraph
  variable :math:`z \\ge y_i - x_i` for the max term (exact; ERRATA IDUE-2). The starts are
  RAPPOR and OUE at :math:`\\varepsilon_{\\min}`, the opt1 and opt2 solutions and ``n_random``
  seeded random feasible points; every start is itself a candidate, so the opt0 objective is
  never above that of opt1, opt2, RAPPOR or OUE (at :math:`\\varepsilon_{\\min}`). Meant for a
  few levels (the paper's advice, Sec. V-D): the cost grows quickly with ``t`` (``t^2`` dense
  constraints).

Feasibility and floating point
------------------------------
Every candidate is checked from the floating-point ``a, b`` that would be returned
(:func:`idue_log_ratios`). Each constrained pair must keep a log-space slack of at least
:math:`4\\cdot 10^{-15}(1 + r_{ij})`, more than the rounding error of recomputing the ratio in
another order; a level that misses it is tightened by the amount it misses (opt1: lower
:math:`\\tau_i`; opt2: raise :math:`b_i`; opt0: lower :math:`\\alpha_i`), which costs a negligible
part of the objective (relative :math:`\\sim 10^{-14}` for ordinary budgets). An opt0 local
solution that violates a constraint by more than :math:`10^{-6}` is discarded. So a returned
solution always satisfies eq. 5 (``margin > 0``); if no feasible point is found,
:class:`~pldp.errors.SolverError` is raised with the diagnostics.

Two caps keep the probabilities representable in double precision, and only make the
mechanism *more* private: pair budgets above ``R_CAP = 60`` are lowered to 60, and
:math:`\\tau` (opt1) and :math:`\\beta` (opt0) are kept :math:`\\le 30`, so that
:math:`1 - a \\gtrsim e^{-30}` (:math:`a` would otherwise round to 1). They bind only for budgets
above 30 and change the objective by less than :math:`10^{-12} \\sum_i m_i`.

References
----------
Gu, Li, Xiong, Cao. Providing Input-Discriminative Protection for Local Differential Privacy,
ICDE 2020: Sec. V-B (eq. 5), V-C (eq. 6-7), V-D (eq. 8-11), V-E (Table I), VIII (AvgID-LDP);
corrections from ``ERRATA.md`` (IDUE-1..4).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.optimize import minimize

from pldp._validation import _show
from pldp.errors import BudgetError, ParameterError, SolverError
from pldp.privacy import pair_budgets

__all__ = ["ACTIVE_TOL", "MAX_EPSILON", "R_CAP", "IDUESolution", "idue_log_ratios", "idue_objective", "solve_idue"]

Model = Literal["opt0", "opt1", "opt2"]
PairRule = Literal["min", "avg"]
SameLevel = Literal["auto", "always"]

#: Largest budget accepted: beyond it ``exp(eps)`` overflows a double.
MAX_EPSILON = 700.0
#: A constraint is reported active when its log-space slack is below this.
ACTIVE_TOL = 1e-7
#: Pair budgets above this are lowered to it inside the solvers (stricter, hence still private).
R_CAP = 60.0
#: Cap on tau (opt1) and beta (opt0), so that 1 - a >= ~exp(-30) stays representable next to 1.
_BETA_CAP = 30.0
#: Safety floor of the log-space slack of pair (i, j): ``_FLOOR * (1 + r_ij)``.
_FLOOR = 4e-15
#: An opt0 local solution that violates a constraint by more than this (log space) is discarded.
_REPAIR_LIMIT = 1e-6


# --------------------------------------------------------------------------- public results
@dataclass(frozen=True)
class IDUESolution:
    """Per-level perturbation probabilities of IDUE and the solver's diagnostics.

    Attributes
    ----------
    a, b : ndarray, shape (t,)
        :math:`a_i = \\Pr[1 \\mid 1]` and :math:`b_i = \\Pr[1 \\mid 0]` for the items of level
        ``i`` (in the order of ``epsilons``). Read-only.
    epsilons : ndarray, shape (t,)
        Level budgets, as given.
    sizes : ndarray, shape (t,)
        Items per level, :math:`m_i`.
    model : {"opt0", "opt1", "opt2"}
        The model solved (eq. 8, 10, 11).
    pair_rule : {"min", "avg"}
        Pair budget: MinID-LDP (:math:`\\min`) or AvgID-LDP (mean).
    same_level : {"auto", "always"}
        Which diagonal constraints ``(i, i)`` were imposed (see :func:`solve_idue`).
    objective : float
        Worst-case total MSE divided by ``n``: eq. 8's :math:`f` at ``(a, b)``, whatever the
        model, so that results of different models compare directly.
    model_objective : float
        The model's own objective at the solution: :math:`f` (opt0); eq. 10's
        :math:`\\sum_i m_i e^{\\tau_i}/(e^{\\tau_i}-1)^2` (opt1, equal to :math:`f`); eq. 11's
        :math:`\\sum_i m_i b_i(1-b_i)/(1/2-b_i)^2` (opt2, equal to :math:`f - 1`).
    active : tuple of (int, int)
        Ordered level pairs ``(i, j)`` whose constraint (eq. 5) is tight: log-space slack
        :math:`r_{ij} - \\ln[a_i(1-b_j)/(b_i(1-a_j))] <` :data:`ACTIVE_TOL` (``1e-7``). For
        opt1 the constraint is symmetric, so ``(i, j)`` and ``(j, i)`` appear together.
    margin : float
        Smallest log-space slack :math:`r_{ij} - L_{ij}` over the imposed constraints; always
        > 0 (feasible): every pair keeps at least :math:`4\\cdot 10^{-15}(1 + r_{ij})`.
    iterations : int
        Interior-point iterations (opt1, opt2) or SLSQP iterations summed over the starts
        (opt0; includes the opt1 and opt2 solves it starts from).
    starts : int
        Starting points tried (1 for opt1 and opt2).
    converged : bool
        opt1, opt2: the certified gap met ``rtol``. opt0: a local solve that met SLSQP's
        stopping rule reached the returned objective (within a relative 1e-9).
    gap : float
        opt1, opt2: certified duality gap of the returned point, ``model_objective`` minus a
        lower bound on the model's optimum (exact dual function). ``nan`` for opt0 (no
        certificate for a non-convex problem).
    """

    a: np.ndarray
    b: np.ndarray
    epsilons: np.ndarray
    sizes: np.ndarray
    model: str
    pair_rule: str
    same_level: str
    objective: float
    model_objective: float
    active: tuple[tuple[int, int], ...]
    margin: float
    iterations: int
    starts: int
    converged: bool
    gap: float

    @property
    def t(self) -> int:
        """Number of privacy levels."""
        return int(self.a.size)


def _check_ab(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ParameterError(f"a and b must be vectors of the same length, got shapes {a.shape} and {b.shape}")
    bad = ~((b > 0) & (b < a) & (a < 1))  # NaN fails too
    if bad.any():
        raise ParameterError(f"IDUE needs 0 < b < a < 1 at every level; bad levels {_show(np.flatnonzero(bad))}")
    return a, b


def idue_log_ratios(a: Any, b: Any) -> np.ndarray:
    """The log-likelihood ratios of eq. 5 for every ordered pair of levels.

    .. math::

        L_{ij} = \\ln\\frac{a_i (1 - b_j)}{b_i (1 - a_j)}
               = \\underbrace{\\ln a_i - \\ln b_i}_{\\alpha_i}
               + \\underbrace{\\ln(1 - b_j) - \\ln(1 - a_j)}_{\\beta_j},

    the largest :math:`\\ln[\\Pr(y \\mid v_i)/\\Pr(y \\mid v_j)]` over all outputs ``y`` when
    :math:`0 < b < a < 1` (Gu et al., Sec. V-B). ID-LDP requires :math:`L_{ij} \\le r_{ij}`.

    Examples
    --------
    >>> L = idue_log_ratios([2 / 3], [1 / 3])  # RAPPOR at eps = ln 4
    >>> bool(np.isclose(L[0, 0], np.log(4)))
    True
    """
    a, b = _check_ab(a, b)
    alpha = np.log(a) - np.log(b)
    beta = np.log1p(-b) - np.log1p(-a)
    return alpha[:, None] + beta[None, :]


def idue_objective(a: Any, b: Any, sizes: Any) -> float:
    """Eq. 8's objective: the worst-case total MSE of the IDUE estimator divided by ``n``.

    .. math::

        f = \\sum_{i=1}^t \\frac{m_i b_i (1 - b_i)}{(a_i - b_i)^2}
            + \\max_i \\frac{1 - a_i - b_i}{a_i - b_i}

    (Gu et al. eq. 7-8: :math:`\\mathrm{Var}[\\hat c_k] = n b(1-b)/(a-b)^2 + c^*_k (1-a-b)/(a-b)`,
    and since :math:`\\sum_k c^*_k = n`, the worst case puts every user in the level with the
    largest second coefficient.)

    Examples
    --------
    >>> round(idue_objective([0.5], [0.2], [5]), 4)  # OUE at ln 4, five items: 9.9n (Table I)
    9.8889
    """
    a, b = _check_ab(a, b)
    m = np.asarray(sizes, dtype=float)
    if m.shape != a.shape:
        raise ParameterError(f"sizes must have the shape of a, {a.shape}, got {m.shape}")
    gap = a - b
    return float(np.sum(m * b * (1.0 - b) / gap**2) + np.max((1.0 - a - b) / gap))


# --------------------------------------------------------------------------- validation
def _check_levels(epsilons: Any, sizes: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(eps, m)`` as float and int64 arrays, or raise naming the bad entries."""
    if np.ndim(epsilons) > 1:
        raise ParameterError(f"epsilons must be one-dimensional, got shape {np.shape(epsilons)}")
    raw_e = np.asarray(epsilons, dtype=object).reshape(-1)
    if raw_e.size == 0:
        raise ParameterError("epsilons must hold at least one level budget")
    eps = np.empty(raw_e.size)
    bad: list[str] = []
    for i, e in enumerate(raw_e):
        if isinstance(e, (bool, np.bool_)) or not isinstance(e, numbers.Real):
            bad.append(f"[{i}]={e!r}")
            continue
        eps[i] = float(e)
        if not math.isfinite(eps[i]) or eps[i] <= 0.0 or eps[i] > MAX_EPSILON:
            bad.append(f"[{i}]={e!r}")
    if bad:
        raise BudgetError(f"epsilons must be finite numbers in (0, {MAX_EPSILON:g}]; bad entries: {_show(bad)}")

    if np.ndim(sizes) > 1:
        raise ParameterError(f"sizes must be one-dimensional, got shape {np.shape(sizes)}")
    raw_m = np.asarray(sizes, dtype=object).reshape(-1)
    if raw_m.size != eps.size:
        raise ParameterError(f"sizes has length {raw_m.size} but epsilons has length {eps.size}")
    m = np.empty(raw_m.size, dtype=np.int64)
    bad = []
    for i, s in enumerate(raw_m):
        ok = False
        if isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)):
            ok = s >= 1
        elif isinstance(s, (float, np.floating)):
            ok = math.isfinite(s) and float(s).is_integer() and s >= 1
        if not ok:
            bad.append(f"[{i}]={s!r}")
            continue
        m[i] = int(s)
    if bad:
        raise ParameterError(f"sizes must be integers >= 1 (items per level); bad entries: {_show(bad)}")
    return eps, m


def _constraint_mask(m: np.ndarray, same_level: str) -> np.ndarray:
    """Boolean ``(t, t)``: which ordered pairs ``(i, j)`` carry the constraint of eq. 5."""
    mask = ~np.eye(m.size, dtype=bool)
    idx = np.arange(m.size)
    mask[idx, idx] = True if same_level == "always" else m >= 2
    return mask


# --------------------------------------------------------------------------- feasibility
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


# --------------------------------------------------------------------------- opt1, opt2
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
    x = x0.astype(float).copy()
    s = cons.rhs - cons.apply(x)
    vals, g, h = obj.terms(x)
    f = float(vals.sum())
    mu = abs(f) / K
    lam = mu / s
    tiny = np.finfo(float).tiny

    def residual(
        xv: np.ndarray, sv: np.ndarray, lv: np.ndarray, gv: np.ndarray, mu: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return gv + cons.rmatvec(lv), cons.apply(xv) + sv - cons.rhs, sv * lv - mu

    converged = False
    best = (math.inf, x, lam)
    stalled = 0
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - reported
        gap = f - _dual_value(obj, cons, lam)
        stalled = 0 if gap < 0.99 * best[0] else stalled + 1
        if gap < best[0]:
            best = (gap, x, lam)
        if gap <= rtol * abs(f):
            converged = True
            break
        if stalled >= 20:  # rounding limits the attainable gap: stop
            break
        mu = min(mu, _MU_FACTOR * max(gap, 0.0) / K)
        rd, rp, rc = residual(x, s, lam, g, mu)
        # each residual relative to the size of its terms (fixed during the line search), so that
        # a rounding-level dual residual cannot mask progress in complementarity
        weights = (
            1.0 / (np.abs(g) + np.abs(cons.rmatvec(lam)) + tiny),
            1.0 / (np.abs(cons.rhs) + np.abs(cons.apply(x)) + s + tiny),
            1.0 / (s * lam + mu + tiny),
        )
        norm0 = _wnorm(weights, (rd, rp, rc))
        M = cons.gram(lam / s)
        M[np.diag_indices_from(M)] += h
        sc = 1.0 / np.sqrt(np.maximum(np.diag(M), tiny))
        Ms = M * sc[:, None] * sc[None, :]
        rhs = sc * (-rd + cons.rmatvec((rc - lam * rp) / s))
        try:
            dx = sc * cho_solve(cho_factor(Ms, check_finite=False), rhs, check_finite=False)
        except (LinAlgError, ValueError):
            dx = sc * np.linalg.lstsq(Ms, rhs, rcond=None)[0]
        ds = -rp - cons.apply(dx)
        dl = (-rc - lam * ds) / s
        step = min(_max_step(s, ds), _max_step(lam, dl), _max_step(x - obj.lower, dx))
        if math.isfinite(obj.upper):
            step = min(step, _max_step(obj.upper - x, -dx))
        step = min(1.0, 0.99 * step)
        for _ in range(60):  # backtrack until the KKT residual decreases
            xn, sn, ln = x + step * dx, s + step * ds, lam + step * dl
            vn, gn, hn = obj.terms(xn)
            r1, r2, r3 = residual(xn, sn, ln, gn, mu)
            if _wnorm(weights, (r1, r2, r3)) <= (1.0 - 0.01 * step) * norm0:
                break
            step *= 0.5
        else:
            break  # no progress possible in floating point
        if not (np.all(sn > 0) and np.all(ln > 0) and np.all(xn > obj.lower) and np.all(xn < obj.upper)):
            break  # the step rule prevents this; never leave the domain
        x, s, lam, g, h = xn, sn, ln, gn, hn
        f = float(vn.sum())
    else:
        gap = f - _dual_value(obj, cons, lam)
        if gap < best[0]:
            best = (gap, x, lam)
    gap, x, lam = (gap, x, lam) if converged else best
    return _ConvexResult(x, lam, it, gap, converged)


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


# --------------------------------------------------------------------------- opt0
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
    of a local solve; ``n_random`` random feasible starts are added. SLSQP works on
    :math:`\\alpha_i / \\min_j r_{ij}` and :math:`\\beta_j / \\min(30, \\min_i r_{ij})` (in (0, 1]:
    well scaled whatever the budgets), with the rows of eq. 5 divided by :math:`r_{ij}` and the
    objective by the best start's value.
    """
    t = m.size
    mf = m.astype(float)
    li, lj = np.nonzero(mask)
    Rm = np.where(mask, R, np.inf)
    # variable scales: the largest feasible alpha_i (min_j r_ij) and beta_j (min_i r_ij, <= 30)
    sv = np.concatenate([Rm.min(axis=1), np.minimum(Rm.min(axis=0), _BETA_CAP)])
    K = li.size
    rk = R[li, lj]
    jac_lin = np.zeros((K, 2 * t + 1))  # rows 1 - (alpha_i + beta_j) / r_ij >= 0, in scaled variables
    jac_lin[np.arange(K), li] = -sv[li] / rk
    jac_lin[np.arange(K), t + lj] = -sv[t + lj] / rk

    candidates = list(seeds)
    rng = np.random.default_rng(seed)
    starts = [p.x for p in seeds]
    for _ in range(n_random):
        p = _tighten(_random_feasible(rng, R, mask), _ab_from_alpha_beta, _lower_ab, R, mask, m)
        if p is not None:
            candidates.append(p)
            starts.append(p.x)
    fs = min(c.objective for c in candidates)  # objective scale

    def unscale(v: np.ndarray) -> np.ndarray:
        return sv * v[: 2 * t]

    def objective(v: np.ndarray) -> tuple[float, np.ndarray]:
        x, y = _xy(unscale(v), t)
        grad = np.empty_like(v)
        grad[:t] = -mf * (1.0 + y) * x * (1.0 + x) * sv[:t]
        grad[t : 2 * t] = -mf * x * y * (1.0 + y) * sv[t:]
        grad[-1] = 1.0
        return float(np.sum(mf * x * (1.0 + y)) + v[-1]) / fs, grad / fs

    def epi(v: np.ndarray) -> np.ndarray:  # z - (y_i - x_i) >= 0
        x, y = _xy(unscale(v), t)
        return v[-1] - y + x

    def epi_jac(v: np.ndarray) -> np.ndarray:
        x, y = _xy(unscale(v), t)
        jac = np.zeros((t, 2 * t + 1))
        idx = np.arange(t)
        jac[idx, idx] = -x * (1.0 + x) * sv[:t]
        jac[idx, t + idx] = y * (1.0 + y) * sv[t:]
        jac[:, -1] = 1.0
        return jac

    def lin(v: np.ndarray) -> np.ndarray:
        ab = unscale(v)
        return 1.0 - (ab[li] + ab[t + lj]) / rk

    constraints = [
        {"type": "ineq", "fun": lin, "jac": lambda v: jac_lin},
        {"type": "ineq", "fun": epi, "jac": epi_jac},
    ]
    bounds = [(1e-9, 1.0)] * (2 * t) + [(None, None)]
    iterations = 0
    for s in starts:
        x, y = _xy(s, t)
        v0 = np.append(np.minimum(s / sv, 1.0), np.max(y - x))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            res = minimize(
                objective,
                v0,
                jac=True,
                method="SLSQP",
                bounds=bounds,
                constraints=constraints,
                options={"maxiter": maxiter, "ftol": 1e-12},
            )
        iterations += int(res.nit)
        ab = unscale(np.asarray(res.x, dtype=float))
        if not (np.all(np.isfinite(ab)) and np.all(ab > 0)):
            continue
        if (R - (ab[:t, None] + ab[None, t:]))[mask].min() < -_REPAIR_LIMIT:
            continue  # clearly infeasible: discard
        p = _tighten(ab, _ab_from_alpha_beta, _lower_ab, R, mask, m)
        if p is not None:
            p.success = bool(res.success)
            candidates.append(p)
    best = min(candidates, key=lambda c: c.objective)
    # converged: a local solve that met SLSQP's stopping rule reached the best value (within 1e-9)
    best.success = any(c.success and c.objective <= best.objective * (1.0 + 1e-9) for c in candidates)
    return best, iterations, len(starts)


# --------------------------------------------------------------------------- entry point
def solve_idue(
    epsilons: Any,
    sizes: Any,
    model: Model = "opt0",
    pair_rule: PairRule = "min",
    same_level: SameLevel = "auto",
    *,
    rtol: float = 1e-10,
    n_random: int = 4,
    seed: int | None = 0,
    max_iter: int = 500,
) -> IDUESolution:
    """Optimal IDUE perturbation probabilities for the given privacy levels (Gu et al. Sec. V-D).

    Parameters
    ----------
    epsilons : array_like, shape (t,)
        Budget :math:`\\varepsilon_i` of each privacy level, a finite number in (0, 700].
        Levels with equal budgets are allowed (they are solved as separate levels).
    sizes : array_like of int, shape (t,)
        Number of items :math:`m_i \\ge 1` of each level.
    model : {"opt0", "opt1", "opt2"}
        ``"opt0"``: eq. 8, the worst-case MSE over all :math:`0 < b < a < 1` (non-convex,
        multi-start local search; never worse than the others). ``"opt1"``: eq. 10, RAPPOR
        structure :math:`a_i + b_i = 1`. ``"opt2"``: eq. 11, OUE structure :math:`a_i = 1/2`.
        opt1 and opt2 are convex and solved to the certified gap ``rtol``.
    pair_rule : {"min", "avg"}
        Pair budget :math:`r(\\varepsilon_i, \\varepsilon_j)`: ``"min"`` for MinID-LDP
        (Def. 3), ``"avg"`` for AvgID-LDP, :math:`(\\varepsilon_i + \\varepsilon_j)/2`
        (Sec. VIII).
    same_level : {"auto", "always"}
        The constraint of eq. 5 with ``i == j`` (two items of one level,
        :math:`a_i(1-b_i)/(b_i(1-a_i)) \\le e^{\\varepsilon_i}`). ``"auto"`` (default, ERRATA
        IDUE-3): imposed exactly for the levels that hold two or more items, which is the
        exact ID-LDP constraint set. ``"always"``: imposed for every level, as eq. 5 is
        printed (stricter than needed for single-item levels). There is no ``"never"``:
        dropping the constraint for a level with two items would break the privacy claim.
    rtol : float
        opt1/opt2 stop when the certified duality gap is at most ``rtol`` times the
        objective (also used for the opt1/opt2 starts of opt0).
    n_random : int
        opt0: seeded random feasible starts, on top of RAPPOR, OUE, opt1 and opt2.
    seed : int or None
        opt0: seed of the random starts (``None``: fresh entropy, not reproducible).
    max_iter : int
        Iteration cap: interior-point iterations (opt1/opt2) or SLSQP iterations per start
        (opt0).

    Returns
    -------
    IDUESolution
        Per-level ``a``, ``b`` (always feasible: ``margin > 0``), objective values, active
        constraints and diagnostics.

    Raises
    ------
    BudgetError
        A budget is not a finite number in (0, 700].
    ParameterError
        Bad ``sizes`` (not integers >= 1, wrong length), unknown ``model``, ``pair_rule`` or
        ``same_level``, bad solver options, or a single level holding a single item under
        ``same_level="auto"`` (nothing to protect: no optimum exists).
    SolverError
        No feasible point was found (not expected; the message holds the diagnostics).

    Notes
    -----
    Pair budgets above ``R_CAP = 60`` are lowered to 60 inside the solvers, and
    :math:`\\tau` (opt1), :math:`\\beta` (opt0) kept at most 30, so that every probability is
    representable in double precision; this only makes the mechanism more private and changes
    the objective by less than :math:`10^{-12}\\sum_i m_i` (see the module notes). ``active``
    and ``margin`` are reported against the uncapped budgets.

    Cost: opt1 and opt2 take tens of milliseconds for ``t = 100`` levels; opt0 runs
    ``4 + n_random`` dense SLSQP solves with ``t^2`` constraints, tens of milliseconds for a
    handful of levels and seconds for ``t = 20``.

    Examples
    --------
    The toy example of Table I, :math:`\\varepsilon_1 = \\ln 4` (one item) and four items at
    :math:`\\ln 6`: the paper's flip probabilities, and a worst-case MSE of 8.57n (the paper's
    8.86n was computed from rounded probabilities, ERRATA IDUE-1).

    >>> sol = solve_idue([np.log(4), np.log(6)], [1, 4], model="opt0")
    >>> [round(float(v), 2) for v in (1 - sol.a[0], 1 - sol.a[1], sol.b[0], sol.b[1])]
    [0.41, 0.33, 0.33, 0.28]
    >>> round(sol.objective, 2), sol.active, sol.margin > 0
    (8.57, ((0, 1), (1, 0)), True)
    """
    eps, m = _check_levels(epsilons, sizes)
    if model not in ("opt0", "opt1", "opt2"):
        raise ParameterError(f"model must be 'opt0', 'opt1' or 'opt2', got {model!r}")
    if pair_rule not in ("min", "avg"):
        raise ParameterError(f"pair_rule must be 'min' (MinID-LDP) or 'avg' (AvgID-LDP), got {pair_rule!r}")
    if same_level not in ("auto", "always"):
        raise ParameterError(f"same_level must be 'auto' or 'always', got {same_level!r}")
    if isinstance(rtol, bool) or not isinstance(rtol, numbers.Real) or not 0.0 < float(rtol) < 1.0:
        raise ParameterError(f"rtol must be a number in (0, 1), got {rtol!r}")
    for name, val, low in (("n_random", n_random, 0), ("max_iter", max_iter, 1)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < low:
            raise ParameterError(f"{name} must be an integer >= {low}, got {val!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise ParameterError(f"seed must be an integer or None, got {seed!r}")
    t = eps.size
    if same_level == "auto" and t == 1 and m[0] == 1:
        raise ParameterError(
            "a single level with a single item (sizes=[1]) has no pair of inputs to protect under "
            "same_level='auto', so no optimum exists; use same_level='always' or add items"
        )
    R_exact = pair_budgets(eps, pair_rule)
    R = np.minimum(R_exact, R_CAP)  # stricter than asked above the cap: still private
    mask = _constraint_mask(m, same_level)
    rtol, n_random, max_iter = float(rtol), int(n_random), int(max_iter)

    def fail(detail: str) -> SolverError:
        return SolverError(
            f"IDUE {model}: no feasible point found ({detail}); epsilons={_show(eps)}, sizes={_show(m)}, "
            f"pair_rule={pair_rule!r}, same_level={same_level!r}"
        )

    gap = math.nan
    if model in ("opt1", "opt2"):
        point, res, model_objective, gap = _solve_convex(model, R, mask, m, rtol, max_iter)
        if point is None:
            raise fail(f"iterations={res.iterations}, gap={res.gap:.3g}, converged={res.converged}")
        iterations, starts, converged = res.iterations, 1, res.converged
    else:
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
        if not seeds:
            raise fail("no feasible starting point")
        point, its, starts = _solve_opt0(R, mask, m, seeds, n_random, seed, max_iter)
        iterations += its
        converged = point.success
        model_objective = point.objective

    a = np.array(point.a, dtype=float)
    b = np.array(point.b, dtype=float)
    sl = R_exact - idue_log_ratios(a, b)
    active = tuple((int(i), int(j)) for i, j in zip(*np.nonzero(mask & (sl < ACTIVE_TOL)), strict=True))
    margin = float(sl[mask].min())
    for arr in (a, b, eps, m):
        arr.setflags(write=False)
    return IDUESolution(
        a=a,
        b=b,
        epsilons=eps,
        sizes=m,
        model=model,
        pair_rule=pair_rule,
        same_level=same_level,
        objective=point.objective,
        model_objective=float(model_objective),
        active=active,
        margin=margin,
        iterations=int(iterations),
        starts=int(starts),
        converged=bool(converged),
        gap=float(gap),
    )
