"""Aggregation at scale: ``pldp.aggregate.aggregate`` on a 2-worker LocalCluster, time and memory against n.

Issue 14 §4 asks for 10^7, 10^8 and 10^9 direct-encoding reports and 10^6, 10^7 and 10^8 unary
reports (d = 100), aggregated from Parquet on a 2-worker ``LocalCluster``, with the time, the
throughput per core, the peak memory per worker and the growth of time against n (linear, with
memory flat in n). The targets: 50 M direct and 5 M unary reports/s per core, and 10^9 direct
reports in under a minute on the 2 cores.

How the files are made (the shortcut)
-------------------------------------
10^9 distinct reports would be 17 GB of Parquet (a report takes ~17 bytes on disk, 16 of them its
random id) and minutes of client time. So, per spec (k-RR ε=1 and OUE ε=1, both d = 100), a few
distinct **base files** are made by the real client path, ``Client(spec).reports(answers)`` (OS
randomness, vectorised, in batches of :data:`CHUNK`), and written by
``pldp.deploy.files.write_reports`` (row groups of ``ROW_GROUP`` = 2^20, the layout
``spec=<id>/day=<date>/``). Each size n is then a directory of n / ``Series.per_file`` **hard
links** (``os.link``) to the base files, taken in turn: distinct paths, the same bytes, no extra
disk. ``aggregate`` reads each path as a file of its own. (It reads a file named twice only once,
by its resolved path; a symbolic link would resolve to its target, a hard link does not.) The
decimal file sizes (10^7 k-RR, 10^6 OUE reports) make every n exactly a power of ten, in 1, 10
and 100 files.

Consequence: the files are read **from the page cache**. They were just written, and at the
largest n each base file is read ten times. The columns read are small: a k-RR report's item
column takes ~0.9 bytes (so 10^9 reports read ~0.9 GB), an OUE report's bits ~13 bytes, and the
report ids are never read. What a cold read adds is measured once per spec: at the largest n
whose files are all distinct, the base files are evicted from the page cache
(``posix_fadvise(POSIX_FADV_DONTNEED)``, on these files only) and the aggregation runs once more,
counting the bytes the workers read from storage (``/proc/<pid>/io`` ``read_bytes``). The extra
time per report, times the largest n, estimates what a cold read would add there. The storage is
the VM's virtual disk, which the host may cache; a slower disk would add more.

What is measured
----------------
For each n, a **fresh** ``LocalCluster`` (``pldp.parallel.dask_client``: 2 worker processes of
one thread each; the scheduler runs in this process). Its workers are warmed (``tally_part`` of a
small file on each: imports and code paths), and one tiny ``aggregate`` call (a file of 1,000
reports) is timed: the **fixed cost** of a call (connecting a client to the scheduler, reading
the footers, scattering the spec, the task graph, closing). Then the workers' memory high-water
marks are reset and ``aggregate(spec, [directory], scheduler=address, progress=False)`` is timed
:data:`REPEATS` times (the best is kept, as in the other suites). Every
result is checked: the files, row groups and reports counted, nothing skipped, and the tally's
counts equal to those of the client's batches, counted with numpy. A failed check raises, which
stops the benchmark.

* **time**: wall time of the ``aggregate`` call, from listing the files to the merged tally in
  this process. Starting the cluster is not included (it is recorded in ``results.json``).
* **reports/s per core**: n / time / 2. The scheduler and the client share the two cores with
  the workers; the CPU seconds of each (workers, and this process) are recorded per call.
* **peak memory per worker**: the larger, over the two workers, of the peak resident set size
  (``VmHWM`` in ``/proc/<pid>/status``) during the timed calls, and its growth over the worker's
  resident size just before them (``clear_refs`` resets the high-water mark to it, after
  ``gc.collect`` and ``malloc_trim``). The growth is what the aggregation itself needed; the
  idle size includes whatever the main script imports, since Dask's spawned workers import it
  again (under ``run.py``, every suite).
* **growth**: the least-squares slope of log(time) against log(n) over the sizes. Linear growth
  is a slope of 1. The fixed cost of a call pulls it below 1 at the small sizes, so the slope
  between the two largest sizes and the marginal rate (Δn / Δtime) are given too.
* **reference**: at the largest n, the same files tallied with one task per *file*
  (``client.map(tally_part, files)``, tallies merged in this process) on the same cluster, where
  ``aggregate`` makes one task per *row group* (2^20 reports). The gap is the cost of the finer
  tasks (``docs/scaling.md``).

Targets: the per-core throughput is judged at the largest n of each spec, where the fixed cost
of a call is amortised (the table shows the smaller sizes too), and only in full mode: the quick
sizes (10^6 and 10^7 k-RR, 10^5 and 10^6 OUE reports) are a hundred times smaller than the
issue's and are dominated by the fixed cost. The 10^9 row is judged against 60 s.

Standalone::

    PYTHONPATH=src .venv/bin/python benchmarks/scale_rows.py [--quick]

Called by ``run.py`` as ``bench_scale(mode, rng)``; :func:`plot_scale` draws ``scale.svg`` and
:func:`scale_notes` writes the paragraph under the results table.
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import argparse
import ctypes
import gc
import math
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import pldp
from pldp.aggregate import Aggregation, aggregate, tally_part
from pldp.client import Client
from pldp.deploy import ReportBatch, Spec
from pldp.deploy.files import ROW_GROUP, partition_dir, report_files, write_reports
from pldp.parallel import dask_client
from report import fmt_rate, fmt_time, mib, users

D = 100
#: Local Dask worker processes (one thread each): one per core of the benchmark machine.
WORKERS = 2
#: Answers per ``Client.reports`` call. The client's vectorised path makes ~10 M k-RR reports/s
#: in batches of 10^5 to 10^6, but ~2 M/s in one batch of 10^7 (its temporaries leave the cache).
CHUNK = 1 << 18
#: The day the reports are filed under (its value does not matter).
DAY = 20000
#: Timed ``aggregate`` calls per size; the best is kept.
REPEATS = 3
#: The largest slope of log(time) against log(n) that still counts as linear growth.
MAX_SLOPE = 1.1
#: Memory is flat in n if a worker's growth at the largest n is at most this factor times, plus
#: :data:`MEMORY_SLACK_BYTES`, its growth at the smallest n (RSS moves in pages and allocator
#: arenas, so a small absolute slack is allowed).
MEMORY_SLACK = 1.25
MEMORY_SLACK_BYTES = 16 << 20
#: The issue's time target: 10^9 direct reports in under a minute on 2 cores.
BILLION, BILLION_SECONDS = 10**9, 60.0


@dataclass(frozen=True)
class Series:
    """One spec's sizes, and how its files are made.

    Attributes
    ----------
    kind : str
        ``"direct"`` or ``"unary"`` (how the expected counts are taken from a batch).
    label : str
        The spec as the table names it.
    mechanism : callable
        Makes the mechanism the spec is built from.
    sizes : tuple of int
        The numbers of reports aggregated, increasing; each a multiple of ``per_file``.
    per_file : int
        Reports per base file (and so per hard link).
    base_files : int
        Distinct base files made by the client; the links take them in turn.
    target : float
        The issue's throughput target, reports per second per core.
    """

    kind: str
    label: str
    mechanism: Callable[[], Any]
    sizes: tuple[int, ...]
    per_file: int
    base_files: int
    target: float


FULL_SERIES = (
    Series("direct", "k-RR ε=1", lambda: pldp.KRR(1.0, D), (10**7, 10**8, 10**9), 10**7, 10, 50e6),
    Series("unary", "OUE ε=1", lambda: pldp.OUE(1.0, D), (10**6, 10**7, 10**8), 10**6, 10, 5e6),
)
QUICK_SERIES = (
    Series("direct", "k-RR ε=1", lambda: pldp.KRR(1.0, D), (10**6, 10**7), 10**6, 2, 50e6),
    Series("unary", "OUE ε=1", lambda: pldp.OUE(1.0, D), (10**5, 10**6), 10**5, 2, 5e6),
)


# ---------------------------------------------------------------------------------------------- files
def _batch_counts(kind: str, batch: ReportBatch) -> np.ndarray:
    """Per item, the reports of ``batch`` that support it (plain numpy, not pldp's kernels)."""
    if kind == "direct":
        return np.bincount(batch.columns["item"], minlength=D).astype(np.int64)
    bits = np.unpackbits(batch.columns["bits"], axis=1, count=D)  # most significant bit first, as on the wire
    return bits.sum(axis=0, dtype=np.int64)


def _client_batch(spec: Spec, kind: str, n: int, rng: np.random.Generator) -> tuple[ReportBatch, np.ndarray]:
    """``n`` reports of uniform answers made by the real client path, and their counts per item."""
    client = Client(spec)
    parts = []
    counts = np.zeros(D, dtype=np.int64)
    for start in range(0, n, CHUNK):
        part = client.reports(rng.integers(0, D, min(CHUNK, n - start)))
        counts += _batch_counts(kind, part)
        parts.append(part)
    ids = np.concatenate([p.ids for p in parts])
    columns = {name: np.concatenate([p.columns[name] for p in parts]) for name in parts[0].columns}
    return ReportBatch(spec.id, ids, columns, spec.root), counts


def make_base_files(
    spec: Spec, series: Series, root: Path, rng: np.random.Generator
) -> tuple[list[Path], list[np.ndarray]]:
    """The series' distinct base files under ``root`` (client path, ``write_reports``), and their counts.

    Parameters
    ----------
    spec : Spec
        The series' spec.
    series : Series
        How many files, of how many reports.
    root : Path
        The top of the layout (in a temporary directory).
    rng : numpy.random.Generator
        Draws the answers. The randomization itself uses the OS CSPRNG, as on a device.

    Returns
    -------
    paths : list of Path
        The base files.
    counts : list of numpy.ndarray
        Each file's reports per item (direct) or per set bit (unary).
    """
    paths, counts = [], []
    for i in range(series.base_files):
        batch, c = _client_batch(spec, series.kind, series.per_file, rng)
        paths.append(write_reports(batch, root, DAY, name=f"base-{i:03d}"))
        counts.append(c)
        del batch
    return paths, counts


def link_files(spec: Spec, base: list[Path], n_files: int, root: Path) -> Path:
    """``n_files`` hard links to the base files, in turn, in the layout under ``root``; returns ``root``."""
    folder = partition_dir(root, spec.id, DAY)
    folder.mkdir(parents=True)
    for j in range(n_files):
        os.link(base[j % len(base)], folder / f"part-{j:05d}.parquet")
    return root


def _evict(paths: list[Path]) -> None:
    """Drop these files' pages from the page cache (they are clean: ``write_reports`` fsyncs)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


# ---------------------------------------------------------------------------------------------- probes
def _proc(file: str, key: str) -> int | None:
    """The ``key:`` field of ``/proc/self/<file>`` in bytes (``kB`` converted); None if absent."""
    try:
        with open(f"/proc/self/{file}") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name == key:
                    parts = value.split()
                    return int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    except OSError:
        pass
    return None


def reset_peak() -> int | None:
    """Free what can be freed, reset this process's peak RSS to its RSS, and return that RSS (bytes).

    Run on each worker (``client.run``) and in this process. Returns None where Linux's
    ``/proc/self/clear_refs`` cannot be written; no peak is reported then.
    """
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    return _proc("status", "VmRSS")


def peak_rss() -> int | None:
    """This process's peak RSS since the last :func:`reset_peak` (bytes), or None."""
    return _proc("status", "VmHWM")


def storage_reads() -> int | None:
    """Bytes this process has had read from storage (page-cache hits excluded), or None."""
    return _proc("io", "read_bytes")


def cpu_seconds() -> float:
    """User and system CPU time of this process, all threads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def page_faults() -> int:
    """Minor page faults of this process so far (each maps a fresh page: the kernel zeroes 4 KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


# ---------------------------------------------------------------------------------------------- runs
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
            _evict(evict)
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
    tiny_batch, _ = _client_batch(spec, series.kind, 1000, rng)
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


# ---------------------------------------------------------------------------------------------- rows
def _slope(ns: list[int], ts: list[float]) -> float:
    """Least-squares slope of log(time) against log(n)."""
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def _count(k: int, noun: str) -> str:
    return f"{k:,} {noun}" + ("" if k == 1 else "s")


def _sizes(ns: list[int]) -> str:
    return " / ".join(users(n) for n in ns)


def _mibs(values: list[int | None]) -> str:
    return " / ".join("?" if v is None else mib(v) for v in values)


def _record(series: Series, r: Run, made: float) -> dict[str, Any]:
    """What ``results.json`` keeps of a run, and what :func:`plot_scale` and :func:`scale_notes` read."""
    return {
        "series": series.label,
        "kind": series.kind,
        "target": series.target,
        "n": r.n,
        "files": r.files,
        "parts": r.parts,
        "times": r.times,
        "fixed": r.fixed,
        "startup": r.startup,
        "idle": r.idle,
        "peak": r.peak,
        "main_growth": r.main_growth,
        "worker_cpu": r.worker_cpu,
        "main_cpu": r.main_cpu,
        "worker_page_faults_per_row_group": r.worker_faults,
        "reference": r.reference,
        "cold": r.cold,
        "cold_bytes": r.cold_bytes,
        "base_files": series.base_files,
        "per_file": series.per_file,
        "made_s": made,
    }


def series_rows(series: Series, runs: list[Run], made: float, judge: bool) -> list[harness.Row]:
    """The table's rows of one series: one per size (and the 10^9 row), the reference, the growth,
    the memory and the cold read. ``judge``: hold the largest size to the per-core target."""
    rows = []
    largest = runs[-1]
    for r in runs:
        judged = judge and r is largest
        rows.append(
            harness.Row(
                "aggregate at scale",
                f"{series.label}, d={D}: {users(r.n)} reports in {_count(r.files, 'Parquet file')}, "
                f"{_count(r.parts, 'row group')}, "
                f"{WORKERS} workers, warm page cache; best of {len(r.times)} "
                f"({', '.join(fmt_time(t) for t in r.times)}); CPU per call: workers {r.worker_cpu:.2f} s "
                f"({r.worker_faults:.0f} page faults per row group), scheduler + client {r.main_cpu:.2f} s; "
                f"peak RSS per worker {_mibs([r.worker_peak])} "
                f"(+{_mibs([r.worker_growth])} over idle)",
                r.best,
                r.per_core,
                "reports/s per core",
                fmt_rate(r.per_core, "reports/s") + " per core",
                f"≥ {fmt_rate(series.target, 'reports/s')} per core" if judged else "-",
                r.per_core >= series.target if judged else None,
                extra={"scale": _record(series, r, made)},
            )
        )
        if r.n == BILLION and series.kind == "direct":
            rows.append(
                harness.Row(
                    "aggregate 10^9 direct reports, 2 workers",
                    f"{series.label}, d={D}: {_count(r.files, 'file')}, {_count(r.parts, 'row group')}, "
                    f"{WORKERS} worker processes (one core each), warm page cache",
                    r.best,
                    r.n / r.best,
                    "reports/s",
                    fmt_time(r.best),
                    f"< {BILLION_SECONDS:.0f} s",
                    r.best < BILLION_SECONDS,
                )
            )
    ref = min(largest.reference)
    rows.append(
        harness.Row(
            "aggregate at scale: reference",
            f"{series.label}: the same {users(largest.n)} reports with one task per file "
            f"(client.map(tally_part, files): {_count(largest.files, 'task')}, against aggregate's "
            f"{_count(largest.parts, 'row-group task')}), "
            f"tallies merged in the calling process, same cluster; best of {len(largest.reference)}; "
            f"aggregate took {largest.best / ref:.2f}x as long",
            ref,
            largest.n / ref / WORKERS,
            "reports/s per core",
            fmt_rate(largest.n / ref / WORKERS, "reports/s") + " per core",
            "-",
            None,
        )
    )
    ns, ts = [r.n for r in runs], [r.best for r in runs]
    slope = _slope(ns, ts)
    top = math.log(ts[-1] / ts[-2]) / math.log(ns[-1] / ns[-2])
    marginal = (ns[-1] - ns[-2]) / max(ts[-1] - ts[-2], 1e-9) / WORKERS
    fixed = float(np.median([r.fixed for r in runs]))
    rows.append(
        harness.Row(
            "aggregate at scale: time against n",
            f"{series.label}: least-squares slope of log(time) against log(n) over {_sizes(ns)}; "
            f"{top:.2f} between the two largest; marginal rate {fmt_rate(marginal, 'reports/s')} per core "
            f"(Δn / Δtime, two largest); fixed cost of a call {fmt_time(fixed)} "
            "(aggregate of one file of 1,000 reports, same cluster)",
            None,
            slope,
            "",
            f"slope {slope:.2f}",
            f"≤ {MAX_SLOPE} (linear)",
            max(slope, top) <= MAX_SLOPE,
        )
    )
    growth = [r.worker_growth for r in runs]
    first, last = growth[0], growth[-1]
    rows.append(
        harness.Row(
            "aggregate at scale: memory per worker",
            f"{series.label}: peak RSS of the larger worker at {_sizes(ns)}: {_mibs([r.worker_peak for r in runs])}; "
            f"growth over its idle RSS {_mibs(growth)}; the calling process (scheduler and client) grew by "
            f"{_mibs([r.main_growth for r in runs])}",
            None,
            None if last is None else float(last),
            "B",
            f"+{_mibs([last])} at {users(ns[-1])}",
            f"flat in n (≤ {MEMORY_SLACK}x the growth at {users(ns[0])} + {mib(MEMORY_SLACK_BYTES)})",
            None if first is None or last is None else last <= MEMORY_SLACK * first + MEMORY_SLACK_BYTES,
        )
    )
    cold = next(r for r in runs if r.cold is not None)
    assert cold.cold is not None
    added = max(cold.cold - cold.best, 0.0) / cold.n * largest.n
    read = "?" if cold.cold_bytes is None else f"{cold.cold_bytes / 1e6:.3g} MB"
    rows.append(
        harness.Row(
            "aggregate at scale: cold read",
            f"{series.label}: {users(cold.n)} reports in {_count(cold.files, 'distinct file')}, evicted from the "
            f"page cache (posix_fadvise DONTNEED), one call: {fmt_time(cold.cold)}, against the best warm "
            f"{fmt_time(cold.best)}; "
            f"the workers read {read} from storage; scaled to {users(largest.n)} reports, a cold read would add "
            f"≈ {fmt_time(added)}",
            cold.cold,
            cold.n / cold.cold / WORKERS,
            "reports/s per core",
            fmt_rate(cold.n / cold.cold / WORKERS, "reports/s") + " per core",
            "-",
            None,
        )
    )
    return rows


@contextmanager
def _environ_kept() -> Iterator[None]:
    """Restore this process's environment on leaving.

    A Dask nanny sets its ``distributed.nanny.pre-spawn-environ`` variables (``MALLOC_TRIM_THRESHOLD_``,
    ``PYTHONHASHSEED``, ...) in the environment of the process that runs it, here the benchmark's.
    Without this, later subprocesses (the collector of ``service_rows.py``) would inherit them.
    """
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def bench_scale(mode: harness.Mode, rng: np.random.Generator) -> list[harness.Row]:
    """``aggregate`` of 10^7 to 10^9 k-RR and 10^6 to 10^8 OUE reports on 2 workers (module docstring).

    Parameters
    ----------
    mode : Mode
        Full: the issue's sizes, throughput targets judged. Quick: sizes a hundred times smaller,
        throughput targets not judged. Both take the best of :data:`REPEATS` calls.
    rng : numpy.random.Generator
        Draws the answers the client randomizes.

    Returns
    -------
    list of Row
        Per spec: a row per size (and the 10^9 row in full mode), the one-task-per-file
        reference, the time-against-n slope, the memory per worker and the cold read.

    Raises
    ------
    RuntimeError
        An aggregation counted other files, row groups, reports or counts than were laid out.
    """
    full = mode.name == "full"
    rows: list[harness.Row] = []
    with _environ_kept(), tempfile.TemporaryDirectory(prefix="pldp-bench-scale-") as tmp:
        for series in FULL_SERIES if full else QUICK_SERIES:
            folder = Path(tmp) / series.kind
            try:
                runs, made = run_series(series, REPEATS, rng, folder)
            finally:
                shutil.rmtree(folder, ignore_errors=True)  # free the disk before the next series
            rows += series_rows(series, runs, made, judge=full)
    return rows


# ---------------------------------------------------------------------------------------------- report
def plot_scale(rows: list[harness.Row], path: Path) -> bool:
    """Draw time against n, log-log, per spec, with the targets; write it to ``path`` as SVG.

    The SVG keeps its text as text and has no date and no random ids, so that it stays small and a
    rerun changes only the numbers.

    Parameters
    ----------
    rows : list of Row
        Every row of the run (the scale rows are picked out).
    path : Path
        Where the SVG goes.

    Returns
    -------
    bool
        Whether a figure was written (not without scale rows or without matplotlib).
    """
    runs = [r.extra["scale"] for r in rows if "scale" in r.extra]
    if not runs:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    style = {"svg.fonttype": "none", "svg.hashsalt": "pldp-scale", "font.size": 9}
    with plt.rc_context(style):
        fig, ax = plt.subplots(figsize=(8.6, 4.4))
        for color, label in zip(("tab:blue", "tab:orange"), dict.fromkeys(r["series"] for r in runs), strict=False):
            mine = [r for r in runs if r["series"] == label]
            ns = np.array([r["n"] for r in mine], dtype=float)
            what = f"{label} ({mine[0]['kind']}), d={D}"
            ax.plot(ns, [min(r["times"]) for r in mine], "o-", color=color, label=f"{what}: aggregate, warm cache")
            target = mine[0]["target"]
            ax.plot(
                ns,
                ns / (target * WORKERS),
                ":",
                color=color,
                label=f"{label}: target, {fmt_rate(target, '/s')} per core",
            )
            for r in mine:
                if r["reference"]:
                    ax.plot([r["n"]], [min(r["reference"])], "x", color=color, label=f"{label}: one task per file")
                if r["cold"] is not None:
                    ax.plot([r["n"]], [r["cold"]], "s", color=color, fillstyle="none", label=f"{label}: cold read")
        if any(r["n"] == BILLION and r["kind"] == "direct" for r in runs):
            ax.plot([BILLION], [BILLION_SECONDS], "v", color="black", label="target: 10^9 direct in < 60 s")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("reports aggregated (n)")
        ax.set_ylabel("wall time (s)")
        ax.set_title(f"pldp aggregate from Parquet, {WORKERS}-worker LocalCluster, 2 cores")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        fig.tight_layout()
        fig.savefig(path, format="svg", metadata={"Date": None})
        plt.close(fig)
    return True


def scale_notes(rows: list[harness.Row], figure: str | None) -> str:
    """The paragraphs under the results table: how the scale rows were made, and the figure.

    Parameters
    ----------
    rows : list of Row
        Every row of the run (the scale rows are picked out).
    figure : str, optional
        The figure's path relative to ``results.md`` (None: not drawn).

    Returns
    -------
    str
        Markdown, empty when the run had no scale rows.
    """
    runs = [r.extra["scale"] for r in rows if "scale" in r.extra]
    if not runs:
        return ""
    first: dict[str, dict[str, Any]] = {}
    for r in runs:
        first.setdefault(r["series"], r)
    making = "; ".join(
        f"{label}: {r['base_files']} files of {r['per_file']:,} reports in {r['made_s']:.1f} s"
        for label, r in first.items()
    )
    startup = float(np.median([r["startup"] for r in runs]))
    tally_part = next(
        (r for r in rows if r.benchmark == "aggregate: tally_part" and r.setting.startswith("k-RR") and r.rate_value),
        None,
    )
    kernel = ""
    if tally_part is not None and tally_part.rate_value:
        kernel = (
            f" ({fmt_time(ROW_GROUP / tally_part.rate_value)} of work for a row group of 2^20 k-RR reports "
            "at the `tally_part` rate above)"
        )
    lines = [
        "",
        "### Aggregation at scale (`benchmarks/scale_rows.py`)",
        "",
        f"Each size ran on a fresh `LocalCluster` of {WORKERS} worker processes with one thread each "
        f"(started in {fmt_time(startup)}, not timed); the scheduler and the client ran in the benchmark's "
        "process, on the same 2 cores. The time is the wall time of "
        "`aggregate(spec, [directory], scheduler=address, progress=False)`, and per core is n / time / 2. "
        "Every result was checked: files, row groups, reports, and the tally's counts against the "
        "client's batches. Peak memory per worker is the larger worker's `VmHWM` during the timed "
        "calls; its growth is over the worker's RSS just before them (reset through `clear_refs`), "
        "that is, what the aggregation itself needed. (The idle RSS includes what the main script "
        "imports: Dask's spawned workers import it again, under `run.py` every suite.) "
        "The per-core targets are judged at the largest "
        "n of each spec, in full mode only; at the smaller n the fixed cost of a call and too few "
        "row groups to keep both workers busy weigh more.",
        "",
        f"The report files were made by the real client path (`Client(spec).reports`, OS randomness) "
        f"and `write_reports` (row groups of 2^20): {making}. The larger n are hard links to these "
        "files (distinct paths, the same bytes, no extra disk), so the files were read from the page "
        "cache, each base file several times at the largest n. The cold-read rows evict the base "
        "files from the page cache (`posix_fadvise`) at the largest n whose files are all distinct "
        "and run once more; the extra time per report, scaled to the largest n, is what a cold read "
        "of distinct files would add at this disk's speed (a virtual disk, which the host may cache; "
        "one cold call, so the estimate is as noisy as one call). Only the payload columns are read, "
        "about 0.9 bytes per k-RR report and 13 per OUE report, never the 16-byte report ids.",
        "",
        "The reference rows tally the same files with one task per file instead of one per row "
        f"group. `aggregate`'s row-group tasks are short{kernel}, "
        "so the scheduler and the client, which share the 2 cores with the workers, spend a large "
        "part of the CPU on them (the CPU per call is in the rows). And every worker runs with "
        "`MALLOC_TRIM_THRESHOLD_=65536` (Dask's default `distributed.nanny.pre-spawn-environ`), "
        "which makes glibc map, and the kernel fault in, fresh pages for the Parquet reader's "
        "buffers in every task (the page faults per row group are in the rows).",
    ]
    if figure:
        lines += ["", f"![Wall time of pldp aggregate against n, log-log]({figure})"]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print the rows as a Markdown table, with the notes (the figure is drawn by ``run.py``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (10^6/10^7 k-RR, 10^5/10^6 OUE)")
    args = parser.parse_args()
    mode = harness.QUICK if args.quick else harness.FULL
    rows = bench_scale(mode, np.random.default_rng(harness.SEED))
    print(harness.markdown(rows, f"scale_rows.py ({mode.name}), {WORKERS} workers") + scale_notes(rows, None))


if __name__ == "__main__":
    main()
