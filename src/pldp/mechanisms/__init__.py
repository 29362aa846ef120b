"""Mechanisms: the randomizers users run."""

from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.direct import IPRR, KRR, URR, DirectEncoding
from pldp.mechanisms.unary import IDUE, OUE, RAPPOR, UnaryEncoding

__all__ = ["IDUE", "IPRR", "KRR", "OUE", "RAPPOR", "URR", "DirectEncoding", "Mechanism", "UnaryEncoding"]
