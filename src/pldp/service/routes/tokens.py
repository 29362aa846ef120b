"""``POST /v1/tokens``: a new analyst token and its grants (admin; shown once)."""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError

from pldp.service import auth, collect
from pldp.service.collect import CollectError
from pldp.service.deps import Admin, ServiceDep
from pldp.service.errors import responses
from pldp.service.ingest import read_body
from pldp.service.models import Token, TokenRequest
from pldp.service.openapi import body_of

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
    """A new analyst token granted ``campaigns`` (body ``{"label": ..., "campaigns": [...]}``); shown once."""
    raw = await read_body(request.headers.get("content-length"), request.stream(), MAX_BODY)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CollectError(400, "malformed_json", f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict) or set(data) - {"label", "campaigns"}:
        raise CollectError(400, "bad_request", 'the body must be {"label": str, "campaigns": [campaign ids]}')
    try:
        asked = TokenRequest.model_validate(data)
    except ValidationError:
        raise CollectError(400, "bad_request", "label must be a string and campaigns a list of campaign ids") from None
    token, label, campaigns = auth.new_token(), asked.label, asked.campaigns
    await service.write(lambda ctx: collect.add_token(ctx, token, "analyst", label, campaigns, time.time()))
    return {"token": token, "role": "analyst", "label": label, "campaigns": campaigns}
