"""The campaigns table and the rounds a ``manual`` campaign opened: what the collector's jobs and
routes read and write of a campaign (:mod:`pldp.service.store`)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from pldp.deploy import Spec

__all__ = [
    "FIELDS",
    "CampaignRow",
    "campaign",
    "campaign_exists",
    "campaign_fields",
    "campaign_key",
    "campaigns",
    "close",
    "count_resends",
    "insert_campaign",
    "insert_round",
    "last_round",
    "opened_rounds",
]


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


def campaign_key(conn: sqlite3.Connection, campaign_id: str) -> int | None:
    """The small integer that keys the campaign's rows (None for an unknown campaign)."""
    row = conn.execute("SELECT key FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    return None if row is None else int(row[0])


def campaign_exists(conn: sqlite3.Connection, campaign_id: str) -> bool:
    return conn.execute("SELECT 1 FROM campaigns WHERE id = ?", (campaign_id,)).fetchone() is not None


#: The columns of a campaign's row that :func:`campaign_fields` reads.
FIELDS = frozenset({"key", "closed_at", "rounds", "cap", "access", "created_at", "first_day"})


def campaign_fields(conn: sqlite3.Connection, campaign_id: str, *columns: str) -> tuple[Any, ...] | None:
    """The ``columns`` (of :data:`FIELDS`) of the campaign's row, in that order, as SQLite's types
    give them (``key``, ``cap`` and ``first_day`` int or None, ``closed_at`` and ``created_at``
    float or None, ``rounds`` and ``access`` str); None: no such campaign."""
    unknown = set(columns) - FIELDS
    if not columns or unknown:
        raise ValueError(f"campaign_fields reads some of {sorted(FIELDS)}, got {columns!r}")
    row = conn.execute(f"SELECT {', '.join(columns)} FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    return None if row is None else tuple(row)


def opened_rounds(conn: sqlite3.Connection, key: int) -> tuple[float, ...]:
    """When the rounds 2, 3, ... of a ``manual`` campaign were opened, in order."""
    found = conn.execute("SELECT opened_at FROM rounds WHERE campaign_key = ? ORDER BY round", (key,))
    return tuple(float(t) for (t,) in found)


def last_round(conn: sqlite3.Connection, key: int) -> int:
    """The last round the admin opened (1: none)."""
    return int(conn.execute("SELECT COALESCE(MAX(round), 1) FROM rounds WHERE campaign_key = ?", (key,)).fetchone()[0])


def insert_round(conn: sqlite3.Connection, key: int, turn: int, now: float) -> None:
    conn.execute("INSERT INTO rounds (campaign_key, round, opened_at) VALUES (?, ?, ?)", (key, turn, now))


def insert_campaign(
    conn: sqlite3.Connection,
    campaign_id: str,
    spec_text: str,
    now: float,
    access: str,
    schedule: str,
    first_day: int,
    cap: int | None,
) -> None:
    """Store a new campaign (open; ``spec_text``: the spec's JSON)."""
    conn.execute(
        "INSERT INTO campaigns (id, spec, created_at, closed_at, access, rounds, first_day, cap) "
        "VALUES (?, ?, ?, NULL, ?, ?, ?, ?)",
        (campaign_id, spec_text, now, access, schedule, first_day, cap),
    )


def close(conn: sqlite3.Connection, campaign_id: str, now: float) -> None:
    conn.execute("UPDATE campaigns SET closed_at = ? WHERE id = ?", (now, campaign_id))


def count_resends(conn: sqlite3.Connection, key: int, resends: int, conflicts: int) -> None:
    """Add to the campaign's counts of reports sent again, and of those with another payload."""
    conn.execute(
        "UPDATE campaigns SET resends = resends + ?, conflicts = conflicts + ? WHERE key = ?",
        (resends, conflicts, key),
    )
