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
    """The campaign's stored running tally and a recount of its stored reports, read from the file."""
    conn = store.connect(db)
    try:
        return store.stored_tally(conn, spec), decode(spec, store.stored_batch(conn, spec))
    finally:
        conn.close()
