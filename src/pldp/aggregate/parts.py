"""One part of an aggregation: the tally of a report file, or of one of its row groups.

What a part hands on to be merged is its *count*: the tally itself for most oracles, or a
smaller-to-merge sufficient statistic where the oracle keeps one (``count_reports`` and
``tally_of``: FLH's ``(seed, value)`` table, :class:`pldp.mechanisms.hashed.SeedValueCounts`,
whose support counts cost ``seeds d`` hash evaluations, once after the merge rather than once
per part). A free-text campaign's is its checked reports (:class:`pldp.heavy.count.ReportRows`):
its protocol has no sufficient statistic smaller than they are, and discovers from them.
:func:`finish` turns a merged count into the tally.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from pldp.aggregate.parquet import check_schema, check_spec_column, open_parquet, spec_proven
from pldp.channel.columns import Cell
from pldp.deploy.count import check_payload, count_table, empty_tally
from pldp.deploy.spec import Spec
from pldp.deploy.wire import arrow_columns
from pldp.errors import ParameterError, ReportError
from pldp.heavy.count import ReportRows

__all__ = ["count_part", "count_table_part", "finish", "kept_rows", "tally_part"]

_REPORT_PREFIX = re.compile(r"report \d+: ")


def kept_rows(skip: np.ndarray | None, first: int, n: int) -> np.ndarray | None:
    """The rows ``first`` to ``first + n`` (exclusive) that no range of ``skip`` covers, relative to
    ``first``; None when none is covered.

    ``skip`` holds sorted, disjoint ``[start, stop)`` ranges of a file's rows, shape (k, 2).
    """
    if skip is None or not len(skip):
        return None
    inside = skip[(skip[:, 1] > first) & (skip[:, 0] < first + n)]
    if not len(inside):
        return None
    covered = np.zeros(n + 1, dtype=np.int64)  # +1 where a range starts, -1 where it stops
    np.add.at(covered, np.clip(inside[:, 0] - first, 0, n), 1)
    np.add.at(covered, np.clip(inside[:, 1] - first, 0, n), -1)
    return np.flatnonzero(np.cumsum(covered[:n]) == 0)


def _located(exc: ReportError, where: str, first_row: int, kept: np.ndarray | None) -> ReportError:
    """``exc`` (about a report of one row group) named by the file, the row group and the file's row."""
    if exc.index is None:
        return ReportError(f"{where}: {exc}")
    row = first_row + int(exc.index if kept is None else kept[exc.index])
    return ReportError(f"{where}, row {row}: {_REPORT_PREFIX.sub('', str(exc), count=1)}", row)


def count_table_part(spec: Spec, table: Any) -> Any:
    """The count of an Arrow table of ``spec``'s reports, checked as :func:`count_table` checks them:
    the oracle's ``count_columns`` where it has one, else :func:`count_table`'s tally (module
    docstring)."""
    if spec.free_text:  # a free-text campaign: its discovery reads the reports themselves
        payload = arrow_columns(table, spec.root)
        check_payload(spec.root, payload, table.num_rows)
        protocol = spec.heavy_hitter()
        return ReportRows(protocol.reports_from_columns(payload, spec.oracle_params["level"]), spec.id)
    oracle: Any = spec.mechanism()
    if not hasattr(oracle, "count_columns"):
        return count_table(spec, table)
    columns = _in_range(spec.root, table)
    if columns is None:  # a null, an index out of range: the checks of every spec name the first bad report
        columns = arrow_columns(table, spec.root)
        check_payload(spec.root, columns, table.num_rows)
    return oracle.count_columns(columns)


def _in_range(root: Any, table: Any) -> dict[str, np.ndarray] | None:
    """The payload columns, zero-copy, when each is an index column of ``int32`` or ``int64`` without
    a null and every value in its range (a min and a max; the check of a leaf of index columns);
    None otherwise."""
    out = {}
    for c in root.columns():
        column = table.column(c.name)
        if c.cell is not Cell.INDEX or column.null_count:
            return None
        values = column.combine_chunks().to_numpy()
        if values.dtype not in (np.int32, np.int64) or (values.size and (values.min() < 0 or values.max() >= c.size)):
            return None
        out[c.name] = values
    return out


def finish(spec: Spec, count: Any) -> Any:
    """The tally of a count of ``spec``'s reports (:func:`count_table_part`, merged or not); None: no reports."""
    if count is None:
        if spec.free_text:
            return ReportRows(spec.heavy_hitter().reports_from_columns(spec.root.empty_columns(0)), spec.id)
        return empty_tally(spec)
    if spec.free_text:
        return count
    tally_of = getattr(spec.mechanism(), "tally_of", None)
    return count if tally_of is None else tally_of(count)


def _count_group(spec: Spec, pf: Any, group: int, source: str | Path, skip: np.ndarray | None) -> Any:
    import pyarrow as pa

    meta = pf.metadata
    first_row = sum(meta.row_group(g).num_rows for g in range(group))
    where = f"{source}: row group {group}"
    names = [c.name for c in spec.root.columns()]
    kept = kept_rows(skip, first_row, meta.row_group(group).num_rows)
    read_spec = not spec_proven(meta.row_group(group), spec.id)
    try:
        table = pf.read_row_group(group, columns=[*names, "spec"] if read_spec else names, use_threads=False)
    except (OSError, pa.ArrowException) as exc:
        raise ReportError(f"{where}: cannot be read: {exc}") from None
    if kept is not None:
        table = table.take(pa.array(kept, type=pa.int64()))
    try:
        if read_spec:
            check_spec_column(table.column("spec"), spec.id)
        return count_table_part(spec, table)
    except ReportError as exc:
        raise _located(exc, where, first_row, kept) from None


def tally_part(spec: Spec, source: str | Path, row_group: int | None = None, skip: np.ndarray | None = None) -> Any:
    """The tally of one report file, or of one of its row groups: ``finish`` of ``count_part``
    (``pldp.aggregate.parts``).

    Parameters
    ----------
    spec : Spec
        The campaign's spec.
    source : str or Path
        A local path, or any URL fsspec opens (``file://``, ``memory://``, ``s3://``, ...).
    row_group : int, optional
        One row group (default: every row group, read one at a time).
    skip : ndarray of int64, shape (k, 2), optional
        Rows of the file not to count: sorted, disjoint ``[start, stop)`` ranges (the repeats
        :func:`pldp.aggregate.aggregate` found). Default: count every row.

    Returns
    -------
    The spec's tally (fingerprint = the spec id), equal to ``decode(spec, the file's reports)``
    (those not skipped). Only the payload columns are read, and the ``spec`` column when the
    footer's statistics do not prove it; the report ids are not read (see the module docstring
    for why).

    Raises
    ------
    ReportError
        The file cannot be read, its schema is not the spec's, or a report is bad. The message
        names the file, the row group and the first bad report's row within the file (``.index``).
        Nothing is counted.
    ParameterError
        ``row_group`` is not a row group of the file, or ``source`` is a URL fsspec cannot open.
    """
    return finish(spec, count_part(spec, source, row_group, skip))


def count_part(spec: Spec, source: str | Path, row_group: int | None = None, skip: np.ndarray | None = None) -> Any:
    """The count (module docstring) of one report file, or of one of its row groups: what
    :func:`tally_part` finishes, with its parameters and errors; None when it holds no report."""
    with open_parquet(source) as pf:
        try:
            check_schema(spec, pf.schema_arrow)
        except ReportError as exc:
            raise ReportError(f"{source}: {exc}") from None
        n_groups = pf.metadata.num_row_groups
        if row_group is not None and not 0 <= row_group < n_groups:
            raise ParameterError(f"{source} has {n_groups} row groups, not a row group {row_group}")
        groups = range(n_groups) if row_group is None else [row_group]
        count = None
        for g in groups:
            part = _count_group(spec, pf, g, source, skip)
            count = part if count is None else count.merge(part)
    return count
