"""What some tests need from the machine (Node.js, Chromium), and the skip, or failure, without it.

Such tests skip where the machine lacks what they need, unless the environment variable named
for it is ``required`` (``.ci/run`` sets ``PLDP_NODE_TESTS=required`` and
``PLDP_BROWSER_TESTS=required``): then they fail, so that CI cannot pass them silently.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

import pytest

#: The oldest Node.js the JS client runs in (clients/js/README.md).
NODE_MAJOR = 20
NODE_HOW = (
    f"to run them: apt-get install nodejs (Node.js >= {NODE_MAJOR}); "
    "PLDP_NODE_TESTS=required makes them fail instead of skipping"
)


def required(variable: str) -> bool:
    """Whether the environment variable ``variable`` says ``required``."""
    return os.environ.get(variable, "").strip().lower() == "required"


def need(reason: str | None, variable: str, how: str) -> None:
    """Skip the test for ``reason`` (fail it where ``variable`` is ``required``); None: go on.

    Parameters
    ----------
    reason
        Why the test cannot run here, or None when it can.
    variable
        The environment variable that makes the test mandatory.
    how
        How to provide what is missing, added to the message.
    """
    if reason is None:
        return
    if required(variable):
        pytest.fail(f"{variable}=required, but {reason} ({how})")
    pytest.skip(f"{reason}; {how}")


@functools.cache
def _node() -> tuple[str | None, str | None]:
    """The path of a Node.js >= ``NODE_MAJOR`` on PATH and None, or None and why there is none."""
    node = shutil.which("node")
    if node is None:
        return None, "node (Node.js) is not on PATH: the JS client cannot run"
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60, check=True).stdout
        major = int(version.strip().lstrip("v").split(".")[0])
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return None, f"{node} --version failed ({exc})"
    if major < NODE_MAJOR:
        return None, f"{node} is Node.js {version.strip()}, older than {NODE_MAJOR}: the JS client cannot run"
    return node, None


def need_node() -> str:
    """The path of Node.js; skips the test where there is none (fails it under ``PLDP_NODE_TESTS=required``)."""
    node, reason = _node()
    need(reason, "PLDP_NODE_TESTS", NODE_HOW)
    assert node is not None
    return node
