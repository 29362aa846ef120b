"""Scheduled rollover of a collector's reports into report files, and retention (``pldp serve
--export-dir DIR --export-every 1h [--retain-days N]``).

Every period, :class:`Exporter` writes each campaign's reports numbered above its *export
watermark* (:func:`pldp.service.store.watermark`) into report files
(:func:`pldp.deploy.files.write_reports`: ``DIR/spec=<id>/day=<date>/<name>.parquet``). A file
holds one *run* (:func:`pldp.service.store.next_run`): every report numbered ``first`` to
``last``, all received on one day (and for one round of a recurring campaign, whose files go
into the layout with rounds, ``DIR/spec=<id>/round=<n>/day=<date>/``, and name their round). Its
name is :func:`file_name` of the store's id and that range, and its metadata says the same
(:mod:`pldp.deploy.origin`). Reports are numbered in arrival order, so a period's reports make
one file per day, or a few more when a day has more than :data:`FILE_CAP` of them (or late
reports of the round before, :mod:`pldp.service.rounds`).

The export by day (``pldp campaign export --out-dir``, :mod:`pldp.service.dayfiles`) writes the
same layout under other names, and its files name their store and report numbers too. The two
may share a directory: ``pldp aggregate`` finds the reports that two files of one store both
hold from their footers, and counts each once (``docs/scaling.md``).

Why no report is lost or exported twice
    A file is written whole (temporary name, ``fsync``, link, ``fsync`` of the directory) before
    the writer transaction that records it (:func:`record_export`) advances the watermark to its
    ``last``. A crash in between leaves a file that is not recorded. The next round starts from
    the same watermark, hence at the same ``first``, and finds that file by its name's prefix.
    It then checks that the file holds exactly the stored reports numbered ``first`` to the
    file's ``last`` (ids and payloads), and records it instead of writing another. The run may
    have grown meanwhile (reports of the same day arrived after the crash); those follow in a
    file of their own. A file that holds anything else is an error, and nothing is recorded.
    ``tests/test_service_rollover.py`` kills the collector with SIGKILL between the two steps
    (the hook :data:`PAUSE_ENV`).

One exporter per store
    ``pldp serve --workers N`` starts N processes, each with an :class:`Exporter`. Only the one
    that holds an exclusive ``flock`` on ``<db>-export.lock`` exports. It takes the lock without
    waiting (``LOCK_NB``) and keeps it while it lives, and the kernel releases it when the
    process dies, so another process takes over at its next round. The record job also checks
    that the watermark is still where the round read it.

Retention
    With ``--retain-days N``, a round then deletes every report that is exported (at or below
    the watermark) and was received more than N days ago (:func:`delete_exported`). The running
    tally keeps counting them. A deletion counts itself in ``retention.generation``, and every
    writer drops its index of the campaign's ids when it sees the generation move
    (:mod:`pldp.service.writer`). A retry of a deleted report is therefore a new report: the
    idempotency window is the retention window. A free-text campaign's reports are kept: its
    estimate discovers its answers from them.
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from pldp.deploy import Spec
from pldp.deploy import files as report_files
from pldp.deploy.origin import Origin
from pldp.service import store
from pldp.service.jobs import Context
from pldp.service.writer import Writer

__all__ = [
    "FILE_CAP",
    "PAUSE_ENV",
    "ExportError",
    "Exporter",
    "Rollover",
    "Round",
    "delete_exported",
    "file_name",
    "parse_duration",
    "record_export",
]

#: Most reports in one rollover file, a day with more is split into several files. One Parquet row
#: group (:data:`pldp.deploy.files.ROW_GROUP`); reading them from the store peaks at about 200 MB.
FILE_CAP = 1 << 20
#: A number of seconds in this environment variable makes the exporter sleep after writing each file
#: and before recording it: the window in which the crash test kills the collector.
PAUSE_ENV = "PLDP_EXPORT_PAUSE"

_LOG = logging.getLogger(__name__)
_NAME = re.compile(r"(?P<store>[0-9a-f]{16})-(?P<first>\d{12})-(?P<last>\d{12})")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class ExportError(RuntimeError):
    """A report file is not what the store says it should be; nothing was recorded."""


def parse_duration(text: str) -> float:
    """Seconds in a duration such as ``30s``, ``5m``, ``1h`` or ``1d``.

    Raises
    ------
    ValueError
        For anything else, or a duration that is not positive.
    """
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd])", text.strip())
    if match is None or float(match[1]) <= 0:
        raise ValueError(f"expected a positive duration such as 30s, 5m, 1h or 1d, got {text!r}")
    return float(match[1]) * _UNITS[match[2]]


def file_name(store_id: str, first: int, last: int) -> str:
    """The name (without ``.parquet``) of the file of a store's reports numbered ``first`` to ``last``.

    The store's id keeps the files of several collectors apart in one directory. The numbers
    have 12 digits, so names sort in order.
    """
    return f"{store_id}-{first:012d}-{last:012d}"


@dataclass(frozen=True)
class Rollover:
    """What ``pldp serve`` exports where, how often, and how long it keeps exported reports.

    Parameters
    ----------
    root : Path
        The top of the report files' layout (:mod:`pldp.deploy.files`).
    every : float
        Seconds between rounds (the first round runs at start).
    retain_days : int, optional
        Delete exported reports received more than this many days ago; None keeps every report.
    """

    root: Path
    every: float = 3600.0
    retain_days: int | None = None

    def __post_init__(self) -> None:
        if self.every <= 0:
            raise ValueError(f"the export period must be positive, got {self.every}")
        if self.retain_days is not None and self.retain_days < 0:
            raise ValueError(f"--retain-days must be 0 or more, got {self.retain_days}")


@dataclass
class Round:
    """What one round did: the files written, the files of an earlier crash recorded, reports deleted."""

    written: list[Path] = field(default_factory=list)
    adopted: list[Path] = field(default_factory=list)
    deleted: int = 0


def record_export(ctx: Context, key: int, after: int, first: int, last: int, day: int, path: str, n: int) -> None:
    """Record a written report file and advance the campaign's watermark from ``after`` to ``last``
    (a writer job).

    Raises
    ------
    ExportError
        When the watermark is no longer ``after`` (another exporter got there first).
    """
    now = store.watermark(ctx.conn, key)
    if now != after:
        raise ExportError(f"the export watermark moved from {after} to {now} during the round; not recording {path}")
    store.insert_export(ctx.conn, key, first, last, day, path, n)


def delete_exported(ctx: Context, key: int, cutoff: int) -> int:
    """Delete the campaign's exported reports received before day ``cutoff``; return how many (a
    writer job). The deletion is counted in ``retention`` (see module doc)."""
    upto = store.watermark(ctx.conn, key)
    return store.delete_before(ctx.conn, key, upto, cutoff)


class Exporter:
    """The rollover of one collector process (see module doc).

    Parameters
    ----------
    db : str or Path
        The store.
    rollover : Rollover
        Where, how often, and how long to retain.

    :meth:`start` runs rounds in a thread; :meth:`run_once` runs one round here (tests).
    """

    def __init__(self, db: str | Path, rollover: Rollover) -> None:
        self.db = Path(db)
        self.rollover = rollover
        self._lock_file = open(f"{db}-export.lock", "a+b")
        self._holds_lock = False
        self._writer: Writer | None = None  # made when this process takes the export lock
        self._conn: store.Connection | None = None
        self._specs: dict[str, Spec] = {}  # a spec is verified on reading: once per campaign, not per round
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ running
    def start(self) -> Exporter:
        """Run a round now and then every ``rollover.every`` seconds, in a thread, until :meth:`close`."""
        self._thread = threading.Thread(target=self._loop, name="pldp-rollover", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop after the current file, close the connections and release the export lock."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._writer is not None:
            self._writer.close()
        if self._conn is not None:
            self._conn.close()
        self._lock_file.close()  # releases the flock

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.run_once()
            except Exception:  # a full disk, a file that does not match: the next round tries again
                _LOG.exception("the report rollover failed; it is tried again in the next round")
            if self._stop.wait(self.rollover.every):
                return

    def _take_lock(self) -> bool:
        if not self._holds_lock:
            try:
                fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # another process exports
                return False
            self._holds_lock = True
        return True

    def run_once(self) -> Round | None:
        """One round: export every campaign's new reports, then apply retention. None when another
        process holds the export lock (it exports instead)."""
        if not self._take_lock():
            return None
        if self._writer is None:
            self._writer = Writer(self.db, checkpoints=False)
            self._conn = store.connect(self.db)
        assert self._conn is not None
        done = Round()
        sid = store.store_id(self._conn)
        for row in store.campaigns(self._conn):
            key = store.campaign_key(self._conn, row.id)
            assert key is not None
            if row.id not in self._specs:
                self._specs[row.id] = row.spec()
            self._export(self._specs[row.id], key, sid, done, row.rounds != "once")
            free_text = self._specs[row.id].free_text  # its estimate reads its stored reports
            if self.rollover.retain_days is not None and not free_text and not self._stop.is_set():
                cutoff = store.today() - self.rollover.retain_days
                delete = functools.partial(delete_exported, key=key, cutoff=cutoff)
                done.deleted += self._writer.run(delete, timeout=None)  # 10^6 reports: about a second
        return done

    # ------------------------------------------------------------------ one campaign
    def _export(self, spec: Spec, key: int, sid: str, done: Round, recurs: bool = False) -> None:
        """Write and record the campaign's files above its watermark, one run at a time (a
        recurring campaign's files go into the layout with rounds, and name their round)."""
        assert self._conn is not None and self._writer is not None
        pause = float(os.environ.get(PAUSE_ENV) or 0)
        while not self._stop.is_set():
            after = store.watermark(self._conn, key)
            run = store.next_run(self._conn, key, after, FILE_CAP)
            if run is None:
                return
            day, turn, first, last = run
            part = turn if recurs else None
            folder = report_files.partition_dir(self.rollover.root, spec.id, day, part)
            earlier = sorted(folder.glob(f"{sid}-{first:012d}-*.parquet"))
            if earlier:  # written by a round that crashed before recording it
                path, last, n = self._check(earlier, spec, first, last)
                done.adopted.append(path)
            else:
                batch, numbers = store.stored_numbered(self._conn, spec, seqs=(first, last))
                name, origin = file_name(sid, first, last), Origin.of(sid, numbers)
                path = report_files.write_reports(batch, self.rollover.root, day, name, origin=origin, round=part)
                n = len(batch)
                done.written.append(path)
                if pause and self._stop.wait(pause):  # the crash test's window (PAUSE_ENV)
                    return
            record = functools.partial(
                record_export, key=key, after=after, first=first, last=last, day=day, path=str(path), n=n
            )
            self._writer.run(record, timeout=None)

    def _check(self, found: list[Path], spec: Spec, first: int, last: int) -> tuple[Path, int, int]:
        """The unrecorded file of the run starting at ``first``, its last ``seq`` and its size, after
        checking that it holds exactly the stored reports it names.

        Raises
        ------
        ExportError
            When there are several such files, or one holds other reports.
        """
        import pyarrow.parquet as pq

        assert self._conn is not None
        if len(found) > 1:
            raise ExportError(f"several unrecorded report files start at report {first}: {found}")
        path = found[0]
        match = _NAME.fullmatch(path.stem)
        end = -1 if match is None else int(match["last"])
        if not first <= end <= last:
            raise ExportError(f"{path} names reports up to {end}; the run received that day is {first} to {last}")
        want = store.stored_batch(self._conn, spec, seqs=(first, end))
        got = pq.read_table(path)
        if not got.equals(want.to_arrow()):  # ids, spec and every payload column, in order
            raise ExportError(f"{path} does not hold exactly the stored reports {first} to {end}; not recording it")
        return path, end, len(want)
