"""The exports and retention tables: the report files the rollover recorded (the export watermark)
and what ``--retain-days`` deleted (:mod:`pldp.service.store`, :mod:`pldp.service.rollover`)."""

from __future__ import annotations

import sqlite3
import time

__all__ = ["delete_before", "insert_export", "retention_floor", "retention_generations", "watermark"]


def watermark(conn: sqlite3.Connection, key: int) -> int:
    """The campaign's export watermark: the largest ``seq`` in a recorded report file (0: none)."""
    return int(
        conn.execute("SELECT COALESCE(MAX(upto_seq), 0) FROM exports WHERE campaign_key = ?", (key,)).fetchone()[0]
    )


def retention_generations(conn: sqlite3.Connection) -> dict[int, int]:
    """How many deletions retention has made in each campaign it deleted from (campaign key -> count)."""
    return {int(k): int(g) for k, g in conn.execute("SELECT campaign_key, generation FROM retention")}


def retention_floor(conn: sqlite3.Connection, key: int) -> tuple[int, int]:
    """``(upto_seq, generation)`` of the campaign's retention: the largest ``seq`` ever deleted and
    how many deletions there were (``(0, 0)``: none)."""
    row = conn.execute("SELECT upto_seq, generation FROM retention WHERE campaign_key = ?", (key,)).fetchone()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def insert_export(conn: sqlite3.Connection, key: int, first: int, last: int, day: int, path: str, n: int) -> None:
    """Record a written report file of the campaign's reports ``first`` to ``last`` (the watermark
    moves to ``last``)."""
    conn.execute(
        "INSERT INTO exports (campaign_key, first_seq, upto_seq, day, path, n, written_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (key, first, last, day, path, n, time.time()),
    )


def delete_before(conn: sqlite3.Connection, key: int, upto: int, cutoff: int) -> int:
    """Delete the campaign's reports numbered at most ``upto`` and received before day ``cutoff``,
    count the deletion in ``retention`` (its generation moves) and return how many (0: none, and
    nothing written)."""
    where = "campaign_key = ? AND seq <= ? AND received_day < ?"
    count, top = conn.execute(f"SELECT COUNT(*), MAX(seq) FROM reports WHERE {where}", (key, upto, cutoff)).fetchone()
    if not count:
        return 0
    conn.execute(f"DELETE FROM reports WHERE {where}", (key, upto, cutoff))
    conn.execute(
        "INSERT INTO retention (campaign_key, generation, upto_seq, deleted, at) VALUES (?, 1, ?, ?, ?) "
        "ON CONFLICT (campaign_key) DO UPDATE SET generation = generation + 1, "
        "upto_seq = max(upto_seq, excluded.upto_seq), deleted = deleted + excluded.deleted, at = excluded.at",
        (key, top, count, time.time()),
    )
    return int(count)
