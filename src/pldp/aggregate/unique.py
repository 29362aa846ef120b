"""Every report id once across all the files (``unique_ids``): the ids partitioned by hash on disk.

Report ids are 128 random bits, so the first bits of an id are a hash of it. Three steps, each
a set of tasks (on Dask or in this process):

1. **Spill, one task per row group** (:func:`spill_ids`). A task reads the row group's ``id``
   column (16 bytes a report; the rows already known as repeats of a store are left out), and
   writes each id's two 8-byte words and its global row number to one ``.npy`` file in a
   scratch directory, ordered by partition, the id's first ``bits`` bits.
2. **Find the repeats, one task per partition** (:func:`partition_repeats`). A task loads its
   slice of every spilled file (about :data:`PARTITION_ROWS` rows, 24 bytes each) and sorts it
   (:func:`pldp.deploy.dedupe.repeated`). A repeated id lies in one partition, so the partitions'
   repeats are all the repeats; the first occurrence, in the order of the files and rows, is
   kept.
3. **Compare the copies** (:func:`rows_task`). The client reads the repeated rows and their first
   occurrences (ids and payloads) and refuses an id held with two payloads. Then the tally runs
   with the repeats skipped.

Cost: one read of the ids (16 bytes a report) and 24 bytes a report written and read back in
the scratch directory, a sort of n / 2^bits keys per partition task (memory about 60 bytes a
key), and reading the repeats twice. With a scheduler of other machines, the scratch directory
must be one that every worker sees.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from pldp.aggregate.parquet import open_parquet, read_rows, report_ids
from pldp.aggregate.parts import kept_rows
from pldp.deploy.dedupe import repeated
from pldp.deploy.spec import Spec
from pldp.deploy.wire import ReportBatch
from pldp.errors import ReportError

__all__ = ["PARTITION_ROWS", "partition_bits", "partition_repeats", "ranges_of", "rows_task", "spill_ids"]

#: Ids per partition task that the number of partitions aims at (about 200 MB spilled, 500 MB sorting).
PARTITION_ROWS = 1 << 23
_MAX_BITS = 16


def partition_bits(n: int) -> int:
    """Bits of an id that choose its partition, so that a partition holds about :data:`PARTITION_ROWS` ids."""
    return min(_MAX_BITS, max(0, math.ceil(math.log2(max(1, n) / PARTITION_ROWS))))


def spill_ids(
    spec: Spec, source: str, group: int, skip: np.ndarray | None, offset: int, out: str, bits: int
) -> np.ndarray:
    """Spill a row group's ids (step 1): write ``out`` and return where each partition starts in it.

    Parameters
    ----------
    spec : Spec
        The campaign's spec (unused; every task takes it first).
    source, group : str, int
        The file and its row group.
    skip : ndarray, optional
        The file's rows left out (:func:`pldp.aggregate.parts.kept_rows`).
    offset : int
        The global row number of the file's first row (the files' rows numbered in turn).
    out : str
        The ``.npy`` file to write: three rows of uint64 (the ids' first and last 8 bytes as
        machine words, the global rows), its columns ordered by partition, then row.
    bits : int
        The id bits that choose the partition.

    Returns
    -------
    ndarray of int64, shape (2^bits + 1,)
        Column ``bounds[p]`` of ``out`` is the first of partition ``p``.

    Raises
    ------
    ReportError
        An id is missing, or the row group cannot be read.
    """
    import pyarrow as pa

    with open_parquet(source) as pf:
        meta = pf.metadata
        first = sum(meta.row_group(g).num_rows for g in range(group))
        n = meta.row_group(group).num_rows
        try:
            column = pf.read_row_group(group, columns=["id"], use_threads=False).column("id")
        except (OSError, pa.ArrowException) as exc:
            raise ReportError(f"{source}: row group {group}: cannot be read: {exc}") from None
    kept = kept_rows(skip, first, n)
    rows = np.arange(first, first + n, dtype=np.int64) if kept is None else first + kept
    ids = report_ids(column if kept is None else column.take(pa.array(kept)), rows, source)
    halves = np.ascontiguousarray(ids).view(np.uint64)  # (n, 2) words: equal ids, equal words (no copy)
    table = np.empty((3, len(rows)), dtype=np.uint64)  # one column a row: a partition's slice is contiguous
    part = np.zeros(len(rows), dtype=np.uint16)
    if bits:  # the id's first ``bits`` bits
        part = ((ids[:, 0].astype(np.uint16) << 8) | ids[:, 1]) >> np.uint16(16 - bits)
        order = np.argsort(part, kind="stable")  # a radix sort; rows stay in order within a partition
        part, halves, rows = part[order], np.take(halves, order, axis=0), rows[order]
    table[:2] = halves.T
    table[2] = rows + offset
    np.save(out, table, allow_pickle=False)
    return np.searchsorted(part, np.arange((1 << bits) + 1), side="left").astype(np.int64)


def partition_repeats(spec: Spec, pieces: list[tuple[str, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The repeats of one partition (step 2): global rows of every repeat and of its first occurrence.

    ``pieces`` are the partition's slices ``(file, start, stop)`` of the spilled files, in the
    order of the global rows.
    """
    spilled = [np.load(path, mmap_mode="r") for path, a, b in pieces if b > a]
    spans = [(a, b) for _, a, b in pieces if b > a]

    def column(k: int) -> np.ndarray:
        """Row ``k`` of the partition's slices (only the pages it is in are read)."""
        cols = [m[k, a:b] for m, (a, b) in zip(spilled, spans, strict=True)]
        return np.concatenate(cols) if cols else np.zeros(0, dtype=np.uint64)

    hi = column(0)
    ordered = np.sort(hi)
    if not (ordered[1:] == ordered[:-1]).any():  # no first half twice: no repeat (the last halves are not read)
        none = np.zeros(0, dtype=np.int64)
        return none, none
    again, first = repeated(hi, column(1))
    rows = column(2)
    return rows[again].astype(np.int64), rows[first].astype(np.int64)


def rows_task(spec: Spec, source: str, rows: np.ndarray) -> ReportBatch:
    """The reports at ``rows`` (increasing) of a file, ids and payloads (step 3)."""
    with open_parquet(source) as pf:
        return read_rows(spec, pf, rows, source)


def ranges_of(rows: np.ndarray) -> np.ndarray:
    """Increasing row numbers as ``[start, stop)`` ranges of consecutive rows, shape (k, 2)."""
    if rows.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    starts = rows[np.concatenate(([0], breaks))]
    stops = rows[np.concatenate((breaks - 1, [rows.size - 1]))] + 1
    return np.stack([starts, stops], axis=1).astype(np.int64)


def spill_name(folder: str | Path, file: int, group: int) -> str:
    """The spill file of a row group."""
    return str(Path(folder) / f"{file:07d}-{group:06d}.npy")
