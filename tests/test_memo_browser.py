"""The browser client's memo store: a real headless Chromium keeps a memoized spec's permanent
randomized responses in IndexedDB across a page reload (issue 27 item 2).

The page is one the collector serves (``/docs``, same origin as ``/static/pldp-client.mjs``); the
client draws from the browser's CSPRNG and keeps its memo in the default store (IndexedDB
``pldp-memo``). Two reports of one value, the second after a reload, reuse one permanent response:
the memo is unchanged by the second and counts no new value; another value adds one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import pldp
from pldp.deploy import Spec
from tests import browser as chrome
from tests.service_server import Server

server = pytest.fixture(scope="module")(chrome.serve)
browser = pytest.fixture(chrome.blank)

#: Report one answer with the default store; the memo's text and the values new to it.
REPORT = """
const [spec, answer, done] = arguments;
import('/static/pldp-client.mjs').then(async (m) => {
  const client = new m.Client(await m.loadSpec(spec));
  const report = await client.report(answer);
  const text = await new m.IndexedDBMemoStore().update((t) => ({ text: null, result: t }));
  done({ report, text, news: client.lastNewValues });
}).catch((e) => done({ error: String(e) }));
"""


def test_the_browser_keeps_its_prr_in_indexeddb_across_a_reload(browser: Any, server: Server) -> None:
    spec = Spec.from_mechanism(pldp.LOUE(2.0, 1.0, 6), question="reload?", labels=list("abcdef"))
    text = spec.to_json()
    browser.get(f"{server.url}/docs")
    clear = "const r = indexedDB.deleteDatabase('pldp-memo'); r.onsuccess = r.onerror = () => arguments[0](0);"
    browser.execute_async_script(clear)
    first = browser.execute_async_script(REPORT, text, "b")
    assert "error" not in first, first
    memo = json.loads(first["text"])
    entry = memo["memos"][spec.memo_key]
    assert first["news"] == 1 and list(entry["responses"]) == ["1"] and first["report"]["spec"] == spec.id
    browser.refresh()
    second = browser.execute_async_script(REPORT, text, "b")
    assert second["news"] == 0 and second["text"] == first["text"]  # the same PRR, kept by IndexedDB
    third = browser.execute_async_script(REPORT, text, "e")
    after = json.loads(third["text"])["memos"][spec.memo_key]["responses"]
    assert third["news"] == 1 and after["1"] == entry["responses"]["1"] and sorted(after) == ["1", "4"]
    assert first["report"]["id"] != second["report"]["id"]  # a fresh id (and IRR) per report
