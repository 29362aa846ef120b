"""Recurring campaigns against a real collector (``docs/collector.md``, "Recurring campaigns"): rounds
set at creation (manual ones opened by the admin, daily ones following the UTC day), every report
counted in one round and once, estimates per round and round by round with intervals, respondent
codes good for one report per round, the roles and refusals of the new routes, their typed answers
in ``/openapi.json``, a store of the schema before rounds opening with nothing lost, and the
dashboard's charts round by round in Chromium."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec, decode
from pldp.deploy.estimates import campaign_estimate
from pldp.deploy.files import parse_day
from pldp.deploy.remote import Collector, RemoteError
from pldp.service import auth, codes, store
from tests import browser as chrome
from tests.cli_run import main_run
from tests.deploy_cases import words
from tests.service_server import Server, stored_and_recount, wait_until

DAY = 86400.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    srv = Server(tmp_path_factory.mktemp("rounds") / "pldp.db").start()  # the default grace: 1 hour
    yield srv
    srv.stop()


def _refused(call: Any) -> tuple[int, str]:
    """The status and error code of a request that must be refused."""
    with pytest.raises(RemoteError) as info:
        call()
    assert info.value.reason, "a refusal says why"
    return info.value.status, info.value.code


def _batch(spec: Spec, seed: int, value: int, n: int) -> Any:
    return Client(spec, words(seed)).reports(np.full(n, value))


def _width(part: dict[str, Any]) -> float:
    """The summed width of an attribute's intervals."""
    return float(sum(hi - lo for lo, hi in zip(part["ci_low"], part["ci_high"], strict=True)))


def _per_round(db: Path, spec: Spec) -> dict[int, int]:
    """Reports stored per round, after checking that the tally of every round (and the whole one)
    equals a recount of that round's stored reports."""
    tally, recount = stored_and_recount(db, spec)
    assert tally == recount
    conn = store.connect(db, readonly=True)
    try:
        found = dict(
            conn.execute(
                "SELECT r.round, COUNT(*) FROM reports r JOIN campaigns c ON c.key = r.campaign_key "
                "WHERE c.id = ? GROUP BY r.round",
                (spec.id,),
            ).fetchall()
        )
        if conn.execute("SELECT rounds FROM campaigns WHERE id = ?", (spec.id,)).fetchone()[0] != "once":
            for turn in found:
                assert store.stored_tally(conn, spec, turn) == decode(spec, store.stored_batch(conn, spec, turn=turn))
        return {int(t): int(n) for t, n in found.items()}
    finally:
        conn.close()


def test_manual_rounds_count_each_report_once_in_its_round(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(3.0, 3), question="this round?")
    admin = server.admin()
    made = admin.create_campaign(spec, rounds="manual")
    assert (made["rounds"], made["round"]) == ("manual", 1)
    assert made["urls"]["series"] == f"/v1/campaigns/{spec.id}/series"
    analyst = Collector(server.url, admin.new_token("reader", [spec.id])["token"])
    anyone = server.client()
    now = anyone.current_round(spec.id)
    assert (now["round"], now["accepts"], now["ends_at"]) == (1, [1], None)
    empty = analyst.series(spec.id)["series"]
    assert [(p["round"], p["n"], p["attributes"]) for p in empty] == [(1, 0, None)]

    first = _batch(spec, 1, 0, 300)  # round 1: everyone answers 0
    assert anyone.submit(spec.id, first) == {"accepted": 300, "duplicates": 0}
    opened = admin.open_round(spec.id)
    assert (opened["round"], opened["accepts"]) == (2, [1, 2])  # round 1 during the grace (1 hour)
    assert opened["started_at"] == pytest.approx(time.time(), abs=60)
    assert anyone.submit(spec.id, _batch(spec, 2, 2, 300), round=2) == {"accepted": 300, "duplicates": 0}
    late = _batch(spec, 3, 0, 20)  # round 1's answers, sent after round 2 opened: counted in round 1
    assert anyone.submit(spec.id, late, round=1) == {"accepted": 20, "duplicates": 0}
    # a retry is acknowledged and not stored again, whatever round it names
    assert anyone.submit(spec.id, first, round=2) == {"accepted": 0, "duplicates": 300}
    assert anyone.submit(spec.id, first) == {"accepted": 0, "duplicates": 300}
    assert _per_round(server.db, spec) == {1: 320, 2: 300}

    assert admin.open_round(spec.id)["accepts"] == [2, 3]
    fresh = _batch(spec, 4, 1, 5)
    assert _refused(lambda: anyone.submit(spec.id, fresh, round=1)) == (409, "round_closed")
    assert _refused(lambda: anyone.submit(spec.id, fresh, round=4)) == (409, "round_not_started")
    assert anyone.submit(spec.id, late, round=3) == {"accepted": 0, "duplicates": 20}  # still once, in round 1
    assert _per_round(server.db, spec) == {1: 320, 2: 300}  # nothing of the refused batches

    one, two, every = (analyst.estimate(spec.id, round=r) for r in (1, 2, None))
    assert (one["n"], one["round"], two["n"], two["round"], every["n"]) == (320, 1, 300, 2, 620)
    assert "round" not in every or every["round"] is None
    assert one["attributes"][0]["frequencies"][0] > 0.85 and two["attributes"][0]["frequencies"][2] > 0.85
    assert abs(every["attributes"][0]["frequencies"][0] - 320 / 620) < 0.1
    assert _refused(lambda: analyst.estimate(spec.id, round=3)) == (409, "no_reports")
    assert _refused(lambda: analyst.estimate(spec.id, round=4)) == (409, "round_not_started")

    out = analyst.series(spec.id, level=0.9)
    assert (out["rounds"], out["round"], out["level"]) == ("manual", 3, 0.9)
    points = out["series"]
    assert [(p["round"], p["n"]) for p in points] == [(1, 320), (2, 300), (3, 0)]
    assert points[2]["attributes"] is None and points[2]["ends_at"] is None
    assert points[0]["ends_at"] == points[1]["started_at"] and points[1]["ends_at"] == points[2]["started_at"]
    for point, asked in zip(points[:2], (one, two), strict=True):
        (mine,) = point["attributes"]
        assert mine["frequencies"] == pytest.approx(asked["attributes"][0]["frequencies"])
        assert mine["std_error"] == pytest.approx(asked["attributes"][0]["std_error"])
        # intervals at the level asked: 90 % ones, narrower than the estimate's default 95 % ones
        assert all(lo < hi for lo, hi in zip(mine["ci_low"], mine["ci_high"], strict=True))
        assert _width(mine) < _width(asked["attributes"][0])
    assert [p["round"] for p in analyst.series(spec.id, first=2, last=2)["series"]] == [2]
    assert _refused(lambda: analyst.series(spec.id, first=3, last=2)) == (400, "bad_range")
    assert _refused(lambda: analyst.series(spec.id, last=4)) == (409, "round_not_started")
    assert _refused(lambda: analyst.series(spec.id, method="nonsense")) == (400, "bad_method")
    days = analyst.days(spec.id)
    assert days["rounds"] == "manual" and sum(d["n"] for d in days["days"]) == 620
    assert {d["round"] for d in days["days"]} == {1, 2}


def test_rounds_are_set_once_and_each_route_checks_its_role(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 4), question="daily?")
    admin = server.admin()
    assert _refused(lambda: admin.create_campaign(spec, rounds="yearly")) == (400, "bad_request")
    assert admin.create_campaign(spec, rounds="daily")["rounds"] == "daily"
    assert admin.create_campaign(spec, rounds="daily")["rounds"] == "daily"  # the same again: fine
    assert _refused(lambda: admin.create_campaign(spec, rounds="manual")) == (409, "rounds_differs")
    assert _refused(lambda: admin.create_campaign(spec)) == (409, "rounds_differs")
    once = Spec.from_mechanism(pldp.KRR(1.0, 4), question="once?")
    assert admin.create_campaign(once)["rounds"] == "once"
    assert _refused(lambda: admin.open_round(spec.id)) == (409, "rounds_not_manual")
    assert _refused(lambda: admin.open_round(once.id)) == (409, "rounds_not_manual")
    assert _refused(lambda: admin.open_round("0" * 32)) == (404, "unknown_campaign")

    token = admin.new_token("daily only", [spec.id])["token"]
    analyst, anyone = Collector(server.url, token), server.client()
    assert _refused(lambda: analyst.open_round(spec.id))[0] == 403
    assert _refused(lambda: anyone.open_round(spec.id))[0] == 401
    assert _refused(lambda: anyone.series(spec.id))[0] == 401
    assert _refused(lambda: admin.series(spec.id))[0] == 403  # estimates are an analyst's
    assert _refused(lambda: analyst.series(once.id))[0] == 403  # not granted
    assert _refused(lambda: analyst.estimate(once.id, round=1))[0] == 403
    now = anyone.current_round(spec.id)  # anyone: the survey page asks it
    assert (now["rounds"], now["round"]) == ("daily", 1)
    assert now["ends_at"] - now["started_at"] == DAY and now["started_at"] % DAY == 0
    assert _refused(lambda: anyone.current_round("0" * 32))[0] == 404

    # malformed rounds: a 400 with a reason, nothing stored
    report = Client(spec, words(5)).report(1)
    for bad in ("0", "x", "-1", "1.5", "1e3", "9" * 12):
        status, body = _raw(anyone, "POST", f"/v1/campaigns/{spec.id}/reports?round={bad}", json.dumps(report))
        assert (status, body["error"]) == (400, "bad_round") and bad[:8] in body["reason"], (bad, body)
        status, body = _raw(analyst, "GET", f"/v1/campaigns/{spec.id}/estimate?round={bad}")
        assert status == 400 and body["error"] == "bad_request" and "round" in body["reason"], (bad, body)
    status, body = _raw(analyst, "GET", f"/v1/campaigns/{spec.id}/series?first=0")
    assert status == 400 and "first" in body["reason"]
    assert _per_round(server.db, spec) == {}
    assert anyone.submit(spec.id, [report], round=1) == {"accepted": 1, "duplicates": 0}
    assert _per_round(server.db, spec) == {1: 1}


def _raw(client: Collector, method: str, path: str, body: str | None = None) -> tuple[int, dict[str, Any]]:
    try:
        status, _, data = client.request(method, path, None if body is None else body.encode())
    except RemoteError as exc:
        return exc.status, {"error": exc.code, "reason": exc.reason}
    return status, json.loads(data)


def test_the_round_routes_and_answers_are_typed_in_the_openapi_schema(server: Server) -> None:
    schema = json.loads(server.client().request("GET", "/openapi.json")[2])
    paths, models = schema["paths"], schema["components"]["schemas"]

    def ok(path: str, method: str) -> str:
        return paths[path][method]["responses"]["200" if method == "get" else "201"]["content"]["application/json"][
            "schema"
        ]["$ref"].rsplit("/", 1)[-1]

    assert ok("/v1/campaigns/{campaign_id}/series", "get") == "Series"
    assert ok("/v1/campaigns/{campaign_id}/round", "get") == "RoundInfo"
    assert ok("/v1/campaigns/{campaign_id}/rounds", "post") == "RoundInfo"
    point = models["SeriesPoint"]["properties"]
    assert {"round", "started_at", "ends_at", "n", "attributes"} <= set(point)
    assert "AttributeEstimate" in json.dumps(point["attributes"])
    assert set(models["RoundInfo"]["properties"]["rounds"]["enum"]) == {"once", "daily", "weekly", "manual"}
    assert "round" in models["Estimate"]["properties"] and "round" in models["DayCount"]["properties"]

    def parameter(path: str, method: str, name: str) -> dict[str, Any]:
        (found,) = [p for p in paths[path][method].get("parameters", []) if p["name"] == name]
        return found

    rounds = parameter("/v1/campaigns", "post", "rounds")
    assert rounds["in"] == "query" and set(rounds["schema"]["enum"]) == {"once", "daily", "weekly", "manual"}
    for path, method in (
        ("/v1/campaigns/{campaign_id}/reports", "post"),
        ("/v1/campaigns/{campaign_id}/estimate", "get"),
        ("/v1/campaigns/{campaign_id}/export", "get"),
    ):
        asked = parameter(path, method, "round")
        assert asked["in"] == "query" and not asked.get("required"), path
        number = asked["schema"] if "minimum" in asked["schema"] else asked["schema"]["anyOf"][0]
        assert number["minimum"] == 1, path


def test_a_code_sends_one_report_per_round(server: Server) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="each week?")
    admin = server.admin()
    assert admin.create_invited_campaign(spec, rounds="manual")["access"] == "invited"
    (code,) = admin.issue_codes(spec.id, 1)["codes"]
    respondent = Collector(server.url, code)
    a, b, c = (Client(spec, words(10 + k)).report(k) for k in range(3))
    assert respondent.submit(spec.id, a) == {"accepted": 1, "duplicates": 0}
    assert _refused(lambda: respondent.submit(spec.id, b)) == (409, "code_used")
    assert respondent.submit(spec.id, a) == {"accepted": 0, "duplicates": 1}
    admin.open_round(spec.id)
    assert respondent.submit(spec.id, b) == {"accepted": 1, "duplicates": 0}  # round 2's one report
    assert _refused(lambda: respondent.submit(spec.id, c)) == (409, "code_used")
    assert _refused(lambda: respondent.submit(spec.id, c, round=1)) == (409, "code_used")  # round 1's is sent
    assert respondent.submit(spec.id, a) == {"accepted": 0, "duplicates": 1}  # round 1's, once
    assert respondent.submit(spec.id, a, round=2) == {"accepted": 0, "duplicates": 1}
    assert _per_round(server.db, spec) == {1: 1, 2: 1}
    conn = store.connect(server.db, readonly=True)
    try:
        uses = conn.execute(
            "SELECT round, report_id FROM code_uses WHERE code_hash = ? ORDER BY round", (auth.token_hash(code),)
        ).fetchall()
    finally:
        conn.close()
    assert [(t, bytes(r).hex()) for t, r in uses] == [(1, a["id"]), (2, b["id"])]
    assert admin.code_counts(spec.id)["used"] == 1  # in this round (2)
    admin.close_campaign(spec.id)
    assert _refused(lambda: admin.open_round(spec.id)) == (409, "campaign_closed")  # no next round


def test_daily_rounds_follow_the_utc_day(tmp_path: Path) -> None:
    db = tmp_path / "daily.db"
    srv = Server(db, "--round-grace", "0", env={store.TODAY_ENV: "2026-03-01"})
    spec = Spec.from_mechanism(pldp.KRR(2.0, 3), question="today?")
    with srv.start():
        admin = srv.admin()
        assert admin.create_campaign(spec, rounds="daily")["round"] == 1
        now = srv.client().current_round(spec.id)
        assert (now["started_at"], now["ends_at"]) == (parse_day("2026-03-01") * DAY, parse_day("2026-03-02") * DAY)
        assert srv.client().submit(spec.id, _batch(spec, 20, 0, 50)) == {"accepted": 50, "duplicates": 0}
        token = admin.new_token("reader", [spec.id])["token"]
    srv.env[store.TODAY_ENV] = "2026-03-03"  # two days later: round 3 (round 2 had no reports)
    with srv.start():
        anyone = srv.client()
        assert anyone.current_round(spec.id)["accepts"] == [3]  # no grace
        assert anyone.submit(spec.id, _batch(spec, 21, 2, 40)) == {"accepted": 40, "duplicates": 0}
        stale = _batch(spec, 22, 1, 3)
        assert _refused(lambda: anyone.submit(spec.id, stale, round=2)) == (409, "round_closed")
        out = Collector(srv.url, token).series(spec.id)
        assert [(p["round"], p["n"], p["attributes"] is None) for p in out["series"]] == [
            (1, 50, False),
            (2, 0, True),
            (3, 40, False),
        ]
        assert [p["started_at"] for p in out["series"]] == [parse_day(f"2026-03-0{d}") * DAY for d in (1, 2, 3)]
    srv.extra = ("--round-grace", "1d")  # a day of grace: round 2 still takes its late answers today
    with srv.start():
        anyone = srv.client()
        assert anyone.current_round(spec.id)["accepts"] == [2, 3]
        assert anyone.submit(spec.id, stale, round=2) == {"accepted": 3, "duplicates": 0}
        days = Collector(srv.url, token).days(spec.id)["days"]
        assert days == [
            {"day": "2026-03-01", "round": 1, "n": 50},
            {"day": "2026-03-03", "round": 2, "n": 3},  # late: received on day 3, counted in round 2
            {"day": "2026-03-03", "round": 3, "n": 40},
        ]
    assert _per_round(db, spec) == {1: 50, 2: 3, 3: 40}


# ------------------------------------------------------------------------------------ migration


def _version_4_store(path: Path, spec: Spec, invited: Spec, analyst: str, code: str) -> dict[str, Any]:
    """A store as the code before rounds wrote it (schema version 4): an open campaign with 200
    reports, an invited one whose code sent one report (its use in round 0), an analyst token
    granted both. Returns what was stored."""
    conn = store.connect(path)
    for statement in ";".join(store.MIGRATIONS[:4]).split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 4")
    created = time.time() - 3 * DAY
    stored: dict[str, Any] = {}
    for key, (s, access, n) in enumerate(((spec, "open", 200), (invited, "invited", 1)), start=1):
        conn.execute(
            "INSERT INTO campaigns (key, id, spec, created_at, closed_at, access) VALUES (?, ?, ?, ?, NULL, ?)",
            (key, s.id, s.to_json(indent=None), created, access),
        )
        batch = Client(s, words(30 + key)).reports(np.arange(n) % 3)
        rows, width = store.row_table(batch)
        for i in range(n):
            conn.execute(
                "INSERT INTO reports (campaign_key, seq, report_id, row, received_day) VALUES (?, ?, ?, ?, ?)",
                (key, i + 1, batch.ids[i].tobytes(), rows[i * width : (i + 1) * width], int(created // DAY)),
            )
        tally = decode(s, batch)
        conn.execute(
            "INSERT INTO tallies (campaign_id, n, tally) VALUES (?, ?, ?)",
            (s.id, n, json.dumps(tally.to_dict(), separators=(",", ":"))),
        )
        stored[s.id] = (batch, tally)
    conn.execute(
        "INSERT INTO tokens (hash, role, label, created_at, id, expires_at) VALUES (?, 'analyst', 'old', ?, ?, ?)",
        (auth.token_hash(analyst), created, "0123456789ab", time.time() + 30 * DAY),
    )
    for s in (spec, invited):
        conn.execute("INSERT INTO grants (token_hash, campaign_id) VALUES (?, ?)", (auth.token_hash(analyst), s.id))
    conn.execute(
        "INSERT INTO codes (hash, campaign_key, created_at, expires_at) VALUES (?, 2, ?, ?)",
        (auth.token_hash(code), created, time.time() + 30 * DAY),
    )
    conn.execute(
        "INSERT INTO code_uses (code_hash, round, report_id, used_at) VALUES (?, 0, ?, ?)",
        (auth.token_hash(code), stored[invited.id][0].ids[0].tobytes(), created),
    )
    conn.commit()
    conn.close()
    return stored


def test_a_store_of_the_schema_before_rounds_opens_with_nothing_lost(tmp_path: Path) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.5, 3), question="before rounds?")
    invited = Spec.from_mechanism(pldp.KRR(1.2, 3), question="invited before rounds?")
    analyst, (code,) = auth.new_token(), codes.new_codes(1)[0]
    db = tmp_path / "v4.db"
    stored = _version_4_store(db, spec, invited, analyst, code)
    with Server(db).start() as srv:
        assert srv.client().health()["schema"] == store.SCHEMA_VERSION == 7  # v5 rounds, v6 caps, v7 conflicts
        reader = Collector(srv.url, analyst)  # the old token still reads its campaigns
        listed = {c["id"]: c for c in reader.campaigns()}
        assert all(c["cap"] is None for c in listed.values())  # a campaign of before has no cap of its own
        assert {(c["rounds"], c["round"], c["access"]) for c in listed.values()} == {
            ("once", 1, "open"),
            ("once", 1, "invited"),
        }
        batch, tally = stored[spec.id]
        got = reader.estimate(spec.id)
        want = campaign_estimate(spec, tally)
        assert got["n"] == 200 and got["attributes"][0]["frequencies"] == pytest.approx(
            want["attributes"][0]["frequencies"]
        )
        assert reader.estimate(spec.id, round=1)["n"] == 200  # every old report is in round 1
        assert [(p["round"], p["n"]) for p in reader.series(spec.id)["series"]] == [(1, 200)]
        assert reader.days(spec.id)["days"][0]["round"] == 1
        anyone = srv.client()
        assert anyone.submit(spec.id, batch) == {"accepted": 0, "duplicates": 200}  # the old ids are known
        assert anyone.submit(spec.id, _batch(spec, 40, 1, 10)) == {"accepted": 10, "duplicates": 0}
        # the code's use of round 0 is its use of round 1: it sends no second report, its first again is a retry
        respondent = Collector(srv.url, code)
        first = next(stored[invited.id][0].reports())
        assert respondent.submit(invited.id, first) == {"accepted": 0, "duplicates": 1}
        other = Client(invited, words(41)).report(2)
        assert _refused(lambda: respondent.submit(invited.id, other)) == (409, "code_used")
    assert _per_round(db, spec) == {1: 210}
    assert _per_round(db, invited) == {1: 1}
    conn = store.connect(db, readonly=True)
    try:
        assert conn.execute("SELECT round FROM code_uses").fetchall() == [(1,)]
        assert Counter(r for (r,) in conn.execute("SELECT rounds FROM campaigns")) == {"once": 2}
    finally:
        conn.close()


# ------------------------------------------------------------------------------------ the dashboard

browser = pytest.fixture(chrome.blank)


def _drawn_series(driver: Any) -> list[dict[str, Any]] | None:
    """The series charts' points (their data- attributes), or None before they are drawn."""
    out: list[dict[str, Any]] | None = chrome.js(
        driver,
        """
        const box = document.getElementById('series');
        const points = [...document.querySelectorAll('#series-charts svg.series circle.point')];
        if (box.hidden || !points.length) return null;
        return points.map(p => ({round: Number(p.dataset.round), label: p.dataset.label,
                                 value: Number(p.dataset.value), lo: Number(p.dataset.ciLow),
                                 hi: Number(p.dataset.ciHigh)}));
        """,
    )
    return out


def test_the_dashboard_draws_a_recurring_campaign_round_by_round(browser: Any, server: Server, tmp_path: Path) -> None:
    labels = ["yes", "no", "unsure"]
    spec = Spec.from_mechanism(pldp.KRR(2.0, 3), question="Did you sleep well?", labels=labels)
    admin = server.admin()
    admin.create_campaign(spec, rounds="manual")
    token = admin.new_token("dashboard", [spec.id])["token"]
    rng = np.random.default_rng(7)
    for turn, shares in enumerate(([0.7, 0.2, 0.1], [0.5, 0.3, 0.2], [0.2, 0.6, 0.2], [0.3, 0.4, 0.3]), start=1):
        if turn > 1:
            admin.open_round(spec.id)
        answers = rng.choice(3, 600, p=shares)
        server.client().submit(spec.id, Client(spec, words(60 + turn)).reports(answers), round=turn)
    admin.open_round(spec.id)  # round 5: no reports yet, no point
    browser.get(f"{server.url}/dashboard/{spec.id}")
    chrome.use_token(browser, token)
    chrome.wait(browser, chrome.chart_is("unbiased", 2400), what="the bars of every report")
    drawn = chrome.wait(browser, _drawn_series, what="the series")
    want = Collector(server.url, token).series(spec.id)
    assert [p["n"] for p in want["series"]] == [600, 600, 600, 600, 0]
    expected = [
        (p["round"], label, part["frequencies"][k], part["ci_low"][k], part["ci_high"][k])
        for k, label in enumerate(labels)
        for p in want["series"]
        if (part := (p["attributes"] or [None])[0]) is not None
    ]
    got = [(d["round"], d["label"], d["value"], d["lo"], d["hi"]) for d in drawn]
    assert [g[:2] for g in got] == [e[:2] for e in expected]  # 4 rounds x 3 answers, round 5 without
    np.testing.assert_allclose([g[2:] for g in got], [e[2:] for e in expected], rtol=0, atol=1e-9)
    rows = chrome.texts(browser, "#series-charts table.numbers tbody tr")
    assert len(rows) == 5 and rows[4].endswith("–")
    # the bars above pool every round, and say so
    assert chrome.texts(browser, "#estimates-title") == ["Estimated shares, all rounds"]
    assert chrome.texts(browser, "#summary")[0].startswith("2,400 reports in all rounds · ")
    assert chrome.js(browser, "return document.getElementById('pooled-help').checkVisibility()")
    chrome.js(browser, "document.getElementById('series').scrollIntoView()")
    shot = tmp_path / "series.png"
    assert browser.save_screenshot(str(shot))
    keep = Path(os.environ["PLDP_SCREENSHOTS"]) if os.environ.get("PLDP_SCREENSHOTS") else None
    if keep is not None:  # to look at it
        keep.mkdir(parents=True, exist_ok=True)
        (keep / "dashboard-series.png").write_bytes(shot.read_bytes())
    assert chrome.errors(browser) == []  # no content-security violation, no script error

    once = Spec.from_mechanism(pldp.KRR(2.0, 3), question="Once only?", labels=labels)
    admin.create_campaign(once)
    other = admin.new_token("dashboard once", [once.id])["token"]
    server.client().submit(once.id, Client(once, words(70)).reports(rng.choice(3, 100)))
    browser.get(f"{server.url}/dashboard/{once.id}")
    chrome.use_token(browser, other)
    chrome.wait(browser, chrome.chart_is("unbiased", 100), what="the bars")
    # a campaign that does not recur has no series: the section stays hidden once the page knows
    chrome.wait(browser, lambda d: chrome.js(d, "return document.getElementById('series').dataset.recurs") == "false")
    assert chrome.js(browser, "return document.getElementById('series').hidden") is True
    assert chrome.texts(browser, "#estimates-title") == ["Estimated shares"]  # nothing pooled
    assert "rounds" not in chrome.texts(browser, "#summary")[0]
    assert chrome.js(browser, "return document.getElementById('pooled-help').hidden") is True


# ------------------------------------------------------------------------------------ the commands


def _pldp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pldp.cli", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_the_campaign_commands_for_rounds(server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The first command in a real pldp process, as a user runs it; the others through
    :func:`pldp.cli.main` in this process (the same code, without a Python start and import of
    pldp each)."""
    spec = Spec.from_mechanism(pldp.KRR(2.0, 3), question="Commands?", labels=["a", "b", "c"])
    (tmp_path / "spec.json").write_text(spec.to_json())
    at, admin = ("--server", server.url), ("--token-file", str(server.token_file))
    made = _pldp("campaign", "create", str(tmp_path / "spec.json"), "--rounds", "manual", "-q", *at, *admin)
    assert made.returncode == 0 and made.stdout.strip() == spec.id, made.stderr
    for turn, seed in ((1, 80), (2, 81)):
        path = tmp_path / f"round{turn}.json"
        path.write_text(json.dumps(_batch(spec, seed, turn - 1, 200).to_json()))
        if turn > 1:
            opened = main_run(capsys, "campaign", "round", spec.id, "--json", *at, *admin)
            assert opened.returncode == 0 and json.loads(opened.stdout)["round"] == 2, opened.stderr
        sent = main_run(capsys, "campaign", "submit", spec.id, str(path), "--round", str(turn), "--no-progress", *at)
        assert sent.returncode == 0, sent.stderr
    (tmp_path / "analyst").write_text(server.admin().new_token("cli", [spec.id])["token"])
    reader = ("--token-file", str(tmp_path / "analyst"))
    est = main_run(capsys, "campaign", "estimate", spec.id, "--round", "2", "--json", *at, *reader)
    assert est.returncode == 0 and json.loads(est.stdout)["n"] == 200 and json.loads(est.stdout)["round"] == 2
    table = main_run(capsys, "campaign", "series", spec.id, "--level", "0.9", *at, *reader)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert "now round 2" in lines[0] and "90% intervals" in lines[0]
    rows = [line.split() for line in lines if line.split()[:1] in (["1"], ["2"])]
    assert [(r[0], r[3]) for r in rows] == [("1", "200"), ("2", "200")]
    for bad in (
        ("estimate", spec.id, "--round", "0"),
        ("submit", spec.id, str(tmp_path / "round1.json"), "--round", "x"),
    ):
        out = main_run(capsys, "campaign", *bad, *at, *reader)
        assert out.returncode == 2 and "--round" in out.stderr and "Traceback" not in out.stderr, out.stderr
    refused = main_run(capsys, "campaign", "round", spec.id, *at, *reader)  # an analyst may not open a round
    assert refused.returncode == 1 and "403" in refused.stderr and "Traceback" not in refused.stderr


# ------------------------------------------------------------------------------------ report files


@pytest.mark.slow  # a collector with its rollover, and two pldp aggregate processes (about 15 s)
def test_report_files_are_partitioned_by_round(tmp_path: Path) -> None:
    from pldp.deploy import files as report_files
    from pldp.service.dayfiles import export_days

    db, rolled, exported = tmp_path / "files.db", tmp_path / "rolled", tmp_path / "exported"
    spec = Spec.from_mechanism(pldp.KRR(2.0, 3), question="Files by round?")
    srv = Server(db, "--export-dir", str(rolled), "--export-every", "1s", env={store.TODAY_ENV: "2026-03-01"})
    b1, b2, late = _batch(spec, 90, 0, 100), _batch(spec, 91, 2, 50), _batch(spec, 92, 1, 5)
    with srv.start():
        admin = srv.admin()
        admin.create_campaign(spec, rounds="manual")
        anyone = srv.client()
        anyone.submit(spec.id, b1)
        admin.open_round(spec.id)
        anyone.submit(spec.id, b2, round=2)
        anyone.submit(spec.id, late, round=1)  # in round 1's grace, after round 2's reports
        reader = Collector(srv.url, admin.new_token("files", [spec.id])["token"])
        wait_until(lambda: sum(pq.ParquetFile(p).metadata.num_rows for p in report_files.report_files(rolled)) == 155)
        written = export_days(reader, spec.id, exported)
    day = "day=2026-03-01"
    for root in (rolled, exported):
        found = report_files.report_files(root, spec.id)
        assert {p.parent.relative_to(root / f"spec={spec.id}").as_posix() for p in found} == {
            f"round=1/{day}",
            f"round=2/{day}",
        }
        for p in found:
            assert report_files.round_of(pq.read_schema(p).metadata) == int(p.parent.parent.name.split("=")[1])
        by_round = {turn: [p for p in found if p.parent.parent.name == f"round={turn}"] for turn in (1, 2)}
        tallies = {
            turn: functools.reduce(lambda x, y: x.merge(y), (decode(spec, pq.read_table(p)) for p in paths))
            for turn, paths in by_round.items()
        }
        assert tallies[1] == decode(spec, b1).merge(decode(spec, late)) and tallies[2] == decode(spec, b2)
    assert len(written) == 2  # one file per round and day
    assert len(report_files.report_files(rolled, spec.id, 1)) == 2  # round 1: its reports, then its late ones
    (tmp_path / "spec.json").write_text(spec.to_json())
    for turn, want in ((1, 105), (2, 50)):
        out = tmp_path / f"round{turn}.json"
        done = _pldp(
            "aggregate", str(tmp_path / "spec.json"), str(rolled), str(exported), "--round", str(turn),
            "--workers", "0", "--no-progress", "--json", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(out.read_text())["n"] == want  # each report once, though both roots hold it
