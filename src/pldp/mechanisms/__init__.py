"""Mechanisms: the randomizers users run."""

from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.direct import IPRR, KRR, URR, DirectEncoding
from pldp.mechanisms.hadamard import HR
from pldp.mechanisms.hashed import OLH
from pldp.mechanisms.longitudinal import (
    LGRR,
    LIDUE,
    LIPRR,
    LOSUE,
    LOUE,
    LSOUE,
    LSUE,
    Longitudinal,
    LongitudinalDirect,
    LongitudinalUnary,
    Memo,
)
from pldp.mechanisms.sketch import CMS, HCMS
from pldp.mechanisms.subset import SS
from pldp.mechanisms.uldp import URAP
from pldp.mechanisms.unary import IDUE, OUE, RAPPOR, UnaryEncoding

__all__ = [
    "CMS",
    "HCMS",
    "HR",
    "IDUE",
    "IPRR",
    "KRR",
    "LGRR",
    "LIDUE",
    "LIPRR",
    "LOSUE",
    "LOUE",
    "LSOUE",
    "LSUE",
    "OLH",
    "OUE",
    "RAPPOR",
    "SS",
    "URAP",
    "URR",
    "DirectEncoding",
    "Longitudinal",
    "LongitudinalDirect",
    "LongitudinalUnary",
    "Mechanism",
    "Memo",
    "UnaryEncoding",
]
