"""``pldp datasets list``: the bundled datasets."""

from __future__ import annotations

import argparse
import json

from pldp._text import text_table
from pldp.cli.options import Subparsers

__all__ = ["add_commands"]


def _datasets_list(args: argparse.Namespace) -> int:
    from pldp.datasets.real import list_datasets

    infos = list_datasets()
    if args.json:
        print(json.dumps([vars(i) if not hasattr(i, "_asdict") else i._asdict() for i in infos], indent=2))
        return 0
    rows = [[i.name, f"{i.users:,}", f"{i.items:,}", f"{i.records:,}", i.source] for i in infos]
    print(text_table(rows, ["dataset", "users", "items", "records", "source"]))
    return 0


def add_commands(sub: Subparsers) -> None:
    """Add ``datasets list`` to the ``pldp`` parser."""
    ds = sub.add_parser("datasets", help="bundled datasets")
    ds_sub = ds.add_subparsers(dest="action", required=True)
    ds_list = ds_sub.add_parser("list", help="users, items, records and source of each dataset")
    ds_list.add_argument("--json", action="store_true")
    ds_list.set_defaults(func=_datasets_list)
