"""Running ``pldp`` as a user does, and the one-line error checks the CLI tests share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pldp.cli import main


def pldp_cmd(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``pldp ARGS`` in a subprocess (``PLDP_SERVER`` removed from the environment unless ``env`` sets it)."""
    base = {k: v for k, v in os.environ.items() if k != "PLDP_SERVER"}
    cmd = [sys.executable, "-m", "pldp.cli", *args]
    return subprocess.run(
        cmd, capture_output=True, text=True, cwd=cwd, env={**base, **(env or {})}, timeout=timeout, check=False
    )


def one_line(err: str, code: int, got: int, *words: str) -> str:
    """Assert exit ``code`` (``got`` is the real one), no traceback and a single line of standard
    error ``err`` holding ``words``; return the line."""
    assert got == code, (got, err)
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def one_line_error(out: subprocess.CompletedProcess[str], *words: str) -> str:
    """Assert exit 2 and a single ``pldp: error:`` line holding ``words``; return the line."""
    return one_line(out.stderr, 2, out.returncode, "pldp: error: ", *words)


def main_error(capsys: pytest.CaptureFixture[str], args: list[str], *words: str) -> str:
    """:func:`pldp.cli.main` in this process: assert exit 2 and one ``pldp: error:`` line holding ``words``."""
    with pytest.raises(SystemExit) as stop:
        main(args)
    err = capsys.readouterr().err
    return one_line(err, 2, int(stop.value.code or 0), "pldp: error: ", *words)


def main_run(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``pldp ARGS`` through :func:`pldp.cli.main` in this process, as :func:`pldp_cmd` reports it
    (exit code, standard output and error); for the tests that run many commands in a row, each
    of which would otherwise start a Python and import pldp again. An exception that is not an
    exit propagates (a subprocess would print its traceback)."""
    capsys.readouterr()  # what the test printed before is not the command's
    try:
        code = main(list(args))
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["pldp", *args], int(code), out.out, out.err)
