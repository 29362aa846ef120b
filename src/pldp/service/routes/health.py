"""``GET /v1/health``: liveness (anyone; no token is read)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from pldp.service import store
from pldp.service.models import Health

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["service"])


@router.get("/health", response_model=Health)
def health() -> dict[str, Any]:
    """Liveness and the store's schema version."""
    return {"status": "ok", "schema": store.SCHEMA_VERSION}
