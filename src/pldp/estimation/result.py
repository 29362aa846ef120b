"""What estimators return: :class:`Estimate` (one distribution) and :class:`EstimateSet` (several)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from pldp._validation import check_probability
from pldp.domain import Domain
from pldp.errors import EstimationError, ParameterError

__all__ = ["Estimate", "EstimateSet"]


@dataclass(frozen=True, eq=False)
class Estimate:
    """An estimated distribution with its uncertainty.

    Attributes
    ----------
    frequencies : ndarray
        Estimated frequency of each item. When :attr:`on_simplex` is true they are non-negative
        and sum to 1 (Norm-Sub, MLE). Otherwise they are unconstrained: unbiased estimates may
        be negative, and their sum is 1 exactly for direct encoding (whose counts sum to ``n``)
        but only in expectation for unary encoding and ratio estimators (AUEM, PPDA).
    variance : ndarray
        Estimated variance of each frequency (see the estimator for the model); ``inf`` where
        the estimator offers none.
    n : int
        Number of reports.
    method : str
        Estimator that produced it (one of the oracle's ``methods``).
    domain : Domain
        Item labels.
    iterations : int
        Solver iterations (0 for closed forms).
    converged : bool
        Whether the solver met its stopping rule.
    info : dict
        Further solver diagnostics.
    on_simplex : bool
        Whether the estimator's output always lies on the probability simplex.

    Raises
    ------
    EstimationError
        Frequencies and variances of different shapes, or a negative or NaN variance.
    """

    frequencies: np.ndarray
    variance: np.ndarray
    n: int
    method: str
    domain: Domain
    iterations: int = 0
    converged: bool = True
    info: dict[str, Any] = field(default_factory=dict)
    on_simplex: bool = False

    def __post_init__(self) -> None:
        f = np.asarray(self.frequencies, dtype=float)
        v = np.asarray(self.variance, dtype=float)
        if f.ndim != 1 or v.shape != f.shape or f.size != len(self.domain):
            raise EstimationError(
                f"frequencies {f.shape} and variances {v.shape} must be vectors over the {len(self.domain)} items"
            )
        if not (v >= 0).all():  # NaN fails too: an interval must contain its point
            raise EstimationError("variances must be >= 0 (inf where unknown), not NaN")
        object.__setattr__(self, "frequencies", f)
        object.__setattr__(self, "variance", v)

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

        ``frequencies +/- z * std_error`` with ``z`` the ``(1 + level) / 2`` normal quantile.
        For estimators on the simplex the bounds are clipped to [0, 1] (which keeps the point
        inside, as it lies in [0, 1]); unconstrained estimates are not clipped. Every interval
        contains its point estimate.
        """
        lvl = check_probability(level, "level")
        if not 0.0 < lvl < 1.0:
            raise ParameterError(f"level must lie in (0, 1), got {level!r}")
        from scipy.special import (
            ndtri,  # scipy is imported where it is used: `import pldp` and the clients load without it
        )

        z = float(ndtri(0.5 + lvl / 2.0))
        half = z * self.std_error
        lo, hi = self.frequencies - half, self.frequencies + half
        if self.on_simplex:
            lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
        return lo, hi

    def to_dict(self) -> dict[Any, float]:
        """``{label: frequency}``."""
        return dict(zip(self.domain.labels, self.frequencies.tolist(), strict=True))

    def __repr__(self) -> str:
        top = np.argsort(-self.frequencies)[:3]
        shown = ", ".join(f"{self.domain.labels[i]!r}: {self.frequencies[i]:.4f}" for i in top)
        return f"Estimate(method={self.method!r}, n={self.n}, d={self.frequencies.size}, top=[{shown}])"


@dataclass(frozen=True, eq=False)
class EstimateSet(Sequence[Estimate]):
    """One :class:`Estimate` per attribute (MPLDP), with the same methods, applied to each.

    Index by position or by name (``est[0]``, ``est["attribute 0"]``); iterate over the
    estimates.
    """

    estimates: tuple[Estimate, ...]
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.estimates) != len(self.names) or not self.estimates:
            raise EstimationError("an estimate set needs one name per estimate, and at least one")

    @overload
    def __getitem__(self, key: int | str) -> Estimate: ...
    @overload
    def __getitem__(self, key: slice) -> Sequence[Estimate]: ...
    def __getitem__(self, key: int | str | slice) -> Estimate | Sequence[Estimate]:
        if isinstance(key, str):
            try:
                return self.estimates[self.names.index(key)]
            except ValueError:
                raise KeyError(key) from None
        return self.estimates[key]

    def __len__(self) -> int:
        return len(self.estimates)

    def __iter__(self) -> Iterator[Estimate]:
        return iter(self.estimates)

    @property
    def method(self) -> str:
        """The method of every estimate."""
        return self.estimates[0].method

    @property
    def n(self) -> int:
        """Number of reports."""
        return self.estimates[0].n

    @property
    def frequencies(self) -> tuple[np.ndarray, ...]:
        """Each attribute's frequencies."""
        return tuple(e.frequencies for e in self.estimates)

    @property
    def variance(self) -> tuple[np.ndarray, ...]:
        """Each attribute's variances."""
        return tuple(e.variance for e in self.estimates)

    @property
    def counts(self) -> tuple[np.ndarray, ...]:
        """Each attribute's estimated counts."""
        return tuple(e.counts for e in self.estimates)

    def ci(self, level: float = 0.95) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """:meth:`Estimate.ci` of each attribute."""
        return tuple(e.ci(level) for e in self.estimates)

    def to_dict(self) -> dict[str, dict[Any, float]]:
        """``{attribute name: {label: frequency}}``."""
        return {name: e.to_dict() for name, e in zip(self.names, self.estimates, strict=True)}

    def __repr__(self) -> str:
        return f"EstimateSet(method={self.method!r}, n={self.n}, attributes={list(self.names)})"
