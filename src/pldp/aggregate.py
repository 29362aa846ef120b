"""Tally report files where they lie: one task per Parquet row group, merged in a tree on Dask.

A campaign's reports leave the collector as Parquet files in the wire format's Arrow schema
(:mod:`pldp.deploy.files`, ``docs/wire-format.md`` §5). Their tally is a sum over reports, and
pldp's tallies form a commutative monoid: ``a.merge(b)`` adds counts, in any order, and the result
is exact. So aggregating any number of files is a map-reduce:

* **map**: :func:`tally_part` decodes one row group (at most :data:`~pldp.deploy.files.ROW_GROUP`
  reports, a few MB) into a tally of a few hundred bytes;
* **reduce**: the tallies are merged by addition.

:func:`aggregate` lists the row groups from the files' Parquet footers (on the client, in a few
threads; the footers are small), submits one task per (file, row group) to a Dask cluster (a
local one by default: :mod:`pldp.parallel`), and merges the tallies *on the workers*, in a tree:

* The row groups of one file are merged by one task. That makes a file count all or nothing,
  which ``skip_bad`` needs.
* The files' results are then merged :data:`FANOUT` at a time, level by level, until one is left.
  Only that one result, a tally and a few counts, travels to the client.

Pulling 10^4 tallies to the client and merging them there would put 10^4 transfers and a serial
loop on one process, which is idle while the workers read. In the tree, each merge runs as soon
as its inputs exist, so merging overlaps with reading. Each tally crosses the network once, and
the depth is ``log_16`` of the number of files. The client holds futures of the row-group tasks
only to count them (the progress bar) and to see the first error as soon as it happens; it never
fetches their results.

What a part checks, and what it does not
----------------------------------------
Every part is checked as :func:`pldp.deploy.decode` checks a batch, and a bad part counts nothing.
The checks are: the file's schema (columns, types, and the spec and format named in its metadata);
the ``spec`` column; items and levels in range; no padding bits set; and no nulls where a report
needs a value. The exception is the report ids: the ``id`` column is checked in the schema
(``fixed_size_binary(16)``) but not read. The trade-offs:

* ``spec`` column: an honest file holds one spec id in every row. Its Parquet column statistics
  (min = max = the spec id, no nulls) prove that from the footer, and then the column is not read.
  Without such statistics the column is read as a dictionary, which costs about 3 ns per report,
  and the first row that names another spec is reported. The statistics are the writer's claim,
  but so is the column: a writer that lies in one can lie in the other. The check is there to
  catch files of another campaign given by mistake, and the schema's ``pldp.spec`` metadata
  catches most of those first.
* ``id`` column: not read. Reading it would cost 16 bytes per report, four times a direct
  report's payload, and a check within one part could find only repeats within that part. A
  report held by two files is in two parts. That happens with a retry stored by two collectors,
  with an ``--out-dir`` export beside the rollover's files of the same days, and with a retry
  that came after the retention window (``docs/collector.md``, "Many collectors"). So
  :func:`aggregate` counts every row of the files it is given. That is exact for files that hold
  disjoint reports, such as one collector's rollover files or one set of exports. Files that may
  overlap must first be merged by report id (:func:`pldp.deploy.dedupe.read_unique`, in memory;
  beyond memory, the reports would have to be partitioned by id first). A file named twice is
  read once (:func:`report_sources`).

Direct and unary (and padding) specs, by far the commonest, are counted by whole-column kernels:
``np.bincount`` on the zero-copy item column, and :func:`pldp.bitcount.count_bits` on the packed
bits. They give the tally that ``decode`` gives, and the tests check that for every oracle. The
other specs (leveled, several attributes) go through ``decode``'s own column checks and tally
(:func:`pldp.deploy.decode.check_payload`, :func:`~pldp.deploy.decode.tally_columns`).

Errors
------
A bad part raises :class:`~pldp.errors.ReportError`. Its message starts with the file and the
row group, then names the first bad report by its row number within the file (``.index``), then
says why: ``reports.parquet: row group 2, row 2097159: item 104 is not in [0, 100)``. A file that
cannot be read, or that has the wrong schema, is named without a row. With ``skip_bad`` every bad
file is left out whole and listed with its reason in :attr:`Aggregation.skipped`.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pldp.bitcount import count_bits
from pldp.deploy.decode import check_payload, tally_columns
from pldp.deploy.files import report_files
from pldp.deploy.sampler import DirectNode, PaddingNode, UnaryNode
from pldp.deploy.spec import Spec
from pldp.deploy.wire import REPORT_FORMAT, arrow_columns, columns_of
from pldp.errors import ParameterError, ReportError
from pldp.parallel import dask_client, dask_workers, progress_bar
from pldp.tally import Tally

__all__ = ["FANOUT", "Aggregation", "aggregate", "report_sources", "tally_part"]

#: Results merged by one reduction task (the tree's fan-in).
FANOUT = 16
#: Local Dask workers when ``workers`` is not given.
DEFAULT_WORKERS = 2
#: Threads that read the files' footers on the client.
_FOOTER_THREADS = 16
_REPORT_PREFIX = re.compile(r"report \d+: ")


@dataclass(frozen=True)
class Aggregation:
    """What :func:`aggregate` counted.

    Attributes
    ----------
    tally
        The tally of every report of every file counted (the spec's tally type; empty when none).
    files : int
        Files counted (skipped files excluded).
    parts : int
        Row groups counted.
    reports : int
        Reports counted (``tally.n``).
    skipped : list of (str, str)
        Every file left out (``skip_bad``) and why, in the order the files were given.
    seconds : float
        Wall time of the call, from listing the files to the merged tally.
    """

    tally: Any
    files: int
    parts: int
    reports: int
    skipped: list[tuple[str, str]]
    seconds: float


# ---------------------------------------------------------------------------------------------- sources
def _is_url(source: Any) -> bool:
    return isinstance(source, str) and "://" in source


def _url_fs(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path on it."""
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec comes with dask
        raise ParameterError(f"{url}: reading URLs needs fsspec (pip install fsspec)") from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:  # an unknown protocol, or its package missing
        raise ParameterError(f"{url}: cannot open this URL: {exc}") from None


def _expand(spec: Spec, source: str | Path) -> list[str]:
    """A file or URL as itself; a directory as its report files of ``spec`` (the Hive layout)."""
    layout = f"spec={spec.id}/day=*/*.parquet"
    if _is_url(source):
        url = str(source)
        fs, path = _url_fs(url)
        if not fs.isdir(path):
            return [url]
        found = sorted(p for p in fs.glob(f"{path.rstrip('/')}/{layout}") if not posixpath.basename(p).startswith("."))
        files = [fs.unstrip_protocol(p) for p in found]
    else:
        if not Path(source).is_dir():
            return [str(source)]
        files = [str(p) for p in report_files(source, spec.id)]
    if not files:
        raise ParameterError(f"{source}: a directory without report files of spec {spec.id} ({layout} under it)")
    return files


def report_sources(spec: Spec, sources: str | Path | Iterable[str | Path]) -> list[str]:
    """The report files that ``sources`` name, each once, in the order given.

    A source is a file, a URL that fsspec opens (``file://``, ``memory://``, ``s3://``, ...), or a
    directory (local or URL) laid out by :mod:`pldp.deploy.files`, which stands for its files of
    ``spec`` (``spec=<id>/day=*/*.parquet``, sorted). A file named twice (directly and through its
    directory, say) is kept once, so it is never counted twice.

    Raises
    ------
    ParameterError
        No source, a directory without report files of the spec, or a URL that fsspec cannot open.
    """
    if isinstance(sources, (str, Path)):
        sources = [sources]
    files: list[str] = []
    seen: set[str] = set()
    for source in sources:
        for file in _expand(spec, source):
            key = file if _is_url(file) else str(Path(file).resolve())
            if key not in seen:
                seen.add(key)
                files.append(file)
    if not files:
        raise ParameterError("no report files given")
    return files


# ---------------------------------------------------------------------------------------------- one part
@contextmanager
def _parquet(source: str | Path) -> Iterator[Any]:
    """The Parquet file at ``source`` (a path or URL); a file that cannot be opened or whose footer
    cannot be parsed is a :class:`ReportError` naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    handle = None
    try:
        if _is_url(source):
            fs, path = _url_fs(str(source))
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


def _check_schema(spec: Spec, schema: Any) -> None:
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
    for c in columns_of(spec.root):
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


def _first(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad)[0])


def _first_null(chunk: Any) -> int:
    return _first(~np.asarray(chunk.is_valid().to_numpy(zero_copy_only=False), dtype=bool))


def _spec_proven(group: Any, spec_id: str) -> bool:
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


def _check_spec_column(column: Any, spec_id: str) -> None:
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
        if not ok.all():
            i = _first(~ok)
            row = offset + i
            raise ReportError(f"report {row}: it names spec {chunk[i].as_py()!r}, not {spec_id}", row)
        offset += len(chunk)


def _item_counts(column: Any, d: int) -> np.ndarray:
    """Reports per item of a direct spec's ``item`` column; the first null or out-of-range row is refused."""
    counts = np.zeros(d, dtype=np.int64)
    offset = 0
    for chunk in column.chunks:
        if chunk.null_count:
            row = offset + _first_null(chunk)
            raise ReportError(f"report {row}: it has no item (null)", row)
        items = chunk.to_numpy(zero_copy_only=True)
        try:
            found: np.ndarray | None = np.bincount(items, minlength=d)
        except (ValueError, TypeError):  # a negative item, or uint64 (bincount casts to intp safely only)
            found = None
        if found is None or found.size > d:
            bad = items >= d
            if items.dtype.kind == "i":
                bad |= items < 0
            if bad.any():
                i = _first(bad)
                row = offset + i
                raise ReportError(f"report {row}: item {int(items[i])} is not in [0, {d})", row)
            found = np.bincount(items.astype(np.intp), minlength=d)
        counts += found
        offset += len(chunk)
    return counts


def _bit_counts(column: Any, nbits: int) -> np.ndarray:
    """Per bit, the reports of a unary spec's ``bits`` column that set it; the first null row, or
    the first row that sets a padding bit, is refused."""
    nbytes = (nbits + 7) // 8
    counts = np.zeros(8 * nbytes, dtype=np.int64)
    blocks = []
    offset = 0
    for chunk in column.chunks:
        m = len(chunk)
        if chunk.null_count:
            row = offset + _first_null(chunk)
            raise ReportError(f"report {row}: it has no bits (null)", row)
        if m:
            data = np.frombuffer(chunk.buffers()[1], dtype=np.uint8, count=nbytes * m, offset=nbytes * chunk.offset)
            rows = data.reshape(m, nbytes)
            counts += count_bits(rows)
            blocks.append((offset, rows))
        offset += m
    if counts[nbits:].any():  # rare: find the first row that sets a padding bit
        pad = np.uint8((1 << (8 * nbytes - nbits)) - 1)
        for start, rows in blocks:
            bad = (rows[:, -1] & pad) != 0
            if bad.any():
                row = start + _first(bad)
                raise ReportError(f"report {row}: it sets padding bits beyond bit {nbits - 1}", row)
    return counts[:nbits]


def _count(spec: Spec, table: Any) -> Any:
    """The tally of one row group's columns (a direct or unary kernel, or ``decode``'s checks)."""
    root = spec.root
    n = table.num_rows
    if isinstance(root, DirectNode):
        return Tally(n, _item_counts(table.column("item"), root.d), "direct", spec.id)
    if isinstance(root, (UnaryNode, PaddingNode)):
        nbits = root.d if isinstance(root, UnaryNode) else root.inner.d
        return Tally(n, _bit_counts(table.column("bits"), nbits), "unary", spec.id)
    columns = arrow_columns(table, root)
    check_payload(root, columns, n)
    return tally_columns(spec, columns)


def _empty_tally(spec: Spec) -> Any:
    """The spec's tally of no reports."""
    columns = {
        c.name: np.zeros((0, c.nbytes), dtype=np.uint8) if c.kind == "bits" else np.zeros(0, dtype=np.int64)
        for c in columns_of(spec.root)
    }
    return tally_columns(spec, columns)


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
    names = [c.name for c in columns_of(spec.root)]
    read_spec = not _spec_proven(meta.row_group(group), spec.id)
    try:
        table = pf.read_row_group(group, columns=[*names, "spec"] if read_spec else names, use_threads=False)
    except (OSError, pa.ArrowException) as exc:
        raise ReportError(f"{where}: cannot be read: {exc}") from None
    try:
        if read_spec:
            _check_spec_column(table.column("spec"), spec.id)
        return _count(spec, table)
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
    with _parquet(source) as pf:
        try:
            _check_schema(spec, pf.schema_arrow)
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
    return tally if tally is not None else _empty_tally(spec)


def _row_groups(spec: Spec, source: str) -> list[int]:
    """The reports per row group of a file, from its footer, after checking its schema."""
    with _parquet(source) as pf:
        try:
            _check_schema(spec, pf.schema_arrow)
        except ReportError as exc:
            raise ReportError(f"{source}: {exc}") from None
        meta = pf.metadata
        return [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]


# ---------------------------------------------------------------------------------------------- tasks
@dataclass(frozen=True)
class _Part:
    """A row group's result: its tally, or why it is bad."""

    source: str
    tally: Any
    error: str | None


@dataclass(frozen=True)
class _Done:
    """Merged results of whole files."""

    tally: Any = None
    files: int = 0
    parts: int = 0
    reports: int = 0
    skipped: tuple[tuple[str, str], ...] = ()


def _tally_task(spec: Spec, source: str, group: int, catch: bool) -> _Part:
    """Map: one row group. A bad one raises (``catch`` False: the run stops) or is returned as such."""
    try:
        return _Part(source, tally_part(spec, source, group), None)
    except ReportError as exc:
        if not catch:
            raise
        reason = str(exc)
        return _Part(source, None, reason.removeprefix(f"{source}: "))


def _file_task(*parts: _Part) -> _Done:
    """Reduce the row groups of one file: all of them, or none if one is bad."""
    bad = next((p.error for p in parts if p.error is not None), None)
    if bad is not None:
        return _Done(skipped=((parts[0].source, bad),))
    tally = parts[0].tally
    for p in parts[1:]:
        tally = tally.merge(p.tally)
    return _Done(tally, 1, len(parts), int(tally.n))


def _merge_task(*items: _Done | _Part) -> _Done:
    """Reduce: whole files' results (a file of one row group comes as its :class:`_Part`)."""
    done = [_file_task(x) if isinstance(x, _Part) else x for x in items]
    tally = None
    for d in done:
        if d.tally is not None:
            tally = d.tally if tally is None else tally.merge(d.tally)
    return _Done(
        tally,
        sum(d.files for d in done),
        sum(d.parts for d in done),
        sum(d.reports for d in done),
        tuple(s for d in done for s in d.skipped),
    )


def _run_serial(spec: Spec, plan: Sequence[tuple[str, int]], skip_bad: bool, bar: Any) -> _Done:
    """Every part in this process, file by file; a bad file's remaining row groups are not read."""
    done = _Done()
    for source, n_groups in plan:
        parts = []
        for g in range(n_groups):
            parts.append(_tally_task(spec, source, g, skip_bad))
            if parts[-1].error is not None:  # the file is skipped whole
                if bar is not None:
                    bar.update(n_groups - g)
                break
            if bar is not None:
                bar.update(1)
        done = _merge_task(done, _file_task(*parts))
    return done


def _tree(client: Any, units: list[Any]) -> Any:
    """The future of ``units`` (files' futures) merged :data:`FANOUT` at a time on the workers."""
    level = units
    while True:
        level = [client.submit(_merge_task, *level[i : i + FANOUT], pure=False) for i in range(0, len(level), FANOUT)]
        if len(level) == 1:
            return level[0]


def _run_dask(
    spec: Spec, plan: Sequence[tuple[str, int]], skip_bad: bool, bar: Any, *, workers: int, scheduler: str | None
) -> _Done:
    """Every part on a Dask cluster, merged in a tree there (module docstring)."""
    from dask.distributed import as_completed

    with dask_client(workers, scheduler) as client:
        shared = client.scatter(spec, broadcast=True, hash=False)  # one copy per worker, not one per task
        parts: list[Any] = []
        units: list[Any] = []
        for source, n_groups in plan:
            futures = [client.submit(_tally_task, shared, source, g, skip_bad, pure=False) for g in range(n_groups)]
            parts += futures
            units.append(futures[0] if n_groups == 1 else client.submit(_file_task, *futures, pure=False))
        root = _tree(client, units)
        finished = as_completed(parts)
        del parts, units, futures  # only the tree holds the parts now: each result is freed once merged
        for fut in finished:
            if fut.status == "error":
                fut.result()  # raises the part's ReportError; leaving the client cancels the rest
            if bar is not None:
                bar.update(1)
        result: _Done = root.result()
        return result


def _plan(spec: Spec, files: list[str], skip_bad: bool) -> tuple[list[tuple[str, int]], list[tuple[str, str]]]:
    """Each readable file with its number of row groups; the unreadable ones (``skip_bad``) with why."""

    def footer(source: str) -> list[int] | ReportError:
        try:
            return _row_groups(spec, source)
        except ReportError as exc:
            return exc

    with ThreadPoolExecutor(max(1, min(_FOOTER_THREADS, len(files)))) as pool:
        footers = list(pool.map(footer, files))
    plan: list[tuple[str, int]] = []
    skipped: list[tuple[str, str]] = []
    for source, groups in zip(files, footers, strict=True):
        if isinstance(groups, ReportError):
            if not skip_bad:
                raise groups
            skipped.append((source, str(groups).removeprefix(f"{source}: ")))
        else:
            plan.append((source, len(groups)))
    return plan, skipped


def aggregate(
    spec: Spec,
    sources: str | Path | Iterable[str | Path],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    skip_bad: bool = False,
    progress: bool = True,
) -> Aggregation:
    """Tally report files of ``spec``: one task per row group, on Dask, merged in a tree.

    Parameters
    ----------
    spec : Spec
        The campaign's spec.
    sources : str, Path or iterable of them
        Files, URLs that fsspec opens, or directories in the layout of :mod:`pldp.deploy.files`
        (:func:`report_sources`).
    scheduler : str, optional
        Address of an existing Dask scheduler (``"tcp://host:port"``); its workers need pldp.
    workers : int, optional
        Local Dask worker processes (one thread each) when no scheduler is given (default 2). 0 or
        1, or no ``dask.distributed``, runs serially in this process, with the same result.
    skip_bad : bool
        Leave out every bad file whole (even if only one of its row groups is bad) and list it
        in :attr:`Aggregation.skipped`. Without it the first bad part stops the run.
    progress : bool
        A tqdm bar of the row groups done.

    Returns
    -------
    Aggregation
        The tally (equal to :func:`pldp.deploy.decode` of all the reports counted) and counts.

    Raises
    ------
    ReportError
        Without ``skip_bad``: a bad file, named with its row group and first bad row.
    ParameterError
        No files, a directory without files of the spec, a URL that cannot be opened, or a
        negative ``workers``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import pldp
    >>> from pldp.client import Client
    >>> from pldp.deploy.files import write_reports
    >>> spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Pick one", labels=["a", "b", "c"])
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for day in (20000, 20001):
    ...     _ = write_reports(Client(spec).reports(["a", "b", "a", "c"]), root, day)
    >>> result = aggregate(spec, [root], workers=1, progress=False)
    >>> result.files, result.reports, result.tally.n
    (2, 8, 8)
    """
    t0 = time.perf_counter()
    if not isinstance(spec, Spec):
        raise ParameterError(f"expected a Spec, got {type(spec).__name__}")
    n_workers = dask_workers(workers, scheduler, default=DEFAULT_WORKERS)
    files = report_sources(spec, sources)
    plan, skipped = _plan(spec, files, skip_bad)
    empty = sum(1 for _, n_groups in plan if n_groups == 0)  # files of no reports count, with nothing
    plan = [(source, n_groups) for source, n_groups in plan if n_groups]
    bar = progress_bar(sum(n for _, n in plan), "aggregate", progress, unit="part")
    try:
        if not plan:
            done = _Done()
        elif scheduler is not None or n_workers:
            done = _run_dask(spec, plan, skip_bad, bar, workers=n_workers, scheduler=scheduler)
        else:
            done = _run_serial(spec, plan, skip_bad, bar)
    finally:
        if bar is not None:
            bar.close()
    order = {source: i for i, source in enumerate(files)}
    skipped = sorted([*skipped, *done.skipped], key=lambda s: order[s[0]])
    tally = done.tally if done.tally is not None else _empty_tally(spec)
    return Aggregation(tally, done.files + empty, done.parts, done.reports, skipped, time.perf_counter() - t0)
