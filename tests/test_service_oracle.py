"""The payload oracle, closed (issue 33, item 1), against a real ``pldp serve`` process.

Anyone who knew a report's id could read its stored payload: a resend of the id with each
candidate payload was answered 200 ``duplicates: 1`` for the stored one and 409
``conflicting_report`` for the others, and an invited campaign's 409 ``code_used`` named the id of
the code's report. Now a resend of a stored id is acknowledged alike whatever payload it carries
(status, body and headers), stores nothing, and is counted in the campaign's ``conflicts``, by the
write that counts every resend (so that it takes as long to answer); no
refusal names a report id. Each test here failed on the code before the change.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.deploy.wire import REPORT_FORMAT
from tests.cli_run import pldp_cmd
from tests.deploy_cases import words
from tests.service_server import Server, stored_and_recount

D = 3  # KRR over three answers: every candidate payload of a report is one of 0, 1, 2


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    srv = Server(tmp_path_factory.mktemp("oracle") / "pldp.db").start()
    yield srv
    srv.stop()


def _post(server: Server, spec: Spec, body: Any, code: str | None = None) -> tuple[int, bytes, dict[str, str]]:
    """POST a body of reports on a fresh connection: the status, the body's bytes and the headers
    (without ``date``, the one that changes from answer to answer)."""
    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {code}"} if code else {})
    try:
        conn.request("POST", f"/v1/campaigns/{spec.id}/reports", body=json.dumps(body).encode(), headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, data, {k.lower(): v for k, v in resp.getheaders() if k.lower() != "date"}
    finally:
        conn.close()


def _probes(spec: Spec, report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's id with each candidate payload, the stored one among them."""
    return [{"format": REPORT_FORMAT, "spec": spec.id, "id": report["id"], "payload": p} for p in range(D)]


def _stored(server: Server, spec: Spec) -> list[tuple[str, Any]]:
    tally, recount = stored_and_recount(server.db, spec)
    assert tally == recount
    from pldp.service import store

    conn = store.connect(server.db, readonly=True)
    try:
        return [(r["id"], r["payload"]) for r in store.stored_batch(conn, spec).reports()]
    finally:
        conn.close()


def _counts(server: Server, spec: Spec) -> tuple[int, int]:
    """The campaign's resends of stored ids, and those of them with another payload."""
    (entry,) = [c for c in server.admin().campaigns() if c["id"] == spec.id]
    return int(entry["resends"]), int(entry["conflicts"])


def test_a_resend_from_an_address_answers_alike_for_every_payload(server: Server, tmp_path: Path) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, D), question="open probes?")
    server.admin().create_campaign(spec)
    report = Client(spec, words(1)).report(1)
    assert _post(server, spec, report)[0] == 200
    stored = _stored(server, spec)
    assert [rid for rid, _ in stored] == [report["id"]]

    answers = [_post(server, spec, probe) for probe in _probes(spec, report)]
    assert len(set(map(repr, answers))) == 1, answers  # status, body and headers: one answer for all
    status, body, headers = answers[0]
    assert status == 200 and json.loads(body) == {"accepted": 0, "duplicates": 1}
    assert headers["content-type"] == "application/json"
    assert _stored(server, spec) == stored  # nothing stored, nothing counted twice
    # the analyst sees the probes with another payload; every resend (the stored payload's too) is
    # counted by the same write, so that a conflict does not take longer to answer (a commit's sync)
    assert _counts(server, spec) == (D, D - 1)

    # within a batch with new reports too: the new are stored, the conflicting one is not
    fresh = Client(spec, words(2)).reports([0, 2]).to_json()
    wrong = next(p for p in _probes(spec, report) if p["payload"] != report["payload"])
    mixed = {**fresh, "reports": [*fresh["reports"], {"id": wrong["id"], "payload": wrong["payload"]}]}
    status, body, _ = _post(server, spec, mixed)
    assert status == 200 and json.loads(body) == {"accepted": 2, "duplicates": 1}
    assert sorted(_stored(server, spec)) == sorted(stored + [(r["id"], r["payload"]) for r in fresh["reports"]])
    assert _counts(server, spec) == (D + 1, D)
    # pldp campaign create (of the existing campaign) shows the count to the admin
    spec_file = tmp_path / "probed.json"
    spec_file.write_text(spec.to_json())
    shown = pldp_cmd(
        "campaign", "create", "--server", server.url, "--token-file", str(server.token_file), str(spec_file)
    )
    assert shown.returncode == 0, shown.stderr
    assert f"resends:  {D} of a stored report with another payload (not stored)" in shown.stdout.splitlines()


def test_a_used_invitation_link_answers_alike_for_every_payload(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, D), question="invited probes?")
    admin = server.admin()
    admin.create_invited_campaign(spec)
    used, fresh = admin.issue_codes(spec.id, 2)["codes"]
    report = Client(spec, words(3)).report(2)
    assert _post(server, spec, report, used)[0] == 200
    stored = _stored(server, spec)

    # the used link refuses another report, without naming the stored one's id
    status, body, _ = _post(server, spec, Client(spec, words(4)).report(0), used)
    assert status == 409 and json.loads(body)["error"] == "code_used"
    assert report["id"] not in body.decode() and report["id"][:8] not in body.decode()

    # the used link, then an unused one, resending the stored id with every payload: one answer
    for code in (used, fresh):
        answers = [_post(server, spec, probe, code) for probe in _probes(spec, report)]
        assert len(set(map(repr, answers))) == 1, answers
        assert answers[0][0] == 200 and json.loads(answers[0][1]) == {"accepted": 0, "duplicates": 1}
    assert _stored(server, spec) == stored
    assert _counts(server, spec) == (2 * D, 2 * (D - 1))
    # the unused code is still unused: its own report is taken
    mine = Client(spec, words(5)).report(0)
    assert _post(server, spec, mine, fresh)[:2] == (200, b'{"accepted":1,"duplicates":0}')


def test_no_refusal_names_a_report_id(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, D), question="ids in refusals?")
    server.admin().create_campaign(spec)
    batch = Client(spec, words(6)).reports([0, 1, 2]).to_json()
    twice = {**batch, "reports": [*batch["reports"], batch["reports"][0]]}
    status, body, _ = _post(server, spec, twice)
    assert status == 400 and json.loads(body)["error"] == "bad_report" and "report 3" in json.loads(body)["reason"]
    assert all(r["id"] not in body.decode() for r in batch["reports"])
    assert _stored(server, spec) == []
