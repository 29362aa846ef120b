"""The report ids a campaign has stored, held in memory: how a retried report is found.

Idempotent ingest needs, for every new report, the answer to "is this 16-byte id already stored,
and where?". A unique index on the ids in SQLite answers it, but report ids are random, so each
insert lands on a random page of that index: once the index outgrows what one commit touches,
every report dirties a page of its own, each commit rewrites most of the index, and the ingest
rate falls as the store grows (to about a third between 0.3 and 1.2 million stored reports on the
benchmark machine; ``docs/collector.md``, "Capacity"). So the store keeps reports in
arrival order (primary key ``(campaign, seq)``: every insert is an append) and the writer keeps
this index of ids in memory instead.

:class:`SeenIds` is a log-structured merge of sorted runs (O'Neil et al., "The log-structured
merge-tree", Acta Informatica 33, 1996, in its simplest in-memory form): a batch of new ids
becomes a sorted run; two neighbouring runs are merged when the older is no larger than the newer,
so there are O(log n) runs and each id is merged O(log n) times; runs stop growing at
:data:`RUN_CAP` ids, which bounds the pause of one merge. A lookup is one binary search per run.
Memory is 24 bytes per stored report (the id and its ``seq``).

The writer loads a campaign's ids on first use, outside its write lock (about a second per
million reports; the job that needed them waits, the other writers go on), and, when another
process has committed since its own last commit (``pldp serve --workers N``), reads the rows
appended since the last ``seq`` it knows, so under the write lock the index always equals the
stored ids. Retention (``pldp serve --retain-days``) deletes reports instead of appending them. The
index has no way to remove ids, so a writer drops the whole index of that campaign and loads it
again (:mod:`pldp.service.writer`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["RUN_CAP", "SeenIds"]

#: Largest run built by a merge (ids); beyond it runs are kept side by side.
RUN_CAP = 1 << 18
#: Lookups of at most this many ids use scalar searches, which cost less than numpy's per-call overhead.
_FEW = 4


def _halves(ids: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated 16-byte ids as their first and last 8 bytes, each a big-endian integer."""
    both = np.frombuffer(ids, dtype=">u8").reshape(-1, 2).astype(np.uint64)
    return both[:, 0].copy(), both[:, 1].copy()


def _scan(hi: np.ndarray, lo: np.ndarray, seqs: np.ndarray, j: int, h: np.uint64, lo_q: np.uint64) -> int:
    """The ``seq`` of the id (``h``, ``lo_q``) in a run, looking from index ``j`` along the ids
    whose first 8 bytes are ``h``; -1 if none of them is it."""
    while j < len(hi) and hi[j] == h:
        if lo[j] == lo_q:
            return int(seqs[j])
        j += 1
    return -1


class SeenIds:
    """The stored report ids of one campaign and their ``seq`` (see module doc).

    A run is sorted by the first 8 bytes of its ids (integer comparisons, several times faster
    than comparing 16-byte strings); an id is found where those bytes and the last 8 both match,
    looking past the first candidate in the rare run where two ids share their first 8 bytes.
    ``last`` is the largest ``seq`` stored (0 for none); ids are added with increasing ``seq``.
    """

    def __init__(self) -> None:
        self._runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (hi, lo, seq), sorted by hi
        self.last = 0

    def __len__(self) -> int:
        return sum(len(hi) for hi, _, _ in self._runs)

    def find(self, ids: bytes) -> np.ndarray:
        """The ``seq`` of each of ``ids`` (concatenated 16-byte ids), -1 where it is not stored."""
        q_hi, q_lo = _halves(ids)
        if len(q_hi) <= _FEW:
            return np.array([self._find_one(h, lo) for h, lo in zip(q_hi, q_lo, strict=True)], dtype=np.int64)
        order = np.argsort(q_hi)  # sorted queries walk each run in one direction: 3x fewer cache misses
        q_hi, q_lo = q_hi[order], q_lo[order]
        out = np.full(len(q_hi), -1, dtype=np.int64)
        for hi, lo, seqs in self._runs:
            at = hi.searchsorted(q_hi)
            np.minimum(at, len(hi) - 1, out=at)
            same = hi[at] == q_hi
            if not same.any():  # the common case for new reports: no candidate in this run
                continue
            hit = same & (lo[at] == q_lo)
            out[hit] = seqs[at[hit]]
            for i in np.flatnonzero(same & ~hit).tolist():  # another id shares the first 8 bytes
                out[i] = max(out[i], _scan(hi, lo, seqs, int(at[i]) + 1, q_hi[i], q_lo[i]))
        found = np.empty_like(out)
        found[order] = out
        return found

    def _find_one(self, h: np.uint64, lo_q: np.uint64) -> int:
        """:meth:`find` of one id with scalar searches (a single-report request's lookup)."""
        for hi, lo, seqs in self._runs:
            seq = _scan(hi, lo, seqs, int(hi.searchsorted(h)), h, lo_q)
            if seq >= 0:
                return seq
        return -1

    def add(self, ids: bytes, seqs: np.ndarray) -> None:
        """Add ids not stored before (concatenated 16-byte ids), with their ``seq`` (all above
        :attr:`last`)."""
        if not ids:
            return
        hi, lo = _halves(ids)
        seqs = np.asarray(seqs, dtype=np.int64)
        order = np.argsort(hi, kind="stable")
        self._runs.append((hi[order], lo[order], seqs[order]))
        self.last = max(self.last, int(seqs.max()))
        while len(self._runs) >= 2:
            older, newer = len(self._runs[-2][0]), len(self._runs[-1][0])
            if older > newer or older + newer > RUN_CAP:
                break
            merged = [np.concatenate(parts) for parts in zip(*self._runs[-2:], strict=True)]
            order = np.argsort(merged[0], kind="stable")  # two sorted runs: one merge pass
            self._runs[-2:] = [(merged[0][order], merged[1][order], merged[2][order])]

    @property
    def runs(self) -> int:
        """How many sorted runs the index holds (O(log n) below :data:`RUN_CAP`)."""
        return len(self._runs)
