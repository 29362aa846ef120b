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
NOT_AN_OBJECT = "caps must be an object with one or more of 'day', 'total' and 'rounds'"
ROUNDS = "caps.rounds must be a positive integer (the most reports one device sends)"
BAD_CAPS = [
    ("null", NOT_AN_OBJECT),
    ("[1, 2]", NOT_AN_OBJECT),
    ("{}", NOT_AN_OBJECT),
    (
        '{"week": 1, "day": 1, "month": 2}',
        "caps has unknown members month, week; a spec's caps are 'day', 'total' and 'rounds'",
    ),
    ('{"day": 0}', "caps.day must be a positive finite number (an epsilon)"),
    ('{"day": 1, "total": -2}', "caps.total must be a positive finite number (an epsilon)"),
    ('{"total": "3"}', "caps.total must be a positive finite number (an epsilon)"),
    ('{"day": true}', "caps.day must be a positive finite number (an epsilon)"),
    ('{"day": null}', "caps.day must be a positive finite number (an epsilon)"),
    ('{"day": 1e999}', "caps.day must be a positive finite number (an epsilon)"),
    ('{"rounds": 0}', ROUNDS),
    ('{"day": 1, "rounds": -3}', ROUNDS),
    ('{"rounds": 2.5}', ROUNDS),
    ('{"rounds": "8"}', ROUNDS),
    ('{"rounds": true}', ROUNDS),
    ('{"rounds": null}', ROUNDS),
    ('{"rounds": 1e999}', ROUNDS),
    ('{"rounds": 9007199254740992}', ROUNDS),  # 2**53: beyond what JavaScript holds exactly
    ('{"rounds": 8, "day": 0}', "caps.day must be a positive finite number (an epsilon)"),
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


# ------------------------------------------------------------------------------------ the rounds cap

#: L-GRR(2, 0.5, 4): eps_inf = 2 over d = 4 answers; a device sends at most 6 reports on its family.
ROUNDS6 = Spec.from_mechanism(pldp.LGRR(2.0, 0.5, 4), question="Your OS?", labels=list("abcd"), caps={"rounds": 6})


def test_the_rounds_cap_is_content_but_keeps_the_memo_key() -> None:
    plain = Spec.from_mechanism(pldp.LGRR(2.0, 0.5, 4), question="Your OS?", labels=list("abcd"))
    assert plain.id == "7630f45c4512e96eb91a8b5988f7a3a9" and plain.rounds_cap is None  # as before the member
    # a new id, the same permanent responses (memo_key_default drops caps)
    assert ROUNDS6.id != plain.id and ROUNDS6.memo_key == plain.memo_key == "spec:ca439e6e664ab8ec6b7bc693c7ec1fbb"
    assert ROUNDS6.rounds_cap == 6 and ROUNDS6.caps == {"rounds": 6} and isinstance(ROUNDS6.caps["rounds"], int)
    assert Spec.from_json(ROUNDS6.to_json()) == ROUNDS6 and '"caps": {\n    "rounds": 6\n  }' in ROUNDS6.to_json()
    both = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Your OS?", labels=OS, caps={"day": 2, "rounds": 5})
    assert both.caps == {"day": 2.0, "rounds": 5} and both.rounds_cap == 5
    # 6.0 is 6 (JSON and JavaScript do not tell them apart): the same spec, the same id
    assert (
        Spec.from_mechanism(pldp.LGRR(2.0, 0.5, 4), question="Your OS?", labels=list("abcd"), caps={"rounds": 6.0})
        == ROUNDS6
    )
    assert Spec.from_json(ROUNDS6.to_json().replace('"rounds": 6', '"rounds": 6.0')).rounds_cap == 6
    altered = ROUNDS6.to_dict()
    altered["caps"]["rounds"] = 60
    with pytest.raises(SpecError, match="does not match its content"):
        Spec.from_json(altered)
    with pytest.raises(SpecError, match=r"caps\.rounds must be a positive integer"):
        Spec.from_mechanism(pldp.KRR(1.0, 3), question="Your OS?", labels=OS, caps={"rounds": 0})


def test_the_rounds_cap_refuses_the_familys_next_report_whatever_it_would_be_charged() -> None:
    from pldp.deploy.memostore import MemoryStore

    words = Counted()
    ledger = Ledger(None, clock=Clock(NOON))
    client = Client(ROUNDS6, words, store=MemoryStore(), ledger=ledger)
    client.reports(["a", "b"])
    for x in "cdab":  # reports 5 and 6 are charged 0 (d = 4 reports made): the cap still counts them
        client.report(x)
    assert ledger.view().total == Spend(8.0, 6, 4, 8.0)
    drawn = words.words
    with pytest.raises(LedgerCapError) as err:
        client.report("a")
    why = "the spec's rounds cap of this family is 6 report(s), 6 sent so far, and this batch would send 1"
    assert str(err.value).split(": ")[1] == why + ". Nothing was drawn or sent."
    assert words.words == drawn and ledger.view().total == Spend(8.0, 6, 4, 8.0)  # nothing drawn, nothing recorded
    # a batch that would go past it is refused whole; one that fits is not
    ledger = Ledger(None, clock=Clock(NOON))
    client = Client(ROUNDS6, words, store=MemoryStore(), ledger=ledger)
    client.reports(["a"] * 5)
    with pytest.raises(LedgerCapError, match="6 report\\(s\\), 5 sent so far, and this batch would send 2"):
        client.reports(["a", "b"])
    client.report("b")
    assert ledger.view().total.reports == 6
    # another campaign of the family (the same memo key) with a smaller cap counts the family's reports
    other = Spec.from_mechanism(pldp.LGRR(2.0, 0.5, 4), question="Your OS?", labels=list("abcd"), caps={"rounds": 3})
    assert other.memo_key == ROUNDS6.memo_key and other.id != ROUNDS6.id
    with pytest.raises(LedgerCapError, match="rounds cap of this family is 3 report\\(s\\), 6 sent so far"):
        Client(other, words, store=MemoryStore(), ledger=ledger).report("a")
    # the owner's caps still apply, and an epsilon cap refuses first where both would
    capped = Ledger(None, caps=Caps(family_total=4.0), clock=Clock(NOON))
    Client(ROUNDS6, words, store=MemoryStore(), ledger=capped).reports(["a", "b"])
    with pytest.raises(LedgerCapError, match="the owner's total cap of this family is epsilon = 4"):
        Client(ROUNDS6, words, store=MemoryStore(), ledger=capped).report("c")


def test_the_node_client_refuses_past_the_rounds_cap_word_for_word(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(ROUNDS6.to_json().replace('"rounds": 6', '"rounds": 6.0'))
    script = f"""
        import {{ readFileSync }} from "node:fs";
        import {{ loadSpec, Client, MemoryMemoStore }} from "{ROOT}/clients/js/pldp-client.mjs";
        import {{ Ledger }} from "{ROOT}/clients/js/pldp-ledger.mjs";
        const spec = await loadSpec(readFileSync("{tmp_path}/spec.json", "utf8"));
        let words = 0;
        const random = (n) => {{ words += n; return new Uint32Array(n).fill(12345); }};
        const ledger = Ledger.memory({{ clock: () => {NOON} }});
        const client = new Client(spec, {{ random, ledger, store: new MemoryMemoStore() }});
        const charged = [];
        for (const x of ["a", "b", "c", "d", "a", "b"]) {{
          await client.report(x);
          charged.push(ledger.view().total.epsilon);
        }}
        const before = words;
        let refused = "";
        try {{ await client.report("a"); }} catch (err) {{ refused = `${{err.name}}: ${{err.message}}`; }}
        let without = "";
        try {{ new Client(spec, {{ store: new MemoryMemoStore() }}); }} catch (err) {{ without = err.name; }}
        console.log(JSON.stringify({{ id: spec.id, cap: spec.caps.rounds, charged, refused, drawn: words - before,
                                      reports: ledger.view().total.reports, without }}));
    """
    out = subprocess.run(
        [need_node(), "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    why = "the spec's rounds cap of this family is 6 report(s), 6 sent so far, and this batch would send 1"
    family = json.dumps(ROUNDS6.memo_key)
    assert json.loads(out.stdout) == {
        "id": ROUNDS6.id,  # 6.0 read as 6: the same id
        "cap": 6,
        "charged": [2, 4, 6, 8, 8, 8],
        "refused": f"LedgerCapError: the privacy ledger refuses 1 report(s) of spec {ROUNDS6.id} (family {family}): "
        f"{why}. Nothing was drawn or sent.",
        "drawn": 0,
        "reports": 6,
        "without": "TypeError",  # a spec with caps needs a ledger
    }
    # the same reason in Python (the family is quoted as each language quotes a string)
    ledger = Ledger(None, clock=Clock(NOON))
    ledger.charge(ROUNDS6, 6, 4)
    with pytest.raises(LedgerCapError) as err:
        ledger.charge(ROUNDS6, 1, 0)
    assert str(err.value).split("): ")[1] == json.loads(out.stdout)["refused"].split("): ")[1]
