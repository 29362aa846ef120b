"""Report files as Parquet: opening one (a path or a URL), the checks made from its footer, and
reading some of its reports whole (to compare two files' copies of them).

A file is checked before any of its rows is counted: its schema (columns, types, and the spec and
format named in its metadata) must be the spec's, and the store and report numbers it names, if
any, well formed (:mod:`pldp.deploy.origin`). The ``spec`` column is proven from the row
group's statistics when it can be (min = max = the spec id, no nulls), else read as a dictionary
and checked row by row (``docs/scaling.md``, "What a part checks").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pldp.aggregate.sources import is_url, url_fs
from pldp.deploy.count import refuse_first
from pldp.deploy.files import round_of
from pldp.deploy.origin import Origin
from pldp.deploy.spec import Spec
from pldp.deploy.wire import ARROW, REPORT_FORMAT, ReportBatch, arrow_columns
from pldp.errors import ReportError

__all__ = [
    "Footer",
    "check_schema",
    "check_spec_column",
    "open_parquet",
    "read_footer",
    "read_rows",
    "report_ids",
    "spec_proven",
]


@contextmanager
def open_parquet(source: str | Path) -> Iterator[Any]:
    """The Parquet file at ``source`` (a path or URL); a file that cannot be opened or whose footer
    cannot be parsed is a :class:`ReportError` naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    handle = None
    try:
        if is_url(source):
            fs, path = url_fs(str(source))
            handle = fs.open(path, "rb")
        pf = pq.ParquetFile(handle if handle is not None else str(source), read_dictionary=["spec"])
    except (OSError, pa.ArrowException) as exc:
        if handle is not None:
            handle.close()
        if isinstance(exc, FileNotFoundError):  # gone since it was listed, or a URL of nothing
            raise ReportError(f"{source}: no such file or folder") from None
        raise ReportError(f"{source}: not a readable Parquet file: {exc}") from None
    try:
        yield pf
    finally:
        pf.close()
        if handle is not None:
            handle.close()


def check_schema(spec: Spec, schema: Any) -> None:
    """Refuse a file whose metadata names another spec or format, or whose columns are not the spec's."""
    import pyarrow as pa

    meta = schema.metadata or {}
    fmt = meta.get(b"pldp.format")
    if fmt is not None and fmt != REPORT_FORMAT.encode():
        raise ReportError(f"the file's format is {fmt.decode(errors='replace')!r}, not {REPORT_FORMAT}")
    named = meta.get(b"pldp.spec")
    if named is not None and named != spec.id.encode():
        raise ReportError(f"the file holds reports of spec {named.decode(errors='replace')}, not {spec.id}")

    def is_text(t: Any) -> bool:  # the file is opened with the spec column read as a dictionary
        t = t.value_type if pa.types.is_dictionary(t) else t
        return bool(pa.types.is_string(t) or pa.types.is_large_string(t))

    want: dict[str, tuple[str, Any]] = {
        "spec": ("strings", is_text),
        "id": ("fixed_size_binary(16)", lambda t: t == pa.binary(16)),
    }
    for c in spec.root.columns():
        arrow = ARROW[c.cell]
        want[c.name] = (arrow.what(c), lambda t, c=c, arrow=arrow: arrow.accepts(c, t))
    names = list(schema.names)
    if len(set(names)) != len(names) or set(names) != set(want):
        raise ReportError(f"the file's columns {sorted(names)} are not {sorted(want)}")
    for f in schema:
        what, ok = want[f.name]
        if not ok(f.type):
            raise ReportError(f"column {f.name} must hold {what}, got {f.type}")


def spec_proven(group: Any, spec_id: str) -> bool:
    """Whether the row group's statistics show every ``spec`` value equal to ``spec_id``."""
    if group.num_rows == 0:
        return True
    for i in range(group.num_columns):
        column = group.column(i)
        if column.path_in_schema == "spec":
            st = column.statistics
            want = (spec_id, spec_id.encode())
            return bool(
                st is not None
                and st.has_min_max
                and st.has_null_count
                and st.null_count == 0
                and st.min in want
                and st.max in want
            )
    return False


def check_spec_column(column: Any, spec_id: str) -> None:
    """Refuse the first row whose ``spec`` is null or another spec's id."""
    import pyarrow as pa
    import pyarrow.compute as pc

    offset = 0
    for chunk in column.chunks:
        if pa.types.is_dictionary(chunk.type):
            good = np.asarray(pc.equal(chunk.dictionary, spec_id).fill_null(False).to_numpy(zero_copy_only=False))
            index = np.asarray(chunk.indices.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.intp)
            ok = good[index] if good.size else np.zeros(len(chunk), dtype=bool)
        else:
            ok = np.asarray(pc.equal(chunk, spec_id).fill_null(False).to_numpy(zero_copy_only=False))
        if chunk.null_count:
            ok &= np.asarray(chunk.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        _refuse_other_spec(chunk, ok, spec_id, offset)
        offset += len(chunk)


def _refuse_other_spec(chunk: Any, ok: np.ndarray, spec_id: str, offset: int) -> None:
    refuse_first(~ok, lambda i: f"it names spec {chunk[i].as_py()!r}, not {spec_id}", offset)


@dataclass(frozen=True)
class Footer:
    """What a file's footer says: its reports per row group, the store's reports it holds, and
    the round they answer (None: it names none)."""

    groups: tuple[int, ...]
    origin: Origin | None
    round: int | None = None


def read_footer(spec: Spec, source: str) -> Footer:
    """The footer of a file, after checking its schema and the origin its metadata names."""
    with open_parquet(source) as pf:
        try:
            check_schema(spec, pf.schema_arrow)
            meta = pf.metadata
            groups = tuple(meta.row_group(g).num_rows for g in range(meta.num_row_groups))
            origin = Origin.from_metadata(pf.schema_arrow.metadata, sum(groups))
            turn = round_of(pf.schema_arrow.metadata)
        except ReportError as exc:
            raise ReportError(f"{source}: {exc}") from None
        return Footer(groups, origin, turn)


def read_rows(spec: Spec, pf: Any, rows: np.ndarray, source: str | Path) -> ReportBatch:
    """The reports (ids and payloads) at ``rows`` (increasing row numbers of the file) of an open file.

    Only the row groups that hold them are read. The payloads are not checked here: a caller
    compares them with reports that are counted, hence checked.

    Raises
    ------
    ReportError
        A row group cannot be read, or a report's id is missing.
    """
    import pyarrow as pa

    meta = pf.metadata
    bounds = np.cumsum([0, *(meta.row_group(g).num_rows for g in range(meta.num_row_groups))])
    names = ["id", *(c.name for c in spec.root.columns())]
    span = bool(rows.size) and rows[-1] - rows[0] + 1 == rows.size  # a range of rows: read a slice
    if span:
        first, last = np.searchsorted(bounds, [rows[0], rows[-1]], side="right") - 1
        groups = np.arange(first, last + 1)
    else:
        group_of = np.searchsorted(bounds, rows, side="right") - 1  # increasing, as ``rows``
        new = np.concatenate(([True], group_of[1:] != group_of[:-1]))
        groups, slot = group_of[new], np.cumsum(new) - 1
    try:
        table = pf.read_row_groups(groups.tolist(), columns=names, use_threads=False)
    except (OSError, pa.ArrowException) as exc:
        raise ReportError(f"{source}: cannot be read: {exc}") from None
    if span:
        table = table.slice(int(rows[0] - bounds[groups[0]]), int(rows.size))
    else:
        sizes = bounds[groups + 1] - bounds[groups]
        local = rows - bounds[group_of] + (np.cumsum(sizes) - sizes)[slot]  # the rows' places in ``table``
        table = table.take(pa.array(local, type=pa.int64()))
    ids = report_ids(table.column("id"), rows, source)
    return ReportBatch(spec.id, ids, arrow_columns(table, spec.root), spec.root)


def report_ids(column: Any, rows: np.ndarray, source: str | Path) -> np.ndarray:
    """The ids of an ``id`` column as bytes, shape (n, 16); ``rows`` are the file's rows of its values.

    Raises
    ------
    ReportError
        An id is missing (named by its row).
    """
    ids = column.combine_chunks()
    n = len(ids)
    if ids.null_count:
        row = int(rows[np.flatnonzero(np.asarray(ids.is_null().to_numpy(zero_copy_only=False)))[0]])
        raise ReportError(f"{source}: row {row}: the report id is missing", row)
    if n == 0:  # an empty array may have no data buffer
        return np.zeros((0, 16), dtype=np.uint8)
    return np.frombuffer(ids.buffers()[1], dtype=np.uint8, count=16 * n, offset=16 * ids.offset).reshape(n, 16)
