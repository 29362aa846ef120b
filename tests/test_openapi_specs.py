"""The collector's published ``CampaignSpec`` schema takes every spec pldp makes, and only specs.

A client generated from ``/openapi.json`` checks its bodies against the schema before it sends
them: a schema tighter than pldp's own reader refuses campaigns the collector takes (a memoized
chain's ``memo`` node, a spec's ``caps``), one looser than it documents nothing. The schema is
fetched from a real ``pldp serve`` and every deployable spec of :func:`pldp.testing.standard_cases`
(with and without ``caps``) is validated against its ``CampaignSpec`` component with a JSON Schema
validator (``jsonschema_rs``, which schemathesis brings), resolving its ``$ref`` in the document;
specs that pldp refuses are refused by the schema too.
"""

from __future__ import annotations

import copy
import json
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema_rs
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from pldp.channel import NODE_KINDS
from pldp.channel.leveled import MEMO_LEVELS_REFUSAL
from pldp.deploy import Spec
from pldp.deploy.spec import spec_id
from pldp.errors import SpecError
from pldp.service.models import CampaignSpec
from pldp.testing import standard_cases
from tests.deploy_cases import heavy_protocols
from tests.service_server import Server

#: A spec's caps with every member (``docs/wire-format.md`` §1.3).
CAPS = {"day": 1.5, "total": 12.0, "rounds": 8}


def _specs() -> dict[str, Spec]:
    """Every standard case that pldp deploys, by name, and each again with :data:`CAPS` (``name+caps``).

    The only cases pldp does not deploy are the memoized leveled ones (:data:`MEMO_LEVELS_REFUSAL`);
    any other refusal fails here.
    """
    out: dict[str, Spec] = {}
    for name, case in standard_cases().items():
        question: Any = ["first?", "second?"] if name == "mpldp" else f"{name}?"
        try:
            out[name] = Spec.from_mechanism(case.oracle, question=question)
        except SpecError as exc:
            assert MEMO_LEVELS_REFUSAL in str(exc), (name, exc)
            continue
        out[name + "+caps"] = Spec.from_mechanism(case.oracle, question=question, caps=CAPS)
    out["lgrr+key"] = Spec.from_mechanism(standard_cases()["lgrr"].oracle, question="keyed?", memo_key="survey-1")
    out["olh+range"] = Spec.from_mechanism(standard_cases()["olh"].oracle, question="an integer?", labels="range")
    out["mpldp+range"] = Spec.from_mechanism(
        standard_cases()["mpldp"].oracle, question=["first?", "second?"], labels=[["a", "b", "c"], "range"]
    )
    out["olh+hashed"] = Spec.from_mechanism(standard_cases()["olh"].oracle, question="a word?", labels="hashed")
    out["mpldp+hashed"] = Spec.from_mechanism(
        standard_cases()["mpldp"].oracle, question=["first?", "second?"], labels=["hashed", ["a", "b", "c", "d"]]
    )
    out.update({f"heavy/{p.name}": Spec.from_heavy(p, question="in your own words?") for p in heavy_protocols()})
    return out


SPECS = _specs()


@pytest.fixture(scope="module")
def validator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A validator of the ``CampaignSpec`` component of a real collector's ``/openapi.json``."""
    srv = Server(tmp_path_factory.mktemp("openapi-specs") / "pldp.db").start()
    try:
        document = json.load(urllib.request.urlopen(f"{srv.url}/openapi.json", timeout=30))
    finally:
        srv.stop()
    # the component as the root's $ref: every "#/components/schemas/..." resolves in the document
    schema = {**document, "$ref": "#/components/schemas/CampaignSpec"}
    yield jsonschema_rs.Draft202012Validator(schema)


def _errors(validator: Any, instance: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.instance_path))}: {e.message}"[:300] for e in validator.iter_errors(instance)]


def test_the_cases_cover_every_node_kind_memo_and_caps() -> None:
    kinds = {spec.root.kind for spec in SPECS.values()}
    assert kinds == set(NODE_KINDS)
    assert any(spec.memo_key and spec.caps for spec in SPECS.values())


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_spec_pldp_makes_validates_against_the_published_schema(validator: Any, name: str) -> None:
    body = json.loads(SPECS[name].to_json())
    assert not _errors(validator, body), _errors(validator, body)
    CampaignSpec.model_validate(body)  # and the model the schema is made from


def _edit(path: list[Any], value: Any = None, delete: bool = False) -> Callable[[dict[str, Any]], None]:
    def edit(spec: dict[str, Any]) -> None:
        obj: Any = spec
        for key in path[:-1]:
            obj = obj[key]
        if delete:
            del obj[path[-1]]
        else:
            obj[path[-1]] = value

    return edit


ROOT = ["sampler", "root"]
#: Specs that pldp refuses (``Spec.from_json``), by what is wrong: (the case, the edit).
REFUSED: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "an unknown node tag": ("krr", _edit([*ROOT, "kind"], "bogus")),
    "a node without a required member": ("oue", _edit([*ROOT, "notion"], delete=True)),
    "a node with an unknown member": ("krr", _edit([*ROOT, "extra"], 1)),
    "a threshold off the grid": ("oue", _edit([*ROOT, "a", 0], 2**32)),
    "a unary node claiming a direct notion": ("oue", _edit([*ROOT, "notion"], "IPLDP")),
    "a direct node over one item": ("krr", _edit([*ROOT, "d"], 1)),
    "a level reported some other way": ("rcf", _edit([*ROOT, "level_report"], "shouted")),
    "a level's node of another kind": ("rcf", _edit([*ROOT, "items", 0, "kind"], "padding")),
    "a memo node without its permanent node": ("lgrr", _edit([*ROOT, "permanent"], delete=True)),
    "a memo node's instantaneous response with a member too many": (
        "lgrr",
        _edit([*ROOT, "instantaneous", "extra"], 1),
    ),
    "a memo without its key": ("lgrr", _edit(["memo"], {})),
    "a memoized spec without its memo": ("lgrr", _edit(["memo"], delete=True)),
    "a memo on a spec that is not memoized": ("krr", _edit(["memo"], {"key": "k"})),
    "a clear level with a level_epsilon": ("rcf", _edit([*ROOT, "level_epsilon"], 1.0)),
    "a perturbed level without its level_sampler": ("febsf-krr", _edit([*ROOT, "level_sampler"], delete=True)),
    "a hidden level with a level_sampler": ("pbp", _edit([*ROOT, "level_sampler"], {"kind": "direct"})),
    "one label": ("krr", _edit(["labels"], ["only"])),
    "a label twice": ("krr", _edit(["labels", 1], "0")),
    "an empty memo key": ("lgrr", _edit(["memo", "key"], "")),
    "a range of one answer": ("olh+range", _edit(["labels", "range"], 1)),
    "a range that is not whole": ("olh+range", _edit(["labels", "range"], 2.5)),
    "a range that is a boolean": ("olh+range", _edit(["labels", "range"], True)),
    "a range that is a string": ("olh+range", _edit(["labels", "range"], "10")),
    "a range with a member too many": ("olh+range", _edit(["labels", "extra"], 1)),
    "an attribute's range with a member too many": ("mpldp+range", _edit(["labels", 1, "d"], 4)),
    "a hashed form of one bucket": ("olh+hashed", _edit(["labels", "hashed"], 1)),
    "a hashed form whose count is a string": ("olh+hashed", _edit(["labels", "hashed"], "10")),
    "a hashed form of another hash": ("olh+hashed", _edit(["labels", "hash"], "xxh64")),
    "a hashed form of another normalisation": ("olh+hashed", _edit(["labels", "normalize"], "NFKC")),
    "a hashed form without its hash": ("olh+hashed", _edit(["labels", "hash"], delete=True)),
    "a hashed form with a range": ("olh+hashed", _edit(["labels", "range"], 10)),
    "an attribute's hashed form with a member too many": ("mpldp+hashed", _edit(["labels", 0, "max"], 256)),
    "an unknown cap": ("krr+caps", _edit(["caps", "weekly"], 1.0)),
    "null caps": ("krr+caps", _edit(["caps"], None)),
    "no cap in caps": ("krr+caps", _edit(["caps"], {})),
    "a rounds cap that is not whole": ("krr+caps", _edit(["caps", "rounds"], 2.5)),
    "a negative day cap": ("krr+caps", _edit(["caps", "day"], -1.0)),
    "an unknown spec member": ("krr", _edit(["extra"], 1)),
    "a spec without its sampler": ("krr", _edit(["sampler"], delete=True)),
    "another grid": ("krr", _edit(["sampler", "grid_bits"], 31)),
    "a malformed id": ("krr", _edit(["id"], "ABC")),
}


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_the_schema_refuses_what_pldp_refuses(validator: Any, what: str) -> None:
    name, edit = REFUSED[what]
    body = json.loads(SPECS[name].to_json())
    edit(body)
    if body.get("id") == SPECS[name].id:
        body["id"] = spec_id(body)  # refused for what is wrong, not for the content's hash
    with pytest.raises(SpecError) as refusal:  # pldp refuses it (so the case is a real refusal) ...
        Spec.from_json(copy.deepcopy(body))
    assert "does not match its content" not in str(refusal.value)
    assert _errors(validator, body), f"the schema takes {what}"  # ... and so does the schema
