"""The device's privacy ledger (pldp.ledger, issue 27 item 3): the accounting rule, the caps that
refuse a batch before anything is drawn, the file kept across restarts and refused when corrupt,
and the day boundary of an injected clock."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

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
    # fresh reports: n times the spec's worst-case whole-report epsilon
    assert spec_cost(KRR).charge(3, 0) == 3.0 and spec_cost(KRR).family == KRR.id
    febsf = Spec.from_mechanism(pldp.protocols.FEBSF([0.5, 1.0, 2.0], 0.5, 6, "krr"), question="Day?")
    assert spec_cost(febsf).per_report == pldp.deploy.verify(febsf).ldp_epsilon > 2.0  # the worst level
    # memoized: eps_perm per new value, nothing per report of a value the memo holds; family = memo key
    cost = spec_cost(LGRR)
    assert cost.memoized and cost.family == "os-daily" and cost.per_value == 2.0 and cost.report_epsilon == 0.5
    assert cost.charge(30, 1) == 2.0 and cost.charge(30, 0) == 0.0 and cost.charge(5, 2) == 4.0
    ledger = Ledger(None, clock=Clock(NOON))
    for day, values in enumerate((1, 0, 0, 1), start=1):  # 4 daily reports, a second value on the 4th
        ledger.charge(LGRR, 1, values, round=day)
    (fam,) = ledger.view().families
    assert fam.total == Spend(4.0, 4, 2) and fam.report_epsilon == 0.5 and fam.campaigns == {LGRR.id: (1, 2, 3, 4)}


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
    assert view is not None and view.total == Spend(2.0, 2, 0) and view.caps == caps
    client.report("windows")  # 3.0: exactly the cap is allowed
    with pytest.raises(LedgerCapError):
        client.report("windows")


def test_the_device_caps_add_up_families_and_a_family_cap_does_not() -> None:
    ledger = Ledger(None, caps=Caps(family_total=2.0), clock=Clock(NOON))
    ledger.charge(KRR, 2)
    ledger.charge(OTHER, 4)  # another family: 2.0, its own cap
    with pytest.raises(LedgerCapError):
        ledger.charge(KRR, 1)
    assert ledger.view().total == Spend(4.0, 6, 0)
    device = Ledger(None, caps=Caps(total=2.5), clock=Clock(NOON))
    device.charge(KRR, 2)
    with pytest.raises(LedgerCapError, match="device's total cap"):
        device.charge(OTHER, 2)  # 2 + 1 > 2.5
    device.charge(OTHER, 1)  # 2 + 0.5


def test_a_zero_charge_is_never_refused() -> None:
    ledger = Ledger(None, caps=Caps(day=2.0), clock=Clock(NOON))
    ledger.charge(LGRR, 1, 1)
    ledger.charge(LGRR, 10, 0)  # values the memo holds: nothing more is revealed
    with pytest.raises(LedgerCapError):
        ledger.charge(LGRR, 1, 1)
    assert ledger.view().today == Spend(2.0, 11, 1)


def test_a_restart_keeps_the_spend(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "ledger.json"
    Client(KRR, ledger=path).reports(["mac"] * 3)
    assert os.stat(path).st_mode & 0o777 == 0o600
    again = Client(KRR, ledger=path, caps=Caps(total=4.0))  # a new process, the same file
    view = again.ledger()
    assert view is not None and view.total == Spend(3.0, 3, 0) and view.families[0].campaigns == {KRR.id: ()}
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
    assert view is not None and view.today == Spend() and view.total == Spend(2.0, 2, 0) and view.day == "2024-10-05"
    client.report("mac")  # today 1, in all 3
    with pytest.raises(LedgerCapError, match="total"):
        client.report("mac")
    view = client.ledger()
    assert view is not None and view.today == Spend(1.0, 1, 0) and view.families[0].today == Spend(1.0, 1, 0)


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
        "before": {"epsilon": 2, "reports": 2, "values": 0},
        "after": {"epsilon": 3.5, "reports": 5, "values": 0},
        "refused": "LedgerCapError",
    }
    view = Ledger(path).view()
    assert view.total == Spend(3.5, 5, 0) and {f.family for f in view.families} == {KRR.id, OTHER.id}


def test_a_memoized_client_charges_eps_perm_once_per_new_value() -> None:
    """Client(spec, store=..., ledger=...): the values new to the memo are what the ledger charges, and
    a refused batch draws no permanent response (the memo is left as it was)."""
    from pldp.deploy.memostore import MemoryStore

    store, words = MemoryStore(), Counted()
    ledger = Ledger(None, caps=Caps(family_total=4.0), clock=Clock(NOON))
    client = Client(LGRR, words, store=store, ledger=ledger)
    client.reports(["a"] * 30)
    assert client.last_new_values == 1 and ledger.view().total == Spend(2.0, 30, 1)
    client.reports(["a", "a"])  # the memo holds "a": nothing more
    client.reports(["b", "a"])
    assert ledger.view().total == Spend(4.0, 34, 2)
    drawn = words.words
    with pytest.raises(LedgerCapError, match="total cap of this family"):
        client.report("c")  # a third value would take eps_perm over the cap
    assert words.words == drawn
    client.report("b")  # a value the memo holds is never refused
    (fam,) = ledger.view().families
    assert fam.family == "os-daily" and fam.report_epsilon == pytest.approx(0.5) and fam.total.values == 2


def test_the_node_client_charges_a_memoized_spec_per_new_value(tmp_path: Path) -> None:
    import subprocess

    from tests.needs import need_node

    (tmp_path / "spec.json").write_text(LGRR.to_json())
    script = f"""
        import {{ readFileSync }} from "node:fs";
        import {{ loadSpec, Client, MemoryMemoStore }} from "{ROOT}/clients/js/pldp-client.mjs";
        import {{ Ledger }} from "{ROOT}/clients/js/pldp-ledger.mjs";
        const spec = await loadSpec(readFileSync("{tmp_path}/spec.json", "utf8"));
        const ledger = Ledger.memory({{ caps: {{ family_total: 4 }} }});
        const client = new Client(spec, {{ store: new MemoryMemoStore(), ledger }});
        await client.reports(["a", "a", "b"]);
        await client.reports(["a"]);
        let refused = "";
        try {{ await client.report("c"); }} catch (err) {{ refused = err.name; }}
        await client.report("b");
        const fam = ledger.view().families[0];
        console.log(JSON.stringify({{ family: fam.family, total: fam.total, refused }}));
    """
    out = subprocess.run(
        [need_node(), "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "family": "os-daily",
        "total": {"epsilon": 4, "reports": 5, "values": 2},
        "refused": "LedgerCapError",
    }
