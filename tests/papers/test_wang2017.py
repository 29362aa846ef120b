"""Wang, Blocki, Li & Jha (USENIX Security 2017): the variance comparison, at reduced scale.

The quick run writes its tables and figures and its checks agree; at one epsilon every oracle's
empirical variance per report lies within a chi-square acceptance interval of its theory, and a
theory 7 % off does not.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest

from pldp.experiments import wang2017 as w
from pldp.experiments.runner import run_experiments, write_outputs
from tests.tolerances import FLOAT_RTOL

#: Two-sided false-alarm probability of one oracle's acceptance interval. With N = 32,768 samples the
#: relative SD of the pooled variance is sqrt(2 / N) = 0.78 % and the interval is +/- 3.9 SD = +/- 3.0 %.
ALPHA = 1e-4
#: The statistical test's setting: d = 1,024 (512 absent items a tally), 64 tallies per oracle.
SETTING = {"epsilon": 2.0, "d": 1024, "n": 100_000, "samples": 32_768}


def test_grids_and_closed_forms() -> None:
    exps = {e.name: e for e in w.experiments()}
    assert set(exps) == {"var_eps", "var_d", "per_user", "kosarak", "levels"}
    assert w.EPS_GRID == (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)
    assert w.D_GRID[0] == 2 and w.D_GRID[-1] == 2**14
    for e in exps.values():  # tasks may go to Dask worker processes
        pickle.loads(pickle.dumps(e.run))
        pickle.loads(pickle.dumps(e.check))
    assert [s.get("source") for s in w.experiments("/k.dat")[3].settings] == ["/k.dat"] * 5
    # Wang et al.'s closed forms at eps = ln 3 (e^eps = 3): GRR (d + 1)/4, SUE sqrt3/(sqrt3 - 1)^2,
    # OUE = OLH 3 (OLH's integer g = 4 is e^eps + 1 exactly here), BLH = HR 4.
    eps, d = math.log(3.0), 100
    r3 = math.sqrt(3.0)
    expected = {"GRR": 101 / 4, "SUE": r3 / (r3 - 1) ** 2, "OUE": 3.0, "OLH": 3.0, "BLH": 4.0, "HR": 4.0}
    for name, value in expected.items():
        assert w.closed_form(name, eps, d) == pytest.approx(value, rel=FLOAT_RTOL)  # float formulas: rounding only
        # The support is the ideal one up to pldp's rounding: each probability moves by at most `units`
        # steps of its grid (2**-16 for the unary coins; 2**-32 elsewhere, and GRR's p* absorbs the d - 1
        # rounded-up q*), so q*(1-q*)/(p*-q*)^2 moves relatively by at most 4 units step / (p* - q*).
        mech = w.oracle(name, eps, d)
        p, q = (float(a[0]) for a in mech.support)
        step = 2.0**-16 if name in ("SUE", "OUE") else 2.0**-32
        units = d if name == "GRR" else 1
        assert w.support_variance(mech, d - 1) == pytest.approx(value, rel=4 * units * step / (p - q))


def test_variance_per_report_matches_theory_for_every_oracle() -> None:
    """Seeded: every oracle's pooled empirical variance per report at eps = 2, d = 1,024 lies in the
    two-sided chi-square interval (w.chi2_bounds, ALPHA) around its theory from the oracle's support.

    Why the interval is right: each absent item's count is exactly Bin(n, q*), so each sample
    n f_hat^2 / V is a normalised square with mean 1 and variance z_sd^2 = 2 + (1 - 6 q*(1-q*))/(n q*(1-q*));
    the samples are independent across tallies and, within a tally, correlated only through the
    counts' O(1/d) correlations (GRR's multinomial -q*/(1-q*) ~ -1e-3, SS's fixed subset size ~ -1/d,
    HR's holders of the xor item (2p*-1)/512 per pair): they change the variance of the pooled mean
    by a factor 1 + sum of squared correlations < 1.003, nothing at this interval's width.

    Why it can fail: the interval is +/- 3.0 % wide (hi / lo < 1.07, asserted), so wherever the
    right theory is accepted a theory off by more than 7 % is not; so is any plausible wrong formula,
    e.g. SUE's variance with eps per bit instead of eps/2 (5x too small) or OUE's for SUE (21 % too
    small), asserted last on the same samples.
    """
    rows = w.run_variance(dict(SETTING), np.random.default_rng(20170816))
    assert [r["method"] for r in rows] == list(w.ORACLES)
    for r in rows:
        lo, hi = w.chi2_bounds(r["samples"], r["z_sd"], ALPHA)
        assert 0.96 < lo < 1 < hi < 1.04 and hi / lo < 1.07, (lo, hi)
        ratio = r["variance"] / r["theory"]
        assert lo < ratio < hi, (r["method"], ratio, lo, hi)
    sue = next(r for r in rows if r["method"] == "SUE")
    lo, hi = w.chi2_bounds(sue["samples"], sue["z_sd"], ALPHA)
    assert not lo < sue["variance"] / w.closed_form("OUE", SETTING["epsilon"], SETTING["d"]) < hi


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, list, object]:
    out = tmp_path_factory.mktemp("wang2017")
    exps = w.experiments()
    table = run_experiments(exps, quick=True, workers=1, progress=False)
    _, results = write_outputs(exps, table, out, quick=True)
    return table, results, out


def test_quick_run_writes_tables_figures_and_agrees(quick) -> None:
    table, results, out = quick
    d = out / "wang2017"
    for name in ("var_eps.png", "var_d_eps2.png", "var_d_eps4.png", "kosarak.png", "results.csv"):
        assert (d / name).stat().st_size > 0, name
    var_eps = pd.read_csv(d / "var_eps.csv")
    assert len(var_eps) == 6 * len(w.ORACLES)  # six epsilons of the quick grid, every oracle
    assert set(var_eps["method"]) == set(w.ORACLES)
    md = (d / "var_d.md").read_text()
    assert md.count("\n| 4 | 16384 | GRR |") == 1
    assert set(pd.read_csv(d / "per_user.csv")["method"]) == set(w.ORACLES)
    assert set(table[table["experiment"] == "per_user"]["path"]) == {"per-user"}
    for exp, check, figs in results:
        assert check is not None and check.agree, (exp.name, check)
        assert figs, exp.name
    report = (out / "report.md").read_text()
    assert "## WANG2017" in report and "var_d_eps4.png" in report


def test_checks_reject_a_wrong_ranking(quick) -> None:
    """The claims can fail: with OUE's and GRR's theories swapped in the d sweep the crossing at
    3e^eps + 2 no longer holds; with every empirical variance 50 % high (8 SE at the quick scale) the
    chi-square intervals reject it."""
    table, _, _ = quick
    var_d = table[table["experiment"] == "var_d"].copy()
    grr, oue = var_d["method"] == "GRR", var_d["method"] == "OUE"
    swapped = var_d.copy()
    swapped.loc[grr, "theory"] = var_d.loc[oue, "theory"].to_numpy()
    swapped.loc[oue, "theory"] = var_d.loc[grr, "theory"].to_numpy()
    assert not w.check_d(swapped).agree
    high = var_d.assign(variance=var_d["variance"] * 1.5)
    assert not w.check_d(high).agree


def test_levels_check_can_fail(quick) -> None:
    """The personalized comparison's claims can fail: RCF-OLH's MSE 50 % high (far beyond its SE)
    is rejected, and so is a theory in which hiding the level costs nothing (PBP-OLH below RCF-OLH)."""
    from pldp.experiments.wang2017.levels import check_levels

    table, _, _ = quick
    levels = table[table["experiment"] == "levels"].copy()
    assert check_levels(levels).agree
    rcf = levels["method"] == "RCF-OLH"
    high = levels.copy()
    high.loc[rcf, "mse_all"] *= 1.5
    assert not check_levels(high).agree
    pbp = levels["method"] == "PBP-OLH"
    cheap = levels.copy()
    cheap.loc[pbp, "theory_all"] = levels.loc[rcf, "theory_all"].to_numpy() * 0.9
    cheap.loc[pbp, "mse_all"] = cheap.loc[pbp, "theory_all"]
    assert not check_levels(cheap).agree


def test_pbp_oue_shares_an_error_across_items_and_the_sd_of_its_mse_says_so() -> None:
    """Seeded: PBP-OUE's estimates share the error of the level counts drawn against the public
    shares, so one repeat's MSE over 17,034 items has an SD several times what independent errors
    give. levels._mse_sd with the shared part matches the SD over R = 300 repeats, and the SD
    without it does not (ratio ~3.9).

    The interval: the sample SD of R values of excess kurtosis gamma has relative SE
    0.5 sqrt(2/(R-1) + gamma/R). gamma comes from the model (a shared Gaussian c, its square a
    chi-square of one degree of freedom, fourth cumulant 48 sigma_c^8; the cross term 2c mean(u) a
    product of Gaussians, 6 Var^2; the independent part Gaussian): about 10 here, so the SE is about
    0.1 and the two-sided 1e-4 interval (3.89 SE, the sample SD near normal at R = 300) is 1 +/- 0.4."""
    from pldp.experiments.wang2017.levels import SHARES, _common_variance, _mse_sd, _protocols

    counts = w.first_item_counts()
    n, d = int(counts.sum()), counts.size
    p = counts / n
    proto = _protocols(1.0, d)["PBP-OUE"]
    rng = np.random.default_rng(20171)
    repeats = 300
    mse = []
    for _ in range(repeats):
        cells = rng.multinomial(n, np.outer(SHARES, p).reshape(-1)).reshape(len(SHARES), d)
        est = proto.estimate(proto.simulate(cells, rng), "unbiased").frequencies
        mse.append(float(((est - p) ** 2).mean()))
    var = proto.expected_variance(p, n)
    c = _common_variance(proto, n)
    own = var - c
    parts = (2 * c**2, 4 * c * float(own.sum()) / d**2, 2 * float(np.sum(own**2)) / d**2)
    gamma = (48 * c**4 + 6 * parts[1] ** 2) / sum(parts) ** 2
    se = 0.5 * math.sqrt(2 / (repeats - 1) + gamma / repeats)
    sd = float(np.std(mse, ddof=1))
    assert 5 < gamma < 15 and se < 0.11
    assert abs(sd / _mse_sd(var, c) - 1) < 3.89 * se
    assert sd / _mse_sd(var, 0.0) > 1 + 3.89 * se  # the Gaussian-independent SD is far too small
