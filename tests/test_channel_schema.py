"""Each kind of node's JSON Schema (:func:`pldp.channel.node_schemas`) against its parser (``parse_node``).

The sampler of every standard case, and every edit of it by one member, is read by both: whatever
the parser takes the schema takes (the schema is never tighter than pldp), and an edit that breaks
a member on its own (a member removed or added, a value of the wrong type or sign) is refused by
both (the schema states every member, its type and range). What the schema leaves to the parser
(relations between members: a list of ``d`` items, thresholds that sum to ``2**32``) is edited too,
and only the first rule applies to it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest

from pldp.channel import NODE_KINDS, SAMPLER_NODE, node_schema, node_schemas, parse_node
from pldp.errors import SpecError
from pldp.testing import standard_cases
from tests.deploy_cases import heavy_protocols

#: Every standard case's sampler, as JSON (the memoized leveled ones too, which pldp does not read).
SAMPLERS = {
    **{name: case.oracle.sampler().to_json() for name, case in standard_cases().items()},
    **{f"heavy/{p.name}": p.node().to_json() for p in heavy_protocols()},
}
#: The values that break any member on its own: no member takes them.
BREAKING = (None, "x", -1, True)
#: Values that may or may not fit a member, depending on the others.
OTHER = (0, 1, 2**33, 0.5, [], {}, "inf", "LDP")
#: Each value, and whether it breaks a member (``True`` is not ``1`` here).
VALUES = [(v, True) for v in BREAKING] + [(v, False) for v in OTHER]


def _validators() -> list[Any]:
    """The self-contained schema, and the kinds' schemas referring to one another by ``$ref``."""
    by_ref = {"$defs": node_schemas("#/$defs/{name}"), "$ref": f"#/$defs/{SAMPLER_NODE}"}
    return [jsonschema_rs.Draft202012Validator(node_schema()), jsonschema_rs.Draft202012Validator(by_ref)]


VALIDATORS = _validators()


def _parses(obj: Any) -> bool:
    try:
        parse_node(obj)
    except SpecError:
        return False
    return True


def _valid(obj: Any) -> bool:
    verdicts = {v.is_valid(obj) for v in VALIDATORS}
    assert len(verdicts) == 1, "the two forms of the schema disagree"
    return verdicts.pop()


def _edits(root: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """``(what, edited root, breaking)`` for every edit of one member of one object in the tree
    (and of the first entry of each list); ``breaking``: the edit breaks the member on its own."""

    def objects(obj: Any, path: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        if isinstance(obj, dict):
            yield path
            for k, v in obj.items():
                yield from objects(v, (*path, k))
        elif isinstance(obj, list) and obj and isinstance(obj[0], dict):
            for i, v in enumerate(obj):
                yield from objects(v, (*path, i))

    def edited(path: tuple[Any, ...], key: Any, value: Any, delete: bool = False) -> dict[str, Any]:
        out = copy.deepcopy(root)
        obj: Any = out
        for k in path:
            obj = obj[k]
        if delete:
            del obj[key]
        else:
            obj[key] = value
        return out

    for path in objects(root, ()):
        obj: Any = root
        for k in path:
            obj = obj[k]
        where = "".join(f"[{k!r}]" for k in path)
        yield f"{where} + extra", edited(path, "extra", 1), True
        for key, value in obj.items():
            yield f"{where} - {key}", edited(path, key, None, delete=True), True
            for new, breaking in VALUES:
                yield f"{where}[{key!r}] = {new!r}", edited(path, key, new), breaking
            if key == "kind":
                yield from ((f"{where}.kind = {k}", edited(path, key, k), False) for k in NODE_KINDS)
            if isinstance(value, list) and value:
                for new, breaking in VALUES:
                    yield f"{where}[{key!r}][0] = {new!r}", edited((*path, key), 0, new), breaking


def test_the_cases_hold_every_kind_of_node() -> None:
    kinds = set()

    def walk(obj: Any) -> None:
        if isinstance(obj, dict):
            kinds.add(obj.get("kind"))
            for v in obj.values():
                walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    walk(list(SAMPLERS.values()))
    assert set(NODE_KINDS) <= kinds


def test_the_schema_has_a_component_for_each_kind_of_node() -> None:
    schemas = node_schemas("#/components/schemas/{name}")
    assert set(schemas) == {cls.__name__ for cls in NODE_KINDS.values()} | {SAMPLER_NODE}
    assert schemas[SAMPLER_NODE]["discriminator"]["mapping"] == {
        kind: f"#/components/schemas/{cls.__name__}" for kind, cls in NODE_KINDS.items()
    }
    json.dumps(schemas)  # plain JSON


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_the_schema_takes_what_the_parser_takes_and_refuses_broken_members(name: str) -> None:
    root = SAMPLERS[name]
    assert _valid(root) or not _parses(root), "the schema refuses a node pldp reads"
    # what the schema takes and the parser refuses (a non-breaking edit) is left to the parser: the
    # relations between members (a list's length against d, thresholds that sum to 2**32)
    for what, edited, breaking in _edits(root):
        parses, valid = _parses(edited), _valid(edited)
        assert valid or not parses, f"{name}: the schema refuses {what}, which pldp reads"
        if breaking:
            assert not parses, f"{name}: pldp reads {what}"
            assert not valid, f"{name}: the schema takes {what}"
