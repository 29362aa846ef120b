r"""The heavy-hitter node: a free-text answer's report for PEM, TreeHist or SFP (:mod:`pldp.heavy`).

The node's input is the answer as a row of ``L = max_bytes`` bytes (:func:`answer_rows`: text
normalised as every text answer is, Unicode NFC then space, tab, LF and CR trimmed from both ends,
then UTF-8, cut to ``L`` bytes and padded with ``0x00``). Its report is a *group* ``j`` drawn
uniformly from ``0 .. G - 1`` by words alone (the node's first word, exact by rejection: a refused
word is replaced by the next, :func:`~pldp.channel.sampling.uniform_below`), then one local-hashing report
(:class:`~pldp.channel.hashed.HashedNode`, two words) per *part*, each of an item the answer and the
group give (:meth:`HeavyNode.part_items`):

``"prefix"``
    the fingerprint (:func:`fingerprints`) of the answer's prefix of ``(j + 1) s`` bits
    (:func:`prefix_rows`; PEM's ``s`` is 8: a byte per group; TreeHist's ``step_bits``);
``"word"``
    the fingerprint of the whole row;
``"fragment"``
    SFP's tagged fragment at position ``j``: ``h 256^b + F_j``, ``F_j`` the answer's ``b`` bytes
    at ``j b`` (big-endian) and ``h`` the word's fingerprint's low ``hash_bits`` bits.

The protocols lay out their parts so: PEM one ``"prefix"`` part over ``G = L`` groups; TreeHist
``"prefix"`` then ``"word"`` over ``G = 8 L / s`` depths; SFP ``"fragment"`` then ``"word"`` over
``G = L / b`` positions. The payload holds the group's column (``"group"``, ``"depth"``,
``"position"``) and each part's ``seed`` and ``value`` (a part's named ``<part>_seed``,
``<part>_value``; PEM's, the only part, ``seed`` and ``value``).

The claim. The group is drawn apart from the answer, so it enters no ratio, and the parts are
independent given the answer: a report's largest ratio between two answers is at most the product
of the parts' largest ratios, and it is attained (two answers that differ from their first byte are
separated by some seed in every part). The node claims ``epsilon`` for the whole report and its
check (:meth:`HeavyNode.claims`) decides exactly that the product is within :math:`e^{\varepsilon}`,
beside every part's own claim.

A fingerprint is ``XXH32(bytes, seed 0) mod (2^31 - 1)``: an item of local hashing's largest
domain. Two prefixes with one fingerprint are one item to the server (accuracy, never privacy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pldp.channel.columns import Column
from pldp.channel.exact import log_ratio, ratio_within
from pldp.channel.hashed import HASHED_D, HashedNode
from pldp.channel.node import (
    Node,
    NodeVisitor,
    ParseNode,
    R,
    Row,
    SchemaRef,
    budget_schema,
    int_schema,
    list_schema,
    node_object,
    one_of,
    read_budget,
    read_int,
    read_keys,
)
from pldp.channel.sampling import uniform_below
from pldp.channel.toeplitz import toeplitz_fits
from pldp.channel.words import Cursor, RejectedError, WordStream
from pldp.errors import ParameterError, SpecError
from pldp.text import normalize_text
from pldp.xxh32 import xxh32_rows

__all__ = [
    "FINGERPRINTS",
    "GROUP_NAMES",
    "MAX_BYTES",
    "PROTOCOL_PARTS",
    "STEPS",
    "HeavyNode",
    "answer_rows",
    "composed_rows",
    "fingerprints",
    "fragment_items",
    "prefix_rows",
]

#: The fingerprints' range: local hashing's largest number of items.
FINGERPRINTS = HASHED_D[1]
#: The longest answer a node may keep, in bytes.
MAX_BYTES = 64
#: The bits a prefix step may add: a divisor of 8.
STEPS = (1, 2, 4, 8)
#: Each protocol's parts, in the order of the report's words and columns.
PROTOCOL_PARTS = {"pem": ("prefix",), "treehist": ("prefix", "word"), "sfp": ("fragment", "word")}
#: The name of each protocol's group column.
GROUP_NAMES = {"pem": "group", "treehist": "depth", "sfp": "position"}


def answer_rows(answers: Sequence[Any], max_bytes: int, text_only: bool = False) -> np.ndarray:
    """The answers as an ``(n, max_bytes)`` ``uint8`` array: text normalised and encoded, bytes as given,
    each cut to ``max_bytes`` bytes and padded with ``0x00``.

    A :class:`~pldp.errors.ParameterError` names the first answer that is neither text nor bytes (with
    ``text_only``, a device's: not text, since bytes would skip the normalisation), empty, or holds a
    byte ``0x00`` (the padding); its content is never repeated.

    Examples
    --------
    >>> answer_rows(["ab", b"xyz12"], 4).tolist()
    [[97, 98, 0, 0], [120, 121, 122, 49]]
    """
    out = np.zeros((len(answers), max_bytes), dtype=np.uint8)
    for i, answer in enumerate(answers):
        if text_only and not isinstance(answer, str):
            raise ParameterError(f"answer {i} is a {type(answer).__name__}: this spec's answers are text")
        if isinstance(answer, (bytes, bytearray)):
            raw = bytes(answer)
            if not raw:
                raise ParameterError(f"answer {i} is empty")
        elif isinstance(answer, str):
            try:
                raw = normalize_text(answer, limit=None).encode("utf-8")  # cut below, not refused
            except ParameterError as err:
                raise ParameterError(f"answer {i}: {err}") from None
        else:
            raise ParameterError(f"answer {i} is a {type(answer).__name__}: answers are text or bytes")
        if 0 in raw:
            raise ParameterError(f"answer {i} holds a byte 0x00, which marks the end of an answer")
        cut = raw[:max_bytes]
        out[i, : len(cut)] = np.frombuffer(cut, dtype=np.uint8)
    return out


def fingerprints(prefixes: np.ndarray) -> np.ndarray:
    """``XXH32(row, 0) mod (2**31 - 1)`` of each row of an ``(m, j)`` ``uint8`` array of prefixes, ``int64``
    (:func:`pldp.xxh32.xxh32_rows`, every row at once).

    Examples
    --------
    >>> fingerprints(np.frombuffer(b"abc", dtype=np.uint8)[None, :]).tolist()   # XXH32("abc") = 0x32D153FF
    [852579327]
    """
    h = xxh32_rows(np.asarray(prefixes, dtype=np.uint8)).astype(np.int64)
    h %= FINGERPRINTS
    return h


def prefix_rows(rows: np.ndarray, bits: int) -> np.ndarray:
    """The prefixes of ``bits`` bits of the ``(n, L)`` ``uint8`` rows: ``(n, ceil(bits / 8))``, the
    bits past ``bits`` cleared.

    Examples
    --------
    >>> prefix_rows(np.array([[0b1011_0110, 7]], dtype=np.uint8), 3).tolist()
    [[160]]
    """
    nbytes = -(-bits // 8)
    out = np.array(rows[:, :nbytes], dtype=np.uint8)
    if bits % 8:
        out[:, -1] &= np.uint8((0xFF << (8 - bits % 8)) & 0xFF)
    return out


def fragment_items(
    rows: np.ndarray, words: np.ndarray, position: np.ndarray, nbytes: int, hash_bits: int
) -> np.ndarray:
    """``h 256^b + F_j``: each row's ``b``-byte fragment at its position (big-endian), tagged by the low
    ``hash_bits`` bits of its word's fingerprint ``words`` (``int64``)."""
    n = rows.shape[0]
    frags = rows.reshape(n, -1, nbytes).astype(np.int64) @ (256 ** np.arange(nbytes - 1, -1, -1))
    tag = words & ((1 << hash_bits) - 1)
    return np.asarray((tag << (8 * nbytes)) + frags[np.arange(n), position], dtype=np.int64)


def composed_rows(parts: dict[str, HashedNode], epsilon: float, whole: str) -> list[Row]:
    """The exact check of a report made of independent parts drawn from one answer, one per node:
    every node's claims (each row's ``part`` its key), and the whole report's (part ``whole``), the
    product of the parts' largest ratios within :math:`e^{\\varepsilon}`, decided exactly on the
    integers (module docstring, "The claim")."""
    rows: list[Row] = []
    num, den = 1, 1
    for name, node in parts.items():
        rows += node.claims(name)[0]
        n, d = node.claim_ratio()
        num, den = num * n, den * d
    rows.append(Row(whole, "every pair of answers", epsilon, log_ratio(num, den), ratio_within(num, den, epsilon)))
    return rows


@dataclass(frozen=True)
class HeavyNode(Node):
    """A heavy-hitter report of a free-text answer: a group, then a local-hashing report per part
    (module docstring). ``step_bits`` is TreeHist's (PEM's is 8), ``fragment_bytes`` and
    ``hash_bits`` SFP's; a protocol's unused members are 0."""

    kind: ClassVar[str] = "heavy"
    protocol: str
    max_bytes: int
    parts: tuple[HashedNode, ...]
    epsilon: float
    step_bits: int = 0
    fragment_bytes: int = 0
    hash_bits: int = 0

    def __post_init__(self) -> None:
        why = self._defect()
        if why:
            raise SpecError(why)

    def _defect(self) -> str | None:
        if self.protocol not in PROTOCOL_PARTS:
            return f"protocol must be one of {sorted(PROTOCOL_PARTS)}, got {self.protocol!r}"
        if not 1 <= self.max_bytes <= MAX_BYTES:
            return f"max_bytes = {self.max_bytes} is outside [1, {MAX_BYTES}]"
        if len(self.parts) != len(PROTOCOL_PARTS[self.protocol]):
            return f"a {self.protocol} node has {len(PROTOCOL_PARTS[self.protocol])} parts, got {len(self.parts)}"
        if self.protocol == "treehist" and self.step_bits not in STEPS:
            return f"step_bits must be one of {STEPS}, got {self.step_bits}"
        if self.protocol == "sfp":
            if not 1 <= self.fragment_bytes <= 8 or self.max_bytes % self.fragment_bytes:
                return f"fragment_bytes = {self.fragment_bytes} must divide max_bytes = {self.max_bytes} (at most 8)"
            if self.hash_bits < 1:
                return f"hash_bits must be at least 1, got {self.hash_bits}"
            if why := toeplitz_fits(self.d_fragments, 2):
                return f"hash_bits = {self.hash_bits} with fragment_bytes = {self.fragment_bytes} does not fit: {why}"
        for name, node in zip(self.part_names, self.parts, strict=True):
            d, family = (self.d_fragments, "toeplitz") if name == "fragment" else (FINGERPRINTS, "xxh32")
            if node.d != d or node.family != family:
                return f"the {name} part must be a {family} hashed node over d = {d}, got {node.family} over {node.d}"
        return None

    # ------------------------------------------------------------------ what it is
    @property
    def part_names(self) -> tuple[str, ...]:
        """The parts, in the order of the report's words and columns."""
        return PROTOCOL_PARTS[self.protocol]

    @property
    def group_name(self) -> str:
        """The group column's name."""
        return GROUP_NAMES[self.protocol]

    @property
    def prefix_bits(self) -> int:
        """The bits a prefix grows by from one group to the next (8 for PEM)."""
        return 8 if self.protocol == "pem" else self.step_bits

    @property
    def groups(self) -> int:
        """``G``: PEM's ``L`` prefix lengths, TreeHist's ``8 L / s`` depths, SFP's ``L / b`` positions."""
        if self.protocol == "sfp":
            return self.max_bytes // self.fragment_bytes
        return 8 * self.max_bytes // self.prefix_bits

    @property
    def d_fragments(self) -> int:
        """SFP's fragment items: ``2^(hash_bits + 8 b)``."""
        return 1 << (self.hash_bits + 8 * self.fragment_bytes)

    @property
    def text_bytes(self) -> int:
        """Its input is a free-text answer, of which ``max_bytes`` bytes are kept."""
        return self.max_bytes

    def _prefix(self, name: str) -> str:
        return "" if self.protocol == "pem" else f"{name}_"

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "heavy", "protocol": self.protocol, "max_bytes": self.max_bytes}
        if self.protocol == "treehist":
            out["step_bits"] = self.step_bits
        if self.protocol == "sfp":
            out.update(fragment_bytes=self.fragment_bytes, hash_bits=self.hash_bits)
        out.update(parts=[p.to_json() for p in self.parts], epsilon=float(self.epsilon))
        return out

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> HeavyNode:
        """Read and validate the JSON form; its parts are local-hashing nodes."""
        protocol = obj.get("protocol") if isinstance(obj, dict) else None
        if not isinstance(protocol, str) or protocol not in PROTOCOL_PARTS:
            raise SpecError(f"{path}.protocol must be one of {sorted(PROTOCOL_PARTS)}, got {protocol!r}")
        own = {"treehist": {"step_bits"}, "sfp": {"fragment_bytes", "hash_bits"}}.get(protocol, set())
        read_keys(obj, path, {"kind", "protocol", "max_bytes", "parts", "epsilon"} | own)
        max_bytes = read_int(obj["max_bytes"], f"{path}.max_bytes", 1, MAX_BYTES)
        names = PROTOCOL_PARTS[protocol]
        if not isinstance(obj["parts"], list) or len(obj["parts"]) != len(names):
            raise SpecError(f"{path}.parts must be a list of {len(names)} hashed nodes ({', '.join(names)})")
        parts = []
        for i, part in enumerate(obj["parts"]):
            if not isinstance(part, dict) or part.get("kind") != "hashed":
                raise SpecError(f"{path}.parts[{i}] must be a hashed node")
            parts.append(HashedNode.parse(part, f"{path}.parts[{i}]"))
        extra = {k: read_int(obj[k], f"{path}.{k}", 0, 64) for k in sorted(own)}
        epsilon = read_budget(obj["epsilon"], f"{path}.epsilon", False)
        try:
            return cls(protocol, max_bytes, tuple(parts), epsilon, **extra)
        except SpecError as err:
            raise SpecError(f"{path}: {err}") from None

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        """One object per protocol (its own members required, no others)."""
        own = {
            "pem": {},
            "treehist": {
                "step_bits": {
                    "type": "integer",
                    "enum": list(STEPS),
                    "description": "The bits a prefix grows by per depth.",
                }
            },
            "sfp": {
                "fragment_bytes": int_schema(
                    1, 3, "The bytes of a fragment (dividing max_bytes; hash_bits + 8 b <= 30)."
                ),
                "hash_bits": int_schema(
                    1, 22, "The bits of the word's hash that tag a fragment (hash_bits + 8 b <= 30)."
                ),
            },
        }
        return one_of(
            [
                node_object(
                    "heavy",
                    {
                        "protocol": {"type": "string", "const": protocol},
                        "max_bytes": int_schema(1, MAX_BYTES, "The bytes of an answer kept (UTF-8, NFC, trimmed)."),
                        **members,
                        "parts": {
                            **list_schema(
                                ref("hashed"), len(PROTOCOL_PARTS[protocol]), "A hashed node per part, in order."
                            ),
                            "maxItems": len(PROTOCOL_PARTS[protocol]),
                        },
                        "epsilon": budget_schema(
                            False,
                            "The whole report's budget: the product of the parts' largest ratios is within e^epsilon.",
                        ),
                    },
                )
                for protocol, members in own.items()
            ],
            "A heavy-hitter report of a free-text answer (PEM, TreeHist or SFP): a group, then a local-hashing "
            "report per part.",
        )

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.heavy(self, *args)

    # ------------------------------------------------------------------ reports
    def columns(self, prefix: str = "") -> list[Column]:
        out = [Column(prefix + self.group_name, "index", self.groups)]
        for name, node in zip(self.part_names, self.parts, strict=True):
            out += node.columns(prefix + self._prefix(name))
        return out

    # ------------------------------------------------------------------ claims
    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        """Every part's claim (its rows' part ``"<part>.<name>"``) and the whole report's (part ``part``):
        the product of the parts' largest ratios within :math:`e^{\\varepsilon}`, decided exactly
        (:func:`composed_rows`)."""
        named = {f"{part}.{name}": node for name, node in zip(self.part_names, self.parts, strict=True)}
        return composed_rows(named, self.epsilon, part), float(self.epsilon)

    # ------------------------------------------------------------------ the program
    def part_items(self, rows: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per part, the item each answer row randomizes in its group (``int64``; module docstring)."""
        words = fingerprints(rows) if "word" in self.part_names else None
        out = []
        for name in self.part_names:
            if name == "word":
                assert words is not None
                out.append(words)
            elif name == "fragment":
                assert words is not None
                out.append(fragment_items(rows, words, group, self.fragment_bytes, self.hash_bits))
            else:
                items = np.empty(rows.shape[0], dtype=np.int64)
                for j in np.unique(group).tolist():
                    mine = np.flatnonzero(group == j)
                    items[mine] = fingerprints(prefix_rows(rows[mine], (j + 1) * self.prefix_bits))
                out.append(items)
        return tuple(out)

    def reports(self, inp: Any) -> int:
        return int(np.asarray(inp).shape[0])

    def words(self, inp: Any) -> np.ndarray:
        return np.full(self.reports(inp), 1 + 2 * len(self.parts), dtype=np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        group, ok = uniform_below(cursor.take(rows, 1)[:, 0], np.full(rows.size, self.groups))
        if not ok.all():
            raise RejectedError
        self._draw_parts(np.asarray(inp)[rows], group, cursor, rows, out, prefix)

    def _draw_parts(
        self,
        answer: np.ndarray,
        group: np.ndarray,
        cursor: Cursor,
        rows: np.ndarray,
        out: dict[str, np.ndarray],
        prefix: str,
    ) -> None:
        out[prefix + self.group_name][rows] = group
        for name, node, items in zip(self.part_names, self.parts, self.part_items(answer, group), strict=True):
            node.draw(items, cursor, rows, out, prefix + self._prefix(name))

    def draw_one(self, inp: Any, stream: WordStream, out: dict[str, np.ndarray], prefix: str = "") -> None:
        """:meth:`draw` for one report: the group by rejection (a rejected word replaced by the next)."""
        group = stream.uniforms([self.groups])
        need = 2 * len(self.parts)
        cursor = Cursor(stream.peek(need), np.zeros(1, dtype=np.int64))
        self._draw_parts(np.asarray(inp)[:1], group, cursor, np.arange(1), out, prefix)
        stream.advance(need)
