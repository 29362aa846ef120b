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

Modules: this one runs the series; ``scale_files.py`` defines them and makes their files,
``scale_measure.py`` measures one size on its cluster (with ``probes.py``), ``scale_report.py``
turns the runs into rows, the figure and the notes.
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import argparse
import shutil
import tempfile
from pathlib import Path

import numpy as np

from scale_files import FULL_SERIES, QUICK_SERIES, WORKERS
from scale_measure import run_series
from scale_report import plot_scale, scale_notes, series_rows

__all__ = ["bench_scale", "plot_scale", "scale_notes"]

#: Timed ``aggregate`` calls per size; the best is kept.
REPEATS = 3


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
    with harness.environ_kept(), tempfile.TemporaryDirectory(prefix="pldp-bench-scale-") as tmp:
        for series in FULL_SERIES if full else QUICK_SERIES:
            folder = Path(tmp) / series.kind
            try:
                runs, made = run_series(series, REPEATS, rng, folder)
            finally:
                shutil.rmtree(folder, ignore_errors=True)  # free the disk before the next series
            rows += series_rows(series, runs, made, judge=full)
    return rows


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
