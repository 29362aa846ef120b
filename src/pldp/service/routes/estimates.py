"""``GET /v1/campaigns/{id}/estimate``: frequencies with intervals (an analyst granted the campaign)."""

from __future__ import annotations

from typing import Annotated, Any, NamedTuple

from fastapi import APIRouter, Depends, Query, Response, Security
from pydantic import TypeAdapter

from pldp.deploy.estimates import campaign_estimate, check_method, discovery_json
from pldp.errors import EstimationError, PLDPError, ReportError
from pldp.service import rounds, store
from pldp.service.collect import CollectError
from pldp.service.deps import ServiceDep, bearer, readable, require
from pldp.service.errors import responses
from pldp.service.models import Estimate
from pldp.service.routes.rounds import LEVEL, round_tally
from pldp.service.state import Campaign

__all__ = ["router"]

router = APIRouter(prefix="/v1/campaigns", tags=["estimates"])
#: The most answers a free-text campaign's estimate may ask to discover.
MAX_TOP = 50
#: The ``Cache-Status`` of a free-text campaign's estimate (RFC 9211): kept from an earlier discovery of
#: every report stored, kept from an older one while another discovery runs, or discovered now.
CACHE = {"hit": "pldp; hit", "stale": "pldp; hit; detail=stale", "miss": "pldp; fwd=miss; stored"}
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
    top: int = 20  # a free-text campaign's answers to discover


def estimate_request(
    campaign_id: str,
    service: ServiceDep,
    authorization: Annotated[str | None, Security(bearer)],
    method: Annotated[
        str | None,
        Query(
            description="Any method the campaign's oracle offers (the answer's `methods`): unbiased, norm_sub, mle "
            "for every one; robust, detect, recover, ... where offered; discover for a free-text campaign. Another "
            "one is refused (400) with a reason that names those offered. Default: unbiased (discover for a "
            "free-text campaign)."
        ),
    ] = None,
    level: Annotated[float, LEVEL] = 0.95,
    turn: Annotated[int | None, ROUND] = None,
    top: Annotated[
        int,
        Query(
            ge=1,
            le=MAX_TOP,
            description="A free-text campaign: the answers to discover (checked for any campaign, used by those).",
        ),
    ] = 20,
) -> EstimateRequest:
    """The campaign, for an analyst granted it, and the query.

    The query is read first, and a malformed one is refused (400) whoever asks: this dependency runs
    only once its parameters are valid, and checks the token then (:func:`pldp.service.deps.require`).
    """
    principal = require(service.principal(authorization), "analyst")
    campaign = readable(service, principal, campaign_id)
    free_text = campaign.spec.free_text
    asked = method if method is not None else "discover" if free_text else "unbiased"
    return EstimateRequest(campaign, asked, level, turn, top)


#: The 200 answer's header of a free-text campaign (:data:`CACHE`).
_CACHE_HEADER = {
    "Cache-Status": {
        "description": "A free-text campaign's answer (RFC 9211): `pldp; hit` (its last discovery, every stored "
        "report seen), `pldp; hit; detail=stale` (an older one, while another discovery runs) or "
        "`pldp; fwd=miss; stored` (discovered now).",
        "schema": {"type": "string", "enum": list(CACHE.values())},
    }
}


@router.get(
    "/{campaign_id}/estimate",
    response_model=Estimate,
    responses=responses(400, 401, 403, 409, others={200: {"headers": _CACHE_HEADER}}),
)
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
    if spec.free_text:
        return _discovery(service, spec, asked)
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


def _discovery(service: Any, spec: Any, asked: EstimateRequest) -> Response:
    """A free-text campaign's estimate: the answers its protocol discovers from the stored reports (of
    the round asked), one discovery at a time and the last one reused (:mod:`pldp.service.discoveries`),
    its intervals made at the level asked (:func:`pldp.deploy.estimates.discovery_json`)."""
    if asked.method != "discover":
        raise CollectError(
            400, "bad_method", f"a free-text campaign offers the method 'discover', not {asked.method!r}"
        )
    n = int(round_tally(service.conn(), spec, asked.round).n)  # 409 without reports (in the round)

    def discover() -> tuple[int, Any]:
        conn = service.conn()
        schedule = rounds.schedule_of(conn, spec.id)
        recurs = schedule is not None and schedule.recurs  # a campaign that does not recur has one round: all
        batch = store.stored_batch(conn, spec, turn=asked.round if recurs else None)
        protocol = spec.heavy_hitter()
        reports = protocol.reports_from_columns(batch.columns, spec.oracle_params["level"])
        try:
            return reports.shape[0], protocol.discover(reports, top=asked.top)
        except (ReportError, EstimationError) as exc:  # too few reports yet: a group without any, nothing found
            raise CollectError(
                409, "too_few_reports", f"campaign {spec.id} has too few reports to discover from: {exc}"
            ) from None

    found, how = service.discoveries.get((spec.id, asked.round, asked.top), n, discover)
    answer = discovery_json(spec, found, asked.level, asked.top)
    if asked.round is not None:
        answer["round"] = asked.round
    return Response(_JSON.dump_json(answer), media_type="application/json", headers={"Cache-Status": CACHE[how]})
