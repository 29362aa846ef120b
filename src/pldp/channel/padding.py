"""The padding-and-sampling node: pad a set to ``ell`` items, sample one, report it with a unary node.

Gu et al. (ICDE 2020, Sec. V; after Wang et al.'s padding-and-sampling): a user holding a set of
``s`` items draws a slot uniformly in ``[0, max(s, ell))``; a slot below ``s`` picks her item of
that rank, any other slot a dummy item ``d + j`` with ``j`` uniform in ``[0, ell)``. The sampled
item is reported by the inner unary node over ``d + ell`` items. Both uniforms are exact, by
rejection (:func:`~pldp.channel.sampling.uniform_below`). The claims are the inner node's
(Theorem 4 turns them into item-set budgets; :mod:`pldp.privacy.itemsets`).
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
    int_schema,
    node_object,
    read_int,
    read_keys,
)
from pldp.channel.sampling import uniform_below
from pldp.channel.unary import UnaryNode
from pldp.channel.words import Cursor, RejectedError, WordStream
from pldp.errors import SpecError

__all__ = ["PaddingNode"]

#: The range of a padding node's number of items ``d`` and of its padding length ``ell``.
PADDING_SIZE = (1, 2**24)


@dataclass(frozen=True)
class PaddingNode(Node):
    """Padding-and-sampling: pad a set to ``ell`` items, sample one, report it with ``inner``."""

    kind: ClassVar[str] = "padding"
    d: int
    ell: int
    inner: UnaryNode

    def to_json(self) -> dict[str, Any]:
        return {"kind": "padding", "d": self.d, "ell": self.ell, "inner": self.inner.to_json()}

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> PaddingNode:
        """Read and validate the JSON form; ``parse_node`` reads the inner node."""
        assert parse_node is not None
        read_keys(obj, path, {"kind", "d", "ell", "inner"})
        d = read_int(obj["d"], f"{path}.d", *PADDING_SIZE)
        ell = read_int(obj["ell"], f"{path}.ell", *PADDING_SIZE)
        inner = parse_node(obj["inner"], f"{path}.inner")
        if not isinstance(inner, UnaryNode) or inner.d != d + ell:
            raise SpecError(f"{path}.inner must be a unary node over d + ell = {d + ell} items")
        if inner.notion == "ULDP":  # its item-set claim (Gu et al., Theorem 4) needs every bit's b > 0
            raise SpecError(f"{path}.inner must protect every item: a ULDP node may reveal one")
        return cls(d, ell, inner)

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        return node_object(
            "padding",
            {
                "d": int_schema(*PADDING_SIZE, "Number of items."),
                "ell": int_schema(*PADDING_SIZE, "The padding length."),
                "inner": {**ref("unary"), "description": "A unary node over d + ell items."},
            },
            description="Padding-and-sampling: a set of items padded to ell, one sampled, sent by inner.",
        )

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.padding(self, *args)

    @property
    def takes_itemsets(self) -> bool:
        return True

    # ------------------------------------------------------------------ reports
    def columns(self, prefix: str = "") -> list[Column]:
        return [Column(prefix + "bits", "bits", self.inner.d)]

    def sampling_weights(self, items: tuple[int, ...]) -> np.ndarray:
        """Probability of each of the ``d + ell`` inner items being reported for the set ``items``."""
        s = len(items)
        slots = max(s, self.ell)
        w = np.zeros(self.inner.d)
        w[list(items)] = 1.0 / slots
        w[self.d :] = (1.0 - s / slots) / self.ell
        return w

    # ------------------------------------------------------------------ claims
    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        return self.inner.claims(f"{part}: sampled item")

    # ------------------------------------------------------------------ the program
    def reports(self, inp: Any) -> int:
        return int(inp[-1].size)

    def words(self, inp: Any) -> np.ndarray:
        return np.full(inp[-1].size, 2 + self.inner.d, dtype=np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        flat, offsets, sizes = inp
        w = cursor.take(rows, 2)
        slot, ok1 = uniform_below(w[:, 0], np.maximum(sizes, self.ell))
        dummy, ok2 = uniform_below(w[:, 1], np.full(rows.size, self.ell))
        if not (ok1.all() and ok2.all()):
            raise RejectedError
        own = slot < sizes
        item = np.where(
            own, flat[np.minimum(offsets + slot, max(flat.size - 1, 0))] if flat.size else 0, self.d + dummy
        )
        self.inner.draw(item.astype(np.int64), cursor, rows, out, prefix)

    def draw_one(self, inp: Any, stream: WordStream, out: dict[str, np.ndarray], prefix: str = "") -> None:
        flat, _, sizes = inp
        slot, dummy = (int(v) for v in stream.uniforms([max(int(sizes[0]), self.ell), self.ell]))
        item = int(flat[slot]) if slot < sizes[0] else self.d + dummy
        self.inner.draw_one(np.array([item]), stream, out, prefix)
