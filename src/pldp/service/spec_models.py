"""The campaign spec (``pldp.spec/1``, ``docs/wire-format.md`` §1) as Pydantic models, for the
collector's OpenAPI schema (:mod:`pldp.service.models` holds the other bodies), and the pieces every
wire model shares: ids, whole numbers and strict objects.

A spec's sampler node is described by the schema each kind of node declares
(:func:`pldp.channel.node_schema`), so every node pldp makes is in it; the collector still reads a
spec with pldp's own checks (:meth:`pldp.deploy.Spec.from_json`).
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    PlainValidator,
    WithJsonSchema,
    field_validator,
)
from pydantic.json_schema import SkipJsonSchema

if sys.version_info >= (3, 12):
    from typing import TypedDict
else:  # pydantic reads typing's TypedDict from 3.12 on; before, typing_extensions' (pydantic depends on it)
    from typing_extensions import TypedDict

from pldp.channel import MemoNode, node_schema, parse_node
from pldp.deploy.spec import MAX_ROUNDS, MEMO_KEY_MAX

__all__ = [
    "CampaignSpec",
    "Caps",
    "Memo",
    "OracleParams",
    "ReportId",
    "Sampler",
    "SamplerNode",
    "SpecId",
    "Strict",
    "Whole",
    "whole",
]

_ID = r"^[0-9a-f]{32}$"
SpecId = Annotated[str, Field(pattern=_ID, description="A spec id: 32 lower-case hex digits.")]
ReportId = Annotated[str, Field(pattern=_ID, description="128 random bits as 32 lower-case hex digits.")]


def whole(value: Any) -> Any:
    """A float without a fraction (``3600.0``) as the int it is: JSON Schema's ``integer`` admits it
    (and clients send it), where a strict model would refuse it; anything else is left to the field."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


#: A whole number in a request body: an int, or a float without a fraction (JSON Schema's integer).
Whole = Annotated[int, BeforeValidator(whole)]


class Strict(BaseModel):
    """A wire object: exactly its members (pldp refuses unknown ones)."""

    model_config = ConfigDict(extra="forbid", strict=True)


# ---------------------------------------------------------------------------------- the spec
def _node(value: Any) -> Any:
    """A sampler node as pldp reads it: :func:`pldp.channel.parse_node`'s refusal (a ValueError) is the
    model's."""
    parse_node(value)
    return value


#: A sampler node (``docs/wire-format.md`` §2): read by pldp's own parser, described by the JSON
#: Schema each kind of node declares (:func:`pldp.channel.node_schema`; :mod:`pldp.service.openapi`
#: names each kind's schema in the document's components).
SamplerNode = Annotated[dict[str, Any], PlainValidator(_node), WithJsonSchema(node_schema())]


class Sampler(Strict):
    """The client program: integer thresholds on the 2**32 grid and the privacy claims."""

    grid_bits: Literal[32]
    root: SamplerNode


class OracleParams(BaseModel):
    """The pldp mechanism (``mechanism``) or protocol (``protocol``) and its parameters, as
    ``FrequencyOracle.params()`` writes them; the server rebuilds its estimator from them."""

    model_config = ConfigDict(extra="allow")

    mechanism: str | None = Field(None, description="A mechanism's class name, e.g. KRR.")
    protocol: str | None = Field(None, description="A protocol's class name, e.g. FEBSF.")


class Memo(Strict):
    """Which campaigns share a device's permanent responses (a memoized sampler's spec only)."""

    key: str = Field(min_length=1, max_length=MEMO_KEY_MAX, description="The same key, the same permanent responses.")


class Caps(TypedDict, total=False):
    """The campaign's caps on one device's reports of its family (``docs/wire-format.md`` §1.3), one or more."""

    __pydantic_config__ = ConfigDict(extra="forbid", strict=True)  # type: ignore[misc]

    day: Annotated[float, Field(gt=0, allow_inf_nan=False, description="The most epsilon per UTC day.")]
    total: Annotated[float, Field(gt=0, allow_inf_nan=False, description="The most epsilon in all.")]
    rounds: Annotated[
        int, Field(ge=1, le=MAX_ROUNDS, description="The most reports one device sends."), BeforeValidator(whole)
    ]


class _OneOrMore:
    """In the JSON Schema, an object of one member or more: ``minProperties`` on the object's own
    schema (a TypedDict's ``json_schema_extra`` is not read by every pydantic 2 release: 2.6 drops it)."""

    def __get_pydantic_json_schema__(self, core: Any, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        schema = handler(core)
        handler.resolve_ref_schema(schema)["minProperties"] = 1
        return dict(schema)


def _absent(schema: dict[str, Any]) -> None:
    """An optional member that is absent, not null: no default in the schema."""
    schema.pop("default", None)


#: A spec's labels: at least two distinct answers.
LabelList = Annotated[list[str], Field(min_length=2, json_schema_extra={"uniqueItems": True})]


class AnswerRange(Strict):
    """The answers ``0 .. d-1``, labelled by their decimal strings (``d`` the sampler's)."""

    range: int = Field(ge=2, description="d: the number of answers, the sampler's d.")


class HashedAnswers(Strict):
    """Free-text answers, each hashed to one of ``d`` buckets: ``XXH32(UTF-8 of the text, NFC and
    trimmed of ASCII space, tab, CR and LF, at most 256 bytes; seed 0) mod d`` (``d`` the sampler's)."""

    hashed: int = Field(ge=2, description="d: the number of buckets, the sampler's d.")
    hash: Literal["xxh32"] = Field(description="The hash of the answer's UTF-8 bytes (seed 0).")
    normalize: Literal["NFC"] = Field(
        description="Unicode NFC, then ASCII space, tab, CR and LF trimmed; empty text or over 256 bytes refused."
    )


class FreeText(Strict):
    """Free-text answers discovered by a heavy-hitter sampler (its root a ``heavy`` node): no list, the
    first ``text`` UTF-8 bytes of each answer kept."""

    text: int = Field(ge=1, le=64, description="The bytes of an answer kept: the sampler's max_bytes.")
    normalize: Literal["NFC"] = Field(
        description="Unicode NFC, then ASCII space, tab, CR and LF trimmed; empty text or a byte 0x00 refused."
    )


#: A spec's labels (one attribute's): the list of its answers, the range of integers ``0 .. d-1``,
#: free text hashed to ``d`` buckets, or free text to discover (a heavy-hitter sampler's).
Labels = LabelList | AnswerRange | HashedAnswers | FreeText
#: The sampler's root is a memo node exactly when the spec has a ``memo`` member.
_MEMOIZED: dict[str, Any] = {
    "properties": {"sampler": {"properties": {"root": {"properties": {"kind": {"const": MemoNode.kind}}}}}}
}


class CampaignSpec(Strict):
    """A campaign spec, ``pldp.spec/1`` (``docs/wire-format.md`` §1); its id is its content hash.

    The collector stores it only if the id matches the content and every privacy claim holds
    exactly (:func:`pldp.deploy.verify`).
    """

    model_config = ConfigDict(
        json_schema_extra={
            "if": _MEMOIZED,
            "then": {"required": ["memo"]},
            "else": {"not": {"required": ["memo"]}},
            "examples": [
                {
                    "format": "pldp.spec/1",
                    "id": "821aa0b1cbf5686ca622676696fe37aa",
                    "question": "Your OS?",
                    "labels": ["linux", "mac", "windows"],
                    "oracle": {
                        "epsilons": [1, 1, 1],
                        "family": "direct",
                        "keep_threshold": 1564121119,
                        "labels": ["linux", "mac", "windows"],
                        "mechanism": "KRR",
                        "notion": "LDP",
                        "weights": [910282059, 910282059, 910282059],
                    },
                    "sampler": {
                        "grid_bits": 32,
                        "root": {
                            "d": 3,
                            "epsilons": [1, 1, 1],
                            "keep": 1564121119,
                            "kind": "direct",
                            "notion": "LDP",
                            "weights": [910282059, 910282059, 910282059],
                        },
                    },
                }
            ],
        }
    )

    format: Literal["pldp.spec/1"]
    id: SpecId
    question: str | list[str] = Field(description="What respondents are asked (MPLDP: one per attribute).")
    labels: Labels | list[Labels] = Field(
        description='The answers in index order, {"range": d} for the integers 0 .. d-1, or {"hashed": d, "hash":'
        ' "xxh32", "normalize": "NFC"} for free text hashed to d buckets, or {"text": max_bytes, "normalize":'
        ' "NFC"} for free text a heavy-hitter sampler discovers (MPLDP: one each).'
    )
    oracle: OracleParams
    sampler: Sampler
    memo: Memo | SkipJsonSchema[None] = Field(
        None, json_schema_extra=_absent, description="A memoized sampler's memo (then required; else absent)."
    )
    caps: Annotated[Caps, _OneOrMore()] | SkipJsonSchema[None] = Field(None, json_schema_extra=_absent)

    @field_validator("caps", mode="before")
    @classmethod
    def _some_caps(cls, value: Any) -> Any:
        """Caps, when present, are one or more (as ``minProperties`` says; neither null nor ``{}``)."""
        if value is None or value == {}:
            raise ValueError("caps must be an object with one or more of 'day', 'total' and 'rounds'")
        return value
