"""Multi-attribute, multi-level personalized LDP: MPLDP (Feng & Zhang, IEEE Access 2024).

Each user holds one value of each of ``l`` attributes (attribute ``i`` has ``k_i`` candidate
values and budget :math:`\\varepsilon_i`) and chooses, per attribute, one of three privacy
levels, high / mid / low, with budgets :math:`\\varepsilon_i/3, \\varepsilon_i/2, \\varepsilon_i`
(fractions configurable). Her client (Algorithm 1) one-hot encodes every attribute and keeps
each bit with probability :math:`e^{\\varepsilon/2}/(e^{\\varepsilon/2}+1)`: basic RAPPOR
(:class:`pldp.RAPPOR`, "BRR") at the chosen level's budget. She reports the bits and her
levels. The report of attribute ``i`` is :math:`\\varepsilon_{i,\\tau}`-LDP and the whole report
:math:`\\sum_i \\varepsilon_{i,\\tau_i}`-LDP (Theorem 5).

The server estimates every level's histogram separately (Algorithm 2, unbiased for the
counts within the level) and combines the levels: ``"sum"`` (the paper's BRR baseline: add
the levels' counts) or ``"oc"`` (Theorem 2, eq. 10: weights :math:`\\omega_\\tau \\propto D_\\tau =
n_\\tau (e^{\\varepsilon_\\tau/2}-1)^2/e^{\\varepsilon_\\tau/2}`, the minimum-variance weights of
:mod:`pldp.estimation.combine`). The variance of ``"oc"`` is eq. 11 plus the level-sampling
term of ERRATA MPLDP-1. OP (Algorithm 3) needs the true histogram and lives in
:mod:`pldp.experiments.oracles`.

How users choose levels is unspecified in the paper; Lemma 1 needs the choice independent of
the data (ERRATA MPLDP-2). Simulations here draw levels at random with configurable shares
(equal thirds by default).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Self

import numpy as np

from pldp._validation import check_epsilon, check_index_range, check_int
from pldp.channel.attributes import AttributesNode
from pldp.channel.leveled import LeveledNode
from pldp.domain import Domain
from pldp.errors import EstimationError, ParameterError, TallyError
from pldp.estimation.combine import combine, data_free_variance, level_sampling_variance, min_variance_weights
from pldp.estimation.consistency import norm_sub
from pldp.estimation.groups import joint_mle, joint_mle_variance
from pldp.estimation.level_bound import MEAN_BOUND_MODEL, mean_one_level_bound
from pldp.estimation.result import Estimate, EstimateSet
from pldp.estimation.robust import DEFAULT_CAP, DEFAULT_K, robust_combine
from pldp.estimation.spread import DEFAULT_BETA, spread_robust
from pldp.estimation.unbiased import invert
from pldp.mechanisms.unary import RAPPOR
from pldp.methods import ESTIMATION_METHODS, STANDARD_METHODS
from pldp.params import epsilons_of
from pldp.privacy import ComposedPrivacy
from pldp.protocols.base import Protocol
from pldp.protocols.leveled import perturb_by_level
from pldp.registry import register
from pldp.tally import BaseTally, Tally

__all__ = ["MPLDP", "MPLDPReports", "MPLDPTally", "allocate_budget", "brr_variance_factor", "oc_weights"]

#: What the per-attribute bound of ``"robust"`` means for fakes attacking several attributes.
ACROSS = "a fake reports on every attribute, so fakes attacking several attributes move each by up to its bound"


def brr_variance_factor(eps: Any) -> np.ndarray:
    """Per-user variance factor of basic RAPPOR, :math:`e^{\\varepsilon/2}/(e^{\\varepsilon/2}-1)^2`
    (MPLDP eq. 8: a level with ``n_tau`` users estimates each count with variance
    ``n_tau`` times it)."""
    e = np.exp(np.asarray(eps, dtype=float) / 2.0)
    return e / (e - 1.0) ** 2


def oc_weights(n_tau: Any, eps_tau: Any) -> np.ndarray:
    """Optimal-combination weights of MPLDP Theorem 2 (eq. 10).

    :math:`\\omega_\\tau = D_\\tau/\\sum D` with
    :math:`D_\\tau = n_\\tau (e^{\\varepsilon_\\tau/2}-1)^2 / e^{\\varepsilon_\\tau/2}`.

    These are :func:`pldp.estimation.combine.min_variance_weights` of the level variances
    :math:`1/D_\\tau` (frequency scale times ``n_tau``); a level without users gets weight 0.
    """
    n = np.asarray(n_tau, dtype=float)
    v = brr_variance_factor(eps_tau)
    with np.errstate(divide="ignore"):
        return min_variance_weights(np.where(n > 0, v / np.where(n > 0, n, 1.0), np.inf))


def allocate_budget(eps_total: float, k: Sequence[int]) -> np.ndarray:
    """Split a total budget over attributes to minimise the total BRR variance (OBRR).

    Minimises :math:`\\sum_i k_i\\, e^{\\varepsilon_i/2}/(e^{\\varepsilon_i/2}-1)^2` subject to
    :math:`\\sum_i \\varepsilon_i = \\varepsilon` (convex; solved exactly through its KKT
    condition, one multiplier found by bisection). For small budgets the solution is
    :math:`\\varepsilon_i \\approx \\varepsilon\\, k_i^{1/3} / \\sum_j k_j^{1/3}`, and MPLDP's Table 2
    lists :math:`\\varepsilon_i / 2` with its row and column labels swapped (ERRATA MPLDP-3).
    """
    eps = check_epsilon(eps_total, "eps_total")
    kk = np.asarray(k, dtype=float)
    if kk.ndim != 1 or kk.size == 0 or np.any(kk < 2) or np.any(kk != np.round(kk)):
        raise ParameterError(f"k must be a vector of integers >= 2, got {k!r}")

    def slope(x: np.ndarray) -> np.ndarray:  # d/dx of e^{x/2}/(e^{x/2}-1)^2, negative
        e = np.exp(x / 2.0)
        return -0.5 * e * (e + 1.0) / (e - 1.0) ** 3

    def share(mu: float) -> np.ndarray:  # x_i with k_i * slope(x_i) = -mu, by bisection on each
        lo, hi = np.full(kk.size, 1e-12), np.full(kk.size, 2.0 * eps + 50.0)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            too_small = kk * slope(mid) < -mu  # still too steep: x must grow
            lo, hi = np.where(too_small, mid, lo), np.where(too_small, hi, mid)
        return 0.5 * (lo + hi)

    from scipy.optimize import (
        brentq,  # scipy is imported where it is used: `import pldp` and the clients load without it
    )

    log_mu = brentq(lambda lm: share(10.0**lm).sum() - eps, -300.0, 300.0, xtol=1e-13, maxiter=500)
    x = share(10.0**log_mu)
    return x * (eps / x.sum())


@dataclass(frozen=True)
class MPLDPReports:
    """Per-user reports: one bit-packed BRR report per attribute, and the chosen levels ``(n, l)``."""

    bits: tuple[np.ndarray, ...]
    levels: np.ndarray


@dataclass(frozen=True, eq=False)
class MPLDPTally(BaseTally):
    """Per attribute, per level: the bit counts ``counts[i]`` (levels, k_i) and the users ``sizes`` (l, levels)."""

    FORMAT: ClassVar[str] = "pldp.mpldp-tally/2"
    LEGACY_FORMATS: ClassVar[tuple[str, ...]] = ("pldp.mpldp-tally/1",)

    counts: tuple[np.ndarray, ...]
    sizes: np.ndarray
    fingerprint: str | None = None

    def __post_init__(self) -> None:
        counts = tuple(np.asarray(c, dtype=np.int64) for c in self.counts)
        sizes = np.asarray(self.sizes, dtype=np.int64)
        if sizes.ndim != 2 or sizes.shape[0] != len(counts) or any(c.shape[0] != sizes.shape[1] for c in counts):
            raise TallyError("counts (one (levels, k_i) table per attribute) and sizes (l, levels) do not line up")
        if np.any(sizes < 0) or any(np.any(c < 0) for c in counts):
            raise TallyError("counts and sizes must be non-negative")
        if len({int(row.sum()) for row in sizes}) > 1:
            raise TallyError("every attribute must count the same users")
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "sizes", sizes)

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.sizes[0].sum())

    def _merge(self, other: MPLDPTally) -> MPLDPTally:
        if [c.shape for c in self.counts] != [c.shape for c in other.counts]:
            raise TallyError("can only merge MPLDP tallies of the same attributes and levels")
        counts = tuple(a + b for a, b in zip(self.counts, other.counts, strict=True))
        return MPLDPTally(counts, self.sizes + other.sizes, self.fingerprint)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MPLDPTally)
            and other.fingerprint == self.fingerprint
            and np.array_equal(other.sizes, self.sizes)
            and len(other.counts) == len(self.counts)
            and all(np.array_equal(a, b) for a, b in zip(self.counts, other.counts, strict=True))
        )

    def _fields(self) -> dict[str, Any]:
        return {"counts": [c.tolist() for c in self.counts], "sizes": self.sizes.tolist()}

    @classmethod
    def _from_fields(cls, data: dict[str, Any], fingerprint: str | None) -> MPLDPTally:
        return cls(tuple(np.asarray(c, dtype=np.int64) for c in data["counts"]), np.asarray(data["sizes"]), fingerprint)


@register
class MPLDP(Protocol):
    """The MPLDP protocol: ``l`` attributes, three privacy levels each, BRR perturbation.

    Estimators (:meth:`estimate`, per attribute): ``"unbiased"`` is OC, Theorem 2's optimal
    combination of the levels' unbiased estimates; ``"norm_sub"`` its projection onto the
    simplex; ``"mle"`` the joint maximum likelihood from all levels; ``"sum"`` the paper's BRR
    baseline (the levels' count estimates added); ``"robust"`` the equal-influence combination of
    the levels (:func:`~pldp.estimation.spread.spread_robust`, per attribute: a share of fakes is
    bounded whatever levels it claims); ``"huber"`` the former ``"robust"``, Huber over the levels
    (:func:`~pldp.estimation.robust.robust_combine`), kept for comparison.

    Parameters
    ----------
    k : sequence of int
        Candidate values per attribute, each >= 2.
    eps : sequence of float
        Budget :math:`\\varepsilon_i` of each attribute (e.g. from :func:`allocate_budget`).
    level_fractions : sequence of float
        Budget of each level as a fraction of :math:`\\varepsilon_i`; default high / mid /
        low = 1/3, 1/2, 1.
    level_shares : sequence of float, optional
        Probability that a simulated user picks each level (equal by default).
    """

    methods: ClassVar[tuple[str, ...]] = (*STANDARD_METHODS, "sum", "robust", "huber")
    tally_type: ClassVar[type[BaseTally]] = MPLDPTally

    def __init__(
        self,
        k: Sequence[int] | np.ndarray,
        eps: Sequence[float] | np.ndarray,
        level_fractions: Sequence[float] | np.ndarray = (1 / 3, 1 / 2, 1.0),
        level_shares: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        kk = [check_int(v, "k", 2) for v in np.atleast_1d(k).tolist()]
        ee = [check_epsilon(v, "eps") for v in np.atleast_1d(eps).tolist()]
        if len(kk) != len(ee) or not kk:
            raise ParameterError(f"k and eps must have the same non-zero length, got {len(kk)} and {len(ee)}")
        frac = np.asarray(level_fractions, dtype=float)
        if frac.ndim != 1 or frac.size == 0 or np.any(~np.isfinite(frac)) or np.any(frac <= 0) or np.any(frac > 1):
            raise ParameterError(f"level_fractions must lie in (0, 1], got {level_fractions!r}")
        shares = np.full(frac.size, 1.0 / frac.size) if level_shares is None else np.asarray(level_shares, float)
        if shares.shape != frac.shape or np.any(shares < 0) or abs(shares.sum() - 1) > 1e-9:
            raise ParameterError(f"level_shares must be {frac.size} non-negative shares summing to 1")
        self.k = tuple(kk)
        self.eps = np.array(ee)
        self.level_fractions = frac
        self.level_shares = shares
        #: ``mechanisms[i][tau]``: basic RAPPOR of attribute i at level tau
        self.mechanisms = tuple(tuple(RAPPOR(e * f, ki) for f in frac) for ki, e in zip(kk, ee, strict=True))

    @property
    def n_attributes(self) -> int:
        """Number of attributes ``l``."""
        return len(self.k)

    @property
    def n_levels(self) -> int:
        """Levels per attribute."""
        return int(self.level_fractions.size)

    @property
    def domain(self) -> Domain:
        """The first attribute's values (each attribute ``i`` has ``Domain.range(k[i])``)."""
        return self.mechanisms[0][0].domain

    @property
    def level_eps(self) -> np.ndarray:
        """``(l, levels)`` budgets :math:`\\varepsilon_{i,\\tau}`."""
        return self.eps[:, None] * self.level_fractions[None, :]

    def __repr__(self) -> str:
        return f"MPLDP(k={list(self.k)}, eps={self.eps.round(4).tolist()})"

    def params(self) -> dict[str, Any]:
        """Canonical parameters: values per attribute, attribute budgets and level fractions.

        (The simulation-only ``level_shares`` do not change what a client does.)
        """
        return {"protocol": "MPLDP", "k": list(self.k), "eps": self.eps, "level_fractions": self.level_fractions}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        return cls(params["k"], epsilons_of(params["eps"]), epsilons_of(params["level_fractions"]))

    def sampler(self) -> AttributesNode:
        """The sampler node: per attribute, a leveled node whose level is sent in the clear."""
        return self._node

    @cached_property
    def _node(self) -> AttributesNode:
        return AttributesNode(
            tuple(
                LeveledNode(
                    self.k[i],
                    tuple(float(e) for e in self.level_eps[i]),
                    tuple(m.sampler() for m in self.mechanisms[i]),
                    "clear",
                )
                for i in range(self.n_attributes)
            )
        )

    def reports_from_columns(self, columns: Mapping[str, np.ndarray]) -> tuple[Any, ...]:
        """Each attribute's bit rows and the users' levels, one column per attribute."""
        levels = np.stack([columns[f"a{i}.level"] for i in range(self.n_attributes)], axis=1)
        return (MPLDPReports(tuple(columns[f"a{i}.bits"] for i in range(self.n_attributes)), levels),)

    def report_columns(self, reports: MPLDPReports) -> dict[str, np.ndarray]:
        """Each attribute's bit rows and level column."""
        cols = {}
        for i, bits in enumerate(reports.bits):
            cols[f"a{i}.bits"], cols[f"a{i}.level"] = bits, reports.levels[:, i]
        return cols

    # ---------------------------------------------------------------------- client
    def _check_users(self, values: Any, levels: Any) -> tuple[np.ndarray, np.ndarray]:
        v, lv = np.asarray(values), np.asarray(levels)
        l = self.n_attributes  # noqa: E741
        if v.ndim != 2 or v.shape[1] != l or lv.shape != v.shape:
            raise ParameterError(f"values and levels must both have shape (n, {l}); got {v.shape}, {lv.shape}")
        if v.size and (v.dtype.kind not in "iu" or lv.dtype.kind not in "iu"):
            raise ParameterError("values and levels must be integer indices")
        for i, ki in enumerate(self.k):
            check_index_range(v[:, i], ki, f"attribute {i} values", ParameterError)
        check_index_range(lv, self.n_levels, "levels", ParameterError)
        return v.astype(np.int64), lv.astype(np.int64)

    def assign_levels(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Random levels ``(n, l)``, independent of the data, with the configured shares."""
        return rng.choice(self.n_levels, size=(check_int(n, "n", 0), self.n_attributes), p=self.level_shares)

    def perturb(self, values: Any, levels: Any, rng: np.random.Generator) -> MPLDPReports:
        """Algorithm 1 for every user: BRR on each attribute at the chosen level."""
        v, lv = self._check_users(values, levels)
        bits = tuple(perturb_by_level(self.mechanisms[i], v[:, i], lv[:, i], rng) for i in range(self.n_attributes))
        return MPLDPReports(bits, lv)

    # ---------------------------------------------------------------------- server
    def tally(self, reports: MPLDPReports) -> MPLDPTally:
        """Bit counts per attribute and level, and the users per level."""
        if not isinstance(reports, MPLDPReports) or len(reports.bits) != self.n_attributes:
            raise TallyError(f"expected MPLDPReports with {self.n_attributes} attributes")
        lv = np.asarray(reports.levels)
        n = lv.shape[0]
        if lv.shape != (n, self.n_attributes):
            raise TallyError(f"levels must have shape (n, {self.n_attributes})")
        counts, sizes = [], np.zeros((self.n_attributes, self.n_levels), dtype=np.int64)
        for i, ki in enumerate(self.k):
            rep = np.asarray(reports.bits[i])
            if rep.shape != (n, (ki + 7) // 8) or rep.dtype != np.uint8:
                raise TallyError(
                    f"attribute {i}: bits must be uint8 of shape ({n}, {(ki + 7) // 8}), got {rep.dtype} {rep.shape}"
                )
            c = np.zeros((self.n_levels, ki), dtype=np.int64)
            for tau, mech in enumerate(self.mechanisms[i]):
                sel = lv[:, i] == tau
                sizes[i, tau] = int(sel.sum())
                c[tau] = mech.tally(rep[sel]).counts
            counts.append(c)
        return MPLDPTally(tuple(counts), sizes, self.fingerprint)

    def simulate(self, values: Any, levels: Any, rng: np.random.Generator) -> MPLDPTally:
        """Exact count-level simulation of the tally of users with these values and levels.

        Per attribute and level: the holders of each value, then two binomials per bit.
        """
        v, lv = self._check_users(values, levels)
        counts, sizes = [], np.zeros((self.n_attributes, self.n_levels), dtype=np.int64)
        for i, ki in enumerate(self.k):
            cells = np.bincount(lv[:, i] * ki + v[:, i], minlength=self.n_levels * ki).reshape(self.n_levels, ki)
            sizes[i] = cells.sum(axis=1)
            counts.append(np.stack([mech.simulate(cells[t], rng).counts for t, mech in enumerate(self.mechanisms[i])]))
        return MPLDPTally(tuple(counts), sizes, self.fingerprint)

    def privacy(self) -> ComposedPrivacy:
        """Exact check per attribute and level.

        A user runs one level's mechanism per attribute and every attribute, so her report is
        :math:`\\sum_i \\varepsilon_{i,\\tau_i}`-LDP (Theorem 5); ``ldp_epsilon`` is the worst case,
        the sum over attributes of each attribute's largest level budget.
        """
        parts = {
            f"attribute {i}": ComposedPrivacy(
                "LDP at each level", {f"level {tau}": m.privacy() for tau, m in enumerate(row)}, "max"
            )
            for i, row in enumerate(self.mechanisms)
        }
        return ComposedPrivacy("LDP of each attribute at its level (Theorem 5)", parts, "sum")

    # ------------------------------------------------------------------ estimation
    def level_estimates(self, tally: MPLDPTally, attribute: int) -> tuple[np.ndarray, np.ndarray]:
        """Algorithm 2 for one attribute: per-level unbiased counts ``(levels, k_i)`` and ``n_tau``.

        :math:`\\tilde H^\\tau_j = (C^\\tau_j - n_\\tau b_\\tau)/(a_\\tau - b_\\tau)`, the number of
        holders of value ``j`` among the level's users (ERRATA MPLDP-6); NaN for an empty level.
        """
        self._check_tally(tally)
        c = tally.counts[attribute]
        n_tau = tally.sizes[attribute]
        out = np.full(c.shape, np.nan)
        for tau, mech in enumerate(self.mechanisms[attribute]):
            if n_tau[tau] > 0:
                a, b = mech.support
                out[tau] = n_tau[tau] * invert(c[tau], int(n_tau[tau]), a, b)
        return out, n_tau

    def _check_tally(self, tally: Any) -> MPLDPTally:
        tally = super()._check_tally(tally)
        if [c.shape for c in tally.counts] != [(self.n_levels, ki) for ki in self.k]:
            raise EstimationError(f"the tally's attributes and levels do not fit {self!r}")
        return tally

    def estimate(
        self,
        tally: MPLDPTally,
        method: str = "unbiased",
        *,
        attribute: int | None = None,
        cap: float = DEFAULT_CAP,
        k: float = DEFAULT_K,
        beta: float = DEFAULT_BETA,
    ) -> Any:
        """Estimate every attribute's distribution (an :class:`~pldp.EstimateSet`), or one (``attribute=i``).

        * ``"unbiased"``: OC, :math:`\\hat H = \\sum_\\tau (n\\omega_\\tau/n_\\tau)\\tilde H^\\tau` with
          Theorem 2's weights; frequencies are ``H / n``.
        * ``"norm_sub"``: OC projected onto the simplex (the variance is OC's).
        * ``"mle"``: maximum of the count-based likelihood of all levels of the attribute
          (:func:`~pldp.estimation.groups.joint_mle`), with the variance of
          :func:`~pldp.estimation.groups.joint_mle_variance` (i.i.d. users).
        * ``"sum"``: :math:`\\hat H = \\sum_\\tau \\tilde H^\\tau` (the paper's BRR baseline).
        * ``"robust"``: per attribute, the levels' frequencies combined with weights
          that give every report the same influence, :math:`w_\\tau \\propto n_\\tau r_\\tau`,
          :math:`r = (p-q)/(1-q) = 1 - e^{-\\varepsilon_\\tau/2}`, then Norm-Sub with its threshold
          kept at zero or above (:func:`~pldp.estimation.spread.spread_robust`, the code of RCF's
          ``"robust"``). **Bound** (``info["bound"]``, model ``info["bound_model"]``): a share
          ``beta`` (default 5 %) of fakes, in any split over the levels of the attribute and with
          any reports, moves value ``x`` by at most ``info["bound"][x]``; a fake reports on every
          attribute, so fakes attacking ``a`` attributes move each by up to its bound. At most
          1, ``info["vacuous"]`` where it is 1; ``info["margin"]`` bounds how much more they
          raise it than OC on the same reports.
          **Measured** (``benchmarks/mpldp_attack.py``, two attributes of 16 values, budget 0.9,
          :math:`n = 10^5`, the optimising attacker): β = 1 %: 0.041 per attacked attribute,
          x0.87 MGA against OUE at the mean budget 0.55 (x0.90 with both attacked), OC 0.060,
          ``"huber"`` 0.062; β = 4.5 %: 0.191 (x0.90), OC 0.260. Every fake claims the smallest
          level, at 1 % some of them with the target bit alone. **Cost without attack**
          (``--mse``): MSE x1.21 that of ``"norm_sub"``, x0.78 that of ``"unbiased"``. Variance:
          :math:`\\sum_\\tau w_\\tau^2 V_\\tau` plus the level-sampling term, before projection.
        * ``"huber"``: the former ``"robust"``, kept for comparison: Huber's equation over the
          levels (:func:`~pldp.estimation.robust.robust_combine`; OC's weights capped at the
          share ``cap``, clip ``k``), with the bound of fakes that all claim *one* level
          (:func:`~pldp.estimation.level_bound.mean_one_level_bound`; ``info["spread_bound"]`` is
          None). Spread over the two small levels they gain more than under OC (β = 1 %: 0.062,
          x1.31 MGA). MSE without attack x1.32 that of ``"unbiased"``.

        Variance of ``"unbiased"``, ``"norm_sub"`` and ``"sum"``: :math:`\\sum_\\tau w_\\tau^2 V_\\tau`
        with the exact BRR level variances (eq. 8-11, data-free for basic RAPPOR) plus the
        level-sampling term of ERRATA MPLDP-1 (zero for ``"sum"``), at the estimate, on the
        frequency scale.
        """
        self._check_method(method)
        tally = self._check_tally(tally)
        if attribute is not None:
            if not isinstance(attribute, (int, np.integer)) or not 0 <= attribute < self.n_attributes:
                raise EstimationError(f"attribute must be an index in [0, {self.n_attributes}), got {attribute!r}")
            return self._estimate_attribute(tally, int(attribute), method, cap, k, beta)
        ests = tuple(self._estimate_attribute(tally, i, method, cap, k, beta) for i in range(self.n_attributes))
        return EstimateSet(ests, tuple(f"attribute {i}" for i in range(self.n_attributes)))

    def _estimate_attribute(
        self, tally: MPLDPTally, i: int, method: str, cap: float, k: float, beta: float
    ) -> Estimate:
        n = tally.n
        mechs = self.mechanisms[i]
        n_tau = tally.sizes[i]
        if method == "mle":
            tallies = [
                Tally(int(nt), c, "unary", m.fingerprint)
                for m, nt, c in zip(mechs, n_tau, tally.counts[i], strict=True)
            ]
            freq = joint_mle(mechs, tallies)
            var = joint_mle_variance(mechs, tallies, freq)
            return Estimate(freq, var, n, method, mechs[0].domain, info={"n_tau": n_tau}, on_simplex=True)
        H, _ = self.level_estimates(tally, i)
        f_tau = H / np.where(n_tau > 0, n_tau, 1)[:, None]
        var_tau = np.array([data_free_variance(m, int(nt)) for m, nt in zip(mechs, n_tau, strict=True)])
        if method in ("robust", "huber"):  # the levels' support probabilities, (levels, k) each
            support = tuple(np.stack([m.support[j] for m in mechs]) for j in (0, 1))
        if method == "robust":
            oc = oc_weights(n_tau, self.level_eps[i])
            freq, eq, extra = spread_robust(f_tau, var_tau, n_tau, (support[0], support[1]), beta=beta, reference=oc)
            var = eq.variance + level_sampling_variance(freq, eq.weights, n_tau)
            info = {"n_tau": n_tau, "estimator": "equal influence", "level_estimates": f_tau, **extra}
            info["bound_model"] = f"per attribute: {info['bound_model']}; {ACROSS}"
            return Estimate(freq, var, n, method, mechs[0].domain, 0, True, info, False)
        if method == "huber":
            rob = robust_combine(f_tau, var_tau, n_tau, (support[0], support[1]), cap=cap, k=k)
            var = rob.variance + level_sampling_variance(rob.frequencies, rob.coefficients, n_tau)
            info = {"n_tau": n_tau, "estimator": "huber", "level_estimates": f_tau, **rob.info()}
            info["inlier_bound"] = rob.bound  # robust_combine's X*: assumes no honest level clipped or capped
            info["bound"] = mean_one_level_bound(rob.scales, rob.weights, rob.cap, rob.k)
            info["bound_model"] = MEAN_BOUND_MODEL
            return Estimate(rob.frequencies, var, n, method, mechs[0].domain, 0, True, info, False)
        w = n_tau / n if method == "sum" else oc_weights(n_tau, self.level_eps[i])
        freq, var = combine(f_tau, w, var_tau)
        var = var + level_sampling_variance(freq, w, n_tau)
        rounds = 0
        if method == "norm_sub":
            freq, rounds = norm_sub(freq)
        info = {"weights": w, "n_tau": n_tau, "estimator": "sum" if method == "sum" else "OC"}
        on_simplex = ESTIMATION_METHODS[method].on_simplex  # of unbiased, norm_sub, sum: norm_sub alone
        return Estimate(freq, var, n, method, mechs[0].domain, rounds, True, info, on_simplex)
