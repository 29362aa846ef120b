"""``pldp campaign round`` (open the next round of a campaign with manual rounds, admin) and ``pldp
campaign series`` (a recurring campaign's estimate round by round, as a text table; analyst).

Rounds are the collector's (``docs/collector.md``, "Recurring campaigns"): ``pldp campaign create
spec.json --rounds daily|weekly|manual`` makes a campaign recur.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

from pldp.cli.connect import collector_from_args, iso_time
from pldp.methods import method_help

__all__ = ["add_commands", "series_text"]

_SCHEDULE_WORDS = {
    "once": "one round (the campaign does not recur)",
    "daily": "daily rounds",
    "weekly": "weekly rounds",
    "manual": "rounds opened by the admin",
}


def _when(seconds: float, with_time: bool) -> str:
    moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return moment.strftime("%Y-%m-%d %H:%M") if with_time else moment.strftime("%Y-%m-%d")


def series_text(out: dict[str, Any]) -> str:
    """The lines ``pldp campaign series`` prints: a header, then per attribute a table with a row per
    round (its start in UTC, its reports, and per answer the share and its interval)."""
    level = out["level"]
    lines = [
        f"campaign {out['campaign']}: {_SCHEDULE_WORDS.get(out['rounds'], out['rounds'])}, now round {out['round']}; "
        f"method {out['method']}, {level:.0%} intervals"
    ]
    points = out["series"]
    with_time = out["rounds"] in ("manual", "once")
    first = next((p["attributes"] for p in points if p["attributes"]), None)
    if first is None:
        return "\n".join([*lines, "no reports in any round yet"])
    for k, part in enumerate(first):
        if part["name"]:
            lines += ["", part["name"]]
        cells = [["round", "started (UTC)", "n", *map(str, part["labels"])]]
        for p in points:
            row = [str(p["round"]), _when(p["started_at"], with_time), f"{p['n']:,}"]
            if p["attributes"] is None:
                row += ["-"] * len(part["labels"])
            else:
                mine = p["attributes"][k]
                row += [
                    f"{f:.3f} [{lo:.3f}, {hi:.3f}]"
                    for f, lo, hi in zip(mine["frequencies"], mine["ci_low"], mine["ci_high"], strict=True)
                ]
            cells.append(row)
        widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
        for r in cells:
            lines.append(
                "  ".join(
                    c.rjust(w) if i < 3 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
                ).rstrip()
            )
    return "\n".join(lines)


def _round(args: argparse.Namespace) -> int:
    out = collector_from_args(args).open_round(args.campaign)
    if args.json:
        print(json.dumps(out))
        return 0
    accepts = " or ".join(map(str, out["accepts"]))
    print(
        f"campaign {out['campaign']}: round {out['round']} opened at {iso_time(out['started_at'])}; "
        f"reports may answer round {accepts} now"
    )
    return 0


def _series(args: argparse.Namespace) -> int:
    out = collector_from_args(args).series(args.campaign, args.method, args.level)
    print(json.dumps(out, indent=2) if args.json else series_text(out))
    return 0


def add_commands(command: Callable[[str, str, Any], argparse.ArgumentParser]) -> None:
    """Add ``round`` and ``series`` with ``command`` (the ``campaign`` group's maker of remote commands)."""
    opener = command("round", "open the next round of a campaign with manual rounds (admin)", _round)
    opener.add_argument("campaign")
    opener.add_argument("--json", action="store_true", help="the collector's answer as JSON")
    ser = command("series", "a recurring campaign's estimate round by round, as a table (analyst)", _series)
    ser.add_argument("campaign")
    ser.add_argument("--method", default="unbiased", help=method_help())
    ser.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals (default 0.95)")
    ser.add_argument("--json", action="store_true", help="the collector's answer as JSON")
