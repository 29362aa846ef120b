"""One address cannot decide an open campaign's estimate with the default settings, against a real
``pldp serve`` on 127.0.0.1 (``--rate 100``, the default; bounded: 5,000 honest reports and at
most 10,000 + 100 x 50 from the attacker).

Before: one address's single batch of 10,000 reports of v0 moved v0's Norm-Sub estimate from 0.00
to 1.00 against 5,000 honest reports (none of v0). Now one address may hold at most
``--address-burst`` (100) plus ``--address-share`` (2%) of the campaign's reports
(:class:`pldp.service.ratelimit.Contributions`); ``GET .../round`` shows the numbers, which the
dashboard says in words. Addresses are named by ``X-Forwarded-For`` (the loopback proxy is trusted).
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from tests.cli_run import one_line, pldp_cmd
from tests.service_server import Server

SPEC = Spec.from_mechanism(pldp.KRR(2.0, 5), question="Who decides?")
PATH = f"/v1/campaigns/{SPEC.id}/reports"


def _post(values: np.ndarray, address: str) -> tuple[int, dict[str, object]]:
    body = json.dumps(Client(SPEC).reports(values).to_json(), separators=(",", ":")).encode()
    conn = http.client.HTTPConnection("127.0.0.1", PORT[0], timeout=60)
    try:
        conn.request("POST", PATH, body=body, headers={"Content-Type": "application/json", "X-Forwarded-For": address})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


PORT = [0]


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("share") / "pldp.db", "--rate", "100")
    srv.start()
    PORT[0] = srv.port
    srv.admin().create_campaign(SPEC)
    yield srv
    srv.stop()


def test_one_address_cannot_decide_an_estimate_with_default_settings(server: Server) -> None:
    rng = np.random.default_rng(3)
    for i in range(50):  # 5,000 honest reports from 50 addresses, none of v0
        assert _post(rng.integers(1, 5, 100), f"198.51.100.{i}")[0] == 200
    status, answer = _post(np.zeros(10_000, int), "203.0.113.66")
    assert status == 429 and answer["error"] == "address_share", answer
    stored = 0
    for _ in range(50):  # the same address in batches of 100: it stops at its part
        status, answer = _post(np.zeros(100, int), "203.0.113.66")
        if status != 200:
            assert status == 429 and answer["error"] == "address_share", answer
            break
        stored += int(answer["accepted"])  # type: ignore[call-overload]
    assert 100 <= stored <= 100 + 0.02 * (5_000 + stored) + 1, stored
    analyst = server.client(server.admin().create_token("share", [SPEC.id])["token"])
    estimate = analyst.estimate(SPEC.id, method="norm_sub")
    share = estimate["attributes"][0]["frequencies"][0]
    print(f"the attacker stored {stored} reports; v0's Norm-Sub estimate {share:.3f}")
    assert share < 0.15, share
    info = server.client().current_round(SPEC.id)
    n = 5_000 + stored
    assert info["per_address"] == {"share": 0.02, "burst": 100, "n": n, "allowed": 100 + int(0.02 * n)}, info
    # another address still sends, and a staff token is not counted
    assert _post(rng.integers(1, 5, 100), "198.51.100.200")[0] == 200


def test_pldp_campaign_submit_stops_at_the_share_at_once_and_a_token_lifts_it(server: Server, tmp_path: Path) -> None:
    """A bulk upload without a token meets the address's part: the command does not wait for it
    (the part grows only as others send), says so in one line and names --token-file; with an
    analyst's token every report is stored, once."""
    reports = tmp_path / "reports.json"
    reports.write_text(json.dumps(Client(SPEC).reports(np.arange(1_000) % 5).to_json()))
    at = ("--server", server.url, "--batch", "500", "--no-progress")
    t0 = time.monotonic()
    refused = pldp_cmd("campaign", "submit", SPEC.id, str(reports), *at)
    took = time.monotonic() - t0
    said = one_line(refused.stderr, 1, refused.returncode, "429 address_share", "pass --token-file FILE")
    assert took < 30, (took, said)  # before: retried after the 60 s Retry-After, 5 times
    assert server.client().current_round(SPEC.id)["per_address"]["n"] == 0  # nothing stored
    token = tmp_path / "analyst.token"
    token.write_text(server.admin().create_token("bulk", [SPEC.id])["token"])
    sent = pldp_cmd("campaign", "submit", SPEC.id, str(reports), *at, "--token-file", str(token))
    assert sent.returncode == 0 and sent.stderr == "", sent.stderr
    assert server.client().current_round(SPEC.id)["per_address"]["n"] == 1_000
