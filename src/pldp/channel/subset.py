"""The subset-selection node: a report is a ``k``-subset of the ``d`` items, likelier when it holds the user's.

Subset selection (Wang, Wu, Hu, EDBT/ICDT workshops 2016, the k-subset mechanism; Ye & Barg, IEEE
Trans. IT 2018) reports a set ``S`` of ``k`` items with :math:`\\Pr(S \\mid x) \\propto e^\\varepsilon`
when ``x`` is in ``S`` and 1 otherwise. Sampled as: ``x`` joins ``S`` with probability
``keep / 2**32``; the other members are a uniform subset of ``[d] \\ {x}`` (``k - 1`` of them when
``x`` is in, ``k`` when not). On the ``2**32`` grid,

.. math::

    \\Pr(S \\mid x) = \\frac{keep}{2^{32} \\binom{d-1}{k-1}} \\ (x \\in S), \\qquad
    \\frac{2^{32} - keep}{2^{32} \\binom{d-1}{k}} \\ (x \\notin S).

The claim. For two items ``x, x'`` and a set holding ``x`` but not ``x'`` the ratio is
``keep (d - k) / ((2**32 - keep) k)`` (``C(d-1, k) / C(d-1, k-1) = (d - k) / k``), its inverse in
the opposite case and 1 otherwise: the node is :math:`\\varepsilon`-LDP exactly when that ratio and
its inverse are at most ``e^eps`` (:func:`~pldp.channel.exact.ratio_within`), attained by any set
that separates the two items.

The program: ``1 + k`` words per report (more when a choice is rejected). Word ``w0`` decides
membership, ``x in S`` iff ``w0 < keep``. Then a partial Fisher-Yates shuffle of the ``d - 1`` other
items, in increasing order, draws ``k`` of them: choice ``t`` (``0 <= t < k``) swaps position ``t``
with position ``t + u``, ``u`` exactly uniform below ``d - 1 - t`` by rejection
(:func:`~pldp.channel.sampling.uniform_below`: a rejected word is replaced by the next one). ``S`` is
``x`` and the first ``k - 1`` drawn when ``x`` is in (the ``k``-th choice is drawn all the same, so
that the words a report reads do not depend on ``w0``), else the ``k`` drawn. The payload is ``S``'s
``d`` bits, packed as a unary report's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pldp.bitcount import row_ones
from pldp.channel.columns import refuse_first
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
from pldp.channel.sampling import GRID, uniform_below
from pldp.channel.words import Cursor, RejectedError, WordStream
from pldp.errors import SpecError

__all__ = ["SUBSET_D", "SubsetNode", "subset_rows"]

#: The range of the number of items ``d`` (as a unary node's: a report is ``d`` bits).
SUBSET_D = (2, 2**24)
#: Cells of the per-block shuffle arrays of :func:`subset_rows` (16 MiB of ``int32``).
_BLOCK_CELLS = 1 << 22


def subset_rows(x: np.ndarray, inside: np.ndarray, choices: np.ndarray, d: int) -> np.ndarray:
    """The packed bits ``(n, ceil(d / 8))`` of the sets of items ``x``, memberships ``inside`` and
    accepted uniform choices ``choices`` (``(n, k)``, ``choices[:, t] < d - 1 - t``): the partial
    Fisher-Yates shuffle of the module docstring, run on every row at once, in blocks."""
    n, k = choices.shape
    if n == 1:  # one report (a client's, or a batch redrawn report by report): list swaps, no array calls
        return _one_row(int(x[0]), bool(inside[0]), choices[0].tolist(), d)
    out = np.zeros((n, (d + 7) // 8), dtype=np.uint8)
    others = np.arange(d - 1, dtype=np.int32)
    block = max(1, _BLOCK_CELLS // d)
    for start in range(0, n, block):
        xs = np.asarray(x[start : start + block], dtype=np.int32)
        m = xs.size
        a = others[None, :] + (others[None, :] >= xs[:, None]).astype(np.int32)  # [d] \ {x}, increasing
        r = np.arange(m)
        for t in range(k):
            j = t + choices[start : start + m, t]
            at, aj = a[:, t].copy(), a[r, j]
            a[:, t] = aj
            a[r, j] = at
        bits = np.zeros((m, d), dtype=bool)
        bits[r[:, None], a[:, : k - 1]] = True
        bits[r, a[:, k - 1]] = ~inside[start : start + m]
        bits[r, xs] = inside[start : start + m]
        out[start : start + m] = np.packbits(bits, axis=1)
    return out


def _one_row(x: int, inside: bool, choices: list[int], d: int) -> np.ndarray:
    """:func:`subset_rows` of one report: the same swaps on the positions they move only (position
    ``p`` holds ``p + (p >= x)`` until a swap moves it), ``O(k)`` instead of a ``d``-long list."""
    moved: dict[int, int] = {}

    def at(p: int) -> int:
        return moved.get(p, p + (p >= x))

    k = len(choices)
    for t, u in enumerate(choices):
        moved[t], moved[t + u] = at(t + u), at(t)
    bits = np.zeros(d, dtype=bool)
    bits[[at(t) for t in range(k - 1)]] = True
    bits[x if inside else at(k - 1)] = True
    return np.packbits(bits)[None, :]


@dataclass(frozen=True)
class SubsetNode(EveryPairLeaf):
    """A subset-selection sampler: ``k`` of ``d`` items, the user's among them w.p. ``keep / 2**32``
    and the rest uniform (module docstring)."""

    kind: ClassVar[str] = "subset"
    d: int
    k: int
    keep: int
    epsilon: float

    def to_json(self) -> dict[str, Any]:
        return {"kind": "subset", "d": self.d, "k": self.k, "keep": self.keep, "epsilon": float(self.epsilon)}

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> SubsetNode:
        """Read and validate the JSON form (:class:`~pldp.errors.SpecError` naming ``path``); a
        leaf holds no other node, so ``parse_node`` is not used."""
        read_keys(obj, path, {"kind", "d", "k", "keep", "epsilon"})
        d = read_int(obj["d"], f"{path}.d", *SUBSET_D)
        k = read_int(obj["k"], f"{path}.k", 1, SUBSET_D[1] - 1)
        if k >= d:
            raise SpecError(f"{path}.k must be below d = {d}, got {k}")
        keep = read_int(obj["keep"], f"{path}.keep", 1, GRID - 1)
        return cls(d, k, keep, read_budget(obj["epsilon"], f"{path}.epsilon", False))

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        return node_object(
            "subset",
            {
                "d": int_schema(*SUBSET_D, "Number of items."),
                "k": int_schema(1, SUBSET_D[1] - 1, "Items in a reported subset (below d)."),
                "keep": int_schema(1, GRID - 1, "Over 2**32: the probability that the subset holds the user's item."),
                "epsilon": budget_schema(False, "The LDP budget the node claims."),
            },
            description="Subset selection: k of d items, the user's among them w.p. keep / 2**32.",
        )

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.subset(self, *args)

    # ------------------------------------------------------------------ reports
    def columns(self, prefix: str = "") -> list[Column]:
        return [Column(prefix + "bits", "bits", self.d)]

    @property
    def support(self) -> tuple[float, float]:
        """``(p*, q*)``: a report holds its user's item w.p. ``keep / 2**32``, another item w.p.
        ``p* (k - 1) / (d - 1) + (1 - p*) k / (d - 1)``."""
        p = self.keep / GRID
        return p, (p * (self.k - 1) + (1 - p) * self.k) / (self.d - 1)

    def check_columns(
        self, cols: Mapping[str, np.ndarray], n: int, prefix: str = "", rows: np.ndarray | None = None
    ) -> None:
        """Refuse the first report (of ``rows``, or all) that holds other than ``k`` items (a report
        of all ones would support every item)."""
        ones = row_ones(np.asarray(cols[prefix + "bits"]))
        bad = ones != self.k
        refuse_first(bad if rows is None else bad & rows, lambda i: f"{int(ones[i])} items, not k = {self.k}")

    @property
    def report_format(self) -> tuple[Any, ...]:
        """``d`` and ``k``: ``C(d-1, k-1)`` sets hold an item, ``C(d-1, k)`` do not."""
        return ("subset", self.d, self.k)

    @property
    def hit_mass(self) -> int:
        """``keep``: the set holds ``x``."""
        return self.keep

    # ------------------------------------------------------------------ claims
    def claim_ratio(self) -> tuple[int, int]:
        a, b = self.keep * (self.d - self.k), (GRID - self.keep) * self.k
        return max(a, b), min(a, b)

    def pair_support(self, i: int, j: int) -> tuple[float, float, float]:
        """A report of ``i`` holds ``i`` w.p. ``p* = keep / 2**32``, ``j`` w.p. ``q*``, both w.p.
        ``p* (k - 1) / (d - 1)`` (of the ``C(d-1, k-1)`` sets that hold ``i``, ``C(d-2, k-2)`` hold ``j``)."""
        p, q = self.support
        return p, q, p * (self.k - 1) / (self.d - 1)

    def supports(self, cols: Mapping[str, np.ndarray], item: int, column_prefix: str) -> np.ndarray:
        """The set holds ``item``: its bit is set."""
        rows = np.asarray(cols[column_prefix + "bits"])
        return np.asarray((rows[:, item >> 3] & (0x80 >> (item & 7))) != 0)

    # ------------------------------------------------------------------ the program
    @property
    def bounds(self) -> np.ndarray:
        """``d - 1 - t`` for each choice ``t``: the range of its uniform draw."""
        return self.d - 1 - np.arange(self.k, dtype=np.int64)

    def sample(self, x: np.ndarray, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, accepted)``: the packed sets of items ``x`` from ``1 + k`` words each (``(n, 1 + k)``),
        and whether each report's choices were all accepted (a row not accepted is not a report)."""
        w = np.asarray(words)
        choices, ok = uniform_below(w[:, 1:], self.bounds[None, :])
        inside = w[:, 0].astype(np.int64) < self.keep
        return subset_rows(np.asarray(x), inside, choices, self.d), np.asarray(ok.all(axis=1))

    def words(self, inp: Any) -> np.ndarray:
        return np.full(inp.size, 1 + self.k, dtype=np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        bits, ok = self.sample(inp, cursor.take(rows, 1 + self.k))
        if not ok.all():
            raise RejectedError
        out[prefix + "bits"][rows] = bits

    def draw_one(self, inp: Any, stream: WordStream, out: dict[str, np.ndarray], prefix: str = "") -> None:
        first = stream.peek(1)[0]
        stream.advance(1)
        choices = stream.uniforms(self.bounds)
        inside = np.array([int(first) < self.keep])
        out[prefix + "bits"][:1] = subset_rows(np.asarray(inp)[:1], inside, choices[None, :], self.d)
