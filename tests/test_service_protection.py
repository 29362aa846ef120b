"""The pages say in plain words what is protected (issue "Caps that mean what they say"), in a real
headless Chromium against a real ``pldp serve``.

* ``GET /v1/campaigns/{id}/round`` carries a memoized campaign's ``protection`` (computed by the
  collector from ``pldp.privacy.over_rounds``, typed in ``/openapi.json``): its answer at eps_inf
  each time it is new, and the whole-history epsilon over the spec's rounds cap, or without one
  over the rounds so far and the next.
* The survey page and the dashboard say both: "your answer, at ε∞ = 2 each time it is new;
  whether and when your answer changes, at ε = 6.16 over this campaign's 8 rounds" (L-GRR over two
  answers, eps_inf = 2, eps_1 = 1), "at most" where the accountant gives a bound, and without a
  rounds cap that it weakens with each round.
* What the browser has shared no longer claims that memoized reports tell at most what one answer
  at the total ε would; on an item-personalized survey (IPRR, L-IPRR) the survey's line says the
  respondent's own answer's protection and why the count is the survey's least protected answer's.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

import pldp
from pldp.deploy import Spec
from pldp.deploy.history import whole_history
from pldp.privacy import over_rounds
from tests import browser as chrome
from tests.browser import answer, errors, get, js, new_device, ready, shown, wait
from tests.protection_cases import CAPPED, CAPPED_PROTECTION, LGRR
from tests.service_server import Server

server = pytest.fixture(scope="module")(chrome.serve)
browser = pytest.fixture(chrome.blank)

B = pldp.ItemBudgets.from_array


def _round(server: Server, spec: Spec) -> dict[str, Any]:
    status, _, body = get(f"{server.url}/v1/campaigns/{spec.id}/round")
    assert status == 200
    out: dict[str, Any] = json.loads(body)
    return out


def _create(server: Server, spec: Spec, rounds: str = "once") -> Any:
    admin = server.admin()
    admin.create_campaign(spec, rounds=rounds)
    return admin


def _paragraphs(driver: Any, element_id: str) -> list[str]:
    out: list[str] = js(
        driver,
        "return [...document.getElementById(arguments[0]).querySelectorAll('p')].map(p => p.textContent)",
        element_id,
    )
    return out


def _dashboard_rounds(driver: Any, server: Server, spec: Spec) -> list[str]:
    """The dashboard's sentences about a device's rounds (no token needed: the privacy column)."""
    driver.get(f"{server.url}/dashboard/{spec.id}")
    wait(driver, lambda d: js(d, "return document.getElementById('privacy-rounds').dataset.ready") == "true")
    return _paragraphs(driver, "privacy-rounds")


def _shared(driver: Any) -> dict[str, Any]:
    out: dict[str, Any] = js(
        driver,
        """
        const s = document.getElementById('shared');
        return {items: [...s.querySelectorAll('li')].map(li => li.textContent),
                total: s.querySelector('#shared-total')?.textContent ?? null};
        """,
    )
    return out


# ------------------------------------------------------------------------------------ the API


def test_the_round_carries_a_memoized_campaigns_protection(server: Server) -> None:
    _create(server, CAPPED, "daily")
    found = _round(server, CAPPED)["protection"]
    history = found.pop("history")
    assert found == {**CAPPED_PROTECTION, "next": None}
    assert history["rounds"] == 8 and history["exact"] is True and round(history["epsilon"], 2) == 6.16
    assert history["epsilon"] == pytest.approx(over_rounds(LGRR, 8).epsilon, rel=1e-12)

    # without a cap: over the rounds so far (one report per round), and after the next
    uncapped = Spec.from_mechanism(LGRR, question="Slept well, uncapped?", labels=["yes", "no"])
    admin = _create(server, uncapped, "manual")
    one = _round(server, uncapped)["protection"]
    assert (one["rounds_cap"], one["history"]["rounds"], one["next"]["rounds"]) == (None, 1, 2)
    assert one["values_epsilon"] is None and round(one["history"]["epsilon"], 2) == 1.0
    opened = admin.open_round(uncapped.id)["protection"]  # the admin's answer carries it too
    assert (opened["history"]["rounds"], round(opened["history"]["epsilon"], 2)) == (2, 2.0)
    assert (opened["next"]["rounds"], round(opened["next"]["epsilon"], 2), opened["next"]["exact"]) == (3, 2.64, True)
    assert _round(server, uncapped)["protection"] == opened

    # an unprotected answer: "inf" (JSON has no infinity); a campaign that is not memoized: null
    liprr = Spec.from_mechanism(
        pldp.LIPRR(B([0.5, 1.0, float("inf")]), B([0.25, 0.5, float("inf")])), question="Which?", labels=list("abc")
    )
    _create(server, liprr)
    open_answer = _round(server, liprr)["protection"]
    assert open_answer["permanent_epsilons"] == [0.5, 1.0, "inf"] and open_answer["history"]["epsilon"] == "inf"
    krr = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Fresh?", caps={"rounds": 3})
    _create(server, krr)
    assert _round(server, krr)["protection"] is None

    # typed, with descriptions, in /openapi.json
    models = json.loads(get(f"{server.url}/openapi.json")[2])["components"]["schemas"]
    assert "RoundsProtection" in json.dumps(models["RoundInfo"]["properties"]["protection"])
    for name in ("RoundsProtection", "HistoryLoss"):
        props = models[name]["properties"]
        assert props and all(p.get("description") for p in props.values()), name
    assert set(models["RoundsProtection"]["properties"]) == {
        "permanent_epsilon",
        "permanent_epsilons",
        "one_report_epsilon",
        "values",
        "rounds_cap",
        "values_epsilon",
        "history",
        "next",
    }


# ------------------------------------------------------------------------------------ the pages


@pytest.mark.slow
def test_the_pages_say_both_guarantees_of_a_capped_memoized_campaign(browser: Any, server: Server) -> None:
    spec = Spec.from_mechanism(LGRR, question="Slept well, capped?", labels=["yes", "no"], caps={"rounds": 8})
    _create(server, spec, "daily")
    assert f"{whole_history(spec, 8).epsilon:.3g}" == "6.16" and whole_history(spec, 8).exact
    new_device(browser, server.url)
    ready(browser, f"{server.url}/c/{spec.id}")
    said = js(browser, "return document.getElementById('protection-questions').innerText").split("\n\n")
    assert said == [
        "Your reports to this survey protect two things: your answer, at ε∞ = 2 each time it is new; whether and "
        "when your answer changes, at ε = 6.16 over this campaign's 8 rounds.",
        "This browser keeps one randomized form of each answer and sends a fresh randomization of it each round: all "
        "the reports of one answer together reveal no more about it than that form does, but each round tells a "
        "little more about when your answer changed. It sends at most 8 reports to this survey.",
    ]
    assert js(browser, "return document.getElementById('protection-rounds').textContent") == said[0]
    answer(browser, "answer-0-1")
    shared = _shared(browser)
    assert shared["items"] == [
        "“Slept well, capped?”: 1 report (round 1); privacy counted against the caps: ε = 2, ε = 2 of it today. "
        "Each report is counted as if its answer were new (until there are as many reports as possible answers), "
        "whether or not you gave it here before."
    ]
    assert shared["total"] == (
        "In all: 1 report, ε = 2 counted against the caps. For “Slept well, capped?”, asked in rounds, it counts "
        "what the reports reveal about your answers; whether and when your answer changed is protected apart, less "
        "with each round (the survey's page says how much)."
    )
    assert "at most what" not in browser.find_element("tag name", "main").text  # the false claim is gone
    assert _dashboard_rounds(browser, server, spec) == [
        "Over a device's rounds, its reports protect two things: the respondent's answer, at ε∞ = 2 each time it is "
        "new; whether and when the answer changes, at ε = 6.16 over this campaign's 8 rounds (8 reports drawn "
        "afresh would be at ε = 8).",
        "A device sends at most 8 reports on this campaign (its definition's rounds cap; the device's privacy ledger "
        "refuses more).",
    ]
    assert js(browser, "return document.getElementById('privacy-answers').textContent").endswith(
        "every answer at ε∞ = 2"
    )
    assert errors(browser) == []


@pytest.mark.slow
def test_without_a_rounds_cap_the_pages_say_it_weakens_with_each_round(browser: Any, server: Server) -> None:
    spec = Spec.from_mechanism(LGRR, question="Slept well, each round?", labels=["yes", "no"])
    admin = _create(server, spec, "manual")
    admin.open_round(spec.id)  # round 2: over the 2 rounds so far, 2.64 after the next
    new_device(browser, server.url)
    ready(browser, f"{server.url}/c/{spec.id}")
    assert _paragraphs(browser, "protection-questions") == [
        "Your reports to this survey protect two things: your answer, at ε∞ = 2 each time it is new; whether and "
        "when your answer changes, at ε = 2 over the 2 rounds so far.",
        "This survey sets no limit on its rounds, so that second protection weakens with each round you answer: "
        "ε = 2.64 after the next.",
    ]
    assert _dashboard_rounds(browser, server, spec) == [
        "Over a device's rounds, its reports protect two things: the respondent's answer, at ε∞ = 2 each time it is "
        "new; whether and when the answer changes, at ε = 2 over the 2 rounds so far (2 reports drawn afresh would "
        "be at ε = 2).",
        "The campaign sets no limit on its rounds (its definition has no rounds cap), so that protection weakens "
        "with each round: ε = 2.64 after the next.",
    ]
    # a loss the accountant bounds without finding it exactly says "at most"
    bounded = Spec.from_mechanism(pldp.LGRR(2.0, 0.5, 4), question="Which OS?", labels=list("abcd"), caps={"rounds": 5})
    _create(server, bounded, "daily")
    loss = whole_history(bounded, 5)
    assert not loss.exact and f"{loss.epsilon:.3g}" == "3.61"
    ready(browser, f"{server.url}/c/{bounded.id}")
    assert _paragraphs(browser, "protection-questions")[0] == (
        "Your reports to this survey protect two things: your answer, at ε∞ = 2 each time it is new; whether and "
        "when your answer changes, at ε = 3.61 at most over this campaign's 5 rounds."
    )
    assert errors(browser) == []


@pytest.mark.slow
def test_an_item_personalized_survey_says_the_answers_own_protection_and_why_the_count_is_the_worst(
    browser: Any, server: Server
) -> None:
    # IPRR: "flu" is promised 0.5, the ledger counts the survey's worst answer ("none", not protected)
    spec = Spec.from_mechanism(
        pldp.IPRR(B([0.5, 1.0, float("inf")])), question="Diagnosis?", labels=["flu", "covid", "none"]
    )
    _create(server, spec)
    new_device(browser, server.url)
    ready(browser, f"{server.url}/c/{spec.id}")
    answer(browser, "answer-0-0")  # "flu"
    why = (
        "The count is that of this survey's least protected answer (ε = ∞), whatever you answered: were it counted "
        "by your answer, whether this browser still sends a report once a cap is reached would tell the collector "
        "your answer."
    )
    shared = _shared(browser)
    assert shared["items"] == [
        "“Diagnosis?”: 1 report (round 1); privacy counted against the caps: ε = ∞, ε = ∞ of it today. Your answer, "
        f"“flu”, is protected at ε = 0.5. {why}"
    ]
    assert shared["total"] == (
        "In all: 1 report, ε = ∞ counted against the caps: a survey answered here has an answer that is not "
        "protected, and each report is counted at its survey's least protected answer, whatever the answer was."
    )
    # reloaded, the page no longer knows the answer (it is kept nowhere): it points to the survey's words
    ready(browser, f"{server.url}/c/{spec.id}")
    wait(browser, shown("answered"), what="the already-answered notice")
    (item,) = _shared(browser)["items"]
    assert item.endswith(f"Your answer's own protection is the ε shown beside it on the survey. {why}")

    # L-IPRR over rounds: each answer's eps_inf beside it, the whole history over the spec's 3 rounds
    memo = Spec.from_mechanism(
        pldp.LIPRR(B([0.5, 1.0, 2.0]), B([0.25, 0.5, 1.0])),
        question="Diagnosis, each week?",
        labels=["flu", "covid", "none"],
        caps={"rounds": 3},
    )
    _create(server, memo, "weekly")
    loss = whole_history(memo, 3)
    assert f"{loss.epsilon:.3g}" == "3.62" and loss.exact and loss.epsilon < math.inf
    new_device(browser, server.url)
    ready(browser, f"{server.url}/c/{memo.id}")
    labels = js(browser, "return [...document.querySelectorAll('.choice label')].map(l => l.textContent)")
    assert labels == ["flu (protected at ε∞ = 0.5)", "covid (protected at ε∞ = 1)", "none (protected at ε∞ = 2)"]
    assert _paragraphs(browser, "protection-questions")[:2] == [
        "Answers “flu”, “covid” and “none” are protected, each at the ε∞ shown beside it each time it is new.",
        "Your reports to this survey protect two things: your answer, at the ε∞ shown beside it each time it is new; "
        "whether and when your answer changes, at ε = 3.62 over this campaign's 3 rounds.",
    ]
    answer(browser, "answer-0-1")  # "covid"
    (item,) = [i for i in _shared(browser)["items"] if i.startswith("“Diagnosis, each week?”")]
    assert item.endswith(
        "Your answer, “covid”, is protected at ε∞ = 1 each time it is new. The count is that of this survey's least "
        "protected answer (ε∞ = 2), whatever you answered: were it counted by your answer, whether this browser "
        "still sends a report once a cap is reached would tell the collector your answer."
    )
    assert errors(browser) == []
