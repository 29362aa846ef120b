"""Reproduction of Li, Zhu, Zhang, Xie, *Item-Oriented Personalized LDP* (IPRR), Sec. 7.

Five experiments (Table 2) on two datasets (Table 1), one :class:`Experiment` per figure and
dataset (its check tests all of that figure's claims on that dataset):

* ``fig2_zipf`` (panels (a)-(c)) and ``fig2_kosarak`` ((d)-(f)): #1-#3. KRR (at
  :math:`\\varepsilon_{min}`, LDP), URR (:math:`(D_S, D_S, \\varepsilon_{min})`-ULDP) and IPRR,
  each with Norm-Sub (NS) and MLE, against the sample ratio SR in {0.2, ..., 1.0};
  ``LC = 4``, ``NR = 0.5`` and budgets in [0.1, 1] (#1), [1, 10] (#2), [0.1, 10] (#3).
* ``fig3_zipf`` (NR 0.0-0.8) and ``fig3_kosarak`` (NR 0.1-0.9, the range the preprint keeps):
  #4, IPRR against URR at SR = 1, budgets in [0.1, 10].
* ``fig4_zipf`` and ``fig4_kosarak``: #5, IPRR against IDUE opt0/opt1/opt2 (MinID-LDP) with the
  same item budgets and ``NR = 0`` (IDUE has no non-sensitive items), SR 0.1-1.0.

Every panel is drawn once per metric of eq. 25 (MSE, the total squared count error over
``n``, and RE, the summed relative count error): ``fig2a_mse.png``, ``fig2a_re.png``, ...,
``fig3_zipf_mse.png``, ..., ``fig4_kosarak_re.png``, log y.

Data (built once per process, from a fixed seed, so every repeat sees the same dataset):

* Zipf: 100,000 users drawn from the Zipf law of exponent 2 restricted to 20 items
  (:func:`pldp.datasets.zipf_counts`).
* Kosarak: the paper gives each of Kosarak's users one random item of her click-stream and
  keeps the users whose item is among the 100 most frequent (646,510 users). pldp bundles
  only a 36,682-user prefix of Kosarak; the same construction on it keeps about 24,000 users.

One repeat of a setting draws ``round(SR * N)`` of the ``N`` users without replacement (a
multivariate hypergeometric draw on the item counts), simulates each mechanism exactly at the
count level (:meth:`Mechanism.simulate`) and scores NS and MLE on the *same* tally against the
sample's true counts. Item budgets follow :meth:`ItemBudgets.by_frequency` on the whole
dataset's counts (the rarer the item, the smaller its budget; the most frequent ``NR`` share of
the items is non-sensitive).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pldp import metrics
from pldp.budgets import ItemBudgets
from pldp.estimation import estimate
from pldp.experiments.paths import observe, path_of
from pldp.experiments.spec import Check, Experiment
from pldp.mechanisms import IDUE, IPRR, KRR, URR, Mechanism

__all__ = [
    "DATA_SEED",
    "ESTIMATORS",
    "dataset_counts",
    "experiments",
    "mechanisms",
    "method_means",
    "run_repeat",
]

PAPER = "iprr"
#: Seed of the one-off dataset construction (Zipf sample; Kosarak's random item per user).
DATA_SEED = 20240601
ZIPF_USERS, ZIPF_ITEMS, ZIPF_EXPONENT = 100_000, 20, 2.0
KOSARAK_ITEMS = 100
LC = 4
REPEATS = 100
#: Estimator labels of the paper and the :func:`pldp.estimate` methods behind them.
ESTIMATORS: tuple[tuple[str, str], ...] = (("NS", "norm_sub"), ("MLE", "mle"))
DATASET_LABEL = {"zipf": "Zipf", "kosarak": "Kosarak"}

#: Table 2, experiments #1-#3: budget range and the panel letters (Zipf, Kosarak).
FIG2 = {1: (0.1, 1.0, "a", "d"), 2: (1.0, 10.0, "b", "e"), 3: (0.1, 10.0, "c", "f")}
SR_FIG2 = (0.2, 0.4, 0.6, 0.8, 1.0)
SR_FIG4 = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
NR_FIG3 = {
    "zipf": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
    "kosarak": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
}


# ---------------------------------------------------------------------------------- data
def _source(name: str) -> str | None:
    """The full Kosarak file given by ``pldp reproduce --kosarak`` (``PLDP_KOSARAK``), if any."""
    return (os.environ.get("PLDP_KOSARAK") or None) if name == "kosarak" else None


def dataset_counts(name: str) -> np.ndarray:
    """Item counts of dataset ``"zipf"`` or ``"kosarak"``, most frequent item first (cached).

    Kosarak: one uniformly random item per user of :func:`pldp.datasets.real.load_kosarak`
    (the bundled 36,682-user prefix, or the file named by ``PLDP_KOSARAK``), drawn with
    :func:`~pldp.datasets.real.random_item_per_user` seeded with :data:`DATA_SEED`; then only
    the users whose item is among the 100 most frequent such items (ties by index).
    """
    return _dataset_counts(name, _source(name))


@functools.cache
def _dataset_counts(name: str, source: str | None) -> np.ndarray:
    rng = np.random.default_rng(DATA_SEED)
    if name == "zipf":
        from pldp.datasets import zipf_counts

        counts = zipf_counts(ZIPF_USERS, ZIPF_ITEMS, rng, ZIPF_EXPONENT)
    elif name == "kosarak":
        from pldp.datasets import real

        items = real.random_item_per_user(real.load_kosarak(source), rng)
        counts = np.bincount(np.asarray(items, dtype=np.int64))
    else:
        raise ValueError(f"unknown dataset {name!r}; choose 'zipf' or 'kosarak'")
    counts = np.asarray(counts, dtype=np.int64)
    order = np.lexsort((np.arange(counts.size), -counts))  # by count descending, ties by index
    keep = KOSARAK_ITEMS if name == "kosarak" else counts.size
    out = counts[order[:keep]].copy()
    out.setflags(write=False)
    return out


def mechanisms(
    dataset: str, exp: int, eps_min: float, eps_max: float, nr: float, lc: int = LC
) -> tuple[tuple[str, Mechanism], ...]:
    """The mechanisms compared in experiment ``exp`` (Table 2), built once per process.

    #1-#3: KRR at ``eps_min`` (LDP), URR at ``eps_min`` on IPRR's sensitive items, IPRR.
    #4: URR and IPRR. #5: IDUE opt0/opt1/opt2 (MinID-LDP, same item budgets) and IPRR.
    Budgets: :meth:`ItemBudgets.by_frequency` on the whole dataset's counts.
    """
    return _mechanisms(dataset, _source(dataset), exp, eps_min, eps_max, nr, lc)


@functools.cache
def _mechanisms(
    dataset: str, source: str | None, exp: int, eps_min: float, eps_max: float, nr: float, lc: int
) -> tuple[tuple[str, Mechanism], ...]:
    counts = _dataset_counts(dataset, source)
    budgets = ItemBudgets.by_frequency(counts, eps_min, eps_max, lc, nr)
    iprr = ("IPRR", IPRR(budgets))
    if exp in (1, 2, 3):
        return (("KRR", KRR(eps_min, counts.size)), ("URR", URR(eps_min, budgets.sensitive)), iprr)
    if exp == 4:
        return (("URR", URR(eps_min, budgets.sensitive)), iprr)
    if exp == 5:
        return (*((f"IDUE-{m}", IDUE(budgets, m)) for m in ("opt0", "opt1", "opt2")), iprr)
    raise ValueError(f"unknown experiment #{exp}")


def sample_counts(counts: np.ndarray, sr: float, rng: np.random.Generator) -> np.ndarray:
    """Counts of ``round(sr * N)`` users drawn without replacement from the ``N`` users."""
    n = int(counts.sum())
    k = round(sr * n)
    if k >= n:
        return np.asarray(counts, dtype=np.int64)
    return rng.multivariate_hypergeometric(np.asarray(counts, dtype=np.int64), k)


def run_repeat(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat of one setting: sample users, perturb with each mechanism, score NS and MLE."""
    path = path_of(setting)
    counts = dataset_counts(setting["dataset"])
    true = sample_counts(counts, float(setting["sr"]), rng)
    n = int(true.sum())
    rows: list[dict[str, Any]] = []
    mechs = mechanisms(
        setting["dataset"],
        int(setting["exp"]),
        float(setting["eps_min"]),
        float(setting["eps_max"]),
        float(setting["nr"]),
        int(setting.get("lc", LC)),
    )
    for name, mech in mechs:
        tally = observe(mech, true, rng=rng, path=path)
        for label, method in ESTIMATORS:
            est = estimate(mech, tally, method).counts
            rows.append(
                {
                    "method": f"{name}/{label}",
                    "mechanism": name,
                    "estimator": label,
                    "n": n,
                    "mse": metrics.mse(true, est, n),
                    "re": metrics.relative_error(true, est),
                }
            )
    return rows


# ------------------------------------------------------------------------------ settings
def _setting(dataset: str, exp: int, eps_min: float, eps_max: float, nr: float, sr: float) -> dict[str, Any]:
    return {"dataset": dataset, "exp": exp, "eps_min": eps_min, "eps_max": eps_max, "lc": LC, "nr": nr, "sr": sr}


# ------------------------------------------------------------------------------ analysis
def method_means(table: Any, metric: str, by: str) -> Any:
    """Mean of ``metric`` over repeats: a DataFrame indexed by ``by`` with one column per method."""
    return table.groupby([by, "method"])[metric].mean().unstack("method").sort_index()


def _geo(values: Any) -> float:
    """Geometric mean of positive numbers."""
    return float(np.exp(np.mean(np.log(np.asarray(values, dtype=float)))))


def _ratio(m: Any, num: str, den: str) -> float:
    """Geometric mean over the x values of ``mean(num) / mean(den)``."""
    return _geo(m[num] / m[den])


def _verdict(parts: Sequence[tuple[bool, str]]) -> Check:
    return Check(all(ok for ok, _ in parts), "; ".join(f"{'✓' if ok else '✗'} {text}" for ok, text in parts))


#: "By approximately one order of magnitude": we accept a mean MSE ratio of at least 10**0.7 (~5).
ORDER_OF_MAGNITUDE = 10**0.7
#: "Improved significantly": an NS/MLE MSE ratio of at least 2. "Almost indistinguishable": within 20 %.
SIGNIFICANT, INDISTINGUISHABLE = 2.0, 1.2
#: "The results are close to Fig. 2(a)/(d)": IPRR's MSE in #3 within a factor 3 of #1's.
CLOSE = 3.0


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


def check_fig2(table: Any) -> Check:
    """Claims of Sec. 7.2 on experiments #1-#3 of one dataset (Fig. 2 (a)-(c) or (d)-(f))."""
    t = {exp: table[table["exp"] == exp] for exp in FIG2}
    parts: list[tuple[bool, str]] = []
    for exp in FIG2:
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
    w = c = 0
    for exp in FIG2:
        m = method_means(t[exp], "mse", "sr")
        for est, _ in ESTIMATORS:
            w += int((m[f"URR/{est}"] < m[f"KRR/{est}"]).sum())
            c += len(m)
    urr_krr = ", ".join(
        f"{est} {_ratio(method_means(t[1], 'mse', 'sr'), f'KRR/{est}', f'URR/{est}'):.3g}x" for est, _ in ESTIMATORS
    )
    parts.append((w == c, f"URR below KRR (MSE) in {w}/{c} (#, estimator, SR) cells, #1 MSE KRR/URR {urr_krr}"))
    g1, g2 = _gain(t[1], "IPRR"), _gain(t[2], "IPRR")
    parts.append((g1 >= SIGNIFICANT, f"#1 IPRR MLE improves on NS: MSE NS/MLE {g1:.3g}x (need >= 2x)"))
    k1 = _gain(t[1], "KRR")
    parts.append(
        (1 / INDISTINGUISHABLE <= k1 <= INDISTINGUISHABLE, f"#1 KRR NS ~ MLE: MSE NS/MLE {k1:.3g}x (need within 20 %)")
    )
    for metric in ("re", "mse"):
        m = method_means(t[1], metric, "sr")
        down = int((m.iloc[-1] < m.iloc[0]).sum())
        span = ", ".join(f"{k} {m[k].iloc[0]:.3g}->{m[k].iloc[-1]:.3g}" for k in ("IPRR/MLE", "URR/MLE", "KRR/MLE"))
        parts.append(
            (
                down == m.shape[1],
                f"#1 {metric.upper()} falls from SR 0.2 to 1.0 for {down}/{m.shape[1]} methods ({span})",
            )
        )
    parts.append((g2 < g1, f"#2 IPRR MLE-over-NS gain smaller than #1: NS/MLE {g2:.3g}x vs {g1:.3g}x"))
    close = []
    ok_close = True
    for est, _ in ESTIMATORS:
        r = _geo(method_means(t[3], "mse", "sr")[f"IPRR/{est}"] / mse1[f"IPRR/{est}"])
        ok_close &= 1 / CLOSE <= r <= CLOSE
        close.append(f"{est} {r:.3g}x")
    parts.append((ok_close, "#3 close to #1: IPRR MSE #3/#1 " + ", ".join(close) + " (need within 3x)"))
    return _verdict(parts)


def check_fig3(table: Any) -> Check:
    """#4: IPRR beats URR at every NR, and the errors decrease as NR grows."""
    w, c = _wins(table, "IPRR", ("URR",), "nr")
    parts: list[tuple[bool, str]] = []
    mse = method_means(table, "mse", "nr")
    factors = ", ".join(f"{est} {_ratio(mse, f'URR/{est}', f'IPRR/{est}'):.3g}x" for est, _ in ESTIMATORS)
    parts.append((w == c, f"IPRR below URR in {w}/{c} (metric, estimator, NR) cells, MSE URR/IPRR {factors}"))
    for metric in ("mse", "re"):
        m = method_means(table, metric, "nr")
        down = int((m.iloc[-1] < m.iloc[0]).sum())
        steps = int((np.diff(m.to_numpy(), axis=0) < 0).sum())
        span = ", ".join(f"{k} {m[k].iloc[0]:.3g}->{m[k].iloc[-1]:.3g}" for k in m.columns)
        parts.append(
            (
                down == m.shape[1],
                f"{metric.upper()} lower at the largest NR than at the smallest for {down}/{m.shape[1]} methods "
                f"({span}, {steps}/{(len(m) - 1) * m.shape[1]} steps down)",
            )
        )
    return _verdict(parts)


def check_fig4(table: Any) -> Check:
    """#5: Zipf: IPRR beats IDUE with NS and MLE. Kosarak: IDUE beats IPRR with NS, not with MLE.

    Judged per (metric, IDUE variant, SR) cell on the mean MSE and RE.
    """
    dataset = str(table["dataset"].iloc[0])
    means = {metric: method_means(table, metric, "sr") for metric in ("mse", "re")}
    parts: list[tuple[bool, str]] = []
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


# ------------------------------------------------------------------------------ figures
def _plot(
    table: Any, directory: Path, *, panels: tuple[tuple[int | None, str, str], ...], x: str, xlabel: str
) -> list[Path]:
    """One PNG per panel and metric, ``<stem>_mse.png`` and ``<stem>_re.png`` (log y).

    ``panels`` holds ``(exp, stem, title)``; ``exp`` selects the table's rows (None: all).
    """
    from pldp.experiments.plotting import line_panel

    out = []
    for exp, stem, title in panels:
        part = table if exp is None else table[table["exp"] == exp]
        for metric, label in (("mse", "MSE"), ("re", "RE")):
            path = Path(directory) / f"{stem}_{metric}.png"
            out.append(line_panel(part, path, x=x, y=metric, title=title, xlabel=xlabel, ylabel=label))
    return out


# --------------------------------------------------------------------------- experiments
DATA_NOTE = (
    "Kosarak: unless --kosarak names the full 990,002-user file, the bundled 36,682-user prefix: one random "
    "item per user (fixed seed), then the users whose item is among the 100 most frequent (24,088 users, "
    "against the paper's 646,510). Zipf: one fixed sample of 100,000 users over 20 items. "
    "Each repeat samples round(SR*N) users without replacement; MSE and RE (eq. 25) are on that sample's counts. "
    "Each panel is drawn once per metric (<panel>_mse.png, <panel>_re.png)."
)

FIG2_CLAIM = (
    "(#1, high privacy) IPRR outperforms URR and KRR by approximately one order of magnitude; as n grows the "
    "loss decreases; for KRR NS and MLE are almost indistinguishable while for IPRR MLE improves significantly "
    "over NS. (#2, low privacy) IPRR also performs better than the others; the improvement of MLE over NS is "
    "less significant than in the high privacy regime. (#3, hybrid) the results are close to #1. Overall URR "
    "performs better than KRR."
)


def experiments() -> list[Experiment]:
    """The panels of Fig. 2-4 of Li et al.: one experiment per figure and dataset."""
    exps: list[Experiment] = []
    for dataset in ("zipf", "kosarak"):
        label = DATASET_LABEL[dataset]
        panels = tuple(
            (
                exp,
                f"fig2{letters[0] if dataset == 'zipf' else letters[1]}",
                f"Fig. 2({letters[0] if dataset == 'zipf' else letters[1]}) {label} #{exp}: "
                f"ε ∈ [{lo:g}, {hi:g}], NR=0.5",
            )
            for exp, (lo, hi, *letters) in FIG2.items()
        )
        exps.append(
            Experiment(
                paper=PAPER,
                name=f"fig2_{dataset}",
                title=f"Fig. 2 {'(a)-(c)' if dataset == 'zipf' else '(d)-(f)'}: {label}, #1-#3, KRR/URR/IPRR vs SR",
                claim=FIG2_CLAIM,
                settings=[
                    _setting(dataset, exp, lo, hi, 0.5, sr) for exp, (lo, hi, *_) in FIG2.items() for sr in SR_FIG2
                ],
                run=run_repeat,
                repeats=REPEATS,
                quick_repeats=5,
                plot=functools.partial(_plot, panels=panels, x="sr", xlabel="sample ratio SR"),
                check=check_fig2,
                notes=DATA_NOTE,
            )
        )
    for dataset in ("zipf", "kosarak"):
        label = DATASET_LABEL[dataset]
        nrs = NR_FIG3[dataset]
        title = f"Fig. 3 {label} #4: IPRR vs URR, ε ∈ [0.1, 10], SR=1"
        exps.append(
            Experiment(
                paper=PAPER,
                name=f"fig3_{dataset}",
                title=title,
                claim="As |D_N| (NR) increases, IPRR outperforms URR, and all metrics decrease.",
                settings=[_setting(dataset, 4, 0.1, 10.0, nr, 1.0) for nr in nrs],
                run=run_repeat,
                repeats=REPEATS,
                quick_repeats=5,
                plot=functools.partial(
                    _plot, panels=((None, f"fig3_{dataset}", title),), x="nr", xlabel="non-sensitive ratio NR"
                ),
                check=check_fig3,
                notes=DATA_NOTE
                + (
                    " The Kosarak NR range 0.1-0.9 is the preprint's Table 2 (the journal version lost it)."
                    if dataset == "kosarak"
                    else ""
                ),
            )
        )
    for dataset in ("zipf", "kosarak"):
        label = DATASET_LABEL[dataset]
        title = f"Fig. 4 {label} #5: IPRR vs IDUE, ε ∈ [0.1, 10], NR=0"
        claim = (
            "IPRR performs better than IDUE (opt0, opt1, opt2) over Zipf with both the NS and the MLE method."
            if dataset == "zipf"
            else "Over Kosarak IDUE outperforms IPRR with the NS method, but under MLE IPRR outperforms IDUE."
        )
        exps.append(
            Experiment(
                paper=PAPER,
                name=f"fig4_{dataset}",
                title=title,
                claim=claim,
                settings=[_setting(dataset, 5, 0.1, 10.0, 0.0, sr) for sr in SR_FIG4],
                run=run_repeat,
                repeats=REPEATS,
                quick_settings=[_setting(dataset, 5, 0.1, 10.0, 0.0, sr) for sr in (0.1, 0.4, 0.7, 1.0)],
                quick_repeats=5,
                plot=functools.partial(
                    _plot, panels=((None, f"fig4_{dataset}", title),), x="sr", xlabel="sample ratio SR"
                ),
                check=check_fig4,
                notes=DATA_NOTE
                + " IDUE under MinID-LDP with IPRR's item budgets (4 levels); its unary MLE is the count-based "
                "binomial likelihood.",
            )
        )
    return exps
