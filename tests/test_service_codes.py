"""Invited campaigns against a real collector with two worker processes: nothing is stored without a
valid respondent code, a code sends one report (a retry of it is acknowledged once, another report
is refused and stores nothing, even when both race to two workers), expired and revoked codes are
refused, a SIGKILL loses no acknowledged report and leaves every stored report with exactly one
code's use, the ``pldp campaign invite|codes|revoke-codes`` commands, and the survey page opened
from a code's link in Chromium."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.deploy.remote import Collector, RemoteError
from pldp.service import auth, store
from tests import browser as chrome
from tests.cli_run import main_run
from tests.deploy_cases import words
from tests.service_server import Server, stored_and_recount, wait_until


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    srv = Server(tmp_path_factory.mktemp("codes") / "pldp.db", "--workers", "2").start()
    yield srv
    srv.stop()


def _invited(server: Server, question: str, d: int = 3) -> Spec:
    spec = Spec.from_mechanism(pldp.KRR(1.0, d), question=question)
    assert server.admin().create_invited_campaign(spec)["access"] == "invited"
    return spec


def _send(server: Server, spec: Spec, report: Any, code: str | None) -> tuple[int, dict[str, Any]]:
    """Submit on a fresh connection (so that requests reach both workers); the status and answer."""
    client = Collector(server.url, code)
    try:
        return 200, client.submit(spec.id, report)
    except RemoteError as exc:
        return exc.status, {"error": exc.code, "reason": exc.reason}
    finally:
        client.close()


def _stored(server: Server, spec: Spec) -> list[str]:
    """The ids of the campaign's stored reports, after checking the tally equals their recount."""
    tally, recount = stored_and_recount(server.db, spec)
    assert tally == recount
    conn = store.connect(server.db, readonly=True)
    try:
        return [r["id"] for r in store.stored_batch(conn, spec).reports()]
    finally:
        conn.close()


def _uses(server: Server, spec: Spec) -> dict[str, str]:
    """Code hash (hex) -> the id of the report it sent, of the campaign."""
    conn = store.connect(server.db, readonly=True)
    try:
        rows = conn.execute(
            "SELECT u.code_hash, u.report_id FROM code_uses u JOIN codes c ON c.hash = u.code_hash "
            "JOIN campaigns k ON k.key = c.campaign_key WHERE k.id = ? AND u.round = 1",
            (spec.id,),
        ).fetchall()
        return {bytes(h).hex(): bytes(r).hex() for h, r in rows}
    finally:
        conn.close()


def test_an_invited_campaign_stores_nothing_without_a_valid_code(server: Server) -> None:
    spec = _invited(server, "invited only?")
    admin = server.admin()
    analyst = admin.new_token("reader", [spec.id])["token"]
    report = Client(spec, words(1)).report(0)
    tried = [
        _send(server, spec, report, None),
        _send(server, spec, report, "x" * 24),
        _send(server, spec, report, analyst),
        _send(server, spec, report, server.admin_token),
    ]
    assert [(s, a["error"]) for s, a in tried] == [
        (401, "code_required"),
        (401, "unknown_code"),
        (403, "forbidden"),
        (403, "forbidden"),
    ]
    assert "#code=" in tried[0][1]["reason"]
    # a code of another invited campaign is not one of this campaign's
    other = _invited(server, "another?")
    (foreign,) = admin.issue_codes(other.id, 1)["codes"]
    assert _send(server, spec, report, foreign)[1]["error"] == "unknown_code"
    # a code sends exactly one report
    (code,) = admin.issue_codes(spec.id, 1)["codes"]
    two = Client(spec, words(2)).reports([0, 1])
    assert _send(server, spec, two, code)[0] == 400
    assert _stored(server, spec) == [] and _uses(server, spec) == {}
    # an open campaign needs no code, and still refuses an unknown bearer token
    open_spec = Spec.from_mechanism(pldp.KRR(2.0, 3), question="open?")
    assert admin.create_campaign(open_spec)["access"] == "open"
    assert _send(server, open_spec, Client(open_spec).report(1), None)[0] == 200
    assert _send(server, open_spec, Client(open_spec).report(1), code)[1]["error"] == "unauthorized"
    # a campaign's access is set once
    with pytest.raises(RemoteError) as info:
        admin.create_campaign(spec)
    assert info.value.status == 409
    assert admin.create_invited_campaign(spec)["access"] == "invited"  # the same again: 200
    with pytest.raises(RemoteError) as info:
        admin.issue_codes(open_spec.id, 1)
    assert info.value.status == 409 and info.value.code == "campaign_open"


def test_a_code_sends_one_report_and_its_retries_count_once(server: Server) -> None:
    spec = _invited(server, "one each?")
    admin = server.admin()
    codes = admin.issue_codes(spec.id, 3)["codes"]
    first = Client(spec, words(3)).report(1)
    assert _send(server, spec, first, codes[0]) == (200, {"accepted": 1, "duplicates": 0})
    retries = [_send(server, spec, first, codes[0]) for _ in range(8)]
    assert retries == [(200, {"accepted": 0, "duplicates": 1})] * 8
    second = Client(spec, words(4)).report(2)
    status, answer = _send(server, spec, second, codes[0])
    assert status == 409 and answer["error"] == "code_used" and first["id"] not in answer["reason"]
    assert _stored(server, spec) == [first["id"]]
    assert _uses(server, spec) == {auth.token_hash(codes[0]).hex(): first["id"]}

    # different reports with one code, at once, through both workers: exactly one is stored
    reports = [Client(spec, words(10 + i)).report(i % 3) for i in range(8)]
    barrier = threading.Barrier(len(reports))

    def race(report: Any) -> tuple[int, dict[str, Any]]:
        barrier.wait()
        return _send(server, spec, report, codes[1])

    with ThreadPoolExecutor(len(reports)) as pool:
        answers = list(pool.map(race, reports))
    won = [r["id"] for r, (s, _) in zip(reports, answers, strict=True) if s == 200]
    assert len(won) == 1 and sorted(s for s, _ in answers) == [200] + [409] * 7
    assert sorted(_stored(server, spec)) == sorted([first["id"], won[0]])
    assert _uses(server, spec)[auth.token_hash(codes[1]).hex()] == won[0]
    counts = admin.code_counts(spec.id)
    assert (counts["issued"], counts["used"], counts["usable"]) == (3, 2, 1)


def test_expired_and_revoked_codes_are_refused(server: Server) -> None:
    spec = _invited(server, "expired?")
    admin = server.admin()
    short = admin.issue_codes(spec.id, 2, expires_in=1)
    lasting = admin.issue_codes(spec.id, 4)["codes"]
    used = Client(spec, words(20)).report(0)
    assert _send(server, spec, used, short["codes"][1])[0] == 200  # used before it expires
    time.sleep(max(0.0, short["expires_at"] - time.time()) + 0.2)
    status, answer = _send(server, spec, Client(spec, words(21)).report(1), short["codes"][0])
    assert status == 401 and answer["error"] == "code_expired"
    # the report it sent in time is still acknowledged when retried, and counted once
    assert _send(server, spec, used, short["codes"][1]) == (200, {"accepted": 0, "duplicates": 1})

    assert admin.revoke_codes(spec.id, [lasting[0], "not-a-code"]) == {"revoked": 1, "unknown": 1}
    status, answer = _send(server, spec, Client(spec, words(22)).report(2), lasting[0])
    assert status == 401 and answer["error"] == "code_revoked"
    kept = Client(spec, words(23)).report(2)
    assert _send(server, spec, kept, lasting[1])[0] == 200
    assert admin.code_counts(spec.id)["expired"] == 1
    assert admin.revoke_codes(spec.id) == {"revoked": 3, "unknown": 0}  # the unused: lasting[2:], short's expired one
    assert [_send(server, spec, Client(spec, words(24)).report(0), c)[1]["error"] for c in lasting[2:]] == [
        "code_revoked"
    ] * 2
    assert admin.revoke_codes(spec.id, [lasting[1]]) == {"revoked": 1, "unknown": 0}  # a used one
    assert _send(server, spec, kept, lasting[1]) == (200, {"accepted": 0, "duplicates": 1})  # still stored
    assert sorted(_stored(server, spec)) == sorted([used["id"], kept["id"]])
    counts = admin.code_counts(spec.id)
    assert counts == {"campaign": spec.id, "issued": 6, "used": 2, "revoked": 5, "expired": 0, "usable": 0}


@pytest.mark.slow
def test_a_sigkill_loses_no_report_and_no_use_of_a_code(tmp_path: Path) -> None:
    """Four clients send coded single reports while the collector (two workers) is killed;
    every report acknowledged is stored, every stored report has exactly one code's use and every
    use its report, and a report resent after the kill with its code is never refused."""
    srv = Server(tmp_path / "kill.db", "--workers", "2").start()
    try:
        spec = _invited(srv, "killed?", 5)
        codes = srv.admin().issue_codes(spec.id, 600)["codes"]
        rng = np.random.default_rng(11)
        reports = [Client(spec, words(100 + i)).report(int(rng.integers(0, 5))) for i in range(len(codes))]
        acked: set[int] = set()
        refused: list[tuple[int, Any]] = []
        for last in (False, True):
            todo = [i for i in range(len(codes)) if i not in acked]

            def send(part: list[int]) -> None:
                client = Collector(srv.url, timeout=10)
                for i in part:
                    client.token = codes[i]
                    try:
                        client.submit(spec.id, reports[i])
                        acked.add(i)
                    except RemoteError as exc:
                        refused.append((i, exc))
                    except OSError:  # the server is gone: the report is not acknowledged
                        return

            threads = [threading.Thread(target=send, args=(todo[k::4],)) for k in range(4)]
            for t in threads:
                t.start()
            if not last:  # killed mid-stream, a third of the way
                wait_until(lambda: len(acked) >= len(codes) // 3, why="a third of the reports acknowledged")
                srv.kill()
            for t in threads:
                t.join(60)
            if not last:
                assert len(codes) // 3 <= len(acked) < len(codes)
                srv.start()
        assert refused == []  # a resent report (same id, same code) is acknowledged, never a 409
        assert acked == set(range(len(codes)))
        stored = _stored(srv, spec)
        assert sorted(stored) == sorted(r["id"] for r in reports)
        assert _uses(srv, spec) == {auth.token_hash(c).hex(): r["id"] for c, r in zip(codes, reports, strict=True)}
    finally:
        srv.stop()


def _pldp(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pldp.cli", "campaign", *args, "--server", server.url]
    cmd += ["--token-file", str(server.token_file)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def _in_process(capsys: pytest.CaptureFixture[str], server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    """:func:`_pldp` through :func:`pldp.cli.main` in this process (no Python start and import each)."""
    return main_run(capsys, "campaign", *args, "--server", server.url, "--token-file", str(server.token_file))


def test_the_invitation_commands(server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The first command in a real pldp process, as a user runs it; the others in this process."""
    spec = Spec.from_mechanism(pldp.KRR(1.0, 4), question="cli invited?")
    (tmp_path / "spec.json").write_text(spec.to_json())
    made = _pldp(server, "create", str(tmp_path / "spec.json"), "--invited", "--json")
    assert made.returncode == 0 and json.loads(made.stdout)["access"] == "invited", made.stderr
    out = tmp_path / "codes.csv"
    issued = _in_process(capsys, server, "invite", spec.id, "--count", "5", "--out", str(out), "--expires", "7d")
    assert issued.returncode == 0, issued.stderr
    assert out.stat().st_mode & 0o077 == 0  # the owner's only: the codes are secrets
    with open(out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 5 and all(set(r) == {"code", "link"} for r in rows)
    assert all(r["link"] == f"{server.url}/c/{spec.id}#code={r['code']}" for r in rows)
    assert len({r["code"] for r in rows}) == 5 and all(len(r["code"]) == 24 for r in rows)
    assert _send(server, spec, Client(spec).report(3), rows[0]["code"])[0] == 200
    counted = _in_process(capsys, server, "codes", spec.id)
    assert counted.returncode == 0 and "issued=5 used=1 usable=4 expired=0 revoked=0" in counted.stdout
    assert server.admin().revoke_codes(spec.id, [rows[1]["code"]]) == {"revoked": 1, "unknown": 0}
    rest = _in_process(capsys, server, "revoke-codes", spec.id, "--unused")
    assert rest.returncode == 0 and "3 codes revoked" in rest.stderr
    from_file = _in_process(capsys, server, "revoke-codes", spec.id, "--file", str(out))
    assert from_file.returncode == 0 and "1 codes revoked, 0 not codes" in from_file.stderr  # the used one
    again = _in_process(capsys, server, "invite", spec.id, "--count", "5", "--out", str(out))
    assert again.returncode == 2 and "pldp: error:" in again.stderr and "exists" in again.stderr
    assert server.admin().code_counts(spec.id)["issued"] == 5  # refused before asking the collector
    assert server.admin().code_counts(spec.id)["usable"] == 0
    server.admin().close_campaign(spec.id)
    late = _in_process(capsys, server, "invite", spec.id, "--count", "1", "--out", str(tmp_path / "late.csv"))
    assert late.returncode == 1 and "409" in late.stderr and not (tmp_path / "late.csv").exists()


def test_the_survey_page_sends_the_code_of_its_link(chromium: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    browser = chrome.blank(chromium)
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Invited to answer?", labels=["yes", "no", "maybe"])
    server.admin().create_invited_campaign(spec)
    issued = server.admin().issue_codes(spec.id, 2)
    code = issued["codes"][0]
    page = f"{server.url}/c/{spec.id}"
    chrome.ready(browser, f"{page}#code={code}")
    assert browser.current_url == page  # the code is out of the address bar (and the history)
    browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0-1"]').click()
    browser.find_element(By.ID, "submit").click()
    chrome.wait(browser, chrome.shown("thanks"), what="the thanks")
    sent = json.loads(browser.find_element(By.ID, "sent").get_attribute("textContent"))
    (report,) = sent["reports"]
    assert _stored(server, spec) == [report["id"]]
    assert _uses(server, spec) == {auth.token_hash(code).hex(): report["id"]}
    posts = [r for r in chrome.requests(browser) if r["method"] == "POST"]
    assert (
        len(posts) == 1 and {k.lower(): v for k, v in posts[0]["headers"].items()}["authorization"] == f"Bearer {code}"
    )
    assert all(code not in r["url"] for r in chrome.requests(browser) + posts)
    # the page reloaded after answering (the link's code forgotten once taken): she has answered
    browser.refresh()
    answered = chrome.wait(browser, chrome.shown("answered"), what="the already-answered notice")
    assert "You have already answered" in answered.text and "with your personal link" in answered.text
    assert not browser.find_element(By.ID, "invitation").is_displayed() and "open that link" not in answered.text
    assert not [r for r in chrome.requests(browser) if r["method"] == "POST"]  # nothing sent again

    def refused(link: str) -> str:
        browser.get("about:blank")  # a new page: from the survey itself, the link would change the fragment only
        chrome.ready(browser, link)
        browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0-0"]').click()
        browser.find_element(By.ID, "submit").click()
        return str(chrome.wait(browser, chrome.shown("error"), what="the refusal").text)

    # the same link again in this browser: its kept report is sent again (counted once), no new draw
    browser.get("about:blank")
    chrome.ready(browser, f"{page}#code={code}")
    again = chrome.wait(browser, chrome.shown("answered"), what="the already-answered notice")
    assert "answered this survey from this browser already" in again.text
    assert _stored(server, spec) == [report["id"]]
    chrome.new_device(browser, server.url)  # the same link on another device: a second answer, refused
    browser.execute_script("sessionStorage.clear()")  # (nor has another device this tab's note of what it sent)
    assert "used already" in refused(f"{page}#code={code}")
    assert "not one of this survey's" in refused(f"{page}#code={'z' * 24}")
    short = server.admin().issue_codes(spec.id, 1, expires_in=1)
    time.sleep(max(0.0, short["expires_at"] - time.time()) + 0.2)
    assert "expired" in refused(f"{page}#code={short['codes'][0]}")
    server.admin().revoke_codes(spec.id, [issued["codes"][1]])
    assert "withdrawn" in refused(f"{page}#code={issued['codes'][1]}")
    # without a code (a fresh tab): the page says how to answer, and shows no form
    browser.execute_script("sessionStorage.clear()")
    browser.get(page)
    notice = chrome.wait(browser, chrome.shown("invitation"), what="the invitation notice")
    assert "personal link" in notice.text and not browser.find_element(By.ID, "answer-form").is_displayed()
    assert _stored(server, spec) == [report["id"]]
    # no script error, no content-security violation (the refusals' statuses are logged as such)
    assert [e for e in chrome.errors(browser) if "Failed to load resource" not in e] == []
