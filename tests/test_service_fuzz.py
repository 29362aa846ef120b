"""Generated bodies thrown at a running collector's submit endpoint (hypothesis).

Whatever the body, the answer is a 2xx or a 4xx JSON error with a reason, never a 5xx; a refused
body stores nothing; and after all of them the tally equals a recount of the stored reports.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.service import store
from tests.service_server import Server, stored_and_recount

SPECS = {
    "direct": Spec.from_mechanism(pldp.IPRR(pldp.ItemBudgets.from_array([0.5, 1.0, np.inf])), question="fuzz?"),
    "unary": Spec.from_mechanism(pldp.OUE(1.0, 10), question="fuzz?"),
    "leveled": Spec.from_mechanism(pldp.protocols.FEBSF([0.5, 1.0], 0.5, 4, "krr"), question="fuzz?"),
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def bodies(draw: st.DrawFn, spec: Spec) -> bytes:
    """A valid batch with a few random edits, a random JSON value, or random bytes."""
    kind = draw(st.sampled_from(["edited", "edited", "edited", "json", "bytes", "valid"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    n = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    answers = rng.integers(0, len(spec.labels), n)
    kw = {"level": rng.integers(0, 2, n)} if spec.root.kind == "leveled" else {}
    data: dict[str, Any] = Client(spec).reports(answers, **kw).to_json()
    if kind == "edited":
        for _ in range(draw(st.integers(1, 3))):
            where = draw(st.sampled_from(["payload", "id", "report", "top", "spec", "duplicate"]))
            i = draw(st.integers(0, n - 1))
            if where == "payload":
                data["reports"][i]["payload"] = draw(json_values)
            elif where == "id":
                data["reports"][i]["id"] = draw(st.text(max_size=34) | st.integers())
            elif where == "report":
                data["reports"][i][draw(st.text(max_size=6))] = draw(json_values)
            elif where == "top":
                data[draw(st.text(max_size=8))] = draw(json_values)
            elif where == "spec":
                data["spec"] = draw(st.text(max_size=33))
            else:
                data["reports"].append(dict(data["reports"][i]))
    return json.dumps(data).encode()


def _stored(db: Path, cid: str) -> int:
    conn = store.connect(db)
    try:
        return store.stored_count(conn, cid)
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SPECS))
def test_generated_bodies_get_2xx_or_a_4xx_reason_and_change_nothing_when_refused(name: str, tmp_path: Path) -> None:
    spec = SPECS[name]
    server = Server(tmp_path / "fuzz.db").start()
    server.admin().create_campaign(spec)
    path = f"/v1/campaigns/{spec.id}/reports"
    outcomes: dict[int, int] = {}

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(body=bodies(spec))
    def throw(body: bytes) -> None:
        before = _stored(server.db, spec.id)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        raw = resp.read()
        conn.close()
        outcomes[resp.status] = outcomes.get(resp.status, 0) + 1
        assert resp.status < 500, raw[:300]
        out = json.loads(raw)
        after = _stored(server.db, spec.id)
        if resp.status >= 400:
            assert set(out) == {"error", "reason"} and out["reason"], out
            assert after == before, f"a refused body stored {after - before} reports"
        else:
            assert after == before + out["accepted"]

    try:
        throw()
    finally:
        server.stop()
    print(f"{name}: status counts {dict(sorted(outcomes.items()))}")
    assert outcomes.get(200, 0) > 0 and sum(v for k, v in outcomes.items() if 400 <= k < 500) > 0, outcomes
    stored_tally, recount = stored_and_recount(server.db, spec)
    n = _stored(server.db, spec.id)
    assert stored_tally == recount and recount.n == n > 0
