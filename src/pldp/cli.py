"""Command-line interface: ``pldp demo``."""

from __future__ import annotations

import argparse
import sys

from pldp import __version__

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    from pldp.demo import run_demo

    print(run_demo(n=args.n, trials=args.trials, seed=args.seed))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pldp`` command."""
    parser = argparse.ArgumentParser(prog="pldp", description="Personalized local differential privacy.")
    parser.add_argument("--version", action="version", version=f"pldp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compare KRR, URR and IPRR on the Fig. 1 budgets of Li et al.")
    demo.add_argument("--n", type=int, default=100_000, help="number of users (default 100,000)")
    demo.add_argument("--trials", type=int, default=1000, help="simulated repeats (default 1000)")
    demo.add_argument("--seed", type=int, default=2024, help="root seed (default 2024)")
    demo.set_defaults(func=_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pldp`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
