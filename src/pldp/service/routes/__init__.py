"""The collector's ``/v1`` routes, one router per resource.

* :mod:`~pldp.service.routes.health`: ``GET /v1/health``;
* :mod:`~pldp.service.routes.campaigns`: create, list, a campaign's spec, close;
* :mod:`~pldp.service.routes.reports`: submit reports (the documented route of the fast path);
* :mod:`~pldp.service.routes.estimates`: a campaign's estimate (of every report, or of one round);
* :mod:`~pldp.service.routes.rounds`: a recurring campaign's current round, the opening of the next
  (manual rounds), and its estimates round by round;
* :mod:`~pldp.service.routes.exports`: its stored reports as Parquet, and their days;
* :mod:`~pldp.service.routes.codes`: the respondent codes of invited campaigns;
* :mod:`~pldp.service.routes.tokens`: tokens made, listed, revoked, and the admin's rotated.

:mod:`~pldp.service.routes.body` reads a JSON body against its model.

Who may call each is declared by its dependencies (:mod:`pldp.service.deps`); every answer and
request body has its model (:mod:`pldp.service.models`).
"""

from __future__ import annotations

from fastapi import APIRouter

from pldp.service.routes import campaigns, codes, estimates, exports, health, reports, rounds, tokens

__all__ = ["ROUTERS"]

#: The routers in the order of the API's documentation.
ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    campaigns.router,
    codes.router,
    reports.router,
    estimates.router,
    rounds.router,
    exports.router,
    tokens.router,
)
