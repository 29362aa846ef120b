"""Request bodies: read within a size limit, and within a budget of bytes read and parsed at once.

``--max-body`` bounds one body; :class:`BodyBudget` bounds them all together. Without it, eight
clients each sending an 8 MiB body would have eight bodies and their parsed objects in memory at
the same time, and eight hundred would have eight hundred. A body's bytes are reserved before it
is read (its ``Content-Length``, or chunk by chunk when it has none) and released once it is
parsed; a request that cannot reserve its bytes within ``wait`` seconds is refused with 503 and
``Retry-After`` (nothing was stored: it may be sent again). Waiting requests are served in order.

The budget belongs to one process; with ``--workers N`` there are N.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

from pldp.service.collect import CollectError

__all__ = ["BodyBudget", "reading"]


class BodyBudget:
    """At most ``limit`` bytes of bodies reserved at once; a reservation waits up to ``wait`` seconds.

    A single body larger than ``limit`` reserves ``limit`` (it then runs alone).
    """

    def __init__(self, limit: int, wait: float = 2.0) -> None:
        self.limit = int(limit)
        self.wait = float(wait)
        self.held = 0
        self._queue: deque[tuple[int, asyncio.Future[None]]] = deque()

    async def acquire(self, n: int) -> int:
        """Reserve ``n`` bytes (at most :attr:`limit`); returns what was reserved.

        Raises
        ------
        CollectError
            503 ``busy`` with ``Retry-After`` when they could not be reserved in time.
        """
        n = min(int(n), self.limit)
        if not self._queue and self.held + n <= self.limit:
            self.held += n
            return n
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (n, ticket)
        self._queue.append(entry)
        try:
            await asyncio.wait_for(asyncio.shield(ticket), self.wait)
        except TimeoutError:
            if ticket.done():  # granted just as the wait ran out: keep it
                return n
            self._queue.remove(entry)
            self._grant()  # this one may have blocked smaller ones behind it
            raise CollectError(
                503,
                "busy",
                f"the collector is reading {self.held:,} bytes of other requests' bodies (at most {self.limit:,} at "
                "once); nothing was stored, send it again",
                {"Retry-After": "1"},
            ) from None
        return n

    def release(self, n: int) -> None:
        """Give back ``n`` reserved bytes, and grant waiting reservations in order."""
        self.held -= n
        self._grant()

    def _grant(self) -> None:
        while self._queue and self.held + self._queue[0][0] <= self.limit:
            n, ticket = self._queue.popleft()
            self.held += n
            ticket.set_result(None)


@contextlib.asynccontextmanager
async def reading(
    declared: str | None, chunks: AsyncIterator[bytes], limit: int, budget: BodyBudget | None = None
) -> AsyncIterator[bytearray]:
    """The body (at most ``limit`` bytes; ``declared``: its Content-Length header, if any), its bytes
    reserved in ``budget`` until the block ends.

    Raises
    ------
    CollectError
        413 as soon as the declared or received size exceeds ``limit``; 503 from the budget.
    """
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise CollectError(413, "body_too_large", f"the body has {declared} bytes; at most {limit}")
    held = 0
    try:
        if budget is not None and declared is not None and declared.isdigit():
            held = await budget.acquire(int(declared))
        buf = bytearray()
        async for chunk in chunks:
            if len(buf) + len(chunk) > limit:
                raise CollectError(413, "body_too_large", f"the body exceeds {limit} bytes")
            if budget is not None and (need := min(len(buf) + len(chunk), budget.limit) - held) > 0:
                held += await budget.acquire(need)
            buf += chunk
        yield buf
    finally:
        if budget is not None:
            budget.release(held)
