"""The audit over time (issue 27 item 5): r reports of one device, fresh and memoized.

Statistical checks at fixed seeds: a correct memoized chain audits at or under eps_perm for every
r up to 30; fresh reports audit above eps_perm by r = 30 where they must; a memo that forgets
(redraws the permanent response every round) is caught; one value against a change halfway (a
different change pattern) audits above eps_perm, rising with r, and never above the pair's exact
loss (pldp.privacy.pair_loss); and every bound stays under its claim.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.audit import RoundsResult, audit, audit_rounds
from pldp.audit.longitudinal import parse_rounds, same_pattern, segments
from pldp.errors import ParameterError
from pldp.mechanisms.longitudinal.memo import Memo


def _forgetful(monkeypatch: pytest.MonkeyPatch) -> None:
    """Break every memo: it finds nothing, so each round draws a new permanent response."""

    def lookup(self: Memo, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(keys.shape, dtype=np.int64), np.zeros(keys.shape, dtype=bool)

    monkeypatch.setattr(Memo, "lookup", lookup)


# --------------------------------------------------------------------------- the histories
def test_the_histories_are_one_value_a_swap_at_half_way_or_a_change_against_none() -> None:
    assert [(s.start, s.stop, s.v0, s.v1) for s in segments("same", 30, 2, 5)] == [(0, 30, 2, 5)]
    assert [(s.start, s.stop, s.v0, s.v1) for s in segments("change", 30, 2, 5)] == [(0, 15, 2, 5), (15, 30, 5, 2)]
    assert [(s.start, s.stop) for s in segments("change", 5, 0, 1)] == [(0, 3), (3, 5)]
    assert [(s.start, s.stop) for s in segments("change", 1, 0, 1)] == [(0, 1)]
    # a^15 b^15 against a^30: the pair whose loss pair_loss computes (20.9 for L-GRR(2, 1, 2))
    assert [(s.start, s.stop, s.v0, s.v1) for s in segments("split", 30, 2, 5)] == [(0, 15, 2, 2), (15, 30, 5, 2)]
    assert [(s.start, s.stop, s.v0, s.v1) for s in segments("split", 5, 0, 1)] == [(0, 2, 0, 0), (2, 5, 1, 0)]
    assert [(s.start, s.stop, s.v0, s.v1) for s in segments("split", 1, 0, 1)] == [(0, 1, 1, 0)]
    assert same_pattern(segments("same", 4, 0, 1)) and same_pattern(segments("change", 4, 0, 1))
    assert not same_pattern(segments("split", 4, 0, 1)) and same_pattern(segments("split", 1, 0, 1))


def test_rounds_are_parsed_sorted_and_checked() -> None:
    assert parse_rounds("30,1, 5,5,2") == (1, 2, 5, 30)
    assert parse_rounds([10, 1]) == (1, 10)
    for bad in ("0", "1,x", "", "1.5", "-2", "1001", [True]):
        with pytest.raises(ParameterError, match="rounds"):
            parse_rounds(bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- memoized chains
def test_a_memoized_direct_chain_stays_at_or_under_eps_perm_for_every_r_up_to_30() -> None:
    """L-GRR at eps_perm = 1, eps_1 = 0.5 over 2 items, same value: r = 1 .. 30. The bound approaches
    eps_perm (the attacker learns the permanent response) and never passes it."""
    mech = pldp.LGRR(1.0, 0.5, 2)
    res = audit_rounds(
        mech, range(1, 31), trials=3000, modes=["memoized"], scenarios=["same"], rng=np.random.default_rng(1)
    )
    assert res.ok and len(res.rows) == 30
    assert all(r.audited <= 1.0 for r in res.rows)
    assert res.row("memoized", "same", 1).claimed == 0.5  # one report: eps_1
    assert all(r.claimed == 1.0 for r in res.rows[1:])
    assert max(r.audited for r in res.rows[9:]) > 0.6  # the game has power: it gets near eps_perm


@pytest.mark.parametrize(
    ("mech", "pair"),
    [
        (pldp.LOSUE(2.0, 0.5, 8), (0, 1)),
        (pldp.LSUE(2.0, 1.0, 4), (0, 1)),
        (
            pldp.LIPRR(pldp.ItemBudgets.from_array([1.0, 2.0, 4.0]), pldp.ItemBudgets.from_array([0.25, 0.5, 1.0])),
            (1, 0),
        ),
        (
            pldp.LIDUE(pldp.ItemBudgets.from_array([1.0, 2.0, 2.0]), pldp.ItemBudgets.from_array([0.5, 1.0, 1.0])),
            (1, 2),
        ),
    ],
    ids=["LOSUE", "LSUE", "LIPRR", "LIDUE"],
)
def test_memoized_unary_and_personalized_chains_stay_under_their_pair_eps_perm(
    mech: Any, pair: tuple[int, int]
) -> None:
    res = audit_rounds(mech, [1, 2, 5, 10, 30], pair=pair, trials=4000, rng=np.random.default_rng(2))
    assert res.ok, str(res)
    perm = res.eps_perm
    for r in res.rows:
        if r.mode == "memoized" and r.scenario == "same":
            assert r.audited <= perm and r.claimed == (res.eps_1 if r.rounds == 1 else perm)
        if r.mode == "fresh" and r.scenario == "same":
            assert r.claimed == pytest.approx(r.rounds * res.eps_1)


def test_personalized_claims_are_the_pairs_budgets() -> None:
    """L-IPRR (IPLDP): the pair 1 vs 0 is protected at item 1's budgets (eps_perm 2, eps_1 0.5); the
    swap history spends both items' eps_perm (2 + 1); L-IDUE (MinID-LDP): min of the two items'."""
    perm, one = pldp.ItemBudgets.from_array([1.0, 2.0, 4.0]), pldp.ItemBudgets.from_array([0.25, 0.5, 1.0])
    res = audit_rounds(pldp.LIPRR(perm, one), [1, 4], pair=(1, 0), trials=2000, rng=np.random.default_rng(3))
    assert (res.eps_perm, res.eps_1) == (2.0, 0.5)
    assert res.row("memoized", "change", 4).claimed == 3.0
    assert res.row("memoized", "change", 1).claimed == 0.5
    assert res.row("fresh", "change", 4).claimed == pytest.approx(2 * 0.5 + 2 * 0.25)
    lidue = pldp.LIDUE(pldp.ItemBudgets.from_array([1.0, 2.0, 3.0]), pldp.ItemBudgets.from_array([0.5, 1.0, 1.5]))
    res = audit_rounds(lidue, [2], pair=(2, 1), trials=1000, scenarios=["same"], rng=np.random.default_rng(3))
    assert (res.eps_perm, res.eps_1) == (2.0, 1.0)


# --------------------------------------------------------------------------- fresh reports
def test_fresh_reports_grow_with_r_and_pass_eps_perm_by_30() -> None:
    """The same L-GRR without its memo (its one-report channel, GRR at eps_1 = 0.5, used r times): the
    audited bound grows with r and passes eps_perm = 1 (and 4 eps_perm) by r = 30, under r eps_1."""
    res = audit_rounds(pldp.LGRR(1.0, 0.5, 2), [1, 5, 10, 30], trials=5000, rng=np.random.default_rng(4))
    assert res.ok
    for scenario in ("same", "change"):
        _, fresh = res.curve("fresh", scenario)
        assert all(x < y for x, y in itertools.pairwise(fresh)), fresh
        assert fresh[0] <= 0.5 and fresh[-1] > 4 * res.eps_perm
        _, memo = res.curve("memoized", scenario)
        assert memo[-1] < fresh[-1] - 2


def test_a_one_report_mechanism_is_audited_fresh_only() -> None:
    res = audit_rounds(pldp.OUE(1.0, 6), [1, 10], trials=3000, rng=np.random.default_rng(5))
    assert res.ok and {r.mode for r in res.rows} == {"fresh"} and math.isnan(res.eps_perm)
    assert res.row("fresh", "same", 10).audited > 2.0
    with pytest.raises(ParameterError, match="keeps no memo"):
        audit_rounds(pldp.KRR(1.0, 3), [1], modes=["memoized"], trials=10)


def test_a_memo_that_changes_value_spends_eps_perm_per_value() -> None:
    """Memoization bounds each value, not the device: the swap history holds two values, and its
    audited bound passes one eps_perm (still under the claim of two)."""
    res = audit_rounds(pldp.LGRR(2.0, 0.5, 4), [30], trials=20_000, modes=["memoized"], rng=np.random.default_rng(6))
    assert res.ok
    assert res.row("memoized", "change", 30).audited > res.eps_perm + 0.5
    assert res.row("memoized", "change", 30).claimed == 2 * res.eps_perm


# --------------------------------------------------------------------------- change patterns
def test_one_value_against_a_change_halfway_passes_eps_perm_and_stays_under_its_exact_loss() -> None:
    """L-GRR over two items, eps_inf = 2, eps_1 = 1: a^(r/2) b^(r/2) against a^r, memoized. The pair's
    exact loss (pldp.privacy.pair_loss, the row's claim) is 1.22 at r = 2, 2.58 at r = 4, 5.38 at
    r = 8: the audited lower bound rises with it, passes eps_inf at r = 4 and stays under it at
    every r (a bound above the exact loss would be a bug of the sampler or of the accountant)."""
    mech = pldp.LGRR(2.0, 1.0, 2)
    res = audit_rounds(
        mech, [2, 4, 8], trials=60_000, modes=["memoized"], scenarios=["split"], rng=np.random.default_rng(13)
    )
    exact = {r: pldp.privacy.pair_loss(mech, [0] * (r // 2) + [1] * (r - r // 2), [0] * r) for r in (2, 4, 8)}
    assert [round(exact[r], 2) for r in (2, 4, 8)] == [1.22, 2.58, 5.38]
    assert res.ok, str(res)
    rows = {r: res.row("memoized", "split", r) for r in (2, 4, 8)}
    for r, row in rows.items():
        assert row.claimed == pytest.approx(exact[r], rel=1e-12)  # the audited direction is the larger one
        assert row.audited <= row.claimed
    assert rows[2].audited < mech.eps_perm < rows[4].audited < rows[8].audited
    assert rows[8].audited > 4.5 and rows[8].audited > rows[2].audited + 3


def test_a_unary_chain_leaks_the_change_through_every_bit() -> None:
    """L-OSUE over six items: for a^r against a^(r/2) b^(r/2) every bit of the report differs in law
    (two permanent responses against one), so the test reads all of them; the bound passes eps_inf
    and stays under the pair's exact loss; fresh reports differ only in the b rounds."""
    mech = pldp.LOSUE(2.0, 0.5, 6)
    res = audit_rounds(mech, [2, 10], trials=100_000, scenarios=["split"], rng=np.random.default_rng(14))
    assert res.ok, str(res)
    row = res.row("memoized", "split", 10)
    assert row.claimed == pytest.approx(pldp.privacy.pair_loss(mech, [0] * 5 + [1] * 5, [0] * 10), rel=1e-12)
    assert mech.eps_perm + 0.5 < row.audited <= row.claimed
    assert res.row("fresh", "split", 10).claimed == pytest.approx(5 * res.eps_1)
    assert res.row("memoized", "split", 2).audited < row.audited


def test_a_pair_too_costly_for_the_exact_loss_is_claimed_at_its_bound() -> None:
    """L-GRR over 40 items at r = 12: the exact loss would need more than MAX_EXACT configurations, so
    the claim is the proven bound min(eps_IRR m, eps_1 + (r - 1) eps_IRR), m = 6 differing rounds."""
    from pldp.privacy.rounds_search import chain_of

    mech = pldp.LGRR(2.0, 1.0, 40)
    res = audit_rounds(mech, [12], trials=2000, modes=["memoized"], scenarios=["split"], rng=np.random.default_rng(15))
    chain = chain_of(mech)
    assert res.ok and res.rows[0].claimed == pytest.approx(min(6 * chain.irr, chain.one + 11 * chain.irr))
    with pytest.raises(ParameterError, match="max_exact"):
        pldp.privacy.pair_loss(mech, [0] * 6 + [1] * 6, [0] * 12)


# --------------------------------------------------------------------------- one report
@pytest.mark.parametrize(
    "mech",
    [
        pldp.LGRR(2.0, 0.5, 4),
        pldp.LOSUE(2.0, 0.5, 4),
        pldp.LIPRR(pldp.ItemBudgets.from_array([1.0, 2.0, np.inf]), pldp.ItemBudgets.from_array([0.5, 1.0, np.inf])),
    ],
    ids=["LGRR", "LOSUE", "LIPRR"],
)
def test_the_one_report_audit_of_a_chain_checks_eps_1_tightly(mech: Any) -> None:
    """``audit`` of a memoized chain is its r = 1 game: every pair of items at its eps_1, tight."""
    res = audit(mech, trials=40_000, rng=np.random.default_rng(11))
    one = mech.budgets.epsilons
    assert res.ok and res.faithful and len(res.rows) == mech.d * (mech.d - 1)
    for r in res.rows:
        assert r.claimed == one[int(r.pair.split()[0])]
        if math.isfinite(r.claimed):
            assert r.claimed - 0.1 < r.audited <= r.claimed
    assert audit(mech, trials=20_000, attack="ldp-auditor", rng=np.random.default_rng(12)).ok


# --------------------------------------------------------------------------- power
@pytest.mark.parametrize("mech", [pldp.LGRR(1.0, 0.5, 2), pldp.LOSUE(1.0, 0.5, 4)], ids=["LGRR", "LOSUE"])
def test_a_memo_that_redraws_the_permanent_response_is_caught(monkeypatch: pytest.MonkeyPatch, mech: Any) -> None:
    """The same game, the same seed: the correct memo audits under eps_perm at r = 30; a memo that
    forgets (every round a new permanent response) is flagged above it."""
    kwargs: dict[str, Any] = {"trials": 4000, "modes": ["memoized"], "scenarios": ["same"]}
    good = audit_rounds(mech, [30], rng=np.random.default_rng(7), **kwargs)
    assert good.ok and good.rows[0].audited <= mech.eps_perm
    _forgetful(monkeypatch)
    bad = audit_rounds(mech, [30], rng=np.random.default_rng(7), **kwargs)
    assert not bad.ok and bad.rows[0].flagged and bad.rows[0].audited > mech.eps_perm + 1


def test_same_seed_same_result_and_json() -> None:
    a, b = (audit_rounds(pldp.LGRR(1.0, 0.5, 3), [2], trials=1500, rng=np.random.default_rng(8)) for _ in range(2))
    assert a.rows == b.rows
    data = json.loads(json.dumps(a.to_json()))
    assert data["flagged"] == 0 and len(data["rows"]) == 6 and data["eps_perm"] == 1.0
    assert "no game above its claim" in a.summary() and "memoized" in a.table()


def test_bad_arguments_are_refused() -> None:
    mech = pldp.LGRR(1.0, 0.5, 3)
    for kwargs, match in (
        ({"pair": (0, 0)}, "distinct"),
        ({"pair": (0, 3)}, "distinct"),
        ({"trials": 0}, "trials"),
        ({"alpha": 1.0}, "alpha"),
        ({"modes": ["daily"]}, "modes"),
        ({"scenarios": ["twice"]}, "scenarios"),
        ({"rounds": "0"}, "rounds"),
    ):
        with pytest.raises(ParameterError, match=match):
            audit_rounds(mech, **{"rounds": [1], "trials": 10, **kwargs})
    with pytest.raises(ParameterError, match="pldp mechanism"):
        audit_rounds("lgrr", [1])
    with pytest.raises(ParameterError, match="padding"):
        audit_rounds(pldp.protocols.PaddingSampling(pldp.OUE(1.0, 5), 2), [1])


def test_the_figure_draws_both_curves_and_the_budget_lines() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = audit_rounds(pldp.LGRR(1.0, 0.5, 2), [1, 5], trials=1000, rng=np.random.default_rng(9))
    assert isinstance(res, RoundsResult)
    ax = res.plot()
    labels = [line.get_label() for line in ax.get_lines()]
    assert "fresh, same value" in labels and "memoized, same value" in labels
    assert "memoized, one value vs a change" in labels and "one value vs a change: exact loss" in labels
    assert any(lbl.startswith("ε∞") for lbl in labels) and any(lbl.startswith("ε₁") for lbl in labels)
    plt.close(ax.figure)


def test_the_cli_names_the_memoized_chains() -> None:
    import argparse

    from pldp.cli.options import add_mechanism_arguments, mechanism_from_args

    parser = argparse.ArgumentParser()
    add_mechanism_arguments(parser)
    uniform = parser.parse_args(["--eps-perm", "2", "--eps", "0.5", "--d", "4"])
    for name, cls in (("lgrr", pldp.LGRR), ("loue", pldp.LOUE), ("LOSUE", pldp.LOSUE), ("lsue", pldp.LSUE),
                      ("lsoue", pldp.LSOUE)):  # fmt: skip
        mech = mechanism_from_args(name, uniform)
        assert type(mech) is cls and (mech.eps_perm, mech.eps_1, mech.d) == (2.0, 0.5, 4)
    personal = parser.parse_args(["--perm-budgets", "1,2,4", "--budgets", "0.5,1,2", "--pair-rule", "avg"])
    liprr = mechanism_from_args("liprr", personal)
    assert type(liprr) is pldp.LIPRR and list(liprr.permanent_budgets.epsilons) == [1.0, 2.0, 4.0]
    lidue = mechanism_from_args("lidue", personal)
    assert type(lidue) is pldp.LIDUE and lidue.notion == "AvgID-LDP"
    with pytest.raises(ParameterError, match="--eps-perm"):
        mechanism_from_args("losue", parser.parse_args(["--eps", "0.5", "--d", "4"]))


# --------------------------------------------------------------------------- command line
def _pldp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pldp.cli", *args], capture_output=True, text=True, timeout=120)


def test_cli_rounds_prints_the_games_and_writes_json_table_and_figure(tmp_path: Any) -> None:
    out = tmp_path / "out"
    done = _pldp("audit", "lgrr", "--eps-perm", "1", "--eps", "0.5", "--d", "2", "--rounds", "1,5,30",
                 "--trials", "3000", "--seed", "1", "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "audit over time of LGRR" in done.stdout and "no game above its claim" in done.stdout
    data = json.loads((out / "rounds.json").read_text())
    assert len(data["rows"]) == 18 and data["flagged"] == 0  # 2 modes x 3 histories x 3 numbers of rounds
    assert (out / "rounds.svg").read_text().lstrip().startswith("<?xml")
    assert "memoized" in (out / "rounds.txt").read_text()
    done = _pldp("audit", "losue", "--eps-perm", "2", "--eps", "0.5", "--d", "4", "--rounds", "2", "--pair", "3,1",
                 "--trials", "1000", "--seed", "1")  # fmt: skip
    assert done.returncode == 0 and "pair 3 vs 1" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["lgrr", "--eps-perm", "1", "--eps", "0.5", "--d", "2", "--rounds", "0,5"], "rounds are whole numbers"),
        (["lgrr", "--eps-perm", "1", "--eps", "0.5", "--d", "2", "--rounds", "five"], "rounds are whole numbers"),
        (["lgrr", "--eps", "0.5", "--d", "2", "--rounds", "5"], "needs --eps-perm"),
        (["lgrr", "--eps-perm", "1", "--eps", "0.5", "--d", "2", "--rounds", "5", "--pair", "0"], "--pair takes"),
        (["lgrr", "--eps-perm", "1", "--eps", "0.5", "--d", "2", "--rounds", "5", "--pairs", "2"], "--pairs does not"),
        (["lgrr", "--eps-perm", "1", "--eps", "0.5", "--d", "2", "--pair", "0,1"], "--pair chooses"),
        (["spec.json", "--rounds", "5"], "not a spec"),
        (["liprr", "--budgets", "0.5,1", "--rounds", "5"], "needs --perm-budgets"),
    ],
)
def test_cli_rounds_refuses_bad_input_in_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from pldp.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["audit", *args])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.startswith("pldp: error:") and message in err, err


def test_cli_rounds_errors_from_the_real_command() -> None:
    for args, message in (
        (["lgrr", "--eps-perm", "1", "--eps", "0.5", "--d", "2", "--rounds", "1,x"], "rounds are whole numbers"),
        (["spec.json", "--rounds", "5"], "not a spec"),
    ):
        done = _pldp("audit", *args)
        assert done.returncode == 2 and done.stderr.startswith("pldp: error:") and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_cli_rounds_exits_1_when_a_game_is_flagged(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pldp.cli import main

    _forgetful(monkeypatch)
    argv = ["audit", "lgrr", "--eps-perm", "1", "--eps", "0.5", "--d", "2", "--rounds", "30", "--trials", "3000"]
    assert main([*argv, "--seed", "2"]) == 1
    assert "ABOVE CLAIM" in capsys.readouterr().out
