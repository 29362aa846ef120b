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

Where the region starts depends on the budget and ``d`` (OUE, ``d = 16``: from 13 ones at
:math:`\\varepsilon = 0.55`, from 11 at 1), so fakes just below it pass one by one. The
**joint test** (:func:`joint_test`, :func:`joint_info`) tests the whole histogram of ones of the
unflagged reports against the honest law (:func:`honest_law`: exact, or the levels' mixture
fitted): a binomial scan of every count and a likelihood-ratio test, at most ``alpha`` false
alarms without fakes. When it fires, the counts that explain the misfit (``suspect_ones``) are
dropped by ``"detect"`` too. :func:`detection_power` states what the screen can see at a
campaign's ``n``: the smallest share of fakes at the largest unflagged count detected 9 times in
10, and nothing of fakes whose counts follow the honest law.

Tallies keep the histogram of ones and the per-bit counts of the reports in the tail region at
:func:`tally_region` (:class:`~pldp.tally.Tally`), so the flagged share at any
:math:`\\alpha \\le` :data:`ALPHA_BAND` and the counts of the kept reports are known, also when
the joint test drops a count within that band.

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

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from pldp.errors import EstimationError, ParameterError
from pldp.estimation.result import Estimate

__all__ = [
    "ALPHA_BAND",
    "DEFAULT_ALPHA",
    "NO_POWER_SHARE",
    "POWER",
    "TALLY_BAND",
    "KeptChannel",
    "UnaryLaws",
    "detect_estimate",
    "detect_unary",
    "detection_power",
    "flag_region",
    "flagged_share",
    "honest_law",
    "joint_info",
    "joint_test",
    "ones_excess",
    "poisson_binomial",
    "screen",
    "tally_region",
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

    def mixture(self) -> np.ndarray | None:
        """The honest law of the number of ones when it does not depend on the item (one class) and
        the components' weights are known: their laws mixed with the weights; else None."""
        return _mixture(self)

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


def _mixture(laws: UnaryLaws) -> np.ndarray | None:
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

    @cached_property
    def solver(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(D, E B, S)`` of :func:`detect_estimate`: the diagonal, the coupling (``(d, K)``) and
        the matrix taking ``C' / D`` to the class totals ``u`` (computed once per channel)."""
        cls = self.classes
        n_cls = self.own.size
        diag = self.own[cls] - self.cross[cls, cls]
        if np.any(diag <= 0):
            raise EstimationError("detection leaves no information on some item (every report holding it is flagged)")
        indicator = np.zeros((cls.size, n_cls))
        indicator[np.arange(cls.size), cls] = 1.0
        coupling = indicator @ self.cross.T  # (d, K): row j = cross[:, c_j]
        lhs = np.eye(n_cls) + indicator.T @ (coupling / diag[:, None])
        return diag, coupling, np.linalg.solve(lhs, indicator.T)

    @classmethod
    def of(cls, laws: UnaryLaws, region: np.ndarray) -> KeptChannel:
        """The kept channel of ``laws`` with the reports at the counts of ``region`` dropped (cached per region)."""
        key = ("kept", np.asarray(region, dtype=bool).tobytes())
        if key not in laws._cache:
            laws._cache[key] = cls._of(laws, region)
        return laws._cache[key]

    @classmethod
    def _of(cls, laws: UnaryLaws, region: np.ndarray) -> KeptChannel:
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
    diag, coupling, solve_u = channel.solver
    c = np.asarray(kept_counts, dtype=float)
    u = solve_u @ (c / diag)
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


def joint_info(laws: UnaryLaws, hist: Any, alpha: float) -> dict[str, Any]:
    """The joint test of a tally's histogram of ones (:func:`joint_test`, against
    :func:`honest_law`) and what the screen can see at its number of reports
    (:func:`detection_power`), for an estimate's ``info`` and the screen.

    ``suspect_ones``: when the test fired, the counts taken out one at a time, the most excessive
    first (:func:`joint_test`'s ``worst_ones``), the honest law refitted to the rest, until the
    rest fits it at level ``alpha``: the fewest counts, greedily, whose reports explain the misfit.
    """
    h = np.asarray(hist, dtype=float)
    keep = ~flag_region(laws, alpha)
    law, free = honest_law(laws, h, keep)
    power = detection_power(laws, int(h.sum()), alpha)
    # df not reduced by the fitted weights: the levels' laws are nearly collinear, so the fit
    # uses fewer effective parameters than weights; chi-square(bins - 1) is conservative
    first = joint_test(h, law, alpha, 0, keep)
    suspect: list[int] = []
    test = first
    while test["joint_fired"] and test["worst_ones"] is not None and keep.sum() > 2:
        suspect.append(test["worst_ones"])  # the most excessive count out, the law refitted to the rest
        keep[test["worst_ones"]] = False
        law, _ = honest_law(laws, h, keep)
        test = joint_test(h, law, alpha, 0, keep)
    return {
        "joint_p": first["joint_p"],
        "joint_fired": first["joint_fired"],
        "suspect_ones": sorted(suspect),
        "law_fitted": free > 0,
        "flag_from": power["flag_from"],
        "largest_unflagged": power["largest_unflagged"],
        "power_share": power["min_share"],
        "has_power": power["has_power"],
    }


def droppable(tally: Any, counts: list[int]) -> list[int]:
    """The counts among ``counts`` whose reports' per-bit counts the tally holds in full
    (``tails[s]`` sums to ``s`` times the reports with ``s`` ones)."""
    tails = tally.tails or {}
    return [s for s in counts if s in tails and int(np.asarray(tails[s]).sum()) == s * int(tally.ones[s])]


def detect_unary(oracle: Any, tally: Any, laws: UnaryLaws, alpha: float = DEFAULT_ALPHA) -> Estimate:
    """The ``"detect"`` estimate of a unary tally (module docstring): flag, drop, invert the kept channel.

    **When the joint test fires** (:func:`joint_test`: the histogram of ones does not fit the
    honest law at level ``alpha``), the suspect counts (``info["suspect_ones"]``) join the flagged
    ones: their reports are dropped too and the kept channel inverted with them, where the tally
    holds their per-bit counts (within :data:`TALLY_BAND`; ``info["dropped_ones"]``); a suspect
    count in the middle of the law (Cao et al.'s MGA) is kept and named in
    ``info["suspect_kept"]``. Without fakes the joint test fires with probability at most
    ``alpha``, and dropping a count costs variance, not bias (the channel accounts for it).

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
        info.update(describe(tally.ones, region, flag_region(laws, ALPHA_BAND), alpha, laws.mixture()))
        info.update(joint_info(laws, tally.ones, alpha))
        suspect = [s for s in info["suspect_ones"] if not region[s]]
        dropped_ones = droppable(tally, suspect)
        info["dropped_ones"] = dropped_ones
        info["suspect_kept"] = [s for s in suspect if s not in dropped_ones]
        region[dropped_ones] = True
        dropped = sum((v for s, v in (tally.tails or {}).items() if region[s]), np.zeros(counts.size))
        counts = counts - dropped
    freq, var, n_hat = detect_estimate(KeptChannel.of(laws, region), counts, tally.n)
    info["honest_reports"] = n_hat
    return Estimate(freq, var, tally.n, "detect", oracle.domain, info=info)


def screen(oracle: Any, tally: Any, alpha: float = DEFAULT_ALPHA) -> dict[str, Any] | None:
    """Detection's diagnostics for any oracle's tally, without estimating: ``flagged``,
    ``flagged_share``, ``flagged_ones``, ``tail_share``, (when the honest law of the count does
    not depend on the item) ``ones_excess_share``, and the joint test with what the screen can see
    (:func:`joint_info`: ``joint_p``, ``joint_fired``, ``suspect_ones``, ``flag_from``,
    ``largest_unflagged``, ``power_share``, ``has_power``); None when the oracle's reports are not
    unary or the tally holds no per-report statistics (a count-level simulation, a grouped tally).

    For a collector's dashboard: the share of reports flagged, next to any estimate.
    """
    laws = getattr(oracle, "ones_laws", None)
    hist = getattr(tally, "ones", None)
    if not isinstance(laws, UnaryLaws) or hist is None or not 0 < alpha <= ALPHA_BAND:
        return None
    out = describe(hist, flag_region(laws, alpha), flag_region(laws, ALPHA_BAND), alpha, laws.mixture())
    return {**out, **joint_info(laws, hist, alpha)}


# ------------------------------------------------------------------------------ the joint test
#: The level of the upper per-count tail whose reports the tallies keep per-bit counts of (wider
#: than :data:`ALPHA_BAND`; :func:`tally_region`): the joint test's estimate can drop the reports
#: at any of these counts.
TALLY_BAND = 0.05
#: SQUAREM cycles (3 EM steps each) of :func:`honest_law`'s fit of unknown weights (it stops
#: earlier once the likelihood settles).
HONEST_LAW_STEPS = 60
#: The power :func:`detection_power` states the smallest detected fake share at.
POWER = 0.9
#: A fake share above which the screen is said to have no power (the issue's attacks: 1-5 %).
NO_POWER_SHARE = 0.05


def honest_law(laws: UnaryLaws, hist: np.ndarray, keep: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The honest law of the number of ones a tally is tested against, and its free parameters.

    Exact (:meth:`UnaryLaws.mixture`, 0 free parameters) for one item class with known weights;
    else the maximum-likelihood mixture of the laws of every component and class
    (:meth:`UnaryLaws.laws`) fitted to ``hist`` on the counts ``keep`` (the unflagged ones:
    truncated data) by EM accelerated by SQUAREM, at most :data:`HONEST_LAW_STEPS` cycles (the likelihood, not the
    weights, converges: the levels' laws are nearly collinear), with their number less one free
    parameters.
    """
    mix = laws.mixture()
    if mix is not None:
        return mix, 0
    comps = laws.laws()
    size = comps.shape[1]
    inside = np.ones(size, dtype=bool) if keep is None else np.asarray(keep, dtype=bool)[:size]
    h = np.where(inside, np.asarray(hist, dtype=float)[:size], 0.0)
    part = comps[:, inside]
    mass = np.maximum(part.sum(axis=1), 1e-300)
    obs = h[inside]
    total = max(float(obs.sum()), 1.0)

    def loglik(w: np.ndarray) -> float:
        return float(obs @ np.log(np.maximum(w @ part, 1e-300))) - total * float(np.log(max(float(w @ mass), 1e-300)))

    def step(w: np.ndarray) -> np.ndarray:  # EM for truncated data: each component's mass outside put back
        new = w * (part @ (obs / np.maximum(w @ part, 1e-300))) / mass
        return np.asarray(new / new.sum())

    w = np.full(comps.shape[0], 1.0 / comps.shape[0])
    last = loglik(w)
    for _ in range(HONEST_LAW_STEPS):  # SQUAREM cycles (Varadhan and Roland), each checked to increase
        w1 = step(w)
        w2 = step(w1)
        r, v = w1 - w, w2 - 2 * w1 + w
        a = -float(np.linalg.norm(r) / max(float(np.linalg.norm(v)), 1e-300))
        jump = np.clip(w - 2 * a * r + a * a * v, 0.0, None)
        jump = step(jump / jump.sum()) if jump.sum() > 0 else w2
        value = loglik(jump)
        if not value >= loglik(w2):
            jump, value = w2, loglik(w2)
        w, done = jump, value - last < 1e-3  # G = 2 log-likelihood ratio: 1e-3 is nothing on chi-square's scale
        last = value
        if done:
            break
    return np.asarray(w @ comps), comps.shape[0] - 1


def _binom_ppf(q: float, n: int, p: float) -> int:
    """The smallest ``k`` with ``Pr[Bin(n, p) <= k] >= q`` (scipy.special, without scipy.stats' overhead)."""
    from scipy.special import bdtr, bdtrik

    if n <= 0 or p <= 0:
        return 0
    if p >= 1:
        return n
    guess = float(bdtrik(q, n, p))
    k = min(max(int(np.floor(guess)) if np.isfinite(guess) else 0, 0), n)
    while k < n and bdtr(k, n, p) < q:
        k += 1
    while k > 0 and bdtr(k - 1, n, p) >= q:
        k -= 1
    return k


def _critical(n: int, p: float, level: float) -> int:
    """The smallest number of reports ``c`` with ``Pr[Bin(n, p) >= c] < level``."""
    return _binom_ppf(1.0 - level, n, p) + 1


def joint_test(
    hist: np.ndarray, law: np.ndarray, alpha: float, free: int = 0, keep: np.ndarray | None = None
) -> dict[str, Any]:
    """The joint test of the whole histogram of ones against the honest ``law``, at level ``alpha``.

    Two parts at ``alpha / 2`` each: the **scan** (any count holds more reports than ``Bin(N,
    P_s)`` allows at level ``alpha / (2 (d + 1))``, exact binomial tails, Bonferroni over the
    counts: a mass of fakes at one count, flagged or not) and the **likelihood ratio** (G test)
    over the counts, the tails of expectation below 5 pooled (a deviation spread over counts),
    against chi-square with ``bins - 1 - free`` degrees of freedom. With ``keep`` (the unflagged
    counts), the reports at the other counts are left out and the law truncated to ``keep``: the
    flagged reports are dropped anyway, and fakes there must not move the test. Returns ``joint_p`` (the
    combined p-value, ``2 min``), ``joint_fired`` and ``worst_ones``: the count above its honest
    expectation with the smallest binomial tail (None when no count is above it).
    """
    from scipy.special import bdtrc, chdtrc

    h = np.array(hist, dtype=float)
    size = h.size
    p = np.zeros(size)
    m = min(size, law.size)
    p[:m] = law[:m]
    if keep is not None:
        inside = np.zeros(size, dtype=bool)
        k = min(size, len(keep))
        inside[:k] = keep[:k]
        h *= inside
        p *= inside
    mass = p.sum()
    if mass > 0:
        p /= mass
    n = int(h.sum())
    if n == 0:
        return {"joint_p": 1.0, "joint_fired": False, "worst_ones": None}
    expected = n * p
    present = np.flatnonzero(h)
    tail = bdtrc(h[present] - 1, n, p[present])  # Pr[Bin(n, P_s) >= h_s]
    p_scan = min(1.0, float(tail.min()) * size)
    big = np.flatnonzero(expected >= 5)
    p_g = 1.0
    if big.size >= 2:  # the tails of expectation below 5 pooled into the end cells
        lo, hi = int(big[0]), int(big[-1])
        obs = h[lo : hi + 1].copy()
        exp = expected[lo : hi + 1].copy()
        obs[0], obs[-1] = h[: lo + 1].sum(), h[hi:].sum()
        exp[0], exp[-1] = expected[: lo + 1].sum(), expected[hi:].sum()
        seen = obs > 0
        if np.any(exp[seen] <= 0):
            p_g = 0.0
        elif obs.size - 1 - free >= 1:
            p_g = float(chdtrc(obs.size - 1 - free, 2.0 * float(obs[seen] @ np.log(obs[seen] / exp[seen]))))
    joint_p = min(1.0, 2.0 * min(p_scan, p_g))
    fired = joint_p < alpha
    over = h[present] > expected[present]
    worst = int(present[over][np.argmin(tail[over])]) if over.any() else None
    return {"joint_p": joint_p, "joint_fired": bool(fired), "worst_ones": worst}


def detection_power(laws: UnaryLaws, n: int, alpha: float = DEFAULT_ALPHA, power: float = POWER) -> dict[str, Any]:
    """What the screen can see at ``n`` reports: the smallest fake share it detects with ``power``.

    Against the best-hiding attacker that the counts can see, the one sending the **largest
    unflagged number of ones** ``s*`` (every fake report at ``s*``: most bits set, none flagged),
    the joint test's scan fires once the count ``s*`` holds more than its critical number of
    reports; the smallest share ``beta`` with ``Pr[Bin(n (1 - beta), P) + n beta >= c] >=
    power`` is ``min_share`` (``P`` the honest probability of ``s*``, the mixture of the laws with
    their weights, or their largest where the shares are unknown). ``has_power`` is ``min_share
    <=`` :data:`NO_POWER_SHARE`. An attacker drawing each fake's count from the honest law
    (``"adaptive"``) leaves the histogram honest: no test of the counts sees it at any ``n``
    (``adaptive``: None), and it sets fewer target bits. ``flag_from``: the smallest flagged count
    above the mean (None: no count is flagged, the per-report screen sees nothing at this
    mechanism's budget and ``d``).
    """
    key = ("power", n, float(alpha), float(power))
    last = laws._cache.get("power-last")
    if last is not None and last[0] == key:  # the last one asked for (a campaign's n changes slowly)
        return dict(last[1])
    out = _detection_power(laws, n, alpha, power)
    laws._cache["power-last"] = (key, out)
    return dict(out)


def _detection_power(laws: UnaryLaws, n: int, alpha: float, power: float) -> dict[str, Any]:
    region = flag_region(laws, alpha)
    comps = laws.laws()
    mix = laws.mixture()
    law = mix if mix is not None else comps.max(axis=0)
    mean = float(np.arange(law.size) @ (law / law.sum()))
    above = np.flatnonzero(region & (np.arange(region.size) > mean))
    flag_from = int(above[0]) if above.size else None
    unflagged = np.flatnonzero(~region)
    s_star = int(unflagged.max())
    prob = float(law[s_star])
    out: dict[str, Any] = {"alpha": alpha, "power": power, "flag_from": flag_from, "largest_unflagged": s_star,
                           "adaptive": None}  # fmt: skip
    if n <= 0:
        return {**out, "min_share": None, "has_power": False}
    crit = _critical(n, prob, alpha / (2 * region.size))
    beta = 0.0
    for _ in range(4):  # fixed point: the honest count at share 1 - beta
        honest = max(round(n * (1 - beta)), 0)
        low = _binom_ppf(1 - power, honest, prob)
        beta = min(1.0, max(crit - low, 1) / n)
    return {**out, "min_share": beta, "has_power": beta <= NO_POWER_SHARE}
