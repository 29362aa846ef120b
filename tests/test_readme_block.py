"""The command recipe of the README and the user guide runs as written, against a real collector.

The README's "Run a collection" shell block starts ``pldp serve`` in the background on port 8000,
creates a campaign, simulates 5,000 devices' reports, submits them, reads the estimate, exports
the reports twice, closes the campaign and stops the collector. The one change this test makes is
the port: every ``8000`` of the block becomes a free port (the block names it twice, in
``PLDP_SERVER`` and ``--port``), so that the test runs beside anything else on the machine.
Everything else, including the background start (``&``) and the stop (``kill %1``), runs as a
reader would run it, with ``bash -e`` (the first failing command fails the test), ``pldp`` and
``python3`` from this environment on ``PATH``, in a new directory.

The user guide (``docs/guide/campaign.md``, section 4) gives the same block, so that one run tests
both; and every shell block of the documentation reads a token file only after its page wrote it
(:func:`token_files_read_before_written`).
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


def guide_block() -> str:
    """The shell block of the guide's section "4. The collector" (docs/guide/campaign.md)."""
    text = (ROOT / "docs" / "guide" / "campaign.md").read_text(encoding="utf-8")
    section = text.split("\n## 4. The collector\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```(?:sh|bash)\n(.*?)```", section, re.S)
    assert found, "the guide's section '4. The collector' has no shell block"
    return found.group(1)


def run_block(block: str, cwd: Path) -> tuple[int, str, str]:
    """Run ``block`` with ``bash -e`` in ``cwd``, its port ``8000`` made a free one; the exit
    code, standard output and standard error."""
    script = block.replace("8000", str(free_port()))
    env = {k: v for k, v in os.environ.items() if k != "PLDP_SERVER"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    with open(cwd / "out.txt", "wb") as out, open(cwd / "err.txt", "wb") as err:
        # files, not pipes: a background server left running must not keep the test waiting
        proc = subprocess.Popen(
            ["bash", "-e", "-c", script], cwd=cwd, stdout=out, stderr=err, env=env, start_new_session=True
        )
        try:
            code = proc.wait(timeout=300)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # whatever the block left running
            except ProcessLookupError:
                pass
    return code, (cwd / "out.txt").read_text(), (cwd / "err.txt").read_text()


#: Shell words that write a token file: ``pldp serve --admin-token-file F`` (a new token, if
#: missing) and a redirection ``> F`` (``pldp campaign token ... > analyst.token``).
_WRITES = re.compile(r"--admin-token-file[ =](\S+)|>\s*(\S+\.token)\b")
_READS = re.compile(r"--token-file[ =](\S+)")


def token_files_read_before_written(page: str) -> list[str]:
    """The token files that a shell block of ``page`` reads (``--token-file F``) before any block
    of the page, or an earlier line of it, wrote them."""
    written: set[str] = set()
    early = []
    for block in re.findall(r"```(?:sh|bash|console)\n(.*?)```", page, re.S):
        for line in block.splitlines():
            command = line.split("  #")[0]  # not the comment
            early += [f for f in _READS.findall(command) if f not in written]
            written |= {a or b for a, b in _WRITES.findall(command)}
    return early


def test_every_shell_block_reads_only_token_files_its_page_wrote() -> None:
    """A recipe that reads ``--token-file admin.token`` must have started ``pldp serve`` with
    ``--admin-token-file admin.token`` (the guide's section 4 did not: its ``serve`` line printed
    the token and wrote no file)."""
    pages = [ROOT / "README.md", *sorted(ROOT.glob("docs/**/*.md"))]
    for page in pages:
        early = token_files_read_before_written(page.read_text(encoding="utf-8"))
        assert not early, f"{page.relative_to(ROOT)} reads token files no block wrote before: {early}"
    assert token_files_read_before_written("```sh\npldp serve &\npldp campaign list --token-file admin.token\n```")


def test_the_block_names_its_port_twice_and_nothing_else_needs_changing() -> None:
    block = collection_block()
    assert block.count("8000") == 2
    assert "export PLDP_SERVER=http://127.0.0.1:8000" in block and "pldp serve --db pldp.db --port 8000" in block
    assert "<" not in block.replace("< ", "")  # no placeholder such as <campaign id> to fill in


def test_the_readme_collection_block_runs_as_written(tmp_path: Path) -> None:
    code, stdout, stderr = run_block(collection_block(), tmp_path)
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
    assert f"campaign {spec.id} closed at " in stdout


def test_the_guide_gives_the_readme_recipe_so_it_runs_too() -> None:
    """One recipe everywhere: the guide's collector block is the README's, which the test above
    runs as written (the guide's own ``serve`` line once printed the token and wrote no
    ``admin.token``, which its next line read)."""
    assert guide_block() == collection_block()
