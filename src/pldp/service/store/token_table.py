"""The tokens and grants tables: bearer tokens by their SHA-256 hash, with a public id, a role, an
expiry, a revocation, and the campaigns an analyst may read (:mod:`pldp.service.store`,
:mod:`pldp.service.auth`)."""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = [
    "grants_of",
    "has_admin",
    "insert_token",
    "revoke_token",
    "token_by_hash",
    "token_by_id",
    "token_lifetime",
    "token_rows",
]


def token_by_hash(conn: sqlite3.Connection, digest: bytes) -> tuple[Any, ...] | None:
    """``(hash, role, label, id, expires_at, revoked_at)`` of the token with hash ``digest`` (None: no such token)."""
    row = conn.execute(
        "SELECT hash, role, label, id, expires_at, revoked_at FROM tokens WHERE hash = ?", (digest,)
    ).fetchone()
    return None if row is None else tuple(row)


def grants_of(conn: sqlite3.Connection, digest: bytes) -> list[str]:
    """The campaigns granted to the token with hash ``digest``."""
    return [g[0] for g in conn.execute("SELECT campaign_id FROM grants WHERE token_hash = ?", (digest,)).fetchall()]


def has_admin(conn: sqlite3.Connection, now: float) -> bool:
    """Whether the store holds an admin token that works at ``now`` (not expired, not revoked)."""
    row = conn.execute(
        "SELECT 1 FROM tokens WHERE role = 'admin' AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)",
        (now,),
    ).fetchone()
    return row is not None


def token_rows(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """``(id, role, label, created_at, expires_at, revoked_at, grants)`` of every token, oldest
    first (``grants``: its campaigns separated by spaces, or None)."""
    return conn.execute(
        "SELECT t.id, t.role, t.label, t.created_at, t.expires_at, t.revoked_at, "
        "group_concat(g.campaign_id, ' ') FROM tokens t LEFT JOIN grants g ON g.token_hash = t.hash "
        "GROUP BY t.hash ORDER BY t.created_at, t.id"
    ).fetchall()


def token_lifetime(conn: sqlite3.Connection, digest: bytes) -> tuple[Any, Any] | None:
    """``(expires_at, revoked_at)`` of the token with hash ``digest`` (None: no such token)."""
    row = conn.execute("SELECT expires_at, revoked_at FROM tokens WHERE hash = ?", (digest,)).fetchone()
    return None if row is None else (row[0], row[1])


def insert_token(
    conn: sqlite3.Connection,
    digest: bytes,
    role: str,
    label: str,
    now: float,
    token_id: str,
    expires_at: float,
    campaigns: list[str],
) -> None:
    """Store a token's hash with its role, public id, expiry and grants; a new admin token revokes
    every other admin token (there is one admin at a time)."""
    conn.execute(
        "INSERT INTO tokens (hash, role, label, created_at, id, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        (digest, role, label, now, token_id, expires_at),
    )
    if role == "admin":
        conn.execute(
            "UPDATE tokens SET revoked_at = ? WHERE role = 'admin' AND hash != ? AND revoked_at IS NULL", (now, digest)
        )
    conn.executemany(
        "INSERT OR IGNORE INTO grants (token_hash, campaign_id) VALUES (?, ?)", [(digest, c) for c in campaigns]
    )


def token_by_id(conn: sqlite3.Connection, token_id: str) -> tuple[Any, Any] | None:
    """``(role, revoked_at)`` of the token with public id ``token_id`` (None: no such token)."""
    row = conn.execute("SELECT role, revoked_at FROM tokens WHERE id = ?", (token_id,)).fetchone()
    return None if row is None else (row[0], row[1])


def revoke_token(conn: sqlite3.Connection, token_id: str, now: float) -> None:
    conn.execute("UPDATE tokens SET revoked_at = ? WHERE id = ?", (now, token_id))
