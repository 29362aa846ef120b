"""Protocols: compositions of mechanisms with their own server logic."""

from pldp.protocols.base import Protocol
from pldp.protocols.febsf import FEBSF, FEBSFReports, FEBSFTally, auem, em
from pldp.protocols.grouped import APLDP, PBP, PPDA, RCF, GroupedReports, GroupedTally, select_mechanism
from pldp.protocols.itemset import ItemSets, PaddingSampling, propose_ell
from pldp.protocols.mpldp import MPLDP, MPLDPReports, MPLDPTally, allocate_budget, oc_weights

__all__ = [
    "APLDP",
    "FEBSF",
    "MPLDP",
    "PBP",
    "PPDA",
    "RCF",
    "FEBSFReports",
    "FEBSFTally",
    "GroupedReports",
    "GroupedTally",
    "ItemSets",
    "MPLDPReports",
    "MPLDPTally",
    "PaddingSampling",
    "Protocol",
    "allocate_budget",
    "auem",
    "em",
    "oc_weights",
    "propose_ell",
    "select_mechanism",
]
