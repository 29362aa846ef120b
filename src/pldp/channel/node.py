"""What every sampler node is: its interface, its payload columns, its claims, and visitors.

A sampler node is the exact description of a randomizer (``docs/wire-format.md`` §2): every
probability a numerator over ``2**32``, every decision an integer comparison of a word with a
threshold. Each kind of node is a frozen dataclass in a module of its own
(:mod:`~pldp.channel.direct`, :mod:`~pldp.channel.unary`, :mod:`~pldp.channel.padding`,
:mod:`~pldp.channel.leveled`, :mod:`~pldp.channel.attributes`) that implements :class:`Node`:

* its JSON form (``to_json`` and ``parse``, refusing malformed input with a
  :class:`~pldp.errors.SpecError` that names the offending path) and the JSON Schema of that form
  (``json_schema``; :mod:`pldp.channel.schema` puts the kinds' together);
* the payload columns of its reports (:meth:`Node.columns`, ``docs/wire-format.md`` §4-5), each a
  :class:`~pldp.channel.columns.Column` with its codecs, row width and range checks, and the
  payload's JSON structure over them (:mod:`pldp.channel.payload`);
* the exact check of the privacy claims it carries (:meth:`Node.claims`, §3);
* the program that runs it on uniform words (:meth:`Node.words`, :meth:`Node.draw`), which the
  device client (:class:`pldp.client.Client`) executes.

What a kind means to its users is the node's to say: a property or method (:attr:`Node.memoized`,
:attr:`Node.multi_attribute`, :meth:`Node.label_lists`, :attr:`Node.takes_itemsets`,
:attr:`Node.takes_one_item`, :meth:`Node.as_leveled`), its columns, or, for a concern with a rule
per kind (counting report columns, the audit's statistics), one :class:`NodeVisitor` in the module
of that concern: a node calls the visitor's method of its kind (:meth:`Node.accept`). A leaf kind
may instead be covered by every concern's one rule for leaves (:meth:`NodeVisitor.leaf`, driven by
its columns and :meth:`Node.item_keys`, :meth:`Node.pair_claim`, :meth:`Node.pair_law`). No module
outside this package branches on the type of a node or compares its ``kind`` with a kind's name.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import numpy as np

from pldp.channel.columns import Column
from pldp.channel.exact import log_ratio, ratio_within
from pldp.channel.words import Cursor, WordStream
from pldp.errors import SpecError

if TYPE_CHECKING:
    from pldp.channel.attributes import AttributesNode
    from pldp.channel.direct import DirectNode
    from pldp.channel.hadamard import HadamardNode
    from pldp.channel.hashed import HashedNode
    from pldp.channel.heavy import HeavyNode
    from pldp.channel.leveled import LeveledNode
    from pldp.channel.memo import MemoNode
    from pldp.channel.padding import PaddingNode
    from pldp.channel.sketch import CMSNode, HCMSNode
    from pldp.channel.subset import SubsetNode
    from pldp.channel.unary import UnaryNode

__all__ = ["EVERY_PAIR", "Column", "Node", "NodeVisitor", "ParseNode", "Row", "SchemaRef", "every_pair_row", "to_leaf"]

R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])
#: ``parse_node(obj, path)``: how a composite node reads the nodes it holds (:func:`pldp.channel.parse_node`).
ParseNode = Callable[[Any, str], "Node"]
#: ``ref(kind)``: the JSON Schema of a node of that kind, as a composite node's schema holds it (a
#: ``$ref``, or the kind's schema itself; :func:`pldp.channel.node_schemas`).
SchemaRef = Callable[[str], dict[str, Any]]


@dataclass(frozen=True)
class Row:
    """One exact check: ``part`` of the sampler, its ``subject`` (an item, a pair, a level pair)."""

    part: str
    subject: str
    claimed: float
    realised: float
    holds: bool

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON values (``"inf"`` for an infinite budget)."""
        return {
            "part": self.part,
            "subject": self.subject,
            "claimed": "inf" if self.claimed == math.inf else self.claimed,
            "realised": "inf" if self.realised == math.inf else self.realised,
            "holds": self.holds,
        }


#: The subject of the one claim of a node that protects every pair of items alike at one budget.
EVERY_PAIR = "every pair of items"


def every_pair_row(num: int, den: int, epsilon: float, part: str) -> Row:
    """The claim of a node that protects every pair of items alike at ``epsilon`` (local hashing,
    Hadamard response, subset selection): the largest ratio ``num / den`` of a report's
    probabilities under two items is at most :math:`e^{\varepsilon}`, decided exactly."""
    return Row(part, EVERY_PAIR, epsilon, log_ratio(num, den), ratio_within(num, den, epsilon))


def to_leaf(method: F) -> F:
    """Mark a :class:`NodeVisitor` method of a *leaf* kind: one whose base rule is
    ``return self.leaf(node, *args)``, so that a concern covers the kind by its :meth:`~NodeVisitor.leaf`
    rule unless it has a rule of the kind's own (:meth:`NodeVisitor.delegates_to_leaf` reads the mark)."""
    setattr(method, _LEAF_MARK, True)
    return method


_LEAF_MARK = "__to_leaf__"


class NodeVisitor(Generic[R]):
    """One concern's rule for each kind of node.

    A subclass overrides one method per kind; :meth:`Node.accept` calls the method of the node's
    kind with the node and the caller's arguments. A kind the concern has no rule for raises
    :class:`TypeError` (every visitor of pldp covers every kind; ``tests/test_layout.py`` checks).

    A *leaf* kind (one payload of a few columns, one item per report) need not be named by every
    concern: its method here is marked :func:`to_leaf` and calls :meth:`leaf`, the concern's rule
    for any leaf, which follows from the node's columns and its methods :meth:`Node.item_keys`,
    :meth:`Node.pair_claim` and :meth:`Node.pair_law`. A new leaf kind adds, here::

        @to_leaf
        def hashed(self, node: HashedNode, *args: Any) -> R:
            return self.leaf(node, *args)

    The kinds present before the leaf rules (direct, unary, padding) keep rules of their own.
    """

    def _missing(self, node: Node) -> R:
        raise TypeError(f"{type(self).__name__} has no rule for a {node.kind} node")

    @classmethod
    def delegates_to_leaf(cls, kind: str) -> bool:
        """Whether this class's rule of ``kind`` is :meth:`leaf` (its method is marked :func:`to_leaf`);
        ``NodeVisitor.delegates_to_leaf(kind)``: whether ``kind`` is a leaf kind with no rule of its own."""
        return bool(getattr(getattr(cls, kind, None), _LEAF_MARK, False))

    def leaf(self, node: Node, *args: Any) -> R:
        """The rule for a leaf kind that has no rule of its own in this visitor."""
        return self._missing(node)

    def direct(self, node: DirectNode, *args: Any) -> R:
        """The rule for a direct-encoding node."""
        return self._missing(node)

    def unary(self, node: UnaryNode, *args: Any) -> R:
        """The rule for a unary-encoding node."""
        return self._missing(node)

    def padding(self, node: PaddingNode, *args: Any) -> R:
        """The rule for a padding-and-sampling node."""
        return self._missing(node)

    def leveled(self, node: LeveledNode, *args: Any) -> R:
        """The rule for a node with budget levels."""
        return self._missing(node)

    def attributes(self, node: AttributesNode, *args: Any) -> R:
        """The rule for a node of several attributes."""
        return self._missing(node)

    def memo(self, node: MemoNode, *args: Any) -> R:
        """The rule for a memoized chain (a permanent response per value, an instantaneous one per report)."""
        return self._missing(node)

    @to_leaf
    def hashed(self, node: HashedNode, *args: Any) -> R:
        """The rule for a local-hashing node (a leaf: :meth:`leaf` unless the concern has its own)."""
        return self.leaf(node, *args)

    @to_leaf
    def hadamard(self, node: HadamardNode, *args: Any) -> R:
        """The rule for a Hadamard-response node (a leaf: :meth:`leaf` unless the concern has its own)."""
        return self.leaf(node, *args)

    @to_leaf
    def subset(self, node: SubsetNode, *args: Any) -> R:
        """The rule for a subset-selection node (a leaf: :meth:`leaf` unless the concern has its own)."""
        return self.leaf(node, *args)

    @to_leaf
    def cms(self, node: CMSNode, *args: Any) -> R:
        """The rule for a count-mean-sketch node (a leaf: :meth:`leaf` unless the concern has its own)."""
        return self.leaf(node, *args)

    @to_leaf
    def hcms(self, node: HCMSNode, *args: Any) -> R:
        """The rule for a Hadamard count-mean-sketch node (a leaf: :meth:`leaf` unless the concern has its own)."""
        return self.leaf(node, *args)

    @to_leaf
    def heavy(self, node: HeavyNode, *args: Any) -> R:
        """The rule for a heavy-hitter node (its payload a leaf's: its columns; a concern whose rule for
        leaves reads items or pairs of items has a rule of its own, or none)."""
        return self.leaf(node, *args)


class Node(ABC):
    """A sampler node (module docstring). Subclasses are frozen dataclasses.

    The inputs of a node's program are arrays, one entry per report: item indices (direct,
    unary); ``(flat, offsets, sizes)``, the item-sets in CSR form (padding); ``(items, levels)``
    (leveled); a list with one input per part (attributes); a
    :class:`~pldp.channel.memo.MemoInput` (memo: the items and the memo's permanent responses).
    """

    #: The node's tag in JSON (``"direct"``, ``"unary"``, ``"padding"``, ``"leveled"``, ``"attributes"``,
    #: ``"memo"``).
    kind: ClassVar[str]

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The node's JSON form (``docs/wire-format.md`` §2)."""

    @classmethod
    @abstractmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> Node:
        """Read and validate the JSON form (:class:`~pldp.errors.SpecError` naming ``path``);
        a composite node reads the nodes it holds with ``parse_node``."""

    @classmethod
    @abstractmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        """The JSON Schema of the JSON form that :meth:`parse` reads: every member, its type and
        range (what one member decides; not the relations between members, e.g. a list's length
        ``d``); a composite node holds the kinds it may hold as ``ref(kind)``."""

    @abstractmethod
    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        """``visitor.<kind>(self, *args)``: the visitor's rule for this node's kind."""

    # ------------------------------------------------------------------ reports
    @abstractmethod
    def columns(self, prefix: str = "") -> list[Column]:
        """The payload columns of this node's reports, in the order of the wire format."""

    def check_columns(
        self, cols: Mapping[str, np.ndarray], n: int, prefix: str = "", rows: np.ndarray | None = None
    ) -> None:
        """Refuse the first of ``n`` reports (of ``rows``, a mask, or all) whose payload columns
        (named ``prefix`` + the column's name), each within its range, still are no report of this
        node (a :class:`~pldp.errors.ReportError` naming it): what ranges cannot say, e.g. a
        subset's size. Nothing by default; :func:`pldp.channel.check_columns` calls it after the
        ranges (a leveled node for each level's reports)."""
        return None

    def empty_columns(self, n: int) -> dict[str, np.ndarray]:
        """Payload columns of ``n`` reports with no values yet: zero bits, ``-1`` items and levels."""
        return {c.name: c.empty(n) for c in self.columns()}

    @property
    def by_attribute(self) -> tuple[tuple[str, Node], ...]:
        """``(prefix, node)`` of each attribute: the node itself under ``""`` unless it has several."""
        return (("", self),)

    @property
    def multi_attribute(self) -> bool:
        """Whether the node's input is one answer per attribute (its labels and questions one list per attribute)."""
        return False

    def label_lists(self, labels: Any) -> list[Any]:
        """A spec's ``labels`` as one list per attribute (a single attribute's list, in a list)."""
        return list(labels) if self.multi_attribute else [labels]

    @property
    def takes_itemsets(self) -> bool:
        """Whether the node's input is a set of items per report (padding-and-sampling)."""
        return False

    @property
    def takes_one_item(self) -> bool:
        """Whether the node's input is one item per report and nothing else (no level, no set, no attributes)."""
        return False

    @property
    def text_bytes(self) -> int | None:
        """For a node whose input is one free-text answer per report (a heavy-hitter node), the bytes of
        it kept; else None."""
        return None

    def as_leveled(self) -> LeveledNode | None:
        """This node if it is a :class:`~pldp.channel.LeveledNode`, else None."""
        return None

    @property
    def hides_level(self) -> bool:
        """Whether the node keeps a budget level secret (not sent in the clear, more than one)."""
        return False

    @property
    def memoized(self) -> bool:
        """Whether the node keeps state on the device: a permanent response per value (a memo node)."""
        return False

    def level_carries(self, kind: str) -> np.ndarray | None:
        """Per budget level, whether its reports carry a column of ``kind`` (None: no levels)."""
        return None

    # ------------------------------------------------------------------ claims
    @abstractmethod
    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        """Every privacy claim of the node, checked exactly, and the LDP epsilon of its whole report."""

    # ------------------------------------------------------------------ what the generic leaf rules ask
    # The concerns' rules for a leaf kind (NodeVisitor.leaf) ask these; a composite node, and the
    # leaves with rules of their own in every concern (direct, unary), have none.
    def item_keys(self) -> list[tuple[Any, ...]]:
        """Per item, what the channel knows of it: items with equal keys are alike to the channel
        (the audit's item classes, :func:`pldp.audit.pairs.item_classes`)."""
        raise TypeError(f"a {self.kind} node has no item keys")

    def pair_claim(self, i: int, j: int) -> float:
        """The budget the node's notion claims for telling item ``i`` from item ``j`` by one report
        (the largest log-ratio it permits; :func:`pldp.audit.events.pair_claim`)."""
        raise TypeError(f"a {self.kind} node has no pair claim")

    def pair_law(
        self, i: int, j: int, column_prefix: str
    ) -> tuple[np.ndarray, np.ndarray, Callable[[Mapping[str, np.ndarray]], np.ndarray]]:
        """``(pmf0, pmf1, classify)``: the exact laws, under items ``i`` and ``j``, of a finite
        statistic of one report of which the likelihood ratio is a function, and ``classify(columns)``,
        the statistic's category (int64, in ``[0, len(pmf0))``) of each report of the payload columns
        (named ``column_prefix`` + the column's name; :class:`pldp.audit.events.Statistic`)."""
        raise TypeError(f"a {self.kind} node has no pair law")

    # ------------------------------------------------------------------ the program
    @abstractmethod
    def reports(self, inp: Any) -> int:
        """The number of reports in an input of this node."""

    @abstractmethod
    def words(self, inp: Any) -> np.ndarray:
        """The words each report of ``inp`` draws (when no rejection sampling redraws one)."""

    @abstractmethod
    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        """Run the node for the reports ``rows`` (their inputs ``inp``), writing payload columns ``out``.

        Raises :class:`~pldp.channel.words.RejectedError` when a rejection-sampling draw needs
        another word (the caller then redraws report by report with :meth:`draw_one`).
        """

    def draw_one(self, inp: Any, stream: WordStream, out: dict[str, np.ndarray], prefix: str = "") -> None:
        """:meth:`draw` for one report, reading ``stream`` as it goes (rejections consume what they must)."""
        need = int(self.words(inp)[0])
        cursor = Cursor(stream.peek(need), np.zeros(1, dtype=np.int64))
        self.draw(inp, cursor, np.arange(1), out, prefix)
        stream.advance(need)


# --------------------------------------------------------------------------- JSON reading helpers
def budget_json(e: float) -> float | str:
    """A budget as JSON: ``"inf"`` or a float."""
    return "inf" if e == math.inf else float(e)


def read_int(value: Any, path: str, lo: int, hi: int) -> int:
    """An integer in ``[lo, hi]`` (not a bool), or a :class:`SpecError` naming ``path``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"{path} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise SpecError(f"{path} = {value} is outside [{lo}, {hi}]")
    return value


def read_ints(value: Any, path: str, n: int, lo: int, hi: int) -> tuple[int, ...]:
    """A list of ``n`` integers in ``[lo, hi]``."""
    if not isinstance(value, list) or len(value) != n:
        raise SpecError(f"{path} must be a list of {n} integers")
    return tuple(read_int(v, f"{path}[{i}]", lo, hi) for i, v in enumerate(value))


def read_budget(value: Any, path: str, allow_inf: bool) -> float:
    """A budget ``> 0`` (and ``"inf"`` when ``allow_inf``)."""
    if value == "inf" and allow_inf:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        alt = ' or "inf"' if allow_inf else ""
        raise SpecError(f"{path} must be a budget > 0{alt}, got {value!r}")
    return float(value)


def read_budgets(value: Any, path: str, n: int, allow_inf: bool) -> tuple[float, ...]:
    """A list of ``n`` budgets."""
    if not isinstance(value, list) or len(value) != n:
        raise SpecError(f"{path} must be a list of {n} budgets")
    return tuple(read_budget(v, f"{path}[{i}]", allow_inf) for i, v in enumerate(value))


def read_keys(obj: Any, path: str, required: set[str], optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``obj`` if it is an object with the ``required`` members and no others but ``optional``."""
    if not isinstance(obj, dict):
        raise SpecError(f"{path} must be an object")
    missing = required - obj.keys()
    extra = obj.keys() - required - optional
    if missing:
        raise SpecError(f"{path} lacks {sorted(missing)}")
    if extra:
        raise SpecError(f"{path} has unknown members {sorted(extra)}")
    return obj


# --------------------------------------------------------------------------- JSON Schema helpers
def int_schema(lo: int, hi: int | None = None, description: str = "") -> dict[str, Any]:
    """The schema of :func:`read_int`: an integer in ``[lo, hi]`` (no upper bound when ``hi`` is None)."""
    out: dict[str, Any] = {"type": "integer", "minimum": lo}
    if hi is not None:
        out["maximum"] = hi
    return _described(out, description)


def budget_schema(allow_inf: bool, description: str = "") -> dict[str, Any]:
    """The schema of :func:`read_budget`: a number ``> 0`` (or ``"inf"`` when ``allow_inf``)."""
    positive = {"type": "number", "exclusiveMinimum": 0}
    return _described({"anyOf": [positive, {"const": "inf"}]} if allow_inf else positive, description)


def epsilons_schema(allow_inf: bool, min_items: int = 1) -> dict[str, Any]:
    """The schema of a node's ``epsilons`` (:func:`read_budgets`): one budget per item."""
    what = 'one per item (or "inf": not sensitive)' if allow_inf else "one per item"
    return list_schema(budget_schema(allow_inf), min_items, f"The budgets claimed, {what}.")


def list_schema(items: dict[str, Any], min_items: int = 0, description: str = "") -> dict[str, Any]:
    """A list of ``items``, at least ``min_items`` of them."""
    out: dict[str, Any] = {"type": "array", "items": items}
    if min_items:
        out["minItems"] = min_items
    return _described(out, description)


def enum_schema(values: tuple[str, ...], description: str = "") -> dict[str, Any]:
    """One of ``values``."""
    return _described({"type": "string", "enum": list(values)}, description)


def one_of(schemas: list[dict[str, Any]], description: str = "") -> dict[str, Any]:
    """Exactly one of ``schemas`` (the schema itself when there is one)."""
    return _described(dict(schemas[0]) if len(schemas) == 1 else {"oneOf": schemas}, description)


def object_schema(
    members: dict[str, dict[str, Any]], optional: tuple[str, ...] = (), description: str = ""
) -> dict[str, Any]:
    """The schema of :func:`read_keys`: an object with ``members`` (all required but ``optional``) and no others."""
    return _described(
        {
            "type": "object",
            "properties": members,
            "required": [m for m in members if m not in optional],
            "additionalProperties": False,
        },
        description,
    )


def node_object(
    kind: str, members: dict[str, dict[str, Any]], optional: tuple[str, ...] = (), description: str = ""
) -> dict[str, Any]:
    """:func:`object_schema` of a node: its ``kind`` tag, then ``members``."""
    return object_schema({"kind": {"type": "string", "const": kind}, **members}, optional, description)


def _described(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description} if description else schema


def groups(keys: list[Any]) -> dict[Any, list[int]]:
    """The indices of each distinct key, in order of first appearance."""
    out: dict[Any, list[int]] = {}
    for i, k in enumerate(keys):
        out.setdefault(k, []).append(i)
    return out


def who(items: list[int]) -> str:
    """``"item 3"``, or ``"item 3 (+4)"`` for a group of five items."""
    return f"item {items[0]}" + (f" (+{len(items) - 1})" if len(items) > 1 else "")
