"""``/v1/campaigns``: create (admin), list (admin, analyst), a campaign's spec (anyone), close (admin)."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pldp.deploy import Spec
from pldp.errors import SpecError
from pldp.service import codes, collect, jsonlimits, store
from pldp.service.bodies import reading
from pldp.service.collect import CollectError
from pldp.service.deps import Admin, CampaignOf, ServiceDep, Staff, anyone
from pldp.service.errors import responses
from pldp.service.models import CampaignEntry, CampaignSpec, Closed
from pldp.service.openapi import body_of
from pldp.service.state import Service

__all__ = ["router"]

router = APIRouter(prefix="/v1/campaigns", tags=["campaigns"])


def entry(service: Service, row: store.CampaignRow, spec: Spec) -> dict[str, Any]:
    """A campaign as the API shows it (:class:`~pldp.service.models.CampaignEntry`): ``cap`` is the
    cap that applies (the smaller of its own and the collector's ``--campaign-cap``), ``own_cap``
    the one set at its creation."""
    caps = [c for c in (row.cap, service.limits.campaign_cap) if c is not None]
    return {
        "id": row.id,
        "question": spec.question,
        "kind": spec.oracle_params.get("mechanism") or spec.oracle_params.get("protocol") or spec.root.kind,
        "n": store.report_count(service.conn(), row.id),
        "closed": row.closed,
        "access": row.access,
        "created_at": row.created_at,
        "rounds": row.rounds,
        "cap": min(caps) if caps else None,
        "own_cap": row.cap,
        "resends": row.resends,
        "conflicts": row.conflicts,
        "round": codes.current_round(service.conn(), row.id),
        "urls": {
            "spec": f"/v1/campaigns/{row.id}/spec",
            "reports": f"/v1/campaigns/{row.id}/reports",
            "estimate": f"/v1/campaigns/{row.id}/estimate",
            "export": f"/v1/campaigns/{row.id}/export",
            "days": f"/v1/campaigns/{row.id}/days",
            "round": f"/v1/campaigns/{row.id}/round",
            "series": f"/v1/campaigns/{row.id}/series",
        },
    }


#: The ``rounds`` query parameter of ``POST /v1/campaigns``.
ROUNDS = Query(
    description="Whether and how the campaign recurs: `once` (the default: one round), `daily` or `weekly` (round n "
    "is the n-th UTC day or week from the day of creation), or `manual` (the admin opens each next round, "
    "`POST /v1/campaigns/{id}/rounds`). The collector's setting, not the spec's: set once, when the campaign is "
    "created. Every report is counted in a round, and estimates come per round (`GET .../series`).",
)

#: The ``cap`` query parameter of ``POST /v1/campaigns``.
CAP = Query(
    ge=1,
    description="The most reports the campaign takes (a batch that would take it over is refused with 409 "
    "`campaign_full`; its retries are still acknowledged). The collector's `--campaign-cap`, if set, applies too: "
    "the smaller wins. Default: no cap of the campaign's own. Set once, when the campaign is created.",
)

#: The ``access`` query parameter of ``POST /v1/campaigns``.
ACCESS = Query(
    description="Who may report: `open` (anyone; the default) or `invited` (only with a respondent code, "
    "`POST /v1/campaigns/{id}/codes`, sent as `Authorization: Bearer <code>`). The collector's setting, "
    "not the spec's: set once, when the campaign is created.",
)


@router.post(
    "",
    status_code=201,
    response_model=CampaignEntry,
    responses=responses(
        400,
        401,
        403,
        409,
        413,
        415,
        503,
        others={
            200: {
                "model": CampaignEntry,
                "description": "The campaign existed already (with this access, rounds and cap).",
            }
        },
    ),
    openapi_extra=body_of(CampaignSpec),
)
async def create_campaign(
    request: Request,
    response: Response,
    service: ServiceDep,
    _: Admin,
    access: Annotated[Literal["open", "invited"], ACCESS] = "open",
    rounds: Annotated[Literal["once", "daily", "weekly", "manual"], ROUNDS] = "once",
    cap: Annotated[int | None, CAP] = None,
) -> dict[str, Any]:
    """Create a campaign from a spec (``pldp.spec/1``); refused unless every privacy claim holds exactly.

    ``?access=invited`` makes it take reports only with respondent codes, and ``?rounds=daily``
    (``weekly``, ``manual``) makes it recur, ``?cap=N`` caps its reports at N; asking for an
    existing campaign with another access, rounds or cap is a 409.
    """
    declared = request.headers.get("content-length")
    async with reading(declared, request.stream(), service.limits.max_spec, service.budget) as raw:
        try:
            jsonlimits.check(raw)
        except jsonlimits.JSONLimitError as exc:
            raise CollectError(400, exc.code, exc.reason) from None
        try:
            spec = await run_in_threadpool(Spec.from_json, raw.decode("utf-8"))
        except (SpecError, UnicodeDecodeError, ValueError) as exc:
            raise CollectError(400, "bad_spec", str(exc)) from None
    created = await service.write(lambda ctx: collect.create_campaign(ctx, spec, time.time(), access, rounds, cap))
    service.remember(spec)
    row = store.campaign(service.conn(), spec.id)
    assert row is not None
    if not created:
        response.status_code = 200
    return entry(service, row, spec)


@router.get("", response_model=list[CampaignEntry], responses=responses(401))
def list_campaigns(service: ServiceDep, principal: Staff) -> list[dict[str, Any]]:
    """The campaigns an admin manages, or an analyst may read."""
    ids = None if principal.role == "admin" else sorted(principal.campaigns)
    return [entry(service, row, service.campaign(row.id).spec) for row in store.campaigns(service.conn(), ids)]


@router.get(
    "/{campaign_id}/spec",
    dependencies=[Depends(anyone)],
    response_model=CampaignSpec,
    responses=responses(401, 404, others={304: {"description": "Not modified: `If-None-Match` names this ETag."}}),
    openapi_extra={"security": [{}]},
)
async def get_spec(request: Request, campaign: CampaignOf) -> Response:
    """The campaign's spec; its id is the ``ETag``."""
    etag = f'"{campaign.spec.id}"'
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers={"ETag": etag})
    return Response(campaign.row.spec_text, media_type="application/json", headers={"ETag": etag})


@router.post("/{campaign_id}/close", response_model=Closed, responses=responses(401, 403, 404, 503))
async def close(campaign_id: str, service: ServiceDep, _: Admin) -> dict[str, Any]:
    """Close the campaign: every later batch of reports is refused (409)."""
    closed_at = await service.write(lambda ctx: collect.close_campaign(ctx, campaign_id, time.time()))
    return {"id": campaign_id, "closed": True, "closed_at": closed_at}
