"""Every public entry point rejects bad input with a pldp exception naming the bad value."""

from __future__ import annotations

import numpy as np
import pytest

import pldp
from pldp import (
    IPRR,
    KRR,
    URR,
    BudgetError,
    Domain,
    DomainError,
    EstimationError,
    ItemBudgets,
    ParameterError,
    PLDPError,
    Tally,
    TallyError,
)


def _raises(exc: type[Exception], fn, *names: str) -> str:
    """Call ``fn``; require ``exc`` (a PLDPError and ValueError) whose message holds ``names``."""
    with pytest.raises(exc) as info:
        fn()
    err = info.value
    assert isinstance(err, PLDPError)
    assert isinstance(err, ValueError)
    msg = str(err)
    for name in names:
        assert name in msg, f"{name!r} not in {msg!r}"
    return msg


# ------------------------------------------------------------------------ exception classes
@pytest.mark.parametrize("cls", [ParameterError, DomainError, BudgetError, TallyError, EstimationError])
def test_exception_hierarchy(cls):
    assert issubclass(cls, PLDPError)
    assert issubclass(cls, ValueError)
    assert cls.__module__ == "pldp.errors"


# ---------------------------------------------------------------------------------- KRR
@pytest.mark.parametrize(
    ("eps", "shown"),
    [
        (0, "0"),
        (0.0, "0.0"),
        (-1.0, "-1.0"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (-float("inf"), "-inf"),
        ("abc", "'abc'"),
        (None, "None"),
        ([1.0], "[1.0]"),
    ],
)
def test_krr_bad_epsilon(eps, shown):
    msg = _raises(ParameterError, lambda: KRR(eps, 5), "epsilon", shown)
    assert "got" in msg


@pytest.mark.parametrize(
    ("d", "shown", "what"),
    [(1, "1", ">= 2"), (0, "0", ">= 2"), (-4, "-4", ">= 2"), (2.5, "2.5", "integer"), ("5", "'5'", "integer")],
)
def test_krr_bad_d(d, shown, what):
    _raises(ParameterError, lambda: KRR(1.0, d), "d must", what, shown)


@pytest.mark.parametrize("d", [True, None, [5]])
def test_krr_d_of_wrong_type(d):
    _raises(ParameterError, lambda: KRR(1.0, d), "integer", repr(d))


def test_krr_accepts_integral_float_d_and_domain():
    assert KRR(1.0, 3.0).d == 3
    assert KRR(1.0, Domain("xyz")).domain == Domain("xyz")


def test_krr_single_label_domain():
    _raises(BudgetError, lambda: KRR(1.0, Domain(["only"])), "at least 2", "1")


def test_krr_epsilon_above_overflow_limit():
    _raises(BudgetError, lambda: KRR(701.0, 3), "701", "overflow")
    assert KRR(700.0, 3).privacy().holds  # the limit itself is accepted


@pytest.mark.parametrize("eps", ["1.0", True, np.bool_(True), b"1", 1 + 0j])
def test_krr_rejects_numeric_string_and_bool_epsilon(eps):
    # a budget is a real number: no numeric strings, no booleans
    _raises(ParameterError, lambda: KRR(eps, 5), "epsilon", repr(eps))
    _raises(ParameterError, lambda: URR(eps, [True, False]), "epsilon", repr(eps))
    _raises(ParameterError, lambda: ItemBudgets.uniform(eps, 3), "epsilon", repr(eps))


@pytest.mark.parametrize("eps", [np.float32(0.5), np.int64(2), 3, 1.5])
def test_krr_accepts_real_number_epsilon(eps):
    assert KRR(eps, 3).epsilon == float(eps)


# ---------------------------------------------------------------------------------- URR
@pytest.mark.parametrize("mask", [[1, 0, 1], np.array([1.0, 0.0, 1.0]), ["a", "b"], np.array([[True, False]]), True])
def test_urr_non_boolean_mask(mask):
    _raises(ParameterError, lambda: URR(1.0, mask), "sensitive", "boolean")


def test_urr_non_boolean_mask_names_dtype_and_shape():
    _raises(ParameterError, lambda: URR(1.0, [1, 0, 1]), "int64")
    _raises(ParameterError, lambda: URR(1.0, np.array([[True, False]])), "(1, 2)")


def test_urr_no_sensitive_item():
    _raises(BudgetError, lambda: URR(1.0, [False, False, False]), "URR", "at least one sensitive", "in the clear")


def test_urr_mask_domain_length_mismatch():
    _raises(BudgetError, lambda: URR(1.0, [True, False], Domain("abc")), "3 labels", "2 budgets")


@pytest.mark.parametrize("eps", [0, -2.0, float("nan"), "x"])
def test_urr_bad_epsilon(eps):
    _raises(ParameterError, lambda: URR(eps, [True, False]), "epsilon", repr(eps))


def test_urr_from_labels_unknown_label():
    _raises(DomainError, lambda: URR.from_labels(1.0, Domain(["hiv", "flu"]), ["hiv", "ebola"]), "'ebola'")


def test_urr_valid_construction():
    m = URR(1.0, [True, False, True])
    assert m.budgets.n_sensitive == 2
    assert URR.from_labels(1.0, Domain(["hiv", "flu"]), ["hiv"]).budgets.sensitive.tolist() == [True, False]


# --------------------------------------------------------------------------------- IPRR
def test_iprr_all_non_sensitive():
    msg = _raises(BudgetError, lambda: IPRR(ItemBudgets([None, np.inf, None])), "IPRR", "sensitive")
    assert "in the clear" in msg


@pytest.mark.parametrize("big", [700.5, 701.0, 1e6])
def test_iprr_budget_above_700(big):
    _raises(BudgetError, lambda: IPRR(ItemBudgets([1.0, big, None])), "700", repr(big))


def test_iprr_needs_item_budgets():
    _raises(BudgetError, lambda: IPRR([0.1, 0.5]), "ItemBudgets", "list")
    _raises(BudgetError, lambda: IPRR(None), "ItemBudgets", "NoneType")


def test_iprr_single_item():
    _raises(BudgetError, lambda: IPRR(ItemBudgets([1.0])), "at least 2")


def test_iprr_bad_budgets_propagate_from_item_budgets():
    _raises(BudgetError, lambda: IPRR(ItemBudgets([1.0, -1.0])), "-1.0")


# ------------------------------------------------------------------------- perturb/tally
MECHS = [
    pytest.param(lambda: KRR(1.0, 5), id="KRR"),
    pytest.param(lambda: URR(1.0, [True, True, False, False, True]), id="URR"),
    pytest.param(lambda: IPRR(ItemBudgets([0.1, 0.5, 1.0, None, None])), id="IPRR"),
]


@pytest.mark.parametrize("make", MECHS)
@pytest.mark.parametrize(
    ("bad", "named"),
    [
        ([0, 5, 1], ["5"]),
        ([-1, 2], ["-1"]),
        ([9, 0, -3, 9, 7], ["-3", "7", "9"]),
        ([0, 2**62], [str(2**62)]),  # tally must not try to count up to it
        (np.array([1, 7], dtype=np.uint64), ["7"]),  # a dtype np.bincount does not take
    ],
)
def test_out_of_domain_indices(make, bad, named, rng):
    mech = make()
    msg = _raises(DomainError, lambda: mech.perturb(np.array(bad), rng), "[0, 5)", *named)
    assert "out of domain" in msg
    _raises(DomainError, lambda: mech.tally(np.array(bad)), "[0, 5)", *named)
    # valid indices are not listed among the offenders
    assert " 0," not in msg.split("out of domain:")[1]


@pytest.mark.parametrize("make", MECHS)
@pytest.mark.parametrize(
    ("bad", "dtype"),
    [(np.array([0.0, 1.0]), "float64"), ([0.5, 1], "float64"), (np.array([True]), "bool"), (["a"], "<U1")],
)
def test_non_integer_indices(make, bad, dtype, rng):
    mech = make()
    _raises(DomainError, lambda: mech.perturb(bad, rng), "integer item indices", dtype)
    _raises(DomainError, lambda: mech.tally(bad), "integer item indices", dtype)


def test_out_of_domain_many_offenders_truncated(rng):
    mech = KRR(1.0, 3)
    msg = _raises(DomainError, lambda: mech.tally(np.arange(3, 20)), "3, 4, 5")
    assert "more" in msg


def test_valid_indices_accepted(rng):
    mech = KRR(1.0, 5)
    out = mech.perturb(np.array([0, 4, 2], dtype=np.uint8), rng)
    assert out.shape == (3,)
    assert np.all((out >= 0) & (out < 5))


# ------------------------------------------------------------------------------ simulate
@pytest.mark.parametrize("make", MECHS)
@pytest.mark.parametrize(
    ("counts", "names"),
    [
        ([10, -1, 0, 0, 0], ["non-negative", "-1"]),
        ([10, 2.5, 0, 0, 0], ["whole numbers", "2.5"]),
        ([10, np.nan, 0, 0, 0], ["whole numbers", "nan"]),
        ([10, 0, 0, 0], ["length 4", "expected 5"]),
        ([10, 0, 0, 0, 0, 0], ["length 6", "expected 5"]),
        ([[1, 2, 3, 4, 5]], ["one-dimensional"]),
        (["1", "2", "3", "4", "5"], ["integers"]),
    ],
)
def test_simulate_bad_counts(make, counts, names, rng):
    mech = make()
    _raises(TallyError, lambda: mech.simulate(counts, rng), "true_counts", *names)


# ------------------------------------------------------------------------------ estimate
@pytest.fixture
def krr_and_tally(rng):
    mech = KRR(1.0, 5)
    return mech, mech.simulate([100, 50, 30, 15, 5], rng)


def test_estimate_unknown_method(krr_and_tally):
    mech, tally = krr_and_tally
    _raises(EstimationError, lambda: pldp.estimate(mech, tally, "bayes"), "'bayes'", "unbiased")


def test_estimate_unknown_solver(krr_and_tally):
    mech, tally = krr_and_tally
    _raises(EstimationError, lambda: pldp.estimate(mech, tally, "mle", solver="newton"), "'newton'")


@pytest.mark.parametrize("d", [4, 6])
def test_estimate_tally_of_wrong_length(krr_and_tally, d):
    mech, _ = krr_and_tally
    tally = Tally(d, np.ones(d, dtype=int))
    _raises(EstimationError, lambda: pldp.estimate(mech, tally), f"over {d} items", "d=5")


def test_estimate_tally_of_wrong_kind(krr_and_tally):
    mech, _ = krr_and_tally
    tally = Tally(3, [1, 2, 0, 3, 1], "unary")
    _raises(EstimationError, lambda: pldp.estimate(mech, tally), "unary", "direct")


@pytest.mark.parametrize("method", ["unbiased", "norm_sub", "mle"])
def test_estimate_empty_tally(krr_and_tally, method):
    mech, _ = krr_and_tally
    _raises(EstimationError, lambda: pldp.estimate(mech, Tally.empty(5), method), "n = 0")


@pytest.mark.parametrize(
    ("obj", "name"), [("KRR", "str"), (None, "NoneType"), (ItemBudgets.uniform(1.0, 5), "ItemBudgets")]
)
def test_estimate_non_mechanism(krr_and_tally, obj, name):
    _, tally = krr_and_tally
    _raises(EstimationError, lambda: pldp.estimate(obj, tally), "mechanism", name)


@pytest.mark.parametrize(("obj", "name"), [({"n": 200}, "dict"), (np.zeros(5), "ndarray")])
def test_estimate_non_tally(krr_and_tally, obj, name):
    mech, _ = krr_and_tally
    _raises(EstimationError, lambda: pldp.estimate(mech, obj), "Tally", name)


# ----------------------------------------------------------------------------- Estimate.ci
@pytest.mark.parametrize("level", [0, 0.0, 1, 1.0, -0.1, 1.5, float("nan"), float("inf"), "x", None])
def test_ci_level_outside_unit_interval(krr_and_tally, level):
    mech, tally = krr_and_tally
    est = pldp.estimate(mech, tally)
    _raises(ParameterError, lambda: est.ci(level), "level", repr(level))


@pytest.mark.parametrize("method", ["unbiased", "norm_sub", "mle"])
def test_ci_valid_level(krr_and_tally, method):
    mech, tally = krr_and_tally
    est = pldp.estimate(mech, tally, method)
    lo90, hi90 = est.ci(0.9)
    lo99, hi99 = est.ci(0.99)
    assert np.all(lo99 <= lo90) and np.all(hi90 <= hi99)
    assert np.all(lo90 <= est.frequencies + 1e-12) and np.all(est.frequencies <= hi90 + 1e-12)
