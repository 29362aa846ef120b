"""Campaign specs, exact verification, the wire format, decoding and the Python client."""

from __future__ import annotations

import base64
import copy
import json
import math
from fractions import Fraction

import numpy as np
import pytest

import pldp
from pldp.channel.exact import epsilon_ceiling, exp_bounds, ratio_within
from pldp.channel.sampling import GRID
from pldp.client import Client
from pldp.deploy import ReportBatch, Spec, decode, spec_id, verify, wire
from pldp.errors import EstimationError, ParameterError, ReportError, SpecError, TallyError
from pldp.protocols import FEBSF
from tests.deploy_cases import LEVELS, answers_of, deploy_cases, spec_of, words

CASES = deploy_cases()


def _spec(name: str) -> Spec:
    return spec_of(CASES[name], name)


def _answers(name: str, n: int, rng: np.random.Generator) -> tuple[list | np.ndarray, dict]:
    return answers_of(name, CASES[name], n, rng)


_words = words


# ------------------------------------------------------------------------- exact arithmetic
@pytest.mark.parametrize("x", [Fraction(1, 3), Fraction(1), Fraction(22, 7), Fraction(700)])
def test_exp_bounds_bracket_e_to_the_x_tightly(x: Fraction) -> None:
    lo, hi = exp_bounds(x, 64)
    assert lo <= hi and (hi - lo) / lo < Fraction(1, 2**60)
    assert math.isclose(float(lo), math.exp(float(x)), rel_tol=1e-15)


def test_ratio_within_decides_at_the_last_bit() -> None:
    lo, hi = exp_bounds(Fraction(1), 200)
    below = math.floor(lo * 2**120)
    assert ratio_within(below, 2**120, 1.0)
    assert not ratio_within(below + 2, 2**120, 1.0) or (below + 2) / Fraction(2**120) <= lo
    assert not ratio_within(math.ceil(hi * 2**120), 2**120, 1.0)
    assert ratio_within(5, 0, math.inf) and not ratio_within(5, 0, 3.0)
    assert epsilon_ceiling(3, 1) == 1.098613 and ratio_within(3, 1, 1.098613) and not ratio_within(3, 1, 1.098612)


# ------------------------------------------------------------------------------- the spec
@pytest.mark.parametrize("name", list(CASES))
def test_every_oracle_has_a_spec_that_round_trips_and_verifies(name: str) -> None:
    spec = _spec(name)
    again = Spec.from_json(spec.to_json())
    assert again == spec and again.to_json() == spec.to_json()
    assert Spec.from_json(spec.to_json(indent=None)).id == spec.id
    assert spec.mechanism().fingerprint == spec.id
    result = verify(spec)
    assert result.holds and result.rows
    assert all(r.realised <= r.claimed for r in result.rows)
    assert verify(spec.to_json()).holds


def test_a_new_parameter_or_question_is_a_new_id() -> None:
    a = Spec.from_mechanism(pldp.KRR(1.0, 3), question="q", labels=["x", "y", "z"])
    assert Spec.from_mechanism(pldp.KRR(1.0, 3), question="q2", labels=["x", "y", "z"]).id != a.id
    assert Spec.from_mechanism(pldp.KRR(1.01, 3), question="q", labels=["x", "y", "z"]).id != a.id
    assert Spec.from_mechanism(pldp.KRR(1.0, 3), question="q", labels=["x", "y", "w"]).id != a.id
    assert spec_id(a.to_dict()) == a.id


def test_the_spec_states_exactly_the_thresholds_the_library_runs() -> None:
    spec = _spec("iprr")
    mech = spec.mechanism()
    root = spec.root
    assert root.keep == mech.keep_threshold and list(root.weights) == mech.weights.tolist()
    assert mech.delta == root.keep / GRID and np.array_equal(mech.q, np.array(root.weights) / GRID)
    oue = _spec("oue")
    assert np.array_equal(np.array(oue.root.a) / GRID, oue.mechanism().a)


def test_febsf_level_protection_is_the_errata_value_not_eps_p() -> None:
    """ERRATA FEBSF-6: levels 0.1..1.0, eps_p = 0.3: 1.10 (k-RR, |D| = 16), 8.83 (OUE, 16), 23.6 (OUE, 42)."""
    for oracle, expected in (("krr", 1.10), ("oue", 8.83)):
        rows = [r for r in verify(_spec(f"febsf-{oracle}")).rows if "the level itself" in r.part]
        assert len(rows) == 1 and abs(rows[0].realised - expected) < 0.006 and rows[0].holds
        assert rows[0].realised > 0.3
    big = Spec.from_mechanism(FEBSF(LEVELS, 0.3, 42, "oue"), question="q")
    (row,) = [r for r in verify(big).rows if "the level itself" in r.part]
    assert abs(row.realised - 23.6) < 0.05
    # a spec that claims eps_p for the level is refused
    data = big.to_dict()
    data["sampler"]["root"]["level_epsilon"] = 0.3
    data["id"] = spec_id(data)
    assert not verify(data).holds
    with pytest.raises(SpecError, match="privacy claim fails"):
        Spec.from_json(data)


def _resigned(data: dict) -> dict:
    data["id"] = spec_id(data)
    return data


def test_hand_edited_specs_are_refused_with_a_reason() -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="q", labels=["a", "b", "c"])
    raised = spec.to_dict()
    root = raised["sampler"]["root"]
    root["keep"] += 3000
    root["weights"] = [w - 1000 for w in root["weights"]]
    _resigned(raised)
    result = verify(raised)
    assert not result.holds and result.failures[0].realised > 1.0
    with pytest.raises(SpecError, match="privacy claim fails"):
        Spec.from_json(raised)
    with pytest.raises(SpecError, match="privacy claim fails"):
        Client(raised)
    dup = spec.to_dict()
    dup["labels"] = ["a", "a", "c"]
    with pytest.raises(SpecError, match="duplicate labels"):
        verify(_resigned(dup))
    off_grid = spec.to_dict()
    off_grid["sampler"]["root"]["keep"] -= 1
    with pytest.raises(SpecError, match="must be 2\\*\\*32"):
        Spec.from_json(_resigned(off_grid))
    altered = spec.to_dict()
    altered["question"] = "another question"
    with pytest.raises(SpecError, match="does not match its content"):
        Client(altered)
    unary = _spec("oue").to_dict()
    unary["sampler"]["root"]["a"][0] += 2**28
    with pytest.raises(SpecError, match="privacy claim fails"):
        Spec.from_json(_resigned(unary))
    consistent_but_not_pldp = spec.to_dict()
    consistent_but_not_pldp["sampler"]["root"]["keep"] -= 5
    consistent_but_not_pldp["sampler"]["root"]["weights"][0] += 5  # more private, but not what KRR runs
    with pytest.raises(SpecError, match="not those of the spec's oracle"):
        Spec.from_json(_resigned(consistent_but_not_pldp))
    with pytest.raises(SpecError, match="format"):
        Spec.from_json({**spec.to_dict(), "format": "pldp.spec/9"})


# --------------------------------------------------------------------------- client + decode
@pytest.mark.parametrize("name", list(CASES))
def test_client_reports_decode_to_the_same_tally_from_json_and_arrow(name: str) -> None:
    spec = _spec(name)
    answers, kw = _answers(name, 500, np.random.default_rng(1))
    batch = Client(spec, random=_words(2)).reports(answers, **kw)
    tally = decode(spec, batch)
    assert tally.n == 500 and tally.fingerprint == spec.id
    assert decode(spec, batch.to_json()) == tally
    assert decode(spec, json.dumps(batch.to_json())) == tally
    assert decode(spec, [json.loads(line) for line in batch.to_json_lines().splitlines()]) == tally
    pytest.importorskip("pyarrow")
    assert decode(spec, batch.to_arrow()) == tally
    for method in spec.mechanism().methods[:1]:
        assert spec.mechanism().estimate(tally, method).n == 500


@pytest.mark.parametrize("name", list(CASES))
def test_a_batch_is_the_same_bytes_as_reports_made_one_by_one(name: str) -> None:
    spec = _spec(name)
    answers, kw = _answers(name, 12, np.random.default_rng(3))
    batch = Client(spec, random=_words(4)).reports(answers, **kw)
    single = Client(spec, random=_words(4))
    one_by_one = []
    for i, a in enumerate(answers):
        extra = {}
        if "level" in kw:
            extra["level"] = int(kw["level"][i])
        if "levels" in kw:
            extra["levels"] = [int(v) for v in kw["levels"][i]]
        one_by_one.append(single.report(a, **extra))
    assert [json.dumps(r) for r in batch.reports()] == [json.dumps(r) for r in one_by_one]


def _outcome(spec: Spec, data) -> tuple:
    try:
        b = ReportBatch.from_json(data, spec.root, spec.id)
    except ReportError as exc:
        return ("refused", str(exc), exc.index)
    return ("read", b.ids.tobytes(), {k: v.tolist() for k, v in sorted(b.columns.items())})


def _nested(report: dict, **parts: object) -> None:
    """Set ``parts`` in a payload that is an object (a leveled spec's); leave any other alone."""
    if isinstance(report["payload"], dict):
        report["payload"].update(parts)


@pytest.mark.parametrize("name", list(CASES))
def test_the_whole_batch_reader_accepts_and_refuses_exactly_what_the_per_report_reader_does(
    name: str, monkeypatch
) -> None:
    spec = _spec(name)
    answers, kw = _answers(name, 6, np.random.default_rng(8))
    good = Client(spec, random=_words(9)).reports(answers, **kw).to_json()
    first = good["reports"][0]
    mutations = [
        lambda r: None,
        lambda r: r[4].update(payload=True),
        lambda r: r[4].update(payload=2**31),
        lambda r: r[4].update(payload=-1),
        lambda r: r[4].update(payload=first["payload"] if isinstance(first["payload"], int) else "AA=="),
        lambda r: r[4].update(payload=str(first["payload"]).encode() if isinstance(first["payload"], str) else 1.0),
        lambda r: r[3].update(id=r[3]["id"].upper()),
        lambda r: r[3].update(id=r[3]["id"][:31]),
        lambda r: r[3].update(id=r[3]["id"][:2] + " " + r[3]["id"][3:]),  # bytes.fromhex takes spaces
        lambda r: r[3].update(id=r[3]["id"][:30] + "0g"),
        lambda r: r[4].update(payload=2**70),  # too large for int64
        lambda r: r.clear(),
        lambda r: r[3].update(id=r[1]["id"]),
        lambda r: r[2].update(extra=1),
        lambda r: r.__setitem__(5, [r[5]]),
        # a payload under a level ({"level": l, "data": x} or {"data": x}): each part wrong in turn
        lambda r: _nested(r[4], level=99),
        lambda r: _nested(r[4], level=True),
        lambda r: _nested(r[4], level=-1),
        lambda r: _nested(r[4], level=2**70),
        lambda r: _nested(r[4], level="0"),
        lambda r: _nested(r[4], data=True),
        lambda r: _nested(r[4], data=2**31),
        lambda r: _nested(r[4], data="AA=="),
        lambda r: _nested(r[4], extra=1),
        lambda r: isinstance(r[4]["payload"], dict) and r[4]["payload"].popitem(),  # an object lacking a member
    ]
    for mutate in mutations:
        fast = copy.deepcopy(good)
        mutate(fast["reports"])
        slow = copy.deepcopy(fast)
        got = _outcome(spec, fast)
        with monkeypatch.context() as m:
            m.setattr(wire, "_read_fast", lambda *args: None)
            want = _outcome(spec, slow)
        assert got == want


def test_padding_rejects_words_beyond_the_last_whole_multiple() -> None:
    spec = _spec("oue-ps")
    # slot word for L = 3: 2**32 mod 3 = 1, so the word 2**32 - 1 is rejected and the next one used
    stream = [1, 2, 3, 4, GRID - 1, 5, 7] + [0] * 7 + [9] * 20
    it = iter(stream)
    client = Client(spec, random=lambda n: np.array([next(it) for _ in range(n)], dtype=np.uint32))
    report = client.report([0, 2, 4])
    assert report["id"] == "00000001000000020000000300000004"
    bits = np.unpackbits(np.frombuffer(base64.b64decode(report["payload"]), np.uint8))[:7]
    # slot 5 mod 3 = 2 -> item 4 of {0, 2, 4}; every coin is the word 0 < threshold, so all bits are 1
    assert bits.tolist() == [1] * 7


def _bad(spec: Spec, mutate) -> ReportError:
    batch = Client(spec, random=_words(5)).reports([0, 1, 2, 0]).to_json()
    mutate(batch)
    with pytest.raises(ReportError) as info:
        decode(spec, batch)
    return info.value


def test_decode_refuses_each_malformed_report_by_index_and_reason() -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="q", labels=["a", "b", "c"])
    err = _bad(spec, lambda b: b["reports"][2].update(payload=3))
    assert err.index == 2 and "out of range" in str(err)
    err = _bad(spec, lambda b: b["reports"][3].update(id=b["reports"][1]["id"]))
    assert err.index == 3 and "duplicate" in str(err)
    err = _bad(spec, lambda b: b["reports"][1].update(id="XYZ"))
    assert err.index == 1 and "hex" in str(err)
    err = _bad(spec, lambda b: b.update(spec="0" * 32))
    assert "names spec" in str(err)
    err = _bad(spec, lambda b: b["reports"][0].update(payload="1"))
    assert err.index == 0
    oue = _spec("oue")  # 5 bits in one byte: 3 padding bits

    def mutate_bits(payload: str):
        def f(b):
            b["reports"][1]["payload"] = payload

        return f

    for payload, reason in (("/w==", "padding bits"), ("AAA=", "bytes"), ("!!", "base64")):
        batch = Client(oue, random=_words(6)).reports([0, 1, 2]).to_json()
        mutate_bits(payload)(batch)
        with pytest.raises(ReportError, match=reason) as info:
            decode(oue, batch)
        assert info.value.index == 1
    full = list(Client(spec, random=_words(7)).reports([0, 1]).reports())
    full[1]["format"] = "pldp.report/0"
    with pytest.raises(ReportError, match="unknown format"):
        decode(spec, full)


def test_a_tally_of_another_campaign_is_refused() -> None:
    a = Spec.from_mechanism(pldp.KRR(1.0, 3), question="q", labels=["a", "b", "c"])
    b = Spec.from_mechanism(pldp.KRR(1.0, 3), question="other", labels=["a", "b", "c"])
    ta = decode(a, Client(a).reports(["a", "b"]))
    tb = decode(b, Client(b).reports(["a", "c"]))
    with pytest.raises(EstimationError):
        b.mechanism().estimate(ta)
    with pytest.raises(TallyError):
        ta.merge(tb)
    with pytest.raises(ReportError):
        decode(b, Client(a).reports(["a"]))
    assert (ta + decode(a, Client(a).reports(["c"]))).n == 3


def test_client_refuses_answers_outside_the_spec() -> None:
    spec = _spec("febsf-krr")
    client = Client(spec)
    with pytest.raises(ParameterError, match="level"):
        client.report(3)
    with pytest.raises(ParameterError, match="level"):
        client.report(3, level=10)
    with pytest.raises(ParameterError, match="not one of"):
        Client(Spec.from_mechanism(pldp.KRR(1.0, 2), question="q", labels=["y", "n"])).report("maybe")
    with pytest.raises(ParameterError, match="repeats"):
        Client(_spec("oue-ps")).report([1, 1])


def test_os_randomness_by_default_gives_distinct_ids() -> None:
    spec = _spec("krr")
    ids = Client(spec).reports(np.zeros(1000, dtype=int)).hex_ids
    assert len(set(ids)) == 1000


# ------------------------------------------------------------------------------------- CLI
def test_cli_writes_verifies_and_simulates(tmp_path, capsys) -> None:
    from pldp.cli import main

    assert main(["spec", "new", "iprr", "--labels", "a,b,c", "--budgets", "0.5,1,inf", "--question", "q"]) == 0
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(capsys.readouterr().out)
    assert main(["spec", "verify", str(spec_path)]) == 0
    assert "every claim holds" in capsys.readouterr().out
    (tmp_path / "a.csv").write_text("answer\na\nc\nc\n")
    out = tmp_path / "r.jsonl"
    assert main(["clients", "simulate", str(spec_path), "--answers", str(tmp_path / "a.csv"), "--out", str(out)]) == 0
    spec = Spec.from_json(spec_path.read_text())
    assert decode(spec, [json.loads(x) for x in out.read_text().splitlines()]).n == 3
    data = json.loads(spec_path.read_text())
    data["sampler"]["root"]["keep"] += 10**6
    data["sampler"]["root"]["weights"][0] -= 10**6
    spec_path.write_text(json.dumps(_resigned(data)))
    assert main(["spec", "verify", str(spec_path)]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_the_whole_batch_item_set_reader_reads_and_refuses_exactly_what_the_per_set_reader_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Client.reports on item-sets: the same inputs, or the same error, with and without the fast path."""
    import pldp.client as client_module

    spec = Spec.from_mechanism(CASES["oue-ps"], question="sets?", labels=["a", "b", "c", "d", "e"])
    node = spec.root
    batches: list[list] = [
        [],
        [[]],
        [[0, 2], [], [4, 1, 3], [2]],
        [["a", "c"], ["e"], []],
        [[0, 2], ["a"]],  # indices and labels in one batch
        [[0, "c"]],  # in one set
        [[1, 1]],
        [["b", "b"]],
        [[0], [3, 5]],
        [[-1]],
        [[True]],
        [[np.int64(2), 0]],
        [[2**70]],
        [["z"]],
        [[0.0]],
        [(3, 1), {4, 0}],
    ]
    rng = np.random.default_rng(31)
    batches.append([list(rng.choice(5, size=int(rng.integers(0, 6)), replace=False)) for _ in range(200)])
    batches.append([[int(v) for v in s] for s in batches[-1]])

    def outcome(answers: list) -> tuple:
        inputs = client_module._Inputs(Client(spec))
        try:
            flat, offsets, sizes = node.accept(inputs, copy.deepcopy(answers), None, None, 0)
        except Exception as exc:  # the error itself is what is compared
            return ("refused", type(exc).__name__, str(exc))
        return ("read", flat.dtype.str, flat.tolist(), offsets.tolist(), sizes.tolist())

    for answers in batches:
        got = outcome(answers)
        with monkeypatch.context() as m:
            m.setattr(client_module, "_item_sets", lambda *args: None)
            want = outcome(answers)
        assert got == want, answers
