"""The direct encoding's channel on the ``2**32`` grid: :func:`grid_weights`.

A direct-encoding mechanism (:mod:`pldp.mechanisms.direct`) runs integer weights ``W_y`` and a
keep threshold ``K = 2**32 - sum(W)``; :func:`grid_weights` chooses them from the budgets, with
``K`` as large as the budgets allow and every ratio ``1 + K / W_y`` checked against
:math:`e^{\\varepsilon_y}` exactly (:func:`pldp.channel.exact.ratio_within`).
"""

from __future__ import annotations

import math

import numpy as np

from pldp.channel.exact import ratio_within
from pldp.channel.sampling import GRID, GRID_BITS
from pldp.errors import BudgetError

__all__ = ["grid_weights"]


def _short(keep: int, weights: np.ndarray, epsilons: np.ndarray, sensitive: np.ndarray) -> set[tuple[int, float]]:
    """The ``(W_y, eps_y)`` pairs whose ratio ``(W_y + keep) / W_y`` exceeds ``e**eps_y``, decided exactly."""
    pairs = {(int(w), float(e)) for w, e in zip(weights[sensitive], epsilons[sensitive], strict=True)}
    return {pair for pair in pairs if not ratio_within(pair[0] + keep, pair[0], pair[1])}


def _smallest_weights(keep: int, r: np.ndarray, epsilons: np.ndarray, sensitive: np.ndarray) -> np.ndarray:
    """The smallest weights that keep ``keep`` within the budgets: ``W_y >= keep r_y``, checked exactly.

    ``ceil(keep r_y)`` (at least 1 on a sensitive output) is raised by one step where
    floating-point error left it short of ``(W_y + keep) / W_y <= e**eps_y``.
    """
    weights = np.where(sensitive, np.maximum(np.ceil(keep * r), 1.0), 0.0).astype(np.int64)
    for _ in range(4):
        short = _short(keep, weights, epsilons, sensitive)
        if not short:
            return weights
        for w, e in short:
            weights[sensitive & (weights == w) & (epsilons == e)] += 1
    raise BudgetError("could not round the channel onto the grid within its budgets")  # pragma: no cover


def grid_weights(r: np.ndarray, epsilons: np.ndarray) -> tuple[int, np.ndarray]:
    """The channel with dishonest ratios ``r`` on the ``2**32`` grid, rounded towards more privacy.

    The exact channel has keep probability :math:`\\delta^* = 1 / (1 + \\sum_y r_y)` and dishonest
    probabilities :math:`q^*_y = r_y \\delta^*`, and output ``y`` is within its budget exactly when
    :math:`\\delta \\le q_y (e^{\\varepsilon_y} - 1)`, i.e. :math:`W_y \\ge K r_y` on the grid
    (``K`` the keep threshold, ``W_y`` the weights, ``K + sum(W) = 2**32``). Every such
    inequality is decided with exact arithmetic (:func:`pldp.channel.exact.ratio_within`).

    * **One budget** (KRR, URR, IPRR with one sensitive level): equal weights, the smallest ``W``
      for which ``K = 2**32 - n W`` is within the budget. Equal weights let
      :func:`pldp.channel.sampling.direct_draw` map a word to an output by one division; ``K`` lies at
      most ``2 n`` steps below :math:`\\delta^* 2^{32}` (``n`` sensitive outputs).
    * **Otherwise**: the largest ``K`` for which the smallest weights ``W_y = ceil(K r_y)`` fit
      on the grid; the steps left over are spread over the weights in proportion to ``r`` (so
      the channel keeps its shape), and the last few, fewer than ``n``, go to ``K`` when that
      stays within every budget and otherwise one each to the weights with the largest
      remainders. Rounding each weight up on its own (``ceil(q*_y 2**32)``, ``K`` what is left)
      would cost ``K`` up to ``n`` steps, which at 100,000 items and budgets near ``1e-3``
      (``delta* 2**32 ~ 43``) is more than there is.

    Weights only ever grow after the check, and a larger weight only lowers
    ``(W_y + K) / W_y``, so the result is within every budget.

    Parameters
    ----------
    r : ndarray
        ``1 / (e**eps_y - 1)`` for a sensitive output, ``0`` for a non-sensitive one.
    epsilons : ndarray
        The budgets, ``inf`` for a non-sensitive output.

    Returns
    -------
    keep : int
    weights : ndarray of int64

    Raises
    ------
    BudgetError
        When the budgets are so small for this many items that nothing is left to keep.
    """
    sensitive = np.isfinite(epsilons)
    n = int(np.count_nonzero(sensitive))
    eps_s = np.unique(epsilons[sensitive])
    if eps_s.size == 1:
        w = math.ceil(GRID * float(r[sensitive][0]) / (1.0 + float(r.sum())))
        for _ in range(4):
            keep = GRID - n * w
            if keep >= 1 and ratio_within(w + keep, w, float(eps_s[0])):
                return keep, np.where(sensitive, w, 0).astype(np.int64)
            w += 1
    keep = _largest_keep(r, sensitive)
    while True:
        if keep < 1:
            raise BudgetError(
                f"the budgets are too small for {r.size} items on the 2^-{GRID_BITS} grid: "
                "the probability of reporting one's own item rounds to zero"
            )
        weights = _smallest_weights(keep, r, epsilons, sensitive)
        if keep + int(weights.sum()) <= GRID:
            break
        keep -= 1  # an exact check raised a weight past the float estimate: rare, and one step
    left = GRID - keep - int(weights.sum())
    ideal = left * (r / r.sum())
    share = np.floor(ideal).astype(np.int64)
    over = int(share.sum()) - left  # > 0 only when float error rounded a share up past its ideal
    if over > 0:
        share[np.argsort(-share, kind="stable")[:over]] -= 1  # spread steps only: the minimum stays
    weights += share
    rest = left - int(share.sum())
    if rest and not _short(keep + rest, weights, epsilons, sensitive):
        keep += rest
    elif rest:
        weights[np.argsort(share - ideal, kind="stable")[:rest]] += 1
    return keep, weights


def _largest_keep(r: np.ndarray, sensitive: np.ndarray) -> int:
    """The largest ``K`` with ``K + sum(max(ceil(K r_y), 1)) <= 2**32`` over the sensitive ``y``
    (floating point; :func:`grid_weights` confirms it exactly), by bisection."""

    def total(keep: int) -> int:
        return keep + int(np.maximum(np.ceil(keep * r[sensitive]), 1.0).sum())

    lo, hi = 0, int(GRID / (1.0 + float(r.sum()))) + 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if total(mid) <= GRID else (lo, mid)
    return lo
