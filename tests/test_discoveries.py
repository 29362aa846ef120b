"""The collector's discoveries of free-text campaigns: one at a time, the last one reused
(:class:`pldp.service.discoveries.Discoveries`)."""

from __future__ import annotations

import threading

import pytest

from pldp.service.discoveries import Discoveries


def test_a_query_is_discovered_once_per_report_count_and_a_failure_keeps_nothing() -> None:
    runs: list[int] = []
    kept = Discoveries()

    def discover(n: int):
        def run() -> tuple[int, str]:
            runs.append(n)
            return n, f"found from {n}"

        return run

    assert kept.get("q", 5, discover(5)) == ("found from 5", "miss")
    assert kept.get("q", 5, discover(5)) == ("found from 5", "hit")
    assert kept.get("q", 4, discover(4)) == ("found from 5", "hit")  # made from more than asked
    assert kept.get("q", 6, discover(6)) == ("found from 6", "miss")
    assert runs == [5, 6]

    def failing() -> tuple[int, str]:
        raise RuntimeError("too few reports")

    with pytest.raises(RuntimeError):
        kept.get("other", 1, failing)
    assert kept.get("other", 1, discover(1)) == ("found from 1", "miss")


def test_the_least_recently_used_query_is_dropped_beyond_the_bound() -> None:
    kept = Discoveries(kept=2)
    for key in ("a", "b"):
        kept.get(key, 1, lambda key=key: (1, key))
    kept.get("a", 1, lambda: (1, "again"))  # a hit: "a" is now the most recent
    kept.get("c", 1, lambda: (1, "c"))  # drops "b"
    assert kept.get("a", 1, lambda: (1, "new a"))[1] == "hit"
    assert kept.get("b", 1, lambda: (1, "new b")) == ("new b", "miss")


def test_while_a_discovery_runs_a_kept_query_is_answered_stale_and_a_new_one_waits() -> None:
    kept = Discoveries()
    kept.get("old", 1, lambda: (1, "old from 1"))
    started, release = threading.Event(), threading.Event()

    def slow() -> tuple[int, str]:
        started.set()
        assert release.wait(10)
        return 9, "slow"

    runner = threading.Thread(target=lambda: kept.get("slow", 9, slow))
    runner.start()
    assert started.wait(10)
    # "old" has more reports now, but a discovery is running: the last one is served, marked stale
    assert kept.get("old", 2, lambda: (2, "old from 2")) == ("old from 1", "stale")
    waited: list[tuple[str, str]] = []
    other = threading.Thread(target=lambda: waited.append(kept.get("new", 1, lambda: (1, "new"))))
    other.start()
    other.join(0.2)
    assert other.is_alive() and not waited  # no kept answer: it waits for the running discovery
    release.set()
    runner.join(10)
    other.join(10)
    assert waited == [("new", "miss")]
    # the same query asked twice at once is discovered once: the second finds the first's answer
    runs = []

    def counted() -> tuple[int, str]:
        runs.append(1)
        return 3, "three"

    both = [threading.Thread(target=lambda: kept.get("twice", 3, counted)) for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join(10)
    assert len(runs) == 1
