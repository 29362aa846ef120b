"""Reading canonical parameters back: the values every ``from_params`` needs.

:meth:`pldp.FrequencyOracle.params` writes labels as a list or ``{"range": d}`` and budgets as
numbers or ``"inf"`` (:mod:`pldp.fingerprint`); these functions read them back, refusing
anything else with a :class:`~pldp.errors.SpecError` (parameters usually come from a campaign
spec).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.budgets import ItemBudgets
from pldp.domain import Domain
from pldp.errors import SpecError

__all__ = ["budgets_of", "domain_of", "epsilons_of"]


def domain_of(labels: Any) -> Domain:
    """The :class:`~pldp.Domain` of canonical labels: ``{"range": d}`` or a list of strings or numbers."""
    if isinstance(labels, dict) and set(labels) == {"range"}:
        return Domain.range(int(labels["range"]))
    if isinstance(labels, list) and all(isinstance(x, (str, int, float, bool)) for x in labels):
        return Domain(labels)
    raise SpecError(f"labels must be {{'range': d}} or a list of strings or numbers, got {labels!r}")


def epsilons_of(values: Any) -> np.ndarray:
    """Budgets as floats (``"inf"`` is infinity)."""
    return np.array([np.inf if v == "inf" else float(v) for v in values], dtype=float)


def budgets_of(params: dict[str, Any]) -> ItemBudgets:
    """The :class:`~pldp.ItemBudgets` of a mechanism's parameters (``epsilons`` over ``labels``)."""
    return ItemBudgets(epsilons_of(params["epsilons"]), domain_of(params["labels"]))
