"""The collector's embedded store: one SQLite file in WAL mode, versioned and migrated forward.

Tables (schema version :data:`SCHEMA_VERSION`, kept in ``PRAGMA user_version``):

``campaigns(key, id, spec, created_at, closed_at)``
    A campaign is a verified spec; its id is the spec id, so a campaign's parameters can never
    change under it (a new parameter is a new spec, hence a new campaign). ``key`` is a small
    integer that the reports table uses instead of the 32-digit id.
``tokens(hash, role, label, created_at)`` and ``grants(token_hash, campaign_id)``
    Bearer tokens, stored only as SHA-256 hashes (:mod:`pldp.service.auth`); an analyst token
    reads the campaigns it is granted.
``reports(campaign_key, seq, report_id, row, received_day)``
    Every accepted report in arrival order (``seq`` counts a campaign's reports from 1, so every
    insert appends to the table's B-tree), with its 16-byte id (unique in a campaign: the writer
    finds stored ids in memory, :mod:`pldp.service.seen`, which makes a retried report count once)
    and its payload as one fixed-width *row*: the payload columns of
    the wire format's Arrow schema (``docs/wire-format.md`` §5, :func:`pldp.deploy.wire.columns_of`)
    in order, an item or level as a little-endian int32 (-1: none), bits as their packed bytes
    (:func:`row_table`, :func:`batch_of`). Export and recount read them back without any JSON.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pldp.deploy import ReportBatch, Spec, decode
from pldp.deploy.wire import columns_of

__all__ = [
    "SCHEMA_VERSION",
    "CampaignRow",
    "SchemaError",
    "batch_of",
    "connect",
    "insert_reports",
    "migrate",
    "row_table",
    "stored_batch",
]

#: The schema version this code writes; older files are migrated forward on open.
SCHEMA_VERSION = 2

#: Forward migrations: ``MIGRATIONS[v]`` takes a file from version ``v`` to ``v + 1``.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE campaigns (
        key INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
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
        campaign_key INTEGER NOT NULL REFERENCES campaigns(key),
        report_id BLOB NOT NULL,
        row BLOB NOT NULL,
        received_day INTEGER NOT NULL,
        PRIMARY KEY (campaign_key, report_id)
    ) WITHOUT ROWID;
    CREATE TABLE tallies (
        campaign_id TEXT PRIMARY KEY REFERENCES campaigns(id),
        n INTEGER NOT NULL,
        tally TEXT NOT NULL
    );
    """,
    # v2: reports in arrival order (every insert an append; ids are found in memory, pldp.service.seen)
    """
    CREATE TABLE reports_by_seq (
        campaign_key INTEGER NOT NULL REFERENCES campaigns(key),
        seq INTEGER NOT NULL,
        report_id BLOB NOT NULL,
        row BLOB NOT NULL,
        received_day INTEGER NOT NULL,
        PRIMARY KEY (campaign_key, seq)
    ) WITHOUT ROWID;
    INSERT INTO reports_by_seq
        SELECT campaign_key, row_number() OVER (PARTITION BY campaign_key ORDER BY received_day, report_id),
               report_id, row, received_day
        FROM reports;
    DROP TABLE reports;
    ALTER TABLE reports_by_seq RENAME TO reports;
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
        conn.execute("PRAGMA page_size = 16384")  # a new file only: fewer, larger pages per commit
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA cache_size = -65536")  # 64 MiB: the report index's hot pages stay in memory
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA temp_store = MEMORY")  # statement journals of savepoints stay in memory
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


def empty_tally(spec: Spec) -> Any:
    """The tally of no reports of ``spec`` (its type is the oracle's tally type)."""
    return decode(spec, {"format": "pldp.batch/1", "spec": spec.id, "reports": []})


def stored_tally(conn: sqlite3.Connection, spec: Spec) -> Any:
    """The campaign's running tally as committed."""
    row = conn.execute("SELECT tally FROM tallies WHERE campaign_id = ?", (spec.id,)).fetchone()
    if row is None:
        raise KeyError(spec.id)
    return type(empty_tally(spec)).from_dict(json.loads(row[0]), spec.id)


def stored_count(conn: sqlite3.Connection, campaign_id: str) -> int:
    """Reports stored for the campaign (a scan of its rows; :func:`report_count` reads the tally)."""
    row = conn.execute(
        "SELECT COUNT(*) FROM reports r JOIN campaigns c ON c.key = r.campaign_key WHERE c.id = ?", (campaign_id,)
    ).fetchone()
    return int(row[0])


def report_count(conn: sqlite3.Connection, campaign_id: str) -> int:
    row = conn.execute("SELECT n FROM tallies WHERE campaign_id = ?", (campaign_id,)).fetchone()
    return 0 if row is None else int(row[0])


def _widths(root: Any) -> list[tuple[str, str, int]]:
    return [(c.name, c.kind, c.nbytes if c.kind == "bits" else 4) for c in columns_of(root)]


def row_table(batch: ReportBatch) -> tuple[bytes, int]:
    """Every report's payload columns as fixed-width rows, concatenated, and the width in bytes
    (see module doc; report ``i`` is bytes ``[i * width, (i + 1) * width)``)."""
    n = len(batch)
    parts = []
    for name, kind, _ in _widths(batch.root):
        col = batch.columns[name]
        parts.append(col if kind == "bits" else col.astype("<i4").view(np.uint8).reshape(n, 4))
    table = np.ascontiguousarray(np.concatenate(parts, axis=1) if parts else np.zeros((n, 0), np.uint8))
    return table.tobytes(), table.shape[1]


def batch_of(spec: Spec, ids: bytes, rows: bytes) -> ReportBatch:
    """The :class:`ReportBatch` of concatenated report ids and rows (inverse of :func:`row_table`)."""
    n = len(ids) // 16
    layout = _widths(spec.root)
    width = sum(w for _, _, w in layout)
    table = np.frombuffer(rows, dtype=np.uint8).reshape(n, width)
    cols: dict[str, np.ndarray] = {}
    at = 0
    for name, kind, w in layout:
        block = table[:, at : at + w]
        cols[name] = block.copy() if kind == "bits" else block.copy().view("<i4").reshape(n).astype(np.int64)
        at += w
    id_arr = np.frombuffer(ids, dtype=np.uint8).reshape(n, 16).copy()
    return ReportBatch(spec.id, id_arr, cols, spec.root)


#: One statement inserts a whole batch from two blobs (ids, rows): SQLite splits them with
#: ``substr`` over a counter, so the batch costs one call (one release of Python's GIL) instead of
#: one bound row per report.
_INSERT = """
WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k + 1 < :n)
INSERT INTO reports (campaign_key, seq, report_id, row, received_day)
SELECT :key, :first + k, substr(:ids, 16 * k + 1, 16), substr(:rows, :width * k + 1, :width), :day FROM i
"""


def insert_reports(
    conn: sqlite3.Connection, key: int, first: int, ids: bytes, rows: bytes, width: int, day: int
) -> None:
    """Append reports (concatenated 16-byte ids and ``width``-byte rows) to the campaign with
    ``key``, numbered ``first, first + 1, ...``; a ``seq`` already used is an integrity error."""
    n = len(ids) // 16
    if n:
        conn.execute(
            _INSERT, {"n": n, "key": key, "first": first, "ids": ids, "rows": rows, "width": width, "day": day}
        )


def ids_since(conn: sqlite3.Connection, key: int, after: int) -> tuple[bytes, np.ndarray]:
    """The ids (concatenated) and ``seq`` of the campaign's reports numbered above ``after``."""
    # one row back, not one per report: both lists are concatenated in the same pass over the rows
    seqs, ids = conn.execute(
        "SELECT group_concat(seq), group_concat(hex(report_id), '') FROM reports WHERE campaign_key = ? AND seq > ?",
        (key, after),
    ).fetchone()
    if seqs is None:
        return b"", np.zeros(0, dtype=np.int64)
    return bytes.fromhex(ids), np.array(seqs.split(","), dtype=np.int64)


def rows_at(conn: sqlite3.Connection, key: int, seqs: list[int]) -> dict[int, bytes]:
    """The stored rows of the campaign's reports numbered ``seqs``."""
    out: dict[int, bytes] = {}
    for i in range(0, len(seqs), 500):  # bound parameters per query stay below SQLite's limit
        chunk = seqs[i : i + 500]
        found = conn.execute(
            f"SELECT seq, row FROM reports WHERE campaign_key = ? AND seq IN ({','.join('?' * len(chunk))})",
            (key, *chunk),
        )
        out.update((int(a), bytes(b)) for a, b in found)
    return out


def stored_batch(conn: sqlite3.Connection, spec: Spec) -> ReportBatch:
    """Every stored report of the campaign of ``spec``, in arrival order."""
    rows = conn.execute(
        "SELECT r.report_id, r.row FROM reports r JOIN campaigns c ON c.key = r.campaign_key "
        "WHERE c.id = ? ORDER BY r.seq",
        (spec.id,),
    ).fetchall()
    return batch_of(spec, b"".join(r[0] for r in rows), b"".join(r[1] for r in rows))
