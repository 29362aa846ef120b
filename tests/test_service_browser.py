"""The collector's pages in a real browser: Debian's headless Chromium driven by selenium.

A real ``pldp serve`` process (tests/service_server.py) serves the survey page ``/c/{id}`` and the
dashboard ``/dashboard/{id}``; Chromium answers surveys (the answer randomized by pldp-client.mjs
in the page) and reads the dashboard with an analyst token typed into it. The checks: the reports
stored are exactly the randomized reports the page sent (never the answer), every request of the
page went to the collector, the page breaks no content-security rule, the dashboard's bars are the
API's estimate to 1e-9 and follow the method and new reports, and refusals read as sentences.

Chromium and chromedriver come from Debian (``apt-get install chromium chromium-driver``) and
selenium from the ``test`` extra; selenium is told not to download anything (``SE_OFFLINE``).
Without them these tests skip, unless ``PLDP_BROWSER_TESTS=required`` (as in ``.ci/run``): then
they fail.
"""

from __future__ import annotations

import importlib.util
import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.client import Client
from pldp.deploy import Spec, decode, verify
from pldp.service import store
from tests.needs import need
from tests.service_server import Server

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
HOW = (
    "to run them: apt-get install chromium chromium-driver, and pip install 'pldp[test,service]' "
    "(selenium, fastapi, uvicorn); PLDP_BROWSER_TESTS=required makes them fail instead of skipping"
)
CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'"

FIG1 = pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, float("inf"), float("inf")])
LABELS = ["a", "b", "c", "d", "e"]


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for module in ("fastapi", "uvicorn", "selenium"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} is missing"
    return None


def _need(reason: str | None) -> None:
    need(reason, "PLDP_BROWSER_TESTS", HOW)


# ------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    for module in ("fastapi", "uvicorn"):
        _need(None if importlib.util.find_spec(module) else f"{module} is not installed")
    srv = Server(tmp_path_factory.mktemp("pages") / "pldp.db").start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    _need(_missing())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SE_OFFLINE", "true")  # selenium must not look for (or download) a driver
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in (
            "--headless=new",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--window-size=1280,1100",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-extensions",
            "--disable-sync",
            "--no-first-run",
        ):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture
def browser(chromium: Any) -> Any:
    """The browser on a blank page (no earlier page polling), its logs drained."""
    chromium.get("about:blank")
    _requests(chromium), _errors(chromium)
    return chromium


def _campaign(server: Server, spec: Spec) -> tuple[Any, Any, str]:
    """Create ``spec``'s campaign: an admin client, an analyst client granted it, and its token."""
    admin = server.admin()
    admin.create_campaign(spec)
    token = admin.create_token("browser tests", [spec.id])["token"]
    return admin, server.client(token), token


def _wait(driver: Any, condition: Callable[[Any], Any], timeout: float = 10.0, what: str = "") -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition, what)


def _shown(element_id: str) -> Callable[[Any], Any]:
    """A wait condition: the element with this id, once it is displayed."""

    def check(driver: Any) -> Any:
        element = driver.find_element("id", element_id)
        return element if element.is_displayed() else False

    return check


def _js(driver: Any, script: str, *args: Any) -> Any:
    return driver.execute_script(script, *args)


def _loaded_urls(driver: Any) -> list[str]:
    """Every URL the current page loaded: its navigation and resource timing entries."""
    return _js(
        driver,
        "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))"
        ".map(e => e.name)",
    )


def _requests(driver: Any) -> list[dict[str, Any]]:
    """The requests the browser sent since the last call (the DevTools performance log)."""
    out = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            out.append(msg["params"]["request"])
    return out


def _errors(driver: Any) -> list[str]:
    """The browser console's errors since the last call (a content-security violation is one)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _stored(db: Path, campaign_id: str) -> list[tuple[str, Any]]:
    """(report id, payload) of every stored report, read from the store's file itself."""
    conn = store.connect(db, readonly=True)
    try:
        row = store.campaign(conn, campaign_id)
        assert row is not None
        return [(r["id"], r["payload"]) for r in store.stored_batch(conn, row.spec()).reports()]
    finally:
        conn.close()


def _ready(driver: Any, url: str) -> None:
    driver.get(url)
    _wait(driver, lambda d: _js(d, "return document.getElementById('survey').dataset.ready === 'true'"), what="form")


def _answer(driver: Any, answer_id: str, level_id: str | None = None) -> dict[str, Any]:
    """Click an answer (and a level) by its label, submit, wait for the thanks; the batch sent."""
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, f'label[for="{answer_id}"]').click()
    if level_id is not None:
        driver.find_element(By.CSS_SELECTOR, f'label[for="{level_id}"]').click()
    driver.find_element(By.ID, "submit").click()
    _wait(driver, _shown("thanks"), what="the thanks")
    return json.loads(driver.find_element(By.ID, "sent").get_attribute("textContent"))


# ------------------------------------------------------------------------------------ pages over HTTP


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def test_pages_and_static_files_over_http(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="http?")
    server.admin().create_campaign(spec)
    for path in (f"/c/{spec.id}", f"/dashboard/{spec.id}"):
        status, headers, body = _get(server.url + path)
        assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
        assert headers["content-security-policy"].startswith(CSP)
        assert f'data-campaign="{spec.id}"' in body.decode() and "{{" not in body.decode()
        assert b"http://" not in body and b"https://" not in body  # nothing from elsewhere
    types = {".mjs": "text/javascript", ".css": "text/css", ".html": "text/html"}
    static = Path(pldp.__file__).parent / "service" / "static"
    for name in ("pldp-client.mjs", "respondent.mjs", "dashboard.mjs", "common.mjs", "pldp.css", "respondent.html"):
        status, headers, body = _get(f"{server.url}/static/{name}")
        assert status == 200 and headers["content-type"].split(";")[0] == types[Path(name).suffix]
        assert headers["content-security-policy"].startswith(CSP) and headers["x-content-type-options"] == "nosniff"
        assert body == (static / name).read_bytes()
    # the page's copy of the client is the client itself (a link in git)
    repo_client = Path(__file__).parents[1] / "clients" / "js" / "pldp-client.mjs"
    if repo_client.exists():
        assert _get(f"{server.url}/static/pldp-client.mjs")[2] == repo_client.read_bytes()
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
        status, headers, body = _get(server.url + path)
        assert status == 404 and headers["content-type"] == "application/json", path
        assert set(json.loads(body)) == {"error", "reason"}, path


# ------------------------------------------------------------------------------------ the survey page


@pytest.mark.slow
def test_thirty_respondents_send_randomized_reports_only_to_the_collector(browser: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.IPRR(FIG1), question="Which one is yours?", labels=LABELS)
    _, analyst, _ = _campaign(server, spec)
    url = f"{server.url}/c/{spec.id}"
    sent, loaded, posts = [], [], []
    for i in range(30):
        _ready(browser, url)
        if i == 0:
            assert browser.find_element(By.ID, "title").text == "Which one is yours?"
            labels = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".choice label")]
            assert [lab.split(" (")[0] for lab in labels] == LABELS
            assert "ε = 0.1" in labels[0] and "may reveal it" in labels[3]  # per-answer budgets
            assert not browser.find_elements(By.CSS_SELECTOR, "fieldset.levels")  # IPRR has no levels
        batch = _answer(browser, "answer-0-2")  # "c" (budget 1.0)
        assert batch["format"] == "pldp.batch/1" and batch["spec"] == spec.id and len(batch["reports"]) == 1
        sent.append(batch["reports"][0])
        loaded += _loaded_urls(browser)
        # resubmission is off: the form is gone
        assert not browser.find_element(By.ID, "answer-form").is_displayed()
        for request in _requests(browser):
            loaded.append(request["url"])
            if request["method"] != "GET":
                posts.append(request)
    assert _errors(browser) == []  # no content-security violation, no script error

    # every request went to the collector: pages, scripts, the spec and the reports
    assert loaded and all(u.startswith(server.url + "/") for u in loaded), sorted(set(loaded))
    paths = {u[len(server.url) :] for u in loaded}
    assert paths == {
        f"/c/{spec.id}",
        "/static/pldp.css",
        "/static/pldp-client.mjs",
        "/static/common.mjs",
        "/static/respondent.mjs",
        f"/v1/campaigns/{spec.id}/spec",
        f"/v1/campaigns/{spec.id}/reports",
    }
    # the only bodies sent: one batch per respondent, exactly the randomized report shown
    assert len(posts) == 30
    for post, report in zip(posts, sent, strict=True):
        assert post["method"] == "POST" and post["url"] == f"{server.url}/v1/campaigns/{spec.id}/reports"
        assert json.loads(post["postData"]) == {"format": "pldp.batch/1", "spec": spec.id, "reports": [report]}

    # stored: exactly the reports sent, which decode and count 30
    assert analyst.estimate(spec.id)["n"] == 30
    stored = _stored(server.db, spec.id)
    assert sorted(stored) == sorted((r["id"], r["payload"]) for r in sent)
    tally = decode(spec, {"format": "pldp.batch/1", "spec": spec.id, "reports": sent})
    assert tally.n == 30 and int(np.sum(tally.counts)) == 30
    # randomized: IPRR reports "c" as itself with probability 0.125 and otherwise as "a" or "b",
    # never as "d" or "e"; 16 or more of 30 "c"s would happen with probability < 1e-7
    payloads = [p for _, p in stored]
    assert set(payloads) <= {0, 1, 2}
    assert payloads.count(2) <= 15, payloads


@pytest.mark.slow
def test_a_leveled_protocol_asks_for_the_privacy_level(browser: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(
        pldp.protocols.FEBSF([0.5, 1.0, 2.0], 0.5, 6, "krr"), question="Which day?", labels=list("MTWRFS")
    )
    _campaign(server, spec)
    _ready(browser, f"{server.url}/c/{spec.id}")
    levels = browser.find_elements(By.CSS_SELECTOR, "fieldset.levels .choice label")
    assert [e.text.split(" (")[0] for e in levels] == ["Level 1: ε = 0.5", "Level 2: ε = 1", "Level 3: ε = 2"]
    assert "most private" in levels[0].text and "least private" in levels[2].text
    help_text = browser.find_element(By.CSS_SELECTOR, "fieldset.levels .hint").text
    assert "smaller" in help_text and "itself randomized" in help_text  # FEBSF perturbs the level
    # an answer without a level is refused in the page, readably, and nothing is sent
    browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0-4"]').click()
    browser.find_element(By.ID, "submit").click()
    error = _wait(browser, _shown("error"), what="the error")
    assert "privacy level" in error.text
    assert _stored(server.db, spec.id) == []
    batch = _answer(browser, "answer-0-4", "level-0-1")
    (report,) = batch["reports"]
    assert set(report["payload"]) == {"level", "data"} and report["payload"]["level"] in (0, 1, 2)
    assert _stored(server.db, spec.id) == [(report["id"], report["payload"])]
    assert _errors(browser) == []


@pytest.mark.slow
def test_a_closed_campaign_says_so(browser: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Still open?", labels=["yes", "no", "maybe"])
    admin, _, _ = _campaign(server, spec)
    _ready(browser, f"{server.url}/c/{spec.id}")
    admin.close_campaign(spec.id)  # closed while the page is open: the POST gets 409
    browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0-0"]').click()
    browser.find_element(By.ID, "submit").click()
    closed = _wait(browser, _shown("closed"), what="the closed notice")
    assert "closed" in closed.text and not browser.find_element(By.ID, "answer-form").is_displayed()
    browser.get(f"{server.url}/c/{spec.id}")  # opened after closing: no form at all
    _wait(browser, _shown("closed"))
    assert not browser.find_element(By.ID, "answer-form").is_displayed()
    assert _stored(server.db, spec.id) == []


# ------------------------------------------------------------------------------------ the dashboard


def _bars(driver: Any, attribute: int = 0) -> dict[str, Any]:
    """The chart's method and n, and its bars' values and intervals (from their data- attributes)."""
    return _js(
        driver,
        """
        const svg = document.querySelectorAll('figure.attribute svg.chart')[arguments[0]];
        if (!svg) return null;
        const bars = [...svg.querySelectorAll('rect.bar')];
        return {method: svg.dataset.method, n: Number(svg.dataset.n),
                labels: bars.map(b => b.dataset.label),
                values: bars.map(b => Number(b.dataset.value)),
                lo: bars.map(b => Number(b.dataset.ciLow)), hi: bars.map(b => Number(b.dataset.ciHigh))};
        """,
        attribute,
    )


def _chart_is(driver: Any, method: str, n: int, attribute: int = 0) -> Callable[[Any], Any]:
    def check(d: Any) -> Any:
        bars = _bars(d, attribute)
        return bars if bars and bars["method"] == method and bars["n"] == n else False

    return check


def _same_as_api(bars: dict[str, Any], part: dict[str, Any]) -> None:
    assert bars["labels"] == part["labels"]
    np.testing.assert_allclose(bars["values"], part["frequencies"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(bars["lo"], part["ci_low"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(bars["hi"], part["ci_high"], rtol=0, atol=1e-9)


def _use_token(driver: Any, token: str) -> None:
    from selenium.webdriver.common.by import By

    field = driver.find_element(By.ID, "token")
    field.clear()
    field.send_keys(token)
    driver.find_element(By.ID, "use-token").click()


def _state(driver: Any, state: str, timeout: float = 10.0) -> str:
    """Wait for the dashboard's state; return its message as shown."""
    from selenium.webdriver.common.by import By

    _wait(driver, lambda d: _js(d, "return document.getElementById('dashboard').dataset.state") == state, timeout)
    return driver.find_element(By.ID, "message").text


@pytest.mark.slow
def test_the_dashboard_draws_the_estimate_live(browser: Any, server: Server, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    spec = Spec.from_mechanism(pldp.IPRR(FIG1), question="Which one is theirs?", labels=LABELS)
    _, analyst, token = _campaign(server, spec)
    rng = np.random.default_rng(11)
    respondent = server.client()
    respondent.submit(spec.id, Client(spec).reports(rng.choice(5, 3_000, p=[0.4, 0.3, 0.15, 0.1, 0.05])))
    browser.get(f"{server.url}/dashboard/{spec.id}")
    _state(browser, "no_token")
    _use_token(browser, token)
    assert _js(browser, f"return sessionStorage.getItem('pldp.token.{spec.id}')") == token

    bars = _wait(browser, _chart_is(browser, "unbiased", 3_000), what="bars")
    _same_as_api(bars, analyst.estimate(spec.id, "unbiased")["attributes"][0])
    assert browser.find_element(By.ID, "n").get_attribute("data-n") == "3000"
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart g.whisker")) == 5

    for method, level in (("mle", "0.95"), ("norm_sub", "0.9")):
        Select(browser.find_element(By.ID, "level")).select_by_value(level)
        Select(browser.find_element(By.ID, "method")).select_by_value(method)
        bars = _wait(browser, _chart_is(browser, method, 3_000), timeout=3, what=method)  # at once, not at the poll
        assert _js(browser, "return document.querySelector('svg.chart').dataset.level") == level
        _same_as_api(bars, analyst.estimate(spec.id, method, float(level))["attributes"][0])

    # live: new reports show within a poll or two
    respondent.submit(spec.id, Client(spec).reports(rng.choice(5, 500)))
    bars = _wait(browser, _chart_is(browser, "norm_sub", 3_500), timeout=8, what="the new n")
    _same_as_api(bars, analyst.estimate(spec.id, "norm_sub", 0.9)["attributes"][0])

    # the exact privacy table, the same rows as pldp.deploy.verify
    _wait(browser, lambda d: _js(d, "return document.getElementById('dashboard').dataset.privacy") == "verified")
    rows = browser.find_elements(By.CSS_SELECTOR, "#privacy-table tbody tr")
    want = verify(spec).rows
    assert len(rows) == len(want) == 3
    for row, w in zip(rows, want, strict=True):
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        assert cells[:2] == [w.part, w.subject] and cells[4] == "✓ holds"
        assert float(cells[2]) == pytest.approx(w.claimed, rel=1e-5)
        assert float(cells[3]) == pytest.approx(w.realised, rel=1e-5)
    assert "3 claims holds" in browser.find_element(By.ID, "privacy-summary").text

    shot = tmp_path / "dashboard.png"
    assert browser.save_screenshot(str(shot))
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    assert _errors(browser) == []


@pytest.mark.slow
def test_the_dashboard_explains_refusals(browser: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Any reports?", labels=["x", "y", "z"])
    admin, _, token = _campaign(server, spec)
    other = Spec.from_mechanism(pldp.KRR(2.0, 3), question="Another", labels=["x", "y", "z"])
    admin.create_campaign(other)
    other_token = admin.create_token("other", [other.id])["token"]

    browser.get(f"{server.url}/dashboard/{spec.id}")
    assert "Paste an analyst token" in _state(browser, "no_token")
    # the page is not blank without a token: the spec's privacy table is there
    _wait(browser, lambda d: _js(d, "return document.getElementById('dashboard').dataset.privacy") == "verified")
    assert browser.find_elements(By.CSS_SELECTOR, "#privacy-table tbody tr")
    for bad, state, words in (
        ("x" * 43, "unauthorized", "not valid"),
        (other_token, "forbidden", "may not read this campaign"),
        (server.admin_token, "forbidden", "admin token may not do this"),
        (token, "no_reports", "No reports yet"),
    ):
        _use_token(browser, bad)
        text = _state(browser, state)
        assert words in text and browser.find_element(By.ID, "message").is_displayed()
        assert not browser.find_elements(By.CSS_SELECTOR, "svg.chart")
    # the first report appears at the next poll
    server.client().submit(spec.id, Client(spec).reports([0, 1, 2, 2]))
    _wait(browser, _chart_is(browser, "unbiased", 4), timeout=8, what="the first reports")
    assert _state(browser, "ok") == ""
    # forgetting the token stops the polling and asks for one
    browser.find_element(By.ID, "forget-token").click()
    assert "Paste an analyst token" in _state(browser, "no_token")
    assert _js(browser, f"return sessionStorage.getItem('pldp.token.{spec.id}')") is None


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
    _, analyst, token = _campaign(server, spec)
    _ready(browser, f"{server.url}/c/{spec.id}")
    legends = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".question > fieldset > legend")]
    assert legends == ["Colour?", "Your privacy level for “Colour?”", "Season?", "Your privacy level for “Season?”"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "fieldset.levels")) == 2
    browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0-2"]').click()
    browser.find_element(By.CSS_SELECTOR, 'label[for="level-0-0"]').click()
    browser.find_element(By.CSS_SELECTOR, 'label[for="answer-1-1"]').click()
    browser.find_element(By.ID, "submit").click()  # attribute 2's level is missing
    _wait(browser, _shown("error"))
    assert "question 2 (Season?)" in browser.find_element(By.ID, "error").text
    (report,) = _answer(browser, "answer-1-1", "level-1-2")["reports"]
    assert len(report["payload"]) == 2 and all(set(p) == {"level", "data"} for p in report["payload"])
    assert _stored(server.db, spec.id) == [(report["id"], report["payload"])]

    rng = np.random.default_rng(5)
    answers = np.column_stack([rng.integers(0, 3, 2_000), rng.integers(0, 4, 2_000)])
    levels = rng.integers(0, 3, (2_000, 2))
    server.client().submit(spec.id, Client(spec).reports(answers, levels=levels))
    browser.get(f"{server.url}/dashboard/{spec.id}")
    _use_token(browser, token)
    _wait(browser, _chart_is(browser, "unbiased", 2_001, attribute=1), what="two charts")
    captions = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "figure.attribute figcaption")]
    assert captions == ["Colour?", "Season?"]
    got = analyst.estimate(spec.id)["attributes"]
    assert [part["labels"] for part in got] == spec.labels  # the spec's answers, not the oracle's indices
    for i, part in enumerate(got):
        _same_as_api(_bars(browser, i), part)
    assert _errors(browser) == []


# ------------------------------------------------------------------------------------ retries


@pytest.mark.slow
def test_a_report_is_resent_unchanged_when_the_collector_is_away(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Retry?", labels=["yes", "no", "maybe"])
    with Server(tmp_path / "retry.db") as srv:
        srv.admin().create_campaign(spec)
        _ready(browser, f"{srv.url}/c/{spec.id}")
        browser.find_element(By.CSS_SELECTOR, 'label[for="answer-0-1"]').click()
        srv.kill()  # the collector is gone when the respondent submits
        browser.find_element(By.ID, "submit").click()
        _wait(browser, lambda d: "trying again" in d.find_element(By.ID, "status").text, what="a retry")
        srv.start()  # back on the same port and file, within the page's retries
        _wait(browser, _shown("thanks"), timeout=15, what="the thanks")
        (report,) = json.loads(browser.find_element(By.ID, "sent").get_attribute("textContent"))["reports"]
        posts = [r for r in _requests(browser) if r["method"] == "POST"]
        assert len(posts) >= 2 and len({p["postData"] for p in posts}) == 1  # the same bytes each time
        assert _stored(srv.db, spec.id) == [(report["id"], report["payload"])]
