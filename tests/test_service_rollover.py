"""Report files from the collector: export by day, the scheduled rollover, retention.

In process, with writers and exporters on one file (each with its own connection, as processes
have): a round writes one file per day and every report once; a file left by a crash is recorded
only if it holds exactly the reports it names; retention deletes only exported old reports, and
every writer's index of stored ids forgets them; one exporter holds the export lock. With real
``pldp serve`` processes: SIGKILL between writing a file and recording it, and export by day.
"""

from __future__ import annotations

import functools
import io
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("pyarrow")

import pyarrow.parquet as pq

import pldp
from pldp.client import Client
from pldp.deploy import ReportBatch, Spec, decode
from pldp.deploy import files as report_files
from pldp.deploy.dedupe import read_unique
from pldp.deploy.origin import Origin
from pldp.deploy.remote import RemoteError
from pldp.service import collect, seen, store
from pldp.service.dayfiles import day_file_name, export_days
from pldp.service.rollover import PAUSE_ENV, Exporter, ExportError, Rollover, delete_exported, file_name
from pldp.service.writer import Writer
from tests.service_server import Server, wait_until

SPEC = Spec.from_mechanism(pldp.protocols.FEBSF([0.5, 1.0, 2.0], 0.5, 6, "rappor"), question="levels?")
DAY = report_files.parse_day("2026-03-01")


def _reports(n: int, seed: int) -> ReportBatch:
    rng = np.random.default_rng(seed)
    return Client(SPEC).reports(rng.integers(0, 6, n), level=rng.integers(0, 3, n))


def _put(writer: Writer, batch: ReportBatch) -> dict[str, int]:
    prep = collect.prepare_batch(SPEC, json.dumps(batch.to_json()).encode(), 10**6)
    return writer.run(lambda ctx: collect.store_batch(ctx, SPEC.id, prep))


def _on(monkeypatch: pytest.MonkeyPatch, day: int) -> None:
    monkeypatch.setenv(store.TODAY_ENV, report_files.day_label(day))


def _files(root: Path) -> list[Path]:
    return report_files.report_files(root, SPEC.id)


def _ids(path: Path) -> list[bytes]:
    return pq.read_table(path).column("id").to_pylist()


def _origin(path: Path) -> tuple[str, list[list[int]]]:
    """The store and the runs of report numbers a file's metadata names."""
    origin = Origin.from_metadata(pq.read_schema(path).metadata, pq.ParquetFile(path).metadata.num_rows)
    assert origin is not None, f"{path} names no store"
    return origin.store, origin.runs.tolist()


def _exports(db: Path) -> list[tuple[int, int, int, str, int]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT first_seq, upto_seq, day, path, n FROM exports ORDER BY first_seq").fetchall()
    return [tuple(r) for r in rows]


def _tally(*batches: ReportBatch):
    return functools.reduce(lambda a, b: a.merge(b), (decode(SPEC, b) for b in batches))


def test_a_round_writes_one_file_per_day_and_every_report_once(tmp_path: Path, monkeypatch) -> None:
    db, root = tmp_path / "s.db", tmp_path / "files"
    writer = Writer(db)
    exporter = Exporter(db, Rollover(root))
    try:
        writer.run(lambda ctx: collect.create_campaign(ctx, SPEC, 0.0))
        sid = store.store_id(writer.conn)
        batches = [_reports(n, seed) for seed, n in enumerate([300, 200, 400, 100])]
        _on(monkeypatch, DAY)
        _put(writer, batches[0])
        _put(writer, batches[1])
        _on(monkeypatch, DAY + 1)
        _put(writer, batches[2])
        done = exporter.run_once()
        assert done is not None and done.adopted == [] and done.deleted == 0
        want = [
            report_files.partition_dir(root, SPEC.id, DAY) / f"{file_name(sid, 1, 500)}.parquet",
            report_files.partition_dir(root, SPEC.id, DAY + 1) / f"{file_name(sid, 501, 900)}.parquet",
        ]
        assert done.written == want and _files(root) == want
        assert exporter.run_once() == type(done)()  # nothing new: nothing written
        _put(writer, batches[3])  # the same day again: a file of its own, above the watermark
        assert [p.name for p in exporter.run_once().written] == [f"{file_name(sid, 901, 1000)}.parquet"]
        rows = _exports(db)
        assert [(a, b, d, n) for a, b, d, _, n in rows] == [
            (1, 500, DAY, 500), (501, 900, DAY + 1, 400), (901, 1000, DAY + 1, 100)
        ]  # fmt: skip
        assert [Path(p) for *_, p, _ in rows] == _files(root) == sorted(_files(root))
        # each file names its store and report numbers, as its name does (pldp.deploy.origin)
        assert [_origin(p) for p in _files(root)] == [(sid, [[1, 500]]), (sid, [[501, 900]]), (sid, [[901, 1000]])]
        # each file: exactly its reports, in arrival order; together every stored report once
        stored = store.stored_batch(writer.conn, SPEC)
        held = [i for p in _files(root) for i in _ids(p)]
        assert held == [bytes(r) for r in stored.ids]
        assert decode(SPEC, pq.read_table(want[0])) == _tally(batches[0], batches[1])
        assert (
            decode(SPEC, read_unique(_files(root), SPEC)[0])
            == _tally(*batches)
            == store.stored_tally(writer.conn, SPEC)
        )
    finally:
        exporter.close()
        writer.close()


def test_a_day_beyond_the_file_cap_is_split_into_files_of_at_most_the_cap(tmp_path: Path, monkeypatch) -> None:
    from pldp.service import rollover

    monkeypatch.setattr(rollover, "FILE_CAP", 128)
    _on(monkeypatch, DAY)
    db, root = tmp_path / "s.db", tmp_path / "files"
    writer = Writer(db)
    exporter = Exporter(db, Rollover(root))
    try:
        writer.run(lambda ctx: collect.create_campaign(ctx, SPEC, 0.0))
        _put(writer, _reports(300, 5))
        done = exporter.run_once()
        assert done is not None
        sid = store.store_id(writer.conn)
        assert [p.stem for p in done.written] == [file_name(sid, a, z) for a, z in [(1, 128), (129, 256), (257, 300)]]
        assert [len(_ids(p)) for p in done.written] == [128, 128, 44]
    finally:
        exporter.close()
        writer.close()


def test_a_file_left_by_a_crash_is_recorded_only_if_it_holds_exactly_its_reports(tmp_path: Path, monkeypatch) -> None:
    """The crash is staged here (a file written, not recorded); the real SIGKILL is below."""
    db, root = tmp_path / "s.db", tmp_path / "files"
    _on(monkeypatch, DAY)
    writer = Writer(db)
    exporter = Exporter(db, Rollover(root))
    try:
        writer.run(lambda ctx: collect.create_campaign(ctx, SPEC, 0.0))
        sid = store.store_id(writer.conn)
        first, second = _reports(300, 1), _reports(200, 2)
        _put(writer, first)
        # a file that claims reports 1-300 but holds another payload for one of them: refused
        bad = store.stored_batch(writer.conn, SPEC)
        bad.columns["level"][7] = (bad.columns["level"][7] + 1) % 3
        forged = report_files.write_reports(bad, root, DAY, file_name(sid, 1, 300))
        with pytest.raises(ExportError, match="does not hold exactly"):
            exporter.run_once()
        assert _exports(db) == []
        forged.unlink()
        # the file a crashed round wrote (reports 1-300); then more reports of that day arrived
        left = report_files.write_reports(store.stored_batch(writer.conn, SPEC), root, DAY, file_name(sid, 1, 300))
        _put(writer, second)
        before = left.stat()
        done = exporter.run_once()
        assert done is not None and done.adopted == [left]
        assert [p.name for p in done.written] == [f"{file_name(sid, 301, 500)}.parquet"]
        assert left.stat().st_ino == before.st_ino and left.stat().st_mtime_ns == before.st_mtime_ns
        assert [(a, b, n) for a, b, _, _, n in _exports(db)] == [(1, 300, 300), (301, 500, 200)]
        held = [i for p in _files(root) for i in _ids(p)]
        assert held == [bytes(r) for r in store.stored_batch(writer.conn, SPEC).ids] and len(set(held)) == 500
    finally:
        exporter.close()
        writer.close()


def _index_equals_stored(writer: Writer, key: int) -> bool:
    """In the writer's own transaction: its index of the campaign's ids is absent (reloaded when
    next needed) or holds exactly the stored ids, each at its stored ``seq``."""

    def job(ctx) -> bool:
        ids, seqs = seen.ids_since(ctx.conn, key, 0)
        index = ctx.seen.get(key)
        return index is None or (len(index) == len(seqs) and np.array_equal(index.find(ids), seqs))

    return writer.run(job)


def test_retention_deletes_old_exported_reports_and_every_writer_forgets_them(tmp_path: Path, monkeypatch) -> None:
    """Writers ``a`` and ``b`` stand for two worker processes (their own connections and indexes);
    the exporter deletes through a third connection, as in a third process."""
    db, root = tmp_path / "s.db", tmp_path / "files"
    a, b = Writer(db), Writer(db)
    exporter = Exporter(db, Rollover(root, retain_days=2))
    try:
        a.run(lambda ctx: collect.create_campaign(ctx, SPEC, 0.0))
        key = store.campaign_key(a.conn, SPEC.id)
        old, kept, late, new = _reports(400, 1), _reports(300, 2), _reports(200, 3), _reports(100, 4)
        _on(monkeypatch, DAY)
        assert _put(a, old) == {"accepted": 400, "duplicates": 0}
        assert _put(b, old) == {"accepted": 0, "duplicates": 400}  # both indexes are loaded
        _on(monkeypatch, DAY + 2)
        assert _put(b, kept) == {"accepted": 300, "duplicates": 0}
        exporter.run_once()  # day DAY + 2: exports everything, deletes nothing (DAY is not more than 2 days ago)
        assert store.watermark(a.conn, key) == 700 and store.stored_count(a.conn, SPEC.id) == 700
        _on(monkeypatch, DAY)  # reports of an old day that are not exported yet (a clock set back)
        _put(a, late)
        # day DAY + 3: the exported reports of DAY go, the unexported ones of DAY and those of DAY + 2 stay
        _on(monkeypatch, DAY + 3)
        deleted = exporter._writer.run(functools.partial(delete_exported, key=key, cutoff=DAY + 1))
        assert deleted == 400
        assert seen.ids_since(a.conn, key, 0)[1].tolist() == list(range(401, 901))
        assert store.stored_tally(a.conn, SPEC) == _tally(old, kept, late)  # the tally counts every report
        for w in (a, b):
            assert _index_equals_stored(w, key)
        # a retry of a deleted report is a new report (the idempotency window is the retention window);
        # a retry of a stored one is still a retry, through either writer
        assert _put(a, old) == {"accepted": 400, "duplicates": 0}
        assert _put(b, old) == {"accepted": 0, "duplicates": 400}
        assert _put(b, kept) == {"accepted": 0, "duplicates": 300}
        assert _put(a, late) == {"accepted": 0, "duplicates": 200}
        assert seen.ids_since(a.conn, key, 0)[1].tolist() == list(range(401, 1301))  # numbering goes on
        # every report of the campaign deleted: new reports are numbered above the deleted ones
        _on(monkeypatch, DAY + 6)
        done = exporter.run_once()
        assert done is not None and done.deleted == 900 and store.stored_count(a.conn, SPEC.id) == 0
        assert _put(b, new) == {"accepted": 100, "duplicates": 0}
        assert seen.ids_since(b.conn, key, 0)[1].tolist() == list(range(1301, 1401))
        for w in (a, b):
            assert _index_equals_stored(w, key)
        assert exporter.run_once().written[0].name == f"{file_name(store.store_id(a.conn), 1301, 1400)}.parquet"
        # the files hold every report ever accepted; the retried one twice, counted once by read_unique
        unique, repeats = read_unique(_files(root), SPEC)
        assert repeats == 400 and decode(SPEC, unique) == _tally(old, kept, late, new)
        assert store.stored_tally(a.conn, SPEC) == _tally(old, kept, late, old, new)
    finally:
        exporter.close()
        a.close()
        b.close()


def test_only_the_holder_of_the_export_lock_exports(tmp_path: Path) -> None:
    db, root = tmp_path / "s.db", tmp_path / "files"
    writer = Writer(db)
    first, second = Exporter(db, Rollover(root)), Exporter(db, Rollover(root))
    try:
        writer.run(lambda ctx: collect.create_campaign(ctx, SPEC, 0.0))
        _put(writer, _reports(50, 1))
        assert first.run_once() is not None and second.run_once() is None
        _put(writer, _reports(50, 2))
        assert second.run_once() is None  # the lock is kept while the first lives
        first.close()  # ... and released when it goes (with its process, by the kernel)
        done = second.run_once()
        assert done is not None and len(done.written) == 1 and len(_files(root)) == 2
    finally:
        second.close()
        writer.close()


# ----------------------------------------------------------------------------- real processes
def _watermark(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COALESCE(MAX(upto_seq), 0) FROM exports").fetchone()[0])


@pytest.mark.slow
def test_sigkill_between_writing_and_recording_a_file_neither_loses_nor_repeats_a_report(tmp_path: Path) -> None:
    db, root = tmp_path / "kill.db", tmp_path / "files"
    rollover = ("--export-dir", str(root), "--export-every", "1s")
    b1, b2, b3 = _reports(1500, 11), _reports(700, 12), _reports(800, 13)
    # 1. the exporter writes the file of reports 1-1500 and sleeps before recording it: killed then
    srv = Server(db, *rollover, env={store.TODAY_ENV: "2026-03-01", PAUSE_ENV: "120"}).start()
    try:
        srv.admin().create_campaign(SPEC)
        assert srv.client().submit(SPEC.id, b1) == {"accepted": 1500, "duplicates": 0}
        (left,) = wait_until(lambda: _files(root), why="the crash's file")
    finally:
        srv.kill()
    with sqlite3.connect(db) as conn:
        sid = store.store_id(conn)
    assert left.name == f"{file_name(sid, 1, 1500)}.parquet" and _exports(db) == []
    before = left.stat()
    # 2. back up without the rollover: more reports of that day (the run grows), and a retry
    srv.extra, srv.env = ("--rate", "0"), {store.TODAY_ENV: "2026-03-01"}  # as Server() starts it
    with srv:
        assert srv.client().submit(SPEC.id, b2) == {"accepted": 700, "duplicates": 0}
        assert srv.client().submit(SPEC.id, b1) == {"accepted": 0, "duplicates": 1500}
    # 3. the next day, with the rollover: the crash's file is checked and recorded, not written again
    srv.extra, srv.env = ("--rate", "0", *rollover), {store.TODAY_ENV: "2026-03-02"}
    with srv:
        assert srv.client().submit(SPEC.id, b3) == {"accepted": 800, "duplicates": 0}
        wait_until(lambda: _watermark(db) == 3000, why="the export of 3,000 reports")
    assert "Traceback" not in srv.log(), srv.log()[-3000:]
    files = _files(root)
    assert [p.name for p in files] == [
        f"{file_name(sid, a, z)}.parquet" for a, z in [(1, 1500), (1501, 2200), (2201, 3000)]
    ]
    assert [(a, z, d, Path(p), n) for a, z, d, p, n in _exports(db)] == [
        (1, 1500, DAY, files[0], 1500), (1501, 2200, DAY, files[1], 700), (2201, 3000, DAY + 1, files[2], 800)
    ]  # fmt: skip
    assert left.stat().st_ino == before.st_ino and left.stat().st_mtime_ns == before.st_mtime_ns
    # every report in exactly one file, and the files' tally is the collector's
    held = [i for p in files for i in _ids(p)]
    assert len(held) == len(set(held)) == 3000
    assert set(held) == {bytes(r) for b in (b1, b2, b3) for r in b.ids}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM reports").fetchone()[0] == 3000  # no --retain-days: nothing deleted
    conn = store.connect(db)
    try:
        assert decode(SPEC, read_unique(files, SPEC)[0]) == store.stored_tally(conn, SPEC) == _tally(b1, b2, b3)
    finally:
        conn.close()


def test_export_by_day_lists_days_and_writes_one_file_per_day(tmp_path: Path) -> None:
    db, root = tmp_path / "days.db", tmp_path / "files"
    b1, b2 = _reports(300, 21), _reports(200, 22)
    srv = Server(db, env={store.TODAY_ENV: "2026-03-01"})
    with srv:
        srv.admin().create_campaign(SPEC)
        srv.client().submit(SPEC.id, b1)
    srv.env = {store.TODAY_ENV: "2026-03-02"}
    with srv:
        srv.client().submit(SPEC.id, b2)
        analyst = srv.client(srv.admin().create_token("days", [SPEC.id])["token"])
        listing = analyst.days(SPEC.id)
        with sqlite3.connect(db) as conn:
            sid = store.store_id(conn)
        assert listing == {
            "campaign": SPEC.id,
            "store": sid,
            "rounds": "once",  # a campaign that does not recur: every report in round 1, files without rounds
            "days": [{"day": "2026-03-01", "round": 1, "n": 300}, {"day": "2026-03-02", "round": 1, "n": 200}],
        }
        day1 = pq.read_table(io.BytesIO(analyst.export(SPEC.id, "2026-03-01")))
        assert day1.column("id").to_pylist() == [bytes(r) for r in b1.ids] and decode(SPEC, day1) == decode(SPEC, b1)
        assert pq.read_table(io.BytesIO(analyst.export(SPEC.id, "2026-02-28"))).num_rows == 0
        for bad in ("2026-3-1", "yesterday", "2026-02-30"):
            with pytest.raises(RemoteError) as info:
                analyst.export(SPEC.id, bad)
            assert info.value.status == 400 and info.value.code == "bad_day"
        written = export_days(analyst, SPEC.id, root)
        name = f"{day_file_name(sid)}.parquet"
        assert written == [report_files.partition_dir(root, SPEC.id, DAY + d) / name for d in (0, 1)] == _files(root)
        assert [decode(SPEC, pq.read_table(p)) for p in written] == [decode(SPEC, b1), decode(SPEC, b2)]
        assert [_origin(p) for p in written] == [(sid, [[1, 300]]), (sid, [[301, 500]])]  # as the rollover's files
        stamps = [p.stat().st_mtime_ns for p in written]
        with pytest.raises(FileExistsError, match="refusing to overwrite"):
            export_days(analyst, SPEC.id, root, ["2026-03-02"])
        assert [p.stat().st_mtime_ns for p in written] == stamps and _files(root) == written


def test_retention_keeps_a_free_text_campaigns_reports_which_its_estimate_reads(tmp_path: Path, monkeypatch) -> None:
    """A free-text campaign's estimate discovers its answers from its stored reports (its tally is only
    their number): a round exports them, and retention deletes the listed campaign's old reports only."""
    free = Spec.from_heavy(pldp.PEM(4.0, max_bytes=4), question="a word?")
    db, root = tmp_path / "s.db", tmp_path / "files"
    writer = Writer(db)
    exporter = Exporter(db, Rollover(root, retain_days=2))
    try:
        writer.run(lambda ctx: collect.create_campaign(ctx, SPEC, 0.0))
        writer.run(lambda ctx: collect.create_campaign(ctx, free, 0.0))
        _on(monkeypatch, DAY)
        _put(writer, _reports(200, 1))
        words = Client(
            free, random=lambda n: np.random.default_rng(n).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        )
        batch = words.reports(["spam", "eggs"] * 100)
        prep = collect.prepare_batch(free, json.dumps(batch.to_json()).encode(), 10**6)
        assert writer.run(lambda ctx: collect.store_batch(ctx, free.id, prep)) == {"accepted": 200, "duplicates": 0}
        _on(monkeypatch, DAY + 5)
        done = exporter.run_once()
        assert done is not None and done.deleted == 200  # the listed campaign's, exported and old
        assert store.stored_count(writer.conn, SPEC.id) == 0 and store.stored_count(writer.conn, free.id) == 200
        assert len(report_files.report_files(root, free.id)) == 1  # exported all the same
    finally:
        exporter.close()
        writer.close()
