"""``pldp serve`` and ``pldp campaign create|list|submit|estimate|export|close|token`` (and
``round|series``, :mod:`pldp.cli.rounds`).

Every ``campaign`` command talks to the collector at ``--server``, else at ``$PLDP_SERVER``, else
at ``http://127.0.0.1:8000`` (:mod:`pldp.cli.connect`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pldp.cli import rounds
from pldp.cli.connect import DEFAULT_SERVER, add_remote_command, collector_from_args, iso_time
from pldp.cli.errors import CLIError, read_text, write_bytes
from pldp.cli.options import Subparsers, round_number
from pldp.cli.submit import add_submit_arguments, submit
from pldp.methods import method_help

__all__ = ["add_commands"]


def _serve(args: Any) -> int:
    from pldp.service.app import Limits
    from pldp.service.rollover import Rollover, parse_duration
    from pldp.service.server import serve

    rollover = None
    try:
        grace = 0.0 if args.round_grace.strip() == "0" else parse_duration(args.round_grace)
    except ValueError as exc:
        raise CLIError(f"--round-grace: {exc}") from None
    if args.export_dir is not None:
        try:
            rollover = Rollover(Path(args.export_dir).resolve(), parse_duration(args.export_every), args.retain_days)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
    elif args.retain_days is not None:
        raise CLIError("--retain-days deletes exported reports only; it needs --export-dir")
    try:
        limits = _limits(args, Limits, grace)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    serve(
        args.db,
        args.host,
        args.port,
        args.admin_token_file,
        limits,
        args.workers,
        rollover,
        ssl_keyfile=args.ssl_keyfile,
        ssl_certfile=args.ssl_certfile,
        trusted_proxies=None if args.trusted_proxy is None else [p for p in args.trusted_proxy if p != "none"],
    )
    return 0


def _limits(args: Any, limits: Any, grace: float) -> Any:
    """The collector's :class:`~pldp.service.state.Limits` from ``pldp serve``'s options."""
    from pldp.service.crossorigin import normalize_origin, serving_hosts

    for name in ("max_body", "max_reports", "burst", "max_connections", "max_parsing"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1")
    if args.rate < 0 or args.header_timeout <= 0 or args.body_timeout <= 0:
        raise ValueError("--rate must be at least 0 (0: no limit), and the timeouts above 0")
    if args.campaign_cap is not None and args.campaign_cap < 1:
        raise ValueError("--campaign-cap must be at least 1")
    if not 0 <= args.address_share < 1 or args.address_burst < 0:
        raise ValueError("--address-share must be in [0, 1) and --address-burst at least 0")
    return limits(
        max_body=args.max_body,
        max_reports=args.max_reports,
        rate=args.rate,
        burst=args.burst,
        campaign_cap=args.campaign_cap,
        max_parsing=args.max_parsing,
        allow_origins=tuple(normalize_origin(o) for o in args.allow_origin),
        allow_hosts=serving_hosts(args.host, args.allow_host),
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        max_connections=args.max_connections,
        round_grace=grace,
        address_share=args.address_share,
        address_burst=args.address_burst,
    )


def _cap(c: dict[str, Any]) -> str:
    """The cap that applies (the smaller of the campaign's own and the collector's), and whose it is."""
    if c["cap"] is None:
        return "none"
    own = c.get("own_cap", c["cap"])  # (a collector of before showed its own cap only)
    if own == c["cap"]:
        return f"{c['cap']:,} reports"
    whose = "the collector's" if own is None else f"the collector's; its own: {own:,}"
    return f"{c['cap']:,} reports ({whose})"


def _campaign_lines(c: dict[str, Any]) -> list[str]:
    """A campaign (the collector's entry) as ``key: value`` lines, its times in ISO 8601 UTC."""
    rounds = c["rounds"] if c["rounds"] == "once" else f"{c['rounds']}, now round {c['round']}"
    rows = [
        ("campaign", c["id"]),
        ("question", c["question"]),
        ("kind", c["kind"]),
        ("access", c["access"]),
        ("rounds", rounds),
        ("cap", _cap(c)),
        ("reports", f"{c['n']:,}"),
        ("state", "closed" if c["closed"] else "open"),
        ("created", iso_time(c["created_at"])),
    ]
    if c.get("conflicts"):  # resends of a stored id with another payload: acknowledged, not stored
        rows.append(("resends", f"{c['conflicts']:,} of a stored report with another payload (not stored)"))
    return [f"{key + ':':<10}{value}" for key, value in rows]


def _create(args: Any) -> int:
    collector, text = collector_from_args(args), read_text(args.spec, "spec file")
    make = collector.create_invited_campaign if args.invited else collector.create_campaign
    if args.cap is not None and args.cap < 1:
        raise CLIError(f"--cap must be a positive number of reports, got {args.cap}")
    out = make(text, rounds=args.rounds, cap=args.cap)
    if out["closed"]:  # the collector returns an existing campaign as it is: a closed one takes no reports
        print(
            f"pldp: campaign {out['id']} of this spec exists and is closed: it takes no more reports, and a closed "
            "campaign is never reopened; to start a new one, make a new spec (another question text gives another "
            "spec id: pldp spec new ... --question ...)",
            file=sys.stderr,
        )
        return 1
    if args.quiet:
        print(out["id"])
    else:
        print(json.dumps(out, indent=2) if args.json else "\n".join(_campaign_lines(out)))
    # the pages for people, on standard error: standard output stays the answer (or the id) alone
    print(f"survey page: {collector.url}/c/{out['id']}", file=sys.stderr)
    print(f"dashboard:   {collector.url}/dashboard/{out['id']}", file=sys.stderr)
    return 0


def _list(args: Any) -> int:
    for c in collector_from_args(args).campaigns():
        state = "closed" if c["closed"] else "open"
        print(f"{c['id']}  {c['kind']:<10} n={c['n']:<10} {state:<6} {c['question']}")
    return 0


def _estimate(args: Any) -> int:
    from pldp.deploy.estimates import estimate_text
    from pldp.deploy.labels import HashedAnswers, bucket_names

    collector = collector_from_args(args)
    out = collector.estimate(args.campaign, args.method, args.level, args.round, args.top)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    names = None
    if args.candidates is not None:
        spec = collector.spec(args.campaign)
        lists = spec.root.label_lists(spec.labels)
        if not any(isinstance(labs, HashedAnswers) for labs in lists):
            raise CLIError("--candidates names the buckets of hashed answers; this campaign's answers are not hashed")
        candidates = read_text(args.candidates, "candidates file").splitlines()
        names = [bucket_names(labs, candidates) if isinstance(labs, HashedAnswers) else None for labs in lists]
    print(estimate_text(out, names))
    return 0


def _export(args: Any) -> int:
    if args.out_dir is not None:
        from pldp.service.dayfiles import export_days

        try:
            written = export_days(
                collector_from_args(args),
                args.campaign,
                args.out_dir,
                None if args.day is None else [args.day],
                None if args.round is None else [args.round],
            )
        except FileExistsError as exc:
            print(f"pldp: {exc}", file=sys.stderr)
            return 1
        for path in written:
            print(path)
        return 0
    data = collector_from_args(args).export(args.campaign, args.day, args.round)
    write_bytes(args.out, data, "--out")
    print(f"{len(data)} bytes -> {args.out}", file=sys.stderr)
    return 0


def _close(args: Any) -> int:
    out = collector_from_args(args).close_campaign(args.campaign)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"campaign {out['id']} closed at {iso_time(out['closed_at'])}: it takes no more reports")
    return 0


def _token(args: Any) -> int:
    out = collector_from_args(args).create_token(args.label, args.campaigns)
    print(out["token"])  # alone on stdout, so that "> analyst.token" keeps it
    print(f"analyst token {out['label']!r} granted {out['campaigns']} (shown once)", file=sys.stderr)
    return 0


def _add_serve(sub: Subparsers) -> None:
    srv = sub.add_parser(
        "serve",
        help="run the collector (needs the service extra)",
        description="Run the collector: it binds HOST:PORT, opens (or creates) the store, and then prints its URL. "
        "The first start on a new store prints an admin token once, unless --admin-token-file names one.",
    )
    srv.add_argument("--db", default="pldp.db", help="the SQLite store, created if missing (default %(default)s)")
    srv.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default %(default)s: this machine only; 0.0.0.0: every interface)",
    )
    srv.add_argument("--port", type=int, default=8000, help="the TCP port to listen on (default %(default)s)")
    srv.add_argument(
        "--admin-token-file",
        default=None,
        help="a file holding the admin token to accept; created with a new token if missing "
        "(default: none; the first start prints a new token once)",
    )
    srv.add_argument(
        "--ssl-certfile", default=None, help="speak HTTPS with this PEM certificate chain (default: plain HTTP)"
    )
    srv.add_argument("--ssl-keyfile", default=None, help="the PEM private key of --ssl-certfile")
    srv.add_argument(
        "--max-body", type=int, default=8 * 2**20, help="largest request body, bytes (default %(default)s)"
    )
    srv.add_argument(
        "--max-reports", type=int, default=10_000, help="most reports in one request (default %(default)s)"
    )
    srv.add_argument("--workers", type=int, default=1, help="server processes on the same store (default %(default)s)")
    _add_abuse_limits(srv)
    srv.add_argument(
        "--export-dir", default=None, help="write the reports to report files here (DIR/spec=<id>/day=<date>/)"
    )
    srv.add_argument(
        "--export-every", default="1h", help="how often to write report files: 30s, 5m, 1h (default %(default)s)"
    )
    srv.add_argument(
        "--retain-days",
        type=int,
        default=None,
        help="delete exported reports received more than N days ago (default: keep every report)",
    )
    srv.add_argument(
        "--round-grace",
        default="1h",
        help="how long after a round of a recurring campaign starts a report may still answer the round before: "
        "30s, 5m, 1h, 1d or 0 (default %(default)s)",
    )
    srv.set_defaults(func=_serve)


def _add_abuse_limits(srv: argparse.ArgumentParser) -> None:
    """The options that bound what clients may do (docs/threat-model.md); each worker keeps its own state."""
    lim = srv.add_argument_group("limits on clients (per worker process; see docs/threat-model.md)")
    lim.add_argument(
        "--rate",
        type=float,
        default=100.0,
        help="reports per second one client address may send, sustained (default %(default)s; 0: no limit); "
        "admin and analyst tokens are not limited",
    )
    lim.add_argument(
        "--burst", type=int, default=10_000, help="reports one client address may send at once (default %(default)s)"
    )
    lim.add_argument(
        "--campaign-cap", type=int, default=None, help="the most reports one campaign takes (default: no cap)"
    )
    lim.add_argument(
        "--address-share",
        type=float,
        default=0.02,
        help="the part of an open campaign's reports one client address may hold, besides --address-burst "
        "(default %(default)s; 429 address_share beyond; off with --rate 0)",
    )
    lim.add_argument(
        "--address-burst",
        type=int,
        default=100,
        help="reports any client address may hold in an open campaign (default %(default)s)",
    )
    lim.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name this collector is reached by (its Host header: the name in its URL, e.g. "
        "survey.example.org), besides the address it listens on and localhost; its own pages send from "
        "these names only (DNS rebinding); repeatable",
    )
    lim.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let pages of this origin (e.g. https://survey.example.org) send requests, besides the collector's own; "
        "repeatable",
    )
    lim.add_argument(
        "--trusted-proxy",
        action="append",
        default=None,
        metavar="ADDRESS",
        help="a proxy whose X-Forwarded-For names the client (an address or network; repeatable; 'none': no proxy); "
        "default: $FORWARDED_ALLOW_IPS, else 127.0.0.1 and ::1",
    )
    lim.add_argument(
        "--header-timeout", type=float, default=10.0, help="seconds to send a request's head (default %(default)s)"
    )
    lim.add_argument(
        "--body-timeout", type=float, default=30.0, help="seconds to send a request's body (default %(default)s)"
    )
    lim.add_argument(
        "--max-connections", type=int, default=4096, help="open connections per worker (default %(default)s)"
    )
    lim.add_argument(
        "--max-parsing",
        type=int,
        default=64 * 2**20,
        help="bytes of request bodies read and parsed at once per worker (default %(default)s)",
    )


def add_commands(sub: Subparsers) -> None:
    """Add ``serve`` and ``campaign`` to the ``pldp`` parser."""
    _add_serve(sub)
    camp = sub.add_parser(
        "campaign",
        help="manage and read campaigns on a running collector",
        description=f"Each command talks to the collector at --server, else at $PLDP_SERVER, else at {DEFAULT_SERVER}.",
    )
    camp_sub = camp.add_subparsers(dest="action", required=True)

    def command(name: str, help_: str, fn: Any) -> argparse.ArgumentParser:
        return add_remote_command(camp_sub, name, help_, fn)

    create = command("create", "create a campaign from a spec (admin)", _create)
    create.add_argument("spec", help="spec.json")
    create.add_argument(
        "-q", "--quiet", action="store_true", help="print the campaign id alone (ID=$(pldp campaign create ... -q))"
    )
    create.add_argument("--json", action="store_true", help="the collector's answer as JSON")
    create.add_argument("--invited", action="store_true", help="reports only with respondent codes (campaign invite)")
    create.add_argument(
        "--rounds",
        choices=("once", "daily", "weekly", "manual"),
        default=None,
        help="make the campaign recur: daily or weekly rounds (UTC, from today), or manual ones opened with "
        "pldp campaign round (default: once)",
    )
    create.add_argument(
        "--cap",
        type=int,
        default=None,
        metavar="N",
        help="the most reports this campaign takes (409 campaign_full beyond; serve --campaign-cap applies too)",
    )
    command("list", "the campaigns you may see", _list)
    add_submit_arguments(command("submit", "send a report file's reports in batches, retried (anyone)", submit))
    est = command("estimate", "estimated frequencies with intervals (analyst)", _estimate)
    est.add_argument("campaign")
    est.add_argument("--method", default=None, help=method_help())
    est.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    est.add_argument(
        "--top", type=int, default=None, metavar="K", help="a free-text campaign: the answers to discover (default 20)"
    )
    est.add_argument("--json", action="store_true", help="the collector's answer as JSON")
    est.add_argument("--round", type=round_number, default=None, metavar="N", help="only the reports of round N")
    est.add_argument(
        "--candidates",
        default=None,
        metavar="FILE",
        help="hashed answers: name each bucket by the candidate answers (one per line) that land in it",
    )
    exp = command("export", "the raw reports as Parquet (analyst)", _export)
    exp.add_argument("campaign")
    where = exp.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", help="one file: reports.parquet")
    where.add_argument(
        "--out-dir",
        help="one file per day: DIR/spec=<id>/day=<date>/<store id>-day.parquet "
        "(a recurring campaign's per round and day: DIR/spec=<id>/round=<n>/day=<date>/...)",
    )
    exp.add_argument("--day", default=None, help="only the reports received on this day (YYYY-MM-DD, UTC)")
    exp.add_argument("--round", type=round_number, default=None, metavar="N", help="only the reports of round N")
    close = command("close", "close a campaign (admin)", _close)
    close.add_argument("campaign")
    close.add_argument("--json", action="store_true", help="the collector's answer as JSON")
    tok = command("token", "a new analyst token granted some campaigns (admin)", _token)
    tok.add_argument("campaigns", nargs="*")
    tok.add_argument("--label", default="analyst")
    rounds.add_commands(command)
