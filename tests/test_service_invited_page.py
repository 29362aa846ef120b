"""The invited survey page in a real headless Chromium against a real ``pldp serve`` (issue 33, item
2d): a personal link opened again in the same tab (which changes only the address's fragment, and
loads no page) is read, and the page reloaded after sending says that she has answered, not that the
survey is by invitation, also where the browser keeps no localStorage. Both failed before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import pldp
from pldp.deploy import Spec
from tests import browser as chrome
from tests.browser import errors, js, requests, shown, stored, wait
from tests.service_server import Server

server = pytest.fixture(scope="module")(chrome.serve)

#: A browser that refuses the page localStorage (a policy, a full disk): sessionStorage still works.
NO_LOCAL_STORAGE = """
Object.defineProperty(window, "localStorage", {
  configurable: true,
  get() { throw new DOMException("localStorage is disabled", "SecurityError"); },
});
"""


@pytest.fixture
def browser(chromium: Any, server: Server) -> Iterator[Any]:
    driver = chrome.blank(chromium)
    chrome.new_device(driver, server.url)
    yield driver
    driver.get(f"{server.url}/v1/health")  # a page of the collector's origin: forget this tab's codes
    driver.execute_script("sessionStorage.clear()")


def _invited(server: Server, question: str) -> tuple[Spec, str, str]:
    """An invited campaign, the page's address and one code."""
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question=question, labels=["yes", "no", "maybe"])
    server.admin().create_invited_campaign(spec)
    (code,) = server.admin().issue_codes(spec.id, 1)["codes"]
    return spec, f"{server.url}/c/{spec.id}", code


def _notices(driver: Any) -> list[str]:
    return list(
        js(
            driver,
            "return ['answered', 'invitation', 'thanks', 'answer-form', 'error']"
            ".filter(id => !document.getElementById(id).hidden)",
        )
    )


def _answer(driver: Any) -> dict[str, Any]:
    return chrome.answer(driver, "answer-0-1")


@pytest.mark.slow
def test_a_link_opened_again_in_the_same_tab_is_read(browser: Any, server: Server) -> None:
    spec, page, code = _invited(server, "Reopened in the same tab?")
    browser.get(page)  # without a code: the page says how to answer
    wait(browser, shown("invitation"), what="the invitation notice")
    browser.get(f"{page}#code={code}")  # the link, in the same tab: only the fragment changes
    wait(browser, shown("answer-form"), what="the form, once the link's code is read")
    assert browser.current_url == page  # the code is out of the address bar again
    batch = _answer(browser)
    (report,) = batch["reports"]

    browser.get(f"{page}#code={code}")  # the link again, in the same tab, after answering
    notice = wait(browser, shown("answered"), what="the already-answered notice")
    assert "answered this survey from this browser already" in notice.text
    assert browser.current_url == page and _notices(browser) == ["answered"]
    posts = [r for r in requests(browser) if r["method"] == "POST"]
    assert [json.loads(p["postData"]) for p in posts][-1] == batch  # the kept report again, no new draw
    assert stored(server.db, spec.id) == [(report["id"], report["payload"])]
    assert errors(browser) == []


@pytest.mark.slow
def test_a_reload_after_sending_says_answered_without_local_storage(browser: Any, server: Server) -> None:
    spec, page, code = _invited(server, "Reloaded without localStorage?")
    script = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_LOCAL_STORAGE})
    try:
        browser.get(f"{page}#code={code}")
        wait(browser, shown("answer-form"), what="the form")
        assert js(browser, "try { localStorage.length; return false } catch { return true }")
        batch = _answer(browser)
        (report,) = batch["reports"]
        requests(browser)  # the answer's POST: drained from the log
        for _ in range(2):
            browser.refresh()
            notice = wait(browser, shown("answered"), what="the already-answered notice")
            assert "with your personal link" in notice.text and _notices(browser) == ["answered"]
            assert not [r for r in requests(browser) if r["method"] == "POST"]  # nothing sent again
        browser.get(f"{page}#code={code}")  # the link again in this tab: the report it sent, again
        notice = wait(browser, shown("answered"), what="the already-answered notice")
        assert "answered this survey from this browser already" in notice.text
        assert stored(server.db, spec.id) == [(report["id"], report["payload"])]
        assert [e for e in errors(browser) if "Failed to load resource" not in e] == []
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})
