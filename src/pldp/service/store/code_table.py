"""The codes and code_uses tables: respondent codes of invited campaigns, by their SHA-256 hash,
and the report each sent per round (:mod:`pldp.service.store`, :mod:`pldp.service.codes`)."""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = [
    "code_counts",
    "code_lifetime",
    "code_of",
    "code_round_used",
    "code_sent",
    "insert_code_use",
    "insert_codes",
    "revoke_named",
    "revoke_unused",
]

#: The hashes of a blob ``:hashes`` (``:n`` of them, 32 bytes each) as the table ``h``: one
#: statement then stores or revokes a whole list of codes (as reports are stored).
_NAMED = """
WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k + 1 < :n),
h(hash) AS (SELECT substr(:hashes, 32 * k + 1, 32) FROM i)
"""


def code_of(conn: sqlite3.Connection, digest: bytes, campaign_id: str) -> bytes | None:
    """The stored hash equal to ``digest`` among the campaign's codes (any state), or None."""
    row = conn.execute(
        "SELECT c.hash FROM codes c JOIN campaigns k ON k.key = c.campaign_key WHERE c.hash = ? AND k.id = ?",
        (digest, campaign_id),
    ).fetchone()
    return None if row is None else bytes(row[0])


def code_lifetime(conn: sqlite3.Connection, code: bytes, key: int) -> tuple[Any, Any] | None:
    """``(expires_at, revoked_at)`` of the campaign's code of hash ``code`` (None: not one of its codes)."""
    row = conn.execute(
        "SELECT expires_at, revoked_at FROM codes WHERE hash = ? AND campaign_key = ?", (code, key)
    ).fetchone()
    return None if row is None else (row[0], row[1])


def code_sent(conn: sqlite3.Connection, code: bytes, report_id: bytes) -> int | None:
    """The round in which the code sent the report ``report_id`` (None: it did not)."""
    sent = conn.execute(
        "SELECT round FROM code_uses WHERE code_hash = ? AND report_id = ?", (code, report_id)
    ).fetchone()
    return None if sent is None else int(sent[0])


def code_round_used(conn: sqlite3.Connection, code: bytes, turn: int) -> bool:
    """Whether the code sent a report in round ``turn``."""
    used = conn.execute("SELECT report_id FROM code_uses WHERE code_hash = ? AND round = ?", (code, turn)).fetchone()
    return used is not None


def insert_code_use(conn: sqlite3.Connection, code: bytes, turn: int, report_id: bytes, now: float) -> None:
    conn.execute(
        "INSERT INTO code_uses (code_hash, round, report_id, used_at) VALUES (?, ?, ?, ?)",
        (code, turn, report_id, now),
    )


def insert_codes(conn: sqlite3.Connection, key: int, hashes: bytes, now: float, expires_at: float) -> None:
    """Store the hashes of new codes of the campaign (concatenated, 32 bytes each; none: no statement)."""
    n = len(hashes) // 32
    if n:
        conn.execute(
            f"{_NAMED} INSERT INTO codes (hash, campaign_key, created_at, expires_at) "
            "SELECT hash, :key, :now, :expires FROM h",
            {"n": n, "hashes": hashes, "key": key, "now": now, "expires": expires_at},
        )


def revoke_unused(conn: sqlite3.Connection, key: int, now: float, turn: int) -> int:
    """Revoke every code of the campaign that is not revoked and sent no report in round ``turn``; return how many."""
    cur = conn.execute(
        "UPDATE codes SET revoked_at = ? WHERE campaign_key = ? AND revoked_at IS NULL "
        "AND hash NOT IN (SELECT code_hash FROM code_uses WHERE round = ?)",
        (now, key, turn),
    )
    return cur.rowcount


def revoke_named(conn: sqlite3.Connection, key: int, hashes: bytes, now: float) -> tuple[int, int]:
    """Revoke the campaign's codes of ``hashes`` (concatenated, 32 bytes each, at least one):
    ``(codes named that are the campaign's, codes revoked now)``."""
    named = {"n": len(hashes) // 32, "hashes": hashes, "key": key, "now": now}
    known = conn.execute(f"{_NAMED} SELECT COUNT(*) FROM codes WHERE campaign_key = :key AND hash IN h", named)
    count = int(known.fetchone()[0])
    conn.execute(
        f"{_NAMED} UPDATE codes SET revoked_at = :now WHERE campaign_key = :key AND revoked_at IS NULL AND hash IN h",
        named,
    )
    # (sqlite3's rowcount is -1 for a statement that starts with WITH; changes() is SQLite's own)
    revoked = int(conn.execute("SELECT changes()").fetchone()[0])
    return count, revoked


def code_counts(conn: sqlite3.Connection, key: int, now: float, turn: int) -> tuple[int, int, int, int, int]:
    """The campaign's codes: ``(issued, used in round turn, revoked, expired, usable)`` (see
    :func:`pldp.service.codes.code_counts`)."""
    counts = conn.execute(
        "SELECT COUNT(*), COUNT(u.code_hash), COUNT(c.revoked_at), "
        "SUM(u.code_hash IS NULL AND c.revoked_at IS NULL AND c.expires_at <= :now), "
        "SUM(u.code_hash IS NULL AND c.revoked_at IS NULL AND c.expires_at > :now) "
        "FROM codes c LEFT JOIN code_uses u ON u.code_hash = c.hash AND u.round = :round WHERE c.campaign_key = :key",
        {"now": now, "key": key, "round": turn},
    ).fetchone()
    issued, used, revoked, expired, usable = (int(v or 0) for v in counts)
    return issued, used, revoked, expired, usable
