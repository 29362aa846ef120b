"""A free-text campaign's pages in a real browser: Debian's headless Chromium against a real collector.

A heavy-hitter spec (TreeHist, ε = 4, answers cut to 16 bytes) lists no answers: the survey page asks
for any text in one field, refuses an empty one in the page, and sends only the report the JS client
randomizes on the device (never the text); it says that any two answers are protected alike at the
node's ε. The dashboard draws the answers the collector discovers from 20,000 reports, each with the
API's share, marks those below the floor, says what the discovery cannot see, and says the one budget
in its privacy section, whose claims read the same in both languages (pldp.deploy.claimwords).

Screenshots (``heavy-survey.png``, ``heavy-dashboard.png``) go to ``$PLDP_SHOTS`` when set, else the
test's temporary folder. The browser, its fixtures and the helpers are in tests/browser.py.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.channel.hashed import hash_values
from pldp.channel.heavy import answer_rows
from pldp.client import Client
from pldp.deploy import Spec, verify
from pldp.deploy.claimwords import claim_words, claims_table
from tests import browser as chrome
from tests.browser import (
    campaign,
    chart_is,
    errors,
    js,
    new_device,
    ready,
    requests,
    shown,
    state,
    stored,
    use_token,
    viewport,
    wait,
)
from tests.heavy_answers import population
from tests.service_server import Server

# one collector process and one browser for the module; a blank page before each test
server = pytest.fixture(scope="module")(chrome.serve)
browser = pytest.fixture(chrome.blank)

PROTOCOL = pldp.TreeHist(4.0, max_bytes=16)
#: What ten respondents type: case kept, white space trimmed, NFC ("cafe" + U+0301 is "café"), and
#: an answer longer than 16 bytes, taken (the client cuts it) rather than refused.
TYPED = [
    "signal",
    "whatsapp",
    "Signal ",
    "  signal",
    "telegram",
    "cafe\u0301",
    "WhatsApp",
    "signal messenger app",
    "threema",
    "signal",
]
#: The planted answers of the dashboard's population (the rest spread over 300 random words).
PLANTED = {"signal": 0.35, "whatsapp": 0.25, "telegram": 0.10}
N = 20_000


def _words(seed: int) -> Any:
    rng = np.random.default_rng(seed)
    return lambda n: rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)


def _shots(tmp_path: Path) -> Path:
    where = Path(os.environ.get("PLDP_SHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where


def _text(driver: Any, element_id: str) -> str:
    return str(driver.find_element("id", element_id).text).replace("\xa0", " ")


def _kept_parts(spec: Spec, typed: str, payload: dict[str, Any]) -> int:
    """How many of a report's two parts (prefix, word) report the true item's hash of the typed text."""
    node = spec.root
    rows = answer_rows([typed], node.max_bytes)
    items = node.part_items(rows, np.array([payload["depth"]]))
    kept = 0
    for name, part, item in zip(node.part_names, node.parts, items, strict=True):
        value = hash_values(item, np.array([payload[f"{name}_seed"]], dtype=np.uint32), part.g)
        kept += int(value[0] == payload[f"{name}_value"])
    return kept


@pytest.mark.slow
def test_respondents_type_free_text_and_send_only_randomized_reports(
    browser: Any, server: Server, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_heavy(PROTOCOL, question="Which messaging app do you use most?")
    campaign(server, spec)
    url = f"{server.url}/c/{spec.id}"
    sent, posts = [], []
    for i, typed in enumerate(TYPED):
        new_device(browser, server.url)  # each respondent answers on her own device
        ready(browser, url)
        field = browser.find_element(By.ID, "answer-0")
        if i == 0:
            assert browser.find_element(By.ID, "title").text == "Which messaging app do you use most?"
            # one text field: no listed answers, no buttons, no level to choose
            assert browser.find_elements(By.CSS_SELECTOR, 'input[type="radio"], input[type="checkbox"], datalist') == []
            assert not browser.find_elements(By.CSS_SELECTOR, "fieldset.levels")
            hint = browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0"]').text
            assert "only the first 16 bytes (UTF-8) are used" in hint
            said = _text(browser, "protection-questions")
            assert said.startswith("Any two answers you could type are protected alike") and "at ε = 4 against" in said
            assert "Only the first 16 bytes (UTF-8) of your answer are used" in said
            assert "e4 ≈ 54.6 times" in _text(browser, "epsilon-meaning")  # e^4 = 54.598...
            # an empty answer (blank after trimming) is refused in the page, and nothing is sent
            field.send_keys("   ")
            browser.find_element(By.ID, "submit").click()
            error = wait(browser, shown("error"), what="the error")
            assert "Please type your answer to the question" in error.text and "is empty" in error.text
            assert stored(server.db, spec.id) == []
            # a character cut in two at byte 16: the hint shows the whole characters before it, and says
            # that the first bytes of the next one are used too (they are: the client cuts bytes)
            field.clear()
            field.send_keys("a" + "é" * 8)
            said = browser.find_element(By.ID, "answer-0-cut").text
            assert said == (
                "Your answer is 17 bytes long: only its first 16 are used (“aééééééé”, and the first bytes of the "
                "next character)."
            )
            field.clear()
        field.send_keys(typed)
        assert js(browser, "return document.getElementById('answer-0').value") == typed
        cut = browser.find_element(By.ID, "answer-0-cut")
        if len(typed.strip().encode()) > 16:  # what is used of a longer answer, said as it is typed
            assert cut.text == "Your answer is 20 bytes long: only its first 16 are used (“signal messenger”)."
        else:
            assert not cut.is_displayed()
        if i == 1:  # (the first respondent's page shows the refusal of her empty answer)
            assert browser.save_screenshot(str(_shots(tmp_path) / "heavy-survey.png"))
        browser.find_element(By.ID, "submit").click()
        wait(browser, shown("thanks"), what="the thanks")
        batch = json.loads(browser.find_element(By.ID, "sent").get_attribute("textContent"))
        assert batch["format"] == "pldp.batch/1" and batch["spec"] == spec.id and len(batch["reports"]) == 1
        sent.append(batch["reports"][0])
        posts += [r for r in requests(browser) if r["method"] != "GET"]
    assert errors(browser) == []  # no content-security violation, no script error

    # the only bodies sent: one batch per respondent, exactly the report shown, never the text
    assert len(posts) == len(TYPED)
    for post, report in zip(posts, sent, strict=True):
        assert json.loads(post["postData"]) == {"format": "pldp.batch/1", "spec": spec.id, "reports": [report]}
        body = post["postData"].lower()
        for typed in TYPED:
            text = unicodedata.normalize("NFC", typed).strip().lower()
            assert text not in body and json.dumps(text)[1:-1] not in body
    # stored: exactly the reports sent, one per respondent, each a depth and two local-hashing reports
    kept = stored(server.db, spec.id)
    assert sorted(kept) == sorted((r["id"], r["payload"]) for r in sent) and len(kept) == len(TYPED)
    columns = {"depth", "prefix_seed", "prefix_value", "word_seed", "word_value"}
    assert all(set(r["payload"]) == columns and 0 <= r["payload"]["depth"] < 16 for r in sent)
    # randomized: each part reports its true item's hash with probability (keep + weight) / 2^32 =
    # e^2 / (e^2 + 7) = 0.5135 (ε = 2 per part, g = 8), independently; all 20 parts of the 10 reports
    # would be kept with probability 0.5135^20 = 1.6e-6, and a page that did not randomize keeps them all
    p = (spec.root.parts[0].keep + spec.root.parts[0].weight) / 2**32
    assert p == pytest.approx(np.exp(2) / (np.exp(2) + 7), rel=1e-6)  # the grid's rounding: below 1e-8
    kept_parts = sum(_kept_parts(spec, typed, r["payload"]) for typed, r in zip(TYPED, sent, strict=True))
    assert kept_parts < 2 * len(TYPED), kept_parts


@pytest.mark.slow
def test_the_dashboard_shows_the_discovered_answers_and_the_one_budget(
    browser: Any, server: Server, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_heavy(PROTOCOL, question="Which app do you use most?")
    _, analyst, token = campaign(server, spec)
    answers = population(PLANTED, N, np.random.default_rng(21), tail=300)
    device = Client(spec, random=_words(22))
    respondent = server.client()
    for i in range(0, N, 5_000):
        assert respondent.submit(spec.id, device.reports(answers[i : i + 5_000]))["accepted"] == 5_000
    browser.get(f"{server.url}/dashboard/{spec.id}")
    state(browser, "no_token")
    use_token(browser, token)

    drawn = wait(browser, chart_is("discover", N), what="the discovered answers")
    part = analyst.estimate(spec.id)["attributes"][0]
    found = part["discovery"]

    # the bars: the API's answers in its order, with the API's shares, those below the floor marked and
    # faint, a control character shown as its escape (a noise answer's bytes may hold any)
    def readable(label: str) -> str:
        return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m[0]):02x}", label)

    confident = found["confident"]
    marked = [
        readable(lab) + ("" if ok else " (may be noise)") for lab, ok in zip(part["labels"], confident, strict=True)
    ]
    assert drawn["labels"] == marked
    faint = js(
        browser, "return [...document.querySelectorAll('svg.chart rect.bar')].map(b => b.classList.contains('noise'))"
    )
    assert faint == [not ok for ok in confident] and any(faint)
    np.testing.assert_allclose(drawn["values"], part["frequencies"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(drawn["lo"], part["ci_low"], rtol=0, atol=1e-9)
    box = browser.find_element(By.CSS_SELECTOR, "figure.attribute .chart-scroll")
    assert json.loads(box.get_attribute("data-discovered")) == part["labels"]
    # the planted answers: found, first, above the floor, each share near its truth
    assert drawn["labels"][:3] == list(PLANTED)
    for answer, share in PLANTED.items():
        i = part["labels"].index(answer)
        assert found["confident"][i]
        assert abs(part["frequencies"][i] - share) < 4 * part["std_error"][i], (answer, part["frequencies"][i])
    # what the discovery cannot see, in words; the only method offered
    hint = browser.find_element(By.CSS_SELECTOR, "figure.attribute .diagnostics").text
    assert "TreeHist found the most frequent ones" in hint and "only the first 16 bytes" in hint
    assert ("marked “may be noise”" in hint) == (not all(found["confident"]))
    assert js(browser, "return [...document.getElementById('method').options].map(o => o.value)") == ["discover"]

    # the privacy section: verified in this browser, in the same words as pldp spec verify, one budget
    wait(browser, lambda d: js(d, "return document.getElementById('dashboard').dataset.privacy") == "verified")
    rows = js(
        browser,
        "return [...document.querySelectorAll('#privacy-table tbody tr')]"
        ".map(r => [...r.querySelectorAll('td')].map(c => c.textContent))",
    )
    spec_json = json.loads(spec.to_json())
    want = verify(spec).rows
    assert [r[:2] for r in rows] == [list(claim_words(spec_json, w)) for w in want]
    assert [r[:2] for r in rows] == [
        ["the report of a prefix", "any two answers' prefixes"],
        ["the report of the whole answer", "any two answers"],
        ["every report", "any two answers"],
    ]
    assert [r[2] for r in rows] == ["2", "2", "4"] and all(r[4] == "✓ holds" for r in rows)
    summary = _text(browser, "privacy-summary")
    assert "3 promises of the campaign's definition holds" in summary and "(ε = 4)" in summary
    said = _text(browser, "privacy-answers")
    assert "Any two answers a respondent could type are protected alike, at ε = 4" in said
    assert "Only the first 16 bytes (UTF-8) of an answer are used" in said

    assert browser.save_screenshot(str(_shots(tmp_path) / "heavy-dashboard.png"))
    # on a phone: drawn again at its width, the discovered answers' long labels overflowing nothing
    with viewport(browser, 390, 844):
        right = "return document.querySelector('svg.chart').getBoundingClientRect().right"
        wait(browser, lambda d: js(d, right) <= 390, what="the chart drawn again")
        width, inner = js(browser, "return [document.documentElement.scrollWidth, innerWidth]")
        assert width <= inner, f"the page is {width} px wide in a {inner} px window"
        boxes = js(
            browser,
            "return [...document.querySelectorAll('figure .chart-scroll, figure .table-wrap')]"
            ".filter(e => e.offsetParent).map(e => [e.scrollWidth, e.clientWidth])",
        )
        assert all(scroll <= client + 1 for scroll, client in boxes), boxes
        assert browser.save_screenshot(str(_shots(tmp_path) / "heavy-dashboard-phone.png"))
    assert errors(browser) == []  # no script error, and no estimate refused (a 400 is logged)


PROTOCOLS = [pldp.PEM(2.0, max_bytes=8), PROTOCOL, pldp.SFP(3.0, max_bytes=8)]


def test_a_free_text_specs_claims_read_alike_in_the_page_and_in_pldp_spec_verify(browser: Any, server: Server) -> None:
    """claimWords (protection.mjs, in the page) and pldp.deploy.claimwords say each claim of PEM, TreeHist
    and SFP alike, naming no sampler part; protection() gives the one budget, and no answer."""
    specs = {p.name: json.loads(Spec.from_heavy(p, question=f"{p.name}?").to_json()) for p in PROTOCOLS}
    browser.get(f"{server.url}/docs")
    said, asked = browser.execute_async_script(
        """
        const [specs, done] = arguments;
        Promise.all([import('/static/protection.mjs'), import('/static/pldp-client.mjs')]).then(([m, client]) => done([
          Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name,
            client.verify(spec).rows.map((row) => { const w = m.claimWords(spec, row); return [w.where, w.what]; })])),
          Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, m.protection(spec)])),
        ]));
        """,
        specs,
    )
    for name, spec in specs.items():
        words = [list(claim_words(spec, row)) for row in verify(spec).rows]
        assert said[name] == words, name
        assert words[-1] == ["every report", "any two answers"]  # the whole report, at the node's epsilon
        assert not [w for w in words if "root" in w[0] or "every pair" in w[1]], words
        (q,) = asked[name]
        assert (q["kind"], q["labels"], q["answers"], q["epsilon"], q["maxBytes"]) == (
            "heavy",
            None,
            None,
            spec["sampler"]["root"]["epsilon"],
            spec["sampler"]["root"]["max_bytes"],
        )
    assert errors(browser) == []


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: p.name)
def test_pldp_spec_verify_says_a_free_text_specs_claims(protocol: Any) -> None:
    spec = Spec.from_heavy(protocol, question="A word?")
    spec_json = json.loads(spec.to_json())
    table = claims_table(spec_json, verify(spec))  # pldp spec verify's table
    eps = spec_json["sampler"]["root"]["epsilon"]
    assert "every report" in table and "any two answers" in table and f"the whole report is {eps:g}-LDP" in table
