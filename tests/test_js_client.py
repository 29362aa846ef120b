"""The JS client (clients/js/pldp-client.mjs) against the Python one, byte for byte.

For a spec of every mechanism and protocol, both clients are fed the same stream of 32-bit words
and the same answers; their reports (single and batched) must be the same bytes, and the JS
``verify`` must find the same rows as :func:`pldp.deploy.verify`. Memoized chains (direct and unary)
run with a memo store in each client (a file each): the same bytes again, the same memo files, the
same count of values new to the memo after every call, and the same refusals of a corrupt store.
The JS side runs in Node through ``clients/js/test/driver.mjs``; the module is skipped without
Node.js >= 20 on PATH, and fails instead under ``PLDP_NODE_TESTS=required`` (as in ``.ci/run``).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
import pldp.channel.padding
from pldp.channel.sampling import GRID
from pldp.client import Client
from pldp.deploy import Spec, spec_id, verify
from pldp.errors import SpecError
from pldp.protocols import APLDP, FEBSF, PBP, RCF, PaddingSampling
from tests.deploy_cases import LEVELS, oracle_cases, spec_of, with_every_kind
from tests.needs import need_node

pytestmark = pytest.mark.usefixtures("node")

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "clients" / "js" / "test" / "driver.mjs"


PERM = pldp.ItemBudgets.from_array([1.0, 2.0, 2.0, 4.0, 4.0])
ONE = pldp.ItemBudgets.from_array([0.5, 1.0, 1.0, 2.0, 2.0])
#: Memoized chains, direct and unary (few values, so that values repeat and reuse their PRR).
MEMO_CASES: dict[str, pldp.FrequencyOracle] = {
    "lgrr": pldp.LGRR(2.0, 1.0, 4),
    "liprr": pldp.LIPRR(PERM, ONE),
    "loue": pldp.LOUE(2.0, 1.0, 5),
    "lsue-d11": pldp.LSUE(3.0, 1.0, 11),
    "lidue": pldp.LIDUE(PERM, ONE),
    "lgrr-range": pldp.LGRR(2.0, 1.0, 4),  # labels {"range": d}: the memo's fingerprint over them as written
    "lgrr-hashed": pldp.LGRR(2.0, 1.0, 4),  # labels {"hashed": d, ...}: the memo's fingerprint over them as written
}
#: Answers of the hashed form, as given: ASCII, é composed and decomposed, emoji, CJK, white space
#: trimmed and kept (NBSP), Hangul composed from its jamo, 256 UTF-8 bytes once trimmed (the limit).
TEXTS = [
    "tea", "café", "cafe\u0301", " café\t", "\r\ncafé \n", "🍵", "👩🏽‍💻", "緑茶", "お茶 ", "\u00a0tea",
    "\u1112\u1161\u11ab", "한", "a" * 256, " " + "é" * 128 + " ", "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒g̵o",
]  # fmt: skip


def _cases() -> dict[str, pldp.FrequencyOracle]:
    """The shared cases, three more that exercise wider reports and padding, memoized chains, and a
    standard case of every kind of node none of those has (a new kind is driven with no edit here)."""
    return with_every_kind(
        {
            **oracle_cases(),
            "krr-d100": pldp.KRR(2.0, 100),
            "oue-d13": pldp.OUE(0.7, 13),
            "rappor-ps": PaddingSampling(pldp.RAPPOR(1.0, 6), 3),
            "olh-d50": pldp.OLH(1.0, 50),  # OLH: the seed is w0 >> 1
            "flh-d50": pldp.OLH(1.0, 50, seeds=2**8),  # a small family: the seed is w0 >> 24
            "olh-toeplitz-d50": pldp.OLH(1.0, 50, hash="toeplitz"),  # the Toeplitz family, g = 4
            "olh-toeplitz-d10000-range": pldp.OLH(4.0, 10_000, hash="toeplitz"),  # g = 64: 25 seed bits read
            # levels in the clear over large-domain leaves: OLH with g = 3, 4, 8 per level; OLH
            # and k-RR levels in one node (item, seed and value columns); subsets with rejections
            "rcf-olh": RCF([0.5, 1.0, 2.0], 6, oracle="olh"),
            "apldp-olh": APLDP([0.5, 1.0, 4.0], 16, candidates=("krr", "olh", "hr")),
            "rcf-ss": RCF([0.5, 1.0, 2.0], 6, oracle="ss"),
            "olh-d10000-range": pldp.OLH(1.0, 10_000),  # labels {"range": d}: answers as integers or their strings
            "olh-d1000-hashed": pldp.OLH(1.0, 1000),  # labels {"hashed": d, ...}: answers as text (TEXTS)
            # the level hidden behind local hashing: one g at every level, the claim by EveryPairLeaf.ratio_to
            "pbp-olh": PBP([0.5, 1.0, 2.0], [0.3, 0.3, 0.4], 50, "olh"),
            **MEMO_CASES,
        }
    )


CASES = _cases()
#: Cases whose word streams make uniform(m) reject (every 5th word 2**32 - 1): padding, subsets.
REJECTING = {name for name in CASES if name.endswith("-ps")} | {"rcf-ss"}


def _spec(name: str) -> Spec:
    if name.endswith(("-range", "-hashed")):
        return Spec.from_mechanism(CASES[name], question=f"{name}?", labels=name.rsplit("-", 1)[1])
    return spec_of(CASES[name], name)


def _words(n: int, seed: int, padding: bool) -> np.ndarray:
    """Uniform words; for padding specs every 5th word is 2**32 - 1, which uniform(m) rejects for
    every m that does not divide 2**32 (the rejection branch then runs in both clients)."""
    w = np.random.default_rng(seed).integers(0, GRID, size=n, dtype=np.uint64).astype(np.uint32)
    if padding:
        w[4::5] = GRID - 1
    return w


def _answer(name: str, rng: np.random.Generator, labels: bool) -> tuple[Any, dict[str, Any]]:
    """One answer as JSON values (labels or indices) and its choices (level / levels)."""
    oracle = CASES[name]
    if name.endswith("-hashed"):  # text only: the client hashes it
        return TEXTS[int(rng.integers(0, len(TEXTS)))], {}
    if name == "mpldp":
        x = [int(rng.integers(0, k)) for k in oracle.k]
        lv = [int(rng.integers(0, len(e))) for e in oracle.level_eps]
        return ([str(v) for v in x] if labels else x), {"levels": lv}
    if name.endswith("-ps"):
        items = [int(v) for v in rng.choice(oracle.d, size=int(rng.integers(0, 5)), replace=False)]
        return ([str(v) for v in items] if labels else items), {}
    x = int(rng.integers(0, oracle.d))
    choices = {"level": int(rng.integers(0, len(oracle.levels)))} if hasattr(oracle, "levels") else {}
    return (str(x) if labels else x), choices


def _calls(name: str, seed: int) -> list[dict[str, Any]]:
    """Single reports, a batch with per-answer choices, a batch with one choice for all, singles."""
    rng = np.random.default_rng(seed)
    calls: list[dict[str, Any]] = []
    for i in range(3):
        a, c = _answer(name, rng, labels=i % 2 == 1)
        calls.append({"method": "report", "answer": a, "choices": c})
    batch = [_answer(name, rng, labels=bool(rng.integers(0, 2))) for _ in range(25)]
    choices: dict[str, Any] = {}
    if batch[0][1]:
        key = next(iter(batch[0][1]))
        choices[key] = [c[key] for _, c in batch]
    calls.append({"method": "reports", "answers": [a for a, _ in batch], "choices": choices})
    shared = [_answer(name, rng, labels=False) for _ in range(6)]
    one = dict(shared[0][1])
    calls.append({"method": "reports", "answers": [a for a, _ in shared], "choices": one})
    for _ in range(3):
        a, c = _answer(name, rng, labels=False)
        calls.append({"method": "report", "answer": a, "choices": c})
    if name in MEMO_CASES:  # a value again (its PRR reused), then the values new to the memo after each call
        calls.append({"method": "report", "answer": calls[-1]["answer"], "choices": {}})
        calls = [c for call in calls for c in (call, {"method": "last_new"})]
    return calls


def _values_reached(name: str, calls: list[dict[str, Any]]) -> int:
    """How many of the memoized case's values its calls reach: every one of d, or for text answers
    the buckets they hash to (a few texts need not reach every bucket)."""
    if not name.endswith("-hashed"):
        return CASES[name].d
    from pldp.deploy.labels import text_bucket

    given = [a for c in calls for a in ([c["answer"]] if "answer" in c else c.get("answers", []))]
    return len({text_bucket(a, CASES[name].d) for a in given})


def _python_lines(spec: Spec, words: np.ndarray, calls: list[dict[str, Any]], store: Path | None = None) -> list[str]:
    pos = 0

    def source(n: int) -> np.ndarray:
        nonlocal pos
        assert pos + n <= words.size, "the word stream ran out"
        out = words[pos : pos + n]
        pos += n
        return out

    client = Client(spec, random=source, store=store)
    lines = []
    for call in calls:
        if call["method"] == "last_new":
            items = client.last_new_items.tolist()
            lines.append(json.dumps({"values": client.last_new_values, "items": items}, separators=(",", ":")))
            continue
        kw = call["choices"]
        if call["method"] == "report":
            rep = client.report(call["answer"], **kw)
            lines.append(json.dumps(rep, separators=(",", ":")))
        else:
            lv = kw.get("levels")
            if lv is not None and not isinstance(lv[0], list):  # one levels list for all (the JS API)
                kw = {**kw, "levels": [lv] * len(call["answers"])}
            batch = client.reports(call["answers"], **kw)
            lines.append(json.dumps(batch.to_json(), separators=(",", ":")))
    return lines


def _node(
    tmp: Path,
    spec_json: str,
    words: np.ndarray,
    calls: list[dict[str, Any]],
    raw: bool = False,
    store: str | None = None,
) -> list[str]:
    (tmp / "spec.json").write_text(spec_json, encoding="utf-8")
    words.astype("<u4").tofile(tmp / "words.u32")
    task: dict[str, Any] = {"spec": "spec.json", "words": "words.u32", "calls": calls, "raw": raw}
    if store is not None:
        task["store"] = store
    (tmp / "task.json").write_text(json.dumps(task))
    proc = subprocess.run(
        [need_node(), str(DRIVER), str(tmp / "task.json")], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode in (0, 2), proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.parametrize("name", list(CASES))
def test_js_and_python_clients_write_the_same_bytes(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rejected = []
    below = pldp.channel.padding.uniform_below

    def counting(words: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v, ok = below(words, m)
        rejected.append(int(np.sum(~ok)))
        return v, ok

    monkeypatch.setattr(pldp.channel.padding, "uniform_below", counting)
    monkeypatch.setattr(pldp.channel.subset, "uniform_below", counting)
    spec = _spec(name)
    calls = _calls(name, seed=len(name))
    words = _words(40_000, seed=7, padding=name in REJECTING)
    memo = name in MEMO_CASES
    want = _python_lines(spec, words, calls, tmp_path / "memo-py.json" if memo else None)
    got = _node(tmp_path, spec.to_json(), words, calls, store="memo-js.json" if memo else None)
    assert len(got) == len(want), got[-1:]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"call {i} ({calls[i]['method']}) differs"
    if name in REJECTING:  # the rejection branch of uniform(m) ran in these streams
        assert sum(rejected) > 0
    if memo:  # the same memo, byte for byte; values were reused and new ones drawn
        assert (tmp_path / "memo-js.json").read_bytes() == (tmp_path / "memo-py.json").read_bytes()
        news = [json.loads(line)["values"] for line, c in zip(want, calls, strict=True) if c["method"] == "last_new"]
        assert news[0] == 1 and news[-1] == 0 and 0 in news[:-1] and sum(news) == _values_reached(name, calls)


def _same_rows(js: dict[str, Any], spec: Any) -> None:
    py = verify(spec).to_dict()
    assert js["holds"] == py["holds"]
    assert js["ldp_epsilon"] == ("inf" if py["ldp_epsilon"] == math.inf else py["ldp_epsilon"])
    assert len(js["rows"]) == len(py["rows"])
    for a, b in zip(js["rows"], py["rows"], strict=True):
        keys = ("part", "subject", "claimed", "holds")
        assert [a[k] for k in keys] == [b[k] for k in keys]
        if b["realised"] == "inf":
            assert a["realised"] == "inf"
        else:
            assert math.isclose(a["realised"], b["realised"], rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_js_verify_finds_the_rows_python_finds(name: str, tmp_path: Path) -> None:
    spec = _spec(name)
    (line,) = _node(tmp_path, spec.to_json(indent=None), np.zeros(1, np.uint32), [{"method": "verify"}])
    _same_rows(json.loads(line), spec)


def _resigned(data: dict[str, Any]) -> dict[str, Any]:
    data["id"] = spec_id(data)
    return data


def test_js_refuses_the_hand_edited_specs_python_refuses(tmp_path: Path) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="q", labels=["a", "b", "c"])
    raised = spec.to_dict()
    raised["sampler"]["root"]["keep"] += 3000
    raised["sampler"]["root"]["weights"] = [w - 1000 for w in raised["sampler"]["root"]["weights"]]
    altered = spec.to_dict()
    altered["question"] = "another question"
    dup = spec.to_dict()
    dup["labels"] = ["a", "a", "c"]
    off_grid = spec.to_dict()
    off_grid["sampler"]["root"]["keep"] -= 1
    febsf = Spec.from_mechanism(FEBSF(LEVELS, 0.3, 16, "oue"), question="q").to_dict()
    febsf["sampler"]["root"]["level_epsilon"] = 0.3  # claims eps_p for the level (ERRATA FEBSF-6)
    mixed = Spec.from_mechanism(RCF([0.5, 1.0, 2.0], 6), question="q").to_dict()
    wider = Spec.from_mechanism(pldp.KRR(2.0, 7), question="q").to_dict()["sampler"]["root"]
    mixed["sampler"]["root"]["items"][2] = wider  # level 2 over 7 items, the others over 6
    with pytest.raises(SpecError, match="nodes with an item or a bits column must have the same size"):
        Spec.from_json(json.dumps(_resigned(mixed)))  # a report file has one item column of fixed width
    # a ULDP node where every item must be protected: the padding's inner node, a level's node
    uldp = Spec.from_mechanism(pldp.URAP(1.0, np.array([True, True, True, False, False])), question="q").to_dict()
    padded = Spec.from_mechanism(PaddingSampling(pldp.OUE(1.0, 5), 2), question="q").to_dict()
    padded["sampler"]["root"]["inner"] = {**uldp["sampler"]["root"], "d": 7}
    padded["sampler"]["root"]["inner"].update(
        {k: v + v[-1:] * 2 for k, v in uldp["sampler"]["root"].items() if isinstance(v, list)}
    )
    leveled = Spec.from_mechanism(RCF([0.5, 1.0, 2.0], 5, oracle="oue"), question="q").to_dict()
    leveled["sampler"]["root"]["items"][0] = uldp["sampler"]["root"]
    for bad in (padded, leveled):
        with pytest.raises(SpecError, match="must protect every item: a ULDP node may reveal one"):
            Spec.from_json(json.dumps(_resigned(bad)))
    # the Toeplitz family's limits: g a power of two, 2 log2(g) + bits(d - 1) - 1 <= 31, no seeds member
    toeplitz = Spec.from_mechanism(pldp.OLH(1.0, 50, hash="toeplitz"), question="q").to_dict()
    three = Spec.from_mechanism(pldp.OLH(1.0, 50, g=3), question="q").to_dict()
    three["sampler"]["root"]["family"] = "toeplitz"
    named = json.loads(json.dumps(toeplitz))
    named["sampler"]["root"]["seeds"] = 256
    wide = json.loads(json.dumps(toeplitz))
    wide["sampler"]["root"]["d"] = 2**29  # g = 4: 2 * 2 + 29 - 1 = 32 bits
    six = json.loads(json.dumps(toeplitz))
    six["sampler"]["root"]["g"] = 6  # g = 4's keep and weight: the grid is checked first, in both clients
    family_cases = [
        (_resigned(six), r"sampler\.root: keep \+ g \* weight = \d+ must be 2\*\*32"),
        (_resigned(three), r"sampler\.root: the Toeplitz family needs g a power of two, got 3"),
        (_resigned(named), r"sampler\.root: the Toeplitz family has 2\*\*31 seeds \(OLH's\), so a node names none"),
        (_resigned(wide), r"sampler\.root: the Toeplitz family needs .* got 2 \* 2 \+ 29 - 1 = 32"),
    ]
    for data, reason in family_cases:
        with pytest.raises(SpecError, match=reason):
            Spec.from_json(json.dumps(data))
    cases = [
        *family_cases,
        (_resigned(padded), r"root\.inner must protect every item: a ULDP node may reveal one"),
        (_resigned(leveled), r"root\.items must protect every item: a ULDP node may reveal one"),
        (_resigned(mixed), r"root: the levels' nodes with an item or a bits column must have the same size"),
        (_resigned(raised), r"privacy claim fails: root, output 0 \(\+2\)"),
        (altered, "does not match its content"),
        (_resigned(dup), "duplicate labels"),
        (_resigned(off_grid), r"sampler\.root: keep \+ sum\(weights\) = 4294967295 must be 2\*\*32"),
        (_resigned(febsf), "privacy claim fails: root the level itself"),
        ({**spec.to_dict(), "format": "pldp.spec/9"}, "unknown spec format"),
    ]
    for data, reason in cases:
        (line,) = _node(tmp_path, json.dumps(data), np.zeros(1, np.uint32), [{"method": "verify"}])
        out = json.loads(line)
        assert out["error"] == "SpecError" and re.search(reason, out["message"]), out
    # verified without loading (no id check), the failing claims are the rows Python finds
    for data in (_resigned(raised), _resigned(febsf)):
        (line,) = _node(tmp_path, json.dumps(data), np.zeros(1, np.uint32), [], raw=True)
        js = json.loads(line)
        assert not js["holds"]
        _same_rows(js, data)


def test_the_js_unit_tests_pass() -> None:
    """``node --test clients/js/test/*.mjs`` (the JS client's own tests) passes, so CI runs them too.

    The files are named one by one (Node >= 22 no longer searches a folder given to ``--test``),
    and the reporter is TAP (Node >= 23 reports as ``spec`` by default).
    """
    files = sorted(str(f) for f in (ROOT / "clients" / "js" / "test").glob("*.mjs"))
    assert files
    proc = subprocess.run(
        [need_node(), "--test", "--test-reporter=tap", *files],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert re.search(r"^# fail 0$", proc.stdout, re.M), proc.stdout[-2000:]


def _memo_doc(spec: Spec, responses: dict[str, Any], fingerprint: str | None = None) -> dict[str, Any]:
    from pldp.deploy.memostore import MEMO_FORMAT, permanent_fingerprint

    assert isinstance(spec.root, pldp.channel.MemoNode) and spec.memo_key is not None
    kind = spec.root.permanent.kind
    fp = fingerprint or permanent_fingerprint(spec.labels, spec.root)
    entry = {"permanent": fp, "kind": kind, "d": spec.root.d, "responses": responses}
    return {"format": MEMO_FORMAT, "memos": {spec.memo_key: entry}}


def test_both_clients_refuse_a_corrupt_memo_store_and_say_why(tmp_path: Path) -> None:
    """A store that is not JSON, not the format, holds a PRR or value outside the domain, is open to
    other users, or holds another PRR's responses under the spec's key: both clients refuse to
    report (no report, the store unchanged), naming the reason; a missing store starts empty."""
    from pldp.deploy.memostore import MemoStoreError

    direct, unary = _spec("lgrr"), _spec("loue")
    cases: list[tuple[Spec, Any, int, str]] = [
        (direct, "{not json", 0o600, "is not valid JSON"),
        (direct, {"format": "pldp.memo/1"}, 0o600, "exactly 'format' and 'memos'"),
        (direct, _memo_doc(direct, {"0": 4}), 0o600, "permanent response of value 0 is outside the domain"),
        (direct, _memo_doc(direct, {"9": 1}), 0o600, "value .9. outside 0..3"),
        (unary, _memo_doc(unary, {"1": "/w=="}), 0o600, "permanent response of value 1 is outside the domain"),
        (unary, _memo_doc(unary, {"1": "CAA="}), 0o600, "permanent response of value 1 is outside the domain"),
        (direct, _memo_doc(direct, {"0": 1}), 0o644, r"open to other users \(mode 0644\)"),
        (direct, _memo_doc(direct, {"0": 1}, "0" * 32), 0o600, "holds the permanent responses of another"),
    ]
    for i, (spec, doc, mode, reason) in enumerate(cases):
        text = doc if isinstance(doc, str) else json.dumps(doc)
        for name in ("py.json", "js.json"):
            (tmp_path / name).write_text(text, encoding="utf-8")
            (tmp_path / name).chmod(mode)
        with pytest.raises(MemoStoreError, match=reason):
            Client(spec, store=tmp_path / "py.json").report(0)
        (line,) = _node(
            tmp_path, spec.to_json(), np.zeros(64, np.uint32), [{"method": "report", "answer": 0}], store="js.json"
        )
        out = json.loads(line)
        assert out["error"] == "MemoStoreError" and re.search(reason, out["message"]), (i, out)
        for name in ("py.json", "js.json"):
            assert (tmp_path / name).read_text(encoding="utf-8") == text
    for name in ("py.json", "js.json"):  # missing: starts empty, then holds the one value reported
        (tmp_path / name).unlink()
    Client(direct, random=lambda n: np.zeros(n, np.uint32), store=tmp_path / "py.json").report(2)
    _node(tmp_path, direct.to_json(), np.zeros(64, np.uint32), [{"method": "report", "answer": 2}], store="js.json")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "js.json").read_bytes()
    assert json.loads((tmp_path / "py.json").read_bytes()) == _memo_doc(direct, {"2": 2})
    for name in ("py.json", "js.json"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o600


def test_js_and_python_hash_the_same_text_to_the_same_bucket(tmp_path: Path) -> None:
    """textBucket (client-labels.mjs) and pldp.deploy.labels.text_bucket agree on every text of
    :data:`TEXTS` and on a few sizes of d, and refuse the same texts (empty, oversized, a lone
    surrogate), each saying why."""
    from pldp.deploy.labels import text_bucket

    refused = ["", " \t\r\n", "a" * 257, "é" * 129, "\ud800x"]
    sizes = [2, 7, 1000, 2**31 - 1]
    (tmp_path / "texts.json").write_text(json.dumps({"texts": TEXTS + refused, "sizes": sizes}), encoding="utf-8")
    script = (
        f"import {{ textBucket }} from {json.dumps((ROOT / 'clients/js/client-labels.mjs').as_uri())};"
        "import { readFileSync } from 'node:fs';"
        "const { texts, sizes } = JSON.parse(readFileSync(process.argv[1], 'utf8'));"
        "for (const t of texts) { try { console.log(JSON.stringify(sizes.map((d) => textBucket(t, d)))); }"
        " catch (e) { console.log(JSON.stringify(e.message)); } }"
    )
    proc = subprocess.run(
        [need_node(), "--input-type=module", "-e", script, str(tmp_path / "texts.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    got = [json.loads(line) for line in proc.stdout.splitlines()]
    want: list[Any] = []
    for t in TEXTS + refused:
        try:
            want.append([text_bucket(t, d) for d in sizes])
        except pldp.errors.ParameterError as exc:
            want.append(str(exc))
    assert got == want
    assert sum(isinstance(w, str) for w in want) == len(refused)
    assert want[1] == want[2] == want[3] == want[4]  # é composed or decomposed, trimmed or not: one bucket
