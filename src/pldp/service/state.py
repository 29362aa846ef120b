"""What the collector's requests share: the store, its writer, the readers, the cached specs.

One :class:`Service` per application (:func:`pldp.service.app.create_app` makes it and keeps it in
``app.state.service``); the routes reach it through the dependencies of :mod:`pldp.service.deps`,
and the fast path of report submission (:class:`pldp.service.ingest.Ingest`) through the same
methods, so both identify a token and find a campaign alike.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar

from pldp.deploy import Spec
from pldp.service import auth, codes, store
from pldp.service.collect import CollectError
from pldp.service.ingest import Ingest
from pldp.service.writer import Context, Writer

__all__ = ["Campaign", "Limits", "Service"]

T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """Request bounds: the largest body (bytes) and the most reports in one request."""

    max_body: int = 8 * 2**20
    max_reports: int = 10_000
    max_spec: int = 2**20


class Campaign(NamedTuple):
    """A stored campaign: its spec (parsed once) and its row (which says whether it is closed)."""

    spec: Spec
    row: store.CampaignRow


class Service:
    """The collector's shared state on the store ``db`` (created and migrated if needed).

    Parameters
    ----------
    db : Path
        The SQLite file.
    limits : Limits
        The request bounds.

    Attributes
    ----------
    writer : Writer
        The store's one writer (group commit).
    ingest : Ingest
        Report submission, shared by the documented route and the fast path.
    """

    def __init__(self, db: Path, limits: Limits) -> None:
        self.path = db
        self.limits = limits
        self.writer = Writer(db)
        self._readers = threading.local()
        self._specs: dict[str, Spec] = {}
        self._access: dict[str, str] = {}  # campaign id -> "open" or "invited" (set once, at creation)
        self.ingest = Ingest(self.writer, self.submitter, self.spec, limits.max_body, limits.max_reports)

    def conn(self) -> sqlite3.Connection:
        """This thread's read connection to the store (WAL: readers never block the writer)."""
        c: sqlite3.Connection | None = getattr(self._readers, "conn", None)
        if c is None:
            c = self._readers.conn = store.connect(self.path)
        return c

    def principal(self, authorization: str | None) -> auth.Principal:
        """Who sent an ``Authorization`` header (None: anonymous); a 401 for a token that is not
        valid (unknown, expired or revoked: looked up in the store at every call, never cached)."""
        found = auth.resolve(self.conn(), authorization)
        if isinstance(found, str):
            raise CollectError(401, "unauthorized", found)
        return found

    def submitter(self, campaign_id: str, authorization: str | None) -> bytes | None:
        """Who may submit reports to a campaign: None for anyone, or the hash of a respondent code
        (:func:`pldp.service.codes.submitter`, which gives the refusals)."""
        return codes.submitter(self.conn(), campaign_id, authorization, self.access)

    def access(self, campaign_id: str) -> str | None:
        """A campaign's access, ``open`` or ``invited`` (None: no such campaign); it never changes,
        so a known one is not looked up again."""
        known = self._access.get(campaign_id)
        if known is None:
            row = store.campaign(self.conn(), campaign_id)
            if row is None:
                return None
            known = self._access[campaign_id] = row.access
        return known

    def campaign(self, campaign_id: str) -> Campaign:
        """The stored campaign ``campaign_id``; a 404 for an unknown one."""
        row = store.campaign(self.conn(), campaign_id)
        if row is None:
            raise CollectError(404, "unknown_campaign", f"no campaign {campaign_id}")
        if campaign_id not in self._specs:
            self._specs[campaign_id] = row.spec()
        return Campaign(self._specs[campaign_id], row)

    def spec(self, campaign_id: str) -> Spec:
        """The spec of a campaign; a spec never changes, so a known one is not looked up again."""
        return self._specs.get(campaign_id) or self.campaign(campaign_id).spec

    def remember(self, spec: Spec) -> None:
        """Cache the spec of a campaign just created."""
        self._specs[spec.id] = spec

    async def write(self, job: Callable[[Context], T]) -> T:
        """Run ``job`` in the writer's next transaction; returns once it has committed."""
        result: T = await asyncio.wrap_future(self.writer.submit(job))
        return result
