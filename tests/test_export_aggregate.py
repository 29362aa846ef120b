"""Collector → report files → ``pldp aggregate`` equals the collector (issue 14 §2-3, issue 24).

A real collector process takes batches (one of them retried), over several days (``PLDP_TODAY``),
with its scheduled rollover writing report files; the files are then tallied by
:func:`pldp.aggregate.aggregate` on a 2-worker Dask LocalCluster and by the ``pldp aggregate``
command, and both must equal the collector's own running tally exactly. The README's sequence
(the rollover and ``pldp campaign export --out-dir`` into one directory, then ``pldp aggregate``
of it) must too: each report is counted once.
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

    _, est = _aggregate_cli(spec, out, stored, tmp_path)
    assert est["n"] == sent


def _aggregate_cli(spec: Spec, root: Path, stored: object, tmp_path: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """``pldp aggregate spec.json ROOT`` in a subprocess, its estimate checked against the collector's tally."""
    (tmp_path / "spec.json").write_text(spec.to_json(), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pldp.cli", "aggregate", str(tmp_path / "spec.json"), str(root), "--workers", "0",
         "--no-progress", "--json", str(tmp_path / "est.json")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    est = json.loads((tmp_path / "est.json").read_text())
    want = pldp.estimate(spec.mechanism(), stored, est["method"])
    np.testing.assert_allclose(est["attributes"][0]["frequencies"], want.frequencies, rtol=0, atol=1e-12)
    return run, est


def _exported(root: Path, spec: Spec) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in report_files(root, spec.id))


def test_the_rollover_and_an_out_dir_export_in_one_directory_count_each_report_once(tmp_path: Path) -> None:
    """The README: ``pldp serve --export-dir reports/``, ``pldp campaign export ID --out-dir reports/``,
    ``pldp aggregate spec.json reports/``. The rollover exported 2,000 reports, 1,000 more came
    while it was off, and the day's export holds all 3,000: ``n`` is the collector's 3,000."""
    spec = Spec.from_mechanism(pldp.KRR(1.0, 5), question="Which one?")
    db, reports = tmp_path / "c.db", tmp_path / "reports"
    rng = np.random.default_rng(24)
    env = {"PLDP_TODAY": "2026-12-01"}
    with Server(db, "--export-dir", str(reports), "--export-every", "1s", env=env) as srv:
        srv.admin().create_campaign(spec)
        for _ in range(2):
            assert srv.client().submit(spec.id, Client(spec).reports(rng.integers(0, 5, 1000)))["accepted"] == 1000
        deadline = time.monotonic() + 30
        while _exported(reports, spec) < 2000:
            assert time.monotonic() < deadline, "the rollover did not export every report"
            time.sleep(0.2)
    with Server(db, env=env) as srv:  # back up without the rollover: 1,000 reports it has not exported
        assert srv.client().submit(spec.id, Client(spec).reports(rng.integers(0, 5, 1000)))["accepted"] == 1000
        token = tmp_path / "analyst.token"
        token.write_text(srv.admin().create_token("analyst", [spec.id])["token"])
        export = subprocess.run(
            [sys.executable, "-m", "pldp.cli", "campaign", "export", spec.id, "--out-dir", str(reports),
             "--token-file", str(token), "--server", srv.url],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert export.returncode == 0, export.stderr
    stored, recount = stored_and_recount(db, spec)
    assert stored == recount and stored.n == 3000
    assert _exported(reports, spec) == 5000  # the rollover's 2,000 and the day's 3,000: one directory

    run, est = _aggregate_cli(spec, reports, stored, tmp_path)  # the estimate is the collector's
    assert "3,000 reports" in run.stdout and "2,000 repeats not counted" in run.stdout, run.stdout
    assert "warning" not in run.stderr, run.stderr
    assert est["n"] == 3000 and est["repeats"] == 2000
    result = aggregate(spec, [reports], workers=1, progress=False)
    assert result.tally == stored and (result.reports, result.repeats) == (3000, 2000)
