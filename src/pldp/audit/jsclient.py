"""The JS client as an audit target: many reports of one input, made by the real JS code.

:class:`JSClient` runs the browser/Node client (``pldp-client.mjs``, by default the copy that the
service ships) in a Node.js process through ``js_driver.mjs``, and reads its reports back as the
payload columns of :class:`~pldp.deploy.wire.ReportBatch` (``item``, ``bits``, ``level``; ``a{i}.``
per attribute of MPLDP), so that an empirical privacy audit can test the JS code as deployed
against the spec's exact channel. The JS client runs with its own CSPRNG
(``crypto.getRandomValues``): nothing is injected, so its reports (and any result computed from
them) are not seeded and not reproducible. One Node process serves every call of an object; it
starts on the first call and ends with :meth:`JSClient.close` (or the ``with`` block).

Examples
--------
>>> import pldp
>>> from pldp.deploy import Spec
>>> spec = Spec.from_mechanism(pldp.KRR(1.0, 4), question="q?")
>>> with JSClient(spec) as js:  # doctest: +SKIP
...     cols = js.columns(2, {}, n=1000)
>>> cols["item"].shape  # doctest: +SKIP
(1000,)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import weakref
from pathlib import Path
from typing import IO, Any

import numpy as np

from pldp.deploy.spec import Spec
from pldp.deploy.wire import BATCH_FORMAT, ReportBatch
from pldp.errors import ParameterError, ReportError

__all__ = ["DRIVER", "MODULE", "JSClient"]

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows)
    fcntl = None  # type: ignore[assignment]

_PIPE_BYTES = 1 << 20
_HERE = Path(__file__).resolve().parent
#: The driver run by Node (``node js_driver.mjs MODULE SPEC_PATH``).
DRIVER = _HERE / "js_driver.mjs"
#: The JS client the service ships (``pldp/service/static/pldp-client.mjs``).
MODULE = _HERE.parent / "service" / "static" / "pldp-client.mjs"


def _plain(value: Any) -> Any:
    """JSON form of the numpy values an answer or choice may hold."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} has no JSON form")


def _widen(pipe: IO[bytes] | None) -> None:
    """Let a pipe hold up to 1 MiB (Linux), so Node writes a batch while Python reads the last one."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if pipe is None or set_size is None:
        return
    try:
        fcntl.fcntl(pipe.fileno(), set_size, _PIPE_BYTES)
    except OSError:  # above /proc/sys/fs/pipe-max-size for an unprivileged user: keep the default
        pass


class _Process:
    """The Node process and the temporary folder of one :class:`JSClient` (spec file, stderr)."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr: IO[bytes] | None = None

    def stop(self) -> None:
        """End the process: close its stdin (the driver then exits), kill it if it lingers."""
        proc, self.proc = self.proc, None
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                try:
                    if pipe is not None:
                        pipe.close()
                except OSError:
                    pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None

    def release(self) -> None:
        """Stop the process and remove the folder."""
        self.stop()
        folder, self.folder = self.folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


class JSClient:
    """The JS client of a spec, run in Node.js: reports of one input at a time, as columns.

    Parameters
    ----------
    spec : Spec, dict or str
        The campaign spec (a dict or JSON text is read with :meth:`Spec.from_json
        <pldp.deploy.Spec.from_json>`).
    module : str or Path, optional
        The JS client module to run; default the one the service ships (:data:`MODULE`). Pass an
        altered copy to check that an audit notices the change.
    node : str or Path, optional
        The Node.js executable (>= 20); default ``node`` on PATH.

    Raises
    ------
    ParameterError
        Node.js is not found, or the module does not exist.

    Notes
    -----
    The JS client draws from its CSPRNG (``crypto.getRandomValues``), as it does in a browser, so
    the reports are not seeded. One Node process is started on the first call of
    :meth:`columns` and reused by the later ones; :meth:`close` (or leaving a ``with`` block)
    ends it and removes the temporary spec file. A pickled client carries no process: its copy
    starts its own when used.
    """

    def __init__(
        self, spec: Spec | dict[str, Any] | str, module: str | Path | None = None, node: str | Path | None = None
    ) -> None:
        self.spec = spec if isinstance(spec, Spec) else Spec.from_json(spec)
        self.module = Path(module).resolve() if module is not None else MODULE
        if not self.module.is_file():
            raise ParameterError(f"the JS client module {self.module} does not exist")
        found = shutil.which(str(node)) if node is not None else shutil.which("node")
        if found is None:
            raise ParameterError(
                f"Node.js was not found ({node or 'node'} is not an executable on PATH): "
                "install Node.js >= 20 to run the JS client"
            )
        self.node = found
        self._state = _Process()
        self._finalizer = weakref.finalize(self, self._state.release)

    # ------------------------------------------------------------------ the process
    @property
    def pid(self) -> int | None:
        """The process id of the running Node process, or None when none runs."""
        proc = self._state.proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def _process(self) -> subprocess.Popen[bytes]:
        """The running Node process, started (with the spec written to a temporary file) if needed."""
        state = self._state
        if state.proc is not None and state.proc.poll() is None:
            return state.proc
        state.stop()
        if state.folder is None:
            state.folder = Path(tempfile.mkdtemp(prefix="pldp-jsclient-"))
            (state.folder / "spec.json").write_text(self.spec.to_json(indent=None), encoding="utf-8")
        state.stderr = open(state.folder / "stderr.txt", "w+b")  # closed by _Process.stop
        state.proc = subprocess.Popen(
            [self.node, str(DRIVER), str(self.module), str(state.folder / "spec.json")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=state.stderr,
            bufsize=1 << 20,
        )
        _widen(state.proc.stdout)
        return state.proc

    def _failed(self, proc: subprocess.Popen[bytes], what: str) -> ParameterError:
        """The error of a process that ended without finishing a task (it is stopped)."""
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        stderr = ""
        if self._state.stderr is not None:
            self._state.stderr.seek(0)
            stderr = self._state.stderr.read().decode("utf-8", "replace").strip()[-2000:]
        self._state.stop()
        detail = f"; stderr: {stderr}" if stderr else ""
        return ParameterError(f"the JS client {what} (exit status {code}){detail}")

    def close(self) -> None:
        """End the Node process and remove the temporary spec file (the object stays usable)."""
        self._state.release()

    def __enter__(self) -> JSClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "module": self.module, "node": self.node}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.spec = state["spec"]
        self.module = state["module"]
        self.node = state["node"]
        self._state = _Process()
        self._finalizer = weakref.finalize(self, self._state.release)

    def __repr__(self) -> str:
        return f"JSClient(spec={self.spec.id!r}, module={str(self.module)!r}, node={self.node!r})"

    # ------------------------------------------------------------------ reports
    def columns(self, answer: Any, choices: dict[str, Any] | None, n: int, chunk: int = 5000) -> dict[str, np.ndarray]:
        """The payload columns of ``n`` reports that the JS client makes of one input.

        Parameters
        ----------
        answer : int, str or list
            One user's answer, as the JS client takes it: an item index or label (direct, unary
            and leveled specs), a list of them (padding-and-sampling: an item-set), one per
            attribute (MPLDP).
        choices : dict or None
            Her choices: ``{"level": t}`` (leveled specs) or ``{"levels": [t0, t1, ...]}``
            (MPLDP, None for an attribute that has no levels); ``{}`` or None for none.
        n : int
            Reports to make (>= 0).
        chunk : int, default 5000
            Reports per ``client.reports`` call (and per line read back).

        Returns
        -------
        dict of str to ndarray
            The columns of :meth:`pldp.channel.Node.columns` of the spec's root, ``n`` rows each:
            ``item`` and ``level`` int64, ``bits`` uint8 packed rows; as ``Client(spec).reports``
            gives them for the same input.

        Raises
        ------
        ParameterError
            The JS client refused the input (the message is the JS error's), the process failed,
            or fewer (or more) than ``n`` reports came back.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ParameterError(f"n must be an integer >= 0, got {n!r}")
        if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
            raise ParameterError(f"chunk must be an integer >= 1, got {chunk!r}")
        try:
            task = json.dumps(
                {"answer": answer, "choices": choices or {}, "n": int(n), "chunk": int(chunk)},
                default=_plain,
                separators=(",", ":"),
            )
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"the answer and choices must be JSON values: {exc}") from None
        proc = self._process()
        assert proc.stdin is not None
        try:
            proc.stdin.write(task.encode("utf-8") + b"\n")
            proc.stdin.flush()
        except BrokenPipeError:  # it ended before reading the task: its error line is on stdout
            pass
        try:
            parts = self._read(proc, n)
        except BaseException:  # the process may hold unread lines of this task: never reuse it
            self._state.stop()
            raise
        if not parts:
            empty = {"format": BATCH_FORMAT, "spec": self.spec.id, "reports": []}
            return ReportBatch.from_json(empty, self.spec.root, self.spec.id).columns
        if len(parts) == 1:
            return parts[0]
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    def _read(self, proc: subprocess.Popen[bytes], n: int) -> list[dict[str, np.ndarray]]:
        """The columns of each batch line of one task, up to its ``done`` line (which must count ``n``)."""
        assert proc.stdout is not None
        spec_id, root = self.spec.id, self.spec.root
        parts: list[dict[str, np.ndarray]] = []
        got = 0
        while True:
            line = proc.stdout.readline()
            if not line:
                raise self._failed(proc, f"ended after {got} of {n} reports")
            try:
                data = json.loads(line)
            except ValueError:
                data = None
            if not isinstance(data, dict):
                raise ParameterError(f"the JS driver wrote a line that is not a JSON object: {line[:200]!r}")
            if "error" in data:
                self._failed(proc, "failed")
                raise ParameterError(f"the JS client failed: {data['error']}: {data.get('message')}")
            if "done" in data:
                break
            try:
                batch = ReportBatch.from_json(data, root, spec_id)
            except ReportError as exc:
                raise ParameterError(f"the JS client wrote reports the wire format refuses: {exc}") from None
            parts.append(batch.columns)
            got += len(batch)
        if got != n or data["done"] != n:
            raise ParameterError(f"the JS client made {got} reports ({data['done']} by its count), not {n}")
        return parts
