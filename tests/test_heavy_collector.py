"""A free-text campaign through a real collector: its spec stored and served, the Python client's reports
stored once each, the running tally their number, and the estimate the answers the protocol discovers
from the stored reports, equal to the library's on the same reports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import pldp
from pldp.aggregate import aggregate
from pldp.client import Client
from pldp.deploy import Spec, spec_id
from pldp.deploy.estimates import answer_label, campaign_estimate, estimate_text
from pldp.deploy.remote import RemoteError
from pldp.heavy.count import ReportCount, ReportRows
from pldp.heavy.discovery import noise_quantile
from tests.heavy_answers import population
from tests.service_server import Server, stored_and_recount
from tests.tolerances import SUM_RTOL

SHARES = {"spam": 0.4, "eggs": 0.25}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A local Dask cluster of two single-threaded worker processes."""
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as local:
        yield local


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    srv = Server(tmp_path_factory.mktemp("heavy-collector") / "pldp.db").start()
    yield srv
    srv.stop()


def _words(seed: int):
    rng = np.random.default_rng(seed)
    return lambda n: rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)


@pytest.mark.parametrize(
    "protocol",
    [pldp.TreeHist(4.0, max_bytes=6, step_bits=2), pldp.SFP(4.0, max_bytes=6, fragment_bytes=1)],
    ids=lambda p: p.name,
)
def test_a_free_text_campaign_discovers_what_the_library_discovers_from_its_reports(
    server: Server, cluster: Any, tmp_path: Path, protocol: pldp.TreeHist
) -> None:
    """... and so does an aggregation of its exported report file on a Dask cluster."""
    spec = Spec.from_heavy(protocol, question=f"{protocol.name}: your word?")
    admin = server.admin()
    admin.create_campaign(spec)
    analyst = server.client(admin.create_token("heavy", [spec.id])["token"])
    served = analyst.spec(spec.id)
    assert served == spec and served.to_dict()["labels"] == {"text": protocol.max_bytes, "normalize": "NFC"}
    answers = population(SHARES, 16_000, np.random.default_rng(5), tail=400)
    device = Client(served, random=_words(8))
    batches = [device.reports(answers[i : i + 4_000]) for i in range(0, 16_000, 4_000)]
    respondent = server.client()
    for b in batches:
        assert respondent.submit(spec.id, b) == {"accepted": 4_000, "duplicates": 0}
    assert respondent.submit(spec.id, batches[0]) == {"accepted": 0, "duplicates": 4_000}  # nothing counted twice
    stored, recount = stored_and_recount(server.db, spec)
    assert stored == recount == ReportCount(16_000, spec.id)

    out = analyst.estimate(spec.id)
    assert out["method"] == "discover" and out["methods"] == ["discover"] and out["n"] == 16_000
    assert not out["detection"]["available"]
    part = out["attributes"][0]
    columns = {k: np.concatenate([b.columns[k] for b in batches]) for k in batches[0].columns}
    mine = protocol.discover(protocol.reports_from_columns(columns), top=20)
    assert part["labels"] == [answer_label(a) for a in mine.answers] and {"spam", "eggs"} <= set(mine.confident)
    np.testing.assert_allclose(part["frequencies"], mine.estimate.frequencies, rtol=SUM_RTOL)
    found = part["discovery"]
    assert found["protocol"] == protocol.name and found["floor"] == pytest.approx(mine.floor, rel=SUM_RTOL)
    assert found["confident"] == [a in mine.confident for a in mine.answers]
    z = noise_quantile(len(SHARES), 0.001)  # both planted answers within it, but for 1 run in 1,000
    for answer, share in SHARES.items():
        i = part["labels"].index(answer)
        assert abs(part["frequencies"][i] - share) < z * part["std_error"][i], (answer, part["frequencies"][i])
    files = tmp_path / "reports.parquet"
    files.write_bytes(analyst.export(spec.id))  # the report file an analyst takes away
    on_dask = aggregate(spec, [files], scheduler=cluster.scheduler_address, progress=False)
    assert isinstance(on_dask.tally, ReportRows) and on_dask.reports == 16_000
    again = campaign_estimate(spec, on_dask.tally, "discover")
    assert again["attributes"][0]["labels"] == part["labels"]  # the same reports, in the same order
    np.testing.assert_allclose(again["attributes"][0]["frequencies"], part["frequencies"], rtol=SUM_RTOL)
    text = estimate_text(out)
    assert f"discovered by {protocol.name}" in text and "spam" in text
    top3 = analyst.estimate(spec.id, top=3)["attributes"][0]["labels"]
    assert top3 == [answer_label(a) for a in protocol.discover(protocol.reports_from_columns(columns), top=3).answers]
    assert {"spam", "eggs"} <= set(top3) and len(top3) <= 3


def test_a_free_text_campaign_refuses_another_method_and_a_tampered_spec(server: Server) -> None:
    """... and answers a repeated query from its last discovery until a report arrives."""
    spec = Spec.from_heavy(pldp.PEM(2.0, max_bytes=4), question="PEM: a word?")
    admin = server.admin()
    admin.create_campaign(spec)
    analyst = server.client(admin.create_token("heavy-pem", [spec.id])["token"])
    with pytest.raises(RemoteError) as info:
        analyst.estimate(spec.id)
    assert info.value.status == 409 and "no reports" in info.value.reason
    server.client().submit(spec.id, Client(spec, random=_words(1)).reports(["ab", "cd"] * 50))
    path = f"/v1/campaigns/{spec.id}/estimate?top=3"
    first, again = (analyst.request("GET", path) for _ in range(2))
    assert first[1]["cache-status"] == "pldp; fwd=miss; stored" and again[1]["cache-status"] == "pldp; hit"
    assert first[2] == again[2]  # the discovery of the same 100 reports, kept
    server.client().submit(spec.id, Client(spec, random=_words(2)).reports(["ab"] * 10))
    fresh = analyst.request("GET", path)
    assert fresh[1]["cache-status"] == "pldp; fwd=miss; stored" and json.loads(fresh[2])["n"] == 110
    with pytest.raises(RemoteError) as info:
        analyst.estimate(spec.id, "unbiased")
    assert info.value.status == 400 and "'discover'" in info.value.reason
    wrong = spec.to_dict()
    wrong["sampler"]["root"]["epsilon"] = 1.5  # claims less than its part spends
    wrong["id"] = spec_id({k: v for k, v in wrong.items() if k != "id"})
    with pytest.raises(RemoteError) as info:
        admin.create_campaign(json.dumps(wrong))
    assert info.value.status == 400 and "privacy claim fails" in info.value.reason


def test_too_few_reports_to_discover_from_is_409_and_a_free_text_campaign_has_no_series(server: Server) -> None:
    """One report leaves most of TreeHist's depths without any: the estimate says so with 409
    (the dashboard keeps asking), not a refusal; a series of discoveries is refused with a reason."""
    spec = Spec.from_heavy(pldp.TreeHist(4.0, max_bytes=6, step_bits=2), question="TreeHist: one word?")
    admin = server.admin()
    admin.create_campaign(spec)
    analyst = server.client(admin.create_token("heavy-few", [spec.id])["token"])
    server.client().submit(spec.id, Client(spec, random=_words(3)).reports(["ab"]))
    with pytest.raises(RemoteError) as info:
        analyst.estimate(spec.id)
    assert info.value.status == 409 and info.value.code == "too_few_reports" and "has no reports" in info.value.reason
    with pytest.raises(RemoteError) as info:
        analyst.series(spec.id, "discover")
    assert info.value.status == 400 and "no series" in info.value.reason
