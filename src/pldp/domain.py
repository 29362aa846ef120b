"""The item domain: ordered distinct labels <-> integer indices."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import Any

import numpy as np

from pldp._validation import _show, check_int
from pldp.errors import DomainError

__all__ = ["Domain"]


class Domain:
    """An ordered set of distinct item labels, the first stage of the pipeline.

    ``Domain.encode`` turns user values into indices ``0 .. d-1`` that mechanisms work on;
    ``Domain.decode`` maps indices back. Labels may be strings, integers or any hashable
    values; they are compared by equality, so ``1`` and ``"1"`` are different labels.

    Parameters
    ----------
    labels : iterable of hashable
        The items, in the order that defines their indices. Must be distinct and non-empty.

    Raises
    ------
    DomainError
        If ``labels`` is empty or holds duplicates (the duplicates are named).

    Examples
    --------
    >>> dom = Domain(["flu", "cold", "hiv"])
    >>> dom.encode(["hiv", "flu"]).tolist()
    [2, 0]
    >>> dom.decode([1])
    ['cold']
    """

    __slots__ = ("_index", "_labels")

    def __init__(self, labels: Iterable[Hashable]) -> None:
        labels = tuple(labels.tolist() if isinstance(labels, np.ndarray) else labels)
        if not labels:
            raise DomainError("a domain needs at least one label")
        try:
            index: dict[Hashable, int] = dict(zip(labels, range(len(labels)), strict=True))
        except TypeError:
            bad = next(lab for lab in labels if not _hashable(lab))
            raise DomainError(f"domain labels must be hashable, got {bad!r}") from None
        if len(index) < len(labels):  # each label's index is its last place: earlier places are duplicates
            dupes = [lab for i, lab in enumerate(labels) if index[lab] != i]
            raise DomainError(f"domain labels must be distinct; duplicated: {_show(dupes)}")
        self._labels = labels
        self._index = index

    @classmethod
    def range(cls, d: int) -> Domain:
        """The domain ``0, 1, ..., d-1`` (labels equal their indices)."""
        return cls(range(check_int(d, "d", 1)))

    @property
    def labels(self) -> tuple[Hashable, ...]:
        """The labels in index order."""
        return self._labels

    def __len__(self) -> int:
        return len(self._labels)

    @property
    def size(self) -> int:
        """Number of items ``d = |D|``."""
        return len(self._labels)

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._labels)

    def __contains__(self, value: object) -> bool:
        try:
            return value in self._index
        except TypeError:
            return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Domain) and self._labels == other._labels

    def __hash__(self) -> int:
        return hash(self._labels)

    def __repr__(self) -> str:
        return f"Domain({_show(self._labels, 6)}; d={self.size})"

    def index(self, value: Hashable) -> int:
        """Index of one label; raises :class:`DomainError` if it is not in the domain."""
        try:
            return self._index[value]
        except (KeyError, TypeError):
            raise DomainError(f"value not in domain: {value!r}") from None

    def encode(self, values: Any) -> np.ndarray:
        """Map labels to an ``int64`` array of indices.

        ``values`` is one label or a sequence / array of labels (tuples count as labels
        when given inside a list). Vectorised: the distinct values are looked up once, so
        encoding a million users costs one ``np.unique`` and ``|distinct|`` dictionary
        look-ups.

        Raises
        ------
        DomainError
            Naming the values that are not in the domain.
        """
        if isinstance(values, np.ndarray):
            arr = values
        elif isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            return np.asarray(self.index(values), dtype=np.int64)
        else:
            items = list(values)
            if items and isinstance(items[0], (list, np.ndarray)):
                arr = np.asarray(items, dtype=object)  # nested lists: a 2-D batch of labels
            else:
                arr = np.fromiter(items, dtype=object, count=len(items))  # keeps tuples whole
        if arr.ndim == 0:
            return np.asarray(self.index(arr.item()), dtype=np.int64)
        flat = arr.ravel()
        if flat.size == 0:
            return np.zeros(arr.shape, dtype=np.int64)
        try:
            uniq, inverse = np.unique(flat, return_inverse=True)
            uniq_list = uniq.tolist()
        except TypeError:  # unorderable mixture of types: find the distinct values by hashing
            first: dict[Any, int] = {}
            unhashable: list[Any] = []
            codes_in = []
            for v in flat.tolist():
                if _hashable(v):
                    codes_in.append(first.setdefault(v, len(first)))
                else:
                    unhashable.append(v)
            if unhashable:
                raise DomainError(f"values not in domain (unhashable): {_show(unhashable)}") from None
            inverse = np.asarray(codes_in, dtype=np.int64)
            uniq_list = list(first)
        codes = np.array([self._index.get(u, -1) if _hashable(u) else -1 for u in uniq_list], dtype=np.int64)
        bad = codes < 0
        if bad.any():
            raise DomainError(f"values not in domain: {_show([u for u, b in zip(uniq_list, bad, strict=True) if b])}")
        return codes[inverse.reshape(-1)].reshape(arr.shape)

    def decode(self, indices: Any) -> list[Hashable]:
        """Map indices back to labels (a list)."""
        idx = np.asarray(indices)
        if idx.size and idx.dtype.kind not in "iu":
            raise DomainError(f"indices must be integers, got dtype {idx.dtype}")
        bad = (idx < 0) | (idx >= self.size)
        if bad.any():
            raise DomainError(f"indices must lie in [0, {self.size}), got {_show(idx[bad].tolist())}")
        lab = self._labels
        return [lab[i] for i in idx.ravel().tolist()]


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
