"""IDUE reproduction (Gu et al., ICDE 2020, Sec. VII): the claims of Figs. 2-8 at reduced scale.

Each test runs a few seeded repeats of the run functions of ``pldp.experiments.idue`` (same data,
budgets, mechanisms and estimators as ``pldp reproduce idue``) and asserts what the full run
finds (docs/reproduction/idue.md), with thresholds taken from it; every claim must hold by K
standard errors of the paired error ratio it is made on (``tests.papers._stats``). Noisy RE claims
are made on the ratio pooled over the cells of a figure.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from pldp import ItemBudgets, theory  # noqa: E402
from pldp.experiments import idue  # noqa: E402
from pldp.experiments.runner import run_experiments, write_outputs  # noqa: E402
from tests.papers._stats import K, pooled_ratio, ratio_se, ratios  # noqa: E402


def _run(run, settings: list[dict], repeats: int, key: int, **options) -> object:
    """Tidy rows of ``repeats`` seeded repeats of every setting (the setting's keys added)."""
    rows = []
    for i, setting in enumerate(settings):
        for r in range(repeats):
            rng = np.random.default_rng(np.random.SeedSequence(2020, spawn_key=(key, i, r)))
            rows += [{**setting, "repeat": r, **row} for row in run(dict(setting), rng, **options)]
    return pd.DataFrame(rows)


def _means(table: object, y: str, keys: list[str]) -> object:
    return table.groupby([*keys, "method"])[y].mean().unstack("method")  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------- Fig. 2
def test_fig2_empirical_mse_matches_eq7_and_idue_beats_ldp() -> None:
    settings = [{"dataset": d, "epsilon": e} for d in ("powerlaw", "uniform") for e in (1.0, 4.0)]
    t = _run(idue.run_single, settings, 6, 2, methods=idue.FIG2_METHODS, theory=True)
    # the eq. 7 column is n * expected_l2 under the fixed-population model
    assert set(t["method"]) == set(idue.FIG2_METHODS) and (t["mse_theory"] <= t["mse_worst"] + 1e-9).all()
    # empirical mean within K standard errors (theoretical sd of one repeat's MSE) of eq. 7
    g = t.groupby(["dataset", "epsilon", "method"])
    z = g.apply(lambda p: (p["mse"] - p["mse_theory"]).mean() / np.sqrt((p["mse_sd"] ** 2).mean() / len(p)))
    assert (z.abs() < K).all(), z
    pooled = t["mse"].sum() / t["mse_theory"].sum()  # 0.99, SE 0.009
    assert abs(pooled - 1) < K * np.sqrt((t["mse_sd"] ** 2).sum()) / t["mse_theory"].sum()
    th = _means(t, "mse_theory", ["dataset", "epsilon"])
    # IDUE opt0 (MinID-LDP) beats RAPPOR and OUE (LDP at the smallest budget) by >= 1.4x (full run: >= 1.51x)
    assert (th[["RAPPOR", "OUE"]].min(axis=1) > 1.4 * th["IDUE-opt0"]).all()
    # opt0 <= opt1, opt2 on the data's eq. 7 MSE and on the worst-case objective
    assert (th["IDUE-opt0"] <= th[["IDUE-opt1", "IDUE-opt2"]].min(axis=1)).all()
    w = _means(t, "mse_worst", ["dataset", "epsilon"])
    assert (w["IDUE-opt0"] <= w[["IDUE-opt1", "IDUE-opt2"]].min(axis=1) + 1e-9).all()
    # empirically too, pooled over the four cells: 1.61x and 1.49x (SE 0.05, 0.03)
    for ldp in ("RAPPOR", "OUE"):
        r, se = pooled_ratio(t, ldp, "IDUE-opt0", ["dataset", "epsilon"])
        assert r - K * se > 1.2
    assert idue.check_theory(t).agree


def test_fig2_theory_column_is_n_times_expected_l2() -> None:
    rng = np.random.default_rng(3)
    true = idue.single_counts("powerlaw", rng)
    n = int(true.sum())
    budgets = ItemBudgets.random_levels(true.size, 2.0, rng)
    mech = idue.unary("IDUE-opt1", budgets)
    var = n * n * theory.item_variance(mech, true / n, n, model="fixed")
    assert np.isclose(var.sum() / n, n * theory.expected_l2(mech, true / n, n, model="fixed"))
    assert n == 100_000 and true.size == 100 and true[0] > true[-1]


# ----------------------------------------------------------------------------- Figs. 3-4
def test_fig3_idue_has_smallest_mse_and_re_on_retail_and_kosarak() -> None:
    settings = [{"dataset": d, "epsilon": e} for d in idue.SINGLE_DATASETS for e in (1.0, 2.0, 4.0)]
    t = _run(idue.run_single, settings, 6, 3)
    t["cell"] = t["dataset"] + t["epsilon"].astype(str)
    # MSE: IDUE about 1.6x below OUE (full run 1.55-1.63x), OUE below RAPPOR, in every cell
    assert all(r - K * se > 1.4 for r, se in ratios(t, "OUE", "IDUE", "cell").values())
    assert all(r - K * se > 1 for r, se in ratios(t, "RAPPOR", "OUE", "cell").values())
    # RE(20) is much noisier (full run, 10 repeats: IDUE smallest in every cell, by 1.18-1.89x over
    # OUE); with 6 repeats a cell's SE is 0.1-0.3, so the claim is made pooled over the six cells
    for ldp in ("OUE", "RAPPOR"):
        r, se = pooled_ratio(t, ldp, "IDUE", ["cell"], "re")
        assert r - K * se > 1, (ldp, r, se)


def test_fig4_idue_has_smallest_re_for_every_k() -> None:
    settings = [{"dataset": d, "epsilon": idue.FIG4_EPS} for d in idue.SINGLE_DATASETS]
    t = _run(idue.run_single, settings, 6, 4, ks=(20, 50, 100, 200))
    # full run (10 repeats): >= 1.21x everywhere; pooled over the eight cells here (1.29x, 1.46x)
    for ldp in ("OUE", "RAPPOR"):
        r, se = pooled_ratio(t, ldp, "IDUE", ["dataset", "k"], "re")
        assert r - K * se > 1.1, (ldp, r, se)


# --------------------------------------------------------------------------------- Fig. 5
def test_fig5_gain_is_large_for_few_eps1_items_and_vanishes_above_40_percent() -> None:
    settings = [{"dataset": "retail", "epsilon": 1.0, "epsilon2": 2.0, "share": s} for s in (0.01, 0.1, 0.6)]
    t = _run(idue.run_single, settings, 8, 5, ks=(50,))
    gain = ratios(t, "OUE", "IDUE", "share")
    assert gain[0.01][0] - K * gain[0.01][1] > 1.9  # full run: 2.25x at 1 %
    assert gain[0.1][0] - K * gain[0.1][1] > 1.3
    assert abs(gain[0.6][0] - 1) + K * gain[0.6][1] < 0.05  # IDUE ~ OUE once many items are at eps1
    assert all(r - K * se > 1 for r, se in ratios(t, "RAPPOR", "OUE", "share").values())
    r, se = ratios(t, "OUE", "IDUE", "share", "re")[0.01]
    assert r - K * se > 1.1  # RE(50); full run 1.56x


# --------------------------------------------------------------------------------- Fig. 6
def test_fig6_clothing_idue_ps_has_smallest_re_but_not_always_best_precision() -> None:
    t = _run(idue.run_itemsets, [{"dataset": "clothing", "epsilon": 2.0, "ell": 2}], 24, 6, ks=(10, 20, 30, 50))
    for ps in ("OUE-PS", "RAPPOR-PS"):  # full run: 1.14-1.38x at ε = 2
        assert all(r - K * se > 1.05 for r, se in ratios(t, ps, "IDUE-PS", "k", "re").values())
    # at eps = 2 and small k (10-30) IDUE-PS's top-k precision is not above OUE-PS's (full run:
    # 0.16 vs 0.20; here 0.03 below it, SE 0.015): no K-SE gain in precision to go with the RE gain
    wide = t[t["k"] <= 30].pivot_table(index=["k", "repeat"], columns="method", values="precision")
    diff = (wide["IDUE-PS"] - wide["OUE-PS"]).to_numpy()
    assert diff.mean() < K * diff.std(ddof=1) / np.sqrt(diff.size)


# ----------------------------------------------------------------------------- Figs. 7-8
# Repeats: each ell outside the allowed set must be above the best by K = 4 SE of the paired ratio.
# On clothing the closest (eps 1, ell 2) is 5.5 SE at 20 repeats (4.9 at 10): 20 are needed.
# On kosarak (3x clothing's time per repeat) the closest is 8.2 SE at 20 repeats and 7.0 at the
# first 10 (the same streams: repeat r's seed does not depend on the count), so 10 suffice there.
@pytest.mark.parametrize(
    ("dataset", "ells", "k", "best_small", "best_large", "repeats"),
    [("clothing", (1, 2, 3, 4), 20, {1}, {2, 3, 4}, 20), ("kosarak", (1, 2, 5, 8, 16), 100, {1}, {5, 8}, 10)],
)
def test_fig7_fig8_best_padding_length_grows_with_epsilon(dataset, ells, k, best_small, best_large, repeats) -> None:
    settings = [{"dataset": dataset, "epsilon": e} for e in (1.0, 5.0)]
    t = _run(idue.run_itemsets, settings, repeats, 7, methods=("IDUE",), ks=(k,), ells=ells)
    best = t.groupby(["epsilon", "ell"])["re"].mean().unstack("ell").idxmin(axis=1)
    assert best[1.0] in best_small and best[5.0] in best_large, best.to_dict()
    # every ell outside the allowed set has a mean RE above the best one's by K SE (paired ratio)
    for eps, allowed in ((1.0, best_small), (5.0, best_large)):
        wide = t[t["epsilon"] == eps].pivot_table(index="repeat", columns="ell", values="re")
        for ell in set(ells) - allowed:
            r, se = ratio_se(wide[ell].to_numpy(), wide[best[eps]].to_numpy())
            assert r - K * se > 1, (eps, ell, r, se)
    assert idue.check_ell(t).agree


# ------------------------------------------------------------------------- specs and figures
def test_experiments_are_picklable_and_quick_run_writes_figures(tmp_path) -> None:
    exps = idue.experiments()
    assert [e.name for e in exps] == [f"fig{i}" for i in range(2, 9)]
    for e in exps:
        assert e.paper == "idue" and e.repeats == 10 and (e.panels or e.plot) and e.check is not None
        pickle.loads(pickle.dumps(e))
        assert len(e.grid(True)) <= len(e.grid(False))
    table = run_experiments(exps, quick=True, trials=1, workers=1, progress=False)
    report, results = write_outputs(exps, table, tmp_path)
    figs = [f for _, _, fs in results for f in fs]
    assert len(figs) >= 14 and all(f.exists() for f in figs)
    assert all(v is not None for _, v, _ in results)
    assert "IDUE" in report.read_text(encoding="utf-8")
