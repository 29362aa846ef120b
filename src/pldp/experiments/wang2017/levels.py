"""Personalized budgets on a large real domain: the user-level protocols over OLH and OUE on Kosarak.

Not an experiment of Wang et al.: their oracles under user-level budgets. ``n`` users are drawn
i.i.d. from Kosarak's first-item distribution ``p`` (``d = 17,034`` items) and each picks one of
four levels :math:`(\\varepsilon/8, \\varepsilon/4, \\varepsilon/2, \\varepsilon)` with equal
shares, independently of her item (the cells multinomial over level and item). Methods:

* ``OLH@min``: everyone at the smallest level, what a collector without personalization must do;
* ``RCF-OLH`` / ``RCF-OUE``: the level in the clear, each level its own oracle (OLH: its own ``g``),
  the levels combined with minimum-variance weights (:class:`~pldp.protocols.RCF`);
* ``PBP-OLH`` / ``PBP-OUE``: the level hidden, the shares public, every level's report of one
  format (OLH: one ``g``, :func:`~pldp.protocols.one_format.best_hash_range`), the pooled estimator
  (:class:`~pldp.protocols.PBP`).

Each repeat records the MSE of the unbiased estimates over all items beside its closed form (the
mean of the items' variances under i.i.d. users: :meth:`RCF.expected_variance` at the repeat's level
counts, :meth:`PBP.expected_variance`, :func:`pldp.theory.item_variance`) and the SD of one repeat's
MSE with Gaussian errors, :math:`\\sqrt{2 \\sum_v \\sigma_v^4}/d`.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pldp.experiments.paths import observe, path_of
from pldp.experiments.spec import Check
from pldp.experiments.wang2017.checks import TARGET_Z, dataset_cells
from pldp.experiments.wang2017.figures import theory_figure, write_table
from pldp.experiments.wang2017.runs import first_item_counts
from pldp.mechanisms import OLH
from pldp.protocols import PBP, RCF
from pldp.protocols.one_format import hiding_cost
from pldp.theory import item_variance

if TYPE_CHECKING:  # pandas is an optional dependency (extra "experiments")
    import pandas as pd

__all__ = ["LEVEL_METHODS", "SHARES", "check_levels", "level_budgets", "plot_levels", "run_levels"]

#: The methods compared, in the figure's order.
LEVEL_METHODS: tuple[str, ...] = ("OLH@min", "RCF-OLH", "RCF-OUE", "PBP-OLH", "PBP-OUE")
#: The shares of the four levels.
SHARES: tuple[float, ...] = (0.25, 0.25, 0.25, 0.25)


def level_budgets(epsilon: float) -> tuple[float, ...]:
    """The four levels of a setting: :math:`(\\varepsilon/8, \\varepsilon/4, \\varepsilon/2, \\varepsilon)`."""
    return tuple(epsilon / 2**k for k in (3, 2, 1, 0))


@functools.cache
def _protocols(epsilon: float, d: int) -> dict[str, Any]:
    """The methods' mechanisms and protocols at one setting (cached: OLH's and PBP's choices of ``g``)."""
    levels = level_budgets(epsilon)
    return {
        "OLH@min": OLH(levels[0], d),
        "RCF-OLH": RCF(levels, d, oracle="olh"),
        "RCF-OUE": RCF(levels, d, oracle="oue"),
        "PBP-OLH": PBP(levels, SHARES, d, "olh"),
        "PBP-OUE": PBP(levels, SHARES, d, "oue"),
    }


def run_levels(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat: ``n`` users i.i.d. from Kosarak's first items, levels i.i.d. from :data:`SHARES`;
    per method, the MSE over all items of the unbiased estimate, its closed form and the SD of one
    repeat's MSE. Setting keys: ``epsilon`` (the largest level), ``dataset``, optionally ``source``."""
    eps = float(setting["epsilon"])
    counts = first_item_counts(setting.get("source"))
    n, d = int(counts.sum()), counts.size
    p = counts / n
    cells = rng.multinomial(n, np.outer(SHARES, p).reshape(-1)).reshape(len(SHARES), d)
    users = cells.sum(axis=0)
    rows = []
    for name, proto in _protocols(eps, d).items():
        if name == "OLH@min":
            tally = observe(proto, users, rng=rng, path=path_of(setting))
            var = item_variance(proto, p, n, "iid")
        else:
            tally = observe(proto, cells, rng=rng, path=path_of(setting))
            var = proto.expected_variance(p, cells.sum(axis=1) if name.startswith("RCF") else n)
        err2 = (proto.estimate(tally, "unbiased").frequencies - p) ** 2
        common = _common_variance(proto, n) if name.startswith("PBP") else 0.0
        rows.append(
            {
                "method": name,
                "mse_all": float(err2.mean()),
                "theory_all": float(var.mean()),
                "mse_all_sd": _mse_sd(var, common),
                "n": n,
                "d": d,
            }
        )
    return rows


def _common_variance(proto: PBP, n: int) -> float:
    """The variance of the error every item's PBP estimate shares: the pooled estimator assumes the
    level shares ``rho`` and the users drew ``n_tau``, so a non-holder's support probability is off by
    :math:`\\sum_\\tau (n_\\tau/N - \\rho_\\tau) q_\\tau` for all items alike, of variance
    :math:`\\mathrm{Var}_\\rho(q_\\tau)/N` (multinomial level counts), over :math:`(p^* - q^*)^2`.
    Zero for OLH (every level's ``q = 1/g``); about 3 % of the per-item variance for OUE at
    ``eps = 1`` here, which makes one repeat's MSE a chi-square of one degree of freedom in part."""
    q = np.array([float(m.support[1][0]) for m in proto.mechanisms])
    rho = np.asarray(SHARES)
    spread = float(rho @ q**2 - (rho @ q) ** 2)
    return spread / (n * (proto.p_star - proto.q_star) ** 2)


def _mse_sd(var: np.ndarray, common: float) -> float:
    """SD of one repeat's MSE over ``d`` items whose errors are a shared Gaussian part of variance
    ``common`` plus independent Gaussian parts (variances ``var - common``):
    :math:`\\sqrt{2 c^2 + 4 c \\sum_v s_v / d^2 + 2 \\sum_v s_v^2 / d^2}` with :math:`s_v = \\sigma_v^2 - c`
    (the cross terms have mean zero by symmetry)."""
    own = var - common
    d = var.size
    return math.sqrt(2 * common**2 + 4 * common * float(own.sum()) / d**2 + 2 * float(np.sum(own**2)) / d**2)


def check_levels(table: pd.DataFrame) -> Check:
    """Every method's MSE matches its closed form; personalization beats everyone at the smallest level
    (RCF-OLH below OLH@min at every epsilon); hiding the level costs (PBP-OLH at or above RCF-OLH, a
    theorem: :func:`~pldp.protocols.one_format.hiding_cost` at an absent item is reported beside it)."""
    cells = dataset_cells(table, "all")
    mse: Any = cells.pivot_table(index="epsilon", columns="method", values="mse")
    theory: Any = cells.pivot_table(index="epsilon", columns="method", values="theory")
    z = float(cells["z"].abs().max())
    gain = theory["OLH@min"] / theory["RCF-OLH"]
    cost = theory["PBP-OLH"] / theory["RCF-OLH"]
    # hiding_cost is the ratio at an absent item; over all items the holders' terms move it a little
    predicted = np.array([hiding_cost(np.array(level_budgets(float(e))), np.array(SHARES)) for e in cost.index])
    agree = z <= TARGET_Z and bool((gain > 1).all()) and bool((cost >= 1).all())
    emp = mse["PBP-OLH"] / mse["RCF-OLH"]
    return Check(
        agree=agree,
        ours=f"empirical/closed-form MSE {cells['ratio'].min():.3f}-{cells['ratio'].max():.3f}, |z| <= {z:.1f}; "
        f"RCF-OLH {float(gain.min()):.2f}x-{float(gain.max()):.2f}x better than OLH at the smallest level; hiding "
        f"the level (PBP-OLH/RCF-OLH) costs {float(cost.min()):.2f}x-{float(cost.max()):.2f}x in theory "
        f"(hiding_cost {predicted.min():.2f}-{predicted.max():.2f}), {float(emp.min()):.2f}x-{float(emp.max()):.2f}x "
        "measured",
    )


def plot_levels(table: Any, directory: Path) -> list[Path]:
    """``levels.png`` (MSE against the largest level's budget) and ``levels.md`` / ``.csv``."""
    directory = Path(directory)
    every = dataset_cells(table, "all")
    every["se"] = every["sd"] / every["repeats"] ** 0.5
    n, d = int(table["n"].iloc[0]), int(table["d"].iloc[0])
    fig = theory_figure(
        every,
        directory / "levels.png",
        x="epsilon",
        y="mse",
        theory="theory",
        se="se",
        title=f"Four budget levels eps/8..eps, Kosarak (n = {n:,}, d = {d:,})",
        ylabel="MSE of f_hat over all items",
        methods=LEVEL_METHODS,
    )
    frame = every[["epsilon", "method", "theory", "mse", "se", "ratio", "z"]].copy()
    frame["method"] = frame["method"].astype(str)
    caption = (
        f"MSE of the unbiased estimates over all {d:,} items, levels (eps/8, eps/4, eps/2, eps) with equal shares, "
        "users i.i.d. from Kosarak's first items"
    )
    return [fig, *write_table(frame, directory, "levels", caption)]
