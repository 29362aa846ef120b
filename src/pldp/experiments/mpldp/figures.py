"""MPLDP experiments: the figure panels of Fig. 3-4 and Table 3, and Table 3 as Markdown and CSV."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pldp.experiments.mpldp.checks import table3_frame
from pldp.experiments.plotting import Panel

__all__ = ["PANEL", "nse_panels", "table3_panels", "write_table3"]

#: The panel letter of each number of users.
PANEL = {10_000: "a", 1_000: "b"}


def nse_panels(stems: dict[int, str], x: str, methods: Sequence[str], title: str) -> tuple[Panel, ...]:
    """NSE of ``methods`` against the budget ``x``, one panel per number of users ``n``
    (``stems[n]``, in increasing ``n``), log y."""
    xlabel = "per-attribute budget eps_i" if x == "eps_i" else "total privacy budget eps"
    return tuple(
        Panel(
            stems[n],
            x,
            "nse",
            f"{title}, n = {n:,}",
            xlabel=xlabel,
            ylabel="NSE (log scale; paper: log10 NSE)",
            where={"n": n, "method": tuple(methods)},
        )
        for n in sorted(stems)
    )


def table3_curves(rows: Any) -> Any:
    """log10 of OP's mean maximum error per (eps, iteration), for the integer eps (a readable legend)."""
    part = rows[rows["eps"] == rows["eps"].round()]
    stats = part.groupby(["eps", "iteration"])["max_error"].mean().reset_index()
    stats["log10_max_error"] = np.log10(stats["max_error"])
    stats["eps"] = stats["eps"].map(lambda e: f"eps={e:g}")
    return stats


def table3_panels(users: Sequence[int]) -> tuple[Panel, ...]:
    """Table 3 as a figure: OP's log10 maximum error against the iteration, one line per eps."""
    return tuple(
        Panel(
            f"table3{PANEL[n]}",
            "iteration",
            "log10_max_error",
            f"MPLDP Table 3: OP max error, n = {n:,}",
            xlabel="iteration",
            ylabel="log10 max abs count error",
            hue="eps",
            where={"n": n},
            prepare=table3_curves,
            logy=False,
            errorbars=False,
        )
        for n in sorted(users, reverse=True)
    )


def write_table3(table: Any, directory: Path) -> list[Path]:
    """Table 3 as Markdown and CSV, ``table3a``/``table3b`` (no figure: see :func:`table3_panels`)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for n in sorted(table["n"].unique(), reverse=True):
        panel = PANEL.get(int(n), str(n))
        frame = table3_frame(table, int(n))
        frame.round(4).to_csv(directory / f"table3{panel}.csv")
        header = "| eps | " + " | ".join(str(c) for c in frame.columns) + " |"
        lines = [
            f"log10 of OP's maximum count error (mean over the 5 attributes), n = {int(n):,}, by iteration",
            "",
            header,
            "|" + "---|" * (len(frame.columns) + 1),
        ]
        for eps, row in frame.iterrows():
            lines.append(f"| {eps:g} | " + " | ".join(f"{v:.4f}" for v in row) + " |")
        (directory / f"table3{panel}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return []
