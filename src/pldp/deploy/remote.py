"""A client of a running collector's API, on the standard library (``http.client``).

Used by ``pldp campaign ...``, the demo and the tests; anything that speaks HTTP and JSON can do
the same (the API is in the collector's ``/openapi.json``). It lives with the deployable campaigns,
not in :mod:`pldp.service`: a device or a command that sends reports needs none of the collector's
``service`` extra.

Examples
--------
>>> from pldp.deploy.remote import Collector
>>> c = Collector("http://127.0.0.1:8000", token="...")   # doctest: +SKIP
>>> c.submit(campaign_id, Client(spec).reports(answers))    # doctest: +SKIP
{'accepted': 1000, 'duplicates': 0}
>>> c.submit_all(campaign_id, Client(spec).reports(many))   # doctest: +SKIP
{'accepted': 1000000, 'duplicates': 0}

A collector that cannot be reached (refused connection, unknown host, timeout, an untrusted TLS
certificate, a connection dropped mid-answer) raises :class:`UnreachableError`, a
:class:`ConnectionError` naming the URL; an answer of status 400 or more raises
:class:`RemoteError`.
"""

from __future__ import annotations

import http.client
import json
import ssl
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

from pldp.deploy import ReportBatch, Spec

__all__ = ["Collector", "RemoteError", "UnreachableError"]

T = TypeVar("T")


class RemoteError(Exception):
    """The collector refused a request: its HTTP ``status``, error ``code`` and ``reason``, and the
    seconds its ``Retry-After`` asked to wait (429, 503), if any."""

    def __init__(self, status: int, code: str, reason: str, retry_after: float | None = None) -> None:
        super().__init__(f"{status} {code}: {reason}")
        self.status = status
        self.code = code
        self.reason = reason
        self.retry_after = retry_after


class UnreachableError(ConnectionError):
    """No answer from the collector at ``url``: the connection failed or broke (``reason`` says how).

    A :class:`ConnectionError` (so an :class:`OSError`); the original error is its ``__cause__``.
    """

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot reach the collector at {url}: {reason}")
        self.url = url
        self.reason = reason


def _retryable(exc: Exception) -> bool:
    """A failure that sending the same request again may cure: no answer, a 503 (nothing stored), or
    a 429 (too many reports from this address for now). Not a 429 ``address_share``: the address
    holds its part of the campaign, which grows only as others send (a token lifts the limit)."""
    if isinstance(exc, RemoteError):
        return exc.status == 503 or (exc.status == 429 and exc.code != "address_share")
    return isinstance(exc, UnreachableError)


def _retry_after(value: str | None) -> float | None:
    return float(value) if value is not None and value.strip().isdigit() else None


class Collector:
    """The API of the collector at ``url`` (``http://host:port``), with an optional bearer token.

    One persistent connection, reopened when the server closes it.
    """

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected http(s)://host:port, got {url!r}")
        try:
            parts.port  # noqa: B018 - read now: a port beyond 65535 (or not a number) raises here, not at a request
        except ValueError:
            raise ValueError(f"expected http(s)://host:port with a port up to 65535, got {url!r}") from None
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
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self.close()  # a kept-alive connection the server closed: one fresh try
                if attempt:
                    raise UnreachableError(self.url, _why(exc)) from exc
            except (OSError, http.client.HTTPException) as exc:  # refused, no such host, timeout, TLS
                self.close()
                raise UnreachableError(self.url, _why(exc)) from exc
        status, head = resp.status, {k.lower(): v for k, v in resp.getheaders()}
        if status >= 400:
            try:
                err = json.loads(data)
                after = _retry_after(head.get("retry-after"))
                raise RemoteError(status, str(err.get("error")), str(err.get("reason")), after)
            except (json.JSONDecodeError, AttributeError):
                raise RemoteError(status, "http_error", data[:200].decode("utf-8", "replace")) from None
        return status, head, data

    def _json(self, method: str, path: str, payload: Any = None) -> Any:
        body = None if payload is None else (payload if isinstance(payload, bytes) else json.dumps(payload).encode())
        return json.loads(self.request(method, path, body)[2])

    # ------------------------------------------------------------------ the API
    def health(self) -> dict[str, Any]:
        return self._json("GET", "/v1/health")

    def create_campaign(self, spec: Spec | str, rounds: str | None = None, cap: int | None = None) -> dict[str, Any]:
        """Create a campaign (admin); ``spec`` a :class:`Spec` or its JSON text; ``rounds``
        ``daily``, ``weekly`` or ``manual`` makes it recur (None: the collector's default, once);
        ``cap`` the most reports it takes (None: no cap of its own)."""
        text = spec.to_json() if isinstance(spec, Spec) else spec
        params = {k: v for k, v in (("rounds", rounds), ("cap", cap)) if v is not None}
        query = "?" + urlencode(params) if params else ""
        return self._json("POST", f"/v1/campaigns{query}", text.encode("utf-8"))

    def campaigns(self) -> list[dict[str, Any]]:
        return self._json("GET", "/v1/campaigns")

    def spec(self, campaign_id: str) -> Spec:
        """The campaign's spec, verified on reading (:meth:`Spec.from_json`: its id, structure and
        every privacy claim); its oracle, which a device never runs, is rebuilt and checked on first
        use (:meth:`Spec.mechanism`), so a device that fetches a spec loads no estimator."""
        text = self.request("GET", f"/v1/campaigns/{campaign_id}/spec")[2].decode("utf-8")
        return Spec.from_json(text, check_oracle=False)

    def retrying(
        self,
        call: Callable[[], T],
        retries: int = 5,
        backoff: float = 0.5,
        on_retry: Callable[[Exception, float], None] | None = None,
    ) -> T:
        """``call()``, called again after a failure that a resend may cure, up to ``retries`` times.

        The waits double from ``backoff`` seconds (0.5, 1, 2, 4, 8 s by default: 15.5 s in all),
        or are as long as the collector's ``Retry-After`` when it asks for longer (a 429: this
        address sent too many reports for now).
        A resend is safe for reads, for a batch of reports (sent twice, it counts once: the
        collector keeps each report id once), and for creating or closing a campaign; not for
        :meth:`create_token`, which would make a second token.

        Parameters
        ----------
        call : callable
            The request, e.g. ``lambda: collector.submit(cid, batch)``.
        retries : int
            Resends after the first attempt (0: none).
        backoff : float
            The first wait, seconds.
        on_retry : callable, optional
            Told each failure and the wait before the resend.

        Raises
        ------
        UnreachableError, RemoteError
            The last failure, when every attempt failed; any other refusal (a 4xx) at once.
        """
        for attempt in range(retries + 1):
            try:
                return call()
            except (UnreachableError, RemoteError) as exc:
                if attempt == retries or not _retryable(exc):
                    raise
                wait = max(backoff * 2**attempt, getattr(exc, "retry_after", None) or 0.0)
                if on_retry is not None:
                    on_retry(exc, wait)
                time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def submit_all(
        self,
        campaign_id: str,
        batch: ReportBatch,
        size: int = 5_000,
        retries: int = 5,
        backoff: float = 0.5,
        progress: Callable[[int], None] | None = None,
        on_retry: Callable[[Exception, float], None] | None = None,
        round: int | None = None,
    ) -> dict[str, int]:
        """Send a batch of any size in requests of at most ``size`` reports; the summed answers.

        Each request is retried (:meth:`retrying`) after a connection error, a 503 or a 429; a resent
        request counts once, since the collector keeps each report id once, so a report whose first
        sending was stored but not acknowledged comes back as a duplicate. A 413 (the collector's
        ``--max-reports`` or ``--max-body`` is lower) halves the request, and the later requests
        stay at the size that passed.

        Parameters
        ----------
        campaign_id : str
            The campaign.
        batch : ReportBatch
            The reports, e.g. :meth:`pldp.client.Client.reports` or a report file read back.
        size : int
            Most reports per request.
        retries, backoff, on_retry
            As :meth:`retrying`.
        progress : callable, optional
            Told the number of reports of each request acknowledged.
        round : int, optional
            The round of a recurring campaign the reports answer (:meth:`submit`).

        Returns
        -------
        dict
            ``{"accepted": new reports, "duplicates": reports the collector held already}``.
        """
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        total = {"accepted": 0, "duplicates": 0}
        start, n = 0, len(batch)
        while start < n:
            stop = min(n, start + size)
            part = ReportBatch(
                batch.spec, batch.ids[start:stop], {k: v[start:stop] for k, v in batch.columns.items()}, batch.root
            )
            try:
                got = self.retrying(partial(self.submit, campaign_id, part, round), retries, backoff, on_retry)
            except RemoteError as exc:
                if exc.status != 413 or stop - start == 1:
                    raise
                size = max(1, (stop - start) // 2)  # over a limit: halve, and keep the smaller size
                continue
            total["accepted"] += int(got["accepted"])
            total["duplicates"] += int(got["duplicates"])
            if progress is not None:
                progress(stop - start)
            start = stop
        return total

    def submit(
        self,
        campaign_id: str,
        reports: ReportBatch | dict[str, Any] | list[Any] | str,
        round: int | None = None,
    ) -> dict[str, int]:
        """Send reports (a :class:`ReportBatch`, the batch form, a list, or JSON text), as answers
        to round ``round`` of a recurring campaign (None: the round in which they are received)."""
        if isinstance(reports, ReportBatch):
            body = json.dumps(reports.to_json(), separators=(",", ":")).encode()
        elif isinstance(reports, str):
            body = reports.encode("utf-8")
        else:
            body = json.dumps(reports, separators=(",", ":")).encode()
        query = "" if round is None else "?" + urlencode({"round": round})
        return self._json("POST", f"/v1/campaigns/{campaign_id}/reports{query}", body)

    def estimate(
        self,
        campaign_id: str,
        method: str | None = None,
        level: float = 0.95,
        round: int | None = None,
        top: int | None = None,
    ) -> dict[str, Any]:
        """The campaign's estimate (an analyst): of every report, or of round ``round``. ``method``
        default: the collector's (unbiased; discover for a free-text campaign, whose ``top`` answers
        it discovers, default 20)."""
        asked: dict[str, Any] = {"level": level}
        if method is not None:
            asked["method"] = method
        if round is not None:
            asked["round"] = round
        if top is not None:
            asked["top"] = top
        return self._json("GET", f"/v1/campaigns/{campaign_id}/estimate?{urlencode(asked)}")

    def series(
        self,
        campaign_id: str,
        method: str = "unbiased",
        level: float = 0.95,
        first: int | None = None,
        last: int | None = None,
    ) -> dict[str, Any]:
        """The campaign's estimate round by round (an analyst), of rounds ``first`` to ``last``
        (default: the latest up to the current one): ``{"rounds", "round", "series": [...]}``."""
        asked: dict[str, Any] = {"method": method, "level": level}
        asked.update({k: v for k, v in (("first", first), ("last", last)) if v is not None})
        query = urlencode(asked)
        return self._json("GET", f"/v1/campaigns/{campaign_id}/series?{query}")

    def current_round(self, campaign_id: str) -> dict[str, Any]:
        """The campaign's current round, its start and end, and the rounds a report may name now (anyone)."""
        return self._json("GET", f"/v1/campaigns/{campaign_id}/round")

    def open_round(self, campaign_id: str) -> dict[str, Any]:
        """Open the next round of a campaign with manual rounds (admin); the new round's ``round``."""
        return self._json("POST", f"/v1/campaigns/{campaign_id}/rounds", b"")

    def export(self, campaign_id: str, day: str | None = None, round: int | None = None) -> bytes:
        """The campaign's stored reports as Parquet bytes; with ``day`` (``YYYY-MM-DD``) only those
        received that day, with ``round`` only those of that round."""
        asked = {k: v for k, v in (("day", day), ("round", round)) if v is not None}
        query = "?" + urlencode(asked) if asked else ""
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
    def create_invited_campaign(
        self, spec: Spec | str, rounds: str | None = None, cap: int | None = None
    ) -> dict[str, Any]:
        """Create a campaign that takes reports only with respondent codes (admin;
        ``POST /v1/campaigns?access=invited``), recurring as ``rounds`` says (None: once), capped at
        ``cap`` reports (None: no cap of its own)."""
        text = spec.to_json() if isinstance(spec, Spec) else spec
        params = {k: v for k, v in (("rounds", rounds), ("cap", cap)) if v is not None}
        query = urlencode({"access": "invited", **params})
        return self._json("POST", f"/v1/campaigns?{query}", text.encode("utf-8"))

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


def _why(exc: BaseException) -> str:
    """A failed connection in words: the OS's reason (``Connection refused``), else the exception's."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return (
            f"its TLS certificate is not trusted ({exc.verify_message}); "
            "to trust a private certificate authority, set SSL_CERT_FILE to its PEM file"
        )
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
