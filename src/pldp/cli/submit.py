"""``pldp campaign submit CAMPAIGN REPORTS``: send a report file to a collector, in batches, retried.

The file is one that ``pldp clients simulate`` writes (or any client following
``docs/wire-format.md``): ``.json`` (a ``pldp.batch/1`` batch, a list of reports, or one report),
``.jsonl`` (one report per line) or ``.parquet`` (a report file). Before anything is sent, the
spec the file's reports name is compared with the spec the campaign publishes. The reports then go
in requests of ``--batch`` reports (:meth:`pldp.deploy.remote.Collector.submit_all`): a request
over the collector's limits (413) is halved, and one that failed to connect or got a 503 is sent
again after a wait that doubles (a 429, too many reports from this address, after the wait the
collector asks for; analyst and admin tokens are exempt from that limit). A resend counts once: the
collector keeps each report id once, so a report stored by an attempt whose answer was lost comes
back as a duplicate, and so does a report sent again after Ctrl-C stopped the command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pldp.cli.connect import collector_from_args, token_advice
from pldp.cli.errors import CLIError, Interrupted, read_text
from pldp.cli.options import round_number
from pldp.errors import ReportError

__all__ = ["add_submit_arguments", "file_spec_id", "read_reports", "submit"]

SUFFIXES = (".json", ".jsonl", ".parquet")


def _json_items(path: Path) -> Any:
    """The parsed JSON of a ``.json`` file, or the list of reports of a ``.jsonl`` file."""
    text = read_text(path, "report file")
    try:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CLIError(f"{path} is not valid JSON ({exc}): give a file that pldp clients simulate wrote") from None


def _parquet(path: Path) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).read()
    except OSError as exc:  # a missing file, a directory: pyarrow raises OSError subclasses
        if not path.is_file():
            raise CLIError(f"cannot read report file {str(path)!r}: no such file") from None
        raise CLIError(f"{path} is not a Parquet file of reports ({exc})") from None
    except pa.ArrowException as exc:
        raise CLIError(f"{path} is not a Parquet file of reports ({exc})") from None


def _check_suffix(path: Path) -> None:
    if path.suffix not in SUFFIXES:
        raise CLIError(f"{path}: a report file ends in .json, .jsonl or .parquet (as pldp clients simulate writes)")


def file_spec_id(path: str | Path, data: Any = None) -> str | None:
    """The spec id the reports of a report file name (its first report's, or the batch's), if any.

    Parameters
    ----------
    path : str or Path
        A ``.json``, ``.jsonl`` or ``.parquet`` report file.
    data : optional
        The file's contents already read (:func:`read_reports` passes them).
    """
    path = Path(path)
    _check_suffix(path)
    if path.suffix == ".parquet":
        table = _parquet(path) if data is None else data
        meta = (table.schema.metadata or {}).get(b"pldp.spec")
        if meta:
            return str(meta.decode("utf-8"))
        return str(table.column("spec")[0].as_py()) if "spec" in table.column_names and table.num_rows else None
    items = _json_items(path) if data is None else data
    first = items[0] if isinstance(items, list) and items else items
    return str(first["spec"]) if isinstance(first, dict) and "spec" in first else None


def read_reports(path: str | Path, spec: Any, campaign: str | None = None) -> Any:
    """The reports of a report file as a :class:`~pldp.deploy.ReportBatch` of ``spec``.

    Raises
    ------
    CLIError
        The file is missing or not a report file, its reports name another spec than ``spec``
        (``campaign``'s), it holds no reports, or a report is malformed (named by its row).
    """
    from pldp.deploy import ReportBatch

    path = Path(path)
    _check_suffix(path)
    data = _parquet(path) if path.suffix == ".parquet" else _json_items(path)
    held = file_spec_id(path, data)
    if held is None:
        raise CLIError(f"{path} holds no reports")
    if held != spec.id:
        whose = f"campaign {campaign}" if campaign else "the spec"
        raise CLIError(
            f"{path} holds reports of spec {held}, but {whose} takes reports of spec {spec.id}: "
            "make the reports with the campaign's spec (pldp clients simulate SPEC ...)"
        )
    try:
        if path.suffix == ".parquet":
            batch = ReportBatch.from_arrow(data, spec.root, spec.id)
        else:
            batch = ReportBatch.from_json(data, spec.root, spec.id)
    except ReportError as exc:
        raise CLIError(f"{path}: {exc}") from None
    if len(batch) == 0:
        raise CLIError(f"{path} holds no reports")
    return batch


def submit(args: argparse.Namespace) -> int:
    """``pldp campaign submit``: check the file's spec against the campaign's, then send it."""
    from pldp.parallel import progress_bar

    if args.batch < 1 or args.retries < 0:
        raise CLIError("--batch must be at least 1 and --retries at least 0")
    path = Path(args.reports)
    _check_suffix(path)
    if not path.is_file():  # before the collector is asked anything
        why = "a directory, not a file" if path.is_dir() else "no such file"
        raise CLIError(f"cannot read report file {args.reports!r}: {why}")
    collector = collector_from_args(args)
    advised = False

    def retry(exc: Exception, wait: float) -> None:
        nonlocal advised
        advice = "" if advised else token_advice(exc, args)  # once: why the waits, and how to skip them
        advised = advised or bool(advice)
        print(f"pldp: {exc}; sending again in {wait:g} s{advice}", file=sys.stderr, flush=True)

    spec = collector.retrying(lambda: collector.spec(args.campaign), args.retries, on_retry=retry)
    batch = read_reports(args.reports, spec, args.campaign)
    bar = progress_bar(len(batch), "submit", enabled=not args.no_progress, unit="report")
    acknowledged = 0

    def progress(n: int) -> None:
        nonlocal acknowledged
        acknowledged += n
        if bar is not None:
            bar.update(n)

    try:
        out = collector.submit_all(
            args.campaign,
            batch,
            size=args.batch,
            retries=args.retries,
            progress=progress,
            on_retry=retry,
            round=args.round,
        )
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted after {acknowledged:,} of {len(batch):,} reports were acknowledged; "
            "running the same command again counts each report once"
        ) from None
    finally:
        if bar is not None:
            bar.close()
    print(
        f"{len(batch):,} reports of {args.reports} -> campaign {args.campaign}: "
        f"{out['accepted']:,} accepted, {out['duplicates']:,} duplicates (held already)"
    )
    return 0


def add_submit_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The arguments of ``campaign submit`` (added to the parser its group made)."""
    p.add_argument("campaign", help="the campaign id")
    p.add_argument("reports", help="reports.json, reports.jsonl or reports.parquet (as pldp clients simulate writes)")
    p.add_argument(
        "--batch", type=int, default=5_000, help="most reports per request (default %(default)s; halved on a 413)"
    )
    p.add_argument(
        "--retries",
        type=int,
        default=5,
        help="resends of a request after a connection error, a 503 or a 429, waiting 0.5, 1, 2, ... s "
        "(or as long as the collector asks) (default %(default)s)",
    )
    p.add_argument(
        "--round",
        type=round_number,
        default=None,
        metavar="N",
        help="the round of a recurring campaign the reports answer (default: the round in which they arrive)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p
