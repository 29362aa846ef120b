"""The collector under load on loopback: batched ingest, single-report requests, latency, estimates.

* batched ingest at 0, 10^6 and 10^7 stored reports, with 1 and 2 server processes:
  ``ingest_rows.py``;

and on a real ``pldp serve --workers 2`` (two processes on one temporary SQLite file, each with its
group-committing writer, see ``pldp.service.writer``), driven by ``loadgen.py`` on the same machine:

* single-report requests on 64 connections (closed loop), each acknowledged after the durable
  commit that stores it (group commit shares the commits);
* p99 latency of single-report requests at half that rate (open loop, Poisson-free fixed rate);
* the estimate endpoint at d = 10,000 (unbiased, with intervals), one request at a time.

Needs the ``service`` extra; without it the rows are left out. Called by ``run.py``.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np

import pldp
from harness import Mode, Row
from ingest_rows import bench_ingest
from loadgen import closed_loop, open_loop, request
from pldp.client import Client
from pldp.deploy import Spec
from report import fmt_rate, fmt_time

#: Server processes (``pldp serve --workers``): two use both cores (one parses while the other writes).
WORKERS = 2


def bench_service(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """The collector's rows (see module doc); empty without the service extra."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401

        from pldp.service.process import CollectorProcess
    except ImportError:
        return []
    quick = mode.name == "quick"
    rows: list[Row] = bench_ingest(mode, rng)
    with (
        tempfile.TemporaryDirectory(prefix="pldp-bench-") as tmp,
        CollectorProcess(Path(tmp) / "bench.db", "--workers", str(WORKERS), "--rate", "0") as srv,  # one address
    ):
        host, port = "127.0.0.1", srv.port
        admin = srv.admin()
        spec = Spec.from_mechanism(pldp.KRR(1.0, 100), question="bench")
        admin.create_campaign(spec)
        path = f"/v1/campaigns/{spec.id}/reports"
        client = Client(spec)

        # single-report requests
        n_single = 4_000 if quick else 20_000
        one = client.reports(rng.integers(0, 100, 2 * n_single)).to_json()
        singles = [
            request(host, port, "POST", path, json.dumps({**one, "reports": [r]}).encode()) for r in one["reports"]
        ]
        res = closed_loop(host, port, [singles[:n_single][i::64] for i in range(64)])
        assert res.statuses == {200: n_single}, res.statuses
        rows.append(
            Row(
                "collector: single-report requests",
                f"k-RR d=100, {n_single:,} requests of one report on 64 connections, {WORKERS} server processes, "
                "each acknowledged after its durable commit (group commit); "
                f"p50 {fmt_time(res.percentile(50))}, p99 {fmt_time(res.percentile(99))}; "
                f"load generator {res.cpu_s / res.wall:.0%} of a core",
                1 / res.rate,
                res.rate,
                "requests/s",
                fmt_rate(res.rate, "requests/s"),
                f"≥ {fmt_rate(2e3, 'requests/s')}",
                res.rate >= 2e3,
            )
        )
        half = res.rate / 2
        n_open = int(half * (3 if quick else 8))
        if n_open > len(singles) - n_single:  # a collector above 5,000 requests/s needs more than were made
            more = client.reports(rng.integers(0, 100, n_open - (len(singles) - n_single))).to_json()
            singles += [
                request(host, port, "POST", path, json.dumps({**more, "reports": [r]}).encode())
                for r in more["reports"]
            ]
        lat = open_loop(host, port, singles[n_single : n_single + n_open], half)
        assert lat.statuses == {200: n_open}, lat.statuses
        p99 = lat.percentile(99)
        rows.append(
            Row(
                "collector: p99 latency at half load",
                f"single-report requests issued at {half:,.0f}/s (open loop) for {n_open / half:.0f} s; "
                f"p50 {fmt_time(lat.percentile(50))}, p99.9 {fmt_time(lat.percentile(99.9))}",
                p99,
                1 / p99,
                "1/s",
                f"p99 {fmt_time(p99)}",
                f"≤ {fmt_time(0.05)}",
                p99 <= 0.05,
            )
        )

        # the estimate endpoint at d = 10,000
        big = Spec.from_mechanism(pldp.KRR(1.0, 10_000), question="bench d=10,000")
        admin.create_campaign(big)
        token = admin.create_token("bench", [big.id])["token"]
        sender = srv.client()
        for _ in range(20):
            sender.submit(big.id, Client(big).reports(rng.integers(0, 10_000, 5_000)))
        est_path = f"/v1/campaigns/{big.id}/estimate?method=unbiased&level=0.95"
        reqs = [request(host, port, "GET", est_path, token=token)] * (10 if quick else 50)
        closed_loop(host, port, [reqs[:3]])  # warm up
        res = closed_loop(host, port, [reqs])
        assert res.statuses == {200: len(reqs)}, res.statuses
        med = res.percentile(50)
        rows.append(
            Row(
                "collector: estimate endpoint",
                f"k-RR d=10,000, n=100,000, unbiased with 95% intervals as JSON, one request at a time; "
                f"median of {len(reqs)} (p99 {fmt_time(res.percentile(99))})",
                med,
                1 / med,
                "requests/s",
                fmt_time(med),
                f"≤ {fmt_time(0.02)}",
                med <= 0.02,
            )
        )
        for c in (admin, sender):
            c.close()
    time.sleep(0.1)
    return rows
