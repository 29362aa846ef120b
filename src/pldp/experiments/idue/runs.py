"""IDUE experiments: the datasets, the mechanisms compared and one repeat on single items or item-sets."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from pldp.budgets import ItemBudgets
from pldp.errors import ParameterError
from pldp.estimation import estimate
from pldp.experiments.paths import DEFAULT_PATH, observe, path_of
from pldp.itemsets import ItemSets
from pldp.mechanisms import IDUE, OUE, RAPPOR
from pldp.mechanisms.idue_solver.solve import Model as IDUEModel
from pldp.mechanisms.unary import UnaryEncoding
from pldp.metrics import mse, precision_top_k, re_top_k
from pldp.protocols import PaddingSampling
from pldp.theory import item_variance

__all__ = [
    "FIG2_METHODS",
    "SINGLE_DATASETS",
    "SYNTHETIC",
    "UNARY",
    "run_itemsets",
    "run_single",
    "single_counts",
    "unary",
    "worst_case_mse",
]

PAPER = "idue"
#: Synthetic data of Table II: (users, items).
SYNTHETIC = {"powerlaw": (100_000, 100), "uniform": (100_000, 1_000)}
SINGLE_DATASETS = ("retail", "kosarak")
UNARY = ("RAPPOR", "OUE", "IDUE")
FIG2_METHODS = ("RAPPOR", "OUE", "IDUE-opt0", "IDUE-opt1", "IDUE-opt2")


# ---------------------------------------------------------------------------------- data (cached)
@functools.cache
def _itemsets(name: str, source: str | None = None) -> ItemSets:
    """A real item-set dataset, loaded once per process; ``source``: the Kosarak file to read
    in place of the bundled prefix (``pldp reproduce --kosarak``)."""
    from pldp.datasets import real

    if name == "kosarak":
        return real.load_kosarak(source)
    if source is not None:
        raise ParameterError(f"only the kosarak dataset is read from a file here, not {name!r}")
    loaders = {"retail": real.load_retail, "clothing": real.load_clothing}
    return loaders[name]()


@functools.cache
def _first_item_counts(name: str, source: str | None = None) -> np.ndarray:
    """Counts of each user's first item (the paper's single-item version of Retail and Kosarak)."""
    sets = _itemsets(name, source)
    counts = np.bincount(sets.first_items(), minlength=sets.d)
    counts.setflags(write=False)
    return counts


@functools.cache
def _item_counts(name: str, source: str | None = None) -> np.ndarray:
    """Number of users holding each item (the item-set estimation target)."""
    counts = _itemsets(name, source).item_counts()
    counts.setflags(write=False)
    return counts


def single_counts(name: str, rng: np.random.Generator, source: str | None = None) -> np.ndarray:
    """True counts of a single-item dataset; the synthetic ones are drawn afresh from ``rng``."""
    if name in SYNTHETIC:
        from pldp.datasets import synthetic

        n, m = SYNTHETIC[name]
        gen = synthetic.power_law_items if name == "powerlaw" else synthetic.uniform_items
        return np.bincount(gen(n, m, rng), minlength=m)
    return np.asarray(_first_item_counts(name, source))


# ------------------------------------------------------------------------------------ mechanisms
@functools.lru_cache(maxsize=64)
def _ldp(method: str, epsilon: float, d: int) -> UnaryEncoding:
    """RAPPOR or OUE (immutable, so cached: their construction validates ``d`` budgets)."""
    return RAPPOR(epsilon, d) if method == "RAPPOR" else OUE(epsilon, d)


def unary(method: str, budgets: ItemBudgets, itemsets: bool = False) -> UnaryEncoding:
    """RAPPOR / OUE at the smallest budget (LDP), IDUE-optX under MinID-LDP."""
    if method in ("RAPPOR", "OUE"):
        return _ldp(method, budgets.min_epsilon, budgets.d)
    model = method.split("-")[1] if "-" in method else "opt0"
    # padding-and-sampling puts the dummies in the smallest level: if that level held one item, its
    # (i, i) constraint was dropped (ERRATA IDUE-3) and must be restored
    same_level = "always" if itemsets and len(budgets.levels[0]) == 1 else "auto"
    return IDUE(budgets, model=cast(IDUEModel, model), same_level=same_level)


def _counts_estimate(
    mech: UnaryEncoding, true: np.ndarray, rng: np.random.Generator, path: str = DEFAULT_PATH
) -> np.ndarray:
    """One repeat of ``mech`` on ``true`` counts (count-level or per-user): the unbiased counts (eq. 6)."""
    return estimate(mech, observe(mech, true, rng=rng, path=path), "unbiased").counts


def worst_case_mse(mech: UnaryEncoding) -> float:
    """The opt0 objective (eq. 8): the worst-case total MSE over ``n`` of a unary mechanism."""
    a, b = mech.a, mech.b
    return float(np.sum(b * (1 - b) / (a - b) ** 2) + np.max((1 - a - b) / (a - b)))


# ------------------------------------------------------------------------------------- run (one repeat)
def _budgets(setting: dict[str, Any], d: int, rng: np.random.Generator) -> ItemBudgets:
    """The item budgets of one repeat: three random levels, or two with an exact ``share`` at ``epsilon``."""
    eps = float(setting["epsilon"])
    if "share" not in setting:
        return ItemBudgets.random_levels(d, eps, rng)
    s = float(setting["share"])
    return ItemBudgets.random_levels(
        d, eps, rng, multipliers=(1.0, float(setting["epsilon2"]) / eps), shares=(s, 1.0 - s), exact_shares=True
    )


def _theory(mech: UnaryEncoding, true: np.ndarray, n: int) -> dict[str, float]:
    """Eq. 7's MSE, the standard deviation of one repeat's MSE and eq. 8's worst case (see :func:`run_single`)."""
    var = n * n * item_variance(mech, true / n, n, model="fixed")  # Var of each count, eq. 7
    return {
        "mse_theory": float(var.sum()) / n,
        "mse_sd": float(np.sqrt(2.0 * np.sum(var**2))) / n,  # sd of the MSE (normal limit)
        "mse_worst": worst_case_mse(mech),
    }


def run_single(
    setting: dict[str, Any],
    rng: np.random.Generator,
    *,
    methods: Sequence[str] = UNARY,
    ks: Sequence[int] = (20,),
    theory: bool = False,
) -> list[dict[str, Any]]:
    """Single-item data: one repeat of every method.

    ``setting``: ``dataset``, ``epsilon`` and optionally ``share`` (two-level budgets with that
    exact share of items at ``epsilon`` and the rest at ``epsilon2``) and ``source`` (the Kosarak
    file). Rows: ``method``, ``k``, ``mse``, ``re`` (RE(k)) and with ``theory`` the eq. 7 MSE
    ``mse_theory`` (the sum over the items of eq. 7 divided by ``n``, i.e.
    ``n * expected_l2(mech, p, n, model="fixed")``), the standard deviation ``mse_sd`` of one
    repeat's MSE (the estimates of different items are independent, so
    ``Var(MSE) = 2 sum_k Var(c_k)^2 / n^2`` in the normal limit) and the worst-case bound
    ``mse_worst`` (eq. 8's objective).
    """
    true = single_counts(setting["dataset"], rng, setting.get("source"))
    d, n = true.size, int(true.sum())
    budgets = _budgets(setting, d, rng)
    rows = []
    for method in methods:
        mech = unary(method, budgets)
        est = _counts_estimate(mech, true, rng, path_of(setting))
        err = mse(true, est, n)
        for k in ks:
            row: dict[str, Any] = {"method": method, "k": k, "mse": err, "re": re_top_k(true, est, k)}
            if theory:
                row.update(_theory(mech, true, n))
            rows.append(row)
    return rows


def run_itemsets(
    setting: dict[str, Any],
    rng: np.random.Generator,
    *,
    methods: Sequence[str] = UNARY,
    ks: Sequence[int] = (20,),
    ells: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """Item-set data through padding-and-sampling: one repeat of every ``method``-PS.

    ``setting``: ``dataset``, ``epsilon`` and ``ell`` (or pass ``ells`` to sweep several padding
    lengths in one repeat), optionally ``source`` (the Kosarak file). The budgets (and so the IDUE
    solution) are drawn once per repeat and shared by all ``ells``; for each ``ell`` one
    padding-and-sampling draw (Algorithm 1) is shared by the mechanisms, each of which then
    perturbs the sampled items (binomial bit counts, ``PaddingSampling.simulate`` split in its two
    steps). Rows: ``method`` (e.g. ``IDUE-PS``), ``ell``, ``k``, ``re`` (RE(k)) and ``precision``
    (of the estimated top k).
    """
    path = path_of(setting)
    sets = _itemsets(setting["dataset"], setting.get("source"))
    true = np.asarray(_item_counts(setting["dataset"], setting.get("source")))
    budgets = ItemBudgets.random_levels(sets.d, float(setting["epsilon"]), rng)
    bases = [unary(m, budgets, itemsets=True) for m in methods]
    rows = []
    for ell in [int(setting["ell"])] if ells is None else ells:
        protocols = [PaddingSampling(base, ell) for base in bases]
        sampled = np.bincount(protocols[0].sample(sets, rng), minlength=sets.d + ell)
        for method, ps in zip(methods, protocols, strict=True):
            est = ps.estimate(ps.adopt(observe(ps.inner, sampled, rng=rng, path=path))).frequencies * sets.n
            for k in ks:
                row = {"method": f"{method}-PS", "k": k, "re": re_top_k(true, est, k)}
                row["precision"] = precision_top_k(true, est, k)
                if ells is not None:
                    row["ell"] = ell
                rows.append(row)
    return rows
