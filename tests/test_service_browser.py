"""The collector's pages in a real browser: Debian's headless Chromium driven by selenium.

A real ``pldp serve`` process (tests/service_server.py) serves the survey page ``/c/{id}`` and the
dashboard ``/dashboard/{id}``; Chromium answers surveys (the answer randomized by pldp-client.mjs
in the page) and reads the dashboard with an analyst token typed into it. The checks: the reports
stored are exactly the randomized reports the page sent (never the answer), every request of the
page went to the collector, the page breaks no content-security rule, the dashboard's bars are the
API's estimate to 1e-9 and follow the method and new reports, and refusals read as sentences.

The browser, its fixtures and the helpers are in tests/browser.py (which says what to install);
the pages' wording, layout and the API page are tested in tests/test_service_pages.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.client import Client
from pldp.deploy import Spec, decode, verify
from tests import browser as chrome
from tests.browser import (
    CSP,
    answer,
    bars,
    campaign,
    chart_is,
    errors,
    get,
    js,
    loaded_urls,
    new_device,
    ready,
    requests,
    seq,
    shown,
    slow_network,
    state,
    stored,
    use_token,
    wait,
)
from tests.service_server import Server

FIG1 = pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, float("inf"), float("inf")])
LABELS = ["a", "b", "c", "d", "e"]

# one collector process and one browser for the module; a blank page before each test
server = pytest.fixture(scope="module")(chrome.serve)
browser = pytest.fixture(chrome.blank)


def _same_as_api(drawn: dict[str, Any], part: dict[str, Any]) -> None:
    assert drawn["labels"] == part["labels"]
    np.testing.assert_allclose(drawn["values"], part["frequencies"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(drawn["lo"], part["ci_low"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(drawn["hi"], part["ci_high"], rtol=0, atol=1e-9)


# ------------------------------------------------------------------------------------ pages over HTTP


def test_pages_and_static_files_over_http(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="http?")
    server.admin().create_campaign(spec)
    for path in (f"/c/{spec.id}", f"/dashboard/{spec.id}"):
        status, headers, body = get(server.url + path)
        assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
        assert headers["content-security-policy"].startswith(CSP)
        assert f'data-campaign="{spec.id}"' in body.decode() and "{{" not in body.decode()
        assert b"http://" not in body and b"https://" not in body  # nothing from elsewhere
    types = {".mjs": "text/javascript", ".css": "text/css", ".html": "text/html"}
    static = Path(pldp.__file__).parent / "service" / "static"
    names = ("pldp-client.mjs", "respondent.mjs", "dashboard.mjs", "common.mjs", "protection.mjs", "methods.mjs",
             "method-table.mjs", "api.mjs", "series.mjs", "axes.mjs")  # fmt: skip
    for name in (*names, "pldp.css", "respondent.html", "notfound.html"):
        status, headers, body = get(f"{server.url}/static/{name}")
        assert status == 200 and headers["content-type"].split(";")[0] == types[Path(name).suffix]
        assert headers["content-security-policy"].startswith(CSP) and headers["x-content-type-options"] == "nosniff"
        assert body == (static / name).read_bytes()
    # the page's copy of the client is the client itself (a link in git)
    repo_client = Path(__file__).parents[1] / "clients" / "js" / "pldp-client.mjs"
    if repo_client.exists():
        assert get(f"{server.url}/static/pldp-client.mjs")[2] == repo_client.read_bytes()
    refused = [
        "/static/nope.js",
        "/static/..%2Fapp.py",
        "/static/%2E%2E%2Fapp.py",
        "/static/..%2F..%2F..%2Fpyproject.toml",
        "/static/app.py",
        "/static/",
        "/c/" + "0" * 32,
        "/c/" + spec.id.upper(),
        "/c/" + spec.id + "x",
        "/c/%3Cscript%3E",
        "/dashboard/" + "f" * 32,
    ]
    for path in refused:
        status, headers, body = get(server.url + path)
        assert status == 404 and headers["content-type"] == "application/json", path
        assert set(json.loads(body)) == {"error", "reason"}, path


# ------------------------------------------------------------------------------------ the survey page


#: Respondents of the survey-page test, each on a device of her own.
RESPONDENTS = 10


@pytest.mark.slow
def test_ten_respondents_send_randomized_reports_only_to_the_collector(browser: Any, server: Server) -> None:
    """Ten respondents, each on her own device, answer in the page. The law of the JS client's
    IPRR reports (which the page sends) is tested on many reports, and shown to reject a 5 % change
    of the keep probability, by test_js_client_fits_and_a_5pct_keep_is_rejected[iprr]
    (tests/test_fit.py); here the reports need only be seen to be randomized at all."""
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.IPRR(FIG1), question="Which one is yours?", labels=LABELS)
    _, analyst, _ = campaign(server, spec)
    url = f"{server.url}/c/{spec.id}"
    sent, loaded, posts = [], [], []
    for i in range(RESPONDENTS):
        new_device(browser, server.url)  # each respondent answers on her own device
        ready(browser, url)
        if i == 0:
            assert browser.find_element(By.ID, "title").text == "Which one is yours?"
            labels = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".choice label")]
            assert [lab.split(" (")[0] for lab in labels] == LABELS
            assert "ε = 0.1" in labels[0] and "may reveal this answer" in labels[3]  # per-answer budgets
            assert not browser.find_elements(By.CSS_SELECTOR, "fieldset.levels")  # IPRR has no levels
        batch = answer(browser, "answer-0-2")  # "c" (budget 1.0)
        assert batch["format"] == "pldp.batch/1" and batch["spec"] == spec.id and len(batch["reports"]) == 1
        sent.append(batch["reports"][0])
        loaded += loaded_urls(browser)
        # resubmission is off: the form is gone
        assert not browser.find_element(By.ID, "answer-form").is_displayed()
        for request in requests(browser):
            loaded.append(request["url"])
            if request["method"] != "GET":
                posts.append(request)
    assert errors(browser) == []  # no content-security violation, no script error

    # every request went to the collector: pages, scripts, the spec and the reports
    assert loaded and all(u.startswith(server.url + "/") for u in loaded), sorted(set(loaded))
    paths = {u[len(server.url) :] for u in loaded}
    # the page's own modules and the JS client's modules it imports (all of them, but the entry
    # pldp-client.mjs: the page imports client-spec.mjs and client-reports.mjs, which need the rest)
    client = [
        p.name[len("client-") : -len(".mjs")]
        for p in (Path(pldp.__file__).parent / "service" / "static").glob("client-*.mjs")
    ]
    pages = ("respondent", "survey-form", "common", "protection", "shared", "pldp-ledger", "ledger-storage")
    assert paths == {
        f"/c/{spec.id}",
        "/static/pldp.css",
        *(f"/static/client-{name}.mjs" for name in client),
        *(f"/static/{name}.mjs" for name in pages),
        f"/v1/campaigns/{spec.id}/spec",
        f"/v1/campaigns/{spec.id}/round",
        f"/v1/campaigns/{spec.id}/reports?round=1",
    }
    # the only bodies sent: one batch per respondent, exactly the randomized report shown
    assert len(posts) == RESPONDENTS
    for post, report in zip(posts, sent, strict=True):
        assert post["method"] == "POST" and post["url"] == f"{server.url}/v1/campaigns/{spec.id}/reports?round=1"
        assert json.loads(post["postData"]) == {"format": "pldp.batch/1", "spec": spec.id, "reports": [report]}

    # stored: exactly the reports sent, which decode and count one per respondent
    assert analyst.estimate(spec.id)["n"] == RESPONDENTS
    kept = stored(server.db, spec.id)
    assert sorted(kept) == sorted((r["id"], r["payload"]) for r in sent)
    tally = decode(spec, {"format": "pldp.batch/1", "spec": spec.id, "reports": sent})
    assert tally.n == RESPONDENTS and int(np.sum(tally.counts)) == RESPONDENTS
    # randomized: IPRR reports "c" as itself with probability 0.125 and otherwise as "a" or "b",
    # never as "d" or "e"; 9 or more of 10 "c"s would happen with probability 6.6e-8 (binomial
    # tail), and a page that sent the answer itself would send 10
    payloads = [p for _, p in kept]
    assert set(payloads) <= {0, 1, 2}
    assert payloads.count(2) <= 8, payloads


@pytest.mark.slow
def test_a_leveled_protocol_asks_for_the_privacy_level(browser: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(
        pldp.protocols.FEBSF([0.5, 1.0, 2.0], 0.5, 6, "krr"), question="Which day?", labels=list("MTWRFS")
    )
    campaign(server, spec)
    ready(browser, f"{server.url}/c/{spec.id}")
    levels = browser.find_elements(By.CSS_SELECTOR, "fieldset.levels .choice label")
    assert [e.text.split(" (")[0] for e in levels] == ["Level 1: ε = 0.5", "Level 2: ε = 1", "Level 3: ε = 2"]
    assert "most private" in levels[0].text and "least private" in levels[2].text
    help_text = browser.find_element(By.CSS_SELECTOR, "fieldset.levels .hint").text
    assert "smaller" in help_text and "itself randomized" in help_text  # FEBSF perturbs the level
    # an answer without a level is refused in the page, readably, and nothing is sent
    browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0-4"]').click()
    browser.find_element(By.ID, "submit").click()
    error = wait(browser, shown("error"), what="the error")
    assert "privacy level" in error.text
    assert stored(server.db, spec.id) == []
    batch = answer(browser, "answer-0-4", "level-0-1")
    (report,) = batch["reports"]
    assert set(report["payload"]) == {"level", "data"} and report["payload"]["level"] in (0, 1, 2)
    assert stored(server.db, spec.id) == [(report["id"], report["payload"])]
    assert errors(browser) == []


@pytest.mark.slow
def test_a_question_of_many_answers_is_a_field_that_completes(browser: Any, server: Server) -> None:
    """Local hashing over 400 answers: one text field with the answers as its completions, not 400
    buttons; text that is no answer is refused in the page and nothing is sent; an answer is sent as
    one randomized report of a seed and a value."""
    from selenium.webdriver.common.by import By

    labels = [f"app {i}" for i in range(400)]
    spec = Spec.from_mechanism(pldp.OLH(2.0, 400), question="Which app do you use most?", labels=labels)
    campaign(server, spec)  # (another campaign than the dashboard test's: its reports are its own)
    ready(browser, f"{server.url}/c/{spec.id}")
    assert browser.find_elements(By.CSS_SELECTOR, 'input[type="radio"]') == []
    field = browser.find_element(By.ID, "answer-0")
    options = js(browser, "return [...document.querySelectorAll('#answer-0-list option')].map(o => o.value)")
    assert field.get_attribute("list") == "answer-0-list" and options == labels
    field.send_keys("app 4000")
    browser.find_element(By.ID, "submit").click()
    error = wait(browser, shown("error"), what="the error")
    assert "“app 4000” is not one of the answers" in error.text and stored(server.db, spec.id) == []
    field.clear()
    field.send_keys("app 17")
    browser.find_element(By.ID, "submit").click()
    wait(browser, shown("thanks"), what="the thanks")
    (report,) = json.loads(browser.find_element(By.ID, "sent").get_attribute("textContent"))["reports"]
    assert set(report["payload"]) == {"seed", "value"} and 0 <= report["payload"]["value"] < spec.root.g
    assert stored(server.db, spec.id) == [(report["id"], report["payload"])]
    assert errors(browser) == []


@pytest.mark.slow
def test_a_closed_campaign_says_so(browser: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Still open?", labels=["yes", "no", "maybe"])
    admin, _, _ = campaign(server, spec)
    ready(browser, f"{server.url}/c/{spec.id}")
    admin.close_campaign(spec.id)  # closed while the page is open: the POST gets 409
    browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0-0"]').click()
    browser.find_element(By.ID, "submit").click()
    closed = wait(browser, shown("closed"), what="the closed notice")
    assert "closed" in closed.text and not browser.find_element(By.ID, "answer-form").is_displayed()
    browser.get(f"{server.url}/c/{spec.id}")  # opened after closing: no form at all
    wait(browser, shown("closed"))
    assert not browser.find_element(By.ID, "answer-form").is_displayed()
    assert stored(server.db, spec.id) == []


# ------------------------------------------------------------------------------------ the dashboard


@pytest.mark.slow
def test_the_dashboard_draws_the_estimate_live(browser: Any, server: Server, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    spec = Spec.from_mechanism(pldp.IPRR(FIG1), question="Which one is theirs?", labels=LABELS)
    _, analyst, token = campaign(server, spec)
    rng = np.random.default_rng(11)
    respondent = server.client()
    respondent.submit(spec.id, Client(spec).reports(rng.choice(5, 3_000, p=[0.4, 0.3, 0.15, 0.1, 0.05])))
    browser.get(f"{server.url}/dashboard/{spec.id}")
    state(browser, "no_token")
    use_token(browser, token)
    assert js(browser, f"return sessionStorage.getItem('pldp.token.{spec.id}')") == token

    drawn = wait(browser, chart_is("unbiased", 3_000), what="bars")
    _same_as_api(drawn, analyst.estimate(spec.id, "unbiased")["attributes"][0])
    assert js(browser, "return document.getElementById('n').dataset.n") == "3000"  # redrawn at each poll
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart g.whisker")) == 5

    for method, level in (("mle", "0.95"), ("norm_sub", "0.9")):
        Select(browser.find_element(By.ID, "level")).select_by_value(level)
        Select(browser.find_element(By.ID, "method")).select_by_value(method)
        # at once, not at the poll; the level too (changing it first draws the old method at it)
        drawn = wait(browser, chart_is(method, 3_000, level=level), timeout=3, what=method)
        _same_as_api(drawn, analyst.estimate(spec.id, method, float(level))["attributes"][0])

    # live: new reports show within a poll or two
    respondent.submit(spec.id, Client(spec).reports(rng.choice(5, 500)))
    drawn = wait(browser, chart_is("norm_sub", 3_500), timeout=8, what="the new n")
    _same_as_api(drawn, analyst.estimate(spec.id, "norm_sub", 0.9)["attributes"][0])

    # the exact privacy table, the same rows as pldp.deploy.verify, by the answers' labels
    wait(browser, lambda d: js(d, "return document.getElementById('dashboard').dataset.privacy") == "verified")
    rows = browser.find_elements(By.CSS_SELECTOR, "#privacy-table tbody tr")
    want = verify(spec).rows
    assert len(rows) == len(want) == 3
    for row, w, label in zip(rows, want, LABELS[:3], strict=True):
        assert [row.get_attribute("data-part"), row.get_attribute("data-subject")] == [w.part, w.subject]
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        assert cells[1:] == [f"a report of “{label}”", cells[2], cells[3], "✓ holds"]
        claimed, realised = (c.get_attribute("data-epsilon") for c in row.find_elements(By.CSS_SELECTOR, "td.num"))
        assert float(claimed) == w.claimed and float(realised) == pytest.approx(w.realised, rel=1e-12)
        assert float(cells[2]) == pytest.approx(w.claimed, rel=1e-3) and len(cells[3]) <= 6  # 4 digits
        assert float(cells[3]) == pytest.approx(w.realised, rel=1e-3)
    assert "3 promises of the campaign's definition holds" in browser.find_element(By.ID, "privacy-summary").text

    shot = tmp_path / "dashboard.png"
    assert browser.save_screenshot(str(shot))
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    assert errors(browser) == []


@pytest.mark.slow
def test_the_dashboard_shows_the_top_answers_of_a_large_domain(browser: Any, server: Server, tmp_path: Path) -> None:
    """Local hashing over 400 answers: the chart and the table hold the 20 answers of the largest
    estimated shares, largest first, each with the API's numbers; the page says what they are."""
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.OLH(2.0, 400), question="Which app?", labels=[f"app {i}" for i in range(400)])
    _, analyst, token = campaign(server, spec)
    rng = np.random.default_rng(12)
    popular = rng.choice(400, 5, replace=False)
    answers = np.where(rng.random(4_000) < 0.6, popular[rng.integers(0, 5, 4_000)], rng.integers(0, 400, 4_000))
    server.client().submit(spec.id, Client(spec).reports(answers))
    browser.get(f"{server.url}/dashboard/{spec.id}")
    use_token(browser, token)
    drawn = wait(browser, chart_is("unbiased", 4_000), what="bars")
    part = analyst.estimate(spec.id, "unbiased")["attributes"][0]
    f = np.asarray(part["frequencies"])
    top = sorted(range(400), key=lambda i: (-f[i], i))[:20]
    assert drawn["labels"] == [part["labels"][i] for i in top]
    np.testing.assert_allclose(drawn["values"], f[top], rtol=0, atol=1e-9)
    np.testing.assert_allclose(drawn["lo"], np.asarray(part["ci_low"])[top], rtol=0, atol=1e-9)
    assert {f"app {i}" for i in popular} <= set(drawn["labels"][:8])  # the popular apps found among the first
    box = browser.find_element(By.CSS_SELECTOR, "figure.attribute .chart-scroll")
    assert (box.get_attribute("data-shown"), box.get_attribute("data-of")) == ("20", "400")
    hint = browser.find_element(By.CSS_SELECTOR, "figure.attribute .diagnostics").text
    assert "The 20 answers with the largest estimated shares, of 400" in hint and "lean high" in hint
    rows = js(browser, "return [...document.querySelectorAll('table.numbers tbody th')].map(t => t.textContent)")
    assert rows == drawn["labels"]
    # its privacy: verified in this browser, one promise in words, the same as pldp.deploy.verify's
    wait(browser, lambda d: js(d, "return document.getElementById('dashboard').dataset.privacy") == "verified")
    (row,) = browser.find_elements(By.CSS_SELECTOR, "#privacy-table tbody tr")
    (want,) = verify(spec).rows
    assert row.get_attribute("data-subject") == want.subject
    cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
    assert (cells[1], cells[-1]) == ("any two answers", "✓ holds")
    shot = tmp_path / "top-answers.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 20_000
    assert errors(browser) == []


@pytest.mark.slow
def test_a_range_of_integers_is_typed_and_charted_by_its_integers(browser: Any, server: Server) -> None:
    """A spec whose answers are the integers 0 .. 9,999 (``"labels": {"range": 10000}``, no list): the
    survey takes a typed integer in range (and refuses other text in the page, nothing sent), the
    collector stores the report, and the dashboard labels its top answers by their integers."""
    from selenium.webdriver.common.by import By

    d = 10_000
    spec = Spec.from_mechanism(pldp.OLH(2.0, d), question="Which number?", labels="range")
    assert spec.to_dict()["labels"] == {"range": d}
    _, analyst, token = campaign(server, spec)
    ready(browser, f"{server.url}/c/{spec.id}")
    assert browser.find_elements(By.CSS_SELECTOR, 'input[type="radio"], datalist') == []
    field = browser.find_element(By.ID, "answer-0")
    assert field.get_attribute("inputmode") == "numeric"
    for typed in ("10000", "12a"):
        field.clear()
        field.send_keys(typed)
        browser.find_element(By.ID, "submit").click()
        error = wait(browser, shown("error"), what="the error")
        assert f"“{typed}” is not a whole number from 0 to 9,999" in error.text and stored(server.db, spec.id) == []
    field.clear()
    field.send_keys("4321")
    browser.find_element(By.ID, "submit").click()
    wait(browser, shown("thanks"), what="the thanks")
    (report,) = json.loads(browser.find_element(By.ID, "sent").get_attribute("textContent"))["reports"]
    assert stored(server.db, spec.id) == [(report["id"], report["payload"])]
    # reports from the Python client, some answers far more often than the rest
    rng = np.random.default_rng(13)
    popular = np.array([7, 4321, 9_998])
    answers = np.where(rng.random(3_000) < 0.6, popular[rng.integers(0, 3, 3_000)], rng.integers(0, d, 3_000))
    server.client().submit(spec.id, Client(spec).reports(answers))
    browser.get(f"{server.url}/dashboard/{spec.id}")
    use_token(browser, token)
    drawn = wait(browser, chart_is("unbiased", 3_001), what="bars")
    part = analyst.estimate(spec.id, "unbiased")["attributes"][0]
    f = np.asarray(part["frequencies"])
    top = sorted(range(d), key=lambda i: (-f[i], i))[:20]
    assert drawn["labels"] == [str(i) for i in top]  # the answers' integers
    assert {"7", "4321", "9998"} <= set(drawn["labels"][:3])
    assert errors(browser) == []


@pytest.mark.slow
def test_free_text_is_typed_refused_when_empty_or_too_long_and_hashed(browser: Any, server: Server) -> None:
    """A spec of free-text answers (``labels="hashed"``, 5 buckets: a text field all the same, not five
    buttons): the page refuses blank text and text over 256 UTF-8 bytes before anything is sent, and
    sends the report of a typed text, which the collector stores."""
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.KRR(2.0, 5), question="Your favourite word?", labels="hashed")
    campaign(server, spec)
    ready(browser, f"{server.url}/c/{spec.id}")
    assert browser.find_elements(By.CSS_SELECTOR, 'input[type="radio"], datalist') == []
    field = browser.find_element(By.ID, "answer-0")
    assert field.get_attribute("inputmode") is None
    for typed, why in (("   ", "is empty"), ("é" * 129, "is 258 UTF-8 bytes, over the 256 allowed")):
        field.clear()
        field.send_keys(typed)
        browser.find_element(By.ID, "submit").click()
        error = wait(browser, shown("error"), what="the error")
        assert why in error.text and stored(server.db, spec.id) == []
    field.clear()
    field.send_keys(" café ")
    browser.find_element(By.ID, "submit").click()
    wait(browser, shown("thanks"), what="the thanks")
    (report,) = json.loads(browser.find_element(By.ID, "sent").get_attribute("textContent"))["reports"]
    assert stored(server.db, spec.id) == [(report["id"], report["payload"])]
    assert errors(browser) == []


@pytest.mark.slow
def test_the_dashboard_explains_refusals(browser: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Any reports?", labels=["x", "y", "z"])
    admin, _, token = campaign(server, spec)
    other = Spec.from_mechanism(pldp.KRR(2.0, 3), question="Another", labels=["x", "y", "z"])
    admin.create_campaign(other)
    other_token = admin.create_token("other", [other.id])["token"]

    browser.get(f"{server.url}/dashboard/{spec.id}")
    assert "Paste an analyst token" in state(browser, "no_token")
    # the page is not blank without a token: the spec's privacy table is there
    wait(browser, lambda d: js(d, "return document.getElementById('dashboard').dataset.privacy") == "verified")
    assert browser.find_elements(By.CSS_SELECTOR, "#privacy-table tbody tr")
    # the collector answers each token 300 ms late: until then the page shows the step before,
    # which a wait for the state alone would read when two steps end in the same state
    with slow_network(browser, 300):
        for bad, expected, words in (
            ("x" * 43, "unauthorized", "not valid"),
            (other_token, "forbidden", "may not read this campaign"),
            (server.admin_token, "forbidden", "admin token may not do this"),
            (token, "no_reports", "No reports yet"),
        ):
            before = seq(browser)
            use_token(browser, bad)
            text = state(browser, expected, since=before)
            assert words in text and browser.find_element(By.ID, "message").is_displayed()
            assert not browser.find_elements(By.CSS_SELECTOR, "svg.chart")
    # the first report appears at the next poll
    server.client().submit(spec.id, Client(spec).reports([0, 1, 2, 2]))
    wait(browser, chart_is("unbiased", 4), timeout=8, what="the first reports")
    assert state(browser, "ok") == ""
    # forgetting the token stops the polling and asks for one
    before = seq(browser)
    browser.find_element(By.ID, "forget-token").click()
    assert "Paste an analyst token" in state(browser, "no_token", since=before)
    assert js(browser, f"return sessionStorage.getItem('pldp.token.{spec.id}')") is None


# ------------------------------------------------------------------------------------ MPLDP


@pytest.mark.slow
def test_mpldp_asks_each_attribute_and_charts_each(browser: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    mech = pldp.protocols.MPLDP([3, 4], [1.0, 2.0])
    spec = Spec.from_mechanism(
        mech,
        question=["Colour?", "Season?"],
        labels=[["red", "green", "blue"], ["spring", "summer", "autumn", "winter"]],
    )
    _, analyst, token = campaign(server, spec)
    ready(browser, f"{server.url}/c/{spec.id}")
    legends = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".question > fieldset > legend")]
    assert legends == ["Colour?", "Your privacy level for “Colour?”", "Season?", "Your privacy level for “Season?”"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "fieldset.levels")) == 2
    browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0-2"]').click()
    browser.find_element(By.CSS_SELECTOR, 'label[for="level-0-0"]').click()
    browser.find_element(By.CSS_SELECTOR, 'label[for="answer-1-1"]').click()
    browser.find_element(By.ID, "submit").click()  # attribute 2's level is missing
    wait(browser, shown("error"))
    assert "question 2 (Season?)" in browser.find_element(By.ID, "error").text
    (report,) = answer(browser, "answer-1-1", "level-1-2")["reports"]
    assert len(report["payload"]) == 2 and all(set(p) == {"level", "data"} for p in report["payload"])
    assert stored(server.db, spec.id) == [(report["id"], report["payload"])]

    rng = np.random.default_rng(5)
    answers = np.column_stack([rng.integers(0, 3, 2_000), rng.integers(0, 4, 2_000)])
    levels = rng.integers(0, 3, (2_000, 2))
    server.client().submit(spec.id, Client(spec).reports(answers, levels=levels))
    browser.get(f"{server.url}/dashboard/{spec.id}")
    use_token(browser, token)
    wait(browser, chart_is("unbiased", 2_001, attribute=1), what="two charts")
    captions = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "figure.attribute figcaption")]
    assert captions == ["Colour?", "Season?"]
    got = analyst.estimate(spec.id)["attributes"]
    assert [part["labels"] for part in got] == spec.labels  # the spec's answers, not the oracle's indices
    for i, part in enumerate(got):
        _same_as_api(bars(browser, i), part)
    assert errors(browser) == []


# ------------------------------------------------------------------------------------ retries


@pytest.mark.slow
def test_a_report_is_resent_unchanged_when_the_collector_is_away(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Retry?", labels=["yes", "no", "maybe"])
    with Server(tmp_path / "retry.db") as srv:
        srv.admin().create_campaign(spec)
        ready(browser, f"{srv.url}/c/{spec.id}")
        browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0-1"]').click()
        srv.kill()  # the collector is gone when the respondent submits
        browser.find_element(By.ID, "submit").click()
        wait(browser, lambda d: "trying again" in d.find_element(By.ID, "status").text, what="a retry")
        srv.start()  # back on the same port and file, within the page's retries
        wait(browser, shown("thanks"), timeout=15, what="the thanks")
        (report,) = json.loads(browser.find_element(By.ID, "sent").get_attribute("textContent"))["reports"]
        posts = [r for r in requests(browser) if r["method"] == "POST"]
        assert len(posts) >= 2 and len({p["postData"] for p in posts}) == 1  # the same bytes each time
        assert stored(srv.db, spec.id) == [(report["id"], report["payload"])]
