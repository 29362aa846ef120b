"""The oracles the attack experiments attack, by name, and their honest users.

Every personalized oracle has mean budget 0.55, the mean of the levels 0.1, 0.2, ..., 1.0, so that
it compares with the uniform mechanism at 0.55 (``krr``, ``oue``):

==============  ===========================================================================
name            oracle
==============  ===========================================================================
``krr``         ``KRR(eps, d)`` (``eps`` from the setting, default 0.55)
``oue``         ``OUE(eps, d)``
``iprr``        IPRR, budgets 1.0 down to 0.1 by frequency rank in ``item_levels`` equal groups
                (the rarest items most sensitive; :meth:`~pldp.ItemBudgets.by_frequency`;
                default: the largest divisor of ``d`` up to 10; the best moves': 4 levels 1.0,
                0.7, 0.4, 0.1 of 4 items each)
``idue``        IDUE (opt0, MinID-LDP) with the same budgets
``febsf-krr``   PLDP-FEBSF, levels 0.1 ... 1.0, :math:`\\varepsilon_p = 0.3`, k-RR items
``febsf-oue``   the same with OUE items
``rcf-krr``     RCF, the same levels, k-RR at every level
``rcf-oue``     RCF with OUE
``apldp``       APLDP, the same levels (each level picks its oracle)
``pbp-krr``     PBP, the same levels, public uniform shares, k-RR
``ppda``        PPDA, the same levels, basic RAPPOR, ``d`` calibration bits
``mpldp``       MPLDP, one attribute, :math:`\\varepsilon = 0.9` (levels 0.3, 0.45, 0.9: mean 0.55)
==============  ===========================================================================

Honest users: ``n`` users on ``d`` items with Zipf frequencies (:func:`honest_counts`, the items
in decreasing frequency, rounded by largest remainders); users of a user-level protocol pick a
level uniformly, independently of their item (the split of every item's users over the levels is
drawn afresh in every repeat).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from pldp.budgets import ItemBudgets
from pldp.datasets.synthetic import zipf_probabilities
from pldp.errors import ParameterError
from pldp.mechanisms import IDUE, IPRR, KRR, OUE
from pldp.oracle import FrequencyOracle
from pldp.protocols import APLDP, FEBSF, MPLDP, PBP, PPDA, RCF

__all__ = ["LEVELS", "MEAN_BUDGET", "PROTOCOLS", "UNIFORM", "build", "honest_counts", "honest_data", "item_budgets"]

#: The budget levels of the user-level protocols (and of IPRR's and IDUE's items).
LEVELS = np.round(np.linspace(0.1, 1.0, 10), 2)
#: Their mean: the budget of the uniform mechanisms compared with.
MEAN_BUDGET = 0.55
#: PLDP-FEBSF's level budget (the paper's).
EPS_P = 0.3


def item_budgets(d: int, levels: int | None = None) -> ItemBudgets:
    """Budgets 1.0 down to 0.1 by frequency rank (items are in decreasing frequency), in ``levels``
    equal groups (default: the largest divisor of ``d`` up to 10), so that their mean is 0.55."""
    if levels is None:
        levels = max(k for k in range(1, min(d, 10) + 1) if d % k == 0)
    if levels < 2 or d % levels:
        raise ParameterError(f"item levels must be at least 2 and divide d = {d}, got {levels}")
    return ItemBudgets.by_frequency(np.arange(d, 0, -1), 0.1, 1.0, levels, 0.0)


#: Name -> (builder of ``d``, ``eps`` and the item levels, the uniform mechanism it is compared with).
PROTOCOLS: dict[str, tuple[Callable[[int, float, int | None], FrequencyOracle], str]] = {
    "krr": (lambda d, eps, lv: KRR(eps, d), "krr"),
    "oue": (lambda d, eps, lv: OUE(eps, d), "oue"),
    "iprr": (lambda d, eps, lv: IPRR(item_budgets(d, lv)), "krr"),
    "idue": (lambda d, eps, lv: IDUE(item_budgets(d, lv), "opt0", "min"), "oue"),
    "febsf-krr": (lambda d, eps, lv: FEBSF(LEVELS, EPS_P, d, oracle="krr"), "krr"),
    "febsf-oue": (lambda d, eps, lv: FEBSF(LEVELS, EPS_P, d, oracle="oue"), "oue"),
    "rcf-krr": (lambda d, eps, lv: RCF(LEVELS, d, "krr"), "krr"),
    "rcf-oue": (lambda d, eps, lv: RCF(LEVELS, d, "oue"), "oue"),
    "apldp": (lambda d, eps, lv: APLDP(LEVELS, d), "oue"),
    "pbp-krr": (lambda d, eps, lv: PBP(LEVELS, np.full(LEVELS.size, 1 / LEVELS.size), d, "krr"), "krr"),
    "ppda": (lambda d, eps, lv: PPDA(LEVELS, d), "oue"),
    "mpldp": (lambda d, eps, lv: MPLDP([d], [0.9]), "oue"),
}
#: The uniform mechanisms of the comparisons.
UNIFORM = ("krr", "oue")


@functools.lru_cache(maxsize=64)
def build(name: str, d: int, eps: float = MEAN_BUDGET, item_levels: int | None = None) -> FrequencyOracle:
    """The oracle ``name`` over ``d`` items (cached per process: IDUE's opt0 takes seconds)."""
    if name not in PROTOCOLS:
        raise ParameterError(f"unknown protocol {name!r}; choose one of {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name][0](d, eps, item_levels)


def honest_counts(n: int, d: int, exponent: float) -> np.ndarray:
    """``n`` users over ``d`` items with Zipf(``exponent``) frequencies, rounded by largest remainders."""
    exact = n * zipf_probabilities(d, exponent)
    counts = np.floor(exact).astype(np.int64)
    counts[np.argsort(-(exact - counts), kind="stable")[: n - int(counts.sum())]] += 1
    return counts


def honest_data(oracle: FrequencyOracle, counts: np.ndarray, rng: np.random.Generator) -> tuple[Any, ...]:
    """What ``oracle.simulate`` takes for the honest users with these item counts (module docstring)."""
    levels = getattr(oracle, "levels", None)
    if isinstance(oracle, MPLDP):
        values = np.repeat(np.arange(counts.size), counts)[:, None]
        return values, rng.integers(0, oracle.n_levels, size=values.shape)
    if levels is None:
        return (counts,)
    t = len(levels)
    return (rng.multinomial(counts, np.full(t, 1.0 / t)).T,)
