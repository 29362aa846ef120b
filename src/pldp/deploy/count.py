"""Check and count payload columns: one piece of code for the collector and for report files.

Reports of a spec are held column by column (``item``, ``bits``, ``level``; ``a{i}.`` per
attribute; :meth:`pldp.channel.Node.columns`). Before anything is counted, every report must be
in range: items and levels below their sizes, no padding bits set, nothing where a report's level
sends nothing. :func:`check_payload` checks that for the collector (:func:`pldp.deploy.decode`) and
for the rows of a report file (:mod:`pldp.aggregate`); a bad report is refused by its index with
the reason, and nothing is counted.

Report files are counted where they lie: :func:`count_table` tallies an Arrow table of reports.
Direct and unary (and padding) specs, by far the commonest, are counted by whole-column kernels
(:func:`item_counts`: ``np.bincount`` on the zero-copy item column; :func:`bit_counts`:
:func:`pldp.bitcount.count_bits` on the packed bits), which check the same ranges as they count;
the other specs go through :func:`check_payload` and the oracle's own tally
(:func:`tally_columns`). Both give the tally that :func:`pldp.deploy.decode` gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.bitcount import count_bits
from pldp.channel import AttributesNode, DirectNode, LeveledNode, MemoNode, Node, NodeVisitor, PaddingNode, UnaryNode
from pldp.channel.columns import check_bits, refuse_first
from pldp.channel.payload import check_columns
from pldp.deploy.spec import Spec
from pldp.deploy.wire import arrow_columns
from pldp.errors import TallyError
from pldp.heavy.count import ReportCount
from pldp.tally import Tally

__all__ = [
    "bit_counts",
    "check_bits",
    "check_payload",
    "count_table",
    "empty_tally",
    "item_counts",
    "load_tally",
    "refuse_first",
    "tally_columns",
]


def check_payload(root: Node, columns: dict[str, np.ndarray], n: int) -> None:
    """Refuse the first of ``n`` reports whose payload columns are out of range.

    Items and levels in range, no padding bits set, no item or bits where a report's level sends
    none: everything :func:`pldp.deploy.decode` checks except the report ids, for readers that
    tally payload columns without reading the ids (:mod:`pldp.aggregate`).

    Raises
    ------
    ReportError
        Naming the first bad report (``.index``) and why.
    """
    check_columns(root, columns, n)


def tally_columns(spec: Spec, columns: dict[str, np.ndarray]) -> Any:
    """The tally of payload columns that :func:`check_payload` accepted (no report ids needed); of a
    free-text spec, their number (:class:`~pldp.heavy.count.ReportCount`: its discovery reads the reports)."""
    if spec.free_text:
        spec.heavy_hitter()  # the spec's protocol, checked
        first = next(iter(columns.values()))
        return ReportCount(len(first), spec.id)
    oracle = spec.mechanism()
    return oracle.tally(*oracle.reports_from_columns(columns))


def load_tally(spec: Spec, obj: Any) -> Any:
    """A stored tally of ``spec`` (its ``to_dict`` form) read back: the oracle's, or a free-text spec's count."""
    if spec.free_text:
        count = ReportCount.from_dict(obj)
        if count.fingerprint != spec.id:
            raise TallyError(f"this count is of campaign {count.fingerprint!r}, not of {spec.id}")
        return count
    return spec.mechanism().load_tally(obj)


def empty_tally(spec: Spec) -> Any:
    """The spec's tally of no reports."""
    return tally_columns(spec, spec.root.empty_columns(0))


# ---------------------------------------------------------------------------------------------- Arrow
def _nulls(chunk: Any) -> np.ndarray:
    return ~np.asarray(chunk.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _refuse_out_of_range(items: np.ndarray, d: int, offset: int) -> None:
    bad = items >= d
    if items.dtype.kind == "i":
        bad |= items < 0
    refuse_first(bad, lambda i: f"item {int(items[i])} is not in [0, {d})", offset)


def item_counts(column: Any, d: int) -> np.ndarray:
    """Reports per item of a direct spec's ``item`` column (an Arrow chunked array); the first
    null or out-of-range row is refused."""
    counts = np.zeros(d, dtype=np.int64)
    offset = 0
    for chunk in column.chunks:
        if chunk.null_count:
            refuse_first(_nulls(chunk), "it has no item (null)", offset)
        items = chunk.to_numpy(zero_copy_only=True)
        try:
            found: np.ndarray | None = np.bincount(items, minlength=d)
        except (ValueError, TypeError):  # a negative item, or uint64 (bincount casts to intp safely only)
            found = None
        if found is None or found.size > d:
            _refuse_out_of_range(items, d, offset)
            found = np.bincount(items.astype(np.intp), minlength=d)
        counts += found
        offset += len(chunk)
    return counts


def bit_counts(column: Any, nbits: int) -> np.ndarray:
    """Per bit, the reports of a unary spec's ``bits`` column (an Arrow chunked array) that set it;
    the first null row, or the first row that sets a padding bit, is refused."""
    return _bit_counts(column, nbits, None)[0]


def _bit_counts(column: Any, nbits: int, stats: Any) -> tuple[np.ndarray, Any]:
    """:func:`bit_counts`, and the sum of ``stats(rows)`` (a pair: ones histogram, tails) over the blocks."""
    nbytes = (nbits + 7) // 8
    counts = np.zeros(8 * nbytes, dtype=np.int64)
    blocks = []
    offset = 0
    for chunk in column.chunks:
        m = len(chunk)
        if chunk.null_count:
            refuse_first(_nulls(chunk), "it has no bits (null)", offset)
        if m:
            data = np.frombuffer(chunk.buffers()[1], dtype=np.uint8, count=nbytes * m, offset=nbytes * chunk.offset)
            rows = data.reshape(m, nbytes)
            counts += count_bits(rows)
            blocks.append((offset, rows))
        offset += m
    if counts[nbits:].any():  # rare: find the first row that sets a padding bit
        for start, rows in blocks:
            check_bits(rows, nbits, None, "it", start)
    if stats is None:
        return counts[:nbits], None
    parts = [stats(rows) for _, rows in blocks] or [stats(np.zeros((0, nbytes), dtype=np.uint8))]
    ones = np.sum([p[0] for p in parts], axis=0)
    tails: dict[int, np.ndarray] = {}
    for _, part in parts:
        for key, vec in part.items():
            tails[key] = tails[key] + vec if key in tails else vec
    return counts[:nbits], (ones, tails)


def _unary_tally(spec: Spec, table: Any, node: Node) -> Tally:
    """A unary or padding spec's tally of an Arrow table (its one column of bits), with the report
    statistics its oracle keeps."""
    oracle: Any = spec.mechanism()  # a unary mechanism or padding-and-sampling: both have report_stats
    (bits,) = node.columns()
    counts, stats = _bit_counts(table.column(bits.name), bits.size, oracle.report_stats)
    return Tally(table.num_rows, counts, "unary", spec.id).with_report_stats(*stats)


class _Count(NodeVisitor[Any]):
    """The tally of an Arrow table of reports: ``spec.root.accept(_COUNT, spec, table)``."""

    def direct(self, node: DirectNode, spec: Spec, table: Any) -> Any:
        (item,) = node.columns()
        return Tally(table.num_rows, item_counts(table.column(item.name), item.size), "direct", spec.id)

    def unary(self, node: UnaryNode, spec: Spec, table: Any) -> Any:
        return _unary_tally(spec, table, node)

    def padding(self, node: PaddingNode, spec: Spec, table: Any) -> Any:
        return _unary_tally(spec, table, node)

    def _checked(self, node: Node, spec: Spec, table: Any) -> Any:
        columns = arrow_columns(table, node)
        check_payload(node, columns, table.num_rows)
        return tally_columns(spec, columns)

    def leveled(self, node: LeveledNode, spec: Spec, table: Any) -> Any:
        return self._checked(node, spec, table)

    def attributes(self, node: AttributesNode, spec: Spec, table: Any) -> Any:
        return self._checked(node, spec, table)

    def leaf(self, node: Node, spec: Spec, table: Any) -> Any:
        return self._checked(node, spec, table)

    def memo(self, node: MemoNode, spec: Spec, table: Any) -> Any:
        return node.permanent.accept(self, spec, table)  # a report has the permanent node's columns


_COUNT = _Count()


def count_table(spec: Spec, table: Any) -> Any:
    """The tally of an Arrow table of ``spec``'s reports (its payload columns), checked as
    :func:`check_payload` checks; equal to :func:`pldp.deploy.decode` of the same reports."""
    return spec.root.accept(_COUNT, spec, table)
