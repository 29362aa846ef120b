"""``pldp serve`` and ``pldp campaign create|list|estimate|export|close|token``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pldp.cli.options import Subparsers

__all__ = ["add_commands"]


def _serve(args: Any) -> int:
    from pldp.service.app import Limits
    from pldp.service.rollover import Rollover, parse_duration
    from pldp.service.server import serve

    rollover = None
    if args.export_dir is not None:
        try:
            rollover = Rollover(Path(args.export_dir).resolve(), parse_duration(args.export_every), args.retain_days)
        except ValueError as exc:
            print(f"pldp serve: {exc}", file=sys.stderr)
            return 2
    elif args.retain_days is not None:
        print("pldp serve: --retain-days deletes exported reports only; it needs --export-dir", file=sys.stderr)
        return 2
    limits = Limits(args.max_body, args.max_reports)
    serve(args.db, args.host, args.port, args.admin_token_file, limits, args.workers, rollover)
    return 0


def _collector(args: Any) -> Any:
    from pldp.service.auth import read_token_file
    from pldp.service.remote import Collector

    return Collector(args.server, read_token_file(args.token_file) if args.token_file else None)


def _run(fn: Any) -> Any:
    def wrapped(args: Any) -> int:
        from pldp.service.remote import RemoteError

        try:
            return int(fn(args) or 0)
        except RemoteError as exc:
            print(f"pldp: the collector refused: {exc}", file=sys.stderr)
            return 1

    return wrapped


def _create(args: Any) -> int:
    collector, text = _collector(args), Path(args.spec).read_text(encoding="utf-8")
    out = collector.create_invited_campaign(text) if args.invited else collector.create_campaign(text)
    print(json.dumps(out, indent=2))
    return 0


def _list(args: Any) -> int:
    for c in _collector(args).campaigns():
        state = "closed" if c["closed"] else "open"
        print(f"{c['id']}  {c['kind']:<10} n={c['n']:<10} {state:<6} {c['question']}")
    return 0


def _estimate(args: Any) -> int:
    from pldp.deploy.estimates import estimate_text

    out = _collector(args).estimate(args.campaign, args.method, args.level)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(estimate_text(out))
    return 0


def _export(args: Any) -> int:
    if args.out_dir is not None:
        from pldp.service.dayfiles import export_days

        try:
            written = export_days(
                _collector(args), args.campaign, args.out_dir, None if args.day is None else [args.day]
            )
        except FileExistsError as exc:
            print(f"pldp: {exc}", file=sys.stderr)
            return 1
        for path in written:
            print(path)
        return 0
    data = _collector(args).export(args.campaign, args.day)
    Path(args.out).write_bytes(data)
    print(f"{len(data)} bytes -> {args.out}", file=sys.stderr)
    return 0


def _close(args: Any) -> int:
    print(json.dumps(_collector(args).close_campaign(args.campaign)))
    return 0


def _token(args: Any) -> int:
    out = _collector(args).create_token(args.label, args.campaigns)
    print(out["token"])  # alone on stdout, so that "> analyst.token" keeps it
    print(f"analyst token {out['label']!r} granted {out['campaigns']} (shown once)", file=sys.stderr)
    return 0


def add_commands(sub: Subparsers) -> None:
    """Add ``serve`` and ``campaign`` to the ``pldp`` parser."""
    srv = sub.add_parser("serve", help="run the collector (needs the service extra)")
    srv.add_argument("--db", default="pldp.db", help="the SQLite store (created if missing)")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8000)
    srv.add_argument("--admin-token-file", default=None, help="a file holding the admin token to accept")
    srv.add_argument("--max-body", type=int, default=8 * 2**20, help="largest request body, bytes")
    srv.add_argument("--max-reports", type=int, default=10_000, help="most reports in one request")
    srv.add_argument("--workers", type=int, default=1, help="server processes on the same store (default 1)")
    srv.add_argument(
        "--export-dir", default=None, help="write the reports to report files here (DIR/spec=<id>/day=<date>/)"
    )
    srv.add_argument("--export-every", default="1h", help="how often to write report files: 30s, 5m, 1h (default 1h)")
    srv.add_argument(
        "--retain-days",
        type=int,
        default=None,
        help="delete exported reports received more than N days ago (default: keep every report)",
    )
    srv.set_defaults(func=_serve)

    camp = sub.add_parser("campaign", help="manage and read campaigns on a running collector")
    camp_sub = camp.add_subparsers(dest="action", required=True)

    def command(name: str, help_: str, fn: Any) -> Any:
        p = camp_sub.add_parser(name, help=help_)
        p.add_argument("--server", default="http://127.0.0.1:8000", help="the collector's URL")
        p.add_argument("--token-file", default=None, help="a file holding your token")
        p.set_defaults(func=_run(fn))
        return p

    create = command("create", "create a campaign from a spec (admin)", _create)
    create.add_argument("spec", help="spec.json")
    create.add_argument("--invited", action="store_true", help="reports only with respondent codes (campaign invite)")
    command("list", "the campaigns you may see", _list)
    est = command("estimate", "estimated frequencies with intervals (analyst)", _estimate)
    est.add_argument("campaign")
    est.add_argument("--method", default="unbiased")
    est.add_argument("--level", type=float, default=0.95)
    est.add_argument("--json", action="store_true")
    exp = command("export", "the raw reports as Parquet (analyst)", _export)
    exp.add_argument("campaign")
    where = exp.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", help="one file: reports.parquet")
    where.add_argument("--out-dir", help="one file per day: DIR/spec=<id>/day=<date>/<store id>-day.parquet")
    exp.add_argument("--day", default=None, help="only the reports received on this day (YYYY-MM-DD, UTC)")
    command("close", "close a campaign (admin)", _close).add_argument("campaign")
    tok = command("token", "a new analyst token granted some campaigns (admin)", _token)
    tok.add_argument("campaigns", nargs="*")
    tok.add_argument("--label", default="analyst")
