"""The ``campaign`` commands' connection to a collector: its URL, the token, and how failures read.

The URL is ``--server``, else ``$PLDP_SERVER``, else :data:`DEFAULT_SERVER`. A collector that
cannot be reached is one line naming the URL tried and where that URL came from (exit 2); a
refusal is one line with the collector's status and reason (exit 1).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from pldp.cli.errors import CLIError, file_error

__all__ = [
    "DEFAULT_SERVER",
    "add_remote_command",
    "collector_from_args",
    "iso_time",
    "remote_command",
    "server_url",
    "token_advice",
]

#: The collector's URL when neither ``--server`` nor ``PLDP_SERVER`` gives one.
DEFAULT_SERVER = "http://127.0.0.1:8000"


def server_url(args: argparse.Namespace) -> tuple[str, str]:
    """The collector's URL and where it came from: ``--server``, ``PLDP_SERVER`` or the default."""
    if args.server:
        return args.server, "--server"
    if os.environ.get("PLDP_SERVER"):
        return os.environ["PLDP_SERVER"], "PLDP_SERVER"
    return DEFAULT_SERVER, "the default"


def iso_time(seconds: float | None) -> str:
    """A time of the collector's (seconds since the epoch) as ISO 8601 in UTC, to the second:
    ``2026-11-29T05:49:17Z``; ``-`` for none."""
    if seconds is None:
        return "-"
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def collector_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~pldp.deploy.remote.Collector` of a ``campaign`` command's options.

    With ``--wait S`` it first waits up to S seconds for the collector to answer (a collector
    started a moment ago); then it reads ``--token-file``.

    Raises
    ------
    CLIError
        A URL that is not ``http(s)://host[:port]``, a collector that does not answer within
        ``--wait``, or a token file that is missing or holds no token.
    """
    from pldp.deploy.remote import Collector, UnreachableError
    from pldp.service.auth import read_token_file

    url, source = server_url(args)
    try:
        collector = Collector(url)
    except ValueError:  # no scheme or host, or a port that is not a number from 0 to 65535
        raise CLIError(
            f"{source} gives {url!r}, not a collector's URL: give http(s)://host:port (a port up to 65535)"
        ) from None
    deadline = time.monotonic() + args.wait
    while args.wait > 0:
        try:
            collector.health()
            break
        except UnreachableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    if args.token_file:
        try:
            collector.token = read_token_file(args.token_file)
        except OSError as exc:
            raise file_error("--token-file", args.token_file, exc) from None
        except ValueError as exc:
            raise CLIError(f"--token-file {exc}") from None
    return collector


def token_advice(exc: Exception, args: argparse.Namespace) -> str:
    """What a token would change about the collector's refusal ``exc`` ("; ..." to append), or "".

    A 401: the command needs a token (pass ``--token-file``), or the one given is not accepted. A
    429 without a token: the collector limits the reports each address sends, and the tokens of
    analysts and the admin are exempt (a bulk upload of a report file takes minutes, not hours).
    """
    status = getattr(exc, "status", None)
    if status == 401:
        if args.token_file:
            return (
                f"; the collector does not accept the token in --token-file {args.token_file} "
                "(expired, revoked, or another collector's)"
            )
        return "; this needs a token: pass --token-file FILE (a file holding it)"
    if status == 429 and not args.token_file:
        return (
            "; the collector limits reports per address (429); analyst and admin tokens are exempt: "
            "pass --token-file FILE"
        )
    return ""


def remote_command(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``fn``, a ``campaign`` command, with the collector's failures as one line each.

    A refusal (:class:`~pldp.deploy.remote.RemoteError`) prints the status and reason (and what a
    token would change, :func:`token_advice`) and exits with 1; a collector that cannot be reached
    raises a :class:`CLIError` (exit 2) naming the URL tried, where it came from, and how to set
    another.
    """

    def wrapped(args: argparse.Namespace) -> int:
        from pldp.deploy.remote import RemoteError, UnreachableError

        try:
            return int(fn(args) or 0)
        except RemoteError as exc:
            print(f"pldp: the collector refused: {exc}{token_advice(exc, args)}", file=sys.stderr)
            return 1
        except UnreachableError as exc:
            url, source = server_url(args)
            origin = {
                "--server": "given by --server",
                "PLDP_SERVER": "from PLDP_SERVER",
                "the default": "the default; set PLDP_SERVER or --server to the collector's URL",
            }[source]
            raise CLIError(f"cannot reach the collector at {url} ({origin}): {exc.reason}") from None

    return wrapped


def add_remote_command(
    sub: Any, name: str, help_: str, fn: Callable[[argparse.Namespace], int], token: str = "your token"
) -> argparse.ArgumentParser:
    """Add the command ``name`` that talks to a collector to the subparsers ``sub``.

    It gets ``--server``, ``--token-file`` and ``--wait`` (read by :func:`collector_from_args`)
    and runs ``fn`` through :func:`remote_command`.
    """
    p: argparse.ArgumentParser = sub.add_parser(name, help=help_, description=help_[0].upper() + help_[1:] + ".")
    p.add_argument("--server", default=None, help=f"the collector's URL (default: $PLDP_SERVER, else {DEFAULT_SERVER})")
    p.add_argument("--token-file", default=None, help=f"a file holding {token}")
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait up to this long for the collector to answer, e.g. one started a moment ago (default 0)",
    )
    p.set_defaults(func=remote_command(fn))
    return p
