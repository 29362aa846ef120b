"""A small load generator for the collector benchmarks: HTTP/1.1 over asyncio streams.

Requests are serialized before the clock starts and sent on keep-alive connections, so a request
costs the generator one ``write`` and one parsed response (tens of microseconds): at the rates
measured here it uses a small part of one core (``cpu_s`` in the results says how much), which
keeps it from being the bottleneck while it shares the machine with the server.

Two modes:

* :func:`closed_loop`: ``connections`` clients, each sending its next request when the previous
  one is answered (throughput at saturation);
* :func:`open_loop`: requests issued at a fixed rate on a pool of connections, whatever the
  server does (latency at a given load; a request's latency runs from its scheduled time, so
  queueing in the generator counts against the server, as it would for real clients).
"""

from __future__ import annotations

import asyncio
import gc
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def request(host: str, port: int, method: str, path: str, body: bytes = b"", token: str | None = None) -> bytes:
    """The bytes of one HTTP/1.1 request with a JSON body, keep-alive."""
    head = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: keep-alive"]
    if token:
        head.append(f"Authorization: Bearer {token}")
    if body or method == "POST":
        head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, req: bytes) -> int:
    writer.write(req)
    status_line = await reader.readline()
    status = int(status_line.split()[1])
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if length:
        await reader.readexactly(length)
    return status


@dataclass
class Result:
    """Requests done, wall seconds, per-request latencies (s), statuses, generator CPU seconds."""

    requests: int
    wall: float
    latencies: np.ndarray
    statuses: dict[int, int] = field(default_factory=dict)
    cpu_s: float = 0.0

    @property
    def rate(self) -> float:
        return self.requests / self.wall

    def percentile(self, q: float) -> float:
        return float(np.percentile(self.latencies, q))


async def _closed(host: str, port: int, requests: list[list[bytes]]) -> Result:
    lat: list[float] = []
    statuses: dict[int, int] = {}

    async def one(reqs: list[bytes]) -> None:
        reader, writer = await asyncio.open_connection(host, port)
        for req in reqs:
            t = time.perf_counter()
            st = await _exchange(reader, writer, req)
            lat.append(time.perf_counter() - t)
            statuses[st] = statuses.get(st, 0) + 1
        writer.close()

    cpu, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(r) for r in requests))
    wall = time.perf_counter() - t0
    return Result(len(lat), wall, np.array(lat), statuses, time.process_time() - cpu)


def _without_gc(run: Any) -> Result:
    """Run with the garbage collector off: a full collection of the generator's thousands of
    pending tasks pauses it for tens of milliseconds, which would show up as server latency."""
    gc.collect()
    gc.disable()
    try:
        return run()
    finally:
        gc.enable()


def closed_loop(host: str, port: int, requests: list[list[bytes]]) -> Result:
    """One connection per list in ``requests``, each sending its requests one after another."""
    return _without_gc(lambda: asyncio.run(_closed(host, port, requests)))


async def _open(host: str, port: int, reqs: list[bytes], rate: float, connections: int) -> Result:
    pool: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
    for _ in range(connections):
        pool.put_nowait(await asyncio.open_connection(host, port))
    lat = np.zeros(len(reqs))
    statuses: dict[int, int] = {}
    start = asyncio.Event()
    clock: list[float] = []

    async def one(i: int, req: bytes) -> None:
        await start.wait()
        due = clock[0] + i / rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        conn = await pool.get()
        st = await _exchange(*conn, req)
        lat[i] = time.perf_counter() - due
        statuses[st] = statuses.get(st, 0) + 1
        pool.put_nowait(conn)

    # every request's task exists before the clock starts: creating and first scheduling thousands
    # of tasks takes tens of milliseconds, which would otherwise count as the first requests' latency
    tasks = [asyncio.create_task(one(i, r)) for i, r in enumerate(reqs)]
    await asyncio.sleep(0)
    cpu, t0 = time.process_time(), time.perf_counter() + 0.2  # the wake-up of every task fits in the lead
    clock.append(t0)
    start.set()
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    while not pool.empty():
        pool.get_nowait()[1].close()
    return Result(len(reqs), wall, lat, statuses, time.process_time() - cpu)


def open_loop(host: str, port: int, reqs: list[bytes], rate: float, connections: int = 64) -> Result:
    """``reqs`` issued at ``rate`` per second on ``connections`` keep-alive connections."""
    return _without_gc(lambda: asyncio.run(_open(host, port, reqs, rate, connections)))
