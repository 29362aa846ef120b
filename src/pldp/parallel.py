"""Where pldp's parallel work runs: a Dask cluster, or this process; and the progress bar.

The experiment runner (:mod:`pldp.experiments.runner`) and the aggregation of report files
(:mod:`pldp.aggregate`) make the same choice: ``scheduler`` (an address) runs the tasks on an
existing Dask cluster; otherwise, with more than one worker and ``dask.distributed`` installed, on
a local cluster of single-threaded worker processes (one process per core: the tasks are numpy
code that holds the GIL between calls, so threads would share one core); otherwise serially in
this process, with the same results. A tqdm bar counts finished tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pldp.errors import ParameterError

__all__ = ["dask_client", "dask_workers", "progress_bar", "run_tasks"]


def dask_workers(workers: int | None, scheduler: str | None, default: int) -> int:
    """How many local Dask workers to start: 0 runs serially in this process.

    Parameters
    ----------
    workers : int, optional
        Local worker processes asked for (``default`` when None); 0 or 1 runs serially.
    scheduler : str, optional
        Address of an existing scheduler; the count is then ignored, but ``dask.distributed`` is
        needed.
    default : int
        The count when ``workers`` is None.

    Raises
    ------
    ParameterError
        ``workers`` is negative, or a scheduler is given without ``dask.distributed``.
    """
    n_workers = default if workers is None else workers
    if n_workers < 0:
        raise ParameterError(f"workers must be >= 0, got {n_workers!r}")
    if scheduler is None and n_workers <= 1:
        return 0
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        if scheduler is not None:
            raise ParameterError("--scheduler needs dask.distributed: pip install 'pldp[distributed]'") from None
        return 0
    return n_workers


@contextmanager
def dask_client(workers: int, scheduler: str | None) -> Iterator[Any]:
    """A ``dask.distributed.Client`` of the cluster at ``scheduler``, or of a new local cluster of
    ``workers`` single-threaded processes; closed (the local cluster too) on leaving, which also
    releases every task the client still holds, so that an error stops the rest of the work."""
    from dask.distributed import Client, LocalCluster

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # any free port: never clashes with another cluster
        )
    try:
        client = Client(scheduler if scheduler is not None else cluster)
        try:
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def run_tasks(
    fn: Callable[..., Any], args: Sequence[tuple[Any, ...]], *, workers: int, scheduler: str | None
) -> Iterator[tuple[int, Any]]:
    """``fn(*args[i])`` for every ``i``, yielded as ``(i, result)`` when each finishes.

    On the Dask cluster at ``scheduler``, or on a new local one of ``workers`` processes
    (:func:`dask_client`), in the order the tasks finish; with no scheduler and ``workers == 0``
    (see :func:`dask_workers`), serially in this process, in order. A task's error is raised here
    (and on Dask, leaving the block releases every task still pending).
    """
    if scheduler is None and not workers:
        for i, a in enumerate(args):
            yield i, fn(*a)
        return
    from dask.distributed import as_completed

    with dask_client(workers, scheduler) as client:
        futures = {client.submit(fn, *a, pure=False): i for i, a in enumerate(args)}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()


def progress_bar(total: int, desc: str, enabled: bool, unit: str = "task") -> Any:
    """A tqdm bar of ``total`` units (disabled unless ``enabled``), or None without tqdm."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the experiments extra
        return None
    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=False)
