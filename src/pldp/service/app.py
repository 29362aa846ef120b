"""The collector's HTTP API (FastAPI): ``/v1``, its OpenAPI schema at ``/openapi.json``.

=====================================  ==========  ===============================================
endpoint                               who         what
=====================================  ==========  ===============================================
``GET /v1/health``                     anyone      ``{"status": "ok", "schema": version}``;
                                                   ``"degraded"`` with a ``reason`` when the store
                                                   cannot take writes (:mod:`~pldp.service.faults`)
``POST /v1/campaigns``                 admin       a spec; stored if :func:`pldp.deploy.verify`
                                                   holds (201; 200 if it exists already)
``GET /v1/campaigns``                  admin,      the campaigns (an analyst: those granted),
                                       analyst     with ``n`` and whether closed
``GET /v1/campaigns/{id}/spec``        anyone      the spec, ``ETag`` = its id (304 on a match)
``POST /v1/campaigns/{id}/reports``    anyone      a batch of wire reports, all or nothing,
                                                   idempotent by report id, acknowledged after a
                                                   durable commit (an invited campaign: one
                                                   report with a respondent code)
``GET /v1/campaigns/{id}/estimate``    analyst     frequencies, intervals, ``n``, method and
                                                   solver diagnostics (``?method=&level=``)
``GET /v1/campaigns/{id}/export``      analyst     the stored reports as Parquet (the wire format's
                                                   Arrow schema); ``?day=YYYY-MM-DD``: only those
                                                   received that day
``GET /v1/campaigns/{id}/days``        analyst     the days of the stored reports, with how many
                                                   each, and the store's id (which names files)
``POST /v1/campaigns/{id}/close``      admin       no reports accepted afterwards
``POST /v1/campaigns/{id}/codes``      admin       one-time respondent codes of an invited campaign
                                                   (``?access=invited`` at creation); ``GET``
                                                   counts them, ``DELETE`` revokes them
``POST /v1/tokens``                    admin       a new analyst token, its grants and expiry
                                                   (shown once)
``GET /v1/tokens``                     admin       every token's public id, role, label, grants,
                                                   expiry and revocation (never a secret)
``DELETE /v1/tokens/{id}``             admin       revoke an analyst token (from the next request)
``POST /v1/tokens/rotate``             admin       a new admin token; the others are revoked
=====================================  ==========  ===============================================

Every refusal is a JSON object ``{"error": code, "reason": text}`` with a 4xx status: 401 without
a valid token where one is needed (or with an invalid one anywhere but ``/v1/health``), 403 when
the token's role may not do it (or a page of another origin sent it), 404, 409 (closed or full
campaign, a used respondent code), 413 (body or batch too large), 415 (a body that is not JSON),
429 (too many reports from one address), 400 (anything malformed, with the first bad report
named); a write the store cannot take, or a body over the budget of bytes read at once, is a 503
with ``Retry-After`` (:mod:`pldp.service.ratelimit`, :mod:`pldp.service.crossorigin`,
:mod:`pldp.service.bodies`, :mod:`pldp.service.jsonlimits`; slow and surplus connections:
:mod:`pldp.service.connections`). FastAPI's interactive documentation pages load scripts from a
CDN and are therefore off; the schema itself is served, and :mod:`pldp.service.pages` serves its
own API page at ``/docs``, beside the web pages (``/c/{id}``, ``/dashboard/{id}``,
``/static/...``) and a not-found page for browsers. With a
:class:`~pldp.service.rollover.Rollover`, the process also runs the report rollover
(:class:`~pldp.service.rollover.Exporter`; one process of a store exports).

:func:`create_app` only wires the pieces together: the shared state
(:class:`~pldp.service.state.Service`, in ``app.state.service``), the routers of
:mod:`pldp.service.routes` with their dependencies (:mod:`pldp.service.deps`) and models
(:mod:`pldp.service.models`), the error answers (:mod:`pldp.service.errors`), the fast path of
report submission (:mod:`pldp.service.ingest`), the pages, and the schema
(:mod:`pldp.service.openapi`).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from fastapi import FastAPI

import pldp
from pldp.service import errors, openapi, pages
from pldp.service.crossorigin import CrossOrigin
from pldp.service.ingest import FastPath
from pldp.service.rollover import Exporter, Rollover
from pldp.service.routes import ROUTERS
from pldp.service.state import Limits, Service

__all__ = ["Limits", "create_app"]


def _lifespan(
    service: Service, exporter: Exporter | None
) -> Callable[[FastAPI], contextlib.AbstractAsyncContextManager[None]]:
    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # What is loaded by now (numpy, scipy, pyarrow, FastAPI, the app) lives as long as the
        # process; frozen, it is no longer traversed by every full collection, which took 55-75 ms
        # here and stalled the event loop (measured with gc.callbacks under 800 requests/s).
        gc.collect()
        gc.freeze()
        errors.quiet_tracebacks()  # here: the server has configured its logging by now
        if exporter is not None:
            exporter.start()
        yield
        if exporter is not None:
            exporter.close()
        service.writer.close()

    return lifespan


def create_app(db: str | Path, limits: Limits | None = None, rollover: Rollover | None = None) -> FastAPI:
    """The collector application on the store ``db`` (created and migrated if needed).

    Parameters
    ----------
    db : str or Path
        The SQLite file.
    limits : Limits, optional
        Request and client bounds (defaults: 8 MiB bodies, 10,000 reports per request, 100 reports
        a second and 10,000 at once per client address, no campaign cap, 64 MiB of bodies parsed at
        once, only the collector's own origin).
    rollover : Rollover, optional
        Export report files (and apply retention) in the background while the app runs.
    """
    service = Service(Path(db), limits or Limits())
    exporter = None if rollover is None else Exporter(service.path, rollover)
    app = FastAPI(
        title="pldp collector",
        version=pldp.__version__,
        description="Collects randomized reports of personalized-LDP campaigns and serves estimates.",
        docs_url=None,  # FastAPI's documentation pages load scripts from a CDN: pages.py serves /docs
        redoc_url=None,
        lifespan=_lifespan(service, exporter),
        separate_input_output_schemas=False,  # one schema per model, whichever way it travels
    )
    app.state.service = service
    app.state.writer = service.writer
    errors.install(app)
    for router in ROUTERS:
        app.include_router(router)
    app.add_middleware(FastPath, ingest=service.ingest)
    app.add_middleware(  # outside FastPath: both paths obey it
        CrossOrigin, allow=service.limits.allow_origins, hosts=service.limits.allow_hosts
    )
    pages.add_pages(app, lambda campaign_id: service.campaign(campaign_id).row.closed, service.access)
    openapi.document(app)
    return app
