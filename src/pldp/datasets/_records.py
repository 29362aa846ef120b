"""Item-sets from (user, item) records: re-indexing, dropping repeats, building :class:`ItemSets`.

The conventions of :mod:`pldp.datasets.real` are applied here: users are ``0..n-1`` (in file
order, or in order of first record), a user's items keep their file order and a repeated
(user, item) record is dropped, and items are re-indexed ``0..d-1`` by ascending original id.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pldp.errors import ParameterError
from pldp.itemsets import ItemSets


def _readonly(a: np.ndarray) -> np.ndarray:
    """``a``, marked read-only (the loaders' arrays are cached and shared)."""
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class _Parsed:
    """An item-set dataset as loaded: the sets, and the original id of each item index."""

    sets: ItemSets
    labels: np.ndarray  # original item id of each index


def _dense_ranks(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sorted distinct ids, index of each id among them)``: like ``np.unique(ids,
    return_inverse=True)``, by counting when the ids are small non-negative integers."""
    top = int(ids.max()) if ids.size else 0
    if ids.size and int(ids.min()) >= 0 and top < max(4 * ids.size, 1 << 22):
        present = np.zeros(top + 1, dtype=bool)
        present[ids] = True
        rank = np.cumsum(present, dtype=np.int64) - 1
        return np.flatnonzero(present).astype(np.int64), rank[ids]
    labels, inverse = np.unique(ids, return_inverse=True)
    return labels.astype(np.int64), inverse.ravel().astype(np.int64)


def _first_appearance_ranks(ids: np.ndarray) -> np.ndarray:
    """Map ids to ``0..k-1`` in order of first appearance."""
    _, inverse = _dense_ranks(ids)
    first = np.full(int(inverse.max()) + 1, ids.size, dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(ids.size))
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse]


def _first_of_repeats(users: np.ndarray, items: np.ndarray, n_users: int) -> np.ndarray:
    """Mask keeping the first record of each (user, item) pair (``items`` are ``0..d-1``)."""
    key = users * (int(items.max()) + 1) + items
    sorted_key = np.sort(key)
    repeated = sorted_key[1:][sorted_key[1:] == sorted_key[:-1]]
    keep = np.ones(key.size, dtype=bool)
    if repeated.size:  # rare: sort again only the records of users with a repeat
        flagged = np.zeros(n_users, dtype=bool)
        flagged[repeated // (int(items.max()) + 1)] = True
        pos = np.flatnonzero(flagged[users])
        order = np.argsort(key[pos], kind="stable")  # the first of equal pairs comes first
        sub = key[pos][order]
        keep[pos[order[1:][sub[1:] == sub[:-1]]]] = False
    return keep


def _build_itemsets(users: np.ndarray, items: np.ndarray, n_users: int) -> _Parsed:
    """Item-sets from (user, original item id) records in file order.

    ``users`` are ``0..n_users-1``. Records are grouped by user, keeping file order within a
    user, and a repeated (user, item) record is dropped. Items are re-indexed by ascending id.
    """
    if users.size and np.any(users[1:] < users[:-1]):
        order = np.argsort(users, kind="stable")
        users, items = users[order], items[order]
    labels, indices = _dense_ranks(items)
    if indices.size:
        keep = _first_of_repeats(users, indices, n_users)
        if not keep.all():
            users, indices = users[keep], indices[keep]
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    np.cumsum(np.bincount(users, minlength=n_users), out=indptr[1:])
    sets = ItemSets(_readonly(indptr), _readonly(indices), max(int(labels.size), 1))
    return _Parsed(sets, _readonly(labels))


def _pairs_from_user_ids(user_ids: np.ndarray, item_ids: np.ndarray) -> _Parsed:
    if user_ids.size == 0:
        raise ParameterError("the file holds no records")
    users = _first_appearance_ranks(user_ids)
    return _build_itemsets(users, item_ids, int(users.max()) + 1)
