"""Collector → report files → ``pldp aggregate`` equals the collector (issue 14 §2-3).

A real collector process takes batches (one of them retried), over several days (``PLDP_TODAY``),
with its scheduled rollover writing report files; the files are then tallied by
:func:`pldp.aggregate.aggregate` on a 2-worker Dask LocalCluster and by the ``pldp aggregate``
command, and both must equal the collector's own running tally exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("dask.distributed")

import pldp
from pldp.aggregate import aggregate
from pldp.client import Client
from pldp.deploy import Spec
from pldp.deploy.files import report_files
from tests.service_server import Server, stored_and_recount


def test_the_rolled_over_files_aggregate_to_the_collectors_tally(tmp_path: Path) -> None:
    spec = Spec.from_mechanism(pldp.OUE(1.0, 12), question="Which one?")
    db, out = tmp_path / "c.db", tmp_path / "files"
    rng = np.random.default_rng(14)
    sent = 0
    for day in ("2026-11-20", "2026-11-21", "2026-11-22"):  # one collector run per day, same file
        env = {"PLDP_TODAY": day}
        with Server(db, "--export-dir", str(out), "--export-every", "1s", env=env) as srv:
            admin = srv.admin()
            admin.create_campaign(spec)
            device = srv.client()
            for _ in range(4):
                batch = Client(spec).reports(rng.integers(0, 12, 700))
                assert device.submit(spec.id, batch)["accepted"] == 700
                sent += 700
            assert device.submit(spec.id, batch) == {"accepted": 0, "duplicates": 700}  # a retry
            deadline = time.monotonic() + 30
            while _exported(out, spec) < sent:
                assert time.monotonic() < deadline, "the rollover did not export every report"
                time.sleep(0.2)
    stored, recount = stored_and_recount(db, spec)
    assert stored == recount and stored.n == sent == 8_400
    files = report_files(out, spec.id)
    assert {f.parent.name for f in files} == {"day=2026-11-20", "day=2026-11-21", "day=2026-11-22"}

    result = aggregate(spec, files, workers=2, progress=False)
    assert result.tally == stored and result.reports == sent and not result.skipped

    (tmp_path / "spec.json").write_text(spec.to_json(), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pldp.cli", "aggregate", str(tmp_path / "spec.json"), str(out), "--workers", "0",
         "--no-progress", "--json", str(tmp_path / "est.json")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    est = json.loads((tmp_path / "est.json").read_text())
    want = pldp.estimate(spec.mechanism(), stored, est["method"])
    assert est["n"] == sent
    np.testing.assert_allclose(est["attributes"][0]["frequencies"], want.frequencies, rtol=0, atol=1e-12)


def _exported(root: Path, spec: Spec) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in report_files(root, spec.id))
