"""The collector's OpenAPI schema: FastAPI's, with the bodies that the routes read themselves.

A spec and a batch of reports are read by pldp's own code, not by FastAPI (whose checks would
answer otherwise), so their routes declare the body with :func:`body_of` and :func:`document`
adds the models of :data:`pldp.service.models.BODIES` to the schema's components, and with them
the schema of each kind of sampler node (:func:`pldp.channel.node_schemas`), a component each,
which the spec's sampler refers to. It also drops the 422 answers FastAPI declares for routes
with parameters: the collector answers a malformed request with a 400
(:mod:`pldp.service.errors`), which those routes declare. And it declares on every route the
refusals of :mod:`pldp.service.crossorigin`, which come before any route runs: 415 for a body
that is not JSON, 403 for a page of another origin.
"""

from __future__ import annotations

import functools
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from pldp.channel import node_schemas
from pldp.service.errors import responses
from pldp.service.models import BODIES

__all__ = ["REF", "body_of", "complete", "document"]

#: Where the schema's models are.
REF = "#/components/schemas/"


def body_of(model: type[BaseModel]) -> dict[str, Any]:
    """The ``openapi_extra`` of a route whose JSON body ``model`` describes (one of :data:`BODIES`)."""
    assert model in BODIES, f"{model.__name__} must be listed in pldp.service.models.BODIES"
    schema = {"$ref": REF + model.__name__}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


@functools.cache
def _body_schemas() -> dict[str, Any]:
    _, defs = models_json_schema([(m, "validation") for m in BODIES], ref_template=REF + "{model}")
    nodes = node_schemas(REF + "{name}")
    out: dict[str, Any] = _referring(defs.get("$defs", {}), nodes)
    return {**out, **nodes}


def _referring(obj: Any, nodes: dict[str, dict[str, Any]]) -> Any:
    """``obj`` with each node schema that the models hold whole (:func:`pldp.channel.node_schema`,
    titled by its name) replaced by a reference to its component, keeping a description of its own."""
    if isinstance(obj, list):
        return [_referring(v, nodes) for v in obj]
    if not isinstance(obj, dict):
        return obj
    title = obj.get("title")
    if isinstance(title, str) and title in nodes:
        own = {k: v for k, v in obj.items() if k == "description" and v != nodes[title].get("description")}
        return {"$ref": REF + title, **own}
    return {k: _referring(v, nodes) for k, v in obj.items()}


#: What :class:`pldp.service.crossorigin.CrossOrigin` answers, before any route: a request with a body
#: that is not JSON (415), and a request that may change something from a page of another origin (403).
_GUARDED = {415: "requestBody", 403: "unsafe"}


def complete(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the body models to FastAPI's ``schema``, drop its 422 answers, and declare the refusals
    every route may give before it runs (in place; idempotent)."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for name, model_schema in _body_schemas().items():
        components.setdefault(name, model_schema)
    guarded = responses(403, 415)
    for item in schema["paths"].values():
        for method, operation in item.items():
            answers = operation.setdefault("responses", {})
            answers.pop("422", None)
            unsafe = method.upper() not in ("GET", "HEAD", "OPTIONS")
            for status, when in _GUARDED.items():
                if (when in operation or (when == "unsafe" and unsafe)) and str(status) not in answers:
                    answers[str(status)] = _declared(guarded[status])
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    return schema


def _declared(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer of :func:`pldp.service.errors.responses` as the schema writes it."""
    out = {
        "description": answer["description"],
        "content": {"application/json": {"schema": {"$ref": REF + answer["model"].__name__}}},
    }
    if "headers" in answer:
        out["headers"] = answer["headers"]
    return out


def document(app: FastAPI) -> None:
    """Serve FastAPI's schema, :func:`complete`, at ``/openapi.json``."""
    base = app.openapi

    def openapi() -> dict[str, Any]:
        return complete(base())

    app.openapi = openapi  # type: ignore[method-assign]
