"""The :class:`Estimate` every estimator returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtri

from pldp._validation import check_probability
from pldp.domain import Domain
from pldp.errors import ParameterError

__all__ = ["Estimate"]


@dataclass(frozen=True, eq=False)
class Estimate:
    """An estimated distribution with its uncertainty.

    Attributes
    ----------
    frequencies : ndarray
        Estimated frequency of each item (sums to 1 for every method; may be negative
        for ``"unbiased"``).
    variance : ndarray
        Estimated variance of each frequency (see the estimator for the model).
    n : int
        Number of reports.
    method : str
        Estimator that produced it.
    domain : Domain
        Item labels.
    iterations : int
        Solver iterations (0 for closed forms).
    converged : bool
        Whether the solver met its stopping rule.
    info : dict
        Further solver diagnostics.
    """

    frequencies: np.ndarray
    variance: np.ndarray
    n: int
    method: str
    domain: Domain
    iterations: int = 0
    converged: bool = True
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def counts(self) -> np.ndarray:
        """Estimated number of users holding each item, ``n * frequencies``."""
        return self.n * self.frequencies

    @property
    def std_error(self) -> np.ndarray:
        """Standard error of each frequency."""
        return np.sqrt(self.variance)

    def ci(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Normal-approximation confidence interval of each frequency.

        ``frequencies +/- z * std_error`` with ``z`` the ``(1 + level) / 2`` normal
        quantile. For the simplex-constrained methods the bounds are clipped to [0, 1].
        """
        lvl = check_probability(level, "level")
        if not 0.0 < lvl < 1.0:
            raise ParameterError(f"level must lie in (0, 1), got {level!r}")
        z = float(ndtri(0.5 + lvl / 2.0))
        half = z * self.std_error
        lo, hi = self.frequencies - half, self.frequencies + half
        if self.method != "unbiased":
            lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
        return lo, hi

    def to_dict(self) -> dict[str, float]:
        """``{label: frequency}``."""
        return dict(zip(self.domain.labels, self.frequencies.tolist(), strict=True))

    def __repr__(self) -> str:
        top = np.argsort(-self.frequencies)[:3]
        shown = ", ".join(f"{self.domain.labels[i]!r}: {self.frequencies[i]:.4f}" for i in top)
        return f"Estimate(method={self.method!r}, n={self.n}, d={self.frequencies.size}, top=[{shown}])"
