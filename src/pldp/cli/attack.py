"""``pldp attack PROTOCOL``: fake users against one mechanism or protocol, their gain over seeded repeats.

Honest users at count level (``oracle.simulate``), fakes report by report
(:func:`pldp.attacks.fake_reports`); the gain of the ``r`` rarest items for every share of fake users,
strategy and estimation method, with the closed form of the unbiased estimate's gain and the gain
against the uniform mechanism at the same mean budget (:mod:`pldp.experiments.attacks`).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

from pldp._text import text_table
from pldp.cli.options import Subparsers
from pldp.errors import ParameterError

__all__ = ["add_commands"]

#: The oracles ``pldp attack`` takes (:data:`pldp.experiments.attacks.catalog.PROTOCOLS`).
NAMES = (
    "krr",
    "oue",
    "iprr",
    "idue",
    "febsf-krr",
    "febsf-oue",
    "rcf-krr",
    "rcf-oue",
    "apldp",
    "pbp-krr",
    "ppda",
    "mpldp",
)


def _settings(args: argparse.Namespace) -> list[dict[str, Any]]:
    from pldp.attacks import STRATEGIES

    for b in args.beta:
        if not 0 < b < 1:
            raise ParameterError(f"--beta must lie in (0, 1), got {b!r}")
    if args.n < 1 or args.d < 2 or not 1 <= args.targets < args.d:
        raise ParameterError(
            f"need --n >= 1, --d >= 2 and 1 <= --targets < --d; got {args.n}, {args.d}, {args.targets}"
        )
    strategies = list(STRATEGIES) if args.strategy == ["all"] else args.strategy
    unknown = sorted(set(strategies) - set(STRATEGIES))
    if unknown:
        raise ParameterError(f"--strategy: unknown {unknown}; choose from {', '.join(STRATEGIES)} or all")
    base = {"protocol": args.protocol, "n": args.n, "d": args.d, "zipf": args.zipf, "r": args.targets, "eps": args.eps}
    return [{**base, "beta": b, "strategies": strategies, "methods": args.method} for b in args.beta]


def _rows(summary: Any) -> list[list[str]]:
    from pldp.experiments.attacks import uniform_gain

    rows = []
    uniform: dict[float, float] = {}
    for _, r in summary.iterrows():
        beta = float(r["beta"])
        if beta not in uniform:
            uniform[beta] = uniform_gain(str(r["protocol"]), r)
        closed = "" if not math.isfinite(r["expected"]) else f"{r['expected']:.4f}" + ("" if r["exact"] else "*")
        times = f"x{r['mean'] / uniform[beta]:.2f}" if math.isfinite(r["mean"]) and uniform[beta] else ""
        failed = f"{int(r['failed'])}/{int(r['repeats'])}" if r["failed"] else ""
        rows.append(
            [
                f"{beta:g}",
                str(r["strategy"]),
                str(r["method"]),
                f"{r['mean']:.4f}",
                f"{r['se']:.4f}",
                closed,
                times,
                failed,
            ]
        )
    return rows


def _attack(args: argparse.Namespace) -> int:
    from pldp.experiments.attacks import check_closed_forms, gain_summary, run_repeat
    from pldp.experiments.runner import run_experiments
    from pldp.experiments.spec import Experiment

    if args.repeats < 2:
        raise ParameterError(f"--repeats must be >= 2 (a standard error needs two), got {args.repeats}")
    exp = Experiment("attack", args.protocol, "pldp attack", "", _settings(args), run_repeat, args.repeats)
    t0 = time.perf_counter()
    table = run_experiments(
        [exp], seed=args.seed, workers=args.workers, progress=not args.no_progress, trials=args.repeats
    )
    elapsed = time.perf_counter() - t0
    summary = gain_summary(table)
    if args.json:
        print(summary.to_json(orient="records", indent=2))
    else:
        head = (
            f"pldp attack {args.protocol}: n = {args.n:,}, d = {args.d}, Zipf({args.zipf:g}), the {args.targets} rarest"
        )
        print(f"{head} item(s) as targets, {args.repeats} repeats in {elapsed:.1f} s\n")
        cols = ["beta", "strategy", "method", "gain", "se", "closed form", "x uniform", "failed"]
        print(text_table(_rows(summary), cols))
        print("\nclosed form: of the unbiased estimate (* first order); x uniform: against the uniform mechanism")
        print("of the same family at the mean budget (closed form); failed: repeats where the method refused")
        checked = summary[(summary["exact"] == 1) & summary["expected"].notna()]
        if len(checked):
            print(f"\ncheck of the exact closed forms: {check_closed_forms(table).ours}")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "results.csv", index=False)
        (out / "summary.json").write_text(json.dumps(json.loads(summary.to_json(orient="records")), indent=2) + "\n")
        if len(args.beta) > 1:
            from pldp.experiments.plotting import Panel, draw

            panel = Panel("gain", "beta", "gain", f"{args.protocol}: gain of the targets", hue="strategy", logx=True,
                          logy=False, where={"method": args.method[0]})  # fmt: skip
            draw(table, out, [panel])
        print(f"\nwritten: {out.resolve()}")
    return 0


def add_commands(sub: Subparsers) -> None:
    """Add ``attack`` to the ``pldp`` parser."""
    p = sub.add_parser("attack", help="fake users against a mechanism or protocol: the gain of target items")
    p.add_argument("protocol", choices=NAMES, help="the oracle (personalized ones have mean budget 0.55)")
    p.add_argument("--beta", type=float, nargs="+", default=[0.01], help="shares of fake users m/(n+m)")
    p.add_argument("--strategy", nargs="+", default=["mga"], help="strategies of pldp.attacks.fake_reports, or all")
    p.add_argument("--method", nargs="+", default=["unbiased"], help="estimation methods (those the oracle has)")
    p.add_argument("--n", type=int, default=1_000_000, help="honest users (default 10^6)")
    p.add_argument("--d", type=int, default=100, help="items (default 100)")
    p.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of the honest users' items")
    p.add_argument("--targets", type=int, default=1, help="the number r of rarest items promoted")
    p.add_argument("--eps", type=float, default=0.55, help="budget of krr and oue (default 0.55)")
    p.add_argument("--repeats", type=int, default=20, help="seeded repeats (default 20)")
    p.add_argument("--seed", type=int, default=20240601, help="root seed")
    p.add_argument("--workers", type=int, default=1, help="local Dask workers (default 1: serial)")
    p.add_argument("--out", default=None, help="directory for results.csv, summary.json and a figure")
    p.add_argument("--json", action="store_true", help="the summary as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_attack)
