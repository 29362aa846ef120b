"""Node takes the Python client's lock on a device file: two Node processes and one Python process
charging one ledger file, and reporting through one memo store, at once, lose nothing.

Python holds an exclusive ``flock`` on ``PATH.lock`` (:func:`pldp.devicefiles.file_lock`) while it
reads and rewrites the memo store or the ledger. Node has no flock in its standard library; the JS
client (``withFileLock`` / ``withFileLockSync`` in pldp-client.mjs) opens ``PATH.lock`` (mode
0600) and runs util-linux's ``flock`` on that open file, so it holds the same lock until it closes
the file (or dies). Where no ``flock`` command exists it falls back to an O_EXCL lock file
(``PATH.lock.excl``) among Node processes, tested here with a PATH that has no flock.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pldp
from pldp.deploy import Spec
from pldp.devicefiles import file_lock
from pldp.ledger import Ledger, Spend
from tests.needs import need_node

ROOT = Path(__file__).resolve().parents[1]
N = 40  # charges per process

#: A fresh spec at eps = 0.5 (sums of halves are exact).
FRESH = Spec.from_mechanism(pldp.KRR(0.5, 3), question="OS?", labels=["x", "y", "z"])
#: A memoized spec over 3 * N values at eps_perm = 0.5: every report of a new value adds to the memo.
MEMO = Spec.from_mechanism(
    pldp.LGRR(0.5, 0.25, 3 * N), question="Which?", labels=[f"v{i}" for i in range(3 * N)], memo_key="many"
)

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or shutil.which("flock") is None, reason="needs util-linux's flock command (Linux)"
)


def _node_script(tmp: Path, what: str, first: int) -> str:
    """A Node process that waits for ``tmp/go``, then makes N charges (``what == "ledger"``: FRESH
    alone) or N reports of values first..first+N-1 (``"memo"``: MEMO, its memo store and the ledger)."""
    return f"""
        import {{ existsSync, readFileSync }} from "node:fs";
        import {{ loadSpec, Client, FileMemoStore }} from "{ROOT}/clients/js/pldp-client.mjs";
        import {{ Ledger }} from "{ROOT}/clients/js/pldp-ledger.mjs";
        const ledger = await Ledger.file("{tmp}/ledger.json");
        const fresh = await loadSpec(readFileSync("{tmp}/fresh.json", "utf8"));
        const memo = await loadSpec(readFileSync("{tmp}/memo.json", "utf8"));
        const client = new Client(memo, {{ store: new FileMemoStore("{tmp}/memo-store.json"), ledger }});
        while (!existsSync("{tmp}/go")) await new Promise((r) => setTimeout(r, 5));
        for (let i = {first}; i < {first + N}; i++) {{
          if ("{what}" === "ledger") ledger.charge(fresh, 1);
          else await client.report(i);
          await new Promise((r) => setImmediate(r)); // let the other processes in
        }}
    """


def _python_script(tmp: Path, what: str, first: int) -> str:
    return f"""
import os, time
from pathlib import Path
from pldp.client import Client
from pldp.deploy import Spec
from pldp.ledger import Ledger
tmp = Path({str(tmp)!r})
ledger = Ledger(tmp / "ledger.json")
fresh = Spec.from_json((tmp / "fresh.json").read_text())
client = Client(Spec.from_json((tmp / "memo.json").read_text()), store=tmp / "memo-store.json", ledger=ledger)
while not (tmp / "go").exists():
    time.sleep(0.005)
for i in range({first}, {first + N}):
    if {what!r} == "ledger":
        ledger.charge(fresh, 1)
    else:
        client.report(i)
"""


def _race(tmp: Path, what: str, *, python: bool = True, env: dict[str, str] | None = None) -> None:
    """Two Node processes (and one Python process) started together on the files of ``tmp``."""
    node = need_node()
    (tmp / "go").unlink(missing_ok=True)
    (tmp / "fresh.json").write_text(FRESH.to_json())
    (tmp / "memo.json").write_text(MEMO.to_json())
    procs = [
        subprocess.Popen(
            [node, "--input-type=module", "-e", _node_script(tmp, what, k * N)],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k in range(2)
    ]
    if python:
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", _python_script(tmp, what, 2 * N)], stderr=subprocess.PIPE, text=True
            )
        )
    time.sleep(0.5)  # every process loaded and waiting (they start charging at once)
    (tmp / "go").touch()
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err


def test_two_node_processes_and_python_lose_no_charge(tmp_path: Path) -> None:
    _race(tmp_path, "ledger")
    view = Ledger(tmp_path / "ledger.json").view()
    assert view.total == Spend(0.5 * 3 * N, 3 * N, 0, 0.5 * 3 * N)
    assert (tmp_path / "ledger.json.lock").stat().st_mode & 0o777 == 0o600


def test_two_node_processes_and_python_lose_no_memo_entry_nor_charge(tmp_path: Path) -> None:
    _race(tmp_path, "memo")
    memos = json.loads((tmp_path / "memo-store.json").read_text())["memos"]
    assert sorted(map(int, memos["many"]["responses"])) == list(range(3 * N))  # every PRR kept, once
    # d = 3N values: each report charged eps_perm, and each was a new value
    assert Ledger(tmp_path / "ledger.json").view().total == Spend(0.5 * 3 * N, 3 * N, 3 * N, 0.5 * 3 * N)
    assert (tmp_path / "memo-store.json.lock").stat().st_mode & 0o777 == 0o600


def test_without_a_flock_command_node_processes_exclude_each_other(tmp_path: Path) -> None:
    """The O_EXCL fallback (no flock on PATH): two Node processes, no Python (it does not see that lock)."""
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    assert shutil.which("flock", path=env["PATH"]) is None
    _race(tmp_path, "ledger", python=False, env=env)
    assert Ledger(tmp_path / "ledger.json").view().total == Spend(0.5 * 2 * N, 2 * N, 0, 0.5 * 2 * N)
    _race(tmp_path, "memo", python=False, env=env)
    memos = json.loads((tmp_path / "memo-store.json").read_text())["memos"]
    assert sorted(map(int, memos["many"]["responses"])) == list(range(2 * N))
    assert not list(tmp_path.glob("*.excl*"))  # released, nothing left behind


def test_node_waits_for_pythons_lock_and_python_for_nodes(tmp_path: Path) -> None:
    """One lock: a Node charge waits while Python holds it; Python cannot take it while Node holds it,
    and takes it once the Node process dies (the lock dies with it)."""
    node = need_node()
    path = tmp_path / "ledger.json"
    (tmp_path / "fresh.json").write_text(FRESH.to_json())
    charge = f"""
        import {{ readFileSync }} from "node:fs";
        import {{ loadSpec }} from "{ROOT}/clients/js/pldp-client.mjs";
        import {{ Ledger }} from "{ROOT}/clients/js/pldp-ledger.mjs";
        const spec = await loadSpec(readFileSync("{tmp_path}/fresh.json", "utf8"));
        (await Ledger.file("{path}")).charge(spec, 1);
    """
    with file_lock(path):
        proc = subprocess.Popen([node, "--input-type=module", "-e", charge], stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        assert proc.poll() is None and not path.exists()  # waiting for the lock
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert Ledger(path).view().total.reports == 1

    hold = f"""
        import {{ withFileLock }} from "{ROOT}/clients/js/pldp-client.mjs";
        const forever = () => new Promise(() => setInterval(() => {{}}, 1000));
        await withFileLock("{path}", () => {{ console.log("held"); return forever(); }});
    """
    proc = subprocess.Popen([node, "--input-type=module", "-e", hold], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        fd = os.open(f"{path}.lock", os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            proc.kill()
            proc.wait(timeout=30)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: it died with the process
        finally:
            os.close(fd)
    finally:
        proc.kill()
        proc.wait(timeout=30)
