"""The concerns' rules for leaves (``NodeVisitor.leaf``): a leaf kind that no concern names is covered.

A test-only leaf, :class:`TwoColumnLeaf` (kind ``"testleaf"``), is randomized response over ``d``
items on the ``2**32`` grid with a second, independent payload column (a uniform ``tag`` of
:data:`TAGS` values): two index columns, one item per report. Its ``accept`` calls
``visitor.leaf``, as a future leaf kind's NodeVisitor method does, so every check below goes
through the generic rules: the payload's JSON object, the range checks, the fast reader's fallback,
the count of a table, the client's inputs, the audit's users, answers, pairs, claim, statistic and
attack, the default data and the privacy map's rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
import pytest

import pldp
from pldp.audit.attacks import ldp_auditor_test
from pldp.audit.events import optimal_test, pair_claim, statistic
from pldp.audit.pairs import Input, Pair, default_pairs, item_classes
from pldp.audit.targets import _USERS, client_answer, client_arguments
from pldp.channel import NodeVisitor, PayloadReader, check_columns, payload_writer, to_leaf
from pldp.channel.columns import Column
from pldp.channel.exact import log_ratio, ratio_within
from pldp.channel.node import Node, ParseNode, R, Row, SchemaRef
from pldp.channel.payload import _PAYLOAD, _Reader
from pldp.channel.sampling import GRID
from pldp.channel.words import Cursor
from pldp.client import Client, _Inputs
from pldp.deploy import Spec
from pldp.deploy import count as count_module
from pldp.deploy.count import count_table
from pldp.deploy.wire import _SHAPE, ReportBatch, _read_fast
from pldp.errors import ParameterError, ReportError
from pldp.privacy import PairPrivacyReport
from pldp.testing.case import _DATA, default_data
from pldp.testing.privacy_map import TOLERANCE, privacy_map_disagreements

#: Values of the test leaf's second column.
TAGS = 4


@dataclass(frozen=True)
class TwoColumnLeaf(Node):
    """Test only: ``Pr(item y | x) = (weight + keep [x = y]) / 2**32`` and an independent uniform tag."""

    kind: ClassVar[str] = "testleaf"
    d: int
    keep: int
    weight: int
    epsilon: float

    @classmethod
    def at(cls, epsilon: float, d: int) -> TwoColumnLeaf:
        """Randomized response at ``epsilon`` over ``d`` items: ``keep / weight`` at most ``e^eps - 1``."""
        weight = math.ceil(GRID / (math.exp(epsilon) - 1 + d))
        return cls(d, GRID - d * weight, weight, epsilon)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "d": self.d, "keep": self.keep, "weight": self.weight, "epsilon": self.epsilon}

    @classmethod
    def parse(cls, obj: Any, path: str, parse_node: ParseNode | None = None) -> TwoColumnLeaf:
        return cls(obj["d"], obj["keep"], obj["weight"], obj["epsilon"])

    @classmethod
    def json_schema(cls, ref: SchemaRef) -> dict[str, Any]:
        return {"type": "object"}

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return visitor.leaf(self, *args)

    @property
    def takes_one_item(self) -> bool:
        return True

    def columns(self, prefix: str = "") -> list[Column]:
        return [Column(prefix + "item", "item", self.d), Column(prefix + "tag", "tag", TAGS)]

    def claims(self, part: str = "root") -> tuple[list[Row], float]:
        num, den = self.weight + self.keep, self.weight
        ok = ratio_within(num, den, self.epsilon)
        return [Row(part, "every pair of items", self.epsilon, log_ratio(num, den), ok)], self.epsilon

    def item_keys(self) -> list[tuple[Any, ...]]:
        return [(self.keep, self.weight, self.epsilon)] * self.d

    def pair_claim(self, i: int, j: int) -> float:
        return self.epsilon

    def pair_law(self, i: int, j: int, column_prefix: str) -> tuple[np.ndarray, np.ndarray, Any]:
        """Categories ``item = i``, ``item = j``, other; the tag tells nothing."""
        hit, miss = (self.weight + self.keep) / GRID, self.weight / GRID
        rest = 1 - hit - miss
        name = column_prefix + "item"

        def classify(cols: Any) -> np.ndarray:
            y = np.asarray(cols[name], dtype=np.int64)
            return np.where(y == i, 0, np.where(y == j, 1, 2)).astype(np.int64)

        return np.array([hit, miss, rest]), np.array([miss, hit, rest]), classify

    def reports(self, inp: Any) -> int:
        return int(inp.size)

    def words(self, inp: Any) -> np.ndarray:
        return np.full(inp.size, 2, dtype=np.int64)

    def draw(self, inp: Any, cursor: Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str = "") -> None:
        w = cursor.take(rows, 2).astype(np.int64)
        other = np.maximum(w[:, 0] - self.keep, 0) // self.weight
        out[prefix + "item"][rows] = np.where(w[:, 0] < self.keep, inp, other)
        out[prefix + "tag"][rows] = w[:, 1] >> 30


@dataclass(frozen=True)
class SetLeaf(TwoColumnLeaf):
    """Test only: a leaf whose input is not one item (the client has no generic rule for it)."""

    @property
    def takes_one_item(self) -> bool:
        return False


@dataclass(frozen=True)
class MarkedLeaf(TwoColumnLeaf):
    """Test only: the leaf as a new kind is added, its ``accept`` calling ``visitor.testleaf``."""

    def accept(self, visitor: NodeVisitor[R], *args: Any) -> R:
        return getattr(visitor, self.kind)(self, *args)


LEAF = TwoColumnLeaf.at(1.0, 3)


def _columns(items: list[int], tags: list[int], prefix: str = "") -> dict[str, np.ndarray]:
    return {prefix + "item": np.array(items, dtype=np.int64), prefix + "tag": np.array(tags, dtype=np.int64)}


def _read(node: Node, payloads: list[Any]) -> dict[str, np.ndarray]:
    reader = PayloadReader(node, len(payloads))
    for row, payload in enumerate(payloads):
        reader.read(payload, row)
    return reader.cols


# --------------------------------------------------------------------------- payload
def test_a_leaf_of_two_columns_writes_an_object_keyed_by_its_columns_and_reads_it_back() -> None:
    cols = _columns([2, 0, 1], [3, 0, 1])
    write = payload_writer(LEAF)
    payloads = [write(cols, row) for row in range(3)]
    assert payloads == [{"item": 2, "tag": 3}, {"item": 0, "tag": 0}, {"item": 1, "tag": 1}]
    back = _read(LEAF, payloads)
    assert {k: v.tolist() for k, v in back.items()} == {k: v.tolist() for k, v in cols.items()}


def test_a_leaf_under_a_prefix_keys_its_payload_by_the_names_without_it() -> None:
    """An attribute's leaf: the columns ``a1.item``, ``a1.tag``, the payload's keys ``item``, ``tag``."""
    cols = _columns([1], [2], "a1.")
    assert LEAF.accept(_PAYLOAD, "a1.")(cols, 0) == {"item": 1, "tag": 2}
    reader = _Reader({name: np.full(1, -1, dtype=np.int64) for name in cols})
    LEAF.accept(reader, {"item": 1, "tag": 2}, 0, "a1.")
    assert {k: v.tolist() for k, v in reader.cols.items()} == {"a1.item": [1], "a1.tag": [2]}


@pytest.mark.parametrize(
    "bad",
    [{"item": 1}, {"item": 1, "tag": 0, "seed": 5}, {"tag": 0, "value": 1}, [1, 0], 1, "1", None],
    ids=["missing key", "extra key", "other keys", "list", "int", "str", "null"],
)
def test_a_leaf_of_two_columns_refuses_a_payload_of_another_shape_naming_the_report(bad: Any) -> None:
    with pytest.raises(
        ReportError, match=r"report 1: the payload must be an object with exactly \['item', 'tag'\]"
    ) as e:
        _read(LEAF, [{"item": 0, "tag": 0}, bad])
    assert e.value.index == 1


def test_a_leaf_column_of_the_wrong_type_is_refused_by_its_column() -> None:
    with pytest.raises(ReportError, match="report 0: the payload must be an item index") as e:
        _read(LEAF, [{"item": 0, "tag": "x"}])
    assert e.value.index == 0


@pytest.mark.parametrize(
    ("items", "tags", "row", "what"),
    [([0, 3, 1], [0, 0, 0], 1, "item 3"), ([0, 1, 2], [0, 1, 4], 2, "tag 4"), ([0, -1], [0, 0], 1, "item -1")],
)
def test_the_range_checks_of_a_leaf_refuse_the_first_value_out_of_range(
    items: list[int], tags: list[int], row: int, what: str
) -> None:
    check_columns(LEAF, _columns([0, 2, 1], [0, 3, 1]), 3)  # in range: nothing
    with pytest.raises(ReportError, match=f"report {row}: {what} is out of range") as e:
        check_columns(LEAF, _columns(items, tags), len(items))
    assert e.value.index == row


def test_direct_and_unary_payloads_are_each_columns_value_as_before() -> None:
    """The shared leaf code writes a one-column leaf's value as its column does (an integer, base64)."""
    rng = np.random.default_rng(20240601)
    for oracle in (pldp.KRR(1.0, 5), pldp.OUE(1.0, 11)):
        root = oracle.sampler()
        (column,) = root.columns()
        cols = oracle.report_columns(oracle.perturb(np.arange(5) % oracle.d, rng))
        write = payload_writer(root)
        payloads = [write(cols, row) for row in range(5)]
        assert payloads == [column.to_json(cols[column.name], row) for row in range(5)]
        assert all(type(p) is (int if column.cell.value == "index" else str) for p in payloads)
        np.testing.assert_array_equal(_read(root, payloads)[column.name], cols[column.name])


# --------------------------------------------------------------------------- wire and count
def _batch(node: Node, items: list[int], tags: list[int]) -> ReportBatch:
    ids = np.arange(16 * len(items), dtype=np.uint8).reshape(len(items), 16)
    return ReportBatch("f" * 32, ids, _columns(items, tags), node)


def test_a_batch_of_a_two_column_leaf_is_read_by_the_per_report_reader() -> None:
    """The fast reader's shape is one column's value; with two columns it gives way (None)."""
    assert LEAF.accept(_SHAPE) == (None,)
    batch = _batch(LEAF, [2, 1, 0], [1, 3, 0])
    text = batch.to_json()
    items = text["reports"]
    assert _read_fast(LEAF, items, {"id", "payload"}, batch.spec) is None
    back = ReportBatch.from_json(text, LEAF, batch.spec)
    assert back.hex_ids == batch.hex_ids
    assert {k: v.tolist() for k, v in back.columns.items()} == {k: v.tolist() for k, v in batch.columns.items()}
    items[2]["payload"] = {"item": 0}
    with pytest.raises(ReportError, match="report 2: the payload must be an object") as e:
        ReportBatch.from_json(text, LEAF, batch.spec)
    assert e.value.index == 2


def test_a_table_of_a_leaf_is_counted_by_the_checked_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """``count_table`` checks every column's range, then tallies the columns (the oracle's tally,
    here replaced by the identity: the test leaf has no oracle)."""
    pytest.importorskip("pyarrow")
    monkeypatch.setattr(count_module, "tally_columns", lambda spec, columns: columns)
    spec = SimpleNamespace(root=LEAF)
    counted = count_table(spec, _batch(LEAF, [2, 1, 0], [1, 3, 0]).to_arrow())
    assert {k: v.tolist() for k, v in counted.items()} == {"item": [2, 1, 0], "tag": [1, 3, 0]}
    with pytest.raises(ReportError, match="report 1: tag 7 is out of range") as e:
        count_table(spec, _batch(LEAF, [2, 1, 0], [1, 7, 0]).to_arrow())
    assert e.value.index == 1


# --------------------------------------------------------------------------- client and data
def _client() -> Client:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Which?", labels=["a", "b", "c"])
    return Client(spec)


def test_the_client_gives_a_leaf_one_item_per_report() -> None:
    inputs = _Inputs(_client())
    assert LEAF.accept(inputs, ["c", "a"], None, None, 0).tolist() == [2, 0]
    assert LEAF.accept(inputs, np.array([1, 2]), None, None, 0).tolist() == [1, 2]
    with pytest.raises(ParameterError, match=r"answer indices must lie in \[0, 3\)"):
        LEAF.accept(inputs, np.array([3]), None, None, 0)


def test_the_client_refuses_a_leaf_that_takes_more_than_one_item() -> None:
    with pytest.raises(
        TypeError, match="_Inputs has no rule for a testleaf node: its input is not one item per report"
    ):
        SetLeaf.at(1.0, 3).accept(_Inputs(_client()), [0], None, None, 0)


def test_the_default_data_of_a_leaf_are_the_zipf_counts_of_direct_and_unary() -> None:
    oracle = pldp.KRR(1.0, 4)
    got = TwoColumnLeaf.at(1.0, 4).accept(_DATA, oracle, np.random.default_rng(0))
    assert [a.tolist() for a in got] == [a.tolist() for a in default_data(oracle)]


# --------------------------------------------------------------------------- audit
def test_the_audit_runs_a_leaf_on_one_item() -> None:
    (users,) = LEAF.accept(_USERS, Input(2), 4)
    assert users.tolist() == [2, 2, 2, 2]
    assert client_answer(LEAF, Input(1)) == (1, {})
    answers, choices = client_arguments(LEAF, Input(1), 3)
    assert (answers.tolist(), choices) == ([1, 1, 1], {})


def test_the_default_pairs_of_a_leaf_are_its_item_pairs_then_its_item_classes() -> None:
    labels = [p.label() for p in default_pairs(LEAF)]
    assert labels == ["0 vs 1", "0 vs 2", "1 vs 0", "1 vs 2", "2 vs 0", "2 vs 1"]
    big = TwoColumnLeaf.at(1.0, 40)  # beyond the small domains: one class of alike items
    assert item_classes(big) == [list(range(40))]
    assert [p.label() for p in default_pairs(big)] == ["0 vs 1", "1 vs 0"]
    assert {p.secret for p in default_pairs(big)} == {"item"}


def test_the_claim_and_the_statistic_of_a_leaf_are_its_own() -> None:
    pair = Pair("item", Input(0), Input(2))
    assert pair_claim(LEAF, pair) == 1.0
    stat = statistic(LEAF, pair.x0, pair.x1, "a0.")
    classify = stat.classify(_columns([2, 0, 1], [0, 0, 3], "a0."))
    assert classify.tolist() == [1, 0, 2]
    test = optimal_test(LEAF, pair)
    exact = log_ratio(LEAF.weight + LEAF.keep, LEAF.weight)
    # the laws are float quotients of grid integers: the log-ratio of two doubles, each within an
    # ulp of the exact quotient, is within a few ulps of 1 of the exact log-ratio
    assert test.log_ratio == pytest.approx(exact, abs=1e-12)
    assert test.exact == pytest.approx(exact, abs=1e-12)
    (row,), whole = LEAF.claims()
    assert row.holds and whole == 1.0


def test_ldp_auditors_attack_refuses_a_leaf_and_names_the_optimal_attack() -> None:
    with pytest.raises(
        ParameterError, match="guess an item from a GRR or unary report; audit a testleaf node with attack='optimal'"
    ):
        ldp_auditor_test(LEAF, Pair("item", Input(0), Input(1)))


def test_a_leaf_draws_reports_its_statistic_classifies() -> None:
    """The test leaf's program and its law agree: drawn reports classify into every category."""
    rng = np.random.default_rng(7)
    n = 4000
    words = rng.integers(0, GRID, size=2 * n, dtype=np.uint64).astype(np.int64)
    out = LEAF.empty_columns(n)
    LEAF.draw(np.zeros(n, dtype=np.int64), Cursor(words, 2 * np.arange(n)), np.arange(n), out)
    check_columns(LEAF, out, n)
    counts = np.bincount(statistic(LEAF, Input(0), Input(1)).classify(out), minlength=3)
    assert counts.sum() == n and (counts > 0).all()


# --------------------------------------------------------------------------- privacy map
def _float_map(leaf: TwoColumnLeaf, notion: str = "LDP", realised: float | None = None) -> PairPrivacyReport:
    exact = log_ratio(leaf.weight + leaf.keep, leaf.weight)
    r = exact if realised is None else realised
    return PairPrivacyReport(
        notion, np.array([leaf.epsilon]), [np.arange(leaf.d)], np.array([[leaf.epsilon]]), np.array([[r]])
    )


def test_the_privacy_map_of_a_leaf_agrees_when_it_states_the_notion_and_the_leak() -> None:
    assert privacy_map_disagreements(_float_map(LEAF), LEAF) == []
    exact = log_ratio(LEAF.weight + LEAF.keep, LEAF.weight)
    assert privacy_map_disagreements(_float_map(LEAF, realised=exact - TOLERANCE / 2), LEAF) == []  # rounding
    assert privacy_map_disagreements(_float_map(LEAF, realised=exact + 0.5), LEAF) == []  # more cautious


def test_the_privacy_map_of_a_leaf_catches_a_map_that_overstates_privacy() -> None:
    smaller = _float_map(TwoColumnLeaf.at(0.5, 3))  # a map of a smaller budget than the sampler runs
    (line,) = privacy_map_disagreements(smaller, LEAF)
    assert line.startswith("root: every pair of items: LDP epsilon 0.49") and "below the exact log-ratio 0.99" in line
    exact = log_ratio(LEAF.weight + LEAF.keep, LEAF.weight)
    assert len(privacy_map_disagreements(_float_map(LEAF, realised=exact - 4 * TOLERANCE), LEAF)) == 1
    (line,) = privacy_map_disagreements(_float_map(LEAF, notion="MinID-LDP"), LEAF)
    assert line == "root: privacy() claims 'MinID-LDP' where the sampler claims 'LDP'"


# --------------------------------------------------------------------------- a new kind's mark
def test_a_kind_marked_to_leaf_in_node_visitor_reaches_every_concerns_rule_for_leaves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a new leaf kind adds to ``NodeVisitor`` (a marked method calling ``leaf``) suffices: the
    concerns, which name no such kind, run their rules for leaves."""

    def testleaf(self: NodeVisitor[Any], node: Node, *args: Any) -> Any:
        return self.leaf(node, *args)

    assert not NodeVisitor.delegates_to_leaf("testleaf")
    monkeypatch.setattr(NodeVisitor, "testleaf", to_leaf(testleaf), raising=False)
    assert NodeVisitor.delegates_to_leaf("testleaf") and not NodeVisitor.delegates_to_leaf("direct")
    node = MarkedLeaf.at(1.0, 3)
    assert payload_writer(node)(_columns([1], [2]), 0) == {"item": 1, "tag": 2}
    with pytest.raises(ReportError, match="report 0: item 5 is out of range"):
        check_columns(node, _columns([5], [0]), 1)
    assert pair_claim(node, Pair("item", Input(0), Input(1))) == 1.0
    assert [p.label() for p in default_pairs(node)][:2] == ["0 vs 1", "0 vs 2"]
    with pytest.raises(ParameterError, match="audit a testleaf node with attack='optimal'"):
        ldp_auditor_test(node, Pair("item", Input(0), Input(1)))
