"""The collector's embedded store: one SQLite file in WAL mode, versioned and migrated forward.

Tables (schema version :data:`SCHEMA_VERSION`, kept in ``PRAGMA user_version``; the migrations
that make them are in :mod:`pldp.service.store.schema`):

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

Every SQL statement of the collector is in this package, in a module named for what it holds:
:mod:`~pldp.service.store.connection` (opening, migrating, the store's id, the day),
:mod:`~pldp.service.store.transactions` (the statements that bound a transaction, the probes of
health and recovery), :mod:`~pldp.service.store.campaign_table`, :mod:`~pldp.service.store.reports`,
:mod:`~pldp.service.store.tallies`, :mod:`~pldp.service.store.retention` (exports and deletions),
:mod:`~pldp.service.store.token_table` and :mod:`~pldp.service.store.code_table`. The other modules of
:mod:`pldp.service` call the functions here (``tests/test_layout.py`` checks that none runs a
statement or imports :mod:`sqlite3`); a transaction's boundaries and the order of its statements
stay in the code of the one who runs it (the writer, :mod:`pldp.service.writer`), except three short
sequences that are one step each (deleting the days before a date, adding a token, revoking named
codes), which run here whole.
"""

from __future__ import annotations

from pldp.service.store.campaign_table import CampaignRow, campaign, campaign_key, campaigns
from pldp.service.store.connection import (
    FAULT_ENV,
    SCHEMA_VERSION,
    TODAY_ENV,
    Connection,
    OperationalError,
    SchemaError,
    SQLiteError,
    connect,
    migrate,
    store_id,
    today,
)
from pldp.service.store.reports import (
    batch_of,
    days,
    ids_between,
    insert_reports,
    next_run,
    row_table,
    rows_at,
    seq_range,
    stored_batch,
    stored_count,
    stored_numbered,
)
from pldp.service.store.retention import (
    delete_before,
    insert_export,
    retention_floor,
    retention_generations,
    watermark,
)
from pldp.service.store.schema import MIGRATIONS
from pldp.service.store.tallies import empty_tally, report_count, round_tallies, stored_tally, write_tally

__all__ = [
    "FAULT_ENV",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "TODAY_ENV",
    "CampaignRow",
    "Connection",
    "OperationalError",
    "SQLiteError",
    "SchemaError",
    "batch_of",
    "campaign",
    "campaign_key",
    "campaigns",
    "connect",
    "days",
    "delete_before",
    "empty_tally",
    "ids_between",
    "insert_export",
    "insert_reports",
    "migrate",
    "next_run",
    "report_count",
    "retention_floor",
    "retention_generations",
    "round_tallies",
    "row_table",
    "rows_at",
    "seq_range",
    "store_id",
    "stored_batch",
    "stored_count",
    "stored_numbered",
    "stored_tally",
    "today",
    "watermark",
    "write_tally",
]
