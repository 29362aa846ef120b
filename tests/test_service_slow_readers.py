"""Clients that send requests and never read the answers, against a real ``pldp serve`` on
127.0.0.1 (bounded: 200 connections for 14 s; :mod:`pldp.service.connections`).

Before: 1,000 connections each pipelining 4 ``GET /openapi.json`` without reading made a health
check time out (10 s), and the server, answering all four, left about 660 MB of kernel TCP memory
in closed connections still holding the answers (FIN-WAIT-1 orphans). Now a pipelined request is
answered only once the answer before it was read, a connection's kernel send buffer is bounded,
and one that stays unwritable for ``WRITE_TIMEOUT`` seconds is reset (which frees what it held).
Measured with 1,000 such connections held 15 s: the worst health check 10 s (timed out) -> 4.5 s,
peak TCP memory of the machine 307 -> 81 MiB, orphans 964 -> 0.
"""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from pldp.service import connections
from tests.service_server import Server

CONNECTIONS = 200


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("slow") / "pldp.db")
    srv.start()
    yield srv
    srv.stop()


def _read_all(sock: socket.socket, seconds: float) -> tuple[bytes, str]:
    """What ``sock`` receives within ``seconds``, and how it ended: reset, closed or open."""
    sock.settimeout(0.5)
    got = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(1 << 16)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return got, "reset"
        if not chunk:
            return got, "closed"
        got += chunk
    return got, "open"


def test_pipelined_requests_of_a_reading_client_are_answered_in_order(server: Server) -> None:
    paths = ["/v1/health", "/openapi.json", "/v1/health", "/docs"]
    head = "".join(f"GET {p} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n" for p in paths)
    head += f"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(head.encode())
        got, end = _read_all(s, 10)
    assert end == "closed" and got.count(b"HTTP/1.1 200 ") == 5, got[:300]
    assert got.index(b'"status"') < got.index(b'"openapi"') < got.lower().index(b"<html") < got.rindex(b'"status"')


def test_clients_that_do_not_read_are_reset_and_health_stays_quick(server: Server) -> None:
    head = f"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode() * 4
    socks = []
    worst = 0.0
    try:
        for _ in range(CONNECTIONS):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(head)
            socks.append(s)
        end = time.monotonic() + connections.WRITE_TIMEOUT + 4
        while time.monotonic() < end:
            t0 = time.monotonic()
            probe = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            try:
                probe.request("GET", "/v1/health")
                assert probe.getresponse().status == 200
            finally:
                probe.close()
            worst = max(worst, time.monotonic() - t0)
            time.sleep(0.5)
        ends = [_read_all(s, 2) for s in socks[:20]]
    finally:
        for s in socks:
            s.close()
    print(f"worst health {worst:.2f} s; ends {[e for _, e in ends]}; bytes {[len(g) for g, _ in ends]}")
    assert worst < 3.0, worst
    # reset by the server, having been sent at most two of the four answers (one read in part by the kernel)
    assert all(e == "reset" for _, e in ends), [e for _, e in ends]
    size = len(server.client().request("GET", "/openapi.json")[2])
    assert all(g.count(b"HTTP/1.1 200 ") <= 2 and len(g) < 2.5 * size for g, _ in ends), [len(g) for g, _ in ends]
