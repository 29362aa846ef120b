"""The base of protocols: frequency oracles composed of several mechanisms."""

from __future__ import annotations

from pldp.oracle import FrequencyOracle

__all__ = ["Protocol"]


class Protocol(FrequencyOracle):
    """A composition of mechanisms with its own tally and estimators.

    Protocols are :class:`~pldp.oracle.FrequencyOracle` objects like the mechanisms, so
    ``pldp.estimate(protocol, tally, method)`` and every other call of the interface work the
    same way. What differs is the users' data (item-sets, (item, level) pairs, several
    attributes), the reports and the tallies; each protocol's docstring says which.
    """

    params_key = "protocol"
