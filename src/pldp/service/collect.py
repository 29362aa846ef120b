"""What the collector does to its store: the jobs of :class:`pldp.service.writer.Writer`.

A batch of reports is validated in the request's thread (:func:`prepare_batch`: JSON, spec id,
report ids, payload ranges, via :func:`pldp.deploy.decode`, which refuses the whole batch on the
first bad report and names it), then stored by :func:`store_batch` in the writer's transaction:

* a report whose id is already stored is a retry and counts once (the response says how many
  were duplicates), *whatever payload it carries*: a resend with another payload (a conflict) is
  acknowledged exactly as a duplicate is, is not stored, and is counted in the campaign's
  ``conflicts`` (shown to the admin and analysts, :class:`pldp.service.models.CampaignEntry`).
  Every resend, conflicting or not, is counted in ``resends`` by the same write, so that the
  two take the same time to answer (a write, and its sync, for conflicts only would time them).
  Refusing it instead (409) made the answer depend on the stored payload, an oracle that read a
  report's payload to anyone who knew its id (a few probes, one per candidate payload); the
  acknowledgement is the same for the sender, whose retry sends the stored bytes again, and
  nothing is counted twice;
* the new reports are inserted, with their round (:func:`round_to_store`), and their tally merged
  into the campaign's (and into its round's, in a recurring campaign), in one transaction.

A closed campaign takes no reports (409), and a recurring one no new report for a round that is
not open (409, :mod:`pldp.service.rounds`). A refusal of the request as it arrives (malformed JSON or
reports, too many) is a :class:`CollectError` with an HTTP status; a refusal of a writer job (an
unknown or closed campaign, say) is a domain error of :mod:`pldp.service.refusals`, which
:mod:`pldp.service.errors` maps to its status. Either becomes a JSON error of the API.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp.deploy import ReportBatch, Spec, decode
from pldp.errors import PLDPError, ReportError
from pldp.service import auth, jsonlimits, rounds, store
from pldp.service.faults import StoreUnavailableError
from pldp.service.jobs import Context
from pldp.service.refusals import ConflictError, InvalidError, NotFoundError, unknown_campaign
from pldp.service.store import campaign_table, token_table

__all__ = [
    "CollectError",
    "Prepared",
    "TokenReusedError",
    "add_token",
    "open_round",
    "prepare_batch",
    "read_json",
    "revoke_token",
    "round_to_store",
    "store_batch",
    "unavailable",
]


class CollectError(Exception):
    """A request the collector refuses: an HTTP ``status``, a short ``code``, a ``reason`` and
    the answer's extra ``headers`` (``Retry-After`` of a 503, say)."""

    def __init__(self, status: int, code: str, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.code = code
        self.reason = reason
        self.headers = dict(headers or {})


def unavailable(exc: StoreUnavailableError) -> CollectError:
    """The 503 of a write the store could not take (:mod:`pldp.service.faults`)."""
    return CollectError(
        503, exc.code, f"{exc.reason}; nothing was stored, send it again", {"Retry-After": str(exc.retry_after)}
    )


@dataclass(frozen=True)
class Prepared:
    """A validated batch: its reports' ids and stored rows, each concatenated
    (:func:`pldp.service.store.row_table`), and the tally of all of them."""

    spec: Spec
    batch: ReportBatch
    ids: bytes
    rows: bytes
    width: int
    tally: Any

    def __len__(self) -> int:
        return len(self.ids) // 16

    def report(self, i: int) -> tuple[bytes, bytes]:
        """The id and row of report ``i``."""
        return self.ids[16 * i : 16 * i + 16], self.rows[self.width * i : self.width * (i + 1)]


def read_json(body: bytes | bytearray, max_values: int | None = None) -> Any:
    """The JSON value of a request body, read within :mod:`pldp.service.jsonlimits`' bounds.

    Raises
    ------
    CollectError
        400 for a body that is not JSON or nests too deep or holds too long a number (the code
        names which); 413 ``too_many_reports`` for more values than ``max_values``.
    """
    try:
        return jsonlimits.loads(body, max_values=max_values)
    except jsonlimits.JSONLimitError as exc:
        if exc.code == "too_many_values":
            raise CollectError(
                413, "too_many_reports", f"{exc.reason}: more than the reports a request may carry"
            ) from None
        raise CollectError(400, exc.code, exc.reason) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CollectError(400, "malformed_json", f"the body is not JSON: {exc}") from None


def prepare_batch(spec: Spec, body: bytes | bytearray, max_reports: int) -> Prepared:
    """Parse and validate a request body of reports for ``spec`` (all or nothing).

    The body is scanned before it is parsed (:func:`read_json`): one with more JSON values than
    ``max_reports`` reports of ``spec`` can hold is refused without building them.

    Raises
    ------
    CollectError
        400 for malformed JSON or reports (the reason names the first bad report), 413 for more
        than ``max_reports`` reports.
    """
    data = read_json(body, jsonlimits.report_values(spec, max_reports))
    reports = data.get("reports") if isinstance(data, dict) and "reports" in data else data
    count = len(reports) if isinstance(reports, list) else 1
    if count > max_reports:
        raise CollectError(413, "too_many_reports", f"{count} reports in one request; at most {max_reports}")
    try:
        batch = ReportBatch.from_json(data, spec.root, spec.id)
        if len(batch) == 0:
            raise ReportError("the batch holds no reports")
        tally = decode(spec, batch)
    except ReportError as exc:
        raise CollectError(400, "bad_report", str(exc)) from None
    return Prepared(spec, batch, batch.ids.tobytes(), *store.row_table(batch), tally)


def round_to_store(conn: Any, campaign_id: str, asked: rounds.Asked) -> int:
    """The round in which a submission's new reports are stored (:mod:`pldp.service.rounds`): the
    round it names if that is open, else the current round.

    Raises
    ------
    NotFoundError
        For an unknown campaign (404).
    ConflictError
        ``round_not_started`` or ``round_closed`` for a named round that is not open now (409).
    """
    schedule = rounds.schedule_of(conn, campaign_id)
    if schedule is None:
        raise unknown_campaign(campaign_id)
    now = asked.at()
    current = schedule.current(now)
    if asked.round is None:
        return current
    if asked.round in schedule.accepts(now, asked.grace):
        return asked.round
    if asked.round > current:
        raise ConflictError(
            "round_not_started", f"campaign {campaign_id} is in round {current}; {asked.round} has not started"
        )
    raise ConflictError(
        "round_closed",
        f"round {asked.round} of campaign {campaign_id} is over (this is round {current}): reload the survey to "
        "answer the current round",
    )


def store_batch(
    ctx: Context, campaign_id: str, prep: Prepared, cap: int | None = None, turn: int | rounds.Asked | None = None
) -> dict[str, int]:
    """Store the new reports of a prepared batch and count them (a writer job; see module doc).

    The batch's ids are looked up in the writer's index of stored ids (:meth:`Context.find`); a
    stored one is a retry if its stored row is the same (counted once, in whichever round it was
    stored) and a conflict otherwise: acknowledged alike (a duplicate in the answer, which never
    depends on the stored payload), not stored, and counted in the campaign's ``conflicts``. The
    new reports are appended in one
    insert, in the round ``turn`` (a round number, or what the submission asked:
    :func:`round_to_store`; None: the current round), and their ids staged. A batch of retries
    only is acknowledged whatever round it names. With ``cap`` (the collector's ``--campaign-cap``)
    or the campaign's own cap (set at creation; the smaller of the two), a batch whose new reports
    would take the campaign's count over it is refused (:class:`~pldp.service.refusals.ConflictError`
    ``campaign_full``); its retries are still acknowledged.
    """
    row = campaign_table.campaign_fields(ctx.conn, campaign_id, "key", "closed_at", "rounds", "cap")
    if row is None:
        raise unknown_campaign(campaign_id)
    if row[1] is not None:
        raise ConflictError("campaign_closed", f"campaign {campaign_id} is closed and takes no reports")
    key, n, recurs = int(row[0]), len(prep), row[2] != "once"
    if row[3] is not None:  # the campaign's own cap, set at creation, and the collector's: the smaller
        cap = int(row[3]) if cap is None else min(cap, int(row[3]))
    where = ctx.find(key, prep.ids)
    old = np.flatnonzero(where >= 0)
    if old.size:
        stored = store.rows_at(ctx.conn, key, where[old].tolist())
        conflicts = sum(stored[int(where[i])] != prep.report(i)[1] for i in old.tolist())
        # answered as duplicates (see the module doc); only the analyst sees the count. Every resend
        # writes this row, conflicting or not: a commit that writes (and syncs) for a conflict only
        # would time the answer by the stored payload.
        campaign_table.count_resends(ctx.conn, key, int(old.size), conflicts)
    new = np.flatnonzero(where < 0)
    if new.size == 0:
        return {"accepted": 0, "duplicates": n}
    if not isinstance(turn, int):
        asked = turn or rounds.Asked()
        # a campaign that does not recur is in round 1 for ever: no schedule to read on the hot path
        turn = 1 if not recurs and asked.round in (None, 1) else round_to_store(ctx.conn, campaign_id, asked)
    if cap is not None and (held := ctx.tally(campaign_id, prep.spec).n) + new.size > cap:
        raise ConflictError("campaign_full", f"campaign {campaign_id} holds {held:,} reports; it takes at most {cap:,}")
    ids, rows, tally = prep.ids, prep.rows, prep.tally
    if new.size < n:  # some were retries: store and count the others only
        picked = [prep.report(i) for i in new.tolist()]
        ids, rows = b"".join(p[0] for p in picked), b"".join(p[1] for p in picked)
        tally = decode(prep.spec, _subset(prep.batch, new))
    first = ctx.next_seq(key)
    store.insert_reports(ctx.conn, key, first, ids, rows, prep.width, store.today(), turn)
    ctx.stage_ids(key, ids, first)
    ctx.add(campaign_id, prep.spec, tally)
    if recurs:
        ctx.add(campaign_id, prep.spec, tally, turn)
    return {"accepted": int(new.size), "duplicates": n - int(new.size)}


def _subset(batch: ReportBatch, rows: np.ndarray) -> ReportBatch:
    return ReportBatch(batch.spec, batch.ids[rows], {k: v[rows] for k, v in batch.columns.items()}, batch.root)


def create_campaign(
    ctx: Context, spec: Spec, now: float, access: str = "open", schedule: str = "once", cap: int | None = None
) -> bool:
    """Store a verified spec as a campaign with an empty tally; False if it already exists.

    ``access`` is ``open`` (anyone may report) or ``invited`` (a report needs a respondent code,
    :mod:`pldp.service.codes`); ``schedule`` its rounds, ``once``, ``daily``, ``weekly`` or
    ``manual`` (:mod:`pldp.service.rounds`), counted from today (:func:`pldp.service.store.today`);
    ``cap`` the most reports it takes (None: no cap of its own; the collector's ``--campaign-cap``
    applies to every campaign). All three are set once: asking for an existing campaign with another
    access, schedule or cap is a :class:`~pldp.service.refusals.ConflictError`; a schedule or cap that
    does not exist is :class:`~pldp.service.refusals.InvalidError`.
    """
    if schedule not in rounds.SCHEDULES:
        raise InvalidError("bad_rounds", f"rounds must be one of {', '.join(rounds.SCHEDULES)}, got {schedule!r}")
    if cap is not None and cap < 1:
        raise InvalidError("bad_cap", f"a campaign's cap must be a positive number of reports, got {cap}")
    row = campaign_table.campaign_fields(ctx.conn, spec.id, "access", "rounds", "cap")
    if row is not None:
        for what, stored, asked in (("access", row[0], access), ("rounds", row[1], schedule), ("cap", row[2], cap)):
            if stored != asked:
                raise ConflictError(
                    f"{what}_differs",
                    f"campaign {spec.id} exists already with {what} {'none' if stored is None else stored}; "
                    f"a campaign's {what} is set when it is created",
                )
        return False
    campaign_table.insert_campaign(
        ctx.conn, spec.id, spec.to_json(indent=None), now, access, schedule, store.today(), cap
    )
    ctx.set(spec.id, store.empty_tally(spec))
    return True


def open_round(ctx: Context, campaign_id: str, now: float) -> int:
    """Open the next round of a ``manual`` campaign at ``now`` (:func:`pldp.service.rounds.clock`);
    return its number (a writer job).

    Raises
    ------
    NotFoundError
        For an unknown campaign.
    ConflictError
        For a closed campaign (``campaign_closed``) or one whose rounds are not ``manual``
        (``rounds_not_manual``: they open by themselves, or there are none).
    """
    row = campaign_table.campaign_fields(ctx.conn, campaign_id, "key", "closed_at", "rounds")
    if row is None:
        raise unknown_campaign(campaign_id)
    if row[1] is not None:
        raise ConflictError("campaign_closed", f"campaign {campaign_id} is closed: it has no next round")
    if row[2] != "manual":
        how = "it does not recur" if row[2] == "once" else f"its rounds are {row[2]}: they open by themselves"
        raise ConflictError("rounds_not_manual", f"only a campaign with manual rounds opens them; {how}")
    key = int(row[0])
    last = campaign_table.last_round(ctx.conn, key)
    campaign_table.insert_round(ctx.conn, key, last + 1, now)
    return int(last) + 1


def close_campaign(ctx: Context, campaign_id: str, now: float) -> float:
    """Close a campaign (idempotent); returns when it was closed."""
    row = campaign_table.campaign_fields(ctx.conn, campaign_id, "closed_at")
    if row is None:
        raise unknown_campaign(campaign_id)
    if row[0] is not None:
        return float(row[0])
    campaign_table.close(ctx.conn, campaign_id, now)
    return now


class TokenReusedError(ConflictError, PLDPError):
    """A token offered again that the store holds expired or revoked: it never works again (a
    :class:`~pldp.service.refusals.ConflictError`, 409).

    Also a :class:`~pldp.errors.PLDPError`, so that ``pldp serve --admin-token-file`` with such a
    token stops with one line saying so (:mod:`pldp.service.server` stores the file's token with
    :func:`add_token`).
    """


def add_token(
    ctx: Context,
    token: str,
    role: str,
    label: str,
    campaigns: list[str],
    now: float,
    expires_at: float | None = None,
) -> str:
    """Store a token's hash with its role, grants and expiry; return its public id.

    Every granted campaign must exist (:class:`~pldp.service.refusals.NotFoundError`).
    ``expires_at`` defaults to ``now`` plus the role's lifetime
    (:data:`~pldp.service.auth.ANALYST_LIFETIME`, :data:`~pldp.service.auth.ADMIN_LIFETIME`).
    A new admin token revokes every other admin token: there is one admin at a time, so a new
    ``--admin-token-file`` or a rotation retires the old token. A token whose hash is stored
    already (one that expired or was revoked: a valid one is never stored twice) is refused
    with :class:`TokenReusedError`.
    """
    for cid in campaigns:
        if not campaign_table.campaign_exists(ctx.conn, cid):
            raise unknown_campaign(cid, " to grant")
    digest = auth.token_hash(token)
    old = token_table.token_lifetime(ctx.conn, digest)
    if old is not None:
        if old[1] is not None:
            why = f"was revoked at {auth.stamp(old[1])}"
        else:
            why = f"{'expired' if old[0] <= now else 'expires'} at {auth.stamp(old[0])}"
        raise TokenReusedError(
            "token_reused", f"this token is stored already and {why}; a token is used once: make a new one"
        )
    if expires_at is None:
        expires_at = now + (auth.ADMIN_LIFETIME if role == "admin" else auth.ANALYST_LIFETIME)
    token_id = auth.new_token_id()
    token_table.insert_token(ctx.conn, digest, role, label, now, token_id, expires_at, campaigns)
    return token_id


def revoke_token(ctx: Context, token_id: str, now: float) -> float:
    """Revoke the token with the public id ``token_id`` (idempotent); returns when it was revoked.

    An unknown id is :class:`~pldp.service.refusals.NotFoundError`. An admin token is not revoked but
    replaced (a :class:`~pldp.service.refusals.ConflictError`): a rotation revokes the old one, so that
    the collector always has an admin.
    """
    row = token_table.token_by_id(ctx.conn, token_id)
    if row is None:
        raise NotFoundError("unknown_token", f"no token with id {token_id}")
    if row[0] == "admin":
        raise ConflictError(
            "admin_token",
            "an admin token is replaced, not revoked: rotate it (pldp token rotate, or a new --admin-token-file)",
        )
    if row[1] is not None:
        return float(row[1])
    token_table.revoke_token(ctx.conn, token_id, now)
    return now
