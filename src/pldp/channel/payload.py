"""A report's payload: its JSON form over the payload columns, read and written, and its range checks.

Each kind of node decides the shape of its reports' payload (``docs/wire-format.md`` §4): a leaf
node (direct, unary, padding, and any kind covered by the rules for leaves) of one column is that
column's value (:class:`~pldp.channel.columns.Column` writes and reads it), and a leaf of several
columns an object of their values keyed by the columns' names without the attribute's prefix (e.g.
``{"seed": 123, "value": 4}``); a leveled node is ``{"level", "data"}`` (``{"data"}`` when the level is
hidden), the data that of the level's node; several attributes are a list of their parts'
payloads; a memoized chain's report is its permanent node's payload. Three visitors hold those
rules, one method per kind: :func:`payload_writer` (:func:`payload_json`) writes a report's payload from the columns,
:class:`PayloadReader` reads payloads into columns (refusing the first of the wrong shape), and
:func:`check_columns` checks every column's range (items and levels below their bounds, no
padding bits set, nothing where a report's level sends nothing) and then a leaf node's own
check (:meth:`~pldp.channel.node.Node.check_columns`, e.g. a subset's size); :func:`carried_rows` says which
reports' levels fill a column. :mod:`pldp.deploy.wire`,
:mod:`pldp.deploy.count` and the readers of report files call these; none of them knows the kinds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pldp.channel.attributes import AttributesNode
from pldp.channel.columns import Cell, Column, refuse_first
from pldp.channel.direct import DirectNode
from pldp.channel.leveled import LeveledNode
from pldp.channel.memo import MemoNode
from pldp.channel.node import Node, NodeVisitor
from pldp.channel.padding import PaddingNode
from pldp.channel.unary import UnaryNode
from pldp.errors import ReportError

__all__ = ["PayloadReader", "Writer", "carried_rows", "check_columns", "payload_json", "payload_writer"]


#: Writes the JSON payload of report ``row`` of the payload columns ``cols``.
Writer = Callable[[dict[str, np.ndarray], int], Any]


def _leaf_keys(columns: list[Column], prefix: str) -> list[str]:
    """The keys of a leaf's payload object of several ``columns`` (named ``prefix`` + key): each
    column's name without the prefix, in the columns' order."""
    return [c.name[len(prefix) :] for c in columns]


class _Payload(NodeVisitor[Writer]):
    """The :data:`Writer` of a node's reports: ``node.accept(_PAYLOAD, prefix)``, built once per
    batch (the columns looked up once, not per report)."""

    def leaf(self, node: Node, prefix: str) -> Writer:
        """One column's value; several columns' values in an object keyed by their names without ``prefix``."""
        columns = node.columns(prefix)
        if len(columns) == 1:
            (column,) = columns
            name, to_json = column.name, column.to_json
            return lambda cols, row: to_json(cols[name], row)
        named = [(key, c.name, c.to_json) for key, c in zip(_leaf_keys(columns, prefix), columns, strict=True)]
        return lambda cols, row: {key: to_json(cols[name], row) for key, name, to_json in named}

    def direct(self, node: DirectNode, prefix: str) -> Writer:
        return self.leaf(node, prefix)

    def unary(self, node: UnaryNode, prefix: str) -> Writer:
        return self.leaf(node, prefix)

    def padding(self, node: PaddingNode, prefix: str) -> Writer:
        return self.leaf(node, prefix)

    def leveled(self, node: LeveledNode, prefix: str) -> Writer:
        items = [item.accept(self, prefix) for item in node.items]
        if node.level_report == "hidden":
            return lambda cols, row: {"data": items[0](cols, row)}
        level_name = node.columns(prefix)[0].name  # the level, first

        def write(cols: dict[str, np.ndarray], row: int) -> Any:
            level = int(cols[level_name][row])
            return {"level": level, "data": items[level](cols, row)}

        return write

    def attributes(self, node: AttributesNode, prefix: str) -> Writer:
        parts = [p.accept(self, f"{prefix}a{i}.") for i, p in enumerate(node.parts)]
        return lambda cols, row: [write(cols, row) for write in parts]

    def memo(self, node: MemoNode, prefix: str) -> Writer:
        return node.permanent.accept(self, prefix)  # a report has the permanent node's payload


_PAYLOAD = _Payload()


def payload_writer(root: Node) -> Writer:
    """The writer of the JSON payloads of ``root``'s reports: ``payload_writer(root)(cols, row)``."""
    return root.accept(_PAYLOAD, "")


def payload_json(root: Node, cols: dict[str, np.ndarray], row: int) -> Any:
    """The JSON payload of report ``row`` of the payload columns ``cols`` of ``root``'s reports
    (for many reports, build :func:`payload_writer` once)."""
    return payload_writer(root)(cols, row)


class _Reader(NodeVisitor[None]):
    """Parses JSON payloads into columns ``cols``, refusing the first bad report with its index:
    ``node.accept(reader, payload, row, prefix)``."""

    def __init__(self, cols: dict[str, np.ndarray]) -> None:
        self.cols = cols
        self._columns: dict[tuple[int, str], list[Column]] = {}  # by (id(node), prefix): looked up once

    def columns(self, node: Node, prefix: str) -> list[Column]:
        """``node.columns(prefix)``, kept for the batch."""
        key = (id(node), prefix)
        found = self._columns.get(key)
        if found is None:
            found = self._columns[key] = node.columns(prefix)
        return found

    def leaf(self, node: Node, payload: Any, row: int, prefix: str) -> None:
        """One column's value; several columns' values in an object with exactly their keys."""
        columns = self.columns(node, prefix)
        if len(columns) == 1:
            (column,) = columns
            column.read_json(payload, row, self.cols[column.name])
            return
        keys = _leaf_keys(columns, prefix)
        if not isinstance(payload, dict) or set(payload) != set(keys):
            raise ReportError(f"report {row}: the payload must be an object with exactly {sorted(keys)}", row)
        for key, column in zip(keys, columns, strict=True):
            column.read_json(payload[key], row, self.cols[column.name])

    def direct(self, node: DirectNode, payload: Any, row: int, prefix: str) -> None:
        self.leaf(node, payload, row, prefix)

    def unary(self, node: UnaryNode, payload: Any, row: int, prefix: str) -> None:
        self.leaf(node, payload, row, prefix)

    def padding(self, node: PaddingNode, payload: Any, row: int, prefix: str) -> None:
        self.leaf(node, payload, row, prefix)

    def leveled(self, node: LeveledNode, payload: Any, row: int, prefix: str) -> None:
        hidden = node.level_report == "hidden"
        want = {"data"} if hidden else {"level", "data"}
        if not isinstance(payload, dict) or set(payload) != want:
            raise ReportError(f"report {row}: the payload must be an object with exactly {sorted(want)}", row)
        level = 0
        if not hidden:
            column = self.columns(node, prefix)[0]  # the level, first
            column.read_json(payload["level"], row, self.cols[column.name])
            level = payload["level"]
        node.items[level].accept(self, payload["data"], row, prefix)

    def attributes(self, node: AttributesNode, payload: Any, row: int, prefix: str) -> None:
        if not isinstance(payload, list) or len(payload) != len(node.parts):
            raise ReportError(f"report {row}: the payload must be a list of {len(node.parts)} parts", row)
        for i, (part, p) in enumerate(zip(node.parts, payload, strict=True)):
            part.accept(self, p, row, f"{prefix}a{i}.")

    def memo(self, node: MemoNode, payload: Any, row: int, prefix: str) -> None:
        node.permanent.accept(self, payload, row, prefix)  # a report has the permanent node's payload


class PayloadReader:
    """Reads the JSON payloads of ``n`` reports of ``root`` into its payload columns (:attr:`cols`),
    one report at a time (:meth:`read`)."""

    def __init__(self, root: Node, n: int) -> None:
        self.root = root
        self._reader = _Reader(root.empty_columns(n))

    @property
    def cols(self) -> dict[str, np.ndarray]:
        """The payload columns read so far (the others' values not yet set)."""
        return self._reader.cols

    def read(self, payload: Any, row: int) -> None:
        """Read report ``row``'s payload, refusing one of the wrong shape with a
        :class:`~pldp.errors.ReportError` naming the report (ranges are :func:`check_columns`')."""
        self.root.accept(self._reader, payload, row, "")


class _Check(NodeVisitor[None]):
    """The range checks of one part's columns: ``node.accept(_CHECK, columns, n, prefix)``."""

    def leaf(self, node: Node, cols: dict[str, np.ndarray], n: int, prefix: str) -> None:
        """Every column of every report within its range, then the node's own check of the reports."""
        for column in node.columns(prefix):
            column.check(cols[column.name], column.size)
        node.check_columns(cols, n, prefix)

    def direct(self, node: DirectNode, cols: dict[str, np.ndarray], n: int, prefix: str) -> None:
        self.leaf(node, cols, n, prefix)

    def unary(self, node: UnaryNode, cols: dict[str, np.ndarray], n: int, prefix: str) -> None:
        self.leaf(node, cols, n, prefix)

    def padding(self, node: PaddingNode, cols: dict[str, np.ndarray], n: int, prefix: str) -> None:
        self.leaf(node, cols, n, prefix)

    def leveled(self, node: LeveledNode, cols: dict[str, np.ndarray], n: int, prefix: str) -> None:
        # each report against its own level's node (a hidden or perturbed level: every level's node of
        # one report format, so the sizes agree whatever level a report's column says)
        columns = node.columns(prefix)
        if node.level_report == "hidden":
            level = np.zeros(n, dtype=np.int64)
        else:
            level_column, *columns = columns
            level = cols[level_column.name]
            level_column.check(level, node.t)
        for column in columns:
            values = cols[column.name]
            sizes = node.level_sizes(column.kind)  # each report's bound is its own level's
            uses = sizes > 0
            rows = uses[level]
            if column.cell is Cell.INDEX:
                column.check(values, sizes[level], rows)
            else:  # one bound of bits per level: level by level
                for t in np.flatnonzero(uses):
                    column.check(values, int(sizes[t]), rows & (level == t))
            refuse_first(~rows & column.holds(values), f"its level's node sends no {column.kind}")
        node.check_columns(cols, n, prefix)

    def attributes(self, node: AttributesNode, cols: dict[str, np.ndarray], n: int, prefix: str) -> None:
        for part_prefix, part in node.by_attribute:
            part.accept(self, cols, n, prefix + part_prefix)

    def memo(self, node: MemoNode, cols: dict[str, np.ndarray], n: int, prefix: str) -> None:
        node.permanent.accept(self, cols, n, prefix)  # a report has the permanent node's columns


_CHECK = _Check()


def check_columns(root: Node, columns: dict[str, np.ndarray], n: int) -> None:
    """Refuse the first of ``n`` reports of ``root`` whose payload columns are out of range (a
    :class:`~pldp.errors.ReportError` naming it and why)."""
    root.accept(_CHECK, columns, n, "")


def carried_rows(root: Node, column: Column, cols: dict[str, np.ndarray]) -> np.ndarray | None:
    """The reports (of the payload columns ``cols``) whose level fills the data column ``column``
    of ``root``, when its levels do not all fill it (a leveled node whose levels send an item or
    bits, APLDP: the others' rows are null in report files); None when every report fills it."""
    prefix = column.name[: -len(column.kind)]
    level = cols.get(prefix + "level")
    carries = dict(root.by_attribute)[prefix].level_carries(column.kind)
    if level is None or carries is None or carries.all():
        return None
    return carries[level]
