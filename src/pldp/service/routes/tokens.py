"""``/v1/tokens`` (admin): analyst tokens made, listed and revoked, and the admin token rotated.

A token is shown once, when made; listing shows each token's public id, label, role, grants,
creation, expiry and revocation, never the token or its hash. A revocation holds from the next
request on, in every worker process (tokens are looked up in the store at every request).
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request

from pldp.service import auth, collect
from pldp.service.deps import Admin, ServiceDep
from pldp.service.errors import responses
from pldp.service.models import RevokedToken, RotateRequest, Token, TokenInfo, TokenRequest
from pldp.service.openapi import body_of
from pldp.service.routes.body import read_model

__all__ = ["router"]

router = APIRouter(prefix="/v1/tokens", tags=["service"])

#: The largest body of a token request (bytes).
MAX_BODY = 2**16


@router.post(
    "",
    status_code=201,
    response_model=Token,
    responses=responses(400, 401, 403, 404, 413, 503),
    openapi_extra=body_of(TokenRequest),
)
async def create_token(request: Request, service: ServiceDep, _: Admin) -> dict[str, Any]:
    """A new analyst token granted ``campaigns``, living ``expires_in`` seconds (default 90 days);
    shown once."""
    asked = await read_model(
        request, TokenRequest, MAX_BODY, 'an object {"label": str, "campaigns": [campaign ids], "expires_in": seconds}'
    )
    token, label, campaigns, now = auth.new_token(), asked.label, asked.campaigns, time.time()
    expires_at = now + asked.expires_in
    token_id = await service.write(
        lambda ctx: collect.add_token(ctx, token, "analyst", label, campaigns, now, expires_at)
    )
    return {
        "token": token,
        "id": token_id,
        "role": "analyst",
        "label": label,
        "campaigns": campaigns,
        "expires_at": expires_at,
    }


@router.get("", response_model=list[TokenInfo], responses=responses(401, 403))
def list_tokens(service: ServiceDep, _: Admin) -> list[dict[str, Any]]:
    """Every token, oldest first: its public id, role, label, grants, creation, expiry, revocation
    and state (never the token or its hash)."""
    now = time.time()
    return [{**row.__dict__, "state": row.state(now)} for row in auth.tokens(service.conn())]


@router.delete("/{token_id}", response_model=RevokedToken, responses=responses(401, 403, 404, 409, 503))
async def revoke_token(token_id: str, service: ServiceDep, _: Admin) -> dict[str, Any]:
    """Revoke an analyst token (idempotent): from the next request on it is a 401 everywhere.

    An admin token is rotated, not revoked (409): ``POST /v1/tokens/rotate``.
    """
    now = time.time()
    revoked_at = await service.write(lambda ctx: collect.revoke_token(ctx, token_id, now))
    return {"id": token_id, "revoked_at": revoked_at}


@router.post(
    "/rotate",
    status_code=201,
    response_model=Token,
    responses=responses(400, 401, 403, 413, 503),
    openapi_extra=body_of(RotateRequest),
)
async def rotate_admin(request: Request, service: ServiceDep, _: Admin) -> dict[str, Any]:
    """A new admin token (shown once); every other admin token, the one that asked included, is
    revoked in the same transaction. Put the new token where ``pldp serve --admin-token-file``
    reads it, or a restart with the old file is refused."""
    asked = await read_model(request, RotateRequest, MAX_BODY, 'an object {"label": str, "expires_in": seconds}')
    token, now = auth.new_token(), time.time()
    expires_at = now + asked.expires_in
    token_id = await service.write(lambda ctx: collect.add_token(ctx, token, "admin", asked.label, [], now, expires_at))
    return {
        "token": token,
        "id": token_id,
        "role": "admin",
        "label": asked.label,
        "campaigns": [],
        "expires_at": expires_at,
    }
