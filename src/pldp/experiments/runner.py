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

Execution (:mod:`pldp.parallel`): ``scheduler`` (an address) runs the tasks on an existing Dask
cluster; otherwise, with ``workers > 1`` and ``dask.distributed`` installed, a local cluster of
``workers`` single-threaded processes (default: the machine's cores); otherwise serially in this
process. A progress bar (tqdm) counts finished tasks.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from pldp.errors import ParameterError
from pldp.experiments.paths import DEFAULT_PATH, check_path
from pldp.experiments.spec import Check, Experiment
from pldp.parallel import dask_workers, progress_bar, run_tasks

__all__ = ["Task", "build_tasks", "repeat_rng", "run_experiments", "run_task", "write_outputs"]


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


class Task(NamedTuple):
    """All repeats of one setting of one experiment: the unit of work of a Dask worker."""

    exp: Experiment
    setting: dict[str, Any]
    repeats: int
    exp_index: int  # the experiment's place within its paper
    setting_index: int

    def run(self, seed: int) -> list[dict[str, Any]]:
        """Tidy rows of every repeat (:func:`run_task`)."""
        return run_task(self.exp, self.setting, self.repeats, seed, self.exp_index, self.setting_index)


def build_tasks(
    experiments: Sequence[Experiment], *, quick: bool = False, trials: int | None = None, path: str = DEFAULT_PATH
) -> list[Task]:
    """One task per (experiment, setting), in the order given; every setting gets ``path``.

    An experiment's index counts within its paper (see the module docstring).
    """
    seen: dict[str, int] = {}  # experiments seen so far, per paper
    tasks = []
    for exp in experiments:
        ei = seen.get(exp.paper, 0)
        seen[exp.paper] = ei + 1
        for si, setting in enumerate(exp.grid(quick)):
            tasks.append(Task(exp, {**setting, "path": path}, exp.n_repeats(quick, trials), ei, si))
    return tasks


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
    tasks = build_tasks(experiments, quick=quick, trials=trials, path=path)
    n_workers = dask_workers(workers, scheduler, default=os.cpu_count() or 1)
    bar = progress_bar(len(tasks), "experiments", progress)
    done: list[list[dict[str, Any]]] = [[] for _ in tasks]
    results = run_tasks(Task.run, [(task, seed) for task in tasks], workers=n_workers, scheduler=scheduler)
    try:  # rows come back in task order, whatever order the tasks finish in
        for i, rows in results:
            done[i] = rows
            if bar is not None:
                bar.update(1)
    finally:
        results.close()  # at once, also after Ctrl-C in this loop: the cluster closes before anything else
        if bar is not None:
            bar.close()
    table = pd.DataFrame([row for rows in done for row in rows])
    if len(table):
        order = [c for c in ("paper", "experiment") if c in table.columns]
        table = table.sort_values([*order, "repeat"], kind="stable").reset_index(drop=True)
    return table


#: What :func:`write_outputs` returns per experiment: the experiment, its check (None without
#: one or without rows) and the figures written.
Result = tuple[Experiment, Check | None, list[Path]]


def _only(table: Any, **columns: str) -> Any:
    """The rows of ``table`` with the given column values, without the columns that are empty there."""
    if not len(table):
        return table
    mask = np.ones(len(table), dtype=bool)
    for column, value in columns.items():
        mask &= (table[column] == value).to_numpy()
    return table[mask].dropna(axis=1, how="all")


def _write_tables(papers: Sequence[str], table: Any, out: Path) -> None:
    """``<out>/<paper>/results.csv`` and ``results.parquet`` (when pyarrow is there)."""
    for paper in papers:
        d = out / paper
        d.mkdir(exist_ok=True)
        sub = _only(table, paper=paper)
        sub.to_csv(d / "results.csv", index=False)
        try:
            sub.to_parquet(d / "results.parquet", index=False)
        except (ImportError, ValueError):  # pragma: no cover - pyarrow missing
            pass


#: The outputs that ``report.md`` embeds as images; Markdown tables are inlined, other files linked.
IMAGES = (".png", ".svg", ".jpg", ".jpeg", ".gif")


def _output_lines(name: str, path: Path, out: Path) -> list[str]:
    """How ``report.md`` shows one output of an experiment: an image embedded, a Markdown table
    inlined under a link to its file, any other file linked."""
    rel = path.relative_to(out).as_posix()
    if path.suffix.lower() in IMAGES:
        return [f"![{name}]({rel})", ""]
    if path.suffix.lower() == ".md":
        return [f"Table [{path.name}]({rel}):", "", path.read_text(encoding="utf-8").rstrip(), ""]
    return [f"File: [{path.name}]({rel})", ""]


def _report_lines(
    exp: Experiment, check: Check | None, figs: list[Path], out: Path, scale: dict[str, Any]
) -> list[str]:
    """The report section of one experiment: claim, our verdict (and the full-scale one where that
    decides or differs), notes, figures and tables."""
    lines = [f"### {exp.name}: {exp.title}", "", f"**Paper's claim.** {exp.claim}", ""]
    full = f"**Full scale** (REPRODUCTION.md). {exp.full_ours} — **{exp.full_verdict or 'not recorded'}**."
    if check is not None:
        verdict = exp.verdict(check, **scale)
        if exp.decides(**scale):
            lines += [f"**Ours.** {check.ours} — **{verdict}**.", ""]
            if verdict not in ("agrees", "differs"):  # the quick verdict is not the full-scale one
                lines += [full, ""]
        else:
            lines += [
                f"**Ours at {exp.scale(**scale)}** (too few repeats to decide the claim). {check.ours}",
                "",
                full,
                "",
            ]
    if exp.notes:
        lines += [f"*Notes.* {exp.notes}", ""]
    for f in figs:
        lines += _output_lines(exp.name, f, out)
    return lines


def write_outputs(
    experiments: Sequence[Experiment],
    table: Any,
    out: Path,
    *,
    elapsed: float | None = None,
    quick: bool = False,
    trials: int | None = None,
) -> tuple[Path, list[Result]]:
    """Write per-paper Parquet + CSV, every figure, and ``report.md``; return the report path and
    one :data:`Result` per experiment. ``quick`` and ``trials`` say at which scale ``table`` was
    made (:meth:`Experiment.decides`)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    papers = sorted({e.paper for e in experiments})
    _write_tables(papers, table, out)
    results: list[Result] = []
    for exp in experiments:
        part = _only(table, paper=exp.paper, experiment=exp.name)
        figs = exp.figures(part, out / exp.paper) if len(part) else []
        check = exp.check(part) if exp.check is not None and len(part) else None
        results.append((exp, check, figs))
    lines = ["# pldp reproduction report", ""]
    if elapsed is not None:
        paths = sorted(table["path"].unique()) if "path" in table.columns else []
        how = f" ({' and '.join(paths)} path)" if paths else ""
        lines += [f"Ran {len(table):,} result rows{how} in {elapsed:.1f} s.", ""]
    for paper in papers:
        lines += [f"## {paper.upper()}", ""]
        for exp, check, figs in results:
            if exp.paper == paper:
                lines += _report_lines(exp, check, figs, out, {"quick": quick, "trials": trials})
    report = out / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")
    return report, results
