"""The scale rows' report: the table's rows, the figure ``scale.svg`` and the notes under the table.

Part of ``scale_rows.py``; ``run.py`` calls :func:`plot_scale` and :func:`scale_notes` (through
``scale_rows``) with every row of the run.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

import harness
from pldp.deploy.files import ROW_GROUP
from report import fmt_rate, fmt_time, mib, users
from scale_files import WORKERS, D, Series
from scale_measure import Run

#: The largest slope of log(time) against log(n) that still counts as linear growth.
MAX_SLOPE = 1.1
#: Memory is flat in n if a worker's growth at the largest n is at most this factor times, plus
#: :data:`MEMORY_SLACK_BYTES`, its growth at the smallest n (RSS moves in pages and allocator
#: arenas, so a small absolute slack is allowed).
MEMORY_SLACK = 1.25
MEMORY_SLACK_BYTES = 16 << 20
#: The issue's time target: 10^9 direct reports in under a minute on 2 cores.
BILLION, BILLION_SECONDS = 10**9, 60.0


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
