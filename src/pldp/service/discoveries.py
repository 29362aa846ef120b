"""The collector's discoveries of free-text campaigns: one at a time, and the last one reused.

A free-text campaign's estimate reads every stored report and runs its protocol's discovery
(:meth:`pldp.heavy.HeavyHitter.discover`): tens of seconds at a million reports, while the
dashboard asks every 2 seconds. :class:`Discoveries` bounds that work:

* one discovery runs at a time in a process (a request that needs another waits for it), so
  analysts' queries take at most one core however many arrive;
* each query (campaign, round, top) keeps its last :class:`~pldp.heavy.Discovery` with the number
  of reports it was made from, and a request is answered from it while no report has arrived
  (``hit``), or, while a discovery is running, from the last one (``stale``: its ``n`` says how many
  reports it saw) rather than waiting; the intervals at the level asked are made from it each time;
* at most :data:`KEPT` queries are kept, the least recently used dropped; a failed discovery keeps
  nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["KEPT", "Discoveries"]

#: The most queries kept.
KEPT = 64


class Discoveries:
    """The last discovery of each query, and the one lock under which discoveries run (module docstring)."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._found: OrderedDict[Hashable, tuple[int, Any]] = OrderedDict()
        self._guard = threading.Lock()  # the dict
        self._running = threading.Lock()  # one discovery at a time

    def _kept(self, key: Hashable) -> tuple[int, Any] | None:
        with self._guard:
            found = self._found.get(key)
            if found is not None:
                self._found.move_to_end(key)
            return found

    def get(self, key: Hashable, n: int, discover: Callable[[], tuple[int, Any]]) -> tuple[Any, str]:
        """The discovery of ``key`` and how it was had: ``"hit"`` (kept, made from at least the ``n``
        reports the caller counted), ``"stale"`` (kept, older; another discovery is running) or
        ``"miss"`` (``discover()`` ran now, under the lock, and returned its report count and result)."""
        found = self._kept(key)
        if found is not None and found[0] >= n:
            return found[1], "hit"
        if found is not None and self._running.locked():
            return found[1], "stale"
        with self._running:
            found = self._kept(key)  # another request may have made it while this one waited
            if found is not None and found[0] >= n:
                return found[1], "hit"
            count, result = discover()
            with self._guard:
                self._found[key] = (count, result)
                self._found.move_to_end(key)
                while len(self._found) > self.kept:
                    self._found.popitem(last=False)
            return result, "miss"
