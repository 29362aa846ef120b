"""The payload columns of reports: what each value is, how it is written and read, and its range.

A node's reports are held column by column (:meth:`pldp.channel.Node.columns`,
``docs/wire-format.md`` §4-5). Each :class:`Column` says what its values are, abstractly (its
:class:`Cell`: fixed-width packed bits, or an integer index below a bound), and carries their
codecs: a value in a report's JSON payload (:meth:`Column.to_json`, :meth:`Column.read_json`,
:meth:`Column.read_json_all`), a value in a fixed-width row of bytes (:attr:`Column.width`,
:meth:`Column.to_bytes`, :meth:`Column.from_bytes`: the collector's store) and the range checks
(:meth:`Column.check`, :meth:`Column.holds`). The consumers (the wire format, the store, report
files, the merge of report files, the collector's bounds on bodies) loop over a node's columns and
ask them; none of them knows the kinds of node. A consumer that needs its own type per cell (an
Arrow type) maps :class:`Cell` once.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from pldp.errors import ReportError

__all__ = ["Cell", "Column", "check_bits", "int_array", "refuse_first", "refuse_out_of_range"]

#: Items on the wire are 32-bit signed integers: a JSON item outside ``[-2**31, 2**31)`` is refused
#: as it is read; the rest of its range is checked with the others' (:meth:`Column.check`).
_INT32 = (-(2**31), 2**31)


class Cell(Enum):
    """What one value of a payload column is."""

    #: Fixed-width packed bits: ``nbytes`` bytes per report, the bits from ``size`` on zero.
    BITS = "bits"
    #: An integer index below ``size`` (32 bits in files and rows; ``-1`` where a report has none).
    INDEX = "index"


def refuse_first(bad: np.ndarray, why: str | Callable[[int], str], offset: int = 0) -> None:
    """Refuse the first report flagged in ``bad``: a :class:`ReportError` ``"report {row}: {why}"``
    (``why(i)`` when it is a function of the flagged index ``i``) with ``row = offset + i`` as its
    index. Nothing happens when no report is flagged."""
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = offset + i
        raise ReportError(f"report {row}: {why if isinstance(why, str) else why(i)}", row)


def refuse_out_of_range(values: np.ndarray, high: int, name: str, offset: int = 0) -> None:
    """Refuse the first of ``values`` not in ``[0, high)``: ``"report {row}: {name} {value} is not in
    [0, {high})"`` (:func:`refuse_first`). Two reductions decide the common case (every value in
    range) without building a mask."""
    if values.size and (values.min() < 0 or values.max() >= high):
        refuse_first(
            (values < 0) | (values >= high), lambda i: f"{name} {int(values[i])} is not in [0, {high})", offset
        )


def check_bits(bits: np.ndarray, nbits: int, rows: np.ndarray | None, name: str, offset: int = 0) -> None:
    """Refuse the first of the packed rows ``bits`` (those in ``rows``, or all) that sets a padding
    bit, a bit at or beyond ``nbits``."""
    pad = 8 * bits.shape[1] - nbits
    if pad:
        last = bits[:, -1] & np.uint8((1 << pad) - 1)
        bad = last != 0 if rows is None else (last != 0) & rows
        refuse_first(bad, f"{name} sets padding bits beyond bit {nbits - 1}", offset)


def int_array(values: list[Any], low: int, high: int) -> np.ndarray | None:
    """``values`` as an int64 array when every one is an int (not a bool) in ``[low, high)``; else None."""
    if values and set(map(type, values)) != {int}:
        return None
    try:
        arr = np.array(values, dtype=np.int64).reshape(len(values))
    except OverflowError:
        return None
    if len(arr) and (arr.min() < low or arr.max() >= high):
        return None
    return arr


@dataclass(frozen=True)
class Column:
    """One payload column: its ``name`` (the attribute's prefix and its ``kind``), ``kind`` (what it
    holds: ``"item"``, ``"bits"``, ``"level"``; a local-hashing report's ``"seed"`` and ``"value"``, a
    sketch's ``"row"``, ``"index"``, ``"bit"``: packed bits for ``"bits"``, an index for any other),
    the range of an index (``size``) or the bits of a packed row (``size`` bits,
    :attr:`Column.nbytes` bytes)."""

    name: str
    kind: str
    size: int

    @property
    def cell(self) -> Cell:
        """What one value is: packed bits, or an index."""
        return Cell.BITS if self.kind == "bits" else Cell.INDEX

    @property
    def nbytes(self) -> int:
        """Bytes of a packed row of bits."""
        return (self.size + 7) // 8

    @property
    def width(self) -> int:
        """Bytes of one value in a fixed-width row: the packed bits, or a little-endian int32."""
        return self.nbytes if self.cell is Cell.BITS else 4

    # ------------------------------------------------------------------ arrays
    def empty(self, n: int) -> np.ndarray:
        """``n`` values not yet set: zero bits (uint8 rows), ``-1`` indices (int64)."""
        if self.cell is Cell.BITS:
            return np.zeros((n, self.nbytes), dtype=np.uint8)
        return np.full(n, -1, dtype=np.int64)

    def to_bytes(self, values: np.ndarray) -> np.ndarray:
        """The values as ``(n, width)`` bytes (the inverse of :meth:`from_bytes`)."""
        if self.cell is Cell.BITS:
            return values
        return values.astype("<i4").view(np.uint8).reshape(len(values), 4)

    def from_bytes(self, block: np.ndarray) -> np.ndarray:
        """The values of ``(n, width)`` bytes, as :meth:`empty` holds them."""
        if self.cell is Cell.BITS:
            return block.copy()
        return block.copy().view("<i4").reshape(len(block)).astype(np.int64)

    def holds(self, values: np.ndarray) -> np.ndarray:
        """Per report, whether it has a value here (an index not ``-1``, or a bit set)."""
        if self.cell is Cell.BITS:
            return np.asarray(np.any(values != 0, axis=1))
        return np.asarray(values != -1)

    # ------------------------------------------------------------------ ranges
    def check(self, values: np.ndarray, bound: np.ndarray | int, rows: np.ndarray | None = None) -> None:
        """Refuse the first report (of ``rows``, or all) out of range: an index not in ``[0, bound)``
        (a bound per report, or one), or bits set at or beyond bit ``bound`` (one bound)."""
        if self.cell is Cell.BITS:
            check_bits(values, int(bound), rows, "the report")
            return
        if rows is None and np.ndim(bound) == 0 and (not values.size or (values.min() >= 0 and values.max() < bound)):
            return  # every value in range: two reductions, no mask
        bad = (values < 0) | (values >= bound)
        if rows is not None:
            bad &= rows
        refuse_first(bad, lambda i: f"{self.kind} {int(values[i])} is out of range")

    # ------------------------------------------------------------------ JSON
    def to_json(self, values: np.ndarray, row: int) -> Any:
        """The value of report ``row`` in a JSON payload: an integer, or the packed bits as base64."""
        if self.cell is Cell.BITS:
            return base64.b64encode(values[row].tobytes()).decode("ascii")
        return int(values[row])

    def read_json(self, value: Any, row: int, into: np.ndarray) -> None:
        """Put the JSON ``value`` of report ``row`` into ``into[row]``, refusing a value of the
        wrong shape (:class:`ReportError` naming the report); ``into`` is the column's array (its
        packed width may be wider than this column's, for a level of a leveled node)."""
        if self.cell is Cell.BITS:
            if not isinstance(value, str):
                raise ReportError(f"report {row}: the payload must be base64 text, got {type(value).__name__}", row)
            try:
                raw = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise ReportError(f"report {row}: bad base64 in the payload", row) from None
            if len(raw) != into.shape[1]:
                raise ReportError(f"report {row}: {len(raw)} bytes of bits, expected {into.shape[1]}", row)
            into[row] = np.frombuffer(raw, dtype=np.uint8)
        elif self.kind == "level":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < self.size:
                raise ReportError(f"report {row}: level {value!r} is not in [0, {self.size})", row)
            into[row] = value
        else:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ReportError(f"report {row}: the payload must be an item index, got {value!r}", row)
            if not _INT32[0] <= value < _INT32[1]:  # the rest of the range is checked by decode, with the others
                raise ReportError(f"report {row}: item {value} is not in [0, {self.size})", row)
            into[row] = value

    def is_canonical_json(self, value: Any) -> bool:
        """Whether ``value`` is a JSON value of this column, in range and as :meth:`to_json` writes
        it: an index in ``[0, size)``, or the base64 of ``nbytes`` bytes without padding bits."""
        if self.cell is Cell.INDEX:
            return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < self.size
        if not isinstance(value, str):
            return False
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return False
        pad = 8 * self.nbytes - self.size
        return len(raw) == self.nbytes and base64.b64encode(raw).decode() == value and not raw[-1] & ((1 << pad) - 1)

    def read_json_all(self, values: list[Any]) -> np.ndarray | None:
        """The column of a batch's JSON values, read at once, when every value is well formed (what
        :meth:`read_json` accepts, one by one); None otherwise."""
        if self.cell is Cell.INDEX:
            return int_array(values, *((0, self.size) if self.kind == "level" else _INT32))
        if set(map(type, values)) != {str}:  # an empty batch too: the reader of one by one reads it
            return None
        try:
            raw = [base64.b64decode(p, validate=True) for p in values]
        except (binascii.Error, ValueError):
            return None
        if set(map(len, raw)) != {self.nbytes}:
            return None
        return np.frombuffer(b"".join(raw), dtype=np.uint8).reshape(len(values), self.nbytes).copy()
