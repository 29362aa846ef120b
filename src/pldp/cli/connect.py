"""The ``campaign`` commands' connection to a collector: its URL, the token, and how failures read.

The URL is ``--server``, else ``$PLDP_SERVER``, else :data:`DEFAULT_SERVER`. A collector that
cannot be reached is one line naming the URL tried and where that URL came from (exit 2); a
refusal is one line with the collector's status and reason (exit 1).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from pldp.cli.errors import CLIError, file_error

__all__ = ["DEFAULT_SERVER", "add_remote_command", "collector_from_args", "remote_command", "server_url"]

#: The collector's URL when neither ``--server`` nor ``PLDP_SERVER`` gives one.
DEFAULT_SERVER = "http://127.0.0.1:8000"


def server_url(args: argparse.Namespace) -> tuple[str, str]:
    """The collector's URL and where it came from: ``--server``, ``PLDP_SERVER`` or the default."""
    if args.server:
        return args.server, "--server"
    if os.environ.get("PLDP_SERVER"):
        return os.environ["PLDP_SERVER"], "PLDP_SERVER"
    return DEFAULT_SERVER, "the default"


def collector_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~pldp.service.remote.Collector` of a ``campaign`` command's options.

    With ``--wait S`` it first waits up to S seconds for the collector to answer (a collector
    started a moment ago); then it reads ``--token-file``.

    Raises
    ------
    CLIError
        A URL that is not ``http(s)://host[:port]``, a collector that does not answer within
        ``--wait``, or a token file that is missing or holds no token.
    """
    from pldp.service.auth import read_token_file
    from pldp.service.remote import Collector, UnreachableError

    url, source = server_url(args)
    try:
        collector = Collector(url)
    except ValueError:
        raise CLIError(f"{source} gives {url!r}, not a collector's URL: give http(s)://host:port") from None
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


def remote_command(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``fn``, a ``campaign`` command, with the collector's failures as one line each.

    A refusal (:class:`~pldp.service.remote.RemoteError`) prints the status and reason and exits
    with 1; a collector that cannot be reached raises a :class:`CLIError` (exit 2) naming the URL
    tried, where it came from, and how to set another.
    """

    def wrapped(args: argparse.Namespace) -> int:
        from pldp.service.remote import RemoteError, UnreachableError

        try:
            return int(fn(args) or 0)
        except RemoteError as exc:
            print(f"pldp: the collector refused: {exc}", file=sys.stderr)
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
