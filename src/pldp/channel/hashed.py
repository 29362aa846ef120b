"""The local-hashing node: a random hash of the item, then randomized response over the ``g`` hash values.

Local hashing (Wang, Blocki, Li, Jha, USENIX Security 2017, Sec. 4.4: OLH with ``g = e^eps + 1``,
BLH with ``g = 2``) reports a pair ``(s, y)``: a seed ``s`` drawn uniformly from the family, and a
randomized response ``y`` over ``[0, g)`` to the hash value ``H_s(x)`` of the user's item. On the
``2**32`` grid, with integers ``keep + g * weight = 2**32`` and ``S`` seeds,

.. math::

    \\Pr(s, y \\mid x) = \\frac1S \\cdot \\frac{weight + keep\\,[H_s(x) = y]}{2^{32}} .

The claim. For two items ``x, x'``, every seed and value, the ratio of those probabilities is
``(weight + keep) / weight`` when ``H_s(x) = y != H_s(x')``, its inverse in the opposite case and
1 otherwise, whatever the hash family is: the node is :math:`\\varepsilon`-LDP exactly when
``(weight + keep) / weight <= e^eps`` (checked with :func:`~pldp.channel.exact.ratio_within`),
and that bound is attained by any seed that separates the two items.

The family. ``H_s(x)`` is XXH32 (Collet, xxHash specification, v0.8) of the item's index as 4
little-endian bytes with seed ``s``, reduced modulo ``g``; the seed is a word's top ``log2(S)``
bits, uniform over ``[0, S)``, one word. ``S`` is the node's ``seeds`` member, a power of two from
2 to ``2**31`` (:data:`SEEDS`, OLH's family, when the member is absent; the node writes it only
when it is smaller). A small family is FLH (Cormode, Maddock, Maple, VLDB 2021, Sec. 3.3): the
server groups reports by ``(seed, value)`` and evaluates ``S d`` hashes instead of ``n d``
(:func:`pldp.mechanisms.hashed.support_counts`). Both clients compute the hash with 32-bit integer
arithmetic (:func:`xxh32_index`; ``clients/js/client-hashed.mjs``). The family ``"toeplitz"``
(:mod:`pldp.channel.toeplitz`) hashes the item's bits by an affine map over GF(2) instead, over OLH's
``2**31`` seeds with ``g`` a power of two: two items collide with probability exactly ``1/g``, and
the server counts the supports of ``n`` reports in ``O(n g + d log d)``. The privacy claim needs
nothing of the family; the estimators assume that two distinct items collide with probability
``1/g`` over the seed, which XXH32 followed by a reduction modulo ``g`` meets over ``2**31`` seeds to
within about ``g / 2**32`` plus the family's own departure from pairwise independence. Over ``S``
seeds a pair's collision rate departs from ``1/g`` by about ``sqrt((1/g)(1 - 1/g)/S)`` (the seeds
act as independent draws; :func:`collision_rates`, measured in ``tests/test_olh.py``), and an
estimate moves with it (:mod:`pldp.mechanisms.hashed`, "A small family").

The program: two words per report, the seed (``w0 >> (32 - log2(S))``; ``w0 >> 1`` for OLH) and the
response: ``H_s(x)`` when ``w1 < keep``, else ``(w1 - keep) // weight`` (``weight`` words for each
of the ``g`` values).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pldp.channel.every_pair import EveryPairLeaf
from pldp.channel.node import (
    Column,
    NodeVisitor,
    ParseNode,
    R,
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
from pldp.channel.toeplitz import toeplitz_fits, toeplitz_values
from pldp.channel.words import Cursor
from pldp.errors import SpecError

__all__ = [
    "HASH_FAMILIES",
    "SEEDS",
    "HashedNode",
    "collision_rates",
    "hash_values",
    "reduce_mod",
    "seed_shift",
    "xxh32_index",
    "xxh32_lane",
    "xxh32_mix",
]

#: The hash families a node may name: XXH32 of the index (OLH, FLH), the Toeplitz family (:mod:`pldp.channel.toeplitz`).
HASH_FAMILIES = ("xxh32", "toeplitz")
#: The most seeds of a family, and a node's when it names none (OLH's): a word's top 31 bits, so a
#: seed is a non-negative 32-bit integer on the wire.
SEEDS = 1 << 31
#: The fewest seeds of a family.
MIN_SEEDS = 2
#: The range of the number of items ``d`` and of hash values ``g``.
HASHED_D = (2, SEEDS - 1)
HASHED_G = (2, 1 << 24)

#: PRIME32_2 to PRIME32_5 of the specification (its 4-byte case uses no other).
_P2, _P3, _P4, _P5 = (np.uint32(p) for p in (0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1))


def xxh32_lane(items: Any) -> np.ndarray:
    """The item's share of XXH32's accumulator, ``P5 + 4 + x * P3`` (``uint32``): the hash of ``x`` with
    seed ``s`` is :func:`xxh32_mix` of ``s + xxh32_lane(x)``, so a server hashing ``d`` items under many
    seeds computes this once."""
    x = np.asarray(items).astype(np.uint32)
    with np.errstate(over="ignore"):
        return np.asarray(x * _P3 + (_P5 + np.uint32(4)), dtype=np.uint32)


def xxh32_mix(h: np.ndarray, scratch: np.ndarray | None = None) -> np.ndarray:
    """The rest of XXH32's 4-byte case on ``h = seed + lane`` (``uint32``), **in place**: ``h = rotl(h, 17) * P4``,
    then the avalanche (``>> 15, * P2, >> 13, * P3, >> 16``), every operation modulo ``2**32``.

    ``scratch`` (``uint32``, the shape of ``h``) saves an allocation per shift; ``h`` is returned.
    """
    t = np.empty_like(h) if scratch is None else scratch
    with np.errstate(over="ignore"):
        np.right_shift(h, np.uint32(15), out=t)
        np.left_shift(h, np.uint32(17), out=h)
        h |= t
        h *= _P4
        for shift, prime in ((15, _P2), (13, _P3), (16, None)):
            np.right_shift(h, np.uint32(shift), out=t)
            h ^= t
            if prime is not None:
                h *= prime
    return h


def xxh32_index(items: Any, seeds: Any) -> np.ndarray:
    """XXH32 of each item index as 4 little-endian bytes, with its seed (broadcast), as ``uint32``.

    The 4-byte case of the specification: ``acc = seed + P5 + 4``; ``acc += lane * P3``;
    ``acc = rotl(acc, 17) * P4``; then the avalanche (``>> 15, * P2, >> 13, * P3, >> 16``), every
    operation modulo ``2**32`` (:func:`xxh32_lane`, then :func:`xxh32_mix`).

    Examples
    --------
    >>> xxh32_index([0, 12345], [0, 987654321]).tolist()   # the reference implementation's values
    [148298089, 3404038053]
    """
    lane = xxh32_lane(items)
    s = np.asarray(seeds).astype(np.uint32)
    h = np.empty(np.broadcast_shapes(s.shape, lane.shape), dtype=np.uint32)
    np.add(s, lane, out=h)
    return xxh32_mix(h)


def reduce_mod(h: np.ndarray, g: int, scratch: np.ndarray | None = None) -> np.ndarray:
    """``h mod g`` of ``uint32`` values, **in place**: ``h - (h // g) * g`` (numpy divides by a scalar with
    a multiply, some five times faster than its ``%``), a mask when ``g`` is a power of two."""
    if g & (g - 1) == 0:
        h &= np.uint32(g - 1)
        return h
    t = np.empty_like(h) if scratch is None else scratch
    np.floor_divide(h, np.uint32(g), out=t)
    t *= np.uint32(g)
    h -= t
    return h


def hash_values(items: Any, seeds: Any, g: int, family: str = "xxh32") -> np.ndarray:
    """``H_s(x)`` for items and seeds (broadcast), as ``uint32``: ``XXH32(x, s) mod g``, or the Toeplitz
    family's ``T x XOR b`` (:func:`~pldp.channel.toeplitz.toeplitz_values`).

    ``uint32`` compares with any integer array without a cast of its own (numpy promotes the pair).
    """
    if family == "toeplitz":
        return toeplitz_values(items, seeds, g)
    if family != "xxh32":
        raise SpecError(f"the hash family must be one of {HASH_FAMILIES}, got {family!r}")
    return reduce_mod(xxh32_index(items, seeds), g)


def seed_shift(seeds: int) -> int:
    """The shift of a word to its seed: ``32 - log2(seeds)`` (1 for OLH's ``2**31`` seeds); a
    :class:`~pldp.errors.SpecError` unless ``seeds`` is a power of two in ``[2, 2**31]``."""
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not MIN_SEEDS <= seeds <= SEEDS:
        raise SpecError(f"seeds must be an integer power of two in [{MIN_SEEDS}, 2**31], got {seeds!r}")
    if seeds & (seeds - 1):
        raise SpecError(f"seeds = {seeds} is not a power of two")
    return GRID_BITS - (seeds.bit_length() - 1)


def collision_rates(pairs: Any, seeds: int, g: int, family: str = "xxh32") -> np.ndarray:
    """For each pair ``(i, j)`` of items (rows of a ``(m, 2)`` array), the share of the ``seeds`` seeds
    with ``H_s(i) = H_s(j)``: what the estimators take to be ``1/g`` (``m * seeds`` hash evaluations).

    Examples
    --------
    >>> collision_rates([[0, 1]], 1024, 4).round(4).tolist()
    [0.2471]
    """
    ij = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    s = np.arange(seeds, dtype=np.int64)[None, :]
    same = hash_values(ij[:, :1], s, g, family) == hash_values(ij[:, 1:], s, g, family)
    return np.asarray(same.mean(axis=1), dtype=float)


#: The largest family whose pairs' collision rates :meth:`HashedNode.pair_law` counts exactly.
_EXACT_PAIR_SEEDS = 1 << 20


def _seeds_schema() -> dict[str, Any]:
    powers = [1 << k for k in range(MIN_SEEDS.bit_length() - 1, SEEDS.bit_length() - 1)]
    return {
        "type": "integer",
        "enum": powers,
        "description": "Seeds of the family, a power of two below 2**31 (FLH); absent: 2**31 (OLH).",
    }


@dataclass(frozen=True)
class HashedNode(EveryPairLeaf):
    """A local-hashing sampler: a uniform seed ``s``, then ``H_s(x)`` kept w.p. ``(weight + keep) / 2**32``
    and each hash value reported w.p. ``weight / 2**32`` otherwise (module docstring)."""

    kind: ClassVar[str] = "hashed"
    d: int
    g: int
    family: str
    keep: int
    weight: int
    epsilon: float
    seeds: int = SEEDS

    def __post_init__(self) -> None:
        seed_shift(self.seeds)  # a power of two in [2, 2**31]
        if self.family not in HASH_FAMILIES:
            raise SpecError(f"the hash family must be one of {HASH_FAMILIES}, got {self.family!r}")
        if self.family == "toeplitz":
            why = toeplitz_fits(self.d, self.g)
            if why is not None or self.seeds != SEEDS:
                raise SpecError(why or f"the Toeplitz family has 2**31 seeds, got {self.seeds}")

    def to_json(self) -> dict[str, Any]:
        """The JSON form; ``seeds`` only when the family is smaller than OLH's (absent means ``2**31``)."""
        out: dict[str, Any] = {"kind": "hashed", "d": self.d, "g": self.g, "family": self.family}
        if self.seeds != SEEDS:
            out["seeds"] = self.seeds
        out.update(keep=self.keep, weight=self.weight, epsilon=float(self.epsilon))
        return out

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> HashedNode:
        """Read and validate the JSON form (:class:`~pldp.errors.SpecError` naming ``path``); a
        leaf holds no other node, so ``parse_node`` is not used."""
        read_keys(obj, path, {"kind", "d", "g", "family", "keep", "weight", "epsilon"}, frozenset({"seeds"}))
        d = read_int(obj["d"], f"{path}.d", *HASHED_D)
        g = read_int(obj["g"], f"{path}.g", *HASHED_G)
        if obj["family"] not in HASH_FAMILIES:
            raise SpecError(f"{path}.family must be one of {HASH_FAMILIES}, got {obj['family']!r}")
        # written only for a family smaller than OLH's: one node, one JSON form, one spec id
        seeds = read_int(obj["seeds"], f"{path}.seeds", MIN_SEEDS, SEEDS // 2) if "seeds" in obj else SEEDS
        if seeds & (seeds - 1):
            raise SpecError(f"{path}.seeds = {seeds} is not a power of two")
        keep = read_int(obj["keep"], f"{path}.keep", 1, GRID)
        weight = read_int(obj["weight"], f"{path}.weight", 1, GRID)
        if keep + g * weight != GRID:
            raise SpecError(f"{path}: keep + g * weight = {keep + g * weight} must be 2**{GRID_BITS} = {GRID}")
        if obj["family"] == "toeplitz" and (why := toeplitz_fits(d, g)):
            raise SpecError(f"{path}: {why}")
        if obj["family"] == "toeplitz" and "seeds" in obj:
            raise SpecError(f"{path}: the Toeplitz family has 2**31 seeds (OLH's), so a node names none")
        return cls(d, g, obj["family"], keep, weight, read_budget(obj["epsilon"], f"{path}.epsilon", False), seeds)

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        return node_object(
            "hashed",
            {
                "d": int_schema(*HASHED_D, "Number of items."),
                "g": int_schema(*HASHED_G, "Number of hash values."),
                "family": enum_schema(
                    HASH_FAMILIES,
                    "The hash family: XXH32 of the item index, seeded; or Toeplitz (g a power of two, "
                    "2 log2(g) + bits(d - 1) - 1 <= 31, 2**31 seeds), exactly pairwise independent.",
                ),
                "seeds": _seeds_schema(),
                "keep": int_schema(1, GRID, "Over 2**32: keep + g * weight = 2**32."),
                "weight": int_schema(1, GRID, "Over 2**32: each hash value's probability besides keep."),
                "epsilon": budget_schema(False, "The LDP budget the node claims."),
            },
            optional=("seeds",),
            description="Local hashing (OLH, BLH, FLH): a seed, then randomized response over g hash values.",
        )

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.hashed(self, *args)

    # ------------------------------------------------------------------ reports
    def columns(self, prefix: str = "") -> list[Column]:
        return [Column(prefix + "seed", "seed", self.seeds), Column(prefix + "value", "value", self.g)]

    @property
    def support(self) -> tuple[float, float]:
        """``(p*, q*)``: a report supports its holder's item w.p. ``(weight + keep) / 2**32``, another
        item w.p. ``1/g`` (exactly ``(keep + g weight) / (g 2**32)`` when two items collide w.p. ``1/g``)."""
        return (self.weight + self.keep) / GRID, 1.0 / self.g

    @property
    def report_format(self) -> tuple[Any, ...]:
        """``d``, ``g``, the family and its size: ``S`` outputs support an item, ``S (g - 1)`` do not."""
        return ("hashed", self.d, self.g, self.family, self.seeds)

    @property
    def hit_mass(self) -> int:
        """``weight + keep``: ``H_s(x)`` kept, or drawn among the ``g`` values."""
        return self.weight + self.keep

    # ------------------------------------------------------------------ claims
    def claim_ratio(self) -> tuple[int, int]:
        return self.weight + self.keep, self.weight

    def pair_support(self, i: int, j: int) -> tuple[float, float, float]:
        """With the collision probability ``c`` of ``i`` and ``j`` over the seeds the pair's own over a
        small family (:func:`collision_rates`, exact up to ``2**20`` seeds), ``1/g`` exactly for the
        Toeplitz family, else taken as ``1/g``: a
        report of ``i`` supports ``i`` w.p. ``(weight + keep) / 2**32``, ``j`` when the two collide or
        when ``y`` is ``H_s(j)`` by chance, both when they collide. The ratio ``(weight + keep) / weight``
        of category 0 is exact whatever the collisions are."""
        hit, miss = (self.weight + self.keep) / GRID, self.weight / GRID
        c = 1 / self.g  # exact for the Toeplitz family
        if self.family == "xxh32" and self.seeds <= _EXACT_PAIR_SEEDS:
            c = float(collision_rates([[i, j]], self.seeds, self.g)[0])
        return hit, (1 - c) * miss + c * hit, c * hit

    def supports(self, cols: Mapping[str, np.ndarray], item: int, column_prefix: str) -> np.ndarray:
        """``y = H_s(item)``."""
        s, y = np.asarray(cols[column_prefix + "seed"]), np.asarray(cols[column_prefix + "value"])
        return np.asarray(hash_values(item, s, self.g, self.family) == y)

    # ------------------------------------------------------------------ the program
    def words(self, inp: Any) -> np.ndarray:
        return np.full(inp.size, 2, dtype=np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        w = cursor.take(rows, 2).astype(np.int64)
        seeds = w[:, 0] >> seed_shift(self.seeds)
        rest = np.maximum(w[:, 1] - self.keep, 0) // self.weight
        out[prefix + "seed"][rows] = seeds
        out[prefix + "value"][rows] = np.where(w[:, 1] < self.keep, hash_values(inp, seeds, self.g, self.family), rest)
