"""A campaign's stored reports (an analyst granted it): ``GET /v1/campaigns/{id}/export`` as Parquet,
``GET /v1/campaigns/{id}/days`` the days they were received on."""

from __future__ import annotations

import io
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from pldp.deploy.files import day_label, parse_day, round_metadata
from pldp.deploy.origin import Origin
from pldp.service import store
from pldp.service.collect import CollectError
from pldp.service.deps import Readable, ServiceDep
from pldp.service.errors import responses
from pldp.service.models import Days

__all__ = ["router"]

router = APIRouter(prefix="/v1/campaigns", tags=["reports"])

_PARQUET: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "A Parquet file in the wire format's Arrow schema (`docs/wire-format.md` §5).",
        "content": {"application/vnd.apache.parquet": {"schema": {"type": "string", "format": "binary"}}},
    }
}


#: The ``day`` query parameter of the export: a UTC date, which the route parses itself (400
#: ``bad_day`` otherwise); the schema says its form, so that clients made from it send only dates.
DAY = Query(
    description="Only the reports received on this UTC day, as YYYY-MM-DD (another form is a 400 `bad_day`).",
    json_schema_extra={"format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
)


@router.get("/{campaign_id}/export", response_class=Response, responses=responses(400, 401, 403, 501, others=_PARQUET))
def export(
    campaign: Readable,
    service: ServiceDep,
    day: Annotated[str | None, DAY] = None,
    turn: Annotated[int | None, Query(alias="round", ge=1, le=999_999_999)] = None,
) -> Response:
    """The stored reports as one Parquet file in the wire format's Arrow schema; with
    ``day=YYYY-MM-DD`` only those received that day (none: an empty file), with ``round=n``
    only those of that round of the campaign.

    Reports that retention deleted (``pldp serve --retain-days``) are in the rollover's files only.
    The file's metadata names the store and the store's numbers of its reports
    (``pldp.store``, ``pldp.numbers``; :mod:`pldp.deploy.origin`), and with ``round`` the round
    (``pldp.round``, :mod:`pldp.deploy.files`).
    """
    number = None
    if day is not None:
        try:
            number = parse_day(day)
        except ValueError:
            raise CollectError(400, "bad_day", f"day must be a date as YYYY-MM-DD, got {day!r}") from None
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - the service extra installs it
        raise CollectError(501, "no_parquet", "export needs pyarrow (pip install 'pldp[service]')") from None
    conn = service.conn()
    batch, numbers = store.stored_numbered(conn, campaign.spec, day=number, turn=turn)
    table = batch.to_arrow()  # named by store and report numbers, so files of it count once (pldp.deploy.origin)
    table = table.replace_schema_metadata(
        {**table.schema.metadata, **Origin.of(store.store_id(conn), numbers).metadata(), **round_metadata(turn)}
    )
    sink = io.BytesIO()
    pq.write_table(table, sink)
    name = "-".join([campaign.row.id, *([] if turn is None else [f"round{turn}"]), *([] if day is None else [day])])
    return Response(
        sink.getvalue(),
        media_type="application/vnd.apache.parquet",
        headers={"Content-Disposition": f'attachment; filename="{name}.parquet"'},
    )


@router.get("/{campaign_id}/days", response_model=Days, responses=responses(401, 403))
def list_days(campaign: Readable, service: ServiceDep) -> dict[str, Any]:
    """The days on which the stored reports were received (UTC), per round of the campaign, with
    how many on each, and the store's id (``pldp campaign export --out-dir`` names its files with it)."""
    c, campaign_id = service.conn(), campaign.row.id
    return {
        "campaign": campaign_id,
        "store": store.store_id(c),
        "rounds": campaign.row.rounds,
        "days": [{"day": day_label(d), "round": t, "n": n} for t, d, n in store.days(c, campaign_id)],
    }
