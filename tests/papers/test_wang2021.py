"""Wang, Li & Jha (IEEE TDSC 2021): heavy-hitter identification of PEM, TreeHist and SFP, at reduced scale.

The measures by hand on a population whose top answers are plain; the checks on hand-made tables,
which they accept and reject as their thresholds say; the quick run writes its tables and figures
and leaves the verdict to the full scale.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest

from pldp.experiments import wang2021 as w
from pldp.experiments.runner import run_experiments, write_outputs
from pldp.experiments.wang2021.checks import check_kosarak, check_zipf, identification_cells


def test_grids_vocabulary_and_protocols() -> None:
    exps = {e.name: e for e in w.experiments()}
    assert set(exps) == {"zipf", "kosarak"}
    assert w.EPS_GRID == (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    for e in exps.values():  # tasks may go to Dask worker processes
        pickle.loads(pickle.dumps(e.run))
        pickle.loads(pickle.dumps(e.check))
        assert not e.quick_decides and e.full_verdict == "agrees" and e.full_ours
    assert [s.get("source") for s in w.experiments("/k.dat")[1].settings] == ["/k.dat"] * len(w.EPS_GRID)
    words = w.vocabulary(3000, 8)
    assert words is w.vocabulary(3000, 8) and len(set(words)) == 3000  # cached, distinct
    assert all(3 <= len(x) <= 8 and x.isascii() and x.islower() for x in words)
    for name in w.PROTOCOLS:  # every protocol takes the experiments' byte lengths
        for max_bytes in (5, 8):
            assert w.protocol(name, 2.0, max_bytes).max_bytes == max_bytes


def test_identify_scores_a_plain_population() -> None:
    """Seeded: three answers held by 50, 30 and 20 % of 6,000 users at eps = 6 are found by every protocol
    (their shares are some 50 standard errors above any absent prefix), so precision and recall are 1; the
    relative errors are those of estimates with standard errors of a few %: below 0.2."""
    answers = ["alpha"] * 3000 + ["beta"] * 1800 + ["gamma"] * 1200
    truth = {"alpha": 0.5, "beta": 0.3, "gamma": 0.2}
    rows = w.identify(answers, truth, 6.0, 5, 3, np.random.default_rng(20210301))
    assert [r["method"] for r in rows] == list(w.PROTOCOLS)
    for r in rows:
        assert r["returned"] == 3 and r["precision"] == 1.0 and r["recall"] == 1.0, r
        assert 0.0 <= r["relative_error"] < 0.2, r
    # asked for five of three answers: what is returned beyond the three is nobody's, so precision is
    # 3 / returned while recall stays 1
    for r in w.identify(answers, truth, 6.0, 5, 5, np.random.default_rng(7)):
        assert r["recall"] == 1.0 and r["precision"] == 3 / r["returned"] and math.isfinite(r["relative_error"]), r


def _table(pem: list[float], other: list[float], measure: str) -> pd.DataFrame:
    """A hand-made tidy table: two repeats per (epsilon, method), PEM's and the others' means as given."""
    rows = []
    for e, p, o in zip(w.EPS_GRID[: len(pem)], pem, other, strict=True):
        for method, v in (("PEM", p), ("TreeHist", o), ("SFP", o)):
            for shift in (-0.05, 0.05):
                row = {"epsilon": e, "method": method, "precision": v, "recall": v, "relative_error": 0.1}
                row[measure] = v + shift
                rows.append({**row, "returned": 10})
    return pd.DataFrame(rows)


def test_checks_accept_and_reject_as_their_thresholds_say() -> None:
    rising = _table([0.2, 0.5, 0.9], [0.1, 0.3, 0.7], "precision")  # recall: the same means
    cells = identification_cells(rising)
    pem = cells[cells["method"] == "PEM"]
    assert pem["precision"].tolist() == pytest.approx([0.2, 0.5, 0.9])  # the means of v -/+ 0.05
    # SE of two values 0.1 apart is 0.05; the 95 % band t(0.975, 1) = 12.7 of them
    assert pem["precision_band"].iloc[0] == pytest.approx(0.05 * 12.706, rel=1e-4)
    assert check_zipf(rising).agree
    assert not check_zipf(_table([0.2, 0.5, 0.75], [0.1, 0.3, 0.7], "precision")).agree  # not high enough
    assert not check_zipf(_table([0.65, 0.8, 0.9], [0.1, 0.3, 0.7], "precision")).agree  # rises too little
    assert not check_zipf(_table([0.2, 0.5, 0.9], [0.1, 0.3, 0.95], "precision")).agree  # beaten at the last
    assert check_kosarak(_table([0.2, 0.5, 0.9], [0.1, 0.3, 0.7], "recall")).agree
    # the others above PEM's band at one epsilon (its recall band there: 0.05 * 12.7 = 0.64 wide each side)
    beaten = _table([0.2, 0.2, 0.9], [0.1, 0.9, 0.7], "recall")
    assert not check_kosarak(beaten).agree and "2/3 eps" in check_kosarak(beaten).ours
    close = _table([0.2, 0.5, 0.9], [0.1, 0.6, 0.7], "recall")  # above PEM's mean, inside its band: no verdict
    assert check_kosarak(close).agree


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, list, object]:
    out = tmp_path_factory.mktemp("wang2021")
    exps = w.experiments()
    table = run_experiments(exps, quick=True, workers=1, progress=False)
    _, results = write_outputs(exps, table, out, quick=True)
    return table, results, out


def test_quick_run_writes_tables_figures_and_defers_the_verdict(quick) -> None:
    table, results, out = quick
    d = out / "wang2021"
    for name in ("zipf.png", "kosarak.png", "zipf.md", "kosarak.md", "results.csv"):
        assert (d / name).stat().st_size > 0, name
    zipf = pd.read_csv(d / "zipf.csv")
    assert len(zipf) == 2 * len(w.PROTOCOLS)  # two epsilons of the quick grid, every protocol
    assert set(zipf["method"]) == set(w.PROTOCOLS)
    assert ((table["precision"] >= 0) & (table["precision"] <= 1) & (table["recall"] <= 1)).all()
    assert (table["returned"] <= table["top"]).all()
    assert set(table.loc[table["experiment"] == "kosarak", "n"]) == {36_682}  # the bundled prefix's users
    for exp, check, figs in results:
        assert check is not None and len(figs) == 2, exp.name  # the figure and its Markdown table
        assert exp.verdict(check, quick=True).startswith("undecided at quick scale")
    report = (out / "report.md").read_text()
    assert "## WANG2021" in report and "zipf.png" in report
