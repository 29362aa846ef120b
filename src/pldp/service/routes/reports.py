"""``POST /v1/campaigns/{id}/reports``: a batch of reports (anyone), all or nothing, acknowledged once durable.

This route describes the endpoint in the OpenAPI schema and answers it when the fast path is off;
in a running collector :class:`pldp.service.ingest.FastPath` answers these requests before they
reach it. Both call the same :meth:`pldp.service.ingest.Ingest.accept`, which checks the token,
finds the campaign and validates the body itself, so the two answer alike
(``tests/test_service_api.py`` drives the same bodies through both).
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Security

from pldp.service.deps import ServiceDep, bearer
from pldp.service.errors import responses
from pldp.service.models import ReportsBody, SubmitAck
from pldp.service.openapi import body_of

__all__ = ["router"]

router = APIRouter(prefix="/v1/campaigns", tags=["reports"])

#: The ``round`` query parameter, which the route reads itself (as the fast path does).
ROUND_PARAMETER = {
    "name": "round",
    "in": "query",
    "required": False,
    "description": "The round of a recurring campaign the reports answer (default: the round in which they are "
    "received): the current round, or the one before during the grace after the current one started; another "
    "is a 409 (`round_not_started`, `round_closed`). Retries of stored reports are acknowledged whatever it says.",
    "schema": {"type": "integer", "minimum": 1, "maximum": 999_999_999},
}


@router.post(
    "/{campaign_id}/reports",
    dependencies=[Security(bearer)],
    response_model=SubmitAck,
    responses=responses(400, 401, 403, 404, 409, 413, 415, 429, 503),
    openapi_extra=body_of(ReportsBody) | {"security": [{}], "parameters": [ROUND_PARAMETER]},
)
async def submit(campaign_id: str, request: Request, service: ServiceDep) -> dict[str, int]:
    """Store a batch of reports (``pldp.batch/1``, a list of reports, or one report); all or nothing.

    Returns how many were new (``accepted``) and how many were retries of stored reports
    (``duplicates``). The response is sent after the reports and the tally are committed.

    An open campaign needs no token (an invalid one is refused). An invited campaign takes a batch
    of exactly one report with a respondent code as the bearer token: 401 without one or with a
    code that is not valid (``code_required``, ``unknown_code``, ``code_expired``,
    ``code_revoked``), 403 with an admin or analyst token, 409 ``code_used`` when the code sent
    another report already in the round (the same report again is acknowledged as a duplicate).

    A recurring campaign counts each new report in the round that ``?round=n`` names, if it is
    open, or else in the round in which it is received (``docs/collector.md``, "Recurring campaigns").

    One address may send so many reports a second (429 beyond, with ``Retry-After``), a campaign
    takes so many in all (409 ``campaign_full``), and a page of another origin may not submit (403;
    a body not ``application/json``: 415).
    """
    auth_header, declared = request.headers.get("authorization"), request.headers.get("content-length")
    client = request.client.host if request.client else None
    query = request.scope.get("query_string", b"")  # read as the fast path reads it: the same answers
    return await service.ingest.accept(campaign_id, auth_header, declared, client, request.stream(), query)
