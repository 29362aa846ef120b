"""Respondent codes: who may report to an invited campaign.

A campaign's *access* is the collector's setting, chosen when the campaign is created (not part of
its spec, whose id is its hash): ``open`` takes reports from anyone, ``invited`` only with a
respondent code. The admin issues codes in bulk (:func:`add_codes`, at most :data:`MAX_CODES` per
request); each is

* 120 random bits from the OS CSPRNG, written as 24 lower-case base-32 characters
  (:func:`new_codes`), shown once; the store keeps only its SHA-256, looked up by hash and
  compared in constant time, as tokens are (:mod:`pldp.service.auth`);
* presented as ``Authorization: Bearer <code>`` with a batch of exactly one report;
* good for one report per round (a campaign that does not recur has the one round 1; a recurring
  one, :mod:`pldp.service.rounds`, a round per day, week or opening: the code sends one report in
  each), with an expiry (30 days unless the request says otherwise; a code of a long recurring
  campaign needs a longer one), and revocable.

The rule, applied alike by the fast path and the documented route (both call
:meth:`pldp.service.ingest.Ingest.accept`, which asks :func:`submitter` and runs :func:`job_for`):

* an invited campaign without a code: 401 ``code_required``; with a code that is not one of the
  campaign's: 401 ``unknown_code``; with an admin or analyst token: 403;
* a code used for *another* report in the round the report is stored in (the round it names, if
  open, else the current one: :func:`pldp.service.collect.round_to_store`): 409 ``code_used``,
  nothing stored;
* the same report again (same id, same payload) with its code: acknowledged as a duplicate,
  counted once, even after the code expired or was revoked, or in a later round (the report is
  stored already, in its round);
* else an expired (401 ``code_expired``) or revoked (401 ``code_revoked``) code is refused, and a
  good one stores the report and records the code's use *in the same transaction*
  (:func:`store_coded`, a job of the writer), so that a report and the use of its code are
  committed together or not at all, and acknowledged only once both are on disk.

An open campaign needs no code; an unknown bearer token there is a 401 as on every route.

Codes are not unlinkable: the collector can tell which invitation sent which report. Under local
differential privacy that is allowed, since the report itself protects the answer; a mode in which
the collector cannot link a report to an invitation (blind RSA signatures, RFC 9474, as in Privacy
Pass) is future work (``docs/collector.md``).
"""

from __future__ import annotations

import base64
import hmac
import secrets
import sqlite3
from collections.abc import Callable
from typing import Any

from pldp.service import auth, collect, rounds
from pldp.service.collect import CollectError, Prepared
from pldp.service.jobs import Context

__all__ = [
    "CODE_LIFETIME",
    "MAX_CODES",
    "add_codes",
    "code_counts",
    "current_round",
    "hash_codes",
    "job_for",
    "new_codes",
    "revoke_codes",
    "store_coded",
    "submitter",
]

#: Bytes of randomness in a code (120 bits: beyond guessing, short enough to type from a letter).
CODE_BYTES = 15
#: Characters of a code: base 32 writes 5 bytes as 8 characters.
CODE_CHARS = CODE_BYTES * 8 // 5
#: Seconds a code lives unless the request says otherwise (30 days).
CODE_LIFETIME = 30 * 86400.0
#: The most codes one request may issue or name.
MAX_CODES = 100_000

#: What the survey page and a client are told, by refusal.
NEED_CODE = (
    "this survey takes answers only through the personal link you were given (the code after #code= in "
    "it), sent as Authorization: Bearer <code>"
)


def new_codes(count: int) -> tuple[list[str], bytes]:
    """``count`` fresh codes and their SHA-256 hashes, concatenated (32 bytes each) in sorted
    order, so that storing them appends to the table's B-tree rather than writing all over it.

    The codes are cut from one base-32 text of ``15 * count`` random bytes: 15 bytes are exactly
    24 characters, so each code is 120 bits of its own.
    """
    text = base64.b32encode(secrets.token_bytes(CODE_BYTES * count)).decode("ascii").lower()
    codes = [text[i : i + CODE_CHARS] for i in range(0, len(text), CODE_CHARS)]
    return codes, b"".join(sorted(auth.token_hash(c) for c in codes))


def current_round(conn: sqlite3.Connection, campaign_id: str) -> int:
    """The campaign's round now (:mod:`pldp.service.rounds`): a code sends one report per round."""
    schedule = rounds.schedule_of(conn, campaign_id)
    return 1 if schedule is None else schedule.current(rounds.clock())


# ------------------------------------------------------------------------------------ who submits


def _code_of(conn: sqlite3.Connection, campaign_id: str, token: str) -> bytes | None:
    """The hash of ``token`` if it is a respondent code of the campaign (in any state), else None."""
    digest = auth.token_hash(token)
    row = conn.execute(
        "SELECT c.hash FROM codes c JOIN campaigns k ON k.key = c.campaign_key WHERE c.hash = ? AND k.id = ?",
        (digest, campaign_id),
    ).fetchone()
    return digest if row is not None and hmac.compare_digest(bytes(row[0]), digest) else None


def submitter(
    conn: sqlite3.Connection, campaign_id: str, authorization: str | None, access: Callable[[str], str | None]
) -> bytes | None:
    """Who may submit to the campaign: None for anyone (an open campaign), or the hash of the
    respondent code of an invited one; the refusals are the module doc's.

    ``access(campaign_id)`` is the campaign's access (None for an unknown campaign, whose 404 the
    caller gives after this: an unknown token gets its 401 first, as on every route).
    """
    found = auth.resolve(conn, authorization)
    if isinstance(found, auth.Principal):
        if access(campaign_id) != "invited":
            return None
        if found.role == "respondent":
            raise CollectError(401, "code_required", NEED_CODE)
        raise CollectError(
            403, "forbidden", "an invited campaign takes reports only with a respondent code; a token is not one"
        )
    token = auth.bearer(authorization or "")
    if token is None or found != auth.NOT_VALID:  # not a bearer header, or an expired or revoked token
        raise CollectError(401, "unauthorized", found)
    digest = _code_of(conn, campaign_id, token)
    if digest is not None:
        return digest
    if access(campaign_id) == "invited":
        raise CollectError(401, "unknown_code", f"this code is not one of this survey's; {NEED_CODE}")
    raise CollectError(401, "unauthorized", found)


def job_for(
    campaign_id: str,
    prep: Prepared,
    code: bytes | None,
    now: float,
    cap: int | None = None,
    asked: rounds.Asked | None = None,
) -> Callable[[Context], dict[str, int]]:
    """The writer job that stores a validated batch: with a respondent code (``code``, its hash) a
    batch of exactly one report (else a 400) and :func:`store_coded`; without, the plain
    :func:`~pldp.service.collect.store_batch`. ``cap``: the most reports the campaign takes;
    ``asked``: the round the submission names (:mod:`pldp.service.rounds`)."""
    if code is None:
        return lambda ctx: collect.store_batch(ctx, campaign_id, prep, cap, asked)
    if len(prep) != 1:
        raise CollectError(
            400, "one_report_per_code", f"a respondent code sends exactly one report; this batch holds {len(prep)}"
        )
    return lambda ctx: store_coded(ctx, campaign_id, prep, code, now, cap, asked)


# ------------------------------------------------------------------------------------ writer jobs


def store_coded(
    ctx: Context,
    campaign_id: str,
    prep: Prepared,
    code: bytes,
    now: float,
    cap: int | None = None,
    asked: rounds.Asked | None = None,
) -> dict[str, int]:
    """Store a one-report batch sent with the respondent code of hash ``code``, and record the use
    of the code in the same transaction (a writer job; the rules are the module doc's)."""
    camp = ctx.conn.execute("SELECT key, closed_at FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if camp is None or camp[1] is not None:
        return collect.store_batch(ctx, campaign_id, prep)  # its 404 or 409 (closed)
    key = int(camp[0])
    row = ctx.conn.execute(
        "SELECT expires_at, revoked_at FROM codes WHERE hash = ? AND campaign_key = ?", (code, key)
    ).fetchone()
    if row is None:  # (revocation never deletes a code: a code seen by the request is still here)
        raise CollectError(401, "unknown_code", f"this code is not one of this survey's; {NEED_CODE}")
    report_id = prep.ids
    sent = ctx.conn.execute(
        "SELECT round FROM code_uses WHERE code_hash = ? AND report_id = ?", (code, report_id)
    ).fetchone()
    if sent is not None:  # the same report again, in its round or a later one: a duplicate
        return collect.store_batch(ctx, campaign_id, prep, turn=int(sent[0]))
    turn = collect.round_to_store(ctx.conn, campaign_id, asked or rounds.Asked())
    used = ctx.conn.execute(
        "SELECT report_id FROM code_uses WHERE code_hash = ? AND round = ?", (code, turn)
    ).fetchone()
    if used is not None:
        raise CollectError(
            409,
            "code_used",
            f"this code has sent another report already in round {turn}; a code sends one report per round",
        )
    if row[1] is not None:
        raise CollectError(401, "code_revoked", f"this code was revoked at {auth.stamp(row[1])}")
    if now >= row[0]:
        raise CollectError(401, "code_expired", f"this code expired at {auth.stamp(row[0])}")
    out = collect.store_batch(ctx, campaign_id, prep, cap, turn)
    if out["accepted"]:
        ctx.conn.execute(
            "INSERT INTO code_uses (code_hash, round, report_id, used_at) VALUES (?, ?, ?, ?)",
            (code, turn, report_id, now),
        )
    return out


def _invited_key(ctx: Context, campaign_id: str) -> int:
    """The key of an invited campaign that is not closed (404, 409 otherwise)."""
    row = ctx.conn.execute("SELECT key, closed_at, access FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise CollectError(404, "unknown_campaign", f"no campaign {campaign_id}")
    if row[2] != "invited":
        raise CollectError(
            409, "campaign_open", f"campaign {campaign_id} is open to anyone: codes are for invited campaigns"
        )
    if row[1] is not None:
        raise CollectError(409, "campaign_closed", f"campaign {campaign_id} is closed and takes no reports")
    return int(row[0])


#: The hashes of a blob ``:hashes`` (``:n`` of them, 32 bytes each) as the table ``h``: one
#: statement then stores or revokes a whole list of codes (as reports are stored).
_NAMED = """
WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k + 1 < :n),
h(hash) AS (SELECT substr(:hashes, 32 * k + 1, 32) FROM i)
"""


def add_codes(ctx: Context, campaign_id: str, hashes: bytes, now: float, expires_at: float) -> int:
    """Store the hashes of new codes (concatenated, 32 bytes each) of an invited campaign that is
    not closed; return how many (a writer job)."""
    key = _invited_key(ctx, campaign_id)
    n = len(hashes) // 32
    if n:
        ctx.conn.execute(
            f"{_NAMED} INSERT INTO codes (hash, campaign_key, created_at, expires_at) "
            "SELECT hash, :key, :now, :expires FROM h",
            {"n": n, "hashes": hashes, "key": key, "now": now, "expires": expires_at},
        )
    return n


def hash_codes(codes: list[str]) -> bytes:
    """The SHA-256 hashes of ``codes``, each once, in sorted order, concatenated (32 bytes each):
    made before a writer job, which then only looks them up."""
    return b"".join(sorted({auth.token_hash(c) for c in codes}))


def revoke_codes(ctx: Context, campaign_id: str, hashes: bytes | None, now: float) -> dict[str, int]:
    """Revoke the campaign's codes of ``hashes`` (:func:`hash_codes`), or with None every code not
    used in the current round (a writer job): ``{"revoked": codes revoked now, "unknown": codes
    named that are not the campaign's}``. A revoked code stays stored (its use, if any, too); a
    revocation is final."""
    row = ctx.conn.execute("SELECT key FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise CollectError(404, "unknown_campaign", f"no campaign {campaign_id}")
    key = int(row[0])
    if hashes is None:
        cur = ctx.conn.execute(
            "UPDATE codes SET revoked_at = ? WHERE campaign_key = ? AND revoked_at IS NULL "
            "AND hash NOT IN (SELECT code_hash FROM code_uses WHERE round = ?)",
            (now, key, current_round(ctx.conn, campaign_id)),
        )
        return {"revoked": cur.rowcount, "unknown": 0}
    n = len(hashes) // 32
    if not n:
        return {"revoked": 0, "unknown": 0}
    named = {"n": n, "hashes": hashes, "key": key, "now": now}
    known = ctx.conn.execute(f"{_NAMED} SELECT COUNT(*) FROM codes WHERE campaign_key = :key AND hash IN h", named)
    count = int(known.fetchone()[0])
    ctx.conn.execute(
        f"{_NAMED} UPDATE codes SET revoked_at = :now WHERE campaign_key = :key AND revoked_at IS NULL AND hash IN h",
        named,
    )
    # (sqlite3's rowcount is -1 for a statement that starts with WITH; changes() is SQLite's own)
    revoked = int(ctx.conn.execute("SELECT changes()").fetchone()[0])
    return {"revoked": revoked, "unknown": n - count}


def code_counts(conn: sqlite3.Connection, campaign_id: str, now: float) -> dict[str, Any]:
    """How many codes the campaign has: issued; used (in the current round); revoked; expired (unused
    and not revoked); usable (none of those). A 404 for an unknown campaign."""
    row = conn.execute("SELECT key FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise CollectError(404, "unknown_campaign", f"no campaign {campaign_id}")
    key = int(row[0])
    counts = conn.execute(
        "SELECT COUNT(*), COUNT(u.code_hash), COUNT(c.revoked_at), "
        "SUM(u.code_hash IS NULL AND c.revoked_at IS NULL AND c.expires_at <= :now), "
        "SUM(u.code_hash IS NULL AND c.revoked_at IS NULL AND c.expires_at > :now) "
        "FROM codes c LEFT JOIN code_uses u ON u.code_hash = c.hash AND u.round = :round WHERE c.campaign_key = :key",
        {"now": now, "key": key, "round": current_round(conn, campaign_id)},
    ).fetchone()
    issued, used, revoked, expired, usable = (int(v or 0) for v in counts)
    return {
        "campaign": campaign_id,
        "issued": issued,
        "used": used,
        "revoked": revoked,
        "expired": expired,
        "usable": usable,
    }
