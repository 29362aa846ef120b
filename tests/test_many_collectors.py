"""Many collectors, one campaign: what exactly-once means across them, and that it holds.

Three ``pldp serve`` processes, each with its own store, collect the same campaign on loopback.
A population's batches are spread over them, and some batches are retried to a *different*
collector, which stores them again: nothing ties the three stores. Exactly-once across
collectors is a property of the merge. Report ids are unique per report, so merging the
collectors' report files while keeping each id once (:func:`pldp.deploy.dedupe.read_unique`)
counts every report once. The test checks that this merge decodes to exactly the tally of a
fourth collector that received every batch once. It also checks that summing the three running
tallies does not: it counts the retried batches twice.

The first collector runs two worker processes with the scheduled rollover (only one of them
exports); the other two export by day with ``pldp campaign export --out-dir``'s function. All
three write into one directory, kept apart by their store ids.
"""

from __future__ import annotations

import fcntl
import functools
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("pyarrow")

import pyarrow.parquet as pq

import pldp
from pldp.aggregate import aggregate
from pldp.client import Client
from pldp.deploy import ReportBatch, Spec, decode
from pldp.deploy import files as report_files
from pldp.deploy.dedupe import read_unique, unique_reports
from pldp.errors import ReportError
from pldp.service import store
from pldp.service.dayfiles import export_days
from tests.service_server import Server, wait_until

SPEC = Spec.from_mechanism(pldp.OUE(1.0, 10), question="many collectors?")
BATCHES, PER_BATCH = 12, 500
#: (batch, first collector, second collector): four retries to another collector, one to the same
RETRIES = [(0, 0, 1), (4, 1, 2), (8, 2, 0), (5, 2, 1), (3, 0, 0)]


def _stored_tally(db: Path):
    conn = store.connect(db)
    try:
        return store.stored_tally(conn, SPEC)
    finally:
        conn.close()


def test_three_collectors_merged_by_report_id_equal_one_collector_that_got_every_report_once(tmp_path: Path) -> None:
    root = tmp_path / "files"  # shared by the three collectors
    collectors = [
        Server(tmp_path / "c0.db", "--workers", "2", "--export-dir", str(root), "--export-every", "1s"),
        Server(tmp_path / "c1.db"),
        Server(tmp_path / "c2.db"),
    ]
    reference = Server(tmp_path / "reference.db")
    with ExitStack() as running:
        for srv in [*collectors, reference]:
            running.callback(srv.stop)
        with ThreadPoolExecutor(4) as pool:  # the four start side by side
            list(pool.map(lambda s: s.start(), [*collectors, reference]))
        analysts = []
        for srv in [*collectors, reference]:
            admin = srv.admin()
            admin.create_campaign(SPEC)
            analysts.append(srv.client(admin.create_token("merge", [SPEC.id])["token"]))

        rng = np.random.default_rng(2026)
        truth = rng.choice(10, size=(BATCHES, PER_BATCH), p=np.arange(1, 11) / 55)
        batches: list[ReportBatch] = [Client(SPEC).reports(values) for values in truth]
        devices = [srv.client() for srv in collectors]
        for i, batch in enumerate(batches):
            assert devices[i % 3].submit(SPEC.id, batch) == {"accepted": PER_BATCH, "duplicates": 0}
            assert reference.client().submit(SPEC.id, batch) == {"accepted": PER_BATCH, "duplicates": 0}
        for i, first, second in RETRIES:
            assert first == i % 3
            # the collector that has the batch counts a retry once; another one stores it again
            want = (
                {"accepted": 0, "duplicates": PER_BATCH}
                if second == first
                else {"accepted": PER_BATCH, "duplicates": 0}
            )
            assert devices[second].submit(SPEC.id, batches[i]) == want

        # the files: collector 0's rollover (two processes, one exporter), 1 and 2 by day
        c0 = collectors[0].db
        wait_until(
            lambda: _read(c0, _exported) == _read(c0, lambda c: store.report_count(c, SPEC.id)) == 5 * PER_BATCH,
            why="the rollover's catching up",
        )
        with open(f"{c0}-export.lock", "a+b") as lock, pytest.raises(BlockingIOError):
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by the worker that exports
        for analyst in analysts[1:3]:
            export_days(analyst, SPEC.id, root)
        ids = {_read(srv.db, store.store_id) for srv in collectors}
        files = report_files.report_files(root, SPEC.id)
        assert len(ids) == 3 and {p.name[:16] for p in files} == ids

    assert not any("Traceback" in srv.log() for srv in collectors), [srv.log()[-2000:] for srv in collectors]
    once = functools.reduce(lambda a, b: a.merge(b), (decode(SPEC, b) for b in batches))
    # merged by report id: exactly one collector that received every report once
    unique, repeats = read_unique(files, SPEC)
    assert repeats == 4 * PER_BATCH and len(unique) == BATCHES * PER_BATCH
    assert decode(SPEC, unique) == _stored_tally(reference.db) == once
    # the three running tallies summed count the four batches retried elsewhere twice
    summed = functools.reduce(lambda a, b: a.merge(b), (_stored_tally(srv.db) for srv in collectors))
    assert summed.n == (BATCHES + 4) * PER_BATCH and summed != once
    # per file, decoded and merged without the dedupe: the same over-count
    naive = functools.reduce(lambda a, b: a.merge(b), (decode(SPEC, pq.read_table(p)) for p in files))
    assert naive == summed
    # pldp aggregate: by default each collector's reports once, so the retries across collectors
    # twice (nothing in the footers ties two stores); with unique_ids every report id once
    assert aggregate(SPEC, files, workers=1, progress=False).tally == summed
    by_id = aggregate(SPEC, files, workers=1, progress=False, unique_ids=True)
    assert by_id.tally == once and by_id.repeats == repeats
    # one id with two payloads (a forged or corrupted report) is no retry: the merge refuses it
    forged = unique_reports([batches[0]])[0]
    forged.columns["bits"][3] ^= np.uint8(1)
    with pytest.raises(ReportError, match="different payloads"):
        unique_reports([batches[0], forged])


def _read(db: Path, what):
    conn = sqlite3.connect(db)
    try:
        return what(conn)
    finally:
        conn.close()


def _exported(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COALESCE(SUM(n), 0) FROM exports").fetchone()[0])


def test_the_merge_compares_whole_ids_and_keeps_first_occurrences_in_order() -> None:
    """Crafted ids that share their first or their last 8 bytes are different reports; a repeat is
    dropped wherever it comes, and the kept reports stay in the order they were first seen."""
    batch = Client(SPEC).reports(np.arange(6) % 10)
    halves = [(7, 1), (7, 2), (8, 1), (5, 9), (7, 3), (6, 2)]  # pairs share a first or a last half
    ids = np.array(halves, dtype=">u8").view(np.uint8).reshape(6, 16)
    a = ReportBatch(SPEC.id, ids, batch.columns, SPEC.root)
    b = ReportBatch(SPEC.id, ids[[4, 0, 2]], {k: v[[4, 0, 2]] for k, v in batch.columns.items()}, SPEC.root)
    merged, repeats = unique_reports([b, a])
    assert repeats == 3
    assert merged.ids.tobytes() == ids[[4, 0, 2, 1, 3, 5]].tobytes()
    assert decode(SPEC, merged) == decode(SPEC, a)
