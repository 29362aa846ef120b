"""The collector's pages say what is true and fit the screen: Chromium against a real collector.

* The survey page says, per answer, whether it is protected and at what ε, and what ε promises;
  the ε it shows bound the exact channel of every mechanism and protocol (computed here from the
  spec's integer thresholds).
* The dashboard fits a phone (390x844) and a laptop (1280x900): no horizontal overflow, every bar
  on screen, the chart above the fold, a labelled axis, answers by their labels, rounded numbers
  and plain words. Screenshots go to ``$PLDP_SHOTS`` when set (else the test's temporary folder).
* A wrong address is a page for a person and JSON for a program; ``/docs`` lists the API's
  operations and sends them with nothing from another origin; ``/redoc`` is a clean 404.

The browser and its helpers are in tests/browser.py.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.channel.sampling import GRID
from pldp.client import Client
from pldp.deploy import Spec, verify
from pldp.deploy.claimwords import claim_words
from tests import browser as chrome
from tests.browser import (
    CSP,
    campaign,
    chart_is,
    errors,
    get,
    js,
    ready,
    requests,
    seq,
    texts,
    use_token,
    viewport,
    wait,
)
from tests.deploy_cases import oracle_cases, spec_of
from tests.service_server import Server

server = pytest.fixture(scope="module")(chrome.serve)
browser = pytest.fixture(chrome.blank)

FIG1 = pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, float("inf"), float("inf")])
DIAGNOSES = ["HIV", "Cancer", "Hepatitis", "Flu", "None"]
#: What a browser navigating to an address sends (Chromium's own header).
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
SIZES = [(390, 844), (1280, 900)]


def _text(driver: Any, element_id: str) -> str:
    """The element's text as shown, no-break spaces (as in "0\u00a0%") read as spaces."""
    return str(driver.find_element("id", element_id).text).replace("\xa0", " ")


# ------------------------------------------------------------------------------------ the survey's words


def _protection_shown(driver: Any) -> tuple[list[str | None], list[str]]:
    """Each choice's ``data-epsilon`` and its label's text, of the survey page open in ``driver``."""
    choices = js(
        driver,
        "return [...document.querySelectorAll('#questions fieldset:not(.levels) .choice')]"
        ".map(c => [c.dataset.epsilon ?? null, c.querySelector('label').textContent])",
    )
    return [c[0] for c in choices], [c[1] for c in choices]


def test_the_survey_page_says_which_answers_are_protected_and_what_epsilon_means(browser: Any, server: Server) -> None:
    # IPRR: a report of a non-sensitive answer (weight 0) names it for certain
    spec = Spec.from_mechanism(pldp.IPRR(FIG1), question="Which diagnosis?", labels=DIAGNOSES)
    campaign(server, spec)
    ready(browser, f"{server.url}/c/{spec.id}")
    eps, labels = _protection_shown(browser)
    assert eps == ["0.1", "0.5", "1", "inf", "inf"]
    assert [lab.split(" (")[1] for lab in labels] == [
        "protected at ε = 0.1)",
        "protected at ε = 0.5)",
        "protected at ε = 1)",
        "not protected: your report may reveal this answer)",
        "not protected: your report may reveal this answer)",
    ]
    said = _text(browser, "protection")
    assert "Answers “HIV”, “Cancer” and “Hepatitis” are protected, each at the ε shown beside it." in said
    assert "“Flu” and “None” are not protected: if you answer “Flu” or “None”, your report may reveal it." in said
    # what ε promises, with the spec's smallest ε: e^0.1 = 1.105...
    meaning = _text(browser, "epsilon-meaning")
    assert "the smaller ε, the more private" in meaning
    assert "“Protected at ε = 0.1” means: any report you might send is at most e0.1 ≈ 1.11 times as likely" in meaning
    assert "the report alone never makes them sure of it" in meaning
    assert "for sure" not in browser.find_element("tag name", "main").text  # the old, false promise

    # KRR: every answer alike, at its ε
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Which colour?", labels=["red", "green", "blue"])
    campaign(server, spec)
    ready(browser, f"{server.url}/c/{spec.id}")
    eps, labels = _protection_shown(browser)
    assert eps == ["1", "1", "1"] and labels == ["red", "green", "blue"]  # no note: the summary says it
    assert _text(browser, "protection-questions") == "Every answer is protected at ε = 1."
    assert "e1 ≈ 2.72 times" in _text(browser, "epsilon-meaning")
    assert errors(browser) == []


def test_the_survey_page_explains_levels_and_attributes(browser: Any, server: Server) -> None:
    cases = oracle_cases()
    said = {}
    for name in ("febsf-rappor", "rcf", "mpldp", "idue-opt1-avg", "oue-ps"):
        spec = spec_of(cases[name], name)
        server.admin().create_campaign(spec)
        ready(browser, f"{server.url}/c/{spec.id}")
        said[name] = _text(browser, "protection-questions")
    # a hidden, perturbed level: its protection by the whole report (the spec's verified
    # level_epsilon, 3.42), not the level report's own 0.5 (ERRATA FEBSF-6)
    assert said["febsf-rappor"] == (
        "Your answer is protected at the ε of the privacy level you choose for it.\n"
        "The level you choose is not sent as such; your report hides it only partly (it is protected at ε = 3.42)."
    )
    assert "The level you choose is sent as it is, with your report." in said["rcf"]
    assert said["mpldp"] == (
        "Your answer to “first?” is protected at the ε of the privacy level you choose for it.\n"
        "The level you choose is sent as it is, with your report.\n"
        "Your answer to “second?” is protected at the ε of the privacy level you choose for it.\n"
        "The level you choose is sent as it is, with your report.\n"
        "Your report as a whole protects all your answers together at the sum of the ε you choose for them."
    )
    # AvgID-LDP protects a pair at the mean of its budgets: answer 0 (0.5) against 3 (2) at 1.25
    assert "each at the ε shown beside it" in said["idue-opt1-avg"]
    assert "one of them (or from a filler)" in said["oue-ps"]
    assert errors(browser) == []


# ------------------------------------------------------------------------------------ the ε are true


def _exact(node: dict[str, Any], count: int, others: int) -> list[float]:
    """max over reports r of answer x and answers x' != x (of the first ``others``) of
    ln Q(r|x) / Q(r|x'), from the node's integer thresholds; inf where some Q(r|x') is 0."""
    out = []
    for x in range(count):
        worst = 0.0
        if node["kind"] == "direct":
            keep, w = node["keep"], node["weights"]
            for y in range(node["d"]):
                q = w[y] + keep * (y == x)
                if q == 0:
                    continue  # x never reports y
                for x2 in range(others):
                    q2 = w[y] + keep * (y == x2)
                    worst = max(worst, math.inf if q2 == 0 else math.log(q / q2))
        else:  # unary: bits other than x and x' cancel; x's bit set and x''s clear is the worst
            a, b = node["a"], node["b"]
            if b[x] == 0:  # ULDP: only x's holders set x's bit
                worst = math.inf
            for x2 in range(others):
                if x2 != x and b[x] > 0:
                    worst = max(worst, math.log(a[x] * (GRID - b[x2]) / (b[x] * (GRID - a[x2]))))
        out.append(worst)
    return out


def _exact_of(root: dict[str, Any]) -> list[list[list[float]]]:
    """Per question, per level (one for a node without levels), the exact one-sided ratio per answer."""
    parts = root["parts"] if root["kind"] == "attributes" else [root]
    out = []
    for node in parts:
        if node["kind"] == "leveled":
            out.append([_exact(item, node["d"], node["d"]) for item in node["items"]])
        elif node["kind"] == "padding":
            out.append([_exact(node["inner"], node["d"], node["inner"]["d"])])
        else:
            out.append([_exact(node, node["d"], node["d"])])
    return out


def test_the_epsilons_shown_bound_every_channel(browser: Any, server: Server) -> None:
    """protection.mjs, run in the page, against the exact channel of every mechanism and protocol:
    an answer is "not protected" exactly where some report of it cannot come from another answer,
    and otherwise no report of it is more than e^eps times as likely under another answer."""
    specs = {name: json.loads(spec_of(oracle, name).to_json()) for name, oracle in oracle_cases().items()}
    # free-text answers: the claims name their buckets by number ("a report of bucket 2"), in both languages
    hashed = Spec.from_mechanism(oracle_cases()["iprr"], question="a word?", labels="hashed")
    specs["iprr-hashed"] = json.loads(hashed.to_json())
    browser.get(f"{server.url}/docs")
    shown, rows = browser.execute_async_script(
        """
        const [specs, done] = arguments;
        const inf = (e) => (e === Infinity ? "inf" : e);
        const levels = (q) => (q.byLevel ?? [q.answers]).map((l) => l.map(inf));
        Promise.all([import('/static/protection.mjs'), import('/static/pldp-client.mjs')]).then(([m, client]) => done([
          Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, m.protection(spec).map(levels)])),
          Object.values(specs).flatMap((spec) => client.verify(spec).rows.map((row) => m.claimWords(spec, row))),
        ]));
        """,
        specs,
    )
    # the dashboard's privacy table reads every claim of every spec: answers by label, levels by number
    assert rows and not [r for r in rows if re.search(r"\b(output|item) \d|root|eps=", r["where"] + r["what"])]
    # and pldp spec verify says the same words (pldp.deploy.claimwords, a port of claimWords)
    said = [claim_words(spec, row) for spec in specs.values() for row in verify(spec).rows]
    assert sorted(said) == sorted((r["where"], r["what"]) for r in rows)  # the page's specs come in another order
    assert ("every report", "a report of bucket 2") in said
    for name, spec in specs.items():
        exact = _exact_of(spec["sampler"]["root"])
        assert len(shown[name]) == len(exact), name
        for said_q, exact_q in zip(shown[name], exact, strict=True):
            for said_level, exact_level in zip(said_q, exact_q, strict=True):
                for x, (said, true) in enumerate(zip(said_level, exact_level, strict=True)):
                    if said == "inf":
                        assert true == math.inf, (name, x)
                    else:
                        assert true <= said * (1 + 1e-12), (name, x, said, true)
    assert shown["iprr"] == shown["iprr-hashed"] == [[[0.1, 0.5, 1, "inf", "inf"]]]
    assert shown["urr"] == [[[1, 1, "inf", "inf"]]]
    assert shown["krr"] == [[[1, 1, 1, 1]]]
    assert shown["idue-opt0"] == [[[0.5, 0.5, 1, 2, 2]]]  # MinID-LDP: each answer at its own budget
    assert shown["idue-opt1-avg"] == [[[1.25, 1.25, 1.5, 2, 2]]]  # AvgID-LDP: the mean with the largest
    assert shown["rcf"] == [[[0.5] * 6, [1] * 6, [2] * 6]]
    assert (
        shown["urap"][0][0][-1] == "inf" and shown["urap"][0][0][0] != "inf"
    )  # ULDP: a non-sensitive answer may be revealed
    assert errors(browser) == []


# ------------------------------------------------------------------------------------ the layout


def _shots(tmp_path: Path) -> Path:
    where = Path(os.environ.get("PLDP_SHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where


def _fits(driver: Any) -> None:
    """No horizontal overflow: not of the page, nor hidden in a table's or chart's scroll box."""
    width, inner = js(driver, "return [document.documentElement.scrollWidth, innerWidth]")
    assert width <= inner, f"the page is {width} px wide in a {inner} px window"
    boxes = js(
        driver,
        "return [...document.querySelectorAll('.table-wrap, .chart-scroll, .panel, fieldset')]"
        ".filter(e => e.offsetParent).map(e => [e.className, e.scrollWidth, e.clientWidth])",
    )
    assert all(scroll <= client + 1 for _, scroll, client in boxes), boxes


def test_the_pages_fit_a_phone_and_a_laptop(browser: Any, server: Server, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.IPRR(FIG1), question="Which diagnosis do you have?", labels=DIAGNOSES)
    _, _, token = campaign(server, spec)
    rng = np.random.default_rng(3)
    server.client().submit(spec.id, Client(spec).reports(rng.choice(5, 3_000, p=[0.02, 0.04, 0.07, 0.17, 0.7])))
    shots = _shots(tmp_path)
    for width, height in SIZES:
        with viewport(browser, width, height):
            ready(browser, f"{server.url}/c/{spec.id}")
            _fits(browser)
            assert browser.save_screenshot(str(shots / f"survey-{width}x{height}.png"))

            browser.get(f"{server.url}/dashboard/{spec.id}")
            use_token(browser, token)
            wait(browser, chart_is("unbiased", 3_000), what="the chart")
            wait(browser, lambda d: js(d, "return document.getElementById('dashboard').dataset.privacy") == "verified")
            _fits(browser)
            chart = js(browser, "return document.querySelector('svg.chart').getBoundingClientRect().toJSON()")
            assert chart["right"] <= width
            if (width, height) == (1280, 900):
                assert chart["top"] < 900 and chart["bottom"] <= 900, chart  # all of it above the fold
            boxes = "return [...document.querySelectorAll('rect.bar')].map(b => b.getBoundingClientRect().toJSON())"
            for bar in js(browser, boxes):
                assert 0 <= bar["left"] and bar["right"] <= width, (width, bar)
            # the axis and the answers are labelled, the numbers rounded, the words plain
            # (read with texts(): the chart is redrawn at every poll, its elements replaced)
            assert texts(browser, "svg.chart .axis-title") == ["Estimated share"]
            ticks = texts(browser, "svg.chart .tick")
            assert ticks and all(re.fullmatch(r"−?\d+(\.\d+)?%", t) for t in ticks), ticks
            labels = texts(browser, "svg.chart .label")
            assert labels == [f"{lab}{lab}" for lab in DIAGNOSES]  # each with its <title>
            what = texts(browser, "#privacy-table tbody td:nth-child(2)")
            assert what == ["a report of “HIV”", "a report of “Cancer”", "a report of “Hepatitis”"]
            promised = texts(browser, "#privacy-table tbody td.num")
            assert promised == ["0.1", "0.1", "0.5", "0.5", "1", "1"]  # 4 significant digits, not 0.09999999988
            answers = _text(browser, "privacy-answers")
            assert "“HIV”: ε = 0.1" in answers and "“Flu” and “None”: not protected" in answers
            browser.find_element(By.CSS_SELECTOR, "figure.attribute details summary").click()
            cells = texts(browser, "table.numbers td")
            number = r"−?\d+(\.\d)?\s%"  # a standard error of a few % leaves one decimal
            assert len(cells) == 15 and all(re.fullmatch(rf"{number}( to {number})?", c) for c in cells), cells
            page = _text(browser, "dashboard")
            assert "simplex" not in page and "output 0" not in page
            assert "protective noise" in page  # what an unbiased estimate off the simplex means
            assert "can push a share below 0 %" in _text(browser, "method-help")
            _fits(browser)
            js(browser, "window.scrollTo(0, 0)")
            assert browser.save_screenshot(str(shots / f"dashboard-{width}x{height}.png"))
            js(browser, "document.getElementById('privacy').scrollIntoView()")
            assert browser.save_screenshot(str(shots / f"dashboard-{width}x{height}-privacy.png"))
            assert errors(browser) == []
    # drawn again at a new width: from the laptop's to the phone's
    browser.get(f"{server.url}/dashboard/{spec.id}")
    wait(browser, chart_is("unbiased", 3_000), what="the chart")
    with viewport(browser, 390, 844):
        right = "return document.querySelector('svg.chart').getBoundingClientRect().right"
        wait(browser, lambda d: js(d, right) <= 390, what="the chart drawn again")
        _fits(browser)


def test_on_a_phone_the_estimate_starts_on_the_first_screen(browser: Any, server: Server, tmp_path: Path) -> None:
    """At 390x844, once the collector took the token, the token form is one line and the whole chart
    is on the first screen (the form with its help filled it); "Change token" opens the field again,
    and the polls leave it open. One report and one promise are said in the singular."""
    from selenium.webdriver.common.by import By

    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="How did you sleep?", labels=["well", "badly", "not at all"])
    _, _, token = campaign(server, spec)
    server.client().submit(spec.id, Client(spec).reports([0]))
    field = "return document.getElementById('token').checkVisibility()"
    with viewport(browser, 390, 844):
        browser.get(f"{server.url}/dashboard/{spec.id}")
        assert js(browser, field) and not browser.find_element(By.ID, "token-in-use").is_displayed()
        use_token(browser, token)
        wait(browser, chart_is("unbiased", 1), what="the chart")
        wait(browser, lambda d: js(d, "return document.getElementById('dashboard').dataset.privacy") == "verified")
        js(browser, "window.scrollTo(0, 0)")
        chart = js(browser, "return document.querySelector('svg.chart').getBoundingClientRect().toJSON()")
        assert chart["top"] < 844 and chart["bottom"] <= 844, chart  # all of it on the first screen
        assert not js(browser, field) and browser.find_element(By.ID, "token-in-use").is_displayed()
        assert browser.save_screenshot(str(_shots(tmp_path) / "dashboard-390x844-token-in-use.png"))
        assert _text(browser, "summary").startswith("1 report · ")
        privacy = _text(browser, "privacy-summary")
        assert privacy.startswith("The one promise of the campaign's definition holds.") and "1 promises" not in privacy
        browser.find_element(By.ID, "change-token").click()
        before = seq(browser)
        wait(browser, lambda d: seq(d) > before + 1, what="two polls")
        assert js(browser, field) and js(browser, "return document.activeElement.id") == "token"
        use_token(browser, token)
        wait(browser, lambda d: not js(d, field), what="the one-line form again")
    assert errors(browser) == []


# ------------------------------------------------------------------------------------ wrong addresses


def test_which_clients_get_a_page() -> None:
    pytest.importorskip("fastapi")
    from pldp.service.pages import wants_html

    assert wants_html(BROWSER_ACCEPT) and wants_html("text/html") and wants_html("text/*;q=0.9, */*;q=0.5")
    for accept in (None, "", "*/*", "application/json", "application/json, text/html;q=0.5", "text/html;q=0"):
        assert not wants_html(accept), accept


def test_a_wrong_address_is_a_page_for_people_and_json_for_programs(server: Server) -> None:
    pages = {
        "/c/" + "0" * 32: "No such survey",
        "/c/not-an-id": "No such survey",
        "/dashboard/" + "f" * 32: "No such campaign",
        "/redoc": "Page not found",
        "/docs/oauth2-redirect": "Page not found",
        "/nothing/here": "Page not found",
    }
    for path, title in pages.items():
        status, headers, body = get(server.url + path, BROWSER_ACCEPT)
        assert status == 404 and headers["content-type"] == "text/html; charset=utf-8", path
        assert headers["content-security-policy"].startswith(CSP) and "Accept" in headers["vary"], path
        text = body.decode()
        assert f"<h1>{title}</h1>" in text and "/docs" in text and "{{" not in text, path
        assert "http://" not in text and "https://" not in text
        for accept in (None, "*/*", "application/json"):
            status, headers, body = get(server.url + path, accept)
            assert status == 404 and headers["content-type"] == "application/json", (path, accept)
            assert set(json.loads(body)) == {"error", "reason"} and "Accept" in headers["vary"]
    for path in ("/v1/campaigns/" + "0" * 32 + "/spec", "/v1/nothing", "/static/nothing.js"):  # the API: JSON
        status, headers, _ = get(server.url + path, BROWSER_ACCEPT)
        assert status == 404 and headers["content-type"] == "application/json", path


def test_a_person_who_mistypes_a_survey_link_reads_what_to_do(browser: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{server.url}/c/{'1' * 31}")
    # on a loaded machine the driver may hand back control before the new document is read
    (heading,) = wait(browser, lambda d: d.find_elements(By.TAG_NAME, "h1"), what="the page's heading")
    assert heading.text == "No such survey"
    assert "Check the link you were given" in browser.find_element(By.TAG_NAME, "main").text
    assert all(r["url"].startswith(server.url + "/") for r in requests(browser))
    assert errors(browser) == [] or all("404" in e for e in errors(browser))


# ------------------------------------------------------------------------------------ /docs


def test_the_api_page_lists_every_operation_and_sends_them_offline(browser: Any, server: Server) -> None:
    from selenium.webdriver.common.by import By

    status, headers, body = get(f"{server.url}/docs")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert headers["content-security-policy"].startswith(CSP)
    for word in (b"http://", b"https://", b"cdn", b"swagger-ui", b"redoc"):
        assert word not in body.lower(), word
    schema = json.loads(get(f"{server.url}/openapi.json")[2])
    want = sorted((m.upper(), p) for p, item in schema["paths"].items() for m in item)

    browser.get(f"{server.url}/docs")
    loaded = "return document.getElementById('api').dataset.ready === 'true'"
    wait(browser, lambda d: js(d, loaded), what="the API page")
    ops = "return [...document.querySelectorAll('details.operation')].map(e => [e.dataset.method, e.dataset.path])"
    listed = js(browser, ops)
    assert sorted(map(tuple, listed)) == want and len(want) >= 13
    assert "pldp collector" in browser.find_element(By.ID, "api-title").text

    def send(op_id: str, **fields: str) -> tuple[int, str]:
        op = browser.find_element(By.ID, op_id)
        if not op.get_attribute("open"):
            op.find_element(By.TAG_NAME, "summary").click()
        for name, value in fields.items():
            field = op.find_element(By.NAME, f"param-{name}")
            field.clear()
            field.send_keys(value)
        answers = "return Number(document.getElementById('api').dataset.answers || 0)"
        before = js(browser, answers)
        op.find_element(By.CSS_SELECTOR, "form.try button").click()
        wait(browser, lambda d: js(d, answers) > before, what=f"the answer to {op_id}")  # this one, not the last
        head = op.find_element(By.CSS_SELECTOR, ".answer-head")
        return int(head.get_attribute("data-status")), op.find_element(By.CSS_SELECTOR, "pre.answer").text

    code, answer = send("op-get-v1-health")
    assert code == 200 and json.loads(answer)["status"] == "ok"
    code, answer = send("op-get-v1-campaigns")  # no token yet
    assert code == 401 and json.loads(answer)["error"] == "unauthorized"
    browser.find_element(By.ID, "token").send_keys(server.admin_token)
    browser.find_element(By.ID, "use-token").click()
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="docs?")
    server.admin().create_campaign(spec)
    browser.refresh()  # the token stays in the tab
    wait(browser, lambda d: js(d, loaded), what="the API page again")
    code, answer = send("op-get-v1-campaigns-campaign-id-spec", campaign_id=spec.id)
    assert code == 200 and json.loads(answer)["id"] == spec.id
    code, answer = send("op-get-v1-campaigns")
    assert code == 200 and spec.id in answer
    # every request stayed on the collector, and no content-security rule was broken
    sent = [r["url"] for r in requests(browser)]
    assert sent and all(u.startswith(server.url + "/") for u in sent), sorted(set(sent))
    assert [e for e in errors(browser) if "401" not in e] == []
