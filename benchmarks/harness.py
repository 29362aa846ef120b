"""What every benchmark of ``benchmarks/`` shares: run modes, timing, the row type and the table.

The suites (``direct_rows.py``, ``unary_rows.py``, ``peers.py``) and the entry point
``run.py`` import this module; no suite imports ``run.py``. Numbers are written by
``report.py``.

Importing it pins the BLAS/OpenMP thread counts to 1 (``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``) before it imports numpy, so a script that
imports it before anything that imports numpy runs on **one core**.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # one core; must happen before numpy is imported

import gc  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from pldp.datasets import zipf_counts  # noqa: E402
from report import fmt_rate, fmt_time  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SEED = 20240601
N_USERS = 1_000_000

# A target both suites judge: pldp's per-user path over the bare-numpy reference.
TARGET_REF_RATIO = 3.0


# ----------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Mode:
    """Repeat counts of one run mode."""

    name: str
    repeats: int  # repeats of the fast benchmarks (best of)
    slow_repeats: int  # repeats of the EM solver (about 1 s per call)
    min_repeat_s: float  # a repeat loops a fast call until it lasts this long


FULL = Mode("full", repeats=60, slow_repeats=3, min_repeat_s=0.005)
QUICK = Mode("quick", repeats=5, slow_repeats=1, min_repeat_s=0.005)


@dataclass
class Timing:
    """Best time per call and the per-call time of every repeat."""

    best: float
    times: list[float]
    number: int  # calls per repeat
    page_faults: float  # minor page faults per call (fresh memory touched by the allocator)
    median: float = field(init=False)

    def __post_init__(self) -> None:
        self.median = float(np.median(self.times))


@dataclass
class Row:
    """One line of the results table."""

    benchmark: str
    setting: str
    seconds: float | None  # best time per run
    rate_value: float | None
    rate_unit: str
    rate_text: str
    target: str = "-"
    met: bool | None = None  # None: no target
    timing: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def timed_row(
    bench: str, setting: str, t: Timing, rate: float, unit: str, target: str, met: bool | None, **extra: Any
) -> Row:
    """A row for a timed run whose rate is shown with a k/M/G prefix (:func:`fmt_rate`).

    Parameters
    ----------
    bench, setting : str
        The first two columns of the table.
    t : Timing
        The run's timing; its best time is the row's time per run.
    rate : float
        The throughput in ``unit`` (users per second, trials per second, ...).
    unit : str
        The unit of ``rate``.
    target : str
        The target as shown (``"-"`` for none).
    met : bool or None
        Whether the target is met (``None``: no target).
    **extra
        Further numbers, kept in ``results.json``.

    Returns
    -------
    Row
        The row.
    """
    return Row(bench, setting, t.best, rate, unit, fmt_rate(rate, unit), target, met, timing=asdict(t), extra=extra)


# ----------------------------------------------------------------------------- timing
def measure_group(fns: dict[str, Callable[[], object]], repeats: int, min_repeat_s: float) -> dict[str, Timing]:
    """Best of ``repeats`` repeats of each function, the functions interleaved round-robin.

    Each function is warmed up once; the warm-up call is also timed to choose how many
    calls one repeat makes, so that a repeat lasts at least ``min_repeat_s`` (as
    :mod:`timeit` does). Interleaving makes timings that are compared with each other (pldp
    against the bare-numpy reference) see the same machine load. The garbage collector is
    off while timing.

    Parameters
    ----------
    fns : dict of str to callable
        The functions to time, by name.
    repeats : int
        Repeats of each function; the best is kept.
    min_repeat_s : float
        The least duration of one repeat, in seconds.

    Returns
    -------
    dict of str to Timing
        The timing of each function, by the same names.
    """
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        numbers: dict[str, int] = {}
        for key, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            first = time.perf_counter() - t0
            numbers[key] = max(1, min(10_000, math.ceil(min_repeat_s / max(first, 1e-9))))
        times: dict[str, list[float]] = {key: [] for key in fns}
        faults = dict.fromkeys(fns, 0)
        for _ in range(repeats):
            for key, fn in fns.items():
                number = numbers[key]
                f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                t0 = time.perf_counter()
                for _ in range(number):
                    fn()
                times[key].append((time.perf_counter() - t0) / number)
                faults[key] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
    finally:
        if gc_was_on:
            gc.enable()
    return {
        key: Timing(min(times[key]), times[key], numbers[key], faults[key] / (repeats * numbers[key])) for key in fns
    }


def measure(fn: Callable[[], object], repeats: int, min_repeat_s: float) -> Timing:
    """Warm up once, then the best of ``repeats`` repeats of ``fn`` (see :func:`measure_group`).

    Parameters
    ----------
    fn : callable
        The call to time.
    repeats : int
        Repeats; the best is kept.
    min_repeat_s : float
        The least duration of one repeat, in seconds.

    Returns
    -------
    Timing
        Its timing.
    """
    return measure_group({"fn": fn}, repeats, min_repeat_s)["fn"]


def once(fn: Callable[[], Any]) -> tuple[Any, Timing]:
    """``fn()`` and the time of that one call (for calls of a second or more).

    Parameters
    ----------
    fn : callable
        The call to make.

    Returns
    -------
    value : object
        What ``fn`` returned.
    timing : Timing
        The time of the call (no page faults counted: NaN).
    """
    t0 = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - t0
    return value, Timing(seconds, [seconds], 1, float("nan"))


def best_of(fn: Callable[[], object], warm: Callable[[], object], repeats: int) -> Timing:
    """Warm up with ``warm`` (a small call: compiles numba code), then the best of ``repeats`` calls.

    The garbage collector is off while timing, as in :func:`measure_group`.

    Parameters
    ----------
    fn : callable
        The call to time (a second or so: one call per repeat).
    warm : callable
        A small call of the same code, made once before timing.
    repeats : int
        Repeats; the best is kept.

    Returns
    -------
    Timing
        Its timing (no page faults counted: NaN).
    """
    warm()
    times = []
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    finally:
        if gc_was_on:
            gc.enable()
        gc.collect()
    return Timing(min(times), times, 1, float("nan"))


@contextmanager
def environ_kept() -> Iterator[None]:
    """Restore this process's environment on leaving.

    A Dask nanny sets its ``distributed.nanny.pre-spawn-environ`` variables (``MALLOC_TRIM_THRESHOLD_``,
    ``PYTHONHASHSEED``, ...) in the environment of the process that runs it, here the benchmark's
    (``scale_rows.py``, ``flh_dask.py``).
    Without this, later subprocesses (the collector of ``service_rows.py``) would inherit them.
    """
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def quiet(fn: Callable[[], object]) -> object:
    """Call ``fn`` with warnings suppressed (the EM solver may warn on every call).

    Parameters
    ----------
    fn : callable
        The call to make.

    Returns
    -------
    object
        What ``fn`` returned.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# ------------------------------------------------------------------------------- data
def zipf_population(n: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Zipf(2) item counts over ``d`` items and a shuffled per-user item array with exactly those counts.

    Parameters
    ----------
    n : int
        Users.
    d : int
        Items.
    rng : numpy.random.Generator
        The generator of the counts and of the shuffle.

    Returns
    -------
    counts : numpy.ndarray
        Users per item, length ``d``.
    items : numpy.ndarray
        Every user's item, length ``n``, shuffled.
    """
    counts = zipf_counts(n, d, rng, exponent=2.0)
    items = rng.permutation(np.repeat(np.arange(d), counts))
    return counts, items


# ------------------------------------------------------------------------------ table
def markdown(rows: list[Row], header: str) -> str:
    """The results table, with the header line and a list of missed targets.

    Parameters
    ----------
    rows : list of Row
        The rows, in the order of the table.
    header : str
        The line above the table.

    Returns
    -------
    str
        The Markdown text, ending in a newline: the header, the table, then ``All targets
        met.`` or a ``MISSED:`` line, and a ``WARNING:`` line per row with non-finite
        frequencies.
    """
    lines = [
        header,
        "",
        "| benchmark | setting | time per run | throughput / rate | target | met? |",
        "|---|---|---:|---:|---|---|",
    ]
    for r in rows:
        met = "-" if r.met is None else ("yes" if r.met else "**MISSED**")
        cells = (r.benchmark, r.setting, fmt_time(r.seconds), r.rate_text, r.target, met)
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")  # a "|z|" stays in its cell
    missed = [r for r in rows if r.met is False]
    lines.append("")
    if missed:
        lines.append(f"MISSED: {len(missed)} target(s): " + "; ".join(f"{r.benchmark} ({r.setting})" for r in missed))
    else:
        lines.append("All targets met.")
    problems = [r for r in rows if r.extra.get("finite") is False]
    for r in problems:
        lines.append(f"WARNING: {r.benchmark} ({r.setting}) returned non-finite frequencies.")
    return "\n".join(lines) + "\n"
