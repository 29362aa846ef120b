"""The checks of the attack experiments: the closed forms against the measured gains, the reference numbers."""

from __future__ import annotations

import math
from typing import Any

from scipy import stats

from pldp.experiments.spec import Check

__all__ = ["REFERENCE_GAINS", "SIGNIFICANCE", "check_closed_forms", "check_reference", "gain_summary"]

#: Family-wise significance of the closed-form check (Bonferroni over the settings).
SIGNIFICANCE = 1e-3
#: The columns that identify a setting of the attack experiments.
KEYS = ("protocol", "eps", "beta", "r", "n", "d", "zipf", "strategy", "method")


def gain_summary(table: Any) -> Any:
    """Mean, standard error, repeats and failures of the gain per setting, with its closed form.

    The closed form depends on the honest users of each repeat (e.g. their split over the levels),
    so ``expected`` is its mean over the repeats and ``excess``, ``excess_se`` are the mean and
    standard error of the gain minus the repeat's own closed form.
    """
    keys = [k for k in KEYS if k in table.columns]
    rows = table.assign(excess=table["gain"] - table["expected"])
    g = rows.groupby(keys, sort=False, dropna=False)
    out = g.agg(
        mean=("gain", "mean"),
        sd=("gain", "std"),
        repeats=("gain", "size"),
        failed=("failed", "sum"),
        expected=("expected", "mean"),
        exact=("exact", "first"),
        excess=("excess", "mean"),
        excess_sd=("excess", "std"),
    ).reset_index()
    out["se"] = out["sd"].fillna(0.0) / out["repeats"].clip(lower=1) ** 0.5
    out["excess_se"] = out["excess_sd"].fillna(0.0) / out["repeats"].clip(lower=1) ** 0.5
    return out.drop(columns=["sd", "excess_sd"])


def _named(summary: Any) -> list[str]:
    """The setting columns that vary in ``summary`` (what names a setting in a message)."""
    return [k for k in ("protocol", "strategy", "eps", "beta", "r") if k in summary and summary[k].nunique() > 1]


def check_closed_forms(table: Any) -> Check:
    """Every setting's mean gain lies within the Bonferroni bound of standard errors of its exact closed form."""
    s = gain_summary(table)
    s = s[(s["exact"] == 1) & s["expected"].notna()]
    if not len(s):
        return Check(False, "no setting with an exact closed form")
    bound = float(stats.norm.isf(SIGNIFICANCE / (2 * len(s))))
    z = s["excess"].abs() / s["excess_se"].clip(lower=1e-300)
    worst = s.loc[z.idxmax()]
    where = ", ".join(f"{k} {worst[k]:g}" if isinstance(worst[k], float) else f"{k} {worst[k]}" for k in _named(s))
    ours = (
        f"{len(s)} settings, every mean gain within {float(z.max()):.2f} standard errors of its closed form "
        f"(bound {bound:.2f}); the farthest: {where}: {worst['mean']:.4f} vs {worst['expected']:.4f}"
    )
    return Check(bool(math.isfinite(float(z.max())) and float(z.max()) <= bound), ours)


#: The reference measurements of the best moves (the unbiased estimators, 20 repeats with their own
#: seeds): (protocol, eps, strategy, beta) -> (the reference gain, the relative tolerance of its
#: rounding, or 5 % for PLDP-FEBSF's ratio estimator).
REFERENCE_GAINS: dict[tuple[str, float, str, float], tuple[float, float]] = {
    ("krr", 1.0, "mga", 0.01): (0.097, 0.01),
    ("oue", 1.0, "mga", 0.01): (0.032, 0.02),
    ("iprr", 0.55, "sensitive", 0.01): (0.439, 0.01),
    ("idue", 0.55, "sensitive", 0.01): (0.255, 0.01),
    ("rcf-krr", 0.55, "max_level", 0.01): (0.300, 0.01),
    ("febsf-oue", 0.55, "max_level", 0.01): (0.214, 0.05),
}


def check_reference(table: Any) -> Check:
    """Our mean unbiased gains of the best moves agree with the reference numbers (within their
    rounding, and 5 % for PLDP-FEBSF's ratio estimator)."""
    s = gain_summary(table)
    s = s[s["method"] == "unbiased"]
    parts, ok = [], True
    for (protocol, eps, strategy, beta), (theirs, tol) in REFERENCE_GAINS.items():
        row = s[(s["protocol"] == protocol) & (s["eps"] == eps) & (s["strategy"] == strategy) & (s["beta"] == beta)]
        if not len(row):
            continue
        ours = float(row["mean"].iloc[0])
        ok &= abs(ours - theirs) <= tol * theirs
        parts.append(f"{protocol} {strategy} {ours:.4f} ({theirs:g})")
    if not parts:
        return Check(False, "none of the reference rows ran")
    return Check(bool(ok), "; ".join(parts))
