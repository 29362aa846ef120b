"""``pldp audit``: audit a spec or a mechanism from the command line (exit 1 when a pair is flagged).

With ``--rounds 1,2,5,10,30`` it plays the audit over time instead
(:func:`pldp.audit.audit_rounds`): ``r`` reports of one device, fresh and memoized, for each ``r``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from pldp.cli.options import MECHANISM_NAMES, Subparsers, add_mechanism_arguments, mechanism_from_args
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
        from pldp.deploy import Spec

        spec = Spec.from_json(text)
        if args.js:
            from pldp.audit.jsclient import JSClient

            return JSClient(text)
        return spec
    if args.js:
        raise ParameterError("--js audits the JS client of a spec: give a spec.json")
    return mechanism_from_args(args.target, args)


def _report(res: Any, table: str, out_dir: str | None, name: str) -> int:
    """Print the summary and ``table``; with ``out_dir``, write ``name``.json, .txt and .svg there.
    Exit 1 when a row is flagged."""
    print(res.summary())
    print(table)
    if out_dir:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.json").write_text(json.dumps(res.to_json(), indent=2) + "\n")
        (out / f"{name}.txt").write_text(res.summary() + "\n\n" + res.table() + "\n")
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no figure (pip install 'pldp[experiments]')")
        else:
            ax = res.plot()
            ax.figure.tight_layout()
            ax.figure.savefig(out / f"{name}.svg")
            plt.close(ax.figure)
        print(f"wrote {out}/{name}.json, {name}.txt and {name}.svg")
    return 1 if res.flagged else 0


def _pair(text: str | None) -> tuple[int, int]:
    if text is None:
        return (0, 1)
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
        raise ParameterError(f"--pair takes two item indices, e.g. --pair 0,1; got {text!r}")
    return int(parts[0]), int(parts[1])


def _audit_rounds(args: argparse.Namespace) -> int:
    """``pldp audit MECHANISM --rounds ...``: the audit over time."""
    from pldp.audit.longitudinal import audit_rounds, parse_rounds

    rounds = parse_rounds(args.rounds)
    if args.js or Path(args.target).suffix == ".json" or Path(args.target).exists():
        raise ParameterError(
            "--rounds audits a mechanism named on the command line (e.g. pldp audit lgrr --eps-perm 2 --eps 0.5 "
            "--d 4 --rounds 1,2,5,10,30), not a spec or a client"
        )
    given = {
        "--pairs": args.pairs is not None,
        "--attack": args.attack != "optimal",
        "--scheduler": args.scheduler is not None,
        "--workers": args.workers is not None,
    }
    for flag in (f for f, on in given.items() if on):
        raise ParameterError(f"{flag} does not apply to --rounds (the audit over time runs one pair, in this process)")
    mech = mechanism_from_args(args.target, args)
    res = audit_rounds(
        mech,
        rounds,
        pair=_pair(args.pair),
        trials=100_000 if args.trials is None else args.trials,
        alpha=args.alpha,
        rng=np.random.default_rng(args.seed),
    )
    return _report(res, res.table(), args.out, "rounds")


def _audit(args: argparse.Namespace) -> int:
    from pldp.audit.run import audit

    if args.rounds is not None:
        return _audit_rounds(args)
    if args.pair is not None:
        raise ParameterError("--pair chooses the items of --rounds; without it, --pairs samples the default pairs")
    target = _target(args)
    if getattr(getattr(target, "spec", target), "free_text", False):  # a free-text spec, or its JS client
        return _audit_free_text(target, args)
    if args.answers is not None:
        raise ParameterError(
            "--answers chooses the two answers of a free-text spec's audit; this target lists its answers"
        )
    res = audit(
        target,
        pairs=args.pairs,
        trials=10**6 if args.trials is None else args.trials,
        alpha=args.alpha,
        attack=args.attack,
        rng=np.random.default_rng(args.seed),
        scheduler=args.scheduler,
        workers=args.workers,
        progress=not args.no_progress,
    )
    if hasattr(target, "close"):
        target.close()
    return _report(res, res.table(max_rows=args.max_rows), args.out, "audit")


def _audit_free_text(target: Any, args: argparse.Namespace) -> int:
    """A free-text spec's audit (:func:`pldp.audit.audit_heavy`): its Python client's reports of two answers
    (or its JS client's, ``--js``), the optimal test of the pair. Exit 1 when the audited epsilon exceeds
    the claim."""
    from pldp.audit.heavy import audit_heavy

    text = "yes,no" if args.answers is None else args.answers
    if "," not in text:
        raise ParameterError(
            f"--answers takes two answers separated by a comma, e.g. --answers spam,eggs; got {text!r}"
        )
    a, b = text.split(",", 1)
    trials = 200_000 if args.trials is None else args.trials
    try:
        res = audit_heavy(target, a, b, trials, np.random.default_rng(args.seed), alpha=args.alpha)
    finally:
        if hasattr(target, "close"):
            target.close()
    who = "the JS client in Node" if hasattr(target, "close") else "the device client"
    verdict = "within the claim" if res.holds else "OVER THE CLAIM"
    print(
        f"free-text spec {getattr(target, 'spec', target).id}: {trials:,} reports of each answer through {who}; "
        f"the optimal test fired {res.fired[0]:,} and {res.fired[1]:,} times: audited epsilon >= {res.audited:.3f} "
        f"(confidence {1 - args.alpha:.0%}), claimed {res.claimed:g}: {verdict}"
    )
    return 0 if res.holds else 1


def add_commands(sub: Subparsers) -> None:
    """Add ``audit`` to the ``pldp`` parser."""
    p = sub.add_parser(
        "audit",
        help="empirical privacy audit of a spec or a mechanism (exit 1 when a pair leaks more than claimed)",
        description="Run the sampler many times on pairs of inputs and bound epsilon from below with the "
        "optimal test of each pair (or LDP-Auditor's attacks). Prints one row per pair: claimed, exact and "
        "audited epsilon. Exit 1 when an audited bound exceeds its claim. With --rounds, the audit over time: R "
        "reports of one device (same value, and a value that changes once), fresh and with the chain's memo.",
    )
    p.add_argument("target", help=f"a campaign spec.json, or a mechanism: {', '.join(MECHANISM_NAMES)}")
    p.add_argument(
        "--trials",
        type=int,
        default=None,
        help="reports per input (default 10^6; with --rounds, devices per history: 10^5)",
    )
    p.add_argument("--pairs", type=int, default=None, help="audit a random sample of this many default pairs")
    p.add_argument("--attack", default="optimal", choices=["optimal", "ldp-auditor"], help="the test (default optimal)")
    p.add_argument("--alpha", type=float, default=0.01, help="1 - joint confidence of the bounds (default 0.01)")
    p.add_argument("--seed", type=int, default=None, help="seed of the draws (default: fresh)")
    p.add_argument("--js", action="store_true", help="audit the JS client of the spec, run in Node")
    p.add_argument(
        "--answers",
        default=None,
        metavar="A,B",
        help="a free-text spec: the two answers whose reports are told apart (default yes,no)",
    )
    p.add_argument("--out", default=None, metavar="DIR", help="write audit.json, audit.txt and the figure audit.svg")
    p.add_argument("--max-rows", type=int, default=40, help="rows printed (flagged first; default 40)")
    p.add_argument("--scheduler", default=None, help="address of a Dask scheduler to spread the draws over")
    p.add_argument("--workers", type=int, default=None, help="local Dask workers (default: this process)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--rounds",
        default=None,
        metavar="R,R,...",
        help="the audit over time: R reports of one device, fresh and memoized, e.g. --rounds 1,2,5,10,30",
    )
    p.add_argument("--pair", default=None, metavar="A,B", help="with --rounds: the two items (default 0,1)")
    add_mechanism_arguments(p)
    p.set_defaults(func=_audit)
