"""Every report id once across all the files (``unique_ids``): the ids partitioned by hash on disk.

Report ids are 128 random bits, so the first bits of an id are a hash of it, and so are its
first 8 bytes. Three steps, each a set of tasks (on Dask or in this process):

1. **Spill, one task per row group** (:func:`spill_ids`). A task reads the row group's ``id``
   column (16 bytes a report; the rows already known as repeats of a store are left out). It
   writes each id's first 8 bytes (as a machine word) and its row within the row group, 12
   bytes a report, to two ``.npy`` files in a scratch directory, ordered by partition: the id's
   first ``bits`` bits.
2. **Find the candidates, one task per partition** (:func:`partition_candidates`). A task
   loads its slice of every spilled file's words (about :data:`PARTITION_ROWS`, 8 bytes each)
   and sorts them by value. A word that occurs twice marks its rows as candidates; only then are
   their row numbers read. A repeated id lies in one partition, so the partitions' candidates
   hold every repeat (and, for random ids, almost nothing else).
3. **Decide, on the client** (:func:`rows_task`). The candidates' whole ids and payloads are read,
   :func:`pldp.deploy.dedupe.repeated` finds the repeats among them exactly, and an id held with
   two payloads is refused. The first occurrence, in the order of the files and rows, is kept;
   the tally skips the others.

Cost: one read of the ids (16 bytes a report), 12 bytes a report written and 8 read back from
the scratch directory, a sort of n / 2^bits words per partition task (memory about 30 bytes a
report there), and reading the candidates twice. With a scheduler of other machines, the scratch
directory must be one that every worker sees.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from pldp.aggregate.parquet import open_parquet, read_rows, report_ids
from pldp.aggregate.parts import kept_rows
from pldp.deploy.spec import Spec
from pldp.deploy.wire import ReportBatch
from pldp.errors import ReportError

__all__ = ["PARTITION_ROWS", "partition_bits", "partition_candidates", "ranges_of", "rows_task", "spill_ids"]

#: Ids per partition task that the number of partitions aims at (about 270 MB of words to sort).
PARTITION_ROWS = 1 << 25
_MAX_BITS = 16


def partition_bits(n: int) -> int:
    """Bits of an id that choose its partition, so that a partition holds about :data:`PARTITION_ROWS` ids."""
    return min(_MAX_BITS, max(0, math.ceil(math.log2(max(1, n) / PARTITION_ROWS))))


def spill_ids(spec: Spec, source: str, group: int, skip: np.ndarray | None, out: str, bits: int) -> np.ndarray:
    """Spill a row group's ids (step 1): write ``out.words.npy`` and ``out.rows.npy``, and return
    where each partition starts in them.

    Parameters
    ----------
    spec : Spec
        The campaign's spec (unused; every task takes it first).
    source, group : str, int
        The file and its row group.
    skip : ndarray, optional
        The file's rows left out (:func:`pldp.aggregate.parts.kept_rows`).
    out : str
        The two files' common prefix. ``words``: the ids' first 8 bytes as uint64; ``rows``: their
        rows within the row group as uint32; both ordered by partition, then row.
    bits : int
        The id bits that choose the partition.

    Returns
    -------
    ndarray of int64, shape (2^bits + 1,)
        Entry ``bounds[p]`` of the two files is the first of partition ``p``.

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
    if n >= 1 << 32:
        raise ReportError(f"{source}: row group {group} holds {n:,} reports, more than --unique-ids takes (2^32)")
    kept = kept_rows(skip, first, n)
    local = np.arange(n, dtype=np.uint32) if kept is None else kept.astype(np.uint32)
    ids = report_ids(column if kept is None else column.take(pa.array(kept)), first + local.astype(np.int64), source)
    ids = np.ascontiguousarray(ids)
    words = np.ascontiguousarray(ids.view(np.uint64)[:, 0])  # equal ids, equal words
    part = np.zeros(len(local), dtype=np.uint16)
    if bits:  # the id's first ``bits`` bits
        part = (ids.view(">u2")[:, 0] >> (16 - bits)).astype(np.uint16)
        order = np.argsort(part, kind="stable")  # a radix sort; rows stay in order within a partition
        part, words, local = part[order], words[order], local[order]
    np.save(f"{out}.words.npy", words, allow_pickle=False)
    np.save(f"{out}.rows.npy", local, allow_pickle=False)
    return np.searchsorted(part, np.arange((1 << bits) + 1), side="left").astype(np.int64)


def partition_candidates(spec: Spec, pieces: list[tuple[str, int, int, int]]) -> np.ndarray:
    """The candidate repeats of one partition (step 2): the global rows whose id's first 8 bytes
    occur twice in it, increasing.

    ``pieces`` are the partition's slices ``(prefix, start, stop, first row)`` of the spilled
    files (:func:`spill_ids`), in the order of the global rows; ``first row`` is the global row
    of the spilled row group's first row.
    """
    pieces = [p for p in pieces if p[2] > p[1]]
    words = [np.load(f"{prefix}.words.npy", mmap_mode="r")[a:b] for prefix, a, b, _ in pieces]
    hi = np.concatenate(words) if words else np.zeros(0, dtype=np.uint64)
    ordered = np.sort(hi)
    shared = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    if not shared.size:  # no word twice: no repeat, and the rows are not read
        return np.zeros(0, dtype=np.int64)
    marked = shared[np.minimum(np.searchsorted(shared, hi), shared.size - 1)] == hi
    bounds = np.cumsum([0, *(len(w) for w in words)])
    rows = []
    for k, (prefix, a, b, base) in enumerate(pieces):
        here = marked[bounds[k] : bounds[k + 1]]
        if here.any():
            local = np.load(f"{prefix}.rows.npy", mmap_mode="r")[a:b][here]
            rows.append(base + local.astype(np.int64))
    return np.sort(np.concatenate(rows))


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
    """The prefix of a row group's spilled files."""
    return str(Path(folder) / f"{file:07d}-{group:06d}")
