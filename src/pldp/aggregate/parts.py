"""One part of an aggregation: the tally of a report file, or of one of its row groups."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pldp.aggregate.parquet import check_schema, check_spec_column, open_parquet, spec_proven
from pldp.deploy.count import count_table, empty_tally
from pldp.deploy.spec import Spec
from pldp.errors import ParameterError, ReportError

__all__ = ["tally_part"]

_REPORT_PREFIX = re.compile(r"report \d+: ")


def _located(exc: ReportError, where: str, first_row: int) -> ReportError:
    """``exc`` (about a report of one row group) named by the file, the row group and the file's row."""
    if exc.index is None:
        return ReportError(f"{where}: {exc}")
    row = first_row + int(exc.index)
    return ReportError(f"{where}, row {row}: {_REPORT_PREFIX.sub('', str(exc), count=1)}", row)


def _tally_group(spec: Spec, pf: Any, group: int, source: str | Path) -> Any:
    import pyarrow as pa

    meta = pf.metadata
    first_row = sum(meta.row_group(g).num_rows for g in range(group))
    where = f"{source}: row group {group}"
    names = [c.name for c in spec.root.columns()]
    read_spec = not spec_proven(meta.row_group(group), spec.id)
    try:
        table = pf.read_row_group(group, columns=[*names, "spec"] if read_spec else names, use_threads=False)
    except (OSError, pa.ArrowException) as exc:
        raise ReportError(f"{where}: cannot be read: {exc}") from None
    try:
        if read_spec:
            check_spec_column(table.column("spec"), spec.id)
        return count_table(spec, table)
    except ReportError as exc:
        raise _located(exc, where, first_row) from None


def tally_part(spec: Spec, source: str | Path, row_group: int | None = None) -> Any:
    """The tally of one report file, or of one of its row groups.

    Parameters
    ----------
    spec : Spec
        The campaign's spec.
    source : str or Path
        A local path, or any URL fsspec opens (``file://``, ``memory://``, ``s3://``, ...).
    row_group : int, optional
        One row group (default: every row group, read one at a time).

    Returns
    -------
    The spec's tally (fingerprint = the spec id), equal to ``decode(spec, the file's reports)``.
    Only the payload columns are read, and the ``spec`` column when the footer's statistics do
    not prove it; the report ids are not read (see the module docstring for why).

    Raises
    ------
    ReportError
        The file cannot be read, its schema is not the spec's, or a report is bad. The message
        names the file, the row group and the first bad report's row within the file (``.index``).
        Nothing is counted.
    ParameterError
        ``row_group`` is not a row group of the file, or ``source`` is a URL fsspec cannot open.
    """
    with open_parquet(source) as pf:
        try:
            check_schema(spec, pf.schema_arrow)
        except ReportError as exc:
            raise ReportError(f"{source}: {exc}") from None
        n_groups = pf.metadata.num_row_groups
        if row_group is not None and not 0 <= row_group < n_groups:
            raise ParameterError(f"{source} has {n_groups} row groups, not a row group {row_group}")
        groups = range(n_groups) if row_group is None else [row_group]
        tally = None
        for g in groups:
            part = _tally_group(spec, pf, g, source)
            tally = part if tally is None else tally.merge(part)
    return tally if tally is not None else empty_tally(spec)
