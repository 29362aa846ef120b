"""FLH aggregated by Dask: 10^9 FLH report files (d = 10^4, ε = 4) to an estimate on 2 workers, target 60 s.

What is timed
-------------
``pldp.aggregate.aggregate(spec, [root], scheduler=..., progress=False)`` on a fresh 2-worker
``LocalCluster`` (``pldp.parallel.dask_client``: one single-threaded process per core), then
``spec.mechanism().estimate(tally)``: from the report files to the :class:`~pldp.Estimate`.
Starting the cluster is not timed; its workers are warmed first by an ``aggregate`` of a file of
1,000 reports (imports, code paths). Each row group's task counts its reports per ``(seed,
value)`` (:class:`pldp.mechanisms.hashed.SeedValueCounts`), the tables are merged on the workers,
and the support counts are read once, in this process (``S d`` hash evaluations, ``S = 2^14``).
The files are in the page cache if they fit (they were just written).

How the files are made (not timed)
----------------------------------
Items: per file, exact counts drawn from Zipf(2) over d = 10^4 (one multinomial of the file's
reports), laid out item by item (the row order does not matter to a tally). Reports: the
vectorised program of the spec's FLH node, ``OLH.perturb`` (numpy's generator; the clients run
the same program on OS randomness), so every report is a fresh draw of the real law; ids are 16
random bytes each (numpy's generator), as the schema has them. Each file holds
:data:`PER_FILE` reports in row groups of 2^20 (``pldp.deploy.files.write_reports``) and is made
by one of :data:`MAKERS` processes (a ``multiprocessing`` pool); 10^9 reports are 100 files, about
17 GB (16 bytes of every report are its random id, which ``aggregate`` does not read). They are
deleted at the end.

What is checked
---------------
The files, row groups and reports counted (nothing skipped), and the estimate against the truth.
FLH's family moves each estimate by a fixed amount (``pldp.mechanisms.hashed``, "A small family"):
at n = 10^9 it is far larger than the sampling error, so the check compares the estimate with its
exact expectation under the family, from the true counts ``t``: a report of ``x`` supports ``v``
with probability ``(weight + keep [H_s(x) = H_s(v)]) / 2^32`` averaged over the seeds, so
``E C_v = (n weight + keep A_v) / 2^32`` with ``A_v = (1/S) sum_s T_s[H_s(v)]``, ``T_s[y] = sum_x
t_x [H_s(x) = y]`` (``S d`` hash evaluations). The largest ``|f̂_v - E f̂_v| / SE_v`` over the d
items must stay below ``z* = Φ^{-1}(1 - α / (2 d))`` with α = 10^-3 (Bonferroni: a correct
aggregation fails one run in a thousand); ``SE_v`` is the standard error the estimate states.
The error against the true frequencies (sampling and family together) is reported beside it.

Standalone::

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/flh_dask.py [--scale 1e7] [--makers 2]

``run.py --only flh`` runs it at 10^9 (``--quick``: 10^7).
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import argparse
import multiprocessing
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import pldp
from pldp.aggregate import aggregate
from pldp.channel.hashed import hash_values
from pldp.deploy import ReportBatch, Spec
from pldp.deploy.files import ROW_GROUP, write_reports
from pldp.parallel import dask_client
from report import fmt_rate, fmt_time, users

__all__ = ["bench_flh_dask", "expected_estimate", "make_files"]

D, EPS, ZIPF = 10**4, 4.0, 2.0
FULL_N, QUICK_N = 10**9, 10**7
#: Reports per file: 10 row groups of 2^20 (the last one smaller).
PER_FILE = 10**7
#: Processes that make the files.
MAKERS = 2
#: Local Dask workers, one per core, and the target for 10^9 reports.
WORKERS, TARGET_S = 2, 60.0
#: Family-wise false alarm rate of the estimate's check (module docstring).
ALPHA = 1e-3
DAY = 20000


def _spec() -> Spec:
    return Spec.from_mechanism(pldp.OLH.flh(EPS, D), question="flh_dask benchmark")


def _make_file(task: tuple[str, str, int, int, int]) -> np.ndarray:
    """One file of ``n`` reports (module docstring); its true counts per item."""
    spec_json, root, index, n, seed = task
    spec = Spec.from_json(spec_json)
    mech = spec.mechanism()
    rng = np.random.default_rng([seed, index])
    counts = rng.multinomial(n, pldp.datasets.zipf_probabilities(D, ZIPF))
    reports = mech.perturb(np.repeat(np.arange(D), counts), rng)
    ids = np.frombuffer(rng.bytes(16 * n), dtype=np.uint8).reshape(n, 16)
    batch = ReportBatch(spec.id, ids, mech.report_columns(reports), spec.root)
    del reports
    write_reports(batch, root, DAY, name=f"part-{index:05d}")
    return counts


def make_files(spec: Spec, root: Path, n: int, makers: int, seed: int) -> np.ndarray:
    """``n`` reports of ``spec`` as files of :data:`PER_FILE` under ``root``, made by ``makers``
    processes; the true counts per item."""
    sizes = [min(PER_FILE, n - start) for start in range(0, n, PER_FILE)]
    tasks = [(spec.to_json(), str(root), i, m, seed) for i, m in enumerate(sizes)]
    with multiprocessing.get_context("spawn").Pool(makers) as pool:
        return np.sum(pool.map(_make_file, tasks, chunksize=1), axis=0)


def expected_estimate(mech: Any, true_counts: np.ndarray) -> np.ndarray:
    """``E f̂_v`` of the unbiased estimate under ``mech``'s own family, from the true counts (module
    docstring): exact up to float rounding."""
    node = mech.sampler()
    n, g, seeds = int(true_counts.sum()), mech.g, mech.seeds
    items, weights = np.arange(mech.d), true_counts.astype(np.float64)
    a = np.zeros(mech.d)
    block = max(1, (1 << 16) // mech.d)
    for start in range(0, seeds, block):
        s = np.arange(start, min(seeds, start + block), dtype=np.uint32)
        h = hash_values(items[None, :], s[:, None], g).astype(np.int64) + g * np.arange(s.size)[:, None]
        table = np.bincount(h.ravel(), np.broadcast_to(weights, h.shape).ravel(), minlength=s.size * g)
        a += table[h].sum(axis=0)
    expected = (n * node.weight + node.keep * a / seeds) / 2**32
    p, q = node.support
    return (expected / n - q) / (p - q)


def _run(n: int, makers: int, seed: int, tmp: Path) -> dict[str, Any]:
    spec = _spec()
    t0 = time.perf_counter()
    truth = make_files(spec, tmp / "files", n, makers, seed)
    made = time.perf_counter() - t0
    tiny = tmp / "tiny"
    make_files(spec, tiny, 1000, 1, seed + 1)
    with dask_client(WORKERS, None) as client:
        address = client.scheduler.address
        aggregate(spec, [tiny], scheduler=address, progress=False)  # warm the workers
        t = time.perf_counter()
        result = aggregate(spec, [tmp / "files"], scheduler=address, progress=False)
        est = spec.mechanism().estimate(result.tally)
        seconds = time.perf_counter() - t
    files = -(-n // PER_FILE)
    parts = sum(-(-min(PER_FILE, n - s) // ROW_GROUP) for s in range(0, n, PER_FILE))
    got = (result.files, result.parts, result.reports, len(result.skipped))
    if got != (files, parts, n, 0):
        raise RuntimeError(
            f"aggregate counted (files, row groups, reports, skipped) = {got}, expected {(files, parts, n, 0)}"
        )
    mean = expected_estimate(spec.mechanism(), truth)
    z = np.abs(est.frequencies - mean) / est.std_error
    z_star = statistics.NormalDist().inv_cdf(1 - ALPHA / (2 * D))
    error = np.abs(est.frequencies - truth / n)
    return {
        "n": n,
        "seconds": seconds,
        "aggregate_seconds": result.seconds,
        "made_seconds": made,
        "files": result.files,
        "parts": result.parts,
        "max_z": float(z.max()),
        "z_star": z_star,
        "max_error": float(error.max()),
        "max_error_se": float(error.max() / np.median(est.std_error)),
        "median_se": float(np.median(est.std_error)),
        "ok": bool(z.max() <= z_star),
    }


def bench_flh_dask(
    mode: harness.Mode, rng: np.random.Generator, n: int | None = None, makers: int = MAKERS
) -> list[harness.Row]:
    """The one row: 10^9 FLH reports (10^7 in quick mode, or ``n``) from files to estimate on 2 workers.

    Raises
    ------
    RuntimeError
        An aggregation counted other files, row groups or reports than were written.
    """
    n = n if n is not None else (FULL_N if mode.name == "full" else QUICK_N)
    seed = int(rng.integers(2**31))
    with harness.environ_kept(), tempfile.TemporaryDirectory(prefix="pldp-bench-flh-") as tmp:
        try:
            r = _run(n, makers, seed, Path(tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # 17 GB at 10^9
    per_core = n / r["seconds"] / WORKERS
    print(
        f"  FLH n={users(n)}: {fmt_time(r['seconds'])} files to estimate ({fmt_rate(per_core, 'reports/s')} per core), "
        f"files made in {fmt_time(r['made_seconds'])}; max |f̂ - E f̂| = {r['max_z']:.2f} SE (bound {r['z_star']:.2f}), "
        f"max |f̂ - f| = {r['max_error']:.2e} ({r['max_error_se']:.0f} SE, the family's bias)",
        file=sys.stderr,
        flush=True,
    )
    if not r["ok"]:
        raise RuntimeError(
            f"the estimate is {r['max_z']:.2f} standard errors from its expectation (bound {r['z_star']:.2f})"
        )
    judged = n == FULL_N
    return [
        harness.Row(
            "aggregate FLH files on Dask",
            f"FLH ε={EPS:g} (g={pldp.OLH.flh(EPS, D).g}, S=2^14), d=10^4, Zipf(2), n={users(n)} in "
            f"{r['files']} files / {r['parts']} row groups, {WORKERS} workers, files to estimate; "
            f"max |f̂ - E f̂| {r['max_z']:.2f} SE ≤ {r['z_star']:.2f}",
            r["seconds"],
            per_core,
            "reports/s per core",
            f"{fmt_rate(per_core, 'reports/s')} per core",
            f"< {TARGET_S:g} s at 10^9" if judged else "-",
            r["seconds"] < TARGET_S if judged else None,
            extra=r,
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scale", type=float, default=None, help=f"reports (default {FULL_N:.0e}; --quick: {QUICK_N:.0e})"
    )
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_N:.0e} reports")
    parser.add_argument("--makers", type=int, default=MAKERS, help="processes that make the files")
    args = parser.parse_args()
    mode = harness.QUICK if args.quick else harness.FULL
    n = None if args.scale is None else int(args.scale)
    if n is not None and (n < 1 or n != args.scale):
        parser.error("--scale is a whole number of reports")
    rows = bench_flh_dask(mode, np.random.default_rng(harness.SEED), n, args.makers)
    print(harness.markdown(rows, f"flh_dask.py, {WORKERS} workers"), end="")


if __name__ == "__main__":
    main()
