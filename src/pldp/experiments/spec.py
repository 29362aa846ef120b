"""The shape of an experiment: a grid of settings, one function per repeat, a figure, a check."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pandas is an optional dependency (extra "experiments")
    import pandas as pd

__all__ = ["Check", "CheckFn", "Experiment", "PlotFn", "RunFn"]

#: One repeat of one setting: ``run(setting, rng) -> rows``; each row is a flat dict such as
#: ``{"method": "IPRR/NS", "mse": 1.2, "re": 0.3}`` (the runner adds paper, experiment, the
#: setting's parameters and the repeat index).
RunFn = Callable[[dict[str, Any], np.random.Generator], list[dict[str, Any]]]
#: ``plot(table, directory) -> [paths]``: draw the figure(s) of one experiment from its tidy table.
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
    plot : PlotFn, optional
    check : CheckFn, optional
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
    plot: PlotFn | None = None
    check: CheckFn | None = None
    notes: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def grid(self, quick: bool) -> list[dict[str, Any]]:
        """The settings to run."""
        return list(self.quick_settings if quick and self.quick_settings is not None else self.settings)

    def n_repeats(self, quick: bool, trials: int | None = None) -> int:
        """Repeats per setting (``trials`` overrides)."""
        if trials is not None:
            return int(trials)
        return self.quick_repeats if quick else self.repeats
