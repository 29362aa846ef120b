"""Payload columns own their codecs (:mod:`pldp.channel.columns`): JSON values, fixed-width rows
and range checks agree with each other, and the node properties that replace kind tests say what
each kind's input is."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.channel import Cell, Column, MemoNode, Node
from pldp.errors import ReportError
from tests.deploy_cases import oracle_cases, oracle_kinds, with_every_kind

#: An oracle of every kind of node: the deployable cases and two memoized chains (a direct and a unary one).
CASES = with_every_kind({**oracle_cases(), "lgrr": pldp.LGRR(4.0, 1.0, 5), "loue": pldp.LOUE(4.0, 1.0, 5)})
#: One column of each kind, with an awkward size: 11 bits leave 5 padding bits in the second byte.
COLUMNS = [Column("item", "item", 5), Column("level", "level", 3), Column("bits", "bits", 11)]


def _values(column: Column, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` values in range: indices below ``size``, or bits with the padding bits clear."""
    if column.cell is Cell.INDEX:
        return rng.integers(0, column.size, n).astype(np.int64)
    return np.packbits(rng.integers(0, 2, (n, column.size)).astype(bool), axis=1)


@pytest.mark.parametrize("column", COLUMNS, ids=lambda c: c.kind)
def test_a_column_reads_back_what_it_writes(column: Column) -> None:
    values = _values(column, 40, np.random.default_rng(len(column.name)))
    rows = column.to_bytes(values)
    assert rows.shape == (40, column.width) and rows.dtype == np.uint8
    assert np.array_equal(column.from_bytes(rows), values)
    assert column.from_bytes(rows).dtype == column.empty(0).dtype
    texts = [column.to_json(values, i) for i in range(40)]
    assert all(column.is_canonical_json(t) for t in texts)
    assert np.array_equal(column.read_json_all(texts), values)  # type: ignore[arg-type]
    one = column.empty(40)
    for i, t in enumerate(texts):
        column.read_json(t, i, one)
    assert np.array_equal(one, values)
    column.check(values, column.size)  # in range: nothing refused
    assert column.holds(column.empty(3)).tolist() == [False] * 3


def test_the_widths_are_a_packed_row_or_an_int32() -> None:
    assert [(c.cell, c.width) for c in COLUMNS] == [(Cell.INDEX, 4), (Cell.INDEX, 4), (Cell.BITS, 2)]


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        (COLUMNS[0], True, "the payload must be an item index, got True"),
        (COLUMNS[0], 2**31, f"item {2**31} is not in [0, 5)"),
        (COLUMNS[1], 3, "level 3 is not in [0, 3)"),
        (COLUMNS[1], "0", "level '0' is not in [0, 3)"),
        (COLUMNS[2], 7, "the payload must be base64 text, got int"),
        (COLUMNS[2], "@@", "bad base64 in the payload"),
        (COLUMNS[2], "AAAA", "3 bytes of bits, expected 2"),
    ],
)
def test_a_column_refuses_a_json_value_of_the_wrong_shape(column: Column, value: Any, reason: str) -> None:
    with pytest.raises(ReportError) as err:
        column.read_json(value, 7, column.empty(8))
    assert str(err.value) == f"report 7: {reason}" and err.value.index == 7
    assert column.read_json_all([column.to_json(column.empty(1), 0), value]) is None


def test_a_column_refuses_values_out_of_range_by_the_first_report() -> None:
    items = np.array([0, 4, 5, -1, 9])
    with pytest.raises(ReportError, match=r"^report 2: item 5 is out of range$"):
        COLUMNS[0].check(items, 5)
    COLUMNS[0].check(items, 5, rows=np.array([True, True, False, False, False]))
    bits = np.zeros((3, 2), dtype=np.uint8)
    bits[1, 1] = 0b00000100  # bit 13: past the 11 bits
    with pytest.raises(ReportError, match=r"^report 1: the report sets padding bits beyond bit 10$"):
        COLUMNS[2].check(bits, 11)
    assert not COLUMNS[2].is_canonical_json(base64.b64encode(bits[1].tobytes()).decode())


def test_canonical_json_refuses_what_a_device_must_not_have_written() -> None:
    item, bits = COLUMNS[0], COLUMNS[2]
    assert [item.is_canonical_json(v) for v in (0, 4, 5, -1, True, 1.0)] == [True, True, False, False, False, False]
    assert bits.is_canonical_json("AAA=") and not bits.is_canonical_json("AAB=")  # non-canonical trailing bits


@pytest.mark.parametrize("name", ["lgrr", "loue"])
def test_a_memo_node_writes_and_reads_its_permanent_responses(name: str) -> None:
    node = CASES[name].sampler()
    assert isinstance(node, MemoNode)
    rng = np.random.default_rng(3)
    permanent = node.empty_permanent(6)
    permanent[:] = rng.integers(0, 2, permanent.shape) if permanent.ndim == 2 else rng.integers(0, node.d, 6)
    texts = node.permanent_json(permanent)
    column = MemoNode.permanent_column(node.permanent.kind, node.d)
    assert column is not None and all(column.is_canonical_json(t) for t in texts)
    assert np.array_equal(node.read_permanent_json(texts), permanent)
    assert MemoNode.permanent_column("padding", node.d) is None


def _kinds_with(prop: str) -> set[str]:
    found = set()
    for oracle in CASES.values():
        node: Node = oracle.sampler()
        if getattr(node, prop):
            found.add(node.kind)
    return found


def test_the_node_properties_say_what_each_kind_takes() -> None:
    assert {o.sampler().kind for o in CASES.values()} == oracle_kinds()
    assert _kinds_with("multi_attribute") == {"attributes"}
    assert _kinds_with("takes_itemsets") == {"padding"}
    one_item = _kinds_with("takes_one_item")  # a new leaf's own tests say whether it takes one item
    assert {"direct", "unary", "memo"} <= one_item and one_item.isdisjoint({"padding", "leveled", "attributes"})
    assert _kinds_with("memoized") == {"memo"}
    assert CASES["mpldp"].sampler().label_lists((["a"], ["b"])) == [["a"], ["b"]]
    assert CASES["krr"].sampler().label_lists(["a", "b"]) == [["a", "b"]]
