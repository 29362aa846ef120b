"""Wang et al. 2017 experiments: the seven oracles, their closed-form variances, and one repeat of each experiment.

A repeat of the variance experiments puts ``n`` users evenly on the first ``ceil(d / 2)`` items
and estimates (``"unbiased"``) every item from tallies of the oracle: each *absent* item ``v``
(``f_v = 0``) gives one sample ``n f_hat_v^2`` of the variance per report
:math:`V = q^*(1 - q^*) / (p^* - q^*)^2`. Its support count is exactly ``Bin(n, q*)`` for GRR, SUE, OUE,
SS and HR (each user's report supports ``v`` with probability ``q*``, independently of the others);
for OLH and BLH it is a sum of independent Bernoulli variables whose probabilities depend on how
often the family's seeds hash the user's item with ``v`` and differ from ``q* = 1/g`` by the
family's departure from an ideal one (a few 1e-5 over its ``2**31`` seeds), nothing at the checks'
width. So the normalised square :math:`Z = (C_v - n q^*)^2 / (n q^*(1 - q^*))` has mean 1 and variance
:math:`2 + (1 - 6 q^*(1 - q^*)) / (n q^*(1 - q^*))` (the binomial's fourth cumulant): the
``z_sd`` column, from which :mod:`~pldp.experiments.wang2017.checks` derives the standard error
of the empirical variance.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from pldp.datasets import real
from pldp.experiments.paths import observe, path_of
from pldp.mechanisms import HR, KRR, OLH, OUE, RAPPOR, SS
from pldp.mechanisms.base import Mechanism

__all__ = [
    "ORACLES",
    "PAPER",
    "closed_form",
    "first_item_counts",
    "oracle",
    "run_dataset",
    "run_variance",
    "spread_counts",
    "support_variance",
]

PAPER = "wang2017"
#: The oracles compared, by the names of Wang et al. (SUE = basic RAPPOR, BLH = OLH with g = 2),
#: then SS (Ye & Barg) and HR (Acharya et al.), which came later.
ORACLES: tuple[str, ...] = ("GRR", "SUE", "OUE", "BLH", "OLH", "SS", "HR")


@functools.cache
def oracle(name: str, epsilon: float, d: int) -> Mechanism:
    """The oracle ``name`` (one of :data:`ORACLES`) at ``epsilon`` over ``d`` items (cached)."""
    makers = {
        "GRR": lambda: KRR(epsilon, d),
        "SUE": lambda: RAPPOR(epsilon, d),
        "OUE": lambda: OUE(epsilon, d),
        "BLH": lambda: OLH(epsilon, d, g=2),
        "OLH": lambda: OLH(epsilon, d),
        "SS": lambda: SS(epsilon, d),
        "HR": lambda: HR(epsilon, d),
    }
    return makers[name]()


def support_variance(mech: Mechanism, item: int = 0) -> float:
    """Variance per report of an absent item's estimate, :math:`q^*(1 - q^*)/(p^* - q^*)^2`, from
    the oracle's own :attr:`~pldp.mechanisms.base.Mechanism.support` (its grid's rounding included)."""
    p, q = (float(a[item]) for a in mech.support)
    return q * (1 - q) / (p - q) ** 2


def closed_form(name: str, epsilon: float, d: int) -> float:
    """The variance per report at ``f = 0`` in closed form, at the ideal (unrounded) parameters.

    Wang et al.: GRR :math:`(e^\\varepsilon + d - 2)/(e^\\varepsilon - 1)^2`; SUE (basic RAPPOR)
    :math:`e^{\\varepsilon/2}/(e^{\\varepsilon/2} - 1)^2`; OUE and OLH (``g = e^eps + 1``)
    :math:`4 e^\\varepsilon/(e^\\varepsilon - 1)^2`; BLH :math:`(e^\\varepsilon + 1)^2/(e^\\varepsilon - 1)^2`.
    HR (:mod:`pldp.mechanisms.hadamard`) has BLH's. SS (:mod:`pldp.mechanisms.subset`):
    :math:`q(1 - q)/(p - q)^2` with :math:`p = k e^\\varepsilon/(k e^\\varepsilon + d - k)`,
    :math:`q = (p (k - 1) + (1 - p) k)/(d - 1)` at pldp's integer ``k``.

    Examples
    --------
    >>> round(closed_form("OUE", 4.0, 1000), 4), round(closed_form("SS", 4.0, 1000), 4)
    (0.076, 0.0739)
    """
    e = math.exp(epsilon)
    if name == "GRR":
        return (e + d - 2) / (e - 1) ** 2
    if name == "SUE":
        h = math.exp(epsilon / 2)
        return h / (h - 1) ** 2
    if name in ("OUE", "OLH"):
        return 4 * e / (e - 1) ** 2
    if name in ("BLH", "HR"):
        return (e + 1) ** 2 / (e - 1) ** 2
    if name == "SS":
        k = oracle("SS", epsilon, d).k  # type: ignore[attr-defined]
        p = k * e / (k * e + d - k)
        q = (p * (k - 1) + (1 - p) * k) / (d - 1)
        return q * (1 - q) / (p - q) ** 2
    raise KeyError(name)


def spread_counts(n: int, d: int) -> np.ndarray:
    """``n`` users spread evenly over the first ``ceil(d / 2)`` items (the rest absent), read-only."""
    present = (d + 1) // 2
    counts = np.zeros(d, dtype=np.int64)
    counts[:present] = n // present
    counts[: n - int(counts.sum())] += 1
    counts.setflags(write=False)
    return counts


def _z_sd(n: int, q: float) -> float:
    """Standard deviation of the normalised square ``Z`` of a ``Bin(n, q)`` count (module docstring)."""
    s = q * (1 - q)
    return math.sqrt(2 + (1 - 6 * s) / (n * s))


def run_variance(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat of a variance experiment: per oracle, the mean of ``n f_hat_v^2`` over the absent items.

    Setting keys: ``epsilon``, ``d``, ``n``, ``samples`` (at least this many absent-item estimates per
    oracle: ``ceil(samples / (d // 2))`` tallies) and optionally ``per_user`` (perturb and tally every
    user whatever ``--path`` says). Rows: ``method``, ``variance`` (empirical), ``samples``,
    ``theory`` (:func:`support_variance`), ``closed_form`` (:func:`closed_form`), ``z_sd`` and ``path``.
    """
    eps, d, n = float(setting["epsilon"]), int(setting["d"]), int(setting["n"])
    path = "per-user" if setting.get("per_user") else path_of(setting)
    counts = spread_counts(n, d)
    present = (d + 1) // 2
    tallies = -(-int(setting["samples"]) // (d - present))
    rows = []
    for name in ORACLES:
        mech = oracle(name, eps, d)
        total = 0.0
        for _ in range(tallies):
            est = mech.estimate(observe(mech, counts, rng=rng, path=path), "unbiased")
            total += n * float(np.sum(est.frequencies[present:] ** 2))
        samples = tallies * (d - present)
        rows.append(
            {
                "method": name,
                "variance": total / samples,
                "samples": samples,
                "theory": support_variance(mech, present),
                "closed_form": closed_form(name, eps, d),
                "z_sd": _z_sd(n, float(mech.support[1][present])),
                "path": path,
            }
        )
    return rows


@functools.cache
def first_item_counts(source: str | None = None) -> np.ndarray:
    """Users per item of Kosarak's single-item version (each user's first item; ``source``: the full
    file in place of the bundled prefix), read-only."""
    sets = real.load_kosarak(source)
    counts = np.bincount(sets.first_items(), minlength=sets.d)
    counts.setflags(write=False)
    return counts


def run_dataset(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat on Kosarak's first items: per oracle, the MSE of the unbiased frequency estimates
    over the ``top`` most frequent items and over all items, with their closed forms.

    The closed forms are the mean of the items' variances
    :math:`\\sigma_v^2 = [f_v p^*(1 - p^*) + (1 - f_v) q^*(1 - q^*)] / (n (p^* - q^*)^2)` over the same
    items; ``mse_*_sd`` is the SD of one repeat's MSE over ``m`` items with Gaussian errors,
    :math:`\\sqrt{2 \\sum_v \\sigma_v^4} / m` (the estimates' correlations, O(1/d), left out).
    """
    eps, top = float(setting["epsilon"]), int(setting["top"])
    counts = first_item_counts(setting.get("source"))
    n, d = int(counts.sum()), counts.size
    f = counts / n
    heads = np.argsort(-counts, kind="stable")[:top]
    rows = []
    for name in ORACLES:
        mech = oracle(name, eps, d)
        err2 = (mech.estimate(observe(mech, counts, rng=rng, path=path_of(setting)), "unbiased").frequencies - f) ** 2
        p, q = (np.asarray(a, dtype=float) for a in mech.support)
        var = (f * p * (1 - p) + (1 - f) * q * (1 - q)) / (n * (p - q) ** 2)
        rows.append(
            {
                "method": name,
                "mse_top": float(err2[heads].mean()),
                "mse_all": float(err2.mean()),
                "theory_top": float(var[heads].mean()),
                "theory_all": float(var.mean()),
                "mse_top_sd": math.sqrt(2 * float(np.sum(var[heads] ** 2))) / heads.size,
                "mse_all_sd": math.sqrt(2 * float(np.sum(var**2))) / d,
                "n": n,
                "d": d,
            }
        )
    return rows
