"""Mergeable tallies: the sufficient statistics a server keeps.

A :class:`Tally` is what aggregation produces and estimation consumes: the number of
reports ``n`` and one count per item. For direct-encoding mechanisms (KRR, URR, IPRR) the
count of item ``y`` is the number of reports equal to ``y``; for unary encodings it is the
number of reports whose bit ``y`` is set. Tallies from disjoint sets of users merge by
addition, so a collection can be aggregated on many machines and combined later.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp._validation import as_counts, check_int
from pldp.errors import TallyError

__all__ = ["TALLY_FORMAT", "Tally", "users_from_counts"]

#: Version tag written by :meth:`Tally.to_dict`.
TALLY_FORMAT = "pldp.tally/1"

#: Report families a tally can hold.
TALLY_KINDS = ("direct", "unary")


@dataclass(frozen=True, eq=False)
class Tally:
    """Counts of ``n`` reports over ``d`` items.

    Parameters
    ----------
    n : int
        Number of reports (users).
    counts : array_like of int
        Per-item support counts, length ``d``.
    kind : str
        Which report family produced the counts (``"direct"`` or ``"unary"``). Tallies
        of different kinds or lengths refuse to merge.
    """

    n: int
    counts: np.ndarray
    kind: str = "direct"

    def __post_init__(self) -> None:
        try:
            n = check_int(self.n, "n", 0)
        except ValueError as exc:
            raise TallyError(str(exc)) from None
        if self.kind not in TALLY_KINDS:
            raise TallyError(f"unknown tally kind {self.kind!r}; expected one of {TALLY_KINDS}")
        counts = as_counts(self.counts, "counts")
        if counts.size == 0:
            raise TallyError("counts must not be empty")
        if self.kind == "direct" and counts.sum() != n:
            raise TallyError(f"direct-encoding counts must sum to n={n}, they sum to {int(counts.sum())}")
        if counts.size and counts.max(initial=0) > n:
            raise TallyError(f"a count exceeds n={n}: {int(counts.max())}")
        counts = counts.copy()
        counts.setflags(write=False)
        object.__setattr__(self, "n", int(n))
        object.__setattr__(self, "counts", counts)

    @property
    def d(self) -> int:
        """Number of items."""
        return int(self.counts.size)

    @property
    def frequencies(self) -> np.ndarray:
        """Observed support frequencies ``counts / n`` (NaN-free: zeros when n = 0)."""
        if self.n == 0:
            return np.zeros(self.d)
        return self.counts / self.n

    @classmethod
    def empty(cls, d: int, kind: str = "direct") -> Tally:
        """A tally of zero reports."""
        return cls(0, np.zeros(check_int(d, "d", 1), dtype=np.int64), kind)

    def merge(self, other: Tally) -> Tally:
        """Combine with a tally of other users (counts and ``n`` add)."""
        if not isinstance(other, Tally):
            raise TallyError(f"can only merge a Tally, got {type(other).__name__}")
        if other.kind != self.kind or other.d != self.d:
            raise TallyError(
                f"cannot merge a {other.kind} tally over {other.d} items into a {self.kind} tally over {self.d} items"
            )
        return Tally(self.n + other.n, self.counts + other.counts, self.kind)

    __add__ = merge

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Tally)
            and self.kind == other.kind
            and self.n == other.n
            and np.array_equal(self.counts, other.counts)
        )

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dictionary (see :meth:`from_dict`)."""
        return {"format": TALLY_FORMAT, "kind": self.kind, "n": self.n, "counts": self.counts.tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Tally:
        """Rebuild a tally written by :meth:`to_dict`; the format tag is checked."""
        if not isinstance(data, dict):
            raise TallyError(f"expected a dict, got {type(data).__name__}")
        fmt = data.get("format")
        if fmt != TALLY_FORMAT:
            raise TallyError(f"unknown tally format {fmt!r}; this version reads {TALLY_FORMAT!r}")
        try:
            return cls(data["n"], np.asarray(data["counts"]), data["kind"])
        except KeyError as exc:
            raise TallyError(f"tally dict lacks the field {exc.args[0]!r}") from None


def users_from_counts(counts: np.ndarray) -> tuple[np.ndarray, ...]:
    """The users behind validated true counts, in the form ``perturb`` takes (inverse of tallying).

    1-D counts per item give ``(items,)`` with ``items = repeat(arange(d), counts)``; a 2-D
    ``(t, d)`` table of counts per (level, item) gives ``(items, levels)``, level-major.
    """
    if counts.ndim == 1:
        return (np.repeat(np.arange(counts.size), counts),)
    t, d = counts.shape
    flat = counts.reshape(-1)
    return np.repeat(np.tile(np.arange(d), t), flat), np.repeat(np.repeat(np.arange(t), d), flat)
