"""The reports table: every accepted report as a fixed-width row, in arrival order
(:mod:`pldp.service.store`); how a batch is stored, read back, numbered, and cut into runs.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

from pldp.deploy import ReportBatch, Spec

__all__ = [
    "batch_of",
    "days",
    "ids_between",
    "insert_reports",
    "next_run",
    "row_table",
    "rows_at",
    "seq_range",
    "stored_batch",
    "stored_count",
    "stored_numbered",
]


def row_table(batch: ReportBatch) -> tuple[bytes, int]:
    """Every report's payload columns as fixed-width rows, concatenated, and the width in bytes
    (see module doc; report ``i`` is bytes ``[i * width, (i + 1) * width)``; each column's values
    are :attr:`pldp.channel.Column.width` bytes)."""
    n = len(batch)
    parts = [c.to_bytes(batch.columns[c.name]) for c in batch.root.columns()]
    table = np.ascontiguousarray(np.concatenate(parts, axis=1) if parts else np.zeros((n, 0), np.uint8))
    return table.tobytes(), table.shape[1]


def batch_of(spec: Spec, ids: bytes, rows: bytes) -> ReportBatch:
    """The :class:`ReportBatch` of concatenated report ids and rows (inverse of :func:`row_table`)."""
    n = len(ids) // 16
    columns = spec.root.columns()
    width = sum(c.width for c in columns)
    table = np.frombuffer(rows, dtype=np.uint8).reshape(n, width)
    cols: dict[str, np.ndarray] = {}
    at = 0
    for c in columns:
        cols[c.name] = c.from_bytes(table[:, at : at + c.width])
        at += c.width
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


def stored_count(conn: sqlite3.Connection, campaign_id: str) -> int:
    """Reports stored for the campaign (a scan of its rows; :func:`report_count` reads the tally)."""
    row = conn.execute(
        "SELECT COUNT(*) FROM reports r JOIN campaigns c ON c.key = r.campaign_key WHERE c.id = ?", (campaign_id,)
    ).fetchone()
    return int(row[0])


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


def seq_range(conn: sqlite3.Connection, key: int, after: int = 0) -> tuple[int | None, int | None]:
    """The smallest and largest ``seq`` of the campaign's reports above ``after`` (None, None: none)."""
    # two statements: SQLite finds a min() or a max() alone in the key's B-tree, both at once by a scan
    low = conn.execute("SELECT min(seq) FROM reports WHERE campaign_key = ? AND seq > ?", (key, after)).fetchone()[0]
    top = conn.execute("SELECT max(seq) FROM reports WHERE campaign_key = ?", (key,)).fetchone()[0]
    return low, top


def ids_between(conn: sqlite3.Connection, key: int, start: int, stop: int) -> tuple[bytes, np.ndarray] | None:
    """The ids (concatenated) and ``seq`` of the campaign's reports numbered above ``start`` up to
    ``stop``, in one aggregate (both lists in the same row order, whatever it is); None for none.

    Raises
    ------
    sqlite3.DatabaseError
        When a stored id is not 16 bytes.
    """
    factory = conn.text_factory
    conn.text_factory = bytes  # group_concat of blobs: their bytes as they are (a UTF-8 file is not transcoded)
    try:
        ids, seqs = conn.execute(
            "SELECT group_concat(report_id, ''), group_concat(seq) FROM reports "
            "WHERE campaign_key = ? AND seq > ? AND seq <= ?",
            (key, start, stop),
        ).fetchone()
    finally:
        conn.text_factory = factory
    if ids is None:
        return None
    numbers = np.fromstring(seqs, dtype=np.int64, sep=",")
    if len(ids) != 16 * len(numbers):
        raise sqlite3.DatabaseError(f"a report id of campaign {key} above seq {start} is not 16 bytes")
    return bytes(ids), numbers
