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

The writer loads a campaign's ids on first use and, when another process has committed since its
own last commit (``pldp serve --workers N``), reads the rows appended since the last ``seq`` it
knows, so under the write lock the index always equals the stored ids.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RUN_CAP", "SeenIds", "as_keys"]

#: Largest run built by a merge (ids); beyond it runs are kept side by side.
RUN_CAP = 1 << 20


def as_keys(ids: bytes) -> np.ndarray:
    """Concatenated 16-byte report ids as an array of fixed-width byte strings (one per id).

    Every element is exactly 16 bytes, so numpy's comparison of byte strings (which ignores
    trailing zero bytes) orders and equates them exactly as their bytes.
    """
    return np.frombuffer(ids, dtype="S16")


class SeenIds:
    """The stored report ids of one campaign and their ``seq`` (see module doc).

    ``last`` is the largest ``seq`` stored (0 for none); ids are added with increasing ``seq``.
    """

    def __init__(self) -> None:
        self._keys: list[np.ndarray] = []  # sorted runs, oldest first
        self._seqs: list[np.ndarray] = []  # each key's seq, aligned with its run
        self.last = 0

    def __len__(self) -> int:
        return sum(len(k) for k in self._keys)

    def find(self, keys: np.ndarray) -> np.ndarray:
        """The ``seq`` of each of ``keys`` (:func:`as_keys`), -1 where it is not stored."""
        out = np.full(len(keys), -1, dtype=np.int64)
        for run, seqs in zip(self._keys, self._seqs, strict=True):
            at = np.minimum(np.searchsorted(run, keys), len(run) - 1)
            hit = run[at] == keys
            out[hit] = seqs[at[hit]]
        return out

    def add(self, keys: np.ndarray, seqs: np.ndarray) -> None:
        """Add ids not stored before, with their ``seq`` (all above :attr:`last`)."""
        if len(keys) == 0:
            return
        order = np.argsort(keys, kind="stable")
        self._keys.append(keys[order])
        self._seqs.append(np.asarray(seqs, dtype=np.int64)[order])
        self.last = max(self.last, int(seqs.max()))
        while len(self._keys) >= 2:
            older, newer = len(self._keys[-2]), len(self._keys[-1])
            if older > newer or older + newer > RUN_CAP:
                break
            keys_m = np.concatenate(self._keys[-2:])
            seqs_m = np.concatenate(self._seqs[-2:])
            order = np.argsort(keys_m, kind="stable")  # two sorted runs: one merge pass
            self._keys[-2:] = [keys_m[order]]
            self._seqs[-2:] = [seqs_m[order]]

    @property
    def runs(self) -> int:
        """How many sorted runs the index holds (O(log n) below :data:`RUN_CAP`)."""
        return len(self._keys)
