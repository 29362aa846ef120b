"""The memoized chain node: a permanent randomized response drawn once per value, an instantaneous one per report.

RAPPOR's memoization (Erlingsson, Pihur, Korolova, CCS 2014) and its optimised second rounds
(Arcolezi, Couchot, Bouna, Xiao, Digital Communications and Networks 2022): a device draws the
*permanent* randomized response (PRR) ``z`` of a value ``x`` once, keeps it in its memo, and sends
each report through a fresh *instantaneous* randomized response (IRR) of ``z``. Every report of
``x`` is a function of ``z`` and fresh coins, so any number of them reveals no more than ``z``: the
permanent node's claims (its budgets :math:`\\varepsilon_\\infty`) bound them all. One report,
drawn with a fresh PRR, has the *chained* channel; the node claims :math:`\\varepsilon_1` for it
(``notion``, ``epsilons``), checked exactly on that channel (``docs/wire-format.md`` §2 and §3.6).

* Direct chain (L-GRR, L-IPRR): the PRR is a direct node (``keep1``, ``W1``) and the IRR a direct
  channel (``keep2``, ``W2``) applied to ``z``. The one-report channel is direct again, over
  :math:`2^{64}`: :math:`\\Pr(y \\mid x) 2^{64} = K [x = y] + W_y` with :math:`K = K_1 K_2` and
  :math:`W_y = 2^{32} W_{2,y} + K_2 W_{1,y}`.
* Unary chain (L-OUE, L-OSUE, L-SUE, L-SOUE, L-IDUE): the PRR is a unary node (``a1``, ``b1``) and
  the IRR keeps a set bit ``k`` w.p. ``a2[k] / 2**32`` and raises a clear one w.p. ``b2[k] / 2**32``.
  The bits of one report are independent, bit ``k`` set w.p. :math:`p^*_k = (a_{1,k} a_{2,k} +
  (2^{32} - a_{1,k}) b_{2,k}) / 2^{64}` for item ``k`` and :math:`q^*_k = (b_{1,k} a_{2,k} +
  (2^{32} - b_{1,k}) b_{2,k}) / 2^{64}` for another.

The program (:class:`MemoInput`): a report whose value the memo does not hold draws the PRR's words
first (and the memo keeps ``z``), then every report draws the IRR's words.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from pldp.channel.direct import (
    DIRECT_D,
    DIRECT_NOTIONS,
    DirectNode,
    keep_weights_schema,
    output_rows,
    read_keep_weights,
)
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
    int_schema,
    node_object,
    object_schema,
    one_of,
    read_budgets,
    read_int,
    read_keys,
)
from pldp.channel.sampling import GRID, DirectTable, direct_draw, direct_table, irr_bits, unary_bits
from pldp.channel.unary import (
    UNARY_D,
    UNARY_NOTIONS,
    UnaryNode,
    bit_thresholds_schema,
    pair_rows,
    read_bit_thresholds,
)
from pldp.channel.words import Cursor
from pldp.errors import SpecError

__all__ = ["CHAIN_GRID", "DirectIRR", "MemoInput", "MemoNode", "UnaryIRR"]

#: The grid of a chained (one-report) probability: a product of two ``2**32`` numerators.
CHAIN_GRID = GRID * GRID


@dataclass(frozen=True)
class DirectIRR:
    """The instantaneous response of a direct chain: report ``z`` when ``w < keep``, else the smallest
    ``y`` with ``w - keep`` below the sum of ``weights`` up to ``y`` (``keep + sum(weights) = 2**32``)."""

    keep: int
    weights: tuple[int, ...]

    @cached_property
    def table(self) -> DirectTable:
        """The thresholds prepared for :func:`pldp.channel.sampling.direct_draw`."""
        return direct_table(self.keep, self.weights)

    def to_json(self) -> dict[str, Any]:
        return {"keep": self.keep, "weights": list(self.weights)}

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON Schema of :meth:`to_json`."""
        return object_schema(keep_weights_schema(), description="A direct channel applied to z (over 2**32).")

    @classmethod
    def parse(cls, obj: Any, path: str, d: int) -> DirectIRR:
        read_keys(obj, path, {"keep", "weights"})
        return cls(*read_keep_weights(obj, path, d))

    def chained(self, permanent: DirectNode) -> tuple[int, tuple[int, ...]]:
        """The one-report channel ``(K, W)`` over ``2**64``: ``Pr(y | x) = (W[y] + K [x = y]) / 2**64``."""
        k1, k2 = permanent.keep, self.keep
        return k1 * k2, tuple(GRID * w2 + k2 * w1 for w1, w2 in zip(permanent.weights, self.weights, strict=True))

    def words(self, d: int) -> int:
        return 1

    def draw(self, z: np.ndarray, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str) -> None:
        w = cursor.take(rows, 1)[:, 0]
        out[prefix + "item"][rows] = direct_draw(z, w, self.table)


@dataclass(frozen=True)
class UnaryIRR:
    """The instantaneous response of a unary chain: bit ``k`` is ``w[k] < (z[k] ? a[k] : b[k])``,
    with ``0 < b[k] < a[k] < 2**32``."""

    a: tuple[int, ...]
    b: tuple[int, ...]

    @cached_property
    def thresholds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(a, b)`` as ``uint32`` arrays."""
        return np.asarray(self.a, dtype=np.uint32), np.asarray(self.b, dtype=np.uint32)

    def to_json(self) -> dict[str, Any]:
        return {"a": list(self.a), "b": list(self.b)}

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON Schema of :meth:`to_json`."""
        return object_schema(bit_thresholds_schema(), description="Bit k of z kept w.p. a[k], raised w.p. b[k].")

    @classmethod
    def parse(cls, obj: Any, path: str, d: int) -> UnaryIRR:
        read_keys(obj, path, {"a", "b"})
        return cls(*read_bit_thresholds(obj, path, d))

    def chained(self, permanent: UnaryNode) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The one-report bit probabilities ``(p*, q*)`` over ``2**64`` (module docstring)."""

        def through(p1: tuple[int, ...]) -> tuple[int, ...]:
            return tuple(p * a2 + (GRID - p) * b2 for p, a2, b2 in zip(p1, self.a, self.b, strict=True))

        return through(permanent.a), through(permanent.b)

    def words(self, d: int) -> int:
        return d

    def draw(self, z: np.ndarray, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str) -> None:
        a, b = self.thresholds
        bits = irr_bits(z, cursor.take(rows, len(self.a)), a, b)
        out[prefix + "bits"][rows, : (len(self.a) + 7) // 8] = np.packbits(bits, axis=1)


@dataclass
class MemoInput:
    """The input of a memo node's program for a batch of reports (one entry per report).

    Attributes
    ----------
    items : ndarray of int64, shape (n,)
        The values reported.
    permanent : ndarray, shape (n,) of int64 (direct) or (n, d) of bool (unary)
        The permanent responses: given where the memo holds them (``source == -1``), filled in by
        the program elsewhere (the caller then keeps the new ones in its memo).
    source : ndarray of int64, shape (n,)
        ``-1``: the memo holds report ``i``'s permanent response; ``i``: report ``i`` draws it (the
        first report of a value the memo lacks); ``j < i``: report ``i`` takes report ``j``'s draw
        (a later report of that value in the same batch).
    """

    items: np.ndarray
    permanent: np.ndarray
    source: np.ndarray

    @classmethod
    def fresh(cls, node: MemoNode, items: np.ndarray) -> MemoInput:
        """An input with an empty memo: every report draws its own permanent response (one report
        per value, as the library's ``perturb`` of one round)."""
        x = np.asarray(items, dtype=np.int64).reshape(-1)
        return cls(x, node.empty_permanent(x.size), np.arange(x.size, dtype=np.int64))


@dataclass(frozen=True)
class MemoNode(Node):
    """A memoized chain: ``permanent`` drawn once per value, ``instantaneous`` per report (module docstring)."""

    kind: ClassVar[str] = "memo"
    d: int
    permanent: DirectNode | UnaryNode
    instantaneous: DirectIRR | UnaryIRR
    notion: str
    epsilons: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "memo",
            "d": self.d,
            "permanent": self.permanent.to_json(),
            "instantaneous": self.instantaneous.to_json(),
            "notion": self.notion,
            "epsilons": [budget_json(e) for e in self.epsilons],
        }

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> MemoNode:
        """Read and validate the JSON form; ``parse_node`` reads the permanent node."""
        assert parse_node is not None
        read_keys(obj, path, {"kind", "d", "permanent", "instantaneous", "notion", "epsilons"})
        permanent = parse_node(obj["permanent"], f"{path}.permanent")
        if not isinstance(permanent, (DirectNode, UnaryNode)):
            raise SpecError(f"{path}.permanent must be a direct or unary node")
        d = read_int(obj["d"], f"{path}.d", permanent.d, permanent.d)
        irr: DirectIRR | UnaryIRR
        where = f"{path}.instantaneous"
        if isinstance(permanent, DirectNode):
            irr, notions, allow_inf = DirectIRR.parse(obj["instantaneous"], where, d), DIRECT_NOTIONS, True
        else:
            irr, notions, allow_inf = UnaryIRR.parse(obj["instantaneous"], where, d), UNARY_NOTIONS, False
        if obj["notion"] not in notions:
            raise SpecError(f"{path}.notion must be one of {notions}, got {obj['notion']!r}")
        eps = read_budgets(obj["epsilons"], f"{path}.epsilons", d, allow_inf=allow_inf)
        return cls(d, permanent, irr, obj["notion"], eps)

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        """Every member, and one variant per kind of permanent node, which the instantaneous response,
        the notions, the budgets and the range of ``d`` follow."""
        chains = (
            ("direct", DIRECT_D, DirectIRR, DIRECT_NOTIONS, True),
            ("unary", UNARY_D, UnaryIRR, UNARY_NOTIONS, False),
        )

        def members(
            kinds: list[dict[str, Any]],
            d: tuple[int, int],
            irrs: list[dict[str, Any]],
            notions: tuple[str, ...],
            inf: bool,
        ) -> dict[str, Any]:
            return {
                "d": int_schema(*d, "Number of items: the permanent node's d."),
                "permanent": one_of(kinds, "The permanent response, drawn once per value: a direct or unary node."),
                "instantaneous": one_of(irrs, "The instantaneous response, drawn per report from the permanent one."),
                "notion": enum_schema(notions, "The notion of the one-report claim."),
                "epsilons": epsilons_schema(inf, d[0]),
            }

        variants = [
            {
                "properties": members([ref(kind)], d, [irr.json_schema()], notions, inf),
                "description": f"A {kind} chain.",
            }
            for kind, d, irr, notions, inf in chains
        ]
        every = members(
            [ref(kind) for kind, *_ in chains],
            (min(c[1][0] for c in chains), max(c[1][1] for c in chains)),
            [c[2].json_schema() for c in chains],
            tuple(dict.fromkeys(n for c in chains for n in c[3])),
            any(c[4] for c in chains),
        )
        description = (
            "A memoized chain (L-GRR, L-IPRR, L-OUE, ...): a permanent response drawn once per value, an "
            "instantaneous one per report."
        )
        return {**node_object("memo", every, description=description), "oneOf": variants}

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.memo(self, *args)

    @property
    def memoized(self) -> bool:
        return True

    @property
    def permanent_epsilons(self) -> tuple[float, ...]:
        """:math:`\\varepsilon_\\infty` of each item: the budgets of the permanent node."""
        return self.permanent.epsilons

    # ------------------------------------------------------------------ reports
    def columns(self, prefix: str = "") -> list[Column]:
        return self.permanent.columns(prefix)

    @property
    def takes_one_item(self) -> bool:
        return True

    def empty_permanent(self, n: int) -> np.ndarray:
        """Room for ``n`` permanent responses: items (``-1``) or ``(n, d)`` bits."""
        if isinstance(self.permanent, UnaryNode):
            return np.zeros((n, self.d), dtype=bool)
        return np.full(n, -1, dtype=np.int64)

    @staticmethod
    def permanent_column(kind: Any, d: int) -> Column | None:
        """The payload column of a permanent node of ``kind`` over ``d`` items (how a device's memo
        store writes its permanent responses); None for a kind that is no permanent node."""
        if kind == "direct":
            return Column("item", "item", d)
        if kind == "unary":
            return Column("bits", "bits", d)
        return None

    def permanent_json(self, permanent: np.ndarray) -> list[Any]:
        """Permanent responses (rows as :meth:`empty_permanent` holds them) as JSON values: the
        permanent node's payloads (an item, or the packed bits as base64)."""
        column = self.permanent.columns()[0]
        values = np.packbits(permanent, axis=1) if isinstance(self.permanent, UnaryNode) else permanent
        return [column.to_json(values, i) for i in range(len(values))]

    def read_permanent_json(self, values: list[Any]) -> np.ndarray:
        """The inverse of :meth:`permanent_json` (of values :meth:`Column.is_canonical_json` accepted)."""
        if isinstance(self.permanent, UnaryNode):
            raw = np.frombuffer(b"".join(base64.b64decode(z) for z in values), dtype=np.uint8)
            return np.unpackbits(raw.reshape(len(values), -1), axis=1, count=self.d).astype(bool)
        return np.array(values, dtype=np.int64).reshape(len(values))

    def chained(self) -> tuple[Any, Any]:
        """The exact one-report channel over ``2**64``: ``(K, W)`` of a direct chain, ``(p*, q*)`` of a
        unary one (module docstring)."""
        return self.instantaneous.chained(self.permanent)  # type: ignore[arg-type]

    def one_report(self) -> DirectNode | UnaryNode:
        """The one-report channel as a node of the permanent node's kind on the ``2**-32`` grid, every
        probability rounded to the nearest step (within ``2**-33`` of :meth:`chained`), with the
        one-report claim: a view for statistical audits of one report, not for exact claims."""
        first, second = self.chained()

        def near(v: int) -> int:
            return (v + GRID // 2) // GRID

        if isinstance(self.permanent, DirectNode):
            weights = [near(w) for w in second]
            keep = GRID - sum(weights)
            return DirectNode(self.d, keep, tuple(weights), self.notion, self.epsilons)
        a, b = (tuple(min(max(near(v), 1), GRID - 1) for v in arr) for arr in (first, second))
        return UnaryNode(self.d, a, b, self.notion, self.epsilons)

    # ------------------------------------------------------------------ claims
    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        """The permanent node's claims (:math:`\\varepsilon_\\infty`, any number of reports of one value)
        and the one-report claims (:math:`\\varepsilon_1`) on the chained channel, both exact."""
        rows, _ = self.permanent.claims(f"{part} permanent (any number of reports of one value)")
        one = f"{part} one report"
        first, second = self.chained()
        if isinstance(self.permanent, DirectNode):
            rows += output_rows(first, second, self.epsilons, one)
        else:
            rows += pair_rows(first, second, self.epsilons, self.notion, CHAIN_GRID, one)
        return rows, max(self.epsilons)

    # ------------------------------------------------------------------ the program
    def reports(self, inp: Any) -> int:
        return int(inp.items.size)

    def words(self, inp: Any) -> np.ndarray:
        n = inp.items.size
        fresh = inp.source == np.arange(n)
        per_prr = 1 if isinstance(self.permanent, DirectNode) else self.d
        return self.instantaneous.words(self.d) + np.where(fresh, per_prr, 0).astype(np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        """The permanent responses of the reports that draw one, copies for the later reports of their
        values, then the instantaneous response of every report (see :class:`MemoInput`)."""
        src = inp.source[rows]
        fresh = rows[src == rows]
        if fresh.size:
            x = inp.items[fresh]
            if isinstance(self.permanent, DirectNode):
                inp.permanent[fresh] = direct_draw(x, cursor.take(fresh, 1)[:, 0], self.permanent.table)
            else:
                a, b = self.permanent.thresholds
                inp.permanent[fresh] = unary_bits(x, cursor.take(fresh, self.d), a, b)
        copies = rows[(src >= 0) & (src != rows)]
        if copies.size:
            inp.permanent[copies] = inp.permanent[inp.source[copies]]
        self.instantaneous.draw(inp.permanent[rows], cursor, rows, out, prefix)
