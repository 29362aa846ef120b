"""The entry point :func:`solve_idue`: validation, pair budgets and mask, the model's solver, the result.

The steps: the levels and options are checked (:func:`_check_levels`, :func:`_check_options`);
the pair budgets :math:`r_{ij}` (exact, and capped at
:data:`~pldp.mechanisms.idue_solver.feasibility.R_CAP` for the solvers) and the constrained
pairs are set up (:class:`_Setup`); opt1 and opt2 run the interior-point method
(:func:`_run_convex`), opt0 the multi-start from its seeds (:func:`_run_opt0`); the point found
becomes an :class:`~pldp.mechanisms.idue_solver.solution.IDUESolution`, judged against the
exact budgets (:func:`_assemble`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from pldp._validation import _show
from pldp.errors import BudgetError, ParameterError, SolverError
from pldp.mechanisms.idue_solver.convex import _solve_convex
from pldp.mechanisms.idue_solver.feasibility import R_CAP, _Point
from pldp.mechanisms.idue_solver.opt0 import _opt0_seeds, _solve_opt0
from pldp.mechanisms.idue_solver.solution import ACTIVE_TOL, IDUESolution, idue_log_ratios
from pldp.privacy import pair_budgets

Model = Literal["opt0", "opt1", "opt2"]
PairRule = Literal["min", "avg"]
SameLevel = Literal["auto", "always"]

#: Largest budget accepted: beyond it ``exp(eps)`` overflows a double.
MAX_EPSILON = 700.0


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
            ok = bool(s >= 1)
        elif isinstance(s, (float, np.floating)):
            ok = bool(math.isfinite(s) and float(s).is_integer() and s >= 1)
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
        Where eq. 5's ``(i, i)`` constraint is imposed: ``"auto"`` (ERRATA IDUE-3) for the levels
        with two or more items, the exact ID-LDP constraint set; ``"always"`` for every level,
        as printed.
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
        Bad sizes or options, or a single level with a single item under ``"auto"``.
    SolverError
        No feasible point was found (not expected; the message holds the diagnostics).

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
    _check_options(model, pair_rule, same_level, rtol, n_random, max_iter, seed)
    _check_protectable(m, same_level)
    setup = _Setup.of(eps, m, model, pair_rule, same_level)
    if model == "opt0":
        outcome = _run_opt0(setup, float(rtol), int(n_random), seed, int(max_iter))
    else:
        outcome = _run_convex(setup, float(rtol), int(max_iter))
    return _assemble(setup, outcome)


def _check_options(
    model: Any, pair_rule: Any, same_level: Any, rtol: Any, n_random: Any, max_iter: Any, seed: Any
) -> None:
    """Raise :class:`~pldp.errors.ParameterError` naming the first bad option of :func:`solve_idue`."""
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


def _check_protectable(m: np.ndarray, same_level: str) -> None:
    """Raise if nothing is constrained: one level holding one item under ``same_level="auto"``."""
    if same_level == "auto" and m.size == 1 and m[0] == 1:
        raise ParameterError(
            "a single level with a single item (sizes=[1]) has no pair of inputs to protect under "
            "same_level='auto', so no optimum exists; use same_level='always' or add items"
        )


@dataclass(frozen=True)
class _Setup:
    """The validated levels and options, with what every model solves against.

    ``R_exact`` holds the pair budgets :math:`r_{ij}` of ``pair_rule``, ``R`` the same capped at
    :data:`~pldp.mechanisms.idue_solver.feasibility.R_CAP` (stricter than asked above the cap:
    still private), ``mask`` the ordered pairs that carry the constraint of eq. 5.
    """

    eps: np.ndarray
    m: np.ndarray
    model: str
    pair_rule: str
    same_level: str
    R_exact: np.ndarray
    R: np.ndarray
    mask: np.ndarray

    @classmethod
    def of(cls, eps: np.ndarray, m: np.ndarray, model: str, pair_rule: str, same_level: str) -> _Setup:
        R_exact = pair_budgets(eps, pair_rule)
        R = np.minimum(R_exact, R_CAP)
        return cls(eps, m, model, pair_rule, same_level, R_exact, R, _constraint_mask(m, same_level))

    def fail(self, detail: str) -> SolverError:
        """The error raised when no feasible point is found, with the diagnostics."""
        return SolverError(
            f"IDUE {self.model}: no feasible point found ({detail}); epsilons={_show(self.eps)}, "
            f"sizes={_show(self.m)}, pair_rule={self.pair_rule!r}, same_level={self.same_level!r}"
        )


class _Outcome(NamedTuple):
    """A model's solution before assembly, with the solver's diagnostics (see :class:`IDUESolution`)."""

    point: _Point
    model_objective: float
    gap: float
    iterations: int
    starts: int
    converged: bool


def _run_convex(setup: _Setup, rtol: float, max_iter: int) -> _Outcome:
    """opt1 or opt2: the interior-point solution, tightened, with its certified gap."""
    point, res, model_objective, gap = _solve_convex(setup.model, setup.R, setup.mask, setup.m, rtol, max_iter)
    if point is None:
        raise setup.fail(f"iterations={res.iterations}, gap={res.gap:.3g}, converged={res.converged}")
    return _Outcome(point, model_objective, gap, res.iterations, 1, res.converged)


def _run_opt0(setup: _Setup, rtol: float, n_random: int, seed: int | None, max_iter: int) -> _Outcome:
    """opt0: the multi-start from RAPPOR, OUE, opt1, opt2 and ``n_random`` random starts (no certificate)."""
    seeds, iterations = _opt0_seeds(setup.R, setup.mask, setup.m, rtol, max_iter)
    if not seeds:
        raise setup.fail("no feasible starting point")
    point, its, starts = _solve_opt0(setup.R, setup.mask, setup.m, seeds, n_random, seed, max_iter)
    return _Outcome(point, point.objective, math.nan, iterations + its, starts, point.success)


def _assemble(setup: _Setup, outcome: _Outcome) -> IDUESolution:
    """The returned solution: ``active`` and ``margin`` against the exact (uncapped) budgets; arrays read-only."""
    point, mask = outcome.point, setup.mask
    a = np.array(point.a, dtype=float)
    b = np.array(point.b, dtype=float)
    sl = setup.R_exact - idue_log_ratios(a, b)
    active = tuple((int(i), int(j)) for i, j in zip(*np.nonzero(mask & (sl < ACTIVE_TOL)), strict=True))
    margin = float(sl[mask].min())
    for arr in (a, b, setup.eps, setup.m):
        arr.setflags(write=False)
    return IDUESolution(
        a=a,
        b=b,
        epsilons=setup.eps,
        sizes=setup.m,
        model=setup.model,
        pair_rule=setup.pair_rule,
        same_level=setup.same_level,
        objective=point.objective,
        model_objective=float(outcome.model_objective),
        active=active,
        margin=margin,
        iterations=int(outcome.iterations),
        starts=int(outcome.starts),
        converged=bool(outcome.converged),
        gap=float(outcome.gap),
    )
