"""The running tallies: of every report of a campaign, and of each round of a recurring one
(:mod:`pldp.service.store`). The writer rewrites them once per transaction (:func:`write_tally`)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from pldp.deploy import Spec, decode
from pldp.deploy.count import load_tally

__all__ = ["empty_tally", "report_count", "round_tallies", "stored_tally", "write_tally"]


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
    return load_tally(spec, json.loads(row[0]))


def report_count(conn: sqlite3.Connection, campaign_id: str) -> int:
    row = conn.execute("SELECT n FROM tallies WHERE campaign_id = ?", (campaign_id,)).fetchone()
    return 0 if row is None else int(row[0])


def round_tallies(conn: sqlite3.Connection, spec: Spec, first: int, last: int) -> dict[int, Any]:
    """The stored tallies of the rounds ``first`` to ``last`` of a recurring campaign, by round (a
    round without reports has none)."""
    found = conn.execute(
        "SELECT round, tally FROM round_tallies WHERE campaign_id = ? AND round BETWEEN ? AND ?",
        (spec.id, first, last),
    )
    return {int(t): load_tally(spec, json.loads(text)) for t, text in found}


def write_tally(conn: sqlite3.Connection, campaign_id: str, turn: int, n: int, text: str) -> None:
    """Store a campaign's running tally (``text``: its JSON, counting ``n`` reports): of round
    ``turn`` of a recurring campaign, or with ``turn`` 0 of every report."""
    if turn:
        conn.execute(
            "INSERT INTO round_tallies (campaign_id, round, n, tally) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (campaign_id, round) DO UPDATE SET n = excluded.n, tally = excluded.tally",
            (campaign_id, turn, n, text),
        )
    else:
        conn.execute(
            "INSERT INTO tallies (campaign_id, n, tally) VALUES (?, ?, ?) "
            "ON CONFLICT (campaign_id) DO UPDATE SET n = excluded.n, tally = excluded.tally",
            (campaign_id, n, text),
        )
