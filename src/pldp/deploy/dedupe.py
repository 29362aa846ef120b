"""Reports from several sources with every report id counted once: exactly-once across collectors.

A collector counts a report once however often it is retried (its store keys reports by id). A
report retried to *another* collector is stored by both, because nothing ties their stores. Each
collector's running tally is then right for what it received, but the sum of the collectors'
tallies counts such a report twice. Two more sources of the same report twice are a collector's
report files that overlap (a day exported with ``--out-dir`` and by the rollover), and a retry
that comes after ``--retain-days`` deleted the report.

A report id is 128 random bits drawn once per report, so two reports with the same id are the
same report. The exact merge of any set of report files therefore keeps one report per id
(:func:`unique_reports`, :func:`read_unique`) and decodes that. The same id with two payloads is
no retry: it is refused, as the collector refuses it (409).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from pldp.deploy.spec import Spec
from pldp.deploy.wire import ReportBatch
from pldp.errors import ReportError

__all__ = ["payload_difference", "read_unique", "repeated", "take", "unique_reports"]


def repeated(hi: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where 128-bit keys repeat: the positions of every repeat and of its first occurrence.

    Parameters
    ----------
    hi, lo : ndarray of uint64
        The keys' two halves (a report id's first and last 8 bytes as words), one per row.

    Returns
    -------
    again, first : ndarray of intp
        ``again[i]`` is a row whose key occurs at an earlier row, ``first[i]`` the earliest row of
        that key; ``again`` is in increasing order of key, then row.

    One sort of ``hi`` (values only, which numpy vectorises: several times faster than an
    argsort) finds the first halves that occur twice; only the rows that hold one of those (for
    random ids: the repeats) are sorted by the whole key and the row. Exact for any keys.
    """
    n = int(hi.size)
    none = np.zeros(0, dtype=np.intp)
    if n < 2:
        return none, none
    ordered = np.sort(hi)
    shared = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    if not shared.size:
        return none, none
    at = np.minimum(np.searchsorted(shared, hi), shared.size - 1)
    rows = np.flatnonzero(shared[at] == hi)
    rows = rows[np.lexsort((rows, lo[rows], hi[rows]))]  # by key, then row
    again = np.zeros(rows.size, dtype=bool)
    again[1:] = (hi[rows[1:]] == hi[rows[:-1]]) & (lo[rows[1:]] == lo[rows[:-1]])
    head = rows[np.maximum.accumulate(np.where(again, 0, np.arange(rows.size)))]
    return rows[again], head[again]


def take(batch: ReportBatch, rows: np.ndarray) -> ReportBatch:
    """The reports of ``batch`` at ``rows``, in that order."""
    return ReportBatch(batch.spec, batch.ids[rows], {k: v[rows] for k, v in batch.columns.items()}, batch.root)


def payload_difference(a: ReportBatch, b: ReportBatch) -> tuple[int, str] | None:
    """The first row, and the column, where two equally long batches' payloads differ; None if none.

    Rows of a mixed leveled column that carry no bits (null in a file) compare as zeros.
    """
    first: tuple[int, str] | None = None
    for c in a.root.columns():
        differs = a.file_values(c) != b.file_values(c)
        if differs.ndim > 1:
            differs = differs.any(axis=1)
        if differs.any():
            row = int(np.flatnonzero(differs)[0])
            if first is None or row < first[0]:
                first = (row, c.name)
    return first


def unique_reports(batches: Sequence[ReportBatch]) -> tuple[ReportBatch, int]:
    """The reports of ``batches`` with each id once (its first occurrence, in input order), and
    how many were dropped as repeats.

    Vectorised: one sort of the ids (:func:`repeated`), then a comparison of every repeat's
    payload columns with its first occurrence's (:func:`payload_difference`).

    Raises
    ------
    ReportError
        When the batches are of different specs (or there are none), or an id occurs with two
        different payloads.
    """
    if not batches:
        raise ReportError("no batches of reports to merge")
    first = batches[0]
    if any(b.spec != first.spec for b in batches):
        raise ReportError(f"the batches are of several specs: {sorted({b.spec for b in batches})}")
    ids = np.concatenate([np.ascontiguousarray(b.ids, dtype=np.uint8) for b in batches])
    cols = {name: np.concatenate([b.columns[name] for b in batches]) for name in first.columns}
    merged = ReportBatch(first.spec, ids, cols, first.root)
    n = len(merged)
    if n == 0:
        return merged, 0
    halves = ids.view(">u8").reshape(n, 2)
    again, original = repeated(halves[:, 0], halves[:, 1])
    differs = payload_difference(take(merged, again), take(merged, original))
    if differs is not None:
        bad = int(again[differs[0]])
        raise ReportError(f"report id {ids[bad].tobytes().hex()} is held twice with different payloads ({differs[1]})")
    keep = np.ones(n, dtype=bool)
    keep[again] = False
    return take(merged, np.flatnonzero(keep)), int(again.size)


def read_unique(paths: Iterable[str | Path], spec: Spec) -> tuple[ReportBatch, int]:
    """Read report files of ``spec`` (Parquet, ``docs/wire-format.md`` §5) and keep each report id
    once (:func:`unique_reports`); return the reports and how many repeats were dropped.

    ``pldp.decode(spec, reports)`` of the result is the exact tally of the reports the files hold.
    For files beyond memory, ``pldp aggregate --unique-ids`` (:func:`pldp.aggregate.aggregate`
    with ``unique_ids=True``) counts every id once by partitioning the ids on disk.
    """
    import pyarrow.parquet as pq

    batches = [ReportBatch.from_arrow(pq.read_table(p), spec.root, spec.id) for p in paths]
    if not batches:
        return ReportBatch.from_json([], spec.root, spec.id), 0
    return unique_reports(batches)
