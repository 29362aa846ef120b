"""Paired comparisons of Monte Carlo means for the reproduction tests.

The experiments score every method on the same sampled users and the same repeat, so two
methods' errors are paired by repeat. A claim "method a's mean error is r times method b's" is
tested on the ratio of the two means with its delta-method standard error; a claim is accepted
only if it holds with a margin of ``K`` standard errors.
"""

from __future__ import annotations

import math

import numpy as np

K = 4.0  # a claim must hold by at least K standard errors of the statistic it is made on


def ratio_se(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """``mean(a) / mean(b)`` of paired replicates and its delta-method SE,
    sd((a - r b) / mean(b)) / sqrt(T)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    r = float(a.mean() / b.mean())
    return r, float(np.std((a - r * b) / b.mean(), ddof=1) / math.sqrt(a.size))


def mean_se(x: np.ndarray) -> tuple[float, float]:
    """Mean of replicates and its SE."""
    x = np.asarray(x, dtype=float)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def ratios(table, a: str, b: str, by: str, metric: str = "mse", repeat: str = "repeat") -> dict:
    """``{x: (ratio, se)}`` of ``a``'s over ``b``'s mean ``metric``, paired by ``repeat``, per value of ``by``."""
    wide = table.pivot_table(index=[by, repeat], columns="method", values=metric)
    return {x: ratio_se(g[a].to_numpy(), g[b].to_numpy()) for x, g in wide.groupby(level=0)}


def above(stats: dict, bound: float) -> bool:
    """Every ratio exceeds ``bound`` by more than K SE."""
    return all(r - K * se > bound for r, se in stats.values())


def below(stats: dict, bound: float) -> bool:
    """Every ratio is below ``bound`` by more than K SE."""
    return all(r + K * se < bound for r, se in stats.values())


def pooled_ratio(
    table, a: str, b: str, keys: list[str], metric: str = "mse", repeat: str = "repeat"
) -> tuple[float, float]:
    """Ratio of ``a``'s to ``b``'s mean ``metric`` over all cells ``keys`` and repeats (paired
    by cell and repeat), with its delta-method SE."""
    wide = table.pivot_table(index=[*keys, repeat], columns="method", values=metric)
    return ratio_se(wide[a].to_numpy(), wide[b].to_numpy())


def bootstrap_se(statistic, *columns: np.ndarray, draws: int = 1000, seed: int = 0) -> tuple[float, float]:
    """``statistic(*columns)`` and its bootstrap SE: the replicates (rows, paired across the
    columns) resampled ``draws`` times with a seeded generator."""
    value = float(statistic(*columns))
    rng = np.random.default_rng(seed)
    n = len(columns[0])
    boot = [statistic(*(np.asarray(c)[idx] for c in columns)) for idx in rng.integers(0, n, size=(draws, n))]
    return value, float(np.std(boot, ddof=1))


def run_table(run, settings: list[dict], repeats: int, seed: int):
    """The tidy table of ``repeats`` repeats of ``run(setting, rng)`` per setting, from one seeded generator."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for setting in settings:
        for r in range(repeats):
            rows += [{**setting, "repeat": r, **row} for row in run(dict(setting), rng)]
    return pd.DataFrame(rows)
