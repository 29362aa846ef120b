"""``/v1/campaigns/{id}/codes`` (admin): the respondent codes of an invited campaign, issued in bulk,
counted and revoked (:mod:`pldp.service.codes` holds the rules)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from pldp.service import codes
from pldp.service.collect import CollectError
from pldp.service.deps import Admin, ServiceDep
from pldp.service.errors import responses
from pldp.service.models import CodeCounts, Codes, CodesRequest, RevokeCodesRequest, RevokedCodes
from pldp.service.openapi import body_of
from pldp.service.routes.body import read_model

__all__ = ["router"]

router = APIRouter(prefix="/v1/campaigns", tags=["campaigns"])

#: The largest body of a request to issue codes (bytes).
MAX_BODY = 2**12
#: The largest body of a revocation: :data:`~pldp.service.codes.MAX_CODES` codes as a JSON list.
MAX_REVOKE_BODY = 32 * codes.MAX_CODES + 2**12


@router.post(
    "/{campaign_id}/codes",
    status_code=201,
    response_model=Codes,
    responses=responses(400, 401, 403, 404, 409, 413, 503),
    openapi_extra=body_of(CodesRequest),
)
async def issue_codes(campaign_id: str, request: Request, service: ServiceDep, _: Admin) -> dict[str, Any]:
    """Issue ``count`` one-time respondent codes (at most 100,000 per request) for an invited
    campaign that is not closed, each good for one report until ``expires_in`` seconds from now
    (default 30 days); shown once.

    A respondent sends a code as ``Authorization: Bearer <code>`` with a batch of one report. Its
    link is ``survey#code=<code>``: the fragment never reaches the server, nor its logs.
    """
    asked = await read_model(request, CodesRequest, MAX_BODY, 'an object {"count": n, "expires_in": seconds}')
    made, hashes = await run_in_threadpool(codes.new_codes, asked.count)
    now = time.time()
    expires_at = now + asked.expires_in
    await service.write(lambda ctx: codes.add_codes(ctx, campaign_id, hashes, now, expires_at))
    return {
        "campaign": campaign_id,
        "count": len(made),
        "expires_at": expires_at,
        "survey": f"/c/{campaign_id}",
        "codes": made,
    }


@router.get("/{campaign_id}/codes", response_model=CodeCounts, responses=responses(401, 403, 404))
def count_codes(campaign_id: str, service: ServiceDep, _: Admin) -> dict[str, Any]:
    """How many of the campaign's codes are issued, used, revoked, expired and still usable."""
    return codes.code_counts(service.conn(), campaign_id, time.time())


@router.delete(
    "/{campaign_id}/codes",
    response_model=RevokedCodes,
    responses=responses(400, 401, 403, 404, 413, 503),
    openapi_extra=body_of(RevokeCodesRequest),
)
async def revoke_codes(campaign_id: str, request: Request, service: ServiceDep, _: Admin) -> dict[str, int]:
    """Revoke the ``codes`` listed, or with ``{"unused": true}`` every code not used yet; a revoked
    code sends no report (401), but a report it sent stays stored and counted."""
    asked = await read_model(
        request, RevokeCodesRequest, MAX_REVOKE_BODY, 'an object {"codes": [codes]} or {"unused": true}'
    )
    if asked.unused == bool(asked.codes):
        raise CollectError(400, "bad_request", 'name the codes to revoke, or send {"unused": true}: one of them')
    hashes = None if asked.unused else await run_in_threadpool(codes.hash_codes, asked.codes)
    now = time.time()
    return await service.write(lambda ctx: codes.revoke_codes(ctx, campaign_id, hashes, now))
