"""The real collector process of the service tests (:class:`pldp.service.process.CollectorProcess`),
and the recount every service test ends with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pldp.deploy import Spec, decode
from pldp.service import store
from pldp.service.process import CollectorProcess as Server
from pldp.service.process import free_port

__all__ = ["Server", "free_port", "stored_and_recount"]


def stored_and_recount(db: Path, spec: Spec) -> tuple[Any, Any]:
    """The campaign's stored running tally and a recount of its stored reports, read from the file
    (after checking that no report id is stored twice)."""
    conn = store.connect(db)
    try:
        batch = store.stored_batch(conn, spec)
        assert len({bytes(r) for r in batch.ids}) == len(batch), "a report id is stored twice"
        return store.stored_tally(conn, spec), decode(spec, batch)
    finally:
        conn.close()
