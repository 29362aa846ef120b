"""How the benchmark report writes numbers, and what it says about the machine.

Plain text helpers for ``harness.py`` (the table), ``run.py`` (the header line and
``results.json``) and ``peers.py``; no numpy, no pldp.
"""

from __future__ import annotations

import math
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------- formatting
def fmt_time(seconds: float | None) -> str:
    """Human-readable duration (ns to s); ``-`` for ``None``.

    Parameters
    ----------
    seconds : float or None
        The duration.

    Returns
    -------
    str
        Three significant digits and a unit.
    """
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_rate(value: float, unit: str) -> str:
    """Human-readable rate with a k/M/G prefix.

    Parameters
    ----------
    value : float
        The rate.
    unit : str
        Its unit, after the prefix.

    Returns
    -------
    str
        Three significant digits, the prefix and the unit.
    """
    for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def mib(nbytes: float) -> str:
    """Bytes as KiB below 1 MiB, else MiB (two significant digits below 10 MiB); RSS moves by 4 KiB pages.

    Parameters
    ----------
    nbytes : float
        A size in bytes.

    Returns
    -------
    str
        ``< 4 KiB``, whole KiB, or MiB.
    """
    if nbytes < 4096:
        return "< 4 KiB"
    if nbytes < 2**20:
        return f"{nbytes / 2**10:.0f} KiB"
    value = nbytes / 2**20
    return f"{value:.2g} MiB" if value < 10 else f"{value:.0f} MiB"


def users(n: int) -> str:
    """10^k for powers of ten, else with thousands separators.

    Parameters
    ----------
    n : int
        A number of users.

    Returns
    -------
    str
        ``10^k`` or ``n`` with thousands separators.
    """
    k = round(math.log10(n)) if n > 0 else 0
    return f"10^{k}" if 10**k == n else f"{n:,}"


# ---------------------------------------------------------------------------- machine
def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (falls back to :func:`platform.processor`).

    Returns
    -------
    str
        The model name, or ``unknown CPU``.
    """
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def git_revision() -> str:
    """Short commit hash of the working tree (``+dirty`` when it has changes), or ``?``.

    Returns
    -------
    str
        The revision.
    """
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return rev + ("+dirty" if dirty else "")
