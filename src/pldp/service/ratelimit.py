"""Per-address token buckets on report submission: one address cannot flood an open campaign.

Each client address has a bucket of ``burst`` tokens that refills at ``rate`` tokens a second; a
report costs one token. A request is admitted while its address's bucket holds a token (else a 429
before its body is read); once its body is parsed, its ``n`` reports are charged. A bucket short
of ``n`` tokens refuses the request (429) and charges one token, so that even refused requests
are paced. ``Retry-After`` says when the bucket will hold what was asked.

What a request costs the server is charged too, not only what it stores. A request's charge is
the larger of its reports and its bytes read (one token per :func:`bytes_per_token` bytes: about
three times an honest report's size on the wire, so an honest batch is charged its reports and
a body padded with whitespace its bytes); a refused body (malformed, too deep, too large, cut
off) is charged its bytes plus :data:`REFUSAL_SHARE` of the burst. Such charges, made after the
bytes were read, may take the bucket below zero, down to minus the burst: the address then waits
(429 before its next body is read) until the rate has paid its debt. Before, 300 malformed or
too deep bodies in a row never met a 429, and one address sending 8 MiB bodies of whitespace
around one report (one token each) or refused 8 MiB bodies raised an honest client's latency
from 4 ms to 207-437 ms (``tests/test_service_costs.py``).

Reports are counted, not requests: one request may carry 10,000 reports. Requests with an admin's
or analyst's token are not limited (their holders are named and their tokens revocable; a bulk
upload of a report file uses one).

The address is the connection's peer, or, from a proxy the collector trusts (``pldp serve
--trusted-proxy``), the client it names in ``X-Forwarded-For`` (uvicorn's proxy-headers middleware
rewrites the ASGI scope's ``client`` before the app sees it). An IPv6 client is keyed by its /64
network, since one subscriber is usually given a whole /64.

The buckets live in the process: with ``--workers N`` each worker keeps its own, so one address
may send up to N times the limits (the kernel spreads its connections over the workers). The
number of buckets kept is bounded: full buckets (which equal no bucket) are dropped first, then
the oldest.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable

from pldp.service.collect import CollectError

__all__ = ["REFUSAL_SHARE", "Contributions", "RateLimiter", "address_key", "bytes_per_token"]

#: The share of the burst a refused body costs its address besides its bytes (100 in a row empty a full bucket).
REFUSAL_SHARE = 0.01


def bytes_per_token(row_width: int) -> int:
    """Bytes of body one token pays for, for reports whose stored row has ``row_width`` bytes: an
    honest report takes its id (32 hex digits), its payload (bits in base64, items as numbers) and
    the JSON around them, well under 512 bytes plus three times its row."""
    return 512 + 3 * int(row_width)


def address_key(host: str | None) -> str:
    """The bucket of a client address: IPv4 as it is, IPv6 by its /64 (an IPv4-mapped one as IPv4)."""
    if not host:
        return ""
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return host  # a Unix socket's peer or a proxy's name: as given
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network((addr, 64), strict=False))
    return str(addr)


class RateLimiter:
    """Token buckets per client address (see module doc).

    Parameters
    ----------
    rate : float
        Reports per second an address may send, sustained; 0 turns the limit off.
    burst : int
        Reports an address may send at once (the bucket's size).
    max_buckets : int
        Buckets kept at most (memory: about 200 bytes each).
    clock : callable
        Seconds, monotonic (tests pass their own).
    """

    def __init__(
        self, rate: float, burst: int, max_buckets: int = 100_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = float(rate)
        self.burst = int(burst)
        self.max_buckets = max_buckets
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, when)

    @property
    def on(self) -> bool:
        return self.rate > 0

    def _tokens(self, key: str, now: float) -> float:
        tokens, when = self._buckets.get(key, (self.burst, now))
        return min(float(self.burst), tokens + (now - when) * self.rate)

    def _set(self, key: str, tokens: float, now: float) -> None:
        self._buckets[key] = (tokens, now)
        self._buckets.move_to_end(key)
        if len(self._buckets) > self.max_buckets:
            self._prune(now)

    def _prune(self, now: float) -> None:
        full = [k for k in self._buckets if self._tokens(k, now) >= self.burst]
        for k in full:
            del self._buckets[k]
        while len(self._buckets) > self.max_buckets * 0.9:  # still too many: the least recently used go
            self._buckets.popitem(last=False)

    def _refuse(self, key: str, need: float, tokens: float) -> CollectError:
        wait = max(1, math.ceil((need - tokens) / self.rate))
        return CollectError(
            429,
            "rate_limited",
            f"too many reports from {key}: at most {self.burst:,} at once and {self.rate:g} a second; "
            f"send these again in {wait} s",
            {"Retry-After": str(wait)},
        )

    def admit(self, host: str | None) -> None:
        """Admit a request from ``host`` if its bucket holds a token (nothing is charged yet).

        Raises
        ------
        CollectError
            429 with ``Retry-After``.
        """
        if not self.on:
            return
        key = address_key(host)
        tokens = self._tokens(key, self.clock())
        if tokens < 1:
            raise self._refuse(key, 1, tokens)

    def refused(self, host: str | None, nbytes: int, per_token: int) -> None:
        """Charge a refused body of ``nbytes`` bytes to ``host``: its bytes and :data:`REFUSAL_SHARE`
        of the burst, the bucket going down to minus the burst at most (see module doc)."""
        if not self.on:
            return
        key, now = address_key(host), self.clock()
        cost = REFUSAL_SHARE * self.burst + nbytes / per_token
        self._set(key, max(-float(self.burst), self._tokens(key, now) - cost), now)

    def charge(self, host: str | None, n: int, nbytes: int = 0, per_token: int = 1) -> None:
        """Charge ``n`` reports in a body of ``nbytes`` bytes to ``host``'s bucket (the larger of
        ``n`` and ``nbytes / per_token`` tokens), or refuse them (charging one token, or the body's
        bytes when they weigh more than its reports, down to minus the burst).

        Raises
        ------
        CollectError
            413 ``too_many_reports`` when ``n`` exceeds the burst (no wait would let them in);
            429 with ``Retry-After`` when the bucket holds fewer than ``n`` tokens.
        """
        if not self.on:
            return
        if n > self.burst:
            raise CollectError(
                413, "too_many_reports", f"{n:,} reports in one request; one address may send at most {self.burst:,}"
            )
        key, now = address_key(host), self.clock()
        tokens, weight = self._tokens(key, now), nbytes / per_token
        cost = max(float(n), weight)
        if tokens < cost:
            # refused: one token, or the body's bytes when they weigh more than its reports
            left = tokens - weight if weight > n else (max(0.0, tokens - 1) if tokens >= 0 else tokens)
            left = max(-float(self.burst), left)
            self._set(key, left, now)
            raise self._refuse(key, min(cost, self.burst), left)
        self._set(key, tokens - cost, now)


class Contributions:
    """What one address may have stored in an open campaign: ``burst + share * n`` reports, ``n``
    the reports the campaign holds (so an address's part converges to about ``share / (1 - share)``
    of the others' plus the burst, however it splits its batches). Before, one address's single
    10,000-report batch moved an estimate from 0.00 to 1.00 against 5,000 honest reports.

    A batch that would take its address beyond its part is refused whole: 429 ``address_share``.
    The counts are this process's (with ``--workers N``, N times the part; a restart forgets them),
    bounded in number like the buckets; requests with an admin's or analyst's token, and the
    respondents of invited campaigns (one report per code), are not counted, nor any request
    when the rate limit is off (``--rate 0``).

    Parameters
    ----------
    share : float
        The part of the campaign's reports one address may hold (0 with ``burst`` 0: no bound).
    burst : int
        Reports any address may hold in any campaign.
    held : callable
        The reports a campaign holds now (its tally's ``n``).
    """

    def __init__(self, share: float, burst: int, held: Callable[[str], int], max_keys: int = 100_000) -> None:
        self.share = float(share)
        self.burst = int(burst)
        self.held = held
        self.max_keys = max_keys
        self._counts: OrderedDict[tuple[str, str], int] = OrderedDict()

    @property
    def on(self) -> bool:
        return self.share > 0 or self.burst > 0

    def allowed(self, n: int) -> int:
        """The most reports one address may hold in a campaign that holds ``n``."""
        return self.burst + int(self.share * n)

    def reserve(self, campaign_id: str, host: str | None, n: int) -> None:
        """Count ``n`` more reports of ``host`` in the campaign, or refuse them (429 ``address_share``)."""
        if not self.on:
            return
        key = (campaign_id, address_key(host))
        mine, cap = self._counts.get(key, 0), self.allowed(self.held(campaign_id))
        if mine + n > cap:
            raise CollectError(
                429,
                "address_share",
                f"{address_key(host)} has sent {mine:,} reports to this campaign, which holds "
                f"{self.held(campaign_id):,}; one address may hold at most {self.burst:,} plus "
                f"{self.share:.0%} of them ({cap:,} now): these {n:,} are refused, nothing was stored",
                {"Retry-After": "60"},
            )
        self._counts[key] = mine + n
        self._counts.move_to_end(key)
        while len(self._counts) > self.max_keys:
            self._counts.popitem(last=False)

    def settle(self, campaign_id: str, host: str | None, n: int, stored: int) -> None:
        """``stored`` of the ``n`` reserved reports were stored (duplicates and failures give theirs back)."""
        if not self.on or n == stored:
            return
        key = (campaign_id, address_key(host))
        if key in self._counts:
            self._counts[key] = max(0, self._counts[key] - (n - stored))
