"""The interface every frequency-oracle mechanism implements."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from pldp.domain import Domain
from pldp.privacy import PrivacyReport
from pldp.tally import Tally

__all__ = ["Mechanism"]


class Mechanism(ABC):
    """A public, immutable description of one user's randomizer.

    Every mechanism in pldp is a *pure* frequency oracle: for each item ``y`` a report
    either *supports* ``y`` or not, with

    .. math::

        \\Pr[\\text{report supports } y \\mid x = y] = p^*_y, \\qquad
        \\Pr[\\text{report supports } y \\mid x \\ne y] = q^*_y,

    so that the support count :math:`C_y` of ``n`` reports has mean
    :math:`n q^*_y + n_y (p^*_y - q^*_y)` and the generic unbiased estimator is
    :math:`\\hat n_y = (C_y - n q^*_y) / (p^*_y - q^*_y)` (Wang et al., USENIX Security 2017).

    Subclasses define the report format (``family``), how to perturb a batch of users,
    how to tally reports, exact count-level simulation and an exact privacy check.
    """

    #: Report family: ``"direct"`` (a report is one item) or ``"unary"`` (one bit per item).
    family: str = ""

    @property
    @abstractmethod
    def domain(self) -> Domain:
        """Item labels."""

    @property
    def d(self) -> int:
        """Domain size."""
        return len(self.domain)

    @property
    @abstractmethod
    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """``(p_star, q_star)``: per-item support probabilities (see class docstring)."""

    @abstractmethod
    def channel(self) -> np.ndarray:
        """The channel matrix, rows = inputs (``Q[x, y] = Pr(y | x)`` for direct encoding)."""

    @abstractmethod
    def perturb(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomize a batch of users' item indices."""

    @abstractmethod
    def tally(self, reports: np.ndarray) -> Tally:
        """Aggregate a batch of reports into a mergeable :class:`~pldp.tally.Tally`."""

    @abstractmethod
    def simulate(self, true_counts: np.ndarray, rng: np.random.Generator) -> Tally:
        """Draw the tally of users with the given true item counts, at count level, exactly."""

    @abstractmethod
    def privacy(self) -> PrivacyReport:
        """Check the mechanism's privacy claim exactly."""
