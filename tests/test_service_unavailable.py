"""A store that cannot take writes, against a real collector process: read-only, full, and the
writer lock held by another process.

Each answers a write with 503, a JSON reason and ``Retry-After``, stores nothing of it, and
``/v1/health`` says ``degraded`` with the reason; once the fault is gone the same submission is
stored. Root is not stopped by ``chmod``, so as root the store is made read-only (or full) by the
store's test hook, ``PLDP_STORE_FAULT`` (:data:`pldp.service.store.FAULT_ENV`): SQLite then opens
it read-only, as it opens a file it may not write (or caps it at the pages it has, as on a full
disk). As any other user the test makes the file and its directory read-only with ``chmod``.
"""

from __future__ import annotations

import http.client
import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.service import faults, store
from tests.service_server import Server

SPEC = Spec.from_mechanism(pldp.KRR(1.0, 10), question="faults?")


def _call(server: Server, method: str, path: str, body: bytes | None = None, token: str | None = None) -> Any:
    """``(status, headers, JSON body, seconds)`` of one request."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
    started = time.monotonic()
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    took = time.monotonic() - started
    assert resp.getheader("content-type") == "application/json", (resp.status, data[:300])
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, json.loads(data), took


def _batch(n: int, seed: int) -> bytes:
    return json.dumps(Client(SPEC).reports(np.random.default_rng(seed).integers(0, 10, n)).to_json()).encode()


def _stored(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM reports").fetchone()[0])
    finally:
        conn.close()


def _refused(server: Server, body: bytes, code: str, words: str) -> dict[str, Any]:
    """Submit ``body``: a 503 with the JSON ``code``, a reason with ``words``, and ``Retry-After``."""
    status, headers, answer, _ = _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", body)
    assert status == 503 and answer["error"] == code and words in answer["reason"], answer
    assert "nothing was stored" in answer["reason"] and int(headers["retry-after"]) >= 1
    return answer


def _degraded(server: Server, words: str) -> None:
    status, _, health, _ = _call(server, "GET", "/v1/health")
    assert status == 200 and health["status"] == "degraded" and words in health["reason"], health


def _healthy(server: Server) -> None:
    status, _, health, _ = _call(server, "GET", "/v1/health")
    assert status == 200 and health == {"status": "ok", "schema": store.SCHEMA_VERSION}, health


def _started(tmp_path: Path) -> Server:
    """A collector on a new store with the campaign and one stored batch of 100 reports."""
    server = Server(tmp_path / "s.db").start()
    server.admin().create_campaign(SPEC)
    assert _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", _batch(100, 1))[:1] == (200,)
    _healthy(server)
    return server


def _set_mode(paths: list[Path], mode: int) -> None:
    for p in paths:
        if p.exists():
            p.chmod(mode)


def test_a_read_only_store_answers_503_with_its_reason_and_health_says_degraded(tmp_path: Path) -> None:
    server = _started(tmp_path)
    server.stop()
    db, root = server.db, os.geteuid() == 0
    files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
    if root:
        server.env[store.FAULT_ENV] = "readonly"
    else:
        _set_mode(files, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        _set_mode([db.parent], stat.S_IRUSR | stat.S_IXUSR)
    body = _batch(500, 2)
    try:
        server.start()
        _degraded(server, "read-only")
        _refused(server, body, "store_unavailable", "read-only")
        status, headers, answer, _ = _call(server, "POST", "/v1/campaigns", SPEC.to_json().encode(), server.admin_token)
        assert status in (200, 503), answer  # the campaign exists: nothing to write
        other = Spec.from_mechanism(pldp.KRR(1.0, 11), question="another")
        status, headers, answer, _ = _call(
            server, "POST", "/v1/campaigns", other.to_json().encode(), server.admin_token
        )
        assert status == 503 and "read-only" in answer["reason"] and "retry-after" in headers, answer
        assert _call(server, "GET", f"/v1/campaigns/{SPEC.id}/spec")[0] == 200  # reads go on
        _degraded(server, "read-only")
        server.stop()
    finally:
        server.stop()
        server.env.pop(store.FAULT_ENV, None)
        _set_mode([db.parent], stat.S_IRWXU)
        _set_mode(files, stat.S_IRUSR | stat.S_IWUSR)
    assert _stored(db) == 100
    with server.start():
        _healthy(server)
        assert _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", body)[2] == {"accepted": 500, "duplicates": 0}
    assert _stored(db) == 600


def test_a_full_store_answers_503_and_stores_nothing_of_the_batch(tmp_path: Path) -> None:
    """The hook caps the store at the pages it has (``PRAGMA max_page_count``), as a full disk
    would: a batch needs new pages, and SQLite refuses them (``SQLITE_FULL``) inside the job."""
    server = _started(tmp_path)
    server.stop()
    server.env[store.FAULT_ENV] = "full"
    body = _batch(3_000, 3)
    try:
        server.start()
        _degraded(server, "full")
        _refused(server, body, "store_unavailable", "full")
        _degraded(server, "full")
    finally:
        server.stop()
        server.env.pop(store.FAULT_ENV)
    assert _stored(server.db) == 100
    with server.start():
        _healthy(server)
        assert _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", body)[2] == {
            "accepted": 3_000,
            "duplicates": 0,
        }
    assert _stored(server.db) == 3_100


_HOLD = """
import fcntl, sqlite3, sys
kind, path = sys.argv[1], sys.argv[2]
if kind == "flock":
    held = open(path + "-writer.lock", "a+b")
    fcntl.flock(held, fcntl.LOCK_EX)
else:  # SQLite's own write lock, by a connection that knows nothing of the writer lock
    held = sqlite3.connect(path, isolation_level=None)
    held.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("lock", ["flock", "sqlite"])
def test_a_writer_lock_held_elsewhere_is_a_503_within_the_timeout_and_then_the_batch_is_stored(
    lock: str, tmp_path: Path
) -> None:
    """Another process holds ``<db>-writer.lock`` (or SQLite's write lock): the submission is
    answered 503 ``store_busy`` within :data:`~pldp.service.faults.LOCK_TIMEOUT` (5 s), not after
    40 s or never; once the lock is free the same submission is stored, once."""
    server = _started(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, lock, str(server.db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    body = _batch(400, 4)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        status, headers, answer, took = _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", body)
        assert status == 503 and answer["error"] == "store_busy" and headers["retry-after"] == "1", answer
        assert faults.LOCK_TIMEOUT - 0.5 <= took <= faults.LOCK_TIMEOUT + 2.0, took
        if lock == "flock":
            _degraded(server, "writer lock")
        assert _stored(server.db) == 100
    finally:
        holder.communicate(b"", timeout=10)  # the holder exits: the lock is free
    try:
        status, _, answer, took = _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", body)
        assert status == 200 and answer == {"accepted": 400, "duplicates": 0} and took < 2.0, (answer, took)
        _healthy(server)
        assert _stored(server.db) == 500
    finally:
        server.stop()


def test_a_collector_process_starts_once_and_stops_every_time(tmp_path: Path) -> None:
    """``with server.start():`` once started a second process that lost the port and left the first
    one running after the test (found as stray collectors after the suite)."""
    server = Server(tmp_path / "s.db")
    with server.start():
        first = server.proc
        assert first is not None and server.running
        with pytest.raises(RuntimeError, match="already running"):
            server.start()
        assert server.proc is first
    assert not server.running and first.poll() is not None


def test_a_collector_that_does_not_start_in_time_is_not_left_running(tmp_path: Path) -> None:
    """A start that timed out used to leave the server (and the workers it kept respawning) running
    with no one to stop it: found as stray collectors eating the CPU after a benchmark on a loaded
    machine gave up on them."""
    server = Server(tmp_path / "s.db", "--workers", "2")
    with pytest.raises(TimeoutError, match="did not start"):
        server.start(timeout=0.05)
    assert server.proc is not None and server.proc.poll() is not None
    with pytest.raises(ProcessLookupError):  # its session, workers included, is gone
        os.killpg(server.proc.pid, 0)
