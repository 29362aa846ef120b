"""Both clients fit the spec's channel, for every mechanism and protocol, and a 5 % keep is caught.

For each oracle case (``tests/deploy_cases.py``) a population of ``n >= 10**5`` users answers in
five classes (one fixed answer each: 60 % of the users in one, 10 % in each of four others). Each
class's reports, from the Python client with the operating system's CSPRNG and from the JS client
run under ``node`` with ``crypto.getRandomValues``, are tested against the distribution the
spec's *integers* define. That distribution is computed here from ``docs/wire-format.md`` alone
(``_parts``), not from pldp's mechanisms, so the test checks the clients against the contract.

A report's observed parts are the columns of its batch: a categorical output (a direct node's item,
a perturbed or clear level) or bits (a unary or padding node). Each categorical part gets Pearson's
chi-square (cells with expectation below 20 pooled) and an exact binomial test of the input's own
cell; each bit an exact binomial test (padding's bits are dependent, as the element is a mixture,
so no test assumes independence across bits). The class's tests over all parts and classes are
combined by Bonferroni: the fit holds when ``m * min(p) > ALPHA = 1e-6``, so a correct client fails
with probability below ``1e-6`` per run.

Power: a client whose keep thresholds are 5 % higher (every direct node's ``keep`` and every unary
node's own-bit threshold ``a``, taken from the other outputs so the rows still sum to ``2**32``)
must be rejected at the same ``n``. The heavy class is the answer on which that change moves one
tested probability the most (``_shift``), and ``n`` is raised above ``10**5`` until that class
carries ``Z_POWER = 10`` standard errors of the shift (at most ``N_MAX``). The clients draw from
the OS, so the power is a probability: with up to 90 tests the Bonferroni threshold of one test
is ``|z| > 5.7``, and a tampered client escapes it only when its own-cell ``z``, distributed about
``N(10, 1)``, falls 4.3 below its mean: about ``1e-5`` per case. (``Z_POWER = 8`` left a 1 %
chance per case, and one case failed at ``p = 1.1e-6``.)
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from pldp.channel import parse_node
from pldp.channel.sampling import GRID
from pldp.client import Client
from pldp.deploy import ReportBatch, Spec, spec_id
from tests.deploy_cases import oracle_cases, spec_of
from tests.needs import need_node

ALPHA = 1e-6
N_MIN = 100_000
N_MAX = 1_500_000
Z_POWER = 10.0
HEAVY = 0.6
CASES = oracle_cases()
ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "clients" / "js" / "test" / "driver.mjs"

pytestmark = pytest.mark.slow


# --------------------------------------------------------------------------- the channel from the spec
@dataclass
class Part:
    """One observed part of a report for one fixed answer: its column, kind and exact law."""

    column: str
    kind: str  # "item" (a categorical output) or "bits"
    probs: np.ndarray  # item: Pr(output = y); bits: Pr(bit k = 1)
    own: int | None  # the cell (item) or bit a keep threshold moves; None for none


def _parts(node: dict[str, Any], answer: Any, prefix: str = "") -> list[Part]:
    """The law of each observed part of a report on ``answer``, from the node's integers (§2)."""
    kind = node["kind"]
    if kind == "direct":
        probs = np.array(node["weights"], dtype=float) / GRID
        probs[answer] += node["keep"] / GRID
        return [Part(prefix + "item", "item", probs, answer)]
    if kind == "unary":
        probs = np.array(node["b"], dtype=float) / GRID
        probs[answer] = node["a"][answer] / GRID
        return [Part(prefix + "bits", "bits", probs, answer)]
    if kind == "padding":
        inner, d, ell, s = node["inner"], node["d"], node["ell"], len(answer)
        chosen = np.zeros(d + ell)  # Pr(the inner node runs on element e): J uniform over max(s, ell)
        size = max(s, ell)
        chosen[list(answer)] = 1 / size
        chosen[d:] = (size - s) / size / ell  # a dummy d + K, K uniform over ell
        a, b = np.array(inner["a"], dtype=float) / GRID, np.array(inner["b"], dtype=float) / GRID
        return [Part(prefix + "bits", "bits", b + chosen * (a - b), int(np.argmax(chosen)))]
    if kind == "leveled":
        x, t = answer
        out = _parts(node["items"][t], x, prefix)
        if node["level_report"] == "perturbed":
            out += [
                Part(prefix + "level", "item", p.probs, t) for p in _parts(node["level_sampler"], t, prefix + "level.")
            ]
        elif node["level_report"] == "clear":
            out.append(Part(prefix + "level", "item", np.eye(len(node["levels"]))[t], t))
        return out
    assert kind == "attributes", kind
    pairs = enumerate(zip(node["parts"], answer, strict=True))
    return [p for i, (part, a) in pairs for p in _parts(part, a, f"{prefix}a{i}.")]


def _candidates(node: dict[str, Any]) -> list[Any]:
    """Answers a class may hold (choices included): every item, level and attribute combination;
    for padding, sets of every size from empty to more than ``ell``."""
    kind = node["kind"]
    if kind in ("direct", "unary"):
        return list(range(node["d"]))
    if kind == "padding":
        d = node["d"]
        return [(), (0,), (d - 1,), (0, 2), (1, 3), tuple(range(node["ell"] + 1)), tuple(range(d))]
    if kind == "leveled":
        return [(x, t) for t in range(len(node["levels"])) for x in range(node["d"])]
    return [tuple(c) for c in itertools.product(*(_candidates(p) for p in node["parts"]))]


# --------------------------------------------------------------------------- a 5 % keep
def _more_keep(node: dict[str, Any]) -> None:
    """Raise every keep threshold 5 % (in place), and every claim with it, so the spec still loads."""
    kind = node["kind"]
    if kind == "direct":
        extra = node["keep"] // 20
        w = np.array(node["weights"], dtype=np.int64)
        take = (extra * w) // w.sum()
        take[int(np.argmax(w))] += extra - int(take.sum())
        node["keep"] += extra
        node["weights"] = (w - take).tolist()
    elif kind == "unary":
        node["a"] = [min(a + a // 20, GRID - 1) for a in node["a"]]
    for key in ("inner", "level_sampler"):
        if key in node:
            _more_keep(node[key])
    for child in node.get("items", []) + node.get("parts", []):
        _more_keep(child)
    if "epsilons" in node:
        node["epsilons"] = [e if e == "inf" else e + 1.0 for e in node["epsilons"]]
    if "levels" in node:  # each level's node claims the level's budget
        node["levels"] = [e + 1.0 for e in node["levels"]]
    if "level_epsilon" in node:
        node["level_epsilon"] = 2 * node["level_epsilon"] + 1.0


def _tampered(spec: Spec) -> Spec:
    data = spec.to_dict()
    _more_keep(data["sampler"]["root"])
    data["id"] = spec_id(data)
    return Spec(data, parse_node(data["sampler"]["root"]))


def _shift(true: list[Part], bad: list[Part]) -> float:
    """The largest move of one tested probability, in standard errors of one report."""
    best = 0.0
    for p, q in zip(true, bad, strict=True):
        sd = np.sqrt(p.probs * (1 - p.probs))
        moved = np.divide(np.abs(q.probs - p.probs), sd, out=np.zeros_like(sd), where=sd > 0)
        best = max(best, float(moved.max()))
    return best


@dataclass
class Plan:
    """The population of a case: classes (answer, users) and the n they add up to."""

    classes: list[tuple[Any, int]]

    @property
    def n(self) -> int:
        return sum(k for _, k in self.classes)


def _plan(spec: Spec) -> Plan:
    root, bad = spec.to_dict()["sampler"]["root"], _tampered(spec).to_dict()["sampler"]["root"]
    cands = _candidates(root)
    shifts = [_shift(_parts(root, c), _parts(bad, c)) for c in cands]
    heavy = int(np.argmax(shifts))
    n = int(min(max(N_MIN, math.ceil((Z_POWER / shifts[heavy]) ** 2 / HEAVY)), N_MAX))
    assert shifts[heavy] * math.sqrt(HEAVY * n) >= Z_POWER, f"{spec.question!r}: no answer gives the power at {N_MAX}"
    rest = [c for i, c in enumerate(cands) if i != heavy]
    others = [rest[(i * len(rest)) // 4] for i in range(4)] if len(rest) >= 4 else rest
    small = round((1 - HEAVY) * n / len(others))
    return Plan([(cands[heavy], n - small * len(others))] + [(c, small) for c in others])


# --------------------------------------------------------------------------- the tests of one class
def _chisquare(counts: np.ndarray, expected: np.ndarray) -> float | None:
    """Pearson's p-value with the cells expecting fewer than 20 pooled (None: one cell left)."""
    small = expected < 20
    obs, exp = list(counts[~small]), list(expected[~small])
    if small.any():
        obs.append(counts[small].sum())
        exp.append(expected[small].sum())
        if exp[-1] < 20 and len(exp) > 1:  # still thin: join the smallest other cell
            j = int(np.argmin(exp[:-1]))
            obs[j] += obs.pop()
            exp[j] += exp.pop()
    if len(exp) < 2:
        return None
    return float(stats.chisquare(obs, np.array(exp) * (sum(obs) / sum(exp))).pvalue)


def _binom(k: int, n: int, p: float) -> float | None:
    if p in (0.0, 1.0):
        assert k == n * p, f"{k} of {n} where the probability is {p}"
        return None
    return float(stats.binomtest(int(k), n, p).pvalue)


def _pvalues(part: Part, obs: np.ndarray) -> list[float]:
    """Every test of one part on one class's observations."""
    n = obs.shape[0]
    if part.kind == "item":
        counts = np.bincount(obs, minlength=part.probs.size)
        assert counts.size == part.probs.size, f"{part.column}: an output out of range"
        assert np.all(counts[part.probs == 0] == 0), f"{part.column}: an impossible output"
        ps = [_chisquare(counts, n * part.probs), _binom(counts[part.own], n, part.probs[part.own])]
    else:
        ones = obs.sum(axis=0)
        ps = [_binom(int(k), n, float(p)) for k, p in zip(ones, part.probs, strict=True)]
    return [p for p in ps if p is not None]


def _observed(batch: ReportBatch, part: Part, rows: slice) -> np.ndarray:
    col = batch.columns[part.column][rows]
    if part.kind == "bits":
        return np.unpackbits(col, axis=1, count=part.probs.size)
    assert np.all(col >= 0), f"{part.column}: a report without it"
    return col


def _as_of(spec: Spec, batches: list[ReportBatch]) -> list[ReportBatch]:
    """Batches of a tampered spec read as reports of ``spec`` (same shape, another id)."""
    return [ReportBatch(spec.id, b.ids, b.columns, spec.root) for b in batches]


def _fit(spec: Spec, plan: Plan, batches: list[ReportBatch]) -> tuple[float, int]:
    """Bonferroni p-value of the batches (one per class) against ``spec`` and the number of tests."""
    root = spec.to_dict()["sampler"]["root"]
    ps: list[float] = []
    for (answer, k), batch in zip(plan.classes, batches, strict=True):
        assert len(batch) == k and batch.spec == spec.id
        for part in _parts(root, answer):
            ps += _pvalues(part, _observed(batch, part, slice(None)))
    return min(1.0, len(ps) * min(ps)), len(ps)


# --------------------------------------------------------------------------- the clients
def _client_args(answer: Any, k: int, root: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """One class's answers and choices, as both clients take them."""
    kind = root["kind"]
    if kind == "leveled":
        return [answer[0]] * k, {"level": answer[1]}
    if kind == "attributes":
        items = [a if p["kind"] != "leveled" else a[0] for a, p in zip(answer, root["parts"], strict=True)]
        levels = [a[1] for a, p in zip(answer, root["parts"], strict=True) if p["kind"] == "leveled"]
        return [items] * k, ({"levels": levels} if levels else {})
    return [list(answer) if kind == "padding" else answer] * k, {}


def _python_batches(spec: Spec, plan: Plan) -> list[ReportBatch]:
    """The Python client's batches with OS randomness. (A :class:`Spec` object is trusted as
    built; the checks run when a spec is read, which the tampered one here never is.)"""
    client = Client(spec)
    root = spec.to_dict()["sampler"]["root"]
    out = []
    for answer, k in plan.classes:
        answers, choices = _client_args(answer, k, root)
        if "levels" in choices:
            choices = {"levels": [choices["levels"]] * k}
        out.append(client.reports(answers, **choices))
    return out


def _js_batches(spec: Spec, plan: Plan, tmp: Path) -> list[ReportBatch]:
    """The JS client's batches, ``crypto.getRandomValues`` as in a browser, through the driver."""
    root = spec.to_dict()["sampler"]["root"]
    calls = []
    for answer, k in plan.classes:
        answers, choices = _client_args(answer, k, root)
        calls.append({"method": "reports", "answers": answers, "choices": choices, "columns": True})
    (tmp / "spec.json").write_text(spec.to_json(), encoding="utf-8")
    (tmp / "task.json").write_text(json.dumps({"spec": "spec.json", "calls": calls}))
    proc = subprocess.run(
        [need_node(), str(DRIVER), str(tmp / "task.json")], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stdout[-500:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == len(calls)
    return [_columns_batch(line, spec) for line in lines]


def _columns_batch(line: str, spec: Spec) -> ReportBatch:
    """A batch the driver wrote column by column (``"columns": true``: the law, a million reports in
    a few MB; the JS client's JSON reports are read by the wire format in tests/test_js_client.py)."""
    data = json.loads(line)
    n = data["n"]
    ids = np.frombuffer(bytes.fromhex(data["ids"]), dtype=np.uint8).reshape(n, 16)
    cols = spec.root.empty_columns(n)
    assert data["columns"].keys() <= cols.keys(), f"the driver's columns {sorted(data['columns'])}"
    for name, col in data["columns"].items():
        raw = base64.b64decode(col["data"])
        if col["kind"] == "int":
            cols[name] = np.frombuffer(raw, dtype="<i4").astype(np.int64)
        else:
            cols[name] = np.frombuffer(raw, dtype=np.uint8).reshape(cols[name].shape)
    head = np.sort(ids[:, :8].copy().view("<u8").ravel())  # 64 of the 128 random bits: no repeat by chance
    assert n < 2 or np.all(head[1:] != head[:-1]), "repeated report ids"
    return ReportBatch(spec.id, ids, cols, spec.root)


# --------------------------------------------------------------------------- the tests
def test_the_law_from_the_spec_is_the_libraries_channel() -> None:
    """``_parts`` reads the wire format as pldp's mechanisms do (a check of the test's own model)."""
    for name in ("krr", "iprr", "oue", "idue-opt2"):
        mech = CASES[name]
        root = spec_of(mech, name).to_dict()["sampler"]["root"]
        for x in range(mech.d):
            (part,) = _parts(root, x)
            if part.kind == "item":
                np.testing.assert_array_equal(part.probs, mech.channel()[x])
            else:
                want = np.where(np.arange(mech.d) == x, mech.a, mech.b)
                np.testing.assert_allclose(part.probs, want, rtol=0, atol=2.0**-32)


def test_the_statistics_reject_a_wrong_law() -> None:
    """The battery itself has power: reports of one law tested against a 5 %-shifted one fail,
    against their own pass (a check that ``_fit`` is not vacuous)."""
    spec = spec_of(CASES["krr"], "krr")
    plan = _plan(spec)
    batches = _python_batches(spec, plan)
    assert _fit(spec, plan, batches)[0] > ALPHA
    bad = _tampered(spec)
    assert _fit(bad, plan, _as_of(bad, batches))[0] < ALPHA


@pytest.mark.parametrize("name", list(CASES))
def test_python_client_fits_and_a_5pct_keep_is_rejected(name: str) -> None:
    spec = spec_of(CASES[name], name)
    plan = _plan(spec)
    assert plan.n >= N_MIN
    p, m = _fit(spec, plan, _python_batches(spec, plan))
    assert p > ALPHA, f"{name}: the Python client does not fit its spec (p = {p:.3g} over {m} tests, n = {plan.n})"
    bad = _tampered(spec)
    p_bad, _ = _fit(spec, plan, _as_of(spec, _python_batches(bad, plan)))
    assert p_bad < ALPHA, f"{name}: a 5 % keep went unnoticed (p = {p_bad:.3g}, n = {plan.n})"


#: One case of each shape of sampler tree the JS client interprets (direct, unary, padding, a level
#: reported perturbed, in clear and hidden, attributes). The client runs the spec's tree, so these
#: take every path of its code from its random words to a report; for every other case,
#: test_js_and_python_clients_write_the_same_bytes (tests/test_js_client.py) shows the JS client
#: writes the Python client's bytes from the same words, and the Python client's law is tested here
#: on every case (test_python_client_fits_and_a_5pct_keep_is_rejected). iprr is also the law the
#: survey-page browser test relies on (tests/test_service_browser.py).
JS_CASES = ["iprr", "oue", "idue-ps", "febsf-oue", "rcf", "pbp", "mpldp"]


@pytest.mark.usefixtures("node")  # skips without Node.js, fails under PLDP_NODE_TESTS=required
@pytest.mark.parametrize("name", JS_CASES)
def test_js_client_fits_and_a_5pct_keep_is_rejected(name: str, tmp_path: Path) -> None:
    spec = spec_of(CASES[name], name)
    plan = _plan(spec)
    p, m = _fit(spec, plan, _js_batches(spec, plan, tmp_path))
    assert p > ALPHA, f"{name}: the JS client does not fit its spec (p = {p:.3g} over {m} tests, n = {plan.n})"
    bad = _tampered(spec)
    got = _js_batches(bad, plan, tmp_path)  # the JS client loads it: its claims were raised with it
    p_bad, _ = _fit(spec, plan, _as_of(spec, got))
    assert p_bad < ALPHA, f"{name}: a 5 % keep went unnoticed in JS (p = {p_bad:.3g}, n = {plan.n})"
