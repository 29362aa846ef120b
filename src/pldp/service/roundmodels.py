"""The answers of the routes of recurring campaigns as Pydantic models (:mod:`pldp.service.routes.rounds`).

Kept beside :mod:`pldp.service.models`, whose models they use, so that the rounds' answers are typed
in ``/openapi.json`` like every other answer.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from pldp.service.models import AttributeEstimate

__all__ = ["HistoryLoss", "RoundInfo", "Rounds", "RoundsProtection", "Series", "SeriesPoint"]

#: An epsilon >= 0, or "inf" where an answer is not protected.
Epsilon = Annotated[float | Literal["inf"], Field(description='An epsilon >= 0, or "inf": not bounded.')]

#: A campaign's schedule of rounds (:data:`pldp.service.rounds.SCHEDULES`).
Rounds = Literal["once", "daily", "weekly", "manual"]


class HistoryLoss(BaseModel):
    """The whole-history privacy loss of a number of reports of one device on a memoized campaign
    (``pldp.privacy.over_rounds``): what the reports reveal about whether and when its answer changes."""

    rounds: int = Field(ge=1, description="The number of reports (one per round) it is for.")
    epsilon: Epsilon = Field(
        description="The largest privacy loss over every pair of histories (the answers and the times they "
        "change) and every report sequence: exact when `exact`, else a proven upper bound. It grows with the "
        "number of reports, without limit."
    )
    exact: bool = Field(description="Whether `epsilon` is the exact loss (else an upper bound).")
    fresh_epsilon: Epsilon = Field(
        description="r times the one-report epsilon: what as many reports drawn afresh (not memoized) would add up to."
    )


class RoundsProtection(BaseModel):
    """What a memoized campaign's reports protect over a device's rounds: two guarantees
    (``pldp.deploy.history``). The answer: at `permanent_epsilon` each time it is new (all the
    reports of one answer together reveal no more). Whether and when it changes: at `history`'s
    epsilon, over the spec's rounds cap, or without one over the rounds so far (`next`: one more)."""

    permanent_epsilon: Epsilon = Field(
        description="eps_inf: the largest budget of the permanent response, what an answer is protected at each "
        "time it is new."
    )
    permanent_epsilons: list[Epsilon] = Field(description="Each answer's eps_inf, in label order.")
    one_report_epsilon: Epsilon = Field(description="eps_1: one report's own bound (the spec's claim).")
    values: int = Field(ge=2, description="d: the answers that can draw a permanent response.")
    rounds_cap: int | None = Field(
        description="The spec's caps.rounds: the most reports one device sends on the campaign's family (its "
        "ledger refuses more); null: no limit."
    )
    values_epsilon: Epsilon | None = Field(
        description="min(rounds_cap, d) times eps_inf: the most the capped reports spend on the answers; null "
        "without a rounds cap."
    )
    history: HistoryLoss = Field(
        description="The whole-history loss over the rounds cap; without one, over the current round's number of "
        "reports (one per round so far)."
    )
    next: HistoryLoss | None = Field(
        description="Without a rounds cap: the whole-history loss after one more round; null with a cap."
    )


class PerAddress(BaseModel):
    """What one client address may hold of an open campaign (``pldp serve --address-share/--address-burst``)."""

    share: float = Field(ge=0, lt=1, description="The part of the campaign's reports one address may hold.")
    burst: int = Field(ge=0, description="Reports any address may hold, besides its share.")
    n: int = Field(ge=0, description="The reports the campaign holds now.")
    allowed: int = Field(ge=0, description="The most reports one address may hold now: burst + share * n.")


class RoundInfo(BaseModel):
    """A campaign's current round: what the survey page asks, and what opening a round answers."""

    campaign: str
    rounds: Rounds = Field(
        description="once: one round; daily, weekly: round n is the n-th UTC day or week from the day of creation; "
        "manual: the admin opens each next round."
    )
    round: int = Field(ge=1, description="The current round (1, 2, ...).")
    started_at: float = Field(description="When the current round started (seconds since the epoch).")
    ends_at: float | None = Field(
        description="When it ends (daily, weekly); null when no end is set (once, manual: the next opening ends it)."
    )
    accepts: list[int] = Field(
        description="The rounds a report may name now (`?round=`): the current one, and the one before during the "
        "grace after the current one started."
    )
    protection: RoundsProtection | None = Field(
        None,
        description="A memoized campaign (a memo node): what its reports protect over a device's rounds, computed "
        "by the collector (the survey page and the dashboard say it in words); null for any other campaign, "
        "whose r reports add up to r times one report's epsilon.",
    )
    per_address: PerAddress | None = Field(
        None,
        description="An open campaign with per-address limits on: what one client address may hold of it "
        "(429 address_share beyond); null otherwise (invited campaigns: one report per code; --rate 0).",
    )


class SeriesPoint(BaseModel):
    """One round of a campaign's time series: its reports and its estimate."""

    round: int = Field(ge=1)
    started_at: float = Field(description="Seconds since the epoch.")
    ends_at: float | None = Field(description="Seconds since the epoch; null while not set (the current round).")
    n: int = Field(description="Reports counted in the round.")
    attributes: list[AttributeEstimate] | None = Field(
        description="The round's estimate, one entry per attribute as in GET .../estimate; null without reports."
    )


class Series(BaseModel):
    """A campaign's estimates round by round (every round from 1 to the current one)."""

    campaign: str
    rounds: Rounds
    round: int = Field(ge=1, description="The current round.")
    method: str
    level: float
    series: list[SeriesPoint]
