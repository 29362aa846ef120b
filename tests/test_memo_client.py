"""Memoized specs and the Python client's memo store (issue 27 item 2).

A memoized spec states its memo key; the client draws a value's permanent randomized response (PRR)
once, keeps it in its store (a 0600 file replaced atomically) before the report is returned, and
draws an instantaneous response (IRR) per report. The JS side, byte for byte, and the refusals of a
corrupt store in both clients are in ``tests/test_js_client.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.channel.sampling import GRID
from pldp.client import Client
from pldp.deploy import Spec, verify
from pldp.deploy.memostore import MemoryStore, MemoStoreError, default_store_path, permanent_fingerprint
from pldp.deploy.spec import memo_key_default
from pldp.errors import SpecError

PERM = pldp.ItemBudgets.from_array([1.0, 2.0, 2.0, 4.0])
ONE = pldp.ItemBudgets.from_array([0.5, 1.0, 1.0, 2.0])
CHAINS: dict[str, Callable[[], Any]] = {
    "L-GRR": lambda: pldp.LGRR(2.0, 1.0, 4),
    "L-IPRR": lambda: pldp.LIPRR(PERM, ONE),
    "L-OUE": lambda: pldp.LOUE(2.0, 1.0, 4),
    "L-OSUE": lambda: pldp.LOSUE(2.0, 1.0, 4),
    "L-SUE": lambda: pldp.LSUE(2.0, 1.0, 4),
    "L-SOUE": lambda: pldp.LSOUE(2.0, 1.0, 4),
    "L-IDUE": lambda: pldp.LIDUE(PERM, ONE),
}
LABELS = ["a", "b", "c", "d"]


class Words:
    """A word source that serves a fixed stream and counts what it served."""

    def __init__(self, words: list[int] | np.ndarray) -> None:
        self.words = np.asarray(words, dtype=np.uint32)
        self.pos = 0

    def __call__(self, n: int) -> np.ndarray:
        assert self.pos + n <= self.words.size, "the word stream ran out"
        out = self.words[self.pos : self.pos + n]
        self.pos += n
        return out


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_every_memoized_chain_is_deployable_with_its_memo_key(name: str) -> None:
    """``Spec.from_mechanism`` takes every chain, states the default memo key (the content id without
    it), round-trips, and ``verify`` checks both claims; another key is another spec."""
    m = CHAINS[name]()
    spec = Spec.from_mechanism(m, question="Which one?", labels=LABELS)
    data = spec.to_dict()
    assert data["memo"] == {"key": memo_key_default(data)} and spec.memo_key == data["memo"]["key"]
    assert Spec.from_json(spec.to_json()) == spec and spec.mechanism().fingerprint == spec.id
    assert spec.mechanism().domain.labels == tuple(LABELS)
    v = verify(spec)
    assert v.holds and {r.part for r in v.rows} == {
        "root permanent (any number of reports of one value)",
        "root one report",
    }
    weekly = Spec.from_mechanism(m, question="Which one?", labels=LABELS, memo_key="weekly-os")
    assert weekly.memo_key == "weekly-os" and weekly.id != spec.id


def test_the_memo_member_is_checked() -> None:
    spec = Spec.from_mechanism(pldp.LGRR(2.0, 1.0, 4), question="q")
    plain = Spec.from_mechanism(pldp.KRR(1.0, 4), question="q")
    assert "memo" not in plain.to_dict() and plain.memo_key is None
    with pytest.raises(SpecError, match="memo_key is for memoized chains"):
        Spec.from_mechanism(pldp.KRR(1.0, 4), question="q", memo_key="k")
    for key in ("", "x" * 257, 3):
        with pytest.raises(SpecError, match=r"memo\.key must be a string of 1 to 256"):
            Spec.from_mechanism(pldp.LGRR(2.0, 1.0, 4), question="q", memo_key=key)  # type: ignore[arg-type]

    def resigned(data: dict[str, Any]) -> dict[str, Any]:
        data["id"] = pldp.deploy.spec_id(data)
        return data

    lacking = spec.to_dict()
    del lacking["memo"]
    with pytest.raises(SpecError, match="must state its memo key"):
        Spec.from_json(resigned(lacking))
    extra = plain.to_dict()
    extra["memo"] = {"key": "k"}
    with pytest.raises(SpecError, match="not memoized"):
        Spec.from_json(resigned(extra))
    odd = spec.to_dict()
    odd["memo"] = {"key": "k", "share": True}
    with pytest.raises(SpecError, match="exactly 'key'"):
        Spec.from_json(resigned(odd))


@pytest.mark.parametrize("name", ["L-GRR", "L-OUE"])
def test_the_prr_is_drawn_once_per_value_and_kept_across_clients(name: str, tmp_path: Path) -> None:
    """A first report of a value draws 4 id words, the PRR's words, the IRR's; a later one (in the
    same client or a new one on the same store) only the id and the IRR's, and sees the same PRR;
    another value draws its own PRR. With IRR words 0 (report the PRR as it is) every report of a
    value is its stored PRR (which differs from the value)."""
    spec = Spec.from_mechanism(CHAINS[name](), question="q", labels=LABELS)
    store = tmp_path / "memo.json"
    direct = name == "L-GRR"
    prr = [GRID - 1] if direct else [0] * 4  # the PRR: the last item / every bit set
    irr = [0] if direct else list(spec.root.instantaneous.b)  # type: ignore[attr-defined]  # the IRR reports the PRR as it is
    ids = [7, 7, 7, 7]
    words = Words(ids + prr + irr + ids + irr + ids + irr + ids + prr + irr)
    client = Client(spec, random=words, store=store)
    first = client.report("a")
    assert (words.pos, client.last_new_values, client.last_new_items.tolist()) == (len(ids + prr + irr), 1, [0])
    second = client.report("a")
    assert words.pos == len(ids + prr + irr + ids + irr) and client.last_new_values == 0
    again = Client(spec, random=words, store=store).report(0)  # a new client (process) on the store
    assert words.pos == len(ids + prr + irr + 2 * (ids + irr))
    other = client.report("c")
    assert words.pos == words.words.size and client.last_new_items.tolist() == [2]
    want = 3 if direct else "8A=="  # 3, or bits 0..3 of 4 set, packed
    assert first["payload"] == second["payload"] == again["payload"] == other["payload"] == want
    memo = json.loads(store.read_text())
    entry = memo["memos"][spec.memo_key]
    assert entry == {
        "permanent": permanent_fingerprint(LABELS, spec.root),
        "kind": "direct" if direct else "unary",
        "d": 4,
        "responses": {"0": want, "2": want},
    }
    assert store.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memo.json", "memo.json.lock"]  # no temporary left


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_a_batch_writes_the_bytes_of_reports_one_at_a_time(name: str, tmp_path: Path) -> None:
    """Vectorised batches draw the words of sequential reports: a value's first report draws its
    PRR, its later reports in the batch and in later batches reuse it."""
    spec = Spec.from_mechanism(CHAINS[name](), question="q", labels=LABELS)
    words = np.random.default_rng(5).integers(0, GRID, 4000, dtype=np.uint64).astype(np.uint32)
    answers = [[1, 1, 3, 1], [3, 0, 0, 2, 1, 0], [2, 2]]
    one, batched = (
        Client(spec, Words(words), store=tmp_path / "one.json"),
        Client(spec, Words(words), store=MemoryStore()),
    )
    singles = [[one.report(a) for a in batch] for batch in answers]
    batches = [list(batched.reports(batch).reports()) for batch in answers]
    assert singles == batches and batched.last_new_values == 0
    memo = MemoryStore()
    counts = []
    c = Client(spec, Words(words), store=memo)
    for batch in answers:
        c.reports(batch)
        counts.append(c.last_new_values)
    assert counts == [2, 2, 0]


def test_one_key_refuses_another_permanent_response_or_other_labels(tmp_path: Path) -> None:
    store = tmp_path / "memo.json"
    Client(Spec.from_mechanism(pldp.LGRR(2.0, 1.0, 4), question="q", labels=LABELS, memo_key="k"), store=store).report(
        0
    )
    before = store.read_bytes()
    for other in (
        Spec.from_mechanism(pldp.LGRR(3.0, 1.0, 4), question="q", labels=LABELS, memo_key="k"),
        Spec.from_mechanism(pldp.LGRR(2.0, 1.0, 4), question="q", labels=["d", "c", "b", "a"], memo_key="k"),
        Spec.from_mechanism(pldp.LOUE(2.0, 1.0, 4), question="q", labels=LABELS, memo_key="k"),
    ):
        with pytest.raises(MemoStoreError, match="memo key 'k' holds the permanent responses of another"):
            Client(other, store=store).report(0)
    assert store.read_bytes() == before
    # another question with the same mechanism, labels and key shares the PRRs
    same = Spec.from_mechanism(pldp.LGRR(2.0, 1.0, 4), question="again?", labels=LABELS, memo_key="k")
    c = Client(same, store=store)
    c.report(0)
    assert c.last_new_values == 0


def test_where_the_memo_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Default: ``$PLDP_MEMO_STORE``, else ``$XDG_DATA_HOME/pldp/memo.json`` (POSIX, not macOS), made
    on the first new value with a folder of mode 0700; a spec that is not memoized opens no store."""
    monkeypatch.delenv("PLDP_MEMO_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    if sys.platform not in ("darwin", "win32"):
        assert default_store_path() == tmp_path / "data" / "pldp" / "memo.json"
    Client(Spec.from_mechanism(pldp.KRR(1.0, 4), question="q")).report(1)
    assert not (tmp_path / "data").exists()
    monkeypatch.setenv("PLDP_MEMO_STORE", str(tmp_path / "own" / "m.json"))
    c = Client(Spec.from_mechanism(pldp.LOUE(2.0, 1.0, 4), question="q"))
    c.report(1)
    assert (tmp_path / "own" / "m.json").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "own").stat().st_mode & 0o777 == 0o700


def test_a_report_is_returned_only_after_its_prr_is_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store that cannot be written: the client raises and returns no report (the PRR it drew is
    dropped with the report); the old memo stays whole."""
    store = tmp_path / "memo.json"
    spec = Spec.from_mechanism(pldp.LGRR(2.0, 1.0, 4), question="q")
    Client(spec, store=store).report(0)
    before = store.read_bytes()

    def broken(*args: Any, **kw: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pldp.deploy.memostore.os, "replace", broken)
    with pytest.raises(MemoStoreError, match="cannot be written"):
        Client(spec, store=store).report(1)
    assert store.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memo.json", "memo.json.lock"]
    Client(spec, store=store).report(0)  # a held value needs no write


def test_clients_simulate_refuses_a_memoized_spec(tmp_path: Path) -> None:
    """One simulated client would be one device for every row (and write the user's memo file)."""
    import subprocess

    (tmp_path / "spec.json").write_text(Spec.from_mechanism(pldp.LGRR(2.0, 1.0, 3), question="q").to_json())
    (tmp_path / "answers.csv").write_text("answer\n0\n1\n")
    cmd = [str(Path(sys.executable).parent / "pldp"), "clients", "simulate", "spec.json", "--answers", "answers.csv"]
    proc = subprocess.run([*cmd, "--out", "r.jsonl"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "pldp: error: clients simulate makes each row a device" in proc.stderr
    assert not (tmp_path / "r.jsonl").exists()
