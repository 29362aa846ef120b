"""Options shared by several ``pldp`` commands, and the mechanism they name.

``pldp mechanism show`` and ``pldp audit`` name a mechanism the same way: a name of
:data:`MECHANISM_NAMES` (each named mechanism of :data:`pldp.registry.ENTRIES`, lower case) and the
options of :func:`add_mechanism_arguments`, which its constructor's parameters name
(:data:`PARAMETER_OPTIONS`). :func:`mechanism_from_args` builds that mechanism, so a command
built on top of the CLI (or a script) can take the same options:

>>> import argparse
>>> from pldp.cli.options import add_mechanism_arguments, mechanism_from_args
>>> parser = argparse.ArgumentParser()
>>> add_mechanism_arguments(parser)
>>> mechanism_from_args("krr", parser.parse_args(["--eps", "1", "--d", "4"]))
KRR(epsilon=1, d=4)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from pldp.budgets import ItemBudgets
from pldp.errors import ParameterError
from pldp.registry import ENTRIES
from pldp.registry import entry as registry_entry

if TYPE_CHECKING:
    from pldp.mechanisms import Mechanism

__all__ = [
    "LIST_OPTIONS",
    "MECHANISM_NAMES",
    "PARAMETER_OPTIONS",
    "ParameterOption",
    "add_mechanism_arguments",
    "attach_list_values",
    "mechanism_from_args",
    "parse_budgets",
    "round_number",
]

#: The subparsers of a command group: each command module adds its commands to it.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

#: The mechanisms :func:`mechanism_from_args` builds: the named mechanisms of the registry.
MECHANISM_NAMES = tuple(e.cli_name for e in ENTRIES if e.cli_name is not None)


#: Options whose value is a comma-separated list of numbers, which may start with ``-``
#: (``--budgets -1,1,inf``): :func:`attach_list_values` keeps argparse from taking it for an option.
LIST_OPTIONS = ("--budgets", "--perm-budgets", "--levels", "--eps-list", "--rho")


def attach_list_values(argv: list[str]) -> list[str]:
    """``argv`` with each value of a :data:`LIST_OPTIONS` option that starts with ``-`` and a digit
    or a point attached to it (``--budgets -1,1,inf`` as ``--budgets=-1,1,inf``).

    argparse reads ``-1,1,inf`` as an option, not a number, and fails with "expected one argument";
    attached, the value reaches the command, which refuses a negative budget with the library's own
    message (:func:`parse_budgets`, ``pldp.ItemBudgets``).

    Parameters
    ----------
    argv : list of str
        The command line's arguments (``sys.argv[1:]``).

    Returns
    -------
    list of str
        The same arguments, those values attached to their options.

    Examples
    --------
    >>> attach_list_values(["mechanism", "show", "iprr", "--budgets", "-1,1,inf"])
    ['mechanism', 'show', 'iprr', '--budgets=-1,1,inf']
    """
    out: list[str] = []
    for arg in argv:
        if out and out[-1] in LIST_OPTIONS and len(arg) > 1 and arg[0] == "-" and (arg[1].isdigit() or arg[1] == "."):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def round_number(text: str) -> int:
    """A round of a recurring campaign given on the command line (``--round N``): 1, 2, ...

    Raises
    ------
    argparse.ArgumentTypeError
        Anything else (argparse then prints one line and exits with 2).
    """
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= 999_999_999):
        raise argparse.ArgumentTypeError(f"a round is a number 1, 2, ..., got {text!r}")
    return int(text)


def parse_budgets(text: str) -> list[float | None]:
    """The budgets of ``--budgets``.

    Parameters
    ----------
    text : str
        Comma-separated numbers; ``inf`` (or ``none``, ``ns``) for a non-sensitive item.

    Returns
    -------
    list of float or None
        One budget per item, ``None`` for a non-sensitive one.

    Raises
    ------
    ParameterError
        A part that is not a number.
    """
    out: list[float | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        if part in ("inf", "none", "ns"):
            out.append(None)
            continue
        try:
            out.append(float(part))
        except ValueError:
            raise ParameterError(
                f"--budgets: {part!r} is not a number (give comma-separated budgets, inf for a non-sensitive item)"
            ) from None
    return out


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class ParameterOption:
    """How a constructor parameter of a mechanism is given on the command line.

    Attributes
    ----------
    dest : str
        The option's attribute in the parsed arguments (``eps`` for ``--eps``).
    needs : str
        The option as the message of a missing one names it; empty for an optional parameter (one
        with a default: the option's default is passed).
    example : str
        An example of the option, appended to that message.
    convert : callable
        The option's parsed value -> the constructor's argument.
    """

    dest: str
    needs: str = ""
    example: str = ""
    convert: Callable[[Any], Any] = _same


def _item_budgets(text: str) -> ItemBudgets:
    return ItemBudgets.from_array(parse_budgets(text))


def _flags(text: str) -> np.ndarray:
    return np.array([s.strip() in ("1", "true", "yes") for s in text.split(",")])


#: The options of each constructor parameter name of the registry's named mechanisms: a mechanism
#: takes the options of its parameters (``KRR(epsilon, d)``: ``--eps``, ``--d``).
PARAMETER_OPTIONS: dict[str, ParameterOption] = {
    "epsilon": ParameterOption("eps", "--eps"),
    "d": ParameterOption("d", "--d"),
    "sensitive": ParameterOption("sensitive", "--sensitive (comma-separated 0/1 flags)", convert=_flags),
    "budgets": ParameterOption("budgets", "--budgets", "--budgets 0.1,0.5,1.0,inf,inf", _item_budgets),
    "eps_perm": ParameterOption("eps_perm", "--eps-perm (any number of reports)"),
    "eps_1": ParameterOption("eps", "--eps (one report)"),
    "perm": ParameterOption(
        "perm_budgets", "--perm-budgets (eps_perm per item)", "--perm-budgets 1,2,4", _item_budgets
    ),
    "one": ParameterOption("budgets", "--budgets (eps_1 per item)", "--budgets 0.25,0.5,1", _item_budgets),
    "model": ParameterOption("model"),
    "pair_rule": ParameterOption("pair_rule"),
}


def add_mechanism_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options that configure a mechanism (``mechanism show``, ``audit``) to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        Gets ``--eps``, ``--eps-perm``, ``--d``, ``--sensitive``, ``--budgets``, ``--perm-budgets``,
        ``--model`` and ``--pair-rule``, the options :func:`mechanism_from_args` reads.
    """
    parser.add_argument(
        "--eps", type=float, default=None, help="budget epsilon; eps_1 (one report) of a memoized chain"
    )
    parser.add_argument(
        "--eps-perm", type=float, default=None, help="memoized chains: eps_perm (any number of reports)"
    )
    parser.add_argument("--d", type=int, default=None, help="domain size")
    parser.add_argument("--sensitive", default=None, help="comma-separated 0/1 flags per item (urr)")
    parser.add_argument("--budgets", default=None, help="comma-separated budgets per item, inf = non-sensitive")
    parser.add_argument(
        "--perm-budgets", default=None, help="eps_perm per item of a personalized chain (--budgets: eps_1 per item)"
    )
    parser.add_argument("--model", default="opt0", choices=["opt0", "opt1", "opt2"], help="idue model")
    parser.add_argument(
        "--pair-rule", default="min", choices=["min", "avg"], help="idue notion: MinID-LDP (min) or AvgID-LDP (avg)"
    )


def _listing(parts: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts)


def mechanism_from_args(name: str, args: argparse.Namespace) -> Mechanism:
    """The mechanism ``name`` configured by the options of :func:`add_mechanism_arguments`.

    The mechanism's constructor parameters name its options (:data:`PARAMETER_OPTIONS`):
    ``KRR(epsilon, d)`` takes ``--eps`` and ``--d``, ``LIPRR(perm, one)`` ``--perm-budgets`` and
    ``--budgets`` (see :func:`parse_budgets`); a parameter with a default (``IDUE``'s ``model``
    and ``pair_rule``) takes its option's default, and one without an option its own default.

    Parameters
    ----------
    name : str
        One of :data:`MECHANISM_NAMES` (any case).
    args : argparse.Namespace
        Parsed options of a parser given :func:`add_mechanism_arguments`.

    Returns
    -------
    Mechanism
        The configured mechanism.

    Raises
    ------
    ParameterError
        An unknown name, a missing option, or a bad budget.
    """
    key = name.lower()
    if key not in MECHANISM_NAMES:
        raise ParameterError(f"unknown mechanism {name!r}: {', '.join(MECHANISM_NAMES)}")
    entry = registry_entry(key)
    options = {p: PARAMETER_OPTIONS[p] for p in entry.parameters() if p in PARAMETER_OPTIONS}
    required = [o for o in options.values() if o.needs]
    if any(getattr(args, o.dest) is None for o in required):
        examples = [o.example for o in required if o.example]
        more = f", e.g. {' '.join(examples)}" if examples else ""
        raise ParameterError(f"{key} needs {_listing([o.needs for o in required])}{more}")
    kwargs = {p: o.convert(getattr(args, o.dest)) for p, o in options.items()}
    return entry.load()(**kwargs)  # type: ignore[return-value]
