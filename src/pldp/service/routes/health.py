"""``GET /v1/health``: liveness, and whether the store takes writes (anyone; no token is read)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from pldp.service import store
from pldp.service.deps import ServiceDep
from pldp.service.models import Health

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["service"])


@router.get("/health", response_model=Health, response_model_exclude_none=True)
def health(service: ServiceDep) -> dict[str, Any]:
    """Liveness and the store's schema version; ``degraded`` with a reason when the store cannot
    take writes now (read-only, full, its writer lock held too long: :mod:`pldp.service.faults`)."""
    try:
        reason = service.writer.problem(service.conn())
    except store.SQLiteError as exc:
        reason = f"the store cannot be read ({exc})"
    answer: dict[str, Any] = {"status": "ok" if reason is None else "degraded", "schema": store.SCHEMA_VERSION}
    if reason is not None:
        answer["reason"] = reason
    return answer
