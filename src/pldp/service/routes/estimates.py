"""``GET /v1/campaigns/{id}/estimate``: frequencies with intervals (an analyst granted the campaign)."""

from __future__ import annotations

from typing import Annotated, Any, NamedTuple

from fastapi import APIRouter, Depends, Query, Response, Security
from pydantic import TypeAdapter

from pldp.deploy.estimates import campaign_estimate, check_method
from pldp.errors import PLDPError
from pldp.service.collect import CollectError
from pldp.service.deps import ServiceDep, bearer, readable, require
from pldp.service.errors import responses
from pldp.service.models import Estimate
from pldp.service.routes.rounds import LEVEL, round_tally
from pldp.service.state import Campaign

__all__ = ["router"]

router = APIRouter(prefix="/v1/campaigns", tags=["estimates"])
#: How FastAPI serializes an answer of no declared type.
_JSON: TypeAdapter[Any] = TypeAdapter(Any)
#: The ``round`` query parameter: one round of a recurring campaign (:mod:`pldp.service.routes.rounds`).
ROUND = Query(
    alias="round", ge=1, le=999_999_999, description="Only the reports of this round (1, 2, ...); default: all."
)


class EstimateRequest(NamedTuple):
    """A readable campaign and what is asked of it."""

    campaign: Campaign
    method: str
    level: float
    round: int | None = None  # a round of the campaign (pldp.service.rounds); None: every report


def estimate_request(
    campaign_id: str,
    service: ServiceDep,
    authorization: Annotated[str | None, Security(bearer)],
    method: Annotated[
        str,
        Query(
            description="Any method the campaign's oracle offers (the answer's `methods`): unbiased, norm_sub, mle "
            "for every one; robust, detect, recover, ... where offered. Another one is refused (400) with a "
            "reason that names those offered."
        ),
    ] = "unbiased",
    level: Annotated[float, LEVEL] = 0.95,
    turn: Annotated[int | None, ROUND] = None,
) -> EstimateRequest:
    """The campaign, for an analyst granted it, and the query.

    The query is read first, and a malformed one is refused (400) whoever asks: this dependency runs
    only once its parameters are valid, and checks the token then (:func:`pldp.service.deps.require`).
    """
    principal = require(service.principal(authorization), "analyst")
    return EstimateRequest(readable(service, principal, campaign_id), method, level, turn)


@router.get("/{campaign_id}/estimate", response_model=Estimate, responses=responses(400, 401, 403, 409))
def get_estimate(service: ServiceDep, asked: Annotated[EstimateRequest, Depends(estimate_request)]) -> Response:
    """Estimated frequencies with ``level`` confidence intervals, ``n``, the method and its diagnostics,
    the methods offered, the detection screen of the reports (the share flagged as unlikely to come
    from honest devices) and any fallback the estimator took.

    The answer is serialized as FastAPI serializes an untyped one (Pydantic's JSON encoder) but not
    validated against :class:`~pldp.service.models.Estimate`, which documents it: at d = 10,000 the
    validation of its lists costs a fifth of the request (``benchmarks/service_rows.py``).
    """
    spec, level = asked.campaign.spec, asked.level
    if not 0.0 < level < 1.0:
        raise CollectError(400, "bad_level", f"level must lie in (0, 1), got {level}")
    try:
        check_method(spec.mechanism(), asked.method)
    except PLDPError as exc:
        raise CollectError(400, "bad_method", str(exc)) from None
    tally = round_tally(service.conn(), spec, asked.round)  # 409 without reports (in the round)
    try:
        answer = campaign_estimate(spec, tally, asked.method, level)
    except PLDPError as exc:  # the estimator refuses these reports
        raise CollectError(400, "estimate_failed", str(exc)) from None
    if asked.round is not None:
        answer["round"] = asked.round
    return Response(_JSON.dump_json(answer), media_type="application/json")
