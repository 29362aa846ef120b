"""Heavy hitters: the most frequent answers of a domain too large to enumerate, found from reports.

Answers are strings of at most ``max_bytes`` bytes (:mod:`pldp.heavy.strings`), and each protocol
returns a :class:`Discovery` with estimated shares and intervals:

* :class:`PEM` (:mod:`pldp.heavy.pem`), the prefix extending method: groups of users report longer
  and longer prefixes, and the last group's estimates are the result;
* :class:`TreeHist` (:mod:`pldp.heavy.treehist`): the same tree, ``step_bits`` bits a step, and a
  second report of the whole answer that estimates the candidates;
* :class:`SFP` (:mod:`pldp.heavy.sfp`), Apple's sequence fragment puzzle: fragments at random
  positions tagged by a hash of the answer, assembled into words and estimated from a second
  report of the whole answer.

Budget levels (:mod:`pldp.heavy.pooled`) pool by inverse variance in all three.

The names are imported on first use (:mod:`pldp._lazy`): a device client and the collector read a
free-text campaign's tallies (:mod:`pldp.heavy.count`) without loading the protocols or scipy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pldp._lazy import lazy_names

if TYPE_CHECKING:
    from pldp.heavy.base import HeavyHitter
    from pldp.heavy.discovery import Discovery
    from pldp.heavy.pem import PEM, mix_cost
    from pldp.heavy.protocols import PROTOCOLS, heavy_from_params
    from pldp.heavy.sfp import SFP
    from pldp.heavy.treehist import TreeHist

__all__ = ["PEM", "PROTOCOLS", "SFP", "Discovery", "HeavyHitter", "TreeHist", "heavy_from_params", "mix_cost"]

_LAZY = {
    "HeavyHitter": "pldp.heavy.base",
    "Discovery": "pldp.heavy.discovery",
    "PEM": "pldp.heavy.pem",
    "mix_cost": "pldp.heavy.pem",
    "SFP": "pldp.heavy.sfp",
    "TreeHist": "pldp.heavy.treehist",
    "PROTOCOLS": "pldp.heavy.protocols",
    "heavy_from_params": "pldp.heavy.protocols",
}

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
