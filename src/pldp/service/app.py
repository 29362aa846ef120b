"""The collector's HTTP API (FastAPI): ``/v1``, its OpenAPI schema at ``/openapi.json``.

=====================================  ==========  ===============================================
endpoint                               who         what
=====================================  ==========  ===============================================
``GET /v1/health``                     anyone      ``{"status": "ok", "schema": version}``
``POST /v1/campaigns``                 admin       a spec; stored if :func:`pldp.deploy.verify`
                                                   holds (201; 200 if it exists already)
``GET /v1/campaigns``                  admin,      the campaigns (an analyst: those granted),
                                       analyst     with ``n`` and whether closed
``GET /v1/campaigns/{id}/spec``        anyone      the spec, ``ETag`` = its id (304 on a match)
``POST /v1/campaigns/{id}/reports``    anyone      a batch of wire reports, all or nothing,
                                                   idempotent by report id, acknowledged after a
                                                   durable commit
``GET /v1/campaigns/{id}/estimate``    analyst     frequencies, intervals, ``n``, method and
                                                   solver diagnostics (``?method=&level=``)
``GET /v1/campaigns/{id}/export``      analyst     the stored reports as Parquet (the wire format's
                                                   Arrow schema); ``?day=YYYY-MM-DD``: only those
                                                   received that day
``GET /v1/campaigns/{id}/days``        analyst     the days of the stored reports, with how many
                                                   each, and the store's id (which names files)
``POST /v1/campaigns/{id}/close``      admin       no reports accepted afterwards
``POST /v1/tokens``                    admin       a new analyst token and its grants (shown once)
=====================================  ==========  ===============================================

Every refusal is a JSON object ``{"error": code, "reason": text}`` with a 4xx status: 401 without
a valid token where one is needed (or with an invalid one anywhere but ``/v1/health``), 403 when the token's role
may not do it, 404, 409 (closed campaign, conflicting report id), 413 (body or batch too large),
400 (anything malformed, with the first bad report named). The interactive documentation pages
of FastAPI load scripts from a CDN and are therefore off; the schema itself is served. The web
pages (``/c/{id}``, ``/dashboard/{id}``, ``/static/...``) are in :mod:`pldp.service.pages`. With a
:class:`~pldp.service.rollover.Rollover`, the process also runs the report rollover
(:class:`~pldp.service.rollover.Exporter`; one process of a store exports).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import json
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

import pldp
from pldp.deploy import Spec
from pldp.deploy.estimates import campaign_estimate
from pldp.deploy.files import day_label, parse_day
from pldp.errors import PLDPError, SpecError
from pldp.service import auth, collect, pages, store
from pldp.service.collect import CollectError
from pldp.service.ingest import FastPath, Ingest, read_body
from pldp.service.rollover import Exporter, Rollover
from pldp.service.writer import StoreUnavailableError, Writer

__all__ = ["Limits", "create_app"]


#: The OpenAPI description of an endpoint whose body is one JSON object, read by hand.
_JSON_BODY: dict[str, Any] = {
    "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object"}}}}
}


@dataclass(frozen=True)
class Limits:
    """Request bounds: the largest body (bytes) and the most reports in one request."""

    max_body: int = 8 * 2**20
    max_reports: int = 10_000
    max_spec: int = 2**20


def create_app(db: str | Path, limits: Limits | None = None, rollover: Rollover | None = None) -> FastAPI:
    """The collector application on the store ``db`` (created and migrated if needed).

    Parameters
    ----------
    db : str or Path
        The SQLite file.
    limits : Limits, optional
        Request bounds (defaults: 8 MiB bodies, 10,000 reports per request).
    rollover : Rollover, optional
        Export report files (and apply retention) in the background while the app runs.
    """
    path = Path(db)
    limits = limits or Limits()
    writer = Writer(path)
    exporter = None if rollover is None else Exporter(path, rollover)
    readers_local = threading.local()
    specs: dict[str, Spec] = {}

    def conn() -> Any:
        c = getattr(readers_local, "conn", None)
        if c is None:
            c = readers_local.conn = store.connect(path)
        return c

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # What is loaded by now (numpy, scipy, pyarrow, FastAPI, the app) lives as long as the
        # process; frozen, it is no longer traversed by every full collection, which took 55-75 ms
        # here and stalled the event loop (measured with gc.callbacks under 800 requests/s).
        gc.collect()
        gc.freeze()
        if exporter is not None:
            exporter.start()
        yield
        if exporter is not None:
            exporter.close()
        writer.close()

    app = FastAPI(
        title="pldp collector",
        version=pldp.__version__,
        description="Collects randomized reports of personalized-LDP campaigns and serves estimates.",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.writer = writer

    # ------------------------------------------------------------------ errors
    def error(status: int, code: str, reason: str, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse({"error": code, "reason": reason}, status_code=status, headers=headers)

    @app.exception_handler(CollectError)
    async def _collect_error(_: Request, exc: CollectError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return error(exc.status, exc.code, exc.reason, headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {404: "not_found", 405: "method_not_allowed"}
        return error(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return error(400, "bad_request", f"{where}: {first.get('msg', 'invalid request')}")

    @app.exception_handler(StoreUnavailableError)
    async def _store_error(_: Request, exc: StoreUnavailableError) -> JSONResponse:
        return error(503, "store_unavailable", f"{exc}; nothing was stored, send it again")

    # ------------------------------------------------------------------ helpers
    def who_header(authorization: str | None) -> auth.Principal:
        principal = auth.identify(conn(), authorization)
        if principal is None:
            raise CollectError(401, "unauthorized", "the bearer token is not valid")
        return principal

    def who(request: Request) -> auth.Principal:
        return who_header(request.headers.get("authorization"))

    def need(request: Request, role: str) -> auth.Principal:
        principal = who(request)
        if principal.role == "respondent":
            raise CollectError(401, "unauthorized", f"this needs an {role} token (Authorization: Bearer ...)")
        if principal.role != role:
            raise CollectError(403, "forbidden", f"an {principal.role} token may not do this; it needs an {role} token")
        return principal

    def spec_of(campaign_id: str) -> tuple[Spec, store.CampaignRow]:
        row = store.campaign(conn(), campaign_id)
        if row is None:
            raise CollectError(404, "unknown_campaign", f"no campaign {campaign_id}")
        if campaign_id not in specs:
            specs[campaign_id] = row.spec()
        return specs[campaign_id], row

    def readable(request: Request, campaign_id: str) -> tuple[Spec, store.CampaignRow]:
        principal = need(request, "analyst")
        if not principal.may_read(campaign_id):
            raise CollectError(403, "forbidden", f"this analyst token is not granted campaign {campaign_id}")
        return spec_of(campaign_id)

    async def body(request: Request, limit: int) -> bytes:
        return await read_body(request.headers.get("content-length"), request.stream(), limit)

    ingest = Ingest(
        writer, who_header, lambda c: specs.get(c) or spec_of(c)[0], limits.max_body, limits.max_reports
    )  # a spec never changes, so a known one is not looked up again
    app.add_middleware(FastPath, ingest=ingest)

    def campaign_json(row: store.CampaignRow, spec: Spec) -> dict[str, Any]:
        return {
            "id": row.id,
            "question": spec.question,
            "kind": spec.oracle_params.get("mechanism") or spec.oracle_params.get("protocol") or spec.root.kind,
            "n": store.report_count(conn(), row.id),
            "closed": row.closed,
            "created_at": row.created_at,
            "urls": {
                "spec": f"/v1/campaigns/{row.id}/spec",
                "reports": f"/v1/campaigns/{row.id}/reports",
                "estimate": f"/v1/campaigns/{row.id}/estimate",
                "export": f"/v1/campaigns/{row.id}/export",
                "days": f"/v1/campaigns/{row.id}/days",
            },
        }

    # ------------------------------------------------------------------ routes
    @app.get("/v1/health", tags=["service"])
    def health() -> dict[str, Any]:
        """Liveness and the store's schema version."""
        return {"status": "ok", "schema": store.SCHEMA_VERSION}

    @app.post(
        "/v1/campaigns",
        status_code=201,
        tags=["campaigns"],
        openapi_extra={
            "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object"}}}}
        },
    )
    async def create_campaign(request: Request) -> JSONResponse:
        """Create a campaign from a spec (``pldp.spec/1``); refused unless every privacy claim holds exactly."""
        need(request, "admin")
        raw = await body(request, limits.max_spec)
        try:
            spec = await run_in_threadpool(Spec.from_json, raw.decode("utf-8"))
        except (SpecError, UnicodeDecodeError, ValueError) as exc:
            raise CollectError(400, "bad_spec", str(exc)) from None
        created = await asyncio.wrap_future(writer.submit(lambda ctx: collect.create_campaign(ctx, spec, time.time())))
        specs[spec.id] = spec
        row = store.campaign(conn(), spec.id)
        assert row is not None
        return JSONResponse(campaign_json(row, spec), status_code=201 if created else 200)

    @app.get("/v1/campaigns", tags=["campaigns"])
    def list_campaigns(request: Request) -> list[dict[str, Any]]:
        """The campaigns an admin manages, or an analyst may read."""
        principal = who(request)
        if principal.role == "respondent":
            raise CollectError(401, "unauthorized", "listing campaigns needs an admin or analyst token")
        ids = None if principal.role == "admin" else sorted(principal.campaigns)
        return [campaign_json(row, spec_of(row.id)[0]) for row in store.campaigns(conn(), ids)]

    @app.get("/v1/campaigns/{campaign_id}/spec", tags=["campaigns"])
    def get_spec(campaign_id: str, request: Request) -> Response:
        """The campaign's spec; its id is the ``ETag``."""
        who(request)
        spec, row = spec_of(campaign_id)
        etag = f'"{spec.id}"'
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        return Response(row.spec_text, media_type="application/json", headers={"ETag": etag})

    @app.post(
        "/v1/campaigns/{campaign_id}/reports",
        tags=["reports"],
        openapi_extra={
            "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object"}}}}
        },
    )
    async def submit(campaign_id: str, request: Request) -> dict[str, int]:
        """Store a batch of reports (``pldp.batch/1``, a list of reports, or one report); all or nothing.

        Returns how many were new (``accepted``) and how many were retries of stored reports
        (``duplicates``). The response is sent after the reports and the tally are committed.
        (:class:`pldp.service.ingest.FastPath` answers these requests before they reach this
        route, with the same :meth:`~pldp.service.ingest.Ingest.accept`.)
        """
        auth_header, declared = request.headers.get("authorization"), request.headers.get("content-length")
        return await ingest.accept(campaign_id, auth_header, declared, request.stream())

    @app.get("/v1/campaigns/{campaign_id}/estimate", tags=["estimates"])
    def get_estimate(campaign_id: str, request: Request, method: str = "unbiased", level: float = 0.95) -> Any:
        """Estimated frequencies with ``level`` confidence intervals, ``n``, the method and its diagnostics."""
        spec, _ = readable(request, campaign_id)
        if not 0.0 < level < 1.0:
            raise CollectError(400, "bad_level", f"level must lie in (0, 1), got {level}")
        tally = store.stored_tally(conn(), spec)
        if tally.n == 0:
            raise CollectError(409, "no_reports", f"campaign {campaign_id} has no reports yet")
        try:
            return campaign_estimate(spec, tally, method, level)
        except PLDPError as exc:
            raise CollectError(400, "bad_method", str(exc)) from None

    @app.get("/v1/campaigns/{campaign_id}/export", tags=["reports"], response_class=Response)
    def export(campaign_id: str, request: Request, day: str | None = None) -> Response:
        """The stored reports as one Parquet file in the wire format's Arrow schema; with
        ``day=YYYY-MM-DD`` only those received that day (none: an empty file).

        Reports that retention deleted (``pldp serve --retain-days``) are in the rollover's files only.
        """
        spec, _ = readable(request, campaign_id)
        number = None
        if day is not None:
            try:
                number = parse_day(day)
            except ValueError:
                raise CollectError(400, "bad_day", f"day must be a date as YYYY-MM-DD, got {day!r}") from None
        try:
            import pyarrow.parquet as pq
        except ImportError:  # pragma: no cover - the service extra installs it
            raise CollectError(501, "no_parquet", "export needs pyarrow (pip install 'pldp[service]')") from None
        batch = store.stored_batch(conn(), spec, day=number)
        sink = io.BytesIO()
        pq.write_table(batch.to_arrow(), sink)
        name = campaign_id if day is None else f"{campaign_id}-{day}"
        return Response(
            sink.getvalue(),
            media_type="application/vnd.apache.parquet",
            headers={"Content-Disposition": f'attachment; filename="{name}.parquet"'},
        )

    @app.get("/v1/campaigns/{campaign_id}/days", tags=["reports"])
    def list_days(campaign_id: str, request: Request) -> dict[str, Any]:
        """The days on which the stored reports were received (UTC), with how many on each, and the
        store's id (``pldp campaign export --out-dir`` names its files with it)."""
        readable(request, campaign_id)
        c = conn()
        return {
            "campaign": campaign_id,
            "store": store.store_id(c),
            "days": [{"day": day_label(d), "n": n} for d, n in store.days(c, campaign_id)],
        }

    @app.post("/v1/campaigns/{campaign_id}/close", tags=["campaigns"])
    async def close(campaign_id: str, request: Request) -> dict[str, Any]:
        """Close the campaign: every later batch of reports is refused (409)."""
        need(request, "admin")
        closed_at = await asyncio.wrap_future(
            writer.submit(lambda ctx: collect.close_campaign(ctx, campaign_id, time.time()))
        )
        return {"id": campaign_id, "closed": True, "closed_at": closed_at}

    @app.post("/v1/tokens", status_code=201, tags=["service"])
    async def create_token(request: Request) -> dict[str, Any]:
        """A new analyst token granted ``campaigns`` (body ``{"label": ..., "campaigns": [...]}``); shown once."""
        need(request, "admin")
        raw = await body(request, 2**16)
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise CollectError(400, "malformed_json", f"the body is not JSON: {exc}") from None
        if not isinstance(data, dict) or set(data) - {"label", "campaigns"}:
            raise CollectError(400, "bad_request", 'the body must be {"label": str, "campaigns": [campaign ids]}')
        label, campaigns = data.get("label", ""), data.get("campaigns", [])
        if (
            not isinstance(label, str)
            or not isinstance(campaigns, list)
            or not all(isinstance(c, str) for c in campaigns)
        ):
            raise CollectError(400, "bad_request", "label must be a string and campaigns a list of campaign ids")
        token = auth.new_token()
        await asyncio.wrap_future(
            writer.submit(lambda ctx: collect.add_token(ctx, token, "analyst", label, campaigns, time.time()))
        )
        return {"token": token, "role": "analyst", "label": label, "campaigns": campaigns}

    pages.add_pages(app, lambda campaign_id: spec_of(campaign_id)[1].closed)
    return app
