"""The collector's web pages: a respondent's survey page and an analyst's dashboard.

=====================================  ==========  ===============================================
page                                   who         what
=====================================  ==========  ===============================================
``GET /c/{id}``                        anyone      the survey: the question, the answers and, for
                                                   leveled protocols, the choice of a privacy
                                                   level; the answer is randomized in the browser
                                                   by ``pldp-client.mjs`` and only the report is
                                                   sent to ``POST /v1/campaigns/{id}/reports``
``GET /dashboard/{id}``                anyone      the analyst's dashboard; its data come from
                                                   ``/v1/campaigns/{id}/estimate`` with the token
                                                   the analyst types in (kept in the tab's
                                                   ``sessionStorage``), its privacy table from
                                                   ``verify(spec)`` of the JS client
``GET /docs``                          anyone      the HTTP API's operations, read from
                                                   ``/openapi.json`` by ``api.mjs``, each with a
                                                   form that sends it (FastAPI's own pages load
                                                   scripts from a CDN: they are off, and
                                                   ``/redoc`` is a 404)
``GET /static/{name}``                 anyone      the files of ``pldp/service/static/`` (the JS
                                                   client, the pages' scripts, style and HTML)
=====================================  ==========  ===============================================

The pages are templates in ``static/`` filled with the campaign id only (32 hex digits, checked;
any other id is a 404), so nothing a campaign's creator wrote is put into HTML by the server: the
question and the answers come from the spec, which the page fetches and checks (its id is the
hash of its content, and every privacy claim is verified exactly) before showing it.

A 404 reads as a page for people and as JSON for programs: a request whose ``Accept`` header
prefers ``text/html`` to JSON (a browser's address bar) gets the page ``notfound.html`` ("no such
survey" and what to do), any other the JSON error of :mod:`pldp.service.errors`; paths under
``/v1/`` (the API) and ``/static/`` always answer JSON.

Every response of this module carries a ``Content-Security-Policy`` that allows scripts, styles,
connections and images from the collector itself only (``data:`` images too), and no inline
script or style: the pages load nothing from any other origin.
"""

from __future__ import annotations

import html
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import cast

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from pldp.service.collect import CollectError
from pldp.service.errors import error, responses

__all__ = ["CONTENT_SECURITY_POLICY", "NOT_FOUND", "STATIC_DIR", "add_pages", "static_files", "wants_html"]

#: Where the pages' files live (the JS client's modules, ``pldp-client.mjs``, ``client-*.mjs``,
#: ``pldp-ledger.mjs`` and ``ledger-storage.mjs``, are links to those of ``clients/js``).
STATIC_DIR = Path(__file__).with_name("static")

#: The policy of every page and static file: this origin only, no inline code or style.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
)

#: Content types by file suffix; files with other suffixes are not served.
CONTENT_TYPES = {
    ".mjs": "text/javascript; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}

#: What the not-found page says (title, what happened, what to do), by what was asked for.
NOT_FOUND = {
    "survey": (
        "No such survey",
        "There is no survey at this address on this collector.",
        "Check the link you were given: a survey's address ends in /c/ and 32 characters, digits and "
        "the letters a to f. If it came in a message, make sure it was not cut short or changed; if it "
        "still fails, ask whoever sent it for the link again.",
    ),
    "dashboard": (
        "No such campaign",
        "There is no campaign with this id on this collector, so there is no dashboard to show.",
        "A dashboard's address is /dashboard/ and the campaign's id, 32 characters (digits and the "
        "letters a to f), as pldp campaign create printed it; pldp campaign list shows the campaigns "
        "of this collector.",
    ),
    "page": (
        "Page not found",
        "There is no page at this address on this collector.",
        "Its pages are the surveys (/c/ and a campaign's id), the campaigns' dashboards "
        "(/dashboard/ and the id) and the documentation of its HTTP API.",
    ),
}

_CAMPAIGN_ID = re.compile(r"[0-9a-f]{32}")
_STATIC_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9]+)+")


def _headers(cache: str) -> dict[str, str]:
    return {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": cache,
    }


def static_files(directory: Path = STATIC_DIR) -> dict[str, Path]:
    """The servable files of ``directory``: plain names with a known suffix, links followed.

    Parameters
    ----------
    directory : Path
        The folder (default: ``pldp/service/static``).

    Returns
    -------
    dict of str to Path
        File name to path. Only these names are ever served, so no request can reach a file
        outside the folder (the JS client's modules are links whose targets lie outside; they
        are served because their names are listed here).
    """
    if not directory.is_dir():
        return {}
    return {
        p.name: p
        for p in sorted(directory.iterdir())
        if p.is_file() and p.suffix in CONTENT_TYPES and _STATIC_NAME.fullmatch(p.name)
    }


def _page(template: str, status: int = 200, **fields: str) -> Response:
    text = (STATIC_DIR / template).read_text(encoding="utf-8")
    for name, value in fields.items():
        text = text.replace("{{" + name + "}}", html.escape(value, quote=True))
    headers = {**_headers("no-store"), "Vary": "Accept"}
    return Response(text, status_code=status, media_type="text/html; charset=utf-8", headers=headers)


def wants_html(accept: str | None) -> bool:
    """Whether an ``Accept`` header prefers an HTML page to JSON (a browser's, not an API client's).

    ``text/html`` (or ``text/*``) must be named with a quality above 0 and at least that of
    ``application/json``, ``application/*`` and ``*/*``: a browser navigating sends
    ``text/html,...,*/*;q=0.8``; curl, httpx and urllib send ``*/*`` or nothing, and get JSON.
    """
    quality: dict[str, float] = {}
    for item in (accept or "").split(","):
        kind, *params = (p.strip() for p in item.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        kind = kind.lower()
        quality[kind] = max(quality.get(kind, 0.0), q)
    page = max(quality.get("text/html", 0.0), quality.get("text/*", 0.0))
    data = max(quality.get(k, 0.0) for k in ("application/json", "application/*", "*/*"))
    return page > 0 and page >= data


def not_found_page(what: str) -> Response:
    """The 404 page for people: ``what`` is a key of :data:`NOT_FOUND`."""
    title, happened, todo = NOT_FOUND[what]
    return _page("notfound.html", 404, title=title, happened=happened, todo=todo)


def _install_not_found(app: FastAPI) -> None:
    """Answer an unknown path with the not-found page where the client prefers HTML (after
    :func:`pldp.service.errors.install`, whose JSON answer stays for everyone else)."""
    as_json = cast(Callable[[Request, Exception], Awaitable[Response]], app.exception_handlers[StarletteHTTPException])

    async def not_found(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        path = request.url.path
        page = exc.status_code == 404 and not path.startswith(("/v1/", "/static/"))
        if page and wants_html(request.headers.get("accept")):
            return not_found_page("page")
        response = await as_json(request, exc)
        if page:
            response.headers["Vary"] = "Accept"  # a cache must not give this JSON to a browser
        return response

    app.add_exception_handler(StarletteHTTPException, not_found)


def add_pages(
    app: FastAPI, campaign_closed: Callable[[str], bool], campaign_access: Callable[[str], str | None] | None = None
) -> None:
    """Add the survey page, the dashboard and the static files to the collector ``app``.

    Parameters
    ----------
    app : FastAPI
        The collector (:func:`pldp.service.app.create_app` calls this).
    campaign_closed : callable
        ``campaign_closed(campaign_id)`` tells whether the campaign is closed, and raises
        :class:`~pldp.service.collect.CollectError` (404) for an unknown campaign.
    campaign_access : callable, optional
        ``campaign_access(campaign_id)``: ``open`` or ``invited`` (the survey page then asks for
        the code of the respondent's link); every campaign is open without it.
    """
    files = static_files()
    html_body = {"text/html": {"schema": {"type": "string"}}}
    page = responses(404, others={200: {"description": "The page.", "content": html_body}})
    page[404] = {
        **page[404],
        "description": "No such campaign: a page if the request prefers text/html (a browser), else the JSON error.",
        "content": html_body,
    }
    kinds = {t.split(";")[0]: {"schema": {"type": "string"}} for t in CONTENT_TYPES.values()}
    static_file = responses(404, others={200: {"description": "The file.", "content": kinds}})

    def campaign_page(template: str, what: str, request: Request, campaign_id: str) -> Response:
        try:
            if not _CAMPAIGN_ID.fullmatch(campaign_id):
                raise CollectError(404, "unknown_campaign", "a campaign id is 32 lower-case hex digits")
            closed = campaign_closed(campaign_id)
        except CollectError as exc:
            if exc.status != 404:
                raise
            if wants_html(request.headers.get("accept")):
                return not_found_page(what)
            return error(exc.status, exc.code, exc.reason, headers={"Vary": "Accept"})
        access = (campaign_access(campaign_id) if campaign_access else None) or "open"
        return _page(template, campaign_id=campaign_id, closed="true" if closed else "false", access=access)

    @app.get("/c/{campaign_id}", tags=["pages"], response_class=Response, responses=page)
    def respondent_page(request: Request, campaign_id: str) -> Response:
        """The survey page of a campaign: the answer is randomized in the browser.

        An unknown campaign is a 404: a page for a browser, JSON for a program."""
        return campaign_page("respondent.html", "survey", request, campaign_id)

    @app.get("/dashboard/{campaign_id}", tags=["pages"], response_class=Response, responses=page)
    def dashboard_page(request: Request, campaign_id: str) -> Response:
        """The analyst's dashboard of a campaign (the data need an analyst token).

        An unknown campaign is a 404: a page for a browser, JSON for a program."""
        return campaign_page("dashboard.html", "dashboard", request, campaign_id)

    @app.get("/docs", include_in_schema=False)
    def api_page() -> Response:
        """The HTTP API's operations, from ``/openapi.json``, with nothing from another origin."""
        return _page("api.html")

    @app.get("/static/{name}", tags=["pages"], response_class=Response, responses=static_file)
    def static(name: str) -> Response:
        """A file of the pages (the JS client, scripts, the style sheet)."""
        path = files.get(name)
        if path is None:
            raise CollectError(404, "not_found", f"no static file {name!r}")
        return Response(path.read_bytes(), media_type=CONTENT_TYPES[path.suffix], headers=_headers("no-cache"))

    _install_not_found(app)
