"""DNS rebinding and the Origin's scheme, against a real ``pldp serve`` on 127.0.0.1.

The Origin check compared the Origin with the Host header alone, so a page of
``http://evil.example:PORT`` whose name was then pointed at 127.0.0.1 (``Host: evil.example:PORT``)
could submit, and ``Origin: https://127.0.0.1:PORT`` passed on plain HTTP. The collector's own
origin is now the connection's scheme and a name it serves (``--allow-host``, besides the bound
address and ``localhost``) (:mod:`pldp.service.crossorigin`).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.service.crossorigin import serving_hosts
from tests.service_server import Server

SPEC = Spec.from_mechanism(pldp.KRR(1.0, 5), question="Rebound?")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("rebinding") / "pldp.db", "--allow-host", "Survey.Example.org")
    srv.start()
    srv.admin().create_campaign(SPEC)
    yield srv
    srv.stop()


def _post(server: Server, host: str, origin: str, seed: int) -> tuple[int, dict[str, str]]:
    body = json.dumps(Client(SPEC).reports(np.arange(3) % 5).to_json()).encode()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.putrequest("POST", f"/v1/campaigns/{SPEC.id}/reports", skip_host=True)
        for name, value in [
            ("Host", host),
            ("Origin", origin),
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
        ]:
            conn.putheader(name, value)
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def test_a_rebound_name_is_not_the_collectors_own_origin(server: Server) -> None:
    p = server.port
    status, answer = _post(server, f"evil.example:{p}", f"http://evil.example:{p}", 1)
    assert status == 403 and answer["error"] == "cross_origin" and "evil.example" in answer["reason"], answer
    status, answer = _post(server, f"evil.example.:{p}", f"http://evil.example.:{p}", 2)
    assert status == 403, answer


def test_the_origins_scheme_must_be_the_connections(server: Server) -> None:
    status, answer = _post(server, f"127.0.0.1:{server.port}", f"https://127.0.0.1:{server.port}", 3)
    assert status == 403 and answer["error"] == "cross_origin", answer


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "survey.example.org", "SURVEY.example.org."])
def test_the_names_it_serves_are_its_own(server: Server, name: str) -> None:
    status, answer = _post(server, f"{name}:{server.port}", f"http://{name.lower().rstrip('.')}:{server.port}", 4)
    assert status == 200 and answer["accepted"] + answer["duplicates"] == 3, answer


def test_a_collector_on_every_interface_serves_any_address_but_no_other_name() -> None:
    hosts = serving_hosts("0.0.0.0", ["a.example"])
    assert hosts == ("*", "a.example", "localhost")
    from pldp.service.crossorigin import _own

    assert _own("http://10.1.2.3:8000", "10.1.2.3:8000", "http", frozenset(hosts))
    assert _own("http://[::1]:8000", "[::1]:8000", "http", frozenset(hosts))
    assert not _own("http://b.example:8000", "b.example:8000", "http", frozenset(hosts))
    assert not _own("http://a.example:8000", "a.example:8000", "https", frozenset(hosts))
    assert _own("https://a.example", "a.example", "https", frozenset(hosts))
