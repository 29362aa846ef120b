"""Specs whose answers are the integers ``0 .. d-1``: ``"labels": {"range": d}`` (``docs/wire-format.md`` §1).

The range form is opt-in (``Spec.from_mechanism(..., labels="range")``): the spec and its oracle
keep ``{"range": d}`` (a few hundred bytes over 10^4 items, not d strings), it reads back to the
same id, a client takes an answer as its index or its decimal string, the estimate names the
answers by those strings, and any other object where labels go is refused, naming the path.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.client import Client
from pldp.deploy import Spec, decode, spec_id, verify
from pldp.deploy.claimwords import claim_words
from pldp.deploy.labels import AnswerRange, label_index
from pldp.errors import ParameterError, SpecError
from pldp.protocols import MPLDP
from tests.deploy_cases import words

D = 10_000


@pytest.fixture(scope="module")
def olh() -> pldp.OLH:
    return pldp.OLH(1.0, D)


@pytest.fixture(scope="module")
def spec(olh: pldp.OLH) -> Spec:
    return Spec.from_mechanism(olh, question="Which item?", labels="range")


def test_the_range_form_round_trips_to_the_same_id(olh: pldp.OLH, spec: Spec) -> None:
    data = spec.to_dict()
    assert data["labels"] == {"range": D} and data["oracle"]["labels"] == {"range": D}
    assert len(spec.to_json()) < 1_000  # the list form holds 10,000 strings
    assert spec.id == spec_id(data)
    again = Spec.from_json(spec.to_json(indent=None))
    assert again == spec and again.to_json() == spec.to_json()
    assert spec.mechanism().fingerprint == spec.id
    assert spec.labels == AnswerRange(D) and (spec.labels[0], spec.labels[-1]) == ("0", str(D - 1))
    # the default is still the list (its oracle relabelled to the strings): another spec
    listed = Spec.from_mechanism(olh, question="Which item?")
    assert listed.to_dict()["labels"] == [str(i) for i in range(D)] and listed.id != spec.id
    assert list(listed.labels) == list(spec.labels)


def test_the_oracle_of_other_labels_is_relabelled_to_the_range() -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, pldp.Domain(["x", "y", "z"])), question="q", labels="range")
    assert spec.oracle_params["labels"] == {"range": 3} and list(spec.labels) == ["0", "1", "2"]
    assert list(spec.mechanism().domain.labels) == [0, 1, 2]


def test_a_client_takes_the_index_or_its_decimal_string(spec: Spec) -> None:
    a = Client(Spec.from_json(spec.to_json(), check_oracle=False), random=words(5)).reports(["17", 9_999, "0"])
    b = Client(spec, random=words(5)).reports(np.array([17, 9_999, 0]))
    assert a.to_json() == b.to_json()
    client = Client(spec, random=words(5))
    for bad in ("10000", "017", "-1", " 1", "1.0", "+1", "１"):
        with pytest.raises(ParameterError, match="is not one of the spec's answers"):
            client.report(bad)
    index = label_index(spec.labels)
    assert index["9999"] == 9_999 and "10000" not in index and len(index) == D


def test_the_estimate_and_the_claims_name_the_answers_by_their_integers(spec: Spec) -> None:
    from pldp.deploy.estimates import attributes_json

    rng = np.random.default_rng(8)
    tally = decode(spec, Client(spec, random=words(8)).reports(rng.integers(0, D, 500)))
    (part,) = attributes_json(spec, pldp.estimate(spec.mechanism(), tally), 0.9)
    assert part["labels"][:3] == ["0", "1", "2"] and len(part["labels"]) == D
    krr = Spec.from_mechanism(pldp.IPRR(pldp.ItemBudgets.from_array([0.5, 1.0, 2.0])), question="q", labels="range")
    words_of = [claim_words(krr.to_dict(), row) for row in verify(krr).rows]
    assert ("every report", "a report of “2”") in words_of


def test_mpldp_takes_the_range_per_attribute() -> None:
    mpldp = MPLDP([3, 4], [1.0, 2.0])
    spec = Spec.from_mechanism(mpldp, question=["first?", "second?"], labels=[["a", "b", "c"], "range"])
    assert spec.to_dict()["labels"] == [["a", "b", "c"], {"range": 4}]
    assert Spec.from_json(spec.to_json()) == spec
    every = Spec.from_mechanism(mpldp, question=["first?", "second?"], labels="range")
    assert every.to_dict()["labels"] == [{"range": 3}, {"range": 4}]
    a = Client(spec, random=words(2)).report(["b", "3"], levels=[0, 1])
    assert a == Client(spec, random=words(2)).report([1, 3], levels=[0, 1])


def _resigned(spec: Spec, labels: Any) -> str:
    data = spec.to_dict()
    data["labels"] = labels
    data["id"] = spec_id(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    "labels",
    [{"range": -1}, {"range": 1}, {"range": 0}, {"range": 2.5}, {"range": True}, {"range": "3"}, {"range": None},
     {"range": 3, "extra": 1}, {"d": 3}, {}],
)  # fmt: skip
def test_any_other_object_is_refused_naming_the_path(labels: Any) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="q", labels="range")
    with pytest.raises(SpecError, match=r'^labels must be a list of labels or \{"range": d\} with d an integer >= 2'):
        Spec.from_json(_resigned(spec, labels))


def test_the_range_must_be_the_samplers_count() -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="q", labels="range")
    for d in (2, 4, 2**40):
        with pytest.raises(SpecError, match=r"^labels has \d+ answers but the sampler takes 3"):
            Spec.from_json(_resigned(spec, {"range": d}))
    beyond = spec.to_dict()  # an integer beyond 2**53 has no JCS text: no id, refused as such
    beyond["labels"] = {"range": 10**400}
    with pytest.raises(SpecError, match="its id cannot be computed over: integer 1000"):
        Spec.from_json(json.dumps(beyond))
    mpldp = Spec.from_mechanism(MPLDP([3, 4], [1.0, 2.0]), question=["a?", "b?"], labels="range")
    with pytest.raises(SpecError, match=r"^labels\[1\] has 5 answers but attribute 1 takes 4"):
        Spec.from_json(_resigned(mpldp, [{"range": 3}, {"range": 5}]))
    with pytest.raises(SpecError, match=r"^labels\[0\] must be a list of labels or \{\"range\": d\}"):
        Spec.from_json(_resigned(mpldp, [{"range": 3, "x": 0}, {"range": 4}]))
    with pytest.raises(SpecError, match='labels must be a list of labels or "range"'):
        Spec.from_mechanism(pldp.KRR(1.0, 3), question="q", labels="ranges")


def test_answer_range_reads_as_the_list_of_decimal_strings() -> None:
    labels = AnswerRange(12)
    assert list(labels) == [str(i) for i in range(12)] and labels[2:5] == ["2", "3", "4"]
    assert labels.index("11") == 11 and labels.count("3") == 1 and "12" not in labels and 3 not in labels
    with pytest.raises(IndexError):
        labels[12]
    with pytest.raises(ValueError, match=r"is not one of the answers 0\.\.11"):
        labels.index("12")
