"""``pldp mechanism show NAME``: a mechanism's probabilities and its exact privacy check (exit 1
when the check fails)."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING

from pldp._text import text_table
from pldp.cli.options import Subparsers, add_mechanism_arguments, mechanism_from_args

if TYPE_CHECKING:
    from pldp.mechanisms import Mechanism

__all__ = ["add_commands"]


def _mechanism_json(mech: Mechanism) -> str:
    """Probabilities and privacy check of a mechanism as JSON."""
    p_star, q_star = mech.support
    rep = mech.privacy()
    payload = {
        "mechanism": repr(mech),
        "family": mech.family,
        "items": [
            {
                "item": str(lab),
                "epsilon": None if math.isinf(e) else float(e),
                "p_star": float(p),
                "q_star": float(q),
            }
            for lab, e, p, q in zip(mech.domain.labels, mech.budgets.epsilons, p_star, q_star, strict=True)
        ],
        "privacy": {"notion": rep.notion, "holds": rep.holds, "ldp_epsilon": rep.ldp_epsilon},
    }
    return json.dumps(payload, indent=2)


def _mechanism_show(args: argparse.Namespace) -> int:
    mech = mechanism_from_args(args.name, args)
    if args.json:
        print(_mechanism_json(mech))
        return 0
    p_star, q_star = mech.support
    rep = mech.privacy()
    head = [
        "item",
        "epsilon",
        "Q(x|x)" if mech.family == "direct" else "a (keep 1)",
        "Q(x|x')" if mech.family == "direct" else "b (raise 0)",
    ]
    rows = [
        [str(lab), "inf" if math.isinf(e) else f"{e:g}", f"{p:.6g}", f"{q:.6g}"]
        for lab, e, p, q in zip(mech.domain.labels, mech.budgets.epsilons, p_star, q_star, strict=True)
    ]
    print(repr(mech))
    print(text_table(rows, head))
    print()
    print(rep.summary())
    return 0 if rep.holds else 1


def add_commands(sub: Subparsers) -> None:
    """Add ``mechanism show`` to the ``pldp`` parser."""
    mech = sub.add_parser("mechanism", help="inspect a mechanism")
    mech_sub = mech.add_subparsers(dest="action", required=True)
    show = mech_sub.add_parser("show", help="probabilities and exact privacy check of a configuration")
    show.add_argument("name", help="krr, urr, iprr, rappor, oue or idue")
    add_mechanism_arguments(show)
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(func=_mechanism_show)
