"""Run experiment grids: seeded per cell, in parallel through Dask, to tidy tables, figures, a report.

Every (experiment, setting) pair is one task that runs all its repeats; repeat ``r`` of setting
``s`` of the ``e``-th experiment of its paper (indices in the order given) draws from
``numpy.random.default_rng(SeedSequence(seed, spawn_key=(e, s, r)))``: the children that
``SeedSequence(seed).spawn`` would give, addressed directly, so the same command gives the same
numbers whatever the number of workers and the order in which they finish. The index counts
within the paper, so ``pldp reproduce febsf`` and the FEBSF part of ``pldp reproduce all`` give
the same numbers. (Experiments of different papers may therefore share streams; no result
compares numbers across papers, and each experiment's repeats are independent of each other.)

Path: every repeat turns true data into a tally by exact count-level simulation unless
``path="per-user"`` (:mod:`pldp.experiments.paths`); the runner records the path as a column of
every row and hands it to the experiments through the setting.

Execution: ``scheduler`` (an address) runs the tasks on an existing Dask cluster; otherwise,
with ``workers > 1`` and ``dask.distributed`` installed, a local cluster of ``workers``
single-threaded processes (default: the machine's cores); otherwise serially in this process.
A progress bar (tqdm) counts finished tasks.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pldp.errors import ParameterError
from pldp.experiments.paths import DEFAULT_PATH, check_path
from pldp.experiments.spec import Check, Experiment

__all__ = ["repeat_rng", "run_experiments", "run_task", "write_outputs"]


def repeat_rng(seed: int, exp_index: int, setting_index: int, repeat: int) -> np.random.Generator:
    """The generator of one repeat (see the module docstring)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(exp_index, setting_index, repeat)))


def run_task(exp: Experiment, setting: dict[str, Any], repeats: int, seed: int, ei: int, si: int) -> list[dict]:
    """All repeats of one setting; returns tidy rows."""
    rows: list[dict[str, Any]] = []
    for r in range(repeats):
        for row in exp.run(dict(setting), repeat_rng(seed, ei, si, r)):
            rows.append({"paper": exp.paper, "experiment": exp.name, **setting, "repeat": r, **row})
    return rows


def _progress(total: int, desc: str, enabled: bool) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the experiments extra
        return None
    return tqdm(total=total, desc=desc, unit="task", disable=not enabled, leave=False)


def run_experiments(
    experiments: Sequence[Experiment],
    *,
    quick: bool = False,
    trials: int | None = None,
    seed: int = 20240601,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    path: str = DEFAULT_PATH,
) -> Any:
    """Run every setting x repeat of ``experiments`` and return one tidy ``pandas.DataFrame``.

    Parameters
    ----------
    experiments : sequence of Experiment
    quick : bool
        Reduced grids and repeat counts.
    trials : int, optional
        Repeats per setting (overrides the experiments' own counts).
    seed : int
        Root seed; repeat ``r`` of setting ``s`` of experiment ``e`` uses ``repeat_rng(seed, e, s, r)``.
    workers : int, optional
        Local Dask worker processes (default: the machine's cores; 1 runs serially here).
    scheduler : str, optional
        Address of an existing Dask scheduler to run the tasks on.
    progress : bool
        Show a progress bar.
    path : {"count", "per-user"}
        Exact count-level simulation (default) or perturb and tally every user.
    """
    import pandas as pd

    if trials is not None and trials < 1:
        raise ParameterError(f"trials must be >= 1, got {trials!r}")
    check_path(path)
    if workers is not None and workers < 1:
        raise ParameterError(f"workers must be >= 1, got {workers!r}")
    seen: dict[str, int] = {}  # experiments seen so far, per paper
    positions = []
    for exp in experiments:
        positions.append(seen.get(exp.paper, 0))
        seen[exp.paper] = positions[-1] + 1
    tasks = [
        (exp, {**setting, "path": path}, exp.n_repeats(quick, trials), ei, si)
        for ei, exp in zip(positions, experiments, strict=True)
        for si, setting in enumerate(exp.grid(quick))
    ]
    bar = _progress(len(tasks), "experiments", progress)
    done: list[list[dict[str, Any]]] = [[] for _ in tasks]  # rows by task, assembled in task order
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    if scheduler is not None or n_workers > 1:
        try:
            from dask.distributed import Client, LocalCluster, as_completed
        except ImportError:
            if scheduler is not None:
                raise ParameterError("--scheduler needs dask.distributed: pip install 'pldp[distributed]'") from None
            n_workers = 1
    if scheduler is not None or n_workers > 1:
        cluster = None
        if scheduler is None:
            cluster = LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # any free port: never clashes with another cluster
            )
        client = Client(scheduler if scheduler is not None else cluster)
        try:
            futures = {
                client.submit(run_task, exp, st, rep, seed, ei, si, pure=False): i
                for i, (exp, st, rep, ei, si) in enumerate(tasks)
            }
            for fut in as_completed(futures):
                done[futures[fut]] = fut.result()
                if bar is not None:
                    bar.update(1)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    else:
        for i, (exp, st, rep, ei, si) in enumerate(tasks):
            done[i] = run_task(exp, st, rep, seed, ei, si)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    table = pd.DataFrame([row for rows in done for row in rows])
    if len(table):
        order = [c for c in ("paper", "experiment") if c in table.columns]
        table = table.sort_values([*order, "repeat"], kind="stable").reset_index(drop=True)
    return table


def write_outputs(
    experiments: Sequence[Experiment], table: Any, out: Path, *, elapsed: float | None = None
) -> tuple[Path, list[tuple[Experiment, Check | None, list[Path]]]]:
    """Write per-paper Parquet + CSV, every figure, and ``report.md``; return the report path."""
    import pandas as pd

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results: list[tuple[Experiment, Check | None, list[Path]]] = []
    for paper in sorted({e.paper for e in experiments}):
        sub = table[table["paper"] == paper] if len(table) else table
        d = out / paper
        d.mkdir(exist_ok=True)
        sub = sub.dropna(axis=1, how="all")
        sub.to_csv(d / "results.csv", index=False)
        try:
            sub.to_parquet(d / "results.parquet", index=False)
        except (ImportError, ValueError):  # pragma: no cover - pyarrow missing
            pass
    for exp in experiments:
        part = table[(table["paper"] == exp.paper) & (table["experiment"] == exp.name)] if len(table) else table
        part = part.dropna(axis=1, how="all")
        figs = exp.plot(part, out / exp.paper) if exp.plot is not None and len(part) else []
        verdict = exp.check(part) if exp.check is not None and len(part) else None
        results.append((exp, verdict, [Path(f) for f in figs]))
    report = out / "report.md"
    lines = ["# pldp reproduction report", ""]
    if elapsed is not None:
        paths = sorted(table["path"].unique()) if "path" in table.columns else []
        how = f" ({' and '.join(paths)} path)" if paths else ""
        lines.append(f"Ran {len(table):,} result rows{how} in {elapsed:.1f} s.")
        lines.append("")
    for paper in sorted({e.paper for e in experiments}):
        lines += [f"## {paper.upper()}", ""]
        for exp, verdict, figs in results:
            if exp.paper != paper:
                continue
            lines += [f"### {exp.name}: {exp.title}", ""]
            lines.append(f"**Paper's claim.** {exp.claim}")
            lines.append("")
            if verdict is not None:
                lines.append(f"**Ours.** {verdict.ours} — **{'agrees' if verdict.agree else 'differs'}**.")
                lines.append("")
            if exp.notes:
                lines += [f"*Notes.* {exp.notes}", ""]
            for f in figs:
                lines += [f"![{exp.name}]({f.relative_to(out).as_posix()})", ""]
    report.write_text("\n".join(lines), encoding="utf-8")
    del pd
    return report, results


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """``(fn(*args, **kwargs), seconds)``."""
    t0 = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - t0
