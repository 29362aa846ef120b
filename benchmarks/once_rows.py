"""What counting each report once costs: ``pldp.aggregate.aggregate`` of 10^8 and 10^9 k-RR reports.

Issue 24 makes ``aggregate`` count a report once even where a collector's files overlap (its
rollover and an ``--out-dir`` export in one directory), and offers ``unique_ids`` to count every
report id once across any files. The first must keep the fast path: its cost over the scale rows'
figures (``scale_rows.py``) must stay within 1.5x. Per size, on a fresh 2-worker ``LocalCluster``
(``pldp.parallel.dask_client``), warm page cache, k-RR ε=1 over d = 100, files of 10^7 reports in
row groups of 2^20:

* **reference** (the scale rows' layout and today's figure): hard links to base files that name
  no store (:func:`scale_files.link_files`), so nothing but the payload columns is read; timed in
  turn with the next row (reference, default, reference, ...), as the load of a shared machine
  moves;
* **default, one store**: as many distinct files of one store (a rollover directory), each
  naming the store and its own 10^7 consecutive report numbers (``pldp.deploy.origin``): the
  footers are read and the numbers parsed and checked for overlap (none meet), then the same
  tally. The ratio to the reference is the cost of the check;
* **unique ids** (10^8 in full mode): files whose every report has its own random id, with
  ``unique_ids=True``: every id read, spilled (12 bytes a report, in a temporary directory on the
  same disk) and sorted by partition, then the tally;
* **default, every report in two files** (10^8): the same files plus a hard link of each under
  another name (a day's export beside the rollover's files): the copies compared, id and payload,
  and counted once.

The payloads are those of ``scale_files.client_batch`` (the client path), reused in turn. The
files of the first two rows hold one id for all their reports (their bytes compress away, so
10^9 reports take 1 GB of disk): the default path never reads an id, which the rows check by
counting. The unique-ids files draw their ids from numpy (their randomness does not matter to
the cost). Every result is checked: the reports, the repeats, and the tally's counts.

Standalone::

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/once_rows.py [--quick] [--billion-ids]

``--billion-ids`` adds unique ids at 10^9 (17 GB of files and 12 GB of scratch, minutes). Called
by ``run.py`` as ``bench_once(mode, rng)`` (``run.py --only once`` runs these rows alone).
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import pldp
from pldp.aggregate import Aggregation, aggregate
from pldp.deploy import ReportBatch, Spec
from pldp.deploy.files import ROW_GROUP, partition_dir, write_reports
from pldp.deploy.origin import Origin
from pldp.parallel import dask_client
from probes import cpu_seconds, peak_rss, reset_peak
from report import fmt_rate, fmt_time, mib, users
from scale_files import DAY, WORKERS, D, client_batch, link_files

STORE = "0123456789abcdef"
#: Timed calls per variant (the best is kept): the quick ones, and those of a minute or more.
REPEATS, SLOW_REPEATS = 3, 1


def _base(spec: Spec, per_file: int, count: int, rng: np.random.Generator) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``count`` payload columns of ``per_file`` client-made k-RR reports, and each one's counts per item."""
    items, counts = [], []
    for _ in range(count):
        batch, c = client_batch(spec, "direct", per_file, rng)
        items.append(batch.columns["item"])
        counts.append(c)
    return items, counts


def _write(spec: Spec, items: np.ndarray, ids: np.ndarray, root: Path, name: str, first: int | None) -> Path:
    """A file of reports ``items`` with ``ids`` (shape (n, 16), or (1, 16) for one id for all),
    naming the store and numbers ``first``, ``first + 1``, ... (None: naming none)."""
    n = len(items)
    ids = np.broadcast_to(ids, (n, 16))
    origin = None if first is None else Origin.of(STORE, np.arange(first, first + n))
    return write_reports(ReportBatch(spec.id, ids, {"item": items}, spec.root), root, DAY, name, origin=origin)


def _timed(fn: Callable[[], Aggregation], repeats: int, check: Callable[[Aggregation], None]) -> list[float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        check(result)
    return times


def _checker(n: int, repeats: int, counts: np.ndarray) -> Callable[[Aggregation], None]:
    def check(result: Aggregation) -> None:
        got = (result.reports, result.repeats, len(result.skipped))
        if got != (n, repeats, 0) or not np.array_equal(np.asarray(result.tally.counts), counts):
            raise RuntimeError(f"aggregate counted (reports, repeats, skipped) = {got}, expected {(n, repeats, 0)}")

    return check


def _size(
    spec: Spec, n: int, per_file: int, items: list[np.ndarray], counts: list[np.ndarray], tmp: Path, ids: bool,
    rng: np.random.Generator,
) -> dict[str, Any]:  # fmt: skip
    """Lay out and time one size (module docstring); return the times and what was measured."""
    n_files = n // per_file
    want = np.sum([counts[j % len(counts)] for j in range(n_files)], axis=0)
    one_id = np.zeros((1, 16), dtype=np.uint8)
    base = [_write(spec, it, one_id, tmp / "base", f"base-{i:03d}", None) for i, it in enumerate(items)]
    ref = link_files(spec, base, n_files, tmp / "ref")
    t0 = time.perf_counter()
    marked = tmp / "marked"
    for j in range(n_files):
        _write(spec, items[j % len(items)], one_id, marked, f"{STORE}-{j:05d}", j * per_file + 1)
    made = {"marked": time.perf_counter() - t0}
    if ids:
        t0 = time.perf_counter()
        for j in range(n_files):
            fresh = rng.integers(0, 256, size=(per_file, 16), dtype=np.uint8)
            _write(spec, items[j % len(items)], fresh, tmp / "ids", f"{STORE}-{j:05d}", j * per_file + 1)
        made["ids"] = time.perf_counter() - t0
    out: dict[str, Any] = {"n": n, "files": n_files, "made": made, "times": {}, "cpu": {}, "load": {}}
    with dask_client(WORKERS, None) as client:
        address = client.scheduler.address
        aggregate(spec, [base[0]], scheduler=address, progress=False)  # imports and code paths, on every worker

        def run(key: str, root: Path, repeats: int, dropped: int = 0, **kw: Any) -> None:
            call = lambda: aggregate(spec, [root], scheduler=address, progress=False, **kw)  # noqa: E731
            workers, main = sum(client.run(cpu_seconds).values()), cpu_seconds()
            out["times"].setdefault(key, []).extend(_timed(call, repeats, _checker(n, dropped, want)))
            cpu = (sum(client.run(cpu_seconds).values()) - workers) / repeats, (cpu_seconds() - main) / repeats
            out["cpu"].setdefault(key, []).append(cpu)  # CPU seconds per call: the workers', this process's
            out["load"][key] = os.getloadavg()[0]
            print(f"  once n={users(n)} {key}: {[round(t, 2) for t in out['times'][key]]} s, CPU per call: "
                  f"workers {cpu[0]:.2f} s, main {cpu[1]:.2f} s, load {out['load'][key]:.2f}", flush=True)  # fmt: skip

        for _ in range(REPEATS):  # in turn: the load of a shared machine moves
            run("reference", ref, 1)
            run("default", marked, 1)
        shutil.rmtree(marked)
        if ids:
            idle = client.run(reset_peak)
            run("unique ids", tmp / "ids", SLOW_REPEATS, unique_ids=True)
            peak = client.run(peak_rss)
            out["peak"] = max((peak[w] or 0) - (idle[w] or 0) for w in peak)
            folder = partition_dir(tmp / "ids", spec.id, DAY)
            for path in sorted(folder.glob("*.parquet")):  # the day's export beside the rollover's files
                os.link(path, folder / f"{path.stem}-day.parquet")
            run("two copies", tmp / "ids", SLOW_REPEATS, dropped=n)
    return out


def _rows(r: dict[str, Any]) -> list[harness.Row]:
    n, files, times, load = r["n"], r["files"], r["times"], r["load"]
    ref = min(times["reference"])
    pairs = float(np.median(np.array(times["default"]) / np.array(times["reference"])))

    def cpu(key: str) -> str:
        """The CPU seconds per call (median over the calls): workers, and this process."""
        w, m = np.median(np.array(r["cpu"][key]), axis=0)
        return f"CPU per call: workers {w:.2f} s, scheduler + client {m:.2f} s"

    common = f"k-RR ε=1, d={D}: {users(n)} reports in {files:,} files of {users(n // files)}, {WORKERS} workers"
    rows = [
        harness.Row(
            "aggregate exactly once: default",
            f"{common}, one store's numbers in every footer, checked for overlap (none); best of "
            f"{len(times['default'])} ({', '.join(fmt_time(t) for t in times['default'])}), "
            f"{cpu('default')}, load {load['default']:.1f}; "
            f"the same reports as hard links naming no store (the scale rows' path), timed in turn with it, "
            f"took {fmt_time(ref)} ({', '.join(fmt_time(t) for t in times['reference'])}; {cpu('reference')}): "
            f"{min(times['default']) / ref:.2f}x best to best, {pairs:.2f}x the median of the pairs",
            min(times["default"]),
            n / min(times["default"]),
            "reports/s",
            f"{fmt_rate(n / min(times['default']), 'reports/s')}, {min(times['default']) / ref:.2f}x",
            "≤ 1.5x the reference",
            min(times["default"]) <= 1.5 * ref,
            extra={"once": r},
        )
    ]
    if "unique ids" in times:
        t = min(times["unique ids"])
        rows.append(
            harness.Row(
                "aggregate exactly once: unique ids",
                f"{common}, every report its own id; unique_ids=True: every id read, spilled to disk (12 B "
                f"a report) by partition and sorted, then the tally; {fmt_time(t)} "
                f"({t / ref:.1f}x the reference), {cpu('unique ids')}, peak worker growth {mib(r['peak'])}, "
                f"load {load['unique ids']:.1f}",
                t,
                n / t,
                "reports/s",
                fmt_rate(n / t, "reports/s"),
                "-",
                None,
            )
        )
        t = min(times["two copies"])
        rows.append(
            harness.Row(
                "aggregate exactly once: two copies",
                f"{common}, and each file again under another name (a day's export beside the rollover): "
                f"{users(n)} repeats found from the footers, both copies compared (ids and payloads), "
                f"counted once; {fmt_time(t)} ({t / ref:.1f}x the reference), {cpu('two copies')}, "
                f"load {load['two copies']:.1f}",
                t,
                n / t,
                "reports/s",
                fmt_rate(n / t, "reports/s"),
                "-",
                None,
            )
        )
    return rows


def bench_once(mode: harness.Mode, rng: np.random.Generator, billion_ids: bool = False) -> list[harness.Row]:
    """The rows of the module docstring: 10^8 and 10^9 reports (quick: 10^6 and 10^7).

    Parameters
    ----------
    mode : Mode
        Full: the issue's sizes. Quick: a hundred times smaller.
    rng : numpy.random.Generator
        Draws the answers the client randomizes, and the unique-ids files' ids.
    billion_ids : bool
        Unique ids at 10^9 too (full mode).

    Returns
    -------
    list of Row
        Per size, the default path against the reference; at the smaller size (and 10^9 with
        ``billion_ids``) the unique ids and the two copies.
    """
    full = mode.name == "full"
    per_file = 10**7 if full else 10**6
    sizes = (10**8, 10**9) if full else (10**6, 10**7)
    spec = Spec.from_mechanism(pldp.KRR(1.0, D), question="exactly-once benchmark")
    items, counts = _base(spec, per_file, 10, rng)
    rows: list[harness.Row] = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="pldp-bench-once-", dir=os.environ.get("PLDP_BENCH_TMP")) as tmp:
            ids = n == sizes[0] or billion_ids
            rows += _rows(_size(spec, n, per_file, items, counts, Path(tmp), ids, rng))
    return rows


def main() -> None:
    """Print the rows as a Markdown table (``--quick``: 10^6 and 10^7 reports; ``--billion-ids``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^6 and 10^7 reports")
    parser.add_argument("--billion-ids", action="store_true", help="unique ids at 10^9 too (minutes, 29 GB of disk)")
    args = parser.parse_args()
    mode = harness.QUICK if args.quick else harness.FULL
    header = f"once_rows.py ({mode.name}), {WORKERS} workers, row groups of {ROW_GROUP:,}"
    print(harness.markdown(bench_once(mode, np.random.default_rng(harness.SEED), args.billion_ids), header))


if __name__ == "__main__":
    main()
