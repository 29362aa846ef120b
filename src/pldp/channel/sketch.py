"""The sketch nodes: Apple's count-mean sketch (``cms``) and Hadamard count-mean sketch (``hcms``).

Apple's Differential Privacy Team ("Learning with Privacy at Scale", Apple Machine Learning
Journal, 2017; algorithms A_client-CMS and A_client-HCMS) hash an item with one of ``k`` public
hash functions ``h_0 .. h_{k-1}`` from the items to ``[0, m)``, the row ``j`` of a ``k x m`` sketch
chosen uniformly by the user. Here ``h_j(x)`` is XXH32 of the item's index with seed ``j``, reduced
modulo ``m`` (:func:`pldp.channel.hashed.hash_values`); ``k`` and ``m`` are powers of two.

``cms``: the vector ``v`` in ``{-1, +1}^m``, ``+1`` only at ``h_j(x)``, each coordinate flipped
independently; the report is ``j`` and the ``m`` bits (bit ``l`` set for ``+1``). On the ``2**32``
grid a coordinate is flipped when its word is below ``flip``:

.. math::

    \\Pr(j, b \\mid x) = \\frac1k \\prod_{l < m}
        \\frac{(2^{32} - flip)\\,[b_l = v_l] + flip\\,[b_l \\ne v_l]}{2^{32}} .

The claim. For two items the vectors of one row differ in at most two coordinates (none when
``h_j(x) = h_j(x')``) and ``j`` does not depend on the item, so the ratio of those probabilities is
at most ``((2**32 - flip) / flip)^2`` (for ``flip < 2**31``), attained by the bits ``+1`` at
``h_j(x)`` and ``-1`` at ``h_j(x')`` of any row that separates the items: the node is
:math:`\\varepsilon`-LDP exactly when ``(2**32 - flip)^2 / flip^2 <= e^eps``
(:func:`~pldp.channel.exact.ratio_within`).

``hcms``: a uniform column ``l`` of the Sylvester-Hadamard matrix of order ``m``,
``H[r, l] = (-1)^popcount(r & l)``, and the one entry ``w = H[h_j(x), l]``, kept when its word is
below ``keep``, else negated; the report is ``(j, l, b)`` with ``b = 1`` for ``+1``. Two items give
the same law of ``(j, l)``; the bit's two probabilities are ``keep / 2**32`` and its complement, so
the ratio is at most ``max(keep, 2**32 - keep) / min(keep, 2**32 - keep)``, attained at any row and
column where the two entries differ.

The programs. ``cms``: ``1 + m`` words, ``j`` the top ``log2(k)`` bits of the first (``0`` when
``k = 1``), then bit ``l`` is ``v_l`` flipped when word ``1 + l`` is below ``flip``. ``hcms``: three
words, ``j`` and ``l`` the top ``log2(k)`` and ``log2(m)`` bits of the first two, the entry kept
when the third is below ``keep``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pldp.bitcount import parity as bit_parity
from pldp.channel.exact import log_ratio, ratio_within
from pldp.channel.hashed import hash_values
from pldp.channel.node import (
    Column,
    Node,
    NodeVisitor,
    ParseNode,
    R,
    Row,
    SchemaRef,
    budget_schema,
    enum_schema,
    int_schema,
    node_object,
    read_budget,
    read_int,
    read_keys,
)
from pldp.channel.sampling import GRID, GRID_BITS
from pldp.channel.words import Cursor
from pldp.errors import SpecError

__all__ = [
    "SKETCH_D",
    "SKETCH_FAMILIES",
    "SKETCH_K",
    "SKETCH_M",
    "CMSNode",
    "HCMSNode",
    "hadamard_entry",
    "sketch_hashes",
    "top_bits",
]

#: The hash families a sketch node may name: XXH32 of the item index, seed ``j`` (its own list: a
#: family added to local hashing's is not one the sketches compute).
SKETCH_FAMILIES = ("xxh32",)
#: The range of the number of hash functions ``k`` (a power of two).
SKETCH_K = (1, 1 << 16)
#: The range of the width ``m`` of the sketch (a power of two): a ``cms`` report carries ``m`` bits.
SKETCH_M = {"cms": (2, 1 << 16), "hcms": (2, 1 << 24)}
#: The range of the number of items ``d``.
SKETCH_D = (2, (1 << 31) - 1)


def top_bits(words: Any, bits: int) -> np.ndarray:
    """The top ``bits`` bits of 32-bit words (uniform over ``[0, 2**bits)``); ``0`` for ``bits = 0``."""
    return np.asarray(words).astype(np.int64) >> (GRID_BITS - bits)


def sketch_hashes(items: Any, rows: Any, m: int) -> np.ndarray:
    """``h_j(x)``: XXH32 of item ``x`` with seed ``j``, modulo ``m`` (broadcast), as ``int64``."""
    return hash_values(items, rows, m).astype(np.int64)


def hadamard_entry(r: Any, col: Any) -> np.ndarray:
    """``H[r, col] = (-1)^popcount(r & col)`` of the Sylvester-Hadamard matrix (broadcast), as ``int64``."""
    parity = bit_parity(np.asarray(r).astype(np.int64) & np.asarray(col).astype(np.int64))
    return np.asarray(1 - 2 * parity.astype(np.int64))


def _power_of_two(value: int, path: str, lo: int, hi: int) -> int:
    v = read_int(value, path, lo, hi)
    if v & (v - 1):
        raise SpecError(f"{path} must be a power of two, got {v}")
    return v


@dataclass(frozen=True)
class _SketchNode(Node):
    """What both sketch nodes share: the items, the ``k`` hash functions into ``[0, m)``, a threshold
    ``t`` on the grid (``flip`` or ``keep``) and the claimed budget."""

    d: int
    k: int
    m: int
    family: str
    epsilon: float
    _threshold: ClassVar[str]
    _what: ClassVar[str]

    @property
    def threshold(self) -> int:
        return int(getattr(self, self._threshold))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "d": self.d,
            "k": self.k,
            "m": self.m,
            "family": self.family,
            self._threshold: self.threshold,
            "epsilon": float(self.epsilon),
        }

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> Any:
        """Read and validate the JSON form (:class:`~pldp.errors.SpecError` naming ``path``); a
        leaf holds no other node, so ``parse_node`` is not used."""
        read_keys(obj, path, {"kind", "d", "k", "m", "family", cls._threshold, "epsilon"})
        d = read_int(obj["d"], f"{path}.d", *SKETCH_D)
        k = _power_of_two(obj["k"], f"{path}.k", *SKETCH_K)
        m = _power_of_two(obj["m"], f"{path}.m", *SKETCH_M[cls.kind])
        if obj["family"] not in SKETCH_FAMILIES:
            raise SpecError(f"{path}.family must be one of {SKETCH_FAMILIES}, got {obj['family']!r}")
        t = read_int(obj[cls._threshold], f"{path}.{cls._threshold}", 1, GRID - 1)
        return cls(d, k, m, obj["family"], read_budget(obj["epsilon"], f"{path}.epsilon", False), t)  # type: ignore[call-arg]

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        lo, hi = SKETCH_M[cls.kind]
        return node_object(
            cls.kind,
            {
                "d": int_schema(*SKETCH_D, "Number of items."),
                "k": int_schema(*SKETCH_K, "Number of hash functions (rows of the sketch): a power of two."),
                "m": int_schema(lo, hi, "Width of the sketch (hash values): a power of two."),
                "family": enum_schema(SKETCH_FAMILIES, "The hash family: XXH32 of the item index, seed j."),
                cls._threshold: int_schema(1, GRID - 1, f"Over 2**32: the probability that {cls._what}."),
                "epsilon": budget_schema(False, "The LDP budget the node claims."),
            },
            description=str(cls.__doc__).split("(")[0].strip(),
        )

    @property
    def takes_one_item(self) -> bool:
        return True

    def ratio(self) -> tuple[int, int]:
        """The largest ratio of a report's probabilities under two items, as ``(num, den)``."""
        raise NotImplementedError

    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        num, den = self.ratio()
        row = Row(part, "every pair of items", self.epsilon, log_ratio(num, den), ratio_within(num, den, self.epsilon))
        return [row], self.epsilon

    def item_keys(self) -> list[tuple[Any, ...]]:
        return [(self.threshold, self.epsilon)] * self.d  # every item alike to the claim

    def pair_claim(self, i: int, j: int) -> float:
        return float(self.epsilon)

    def separated(self, i: int, j: int) -> float:
        """The fraction of rows whose hash functions separate items ``i`` and ``j``."""
        rows = np.arange(self.k)
        return float(np.mean(sketch_hashes(i, rows, self.m) != sketch_hashes(j, rows, self.m)))

    def reports(self, inp: Any) -> int:
        return int(inp.size)


@dataclass(frozen=True)
class CMSNode(_SketchNode):
    """Count-mean sketch (Apple 2017): a row j and the m bits of a one-hot vector, each flipped w.p. flip."""

    kind: ClassVar[str] = "cms"
    _threshold: ClassVar[str] = "flip"
    _what: ClassVar[str] = "a bit is flipped"
    flip: int = 0

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.cms(self, *args)

    def columns(self, prefix: str = "") -> list[Column]:
        return [Column(prefix + "row", "row", self.k), Column(prefix + "bits", "bits", self.m)]

    @property
    def support(self) -> tuple[float, float]:
        """``(p*, q*)``: a report *supports* ``v`` when its bit at ``h_j(v)`` is set: w.p.
        ``1 - flip / 2**32`` for a holder of ``v``, and for another item's holder ``p*`` when the
        row's hash collides them (probability ``1/m`` for an ideal family), ``flip / 2**32`` else."""
        p, f = 1.0 - self.flip / GRID, self.flip / GRID
        return p, p / self.m + (1.0 - 1.0 / self.m) * f

    def ratio(self) -> tuple[int, int]:
        num, den = max(self.flip, GRID - self.flip), min(self.flip, GRID - self.flip)
        return num * num, den * den

    def pair_law(self, i: int, j: int, column_prefix: str) -> tuple[np.ndarray, np.ndarray, Any]:
        """A report's category: 0 a separating row with bit ``h(i)`` set and ``h(j)`` clear, 1 the
        reverse, 2 otherwise; its exact laws under ``i`` and ``j`` (the family's own fraction of
        separating rows). Category 0 has the ratio ``((2**32 - flip) / flip)^2``."""
        s, f = self.separated(i, j), self.flip / GRID
        p0 = np.array([s * (1 - f) ** 2, s * f * f, 0.0])
        p1 = p0[[1, 0, 2]]
        p0[2], p1[2] = 1 - p0.sum(), 1 - p1.sum()
        row, bits = column_prefix + "row", column_prefix + "bits"

        def classify(cols: Any) -> np.ndarray:
            r = np.asarray(cols[row])
            hi, hj = sketch_hashes(i, r, self.m), sketch_hashes(j, r, self.m)
            b = np.unpackbits(np.asarray(cols[bits], dtype=np.uint8), axis=1)
            n = np.arange(r.size)
            bi, bj = b[n, hi] == 1, b[n, hj] == 1
            return np.where(hi == hj, 2, np.where(bi & ~bj, 0, np.where(bj & ~bi, 1, 2))).astype(np.int64)

        return p0, p1, classify

    def words(self, inp: Any) -> np.ndarray:
        return np.full(inp.size, 1 + self.m, dtype=np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        w = cursor.take(rows, 1 + self.m)
        j = top_bits(w[:, 0], self.k.bit_length() - 1)
        bits = w[:, 1:] < self.flip
        n = np.arange(j.size)
        h = sketch_hashes(inp, j, self.m)
        bits[n, h] = ~bits[n, h]
        out[prefix + "row"][rows] = j
        out[prefix + "bits"][rows] = np.packbits(bits, axis=1)


@dataclass(frozen=True)
class HCMSNode(_SketchNode):
    """Hadamard count-mean sketch (Apple 2017): a row j, a column l and one Hadamard entry, kept w.p. keep."""

    kind: ClassVar[str] = "hcms"
    _threshold: ClassVar[str] = "keep"
    _what: ClassVar[str] = "the entry is kept"
    keep: int = 0

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.hcms(self, *args)

    def columns(self, prefix: str = "") -> list[Column]:
        return [
            Column(prefix + "row", "row", self.k),
            Column(prefix + "index", "index", self.m),
            Column(prefix + "bit", "bit", 2),
        ]

    @property
    def support(self) -> tuple[float, float]:
        """``(p*, q*)``: a report *supports* ``v`` when its bit equals ``H[h_j(v), l]``: w.p.
        ``keep / 2**32`` for a holder of ``v``; for another item's holder ``p*`` when the row's hash
        collides them (probability ``1/m`` for an ideal family), exactly ``1/2`` else (two distinct
        rows of ``H`` agree on half of the columns)."""
        p = self.keep / GRID
        return p, p / self.m + (1.0 - 1.0 / self.m) * 0.5

    def ratio(self) -> tuple[int, int]:
        return max(self.keep, GRID - self.keep), min(self.keep, GRID - self.keep)

    def pair_law(self, i: int, j: int, column_prefix: str) -> tuple[np.ndarray, np.ndarray, Any]:
        """A report's category: 0 a separating row, a column where the entries of ``h(i)`` and
        ``h(j)`` differ and the bit equal to ``i``'s, 1 to ``j``'s, 2 otherwise; its exact laws
        under ``i`` and ``j``. Category 0 has the ratio ``keep / (2**32 - keep)``."""
        s, p = self.separated(i, j), self.keep / GRID
        p0 = np.array([s * p / 2, s * (1 - p) / 2, 0.0])
        p1 = p0[[1, 0, 2]]
        p0[2], p1[2] = 1 - p0.sum(), 1 - p1.sum()
        row, index, bit = column_prefix + "row", column_prefix + "index", column_prefix + "bit"

        def classify(cols: Any) -> np.ndarray:
            r, col = np.asarray(cols[row]), np.asarray(cols[index])
            b = 2 * np.asarray(cols[bit]).astype(np.int64) - 1
            wi = hadamard_entry(sketch_hashes(i, r, self.m), col)
            wj = hadamard_entry(sketch_hashes(j, r, self.m), col)
            return np.where(wi == wj, 2, np.where(b == wi, 0, 1)).astype(np.int64)

        return p0, p1, classify

    def words(self, inp: Any) -> np.ndarray:
        return np.full(inp.size, 3, dtype=np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        w = cursor.take(rows, 3)
        j = top_bits(w[:, 0], self.k.bit_length() - 1)
        col = top_bits(w[:, 1], self.m.bit_length() - 1)
        entry = hadamard_entry(sketch_hashes(inp, j, self.m), col)
        b = np.where(w[:, 2].astype(np.int64) < self.keep, entry, -entry)
        out[prefix + "row"][rows] = j
        out[prefix + "index"][rows] = col
        out[prefix + "bit"][rows] = (b + 1) // 2
