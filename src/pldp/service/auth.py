"""Bearer tokens and roles, and how long a token lives.

Roles (what each may call is in :mod:`pldp.service.app`; the routes require them through the
dependencies of :mod:`pldp.service.deps`):

* **admin** creates and closes campaigns, lists them, issues respondent codes, and creates,
  lists and revokes analyst tokens. It does not read estimates or reports: an organisation that
  wants its admin to read data gives it an analyst token too, so every reader of a campaign's
  data is named by a grant.
* **analyst** reads the estimates and exports the reports of the campaigns it is granted.
* **respondent** fetches a campaign's spec and page and submits reports: anonymously to an open
  campaign, with a one-time respondent code to an invited one (:mod:`pldp.service.codes`).

A token is 32 random bytes from the OS CSPRNG (:func:`secrets.token_urlsafe`), shown once when
made. The store keeps only its SHA-256; a presented token is hashed, looked up by its hash, and
the stored hash compared with :func:`hmac.compare_digest` (constant time). Tokens are long and
random, so a hash without a salt is not open to dictionary attacks.

Every token has a short public id (:func:`new_token_id`: random, not derived from the token, so
that listing and revoking tokens never shows anything of a secret), an expiry, and once revoked
the time of its revocation. A token is looked up in the store at every request, with no cache in
any process, so an expiry or a revocation holds from the next request on, in every worker.

There is one admin token at a time: storing a new one (a new ``--admin-token-file``, or
``POST /v1/tokens/rotate``) revokes the others (:func:`pldp.service.collect.add_token`). A
token that expired or was revoked never works again, not even through ``--admin-token-file``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from pldp.service import store
from pldp.service.store import token_table

__all__ = [
    "ADMIN_LIFETIME",
    "ANALYST_LIFETIME",
    "MAX_LIFETIME",
    "Principal",
    "TokenRow",
    "has_admin",
    "identify",
    "new_token",
    "new_token_id",
    "read_token_file",
    "resolve",
    "stamp",
    "token_hash",
    "tokens",
]

#: Bytes of randomness in a token.
TOKEN_BYTES = 32
#: Seconds an analyst token lives unless its request says otherwise (90 days).
ANALYST_LIFETIME = 90 * 86400.0
#: Seconds an admin token lives (365 days): a token of ``--admin-token-file``, of the first
#: start, or of a rotation that names no lifetime.
ADMIN_LIFETIME = 365 * 86400.0
#: The longest lifetime a token or a respondent code may be given (10 years).
MAX_LIFETIME = 3650 * 86400.0


def new_token() -> str:
    """A fresh token (43 URL-safe characters, 256 bits from the OS CSPRNG)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def new_token_id() -> str:
    """A token's public id: 12 hex digits (48 random bits), unrelated to the token itself."""
    return secrets.token_hex(6)


def token_hash(token: str) -> bytes:
    """The SHA-256 digest the store keeps instead of the token."""
    return hashlib.sha256(token.encode("utf-8")).digest()


def read_token_file(path: str | Path) -> str:
    """A token from a file (surrounding white space ignored); at least 32 characters."""
    token = Path(path).read_text(encoding="utf-8").strip()
    if len(token) < 32 or any(c.isspace() for c in token):
        raise ValueError(f"{path}: a token must be at least 32 characters without white space")
    return token


def stamp(t: float) -> str:
    """A time (seconds since the epoch) as an ISO 8601 UTC instant, for reasons people read."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


@dataclass(frozen=True)
class Principal:
    """Who made a request: a role, the token's public id and label, and for an analyst the
    campaigns it may read."""

    role: str  # "admin", "analyst" or "respondent"
    label: str = ""
    campaigns: frozenset[str] = frozenset()
    token_id: str = ""

    def may_read(self, campaign_id: str) -> bool:
        return self.role == "analyst" and campaign_id in self.campaigns


ANONYMOUS = Principal("respondent")

#: The reason given for a bearer token the store does not hold.
NOT_VALID = "the bearer token is not valid"


def bearer(authorization: str) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header; None for any other header."""
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def resolve(conn: store.Connection, authorization: str | None, now: float | None = None) -> Principal | str:
    """The principal of an ``Authorization`` header, or why it is refused (a sentence).

    No header is the anonymous respondent. A token is refused when the store does not hold its
    hash, when it expired (at or after ``expires_at``), or once revoked. ``now`` defaults to the
    clock.
    """
    if not authorization:
        return ANONYMOUS
    token = bearer(authorization)
    if token is None:
        return NOT_VALID
    digest = token_hash(token)
    row = token_table.token_by_hash(conn, digest)
    if row is None or not hmac.compare_digest(bytes(row[0]), digest):
        return NOT_VALID
    now = time.time() if now is None else now
    if row[5] is not None:
        return f"this token was revoked at {stamp(row[5])}; ask the admin for a new one"
    if row[4] is not None and now >= row[4]:
        return f"this token expired at {stamp(row[4])}; ask the admin for a new one"
    grants = token_table.grants_of(conn, digest)
    return Principal(str(row[1]), str(row[2]), frozenset(grants), str(row[3]))


def identify(conn: store.Connection, authorization: str | None) -> Principal | None:
    """The principal of an ``Authorization`` header: anonymous without one, ``None`` for a token
    that is not valid (unknown, expired or revoked; :func:`resolve` says which)."""
    found = resolve(conn, authorization)
    return found if isinstance(found, Principal) else None


def has_admin(conn: store.Connection) -> bool:
    """Whether the store holds an admin token that works now (not expired, not revoked)."""
    return token_table.has_admin(conn, time.time())


@dataclass(frozen=True)
class TokenRow:
    """A token as the admin may see it: never the token, nor its hash."""

    id: str
    role: str
    label: str
    campaigns: list[str]
    created_at: float
    expires_at: float | None
    revoked_at: float | None

    def state(self, now: float) -> str:
        """``active``, ``expired`` or ``revoked``."""
        if self.revoked_at is not None:
            return "revoked"
        return "expired" if self.expires_at is not None and now >= self.expires_at else "active"


def tokens(conn: store.Connection) -> list[TokenRow]:
    """Every token the store holds, oldest first, with its grants."""
    rows = token_table.token_rows(conn)
    return [
        TokenRow(str(i), str(role), str(label), sorted((grants or "").split()), float(c), e, r)
        for i, role, label, c, e, r, grants in rows
    ]
