"""Users' item-sets in compressed sparse row form: :class:`ItemSets`.

The data of item-set protocols (:class:`pldp.PaddingSampling`) and of the item-set datasets
(Retail, Kosarak, Rent the Runway).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp._validation import check_index_range, check_int
from pldp.domain import Domain
from pldp.errors import DomainError, ParameterError

__all__ = ["ItemSets"]


@dataclass(frozen=True, eq=False)
class ItemSets:
    """Users' item-sets in compressed sparse row form.

    User ``u`` holds ``indices[indptr[u]:indptr[u + 1]]`` (distinct item indices in
    ``[0, d)``).
    """

    indptr: np.ndarray
    indices: np.ndarray
    d: int

    def __post_init__(self) -> None:
        ptr = np.asarray(self.indptr, dtype=np.int64)
        idx = np.asarray(self.indices, dtype=np.int64)
        d = check_int(self.d, "d", 1)
        if ptr.ndim != 1 or ptr.size < 1 or ptr[0] != 0 or np.any(np.diff(ptr) < 0) or ptr[-1] != idx.size:
            raise ParameterError("indptr must start at 0, be non-decreasing and end at len(indices)")
        check_index_range(idx, d, "item indices")
        object.__setattr__(self, "indptr", ptr)
        object.__setattr__(self, "indices", idx)
        object.__setattr__(self, "d", d)

    @classmethod
    def from_lists(cls, sets: Iterable[Iterable[Any]], domain: Domain | int) -> ItemSets:
        """From one iterable of labels per user (labels are encoded with ``domain``; a plain
        ``int`` domain size means the labels are already indices). Duplicates within a set
        are dropped."""
        dom = domain if isinstance(domain, Domain) else Domain.range(check_int(domain, "domain", 1))
        lists = [list(s) for s in sets]
        whole = _encode_whole(lists, dom)
        if whole is not None:
            return cls(*whole, len(dom))
        rows = [sorted(set(dom.encode(r).tolist())) for r in lists]  # names the first set with a bad label
        sizes = np.array([len(r) for r in rows], dtype=np.int64)
        indptr = np.concatenate([[0], np.cumsum(sizes)])
        indices = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=int(indptr[-1]))
        return cls(indptr, indices, len(dom))

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.indptr.size - 1)

    def __len__(self) -> int:
        return self.n

    @property
    def sizes(self) -> np.ndarray:
        """Set size of each user."""
        return np.diff(self.indptr)

    def item_counts(self) -> np.ndarray:
        """Number of users holding each item (the estimation target)."""
        return np.bincount(self.indices, minlength=self.d)

    def first_items(self) -> np.ndarray:
        """Each user's first item (for single-item experiments); users with empty sets are dropped."""
        nonempty = self.sizes > 0
        return self.indices[self.indptr[:-1][nonempty]]


def _encode_whole(lists: list[list[Any]], dom: Domain) -> tuple[np.ndarray, np.ndarray] | None:
    """``(indptr, indices)`` of the sets, each ascending without repeats, encoded in one call to
    :meth:`Domain.encode` (a label's index does not depend on the set it is in); None when an
    element is itself a list or an array (which :meth:`Domain.encode` reads as a batch of labels)
    or a label is not in the domain: the per-set encoding then reads or refuses the sets."""
    flat = list(itertools.chain.from_iterable(lists))
    if {list, np.ndarray} & set(map(type, flat)):
        return None
    try:
        codes = dom.encode(flat).reshape(len(flat))
    except DomainError:
        return None
    sizes = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    row = np.repeat(np.arange(len(lists), dtype=np.int64), sizes)
    keys = np.unique(row * len(dom) + codes)  # by user, then by item; a repeat within a set once
    indptr = np.concatenate([[0], np.cumsum(np.bincount(keys // len(dom), minlength=len(lists)))])
    return indptr.astype(np.int64), keys % len(dom)
