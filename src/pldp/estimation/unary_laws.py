"""The honest laws of a unary report's number of ones, and the regions detection flags and tallies keep.

An honest unary report (RAPPOR, OUE, IDUE; the levels of PBP, PPDA, PLDP-FEBSF, RCF) sets its
user's bit with probability :math:`a_x` and every other bit ``k`` with :math:`b_k`,
independently, so its number of ones is Poisson-binomial (:func:`poisson_binomial`);
:class:`UnaryLaws` holds these laws per item class and level, :func:`flag_region` the counts in
the tail of every one of them, :func:`tally_region` the counts whose reports' bits tallies keep.
Detection (:mod:`pldp.estimation.detect`) and its joint test (:mod:`pldp.estimation.joint`) use them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pldp.errors import ParameterError

__all__ = [
    "ALPHA_BAND",
    "DEFAULT_ALPHA",
    "TALLY_BAND",
    "UnaryLaws",
    "flag_region",
    "flagged_share",
    "mixture",
    "poisson_binomial",
    "tally_region",
]

#: The tail level whose region tallies keep per-bit counts of: detection works at any alpha <= it.
ALPHA_BAND = 1e-3
#: The default level of detection.
DEFAULT_ALPHA = 1e-3
#: The level of the upper per-count tail whose reports the tallies keep per-bit counts of (wider
#: than :data:`ALPHA_BAND`; :func:`tally_region`): the joint test's estimate can drop the reports
#: at any of these counts.
TALLY_BAND = 0.05


def poisson_binomial(probs: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The law of a sum of independent Bernoulli variables: ``counts[i]`` of them with ``probs[i]``.

    Exact up to rounding (convolution of binomial laws; FFT for long ones, clipped at 0).

    Examples
    --------
    >>> np.round(poisson_binomial(np.array([0.5]), np.array([2])), 12).tolist()
    [0.25, 0.5, 0.25]
    """
    from scipy.signal import (
        fftconvolve,  # scipy is imported where it is used: `import pldp` and the clients load without it
    )
    from scipy.stats import binom

    out = np.ones(1)
    for prob, count in zip(np.asarray(probs, dtype=float), np.asarray(counts, dtype=int), strict=True):
        if count <= 0:
            continue
        part = binom.pmf(np.arange(count + 1), count, prob)
        out = np.convolve(out, part) if out.size * part.size <= 1 << 20 else np.clip(fftconvolve(out, part), 0, None)
    return np.asarray(out / out.sum())


@dataclass(frozen=True)
class UnaryLaws:
    """The honest unary reports of an oracle: components (levels) and item classes.

    Attributes
    ----------
    weights : ndarray, shape (L,)
        Each component's share (PBP's public shares; one component of weight 1 for a mechanism);
        only :class:`pldp.estimation.detect.KeptChannel` uses them.
    a, b : ndarray, shape (L, K)
        Each component's bit probabilities per item class.
    sizes : ndarray of int, shape (K,)
        Items per class.
    classes : ndarray of int, shape (d,)
        Each item's class.
    weights_known : bool
        Whether the weights are the honest users' (PBP's public shares, one mechanism) or only a
        placeholder (levels of unknown shares: PPDA, PLDP-FEBSF).
    """

    weights: np.ndarray
    a: np.ndarray
    b: np.ndarray
    sizes: np.ndarray
    classes: np.ndarray
    weights_known: bool = True
    _cache: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, components: list[tuple[float, np.ndarray, np.ndarray]], weights_known: bool = True) -> UnaryLaws:
        """From ``(weight, a, b)`` per component (``a``, ``b`` of shape (d,)), classes of items
        sharing every component's ``(a, b)``."""
        a = np.stack([np.asarray(c[1], dtype=float) for c in components])
        b = np.stack([np.asarray(c[2], dtype=float) for c in components])
        keys = np.concatenate([a, b]).T  # (d, 2L)
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        n_comp = len(components)
        sizes = np.bincount(inverse, minlength=uniq.shape[0])
        weights = np.array([float(c[0]) for c in components])
        return cls(weights, uniq[:, :n_comp].T.copy(), uniq[:, n_comp:].T.copy(), sizes, inverse, weights_known)

    @property
    def d(self) -> int:
        """Bits per report."""
        return int(self.sizes.sum())

    def others(self, comp: int, minus: tuple[int, ...]) -> np.ndarray:
        """Law of the ones among the ``b``-bits of component ``comp``, one bit of each class in ``minus`` left out."""
        key = ("others", comp, tuple(sorted(minus)))
        if key not in self._cache:
            counts = self.sizes.copy()
            for c in minus:
                counts[c] -= 1
            self._cache[key] = poisson_binomial(self.b[comp], counts)
        return np.asarray(self._cache[key])

    def memo(self, key: tuple[Any, ...], build: Callable[[], Any], *, most: int | None = None) -> Any:
        """The value cached under ``key`` (a tuple whose first entry names its family), ``build()`` on
        first use. With ``most``, at most that many keys of the family are kept: past it, the value is
        built and returned without being kept (what the callers of these laws cache on them)."""
        if key in self._cache:
            return self._cache[key]
        value = build()
        if most is None or sum(1 for k in self._cache if isinstance(k, tuple) and k[:1] == key[:1]) < most:
            self._cache[key] = value
        return value

    def last(self, slot: str, key: Any, build: Callable[[], Any]) -> Any:
        """``build()``, or the value of the last call for ``slot`` when it was for the same ``key`` (one
        value kept per slot)."""
        held = self._cache.get(("last", slot))
        if held is not None and held[0] == key:
            return held[1]
        value = build()
        self._cache[("last", slot)] = (key, value)
        return value

    def mixture(self) -> np.ndarray | None:
        """The honest law of the number of ones when it does not depend on the item (one class) and
        the components' weights are known: their laws mixed with the weights; else None."""
        return mixture(self)

    def laws(self) -> np.ndarray:
        """``(L * K, d + 1)``: the law of the number of ones for each component and item class (cached)."""
        if "laws" not in self._cache:
            self._cache["laws"] = self._laws()
        return np.asarray(self._cache["laws"])

    def _laws(self) -> np.ndarray:
        out = []
        for comp in range(self.a.shape[0]):
            for c in range(self.sizes.size):
                if self.sizes[c] == 0:
                    continue
                rest = self.others(comp, (c,))
                own = np.array([1 - self.a[comp, c], self.a[comp, c]])
                out.append(np.convolve(own, rest))
        return np.array(out)


def mixture(laws: UnaryLaws) -> np.ndarray | None:
    if laws.sizes.size != 1 or not laws.weights_known:
        return None
    if "mixture" not in laws._cache:
        laws._cache["mixture"] = laws.weights @ laws.laws() / laws.weights.sum()
    return np.array(laws._cache["mixture"])


def flag_region(laws: UnaryLaws, alpha: float) -> np.ndarray:
    """Boolean over ``s = 0..d``: ``s`` ones is in a tail of probability below ``alpha`` under every
    honest law (module docstring)."""
    if not 0 < alpha < 0.5:
        raise ParameterError(f"alpha must lie in (0, 0.5), got {alpha!r}")
    key = ("region", float(alpha))
    if key not in laws._cache:
        pmf = laws.laws()
        lower = np.cumsum(pmf, axis=1)
        upper = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
        laws._cache[key] = np.max(np.minimum(lower, upper), axis=0) < alpha
    return np.array(laws._cache[key])


def tally_region(laws: UnaryLaws) -> np.ndarray:
    """The numbers of ones whose reports' per-bit counts tallies keep: the flag region at
    :data:`ALPHA_BAND` (both tails) and the *upper* tail of probability below :data:`TALLY_BAND`
    under every honest law (where fakes setting many bits hide; at OUE, d = 16, eps = 1: 9 ones
    and more, about 5 % of honest reports). The lower tail is left out: fakes with few ones
    promote few targets, and at large d its counts would double the tally's size."""
    key = ("tally-region",)
    if key not in laws._cache:
        pmf = laws.laws()
        upper = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
        laws._cache[key] = flag_region(laws, ALPHA_BAND) | (np.max(upper, axis=0) < TALLY_BAND)
    return np.array(laws._cache[key])


def flagged_share(ones: np.ndarray, region: np.ndarray) -> float:
    """The share of reports whose number of ones is in ``region``."""
    total = int(ones.sum())
    return float(ones[region[: ones.size]].sum() / total) if total else 0.0
