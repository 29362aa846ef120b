"""Baselines of PLDP-FEBSF (Appendix A.5): RCF, APLDP, PBP and PPDA.

Every user holds an item and one of ``t`` public budget levels
:math:`\\varepsilon_1 < \\dots < \\varepsilon_t` (her choice, independent of her item), and
perturbs her item with a pure protocol at her level's budget, so her report is
:math:`\\varepsilon_\\tau`-LDP (:meth:`privacy` checks every level's mechanism exactly). The
four baselines differ in what the server learns about the levels and how it estimates:

=========  =====================  =========================================================
protocol   budget                 server
=========  =====================  =========================================================
``RCF``    sent in the clear      per-level unbiased estimates, minimum-variance combination
``APLDP``  sent in the clear      as RCF, each level using its best of k-RR / OUE / RAPPOR
``PBP``    hidden, shares public  eq. 3 of PLDP-FEBSF with the known shares, on pooled reports
``PPDA``   hidden                 unary reports padded with zero bits that calibrate the mix
=========  =====================  =========================================================

They share the interface of :class:`pldp.protocols.febsf.FEBSF`: ``perturb(items, levels,
rng)`` (vectorised; a loop over the levels only), ``tally(reports)`` (a mergeable tally),
``simulate(cells, rng)`` (exact count-level simulation from ``cells[level, item]``),
``estimate(tally, method)`` with ``method`` in ``"unbiased"``, ``"norm_sub"``, ``"mle"``
(also through :func:`pldp.estimate`), and ``privacy()``.

Variances. The reported variances follow :func:`pldp.estimate`: users drawn i.i.d. (item and
level independent), evaluated at the estimates (plug-in). For a fixed dataset they are
conservative (see :mod:`pldp.theory`, ``model="fixed"``). PBP and PPDA pool the levels, so
they also need the levels to be independent of the items (in a fixed dataset: the same level
mix for every item); RCF and APLDP are unbiased for any split.

References
----------
Wu, Zhu, Zhang, Xie. Overcoming Challenges in PLDP (PLDP-FEBSF), Appendix A.5 and eq. 3.
Nie et al., IEEE TKDE 31(4) 2019 (RCF). Song et al., Computers & Security 136, 2024 (APLDP).
Takagi, Cao, Yoshikawa, ASIA CCS 2020 poster (PBP). Wang et al., IEEE GLOBECOM 2015 (PPDA).
Wang, Blocki, Li, Jha, USENIX Security 2017 (KRR, OUE, basic RAPPOR and their variances).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from scipy.optimize import minimize_scalar

from pldp._validation import _show, as_counts, as_frequencies, check_int
from pldp.domain import Domain
from pldp.errors import DomainError, EstimationError, ParameterError, TallyError
from pldp.estimation.api import METHODS
from pldp.estimation.api import estimate as _estimate_mechanism
from pldp.estimation.combine import combine, data_free_variance, min_variance_weights
from pldp.estimation.consistency import norm_sub
from pldp.estimation.mle import log_likelihood_unary, mle_unary
from pldp.estimation.result import Estimate
from pldp.estimation.unbiased import plugin_variance
from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.direct import KRR
from pldp.mechanisms.unary import OUE, RAPPOR
from pldp.protocols.base import Protocol
from pldp.protocols.febsf import check_levels
from pldp.tally import Tally
from pldp.theory import expected_l2, item_variance, maximize_on_simplex

__all__ = ["APLDP", "PBP", "PPDA", "RCF", "GroupedReports", "GroupedTally", "select_mechanism"]

_FACTORY: dict[str, type[Mechanism]] = {"krr": KRR, "oue": OUE, "rappor": RAPPOR}
_FORMAT = "pldp.grouped-tally/1"


def _make(data: str, eps: float, dom: Domain) -> Mechanism:
    return _FACTORY[data](float(eps), dom)  # type: ignore[call-arg]


def _check_data(data: Any, allowed: Sequence[str]) -> str:
    if data not in allowed:
        raise ParameterError(f"data must be one of {tuple(allowed)}, got {data!r}")
    return str(data)


# ---------------------------------------------------------------------------- common base
class _Leveled(Protocol):
    """Budget levels, the item domain, one mechanism per level, and input checks (internal)."""

    mechanisms: tuple[Mechanism, ...]

    def __init__(self, levels: Any, d: int | Domain) -> None:
        self.levels = check_levels(levels)
        self._domain = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 2))
        if len(self._domain) < 2:
            raise ParameterError(f"the domain needs at least 2 items, got {len(self._domain)}")

    @property
    def t(self) -> int:
        """Number of budget levels."""
        return int(self.levels.size)

    @property
    def domain(self) -> Domain:
        """The item domain."""
        return self._domain

    @property
    def d(self) -> int:
        """Domain size."""
        return len(self._domain)

    def _check_users(self, items: Any, levels: Any) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(items)
        lv = np.asarray(levels)
        if x.ndim != 1 or lv.shape != x.shape:
            raise ParameterError(f"items and levels must be 1-D arrays of equal length, got {x.shape} and {lv.shape}")
        if x.size and (x.dtype.kind not in "iu" or lv.dtype.kind not in "iu"):
            raise ParameterError(f"items and levels must be integer indices, got dtypes {x.dtype} and {lv.dtype}")
        if lv.size and (lv.min() < 0 or lv.max() >= self.t):
            bad = lv[(lv < 0) | (lv >= self.t)]
            raise DomainError(f"level indices must lie in [0, {self.t}); got {_show(np.unique(bad))}")
        if x.size and (x.min() < 0 or x.max() >= self.d):
            bad = x[(x < 0) | (x >= self.d)]
            raise DomainError(f"items must lie in [0, {self.d}); out of domain: {_show(np.unique(bad))}")
        return x.astype(np.int64), lv.astype(np.int64)

    def _check_cells(self, cells: Any) -> np.ndarray:
        c = np.asarray(cells)
        if c.shape != (self.t, self.d):
            raise ParameterError(f"cells must have shape (t, d) = ({self.t}, {self.d}), got {c.shape}")
        return as_counts(c.reshape(-1), "cells").reshape(self.t, self.d)

    def privacy(self) -> dict[str, Any]:
        """Exact check of each level's mechanism: key ``"data[eps]"``, its privacy report.

        A user at level ``tau`` runs ``mechanisms[tau]`` only, so she is
        :math:`\\varepsilon_\\tau`-LDP exactly when that report holds with
        ``ldp_epsilon <= eps_tau``.
        """
        return {f"data[{e:g}]": m.privacy() for e, m in zip(self.levels, self.mechanisms, strict=True)}


# ---------------------------------------------------------------- reports and tallies (RCF)
@dataclass(frozen=True)
class GroupedReports:
    """Reports sent with the budget level in the clear (RCF, APLDP).

    Attributes
    ----------
    data : tuple of ndarray
        ``data[l]`` holds the reports of the users with ``level == l``, in user order: item
        indices (k-RR) or bit-packed unary rows (OUE, RAPPOR), as the level's mechanism
        produces them (one array per level, since the levels' report formats may differ).
    level : ndarray of int, shape (n,)
        Each user's level index (sent in the clear).
    """

    data: tuple[np.ndarray, ...]
    level: np.ndarray


@dataclass(frozen=True, eq=False)
class GroupedTally:
    """One :class:`~pldp.tally.Tally` per budget level, tagged with the protocol that made it.

    Mergeable (per level) with tallies of the same protocol; serialisable with
    :meth:`to_dict` / :meth:`from_dict`.

    Attributes
    ----------
    protocol : str
        ``repr`` of the protocol (levels, domain size, mechanisms); estimation and merging
        refuse tallies of another protocol.
    tallies : tuple of Tally
        The tally of each level's reports.
    """

    protocol: str
    tallies: tuple[Tally, ...]

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

    def merge(self, other: GroupedTally) -> GroupedTally:
        """Combine with a tally of other users of the same protocol (level by level)."""
        if not isinstance(other, GroupedTally) or other.protocol != self.protocol or other.t != self.t:
            raise TallyError(f"can only merge tallies of the same protocol {self.protocol}")
        return GroupedTally(self.protocol, tuple(a.merge(b) for a, b in zip(self.tallies, other.tallies, strict=True)))

    __add__ = merge

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, GroupedTally)
            and other.protocol == self.protocol
            and other.t == self.t
            and all(a == b for a, b in zip(self.tallies, other.tallies, strict=True))
        )

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (see :meth:`from_dict`)."""
        return {"format": _FORMAT, "protocol": self.protocol, "tallies": [t.to_dict() for t in self.tallies]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GroupedTally:
        """Rebuild a tally written by :meth:`to_dict`; the format tag is checked."""
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise TallyError(f"not a {_FORMAT} tally")
        try:
            return cls(str(data["protocol"]), tuple(Tally.from_dict(t) for t in data["tallies"]))
        except KeyError as exc:
            raise TallyError(f"grouped tally dict lacks the field {exc.args[0]!r}") from None


# ------------------------------------------------------------------ joint MLE over groups
def _joint_mle(mechanisms: Sequence[Mechanism], tallies: Sequence[Tally], d: int) -> np.ndarray:
    """Maximum likelihood of ``p`` from independent groups, each a pure mechanism.

    Direct encoding contributes the multinomial log-likelihood :math:`\\sum_y C_y \\ln m_y`
    (exact), unary encoding the count-based binomial one
    :math:`\\sum_k C_k \\ln m_k + (n - C_k)\\ln(1 - m_k)` (as :func:`pldp.estimation.mle.mle_unary`),
    with :math:`m = q^* + (p^* - q^*) p`. Both are separable and concave in ``p``, so the
    maximum over the simplex is found by the KKT bisection of
    :func:`pldp.theory.maximize_on_simplex`.
    """
    parts = []
    for mech, tal in zip(mechanisms, tallies, strict=True):
        if tal.n == 0:
            continue
        p_star, q_star = mech.support
        parts.append((q_star, p_star - q_star, tal.counts.astype(float), float(tal.n), mech.family == "unary"))

    def slope(p: np.ndarray) -> np.ndarray:
        out = np.zeros(d)
        for q_star, gap, c, n, unary in parts:
            m = q_star + gap * p
            out += gap * (c / m - ((n - c) / (1.0 - m) if unary else 0.0))
        return out

    return maximize_on_simplex(slope, d)


# ----------------------------------------------------------------------------- RCF, APLDP
class _Grouped(_Leveled):
    """Budgets in the clear: per-level estimates combined with minimum-variance weights."""

    def __init__(self, levels: Any, d: int | Domain, choices: Sequence[str]) -> None:
        super().__init__(levels, d)
        self.choices: tuple[str, ...] = tuple(choices)
        self.mechanisms = tuple(_make(c, e, self.domain) for c, e in zip(self.choices, self.levels, strict=True))

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
        return GroupedTally(repr(self), tuple(tallies))

    def simulate(self, cells: Any, rng: np.random.Generator) -> GroupedTally:
        """Exact count-level simulation: each level's mechanism simulates its row of ``cells``."""
        c = self._check_cells(cells)
        return GroupedTally(repr(self), tuple(m.simulate(row, rng) for m, row in zip(self.mechanisms, c, strict=True)))

    def _check_tally(self, tally: Any) -> GroupedTally:
        if not isinstance(tally, GroupedTally) or tally.protocol != repr(self):
            raise EstimationError(f"the tally does not come from {self!r}")
        if tally.n == 0:
            raise EstimationError("the tally holds no reports")
        return tally

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

    def estimate(self, tally: GroupedTally, method: str = "unbiased", **options: Any) -> Estimate:
        """Estimate the item distribution from a grouped tally.

        * ``"unbiased"``: each level's unbiased estimate :math:`\\hat f_\\tau` (eq. 2 of
          PLDP-FEBSF with that level's :math:`p_\\tau, q_\\tau`), combined as
          :math:`\\sum_\\tau w_\\tau \\hat f_\\tau` with the weights of :meth:`weights`. The weights
          depend only on the level sizes and budgets, so the combination is exactly unbiased.
          Variance: :math:`\\sum_\\tau w_\\tau^2 \\hat V_\\tau` with each level's plug-in variance
          :math:`\\hat m(1-\\hat m)/(n_\\tau \\delta_\\tau^2)` (i.i.d. users within a level).
        * ``"norm_sub"``: the combined unbiased estimate projected onto the simplex (Norm-Sub);
          the variance describes the estimate before projection.
        * ``"mle"``: maximum likelihood of ``p`` from all levels jointly (exact multinomial
          likelihood for k-RR levels, count-based binomial likelihood for unary levels; see
          :func:`pldp.estimation.mle.mle_unary`). Variance:
          :math:`(\\sum_\\tau 1/V_\\tau(\\hat p))^{-1}`, the variance of the per-item inverse-variance
          combination at the fitted ``p`` (the asymptotic variance of the MLE is at most this).

        ``options`` (``solver``, ``tol``, ``max_iter`` from :func:`pldp.estimate`) are accepted
        and ignored.

        Raises
        ------
        EstimationError
            Unknown method, a tally of another protocol, or a tally without reports.
        """
        tally = self._check_tally(tally)
        if method not in METHODS:
            raise EstimationError(f"unknown method {method!r}; choose one of {METHODS}")
        sizes = tally.level_counts
        w = self.weights(sizes)
        est = np.full((self.t, self.d), np.nan)
        var = np.full((self.t, self.d), np.inf)
        for i, (mech, tal) in enumerate(zip(self.mechanisms, tally.tallies, strict=True)):
            if tal.n > 0:
                e = _estimate_mechanism(mech, tal, "unbiased")
                est[i], var[i] = e.frequencies, e.variance
        freq, variance = combine(est, w, np.maximum(var, np.finfo(float).tiny))
        iterations = 0
        if method == "norm_sub":
            freq, iterations = norm_sub(freq)
        elif method == "mle":
            freq = _joint_mle(self.mechanisms, tally.tallies, self.d)
            precision = np.zeros(self.d)
            for mech, tal in zip(self.mechanisms, tally.tallies, strict=True):
                if tal.n > 0:
                    p_star, q_star = mech.support
                    m = q_star + (p_star - q_star) * freq
                    precision += 1.0 / plugin_variance(m, tal.n, p_star, q_star)
            variance = 1.0 / precision
        info = {
            "protocol": type(self).__name__,
            "mechanisms": self.choices,
            "level_counts": sizes,
            "weights": w,
            "level_estimates": est,
        }
        return Estimate(np.asarray(freq, dtype=float), variance, tally.n, method, self.domain, iterations, True, info)


class RCF(_Grouped):
    """Recycle and Combination Framework (Nie et al., IEEE TKDE 2019), as a PLDP-FEBSF baseline.

    Users send their budget level in the clear with their report. The server groups the
    reports by level, computes each level's unbiased estimate with that level's pure protocol
    (``KRR(eps, d)``, ``OUE(eps, d)`` or basic ``RAPPOR(eps, d)``), and combines them with
    the weights that minimise the variance (:mod:`pldp.estimation.combine`).

    What the sources define. PLDP-FEBSF (Sec. 2 and Appendix A.5) describes RCF as exactly
    this: grouping by the users' budgets, per-group estimation, and "a weighted summation of
    the estimation results from each group, following the principle of minimizing the mean
    squared error". Nie et al.'s paper could not be consulted here. Its name, and a public
    re-implementation, suggest a second step, *recycling*: an estimate released for a strict
    level also uses the users of the looser levels (whose reports can be re-perturbed to the
    strict budget). For the population histogram estimated here the combination over all
    levels is what counts, and recycling is not implemented. That re-implementation's
    "advanced combination" uses per-group weights :math:`n_\\tau / (k\\,e^{\\varepsilon_\\tau/2} /
    (e^{\\varepsilon_\\tau/2}-1)^2 + 1 - \\sum_j \\hat f_j^2)` (basic RAPPOR), i.e. the inverse of the
    group's total *plug-in* variance.

    What is assumed here. The weights are :math:`w_\\tau \\propto n_\\tau (p_\\tau - q_\\tau)^2 /
    (q_\\tau (1 - q_\\tau))`, the inverse of the data-independent variance (the variance of an
    item nobody holds, Wang et al. 2017): they keep the combination exactly unbiased, whereas
    plug-in weights correlate with the estimates (see :mod:`pldp.estimation.combine`). For
    basic RAPPOR they are MPLDP's Theorem 2 weights :math:`D_\\tau / \\sum D`. The data protocol
    is one choice for all levels (``data``), as in PLDP-FEBSF's experiments (basic RAPPOR).

    Parameters
    ----------
    levels : array_like of float
        Budget levels, strictly increasing, each finite and > 0.
    d : int or Domain
        The item domain (at least 2 items).
    data : {"krr", "oue", "rappor"}
        Pure protocol of every level.

    Examples
    --------
    >>> rcf = RCF([0.5, 2.0], 4)
    >>> rng = np.random.default_rng(0)
    >>> tally = rcf.simulate([[2500, 2500, 2500, 2500], [1000, 1000, 1000, 1000]], rng)
    >>> est = rcf.estimate(tally)
    >>> est.frequencies.shape, bool(abs(est.frequencies.sum() - 1) < 1e-12)
    ((4,), True)
    """

    def __init__(self, levels: Any, d: int | Domain, data: Literal["krr", "oue", "rappor"] = "krr") -> None:
        self.data = _check_data(data, ("krr", "oue", "rappor"))
        lv = check_levels(levels)
        super().__init__(lv, d, [self.data] * lv.size)

    def __repr__(self) -> str:
        return f"RCF(levels={self.levels.tolist()}, d={self.d}, data={self.data!r})"


def select_mechanism(
    epsilon: float, d: int, candidates: Sequence[str] = ("krr", "oue", "rappor")
) -> tuple[str, dict[str, float]]:
    """The pure protocol with the smallest expected squared error at ``epsilon`` and ``d``.

    Criterion: the expected :math:`l_2` loss of the unbiased estimate from one user drawn
    i.i.d. from ``p`` (:func:`pldp.theory.expected_l2`),

    .. math::

        \\sum_y \\frac{m_y (1 - m_y)}{\\delta^2}
        = d\\,\\frac{q^*(1-q^*)}{\\delta^2} + \\frac{1 - 2q^*}{\\delta} - \\sum_y p_y^2,
        \\qquad m_y = q^* + \\delta p_y,

    evaluated at the uniform ``p``. The last term is the same for every mechanism, so the
    ranking does not depend on ``p``; the uniform ``p`` is also the worst case (the loss is
    concave and symmetric in ``p``). The first term alone is Wang et al.'s approximate-variance
    rule (k-RR beats OUE when :math:`d < 3e^\\varepsilon + 2`); the second adds 2 for OUE, 1 for
    RAPPOR and :math:`(e^\\varepsilon + d - 3)/(e^\\varepsilon - 1)` for k-RR. OUE always beats
    basic RAPPOR on the first term; with the second, RAPPOR beats OUE only when
    :math:`d\\,e^{\\varepsilon/2} < (e^{\\varepsilon/2} + 1)^2`, where k-RR beats both (checked
    numerically for ``2 <= d < 5000``, ``0 < eps <= 20``), so RAPPOR is chosen only when OUE is
    not a candidate.

    Returns
    -------
    (str, dict)
        The chosen name (ties go to the earlier candidate) and every candidate's score.
    """
    if not candidates or any(c not in _FACTORY for c in candidates):
        raise ParameterError(f"candidates must be a non-empty subset of {tuple(_FACTORY)}, got {candidates!r}")
    dom = Domain.range(check_int(d, "d", 2))
    uniform = np.full(len(dom), 1.0 / len(dom))
    scores = {c: expected_l2(_make(c, epsilon, dom), uniform, 1) for c in candidates}
    return min(candidates, key=lambda c: scores[c]), scores


class APLDP(_Grouped):
    """Adaptive personalized LDP (Song et al., Computers & Security 2024), as a PLDP-FEBSF baseline.

    As :class:`RCF` (budgets in the clear, per-level unbiased estimates, minimum-variance
    combination with data-independent weights), but every level uses the pure protocol with
    the lowest expected squared error for its budget and the domain size, chosen by
    :func:`select_mechanism` among ``candidates``.

    What the sources define. PLDP-FEBSF (Appendix A.5): "different local perturbation
    algorithms are optimal for different ranges of privacy budgets"; users are grouped by
    budget, each group uses the optimal algorithm for its budget, and the group estimates are
    "weighted and summed"; Sec. 7.1 says APLDP used k-RR and basic RAPPOR.

    What is assumed here. The candidates default to k-RR, OUE and basic RAPPOR (pass
    ``candidates=("krr", "rappor")`` for the original pair); the selection criterion is the
    expected :math:`l_2` loss of :func:`select_mechanism` (data-independent, equal to the worst
    case over ``p``); the weights are those of :class:`RCF`.

    Parameters
    ----------
    levels : array_like of float
        Budget levels, strictly increasing.
    d : int or Domain
        The item domain.
    candidates : sequence of {"krr", "oue", "rappor"}
        Protocols to choose from.

    Attributes
    ----------
    choices : tuple of str
        The protocol of each level.
    scores : list of dict
        The criterion of every candidate at each level.

    Examples
    --------
    >>> APLDP([0.5, 4.0], 16).choices
    ('oue', 'krr')
    """

    def __init__(self, levels: Any, d: int | Domain, candidates: Sequence[str] = ("krr", "oue", "rappor")) -> None:
        lv = check_levels(levels)
        size = len(d) if isinstance(d, Domain) else check_int(d, "d", 2)
        self.candidates = tuple(candidates)
        picked = [select_mechanism(float(e), size, self.candidates) for e in lv]
        self.scores = [s for _, s in picked]
        super().__init__(lv, d, [c for c, _ in picked])

    def __repr__(self) -> str:
        return f"APLDP(levels={self.levels.tolist()}, d={self.d}, candidates={self.candidates!r})"


# -------------------------------------------------------------------------------- PBP
class _PooledModel(Mechanism):
    """The server's model of PBP's pooled reports (internal).

    A pure protocol with the level-averaged support probabilities :math:`(p^*, q^*)` for
    every item (for k-RR levels also the blended channel :math:`q^* + \\delta^*[x = y]`, a
    k-RR channel). It exists so that :func:`pldp.estimate` can run on the pooled tally;
    users never run it (each runs her own level's mechanism), so :meth:`perturb`,
    :meth:`simulate` and :meth:`privacy` refuse.
    """

    def __init__(self, template: Mechanism, p_star: float, q_star: float) -> None:
        self.family = template.family
        self._template = template
        self._p = np.full(template.d, p_star)
        self._q = np.full(template.d, q_star)
        for arr in (self._p, self._q):
            arr.setflags(write=False)
        self.delta = p_star - q_star

    @property
    def domain(self) -> Domain:
        return self._template.domain

    @property
    def support(self) -> tuple[np.ndarray, np.ndarray]:
        return self._p, self._q

    @property
    def q(self) -> np.ndarray:
        """Dishonest probability of every output (direct encoding), :math:`q^*`."""
        return self._q

    def channel(self) -> np.ndarray:
        """Blended channel (direct) or per-bit marginals (unary): ``q*`` off, ``p*`` on the diagonal."""
        Q = np.tile(self._q, (self.d, 1))
        Q[np.diag_indices(self.d)] = self._p
        return Q

    def _refuse(self) -> None:
        raise ParameterError("the pooled model is the server's view of PBP; users run their own level's mechanism")

    def perturb(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        self._refuse()
        raise AssertionError  # pragma: no cover

    def tally(self, reports: np.ndarray) -> Tally:
        return self._template.tally(reports)

    def simulate(self, true_counts: np.ndarray, rng: np.random.Generator) -> Tally:
        self._refuse()
        raise AssertionError  # pragma: no cover

    def privacy(self) -> Any:
        self._refuse()
        raise AssertionError  # pragma: no cover

    def __repr__(self) -> str:
        return f"PooledModel(family={self.family!r}, p*={self._p[0]:.6g}, q*={self._q[0]:.6g}, d={self.d})"


class PBP(_Leveled):
    """Parameter Blending Privacy (Takagi, Cao, Yoshikawa, ASIA CCS 2020 poster), a PLDP-FEBSF baseline.

    Each user perturbs her item with the pure protocol of her (secret) level and sends the
    report only; the shares :math:`\\rho` of the population over the levels are public. Pooled
    over the population, a report supports item ``i`` with probability
    :math:`p^*` if the user holds ``i`` and :math:`q^*` otherwise,

    .. math::

        p^* = \\sum_\\tau \\rho_\\tau p_{\\varepsilon_\\tau}, \\qquad
        q^* = \\sum_\\tau \\rho_\\tau q_{\\varepsilon_\\tau},

    and the server estimates with eq. 3 of PLDP-FEBSF, :math:`\\hat p_i = (C_i/N - q^*)/(p^* -
    q^*)` on the aggregated support counts. With users drawn i.i.d. (item and level
    independent) :math:`C_i \\sim \\mathrm{Bin}(N, m_i)` with :math:`m_i = q^* + (p^* - q^*) p_i`,
    so the estimate is exactly unbiased with variance :math:`m_i(1-m_i)/(N(p^*-q^*)^2)`.

    For k-RR levels the pooled report *is* one k-RR report with
    :math:`e^{\\varepsilon_b} = 1 + (p^* - q^*)/q^*`: :attr:`epsilon_blended` is the guarantee
    against an observer who knows :math:`\\rho` but not the user's level (PBP's blended
    parameter). For unary levels the bits of one report stay dependent through the level, so
    the pooled report is not a unary encoding with :math:`(p^*, q^*)` and no such blended
    guarantee is claimed (``epsilon_blended`` is None); the per-bit marginals still give the
    estimator. In every case each user is :math:`\\varepsilon_\\tau`-LDP by her own level's
    mechanism (:meth:`privacy`).

    What is assumed here. PLDP-FEBSF says only that budgets are hidden and the level shares
    public, and that the original implements two levels (and two attributes); the estimator
    is the paper's eq. 3 with the known :math:`\\rho`; any ``t`` and one attribute are
    supported. The shares must be the population's true ones: the estimate is biased if the
    users' levels do not follow :math:`\\rho`.

    Parameters
    ----------
    levels : array_like of float
        Budget levels, strictly increasing.
    rho : array_like of float
        Public shares of the levels (non-negative, summing to one).
    d : int or Domain
        The item domain.
    data : {"krr", "oue", "rappor"}
        Pure protocol of every level.
    """

    def __init__(self, levels: Any, rho: Any, d: int | Domain, data: Literal["krr", "oue", "rappor"] = "krr") -> None:
        super().__init__(levels, d)
        self.data = _check_data(data, ("krr", "oue", "rappor"))
        self.rho = as_frequencies(rho, self.t, "rho").copy()
        self.rho.setflags(write=False)
        self.mechanisms = tuple(_make(self.data, e, self.domain) for e in self.levels)
        p_l = np.array([m.support[0][0] for m in self.mechanisms])
        q_l = np.array([m.support[1][0] for m in self.mechanisms])
        self.p_star = float(self.rho @ p_l)
        self.q_star = float(self.rho @ q_l)
        self.model = _PooledModel(self.mechanisms[0], self.p_star, self.q_star)
        self.epsilon_blended: float | None = (
            math.log1p((self.p_star - self.q_star) / self.q_star) if self.data == "krr" else None
        )

    def __repr__(self) -> str:
        return f"PBP(levels={self.levels.tolist()}, rho={self.rho.tolist()}, d={self.d}, data={self.data!r})"

    def perturb(self, items: Any, levels: Any, rng: np.random.Generator) -> np.ndarray:
        """Each user perturbs her item at her level; only the reports are sent (in user order).

        Returns item indices (k-RR) or bit-packed unary rows (OUE, RAPPOR).
        """
        x, lv = self._check_users(items, levels)
        if self.data == "krr":
            out = np.empty(x.size, dtype=np.int64)
        else:
            out = np.empty((x.size, (self.d + 7) // 8), dtype=np.uint8)
        for i, mech in enumerate(self.mechanisms):
            sel = np.flatnonzero(lv == i)
            if sel.size:
                out[sel] = mech.perturb(x[sel], rng)
        return out

    def tally(self, reports: Any) -> Tally:
        """Support counts of all reports (no level information): a plain :class:`~pldp.tally.Tally`."""
        return self.mechanisms[0].tally(reports)

    def simulate(self, cells: Any, rng: np.random.Generator) -> Tally:
        """Exact count-level simulation: the sum of every level's simulated tally."""
        c = self._check_cells(cells)
        tallies = [m.simulate(row, rng) for m, row in zip(self.mechanisms, c, strict=True)]
        total = tallies[0]
        for tal in tallies[1:]:
            total = total.merge(tal)
        return total

    def expected_variance(self, p: Any, n: int) -> np.ndarray:
        """:math:`m(1-m)/(N(p^*-q^*)^2)`, the variance of the unbiased estimate (i.i.d. users)."""
        return item_variance(self.model, p, n, "iid")

    def estimate(self, tally: Tally, method: str = "unbiased", **options: Any) -> Estimate:
        """Estimate with the pooled pure protocol (:func:`pldp.estimate` on :attr:`model`).

        ``"unbiased"`` is eq. 3 with the known shares; ``"norm_sub"`` its projection;
        ``"mle"`` the exact multinomial MLE of the blended k-RR channel, or the count-based
        unary MLE with the per-bit marginals. Variances as in :func:`pldp.estimate` (i.i.d.
        users); ``options`` are passed on.
        """
        if not isinstance(tally, Tally) or tally.kind != self.model.family or tally.d != self.d:
            raise EstimationError(f"the tally does not come from {self!r}")
        e = _estimate_mechanism(self.model, tally, method, **options)  # type: ignore[arg-type]
        info = {**e.info, "protocol": "PBP", "p_star": self.p_star, "q_star": self.q_star}
        return Estimate(e.frequencies, e.variance, e.n, e.method, self.domain, e.iterations, e.converged, info)


# ------------------------------------------------------------------------------- PPDA
class PPDA(_Leveled):
    """Personalized privacy-preserving data aggregation (Wang et al., GLOBECOM 2015), as a baseline.

    What the sources define. PLDP-FEBSF (Sec. 2, Appendix A.5) says only: the users' budgets
    are hidden from the collector; users perturb their data with an LDP method based on
    one-hot encoding; "to ensure the accuracy of the estimation results, the scheme mandates
    appending extra zero bits to the encoded vectors", "a substantial number" of them, which
    costs communication and "may also indirectly leak privacy budgets". The original paper
    could not be consulted here.

    What is assumed here (a design that has exactly those properties):

    1. Client. A user at level :math:`\\tau` one-hot encodes her item into ``d`` bits, appends
       ``extra_bits`` = ``m`` zero bits, and perturbs all ``d + m`` bits independently with
       basic RAPPOR (``data="rappor"``: a 1 stays 1 w.p. :math:`a_\\tau = e^{\\varepsilon_\\tau/2}/
       (1 + e^{\\varepsilon_\\tau/2})`, a 0 becomes 1 w.p. :math:`b_\\tau = 1 - a_\\tau`) or OUE
       (``data="oue"``: :math:`a = 1/2`, :math:`b_\\tau = 1/(1 + e^{\\varepsilon_\\tau})`): that is
       ``RAPPOR(eps_tau, d + m)`` / ``OUE(eps_tau, d + m)`` run on an item in ``[0, d)``. The
       appended bits never depend on the item, so the report is exactly
       :math:`\\varepsilon_\\tau`-LDP (:meth:`privacy`). Only the report is sent.
    2. Why zero bits. Each appended bit is 1 with probability :math:`b_\\tau`, so together they
       measure the unknown mix :math:`q^* = \\sum_\\tau \\rho_\\tau b_\\tau` (the shares
       :math:`\\rho` are not known to the server). For both protocols :math:`a_\\tau` is an affine
       function of :math:`b_\\tau`, :math:`a = \\alpha + \\beta b` (OUE: :math:`\\alpha = 1/2,
       \\beta = 0`; RAPPOR: :math:`\\alpha = 1, \\beta = -1`), so :math:`p^* = \\alpha + \\beta q^*`
       follows. (Hence one-hot encoding: a k-RR report has no part independent of the item.)
    3. Server (``calibration="extra"``, the default and the reading above): with ``E`` the
       number of ones among the ``N m`` appended bits and :math:`C_i` the support counts,

       .. math::

           \\hat q^* = \\frac{E}{N m}, \\qquad
           \\hat p_i = \\frac{C_i/N - \\hat q^*}{\\alpha + (\\beta - 1)\\hat q^*}.

       More appended bits make :math:`\\hat q^*`, hence :math:`\\hat p`, more precise; as
       :math:`m \\to \\infty` the variance falls to that of eq. 3 with the true shares (PBP)
       minus :math:`(1 + (\\beta-1)p_i)^2 \\mathrm{Var}_\\rho(b)/(N\\delta^2)`: the appended bits
       track the *realised* mix of levels, which PBP's fixed shares do not.
       ``calibration="pooled"`` (an improvement, not the reading): :math:`\\hat q^* = (T/N -
       \\alpha)/(L + \\beta)` with ``T`` the ones over *all* ``d + m`` bits and :math:`L = d + m -
       1` (a user's expected number of ones is :math:`\\alpha + (L + \\beta) b_\\tau`). It uses
       the real bits too (it works even without appended bits, like a self-normalisation) and
       has lower variance than both the default and PBP; appended bits then add nothing.
       Either estimate is a ratio (approximately unbiased, bias :math:`O(1/N)`, like AUEM); with
       users drawn i.i.d. the level mix cancels to first order, so no knowledge of
       :math:`\\rho` is needed.
    4. Budget hiding is not formal: the ones among a user's appended bits are
       :math:`\\mathrm{Bin}(m, b_\\tau)`, which reveals her level statistically, the more so the
       larger ``m`` (the leak PLDP-FEBSF points out).

    Variance (delta method, i.i.d. users). Write :math:`\\hat q^* = (S/N - \\alpha_S)/L_S` with
    :math:`S` the calibration count (``E``: :math:`\\alpha_S = 0`, :math:`L_S = m`; ``T``:
    :math:`\\alpha_S = \\alpha`, :math:`L_S = L + \\beta`). Then :math:`\\hat p_i \\approx p_i +
    \\frac1{N\\delta}\\sum_u (r_{ui} - \\kappa_i S_u - \\text{const})` with :math:`\\kappa_i = (1 +
    (\\beta - 1) p_i)/L_S`, :math:`r_{ui}` user ``u``'s bit ``i`` and :math:`S_u` her share of
    ``S``. The level enters :math:`E[r_i - \\kappa_i S \\mid \\tau]` only through a term that
    cancels, and

    .. math::

        \\mathrm{Var}(r_i - \\kappa_i S) = H_i(q^*) - B_i\\,\\mathrm{Var}_\\rho(b),

    with, for ``S = E`` (:math:`\\gamma = 0`, :math:`n_b = m`) and ``S = T`` (:math:`\\gamma = 1`,
    :math:`n_b = L`),

    .. math::

        H_i(q) &= m_i(1-m_i) - 2\\gamma\\kappa_i[p_i a(1-a) + (1-p_i) b(1-b)]
                  + \\kappa_i^2 [\\gamma a(1-a) + n_b\\, b(1-b)], \\\\
        B_i &= (1 + (\\beta-1)p_i)^2 - 2\\gamma\\kappa_i(1 - p_i + \\beta^2 p_i)
               + \\kappa_i^2(n_b + \\gamma\\beta^2),

    :math:`H_i(q)` being the value if every user had :math:`b = q` (:math:`a = \\alpha + \\beta q`,
    :math:`m_i = b + (a - b) p_i`). :math:`\\mathrm{Var}_\\rho(b)`, the spread of the users'
    levels, is not identifiable from the counts (only :math:`q^*` is); it lies in
    :math:`[0, (b_{max} - q^*)(q^* - b_{min})]`. The reported variance takes the midpoint of that
    range and ``info["variance_bounds"]`` holds the variances at its two ends;
    :meth:`expected_variance` gives the exact value for known shares.

    Parameters
    ----------
    levels : array_like of float
        Budget levels, strictly increasing.
    d : int or Domain
        The item domain.
    extra_bits : int, optional
        Number ``m >= 1`` of appended zero bits; default ``d``.
    data : {"rappor", "oue"}
        Bit perturbation (PLDP-FEBSF's experiments use basic RAPPOR for every method).
    calibration : {"extra", "pooled"}
        Which bits estimate :math:`q^*` (step 3).
    """

    #: ``(alpha, beta)`` with ``a = alpha + beta * b`` for every level.
    _AFFINE: ClassVar[dict[str, tuple[float, float]]] = {"oue": (0.5, 0.0), "rappor": (1.0, -1.0)}

    def __init__(
        self,
        levels: Any,
        d: int | Domain,
        extra_bits: int | None = None,
        data: Literal["rappor", "oue"] = "rappor",
        calibration: Literal["extra", "pooled"] = "extra",
    ) -> None:
        super().__init__(levels, d)
        self.data = _check_data(data, ("rappor", "oue"))
        if calibration not in ("extra", "pooled"):
            raise ParameterError(f"calibration must be 'extra' or 'pooled', got {calibration!r}")
        self.calibration = calibration
        self.extra_bits = self.d if extra_bits is None else check_int(extra_bits, "extra_bits", 1)
        width = self.d + self.extra_bits
        self.mechanisms = tuple(_make(self.data, e, Domain.range(width)) for e in self.levels)
        self.alpha, self.beta = self._AFFINE[self.data]
        a = np.array([m.a[0] for m in self.mechanisms])  # type: ignore[attr-defined]
        b = np.array([m.b[0] for m in self.mechanisms])  # type: ignore[attr-defined]
        if not np.array_equal(a, self.alpha + self.beta * b):  # pragma: no cover - exact on any coin grid
            raise AssertionError("the bit probabilities are not affine in b")
        self.b_levels = b
        length = width - 1  # L = d + m - 1
        if calibration == "extra":  # S = E: E[S/N | tau] = m b_tau
            self._gamma, self._n_b, self._alpha_s, self._length_s = (
                0.0,
                float(self.extra_bits),
                0.0,
                float(self.extra_bits),
            )
        else:  # S = T: E[S/N | tau] = alpha + (L + beta) b_tau
            self._gamma, self._n_b, self._alpha_s, self._length_s = 1.0, float(length), self.alpha, length + self.beta

    def __repr__(self) -> str:
        return (
            f"PPDA(levels={self.levels.tolist()}, d={self.d}, extra_bits={self.extra_bits}, "
            f"data={self.data!r}, calibration={self.calibration!r})"
        )

    @property
    def nbytes_per_report(self) -> int:
        """Bytes per bit-packed report, ``ceil((d + m) / 8)``."""
        return (self.d + self.extra_bits + 7) // 8

    def perturb(self, items: Any, levels: Any, rng: np.random.Generator) -> np.ndarray:
        """Each user perturbs her padded one-hot vector at her level; reports in user order.

        Returns
        -------
        ndarray of uint8, shape (n, ceil((d + m) / 8))
            Bit-packed reports (bits ``0..d-1``: the items; ``d..d+m-1``: the appended bits).
        """
        x, lv = self._check_users(items, levels)
        out = np.empty((x.size, self.nbytes_per_report), dtype=np.uint8)
        for i, mech in enumerate(self.mechanisms):
            sel = np.flatnonzero(lv == i)
            if sel.size:
                out[sel] = mech.perturb(x[sel], rng)
        return out

    def tally(self, reports: Any) -> Tally:
        """Per-bit counts of the ``d + m`` bits (a unary :class:`~pldp.tally.Tally`)."""
        return self.mechanisms[0].tally(reports)

    def simulate(self, cells: Any, rng: np.random.Generator) -> Tally:
        """Exact count-level simulation: per level, binomial counts of the ``d + m`` bits."""
        c = self._check_cells(cells)
        pad = np.zeros(self.extra_bits, dtype=np.int64)
        total = None
        for mech, row in zip(self.mechanisms, c, strict=True):
            tal = mech.simulate(np.concatenate([row, pad]), rng)
            total = tal if total is None else total.merge(tal)
        return total  # type: ignore[return-value]

    def _variance(self, f: np.ndarray, q: float, n: int, spread: float) -> np.ndarray:
        """Delta-method variance (class docstring) at mixture mean ``q`` and level spread ``Var(b)``."""
        alpha, beta = self.alpha, self.beta
        gamma, n_b = self._gamma, self._n_b
        a, b = alpha + beta * q, q
        gap = a - b
        fc = np.clip(f, 0.0, 1.0)
        m = b + gap * fc
        lead = 1.0 + (beta - 1.0) * fc
        kappa = lead / self._length_s
        homogeneous = (
            m * (1.0 - m)
            - 2.0 * gamma * kappa * (fc * a * (1.0 - a) + (1.0 - fc) * b * (1.0 - b))
            + kappa**2 * (gamma * a * (1.0 - a) + n_b * b * (1.0 - b))
        )
        coef = lead**2 - 2.0 * gamma * kappa * (1.0 - fc + beta**2 * fc) + kappa**2 * (n_b + gamma * beta**2)
        return np.maximum(homogeneous - coef * spread, 0.0) / (n * gap**2)

    def spread_range(self, q: float) -> tuple[float, float]:
        """Range of :math:`\\mathrm{Var}_\\rho(b)` over shares with mixture mean ``q``.

        ``(0, (b_max - q)(q - b_min))``: the largest spread puts all users on the two extreme levels.
        """
        lo, hi = float(self.b_levels.min()), float(self.b_levels.max())
        return 0.0, max((hi - q) * (q - lo), 0.0)

    def expected_variance(self, p: Any, rho: Any, n: int) -> np.ndarray:
        """Delta-method variance of the ``"unbiased"`` estimate for true ``p`` and level shares ``rho``."""
        p = as_frequencies(p, self.d)
        rho = as_frequencies(rho, self.t, "rho")
        q = float(rho @ self.b_levels)
        spread = float(rho @ self.b_levels**2) - q**2
        return self._variance(p, q, check_int(n, "n", 1), max(spread, 0.0))

    def estimate(self, tally: Tally, method: str = "unbiased", **options: Any) -> Estimate:
        """Estimate the item distribution (class docstring, step 3).

        * ``"unbiased"``: :math:`\\hat p` of step 3 (approximately unbiased; entries may be
          negative; they sum to one only approximately).
        * ``"norm_sub"``: its projection onto the simplex.
        * ``"mle"``: maximum of the count-based likelihood (independent binomial bits, as
          :func:`pldp.estimation.mle.mle_unary`) over ``p`` and :math:`q^* \\in [\\min_\\tau b_\\tau,
          \\max_\\tau b_\\tau]`, profiling ``q`` with a bounded scalar search (it uses every bit,
          whatever the ``calibration``).

        The variance is the delta-method variance of the class docstring at the estimate, with
        the midpoint of the possible level spread.
        ``options`` are accepted and ignored. ``info`` holds ``q_star`` and ``p_star``.
        """
        if not isinstance(tally, Tally) or tally.kind != "unary" or tally.d != self.d + self.extra_bits:
            raise EstimationError(f"the tally does not come from {self!r}")
        if tally.n == 0:
            raise EstimationError("the tally holds no reports")
        if method not in METHODS:
            raise EstimationError(f"unknown method {method!r}; choose one of {METHODS}")
        n, d = tally.n, self.d
        counts = tally.counts.astype(float)
        c = counts[:d]
        alpha, beta = self.alpha, self.beta
        calib = counts[d:].sum() if self.calibration == "extra" else counts.sum()
        q = (calib / n - self._alpha_s) / self._length_s
        gap = alpha + (beta - 1.0) * q
        if not gap > 0:
            raise EstimationError(f"the estimated mixture gives p* - q* = {gap:.3g} <= 0 (too few reports)")
        freq = (c / n - q) / gap
        iterations = 0
        if method == "norm_sub":
            freq, iterations = norm_sub(freq)
        elif method == "mle":
            freq, q, iterations = self._mle(c, float(counts[d:].sum()), n)
        lo, hi = self.spread_range(q)
        var = self._variance(freq, q, n, 0.5 * (lo + hi))
        ends = np.stack([self._variance(freq, q, n, lo), self._variance(freq, q, n, hi)])
        info = {
            "protocol": "PPDA",
            "q_star": q,
            "p_star": alpha + beta * q,
            "extra_bits": self.extra_bits,
            "calibration": self.calibration,
            "variance_bounds": (ends.min(axis=0), ends.max(axis=0)),
        }
        return Estimate(np.asarray(freq, dtype=float), var, n, method, self.domain, iterations, True, info)

    def _mle(self, c: np.ndarray, extra: float, n: int) -> tuple[np.ndarray, float, int]:
        """Profile likelihood over ``q``; the inner maximum over ``p`` by :func:`mle_unary`."""
        d, m = self.d, self.extra_bits
        steps = 0

        def fit(q: float) -> tuple[np.ndarray, float]:
            nonlocal steps
            a = np.full(d, self.alpha + self.beta * q)
            b = np.full(d, q)
            p, k = mle_unary(c, n, a, b)
            steps += k
            ll = log_likelihood_unary(c, n, a, b, p) + extra * math.log(q) + (m * n - extra) * math.log1p(-q)
            return p, ll

        lo, hi = float(self.b_levels.min()), float(self.b_levels.max())
        if hi - lo <= 1e-15:
            q = lo
        else:
            res = minimize_scalar(lambda z: -fit(z)[1], bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
            q = float(res.x)
        p, _ = fit(q)
        return p, q, steps
