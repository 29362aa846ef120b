"""The survey page over rounds, in a real headless Chromium against a real ``pldp serve`` and its
database file (issue 27, items 3 and 4): the report made for a round is kept in the browser and
sent again, unchanged, on a reload (the collector stores it once), the page says the respondent
answered already, a new round draws a new report, and the page shows what she has shared (the
browser's privacy ledger: campaigns, rounds, epsilon)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pldp
from pldp.deploy import Spec
from tests import browser as chrome
from tests.browser import answer, campaign, errors, js, new_device, ready, requests, shown, stored, wait
from tests.service_server import Server

server = pytest.fixture(scope="module")(chrome.serve)
browser = pytest.fixture(chrome.blank)


def _posts(driver: Any) -> list[dict[str, Any]]:
    return [r for r in requests(driver) if r["method"] == "POST"]


def _shared(driver: Any) -> dict[str, Any]:
    """The "what you have shared" section: shown, its items and its total's epsilon."""
    return js(
        driver,
        """
        const s = document.getElementById('shared');
        return {shown: !s.hidden, items: [...s.querySelectorAll('li')].map(li => li.textContent),
                total: s.querySelector('#shared-total')?.dataset.epsilon ?? null};
        """,
    )


def _reload_and_wait_for_the_notice(driver: Any, url: str) -> str:
    ready(driver, url)
    notice = wait(driver, shown("answered"), what="the already-answered notice")
    assert not driver.find_element("id", "answer-form").is_displayed()
    return str(notice.text)


@pytest.mark.slow
def test_a_reload_sends_the_kept_report_again_and_it_is_stored_once(browser: Any, server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Which OS?", labels=["linux", "mac", "windows"])
    _, analyst, _ = campaign(server, spec)
    url = f"{server.url}/c/{spec.id}"
    new_device(browser, server.url)
    ready(browser, url)
    assert _shared(browser)["shown"] is False  # nothing shared from this browser yet
    batch = answer(browser, "answer-0-1")
    (first,) = _posts(browser)
    assert first["url"] == f"{server.url}/v1/campaigns/{spec.id}/reports?round=1"
    shared = _shared(browser)
    assert shared["shown"] and shared["total"] == "1"
    assert shared["items"] == [
        "“Which OS?”: 1 report (round 1); privacy counted against the caps: ε = 1, ε = 1 of it today."
    ]

    for _ in range(2):  # reloads: the same report again, never a new draw
        said = _reload_and_wait_for_the_notice(browser, url)
        assert "answered this survey from this browser already" in said and "counts it once" in said
        (again,) = _posts(browser)
        assert again["postData"] == first["postData"]  # the same bytes: the same report id
        assert json.loads(browser.find_element("id", "answered-sent").get_attribute("textContent")) == batch
        assert js(browser, "return document.getElementById('survey').dataset.answered") == "sent-again"
        assert _shared(browser)["total"] == "1"  # sending it again spent nothing

    (report,) = batch["reports"]
    assert stored(server.db, spec.id) == [(report["id"], report["payload"])]  # the database holds it once
    assert analyst.estimate(spec.id)["n"] == 1
    assert errors(browser) == []

    # before this change, a reload drew a new report: another device does (no kept report)
    new_device(browser, server.url)
    ready(browser, url)
    assert browser.find_element("id", "answer-form").is_displayed()
    other = answer(browser, "answer-0-1")
    assert other["reports"][0]["id"] != report["id"] and len(stored(server.db, spec.id)) == 2


@pytest.mark.slow
def test_a_new_round_draws_a_new_report_and_the_ledger_lists_the_rounds(browser: Any, server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(0.5, 2), question="Slept well?", labels=["yes", "no"])
    admin = server.admin()
    admin.create_campaign(spec, rounds="manual")
    token = admin.create_token("resend", [spec.id])["token"]
    analyst = server.client(token)
    url = f"{server.url}/c/{spec.id}"
    new_device(browser, server.url)
    ready(browser, url)
    one = answer(browser, "answer-0-0")["reports"][0]
    said = _reload_and_wait_for_the_notice(browser, url)
    assert "round 1" in said and "next round" in said
    requests(browser)

    assert admin.open_round(spec.id)["round"] == 2
    ready(browser, url)  # round 2: a new report
    assert browser.find_element("id", "answer-form").is_displayed()
    assert not browser.find_element("id", "answered").is_displayed()
    two = answer(browser, "answer-0-1")["reports"][0]
    assert two["id"] != one["id"]
    (post,) = _posts(browser)
    assert post["url"].endswith("/reports?round=2")
    _reload_and_wait_for_the_notice(browser, url)

    assert sorted(stored(server.db, spec.id)) == sorted([(one["id"], one["payload"]), (two["id"], two["payload"])])
    assert [analyst.estimate(spec.id, round=r)["n"] for r in (1, 2)] == [1, 1]
    shared = _shared(browser)
    assert shared["total"] == "1"  # two reports at 0.5
    assert shared["items"] == [
        "“Slept well?”: 2 reports (rounds 1 and 2); privacy counted against the caps: ε = 1, ε = 1 of it today."
    ]
    assert errors(browser) == []


@pytest.mark.slow
def test_a_damaged_ledger_stops_the_page_from_randomizing(browser: Any, server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 2), question="Damaged?", labels=["yes", "no"])
    campaign(server, spec)
    url = f"{server.url}/c/{spec.id}"
    new_device(browser, server.url)
    ready(browser, url)
    js(browser, "localStorage.setItem('pldp-ledger', '{not json')")
    ready(browser, url)
    browser.find_element("css selector", 'label[for="answer-0-0"]').click()
    browser.find_element("id", "submit").click()
    error = wait(browser, shown("error"), what="the refusal")
    assert "could not be randomized" in error.text and "privacy ledger" in error.text
    assert _posts(browser) == [] and stored(server.db, spec.id) == []
