"""The JS client's heavy-hitter node (clients/js/client-heavy.mjs) against the Python client, byte for byte.

For a free-text spec of each protocol (:meth:`pldp.deploy.Spec.from_heavy`: PEM, TreeHist, SFP, and a
protocol of two budget levels at its second), both clients are fed the same words and the same answers
(non-ASCII, composed and decomposed, cut inside a character, padded with white space); their reports
must be the same bytes, also where the group's rejection refuses a word, and the JS ``verify`` must
find the rows :func:`pldp.deploy.verify` finds. The JS client refuses what the Python one refuses: bad
answers, a spec whose node claims less than its parts spend, labels that are not the free-text form.
The JS side runs in Node through ``clients/js/test/driver.mjs`` (as ``tests/test_js_client.py``
drives it); the module is skipped without Node.js >= 20 on PATH, and fails instead under
``PLDP_NODE_TESTS=required``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.channel.heavy import HeavyNode
from pldp.channel.sampling import GRID
from pldp.client import Client
from pldp.deploy import Spec, spec_id
from pldp.errors import ParameterError, SpecError
from tests.deploy_cases import heavy_protocols
from tests.test_js_client import _node, _python_lines, _same_rows

pytestmark = pytest.mark.usefixtures("node")

#: Each protocol's spec: PEM (G = 8 groups), TreeHist (G = 24 depths), SFP (G = 4 positions), and PEM
#: of two levels at its second (G = 6): the first word a group's rejection refuses for G = 24 and 6 is
#: ``2**32 - (2**32 mod G)``, 2**32 - 16 and 2**32 - 4.
SPECS = {
    "pem": lambda: Spec.from_heavy(pldp.PEM(4.0, max_bytes=8), question="Your word?"),
    "treehist": lambda: Spec.from_heavy(pldp.TreeHist(4.0, max_bytes=6, step_bits=2), question="Your word?"),
    "sfp": lambda: Spec.from_heavy(pldp.SFP(4.0, max_bytes=8, fragment_bytes=2, hash_bits=8), question="Your word?"),
    "pem-level-1": lambda: Spec.from_heavy(heavy_protocols()[0], question="Your word?", level=1),
    # rows of 17 bytes and more: XXH32's four-lane path over the whole row (TreeHist 17/4: 34 depths, refused words)
    "treehist-17": lambda: Spec.from_heavy(pldp.TreeHist(4.0, max_bytes=17, step_bits=4), question="Your word?"),
    "pem-32": lambda: Spec.from_heavy(pldp.PEM(4.0, max_bytes=32), question="Your word?"),
}
#: Answers as given: ASCII, é composed and decomposed (one row after NFC), ï, CJK cut inside a
#: character at 6 and 8 bytes, white space trimmed (and NBSP kept), a word longer than any row, 4-byte
#: characters (emoji, a ZWJ sequence) cut inside one at 6, 17 and 8 bytes.
ANSWERS = [
    "café", "cafe\u0301", "naïve", "日本語テキスト", "é日本", " padded  ", "\tpadded\r\n", "\u00a0tea", "a",
    "antidisestablishmentarianism", "emoji 😀👩‍💻 done", "😀" * 5,
]  # fmt: skip
#: Answers both clients refuse before drawing a word: empty, only white space, a number, U+0000 inside.
BAD = ["", "  \t ", 5, "a\u0000b"]


def _groups(spec: Spec) -> int:
    root = HeavyNode.parse(json.loads(spec.to_json())["sampler"]["root"], "root")
    return root.groups


def _words(n: int, seed: int) -> np.ndarray:
    """Uniform words, every 5th ``2**32 - 1``: the group's rejection refuses it for every G not dividing 2**32."""
    w = np.random.default_rng(seed).integers(0, GRID, size=n, dtype=np.uint64).astype(np.uint32)
    w[4::5] = GRID - 1
    return w


def _calls(seed: int) -> list[dict[str, Any]]:
    """Single reports of every answer, a batch of answers drawn from them, single reports again."""
    rng = np.random.default_rng(seed)
    calls: list[dict[str, Any]] = [{"method": "report", "answer": a, "choices": {}} for a in ANSWERS]
    batch = [ANSWERS[int(i)] for i in rng.integers(0, len(ANSWERS), size=30)]
    calls.append({"method": "reports", "answers": batch, "choices": {}})
    calls += [
        {"method": "report", "answer": ANSWERS[int(i)], "choices": {}} for i in rng.integers(0, len(ANSWERS), size=5)
    ]
    return calls


@pytest.mark.parametrize("name", list(SPECS))
def test_js_and_python_clients_write_the_same_bytes(name: str, tmp_path: Path) -> None:
    spec = SPECS[name]()
    calls = _calls(seed=len(name))
    words = _words(4_000, seed=11)
    want = _python_lines(spec, words, calls)
    got = _node(tmp_path, spec.to_json(), words, calls)
    assert len(got) == len(want), got[-1:]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"call {i} ({calls[i]['method']}) differs"
    payload = json.loads(want[0])["payload"]
    group = {"pem": "group", "treehist": "depth", "sfp": "position"}[
        json.loads(spec.to_json())["sampler"]["root"]["protocol"]
    ]
    assert next(iter(payload)) == group and 0 <= payload[group] < _groups(spec)


@pytest.mark.parametrize("name", ["treehist", "pem-level-1"])
def test_a_refused_group_word_is_replaced_by_the_next_in_both_clients(name: str, tmp_path: Path) -> None:
    """A report's first word after its id refused (the largest word below 2**32 that G's rejection
    refuses) and the next taken: the same report as from the stream without it, in both clients."""
    spec = SPECS[name]()
    g = _groups(spec)
    assert GRID % g, "G must not divide 2**32, or nothing is refused"
    plain = _words(64, seed=5)
    plain[4::5] = 0  # no refusal anywhere
    refused = np.insert(plain, 4, np.uint32(GRID - GRID % g))  # the smallest refused word, at the group's place
    calls = [{"method": "report", "answer": "naïve", "choices": {}}]
    want = _python_lines(spec, plain, calls)
    assert _python_lines(spec, refused, calls) == want
    assert _node(tmp_path, spec.to_json(), refused, calls) == want
    # the word just below the limit is taken: it draws group (GRID - GRID % g - 1) % g = g - 1
    taken = np.insert(plain, 4, np.uint32(GRID - GRID % g - 1))
    (line,) = _node(tmp_path, spec.to_json(), taken, calls)
    assert line != want[0] and line == _python_lines(spec, taken, calls)[0]
    assert next(iter(json.loads(line)["payload"].values())) == g - 1


@pytest.mark.parametrize("name", list(SPECS))
def test_js_verify_finds_the_rows_python_finds(name: str, tmp_path: Path) -> None:
    spec = SPECS[name]()
    (line,) = _node(tmp_path, spec.to_json(indent=None), np.zeros(1, np.uint32), [{"method": "verify"}])
    js = json.loads(line)
    _same_rows(js, spec)
    assert js["rows"][-1]["subject"] == "every pair of answers"


@pytest.mark.parametrize("answer", BAD, ids=["empty", "spaces", "number", "nul"])
def test_js_refuses_the_answers_python_refuses(answer: Any, tmp_path: Path) -> None:
    spec = SPECS["treehist"]()
    with pytest.raises(ParameterError):
        Client(spec, random=lambda n: np.zeros(n, np.uint32)).report(answer)
    (line,) = _node(tmp_path, spec.to_json(), np.zeros(64, np.uint32), [{"method": "report", "answer": answer}])
    out = json.loads(line)
    assert out["error"] == "AnswerError"
    if isinstance(answer, str) and answer.strip():  # the message never repeats the answer
        assert answer not in out["message"]


def _tampered(spec: Spec, edit: Any) -> dict[str, Any]:
    data = json.loads(spec.to_json())
    edit(data)
    data["id"] = spec_id(data)
    return data


def _js_refusal(tmp_path: Path, data: dict[str, Any]) -> str:
    (line,) = _node(tmp_path, json.dumps(data), np.zeros(64, np.uint32), [{"method": "verify"}])
    out = json.loads(line)
    assert out.get("error") == "SpecError", line
    return str(out["message"])


def test_js_refuses_a_node_that_claims_less_than_its_parts_spend(tmp_path: Path) -> None:
    """The node's epsilon below the parts' sum: every part's claim holds, the whole report's fails,
    with the message Python's loader writes."""
    spec = SPECS["treehist"]()
    data = _tampered(spec, lambda d: d["sampler"]["root"].update(epsilon=3.5))
    with pytest.raises(SpecError) as py:
        Spec.from_json(data)
    message = _js_refusal(tmp_path, data)
    assert message == str(py.value) and "root, every pair of answers" in message


@pytest.mark.parametrize(
    "labels",
    [
        {"text": 7, "normalize": "NFC"},
        {"text": 6, "normalize": "NFD"},
        {"text": 6},
        {"text": 6, "normalize": "NFC", "hash": "xxh32"},
        {"hashed": 6, "hash": "xxh32", "normalize": "NFC"},
        ["a", "b"],
    ],
)
def test_js_refuses_labels_that_are_not_the_free_text_form(labels: Any, tmp_path: Path) -> None:
    spec = SPECS["treehist"]()
    data = _tampered(spec, lambda d: d.update(labels=labels))
    with pytest.raises(SpecError, match="labels"):
        Spec.from_json(data, check_oracle=False)
    assert _js_refusal(tmp_path, data).startswith("labels of a free-text sampler must be ")


def test_js_refuses_the_free_text_labels_for_a_sampler_of_items(tmp_path: Path) -> None:
    spec = Spec.from_mechanism(pldp.OLH(1.0, 50), question="q?")
    data = _tampered(spec, lambda d: d.update(labels={"text": 6, "normalize": "NFC"}))
    with pytest.raises(SpecError, match="labels"):
        Spec.from_json(data, check_oracle=False)
    assert _js_refusal(tmp_path, data).startswith("labels must be ")


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda r: r.update(step_bits=3), "step_bits must be one of (1, 2, 4, 8), got 3"),
        (lambda r: r.pop("step_bits"), "lacks"),
        (lambda r: r.update(protocol="pem"), "unknown members"),
        (lambda r: r["parts"][1].update(d=1000), "the word part must be a xxh32 hashed node over d = 2147483647"),
        (lambda r: r.update(parts=r["parts"][:1]), "must be a list of 2 hashed nodes (prefix, word)"),
        (lambda r: r.update(max_bytes=65), "max_bytes = 65 is outside [1, 64]"),
    ],
)
def test_js_refuses_the_malformed_nodes_python_refuses(edit: Any, why: str, tmp_path: Path) -> None:
    spec = SPECS["treehist"]()
    data = _tampered(spec, lambda d: edit(d["sampler"]["root"]))
    with pytest.raises(SpecError):
        Spec.from_json(data, check_oracle=False)
    message = _js_refusal(tmp_path, data)
    assert message.startswith("sampler.root") and why in message
