"""Credentials over time, against real collector processes: every token expires, a revoked analyst
token is refused from the next request on in every worker, the admin token is rotated (by a new
``--admin-token-file`` across a restart, or by ``pldp token rotate``) and the old one stops
working, ``GET /v1/tokens`` shows ids and never a secret, and the ``pldp token`` commands."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.deploy import Spec
from pldp.deploy.remote import RemoteError
from pldp.service import auth, store
from pldp.service.auth import new_token
from tests.cli_run import main_run
from tests.service_server import Server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    srv = Server(tmp_path_factory.mktemp("tokens") / "pldp.db", "--workers", "2").start()
    yield srv
    srv.stop()


def _status(server: Server, token: str | None, path: str = "/v1/campaigns") -> tuple[int, dict[str, Any]]:
    """GET ``path`` on a fresh connection (with --workers 2, fresh connections reach both workers)."""
    client = server.client(token)
    try:
        status, _, body = client.request("GET", path)
        return status, json.loads(body)
    except RemoteError as exc:
        return exc.status, {"error": exc.code, "reason": exc.reason}
    finally:
        client.close()


def _pldp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pldp.cli", *args], capture_output=True, text=True, timeout=60)


def test_a_revoked_analyst_token_is_refused_at_once_by_every_worker(server: Server) -> None:
    admin = server.admin()
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="revoked?")
    admin.create_campaign(spec)
    made = admin.new_token("soon revoked", [spec.id])
    token, token_id = made["token"], made["id"]
    assert [_status(server, token)[0] for _ in range(20)] == [200] * 20
    assert admin.revoke_token(token_id)["id"] == token_id
    after = [_status(server, token, f"/v1/campaigns/{spec.id}/estimate") for _ in range(20)]
    assert {s for s, _ in after} == {401}
    assert all(b["error"] == "unauthorized" and "revoked" in b["reason"] for _, b in after)
    listed = {t["id"]: t for t in admin.tokens()}
    assert listed[token_id]["state"] == "revoked" and listed[token_id]["revoked_at"] is not None
    assert admin.revoke_token(token_id)["revoked_at"] == listed[token_id]["revoked_at"]  # idempotent
    with pytest.raises(RemoteError) as info:
        admin.revoke_token("0" * 12)
    assert info.value.status == 404


def test_every_token_expires(server: Server) -> None:
    admin = server.admin()
    made = admin.new_token("short", [], expires_in=2)
    assert made["expires_at"] == pytest.approx(time.time() + 2, abs=1.5)
    assert _status(server, made["token"])[0] == 200
    time.sleep(max(0.0, made["expires_at"] - time.time()) + 0.2)
    status, body = _status(server, made["token"])
    assert status == 401 and "expired" in body["reason"]
    # the defaults: 90 days for an analyst, 365 for the admin of the token file
    tokens = {t["id"]: t for t in admin.tokens()}
    default = admin.new_token("default", [])
    assert default["expires_at"] == pytest.approx(time.time() + 90 * 86400, abs=60)
    admins = [t for t in admin.tokens() if t["role"] == "admin" and t["state"] == "active"]
    assert len(admins) == 1 and admins[0]["expires_at"] == pytest.approx(admins[0]["created_at"] + 365 * 86400)
    assert tokens[made["id"]]["state"] == "expired"
    for bad in (0, -5, 3651 * 86400, 1.5, "1d"):
        with pytest.raises(RemoteError) as info:
            admin.new_token("bad", [], expires_in=bad)  # type: ignore[arg-type]
        assert info.value.status == 400


def test_the_token_list_never_shows_a_secret(server: Server) -> None:
    admin = server.admin()
    secrets = [server.admin_token] + [admin.new_token(f"t{i}", [])["token"] for i in range(3)]
    status, _, raw = admin.request("GET", "/v1/tokens")
    text = raw.decode()
    assert status == 200
    for secret in secrets:
        digest = hashlib.sha256(secret.encode()).digest()
        assert secret not in text and digest.hex() not in text and digest.hex().upper() not in text
    rows = json.loads(text)
    assert all(
        set(r) == {"id", "role", "label", "campaigns", "created_at", "expires_at", "revoked_at", "state"} for r in rows
    )
    assert all(len(r["id"]) == 12 and r["id"] not in "".join(secrets) for r in rows)
    assert {"t0", "t1", "t2"} <= {r["label"] for r in rows}
    # an analyst may not list them, and an admin token is rotated, not revoked
    analyst = server.client(admin.new_token("reader", [])["token"])
    with pytest.raises(RemoteError) as info:
        analyst.tokens()
    assert info.value.status == 403
    (me,) = [r["id"] for r in rows if r["role"] == "admin" and r["state"] == "active"]
    with pytest.raises(RemoteError) as info:
        admin.revoke_token(me)
    assert info.value.status == 409 and "rotate" in info.value.reason


def test_the_admin_token_is_rotated_and_the_old_one_stops_working(tmp_path: Path) -> None:
    srv = Server(tmp_path / "rot.db")
    first = srv.admin_token
    with srv:
        # online: pldp token rotate writes the new token into the file and retires the old one
        done = _pldp("token", "rotate", "--server", srv.url, "--token-file", str(srv.token_file), "--expires", "30d")
        assert done.returncode == 0, done.stderr
        second = srv.token_file.read_text().strip()
        assert second != first and len(second) == 43 and second not in done.stdout + done.stderr
        assert srv.token_file.stat().st_mode & 0o077 == 0  # the owner's only
        assert (_status(srv, first)[0], _status(srv, second)[0]) == (401, 200)
        (active,) = [t for t in srv.client(second).tokens() if t["role"] == "admin" and t["state"] == "active"]
        assert active["expires_at"] == pytest.approx(time.time() + 30 * 86400, abs=60)
    # offline: a restart with a new admin token file (main: the old token still worked after it)
    srv.token_file.write_text(new_token())
    third = srv.admin_token = srv.token_file.read_text().strip()
    with srv:
        assert _status(srv, third)[0] == 200
        status, body = _status(srv, second)
        assert status == 401 and "revoked" in body["reason"]
        (active,) = [t for t in srv.admin().tokens() if t["role"] == "admin" and t["state"] == "active"]
        assert active["label"] == "admin (token file)"
        assert active["expires_at"] == pytest.approx(time.time() + 365 * 86400, abs=60)
    # an old token back in the file: refused at start, with one line saying why
    srv.token_file.write_text(first)
    with pytest.raises(RuntimeError, match="revoked") as info:
        srv.start()
    assert "pldp: error:" in str(info.value) and "Traceback" not in str(info.value)
    srv.token_file.write_text(third)
    with srv:
        assert (_status(srv, third)[0], _status(srv, first)[0]) == (200, 401)


def test_the_token_commands(server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The first command in a real pldp process, as a user runs it; the others through
    :func:`pldp.cli.main` in this process (the same code, without a Python start each)."""
    admin = str(server.token_file)
    spec = Spec.from_mechanism(pldp.KRR(0.5, 3), question="cli tokens?")
    server.admin().create_campaign(spec)
    made = _pldp(
        "token", "create", spec.id, "--label", "cli", "--expires", "12h", "--server", server.url, "--token-file", admin
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert len(token) == 43 and "shown once" in made.stderr
    assert _status(server, token, f"/v1/campaigns/{spec.id}/days")[0] == 200
    listed = main_run(capsys, "token", "list", "--json", "--server", server.url, "--token-file", admin)
    rows = json.loads(listed.stdout)
    (mine,) = [r for r in rows if r["label"] == "cli"]
    assert mine["campaigns"] == [spec.id] and mine["expires_at"] == pytest.approx(time.time() + 12 * 3600, abs=60)
    assert token not in listed.stdout
    revoked = main_run(capsys, "token", "revoke", mine["id"], "--server", server.url, "--token-file", admin)
    assert revoked.returncode == 0, revoked.stderr
    assert _status(server, token, f"/v1/campaigns/{spec.id}/days")[0] == 401
    again = main_run(capsys, "token", "list", "--server", server.url, "--token-file", admin)
    assert any(mine["id"] in line and "revoked" in line for line in again.stdout.splitlines())
    bad = main_run(capsys, "token", "create", "--expires", "5x", "--server", server.url, "--token-file", admin)
    assert bad.returncode == 2 and "--expires" in bad.stderr and "Traceback" not in bad.stderr
    fresh = main_run(capsys, "token", "new")
    assert fresh.returncode == 0 and len(fresh.stdout.strip()) == 43
    (tmp_path / "t").write_text(fresh.stdout)
    assert auth.read_token_file(tmp_path / "t") == fresh.stdout.strip()


def test_tokens_of_a_version_3_store_get_ids_and_expiries(tmp_path: Path) -> None:
    conn = store.connect(tmp_path / "v3.db")
    for statement in ";".join(store.MIGRATIONS[:3]).split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 3")
    for role in ("admin", "analyst"):
        conn.execute(
            "INSERT INTO tokens (hash, role, label, created_at) VALUES (?, ?, ?, 0)",
            (auth.token_hash(role * 9), role, role),
        )
    assert store.migrate(conn) == 3
    rows = {r.role: r for r in auth.tokens(conn)}
    assert len({r.id for r in rows.values()}) == 2 and all(len(r.id) == 12 for r in rows.values())
    for role, days in (("admin", 365), ("analyst", 90)):
        assert rows[role].expires_at == pytest.approx(time.time() + days * 86400, abs=60)
        found = auth.identify(conn, f"Bearer {role * 9}")
        assert found is not None and found.role == role
    conn.close()


def test_a_first_start_makes_a_new_admin_once_the_old_one_expired(tmp_path: Path) -> None:
    from pldp.service.server import bootstrap_admin
    from pldp.service.writer import Writer

    writer = Writer(tmp_path / "boot.db")
    try:
        first = bootstrap_admin(writer, None)
        assert first is not None and bootstrap_admin(writer, None) is None  # an admin exists: none made
        writer.conn.execute("UPDATE tokens SET expires_at = ?", (time.time() - 1,))
        second = bootstrap_admin(writer, None)  # the only admin expired: a new one, printed once
        assert second is not None and second != first
        assert auth.identify(writer.conn, f"Bearer {first}") is None
        found = auth.identify(writer.conn, f"Bearer {second}")
        assert found is not None and found.role == "admin"
        states = sorted(t.state(time.time()) for t in auth.tokens(writer.conn))
        assert states == ["active", "revoked"]  # the expired one was also revoked by the new admin
    finally:
        writer.close()
