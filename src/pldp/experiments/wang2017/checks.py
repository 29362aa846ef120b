"""Wang et al. 2017 experiments: the empirical variances against theory, and the paper's claims, on the tidy tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pldp.experiments.spec import Check

if TYPE_CHECKING:  # pandas is an optional dependency (extra "experiments")
    import pandas as pd

__all__ = [
    "FAMILY_ALPHA",
    "TARGET_Z",
    "WANG",
    "check_d",
    "check_dataset",
    "check_eps",
    "check_per_user",
    "chi2_bounds",
    "dataset_cells",
    "variance_cells",
]

#: How far (in standard errors) an empirical MSE on Kosarak may lie from its closed form in a check.
TARGET_Z = 4.0
#: Family-wise false-alarm probability of a variance check: every cell's empirical/theory ratio must lie
#: in its two-sided chi-square interval (:func:`chi2_bounds`) at ``FAMILY_ALPHA / cells`` (Bonferroni);
#: with 7-196 cells that is +/- 4.3-5.0 standard errors (2.5-3.5 % of the variance at full scale).
FAMILY_ALPHA = 1e-4
#: The protocols of Wang et al.'s comparison (SS and HR came later).
WANG: tuple[str, ...] = ("GRR", "SUE", "OUE", "BLH", "OLH")


def variance_cells(table: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per ``keys`` cell (e.g. epsilon, d, method): the empirical variance per report pooled over the
    repeats (weighted by their samples), the theory, the closed form, and the standard error
    ``theory * z_sd / sqrt(samples)`` of the pooled variance (the samples taken as independent:
    across tallies they are, and within one the counts' correlations are O(1/d), a factor below
    1.003 on this variance; module :mod:`~pldp.experiments.wang2017.runs`), ``ratio`` = empirical / theory and ``z``."""
    t = table.assign(_weighted=table["variance"] * table["samples"])
    g = t.groupby(list(keys), sort=True)
    out = g.agg(
        weighted=("_weighted", "sum"),
        samples=("samples", "sum"),
        theory=("theory", "first"),
        closed_form=("closed_form", "first"),
        z_sd=("z_sd", "first"),
    )
    out["samples"] = out["samples"].astype(np.int64)  # float where the whole paper's table had NaN
    out["variance"] = out["weighted"] / out["samples"]
    out["se"] = out["theory"] * out["z_sd"] / np.sqrt(out["samples"])
    out["ratio"] = out["variance"] / out["theory"]
    out["z"] = (out["variance"] - out["theory"]) / out["se"]
    return out.drop(columns="weighted").reset_index()


def chi2_bounds(samples: float, z_sd: float, alpha: float) -> tuple[float, float]:
    """Two-sided ``1 - alpha`` acceptance interval of ``empirical / theory`` for a pooled variance of
    ``samples`` normalised squares of standard deviation ``z_sd`` (mean 1).

    A mean of ``N`` independent squares of Gaussians is ``chi2(N) / N``; the binomial counts' fourth
    cumulant widens it, which Satterthwaite's rule absorbs into the degrees of freedom: the
    ``chi2(nu) / nu`` with the same mean 1 and variance ``z_sd^2 / N`` has ``nu = 2 N / z_sd^2``.
    """
    from scipy.stats import chi2

    nu = 2 * samples / z_sd**2
    return float(chi2.ppf(alpha / 2, nu) / nu), float(chi2.ppf(1 - alpha / 2, nu) / nu)


def _z_text(cells: pd.DataFrame) -> tuple[bool, str]:
    """Whether every cell lies in its chi-square interval (:data:`FAMILY_ALPHA`), and the numbers."""
    alpha = FAMILY_ALPHA / len(cells)
    bounds = [chi2_bounds(n, sd, alpha) for n, sd in zip(cells["samples"], cells["z_sd"], strict=True)]
    inside = sum(lo < r < hi for (lo, hi), r in zip(bounds, cells["ratio"], strict=True))
    text = (
        f"empirical/theory variance {cells['ratio'].min():.3f}-{cells['ratio'].max():.3f}, |z| <= "
        f"{float(cells['z'].abs().max()):.1f}, {inside}/{len(cells)} cells within their chi-square intervals"
    )
    return inside == len(cells), text


def _rounding_text(cells: pd.DataFrame) -> str:
    """The largest gap between the support's variance (pldp's grid) and the ideal closed form, per oracle."""
    gap = (cells["theory"] / cells["closed_form"] - 1).abs().groupby(cells["method"]).max()
    top = gap.sort_values(ascending=False)
    return "support vs closed form: " + ", ".join(f"{m} {100 * v:.2g} %" for m, v in top.items())


def check_eps(table: pd.DataFrame) -> Check:
    """Wang et al.: OUE and OLH have the least variance of GRR, SUE, OUE, BLH and OLH at every epsilon
    (for a large domain), and the same one; every empirical variance matches its theory."""
    cells = variance_cells(table, ["d", "epsilon", "method"])
    theory = cells.pivot_table(index=["d", "epsilon"], columns="method", values="theory")
    wang = theory[list(WANG)]
    best = wang.idxmin(axis=1)
    olh_oue = theory["OLH"] / theory["OUE"]
    least = bool(best.isin(["OUE", "OLH"]).all())
    same = bool((olh_oue - 1).abs().max() <= 0.01)
    within, ztext = _z_text(cells)
    return Check(
        agree=least and same and within,
        ours=f"OUE or OLH least of Wang et al.'s five at {int(best.isin(['OUE', 'OLH']).sum())}/{len(best)} "
        f"epsilons; OLH/OUE variance {olh_oue.min():.4f}-{olh_oue.max():.4f} (integer g); {ztext}; "
        + _rounding_text(cells),
    )


def check_d(table: pd.DataFrame) -> Check:
    """Wang et al.: GRR's variance grows linearly with d, and GRR beats OUE exactly when
    ``d < 3 e^eps + 2``; the others' do not depend on d; every empirical variance matches its theory."""
    cells = variance_cells(table, ["epsilon", "d", "method"])
    theory = cells.pivot_table(index=["epsilon", "d"], columns="method", values="theory")
    emp = cells.pivot_table(index=["epsilon", "d"], columns="method", values="variance")
    eps = theory.index.get_level_values("epsilon").to_numpy()
    d = theory.index.get_level_values("d").to_numpy()
    predicted = d < 3 * np.exp(eps) + 2
    grr_wins = (theory["GRR"] < theory["OUE"]).to_numpy()
    emp_wins = (emp["GRR"] < emp["OUE"]).to_numpy()
    flat = {m: float(theory[m].groupby(level="epsilon").agg(lambda s: s.max() / s.min() - 1).max()) for m in WANG[1:]}
    within, ztext = _z_text(cells)
    crossings = []
    for e in sorted(set(eps)):
        at = eps == e
        crossings.append(
            f"eps={e:g}: GRR < OUE up to d={int(d[at][grr_wins[at]].max()) if grr_wins[at].any() else 0} "
            f"(3e^eps+2 = {3 * math.exp(e) + 2:.1f}), empirically up to "
            f"d={int(d[at][emp_wins[at]].max()) if emp_wins[at].any() else 0}"
        )
    agree = bool(np.array_equal(predicted, grr_wins) and max(flat.values()) <= 0.01) and within
    return Check(
        agree=agree,
        ours="; ".join(crossings)
        + f"; largest change with d of SUE, OUE, BLH, OLH: {100 * max(flat.values()):.2g} %; {ztext}",
    )


def check_per_user(table: pd.DataFrame) -> Check:
    """The variances of real per-user reports (perturb and tally) match their theory too."""
    cells = variance_cells(table, ["epsilon", "d", "method"])
    within, ztext = _z_text(cells)
    return Check(agree=within, ours=f"perturb + tally: {ztext}")


def dataset_cells(table: pd.DataFrame, which: str = "all") -> pd.DataFrame:
    """Per (epsilon, method): mean MSE over the ``which`` items (``"all"`` or ``"top"``) over repeats, its
    closed form, and ``z`` with the closed-form SD of one repeat's MSE (Gaussian errors:
    :math:`\\sqrt{2 \\sum_v \\sigma_v^4} / m` over the ``m`` items)."""
    g = table.groupby(["epsilon", "method"], sort=True)
    out = g.agg(
        mse=(f"mse_{which}", "mean"),
        theory=(f"theory_{which}", "first"),
        sd=(f"mse_{which}_sd", "first"),
        repeats=(f"mse_{which}", "size"),
    )
    out["ratio"] = out["mse"] / out["theory"]
    out["z"] = (out["mse"] - out["theory"]) / (out["sd"] / np.sqrt(out["repeats"]))
    return out.reset_index()


def check_dataset(table: pd.DataFrame) -> Check:
    """On Kosarak's first items (a large domain): OUE or OLH has the least MSE of Wang et al.'s five, and GRR's
    is above both, at every epsilon; the MSE over all items matches its closed form."""
    cells = dataset_cells(table, "all")
    mse: Any = cells.pivot_table(index="epsilon", columns="method", values="mse")[list(WANG)]
    best = mse.idxmin(axis=1)
    least = bool(best.isin(["OUE", "OLH"]).all())
    grr = mse["GRR"] / mse[["OUE", "OLH"]].max(axis=1)
    z = float(cells["z"].abs().max())
    top = dataset_cells(table, "top").pivot_table(index="epsilon", columns="method", values="mse")
    return Check(
        agree=least and bool((grr > 1).all()) and z <= TARGET_Z,
        ours=f"least MSE of the five: {', '.join(f'{m} (eps={e:g})' for e, m in best.items())}; GRR "
        f"{float(grr.max()):.0f}x (eps={grr.index[0]:g}) to {float(grr.min()):.0f}x (eps={grr.index[-1]:g}) the larger "
        f"of OUE and OLH; empirical/closed-form MSE {cells['ratio'].min():.3f}-{cells['ratio'].max():.3f}, |z| <= "
        f"{z:.1f}; top-{int(table['top'].iloc[0])} MSE of OLH/OUE "
        f"{float((top['OLH'] / top['OUE']).min()):.2f}-{float((top['OLH'] / top['OUE']).max()):.2f}",
    )
