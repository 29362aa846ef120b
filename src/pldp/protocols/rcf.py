"""RCF: budgets sent in the clear, per-level estimates combined with minimum-variance weights.

Recycle and Combination Framework (Nie et al., IEEE TKDE 2019), as a PLDP-FEBSF baseline
(Appendix A.5). Users send their budget level with their report; the server groups the reports
by level, estimates each level without bias with that level's pure oracle and combines the
levels linearly (:mod:`pldp.estimation.combine`). What the sources define and what is assumed
here is in ``docs/protocols.md``. :class:`~pldp.protocols.apldp.APLDP` is the same with a
different oracle per level, so the reports, the tally and the estimator here serve both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Self

import numpy as np

from pldp.domain import Domain
from pldp.errors import ParameterError, SpecError, TallyError
from pldp.estimation.combine import combine, data_free_variance, min_variance_weights
from pldp.estimation.consistency import norm_sub
from pldp.estimation.groups import group_estimates, joint_mle, joint_mle_variance
from pldp.estimation.result import Estimate
from pldp.estimation.robust import DEFAULT_CAP, DEFAULT_K, robust_combine
from pldp.estimation.spread import DEFAULT_BETA, spread_robust
from pldp.methods import ESTIMATION_METHODS, STANDARD_METHODS
from pldp.protocols.leveled import LeveledProtocol, check_levels, check_oracle, make_oracle
from pldp.registry import register
from pldp.tally import BaseTally, Tally
from pldp.theory import item_variance

__all__ = ["RCF", "GroupedReports", "GroupedTally"]


@dataclass(frozen=True)
class GroupedReports:
    """Reports sent with the budget level in the clear (RCF, APLDP).

    Attributes
    ----------
    data : tuple of ndarray
        ``data[l]`` holds the reports of the users with ``level == l``, in user order, as the
        level's mechanism produces them: item indices (k-RR), bit-packed unary rows (OUE,
        RAPPOR), ``(seed, value)`` rows (OLH), Hadamard indices (HR), bit-packed subsets (SS)
        (one array per level, since the levels' report formats may differ).
    level : ndarray of int, shape (n,)
        Each user's level index (sent in the clear).
    """

    data: tuple[np.ndarray, ...]
    level: np.ndarray


@dataclass(frozen=True, eq=False)
class GroupedTally(BaseTally):
    """One :class:`~pldp.tally.Tally` per budget level, with the fingerprint of the protocol.

    Attributes
    ----------
    tallies : tuple of Tally
        The tally of each level's reports (each with its level mechanism's fingerprint).
    fingerprint : str or None
        Fingerprint of the protocol that made it.
    """

    FORMAT: ClassVar[str] = "pldp.grouped-tally/2"

    tallies: tuple[Tally, ...]
    fingerprint: str | None = None

    def __post_init__(self) -> None:
        tallies = tuple(self.tallies)
        if not tallies or not all(isinstance(t, Tally) for t in tallies):
            raise TallyError("a grouped tally needs one Tally per level")
        object.__setattr__(self, "tallies", tallies)

    @property
    def t(self) -> int:
        """Number of levels."""
        return len(self.tallies)

    @property
    def n(self) -> int:
        """Number of users."""
        return int(sum(t.n for t in self.tallies))

    @property
    def level_counts(self) -> np.ndarray:
        """Users per level, :math:`n_\\tau`."""
        return np.array([t.n for t in self.tallies], dtype=np.int64)

    def _merge(self, other: GroupedTally) -> GroupedTally:
        if other.t != self.t:
            raise TallyError(f"cannot merge a tally of {other.t} levels into one of {self.t}")
        merged = tuple(a.merge(b) for a, b in zip(self.tallies, other.tallies, strict=True))
        return GroupedTally(merged, self.fingerprint)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, GroupedTally)
            and other.fingerprint == self.fingerprint
            and other.t == self.t
            and all(a == b for a, b in zip(self.tallies, other.tallies, strict=True))
        )

    def _fields(self) -> dict[str, Any]:
        return {"tallies": [t.to_dict() for t in self.tallies]}

    @classmethod
    def _from_fields(cls, data: dict[str, Any], fingerprint: str | None) -> GroupedTally:
        return cls(tuple(Tally.from_dict(t) for t in data["tallies"]), fingerprint)


@register
class RCF(LeveledProtocol):
    """Recycle and Combination Framework (Nie et al., IEEE TKDE 2019), a PLDP-FEBSF baseline.

    Users send their budget level in the clear with their report. The server groups the reports
    by level, computes each level's unbiased estimate :math:`\\hat f_\\tau` with that level's pure
    oracle and combines them as :math:`\\hat f = \\sum_\\tau w_\\tau \\hat f_\\tau` with the
    minimum-variance weights of the data-independent variances,

    .. math::

        w_\\tau \\propto \\frac{1}{V_\\tau}, \\qquad
        V_\\tau = \\frac{q_\\tau(1 - q_\\tau)}{n_\\tau (p_\\tau - q_\\tau)^2},

    which keep the combination exactly unbiased (for basic RAPPOR they are MPLDP's Theorem 2
    weights), and give the combined variance :math:`(\\sum_\\tau 1/V_\\tau)^{-1}` for an item
    nobody holds. Recycling is not implemented (see ``docs/protocols.md``).

    The large-domain oracles serve as well: OLH (each level with its own optimal
    :math:`g_\\tau = \\mathrm{round}(e^{\\varepsilon_\\tau}) + 1`, as :class:`~pldp.OLH` picks it;
    the level travels in the clear, so its ``g`` tells nothing the level does not), Hadamard
    response and subset selection. Their reports are counted per item by support, with
    :math:`p^*_\\tau, q^*_\\tau` in place of :math:`p_\\tau, q_\\tau` above (for OLH,
    :math:`V_\\tau = (e^{\\varepsilon_\\tau} + g_\\tau - 1)^2 / (n_\\tau (e^{\\varepsilon_\\tau} - 1)^2
    (g_\\tau - 1))`), and every estimator below applies.

    Parameters
    ----------
    levels : array_like of float
        Budget levels, strictly increasing, each finite and > 0.
    d : int or Domain
        The item domain (at least 2 items).
    oracle : {"krr", "oue", "rappor", "olh", "hr", "ss"}
        Pure frequency oracle of every level (:data:`~pldp.protocols.leveled.ORACLES`).

    Examples
    --------
    >>> rcf = RCF([0.5, 2.0], 4)
    >>> rng = np.random.default_rng(0)
    >>> tally = rcf.simulate([[2500, 2500, 2500, 2500], [1000, 1000, 1000, 1000]], rng)
    >>> est = rcf.estimate(tally)
    >>> est.frequencies.shape, bool(abs(est.frequencies.sum() - 1) < 1e-12)
    ((4,), True)

    With OLH at every level (``g`` 3, 4 and 8 at budgets 0.5, 1 and 2), equal numbers of users
    per level weigh in by the inverse of OLH's variance factors, about 15.8, 3.69 and 0.725:

    >>> rcf = RCF([0.5, 1.0, 2.0], 100, oracle="olh")
    >>> [m.g for m in rcf.mechanisms]
    [3, 4, 8]
    >>> rcf.weights([1000, 1000, 1000])[:, 0].round(3).tolist()
    [0.037, 0.158, 0.805]
    """

    tally_type: ClassVar[type[BaseTally]] = GroupedTally
    methods: ClassVar[tuple[str, ...]] = (*STANDARD_METHODS, "robust", "huber")

    def __init__(
        self, levels: Any, d: int | Domain, oracle: Literal["krr", "oue", "rappor", "olh", "hr", "ss"] = "krr"
    ) -> None:
        self.oracle = check_oracle(oracle)
        self._setup(levels, d, [self.oracle] * check_levels(levels).size)

    def _setup(self, levels: Any, d: int | Domain, choices: Sequence[str]) -> None:
        """Levels, domain and one mechanism per level, ``choices[i]`` at level ``i``."""
        super().__init__(levels, d)
        self.choices: tuple[str, ...] = tuple(choices)
        self.mechanisms = tuple(make_oracle(c, e, self.domain) for c, e in zip(self.choices, self.levels, strict=True))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(levels={self.levels.tolist()}, d={self.d}, oracle={self.oracle!r})"

    def params(self) -> dict[str, Any]:
        """Canonical parameters: class, labels, levels and each level's oracle."""
        return {**self._base_params(), "oracles": list(self.choices)}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        oracles = set(params["oracles"])
        if len(oracles) != 1:
            raise SpecError("RCF uses one oracle at every level")
        levels, dom = cls._params_levels(params)
        return cls(levels, dom, oracles.pop())

    def reports_from_columns(self, columns: Mapping[str, np.ndarray]) -> tuple[Any, ...]:
        """Each level's reports, as its mechanism reads them from its own columns
        (:meth:`~pldp.oracle.FrequencyOracle.reports_from_columns`), and the levels."""
        level = columns["level"]
        parts = []
        for t, mech in enumerate(self.mechanisms):
            sel = level == t
            own = {c.name: np.asarray(columns[c.name])[sel] for c in mech.sampler().columns()}
            parts.append(mech.reports_from_columns(own)[0])
        return (GroupedReports(tuple(parts), level),)

    def report_columns(self, reports: GroupedReports) -> dict[str, np.ndarray]:
        """The level column, and each user's report in her level's mechanism's columns
        (:meth:`~pldp.oracle.FrequencyOracle.report_columns`); the other columns stay empty."""
        cols = self.sampler().empty_columns(reports.level.size)
        cols["level"] = np.asarray(reports.level, dtype=np.int64)
        for t, (mech, data) in enumerate(zip(self.mechanisms, reports.data, strict=True)):
            for name, values in mech.report_columns(data).items():
                cols[name][reports.level == t] = values
        return cols

    # -------------------------------------------------------------------- client
    def perturb(self, items: Any, levels: Any, rng: np.random.Generator) -> GroupedReports:
        """Each user perturbs her item with her level's mechanism and sends it with her level.

        Parameters
        ----------
        items : array_like of int, shape (n,)
            Item indices in ``[0, d)``.
        levels : array_like of int, shape (n,)
            Level indices in ``[0, t)``.
        rng : numpy.random.Generator

        Returns
        -------
        GroupedReports
        """
        x, lv = self._check_users(items, levels)
        data = tuple(mech.perturb(x[lv == i], rng) for i, mech in enumerate(self.mechanisms))
        return GroupedReports(data, lv)

    # -------------------------------------------------------------------- server
    def tally(self, reports: GroupedReports) -> GroupedTally:
        """Group the reports by their level and tally each group with its mechanism."""
        if not isinstance(reports, GroupedReports):
            raise TallyError(f"expected GroupedReports, got {type(reports).__name__}")
        lv = np.asarray(reports.level)
        if lv.ndim != 1 or (lv.size and (lv.dtype.kind not in "iu" or lv.min() < 0 or lv.max() >= self.t)):
            raise TallyError(f"levels must be a 1-D array of level indices in [0, {self.t})")
        if len(reports.data) != self.t:
            raise TallyError(f"expected reports for {self.t} levels, got {len(reports.data)}")
        sizes = np.bincount(lv, minlength=self.t)
        tallies = []
        for i, (mech, rep) in enumerate(zip(self.mechanisms, reports.data, strict=True)):
            tal = mech.tally(rep)
            if tal.n != sizes[i]:
                raise TallyError(f"level {i} has {sizes[i]} users but {tal.n} reports")
            tallies.append(tal)
        return GroupedTally(tuple(tallies), self.fingerprint)

    def simulate(self, cells: Any, rng: np.random.Generator) -> GroupedTally:
        """Exact count-level simulation: each level's mechanism simulates its row of ``cells``."""
        c = self._check_cells(cells)
        tallies = tuple(m.simulate(row, rng) for m, row in zip(self.mechanisms, c, strict=True))
        return GroupedTally(tallies, self.fingerprint)

    def weights(self, level_counts: Any) -> np.ndarray:
        """Minimum-variance weights from the data-independent variances, shape (t, d).

        :math:`w_\\tau \\propto 1/V_\\tau` with :math:`V_\\tau = q_\\tau(1-q_\\tau) /
        (n_\\tau (p_\\tau - q_\\tau)^2)` (:func:`~pldp.estimation.combine.data_free_variance`);
        a level without users gets weight 0.
        """
        sizes = np.asarray(level_counts)
        if sizes.shape != (self.t,):
            raise ParameterError(f"level_counts must have shape ({self.t},), got {sizes.shape}")
        v = np.stack([data_free_variance(m, n) for m, n in zip(self.mechanisms, sizes, strict=True)])
        return min_variance_weights(v)

    def expected_variance(self, p: Any, level_counts: Any) -> np.ndarray:
        """Variance of the unbiased estimate when users are i.i.d. from ``p`` within each level.

        :math:`\\sum_\\tau w_\\tau^2\\, m_\\tau (1 - m_\\tau) / (n_\\tau \\delta_\\tau^2)` with
        :math:`m_\\tau = q_\\tau + \\delta_\\tau p` (:func:`pldp.theory.item_variance`).
        """
        sizes = np.asarray(level_counts)
        w = self.weights(sizes)
        var = np.zeros(self.d)
        for i, (m, n) in enumerate(zip(self.mechanisms, sizes, strict=True)):
            if n > 0:
                var += w[i] ** 2 * item_variance(m, p, int(n), "iid")
        return var

    def estimate(
        self,
        tally: GroupedTally,
        method: str = "unbiased",
        *,
        cap: float = DEFAULT_CAP,
        k: float = DEFAULT_K,
        beta: float = DEFAULT_BETA,
    ) -> Estimate:
        """Estimate the item distribution from a grouped tally.

        * ``"unbiased"``: each level's unbiased estimate :math:`\\hat f_\\tau` (eq. 2 of
          PLDP-FEBSF with that level's :math:`p_\\tau, q_\\tau`), combined as
          :math:`\\sum_\\tau w_\\tau \\hat f_\\tau` with the weights of :meth:`weights`. The weights
          depend only on the level sizes and budgets, so the combination is exactly unbiased.
          Variance: :math:`\\sum_\\tau w_\\tau^2 \\hat V_\\tau` with each level's plug-in variance
          :math:`\\hat m(1-\\hat m)/(n_\\tau \\delta_\\tau^2)` (i.i.d. users within a level).
        * ``"norm_sub"``: the combined unbiased estimate projected onto the simplex (Norm-Sub);
          the variance describes the estimate before projection.
        * ``"mle"``: maximum likelihood of ``p`` from all levels jointly
          (:func:`~pldp.estimation.groups.joint_mle`), with the variance of
          :func:`~pldp.estimation.groups.joint_mle_variance`.
        * ``"robust"``: the levels' unbiased estimates combined with weights that give
          every report the same influence, :math:`w_\\tau \\propto N_\\tau r_\\tau`,
          :math:`r = (p^*-q^*)/(1-q^*)` (:func:`~pldp.estimation.spread.equal_influence`), then
          Norm-Sub with its threshold kept at zero or above
          (:func:`~pldp.estimation.spread.lowering_projection`: the projection only lowers, so
          reports that lower the other items cannot raise the target through it; the estimate
          sums to less than one when Norm-Sub would have added mass). A fake moves the numerator
          by at most one report's worth whatever level it claims, so spreading claims buys
          nothing. **Bound** (``info["bound"]``, model ``info["bound_model"]``): a share ``beta``
          (default 5 %) of fakes, any split over the levels, any reports, moves item ``x`` by at
          most ``info["bound"][x]`` (the linear part's ``info["linear_bound"]``, tight, plus the
          largest move of any item, which bounds the projection's shift; at most 1, and
          ``info["vacuous"]`` where it is 1: it then says nothing). **Margin**
          (``info["margin"]``): how much more those fakes can raise this estimate than
          ``"unbiased"`` on the same reports (:func:`~pldp.estimation.spread.linear_moves`).
          **Measured**
          (``benchmarks/spread_candidates.py``, ten levels 0.1..1.0, d = 16, n = 10^5, Zipf(2),
          the rarest item, the optimising attacker that knows it): RCF-k-RR and LLevels 0.185 at
          β = 1 % (×0.86 MGA against k-RR at 0.55), 0.68 at 4.5 % (×0.70); RCF-OUE 0.049 (×1.03)
          and 0.214 (×1.01), and unary fakes with the target bit alone 0.052 (×1.10) and 0.228
          (×1.07): OUE's :math:`r` is concave in the budget, so no combination of the levels
          reaches MGA at the mean budget (the consistent split gains ×1.06 / ×1.05 against
          ``"unbiased"``). **Cost without attack**: MSE ×1.31 (k-RR) and ×1.43 (OUE) that of
          ``"norm_sub"`` (the weights are not the minimum-variance ones); with levels (0.5, 1, 2)
          ×1.48 and ×1.85 (``--three``). The variance describes
          the estimate before projection.
        * ``"huber"``: the former ``"robust"``: Huber's equation with fixed scales over the
          levels, the weights of ``"unbiased"`` capped at the share ``cap``, clip ``k``
          (:func:`~pldp.estimation.robust.robust_combine`), with a delta-method variance. Its
          bound (``info["bound"]``) covers fakes who all claim *one* level; spread over the levels
          of most weight they beat it (``info["spread_bound"]`` is None): measured worst case at
          β = 1 % (``benchmarks/optimal_attack.py``): RCF-k-RR 0.280 (×1.31), RCF-OUE 0.073
          (×1.54), LLevels-L-GRR 0.294 (×1.37). Kept for comparison, not as a defence.

        Raises
        ------
        EstimationError
            Unknown method, a tally of another protocol, or a tally without reports.
        """
        self._check_method(method)
        tally = self._check_tally(tally)
        sizes = tally.level_counts
        w = self.weights(sizes)
        est, var = group_estimates(self.mechanisms, tally.tallies)
        freq, variance = combine(est, w, np.maximum(var, np.finfo(float).tiny))
        iterations = 0
        extra: dict[str, Any] = {}
        if method == "norm_sub":
            freq, iterations = norm_sub(freq)
        elif method == "mle":
            freq = joint_mle(self.mechanisms, tally.tallies)
            variance = joint_mle_variance(self.mechanisms, tally.tallies, freq)
        elif method in ("robust", "huber"):
            support = tuple(np.stack([m.support[i] for m in self.mechanisms]) for i in (0, 1))
            if method == "huber":
                rob = robust_combine(est, var, sizes, (support[0], support[1]), cap=cap, k=k)
                freq, variance, w = rob.frequencies, rob.variance, rob.weights
                extra = rob.info()
            else:
                freq, eq, extra = spread_robust(est, var, sizes, (support[0], support[1]), beta=beta, reference=w)
                variance, w = eq.variance, eq.weights
        info = {
            "protocol": type(self).__name__,
            "mechanisms": self.choices,
            "level_counts": sizes,
            "weights": w,
            "level_estimates": est,
            **extra,
        }
        on_simplex = ESTIMATION_METHODS[method].on_simplex
        return Estimate(freq, variance, tally.n, method, self.domain, iterations, True, info, on_simplex)
