"""The run of an aggregation: one task per row group, merged in a tree, serially or on Dask.

How it works and why (the tree, what travels, what a part checks, how each report counts once)
is in ``docs/scaling.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pldp.aggregate.once import Once, Work
from pldp.aggregate.parquet import Footer, read_footer
from pldp.aggregate.parts import count_part, finish
from pldp.aggregate.sources import report_sources
from pldp.deploy.spec import Spec
from pldp.errors import ParameterError, ReportError
from pldp.parallel import POLL, ctrl_c_between_calls, dask_client, dask_workers, progress_bar

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
    repeats : int
        Rows of the files counted that were not counted because another file's copy of the same
        report was: files of one store that overlap, and with ``unique_ids`` every report id
        held twice.
    unmarked : list of str
        Files counted that do not name the store and report numbers they hold (written by an
        older pldp or another writer). Without ``unique_ids``, nothing proves that they hold
        reports no other file holds.
    other_rounds : int
        With ``round``: files left out because they hold another round's reports.
    no_round : list of str
        With ``round``: files left out because they name no round (of a campaign that does not
        recur, or written by an older pldp or another writer).
    """

    tally: Any
    files: int
    parts: int
    reports: int
    skipped: list[tuple[str, str]]
    seconds: float
    repeats: int = 0
    unmarked: list[str] = field(default_factory=list)
    other_rounds: int = 0
    no_round: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Part:
    """A row group's result: its count (its tally, or what the oracle merges: ``parts.py``), or why it is bad."""

    source: str
    tally: Any
    error: str | None


@dataclass(frozen=True)
class _Done:
    """Merged results of whole files (their counts merged: ``parts.py``)."""

    tally: Any = None
    files: int = 0
    parts: int = 0
    reports: int = 0
    skipped: tuple[tuple[str, str], ...] = ()


def _tally_task(spec: Spec, source: str, group: int, catch: bool, skip: Any = None) -> _Part:
    """Map: one row group's count (:func:`count_part`; its rows in ``skip`` left out). A bad one raises
    (``catch`` False: the run stops) or is returned as such."""
    try:
        return _Part(source, count_part(spec, source, group, skip), None)
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


class _SerialMapper:
    """:class:`pldp.aggregate.once.Mapper` in this process."""

    def __init__(self, spec: Spec, progress: bool) -> None:
        self.spec, self.progress = spec, progress

    def map(self, fn: Callable[..., Any], args: Sequence[tuple[Any, ...]], label: str) -> list[Any]:
        bar = progress_bar(len(args), label, self.progress)
        out = []
        for a in args:
            out.append(fn(self.spec, *a))
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        return out


class _DaskMapper:
    """:class:`pldp.aggregate.once.Mapper` on a Dask client (the first error stops the map)."""

    def __init__(self, client: Any, spec: Any, progress: bool) -> None:
        self.client, self.spec, self.progress = client, spec, progress

    def map(self, fn: Callable[..., Any], args: Sequence[tuple[Any, ...]], label: str) -> list[Any]:
        from dask.distributed import as_completed

        futures = [self.client.submit(fn, self.spec, *a, pure=False) for a in args]
        bar = progress_bar(len(args), label, self.progress)
        try:
            for fut in as_completed(futures):
                if fut.status == "error":
                    fut.result()
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
        return list(self.client.gather(futures))


def _prepared(plan: list[Work], before: Once | None, mapper: Callable[[bool], Any], bar: Any) -> list[Work]:
    """The plan after the exactly-once steps (``before``), the bar moved past the parts they dropped."""
    if before is None:
        return plan
    new = before(mapper(before.progress))
    if bar is not None:
        bar.update(sum(len(w.groups) for w in plan) - sum(len(w.groups) for w in new))
    return new


def _run_serial(spec: Spec, plan: Sequence[Work], skip_bad: bool, bar: Any, before: Once | None = None) -> _Done:
    """Every part in this process, file by file; a bad file's remaining row groups are not read."""
    plan = _prepared(list(plan), before, lambda progress: _SerialMapper(spec, progress), bar)
    done = _Done()
    for source, groups, skip in plan:
        if not groups:
            continue
        parts = []
        for k, g in enumerate(groups):
            parts.append(_tally_task(spec, source, g, skip_bad, skip))
            if parts[-1].error is not None:  # the file is skipped whole
                if bar is not None:
                    bar.update(len(groups) - k)
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
    spec: Spec,
    plan: Sequence[Work],
    skip_bad: bool,
    bar: Any,
    *,
    workers: int,
    scheduler: str | None,
    before: Once | None = None,
) -> _Done:
    """Every part on a Dask cluster, merged in a tree there (module docstring)."""
    from dask.distributed import as_completed

    with dask_client(workers, scheduler) as client, ctrl_c_between_calls() as pressed:
        shared = client.scatter(spec, broadcast=True, hash=False)  # one copy per worker, not one per task
        plan = _prepared(list(plan), before, lambda progress: _DaskMapper(client, shared, progress), bar)
        parts: list[Any] = []
        units: list[Any] = []
        for source, groups, skip in plan:
            if not groups:
                continue
            futures = [client.submit(_tally_task, shared, source, g, skip_bad, skip, pure=False) for g in groups]
            parts += futures
            units.append(futures[0] if len(groups) == 1 else client.submit(_file_task, *futures, pure=False))
        if not units:
            return _Done()
        root = _tree(client, units)
        finished = as_completed(parts)
        del parts, units  # only the tree holds the parts now: each result is freed once merged
        while not finished.is_empty():
            for fut in finished.next_batch(block=False):
                if fut.status == "error":
                    fut.result()  # raises the part's ReportError; leaving the client cancels the rest
                if bar is not None:
                    bar.update(1)
            if pressed:
                raise KeyboardInterrupt
            time.sleep(POLL)
        result: _Done = root.result()
        return result


def _footers(spec: Spec, files: list[str], skip_bad: bool) -> tuple[list[tuple[str, Footer]], list[tuple[str, str]]]:
    """Each readable file with its footer; the unreadable ones (``skip_bad``) with why."""

    def footer(source: str) -> Footer | ReportError:
        try:
            return read_footer(spec, source)
        except ReportError as exc:
            return exc

    with ThreadPoolExecutor(max(1, min(_FOOTER_THREADS, len(files)))) as pool:
        footers = list(pool.map(footer, files))
    good: list[tuple[str, Footer]] = []
    skipped: list[tuple[str, str]] = []
    for source, got in zip(files, footers, strict=True):
        if isinstance(got, ReportError):
            if not skip_bad:
                raise got
            skipped.append((source, str(got).removeprefix(f"{source}: ")))
        else:
            good.append((source, got))
    return good, skipped


def _unshadowed(once: Once, skipped: list[tuple[str, str]]) -> None:
    """Refuse a run in which a file left out as bad was the copy that other files' reports were
    counted from (they would count nowhere)."""
    gone = dict(skipped)
    for mine, keeper in sorted(once.shadows):
        if keeper in gone and mine not in gone:
            raise ReportError(
                f"{keeper} was left out as bad ({gone[keeper]}), but {mine} holds some of its reports, which "
                f"were to be counted from {keeper} only: fix or remove {keeper} and run again"
            )


def aggregate(
    spec: Spec,
    sources: str | Path | Iterable[str | Path],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    skip_bad: bool = False,
    unique_ids: bool = False,
    spill_dir: str | Path | None = None,
    progress: bool = True,
    round: int | None = None,
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
    unique_ids : bool
        Count every report id once across all the files, whoever wrote them (retries stored by
        two collectors, files without the store's numbers): the ids are read and partitioned by
        hash in ``spill_dir`` (``docs/scaling.md``). Without it, every report of one store is
        counted once, from the numbers in the files' footers, and files that name no store are
        counted whole (:attr:`Aggregation.unmarked`).
    spill_dir : str or Path, optional
        Where ``unique_ids`` writes its scratch files (12 bytes a report; default the system's
        temporary directory). With a scheduler of other machines, one that every worker sees.
    progress : bool
        A tqdm bar of the row groups done.
    round : int, optional
        Only the files that hold this round's reports (their metadata's ``pldp.round``,
        :func:`pldp.deploy.files.round_of`; in a directory, the layout's ``round=<n>``
        partitions and the files without one that name it); each report still counts once.

    Returns
    -------
    Aggregation
        The tally (equal to :func:`pldp.deploy.decode` of all the reports counted) and counts.

    Raises
    ------
    ReportError
        Without ``skip_bad``: a bad file, named with its row group and first bad row. Always:
        two copies of one report that differ (other ids under one store's number, or one id
        with two payloads), or a file left out as bad that other files' reports were counted from.
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

    A report that two files of one store hold counts once:

    >>> from pldp.deploy.origin import Origin
    >>> batch = Client(spec).reports(["a", "b", "c"])
    >>> other = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_reports(batch, other, 20000, "all", origin=Origin.of("0123456789abcdef", [1, 2, 3]))
    >>> from pldp.deploy.dedupe import take
    >>> _ = write_reports(take(batch, [1, 2]), other, 20000, "last-two", origin=Origin.of("0123456789abcdef", [2, 3]))
    >>> result = aggregate(spec, [other], workers=1, progress=False)
    >>> result.reports, result.repeats
    (3, 2)
    """
    t0 = time.perf_counter()
    if not isinstance(spec, Spec):
        raise ParameterError(f"expected a Spec, got {type(spec).__name__}")
    n_workers = dask_workers(workers, scheduler, default=DEFAULT_WORKERS)
    if round is not None and (isinstance(round, bool) or not isinstance(round, int) or round < 1):
        raise ParameterError(f"a round is a number 1, 2, ..., got {round!r}")
    files = report_sources(spec, sources, round)
    footers, skipped = _footers(spec, files, skip_bad)
    other_rounds, no_round = 0, list[str]()
    if round is not None:  # a report has one round: the files kept hold all copies of their reports
        other_rounds = sum(f.round is not None and f.round != round for _, f in footers)
        no_round = [s for s, f in footers if f.round is None]
        footers = [(s, f) for s, f in footers if f.round == round]
        kept = {s for s, _ in footers} | {s for s, _ in skipped}
        files = [s for s in files if s in kept]
    once = Once(spec, footers, unique_ids, spill_dir, skip_bad, progress)
    plan = once.plan()
    bar = progress_bar(sum(len(w.groups) for w in plan), "aggregate", progress, unit="part")
    extra = {"before": once} if once.needed else {}
    try:
        if not once.needed and not any(w.groups for w in plan):  # files of no reports count, with nothing
            done = _Done()
        elif scheduler is not None or n_workers:
            done = _run_dask(spec, plan, skip_bad, bar, workers=n_workers, scheduler=scheduler, **extra)
        else:
            done = _run_serial(spec, plan, skip_bad, bar, **extra)
    finally:
        if bar is not None:
            bar.close()
    skipped = [*skipped, *once.skipped, *done.skipped]
    _unshadowed(once, skipped)
    order = {source: i for i, source in enumerate(files)}
    skipped = sorted(skipped, key=lambda s: order[s[0]])
    gone = {s for s, _ in skipped}
    counted = [s for s, _ in footers if s not in gone]
    unmarked = [s for s, f in footers if s not in gone and f.origin is None]
    tally = finish(spec, done.tally)  # a count merged on the workers, read once (parts.py)
    repeats = sum(once.repeated_rows(s) for s in counted)
    seconds = time.perf_counter() - t0
    return Aggregation(
        tally, len(counted), done.parts, done.reports, skipped, seconds, repeats, unmarked, other_rounds, no_round
    )
