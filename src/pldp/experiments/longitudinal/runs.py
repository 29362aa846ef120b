"""Longitudinal experiments: the data, the chains at a setting, and one repeat of each experiment.

Every repeat turns a dataset's true counts into one round's tally of each memoized chain
(:func:`~pldp.experiments.paths.observe`: exact count-level simulation, or ``--path per-user``)
and estimates it without bias. One round's tally has the same law whether the users' permanent
responses are fresh or remembered (:mod:`pldp.mechanisms.longitudinal.base`), so the MSE of a
round is the MSE of any round.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

import pldp
from pldp.budgets import ItemBudgets
from pldp.datasets import load_adult_country, load_adult_education, load_bank_job
from pldp.experiments.paths import observe, path_of
from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.longitudinal import LGRR, LIDUE, LIPRR, LOSUE, LOUE, LSOUE, LSUE
from pldp.mechanisms.longitudinal.formulas import chained, grr_irr_paper, longitudinal_variance

__all__ = [
    "DATASETS",
    "PAPER",
    "PERSONALIZED",
    "UNIFORM",
    "counts_of",
    "paper_lgrr_epsilon",
    "personalized_mechanisms",
    "run_personalized",
    "run_uniform",
    "run_variance",
    "uniform_mechanism",
]

PAPER = "longitudinal"
#: The chains of Arcolezi et al.'s comparison, by their names; "L-GRR (paper)" runs their printed IRR.
UNIFORM: tuple[str, ...] = ("L-GRR", "L-GRR (paper)", "L-OUE", "L-OSUE", "L-SUE", "L-SOUE")
#: The personalized chains and the uniform chains at the smallest budget they are compared with.
PERSONALIZED: tuple[str, ...] = ("L-IPRR", "L-GRR (min)", "L-IDUE", "L-OSUE (min)")
#: The single-item datasets of the personalized papers (PLDP-FEBSF's Education, Job, Country).
DATASETS: dict[str, Callable[[], Any]] = {
    "education": load_adult_education,
    "job": load_bank_job,
    "country": load_adult_country,
}
_UNARY = {"L-OUE": LOUE, "L-OSUE": LOSUE, "L-SUE": LSUE, "L-SOUE": LSOUE}


@functools.cache
def counts_of(name: str) -> np.ndarray:
    """Users per item of dataset ``name`` (a key of :data:`DATASETS`; cached, read-only)."""
    counts = DATASETS[name]().counts()
    counts.setflags(write=False)
    return counts


def paper_lgrr_epsilon(eps_perm: float, eps_1: float, k: int) -> float:
    """The one-report budget that Arcolezi et al.'s printed L-GRR IRR really gives (ERRATA LONG-1).

    GRR at ``eps_perm`` then any GRR over the same ``k`` items is GRR again, with
    :math:`p^* = p_1 p_2 + (1 - p_1) q_2`, :math:`q^* = q_1 p_2 + (1 - q_1) q_2`; with the printed
    IRR (:func:`~pldp.mechanisms.longitudinal.formulas.grr_irr_paper`) its budget
    :math:`\\ln(p^*/q^*)` is ``eps_1`` for ``k = 2`` and below it for ``k > 2``. So the paper's
    chain is exactly :class:`~pldp.LGRR` ``(eps_perm, paper_lgrr_epsilon(...), k)``.

    Examples
    --------
    >>> round(paper_lgrr_epsilon(2.0, 1.0, 2), 12), round(paper_lgrr_epsilon(2.0, 1.0, 3), 3)
    (1.0, 0.948)
    """
    a = math.exp(eps_perm)
    p, q = chained(a / (a + k - 1), 1 / (a + k - 1), *grr_irr_paper(eps_perm, eps_1, k))
    return math.log(p / q)


@functools.cache
def uniform_mechanism(protocol: str, eps_perm: float, eps_1: float, d: int) -> Mechanism:
    """The chain ``protocol`` (one of :data:`UNIFORM`) at ``(eps_perm, eps_1)`` over ``d`` items (cached)."""
    if protocol == "L-GRR":
        return LGRR(eps_perm, eps_1, d)
    if protocol == "L-GRR (paper)":
        return LGRR(eps_perm, paper_lgrr_epsilon(eps_perm, eps_1, d), d)
    return _UNARY[protocol](eps_perm, eps_1, d)


def _scores(mech: Mechanism, counts: np.ndarray, rng: np.random.Generator, path: str) -> dict[str, float]:
    """The MSE of the unbiased frequency estimate of one round, its closed form and the closed-form
    standard deviation of one repeat's MSE (Gaussian item errors: :math:`\\sqrt{2 \\sum_y \\sigma_y^4}/d`)."""
    n, d = int(counts.sum()), counts.size
    f = counts / n
    est = pldp.estimate(mech, observe(mech, counts, rng=rng, path=path), "unbiased")
    var = pldp.theory.item_variance(mech, f, n, model="fixed")
    return {
        "mse": float(np.mean((est.frequencies - f) ** 2)),
        "theory": float(var.mean()),
        "mse_sd": math.sqrt(2 * float(np.sum(var**2))) / d,
    }


def run_uniform(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat of the uniform comparison: every chain of :data:`UNIFORM` at ``eps_perm`` and
    ``eps_1 = alpha * eps_perm`` on the users of ``dataset``.

    Rows: ``method``, ``eps_1``, ``mse``, ``theory`` (the closed form of the chain as it runs) and
    ``mse_sd``.
    """
    counts = counts_of(str(setting["dataset"]))
    eps_perm = float(setting["eps_perm"])
    eps_1 = round(float(setting["alpha"]) * eps_perm, 4)  # as Arcolezi et al. round it
    return [
        {
            "method": p,
            "eps_1": eps_1,
            **_scores(uniform_mechanism(p, eps_perm, eps_1, counts.size), counts, rng, path_of(setting)),
        }
        for p in UNIFORM
    ]


@functools.cache
def personalized_mechanisms(name: str, eps_perm: float, alpha: float) -> dict[str, Mechanism]:
    """The chains of :data:`PERSONALIZED` on dataset ``name`` (cached: L-IDUE solves two IDUEs).

    Budgets: IPRR's frequency policy (Li et al. Sec. 7.1) with no non-sensitive items,
    :math:`\\varepsilon_\\infty` from ``eps_perm`` (the rarest third of the items) to ``2 eps_perm``
    (the most frequent) in three levels, and :math:`\\varepsilon_1 = \\alpha \\varepsilon_\\infty`
    per item. The uniform chains run at the smallest budgets, the only uniform choice that
    meets every item's. L-IDUE is opt0 under MinID-LDP.
    """
    counts = counts_of(name)
    perm = ItemBudgets.by_frequency(counts, eps_perm, 2 * eps_perm, 3, 0.0)
    one = ItemBudgets.from_array(np.round(alpha * perm.epsilons, 6))
    e1 = float(one.epsilons.min())
    return {
        "L-IPRR": LIPRR(perm, one),
        "L-GRR (min)": LGRR(eps_perm, e1, counts.size),
        "L-IDUE": LIDUE(perm, one),
        "L-OSUE (min)": LOSUE(eps_perm, e1, counts.size),
    }


def run_personalized(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat of the personalized comparison on ``dataset`` at ``eps_perm`` and ``alpha``
    (:func:`personalized_mechanisms`). Rows as :func:`run_uniform`'s."""
    name = str(setting["dataset"])
    counts = counts_of(name)
    mechs = personalized_mechanisms(name, float(setting["eps_perm"]), float(setting["alpha"]))
    return [{"method": m, **_scores(mech, counts, rng, path_of(setting))} for m, mech in mechs.items()]


def run_variance(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """The closed-form variances of Arcolezi et al.'s table at ``eps_perm`` and ``alpha``
    (``n = 10,000``, ``f = 0``): L-GRR with their IRR (``"L-GRR (paper)"``) and with the exact one
    at k = 2, 32 and 1024, and the four unary chains. No randomness (``rng`` is not used)."""
    eps_perm = float(setting["eps_perm"])
    eps_1 = round(float(setting["alpha"]) * eps_perm, 4)
    rows = []
    for protocol, k in [(p, k) for p in ("L-GRR (paper)", "L-GRR") for k in (2, 32, 1024)] + [(p, 2) for p in _UNARY]:
        rows.append(
            {
                "method": protocol,
                "k": k,
                "eps_1": eps_1,
                "variance": longitudinal_variance(protocol, eps_perm, eps_1, k, n=10_000),
            }
        )
    return rows
