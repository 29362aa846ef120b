"""The interface of protocols: objects that ``pldp.estimate`` delegates to."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from pldp.estimation.result import Estimate
from pldp.tally import Tally

__all__ = ["Protocol"]


class Protocol(ABC):
    """A composition of mechanisms with its own estimator.

    ``pldp.estimate(protocol, tally, method)`` calls :meth:`estimate`, so protocols and plain
    mechanisms are used the same way.
    """

    @abstractmethod
    def estimate(self, tally: Tally, method: str = "unbiased", **options: Any) -> Estimate:
        """Estimate from a tally of this protocol's reports."""
