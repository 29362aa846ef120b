"""Opening the store: a connection in WAL mode with durable commits, the schema's migrations, the
current day, and the store's id (:mod:`pldp.service.store`).

Every other module of the collector reaches SQLite through :mod:`pldp.service.store`; the names
:data:`Connection` and :data:`SQLiteError` are what they annotate and catch.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from pldp.deploy.files import parse_day
from pldp.service.store.schema import MIGRATIONS, SCHEMA_VERSION

__all__ = [
    "FAULT_ENV",
    "SCHEMA_VERSION",
    "TODAY_ENV",
    "Connection",
    "OperationalError",
    "SQLiteError",
    "SchemaError",
    "connect",
    "migrate",
    "store_id",
    "today",
]

#: A connection to the store (what the collector's modules hold and pass on).
Connection = sqlite3.Connection
#: Every error SQLite raises (a store that cannot be read or written, a failed statement).
SQLiteError = sqlite3.Error
#: SQLite's operational errors (a busy or read-only file, say).
OperationalError = sqlite3.OperationalError


class SchemaError(RuntimeError):
    """The database file was written by a newer pldp (its schema version is ahead of this code)."""


#: Test hook (fault injection), read by :func:`connect`: ``readonly`` opens every connection
#: read-only (as SQLite opens a file it may not write), ``full`` caps the store at the pages it has
#: (``PRAGMA max_page_count``, as a full disk). ``tests/test_service_faults.py`` uses it where
#: ``chmod`` cannot make a file read-only (as root); ``readonly:<file>`` is ``readonly`` while
#: ``<file>`` exists, so a test can make the store writable again under a running collector.
FAULT_ENV = "PLDP_STORE_FAULT"
_UNWRITABLE = (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN)  # open the store read-only then


def _fault() -> str:
    """The test hook's fault now (``readonly:<file>``: ``readonly`` while that file exists)."""
    fault = os.environ.get(FAULT_ENV, "")
    if fault.startswith("readonly:"):
        return "readonly" if Path(fault.split(":", 1)[1]).exists() else ""
    return fault


def _unwritable(path: Path) -> bool:
    """Whether the store's file, or its log's index, exists and may not be written. Asked with
    ``access``, never by opening the file: closing a descriptor of the store would drop every
    POSIX lock this process's connections hold on it (SQLite's locks)."""
    return any(where.exists() and not os.access(where, os.W_OK) for where in (path, Path(f"{path}-shm")))


def connect(path: str | Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection to the store at ``path`` in WAL mode with durable commits.

    The connection is in autocommit mode (``isolation_level=None``): transactions are explicit
    (``BEGIN IMMEDIATE`` in the writer), so nothing is committed behind the writer's back. A store
    that cannot be written is opened read-only (``mode=ro``; ``immutable=1`` when its directory
    cannot hold the write-ahead log's index either): it is read, and every write fails
    (:mod:`pldp.service.faults`).
    """
    fault = _fault()
    modes = ["ro"] if readonly or fault == "readonly" else [None, "ro", "ro&immutable=1"]
    if modes[0] is None and _unwritable(Path(path)):
        # A connection of this process that opens the log's index (-shm) read-only makes every
        # later one read-only as well while any of them is open (SQLite shares it per file): the
        # writer could never take writes again (pldp.service.writer). Without the index
        # (immutable) nothing is shared; that reads the file alone, which holds every report once
        # the log is empty (a collector checkpoints and empties it when it stops).
        wal = Path(f"{path}-wal")
        modes = ["ro&immutable=1"] if not wal.exists() or wal.stat().st_size == 0 else ["ro", "ro&immutable=1"]
    for mode in modes:
        uri = str(Path(path)) if mode is None else f"file:{Path(path)}?mode={mode}"
        conn = sqlite3.connect(uri, uri=mode is not None, isolation_level=None, check_same_thread=False, timeout=30.0)
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            if mode is None:
                conn.execute("PRAGMA page_size = 16384")  # a new file only: fewer, larger pages per commit
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA user_version").fetchone()  # reads the file: fails here if it cannot be opened
            break
        except sqlite3.OperationalError as exc:
            conn.close()
            if mode == modes[-1] or exc.sqlite_errorcode & 0xFF not in _UNWRITABLE:
                raise
    conn.execute("PRAGMA cache_size = -65536")  # 64 MiB: the report index's hot pages stay in memory
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA temp_store = MEMORY")  # statement journals of savepoints stay in memory
    if fault == "full":
        conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the file to :data:`SCHEMA_VERSION`, one migration per transaction; return the old version.

    Raises
    ------
    SchemaError
        When the file's version is newer than this code's.
    """
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise SchemaError(f"the database has schema version {version}; this pldp reads up to {SCHEMA_VERSION}")
    for v in range(version, SCHEMA_VERSION):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[v].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {v + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return version


#: An ISO date (``YYYY-MM-DD``) in this environment variable is taken as the current day by
#: :func:`today`: how tests and drills of retention make days pass without waiting for them.
TODAY_ENV = "PLDP_TODAY"


def today() -> int:
    """Days since 1970-01-01 (UTC): the partition of a report received now.

    The day is read from the clock unless the environment variable :data:`TODAY_ENV` holds an ISO
    date, which is then the current day (for tests and drills of ``--retain-days``; it is read at
    every call, so a collector started with it keeps that day until restarted).
    """
    fixed = os.environ.get(TODAY_ENV)
    if fixed:
        return parse_day(fixed)
    return int(time.time() // 86400)


def store_id(conn: sqlite3.Connection) -> str:
    """The store's random id (16 hex digits, made with the file), which names its report files."""
    return str(conn.execute("SELECT value FROM settings WHERE name = 'store_id'").fetchone()[0])
