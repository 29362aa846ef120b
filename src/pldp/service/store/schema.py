"""The store's schema: its version and the forward migrations that make it, one per version.

:func:`pldp.service.store.migrate` runs them: ``MIGRATIONS[v]`` takes a file from version ``v``
to ``v + 1``, in one transaction, and ``PRAGMA user_version`` records the version reached. The
tables are described in :mod:`pldp.service.store`.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]

#: The schema version this code writes; older files are migrated forward on open.
SCHEMA_VERSION = 7

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
    # v3: report files written by the rollover, what retention deleted, the store's id
    """
    CREATE TABLE exports (
        campaign_key INTEGER NOT NULL REFERENCES campaigns(key),
        first_seq INTEGER NOT NULL,
        upto_seq INTEGER NOT NULL,
        day INTEGER NOT NULL,
        path TEXT NOT NULL,
        n INTEGER NOT NULL,
        written_at REAL NOT NULL,
        PRIMARY KEY (campaign_key, first_seq)
    ) WITHOUT ROWID;
    CREATE TABLE retention (
        campaign_key INTEGER PRIMARY KEY REFERENCES campaigns(key),
        generation INTEGER NOT NULL,
        upto_seq INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        at REAL NOT NULL
    );
    CREATE TABLE settings (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    INSERT INTO settings (name, value) VALUES ('store_id', lower(hex(randomblob(8))));
    """,
    # v4: credentials over time (token ids, expiry, revocation), invited campaigns and their codes.
    # Tokens made before get the default lifetime from the upgrade on (admin 365 days, analyst 90).
    """
    ALTER TABLE tokens ADD COLUMN id TEXT;
    ALTER TABLE tokens ADD COLUMN expires_at REAL;
    ALTER TABLE tokens ADD COLUMN revoked_at REAL;
    UPDATE tokens SET id = lower(hex(randomblob(6))),
        expires_at = CAST(strftime('%s', 'now') AS REAL) + (CASE role WHEN 'admin' THEN 365 ELSE 90 END) * 86400.0;
    CREATE UNIQUE INDEX tokens_by_id ON tokens (id);
    ALTER TABLE campaigns ADD COLUMN access TEXT NOT NULL DEFAULT 'open' CHECK (access IN ('open', 'invited'));
    CREATE TABLE codes (
        hash BLOB PRIMARY KEY,
        campaign_key INTEGER NOT NULL REFERENCES campaigns(key),
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        revoked_at REAL
    ) WITHOUT ROWID;
    CREATE INDEX codes_by_campaign ON codes (campaign_key);
    CREATE TABLE code_uses (
        code_hash BLOB NOT NULL REFERENCES codes(hash),
        round INTEGER NOT NULL,
        report_id BLOB NOT NULL,
        used_at REAL NOT NULL,
        PRIMARY KEY (code_hash, round)
    ) WITHOUT ROWID;
    """,
    # v5: recurring campaigns (docs/collector.md, "Recurring campaigns"). A campaign's schedule of
    # rounds and the UTC day its rounds count from; every report's round (1 for every report so far);
    # the rounds a manual campaign opened; a running tally per round of a recurring campaign. A
    # campaign that does not recur has the one round 1, so the uses of codes move from round 0 to 1.
    """
    ALTER TABLE campaigns ADD COLUMN rounds TEXT NOT NULL DEFAULT 'once'
        CHECK (rounds IN ('once', 'daily', 'weekly', 'manual'));
    ALTER TABLE campaigns ADD COLUMN first_day INTEGER;
    UPDATE campaigns SET first_day = CAST(created_at / 86400 AS INTEGER);
    ALTER TABLE reports ADD COLUMN round INTEGER NOT NULL DEFAULT 1;
    UPDATE code_uses SET round = 1 WHERE round = 0;
    CREATE TABLE rounds (
        campaign_key INTEGER NOT NULL REFERENCES campaigns(key),
        round INTEGER NOT NULL,
        opened_at REAL NOT NULL,
        PRIMARY KEY (campaign_key, round)
    ) WITHOUT ROWID;
    CREATE TABLE round_tallies (
        campaign_id TEXT NOT NULL REFERENCES campaigns(id),
        round INTEGER NOT NULL,
        n INTEGER NOT NULL,
        tally TEXT NOT NULL,
        PRIMARY KEY (campaign_id, round)
    ) WITHOUT ROWID;
    """,
    # v6: a cap on a campaign's reports, set when it is created (None: only the collector's
    # --campaign-cap); docs/collector.md, "Errors and limits".
    """
    ALTER TABLE campaigns ADD COLUMN cap INTEGER CHECK (cap IS NULL OR cap >= 1);
    """,
    # v7: resends of a stored report id (acknowledged as duplicates), and those of them with another
    # payload (not stored: pldp.service.collect), counted per campaign for the analyst.
    """
    ALTER TABLE campaigns ADD COLUMN resends INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE campaigns ADD COLUMN conflicts INTEGER NOT NULL DEFAULT 0;
    """,
)
