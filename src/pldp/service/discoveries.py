"""The collector's recent discoveries of free-text campaigns, reused while no report has arrived.

A free-text campaign's estimate reads every stored report and runs its protocol's discovery
(:func:`pldp.deploy.estimates.discovery_estimate`): seconds at a million reports, while the
dashboard asks every 2 seconds. :class:`Discoveries` keeps the last answer of each query (campaign,
round, level, top) with the number of reports it was made from, and answers the same query from
it while that number is unchanged; one request at a time computes a query's answer, and the others
wait for it rather than computing it again. It holds at most :data:`KEPT` answers, dropping the
least recently used.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["KEPT", "Discoveries"]

#: The most answers kept.
KEPT = 64


class Discoveries:
    """Answers of discovery queries, each with the report count it was made from (module docstring)."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._answers: OrderedDict[Hashable, tuple[int, Any]] = OrderedDict()
        self._locks: dict[Hashable, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, key: Hashable, n: int, compute: Callable[[], Any]) -> tuple[Any, bool]:
        """The answer of ``key`` for ``n`` reports, and whether it was kept from before (else computed
        now by ``compute``, which a failure leaves unkept)."""
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                kept = self._answers.get(key)
                if kept is not None and kept[0] == n:
                    self._answers.move_to_end(key)
                    return kept[1], True
            answer = compute()
            with self._guard:
                self._answers[key] = (n, answer)
                self._answers.move_to_end(key)
                while len(self._answers) > self.kept:
                    old, _ = self._answers.popitem(last=False)
                    self._locks.pop(old, None)
            return answer, False
