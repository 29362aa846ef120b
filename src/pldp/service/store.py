"""The collector's embedded store: one SQLite file in WAL mode, versioned and migrated forward.

Tables (schema version :data:`SCHEMA_VERSION`, kept in ``PRAGMA user_version``; the migrations
that make them are in :mod:`pldp.service.schema`):

``campaigns(key, id, spec, created_at, closed_at, access, rounds, first_day, cap, resends, conflicts)``
    A campaign is a verified spec; its id is the spec id, so a campaign's parameters can never
    change under it (a new parameter is a new spec, hence a new campaign). ``key`` is a small
    integer that the reports table uses instead of the 32-digit id. ``access``: ``open`` or ``invited``.
    ``rounds``: ``once``, ``daily``, ``weekly`` or ``manual``, and ``first_day`` the UTC day
    its rounds count from (:mod:`pldp.service.rounds`). ``cap``: the most reports it takes (set at
    creation); ``resends``: reports sent again with a stored id (acknowledged as duplicates), and
    ``conflicts`` those of them with another payload (not stored: :mod:`pldp.service.collect`).
``rounds(campaign_key, round, opened_at)``
    The rounds 2, 3, ... that the admin opened in a ``manual`` campaign.
``tokens(hash, role, label, created_at, id, expires_at, revoked_at)`` and ``grants(token_hash, campaign_id)``
    Bearer tokens, stored only as SHA-256 hashes with a public ``id`` (:mod:`pldp.service.auth`).
``codes(hash, campaign_key, created_at, expires_at, revoked_at)``, ``code_uses(code_hash, round, report_id, used_at)``
    Respondent codes of invited campaigns (hashed) and the report each sent per round (:mod:`pldp.service.codes`).
``reports(campaign_key, seq, report_id, row, received_day, round)``
    Every accepted report in arrival order (``seq`` counts a campaign's reports from 1, so every
    insert appends to the table's B-tree), with its 16-byte id (unique in a campaign: the writer
    finds stored ids in memory, :mod:`pldp.service.seen`, which makes a retried report count once)
    and its payload as one fixed-width *row*: the payload columns of
    the wire format's Arrow schema (``docs/wire-format.md`` §5, :meth:`pldp.channel.Node.columns`)
    in order, an item or level as a little-endian int32 (-1: none), bits as their packed bytes
    (:func:`row_table`, :func:`batch_of`). Export and recount read them back without any JSON.
    ``round``: the campaign's round the report answers (1 in a campaign that does not recur).
``tallies(campaign_id, n, tally)``
    Each campaign's running tally (:meth:`pldp.tally.BaseTally.to_dict` as JSON), updated in the
    same transaction as the reports it counts, so an estimate never scans reports and always
    equals a recount of them (of every report accepted: retention deletes reports, never counts).
``round_tallies(campaign_id, round, n, tally)``
    The same per round of a recurring campaign (one that does not recur has only its whole tally).
``exports(campaign_key, first_seq, upto_seq, day, path, n, written_at)``
    The report files the rollover wrote (:mod:`pldp.service.rollover`): each holds the campaign's
    reports numbered ``first_seq`` to ``upto_seq``, all received on ``day``. The largest
    ``upto_seq`` is the campaign's export watermark (:func:`watermark`): every report at or below
    it is in exactly one recorded file.
``retention(campaign_key, generation, upto_seq, deleted, at)``
    What ``--retain-days`` deleted from a campaign: ``generation`` counts the deletions (a writer
    that sees it move drops its index of the campaign's ids, :mod:`pldp.service.writer`),
    ``upto_seq`` is the largest ``seq`` ever deleted (new reports are numbered above it).
``settings(name, value)``
    ``store_id``: 16 random hex digits made when the file is created; the names of report files
    carry it, so the files of several collectors can share one directory.

Durability: ``journal_mode=WAL`` with ``synchronous=FULL``, so a transaction is on disk when
``COMMIT`` returns; the collector acknowledges a batch only after that (:mod:`pldp.service.writer`).
Readers use their own connections and never block the writer (WAL).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pldp.deploy import ReportBatch, Spec, decode
from pldp.deploy.files import parse_day
from pldp.service.schema import MIGRATIONS, SCHEMA_VERSION

__all__ = [
    "FAULT_ENV",
    "SCHEMA_VERSION",
    "TODAY_ENV",
    "CampaignRow",
    "SchemaError",
    "batch_of",
    "connect",
    "days",
    "insert_reports",
    "migrate",
    "next_run",
    "retention_generations",
    "row_table",
    "store_id",
    "stored_batch",
    "stored_numbered",
    "today",
    "watermark",
]


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


@dataclass(frozen=True)
class CampaignRow:
    """A campaign as stored."""

    id: str
    spec_text: str
    created_at: float
    closed_at: float | None
    access: str = "open"  # "open" or "invited" (respondent codes)
    rounds: str = "once"  # "once", "daily", "weekly" or "manual" (pldp.service.rounds)
    first_day: int = 0  # the UTC day (days since 1970-01-01) the rounds count from
    cap: int | None = None  # the most reports it takes, set at creation (None: the collector's --campaign-cap only)
    resends: int = 0  # reports sent again with a stored id (acknowledged as duplicates)
    conflicts: int = 0  # those of them with another payload (not stored)

    @property
    def closed(self) -> bool:
        return self.closed_at is not None

    def spec(self) -> Spec:
        return Spec.from_json(self.spec_text)


#: The columns of a CampaignRow.
_CAMPAIGN = "id, spec, created_at, closed_at, access, rounds, first_day, cap, resends, conflicts"


def campaign(conn: sqlite3.Connection, campaign_id: str) -> CampaignRow | None:
    row = conn.execute(f"SELECT {_CAMPAIGN} FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    return None if row is None else CampaignRow(*row)


def campaigns(conn: sqlite3.Connection, ids: list[str] | None = None) -> list[CampaignRow]:
    """Every campaign (or those of ``ids``), oldest first."""
    rows = conn.execute(f"SELECT {_CAMPAIGN} FROM campaigns ORDER BY created_at, id").fetchall()
    out = [CampaignRow(*r) for r in rows]
    return out if ids is None else [c for c in out if c.id in set(ids)]


def empty_tally(spec: Spec) -> Any:
    """The tally of no reports of ``spec`` (its type is the oracle's tally type)."""
    return decode(spec, {"format": "pldp.batch/1", "spec": spec.id, "reports": []})


def stored_tally(conn: sqlite3.Connection, spec: Spec, turn: int = 0) -> Any:
    """The campaign's running tally as committed: of every report (``turn`` 0), or of round ``turn``
    of a recurring campaign (a KeyError when that round has no tally: no reports, or no rounds)."""
    if turn:
        row = conn.execute(
            "SELECT tally FROM round_tallies WHERE campaign_id = ? AND round = ?", (spec.id, int(turn))
        ).fetchone()
    else:
        row = conn.execute("SELECT tally FROM tallies WHERE campaign_id = ?", (spec.id,)).fetchone()
    if row is None:
        raise KeyError(spec.id)
    return spec.mechanism().load_tally(json.loads(row[0]))


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
    return [(c.name, c.kind, c.nbytes if c.kind == "bits" else 4) for c in root.columns()]


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
INSERT INTO reports (campaign_key, seq, report_id, row, received_day, round)
SELECT :key, :first + k, substr(:ids, 16 * k + 1, 16), substr(:rows, :width * k + 1, :width), :day, :round FROM i
"""


def insert_reports(
    conn: sqlite3.Connection, key: int, first: int, ids: bytes, rows: bytes, width: int, day: int, turn: int = 1
) -> None:
    """Append reports (concatenated 16-byte ids and ``width``-byte rows) of round ``turn`` to the
    campaign with ``key``, numbered ``first, first + 1, ...``; a ``seq`` already used is an integrity error."""
    n = len(ids) // 16
    if n:
        args = {"n": n, "key": key, "first": first, "ids": ids, "rows": rows, "width": width, "day": day}
        conn.execute(_INSERT, {**args, "round": int(turn)})


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


def stored_batch(
    conn: sqlite3.Connection,
    spec: Spec,
    day: int | None = None,
    seqs: tuple[int, int] | None = None,
    turn: int | None = None,
) -> ReportBatch:
    """The stored reports of the campaign of ``spec``, in arrival order: every one, or those
    received on ``day`` (days since 1970-01-01), or those numbered ``seqs[0]`` to ``seqs[1]``,
    or those of round ``turn`` (any of them together)."""
    return stored_numbered(conn, spec, day, seqs, turn)[0]


def stored_numbered(
    conn: sqlite3.Connection,
    spec: Spec,
    day: int | None = None,
    seqs: tuple[int, int] | None = None,
    turn: int | None = None,
) -> tuple[ReportBatch, np.ndarray]:
    """:func:`stored_batch` and each report's ``seq`` (int64, increasing), which a report file
    written from it names (:class:`pldp.deploy.origin.Origin`)."""
    where = "c.id = ?"
    args: list[Any] = [spec.id]
    if day is not None:
        where, args = where + " AND r.received_day = ?", [*args, int(day)]
    if turn is not None:
        where, args = where + " AND r.round = ?", [*args, int(turn)]
    if seqs is not None:
        where, args = where + " AND r.seq BETWEEN ? AND ?", [*args, int(seqs[0]), int(seqs[1])]
    rows = conn.execute(
        f"SELECT r.report_id, r.row, r.seq FROM reports r JOIN campaigns c ON c.key = r.campaign_key "
        f"WHERE {where} ORDER BY r.seq",
        args,
    ).fetchall()
    numbers = np.fromiter((r[2] for r in rows), dtype=np.int64, count=len(rows))
    return batch_of(spec, b"".join(r[0] for r in rows), b"".join(r[1] for r in rows)), numbers


def days(conn: sqlite3.Connection, campaign_id: str) -> list[tuple[int, int, int]]:
    """``(round, day, reports)`` of every round and day in which the campaign's stored reports were
    received, in order (a late report of a round received the day after it ended makes a pair of its own)."""
    rows = conn.execute(
        "SELECT r.round, r.received_day, COUNT(*) FROM reports r JOIN campaigns c ON c.key = r.campaign_key "
        "WHERE c.id = ? GROUP BY r.round, r.received_day ORDER BY r.round, r.received_day",
        (campaign_id,),
    ).fetchall()
    return [(int(t), int(d), int(n)) for t, d, n in rows]


def campaign_key(conn: sqlite3.Connection, campaign_id: str) -> int | None:
    """The small integer that keys the campaign's rows (None for an unknown campaign)."""
    row = conn.execute("SELECT key FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    return None if row is None else int(row[0])


def store_id(conn: sqlite3.Connection) -> str:
    """The store's random id (16 hex digits, made with the file), which names its report files."""
    return str(conn.execute("SELECT value FROM settings WHERE name = 'store_id'").fetchone()[0])


def watermark(conn: sqlite3.Connection, key: int) -> int:
    """The campaign's export watermark: the largest ``seq`` in a recorded report file (0: none)."""
    return int(
        conn.execute("SELECT COALESCE(MAX(upto_seq), 0) FROM exports WHERE campaign_key = ?", (key,)).fetchone()[0]
    )


def next_run(conn: sqlite3.Connection, key: int, after: int, cap: int) -> tuple[int, int, int, int] | None:
    """The campaign's next run of reports above ``seq`` ``after``: ``(day, round, first, last)``.

    A run starts at the first report numbered above ``after`` and goes on while the reports were
    received on the same day for the same round, over at most ``cap`` numbers; it holds every
    stored report numbered ``first`` to ``last``. None when there is no report above ``after``.
    Reports above the export watermark are never deleted, so the same ``after`` always gives the
    same ``first``, and the same ``last`` unless reports of that day were appended since (the run
    can only grow).
    """
    head = conn.execute(
        "SELECT seq, received_day, round FROM reports WHERE campaign_key = ? AND seq > ? ORDER BY seq LIMIT 1",
        (key, after),
    ).fetchone()
    if head is None:
        return None
    first, day, turn = int(head[0]), int(head[1]), int(head[2])
    other = conn.execute(
        "SELECT MIN(seq) FROM reports WHERE campaign_key = ? AND seq > ? AND seq < ? "
        "AND (received_day != ? OR round != ?)",
        (key, first, first + cap, day, turn),
    ).fetchone()[0]
    end = first + cap if other is None else int(other)
    last = conn.execute(
        "SELECT MAX(seq) FROM reports WHERE campaign_key = ? AND seq >= ? AND seq < ?", (key, first, end)
    ).fetchone()[0]
    return day, turn, first, int(last)


def retention_generations(conn: sqlite3.Connection) -> dict[int, int]:
    """How many deletions retention has made in each campaign it deleted from (campaign key -> count)."""
    return {int(k): int(g) for k, g in conn.execute("SELECT campaign_key, generation FROM retention")}
