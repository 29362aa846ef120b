"""Wang et al. 2017 experiments: theory lines with empirical points, and the tables as Markdown and CSV."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pldp.experiments.wang2017.checks import dataset_cells, variance_cells
from pldp.experiments.wang2017.runs import ORACLES

__all__ = ["plot_dataset", "plot_per_user", "plot_variance_d", "plot_variance_eps", "theory_figure", "write_table"]


def theory_figure(
    cells: Any,
    path: Path,
    *,
    x: str,
    y: str,
    theory: str,
    se: str,
    title: str,
    ylabel: str,
    logx: bool = False,
    methods: Sequence[str] = ORACLES,
) -> Path:
    """One panel: per method (in the order of ``methods``), its closed form (a line, ``theory``) and the
    empirical mean (markers with one-standard-error bars, ``y`` +/- ``se``) against ``x``; log y."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 3.8), dpi=110)
    markers = "osD^v<>xP*"
    for i, name in enumerate(m for m in methods if m in set(cells["method"])):
        part = cells[cells["method"] == name].sort_values(x)
        (line,) = ax.plot(part[x], part[theory], lw=1.0, label=name)
        ax.errorbar(
            part[x],
            part[y],
            yerr=part[se],
            ls="none",
            marker=markers[i % len(markers)],
            ms=4,
            capsize=2,
            color=line.get_color(),
        )
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, frameon=False, ncol=2, title="lines: theory; points: empirical +/- SE", title_fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def _cell(value: Any) -> str:
    """A table cell: text and integers as they are, other numbers to 4 significant digits."""
    if isinstance(value, str | int | np.integer):
        return str(value)
    return f"{value:.4g}"


def write_table(frame: Any, directory: Path, stem: str, caption: str) -> list[Path]:
    """``frame`` as ``<stem>.csv`` and as a Markdown table ``<stem>.md`` under ``caption``."""
    directory.mkdir(parents=True, exist_ok=True)
    frame.to_csv(directory / f"{stem}.csv", index=False)
    cols = list(frame.columns)
    lines = [caption, "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    md = directory / f"{stem}.md"
    md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [md]


def _variance_table(cells: Any, keys: list[str]) -> Any:
    frame = cells[[*keys, "method", "closed_form", "theory", "variance", "se", "ratio", "z", "samples"]].copy()
    frame["method"] = frame["method"].astype(str)
    return frame.rename(columns={"theory": "theory (support)", "variance": "empirical"})


_CAPTION = (
    "Variance per report at an absent item: the ideal closed form, the theory from the oracle's support "
    "(pldp's rounding), the empirical variance (pooled over repeats), its standard error, ratio and z"
)


def plot_variance_eps(table: Any, directory: Path) -> list[Path]:
    """``var_eps.png`` (variance against epsilon, one panel per d) and ``var_eps.md`` / ``.csv``."""
    directory = Path(directory)
    cells = variance_cells(table, ["d", "epsilon", "method"])
    paths = [
        theory_figure(
            cells[cells["d"] == d],
            directory / ("var_eps.png" if i == 0 else f"var_eps_d{d}.png"),
            x="epsilon",
            y="variance",
            theory="theory",
            se="se",
            title=f"Variance per report, d = {d:,}",
            ylabel="n Var[f_hat] at f = 0",
        )
        for i, d in enumerate(sorted(cells["d"].unique()))
    ]
    return paths + write_table(_variance_table(cells, ["d", "epsilon"]), directory, "var_eps", _CAPTION)


def plot_variance_d(table: Any, directory: Path) -> list[Path]:
    """``var_d_eps<eps>.png`` (variance against d, one panel per epsilon) and ``var_d.md`` / ``.csv``."""
    directory = Path(directory)
    cells = variance_cells(table, ["epsilon", "d", "method"])
    paths = [
        theory_figure(
            cells[cells["epsilon"] == e],
            directory / f"var_d_eps{e:g}.png",
            x="d",
            y="variance",
            theory="theory",
            se="se",
            title=f"Variance per report, eps = {e:g}",
            ylabel="n Var[f_hat] at f = 0",
            logx=True,
        )
        for e in sorted(cells["epsilon"].unique())
    ]
    return paths + write_table(_variance_table(cells, ["epsilon", "d"]), directory, "var_d", _CAPTION)


def plot_per_user(table: Any, directory: Path) -> list[Path]:
    """``per_user.md`` / ``.csv``: the variances of real perturb + tally runs."""
    cells = variance_cells(table, ["epsilon", "d", "method"])
    caption = _CAPTION.replace("Variance per report", "Per-user path (perturb + tally): variance per report")
    return write_table(_variance_table(cells, ["epsilon", "d"]), Path(directory), "per_user", caption)


def plot_dataset(table: Any, directory: Path) -> list[Path]:
    """``kosarak.png`` (MSE over all items against epsilon) and ``kosarak.md`` / ``.csv`` (all and top items)."""
    directory = Path(directory)
    every, top = dataset_cells(table, "all"), dataset_cells(table, "top")
    every["se"] = every["sd"] / every["repeats"] ** 0.5
    n, d, k = int(table["n"].iloc[0]), int(table["d"].iloc[0]), int(table["top"].iloc[0])
    fig = theory_figure(
        every,
        directory / "kosarak.png",
        x="epsilon",
        y="mse",
        theory="theory",
        se="se",
        title=f"Kosarak first items (n = {n:,}, d = {d:,})",
        ylabel="MSE of f_hat over all items",
    )
    frame = every[["epsilon", "method", "theory", "mse", "ratio", "z"]].merge(
        top[["epsilon", "method", "theory", "mse"]], on=["epsilon", "method"], suffixes=("_all", f"_top{k}")
    )
    frame["method"] = frame["method"].astype(str)
    caption = f"MSE of the unbiased estimates on Kosarak's first items, over all {d:,} items and the top {k}"
    return [fig, *write_table(frame, directory, "kosarak", caption)]
