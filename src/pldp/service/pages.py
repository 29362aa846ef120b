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
``GET /static/{name}``                 anyone      the files of ``pldp/service/static/`` (the JS
                                                   client, the pages' scripts, style and HTML)
=====================================  ==========  ===============================================

The pages are templates in ``static/`` filled with the campaign id only (32 hex digits, checked;
any other id is a 404), so nothing a campaign's creator wrote is put into HTML by the server: the
question and the answers come from the spec, which the page fetches and checks (its id is the
hash of its content, and every privacy claim is verified exactly) before showing it.

Every response of this module carries a ``Content-Security-Policy`` that allows scripts, styles,
connections and images from the collector itself only (``data:`` images too), and no inline
script or style: the pages load nothing from any other origin.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import Response

from pldp.service.collect import CollectError
from pldp.service.errors import responses

__all__ = ["CONTENT_SECURITY_POLICY", "STATIC_DIR", "add_pages", "static_files"]

#: Where the pages' files live (``pldp-client.mjs`` is a link to ``clients/js/pldp-client.mjs``).
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
        outside the folder (``pldp-client.mjs`` is a link whose target lies outside; it is served
        because its name is listed here).
    """
    if not directory.is_dir():
        return {}
    return {
        p.name: p
        for p in sorted(directory.iterdir())
        if p.is_file() and p.suffix in CONTENT_TYPES and _STATIC_NAME.fullmatch(p.name)
    }


def _page(template: str, campaign_id: str, closed: bool) -> Response:
    text = (STATIC_DIR / template).read_text(encoding="utf-8")
    text = text.replace("{{campaign_id}}", html.escape(campaign_id, quote=True))
    text = text.replace("{{closed}}", "true" if closed else "false")
    return Response(text, media_type="text/html; charset=utf-8", headers=_headers("no-store"))


def add_pages(app: FastAPI, campaign_closed: Callable[[str], bool]) -> None:
    """Add the survey page, the dashboard and the static files to the collector ``app``.

    Parameters
    ----------
    app : FastAPI
        The collector (:func:`pldp.service.app.create_app` calls this).
    campaign_closed : callable
        ``campaign_closed(campaign_id)`` tells whether the campaign is closed, and raises
        :class:`~pldp.service.collect.CollectError` (404) for an unknown campaign.
    """
    files = static_files()
    page = responses(
        404, others={200: {"description": "The page.", "content": {"text/html": {"schema": {"type": "string"}}}}}
    )
    kinds = {t.split(";")[0]: {"schema": {"type": "string"}} for t in CONTENT_TYPES.values()}
    static_file = responses(404, others={200: {"description": "The file.", "content": kinds}})

    def known(campaign_id: str) -> bool:
        if not _CAMPAIGN_ID.fullmatch(campaign_id):
            raise CollectError(404, "unknown_campaign", "a campaign id is 32 lower-case hex digits")
        return campaign_closed(campaign_id)

    @app.get("/c/{campaign_id}", tags=["pages"], response_class=Response, responses=page)
    def respondent_page(campaign_id: str) -> Response:
        """The survey page of a campaign: the answer is randomized in the browser."""
        return _page("respondent.html", campaign_id, known(campaign_id))

    @app.get("/dashboard/{campaign_id}", tags=["pages"], response_class=Response, responses=page)
    def dashboard_page(campaign_id: str) -> Response:
        """The analyst's dashboard of a campaign (the data need an analyst token)."""
        return _page("dashboard.html", campaign_id, known(campaign_id))

    @app.get("/static/{name}", tags=["pages"], response_class=Response, responses=static_file)
    def static(name: str) -> Response:
        """A file of the pages (the JS client, scripts, the style sheet)."""
        path = files.get(name)
        if path is None:
            raise CollectError(404, "not_found", f"no static file {name!r}")
        return Response(path.read_bytes(), media_type=CONTENT_TYPES[path.suffix], headers=_headers("no-cache"))
