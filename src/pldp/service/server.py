"""Run the collector: ``pldp serve`` (uvicorn, one process; see :mod:`pldp.service.writer` for why).

One process owns the store's writer, so its group commit sees every request; the event loop takes
the connections and a thread pool parses and validates the batches. The first start on a new
database creates the admin token: read from ``--admin-token-file`` when given, otherwise made
here and printed once on standard output (the store keeps only its hash).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pldp.service import auth, collect, store
from pldp.service.app import Limits, create_app

__all__ = ["bootstrap_admin", "serve"]


def bootstrap_admin(app: object, token_file: str | Path | None) -> str | None:
    """Make sure the store has an admin token; return a token this call created and must show.

    With ``token_file`` the token in it becomes an admin token (if not one already) and ``None``
    is returned; without it a new token is made only when the store has no admin.
    """
    writer = app.state.writer  # type: ignore[attr-defined]
    conn = store.connect(writer_path(writer))
    try:
        if token_file is not None:
            token = auth.read_token_file(token_file)
            if auth.identify(conn, f"Bearer {token}") is None:
                writer.run(lambda ctx: collect.add_token(ctx, token, "admin", "admin (token file)", [], time.time()))
            return None
        if auth.has_admin(conn):
            return None
    finally:
        conn.close()
    token = auth.new_token()
    writer.run(lambda ctx: collect.add_token(ctx, token, "admin", "admin (first start)", [], time.time()))
    return token


def writer_path(writer: object) -> str:
    return writer.conn.execute("PRAGMA database_list").fetchone()[2]  # type: ignore[attr-defined]


def serve(
    db: str | Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    admin_token_file: str | Path | None = None,
    limits: Limits | None = None,
) -> None:
    """Start the collector on ``host:port`` with the store ``db`` (blocks until interrupted)."""
    import uvicorn

    app = create_app(db, limits)
    token = bootstrap_admin(app, admin_token_file)
    if token is not None:
        print(f"admin token (shown once; the store keeps only its hash): {token}", flush=True)
    print(f"pldp collector on http://{host}:{port} (store {Path(db).resolve()})", file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
