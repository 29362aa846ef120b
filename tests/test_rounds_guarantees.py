"""Caps that mean what they say: ``pldp spec verify`` prints both guarantees of a memoized spec
over a device's rounds (:mod:`pldp.deploy.history`): its answer at eps_inf each time it is new (at
most ``min(N, d) eps_inf`` over the spec's ``N`` rounds), and whether and when it changes at the
whole-history epsilon of ``pldp.privacy.over_rounds`` over ``N`` rounds (exact or "at most"), with
``r eps_1`` beside it; without a rounds cap, that it grows without limit, at a few numbers of
reports. Fast: the accountant's exact search is kept small, and its bound alone serves any number
of reports."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

import pldp
from pldp.cli import main
from pldp.deploy import Spec
from pldp.deploy.history import HISTORY_MAX_WORK, rounds_guarantees, whole_history
from pldp.privacy import history_bound, over_rounds
from pldp.privacy.rounds_search import compositions
from tests.protection_cases import CAPPED, CAPPED_PROTECTION, LGRR, SLEPT, UNCAPPED


def _verify(tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: Spec, *flags: str) -> str:
    (tmp_path / "spec.json").write_text(spec.to_json())
    assert main(["spec", "verify", *flags, str(tmp_path / "spec.json")]) == 0
    return capsys.readouterr().out


def test_spec_verify_prints_both_guarantees_over_the_specs_rounds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _verify(tmp_path, capsys, CAPPED)
    head, rounds = out.split("\n\n")
    assert head.splitlines()[-1] == "every claim holds; the whole report is 1-LDP"  # the claims, as before
    assert rounds.splitlines() == [
        "Over a device's rounds (memoized: one permanent response per answer, a fresh report of it each round):",
        "  the answer: at eps_inf = 2 each time it is new; at most min(8, 2) * 2 = 4 over the spec's 8 rounds",
        "  whether and when the answer changes: eps = 6.16 (exact) over the spec's 8 rounds (caps.rounds); "
        "8 fresh reports: r * eps_1 = 8",
    ]
    data = json.loads(_verify(tmp_path, capsys, CAPPED, "--json"))
    assert data["holds"] is True and len(data["rows"]) == 2  # the verification, as before
    (history,) = data["rounds"]["history"]
    assert history["rounds"] == 8 and history["exact"] is True and round(history["epsilon"], 2) == 6.16
    assert history["epsilon"] == pytest.approx(over_rounds(LGRR, 8).epsilon, rel=1e-12)
    assert history["fresh_epsilon"] == pytest.approx(8.0, rel=1e-6)
    assert {k: v for k, v in data["rounds"].items() if k != "history"} == CAPPED_PROTECTION


def test_without_a_rounds_cap_verify_says_the_loss_grows_without_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rounds = _verify(tmp_path, capsys, UNCAPPED).split("\n\n")[1].splitlines()
    assert rounds[1] == (
        "  the answer: at eps_inf = 2 each time it is new; at most d * eps_inf = 2 * 2 = 4 over any number of reports"
    )
    assert rounds[2] == (
        "  whether and when the answer changes: no rounds cap (caps.rounds), so the whole-history eps grows with the "
        "number of reports, without limit:"
    )
    table = [line.split("  ") for line in rounds[3:]]
    assert [[cell.strip() for cell in row if cell.strip()] for row in table] == [
        ["reports", "whole history", "r * eps_1"],
        ["1", "1 (exact)", "1"],
        ["2", "2 (exact)", "2"],
        ["5", "4.02 (exact)", "5"],
        ["10", "7.57 (exact)", "10"],
        ["30", "at most 25.4", "30"],
    ]
    data = json.loads(_verify(tmp_path, capsys, UNCAPPED, "--json"))["rounds"]
    assert data["rounds_cap"] is None and data["values_epsilon"] is None
    assert [(h["rounds"], h["exact"]) for h in data["history"]] == [
        (1, True),
        (2, True),
        (5, True),
        (10, True),
        (30, False),
    ]
    # a spec that is not memoized: the table alone, and no "rounds" in the JSON
    krr = Spec.from_mechanism(pldp.KRR(1.0, 3), question="OS?", labels=["a", "b", "c"], caps={"rounds": 3})
    assert "Over a device's rounds" not in _verify(tmp_path, capsys, krr)
    assert "rounds" not in json.loads(_verify(tmp_path, capsys, krr, "--json"))


def test_the_guarantees_of_an_item_personalized_spec_and_of_an_unprotected_answer() -> None:
    budgets = pldp.ItemBudgets.from_array
    spec = Spec.from_mechanism(
        pldp.LIPRR(budgets([0.5, 1.0, float("inf")]), budgets([0.25, 0.5, float("inf")])),
        question="Diagnosis?",
        labels=["flu", "covid", "none"],
        caps={"rounds": 4},
    )
    found = rounds_guarantees(spec)
    assert found is not None and found.permanent_epsilons == (0.5, 1.0, math.inf)
    assert found.values_epsilon == math.inf and found.history[0].epsilon == math.inf
    assert found.lines()[1] == (
        "  the answer: at eps_inf = 0.5 to inf by answer (at worst inf) each time it is new; at most min(4, 3) * inf "
        "= inf over the spec's 4 rounds"
    )
    assert "eps = inf (an answer is not protected)" in found.lines()[2]
    assert found.to_dict()["history"][0]["epsilon"] == "inf"
    assert rounds_guarantees(Spec.from_mechanism(pldp.KRR(1.0, 3), question="q")) is None


def test_verify_stays_fast_and_any_rounds_cap_gets_a_bound() -> None:
    """Well under a second per spec: a small exact search, and past HISTORY_MAX_WORK (reports times
    answers) the accountant's bound alone, which is what over_rounds would give there."""
    whole_history.cache_clear()
    for oracle, labels in ((pldp.LGRR(2.0, 1.0, 10), list("abcdefghij")), (pldp.LOUE(2.0, 1.0, 20), None)):
        spec = Spec.from_mechanism(oracle, question="q", labels=labels)
        start = time.perf_counter()
        found = rounds_guarantees(spec)
        assert found is not None and len(found.history) == 5
        assert time.perf_counter() - start < 2.0  # about 0.05 s alone; the machine is shared
    huge = Spec.from_mechanism(LGRR, **SLEPT, caps={"rounds": 2**53 - 1})
    start = time.perf_counter()
    (h,) = rounds_guarantees(huge).history  # type: ignore[union-attr]
    assert time.perf_counter() - start < 1.0 and not h.exact and h.rounds == 2**53 - 1
    assert (h.epsilon, h.fresh_epsilon) == history_bound(LGRR, 2**53 - 1)
    r = HISTORY_MAX_WORK // 2 + 1  # just past the work limit for two answers: the bound, as over_rounds has it
    past = whole_history(Spec.from_mechanism(LGRR, **SLEPT), r)
    assert not past.exact and past.epsilon == pytest.approx(over_rounds(LGRR, r, max_exact=0).bound, rel=1e-12)


def test_compositions_of_many_cells_need_no_recursion() -> None:
    """over_rounds of a unary chain over 20 items enumerates compositions over 800 cells: once a
    RecursionError, now built column by column (the same rows, in the same order)."""
    assert compositions(1, 800).shape == (800, 800)
    assert compositions(2, 3).tolist() == [[0, 0, 2], [0, 1, 1], [0, 2, 0], [1, 0, 1], [1, 1, 0], [2, 0, 0]]
    assert over_rounds(pldp.LOUE(2.0, 1.0, 20), 1, max_exact=20_000).epsilon == pytest.approx(1.0, abs=1e-4)
