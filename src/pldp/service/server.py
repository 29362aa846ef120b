"""Run the collector: ``pldp serve`` (uvicorn, one process; see :mod:`pldp.service.writer` for why).

One process owns the store's writer, so its group commit sees every request; the event loop takes
the connections and a thread pool parses and validates the batches. The first start on a new
database creates the admin token: read from ``--admin-token-file`` when given, otherwise made
here and printed once on standard output (the store keeps only its hash).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from pldp.service import auth, collect
from pldp.service.app import Limits, create_app
from pldp.service.rollover import Rollover
from pldp.service.writer import Writer

__all__ = ["app_from_env", "bootstrap_admin", "serve"]


def bootstrap_admin(writer: Writer, token_file: str | Path | None) -> str | None:
    """Make sure the store has an admin token; return a token this call created and must show.

    With ``token_file`` the token in it becomes an admin token (if not one already) and ``None``
    is returned; without it a new token is made only when the store has no admin.
    """
    conn = writer.conn
    if token_file is not None:
        token = auth.read_token_file(token_file)
        if auth.identify(conn, f"Bearer {token}") is None:
            writer.run(lambda ctx: collect.add_token(ctx, token, "admin", "admin (token file)", [], time.time()))
        return None
    if auth.has_admin(conn):
        return None
    token = auth.new_token()
    writer.run(lambda ctx: collect.add_token(ctx, token, "admin", "admin (first start)", [], time.time()))
    return token


def app_from_env() -> Any:
    """The application of a worker process started by uvicorn (``--workers N``), from the environment."""
    limits = Limits(int(os.environ["PLDP_MAX_BODY"]), int(os.environ["PLDP_MAX_REPORTS"]))
    rollover = None
    if os.environ.get("PLDP_EXPORT_DIR"):
        retain = os.environ.get("PLDP_RETAIN_DAYS")
        rollover = Rollover(
            Path(os.environ["PLDP_EXPORT_DIR"]),
            float(os.environ["PLDP_EXPORT_EVERY"]),
            int(retain) if retain else None,
        )
    return create_app(os.environ["PLDP_DB"], limits, rollover)


def serve(
    db: str | Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    admin_token_file: str | Path | None = None,
    limits: Limits | None = None,
    workers: int = 1,
    rollover: Rollover | None = None,
) -> None:
    """Start the collector on ``host:port`` with the store ``db`` (blocks until interrupted).

    ``workers > 1`` runs that many processes on the same file (uvicorn's process manager): each
    takes connections and group-commits its own requests; SQLite serializes their transactions.
    With ``rollover``, reports are exported to files (and old ones deleted) in the background by
    one of the processes (:mod:`pldp.service.rollover`).
    """
    import uvicorn

    limits = limits or Limits()
    writer = Writer(db)  # creates and migrates the file, once, before any worker starts
    try:
        token = bootstrap_admin(writer, admin_token_file)
    finally:
        writer.close()
    if token is not None:
        print(f"admin token (shown once; the store keeps only its hash): {token}", flush=True)
    where = f"http://{host}:{port} (store {Path(db).resolve()}, {workers} worker{'s' * (workers > 1)})"
    print(f"pldp collector on {where}", file=sys.stderr, flush=True)
    if rollover is not None:
        keep = "every report" if rollover.retain_days is None else f"exported reports for {rollover.retain_days} days"
        print(
            f"report files to {rollover.root} every {rollover.every:g} s; keeping {keep}", file=sys.stderr, flush=True
        )
    if workers > 1:
        os.environ.update(
            PLDP_DB=str(Path(db).resolve()),
            PLDP_MAX_BODY=str(limits.max_body),
            PLDP_MAX_REPORTS=str(limits.max_reports),
            PLDP_EXPORT_DIR="" if rollover is None else str(rollover.root.resolve()),
            PLDP_EXPORT_EVERY="" if rollover is None else str(rollover.every),
            PLDP_RETAIN_DAYS="" if rollover is None or rollover.retain_days is None else str(rollover.retain_days),
        )
        uvicorn.run(
            "pldp.service.server:app_from_env",
            factory=True,
            workers=workers,
            host=host,
            port=port,
            log_level="warning",
            access_log=False,
        )
    else:
        app = create_app(db, limits, rollover)
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
