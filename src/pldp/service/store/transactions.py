"""The statements that bound the collector's transactions, and what its health and recovery ask
SQLite: each function runs the statement its name says (a few, named for what they do, run a short
fixed sequence: :func:`configure_writer`, :func:`page_limits`, :func:`write_locked`), so that the writer
(:mod:`pldp.service.writer`), the index of stored ids (:mod:`pldp.service.seen`) and the faults
(:mod:`pldp.service.faults`) keep their transactions' boundaries and order in their own code while
the SQL lives here.

A transaction of the writer, in its order: :func:`begin_immediate`, :func:`data_version`, per job
:func:`savepoint` then :func:`release` (or :func:`rollback_to` and :func:`release`), the tallies
(:func:`pldp.service.store.tallies.write_tally`), :func:`commit` (or :func:`rollback`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "begin_immediate",
    "busy_timeout",
    "checkpoint",
    "commit",
    "configure_writer",
    "data_version",
    "fault_kind",
    "page_limits",
    "read_snapshot",
    "release",
    "rollback",
    "rollback_to",
    "savepoint",
    "set_busy_timeout",
    "touch",
    "write_locked",
]


def begin_immediate(conn: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``: a write transaction, SQLite's write lock taken now."""
    conn.execute("BEGIN IMMEDIATE")


def commit(conn: sqlite3.Connection) -> None:
    conn.execute("COMMIT")


def rollback(conn: sqlite3.Connection) -> None:
    conn.execute("ROLLBACK")


def savepoint(conn: sqlite3.Connection) -> None:
    """``SAVEPOINT job``: one job of the writer's group."""
    conn.execute("SAVEPOINT job")


def rollback_to(conn: sqlite3.Connection) -> None:
    """``ROLLBACK TO job``: undo the job alone (then :func:`release` it)."""
    conn.execute("ROLLBACK TO job")


def release(conn: sqlite3.Connection) -> None:
    """``RELEASE job``."""
    conn.execute("RELEASE job")


@contextmanager
def read_snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """A read transaction (``BEGIN`` ... ``COMMIT``, the ``COMMIT`` whatever happens inside): every
    read in it sees the same commit. ``conn`` must not be in a transaction."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def data_version(conn: sqlite3.Connection) -> int:
    """``PRAGMA data_version``: it moves when another connection commits."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def busy_timeout(conn: sqlite3.Connection) -> int:
    """``PRAGMA busy_timeout`` (milliseconds)."""
    return int(conn.execute("PRAGMA busy_timeout").fetchone()[0])


def set_busy_timeout(conn: sqlite3.Connection, ms: int) -> None:
    conn.execute(f"PRAGMA busy_timeout = {int(ms)}")


def configure_writer(conn: sqlite3.Connection, lock_timeout: float) -> None:
    """The writing connection's settings: wait ``lock_timeout`` seconds for SQLite's write lock, and
    no checkpoint in a ``COMMIT`` (the writer's checkpointer runs them)."""
    conn.execute(f"PRAGMA busy_timeout = {int(lock_timeout * 1000)}")
    conn.execute("PRAGMA wal_autocheckpoint = 0")  # checkpoints run in the writer's checkpointer, not in a COMMIT


def touch(conn: sqlite3.Connection) -> None:
    """A write that changes nothing (the writer's probe, rolled back): fails on a store that takes no write."""
    conn.execute("UPDATE settings SET value = value WHERE name = 'store_id'")


def checkpoint(conn: sqlite3.Connection, mode: str) -> None:
    """``PRAGMA wal_checkpoint(<mode>)`` (``PASSIVE`` or ``TRUNCATE``)."""
    if mode not in ("PASSIVE", "TRUNCATE"):
        raise ValueError(f"a checkpoint is PASSIVE or TRUNCATE, not {mode!r}")
    conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()


def page_limits(conn: sqlite3.Connection) -> tuple[int, int]:
    """The store's pages and the most it may have (``page_count``, ``max_page_count``)."""
    pages, cap = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "max_page_count"))
    return pages, cap


def write_locked(conn: sqlite3.Connection) -> bool:
    """Whether another connection holds SQLite's write lock on the store now: ``BEGIN IMMEDIATE``
    without waiting (busy timeout 0), rolled back at once; False if ``conn`` cannot write at all."""
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        return code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
    return False


#: SQLite's primary result codes that are the store's fault, with what the client is told.
_KINDS = {
    sqlite3.SQLITE_READONLY: ("store_unavailable", "the store is read-only"),
    sqlite3.SQLITE_FULL: ("store_unavailable", "the store is full"),
    sqlite3.SQLITE_IOERR: ("store_unavailable", "the store could not be written"),
    sqlite3.SQLITE_CANTOPEN: ("store_unavailable", "the store could not be opened"),
    sqlite3.SQLITE_PERM: ("store_unavailable", "the store may not be written"),
    sqlite3.SQLITE_NOMEM: ("store_unavailable", "the store ran out of memory"),
    sqlite3.SQLITE_CORRUPT: ("store_unavailable", "the store is damaged"),
    sqlite3.SQLITE_NOTADB: ("store_unavailable", "the store is not a database"),
    sqlite3.SQLITE_PROTOCOL: ("store_unavailable", "the store's locks failed"),
    sqlite3.SQLITE_BUSY: ("store_busy", "another connection holds the store's write lock"),
    sqlite3.SQLITE_LOCKED: ("store_busy", "another connection holds the store's write lock"),
}


def fault_kind(exc: BaseException) -> tuple[str, str] | None:
    """``(code, reason)`` if ``exc`` is an SQLite error that is the store's fault (by its primary
    result code: read-only, full, I/O, busy, ...), else None (:func:`pldp.service.faults.store_error`)."""
    code = getattr(exc, "sqlite_errorcode", None) if isinstance(exc, sqlite3.Error) else None
    return _KINDS.get(code & 0xFF) if isinstance(code, int) else None
