"""``pldp mechanism show NAME``: a mechanism's probabilities, its exact privacy check (exit 1
when the check fails) and its robustness to fake users (:mod:`pldp.robustness`)."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING

from pldp._text import text_table
from pldp.cli.options import MECHANISM_NAMES, Subparsers, add_mechanism_arguments, mechanism_from_args

if TYPE_CHECKING:
    from pldp.mechanisms import Mechanism

__all__ = ["add_commands"]


def _robustness(mech: Mechanism) -> tuple[str, list[tuple[str, float, float]]]:
    """The uniform mechanism compared with, and per item: the per-fake gain and its ratio to the uniform one's."""
    from pldp.robustness import amplification, per_fake_gain, uniform_counterpart

    gains, ratio = per_fake_gain(mech), amplification(mech)
    items = [(str(lab), float(g), float(a)) for lab, g, a in zip(mech.domain.labels, gains, ratio, strict=True)]
    return repr(uniform_counterpart(mech)), items


def _mechanism_json(mech: Mechanism) -> str:
    """Probabilities, privacy check and robustness of a mechanism as JSON."""
    p_star, q_star = mech.support
    rep = mech.privacy()
    uniform, items = _robustness(mech)
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
        "robustness": {
            "uniform": uniform,
            "items": [{"item": lab, "per_fake_gain": g, "amplification": a} for lab, g, a in items],
        },
    }
    return json.dumps(payload, indent=2)


def _mechanism_show(args: argparse.Namespace) -> int:
    mech = mechanism_from_args(args.name, args)
    if args.json:
        print(_mechanism_json(mech))
        return 0
    p_star, q_star = mech.support
    rep = mech.privacy()
    head = ["item", "epsilon", *mech.support_names]
    rows = [
        [str(lab), "inf" if math.isinf(e) else f"{e:g}", f"{p:.6g}", f"{q:.6g}"]
        for lab, e, p, q in zip(mech.domain.labels, mech.budgets.epsilons, p_star, q_star, strict=True)
    ]
    print(repr(mech))
    print(text_table(rows, head))
    print()
    print(rep.summary())
    uniform, items = _robustness(mech)
    print()
    print("robustness to fake users: one fake report moves an item's unbiased estimate by up to")
    print(f"(1 - q)/(p - q) / n; against the uniform mechanism at the mean budget, {uniform}:")
    print(
        text_table([[lab, f"{g:.4g}", f"x{a:.2f}"] for lab, g, a in items], ["item", "per-fake gain x n", "x uniform"])
    )
    return 0 if rep.holds else 1


def add_commands(sub: Subparsers) -> None:
    """Add ``mechanism show`` to the ``pldp`` parser."""
    mech = sub.add_parser("mechanism", help="inspect a mechanism")
    mech_sub = mech.add_subparsers(dest="action", required=True)
    show = mech_sub.add_parser("show", help="probabilities and exact privacy check of a configuration")
    show.add_argument("name", help=f"one of {', '.join(MECHANISM_NAMES)}")
    add_mechanism_arguments(show)
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(func=_mechanism_show)
