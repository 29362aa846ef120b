"""IPRR experiments: the two datasets, the mechanisms of Table 2 and one repeat of a setting."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from pldp import metrics
from pldp.budgets import ItemBudgets
from pldp.errors import ParameterError
from pldp.estimation import estimate
from pldp.experiments.paths import observe, path_of
from pldp.mechanisms import IDUE, IPRR, KRR, URR, Mechanism

__all__ = [
    "DATASETS",
    "DATA_SEED",
    "ESTIMATORS",
    "LC",
    "dataset_counts",
    "make_setting",
    "mechanisms",
    "run_repeat",
    "sample_counts",
]

PAPER = "iprr"
DATASETS = ("zipf", "kosarak")
#: Seed of the one-off dataset construction (Zipf sample; Kosarak's random item per user).
DATA_SEED = 20240601
ZIPF_USERS, ZIPF_ITEMS, ZIPF_EXPONENT = 100_000, 20, 2.0
KOSARAK_ITEMS = 100
LC = 4
#: Estimator labels of the paper and the :func:`pldp.estimate` methods behind them.
ESTIMATORS: tuple[tuple[str, str], ...] = (("NS", "norm_sub"), ("MLE", "mle"))


def dataset_counts(name: str, source: str | None = None) -> np.ndarray:
    """Item counts of dataset ``"zipf"`` or ``"kosarak"``, most frequent item first (cached).

    Kosarak: one uniformly random item per user of :func:`pldp.datasets.real.load_kosarak`
    (the bundled 36,682-user prefix, or the file ``source``, as ``pldp reproduce --kosarak``
    gives it), drawn with :func:`~pldp.datasets.real.random_item_per_user` seeded with
    :data:`DATA_SEED`; then only the users whose item is among the 100 most frequent such
    items (ties by index).
    """
    if source is not None and name != "kosarak":
        raise ParameterError(f"only the kosarak dataset is read from a file, not {name!r}")
    return _dataset_counts(name, source)


@functools.cache
def _dataset_counts(name: str, source: str | None) -> np.ndarray:
    rng = np.random.default_rng(DATA_SEED)
    if name == "zipf":
        from pldp.datasets import zipf_counts

        counts = zipf_counts(ZIPF_USERS, ZIPF_ITEMS, rng, ZIPF_EXPONENT)
    elif name == "kosarak":
        from pldp.datasets import real

        items = real.random_item_per_user(real.load_kosarak(source), rng)
        counts = np.bincount(np.asarray(items, dtype=np.int64))
    else:
        raise ParameterError(f"unknown dataset {name!r}; choose 'zipf' or 'kosarak'")
    counts = np.asarray(counts, dtype=np.int64)
    order = np.lexsort((np.arange(counts.size), -counts))  # by count descending, ties by index
    keep = KOSARAK_ITEMS if name == "kosarak" else counts.size
    out = counts[order[:keep]].copy()
    out.setflags(write=False)
    return out


@functools.cache
def mechanisms(
    dataset: str, exp: int, eps_min: float, eps_max: float, nr: float, lc: int = LC, source: str | None = None
) -> tuple[tuple[str, Mechanism], ...]:
    """The mechanisms compared in experiment ``exp`` (Table 2), built once per process.

    #1-#3: KRR at ``eps_min`` (LDP), URR at ``eps_min`` on IPRR's sensitive items, IPRR.
    #4: URR and IPRR. #5: IDUE opt0/opt1/opt2 (MinID-LDP, same item budgets) and IPRR.
    Budgets: :meth:`ItemBudgets.by_frequency` on the whole dataset's counts
    (:func:`dataset_counts` of ``dataset`` and ``source``).
    """
    counts = dataset_counts(dataset, source)
    budgets = ItemBudgets.by_frequency(counts, eps_min, eps_max, lc, nr)
    iprr = ("IPRR", IPRR(budgets))
    if exp in (1, 2, 3):
        return (("KRR", KRR(eps_min, counts.size)), ("URR", URR(eps_min, budgets.sensitive)), iprr)
    if exp == 4:
        return (("URR", URR(eps_min, budgets.sensitive)), iprr)
    if exp == 5:
        return (*((f"IDUE-{m}", IDUE(budgets, m)) for m in ("opt0", "opt1", "opt2")), iprr)
    raise ParameterError(f"unknown experiment #{exp}; Table 2 has #1-#5")


def sample_counts(counts: np.ndarray, sr: float, rng: np.random.Generator) -> np.ndarray:
    """Counts of ``round(sr * N)`` users drawn without replacement from the ``N`` users."""
    n = int(counts.sum())
    k = round(sr * n)
    if k >= n:
        return np.asarray(counts, dtype=np.int64)
    return rng.multivariate_hypergeometric(np.asarray(counts, dtype=np.int64), k)


def make_setting(dataset: str, exp: int, eps_min: float, eps_max: float, nr: float, sr: float) -> dict[str, Any]:
    """One setting of Table 2: dataset, experiment #, budget range, LC, NR and SR."""
    return {"dataset": dataset, "exp": exp, "eps_min": eps_min, "eps_max": eps_max, "lc": LC, "nr": nr, "sr": sr}


def run_repeat(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat of one setting: sample users, perturb with each mechanism, score NS and MLE.

    ``setting``: as :func:`make_setting` makes it, and optionally ``source`` (the Kosarak file,
    :meth:`~pldp.experiments.spec.Experiment.with_source`) and ``path``.
    """
    path = path_of(setting)
    source = setting.get("source")
    counts = dataset_counts(setting["dataset"], source)
    true = sample_counts(counts, float(setting["sr"]), rng)
    n = int(true.sum())
    rows: list[dict[str, Any]] = []
    mechs = mechanisms(
        setting["dataset"],
        int(setting["exp"]),
        float(setting["eps_min"]),
        float(setting["eps_max"]),
        float(setting["nr"]),
        int(setting.get("lc", LC)),
        source,
    )
    for name, mech in mechs:
        tally = observe(mech, true, rng=rng, path=path)
        for label, method in ESTIMATORS:
            est = estimate(mech, tally, method).counts
            rows.append(
                {
                    "method": f"{name}/{label}",
                    "mechanism": name,
                    "estimator": label,
                    "n": n,
                    "mse": metrics.mse(true, est, n),
                    "re": metrics.relative_error(true, est),
                }
            )
    return rows
