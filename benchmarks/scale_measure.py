"""The scale rows' measurements: one size on a fresh 2-worker ``LocalCluster``, and a series of them.

Part of ``scale_rows.py`` (its docstring says what is measured and how). The probes run on every
worker through ``client.run`` and in this process; they are ``probes.py``'s.
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pldp.aggregate import Aggregation, aggregate, tally_part
from pldp.deploy import Spec
from pldp.deploy.files import ROW_GROUP, report_files, write_reports
from pldp.parallel import dask_client
from probes import cpu_seconds, page_faults, peak_rss, reset_peak, storage_reads
from report import fmt_rate, fmt_time, mib, users
from scale_files import DAY, WORKERS, Series, client_batch, evict_files, link_files, make_base_files


@dataclass(frozen=True)
class Layout:
    """One size laid out as hard links: where, and what ``aggregate`` must find there."""

    n: int
    source: Path
    files: int
    parts: int
    counts: np.ndarray


@dataclass
class Run:
    """The measurements of one size (times in seconds, memory in bytes)."""

    n: int
    files: int
    parts: int
    times: list[float]
    fixed: float  # the tiny aggregate call on the same cluster (best of 3)
    startup: float  # starting the cluster
    idle: list[int | None]  # each worker's RSS before the timed calls
    peak: list[int | None]  # each worker's peak RSS during them
    main_growth: int | None  # this process's (client and scheduler) peak RSS growth during them
    worker_cpu: float  # CPU seconds per call, both workers together
    main_cpu: float  # CPU seconds per call of this process (scheduler, client, footers)
    worker_faults: float  # minor page faults per row group in the workers
    reference: list[float] = field(default_factory=list)  # one task per file, same cluster
    cold: float | None = None  # one call with the base files evicted from the page cache
    cold_bytes: int | None = None  # what the workers read from storage during it

    @property
    def best(self) -> float:
        return min(self.times)

    @property
    def per_core(self) -> float:
        return self.n / self.best / WORKERS

    @property
    def worker_peak(self) -> int | None:
        return max((p for p in self.peak if p is not None), default=None)

    @property
    def worker_growth(self) -> int | None:
        grown = [p - i for p, i in zip(self.peak, self.idle, strict=True) if p is not None and i is not None]
        return max(grown, default=None)


def _check_tally(tally: Any, n: int, counts: np.ndarray) -> None:
    """Raise unless ``tally`` holds ``n`` reports with exactly ``counts``."""
    if int(tally.n) != n or not np.array_equal(np.asarray(tally.counts), counts):
        raise RuntimeError(f"the tally of {n:,} reports holds {int(tally.n):,}, or counts other than the client's")


def _check(result: Aggregation, size: Layout) -> None:
    """Raise unless ``result`` counted exactly the files, row groups, reports and counts laid out."""
    got = (result.files, result.parts, result.reports, len(result.skipped))
    want = (size.files, size.parts, size.n, 0)
    if got != want:
        raise RuntimeError(f"aggregate counted (files, row groups, reports, skipped) = {got}, expected {want}")
    _check_tally(result.tally, size.n, size.counts)


def _per_file(client: Any, spec: Spec, size: Layout) -> float:
    """Seconds to tally ``size``'s files with one task per file (the reference), checked."""
    t0 = time.perf_counter()
    files = [str(p) for p in report_files(size.source, spec.id)]
    shared = client.scatter(spec, broadcast=True, hash=False)
    tallies = client.gather(client.map(tally_part, [shared] * len(files), files, pure=False))
    total = tallies[0]
    for t in tallies[1:]:
        total = total.merge(t)
    seconds = time.perf_counter() - t0
    _check_tally(total, size.n, size.counts)
    return seconds


def _measure(spec: Spec, size: Layout, tiny: Path, repeats: int, *, evict: list[Path] | None, reference: bool) -> Run:
    """Time ``aggregate`` of ``size`` on a fresh 2-worker LocalCluster (see the module docstring).

    ``evict``: the base files to drop from the page cache for one cold call at the end;
    ``reference``: time one task per file too (after the memory is read, so it is not counted).
    """
    t0 = time.perf_counter()
    with dask_client(WORKERS, None) as client:
        startup = time.perf_counter() - t0
        address = client.scheduler.address
        client.run(tally_part, spec, str(tiny))  # imports and code paths, on every worker
        fixed = []
        for _ in range(3):
            t = time.perf_counter()
            aggregate(spec, [tiny], scheduler=address, progress=False)
            fixed.append(time.perf_counter() - t)
        idle = client.run(reset_peak)
        workers = sorted(idle)
        main_idle = reset_peak()
        cpu_workers, cpu_main = sum(client.run(cpu_seconds).values()), cpu_seconds()
        faults = sum(client.run(page_faults).values())
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            result = aggregate(spec, [size.source], scheduler=address, progress=False)
            times.append(time.perf_counter() - t)
            _check(result, size)
        cpu_main = cpu_seconds() - cpu_main
        cpu_workers = sum(client.run(cpu_seconds).values()) - cpu_workers
        faults = sum(client.run(page_faults).values()) - faults
        peak = client.run(peak_rss)
        main_peak = peak_rss()
        run = Run(
            size.n,
            size.files,
            size.parts,
            times,
            min(fixed),
            startup,
            [idle[w] for w in workers],
            [peak[w] for w in workers],
            None if main_idle is None or main_peak is None else main_peak - main_idle,
            cpu_workers / repeats,
            cpu_main / repeats,
            faults / repeats / size.parts,
        )
        if reference:
            run.reference = [_per_file(client, spec, size) for _ in range(repeats)]
        if evict is not None:
            evict_files(evict)
            before = client.run(storage_reads)
            t = time.perf_counter()
            result = aggregate(spec, [size.source], scheduler=address, progress=False)
            run.cold = time.perf_counter() - t
            _check(result, size)
            after = client.run(storage_reads)
            if all(before[w] is not None and after[w] is not None for w in workers):
                run.cold_bytes = sum(after[w] - before[w] for w in workers)
    return run


def _log(series: Series, r: Run) -> None:
    """One progress line on stderr (stdout is the table)."""
    line = (
        f"  {series.label} n={users(r.n)}: best {fmt_time(r.best)} of {[round(t, 3) for t in r.times]}, "
        f"{fmt_rate(r.per_core, 'reports/s')} per core, fixed {fmt_time(r.fixed)}, CPU per call: workers "
        f"{r.worker_cpu:.2f} s, main {r.main_cpu:.2f} s, {r.worker_faults:.0f} page faults per row group; "
        f"worker peak {mib(r.worker_peak or 0)} "
        f"(+{mib(r.worker_growth or 0)}), main +{mib(r.main_growth or 0)}"
    )
    if r.reference:
        line += f"; one task per file {fmt_time(min(r.reference))}"
    if r.cold is not None:
        line += f"; cold {fmt_time(r.cold)} ({(r.cold_bytes or 0) / 1e6:.0f} MB read)"
    print(line, file=sys.stderr, flush=True)


def run_series(series: Series, repeats: int, rng: np.random.Generator, tmp: Path) -> tuple[list[Run], float]:
    """Make the series' files under ``tmp`` and measure every size.

    Returns
    -------
    runs : list of Run
        One per size, in order.
    made : float
        Seconds the base files took to make (client and writer).
    """
    spec = Spec.from_mechanism(series.mechanism(), question=f"scale benchmark, {series.label}")
    t0 = time.perf_counter()
    base, counts = make_base_files(spec, series, tmp / "base", rng)
    made = time.perf_counter() - t0
    tiny_batch, _ = client_batch(spec, series.kind, 1000, rng)
    tiny = write_reports(tiny_batch, tmp / "tiny", DAY)
    cold_n = max(n for n in series.sizes if n <= series.per_file * series.base_files)  # files all distinct
    runs = []
    for n in series.sizes:
        n_files, rest = divmod(n, series.per_file)
        if rest:
            raise ValueError(f"{n:,} is not a multiple of {series.per_file:,} reports per file")
        expected = np.sum([counts[j % len(counts)] for j in range(n_files)], axis=0)
        size = Layout(
            n,
            link_files(spec, base, n_files, tmp / f"n={n}"),
            n_files,
            n_files * math.ceil(series.per_file / ROW_GROUP),
            expected,
        )
        try:
            runs.append(
                _measure(
                    spec,
                    size,
                    tiny,
                    repeats,
                    evict=base if n == cold_n else None,
                    reference=n == series.sizes[-1],
                )
            )
        finally:
            shutil.rmtree(size.source)
        _log(series, runs[-1])
    return runs, made
