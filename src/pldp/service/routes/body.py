"""The JSON body of a request, read by the route itself and checked against its model.

Routes read their bodies themselves (not through FastAPI's body parameters) so that a bad body is
pldp's 400 with a reason, never a 422, and the body's size is bounded before it is parsed; the
schema still types the body (:func:`pldp.service.openapi.body_of`).
"""

from __future__ import annotations

import json
from typing import TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from pldp.service.collect import CollectError
from pldp.service.ingest import read_body

__all__ = ["read_model"]

M = TypeVar("M", bound=BaseModel)


async def read_model(request: Request, model: type[M], limit: int, shape: str) -> M:
    """The body of ``request`` (at most ``limit`` bytes, else a 413) as ``model``.

    Raises
    ------
    CollectError
        400 ``malformed_json`` for a body that is not JSON, 400 ``bad_request`` for one that is not
        a JSON object of ``model`` (the reason names the first bad member and ``shape``, the
        object expected, in words), 413 for a body over ``limit``.
    """
    raw = await read_body(request.headers.get("content-length"), request.stream(), limit)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CollectError(400, "malformed_json", f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CollectError(400, "bad_request", f"the body must be {shape}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the body"
        raise CollectError(400, "bad_request", f"{where}: {first.get('msg')}; the body must be {shape}") from None
