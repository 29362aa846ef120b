"""Running an EM map to convergence, plainly or accelerated by SQUAREM, with a monotone guarantee.

An EM algorithm is a map :math:`\\theta \\mapsto F(\\theta)` that never lowers the likelihood.
:func:`run_em` iterates any such map whose parameter is a concatenation of probability vectors
(*blocks*, e.g. item frequencies and level shares), with one stopping rule, and optionally the
SQUAREM extrapolation of Varadhan & Roland (Scand. J. Stat. 35, 2008), scheme S3, with the
step-length safeguards of Du & Varadhan (J. Stat. Softw. 92(7), 2020):

.. math::

    r = F(\\theta) - \\theta, \\quad v = F(F(\\theta)) - 2F(\\theta) + \\theta, \\quad
    \\alpha = \\min\\big(\\max(\\lVert r\\rVert / \\lVert v\\rVert, 1), \\alpha_{\\max}\\big), \\quad
    \\theta' = \\theta + 2\\alpha r + \\alpha^2 v,

then one EM step from :math:`\\theta'` ("stabilisation"). Safeguards: a step that leaves the
parameter space (a negative entry) is shortened, :math:`\\alpha \\leftarrow (1 + \\alpha)/2`; a
step whose log-likelihood :math:`\\ell(\\theta')` falls below :math:`\\ell(F(\\theta))` is
backtracked, :math:`\\alpha \\leftarrow 1 + (\\alpha - 1)/4`, and after
:data:`BACKTRACKS` failures the plain double step :math:`F(F(\\theta))` is kept
(:math:`\\alpha = 1`). :math:`\\alpha_{\\max}` starts at 1, is multiplied by 4 after a step
taken at the bound and divided by 4 (not below 1) after a failed one.

**Monotonicity** (the convergence guarantee). Write :math:`\\theta_k` for the parameter at the
start of cycle ``k``. The cycle ends at :math:`F(\\theta')` with
:math:`\\ell(F(\\theta')) \\ge \\ell(\\theta') \\ge \\ell(F(\\theta_k)) \\ge \\ell(\\theta_k)`, or
at :math:`F(F(\\theta_k))` with :math:`\\ell \\ge \\ell(F(\\theta_k)) \\ge \\ell(\\theta_k)`: the
log-likelihood never decreases from cycle to cycle, as for plain EM, so every limit point is a
stationary point of the likelihood under the usual EM conditions (Wu, Ann. Stat. 1983), and
the accelerated and the plain EM end at the same optimum when it is unique.

The earlier loop kept an extrapolation only if it did not lower the likelihood and otherwise
fell back to the plain double step, without backtracking or a step bound: on a FEBSF tally
under a level attack (n = 100,000, d = 16, 4.5 % fakes claiming level 0.1, OUE) the first
proposed steps were :math:`\\alpha \\approx 6000`, 96 % of them were refused, and the EM took
8,337 steps (39 s); this loop takes a few hundred (``tests/test_em.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["BACKTRACKS", "EMResult", "EMStep", "run_em"]

#: One EM step: ``step(theta) -> (F(theta), loglik(theta))`` (the log-likelihood at the *input*).
EMStep = Callable[[np.ndarray], tuple[np.ndarray, float]]

#: Likelihood evaluations spent backtracking one SQUAREM step before the plain double step is kept.
BACKTRACKS = 4
#: Factor by which the step bound grows after a step at the bound and shrinks after a failed one.
_MSTEP = 4.0


@dataclass(frozen=True)
class EMResult:
    """What :func:`run_em` returns.

    Attributes
    ----------
    theta : ndarray
        The last parameter.
    loglik : float
        Its log-likelihood (as the step returned it).
    steps : int
        EM steps taken (calls of the map).
    converged : bool
        Whether the stopping rule was met (else ``max_iter`` was reached).
    gain, moved : float
        The last cycle's log-likelihood gain and largest parameter change.
    threshold : tuple of float
        What the stopping rule needed of them: ``(tol (1 + |loglik|), 0.01 sqrt(tol))``.
    extrapolated : int
        SQUAREM steps accepted (0 without acceleration).
    history : tuple of float
        The log-likelihood at the start of every cycle (non-decreasing up to rounding: the
        guarantee of the module docstring).
    """

    theta: np.ndarray
    loglik: float
    steps: int
    converged: bool
    gain: float
    moved: float
    threshold: tuple[float, float]
    extrapolated: int = 0
    history: tuple[float, ...] = ()

    def diagnostic(self) -> str:
        """A sentence saying how the run ended."""
        if self.converged:
            return f"converged in {self.steps} EM steps ({self.extrapolated} SQUAREM extrapolations accepted)"
        need_gain, need_move = self.threshold
        return (
            f"the EM reached max_iter = {self.steps} steps without meeting its stopping rule: the last cycle raised "
            f"the log-likelihood by {self.gain:.3g} (the rule needs <= {need_gain:.3g}) and moved a parameter by "
            f"{self.moved:.3g} (needs <= {need_move:.3g}); raise max_iter or tol"
        )


def _threshold(loglik: float, tol: float) -> tuple[float, float]:
    return tol * (1 + abs(loglik)), 1e-2 * math.sqrt(tol)


def _settled(gain: float, loglik: float, moved: float, tol: float) -> bool:
    """The stopping rule: the log-likelihood rose by less than ``tol (1 + |loglik|)`` and no
    parameter moved by more than ``0.01 sqrt(tol)``."""
    need_gain, need_move = _threshold(loglik, tol)
    return gain <= need_gain and moved <= need_move


def _renormalise(theta: np.ndarray, blocks: Sequence[int]) -> np.ndarray:
    """Divide each block of ``theta`` by its sum."""
    sums = np.concatenate([np.full(size, part.sum()) for size, part in zip(blocks, _split(theta, blocks), strict=True)])
    return theta / sums


def _split(theta: np.ndarray, blocks: Sequence[int]) -> list[np.ndarray]:
    return np.split(theta, np.cumsum(blocks)[:-1])


def _squarem_cycle(
    step: EMStep, theta: np.ndarray, blocks: Sequence[int], alpha_max: float, budget: int
) -> tuple[np.ndarray, float, float, int, float, bool]:
    """One SQUAREM cycle from ``theta``: ``(new, loglik at theta, a loglik reached, steps, new bound, accepted)``."""
    th1, ll0 = step(theta)
    th2, ll1 = step(th1)
    steps = 2
    r = th1 - theta
    v = th2 - th1 - r
    nv = float(np.linalg.norm(v))
    alpha = min(max(float(np.linalg.norm(r)) / nv, 1.0), alpha_max) if nv > 0 else 1.0
    at_bound = alpha >= alpha_max
    tries = 0
    while alpha > 1.0 + 1e-9 and tries < BACKTRACKS and steps < budget:
        trial = theta + 2.0 * alpha * r + alpha * alpha * v
        if not np.all(trial >= 0):
            alpha = (1.0 + alpha) / 2.0 if alpha > 1.01 else 1.0
            continue
        th3, ll3 = step(_renormalise(trial, blocks))
        steps += 1
        tries += 1
        if ll3 >= ll1:
            bound = alpha_max * _MSTEP if at_bound else alpha_max
            return th3, ll0, ll3, steps, bound, True
        alpha = 1.0 + (alpha - 1.0) / 4.0
    if tries:  # every extrapolation lowered the likelihood: keep the plain double step
        return th2, ll0, ll1, steps, max(1.0, alpha_max / _MSTEP), False
    return th2, ll0, ll1, steps, alpha_max * _MSTEP if at_bound else alpha_max, False


def run_em(
    step: EMStep,
    theta: np.ndarray,
    blocks: Sequence[int],
    tol: float,
    max_iter: int,
    accelerate: bool = True,
) -> EMResult:
    """Iterate an EM map to convergence.

    Parameters
    ----------
    step : callable
        ``step(theta) -> (F(theta), loglik(theta))``.
    theta : ndarray
        Starting point: the concatenation of probability vectors of sizes ``blocks``.
    blocks : sequence of int
        Sizes of the probability vectors in ``theta``.
    tol : float
        Stop when the log-likelihood rises by less than ``tol * (1 + |loglik|)`` and no
        parameter moves by more than ``0.01 sqrt(tol)`` in one cycle (one EM step, or one
        SQUAREM cycle).
    max_iter : int
        Most EM steps (calls of ``step``).
    accelerate : bool
        SQUAREM with backtracking and an adaptive step bound (module docstring); the
        log-likelihood never decreases from cycle to cycle.

    Returns
    -------
    EMResult
        The parameter, its log-likelihood, the steps, whether the rule was met, and what the
        last cycle did (:meth:`EMResult.diagnostic` says it in a sentence).
    """
    steps, extrapolated = 0, 0
    history: list[float] = []
    prev = ll = -math.inf
    gain = moved = math.inf
    alpha_max = 1.0
    while steps < max_iter:
        if not accelerate or max_iter - steps < 2:  # a SQUAREM cycle needs two steps
            new, ll = step(theta)
            steps += 1
            history.append(ll)
            moved = float(np.max(np.abs(new - theta)))
            theta, gain = new, ll - prev
            if _settled(gain, ll, moved, tol):
                return EMResult(theta, ll, steps, True, gain, moved, _threshold(ll, tol), extrapolated, tuple(history))
            prev = ll
            continue
        new, ll, reached, used, alpha_max, accepted = _squarem_cycle(step, theta, blocks, alpha_max, max_iter - steps)
        steps += used
        extrapolated += accepted
        history.append(ll)
        moved = float(np.max(np.abs(new - theta)))
        theta, gain = new, reached - ll
        if _settled(gain, reached, moved, tol):
            return EMResult(
                theta, reached, steps, True, gain, moved, _threshold(reached, tol), extrapolated, tuple(history)
            )
        ll = reached
    return EMResult(theta, ll, steps, False, gain, moved, _threshold(ll, tol), extrapolated, tuple(history))
