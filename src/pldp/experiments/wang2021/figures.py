"""Wang, Li & Jha 2021 experiments: precision and recall against epsilon with 95 % bands, and the tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pldp.experiments.wang2017.figures import write_table
from pldp.experiments.wang2021.checks import MEASURES, identification_cells
from pldp.experiments.wang2021.runs import PROTOCOLS

__all__ = ["band_figure", "plot_kosarak", "plot_zipf"]

_LABELS = {"precision": "precision of the top k", "recall": "recall of the true top k"}


def band_figure(cells: Any, path: Path, *, title: str) -> Path:
    """Two panels, precision and recall against epsilon: per protocol the mean over the repeats (a line with
    markers) and its 95 % band (shaded, cut to [0, 1])."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.6), dpi=110, sharey=True)
    markers = "osD^v"
    for ax, measure in zip(axes, ("precision", "recall"), strict=True):
        for i, name in enumerate(m for m in PROTOCOLS if m in set(cells["method"])):
            part = cells[cells["method"] == name].sort_values("epsilon")
            mean, band = part[measure], part[f"{measure}_band"]
            (line,) = ax.plot(part["epsilon"], mean, marker=markers[i % len(markers)], ms=4, lw=1.2, label=name)
            lo, hi = (mean - band).clip(lower=0.0), (mean + band).clip(upper=1.0)  # shares: the band within [0, 1]
            ax.fill_between(part["epsilon"], lo, hi, color=line.get_color(), alpha=0.2, lw=0)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("epsilon")
        ax.set_ylabel(_LABELS[measure])
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7, frameon=False, title="mean, 95 % band", title_fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def _table(cells: Any) -> Any:
    cols = ["epsilon", "method", *(c for m in MEASURES for c in (m, f"{m}_band")), "returned", "repeats"]
    frame = cells[cols].copy()
    frame["method"] = frame["method"].astype(str)
    frame["repeats"] = frame["repeats"].astype(int)
    return frame


_CAPTION = (
    "Heavy-hitter identification of the true top {k}: mean precision and recall over the repeats, the mean "
    "relative error of the correctly found answers' estimates, each with the half-width of its 95 % band, "
    "and the mean number of answers returned"
)


def plot_zipf(table: Any, directory: Path) -> list[Path]:
    """``zipf.png`` (precision and recall against epsilon) and ``zipf.md`` / ``.csv``."""
    directory = Path(directory)
    cells = identification_cells(table)
    n, words, s, k = (table[c].iloc[0] for c in ("n", "words", "s", "top"))
    title = f"Zipf({float(s):g}) over {int(words):,} words, n = {int(n):,}, top {int(k)}"
    fig = band_figure(cells, directory / "zipf.png", title=title)
    return [fig, *write_table(_table(cells), directory, "zipf", _CAPTION.format(k=int(k)) + f" ({title})")]


def plot_kosarak(table: Any, directory: Path) -> list[Path]:
    """``kosarak.png`` (precision and recall against epsilon) and ``kosarak.md`` / ``.csv``."""
    directory = Path(directory)
    cells = identification_cells(table)
    k = int(table["top"].iloc[0])
    title = f"Kosarak users' first items as text, n = {int(table['n'].iloc[0]):,}, top {k}"
    fig = band_figure(cells, directory / "kosarak.png", title=title)
    return [fig, *write_table(_table(cells), directory, "kosarak", _CAPTION.format(k=k) + f" ({title})")]
