"""pldp: personalized local differential privacy for frequency estimation.

The pipeline::

    value --Domain.encode--> index --Mechanism.perturb--> report --Mechanism.tally--> Tally
    Tally --pldp.estimate(mechanism, tally, method)--> Estimate

Public names: :class:`Domain`, :class:`ItemBudgets`, the mechanisms :class:`KRR`,
:class:`URR`, :class:`IPRR`, :func:`estimate`, :class:`Estimate`, :class:`Tally`, and the
modules :mod:`pldp.theory` and :mod:`pldp.privacy`.
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
from pldp.estimation import Estimate, estimate
from pldp.mechanisms import IDUE, IPRR, KRR, OUE, RAPPOR, URR, DirectEncoding, Mechanism, UnaryEncoding
from pldp.privacy import PrivacyReport
from pldp.protocols import ItemSets, PaddingSampling
from pldp.tally import Tally

__version__ = "0.1.0"

__all__ = [
    "IDUE",
    "IPRR",
    "KRR",
    "OUE",
    "RAPPOR",
    "URR",
    "BudgetError",
    "DirectEncoding",
    "Domain",
    "DomainError",
    "Estimate",
    "EstimationError",
    "ItemBudgets",
    "ItemSets",
    "Mechanism",
    "PLDPError",
    "PaddingSampling",
    "ParameterError",
    "PrivacyLevel",
    "PrivacyReport",
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
