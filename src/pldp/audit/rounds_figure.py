"""The figure of the audit over time in ``docs/auditing.md``: ``make audit`` runs

    python -m pldp.audit.rounds_figure --trials 200000 --out docs/audit-rounds.svg

Audited epsilon against the number of reports ``r`` of one device, fresh and memoized, for the three
pairs of histories of :func:`pldp.audit.audit_rounds` (one value against another, a value that
changes once against its swap, one value against a change halfway) and the exact loss of the last
pair, for L-GRR, L-OSUE and the item-personalized L-IPRR (:data:`FIGURE_MECHANISMS`), with their
tables printed (about two minutes of CPU at the default trials).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from pldp.audit.rounds import RoundsResult

__all__ = ["FIGURE_MECHANISMS", "figure", "main"]


def _lgrr() -> Any:
    import pldp

    return pldp.LGRR(2.0, 0.5, 4)


def _losue() -> Any:
    import pldp

    return pldp.LOSUE(2.0, 0.5, 8)


def _liprr() -> Any:
    import pldp

    return pldp.LIPRR(pldp.ItemBudgets.from_array([1.0, 2.0, 4.0]), pldp.ItemBudgets.from_array([0.25, 0.5, 1.0]))


#: The mechanisms of the figure: name → constructor (the pair audited is items 0 and 1).
FIGURE_MECHANISMS: dict[str, Callable[[], Any]] = {
    "L-GRR ε∞=2, ε₁=0.5, d=4": _lgrr,
    "L-OSUE ε∞=2, ε₁=0.5, d=8": _losue,
    "L-IPRR ε∞=(1,2,4), ε₁=(¼,½,1), pair 1 vs 0": _liprr,
}


def figure(trials: int, seed: int = 0, alpha: float = 0.01) -> tuple[Any, list[RoundsResult]]:
    """The figure of ``docs/auditing.md`` and its results, at ``trials`` devices per history and row."""
    import matplotlib.pyplot as plt

    from pldp.audit.longitudinal import audit_rounds

    fig, axes = plt.subplots(1, len(FIGURE_MECHANISMS), figsize=(5.0 * len(FIGURE_MECHANISMS), 4.8))
    results = []
    for i, (ax, (name, make)) in enumerate(zip(np.atleast_1d(axes), FIGURE_MECHANISMS.items(), strict=True)):
        pair = (1, 0) if "L-IPRR" in name else (0, 1)
        res = audit_rounds(make(), pair=pair, trials=trials, alpha=alpha, rng=np.random.default_rng([seed, i]))
        res.plot(ax, title=name)
        ax.get_legend().remove()  # one legend for all panels (the same curves and budget lines), below
        results.append(res)
    handles, labels = np.atleast_1d(axes)[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig, results


def main(argv: list[str] | None = None) -> None:
    """``python -m pldp.audit.rounds_figure``: write the figure and print the tables."""
    import matplotlib

    matplotlib.use("Agg")
    parser = argparse.ArgumentParser(prog="python -m pldp.audit.rounds_figure", description=__doc__)
    parser.add_argument("--trials", type=int, default=200_000, help="devices per history and row (default 2e5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="docs/audit-rounds.svg", help="the SVG to write")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    fig, results = figure(args.trials, args.seed)
    fig.savefig(args.out, metadata={"Date": None})
    for res in results:
        print(res, end="\n\n")
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":  # pragma: no cover
    main()
