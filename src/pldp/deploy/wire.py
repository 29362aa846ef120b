"""The wire format: reports as JSON or as an Arrow table, held column by column.

:class:`ReportBatch` is a batch of reports of one spec in columnar form: the 16-byte report ids
and one array per payload column (``item``, ``bits``, ``level``; prefixed ``a{i}.`` per attribute
of MPLDP). It converts to and from the JSON forms (one report, ``pldp.report/1``; a batch,
``pldp.batch/1``) and the Arrow schema of report files (``docs/wire-format.md`` §4-5). Clients
build batches (:class:`pldp.client.Client`); :func:`pldp.deploy.decode` validates them and tallies.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp.channel import (
    AttributesNode,
    Column,
    DirectNode,
    LeveledNode,
    MemoNode,
    Node,
    NodeVisitor,
    PaddingNode,
    UnaryNode,
)
from pldp.errors import ReportError

__all__ = ["BATCH_FORMAT", "REPORT_FORMAT", "Column", "ReportBatch", "arrow_columns"]

#: Version tag of one report.
REPORT_FORMAT = "pldp.report/1"
#: Version tag of a batch.
BATCH_FORMAT = "pldp.batch/1"
_HEX_ID = re.compile("[0-9a-f]{32}")


class _Payload(NodeVisitor[Any]):
    """A report's JSON payload from the payload columns: ``node.accept(_PAYLOAD, cols, row, prefix)``."""

    def direct(self, node: DirectNode, cols: dict[str, np.ndarray], row: int, prefix: str) -> Any:
        return int(cols[prefix + "item"][row])

    def unary(self, node: UnaryNode, cols: dict[str, np.ndarray], row: int, prefix: str) -> Any:
        return base64.b64encode(cols[prefix + "bits"][row].tobytes()).decode("ascii")

    def padding(self, node: PaddingNode, cols: dict[str, np.ndarray], row: int, prefix: str) -> Any:
        return base64.b64encode(cols[prefix + "bits"][row].tobytes()).decode("ascii")

    def leveled(self, node: LeveledNode, cols: dict[str, np.ndarray], row: int, prefix: str) -> Any:
        if node.level_report == "hidden":
            return {"data": node.items[0].accept(self, cols, row, prefix)}
        level = int(cols[prefix + "level"][row])
        return {"level": level, "data": node.items[level].accept(self, cols, row, prefix)}

    def attributes(self, node: AttributesNode, cols: dict[str, np.ndarray], row: int, prefix: str) -> Any:
        return [p.accept(self, cols, row, f"{prefix}a{i}.") for i, p in enumerate(node.parts)]

    def memo(self, node: MemoNode, cols: dict[str, np.ndarray], row: int, prefix: str) -> Any:
        return node.permanent.accept(self, cols, row, prefix)  # a report has the permanent node's payload


_PAYLOAD = _Payload()


#: A payload's shape: the leveled node it sits under (or None) and the nodes that can hold its data.
_Shape = tuple["LeveledNode | None", tuple[Node, ...]] | None


class _Shapes(NodeVisitor[_Shape]):
    """Which payloads :func:`_read_fast` reads: a bare item or bits, alone or under a level;
    ``node.accept(_SHAPE)`` is None for any other (several attributes)."""

    def direct(self, node: DirectNode, *args: Any) -> _Shape:
        return None, (node,)

    def unary(self, node: UnaryNode, *args: Any) -> _Shape:
        return None, (node,)

    def padding(self, node: PaddingNode, *args: Any) -> _Shape:
        return None, (node,)

    def leveled(self, node: LeveledNode, *args: Any) -> _Shape:
        inner = [item.accept(self) for item in node.items]
        if any(s is None or s[0] is not None for s in inner):  # a level holding levels or attributes
            return None
        return node, tuple(node.items)

    def attributes(self, node: AttributesNode, *args: Any) -> _Shape:
        return None

    def memo(self, node: MemoNode, *args: Any) -> _Shape:
        return node.permanent.accept(self)  # a report has the permanent node's payload


_SHAPE = _Shapes()


def _read_fast(
    root: Node, items: list[Any], want: set[str], spec: str
) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The ids and columns of a well-formed batch whose payloads are a bare item or bits (a direct,
    unary or padding root, memoized or not) or such a payload under a level (a leveled root whose
    levels all have that kind), read with whole-batch operations; None for any other root and for
    anything irregular, which the per-report reader of :meth:`ReportBatch.from_json` then refuses
    with the first bad report named (so both paths accept exactly the same batches)."""
    shape = root.accept(_SHAPE)
    if shape is None:
        return None
    leveled, leaves = shape
    if len({leaf.kind for leaf in leaves}) != 1:  # levels of different kinds: the per-report reader
        return None
    columns = [c for c in root.columns() if c.kind != "level"]
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
        keys = {"data"} if leveled.level_report == "hidden" else {"level", "data"}
        if not _all_dicts_with_keys(payloads, keys):
            return None
        if "level" in keys:
            levels = _int_array(list(map(_ITEM["level"], payloads)), 0, leveled.t)
            if levels is None:
                return None
            out["level"] = levels
        payloads = list(map(_ITEM["data"], payloads))
    if columns[0].kind == "item":
        item = _int_array(payloads, -(2**31), 2**31)
        return None if item is None else (ids, {**out, "item": item})
    nbytes = columns[0].nbytes
    if _types(payloads) != {str}:
        return None
    try:
        raw = [base64.b64decode(p, validate=True) for p in payloads]
    except (binascii.Error, ValueError):
        return None
    if set(map(len, raw)) != {nbytes}:
        return None
    bits = np.frombuffer(b"".join(raw), dtype=np.uint8).reshape(len(items), nbytes).copy()
    return ids, {**out, "bits": bits}


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


def _int_array(values: list[Any], low: int, high: int) -> np.ndarray | None:
    """``values`` as an int64 array when every one is an int (not a bool) in ``[low, high)``; else None."""
    if values and _types(values) != {int}:
        return None
    try:
        arr = np.array(values, dtype=np.int64).reshape(len(values))
    except OverflowError:
        return None
    if len(arr) and (arr.min() < low or arr.max() >= high):
        return None
    return arr


class _Reader(NodeVisitor[None]):
    """Parses JSON payloads into columns, refusing the first bad report with its index:
    ``node.accept(reader, payload, row, prefix)``."""

    def __init__(self, root: Node, n: int) -> None:
        self.cols = root.empty_columns(n)

    def direct(self, node: DirectNode, payload: Any, row: int, prefix: str) -> None:
        if isinstance(payload, bool) or not isinstance(payload, int):
            raise ReportError(f"report {row}: the payload must be an item index, got {payload!r}", row)
        if not -(2**31) <= payload < 2**31:  # the rest of the range is checked by decode, with the others
            raise ReportError(f"report {row}: item {payload} is not in [0, {node.d})", row)
        self.cols[prefix + "item"][row] = payload

    def _bits(self, payload: Any, row: int, prefix: str) -> None:
        if not isinstance(payload, str):
            raise ReportError(f"report {row}: the payload must be base64 text, got {type(payload).__name__}", row)
        try:
            raw = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise ReportError(f"report {row}: bad base64 in the payload", row) from None
        target = self.cols[prefix + "bits"]
        if len(raw) != target.shape[1]:
            raise ReportError(f"report {row}: {len(raw)} bytes of bits, expected {target.shape[1]}", row)
        target[row] = np.frombuffer(raw, dtype=np.uint8)

    def unary(self, node: UnaryNode, payload: Any, row: int, prefix: str) -> None:
        self._bits(payload, row, prefix)

    def padding(self, node: PaddingNode, payload: Any, row: int, prefix: str) -> None:
        self._bits(payload, row, prefix)

    def leveled(self, node: LeveledNode, payload: Any, row: int, prefix: str) -> None:
        want = {"data"} if node.level_report == "hidden" else {"level", "data"}
        if not isinstance(payload, dict) or set(payload) != want:
            raise ReportError(f"report {row}: the payload must be an object with exactly {sorted(want)}", row)
        level = 0
        if node.level_report != "hidden":
            level = payload["level"]
            if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < node.t:
                raise ReportError(f"report {row}: level {level!r} is not in [0, {node.t})", row)
            self.cols[prefix + "level"][row] = level
        node.items[level].accept(self, payload["data"], row, prefix)

    def attributes(self, node: AttributesNode, payload: Any, row: int, prefix: str) -> None:
        if not isinstance(payload, list) or len(payload) != len(node.parts):
            raise ReportError(f"report {row}: the payload must be a list of {len(node.parts)} parts", row)
        for i, (part, p) in enumerate(zip(node.parts, payload, strict=True)):
            part.accept(self, p, row, f"{prefix}a{i}.")

    def memo(self, node: MemoNode, payload: Any, row: int, prefix: str) -> None:
        node.permanent.accept(self, payload, row, prefix)  # a report has the permanent node's payload


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
        for i, rid in enumerate(self.hex_ids):
            yield {
                "format": REPORT_FORMAT,
                "spec": self.spec,
                "id": rid,
                "payload": self.root.accept(_PAYLOAD, self.columns, i, ""),
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
        reader = _Reader(root, n)
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
            root.accept(reader, rep["payload"], row, "")
        hex_ids = "".join(rep["id"] for rep in items)
        ids = np.frombuffer(bytes.fromhex(hex_ids), dtype=np.uint8).reshape(n, 16).copy()
        return cls(spec, ids, reader.cols, root)

    # ------------------------------------------------------------------ Arrow
    def arrow_schema(self) -> Any:
        """The Arrow schema of report files (needs ``pyarrow``: ``pip install pldp[deploy]``)."""
        import pyarrow as pa

        fields = [pa.field("spec", pa.string()), pa.field("id", pa.binary(16))]
        for c in self.root.columns():
            fields.append(pa.field(c.name, pa.binary(c.nbytes) if c.kind == "bits" else pa.int32()))
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
            values = self.columns[c.name]
            if c.kind == "bits":
                valid = self._bits_valid(c.name)
                mask = None if valid is None else pa.array(valid).buffers()[1]
                arrays.append(
                    pa.FixedSizeBinaryArray.from_buffers(
                        pa.binary(c.nbytes), n, [mask, pa.py_buffer(np.ascontiguousarray(values).tobytes())]
                    )
                )
            else:
                arrays.append(pa.array(values.astype(np.int32), mask=values < 0))
        return pa.Table.from_arrays(arrays, schema=schema)

    def _bits_valid(self, name: str) -> np.ndarray | None:
        """Rows that carry bits in a mixed leveled column (APLDP), else None (all rows)."""
        prefix = name[: -len("bits")]
        level = self.columns.get(prefix + "level")
        carries = dict(self.root.by_attribute)[prefix].level_carries("bits")
        if level is None or carries is None or carries.all():
            return None
        return carries[level]

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
    import pyarrow as pa

    n = table.num_rows
    cols: dict[str, np.ndarray] = {}
    for c in root.columns():
        arr = table.column(c.name).combine_chunks()
        if c.kind == "bits":
            if arr.type != pa.binary(c.nbytes):
                raise ReportError(f"column {c.name} must be fixed_size_binary({c.nbytes}), got {arr.type}")
            if n == 0:  # an empty array may have no data buffer
                cols[c.name] = np.zeros((0, c.nbytes), dtype=np.uint8)
                continue
            buf = np.frombuffer(arr.buffers()[1], dtype=np.uint8, count=c.nbytes * n, offset=c.nbytes * arr.offset)
            cols[c.name] = buf.reshape(n, c.nbytes)
        else:
            if not pa.types.is_integer(arr.type):
                raise ReportError(f"column {c.name} must hold integers, got {arr.type}")
            cols[c.name] = np.asarray(arr.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    return cols
