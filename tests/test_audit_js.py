"""The JS client as an audit target (pldp.audit.jsclient.JSClient and js_driver.mjs).

The real JS client, with its own CSPRNG, makes many reports of one input in a Node process; they
come back as the columns the Python client gives. Their frequencies must fit the spec's exact
channel (chi-square and binomial tests at 1e-4: an unseeded test that fails about once in ten
thousand runs), and an altered copy of the client that keeps the true item 10 % more often must
fail the same test (for an input other than item 0). The module is skipped without Node.js >= 20
on PATH, and fails instead under ``PLDP_NODE_TESTS=required`` (as in ``.ci/run``).
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

import pldp
from pldp.audit.jsclient import DRIVER, MODULE, JSClient
from pldp.client import Client
from pldp.deploy import Spec
from pldp.errors import ParameterError
from pldp.protocols import FEBSF, MPLDP, PaddingSampling
from tests.deploy_cases import LEVELS, spec_of
from tests.needs import need_node

pytestmark = pytest.mark.usefixtures("node")

ROOT = Path(__file__).resolve().parents[1]
ALPHA = 1e-4
KEEP_LINE = "if (w < node.keep) return x;"

#: One input (answer, choices) per case, as the JS client takes it.
CASES: dict[str, tuple[pldp.FrequencyOracle, Any, dict[str, Any]]] = {
    "krr": (pldp.KRR(1.0, 4), 2, {}),
    "oue": (pldp.OUE(1.0, 6), 3, {}),
    "febsf-krr": (FEBSF(LEVELS, 0.3, 16, "krr"), 5, {"level": 4}),
    "febsf-oue": (FEBSF(LEVELS, 0.3, 16, "oue"), 11, {"level": 9}),
    "mpldp": (MPLDP([3, 4], [1.0, 2.0]), [1, 3], {"levels": [0, 1]}),
    "oue-ps": (PaddingSampling(pldp.OUE(1.0, 5), 2), [0, 3], {}),
}


@pytest.fixture(scope="module")
def clients() -> Any:
    """One JSClient per case, shared by the tests of this module (one Node process each)."""
    made: dict[str, JSClient] = {}

    def get(name: str) -> JSClient:
        if name not in made:
            made[name] = JSClient(spec_of(CASES[name][0], name))
        return made[name]

    yield get
    for js in made.values():
        js.close()


def _python_columns(spec: Spec, answer: Any, choices: dict[str, Any], n: int) -> dict[str, np.ndarray]:
    kw: dict[str, Any] = {}
    if "level" in choices:
        kw["level"] = choices["level"]
    if "levels" in choices:
        kw["levels"] = [choices["levels"]] * n
    return Client(spec).reports([answer] * n, **kw).columns


@pytest.mark.parametrize("name", list(CASES))
def test_columns_are_those_of_the_python_client(name: str, clients: Any) -> None:
    js = clients(name)
    _, answer, choices = CASES[name]
    want = _python_columns(js.spec, answer, choices, 5)
    for n, chunk in ((7, 3), (5, 5000), (1, 1), (0, 4)):
        got = js.columns(answer, choices, n, chunk=chunk)
        assert list(got) == list(want)
        for key, col in got.items():
            assert col.dtype == want[key].dtype, key
            assert col.shape == (n, *want[key].shape[1:]), key
            if col.dtype == np.int64 and n:
                assert col.min() >= 0, key  # every row carries its item and level


def test_the_driver_writes_batches_of_at_most_chunk_reports(tmp_path: Path) -> None:
    spec = spec_of(CASES["krr"][0], "krr")
    (tmp_path / "spec.json").write_text(spec.to_json(), encoding="utf-8")
    tasks = [{"answer": 1, "choices": {}, "n": 5, "chunk": 2}, {"answer": "3", "n": 2, "chunk": 10}]
    proc = subprocess.run(
        [need_node(), str(DRIVER), str(MODULE), str(tmp_path / "spec.json")],
        input="".join(json.dumps(t) + "\n" for t in tasks),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    sizes = [len(line["reports"]) if "reports" in line else line for line in lines]
    assert sizes == [2, 2, 1, {"done": 5}, 2, {"done": 2}]
    assert all(line["format"] == "pldp.batch/1" and line["spec"] == spec.id for line in lines if "reports" in line)


def test_krr_items_fit_the_exact_channel(clients: Any) -> None:
    js = clients("krr")
    x = int(np.random.default_rng(11).integers(0, 4))
    n = 200_000
    items = js.columns(x, {}, n)["item"]
    counts = np.bincount(items, minlength=4)
    assert counts.size == 4
    expected = n * pldp.KRR(1.0, 4).channel()[x]
    assert stats.chisquare(counts, expected).pvalue > ALPHA


def test_oue_bits_fit_their_exact_probabilities(clients: Any) -> None:
    js = clients("oue")
    d = 6
    x = int(np.random.default_rng(12).integers(0, d))
    n = 200_000
    bits = np.unpackbits(js.columns(x, {}, n)["bits"], axis=1)
    assert not bits[:, d:].any()  # the padding bits of the last byte are zero
    ones = bits[:, :d].sum(axis=0)
    a, b = pldp.OUE(1.0, d).support
    for k in range(d):
        prob = float(a[k] if k == x else b[k])
        assert stats.binomtest(int(ones[k]), n, prob).pvalue > ALPHA / d, (k, ones[k] / n, prob)  # Bonferroni


def keeps_too_often(folder: Path) -> Path:
    """A copy of the JS client in ``folder`` whose direct node keeps the true item 10 % too often.

    The client's modules (``pldp-client.mjs`` and the ``client-*.mjs`` it imports) are copied, links
    followed, and the keep line of ``client-direct.mjs`` altered; the copy's entry module is returned.
    """
    for path in [MODULE, *MODULE.parent.glob("client-*.mjs")]:
        shutil.copyfile(path, folder / path.name)
    direct = folder / "client-direct.mjs"
    text = direct.read_text(encoding="utf-8")
    assert text.count(KEEP_LINE) == 1
    direct.write_text(text.replace(KEEP_LINE, "if (w < node.keep * 1.1) return x;"), encoding="utf-8")
    return folder / MODULE.name


def test_the_chi_square_test_rejects_a_client_that_keeps_too_often(tmp_path: Path) -> None:
    variant = keeps_too_often(tmp_path)
    spec = spec_of(pldp.KRR(1.0, 4), "krr")
    # Words in [keep, 1.1 keep) were item 0's (the first tenth of its weight): the variant moves
    # that mass from item 0 to x, so its reports of x = 0 are distributed as before.
    x = int(np.random.default_rng(11).integers(1, 4))
    n = 200_000
    with JSClient(spec, module=variant) as js:
        items = js.columns(x, {}, n)["item"]
    expected = n * pldp.KRR(1.0, 4).channel()[x]
    assert stats.chisquare(np.bincount(items, minlength=4), expected).pvalue < ALPHA


def test_a_bad_answer_raises_the_js_message(clients: Any) -> None:
    js = clients("krr")
    with pytest.raises(ParameterError, match=r"AnswerError: an answer index must be an integer in \[0, 4\)"):
        js.columns(4, {}, 10)
    with pytest.raises(ParameterError, match=r"AnswerError: this spec has no level choice"):
        js.columns(1, {"level": 0}, 10)
    with pytest.raises(ParameterError, match=r"AnswerError: this spec needs the user's chosen level"):
        clients("febsf-krr").columns(1, {}, 10)
    assert js.columns(3, {}, 4)["item"].shape == (4,)  # a new process serves the next call


def test_a_process_that_dies_or_a_missing_node_raises(tmp_path: Path) -> None:
    spec = spec_of(pldp.KRR(1.0, 4), "krr")
    dying = tmp_path / "dying.mjs"
    dying.write_text("export async function loadSpec() { process.exit(3); }\nexport class Client {}\n")
    died = r"ended after 0 of 5 reports \(exit status 3\)"
    with JSClient(spec, module=dying) as js, pytest.raises(ParameterError, match=died):
        js.columns(1, {}, 5)
    with pytest.raises(ParameterError, match=r"Node\.js >= 20"):
        JSClient(spec, node=str(tmp_path / "no-node"))
    with pytest.raises(ParameterError, match="does not exist"):
        JSClient(spec, module=tmp_path / "missing.mjs")
    with pytest.raises(ParameterError, match="n must be"):
        JSClient(spec).columns(1, {}, -1)


@pytest.mark.parametrize(
    ("spec_member", "reason"),
    [("this.id", r"made 0 reports \(3 by its count\), not 3"), ('"other"', "the wire format refuses")],
)
def test_reports_that_are_missing_or_malformed_raise(spec_member: str, reason: str, tmp_path: Path) -> None:
    fake = tmp_path / "fake.mjs"
    fake.write_text(
        "export async function loadSpec(text) { return JSON.parse(text); }\n"
        "export class Client {\n"
        "  constructor(spec) { this.id = spec.id; }\n"
        f'  reports() {{ return {{ format: "pldp.batch/1", spec: {spec_member}, reports: [] }}; }}\n'
        "}\n"
    )
    with JSClient(spec_of(pldp.KRR(1.0, 4), "krr"), module=fake) as js:
        with pytest.raises(ParameterError, match=reason):
            js.columns(1, {}, 3)
        assert js.pid is None  # the process that wrote them is not reused


def test_two_calls_reuse_one_process_and_close_ends_it() -> None:
    spec = spec_of(pldp.OUE(1.0, 6), "oue")
    with JSClient(spec.to_json()) as js:
        assert js.spec == spec and js.pid is None  # started lazily
        js.columns(0, {}, 3)
        pid = js.pid
        assert pid is not None
        js.columns(5, None, 3)
        assert js.pid == pid
        folder = js._state.folder
        assert folder is not None and (folder / "spec.json").is_file()
    assert js.pid is None and not folder.exists()
    assert js.columns(1, {}, 2)["bits"].shape == (2, 1)  # a closed client starts again when used
    js.close()


def test_the_client_pickles_without_its_process(clients: Any) -> None:
    js = clients("mpldp")
    js.columns([0, 0], {"levels": [1, 0]}, 2)
    copy = pickle.loads(pickle.dumps(js))
    assert copy.pid is None and js.pid is not None
    assert copy.spec == js.spec and copy.module == js.module == MODULE and copy.node == js.node
    try:
        assert set(copy.columns([2, 1], {"levels": [0, 0]}, 3)) == set(js.columns([2, 1], {"levels": [0, 0]}, 3))
        assert copy.pid != js.pid
    finally:
        copy.close()


def test_the_packaged_files_are_there() -> None:
    assert DRIVER.is_file() and MODULE.is_file()
    assert MODULE.read_bytes() == (ROOT / "clients" / "js" / "pldp-client.mjs").read_bytes()


# --------------------------------------------------------------------------- the audit of the JS client
def test_the_audit_of_the_js_client_is_clean_and_within_its_channel() -> None:
    from pldp.audit import audit

    spec = Spec.from_mechanism(pldp.OUE(1.0, 4), question="q")
    with JSClient(spec) as js:
        res = audit(js, trials=100_000, rng=np.random.default_rng(1))
    assert len(res.rows) == 12 and res.ok and res.faithful and not res.seeded
    assert all(r.audited > r.expected - 0.15 for r in res.rows)  # tight: 5 sd at 10^5 reports is about 0.13


def test_the_audit_flags_a_js_client_whose_keep_threshold_is_off(tmp_path: Path) -> None:
    """Power, at the default 10^6 reports per input: the JS client keeping 10 % too often."""
    from pldp.audit import audit

    variant = keeps_too_often(tmp_path)
    spec = Spec.from_mechanism(pldp.KRR(1.0, 4), question="q")
    with JSClient(spec, module=variant) as js:
        res = audit(js, rng=np.random.default_rng(2))
    assert not res.ok, res.table()
