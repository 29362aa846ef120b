"""The rounds of a recurring campaign (:mod:`pldp.service.rounds`): ``GET /v1/campaigns/{id}/round``
(anyone: the survey page asks it), ``POST /v1/campaigns/{id}/rounds`` (admin: open the next round of
a ``manual`` campaign) and ``GET /v1/campaigns/{id}/series`` (an analyst: the estimate of every
round). :func:`round_tally` gives ``GET /v1/campaigns/{id}/estimate?round=n`` its tally."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Security
from starlette.concurrency import run_in_threadpool

from pldp.deploy import Spec
from pldp.deploy.estimates import attributes_json, check_method
from pldp.deploy.history import rounds_guarantees
from pldp.errors import PLDPError
from pldp.estimation import estimate
from pldp.service import collect, rounds, store
from pldp.service.collect import CollectError
from pldp.service.deps import Admin, CampaignOf, ServiceDep, anyone, bearer, readable, require
from pldp.service.errors import responses
from pldp.service.roundmodels import RoundInfo, Series

__all__ = ["protection", "round_info", "round_tally", "router", "series"]

router = APIRouter(prefix="/v1/campaigns", tags=["rounds"])


def _schedule(conn: store.Connection, campaign_id: str) -> rounds.Schedule:
    schedule = rounds.schedule_of(conn, campaign_id)
    if schedule is None:
        raise CollectError(404, "unknown_campaign", f"no campaign {campaign_id}")
    return schedule


def round_info(conn: store.Connection, spec: Spec, grace: float) -> dict[str, Any]:
    """The campaign's current round as the API shows it (:class:`~pldp.service.roundmodels.RoundInfo`),
    with a memoized campaign's :func:`protection` in its ``n``-th round."""
    schedule, now = _schedule(conn, spec.id), rounds.clock()
    n = schedule.current(now)
    return {
        "campaign": spec.id,
        "rounds": schedule.kind,
        "round": n,
        "started_at": schedule.start(n),
        "ends_at": schedule.end(n, now),
        "accepts": list(schedule.accepts(now, grace)),
        "protection": protection(spec, n),
    }


def protection(spec: Spec, current: int) -> dict[str, Any] | None:
    """What a memoized campaign's reports protect over a device's rounds, in round ``current``
    (:class:`~pldp.service.roundmodels.RoundsProtection`): both guarantees of
    :func:`pldp.deploy.history.rounds_guarantees`, the whole-history loss at the spec's rounds cap,
    or without one at ``current`` reports (one per round so far) and at one more; None for a spec
    that is not memoized. Each loss is computed once per spec and number of reports
    (:func:`pldp.deploy.history.whole_history` caches it)."""
    cap = spec.rounds_cap
    found = rounds_guarantees(spec, (cap,) if cap is not None else (current, current + 1))
    if found is None:
        return None
    out = found.to_dict()
    history = out.pop("history")
    return {**out, "history": history[0], "next": None if cap is not None else history[1]}


def round_tally(conn: store.Connection, spec: Spec, turn: int | None) -> Any:
    """The campaign's running tally: of every report (``turn`` None), or of round ``turn``.

    Raises
    ------
    CollectError
        409 ``round_not_started`` for a round after the current one, 409 ``no_reports`` when the
        tally counts no report.
    """
    if turn is None:
        tally = store.stored_tally(conn, spec)
        where = ""
    else:
        schedule = _schedule(conn, spec.id)
        current = schedule.current(rounds.clock())
        if turn > current:
            raise CollectError(409, "round_not_started", f"campaign {spec.id} is in round {current}; {turn} is to come")
        try:
            tally = store.stored_tally(conn, spec, turn if schedule.recurs else 0)
        except KeyError:
            tally = store.empty_tally(spec)
        where = f" in round {turn}"
    if tally.n == 0:
        raise CollectError(409, "no_reports", f"campaign {spec.id} has no reports{where} yet")
    return tally


#: The ``level`` query parameter of the estimates: the route refuses one outside (0, 1) itself (400
#: ``bad_level``), and the schema says so (exclusive bounds), so that clients made from it never send one.
LEVEL = Query(
    description="The intervals' confidence level, in (0, 1): 0 and 1 are refused (400 `bad_level`).",
    json_schema_extra={"exclusiveMinimum": 0, "exclusiveMaximum": 1},
)


#: The most rounds one ``GET .../series`` estimates (a daily campaign's year, and a day).
MAX_SERIES = 367


def series(
    conn: store.Connection,
    spec: Spec,
    method: str,
    level: float,
    first: int | None = None,
    last: int | None = None,
) -> dict[str, Any]:
    """The campaign's estimate in every round from ``first`` to ``last``
    (:class:`~pldp.service.roundmodels.Series`); a round without reports has no estimate.

    ``last`` defaults to the current round, ``first`` to the round :data:`MAX_SERIES` - 1 before
    it (or 1), so that one request never estimates more than :data:`MAX_SERIES` rounds.

    Raises
    ------
    CollectError
        400 for a level outside (0, 1), a method the campaign's oracle does not offer
        (``bad_method``), ``first`` after ``last`` or more than :data:`MAX_SERIES` rounds
        (``bad_range``), or a round's reports that the estimator refuses (``estimate_failed``);
        409 ``round_not_started`` for a ``last`` after the current round.
    """
    if not 0.0 < level < 1.0:
        raise CollectError(400, "bad_level", f"level must lie in (0, 1), got {level}")
    if spec.free_text:
        raise CollectError(
            400,
            "bad_method",
            "a free-text campaign has no series of estimates: each is a discovery of every stored report; "
            "ask GET .../estimate?round=N for one round",
        )
    oracle = spec.mechanism()
    try:
        check_method(oracle, method)
    except PLDPError as exc:
        raise CollectError(400, "bad_method", str(exc)) from None
    schedule, now = _schedule(conn, spec.id), rounds.clock()
    current = schedule.current(now)
    last = current if last is None else last
    first = max(1, last - MAX_SERIES + 1) if first is None else first
    if last > current:
        raise CollectError(409, "round_not_started", f"campaign {spec.id} is in round {current}; {last} is to come")
    if first > last or last - first + 1 > MAX_SERIES:
        raise CollectError(
            400, "bad_range", f"rounds {first} to {last}: give first <= last, at most {MAX_SERIES} rounds at once"
        )
    if schedule.recurs:
        tallies = store.round_tallies(conn, spec, first, last)
    else:
        tallies = {1: store.stored_tally(conn, spec)}
    points = []
    for n in range(first, last + 1):
        tally = tallies.get(n)
        attributes = None
        if tally is not None and tally.n:
            try:  # the estimate alone: a series shows no detection screen (GET .../estimate?round=n does)
                attributes = attributes_json(spec, estimate(oracle, tally, method), level)
            except PLDPError as exc:  # the estimator refuses these reports
                raise CollectError(400, "estimate_failed", f"round {n}: {exc}") from None
        points.append(
            {
                "round": n,
                "started_at": schedule.start(n),
                "ends_at": schedule.end(n, now),
                "n": 0 if tally is None else int(tally.n),
                "attributes": attributes,
            }
        )
    return {
        "campaign": spec.id,
        "rounds": schedule.kind,
        "round": current,
        "method": method,
        "level": level,
        "series": points,
    }


@router.get(
    "/{campaign_id}/round",
    dependencies=[Depends(anyone)],
    response_model=RoundInfo,
    responses=responses(401, 404),
    openapi_extra={"security": [{}]},
)
def current_round(campaign: CampaignOf, service: ServiceDep) -> dict[str, Any]:
    """The campaign's current round, when it started and ends, and the rounds a report may name now.

    The survey page asks it to keep its respondent's report per round and to name the round it
    answers; a campaign that does not recur is always in round 1.
    """
    info = round_info(service.conn(), campaign.spec, service.limits.round_grace)
    share = service.ingest.contributions
    limiter = service.ingest.limiter
    if share is not None and share.on and limiter is not None and limiter.on and campaign.row.access == "open":
        n = store.report_count(service.conn(), campaign.spec.id)
        info["per_address"] = {"share": share.share, "burst": share.burst, "n": n, "allowed": share.allowed(n)}
    return info


@router.post(
    "/{campaign_id}/rounds", status_code=201, response_model=RoundInfo, responses=responses(401, 403, 404, 409, 503)
)
async def open_round(campaign_id: str, service: ServiceDep, _: Admin) -> dict[str, Any]:
    """Open the next round of a campaign with ``manual`` rounds: from now on reports are counted in
    it, and the round before takes reports that name it during the collector's grace
    (``pldp serve --round-grace``). A closed campaign, or one whose rounds are not ``manual``, is a 409.
    """
    now = rounds.clock()
    await service.write(lambda ctx: collect.open_round(ctx, campaign_id, now))
    spec = service.spec(campaign_id)
    # a memoized campaign's protection in its new round may take a search: not on the event loop (and
    # with the worker thread's own read connection)
    return await run_in_threadpool(lambda: round_info(service.conn(), spec, service.limits.round_grace))


@router.get("/{campaign_id}/series", response_model=Series, responses=responses(400, 401, 403, 409))
def get_series(
    campaign_id: str,
    service: ServiceDep,
    authorization: Annotated[str | None, Security(bearer)],
    method: Annotated[
        str, Query(description="Any method the campaign's oracle offers (as for GET .../estimate).")
    ] = "unbiased",
    level: Annotated[float, LEVEL] = 0.95,
    first: Annotated[
        int | None,
        Query(
            ge=1,
            le=999_999_999,
            description=f"The first round (default: {MAX_SERIES - 1} before last). It must not be after `last` "
            f"(or the current round) and the range holds at most {MAX_SERIES} rounds: else a 400 `bad_range` (a "
            "relation between two parameters, which JSON Schema cannot state).",
        ),
    ] = None,
    last: Annotated[
        int | None,
        Query(
            ge=1,
            le=999_999_999,
            description="The last round (default: the current one); not before `first`, and not after the current "
            "round (409 `round_not_started`).",
        ),
    ] = None,
) -> dict[str, Any]:
    """The campaign's estimate round by round, from ``first`` to ``last`` (at most 367 rounds; by
    default the latest ones up to the current round): per round its start, end, reports and
    estimate with ``level`` intervals (none for a round without reports).

    A campaign that does not recur has the one round 1, whose estimate is the campaign's.
    """
    principal = require(service.principal(authorization), "analyst")
    campaign = readable(service, principal, campaign_id)
    return series(service.conn(), campaign.spec, method, level, first, last)
