"""Subset selection: the node's program (rejections included) and claim, SS's refusals, its estimates
and simulation against theory, and the variance that puts it below OUE at d = 1,000."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from pldp.attacks import fake_reports
from pldp.channel import check_claims, parse_node
from pldp.channel.sampling import GRID
from pldp.channel.subset import SubsetNode, subset_rows
from pldp.channel.words import Cursor, RejectedError, WordStream
from pldp.client import Client
from pldp.deploy import ReportBatch, Spec, decode
from pldp.deploy import count as count_module
from pldp.deploy.count import check_payload, count_table
from pldp.errors import ParameterError, ReportError, SpecError, TallyError
from pldp.mechanisms.subset import SS, ss_k, ss_keep
from pldp.mechanisms.unary import OUE
from pldp.testing import check_oracle
from tests.deploy_cases import spec_of
from tests.tolerances import FLOAT_RTOL

#: A node of 10 items, subsets of 3.
NODE = SS(1.0, 10, k=3).sampler()
#: Words of the crafted report: membership, a choice of 9 rejected (2**32 - 1), then u = 5, 3, 6.
#: [d] \ {4} = 0 1 2 3 5 6 7 8 9; swaps (0, 5), (1, 4), (2, 8) put 6, 5, 9 first.
CRAFTED = [GRID - 1, 5, 3, 6]


def _one(first: int, x: int = 4) -> list[int]:
    words = iter([first, *CRAFTED])
    out = NODE.empty_columns(1)
    NODE.draw_one(np.array([x]), WordStream(lambda n: np.array([next(words) for _ in range(n)], dtype=np.uint32)), out)
    return np.flatnonzero(np.unpackbits(out["bits"][0])[: NODE.d]).tolist()


def test_the_program_maps_words_to_the_subset_a_rejected_word_replaced() -> None:
    assert _one(NODE.keep - 1) == [4, 5, 6]  # x and the first k - 1 drawn
    assert _one(NODE.keep) == [5, 6, 9]  # the k drawn
    # a batch meets the rejected word and asks to be redrawn one report at a time
    words = np.array([0, *CRAFTED[:3]], dtype=np.uint32)
    with pytest.raises(RejectedError):
        NODE.draw(np.array([4]), Cursor(words, np.zeros(1, dtype=np.int64)), np.arange(1), NODE.empty_columns(1))
    # with accepted words, the batch program is the one-report program
    out = NODE.empty_columns(1)
    NODE.draw(
        np.array([4]), Cursor(np.array([0, 5, 3, 6], dtype=np.uint32), np.zeros(1, dtype=np.int64)), np.arange(1), out
    )
    assert np.flatnonzero(np.unpackbits(out["bits"][0])[:10]).tolist() == [4, 5, 6]


def test_one_report_and_a_batch_shuffle_alike() -> None:
    """subset_rows's two paths (a list for one row, arrays for many) on the same random choices."""
    rng = np.random.default_rng(12)
    d, k, n = 37, 11, 300
    x = rng.integers(0, d, n)
    inside = rng.random(n) < 0.5
    choices = np.stack([rng.integers(0, d - 1 - t, n) for t in range(k)], axis=1)
    one = np.concatenate([subset_rows(x[i : i + 1], inside[i : i + 1], choices[i : i + 1], d) for i in range(n)])
    assert one.tobytes() == subset_rows(x, inside, choices, d).tobytes()


def _client(spec: Spec, words: np.ndarray) -> Client:
    """A client reading ``words`` in order."""
    pos = 0

    def source(n: int) -> np.ndarray:
        nonlocal pos
        pos += n
        return words[pos - n : pos]

    return Client(spec, random=source)


def test_a_batch_with_rejections_is_the_same_bytes_as_single_reports() -> None:
    """Every 7th word 2**32 - 1 (rejected by every choice ``d - 1 - t`` that is not a power of two):
    the batch falls back to one report at a time and writes what single reports write."""
    spec = spec_of(SS(1.0, 12, k=4), "ss")
    words = np.random.default_rng(3).integers(0, GRID, size=4000, dtype=np.uint64).astype(np.uint32)
    words[3::7] = GRID - 1
    answers = [int(a) for a in np.random.default_rng(4).integers(0, 12, size=40)]
    batch = _client(spec, words).reports(answers).to_json()["reports"]
    single = _client(spec, words)
    ones = [single.report(a) for a in answers]
    assert [(r["id"], r["payload"]) for r in batch] == [(r["id"], r["payload"]) for r in ones]
    sizes = [int(np.unpackbits(np.frombuffer(base64.b64decode(r["payload"]), dtype=np.uint8)).sum()) for r in ones]
    assert sizes == [4] * 40


def test_the_claim_is_exact_and_keep_is_the_largest_that_holds() -> None:
    for eps, d, k in ((1.0, 10, 3), (4.0, 1000, 18), (0.3, 7, 1), (2.0, 50, 49)):
        keep = ss_keep(eps, d, k)
        assert check_claims(SubsetNode(d, k, keep, eps)).holds
        assert not check_claims(SubsetNode(d, k, keep + 1, eps)).holds  # one grid step too generous
    v = check_claims(NODE)
    assert v.holds and v.rows[0].realised <= 1.0
    assert not check_claims(SubsetNode(10, 3, NODE.keep, v.rows[0].realised * (1 - 1e-9))).holds
    # the ratio's inverse is checked too: a keep far below the ideal fails as well
    assert not check_claims(SubsetNode(10, 3, 1, 1.0)).holds
    assert SS(4.0, 1000).privacy().holds


@pytest.mark.parametrize(("eps", "d", "k"), [(3e-10, 1000, 269), (1e-10, 10, 3)])
def test_a_budget_finer_than_the_grid_is_refused(eps: float, d: int, k: int) -> None:
    """No ``keep`` puts ``keep (d - k)`` and ``(2**32 - keep) k`` within ``e^eps`` both ways: the largest
    that meets the one direction fails the other, and the oracle refuses rather than build a node
    whose claim fails."""
    for keep in range(GRID * k // d - 2, GRID * k // d + 3):  # around the ideal, where both come closest
        assert not check_claims(SubsetNode(d, k, keep, eps)).holds
    with pytest.raises(ParameterError, match="too small"):
        ss_keep(eps, d, k)
    with pytest.raises(ParameterError, match="too small"):
        SS(eps, d, k=k)


def test_the_json_form_round_trips_and_refuses_bad_nodes() -> None:
    node = SS(1.5, 300, k=40).sampler()
    assert node.takes_one_item and not (node.takes_itemsets or node.multi_attribute or node.memoized)
    assert [(c.name, c.kind, c.size) for c in node.columns("a0.")] == [("a0.bits", "bits", 300)]
    assert SubsetNode.parse(node.to_json(), "root") == node
    assert parse_node(node.to_json()) == node
    bad = [
        {**node.to_json(), "k": 300},
        {**node.to_json(), "k": 0},
        {**node.to_json(), "keep": GRID},
        {**node.to_json(), "keep": 0},
        {**node.to_json(), "d": 1},
        {**node.to_json(), "epsilon": "inf"},
        {**node.to_json(), "extra": 1},
        {k: v for k, v in node.to_json().items() if k != "keep"},
    ]
    for obj in bad:
        with pytest.raises(SpecError, match=r"^root"):
            SubsetNode.parse(obj, "root")


def test_the_wire_format_example_is_ss_s_node() -> None:
    """The subset node shown in ``docs/wire-format.md`` is the node pldp writes for ``SS(1.0, 1000)``."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "wire-format.md").read_text(encoding="utf-8")
    block = text.split("The node of `pldp.SS(1.0, 1000)`", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    assert parse_node(json.loads(block)) == SS(1.0, 1000).sampler()


def test_parameters_and_refusals() -> None:
    assert ss_k(4.0, 1000) == 18 and ss_k(5.0, 10) == 1 and ss_k(0.01, 2) == 1  # round(d / (e^eps + 1)), in [1, d)
    m = SS(2.0, 50, k=7)
    assert SS.from_params(m.params()) == m and m.fingerprint == SS(2.0, 50, k=7).fingerprint
    for make in (lambda: SS(0.0, 5), lambda: SS(1.0, 1), lambda: SS(1.0, 5, k=0), lambda: SS(1.0, 5, k=5)):
        with pytest.raises(ParameterError):
            make()


def test_the_tally_refuses_a_report_of_other_than_k_items() -> None:
    m = SS(1.0, 10, k=3)
    rep = m.perturb(np.arange(4), np.random.default_rng(1))
    every = rep.copy()
    every[2] = m.sampler().empty_columns(1)["bits"][0] | np.array([0xFF, 0xC0], dtype=np.uint8)  # all 10 items
    with pytest.raises(ReportError, match="report 2: 10 items, not k = 3") as err:
        m.tally(every)
    assert err.value.index == 2
    fewer = rep.copy()
    fewer[1] = 0
    with pytest.raises(ReportError, match="report 1: 0 items"):
        m.tally(fewer)
    with pytest.raises(TallyError):
        m.tally(rep[:, :1])  # not ceil(d / 8) bytes
    assert m.tally(rep).counts.sum() == 4 * 3


def test_a_collector_refuses_a_report_of_every_item() -> None:
    """decode (the collector's path) refuses a batch holding a report of all ``d`` bits, naming it."""
    spec = spec_of(SS(1.0, 12, k=4), "ss")
    words = np.random.default_rng(2).integers(0, GRID, size=200, dtype=np.uint64).astype(np.uint32)
    batch = _client(spec, words).reports([1, 2, 3]).to_json()
    assert decode(spec, batch).counts.sum() == 3 * 4
    batch["reports"][1]["payload"] = base64.b64encode(bytes([0xFF, 0xF0])).decode()
    with pytest.raises(ReportError, match="report 1: 12 items, not k = 4"):
        decode(spec, batch)


def test_the_payload_checks_refuse_a_report_of_every_item(monkeypatch: pytest.MonkeyPatch) -> None:
    """The range checks of payload columns (report files, :func:`check_payload`, :func:`count_table`)
    refuse a report of other than ``k`` items, as the oracle's tally does: the node's own check.
    ``count_table``'s tally is replaced by the identity, so the refusal is the check's."""
    m = SS(1.0, 12, k=4)
    node = m.sampler()
    cols = {"bits": m.perturb(np.arange(3), np.random.default_rng(5))}
    check_payload(node, cols, 3)
    cols["bits"][1] = [0xFF, 0xF0]  # every item: each column within its range, no padding bit set
    with pytest.raises(ReportError, match="report 1: 12 items, not k = 4") as err:
        check_payload(node, cols, 3)
    assert err.value.index == 1
    pytest.importorskip("pyarrow")
    monkeypatch.setattr(count_module, "tally_columns", lambda spec, columns: columns)
    spec, ids = SimpleNamespace(root=node), np.zeros((3, 16), dtype=np.uint8)
    with pytest.raises(ReportError, match="report 1: 12 items, not k = 4"):
        count_table(spec, ReportBatch("f" * 32, ids, cols, node).to_arrow())
    cols["bits"][1] = [0xF0, 0x00]  # four items: counted
    assert (
        count_table(spec, ReportBatch("f" * 32, ids, cols, node).to_arrow())["bits"].tolist() == cols["bits"].tolist()
    )


def test_reports_hold_k_items_and_the_count_is_the_bit_count() -> None:
    m = SS(1.0, 40, k=9)
    x = np.arange(500) % 40
    a, b = m.perturb(x, np.random.default_rng(7)), m.perturb(x, np.random.default_rng(7))
    assert a.tobytes() == b.tobytes()
    bits = np.unpackbits(a, axis=1)[:, :40]
    assert (bits.sum(axis=1) == 9).all()
    assert m.tally(a).counts.tolist() == bits.sum(axis=0).tolist()


def test_the_pair_law_is_the_reports_law() -> None:
    """The categories of 40,000 reports of item 2 against item 7: every category's rate within 4.5
    binomial standard errors of the law; the law of item 7 is the mirror image, with the claimed ratio.
    False alarms: at most 4 * 6.8e-6 = 2.7e-5 (Bonferroni over the categories, normal approximation)."""
    m = SS(1.0, 10, k=3)
    node = m.sampler()
    p0, p1, classify = node.pair_law(2, 7, "")
    assert p0.sum() == pytest.approx(1, abs=1e-12) and p1.tolist() == [p0[1], p0[0], p0[2], p0[3]]
    assert p0[0] / p1[0] == pytest.approx(node.keep * 7 / ((GRID - node.keep) * 3), rel=FLOAT_RTOL)
    n = 40_000
    cat = classify({"bits": m.perturb(np.full(n, 2), np.random.default_rng(11))})
    rate = np.bincount(cat, minlength=4) / n
    assert np.all(np.abs(rate - p0) < 4.5 * np.sqrt(p0 * (1 - p0) / n))


def test_ss_beats_oue_at_d_1000_eps_4() -> None:
    """The per-report variance factor q*(1 - q*) / (p* - q*)^2 at an absent item, from the closed
    forms: SS with k = 18 gives 0.0739, OUE 4 e^eps / (e^eps - 1)^2 = 0.0760; SS's grid support
    matches its closed form to the grid's rounding (keep within 1 of its ideal: 2**-32 relative)."""
    e, d = math.exp(4.0), 1000
    k = ss_k(4.0, d)
    p = k * e / (k * e + d - k)
    q = (p * (k - 1) + (1 - p) * k) / (d - 1)
    ss = q * (1 - q) / (p - q) ** 2
    oue = 4 * e / (e - 1) ** 2
    assert (k, round(ss, 4), round(oue, 4)) == (18, 0.0739, 0.0760)
    gp, gq = SS(4.0, d).sampler().support
    # the grid's p* is within 2**-32 of the ideal (keep is the largest under it), and q* = (k - p*) / (d - 1)
    # moves by dp / (d - 1): V = q(1 - q) / (p - q)^2 moves by the relative
    # dp (|1 - 2q| / ((d - 1) q (1 - q)) + 2 d / ((d - 1)(p - q))) to first order (the rest is under
    # 1e-8 of it), with one percent for that and the float arithmetic
    rel = 1.01 * (abs(1 - 2 * q) / ((d - 1) * q * (1 - q)) + 2 * d / ((d - 1) * (p - q))) / GRID
    assert gq * (1 - gq) / (gp - gq) ** 2 == pytest.approx(ss, rel=rel)
    op, oq = OUE(4.0, d).support
    assert oq[0] * (1 - oq[0]) / (op[0] - oq[0]) ** 2 == pytest.approx(oue, rel=1e-3)  # OUE's coins are 16-bit


def test_simulate_has_each_counts_law() -> None:
    """simulate's counts: means and variances of Bin(t, p*) + Bin(n - t, q*), to 4.5 standard errors
    over 400 draws (a variance's relative SE is sqrt(2 / 399) = 0.071); the per-user counts sum to
    n k exactly, which simulate's do not (module docstring of pldp.mechanisms.subset). False alarms,
    the largest of 20 items' (Bonferroni): means 20 * 6.8e-6 (normal), variances 20 * 1.9e-5 (the
    chi-square tails of 399 degrees of freedom beyond 4.5 sd): a family-wise alpha under 5e-4."""
    m, t = SS(1.0, 20, k=5), np.arange(20) * 10
    rng = np.random.default_rng(5)
    sims = np.array([m.simulate(t, rng).counts for _ in range(400)])
    p, q = m.sampler().support
    n = t.sum()
    mean = t * p + (n - t) * q
    var = t * p * (1 - p) + (n - t) * q * (1 - q)
    assert np.max(np.abs(sims.mean(axis=0) - mean) / np.sqrt(var / 400)) < 4.5
    assert np.max(np.abs(sims.var(axis=0, ddof=1) / var - 1)) < 4.5 * math.sqrt(2 / 399)
    x = np.repeat(np.arange(20), t)
    assert m.tally(m.perturb(x, rng)).counts.sum() == n * 5


@pytest.mark.parametrize("r", [2, 7])
def test_mga_fakes_hold_the_targets(r: int) -> None:
    """With r <= k every fake holds every target; with r > k, k of them (each w.p. k / r)."""
    m = SS(2.0, 30, k=4)
    targets = np.arange(r) * 3
    fake = fake_reports(m, targets, 3000, rng=np.random.default_rng(r), strategy="mga")
    counts = m.tally(fake).counts  # of k items each: the tally takes them
    want = min(1.0, 4 / r) * 3000
    se = math.sqrt(3000 * min(1.0, 4 / r) * (1 - min(1.0, 4 / r)))
    assert np.all(np.abs(counts[targets] - want) <= 4.5 * se)


def test_the_js_client_writes_the_same_bytes_through_rejections(tmp_path: Path, node: str) -> None:
    """Both clients on a stream where every 5th word is 2**32 - 1 (the rejection branch runs in
    both), single reports and batches (tests/test_js_client.py's driver)."""
    from tests.test_js_client import _node, _python_lines

    spec = spec_of(SS(1.0, 12, k=4), "ss")
    rng = np.random.default_rng(9)
    calls: list[dict[str, Any]] = [
        {"method": "report", "answer": int(a), "choices": {}} for a in rng.integers(0, 12, 5)
    ]
    calls.append({"method": "reports", "answers": [int(a) for a in rng.integers(0, 12, 30)], "choices": {}})
    calls.append({"method": "report", "answer": 11, "choices": {}})
    words = np.random.default_rng(7).integers(0, GRID, size=40_000, dtype=np.uint64).astype(np.uint32)
    words[4::5] = GRID - 1
    want = _python_lines(spec, words, calls)
    assert _node(tmp_path, spec.to_json(), words, calls) == want


def test_the_conformance_battery_passes_with_subsets_of_several_items() -> None:
    """The standard case (epsilon 1 over 5 items) has k = 1; here every check of the battery on
    k = 4 of 12 items, the variant one budget step more generous."""
    results = check_oracle(SS(1.0, 12, k=4), variant=SS(1.25, 12, k=4), bad=(lambda: SS(1.0, 12, k=12),))
    assert set(results.values()) == {"passed"}
