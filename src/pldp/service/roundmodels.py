"""The answers of the routes of recurring campaigns as Pydantic models (:mod:`pldp.service.routes.rounds`).

Kept beside :mod:`pldp.service.models`, whose models they use, so that the rounds' answers are typed
in ``/openapi.json`` like every other answer.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from pldp.service.models import AttributeEstimate

__all__ = ["RoundInfo", "Rounds", "Series", "SeriesPoint"]

#: A campaign's schedule of rounds (:data:`pldp.service.rounds.SCHEDULES`).
Rounds = Literal["once", "daily", "weekly", "manual"]


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
