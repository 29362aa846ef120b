"""The collector against a real server process on 127.0.0.1 with a real SQLite file.

Roles on every endpoint, bad input (a 4xx JSON error with a reason, nothing stored), idempotent
retries, the tally equal to a recount of the stored reports, the estimate equal to the library's
on the same reports, closing, the OpenAPI schema, and a restart on the same file.
"""

from __future__ import annotations

import base64
import io
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec, decode, spec_id
from pldp.deploy.remote import Collector, RemoteError
from pldp.service import store
from tests.service_server import Server, stored_and_recount
from tests.tolerances import SUM_RTOL

FIG1 = pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, np.inf])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    srv = Server(tmp_path_factory.mktemp("collector") / "pldp.db").start()
    yield srv
    srv.stop()


def _campaign(server: Server, spec: Spec) -> tuple[Collector, Collector]:
    """Create ``spec``'s campaign; an admin client and an analyst granted it."""
    admin = server.admin()
    admin.create_campaign(spec)
    token = admin.create_token("tests", [spec.id])["token"]
    return admin, server.client(token)


def test_reports_in_estimate_out_equal_to_the_library(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.IPRR(FIG1), question="fig1?")
    _, analyst = _campaign(server, spec)
    respondent = server.client()
    rng = np.random.default_rng(3)
    batches = [Client(spec).reports(rng.integers(0, 5, 2_000)) for _ in range(5)]
    for b in batches:
        assert respondent.submit(spec.id, b) == {"accepted": 2_000, "duplicates": 0}
    # a retried batch counts once
    assert respondent.submit(spec.id, batches[0]) == {"accepted": 0, "duplicates": 2_000}
    local = decode(spec, batches[0])
    for b in batches[1:]:
        local = local.merge(decode(spec, b))
    for method in ("unbiased", "norm_sub", "mle"):
        got = analyst.estimate(spec.id, method, 0.9)
        want = pldp.estimate(spec.mechanism(), local, method)
        lo, hi = want.ci(0.9)
        (part,) = got["attributes"]
        assert got["n"] == 10_000 and got["method"] == method and part["labels"] == spec.labels
        # the same closed forms (IPRR: inversion, projection, water-filling) on the same counts, through JSON
        np.testing.assert_allclose(part["frequencies"], want.frequencies, rtol=SUM_RTOL, atol=1e-15)
        np.testing.assert_allclose(part["ci_low"], lo, rtol=SUM_RTOL, atol=1e-15)
        np.testing.assert_allclose(part["ci_high"], hi, rtol=SUM_RTOL, atol=1e-15)
    stored, recount = stored_and_recount(server.db, spec)
    assert stored == recount == local
    # the export is the stored reports, in the wire format's Arrow schema
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(io.BytesIO(analyst.export(spec.id)))
    assert table.num_rows == 10_000 and decode(spec, table) == local


def _endpoints(cid: str, spec: Spec, batch: dict) -> list[tuple[str, str, bytes | None, set[str]]]:
    """(method, path, body, roles allowed) of every endpoint; 'anyone' includes no token."""
    return [
        ("GET", "/v1/health", None, {"anyone"}),
        ("POST", "/v1/campaigns", spec.to_json().encode(), {"admin"}),
        ("GET", "/v1/campaigns", None, {"admin", "analyst", "analyst-other"}),
        ("GET", f"/v1/campaigns/{cid}/spec", None, {"anyone"}),
        ("POST", f"/v1/campaigns/{cid}/reports", json.dumps(batch).encode(), {"anyone"}),
        ("GET", f"/v1/campaigns/{cid}/estimate", None, {"analyst"}),
        ("GET", f"/v1/campaigns/{cid}/export", None, {"analyst"}),
        ("GET", f"/v1/campaigns/{cid}/export?day=2026-01-01", None, {"analyst"}),
        ("GET", f"/v1/campaigns/{cid}/days", None, {"analyst"}),
        ("POST", "/v1/tokens", b'{"label": "x", "campaigns": []}', {"admin"}),
        ("GET", "/v1/tokens", None, {"admin"}),
        ("GET", f"/v1/campaigns/{cid}/codes", None, {"admin"}),
    ]


def test_every_endpoint_checks_its_role(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="roles?")
    admin, analyst = _campaign(server, spec)
    other_spec = Spec.from_mechanism(pldp.KRR(2.0, 3), question="roles?")
    admin.create_campaign(other_spec)
    callers = {
        "none": server.client(),
        "bad": server.client("x" * 43),
        "admin": admin,
        "analyst": analyst,
        "analyst-other": server.client(admin.create_token("other", [other_spec.id])["token"]),
    }
    batch = Client(spec).reports([0, 1, 2]).to_json()
    seen = 0
    for method, path, body, allowed in _endpoints(spec.id, spec, batch):
        for name, caller in callers.items():
            if name == "bad" and path != "/v1/health":
                want = {401}  # an invalid token is refused everywhere but the liveness probe
            elif "anyone" in allowed or name in allowed:
                want = {200, 201}
            else:
                want = {401} if name == "none" else {403}
            try:
                status = caller.request(method, path, body)[0]
                err = None
            except RemoteError as exc:
                status, err = exc.status, exc
            assert status in want, f"{method} {path} as {name}: {status} ({err}), expected {want}"
            if err is not None:
                assert err.code in ("unauthorized", "forbidden") and err.reason
            seen += 1
            if path.endswith("/reports") and status == 200:
                batch = Client(spec).reports([0, 1, 2]).to_json()  # fresh ids for the next caller
                body = json.dumps(batch).encode()
    # close last: only the admin may
    for name in ("none", "bad", "analyst"):
        with pytest.raises(RemoteError) as info:
            callers[name].close_campaign(spec.id)
        assert info.value.status == (403 if name == "analyst" else 401)
    assert admin.close_campaign(spec.id)["closed"]
    assert seen == 12 * 5


def _raw_post(url: str, path: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, json.loads(data)


def test_bad_input_gets_a_4xx_with_a_reason_and_changes_nothing(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.OUE(1.0, 5), question="bad input?")
    admin, _ = _campaign(server, spec)
    path = f"/v1/campaigns/{spec.id}/reports"
    good = Client(spec).reports([0, 1, 2, 3])
    assert server.client().submit(spec.id, good)["accepted"] == 4
    before = stored_and_recount(server.db, spec)[0]

    def batch(mutate) -> bytes:
        data = Client(spec).reports([0, 1, 2, 3]).to_json()
        mutate(data)
        return json.dumps(data).encode()

    def set_payload(data: dict, value: object) -> None:
        data["reports"][2]["payload"] = value

    cases = [
        (b"{not json", 400, "malformed_json", "not JSON"),
        (batch(lambda d: d.update(spec="0" * 32)), 400, "bad_report", "names spec"),
        (batch(lambda d: set_payload(d, "AAA=")), 400, "bad_report", "report 2"),  # two bytes for 5 bits
        (batch(lambda d: set_payload(d, base64.b64encode(b"\xff").decode())), 400, "bad_report", "report 2"),
        (batch(lambda d: set_payload(d, "!!")), 400, "bad_report", "report 2"),
        (batch(lambda d: set_payload(d, 3)), 400, "bad_report", "report 2"),
        (batch(lambda d: d["reports"][3].update(id=d["reports"][1]["id"])), 400, "bad_report", "duplicate"),
        (batch(lambda d: d["reports"][1].update(id="XYZ")), 400, "bad_report", "32 lower-case hex"),
        (batch(lambda d: d.update(format="pldp.batch/9")), 400, "bad_report", ""),
        (batch(lambda d: d["reports"].clear()), 400, "bad_report", "no reports"),
    ]
    for body, status, code, words in cases:
        got_status, err = _raw_post(server.url, path, body)
        assert got_status == status and err["error"] == code and words in err["reason"], (got_status, err)
    # bounds: body size and report count
    big = b"[" + b" " * (9 * 2**20) + b"]"
    assert _raw_post(server.url, path, big)[0] == 413
    many = json.dumps(Client(spec).reports(np.zeros(10_001, dtype=int)).to_json()).encode()
    status, err = _raw_post(server.url, path, many)
    assert status == 413 and err["error"] == "too_many_reports"
    # unknown campaign
    status, err = _raw_post(server.url, "/v1/campaigns/" + "0" * 32 + "/reports", json.dumps(good.to_json()).encode())
    assert status == 404 and err["error"] == "unknown_campaign"
    stored, recount = stored_and_recount(server.db, spec)
    assert stored == before == recount  # nothing of any refused batch was stored or counted
    # closed
    admin.close_campaign(spec.id)
    status, err = _raw_post(server.url, path, batch(lambda d: None))
    assert status == 409 and err["error"] == "campaign_closed"


def test_a_spec_whose_claim_fails_is_refused(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="forged?")
    data = spec.to_dict()
    data["sampler"]["root"]["keep"] += 3000
    data["sampler"]["root"]["weights"] = [w - 1000 for w in data["sampler"]["root"]["weights"]]
    from pldp.deploy import spec_id

    data["id"] = spec_id(data)
    with pytest.raises(RemoteError) as info:
        server.admin().create_campaign(json.dumps(data))
    assert info.value.status == 400 and info.value.code == "bad_spec" and "privacy claim fails" in info.value.reason


def test_a_range_form_spec_round_trips_through_the_collector(server: Server) -> None:
    """``"labels": {"range": d}``: stored and served as posted (the same id), reports of answers given
    as integers or their strings decoded to the library's tally, the estimate's labels the integers;
    a range that is not the sampler's count is refused."""
    spec = Spec.from_mechanism(pldp.OLH(1.0, 1_000), question="range?", labels="range")
    _, analyst = _campaign(server, spec)
    served = analyst.spec(spec.id)
    assert served == spec and served.to_dict()["labels"] == {"range": 1_000}
    batch = Client(served).reports([str(v) for v in range(0, 1_000, 7)] + list(range(500)))
    assert server.client().submit(spec.id, batch) == {"accepted": 643, "duplicates": 0}
    stored, recount = stored_and_recount(server.db, spec)
    assert stored == recount == decode(spec, batch)
    part = analyst.estimate(spec.id, "unbiased")["attributes"][0]
    assert part["labels"] == [str(i) for i in range(1_000)]
    wrong = spec.to_dict()
    wrong["labels"] = {"range": 999}
    wrong["id"] = spec_id(wrong)
    with pytest.raises(RemoteError) as info:
        server.admin().create_campaign(json.dumps(wrong))
    assert info.value.status == 400 and "labels has 999 answers but the sampler takes 1000" in info.value.reason


def test_a_hashed_form_spec_round_trips_through_the_collector(server: Server) -> None:
    """``"labels": {"hashed": d, ...}``: stored and served as posted, reports of free-text answers
    decoded to the library's tally, the estimate per bucket (labelled by the buckets' numbers),
    the buckets named by candidates; another hash is refused, naming the member."""
    from pldp.deploy.labels import bucket_names, text_bucket

    spec = Spec.from_mechanism(pldp.OLH(1.0, 1_000), question="a word?", labels="hashed")
    _, analyst = _campaign(server, spec)
    served = analyst.spec(spec.id)
    assert served == spec and served.to_dict()["labels"]["hashed"] == 1_000
    batch = Client(served).reports(["café", "cafe\u0301 ", "tea"] * 100)
    assert server.client().submit(spec.id, batch) == {"accepted": 300, "duplicates": 0}
    stored, recount = stored_and_recount(server.db, spec)
    assert stored == recount == decode(spec, batch)
    part = analyst.estimate(spec.id, "unbiased")["attributes"][0]
    assert part["labels"] == [str(i) for i in range(1_000)]
    assert bucket_names(served.labels, ["café", "tea"]) == {
        b: [w] for w, b in sorted(((w, text_bucket(w, 1_000)) for w in ("café", "tea")), key=lambda p: p[1])
    }
    wrong = spec.to_dict()
    wrong["labels"]["hash"] = "xxh64"
    wrong["id"] = spec_id(wrong)
    with pytest.raises(RemoteError) as info:
        server.admin().create_campaign(json.dumps(wrong))
    assert info.value.status == 400 and "labels.hash must be 'xxh32'" in info.value.reason


def test_spec_has_its_id_as_etag_and_the_schema_is_served(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.5, 3), question="etag?")
    server.admin().create_campaign(spec)
    c = server.client()
    status, headers, body = c.request("GET", f"/v1/campaigns/{spec.id}/spec")
    assert status == 200
    assert headers["etag"] == f'"{spec.id}"' and Spec.from_json(body.decode()).id == spec.id
    schema = json.loads(c.request("GET", "/openapi.json")[2])
    paths = set(schema["paths"])
    assert {
        "/v1/campaigns",
        "/v1/campaigns/{campaign_id}/reports",
        "/v1/campaigns/{campaign_id}/estimate",
        "/v1/campaigns/{campaign_id}/export",
        "/v1/campaigns/{campaign_id}/close",
        "/v1/tokens",
    } <= paths
    bodies = {  # typed bodies (tests/test_service_api.py checks the schema in depth)
        path: op["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if method == "post" and "requestBody" in op
    }
    assert bodies == {
        "/v1/campaigns": "CampaignSpec",
        "/v1/campaigns/{campaign_id}/reports": "ReportsBody",
        "/v1/campaigns/{campaign_id}/codes": "CodesRequest",
        "/v1/tokens": "TokenRequest",
        "/v1/tokens/rotate": "RotateRequest",
    }
    assert all("422" not in op["responses"] for item in schema["paths"].values() for op in item.values())
    # FastAPI's documentation pages would load scripts from a CDN: /docs is the collector's own
    # page (tests/test_service_pages.py), which loads nothing from elsewhere; /redoc is a 404
    page = c.request("GET", "/docs")[2]
    assert b"<title>HTTP API</title>" in page and not any(w in page for w in (b"http://", b"https://", b"cdn"))
    with pytest.raises(RemoteError) as info:
        c.request("GET", "/redoc")
    assert info.value.status == 404


def test_a_restart_on_the_same_file_keeps_everything(tmp_path: Path) -> None:
    db = tmp_path / "restart.db"
    spec = Spec.from_mechanism(pldp.protocols.FEBSF([0.5, 1.0, 2.0], 0.5, 6, "rappor"), question="levels?")
    rng = np.random.default_rng(9)
    with Server(db) as srv:
        _, analyst = _campaign(srv, spec)
        b = Client(spec).reports(rng.integers(0, 6, 3_000), level=rng.integers(0, 3, 3_000))
        srv.client().submit(spec.id, b)
        first = analyst.estimate(spec.id, "mle")
        token = analyst.token
    with Server(db) as srv:
        again = srv.client(token).estimate(spec.id, "mle")
        assert again == first
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
            assert conn.execute("SELECT COUNT(*) FROM tokens WHERE role = 'admin'").fetchone()[0] == 1


def test_the_campaign_commands_drive_a_running_collector(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first command in a real pldp process, as a user runs it; the others through
    :func:`pldp.cli.main` in this process (the same code, without a Python start each)."""
    import subprocess
    import sys

    from tests.cli_run import main_run

    def pldp_cli(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "pldp.cli", "campaign", *args, "--server", server.url]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)

    def in_process(*args: str) -> subprocess.CompletedProcess[str]:
        return main_run(capsys, "campaign", *args, "--server", server.url)

    spec = Spec.from_mechanism(pldp.URR(1.0, np.array([True, True, False])), question="cli?", labels=["x", "y", "z"])
    (tmp_path / "spec.json").write_text(spec.to_json())
    admin = str(server.token_file)
    made = pldp_cli("create", str(tmp_path / "spec.json"), "--token-file", admin)
    assert made.returncode == 0 and made.stdout.splitlines()[0] == f"campaign: {spec.id}", made.stderr
    tok = in_process("token", spec.id, "--label", "cli", "--token-file", admin)
    assert tok.returncode == 0, tok.stderr
    (tmp_path / "analyst.token").write_text(tok.stdout.strip())
    analyst = str(tmp_path / "analyst.token")
    server.client().submit(spec.id, Client(spec).reports(["x", "y", "z", "z"] * 50))
    listed = in_process("list", "--token-file", analyst)
    assert listed.returncode == 0 and spec.id in listed.stdout and "n=200" in listed.stdout
    est = in_process("estimate", spec.id, "--json", "--token-file", analyst)
    assert est.returncode == 0 and json.loads(est.stdout)["n"] == 200
    table = in_process("estimate", spec.id, "--method", "norm_sub", "--token-file", analyst)
    assert table.returncode == 0 and "n = 200" in table.stdout and "[" in table.stdout
    exported = in_process("export", spec.id, "--out", str(tmp_path / "r.parquet"), "--token-file", analyst)
    assert exported.returncode == 0
    pq = pytest.importorskip("pyarrow.parquet")
    assert decode(spec, pq.read_table(tmp_path / "r.parquet")).n == 200
    # one file per day into the report files' layout; a second export there is refused
    by_day = in_process("export", spec.id, "--out-dir", str(tmp_path / "files"), "--token-file", analyst)
    assert by_day.returncode == 0, by_day.stderr
    (path,) = [Path(line) for line in by_day.stdout.split()]
    sid = server.client(tmp_path.joinpath("analyst.token").read_text().strip()).days(spec.id)["store"]
    assert path.parent.parent.name == f"spec={spec.id}" and path.name == f"{sid}-day.parquet"
    assert decode(spec, pq.read_table(path)).n == 200
    again = in_process("export", spec.id, "--out-dir", str(tmp_path / "files"), "--token-file", analyst)
    assert again.returncode == 1 and "refusing to overwrite" in again.stderr
    refused = in_process("close", spec.id, "--token-file", analyst)  # an analyst may not close
    assert refused.returncode == 1 and "403" in refused.stderr
    closed = in_process("close", spec.id, "--token-file", admin)
    assert closed.returncode == 0 and closed.stdout.startswith(f"campaign {spec.id} closed at "), closed.stderr


def test_the_schema_migrates_forward_and_a_newer_file_is_refused(tmp_path: Path) -> None:
    conn = store.connect(tmp_path / "s.db")
    assert store.migrate(conn) == 0  # a new file: every migration ran
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"campaigns", "tokens", "grants", "reports", "tallies", "exports", "retention", "settings"} <= tables
    assert len(store.store_id(conn)) == 16
    assert store.migrate(conn) == store.SCHEMA_VERSION  # already current: nothing to do
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL: a commit is on disk when it returns
    conn.execute(f"PRAGMA user_version = {store.SCHEMA_VERSION + 1}")
    with pytest.raises(store.SchemaError, match="reads up to"):
        store.migrate(conn)
    conn.close()
