"""Each report counted once: which rows of which files the tally skips, and the checks behind that.

:func:`pldp.aggregate.aggregate` builds a :class:`Once` from the files' footers and runs it, on
the executor that then runs the tally, before the tally:

* by default, the files of one store that hold the same reports (:mod:`pldp.aggregate.overlap`):
  the copies are compared, and every copy but the first is skipped;
* with ``unique_ids``, also every report id held twice anywhere (:mod:`pldp.aggregate.unique`),
  whoever wrote the files.

The design, and what each costs, is in ``docs/scaling.md`` ("Exactly once across files").
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np

from pldp.aggregate.overlap import Repeat, check_repeat, merge_ranges, overlaps, skip_ranges
from pldp.aggregate.parquet import Footer
from pldp.aggregate.unique import (
    partition_bits,
    partition_candidates,
    ranges_of,
    rows_task,
    spill_ids,
    spill_name,
)
from pldp.deploy.dedupe import payload_difference, repeated, take
from pldp.deploy.spec import Spec
from pldp.deploy.wire import ReportBatch
from pldp.errors import ReportError

__all__ = ["Mapper", "Once", "Work"]


class Work(NamedTuple):
    """What the tally reads of one file: its row groups to read, and its rows to skip (or None)."""

    source: str
    groups: tuple[int, ...]
    skip: np.ndarray | None


class Mapper(Protocol):
    """Runs ``fn(spec, *args)`` for every ``args``, here or on Dask, and returns the results in order."""

    def map(self, fn: Callable[..., Any], args: Sequence[tuple[Any, ...]], label: str) -> list[Any]: ...


def covered_below(skip: np.ndarray, x: np.ndarray) -> np.ndarray:
    """How many rows below each ``x`` the ranges ``skip`` (sorted, disjoint ``[start, stop)``) cover."""
    if not len(skip):
        return np.zeros(len(x), dtype=np.int64)
    k = np.searchsorted(skip[:, 0], x, side="left")  # ranges that start below x
    total = np.concatenate(([0], np.cumsum(skip[:, 1] - skip[:, 0])))
    beyond = np.where(k > 0, np.maximum(0, skip[np.maximum(k - 1, 0), 1] - x), 0)
    return np.asarray(total[k] - beyond, dtype=np.int64)


def _spill_task(spec: Spec, source: str, group: int, skip: Any, out: str, bits: int, catch: bool) -> Any:
    """:func:`spill_ids`, or (``catch``) the reason the row group is bad."""
    try:
        return spill_ids(spec, source, group, skip, out, bits)
    except ReportError as exc:
        if not catch:
            raise
        return str(exc).removeprefix(f"{source}: ")


@dataclass
class Once:
    """The rows each file's tally skips so that every report counts once (see module doc).

    Attributes
    ----------
    repeats : list of Repeat
        Where files of one store hold the same reports (found from their footers).
    skips : dict of str to ndarray
        Per file, its rows not counted: sorted, disjoint ``[start, stop)`` ranges.
    shadows : set of (str, str)
        ``(file, keeper)``: some of ``file``'s reports are counted from ``keeper`` only.
    skipped : list of (str, str)
        Files left out in the id step (``skip_bad``), with why.
    """

    spec: Spec
    footers: list[tuple[str, Footer]]
    unique_ids: bool = False
    spill_dir: str | Path | None = None
    skip_bad: bool = False
    progress: bool = False
    repeats: list[Repeat] = field(default_factory=list)
    skips: dict[str, np.ndarray] = field(default_factory=dict)
    shadows: set[tuple[str, str]] = field(default_factory=set)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.repeats = overlaps([(s, f.origin) for s, f in self.footers if f.origin is not None])
        self.skips = skip_ranges(self.repeats)
        self.shadows = {(r.source, r.keeper) for r in self.repeats}

    @property
    def needed(self) -> bool:
        """Whether anything has to be read before the tally (copies to compare, or ids)."""
        return bool(self.repeats) or self.unique_ids

    def plan(self) -> list[Work]:
        """Per file not left out: the row groups with a row to count, and the rows to skip."""
        out = []
        gone = {s for s, _ in self.skipped}
        for source, footer in self.footers:
            if source in gone:
                continue
            skip = self.skips.get(source)
            if skip is None:
                out.append(Work(source, tuple(range(len(footer.groups))), None))
                continue
            bounds = np.cumsum([0, *footer.groups])
            covered = np.diff(covered_below(skip, bounds))
            out.append(Work(source, tuple(np.flatnonzero(covered < np.diff(bounds)).tolist()), skip))
        return out

    def repeated_rows(self, source: str) -> int:
        """Rows of ``source`` not counted because another file's copy is."""
        skip = self.skips.get(source)
        return 0 if skip is None else int((skip[:, 1] - skip[:, 0]).sum())

    def __call__(self, mapper: Mapper) -> list[Work]:
        """Check the repeats' copies, find the repeated ids (``unique_ids``); return the tally's plan."""
        chunks = [c for r in self.repeats for c in r.chunks()]
        if chunks:
            same = mapper.map(check_repeat, [(c, not self.unique_ids) for c in chunks], "compare")
            if not all(same):  # unique_ids: rows whose ids differ from their namesakes' count by id
                self.repeats = [c for c, ok in zip(chunks, same, strict=True) if ok]
                self.skips = skip_ranges(self.repeats)
                self.shadows = {(r.source, r.keeper) for r in self.repeats}
        if self.unique_ids:
            self._ids(mapper)
        return self.plan()

    # ------------------------------------------------------------------ the id step
    def _ids(self, mapper: Mapper) -> None:
        plan = self.plan()
        sizes = {s: f.groups for s, f in self.footers}
        offsets = np.cumsum([0, *(sum(sizes[w.source]) for w in plan)])  # each file's first global row
        live = int(offsets[-1]) - sum(self.repeated_rows(w.source) for w in plan)
        bits = partition_bits(live)
        with tempfile.TemporaryDirectory(prefix="pldp-ids-", dir=self.spill_dir) as folder:
            tasks = [
                (w.source, g, w.skip, spill_name(folder, i, g), bits, self.skip_bad)
                for i, w in enumerate(plan)
                for g in w.groups
            ]
            firsts = [int(offsets[i]) + sum(sizes[w.source][:g]) for i, w in enumerate(plan) for g in w.groups]
            results = mapper.map(_spill_task, tasks, "ids")
            bad = {t[0]: r for t, r in zip(tasks, results, strict=True) if isinstance(r, str)}
            self.skipped += [(s, reason) for s, reason in bad.items()]
            good = [(t[3], b, f) for t, b, f in zip(tasks, results, firsts, strict=True) if t[0] not in bad]
            pieces = [[(out, int(b[p]), int(b[p + 1]), f) for out, b, f in good] for p in range(1 << bits)]
            found = mapper.map(partition_candidates, [(p,) for p in pieces], "repeats")
        candidates = np.sort(np.concatenate(found)) if found else np.zeros(0, np.int64)
        if not candidates.size:
            return
        which = np.searchsorted(offsets, candidates, side="right") - 1
        files = np.unique(which).tolist()
        batches: list[ReportBatch] = mapper.map(
            rows_task, [(plan[i].source, candidates[which == i] - offsets[i]) for i in files], "compare"
        )
        held = ReportBatch(
            self.spec.id,
            np.concatenate([b.ids for b in batches]),
            {name: np.concatenate([b.columns[name] for b in batches]) for name in batches[0].columns},
            self.spec.root,
        )
        words = held.ids.view(np.uint64)
        a, f = repeated(words[:, 0], words[:, 1])  # exact: whole ids; the first occurrence is the earliest row
        self._refuse_two_payloads(held, a, f, candidates, plan, offsets)
        again, first = candidates[np.sort(a)], candidates[f[np.argsort(a)]]
        which = np.searchsorted(offsets, again, side="right") - 1
        for i in np.unique(which).tolist():
            source, mine = plan[i].source, again[which == i] - offsets[i]
            old = self.skips.get(source, np.zeros((0, 2), np.int64))
            self.skips[source] = merge_ranges(np.concatenate([old, ranges_of(mine)]))
        keepers = np.searchsorted(offsets, first, side="right") - 1
        self.shadows |= {
            (plan[x].source, plan[y].source) for x, y in set(zip(which.tolist(), keepers.tolist(), strict=True))
        }

    @staticmethod
    def _refuse_two_payloads(
        held: ReportBatch, a: np.ndarray, f: np.ndarray, rows: np.ndarray, plan: list[Work], offsets: np.ndarray
    ) -> None:
        """Refuse an id whose copies (``held[a]`` and its first occurrence ``held[f]``) differ in payload."""
        differs = payload_difference(take(held, a), take(held, f))
        if differs is None:
            return
        i, column = differs

        def where(row: int) -> str:
            k = int(np.searchsorted(offsets, row, side="right") - 1)
            return f"{plan[k].source} row {row - int(offsets[k])}"

        raise ReportError(
            f"report id {held.ids[a[i]].tobytes().hex()} is held twice with different payloads ({column}): "
            f"{where(int(rows[f[i]]))} and {where(int(rows[a[i]]))}; a report is never retried with another "
            "payload, so one of them was altered or forged"
        )
