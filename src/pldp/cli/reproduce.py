"""``pldp reproduce PAPER``: run a paper's experiments, write tidy tables, figures and a report."""

from __future__ import annotations

import argparse
import importlib
import time
from pathlib import Path
from typing import Any

from pldp._text import text_table
from pldp.cli.errors import Interrupted
from pldp.cli.options import Subparsers
from pldp.errors import ParameterError

__all__ = ["KOSARAK_PAPERS", "PAPERS", "add_commands"]

#: Papers with an experiment module ``pldp.experiments.<name>``.
PAPERS = ("iprr", "idue", "febsf", "mpldp", "longitudinal", "attacks", "wang2017", "murakami2019", "wang2021")
#: Papers whose experiments read Kosarak, and so take ``--kosarak``.
KOSARAK_PAPERS = ("iprr", "idue", "wang2017", "wang2021")
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
    """The table of one paper: each experiment's verdict (or the full-scale one), numbers, outputs."""
    rows = []
    for exp, check, figs in results:
        if exp.paper != paper:
            continue
        if check is None:
            ours = ""
        elif exp.decides(quick, trials):
            ours = check.ours
        else:
            ours = f"full scale: {exp.full_ours} (REPRODUCTION.md)"
        verdict = exp.verdict(check, quick, trials).replace("; ", ";\n")  # one scale a line
        rows.append([exp.name, verdict, ours, str(len(figs))])
    return text_table(rows, ["experiment", "verdict", "our numbers", "figures, tables"], wrap={2: OURS_WIDTH})


def _reproduce(args: argparse.Namespace) -> int:
    from pldp.experiments.runner import run_experiments, write_outputs

    papers = PAPERS if args.paper == "all" else (args.paper,)
    experiments = _experiments(papers, args.kosarak)
    out = Path(args.out)
    t0 = time.perf_counter()
    try:
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
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted after {time.perf_counter() - t0:.0f} s of experiments; nothing was written to {out} "
            "(the tables, figures and report are written once every experiment has run)"
        ) from None
    elapsed = time.perf_counter() - t0
    try:
        report, results = write_outputs(experiments, table, out, elapsed=elapsed, quick=args.quick, trials=args.trials)
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted while writing the results to {out}: some tables, figures or the report may be missing "
            "or from an earlier run; run the command again"
        ) from None
    scale = "quick" if args.quick else "full"
    head = f"pldp reproduce {args.paper} ({scale} scale, {args.path} path)"
    print(f"{head}: {len(table):,} result rows in {elapsed:.1f} s\n")
    for paper in papers:
        print(f"== {paper.upper()} ==")
        print(_summary(paper, results, args.quick, args.trials))
        print()
    if any(not exp.decides(args.quick, args.trials) for exp, check, _ in results if check is not None):
        print("undecided: too few repeats at this scale to decide the claim; the verdict at full scale is shown.\n")
    print(f"tables:  {out.resolve()}/<paper>/results.csv and results.parquet")
    print(f"figures: {out.resolve()}/<paper>/*.png")
    print(f"report:  {report.resolve()}")
    return 0


def add_commands(sub: Subparsers) -> None:
    """Add ``reproduce`` to the ``pldp`` parser."""
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
        help="the full kosarak.dat for iprr, idue, wang2017 and wang2021 (default: the bundled 36,682-user prefix)",
    )
    rep.add_argument("--no-progress", action="store_true", help="no progress bar")
    rep.set_defaults(func=_reproduce)
