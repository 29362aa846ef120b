"""The collector's store in-process: the in-memory index of stored report ids and its loading, the
writer's dedupe across jobs and processes, and the forward migration of a version-1 file."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import pldp
from pldp.client import Client
from pldp.deploy import Spec, decode
from pldp.service import collect, idtable, seen, store
from pldp.service.idtable import IdTable
from pldp.service.seen import SeenIds
from pldp.service.writer import Writer


def _ids(rng: np.random.Generator, n: int) -> bytes:
    raw = rng.integers(0, 256, (n, 16), dtype=np.uint8)
    raw[: n // 4, 8:] = 0  # ids ending in zero bytes
    raw[n // 4 : n // 2, :8] = 42  # ids sharing their first 8 bytes, in every batch: the index's rare case
    return raw.tobytes()


@pytest.mark.parametrize("stage", [1_000, seen.STAGE])
@pytest.mark.parametrize("maintained", [True, False])
def test_seen_ids_finds_exactly_the_stored_ids_and_their_seq(
    maintained: bool, stage: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through many growths of the large table (from its smallest size), with the small table
    merged and the move to a larger table done by maintain() between adds, or by the adds
    themselves when nobody calls it (the small table merged when it holds ``stage`` ids)."""
    monkeypatch.setattr(seen, "STAGE", stage)
    rng = np.random.default_rng(5)
    index, truth, seq, found = SeenIds(), {}, 0, 0
    for size in [*rng.integers(1, 40, 300).tolist(), 3_000, 2, 9_000, 1, 30_000, 5]:
        ids = _ids(rng, int(size))
        if truth:  # and some stored ids again, as in a retry
            stored = list(truth)
            ids += b"".join(stored[i] for i in rng.integers(0, len(stored), int(size) // 2))
        m = len(ids) // 16
        want = np.array([truth.get(ids[16 * i : 16 * i + 16], -1) for i in range(m)])
        assert np.array_equal(index.find(ids), want)
        found += int((want >= 0).sum())
        new = [i for i in range(m) if want[i] < 0]
        new = list({ids[16 * i : 16 * i + 16]: i for i in new}.values())  # one of each id within the batch
        seqs = seq + 1 + np.arange(len(new))
        index.add(b"".join(ids[16 * i : 16 * i + 16] for i in new), seqs)
        if maintained:
            index.maintain()
        for i, s in zip(new, seqs.tolist(), strict=True):
            truth[ids[16 * i : 16 * i + 16]] = s
        seq += len(new)
        assert index.last == seq and len(index) == len(truth)
    grew = index.main._table.bits > idtable._MIN_BITS
    assert len(truth) > 40_000 and found > 20_000 and grew == (maintained or stage < len(truth))
    stored = b"".join(truth)
    assert np.array_equal(index.find(stored), np.array(list(truth.values())))
    absent = os.urandom(16 * 500) + bytes([42] * 8) + os.urandom(8) + stored[:8] + bytes([255] * 8)
    assert (index.find(absent) == -1).all()
    assert all(index.find(absent[16 * i : 16 * i + 16])[0] == -1 for i in range(3))  # the scalar path
    # growth kept up: the table is at most 5/8 full (3/4 when only the adds move ids, when out of room)
    for table in (index.main, index.recent):
        assert len(table) / (idtable.BUCKET << table._table.bits) <= (5 / 8 if maintained else 3 / 4)


def test_seen_ids_hash_is_keyed_so_chosen_ids_do_not_pile_into_one_bucket() -> None:
    """Ids that differ only in a few bits (those a client would choose to collide on a hash of the
    first or last 8 bytes) spread over the buckets as random ids do: few buckets overflow, and a
    lookup of a batch stays one pass over its home buckets."""
    m = 1 << 15
    crafted = np.zeros((m, 16), np.uint8)
    crafted[:, 12:] = np.arange(m, dtype=">u4").view(np.uint8).reshape(m, 4)  # ids 0, 1, 2, ... in the last bytes
    # the keys: drawn from the OS, seeded ones, and the worst for a multilinear hash of sequential
    # words (every key near 1/3 or 1/5 of 2^64: k * i modulo 2^64 then takes few values' high bits)
    drawn = [IdTable(0)._keys] + [np.random.default_rng(s).integers(0, 2**63, 5, dtype=np.uint64) | 1 for s in range(4)]
    near = [np.full(5, 0x5555555555555555, np.uint64), np.full(5, 0x3333333333333333, np.uint64)]
    for keys in drawn + near:
        for ids in (crafted.tobytes(), crafted[:, ::-1].copy().tobytes()):  # ... and in the first bytes
            index = IdTable(m)
            index._keys, index._int_keys = keys, [int(k) for k in keys]
            index.add(ids, np.arange(1, m + 1))
            table = index._table
            assert (table.fill == idtable.BUCKET).mean() < 0.02  # at most half full: about 1 bucket in 100 is full
            assert np.array_equal(index.find(ids), np.arange(1, m + 1))
            one = ids[16 * 77 : 16 * 78]  # the scalar path hashes as the vector one
            assert index.find(one).tolist() == [78]
            assert index._hash_one(one) == int(index._hash(np.frombuffer(one, np.uint64).reshape(1, 2))[0])


def test_loading_the_index_reads_every_stored_id_across_gaps_and_chunks(tmp_path: Path, monkeypatch) -> None:
    """seen.load reads the ids in ranges of seen.ID_CHUNK numbers; deleted reports leave gaps
    (retention), some longer than a range; the index is exactly the stored ids at their seq."""
    monkeypatch.setattr(seen, "ID_CHUNK", 7)
    spec = Spec.from_mechanism(pldp.KRR(1.0, 5), question="q")
    writer = Writer(tmp_path / "g.db")
    try:
        writer.run(lambda ctx: collect.create_campaign(ctx, spec, 0.0))
        key = store.campaign_key(writer.conn, spec.id)
        batch = Client(spec).reports(np.arange(200) % 5)
        rows, width = store.row_table(batch)
        store.insert_reports(writer.conn, key, 1, batch.ids.tobytes(), rows, width, 0)
        writer.conn.execute("DELETE FROM reports WHERE seq <= 10 OR seq BETWEEN 50 AND 80 OR seq % 9 = 0")
        writer.conn.execute("INSERT INTO retention VALUES (?, 1, 80, 0, 0)", (key,))
        want = {bytes(r[0]): r[1] for r in writer.conn.execute("SELECT report_id, seq FROM reports")}
        index, generation = seen.load(writer.conn, key)
        assert generation == 1 and len(index) == len(want) and index.last == 200
        assert np.array_equal(index.find(b"".join(want)), np.array(list(want.values())))
        assert (index.find(batch.ids[:10].tobytes()) == -1).all()
        assert seen.ids_since(writer.conn, key, 100)[1].tolist() == [s for s in range(101, 201) if s % 9]
    finally:
        writer.close()


def _v1_file(path: Path, spec: Spec, batch) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in store.MIGRATIONS[0].split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO campaigns (key, id, spec, created_at) VALUES (1, ?, ?, 0)", (spec.id, spec.to_json()))
    rows, width = store.row_table(batch)
    ids = batch.ids.tobytes()
    conn.executemany(
        "INSERT INTO reports VALUES (1, ?, ?, 20000)",
        [(ids[16 * i : 16 * i + 16], rows[width * i : width * (i + 1)]) for i in range(len(batch))],
    )
    tally = decode(spec, batch)
    conn.execute("INSERT INTO tallies VALUES (?, ?, ?)", (spec.id, tally.n, __import__("json").dumps(tally.to_dict())))
    conn.close()


def test_a_version_1_file_migrates_and_its_reports_still_count_once(tmp_path: Path) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 5), question="q")
    client = Client(spec)
    old = client.reports(np.arange(300) % 5)
    _v1_file(tmp_path / "v1.db", spec, old)
    writer = Writer(tmp_path / "v1.db")
    try:
        assert writer.conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
        stored = store.stored_batch(writer.conn, spec)
        assert sorted(map(bytes, stored.ids)) == sorted(map(bytes, old.ids))
        new = client.reports(np.arange(200) % 5)
        both = type(old)(
            spec.id,
            np.concatenate([old.ids[:100], new.ids]),
            {k: np.concatenate([old.columns[k][:100], new.columns[k]]) for k in old.columns},
            spec.root,
        )
        prep = collect.prepare_batch(spec, __import__("json").dumps(both.to_json()).encode(), 10_000)
        assert writer.run(lambda ctx: collect.store_batch(ctx, spec.id, prep)) == {"accepted": 200, "duplicates": 100}
        tally = store.stored_tally(writer.conn, spec)
        assert tally.n == 500 and tally == decode(spec, store.stored_batch(writer.conn, spec))
        seqs = [r[0] for r in writer.conn.execute("SELECT seq FROM reports ORDER BY seq")]
        assert seqs == list(range(1, 501))
    finally:
        writer.close()


def test_two_writers_on_one_file_never_store_an_id_twice(tmp_path: Path) -> None:
    """Each writer keeps its own index; the second catches up with the first's commits."""
    spec = Spec.from_mechanism(pldp.KRR(1.0, 5), question="q")
    db = tmp_path / "two.db"
    a, b = Writer(db), Writer(db)
    try:
        a.run(lambda ctx: collect.create_campaign(ctx, spec, 0.0))
        batches = [Client(spec).reports(np.arange(50) % 5) for _ in range(6)]
        preps = [collect.prepare_batch(spec, __import__("json").dumps(x.to_json()).encode(), 10_000) for x in batches]
        results = []
        for i, prep in enumerate(preps):  # each batch twice, once through each writer, interleaved
            first, second = (a, b) if i % 2 else (b, a)
            results.append(first.run(lambda ctx, p=prep: collect.store_batch(ctx, spec.id, p)))
            results.append(second.run(lambda ctx, p=prep: collect.store_batch(ctx, spec.id, p)))
        assert results == [{"accepted": 50, "duplicates": 0}, {"accepted": 0, "duplicates": 50}] * 6
        stored = store.stored_batch(a.conn, spec)
        assert len(stored) == 300 == len({bytes(r) for r in stored.ids})
        assert store.stored_tally(b.conn, spec) == decode(spec, stored)
    finally:
        a.close()
        b.close()


def test_a_lookup_made_before_the_lock_is_used_only_while_the_large_table_is_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The writer searches the large table before it takes the write lock (SeenIds.stored) and,
    under the lock, only the small one. If the small table is merged in between (it filled up),
    the early answer is stale and must not be used: an id merged since would be missed, and its
    report stored twice."""
    monkeypatch.setattr(seen, "STAGE", 100)
    rng = np.random.default_rng(8)
    a, b, c = (_ids(rng, 60) for _ in range(3))
    index = SeenIds()
    index.append(a, 1)
    index.maintain()  # a: in the large table
    index.append(b, 61)  # b: in the small one
    batch = a + b + c
    early = index.stored(batch)
    assert (early.where[:60] >= 0).all() and (early.where[60:] == -1).all()
    assert np.array_equal(index.find(batch, early)[:120], np.arange(1, 121))
    index.append(c, 121)  # the small table holds 120 >= STAGE ids: merged into the large one
    assert len(index.recent) == 0
    found = index.find(batch, early)
    assert np.array_equal(found, np.arange(1, 181)), "a stale early answer was used"
    other = _ids(rng, 10)
    assert (index.find(other, index.stored(b)) == -1).all()  # another batch's answer is not used
