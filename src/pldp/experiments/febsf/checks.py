"""PLDP-FEBSF experiments: the paper's claims about Figs. 2-8, tested on the tidy tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp.experiments.febsf.runs import AUEM, AUEM_NS, DATASETS, EM_PAPER, EMOA, LABEL, PBP_RANDOM, PBP_TRUE, RCF_NS
from pldp.experiments.spec import Check

__all__ = ["check_fig2", "check_fig3_4", "check_fig5_6", "check_fig7_8"]

#: One part of a verdict: the numbers, and whether the claim holds (``None``: information only).
Part = tuple[str, bool | None]
#: Methods given their budgets in the clear.
CLEAR = ("RCF", "APLDP")
#: Not methods of the paper: left out of "errors grow with |D|".
EXTRA = frozenset({AUEM_NS, RCF_NS, EM_PAPER})


def _means(table: Any, keys: Sequence[str], metric: str) -> dict[tuple, float]:
    """Mean of ``metric`` over repeats (failures ignored) per ``keys`` tuple."""
    g = table.groupby(list(keys), sort=True)[metric].mean()
    return {k if isinstance(k, tuple) else (k,): float(v) for k, v in g.items()}


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _fmts(values: Sequence[float]) -> str:
    return ", ".join(_fmt(v) for v in values)


def _verdict(parts: list[Part], table: Any) -> Check:
    """All claims must hold; a part with ``None`` is information only. Failed estimates are named."""
    ok = all(a for _, a in parts if a is not None)
    tags = {True: "yes", False: "NO", None: "info"}
    return Check(ok, "; ".join(f"{txt} [{tags[a]}]" for txt, a in parts) + _failures(table))


def _failures(table: Any) -> str:
    if "failed" not in table.columns:
        return ""
    bad = table[table["failed"].astype(bool)]
    if not len(bad):
        return ""
    return f" ({len(bad)} of {len(table)} estimates failed: {bad.groupby('method').size().to_dict()})"


def _present(table: Any) -> list[tuple[str, int]]:
    names = set(table["dataset"].unique())
    return [(ds, d) for ds, d in DATASETS if ds in names] + [
        (ds, int(table.loc[table["dataset"] == ds, "d"].iloc[0])) for ds in sorted(names) if ds not in dict(DATASETS)
    ]


def _pair_ratio(means: dict[tuple, float], key: tuple, a: str, b: str) -> float:
    return means[(*key, a)] / means[(*key, b)]


def _below(ratios: Sequence[float]) -> str:
    """``min..max (below 1 in k/n)``."""
    return f"{_fmt(min(ratios))}..{_fmt(max(ratios))} (below 1 in {sum(v < 1 for v in ratios)}/{len(ratios)})"


# ----------------------------------------------------------------------------- Fig. 2
def _falls_steeply(xs: list[float], ys: np.ndarray, name: str) -> Part:
    """Decreasing (overall, and most steps down) and steep below 0.4 (most of the fall by 0.4)."""
    drops = np.diff(ys)
    monotone = int(np.sum(drops < 0))
    lo, hi = ys[0], ys[-1]
    i04 = int(np.argmin(np.abs(np.array(xs) - 0.4)))
    share = (lo - ys[i04]) / (lo - hi) if lo > hi else float("nan")
    dec = hi < lo and monotone >= 0.7 * len(drops)
    steep = bool(share >= 0.5)
    return (
        f"{name}: {_fmt(lo)} at eps_p={xs[0]:g} -> {_fmt(hi)} at {xs[-1]:g} ({lo / hi:.1f}x), "
        f"{monotone}/{len(drops)} steps down, {100 * share:.0f}% of the fall by eps_p={xs[i04]:g}",
        dec and steep,
    )


def check_fig2(table: Any) -> Check:
    """Fig. 2: AUEM's MSE and MAE fall as eps_p grows, steeply below 0.4."""
    parts = []
    for metric in ("mse", "mae"):
        means = _means(table, ["dataset", "eps_p"], metric)
        for ds, _ in _present(table):
            xs = sorted(e for (name, e) in means if name == ds)
            if len(xs) >= 3:
                ys = np.array([means[(ds, e)] for e in xs])
                parts.append(_falls_steeply(xs, ys, f"{LABEL.get(ds, ds)} {metric.upper()}"))
    return _verdict(parts, table)


# -------------------------------------------------------------------------- Figs. 3-4
def _beat_ppda(m: dict[tuple, float], sets: list[tuple[str, int]], tag: str) -> Part:
    """AUEM and EMOA beat PPDA on every dataset."""
    r = {x: [_pair_ratio(m, (ds,), x, "PPDA") for ds, _ in sets] for x in (AUEM, EMOA)}
    return (
        f"{tag} AUEM/PPDA {_fmts(r[AUEM])}; EMOA/PPDA {_fmts(r[EMOA])} (Job, Education, Country)",
        all(v < 1 for v in (*r[AUEM], *r[EMOA])),
    )


def _clear_budgets(m: dict[tuple, float], sets: list[tuple[str, int]], tag: str, methods: set[str]) -> list[Part]:
    """RCF and APLDP (budgets in the clear) beat AUEM and EMOA; EMOA comes close to them."""
    clear = [c for c in CLEAR if c in methods]
    best = {ds: min(m[(ds, c)] for c in clear) for ds, _ in sets}
    worst = {ds: max(m[(ds, c)] for c in clear) for ds, _ in sets}
    close = [m[(ds, EMOA)] / best[ds] for ds, _ in sets]
    parts: list[Part] = [
        (
            f"{tag} RCF, APLDP below AUEM and EMOA: AUEM/max(RCF,APLDP) "
            f"{_fmts([m[(ds, AUEM)] / worst[ds] for ds, _ in sets])}, EMOA/max(RCF,APLDP) "
            f"{_fmts([m[(ds, EMOA)] / worst[ds] for ds, _ in sets])}",
            all(worst[ds] < min(m[(ds, AUEM)], m[(ds, EMOA)]) for ds, _ in sets),
        ),
        (f"{tag} EMOA close to RCF/APLDP (within 2x): EMOA/min(RCF,APLDP) {_fmts(close)}", all(v < 2 for v in close)),
    ]
    if RCF_NS in methods:  # not a claim of the paper: the comparison with both on the simplex
        ratios = [_pair_ratio(m, (ds,), EMOA, RCF_NS) for ds, _ in sets]
        parts.append((f"{tag} with both projected, EMOA/(RCF + Norm-Sub) {_fmts(ratios)}", None))
    return parts


def _emoa_improves(m: dict[tuple, float], sets: list[tuple[str, int]], tag: str, methods: set[str]) -> list[Part]:
    """EMOA improves AUEM by at least 30 % (and, for information, EMOA against AUEM + Norm-Sub)."""
    imp = [1 - m[(ds, EMOA)] / m[(ds, AUEM)] for ds, _ in sets]
    parts: list[Part] = [
        (f"{tag} EMOA improves AUEM by {', '.join(f'{100 * v:.0f}%' for v in imp)}", all(v >= 0.3 for v in imp))
    ]
    if AUEM_NS in methods:  # not a claim: how much of EMOA's gain the projection alone gives
        ratios = [_pair_ratio(m, (ds,), EMOA, AUEM_NS) for ds, _ in sets]
        parts.append((f"{tag} EMOA/(AUEM + Norm-Sub) {_fmts(ratios)}", None))
    return parts


def _grow_with_d(m: dict[tuple, float], sets: list[tuple[str, int]], tag: str, methods: set[str]) -> list[Part]:
    """Errors grow with |D| (per item); for information, the sum over the items."""
    paper_methods = sorted(methods - EXTRA)
    grow = [(meth, bool(np.all(np.diff([m[(ds, meth)] for ds, _ in sets]) > 0))) for meth in paper_methods]
    n_grow = sum(g for _, g in grow)
    summed = [meth for meth in paper_methods if np.all(np.diff([m[(ds, meth)] * d for ds, d in sets]) > 0)]
    return [
        (
            f"{tag} grows with |D| for {n_grow}/{len(grow)} methods"
            + (f" ({', '.join(x for x, g in grow if g)})" if n_grow else ""),
            n_grow == len(grow),
        ),
        (f"{tag} summed over items grows with |D| for {', '.join(summed) or 'none'}", None),
    ]


def _paper_em_worse(m: dict[tuple, float], sets: list[tuple[str, int]], tag: str) -> Part:
    """ERRATA FEBSF-4: the printed EM is worse than AUEM."""
    rp = [_pair_ratio(m, (ds,), EM_PAPER, AUEM) for ds, _ in sets]
    return f"{tag} EM (paper)/AUEM {_fmts(rp)} (worse, ERRATA FEBSF-4)", all(v > 1 for v in rp)


def check_fig3_4(table: Any) -> Check:
    """Figs. 3-4: the comparisons with PPDA, RCF and APLDP, EMOA's gain, |D|, and the printed EM."""
    parts: list[Part] = []
    sets = _present(table)
    methods = set(table["method"].unique())
    for metric in ("mse", "mae"):
        m = _means(table, ["dataset", "method"], metric)
        tag = metric.upper()
        if "PPDA" in methods:
            parts.append(_beat_ppda(m, sets, tag))
        if any(c in methods for c in CLEAR):
            parts += _clear_budgets(m, sets, tag, methods)
        parts += _emoa_improves(m, sets, tag, methods)
        parts += _grow_with_d(m, sets, tag, methods)
        if EM_PAPER in methods:
            parts.append(_paper_em_worse(m, sets, tag))
    return _verdict(parts, table)


# -------------------------------------------------------------------------- Figs. 5-8
def _kinds(table: Any) -> list[str]:
    """The level-share kinds in the table, uniform first."""
    return [k for k in ("uniform", "power-law") if k in set(table["rho"])]


def _power_law_higher(m: dict[tuple, float], sets: list, methods: Sequence[str], tag: str) -> Part:
    pairs = [(m[(ds, "power-law", x)] / m[(ds, "uniform", x)]) for ds, _ in sets for x in methods]
    higher = sum(r > 1 for r in pairs)
    return (
        f"{tag} power-law/uniform ratio {_fmt(min(pairs))}..{_fmt(max(pairs))}, higher in {higher}/{len(pairs)} cases",
        higher >= 0.75 * len(pairs),
    )


def _beat_pbp(m: dict[tuple, float], sets: list, kinds: list[str], tag: str, pbps: list[str]) -> list[Part]:
    """AUEM and EMOA generally (in 3 of 4 cases) beat PBP."""
    parts: list[Part] = []
    for pbp in pbps:
        for ours in (AUEM, EMOA):
            r = [m[(ds, k, ours)] / m[(ds, k, pbp)] for ds, _ in sets for k in kinds]
            parts.append((f"{tag} {ours.split()[0]}/{pbp} {_below(r)}", sum(v < 1 for v in r) >= 0.75 * len(r)))
    return parts


def _emoa_gain_over_pbp(m: dict[tuple, float], sets: list, pbps: list[str]) -> list[Part]:
    """EMOA improves PBP's MSE a lot under uniform shares (paper: 87 %)."""
    parts: list[Part] = []
    for pbp in pbps:
        imp = [1 - m[(ds, "uniform", EMOA)] / m[(ds, "uniform", pbp)] for ds, _ in sets]
        parts.append(
            (
                f"MSE: EMOA improves on {pbp} under uniform rho by "
                f"{', '.join(f'{100 * v:.0f}%' for v in imp)} (paper: 87% in Fig. 5(b))",
                max(imp) >= 0.5,
            )
        )
    return parts


def check_fig5_6(table: Any) -> Check:
    """Figs. 5-6: AUEM and EMOA beat PBP; EMOA's gain under uniform shares; power-law is worse."""
    parts: list[Part] = []
    sets, kinds = _present(table), _kinds(table)
    methods = set(table["method"].unique())
    pbps = [x for x in (PBP_TRUE, PBP_RANDOM) if x in methods]
    for metric in ("mse", "mae"):
        m = _means(table, ["dataset", "rho", "method"], metric)
        tag = metric.upper()
        parts += _beat_pbp(m, sets, kinds, tag, pbps)
        if metric == "mse" and "uniform" in kinds:
            parts += _emoa_gain_over_pbp(m, sets, pbps)
        if len(kinds) == 2:
            parts.append(_power_law_higher(m, sets, sorted(methods), tag))
    return _verdict(parts, table)


def _country_lowest(m: dict[tuple, float], kinds: list[str], methods: set[str], tag: str) -> Part:
    lower = [m[("country", k, x)] < min(m[("education", k, x)], m[("job", k, x)]) for k in kinds for x in methods]
    return f"{tag} Country lowest of the three datasets in {sum(lower)}/{len(lower)} cases", all(lower)


def check_fig7_8(table: Any) -> Check:
    """Figs. 7-8: AUEM and EMOA beat PPDA; EMOA close to RCF, APLDP; power-law worse; Country lowest."""
    parts: list[Part] = []
    sets, kinds = _present(table), _kinds(table)
    methods = set(table["method"].unique())
    cases = [(ds, k) for ds, _ in sets for k in kinds]
    clear = [c for c in CLEAR if c in methods]
    for metric in ("mse", "mae"):
        m = _means(table, ["dataset", "rho", "method"], metric)
        tag = metric.upper()
        if "PPDA" in methods:
            for ours in (AUEM, EMOA):
                r = [m[(ds, k, ours)] / m[(ds, k, "PPDA")] for ds, k in cases]
                parts.append((f"{tag} {ours.split()[0]}/PPDA {_below(r)}", all(v < 1 for v in r)))
        if clear:
            r = [m[(ds, k, EMOA)] / min(m[(ds, k, c)] for c in clear) for ds, k in cases]
            parts.append(
                (
                    f"{tag} EMOA/min(RCF,APLDP) {_fmt(min(r))}..{_fmt(max(r))} "
                    f"(within 2x in {sum(v < 2 for v in r)}/{len(r)})",
                    sum(v < 2 for v in r) > len(r) / 2,
                )
            )
        if len(kinds) == 2:
            parts.append(_power_law_higher(m, sets, sorted(methods), tag))
        if {"country", "education", "job"} <= set(dict(sets)):
            parts.append(_country_lowest(m, kinds, methods, tag))
    return _verdict(parts, table)
