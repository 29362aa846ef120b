"""What PLDP-FEBSF users send and what the server keeps: :class:`FEBSFReports`, :class:`FEBSFTally`.

Direct-encoding (k-RR) data: the table of (reported level, reported item) counts is sufficient.
Unary data (RAPPOR, OUE): a user's likelihood under level ``i`` and item ``j`` is
:math:`b_i^{s}(1-b_i)^{d-s} R_i(z_j)` with ``s`` the number of ones and :math:`R_i(1) = a_i/b_i`,
:math:`R_i(0) = (1-a_i)/(1-b_i)`; summed over items it involves :math:`\\sum_{j: z_j = 1} p_j`,
which depends on *which* bits are set, so no per-bit count table is sufficient. The unary
tally therefore keeps the histogram of distinct (reported level, bit pattern) pairs: exact,
mergeable, and at most ``t * 2^d`` rows (much smaller than ``N`` for small domains, about ``N``
for large ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from pldp._validation import as_counts
from pldp.bitcount import group_bit_counts, row_ones
from pldp.errors import TallyError
from pldp.tally import BaseTally

__all__ = ["FEBSFReports", "FEBSFTally", "pattern_tally", "unique_rows"]


@dataclass(frozen=True)
class FEBSFReports:
    """What users send: the item reports and the reported level indices.

    ``data`` is an int array of reported items (k-RR) or a uint8 array of bit-packed unary
    reports (one row per user); ``level`` holds the reported level index of each user.
    """

    data: np.ndarray
    level: np.ndarray


@dataclass(frozen=True, eq=False)
class FEBSFTally(BaseTally):
    """Sufficient statistics of PLDP-FEBSF reports (mergeable; see the module docstring).

    The counts derived from the rows (:attr:`level_counts`, :attr:`support_counts`,
    :attr:`level_support_counts`, :attr:`level_ones_support`, :attr:`pattern_ones`, :attr:`ones`)
    are computed once per tally and read-only: every estimate of the tally reads them again; a
    merge adds the parts' counts instead of recounting its rows.

    Attributes
    ----------
    kind : {"direct", "unary"}
        The data oracle's report family.
    t, d : int
        Levels and items.
    table : ndarray, shape (t, d)
        Direct encoding: ``table[l, y]`` counts users who reported level ``l`` and item ``y``.
    patterns, pattern_level, pattern_count : ndarray
        Unary encoding: the distinct bit-packed rows, their reported level and their count.
    fingerprint : str or None
        Fingerprint of the protocol that made it.
    """

    FORMAT: ClassVar[str] = "pldp.febsf-tally/2"
    LEGACY_FORMATS: ClassVar[tuple[str, ...]] = ("pldp.febsf-tally/1",)

    kind: str
    t: int
    d: int
    table: np.ndarray | None = None
    patterns: np.ndarray | None = None
    pattern_level: np.ndarray | None = None
    pattern_count: np.ndarray | None = None
    fingerprint: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("direct", "unary"):
            raise TallyError(f"kind must be 'direct' or 'unary', got {self.kind!r}")
        if self.kind == "direct" and (self.table is None or self.table.shape != (self.t, self.d)):
            raise TallyError(f"a direct-encoding FEBSF tally needs a ({self.t}, {self.d}) table")
        if self.kind == "unary" and (self.patterns is None or self.pattern_level is None or self.pattern_count is None):
            raise TallyError("a unary FEBSF tally needs patterns, pattern_level and pattern_count")

    @property
    def cells(self) -> np.ndarray:
        """The ``(t, d)`` table of a direct-encoding tally."""
        if self.table is None:
            raise TallyError("a unary FEBSF tally has no (level, item) table")
        return self.table

    @property
    def rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(patterns, pattern_level, pattern_count)`` of a unary tally."""
        if self.patterns is None or self.pattern_level is None or self.pattern_count is None:
            raise TallyError("a direct-encoding FEBSF tally has no patterns")
        return self.patterns, self.pattern_level, self.pattern_count

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.cells.sum()) if self.kind == "direct" else int(self.rows[2].sum())

    @cached_property
    def level_counts(self) -> np.ndarray:
        """Users per reported level."""
        if self.kind == "direct":
            return _read_only(self.cells.sum(axis=1))
        _, level, count = self.rows
        return _read_only(np.bincount(level, weights=count, minlength=self.t).astype(np.int64))

    @cached_property
    def support_counts(self) -> np.ndarray:
        """Reports supporting each item (over all users)."""
        if self.kind == "direct":
            return _read_only(self.cells.sum(axis=0))
        return _read_only(self.level_support_counts.sum(axis=0))

    @cached_property
    def level_support_counts(self) -> np.ndarray:
        """``(t, d)``: per reported level, the reports supporting each item."""
        if self.kind == "direct":
            return _read_only(self.cells.copy())
        return _read_only(np.rint(self.level_bit_sums(self.rows[2].astype(float))).astype(np.int64))

    @cached_property
    def pattern_ones(self) -> np.ndarray:
        """Unary: the number of ones of each distinct pattern (aligned with :attr:`rows`)."""
        patterns = self.rows[0]
        pad = 8 * patterns.shape[1] - self.d  # bits of the last byte past d, not counted
        ones = row_ones(patterns)
        if pad and patterns.shape[0]:
            ones -= row_ones(patterns[:, -1:] & np.uint8((1 << pad) - 1))
        return _read_only(ones)

    @cached_property
    def ones(self) -> np.ndarray | None:
        """Unary: the number of reports with ``s`` ones, ``s = 0..d`` (as :attr:`pldp.Tally.ones`); None for k-RR."""
        if self.kind == "direct":
            return None
        return _read_only(np.bincount(self.pattern_ones, weights=self.rows[2], minlength=self.d + 1).astype(np.int64))

    @cached_property
    def level_ones_support(self) -> np.ndarray:
        """Unary, ``(t, d)``: per reported level and item, the sum over the reports supporting the
        item of their numbers of ones (the cross moment of the robust method's delta method)."""
        count = self.rows[2]
        return _read_only(np.rint(self.level_bit_sums((count * self.pattern_ones).astype(float))).astype(np.int64))

    def level_bit_sums(self, weights: np.ndarray) -> np.ndarray:
        """Unary: ``out[l, j]``, the sum of ``weights`` over the patterns of reported level ``l`` setting bit ``j``."""
        patterns, level, _ = self.rows
        return group_bit_counts(patterns, level, self.t, np.asarray(weights, dtype=float))[:, : self.d]

    def _merge(self, other: FEBSFTally) -> FEBSFTally:
        if (other.kind, other.t, other.d) != (self.kind, self.t, self.d):
            raise TallyError("can only merge FEBSF tallies of the same data oracle, levels and domain")
        if self.kind == "direct":
            return FEBSFTally("direct", self.t, self.d, table=self.cells + other.cells, fingerprint=self.fingerprint)
        rows = [np.concatenate(pair) for pair in zip(self.rows, other.rows, strict=True)]
        merged, inverse = _pattern_rows(self.t, self.d, *rows, fingerprint=self.fingerprint)
        # the counts of the merged reports are the sums of the parts' (each part computes its own
        # once: the large honest tally of an attack experiment is merged with many small ones)
        ones = np.empty(merged.rows[0].shape[0], dtype=np.int64)
        ones[inverse] = np.concatenate([self.pattern_ones, other.pattern_ones])
        merged.__dict__["pattern_ones"] = _read_only(ones)
        for name in _ADDITIVE:
            merged.__dict__[name] = _read_only(getattr(self, name) + getattr(other, name))
        return merged

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FEBSFTally) or (other.kind, other.t, other.d, other.fingerprint) != (
            self.kind,
            self.t,
            self.d,
            self.fingerprint,
        ):
            return False
        if self.kind == "direct":
            return bool(np.array_equal(self.cells, other.cells))
        return all(np.array_equal(a, b) for a, b in zip(self.rows, other.rows, strict=True))

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "t": self.t, "d": self.d}
        if self.kind == "direct":
            out["table"] = self.cells.tolist()
        else:
            patterns, level, count = self.rows
            out.update(patterns=patterns.tolist(), pattern_level=level.tolist(), pattern_count=count.tolist())
        return out

    @classmethod
    def _from_fields(cls, data: dict[str, Any], fingerprint: str | None) -> FEBSFTally:
        t, d = int(data["t"]), int(data["d"])
        if data["kind"] in ("direct", "krr"):  # "krr": the name of format /1
            table = as_counts(np.asarray(data["table"]).reshape(-1), "table")
            if table.size != t * d:
                raise TallyError(f"table must be a non-negative ({t}, {d}) array")
            return cls("direct", t, d, table=table.reshape(t, d), fingerprint=fingerprint)
        return pattern_tally(
            t,
            d,
            np.asarray(data["patterns"], dtype=np.uint8).reshape(-1, (d + 7) // 8),
            np.asarray(data["pattern_level"], dtype=np.int64),
            as_counts(data["pattern_count"], "pattern_count"),
            fingerprint=fingerprint,
        )


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


#: The unary counts that add up when tallies merge (:meth:`FEBSFTally._merge` sums them).
_ADDITIVE = ("level_counts", "level_support_counts", "level_ones_support")


def pattern_tally(
    t: int, d: int, patterns: np.ndarray, level: np.ndarray, count: np.ndarray, *, fingerprint: str | None
) -> FEBSFTally:
    """The unary tally of rows ``(level, pattern)`` with counts: a histogram of the distinct rows."""
    return _pattern_rows(t, d, patterns, level, count, fingerprint=fingerprint)[0]


def _pattern_rows(
    t: int, d: int, patterns: np.ndarray, level: np.ndarray, count: np.ndarray, *, fingerprint: str | None
) -> tuple[FEBSFTally, np.ndarray]:
    """:func:`pattern_tally` and, for each input row, the index of its distinct row."""
    width = (d + 7) // 8
    if patterns.ndim != 2 or patterns.shape[1] != width or level.shape != (patterns.shape[0],):
        raise TallyError("patterns, levels and counts do not line up")
    if level.size and (level.min() < 0 or level.max() >= t):
        raise TallyError(f"reported levels must lie in [0, {t})")
    keys = np.concatenate([level.astype(np.uint8 if t < 256 else np.uint16)[:, None].view(np.uint8), patterns], axis=1)
    rows, inverse = unique_rows(keys)
    counts = np.bincount(inverse, weights=count, minlength=rows.shape[0]).astype(np.int64)
    lvl_bytes = keys.shape[1] - width
    lvl = rows[:, :lvl_bytes].copy().view(np.uint8 if t < 256 else np.uint16).reshape(-1).astype(np.int64)
    tally = FEBSFTally(
        "unary",
        t,
        d,
        patterns=rows[:, lvl_bytes:].copy(),
        pattern_level=lvl,
        pattern_count=counts,
        fingerprint=fingerprint,
    )
    return tally, inverse


def unique_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a ``uint8`` matrix in byte order and each row's index among them: what
    ``np.unique`` gives for the rows viewed as one void value each, without its slow void sort.

    The rows are read as big-endian 64-bit words (zero-padded), whose order is the bytes' order:
    one integer sort by the first word, and a sort by all the words of only the rows that share
    their first word with another.
    """
    n, width = keys.shape
    if n == 0:
        return keys.copy(), np.zeros(0, dtype=np.int64)
    words = -(-width // 8)
    padded = np.zeros((n, 8 * words), dtype=np.uint8)
    padded[:, :width] = keys
    cols = padded.view(">u8").astype(np.uint64)  # (n, words)
    first = cols[:, 0]
    order = np.argsort(first)
    if words > 1:
        ranked = first[order]
        same = ranked[1:] == ranked[:-1]
        tied = np.zeros(n, dtype=bool)
        tied[1:] = same
        tied[:-1] |= same
        at = np.flatnonzero(tied)
        if at.size:  # runs of one first word, in order: sorted together by every word
            sub = order[at]
            order[at] = sub[np.lexsort(np.take(cols, sub, axis=0).T[::-1])]
    ranked_cols = np.take(cols, order, axis=0)  # np.take: a row gather far faster than cols[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.any(ranked_cols[1:] != ranked_cols[:-1], axis=1, out=new[1:])
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return np.take(keys, order[new], axis=0), inverse
