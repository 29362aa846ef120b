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
"""

from __future__ import annotations

from typing import Any

from pldp.errors import ParameterError
from pldp.heavy.base import HeavyHitter
from pldp.heavy.discovery import Discovery
from pldp.heavy.pem import PEM, mix_cost
from pldp.heavy.sfp import SFP
from pldp.heavy.treehist import TreeHist

__all__ = ["PEM", "SFP", "Discovery", "HeavyHitter", "TreeHist", "heavy_from_params", "mix_cost"]

#: The protocols by the name their :meth:`~HeavyHitter.params` give.
PROTOCOLS: dict[str, type[HeavyHitter]] = {"PEM": PEM, "TreeHist": TreeHist, "SFP": SFP}


def heavy_from_params(params: dict[str, Any]) -> HeavyHitter:
    """The protocol of :meth:`HeavyHitter.params` (a :class:`~pldp.errors.ParameterError` for an unknown
    name or a bad argument; a TreeHist's or SFP's ``protocol`` member, their node's, is implied by the name).

    Examples
    --------
    >>> heavy_from_params(TreeHist(4.0, max_bytes=8).params())
    TreeHist(epsilon=4, max_bytes=8, step_bits=8, split=0.5)
    """
    args = dict(params)
    name = args.pop("name", None)
    cls = PROTOCOLS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ParameterError(f"the heavy-hitter protocol must be one of {sorted(PROTOCOLS)}, got {name!r}")
    args.pop("protocol", None)
    try:
        return cls(**args)
    except TypeError as err:
        raise ParameterError(f"bad arguments for {cls.__name__}: {err}") from None
