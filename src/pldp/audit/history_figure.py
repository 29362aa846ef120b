"""The figure of a device's whole history in ``docs/longitudinal.md``:

    python -m pldp.audit.history_figure --out docs/rounds-privacy.svg

The privacy loss of ``r`` reports of one device under L-GRR (eps_inf = 2, eps_1 = 1) over two and
four items, against ``r`` (:func:`pldp.privacy.over_rounds`, computed, not sampled): the whole
history (exact, then between the proven bound and a pair of histories that reaches it), pairs of
histories with the same change pattern, one value that never changes, and ``r`` fresh reports
(:math:`r\\varepsilon_1`). The tables of the figure are printed. The audit over time
(:mod:`pldp.audit.rounds_figure`) measures the same chains by sampling.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from pldp._text import text_table
from pldp.privacy import RoundsPrivacy, over_rounds

__all__ = ["FIGURE_CHAINS", "curves", "figure", "main", "table"]

#: The panels: name → (items, largest r).
FIGURE_CHAINS: dict[str, tuple[int, int]] = {
    "L-GRR ε∞=2, ε₁=1, d=2": (2, 40),
    "L-GRR ε∞=2, ε₁=1, d=4": (4, 20),
}


def curves(d: int, top: int) -> list[RoundsPrivacy]:
    """:func:`~pldp.privacy.over_rounds` of L-GRR(2, 1, ``d``) for ``r = 1 .. top``."""
    import pldp

    mech = pldp.LGRR(2.0, 1.0, d)
    return [over_rounds(mech, r) for r in range(1, top + 1)]


def table(results: list[RoundsPrivacy]) -> str:
    """One row per ``r``: the whole history (exact, or the pair's loss and the bound), the same change
    pattern, one unchanged value, fresh reports."""
    rows = [
        [
            str(res.rounds),
            f"{res.epsilon:.2f}" if res.exact else f"[{res.lower:.2f}, {res.bound:.2f}]",
            f"{res.bound:.2f}",
            f"{res.same_pattern_epsilon:.2f}",
            f"{res.unchanged_epsilon:.2f}",
            f"{res.fresh_epsilon:.2f}",
        ]
        for res in results
    ]
    header = ["r", "whole history", "bound", "same pattern", "unchanged value", "fresh r·ε₁"]
    return text_table(rows, header)


def _plot(ax: Any, results: list[RoundsPrivacy], title: str) -> None:
    r = np.array([res.rounds for res in results])
    exact = np.array([res.exact for res in results])
    eps = np.array([res.epsilon for res in results])
    ax.plot(r[exact], eps[exact], "o-", ms=3, color="C3", label="whole history, exact")
    # the loss never decreases with r, so the best pair of any r' <= r bounds it from below at r
    lower = np.maximum.accumulate([res.lower for res in results])
    tail = np.flatnonzero(~exact)
    if tail.size:
        tail = np.concatenate([tail[:1] - 1, tail]) if tail[0] > 0 else tail
        ax.plot(r[tail], lower[tail], ":", color="C3", label="whole history, lower bound (a pair)")
    ax.plot(r, [res.bound for res in results], "--", color="C3", lw=1, label="whole history, upper bound")
    ax.plot(r, [res.same_pattern_epsilon for res in results], "-", color="C0", label="same change pattern")
    ax.plot(r, [res.unchanged_epsilon for res in results], "-.", color="C0", lw=1, label="one unchanged value")
    ax.plot(r, [res.fresh_epsilon for res in results], "-", color="0.55", label="fresh reports, r·ε₁")
    ax.axhline(results[0].permanent_epsilon, color="0.3", lw=0.8, ls=":", label="ε∞")
    ax.set_xlim(0, r[-1] + 1)
    ax.set_ylim(0, None)
    ax.set_xlabel("reports of one device, r")
    ax.set_ylabel("privacy loss ε (exact or bounded)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6.5, loc="upper left")


def figure() -> tuple[Any, dict[str, list[RoundsPrivacy]]]:
    """The figure of ``docs/longitudinal.md`` and its results, panel by panel."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(FIGURE_CHAINS), figsize=(5.0 * len(FIGURE_CHAINS), 4.2))
    results = {}
    for ax, (name, (d, top)) in zip(np.atleast_1d(axes), FIGURE_CHAINS.items(), strict=True):
        results[name] = curves(d, top)
        _plot(ax, results[name], name)
    fig.tight_layout()
    return fig, results


def main(argv: list[str] | None = None) -> None:
    """``python -m pldp.audit.history_figure``: write the figure and print the tables."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "pldp"  # the same file from the same numbers
    parser = argparse.ArgumentParser(prog="python -m pldp.audit.history_figure", description=__doc__)
    parser.add_argument("--out", default="docs/rounds-privacy.svg", help="the SVG to write")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    fig, results = figure()
    fig.savefig(args.out, metadata={"Date": None})
    for name, res in results.items():
        print(name, table(res), sep="\n", end="\n\n")
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":  # pragma: no cover
    main()
