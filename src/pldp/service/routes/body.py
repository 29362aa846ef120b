"""The JSON body of a request, read by the route itself and checked against its model.

Routes read their bodies themselves (not through FastAPI's body parameters) so that a bad body is
pldp's 400 with a reason, never a 422, and the body's size is bounded before it is parsed; the
schema still types the body (:func:`pldp.service.openapi.body_of`).
"""

from __future__ import annotations

from typing import TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from pldp.service import collect
from pldp.service.collect import CollectError
from pldp.service.ingest import read_body

__all__ = ["read_model"]

M = TypeVar("M", bound=BaseModel)


async def read_model(request: Request, model: type[M], limit: int, shape: str) -> M:
    """The body of ``request`` (at most ``limit`` bytes, else a 413) as ``model``.

    Raises
    ------
    CollectError
        400 ``malformed_json`` for a body that is not JSON (``too_deep``, ``number_too_long``: over
        the bounds of :mod:`pldp.service.jsonlimits`), 400 ``bad_request`` for one that is not
        a JSON object of ``model`` (the reason names the first bad member and ``shape``, the
        object expected, in words), 413 for a body over ``limit``.
    """
    raw = await read_body(request.headers.get("content-length"), request.stream(), limit)
    data = collect.read_json(raw)  # within pldp.service.jsonlimits' bounds: too deep or too long is a 400
    if not isinstance(data, dict):
        raise CollectError(400, "bad_request", f"the body must be {shape}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the body"
        raise CollectError(400, "bad_request", f"{where}: {first.get('msg')}; the body must be {shape}") from None
