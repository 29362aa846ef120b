"""The leveled node: a budget level chosen by the user, her item through that level's node, the level report.

The sampler of the user-level protocols (PLDP-FEBSF, RCF, APLDP, PBP, PPDA) and of each attribute
of MPLDP. A user at level ``t`` reports her item with ``items[t]`` and her level as the
``level_report`` says: ``"clear"`` (sent as is: RCF, APLDP, MPLDP), ``"perturbed"`` (drawn by the
direct node ``level_sampler``: PLDP-FEBSF) or ``"hidden"`` (not sent: PBP, PPDA). A level that is
not sent in the clear is a secret of its own: the node claims ``level_epsilon`` for it, checked
against the *whole* report by :meth:`LeveledNode.level_ratio` (ERRATA FEBSF-6: the item report
depends on the level too).

A level's node may be any node that takes one item and protects it at the level's budget
(:data:`ITEM_KINDS`): direct, unary (not ULDP), or one of the large-domain leaves that protect
every pair of items alike (local hashing, Hadamard response, subset selection;
:class:`~pldp.channel.every_pair.EveryPairLeaf`).

* **Level in the clear:** each level its own kind and parameters (a level's ``g`` travels with its
  node; with the level in the clear it tells nothing the level does not). The node's payload
  columns are the union of its levels' columns by kind, each as large as its largest level's, and
  every report is checked against its own level's node (:meth:`LeveledNode.level_sizes`,
  :meth:`LeveledNode.check_columns`).
* **Level hidden or perturbed:** every level's node of one report format (the kind and size, and a
  leaf's :attr:`~pldp.channel.every_pair.EveryPairLeaf.report_format`: one ``g`` for local hashing,
  one ``k`` for subsets), so that the format does not tell the level; the ratio between two levels'
  nodes is their exact ``ratio_to``.

Sketches are no level's node: their reports are rows of a sketch that only the sketch's own
estimator reads, and no leveled protocol builds them.

A level's node may be a memo node (:class:`~pldp.channel.memo.MemoNode`: the memoized chains of
:class:`pldp.protocols.LLevels`, level in the clear): the node then claims each level's
:math:`\\varepsilon_\\infty` and :math:`\\varepsilon_1`, and :meth:`LeveledNode.one_report` is one
report's channel. Such a node is not read from a spec yet (:data:`MEMO_LEVELS_REFUSAL`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, ClassVar, Protocol

import numpy as np

from pldp.channel.direct import DirectNode
from pldp.channel.every_pair import EveryPairLeaf
from pldp.channel.exact import log_ratio, ratio_within
from pldp.channel.memo import MemoNode
from pldp.channel.node import (
    Column,
    Node,
    NodeVisitor,
    ParseNode,
    R,
    Row,
    SchemaRef,
    budget_json,
    budget_schema,
    enum_schema,
    int_schema,
    list_schema,
    node_object,
    one_of,
    read_budget,
    read_budgets,
    read_int,
    read_keys,
)
from pldp.channel.sampling import direct_draw
from pldp.channel.unary import UnaryNode
from pldp.channel.words import Cursor, WordStream
from pldp.errors import SpecError

__all__ = ["ITEM_KINDS", "LEVEL_MEMBERS", "LEVEL_REPORTS", "MEMO_LEVELS_REFUSAL", "LeveledNode"]

#: How a leveled node may report the level, and the optional members each needs (and the others refuse).
LEVEL_MEMBERS: dict[str, tuple[str, ...]] = {
    "perturbed": ("level_sampler", "level_epsilon"),
    "clear": (),
    "hidden": ("level_epsilon",),
}
#: How a leveled node reports the level.
LEVEL_REPORTS = tuple(LEVEL_MEMBERS)
#: The kinds of node a level's item node may be. With the level in the clear, any of them (levels of
#: different kinds in one node included); with the level hidden or perturbed, every level's node
#: must share one report format (:func:`_report_format`), whose ratio between two levels their
#: ``ratio_to`` computes exactly.
ITEM_KINDS = ("direct", "unary", "hashed", "hadamard", "subset")
#: The payload columns of a leveled node, after the level: these kinds first (the order of the
#: direct and unary levels' columns), then the others in the order the levels' nodes name them.
_COLUMN_ORDER = ("item", "bits")
#: A level's item node.
LevelItem = DirectNode | UnaryNode | MemoNode | EveryPairLeaf
#: Why a spec may not hold a leveled node of memoized chains (:class:`pldp.protocols.LLevels`).
MEMO_LEVELS_REFUSAL = (
    "a memoized leveled sampler cannot be deployed yet: the clients' memo keeps one permanent response per "
    "value, not per level"
)


@dataclass(frozen=True)
class LeveledNode(Node):
    """A user-chosen budget level: her item through ``items[level]``, then the level report."""

    kind: ClassVar[str] = "leveled"
    d: int
    levels: tuple[float, ...]
    items: tuple[LevelItem, ...]
    level_report: str
    level_sampler: DirectNode | None = None
    level_epsilon: float | None = None

    @property
    def t(self) -> int:
        """Number of levels."""
        return len(self.levels)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "leveled",
            "d": self.d,
            "levels": [float(e) for e in self.levels],
            "items": [node.to_json() for node in self.items],
            "level_report": self.level_report,
        }
        if self.level_sampler is not None:
            out["level_sampler"] = self.level_sampler.to_json()
        if self.level_epsilon is not None:
            out["level_epsilon"] = budget_json(self.level_epsilon)
        return out

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> LeveledNode:
        """Read and validate the JSON form; ``parse_node`` reads the nodes it holds."""
        assert parse_node is not None
        read_keys(
            obj, path, {"kind", "d", "levels", "items", "level_report"}, frozenset({"level_sampler", "level_epsilon"})
        )
        levels = obj["levels"]
        if not isinstance(levels, list) or not levels:
            raise SpecError(f"{path}.levels must be a non-empty list of budgets")
        lv = read_budgets(levels, f"{path}.levels", len(levels), allow_inf=False)
        items_json = obj["items"]
        if not isinstance(items_json, list) or len(items_json) != len(lv):
            raise SpecError(f"{path}.items must hold one node per level ({len(lv)})")
        parsed = [parse_node(o, f"{path}.items[{i}]") for i, o in enumerate(items_json)]
        if any(node.memoized for node in parsed):
            raise SpecError(f"{path}: {MEMO_LEVELS_REFUSAL}")
        items = tuple(node for node in parsed if isinstance(node, (DirectNode, UnaryNode, EveryPairLeaf)))
        if len(items) != len(parsed) or any(node.kind not in ITEM_KINDS for node in items):
            raise SpecError(f"{path}.items must be {', '.join(ITEM_KINDS[:-1])} or {ITEM_KINDS[-1]} nodes")
        if any(isinstance(node, UnaryNode) and node.notion == "ULDP" for node in items):
            # a level's claim is its budget for every item; a ULDP node may reveal its input
            raise SpecError(f"{path}.items must protect every item: a ULDP node may reveal one")
        d = read_int(obj["d"], f"{path}.d", 2, min(node.d for node in items))
        mode = obj["level_report"]
        if mode not in LEVEL_REPORTS:
            raise SpecError(f"{path}.level_report must be one of {LEVEL_REPORTS}, got {mode!r}")
        if mode != "clear" and len({_report_format(node) for node in items}) > 1:
            raise SpecError(
                f"{path}: with the level {mode}, every level's node must have the same kind and size, "
                "and one report format"
            )
        if any(len({c.size for node in items for c in node.columns() if c.kind == k}) > 1 for k in _COLUMN_ORDER):
            raise SpecError(
                f"{path}: the levels' nodes with an item or a bits column must have the same size "
                "(one payload column each)"
            )
        sampler = None
        if mode == "perturbed":
            if "level_sampler" not in obj:
                raise SpecError(f"{path} needs a level_sampler to perturb the level")
            node = parse_node(obj["level_sampler"], f"{path}.level_sampler")
            if not isinstance(node, DirectNode) or node.d != len(lv):
                raise SpecError(f"{path}.level_sampler must be a direct node over the {len(lv)} levels")
            sampler = node
        elif "level_sampler" in obj:
            raise SpecError(f"{path}.level_sampler is only for a perturbed level")
        level_eps = None
        if mode == "clear":
            if "level_epsilon" in obj:
                raise SpecError(f"{path}.level_epsilon makes no sense for a level sent in the clear")
        else:
            if "level_epsilon" not in obj:
                raise SpecError(f"{path} must state level_epsilon, the protection of the {mode} level")
            level_eps = read_budget(obj["level_epsilon"], f"{path}.level_epsilon", allow_inf=True)
        for i, (node, e) in enumerate(zip(items, lv, strict=True)):
            if any(b != e for b in _claimed_budgets(node) if b != math.inf):
                raise SpecError(f"{path}.items[{i}] must claim the level's budget {e} for every item")
        return cls(d, lv, items, mode, sampler, level_eps)

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        optional = ("level_sampler", "level_epsilon")
        out = node_object(
            "leveled",
            {
                "d": int_schema(2, description="Number of items (at most each level node's d)."),
                "levels": list_schema(budget_schema(False), 1, "The budgets a user chooses from."),
                "items": list_schema(
                    one_of([ref(k) for k in ITEM_KINDS]),
                    1,
                    "One node per level (the level not in the clear: every level's node of one report format).",
                ),
                "level_report": enum_schema(LEVEL_REPORTS, "How the level is sent."),
                "level_sampler": {**ref("direct"), "description": 'A direct node over the levels ("perturbed" only).'},
                "level_epsilon": budget_schema(True, 'The level\'s protection (not for "clear").'),
            },
            optional,
            "Budget levels (PLDP-FEBSF, RCF, APLDP, PBP, PPDA): the item through items[level], then the level.",
        )
        rules = []
        for mode, needs in LEVEL_MEMBERS.items():
            then: dict[str, Any] = {"required": list(needs)} if needs else {}
            refused = [{"required": [m]} for m in optional if m not in needs]
            if refused:
                then["not"] = one_of(refused) if len(refused) == 1 else {"anyOf": refused}
            rules.append({"if": {"properties": {"level_report": {"const": mode}}}, "then": then})
        return {**out, "allOf": rules}

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.leveled(self, *args)

    # ------------------------------------------------------------------ reports
    def columns(self, prefix: str = "") -> list[Column]:
        """The level (unless hidden), then each kind of column of the levels' nodes, as large as
        its largest level's (:data:`_COLUMN_ORDER`)."""
        cols = [] if self.level_report == "hidden" else [Column(prefix + "level", "level", self.t)]
        named = [c.kind for node in self.items for c in node.columns()]
        kinds = [k for k in _COLUMN_ORDER if k in named] + [k for k in dict.fromkeys(named) if k not in _COLUMN_ORDER]
        for name in kinds:
            cols.append(Column(prefix + name, name, int(self.level_sizes(name).max())))
        return cols

    def level_sizes(self, kind: str) -> np.ndarray:
        """Per level, the size of its node's column of ``kind`` (0 where its reports have none): a
        report's bound in that column is its own level's."""
        sizes = [max((c.size for c in node.columns() if c.kind == kind), default=0) for node in self.items]
        return np.array(sizes, dtype=np.int64)

    def check_columns(
        self, cols: Mapping[str, np.ndarray], n: int, prefix: str = "", rows: np.ndarray | None = None
    ) -> None:
        """Each level's node's own check (:meth:`~pldp.channel.node.Node.check_columns`, e.g. a
        subset's size) of the reports of that level; the ranges are checked before
        (:func:`pldp.channel.check_columns`)."""
        if self.level_report == "hidden":
            level = np.zeros(n, dtype=np.int64)
        else:
            level = np.asarray(cols[prefix + "level"])
        for t, node in enumerate(self.items):
            mine = level == t
            node.check_columns(cols, n, prefix, mine if rows is None else mine & rows)

    def as_leveled(self) -> LeveledNode:
        return self

    @property
    def hides_level(self) -> bool:
        return self.level_report != "clear" and self.t > 1

    @property
    def memoized(self) -> bool:
        return any(node.memoized for node in self.items)

    def item_channels(self) -> tuple[DirectNode | UnaryNode | EveryPairLeaf, ...]:
        """Each level's channel of one report: its node, or a memoized chain's one-report channel
        (:meth:`~pldp.channel.memo.MemoNode.one_report`, a view for statistical audits)."""
        return tuple(node.one_report() if isinstance(node, MemoNode) else node for node in self.items)

    def one_report(self) -> LeveledNode:
        """The node of one report: every level's node replaced by :meth:`item_channels`."""
        return replace(self, items=self.item_channels())

    def level_carries(self, kind: str) -> np.ndarray:
        """Per level, whether its item node's reports fill the column of ``kind`` (``"item"``, ``"bits"``, ...)."""
        return self.level_sizes(kind) > 0

    # ------------------------------------------------------------------ claims
    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        rows: list[Row] = []
        for i, (e, item) in enumerate(zip(self.levels, self.items, strict=True)):
            r, _ = item.claims(f"{part} level {i} (eps={e:g})")
            rows += r
        total = max(self.levels)
        if self.level_sampler is not None:
            r, e_p = self.level_sampler.claims(f"{part} level report")
            rows += r
            total += e_p
        if self.hides_level:
            num, den = self.level_ratio()
            claim = self.level_epsilon if self.level_epsilon is not None else 0.0
            rows.append(
                Row(
                    f"{part} the level itself",
                    "any item, levels t vs t'",
                    claim,
                    log_ratio(num, den),
                    ratio_within(num, den, claim),
                )
            )
        return rows, total

    def level_ratio(self) -> tuple[int, int]:
        """The exact largest ratio ``Pr(report | x, t) / Pr(report | x, t')`` over items, outputs and
        levels ``t != t'``, as ``(numerator, denominator)`` (``(1, 0)`` when infinite).

        The report is the item report and, when perturbed, the level report; the two are independent
        given ``(x, t)``, so the ratio is the product of the level report's largest ratio
        ``max_l pi(l|t)/pi(l|t')`` and the item report's (ERRATA FEBSF-6).
        """
        best = Fraction(1)
        for t, node_t in enumerate(self.items):
            for u, node_u in enumerate(self.items):
                if t == u:
                    continue
                item = _item_ratio(node_t, node_u)
                if item is None:
                    return 1, 0
                lv = Fraction(1)
                if self.level_sampler is not None:
                    ratio = self.level_sampler.max_output_ratio(t, u)
                    if ratio is None:
                        return 1, 0
                    lv = ratio
                best = max(best, item * lv)
        return best.numerator, best.denominator

    # ------------------------------------------------------------------ the program
    def reports(self, inp: Any) -> int:
        return int(inp[-1].size)

    def words(self, inp: Any) -> np.ndarray:
        level = inp[1]
        per = np.array([int(node.words(np.zeros(1, dtype=np.int64))[0]) for node in self.items], dtype=np.int64)
        return per[level] + (1 if self.level_sampler is not None else 0)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        x, level = inp
        for t, item_node in enumerate(self.items):
            sel = np.flatnonzero(level == t)
            if sel.size:
                item_node.draw(x[sel], cursor, rows[sel], out, prefix)
        if self.level_report == "perturbed":
            assert self.level_sampler is not None
            w = cursor.take(rows, 1)[:, 0]
            out[prefix + "level"][rows] = direct_draw(level, w, self.level_sampler.table)
        elif self.level_report == "clear":
            out[prefix + "level"][rows] = level

    def draw_one(self, inp: Any, stream: WordStream, out: dict[str, np.ndarray], prefix: str = "") -> None:
        """:meth:`draw` of one report, the level's node reading ``stream`` as it goes (a subset node's
        rejections consume what they must), then the level report's word."""
        x, level = inp
        self.items[int(level[0])].draw_one(x[:1], stream, out, prefix)
        if self.level_report == "perturbed":
            assert self.level_sampler is not None
            w = stream.peek(1)
            stream.advance(1)
            out[prefix + "level"][:1] = direct_draw(level[:1], w, self.level_sampler.table)
        elif self.level_report == "clear":
            out[prefix + "level"][:1] = level[:1]


def _claimed_budgets(node: LevelItem) -> tuple[float, ...]:
    """The budgets a level's node claims: one per item, or the one budget of a large-domain leaf."""
    return (node.epsilon,) if isinstance(node, EveryPairLeaf) else node.epsilons


class _Compared(Protocol):
    """A node that bounds its outputs' ratio to another of its kind exactly (``ratio_to``)."""

    def ratio_to(self, other: Any) -> Fraction | None: ...


def _report_format(node: LevelItem) -> tuple[Any, ...]:
    """What two levels' nodes must share for the level to stay hidden: the kind and size, and an
    every-pair node's :attr:`~pldp.channel.every_pair.EveryPairLeaf.report_format`."""
    return node.report_format if isinstance(node, EveryPairLeaf) else (node.kind, node.d)


def _item_ratio(node: LevelItem, other: LevelItem) -> Fraction | None:
    """Largest ``Pr(o | x, node) / Pr(o | x, other)`` over items ``x`` and outputs ``o`` (None: infinite),
    by the nodes' own ``ratio_to`` (direct, unary, and every every-pair kind's one
    :meth:`~pldp.channel.every_pair.EveryPairLeaf.ratio_to`).

    The two nodes have one kind (:meth:`LeveledNode.parse` refuses a hidden or perturbed level
    over nodes of different kinds or report formats; None for those). A memoized chain is not
    bounded here (None: no hidden level is claimed over memoized chains; only
    :class:`pldp.protocols.LLevels` has them, level in the clear).
    """
    if isinstance(node, MemoNode) or isinstance(other, MemoNode) or type(node) is not type(other):
        return None
    compared: _Compared = node
    return compared.ratio_to(other)
