"""The collector's refusals: every one is a JSON object ``{"error": code, "reason": text}``.

:func:`install` turns the exceptions of a request into such answers (a
:class:`~pldp.service.collect.CollectError`, a writer job's :class:`~pldp.service.refusals.RefusalError`
by the one table :data:`REFUSAL_STATUS`, an unknown path or method, a malformed query, which
is a 400 and never FastAPI's 422, and a store that cannot write, 503 with ``Retry-After``); :func:`responses` declares
them in a route's OpenAPI entry with the :class:`~pldp.service.models.Error` model.

A failure no check foresaw is a 500, JSON too (``internal_error``), and its traceback is logged
once per kind, never once per request (:class:`OncePerKind`): a client that can provoke one
cannot fill the server's log. Bodies nested too deep or holding numbers too long for Python's
``json`` are refused before parsing (:mod:`pldp.service.jsonlimits`); the handlers here also turn
what ``json.loads`` raises for them, and for bytes that are not UTF-8, into a 400, for a route
that parses a body itself.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from pldp.service import store
from pldp.service.collect import CollectError, unavailable
from pldp.service.faults import StoreUnavailableError, store_error
from pldp.service.models import Error
from pldp.service.refusals import ConflictError, InvalidError, NotFoundError, RefusalError, UnauthorizedError

__all__ = ["REFUSAL_STATUS", "OncePerKind", "as_http", "error", "install", "quiet_tracebacks", "responses"]

#: The HTTP status of each kind of a writer job's refusal (:mod:`pldp.service.refusals`): the one
#: place where a domain error becomes an HTTP answer, for the routes and the fast path alike.
REFUSAL_STATUS: dict[type[RefusalError], int] = {
    InvalidError: 400,
    UnauthorizedError: 401,
    NotFoundError: 404,
    ConflictError: 409,
}

#: What each refusal status means, for the schema.
MEANINGS = {
    400: "Malformed: the reason names what (for reports, the first bad one).",
    401: "No token (or respondent code) where one is needed, or one that is unknown, expired or revoked.",
    403: "The token's role may not do this, the campaign is not granted to it, or the request came from a page "
    "of another origin (`Origin`) than the collector's own and those it allows.",
    404: "Not found: no such campaign (or, for the pages, no such file).",
    409: "Conflicts with the stored state: a closed campaign, a report id stored with another payload, no reports, "
    "a respondent code used already, a campaign's access.",
    413: "The body, or the number of reports in it, is over the collector's limit.",
    415: "The body is not `application/json` (a page of another origin could send any other type without asking).",
    429: "Too many reports from this address: send them again after `Retry-After` seconds.",
    501: "The server lacks an optional dependency.",
    503: "The store cannot take writes now (read-only, full, or its writer lock is held), or the collector is "
    "reading too many bodies at once: nothing was stored, send it again after Retry-After seconds.",
}
#: The headers a refusal may carry, for the schema.
_HEADERS = {
    401: {"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}},
    429: {"Retry-After": {"description": "Seconds to wait before sending again.", "schema": {"type": "integer"}}},
    503: {"Retry-After": {"description": "Seconds to wait before sending again.", "schema": {"type": "integer"}}},
}


def error(status: int, code: str, reason: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON answer of a refusal."""
    return JSONResponse({"error": code, "reason": reason}, status_code=status, headers=headers)


def responses(*statuses: int, others: dict[int | str, dict[str, Any]] | None = None) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of the refusals ``statuses`` (for a route's ``responses=``), after ``others``."""
    out: dict[int | str, dict[str, Any]] = dict(others or {})
    for status in statuses:
        out[status] = {"model": Error, "description": MEANINGS[status]}
        if status in _HEADERS:
            out[status]["headers"] = _HEADERS[status]
    return out


def as_http(exc: RefusalError) -> CollectError:
    """A writer job's refusal as the HTTP refusal it is answered with (:data:`REFUSAL_STATUS`; its
    code and reason as they are)."""
    status = next((REFUSAL_STATUS[kind] for kind in type(exc).__mro__ if kind in REFUSAL_STATUS), None)
    if status is None:  # a refusal of a kind the table lacks: a bug, answered as one (500, logged)
        raise TypeError(f"{type(exc).__name__} has no HTTP status in REFUSAL_STATUS")
    return CollectError(status, exc.code, exc.reason)


def headers_of(exc: CollectError) -> dict[str, str]:
    """The headers of a refusal's answer: its own (``Retry-After``), and the challenge of a 401."""
    return {**exc.headers, "WWW-Authenticate": "Bearer"} if exc.status == 401 else exc.headers


async def _collect_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CollectError)
    return error(exc.status, exc.code, exc.reason, headers_of(exc) or None)


async def _refusal(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RefusalError)
    return await _collect_error(request, as_http(exc))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 405:
        allow = allowed_methods(request)
        reason = f"{request.method} is not a method of {request.url.path}; it takes {allow}"
        return error(405, "method_not_allowed", reason, {"Allow": allow})
    codes = {404: "not_found"}
    return error(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))


#: The methods a 405's ``Allow`` may name.
_METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")


def allowed_methods(request: Request) -> str:
    """The ``Allow`` header of a 405 (RFC 9110, 15.5.6): every method for which some route of the
    app matches the request's path in full (asked of each route, routers included within routers)."""
    methods = {
        method
        for method in _METHODS
        for route in request.app.router.routes
        if route.matches({**request.scope, "method": method})[0] == Match.FULL
    }
    return ", ".join(sorted(methods))


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


async def _too_deep(_: Request, exc: Exception) -> JSONResponse:
    return error(400, "too_deep", "the request nests arrays or objects too deep")


async def _not_utf8(_: Request, exc: Exception) -> JSONResponse:
    return error(400, "malformed_json", f"the body is not UTF-8 text: {exc}")


async def _value_error(_: Request, exc: Exception) -> JSONResponse:
    if "integer string conversion" in str(exc):  # json.loads of a number over Python's 4,300 digits
        return error(400, "number_too_long", "the body holds a number of more than 4,300 digits")
    raise exc  # any other: a 500 (the error middleware's handler below), logged once per kind


async def _internal_error(_: Request, exc: Exception) -> JSONResponse:
    return error(500, "internal_error", f"the collector failed ({type(exc).__name__}); its log says where")


def install(app: FastAPI) -> None:
    """Answer the refusals of ``app`` as JSON errors (see module doc)."""
    app.add_exception_handler(CollectError, _collect_error)
    app.add_exception_handler(RefusalError, _refusal)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StoreUnavailableError, _store_error)
    app.add_exception_handler(store.SQLiteError, _store_error)
    app.add_exception_handler(RecursionError, _too_deep)
    app.add_exception_handler(UnicodeDecodeError, _not_utf8)  # json.loads of bytes that are not UTF-8
    app.add_exception_handler(ValueError, _value_error)
    app.add_exception_handler(Exception, _internal_error)  # Starlette's error middleware: then re-raised, logged


class OncePerKind(logging.Filter):
    """Let one record of each kind through, then count the others (one line a minute says how many).

    A record's kind is its exception's type and the line that raised it, or, without an
    exception, its logger and message. The server logs a traceback for each failed request
    ("Exception in ASGI application") and a line for each malformed one; through this filter a
    client that repeats them adds nothing to the log but that minute's count.
    """

    def __init__(self, every: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.every = every
        self.clock = clock
        self._seen: dict[tuple[str, ...], list[float]] = {}  # kind -> [records dropped, time of the last line]

    @staticmethod
    def kind(record: logging.LogRecord) -> tuple[str, ...]:
        """What makes two records the same."""
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None:
            return (record.name, str(record.msg))
        frames = traceback.extract_tb(exc.__traceback__)
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        return (type(exc).__qualname__, where)

    def filter(self, record: logging.LogRecord) -> bool:
        key, now = self.kind(record), self.clock()
        seen = self._seen.get(key)
        if seen is None:
            self._seen[key] = [0, now]
            if record.exc_info:
                record.msg = f"{record.msg} (logged once: more of this kind are counted, one line a minute)"
            return True
        seen[0] += 1
        if now - seen[1] < self.every:
            return False
        record.msg, record.args = f"{int(seen[0])} more of: {' '.join(key)}", None
        record.exc_info = record.exc_text = None
        seen[0], seen[1] = 0, now
        return True


#: The loggers whose records a client can provoke: uvicorn's (failed and malformed requests) and asyncio's.
NOISY = ("uvicorn.error", "asyncio")


def quiet_tracebacks() -> None:
    """Put a :class:`OncePerKind` on each logger of :data:`NOISY` (once per process)."""
    for name in NOISY:
        logger = logging.getLogger(name)
        if not any(isinstance(f, OncePerKind) for f in logger.filters):
            logger.addFilter(OncePerKind())
