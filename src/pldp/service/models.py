"""The bodies of the collector's HTTP API as Pydantic models, for its OpenAPI schema.

The two wire bodies, a campaign spec (:class:`CampaignSpec`, ``pldp.spec/1``, defined in
:mod:`pldp.service.spec_models`) and the reports a client sends (:class:`ReportsBody`,
``pldp.batch/1`` and ``pldp.report/1``), follow ``docs/wire-format.md`` §1-4 member by member, so
that a client writer or an API fuzzer can build a valid body from ``/openapi.json``; a spec's
sampler node is described by the schema each kind of node declares
(:func:`pldp.channel.node_schema`), so every node pldp makes is in it. They *describe* the bodies;
the collector still reads them with pldp's own checks (:meth:`pldp.deploy.Spec.from_json`, which
also verifies every privacy claim exactly, and :func:`pldp.service.collect.prepare_batch`), whose
refusals are the API's answers.
The other models type the answers: the routes return plain data that FastAPI checks against them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from pldp.service.auth import ADMIN_LIFETIME, ANALYST_LIFETIME, MAX_LIFETIME
from pldp.service.codes import CODE_LIFETIME, MAX_CODES
from pldp.service.estimate_models import AttributeEstimate, Detection, Estimate
from pldp.service.spec_models import (
    CampaignSpec,
    Caps,
    Memo,
    OracleParams,
    ReportId,
    Sampler,
    SamplerNode,
    SpecId,
    Strict,
    Whole,
)

__all__ = [
    "AttributeEstimate",
    "Batch",
    "BatchReport",
    "CampaignEntry",
    "CampaignSpec",
    "CampaignUrls",
    "Caps",
    "Closed",
    "CodeCounts",
    "Codes",
    "CodesRequest",
    "DayCount",
    "Days",
    "Detection",
    "Error",
    "Estimate",
    "Health",
    "LeveledPayload",
    "Memo",
    "OracleParams",
    "Payload",
    "Report",
    "ReportsBody",
    "RevokeCodesRequest",
    "RevokedCodes",
    "RevokedToken",
    "RotateRequest",
    "Sampler",
    "SamplerNode",
    "SubmitAck",
    "Token",
    "TokenInfo",
    "TokenRequest",
]


# ---------------------------------------------------------------------------------- reports
class LeveledPayload(Strict):
    """The payload of a ``leveled`` node: the (reported) level, absent when hidden, and the item's payload."""

    level: int | None = Field(None, ge=0)
    data: Payload


class Payload(RootModel[int | str | LeveledPayload | list["Payload"]]):
    """A report's payload by node kind (§4): ``direct`` an item index; ``unary`` and ``padding``
    the bits packed most significant first, as standard base64; ``leveled`` an object;
    ``attributes`` one payload per part."""

    model_config = ConfigDict(strict=True)

    root: Annotated[int, Field(ge=0)] | Annotated[str, Field(description="base64")] | LeveledPayload | list[Payload]


class BatchReport(Strict):
    """A report inside a batch (the batch names the spec)."""

    id: ReportId
    payload: Payload


class Report(Strict):
    """One report, ``pldp.report/1``."""

    format: Literal["pldp.report/1"]
    spec: SpecId
    id: ReportId
    payload: Payload


class Batch(BaseModel):
    """A batch of reports, ``pldp.batch/1``: what pldp's clients send."""

    model_config = ConfigDict(strict=True)

    format: Literal["pldp.batch/1"]
    spec: SpecId
    reports: list[BatchReport]


class ReportsBody(RootModel[Batch | Report | list[Report]]):
    """Reports for ``POST /v1/campaigns/{id}/reports``: a batch, one report, or a list of reports.

    All or nothing: the first bad report refuses the whole body (400, naming the report).
    """

    model_config = ConfigDict(
        strict=True,
        json_schema_extra={
            "examples": [
                {
                    "format": "pldp.batch/1",
                    "spec": "821aa0b1cbf5686ca622676696fe37aa",
                    "reports": [
                        {"id": "7922e4ff8306bdf3c152a866f35196bb", "payload": 0},
                        {"id": "24e7a4f6d2ac6fd2f2dab0ae3fcd72a9", "payload": 2},
                    ],
                }
            ]
        },
    )


def _lifetime(default: float, what: str) -> Any:
    days = round(default / 86400)
    return Field(
        default=int(default),
        ge=1,
        le=int(MAX_LIFETIME),
        description=f"Seconds until the {what} expires (default {int(default)}: {days} days; at most 10 years).",
    )


class TokenRequest(Strict):
    """A new analyst token: its label, the campaigns it may read, and how long it lives."""

    label: str = ""
    campaigns: list[str] = Field(default_factory=list, description="Campaign ids (each must exist).")
    expires_in: Whole = _lifetime(ANALYST_LIFETIME, "token")


class RotateRequest(Strict):
    """A new admin token that replaces the current one (every other admin token is revoked)."""

    label: str = "admin (rotated)"
    expires_in: Whole = _lifetime(ADMIN_LIFETIME, "token")


class CodesRequest(Strict):
    """Respondent codes to issue for an invited campaign."""

    count: Whole = Field(ge=1, le=MAX_CODES, description=f"How many codes (1 to {MAX_CODES:,} per request).")
    expires_in: Whole = _lifetime(CODE_LIFETIME, "codes")


class RevokeCodesRequest(Strict):
    """The codes to revoke: those listed, or with ``unused`` every code not used yet."""

    codes: list[str] = Field(default_factory=list, max_length=MAX_CODES, description="Codes, as issued.")
    unused: bool = Field(default=False, description="Revoke every code of the campaign not used yet.")


# ---------------------------------------------------------------------------------- answers
class Error(BaseModel):
    """Every refusal: a short code and a reason in words."""

    error: str = Field(description="A short code, e.g. bad_report, unauthorized, campaign_closed.")
    reason: str


class Health(BaseModel):
    """The service is up; the store's schema version; whether the store takes writes."""

    status: Literal["ok", "degraded"] = Field(
        description="degraded: the store cannot take writes now (every write is answered 503)."
    )
    schema_: int = Field(alias="schema", description="The store's schema version.")
    reason: str | None = Field(None, description="Why the service is degraded (only then).")


class CampaignUrls(BaseModel):
    """Where a campaign's resources are."""

    spec: str
    reports: str
    estimate: str
    export: str
    days: str
    round: str
    series: str


class CampaignEntry(BaseModel):
    """A campaign: its spec id, question, oracle, number of reports and state."""

    id: str
    question: str | list[str]
    kind: str = Field(description="The mechanism or protocol (or the sampler's root kind).")
    n: int = Field(description="Reports stored.")
    closed: bool
    access: Literal["open", "invited"] = Field(
        description="open: anyone may report; invited: a report needs a respondent code (set at creation)."
    )
    created_at: float = Field(description="Seconds since the epoch.")
    rounds: Literal["once", "daily", "weekly", "manual"] = Field(description="Its rounds (set at creation).")
    round: int = Field(description="The current round (1 for a campaign that does not recur).")
    cap: int | None = Field(
        None,
        ge=1,
        description="The most reports it takes now: the smaller of its own cap and the collector's --campaign-cap "
        "(null: neither is set).",
    )
    own_cap: int | None = Field(
        None, ge=1, description="Its own cap, set at creation (null: none of its own; see --campaign-cap)."
    )
    resends: int = Field(
        0, ge=0, description="Reports sent again with the id of a stored one: acknowledged as duplicates, counted once."
    )
    conflicts: int = Field(
        0,
        ge=0,
        description="Resends of a stored report id with another payload: acknowledged as duplicates (the answer to a "
        "resend never depends on the stored payload) and not stored. Honest clients resend the same bytes, so "
        "any count here is a client bug or someone probing for stored payloads.",
    )
    urls: CampaignUrls


class SubmitAck(BaseModel):
    """A committed batch: how many reports were new and how many were retries of stored ones."""

    accepted: int
    duplicates: int


class DayCount(BaseModel):
    """Reports of one round received on one day (UTC)."""

    day: str = Field(description="YYYY-MM-DD")
    round: int = Field(description="The round they answer (1 for a campaign that does not recur).")
    n: int


class Days(BaseModel):
    """The days of a campaign's stored reports, and the store's id (which names report files)."""

    campaign: str
    store: str
    rounds: Literal["once", "daily", "weekly", "manual"] = Field(
        description="The campaign's rounds: report files of a recurring campaign are partitioned by round."
    )
    days: list[DayCount]


class Closed(BaseModel):
    """A closed campaign."""

    id: str
    closed: bool
    closed_at: float = Field(description="Seconds since the epoch.")


class Token(BaseModel):
    """A new token (shown once: the store keeps only its hash), its public id, grants and expiry."""

    token: str
    id: str = Field(description="The token's public id (GET /v1/tokens, DELETE /v1/tokens/{id}).")
    role: Literal["admin", "analyst"]
    label: str
    campaigns: list[str]
    expires_at: float = Field(description="Seconds since the epoch.")


class TokenInfo(BaseModel):
    """A token as the admin sees it: never the token itself nor its hash."""

    id: str = Field(description="The token's public id: random, unrelated to the token.")
    role: Literal["admin", "analyst"]
    label: str
    campaigns: list[str] = Field(description="The campaigns it is granted (an analyst's).")
    created_at: float = Field(description="Seconds since the epoch.")
    expires_at: float | None = Field(description="Seconds since the epoch.")
    revoked_at: float | None = Field(description="Seconds since the epoch; null while not revoked.")
    state: Literal["active", "expired", "revoked"]


class RevokedToken(BaseModel):
    """A revoked token: from the next request on, it is refused (401) by every worker."""

    id: str
    revoked_at: float = Field(description="Seconds since the epoch.")


class Codes(BaseModel):
    """New respondent codes (shown once: the store keeps only their hashes)."""

    campaign: str
    count: int
    expires_at: float = Field(description="Seconds since the epoch.")
    survey: str = Field(
        description="The survey page's path; a code's link is this, then #code= and the code (in the fragment, "
        "which browsers never send to a server)."
    )
    codes: list[str]


class RevokedCodes(BaseModel):
    """What a revocation did."""

    revoked: int = Field(description="Codes revoked by this request.")
    unknown: int = Field(description="Codes named that are not this campaign's.")


class CodeCounts(BaseModel):
    """A campaign's respondent codes by state."""

    campaign: str
    issued: int
    used: int = Field(description="Codes that have sent their report.")
    revoked: int
    expired: int = Field(description="Unused, not revoked, and past their expiry.")
    usable: int = Field(description="Neither used, revoked nor expired.")


#: The request bodies that the routes read themselves; :mod:`pldp.service.openapi` puts them in the schema.
BODIES: tuple[type[BaseModel], ...] = (
    CampaignSpec,
    ReportsBody,
    TokenRequest,
    RotateRequest,
    CodesRequest,
    RevokeCodesRequest,
)
