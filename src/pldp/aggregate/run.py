"""The run of an aggregation: one task per row group, merged in a tree, serially or on Dask.

How it works and why (the tree, what travels, what a part checks) is in ``docs/scaling.md``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pldp.aggregate.parquet import row_groups
from pldp.aggregate.parts import tally_part
from pldp.aggregate.sources import report_sources
from pldp.deploy.count import empty_tally
from pldp.deploy.spec import Spec
from pldp.errors import ParameterError, ReportError
from pldp.parallel import dask_client, dask_workers, progress_bar

__all__ = ["DEFAULT_WORKERS", "FANOUT", "Aggregation", "aggregate"]

#: Results merged by one reduction task (the tree's fan-in).
FANOUT = 16
#: Local Dask workers when ``workers`` is not given.
DEFAULT_WORKERS = 2
#: Threads that read the files' footers on the client.
_FOOTER_THREADS = 16


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
            return row_groups(spec, source)
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
    tally = done.tally if done.tally is not None else empty_tally(spec)
    return Aggregation(tally, done.files + empty, done.parts, done.reports, skipped, time.perf_counter() - t0)
