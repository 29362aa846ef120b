"""What a solution of IDUE is and how it is judged: eq. 5's log ratios and eq. 8's objective.

:class:`IDUESolution` is what :func:`~pldp.mechanisms.idue_solver.solve_idue` returns.
:func:`idue_log_ratios` (the ID-LDP constraints, Gu et al. eq. 5) and :func:`idue_objective`
(the worst-case MSE, eq. 8) take any ``0 < b < a < 1``; the solvers judge every candidate
with them, from the floating-point ``a, b`` that would be returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp._validation import _show
from pldp.errors import ParameterError

#: A constraint is reported active when its log-space slack is below this.
ACTIVE_TOL = 1e-7


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
        Which diagonal constraints ``(i, i)`` were imposed (see :func:`~pldp.mechanisms.idue_solver.solve_idue`).
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
