"""A campaign's stored reports as report files, one per day: ``pldp campaign export ID --out-dir DIR``.

The files go into the layout of :mod:`pldp.deploy.files`
(``DIR/spec=<id>/day=<YYYY-MM-DD>/<name>.parquet``; a recurring campaign's one file per round and
day, ``DIR/spec=<id>/round=<n>/day=<YYYY-MM-DD>/<name>.parquet``, naming its round). Every file of
one collector has the same name, :func:`day_file_name` of the store's id (``GET
/v1/campaigns/{id}/days`` gives it), so:

* the files of several collectors can share ``DIR`` (each store has its own id);
* a second export of the same campaign into the same ``DIR`` is refused before anything is
  written, instead of leaving two files whose reports overlap. Export a day that is still
  receiving reports into a new directory, or remove its old file first.

The rollover of ``pldp serve --export-dir`` (:mod:`pldp.service.rollover`) writes the same layout
under other names (a range of report numbers), so the two may share ``DIR``: every file says
which store's reports, by number, it holds (:mod:`pldp.deploy.origin`; the collector's export
sends them), and ``pldp aggregate`` counts a report that a day's file and a rollover file both
hold once. (A collector older than that sends no numbers; its files are then written without
them, and ``pldp aggregate`` says so.)
"""

from __future__ import annotations

import io
from pathlib import Path

from pldp.deploy import ReportBatch
from pldp.deploy import files as report_files
from pldp.deploy.origin import Origin
from pldp.deploy.remote import Collector
from pldp.errors import ReportError

__all__ = ["day_file_name", "export_days"]


def day_file_name(store_id: str) -> str:
    """The name (without ``.parquet``) of a collector's file of one day."""
    return f"{store_id}-day"


def export_days(
    collector: Collector,
    campaign_id: str,
    root: str | Path,
    days: list[str] | None = None,
    rounds: list[int] | None = None,
) -> list[Path]:
    """Write the campaign's stored reports under ``root``, one file per day (and round, of a
    recurring campaign); return the files.

    Parameters
    ----------
    collector : Collector
        A client of the collector with an analyst token granted the campaign.
    campaign_id : str
        The campaign.
    root : str or Path
        The top of the layout (created if missing).
    days : list of str, optional
        Only these days (``YYYY-MM-DD``); default every day with stored reports.
    rounds : list of int, optional
        Only these rounds; default every round.

    Raises
    ------
    FileExistsError
        When a file to be written exists already (nothing is written then).
    ReportError
        When the collector's export names malformed report numbers or another store.
    """
    import pyarrow.parquet as pq

    listing = collector.days(campaign_id)
    recurs = listing.get("rounds", "once") != "once"
    stored = [(d["day"], int(d.get("round", 1))) for d in listing["days"]]
    if days is not None:  # a day asked for that holds no report still gets its (empty) file
        stored = [(day, turn) for day in days for turn in ({t for d, t in stored if d == day} or {1})]
    wanted = [(day, turn) for day, turn in stored if rounds is None or turn in rounds]
    name = day_file_name(listing["store"])
    spec = collector.spec(campaign_id)

    def place(day: str, turn: int) -> Path:
        return report_files.partition_dir(root, spec.id, report_files.parse_day(day), turn if recurs else None)

    targets = [(day, turn, place(day, turn)) for day, turn in wanted]
    taken = [p for _, _, folder in targets if (p := folder / f"{name}.parquet").exists()]
    if taken:
        raise FileExistsError(f"refusing to overwrite report files: {', '.join(map(str, taken))}")
    out = []
    for day, turn, _ in targets:
        part = turn if recurs else None
        table = pq.read_table(io.BytesIO(collector.export(campaign_id, day, part)))
        batch = ReportBatch.from_arrow(table, spec.root, spec.id)
        origin = Origin.from_metadata(table.schema.metadata, table.num_rows)
        if origin is not None and origin.store != listing["store"]:
            raise ReportError(f"the export of {day} names store {origin.store}, the collector is {listing['store']}")
        number = report_files.parse_day(day)
        out.append(report_files.write_reports(batch, root, number, name, origin=origin, round=part))
    return out
