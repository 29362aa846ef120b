"""The collector's hot path: ``POST /v1/campaigns/{id}/reports``, shared by FastAPI and a bare ASGI handler.

:class:`Ingest` does what a submission needs: the token (anonymous is fine; an invalid one is a
401), the campaign's spec, the client address's rate limit (:mod:`pldp.service.ratelimit`), the
body within its limit and the process's budget of bytes being parsed (:mod:`pldp.service.bodies`),
validation (on the event loop for small bodies, in a thread for large ones), the reports charged
to the address, and the writer's durable commit, which also holds the campaign to its cap. Two
callers share it:

* the FastAPI route (:mod:`pldp.service.routes.reports`), which describes the endpoint in the
  OpenAPI schema;
* :class:`FastPath`, an ASGI middleware placed just inside Starlette's error middleware. It
  answers the same requests without FastAPI's routing, request objects, dependency solving and
  exception middleware.

Every request of a single-report load passes through here. At a few thousand requests per second
on two cores, the framework's per-request work is the larger part of the cost. The answers of
the two paths are the same (``tests/test_service.py`` drives the server through the fast path, and
``tests/test_service_api.py`` sends the same good and bad bodies through both and compares the answers).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from pldp.deploy import Spec
from pldp.service import bodies, codes, collect, ratelimit, rounds, store
from pldp.service.bodies import BodyBudget
from pldp.service.collect import CollectError
from pldp.service.errors import as_http
from pldp.service.faults import StoreUnavailableError, store_error
from pldp.service.ratelimit import Contributions, RateLimiter
from pldp.service.refusals import RefusalError
from pldp.service.writer import Lookup, Writer

__all__ = ["INLINE_BODY", "FastPath", "Ingest", "read_body"]

#: Bodies up to this size are validated on the event loop (tens of microseconds), larger ones in a thread.
INLINE_BODY = 16 * 1024

#: A body larger than this (or of unknown length) refused before it is read closes the connection (ratelimit).
CLOSE_UNREAD = 64 * 1024

_REPORTS_PATH = re.compile(r"/v1/campaigns/([^/]+)/reports")


async def read_body(declared: str | None, chunks: AsyncIterator[bytes], limit: int) -> bytes:
    """A request body of at most ``limit`` bytes (``declared``: its Content-Length header, if any).

    Raises
    ------
    CollectError
        413 as soon as the declared or received size exceeds ``limit``.
    """
    async with bodies.reading(declared, chunks, limit) as raw:
        return bytes(raw)


class Ingest:
    """Accept a batch of reports for a campaign (see module doc).

    Parameters
    ----------
    writer : Writer
        The store's writer; the answer waits for the commit that stores the batch.
    who : callable
        ``who(campaign_id, authorization)`` checks an ``Authorization`` header (None: anonymous)
        against the campaign's access and returns the hash of a respondent code, or None where
        none is needed; it raises a 401 for an invalid token or code (:func:`pldp.service.codes.submitter`).
    spec_of : callable
        The spec of a campaign id; raises a 404 for an unknown campaign.
    max_body, max_reports : int
        The request bounds.
    limiter : RateLimiter, optional
        Reports per client address (none: unlimited).
    unlimited : callable, optional
        Whether an ``Authorization`` header exempts the request from ``limiter`` (an admin's or an
        analyst's token; :meth:`pldp.service.state.Service.unlimited`).
    budget : BodyBudget, optional
        Bytes of bodies read and parsed at once (none: unbounded).
    cap : int, optional
        The most reports a campaign takes (none: no cap).
    grace : float
        Seconds after a round of a recurring campaign starts during which a report may still name
        the round before (:mod:`pldp.service.rounds`).
    """

    def __init__(
        self,
        writer: Writer,
        who: Callable[[str, str | None], bytes | None],
        spec_of: Callable[[str], Spec],
        max_body: int,
        max_reports: int,
        limiter: RateLimiter | None = None,
        budget: BodyBudget | None = None,
        cap: int | None = None,
        unlimited: Callable[[str | None], bool] = lambda _: False,
        grace: float = rounds.DEFAULT_GRACE,
    ) -> None:
        self.writer = writer
        self.who = who
        self.spec_of = spec_of
        self.max_body = max_body
        self.max_reports = max_reports
        self.limiter = limiter
        #: What one address may hold in an open campaign (:class:`pldp.service.ratelimit.Contributions`).
        self.contributions: Contributions | None = None
        self.budget = budget
        self.cap = cap
        self.unlimited = unlimited
        self.grace = grace

    async def accept(
        self,
        campaign_id: str,
        authorization: str | None,
        declared: str | None,
        client: str | None,
        chunks: AsyncIterator[bytes],
        query: bytes | str = b"",
    ) -> dict[str, int]:
        """Store the batch in the body (all or nothing) and count it: ``{"accepted", "duplicates"}``.

        ``client`` is the client's address (the ASGI scope's, which a trusted proxy's
        ``X-Forwarded-For`` has set); ``query`` the request's query string, whose ``round=n``
        names the round the reports answer (:mod:`pldp.service.rounds`; a 400 when it is not a
        round number). Whether the campaign is closed or full, whether the round is open, and
        whether a respondent code was used already, is checked by the writer, in the transaction
        that would store the batch.
        """
        try:
            code = self.who(campaign_id, authorization)
            spec = self.spec_of(campaign_id)
            limiter = None if self.limiter is None or self.unlimited(authorization) else self.limiter
        except store.SQLiteError as exc:  # a store that cannot be read: a 503 too, never a traceback
            raise collect.unavailable(store_error(exc) or StoreUnavailableError(str(exc))) from None
        try:
            asked = rounds.Asked(rounds.asked_round(query), rounds.clock(), self.grace)
        except ValueError as exc:
            raise CollectError(400, "bad_round", str(exc)) from None
        if limiter is not None:
            try:
                limiter.admit(client)
            except CollectError as exc:  # a large body refused unread: close rather than read it to discard it
                if declared is None or not declared.isdigit() or int(declared) > CLOSE_UNREAD:
                    exc.headers["Connection"] = "close"
                raise
        per_token, got = bytes_per_token(spec), [0]  # bytes read, charged even when refused (ratelimit)
        try:
            async with bodies.reading(declared, _counted(chunks, got), self.max_body, self.budget) as raw:
                if len(raw) <= INLINE_BODY:  # a few reports: validating costs less than a hop to a thread
                    prep = collect.prepare_batch(spec, raw, self.max_reports)
                else:
                    prep = await run_in_threadpool(collect.prepare_batch, spec, raw, self.max_reports)
        except CollectError as exc:
            if limiter is not None and 400 <= exc.status < 500:
                limiter.refused(client, got[0], per_token)
            raise
        # an open campaign, an anonymous client, per-address limits on (--rate 0 turns them all off)
        share = self.contributions if limiter is not None and limiter.on and code is None else None
        if share is not None:
            try:
                share.reserve(campaign_id, client, len(prep))
            except CollectError:
                if limiter is not None:
                    limiter.refused(client, got[0], per_token)
                raise
        if limiter is not None:
            try:
                limiter.charge(client, len(prep), got[0], per_token)
            except CollectError:
                if share is not None:
                    share.settle(campaign_id, client, len(prep), 0)
                raise
        job = self.writer.submit(
            codes.job_for(campaign_id, prep, code, time.time(), self.cap, asked), Lookup(campaign_id, prep.ids)
        )
        stored = 0
        try:
            answer: dict[str, int] = await asyncio.wrap_future(job)
            stored = int(answer.get("accepted", 0))
            return answer
        except StoreUnavailableError as exc:
            raise collect.unavailable(exc) from None
        except RefusalError as exc:  # the writer job's refusal, as the routes answer it (pldp.service.errors)
            raise as_http(exc) from None
        finally:
            if share is not None:
                share.settle(campaign_id, client, len(prep), stored)


async def _counted(chunks: AsyncIterator[bytes], got: list[int]) -> AsyncIterator[bytes]:
    """``chunks``, adding their bytes to ``got[0]``."""
    async for chunk in chunks:
        got[0] += len(chunk)
        yield chunk


def bytes_per_token(spec: Spec) -> int:
    """:func:`pldp.service.ratelimit.bytes_per_token` for the reports of ``spec``."""
    return ratelimit.bytes_per_token(sum(c.width for c in spec.root.columns()))


class FastPath:
    """ASGI middleware that answers ``POST /v1/campaigns/{id}/reports`` with :class:`Ingest` and
    passes every other request to ``app`` (see module doc)."""

    def __init__(self, app: ASGIApp, ingest: Ingest) -> None:
        self.app = app
        self.ingest = ingest

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = _REPORTS_PATH.fullmatch(scope["path"]) if scope["type"] == "http" else None
        if match is None or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v.decode("latin-1") for k, v in scope["headers"] if k.lower() in _WANTED}
        extra: list[tuple[bytes, bytes]] = []
        client = scope.get("client")
        try:
            answer: dict[str, Any] = await self.ingest.accept(
                match[1],
                headers.get(b"authorization"),
                headers.get(b"content-length"),
                client[0] if client else None,
                _chunks(receive),
                scope.get("query_string", b""),
            )
            status = 200
        except CollectError as exc:
            status, answer = exc.status, {"error": exc.code, "reason": exc.reason}
            if exc.status == 401:
                extra.append((b"www-authenticate", b"Bearer"))
            extra += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in exc.headers.items()]
        body = json.dumps(answer, separators=(",", ":")).encode()
        start_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": start_headers + extra})
        await send({"type": "http.response.body", "body": body})


_WANTED = (b"authorization", b"content-length")


async def _chunks(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise CollectError(400, "disconnected", "the client went away before sending the whole body")
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return
