"""What a heavy-hitter protocol returns: a :class:`Discovery` of answers with estimated shares, and the
floor below which an estimate may be noise (:func:`~pldp.heavy.discovery.noise_quantile`).

Every protocol of :mod:`pldp.heavy` chooses its answers among many candidates with the same kind of
reports it estimates them from, so among the candidates held by nobody the largest estimate is some
four standard errors: :attr:`Discovery.floor` states where that noise ends, and
:attr:`Discovery.confident` keeps the answers above it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pldp.estimation import Estimate

__all__ = ["Discovery", "noise_quantile"]


@dataclass(frozen=True)
class Discovery:
    """The strings a heavy-hitter protocol found, with their estimated shares.

    The answers are the candidates of the largest estimates. In PEM the reports that grew the
    candidates also estimate them; in TreeHist and SFP a second report of the whole answer does, so
    that given the candidates each estimate is unbiased. Either way, when there are more candidates
    than answers, an answer near the cut is there partly because its noise was high: its estimate
    leans high and its interval (:meth:`~pldp.estimation.Estimate.ci`) does not have its nominal
    coverage. An answer whose estimate is below :attr:`floor` may be a string nobody holds (a real
    prefix followed by bytes that rose on noise); :attr:`confident` are those above it. An answer
    held by fewer than about :attr:`miss` of the users may have been dropped before it became a
    candidate.

    Attributes
    ----------
    estimate : Estimate
        Over the discovered answers (text, or bytes that are not UTF-8), largest first: shares,
        variances, intervals. There may be fewer than asked when fewer candidates exist.
    max_bytes : int
        The bound: a longer answer is seen as its first ``max_bytes`` bytes.
    floor : float
        The share below which an estimate may be noise: :func:`~pldp.heavy.discovery.noise_quantile` of the last step's
        candidates (at most a 5 % chance that any of them, held by nobody, is estimated above it)
        times the standard error at an absent item.
    miss : float
        The share below which an answer may be dropped while the candidates are found: the same
        noise level at the steps that find them (the largest over the steps; for TreeHist and SFP
        the prefix or fragment reports', which hear a group of users at a share of the budget).
    """

    estimate: Estimate
    max_bytes: int
    floor: float
    miss: float

    @property
    def answers(self) -> list[Any]:
        """The discovered answers, largest estimate first."""
        return list(self.estimate.domain.labels)

    @property
    def confident(self) -> list[Any]:
        """The answers whose estimate is above :attr:`floor`: unlikely to be held by nobody."""
        return [a for a, f in zip(self.answers, self.estimate.frequencies, strict=True) if f > self.floor]

    @property
    def limits(self) -> str:
        """What the discovery cannot see, in words."""
        return (
            f"answers longer than {self.max_bytes} bytes are seen as their first {self.max_bytes} bytes; "
            f"an answer held by fewer than about {self.miss:.2%} of users may be missed, and one estimated "
            f"below {self.floor:.2%} may be held by nobody; the estimates of answers near the cut lean high"
        )


def noise_quantile(tests: int, alpha: float = 0.05) -> float:
    """``z`` with at most ``alpha`` chance that the largest of ``tests`` standard normal errors exceeds it
    (Bonferroni: the ``1 - alpha / tests`` quantile); :attr:`Discovery.floor` in standard errors.

    Examples
    --------
    >>> round(noise_quantile(5120), 2)   # 20 kept prefixes times 256 bytes
    4.27
    """
    from scipy.special import ndtri  # scipy is imported where it is used

    return float(ndtri(1.0 - alpha / max(int(tests), 1)))
