"""Shared fixtures and helpers for the pldp tests."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pldp


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


def fig1_budgets() -> pldp.ItemBudgets:
    """Li et al. Fig. 1: D_S = {x1, x2, x3} with E = {0.1, 0.5, 1.0}, D_N = {x4, x5}."""
    return pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, np.inf])


def zipf_iprr(d: int = 20, n: int = 10_000, seed: int = 7) -> tuple[pldp.IPRR, np.ndarray]:
    """IPRR with the paper's by-frequency budgets (0.1..10, LC=4, NR=0.5) on Zipf counts."""
    counts = pldp.datasets.zipf_counts(n, d, np.random.default_rng(seed))
    budgets = pldp.ItemBudgets.by_frequency(counts, 0.1, 10.0, 4, 0.5)
    return pldp.IPRR(budgets), counts


# ----------------------------------------------------------------------------- the 2^-32 grid
#: Grid steps a weight can lie above the exact ``q_y 2**32``: ``grid_weights`` rounds up (< 1 step)
#: and raises a weight by one more step when floating-point error left it short, so
#: ``W_y < q*_y 2**32 + 2`` for the exact (real-valued) channel ``q*``, ``delta*``.
WEIGHT_STEPS = 2


def grid_rtol(mech: pldp.DirectEncoding) -> float:
    """Relative distance, allowed by the grid, between a closed form at the textbook ``q*``,
    ``delta*`` and the same at the mechanism's ``q = W / 2**32``, ``delta = K / 2**32``.

    Every ``q_y`` moves up by less than ``WEIGHT_STEPS`` steps (relative ``< 2 / W_y``) and
    ``delta = 1 - sum(q)`` down by less than ``2 n`` steps (relative ``< 2 n / K``), ``n`` the
    number of positive weights. A variance ``m (1 - m) / delta**2`` (``m = q + delta p``) moves by at
    most the first plus twice the second to first order; a factor 2 covers the second order and
    the ``(1 - m)`` factor of the closed forms used in the tests (none has ``m`` near 1).
    """
    w = mech.weights[mech.weights > 0]
    k = mech.keep_threshold
    return 2.0 * (WEIGHT_STEPS / float(w.min()) + 2.0 * WEIGHT_STEPS * w.size / k)


def assert_grid_budgets(mech: pldp.DirectEncoding) -> None:
    """The realised epsilon of every sensitive output of a direct mechanism is within its budget
    *exactly*, and below it by no more than the 2^-32 grid implies.

    With ``W = mech.weights``, ``K = mech.keep_threshold``, ``G = 2**32`` and ``n`` positive
    weights, the realised epsilon of output ``y`` is ``ln((W_y + K) / W_y)``.

    * Within budget (the privacy claim): ``(W_y + K) / W_y <= e**eps_y``, decided exactly by
      :func:`pldp.exact.ratio_within`; the float ``realised`` of the report is ``<= eps_y`` with no
      tolerance upward.
    * Not further below than the grid: the exact channel has ``q*_y G > W_y - 2`` and
      ``delta* G = G - sum(q* G) < K + 2 n`` (every weight is at most 2 steps above its exact value,
      and ``K`` takes what the weights took), so ``e**eps_y = 1 + delta* / q*_y < 1 + (K + 2 n) / (W_y - 2)``:
      one realised ratio with 2 steps given back to ``W_y`` and ``2 n`` to ``K`` exceeds
      ``e**eps_y`` (checked exactly). A mechanism that spends less than it may by more than its
      rounding (a wrong ``r``, ``S`` or a halved budget) fails this.
    * The cap: when ``e**eps_y - 1 > G`` the exact ``q*_y = r_y S <= 1 / (e**eps_y - 1)`` is below one
      step, so ``W_y = 1`` (the smallest positive weight) and the realised epsilon is
      ``ln(1 + K) <= ln(G) ~ 22.18 < eps_y``.
    """
    from pldp.exact import ratio_within
    from pldp.sampling import GRID

    w_all = np.asarray(mech.weights)
    k = mech.keep_threshold
    eps_all = mech.budgets.epsilons
    sens = np.isfinite(eps_all)
    n = int(np.count_nonzero(w_all))
    # the exposed channel is the grid channel
    assert w_all.dtype.kind == "i" and np.all(w_all >= 0) and 1 <= k
    assert k == GRID - int(w_all.sum())
    assert np.array_equal(mech.q, w_all / GRID) and mech.delta == k / GRID
    assert np.all((w_all > 0) == sens)  # only sensitive outputs are reported by non-holders
    realised = mech.privacy().realised
    np.testing.assert_allclose(realised[sens], np.log1p(k / w_all[sens]), rtol=1e-12)
    assert np.all(realised[sens] <= eps_all[sens]), (realised - eps_all)[sens].max()
    assert np.all(np.isinf(realised[~sens]))
    for w, e in {(int(w), float(e)) for w, e in zip(w_all[sens], eps_all[sens], strict=True)}:
        assert ratio_within(w + k, w, e), f"weight {w}, keep {k}: ln((W+K)/W) > eps = {e!r}"
        if math.expm1(e) > GRID:  # the cap
            assert w == 1, f"eps = {e!r} beyond ln(2^32 + 1) must leave the smallest weight, got {w}"
            continue
        if w > WEIGHT_STEPS:
            s = WEIGHT_STEPS
            assert not ratio_within(w - s + k + s * n, w - s, e), (
                f"weight {w}, keep {k}: realised {math.log1p(k / w)!r} is further below eps = {e!r} "
                "than the 2^-32 grid explains"
            )


def assert_grid_channel(mech: pldp.DirectEncoding) -> None:
    """The grid channel is the textbook one (Li et al. Sec. 5.3) rounded towards more privacy by
    at most its rounding: in steps of 2^-32, every ``W_y - q*_y 2**32`` is in ``[0, WEIGHT_STEPS)`` and
    ``delta* 2**32 - K`` in ``[0, WEIGHT_STEPS n)``, ``n`` the number of positive weights (``1e-5``
    of a step allowed the other way for the float evaluation of ``q*``)."""
    from pldp.sampling import GRID

    eps = mech.budgets.epsilons
    sens = np.isfinite(eps)
    r = np.where(sens, 1.0 / np.expm1(np.where(sens, eps, 1.0)), 0.0)
    q_star = r / (1.0 + r.sum())
    up = mech.weights - q_star * GRID  # steps each dishonest probability was raised
    assert np.all(up[~sens] == 0)
    assert np.all((up[sens] > -1e-5) & (up[sens] < WEIGHT_STEPS)), up
    down = (1.0 - math.fsum(q_star)) * GRID - mech.keep_threshold  # steps the honesty gap lost
    assert -1e-5 < down < WEIGHT_STEPS * np.count_nonzero(sens), down
