"""The real collector process of the service tests (:class:`pldp.service.process.CollectorProcess`, unlimited),
the recount every service test ends with, and the bounded wait of the tests that poll."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pldp.deploy import Spec, decode
from pldp.service import store
from pldp.service.process import CollectorProcess, free_port

__all__ = ["Server", "free_port", "stored_and_recount", "wait_until"]

T = TypeVar("T")


class Server(CollectorProcess):
    """The tests' collector: ``pldp serve`` without a rate limit unless ``extra`` sets ``--rate``.

    The tests send thousands of reports from 127.0.0.1, beyond one address's default limit; the
    tests of the limits (``tests/test_service_abuse.py``) set their own, or keep the defaults with
    ``--rate 100``.
    """

    def __init__(self, db: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        super().__init__(db, *(extra if "--rate" in extra else ("--rate", "0", *extra)), env=env)


def stored_and_recount(db: Path, spec: Spec) -> tuple[Any, Any]:
    """The campaign's stored running tally and a recount of its stored reports, read from the file
    (after checking that no report id is stored twice)."""
    conn = store.connect(db)
    try:
        batch = store.stored_batch(conn, spec)
        assert len({bytes(r) for r in batch.ids}) == len(batch), "a report id is stored twice"
        return store.stored_tally(conn, spec), decode(spec, batch)
    finally:
        conn.close()


def wait_until(what: Callable[[], T], timeout: float = 30.0, poll: float = 0.05, why: str = "the condition") -> T:
    """Call ``what`` every ``poll`` seconds until it returns something true, and return that;
    raise :class:`TimeoutError` (``why`` says what did not happen) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not (got := what()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {why} in vain (last: {got!r})")
        time.sleep(poll)
    return got
