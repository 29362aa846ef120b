"""Command-line interface.

``pldp demo``                      the Fig. 1 comparison of KRR, URR and IPRR
``pldp reproduce PAPER [options]`` run a paper's experiments: tables, figures, report
``pldp datasets list``             the bundled datasets
``pldp mechanism show NAME ...``   a mechanism's probabilities and its exact privacy check
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from pldp import __version__
from pldp.errors import PLDPError

__all__ = ["PAPERS", "build_parser", "main"]

#: Papers with an experiment module ``pldp.experiments.<name>``.
PAPERS = ("iprr", "idue", "febsf", "mpldp")


def _demo(args: argparse.Namespace) -> int:
    from pldp.demo import run_demo

    print(run_demo(n=args.n, trials=args.trials, seed=args.seed))
    return 0


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*(str(c) for c in row)) for row in rows]
    return "\n".join(lines)


def _reproduce(args: argparse.Namespace) -> int:
    try:
        from pldp.experiments.runner import run_experiments, write_outputs
    except ImportError as exc:  # pragma: no cover - extras missing
        print(f"pldp reproduce needs the experiments extra: pip install 'pldp[experiments]' ({exc})", file=sys.stderr)
        return 2
    if args.kosarak:
        os.environ["PLDP_KOSARAK"] = str(Path(args.kosarak).resolve())
    papers = PAPERS if args.paper == "all" else (args.paper,)
    experiments = []
    for paper in papers:
        module = importlib.import_module(f"pldp.experiments.{paper}")
        experiments += list(module.experiments())
    out = Path(args.out)
    t0 = time.perf_counter()
    table = run_experiments(
        experiments,
        quick=args.quick,
        trials=args.trials,
        seed=args.seed,
        workers=args.workers,
        scheduler=args.scheduler,
        progress=not args.no_progress,
        path=args.path,
    )
    elapsed = time.perf_counter() - t0
    report, results = write_outputs(experiments, table, out, elapsed=elapsed)
    scale = "quick" if args.quick else "full"
    head = f"pldp reproduce {args.paper} ({scale} scale, {args.path} path)"
    print(f"{head}: {len(table):,} result rows in {elapsed:.1f} s\n")
    for paper in papers:
        rows = []
        for exp, verdict, figs in results:
            if exp.paper != paper:
                continue
            state = "-" if verdict is None else ("agrees" if verdict.agree else "DIFFERS")
            ours = "" if verdict is None else verdict.ours
            rows.append([exp.name, state, ours[:90] + ("..." if len(ours) > 90 else ""), str(len(figs))])
        print(f"== {paper.upper()} ==")
        print(_table(rows, ["experiment", "claim", "ours", "figures"]))
        print()
    print(f"tables:  {out.resolve()}/<paper>/results.csv and results.parquet")
    print(f"figures: {out.resolve()}/<paper>/*.png")
    print(f"report:  {report.resolve()}")
    return 0


def _datasets_list(args: argparse.Namespace) -> int:
    from pldp.datasets.real import list_datasets

    infos = list_datasets()
    if args.json:
        print(json.dumps([vars(i) if not hasattr(i, "_asdict") else i._asdict() for i in infos], indent=2))
        return 0
    rows = [[i.name, f"{i.users:,}", f"{i.items:,}", f"{i.records:,}", i.source] for i in infos]
    print(_table(rows, ["dataset", "users", "items", "records", "source"]))
    return 0


def _parse_budgets(text: str) -> list[float | None]:
    out: list[float | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        out.append(None if part in ("inf", "none", "ns") else float(part))
    return out


def _mechanism_show(args: argparse.Namespace) -> int:
    import pldp

    name = args.name.lower()
    if name in ("krr", "rappor", "oue"):
        if args.eps is None or args.d is None:
            raise SystemExit(f"{name} needs --eps and --d")
        mech: Any = {"krr": pldp.KRR, "rappor": pldp.RAPPOR, "oue": pldp.OUE}[name](args.eps, args.d)
    elif name == "urr":
        if args.eps is None or args.sensitive is None:
            raise SystemExit("urr needs --eps and --sensitive (comma-separated 0/1 flags)")
        mask = np.array([s.strip() in ("1", "true", "yes") for s in args.sensitive.split(",")])
        mech = pldp.URR(args.eps, mask)
    elif name in ("iprr", "idue"):
        if args.budgets is None:
            raise SystemExit(f"{name} needs --budgets, e.g. --budgets 0.1,0.5,1.0,inf,inf")
        budgets = pldp.ItemBudgets.from_array(_parse_budgets(args.budgets))
        mech = pldp.IPRR(budgets) if name == "iprr" else pldp.IDUE(budgets, model=args.model, pair_rule=args.pair_rule)
    else:
        raise SystemExit(f"unknown mechanism {args.name!r}: krr, urr, iprr, rappor, oue, idue")
    p_star, q_star = mech.support
    rep = mech.privacy()
    eps = mech.budgets.epsilons
    if args.json:
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
                for lab, e, p, q in zip(mech.domain.labels, eps, p_star, q_star, strict=True)
            ],
            "privacy": {"notion": rep.notion, "holds": rep.holds, "ldp_epsilon": rep.ldp_epsilon},
        }
        print(json.dumps(payload, indent=2))
        return 0
    head = [
        "item",
        "epsilon",
        "Q(x|x)" if mech.family == "direct" else "a (keep 1)",
        "Q(x|x')" if mech.family == "direct" else "b (raise 0)",
    ]
    rows = [
        [str(lab), "inf" if math.isinf(e) else f"{e:g}", f"{p:.6g}", f"{q:.6g}"]
        for lab, e, p, q in zip(mech.domain.labels, eps, p_star, q_star, strict=True)
    ]
    print(repr(mech))
    print(_table(rows, head))
    print()
    print(rep.summary())
    return 0 if rep.holds else 1


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

    rep = sub.add_parser("reproduce", help="run a paper's experiments: tidy tables, figures and a report")
    rep.add_argument("paper", choices=[*PAPERS, "all"])
    rep.add_argument("--quick", action="store_true", help="reduced grids and repeats (minutes, not the paper's scale)")
    rep.add_argument("--trials", type=int, default=None, help="repeats per setting (default: the paper's)")
    rep.add_argument("--out", default="results", help="output directory (default ./results)")
    rep.add_argument("--workers", type=int, default=None, help="local Dask workers (default: one per core; 1: serial)")
    rep.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler")
    rep.add_argument("--seed", type=int, default=20240601, help="root seed")
    rep.add_argument(
        "--path",
        choices=["count", "per-user"],
        default="count",
        help="exact count-level simulation (default) or perturb and tally every user (same distribution; "
        "much slower for unary encoding on large domains, e.g. the Kosarak item-sets)",
    )
    rep.add_argument("--kosarak", default=None, help="path to the full kosarak.dat (default: the bundled prefix)")
    rep.add_argument("--no-progress", action="store_true", help="no progress bar")
    rep.set_defaults(func=_reproduce)

    ds = sub.add_parser("datasets", help="bundled datasets")
    ds_sub = ds.add_subparsers(dest="action", required=True)
    ds_list = ds_sub.add_parser("list", help="users, items, records and source of each dataset")
    ds_list.add_argument("--json", action="store_true")
    ds_list.set_defaults(func=_datasets_list)

    mech = sub.add_parser("mechanism", help="inspect a mechanism")
    mech_sub = mech.add_subparsers(dest="action", required=True)
    show = mech_sub.add_parser("show", help="probabilities and exact privacy check of a configuration")
    show.add_argument("name", help="krr, urr, iprr, rappor, oue or idue")
    show.add_argument("--eps", type=float, default=None, help="budget (krr, urr, rappor, oue)")
    show.add_argument("--d", type=int, default=None, help="domain size (krr, rappor, oue)")
    show.add_argument("--sensitive", default=None, help="urr: comma-separated 0/1 flags per item")
    show.add_argument("--budgets", default=None, help="iprr/idue: comma-separated budgets, inf = non-sensitive")
    show.add_argument("--model", default="opt0", choices=["opt0", "opt1", "opt2"], help="idue model")
    show.add_argument(
        "--pair-rule", default="min", choices=["min", "avg"], help="idue notion: MinID-LDP (min) or AvgID-LDP (avg)"
    )
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(func=_mechanism_show)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pldp`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except PLDPError as exc:  # bad input: one line naming the bad value, no traceback
        parser.exit(2, f"pldp: error: {exc}\n")


if __name__ == "__main__":
    sys.exit(main())
