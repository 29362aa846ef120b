"""What the collector's requests share: the store, its writer, the readers, the cached specs.

One :class:`Service` per application (:func:`pldp.service.app.create_app` makes it and keeps it in
``app.state.service``); the routes reach it through the dependencies of :mod:`pldp.service.deps`,
and the fast path of report submission (:class:`pldp.service.ingest.Ingest`) through the same
methods, so both identify a token and find a campaign alike.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar

from pldp.deploy import Spec
from pldp.service import auth, codes, rounds, store
from pldp.service.bodies import BodyBudget
from pldp.service.collect import CollectError
from pldp.service.discoveries import Discoveries
from pldp.service.ingest import Ingest
from pldp.service.jobs import Context
from pldp.service.ratelimit import Contributions, RateLimiter
from pldp.service.writer import Writer

__all__ = ["Campaign", "Limits", "Service"]

T = TypeVar("T")

#: Roles whose report submissions are not rate-limited: named, revocable tokens (a bulk upload uses one).
UNLIMITED = frozenset({"admin", "analyst"})


@dataclass(frozen=True)
class Limits:
    """The collector's bounds (``pldp serve`` options of the same names; ``docs/threat-model.md``).

    Attributes
    ----------
    max_body : int
        The largest request body, bytes (413 above).
    max_reports : int
        The most reports in one request (413 above).
    max_spec : int
        The largest spec, bytes.
    rate : float
        Reports per second one client address may send, sustained (0: no limit); 429 beyond.
    burst : int
        Reports one client address may send at once.
    campaign_cap : int or None
        The most reports a campaign takes (409 ``campaign_full`` beyond); None: no cap.
    max_parsing : int
        Bytes of bodies read and parsed at once in a process (503 with ``Retry-After`` when a body
        waited 2 s in vain); at least ``max_body``.
    allow_hosts : tuple of str or None
        The host names the collector serves (``pldp serve --allow-host``, with the bound address and
        ``localhost``; ``*`` in it: any IP address): a page's ``Origin`` is the collector's own only
        on one of them (:mod:`pldp.service.crossorigin`). None: any ``Host`` (a library's app).
    allow_origins : tuple of str
        Origins whose pages may send requests, besides the collector's own.
    header_timeout, body_timeout : float
        Seconds a client has to send a request's head (from its first byte, or from the
        connection) and then its body (:mod:`pldp.service.connections`).
    max_connections : int
        Open connections per process; at the cap, the one that has waited longest without a
        whole request is closed.
    round_grace : float
        Seconds after a round of a recurring campaign starts during which a report may still
        name the round before (:mod:`pldp.service.rounds`).
    address_share, address_burst : float, int
        One address may hold at most ``address_burst + address_share * n`` reports of an open
        campaign that holds ``n`` (:class:`pldp.service.ratelimit.Contributions`; 0 and 0: no bound).
    """

    max_body: int = 8 * 2**20
    max_reports: int = 10_000
    max_spec: int = 2**20
    rate: float = 100.0
    burst: int = 10_000
    campaign_cap: int | None = None
    max_parsing: int = 64 * 2**20
    allow_origins: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] | None = None
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_connections: int = 4096
    round_grace: float = rounds.DEFAULT_GRACE
    address_share: float = 0.02
    address_burst: int = 100

    def to_json(self) -> str:
        """These limits as JSON (how ``pldp serve --workers N`` hands them to its workers)."""
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Limits:
        data = json.loads(text)
        hosts = data.get("allow_hosts")
        return cls(
            **{
                **data,
                "allow_origins": tuple(data.get("allow_origins", ())),
                "allow_hosts": None if hosts is None else tuple(hosts),
            }
        )


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
        Report submission, shared by the documented route and the fast path, with its rate limit.
    """

    def __init__(self, db: Path, limits: Limits) -> None:
        self.path = db
        self.limits = limits
        self.writer = Writer(db)
        self._readers = threading.local()
        self._specs: dict[str, Spec] = {}
        self._access: dict[str, str] = {}  # campaign id -> "open" or "invited" (set once, at creation)
        #: Free-text campaigns' recent discoveries, reused while no report arrives.
        self.discoveries = Discoveries()
        #: Bytes of bodies being read and parsed at once, in this process.
        self.budget = BodyBudget(max(limits.max_parsing, limits.max_body, limits.max_spec))
        self.ingest = Ingest(
            self.writer,
            self.submitter,
            self.spec,
            limits.max_body,
            limits.max_reports,
            RateLimiter(limits.rate, limits.burst),
            self.budget,
            limits.campaign_cap,
            self.unlimited,
            limits.round_grace,
        )
        self.ingest.contributions = Contributions(
            limits.address_share, limits.address_burst, lambda campaign_id: store.report_count(self.conn(), campaign_id)
        )

    def conn(self) -> store.Connection:
        """This thread's read connection to the store (WAL: readers never block the writer)."""
        c: store.Connection | None = getattr(self._readers, "conn", None)
        if c is not None and self._readers.opened != self.writer.opened:
            c.close()  # the store was opened again after a fault: this one may be read-only (or blind to writes)
            c = None
        if c is None:
            self._readers.opened = self.writer.opened
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

    def unlimited(self, authorization: str | None) -> bool:
        """Whether ``authorization`` is a valid admin's or analyst's token, which the per-address rate
        limit of report submission does not apply to (:data:`UNLIMITED`)."""
        if not authorization:
            return False
        principal = auth.identify(self.conn(), authorization)
        return principal is not None and principal.role in UNLIMITED

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
