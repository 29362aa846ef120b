"""Wang, Li & Jha 2021 experiments: the identification measures per cell, and the paper's claims, on the tidy tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pldp.experiments.spec import Check
from pldp.experiments.wang2021.runs import PROTOCOLS

if TYPE_CHECKING:  # pandas is an optional dependency (extra "experiments")
    import pandas as pd

__all__ = ["HIGH", "MEASURES", "RISE", "check_kosarak", "check_zipf", "identification_cells"]

#: The measures of one repeat (:func:`~pldp.experiments.wang2021.runs.identify`).
MEASURES: tuple[str, ...] = ("precision", "recall", "relative_error")
#: PEM's mean measure (precision on Zipf, recall on Kosarak) at the largest epsilon that counts as "high"
#: (the true top 10 bar at most one or two).
HIGH = 0.8
#: How much PEM's mean precision must rise from the smallest epsilon to the largest.
RISE = 0.3


def identification_cells(table: pd.DataFrame) -> pd.DataFrame:
    """Per (epsilon, method): each measure's mean over the repeats, its standard error and the half-width of
    its 95 % band (Student's t over the repeats; 0 with one repeat), and the repeats."""
    from scipy.stats import t as student

    g = table.groupby(["epsilon", "method"], sort=True)
    out = g.agg(repeats=("precision", "size"), returned=("returned", "mean"))
    for m in MEASURES:
        stats = g[m].agg(["mean", "std", "count"])
        out[m] = stats["mean"]
        out[f"{m}_se"] = stats["std"].fillna(0.0) / np.sqrt(stats["count"].clip(lower=1))
        dof = (stats["count"] - 1).clip(lower=1)
        out[f"{m}_band"] = out[f"{m}_se"] * student.ppf(0.975, dof)
    return out.reset_index()


def _pivot(cells: pd.DataFrame, measure: str) -> Any:
    """Epsilon by protocol (in the order of :data:`~pldp.experiments.wang2021.runs.PROTOCOLS`): the mean ``measure``."""
    table = cells.pivot_table(index="epsilon", columns="method", values=measure, dropna=False)
    return table[[m for m in PROTOCOLS if m in table.columns]]


def _rise_check(table: pd.DataFrame, measure: str) -> Check:
    """PEM's mean ``measure`` rises by :data:`RISE` from the smallest epsilon to the largest and reaches
    :data:`HIGH` there, and no other protocol's mean recall is above PEM's 95 % band at any epsilon
    (recall, not precision: SFP returns only the words its puzzle assembles, few and nearly always right;
    the band, not PEM's mean alone: with five repeats the means of two close protocols swap at some seeds)."""
    cells = identification_cells(table)
    m, recall, band, rel = (_pivot(cells, x) for x in (measure, "recall", "recall_band", "relative_error"))
    pem = m["PEM"]
    low, high = float(pem.iloc[0]), float(pem.iloc[-1])
    rises = high - low >= RISE and high >= HIGH
    others = [c for c in recall.columns if c != "PEM"]
    best = recall[others].max(axis=1) <= recall["PEM"] + band["PEM"] + 1e-12
    last = pem.index[-1]
    text = (
        f"PEM {measure} {low:.2f} (eps={pem.index[0]:g}) to {high:.2f} (eps={last:g}); no other recall above "
        f"PEM's band at {int(best.sum())}/{len(best)} eps; recall at eps={last:g} "
        + ", ".join(f"{c} {float(recall[c].iloc[-1]):.2f}" for c in recall.columns)
        + f"; relative error of the found answers' estimates at eps={last:g}: "
        + ", ".join(f"{c} {float(rel[c].iloc[-1]):.3f}" for c in rel.columns)
    )
    return Check(agree=rises and bool(best.all()), ours=text)


def check_zipf(table: pd.DataFrame) -> Check:
    """Wang et al.: PEM's identification improves with epsilon, is precise at large epsilon on Zipf data,
    and finds at least as many of the heavy hitters as the other protocols: its mean precision rises by at
    least :data:`RISE` from the smallest epsilon to the largest, where it is at least :data:`HIGH`, and no
    other protocol's mean recall is above PEM's 95 % band at any epsilon."""
    return _rise_check(table, "precision")


def check_kosarak(table: pd.DataFrame) -> Check:
    """Wang et al.: on real data PEM finds most of the heavy hitters at large epsilon, and more than the
    other protocols: its mean recall rises by :data:`RISE` to at least :data:`HIGH`, and no other
    protocol's mean recall is above PEM's 95 % band at any epsilon."""
    return _rise_check(table, "recall")
