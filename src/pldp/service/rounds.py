"""Rounds of a recurring campaign: which round it is, when each started, which a report may answer.

A campaign's *rounds* are the collector's setting, chosen when the campaign is created (``pldp
campaign create spec.json --rounds daily``, ``POST /v1/campaigns?rounds=daily``), not part of
its spec, whose id is its hash. A round is a number, 1, 2, 3, ..., with a start time:

``once`` (the default)
    The campaign does not recur: it has the one round 1, from its creation on.
``daily``, ``weekly``
    Round ``n`` is the ``n``-th UTC day (or period of 7 UTC days) counted from the day the
    campaign was created (``first_day``): it starts at 00:00 UTC of day ``first_day + (n - 1)``
    (``first_day + 7 (n - 1)``) and ends when the next one starts. Round 1 starts at 00:00 UTC of
    the day of creation, so a daily campaign's rounds are its calendar days (UTC) and a report's
    round and its received day agree, but for a late report (below).
``manual``
    Round 1 starts at creation; the admin opens each next round (``POST
    /v1/campaigns/{id}/rounds``, ``pldp campaign round ID``), which starts then and ends the one
    before.

Which round a report is counted in (:meth:`Schedule.accepts`, applied by
:func:`pldp.service.collect.store_batch` in the writer's transaction): a client may say which
round it answers (``POST /v1/campaigns/{id}/reports?round=n``; the survey page always does); a
report that names none is counted in the round in which it is received. A named round is taken if
it is the current round, or the round before during a *grace* period after the current one started
(``pldp serve --round-grace``, :data:`DEFAULT_GRACE`). A respondent who opens a daily survey at
23:59 and sends her answer at 00:01 answers the day she was asked about, her respondent code's one
report of *that* round is used (not tomorrow's), and the page that keeps her report for the round
it showed finds it under that round on a reload. Without the grace the collector would either
count her answer in the wrong round or refuse it. A round that has not started, or one whose grace
is over, is refused (409 ``round_not_started``, ``round_closed``), and nothing is stored.

A report id is a campaign's whatever the round: a report retried in a later round is a duplicate
of the stored one, in the round it was stored in (:mod:`pldp.service.collect`).

The clock is the system's, except that the environment variable
:data:`pldp.service.store.TODAY_ENV` (``PLDP_TODAY=YYYY-MM-DD``) moves it to that day, at the same
time of day (:func:`clock`), so tests and drills can let days pass.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from urllib.parse import parse_qs

from pldp.service import store
from pldp.service.store import campaign_table

__all__ = [
    "DAY",
    "DEFAULT_GRACE",
    "PERIOD_DAYS",
    "SCHEDULES",
    "Asked",
    "Schedule",
    "asked_round",
    "clock",
    "schedule_of",
]

#: The schedules of rounds a campaign may have.
SCHEDULES = ("once", "daily", "weekly", "manual")
#: Days per round of the periodic schedules.
PERIOD_DAYS = {"daily": 1, "weekly": 7}
#: Seconds after a round starts during which a report may still name the round before (1 hour).
DEFAULT_GRACE = 3600.0
#: Seconds per day.
DAY = 86400.0


def clock() -> float:
    """Now, in seconds since the epoch: the system's clock, or with ``PLDP_TODAY`` that day at the
    system clock's time of day (the day :func:`pldp.service.store.today` gives)."""
    now = time.time()
    if os.environ.get(store.TODAY_ENV):
        return store.today() * DAY + now % DAY
    return now


@dataclass(frozen=True)
class Asked:
    """What a submission says of its round: the round it names (None: the one it is received in),
    the time it is received (:func:`clock`) and the collector's grace (seconds)."""

    round: int | None = None
    now: float | None = None
    grace: float = DEFAULT_GRACE

    def at(self) -> float:
        """The time of the submission (now, if none was given)."""
        return clock() if self.now is None else self.now


@dataclass(frozen=True)
class Schedule:
    """A campaign's rounds (see module doc).

    Attributes
    ----------
    kind : str
        One of :data:`SCHEDULES`.
    created_at : float
        When the campaign was created (seconds since the epoch).
    first_day : int
        The UTC day its rounds count from (days since 1970-01-01).
    opened : tuple of float
        ``manual``: when rounds 2, 3, ... were opened.
    """

    kind: str
    created_at: float
    first_day: int
    opened: tuple[float, ...] = ()

    @property
    def recurs(self) -> bool:
        """Whether the campaign has rounds beyond the first (a per-round tally is kept)."""
        return self.kind != "once"

    def current(self, now: float) -> int:
        """The round at time ``now`` (at least 1)."""
        if self.kind in PERIOD_DAYS:
            return max(1, (int(now // DAY) - self.first_day) // PERIOD_DAYS[self.kind] + 1)
        return 1 + len(self.opened)

    def start(self, n: int) -> float:
        """When round ``n`` started (or starts)."""
        if self.kind in PERIOD_DAYS:
            return (self.first_day + (n - 1) * PERIOD_DAYS[self.kind]) * DAY
        return self.created_at if n <= 1 else self.opened[n - 2]

    def end(self, n: int, now: float) -> float | None:
        """When round ``n`` ends (ended): the next round's start, or None while that is not known
        (the current round of a ``once`` or ``manual`` campaign)."""
        if self.kind in PERIOD_DAYS or n < self.current(now):
            return self.start(n + 1)
        return None

    def accepts(self, now: float, grace: float) -> tuple[int, ...]:
        """The rounds a report may name at ``now``: the current one, and the one before while the
        current one is younger than ``grace`` seconds."""
        n = self.current(now)
        if n > 1 and now - self.start(n) < grace:
            return (n - 1, n)
        return (n,)


def schedule_of(conn: store.Connection, campaign_id: str) -> Schedule | None:
    """The rounds of the stored campaign ``campaign_id`` (None: no such campaign)."""
    row = campaign_table.campaign_fields(conn, campaign_id, "key", "rounds", "created_at", "first_day")
    if row is None:
        return None
    key, kind, created_at, first_day = row
    opened: tuple[float, ...] = ()
    if kind == "manual":
        opened = campaign_table.opened_rounds(conn, key)
    day = int(created_at // DAY) if first_day is None else int(first_day)
    return Schedule(kind, created_at, day, opened)


def asked_round(query_string: bytes | str) -> int | None:
    """The round a submission's query (``round=n``) names, None when it names none.

    Raises
    ------
    ValueError
        When ``round`` is not a round number (1, 2, ...); the reason says what it was.
    """
    text = query_string.decode("latin-1") if isinstance(query_string, bytes) else query_string
    values = parse_qs(text, keep_blank_values=True).get("round")
    if not values:
        return None
    value = values[-1]
    if not (value.isascii() and value.isdigit() and 0 < len(value) <= 9 and int(value) >= 1):
        raise ValueError(f"round must be a round number (1, 2, ...), got {value[:40]!r}")
    return int(value)
