"""Report files as Parquet: opening one (a path or a URL), and the checks made from its footer.

A file is checked before any of its rows is counted: its schema (columns, types, and the spec and
format named in its metadata) must be the spec's. The ``spec`` column is proven from the row
group's statistics when it can be (min = max = the spec id, no nulls), else read as a dictionary
and checked row by row (``docs/scaling.md``, "What a part checks").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from pldp.aggregate.sources import is_url, url_fs
from pldp.deploy.count import refuse_first
from pldp.deploy.spec import Spec
from pldp.deploy.wire import REPORT_FORMAT
from pldp.errors import ReportError

__all__ = ["check_schema", "check_spec_column", "open_parquet", "row_groups", "spec_proven"]


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
        if c.kind == "bits":
            want[c.name] = (f"fixed_size_binary({c.nbytes})", lambda t, w=c.nbytes: t == pa.binary(w))
        else:
            want[c.name] = ("integers", pa.types.is_integer)
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


def row_groups(spec: Spec, source: str) -> list[int]:
    """The reports per row group of a file, from its footer, after checking its schema."""
    with open_parquet(source) as pf:
        try:
            check_schema(spec, pf.schema_arrow)
        except ReportError as exc:
            raise ReportError(f"{source}: {exc}") from None
        meta = pf.metadata
        return [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
