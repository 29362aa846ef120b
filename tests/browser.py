"""Debian's headless Chromium driven by selenium, against a real collector process: the fixtures'
bodies and the helpers of the browser tests (tests/test_service_browser.py,
tests/test_service_pages.py).

Each test module makes its own module-scoped fixture of :func:`serve` (one server per module) and
its per-test ``browser`` of :func:`blank`; the browser itself, :func:`launch`, is the session-scoped
``chromium`` fixture of tests/conftest.py (one per test process):

    server = pytest.fixture(scope="module")(browser.serve)

Chromium and chromedriver come from Debian (``apt-get install chromium chromium-driver``) and
selenium from the ``test`` extra; selenium is told not to download anything (``SE_OFFLINE``).
Without them the tests skip, unless ``PLDP_BROWSER_TESTS=required`` (as in ``.ci/run``): then
they fail.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.needs import need
from tests.service_server import Server

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
HOW = (
    "to run them: apt-get install chromium chromium-driver, and pip install 'pldp[test,service]' "
    "(selenium, fastapi, uvicorn); PLDP_BROWSER_TESTS=required makes them fail instead of skipping"
)
#: The start of the collector's Content-Security-Policy (pldp.service.pages).
CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'"
#: The window the tests start with (wide enough for the dashboard's two columns).
WINDOW = (1280, 1100)


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for module in ("fastapi", "uvicorn", "selenium"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} is missing"
    return None


def require(reason: str | None) -> None:
    need(reason, "PLDP_BROWSER_TESTS", HOW)


# ------------------------------------------------------------------------------------ fixtures


def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A collector process on a new database (a module's ``server`` fixture)."""
    for module in ("fastapi", "uvicorn"):
        require(None if importlib.util.find_spec(module) else f"{module} is not installed")
    srv = Server(tmp_path_factory.mktemp("pages") / "pldp.db").start()
    yield srv
    srv.stop()


def launch() -> Iterator[Any]:
    """Headless Chromium, its console and network logged (the ``chromium`` fixture of tests/conftest.py)."""
    require(missing())
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
            "--window-size={},{}".format(*WINDOW),
            "--hide-scrollbars",
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


def blank(chromium: Any) -> Any:
    """The browser on a blank page (no earlier page polling), its logs drained (a ``browser`` fixture)."""
    chromium.get("about:blank")
    requests(chromium), errors(chromium)
    return chromium


# ------------------------------------------------------------------------------------ helpers


def wait(driver: Any, condition: Callable[[Any], Any], timeout: float = 10.0, what: str = "") -> Any:
    """Poll ``condition(driver)`` every 50 ms until it is true; its value."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition, what)


def shown(element_id: str) -> Callable[[Any], Any]:
    """A wait condition: the element with this id, once it is displayed."""

    def check(driver: Any) -> Any:
        element = driver.find_element("id", element_id)
        return element if element.is_displayed() else False

    return check


def js(driver: Any, script: str, *args: Any) -> Any:
    return driver.execute_script(script, *args)


def texts(driver: Any, selector: str) -> list[str]:
    """The text of every element that matches ``selector``, all read at one moment: the dashboard
    redraws its chart and tables at every poll, so elements found by one call may be gone (stale)
    by the next."""
    out: list[str] = js(driver, "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", selector)
    return out


def loaded_urls(driver: Any) -> list[str]:
    """Every URL the current page loaded: its navigation and resource timing entries."""
    return js(
        driver,
        "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))"
        ".map(e => e.name)",
    )


def requests(driver: Any) -> list[dict[str, Any]]:
    """The requests the browser sent since the last call (the DevTools performance log)."""
    out = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            out.append(msg["params"]["request"])
    return out


def errors(driver: Any) -> list[str]:
    """The browser console's errors since the last call (a content-security violation is one)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def inner_size(driver: Any) -> list[int]:
    """``[innerWidth, innerHeight]`` once the page has drawn two frames: read at once after a
    resize, they may still be the old window's (the page draws the new size at its next frame)."""
    size: list[int] = driver.execute_async_script(
        "const done = arguments[0];"
        "requestAnimationFrame(() => requestAnimationFrame(() => done([innerWidth, innerHeight])))"
    )
    return size


@contextlib.contextmanager
def viewport(driver: Any, width: int, height: int) -> Iterator[None]:
    """The page's viewport (``innerWidth`` x ``innerHeight``) at this size, then the start window again."""
    for _ in range(5):  # a loaded machine may apply a resize late: measure and correct again
        inner = inner_size(driver)
        if inner == [width, height]:
            break
        outer = driver.get_window_rect()
        driver.set_window_rect(width=outer["width"] + width - inner[0], height=outer["height"] + height - inner[1])
    try:
        assert inner_size(driver) == [width, height]
        yield
    finally:
        driver.set_window_rect(width=WINDOW[0], height=WINDOW[1])


@contextlib.contextmanager
def slow_network(driver: Any, latency_ms: float) -> Iterator[None]:
    """Every request of the page answered ``latency_ms`` later (DevTools network emulation): the
    page's state between an action and its answer lasts long enough for a test to see it."""
    driver.execute_cdp_cmd("Network.enable", {})
    conditions = {"offline": False, "downloadThroughput": -1, "uploadThroughput": -1}
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {**conditions, "latency": latency_ms})
    try:
        yield
    finally:
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {**conditions, "latency": 0})


def get(url: str, accept: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """GET ``url`` (with this ``Accept`` header): status, headers (lower-case names), body."""
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


# ------------------------------------------------------------------------------------ the pages


def campaign(server: Server, spec: Any) -> tuple[Any, Any, str]:
    """Create ``spec``'s campaign: an admin client, an analyst client granted it, and its token."""
    admin = server.admin()
    admin.create_campaign(spec)
    token = admin.create_token("browser tests", [spec.id])["token"]
    return admin, server.client(token), token


def stored(db: Path, campaign_id: str) -> list[tuple[str, Any]]:
    """(report id, payload) of every stored report, read from the store's file itself."""
    from pldp.service import store

    conn = store.connect(db, readonly=True)
    try:
        row = store.campaign(conn, campaign_id)
        assert row is not None
        return [(r["id"], r["payload"]) for r in store.stored_batch(conn, row.spec()).reports()]
    finally:
        conn.close()


def new_device(driver: Any, origin: str) -> None:
    """Forget what the pages of ``origin`` kept in this browser (localStorage, IndexedDB): the next
    respondent answers as on a device of her own (the survey page keeps each round's report)."""
    driver.execute_cdp_cmd("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "local_storage,indexeddb"})


def answer(driver: Any, answer_id: str, level_id: str | None = None) -> dict[str, Any]:
    """Click an answer (and a level) by its label, submit, wait for the thanks; the batch sent."""
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, f'label[for="{answer_id}"]').click()
    if level_id is not None:
        driver.find_element(By.CSS_SELECTOR, f'label[for="{level_id}"]').click()
    driver.find_element(By.ID, "submit").click()
    wait(driver, shown("thanks"), what="the thanks")
    out: dict[str, Any] = json.loads(driver.find_element(By.ID, "sent").get_attribute("textContent"))
    return out


def ready(driver: Any, url: str) -> None:
    """Open a survey page and wait for its form."""
    driver.get(url)
    wait(driver, lambda d: js(d, "return document.getElementById('survey').dataset.ready === 'true'"), what="form")


def bars(driver: Any, attribute: int = 0) -> dict[str, Any] | None:
    """The chart's method, level and n, and its bars' values and intervals (their data- attributes)."""
    out: dict[str, Any] | None = js(
        driver,
        """
        const svg = document.querySelectorAll('figure.attribute svg.chart')[arguments[0]];
        if (!svg) return null;
        const bars = [...svg.querySelectorAll('rect.bar')];
        return {method: svg.dataset.method, level: svg.dataset.level, n: Number(svg.dataset.n),
                labels: bars.map(b => b.dataset.label),
                values: bars.map(b => Number(b.dataset.value)),
                lo: bars.map(b => Number(b.dataset.ciLow)), hi: bars.map(b => Number(b.dataset.ciHigh))};
        """,
        attribute,
    )
    return out


def chart_is(method: str, n: int, attribute: int = 0, level: str | None = None) -> Callable[[Any], Any]:
    """A wait condition: the chart drawn from an estimate by ``method`` (at ``level``) of ``n`` reports."""

    def check(d: Any) -> Any:
        got = bars(d, attribute)
        ok = got and got["method"] == method and got["n"] == n and (level is None or got["level"] == level)
        return got if ok else False

    return check


def use_token(driver: Any, token: str) -> None:
    """Type a token into the dashboard and press "Use token" (first "Change token" where the form
    is one line, a token kept in the tab)."""
    from selenium.webdriver.common.by import By

    asking = "return document.getElementById('token-form').dataset.asking"
    if wait(driver, lambda d: js(d, asking), what="the token form") == "false":  # set once the page's script ran
        driver.find_element(By.ID, "change-token").click()
    field = driver.find_element(By.ID, "token")
    field.clear()
    field.send_keys(token)
    driver.find_element(By.ID, "use-token").click()


def seq(driver: Any) -> int:
    """How many messages the dashboard has shown (``data-seq``): a state seen after an action must
    come with a larger number, or it may be the message of the step before."""
    return int(js(driver, "return document.getElementById('dashboard').dataset.seq"))


def state(driver: Any, expected: str, since: int | None = None, timeout: float = 10.0) -> str:
    """Wait for the dashboard's state ``expected``, shown after message number ``since`` (see
    :func:`seq`; None: any); return its message as shown."""
    from selenium.webdriver.common.by import By

    def check(d: Any) -> bool:
        got, number = js(d, "const m = document.getElementById('dashboard').dataset; return [m.state, Number(m.seq)]")
        return bool(got == expected and (since is None or number > since))

    wait(driver, check, timeout, f"the state {expected!r} after message {since}")
    return str(driver.find_element(By.ID, "message").text)
