"""The answer of ``GET /v1/campaigns/{id}/estimate`` as Pydantic models, for its OpenAPI schema
(:func:`pldp.deploy.estimates.campaign_estimate` builds it; :mod:`pldp.service.models` re-exports them)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

__all__ = ["AttributeEstimate", "Detection", "DiscoveryLimits", "Estimate"]


class DiscoveryLimits(BaseModel):
    """What a free-text campaign's discovery cannot see (:class:`pldp.heavy.Discovery`)."""

    protocol: str = Field(description="PEM, TreeHist or SFP.")
    top: int = Field(description="The answers asked for (there may be fewer).")
    max_bytes: int = Field(description="A longer answer is seen as its first max_bytes UTF-8 bytes.")
    floor: float = Field(description="An answer estimated below this share may be held by nobody.")
    miss: float = Field(description="An answer held by fewer than about this share of users may be missed.")
    confident: list[bool] = Field(description="Per answer, whether its estimate is above the floor.")
    text: list[bool] = Field(
        description="Per answer, whether its bytes are UTF-8 text; an answer that is not (cut inside a character) "
        "is labelled with its undecodable bytes escaped (\\xNN)."
    )
    limits: str = Field(description="The same, in words.")


class AttributeEstimate(BaseModel):
    """One attribute's estimate: per label the frequency, standard error and interval."""

    name: str | None = Field(description="The attribute (None for a single one).")
    labels: list[str] = Field(description="The answers: the spec's, or those a free-text campaign discovered.")
    frequencies: list[float]
    std_error: list[float]
    ci_low: list[float]
    ci_high: list[float]
    on_simplex: bool
    iterations: int
    converged: bool
    fallback: str | None = Field(
        description="The method the estimate comes from when the one asked for could not be used on these reports "
        '(e.g. "robust" for PLDP-FEBSF\'s AUEM when the level reports do not fit it); null when none was needed.'
    )
    fallback_reason: str | None = Field(description="Why the fallback was taken; null without one.")
    discovery: DiscoveryLimits | None = Field(
        None, description="A free-text campaign's discovery: what it cannot see; absent for listed answers."
    )
    info: dict[str, Any] = Field(
        description='The estimator\'s diagnostics. For "robust" over budget levels, `bound` is the most fakes can '
        "move each share in the threat model `bound_model` states. RCF, APLDP, LLevels, and MPLDP per attribute: a "
        "share `beta` of fakes in any split over the levels (`spread_bound` equals `bound`), at most 1, and "
        "`vacuous` true where it is 1 (the bound then says nothing); `margin` is the most those fakes raise the "
        "robust estimate more than the unbiased one on the same reports (`margin_model`). PLDP-FEBSF: a share `beta` "
        "of fakes in any split over the report groups (reported level; and number of ones for unary reports), "
        "with the level shares the reports give; no `margin` (its unbiased estimate, AUEM, is not a combination "
        'of those groups). Its "huber": fakes that all claim ONE level, and `spread_bound` is null.'
    )


class Detection(BaseModel):
    """The detection screen of the campaign's reports (:func:`pldp.estimation.detect.screen`).

    Unary reports (RAPPOR, OUE, IDUE and the unary levels of PBP, PPDA, PLDP-FEBSF) are screened by
    their number of ones; direct encodings (one answer per report) and protocols without a screen
    of single reports have none: ``available`` false, ``reason`` says why, the numbers are null.
    """

    available: bool = Field(description="Whether the reports could be screened.")
    reason: str | None = Field(description="Why not (null when available).")
    alpha: float | None = Field(description="The tail probability below which a number of ones is flagged.")
    flagged: int | None = Field(
        ge=0, description="Reports whose number of ones is in that tail under every honest law."
    )
    flagged_share: float | None = Field(
        description="Their share of all reports: honest devices alone give less than 2 alpha.", ge=0.0, le=1.0
    )
    tail_share: float | None = Field(
        description="The share flagged at the tallies' band (alpha 0.001).", ge=0.0, le=1.0
    )
    ones_excess_share: float | None = Field(
        description="A lower bound on the share of reports piling up on some number of ones beyond what honest "
        "devices produce (0 with probability 95 % without fakes); null where the honest law depends on the item "
        "or on unknown level shares.",
        ge=0.0,
        le=1.0,
    )
    flagged_ones: list[int] = Field(description="The numbers of ones flagged that some report has.")
    joint_p: float | None = Field(
        None,
        description="The p-value of the joint test of the whole histogram of ones (unflagged counts) against "
        "the honest law: a binomial scan of every count and a likelihood-ratio test.",
        ge=0.0,
        le=1.0,
    )
    joint_fired: bool | None = Field(None, description="Whether the joint test rejects the honest law at alpha.")
    suspect_ones: list[int] = Field(
        default_factory=list,
        description='When it fired, the counts with more reports than honest devices give ("detect" drops them).',
    )
    flag_from: int | None = Field(None, description="The smallest flagged number of ones; null when none is.")
    largest_unflagged: int | None = Field(None, description="The most ones a report can have without being flagged.")
    power_share: float | None = Field(
        None,
        description="The smallest share of fakes at the largest unflagged count that the joint test detects "
        "9 times in 10 at this number of reports.",
        ge=0.0,
        le=1.0,
    )
    has_power: bool | None = Field(
        None, description="Whether that share is at most 5 %; false: the screen has no power at this budget and n."
    )


class Estimate(BaseModel):
    """A campaign's estimate (:func:`pldp.deploy.estimates.campaign_estimate`)."""

    campaign: str
    n: int
    method: str
    level: float
    methods: list[str] = Field(description="Every method the campaign's oracle offers: any may be asked for.")
    detection: Detection
    round: int | None = Field(None, description="The round estimated (?round=); absent: every report.")
    attributes: list[AttributeEstimate]
