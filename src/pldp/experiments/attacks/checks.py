"""The check of Cao et al.'s closed forms against the measured gains."""

from __future__ import annotations

import math
from typing import Any

from scipy import stats

from pldp.experiments.spec import Check

__all__ = ["SIGNIFICANCE", "check_closed_forms", "gain_summary"]

#: Family-wise significance of the closed-form check (Bonferroni over the settings).
SIGNIFICANCE = 1e-3
#: The columns that identify a setting of the attack experiments.
KEYS = ("protocol", "eps", "beta", "r", "n", "d", "zipf", "strategy", "method")


def gain_summary(table: Any) -> Any:
    """Mean, standard error, repeats and failures of the gain per setting, with its closed form."""
    keys = [k for k in KEYS if k in table.columns]
    g = table.groupby(keys, sort=False, dropna=False)
    out = g.agg(
        mean=("gain", "mean"),
        sd=("gain", "std"),
        repeats=("gain", "size"),
        failed=("failed", "sum"),
        expected=("expected", "first"),
        exact=("exact", "first"),
    ).reset_index()
    out["se"] = out["sd"].fillna(0.0) / out["repeats"].clip(lower=1) ** 0.5
    return out


def check_closed_forms(table: Any) -> Check:
    """Every setting's mean gain lies within the Bonferroni bound of standard errors of its exact closed form."""
    s = gain_summary(table)
    s = s[(s["exact"] == 1) & s["expected"].notna()]
    if not len(s):
        return Check(False, "no setting with an exact closed form")
    bound = float(stats.norm.isf(SIGNIFICANCE / (2 * len(s))))
    z = (s["mean"] - s["expected"]).abs() / s["se"].clip(lower=1e-300)
    worst = s.loc[z.idxmax()]
    ours = (
        f"{len(s)} settings, every mean gain within {float(z.max()):.2f} standard errors of the closed form "
        f"(bound {bound:.2f}); e.g. {str(worst['protocol']).upper()} eps {worst['eps']:g} beta {worst['beta']:g}: "
        f"{worst['mean']:.4f} vs {worst['expected']:.4f}"
    )
    return Check(bool(math.isfinite(float(z.max())) and float(z.max()) <= bound), ours)
