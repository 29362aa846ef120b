"""Free-text campaigns: a heavy-hitter protocol's spec, the Python client's reports of it, and discovery
from those reports (:class:`pldp.channel.HeavyNode`, :meth:`pldp.deploy.Spec.from_heavy`)."""

from __future__ import annotations

import json
import math
import unicodedata
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.channel import HeavyNode, check_claims, parse_node
from pldp.channel.hashed import SEEDS, hash_values
from pldp.channel.sampling import GRID
from pldp.client import Client
from pldp.deploy import Spec, spec_id
from pldp.errors import ParameterError, SpecError
from pldp.text import TRIMMED
from pldp.xxh32 import xxh32
from tests.deploy_cases import heavy_protocols
from tests.heavy_answers import population

PROTOCOLS = {p.name: p for p in heavy_protocols()}
#: Answers with what a device may send: accents to normalise, spaces to trim, text cut inside a character.
ANSWERS = ["café", " cafe\u0301 ", "naïve", "日本語テキスト", "a", "abcdefghijkl"]


def _spec(name: str, level: int = 0) -> Spec:
    return Spec.from_heavy(PROTOCOLS[name], question="In your own words?", level=level)


def _resigned(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its id recomputed: a tampering that keeps the id consistent."""
    data = {k: v for k, v in data.items() if k != "id"}
    data["id"] = spec_id(data)
    return data


class _Words:
    """A word source that returns a fixed list of words in order, and then seeded ones."""

    def __init__(self, first: list[int], seed: int) -> None:
        self.queue = list(first)
        self.rng = np.random.default_rng(seed)

    def __call__(self, n: int) -> np.ndarray:
        take, self.queue = self.queue[:n], self.queue[n:]
        more = self.rng.integers(0, GRID, size=n - len(take), dtype=np.uint64)
        return np.concatenate([np.array(take, dtype=np.uint64), more]).astype(np.uint32)


# ------------------------------------------------------------------------------------------ the spec
@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_a_free_text_spec_reads_back_and_rebuilds_its_protocol(name: str) -> None:
    protocol = PROTOCOLS[name]
    level = protocol.levels.size - 1
    spec = _spec(name, level)
    again = Spec.from_json(spec.to_json())
    assert again == spec and again.heavy_hitter().params() == protocol.params()
    assert spec.to_dict()["labels"] == {"text": protocol.max_bytes, "normalize": "NFC"} and spec.labels == []
    assert spec.root == protocol.node(level) and parse_node(spec.root.to_json()) == spec.root
    check = check_claims(spec.root)
    assert check.holds and check.ldp_epsilon == float(protocol.levels[level])
    with pytest.raises(SpecError, match="no frequency oracle"):
        spec.mechanism()
    with pytest.raises(SpecError, match="answers are listed"):
        Spec.from_mechanism(pldp.KRR(1.0, 3), question="q?").heavy_hitter()


def test_a_spec_whose_node_claims_less_than_its_parts_spend_is_refused() -> None:
    """The whole report's check is the one that fails: each part's claim holds, their sum does not."""
    data = _spec("TreeHist").to_dict()
    data["sampler"]["root"]["epsilon"] = 3.9  # the parts spend 2 + 2
    root = parse_node(data["sampler"]["root"])
    rows = root.claims()[0]
    assert all(r.holds for r in rows[:-1]) and not rows[-1].holds and rows[-1].realised > 3.9
    with pytest.raises(SpecError, match="privacy claim fails"):
        Spec.from_json(_resigned(data))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(labels={"text": 7, "normalize": "NFC"}), "labels of a free-text sampler"),
        (lambda d: d.update(labels=["a", "b"]), "labels of a free-text sampler"),
        (lambda d: d["oracle"].update(max_bytes=8), "not the node of the spec's heavy-hitter protocol"),
        (lambda d: d["oracle"].update(level=1), "not the node|level must be"),
        (lambda d: d["oracle"].update(name="KRR"), "no heavy-hitter protocol"),
        (lambda d: d.update(oracle=[1]), "oracle must be an object"),
        (lambda d: d["oracle"].update(epsilon=[["a"]]), "no heavy-hitter protocol"),
        (lambda d: d["oracle"].update(protocol="pem"), "no heavy-hitter protocol"),
        (lambda d: d["oracle"].update(epsilon=4), "not written as pldp writes"),
        (lambda d: d["oracle"].update(level=True), "oracle.level must be an integer"),
        (lambda d: d["sampler"]["root"]["parts"].pop(), "parts must be a list of 2"),
        (lambda d: d["sampler"]["root"].update(step_bits=3), "step_bits must be one of"),
        (lambda d: d["sampler"]["root"].update(protocol="sfp"), "lacks|unknown members"),
    ],
)
def test_a_tampered_free_text_spec_is_refused(edit: Any, message: str) -> None:
    data = _spec("TreeHist").to_dict()
    edit(data)
    with pytest.raises(SpecError, match=message):
        Spec.from_json(_resigned(data))


def test_the_heavy_node_refuses_parts_that_do_not_fit_its_items() -> None:
    tree = PROTOCOLS["TreeHist"]
    prefix, word = tree.node().parts
    sfp = PROTOCOLS["SFP"].node()
    with pytest.raises(SpecError, match="the word part must be a xxh32 hashed node"):
        HeavyNode("sfp", 8, (sfp.parts[0], sfp.parts[0]), 4.0, fragment_bytes=2, hash_bits=8)
    with pytest.raises(SpecError, match="the fragment part must be a toeplitz"):
        HeavyNode("sfp", 8, (word, word), 4.0, fragment_bytes=2, hash_bits=8)
    with pytest.raises(SpecError, match="must divide max_bytes"):
        HeavyNode("sfp", 7, sfp.parts, 4.0, fragment_bytes=2, hash_bits=8)
    assert HeavyNode("treehist", 6, (prefix, word), 4.0, step_bits=2) == tree.node()


# -------------------------------------------------------------------------------- the client's program
def _fingerprint(data: bytes) -> int:
    return xxh32(data) % (2**31 - 1)


def _reference(node: HeavyNode, answer: str, words: list[int]) -> dict[str, int]:
    """One report's payload from its words, written out from the wire format with the scalar XXH32: the
    group by rejection, then each part's seed and value of its item."""
    raw_bytes = unicodedata.normalize("NFC", answer).strip(TRIMMED).encode()[: node.max_bytes]
    row = raw_bytes + bytes(node.max_bytes - len(raw_bytes))
    g_count = node.groups
    w = iter(words)
    limit = GRID - GRID % g_count
    while (first := next(w)) >= limit:
        pass
    group = first % g_count
    word_fp = _fingerprint(row)
    out = {node.group_name: group}
    for name, part in zip(node.part_names, node.parts, strict=True):
        if name == "word":
            item = word_fp
        elif name == "fragment":
            b = node.fragment_bytes
            item = ((word_fp & ((1 << node.hash_bits) - 1)) << (8 * b)) + int.from_bytes(
                row[group * b : (group + 1) * b]
            )
        else:
            bits = (group + 1) * node.prefix_bits
            pre = bytearray(row[: math.ceil(bits / 8)])
            if bits % 8:
                pre[-1] &= (0xFF << (8 - bits % 8)) & 0xFF
            item = _fingerprint(bytes(pre))
        seed, coin = next(w) >> (32 - (SEEDS.bit_length() - 1)), next(w)
        value = (
            int(hash_values(item, seed, part.g, part.family)) if coin < part.keep else (coin - part.keep) // part.weight
        )
        key = "" if node.protocol == "pem" else f"{name}_"
        out[key + "seed"], out[key + "value"] = seed, value
    return out


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_the_client_runs_the_node_program_as_the_wire_format_writes_it(name: str) -> None:
    spec = _spec(name)
    node = spec.root
    assert isinstance(node, HeavyNode)
    per = 4 + 1 + 2 * len(node.parts)
    rng = np.random.default_rng(20261130)
    words = rng.integers(0, GRID, size=per * len(ANSWERS), dtype=np.uint64).astype(np.uint32)
    stream = iter(words.tolist())
    batch = Client(spec, random=lambda n: np.array([next(stream) for _ in range(n)], dtype=np.uint32)).reports(ANSWERS)
    for i, (answer, report) in enumerate(zip(ANSWERS, batch.reports(), strict=True)):
        expected = _reference(node, answer, words[i * per + 4 : (i + 1) * per].tolist())
        assert report["payload"] == expected, (name, answer)
        assert list(report["payload"]) == [c.name for c in node.columns()]


def test_a_refused_group_word_is_replaced_by_the_next_and_a_batch_writes_the_bytes_of_single_reports() -> None:
    """TreeHist over 6 bytes in 2-bit steps has 24 depths: a word of ``2**32 - 16`` or more is refused."""
    spec = _spec("TreeHist")
    assert spec.root.groups == 24
    refused = GRID - 1
    one = [1, 2, 3, 4, 7, 11, 12, 13, 14]  # the id, the depth's word, two words per part
    two = [5, 6, 7, 8, refused, 49, 21, 22, 23, 24]  # the depth's first word refused
    first = [*one, *two]
    batch = Client(spec, random=_Words(first, 1)).reports(["alpha", "beta", "gamma"])
    single = Client(spec, random=_Words(first, 1))
    one_by_one = [single.report(a) for a in ("alpha", "beta", "gamma")]
    assert [json.dumps(r) for r in batch.reports()] == [json.dumps(r) for r in one_by_one]
    payloads = [r["payload"] for r in batch.reports()]
    assert payloads[0]["depth"] == 7 % 24 and payloads[1]["depth"] == 49 % 24  # the refused word skipped
    assert payloads[1]["prefix_seed"] == 21 >> 1


@pytest.mark.parametrize(
    "answer, message",
    [("", "empty"), ("   ", "empty"), (3, "is a int"), (b"secret", "is a bytes"), ("secret\x00", "0x00")],
)
def test_the_client_refuses_an_answer_it_cannot_send_and_never_repeats_it(answer: Any, message: str) -> None:
    """Text only (bytes would skip the normalisation, and the JS client takes none), never empty or
    holding U+0000; the refusal never repeats the answer."""
    with pytest.raises(ParameterError, match=message) as err:
        Client(_spec("PEM"), random=_Words([], 2)).report(answer)
    assert "secret" not in str(err.value)


def test_a_free_text_spec_takes_no_level_choice() -> None:
    with pytest.raises(ParameterError, match="no level choice"):
        Client(_spec("PEM"), random=_Words([], 3)).report("café", level=1)


# ---------------------------------------------------------------------------------- discovery from them
@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_the_client_reports_discover_the_planted_answers(name: str) -> None:
    """30,000 devices through the spec's client: the protocol finds the two planted answers from the
    payload columns, each estimate within 4 standard errors of its share."""
    protocol = PROTOCOLS[name]
    level = protocol.levels.size - 1
    shares = {"spam": 0.4, "eggs": 0.3}
    answers = population(shares, 30_000, np.random.default_rng(11), tail=300)
    batch = Client(_spec(name, level), random=_Words([], 29)).reports(answers)
    reports = protocol.reports_from_columns(batch.columns, level)
    assert reports.shape == (30_000, 2 + 2 * len(protocol.parts)) and (reports[:, 0] == level).all()
    found = protocol.discover(reports, top=2)
    assert sorted(found.answers) == ["eggs", "spam"]
    for answer, f, se in zip(found.answers, found.estimate.frequencies, found.estimate.std_error, strict=True):
        assert abs(f - shares[answer]) <= 4 * se, (answer, f, shares[answer], se)


def test_the_heavy_node_and_oracle_shown_in_the_wire_format_are_what_pldp_writes() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "wire-format.md").read_text(encoding="utf-8")
    spec = Spec.from_heavy(pldp.TreeHist(4.0, max_bytes=16), question="Which app do you use most?")
    node = text.split("### `heavy` (heavy hitters of free text", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    assert json.loads(node) == spec.root.to_json()
    oracle = text.split("### 1.6 The labels: free text", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    assert json.loads(oracle) == spec.oracle_params


def test_the_free_text_labels_take_an_integer_not_true() -> None:
    """JSON's ``true`` equals 1 in Python: a spec keeping one byte must still write the integer."""
    data = Spec.from_heavy(pldp.PEM(4.0, max_bytes=1), question="a letter?").to_dict()
    data["labels"]["text"] = True
    with pytest.raises(SpecError, match="labels of a free-text sampler"):
        Spec.from_json(_resigned(data))
