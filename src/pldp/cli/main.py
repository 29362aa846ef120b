"""The ``pldp`` command: its parser, assembled from the command modules, and its entry point.

Each command module (:mod:`pldp.cli.demo`, :mod:`pldp.cli.reproduce`, ...) adds its commands to
the top-level subparsers with ``add_commands``; the order of the calls below is the order of the
commands in ``pldp --help``. Command modules import the library inside their command functions,
so that building the parser (``pldp --help``) stays fast. The extras a command needs are declared
in :mod:`pldp.cli.extras`, and checked before the command runs.
"""

from __future__ import annotations

import argparse
import sys

from pldp import __version__
from pldp.cli import (
    aggregate,
    attack,
    audit,
    credentials,
    datasets,
    demo,
    deploy,
    extras,
    mechanism,
    reproduce,
    service,
)
from pldp.cli.errors import BROKEN_PIPE, INTERRUPTED, named_file_error, silence_stdout, stdout_closed
from pldp.cli.options import attach_list_values
from pldp.errors import PLDPError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pldp`` command.

    Returns
    -------
    argparse.ArgumentParser
        Every command, each with its function as the ``func`` default.
    """
    parser = argparse.ArgumentParser(prog="pldp", description="Personalized local differential privacy.")
    parser.add_argument("--version", action="version", version=f"pldp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for commands in (demo, reproduce, datasets, mechanism, aggregate, deploy, service, credentials, audit, attack):
        commands.add_commands(sub)
    extras.describe(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pldp`` console script.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code of the command (:mod:`pldp.cli.errors`). Bad input (a
        :class:`~pldp.errors.PLDPError`, or an :class:`OSError` about a file named on the command
        line) exits with 2 and one line naming the bad value, as argparse does for a bad option; so
        does a command whose extra is not installed (:mod:`pldp.cli.extras`). Standard output
        closed early (``pldp ... | head -1``) ends the command quietly with 141; Ctrl-C with one
        line and 130.
    """
    parser = build_parser()
    args = parser.parse_args(attach_list_values(sys.argv[1:] if argv is None else argv))  # --budgets -1,1,inf
    try:
        extras.check(args)  # before the command does anything (demo-collection: before its collector starts)
        code = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, not in Python's flush at exit
        return code
    except PLDPError as exc:  # bad input: one line naming the bad value, no traceback
        parser.exit(2, f"pldp: error: {exc}\n")
    except ModuleNotFoundError as exc:  # an extra's module that no declaration of extras.NEEDS foresaw
        missing = extras.missing_extra(exc, args)
        if missing is None:
            raise  # not an extra's: a bug, with its traceback
        parser.exit(2, f"pldp: error: {missing}\n")
    except BrokenPipeError:
        if not stdout_closed():
            raise  # a socket's, not the reader of our output: a bug
        silence_stdout()
        return BROKEN_PIPE
    except OSError as exc:
        message = named_file_error(exc, args)
        if message is None:
            raise  # not about a file the user named: a bug, with its traceback
        parser.exit(2, f"pldp: error: {message}\n")
    except KeyboardInterrupt as exc:  # Ctrl-C: one line, what was done (errors.Interrupted), no traceback
        print(f"pldp: {str(exc) or 'interrupted'}", file=sys.stderr)
        return INTERRUPTED
