"""Fake users at a real collector: the estimate reports the detection screen of the reports and any
fallback its estimator took, and every method of the campaign's oracle can be asked for.

Honest reports come from the Python client; fake ones from :func:`pldp.attacks.fake_reports`, put
in the wire format (:meth:`~pldp.FrequencyOracle.report_columns`, :class:`~pldp.deploy.ReportBatch`)
and submitted over HTTP next to them, to a real ``pldp serve`` process:

* OUE (d = 16, eps = 1) with Cao et al.'s MGA promoting 12 items: every fake report has 12 ones,
  which honest devices produce with probability far below ``alpha`` = 0.001, so the flagged share
  lies in ``[beta, beta + 2 alpha]`` (``beta`` = 200 / 4,200, honest reports being flagged with
  probability below ``2 alpha``); ``"detect"`` drops them and ``"recover"`` answers;
* PLDP-FEBSF over k-RR (levels 0.1, ..., 1.0) with 4.8 % of fakes claiming the smallest level, as
  in issue 26 (20,000 honest reports, whose AUEM estimate needs no fallback): AUEM falls back to ``"robust"`` and
  the estimate says so; k-RR reports cannot be screened (``available`` false, with the reason);
  ``"robust"`` and ``"detect"`` answer, ``"recover"`` is refused naming the methods offered;
* a small OUE campaign at eps = 0.55 (60 honest reports, 4 fakes at the largest unflagged count,
  12 ones): the screen has no power there (a share of fakes above 5 % is needed), and the
  estimate, ``pldp campaign estimate`` and the dashboard say so (issue 34);
* ``pldp campaign estimate`` prints the same in words;
* the dashboard (Chromium) offers the robust methods in plain words, says what share of reports
  was flagged, and says when the estimator fell back (screenshots: ``robust-*.png`` in
  ``$PLDP_SHOTS``, else the test's temporary folder).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")

import pldp
from pldp.attacks import fake_reports
from pldp.client import Client
from pldp.deploy import Spec
from pldp.deploy.remote import RemoteError
from pldp.deploy.wire import ReportBatch
from pldp.service import models
from tests import browser as chrome
from tests.browser import chart_is, errors, js, use_token, viewport, wait
from tests.deploy_cases import LEVELS, words
from tests.service_server import Server

browser = pytest.fixture(chrome.blank)

HONEST, FAKE = 4_000, 200
BETA = FAKE / (HONEST + FAKE)
#: PLDP-FEBSF's AUEM needs more honest reports (at 4,000 its p* - q* is within 3 standard errors
#: of 0 about every other time without fakes); 1,000 fakes claiming the smallest level (4.8 %).
HONEST_FEBSF, FAKE_FEBSF = 20_000, 1_000
#: The campaign the screen cannot see: OUE at eps = 0.55 with 60 honest reports and 4 fakes at 12 ones.
HONEST_SMALL, FAKE_SMALL = 60, 4
ALPHA = 1e-3  # detection's default level
TARGETS = np.arange(4, 16)  # the 12 items the MGA fakes promote under OUE
ZIPF = 1.0 / np.arange(1, 17)


def _fits(driver: Any, width: int) -> None:
    """Nothing wider than the window: not the page, nor a box that scrolls (the method menu's panel)."""
    assert js(driver, "return document.documentElement.scrollWidth") <= width
    boxes = js(
        driver,
        "return [...document.querySelectorAll('.panel, .chart-scroll, select')].filter(e => e.offsetParent)"
        ".map(e => [e.id || e.className, e.scrollWidth, e.clientWidth, e.getBoundingClientRect().right])",
    )
    assert all(scroll <= client + 1 and right <= width for _, scroll, client, right in boxes), boxes


def _honest(spec: Spec, n: int, seed: int, levels: bool = False) -> tuple[ReportBatch, np.ndarray]:
    """``n`` honest reports of the Python client, and the true shares of their answers."""
    rng = np.random.default_rng(seed)
    items = rng.choice(16, size=n, p=ZIPF / ZIPF.sum())
    kw = {"level": rng.integers(0, len(LEVELS), n)} if levels else {}
    return Client(spec, words(seed)).reports(items, **kw), np.bincount(items, minlength=16) / n


def _fakes(spec: Spec, targets: Any, m: int, strategy: str, seed: int) -> ReportBatch:
    """``m`` fake reports of ``strategy`` in the wire format, as any client would send them."""
    oracle = spec.mechanism()
    rng = np.random.default_rng(seed)
    reports = fake_reports(oracle, targets, m, rng=rng, strategy=strategy)
    ids = rng.integers(0, 256, size=(m, 16), dtype=np.uint8)
    return ReportBatch(spec.id, ids, oracle.report_columns(reports), spec.root)


def _hiding(spec: Spec, m: int, ones: int, seed: int) -> ReportBatch:
    """``m`` fake OUE reports with ``ones`` ones (the rarest item's bit and others), in the wire format."""
    oracle = spec.mechanism()
    rng = np.random.default_rng(seed)
    bits = np.zeros((m, 16), dtype=bool)
    for row in bits:
        row[rng.choice(15, ones - 1, replace=False)] = True
    bits[:, 15] = True
    ids = rng.integers(0, 256, size=(m, 16), dtype=np.uint8)
    return ReportBatch(spec.id, ids, oracle.report_columns(np.packbits(bits, axis=1)), spec.root)


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A collector with two attacked campaigns (OUE with MGA fakes, FEBSF-KRR with fakes claiming
    the smallest level), an analyst token granted both, and FEBSF's estimate before its fakes came."""
    srv = Server(tmp_path_factory.mktemp("detection") / "pldp.db").start()
    oue = Spec.from_mechanism(pldp.OUE(1.0, 16), question="Which item?")
    febsf = Spec.from_mechanism(pldp.protocols.FEBSF(LEVELS, 0.3, 16, "krr"), question="Which item, at a level?")
    small = Spec.from_mechanism(pldp.OUE(0.55, 16), question="Which item, at a small budget?")
    admin = srv.admin()
    for spec in (oue, febsf, small):
        admin.create_campaign(spec)
    token = admin.create_token("detection tests", [oue.id, febsf.id, small.id])["token"]
    analyst, respondent = srv.client(token), srv.client()
    honest_oue, truth = _honest(oue, HONEST, 1)
    respondent.submit_all(oue.id, honest_oue)
    respondent.submit_all(oue.id, _fakes(oue, TARGETS, FAKE, "mga", 2))
    honest_febsf, _ = _honest(febsf, HONEST_FEBSF, 3, levels=True)
    respondent.submit_all(febsf.id, honest_febsf)
    before = analyst.estimate(febsf.id)
    respondent.submit_all(febsf.id, _fakes(febsf, [15], FAKE_FEBSF, "min_level", 4))
    respondent.submit_all(small.id, _honest(small, HONEST_SMALL, 5)[0])
    respondent.submit_all(small.id, _hiding(small, FAKE_SMALL, 12, 6))
    yield {"server": srv, "analyst": analyst, "token": token, "oue": oue, "febsf": febsf, "truth": truth,
           "febsf_before": before, "small": small}  # fmt: skip
    srv.stop()


def test_the_estimate_reports_the_share_of_fake_reports_flagged(attacked: dict[str, Any]) -> None:
    spec, analyst = attacked["oue"], attacked["analyst"]
    out = analyst.estimate(spec.id)
    models.Estimate.model_validate(out)
    assert out["n"] == HONEST + FAKE and out["methods"] == list(pldp.OUE.methods)
    screen = out["detection"]
    assert screen["available"] and screen["reason"] is None and screen["alpha"] == ALPHA
    # every fake is flagged (12 ones); honest reports are flagged with probability below 2 alpha
    assert BETA <= screen["flagged_share"] <= BETA + 2 * ALPHA, screen
    assert screen["flagged"] == round(screen["flagged_share"] * out["n"]) >= FAKE
    assert 12 in screen["flagged_ones"]
    # the fakes pile up on 12 ones: the excess over the honest law bounds their share from below
    assert 0.8 * BETA <= screen["ones_excess_share"] <= screen["flagged_share"], screen
    # the fakes at 12 ones are flagged, so the joint test of the unflagged counts sees nothing more;
    # what the screen can see at eps = 1 and 4,200 reports
    assert screen["joint_fired"] is False and screen["suspect_ones"] == [] and 0 < screen["joint_p"] <= 1
    assert screen["flag_from"] == 11 and screen["largest_unflagged"] == 10 and screen["has_power"] is True
    assert 0 < screen["power_share"] < 0.01, screen
    # the screen is the same whatever the method
    assert analyst.estimate(spec.id, "norm_sub")["detection"] == screen
    assert out["attributes"][0]["fallback"] is None and out["attributes"][0]["fallback_reason"] is None


def test_the_estimate_says_when_the_screen_has_no_power(attacked: dict[str, Any]) -> None:
    """OUE at eps = 0.55 with 64 reports: the 4 fakes at 12 ones (6 %) are not flagged (from 13),
    and the joint test would need more than 5 % of fakes there to see them 9 times in 10: the
    screen says it has no power; "detect" answers all the same."""
    from pldp.estimation.detect import detection_power

    spec, analyst = attacked["small"], attacked["analyst"]
    out = analyst.estimate(spec.id)
    models.Estimate.model_validate(out)
    screen = out["detection"]
    expected = detection_power(spec.mechanism().ones_laws, HONEST_SMALL + FAKE_SMALL)
    assert out["n"] == HONEST_SMALL + FAKE_SMALL and screen["available"] and screen["flagged"] == 0
    assert screen["has_power"] is False and screen["power_share"] > 0.05
    assert screen["power_share"] == pytest.approx(expected["min_share"])
    assert screen["flag_from"] == 13 and screen["largest_unflagged"] == 12
    assert analyst.estimate(spec.id, "detect")["method"] == "detect"


def test_every_method_of_the_oracle_can_be_asked_for(attacked: dict[str, Any]) -> None:
    spec, analyst, truth = attacked["oue"], attacked["analyst"], attacked["truth"]
    gain = {}
    for method in pldp.OUE.methods:  # "recover" and "detect" too
        out = analyst.estimate(spec.id, method)
        models.Estimate.model_validate(out)
        assert out["method"] == method
        gain[method] = float(np.sum(np.asarray(out["attributes"][0]["frequencies"])[TARGETS] - truth[TARGETS]))
    # the MGA promotes the 12 targets; dropping the flagged reports takes the promotion away
    assert gain["unbiased"] > 1.5 and abs(gain["detect"]) < 0.25 * gain["unbiased"], gain
    info = analyst.estimate(spec.id, "detect")["attributes"][0]["info"]
    assert info["flagged_share"] == analyst.estimate(spec.id)["detection"]["flagged_share"]
    with pytest.raises(RemoteError) as refused:
        analyst.estimate(spec.id, "robust")  # OUE has no levels: not offered
    assert refused.value.status == 400 and refused.value.code == "bad_method"
    assert "'robust'" in refused.value.reason
    assert "offers unbiased, norm_sub, mle, recover, detect" in refused.value.reason


def test_the_estimate_says_when_the_estimator_fell_back(attacked: dict[str, Any]) -> None:
    spec, analyst = attacked["febsf"], attacked["analyst"]
    before = attacked["febsf_before"]["attributes"][0]
    assert before["fallback"] is None and before["info"]["estimator"] == "AUEM"  # honest reports alone: AUEM
    for method in ("unbiased", "norm_sub"):
        out = analyst.estimate(spec.id, method)
        models.Estimate.model_validate(out)
        part = out["attributes"][0]
        assert part["fallback"] == "robust" and part["info"]["fallback"] == "robust", method
        assert "AUEM would divide by noise" in part["fallback_reason"]
    screen = out["detection"]
    assert not screen["available"] and "direct encoding" in screen["reason"]
    assert screen["flagged_share"] is None and screen["flagged_ones"] == [] and screen["suspect_ones"] == []
    assert screen["has_power"] is None and screen["power_share"] is None
    assert out["methods"] == list(pldp.protocols.FEBSF.methods)
    for method in ("robust", "huber", "detect"):
        out = analyst.estimate(spec.id, method)
        assert out["method"] == method and out["attributes"][0]["fallback"] is None
        models.Estimate.model_validate(out)
    with pytest.raises(RemoteError) as refused:
        analyst.estimate(spec.id, "recover")
    assert refused.value.status == 400
    assert "offers unbiased, norm_sub, mle, paper, robust, huber, detect" in refused.value.reason


def test_pldp_campaign_estimate_prints_the_screen_and_the_fallback(attacked: dict[str, Any], tmp_path: Path) -> None:
    token_file = tmp_path / "analyst.token"
    token_file.write_text(attacked["token"] + "\n")
    env = {**os.environ, "PLDP_SERVER": attacked["server"].url}

    def estimate(spec: Spec, *more: str) -> list[str]:
        cmd = [sys.executable, "-m", "pldp.cli", "campaign", "estimate", spec.id, "--token-file", str(token_file)]
        done = subprocess.run([*cmd, *more], capture_output=True, text=True, env=env, timeout=120, check=False)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return done.stdout.splitlines()

    lines = estimate(attacked["oue"])
    flagged = attacked["analyst"].estimate(attacked["oue"].id)["detection"]["flagged_share"]
    assert lines[1] == (
        f"detection: {100 * flagged:.1f} % of reports have a number of ones that honest devices almost never "
        "produce; they may be fake."
    )
    assert lines[2].startswith("detection: At least ") and "pile up on one number of ones" in lines[2]
    assert lines[3].startswith("detection: What the screen can see here: single reports are flagged from 11 ones, ")
    assert "fakes with 10 ones (the most not flagged) are seen from " in lines[3]
    assert len(lines) == 4 + 16 and not any(line.startswith("fallback") for line in lines)
    lines = estimate(attacked["small"])  # eps = 0.55, 64 reports: no power
    said = [line for line in lines if line.startswith("detection: ")]
    assert said[-1].startswith(
        "detection: The screen has no power at this campaign's privacy budget and number of reports: single "
        "reports are flagged from 13 ones, and fakes with 12 ones are seen only when they are at least "
    ), said
    assert said[-1].endswith(
        "fakes whose numbers of ones follow the honest ones are not seen by any screen of the counts."
    )
    lines = estimate(attacked["febsf"], "--method", "norm_sub")  # k-RR reports: no screen ran, none was asked for
    assert not any(line.startswith("detection") for line in lines), lines
    assert lines[1].startswith("fallback: The method 'norm_sub' could not be used on these reports, so this estimate ")
    assert "is the 'robust' method's: the level reports give p* - q* = " in lines[1]
    assert len(lines) == 2 + 16


def test_the_dashboard_offers_the_robust_methods_and_says_what_was_flagged(
    attacked: dict[str, Any], browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    srv, oue, febsf, token = attacked["server"], attacked["oue"], attacked["febsf"], attacked["token"]
    shots = Path(os.environ.get("PLDP_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    n, n_febsf = HONEST + FAKE, HONEST_FEBSF + FAKE_FEBSF
    flagged = attacked["analyst"].estimate(oue.id)["detection"]["flagged_share"]

    def menu() -> dict[str, str]:
        return {o.get_attribute("value"): o.text for o in Select(browser.find_element(By.ID, "method")).options}

    def pick(label: str, method: str, reports: int) -> None:
        Select(browser.find_element(By.ID, "method")).select_by_visible_text(label)
        wait(browser, chart_is(method, reports), timeout=5, what=method)

    def text(element_id: str) -> str:
        return str(browser.find_element(By.ID, element_id).text).replace("\xa0", " ")

    browser.get(f"{srv.url}/dashboard/{oue.id}")
    use_token(browser, token)
    wait(browser, chart_is("unbiased", n), what="the chart")
    wait(browser, lambda d: len(menu()) == len(pldp.OUE.methods), what="the campaign's methods")
    assert menu() == {
        "unbiased": "Unbiased (can fall below 0 %)",
        "norm_sub": "Clipped to 0–100 % (Norm-Sub)",
        "mle": "Most likely (maximum likelihood)",
        "recover": "Subtract suspected fake reports",
        "detect": "Drop unlikely reports",
    }
    said = text("flagged")
    assert said == (
        f"{100 * flagged:.1f} % of reports have a number of ones that honest devices almost never produce; "
        "they may be fake."
    )
    assert "pile up on one number of ones more often than honest devices would" in text("excess")
    assert text("power").startswith("What the screen can see here: single reports are flagged from 11 ones, ")
    assert not browser.find_element(By.ID, "joint").is_displayed()
    pick("Drop unlikely reports", "detect", n)
    assert "Drop unlikely reports: reports with a number of ones" in text("method-help")
    assert text("flagged") == said  # the screen does not depend on the method
    for width, height in ((1280, 900), (390, 844)):
        with viewport(browser, width, height):
            wait(browser, lambda d, w=width: js(d, "return document.querySelector('svg.chart').getBoundingClientRect()"
                 ".right") <= w, what="the chart at this width")  # fmt: skip
            _fits(browser, width)
            js(browser, "window.scrollTo(0, 0)")
            assert browser.save_screenshot(str(shots / f"robust-detect-{width}x{height}.png"))

    # a campaign at a small budget with few reports: the screen says it has no power
    browser.get(f"{srv.url}/dashboard/{attacked['small'].id}")
    use_token(browser, token)
    wait(browser, chart_is("unbiased", HONEST_SMALL + FAKE_SMALL), what="the chart")
    wait(browser, lambda d: d.find_element(By.ID, "power").is_displayed(), what="the power of the screen")
    assert text("power").startswith("The screen has no power at this campaign's privacy budget and number of reports")
    assert "fakes with 12 ones are seen only when they are at least " in text("power")

    # PLDP-FEBSF over k-RR: AUEM fell back to the robust method; k-RR reports are not screened
    browser.get(f"{srv.url}/dashboard/{febsf.id}")
    use_token(browser, token)  # kept per campaign
    wait(browser, chart_is("unbiased", n_febsf), what="the chart")
    fallback = browser.find_element(By.CSS_SELECTOR, "figure.attribute .fallback")
    assert fallback.is_displayed() and fallback.get_attribute("data-fallback") == "robust"
    assert fallback.text.startswith(
        "“Unbiased” could not be used on these reports: they do not fit it, which fake users can cause. "
        "The shares shown come from “Robust to fake users claiming levels” instead."
    )
    assert "Details: the level reports give p* - q* =" in fallback.text
    assert not browser.find_element(By.ID, "screening").is_displayed()  # no screen ran, none was asked for: no words
    for width, height in ((1280, 900), (390, 844)):
        with viewport(browser, width, height):
            _fits(browser, width)
            js(browser, "window.scrollTo(0, 0)")
            assert browser.save_screenshot(str(shots / f"robust-fallback-{width}x{height}.png"))
    pick("Robust to fake users claiming levels", "robust", n_febsf)
    assert "fake users gain nothing by choosing or spreading their claims" in text("method-help")
    assert not browser.find_element(By.CSS_SELECTOR, "figure.attribute .fallback").is_displayed()
    for width, height in ((1280, 900), (390, 844)):
        with viewport(browser, width, height):
            _fits(browser, width)
            js(browser, "window.scrollTo(0, 0)")
            assert browser.save_screenshot(str(shots / f"robust-febsf-{width}x{height}.png"))
    assert errors(browser) == []
