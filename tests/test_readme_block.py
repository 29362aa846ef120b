"""The README's "Run a collection" shell block runs as written, against a real collector.

The block starts ``pldp serve`` in the background on port 8000, creates a campaign, simulates
5,000 devices' reports, submits them, reads the estimate, exports the reports twice, closes the
campaign and stops the collector. The one change this test makes is the port: every ``8000`` of
the block becomes a free port (the block names it twice, in ``PLDP_SERVER`` and ``--port``), so
that the test runs beside anything else on the machine. Everything else, including the
background start (``&``) and the stop (``kill %1``), runs as a reader would run it, with
``bash -e`` (the first failing command fails the test), ``pldp`` and ``python3`` from this
environment on ``PATH``, in a new directory.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("pyarrow")

import pyarrow.parquet as pq

from pldp.deploy import Spec, decode
from tests.service_server import free_port

ROOT = Path(__file__).resolve().parents[1]


def collection_block() -> str:
    """The first ``bash`` block of the README's section "Run a collection"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Run a collection\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```bash\n(.*?)```", section, re.S)
    assert found, "the section 'Run a collection' has no bash block"
    return found.group(1)


def test_the_block_names_its_port_twice_and_nothing_else_needs_changing() -> None:
    block = collection_block()
    assert block.count("8000") == 2
    assert "export PLDP_SERVER=http://127.0.0.1:8000" in block and "pldp serve --db pldp.db --port 8000" in block
    assert "<" not in block.replace("< ", "")  # no placeholder such as <campaign id> to fill in


def test_the_readme_collection_block_runs_as_written(tmp_path: Path) -> None:
    script = collection_block().replace("8000", str(free_port()))
    env = {k: v for k, v in os.environ.items() if k != "PLDP_SERVER"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    with open(tmp_path / "out.txt", "wb") as out, open(tmp_path / "err.txt", "wb") as err:
        # files, not pipes: a background server left running must not keep the test waiting
        proc = subprocess.Popen(
            ["bash", "-e", "-c", script], cwd=tmp_path, stdout=out, stderr=err, env=env, start_new_session=True
        )
        try:
            code = proc.wait(timeout=300)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # whatever the block left running
            except ProcessLookupError:
                pass
    stdout = (tmp_path / "out.txt").read_text()
    stderr = (tmp_path / "err.txt").read_text()
    assert code == 0, f"the block failed ({code}):\n{stdout}\n{stderr}"
    assert "Traceback" not in stderr, stderr
    spec = Spec.from_json((tmp_path / "spec.json").read_text())
    assert "survey page: http://127.0.0.1:" in stderr and f"/c/{spec.id}" in stderr
    assert f"5,000 reports of reports.parquet -> campaign {spec.id}: 5,000 accepted, 0 duplicates" in stdout
    assert f"campaign {spec.id}: n = 5000, method norm_sub" in stdout
    for label in ("flu", "covid", "none"):
        assert re.search(rf"^  {label} +0\.\d+ +\[", stdout, re.M), stdout
    assert decode(spec, pq.read_table(tmp_path / "collected.parquet")).n == 5000
    (day_file,) = (tmp_path / "collected" / f"spec={spec.id}").glob("day=*/*.parquet")
    assert decode(spec, pq.read_table(day_file)).n == 5000
    assert '"closed": true' in stdout
