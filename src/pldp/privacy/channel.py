"""Exact per-output privacy check of a direct-encoding channel (IPLDP, ULDP, LDP).

Every item-level notion pldp implements for direct encoding is a per-*output* condition on
the channel :math:`Q(y \\mid x)`:

* **IPLDP** (Li et al., Def. 3): for a sensitive output :math:`y \\in D_S`,
  :math:`\\max_x Q(y|x) / \\min_x Q(y|x) \\le e^{\\varepsilon_y}` (condition 3); a
  non-sensitive output :math:`y \\in D_N` is reached only from its own input,
  :math:`Q(y|y) > 0` and :math:`Q(y|x) = 0` for :math:`x \\ne y` (condition 4).
* **ULDP** (Murakami & Kawamoto, 2019) with protected outputs :math:`D_S` and invertible
  outputs :math:`D_N` is the same check with one budget on :math:`D_S`.
* **epsilon-LDP** is the same check with one budget on every output.

The *realised* epsilon of output ``y`` is :math:`\\ln \\max_x Q(y|x) - \\ln \\min_x Q(y|x)`
(``inf`` when some input cannot produce ``y``); the mechanism's plain-LDP epsilon is the
largest of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pldp.errors import ParameterError
from pldp.privacy.base import TOLERANCE, PrivacyCheck

__all__ = ["PrivacyReport", "check_channel", "report_from_columns"]


@dataclass(frozen=True, repr=False)
class PrivacyReport(PrivacyCheck):
    """Outcome of an exact per-output privacy check of a direct-encoding channel.

    Attributes
    ----------
    notion : str
        ``"LDP"``, ``"ULDP"`` or ``"IPLDP"``.
    claimed : ndarray
        Budget claimed for each output item; ``inf`` marks a non-sensitive (invertible)
        output.
    realised : ndarray
        Realised epsilon of each output item (see module docstring).
    invertible : ndarray of bool
        Whether each output is reached from its own input only (condition 4).
    tolerance : float
        Absolute slack allowed on each log-ratio.
    """

    notion: str
    claimed: np.ndarray
    realised: np.ndarray
    invertible: np.ndarray
    tolerance: float = TOLERANCE

    @property
    def sensitive(self) -> np.ndarray:
        """Mask of outputs with a finite claimed budget."""
        return np.isfinite(self.claimed)

    @property
    def violations(self) -> np.ndarray:
        """Indices of outputs whose condition fails."""
        s = self.sensitive
        bad_s = s & ~(self.realised <= self.claimed + self.tolerance)
        bad_n = ~s & ~self.invertible
        return np.flatnonzero(bad_s | bad_n)

    @property
    def holds(self) -> bool:
        """True when every output satisfies its condition."""
        return self.violations.size == 0

    @property
    def slack(self) -> float:
        """Smallest ``claimed - realised`` over sensitive outputs (>= -tolerance when it holds)."""
        s = self.sensitive
        return float(np.min(self.claimed[s] - self.realised[s])) if s.any() else math.inf

    @property
    def ldp_epsilon(self) -> float:
        """Plain-LDP epsilon the channel satisfies: the largest realised epsilon."""
        return float(np.max(self.realised))

    @property
    def uldp_epsilon(self) -> float:
        """Largest realised epsilon over the sensitive outputs (the ULDP budget)."""
        s = self.sensitive
        return float(np.max(self.realised[s])) if s.any() else math.inf

    def summary(self) -> str:
        """One human-readable paragraph."""
        state = "holds" if self.holds else f"FAILS at outputs {self.violations.tolist()[:10]}"
        return (
            f"{self.notion} {state}; |D_S|={int(self.sensitive.sum())}, |D_N|={int((~self.sensitive).sum())}, "
            f"slack={self.slack:.3g}, ULDP eps={self.uldp_epsilon:.6g}, LDP eps={self.ldp_epsilon:.6g}"
        )


def report_from_columns(
    col_max: np.ndarray,
    col_min: np.ndarray,
    invertible: np.ndarray,
    claimed: np.ndarray,
    notion: str,
    *,
    realised: np.ndarray | None = None,
    tolerance: float = TOLERANCE,
) -> PrivacyReport:
    """Build a report from per-output column maxima and minima of the channel.

    ``realised`` may be passed when the caller can compute the log-ratio more accurately
    than ``log(col_max) - log(col_min)`` (e.g. ``log1p(delta / q)``).
    """
    claimed = np.asarray(claimed, dtype=float)
    if realised is None:
        with np.errstate(divide="ignore"):
            realised = np.where(col_min > 0, np.log(col_max) - np.log(np.where(col_min > 0, col_min, 1.0)), np.inf)
    return PrivacyReport(notion, claimed, np.asarray(realised, dtype=float), np.asarray(invertible, bool), tolerance)


def check_channel(
    channel: np.ndarray, claimed: np.ndarray, notion: str = "IPLDP", tolerance: float = TOLERANCE
) -> PrivacyReport:
    """Check a full channel matrix (rows = inputs, ``Q[x, y] = Pr(y | x)``) exactly.

    Parameters
    ----------
    channel : ndarray, shape (d, d)
        Row-stochastic matrix.
    claimed : array_like, shape (d,)
        Budget claimed for each output (``inf`` = must be invertible).
    """
    Q = np.asarray(channel, dtype=float)
    claimed = np.asarray(claimed, dtype=float)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1] or claimed.shape != (Q.shape[1],):
        raise ParameterError(f"channel must be square and match claimed; got {Q.shape} and {claimed.shape}")
    off = Q.copy()
    np.fill_diagonal(off, 0.0)
    invertible = (np.diag(Q) > 0) & ~np.any(off > 0, axis=0)
    return report_from_columns(Q.max(axis=0), Q.min(axis=0), invertible, claimed, notion, tolerance=tolerance)
