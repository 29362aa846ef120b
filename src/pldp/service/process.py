"""A collector in a child process: ``pldp serve`` on 127.0.0.1 with a given SQLite file.

Used by the collection demo (:mod:`pldp.service.demo`), the tests and the benchmarks, which all need
a real server process they can start, kill (SIGKILL) and restart on the same file.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from pldp.deploy.remote import Collector, RemoteError
from pldp.service.auth import new_token

__all__ = ["CollectorProcess", "free_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class CollectorProcess:
    """``pldp serve --db DB`` in a subprocess; :meth:`start`, :meth:`kill` (SIGKILL), :meth:`stop`.

    The admin token is written to a file beside the database and given with
    ``--admin-token-file``; ``extra`` are further command-line arguments. ``env`` is added to the
    child's environment at each :meth:`start` (tests set ``PLDP_TODAY`` there, and may change it
    or :attr:`extra` between a stop and the next start).
    """

    def __init__(self, db: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.db = Path(db)
        self.extra: tuple[str, ...] = extra
        self.env = dict(env or {})
        token_file = self.db.with_suffix(".admin-token")
        if not token_file.exists():
            token_file.write_text(new_token())
        self.token_file = token_file
        self.admin_token = token_file.read_text().strip()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        """Whether the process started last is alive."""
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 30.0) -> CollectorProcess:
        """Start the collector and wait until it answers ``/v1/health``.

        Raises
        ------
        RuntimeError
            It is already running (a second process would lose the port and could leave the first
            one unreachable by :meth:`stop`), or it exited while starting.
        TimeoutError
            It did not answer within ``timeout`` seconds (it is killed then, workers included:
            nothing is left running that no one will stop).
        """
        if self.running:
            raise RuntimeError(f"the collector on {self.url} is already running; stop() it first")
        cmd = [sys.executable, "-m", "pldp.cli", "serve", "--db", str(self.db), "--port", str(self.port)]
        cmd += ["--admin-token-file", str(self.token_file), *self.extra]
        with open(self.db.with_suffix(".log"), "ab") as log:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(  # its own session: kill() reaches its worker processes too
                cmd,
                stdout=log,
                stderr=log,
                env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env},
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        probe = Collector(self.url, timeout=2.0)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the collector exited ({self.proc.returncode}): {self.log()[-2000:]}")
            try:
                probe.health()
                return self
            except (OSError, RemoteError):
                probe.close()
                time.sleep(0.05)
        self.kill()
        raise TimeoutError(f"the collector did not start in {timeout} s: {self.log()[-2000:]}")

    def log(self) -> str:
        path = self.db.with_suffix(".log")
        return path.read_text(errors="replace") if path.exists() else ""

    def client(self, token: str | None = None) -> Collector:
        return Collector(self.url, token)

    def admin(self) -> Collector:
        return Collector(self.url, self.admin_token)

    def kill(self) -> None:
        """SIGKILL to the server and its worker processes: no shutdown code runs, nothing is flushed."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM (a graceful shutdown), SIGKILL after 10 s."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> CollectorProcess:
        """Start the collector unless it runs already (so ``with server.start():`` starts one)."""
        return self if self.running else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
