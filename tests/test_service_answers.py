"""What the collector says of itself, against a real ``pldp serve`` process (issue 33, item 2): the
cap a campaign's entry shows is the one that applies, the OpenAPI schema states the constraints the
server enforces (so that clients made from it send only what it takes), and a 405 says which
methods the path takes (``Allow``). Each test failed on the code before the change."""

from __future__ import annotations

import http.client
import json
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.deploy.remote import RemoteError
from tests.cli_run import pldp_cmd
from tests.deploy_cases import words
from tests.service_server import Server

SPEC = Spec.from_mechanism(pldp.KRR(1.0, 3), question="answers?")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    srv = Server(tmp_path_factory.mktemp("answers") / "pldp.db", "--campaign-cap", "5000").start()
    admin = srv.admin()
    admin.create_campaign(SPEC)
    srv.client().submit(SPEC.id, Client(SPEC, words(1)).reports(np.arange(30) % 3))
    yield srv
    srv.stop()


def _call(server: Server, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any, Any]:
    """One request on a fresh connection: the status, the headers and the body (JSON when it is)."""
    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body).encode(), headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        kind = resp.getheader("content-type") or ""
        return resp.status, resp.headers, json.loads(data) if kind.startswith("application/json") and data else data
    finally:
        conn.close()


def test_the_campaign_list_shows_the_cap_that_applies(server: Server, tmp_path: Path) -> None:
    admin = server.admin()
    capped = Spec.from_mechanism(pldp.KRR(1.0, 3), question="capped at 7,000?")
    made = admin.create_campaign(capped, cap=7000)
    (listed,) = [c for c in admin.campaigns() if c["id"] == capped.id]
    for entry in (made, listed):  # the collector's --campaign-cap 5,000 is the smaller: it applies
        assert (entry["cap"], entry["own_cap"]) == (5000, 7000)
    small = Spec.from_mechanism(pldp.KRR(1.0, 3), question="capped at 300?")
    assert (lambda e: (e["cap"], e["own_cap"]))(admin.create_campaign(small, cap=300)) == (300, 300)
    (plain,) = [c for c in admin.campaigns() if c["id"] == SPEC.id]
    assert (plain["cap"], plain["own_cap"]) == (5000, None)
    # pldp campaign create says which cap applies, and whose it is (the campaign exists: the same answer)
    spec_file = tmp_path / "capped.json"
    spec_file.write_text(capped.to_json())
    token = ("--token-file", str(server.token_file))
    shown = pldp_cmd("campaign", "create", "--server", server.url, *token, "--cap", "7000", str(spec_file))
    assert shown.returncode == 0, shown.stderr
    assert "cap:      5,000 reports (the collector's; its own: 7,000)" in shown.stdout.splitlines()


def _parameter(api: dict[str, Any], path: str, name: str) -> dict[str, Any]:
    (param,) = [p for p in api["paths"][path]["get"]["parameters"] if p["name"] == name]
    return dict(param["schema"])


def test_the_schema_states_what_the_server_refuses(server: Server) -> None:
    api = json.load(urllib.request.urlopen(f"{server.url}/openapi.json", timeout=30))
    base = "/v1/campaigns/{campaign_id}"
    analyst = server.admin().new_token("answers", [SPEC.id])["token"]
    # level: in (0, 1), both bounds excluded, as the server refuses them
    for path in (f"{base}/estimate", f"{base}/series"):
        level = _parameter(api, path, "level")
        assert (level["exclusiveMinimum"], level["exclusiveMaximum"]) == (0, 1)
        route = path.replace("{campaign_id}", SPEC.id)
        for value, status in ((0.0, 400), (1.0, 400), (0.5, 200)):
            assert _call(server, "GET", f"{route}?level={value}", token=analyst)[0] == status
    # day: a date, as the export parses it ('' and other forms are refused)
    day = _parameter(api, f"{base}/export", "day")
    assert day["format"] == "date" and day["pattern"] == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    export = f"/v1/campaigns/{SPEC.id}/export"
    assert _call(server, "GET", f"{export}?day=", token=analyst)[2]["error"] == "bad_day"
    assert _call(server, "GET", f"{export}?day=2026-01-02", token=analyst)[0] == 200
    # first after last: a relation JSON Schema cannot state; the parameters' descriptions do
    assert "not be after `last`" in _parameter(api, f"{base}/series", "first")["description"]
    assert "not before `first`" in _parameter(api, f"{base}/series", "last")["description"]
    status, _, body = _call(server, "GET", f"/v1/campaigns/{SPEC.id}/series?first=2&last=1", token=analyst)
    assert status == 400 and body["error"] == "bad_range"
    # expires_in and count: JSON Schema's integer admits 3600.0, and so does the server now
    assert api["components"]["schemas"]["TokenRequest"]["properties"]["expires_in"]["type"] == "integer"
    admin = server.admin()
    assert admin.new_token("whole float", [], expires_in=3600.0)["token"]  # type: ignore[arg-type]
    invited = Spec.from_mechanism(pldp.KRR(1.0, 3), question="codes by floats?")
    admin.create_invited_campaign(invited)
    asked = {"count": 2.0, "expires_in": 86400.0}
    status, _, body = _call(server, "POST", f"/v1/campaigns/{invited.id}/codes", asked, server.admin_token)
    assert status in (200, 201) and len(body["codes"]) == 2
    for bad in (1.5, "3600", True):  # a fraction, a string, a boolean: still refused
        with pytest.raises(RemoteError) as info:
            admin.new_token("bad", [], expires_in=bad)  # type: ignore[arg-type]
        assert info.value.status == 400 and info.value.code == "bad_request"


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", "/v1/campaigns", "GET, POST"),
        ("PUT", "/v1/health", "GET"),
        ("GET", f"/v1/campaigns/{SPEC.id}/reports", "POST"),
        ("DELETE", f"/v1/campaigns/{SPEC.id}/spec", "GET"),
        ("POST", "/static/pldp.css", "GET"),
        ("POST", f"/c/{SPEC.id}", "GET"),
    ],
)
def test_a_405_says_which_methods_the_path_takes(server: Server, method: str, path: str, allow: str) -> None:
    status, headers, body = _call(server, method, path, token=server.admin_token)
    assert status == 405 and headers["Allow"] == allow
    assert body["error"] == "method_not_allowed" and allow in body["reason"] and method in body["reason"]
