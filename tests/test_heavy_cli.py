"""A free-text campaign from the command line: ``pldp spec new pem|treehist|sfp --labels text:L``,
``spec verify``, ``clients simulate`` and ``aggregate`` (its discovery from report files)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pldp
from pldp.cli import main
from pldp.deploy import Spec
from tests.cli_run import main_error
from tests.heavy_answers import population


def _new(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["spec", "new", *args]) == 0
    return capsys.readouterr().out


def test_spec_new_writes_the_spec_from_heavy_writes(capsys: pytest.CaptureFixture[str]) -> None:
    text = _new(capsys, "treehist", "--labels", "text:8", "--eps", "4", "--question", "Which app?", "--step-bits", "2")
    assert Spec.from_json(text) == Spec.from_heavy(pldp.TreeHist(4.0, max_bytes=8, step_bits=2), question="Which app?")
    text = _new(capsys, "pem", "--labels", "text:6", "--levels", "1,4", "--level", "1", "--question", "q?")
    assert Spec.from_json(text) == Spec.from_heavy(pldp.PEM([1.0, 4.0], max_bytes=6), question="q?", level=1)
    text = _new(capsys, "sfp", "--labels", "text:8", "--eps", "4", "--question", "q?", "--fragment-bytes", "1")
    assert Spec.from_json(text).heavy_hitter().params() == pldp.SFP(4.0, max_bytes=8, fragment_bytes=1).params()
    main_error(capsys, ["spec", "new", "pem", "--labels", "a,b", "--eps", "4", "--question", "q?"], "text:L")
    main_error(capsys, ["spec", "new", "krr", "--labels", "text:8", "--eps", "4", "--question", "q?"], "not krr")
    pem = ["spec", "new", "pem", "--labels", "text:8", "--eps", "4", "--question", "q?"]
    main_error(capsys, [*pem, "--step-bits", "2"], "--step-bits is not an option of pem")


def test_verify_simulate_and_aggregate_a_free_text_campaign(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(_new(capsys, "treehist", "--labels", "text:8", "--eps", "4", "--question", "Which app?"))
    assert main(["spec", "verify", str(spec_file)]) == 0
    table = capsys.readouterr().out
    assert "every report" in table and "any two answers" in table and "the whole report is 4-LDP" in table
    answers = population({"signal": 0.4, "whatsapp": 0.25}, 6_000, np.random.default_rng(3), tail=200)
    csv = tmp_path / "answers.csv"
    csv.write_text("answer\n" + "\n".join(answers) + "\n", encoding="utf-8")
    reports = tmp_path / "reports.parquet"
    assert main(["clients", "simulate", str(spec_file), "--answers", str(csv), "--out", str(reports)]) == 0
    out_json = tmp_path / "estimate.json"
    args = ["aggregate", str(spec_file), str(reports), "--workers", "0", "--no-progress", "--top", "5"]
    assert main([*args, "--json", str(out_json)]) == 0
    said = capsys.readouterr().out
    assert "6,000 reports" in said and "discovered by TreeHist" in said
    part = json.loads(out_json.read_text())["attributes"][0]
    assert {"signal", "whatsapp"} <= set(part["labels"]) and len(part["labels"]) <= 5
    main_error(capsys, [*args, "--method", "unbiased"], "'discover'")
