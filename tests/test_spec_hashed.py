"""Specs whose answers are free text hashed to ``d`` buckets (``docs/wire-format.md`` §1.5).

``"labels": {"hashed": d, "hash": "xxh32", "normalize": "NFC"}`` is opt-in
(``Spec.from_mechanism(..., labels="hashed")``): an answer is any text, normalised (NFC, then ASCII
space, tab, CR and LF trimmed), refused when empty or over 256 UTF-8 bytes, and hashed to the bucket
``XXH32(UTF-8, seed 0) mod d``; the oracle estimates per bucket (its labels ``{"range": d}``), and
:func:`~pldp.deploy.labels.bucket_names` names the buckets by candidate answers.
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
from pldp.deploy.estimates import attributes_json, estimate_text
from pldp.deploy.labels import HashedAnswers, bucket_names, normalize_text, text_bucket
from pldp.errors import ParameterError, SpecError
from pldp.protocols import MPLDP
from pldp.xxh32 import xxh32
from tests.deploy_cases import words

D = 1000
FORM = {"hashed": D, "hash": "xxh32", "normalize": "NFC"}


@pytest.fixture(scope="module")
def spec() -> Spec:
    return Spec.from_mechanism(pldp.OLH(1.0, D), question="Your favourite word?", labels="hashed")


# the specification's vectors (xxHash's README and python-xxhash's): seed 0 unless said
VECTORS = [
    (b"", 0, 0x02CC5D05),
    (b"a", 0, 0x550D7456),
    (b"abc", 0, 0x32D153FF),
    (b"Nobody inspects the spammish repetition", 0, 0xE2293B2F),  # 39 bytes: the 16-byte stripes
]


@pytest.mark.parametrize(("data", "seed", "expected"), VECTORS)
def test_xxh32_of_bytes_matches_the_published_vectors(data: bytes, seed: int, expected: int) -> None:
    assert xxh32(data, seed) == expected


def test_xxh32_of_four_bytes_is_the_samplers_item_hash() -> None:
    from pldp.channel.hashed import xxh32_index

    rng = np.random.default_rng(32)
    items, seeds = rng.integers(0, 2**32, 50, dtype=np.uint64), rng.integers(0, 2**32, 50, dtype=np.uint64)
    ours = [xxh32(int(x).to_bytes(4, "little"), int(s)) for x, s in zip(items, seeds, strict=True)]
    assert ours == xxh32_index(items, seeds).tolist()


def test_xxh32_matches_the_xxhash_package_on_every_tail_length() -> None:
    """Every tail length, zero to four stripes, each with its own seed: the 80 digests' SHA-256 is
    pinned from the ``xxhash`` package (3.8.2, the C reference implementation), so no optional
    dependency is needed to run the comparison."""
    import hashlib

    digests = [xxh32(bytes((i * 37 + 11 * n) % 256 for i in range(n)), n * 7919) for n in range(80)]
    packed = b"".join(v.to_bytes(4, "little") for v in digests)
    assert hashlib.sha256(packed).hexdigest() == "009cfb6b9480f2f56917bf655152606e61ad07f1b1bb5a39bfb49fe53f3644a6"


def test_the_hashed_form_round_trips_and_leaves_the_list_the_default(spec: Spec) -> None:
    data = spec.to_dict()
    assert data["labels"] == FORM and data["oracle"]["labels"] == {"range": D}
    again = Spec.from_json(spec.to_json(indent=None))
    assert again == spec and again.id == spec_id(data) == spec.id
    assert spec.labels == HashedAnswers(D) and spec.labels != pldp.deploy.labels.AnswerRange(D)
    assert spec.labels[-1] == str(D - 1)  # the buckets are named by their numbers
    ranged = Spec.from_mechanism(pldp.OLH(1.0, D), question="Your favourite word?", labels="range")
    listed = Spec.from_mechanism(pldp.OLH(1.0, D), question="Your favourite word?")
    assert len({spec.id, ranged.id, listed.id}) == 3 and isinstance(listed.to_dict()["labels"], list)


def test_normalisation_composes_and_trims_ascii_white_space_only() -> None:
    assert normalize_text("cafe\u0301") == normalize_text("café") == "café"
    assert normalize_text(" \t\r\ncafé \n") == "café"
    assert normalize_text("\u00a0café\u3000") == "\u00a0café\u3000"  # NBSP, ideographic space: kept
    assert text_bucket("Cafe\u0301", D) == text_bucket("Café", D)
    assert text_bucket("café", D) == xxh32("café".encode()) % D


@pytest.mark.parametrize(
    ("text", "why"),
    [("", "empty"), (" \t\r\n", "empty"), ("é" * 129, "258 UTF-8 bytes, over the 256"), ("\ud800", "lone surrogate"),
     (3, "a string"), (b"abc", "a string"), (None, "a string")],
)  # fmt: skip
def test_text_that_cannot_be_hashed_is_refused(text: Any, why: str) -> None:
    with pytest.raises(ParameterError, match=why):
        text_bucket(text, D)


def test_the_byte_bound_is_on_the_normalised_text() -> None:
    assert normalize_text(" " + "a" * 256 + " ") == "a" * 256  # 256 bytes once trimmed
    assert normalize_text("e\u0301" * 128) == "é" * 128  # 384 bytes given, 256 once composed
    with pytest.raises(ParameterError, match="257 UTF-8 bytes"):
        normalize_text("a" * 257)


def test_a_client_takes_text_only(spec: Spec) -> None:
    a = Client(Spec.from_json(spec.to_json(), check_oracle=False), random=words(5)).reports(["café", " tea", "🍵"])
    b = Client(spec, random=words(5)).reports(np.array(["cafe\u0301", "tea\n", "🍵"]))
    assert a.to_json() == b.to_json()
    client = Client(spec, random=words(5))
    for bad in (17, np.int64(17), ["café", 3], "  "):
        with pytest.raises(ParameterError, match=r"a string|empty"):
            client.reports(bad if isinstance(bad, list) else [bad])


def test_mpldp_takes_the_hashed_form_per_attribute() -> None:
    mpldp = MPLDP([3, 4], [1.0, 2.0])
    spec = Spec.from_mechanism(mpldp, question=["first?", "second?"], labels=[["a", "b", "c"], "hashed"])
    assert spec.to_dict()["labels"] == [["a", "b", "c"], {"hashed": 4, "hash": "xxh32", "normalize": "NFC"}]
    assert Spec.from_json(spec.to_json()) == spec
    a = Client(spec, random=words(2)).report(["b", "hello"], levels=[0, 1])
    assert a == Client(spec, random=words(2)).report([1, " hello "], levels=[0, 1])
    with pytest.raises(ParameterError, match="a string"):
        Client(spec, random=words(2)).report(["b", text_bucket("hello", 4)], levels=[0, 1])


def _resigned(spec: Spec, labels: Any) -> str:
    data = spec.to_dict()
    data["labels"] = labels
    data["id"] = spec_id(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("labels", "message"),
    [({**FORM, "hashed": 1}, "with d an integer >= 2"), ({**FORM, "hashed": True}, "with d an integer >= 2"),
     ({**FORM, "hashed": "9"}, "with d an integer >= 2"), ({"hashed": D}, "with d an integer >= 2"),
     ({**FORM, "max_bytes": 256}, "with d an integer >= 2"), ({**FORM, "range": D}, "with d an integer >= 2"),
     ({**FORM, "hash": "xxh64"}, r"labels\.hash must be 'xxh32'"),
     ({**FORM, "normalize": "NFKC"}, r"labels\.normalize must be 'NFC'"),
     ({**FORM, "hashed": D + 1}, "labels has 1001 answers but the sampler takes 1000")],
)  # fmt: skip
def test_any_other_hashed_form_is_refused_naming_the_path(spec: Spec, labels: Any, message: str) -> None:
    with pytest.raises(SpecError, match=rf"^{message}" if message.startswith("labels") else message):
        Spec.from_json(_resigned(spec, labels))


def test_buckets_are_named_by_candidates_collisions_and_all(spec: Spec) -> None:
    candidates = ["café", "cafe\u0301", "tea", "", "  ", "tea"]
    names = bucket_names(spec.labels, candidates)
    assert names[text_bucket("café", D)][:2] == ["café", "cafe\u0301"]  # one answer, two spellings
    assert sum(map(len, names.values())) == 3  # blanks skipped, the repeat counted once
    two = HashedAnswers(2)  # two buckets: every candidate collides with some other
    many = bucket_names(two, [f"w{i}" for i in range(10)])
    assert sorted(c for v in many.values() for c in v) == sorted(f"w{i}" for i in range(10))
    with pytest.raises(ParameterError, match="hashed form"):
        bucket_names(pldp.deploy.labels.AnswerRange(D), ["a"])


def test_the_estimate_is_per_bucket_and_its_text_names_them(spec: Spec) -> None:
    answers = ["café"] * 300 + ["tea"] * 100 + [f"other {i}" for i in range(100)]
    tally = decode(spec, Client(spec, random=words(8)).reports(answers))
    out = {"campaign": spec.id, "n": 500, "method": "unbiased", "level": 0.9}
    out["attributes"] = attributes_json(spec, pldp.estimate(spec.mechanism(), tally), 0.9)
    assert len(out["attributes"][0]["labels"]) == D
    text = estimate_text(out, [bucket_names(spec.labels, ["café", "cafe\u0301", "tea"])])
    cafe = next(line for line in text.splitlines() if line.strip().startswith(f"{text_bucket('café', D)} "))
    assert cafe.endswith("  café, cafe\u0301")
    assert estimate_text(out).count("café") == 0


def test_the_claims_name_the_buckets_by_number() -> None:
    iprr = Spec.from_mechanism(pldp.IPRR(pldp.ItemBudgets.from_array([0.5, 1.0, 2.0])), question="q", labels="hashed")
    words_of = [claim_words(iprr.to_dict(), row) for row in verify(iprr).rows]
    assert ("every report", "a report of bucket 2") in words_of
