"""``pldp demo`` and ``pldp demo-collection``: the Fig. 1 comparison, offline and through a collector."""

from __future__ import annotations

import argparse

from pldp.cli.options import Subparsers

__all__ = ["add_commands"]


def _demo(args: argparse.Namespace) -> int:
    from pldp.demo import run_demo

    print(run_demo(n=args.n, trials=args.trials, seed=args.seed))
    return 0


def _demo_collection(args: argparse.Namespace) -> int:
    from pldp.service.demo import run_collection_demo

    print(run_collection_demo(n=args.n, batch=args.batch, seed=args.seed))
    return 0


def add_commands(sub: Subparsers) -> None:
    """Add ``demo`` and ``demo-collection`` to the ``pldp`` parser."""
    demo = sub.add_parser("demo", help="compare KRR, URR and IPRR on the Fig. 1 budgets of Li et al.")
    demo.add_argument("--n", type=int, default=100_000, help="number of users (default 100,000)")
    demo.add_argument("--trials", type=int, default=1000, help="simulated repeats (default 1000)")
    demo.add_argument("--seed", type=int, default=2024, help="root seed (default 2024)")
    demo.set_defaults(func=_demo)
    dc = sub.add_parser("demo-collection", help="a campaign end to end through a real collector (service extra)")
    dc.add_argument("--n", type=int, default=100_000, help="respondents (default 100,000)")
    dc.add_argument("--batch", type=int, default=1_000, help="reports per request (default 1,000)")
    dc.add_argument("--seed", type=int, default=2024, help="seed of the answers (default 2024)")
    dc.set_defaults(func=_demo_collection)
