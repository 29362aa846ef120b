"""Connections within bounds: a deadline to send a request, and a cap on open connections.

uvicorn times out an idle kept-alive connection, but every byte received resets that timer and
nothing bounds how long a request may take to arrive. A client that sends one header byte every
few seconds ("slowloris") holds its connection, and a file descriptor, for ever; measured on
loopback, 2,000 such connections were all still open after 45 s, and at 19,990 the server ran
out of file descriptors and reset honest requests. :class:`GuardedHttpTools` is uvicorn's
``httptools`` protocol with two additions (``pldp serve`` passes it as uvicorn's ``http``):

* **Deadlines.** A connection must send a whole request head within ``header_timeout`` seconds
  of opening, or of the first byte of a later request on it (10 s by default), and then its body
  within ``body_timeout`` seconds (30 s). A head that comes too late is answered ``408`` and the
  connection closed; a body that comes too late closes the connection (the application, which is
  reading it, sees the client leave and stores nothing).
* **A cap on connections** per process (``max_connections``, 4,096 by default). At the cap, a
  new connection closes, without an answer, the one that has waited longest without a whole
  request: one that opened or finished its last answer before every other waiting one (as nginx
  reuses its oldest idle connections). A connection whose request the application is answering is never closed. An
  honest client sends its request as soon as it connects, so it is never the oldest waiting for
  long; a flood of connections that send nothing only pushes out its own oldest members.

* **Slow readers.** A client that sends requests (pipelined, say) and never reads the answers
  held them in the server: 1,000 connections each pipelining 4 ``GET /openapi.json`` made a health
  check time out (10 s) and left about 660 MB of kernel TCP memory in closed connections
  (FIN-WAIT-1 orphans) that still held their unread answers. Now each connection's kernel send
  buffer is :data:`SEND_BUFFER` (which bounds what it may queue unread; the kernel doubles it),
  an answer that cannot be written for ``write_timeout`` seconds (10 s by default: the
  transport's buffer stayed above its high-water mark) aborts the connection (a reset, which
  frees what it held at once), and a kept-alive connection that times out with bytes still
  unsent is aborted too rather than closed (a close would leave them in an orphan). A pipelined
  request is answered only once the client has read the answer before it, so a client that does
  not read makes the server work for one answer, not for all it pipelined.

``pldp serve`` also raises the process's soft limit on open files to its hard limit, and keeps the
cap below it (:func:`connection_cap`), so that accepting a connection never fails for want of a
file descriptor.

The settings are the process's (:func:`configure`): uvicorn makes a protocol object per
connection with its own arguments only.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import resource
import socket
import struct
import termios
from collections import OrderedDict, deque
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["GuardedHttpTools", "Policy", "configure", "connection_cap", "raise_file_limit", "reset"]

#: Seconds between two checks of the deadlines (a deadline is met within this much more).
SWEEP = 0.5
#: Bytes of a connection's kernel send buffer (``SO_SNDBUF``; Linux doubles it): what it may queue unread.
SEND_BUFFER = 64 * 1024
#: Seconds an answer may stay unwritable (its buffer above the high-water mark) before the connection is aborted.
WRITE_TIMEOUT = 10.0

#: Seconds between checks whether a client read an answer, before its next pipelined request is answered.
PIPELINE_POLL = 0.05

#: File descriptors kept for the store, its readers, the log and a listen backlog of connections accepted
#: in one turn of the event loop (beyond the cap).
RESERVED_FDS = 2048 + 256


class Policy:
    """The bounds of this process's connections, and those waiting for a whole request, oldest first.

    The deadlines are checked by one sweep every :data:`SWEEP` seconds over the waiting connections
    (a connection whose request the application is answering has none), not by a timer per
    connection: arming and cancelling timers cost more than the sweep, on every request.
    """

    def __init__(
        self,
        header_timeout: float = 10.0,
        body_timeout: float = 30.0,
        max_connections: int = 4096,
        write_timeout: float = WRITE_TIMEOUT,
    ) -> None:
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.max_connections = max_connections
        self.write_timeout = write_timeout
        self.waiting: OrderedDict[GuardedHttpTools, None] = OrderedDict()
        self.stalled: dict[GuardedHttpTools, float] = {}  # connections whose writing is paused -> since when
        self.evicted = 0
        self.timed_out = 0
        self.aborted = 0  # connections aborted for not reading their answers
        self._sweeping: asyncio.AbstractEventLoop | None = None

    def wait(self, conn: GuardedHttpTools) -> None:
        """``conn`` waits for a request from now on (it goes last)."""
        self.waiting.pop(conn, None)
        self.waiting[conn] = None
        self.wait_sweep(conn.loop)

    def evict(self) -> None:
        """Close the connection that has waited longest without a whole request."""
        if self.waiting:
            victim = next(iter(self.waiting))
            self.waiting.pop(victim)
            self.evicted += 1
            victim.transport.close()  # no answer: under a flood of connections, each write is work

    def stall(self, conn: GuardedHttpTools, stalled: bool) -> None:
        """``conn``'s writing is paused (its client does not read), or no longer."""
        if stalled:
            self.stalled.setdefault(conn, conn.loop.time())
            self.wait_sweep(conn.loop)
        else:
            self.stalled.pop(conn, None)

    def wait_sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._sweeping is not loop:
            self._sweeping = loop
            loop.call_later(SWEEP, self._sweep, loop)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        now = loop.time()
        late = [c for c in self.waiting if c.due is not None and c.due <= now]
        for conn in late:
            conn.expire()
        for conn in [c for c, since in self.stalled.items() if now - since >= self.write_timeout]:
            self.stalled.pop(conn, None)
            self.aborted += 1
            reset(conn.transport)
        if loop.is_closed():  # pragma: no cover - the server stopped
            return
        loop.call_later(SWEEP, self._sweep, loop)


#: This process's policy (:func:`configure` sets it).
POLICY = Policy()


def raise_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit; returns the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # pragma: no cover - a platform that refuses
            pass
    return int(soft)


def connection_cap(wanted: int) -> int:
    """``wanted``, kept below this process's soft limit on open files by :data:`RESERVED_FDS`, or by
    half the limit when it is small.

    A closed connection's descriptor is freed at the event loop's next turn, and one turn may
    accept a whole listen backlog (2,048) of new connections first: hence the margin.
    """
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, max(int(soft) // 2, int(soft) - RESERVED_FDS)))


def configure(
    header_timeout: float, body_timeout: float, max_connections: int, write_timeout: float = WRITE_TIMEOUT
) -> Policy:
    """Set this process's policy (the file limit raised, and the cap kept below it)."""
    raise_file_limit()
    POLICY.write_timeout = write_timeout
    POLICY.header_timeout = header_timeout
    POLICY.body_timeout = body_timeout
    POLICY.max_connections = connection_cap(max_connections)
    return POLICY


_REASONS = {408: b"Request Timeout"}


def reset(transport: Any) -> None:
    """Abort the connection with a reset (``SO_LINGER`` 0): the kernel frees what it held at once.
    (asyncio's ``abort`` alone drops only its own buffer: the kernel still closes with a FIN and
    keeps the unsent bytes in an orphan until the peer reads them or the retries give up.)"""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _unsent(transport: Any) -> int:
    """Bytes the kernel holds unsent (or unacknowledged) on the transport's socket (0 if unknown)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    try:
        return int(struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0])
    except (OSError, ValueError):
        return 0


class GuardedHttpTools(HttpToolsProtocol):
    """uvicorn's ``httptools`` protocol with deadlines and the process's connection cap (module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._policy = POLICY
        self.due: float | None = None  # the deadline of the current phase (the loop's clock)
        self._phase = "new"  # new, head, body, busy (the application answers), idle

    # ------------------------------------------------------------------ deadlines
    def _arm(self, seconds: float) -> None:
        self.due = self.loop.time() + seconds

    def expire(self) -> None:
        """The deadline passed: answer 408 if a head is on its way, and close."""
        self.due = None
        self._policy.timed_out += 1
        what = "the request body" if self._phase == "body" else "the request head"
        self.drop(408, f"{what} did not arrive in time; send it again")

    def drop(self, status: int, reason: str) -> None:
        """Close the connection; while a request head is on its way (no answer begun), answer ``status`` first."""
        if self.transport.is_closing():
            return
        if self._phase == "head":
            body = json.dumps({"error": "request_timeout", "reason": reason}).encode()
            self.transport.write(
                b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                b"connection: close\r\n\r\n%s" % (status, _REASONS[status], len(body), body)
            )
        self.transport.close()

    # ------------------------------------------------------------------ the connection
    def connection_made(self, transport: Any) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        super().connection_made(transport)
        self._policy.wait(self)
        self._arm(self._policy.header_timeout)
        if len(self.connections) > self._policy.max_connections:
            self._policy.evict()

    def connection_lost(self, exc: Exception | None) -> None:
        self.due = None
        self._policy.waiting.pop(self, None)
        self._policy.stalled.pop(self, None)
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._policy.stall(self, True)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._policy.stall(self, False)

    def _unread(self) -> bool:
        """Whether the client has not yet taken all it was sent (in our buffer or the kernel's)."""
        return bool(self.transport.get_write_buffer_size() or _unsent(self.transport))

    def _release(self, held: deque[Any]) -> None:
        """Answer the held pipelined requests once the answers before are read (the keep-alive
        timeout, armed meanwhile, resets a connection whose client does not read)."""
        if self.transport.is_closing():
            return
        if self._unread():
            self.loop.call_later(PIPELINE_POLL, self._release, held)
            return
        if self.timeout_keep_alive_task is not None:
            self.timeout_keep_alive_task.cancel()
            self.timeout_keep_alive_task = None
        self._policy.waiting.pop(self, None)
        self._phase = "busy"
        self.due = None
        cycle, app = held.pop()
        self.pipeline = held
        self.flow.resume_reading()
        start = getattr(self, "_start_asgi_task", None)  # newer uvicorn; older: as its on_response_complete
        if start is not None:
            start(cycle, app)
        else:
            task = self.loop.create_task(cycle.run_asgi(app))
            task.add_done_callback(self.tasks.discard)
            self.tasks.add(task)

    def timeout_keep_alive_handler(self) -> None:
        """An idle kept-alive connection is closed; aborted if its client has not read all it was sent."""
        if not self.transport.is_closing() and (self.transport.get_write_buffer_size() or _unsent(self.transport)):
            self._policy.aborted += 1
            reset(self.transport)
            return
        super().timeout_keep_alive_handler()

    def data_received(self, data: bytes) -> None:
        if self.due is None and not self._busy():  # the first byte of a later request (or of stray bytes)
            self._arm(self._policy.header_timeout)
        super().data_received(data)

    # ------------------------------------------------------------------ the parser's events
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._phase = "head"

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._phase = "body"
        self._arm(self._policy.body_timeout)

    def _busy(self) -> bool:
        """Whether the application is answering a whole request of this connection."""
        cycle = self.cycle
        return cycle is not None and not cycle.response_complete and not cycle.more_body

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.due = None
        if self._busy():
            self._phase = "busy"
            self._policy.waiting.pop(self, None)  # never closed for the cap while it is answered
        else:  # answered before its body was read (a refusal)
            self._phase = "idle"

    def on_response_complete(self) -> None:
        held = None
        if self.pipeline and not self.transport.is_closing() and self._unread():
            held, self.pipeline = self.pipeline, deque()  # the next answer waits until this one is read
        super().on_response_complete()
        if held is not None:
            self.flow.pause_reading()  # a request read meanwhile would be answered before the held ones
            self.loop.call_later(PIPELINE_POLL, self._release, held)
        if self.transport.is_closing() or self._busy():  # closing, or a pipelined request is next
            return
        if self._phase == "busy":
            self._phase = "idle"
        elif self._phase == "head" and self.due is None:  # a pipelined request's head is on its way
            self._arm(self._policy.header_timeout)
        self._policy.wait(self)
