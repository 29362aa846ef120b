"""Protocols: frequency oracles composed of mechanisms, with their own server logic.

=====================  ===========================================================================
module                 holds
=====================  ===========================================================================
``base``               :class:`Protocol`, the base class
``padding``            :class:`PaddingSampling` (IDUE-PS, OUE-PS, RAPPOR-PS) for item-sets
``leveled``            what user-level protocols share: levels, users, one mechanism per level
``febsf``              PLDP-FEBSF: hidden, perturbed budget levels; AUEM and the joint EM
``rcf``, ``apldp``     budgets in the clear: per-level estimates, minimum-variance combination
``llevels``            over time: a memoized chain per budget level (eps_perm, eps_1), levels in the clear
``pbp``, ``ppda``      budgets hidden: public level shares (PBP), calibrating zero bits (PPDA)
``mpldp``              MPLDP: several attributes, three levels each, optimal combination
=====================  ===========================================================================
"""

from pldp.protocols.apldp import APLDP, select_mechanism
from pldp.protocols.base import Protocol
from pldp.protocols.febsf import FEBSF, FEBSFReports, FEBSFTally, auem, em
from pldp.protocols.leveled import LeveledProtocol
from pldp.protocols.llevels import LLevels
from pldp.protocols.mpldp import MPLDP, MPLDPReports, MPLDPTally, allocate_budget, oc_weights
from pldp.protocols.padding import PaddingSampling, propose_ell
from pldp.protocols.pbp import PBP
from pldp.protocols.ppda import PPDA
from pldp.protocols.rcf import RCF, GroupedReports, GroupedTally

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
    "LLevels",
    "LeveledProtocol",
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
