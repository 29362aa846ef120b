"""The unary-encoding node: one word per bit; bit ``k`` is 1 w.p. ``a[k] / 2**32`` if ``k = x``, else ``b[k] / 2**32``.

The sampler of RAPPOR, OUE, IDUE (Gu et al., ICDE 2020) and uRAP (Murakami & Kawamoto, USENIX
Security 2019). Its claims are per pair of items :math:`(i, j)`: the ratio
:math:`a_i (2^{32} - b_j) / (b_i (2^{32} - a_j))` must be at most :math:`e^{\\varepsilon}`, with
:math:`\\varepsilon = \\min(\\varepsilon_i, \\varepsilon_j)` (MinID-LDP, Gu et al. eq. 5),
:math:`(\\varepsilon_i + \\varepsilon_j)/2` (AvgID-LDP) or the common budget (LDP). Items with equal
``(a, b, epsilon)`` form one group, so a pair of groups is checked once.

ULDP (:func:`uldp_rows`). A node claiming ``"ULDP"`` may mark items non-sensitive (budget
``inf``); their bits, and only theirs, have ``b = 0``, so a set bit of a non-sensitive item is an
*invertible* output revealing its holder, which ULDP allows. Every other output (no non-sensitive
bit set) is *protected*, and on those outputs every pair of inputs must be within
:math:`e^{\\varepsilon}`, :math:`\\varepsilon` the smallest finite budget. This is one more
notion of the same leaf rather than a new kind: the sampler, the report and the program are the
unary node's, only the claims differ (a kind of its own would duplicate all three).
"""

from __future__ import annotations

import math
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
    budget_json,
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

__all__ = ["UNARY_NODE_NOTIONS", "UNARY_NOTIONS", "UnaryNode", "pair_rows", "uldp_row", "uldp_rows"]

#: The notions of independent bits with ``0 < b < a`` (a unary node; a memoized chain's response).
UNARY_NOTIONS = ("LDP", "MinID-LDP", "AvgID-LDP")
#: The notions a unary node may claim: those, and ULDP (``b = 0`` on the non-sensitive items).
UNARY_NODE_NOTIONS = (*UNARY_NOTIONS, "ULDP")
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


def uldp_rows(a: tuple[int, ...], b: tuple[int, ...], epsilons: tuple[float, ...], part: str) -> list[Row]:
    """The ULDP claims of independent bits whose non-sensitive items (budget ``inf``) have ``b = 0``.

    On a protected output (no non-sensitive bit set) the bits other than ``i`` and ``j`` cancel
    between inputs ``i`` and ``j``; bit ``j`` contributes at most ``(G - b_j) / (G - a_j)`` (its 0,
    forced when ``j`` is not sensitive; a set bit gives ``b_j / a_j < 1``) and bit ``i`` at most
    ``a_i / b_i`` if ``i`` is sensitive, ``(G - a_i) / G`` (its forced 0) if not. So for every
    ordered pair of distinct items ``f_i (G - b_j) / (G - a_j) <= e^eps`` with ``eps`` the
    smallest finite budget: the unary ratio (Gu et al. eq. 5) when ``i`` is sensitive. One row per
    pair of groups of equal ``(a, b, budget)``, decided exactly on the ``2**32`` grid. The
    invertible outputs need no row: ``b = 0`` on a
    non-sensitive item means only its holder sets its bit, which the parser checks."""
    by_group = groups(list(zip(a, b, epsilons, strict=True)))
    claim = min(e for e in epsilons if e != math.inf)
    rows = []
    for (ai, bi, ei), gi in by_group.items():
        for (aj, bj, _), gj in by_group.items():
            if gi is gj and len(gi) < 2:
                continue  # a pair needs two distinct items
            rows.append(uldp_row((ai, bi, ei), (aj, bj), claim, part, f"{who(gi)} vs {who(gj)}"))
    return rows


def uldp_row(first: tuple[int, int, float], second: tuple[int, int], claim: float, part: str, subject: str) -> Row:
    """The ULDP claim of :func:`uldp_rows` for inputs ``i`` (``(a_i, b_i, budget_i)``) and ``j``
    (``(a_j, b_j)``): ``f_i (G - b_j) / (G - a_j) <= e^claim``, decided exactly."""
    (ai, bi, ei), (aj, bj) = first, second
    fi_num, fi_den = (ai, bi) if ei != math.inf else (GRID - ai, GRID)
    num, den = fi_num * (GRID - bj), fi_den * (GRID - aj)
    return Row(part, subject, claim, log_ratio(num, den), ratio_within(num, den, claim))


def bit_ratio(p: int, p2: int) -> Fraction | None:
    """The larger of the ratios of a bit being 1 and being 0 under probabilities p vs p2 (over 2**32);
    None (infinite) when p2 = 0 < p; a side of probability 0 under both does not count."""
    sides = ((p, p2), (GRID - p, GRID - p2))
    if any(q2 == 0 < q for q, q2 in sides):
        return None
    return max(Fraction(q, q2) for q, q2 in sides if q2 > 0)


def read_bit_thresholds(
    obj: dict[str, Any], path: str, d: int, zero_b: bool = False
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``obj["a"]`` and ``obj["b"]`` (``d`` each) of a unary channel, checked: integers in
    ``(0, 2**32)`` (``b`` may be 0 if ``zero_b``) with ``b[k] < a[k]`` for every bit
    (:class:`~pldp.errors.SpecError` naming ``path``). A unary node and a chain's unary
    instantaneous response read them alike."""
    a = read_ints(obj["a"], f"{path}.a", d, 1, GRID - 1)
    b = read_ints(obj["b"], f"{path}.b", d, 0 if zero_b else 1, GRID - 1)
    bad = [k for k in range(d) if not b[k] < a[k]]
    if bad:
        raise SpecError(f"{path}: need b[k] < a[k] for every bit; not so at {bad[:5]}")
    return a, b


def bit_thresholds_schema(zero_b: bool = False) -> dict[str, dict[str, Any]]:
    """The JSON Schema of the members :func:`read_bit_thresholds` reads."""
    inner = int_schema(1, GRID - 1)
    zero = " (0 only for a non-sensitive item under ULDP)" if zero_b else ""
    return {
        "a": list_schema(inner, UNARY_D[0], "One per bit, over 2**32: bit k is 1 w.p. a[k] if k = x; b[k] < a[k]."),
        "b": list_schema(
            int_schema(0 if zero_b else 1, GRID - 1),
            UNARY_D[0],
            f"One per bit, over 2**32: bit k is 1 w.p. b[k] if k != x{zero}.",
        ),
    }


def _read_uldp(obj: dict[str, Any], path: str, d: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[float, ...]]:
    """``a``, ``b`` and ``epsilons`` of a ULDP unary node: ``b[k] = 0`` exactly on the items of budget
    ``inf``, and at least one item of finite budget."""
    a, b = read_bit_thresholds(obj, path, d, zero_b=True)
    eps = read_budgets(obj["epsilons"], f"{path}.epsilons", d, allow_inf=True)
    bad = [k for k in range(d) if (b[k] == 0) != (eps[k] == math.inf)]
    if bad:
        raise SpecError(f"{path}: under ULDP b[k] = 0 exactly for the items of budget inf; not so at {bad[:5]}")
    if all(e == math.inf for e in eps):
        raise SpecError(f"{path}: a ULDP node needs at least one sensitive item (finite budget)")
    return a, b, eps


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
            "epsilons": [budget_json(e) for e in self.epsilons],
        }

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> UnaryNode:
        """Read and validate the JSON form (:class:`~pldp.errors.SpecError` naming ``path``); a
        leaf holds no other node, so ``parse_node`` is not used."""
        read_keys(obj, path, {"kind", "d", "a", "b", "notion", "epsilons"})
        d = read_int(obj["d"], f"{path}.d", *UNARY_D)
        if obj["notion"] not in UNARY_NODE_NOTIONS:
            raise SpecError(f"{path}.notion must be one of {UNARY_NODE_NOTIONS}, got {obj['notion']!r}")
        if obj["notion"] == "ULDP":
            a, b, eps = _read_uldp(obj, path, d)
            return cls(d, a, b, "ULDP", eps)
        a, b = read_bit_thresholds(obj, path, d)
        eps = read_budgets(obj["epsilons"], f"{path}.epsilons", d, allow_inf=False)
        return cls(d, a, b, obj["notion"], eps)

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        return node_object(
            "unary",
            {
                "d": int_schema(*UNARY_D, "Number of bits."),
                **bit_thresholds_schema(zero_b=True),
                "notion": enum_schema(UNARY_NODE_NOTIONS),
                "epsilons": epsilons_schema(allow_inf=True, min_items=UNARY_D[0]),
            },
            description='Unary encoding (RAPPOR, OUE, IDUE, uRAP): one word per bit; "inf" budgets only under ULDP.',
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
        if self.notion == "ULDP":
            return uldp_rows(self.a, self.b, self.epsilons, part), max(self.epsilons)
        return pair_rows(self.a, self.b, self.epsilons, self.notion, GRID, part), max(self.epsilons)

    def ratio_to(self, other: UnaryNode) -> Fraction | None:
        """``max Pr(report | x, self) / Pr(report | x, other)`` over items ``x`` and reports (None:
        infinite, a bit that ``other`` never sets and ``self`` may)."""
        b_ratios = [bit_ratio(b, b2) for b, b2 in zip(self.b, other.b, strict=True)]
        a_ratios = [bit_ratio(a, a2) for a, a2 in zip(self.a, other.a, strict=True)]
        if None in b_ratios or None in a_ratios:
            return None
        total = Fraction(1)
        for r, count in Counter(b_ratios).items():
            assert r is not None
            total *= r**count
        own = max(ra / rb for ra, rb in set(zip(a_ratios, b_ratios, strict=True)) if ra is not None and rb is not None)
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
