"""The unary-encoding node: one word per bit; bit ``k`` is 1 w.p. ``a[k] / 2**32`` if ``k = x``, else ``b[k] / 2**32``.

The sampler of RAPPOR, OUE and IDUE (Gu et al., ICDE 2020). Its claims are per pair of items
:math:`(i, j)`: the ratio :math:`a_i (2^{32} - b_j) / (b_i (2^{32} - a_j))` must be at most
:math:`e^{\\varepsilon}`, with :math:`\\varepsilon = \\min(\\varepsilon_i, \\varepsilon_j)` (MinID-LDP,
Gu et al. eq. 5), :math:`(\\varepsilon_i + \\varepsilon_j)/2` (AvgID-LDP) or the common budget (LDP).
Items with equal ``(a, b, epsilon)`` form one group, so a pair of groups is checked once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from pldp.channel.exact import log_ratio, ratio_within
from pldp.channel.node import (
    Column,
    Node,
    NodeVisitor,
    ParseNode,
    R,
    Row,
    SchemaRef,
    enum_schema,
    epsilons_schema,
    groups,
    int_schema,
    list_schema,
    node_object,
    read_budgets,
    read_int,
    read_ints,
    read_keys,
    who,
)
from pldp.channel.sampling import GRID, unary_bits
from pldp.channel.words import Cursor
from pldp.errors import SpecError

__all__ = ["UNARY_NOTIONS", "UnaryNode", "pair_rows"]

#: The notions a unary node may claim.
UNARY_NOTIONS = ("LDP", "MinID-LDP", "AvgID-LDP")
#: The range of a unary node's number of bits ``d``.
UNARY_D = (2, 2**24)


def _pair_claim(notion: str, ei: float, ej: float, eps_min: float) -> float:
    if notion == "MinID-LDP":
        return min(ei, ej)
    if notion == "AvgID-LDP":
        return (ei + ej) / 2
    return eps_min


def pair_rows(
    a: tuple[int, ...], b: tuple[int, ...], epsilons: tuple[float, ...], notion: str, grid: int, part: str
) -> list[Row]:
    """The claims of independent bits, bit ``k`` set w.p. ``a[k] / grid`` for item ``k`` and ``b[k] / grid``
    for another: ``a_i (grid - b_j) / (b_i (grid - a_j)) <= e^c(i, j)`` for every ordered pair of
    distinct items (Gu et al. eq. 5), one row per pair of groups of equal ``(a, b, budget)``, decided
    exactly (``grid``: ``2**32`` for a node, ``2**64`` for the one-report channel of a memoized chain)."""
    by_group = groups(list(zip(a, b, epsilons, strict=True)))
    eps_min = min(epsilons)
    rows = []
    for (ai, bi, ei), gi in by_group.items():
        for (aj, bj, ej), gj in by_group.items():
            if gi is gj and len(gi) < 2:
                continue  # a pair needs two distinct items
            claim = _pair_claim(notion, ei, ej, eps_min)
            num, den = ai * (grid - bj), bi * (grid - aj)
            subject = f"{who(gi)} vs {who(gj)}"
            exact = (Fraction(ei) + Fraction(ej)) / 2 if notion == "AvgID-LDP" else claim
            ok = ratio_within(num, den, exact)
            rows.append(Row(part, subject, claim, log_ratio(num, den), ok))
    return rows


def bit_ratio(p: int, p2: int) -> Fraction:
    """The larger of the ratios of a bit being 1 and being 0 under probabilities p vs p2 (over 2**32)."""
    return max(Fraction(p, p2), Fraction(GRID - p, GRID - p2))


def read_bit_thresholds(obj: dict[str, Any], path: str, d: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``obj["a"]`` and ``obj["b"]`` (``d`` each) of a unary channel, checked: integers in
    ``(0, 2**32)`` with ``b[k] < a[k]`` for every bit (:class:`~pldp.errors.SpecError` naming
    ``path``). A unary node and a chain's unary instantaneous response read them alike."""
    a = read_ints(obj["a"], f"{path}.a", d, 1, GRID - 1)
    b = read_ints(obj["b"], f"{path}.b", d, 1, GRID - 1)
    bad = [k for k in range(d) if not b[k] < a[k]]
    if bad:
        raise SpecError(f"{path}: need b[k] < a[k] for every bit; not so at {bad[:5]}")
    return a, b


def bit_thresholds_schema() -> dict[str, dict[str, Any]]:
    """The JSON Schema of the members :func:`read_bit_thresholds` reads."""
    inner = int_schema(1, GRID - 1)
    return {
        "a": list_schema(inner, UNARY_D[0], "One per bit, over 2**32: bit k is 1 w.p. a[k] if k = x; b[k] < a[k]."),
        "b": list_schema(inner, UNARY_D[0], "One per bit, over 2**32: bit k is 1 w.p. b[k] if k != x."),
    }


@dataclass(frozen=True)
class UnaryNode(Node):
    """A unary-encoding sampler: bit ``k`` is 1 w.p. ``a[k] / 2**32`` if ``k = x``, else ``b[k] / 2**32``."""

    kind: ClassVar[str] = "unary"
    d: int
    a: tuple[int, ...]
    b: tuple[int, ...]
    notion: str
    epsilons: tuple[float, ...]

    @cached_property
    def thresholds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(a, b)`` as ``uint32`` arrays; ``a`` is ``2**32 - 1`` at most, so it fits."""
        return np.asarray(self.a, dtype=np.uint32), np.asarray(self.b, dtype=np.uint32)

    @property
    def nbytes(self) -> int:
        """Bytes of a packed report."""
        return (self.d + 7) // 8

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "unary",
            "d": self.d,
            "a": list(self.a),
            "b": list(self.b),
            "notion": self.notion,
            "epsilons": [float(e) for e in self.epsilons],
        }

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> UnaryNode:
        """Read and validate the JSON form (:class:`~pldp.errors.SpecError` naming ``path``); a
        leaf holds no other node, so ``parse_node`` is not used."""
        read_keys(obj, path, {"kind", "d", "a", "b", "notion", "epsilons"})
        d = read_int(obj["d"], f"{path}.d", *UNARY_D)
        a, b = read_bit_thresholds(obj, path, d)
        if obj["notion"] not in UNARY_NOTIONS:
            raise SpecError(f"{path}.notion must be one of {UNARY_NOTIONS}, got {obj['notion']!r}")
        eps = read_budgets(obj["epsilons"], f"{path}.epsilons", d, allow_inf=False)
        return cls(d, a, b, obj["notion"], eps)

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        return node_object(
            "unary",
            {
                "d": int_schema(*UNARY_D, "Number of bits."),
                **bit_thresholds_schema(),
                "notion": enum_schema(UNARY_NOTIONS),
                "epsilons": epsilons_schema(allow_inf=False, min_items=UNARY_D[0]),
            },
            description="Unary encoding (RAPPOR, OUE, IDUE): one word per bit.",
        )

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.unary(self, *args)

    @property
    def takes_one_item(self) -> bool:
        return True

    # ------------------------------------------------------------------ reports
    def columns(self, prefix: str = "") -> list[Column]:
        return [Column(prefix + "bits", "bits", self.d)]

    def bit_thresholds(self, x: int) -> np.ndarray:
        """Each bit's threshold on the ``2**32`` grid for item ``x``: ``a[x]`` for its own bit, ``b`` elsewhere."""
        p = np.asarray(self.b, dtype=np.int64).copy()
        p[x] = self.a[x]
        return p

    # ------------------------------------------------------------------ claims
    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        return pair_rows(self.a, self.b, self.epsilons, self.notion, GRID, part), max(self.epsilons)

    def ratio_to(self, other: UnaryNode) -> Fraction:
        """``max Pr(report | x, self) / Pr(report | x, other)`` over items ``x`` and reports."""
        b_ratios = [bit_ratio(b, b2) for b, b2 in zip(self.b, other.b, strict=True)]
        total = Fraction(1)
        for r, count in Counter(b_ratios).items():
            total *= r**count
        own = max(bit_ratio(a, a2) / rb for a, a2, rb in set(zip(self.a, other.a, b_ratios, strict=True)))
        return total * own

    # ------------------------------------------------------------------ the program
    def reports(self, inp: Any) -> int:
        return int(inp.size)

    def words(self, inp: Any) -> np.ndarray:
        return np.full(inp.size, self.d, dtype=np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        a, b = self.thresholds
        bits = unary_bits(inp, cursor.take(rows, self.d), a, b)
        out[prefix + "bits"][rows, : self.nbytes] = np.packbits(bits, axis=1)
