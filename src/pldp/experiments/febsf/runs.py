"""PLDP-FEBSF experiments: the datasets, levels and level shares, and one repeat of every method."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pldp.errors import EstimationError, ParameterError
from pldp.estimation.consistency import norm_sub
from pldp.experiments.paths import observe, path_of
from pldp.metrics import l2, mae
from pldp.protocols import APLDP, PBP, PPDA, RCF
from pldp.protocols.febsf import FEBSF, auem, em

__all__ = [
    "AUEM",
    "AUEM_NS",
    "DATASETS",
    "EMOA",
    "EM_MAX_STEPS",
    "EM_PAPER",
    "PAPER_EM_STEPS",
    "PBP_RANDOM",
    "PBP_TRUE",
    "POWER_LAW_EXPONENT",
    "RCF_NS",
    "dataset_counts",
    "level_shares",
    "levels_for",
    "run_repeat",
]

#: The paper's datasets with their domain sizes, in increasing ``|D|``.
DATASETS: tuple[tuple[str, int], ...] = (("job", 12), ("education", 16), ("country", 42))
LABEL = {"job": "Job", "education": "Education", "country": "Country"}
_LOADERS = {"job": "load_bank_job", "education": "load_adult_education", "country": "load_adult_country"}
#: Exponent of the power-law level shares, :math:`\rho_i \propto i^{-a}`.
POWER_LAW_EXPONENT = 1.0
#: Step cap of the paper's printed EM (Algorithm 1 gives no stopping rule; ERRATA FEBSF-5). Its
#: item estimate is settled after the first step (its MSE changes by < 0.1 % up to step 5, < 1 % up to 1000).
PAPER_EM_STEPS = 5
#: Step cap of the joint EM (default tolerance 1e-10 otherwise). Needed for Country with two close
#: levels (Fig. 5-6), where many items sit on the boundary and EM crawls (> 20,000 steps); at the
#: cap the MSE is within 2 % of the converged one.
EM_MAX_STEPS = 1000

AUEM = "AUEM"
EMOA = "EMOA (joint EM)"
EM_PAPER = "EM (paper)"
_NS = " + Norm-Sub"
AUEM_NS = AUEM + _NS
RCF_NS = "RCF" + _NS
PBP_TRUE = "PBP"
PBP_RANDOM = "PBP (random shares)"
#: The estimators of PLDP-FEBSF itself (one FEBSF tally shared by all of them).
FEBSF_METHODS = frozenset({AUEM, AUEM_NS, EMOA, EM_PAPER})


# ------------------------------------------------------------------------------ data
@functools.cache
def dataset_counts(name: str) -> np.ndarray:
    """Item counts of a dataset (cached per process).

    ``"job"``, ``"education"``, ``"country"``: the real datasets (:mod:`pldp.datasets.real`).
    ``"zipf:d:n:a"``: a fixed synthetic stand-in, ``n`` users on ``d`` items drawn from the
    truncated Zipf law with exponent ``a`` (seed 0), for tests and development.
    """
    if name.startswith("zipf:"):
        from pldp.datasets import zipf_counts

        _, d, n, a = name.split(":")
        counts = zipf_counts(int(n), int(d), np.random.default_rng(0), float(a))
    elif name in _LOADERS:
        from pldp.datasets import real

        counts = np.asarray(getattr(real, _LOADERS[name])().counts(), dtype=np.int64)
    else:
        raise ParameterError(f"unknown dataset {name!r}")
    counts = np.asarray(counts, dtype=np.int64)
    counts.setflags(write=False)
    return counts


def levels_for(t: int) -> np.ndarray:
    """The paper's levels ``0.1, 0.2, ..., 0.1 t`` (t = 10: 0.1..1.0; t = 2: {0.1, 0.2})."""
    return np.round(0.1 * np.arange(1, t + 1), 10)


def level_shares(t: int, kind: str) -> np.ndarray:
    """Level shares: ``"uniform"`` or ``"power-law"`` (:math:`\\rho_i \\propto i^{-a}`, small budgets first)."""
    if kind == "uniform":
        return np.full(t, 1.0 / t)
    if kind == "power-law":
        w = np.arange(1, t + 1, dtype=float) ** -POWER_LAW_EXPONENT
        return w / w.sum()
    raise ParameterError(f"rho must be 'uniform' or 'power-law', got {kind!r}")


# ------------------------------------------------------------------------------- run
def _score(p: np.ndarray, estimate: Callable[[], Any]) -> dict[str, Any]:
    """MSE (mean over items of the squared frequency error) and MAE of ``estimate()``; NaN and
    ``failed=True`` when the estimator fails."""
    try:
        est = np.asarray(estimate(), dtype=float)
    except EstimationError:
        return {"mse": np.nan, "mae": np.nan, "failed": True}
    return {"mse": float(l2(p, est)) / p.size, "mae": float(mae(p, est)), "failed": False}


def _febsf_estimators(proto: FEBSF, tally: Any) -> dict[str, Callable[[], Any]]:
    """PLDP-FEBSF's estimators on one tally, by method name (run when called)."""
    return {
        AUEM: lambda: auem(proto, tally).frequencies,
        AUEM_NS: lambda: norm_sub(auem(proto, tally).frequencies)[0],
        EMOA: lambda: em(proto, tally, variant="joint", max_iter=EM_MAX_STEPS, on_cap="return").frequencies,
        EM_PAPER: lambda: em(proto, tally, variant="paper", max_iter=PAPER_EM_STEPS).frequencies,
    }


def _baseline(method: str, levels: np.ndarray, rho: np.ndarray, d: int, rng: np.random.Generator) -> Any:
    """The protocol behind a baseline ``method`` (its Norm-Sub variant: the same protocol); every
    one perturbs the data with basic RAPPOR. PBP (random shares) draws its shares from ``rng``."""
    key = method.removesuffix(_NS)
    if key == "RCF":
        return RCF(levels, d, oracle="rappor")
    if key == "APLDP":
        return APLDP(levels, d, candidates=("krr", "rappor"))
    if key == "PPDA":
        return PPDA(levels, d, oracle="rappor")
    if key == PBP_TRUE:
        return PBP(levels, rho, d, oracle="rappor")
    if key == PBP_RANDOM:
        return PBP(levels, rng.dirichlet(np.ones(levels.size)), d, oracle="rappor")
    raise ParameterError(f"unknown method {method!r}")


def _frequencies(protocol: Any, tally: Any, method: str) -> np.ndarray:
    """The frequencies a baseline protocol estimates from its tally by ``method``."""
    return protocol.estimate(tally, method).frequencies


def run_repeat(setting: dict[str, Any], rng: np.random.Generator, methods: Sequence[str]) -> list[dict[str, Any]]:
    """One repeat of one setting: split the users over levels, run every method, score them.

    ``setting``: ``dataset``, ``eps_p``, ``t`` (levels ``0.1..0.1 t``), ``rho`` (``"uniform"`` or
    ``"power-law"``). A method whose estimator fails (AUEM when the estimated shares give
    :math:`\\hat p^* - \\hat q^* \\le 0`) gives a row with NaN errors and ``failed=True``.
    """
    path = path_of(setting)
    counts = dataset_counts(str(setting["dataset"]))
    if "d" in setting and int(setting["d"]) != counts.size:
        raise ParameterError(f"dataset {setting['dataset']!r} has {counts.size} values, setting says {setting['d']}")
    p = counts / int(counts.sum())
    t = int(setting["t"])
    levels = levels_for(t)
    rho = level_shares(t, str(setting["rho"]))
    cells = rng.multinomial(counts, rho).T  # (t, d): each item's users split over the levels
    rows: list[dict[str, Any]] = []
    if FEBSF_METHODS & set(methods):
        proto = FEBSF(levels, float(setting["eps_p"]), counts.size, oracle="rappor")
        estimators = _febsf_estimators(proto, observe(proto, cells, rng=rng, path=path))
        rows += [{"method": m, **_score(p, estimators[m])} for m in methods if m in estimators]
    tallies: dict[str, Any] = {}
    for m in methods:
        if m in FEBSF_METHODS:
            continue
        base = _baseline(m, levels, rho, counts.size, rng)
        key = m.removesuffix(_NS)
        if key not in tallies:  # a method and its Norm-Sub variant share one simulated tally
            tallies[key] = observe(base, cells, rng=rng, path=path)
        how = "norm_sub" if m.endswith(_NS) else "unbiased"
        rows.append({"method": m, **_score(p, functools.partial(_frequencies, base, tallies[key], how))})
    return rows
