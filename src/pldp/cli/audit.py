"""``pldp audit``: audit a spec or a mechanism from the command line (exit 1 when a pair is flagged)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from pldp.cli.options import Subparsers, add_mechanism_arguments, mechanism_from_args
from pldp.errors import ParameterError

__all__ = ["add_commands"]


def _target(args: argparse.Namespace) -> Any:
    """The spec file's target (its Python client, or the JS client with ``--js``), or the mechanism
    named as in ``pldp mechanism show``."""
    path = Path(args.target)
    if path.suffix == ".json" or path.exists():
        if not path.exists():
            raise ParameterError(f"no spec file {path}")
        text = path.read_text()
        if args.js:
            from pldp.audit.jsclient import JSClient

            return JSClient(text)
        from pldp.deploy import Spec

        return Spec.from_json(text)
    if args.js:
        raise ParameterError("--js audits the JS client of a spec: give a spec.json")
    return mechanism_from_args(args.target, args)


def _audit(args: argparse.Namespace) -> int:
    from pldp.audit.run import audit

    target = _target(args)
    res = audit(
        target,
        pairs=args.pairs,
        trials=args.trials,
        alpha=args.alpha,
        attack=args.attack,
        rng=np.random.default_rng(args.seed),
        scheduler=args.scheduler,
        workers=args.workers,
        progress=not args.no_progress,
    )
    if hasattr(target, "close"):
        target.close()
    print(res.summary())
    print(res.table(max_rows=args.max_rows))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "audit.json").write_text(json.dumps(res.to_json(), indent=2) + "\n")
        (out / "audit.txt").write_text(res.summary() + "\n\n" + res.table() + "\n")
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no figure (pip install 'pldp[experiments]')")
        else:
            ax = res.plot()
            ax.figure.tight_layout()
            ax.figure.savefig(out / "audit.svg")
            plt.close(ax.figure)
        print(f"wrote {out}/audit.json, audit.txt and audit.svg")
    return 1 if res.flagged else 0


def add_commands(sub: Subparsers) -> None:
    """Add ``audit`` to the ``pldp`` parser."""
    p = sub.add_parser(
        "audit",
        help="empirical privacy audit of a spec or a mechanism (exit 1 when a pair leaks more than claimed)",
        description="Run the sampler many times on pairs of inputs and bound epsilon from below with the "
        "optimal test of each pair (or LDP-Auditor's attacks). Prints one row per pair: claimed, exact and "
        "audited epsilon. Exit 1 when an audited bound exceeds its claim.",
    )
    p.add_argument("target", help="a campaign spec.json, or a mechanism name as in 'pldp mechanism show'")
    p.add_argument("--trials", type=int, default=10**6, help="reports per input (default 10^6)")
    p.add_argument("--pairs", type=int, default=None, help="audit a random sample of this many default pairs")
    p.add_argument("--attack", default="optimal", choices=["optimal", "ldp-auditor"], help="the test (default optimal)")
    p.add_argument("--alpha", type=float, default=0.01, help="1 - joint confidence of the bounds (default 0.01)")
    p.add_argument("--seed", type=int, default=None, help="seed of the draws (default: fresh)")
    p.add_argument("--js", action="store_true", help="audit the JS client of the spec, run in Node")
    p.add_argument("--out", default=None, metavar="DIR", help="write audit.json, audit.txt and the figure audit.svg")
    p.add_argument("--max-rows", type=int, default=40, help="rows printed (flagged first; default 40)")
    p.add_argument("--scheduler", default=None, help="address of a Dask scheduler to spread the draws over")
    p.add_argument("--workers", type=int, default=None, help="local Dask workers (default: this process)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_mechanism_arguments(p)
    p.set_defaults(func=_audit)
