"""Heavy hitters: the most frequent answers of a domain too large to enumerate, found from reports.

:class:`PEM` (:mod:`pldp.heavy.pem`), the prefix extending method over local hashing: answers are
strings of at most ``max_bytes`` bytes (:mod:`pldp.heavy.strings`), discovered a byte at a time, and
returned as a :class:`Discovery` with estimated shares and intervals.
"""

from __future__ import annotations

from pldp.heavy.discovery import Discovery
from pldp.heavy.pem import PEM, mix_cost

__all__ = ["PEM", "Discovery", "mix_cost"]
