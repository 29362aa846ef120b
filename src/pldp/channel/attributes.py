"""The attributes node: several attributes, each reported by its own part (MPLDP).

Feng & Zhang (2024), multi-attribute PLDP: a user reports each attribute with its own node (a
leveled node whose level is sent in the clear), so the whole report's budget is the sum of the
parts' (sequential composition, Theorem 5). Each part's payload columns carry the prefix
``a{i}.``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pldp.channel.node import (
    Column,
    Node,
    NodeVisitor,
    ParseNode,
    R,
    Row,
    SchemaRef,
    list_schema,
    node_object,
    one_of,
    read_keys,
)
from pldp.channel.words import Cursor, WordStream
from pldp.errors import SpecError

__all__ = ["AttributesNode"]

#: The kinds of node an attribute's part may be.
PART_KINDS = ("direct", "unary", "leveled")


@dataclass(frozen=True)
class AttributesNode(Node):
    """Several attributes, each reported by its own part (MPLDP)."""

    kind: ClassVar[str] = "attributes"
    parts: tuple[Node, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": "attributes", "parts": [p.to_json() for p in self.parts]}

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> AttributesNode:
        """Read and validate the JSON form; ``parse_node`` reads the parts."""
        assert parse_node is not None
        read_keys(obj, path, {"kind", "parts"})
        parts = obj["parts"]
        if not isinstance(parts, list) or not parts:
            raise SpecError(f"{path}.parts must be a non-empty list of nodes")
        nodes = tuple(parse_node(o, f"{path}.parts[{i}]") for i, o in enumerate(parts))
        if any(n.kind not in PART_KINDS for n in nodes):
            raise SpecError(f"{path}.parts must be direct, unary or leveled nodes")
        return cls(nodes)

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        part = one_of([ref(kind) for kind in PART_KINDS])
        return node_object(
            "attributes",
            {"parts": list_schema(part, 1, "One part per attribute.")},
            description="Several attributes (MPLDP), each reported by its own part.",
        )

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.attributes(self, *args)

    @property
    def multi_attribute(self) -> bool:
        return True

    @property
    def by_attribute(self) -> tuple[tuple[str, Node], ...]:
        return tuple((f"a{i}.", p) for i, p in enumerate(self.parts))

    # ------------------------------------------------------------------ reports
    def columns(self, prefix: str = "") -> list[Column]:
        return [c for i, part in enumerate(self.parts) for c in part.columns(f"{prefix}a{i}.")]

    # ------------------------------------------------------------------ claims
    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        rows: list[Row] = []
        total = 0.0
        for i, p in enumerate(self.parts):
            r, e = p.claims(f"attribute {i}")
            rows += r
            total += e
        return rows, total

    # ------------------------------------------------------------------ the program
    def reports(self, inp: Any) -> int:
        return self.parts[0].reports(inp[0])

    def words(self, inp: Any) -> np.ndarray:
        return np.sum([p.words(i) for p, i in zip(self.parts, inp, strict=True)], axis=0)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        for i, (part, part_inp) in enumerate(zip(self.parts, inp, strict=True)):
            part.draw(part_inp, cursor, rows, out, f"{prefix}a{i}.")

    def draw_one(self, inp: Any, stream: WordStream, out: dict[str, np.ndarray], prefix: str = "") -> None:
        for i, (part, part_inp) in enumerate(zip(self.parts, inp, strict=True)):
            part.draw_one(part_inp, stream, out, f"{prefix}a{i}.")
