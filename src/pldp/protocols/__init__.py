"""Protocols: compositions of mechanisms with their own server logic."""

from pldp.protocols.base import Protocol
from pldp.protocols.itemset import ItemSets, PaddingSampling, propose_ell

__all__ = ["ItemSets", "PaddingSampling", "Protocol", "propose_ell"]
