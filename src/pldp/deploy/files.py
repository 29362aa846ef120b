"""Report files: Parquet in the wire format's Arrow schema, partitioned by campaign, round and day.

A campaign's reports leave a collector as files (``pldp campaign export --out-dir``, ``pldp serve
--export-dir``) and are tallied where they lie (``pldp aggregate``). The layout is Hive-style,
so pyarrow's datasets, DuckDB and Spark read it as a table partitioned by ``spec``, ``round``
and ``day``::

    ROOT/spec=<spec id>/round=<n>/day=<YYYY-MM-DD>/<name>.parquet    (a recurring campaign)
    ROOT/spec=<spec id>/day=<YYYY-MM-DD>/<name>.parquet              (one that does not recur)

A campaign's id is its spec's id (the hash of its content), so the campaign and its spec id are
one partition level. The round level is there only for a campaign that recurs (whose rounds the
collector numbers, :mod:`pldp.service.rounds`); the layout without it, the only one before rounds
existed, is read as well. Every file holds the reports of one spec (and of one round, in the
layout with rounds). Its columns are those of ``docs/wire-format.md`` §5, and its schema metadata
names the spec and, in a file a collector wrote, the store and the store's report numbers it holds
(:mod:`pldp.deploy.origin`), so that files which share a directory can be proven disjoint or
counted once, and the round of its reports (``pldp.round``, :func:`round_of`), which ``pldp
aggregate --round`` selects by. :func:`write_reports` writes a
file atomically: a temporary name, ``fsync``, then a rename. A reader never sees half a file, and a
collector may delete the reports it exported once the call has returned.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import uuid
from pathlib import Path

from pldp.deploy.origin import Origin
from pldp.deploy.wire import ReportBatch
from pldp.errors import ParameterError, ReportError

__all__ = [
    "ROUND_KEY",
    "day_label",
    "layouts",
    "parse_day",
    "partition_dir",
    "report_files",
    "round_metadata",
    "round_of",
    "write_reports",
]

#: Reports per Parquet row group: the unit of work of an aggregation task.
ROW_GROUP = 1 << 20

#: The Parquet key-value metadata key of the round of a file's reports.
ROUND_KEY = b"pldp.round"

_EPOCH = dt.date(1970, 1, 1)
_SPEC_ID = re.compile(r"[0-9a-f]{32}")
_ROUND = re.compile(rb"[1-9][0-9]{0,8}")


def day_label(day: int) -> str:
    """The ISO date of ``day`` (days since 1970-01-01, UTC; :func:`pldp.service.store.today`)."""
    return (_EPOCH + dt.timedelta(days=int(day))).isoformat()


def parse_day(label: str) -> int:
    """Days since 1970-01-01 of an ISO date (``YYYY-MM-DD``; the inverse of :func:`day_label`).

    Raises
    ------
    ValueError
        When ``label`` is not such a date.
    """
    if not isinstance(label, str) or len(label) != 10:
        raise ValueError(f"expected a day as YYYY-MM-DD, got {label!r}")
    return (dt.date.fromisoformat(label) - _EPOCH).days


def partition_dir(root: str | Path, spec_id: str, day: int, round: int | None = None) -> Path:
    """The directory of a campaign's reports received on ``day`` (of round ``round``, in a
    campaign that recurs)."""
    if _SPEC_ID.fullmatch(spec_id) is None:
        raise ParameterError(f"a spec id is 32 lower-case hex digits, got {spec_id!r}")
    spec = Path(root) / f"spec={spec_id}"
    if round is None:
        return spec / f"day={day_label(day)}"
    if isinstance(round, bool) or not isinstance(round, int) or round < 1:
        raise ParameterError(f"a round is a number 1, 2, ..., got {round!r}")
    return spec / f"round={round}" / f"day={day_label(day)}"


def round_metadata(round: int | None) -> dict[bytes, bytes]:
    """The key-value metadata that names the round of a file's reports (none for None)."""
    return {} if round is None else {ROUND_KEY: str(int(round)).encode()}


def round_of(meta: dict[bytes, bytes] | None) -> int | None:
    """The round a file's key-value metadata names (``pldp.round``), or None when it names none.

    Raises
    ------
    ReportError
        When it names something that is not a round number.
    """
    value = (meta or {}).get(ROUND_KEY)
    if value is None:
        return None
    if _ROUND.fullmatch(value) is None:
        raise ReportError(f"the file's pldp.round is not a round number (1, 2, ...): {value[:40]!r}")
    return int(value)


def write_reports(
    batch: ReportBatch,
    root: str | Path,
    day: int,
    name: str | None = None,
    row_group: int = ROW_GROUP,
    *,
    origin: Origin | None = None,
    round: int | None = None,
) -> Path:
    """Write ``batch`` as one Parquet file in its partition under ``root``; return its path.

    Parameters
    ----------
    batch : ReportBatch
        The reports (of one spec).
    root : str or Path
        The top of the layout (created if missing).
    day : int
        The day the reports were received (days since 1970-01-01).
    name : str, optional
        The file's name without suffix (default: a random UUID). An existing file is never
        overwritten.
    row_group : int
        Reports per row group.
    origin : Origin, optional
        The store that holds these reports and their numbers there, written into the file's
        metadata (:mod:`pldp.deploy.origin`); a collector's files always say it.
    round : int, optional
        The round of a recurring campaign the reports answer: the file goes into the layout with
        rounds, and its metadata names the round (:func:`round_of`).

    Raises
    ------
    FileExistsError
        When a file of that name already exists.
    ValueError
        When ``origin`` names another number of reports than the batch holds.
    """
    import pyarrow.parquet as pq

    table = batch.to_arrow()
    if origin is not None:
        if origin.rows != len(batch):
            raise ValueError(f"the origin names {origin.rows} reports, the batch holds {len(batch)}")
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **origin.metadata()})
    folder = partition_dir(root, batch.spec, day, round)
    if round is not None:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **round_metadata(round)})

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name or uuid.uuid4().hex}.parquet"
    if path.exists():
        raise FileExistsError(path)
    tmp = folder / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        with open(tmp, "wb") as sink:
            pq.write_table(table, sink, row_group_size=max(1, int(row_group)))
            sink.flush()
            os.fsync(sink.fileno())
        os.link(tmp, path)  # fails if the name was taken meanwhile: never overwrite a file
    finally:
        tmp.unlink(missing_ok=True)
    directory = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(directory)  # the new name is durable too
    finally:
        os.close(directory)
    return path


def report_files(root: str | Path, spec_id: str | None = None, round: int | None = None) -> list[Path]:
    """The report files under ``root`` (of one spec if given), in both layouts, sorted by partition
    and name. With ``round``, the layout with rounds gives only that round's files (a file in the
    layout without rounds may still name one in its metadata: it is listed too)."""
    found: list[Path] = []
    for pattern in layouts(spec_id or "*", round):
        found += (p for p in Path(root).glob(pattern) if not p.name.startswith("."))
    return sorted(found)


def layouts(spec_id: str, round: int | None = None) -> tuple[str, str]:
    """The glob patterns of a spec's report files under a root: with rounds (of ``round`` if given)
    and without."""
    turn = "*" if round is None else str(int(round))
    return f"spec={spec_id}/round={turn}/day=*/*.parquet", f"spec={spec_id}/day=*/*.parquet"
