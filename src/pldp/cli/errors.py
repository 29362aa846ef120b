"""How the ``pldp`` command fails: one line and an exit code, never a traceback for bad input.

=========  ===============================================================================
exit code  meaning
=========  ===============================================================================
0          done
1          the command ran and the answer is no: a privacy claim fails (``spec verify``,
           ``audit``), the collector refused a request, a report file is bad (``aggregate``)
2          bad input: ``pldp: error: <what is wrong, and the fix where there is one>``
130        interrupted (Ctrl-C, SIGINT): one ``pldp:`` line saying what was done so far
           (:class:`Interrupted`), never a traceback; 128 + SIGINT, as a shell reports it
141        standard output was closed early (``pldp ... | head -1``): 128 + SIGPIPE, what the
           shell reports for any command that a closed pipe stops
=========  ===============================================================================

Bad input is a :class:`~pldp.errors.PLDPError` (the library's bad values, and :class:`CLIError`
for what only the command line knows: a missing file, an unreachable collector), or an
:class:`OSError` about a file the user named on the command line (:func:`named_file_error`).
Any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
from pathlib import Path

from pldp.errors import PLDPError

__all__ = [
    "BROKEN_PIPE",
    "INTERRUPTED",
    "CLIError",
    "Interrupted",
    "file_error",
    "named_file_error",
    "read_text",
    "silence_stdout",
    "stdout_closed",
    "write_bytes",
]

#: The exit code after standard output was closed early: 128 + SIGPIPE (13), as a shell reports it.
BROKEN_PIPE = 141
#: The exit code after Ctrl-C (SIGINT): 128 + 2, as a shell reports it.
INTERRUPTED = 130


class CLIError(PLDPError):
    """Bad input that only the command line can name: a missing file, an unreachable collector, ...

    Its message is the whole line after ``pldp: error:``: what is wrong and, where there is one,
    the fix.
    """


class Interrupted(KeyboardInterrupt):
    """A Ctrl-C that a command caught: its message is the one line that says what was done so far
    (``interrupted after ... reports were acknowledged; ...``); :func:`pldp.cli.main` prints it
    after ``pldp:`` and exits with :data:`INTERRUPTED`."""


def _reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    if isinstance(exc, IsADirectoryError):
        return "a directory, not a file"
    if isinstance(exc, NotADirectoryError):
        return "a part of the path is not a directory"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return (exc.strerror or str(exc)).lower()


def file_error(what: str, path: str | Path, exc: OSError, verb: str = "read") -> CLIError:
    """The error of a file the command line calls ``what`` that could not be ``verb`` (read, write)."""
    return CLIError(f"cannot {verb} {what} {str(path)!r}: {_reason(exc)}")


def read_text(path: str | Path, what: str) -> str:
    """The UTF-8 text of the file ``path``, which the command line calls ``what`` (e.g. ``spec file``).

    Raises
    ------
    CLIError
        The file is missing, a directory, unreadable or not UTF-8 text; the message names it.
    """
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise file_error(what, path, exc) from None
    except UnicodeDecodeError:
        raise CLIError(f"cannot read {what} {str(path)!r}: not UTF-8 text") from None


def write_bytes(path: str | Path, data: bytes, what: str) -> None:
    """Write ``data`` to ``path`` (the command line's ``what``, e.g. ``--out``).

    Raises
    ------
    CLIError
        The directory is missing, or the path cannot be written; the message names it.
    """
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise file_error(what, path, exc, "write") from None


def _given(args: argparse.Namespace) -> set[str]:
    """The strings the user gave: every string (or list of strings) value of ``args``."""
    out: set[str] = set()
    for value in vars(args).values():
        values = value if isinstance(value, (list, tuple)) else [value]
        out.update(str(v) for v in values if isinstance(v, (str, os.PathLike)))
    return out


def named_file_error(exc: OSError, args: argparse.Namespace) -> str | None:
    """The one-line message of ``exc`` when it is about a file the user named, else ``None``.

    A file is named by the user when the exception's file name is the value of an argument, or
    lies inside one (a directory argument). Any other :class:`OSError` is not the user's input
    and keeps its traceback.
    """
    given = {os.path.abspath(g) for g in _given(args) if g}
    for name in (exc.filename, exc.filename2):
        if not isinstance(name, (str, bytes, os.PathLike)):
            continue
        path = os.fsdecode(name)
        full = os.path.abspath(path)
        if full in given or any(full.startswith(g + os.sep) for g in given if g != os.sep):
            return f"{path}: {_reason(exc)}"
    return None


def stdout_closed() -> bool:
    """Whether standard output is a pipe or socket whose reader has gone (``| head -1`` exited).

    Tells a :class:`BrokenPipeError` of standard output from one of a socket: only the former is the
    user's doing.
    """
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced or closed: nothing to tell
        return True
    if not hasattr(select, "poll"):  # pragma: no cover - Windows
        return True
    poller = select.poll()
    poller.register(fd, 0)  # POLLERR and POLLHUP are always reported
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def silence_stdout() -> None:
    """Point standard output at ``/dev/null``, so that Python's final flush at exit cannot fail
    again (the recipe of the :mod:`signal` module's documentation, "Note on SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
