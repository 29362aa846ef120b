"""Shared plotting for experiment figures (matplotlib, Agg backend): one file per paper panel."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["line_panel", "mean_table"]


def mean_table(table: Any, x: str, y: str, hue: str = "method", extra: Sequence[str] = ()) -> Any:
    """Mean and standard error of ``y`` over repeats, per ``(extra..., hue, x)``."""
    keys = [*extra, hue, x]
    g = table.groupby(keys, sort=True)[y]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["se"] = out["std"].fillna(0.0) / out["count"].clip(lower=1) ** 0.5
    return out


def line_panel(
    table: Any,
    path: Path,
    *,
    x: str,
    y: str,
    hue: str = "method",
    title: str = "",
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool = False,
    logy: bool = True,
    errorbars: bool = True,
) -> Path:
    """One panel: mean ``y`` against ``x``, one line per ``hue`` value, saved to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    stats = mean_table(table, x, y, hue)
    fig, ax = plt.subplots(figsize=(4.8, 3.6), dpi=110)
    markers = "osD^v<>xP*"
    for i, (name, part) in enumerate(stats.groupby(hue, sort=False)):
        part = part.sort_values(x)
        if errorbars:
            ax.errorbar(
                part[x],
                part["mean"],
                yerr=part["se"],
                marker=markers[i % len(markers)],
                ms=4,
                capsize=2,
                lw=1.2,
                label=str(name),
            )
        else:
            ax.plot(part[x], part["mean"], marker=markers[i % len(markers)], ms=4, lw=1.2, label=str(name))
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
