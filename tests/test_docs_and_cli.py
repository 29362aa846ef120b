"""The README's usage example runs, and the command line works."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from pldp.cli import main
from pldp.demo import run_demo

ROOT = Path(__file__).resolve().parents[1]


def test_readme_usage_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README has no python example"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "IPLDP holds" in out


def test_readme_quickstart_has_exactly_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    quick = text.split("## Quickstart", 1)[1].split("##", 1)[0]
    commands = re.findall(r"^make \w+", quick, re.M)
    assert commands == ["make demo", "make test"]


def test_demo_reports_iprr_best_and_privacy_holding() -> None:
    """The demo's unbiased MSEs match their theory and order IPRR < URR < KRR, by K SE."""
    out = run_demo(n=20_000, trials=60, seed=1)
    rows = {line.split("(")[0].strip(): line for line in out.splitlines() if "holds" in line or "FAILS" in line}
    assert set(rows) == {"KRR", "URR", "IPRR"}
    assert "FAILS" not in out

    def unbiased(line: str) -> tuple[float, float, float]:
        """(mean, SE, theory) of the unbiased estimator's MSE in a demo row."""
        cells = line.split(")", 1)[1].split()
        return float(cells[0]), float(cells[2]), float(cells[9])

    # each mean within K = 4 SE of its theory; IPRR < URR < KRR by more than K SE of the difference
    k = 4.0
    (iprr, se_i, th_i), (urr, se_u, th_u), (krr, se_k, th_k) = (unbiased(rows[m]) for m in ("IPRR", "URR", "KRR"))
    for mean, se, th in ((iprr, se_i, th_i), (urr, se_u, th_u), (krr, se_k, th_k)):
        assert abs(mean - th) < k * se
    assert urr - iprr > k * np.hypot(se_u, se_i) and krr - urr > k * np.hypot(se_k, se_u)


def test_cli_demo_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--n", "5000", "--trials", "5"]) == 0
    assert "IPRR" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0


def test_cli_mechanism_show(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["mechanism", "show", "iprr", "--budgets", "0.1,0.5,1.0,inf,inf"]) == 0
    out = capsys.readouterr().out
    assert "IPLDP holds" in out and "0.752" in out  # Fig. 1: q-bar of the most sensitive item
    assert main(["mechanism", "show", "krr", "--eps", "1", "--d", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["privacy"]["holds"] and data["privacy"]["ldp_epsilon"] == pytest.approx(1.0)
    assert len(data["items"]) == 4
    assert main(["mechanism", "show", "idue", "--budgets", "1.386,1.792,1.792,1.792,1.792", "--model", "opt1"]) == 0
    assert "MinID-LDP holds" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["mechanism", "show", "iprr"])


# ``pldp reproduce PAPER --quick`` (its printed summary, tables, figures and report) is checked by
# tests/papers/test_mpldp.py::test_quick_outputs, on the same quick run of MPLDP its figures need.


def test_cli_datasets_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("education", "country", "job", "retail", "clothing", "kosarak"):
        assert name in out
    assert "88,162" in out and "36,682" in out


def test_mechanism_from_args_takes_the_options_of_mechanism_show_and_audit() -> None:
    import argparse

    import pldp
    from pldp.cli.options import add_mechanism_arguments, mechanism_from_args
    from pldp.errors import ParameterError

    parser = argparse.ArgumentParser()
    add_mechanism_arguments(parser)
    assert mechanism_from_args("KRR", parser.parse_args(["--eps", "1", "--d", "4"])) == pldp.KRR(1.0, 4)
    iprr = mechanism_from_args("iprr", parser.parse_args(["--budgets", "0.5,ns,1"]))
    assert isinstance(iprr, pldp.IPRR) and np.isinf(iprr.budgets.epsilons[1])
    idue = mechanism_from_args(
        "idue", parser.parse_args(["--budgets", "0.5,1", "--model", "opt1", "--pair-rule", "avg"])
    )
    assert idue == pldp.IDUE(pldp.ItemBudgets.from_array([0.5, 1.0]), model="opt1", pair_rule="avg")
    with pytest.raises(ParameterError, match="krr needs --eps and --d"):
        mechanism_from_args("Krr", parser.parse_args(["--eps", "1"]))
    with pytest.raises(ParameterError, match="unknown mechanism 'Foo'"):
        mechanism_from_args("Foo", parser.parse_args([]))


def test_the_library_never_imports_the_cli() -> None:
    """The CLI sits on top: no module outside pldp.cli imports it, not even inside a function."""
    import ast

    src = ROOT / "src" / "pldp"
    offenders = []
    for path in sorted(src.rglob("*.py")):
        if (src / "cli") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            if any(n == "pldp.cli" or n.startswith("pldp.cli.") for n in names):
                offenders.append(f"{path.relative_to(src)}:{node.lineno}")
    assert not offenders, f"library modules import the CLI: {offenders}"
    assert not [p for p in src.rglob("cli.py")], "command-line code belongs in pldp.cli"
