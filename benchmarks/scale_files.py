"""What the scale rows aggregate: the series (spec, sizes, targets) and their Parquet files.

Part of ``scale_rows.py`` (its docstring gives the method): per spec, a few distinct base files
made by the real client path and written by ``write_reports``; each size n a directory of hard
links to them. Imports go ``scale_rows.py`` → ``scale_report.py`` → ``scale_measure.py`` → this
module.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import pldp
from pldp.client import Client
from pldp.deploy import ReportBatch, Spec
from pldp.deploy.files import partition_dir, write_reports

D = 100
#: Local Dask worker processes (one thread each): one per core of the benchmark machine.
WORKERS = 2
#: Answers per ``Client.reports`` call. The client's vectorised path makes ~10 M k-RR reports/s
#: in batches of 10^5 to 10^6, but ~2 M/s in one batch of 10^7 (its temporaries leave the cache).
CHUNK = 1 << 18
#: The day the reports are filed under (its value does not matter).
DAY = 20000


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


def client_batch(spec: Spec, kind: str, n: int, rng: np.random.Generator) -> tuple[ReportBatch, np.ndarray]:
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
        batch, c = client_batch(spec, series.kind, series.per_file, rng)
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


def evict_files(paths: list[Path]) -> None:
    """Drop these files' pages from the page cache (they are clean: ``write_reports`` fsyncs)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
