"""Murakami & Kawamoto 2019 experiments: MSE against epsilon (closed forms with empirical points), and the tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pldp.experiments.murakami2019.checks import mse_cells
from pldp.experiments.murakami2019.runs import METHODS
from pldp.experiments.wang2017.figures import theory_figure, write_table

__all__ = ["plot_adult", "plot_mse_eps"]

_CAPTION = (
    "MSE (squared error summed over the items) of the unbiased estimates per number of sensitive items |X_S|, "
    "epsilon and method: the closed form, the empirical mean over the repeats, its standard error, ratio and z, "
    "and the mean MSE over non-private's on the same users"
)


def _plot(table: Any, directory: Path, stem: str, what: str) -> list[Path]:
    """``<stem>_s<|X_S|>.png`` (MSE against epsilon, one figure per |X_S|) and ``<stem>.md`` / ``.csv``."""
    directory = Path(directory)
    cells = mse_cells(table)
    n, d = int(table["n"].iloc[0]), int(table["d"].iloc[0])
    paths = []
    for size in sorted(cells["sensitive"].unique()):
        part = cells[cells["sensitive"] == size]
        mass = float(part["sensitive_mass"].iloc[0])
        paths.append(
            theory_figure(
                part,
                directory / f"{stem}_s{int(size)}.png",
                x="epsilon",
                y="mse",
                theory="theory",
                se="se",
                title=f"{what} (n = {n:,}, d = {d:,}), |X_S| = {int(size)} (mass {mass:.3f})",
                ylabel="MSE (sum over items)",
                methods=METHODS,
            )
        )
    frame = cells[["sensitive", "epsilon", "method", "theory", "mse", "se", "ratio", "z", "vs_nonprivate", "repeats"]]
    frame = frame.rename(columns={"sensitive": "sensitive items", "mse": "empirical"}).astype({"method": str})
    return paths + write_table(frame, directory, stem, _CAPTION + f"; {what}, n = {n:,}, d = {d:,}")


def plot_mse_eps(table: Any, directory: Path) -> list[Path]:
    """``mse_eps_s<|X_S|>.png`` and ``mse_eps.md`` / ``.csv``: the synthetic Zipf population."""
    return _plot(table, directory, "mse_eps", "Zipf")


def plot_adult(table: Any, directory: Path) -> list[Path]:
    """``adult_s<|X_S|>.png`` and ``adult.md`` / ``.csv``: Adult's (education, native-country) pairs."""
    return _plot(table, directory, "adult", "Adult education x country")
