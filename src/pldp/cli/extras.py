"""Which extra each ``pldp`` command needs, checked before the command does any work.

``pip install pldp`` brings numpy and scipy; a command that needs more (:data:`NEEDS`) names the
extra to install in one line and exits with 2, before it imports anything or starts a process:

    pldp: error: pldp serve needs the service extra: pip install "pldp[service]"

:func:`check` looks the extra's modules up with :func:`importlib.util.find_spec`, which imports
none of them. :func:`missing_extra` is the safety net of :func:`pldp.cli.main.main`: an import of an
extra's module that no declaration foresaw fails with the same line, not a traceback. The table of
:func:`describe` ends ``pldp --help``; each command that needs an extra says so in its own help.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

from pldp.cli.errors import CLIError

__all__ = ["EXTRAS", "NEEDS", "Need", "check", "command_of", "describe", "missing_extra"]

#: The modules of each extra of ``pyproject.toml`` that pldp imports (the safety net looks an
#: absent module up here, first extra first); a command that needs an extra needs them all. tqdm
#: (experiments) is left out: without it there is no progress bar, and nothing else changes.
EXTRAS: dict[str, tuple[str, ...]] = {
    "deploy": ("pyarrow",),
    "distributed": ("dask", "distributed"),
    "experiments": ("pandas", "pyarrow", "matplotlib"),
    "service": ("fastapi", "starlette", "pydantic", "uvicorn", "httptools", "pyarrow"),
}


def _given(dest: str) -> Callable[[argparse.Namespace], bool]:
    return lambda args: getattr(args, dest, None) is not None


def _parquet(dest: str) -> Callable[[argparse.Namespace], bool]:
    return lambda args: str(getattr(args, dest, "")).endswith(".parquet")


@dataclass(frozen=True)
class Need:
    """The extra a command needs: always, or when ``when`` holds of its arguments."""

    #: The command as typed after ``pldp``: ``serve``, ``clients simulate``.
    command: str
    #: The extra: a key of :data:`EXTRAS`.
    extra: str
    #: The arguments that make the need (``--out FILE.parquet``); empty when it always holds.
    option: str = ""
    #: Whether ``option`` is given, from the parsed arguments; None: always.
    when: Callable[[argparse.Namespace], bool] | None = None
    #: What works without the extra, said after the fix (``or write a .json or .jsonl file``).
    instead: str = ""

    def holds(self, args: argparse.Namespace) -> bool:
        return self.when is None or self.when(args)


#: Every command (or option of one) that needs more than numpy and scipy. ``aggregate`` tallies
#: serially without Dask; ``--scheduler`` sends the work to a Dask cluster, which needs Dask.
NEEDS: tuple[Need, ...] = (
    Need("serve", "service"),
    Need("demo-collection", "service"),
    Need("reproduce", "experiments"),
    Need("reproduce", "distributed", "--scheduler", _given("scheduler")),
    Need("attack", "experiments"),
    Need("aggregate", "deploy"),
    Need("aggregate", "distributed", "--scheduler", _given("scheduler")),
    Need("audit", "distributed", "--scheduler", _given("scheduler")),
    Need("clients simulate", "deploy", "--out FILE.parquet", _parquet("out"), "or write a .json or .jsonl file"),
    Need("campaign submit", "deploy", "FILE.parquet", _parquet("reports"), "or send a .json or .jsonl file"),
    Need("campaign export", "deploy", "--out-dir", _given("out_dir"), "or export one file with --out"),
)


def command_of(args: argparse.Namespace) -> str:
    """The command ``args`` were parsed for, as typed after ``pldp``: ``serve``, ``campaign submit``."""
    words = [getattr(args, "command", None), getattr(args, "action", None)]
    return " ".join(w for w in words if isinstance(w, str))


def _installed(extra: str) -> bool:
    """Whether every module of ``extra`` can be imported (found, not imported)."""
    return all(importlib.util.find_spec(name) is not None for name in EXTRAS[extra])


def _label(need: Need) -> str:
    return " ".join(w for w in ("pldp", need.command, need.option) if w)


def _message(label: str, extras: list[str], instead: str = "") -> str:
    """``LABEL needs the EXTRA extra: pip install "pldp[EXTRA]"``, then ``instead`` if given."""
    plural = "s" if len(extras) > 1 else ""
    line = f'{label} needs the {" and ".join(extras)} extra{plural}: pip install "pldp[{",".join(extras)}]"'
    return f"{line}, {instead}" if instead else line


def check(args: argparse.Namespace) -> None:
    """Refuse a command whose extras are not installed, before it does anything.

    Raises
    ------
    CLIError
        One line: the command (and the options that need more), the extras it needs, and the
        ``pip install`` that adds them.
    """
    command = command_of(args)
    missing = [n for n in NEEDS if n.command == command and n.holds(args) and not _installed(n.extra)]
    if not missing:
        return
    label = " ".join(["pldp", command, *(n.option for n in missing if n.option)])
    extras = list(dict.fromkeys(n.extra for n in missing))
    raise CLIError(_message(label, extras, missing[0].instead if len(missing) == 1 else ""))


def missing_extra(exc: ModuleNotFoundError, args: argparse.Namespace) -> str | None:
    """The one-line message of an absent module of an extra (the extra the command is declared to
    need, else the first that holds it), or None for any other module: a bug, with its traceback."""
    top = (exc.name or "").partition(".")[0]
    command = command_of(args)
    declared = [n.extra for n in NEEDS if n.command == command]
    holders = [e for e in [*declared, *EXTRAS] if top in EXTRAS[e]]
    return _message(f"pldp {command}", holders[:1]) if top and holders else None


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``command`` (``campaign submit``) under the ``pldp`` parser."""
    for word in command.split():
        (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = action.choices[word]
    return parser


def describe(parser: argparse.ArgumentParser) -> None:
    """Say which extra each command needs: a table at the end of ``pldp --help`` (a reST simple
    table, for the documentation too), and a sentence at the end of each such command's help."""
    rows = [(f"{n.command} {n.option}".strip(), n.extra) for n in NEEDS]
    width, extra = max(len(c) for c, _ in rows), max(len(e) for _, e in rows)
    rule = f"{'=' * width}  {'=' * extra}"
    lines = [rule, f"{'command':<{width}}  extra", rule, *(f"{c:<{width}}  {e}" for c, e in rows), rule]
    parser.epilog = (
        'Commands that need an extra (pip install "pldp[EXTRA]"); every other command\n'
        "needs only numpy and scipy:\n\n" + "\n".join(lines)
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    for command in dict.fromkeys(n.command for n in NEEDS):
        mine = [n for n in NEEDS if n.command == command]
        _subparser(parser, command).epilog = " ".join(_message(_label(n), [n.extra]) + "." for n in mine)
