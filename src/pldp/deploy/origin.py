"""Which reports a report file holds: the store that wrote it, and which of that store's reports.

A collector numbers each campaign's reports in arrival order (``seq``: 1, 2, 3, ...;
:mod:`pldp.service.store`), so a stored report has exactly one number in its store. Every report
file a collector writes (the rollover of ``pldp serve --export-dir``, ``pldp campaign export
--out-dir``, ``GET /v1/campaigns/{id}/export``) says which reports it holds, in its Parquet
key-value metadata:

``pldp.store``
    the store's id (16 hex digits, :func:`pldp.service.store.store_id`);
``pldp.numbers``
    the numbers of its rows, in row order, as runs of consecutive numbers (``"1-1500,1503-2200"``;
    empty for a file of no report). The runs increase strictly, and their lengths add up to the
    file's rows.

Two files of one store (and of one spec) whose numbers are disjoint hold no report in common.
:mod:`pldp.aggregate` proves that from the footers it reads anyway, and counts a report that two
files of one store both hold once (``docs/scaling.md``, "Exactly once across files"). A store's
id is random, so two stores' numbers say nothing about each other: only the report ids can tell
whether two stores hold the same report (``pldp aggregate --unique-ids``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pldp.errors import ReportError

__all__ = ["NUMBERS_KEY", "STORE_KEY", "Origin"]

#: The Parquet key-value metadata key of the store's id.
STORE_KEY = b"pldp.store"
#: The Parquet key-value metadata key of the runs of report numbers.
NUMBERS_KEY = b"pldp.numbers"

_STORE = re.compile(r"[0-9a-f]{16}")
_RUNS = re.compile(r"(?:[0-9]{1,18}-[0-9]{1,18}(?:,[0-9]{1,18}-[0-9]{1,18})*)?")


@dataclass(frozen=True, eq=False)
class Origin:
    """The store that wrote a report file, and the numbers of the reports it holds.

    Attributes
    ----------
    store : str
        The store's id (16 lower-case hex digits).
    runs : ndarray of int64, shape (k, 2)
        Runs of consecutive report numbers, ``[first, last]`` (both included), in the order of
        the file's rows; strictly increasing (``first[i + 1] > last[i]``).
    """

    store: str
    runs: np.ndarray

    def __post_init__(self) -> None:
        if _STORE.fullmatch(self.store) is None:
            raise ReportError(f"a store id is 16 lower-case hex digits, got {self.store!r}")
        runs = self.runs
        if runs.ndim != 2 or runs.shape[1] != 2 or runs.dtype != np.int64:
            raise ReportError(f"runs of report numbers are an int64 array of shape (k, 2), got {runs.shape}")
        if runs.size and (runs[0, 0] < 1 or (runs[:, 1] < runs[:, 0]).any() or (runs[1:, 0] <= runs[:-1, 1]).any()):
            raise ReportError("the runs of report numbers must be positive, non-empty and strictly increasing")

    @classmethod
    def of(cls, store: str, numbers: np.ndarray) -> Origin:
        """The origin of a file whose rows are the store's reports numbered ``numbers`` (increasing)."""
        numbers = np.asarray(numbers, dtype=np.int64)
        if numbers.size == 0:
            return cls(store, np.zeros((0, 2), dtype=np.int64))
        breaks = np.flatnonzero(np.diff(numbers) != 1) + 1
        firsts = numbers[np.concatenate(([0], breaks))]
        lasts = numbers[np.concatenate((breaks - 1, [numbers.size - 1]))]
        return cls(store, np.stack([firsts, lasts], axis=1))

    @property
    def rows(self) -> int:
        """The reports the file holds (the sum of the runs' lengths)."""
        return int((self.runs[:, 1] - self.runs[:, 0] + 1).sum())

    def text(self) -> str:
        """The runs as ``pldp.numbers`` writes them: ``"1-1500,1503-2200"``."""
        return ",".join(f"{a}-{b}" for a, b in self.runs.tolist())

    def metadata(self) -> dict[bytes, bytes]:
        """The key-value metadata that says this in a Parquet file."""
        return {STORE_KEY: self.store.encode(), NUMBERS_KEY: self.text().encode()}

    @classmethod
    def from_metadata(cls, meta: Mapping[bytes, bytes] | None, rows: int) -> Origin | None:
        """The origin a file's key-value metadata names, or None when it names none.

        Raises
        ------
        ReportError
            When the metadata names a store or numbers that are malformed, or numbers that are not
            as many as the file's ``rows``.
        """
        meta = meta or {}
        store, numbers = meta.get(STORE_KEY), meta.get(NUMBERS_KEY)
        if store is None and numbers is None:
            return None
        if store is None or numbers is None:
            raise ReportError("the file's metadata names only one of pldp.store and pldp.numbers")
        text = numbers.decode(errors="replace")
        if _RUNS.fullmatch(text) is None:
            raise ReportError(f"the file's pldp.numbers is not runs such as 1-1500,1503-2200: {text[:80]!r}")
        flat = np.array(text.replace("-", ",").split(","), dtype=np.int64) if text else np.zeros(0, np.int64)
        origin = cls(store.decode(errors="replace"), flat.reshape(-1, 2))
        if origin.rows != rows:
            raise ReportError(f"the file's pldp.numbers name {origin.rows:,} reports, but it holds {rows:,}")
        return origin
