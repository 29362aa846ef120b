"""Tests of :class:`pldp.Domain`: label <-> index maps and their errors."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pldp
from pldp import Domain, DomainError

# ----------------------------------------------------------------------------- strategies
ASCII = "abcdefghijklmnopqrstuvwxyz0123456789_-"

str_labels = st.lists(st.text(alphabet=ASCII, min_size=1, max_size=6), min_size=1, max_size=30, unique=True)
int_labels = st.lists(st.integers(-(10**12), 10**12), min_size=1, max_size=30, unique=True)
# Strings and ints never compare equal, so ``unique`` guarantees distinct labels.
mixed_labels = st.lists(
    st.one_of(st.text(alphabet=ASCII, max_size=4), st.integers(-1000, 1000)), min_size=1, max_size=30, unique=True
)


# ------------------------------------------------------------------------------ round trips
@settings(max_examples=60, deadline=None)
@given(labels=st.one_of(str_labels, int_labels, mixed_labels), data=st.data())
def test_encode_decode_round_trip(labels, data):
    dom = Domain(labels)
    values = data.draw(st.lists(st.sampled_from(labels), max_size=50))
    codes = dom.encode(values)
    assert codes.dtype == np.int64
    assert codes.shape == (len(values),)
    # every code points at the label it was encoded from
    assert [labels[i] for i in codes.tolist()] == values
    assert dom.decode(codes) == values


@settings(max_examples=40, deadline=None)
@given(labels=str_labels, data=st.data())
def test_encode_numpy_string_array_matches_list(labels, data):
    dom = Domain(labels)
    values = data.draw(st.lists(st.sampled_from(labels), min_size=1, max_size=40))
    from_array = dom.encode(np.array(values))
    from_list = dom.encode(values)
    np.testing.assert_array_equal(from_array, from_list)
    assert from_array.tolist() == [labels.index(v) for v in values]


@settings(max_examples=40, deadline=None)
@given(labels=int_labels, data=st.data())
def test_encode_numpy_int_array(labels, data):
    dom = Domain(labels)
    values = data.draw(st.lists(st.sampled_from(labels), min_size=1, max_size=40))
    codes = dom.encode(np.array(values, dtype=np.int64))
    assert codes.tolist() == [labels.index(v) for v in values]


def test_order_is_preserved_not_sorted():
    dom = Domain(["zeta", "alpha", "mu"])
    assert dom.labels == ("zeta", "alpha", "mu")
    assert list(dom) == ["zeta", "alpha", "mu"]
    assert dom.encode(["alpha", "mu", "zeta"]).tolist() == [1, 2, 0]
    assert [dom.index(lab) for lab in ("zeta", "alpha", "mu")] == [0, 1, 2]
    assert dom.decode([2, 0, 1]) == ["mu", "zeta", "alpha"]


def test_docstring_example():
    dom = Domain(["flu", "cold", "hiv"])
    assert dom.encode(["hiv", "flu"]).tolist() == [2, 0]
    assert dom.decode([1]) == ["cold"]


def test_mixed_labels_are_compared_by_equality():
    dom = Domain([1, "1", "a", 2.5, None])
    assert dom.encode(["1", 1, None, 2.5, "a"]).tolist() == [1, 0, 4, 3, 2]
    assert dom.decode([0, 1]) == [1, "1"]
    assert 1 in dom and "1" in dom
    assert "2.5" not in dom


def test_size_and_len():
    dom = Domain("abcd")
    assert len(dom) == 4
    assert dom.size == 4
    assert dom.labels == ("a", "b", "c", "d")


def test_numpy_array_of_labels_becomes_python_values():
    dom = Domain(np.array(["x", "y"]))
    assert dom.labels == ("x", "y")
    assert all(type(lab) is str for lab in dom.labels)
    assert Domain(np.arange(3)).labels == (0, 1, 2)


def test_generator_of_labels():
    dom = Domain(f"item{i}" for i in range(4))
    assert dom.labels == ("item0", "item1", "item2", "item3")


# ---------------------------------------------------------------------------- Domain.range
@pytest.mark.parametrize("d", [1, 2, 7, 100])
def test_range_labels_equal_indices(d):
    dom = Domain.range(d)
    assert len(dom) == d
    assert dom.labels == tuple(range(d))
    idx = np.arange(d)
    np.testing.assert_array_equal(dom.encode(idx), idx)
    assert dom.decode(idx) == list(range(d))


def test_range_equals_explicit_domain():
    assert Domain.range(4) == Domain([0, 1, 2, 3])
    assert Domain.range(4.0) == Domain.range(4)  # integral floats are accepted


@pytest.mark.parametrize("d", [2.5, "3", None, True])
def test_range_rejects_non_integers(d):
    with pytest.raises(pldp.PLDPError, match="integer") as info:
        Domain.range(d)
    assert repr(d) in str(info.value)


@pytest.mark.parametrize("d", [0, -3])
def test_range_rejects_empty_or_negative(d):
    # Domain.range(0) describes an empty domain; it is refused via check_int (ParameterError).
    with pytest.raises(pldp.PLDPError) as info:
        Domain.range(d)
    assert isinstance(info.value, ValueError)
    assert str(d) in str(info.value)


# ----------------------------------------------------------------------------------- encode
def test_encode_preserves_shape_of_2d_input():
    dom = Domain("abc")
    values = np.array([["a", "b"], ["c", "a"], ["b", "b"]])
    codes = dom.encode(values)
    assert codes.shape == (3, 2)
    assert codes.tolist() == [[0, 1], [2, 0], [1, 1]]


@pytest.mark.parametrize(("value", "expected"), [("b", 1), ("c", 2)])
def test_encode_scalar(value, expected):
    dom = Domain("abc")
    code = dom.encode(value)
    assert np.ndim(code) == 0
    assert int(code) == expected
    assert dom.index(value) == expected


def test_encode_numpy_scalar():
    dom = Domain.range(5)
    assert int(dom.encode(np.int64(3))) == 3
    assert int(dom.encode(4)) == 4


@pytest.mark.parametrize("empty", [[], np.array([], dtype=np.int64), np.array([], dtype="<U1")])
def test_encode_empty_input(empty):
    codes = Domain("ab").encode(empty)
    assert codes.shape == (0,)
    assert codes.dtype == np.int64


def test_encode_tuple_of_values():
    assert Domain("abc").encode(("c", "c", "a")).tolist() == [2, 2, 0]


def test_encode_large_input_uses_distinct_values():
    dom = Domain(["lo", "mid", "hi"])
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 3, size=200_000)
    values = np.array(dom.labels)[codes]
    np.testing.assert_array_equal(dom.encode(values), codes)


# ----------------------------------------------------------------------------------- decode
def test_decode_returns_list_of_labels():
    dom = Domain(["x", "y", "z"])
    out = dom.decode(np.array([2, 2, 0], dtype=np.int32))
    assert out == ["z", "z", "x"]
    assert isinstance(out, list)
    assert dom.decode(np.array([1], dtype=np.uint8)) == ["y"]


def test_decode_scalar_and_empty():
    dom = Domain(["x", "y", "z"])
    assert dom.decode(1) == ["y"]
    assert dom.decode([]) == []


def test_decode_2d_is_flattened_in_c_order():
    dom = Domain(["x", "y", "z"])
    assert dom.decode(np.array([[0, 1], [2, 0]])) == ["x", "y", "z", "x"]


# ------------------------------------------------------------------------------- contains
def test_contains():
    dom = Domain(["a", 3, (1, 2)])
    assert "a" in dom
    assert 3 in dom
    assert (1, 2) in dom
    assert "b" not in dom
    assert "3" not in dom
    assert [1, 2] not in dom  # unhashable: False, not TypeError
    assert {"a": 1} not in dom


# -------------------------------------------------------------------------- equality, hash
def test_equality_and_hash():
    a = Domain(["a", "b", "c"])
    b = Domain("abc")
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    assert {a: 1}[b] == 1


def test_inequality():
    a = Domain("abc")
    assert a != Domain("cba")  # order matters
    assert a != Domain("ab")
    assert a != Domain(["a", "b", "C"])
    assert a != ("a", "b", "c")  # not a Domain
    assert a != ["a", "b", "c"]
    assert Domain.range(3) != Domain(["0", "1", "2"])


def test_repr_mentions_size():
    r = repr(Domain.range(50))
    assert "d=50" in r
    assert r.startswith("Domain(")


# ----------------------------------------------------------------------------------- errors
def test_domain_error_is_value_error_and_pldp_error():
    assert issubclass(DomainError, ValueError)
    assert issubclass(DomainError, pldp.PLDPError)


def test_empty_domain():
    with pytest.raises(DomainError, match="at least one label"):
        Domain([])
    with pytest.raises(DomainError):
        Domain(np.array([]))
    with pytest.raises(DomainError):
        Domain("")


def test_duplicate_labels_are_named():
    with pytest.raises(DomainError, match="distinct") as info:
        Domain(["flu", "cold", "flu", "hiv", "cold", "ok"])
    msg = str(info.value)
    assert "'flu'" in msg
    assert "'cold'" in msg
    assert "'hiv'" not in msg
    assert "'ok'" not in msg


def test_duplicate_by_equality_across_types():
    # 1 == 1.0 == True in Python, so these are the same label.
    with pytest.raises(DomainError, match="duplicated"):
        Domain([1, 1.0])
    with pytest.raises(DomainError, match="duplicated"):
        Domain([1, True])


def test_unhashable_label():
    with pytest.raises(DomainError, match="hashable") as info:
        Domain(["a", ["b"]])
    assert "['b']" in str(info.value)


def test_encode_unknown_values_are_all_listed():
    dom = Domain(["flu", "cold", "hiv"])
    with pytest.raises(DomainError, match="not in domain") as info:
        dom.encode(["flu", "ebola", "cold", "measles", "zika", "flu"])
    msg = str(info.value)
    for bad in ("ebola", "measles", "zika"):
        assert repr(bad) in msg
    for good in ("flu", "cold", "hiv"):
        assert repr(good) not in msg


def test_encode_unknown_values_in_numpy_int_array():
    dom = Domain.range(3)
    with pytest.raises(DomainError) as info:
        dom.encode(np.array([0, 5, 1, -1, 5]))
    msg = str(info.value)
    assert "5" in msg
    assert "-1" in msg


def test_encode_unknown_values_many_are_truncated_but_counted():
    dom = Domain("ab")
    with pytest.raises(DomainError) as info:
        dom.encode([f"u{i}" for i in range(12)])
    msg = str(info.value)
    assert "'u0'" in msg
    assert "7 more" in msg


def test_encode_unknown_value_mixed_types_named():
    dom = Domain(["a", 1])
    with pytest.raises(DomainError, match="not in domain") as info:
        dom.encode(["a", 1, "zz", 2])
    msg = str(info.value)
    assert "zz" in msg
    assert "2" in msg


def test_encode_unknown_value_mixed_types_message_format():
    # The unknowns are shown once each, with their own repr (not repr of a repr, not str(2)).
    dom = Domain(["a", 1])
    with pytest.raises(DomainError) as info:
        dom.encode(["a", 1, "zz", 2, "zz"])
    msg = str(info.value)
    assert "'zz'" in msg
    assert "\"'zz'\"" not in msg
    assert "'2'" not in msg
    assert re.search(r"(?<![\d'])2(?![\d'])", msg)
    assert msg.count("zz") == 1


@pytest.mark.parametrize("values", [["a", ["b"], 1], [{"x": 1}, "a"], [1, "a", {2}], [{"b": 1}, {"a": 2}]])
def test_encode_unhashable_in_mixed_input_is_domain_error(values):
    # a mixture that np.unique cannot sort, holding an unhashable value: DomainError, not TypeError
    with pytest.raises(DomainError, match="not in domain") as info:
        Domain(["a", "b", 1]).encode(values)
    unhashable = [v for v in values if not isinstance(v, (str, int))]
    assert any(repr(v) in str(info.value) for v in unhashable)


def test_encode_nested_lists_are_a_2d_batch():
    dom = Domain(["a", "b", "c"])
    assert dom.encode([["c"], ["a"]]).tolist() == [[2], [0]]
    assert dom.encode([["a", "b"], ["c", "c"]]).tolist() == [[0, 1], [2, 2]]
    with pytest.raises(DomainError, match="'zz'"):
        dom.encode([["a", "zz"], ["c", "b"]])


def test_encode_generator():
    assert Domain("abc").encode(v for v in "cab").tolist() == [2, 0, 1]


def test_encode_unknown_scalar_named():
    with pytest.raises(DomainError, match="'nope'"):
        Domain("abc").encode("nope")
    with pytest.raises(DomainError, match="'nope'"):
        Domain("abc").index("nope")


def test_index_unhashable_is_domain_error():
    with pytest.raises(DomainError):
        Domain("abc").index(["a"])


def test_encode_is_case_and_type_sensitive():
    dom = Domain(["a", 1])
    with pytest.raises(DomainError, match="'A'"):
        dom.encode(["A"])
    with pytest.raises(DomainError, match="'1'"):
        dom.encode(["1"])


@pytest.mark.parametrize("bad", [[3], [-1], [0, 7], [-2, 1]])
def test_decode_out_of_range(bad):
    dom = Domain("abc")
    with pytest.raises(DomainError, match=r"\[0, 3\)") as info:
        dom.decode(bad)
    shown = str(info.value).replace("[0, 3)", "")
    for b in bad:
        if not 0 <= b < 3:
            assert re.search(rf"(?<![\d-]){b}(?!\d)", shown), shown
        else:
            assert not re.search(rf"(?<![\d-]){b}(?!\d)", shown), shown  # valid indices are not listed


@pytest.mark.parametrize("bad", [[1.0], [0.5], np.array([True, False]), ["a"]])
def test_decode_non_integer_indices(bad):
    with pytest.raises(DomainError, match="integers"):
        Domain("abc").decode(bad)


def test_decode_names_offending_index_after_many_valid():
    dom = Domain.range(5)
    with pytest.raises(DomainError) as info:
        dom.decode([0, 1, 2, 3, 4, 0, 99])
    assert "99" in str(info.value)


def test_encode_tuple_labels():
    dom = Domain([(1, 2), (3, 4)])
    assert dom.index((3, 4)) == 1  # index() works
    assert dom.encode([(3, 4), (1, 2)]).tolist() == [1, 0]
