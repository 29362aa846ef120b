"""Shared plotting for experiment figures (matplotlib, Agg backend): one file per paper panel.

Each experiment declares its figure panels as data, a list of :class:`Panel`, and
:func:`draw` turns a tidy table into one PNG per panel.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Panel", "draw", "line_panel", "mean_table", "select"]


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


def select(table: Any, where: Mapping[str, Any]) -> Any:
    """The rows of ``table`` whose column ``c`` equals ``where[c]`` (or lies in it, for a tuple)."""
    for column, value in where.items():
        if isinstance(value, tuple | list | frozenset | set):
            table = table[table[column].isin(list(value))]
        else:
            table = table[table[column] == value]
    return table


@dataclass(frozen=True)
class Panel:
    """One figure panel of a paper: the mean of ``y`` against ``x``, one line per ``hue`` value.

    Parameters
    ----------
    stem : str
        File name without ``.png`` (e.g. ``"fig2a_mse"``).
    x, y : str
        Columns of the tidy table.
    title : str
    xlabel, ylabel : str, optional
        Axis labels (default: the column names).
    hue : str
        One line per value of this column.
    where : mapping
        Rows to draw: column -> value (or a tuple of values); see :func:`select`.
    prepare : callable, optional
        ``prepare(rows) -> rows``: derives the columns to draw (e.g. a label column for ``hue``);
        a module-level function, so that the experiment stays picklable.
    logx, logy, errorbars : bool
        Scales and standard-error bars.
    """

    stem: str
    x: str
    y: str
    title: str
    xlabel: str | None = None
    ylabel: str | None = None
    hue: str = "method"
    where: Mapping[str, Any] = field(default_factory=dict)
    prepare: Callable[[Any], Any] | None = None
    logx: bool = False
    logy: bool = True
    errorbars: bool = True


def draw(table: Any, directory: Path, panels: Sequence[Panel]) -> list[Path]:
    """One PNG per panel, ``directory / f"{panel.stem}.png"``; a panel without rows (or without
    its ``y`` column) is left out. Returns the paths written, in the order of ``panels``."""
    paths = []
    for panel in panels:
        rows = select(table, panel.where)
        if panel.prepare is not None:
            rows = panel.prepare(rows)
        if not len(rows) or panel.y not in rows.columns:
            continue
        paths.append(
            line_panel(
                rows,
                Path(directory) / f"{panel.stem}.png",
                x=panel.x,
                y=panel.y,
                hue=panel.hue,
                title=panel.title,
                xlabel=panel.xlabel,
                ylabel=panel.ylabel,
                logx=panel.logx,
                logy=panel.logy,
                errorbars=panel.errorbars,
            )
        )
    return paths
