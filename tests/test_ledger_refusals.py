"""A ledger refusal must not reveal the answer: whether a report is sent or refused depends on the
counts and the specs only (pldp.ledger, the accounting rule), in Python, in Node and in a browser.

Before, a memoized spec was charged eps_perm once per value *new to the memo*, and the caps were
checked against that: with ``Caps(total=2)`` and ``pldp.LGRR(2, 1, 3)``, the history a, a, a, a sent
four reports, and a, a, b, a sent two, was refused on the third and sent the fourth: the collector,
which sees which reports arrive, learnt that the answer changed. Now every memoized report is
charged as if its value were new, until d reports (the charged spend), and the values actually new
are recorded apart, for display (the per-value spend).

Each scenario (an owner's total cap, a spec's own caps, a daily cap under an injected clock, a
family cap beside another family, the device cap over two families) runs histories that differ
only in when and whether the answer changes (a,a,a,a; a,a,b,a; a,b,c,a; b,b,b,b; and longer ones
drawn from a seeded generator) through :class:`pldp.client.Client`, through the JS client in Node
(``Ledger.memory`` and ``Ledger.file`` with a ``FileMemoStore``) and through the JS client in
headless Chromium (``Ledger.browser()``: localStorage, and the IndexedDB memo store) on a page of a
real collector process. The sent/refused sequences must be identical across the histories of a
group, and across the four runs; the spends must be the formula's.
"""

from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.deploy.memostore import MemoryStore
from pldp.ledger import Caps, Ledger, LedgerCapError, Spend
from tests import browser as chrome
from tests.needs import need_node
from tests.service_server import Server
from tests.test_ledger import DAY, NOON, Clock, Counted

ROOT = Path(__file__).resolve().parents[1]

#: The memoized spec of the bug: eps_perm = 2, eps_1 = 1, d = 3 values.
MEMO = Spec.from_mechanism(pldp.LGRR(2.0, 1.0, 3), question="Mood?", labels=list("abc"), memo_key="mood")
#: The same chain with its own caps (the same memo key: one family).
MEMO_CAPPED = Spec.from_mechanism(
    pldp.LGRR(2.0, 1.0, 3), question="Mood?", labels=list("abc"), memo_key="mood", caps={"day": 2, "total": 4}
)
#: A fresh spec of another family (eps = 1 per report), reported before each memoized report.
FRESH = Spec.from_mechanism(pldp.KRR(1.0, 3), question="OS?", labels=["x", "y", "z"])


@dataclass(frozen=True)
class Scenario:
    """A device: the memoized spec it reports, its owner's caps, how many reports a UTC day holds
    (None: all on one day), and whether a report of :data:`FRESH` precedes each memoized one."""

    name: str
    spec: Spec = MEMO
    caps: dict[str, float] = field(default_factory=dict)
    per_day: int | None = None
    other: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "spec": self.spec.to_json(),
            "caps": self.caps,
            "perDay": self.per_day,
            "other": FRESH.to_json() if self.other else None,
        }


SCENARIOS = [
    Scenario("the owner's total cap", caps={"total": 2.0}),
    Scenario("the spec's own caps", spec=MEMO_CAPPED, per_day=2),
    Scenario("a daily cap", caps={"day": 4.0}, per_day=3),
    Scenario("a family cap", caps={"family_total": 4.0}, other=True),
    Scenario("the device cap", caps={"total": 5.0}, other=True),
]

SHORT = ["aaaa", "aaba", "abca", "bbbb"]
_rng = np.random.default_rng(20240601)
LONG = ["a" * 12, "abc" * 4, *("".join("abc"[i] for i in _rng.integers(0, 3, 12)) for _ in range(6))]
HISTORIES = [*SHORT, *LONG]


# ------------------------------------------------------------------------------------ Python


def python_run(sc: Scenario, history: str) -> dict[str, Any]:
    """One device through :class:`pldp.client.Client`: "sent" or "refused" per report, and the total spend."""
    clock = Clock(NOON)
    ledger = Ledger(None, caps=Caps(**sc.caps), clock=clock)
    client = Client(sc.spec, Counted(), store=MemoryStore(), ledger=ledger)
    other = Client(FRESH, Counted(), ledger=ledger) if sc.other else None
    out = []
    for i, x in enumerate(history):
        if sc.per_day:
            clock.t = NOON + DAY * (i // sc.per_day)
        for c, answer in ((other, "x"), (client, x)):
            if c is None:
                continue
            try:
                c.report(answer)
                out.append("sent")
            except LedgerCapError:
                out.append("refused")
    v = ledger.view().total
    return {"out": out, "spend": [v.epsilon, v.reports, v.values, v.values_epsilon]}


@pytest.fixture(scope="module")
def python_runs() -> dict[str, dict[str, Any]]:
    return {f"{sc.name}|{h}": python_run(sc, h) for sc in SCENARIOS for h in HISTORIES}


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda sc: sc.name)
def test_python_refusals_do_not_depend_on_the_answers(sc: Scenario, python_runs: dict[str, dict[str, Any]]) -> None:
    _alike({h: python_runs[f"{sc.name}|{h}"] for h in HISTORIES})
    for group in (SHORT, LONG):
        runs = [python_runs[f"{sc.name}|{h}"] for h in group]
        assert "refused" in runs[0]["out"] and "sent" in runs[0]["out"]  # the caps bite, after some reports
        # the charged spend and the counts are the same for every history; only the per-value spend differs
        assert all(r["spend"][:2] == runs[0]["spend"][:2] for r in runs)


def test_the_bug_as_reported() -> None:
    """``Caps(total=2)``, ``pldp.LGRR(2, 1, 3)``: a, a, a, a and a, a, b, a are treated alike."""
    sc = SCENARIOS[0]
    assert python_run(sc, "aaaa")["out"] == python_run(sc, "aaba")["out"] == ["sent", "refused", "refused", "refused"]


def test_the_charged_spend_is_the_formula_and_the_per_value_spend_counts_the_new_values() -> None:
    """Random batches of a memoized spec over several UTC days: after each, the charged spend is
    min(R, d) eps_perm (R the reports made: counts only), today's min(R, d) - min(R_0, d) times it (R_0
    the reports before the day), and the per-value spend eps_perm times the distinct values reported."""
    rng = np.random.default_rng(7)
    spec = Spec.from_mechanism(pldp.LGRR(1.5, 0.5, 6), question="?", labels=list("abcdef"), memo_key="six")
    clock = Clock(NOON)
    ledger = Ledger(None, clock=clock)
    client = Client(spec, Counted(), store=MemoryStore(), ledger=ledger)
    seen: set[int] = set()
    reports = before_today = 0
    for day in range(4):
        clock.t, before_today, day_seen = NOON + day * DAY, reports, set()
        for _ in range(3):
            batch = rng.integers(0, 2 + day, rng.integers(1, 4)).tolist()  # some days bring new values
            client.reports(batch)
            new = set(batch) - seen
            seen |= new
            day_seen |= new
            reports += len(batch)
            view = ledger.view()
            charged = (min(reports, 6) - min(before_today, 6)) * 1.5
            assert view.total == Spend(min(reports, 6) * 1.5, reports, len(seen), 1.5 * len(seen))
            assert view.today == Spend(charged, reports - before_today, len(day_seen), 1.5 * len(day_seen))
            assert client.last_new_values == len(new)
    assert len(seen) < 6 < reports  # some values never came: the per-value spend stayed below the charged one


# ------------------------------------------------------------------------------------ JS

#: The JS twin of :func:`python_run`: ``runHistory(C, L, makeLedger, makeStore, scenario, history)``
#: with C the client module, L the ledger module, ``makeLedger(options)`` a ledger (or its Promise)
#: and ``makeStore()`` a memo store; Node and the browser run it as it is.
RUNNER = """
async function runHistory(C, L, makeLedger, makeStore, sc, history) {
  const NOON = __NOON__, DAY = __DAY__;
  let t = NOON;
  const ledger = await makeLedger({ caps: sc.caps, clock: () => t });
  const client = new C.Client(await C.loadSpec(sc.spec), { store: makeStore(), ledger });
  const other = sc.other ? new C.Client(await C.loadSpec(sc.other), { ledger }) : null;
  const out = [];
  const attempt = async (c, answer) => {
    try {
      await c.report(answer);
      out.push("sent");
    } catch (err) {
      if (err.name !== "LedgerCapError") throw err;
      out.push("refused");
    }
  };
  for (let i = 0; i < history.length; i++) {
    if (sc.perDay) t = NOON + DAY * Math.floor(i / sc.perDay);
    if (other) await attempt(other, "x");
    await attempt(client, history[i]);
  }
  const v = ledger.view().total;
  return { out, spend: [v.epsilon, v.reports, v.values, v.valuesEpsilon] };
}
""".replace("__NOON__", repr(NOON)).replace("__DAY__", repr(DAY))


def _alike(runs: dict[str, dict[str, Any]]) -> None:
    """Within each group of histories, the same sent/refused sequence (``runs``: history to run)."""
    for group in (SHORT, LONG):
        outs = {h: runs[h]["out"] for h in group}
        assert len({tuple(o) for o in outs.values()}) == 1, outs


def _same(js: dict[str, Any], py: dict[str, Any]) -> bool:
    """The same outcomes and spends (to 1e-12: sums of binary fractions)."""
    return (
        js["out"] == py["out"]
        and js["spend"][1:3] == py["spend"][1:3]
        and all(
            math.isclose(a, b, rel_tol=0, abs_tol=1e-12)
            for a, b in zip(js["spend"][::3], py["spend"][::3], strict=True)
        )
    )


def test_node_refusals_are_pythons(tmp_path: Path, python_runs: dict[str, dict[str, Any]]) -> None:
    """The JS client in Node, with a ledger in memory and with a ledger file (and its lock) beside a memo file."""
    cases = {"scenarios": [sc.to_json() for sc in SCENARIOS], "histories": HISTORIES}
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    script = f"""
        import {{ readFileSync }} from "node:fs";
        import * as C from "{ROOT}/clients/js/pldp-client.mjs";
        import * as L from "{ROOT}/clients/js/pldp-ledger.mjs";
        {RUNNER}
        const {{ scenarios, histories }} = JSON.parse(readFileSync("{tmp_path}/cases.json", "utf8"));
        const out = {{}};
        let n = 0;
        for (const sc of scenarios) {{
          for (const h of histories) {{
            const memory = (o) => L.Ledger.memory(o);
            out[`memory|${{sc.name}}|${{h}}`] = await runHistory(C, L, memory, () => new C.MemoryMemoStore(), sc, h);
            const dir = `{tmp_path}/device-${{n++}}`;
            const file = (o) => L.Ledger.file(`${{dir}}/ledger.json`, o);
            const store = () => new C.FileMemoStore(`${{dir}}/memo.json`);
            out[`file|${{sc.name}}|${{h}}`] = await runHistory(C, L, file, store, sc, h);
          }}
        }}
        console.log(JSON.stringify(out));
    """
    run = subprocess.run(
        [need_node(), "--input-type=module", "-e", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stderr
    node = json.loads(run.stdout)
    for sc in SCENARIOS:
        for kind in ("memory", "file"):
            _alike({h: node[f"{kind}|{sc.name}|{h}"] for h in HISTORIES})
        for h in HISTORIES:
            py = python_runs[f"{sc.name}|{h}"]
            for kind in ("memory", "file"):
                assert _same(node[f"{kind}|{sc.name}|{h}"], py), (kind, sc.name, h, node[f"{kind}|{sc.name}|{h}"], py)


# ------------------------------------------------------------------------------------ the browser

server = pytest.fixture(scope="module")(chrome.serve)
browser = pytest.fixture(chrome.blank)

#: One scenario's histories in the page: the ledger in localStorage (Ledger.browser, a key per
#: history: a device each), the memo store in IndexedDB (a database per history).
IN_THE_PAGE = """
const [sc, histories, done] = arguments;
Promise.all([import('/static/pldp-client.mjs'), import('/static/pldp-ledger.mjs')]).then(async ([C, L]) => {
  __RUNNER__
  const out = {};
  for (const [i, h] of histories.entries()) {
    const ledger = (o) => L.Ledger.browser({ key: `pldp-ledger-test-${i}`, ...o });
    const store = () => new C.IndexedDBMemoStore(`pldp-memo-test-${i}`);
    out[h] = await runHistory(C, L, ledger, store, sc, h);
  }
  done(out);
}).catch((e) => done({ error: String(e && e.stack || e) }));
""".replace("__RUNNER__", RUNNER)


@pytest.mark.slow
def test_browser_refusals_are_pythons(browser: Any, server: Server, python_runs: dict[str, dict[str, Any]]) -> None:
    """The JS client in headless Chromium (the survey page's modules, served by a real collector):
    Ledger.browser() in localStorage and the IndexedDB memo store refuse exactly as Python does."""
    browser.get(f"{server.url}/docs")
    for sc in SCENARIOS:
        chrome.new_device(browser, server.url)  # no ledger, no memo: every history on a new device
        browser.get(f"{server.url}/docs")
        got = browser.execute_async_script(IN_THE_PAGE, sc.to_json(), HISTORIES)
        assert "error" not in got, got
        _alike(got)
        for h in HISTORIES:
            assert _same(got[h], python_runs[f"{sc.name}|{h}"]), (sc.name, h, got[h], python_runs[f"{sc.name}|{h}"])
        keys = chrome.js(browser, "return Object.keys(localStorage).filter((k) => k.startsWith('pldp-ledger-test-'))")
        assert len(keys) == len(HISTORIES)
        doc = json.loads(chrome.js(browser, "return localStorage.getItem('pldp-ledger-test-0')"))
        assert doc["format"] == "pldp.ledger/2"
    chrome.new_device(browser, server.url)
    assert chrome.errors(browser) == []
