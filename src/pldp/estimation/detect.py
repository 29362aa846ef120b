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
class-block matrix) and returns :math:`\\hat f = \\hat g / \\hat n`. This is **the
correction** for the honest reports dropped: without it the kept reports' bits are biased
towards the typical number of ones. The number of users the kept reports stand for,
:math:`\\hat n`, comes from the kept reports *counted*: the class totals of :math:`\\hat g` are
rescaled so that their expected kept reports :math:`\\sum_c \\kappa_c u_c` equal that count, and
:math:`\\hat n = \\sum_c u_c` (with one item class, :math:`N_{kept}/\\kappa`: the estimate is
then linear in the counts). Normalising by :math:`\\sum \\hat g` instead, which the bits
estimate, let fakes that set the target bit alone shrink it and raise every item with it (OUE at
0.55, β = 1 %: 0.071 against MGA's 0.047). Its variance: :math:`C'_j(1 - C'_j/N)/(D_j \\hat n)^2`
with :math:`D_j` the diagonal of ``M`` net of its class block (the binomial variance of the
kept count, through the solve's leading term). A mixture of levels with known shares (PBP) has
the mixture of their matrices.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from pldp.errors import EstimationError
from pldp.estimation.joint import NO_POWER_SHARE, POWER, detection_power, honest_law, joint_test
from pldp.estimation.result import Estimate
from pldp.estimation.unary_laws import (
    ALPHA_BAND,
    DEFAULT_ALPHA,
    TALLY_BAND,
    UnaryLaws,
    flag_region,
    flagged_share,
    poisson_binomial,
    tally_region,
)

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
        kept: KeptChannel = laws.memo(key, lambda: cls._of(laws, region))
        return kept

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
    channel: KeptChannel, kept_counts: np.ndarray, n_reports: int, n_kept: float | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """Solve :math:`M \\hat g = C'` and return ``(f, variance, n_hat)`` (module docstring).

    ``M g = D g + E B u`` with ``D_j = own[c_j] - cross[c_j, c_j]``, ``(E B u)_j = sum_c
    cross[c, c_j] u_c`` and ``u_c`` the class totals of ``g``: ``u`` solves a K x K system. With
    ``n_kept`` (the kept reports, counted) ``u`` is rescaled so that its expected kept reports
    :math:`\\sum_c \\kappa_c u_c` equal it, and :math:`\\hat n = \\sum_c u_c` (module docstring).
    """
    diag, coupling, solve_u = channel.solver
    c = np.asarray(kept_counts, dtype=float)
    u = solve_u.dot(c / diag)  # .dot: matmul's bits, without its dispatch cost at these sizes
    if n_kept is not None:
        expected = float(channel.kept.dot(u))
        if not expected > 0:
            raise EstimationError("the kept reports give no positive total: too few reports remain")
        u = u * (float(n_kept) / expected)
    g = (c - coupling.dot(u)) / diag
    n_hat = float(u.sum()) if n_kept is not None else float(g.sum())
    if not n_hat > 0:
        raise EstimationError("the kept reports give no positive total: too few reports remain")
    var = np.maximum(c, 0.0) * np.maximum(1 - c / max(n_reports, 1), 0.0) / (diag * n_hat) ** 2
    return g / n_hat, var, n_hat


@functools.lru_cache(maxsize=64)
def _excess_z(cells: int) -> float:
    """:math:`\\Phi^{-1}(1 - 0.05/\\text{cells})`, :func:`ones_excess`'s margin in standard errors."""
    from scipy.special import ndtri  # scipy is imported where it is used: `import pldp` and the clients load without it

    return float(ndtri(1 - 0.05 / cells))


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
    z = _excess_z(hist.size)
    p = np.asarray(law, dtype=float)[: hist.size]
    return float(np.maximum(hist / n - p - z * np.sqrt(p * (1 - p) / n), 0.0).sum())


def describe(
    ones: Any, region_alpha: np.ndarray, region_band: np.ndarray, alpha: float, law: np.ndarray | None = None
) -> dict[str, Any]:
    """The diagnostics of detection for an estimate's ``info``: the flagged reports, and the excess
    of the histogram of ones over ``law`` (the honest law, when it does not depend on the items)."""
    hist = np.asarray(ones)
    in_alpha = region_alpha[: hist.size]
    total = int(hist.sum())
    flagged = int(hist[in_alpha].sum())
    out = {
        "alpha": alpha,
        "flagged": flagged,
        "flagged_share": flagged / total if total else 0.0,  # flagged_share(hist, region_alpha)
        "flagged_ones": np.flatnonzero(in_alpha & (hist > 0)).tolist(),
        "tail_share": int(hist[region_band[: hist.size]].sum()) / total if total else 0.0,  # flagged_share
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
    counts = np.array(tally.counts, dtype=float)  # a copy: the dropped counts come off it in place
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
        for s, v in (tally.tails or {}).items():  # integer counts: exact in any order
            if region[s]:
                counts -= v
    n_kept = tally.n - (float(np.asarray(tally.ones)[region].sum()) if tally.ones is not None else 0.0)
    freq, var, n_hat = detect_estimate(KeptChannel.of(laws, region), counts, tally.n, n_kept)
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
