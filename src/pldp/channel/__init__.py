"""The channel layer: the exact description of a randomizer, under everything else in pldp.

A randomizer is a tree of *sampler nodes* on the ``2**-32`` grid (``docs/wire-format.md`` §2):
every probability an integer numerator over ``2**32``, every decision an integer comparison of a
uniform word with a threshold. The library's mechanisms and protocols build their node
(``oracle.sampler()``); both device clients run it; :func:`pldp.deploy.verify` checks its claims;
the collector and the aggregation of report files read its payload columns; the audit reads its
exact channel. This package imports nothing of pldp but :mod:`pldp.errors`, :mod:`pldp.bitcount`, and the
heavy-hitter node's text normalisation and XXH32 of byte rows (:mod:`pldp.text`, :mod:`pldp.xxh32`).

==============  ======================================================================
module          holds
==============  ======================================================================
``sampling``    the grid, integer-threshold draws, the OS CSPRNG's words
``exact``       exact rational arithmetic: is a ratio of integers at most e^eps?
``words``       the word stream and per-report cursors the node programs read
``columns``     :class:`Column`: a payload column, its :class:`Cell`, codecs, row width and range checks
``node``        :class:`Node` (the interface), :class:`Row`, :class:`NodeVisitor` and its mark :func:`to_leaf`
``direct``      :class:`DirectNode` (KRR, URR, IPRR; PLDP-FEBSF's level report)
``unary``       :class:`UnaryNode` (RAPPOR, OUE, IDUE, URAP)
``hashed``      :class:`HashedNode` (local hashing: OLH, BLH, FLH)
``hadamard``    :class:`HadamardNode` (Hadamard response: HR)
``subset``      :class:`SubsetNode` (subset selection: SS)
``cms``         :class:`CMSNode` (Apple's count-mean sketch: CMS)
``hcms``        :class:`HCMSNode` (Apple's Hadamard count-mean sketch: HCMS)
``padding``     :class:`PaddingNode` (padding-and-sampling of item-sets)
``leveled``     :class:`LeveledNode` (user-level protocols), its exact level ratio
``attributes``  :class:`AttributesNode` (MPLDP)
``heavy``       :class:`HeavyNode` (a free-text answer's report for PEM, TreeHist, SFP),
                its answer rows, prefixes and fingerprints
``memo``        :class:`MemoNode` (memoized chains: L-GRR, L-IPRR, L-OUE, ...), :class:`MemoInput`
``payload``     a report's payload over its columns: :func:`payload_writer`, :func:`payload_json`,
                :class:`PayloadReader`, :func:`check_columns`, :func:`carried_rows`
``parse``       :func:`parse_node`
``schema``      :func:`node_schemas`, :func:`node_schema`: the JSON Schema of each kind's JSON form
``claims``      :func:`check_claims` and its :class:`Verification`
==============  ======================================================================
"""

from pldp.channel.attributes import AttributesNode
from pldp.channel.claims import Verification, check_claims
from pldp.channel.columns import Cell, Column
from pldp.channel.direct import DirectNode
from pldp.channel.hadamard import HadamardNode
from pldp.channel.hashed import HashedNode
from pldp.channel.heavy import HeavyNode
from pldp.channel.leveled import LeveledNode
from pldp.channel.memo import CHAIN_GRID, DirectIRR, MemoInput, MemoNode, UnaryIRR
from pldp.channel.node import Node, NodeVisitor, Row, to_leaf
from pldp.channel.padding import PaddingNode
from pldp.channel.parse import NODE_KINDS, parse_node
from pldp.channel.payload import PayloadReader, carried_rows, check_columns, payload_json, payload_writer
from pldp.channel.sampling import GRID, GRID_BITS
from pldp.channel.schema import SAMPLER_NODE, node_schema, node_schemas
from pldp.channel.sketch import CMSNode, HCMSNode
from pldp.channel.subset import SubsetNode
from pldp.channel.unary import UnaryNode

__all__ = [
    "CHAIN_GRID",
    "GRID",
    "GRID_BITS",
    "NODE_KINDS",
    "SAMPLER_NODE",
    "AttributesNode",
    "CMSNode",
    "Cell",
    "Column",
    "DirectIRR",
    "DirectNode",
    "HCMSNode",
    "HadamardNode",
    "HashedNode",
    "HeavyNode",
    "LeveledNode",
    "MemoInput",
    "MemoNode",
    "Node",
    "NodeVisitor",
    "PaddingNode",
    "PayloadReader",
    "Row",
    "SubsetNode",
    "UnaryIRR",
    "UnaryNode",
    "Verification",
    "carried_rows",
    "check_claims",
    "check_columns",
    "node_schema",
    "node_schemas",
    "parse_node",
    "payload_json",
    "payload_writer",
    "to_leaf",
]
