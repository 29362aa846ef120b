"""The memo node (issue 27 item 1, its wire side): JSON round trip and refusals, ``verify`` of a spec that
holds one, and the node's program (a permanent response drawn once per value, an IRR per report).

The spec here is written by hand, as a reader would receive it (the memo key and the clients' memo
store: ``tests/test_memo_client.py``); ``verify`` reads it without loading it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.channel import NODE_KINDS, DirectIRR, MemoInput, MemoNode, UnaryIRR, parse_node
from pldp.channel.sampling import GRID
from pldp.channel.words import Cursor
from pldp.deploy import Spec, verify
from pldp.deploy.jcs import jcs
from pldp.deploy.spec import FORMAT, spec_id
from pldp.errors import SpecError
from pldp.fingerprint import canonical

PERM = pldp.ItemBudgets.from_array([1.0, 2.0, 2.0, 4.0, 4.0])
ONE = pldp.ItemBudgets.from_array([0.5, 1.0, 1.0, 2.0, 2.0])
MECHANISMS: dict[str, Callable[[], Any]] = {
    "L-GRR": lambda: pldp.LGRR(4.0, 1.0, 5),
    "L-IPRR": lambda: pldp.LIPRR(PERM, ONE),
    "L-OUE": lambda: pldp.LOUE(4.0, 1.0, 5),
    "L-OSUE": lambda: pldp.LOSUE(4.0, 1.0, 5),
    "L-IDUE": lambda: pldp.LIDUE(PERM, ONE),
}


def _spec_json(m: Any, root: dict[str, Any] | None = None) -> dict[str, Any]:
    """A spec of ``m`` (its sampler, or ``root`` instead) as ``Spec.from_mechanism`` would write it."""
    data = {
        "format": FORMAT,
        "question": "Which one?",
        "labels": [str(v) for v in m.domain.labels],
        "oracle": canonical(m.params()),
        "sampler": {"grid_bits": 32, "root": m.sampler().to_json() if root is None else root},
        "memo": {"key": "hand-written"},
    }
    data = json.loads(jcs(data))
    data["id"] = spec_id(data)
    return data


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_memo_node_round_trips_through_json(name: str) -> None:
    node = MECHANISMS[name]().sampler()
    assert NODE_KINDS["memo"] is MemoNode and node.memoized
    text = json.dumps(node.to_json())
    again = parse_node(json.loads(text))
    assert again == node and json.dumps(again.to_json()) == text


def _bad_variants(node: MemoNode) -> list[tuple[dict[str, Any], str]]:
    good = node.to_json()
    out = []

    def changed(**kw: Any) -> dict[str, Any]:
        return {**json.loads(json.dumps(good)), **kw}

    irr = dict(good["instantaneous"])
    if "keep" in irr:
        out.append((changed(instantaneous={**irr, "keep": irr["keep"] + 1}), "must be 2\\*\\*32"))
    else:
        out.append((changed(instantaneous={**irr, "b": irr["a"]}), "b\\[k\\] < a\\[k\\]"))
    out.append((changed(d=node.d + 1), "d"))
    out.append((changed(notion="PLDP"), "notion"))
    out.append((changed(extra=1), "extra"))
    out.append((changed(epsilons=good["epsilons"][:-1]), "epsilons"))
    out.append((changed(permanent=good), "permanent must be a direct or unary node"))
    return out


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_memo_node_refuses_malformed_json(name: str) -> None:
    for bad, match in _bad_variants(MECHANISMS[name]().sampler()):
        with pytest.raises(SpecError, match=match):
            parse_node(bad)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_verify_checks_both_claims_of_a_memo_spec_exactly(name: str) -> None:
    """``verify`` of a hand-written spec holding the memo node: every permanent and one-report claim,
    holding; the same spec with an IRR a little more informative fails at a one-report claim;
    the first loads as a deployable spec, the second is refused."""
    m = MECHANISMS[name]()
    data = _spec_json(m)
    v = verify(data)
    assert v.holds and {r.part.split(" ", 1)[1].split(" (")[0] for r in v.rows} == {"permanent", "one report"}
    assert v.spec_id == data["id"]
    node = m.sampler()
    irr = node.instantaneous
    if isinstance(irr, DirectIRR):
        w = tuple(max(x - (GRID >> 20), 0) for x in irr.weights)
        wrong = DirectIRR(GRID - sum(w), w)
    else:
        wrong = UnaryIRR(tuple(a + (GRID >> 14) for a in irr.a), tuple(b - (GRID >> 14) for b in irr.b))
    bad = MemoNode(node.d, node.permanent, wrong, node.notion, node.epsilons)
    v_bad = verify(_spec_json(m, bad.to_json()))
    assert not v_bad.holds and all("one report" in r.part for r in v_bad.failures)
    assert Spec.from_json(data).memo_key == "hand-written"
    with pytest.raises(SpecError, match="privacy claim fails: root one report"):
        Spec.from_json(_spec_json(m, bad.to_json()))


def _run(node: MemoNode, inp: MemoInput, words: np.ndarray) -> dict[str, np.ndarray]:
    per = node.words(inp)
    starts = np.concatenate([[0], np.cumsum(per)[:-1]]).astype(np.int64)
    assert words.size == int(per.sum())
    out = node.empty_columns(node.reports(inp))
    node.draw(inp, Cursor(words.astype(np.uint32), starts), np.arange(inp.items.size), out)
    return out


def test_memo_program_draws_the_permanent_response_once_per_value() -> None:
    """Words: a fresh report draws one PRR word then one IRR word; a memoized one only the IRR word; a
    later report of a value drawn in the same batch copies that draw. Words of 0 keep the item through
    both stages; the IRR of a memoized report sees the memo's response, not the item."""
    node = pldp.LGRR(4.0, 1.0, 5).sampler()
    x = np.array([0, 3, 3, 1])
    held = np.array([-1, -1, -1, 4])  # the memo holds 4 as the PRR of the last report's value
    inp = MemoInput(x, held.copy(), np.array([0, 1, 1, -1]))
    assert node.words(inp).tolist() == [2, 2, 1, 1]
    out = _run(node, inp, np.zeros(6, dtype=np.uint32))
    assert inp.permanent.tolist() == [0, 3, 3, 4]
    assert out["item"].tolist() == [0, 3, 3, 4]
    fresh = MemoInput.fresh(node, x)
    assert node.words(fresh).tolist() == [2, 2, 2, 2]


def test_memo_program_unary_words_and_copies() -> None:
    node = pldp.LOUE(4.0, 1.0, 5).sampler()
    x = np.array([2, 2])
    inp = MemoInput(x, node.empty_permanent(2), np.array([0, 0]))
    assert node.words(inp).tolist() == [10, 5]
    rng = np.random.default_rng(3)
    out = _run(node, inp, rng.integers(0, GRID, 15, dtype=np.uint64))
    assert np.array_equal(inp.permanent[0], inp.permanent[1])
    assert out["bits"].shape == (2, 1)


@pytest.mark.parametrize("name", ["L-GRR", "L-OUE"])
def test_memo_program_has_the_chained_law(name: str) -> None:
    """Fresh reports drawn by the node's program from uniform words report the user's own item (direct)
    or set its bit (unary) as often as the chained channel says."""
    m = MECHANISMS[name]()
    node = m.sampler()
    n = 60_000
    x = np.full(n, 1)
    inp = MemoInput.fresh(node, x)
    rng = np.random.default_rng(8)
    out = _run(node, inp, rng.integers(0, GRID, int(node.words(inp).sum()), dtype=np.uint64))
    hit = out["item"] == 1 if name == "L-GRR" else np.unpackbits(out["bits"], axis=1)[:, 1] == 1
    p = float(m.support[0][1])
    assert abs(hit.mean() - p) < 4.5 * np.sqrt(p * (1 - p) / n)


def test_the_wire_format_example_is_lgrr_s_node() -> None:
    """The memo node shown in ``docs/wire-format.md`` is the node pldp writes for ``LGRR(2.0, 1.0, 4)``."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "wire-format.md").read_text(encoding="utf-8")
    block = text.split("The node of `pldp.LGRR(2.0, 1.0, 4)`", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    assert parse_node(json.loads(block)) == pldp.LGRR(2.0, 1.0, 4).sampler()
