"""What a process can read about itself: memory high-water marks, storage reads, CPU time, faults.

Shared by ``memory.py`` (one call's peak memory, in a forked child) and ``scale_measure.py`` (the
Dask workers' peak memory, CPU and storage reads, through ``client.run``). Linux's ``/proc`` where
there is one; where a probe cannot be read it says so (False or None) instead of guessing.
"""

from __future__ import annotations

import ctypes
import gc
import resource


def malloc_trim() -> None:
    """Hand freed heap memory back to the kernel (glibc only; a no-op elsewhere)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def clear_peak() -> bool:
    """Reset this process's RSS high-water mark to its RSS (Linux >= 4.0); False where not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def proc_field(file: str, key: str) -> int | None:
    """The ``key:`` field of ``/proc/self/<file>`` in bytes (``kB`` converted); None if absent."""
    try:
        with open(f"/proc/self/{file}") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name == key:
                    parts = value.split()
                    return int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    except OSError:
        pass
    return None


def reset_peak() -> int | None:
    """Free what can be freed, reset this process's peak RSS to its RSS, and return that RSS (bytes).

    Run on each Dask worker (``client.run``) and in the calling process. Returns None where
    Linux's ``/proc/self/clear_refs`` cannot be written; no peak is reported then.
    """
    gc.collect()
    malloc_trim()
    if not clear_peak():
        return None
    return proc_field("status", "VmRSS")


def peak_rss() -> int | None:
    """This process's peak RSS since the last :func:`reset_peak` (bytes), or None."""
    return proc_field("status", "VmHWM")


def storage_reads() -> int | None:
    """Bytes this process has had read from storage (page-cache hits excluded), or None."""
    return proc_field("io", "read_bytes")


def cpu_seconds() -> float:
    """User and system CPU time of this process, all threads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def page_faults() -> int:
    """Minor page faults of this process so far (each maps a fresh page: the kernel zeroes 4 KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
