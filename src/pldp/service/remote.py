"""A client of a running collector's API, on the standard library (``http.client``).

Used by ``pldp campaign ...``, the demo and the tests; anything that speaks HTTP and JSON can do
the same (the API is in the collector's ``/openapi.json``).

Examples
--------
>>> from pldp.service.remote import Collector
>>> c = Collector("http://127.0.0.1:8000", token="...")   # doctest: +SKIP
>>> c.submit(campaign_id, Client(spec).reports(answers))    # doctest: +SKIP
{'accepted': 1000, 'duplicates': 0}
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlencode, urlsplit

from pldp.deploy import ReportBatch, Spec

__all__ = ["Collector", "RemoteError"]


class RemoteError(Exception):
    """The collector refused a request: its HTTP ``status``, error ``code`` and ``reason``."""

    def __init__(self, status: int, code: str, reason: str) -> None:
        super().__init__(f"{status} {code}: {reason}")
        self.status = status
        self.code = code
        self.reason = reason


class Collector:
    """The API of the collector at ``url`` (``http://host:port``), with an optional bearer token.

    One persistent connection, reopened when the server closes it.
    """

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected http(s)://host:port, got {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._parts = parts
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._parts.scheme == "https" else http.client.HTTPConnection
            self._conn = cls(self._parts.hostname or "", self._parts.port, timeout=self.timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
        """Send one request; return ``(status, headers, body)`` or raise :class:`RemoteError` (>= 400)."""
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in (0, 1):
            conn = self._connection()
            try:
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()  # a kept-alive connection the server closed: one fresh try
                if attempt:
                    raise
        status, head = resp.status, {k.lower(): v for k, v in resp.getheaders()}
        if status >= 400:
            try:
                err = json.loads(data)
                raise RemoteError(status, str(err.get("error")), str(err.get("reason")))
            except (json.JSONDecodeError, AttributeError):
                raise RemoteError(status, "http_error", data[:200].decode("utf-8", "replace")) from None
        return status, head, data

    def _json(self, method: str, path: str, payload: Any = None) -> Any:
        body = None if payload is None else (payload if isinstance(payload, bytes) else json.dumps(payload).encode())
        return json.loads(self.request(method, path, body)[2])

    # ------------------------------------------------------------------ the API
    def health(self) -> dict[str, Any]:
        return self._json("GET", "/v1/health")

    def create_campaign(self, spec: Spec | str) -> dict[str, Any]:
        """Create a campaign (admin); ``spec`` a :class:`Spec` or its JSON text."""
        text = spec.to_json() if isinstance(spec, Spec) else spec
        return self._json("POST", "/v1/campaigns", text.encode("utf-8"))

    def campaigns(self) -> list[dict[str, Any]]:
        return self._json("GET", "/v1/campaigns")

    def spec(self, campaign_id: str) -> Spec:
        """The campaign's spec, verified on reading (:meth:`Spec.from_json`)."""
        return Spec.from_json(self.request("GET", f"/v1/campaigns/{campaign_id}/spec")[2].decode("utf-8"))

    def submit(self, campaign_id: str, reports: ReportBatch | dict[str, Any] | list[Any] | str) -> dict[str, int]:
        """Send reports (a :class:`ReportBatch`, the batch form, a list, or JSON text)."""
        if isinstance(reports, ReportBatch):
            body = json.dumps(reports.to_json(), separators=(",", ":")).encode()
        elif isinstance(reports, str):
            body = reports.encode("utf-8")
        else:
            body = json.dumps(reports, separators=(",", ":")).encode()
        return self._json("POST", f"/v1/campaigns/{campaign_id}/reports", body)

    def estimate(self, campaign_id: str, method: str = "unbiased", level: float = 0.95) -> dict[str, Any]:
        query = urlencode({"method": method, "level": level})
        return self._json("GET", f"/v1/campaigns/{campaign_id}/estimate?{query}")

    def export(self, campaign_id: str, day: str | None = None) -> bytes:
        """The campaign's stored reports as Parquet bytes; with ``day`` (``YYYY-MM-DD``) only those
        received that day."""
        query = "" if day is None else "?" + urlencode({"day": day})
        return self.request("GET", f"/v1/campaigns/{campaign_id}/export{query}")[2]

    def days(self, campaign_id: str) -> dict[str, Any]:
        """``{"campaign", "store", "days": [{"day": "YYYY-MM-DD", "n": reports}, ...]}``: the days of
        the campaign's stored reports and the store's id."""
        return self._json("GET", f"/v1/campaigns/{campaign_id}/days")

    def close_campaign(self, campaign_id: str) -> dict[str, Any]:
        return self._json("POST", f"/v1/campaigns/{campaign_id}/close", b"")

    def create_token(self, label: str, campaigns: list[str]) -> dict[str, Any]:
        """A new analyst token granted ``campaigns`` (admin)."""
        return self._json("POST", "/v1/tokens", {"label": label, "campaigns": campaigns})

    # ------------------------------------------------------------------ credentials (admin)
    def create_invited_campaign(self, spec: Spec | str) -> dict[str, Any]:
        """Create a campaign that takes reports only with respondent codes (admin;
        ``POST /v1/campaigns?access=invited``)."""
        text = spec.to_json() if isinstance(spec, Spec) else spec
        return self._json("POST", "/v1/campaigns?access=invited", text.encode("utf-8"))

    def issue_codes(self, campaign_id: str, count: int, expires_in: int | None = None) -> dict[str, Any]:
        """``count`` one-time respondent codes of an invited campaign (admin), living ``expires_in``
        seconds (None: the collector's default, 30 days): ``{"codes": [...], "survey": path, ...}``."""
        asked: dict[str, Any] = {"count": count}
        if expires_in is not None:
            asked["expires_in"] = expires_in
        return self._json("POST", f"/v1/campaigns/{campaign_id}/codes", asked)

    def code_counts(self, campaign_id: str) -> dict[str, Any]:
        """How many of the campaign's codes are issued, used, revoked, expired and usable (admin)."""
        return self._json("GET", f"/v1/campaigns/{campaign_id}/codes")

    def revoke_codes(self, campaign_id: str, codes: list[str] | None = None) -> dict[str, int]:
        """Revoke ``codes``, or with None every code not used yet (admin): ``{"revoked", "unknown"}``."""
        asked: dict[str, Any] = {"unused": True} if codes is None else {"codes": codes}
        return self._json("DELETE", f"/v1/campaigns/{campaign_id}/codes", asked)

    def new_token(self, label: str, campaigns: list[str], expires_in: int | None = None) -> dict[str, Any]:
        """A new analyst token granted ``campaigns`` (admin), living ``expires_in`` seconds (None:
        the collector's default, 90 days); ``{"token", "id", "expires_at", ...}``."""
        asked: dict[str, Any] = {"label": label, "campaigns": campaigns}
        if expires_in is not None:
            asked["expires_in"] = expires_in
        return self._json("POST", "/v1/tokens", asked)

    def tokens(self) -> list[dict[str, Any]]:
        """Every token's public id, role, label, grants, expiry and state (admin); never a secret."""
        return self._json("GET", "/v1/tokens")

    def revoke_token(self, token_id: str) -> dict[str, Any]:
        """Revoke the analyst token with this public id (admin)."""
        from urllib.parse import quote

        return self._json("DELETE", f"/v1/tokens/{quote(token_id, safe='')}")

    def rotate_admin(self, expires_in: int | None = None) -> dict[str, Any]:
        """A new admin token (admin); the old ones, this client's included, stop working. This
        client then uses the new one."""
        asked: dict[str, Any] = {} if expires_in is None else {"expires_in": expires_in}
        out: dict[str, Any] = self._json("POST", "/v1/tokens/rotate", asked)
        self.token = out["token"]
        return out
