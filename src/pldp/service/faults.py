"""When the store cannot take a write: the 503 answers, the writer lock's timeout, the health check.

A collector whose store cannot be written still runs: it serves specs and estimates, refuses
every write with ``503`` and a JSON reason (nothing of the request was stored; send it again, as
``Retry-After`` says), and ``GET /v1/health`` answers ``{"status": "degraded", "reason": ...}``.

* **Which failures.** SQLite's result codes say whether a failed statement is the store's fault
  rather than the request's (:func:`store_error`): a read-only file or directory
  (``SQLITE_READONLY``), a full disk or the store's size limit (``SQLITE_FULL``), an I/O error,
  a file that cannot be opened, a lock held too long (``SQLITE_BUSY``). The writer then fails
  the whole transaction with :class:`StoreUnavailableError` (SQLite may already have rolled it
  back), where a request's own failure (a conflict, say) fails that request alone.
* **The writer lock.** The writers of a store take turns through ``<db>-writer.lock``
  (:class:`TurnLock`). A process that holds it and hangs (or a person with ``flock``) used to
  stall every submission for good. The wait is now bounded by :data:`LOCK_TIMEOUT`, and so is
  SQLite's own wait for its write lock (``busy_timeout``); a request that times out gets a 503
  ``store_busy`` with ``Retry-After: 1``, and stores nothing.
* **Health.** :func:`problem` names what is wrong now: the last write's failure (until a write
  succeeds; a lock timeout only while the lock is still held: the writer lock, or SQLite's write
  lock, which health probes without waiting: ``BEGIN IMMEDIATE`` with no busy timeout, rolled
  back at once), a store file or directory that
  cannot be written, less than :data:`MIN_FREE` bytes free on its disk, or a store at its page
  limit.

The test hook :data:`pldp.service.store.FAULT_ENV` makes a collector's connections read-only, or its
store full, without changing the machine (tests may run as root, whom ``chmod`` does not stop).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from pathlib import Path
from typing import IO

from pldp.service import store
from pldp.service.store.transactions import fault_kind, page_limits, write_locked

__all__ = ["LOCK_TIMEOUT", "MIN_FREE", "StoreUnavailableError", "TurnLock", "problem", "store_error", "write_locked"]

#: Seconds a writer waits for the writer lock (and for SQLite's write lock) before answering 503.
LOCK_TIMEOUT = 5.0
#: Free bytes on the store's disk below which the collector reports itself degraded.
MIN_FREE = 64 * 2**20


class StoreUnavailableError(RuntimeError):
    """A write the store could not take; nothing of it was stored.

    Attributes
    ----------
    code : str
        ``store_busy`` (the writer lock or SQLite's was held too long) or ``store_unavailable``.
    reason : str
        A sentence for the client and the health check.
    retry_after : int
        Seconds after which the client should send it again.
    """

    def __init__(self, reason: str, code: str = "store_unavailable") -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.retry_after = 1 if code == "store_busy" else 30


def store_error(exc: BaseException) -> StoreUnavailableError | None:
    """``exc`` as a :class:`StoreUnavailableError` if it is the store's fault (see module doc),
    else None (a request's own failure, or a bug)."""
    if isinstance(exc, StoreUnavailableError):
        return exc
    if isinstance(exc, OSError):  # the lock file, say: a read-only directory, a full disk
        return StoreUnavailableError(f"the store could not be written ({exc.strerror or exc})")
    kind = fault_kind(exc)
    if kind is None:
        return None
    return StoreUnavailableError(f"{kind[1]} ({exc})", kind[0])


class TurnLock:
    """An exclusive ``flock`` on a file, taken with a timeout.

    A blocked ``flock`` returns as soon as the lock is free (SQLite's busy handler sleeps in steps
    of up to 100 ms), but it has no timeout. So an uncontended lock is taken at once (``LOCK_NB``)
    and a contended one by a helper thread that blocks in ``flock``: the caller waits for it at
    most ``timeout`` seconds. If the helper gets the lock after the caller gave up, it hands the
    lock to the caller's next :meth:`acquire` if one is waiting by then, and releases it otherwise.

    A lock file that cannot be opened (a read-only directory) leaves the writers without turns:
    SQLite's own lock still serializes them, and every write fails there anyway.
    """

    def __init__(self, path: str | Path, timeout: float = LOCK_TIMEOUT) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._file: IO[bytes] | None = None
        for mode in ("a+b", "rb"):  # flock needs no write permission
            with contextlib.suppress(OSError):
                self._file = open(self.path, mode)  # held while the writer lives
                break
        self._cv = threading.Condition()
        # free; wanted (a caller waits for the helper); blocked (the helper waits in flock, no
        # caller does); held (by this process's writer); closed
        self._state = "free"
        self._helper: threading.Thread | None = None

    def acquire(self) -> None:
        """Take the lock; :class:`StoreUnavailableError` (``store_busy``) after ``timeout`` seconds."""
        if self._file is None:
            return
        with self._cv:
            if self._state == "free":
                try:
                    fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    self._state = "held"
                    return
                except BlockingIOError:
                    pass
                if self._helper is None:
                    self._helper = threading.Thread(target=self._wait, name="pldp-writer-lock", daemon=True)
                    self._helper.start()
            self._state = "wanted"  # from free (the helper starts waiting) or blocked (it waits already)
            self._cv.notify_all()
            if self._cv.wait_for(lambda: self._state == "held", self.timeout):
                return
            self._state = "blocked"
        raise StoreUnavailableError(
            f"another process has held the writer lock ({self.path.name}) for {self.timeout:g} s", "store_busy"
        )

    def release(self) -> None:
        if self._file is None:
            return
        with self._cv:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._state = "free"

    def _wait(self) -> None:
        """The helper: whenever the lock is wanted, wait for it in ``flock`` and hand it over."""
        while True:
            with self._cv:
                self._cv.wait_for(lambda: self._state in ("wanted", "closed"))
                if self._state == "closed" or self._file is None:
                    return
                held = self._file
            try:
                fcntl.flock(held, fcntl.LOCK_EX)
            except (OSError, ValueError):  # closed under us
                return
            with self._cv:
                if self._state == "wanted":
                    self._state = "held"
                    self._cv.notify_all()
                elif self._state == "blocked":  # nobody waits any more: do not keep the other processes out
                    fcntl.flock(held, fcntl.LOCK_UN)
                    self._state = "free"

    def held_elsewhere(self) -> bool:
        """Whether another process holds the lock now (a probe on a descriptor of its own)."""
        try:
            with open(self.path, "rb") as probe:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        return False

    def close(self) -> None:
        with self._cv:
            self._state = "closed"
            self._cv.notify_all()
        if self._file is not None:
            self._file.close()
            self._file = None


def problem(path: Path, conn: store.Connection, last: StoreUnavailableError | None, lock: TurnLock) -> str | None:
    """Why the store at ``path`` cannot take writes now, or None (see module doc).

    ``conn`` is a connection of the store's (for its page limit), ``last`` the last write's
    failure (None if it committed), ``lock`` the writer lock.
    """
    if last is not None and (last.code != "store_busy" or lock.held_elsewhere() or write_locked(conn)):
        return last.reason
    for where in (path, path.parent):
        if where.exists() and not os.access(where, os.W_OK):
            return f"the store is read-only ({where} cannot be written)"
    with contextlib.suppress(OSError):
        disk = os.statvfs(path.parent)
        if disk.f_bavail * disk.f_frsize < MIN_FREE:
            return f"the store's disk is full ({disk.f_bavail * disk.f_frsize // 2**20} MiB free)"
    try:
        pages, cap = page_limits(conn)
    except store.SQLiteError as exc:
        return f"the store cannot be read ({exc})"
    if pages >= cap:
        return f"the store is full (at its limit of {cap} pages)"
    return None
