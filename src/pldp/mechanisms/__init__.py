"""Mechanisms: the randomizers users run."""

from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.direct import IPRR, KRR, URR, DirectEncoding

__all__ = ["IPRR", "KRR", "URR", "DirectEncoding", "Mechanism"]
