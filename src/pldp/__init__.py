"""pldp: personalized local differential privacy for frequency estimation.

The pipeline::

    value --Domain.encode--> index --Mechanism.perturb--> report --Mechanism.tally--> Tally
    Tally --pldp.estimate(mechanism, tally, method)--> Estimate

Every mechanism (:class:`KRR`, :class:`URR`, :class:`IPRR`, :class:`RAPPOR`, :class:`OUE`,
:class:`IDUE`; the longitudinal :class:`LGRR`, :class:`LIPRR`, :class:`LOUE`, :class:`LOSUE`,
:class:`LSUE`, :class:`LSOUE`, :class:`LIDUE`) and protocol (:mod:`pldp.protocols`) is a
:class:`FrequencyOracle` with the same interface: ``perturb``, ``tally``, ``simulate``,
``estimate``, ``privacy``, ``params`` and ``fingerprint``. Other public names: :class:`Domain`,
:class:`ItemBudgets`, :class:`ItemSets`, :func:`estimate`, :class:`Estimate`, :class:`EstimateSet`,
:class:`Tally`, and the modules :mod:`pldp.theory`, :mod:`pldp.privacy` and :mod:`pldp.metrics`.
"""

from pldp import datasets, metrics, privacy, protocols, theory
from pldp.budgets import ItemBudgets, PrivacyLevel
from pldp.domain import Domain
from pldp.errors import (
    BudgetError,
    DomainError,
    EstimationError,
    ParameterError,
    PLDPError,
    SolverError,
    TallyError,
)
from pldp.estimation import Estimate, EstimateSet, estimate
from pldp.itemsets import ItemSets
from pldp.mechanisms import (
    IDUE,
    IPRR,
    KRR,
    LGRR,
    LIDUE,
    LIPRR,
    LOSUE,
    LOUE,
    LSOUE,
    LSUE,
    OUE,
    RAPPOR,
    URR,
    DirectEncoding,
    Longitudinal,
    LongitudinalDirect,
    LongitudinalUnary,
    Mechanism,
    Memo,
    UnaryEncoding,
)
from pldp.oracle import FrequencyOracle
from pldp.privacy import ComposedPrivacy, PrivacyCheck, PrivacyReport
from pldp.protocols import PaddingSampling, Protocol
from pldp.tally import Tally

#: The version of pldp.
__version__ = "0.1.0"

__all__ = [
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
    "OUE",
    "RAPPOR",
    "URR",
    "BudgetError",
    "ComposedPrivacy",
    "DirectEncoding",
    "Domain",
    "DomainError",
    "Estimate",
    "EstimateSet",
    "EstimationError",
    "FrequencyOracle",
    "ItemBudgets",
    "ItemSets",
    "Longitudinal",
    "LongitudinalDirect",
    "LongitudinalUnary",
    "Mechanism",
    "Memo",
    "PLDPError",
    "PaddingSampling",
    "ParameterError",
    "PrivacyCheck",
    "PrivacyLevel",
    "PrivacyReport",
    "Protocol",
    "SolverError",
    "Tally",
    "TallyError",
    "UnaryEncoding",
    "__version__",
    "datasets",
    "estimate",
    "metrics",
    "privacy",
    "protocols",
    "theory",
]
