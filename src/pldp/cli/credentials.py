"""``pldp token list|create|revoke|rotate|new`` and ``pldp campaign invite|codes|revoke-codes``.

The credentials of a running collector (:mod:`pldp.service.auth`, :mod:`pldp.service.codes`):
tokens with their expiry, listed by public id and revoked, the admin token rotated, and the
one-time respondent codes of an invited campaign issued into a CSV file of codes and links,
counted and revoked. Every command but ``pldp token new`` talks to the collector with the
token of ``--token-file`` (the admin's).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from pldp.cli.connect import add_remote_command, collector_from_args
from pldp.cli.errors import CLIError
from pldp.cli.options import Subparsers

__all__ = ["add_commands"]


def _duration(text: str) -> int:
    """Whole seconds of a duration such as ``12h`` or ``90d`` (an argparse type)."""
    from pldp.service.rollover import parse_duration

    try:
        return max(1, round(parse_duration(text)))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _when(t: float | None) -> str:
    return "never" if t is None else time.strftime("%Y-%m-%d %H:%M", time.gmtime(t))


def _tell(text: str) -> int:
    """Say ``text`` on standard error (stdout keeps only what a script reads); exit code 0."""
    print(text, file=sys.stderr)
    return 0


def _secret_file(path: Path) -> Any:
    """``path`` opened for writing, created now (refused if it exists) and readable by its owner only."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8", newline="")


# ------------------------------------------------------------------------------------ tokens


def _list(args: Any) -> int:
    rows = collector_from_args(args).tokens()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'id':<12}  {'role':<7}  {'state':<7}  {'expires (UTC)':<16}  {'label':<20}  campaigns")
    for t in rows:
        expires = _when(t["revoked_at"] if t["state"] == "revoked" else t["expires_at"])
        print(
            f"{t['id']:<12}  {t['role']:<7}  {t['state']:<7}  {expires:<16}  {t['label']:<20}  "
            f"{' '.join(t['campaigns']) or '-'}"
        )
    return 0


def _create(args: Any) -> int:
    out = collector_from_args(args).new_token(args.label, args.campaigns, args.expires)
    print(out["token"])  # alone on stdout, so that "> analyst.token" keeps it
    granted, expires = out["campaigns"], _when(out["expires_at"])
    return _tell(f"analyst token {out['id']} {out['label']!r} granted {granted}, expires {expires} UTC (shown once)")


def _revoke(args: Any) -> int:
    out = collector_from_args(args).revoke_token(args.id)
    return _tell(f"token {out['id']} revoked at {_when(out['revoked_at'])} UTC")


def _rotate(args: Any) -> int:
    if args.token_file is None:
        print("pldp: error: pldp token rotate needs --token-file (the admin token, replaced there)", file=sys.stderr)
        return 2
    path = Path(args.token_file)
    fresh = path.with_name(f".{path.name}.rotating")
    if fresh.exists():
        print(
            f"pldp: error: {fresh} exists: it may hold the admin token of an interrupted rotation "
            f"(then move it over {path}); else remove it",
            file=sys.stderr,
        )
        return 2
    try:
        handle = _secret_file(fresh)  # writable before the old token is given up
    except OSError as exc:
        print(f"pldp: error: cannot write the new token beside {path}: {exc}", file=sys.stderr)
        return 2
    with handle:
        try:
            out = collector_from_args(args).rotate_admin(args.expires)
        except BaseException:
            fresh.unlink()
            raise
        handle.write(out["token"] + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(fresh, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)  # the rename is on disk too
    finally:
        os.close(folder)
    return _tell(
        f"admin token rotated: the new one ({out['id']}, expires {_when(out['expires_at'])} UTC) is in {path}; "
        "the old one no longer works. Start pldp serve with this --admin-token-file from now on."
    )


def _new(args: Any) -> int:
    from pldp.service.auth import new_token

    print(new_token())
    return 0


# ------------------------------------------------------------------------------------ respondent codes


def _invite(args: Any) -> int:
    out_path = Path(args.out)
    if out_path.exists():
        raise CLIError(f"{out_path} exists; its codes would be lost (they stay valid): choose another name")
    collector = collector_from_args(args)
    with _secret_file(out_path) as handle:
        try:
            issued = collector.issue_codes(args.campaign, args.count, args.expires)
        except BaseException:
            handle.close()
            out_path.unlink()
            raise
        base = (args.survey_url or collector.url).rstrip("/") + issued["survey"]
        writer = csv.writer(handle)
        writer.writerow(["code", "link"])
        writer.writerows([code, f"{base}#code={code}"] for code in issued["codes"])
    return _tell(
        f"{issued['count']} codes for campaign {args.campaign}, each good for one report until "
        f"{_when(issued['expires_at'])} UTC -> {out_path} (shown once: the collector keeps only their hashes)"
    )


def _codes(args: Any) -> int:
    counts = collector_from_args(args).code_counts(args.campaign)
    print(" ".join(f"{k}={counts[k]}" for k in ("issued", "used", "usable", "expired", "revoked")))
    return 0


def _revoke_codes(args: Any) -> int:
    listed: list[str] | None = None
    if not args.unused:
        listed = list(args.code)
        if args.file is not None:
            with open(args.file, encoding="utf-8", newline="") as handle:
                listed += [row["code"] for row in csv.DictReader(handle)]
        if not listed:
            print("pldp: error: name codes (--code, --file) or --unused", file=sys.stderr)
            return 2
    out = collector_from_args(args).revoke_codes(args.campaign, listed)
    return _tell(f"{out['revoked']} codes revoked, {out['unknown']} not codes of campaign {args.campaign}")


# ------------------------------------------------------------------------------------ the parser


def _subcommands(parser: argparse.ArgumentParser) -> Any:
    """The subcommands action of ``parser`` (where ``pldp campaign``'s commands are added)."""
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action


def _remote(sub: Any, name: str, help_: str, fn: Any) -> argparse.ArgumentParser:
    return add_remote_command(sub, name, help_, fn, token="your token (the admin's)")


def add_commands(sub: Subparsers) -> None:
    """Add ``token`` to the ``pldp`` parser, and ``invite``, ``codes`` and ``revoke-codes`` to its
    ``campaign`` command (added before, by :mod:`pldp.cli.service`)."""
    tok = sub.add_parser("token", help="tokens of a running collector: list, create, revoke, rotate (admin)")
    tok_sub = tok.add_subparsers(dest="action", required=True)
    _remote(
        tok_sub, "list", "every token's id, role, state, expiry, label and grants (never a secret)", _list
    ).add_argument("--json", action="store_true")
    make = _remote(tok_sub, "create", "a new analyst token granted some campaigns (printed once)", _create)
    make.add_argument("campaigns", nargs="*")
    make.add_argument("--label", default="analyst")
    make.add_argument("--expires", type=_duration, default=None, help="its lifetime: 12h, 30d (default 90d)")
    _remote(tok_sub, "revoke", "revoke an analyst token by its id (pldp token list)", _revoke).add_argument("id")
    rot = _remote(tok_sub, "rotate", "replace the admin token of --token-file with a new one (in that file)", _rotate)
    rot.add_argument("--expires", type=_duration, default=None, help="the new token's lifetime (default 365d)")
    new = tok_sub.add_parser("new", help="print a fresh random token (for pldp serve --admin-token-file)")
    new.set_defaults(func=_new)

    camp = _subcommands(sub.choices["campaign"])
    inv = _remote(camp, "invite", "issue one-time respondent codes of an invited campaign into a CSV (admin)", _invite)
    inv.add_argument("campaign")
    inv.add_argument("--count", type=int, required=True, help="how many codes (at most 100000 per call)")
    inv.add_argument("--out", required=True, help="the CSV to create: columns code and link (refused if it exists)")
    inv.add_argument("--expires", type=_duration, default=None, help="the codes' lifetime: 12h, 30d (default 30d)")
    inv.add_argument("--survey-url", default=None, help="the collector's public URL for the links (default --server)")
    _remote(camp, "codes", "how many codes are issued, used, usable, expired, revoked (admin)", _codes).add_argument(
        "campaign"
    )
    rev = _remote(
        camp, "revoke-codes", "revoke respondent codes: named, from a CSV, or every unused one (admin)", _revoke_codes
    )
    rev.add_argument("campaign")
    rev.add_argument("--code", action="append", default=[], help="a code to revoke (repeatable)")
    rev.add_argument("--file", default=None, help="a CSV with a column code (as pldp campaign invite wrote it)")
    rev.add_argument("--unused", action="store_true", help="revoke every code not used yet")
