"""Detection of unlikely unary reports, and estimation from the reports that remain.

An honest unary report (RAPPOR, OUE, IDUE; the levels of PBP, PPDA, PLDP-FEBSF, RCF) sets its
user's bit with probability :math:`a_x` and every other bit ``k`` with :math:`b_k`,
independently, so its number of ones is Poisson-binomial:

.. math::

    S \\mid x \\;\\sim\\; \\mathrm{Bern}(a_x) + \\sum_{k \\ne x} \\mathrm{Bern}(b_k),

computed exactly here (:func:`poisson_binomial`: convolutions of binomial laws, one per distinct
``b``). A report is **flagged** at level :math:`\\alpha` when its number of ones ``s`` is in the
tail of *every* honest law (every item class and level): :math:`\\min(\\Pr[S \\le s],
\\Pr[S \\ge s]) < \\alpha` under each of them (:func:`flag_region`). An honest report is
flagged with probability below :math:`2\\alpha`. Fake reports that set many bits (all the
targets, or every bit) or none are flagged; Cao et al.'s MGA, which pads its reports to the
expected number of ones, is not (a test of the count cannot see it).

Tallies keep the histogram of ones and the per-bit counts of the reports in the tail region at
:data:`ALPHA_BAND` (:class:`~pldp.tally.Tally`), so the flagged share at any
:math:`\\alpha \\le` :data:`ALPHA_BAND` and the counts of the kept reports are known.

**Estimation from the kept reports** (``"detect"``). Dropping the flagged reports drops honest
ones too, unevenly across bits: given item ``x``, a report is kept with probability
:math:`\\kappa_x = \\Pr[S \\notin F \\mid x]` and sets bit ``j`` *and* is kept with

.. math::

    M_{jx} = a_x \\Pr[1 + R_x \\notin F] \\ (j = x), \\qquad
    M_{jx} = b_j \\Pr[1 + R_{xj} \\notin F] \\ (j \\ne x),

where :math:`R_x` counts the ones of the other bits and :math:`R_{xj}` those of the bits other
than ``j``, the own bit included (both Poisson-binomial). So the kept per-bit counts have
:math:`E[C'] = M g` with :math:`g = n p`, the honest users' item counts: the estimate solves
:math:`M \\hat g = C'` (exactly, through the item classes: ``M`` is a diagonal plus a
class-block matrix) and returns :math:`\\hat f = \\hat g / \\sum \\hat g`. This is **the
correction** for the honest reports dropped: without it the kept reports' bits are biased
towards the typical number of ones. Its variance: :math:`C'_j(1 - C'_j/N)/(D_j \\hat n)^2`
with :math:`D_j` the diagonal of ``M`` net of its class block (the binomial variance of the
kept count, through the solve's leading term). A mixture of levels with known shares (PBP) has
the mixture of their matrices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp.errors import EstimationError, ParameterError
from pldp.estimation.result import Estimate

__all__ = [
    "ALPHA_BAND",
    "DEFAULT_ALPHA",
    "KeptChannel",
    "UnaryLaws",
    "detect_estimate",
    "detect_unary",
    "flag_region",
    "flagged_share",
    "ones_excess",
    "poisson_binomial",
    "screen",
]

#: The tail level whose region tallies keep per-bit counts of: detection works at any alpha <= it.
ALPHA_BAND = 1e-3
#: The default level of detection.
DEFAULT_ALPHA = 1e-3


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
        only :meth:`KeptChannel` uses them.
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
        counts = self.sizes.copy()
        for c in minus:
            counts[c] -= 1
        return poisson_binomial(self.b[comp], counts)

    def mixture(self) -> np.ndarray | None:
        """The honest law of the number of ones when it does not depend on the item (one class) and
        the components' weights are known: their laws mixed with the weights; else None."""
        return _mixture(self)

    def laws(self) -> np.ndarray:
        """``(L * K, d + 1)``: the law of the number of ones for each component and item class."""
        out = []
        for comp in range(self.a.shape[0]):
            for c in range(self.sizes.size):
                if self.sizes[c] == 0:
                    continue
                rest = self.others(comp, (c,))
                own = np.array([1 - self.a[comp, c], self.a[comp, c]])
                out.append(np.convolve(own, rest))
        return np.array(out)


def _mixture(laws: UnaryLaws) -> np.ndarray | None:
    if laws.sizes.size != 1 or not laws.weights_known:
        return None
    return np.asarray(laws.weights @ laws.laws() / laws.weights.sum())


def flag_region(laws: UnaryLaws, alpha: float) -> np.ndarray:
    """Boolean over ``s = 0..d``: ``s`` ones is in a tail of probability below ``alpha`` under every
    honest law (module docstring)."""
    if not 0 < alpha < 0.5:
        raise ParameterError(f"alpha must lie in (0, 0.5), got {alpha!r}")
    pmf = laws.laws()
    lower = np.cumsum(pmf, axis=1)
    upper = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
    return np.asarray(np.max(np.minimum(lower, upper), axis=0) < alpha)


def flagged_share(ones: np.ndarray, region: np.ndarray) -> float:
    """The share of reports whose number of ones is in ``region``."""
    total = int(ones.sum())
    return float(ones[region[: ones.size]].sum() / total) if total else 0.0


@dataclass(frozen=True)
class KeptChannel:
    """What :func:`detect_estimate` needs of the kept reports' channel (module docstring).

    ``own[c]``: :math:`M_{xx}` for an item of class ``c``; ``cross[cx, cj]``: :math:`M_{jx}` for
    ``x`` of class ``cx`` and ``j != x`` of class ``cj``; ``kept[c]``: :math:`\\kappa_x`. Each is
    the mixture over components with their weights.
    """

    own: np.ndarray
    cross: np.ndarray
    kept: np.ndarray
    classes: np.ndarray

    @classmethod
    def of(cls, laws: UnaryLaws, region: np.ndarray) -> KeptChannel:
        keep = ~np.asarray(region, dtype=bool)
        n_cls = laws.sizes.size
        own, cross, kept = np.zeros(n_cls), np.zeros((n_cls, n_cls)), np.zeros(n_cls)

        def p_keep(law: np.ndarray, shift: int) -> float:  # Pr[shift + R kept]
            return float(law @ keep[shift : shift + law.size])

        for comp, weight in enumerate(laws.weights):
            a, b = laws.a[comp], laws.b[comp]
            for cx in range(n_cls):
                if laws.sizes[cx] == 0:
                    continue
                rest = laws.others(comp, (cx,))
                own[cx] += weight * a[cx] * p_keep(rest, 1)
                kept[cx] += weight * (a[cx] * p_keep(rest, 1) + (1 - a[cx]) * p_keep(rest, 0))
                for cj in range(n_cls):
                    if laws.sizes[cj] - (cj == cx) <= 0:
                        continue
                    inner = np.convolve([1 - a[cx], a[cx]], laws.others(comp, (cx, cj)))
                    cross[cx, cj] += weight * b[cj] * p_keep(inner, 1)
        return cls(own, cross, kept, laws.classes)


def detect_estimate(
    channel: KeptChannel, kept_counts: np.ndarray, n_reports: int
) -> tuple[np.ndarray, np.ndarray, float]:
    """Solve :math:`M \\hat g = C'` and return ``(f, variance, n_hat)`` (module docstring).

    ``M g = D g + E B u`` with ``D_j = own[c_j] - cross[c_j, c_j]``, ``(E B u)_j = sum_c
    cross[c, c_j] u_c`` and ``u_c`` the class totals of ``g``: ``u`` solves a K x K system.
    """
    cls = channel.classes
    n_cls = channel.own.size
    diag = channel.own[cls] - channel.cross[cls, cls]
    if np.any(diag <= 0):
        raise EstimationError("detection leaves no information on some item (every report holding it is flagged)")
    c = np.asarray(kept_counts, dtype=float)
    indicator = np.zeros((cls.size, n_cls))
    indicator[np.arange(cls.size), cls] = 1.0
    coupling = indicator @ channel.cross.T  # (d, K): row j = cross[:, c_j]
    lhs = np.eye(n_cls) + indicator.T @ (coupling / diag[:, None])
    u = np.linalg.solve(lhs, indicator.T @ (c / diag))
    g = (c - coupling @ u) / diag
    n_hat = float(g.sum())
    if not n_hat > 0:
        raise EstimationError("the kept reports give no positive total: too few reports remain")
    var = np.clip(c, 0, None) * np.clip(1 - c / max(n_reports, 1), 0, None) / (diag * n_hat) ** 2
    return g / n_hat, var, n_hat


def ones_excess(ones: np.ndarray, law: np.ndarray) -> float:
    """The share of reports beyond what the honest law of the number of ones allows.

    :math:`\\sum_s \\max(0, h_s/N - P_s - z\\sqrt{P_s(1-P_s)/N})` with :math:`z =
    \\Phi^{-1}(1 - 0.05/(d+1))`: 0 with probability at least 95 % without fakes; a lower bound on
    the share of fakes whose numbers of ones pile up where honest ones do not (Cao et al.'s MGA
    gives every fake report the same count, which a test of one report cannot see).
    """
    hist = np.asarray(ones, dtype=float)
    n = hist.sum()
    if n <= 0:
        return 0.0
    from scipy.special import ndtri  # scipy is imported where it is used: `import pldp` and the clients load without it

    z = float(ndtri(1 - 0.05 / hist.size))
    p = np.asarray(law, dtype=float)[: hist.size]
    return float(np.maximum(hist / n - p - z * np.sqrt(p * (1 - p) / n), 0.0).sum())


def describe(
    ones: Any, region_alpha: np.ndarray, region_band: np.ndarray, alpha: float, law: np.ndarray | None = None
) -> dict[str, Any]:
    """The diagnostics of detection for an estimate's ``info``: the flagged reports, and the excess
    of the histogram of ones over ``law`` (the honest law, when it does not depend on the items)."""
    hist = np.asarray(ones)
    out = {
        "alpha": alpha,
        "flagged": int(hist[region_alpha[: hist.size]].sum()),
        "flagged_share": flagged_share(hist, region_alpha),
        "flagged_ones": np.flatnonzero(region_alpha[: hist.size] & (hist > 0)).tolist(),
        "tail_share": flagged_share(hist, region_band),
    }
    if law is not None:
        out["ones_excess_share"] = ones_excess(hist, law)
    return out


def detect_unary(oracle: Any, tally: Any, laws: UnaryLaws, alpha: float = DEFAULT_ALPHA) -> Estimate:
    """The ``"detect"`` estimate of a unary tally (module docstring): flag, drop, invert the kept channel.

    A tally without per-report statistics (drawn at count level, or merged with one) cannot be
    screened: nothing is flagged, ``info["detection"]`` says so, and the estimate is the same
    inversion with every report kept.
    """
    if not 0 < alpha <= ALPHA_BAND:
        raise EstimationError(f"alpha must lie in (0, {ALPHA_BAND:g}] (the tallies keep tail counts at {ALPHA_BAND:g})")
    counts = np.asarray(tally.counts, dtype=float)
    info: dict[str, Any] = {"estimator": "detect: flagged reports dropped, kept channel inverted"}
    if tally.ones is None:
        region = np.zeros(laws.d + 1, dtype=bool)
        info["detection"] = "unavailable: the tally holds no per-report statistics (drawn at count level?)"
    else:
        region = flag_region(laws, alpha)
        dropped = sum((v for s, v in (tally.tails or {}).items() if region[s]), np.zeros(counts.size))
        counts = counts - dropped
        info.update(describe(tally.ones, region, flag_region(laws, ALPHA_BAND), alpha, laws.mixture()))
    freq, var, n_hat = detect_estimate(KeptChannel.of(laws, region), counts, tally.n)
    info["honest_reports"] = n_hat
    return Estimate(freq, var, tally.n, "detect", oracle.domain, info=info)


def screen(oracle: Any, tally: Any, alpha: float = DEFAULT_ALPHA) -> dict[str, Any] | None:
    """Detection's diagnostics for any oracle's tally, without estimating: ``flagged``,
    ``flagged_share``, ``flagged_ones``, ``tail_share`` and (when the honest law of the count does
    not depend on the item) ``ones_excess_share``; None when the oracle's reports are not unary or
    the tally holds no per-report statistics (a count-level simulation, a grouped tally).

    For a collector's dashboard: the share of reports flagged, next to any estimate.
    """
    laws = getattr(oracle, "ones_laws", None)
    hist = getattr(tally, "ones", None)
    if not isinstance(laws, UnaryLaws) or hist is None or not 0 < alpha <= ALPHA_BAND:
        return None
    return describe(hist, flag_region(laws, alpha), flag_region(laws, ALPHA_BAND), alpha, laws.mixture())
