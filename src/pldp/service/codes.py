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
from collections.abc import Callable
from typing import Any

from pldp.service import auth, collect, rounds, store
from pldp.service.collect import CollectError, Prepared
from pldp.service.jobs import Context
from pldp.service.refusals import ConflictError, UnauthorizedError, unknown_campaign
from pldp.service.store import campaign_table, code_table

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


def current_round(conn: store.Connection, campaign_id: str) -> int:
    """The campaign's round now (:mod:`pldp.service.rounds`): a code sends one report per round."""
    schedule = rounds.schedule_of(conn, campaign_id)
    return 1 if schedule is None else schedule.current(rounds.clock())


# ------------------------------------------------------------------------------------ who submits


def _code_of(conn: store.Connection, campaign_id: str, token: str) -> bytes | None:
    """The hash of ``token`` if it is a respondent code of the campaign (in any state), else None."""
    digest = auth.token_hash(token)
    stored = code_table.code_of(conn, digest, campaign_id)
    return digest if stored is not None and hmac.compare_digest(stored, digest) else None


def submitter(
    conn: store.Connection, campaign_id: str, authorization: str | None, access: Callable[[str], str | None]
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
    camp = campaign_table.campaign_fields(ctx.conn, campaign_id, "key", "closed_at")
    if camp is None or camp[1] is not None:
        return collect.store_batch(ctx, campaign_id, prep)  # its 404 or 409 (closed)
    key = int(camp[0])
    row = code_table.code_lifetime(ctx.conn, code, key)
    if row is None:  # (revocation never deletes a code: a code seen by the request is still here)
        raise UnauthorizedError("unknown_code", f"this code is not one of this survey's; {NEED_CODE}")
    report_id = prep.ids
    sent = code_table.code_sent(ctx.conn, code, report_id)
    if sent is not None:  # the same report again, in its round or a later one: a duplicate
        return collect.store_batch(ctx, campaign_id, prep, turn=sent)
    turn = collect.round_to_store(ctx.conn, campaign_id, asked or rounds.Asked())
    if code_table.code_round_used(ctx.conn, code, turn):
        raise ConflictError(
            "code_used",
            f"this code has sent another report already in round {turn}; a code sends one report per round",
        )
    if row[1] is not None:
        raise UnauthorizedError("code_revoked", f"this code was revoked at {auth.stamp(row[1])}")
    if now >= row[0]:
        raise UnauthorizedError("code_expired", f"this code expired at {auth.stamp(row[0])}")
    out = collect.store_batch(ctx, campaign_id, prep, cap, turn)
    if out["accepted"]:
        code_table.insert_code_use(ctx.conn, code, turn, report_id, now)
    return out


def _invited_key(ctx: Context, campaign_id: str) -> int:
    """The key of an invited campaign that is not closed (:class:`~pldp.service.refusals.NotFoundError`,
    :class:`~pldp.service.refusals.ConflictError` otherwise)."""
    row = campaign_table.campaign_fields(ctx.conn, campaign_id, "key", "closed_at", "access")
    if row is None:
        raise unknown_campaign(campaign_id)
    if row[2] != "invited":
        raise ConflictError(
            "campaign_open", f"campaign {campaign_id} is open to anyone: codes are for invited campaigns"
        )
    if row[1] is not None:
        raise ConflictError("campaign_closed", f"campaign {campaign_id} is closed and takes no reports")
    return int(row[0])


def add_codes(ctx: Context, campaign_id: str, hashes: bytes, now: float, expires_at: float) -> int:
    """Store the hashes of new codes (concatenated, 32 bytes each) of an invited campaign that is
    not closed; return how many (a writer job)."""
    key = _invited_key(ctx, campaign_id)
    code_table.insert_codes(ctx.conn, key, hashes, now, expires_at)
    return len(hashes) // 32


def hash_codes(codes: list[str]) -> bytes:
    """The SHA-256 hashes of ``codes``, each once, in sorted order, concatenated (32 bytes each):
    made before a writer job, which then only looks them up."""
    return b"".join(sorted({auth.token_hash(c) for c in codes}))


def revoke_codes(ctx: Context, campaign_id: str, hashes: bytes | None, now: float) -> dict[str, int]:
    """Revoke the campaign's codes of ``hashes`` (:func:`hash_codes`), or with None every code not
    used in the current round (a writer job): ``{"revoked": codes revoked now, "unknown": codes
    named that are not the campaign's}``. A revoked code stays stored (its use, if any, too); a
    revocation is final."""
    key = store.campaign_key(ctx.conn, campaign_id)
    if key is None:
        raise unknown_campaign(campaign_id)
    if hashes is None:
        revoked = code_table.revoke_unused(ctx.conn, key, now, current_round(ctx.conn, campaign_id))
        return {"revoked": revoked, "unknown": 0}
    n = len(hashes) // 32
    if not n:
        return {"revoked": 0, "unknown": 0}
    count, revoked = code_table.revoke_named(ctx.conn, key, hashes, now)
    return {"revoked": revoked, "unknown": n - count}


def code_counts(conn: store.Connection, campaign_id: str, now: float) -> dict[str, Any]:
    """How many codes the campaign has: issued; used (in the current round); revoked; expired (unused
    and not revoked); usable (none of those). A 404 for an unknown campaign."""
    key = store.campaign_key(conn, campaign_id)
    if key is None:
        raise unknown_campaign(campaign_id)
    issued, used, revoked, expired, usable = code_table.code_counts(conn, key, now, current_round(conn, campaign_id))
    return {
        "campaign": campaign_id,
        "issued": issued,
        "used": used,
        "revoked": revoked,
        "expired": expired,
        "usable": usable,
    }
