"""The shape of an experiment: a grid of settings, one function per repeat, figure panels, a check."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from pldp.experiments.plotting import Panel, draw

if TYPE_CHECKING:  # pandas is an optional dependency (extra "experiments")
    import pandas as pd

__all__ = ["Check", "CheckFn", "Experiment", "PlotFn", "RunFn", "grid"]

#: One repeat of one setting: ``run(setting, rng) -> rows``; each row is a flat dict such as
#: ``{"method": "IPRR/NS", "mse": 1.2, "re": 0.3}`` (the runner adds paper, experiment, the
#: setting's parameters and the repeat index).
RunFn = Callable[[dict[str, Any], np.random.Generator], list[dict[str, Any]]]
#: ``plot(table, directory) -> [paths]``: outputs of one experiment that are not :class:`Panel` s
#: (a figure of another kind, a table file), from its tidy table.
PlotFn = Callable[["pd.DataFrame", Path], list[Path]]


@dataclass(frozen=True)
class Check:
    """Our verdict on a paper's claim: did we reproduce it, and with what number."""

    agree: bool
    ours: str  # e.g. "IPRR/URR MSE ratio 0.09 at SR=1.0"


#: ``check(table) -> Check``: test the paper's qualitative claim on the tidy table.
CheckFn = Callable[["pd.DataFrame"], Check]


@dataclass(frozen=True)
class Experiment:
    """One figure or table of a paper.

    Parameters
    ----------
    paper : str
        ``"iprr"``, ``"idue"``, ``"febsf"`` or ``"mpldp"``.
    name : str
        Short identifier, used in file names (e.g. ``"fig2a"``).
    title : str
        What the figure shows.
    claim : str
        The paper's claim about it, quoted or paraphrased, for the report.
    settings : sequence of dict
        The grid (full scale): one dict of JSON-able parameters per setting.
    run : RunFn
        One repeat of one setting.
    repeats : int
        The paper's repeat count.
    quick_settings, quick_repeats
        A reduced grid and repeat count for ``--quick`` (defaults: the full grid, 2 repeats).
    panels : sequence of Panel
        The figure panels, one PNG each (:func:`pldp.experiments.plotting.draw`).
    plot : PlotFn, optional
        Further outputs that are not panels (e.g. a table file, a figure of another kind).
    check : CheckFn, optional
    notes : str
        Setup choices, for the report.
    quick_decides : bool
        Whether the quick grid has the power to decide the check: its verdict, and the mark of
        each part of it, were the full-scale ones at every seed tried. Otherwise the quick run
        reports the full-scale verdict instead of its own.
    full_verdict : {"agrees", "differs", ""}
        The check's verdict at full scale (``REPRODUCTION.md``).
    full_ours : str
        The full-scale numbers behind it, in one line.
    """

    paper: str
    name: str
    title: str
    claim: str
    settings: Sequence[dict[str, Any]]
    run: RunFn
    repeats: int
    quick_settings: Sequence[dict[str, Any]] | None = None
    quick_repeats: int = 2
    panels: Sequence[Panel] = ()
    plot: PlotFn | None = None
    check: CheckFn | None = None
    notes: str = ""
    quick_decides: bool = True
    full_verdict: Literal["agrees", "differs", ""] = ""
    full_ours: str = ""

    def grid(self, quick: bool) -> list[dict[str, Any]]:
        """The settings to run."""
        return list(self.quick_settings if quick and self.quick_settings is not None else self.settings)

    def n_repeats(self, quick: bool, trials: int | None = None) -> int:
        """Repeats per setting (``trials`` overrides)."""
        if trials is not None:
            return int(trials)
        return self.quick_repeats if quick else self.repeats

    def figures(self, table: pd.DataFrame, directory: Path) -> list[Path]:
        """Draw every panel and write the other outputs of :attr:`plot`; return the figure paths."""
        paths = draw(table, directory, self.panels)
        return paths + ([Path(p) for p in self.plot(table, directory)] if self.plot is not None else [])

    def decides(self, quick: bool, trials: int | None = None) -> bool:
        """Whether a run at this scale has the power to decide the check.

        The full scale always does, with the paper's repeats; the quick scale only where
        :attr:`quick_decides` says so. Fewer repeats than the scale's own (``trials``) never do.
        """
        if trials is not None and trials < self.n_repeats(quick):
            return False
        return self.quick_decides or not quick

    def verdict(self, check: Check | None, quick: bool, trials: int | None = None) -> str:
        """The verdict to print.

        ``"agrees"`` or ``"differs"`` where the run can decide; a quick verdict that is not the
        recorded full-scale one says both, ``"differs at quick scale (n = 5 repeats); agrees at
        full scale"``. Where the run cannot decide: ``"undecided at quick scale (n = 2 repeats);
        agrees at full scale"`` (``"undecided at 3 repeats; ..."`` for a ``trials`` below the full
        scale's own). ``"-"`` without a check.
        """
        if check is None:
            return "-"
        full = f"{self.full_verdict} at full scale" if self.full_verdict else "not recorded at full scale"
        if not self.decides(quick, trials):
            return f"undecided at {self.scale(quick, trials)}; {full}"
        verdict = "agrees" if check.agree else "differs"
        if quick and self.full_verdict and verdict != self.full_verdict:
            return f"{verdict} at {self.scale(quick, trials)}; {full}"
        return verdict

    def scale(self, quick: bool, trials: int | None = None) -> str:
        """The scale of a run in words: ``"quick scale (n = 2 repeats)"``, or ``"3 repeats"`` for a
        full-scale run with fewer repeats than the paper's, else ``"full scale"``."""
        n = self.n_repeats(quick, trials)
        repeats = f"{n} repeat{'' if n == 1 else 's'}"
        if quick:
            return f"quick scale (n = {repeats})"
        return repeats if n < self.repeats else "full scale"

    def with_source(self, dataset: str, source: str | None) -> Experiment:
        """This experiment with ``"source": source`` in its settings of ``dataset`` (full and quick).

        ``source`` names the file to read ``dataset`` from in place of the bundled copy (e.g.
        ``pldp reproduce --kosarak PATH``); it travels with the setting to wherever the repeat
        runs (a Dask worker too). ``None`` leaves the experiment as it is.
        """
        if source is None:
            return self

        def tagged(settings: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
            return [{**s, "source": source} if s.get("dataset") == dataset else dict(s) for s in settings]

        quick = None if self.quick_settings is None else tagged(self.quick_settings)
        return dataclasses.replace(self, settings=tagged(self.settings), quick_settings=quick)


def grid(**axes: Sequence[Any]) -> list[dict[str, Any]]:
    """Cartesian product of the axes, in the order given (first axis slowest).

    >>> grid(eps=(1, 2), d=(8,))
    [{'eps': 1, 'd': 8}, {'eps': 2, 'd': 8}]
    """
    out: list[dict[str, Any]] = [{}]
    for key, values in axes.items():
        out = [{**s, key: v} for s in out for v in values]
    return out
