"""Files of one store that hold the same reports, found from their footers, and checked.

Every report file a collector writes names its store and the store's numbers of its reports
(:mod:`pldp.deploy.origin`). Within one store a report has one number, so two files of one store
hold a report in common exactly where their numbers meet. :func:`overlaps` finds those places
from the runs of numbers alone: a sort of the runs, and for the runs that meet, their pieces. A
report held by several files is counted from the first of them in the order given; the others'
copies are :class:`Repeat` s, not counted. :func:`check_repeat` then reads both copies of the
repeated rows and checks that they are the same reports (ids and payloads): two stores that
share an id (a copied store file) or an altered file would otherwise have distinct reports
dropped. Its cost is that of reading the repeated rows twice; files whose numbers do not meet
cost nothing beyond their footers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pldp.aggregate.parquet import open_parquet, read_rows
from pldp.deploy.dedupe import payload_difference
from pldp.deploy.origin import Origin
from pldp.deploy.spec import Spec
from pldp.errors import ReportError

__all__ = ["CHECK_ROWS", "Repeat", "check_repeat", "overlaps", "skip_ranges"]

#: Most rows one check task compares (one row group as pldp writes them).
CHECK_ROWS = 1 << 20


@dataclass(frozen=True)
class Repeat:
    """Consecutive rows of one file that hold reports another file holds too.

    Attributes
    ----------
    source : str
        The file whose rows are not counted.
    start : int
        Its first such row.
    keeper : str
        The file they are counted from.
    keeper_start : int
        The keeper's row of the same first report.
    length : int
        Rows (reports).
    store : str
        The store both files name.
    number : int
        The store's number of the first report.
    """

    source: str
    start: int
    keeper: str
    keeper_start: int
    length: int
    store: str
    number: int

    def chunks(self, size: int = CHECK_ROWS) -> list[Repeat]:
        """This repeat cut into pieces of at most ``size`` rows (the units of :func:`check_repeat`)."""
        return [
            Repeat(self.source, self.start + k, self.keeper, self.keeper_start + k, min(size, self.length - k),
                   self.store, self.number + k)
            for k in range(0, self.length, size)
        ]  # fmt: skip


def _row_starts(origin: Origin) -> np.ndarray:
    lengths = origin.runs[:, 1] - origin.runs[:, 0] + 1
    return np.cumsum(lengths) - lengths


def overlaps(files: Sequence[tuple[str, Origin]]) -> list[Repeat]:
    """Every place where a file holds reports that an earlier file of the same store holds.

    Parameters
    ----------
    files : sequence of (str, Origin)
        The files and what they hold, in the order given (the first holder of a report keeps it).

    Returns
    -------
    list of Repeat
        By store, then by the repeated rows' numbers; empty when no two files of a store meet.
    """
    by_store: dict[str, list[int]] = {}
    for i, (_, origin) in enumerate(files):
        by_store.setdefault(origin.store, []).append(i)
    out: list[Repeat] = []
    for store, members in by_store.items():
        if len(members) < 2:
            continue
        runs = [files[i][1].runs for i in members]
        owner = np.concatenate([np.full(len(r), k) for k, r in enumerate(runs)])
        first = np.concatenate([r[:, 0] for r in runs])
        last = np.concatenate([r[:, 1] for r in runs])
        row = np.concatenate([_row_starts(files[i][1]) for i in members])
        order = np.lexsort((owner, first))
        owner, first, last, row = owner[order], first[order], last[order], row[order]
        reach = np.maximum.accumulate(last)
        # a cluster of runs that meet starts wherever a run begins beyond every earlier run's end
        starts = np.flatnonzero(np.concatenate(([True], first[1:] > reach[:-1])))
        ends = np.append(starts[1:], len(first))
        for a, z in zip(starts[ends - starts > 1].tolist(), ends[ends - starts > 1].tolist(), strict=True):
            names = [files[members[k]][0] for k in owner[a:z].tolist()]
            out += _cluster(store, names, first[a:z], last[a:z], row[a:z], owner[a:z])
    return out


def _cluster(
    store: str, names: list[str], first: np.ndarray, last: np.ndarray, row: np.ndarray, owner: np.ndarray
) -> list[Repeat]:
    """The repeats among runs that meet: each piece of numbers is kept by its first holder."""
    points = np.unique(np.concatenate([first, last + 1]))  # the pieces: [points[k], points[k + 1])
    keeper = np.full(len(points) - 1, -1)
    out: list[Repeat] = []
    for j in np.argsort(owner, kind="stable").tolist():  # runs by their files' order
        span = np.arange(np.searchsorted(points, first[j]), np.searchsorted(points, last[j] + 1))
        held = keeper[span] >= 0
        for k in span[held].tolist():
            o = int(keeper[k])
            lo, hi = int(points[k]), int(points[k + 1])
            rep = Repeat(names[j], int(row[j] + lo - first[j]), names[o], int(row[o] + lo - first[o]), hi - lo,
                         store, lo)  # fmt: skip
            prev = out[-1] if out else None
            if (
                prev is not None
                and (prev.source, prev.keeper) == (rep.source, rep.keeper)
                and prev.number + prev.length == lo
                and prev.start + prev.length == rep.start
                and prev.keeper_start + prev.length == rep.keeper_start
            ):
                out[-1] = Repeat(prev.source, prev.start, prev.keeper, prev.keeper_start, prev.length + rep.length,
                                 store, prev.number)  # fmt: skip
            else:
                out.append(rep)
        keeper[span[~held]] = j
    return out


def skip_ranges(repeats: Sequence[Repeat]) -> dict[str, np.ndarray]:
    """Per file, its rows that are repeats: sorted, disjoint ``[start, stop)`` ranges, shape (k, 2)."""
    by_file: dict[str, list[tuple[int, int]]] = {}
    for r in repeats:
        by_file.setdefault(r.source, []).append((r.start, r.start + r.length))
    return {source: merge_ranges(np.array(spans, dtype=np.int64)) for source, spans in by_file.items()}


def merge_ranges(spans: np.ndarray) -> np.ndarray:
    """``[start, stop)`` ranges, shape (k, 2), sorted and with touching or overlapping ones joined."""
    if len(spans) < 2:
        return spans.reshape(-1, 2)
    spans = spans[np.argsort(spans[:, 0], kind="stable")]
    reach = np.maximum.accumulate(spans[:, 1])
    new = np.concatenate(([True], spans[1:, 0] > reach[:-1]))
    heads = np.flatnonzero(new)
    tails = np.append(heads[1:], len(spans)) - 1
    return np.stack([spans[heads, 0], reach[tails]], axis=1)


def check_repeat(spec: Spec, repeat: Repeat, strict: bool = True) -> bool:
    """Check that the repeated rows hold the same reports as the keeper's rows (ids and payloads).

    Returns True; False when the ids differ and not ``strict`` (the caller then counts the rows
    by their ids instead).

    Raises
    ------
    ReportError
        The ids differ (two stores with one id, or an altered file) and ``strict``, or a report's
        payloads differ; the message names both files, the rows and what to do.
    """
    with open_parquet(repeat.source) as pf:
        mine = read_rows(spec, pf, np.arange(repeat.start, repeat.start + repeat.length), repeat.source)
    with open_parquet(repeat.keeper) as pf:
        kept = read_rows(spec, pf, np.arange(repeat.keeper_start, repeat.keeper_start + repeat.length), repeat.keeper)
    a, b = mine.ids.view(np.uint64), kept.ids.view(np.uint64)  # (n, 2): an id in two words
    other = np.flatnonzero((a[:, 0] != b[:, 0]) | (a[:, 1] != b[:, 1]))
    if other.size and not strict:
        return False
    if other.size:
        i = int(other[0])
        raise ReportError(
            f"{repeat.keeper} (row {repeat.keeper_start + i}) and {repeat.source} (row {repeat.start + i}) both "
            f"say they hold report {repeat.number + i} of store {repeat.store}, but with other report ids: the "
            "files come from two stores with one id (a store file copied to start another collector?) or were "
            "altered. Aggregate them with --unique-ids (unique_ids=True), which counts every report id once, "
            "or leave one of them out"
        )
    differs = payload_difference(mine, kept)
    if differs is not None:
        i, column = differs
        raise ReportError(
            f"report id {kept.ids[i].tobytes().hex()} is held twice with different payloads ({column}): "
            f"{repeat.keeper} row {repeat.keeper_start + i} and {repeat.source} row {repeat.start + i}; "
            "one of the files was altered"
        )
    return True
