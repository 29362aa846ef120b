"""The collector's HTTP API in process: the fast path of report submission answers exactly as the
documented FastAPI route, and ``/openapi.json`` types every body and declares every refusal."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pytest

pytest.importorskip("fastapi")

import pydantic

import pldp
from pldp.channel import NODE_KINDS
from pldp.channel.sampling import GRID_BITS
from pldp.client import Client
from pldp.deploy import Spec, decode
from pldp.deploy.estimates import campaign_estimate
from pldp.deploy.spec import CAP_MEMBERS, FORMAT, MEMO_KEY_MAX
from pldp.deploy.wire import BATCH_FORMAT, REPORT_FORMAT
from pldp.service import auth, codes, collect, models
from pldp.service.app import Limits, create_app
from pldp.service.ingest import FastPath
from tests.deploy_cases import answers_of, oracle_cases, spec_of, words

ADMIN = "a" * 43
ANALYST = "b" * 43


async def _asgi(
    app: Any, method: str, path: str, body: bytes | list[bytes] = b"", headers: Any = (), client: str = "127.0.0.1"
) -> tuple[int, dict[str, str], bytes]:
    """One request through an ASGI app, in process: the status, the headers and the body.

    ``body`` as a list is sent in that many chunks, without a Content-Length. A body is sent as
    ``application/json`` unless ``headers`` give a ``Content-Type`` (``None``: none).
    """
    chunks = body if isinstance(body, list) else [body]
    path, _, query = path.partition("?")
    raw = [(k.lower().encode(), v.encode()) for k, v in headers if v is not None]
    if not isinstance(body, list):
        raw.append((b"content-length", str(sum(map(len, chunks))).encode()))
    if any(chunks) and not any(k.lower() == "content-type" for k, _ in headers):
        raw.append((b"content-type", b"application/json"))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "", "headers": raw,
        "client": (client, 1), "server": ("127.0.0.1", 80),
    }  # fmt: skip
    sent = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]
    out: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        return sent.pop(0) if sent else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
            out["headers"] = {k.decode().lower(): v.decode() for k, v in message["headers"]}
        else:
            out["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return out["status"], out["headers"], out["body"]


def _app(db: Path, fast: bool = True, limits: Limits | None = None) -> Any:
    """A collector on ``db`` with an admin and an analyst token; without its fast path if not ``fast``."""
    app = create_app(db, limits)
    if not fast:
        app.user_middleware = [m for m in app.user_middleware if m.cls is not FastPath]
    app.state.writer.run(lambda ctx: collect.add_token(ctx, ADMIN, "admin", "admin", [], time.time()))
    return app


def _stack_has_fast_path(app: Any) -> bool:
    """Whether the built middleware stack of ``app`` holds :class:`FastPath`."""
    layer = app.middleware_stack
    while layer is not None:
        if isinstance(layer, FastPath):
            return True
        layer = getattr(layer, "app", None)
    return False


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _submissions(krr: Spec, oue: Spec, febsf: Spec, closed: Spec) -> list[tuple[str, Any, list[tuple[str, str]]]]:
    """Requests to ``POST /v1/campaigns/{id}/reports``: (path, body, headers), good and bad, in order."""

    def batch(spec: Spec, n: int, seed: int, edit: Any = None, **kw: Any) -> bytes:
        answers = np.arange(n) % len(spec.labels)
        data = Client(spec, words(seed)).reports(answers, **kw).to_json()
        if edit is not None:
            edit(data)
        return json.dumps(data).encode()

    def payload(i: int, value: Any) -> Any:
        return lambda d: d["reports"][i].__setitem__("payload", value)

    good = batch(krr, 20, 1)
    single = json.dumps(Client(krr, words(2)).report(3)).encode()
    listed = json.dumps(
        [
            {"format": REPORT_FORMAT, "spec": krr.id, **r}
            for r in Client(krr, words(3)).reports(np.arange(4)).to_json()["reports"]
        ]
    ).encode()
    half = json.loads(batch(krr, 10, 1))  # the first 10 of ``good`` again, and 5 new ones
    half["reports"] += json.loads(batch(krr, 5, 4))["reports"]
    clash = json.loads(good)
    clash["reports"][3]["payload"] = (clash["reports"][3]["payload"] + 1) % 5
    level = np.arange(6) % 2
    r, o, f = (f"/v1/campaigns/{s.id}/reports" for s in (krr, oue, febsf))
    anonymous: list[tuple[str, str]] = []
    return [
        (r, good, anonymous),  # stored
        (r, good, anonymous),  # retried: duplicates
        (r, single, anonymous),  # one report
        (r, listed, anonymous),  # a list of reports
        (r, json.dumps(half).encode(), anonymous),  # some retried, some new
        (r, [good[:7], good[7:100], good[100:]], anonymous),  # in chunks (a retry)
        (r, good, [("authorization", f"Bearer {ADMIN}")]),  # any valid token
        (r, json.dumps(clash).encode(), anonymous),  # a stored id with another payload: a duplicate, not stored
        (r, b"{not json", anonymous),  # 400: malformed
        (r, b"\xff\xfe\x00", anonymous),  # 400: not UTF-8
        (r, b"", anonymous),  # 400: empty
        (r, b"42", anonymous),  # 400: not reports
        (r, batch(krr, 3, 5, lambda d: d.__setitem__("spec", oue.id)), anonymous),  # 400: another spec's batch
        (r, json.dumps({**json.loads(single), "spec": oue.id}).encode(), anonymous),  # 400: another spec's report
        (r, batch(krr, 3, 6, lambda d: d.__setitem__("reports", [])), anonymous),  # 400: no reports
        (r, batch(krr, 3, 7, lambda d: d.__setitem__("reports", "x")), anonymous),  # 400: reports not a list
        (r, batch(krr, 3, 8, payload(1, 5)), anonymous),  # 400: item out of range
        (r, batch(krr, 3, 9, payload(2, -1)), anonymous),  # 400: negative item
        (r, batch(krr, 3, 10, payload(0, "AA==")), anonymous),  # 400: bits for an item
        (r, batch(krr, 3, 11, payload(0, True)), anonymous),  # 400: a bool
        (r, batch(krr, 3, 12, payload(0, 1.5)), anonymous),  # 400: a float
        (r, batch(krr, 3, 13, lambda d: d["reports"][1].__setitem__("id", "XYZ")), anonymous),  # 400: bad id
        (r, batch(krr, 3, 14, lambda d: d["reports"][2].__setitem__("id", d["reports"][0]["id"])), anonymous),
        (r, batch(krr, 3, 15, lambda d: d["reports"][0].__setitem__("extra", 1)), anonymous),  # 400: a member more
        (r, json.dumps({**json.loads(single), "format": "pldp.report/9"}).encode(), anonymous),  # 400: format
        (o, batch(oue, 6, 16), anonymous),  # stored
        (o, batch(oue, 3, 17, payload(0, "!!")), anonymous),  # 400: not base64
        (o, batch(oue, 3, 18, payload(1, _b64(b"\x00\x00"))), anonymous),  # 400: too many bytes
        (o, batch(oue, 3, 19, payload(2, _b64(b"\x07"))), anonymous),  # 400: padding bits set
        (o, batch(oue, 3, 20, payload(0, 1)), anonymous),  # 400: an item for bits
        (f, batch(febsf, 6, 21, level=level), anonymous),  # stored
        (f, batch(febsf, 3, 22, lambda d: d["reports"][0]["payload"].pop("level"), level=level[:3]), anonymous),
        (
            f,
            batch(febsf, 3, 23, lambda d: d["reports"][1]["payload"].__setitem__("level", 7), level=level[:3]),
            anonymous,
        ),
        (f, batch(febsf, 3, 24, payload(2, 1), level=level[:3]), anonymous),  # 400: no level object
        (r, batch(krr, 60, 25), anonymous),  # 413: too many reports
        (r, b"[" + b" " * 5000 + b"]", anonymous),  # 413: over the body limit (declared)
        (r, [b"[" + b" " * 3000, b" " * 3000 + b"]"], anonymous),  # 413: over the limit, streamed
        (f"/v1/campaigns/{closed.id}/reports", batch(closed, 3, 26), anonymous),  # 409: closed
        (f"/v1/campaigns/{'0' * 32}/reports", good, anonymous),  # 404
        (f"/v1/campaigns/{'0' * 32}/reports", b"{not json", anonymous),  # 404 before the body is read
        (r, good, [("authorization", "Bearer not-a-token")]),  # 401
        (r, good, [("authorization", "Basic YWxhZGRpbjpvcGVu")]),  # 401: not a bearer token
        (r, good, [("authorization", "Bearer ")]),  # 401: an empty token
        (r, b"{not json", [("authorization", "Bearer not-a-token")]),  # 401 before the body is read
        # 44-: cross-origin requests, and bodies over the JSON bounds
        (r, good, [("content-type", "text/plain")]),  # 415: a CORS "simple request"
        (r, good, [("content-type", None)]),  # 415: no type
        (r, good, [("origin", "https://evil.example")]),  # 403: a page of another origin
        (r, good, [("origin", "null")]),  # 403: a sandboxed frame
        (r, good, [("origin", "http://collector.test"), ("host", "collector.test")]),  # its own page: a retry
        (r, good, [("content-type", "application/json; charset=utf-8")]),  # JSON with a charset: a retry
        (r, b"[" * 100 + b"]" * 100, anonymous),  # 400: too deep (over 64)
        (r, b"[" + b"7" * 2000 + b"]", anonymous),  # 400: a number too long (over 1,000 digits)
        (r, b"[" + b"{}," * 1300 + b"{}]", anonymous),  # 413: more values than 50 reports hold
    ]


def _floods(krr: Spec) -> list[tuple[str, Any, list[tuple[str, str]], str]]:
    """Requests from other addresses (path, body, headers, client), after :func:`_submissions`: the
    rate limit (a burst of 200 reports, no refill) and the campaign's cap (200 reports)."""

    def batch(n: int, seed: int) -> bytes:
        return json.dumps(Client(krr, words(seed)).reports(np.arange(n) % 5).to_json()).encode()

    r, x, y = f"/v1/campaigns/{krr.id}/reports", "198.51.100.7", "2001:db8::1"
    single = json.dumps(Client(krr, words(2)).report(3)).encode()  # stored already
    admin = [("authorization", f"Bearer {ADMIN}")]
    return [
        *[(r, batch(45, 30 + i), [], x) for i in range(3)],  # stored: krr holds 30 + 135 reports
        (r, batch(45, 33), [], x),  # 409: over the campaign's cap (the address is charged)
        (r, batch(45, 34), [], x),  # 429: 20 tokens left, 45 asked (one charged)
        (r, single, [], x),  # a retry: 18 left
        (r, batch(18, 35), [], x),  # stored: none left
        (r, b"{not json", [], x),  # 429 before the body is read
        (r, single, admin, x),  # an admin's token is not limited
        (r, single, [], y),  # another address: its own bucket
    ]


#: Respondent codes of the invited campaign, the same in both stores: good, good, expired, revoked.
CODES = ["good" + "a" * 22, "good" + "b" * 22, "expired" + "c" * 19, "revoked" + "d" * 19]


def _coded(invited: Spec, krr: Spec) -> list[tuple[str, Any, list[tuple[str, str]]]]:
    """Requests to an invited campaign (and one to an open one), with and without codes, in order."""

    def report(seed: int) -> bytes:
        return json.dumps(Client(invited, words(seed)).report(seed % 4)).encode()

    def code(c: str) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {c}")]

    good, other, expired, revoked = CODES
    two = json.dumps(Client(invited, words(40)).reports([0, 1]).to_json()).encode()
    i = f"/v1/campaigns/{invited.id}/reports"
    return [
        (i, report(31), []),  # 401: no code
        (i, report(31), code("unknown" + "e" * 19)),  # 401: not a code of this campaign
        (i, report(31), code(good)),  # stored, the code used
        (i, report(31), code(good)),  # the same report again: a duplicate
        (i, report(32), code(good)),  # 409: the code sent another report
        (i, two, code(other)),  # 400: a code sends one report
        (i, report(33), code(expired)),  # 401: expired
        (i, report(33), code(revoked)),  # 401: revoked
        (i, report(33), code(ADMIN)),  # 403: a token is not a code
        (i, report(31), code(other)),  # stored already (with another code): a duplicate, ``other`` unused
        (i, report(33), code(other)),  # stored, ``other`` used
        (f"/v1/campaigns/{krr.id}/reports", report(34), code(other)),  # 401: a code of another campaign
    ]


def _rounds(manual: Spec) -> list[tuple[str, Any, list[tuple[str, str]]]]:
    """Requests to a campaign with manual rounds, in round 3 (opened long ago: round 2's grace is
    over), naming rounds (``?round=``) good and bad, in order."""

    def reports(seed: int, n: int = 2) -> bytes:
        return json.dumps(Client(manual, words(seed)).reports(np.arange(n) % 3).to_json()).encode()

    m = f"/v1/campaigns/{manual.id}/reports"
    return [
        (f"{m}?round=3", reports(50), []),  # stored in round 3
        (f"{m}?round=x", reports(51), []),  # 400: not a round number
        (f"{m}?round=0", reports(51), []),  # 400: rounds start at 1
        (f"{m}?round=4", reports(51), []),  # 409: not started
        (f"{m}?round=2", reports(51), []),  # 409: over (its grace too)
        (f"{m}?round=2", reports(50), []),  # retries: acknowledged whatever round they name
        (f"{m}?other=1", reports(52, 3), []),  # no round named: the current one
        (f"{m}?round=3&round=1", reports(53), []),  # the last one named counts: 409
    ]


def test_the_fast_path_and_the_documented_route_answer_alike(tmp_path: Path) -> None:
    krr = Spec.from_mechanism(pldp.KRR(1.0, 5), question="q")
    oue = Spec.from_mechanism(pldp.OUE(1.0, 5), question="bits?")
    febsf = Spec.from_mechanism(pldp.protocols.FEBSF([0.5, 1.0], 0.5, 4, "krr"), question="levels?")
    closed = Spec.from_mechanism(pldp.KRR(2.0, 3), question="closed?")
    invited = Spec.from_mechanism(pldp.KRR(1.5, 4), question="invited?")
    manual = Spec.from_mechanism(pldp.KRR(1.7, 3), question="each round?")
    with_codes = [(*r, "192.0.2.99") for r in _coded(invited, krr)]
    with_rounds = [(*r, "192.0.2.50") for r in _rounds(manual)]
    # each from an address of its own: a refused body costs its address (pldp.service.ratelimit), and
    # the floods below count the tokens of one address exactly
    submissions = _submissions(krr, oue, febsf, closed)
    requests = [(*r, f"127.0.{i // 250}.{1 + i % 250}") for i, r in enumerate(submissions)] + _floods(krr) + with_codes
    requests += with_rounds
    answers, tallies, uses = [], [], []
    limits = Limits(
        max_body=4096, max_reports=50, rate=1.0, burst=200, campaign_cap=200, address_share=0, address_burst=0
    )
    now = float(int(time.time()))  # the same times in both stores, so the same reasons
    hashes = [b"".join(auth.token_hash(c) for c in part) for part in (CODES[:2], CODES[2:])]
    for fast in (True, False):
        app = _app(tmp_path / f"{fast}.db", fast, limits)
        app.state.service.ingest.limiter.clock = lambda: 0.0  # no refill: the same answers on both paths
        writer = app.state.writer
        try:
            for spec in (krr, oue, febsf, closed):
                writer.run(lambda ctx, s=spec: collect.create_campaign(ctx, s, 0.0))
            writer.run(lambda ctx: collect.close_campaign(ctx, closed.id, 1.0))
            writer.run(lambda ctx: collect.create_campaign(ctx, invited, 0.0, "invited"))
            writer.run(lambda ctx: codes.add_codes(ctx, invited.id, hashes[0], now, now + 3600))
            writer.run(lambda ctx: codes.add_codes(ctx, invited.id, hashes[1], now - 7200, now - 3600))
            writer.run(lambda ctx: codes.revoke_codes(ctx, invited.id, codes.hash_codes(CODES[3:]), now))
            writer.run(lambda ctx: collect.create_campaign(ctx, manual, 0.0, "open", "manual"))
            for opened in (0.0, 1.0):  # rounds 2 and 3, long ago
                writer.run(lambda ctx, t=opened: collect.open_round(ctx, manual.id, t))
            got = []
            for path, body, headers, client in requests:
                status, head, raw = asyncio.run(_asgi(app, "POST", path, body, headers, client))
                extra = (head.get("www-authenticate"), head.get("retry-after"))
                got.append((status, head.get("content-type"), *extra, json.loads(raw)))
            assert _stack_has_fast_path(app) is fast  # the other app's answers came from the FastAPI route
            answers.append(got)
            conn = app.state.service.conn()
            tallies.append(
                [
                    conn.execute("SELECT n FROM tallies ORDER BY campaign_id").fetchall(),
                    conn.execute("SELECT campaign_id, round, n FROM round_tallies").fetchall(),
                    conn.execute("SELECT round, COUNT(*) FROM reports GROUP BY round").fetchall(),
                ]
            )
            uses.append(conn.execute("SELECT code_hash, round, report_id FROM code_uses ORDER BY used_at").fetchall())
        finally:
            writer.close()
    assert answers[0] == answers[1]
    assert tallies[0] == tallies[1]
    rounded = answers[0][-len(with_rounds) :]
    assert [(a[0], a[4].get("error")) for a in rounded] == [
        (200, None),
        (400, "bad_round"),
        (400, "bad_round"),
        (409, "round_not_started"),
        (409, "round_closed"),
        (200, None),
        (200, None),
        (409, "round_closed"),
    ]
    assert [rounded[i][4] for i in (0, 5, 6)] == [
        {"accepted": 2, "duplicates": 0},
        {"accepted": 0, "duplicates": 2},
        {"accepted": 3, "duplicates": 0},
    ]
    # every report of the manual campaign is in round 3, and so is its round's tally; the others in round 1
    assert tallies[0][1] == [(manual.id, 3, 5)]
    assert dict(tallies[0][2])[3] == 5 and set(dict(tallies[0][2])) == {1, 3}
    answers = [a[: -len(with_rounds)] for a in answers]
    coded = answers[0][-12:]
    assert [(a[0], a[4].get("error")) for a in coded] == [
        (401, "code_required"),
        (401, "unknown_code"),
        (200, None),
        (200, None),
        (409, "code_used"),
        (400, "one_report_per_code"),
        (401, "code_expired"),
        (401, "code_revoked"),
        (403, "forbidden"),
        (200, None),
        (200, None),
        (401, "unauthorized"),
    ]
    assert [coded[i][4] for i in (2, 3, 9, 10)] == [
        {"accepted": 1, "duplicates": 0},
        {"accepted": 0, "duplicates": 1},
        {"accepted": 0, "duplicates": 1},
        {"accepted": 1, "duplicates": 0},
    ]
    assert all(a[2] == "Bearer" for a in coded if a[0] == 401)
    # each good code is used once, by the report it stored, in round 1 (a campaign that does not
    # recur has the one round 1): the same in both stores
    ids = [json.loads(coded_body)["id"] for _, coded_body, _ in _coded(invited, krr)[2:11:8]]
    want = [(auth.token_hash(CODES[i]), 1, bytes.fromhex(r)) for i, r in zip((0, 1), ids, strict=True)]
    assert uses[0] == uses[1] == want
    answers = [a[:-12] for a in answers]
    statuses = [a[0] for a in answers[0]]
    assert statuses[:7] == [200] * 7 and statuses[25] == statuses[30] == 200
    assert [a[4] for a in answers[0][:7]] == [
        {"accepted": 20, "duplicates": 0},
        {"accepted": 0, "duplicates": 20},
        {"accepted": 1, "duplicates": 0},
        {"accepted": 4, "duplicates": 0},
        {"accepted": 5, "duplicates": 10},
        {"accepted": 0, "duplicates": 20},
        {"accepted": 0, "duplicates": 20},
    ]
    assert statuses[7] == 200 and answers[0][7][4] == {"accepted": 0, "duplicates": 20}  # as a retry, stored once
    bad = [i for i in range(8, 34) if i not in (25, 30)]
    assert all(statuses[i] == 400 and answers[0][i][1] == "application/json" for i in bad)
    assert statuses[34:44] == [413, 413, 413, 409, 404, 404, 401, 401, 401, 401]
    assert all(a[2] == "Bearer" for a in answers[0][40:44])  # the 401s ask for a bearer token
    assert statuses[44:53] == [415, 415, 403, 403, 200, 200, 400, 400, 413]
    assert [a[4]["error"] for a in answers[0][50:53]] == ["too_deep", "number_too_long", "too_many_reports"]
    assert statuses[53:] == [200, 200, 200, 409, 429, 200, 200, 429, 200, 200]
    assert answers[0][56][4]["error"] == "campaign_full"
    assert [answers[0][i][3] for i in (57, 60)] == ["26", "1"]  # Retry-After: (45 - 19) / 1 s, then 1 s
    assert answers[0][58][4] == {"accepted": 0, "duplicates": 1}
    assert sorted(n for (n,) in tallies[0][0]) == [
        0,
        2,
        5,
        6,
        6,
        30 + 135 + 18,
    ]  # closed, invited, manual, oue, febsf, krr: its cap
    assert {a[4]["error"] for a in answers[0] if a[0] >= 400} >= {
        "malformed_json",
        "bad_report",
        "too_many_reports",
        "body_too_large",
        "campaign_closed",
        "unknown_campaign",
        "unauthorized",
        "unsupported_media_type",
        "cross_origin",
        "rate_limited",
    }


# ------------------------------------------------------------------------------------ the schema
#: The refusals each operation declares: what its code can answer. (An analyst's data routes answer
#: no 404: a grant names a stored campaign, which the store's foreign key keeps, so an unknown
#: campaign is one not granted, a 403.)
REFUSALS = {
    ("get", "/v1/health"): set(),
    ("post", "/v1/campaigns"): {400, 401, 403, 409, 413, 415, 503},
    ("get", "/v1/campaigns"): {401},
    ("get", "/v1/campaigns/{campaign_id}/spec"): {401, 404},
    ("post", "/v1/campaigns/{campaign_id}/close"): {401, 403, 404, 503},
    ("get", "/v1/campaigns/{campaign_id}/round"): {401, 404},
    ("post", "/v1/campaigns/{campaign_id}/rounds"): {401, 403, 404, 409, 503},
    ("get", "/v1/campaigns/{campaign_id}/series"): {400, 401, 403, 409},
    ("post", "/v1/campaigns/{campaign_id}/codes"): {400, 401, 403, 404, 409, 413, 415, 503},
    ("get", "/v1/campaigns/{campaign_id}/codes"): {401, 403, 404},
    ("delete", "/v1/campaigns/{campaign_id}/codes"): {400, 401, 403, 404, 413, 415, 503},
    ("post", "/v1/campaigns/{campaign_id}/reports"): {400, 401, 403, 404, 409, 413, 415, 429, 503},
    ("get", "/v1/campaigns/{campaign_id}/estimate"): {400, 401, 403, 409},
    ("get", "/v1/campaigns/{campaign_id}/export"): {400, 401, 403, 501},
    ("get", "/v1/campaigns/{campaign_id}/days"): {401, 403},
    ("post", "/v1/tokens"): {400, 401, 403, 404, 413, 415, 503},
    ("get", "/v1/tokens"): {401, 403},
    ("delete", "/v1/tokens/{token_id}"): {401, 403, 404, 409, 503},
    ("post", "/v1/tokens/rotate"): {400, 401, 403, 413, 415, 503},
    ("get", "/c/{campaign_id}"): {404},
    ("get", "/dashboard/{campaign_id}"): {404},
    ("get", "/static/{name}"): {404},
}
#: The operations that need a token, and those that take one (anonymous is fine, an invalid one is refused).
TAKE_TOKEN = {
    ("get", "/v1/campaigns/{campaign_id}/spec"),
    ("post", "/v1/campaigns/{campaign_id}/reports"),
    ("get", "/v1/campaigns/{campaign_id}/round"),
}
NEED_TOKEN = {op for op in REFUSALS if 401 in REFUSALS[op]} - TAKE_TOKEN


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    app = create_app(tmp_path_factory.mktemp("schema") / "s.db")
    try:
        return dict(app.openapi())
    finally:
        app.state.writer.close()


def _refs(obj: Any) -> set[str]:
    if isinstance(obj, dict):
        return {obj["$ref"]} if "$ref" in obj else set().union(*(_refs(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(*(_refs(v) for v in obj))
    return set()


def test_every_post_body_is_typed_and_every_reference_resolves(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    bodies = {}
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if "requestBody" in op:
                body = op["requestBody"]["content"]["application/json"]["schema"]
                if "$ref" in body:
                    target = components[body["$ref"].removeprefix("#/components/schemas/")]
                    assert target.get("properties") or target.get("anyOf") or target.get("oneOf"), path
                else:
                    assert body.get("type") == "object" and body.get("properties"), path
                assert op["requestBody"]["required"] is True
                bodies[method, path] = body.get("$ref", "").rsplit("/", 1)[-1]
    assert bodies == {
        ("post", "/v1/campaigns"): "CampaignSpec",
        ("post", "/v1/campaigns/{campaign_id}/reports"): "ReportsBody",
        ("post", "/v1/campaigns/{campaign_id}/codes"): "CodesRequest",
        ("delete", "/v1/campaigns/{campaign_id}/codes"): "RevokeCodesRequest",
        ("post", "/v1/tokens"): "TokenRequest",
        ("post", "/v1/tokens/rotate"): "RotateRequest",
    }
    posts = {("post", p) for p, item in schema["paths"].items() if "post" in item}
    assert posts - set(bodies) == {  # the POSTs without a body
        ("post", "/v1/campaigns/{campaign_id}/close"),
        ("post", "/v1/campaigns/{campaign_id}/rounds"),
    }
    # a third-party client learns from the schema how to make an invited campaign
    (access,) = [p for p in schema["paths"]["/v1/campaigns"]["post"]["parameters"] if p["name"] == "access"]
    assert access["in"] == "query" and access["schema"]["enum"] == ["open", "invited"]
    for ref in _refs(schema):
        assert ref.removeprefix("#/components/schemas/") in components, ref
    # every node kind of a sampler, and a payload of every shape
    node = components["SamplerNode"]["discriminator"]["mapping"]
    assert set(node) == set(NODE_KINDS) and {"direct", "leveled", "memo"} <= set(node)
    payload = json.dumps(components["Payload"])
    assert all(s in payload for s in ('"integer"', '"string"', "LeveledPayload", '"array"'))
    assert components["Sampler"]["properties"]["grid_bits"]["const"] == 32


def test_every_route_declares_its_refusals_with_the_error_model(schema: dict[str, Any]) -> None:
    ops = {(m, p): op for p, item in schema["paths"].items() for m, op in item.items()}
    assert set(ops) == set(REFUSALS)
    for key, op in ops.items():
        declared = {int(s) for s in op["responses"] if int(s) >= 400}
        assert declared == REFUSALS[key], key
        for status in declared:
            content = op["responses"][str(status)]["content"]["application/json"]["schema"]
            assert content == {"$ref": "#/components/schemas/Error"}, (key, status)
        assert "422" not in op["responses"]
        security = op.get("security", [])
        if key in NEED_TOKEN:
            assert security == [{"BearerToken": []}], key
        elif key in TAKE_TOKEN:
            assert security == [{"BearerToken": []}, {}], key
        else:
            assert not security, key
        ok = {int(s) for s in op["responses"] if int(s) < 400}
        assert ok and all("content" in op["responses"][str(s)] for s in ok - {304}), key
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    assert schema["components"]["securitySchemes"]["BearerToken"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schema["components"]["securitySchemes"]["BearerToken"]["description"],
    }


def test_the_refusals_each_route_gives_are_declared(tmp_path: Path, schema: dict[str, Any]) -> None:
    """Provoke the refusals of every route; each status seen is one its operation declares."""
    app = _app(tmp_path / "r.db", limits=Limits(max_body=4096, max_reports=5, max_spec=2000, rate=1.0, burst=3))
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="q")
    big = Spec.from_mechanism(pldp.OUE(1.0, 200), question="too big")
    app.state.writer.run(lambda ctx: collect.add_token(ctx, ANALYST, "analyst", "an", [], time.time()))
    a = [("authorization", f"Bearer {ADMIN}")]
    n = [("authorization", f"Bearer {ANALYST}")]  # an analyst granted nothing
    bad = [("authorization", "Bearer " + "nope" * 10)]
    c, z = f"/v1/campaigns/{spec.id}", f"/v1/campaigns/{'0' * 32}"
    report = json.dumps(Client(spec).reports([0, 1]).to_json()).encode()
    inv = Spec.from_mechanism(pldp.KRR(1.2, 3), question="invited")
    i, one = f"/v1/campaigns/{inv.id}", json.dumps(Client(inv).report(0)).encode()
    (admin_id,) = app.state.service.conn().execute("SELECT id FROM tokens WHERE role = 'admin'").fetchone()
    issue, count, revoke = (
        ("post", "/v1/campaigns/{campaign_id}/codes"),
        ("get", "/v1/campaigns/{campaign_id}/codes"),
        ("delete", "/v1/campaigns/{campaign_id}/codes"),
    )
    ask = json.dumps({"count": 2}).encode()
    revoke_one, token_id, rotate = ("delete", "/v1/tokens/{token_id}"), f"/v1/tokens/{admin_id}", "/v1/tokens/rotate"
    provoked: list[tuple[tuple[str, str], str, Any, Any]] = [
        (("post", "/v1/campaigns"), "/v1/campaigns?access=invited", spec.to_json().encode(), a),  # 409: it is open
        (("post", "/v1/campaigns"), "/v1/campaigns?access=secret", spec.to_json().encode(), a),  # 400
        (issue, f"{i}/codes", b"[]", a),
        (issue, f"{i}/codes", json.dumps({"count": 0}).encode(), a),
        (issue, f"{i}/codes", ask, []),
        (issue, f"{i}/codes", ask, n),
        (issue, f"{z}/codes", ask, a),
        (issue, f"{c}/codes", ask, a),  # 409: an open campaign takes no codes
        (issue, f"{i}/codes", b" " * 5000, a),
        (count, f"{i}/codes", b"", []),
        (count, f"{i}/codes", b"", n),
        (count, f"{z}/codes", b"", a),
        (revoke, f"{i}/codes", b"{}", a),  # 400: neither codes nor unused
        (revoke, f"{i}/codes", b'{"unused": true}', []),
        (revoke, f"{i}/codes", b'{"unused": true}', n),
        (revoke, f"{z}/codes", b'{"unused": true}', a),
        (revoke, f"{i}/codes", b" " * (33 * 100_000 + 5000), a),
        (("post", "/v1/campaigns/{campaign_id}/reports"), f"{i}/reports", one, a),  # 403: a token is not a code
        (("post", "/v1/campaigns/{campaign_id}/reports"), f"{i}/reports", one, []),  # 401: no code
        (("get", "/v1/tokens"), "/v1/tokens", b"", []),
        (("get", "/v1/tokens"), "/v1/tokens", b"", n),
        (revoke_one, token_id, b"", []),
        (revoke_one, token_id, b"", n),
        (revoke_one, "/v1/tokens/nope", b"", a),
        (revoke_one, token_id, b"", a),  # 409: an admin token is rotated, not revoked
        (("post", rotate), rotate, b"[]", a),
        (("post", rotate), rotate, json.dumps({"expires_in": 0}).encode(), a),
        (("post", rotate), rotate, b"{}", []),
        (("post", rotate), rotate, b"{}", n),
        (("post", rotate), rotate, b" " * 70000, a),
        (("post", rotate), rotate, b"{}", [*a, ("content-type", "text/plain")]),  # 415: not JSON
        (issue, f"{i}/codes", ask, [*a, ("content-type", "text/plain")]),
        (revoke, f"{i}/codes", b'{"unused": true}', [*a, ("content-type", "text/plain")]),
        (("post", "/v1/campaigns"), "/v1/campaigns", b"{}", a),
        (("post", "/v1/campaigns"), "/v1/campaigns", spec.to_json().encode(), []),
        (("post", "/v1/campaigns"), "/v1/campaigns", spec.to_json().encode(), n),
        (("post", "/v1/campaigns"), "/v1/campaigns", big.to_json().encode(), a),
        (("get", "/v1/campaigns"), "/v1/campaigns", b"", []),
        (("get", "/v1/campaigns"), "/v1/campaigns", b"", bad),
        (("get", "/v1/campaigns/{campaign_id}/spec"), f"{z}/spec", b"", []),
        (("get", "/v1/campaigns/{campaign_id}/spec"), f"{c}/spec", b"", bad),
        (("post", "/v1/campaigns/{campaign_id}/reports"), f"{c}/reports", b"{", []),
        (("post", "/v1/campaigns/{campaign_id}/reports"), f"{c}/reports", report, bad),
        (("post", "/v1/campaigns/{campaign_id}/reports"), f"{z}/reports", report, []),
        (("post", "/v1/campaigns/{campaign_id}/reports"), f"{c}/reports", b" " * 5000, []),
        (("post", "/v1/campaigns/{campaign_id}/reports"), f"{c}/reports", report, [("origin", "https://a.example")]),
        (("post", "/v1/campaigns/{campaign_id}/reports"), f"{c}/reports", report, [("content-type", "text/plain")]),
        (("post", "/v1/campaigns"), "/v1/campaigns", spec.to_json().encode(), [*a, ("content-type", "text/plain")]),
        (("post", "/v1/tokens"), "/v1/tokens", b"{}", [*a, ("content-type", "application/x-www-form-urlencoded")]),
        (("get", "/v1/campaigns/{campaign_id}/estimate"), f"{c}/estimate?level=x", b"", n),
        (("get", "/v1/campaigns/{campaign_id}/estimate"), f"{c}/estimate", b"", []),
        (("get", "/v1/campaigns/{campaign_id}/estimate"), f"{c}/estimate", b"", a),
        (("get", "/v1/campaigns/{campaign_id}/estimate"), f"{c}/estimate", b"", n),
        (("get", "/v1/campaigns/{campaign_id}/export"), f"{c}/export", b"", []),
        (("get", "/v1/campaigns/{campaign_id}/export"), f"{c}/export", b"", n),
        (("get", "/v1/campaigns/{campaign_id}/days"), f"{c}/days", b"", a),
        (("get", "/v1/campaigns/{campaign_id}/days"), f"{c}/days", b"", []),
        (("get", "/v1/campaigns/{campaign_id}/round"), f"{z}/round", b"", []),
        (("get", "/v1/campaigns/{campaign_id}/round"), f"{c}/round", b"", bad),
        (("post", "/v1/campaigns/{campaign_id}/rounds"), f"{c}/rounds", b"", []),
        (("post", "/v1/campaigns/{campaign_id}/rounds"), f"{c}/rounds", b"", n),
        (("post", "/v1/campaigns/{campaign_id}/rounds"), f"{z}/rounds", b"", a),
        (("post", "/v1/campaigns/{campaign_id}/rounds"), f"{c}/rounds", b"", a),  # 409: it does not recur
        (("get", "/v1/campaigns/{campaign_id}/series"), f"{c}/series?level=x", b"", n),
        (("get", "/v1/campaigns/{campaign_id}/series"), f"{c}/series", b"", []),
        (("get", "/v1/campaigns/{campaign_id}/series"), f"{c}/series", b"", n),
        (("post", "/v1/campaigns/{campaign_id}/close"), f"{z}/close", b"", a),
        (("post", "/v1/campaigns/{campaign_id}/close"), f"{c}/close", b"", n),
        (("post", "/v1/campaigns/{campaign_id}/close"), f"{c}/close", b"", []),
        (("post", "/v1/tokens"), "/v1/tokens", b"[]", a),
        (("post", "/v1/tokens"), "/v1/tokens", json.dumps({"campaigns": ["x"]}).encode(), a),
        (("post", "/v1/tokens"), "/v1/tokens", b" " * 70000, a),
        (("post", "/v1/tokens"), "/v1/tokens", b"{}", n),
        (("post", "/v1/tokens"), "/v1/tokens", b"{}", []),
        (("get", "/c/{campaign_id}"), "/c/nope", b"", []),
        (("get", "/dashboard/{campaign_id}"), f"/dashboard/{'0' * 32}", b"", []),
        (("get", "/static/{name}"), "/static/nothing.js", b"", []),
    ]
    seen: dict[tuple[str, str], set[int]] = {}
    try:
        assert asyncio.run(_asgi(app, "POST", "/v1/campaigns", spec.to_json().encode(), a))[0] == 201
        assert asyncio.run(_asgi(app, "POST", "/v1/campaigns?access=invited", inv.to_json().encode(), a))[0] == 201
        for key, path, body, headers in provoked:
            status, _, raw = asyncio.run(_asgi(app, key[0].upper(), path, body, headers))
            assert status >= 400 and set(json.loads(raw)) == {"error", "reason"}, (path, status)
            seen.setdefault(key, set()).add(status)
        # the analyst granted the campaign: a 409 (no reports yet) and a 400 (a bad day)
        token = json.loads(
            asyncio.run(_asgi(app, "POST", "/v1/tokens", json.dumps({"campaigns": [spec.id]}).encode(), a))[2]
        )
        g = [("authorization", f"Bearer {token['token']}")]
        seen[("get", "/v1/campaigns/{campaign_id}/estimate")].add(
            asyncio.run(_asgi(app, "GET", f"{c}/estimate", b"", g))[0]
        )
        seen[("get", "/v1/campaigns/{campaign_id}/export")].add(
            asyncio.run(_asgi(app, "GET", f"{c}/export?day=x", b"", g))[0]
        )
        seen[("get", "/v1/campaigns/{campaign_id}/series")].add(  # 409: round 5 has not started
            asyncio.run(_asgi(app, "GET", f"{c}/series?last=5", b"", g))[0]
        )
        assert asyncio.run(_asgi(app, "POST", f"{c}/close", b"", a))[0] == 200
        for _ in range(2):  # a 409 (closed; its 2 reports charged), then a 429 (1 of the burst of 3 left)
            seen[("post", "/v1/campaigns/{campaign_id}/reports")].add(
                asyncio.run(_asgi(app, "POST", f"{c}/reports", report))[0]
            )
    finally:
        app.state.writer.close()
    for key, statuses in seen.items():
        method, path = key
        declared = {int(s) for s in schema["paths"][path][method]["responses"]}
        assert statuses <= declared, (key, statuses - declared)
    # every declared refusal was provoked here, but the store's 503 and the missing pyarrow's 501
    for key, statuses in REFUSALS.items():
        assert statuses - {501, 503} <= seen.get(key, set()), (key, statuses - seen.get(key, set()))


# ------------------------------------------------------------------------------------ the models
def test_the_wire_models_name_pldps_own_constants() -> None:
    def literal(model: Any, field: str) -> tuple[Any, ...]:
        return get_args(model.model_fields[field].annotation)

    assert literal(models.CampaignSpec, "format") == (FORMAT,)
    assert literal(models.Batch, "format") == (BATCH_FORMAT,)
    assert literal(models.Report, "format") == (REPORT_FORMAT,)
    assert literal(models.Sampler, "grid_bits") == (GRID_BITS,)
    assert tuple(models.Caps.__annotations__) == CAP_MEMBERS
    assert models.Memo.model_fields["key"].metadata[-1].max_length == MEMO_KEY_MAX
    # the sampler node's schema is each kind's own (pldp.channel.node_schemas; tests/test_channel_schema.py)


@pytest.mark.parametrize("name", sorted(oracle_cases()))
def test_real_specs_and_their_clients_bodies_validate_against_the_models(name: str) -> None:
    oracle = oracle_cases()[name]
    spec = spec_of(oracle, name)
    models.CampaignSpec.model_validate(json.loads(spec.to_json()))
    answers, kw = answers_of(name, oracle, 5, np.random.default_rng(3))
    client = Client(spec, words(4))
    batch = client.reports(answers, **kw).to_json()
    models.ReportsBody.model_validate(batch)
    single = client.report(answers[0], **{k: v[0] for k, v in kw.items()})
    models.ReportsBody.model_validate(single)
    models.ReportsBody.model_validate([single])
    collect.prepare_batch(spec, json.dumps([single]).encode(), 10)  # and pldp takes it


@pytest.mark.parametrize("name", sorted(oracle_cases()))
def test_every_estimate_answer_validates_against_the_documented_model(name: str) -> None:
    """The estimate route renders its answer without validating it (speed): the model must still
    describe every method's answer of every family, and the model is strict enough to refuse one
    with a member missing."""
    oracle = oracle_cases()[name]
    spec = spec_of(oracle, name)
    answers, kw = answers_of(name, oracle, 400, np.random.default_rng(5))
    tally = decode(spec, Client(spec, words(6)).reports(answers, **kw))
    for method in spec.mechanism().methods:
        answer = json.loads(json.dumps(campaign_estimate(spec, tally, method, 0.9)))
        models.Estimate.model_validate(answer)
    answer.pop("n")
    with pytest.raises(pydantic.ValidationError):
        models.Estimate.model_validate(answer)


def test_the_models_refuse_what_pldp_refuses() -> None:
    from pydantic import ValidationError

    spec = json.loads(Spec.from_mechanism(pldp.OUE(1.0, 3), question="q").to_json())
    for edit in [
        lambda s: s["sampler"]["root"].__setitem__("kind", "bogus"),
        lambda s: s["sampler"]["root"].__setitem__("extra", 1),
        lambda s: s["sampler"].__setitem__("grid_bits", 31),
        lambda s: s.__setitem__("format", "pldp.spec/2"),
        lambda s: s.__setitem__("id", "ABC"),
        lambda s: s["sampler"]["root"]["a"].__setitem__(0, 2**32),
        lambda s: s["sampler"]["root"].__setitem__("notion", "IPLDP"),
    ]:
        bad = json.loads(json.dumps(spec))
        edit(bad)
        with pytest.raises(ValidationError):
            models.CampaignSpec.model_validate(bad)
    report = {"format": REPORT_FORMAT, "spec": "0" * 32, "id": "1" * 32, "payload": 1}
    for bad_report in [
        {**report, "extra": 1},
        {**report, "payload": True},
        {**report, "payload": -1},
        {**report, "payload": {"level": 0}},
        {**report, "id": "X" * 32},
        {"format": BATCH_FORMAT, "spec": "0" * 32, "reports": [report]},  # a batch's reports lack format and spec
    ]:
        with pytest.raises(ValidationError):
            models.ReportsBody.model_validate(bad_report)


def test_the_schemas_examples_are_a_real_spec_and_batch_the_collector_takes(
    tmp_path: Path, schema: dict[str, Any]
) -> None:
    components = schema["components"]["schemas"]
    spec_example = components["CampaignSpec"]["examples"][0]
    batch_example = components["ReportsBody"]["examples"][0]
    models.CampaignSpec.model_validate(spec_example)
    models.ReportsBody.model_validate(batch_example)
    spec = Spec.from_json(spec_example)  # verified exactly
    assert spec.id == spec_example["id"] == batch_example["spec"]
    app = _app(tmp_path / "e.db")
    admin = [("authorization", f"Bearer {ADMIN}")]
    try:
        status, _, raw = asyncio.run(_asgi(app, "POST", "/v1/campaigns", json.dumps(spec_example).encode(), admin))
        assert status == 201 and json.loads(raw)["id"] == spec.id
        path = f"/v1/campaigns/{spec.id}/reports"
        status, _, raw = asyncio.run(_asgi(app, "POST", path, json.dumps(batch_example).encode()))
        assert (status, json.loads(raw)) == (200, {"accepted": 2, "duplicates": 0})
    finally:
        app.state.writer.close()
