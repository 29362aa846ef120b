"""Where pldp's parallel work runs: a Dask cluster, or this process; and the progress bar.

The experiment runner (:mod:`pldp.experiments.runner`) and the aggregation of report files
(:mod:`pldp.aggregate`) make the same choice: ``scheduler`` (an address) runs the tasks on an
existing Dask cluster; otherwise, with more than one worker and ``dask.distributed`` installed, on
a local cluster of single-threaded worker processes (one process per core: the tasks are numpy
code that holds the GIL between calls, so threads would share one core); otherwise serially in
this process, with the same results. A tqdm bar counts finished tasks.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pldp.errors import ParameterError

__all__ = ["POLL", "ctrl_c_between_calls", "dask_client", "dask_workers", "progress_bar", "run_tasks"]


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
    releases every task the client still holds, so that an error stops the rest of the work.

    Ctrl-C stops this process only: the local cluster's workers ignore it
    (:func:`_workers_ignore_sigint`), and a cluster left with work running (after Ctrl-C or an
    error) closes quietly (:func:`_quiet_shutdown`), so that an interrupted command can say what
    it did in one line.
    """
    from dask.distributed import Client, LocalCluster

    cluster, quiet = None, None
    tornado_log = logging.getLogger("tornado.application")
    tornado_log.addFilter(_unbound_cancel)
    try:
        if scheduler is None:
            with _workers_ignore_sigint():
                cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # any free port: never clashes with another cluster
                )
        client = Client(scheduler if scheduler is not None else cluster)
        try:
            yield client
        except BaseException:  # Ctrl-C, an error, a caller that stopped early (GeneratorExit)
            if cluster is not None:
                quiet = _quiet_shutdown(client)
            raise
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()
        if quiet is not None:
            logging.getLogger("distributed").setLevel(quiet)
        tornado_log.removeFilter(_unbound_cancel)


def _unbound_cancel(record: logging.LogRecord) -> bool:
    """False for the one error ``distributed`` logs through tornado when Ctrl-C lands in a call
    to the cluster before that call's future exists: its ``sync()`` then schedules a ``cancel``
    that reads the unbound future (``NameError: cannot access free variable 'future'``;
    distributed 2026.8 and earlier). Nothing was left to cancel; every other record passes."""
    exc = record.exc_info[1] if record.exc_info else None
    return not (isinstance(exc, NameError) and "sync.<locals>.cancel" in record.getMessage())


@contextmanager
def _workers_ignore_sigint() -> Iterator[None]:
    """Start a local cluster (the block) whose worker processes ignore SIGINT (Ctrl-C).

    A Ctrl-C in a terminal signals the whole foreground process group: the workers too, each of
    which would print a traceback of its own. Here they are forked from a fork server (not
    spawned afresh, Dask's default), which this process launches with SIGINT ignored for the
    moment that takes: the fork server, and every process it forks, ignores SIGINT from then on
    (a fork server's children keep the SIGINT disposition it started with). Closing the cluster
    ends them. A Ctrl-C while the cluster starts is held, and raised as :class:`KeyboardInterrupt`
    once it has started, so that the caller closes it (a cluster left half started would fail
    at exit). A fork server that runs already (this process started it before, or another
    library did) is used as it is: its children keep its disposition. Where there is no fork
    server (Windows), or this is not the main thread (which alone may set a signal handler),
    Dask's own way is kept.
    """
    import multiprocessing
    from multiprocessing import forkserver

    import dask
    from distributed.utils import get_mp_context

    if (
        "forkserver" not in multiprocessing.get_all_start_methods()
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    pressed: list[int] = []
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        get_mp_context()  # sets what the fork server imports before it forks: Dask's choice
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            forkserver.ensure_running()  # inherits SIGINT ignored, unless it was running already
            signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
            yield
        finally:
            signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt


#: Above every level ``distributed`` logs at: nothing is logged.
_SILENT = logging.CRITICAL + 1


def _silence() -> None:
    """In a worker process: ``distributed`` logs nothing from now on (the worker is about to close)."""
    logging.getLogger("distributed").setLevel(_SILENT)


def _quiet_shutdown(client: Any) -> int:
    """Before the local cluster closes with work still running (after Ctrl-C, an error, or a
    caller that stopped early): what the scheduler and the workers log as they drop that work
    (tasks cancelled mid-run, results no client reads, workers killed when they did not stop)
    tells the user nothing; the exception on its way out says what happened. Silences
    ``distributed`` here and in the workers; returns the level to restore here."""
    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(_SILENT)
    try:
        client.run(_silence, on_error="ignore")
    except Exception:  # a worker that does not answer: what it logs stays
        pass
    return level


def run_tasks(
    fn: Callable[..., Any], args: Sequence[tuple[Any, ...]], *, workers: int, scheduler: str | None
) -> Generator[tuple[int, Any], None, None]:
    """``fn(*args[i])`` for every ``i``, yielded as ``(i, result)`` when each finishes.

    On the Dask cluster at ``scheduler``, or on a new local one of ``workers`` processes
    (:func:`dask_client`), in the order the tasks finish; with no scheduler and ``workers == 0``
    (see :func:`dask_workers`), serially in this process, in order. A task's error is raised here
    (and on Dask, leaving the block releases every task still pending). A caller that stops
    iterating early (its own error, Ctrl-C in its loop) calls ``close()`` on the iterator, so that
    the local cluster closes then, not whenever the garbage collector (or the interpreter's exit)
    finalizes the iterator.
    """
    if scheduler is None and not workers:
        for i, a in enumerate(args):
            yield i, fn(*a)
        return
    from dask.distributed import as_completed

    with dask_client(workers, scheduler) as client, ctrl_c_between_calls() as pressed:
        futures = {client.submit(fn, *a, pure=False): i for i, a in enumerate(args)}
        done = as_completed(futures)
        while not done.is_empty():
            for fut in done.next_batch(block=False):
                yield futures[fut], fut.result()
            if pressed:
                raise KeyboardInterrupt
            time.sleep(POLL)


#: Seconds between two looks at the tasks that finished (and at a Ctrl-C) in :func:`run_tasks`.
POLL = 0.05


@contextmanager
def ctrl_c_between_calls() -> Iterator[list[int]]:
    """Within the block, Ctrl-C (SIGINT) is recorded in the list yielded, not raised: the caller
    raises :class:`KeyboardInterrupt` between its calls to the cluster. Raised inside one, it can
    leave ``distributed`` half way (a lock released twice, a cancel of a future not yet made) and
    print tracebacks of its own. Outside the main thread (which alone sets signal handlers) the
    list stays empty and Ctrl-C is Python's."""
    pressed: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield pressed
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)


def progress_bar(total: int, desc: str, enabled: bool, unit: str = "task") -> Any:
    """A tqdm bar of ``total`` units (disabled unless ``enabled``), or None without tqdm."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the experiments extra
        return None
    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=False)
