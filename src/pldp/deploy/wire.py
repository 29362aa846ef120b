"""The wire format: reports as JSON or as an Arrow table, held column by column.

:class:`ReportBatch` is a batch of reports of one spec in columnar form: the 16-byte report ids
and one array per payload column (``item``, ``bits``, ``level``; prefixed ``a{i}.`` per attribute
of MPLDP). It converts to and from the JSON forms (one report, ``pldp.report/1``; a batch,
``pldp.batch/1``) and the Arrow schema of report files (``docs/wire-format.md`` §4-5). Clients
build batches (:class:`pldp.client.Client`); :func:`pldp.deploy.decode` validates them and tallies.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp.channel import Cell, Column, LeveledNode, Node, NodeVisitor, PayloadReader, carried_rows, payload_writer
from pldp.channel.attributes import AttributesNode
from pldp.channel.direct import DirectNode
from pldp.channel.memo import MemoNode
from pldp.channel.padding import PaddingNode
from pldp.channel.unary import UnaryNode
from pldp.errors import ReportError

__all__ = ["ARROW", "BATCH_FORMAT", "REPORT_FORMAT", "ArrowCell", "Column", "ReportBatch", "arrow_columns"]

#: Version tag of one report.
REPORT_FORMAT = "pldp.report/1"
#: Version tag of a batch.
BATCH_FORMAT = "pldp.batch/1"
_HEX_ID = re.compile("[0-9a-f]{32}")


#: A payload's shape for :func:`_read_fast`: ``(leveled,)``, the leveled node it sits under (or
#: None); None for a shape it does not read.
_Shape = tuple["LeveledNode | None"] | None


class _Shapes(NodeVisitor[_Shape]):
    """Which payloads :func:`_read_fast` reads: one column's value, alone or under a level;
    ``node.accept(_SHAPE)`` is None for any other (several attributes, levels of levels)."""

    def direct(self, node: DirectNode, *args: Any) -> _Shape:
        return (None,)

    def unary(self, node: UnaryNode, *args: Any) -> _Shape:
        return (None,)

    def padding(self, node: PaddingNode, *args: Any) -> _Shape:
        return (None,)

    def leaf(self, node: Node, *args: Any) -> _Shape:
        """A leaf's payload, read fast when it is one column's value (several columns: the
        per-report reader, as :func:`_read_fast` falls back on any node of several data columns)."""
        return (None,)

    def leveled(self, node: LeveledNode, *args: Any) -> _Shape:
        inner = [item.accept(self) for item in node.items]
        if any(s is None or s[0] is not None for s in inner):  # a level holding levels or attributes
            return None
        return (node,)

    def attributes(self, node: AttributesNode, *args: Any) -> _Shape:
        return None

    def memo(self, node: MemoNode, *args: Any) -> _Shape:
        return node.permanent.accept(self)  # a report has the permanent node's payload


_SHAPE = _Shapes()


def _read_fast(
    root: Node, items: list[Any], want: set[str], spec: str
) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The ids and columns of a well-formed batch whose payloads are one column's value (a direct,
    unary or padding root, memoized or not) or such a payload under a level (a leveled root whose
    levels all fill one column), read with whole-batch operations (:meth:`Column.read_json_all`);
    None for any other root and for anything irregular, which the per-report reader of
    :meth:`ReportBatch.from_json` then refuses with the first bad report named (so both paths
    accept exactly the same batches)."""
    shape = root.accept(_SHAPE)
    if shape is None:
        return None
    (leveled,) = shape
    columns = root.columns()
    level_column = None
    if leveled is not None and leveled.level_report != "hidden":
        level_column, *columns = columns
    if len(columns) != 1:  # levels that fill different columns: the per-report reader
        return None
    (data,) = columns
    if not _all_dicts_with_keys(items, want):
        return None
    if "format" in want and (_values(items, "format") != {REPORT_FORMAT} or _values(items, "spec") != {spec}):
        return None
    hex_ids = list(map(_ITEM["id"], items))
    if _types(hex_ids) != {str} or set(map(len, hex_ids)) != {32} or len(set(hex_ids)) != len(hex_ids):
        return None
    joined = "".join(hex_ids)
    try:
        raw_ids = bytes.fromhex(joined)
    except ValueError:
        return None
    if raw_ids.hex() != joined:  # lower-case hex digits only (fromhex also takes upper case and spaces)
        return None
    ids = np.frombuffer(raw_ids, dtype=np.uint8).reshape(len(items), 16).copy()
    payloads = list(map(_ITEM["payload"], items))
    out: dict[str, np.ndarray] = {}
    if leveled is not None:
        keys = {"data"} if level_column is None else {"level", "data"}
        if not _all_dicts_with_keys(payloads, keys):
            return None
        if level_column is not None:
            levels = level_column.read_json_all(list(map(_ITEM["level"], payloads)))
            if levels is None:
                return None
            out[level_column.name] = levels
        payloads = list(map(_ITEM["data"], payloads))
    values = data.read_json_all(payloads)
    return None if values is None else (ids, {**out, data.name: values})


#: ``_ITEM[key](obj)`` is ``obj[key]``, mapped over a batch at C speed.
_ITEM = {key: operator.itemgetter(key) for key in ("id", "payload", "level", "data", "format", "spec")}


def _types(values: list[Any]) -> set[type]:
    """The exact types among ``values`` (bool is not int)."""
    return set(map(type, values))


def _values(items: list[dict[str, Any]], key: str) -> set[Any]:
    """The distinct values of ``key`` in a batch of dicts that all hold it."""
    return set(map(_ITEM[key], items))


def _all_dicts_with_keys(values: list[Any], keys: set[str]) -> bool:
    """Every value is a dict whose keys are exactly ``keys`` (an empty batch passes)."""
    if not values:
        return True
    return _types(values) == {dict} and all(map(operator.eq, map(dict.keys, values), itertools.repeat(keys)))


@dataclass(frozen=True)
class ReportBatch:
    """Reports of one spec in columnar form.

    Attributes
    ----------
    spec : str
        The spec id every report names.
    ids : ndarray of uint8, shape (n, 16)
        The report ids' bytes.
    columns : dict of str to ndarray
        The payload columns (:meth:`~pldp.channel.Node.columns`): item and level indices as int64 (``-1`` where a
        row has none), packed bits as uint8 rows.
    root : Node
        The spec's sampler root (how to read the columns).
    """

    spec: str
    ids: np.ndarray
    columns: dict[str, np.ndarray]
    root: Node

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @property
    def hex_ids(self) -> list[str]:
        """The report ids as 32 lower-case hex digits."""
        text = self.ids.tobytes().hex()
        return [text[32 * i : 32 * i + 32] for i in range(len(self))]

    def reports(self) -> Iterator[dict[str, Any]]:
        """Every report as its JSON object (``pldp.report/1``), keys in the wire order."""
        write = payload_writer(self.root)
        for i, rid in enumerate(self.hex_ids):
            yield {
                "format": REPORT_FORMAT,
                "spec": self.spec,
                "id": rid,
                "payload": write(self.columns, i),
            }

    def to_json(self) -> dict[str, Any]:
        """The batch form ``{"format": "pldp.batch/1", "spec": ..., "reports": [{"id", "payload"}, ...]}``."""
        return {
            "format": BATCH_FORMAT,
            "spec": self.spec,
            "reports": [{"id": r["id"], "payload": r["payload"]} for r in self.reports()],
        }

    def to_json_lines(self) -> str:
        """One compact report per line, as the clients serialize them."""
        return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in self.reports())

    # ------------------------------------------------------------------ reading JSON
    @classmethod
    def from_json(cls, data: Any, root: Node, spec: str) -> ReportBatch:
        """Parse reports: a batch object, a list of report objects, one report, or their text.

        Raises :class:`~pldp.errors.ReportError` naming the first bad report: an unknown format,
        another spec's id, a malformed or repeated report id, or a payload of the wrong shape
        (ranges and padding bits are checked by :func:`pldp.deploy.decode`).
        """
        if isinstance(data, (str, bytes)):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise ReportError(f"the reports are not valid JSON: {exc}") from None
        if isinstance(data, dict) and data.get("format") == BATCH_FORMAT:
            if data.get("spec") != spec:
                raise ReportError(f"the batch names spec {data.get('spec')!r}, not {spec}", None)
            items = data.get("reports")
            if not isinstance(items, list):
                raise ReportError("a batch needs a list of reports")
            full = False
        elif isinstance(data, dict):
            items, full = [data], True
        elif isinstance(data, list):
            items, full = data, True
        else:
            raise ReportError(f"expected a report, a list of reports or a batch, got {type(data).__name__}")
        n = len(items)
        want = {"format", "spec", "id", "payload"} if full else {"id", "payload"}
        fast = _read_fast(root, items, want, spec)
        if fast is not None:
            return cls(spec, *fast, root)
        reader = PayloadReader(root, n)
        seen: set[str] = set()
        for row, rep in enumerate(items):
            if not isinstance(rep, dict) or rep.keys() != want:
                raise ReportError(f"report {row}: must be an object with exactly {sorted(want)}", row)
            if full and rep["format"] != REPORT_FORMAT:
                raise ReportError(f"report {row}: unknown format {rep['format']!r}", row)
            if full and rep["spec"] != spec:
                raise ReportError(f"report {row}: it names spec {rep['spec']!r}, not {spec}", row)
            rid = rep["id"]
            if not isinstance(rid, str) or _HEX_ID.fullmatch(rid) is None:
                raise ReportError(f"report {row}: the id must be 32 lower-case hex digits", row)
            if rid in seen:
                raise ReportError(f"report {row}: a duplicate id (an earlier report's) in the batch", row)
            seen.add(rid)
            reader.read(rep["payload"], row)
        hex_ids = "".join(rep["id"] for rep in items)
        ids = np.frombuffer(bytes.fromhex(hex_ids), dtype=np.uint8).reshape(n, 16).copy()
        return cls(spec, ids, reader.cols, root)

    # ------------------------------------------------------------------ Arrow
    def arrow_schema(self) -> Any:
        """The Arrow schema of report files (needs ``pyarrow``: ``pip install pldp[deploy]``)."""
        import pyarrow as pa

        fields = [pa.field("spec", pa.string()), pa.field("id", pa.binary(16))]
        for c in self.root.columns():
            fields.append(pa.field(c.name, ARROW[c.cell].type(c)))
        return pa.schema(fields, metadata={"pldp.spec": self.spec, "pldp.format": REPORT_FORMAT})

    def to_arrow(self) -> Any:
        """The batch as an Arrow table (``docs/wire-format.md`` §5); rows without a value are null."""
        import pyarrow as pa

        schema = self.arrow_schema()
        n = len(self)
        arrays: list[Any] = [
            pa.DictionaryArray.from_arrays(np.zeros(n, dtype=np.int8), pa.array([self.spec])).cast(pa.string()),
            pa.FixedSizeBinaryArray.from_buffers(pa.binary(16), n, [None, pa.py_buffer(self.ids.tobytes())]),
        ]
        for c in self.root.columns():
            arrays.append(ARROW[c.cell].array(c, self))
        return pa.Table.from_arrays(arrays, schema=schema)

    def carried(self, column: Column) -> np.ndarray | None:
        """Rows that carry a value of a data column whose levels do not all fill it (a mixed
        leveled node, APLDP); None when every report's level fills it (or there are no levels)."""
        return carried_rows(self.root, column, self.columns)

    def file_values(self, column: Column) -> np.ndarray:
        """A payload column's values as a report file holds them: a row with no value (null in
        the file) as the column's empty value."""
        return ARROW[column.cell].as_filed(column, self)

    @classmethod
    def from_arrow(cls, table: Any, root: Node, spec: str) -> ReportBatch:
        """Read an Arrow table of reports (vectorised; checks the columns' names and types)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        n = table.num_rows
        names = set(table.column_names)
        want = ["spec", "id"] + [c.name for c in root.columns()]
        if set(want) != names:
            raise ReportError(f"the table's columns {sorted(names)} are not {sorted(want)}")
        specs = table.column("spec")
        if n and (specs.null_count or not pc.all(pc.equal(specs, spec)).as_py()):
            bad = int(np.flatnonzero(~np.asarray(pc.fill_null(pc.equal(specs, spec), False)))[0])
            raise ReportError(f"report {bad}: it names another spec, not {spec}", bad)
        idcol = table.column("id").combine_chunks()
        if idcol.type != pa.binary(16) or idcol.null_count:
            raise ReportError("the id column must be fixed_size_binary(16) without nulls")
        ids = np.frombuffer(idcol.buffers()[1], dtype=np.uint8, count=16 * n, offset=16 * idcol.offset).reshape(n, 16)
        return cls(spec, ids, arrow_columns(table, root), root)


def arrow_columns(table: Any, root: Node) -> dict[str, np.ndarray]:
    """The payload columns of an Arrow table of reports as :attr:`ReportBatch.columns`.

    Only the payload columns (:meth:`~pldp.channel.Node.columns`) are read, so a reader that needs no ids (an
    aggregation of report files) may leave the ``spec`` and ``id`` columns unread. Their types
    are checked; their values are checked by :func:`pldp.deploy.decode.check_payload`.
    """
    cols: dict[str, np.ndarray] = {}
    for c in root.columns():
        arr = table.column(c.name).combine_chunks()
        arrow = ARROW[c.cell]
        if not arrow.accepts(c, arr.type):
            raise ReportError(f"column {c.name} must {arrow.must(c)}, got {arr.type}")
        cols[c.name] = arrow.values(c, arr, table.num_rows)
    return cols


class ArrowCell:
    """How report files (Arrow, Parquet) hold the values of one :class:`~pldp.channel.Cell`."""

    def type(self, column: Column) -> Any:
        """The column's Arrow type, as :meth:`ReportBatch.to_arrow` writes it."""
        raise NotImplementedError

    def what(self, column: Column) -> str:
        """The types a file's column may have, in words."""
        raise NotImplementedError

    def must(self, column: Column) -> str:
        """What the column must be, for an error message (``"be ..."``, ``"hold ..."``)."""
        raise NotImplementedError

    def accepts(self, column: Column, arrow_type: Any) -> bool:
        """Whether a file's column of ``arrow_type`` can hold the column."""
        raise NotImplementedError

    def array(self, column: Column, batch: ReportBatch) -> Any:
        """The Arrow array of the column's values in ``batch`` (null where a report has none)."""
        raise NotImplementedError

    def values(self, column: Column, arr: Any, n: int) -> np.ndarray:
        """The values of an Arrow array (of an accepted type) of ``n`` rows, as the batch holds them."""
        raise NotImplementedError

    def as_filed(self, column: Column, batch: ReportBatch) -> np.ndarray:
        """The column's values in ``batch`` as :meth:`values` reads them back from a file."""
        raise NotImplementedError


class _ArrowBits(ArrowCell):
    """Packed bits: ``fixed_size_binary(nbytes)``, null in rows whose level sends no bits."""

    def type(self, column: Column) -> Any:
        import pyarrow as pa

        return pa.binary(column.nbytes)

    def what(self, column: Column) -> str:
        return f"fixed_size_binary({column.nbytes})"

    def must(self, column: Column) -> str:
        return f"be {self.what(column)}"

    def accepts(self, column: Column, arrow_type: Any) -> bool:
        return bool(arrow_type == self.type(column))

    def array(self, column: Column, batch: ReportBatch) -> Any:
        import pyarrow as pa

        carried = batch.carried(column)
        mask = None if carried is None else pa.array(carried).buffers()[1]
        data = pa.py_buffer(np.ascontiguousarray(batch.columns[column.name]).tobytes())
        return pa.FixedSizeBinaryArray.from_buffers(self.type(column), len(batch), [mask, data])

    def values(self, column: Column, arr: Any, n: int) -> np.ndarray:
        if n == 0:  # an empty array may have no data buffer
            return column.empty(0)
        nbytes = column.nbytes
        buf = np.frombuffer(arr.buffers()[1], dtype=np.uint8, count=nbytes * n, offset=nbytes * arr.offset)
        return buf.reshape(n, nbytes)

    def as_filed(self, column: Column, batch: ReportBatch) -> np.ndarray:
        values, carried = batch.columns[column.name], batch.carried(column)
        return values if carried is None else np.where(carried[:, None], values, 0).astype(np.uint8)


class _ArrowIndex(ArrowCell):
    """An index: ``int32`` written, any integer type read; null where it is ``-1``."""

    def type(self, column: Column) -> Any:
        import pyarrow as pa

        return pa.int32()

    def what(self, column: Column) -> str:
        return "integers"

    def must(self, column: Column) -> str:
        return f"hold {self.what(column)}"

    def accepts(self, column: Column, arrow_type: Any) -> bool:
        import pyarrow as pa

        return bool(pa.types.is_integer(arrow_type))

    def array(self, column: Column, batch: ReportBatch) -> Any:
        import pyarrow as pa

        values = batch.columns[column.name]
        return pa.array(values.astype(np.int32), mask=values < 0)

    def values(self, column: Column, arr: Any, n: int) -> np.ndarray:
        return np.asarray(arr.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)

    def as_filed(self, column: Column, batch: ReportBatch) -> np.ndarray:
        return batch.columns[column.name]  # a null index is read as -1, as the batch holds it


#: How report files hold each cell: the one place that maps a :class:`~pldp.channel.Cell` to Arrow.
ARROW: dict[Cell, ArrowCell] = {Cell.BITS: _ArrowBits(), Cell.INDEX: _ArrowIndex()}
