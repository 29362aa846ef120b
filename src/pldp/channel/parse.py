"""Reading a sampler node from its JSON form: :func:`parse_node`, one entry per kind."""

from __future__ import annotations

from typing import Any

from pldp.channel.attributes import AttributesNode
from pldp.channel.direct import DirectNode
from pldp.channel.hadamard import HadamardNode
from pldp.channel.hashed import HashedNode
from pldp.channel.heavy import HeavyNode
from pldp.channel.leveled import LeveledNode
from pldp.channel.memo import MemoNode
from pldp.channel.node import Node
from pldp.channel.padding import PaddingNode
from pldp.channel.sketch import CMSNode, HCMSNode
from pldp.channel.subset import SubsetNode
from pldp.channel.unary import UnaryNode
from pldp.errors import SpecError

__all__ = ["NODE_KINDS", "parse_node"]

#: Every kind of node, by its JSON tag.
NODE_KINDS: dict[str, type[Node]] = {
    c.kind: c
    for c in (
        DirectNode,
        UnaryNode,
        HashedNode,
        HadamardNode,
        SubsetNode,
        CMSNode,
        HCMSNode,
        HeavyNode,
        PaddingNode,
        LeveledNode,
        AttributesNode,
        MemoNode,
    )
}


def parse_node(obj: Any, path: str = "sampler.root") -> Node:
    """Read a node from its JSON form, validating it (:class:`~pldp.errors.SpecError` on any defect,
    naming the offending ``path``)."""
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if not isinstance(kind, str) or kind not in NODE_KINDS:  # a str: a list or an object is no key
        raise SpecError(f"{path} must be a node with kind one of {sorted(NODE_KINDS)}, got {kind!r}")
    return NODE_KINDS[obj["kind"]].parse(obj, path, parse_node)
