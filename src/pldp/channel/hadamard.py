"""The Hadamard-response node: one index of a ``K x K`` Sylvester-Hadamard matrix per report.

Hadamard response (Acharya, Sun, Zhang, AISTATS 2019; the symmetric response with one block)
maps item ``x`` in ``[0, d)`` to row ``x + 1`` of the Sylvester-Hadamard matrix of order ``K``,
a power of two ``> d``, and to the set of its ``+1`` columns

.. math::

    C_x = \\{y \\in [0, K) : \\mathrm{popcount}((x + 1) \\mathbin{\\&} y) \\text{ even}\\},
    \\qquad |C_x| = K/2, \\quad |C_x \\cap C_{x'}| = K/4 \\ (x \\ne x').

A report is one index ``y`` in ``[0, K)``: on the ``2**32`` grid, with an integer ``keep``,

.. math::

    \\Pr(y \\mid x) = \\frac{2}{K} \\cdot \\frac{keep\\,[y \\in C_x] + (2^{32} - keep)\\,[y \\notin C_x]}{2^{32}} .

The claim. For two items ``x, x'`` the ratio of those probabilities is ``keep / (2**32 - keep)``
on ``C_x \\ C_x'`` (never empty), its inverse on ``C_x' \\ C_x`` and 1 elsewhere: the node is
:math:`\\varepsilon`-LDP exactly when the larger of ``keep`` and ``2**32 - keep`` over the smaller is
at most ``e^eps`` (checked with :func:`~pldp.channel.exact.ratio_within`; an oracle has
``keep > 2**31``, so the ratio is ``keep / (2**32 - keep)``).

The program: two words per report. ``r`` is the top ``log2(K)`` bits of ``w1`` (uniform over
``[0, K)``); the report lies in ``C_x`` when ``w0 < keep``, else in its complement: when the
parity of ``(x + 1) & r`` is not the wanted one, the bit of ``r`` at the lowest set bit of ``x + 1``
is flipped (a bijection between the two halves, so the report is uniform within its half).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pldp.bitcount import parity
from pldp.channel.every_pair import EveryPairLeaf
from pldp.channel.node import (
    Column,
    NodeVisitor,
    ParseNode,
    R,
    SchemaRef,
    budget_schema,
    int_schema,
    node_object,
    read_budget,
    read_int,
    read_keys,
)
from pldp.channel.sampling import GRID, GRID_BITS
from pldp.channel.words import Cursor
from pldp.errors import SpecError

__all__ = ["HADAMARD_K", "HadamardNode", "hadamard_order", "in_half", "into_half"]

#: The range of the order ``K`` of the matrix (a power of two), so of an index on the wire.
HADAMARD_K = (4, 1 << 31)
#: The range of the number of items ``d``: ``K > d``.
HADAMARD_D = (2, HADAMARD_K[1] - 1)


def hadamard_order(d: int) -> int:
    """The smallest power of two ``> d``: the order of the matrix whose rows ``1..d`` the items take."""
    return 1 << int(d).bit_length()


def in_half(items: Any, y: Any) -> np.ndarray:
    """``y in C_x`` for items ``x`` and indices ``y`` (broadcast): the parity of ``(x + 1) & y`` is even."""
    rows = np.asarray(items).astype(np.int64) + 1
    return np.asarray(parity(rows & np.asarray(y).astype(np.int64)) == 0)


def into_half(items: Any, r: Any, inside: Any) -> np.ndarray:
    """``r`` moved into ``C_x`` (where ``inside``) or its complement: the bit at the lowest set bit of
    ``x + 1`` flipped when ``r`` is in the other half (a bijection of ``[0, K)`` swapping the halves)."""
    rows = np.asarray(items).astype(np.int64) + 1
    r = np.asarray(r).astype(np.int64)
    return np.where(in_half(items, r) == np.asarray(inside), r, r ^ (rows & -rows))


@dataclass(frozen=True)
class HadamardNode(EveryPairLeaf):
    """A Hadamard-response sampler: an index in ``C_x`` w.p. ``keep / 2**32``, else in its complement,
    uniform within the half (module docstring)."""

    kind: ClassVar[str] = "hadamard"
    d: int
    K: int
    keep: int
    epsilon: float

    def to_json(self) -> dict[str, Any]:
        return {"kind": "hadamard", "d": self.d, "K": self.K, "keep": self.keep, "epsilon": float(self.epsilon)}

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> HadamardNode:
        """Read and validate the JSON form (:class:`~pldp.errors.SpecError` naming ``path``); a
        leaf holds no other node, so ``parse_node`` is not used."""
        read_keys(obj, path, {"kind", "d", "K", "keep", "epsilon"})
        d = read_int(obj["d"], f"{path}.d", *HADAMARD_D)
        k = read_int(obj["K"], f"{path}.K", *HADAMARD_K)
        if k & (k - 1) or k <= d:
            raise SpecError(f"{path}.K must be a power of two > d = {d}, got {k}")
        keep = read_int(obj["keep"], f"{path}.keep", 1, GRID - 1)
        return cls(d, k, keep, read_budget(obj["epsilon"], f"{path}.epsilon", False))

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        return node_object(
            "hadamard",
            {
                "d": int_schema(*HADAMARD_D, "Number of items."),
                "K": int_schema(*HADAMARD_K, "Order of the Hadamard matrix: a power of two > d."),
                "keep": int_schema(1, GRID - 1, "Over 2**32: the probability of a report in the item's half."),
                "epsilon": budget_schema(False, "The LDP budget the node claims."),
            },
            description="Hadamard response: one index of a K x K Hadamard matrix, in the item's half w.p. keep.",
        )

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.hadamard(self, *args)

    # ------------------------------------------------------------------ reports
    def columns(self, prefix: str = "") -> list[Column]:
        return [Column(prefix + "value", "value", self.K)]

    @property
    def support(self) -> tuple[float, float]:
        """``(p*, q*)``: a report supports (lies in ``C_v`` of) its holder's item w.p. ``keep / 2**32``,
        another item w.p. exactly ``1/2`` (``C_x`` and ``C_v`` share half of each)."""
        return self.keep / GRID, 0.5

    @property
    def report_format(self) -> tuple[Any, ...]:
        """``d`` and ``K``: ``K / 2`` indices support an item (``C_x``), ``K / 2`` do not."""
        return ("hadamard", self.d, self.K)

    @property
    def hit_mass(self) -> int:
        """``keep``: an index in ``C_x``."""
        return self.keep

    # ------------------------------------------------------------------ claims
    def claim_ratio(self) -> tuple[int, int]:
        return max(self.keep, GRID - self.keep), min(self.keep, GRID - self.keep)

    def pair_support(self, i: int, j: int) -> tuple[float, float, float]:
        """A report of ``i`` lies in ``C_i`` w.p. ``keep / 2**32``, in ``C_j`` w.p. ``1/2``, in both (``K/4``
        of the ``K/2`` indices of either half) w.p. ``keep / 2**33``."""
        k = self.keep / GRID
        return k, 0.5, k / 2

    def supports(self, cols: Mapping[str, np.ndarray], item: int, column_prefix: str) -> np.ndarray:
        """``y in C_item``."""
        return in_half(item, np.asarray(cols[column_prefix + "value"]))

    # ------------------------------------------------------------------ the program
    def words(self, inp: Any) -> np.ndarray:
        return np.full(inp.size, 2, dtype=np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        w = cursor.take(rows, 2).astype(np.int64)
        r = w[:, 1] >> (GRID_BITS - (self.K.bit_length() - 1))
        out[prefix + "value"][rows] = into_half(inp, r, w[:, 0] < self.keep)
