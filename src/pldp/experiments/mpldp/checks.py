"""MPLDP experiments: the paper's claims about Fig. 3, Table 3 and Fig. 4, tested on the tidy tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp.experiments.mpldp.runs import OC, OP, OP_LS, OP_REGRESSIONS, SUM
from pldp.experiments.spec import Check

__all__ = ["PAPER_TABLE3", "TABLE3_ITERATIONS", "check_fig3", "check_fig4", "check_table3", "table3_frame"]

TABLE3_ITERATIONS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20)
#: The paper's Table 3, iterations 1 and 10 (log10), rows eps = 1.0, 1.5, ..., 6.0.
PAPER_TABLE3: dict[int, dict[int, tuple[float, ...]]] = {
    10_000: {
        1: (4.6184, 4.8277, 4.7433, 4.7625, 4.7216, 4.6723, 4.6482, 4.5431, 4.4968, 4.5261, 4.4780),
        10: (4.5430, 4.6901, 4.5729, 4.6602, 4.6086, 4.6255, 4.5315, 4.4383, 4.4176, 4.4682, 4.3916),
    },
    1_000: {
        1: (3.0127, 3.0453, 3.0782, 2.9547, 2.9887, 3.0256, 2.9831, 2.9671, 2.9050, 3.0680, 2.9765),
        10: (2.8388, 2.7822, 2.8505, 2.8170, 2.7940, 2.8170, 2.7392, 2.7696, 2.7695, 2.8444, 2.6739),
    },
}
#: OC's error reduction over the sum: the paper's "about 60 %", and what ERRATA MPLDP-5 computes
#: for the Table 2 split. "About 60 %" counts as reproduced when our reduction is closer to
#: 60 % than to 53 %, i.e. at least their midpoint.
PAPER_REDUCTION, ERRATA_REDUCTION = 0.60, 0.53
ABOUT_60 = (PAPER_REDUCTION + ERRATA_REDUCTION) / 2


def _means(table: Any, x: str, value: str = "nse") -> Any:
    """Mean of ``value`` per (n, x, method), as a wide frame indexed by (n, x)."""
    return table.groupby(["n", x, "method"])[value].mean().unstack("method")


def _reduction_text(red: Any) -> str:
    return f"{100 * red.mean():.0f} % (range {100 * red.min():.0f}-{100 * red.max():.0f} %)"


def _falls(series: Any) -> bool:
    return bool(np.all(np.diff(series.to_numpy()) < 0))


def table3_frame(table: Any, n: int, iterations: Sequence[int] = TABLE3_ITERATIONS) -> Any:
    """Table 3 for ``n`` users: log10 of the mean (over attributes and repeats) maximum error,
    rows ``eps``, columns the iterations."""
    part = table[table["n"] == n].astype({"iteration": int})
    wide = part.groupby(["eps", "iteration"])["max_error"].mean().unstack("iteration")
    return np.log10(wide[[c for c in iterations if c in wide.columns]])


def check_fig3(table: Any, *, x: str = "eps") -> Check:
    """OC below sum at every budget by "about 60 %", and errors falling with the budget."""
    total = _means(table, x)
    pert = _means(table, x, "nse_perturbation")
    red = 1 - total[OC] / total[SUM]
    red_pert = 1 - pert[OC] / total[SUM]
    falls = all(_falls(total.loc[n][m]) for n in total.index.levels[0] for m in (SUM, OC))
    beats = bool(np.all(red > 0))
    figure = red_pert if x == "eps_i" else red
    about = bool(figure.mean() >= ABOUT_60)
    parts = [
        f"OC's NSE is below the sum's at every budget: {beats}; errors fall as the budget grows: {falls}",
        f"total reduction {_reduction_text(red)}",
        f"perturbation part (eq. 11) {_reduction_text(red_pert)}",
    ]
    if x == "eps_i":
        lo, hi = red_pert.groupby(level=x).mean().iloc[[0, -1]]
        tlo, thi = red.groupby(level=x).mean().iloc[[0, -1]]
        parts.append(
            f"perturbation part {100 * lo:.0f} % at eps_i=1 and {100 * hi:.0f} % at eps_i=6 (ERRATA MPLDP-5: 53-70 %); "
            f"the level-sampling term (ERRATA MPLDP-1) keeps the total at {100 * tlo:.0f} % and {100 * thi:.0f} %"
        )
    else:
        parts.append(
            "the paper says about 60 %; ERRATA MPLDP-5 computes about 53 % for the Table 2 split "
            f"(verdict: reproduced if >= {100 * ABOUT_60:.1f} %)"
        )
    return Check(beats and falls and about, "; ".join(parts))


def _table3_part(table: Any, n: int) -> tuple[str, bool, bool]:
    """Table 3 for ``n`` users: the text, whether 70 % of the drop comes by iteration 5, and
    whether the error falls as eps grows (rank correlation and the ends of iteration 10)."""
    frame = table3_frame(table, n, range(1, OP_REGRESSIONS + 1))
    drop10 = (frame[1] - frame[10]).mean()
    share5 = ((frame[1] - frame[5]) / (frame[1] - frame[OP_REGRESSIONS])).mean()
    rho = float(np.corrcoef(np.argsort(np.argsort(frame.index.to_numpy())), np.argsort(np.argsort(frame[10])))[0, 1])
    oc = table[(table["n"] == n) & (table["iteration"] == 1)].groupby("eps")["oc_max_error"].mean()
    paper = PAPER_TABLE3.get(n)
    paper_text = (
        f" (paper: mean drop {np.mean(np.subtract(paper[1], paper[10])):.3f}, log10 values "
        f"{np.mean(paper[10]) - frame[10].mean():.2f} above ours)"
        if paper
        else ""
    )
    text = (
        f"n={n:,}: log10 max error {frame[1].iloc[0]:.2f}->{frame[10].iloc[0]:.2f} (eps=1) and "
        f"{frame[1].iloc[-1]:.2f}->{frame[10].iloc[-1]:.2f} (eps=6) over iterations 1->10, "
        f"mean drop {drop10:.3f}{paper_text}, {100 * share5:.0f} % of the 20-iteration drop by iteration 5, "
        f"rank correlation with eps at iteration 10 {rho:.2f}; OC's log10 max error "
        f"{np.log10(oc.iloc[0]):.2f} (eps=1) / {np.log10(oc.iloc[-1]):.2f} (eps=6)"
    )
    return text, bool(share5 >= 0.7), bool(rho < 0 and frame[10].iloc[-1] < frame[10].iloc[0])


def check_table3(table: Any) -> Check:
    """OP's maximum error never increases, converges fast, and falls as eps grows."""
    worst_rise = float(table["rise"].max())
    parts = [f"largest relative rise of any attribute's max error between iterations {worst_rise:.1e}"]
    fast = with_eps = True
    for n in sorted(table["n"].unique(), reverse=True):
        text, fast_n, with_eps_n = _table3_part(table, int(n))
        parts.append(text)
        fast &= fast_n
        with_eps &= with_eps_n
    return Check(worst_rise <= 1e-9 and fast and with_eps, "; ".join(parts))


def check_fig4(table: Any) -> Check:
    """Paper: OP's MSE slightly above OC's, both below the sum's."""
    m = _means(table, "eps")
    op_oc = m[OP] / m[OC]
    op_sum = m[OP] / m[SUM]
    rise = m[OP] / m[OP_LS] - 1
    above_oc = bool(np.all(op_oc > 1))
    below_sum = bool(np.all(op_sum < 1) and np.all(m[OC] < m[SUM]))
    falls = all(_falls(m.loc[n][c]) for n in m.index.levels[0] for c in (SUM, OC, OP))
    parts = []
    for n in sorted(m.index.levels[0], reverse=True):
        parts.append(
            f"n={int(n):,}: OP/OC NSE ratio {op_oc.loc[n].min():.2f}-{op_oc.loc[n].max():.2f}, "
            f"OP/sum {op_sum.loc[n].min():.2f}-{op_sum.loc[n].max():.2f}"
        )
    parts.append(
        f"OP above OC at every eps: {above_oc} (OP regresses the true histogram, ERRATA MPLDP-4, so its "
        f"least-squares start has the smallest realised error of any weights, OC's included); "
        f"OP and OC below the sum everywhere: {below_sum}; errors fall with eps: {falls}; "
        f"OP's perturbation steps raise its NSE over its least-squares start by "
        f"{100 * rise.min():.0f}-{100 * rise.max():.0f} %"
    )
    return Check(above_oc and below_sum, "; ".join(parts))
