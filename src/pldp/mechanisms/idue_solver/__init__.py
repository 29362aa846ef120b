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
  constraints). ``4 + n_random`` dense SLSQP solves take tens of milliseconds for a handful of
  levels and seconds for ``t = 20``.

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
above 30 and change the objective by less than :math:`10^{-12} \\sum_i m_i`. ``active`` and
``margin`` of :class:`IDUESolution` are reported against the uncapped budgets.

Modules
-------
* :mod:`~pldp.mechanisms.idue_solver.solution`: :class:`IDUESolution`, the log ratios of eq. 5
  and the objective of eq. 8.
* :mod:`~pldp.mechanisms.idue_solver.feasibility`: the parameterisations, the caps and the
  tightening of a candidate into strict feasibility.
* :mod:`~pldp.mechanisms.idue_solver.interior_point`: the primal-dual interior-point method for
  a separable convex objective under pair constraints.
* :mod:`~pldp.mechanisms.idue_solver.convex`: opt1 and opt2 as instances of it, with their
  exact dual functions.
* :mod:`~pldp.mechanisms.idue_solver.opt0`: the multi-start SLSQP of opt0 and its starts.
* :mod:`~pldp.mechanisms.idue_solver.solve`: :func:`solve_idue`, the entry point.

References
----------
Gu, Li, Xiong, Cao. Providing Input-Discriminative Protection for Local Differential Privacy,
ICDE 2020: Sec. V-B (eq. 5), V-C (eq. 6-7), V-D (eq. 8-11), V-E (Table I), VIII (AvgID-LDP);
corrections from ``ERRATA.md`` (IDUE-1..4).
"""

from pldp.mechanisms.idue_solver.feasibility import R_CAP
from pldp.mechanisms.idue_solver.solution import ACTIVE_TOL, IDUESolution, idue_log_ratios, idue_objective
from pldp.mechanisms.idue_solver.solve import MAX_EPSILON, solve_idue

__all__ = ["ACTIVE_TOL", "MAX_EPSILON", "R_CAP", "IDUESolution", "idue_log_ratios", "idue_objective", "solve_idue"]
