"""PBP: budgets hidden, level shares public, estimation on the pooled reports.

Parameter Blending Privacy (Takagi, Cao, Yoshikawa, ASIA CCS 2020 poster), as a PLDP-FEBSF
baseline (Appendix A.5). What the sources define and what is assumed here is in
``docs/protocols.md``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal, Self

import numpy as np

from pldp._validation import as_frequencies, check_int
from pldp.domain import Domain
from pldp.errors import EstimationError, ParameterError
from pldp.estimation.detect import DEFAULT_ALPHA, detect_unary
from pldp.estimation.pure import estimate_counts
from pldp.estimation.result import Estimate
from pldp.estimation.spread import DEFAULT_BETA, spread_robust
from pldp.mechanisms.support import SupportCountOracle
from pldp.methods import STANDARD_METHODS
from pldp.protocols.leveled import ORACLES, HiddenLevels, check_oracle, make_oracle
from pldp.protocols.one_format import best_hash_range, best_subset_size
from pldp.registry import register
from pldp.tally import Tally

__all__ = ["PBP", "PBP_ORACLES", "SUPPORT_REFUSALS"]

#: The oracles a PBP level may use: every one of :data:`~pldp.protocols.leveled.ORACLES`, the
#: large-domain OLH, HR and SS with one report format across levels.
PBP_ORACLES = tuple(ORACLES)
#: Why PBP over OLH, HR or SS (support counts) refuses a method of its unary and k-RR levels.
SUPPORT_REFUSALS = {
    "detect": "it tests a report's number of ones, which an OLH or HR report does not have and an SS report "
    "always has k of",
}


@register
class PBP(HiddenLevels):
    """Parameter Blending Privacy (Takagi, Cao, Yoshikawa, ASIA CCS 2020 poster), a PLDP-FEBSF baseline.

    Each user perturbs her item with the pure oracle of her (secret) level and sends the report
    only; the shares :math:`\\rho` of the population over the levels are public. Pooled over the
    population, a report supports item ``i`` with probability :math:`p^*` if the user holds
    ``i`` and :math:`q^*` otherwise,

    .. math::

        p^* = \\sum_\\tau \\rho_\\tau p_{\\varepsilon_\\tau}, \\qquad
        q^* = \\sum_\\tau \\rho_\\tau q_{\\varepsilon_\\tau},

    and the server estimates with eq. 3 of PLDP-FEBSF, :math:`\\hat p_i = (C_i/N - q^*)/(p^* -
    q^*)`, on the aggregated support counts: with users drawn i.i.d. (item and level
    independent) it is exactly unbiased with variance :math:`m_i(1-m_i)/(N(p^*-q^*)^2)`,
    :math:`m_i = q^* + (p^* - q^*) p_i`. For k-RR levels the pooled report is one k-RR report
    with :math:`e^{\\varepsilon_b} = 1 + (p^* - q^*)/q^*` (:attr:`epsilon_blended`, the guarantee
    against an observer who knows :math:`\\rho` but not the level; None for unary levels). Each
    user is :math:`\\varepsilon_\\tau`-LDP by her own level's mechanism (:meth:`privacy`).

    Large domains: OLH, HR, SS. The level is secret, so every level's report must have one format:
    HR's is ``K`` whatever the budget; OLH's hash range ``g`` and SS's subset size ``k`` are
    *one* for all levels (a level-optimal ``g = e^eps + 1`` would tell the level), by default the
    one of smallest pooled variance at an absent item, :math:`q^*(1 - q^*)/(p^* - q^*)^2` with
    :math:`q^* = 1/g` for OLH, searched over ``g = 2 .. ceil(e^{eps_max} + 1)`` (SS: ``k = 1 ..
    d - 1``; :mod:`pldp.protocols.one_format`). The cost against RCF-OLH, whose levels each use
    their own ``g``, is :func:`~pldp.protocols.one_format.hiding_cost` (``docs/protocols.md``).
    Under every level a report's probability depends only on whether it supports the item, so the
    pooled report is one report of the same format with support probability :math:`p^*`:
    :attr:`epsilon_blended` is that report's budget, e.g. :math:`\\log(p^*(g - 1)/(1 - p^*))` for
    OLH. Their tallies are support counts: ``"unbiased"``, ``"norm_sub"``, ``"mle"`` (each count is
    :math:`\\mathrm{Bin}(N, m_i)`) and ``"recover"``; ``"detect"`` and ``"robust"`` are refused
    (see :meth:`estimate`).

    Parameters
    ----------
    levels : array_like of float
        Budget levels, strictly increasing.
    rho : array_like of float
        Public shares of the levels (non-negative, summing to one).
    d : int or Domain
        The item domain.
    oracle : {"krr", "oue", "rappor", "olh", "hr", "ss"}
        Pure frequency oracle of every level.
    g : int, optional
        OLH only: the one hash range of every level (``2 <= g <= 2**24``); default the one of
        smallest pooled variance (:func:`~pldp.protocols.one_format.best_hash_range`).
    k : int, optional
        SS only: the one subset size of every level (``1 <= k < d``); default the one of smallest
        pooled variance (:func:`~pldp.protocols.one_format.best_subset_size`).
    """

    methods: ClassVar[tuple[str, ...]] = (*STANDARD_METHODS, "robust", "detect", "recover")

    def __init__(
        self,
        levels: Any,
        rho: Any,
        d: int | Domain,
        oracle: Literal["krr", "oue", "rappor", "olh", "hr", "ss"] = "krr",
        g: int | None = None,
        k: int | None = None,
    ) -> None:
        super().__init__(levels, d)
        self.oracle = check_oracle(oracle, PBP_ORACLES)
        self.rho = as_frequencies(rho, self.t, "rho").copy()
        self.rho.setflags(write=False)
        if (g is not None and self.oracle != "olh") or (k is not None and self.oracle != "ss"):
            raise ParameterError(f"g is OLH's hash range and k SS's subset size: oracle={oracle!r} takes neither")
        self.g: int | None = None
        self.k: int | None = None
        size: dict[str, int] = {}  # one report format at every level; HR's K is K(d) at every budget
        if self.oracle == "olh":
            self.g = best_hash_range(self.levels, self.rho) if g is None else check_int(g, "g", 2)
            size = {"g": self.g}
        elif self.oracle == "ss":
            self.k = best_subset_size(self.levels, self.rho, self.d) if k is None else check_int(k, "k", 1)
            size = {"k": self.k}
        self.mechanisms = tuple(make_oracle(self.oracle, e, self.domain, **size) for e in self.levels)
        p_l = np.array([m.support[0][0] for m in self.mechanisms])
        q_l = np.array([m.support[1][0] for m in self.mechanisms])
        self.p_star = float(self.rho @ p_l)
        self.q_star = float(self.rho @ q_l)
        self.epsilon_blended: float | None = self._blended()
        if self.supports_counted:  # an instance's methods: those of SupportCountOracle (see estimate)
            vars(self)["methods"] = (*STANDARD_METHODS, "robust", "recover")

    @property
    def supports_counted(self) -> bool:
        """Whether the levels are support-count oracles (OLH, HR, SS), tallied as support counts."""
        return isinstance(self.mechanisms[0], SupportCountOracle)

    def _blended(self) -> float | None:
        """The pooled report's budget: k-RR's :math:`\\log(1 + (p^* - q^*)/q^*)`; a support-count
        oracle's :math:`\\log(p^* s / (1 - p^*))`, ``s`` the outputs that miss an item per output that
        supports it (OLH ``g - 1``, HR 1, SS ``(d - k)/k``); None for unary levels."""
        if self.oracle == "krr":
            return math.log1p((self.p_star - self.q_star) / self.q_star)
        if not self.supports_counted:
            return None
        spread = {"olh": (self.g or 2) - 1.0, "hr": 1.0, "ss": (self.d - (self.k or 1)) / (self.k or 1)}[self.oracle]
        return math.log(self.p_star * spread / (1.0 - self.p_star))

    def __repr__(self) -> str:
        size = f", g={self.g}" if self.g is not None else f", k={self.k}" if self.k is not None else ""
        return f"PBP(levels={self.levels.tolist()}, rho={self.rho.tolist()}, d={self.d}, oracle={self.oracle!r}{size})"

    def params(self) -> dict[str, Any]:
        """Canonical parameters: class, labels, levels, the oracle, the public shares (and OLH's ``g``, SS's ``k``)."""
        size = {"g": self.g} if self.g is not None else {"k": self.k} if self.k is not None else {}
        return {**self._base_params(), "oracle": self.oracle, "rho": self.rho, **size}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        levels, dom = cls._params_levels(params)
        g, k = params.get("g"), params.get("k")
        rho = np.asarray(params["rho"], dtype=float)
        return cls(levels, rho, dom, params["oracle"], None if g is None else int(g), None if k is None else int(k))

    def level_weights(self) -> np.ndarray | None:
        """The public shares :math:`\\rho`."""
        return self.rho

    @property
    def pooled_support(self) -> tuple[np.ndarray, np.ndarray]:
        """The pooled :math:`(p^*, q^*)` of every item, the server's view of a report."""
        return np.full(self.d, self.p_star), np.full(self.d, self.q_star)

    def simulate(self, cells: Any, rng: np.random.Generator) -> Tally:
        """Exact count-level simulation: the sum of every level's simulated tally."""
        c = self._check_cells(cells)
        return self._pooled_tally([m.simulate(row, rng) for m, row in zip(self.mechanisms, c, strict=True)])

    def expected_variance(self, p: Any, n: int) -> np.ndarray:
        """:math:`m(1-m)/(N(p^*-q^*)^2)`, the variance of the unbiased estimate (i.i.d. users)."""
        m = self.q_star + (self.p_star - self.q_star) * as_frequencies(p, self.d)
        return m * (1.0 - m) / (check_int(n, "n", 1) * (self.p_star - self.q_star) ** 2)

    def estimate(self, tally: Tally, method: str = "unbiased", **options: Any) -> Estimate:
        """Estimate with the pooled pure oracle (:func:`~pldp.estimation.pure.estimate_counts`).

        ``"unbiased"`` is eq. 3 with the known shares; ``"norm_sub"`` its projection; ``"mle"``
        the exact multinomial MLE of the blended k-RR channel, or the count-based unary MLE with
        the per-bit (per-item support) marginals. Variances as for mechanisms (i.i.d. users); ``options``
        (``solver``, ``tol``, ``max_iter``) are passed on.

        * ``"detect"`` (unary levels): the reports whose number of ones is unlikely (below
          ``alpha``, default 1e-3) at every level are dropped and the kept reports' channel, the
          mixture of the levels' with the public shares, inverted
          (:func:`pldp.estimation.detect.detect_unary`: exact, since the shares are public).
          k-RR reports carry nothing to test: nothing is flagged and it is ``"unbiased"``.
        * ``"robust"``: PBP hides the level behind public shares, so a fake cannot claim one:
          every report enters the same blended channel and moves the pooled unbiased estimate by
          at most :math:`(1 - q^*)/(N(p^* - q^*))`. Unary: that estimate, then Norm-Sub with its
          threshold kept at zero or above (:func:`~pldp.estimation.spread.spread_robust` on one
          group), with ``info["bound"]`` for any reports of a share ``beta`` (default 5 %) of
          fakes (the linear part's :math:`\\beta (1 - q^*)/(p^* - q^*)`, plus the most the
          projection's threshold can shift; at most 1, ``info["vacuous"]`` where it is). It
          used to be ``"detect"`` projected by plain Norm-Sub, which fakes with the target bit
          alone beat: they lower every other item, and both Norm-Sub's threshold and the
          detection's normalisation by the estimated number of honest reports raise the target
          as much again (β = 1 %, ten levels 0.1..1.0, :math:`n = 10^5`: 0.066-0.072 against
          0.048). k-RR: ``"mle"``. Cost without attack (``tests/test_robust.py``): MSE ratio to
          ``"unbiased"`` below 1 (the projection).

        OLH, HR and SS levels (support counts) offer ``"unbiased"``, ``"norm_sub"``, ``"mle"`` and
        ``"recover"`` (:attr:`methods`), as the oracles do: ``"detect"`` reads a report's number of
        ones, which their reports do not have (or, for SS, always ``k``), and ``"robust"``'s bound
        is derived for the unary and k-RR channels only.
        """
        if self.supports_counted and method in SUPPORT_REFUSALS:
            raise EstimationError(f"{method!r} does not fit {self!r}: {SUPPORT_REFUSALS[method]}")
        self._check_method(method)
        tally = self._check_tally(tally)
        kind = "unary" if self.supports_counted else self.mechanisms[0].family  # support counts: a unary tally
        if tally.kind != kind or tally.d != self.d:
            raise EstimationError(f"a {tally.kind} tally over {tally.d} items does not fit {self!r}")
        if method in ("detect", "robust"):
            return self._robust(tally, method, **options)
        e = estimate_counts(kind, self.pooled_support, self.domain, tally.n, tally.counts, method, **options)
        info = {**e.info, "protocol": "PBP", "p_star": self.p_star, "q_star": self.q_star}
        return Estimate(
            e.frequencies, e.variance, e.n, e.method, self.domain, e.iterations, e.converged, info, e.on_simplex
        )

    def _robust(self, tally: Tally, method: str, **options: Any) -> Estimate:
        """``"detect"`` and ``"robust"`` (see :meth:`estimate`)."""
        unary = self.mechanisms[0].family == "unary"
        if (unary or self.supports_counted) and method == "robust":
            return self._pooled_robust(tally, float(options.get("beta", DEFAULT_BETA)))
        if unary:
            base = detect_unary(self, tally, self.ones_laws, float(options.get("alpha", DEFAULT_ALPHA)))
        else:
            base = self.estimate(tally, "unbiased" if method == "detect" else "mle")
            base = Estimate(
                base.frequencies,
                base.variance,
                base.n,
                method,
                self.domain,
                base.iterations,
                base.converged,
                {**base.info, "detection": "k-RR reports carry nothing to test: nothing is flagged"},
                base.on_simplex,
            )
        info = {**base.info, "protocol": "PBP", "p_star": self.p_star, "q_star": self.q_star}
        return Estimate(base.frequencies, base.variance, tally.n, method, self.domain, 0, True, info, base.on_simplex)

    def _pooled_robust(self, tally: Tally, beta: float) -> Estimate:
        """Unary and support-count ``"robust"``: the pooled unbiased estimate, then Norm-Sub with its
        threshold kept at zero or above, with the bound of any reports of a share ``beta`` of fakes
        (:func:`~pldp.estimation.spread.spread_robust` on one group: every report enters the same
        channel, so equal influence is the pooled estimate itself). The bound lets a fake support any
        set of items (a unary fake sets any bits); an OLH, HR or SS fake supports one of the sets
        its format allows, so the same bound holds for it."""
        base = self.estimate(tally, "unbiased")
        p_star, q_star = self.pooled_support
        support = (p_star[None, :], q_star[None, :])
        freq, _, extra = spread_robust(
            base.frequencies[None, :], base.variance[None, :], np.array([tally.n]), support, beta=beta
        )
        info = {**extra, "protocol": "PBP", "p_star": self.p_star, "q_star": self.q_star,
                "estimator": "pooled unbiased, Norm-Sub with its threshold kept at zero or above"}  # fmt: skip
        info.pop("weights")
        on_simplex = bool(np.asarray(extra["threshold"]) > 0)  # Norm-Sub's threshold was positive: sums to one
        return Estimate(freq, base.variance, tally.n, "robust", self.domain, 0, True, info, on_simplex)
