"""The outcome of the audit over time (:func:`pldp.audit.audit_rounds`): rows, table and plot.

The figure of ``docs/auditing.md`` is :mod:`pldp.audit.rounds_figure`'s.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from pldp._text import text_table
from pldp.audit.result import _fmt

__all__ = ["RoundsResult", "RoundsRow"]


@dataclass(frozen=True)
class RoundsRow:
    """One game: ``rounds`` reports of one device, for one way of reporting and one history.

    Attributes
    ----------
    mode : {"memoized", "fresh"}
        With the chain's memo, or the one-report mechanism used ``rounds`` times.
    scenario : {"same", "change", "split"}
        The histories (``pldp.audit.longitudinal.segments``): one value against another, a value that
        changes once against its swap, or one value against a change halfway (a different change
        pattern).
    rounds : int
        Reports per device.
    pair : str
        The items ``a vs b`` of the histories.
    claimed : float
        What is claimed for the whole sequence: :math:`\\varepsilon_1` per fresh report where the
        histories differ; memoized, :math:`\\varepsilon_\\infty` per distinct value when the two
        histories share their change pattern, and for ``"split"`` (no notion bounds it) the pair's
        exact loss from :mod:`pldp.privacy` (or its proven bound where the exact one is too costly).
    audited : float
        The lower bound :math:`\\ln(\\mathrm{TPR}_{lo}/\\mathrm{FPR}_{hi})` of the likelihood-ratio test.
    threshold : float
        The test's log-likelihood-ratio threshold (chosen on the calibration draws).
    tpr, fpr : float
        Observed hit rates on history 0 and history 1.
    trials : int
        Devices per history.
    flagged : bool
        ``audited > claimed``.
    """

    mode: str
    scenario: str
    rounds: int
    pair: str
    claimed: float
    audited: float
    threshold: float
    tpr: float
    fpr: float
    trials: int
    flagged: bool


@dataclass(frozen=True)
class RoundsResult:
    """Rows of an audit over time.

    Attributes
    ----------
    target : str
        The mechanism.
    alpha : float
        The bounds hold jointly for every row with confidence ``1 - alpha``.
    pair : str
        The audited items.
    eps_perm : float
        :math:`\\varepsilon_\\infty` of the pair (NaN for a mechanism without a memo).
    eps_1 : float
        :math:`\\varepsilon_1` of the pair: one report.
    rows : list of RoundsRow
    seconds : float
        Wall time.
    """

    target: str
    alpha: float
    pair: str
    eps_perm: float
    eps_1: float
    rows: list[RoundsRow] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def flagged(self) -> list[RoundsRow]:
        """Rows whose audited bound exceeds their claim."""
        return [r for r in self.rows if r.flagged]

    @property
    def ok(self) -> bool:
        """No row flagged."""
        return not self.flagged

    def row(self, mode: str, scenario: str, rounds: int) -> RoundsRow:
        """The row of one game."""
        for r in self.rows:
            if (r.mode, r.scenario, r.rounds) == (mode, scenario, rounds):
                return r
        raise KeyError((mode, scenario, rounds))

    def curve(self, mode: str, scenario: str) -> tuple[list[int], list[float]]:
        """``(rounds, audited)`` of one mode and scenario, by rounds."""
        rows = sorted((r for r in self.rows if (r.mode, r.scenario) == (mode, scenario)), key=lambda r: r.rounds)
        return [r.rounds for r in rows], [r.audited for r in rows]

    def to_json(self) -> dict[str, Any]:
        """Everything, JSON-able (infinities as strings)."""

        def enc(v: Any) -> Any:
            if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
                return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
            return v

        head = {"target": self.target, "alpha": self.alpha, "pair": self.pair, "eps_perm": self.eps_perm}
        return {
            **{k: enc(v) for k, v in head.items()},
            "eps_1": enc(self.eps_1),
            "seconds": self.seconds,
            "flagged": len(self.flagged),
            "rows": [{k: enc(v) for k, v in asdict(r).items()} for r in self.rows],
        }

    def table(self) -> str:
        """A plain-text table, one row per game."""
        head = ["mode", "history", "r", "claimed", "audited", "tpr", "fpr", "trials", "flag"]
        body = [
            [
                r.mode,
                r.scenario,
                str(r.rounds),
                _fmt(r.claimed),
                _fmt(r.audited),
                f"{r.tpr:.4f}",
                f"{r.fpr:.2e}",
                str(r.trials),
                "ABOVE CLAIM" if r.flagged else "",
            ]
            for r in self.rows
        ]
        return text_table(body, head)

    def summary(self) -> str:
        """One line: target, pair, budgets and flags."""
        state = f"{len(self.flagged)} game(s) ABOVE their claim" if self.flagged else "no game above its claim"
        perm = "" if math.isnan(self.eps_perm) else f"eps_perm {self.eps_perm:g}, "
        return (
            f"audit over time of {self.target}, pair {self.pair} ({perm}eps_1 {self.eps_1:g}; "
            f"{self.rows[0].trials if self.rows else 0} devices per history, joint confidence {1 - self.alpha:g}): "
            f"{state}"
        )

    def __str__(self) -> str:
        return self.summary() + "\n" + self.table()

    def plot(self, ax: Any = None, title: str | None = None) -> Any:
        """Audited epsilon against the number of reports, fresh and memoized, with the budget lines and,
        for the memoized ``"split"`` histories, the pair's exact loss (their claim).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        title : str, optional
            Default: the target.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5.0, 4.0))
        styles = {"same": ("-", "o"), "change": ("--", "o"), "split": ((0, (4, 1.5, 1, 1.5)), "s")}
        names = {"same": "same value", "change": "value changes", "split": "one value vs a change"}
        colors = {"fresh": "C3", "memoized": "C0"}
        for mode in ("fresh", "memoized"):
            for scenario, (ls, marker) in styles.items():
                x, y = self.curve(mode, scenario)
                if x:
                    y_arr = np.asarray(y, dtype=float)
                    y_plot = np.where(np.isfinite(y_arr), y_arr, np.nan)
                    label = f"{mode}, {names[scenario]}"
                    ax.plot(x, y_plot, ls=ls, marker=marker, ms=3.5, color=colors[mode], label=label)
        exact = sorted((r for r in self.rows if (r.mode, r.scenario) == ("memoized", "split")), key=lambda r: r.rounds)
        if exact:
            label = "one value vs a change: exact loss"
            x, y = [r.rounds for r in exact], [r.claimed for r in exact]
            ax.plot(x, y, color="C2", lw=1, marker="x", ms=4, label=label)
        rounds = sorted({r.rounds for r in self.rows})
        if rounds:
            ax.plot(rounds, [r * self.eps_1 for r in rounds], color="0.7", lw=1, ls=":", label="r·ε₁ (fresh claim)")
        if not math.isnan(self.eps_perm):
            ax.axhline(self.eps_perm, color="C0", lw=1, ls=":", label=f"ε∞ = {self.eps_perm:g}")
        ax.axhline(self.eps_1, color="0.3", lw=1, ls="-.", label=f"ε₁ = {self.eps_1:g}")
        ax.set_xscale("log")
        ax.set_xticks(rounds, [str(r) for r in rounds])
        top = max([r.audited for r in self.rows if math.isfinite(r.audited)] + [self.eps_perm, self.eps_1, 1.0])
        # the exact loss of the split histories may run far above what any audit of these trials shows
        ax.set_ylim(0, top * 1.25 if math.isfinite(top) else None)
        ax.set_xlabel("reports of one device, r")
        ax.set_ylabel("audited ε (lower bound)")
        ax.set_title(title or self.target, fontsize=9)
        ax.legend(fontsize=6.5, loc="upper left")
        return ax
