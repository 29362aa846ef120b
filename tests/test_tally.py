"""Tests of :class:`pldp.Tally`: validation, merging, serialisation."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pldp
from pldp import Tally, TallyError
from pldp.tally import TALLY_FORMAT


# ------------------------------------------------------------------------------- strategies
@st.composite
def direct_tallies(draw: st.DrawFn, d: int) -> Tally:
    counts = draw(st.lists(st.integers(0, 10**9), min_size=d, max_size=d))
    return Tally(sum(counts), np.array(counts, dtype=np.int64), "direct")


@st.composite
def unary_tallies(draw: st.DrawFn, d: int) -> Tally:
    n = draw(st.integers(0, 10**6))
    counts = draw(st.lists(st.integers(0, n), min_size=d, max_size=d))
    return Tally(n, counts, "unary")


@st.composite
def triples(draw: st.DrawFn) -> tuple[Tally, Tally, Tally]:
    d = draw(st.integers(1, 12))
    strat = draw(st.sampled_from([direct_tallies, unary_tallies]))
    return draw(strat(d)), draw(strat(d)), draw(strat(d))


# ----------------------------------------------------------------------------- construction
def test_basic_fields():
    t = Tally(6, [1, 2, 3])
    assert t.n == 6
    assert t.d == 3
    assert t.kind == "direct"
    assert t.counts.dtype == np.int64
    assert t.counts.tolist() == [1, 2, 3]
    np.testing.assert_allclose(t.frequencies, [1 / 6, 2 / 6, 3 / 6])


def test_integral_floats_accepted():
    t = Tally(3.0, np.array([1.0, 2.0]))
    assert t.n == 3 and isinstance(t.n, int)
    assert t.counts.dtype == np.int64
    assert t.counts.tolist() == [1, 2]


def test_numpy_integer_n():
    t = Tally(np.int32(4), np.array([4, 0], dtype=np.uint16))
    assert t.n == 4 and type(t.n) is int
    assert t.counts.dtype == np.int64


def test_empty_tally():
    t = Tally.empty(4)
    assert t.n == 0
    assert t.counts.tolist() == [0, 0, 0, 0]
    assert t.frequencies.tolist() == [0.0] * 4  # no NaN when n = 0
    assert Tally.empty(3, "unary").kind == "unary"
    with pytest.raises(pldp.PLDPError):
        Tally.empty(0)


def test_unary_counts_need_not_sum_to_n():
    t = Tally(5, [5, 3, 0, 5], "unary")
    assert t.counts.sum() == 13
    np.testing.assert_allclose(t.frequencies, [1.0, 0.6, 0.0, 1.0])


def test_counts_are_read_only_and_copied():
    src = np.array([1, 2, 3], dtype=np.int64)
    t = Tally(6, src)
    with pytest.raises(ValueError, match="read-only"):
        t.counts[0] = 5
    src[0] = 100  # the tally keeps its own copy
    assert t.counts.tolist() == [1, 2, 3]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.n = 7  # type: ignore[misc]


def test_merge_result_is_read_only():
    t = Tally(1, [1, 0]).merge(Tally(1, [0, 1]))
    with pytest.raises(ValueError, match="read-only"):
        t.counts[1] = 0


def test_not_hashable():
    with pytest.raises(TypeError):
        hash(Tally(1, [1]))


def test_equality():
    assert Tally(3, [1, 2]) == Tally(3.0, np.array([1, 2], dtype=np.int32))
    assert Tally(3, [1, 2]) != Tally(3, [2, 1])
    assert Tally(3, [1, 2], "direct") != Tally(3, [1, 2], "unary")
    assert Tally(3, [1, 2], "unary") != Tally(4, [1, 2], "unary")
    assert Tally(3, [1, 2]) != {"n": 3, "counts": [1, 2]}


# ---------------------------------------------------------------------------- bad counts
@pytest.mark.parametrize("kind", ["direct", "unary"])
def test_negative_counts_rejected(kind):
    with pytest.raises(TallyError, match="non-negative") as info:
        Tally(5, [3, -2, 4], kind)
    assert "-2" in str(info.value)


@pytest.mark.parametrize("kind", ["direct", "unary"])
def test_fractional_counts_rejected(kind):
    with pytest.raises(TallyError, match="whole numbers") as info:
        Tally(3, [1.5, 1.5], kind)
    assert "1.5" in str(info.value)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_counts_rejected(bad):
    with pytest.raises(TallyError) as info:
        Tally(3, [1.0, bad, 2.0], "unary")
    assert str(bad) in str(info.value)


@pytest.mark.parametrize(
    "counts", [np.array([True, False]), np.array(["1", "2"]), np.array([[1, 2], [0, 0]]), 3, [], np.array([1 + 1j])]
)
def test_malformed_counts_rejected(counts):
    with pytest.raises(TallyError):
        Tally(3, counts, "unary")


def test_direct_counts_must_sum_to_n():
    with pytest.raises(TallyError, match="sum to n=5") as info:
        Tally(5, [1, 2, 3])
    assert "6" in str(info.value)
    with pytest.raises(TallyError, match="sum to n=7"):
        Tally(7, [1, 2, 3])


def test_count_above_n_rejected():
    with pytest.raises(TallyError, match="exceeds n=2") as info:
        Tally(2, [3, 0], "unary")
    assert "3" in str(info.value)


@pytest.mark.parametrize("n", [-1, 2.5, "3", None, float("nan"), True])
def test_bad_n_rejected(n):
    with pytest.raises(TallyError) as info:
        Tally(n, [0, 0], "unary")
    assert repr(n) in str(info.value)


def test_tally_error_is_value_error():
    assert issubclass(TallyError, ValueError)
    assert issubclass(TallyError, pldp.PLDPError)


def test_count_error_message_shows_plain_numbers():
    with pytest.raises(TallyError) as info:
        Tally(5, [3, -1, 3])
    assert "np." not in str(info.value)


def test_unknown_kind_rejected():
    with pytest.raises(TallyError, match="drect"):
        Tally(2, [1, 1], "drect")


# ----------------------------------------------------------------------------------- merge
def test_merge_adds_n_and_counts():
    a = Tally(3, [1, 2, 0])
    b = Tally(4, [0, 1, 3])
    m = a.merge(b)
    assert m.n == 7
    assert m.counts.tolist() == [1, 3, 3]
    assert m.kind == "direct"
    assert a + b == m
    # inputs unchanged
    assert a.counts.tolist() == [1, 2, 0] and a.n == 3


def test_merge_with_empty_is_identity():
    a = Tally(3, [1, 2, 0], "unary")
    assert a.merge(Tally.empty(3, "unary")) == a
    assert Tally.empty(3, "unary").merge(a) == a


@settings(max_examples=60, deadline=None)
@given(tallies=triples())
def test_merge_associative_and_commutative(tallies):
    a, b, c = tallies
    assert a.merge(b) == b.merge(a)
    assert (a + b) + c == a + (b + c)
    total = a + b + c
    assert total.n == a.n + b.n + c.n
    np.testing.assert_array_equal(total.counts, a.counts + b.counts + c.counts)
    assert total.kind == a.kind


def test_merge_different_kinds_rejected():
    with pytest.raises(TallyError, match=r"unary.*direct"):
        Tally(2, [1, 1]).merge(Tally(2, [1, 1], "unary"))


def test_merge_different_lengths_rejected():
    with pytest.raises(TallyError, match=r"3 items.*2 items"):
        Tally(2, [1, 1]).merge(Tally(2, [1, 1, 0]))
    with pytest.raises(TallyError):
        Tally(2, [1, 1]) + Tally(2, [2])


@pytest.mark.parametrize("other", [[1, 1], {"n": 2, "counts": [1, 1]}, None])
def test_merge_non_tally_rejected(other):
    with pytest.raises(TallyError, match="only merge a Tally"):
        Tally(2, [1, 1]).merge(other)


# --------------------------------------------------------------------------- serialisation
@pytest.mark.parametrize(
    "tally", [Tally(6, [1, 2, 3]), Tally(5, [5, 0, 2, 4], "unary"), Tally.empty(3), Tally(10**12, [10**12, 0])]
)
def test_json_round_trip(tally):
    data = tally.to_dict()
    assert data["format"] == TALLY_FORMAT == "pldp.tally/2"
    text = json.dumps(data)
    back = Tally.from_dict(json.loads(text))
    assert back == tally
    assert back.kind == tally.kind
    assert back.counts.dtype == np.int64
    assert not back.counts.flags.writeable


def test_to_dict_contents_are_plain_python():
    data = Tally(3, np.array([1, 2], dtype=np.int64)).to_dict()
    assert data == {"format": "pldp.tally/2", "fingerprint": None, "kind": "direct", "n": 3, "counts": [1, 2]}
    assert all(type(c) is int for c in data["counts"])
    assert type(data["n"]) is int


@pytest.mark.parametrize("fmt", ["pldp.tally/3", "pldp.tally", None, 1])
def test_wrong_format_tag_rejected(fmt):
    data = Tally(3, [1, 2]).to_dict()
    data["format"] = fmt
    with pytest.raises(TallyError, match="format") as info:
        Tally.from_dict(data)
    assert repr(fmt) in str(info.value)


def test_missing_format_tag_rejected():
    data = Tally(3, [1, 2]).to_dict()
    del data["format"]
    with pytest.raises(TallyError, match="format"):
        Tally.from_dict(data)


@pytest.mark.parametrize("field", ["n", "counts", "kind"])
def test_missing_field_rejected(field):
    data = Tally(3, [1, 2]).to_dict()
    del data[field]
    with pytest.raises(TallyError, match=field):
        Tally.from_dict(data)


@pytest.mark.parametrize("data", [[1, 2], "pldp.tally/1", None])
def test_from_dict_non_dict_rejected(data):
    with pytest.raises(TallyError, match="expected a dict"):
        Tally.from_dict(data)


@pytest.mark.parametrize(
    ("field", "value"),
    [("counts", [1, -1, 3]), ("counts", [1.5, 1.5]), ("counts", [1, 1]), ("n", -3), ("counts", ["1", "2"])],
)
def test_from_dict_validates_contents(field, value):
    data = Tally(3, [1, 2]).to_dict()
    data[field] = value
    with pytest.raises(TallyError):
        Tally.from_dict(data)


def test_from_dict_nan_count_rejected():
    data = json.loads(json.dumps({"format": TALLY_FORMAT, "kind": "unary", "n": 3, "counts": [1, float("nan")]}))
    with pytest.raises(TallyError, match="nan"):
        Tally.from_dict(data)


# ------------------------------------------------------------------- mechanism tallies
def test_krr_tally_equals_bincount(rng):
    mech = pldp.KRR(1.0, 5)
    x = rng.integers(0, 5, size=5000)
    reports = mech.perturb(x, rng)
    t = mech.tally(reports)
    assert t.kind == "direct"
    assert t.n == 5000
    np.testing.assert_array_equal(t.counts, np.bincount(reports, minlength=5))


def test_krr_tally_has_zero_for_unreported_items():
    mech = pldp.KRR(1.0, 5)
    t = mech.tally(np.array([0, 0, 2]))
    assert t.counts.tolist() == [2, 0, 1, 0, 0]
    assert t.n == 3


def test_krr_tally_of_no_reports():
    mech = pldp.KRR(1.0, 5)
    assert mech.tally(np.array([], dtype=np.int64)) == Tally.empty(5, fingerprint=mech.fingerprint)
    assert mech.tally([]) == Tally.empty(5, fingerprint=mech.fingerprint)


def test_split_tallies_merge_to_full_tally(rng):
    mech = pldp.IPRR(pldp.ItemBudgets([0.1, 0.5, 1.0, None, None]))
    x = rng.integers(0, 5, size=10_001)
    reports = mech.perturb(x, rng)
    full = mech.tally(reports)
    half = reports.size // 2
    merged = mech.tally(reports[:half]).merge(mech.tally(reports[half:]))
    assert merged == full
    assert merged.n == 10_001
    # and via JSON, as if the halves came from two machines
    wire = [json.dumps(mech.tally(part).to_dict()) for part in np.array_split(reports, 7)]
    total = mech.tally([])
    for w in wire:
        total = total + Tally.from_dict(json.loads(w), source=mech)
    assert total == full


def test_simulated_tallies_merge(rng):
    mech = pldp.KRR(0.5, 4)
    a = mech.simulate([10, 20, 30, 40], rng)
    b = mech.simulate([1, 2, 3, 4], rng)
    m = a + b
    assert m.n == 110
    assert m.counts.sum() == 110
    assert pldp.estimate(mech, m).n == 110


def test_uint64_counts_beyond_int64_rejected():
    huge = np.array([2**63 + 3, 0], dtype=np.uint64)
    with pytest.raises(TallyError):
        Tally(5, huge, "unary")
