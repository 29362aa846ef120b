"""Reports from several sources with every report id counted once: exactly-once across collectors.

A collector counts a report once however often it is retried (its store keys reports by id). A
report retried to *another* collector is stored by both, because nothing ties their stores. Each
collector's running tally is then right for what it received, but the sum of the collectors'
tallies counts such a report twice. Two more sources of the same report twice are a collector's
report files that overlap (a day exported with ``--out-dir`` and by the rollover), and a retry
that comes after ``--retain-days`` deleted the report.

A report id is 128 random bits drawn once per report, so two reports with the same id are the
same report. The exact merge of any set of report files therefore keeps one report per id
(:func:`unique_reports`, :func:`read_unique`) and decodes that. The same id with two payloads is
no retry: it is refused, as the collector refuses it (409).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from pldp.deploy.spec import Spec
from pldp.deploy.wire import ReportBatch
from pldp.errors import ReportError

__all__ = ["read_unique", "unique_reports"]


def unique_reports(batches: Sequence[ReportBatch]) -> tuple[ReportBatch, int]:
    """The reports of ``batches`` with each id once (its first occurrence, in input order), and
    how many were dropped as repeats.

    Vectorised: one sort of the ids' two 8-byte halves, then a comparison of every repeat's
    payload columns with its first occurrence's.

    Raises
    ------
    ReportError
        When the batches are of different specs (or there are none), or an id occurs with two
        different payloads.
    """
    if not batches:
        raise ReportError("no batches of reports to merge")
    first = batches[0]
    if any(b.spec != first.spec for b in batches):
        raise ReportError(f"the batches are of several specs: {sorted({b.spec for b in batches})}")
    ids = np.concatenate([np.ascontiguousarray(b.ids, dtype=np.uint8) for b in batches])
    cols = {name: np.concatenate([b.columns[name] for b in batches]) for name in first.columns}
    merged = ReportBatch(first.spec, ids, cols, first.root)
    n = len(merged)
    if n == 0:
        return merged, 0
    compared = dict(cols)
    for name in cols:  # rows of a mixed leveled column that carry no bits (null in a file): compare as zeros
        valid = merged._bits_valid(name) if name.endswith("bits") else None
        if valid is not None:
            compared[name] = np.where(valid[:, None], cols[name], 0).astype(np.uint8)
    halves = ids.view(">u8").reshape(n, 2)
    order = np.lexsort((halves[:, 1], halves[:, 0]))  # stable: equal ids keep their input order
    ordered = halves[order]
    repeat = np.zeros(n, dtype=bool)
    repeat[1:] = (ordered[1:] == ordered[:-1]).all(axis=1)
    # each repeat's first occurrence: the last non-repeat at or before it in sorted order
    head = order[np.maximum.accumulate(np.where(repeat, 0, np.arange(n)))]
    again, original = order[repeat], head[repeat]
    for name, col in compared.items():
        differs = col[again] != col[original]
        if differs.ndim > 1:
            differs = differs.any(axis=1)
        if differs.any():
            bad = int(again[np.flatnonzero(differs)[0]])
            raise ReportError(f"report id {ids[bad].tobytes().hex()} is held twice with different payloads ({name})")
    keep = np.sort(order[~repeat])
    out = ReportBatch(first.spec, ids[keep], {k: v[keep] for k, v in merged.columns.items()}, first.root)
    return out, int(repeat.sum())


def read_unique(paths: Iterable[str | Path], spec: Spec) -> tuple[ReportBatch, int]:
    """Read report files of ``spec`` (Parquet, ``docs/wire-format.md`` §5) and keep each report id
    once (:func:`unique_reports`); return the reports and how many repeats were dropped.

    ``pldp.decode(spec, reports)`` of the result is the exact tally of the reports the files hold.
    """
    import pyarrow.parquet as pq

    batches = [ReportBatch.from_arrow(pq.read_table(p), spec.root, spec.id) for p in paths]
    if not batches:
        return ReportBatch.from_json([], spec.root, spec.id), 0
    return unique_reports(batches)
