"""Bearer tokens and roles.

Roles (what each may call is in :mod:`pldp.service.app`; the routes require them through the
dependencies of :mod:`pldp.service.deps`):

* **admin** creates and closes campaigns, lists them, and creates analyst tokens. It does not
  read estimates or reports: an organisation that wants its admin to read data gives it an
  analyst token too, so every reader of a campaign's data is named by a grant.
* **analyst** reads the estimates and exports the reports of the campaigns it is granted.
* **respondent** is anonymous: it fetches a campaign's spec and page and submits reports.

A token is 32 random bytes from the OS CSPRNG (:func:`secrets.token_urlsafe`), shown once when
made. The store keeps only its SHA-256; a presented token is hashed, looked up by its hash, and
the stored hash compared with :func:`hmac.compare_digest` (constant time). Tokens are long and
random, so a hash without a salt is not open to dictionary attacks.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Principal", "identify", "new_token", "read_token_file", "token_hash"]

#: Bytes of randomness in a token.
TOKEN_BYTES = 32


def new_token() -> str:
    """A fresh token (43 URL-safe characters, 256 bits from the OS CSPRNG)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> bytes:
    """The SHA-256 digest the store keeps instead of the token."""
    return hashlib.sha256(token.encode("utf-8")).digest()


def read_token_file(path: str | Path) -> str:
    """A token from a file (surrounding white space ignored); at least 32 characters."""
    token = Path(path).read_text(encoding="utf-8").strip()
    if len(token) < 32 or any(c.isspace() for c in token):
        raise ValueError(f"{path}: a token must be at least 32 characters without white space")
    return token


@dataclass(frozen=True)
class Principal:
    """Who made a request: a role and, for an analyst, the campaigns it may read."""

    role: str  # "admin", "analyst" or "respondent"
    label: str = ""
    campaigns: frozenset[str] = frozenset()

    def may_read(self, campaign_id: str) -> bool:
        return self.role == "analyst" and campaign_id in self.campaigns


ANONYMOUS = Principal("respondent")


def identify(conn: sqlite3.Connection, authorization: str | None) -> Principal | None:
    """The principal of an ``Authorization`` header: anonymous without one, ``None`` for a bad one."""
    if not authorization:
        return ANONYMOUS
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    digest = token_hash(token.strip())
    row = conn.execute("SELECT hash, role, label FROM tokens WHERE hash = ?", (digest,)).fetchone()
    if row is None or not hmac.compare_digest(bytes(row[0]), digest):
        return None
    grants = conn.execute("SELECT campaign_id FROM grants WHERE token_hash = ?", (digest,)).fetchall()
    return Principal(str(row[1]), str(row[2]), frozenset(g[0] for g in grants))


def has_admin(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM tokens WHERE role = 'admin' LIMIT 1").fetchone() is not None
