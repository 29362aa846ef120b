"""Batched ingest against the size of the store: 0, 10^6 and 10^7 stored reports, 1 and 2 workers.

The rate of a collector must not fall as its store grows (``docs/collector.md``, "Capacity"). Each
row starts a real ``pldp serve --workers W`` on a copy of a store that already holds ``N`` k-RR
(d = 100) reports, written straight through :mod:`pldp.service.store` (:func:`prefill`: random
ids, the campaign's tally updated to match; no HTTP; the copy is synced to disk before the server
starts, or the writeback of its hundreds of MB would compete with the durable commits being
measured and slow the large stores' rows alone), and sends it batches of 1,000 new reports on
16 connections (closed loop, ``loadgen.py``): 400,000 reports, then 400,000 more, and the faster of
the two runs is kept.

Before the clock starts, rounds of 16 fresh connections send one batch each until three rounds in
a row are answered within half a second: the first batch a worker receives waits while it loads
the campaign's index of stored ids (:func:`pldp.service.seen.load`), and every worker must have
loaded it. The longest wait of the first round is reported (the index's load after a start), and
so are the server's CPU seconds per 10^6 reports (every process of the collector, from
``/proc``; unlike the rate, they hardly change when other work shares the machine) and the
largest worker's resident memory after the run.

Targets: at every size, the rate is at least 1/1.3 of the empty store's with the same number of
workers, and 2 workers are not slower than 1. Called by ``service_rows.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import pldp
from harness import Mode, Row
from loadgen import closed_loop, request
from pldp.client import Client
from pldp.deploy import Spec, decode
from pldp.service import collect, seen, store
from pldp.service.process import CollectorProcess
from pldp.service.writer import Writer
from report import fmt_rate, fmt_time

#: Stored reports before each run (full mode; the quick mode stops at 10^6).
STORED = (0, 10**6, 10**7)
#: Server processes (``pldp serve --workers``).
WORKERS = (1, 2)
#: Reports per batch, and concurrent connections sending batches.
BATCH, CONNECTIONS = 1_000, 16
#: The slowdown allowed at 10^6 and 10^7 stored reports, against the empty store.
SLOWDOWN = 1.3


def prefill(db: Path, spec: Spec, n: int, rng: np.random.Generator, chunk: int = 250_000) -> None:
    """Append ``n`` k-RR reports with random ids to the campaign of ``spec`` in the store ``db``
    (created with the campaign if needed), and add their tally to the campaign's: what the
    collector would hold after accepting them, written without it."""
    writer = Writer(db)
    try:
        writer.run(lambda ctx: collect.create_campaign(ctx, spec, 0.0))
    finally:
        writer.close()
    conn = store.connect(db)
    try:
        key = store.campaign_key(conn, spec.id)
        assert key is not None
        conn.execute("BEGIN IMMEDIATE")
        top = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM reports WHERE campaign_key = ?", (key,)).fetchone()[0]
        tally = store.stored_tally(conn, spec)
        for first in range(0, n, chunk):
            m = min(chunk, n - first)
            ids = rng.integers(0, 256, (m, 16), dtype=np.uint8).tobytes()
            items = rng.integers(0, 100, m).astype("<i4").tobytes()  # k-RR's one column: the item
            store.insert_reports(conn, key, top + first + 1, ids, items, 4, store.today())
            tally = tally.merge(decode(spec, store.batch_of(spec, ids, items)))
        conn.execute(
            "UPDATE tallies SET n = ?, tally = ? WHERE campaign_id = ?",
            (int(tally.n), json.dumps(tally.to_dict(), separators=(",", ":")), spec.id),
        )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def _tree(root: int) -> list[int]:
    """``root`` and every process descended from it (Linux ``/proc``; just ``root`` elsewhere)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.parent.name)] = int(fields[1])
    tree, frontier = [root], [root]
    while frontier:
        frontier = [p for p, parent in parents.items() if parent in frontier]
        tree += frontier
    return tree


def _cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def _rss(pids: list[int]) -> int:
    """Resident bytes of the largest of the processes (a worker: it holds the index)."""
    sizes = [0]
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        sizes += [int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:")]
    return max(sizes)


def _index(db: Path, spec: Spec) -> tuple[float, float]:
    """Seconds to load the campaign's index of stored ids in this process, and its bytes per id."""
    conn = store.connect(db)
    try:
        key = store.campaign_key(conn, spec.id)
        assert key is not None
        started = time.perf_counter()
        index, _ = seen.load(conn, key)
        return time.perf_counter() - started, index.nbytes / max(1, len(index))
    finally:
        conn.close()


def _run(base: Path, workers: int, spec: Spec, warm: list[bytes], loops: list[list[bytes]]) -> dict[str, Any]:
    """A collector on a copy of the store ``base``, warmed up, then each list of bodies of
    ``loops`` sent as one closed loop; the numbers of the fastest loop (see module doc)."""
    with tempfile.TemporaryDirectory(prefix="pldp-ingest-", dir=base.parent) as tmp:
        db = Path(tmp) / "run.db"
        shutil.copy(base, db)
        with open(db, "rb+") as copied:  # on disk before the clock starts: its writeback would compete with the commits
            os.fsync(copied.fileno())
        with CollectorProcess(db, "--workers", str(workers), "--rate", "0") as srv:  # one client address
            host, port, path = "127.0.0.1", srv.port, f"/v1/campaigns/{spec.id}/reports"
            waits: list[float] = []
            for i in range(0, len(warm), CONNECTIONS):  # until three rounds in a row are fast (module doc)
                res = closed_loop(
                    host, port, [[request(host, port, "POST", path, b)] for b in warm[i : i + CONNECTIONS]]
                )
                assert set(res.statuses) == {200}, res.statuses
                waits.append(float(res.latencies.max()))
                if len(waits) > 3 and max(waits[-3:]) < 0.5:
                    break
            assert srv.proc is not None
            pids = _tree(srv.proc.pid)
            best: dict[str, Any] = {}
            for bodies in loops:
                cpu = _cpu_seconds(pids)
                reqs = [request(host, port, "POST", path, b) for b in bodies]
                res = closed_loop(host, port, [reqs[i::CONNECTIONS] for i in range(CONNECTIONS)])
                assert res.statuses == {200: len(bodies)}, res.statuses
                n = len(bodies) * BATCH
                if n / res.wall > best.get("rate", 0.0):
                    best = {
                        "rate": n / res.wall,
                        "wall": res.wall,
                        "p50": res.percentile(50),
                        "p99": res.percentile(99),
                        "cpu_per_m": (_cpu_seconds(pids) - cpu) / n * 1e6,
                        "gen": res.cpu_s / res.wall,
                    }
            best |= {"load_wait": waits[0], "rss": _rss(pids)}
    return best


def bench_ingest(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """The rows of batched ingest against the store's size (see module doc)."""
    quick = mode.name == "quick"
    stored = STORED[:2] if quick else STORED
    repeats = 1 if quick else 2
    spec = Spec.from_mechanism(pldp.KRR(1.0, 100), question="bench")
    client = Client(spec)
    batches = 60 if quick else 400
    make = lambda k: [json.dumps(client.reports(rng.integers(0, 100, BATCH)).to_json()).encode() for _ in range(k)]  # noqa: E731
    warm = make(CONNECTIONS * 12)  # the same new reports in every run (each on a fresh copy of the store)
    loops = [make(batches) for _ in range(repeats)]
    results: dict[tuple[int, int], dict[str, Any]] = {}
    index: dict[int, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="pldp-bench-stores-") as tmp:
        base, have = Path(tmp) / "base.db", 0
        for n in stored:
            prefill(base, spec, n - have, rng)
            have = n
            index[n] = _index(base, spec)
            for w in WORKERS:
                results[n, w] = _run(base, w, spec, warm, loops)
    rows = []
    for (n, w), r in results.items():
        empty = results[0, w]["rate"]
        one = results[n, 1]["rate"]
        floor = 1e5 if n == 0 else empty / SLOWDOWN
        met = r["rate"] >= floor and (w == 1 or r["rate"] >= one)
        target = f"≥ {fmt_rate(floor, 'reports/s')}" + ("" if n == 0 else f" (empty / {SLOWDOWN})")
        target += "" if w == 1 else ", ≥ 1 worker's"
        memory = (
            ""
            if n == 0
            else f" ({(r['rss'] - results[0, w]['rss']) / n:.0f} bytes per stored report more than on the empty store, "
            "SQLite's page cache included); the index alone, loaded in this process: "
            f"{index[n][1]:.1f} bytes per stored report, {fmt_time(index[n][0])}"
        )
        rows.append(
            Row(
                "collector: batched ingest",
                f"{n:,} reports stored, {w} server process{'es' * (w > 1)}: k-RR d=100, {batches * BATCH:,} more "
                f"(best of {repeats} such runs, one after the other) in batches of 1,000 on {CONNECTIONS} connections, "
                f"durable commits; p50 {fmt_time(r['p50'])}, "
                f"p99 {fmt_time(r['p99'])} per batch; server CPU {r['cpu_per_m']:.2f} s per 10^6 reports; "
                f"first batch after the start {fmt_time(r['load_wait'])} (the index of stored ids loads); "
                f"{r['rss'] / 2**20:.0f} MiB resident per worker{memory}",
                r["wall"] / batches,
                r["rate"],
                "reports/s",
                fmt_rate(r["rate"], "reports/s"),
                target,
                met,
                extra={"stored": n, "workers": w, **r},
            )
        )
    return rows
