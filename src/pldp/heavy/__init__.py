"""Heavy hitters: the most frequent answers of a domain too large to enumerate, found from reports.

:class:`PEM` (:mod:`pldp.heavy.pem`), the prefix extending method over local hashing: answers are
strings of at most ``max_bytes`` bytes (:mod:`pldp.heavy.strings`), discovered a byte at a time, and
returned as a :class:`Discovery` with estimated shares and intervals. :class:`SFP`
(:mod:`pldp.heavy.sfp`), Apple's sequence fragment puzzle: fragments tagged by a hash of the answer,
assembled into words and estimated from a second report of the whole answer.
"""

from __future__ import annotations

from pldp.heavy.discovery import Discovery
from pldp.heavy.pem import PEM, mix_cost
from pldp.heavy.sfp import SFP

__all__ = ["PEM", "SFP", "Discovery", "mix_cost"]
