"""Reproduction of Feng & Zhang, *MPLDP: Multi-Level Personalized LDP* (IEEE Access 2024), Sec. VI.

Setting (Sec. VI): five attributes with ``k = (5, 10, 15, 20, 25)`` candidate values, the data of
Algorithm 4 (:func:`pldp.datasets.mpldp_dataset`: every value of attribute ``i`` held by about
``n / k_i`` users), ``n = 10,000`` (panels a) and ``n = 1,000`` (panels b), a total budget
``eps`` in {1.0, 1.5, ..., 6.0} split over the attributes by :func:`allocate_budget` (Table 2,
ERRATA MPLDP-3), three levels per attribute with budgets ``eps_i/3, eps_i/2, eps_i`` that every
user picks at random with equal shares, independently per attribute (ERRATA MPLDP-2: Algorithm
4's rows are sorted, so levels assigned in blocks would bias everything).

Experiments (one :class:`Experiment` per paper figure/table):

* ``fig3a`` / ``fig3b``: NSE (eq. in Sec. VI: squared count error summed over the five
  attributes' histograms, divided by ``n``) of the plain sum of the levels' estimates (the
  paper's "BRR") and of OC (Theorem 2) against the total ``eps``; n = 10,000 / 1,000.
* ``fig3_eps_i``: the same with the x-axis a per-attribute ``eps_i`` in [1, 6] (every attribute
  gets ``eps_i``), where ERRATA MPLDP-5 locates the paper's "about 60 %".
* ``table3``: OP (Algorithm 3, an evaluation-only oracle that regresses the TRUE histogram on
  the level estimates, ERRATA MPLDP-4): log10 of the maximum absolute count error, averaged
  over the five attributes and the repeats, after iterations 1..20 (iteration 1 is the least
  squares fit, iteration ``t`` follows ``t - 1`` perturbation steps); written as
  ``table3{a,b}.md`` / ``.csv`` (iterations 1-10 and 20, as in the paper) and a figure.
* ``fig4``: NSE of sum, OC and OP (weights of the 20th regression) against the total ``eps``,
  one panel per ``n``. The table also holds ``OP (LS)``, OP's least-squares start, which is not
  drawn.

Each repeat draws fresh levels and fresh BRR noise on the fixed Algorithm 4 data, simulated
exactly at the count level (:meth:`MPLDP.simulate`). Besides the total NSE, ``fig3*`` record
``nse_perturbation``: the error against the OC-weighted truth *within* the levels, the part
that eq. 11 describes; OC's total error adds the level-sampling term of ERRATA MPLDP-1 (the
plain sum has none).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pldp.datasets import mpldp_dataset
from pldp.experiments.oracles import op_weights_with_ground_truth
from pldp.experiments.paths import observe, path_of
from pldp.experiments.plotting import line_panel
from pldp.experiments.spec import Check, Experiment
from pldp.metrics import max_abs_error, nse
from pldp.protocols.mpldp import MPLDP, allocate_budget

__all__ = [
    "EPS_GRID",
    "OP_REGRESSIONS",
    "K",
    "experiments",
    "protocol",
    "run_nse",
    "run_op_max_error",
    "table3_frame",
    "truth",
]

PAPER = "mpldp"
#: Candidate values of the five attributes (Sec. VI).
K: tuple[int, ...] = (5, 10, 15, 20, 25)
#: Total budgets of Fig. 3-4 and Table 3 (and the per-attribute budgets of ``fig3_eps_i``).
EPS_GRID: tuple[float, ...] = tuple(round(1.0 + 0.5 * i, 1) for i in range(11))
QUICK_EPS: tuple[float, ...] = (1.0, 2.0, 4.0, 6.0)
USERS: tuple[int, ...] = (10_000, 1_000)
PANEL = {10_000: "a", 1_000: "b"}
#: OP runs 20 regressions (Algorithm 3 with ``iter = 20``); Table 3 shows the first 10.
OP_REGRESSIONS = 20
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
#: Not stated in the paper.
REPEATS = 100
QUICK_REPEATS = 10
SUM, OC, OP, OP_LS = "BRR (sum)", "OC", "OP", "OP (LS)"
#: OC's error reduction over the sum: the paper's "about 60 %", and what ERRATA MPLDP-5 computes
#: for the Table 2 split. "About 60 %" counts as reproduced when our reduction is closer to
#: 60 % than to 53 %, i.e. at least their midpoint.
PAPER_REDUCTION, ERRATA_REDUCTION = 0.60, 0.53
ABOUT_60 = (PAPER_REDUCTION + ERRATA_REDUCTION) / 2


# ------------------------------------------------------------------------- data and protocol
@functools.cache
def truth(n: int) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Algorithm 4's data ``(n, 5)`` and the true count histogram of each attribute (cached)."""
    values = mpldp_dataset(n, list(K))
    values.setflags(write=False)
    return values, tuple(np.bincount(values[:, i], minlength=k) for i, k in enumerate(K))


@functools.cache
def protocol(eps: float, per_attribute: bool) -> MPLDP:
    """MPLDP on the five attributes: total ``eps`` split as in Table 2, or ``eps`` for every
    attribute (``per_attribute``); cached (the budget split solves a small convex problem)."""
    eps_i = np.full(len(K), eps) if per_attribute else allocate_budget(eps, K)
    return MPLDP(list(K), eps_i)


def _setup(setting: dict[str, Any]) -> tuple[MPLDP, int]:
    if "eps_i" in setting:
        return protocol(float(setting["eps_i"]), True), int(setting["n"])
    return protocol(float(setting["eps"]), False), int(setting["n"])


# ------------------------------------------------------------------------------ run functions
def run_nse(setting: dict[str, Any], rng: np.random.Generator, *, with_op: bool = False) -> list[dict[str, Any]]:
    """One repeat: NSE of sum and OC (and OP, OP's least-squares start, with ``with_op``).

    Setting keys: ``n`` and either ``eps`` (total, Table 2 split) or ``eps_i`` (per attribute).
    Rows also carry ``nse_perturbation``, the error against the combination of the levels'
    own true counts with the method's weights (for the sum that is the truth itself).
    """
    proto, n = _setup(setting)
    values, hist = truth(n)
    levels = proto.assign_levels(n, rng)
    tally = observe(proto, values, levels, rng=rng, path=path_of(setting))
    true_all = np.concatenate(hist)
    rows: list[dict[str, Any]] = []
    for label, method in ((SUM, "sum"), (OC, "unbiased")):
        ests = proto.estimate(tally, method)
        est_all = np.concatenate([e.counts for e in ests])
        targets = []
        for i, (k, e) in enumerate(zip(K, ests, strict=True)):
            within = np.bincount(levels[:, i] * k + values[:, i], minlength=3 * k).reshape(3, k)
            c = n * e.info["weights"] / e.info["n_tau"]
            targets.append(c @ within)
        rows.append(
            {
                "method": label,
                "nse": float(nse(true_all, est_all, n=n)),
                "nse_perturbation": float(nse(np.concatenate(targets), est_all, n=n)),
            }
        )
    if with_op:
        op_final, op_ls = [], []
        for i in range(len(K)):
            level_counts, _ = proto.level_estimates(tally, i)
            res = op_weights_with_ground_truth(hist[i], level_counts, iterations=OP_REGRESSIONS - 1)
            op_final.append(res.estimates[-1])
            op_ls.append(res.estimates[0])
        rows.append({"method": OP, "nse": float(nse(true_all, np.concatenate(op_final), n=n))})
        rows.append({"method": OP_LS, "nse": float(nse(true_all, np.concatenate(op_ls), n=n))})
    return rows


def run_op_max_error(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat of Table 3: OP's maximum absolute count error after each of its 20 regressions.

    Rows: ``iteration`` (1 = least squares), ``max_error`` (averaged over the five attributes),
    ``rise`` (the largest growth of any attribute's maximum error since the previous iteration,
    relative to it; Theorem 3 says it is never positive) and, at iteration 1, OC's maximum
    error for comparison (``oc_max_error``).
    """
    proto, n = _setup(setting)
    values, hist = truth(n)
    tally = observe(proto, values, proto.assign_levels(n, rng), rng=rng, path=path_of(setting))
    errors = np.empty((len(K), OP_REGRESSIONS))
    for i in range(len(K)):
        level_counts, _ = proto.level_estimates(tally, i)
        res = op_weights_with_ground_truth(hist[i], level_counts, iterations=OP_REGRESSIONS - 1)
        errors[i] = res.max_error
    oc = proto.estimate(tally, "unbiased")
    oc_max = float(np.mean([max_abs_error(h, e.counts) for h, e in zip(hist, oc, strict=True)]))
    rise = np.zeros(OP_REGRESSIONS)
    rise[1:] = np.max(np.diff(errors, axis=1) / errors[:, :-1], axis=0)
    mean_err = errors.mean(axis=0)
    return [
        {
            "method": OP,
            "iteration": t + 1,
            "max_error": float(mean_err[t]),
            "rise": float(rise[t]),
            **({"oc_max_error": oc_max} if t == 0 else {}),
        }
        for t in range(OP_REGRESSIONS)
    ]


# ------------------------------------------------------------------------------------ helpers
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


# ---------------------------------------------------------------------------- plots and checks
def _plot_nse(table: Any, directory: Path, *, name: str, x: str, methods: Sequence[str], title: str) -> list[Path]:
    paths = []
    xlabel = "per-attribute budget eps_i" if x == "eps_i" else "total privacy budget eps"
    single = table["n"].nunique() == 1
    for n, part in table.groupby("n"):
        panel = PANEL.get(int(n), str(n))
        if single and name.endswith(panel):
            stem = name
        else:
            stem = f"{name}{'_' if '_' in name else ''}{panel}"
        sub = part[part["method"].isin(methods)]
        paths.append(
            line_panel(
                sub,
                Path(directory) / f"{stem}.png",
                x=x,
                y="nse",
                title=f"{title}, n = {int(n):,}",
                xlabel=xlabel,
                ylabel="NSE (log scale; paper: log10 NSE)",
                logy=True,
            )
        )
    return paths


def plot_fig3(table: Any, directory: Path, *, name: str, x: str = "eps") -> list[Path]:
    """Fig. 3 panel(s): NSE of sum and OC against the budget."""
    title = "MPLDP Fig. 3 (per-attribute eps_i)" if x == "eps_i" else "MPLDP Fig. 3"
    return _plot_nse(table, directory, name=name, x=x, methods=(SUM, OC), title=title)


def plot_fig4(table: Any, directory: Path) -> list[Path]:
    """Fig. 4 panels: NSE of sum, OC and OP (OP's least-squares start is left out)."""
    return _plot_nse(table, directory, name="fig4", x="eps", methods=(SUM, OC, OP), title="MPLDP Fig. 4")


def plot_table3(table: Any, directory: Path) -> list[Path]:
    """Table 3 as Markdown and CSV (``table3a``/``table3b``) and a figure per ``n``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for n in sorted(table["n"].unique(), reverse=True):
        panel = PANEL.get(int(n), str(n))
        frame = table3_frame(table, int(n))
        frame.round(4).to_csv(directory / f"table3{panel}.csv")
        header = "| eps | " + " | ".join(str(c) for c in frame.columns) + " |"
        lines = [
            f"log10 of OP's maximum count error (mean over the 5 attributes), n = {int(n):,}, by iteration",
            "",
            header,
            "|" + "---|" * (len(frame.columns) + 1),
        ]
        for eps, row in frame.iterrows():
            lines.append(f"| {eps:g} | " + " | ".join(f"{v:.4f}" for v in row) + " |")
        (directory / f"table3{panel}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        part = table[(table["n"] == n) & (table["eps"] == table["eps"].round())]  # integer eps: a readable legend
        stats = part.groupby(["eps", "iteration"])["max_error"].mean().reset_index()
        stats["log10_max_error"] = np.log10(stats["max_error"])
        stats["eps"] = stats["eps"].map(lambda e: f"eps={e:g}")
        paths.append(
            line_panel(
                stats,
                directory / f"table3{panel}.png",
                x="iteration",
                y="log10_max_error",
                hue="eps",
                title=f"MPLDP Table 3: OP max error, n = {int(n):,}",
                xlabel="iteration",
                ylabel="log10 max abs count error",
                logy=False,
                errorbars=False,
            )
        )
    return paths


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


def check_table3(table: Any) -> Check:
    """OP's maximum error never increases, converges fast, and falls as eps grows."""
    worst_rise = float(table["rise"].max())
    never_up = worst_rise <= 1e-9
    parts, fast, with_eps = [], True, True
    for n in sorted(table["n"].unique(), reverse=True):
        frame = table3_frame(table, int(n), range(1, OP_REGRESSIONS + 1))
        drop10 = (frame[1] - frame[10]).mean()
        share5 = ((frame[1] - frame[5]) / (frame[1] - frame[OP_REGRESSIONS])).mean()
        rho = float(
            np.corrcoef(np.argsort(np.argsort(frame.index.to_numpy())), np.argsort(np.argsort(frame[10])))[0, 1]
        )
        fast &= bool(share5 >= 0.7)
        with_eps &= bool(rho < 0 and frame[10].iloc[-1] < frame[10].iloc[0])
        oc = table[(table["n"] == n) & (table["iteration"] == 1)].groupby("eps")["oc_max_error"].mean()
        paper = PAPER_TABLE3.get(int(n))
        paper_text = (
            f" (paper: mean drop {np.mean(np.subtract(paper[1], paper[10])):.3f}, log10 values "
            f"{np.mean(paper[10]) - frame[10].mean():.2f} above ours)"
            if paper
            else ""
        )
        parts.append(
            f"n={int(n):,}: log10 max error {frame[1].iloc[0]:.2f}->{frame[10].iloc[0]:.2f} (eps=1) and "
            f"{frame[1].iloc[-1]:.2f}->{frame[10].iloc[-1]:.2f} (eps=6) over iterations 1->10, "
            f"mean drop {drop10:.3f}{paper_text}, {100 * share5:.0f} % of the 20-iteration drop by iteration 5, "
            f"rank correlation with eps at iteration 10 {rho:.2f}; OC's log10 max error "
            f"{np.log10(oc.iloc[0]):.2f} (eps=1) / {np.log10(oc.iloc[-1]):.2f} (eps=6)"
        )
    parts.insert(0, f"largest relative rise of any attribute's max error between iterations {worst_rise:.1e}")
    return Check(never_up and fast and with_eps, "; ".join(parts))


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


# -------------------------------------------------------------------------------- experiments
def _grid(users: Sequence[int], eps: Sequence[float], key: str = "eps") -> list[dict[str, Any]]:
    return [{"n": n, key: e} for n in users for e in eps]


def experiments() -> list[Experiment]:
    """Fig. 3 (a, b and the per-attribute-budget variant), Table 3 and Fig. 4 of Feng & Zhang."""
    notes_common = (
        "Algorithm 4 data, k = (5, 10, 15, 20, 25), levels eps_i/3, eps_i/2, eps_i drawn at random with equal "
        f"shares (ERRATA MPLDP-2); {REPEATS} repeats (the paper does not say), fresh levels and noise each."
    )
    fig3_claim = (
        "With the increase of privacy budget the error gradually decreases, and OC is superior to BRR (the plain "
        "sum of the levels' estimates), with the overall error decreasing by about 60 %."
    )
    exps = []
    for n in USERS:
        letter = PANEL[n]
        exps.append(
            Experiment(
                paper=PAPER,
                name=f"fig3{letter}",
                title=f"Fig. 3({letter}): NSE of sum (BRR) and OC against the total eps, n = {n:,}",
                claim=fig3_claim,
                settings=_grid([n], EPS_GRID),
                run=run_nse,
                repeats=REPEATS,
                quick_settings=_grid([n], QUICK_EPS),
                quick_repeats=QUICK_REPEATS,
                plot=functools.partial(plot_fig3, name=f"fig3{letter}"),
                check=check_fig3,
                notes=notes_common + " Total eps split over the attributes as in Table 2 (ERRATA MPLDP-3).",
            )
        )
    exps.append(
        Experiment(
            paper=PAPER,
            name="fig3_eps_i",
            title="Fig. 3 variant: NSE of sum and OC against a per-attribute eps_i in [1, 6] (ERRATA MPLDP-5)",
            claim=fig3_claim,
            settings=_grid(USERS, EPS_GRID, "eps_i"),
            run=run_nse,
            repeats=REPEATS,
            quick_settings=_grid(USERS, QUICK_EPS, "eps_i"),
            quick_repeats=QUICK_REPEATS,
            plot=functools.partial(plot_fig3, name="fig3_eps_i", x="eps_i"),
            check=functools.partial(check_fig3, x="eps_i"),
            notes=notes_common
            + " Every attribute gets eps_i (total 5 eps_i). The check reads 'about 60 %' on the perturbation part "
            "(eq. 11), averaged over eps_i; the total includes the level-sampling term (ERRATA MPLDP-1).",
        )
    )
    exps.append(
        Experiment(
            paper=PAPER,
            name="table3",
            title="Table 3: OP's maximum error (log10, mean over the 5 attributes) by iteration",
            claim=(
                "The maximum estimation error decreases as eps increases, and the maximum error keeps decreasing "
                "with the iterations (Theorem 3: it never increases); the convergence is rapid."
            ),
            settings=_grid(USERS, EPS_GRID),
            run=run_op_max_error,
            repeats=REPEATS,
            quick_settings=_grid(USERS, QUICK_EPS),
            quick_repeats=QUICK_REPEATS,
            plot=plot_table3,
            check=check_table3,
            notes=notes_common
            + " OP is an oracle fed the true histogram (ERRATA MPLDP-4); 20 regressions, iteration 1 = least squares;"
            " step = 0.5 x Theorem 3's bound (the bound itself stalls after one step). Tables table3a/b.md and .csv.",
        )
    )
    exps.append(
        Experiment(
            paper=PAPER,
            name="fig4",
            title="Fig. 4: NSE of sum (BRR), OC and OP against the total eps",
            claim=(
                "The MSE of OP rises slightly compared with the minimum MSE (OC) but is still better than BRR; "
                "OC and OP clearly improve on BRR."
            ),
            settings=_grid(USERS, EPS_GRID),
            run=functools.partial(run_nse, with_op=True),
            repeats=REPEATS,
            quick_settings=_grid(USERS, QUICK_EPS),
            quick_repeats=QUICK_REPEATS,
            plot=plot_fig4,
            check=check_fig4,
            notes=notes_common
            + " OP = the 20th regression of Algorithm 3 on the true histogram (ERRATA MPLDP-4); panels a (n = 10,000) "
            "and b (n = 1,000). 'OP (LS)' (its least-squares start) is in the table, not in the figure.",
        )
    )
    return exps
