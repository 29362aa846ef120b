"""IDUE experiments: the figure panels of Figs. 2-8 (Fig. 2's theory-vs-empirical plot is drawn here)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pldp.experiments.idue.checks import LABEL, dataset_name
from pldp.experiments.idue.runs import FIG2_METHODS, SINGLE_DATASETS
from pldp.experiments.plotting import Panel, mean_table

__all__ = ["by_dataset", "clothing_panels", "ell_panels", "plot_theory"]


def plot_theory(table: Any, directory: Path) -> list[Path]:
    """Fig. 2: empirical (dashed, markers) and theoretical (solid) MSE vs epsilon, one panel per dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for dataset, part in table.groupby("dataset", sort=False):
        emp = mean_table(part, "epsilon", "mse")
        theo = mean_table(part, "epsilon", "mse_theory")
        fig, ax = plt.subplots(figsize=(4.8, 3.6), dpi=110)
        for i, method in enumerate(FIG2_METHODS):
            e = emp[emp["method"] == method].sort_values("epsilon")
            t = theo[theo["method"] == method].sort_values("epsilon")
            if e.empty:
                continue
            color = f"C{i}"
            ax.plot(t["epsilon"], t["mean"], "-", color=color, lw=1.2, label=f"{method} (theory)")
            ax.errorbar(e["epsilon"], e["mean"], yerr=e["se"], fmt="--o", ms=3, color=color, lw=1, capsize=2)
        ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel("MSE")
        ax.set_title(f"Fig. 2 {dataset_name(dataset)}: empirical (dashed) vs theory (solid)", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, frameon=False)
        fig.tight_layout()
        path = Path(directory) / f"fig2_{dataset}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths


def by_dataset(fig: str, x: str, ys: Sequence[str], k: int | None = None) -> tuple[Panel, ...]:
    """One panel per (single-item dataset, metric), ``<fig>_<dataset>_<y>``: mean against ``x``, log y.

    ``k``: the k of RE(k), named in the title of the RE panel.
    """
    return tuple(
        Panel(
            f"{fig}_{dataset}_{y}",
            x,
            y,
            f"Fig. {fig[3:]} {dataset_name(dataset)}: {LABEL[y]}" + (f" (k = {k})" if y == "re" and k else ""),
            xlabel=LABEL.get(x, x),
            ylabel=LABEL[y],
            where={"dataset": dataset},
        )
        for dataset in SINGLE_DATASETS
        for y in ys
    )


def clothing_panels(k: int, eps: float) -> tuple[Panel, ...]:
    """Fig. 6: precision and RE on Clothing (ℓ = 2), against ε at ``k`` and against k at ``eps``."""
    panels: list[Panel] = []
    for y in ("precision", "re"):
        common: dict[str, Any] = {"ylabel": LABEL[y], "logy": y == "re"}
        panels += [
            Panel(
                f"fig6_eps_{y}",
                "epsilon",
                y,
                f"Fig. 6 Clothing, ℓ = 2, k = {k}: {LABEL[y]} vs ε",
                xlabel="ε",
                where={"k": k},
                **common,
            ),
            Panel(
                f"fig6_k_{y}",
                "k",
                y,
                f"Fig. 6 Clothing, ℓ = 2, ε = {eps:g}: {LABEL[y]} vs k",
                xlabel="k",
                where={"epsilon": eps},
                **common,
            ),
        ]
    return tuple(panels)


def label_epsilon(rows: Any) -> Any:
    """The rows with an ``ε`` column, ``"ε = 2"``: one line per budget."""
    return rows.assign(**{"ε": rows["epsilon"].map(lambda e: f"ε = {e:g}")})


def ell_panels(fig: str, dataset: str, k: int) -> tuple[Panel, ...]:
    """Figs. 7-8: IDUE-PS RE(k) and precision against ℓ, one line per ε."""
    return tuple(
        Panel(
            f"{fig}_{y}",
            "ell",
            y,
            f"Fig. {fig[3:]} {dataset_name(dataset)} IDUE-PS (k = {k}): {LABEL[y]} vs ℓ",
            xlabel="ℓ",
            ylabel=LABEL[y],
            hue="ε",
            where={"method": "IDUE-PS"},
            prepare=label_epsilon,
            logy=y == "re",
        )
        for y in ("re", "precision")
    )
