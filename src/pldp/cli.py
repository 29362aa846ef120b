"""Command-line interface.

``pldp demo``                      the Fig. 1 comparison of KRR, URR and IPRR
``pldp demo-collection``           the same campaign through a real collector, over HTTP
``pldp reproduce PAPER [options]`` run a paper's experiments: tables, figures, report
``pldp datasets list``             the bundled datasets
``pldp mechanism show NAME ...``   a mechanism's probabilities and its exact privacy check
``pldp aggregate SPEC FILES...``   the estimate of a campaign's report files, tallied on Dask
``pldp audit SPEC|MECHANISM``      empirical privacy audit (exit 1 when a pair leaks more than claimed)
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pldp import __version__
from pldp._text import text_table
from pldp.errors import ParameterError, PLDPError

__all__ = ["PAPERS", "build_parser", "main"]

#: Papers with an experiment module ``pldp.experiments.<name>``.
PAPERS = ("iprr", "idue", "febsf", "mpldp")


def _demo_collection(args: argparse.Namespace) -> int:
    from pldp.service.demo import run_collection_demo

    print(run_collection_demo(n=args.n, batch=args.batch, seed=args.seed))
    return 0


def _demo(args: argparse.Namespace) -> int:
    from pldp.demo import run_demo

    print(run_demo(n=args.n, trials=args.trials, seed=args.seed))
    return 0


#: Papers whose experiments read Kosarak, and so take ``--kosarak``.
KOSARAK_PAPERS = ("iprr", "idue")
#: Width of the "ours" column of the summary tables; longer text wraps onto further lines.
OURS_WIDTH = 72


def _experiments(papers: tuple[str, ...], kosarak: str | None) -> list[Any]:
    """The experiments of ``papers``; the Kosarak file, if given, travels in their settings."""
    source = None
    if kosarak:
        path = Path(kosarak).expanduser().resolve()
        if not path.is_file():
            raise ParameterError(f"--kosarak: no such file: {str(path)!r}")
        source = str(path)
    experiments = []
    for paper in papers:
        module = importlib.import_module(f"pldp.experiments.{paper}")
        options = {"kosarak": source} if paper in KOSARAK_PAPERS else {}
        experiments += list(module.experiments(**options))
    return experiments


def _summary(paper: str, results: list[Any], quick: bool, trials: int | None) -> str:
    """The table of one paper: each experiment's verdict (or the full-scale one), numbers, figures."""
    rows = []
    for exp, check, figs in results:
        if exp.paper != paper:
            continue
        verdict = exp.verdict(check, quick, trials)
        if check is None:
            ours = ""
        elif exp.decides(quick, trials):
            ours = check.ours
        else:
            ours = f"full scale: {exp.full_ours} (REPRODUCTION.md)"
        if verdict.startswith("differs"):
            verdict = "DIFFERS" + verdict.removeprefix("differs")
        rows.append([exp.name, verdict, ours, str(len(figs))])
    return text_table(rows, ["experiment", "claim", "ours", "figures"], wrap={2: OURS_WIDTH})


def _reproduce(args: argparse.Namespace) -> int:
    try:
        from pldp.experiments.runner import run_experiments, write_outputs
    except ImportError as exc:  # pragma: no cover - extras missing
        print(f"pldp reproduce needs the experiments extra: pip install 'pldp[experiments]' ({exc})", file=sys.stderr)
        return 2
    papers = PAPERS if args.paper == "all" else (args.paper,)
    experiments = _experiments(papers, args.kosarak)
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
    report, results = write_outputs(experiments, table, out, elapsed=elapsed, quick=args.quick, trials=args.trials)
    scale = "quick" if args.quick else "full"
    head = f"pldp reproduce {args.paper} ({scale} scale, {args.path} path)"
    print(f"{head}: {len(table):,} result rows in {elapsed:.1f} s\n")
    for paper in papers:
        print(f"== {paper.upper()} ==")
        print(_summary(paper, results, args.quick, args.trials))
        print()
    if any(not exp.decides(args.quick, args.trials) for exp, check, _ in results if check is not None):
        print("undecided: too few repeats at this scale to decide the claim; the full-scale verdict is shown.\n")
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
    print(text_table(rows, ["dataset", "users", "items", "records", "source"]))
    return 0


def _parse_budgets(text: str) -> list[float | None]:
    """``--budgets``: comma-separated numbers, ``inf`` (or ``none``, ``ns``) for a non-sensitive item."""
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


def add_mechanism_options(parser: argparse.ArgumentParser) -> None:
    """The options that name a mechanism's configuration (``mechanism show``, ``audit``)."""
    parser.add_argument("--eps", type=float, default=None, help="budget (krr, urr, rappor, oue)")
    parser.add_argument("--d", type=int, default=None, help="domain size (krr, rappor, oue)")
    parser.add_argument("--sensitive", default=None, help="urr: comma-separated 0/1 flags per item")
    parser.add_argument("--budgets", default=None, help="iprr/idue: comma-separated budgets, inf = non-sensitive")
    parser.add_argument("--model", default="opt0", choices=["opt0", "opt1", "opt2"], help="idue model")
    parser.add_argument(
        "--pair-rule", default="min", choices=["min", "avg"], help="idue notion: MinID-LDP (min) or AvgID-LDP (avg)"
    )


def _mechanism(args: argparse.Namespace) -> Any:
    """The mechanism ``pldp mechanism show`` describes, from its options."""
    import pldp

    name = args.name.lower()
    if name in ("krr", "rappor", "oue"):
        if args.eps is None or args.d is None:
            raise ParameterError(f"{name} needs --eps and --d")
        makers: dict[str, Callable[[float, int], Any]] = {"krr": pldp.KRR, "rappor": pldp.RAPPOR, "oue": pldp.OUE}
        return makers[name](args.eps, args.d)
    if name == "urr":
        if args.eps is None or args.sensitive is None:
            raise ParameterError("urr needs --eps and --sensitive (comma-separated 0/1 flags)")
        mask = np.array([s.strip() in ("1", "true", "yes") for s in args.sensitive.split(",")])
        return pldp.URR(args.eps, mask)
    if name in ("iprr", "idue"):
        if args.budgets is None:
            raise ParameterError(f"{name} needs --budgets, e.g. --budgets 0.1,0.5,1.0,inf,inf")
        budgets = pldp.ItemBudgets.from_array(_parse_budgets(args.budgets))
        return pldp.IPRR(budgets) if name == "iprr" else pldp.IDUE(budgets, model=args.model, pair_rule=args.pair_rule)
    raise ParameterError(f"unknown mechanism {args.name!r}: krr, urr, iprr, rappor, oue, idue")


def _mechanism_json(mech: Any) -> str:
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
    mech = _mechanism(args)
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


def _aggregate(args: argparse.Namespace) -> int:
    from pldp.aggregate import aggregate
    from pldp.deploy import Spec
    from pldp.deploy.estimates import campaign_estimate, estimate_text, tidy_estimate
    from pldp.errors import ReportError

    spec_file = Path(args.spec)
    if not spec_file.is_file():
        raise ParameterError(f"no such spec file: {args.spec!r}")
    spec = Spec.from_json(spec_file.read_text(encoding="utf-8"))
    try:
        result = aggregate(
            spec,
            args.files,
            scheduler=args.scheduler,
            workers=args.workers,
            skip_bad=args.skip_bad,
            progress=not args.no_progress,
        )
    except ReportError as exc:  # a bad file (and row): the run stopped, nothing is estimated
        print(f"pldp: {exc}", file=sys.stderr)
        return 1
    for source, reason in result.skipped:
        print(f"pldp: skipped {source}: {reason}", file=sys.stderr)

    def count(k: int, what: str) -> str:
        return f"{k:,} {what}{'' if k == 1 else 's'}"

    skipped = f", {len(result.skipped):,} skipped" if result.skipped else ""
    print(
        f"{count(result.files, 'file')} ({count(result.parts, 'row group')}{skipped}): "
        f"{count(result.reports, 'report')} in {result.seconds:.1f} s"
    )
    if result.reports == 0:
        print("pldp: no reports to estimate from", file=sys.stderr)
        return 1
    out = {
        **campaign_estimate(spec, result.tally, args.method, args.level),
        "files": result.files,
        "skipped": [{"file": source, "reason": reason} for source, reason in result.skipped],
    }
    print(estimate_text(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    if args.parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table(tidy_estimate(out)), args.parquet)
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
    dc = sub.add_parser("demo-collection", help="a campaign end to end through a real collector (service extra)")
    dc.add_argument("--n", type=int, default=100_000, help="respondents (default 100,000)")
    dc.add_argument("--batch", type=int, default=1_000, help="reports per request (default 1,000)")
    dc.add_argument("--seed", type=int, default=2024, help="seed of the answers (default 2024)")
    dc.set_defaults(func=_demo_collection)

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
    rep.add_argument(
        "--kosarak",
        default=None,
        help="the full kosarak.dat for iprr and idue (default: the bundled 36,682-user prefix)",
    )
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
    add_mechanism_options(show)
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(func=_mechanism_show)

    ag = sub.add_parser(
        "aggregate",
        help="tally a campaign's report files (Parquet) on Dask and print the estimate",
        description="Tally report files of the spec, one Dask task per Parquet row group, and print the estimate "
        "with intervals. Exit 1 on a bad file (named with its row) unless --skip-bad.",
    )
    ag.add_argument("spec", help="the campaign's spec.json")
    ag.add_argument(
        "files", nargs="+", help="report files, directories in the spec=<id>/day=<date>/ layout, or fsspec URLs"
    )
    ag.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler (tcp://host:port)")
    ag.add_argument("--workers", type=int, default=None, help="local Dask workers (default 2; 0 or 1: serial)")
    ag.add_argument("--skip-bad", action="store_true", help="leave out bad files whole and list them")
    ag.add_argument("--method", default="unbiased", help="unbiased (default), norm_sub or mle")
    ag.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    ag.add_argument("--json", default=None, metavar="OUT", help="write the estimate JSON here")
    ag.add_argument("--parquet", default=None, metavar="OUT", help="write the estimate as a tidy Parquet table here")
    ag.add_argument("--no-progress", action="store_true", help="no progress bar")
    ag.set_defaults(func=_aggregate)

    from pldp.audit.cli import add_commands as add_audit_commands
    from pldp.deploy.cli import add_commands
    from pldp.service.cli import add_commands as add_service_commands

    add_commands(sub)
    add_service_commands(sub)
    add_audit_commands(sub)
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
