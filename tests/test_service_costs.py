"""What a request costs the server is charged to its address (:mod:`pldp.service.ratelimit`), against
a real ``pldp serve`` on 127.0.0.1 with its default limits (100 reports a second, 10,000 at once),
each attack bounded in count and time.

Before: 300 malformed (``bad_report``) or too deep bodies in a row never met a 429; one address
sending 8 MiB bodies that were refused, or 8 MiB of whitespace around one report (charged one
token), raised an honest 10-report batch's median latency from 4 ms to 207-437 ms.
Addresses are named by ``X-Forwarded-For`` (the loopback proxy is trusted by default).
"""

from __future__ import annotations

import http.client
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.service import ratelimit
from tests.service_server import Server

SPEC = Spec.from_mechanism(pldp.KRR(1.0, 5), question="What does it cost?")
PATH = f"/v1/campaigns/{SPEC.id}/reports"


def _batch(n: int, seed: int) -> bytes:
    data = Client(SPEC).reports(np.random.default_rng(seed).integers(0, 5, n)).to_json()
    return json.dumps(data, separators=(",", ":")).encode()


def _post(conn: http.client.HTTPConnection, body: bytes, address: str) -> tuple[int, Any]:
    conn.request("POST", PATH, body=body, headers={"Content-Type": "application/json", "X-Forwarded-For": address})
    resp = conn.getresponse()
    raw = resp.read()
    return resp.status, json.loads(raw)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The collector with its default limits (``--rate 100`` is the default; Server turns it off otherwise)."""
    srv = Server(tmp_path_factory.mktemp("costs") / "pldp.db", "--rate", "100")
    srv.start()
    srv.admin().create_campaign(SPEC)
    yield srv
    srv.stop()


@pytest.mark.parametrize("kind", ["bad_report", "too_deep"])
def test_refused_bodies_meet_a_429_after_a_bounded_number(server: Server, kind: str) -> None:
    good = json.loads(_batch(1, 1))
    good["reports"][0]["value"] = 99  # out of the domain
    body = json.dumps(good).encode() if kind == "bad_report" else b"[" * 1_000 + b"]" * 1_000
    address = "203.0.113.1" if kind == "bad_report" else "203.0.113.2"
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    statuses = []
    t0 = time.monotonic()
    try:
        for _ in range(300):
            status, answer = _post(conn, body, address)
            statuses.append(status)
            if status == 429:
                assert answer["error"] == "rate_limited", answer
                break
            assert status == 400 and answer["error"] == kind, answer
    finally:
        conn.close()
    elapsed = time.monotonic() - t0
    # a refusal costs 1% of the burst: 100 empty a full bucket, plus what the rate refilled meanwhile
    bound = 1 / ratelimit.REFUSAL_SHARE + elapsed * 100 / (ratelimit.REFUSAL_SHARE * 10_000) + 2
    assert statuses[-1] == 429 and len(statuses) <= bound, (len(statuses), elapsed)
    print(f"{kind}: the {len(statuses)}th body met a 429 ({elapsed:.1f} s)")


def test_fat_bodies_are_charged_by_their_bytes(server: Server) -> None:
    """One report padded with whitespace to 1 MiB costs about 2,000 tokens, not one: the sixth is
    refused (429, or the connection closed when refused before its body is read), and the
    address's next plain report too (its bucket is in debt)."""
    address = "203.0.113.3"
    statuses: list[int | str] = []
    for i in range(8):
        one = _batch(1, 100 + i)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        try:
            statuses.append(_post(conn, one + b" " * (2**20 - len(one)), address)[0])
        except OSError:
            statuses.append("closed")
        finally:
            conn.close()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        status, answer = _post(conn, _batch(1, 200), address)
    finally:
        conn.close()
    assert statuses[:4] == [200] * 4 and {429, "closed"} & set(statuses[4:7]), statuses
    assert 200 not in statuses[statuses.index(429 if 429 in statuses else "closed") :], statuses
    assert status == 429 and answer["error"] == "rate_limited", answer


def _honest_latencies(server: Server, seconds: float) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    took = []
    deadline = time.monotonic() + seconds
    i = 0
    try:
        while time.monotonic() < deadline:
            body = _batch(10, 1_000 + i)
            i += 1
            t0 = time.monotonic()
            status, answer = _post(conn, body, f"198.51.100.{i % 200}")
            took.append(time.monotonic() - t0)
            assert status == 200, answer
            time.sleep(0.02)
    finally:
        conn.close()
    return took


_ATTACK = """
import http.client, json, sys, threading, time
port, kind, address, seconds, one = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5].encode()
body = one + b" " * (8 * 2**20 - len(one))
answers, sent, errors = [], [0], [0]
deadline = time.monotonic() + seconds
def attack():
    while time.monotonic() < deadline:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            while time.monotonic() < deadline:
                conn.request("POST", sys.argv[6], body=body,
                             headers={"Content-Type": "application/json", "X-Forwarded-For": address})
                sent[0] += len(body)
                resp = conn.getresponse()
                resp.read()
                answers.append(resp.status)
        except (OSError, http.client.HTTPException):
            errors[0] += 1  # closed: the body was refused unread
        finally:
            conn.close()
threads = [threading.Thread(target=attack) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps({"answers": answers, "errors": errors[0], "sent": sent[0]}))
"""


@pytest.mark.parametrize("kind", ["padded", "refused"])
def test_an_honest_client_keeps_its_latency_while_one_address_sends_8_mib_bodies(server: Server, kind: str) -> None:
    """Four connections from one address send 8 MiB bodies for 6 s from another process (one report
    padded with whitespace, or a malformed body); meanwhile an honest client of other addresses
    sends 10-report batches, whose median latency stays within 5 times its own before (or 50 ms)."""
    baseline = statistics.median(_honest_latencies(server, 1.5))
    one = _batch(1, 5_000) if kind == "padded" else b'{"format": "pldp.batch/1", "reports": ['
    address = "192.0.2.77" if kind == "padded" else "192.0.2.78"
    attacker = subprocess.Popen(
        [sys.executable, "-c", _ATTACK, str(server.port), kind, address, "6", one.decode(), PATH],
        stdout=subprocess.PIPE,
    )
    try:
        time.sleep(0.5)
        during = _honest_latencies(server, 5.0)
        out, _ = attacker.communicate(timeout=30)
    finally:
        attacker.kill()
        attacker.wait()
    got = json.loads(out)
    answered = [s for s in got["answers"] if s != 429]  # bodies the server read to the end
    median = statistics.median(during)
    print(
        f"{kind}: honest median {1000 * baseline:.0f} ms before, {1000 * median:.0f} ms under attack; the "
        f"attacker sent {got['sent'] / 2**20:.0f} MiB, answers {len(got['answers'])} ({len(answered)} not 429), "
        f"closed {got['errors']}"
    )
    assert median < max(0.05, 5 * baseline), (baseline, median)
    assert len(answered) <= 8, answered  # the burst's worth of bytes, then 429 before each body is read
