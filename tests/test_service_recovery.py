"""A store that comes back, against a real collector process (1 and 2 workers), and a health check
that tells the truth while SQLite's write lock is held elsewhere.

A collector started on a read-only store used to refuse every write (503 ``store_unavailable``)
and say ``degraded`` until it was restarted, even once the store could be written again: its
connections had been opened read-only for good. Now each worker's writer reopens the store with
backoff (:data:`pldp.service.writer.RETRY_MAX`), and health says ``ok`` again once writes work.

The store is made read-only as the machine would: ``chmod`` for a user, ``chattr +i`` (immutable:
root too is refused) for root, or else the store's test hook with a flag file
(``PLDP_STORE_FAULT=readonly:<file>``, read-only while the file exists).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import pldp
from pldp.deploy import Spec

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from pldp.service import faults, store, writer
from tests.service_server import Server, stored_and_recount, wait_until
from tests.test_service_unavailable import SPEC, _batch, _call, _stored

#: Seconds within which a recovered store must take writes again (the writer's longest backoff, and slack).
RECOVERY = writer.RETRY_MAX + 5.0


def _chattr_works(where: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    probe = where / "chattr-probe"
    probe.touch()
    try:
        done = subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode == 0
        if done:
            subprocess.run(["chattr", "-i", str(probe)], check=True)
        return done
    finally:
        probe.unlink()


@contextlib.contextmanager
def _read_only(server: Server) -> Iterator[contextlib.ExitStack]:
    """Make the store (file and directory) read-only; the yielded stack's ``close()`` makes it writable."""
    db = server.db
    files = [p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()]
    stack = contextlib.ExitStack()
    if os.geteuid() != 0:
        for p, mode in [(p, stat.S_IRUSR | stat.S_IRGRP) for p in files] + [(db.parent, stat.S_IRUSR | stat.S_IXUSR)]:
            p.chmod(mode)
            stack.callback(p.chmod, stat.S_IRWXU if p.is_dir() else stat.S_IRUSR | stat.S_IWUSR)
    elif _chattr_works(db.parent):
        for p in [*files, db.parent]:
            subprocess.run(["chattr", "+i", str(p)], check=True)
            stack.callback(subprocess.run, ["chattr", "-i", str(p)], check=True)
    else:
        flag = db.parent.parent / f"{db.name}.readonly"
        flag.touch()
        server.env[store.FAULT_ENV] = f"readonly:{flag}"
        stack.callback(flag.unlink)
    with stack:
        yield stack


def _health(server: Server) -> dict[str, object]:
    status, _, answer, took = _call(server, "GET", "/v1/health")
    assert status == 200 and took < 2.0, (status, answer, took)
    return answer  # type: ignore[no-any-return]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_collector_started_on_a_read_only_store_recovers_once_it_is_writable(workers: int, tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    server = Server(tmp_path / "store" / "s.db", "--workers", str(workers))
    with server.start():
        server.admin().create_campaign(SPEC)
        assert _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", _batch(100, 1))[0] == 200
    bodies = [_batch(50, 10 + i) for i in range(8)]
    try:
        with _read_only(server) as writable:
            server.start()
            for _ in range(2 * workers):  # every worker: refused, degraded
                status, _, answer, _ = _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", bodies[0])
                assert status == 503 and answer["error"] == "store_unavailable", answer
                health = _health(server)
                assert health["status"] == "degraded" and "read-only" in str(health["reason"]), health
            writable.close()  # the store can be written again; the collector is not restarted
            made_writable = time.monotonic()

            def recovered() -> list[dict[str, object]] | None:
                answers = [_health(server) for _ in range(4 * workers)]
                return None if any(a["status"] != "ok" for a in answers) else answers

            wait_until(recovered, timeout=RECOVERY, poll=0.2, why="health ok again")
            took = time.monotonic() - made_writable
            for body in bodies:  # both workers take writes (the first body was refused before)
                status, _, answer, _ = _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", body)
                assert status == 200 and answer == {"accepted": 50, "duplicates": 0}, answer
            for body in bodies[:2]:  # a retry counts once
                assert _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", body)[2] == {
                    "accepted": 0,
                    "duplicates": 50,
                }
            other = Spec.from_mechanism(pldp.KRR(1.0, 12), question="after recovery")
            status, _, answer, _ = _call(server, "POST", "/v1/campaigns", other.to_json().encode(), server.admin_token)
            assert status == 201, answer
            for _ in range(2 * workers):  # every worker's readers see what was written since
                assert _call(server, "GET", f"/v1/campaigns/{other.id}/spec")[0] == 200
            print(f"recovered in {took:.1f} s with {workers} worker(s)")
    finally:
        server.stop()
        server.env.pop(store.FAULT_ENV, None)
    assert _stored(server.db) == 100 + 8 * 50
    tally, recount = stored_and_recount(server.db, SPEC)
    assert tally.n == recount.n == 500 and tally == recount


_HOLD = """
import sqlite3, sys
held = sqlite3.connect(sys.argv[1], isolation_level=None)
held.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
"""


def test_health_is_degraded_while_another_connection_holds_the_write_lock(tmp_path: Path) -> None:
    """Another process holds SQLite's write lock (``BEGIN IMMEDIATE``, not the writer lock): each
    submission waits :data:`~pldp.service.faults.LOCK_TIMEOUT` and gets 503 ``store_busy``, and
    health used to say ``ok``. It says ``degraded`` now, at once (never waiting for the lock), and
    ``ok`` again once the lock is free."""
    server = Server(tmp_path / "s.db").start()
    try:
        _held_then_freed(server)
    finally:
        server.stop()  # also when an assertion failed (a collector was left running)
    assert _stored(server.db) == 100


def _held_then_freed(server: Server) -> None:
    server.admin().create_campaign(SPEC)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(server.db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    body = _batch(100, 2)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        status, _, answer, took = _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", body)
        assert status == 503 and answer["error"] == "store_busy", answer
        assert took >= faults.LOCK_TIMEOUT - 0.5, took
        for _ in range(3):
            health = _health(server)  # within 2 s, never the lock's 5 s
            assert health["status"] == "degraded" and "write lock" in str(health["reason"]), health
            time.sleep(0.5)
    finally:
        holder.communicate(b"", timeout=10)
    wait_until(lambda: _health(server)["status"] == "ok", timeout=5, why="health ok once the lock is free")
    status, _, answer, took = _call(server, "POST", f"/v1/campaigns/{SPEC.id}/reports", body)
    assert status == 200 and answer == {"accepted": 100, "duplicates": 0} and took < 2.0, (answer, took)
    assert _health(server)["status"] == "ok"
