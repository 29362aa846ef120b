"""``pldp aggregate SPEC FILES...``: tally a campaign's report files on Dask and print the estimate,
each report counted once (exit 1 on a bad file unless ``--skip-bad``, on two copies of a report
that differ, or when there is no report)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pldp.cli.errors import Interrupted
from pldp.cli.options import Subparsers, round_number
from pldp.errors import ParameterError, ReportError
from pldp.methods import method_help

__all__ = ["add_commands"]


def _aggregate(args: argparse.Namespace) -> int:
    from pldp.aggregate import aggregate
    from pldp.deploy import Spec
    from pldp.deploy.estimates import campaign_estimate, estimate_text, tidy_estimate

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
            unique_ids=args.unique_ids,
            spill_dir=args.spill_dir,
            progress=not args.no_progress,
            round=args.round,
        )
    except ReportError as exc:  # a bad file (and row), or two copies of a report that differ
        print(f"pldp: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        raise Interrupted("interrupted while tallying the report files: no estimate was printed or written") from None
    for source, reason in result.skipped:
        print(f"pldp: skipped {source}: {reason}", file=sys.stderr)
    _warn_unmarked(result.unmarked, result.files, args.unique_ids)
    _say_rounds(result, args.round)

    def count(k: int, what: str) -> str:
        return f"{k:,} {what}{'' if k == 1 else 's'}"

    skipped = f", {len(result.skipped):,} skipped" if result.skipped else ""
    print(
        f"{count(result.files, 'file')} ({count(result.parts, 'row group')}{skipped}): "
        f"{count(result.reports, 'report')} in {result.seconds:.1f} s"
    )
    if result.repeats:
        why = "the same report id" if args.unique_ids else "the same reports of one collector"
        print(f"{count(result.repeats, 'repeat')} not counted: files that hold {why} count each once")
    if result.reports == 0:
        print("pldp: no reports to estimate from", file=sys.stderr)
        return 1
    out = {
        **campaign_estimate(spec, result.tally, args.method, args.level, args.top),
        "files": result.files,
        "repeats": result.repeats,
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


def _say_rounds(result: Any, turn: int | None) -> None:
    """With ``--round``: how many files held other rounds, and which named no round (both left out)."""
    if turn is None:
        return
    if result.other_rounds:
        many = "s" if result.other_rounds != 1 else ""
        print(f"pldp: round {turn}: left out {result.other_rounds:,} file{many} of other rounds", file=sys.stderr)
    if result.no_round:
        print(
            f"pldp: warning: left out {len(result.no_round):,} files that name no round (of a campaign that does not "
            f"recur, or written by an older pldp or another writer): {_few(result.no_round)}",
            file=sys.stderr,
        )


def _few(names: list[str]) -> str:
    """The first three of ``names`` and how many more."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")


def _warn_unmarked(unmarked: list[str], files: int, unique_ids: bool) -> None:
    """Say which files nothing proves disjoint from the others (they name no store's numbers)."""
    if not unmarked or files < 2 or unique_ids:
        return
    shown = _few(unmarked)
    print(
        f"pldp: warning: {len(unmarked):,} of {files:,} files do not name the collector store and report numbers "
        f"they hold (written by an older pldp or another writer), so a report they share with another file would "
        f"count twice: {shown}. --unique-ids counts every report id once.",
        file=sys.stderr,
    )


def add_commands(sub: Subparsers) -> None:
    """Add ``aggregate`` to the ``pldp`` parser."""
    ag = sub.add_parser(
        "aggregate",
        help="tally a campaign's report files (Parquet) on Dask and print the estimate",
        description="Tally report files of the spec, one Dask task per Parquet row group, and print the estimate "
        "with intervals. A report that several files of one collector hold (its rollover and an --out-dir "
        "export, say) counts once. Exit 1 on a bad file (named with its row) unless --skip-bad, or on two "
        "copies of a report that differ.",
    )
    ag.add_argument("spec", help="the campaign's spec.json")
    ag.add_argument(
        "files", nargs="+", help="report files, directories in the spec=<id>/day=<date>/ layout, or fsspec URLs"
    )
    ag.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler (tcp://host:port)")
    ag.add_argument("--workers", type=int, default=None, help="local Dask workers (default 2; 0 or 1: serial)")
    ag.add_argument("--skip-bad", action="store_true", help="leave out bad files whole and list them")
    ag.add_argument(
        "--unique-ids",
        action="store_true",
        help="count every report id once across all files, whoever wrote them (reads the ids; "
        "by default each collector's report counts once, from the numbers in the files' footers)",
    )
    ag.add_argument(
        "--spill-dir",
        default=None,
        metavar="DIR",
        help="scratch space of --unique-ids, 12 bytes a report (default: the system's temporary directory)",
    )
    ag.add_argument(
        "--round",
        type=round_number,
        default=None,
        metavar="N",
        help="only the reports of round N of a recurring campaign (files in round=N/ or naming it; default: all)",
    )
    ag.add_argument("--method", default=None, help=method_help())
    ag.add_argument(
        "--top", type=int, default=20, metavar="K", help="a free-text campaign: the answers to discover (default 20)"
    )
    ag.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    ag.add_argument("--json", default=None, metavar="OUT", help="write the estimate JSON here")
    ag.add_argument("--parquet", default=None, metavar="OUT", help="write the estimate as a tidy Parquet table here")
    ag.add_argument("--no-progress", action="store_true", help="no progress bar")
    ag.set_defaults(func=_aggregate)
