"""Peak memory of one call, measured in a forked child (the ``vs peers: ...`` memory figures).

After a warm-up call, ``gc.collect()`` and glibc's ``malloc_trim(0)``, the child resets its
RSS high-water mark (``/proc/self/clear_refs``), makes the call once and reports the growth
of ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (tracemalloc in the child where that reset
is not available; the method is returned with the number and recorded in ``results.json``).
The probes are ``probes.py``'s, shared with ``scale_measure.py``.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import tracemalloc
from collections.abc import Callable
from typing import Any

from probes import clear_peak, malloc_trim


def _tracemalloc_peak(fn: Callable[[], object]) -> int:
    """Peak bytes that Python's allocators hand out during one call of ``fn``."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _measure_in_child(fn: Callable[[], object], warm: Callable[[], object]) -> dict[str, Any]:
    """What the forked child reports: ``{"peak": bytes, "method": ...}``."""
    warm()
    gc.collect()
    malloc_trim()
    if clear_peak():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        fn()
        return {"peak": 1024 * (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before), "method": "ru_maxrss"}
    return {"peak": _tracemalloc_peak(fn), "method": "tracemalloc"}


def peak_memory(fn: Callable[[], object], warm: Callable[[], object]) -> tuple[int, str]:
    """Peak memory (bytes) one call of ``fn`` adds, measured in a forked child; and the method.

    The child first calls ``warm`` (the same path on a few users: it faults in the code
    pages, which a forked child shares with its parent but has not mapped yet), frees what
    it can (``gc.collect``, ``malloc_trim``: memory the parent freed earlier must not be
    silently reused), resets the RSS high-water mark and reports the growth of
    ``ru_maxrss`` over the call. Without ``fork`` or the reset, tracemalloc.

    Parameters
    ----------
    fn : callable
        The call to measure.
    warm : callable
        A small call of the same code, made first.

    Returns
    -------
    peak : int
        Bytes.
    method : str
        ``"ru_maxrss"`` or ``"tracemalloc"``.

    Raises
    ------
    RuntimeError
        If the child fails or does not answer.
    """
    if not hasattr(os, "fork"):
        warm()
        return _tracemalloc_peak(fn), "tracemalloc"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: measure, write one JSON line, leave without cleanup
        status = 1
        try:
            os.close(read_end)
            os.write(write_end, json.dumps(_measure_in_child(fn, warm)).encode())
            status = 0
        except BaseException as exc:  # report anything to the parent
            os.write(write_end, json.dumps({"error": repr(exc)}).encode())
        finally:
            os._exit(status)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    answer = json.loads(b"".join(chunks) or b'{"error": "no answer"}')
    if "error" in answer:
        raise RuntimeError(f"memory measurement failed: {answer['error']}")
    return int(answer["peak"]), str(answer["method"])


def path_peak(path: Callable[[Any], object], x: Any, warm_users: int = 200) -> tuple[int, str]:
    """:func:`peak_memory` of ``path(x)``, warmed up with ``path(x[:warm_users])``.

    Parameters
    ----------
    path : callable
        A per-user path: takes the users (an array or a list) and estimates.
    x : numpy.ndarray or list of int
        The users.
    warm_users : int, optional
        Users of the warm-up call.

    Returns
    -------
    peak : int
        Bytes.
    method : str
        ``"ru_maxrss"`` or ``"tracemalloc"``.
    """
    return peak_memory(lambda: path(x), lambda: path(x[:warm_users]))
