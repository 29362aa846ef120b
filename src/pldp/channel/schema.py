"""The JSON Schema of a sampler node, made of each kind's own: :func:`node_schemas`, :func:`node_schema`.

Each kind of node declares the schema of the JSON form it reads (:meth:`Node.json_schema
<pldp.channel.node.Node.json_schema>`, beside its ``parse``); this module puts them together, one
per kind of :data:`~pldp.channel.parse.NODE_KINDS` (titled by the kind's class name) and the
schema of any node (:data:`SAMPLER_NODE`: exactly one of the kinds, told apart by ``kind``). A new
kind is in the schema once it is in ``NODE_KINDS``. The collector publishes them in its OpenAPI
schema (:mod:`pldp.service.models`), so that a client generated from it takes every spec pldp
makes. The schemas describe each member (its type, range, the kinds a composite node may hold
and which optional members go together); relations between members, such as a list of ``d``
items or thresholds that sum to ``2**32``, are the parser's alone.
"""

from __future__ import annotations

import copy
from typing import Any

from pldp.channel.parse import NODE_KINDS

__all__ = ["SAMPLER_NODE", "node_schema", "node_schemas"]

#: The title of the schema of any node.
SAMPLER_NODE = "SamplerNode"


def node_schemas(ref_template: str | None = None) -> dict[str, dict[str, Any]]:
    """The schema of each kind of node, by its class name, and of any node (:data:`SAMPLER_NODE`).

    Parameters
    ----------
    ref_template : str, optional
        Where the schemas are, as a ``$ref`` with ``{name}`` for the name, e.g.
        ``"#/components/schemas/{name}"``: a composite node's schema refers to the kinds it holds
        there, and the schema of any node states the ``kind`` tag as its OpenAPI
        ``discriminator``. Default: each schema holds the kinds it refers to itself (self-contained).

    Returns
    -------
    dict of str to dict
        JSON Schema (2020-12, as OpenAPI 3.1 reads it), by name; each titled by its name.

    Examples
    --------
    >>> schemas = node_schemas("#/components/schemas/{name}")
    >>> "DirectNode" in schemas, schemas["PaddingNode"]["properties"]["inner"]["$ref"]
    (True, '#/components/schemas/UnaryNode')
    """
    built: dict[str, dict[str, Any]] = {}

    def name(kind: str) -> str:
        return NODE_KINDS[kind].__name__

    def ref(kind: str) -> dict[str, Any]:
        if ref_template is not None:
            return {"$ref": ref_template.format(name=name(kind))}
        return copy.deepcopy(schema(kind))

    def schema(kind: str) -> dict[str, Any]:
        if kind not in built:
            built[kind] = {"title": name(kind), **NODE_KINDS[kind].json_schema(ref)}
        return built[kind]

    out = {name(kind): schema(kind) for kind in NODE_KINDS}
    out[SAMPLER_NODE] = {
        "title": SAMPLER_NODE,
        "description": "A sampler node, by its kind (docs/wire-format.md §2).",
        "oneOf": [ref(kind) for kind in NODE_KINDS],
    }
    if ref_template is not None:
        mapping = {kind: ref(kind)["$ref"] for kind in NODE_KINDS}
        out[SAMPLER_NODE]["discriminator"] = {"propertyName": "kind", "mapping": mapping}
    return out


def node_schema() -> dict[str, Any]:
    """The self-contained JSON Schema of any sampler node (``sampler.root`` of a spec).

    Examples
    --------
    >>> schema = node_schema()
    >>> schema["title"], [s["title"] for s in schema["oneOf"]][:2]
    ('SamplerNode', ['DirectNode', 'UnaryNode'])
    """
    return node_schemas()[SAMPLER_NODE]
