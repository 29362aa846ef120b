"""IPRR experiments: the paper's claims about Fig. 2-4, tested on the tidy tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp.experiments.iprr.runs import ESTIMATORS
from pldp.experiments.spec import Check

__all__ = ["check_fig2", "check_fig3", "check_fig4", "method_means"]

#: Table 2 experiments of Fig. 2 (#1-#3).
FIG2_EXPS = (1, 2, 3)
#: "By approximately one order of magnitude": we accept a mean MSE ratio of at least 10**0.7 (~5).
ORDER_OF_MAGNITUDE = 10**0.7
#: "Improved significantly": an NS/MLE MSE ratio of at least 2. "Almost indistinguishable": within 20 %.
SIGNIFICANT, INDISTINGUISHABLE = 2.0, 1.2
#: "The results are close to Fig. 2(a)/(d)": IPRR's MSE in #3 within a factor 3 of #1's.
CLOSE = 3.0

#: One part of a verdict: does it hold, and the numbers.
Part = tuple[bool, str]


def method_means(table: Any, metric: str, by: str) -> Any:
    """Mean of ``metric`` over repeats: a DataFrame indexed by ``by`` with one column per method."""
    return table.groupby([by, "method"])[metric].mean().unstack("method").sort_index()


def _geo(values: Any) -> float:
    """Geometric mean of positive numbers."""
    return float(np.exp(np.mean(np.log(np.asarray(values, dtype=float)))))


def _ratio(m: Any, num: str, den: str) -> float:
    """Geometric mean over the x values of ``mean(num) / mean(den)``."""
    return _geo(m[num] / m[den])


def _verdict(parts: Sequence[Part]) -> Check:
    return Check(all(ok for ok, _ in parts), "; ".join(f"{'✓' if ok else '✗'} {text}" for ok, text in parts))


def _wins(table: Any, winner: str, losers: Sequence[str], by: str) -> tuple[int, int]:
    """``(wins, cells)``: cells (metric x estimator x ``by`` value) where ``winner`` has the smallest mean."""
    wins = cells = 0
    for metric in ("mse", "re"):
        m = method_means(table, metric, by)
        for est in ESTIMATORS:
            best = np.min([m[f"{lo}/{est[0]}"] for lo in losers], axis=0)
            wins += int((m[f"{winner}/{est[0]}"] < best).sum())
            cells += len(m)
    return wins, cells


def _gain(table: Any, mech: str) -> float:
    """NS/MLE MSE ratio of ``mech`` (geometric mean over SR)."""
    return _ratio(method_means(table, "mse", "sr"), f"{mech}/NS", f"{mech}/MLE")


def _falls(m: Any) -> tuple[int, int]:
    """``(methods, of)``: how many of the methods (columns) are lower at the last x than at the first."""
    return int((m.iloc[-1] < m.iloc[0]).sum()), m.shape[1]


# ---------------------------------------------------------------------------------- Fig. 2
def _fig2_iprr_best(t: dict[int, Any]) -> list[Part]:
    """IPRR below URR and KRR in #1-#3; in #1 by about an order of magnitude."""
    parts: list[Part] = []
    for exp in FIG2_EXPS:
        w, c = _wins(t[exp], "IPRR", ("URR", "KRR"), "sr")
        parts.append((w == c, f"#{exp} IPRR below URR and KRR in {w}/{c} (metric, estimator, SR) cells"))
    mse1 = method_means(t[1], "mse", "sr")
    factors = []
    ok_order = True
    for est, _ in ESTIMATORS:
        r_urr, r_krr = _ratio(mse1, f"URR/{est}", f"IPRR/{est}"), _ratio(mse1, f"KRR/{est}", f"IPRR/{est}")
        ok_order &= min(r_urr, r_krr) >= ORDER_OF_MAGNITUDE
        factors.append(f"{est} URR/IPRR {r_urr:.3g}x, KRR/IPRR {r_krr:.3g}x")
    parts.append((ok_order, "#1 by ~an order of magnitude (need MSE ratio >= 5): " + " / ".join(factors)))
    return parts


def _fig2_urr_beats_krr(t: dict[int, Any]) -> Part:
    """Overall URR performs better than KRR (MSE, every cell of #1-#3)."""
    w = c = 0
    for exp in FIG2_EXPS:
        m = method_means(t[exp], "mse", "sr")
        for est, _ in ESTIMATORS:
            w += int((m[f"URR/{est}"] < m[f"KRR/{est}"]).sum())
            c += len(m)
    mse1 = method_means(t[1], "mse", "sr")
    urr_krr = ", ".join(f"{est} {_ratio(mse1, f'KRR/{est}', f'URR/{est}'):.3g}x" for est, _ in ESTIMATORS)
    return w == c, f"URR below KRR (MSE) in {w}/{c} (#, estimator, SR) cells, #1 MSE KRR/URR {urr_krr}"


def _fig2_estimators(t: dict[int, Any]) -> tuple[list[Part], Part]:
    """#1: MLE improves IPRR over NS and KRR's NS and MLE coincide; #2: the first gain is smaller."""
    g1, g2 = _gain(t[1], "IPRR"), _gain(t[2], "IPRR")
    k1 = _gain(t[1], "KRR")
    return [
        (g1 >= SIGNIFICANT, f"#1 IPRR MLE improves on NS: MSE NS/MLE {g1:.3g}x (need >= 2x)"),
        (1 / INDISTINGUISHABLE <= k1 <= INDISTINGUISHABLE, f"#1 KRR NS ~ MLE: MSE NS/MLE {k1:.3g}x (need within 20 %)"),
    ], (g2 < g1, f"#2 IPRR MLE-over-NS gain smaller than #1: NS/MLE {g2:.3g}x vs {g1:.3g}x")


def _fig2_loss_falls_with_n(t: dict[int, Any]) -> list[Part]:
    """#1: the loss decreases as n (SR) grows, for RE and for MSE."""
    parts: list[Part] = []
    for metric in ("re", "mse"):
        m = method_means(t[1], metric, "sr")
        down, of = _falls(m)
        span = ", ".join(f"{k} {m[k].iloc[0]:.3g}->{m[k].iloc[-1]:.3g}" for k in ("IPRR/MLE", "URR/MLE", "KRR/MLE"))
        parts.append((down == of, f"#1 {metric.upper()} falls from SR 0.2 to 1.0 for {down}/{of} methods ({span})"))
    return parts


def _fig2_hybrid_close(t: dict[int, Any]) -> Part:
    """#3 (hybrid budgets) is close to #1: IPRR's MSE within a factor :data:`CLOSE`."""
    mse1, mse3 = method_means(t[1], "mse", "sr"), method_means(t[3], "mse", "sr")
    close = []
    ok_close = True
    for est, _ in ESTIMATORS:
        r = _geo(mse3[f"IPRR/{est}"] / mse1[f"IPRR/{est}"])
        ok_close &= 1 / CLOSE <= r <= CLOSE
        close.append(f"{est} {r:.3g}x")
    return ok_close, "#3 close to #1: IPRR MSE #3/#1 " + ", ".join(close) + " (need within 3x)"


def check_fig2(table: Any) -> Check:
    """Claims of Sec. 7.2 on experiments #1-#3 of one dataset (Fig. 2 (a)-(c) or (d)-(f))."""
    t = {exp: table[table["exp"] == exp] for exp in FIG2_EXPS}
    gains, smaller_in_2 = _fig2_estimators(t)
    parts = [
        *_fig2_iprr_best(t),
        _fig2_urr_beats_krr(t),
        *gains,
        *_fig2_loss_falls_with_n(t),
        smaller_in_2,
        _fig2_hybrid_close(t),
    ]
    return _verdict(parts)


# ---------------------------------------------------------------------------------- Fig. 3
def check_fig3(table: Any) -> Check:
    """#4: IPRR beats URR at every NR, and the errors decrease as NR grows."""
    w, c = _wins(table, "IPRR", ("URR",), "nr")
    parts: list[Part] = []
    mse = method_means(table, "mse", "nr")
    factors = ", ".join(f"{est} {_ratio(mse, f'URR/{est}', f'IPRR/{est}'):.3g}x" for est, _ in ESTIMATORS)
    parts.append((w == c, f"IPRR below URR in {w}/{c} (metric, estimator, NR) cells, MSE URR/IPRR {factors}"))
    for metric in ("mse", "re"):
        m = method_means(table, metric, "nr")
        down, of = _falls(m)
        steps = int((np.diff(m.to_numpy(), axis=0) < 0).sum())
        span = ", ".join(f"{k} {m[k].iloc[0]:.3g}->{m[k].iloc[-1]:.3g}" for k in m.columns)
        parts.append(
            (
                down == of,
                f"{metric.upper()} lower at the largest NR than at the smallest for {down}/{of} methods "
                f"({span}, {steps}/{(len(m) - 1) * of} steps down)",
            )
        )
    return _verdict(parts)


# ---------------------------------------------------------------------------------- Fig. 4
def check_fig4(table: Any) -> Check:
    """#5: Zipf: IPRR beats IDUE with NS and MLE. Kosarak: IDUE beats IPRR with NS, not with MLE.

    Judged per (metric, IDUE variant, SR) cell on the mean MSE and RE.
    """
    dataset = str(table["dataset"].iloc[0])
    means = {metric: method_means(table, metric, "sr") for metric in ("mse", "re")}
    parts: list[Part] = []
    for est, _ in ESTIMATORS:
        idue = [f"IDUE-{m}/{est}" for m in ("opt0", "opt1", "opt2")]
        ratios = ", ".join(f"{k.split('/')[0][5:]} {_ratio(means['mse'], k, f'IPRR/{est}'):.3g}x" for k in idue)
        wins = {metric: int(sum((m[f"IPRR/{est}"] < m[k]).sum() for k in idue)) for metric, m in means.items()}
        cells = len(means["mse"]) * len(idue)
        if dataset == "kosarak" and est == "NS":
            ok = sum(wins.values()) == 0
            text = f"NS: IDUE below IPRR in MSE {cells - wins['mse']}/{cells}, RE {cells - wins['re']}/{cells}"
        else:
            ok = sum(wins.values()) == 2 * cells
            text = f"{est}: IPRR below IDUE in MSE {wins['mse']}/{cells}, RE {wins['re']}/{cells}"
        parts.append((ok, f"{text} (variant, SR) cells, MSE IDUE/IPRR {ratios}"))
    return _verdict(parts)
