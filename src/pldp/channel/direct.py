"""The direct-encoding node: one word per report, ``Pr(y | x) = (weights[y] + keep [x = y]) / 2**32``.

The sampler of KRR, URR, IPRR (Li et al., Wang et al.) and of PLDP-FEBSF's level report. Its
claims are per output: a sensitive output ``y`` of budget :math:`\\varepsilon_y` must satisfy
:math:`(w_y + keep) / w_y \\le e^{\\varepsilon_y}` (IPLDP, Li et al. Def. 5; ULDP, Murakami &
Kawamoto; LDP when every budget is equal), checked exactly with :func:`~pldp.channel.exact.ratio_within`.
"""

from __future__ import annotations

import math
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
from pldp.channel.sampling import GRID, GRID_BITS, DirectTable, direct_draw, direct_table
from pldp.channel.words import Cursor
from pldp.errors import SpecError

__all__ = ["DIRECT_NOTIONS", "DirectNode", "output_rows"]

#: The notions a direct node may claim.
DIRECT_NOTIONS = ("LDP", "ULDP", "IPLDP")
#: The range of a direct node's number of items ``d``.
DIRECT_D = (2, 2**31)


def output_rows(keep: int, weights: tuple[int, ...], epsilons: tuple[float, ...], part: str) -> list[Row]:
    """The claims of a direct channel ``Pr(y | x) = (weights[y] + keep [x = y]) / G``, one row per
    group of outputs with equal ``(weight, budget)``: ``(weights[y] + keep) / weights[y] <= e^eps_y``
    for every output of finite budget, decided exactly (the grid ``G`` cancels: a ``2**32`` node, or
    the ``2**64`` one-report channel of a memoized chain)."""
    rows = []
    for (w, e), items in groups(list(zip(weights, epsilons, strict=True))).items():
        if e == math.inf:
            continue  # a non-sensitive output may reveal its holder (IPLDP/ULDP condition)
        ok = w > 0 and ratio_within(w + keep, w, e)
        rows.append(Row(part, "output " + who(items)[5:], e, log_ratio(w + keep, w), ok))
    return rows


def read_keep_weights(obj: dict[str, Any], path: str, d: int) -> tuple[int, tuple[int, ...]]:
    """``obj["keep"]`` and ``obj["weights"]`` (``d`` of them) of a direct channel, checked: integers
    on the ``2**32`` grid that sum to it (:class:`~pldp.errors.SpecError` naming ``path``). A direct
    node and a chain's direct instantaneous response (:mod:`pldp.channel.memo`) read them alike."""
    keep = read_int(obj["keep"], f"{path}.keep", 1, GRID)
    weights = read_ints(obj["weights"], f"{path}.weights", d, 0, GRID)
    if keep + sum(weights) != GRID:
        raise SpecError(f"{path}: keep + sum(weights) = {keep + sum(weights)} must be 2**{GRID_BITS} = {GRID}")
    return keep, weights


def keep_weights_schema() -> dict[str, dict[str, Any]]:
    """The JSON Schema of the members :func:`read_keep_weights` reads."""
    return {
        "keep": int_schema(1, GRID, "Over 2**32: keep + sum(weights) = 2**32."),
        "weights": list_schema(int_schema(0, GRID), DIRECT_D[0], "One per item, over 2**32."),
    }


@dataclass(frozen=True)
class DirectNode(Node):
    """A direct-encoding sampler: ``Pr(y | x) = (weights[y] + keep [x = y]) / 2**32``."""

    kind: ClassVar[str] = "direct"
    d: int
    keep: int
    weights: tuple[int, ...]
    notion: str
    epsilons: tuple[float, ...]

    @cached_property
    def table(self) -> DirectTable:
        """The thresholds prepared for :func:`pldp.channel.sampling.direct_draw`."""
        return direct_table(self.keep, self.weights)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "direct",
            "d": self.d,
            "keep": self.keep,
            "weights": list(self.weights),
            "notion": self.notion,
            "epsilons": [budget_json(e) for e in self.epsilons],
        }

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> DirectNode:
        """Read and validate the JSON form (:class:`~pldp.errors.SpecError` naming ``path``); a
        leaf holds no other node, so ``parse_node`` is not used."""
        read_keys(obj, path, {"kind", "d", "keep", "weights", "notion", "epsilons"})
        d = read_int(obj["d"], f"{path}.d", *DIRECT_D)
        keep, weights = read_keep_weights(obj, path, d)
        if obj["notion"] not in DIRECT_NOTIONS:
            raise SpecError(f"{path}.notion must be one of {DIRECT_NOTIONS}, got {obj['notion']!r}")
        eps = read_budgets(obj["epsilons"], f"{path}.epsilons", d, allow_inf=True)
        return cls(d, keep, weights, obj["notion"], eps)

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        return node_object(
            "direct",
            {
                "d": int_schema(*DIRECT_D, "Number of items."),
                **keep_weights_schema(),
                "notion": enum_schema(DIRECT_NOTIONS),
                "epsilons": epsilons_schema(allow_inf=True, min_items=DIRECT_D[0]),
            },
            description="Direct encoding (KRR, URR, IPRR): Pr(y | x) = (weights[y] + keep [x = y]) / 2**32.",
        )

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.direct(self, *args)

    @property
    def takes_one_item(self) -> bool:
        return True

    # ------------------------------------------------------------------ reports
    def columns(self, prefix: str = "") -> list[Column]:
        return [Column(prefix + "item", "item", self.d)]

    def column(self, x: int) -> list[int]:
        """``Pr(y | x)`` for every output ``y``, as numerators over ``2**32``."""
        return [w + (self.keep if y == x else 0) for y, w in enumerate(self.weights)]

    # ------------------------------------------------------------------ claims
    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        return output_rows(self.keep, self.weights, self.epsilons, part), max(self.epsilons)

    def max_output_ratio(self, t: int, u: int) -> Fraction | None:
        """``max_y Pr(y | t) / Pr(y | u)`` exactly (None: infinite, an output possible only from ``t``)."""
        col, col2 = self.column(t), self.column(u)
        if any(c2 == 0 < c for c, c2 in zip(col, col2, strict=True)):
            return None
        return max(Fraction(c, c2) for c, c2 in zip(col, col2, strict=True) if c2 > 0)

    def ratio_to(self, other: DirectNode) -> Fraction | None:
        """``max Pr(y | x, self) / Pr(y | x, other)`` over items ``x`` and outputs ``y`` (None: infinite)."""
        best = Fraction(0)
        for w, k, w2, k2 in {(w, self.keep, w2, other.keep) for w, w2 in zip(self.weights, other.weights, strict=True)}:
            if (w > 0 and w2 == 0) or (w + k > 0 and w2 + k2 == 0):
                return None
            cands = [Fraction(w + k, w2 + k2)] + ([Fraction(w, w2)] if w2 > 0 else [])
            best = max(best, *cands)
        return best

    # ------------------------------------------------------------------ the program
    def reports(self, inp: Any) -> int:
        return int(inp.size)

    def words(self, inp: Any) -> np.ndarray:
        return np.ones(inp.size, dtype=np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        w = cursor.take(rows, 1)[:, 0]
        out[prefix + "item"][rows] = direct_draw(inp, w, self.table)
