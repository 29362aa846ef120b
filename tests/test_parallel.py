"""pldp.parallel's quiet Ctrl-C: the one error distributed logs when interrupted early is dropped, no other."""

from __future__ import annotations

import logging
import sys

import pytest

pytest.importorskip("distributed")

from pldp.parallel import _unbound_cancel


def _record(exc: BaseException, callback: str) -> logging.LogRecord:
    """A record as tornado's IOLoop logs a callback that raised (``app_log.exception``)."""
    try:
        raise exc
    except BaseException:
        info = sys.exc_info()
    return logging.LogRecord(
        "tornado.application", logging.ERROR, __file__, 1, "Exception in callback %r", (callback,), info
    )


def test_only_the_unbound_cancel_of_an_interrupted_sync_is_dropped() -> None:
    cancel = "functools.partial(<function sync.<locals>.cancel at 0x7f33bcd4f100>)"
    unbound = NameError("cannot access free variable 'future' where it is not associated with a value")
    assert not _unbound_cancel(_record(unbound, cancel))
    assert _unbound_cancel(_record(RuntimeError("boom"), cancel))  # another error of that callback
    assert _unbound_cancel(_record(unbound, "functools.partial(<function other at 0x1>)"))
    assert _unbound_cancel(logging.LogRecord("tornado.application", logging.ERROR, __file__, 1, "x", (), None))


def test_the_filter_is_there_only_while_a_client_is_open() -> None:
    from pldp.parallel import dask_client

    log = logging.getLogger("tornado.application")
    assert _unbound_cancel not in log.filters
    with dask_client(1, None):
        assert _unbound_cancel in log.filters
    assert _unbound_cancel not in log.filters
