"""Shared fixtures and helpers for the pldp tests."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import pldp
from tests.needs import need_node
from tests.tolerances import FLOAT_RTOL


@pytest.fixture(scope="session")
def node() -> str:
    """The path of Node.js >= 20: the test skips without it, or fails under ``PLDP_NODE_TESTS=required``."""
    return need_node()


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """Headless Chromium (:func:`tests.browser.launch`), one per test process for every browser
    test file: starting it costs seconds, and each test begins on a blank page with its logs
    drained (:func:`tests.browser.blank`). Each file's collector listens on its own port, so what
    one file's pages keep in the browser (localStorage, IndexedDB: per origin) no other file sees."""
    from tests import browser

    yield from browser.launch()


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
# A direct mechanism runs keep threshold K and weights W_y with K + sum(W) = G = 2**32 (see
# pldp.mechanisms.direct.grid_weights). Its exact (real-valued) textbook channel is
# delta* = 1 / (1 + sum(r)), q*_y = r_y delta*, r_y = 1 / (e**eps_y - 1) (0 if non-sensitive).
# Output y is within its budget exactly when W_y >= K r_y, so s_y = W_y - K r_y >= 0 are the
# steps spread beyond the minimum; they sum to S = G - K (1 + sum(r)).

#: Steps of 2^-32 a weight may lie above ``K r_y`` besides its share of the spread: rounding up
#: (< 1), a step for floating-point error, and a step of the largest-remainder rounding.
SPREAD_STEPS = 3


def _grid_terms(mech: pldp.DirectEncoding) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``r`` (textbook), the sensitive mask, the number ``n`` of sensitive outputs, and ``K``."""
    eps = mech.budgets.epsilons
    sens = np.isfinite(eps)
    r = np.where(sens, 1.0 / np.expm1(np.where(sens, eps, 1.0)), 0.0)
    return r, sens, int(np.count_nonzero(sens)), mech.keep_threshold


def grid_rtol(mech: pldp.DirectEncoding) -> float:
    """Relative distance, allowed by the grid, between a closed form at the textbook ``q*``,
    ``delta*`` and the same at the mechanism's ``q = W / 2**32``, ``delta = K / 2**32``.

    The grid channel is first checked to be the textbook one rounded by the grid only
    (:func:`assert_grid_channel`); the tolerance is then twice the largest relative move of a
    ``q_y`` plus four times that of ``delta`` (a variance ``m (1 - m) / delta**2``, ``m = q +
    delta p``, moves by at most the first plus twice the second to first order; the factor 2
    covers the second order and the ``(1 - m)`` factor of the closed forms used in the tests).
    """
    from pldp.channel.sampling import GRID

    assert_grid_channel(mech)
    r, sens, _, k = _grid_terms(mech)
    q_star = r / (1.0 + r.sum())
    w = mech.weights[sens].astype(float)
    move_q = float(np.max(np.abs(w - q_star[sens] * GRID) / w))
    move_delta = abs((1.0 - math.fsum(q_star)) * GRID - k) / k
    return 2.0 * move_q + 4.0 * move_delta + 1e-12


def assert_grid_budgets(mech: pldp.DirectEncoding) -> None:
    """The realised epsilon of every sensitive output of a direct mechanism is within its budget
    *exactly*, and the keep threshold is as large as the grid allows.

    With ``W = mech.weights``, ``K = mech.keep_threshold`` and ``G = 2**32``, the realised epsilon
    of output ``y`` is ``ln((W_y + K) / W_y)``.

    * Within budget (the privacy claim): ``(W_y + K) / W_y <= e**eps_y``, decided exactly by
      :func:`pldp.channel.exact.ratio_within`; the float ``realised`` of the report is ``<= eps_y`` with no
      tolerance upward.
    * Not further below than the grid: no grid channel within the budgets keeps ``K + t``, where
      ``t = 1`` (unequal weights: ``K`` is the largest) or ``t = 2 n + 1`` (equal weights, ``n``
      sensitive outputs: the smallest common weight costs ``K`` fewer than ``2 n`` steps). Such a
      channel needs ``W_y >= (K + t) r_y`` (decided exactly) and at least one step on every
      sensitive output, more than ``G`` in all. And no weight takes more
      than its share of the spread (:func:`assert_grid_channel`). A mechanism that spends less
      than it may by more than its rounding (a wrong ``r``, ``S`` or a halved budget) fails this.
    * The cap: when ``e**eps_y - 1 > G`` the exact ``q*_y = r_y S <= 1 / (e**eps_y - 1)`` is below one
      step, so ``W_y = 1`` (the smallest positive weight) and the realised epsilon is
      ``ln(1 + K) <= ln(G) ~ 22.18 < eps_y``.
    """
    from pldp.channel.exact import ratio_within
    from pldp.channel.sampling import GRID

    w_all = np.asarray(mech.weights)
    _, sens, n, k = _grid_terms(mech)
    eps_all = mech.budgets.epsilons
    # the exposed channel is the grid channel
    assert w_all.dtype.kind == "i" and np.all(w_all >= 0) and 1 <= k
    assert k == GRID - int(w_all.sum())
    assert np.array_equal(mech.q, w_all / GRID) and mech.delta == k / GRID
    assert np.all((w_all > 0) == sens)  # only sensitive outputs are reported by non-holders
    realised = mech.privacy().realised
    np.testing.assert_allclose(realised[sens], np.log1p(k / w_all[sens]), rtol=FLOAT_RTOL)  # the same log
    assert np.all(realised[sens] <= eps_all[sens]), (realised - eps_all)[sens].max()
    assert np.all(np.isinf(realised[~sens]))
    for w, e in {(int(w), float(e)) for w, e in zip(w_all[sens], eps_all[sens], strict=True)}:
        assert ratio_within(w + k, w, e), f"weight {w}, keep {k}: ln((W+K)/W) > eps = {e!r}"
        if math.expm1(e) > GRID:  # the cap
            assert w == 1, f"eps = {e!r} beyond ln(2^32 + 1) must leave the smallest weight, got {w}"
    t = 2 * n + 1 if np.unique(w_all[sens]).size == 1 else 1
    budgets, per_budget = np.unique(eps_all[sens], return_counts=True)
    needed = k + t
    for e, count in zip(budgets.tolist(), per_budget.tolist(), strict=True):
        w = max(math.ceil((k + t) / math.expm1(e)) - 1, 1)
        while not ratio_within(w + k + t, w, e):  # the smallest weight for keep K + t, exactly
            w += 1
        needed += count * w
    assert needed > GRID, f"keep {k} could be {k + t}: the budgets are spent less than the grid allows"
    assert_grid_channel(mech)


def assert_grid_channel(mech: pldp.DirectEncoding) -> None:
    """The grid channel is the textbook one (Li et al. Sec. 5.3) rounded towards more privacy by
    its rounding only.

    * ``K <= delta* G``: a channel within the budgets has every ``W_y >= K r_y``, so ``G = K + sum(W)
      >= K (1 + sum(r))`` (``1e-5`` of a step allowed for the float evaluation of ``delta*``).
    * No weight takes more than its share of the spread: ``s_y = W_y - K r_y`` is below
      ``SPREAD_STEPS + (S + n (1 + sum(r))) r_y / sum(r)``, with ``S = G - K (1 + sum(r))`` the
      steps beyond every minimum and ``n (1 + sum(r))`` what the last fewer-than-``n`` steps given to
      ``K`` took from it.
    * Non-sensitive outputs have weight 0.
    """
    from pldp.channel.sampling import GRID

    r, sens, n, k = _grid_terms(mech)
    w = mech.weights.astype(float)
    assert np.all(mech.weights[~sens] == 0)
    total = 1.0 + r.sum()
    assert k <= GRID / total * (1 + 1e-15) + 1e-5, (k, GRID / total)
    spread = w - k * r
    assert np.all(spread[sens] > -1e-5 * np.maximum(1.0, k * r[sens] * 1e-12)), spread[sens].min()
    room = GRID - k * total
    share = (room + n * total) * r / r.sum()
    over = spread[sens] - (SPREAD_STEPS + share[sens])
    assert np.all(over < 0), f"a weight exceeds its share of the spread by {over.max()} steps"
