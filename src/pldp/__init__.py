"""pldp: personalized local differential privacy for frequency estimation.

The pipeline::

    value --Domain.encode--> index --Mechanism.perturb--> report --Mechanism.tally--> Tally
    Tally --pldp.estimate(mechanism, tally, method)--> Estimate

Every mechanism (:class:`KRR`, :class:`URR`, :class:`IPRR`, :class:`RAPPOR`, :class:`OUE`,
:class:`IDUE`, :class:`URAP`; :class:`OLH`, :class:`HR`, :class:`SS`, :class:`CMS` and :class:`HCMS`
for large domains; the longitudinal :class:`LGRR`, :class:`LIPRR`, :class:`LOUE`, :class:`LOSUE`,
:class:`LSUE`, :class:`LSOUE`, :class:`LIDUE`) and protocol (:mod:`pldp.protocols`) is a
:class:`FrequencyOracle` with the same interface: ``perturb``, ``tally``, ``simulate``,
``estimate``, ``privacy``, ``params`` and ``fingerprint``. Other public names: :class:`Domain`,
:class:`ItemBudgets`, :class:`ItemSets`, :func:`estimate`, :class:`Estimate`, :class:`EstimateSet`,
:class:`Tally`, the heavy hitters' :class:`PEM`, :class:`TreeHist` and :class:`SFP` and their
:class:`Discovery` (:mod:`pldp.heavy`), and the modules :mod:`pldp.theory`, :mod:`pldp.privacy` and
:mod:`pldp.metrics`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pldp._lazy import lazy_names
from pldp.errors import (
    BudgetError,
    DomainError,
    EstimationError,
    ParameterError,
    PLDPError,
    SolverError,
    TallyError,
)

if TYPE_CHECKING:  # what the names below are, for type checkers; at run time each loads on first use
    from pldp import datasets, metrics, privacy, protocols, theory
    from pldp.budgets import ItemBudgets, PrivacyLevel
    from pldp.domain import Domain
    from pldp.estimation import Estimate, EstimateSet, estimate
    from pldp.heavy import PEM, SFP, Discovery, TreeHist
    from pldp.itemsets import ItemSets
    from pldp.mechanisms import (
        CMS,
        HCMS,
        HR,
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
        OLH,
        OUE,
        RAPPOR,
        SS,
        URAP,
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

_MECHANISMS = (
    "CMS", "HCMS", "HR", "IDUE", "IPRR", "KRR", "LGRR", "LIDUE", "LIPRR", "LOSUE", "LOUE", "LSOUE", "LSUE", "OLH",
    "OUE", "RAPPOR", "SS", "URAP", "URR", "DirectEncoding", "Longitudinal", "LongitudinalDirect", "LongitudinalUnary",
    "Mechanism", "Memo", "UnaryEncoding",
)  # fmt: skip
#: Where each public name is defined. ``import pldp`` loads none of them: the first use of a name
#: imports its module (PEP 562, :mod:`pldp._lazy`), so ``import pldp.client`` or ``pldp --help``
#: costs what it uses, not the estimators of every family and scipy. A subpackage
#: (``pldp.theory``) is imported on first use too.
_LAZY: dict[str, str] = {
    **{name: "pldp.budgets" for name in ("ItemBudgets", "PrivacyLevel")},
    "Domain": "pldp.domain",
    **{name: "pldp.estimation" for name in ("Estimate", "EstimateSet", "estimate")},
    "ItemSets": "pldp.itemsets",
    **{name: "pldp.heavy" for name in ("PEM", "TreeHist", "SFP", "Discovery")},
    **{name: "pldp.mechanisms" for name in _MECHANISMS},
    "FrequencyOracle": "pldp.oracle",
    **{name: "pldp.privacy" for name in ("ComposedPrivacy", "PrivacyCheck", "PrivacyReport")},
    **{name: "pldp.protocols" for name in ("PaddingSampling", "Protocol")},
    "Tally": "pldp.tally",
}


#: The version of pldp.
__version__ = "0.1.0"

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
    "PEM",
    "RAPPOR",
    "SFP",
    "SS",
    "URAP",
    "URR",
    "BudgetError",
    "ComposedPrivacy",
    "DirectEncoding",
    "Discovery",
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
    "TreeHist",
    "UnaryEncoding",
    "__version__",
    "datasets",
    "estimate",
    "metrics",
    "privacy",
    "protocols",
    "theory",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, subpackages=True)
