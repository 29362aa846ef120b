"""Aggregating report files: ``pldp.aggregate.tally_part`` on one core, Parquet decode included.

One report file of 10^7 reports (row groups of ``ROW_GROUP`` = 2^20, written by
``pldp.deploy.files.write_reports`` into a temporary directory) per spec, k-RR and OUE over
d = 100; the rate is reports per second of ``tally_part(spec, file)``: the footer, the schema,
the spec column's statistics, the payload column read and checked, and the tally. The targets
are those of issue 14 (50 M/s direct, 5 M/s unary, per core). ``decode`` of the same file read
whole by ``pyarrow.parquet.read_table`` (ids and spec column included, duplicate ids checked) is
the reference. The payloads are drawn uniformly, which costs the kernels what reports drawn from
the mechanisms would: they count every value, whatever its law.

A suite of ``run.py`` (``bench_aggregate(mode, rng)``); also standalone::

    PYTHONPATH=src .venv/bin/python benchmarks/aggregate_rows.py [--quick] [--n 10000000]

``scale_rows.py`` measures the same code across processes: ``aggregate`` of up to 10^9 reports on
a 2-worker Dask cluster.
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import argparse
import tempfile

import numpy as np

import pldp
from pldp.aggregate import tally_part
from pldp.deploy import ReportBatch, Spec, decode
from pldp.deploy.files import write_reports
from report import fmt_rate

D = 100
N_REPORTS = 10_000_000


def _file(spec: Spec, n: int, rng: np.random.Generator, root: str) -> str:
    """A report file of ``n`` reports of ``spec`` (uniform payloads, random ids)."""
    ids = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)
    if spec.root.kind == "direct":
        columns = {"item": rng.integers(0, D, size=n)}
    else:
        bits = rng.integers(0, 256, size=(n, (D + 7) // 8), dtype=np.uint8)
        bits[:, -1] &= np.uint8(0xFF << (8 * bits.shape[1] - D) & 0xFF)  # no padding bit set
        columns = {"bits": bits}
    return str(write_reports(ReportBatch(spec.id, ids, columns, spec.root), root, day=20000))


def bench_aggregate(mode: harness.Mode, rng: np.random.Generator, n: int = N_REPORTS) -> list[harness.Row]:
    """``tally_part`` of a file of ``n`` reports, k-RR and OUE over d = 100, and ``decode`` of it.

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the payloads and ids.
    n : int
        Reports per file.

    Returns
    -------
    list of Row
        Per spec: ``tally_part`` (with its target) and the ``decode`` reference.
    """
    import pyarrow.parquet as pq

    rows: list[harness.Row] = []
    repeats = max(3, mode.repeats // 10)
    for label, mech, target in (("k-RR ε=1", pldp.KRR(1.0, D), 50e6), ("OUE ε=1", pldp.OUE(1.0, D), 5e6)):
        spec = Spec.from_mechanism(mech, question="bench")
        with tempfile.TemporaryDirectory() as root:
            path = _file(spec, n, rng, root)
            assert tally_part(spec, path) == decode(spec, pq.read_table(path))  # the fast path is exact
            t = harness.measure(lambda s=spec, p=path: tally_part(s, p), repeats, mode.min_repeat_s)
            rows.append(
                harness.timed_row(
                    "aggregate: tally_part",
                    f"{label}, d={D}, one Parquet file of {n:,} reports (row groups of 2^20): read, checked, tallied",
                    t,
                    n / t.best,
                    "reports/s",
                    f"≥ {fmt_rate(target, 'reports/s')}",
                    n / t.best >= target,
                )
            )
            ref = harness.measure(
                lambda s=spec, p=path: decode(s, pq.read_table(p, use_threads=False)), 1, mode.min_repeat_s
            )
            rows.append(
                harness.timed_row(
                    "aggregate: reference",
                    f"{label}, d={D}: decode(spec, read_table(file, use_threads=False)), the same file read whole",
                    ref,
                    n / ref.best,
                    "reports/s",
                    "-",
                    None,
                )
            )
    return rows


def main() -> None:
    """Print the rows as a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--n", type=int, default=N_REPORTS, help=f"reports per file (default {N_REPORTS:,})")
    args = parser.parse_args()
    mode = harness.QUICK if args.quick else harness.FULL
    rows = bench_aggregate(mode, np.random.default_rng(harness.SEED), args.n)
    print(harness.markdown(rows, f"aggregate_rows.py ({mode.name}), one core"))


if __name__ == "__main__":
    main()
