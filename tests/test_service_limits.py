"""The collector's bounds in process: the JSON pre-scan, the token buckets, the parsing budget, the
log filter, the origins, the connection cap. ``tests/test_service_abuse.py`` drives them through a
real server."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.deploy.wire import REPORT_FORMAT
from pldp.service import connections, jsonlimits
from pldp.service.bodies import BodyBudget, reading
from pldp.service.collect import CollectError
from pldp.service.crossorigin import normalize_origin
from pldp.service.errors import OncePerKind
from pldp.service.ratelimit import RateLimiter, address_key
from pldp.service.state import Limits
from tests.deploy_cases import answers_of, oracle_cases, spec_of, words


# ------------------------------------------------------------------------------------ JSON bounds
@pytest.mark.parametrize("name", sorted(oracle_cases()))
def test_the_value_bound_takes_every_form_of_the_most_reports_of_every_family(name: str) -> None:
    oracle = oracle_cases()[name]
    spec = spec_of(oracle, name)
    answers, kw = answers_of(name, oracle, 7, np.random.default_rng(11))
    client = Client(spec, words(12))
    batch = client.reports(answers, **kw).to_json()
    singles = [client.report(answers[i], **{k: v[i] for k, v in kw.items()}) for i in range(7)]
    bound = jsonlimits.report_values(spec, 7)
    for body in (batch, singles, singles[0]):
        for indent in (None, 2):
            raw = json.dumps(body, indent=indent).encode()
            assert jsonlimits.loads(raw, max_values=bound) == body
    over = json.dumps([*singles, *singles[:1]] * 40).encode()  # 320 reports: over the bound of 7
    with pytest.raises(jsonlimits.JSONLimitError) as info:
        jsonlimits.loads(over, max_values=bound)
    assert info.value.code == "too_many_values"


def test_what_strings_hold_is_not_counted() -> None:
    """Brackets, commas and digits inside strings (a spec's labels) pass; the same outside do not."""
    inside = json.dumps({"labels": ["[" * 500, "{" * 500, "," * 90_000, "7" * 5_000, 'a "quoted" \\ one']}).encode()
    assert jsonlimits.loads(inside, max_values=20)["labels"][0] == "[" * 500
    for bad, code in [
        (b"[" * 65 + b"]" * 65, "too_deep"),
        (b'{"a": ' * 70 + b"1" + b"}" * 70, "too_deep"),
        (b"[" + b"1" * 1_001 + b"]", "number_too_long"),
        (b"[1.5e" + b"9" * 2_000 + b"]", "number_too_long"),
        (b"[" + b"{}," * 100 + b"{}]", "too_many_values"),
    ]:
        with pytest.raises(jsonlimits.JSONLimitError) as info:
            jsonlimits.loads(bad, max_values=150)
        assert info.value.code == code, bad[:20]
    assert jsonlimits.loads(b"[" * 64 + b"]" * 64) is not None
    assert jsonlimits.loads(b"[" + b"1" * 1_000 + b"]") == [int("1" * 1_000)]


def test_the_scan_is_linear_on_hostile_strings() -> None:
    """An unclosed string of escaped quotes, and runs of digits just under the bound, in 8 MiB: no
    backtracking (each would take minutes with a naive regular expression)."""
    for raw in (b'"' + b'\\"' * (4 * 2**20), (b"1" * 1_000 + b",") * 8_000, b'["' + b"\\" * (8 * 2**20)):
        t0 = time.perf_counter()
        try:
            jsonlimits.check(raw, max_values=10)
        except jsonlimits.JSONLimitError:
            pass
        assert time.perf_counter() - t0 < 5


def test_a_single_report_spec_bound_is_that_of_its_columns() -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="q")
    assert jsonlimits.report_values(spec, 10_000) == 8 + 10_000 * 9
    report = {"format": REPORT_FORMAT, "spec": spec.id, "id": "0" * 32, "payload": 1}
    raw = json.dumps([report] * 3).encode()
    assert jsonlimits.scan(raw, 64, 1_000, None).values <= jsonlimits.report_values(spec, 3)


# ------------------------------------------------------------------------------------ buckets
def test_a_bucket_holds_a_burst_and_refills_at_the_rate() -> None:
    now = [0.0]
    lim = RateLimiter(rate=10, burst=100, clock=lambda: now[0])
    lim.admit("192.0.2.1")
    lim.charge("192.0.2.1", 100)
    with pytest.raises(CollectError) as info:
        lim.admit("192.0.2.1")  # empty: refused before the body is read
    assert (info.value.status, info.value.headers) == (429, {"Retry-After": "1"})
    lim.charge("192.0.2.2", 100)  # another address: its own bucket
    now[0] = 5.0  # 50 tokens back
    with pytest.raises(CollectError) as info:
        lim.charge("192.0.2.1", 60)
    assert info.value.status == 429 and info.value.headers["Retry-After"] == "2"  # (60 - 49) / 10, rounded up
    lim.charge("192.0.2.1", 49)
    with pytest.raises(CollectError) as info:
        lim.charge("192.0.2.3", 101)  # more than a burst: no wait helps
    assert (info.value.status, info.value.code) == (413, "too_many_reports")
    RateLimiter(rate=0, burst=1).charge("192.0.2.1", 10**6)  # off


def test_an_ipv6_client_is_keyed_by_its_64() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7" and address_key(None) == ""
    lim = RateLimiter(rate=1, burst=10, clock=lambda: 0.0)
    lim.charge("2001:db8::1", 10)
    with pytest.raises(CollectError):
        lim.admit("2001:db8::ffff")


def test_the_buckets_kept_are_bounded() -> None:
    now = [0.0]
    lim = RateLimiter(rate=1, burst=5, max_buckets=1_000, clock=lambda: now[0])
    for i in range(5_000):
        lim.charge(f"10.0.{i // 256}.{i % 256}", 1)
        now[0] += 0.001
    assert len(lim._buckets) <= 1_000


# ------------------------------------------------------------------------------------ the budget
def test_the_parsing_budget_serves_in_order_and_refuses_after_its_wait() -> None:
    async def run() -> list[str]:
        budget = BodyBudget(100, wait=0.3)
        order: list[str] = []

        async def body(name: str, size: int, hold: float) -> None:
            chunks = _chunks([b"x" * size])
            try:
                async with reading(str(size), chunks, 1_000, budget):
                    order.append(name)
                    await asyncio.sleep(hold)
            except CollectError as exc:
                order.append(f"{name}:{exc.status}:{exc.headers.get('Retry-After')}")

        await asyncio.gather(body("a", 80, 0.1), body("b", 50, 0.0), body("c", 10, 0.0), body("d", 90, 0.0))
        assert budget.held == 0
        late = BodyBudget(100, wait=0.1)
        await late.acquire(100)
        await asyncio.gather(body_in(late, order))
        return order

    async def body_in(budget: BodyBudget, order: list[str]) -> None:
        try:
            await budget.acquire(1)
        except CollectError as exc:
            order.append(f"late:{exc.status}:{exc.code}")

    order = asyncio.run(run())
    assert order[:4] == ["a", "b", "c", "d"]  # c waits behind b although it would fit: first come, first served
    assert order[4] == "late:503:busy"


async def _chunks(parts: list[bytes]):  # type: ignore[no-untyped-def]
    for p in parts:
        yield p


# ------------------------------------------------------------------------------------ the log
def test_a_traceback_is_logged_once_per_kind_and_then_counted() -> None:
    now = [0.0]
    flt = OncePerKind(every=60.0, clock=lambda: now[0])

    def record(exc: BaseException) -> logging.LogRecord:
        try:
            raise exc
        except BaseException:
            info = sys.exc_info()
        return logging.LogRecord(
            "uvicorn.error", logging.ERROR, __file__, 1, "Exception in ASGI application\n", None, info
        )

    assert flt.filter(record(RecursionError("deep")))
    assert not any(flt.filter(record(RecursionError("deep"))) for _ in range(1_000))
    assert flt.filter(record(ValueError("another kind")))
    now[0] = 61.0
    summary = record(RecursionError("deep"))
    assert flt.filter(summary) and summary.exc_info is None and summary.getMessage().startswith("1001 more of")
    plain = logging.LogRecord(
        "uvicorn.error", logging.WARNING, __file__, 1, "Invalid HTTP request received.", None, None
    )
    assert flt.filter(plain) and not flt.filter(logging.makeLogRecord(plain.__dict__))


# ------------------------------------------------------------------------------------ the rest
def test_origins_are_normalized_and_checked() -> None:
    assert normalize_origin("HTTPS://Survey.Example.org:443/") == "https://survey.example.org"
    assert normalize_origin("http://[::1]:8000") == "http://[::1]:8000"
    for bad in ("survey.example.org", "ftp://x", "https://x/path", "null"):
        with pytest.raises(ValueError, match="not an origin"):
            normalize_origin(bad)


def test_the_connection_cap_stays_below_the_file_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda _: (20_000, 20_000))
    assert connections.connection_cap(4_096) == 4_096
    assert connections.connection_cap(50_000) == 20_000 - connections.RESERVED_FDS
    monkeypatch.setattr(resource, "getrlimit", lambda _: (1_024, 1_024))
    assert connections.connection_cap(4_096) == 512


def test_the_limits_travel_to_the_workers_whole() -> None:
    limits = Limits(rate=2.5, burst=7, campaign_cap=9, allow_origins=("https://a.example",), header_timeout=3.0)
    assert Limits.from_json(limits.to_json()) == limits
