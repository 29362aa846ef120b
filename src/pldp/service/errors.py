"""The collector's refusals: every one is a JSON object ``{"error": code, "reason": text}``.

:func:`install` turns the exceptions of a request into such answers (a
:class:`~pldp.service.collect.CollectError`, an unknown path or method, a malformed query, which
is a 400 and never FastAPI's 422, and a store that cannot write, 503 with ``Retry-After``); :func:`responses` declares
them in a route's OpenAPI entry with the :class:`~pldp.service.models.Error` model.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pldp.service.collect import CollectError, unavailable
from pldp.service.faults import StoreUnavailableError, store_error
from pldp.service.models import Error

__all__ = ["error", "install", "responses"]

#: What each refusal status means, for the schema.
MEANINGS = {
    400: "Malformed: the reason names what (for reports, the first bad one).",
    401: "No token (or respondent code) where one is needed, or one that is unknown, expired or revoked.",
    403: "The token's role may not do this, or the campaign is not granted to it.",
    404: "Not found: no such campaign (or, for the pages, no such file).",
    409: "Conflicts with the stored state: a closed campaign, a report id stored with another payload, no reports, "
    "a respondent code used already, a campaign's access.",
    413: "The body, or the number of reports in it, is over the collector's limit.",
    501: "The server lacks an optional dependency.",
    503: "The store cannot take writes now (read-only, full, or its writer lock is held): nothing was stored, "
    "send it again after Retry-After seconds.",
}


def error(status: int, code: str, reason: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON answer of a refusal."""
    return JSONResponse({"error": code, "reason": reason}, status_code=status, headers=headers)


def responses(*statuses: int, others: dict[int | str, dict[str, Any]] | None = None) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of the refusals ``statuses`` (for a route's ``responses=``), after ``others``."""
    out: dict[int | str, dict[str, Any]] = dict(others or {})
    for status in statuses:
        out[status] = {"model": Error, "description": MEANINGS[status]}
        if status == 401:
            out[status]["headers"] = {"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}}
        if status == 503:
            out[status]["headers"] = {"Retry-After": {"description": "Seconds", "schema": {"type": "integer"}}}
    return out


async def _collect_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CollectError)
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else {}
    return error(exc.status, exc.code, exc.reason, headers | exc.headers)


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    codes = {404: "not_found", 405: "method_not_allowed"}
    return error(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    return error(400, "bad_request", f"{where}: {first.get('msg', 'invalid request')}")


async def _store_error(request: Request, exc: Exception) -> JSONResponse:
    fault = store_error(exc)
    if fault is None:  # not the store's fault: a bug, answered 500 by the server's error middleware
        raise exc
    return await _collect_error(request, unavailable(fault))


def install(app: FastAPI) -> None:
    """Answer the refusals of ``app`` as JSON errors (see module doc)."""
    app.add_exception_handler(CollectError, _collect_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StoreUnavailableError, _store_error)
    app.add_exception_handler(sqlite3.Error, _store_error)
