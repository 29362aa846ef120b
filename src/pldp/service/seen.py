"""The report ids a campaign has stored, held in memory: how a retried report is found.

Idempotent ingest needs, for every new report, the answer to "is this 16-byte id already stored,
and where?". A unique index on the ids in SQLite answers it, but report ids are random, so each
insert lands on a random page of that index: once the index outgrows what one commit touches,
every report dirties a page of its own, each commit rewrites most of the index, and the ingest
rate falls as the store grows (``docs/collector.md``, "Capacity"). So the store keeps reports in
arrival order (primary key ``(campaign, seq)``: every insert is an append) and each writer keeps
this index of ids in memory instead.

Each campaign's index is a :class:`SeenIds`: two hash tables (:mod:`pldp.service.idtable`: layout,
keyed hash, growth without a pause, memory), so that a lookup of a batch of ``m`` ids costs O(m)
whatever the number ``n`` of stored ids (an earlier version was a log-structured merge of sorted
runs, whose run count grew as n / 2^18 and whose binary searches missed the cache ever more often:
27 ms per 1,000 ids at 10^7 stored, inside the write lock).

Two tables, because the writer looks ids up and adds them while it holds the store's write lock,
which every worker of the collector (``pldp serve --workers N``) waits for, and in a large table
each lookup or add is a few cache misses. So a :class:`SeenIds` keeps the ids added since the
writer's last :meth:`SeenIds.maintain` (its own and those other workers appended) in a small
table (at most :data:`STAGE` ids, a few hundred KB: in the cache), which ``maintain`` merges into
the large one after the lock is released; and the writer searches the large table for a job's
ids *before* it takes the lock (:meth:`SeenIds.stored`: that table only changes in ``maintain``,
in the same thread), so that under the lock only the small table is searched.

The writer loads a campaign's ids on first use, outside its write lock (:func:`load`; the job that
needed them waits, the other writers go on), and, when another process has committed since its
own last commit (``pldp serve --workers N``), reads the rows appended since the last ``seq`` it
knows, so under the write lock the index always equals the stored ids. Retention (``pldp serve
--retain-days``) deletes reports instead of appending them. The index has no way to remove ids,
so a writer drops the whole index of that campaign and loads it again (:mod:`pldp.service.writer`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from pldp.service import store
from pldp.service.idtable import FEW, IdTable
from pldp.service.store import seq_range
from pldp.service.store import transactions as tx

__all__ = ["ID_CHUNK", "STAGE", "SeenIds", "Stored", "id_chunks", "ids_since", "load", "seq_range"]

#: Ids the small table of a :class:`SeenIds` holds at most (it is merged into the large one then).
STAGE = 1 << 16


class SeenIds:
    """The stored report ids of one campaign and their ``seq``: a large table of the ids stored
    before the writer's last :meth:`maintain`, and a small one of the ids added since (see module
    doc, "Two tables").

    Parameters
    ----------
    expected : int
        How many ids the index will hold soon (the large table is sized for them).

    ``last`` is the largest ``seq`` stored (0 for none); ids are added with increasing ``seq``.
    """

    def __init__(self, expected: int = 0) -> None:
        self.main = IdTable(expected)
        self.recent = IdTable(STAGE)
        self.last = 0

    def __len__(self) -> int:
        return len(self.main) + len(self.recent)

    @property
    def nbytes(self) -> int:
        """Bytes the index holds in memory (both tables)."""
        return self.main.nbytes + self.recent.nbytes

    @property
    def moving(self) -> bool:
        """Whether a larger table of the large one is being filled."""
        return self.main.moving

    def stored(self, ids: bytes) -> Stored:
        """Look ``ids`` up in the large table alone (the writer does this before it takes the
        write lock); :meth:`find` uses the answer for as long as that table has not changed."""
        return Stored(ids, self.main, len(self.main), self.main.find(ids))

    def find(self, ids: bytes, known: Stored | None = None) -> np.ndarray:
        """The ``seq`` of each of ``ids`` (concatenated 16-byte ids), -1 where it is not stored.

        ``known``: the large table's answer for these ids from :meth:`stored`, used if that table
        has not changed since (then only the small table is searched).
        """
        if known is not None and known.ids is ids and known.table is self.main and known.size == len(self.main):
            where = known.where.copy()
        else:
            where = self.main.find(ids)
        if len(self.recent):
            missing = np.flatnonzero(where < 0)
            if missing.size == where.size:
                where = self.recent.find(ids)
            elif missing.size:
                rows = np.frombuffer(ids, dtype=np.uint64).reshape(-1, 2)[missing]
                where[missing] = self.recent.find(rows.tobytes())
        return where

    def add(self, ids: bytes, seqs: np.ndarray | range) -> None:
        """Add ids not stored before (concatenated 16-byte ids, distinct), with their ``seq`` (all
        above :attr:`last`): to the small table, merged into the large one at :meth:`maintain`
        (or at once when the small table holds :data:`STAGE` ids)."""
        self.recent.add(ids, seqs)
        self.last = max(self.last, self.recent.last)
        if len(self.recent) >= STAGE:
            self._merge()

    def append(self, ids: bytes, first: int) -> None:
        """:meth:`add` ids numbered ``first``, ``first + 1``, ... (a job's new reports)."""
        m = len(ids) // 16
        self.add(ids, range(first, first + m) if m <= FEW else np.arange(first, first + m, dtype=np.int64))

    def maintain(self) -> None:
        """Merge the small table into the large one and move the ids owed to a larger table of
        it; the writer calls this outside its write lock."""
        self._merge()
        self.main.maintain()

    def _merge(self) -> None:
        n = len(self.recent)
        if n:
            self.main.add(self.recent.rows(), self.recent.seqs())
            self.recent = IdTable(STAGE)


@dataclass(frozen=True)
class Stored:
    """The large table's answer for some ids (:meth:`SeenIds.stored`): the table, its size then,
    and the ``seq`` of each id (-1: not in it). Valid while the table holds as many ids."""

    ids: bytes
    table: IdTable
    size: int
    where: np.ndarray


#: Rows per read of a campaign's ids (:func:`id_chunks`): each read is one short call into SQLite
#: and a few milliseconds of numpy, so a load of millions of ids leaves Python's GIL to the other
#: threads in between (the event loop, and the thread that answers uvicorn's checks of a worker).
ID_CHUNK = 1 << 18


def id_chunks(conn: store.Connection, key: int, after: int) -> Iterator[tuple[bytes, np.ndarray]]:
    """The ids (concatenated) and ``seq`` of the campaign's reports numbered above ``after``, by
    ranges of :data:`ID_CHUNK` numbers (:func:`pldp.service.store.ids_between`; make it one
    snapshot: call it inside a transaction)."""
    low, top = seq_range(conn, key, after)
    if low is None or top is None:
        return
    for start in range(int(low) - 1, int(top), ID_CHUNK):
        found = store.ids_between(conn, key, start, start + ID_CHUNK)
        if found is not None:
            yield found


def ids_since(conn: store.Connection, key: int, after: int) -> tuple[bytes, np.ndarray]:
    """The ids (concatenated) and ``seq`` of the campaign's reports numbered above ``after``."""
    chunks = list(id_chunks(conn, key, after))
    if not chunks:
        return b"", np.zeros(0, dtype=np.int64)
    return b"".join(c[0] for c in chunks), np.concatenate([c[1] for c in chunks])


def load(conn: store.Connection, key: int) -> tuple[SeenIds, int]:
    """An index of the stored ids of the campaign with ``key``, and retention's generation, read
    in one snapshot (a read transaction on ``conn``, which must not be in one).

    The index's ``last`` is at least the largest ``seq`` retention ever deleted, so new reports
    are numbered above deleted ones (a campaign whose every report was deleted still continues its
    numbering); the generation tells the writer later whether reports were deleted after the load.
    The ids are read by :func:`id_chunks`, a few hundred thousand at a time.
    """
    with tx.read_snapshot(conn):  # a read transaction: every read sees the same commit
        low, top = seq_range(conn, key)
        index = SeenIds(0 if low is None or top is None else top - low + 1)
        for ids, seqs in id_chunks(conn, key, 0):
            index.main.add(ids, seqs)  # the large table at once: nothing to stage
        index.last = index.main.last
        floor, generation = store.retention_floor(conn, key)
    index.last = max(index.last, floor)
    return index, generation
