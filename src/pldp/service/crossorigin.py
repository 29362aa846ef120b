"""Requests from pages of other origins: JSON bodies only, and only from origins the collector allows.

A page on any web site can make its visitors' browsers send a ``POST`` to the collector. The
browser sends it without asking the collector first (a CORS "simple request") only when its body
is ``text/plain``, ``application/x-www-form-urlencoded`` or ``multipart/form-data``, or has no
type; an ``application/json`` body needs the collector's consent in a preflight ``OPTIONS``,
which it gives to no origin but those of ``pldp serve --allow-origin``. So :class:`CrossOrigin`,
an ASGI middleware around the whole application, refuses

* any request with a body that is not ``application/json``: 415 ``unsupported_media_type``;
* any request other than ``GET``, ``HEAD`` and ``OPTIONS`` whose ``Origin`` header names another
  origin than the collector's own and those allowed: 403 ``cross_origin``. ``Origin: null`` (a
  sandboxed frame, a local file) is another origin. The collector's own origin is the scheme of
  the connection (``https`` behind a TLS proxy that says so) and the host and port of the
  ``Host`` header, *on a name the collector serves* (``pldp serve --allow-host``, besides the
  address it listens on and ``localhost``; listening on every interface, any IP address too).

  DNS rebinding: a page of ``http://evil.example:PORT`` whose name its owner then points at the
  collector's address sends ``Host: evil.example:PORT`` and ``Origin: http://evil.example:PORT``,
  which matched, so any site could make its visitors' browsers submit reports (or, with a
  private collector, reach it at all). Its name is not one the collector serves: 403. The scheme
  was ignored as well (``Origin: https://127.0.0.1:PORT`` passed on plain HTTP).

A request without ``Origin`` is not a browser's cross-origin one, and passes. For an allowed
origin the middleware answers the preflight (``204``, the methods ``GET`` and ``POST``, the
headers ``Content-Type`` and ``Authorization``) and adds ``Access-Control-Allow-Origin`` to the
answers, so that a survey page served from that origin can submit reports.

The collector keeps no cookie and no session: an admin's or analyst's token travels in a header
that no other page can add, so these rules protect the anonymous endpoint (report submission)
above all; they apply to every route alike.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CrossOrigin", "normalize_origin", "serving_hosts"]

_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
_DEFAULT_PORT = {"http": 80, "https": 443}


def _host_port(netloc: str, scheme: str) -> tuple[str, int | None]:
    """The host (lower case, an IPv6 address without brackets) and port of ``host[:port]``."""
    try:
        parts = urlsplit("//" + netloc)
        port = parts.port
    except ValueError:
        return netloc.lower(), None
    return parts.hostname or "", port or _DEFAULT_PORT.get(scheme)


def normalize_origin(origin: str) -> str:
    """``scheme://host[:port]`` in lower case, without a default port or a trailing slash.

    Raises
    ------
    ValueError
        Not an origin (no http or https scheme, or a path).
    """
    parts = urlsplit(origin.strip().rstrip("/"))
    if parts.scheme not in _DEFAULT_PORT or not parts.netloc or parts.path or parts.query:
        raise ValueError(f"{origin!r} is not an origin: give scheme://host[:port], e.g. https://survey.example.org")
    host, port = _host_port(parts.netloc, parts.scheme)
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + ("" if port == _DEFAULT_PORT[parts.scheme] else f":{port}")


#: In :func:`serving_hosts`: any IP address (a collector listening on every interface).
ANY_ADDRESS = "*"


def serving_hosts(bound: str, names: Iterable[str] = ()) -> tuple[str, ...]:
    """The host names a collector listening on ``bound`` serves: ``names`` (``--allow-host``),
    ``localhost``, and ``bound``, or any IP address (:data:`ANY_ADDRESS`) when ``bound`` is every
    interface's (``0.0.0.0``, ``::``). Lower case, IPv6 without brackets."""
    out = {n.strip().lower().strip("[]").rstrip(".") for n in names if n.strip()} | {"localhost"}
    if bound in ("0.0.0.0", "::", ""):
        out.add(ANY_ADDRESS)
    else:
        out.add(bound.lower().strip("[]"))
    return tuple(sorted(out))


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _own(origin: str, host_header: str, scheme: str = "http", hosts: frozenset[str] | None = None) -> bool:
    """Whether ``origin`` is the collector's own: the connection's scheme, and the host and port of
    the request's ``Host``, on a name the collector serves (``hosts``; None: any)."""
    parts = urlsplit(origin)
    if parts.scheme not in _DEFAULT_PORT or not host_header or parts.scheme != scheme:
        return False
    (name, port), (their, their_port) = _host_port(host_header, parts.scheme), _host_port(parts.netloc, parts.scheme)
    name, their = name.rstrip("."), their.rstrip(".")  # a name's final dot changes nothing
    if hosts is not None and name not in hosts and (ANY_ADDRESS not in hosts or not _is_address(name)):
        return False
    return (their, their_port) == (name, port)


def _is_json(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


async def _refuse(send: Send, status: int, code: str, reason: str) -> None:
    body = json.dumps({"error": code, "reason": reason}, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class CrossOrigin:
    """ASGI middleware: the rules of the module doc, around ``app``; ``allow``: origins allowed
    besides the collector's own (as :func:`normalize_origin` writes them); ``hosts``: the names
    the collector serves (:func:`serving_hosts`; None: any)."""

    def __init__(self, app: ASGIApp, allow: Iterable[str] = (), hosts: Iterable[str] | None = None) -> None:
        self.app = app
        self.allow = frozenset(normalize_origin(o) for o in allow)
        self.hosts = None if hosts is None else frozenset(h.lower() for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        origin = host = content_type = None
        body = False
        for name, value in scope["headers"]:
            if name == b"origin":
                origin = value.decode("latin-1")
            elif name == b"host":
                host = value.decode("latin-1")
            elif name == b"content-type":
                content_type = value.decode("latin-1")
            elif name == b"content-length":
                body = body or value.strip() not in (b"", b"0")
            elif name == b"transfer-encoding":
                body = True
        method = scope["method"]
        allowed = origin is not None and self._allowed(origin)
        own = origin is not None and _own(origin, host or "", scope.get("scheme", "http"), self.hosts)
        if origin is not None and method not in _SAFE and not allowed and not own:
            await _refuse(
                send,
                403,
                "cross_origin",
                f"a page of {origin} may not send this: the collector takes requests from its own pages "
                "and those of the origins it allows (pldp serve --allow-origin)",
            )
            return
        if body and not _is_json(content_type or ""):
            await _refuse(
                send,
                415,
                "unsupported_media_type",
                f"the body must be application/json, not {content_type or 'untyped'} "
                "(send Content-Type: application/json)",
            )
            return
        if not allowed:
            await self.app(scope, receive, send)
            return
        assert origin is not None
        if method == "OPTIONS" and any(n == b"access-control-request-method" for n, _ in scope["headers"]):
            await self._preflight(send, origin)
            return
        await self.app(scope, receive, self._marking(send, origin))

    def _allowed(self, origin: str) -> bool:
        try:
            return normalize_origin(origin) in self.allow
        except ValueError:
            return False

    @staticmethod
    def _cors(origin: str) -> list[tuple[bytes, bytes]]:
        return [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]

    async def _preflight(self, send: Send, origin: str) -> None:
        headers = [
            *self._cors(origin),
            (b"access-control-allow-methods", b"GET, POST"),
            (b"access-control-allow-headers", b"Content-Type, Authorization"),
            (b"access-control-max-age", b"600"),
            (b"content-length", b"0"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    def _marking(self, send: Send, origin: str) -> Send:
        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self._cors(origin)]}
            await send(message)

        return marked
