"""A spec's own caps (issue 27 item 3: "a cap set by the device owner or the spec"): the optional
``caps`` member (docs/wire-format.md §1.3), read alike by both clients, enforced by both ledgers as
the smaller of the spec's and the owner's family caps, before any word is drawn."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.errors import SpecError
from pldp.ledger import Caps, Ledger, LedgerCapError, Spend
from tests.needs import need_node
from tests.test_ledger import DAY, NOON, Clock, Counted

ROOT = Path(__file__).resolve().parents[1]
OS = ["linux", "mac", "windows"]

#: A KRR spec at eps = 1 that lets one device spend 2 a day and 3 in all on it.
CAPPED = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Your OS?", labels=OS, caps={"day": 2, "total": 3})


def test_the_caps_member_is_content_and_specs_without_it_keep_their_ids() -> None:
    # ids computed by the code before the member existed
    plain = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Your OS?", labels=OS)
    memo = Spec.from_mechanism(pldp.LGRR(2.0, 0.5, 4), question="Your OS?", labels=list("abcd"))
    assert plain.id == "821aa0b1cbf5686ca622676696fe37aa" and plain.caps is None
    assert memo.id == "7630f45c4512e96eb91a8b5988f7a3a9" and memo.memo_key == "spec:ca439e6e664ab8ec6b7bc693c7ec1fbb"
    # the member changes the id, survives a round trip, and is covered by the id
    assert CAPPED.id != plain.id and CAPPED.caps == {"day": 2.0, "total": 3.0}
    assert Spec.from_json(CAPPED.to_json()) == CAPPED and Spec.from_json(CAPPED.to_json()).caps == CAPPED.caps
    altered = CAPPED.to_dict()
    altered["caps"]["total"] = 30
    with pytest.raises(SpecError, match="does not match its content"):
        Spec.from_json(altered)
    # not part of the default memo key: capping a memoized campaign keeps its permanent responses
    capped_memo = Spec.from_mechanism(pldp.LGRR(2.0, 0.5, 4), question="Your OS?", labels=list("abcd"), caps={"day": 4})
    assert capped_memo.id != memo.id and capped_memo.memo_key == memo.memo_key
    with pytest.raises(SpecError, match=r"caps\.day must be a positive finite number"):
        Spec.from_mechanism(pldp.KRR(1.0, 3), question="Your OS?", labels=OS, caps={"day": 0.0})


def test_a_spec_cap_refuses_before_anything_is_drawn() -> None:
    clock, words = Clock(NOON), Counted()
    ledger = Ledger(None, clock=clock)
    client = Client(CAPPED, words, ledger=ledger)
    client.reports(["mac", "linux"])  # 2 of the day's 2
    drawn = words.words
    with pytest.raises(LedgerCapError, match=r"the spec's daily cap of this family is epsilon = 2, 2 is spent today"):
        client.report("mac")
    assert words.words == drawn and ledger.view().total == Spend(2.0, 2, 0, 2.0)  # nothing drawn, nothing recorded
    clock.t += DAY  # a new UTC day: 1 more, then the total of 3 refuses
    client.report("windows")
    with pytest.raises(LedgerCapError, match=r"the spec's total cap of this family is epsilon = 3, 3 is spent in all"):
        client.report("mac")
    # another spec's family is not bound by this spec's caps
    other = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Your browser?", labels=["a", "b", "c"])
    Client(other, words, ledger=ledger).reports(["a"] * 5)


@pytest.mark.parametrize(
    ("owner", "whose", "cap"),
    [
        (Caps(), "the spec's daily", 2),
        (Caps(family_day=1.0), "the owner's daily", 1),  # the owner's is smaller
        (Caps(family_day=5.0, family_total=1.5), "the owner's total", 1.5),
        (Caps(family_day=2.0), "the spec's daily", 2),  # a tie: the spec's
        (Caps(day=1.0), "the device's daily", 1),  # the owner's device-wide caps still apply
    ],
)
def test_the_smaller_of_the_owners_and_the_specs_cap_applies(owner: Caps, whose: str, cap: float) -> None:
    ledger = Ledger(None, caps=owner, clock=Clock(NOON))
    client = Client(CAPPED, Counted(), ledger=ledger)
    spent = 0
    with pytest.raises(LedgerCapError, match=f"{whose} cap .*is epsilon = {cap:g}, "):
        for _ in range(4):
            client.report("mac")
            spent += 1
    assert spent == int(cap) and ledger.view().total.epsilon == spent


def test_a_client_without_a_ledger_keeps_a_capped_specs_spend_in_the_default_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "data" / "ledger.json"
    monkeypatch.setenv("PLDP_LEDGER", str(path))
    Client(CAPPED).reports(["mac", "linux"])
    assert path.exists() and (path.stat().st_mode & 0o777) == 0o600
    with pytest.raises(LedgerCapError, match="the spec's daily cap"):  # a later run remembers the spend
        Client(CAPPED).report("mac")
    plain = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Your OS?", labels=OS)
    Client(plain).report("mac")  # a spec without caps opens no ledger
    assert Ledger(path).view().total == Spend(2.0, 2, 0, 2.0)


#: Malformed caps members and the reason both clients give.
BAD_CAPS = [
    ("null", "caps must be an object with 'day', 'total' or both"),
    ("[1, 2]", "caps must be an object with 'day', 'total' or both"),
    ("{}", "caps must be an object with 'day', 'total' or both"),
    ('{"week": 1, "day": 1, "month": 2}', "caps has unknown members month, week; a spec's caps are 'day' and 'total'"),
    ('{"day": 0}', "caps.day must be a positive finite number (an epsilon)"),
    ('{"day": 1, "total": -2}', "caps.total must be a positive finite number (an epsilon)"),
    ('{"total": "3"}', "caps.total must be a positive finite number (an epsilon)"),
    ('{"day": true}', "caps.day must be a positive finite number (an epsilon)"),
    ('{"day": null}', "caps.day must be a positive finite number (an epsilon)"),
    ('{"day": 1e999}', "caps.day must be a positive finite number (an epsilon)"),
]


def _with_caps(member: str) -> str:
    """CAPPED's JSON text with ``member`` as its caps (the id is not fixed: caps are checked first)."""
    text = CAPPED.to_json(indent=None)
    head = text[: text.rindex('"caps": ')]
    return head + '"caps": ' + member + "}"


def test_both_clients_refuse_the_same_malformed_caps_with_the_same_reason(tmp_path: Path) -> None:
    python = []
    for member, _ in BAD_CAPS:
        with pytest.raises(SpecError) as err:
            Spec.from_json(_with_caps(member))
        python.append(str(err.value))
    assert python == [reason for _, reason in BAD_CAPS]
    (tmp_path / "specs.json").write_text(json.dumps([_with_caps(m) for m, _ in BAD_CAPS]))
    script = f"""
        import {{ readFileSync }} from "node:fs";
        import {{ loadSpec }} from "{ROOT}/clients/js/pldp-client.mjs";
        const out = [];
        for (const text of JSON.parse(readFileSync("{tmp_path}/specs.json", "utf8"))) {{
          try {{ await loadSpec(text); out.push("loaded"); }}
          catch (err) {{ out.push(`${{err.name}}: ${{err.message}}`); }}
        }}
        console.log(JSON.stringify(out));
    """
    out = subprocess.run(
        [need_node(), "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [f"SpecError: {reason}" for _, reason in BAD_CAPS]


def test_the_node_client_enforces_the_smaller_cap_and_needs_a_ledger(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(CAPPED.to_json())
    script = f"""
        import {{ readFileSync }} from "node:fs";
        import {{ loadSpec, Client }} from "{ROOT}/clients/js/pldp-client.mjs";
        import {{ Ledger }} from "{ROOT}/clients/js/pldp-ledger.mjs";
        const spec = await loadSpec(readFileSync("{tmp_path}/spec.json", "utf8"));
        let clock = {NOON};
        const run = (caps) => {{
          let words = 0;
          const random = (n) => {{ words += n; return new Uint32Array(n).fill(12345); }};
          const ledger = Ledger.memory({{ caps, clock: () => clock }});
          const client = new Client(spec, {{ random, ledger }});
          let sent = 0, refused = "", drawn = -1;
          for (let i = 0; i < 4; i++) {{
            const before = words;
            try {{ client.report("mac"); sent++; }}
            catch (err) {{ refused = err.message; drawn = words - before; break; }}
          }}
          return {{ sent, refused: refused.split(": ")[1], drawn, spent: ledger.view().total.epsilon }};
        }};
        const out = {{ spec: run({{}}), owner: run({{ family_day: 1 }}), device: run({{ day: 1 }}) }};
        try {{ new Client(spec); out.without = "made"; }} catch (err) {{ out.without = err.name; }}
        console.log(JSON.stringify(out));
    """
    out = subprocess.run(
        [need_node(), "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    tail = ", and this batch would spend 1. Nothing was drawn or sent."
    assert json.loads(out.stdout) == {
        "spec": {
            "sent": 2,
            "refused": "the spec's daily cap of this family is epsilon = 2, 2 is spent today" + tail,
            "drawn": 0,
            "spent": 2,
        },
        "owner": {
            "sent": 1,
            "refused": "the owner's daily cap of this family is epsilon = 1, 1 is spent today" + tail,
            "drawn": 0,
            "spent": 1,
        },
        "device": {
            "sent": 1,
            "refused": "the device's daily cap is epsilon = 1, 1 is spent today" + tail,
            "drawn": 0,
            "spent": 1,
        },
        "without": "TypeError",
    }
    # the same refusal, word for word, in Python
    ledger = Ledger(None, caps=Caps(family_day=1.0), clock=Clock(NOON))
    client = Client(CAPPED, Counted(), ledger=ledger)
    client.report("mac")
    with pytest.raises(LedgerCapError) as err:
        client.report("mac")
    why = "the owner's daily cap of this family is epsilon = 1, 1 is spent today"
    assert str(err.value).split(": ")[1] == why + tail
