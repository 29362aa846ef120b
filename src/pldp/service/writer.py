"""The collector's single writer: group commit of many requests in one durable transaction.

Every change to the store (a batch of reports, a new campaign, a closed one, a token) is a *job*:
a function run by one thread that owns the only writing connection. The thread takes every job
waiting (up to :data:`MAX_GROUP`), runs them in one ``BEGIN IMMEDIATE`` transaction, each inside its
own ``SAVEPOINT`` (a job that fails is rolled back alone and its caller gets the error), writes the
running tallies that changed, and commits. Only then are the callers' futures resolved: a report is
acknowledged after the transaction that stores it, and its tally update, is on disk
(``synchronous=FULL``). Many single-report requests thus share one ``fsync`` (group commit, as in
database servers' write-ahead logs), which is what lets a collector acknowledge thousands of
durable requests per second.

The writer keeps each campaign's tally in memory (loaded from the store on first use) so that a
job merges its reports' tally without reading or parsing the stored one; the tally rows are
rewritten once per transaction. A recurring campaign also has a tally per round
(:mod:`pldp.service.rounds`), kept and written alike. Several collector processes may share one file (``pldp serve
--workers N``): SQLite's write lock serializes their transactions, and a writer drops its cached
tallies whenever ``PRAGMA data_version`` shows that another connection committed since its own
last commit, so a tally is never updated from a stale copy. If a transaction fails to commit, the
cache is dropped and every job of the group fails: nothing was acknowledged, and the clients retry.

The writer's index of a campaign's stored ids (:mod:`pldp.service.seen`) must equal the stored ids
under the write lock. Other connections only append, which the writer catches up with, except
retention (``pldp serve --retain-days``, :mod:`pldp.service.rollover`), which deletes old
reports and counts its deletions in ``retention.generation``. When ``PRAGMA data_version`` has
moved, the writer also compares each campaign's generation with the one it read when it loaded
the index, and drops the index of a campaign whose reports were deleted since: the next job that
needs it reloads it outside the lock, as after a start. Every process learns of a deletion this
way, the one that made it included (retention commits through a connection of its own).

The ids a job appends join the index when the job's savepoint is released, so the next job of the
group finds them there; if the transaction then fails to commit, the whole index is dropped with
the tallies (and reloaded when next needed). A larger table of the index is filled after the lock
is released (:meth:`pldp.service.seen.SeenIds.maintain`).

Faults (:mod:`pldp.service.faults`): the writer lock is waited for at most
:data:`~pldp.service.faults.LOCK_TIMEOUT` seconds, and so is SQLite's write lock; a statement that
fails for the store's sake (read-only, full, I/O error) fails the whole group with
:class:`~pldp.service.faults.StoreUnavailableError`, which the API answers with a 503. The last
such failure is kept for the health check (:meth:`Writer.problem`) until a transaction commits,
or until the writer's own probe finds that the store takes writes again.

Recovery: while the last write failed for the store's sake, the writer thread tries again by
itself, with backoff from :data:`RETRY_MIN` to :data:`RETRY_MAX` seconds (and before a group when
a try is due): it probes a write rolled back and, if the store still refuses it, opens the store
again and probes there (a connection SQLite opened read-only, as it does a file it may not write
even when asked to write, stays read-only for good).
Once it succeeds the fault is cleared (health says ``ok`` again) and the readers and the
checkpointer of the process reopen their read-only connections too. Each worker process does so
for itself; nothing of what was refused meanwhile was stored, so a client's resend counts once.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pldp.service import seen, store
from pldp.service.faults import LOCK_TIMEOUT, StoreUnavailableError, TurnLock, problem, store_error
from pldp.service.jobs import ColdCampaignError, Context, TallyKey
from pldp.service.seen import SeenIds, Stored
from pldp.service.store import transactions as tx

__all__ = ["MAX_GROUP", "Lookup", "StoreUnavailableError", "Writer"]

#: Most jobs committed in one transaction.
MAX_GROUP = 512
#: Seconds between checkpoints of the write-ahead log (:meth:`Writer._checkpoints`).
CHECKPOINT_EVERY = 0.5
#: Seconds between the writer's tries to take writes again after a failure (doubling up to :data:`RETRY_MAX`).
RETRY_MIN = 0.25
RETRY_MAX = 4.0


@dataclass(frozen=True)
class Lookup:
    """The report ids a job will look up (:meth:`Context.find`), given when it is submitted so that
    the writer can search its large table of stored ids for them before it takes the write lock."""

    campaign_id: str
    ids: bytes


class _Entry(NamedTuple):
    """A queued job, the future of its result, and the ids it will look up."""

    job: Callable[[Context], Any]
    fut: Future[Any]
    lookup: Lookup | None


class Writer:
    """The thread that owns the store's writing connection (see module doc).

    Parameters
    ----------
    path : str or Path
        The store's file (migrated to :data:`pldp.service.store.SCHEMA_VERSION` on start).
    checkpoints : bool
        Whether to run a checkpointing thread (:meth:`_checkpoints`); a second writer in a process
        that has one already (the rollover's) needs none of its own.
    lock_timeout : float
        Seconds to wait for the writer lock, and for SQLite's write lock, before a group fails.

    Attributes
    ----------
    fault : StoreUnavailableError or None
        Why the last transaction failed for the store's sake (None once one commits); set at the
        start too if the store cannot be written then.
    """

    def __init__(self, path: str | Path, checkpoints: bool = True, lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.path = Path(path)
        self.lock_timeout = lock_timeout
        #: How many times the store was opened again after a fault (readers reopen theirs when it moves).
        self.opened = 0
        self.conn = store.connect(path)
        store.migrate(self.conn)
        self._configure()
        # Writers of several processes take turns through this lock file before BEGIN IMMEDIATE: a
        # blocked flock() returns as soon as the lock is free, where SQLite's own busy handler
        # sleeps in steps of up to 100 ms (the cause of the tail latency with --workers 2).
        self.lock = TurnLock(f"{path}-writer.lock", lock_timeout)
        found = self._probe()  # another writer's lock at the start is no fault
        self.fault: StoreUnavailableError | None = None if found is None or found.code == "store_busy" else found
        self._retry_after = RETRY_MIN  # seconds to the next try while faulted (backoff)
        self._retry_at = time.monotonic() + RETRY_MIN
        self._tallies: dict[TallyKey, Any] = {}
        self._seen: dict[int, SeenIds] = {}
        self._generation: dict[int, int] = {}  # campaign key -> retention's generation when its ids were loaded
        self._keys: dict[str, int] = {}  # campaign id -> key, for _look_up
        self._version = -1  # PRAGMA data_version after our last commit
        self._queue: queue.Queue[_Entry | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="pldp-writer", daemon=True)
        self._thread.start()
        self._stop = threading.Event()
        self._checkpointer: threading.Thread | None = None
        if checkpoints:
            self._checkpointer = threading.Thread(
                target=self._checkpoints, args=(path,), name="pldp-checkpoint", daemon=True
            )
            self._checkpointer.start()

    def _configure(self) -> None:
        tx.configure_writer(self.conn, self.lock_timeout)  # checkpoints run in _checkpoints, not in a COMMIT

    def _probe(self) -> StoreUnavailableError | None:
        """Why the store takes no write now (a write rolled back: a read-only store fails it), or
        None. Never waits for SQLite's write lock: held elsewhere, it is a ``store_busy`` fault."""
        timeout = tx.busy_timeout(self.conn)
        tx.set_busy_timeout(self.conn, 0)
        try:
            tx.begin_immediate(self.conn)
            try:
                tx.touch(self.conn)
            finally:
                if self.conn.in_transaction:
                    tx.rollback(self.conn)
        except store.SQLiteError as exc:
            return store_error(exc)
        finally:
            tx.set_busy_timeout(self.conn, timeout)
        return None

    def _recover(self) -> None:
        """While faulted: probe a write; if the store still refuses it (not just busy), open the store
        again (a connection SQLite opened read-only stays so, even when it was asked to write) and
        probe on the new connection. Clear the fault if a probe works, else try again later,
        backing off (see module doc)."""
        try:
            fault = self._probe()
            if fault is not None and fault.code != "store_busy":
                old, self.conn = self.conn, store.connect(self.path)
                self._configure()
                fault = self._probe()
                if fault is None:  # the new connection writes: the old one goes, with what it cached
                    old.close()
                    self._tallies.clear()
                    self._seen.clear()
                    self._generation.clear()
                    self._version = -1
                    self.opened += 1
                else:
                    self.conn.close()
                    self.conn = old
        except Exception as exc:
            fault = store_error(exc) or StoreUnavailableError(f"the store could not be opened ({exc})")
        if fault is None:
            self.fault = None
            self._retry_after = RETRY_MIN
        else:
            if fault.code != "store_busy" or self.fault is None or self.fault.code == "store_busy":
                self.fault = fault  # a busy lock does not hide a worse fault
            self._retry_after = min(2 * self._retry_after, RETRY_MAX)
        self._retry_at = time.monotonic() + self._retry_after

    def problem(self, conn: store.Connection) -> str | None:
        """Why the store cannot take writes now, or None (:func:`pldp.service.faults.problem`;
        ``conn`` is a reading connection of the caller's thread)."""
        return problem(self.path, conn, self.fault, self.lock)

    def submit(self, job: Callable[[Context], Any], lookup: Lookup | None = None) -> Future[Any]:
        """Queue ``job``; the future resolves after the transaction that ran it has committed.

        ``lookup``: the report ids the job will look up, which the writer then searches for in its
        large table before it takes the write lock (:meth:`_look_up`).
        """
        fut: Future[Any] = Future()
        self._queue.put(_Entry(job, fut, lookup))
        return fut

    def run(self, job: Callable[[Context], Any], timeout: float | None = 60.0) -> Any:
        """:meth:`submit` and wait for the result (or the job's exception)."""
        return self.submit(job).result(timeout)

    def close(self) -> None:
        """Finish the queued jobs, stop the threads, checkpoint the log and close the connection."""
        self._queue.put(None)
        self._thread.join()
        self._stop.set()
        if self._checkpointer is not None:
            self._checkpointer.join()
        try:
            tx.checkpoint(self.conn, "TRUNCATE")
        except store.OperationalError:  # another process is using the file: its checkpoints go on
            pass
        self.conn.close()
        self.lock.close()

    def _checkpoints(self, path: str | Path) -> None:
        """Copy the write-ahead log into the database file every :data:`CHECKPOINT_EVERY` seconds.

        A ``PASSIVE`` checkpoint on its own connection never blocks the writer, so a checkpoint
        (which writes and syncs the database file) no longer stalls the ``COMMIT`` that would
        otherwise trigger it, and with it every request of that group.
        """
        conn, opened = store.connect(path), self.opened
        try:
            while not self._stop.wait(CHECKPOINT_EVERY):
                if opened != self.opened:  # the writer opened the store again: so does this thread
                    with contextlib.suppress(store.SQLiteError):
                        fresh = store.connect(path)
                        conn.close()
                        conn, opened = fresh, self.opened
                try:
                    tx.checkpoint(conn, "PASSIVE")
                except store.OperationalError:  # busy: the next round catches up
                    continue
        finally:
            conn.close()

    # ------------------------------------------------------------------ the thread
    def _run(self) -> None:
        while True:
            try:
                first = self._queue.get(
                    timeout=None if self.fault is None else max(0.0, self._retry_at - time.monotonic())
                )
            except queue.Empty:
                self._recover()
                continue
            if first is None:
                return
            group = [first]
            while len(group) < MAX_GROUP:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._queue.put(None)  # stop after this group
                    break
                group.append(nxt)
            if self.fault is not None and time.monotonic() >= self._retry_at:
                self._recover()
            self._commit(group)

    def _commit(self, group: list[_Entry]) -> None:
        """Run ``group`` in one transaction under the write lock.

        A job that needs a campaign whose stored ids are not loaded is set aside (its savepoint
        undone). After the commit, with the lock released, the ids are loaded (about a second per
        million reports, during which every other writer goes on), and the set-aside jobs run
        again at once. The first transaction after the load catches up with what other processes
        appended meanwhile.
        """
        while group:
            known = self._look_up(group)
            try:
                self.lock.acquire()  # the writers of other processes wait here, woken at once
            except StoreUnavailableError as exc:
                self._fail(group, exc)
                return
            try:
                cold = self._commit_locked(group, known)
            finally:
                self.lock.release()
            for index in self._seen.values():  # a larger table is filled now, not under the lock
                index.maintain()
            for key in {key for key, _ in cold}:
                try:
                    self._seen[key], self._generation[key] = seen.load(self.conn, key)  # one snapshot, no lock
                except store.SQLiteError as exc:
                    self._fail([entry for k, entry in cold if k == key], store_error(exc) or exc)
                    cold = [(k, entry) for k, entry in cold if k != key]
                # whatever was appended (or deleted) since is caught up in the next transaction
                self._version = -1
            group = [entry for _, entry in cold]

    def _look_up(self, group: list[_Entry]) -> dict[tuple[int, int], Stored]:
        """Search the large table of stored ids for the ids the jobs of ``group`` will look up,
        before the write lock is taken (see module doc): that table changes only in
        :meth:`~pldp.service.seen.SeenIds.maintain`, which this thread runs after the lock is
        released, so under the lock a job searches the small table of the ids added since."""
        known: dict[tuple[int, int], Stored] = {}
        for entry in group:
            if entry.lookup is None:
                continue
            key = self._keys.get(entry.lookup.campaign_id)
            if key is None:  # a read outside any transaction; a campaign's key never changes
                with contextlib.suppress(store.SQLiteError):
                    key = store.campaign_key(self.conn, entry.lookup.campaign_id)
                if key is None:
                    continue
                self._keys[entry.lookup.campaign_id] = key
            index = self._seen.get(key)
            if index is not None:
                known[key, id(entry.lookup.ids)] = index.stored(entry.lookup.ids)
        return known

    def _fail(self, group: list[_Entry], error: BaseException) -> None:
        """Fail every job of ``group``; nothing of it was stored."""
        if isinstance(error, StoreUnavailableError):
            if self.fault is None:  # a new fault: the first try again comes soon
                self._retry_after = RETRY_MIN
                self._retry_at = time.monotonic() + RETRY_MIN
            self.fault = error
        for entry in group:
            entry.fut.set_exception(error)

    def _commit_locked(self, group: list[_Entry], known: dict[tuple[int, int], Stored]) -> list[tuple[int, _Entry]]:
        """Run and commit ``group`` and answer its jobs; return the jobs set aside for a campaign not
        loaded (see :meth:`_commit`). ``known``: the large tables' answers of :meth:`_look_up`."""
        ctx = Context(self.conn, self._tallies, self._seen, known=known)
        outcomes: list[tuple[Future[Any], Any, BaseException | None]] = []
        cold: list[tuple[int, _Entry]] = []
        try:
            tx.begin_immediate(self.conn)
            version = tx.data_version(self.conn)
            if version != self._version:  # another process committed since our last commit: catch up
                self._tallies.clear()
                if self._seen:
                    self._forget_deleted()
                for key, index in self._seen.items():
                    for ids, seqs in seen.id_chunks(self.conn, key, index.last):
                        index.add(ids, seqs)
            for entry in group:
                job, fut = entry.job, entry.fut
                tx.savepoint(self.conn)
                ctx._job, ctx._job_ids = {}, []
                try:
                    result = job(ctx)
                except ColdCampaignError as exc:  # set aside until the campaign's ids are loaded
                    tx.rollback_to(self.conn)
                    tx.release(self.conn)
                    cold.append((exc.key, entry))
                    continue
                except Exception as exc:
                    if store_error(exc) is not None:  # the store failed, not the job: the group fails
                        raise
                    tx.rollback_to(self.conn)  # the job's own failure: undo it alone
                    tx.release(self.conn)
                    outcomes.append((fut, None, exc))
                    continue
                tx.release(self.conn)
                ctx._release()
                outcomes.append((fut, result, None))
            for (campaign_id, turn), tally in ctx.pending.items():
                text = json.dumps(tally.to_dict(), separators=(",", ":"))
                store.write_tally(self.conn, campaign_id, turn, int(tally.n), text)
            tx.commit(self.conn)
            # our own commit leaves our data_version as it was; read after COMMIT, it could already
            # include another process's later commit, whose tally we would then never reload
            self._version = version
        except Exception as exc:  # nothing of the group is stored, nothing acknowledged
            if self.conn.in_transaction:
                with contextlib.suppress(store.SQLiteError):
                    tx.rollback(self.conn)
            self._tallies.clear()
            self._seen.clear()
            self._generation.clear()
            self._fail(group, store_error(exc) or StoreUnavailableError(f"the store could not commit ({exc})"))
            return []
        self.fault = None
        self._tallies.update(ctx.pending)
        for fut, result, error in outcomes:
            if error is None:
                fut.set_result(result)
            else:
                fut.set_exception(error)
        return cold

    def _forget_deleted(self) -> None:
        """Drop the index of every campaign whose reports retention deleted since the index was
        loaded (its generation moved; see module doc). Runs under the write lock, in the transaction."""
        for key, generation in store.retention_generations(self.conn).items():
            if key in self._seen and generation != self._generation.get(key, 0):
                del self._seen[key]
                self._generation.pop(key, None)
