"""Options shared by several ``pldp`` commands, and the mechanism they name.

``pldp mechanism show`` and ``pldp audit`` name a mechanism the same way: a name (``krr``,
``urr``, ``iprr``, ``rappor``, ``oue`` or ``idue``; the memoized chains ``lgrr``, ``loue``,
``losue``, ``lsue``, ``lsoue``, ``liprr`` and ``lidue``) and the options of
:func:`add_mechanism_arguments`. :func:`mechanism_from_args` builds that mechanism, so a command
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
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from pldp.errors import ParameterError

if TYPE_CHECKING:
    from pldp.mechanisms import Mechanism

__all__ = [
    "LIST_OPTIONS",
    "MECHANISM_NAMES",
    "add_mechanism_arguments",
    "attach_list_values",
    "mechanism_from_args",
    "parse_budgets",
    "round_number",
]

#: The subparsers of a command group: each command module adds its commands to it.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

#: The mechanisms :func:`mechanism_from_args` builds.
MECHANISM_NAMES = (
    "krr",
    "urr",
    "iprr",
    "rappor",
    "oue",
    "idue",
    "lgrr",
    "loue",
    "losue",
    "lsue",
    "lsoue",
    "liprr",
    "lidue",
)


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


def add_mechanism_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options that configure a mechanism (``mechanism show``, ``audit``) to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        Gets ``--eps``, ``--eps-perm``, ``--d``, ``--sensitive``, ``--budgets``, ``--perm-budgets``,
        ``--model`` and ``--pair-rule``, the options :func:`mechanism_from_args` reads.
    """
    parser.add_argument(
        "--eps", type=float, default=None, help="budget (krr, urr, rappor, oue; eps_1 of lgrr, loue, ...)"
    )
    parser.add_argument(
        "--eps-perm", type=float, default=None, help="lgrr, loue, losue, lsue, lsoue: eps_perm (any number of reports)"
    )
    parser.add_argument("--d", type=int, default=None, help="domain size (krr, rappor, oue)")
    parser.add_argument("--sensitive", default=None, help="urr: comma-separated 0/1 flags per item")
    parser.add_argument("--budgets", default=None, help="iprr/idue: comma-separated budgets, inf = non-sensitive")
    parser.add_argument(
        "--perm-budgets", default=None, help="liprr/lidue: eps_perm per item (--budgets: eps_1 per item)"
    )
    parser.add_argument("--model", default="opt0", choices=["opt0", "opt1", "opt2"], help="idue model")
    parser.add_argument(
        "--pair-rule", default="min", choices=["min", "avg"], help="idue notion: MinID-LDP (min) or AvgID-LDP (avg)"
    )


def mechanism_from_args(name: str, args: argparse.Namespace) -> Mechanism:
    """The mechanism ``name`` configured by the options of :func:`add_mechanism_arguments`.

    Parameters
    ----------
    name : str
        ``krr``, ``urr``, ``iprr``, ``rappor``, ``oue`` or ``idue`` (any case).
    args : argparse.Namespace
        Parsed options of a parser given :func:`add_mechanism_arguments`: ``eps`` and ``d``
        (krr, rappor, oue), ``eps`` and ``sensitive`` (urr: comma-separated 0/1 flags),
        ``budgets`` (iprr, idue: see :func:`parse_budgets`), ``model`` and ``pair_rule`` (idue,
        lidue); ``eps_perm``, ``eps`` (eps_1) and ``d`` (lgrr, loue, losue, lsue, lsoue);
        ``perm_budgets`` and ``budgets`` (eps_perm and eps_1 per item: liprr, lidue).

    Returns
    -------
    Mechanism
        The configured mechanism.

    Raises
    ------
    ParameterError
        An unknown name, a missing option, or a bad budget.
    """
    import pldp

    key = name.lower()
    if key in ("krr", "rappor", "oue"):
        if args.eps is None or args.d is None:
            raise ParameterError(f"{key} needs --eps and --d")
        makers: dict[str, Callable[[float, int], Mechanism]] = {"krr": pldp.KRR, "rappor": pldp.RAPPOR, "oue": pldp.OUE}
        return makers[key](args.eps, args.d)
    if key == "urr":
        if args.eps is None or args.sensitive is None:
            raise ParameterError("urr needs --eps and --sensitive (comma-separated 0/1 flags)")
        mask = np.array([s.strip() in ("1", "true", "yes") for s in args.sensitive.split(",")])
        return pldp.URR(args.eps, mask)
    if key in ("iprr", "idue"):
        if args.budgets is None:
            raise ParameterError(f"{key} needs --budgets, e.g. --budgets 0.1,0.5,1.0,inf,inf")
        budgets = pldp.ItemBudgets.from_array(parse_budgets(args.budgets))
        return pldp.IPRR(budgets) if key == "iprr" else pldp.IDUE(budgets, model=args.model, pair_rule=args.pair_rule)
    chains: dict[str, Callable[[float, float, int], Mechanism]] = {
        "lgrr": pldp.LGRR, "loue": pldp.LOUE, "losue": pldp.LOSUE, "lsue": pldp.LSUE, "lsoue": pldp.LSOUE,
    }  # fmt: skip
    if key in chains:
        if args.eps_perm is None or args.eps is None or args.d is None:
            raise ParameterError(f"{key} needs --eps-perm (any number of reports), --eps (one report) and --d")
        return chains[key](args.eps_perm, args.eps, args.d)
    if key in ("liprr", "lidue"):
        if args.perm_budgets is None or args.budgets is None:
            raise ParameterError(
                f"{key} needs --perm-budgets (eps_perm per item) and --budgets (eps_1 per item), e.g. "
                "--perm-budgets 1,2,4 --budgets 0.25,0.5,1"
            )
        perm = pldp.ItemBudgets.from_array(parse_budgets(args.perm_budgets))
        one = pldp.ItemBudgets.from_array(parse_budgets(args.budgets))
        if key == "liprr":
            return pldp.LIPRR(perm, one)
        return pldp.LIDUE(perm, one, model=args.model, pair_rule=args.pair_rule)
    raise ParameterError(f"unknown mechanism {name!r}: {', '.join(MECHANISM_NAMES)}")
