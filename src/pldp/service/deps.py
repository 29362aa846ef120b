"""The dependencies of the collector's routes: the shared state, who is asking, which campaign.

Roles (:mod:`pldp.service.auth`), each a dependency that yields the
:class:`~pldp.service.auth.Principal` or refuses the request:

* :data:`Anyone`: anonymous, or any valid token (an invalid token is a 401 everywhere but
  ``/v1/health``);
* :data:`Staff`: an admin or an analyst (listing campaigns);
* :data:`Analyst` and :data:`Admin`: that role only (401 without a token, 403 with another role's).

Campaigns: :data:`CampaignOf` is the campaign named in the path (404 if unknown);
:data:`Readable` the same for an analyst that is granted it (403 if not). The token travels as
``Authorization: Bearer ...``; :data:`bearer` declares it in the OpenAPI schema.

The role checks run on the event loop (a token is one lookup by its hash, as on the fast path of
report submission); the campaign lookups run in the thread pool, since the first one of a
campaign parses and verifies its spec.

The module's annotations are evaluated when it loads (no ``from __future__ import annotations``):
FastAPI 0.110, the oldest pldp supports, resolves a dependency's string annotations with the
callable's ``__globals__``, which the bearer scheme (an instance with ``__call__``) does not have.
"""

from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import HTTPBearer

from pldp.service.auth import Principal
from pldp.service.collect import CollectError
from pldp.service.state import Campaign, Service

__all__ = [
    "Admin",
    "Analyst",
    "Anyone",
    "CampaignOf",
    "Readable",
    "ServiceDep",
    "Staff",
    "bearer",
    "readable",
    "require",
]


class _Bearer(HTTPBearer):
    """The bearer token in the OpenAPI schema; as a dependency, the raw ``Authorization`` header
    (checked by :meth:`~pldp.service.state.Service.principal`, which refuses what is not a
    valid bearer token, where FastAPI's would take it for no token)."""

    async def __call__(self, request: Request) -> str | None:  # type: ignore[override]
        return request.headers.get("authorization")


#: The security scheme of the routes that take a token.
bearer = _Bearer(
    scheme_name="BearerToken",
    description="An admin or analyst token (`pldp serve` prints the admin's; `POST /v1/tokens` makes analysts'), "
    "or on report submission to an invited campaign a respondent code (`POST /v1/campaigns/{id}/codes`).",
    auto_error=False,
)


async def service(request: Request) -> Service:
    """The application's :class:`~pldp.service.state.Service`."""
    state: Service = request.app.state.service
    return state


ServiceDep = Annotated[Service, Depends(service)]


async def anyone(service: ServiceDep, authorization: Annotated[str | None, Security(bearer)]) -> Principal:
    """Whoever sent the request: anonymous without a token; a 401 for an invalid token."""
    return service.principal(authorization)


Anyone = Annotated[Principal, Depends(anyone)]


def require(principal: Principal, role: str) -> Principal:
    """``principal`` if it has ``role``; else a 401 (anonymous) or a 403 (another role)."""
    if principal.role == "respondent":
        raise CollectError(401, "unauthorized", f"this needs an {role} token (Authorization: Bearer ...)")
    if principal.role != role:
        raise CollectError(403, "forbidden", f"an {principal.role} token may not do this; it needs an {role} token")
    return principal


async def staff(principal: Anyone) -> Principal:
    """An admin or an analyst."""
    if principal.role == "respondent":
        raise CollectError(401, "unauthorized", "listing campaigns needs an admin or analyst token")
    return principal


async def analyst(principal: Anyone) -> Principal:
    """An analyst."""
    return require(principal, "analyst")


async def admin(principal: Anyone) -> Principal:
    """The admin."""
    return require(principal, "admin")


Staff = Annotated[Principal, Depends(staff)]
Analyst = Annotated[Principal, Depends(analyst)]
Admin = Annotated[Principal, Depends(admin)]


def campaign_of(campaign_id: str, service: ServiceDep) -> Campaign:
    """The campaign of the path; a 404 for an unknown one."""
    return service.campaign(campaign_id)


def readable(service: Service, principal: Principal, campaign_id: str) -> Campaign:
    """The campaign ``campaign_id`` if ``principal`` (an analyst) is granted it: else a 403, then a 404."""
    if not principal.may_read(campaign_id):
        raise CollectError(403, "forbidden", f"this analyst token is not granted campaign {campaign_id}")
    return service.campaign(campaign_id)


def readable_campaign(campaign_id: str, service: ServiceDep, principal: Analyst) -> Campaign:
    """The campaign of the path, for an analyst granted it."""
    return readable(service, principal, campaign_id)


CampaignOf = Annotated[Campaign, Depends(campaign_of)]
Readable = Annotated[Campaign, Depends(readable_campaign)]
