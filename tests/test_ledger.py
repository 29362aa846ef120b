"""The device's privacy ledger (pldp.ledger, issue 27 item 3): the accounting rule (a charged spend
from counts only, the per-value spend for display), the caps that refuse a batch before anything is
drawn, the file kept across restarts, migrated from format 1 and refused when corrupt, and the day
boundary of an injected clock. That refusals do not depend on the answers: tests/test_ledger_refusals.py."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.channel import MemoInput
from pldp.client import Client
from pldp.deploy import Spec
from pldp.errors import ParameterError
from pldp.ledger import Caps, Ledger, LedgerCapError, LedgerError, Spend, new_values, spec_cost

ROOT = Path(__file__).resolve().parents[1]

KRR = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Your OS?", labels=["linux", "mac", "windows"])
OTHER = Spec.from_mechanism(pldp.KRR(0.5, 2), question="Coffee?", labels=["yes", "no"])
DAY = 86_400.0
NOON = 20_000 * DAY + DAY / 2  # 2024-10-04 12:00 UTC


LGRR = Spec.from_mechanism(pldp.LGRR(2.0, 0.5, 4), question="Your OS?", labels=list("abcd"), memo_key="os-daily")


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class Counted:
    """A word source that counts the words it gave."""

    def __init__(self) -> None:
        self.words = 0
        self.rng = np.random.default_rng(7)

    def __call__(self, n: int) -> np.ndarray:
        self.words += n
        return self.rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)


def test_the_charge_follows_the_accounting_rule() -> None:
    # fresh reports: n times the spec's worst-case whole-report epsilon, whatever came before
    assert spec_cost(KRR).charge(3, 0) == 3.0 == spec_cost(KRR).charge(3, 100) and spec_cost(KRR).family == KRR.id
    assert spec_cost(KRR).spend(3, 0) == 3.0 and spec_cost(KRR).domain == 0
    febsf = Spec.from_mechanism(pldp.protocols.FEBSF([0.5, 1.0, 2.0], 0.5, 6, "krr"), question="Day?")
    assert spec_cost(febsf).per_report == pldp.deploy.verify(febsf).ldp_epsilon > 2.0  # the worst level
    # memoized: (min(R + n, d) - min(R, d)) eps_perm, R the family's earlier reports; family = memo key
    cost = spec_cost(LGRR)
    assert cost.memoized and cost.family == "os-daily" and cost.per_value == 2.0 and cost.report_epsilon == 0.5
    assert cost.domain == 4
    assert [cost.charge(1, r) for r in range(6)] == [2.0, 2.0, 2.0, 2.0, 0.0, 0.0]
    assert (
        cost.charge(30, 0) == 8.0 and cost.charge(2, 3) == 2.0 and cost.charge(5, 4) == 0.0 and cost.charge(0, 0) == 0
    )
    # the per-value spend: eps_perm per value new to the memo (display only)
    assert cost.spend(30, 1) == 2.0 and cost.spend(30, 0) == 0.0 and cost.spend(5, 2) == 4.0
    ledger = Ledger(None, clock=Clock(NOON))
    for day, values in enumerate((1, 0, 0, 1, 0), start=1):  # 5 daily reports, a second value on the 4th
        ledger.charge(LGRR, 1, values, round=day)
    (fam,) = ledger.view().families
    assert fam.total == Spend(8.0, 5, 2, 4.0) and fam.report_epsilon == 0.5
    assert fam.campaigns == {LGRR.id: (1, 2, 3, 4, 5)}


def test_new_values_counts_the_reports_that_draw_their_permanent_response() -> None:
    root = pldp.LGRR(2.0, 0.5, 4).sampler()
    items = np.array([2, 0, 2, 3])
    assert new_values(root, MemoInput.fresh(root, items)) == 4
    # the memo holds 2; 0 and 3 are new; the second 2 copies the first's
    inp = MemoInput(items, np.array([1, -1, 1, -1]), np.array([-1, 1, -1, 3]))
    assert new_values(root, inp) == 2
    assert new_values(KRR.root, None) == 0


@pytest.mark.parametrize(
    ("caps", "which"),
    [
        (Caps(day=3.0), "device's daily cap"),
        (Caps(total=3.0), "device's total cap"),
        (Caps(family_day=3.0), "daily cap of this family"),
        (Caps(family_total=3.0), "total cap of this family"),
    ],
)
def test_a_cap_refuses_before_anything_is_drawn_and_the_refusal_spends_nothing(
    tmp_path: Path, caps: Caps, which: str
) -> None:
    path = tmp_path / "ledger.json"
    words = Counted()
    client = Client(KRR, words, ledger=path, caps=caps)
    client.reports(["mac", "linux"])  # 2.0 of 3
    drawn, before = words.words, path.read_bytes()
    with pytest.raises(LedgerCapError, match=which) as exc:
        client.reports(["mac", "linux"])  # 4.0 > 3
    assert "Nothing was drawn or sent" in str(exc.value)
    assert words.words == drawn and path.read_bytes() == before  # no word drawn, nothing recorded
    view = client.ledger()
    assert view is not None and view.total == Spend(2.0, 2, 0, 2.0) and view.caps == caps
    client.report("windows")  # 3.0: exactly the cap is allowed
    with pytest.raises(LedgerCapError):
        client.report("windows")


def test_the_device_caps_add_up_families_and_a_family_cap_does_not() -> None:
    ledger = Ledger(None, caps=Caps(family_total=2.0), clock=Clock(NOON))
    ledger.charge(KRR, 2)
    ledger.charge(OTHER, 4)  # another family: 2.0, its own cap
    with pytest.raises(LedgerCapError):
        ledger.charge(KRR, 1)
    assert ledger.view().total == Spend(4.0, 6, 0, 4.0)
    device = Ledger(None, caps=Caps(total=2.5), clock=Clock(NOON))
    device.charge(KRR, 2)
    with pytest.raises(LedgerCapError, match="device's total cap"):
        device.charge(OTHER, 2)  # 2 + 1 > 2.5
    device.charge(OTHER, 1)  # 2 + 0.5


def test_a_zero_charge_is_never_refused() -> None:
    ledger = Ledger(None, caps=Caps(day=8.0), clock=Clock(NOON))
    assert ledger.charge(LGRR, 4, 1) == 8.0  # d = 4 reports: each could have drawn a permanent response
    assert ledger.charge(LGRR, 10, 0) == 0.0  # no value can be new any more: nothing more is charged
    assert ledger.charge(LGRR, 10, 3) == 0.0  # whatever the answers were
    with pytest.raises(LedgerCapError):
        ledger.charge(KRR, 1)
    assert ledger.view().today == Spend(8.0, 24, 4, 8.0)


def test_a_restart_keeps_the_spend(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "ledger.json"
    Client(KRR, ledger=path).reports(["mac"] * 3)
    assert os.stat(path).st_mode & 0o777 == 0o600
    again = Client(KRR, ledger=path, caps=Caps(total=4.0))  # a new process, the same file
    view = again.ledger()
    assert view is not None and view.total == Spend(3.0, 3, 0, 3.0) and view.families[0].campaigns == {KRR.id: ()}
    again.report("mac")
    with pytest.raises(LedgerCapError):
        again.report("mac")
    assert json.loads(path.read_text())["families"][KRR.id]["epsilon"] == 4.0


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        '{"format": "pldp.ledger/0", "families": {}}',
        '{"format": "pldp.ledger/1", "families": []}',
        "corrupt-family",
        "negative",
        "format-1-members",
        "format-2-members",
    ],
)
def test_a_corrupt_ledger_refuses_to_report(tmp_path: Path, content: str) -> None:
    path = tmp_path / "ledger.json"
    Client(KRR, ledger=path).report("mac")
    doc = json.loads(path.read_text())
    if content == "corrupt-family":
        del doc["families"][KRR.id]["day"]
        content = json.dumps(doc)
    elif content == "negative":
        doc["families"][KRR.id]["epsilon"] = -1.0
        content = json.dumps(doc)
    elif content == "format-1-members":  # a format 2 file without the per-value spend
        del doc["families"][KRR.id]["values_epsilon"]
        content = json.dumps(doc)
    elif content == "format-2-members":  # a format 1 file with them
        doc["format"] = "pldp.ledger/1"
        content = json.dumps(doc)
    path.write_text(content)
    words = Counted()
    client = Client(KRR, words, ledger=path)
    with pytest.raises(LedgerError, match="refusing to report"):
        client.report("mac")
    with pytest.raises(LedgerError):
        client.ledger()
    assert words.words == 0 and path.read_text() == content  # nothing drawn, the file left as it was


def test_a_ledger_open_to_other_users_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ledger.json"
    Client(KRR, ledger=path).report("mac")
    path.chmod(0o644)
    with pytest.raises(LedgerError, match="open to other users"):
        Client(KRR, ledger=path).report("mac")


def test_the_day_boundary_restarts_the_daily_spend_but_not_the_total(tmp_path: Path) -> None:
    clock = Clock(20_000 * DAY + DAY - 1)  # 23:59:59 UTC
    ledger = Ledger(tmp_path / "ledger.json", caps=Caps(day=2.0, total=3.0), clock=clock)
    client = Client(KRR, ledger=ledger)
    client.reports(["mac", "mac"])
    with pytest.raises(LedgerCapError, match="daily"):
        client.report("mac")
    clock.t += 1  # midnight UTC: a new day
    view = client.ledger()
    assert (
        view is not None and view.today == Spend() and view.total == Spend(2.0, 2, 0, 2.0) and view.day == "2024-10-05"
    )
    client.report("mac")  # today 1, in all 3
    with pytest.raises(LedgerCapError, match="total"):
        client.report("mac")
    view = client.ledger()
    assert view is not None and view.today == Spend(1.0, 1, 0, 1.0) and view.families[0].today == Spend(1.0, 1, 0, 1.0)


def test_an_unbounded_spend_is_stored_as_null_and_read_back_as_inf(tmp_path: Path) -> None:
    spec = Spec.from_mechanism(
        pldp.IPRR(pldp.ItemBudgets.from_array([0.5, float("inf")])), question="?", labels=["x", "y"]
    )
    ledger = Ledger(tmp_path / "ledger.json", clock=Clock(NOON))
    assert ledger.charge(spec, 1) == math.inf and ledger.charge(spec, 0) == 0.0
    assert json.loads((tmp_path / "ledger.json").read_text())["families"][spec.id]["epsilon"] is None
    assert ledger.view().total.epsilon == math.inf
    with pytest.raises(LedgerCapError):
        Ledger(tmp_path / "ledger.json", caps=Caps(total=100.0)).charge(spec, 1)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ParameterError):
        Caps(day=-1.0)
    with pytest.raises(ParameterError):
        Client(KRR, caps=Caps(day=1.0))  # caps without a ledger would do nothing
    ledger = Ledger(None)
    for args, kw in [((KRR, -1), {}), ((KRR, 1, 2), {}), ((KRR, 1), {"round": 0})]:
        with pytest.raises(ParameterError):
            ledger.charge(*args, **kw)


def test_the_python_and_the_node_client_keep_one_ledger(tmp_path: Path) -> None:
    """A file the Python client wrote, the JS client (Node) reads, charges and writes, and back."""
    import subprocess

    from tests.needs import need_node

    node = need_node()
    path = tmp_path / "ledger.json"
    Client(KRR, ledger=path).reports(["mac", "linux"])
    (tmp_path / "spec.json").write_text(OTHER.to_json())
    script = f"""
        import {{ readFileSync }} from "node:fs";
        import {{ loadSpec, Client }} from "{ROOT}/clients/js/pldp-client.mjs";
        import {{ Ledger }} from "{ROOT}/clients/js/pldp-ledger.mjs";
        const spec = await loadSpec(readFileSync("{tmp_path}/spec.json", "utf8"));
        const ledger = await Ledger.file("{path}", {{ caps: {{ total: 3.5 }} }});
        const before = ledger.view().total;
        new Client(spec, {{ ledger }}).reports(["yes", "no", "yes"]);
        let refused = "";
        try {{ new Client(spec, {{ ledger }}).report("no"); }} catch (err) {{ refused = err.name; }}
        console.log(JSON.stringify({{ before, after: ledger.view().total, refused }}));
    """
    out = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen == {
        "before": {"epsilon": 2, "reports": 2, "values": 0, "valuesEpsilon": 2},
        "after": {"epsilon": 3.5, "reports": 5, "values": 0, "valuesEpsilon": 3.5},
        "refused": "LedgerCapError",
    }
    view = Ledger(path).view()
    assert view.total == Spend(3.5, 5, 0, 3.5) and {f.family for f in view.families} == {KRR.id, OTHER.id}


def test_a_memoized_client_is_charged_the_worst_case_and_records_its_new_values() -> None:
    """Client(spec, store=..., ledger=...): each report is charged eps_perm until d = 4 reports, whatever
    its value; the values new to the memo are recorded apart (per-value spend); a refused batch draws no
    permanent response (the memo is left as it was)."""
    from pldp.deploy.memostore import MemoryStore

    store, words = MemoryStore(), Counted()
    ledger = Ledger(None, caps=Caps(family_total=6.0), clock=Clock(NOON))
    client = Client(LGRR, words, store=store, ledger=ledger)
    client.reports(["a", "a"])
    assert client.last_new_values == 1 and ledger.view().total == Spend(4.0, 2, 1, 2.0)
    client.report("b")
    assert client.last_new_values == 1 and ledger.view().total == Spend(6.0, 3, 2, 4.0)
    drawn, memo = words.words, json.dumps(store._memos, sort_keys=True)
    for answer in ("a", "c"):  # a value the memo holds is refused as a new one is: 8 > 6
        with pytest.raises(LedgerCapError, match="total cap of this family is epsilon = 6, 6 is spent in all"):
            client.report(answer)
    assert words.words == drawn and json.dumps(store._memos, sort_keys=True) == memo
    (fam,) = ledger.view().families
    assert fam.family == "os-daily" and fam.report_epsilon == pytest.approx(0.5) and fam.total.values == 2
    # once d reports are charged no value can be new: later reports charge nothing and are never refused
    roomy = Ledger(None, caps=Caps(family_total=8.0), clock=Clock(NOON))
    again = Client(LGRR, words, store=MemoryStore(), ledger=roomy)
    again.reports(["a"] * 30)
    again.reports(["b", "c", "d", "a"])
    assert roomy.view().total == Spend(8.0, 34, 4, 8.0)


def test_the_node_client_charges_a_memoized_spec_the_worst_case(tmp_path: Path) -> None:
    import subprocess

    from tests.needs import need_node

    (tmp_path / "spec.json").write_text(LGRR.to_json())
    script = f"""
        import {{ readFileSync }} from "node:fs";
        import {{ loadSpec, Client, MemoryMemoStore }} from "{ROOT}/clients/js/pldp-client.mjs";
        import {{ Ledger }} from "{ROOT}/clients/js/pldp-ledger.mjs";
        const spec = await loadSpec(readFileSync("{tmp_path}/spec.json", "utf8"));
        const ledger = Ledger.memory({{ caps: {{ family_total: 7 }} }});
        const client = new Client(spec, {{ store: new MemoryMemoStore(), ledger }});
        await client.reports(["a", "a", "b"]);
        const refused = [];
        for (const x of ["a", "c"]) {{
          try {{ await client.report(x); refused.push(""); }} catch (err) {{ refused.push(err.name); }}
        }}
        const fam = ledger.view().families[0];
        console.log(JSON.stringify({{ family: fam.family, total: fam.total, refused }}));
    """
    out = subprocess.run(
        [need_node(), "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "family": "os-daily",
        "total": {"epsilon": 6, "reports": 3, "values": 2, "valuesEpsilon": 4},
        "refused": ["LedgerCapError", "LedgerCapError"],
    }


#: A ledger written by format 1 (epsilon: eps_perm per value new to the memo), on NOON's day.
V1 = {
    "format": "pldp.ledger/1",
    "families": {
        "os-daily": {  # memoized (values > 0): 5 reports, 2 values at eps_perm = 2
            "epsilon": 4.0, "reports": 5, "values": 2, "report_epsilon": 0.5,
            "day": "2024-10-04", "day_epsilon": 2.0, "day_reports": 1, "day_values": 1,
            "campaigns": {LGRR.id: {"reports": 5, "rounds": [1, 2, 3, 4, 5]}},
        },
        KRR.id: {  # fresh (values == 0): n * eps, kept as it is
            "epsilon": 3.0, "reports": 3, "values": 0, "report_epsilon": 1.0,
            "day": "2024-10-03", "day_epsilon": 1.0, "day_reports": 1, "day_values": 0,
            "campaigns": {KRR.id: {"reports": 3, "rounds": [], "question": "Your OS?"}},
        },
        "unbounded": {  # memoized, eps_perm infinite
            "epsilon": None, "reports": 2, "values": 1, "report_epsilon": None,
            "day": "2024-10-04", "day_epsilon": None, "day_reports": 2, "day_values": 1,
            "campaigns": {},
        },
    },
}  # fmt: skip


def test_a_format_1_ledger_is_migrated_conservatively(tmp_path: Path) -> None:
    """The memoized family is charged reports * (epsilon / values), an upper bound of min(R, d) eps_perm
    from counts only (today: day_reports times it), its old epsilon kept as the per-value spend; the
    fresh family keeps its spend; the next charge writes format 2."""
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(V1))
    path.chmod(0o600)
    view = Ledger(path, clock=Clock(NOON)).view()
    fams = {f.family: f for f in view.families}
    assert fams["os-daily"].total == Spend(10.0, 5, 2, 4.0) and fams["os-daily"].today == Spend(2.0, 1, 1, 2.0)
    assert fams[KRR.id].total == Spend(3.0, 3, 0, 3.0) and fams[KRR.id].today == Spend()
    assert fams["unbounded"].total == Spend(math.inf, 2, 1, math.inf) == fams["unbounded"].today
    assert view.total.epsilon == math.inf and fams["os-daily"].campaigns == {LGRR.id: (1, 2, 3, 4, 5)}
    assert path.read_text() == json.dumps(V1)  # reading changes nothing
    # R = 5 >= d = 4: nothing more is charged to os-daily; the caps see the migrated charged spends
    ledger = Ledger(path, caps=Caps(family_total=10.0), clock=Clock(NOON))
    assert ledger.charge(LGRR, 3, 1, round=6) == 0.0
    with pytest.raises(LedgerCapError, match="total cap of this family is epsilon = 10, 3 is spent in all"):
        ledger.charge(KRR, 8)
    doc = json.loads(path.read_text())
    assert doc["format"] == "pldp.ledger/2" and doc["families"]["os-daily"]["epsilon"] == 10.0
    assert doc["families"]["os-daily"]["values_epsilon"] == 6.0 and doc["families"]["os-daily"]["reports"] == 8
    assert doc["families"]["unbounded"]["epsilon"] is None and doc["families"][KRR.id]["values_epsilon"] == 3.0


def test_the_node_ledger_migrates_a_format_1_file_as_python_does(tmp_path: Path) -> None:
    import subprocess

    from tests.needs import need_node

    path = tmp_path / "ledger.json"
    path.write_text(json.dumps(V1))
    path.chmod(0o600)
    script = f"""
        import {{ Ledger }} from "{ROOT}/clients/js/pldp-ledger.mjs";
        const view = (await Ledger.file("{path}", {{ clock: () => {NOON} }})).view();
        const inf = (x) => (x === Infinity ? "inf" : x);
        const spend = (s) => [inf(s.epsilon), s.reports, s.values, inf(s.valuesEpsilon)];
        console.log(JSON.stringify(view.families.map((f) => [f.family, spend(f.total), spend(f.today)])));
    """
    out = subprocess.run(
        [need_node(), "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr

    def spend(s: Spend) -> list[Any]:
        return [
            ("inf" if math.isinf(x) else x) if isinstance(x, float) else x
            for x in (s.epsilon, s.reports, s.values, s.values_epsilon)
        ]

    python = Ledger(path, clock=Clock(NOON)).view()
    assert json.loads(out.stdout) == [[f.family, spend(f.total), spend(f.today)] for f in python.families]
