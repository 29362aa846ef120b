"""The collector's embedded store: one SQLite file in WAL mode, versioned and migrated forward.

Tables (schema version :data:`SCHEMA_VERSION`, kept in ``PRAGMA user_version``):

``campaigns(id, spec, created_at, closed_at)``
    A campaign is a verified spec; its id is the spec id, so a campaign's parameters can never
    change under it (a new parameter is a new spec, hence a new campaign).
``tokens(hash, role, label, created_at)`` and ``grants(token_hash, campaign_id)``
    Bearer tokens, stored only as SHA-256 hashes (:mod:`pldp.service.auth`); an analyst token
    reads the campaigns it is granted.
``reports(campaign_id, report_id, payload, received_day)``
    Every accepted report: its 16-byte id (the primary key with the campaign, which makes a
    retried report count once) and its payload as compact JSON (``docs/wire-format.md`` §4).
``tallies(campaign_id, n, tally)``
    Each campaign's running tally (:meth:`pldp.tally.BaseTally.to_dict` as JSON), updated in the
    same transaction as the reports it counts, so an estimate never scans reports and always
    equals a recount of them.

Durability: ``journal_mode=WAL`` with ``synchronous=FULL``, so a transaction is on disk when
``COMMIT`` returns; the collector acknowledges a batch only after that (:mod:`pldp.service.writer`).
Readers use their own connections and never block the writer (WAL).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pldp.deploy import Spec

__all__ = ["SCHEMA_VERSION", "CampaignRow", "SchemaError", "connect", "migrate"]

#: The schema version this code writes; older files are migrated forward on open.
SCHEMA_VERSION = 1

#: Forward migrations: ``MIGRATIONS[v]`` takes a file from version ``v`` to ``v + 1``.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE campaigns (
        id TEXT PRIMARY KEY,
        spec TEXT NOT NULL,
        created_at REAL NOT NULL,
        closed_at REAL
    );
    CREATE TABLE tokens (
        hash BLOB PRIMARY KEY,
        role TEXT NOT NULL CHECK (role IN ('admin', 'analyst')),
        label TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE TABLE grants (
        token_hash BLOB NOT NULL REFERENCES tokens(hash),
        campaign_id TEXT NOT NULL REFERENCES campaigns(id),
        PRIMARY KEY (token_hash, campaign_id)
    ) WITHOUT ROWID;
    CREATE TABLE reports (
        campaign_id TEXT NOT NULL REFERENCES campaigns(id),
        report_id BLOB NOT NULL,
        payload TEXT NOT NULL,
        received_day INTEGER NOT NULL,
        PRIMARY KEY (campaign_id, report_id)
    ) WITHOUT ROWID;
    CREATE TABLE tallies (
        campaign_id TEXT PRIMARY KEY REFERENCES campaigns(id),
        n INTEGER NOT NULL,
        tally TEXT NOT NULL
    );
    """,
)


class SchemaError(RuntimeError):
    """The database file was written by a newer pldp (its schema version is ahead of this code)."""


def connect(path: str | Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection to the store at ``path`` in WAL mode with durable commits.

    The connection is in autocommit mode (``isolation_level=None``): transactions are explicit
    (``BEGIN IMMEDIATE`` in the writer), so nothing is committed behind the writer's back.
    """
    uri = f"file:{Path(path)}?mode=ro" if readonly else str(Path(path))
    conn = sqlite3.connect(uri, uri=readonly, isolation_level=None, check_same_thread=False, timeout=30.0)
    conn.execute("PRAGMA busy_timeout = 30000")
    if not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
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


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def today() -> int:
    """Days since 1970-01-01 (UTC): the partition of a report received now."""
    return int(time.time() // 86400)


@dataclass(frozen=True)
class CampaignRow:
    """A campaign as stored."""

    id: str
    spec_text: str
    created_at: float
    closed_at: float | None

    @property
    def closed(self) -> bool:
        return self.closed_at is not None

    def spec(self) -> Spec:
        return Spec.from_json(self.spec_text)


def campaign(conn: sqlite3.Connection, campaign_id: str) -> CampaignRow | None:
    row = conn.execute("SELECT id, spec, created_at, closed_at FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    return None if row is None else CampaignRow(*row)


def campaigns(conn: sqlite3.Connection, ids: list[str] | None = None) -> list[CampaignRow]:
    """Every campaign (or those of ``ids``), oldest first."""
    rows = conn.execute("SELECT id, spec, created_at, closed_at FROM campaigns ORDER BY created_at, id").fetchall()
    out = [CampaignRow(*r) for r in rows]
    return out if ids is None else [c for c in out if c.id in set(ids)]


def tally_json(conn: sqlite3.Connection, campaign_id: str) -> dict[str, Any]:
    row = conn.execute("SELECT tally FROM tallies WHERE campaign_id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise KeyError(campaign_id)
    return json.loads(row[0])


def report_count(conn: sqlite3.Connection, campaign_id: str) -> int:
    row = conn.execute("SELECT n FROM tallies WHERE campaign_id = ?", (campaign_id,)).fetchone()
    return 0 if row is None else int(row[0])


def stored_reports(conn: sqlite3.Connection, campaign_id: str) -> Iterator[tuple[bytes, str, int]]:
    """``(report id, payload JSON, received day)`` of every stored report, in report-id order."""
    yield from conn.execute(
        "SELECT report_id, payload, received_day FROM reports WHERE campaign_id = ? ORDER BY report_id",
        (campaign_id,),
    )
