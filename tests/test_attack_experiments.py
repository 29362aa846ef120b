"""``pldp attack``, ``pldp reproduce attacks`` and ``pldp mechanism show``'s robustness section."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

import pldp  # noqa: E402
from pldp.cli import main  # noqa: E402
from pldp.cli.attack import NAMES  # noqa: E402
from pldp.experiments.attacks import (  # noqa: E402
    PROTOCOLS,
    build,
    check_closed_forms,
    check_reference,
    experiments,
    fakes_for,
    honest_counts,
    item_budgets,
    moves_table,
    personalized_table,
    run_repeat,
)
from pldp.experiments.runner import run_experiments  # noqa: E402
from pldp.robustness import amplification, per_fake_gain  # noqa: E402
from tests.cli_run import main_error, main_run  # noqa: E402

PLDP = [sys.executable, "-m", "pldp.cli"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PLDP, *args], capture_output=True, text=True, timeout=300)


def test_catalog() -> None:
    assert NAMES == tuple(PROTOCOLS)
    assert item_budgets(100).epsilons.mean() == pytest.approx(0.55)
    assert item_budgets(16).epsilons.mean() == pytest.approx(0.55)
    assert item_budgets(16).epsilons[-1] == pytest.approx(0.1)  # the rarest item is the most sensitive
    assert item_budgets(16, 4).epsilons.tolist() == pytest.approx(np.repeat([1.0, 0.7, 0.4, 0.1], 4).tolist())
    counts = honest_counts(100_000, 16, 2.0)
    assert counts.sum() == 100_000 and np.all(np.diff(counts) <= 0)
    assert fakes_for(100_000, 0.01) == 1010  # m / (n + m) = 0.01
    with pytest.raises(pldp.errors.ParameterError, match="unknown protocol"):
        build("grr", 4)


def test_one_repeat_measures_every_strategy_and_method() -> None:
    setting = {"protocol": "rcf-krr", "n": 20_000, "d": 10, "zipf": 1.0, "r": 2, "beta": 0.05,
               "strategies": ["mga", "max_level", "sensitive"],
               "methods": ["unbiased", "norm_sub", "nope"]}  # fmt: skip
    rows = run_repeat(setting, np.random.default_rng(0))
    assert {(r["strategy"], r["method"]) for r in rows} == {
        (s, m) for s in ("mga", "max_level") for m in ("unbiased", "norm_sub", "robust")
    }  # sensitive does not apply to RCF; "nope" is no method of it; "robust" always runs where it exists
    for r in rows:
        assert np.isfinite(r["gain"]) and r["m"] == fakes_for(20_000, 0.05)
        assert np.isfinite(r["expected"]) == (r["method"] == "unbiased")


def test_a_method_that_refuses_is_a_failed_row() -> None:
    """PLDP-FEBSF's AUEM: 5 % of reports claiming the smallest level leave it no estimate."""
    setting = {"protocol": "febsf-krr", "n": 100_000, "d": 16, "zipf": 2.0, "r": 1, "beta": 0.08,
               "strategies": ["min_level"], "methods": ["unbiased"]}  # fmt: skip
    rows = run_repeat(setting, np.random.default_rng(0))
    assert all(r["failed"] in (0, 1) for r in rows)
    assert all(np.isnan(r["gain"]) for r in rows if r["failed"])


def test_experiments_run_and_write_their_tables(tmp_path) -> None:  # type: ignore[no-untyped-def]
    exps = {e.name: e for e in experiments()}
    assert set(exps) == {"cao_mga", "best_moves", "personalized"}
    assert all(e.full_verdict == "agrees" and e.check is not None for e in exps.values())
    cao = run_experiments([exps["cao_mga"]], quick=True, trials=4, workers=1, progress=False)
    assert check_closed_forms(cao).agree
    figs = exps["cao_mga"].figures(cao, tmp_path)
    assert [p.name for p in figs] == ["cao_beta.png", "cao_eps.png", "cao_r.png", "cao_mga.md"]
    wrong = cao.assign(expected=cao["expected"] * 1.1)  # the check can fail
    assert not check_closed_forms(wrong).agree
    checked = [
        s
        for s in exps["best_moves"].settings
        if s["protocol"] in ("krr", "oue", "iprr", "idue", "rcf-krr", "febsf-oue")
    ]
    moves = run_experiments(
        [dataclasses.replace(exps["best_moves"], settings=checked)], trials=2, workers=1, progress=False
    )
    text = moves_table(moves, tmp_path)[0].read_text()
    assert "| krr | 1 | mga | 0.01 | 0.0973" in text and "0.300 (x1.4)" in text
    assert "| reference |" in text.splitlines()[0] and "issue" not in text.lower()  # no internal words
    assert "| iprr | 0.55 | sensitive | 0.01 | 0.43" in text and "| x2.05 |" in text  # the reference budgets
    assert check_reference(moves).agree, check_reference(moves).ours
    table = personalized_table(moves, tmp_path)[0].read_text()
    assert "beta = 0.01, unbiased" in table and "| rcf-krr |  |  | 0.2991 (x1.39) |  |" in table


def test_cli_attack(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """The first command in a real pldp process, as a user runs it; the second through
    :func:`pldp.cli.main` in this process (the same code, without a Python start)."""
    out = tmp_path / "out"
    res = _run("attack", "krr", "--n", "20000", "--d", "8", "--beta", "0.01", "0.05", "--strategy", "mga", "input",
               "--method", "unbiased", "norm_sub", "--repeats", "3", "--no-progress", "--out", str(out))  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "closed form" in res.stdout and "check of the exact closed forms" in res.stdout
    assert (out / "results.csv").stat().st_size > 0 and (out / "gain.png").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert {(s["strategy"], s["beta"]) for s in summary} == {(s, b) for s in ("mga", "input") for b in (0.01, 0.05)}
    res = main_run(
        capsys,
        "attack",
        "idue",
        "--d",
        "8",
        "--n",
        "5000",
        "--strategy",
        "all",
        "--repeats",
        "2",
        "--json",
        "--no-progress",
    )
    assert res.returncode == 0, res.stderr
    assert {s["strategy"] for s in json.loads(res.stdout)} == {"mga", "adaptive", "input", "sensitive", "knows_defence"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--beta", "1.5"], "--beta must lie in (0, 1)"),
        (["--strategy", "loud"], "--strategy: unknown ['loud']"),
        (["--repeats", "1"], "--repeats must be >= 2"),
        (["--targets", "0"], "1 <= --targets < --d"),
    ],
)
def test_cli_attack_refuses_bad_input(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    # in this process (:func:`pldp.cli.main`, what ``python -m pldp.cli`` calls): the refusals are
    # main's, and test_cli_attack runs the command as a user does, in a subprocess
    line = main_error(capsys, ["attack", "krr", "--n", "1000", *args], message)
    assert line.startswith("pldp: error: ")


def test_mechanism_show_has_a_robustness_section(capsys: pytest.CaptureFixture[str]) -> None:
    # in this process, as test_cli_mechanism_show (tests/test_docs_and_cli.py) runs the command
    assert main(["mechanism", "show", "iprr", "--budgets", "1.0,0.5,0.1,inf"]) == 0
    out = capsys.readouterr().out
    assert "robustness to fake users" in out
    assert "KRR(epsilon=0.533333, d=4)" in out  # the uniform mechanism at the mean finite budget
    assert main(["mechanism", "show", "idue", "--budgets", "1.0,0.5,0.1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["robustness"]
    mech = pldp.IDUE(pldp.ItemBudgets.from_array([1.0, 0.5, 0.1]))
    assert [i["per_fake_gain"] for i in data["items"]] == pytest.approx(per_fake_gain(mech).tolist())
    assert [i["amplification"] for i in data["items"]] == pytest.approx(amplification(mech).tolist())
    assert data["uniform"] == "OUE(epsilon=0.533333, d=3)"
