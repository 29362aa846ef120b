"""SIGKILL in mid-stream: no acknowledged report lost, none counted twice, no partial batch.

Four client threads stream batches of reports to a real collector process. When the number of
acknowledged batches reaches a randomly drawn share of the total, the server is killed with SIGKILL
(no shutdown code runs), the file is inspected as the crash left it, the server is restarted on
the same file, and the clients retry every batch that was not acknowledged (same report ids).
This is repeated for several kills; then every acknowledged report is stored exactly once, every
batch is stored whole or not at all, and the stored tally equals a recount of the stored reports.

The kills follow the acknowledgements, not the clock, so that they fall mid-stream on a fast
machine as on a slow one; each client's last batch waits for the last kill, so that no kill can
come after the end of the streams.
"""

from __future__ import annotations

import functools
import http.client
import json
import random
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec, decode
from pldp.deploy.remote import RemoteError
from tests.service_server import Server, stored_and_recount, wait_until

CLIENTS = 4
BATCHES = 60  # per client
PER_BATCH = 250
KILLS = 3
DEADLINE_S = 120.0


def _stream(
    server: Server, spec: Spec, batches: list, acked: list[int], stop: threading.Event, last: threading.Event
) -> None:
    """Send ``batches`` in order; retry one until it is acknowledged (the server may be down). The
    last batch waits for ``last``."""
    client = server.client()
    for i, batch in enumerate(batches):
        body = json.dumps(batch.to_json(), separators=(",", ":"))
        if i == len(batches) - 1:
            last.wait(DEADLINE_S)
        while not stop.is_set():
            try:
                out = client.submit(spec.id, body)
            except (OSError, http.client.HTTPException):
                client.close()
                time.sleep(0.02)
                continue
            except RemoteError as exc:  # 503 while the store is unavailable: retry; anything else is a bug
                assert exc.status >= 500, exc
                time.sleep(0.02)
                continue
            assert out["accepted"] + out["duplicates"] == len(batch)
            acked.append(i)
            break
        time.sleep(random.random() * 0.004)


def _stored_ids(db: Path, campaign_id: str) -> set[bytes]:
    conn = sqlite3.connect(db)  # as the crash left it (WAL replayed on open)
    try:
        rows = conn.execute(
            "SELECT report_id FROM reports r JOIN campaigns c ON c.key = r.campaign_key WHERE c.id = ?", (campaign_id,)
        ).fetchall()
    finally:
        conn.close()
    return {bytes(r[0]) for r in rows}


def _kill_points(rng: np.random.Generator) -> list[int]:
    """How many batches are acknowledged when each kill comes: ``KILLS`` distinct numbers drawn
    between 5 % and 85 % of all batches, in order."""
    total = CLIENTS * BATCHES
    return sorted(int(k) for k in rng.choice(np.arange(total // 20, total * 17 // 20), KILLS, replace=False))


def _acknowledged(acked: list[list[int]], count: int) -> bool:
    """Whether ``count`` batches, or more, are acknowledged."""
    return sum(len(a) for a in acked) >= count


def _whole_or_nothing(stored: set[bytes], batches: list) -> tuple[int, int]:
    """(batches stored whole, batches not stored at all); fails on a partial one."""
    whole = none = 0
    for b in batches:
        ids = {bytes(r) for r in b.ids}
        inside = len(ids & stored)
        assert inside in (0, len(ids)), f"a batch stored in part: {inside} of {len(ids)}"
        whole += inside == len(ids)
        none += inside == 0
    return whole, none


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_sigkill_mid_stream_loses_no_acknowledged_report(workers: int, tmp_path: Path) -> None:
    """With two worker processes as well: they share the file, and each one's cached tally must
    not overwrite what the other committed (the writer reloads it when ``PRAGMA data_version`` moves)."""
    rng = np.random.default_rng(17 + workers)
    random.seed(17 + workers)
    spec = Spec.from_mechanism(pldp.KRR(1.0, 10), question="faults?")
    server = Server(tmp_path / "faults.db", "--workers", str(workers)).start()
    stop, last = threading.Event(), threading.Event()
    try:
        server.admin().create_campaign(spec)
        streams = [
            [Client(spec).reports(rng.integers(0, 10, PER_BATCH)) for _ in range(BATCHES)] for _ in range(CLIENTS)
        ]
        acked: list[list[int]] = [[] for _ in range(CLIENTS)]
        threads = [
            threading.Thread(target=_stream, args=(server, spec, streams[c], acked[c], stop, last), daemon=True)
            for c in range(CLIENTS)
        ]
        started = time.monotonic()
        for t in threads:
            t.start()
        kills = []
        for point in _kill_points(rng):
            left = started + DEADLINE_S - time.monotonic()
            wait_until(functools.partial(_acknowledged, acked, point), left, 0.001, f"{point} batches acknowledged")
            acked_before = [list(a) for a in acked]
            server.kill()
            stored = _stored_ids(server.db, spec.id)
            # every batch acknowledged before the kill is on disk, whole; none is there in part
            for c in range(CLIENTS):
                for i in acked_before[c]:
                    assert {bytes(r) for r in streams[c][i].ids} <= stored, "an acknowledged batch was lost"
                _whole_or_nothing(stored, streams[c])
            kills.append((sum(len(a) for a in acked_before), len(stored)))
            server.start()
        last.set()
        for t in threads:
            t.join(max(1.0, DEADLINE_S - (time.monotonic() - started)))
        stop.set()
        assert not any(t.is_alive() for t in threads), "the clients did not finish in time"
        assert all(len(a) == BATCHES for a in acked)
        print(f"kills (batches acknowledged, reports stored): {kills}")
        assert all(0 < k[0] < CLIENTS * BATCHES for k in kills), f"a kill fell outside the streams: {kills}"
    finally:
        stop.set()
        last.set()
        server.stop()
    # at the end: everything stored exactly once, and the tally is a recount of what is stored
    stored = _stored_ids(server.db, spec.id)
    assert len(stored) == CLIENTS * BATCHES * PER_BATCH
    for c in range(CLIENTS):
        assert _whole_or_nothing(stored, streams[c]) == (BATCHES, 0)
    stored_tally, tally = stored_and_recount(server.db, spec)
    local = functools.reduce(lambda a, b: a.merge(b), (decode(spec, b) for stream in streams for b in stream))
    assert stored_tally == tally == local
