"""The PLDP-FEBSF protocol: users pick a hidden budget level and report it perturbed too.

Every user holds an item and chooses one of ``t`` public budget levels
:math:`\\varepsilon_1 < \\dots < \\varepsilon_t` (her choice, independent of her item). Her
client (Sec. 5.1, five steps) perturbs the item with a pure frequency oracle at her level's
budget (``oracle="krr" | "rappor" | "oue"``; RAPPOR is basic one-time RAPPOR with
:math:`\\varepsilon/2` per bit) and perturbs her level index with a pure oracle over the ``t``
levels at budget :math:`\\varepsilon_p` (k-RR by default). She sends both reports; the item report
is :math:`\\varepsilon_\\tau`-LDP and the level report :math:`\\varepsilon_p`-LDP. The paper claims
that this protects her level at :math:`\\varepsilon_p`; it does not (ERRATA FEBSF-6): the item
report is drawn at her true level, so the level is protected only as well as the whole report
protects it, which :meth:`FEBSF.privacy` reports (:func:`pldp.privacy.level_protection`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Self

import numpy as np

from pldp._validation import check_epsilon
from pldp.channel.direct import DirectNode
from pldp.domain import Domain
from pldp.errors import EstimationError, ParameterError, SpecError, TallyError
from pldp.estimation.consistency import norm_sub
from pldp.estimation.detect import DEFAULT_ALPHA, UnaryLaws
from pldp.estimation.result import Estimate
from pldp.estimation.robust import DEFAULT_CAP, DEFAULT_K
from pldp.estimation.spread import DEFAULT_BETA
from pldp.mechanisms.direct import KRR, DirectEncoding
from pldp.mechanisms.unary import UnaryEncoding
from pldp.methods import STANDARD_METHODS
from pldp.privacy import FEBSFPrivacy, PrivacyCheck, level_protection
from pldp.protocols.febsf.auem import auem_trouble
from pldp.protocols.febsf.detect import detect, laws
from pldp.protocols.febsf.em import em
from pldp.protocols.febsf.huber import huber
from pldp.protocols.febsf.robust import robust
from pldp.protocols.febsf.tally import FEBSFReports, FEBSFTally, pattern_tally
from pldp.protocols.leveled import (
    HIDDEN_REFUSAL,
    SMALL_ORACLES,
    LeveledProtocol,
    cell_users,
    check_oracle,
    make_oracle,
    perturb_by_level,
)
from pldp.registry import oracle_from_params, register
from pldp.tally import BaseTally

__all__ = ["FEBSF"]


@register
class FEBSF(LeveledProtocol):
    """The PLDP-FEBSF protocol (Wu, Zhu, Zhang, Xie): hidden, perturbed budget levels.

    Estimators (:meth:`estimate`): ``"unbiased"`` is AUEM (:func:`~pldp.protocols.febsf.auem`,
    eq. 4-5 with a delta-method variance), ``"norm_sub"`` its projection onto the simplex,
    ``"mle"`` the joint EM (:func:`~pldp.protocols.febsf.em`, ERRATA FEBSF-4) and ``"paper"`` the
    EM of Section 6 as printed (kept only to reproduce the paper).

    Parameters
    ----------
    levels : array_like of float
        Public budget levels, strictly increasing.
    eps_p : float
        Budget protecting the level report.
    d : int or Domain
        The item domain.
    oracle : {"krr", "rappor", "oue"}
        Pure frequency oracle of the item report.
    level_mechanism : DirectEncoding, optional
        Pure direct-encoding mechanism over the ``t`` level indices; default ``KRR(eps_p, t)``.
    """

    methods: ClassVar[tuple[str, ...]] = (*STANDARD_METHODS, "paper", "robust", "huber", "detect")
    tally_type: ClassVar[type[BaseTally]] = FEBSFTally

    def __init__(
        self,
        levels: Any,
        eps_p: float,
        d: int | Domain,
        oracle: Literal["krr", "rappor", "oue"] = "krr",
        level_mechanism: DirectEncoding | None = None,
    ) -> None:
        super().__init__(levels, d)
        self.eps_p = check_epsilon(eps_p, "eps_p")
        self.oracle = check_oracle(oracle, SMALL_ORACLES, HIDDEN_REFUSAL)
        self.mechanisms = tuple(make_oracle(self.oracle, e, self.domain) for e in self.levels)
        t = self.t
        if level_mechanism is None:
            level_mechanism = KRR(self.eps_p, t) if t >= 2 else None
        elif not isinstance(level_mechanism, DirectEncoding) or level_mechanism.d != t:
            raise ParameterError(f"level_mechanism must be a direct-encoding mechanism over the {t} levels")
        self.level_mechanism = level_mechanism
        supports = [m.support for m in self.mechanisms]
        #: Per level: probability that the item report supports the user's own item.
        self.p_star = np.array([s[0][0] for s in supports])
        #: Per level: probability that the item report supports another given item.
        self.q_star = np.array([s[1][0] for s in supports])
        #: ``pi[i, l] = Pr(reported level l | true level i)``.
        self.pi = level_mechanism.channel() if level_mechanism is not None else np.ones((1, 1))

    @property
    def ones_laws(self) -> UnaryLaws:
        """Unary data: each level's law of a report's number of ones (:mod:`pldp.estimation.detect`)."""
        return laws(self)

    @property
    def kind(self) -> str:
        """The item reports' family: ``"direct"`` (k-RR) or ``"unary"`` (RAPPOR, OUE)."""
        return self.mechanisms[0].family

    def __repr__(self) -> str:
        return f"FEBSF(levels={self.levels.tolist()}, eps_p={self.eps_p:g}, d={self.d}, oracle={self.oracle!r})"

    def params(self) -> dict[str, Any]:
        """Canonical parameters: class, labels, levels, the item oracle, ``eps_p`` and the level mechanism."""
        level = self.level_mechanism.params() if self.level_mechanism is not None else None
        return {**self._base_params(), "oracle": self.oracle, "eps_p": self.eps_p, "level_mechanism": level}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The protocol of :meth:`params`; the level mechanism is rebuilt (and checked) from its own."""
        lm = params["level_mechanism"]
        level_mech = oracle_from_params(lm) if lm is not None else None
        if level_mech is not None and not isinstance(level_mech, DirectEncoding):
            raise SpecError("FEBSF's level mechanism must be a direct encoding")
        levels, dom = cls._params_levels(params)
        return cls(levels, float(params["eps_p"]), dom, params["oracle"], level_mech)

    @property
    def level_report(self) -> str:  # type: ignore[override]
        """``"perturbed"`` by the level mechanism, or ``"clear"`` with a single level (nothing to hide)."""
        return "clear" if self.level_mechanism is None else "perturbed"

    @property
    def level_claim(self) -> float | None:
        """The paper's claim for the level, :math:`\\varepsilon_p` (not what the whole report gives:
        ERRATA FEBSF-6); None with a single level, which has nothing to hide."""
        return None if self.level_mechanism is None else self.eps_p

    def level_sampler(self) -> DirectNode | None:
        return None if self.level_mechanism is None else self.level_mechanism.sampler()

    def reports_from_columns(self, columns: Mapping[str, np.ndarray]) -> tuple[Any, ...]:
        """The item reports (items or bit rows) and the reported levels."""
        return (FEBSFReports(columns[self.sampler().columns()[-1].name], columns["level"]),)

    def report_columns(self, reports: FEBSFReports) -> dict[str, np.ndarray]:
        """The item reports' column and the reported levels."""
        return {self.sampler().columns()[-1].name: reports.data, "level": reports.level}

    @property
    def level_support(self) -> tuple[np.ndarray, np.ndarray]:
        """``(p_p, q_p)``: support probabilities of the level mechanism per level."""
        if self.level_mechanism is None:
            return np.ones(1), np.zeros(1)
        return self.level_mechanism.support

    # ---------------------------------------------------------------------- client
    def perturb(self, items: Any, levels: Any, rng: np.random.Generator) -> FEBSFReports:
        """Run every user's client: perturb the item at her level, and the level at ``eps_p``.

        Vectorised per level (a loop over the ``t`` levels, none over users).
        """
        x, lv = self._check_users(items, levels)
        data = perturb_by_level(self.mechanisms, x, lv, rng)
        reported = self.level_mechanism.perturb(lv, rng) if self.level_mechanism is not None else lv.copy()
        return FEBSFReports(data, reported.astype(np.int64))

    # ---------------------------------------------------------------------- server
    def tally(self, reports: FEBSFReports) -> FEBSFTally:
        """Aggregate reports into sufficient statistics."""
        if not isinstance(reports, FEBSFReports):
            raise TallyError(f"expected FEBSFReports, got {type(reports).__name__}")
        lv = np.asarray(reports.level)
        if lv.ndim != 1 or (lv.size and (lv.min() < 0 or lv.max() >= self.t)):
            raise TallyError(f"reported levels must be a 1-D array in [0, {self.t})")
        if self.kind == "direct":
            y = np.asarray(reports.data)
            if y.shape != lv.shape or (y.size and (y.min() < 0 or y.max() >= self.d)):
                raise TallyError(f"k-RR reports must be {lv.size} item indices in [0, {self.d})")
            table = np.bincount(lv * self.d + y, minlength=self.t * self.d).reshape(self.t, self.d)
            return FEBSFTally("direct", self.t, self.d, table=table, fingerprint=self.fingerprint)
        first = self.mechanisms[0]
        assert isinstance(first, UnaryEncoding)  # the item reports are unary here
        rep = first._check_reports(reports.data)
        if rep.shape[0] != lv.size:
            raise TallyError("one reported level per report is needed")
        return pattern_tally(self.t, self.d, rep, lv, np.ones(lv.size, dtype=np.int64), fingerprint=self.fingerprint)

    def simulate(self, cells: Any, rng: np.random.Generator) -> FEBSFTally:
        """Tally of users with ``cells[level, item]`` true counts.

        k-RR: exact count-level simulation (per true level, the item tally of k-RR, then each
        reported item's users split over reported levels by one multinomial); O(t^2 d).
        Unary: the pattern histogram needs each user's bits, so users are drawn per user
        (vectorised, bit-packed).
        """
        c = self._check_cells(cells)
        if self.kind == "unary":
            return self.tally(self.perturb(*cell_users(c), rng))
        table = np.zeros((self.t, self.d), dtype=np.int64)
        for i, mech in enumerate(self.mechanisms):
            y = mech.simulate(c[i], rng).counts
            table += rng.multinomial(y, self.pi[i]).T  # (d, t) -> (t, d)
        return FEBSFTally("direct", self.t, self.d, table=table, fingerprint=self.fingerprint)

    def privacy(self) -> FEBSFPrivacy:
        """Exact checks of each level's item mechanism and of the level mechanism, and the level's protection.

        A user runs one item mechanism (her level's) and the level mechanism, so her report is
        :math:`(\\varepsilon_\\tau + \\varepsilon_p)`-LDP: the composed check (``holds``,
        ``ldp_epsilon``) covers the item. Her *level* is not protected at :math:`\\varepsilon_p`
        as the paper claims (ERRATA FEBSF-6): the item report is drawn at her true level, so it
        reveals the level too. ``level`` (a :class:`~pldp.privacy.LevelProtection` for uniform
        items and levels; None with one level) holds the level's exact protection by the whole
        report: its worst case and the success of a Bayes guess of the level
        (:func:`~pldp.privacy.level_protection`).

        Examples
        --------
        The paper's levels 0.1, ..., 1.0 with :math:`\\varepsilon_p = 0.3` and OUE over 16 items:
        every report is within its budget, yet the level is protected at 8.83, not 0.3.

        >>> import numpy as np
        >>> rep = FEBSF(np.arange(1, 11) / 10, 0.3, 16, oracle="oue").privacy()
        >>> rep.holds, round(rep["level report"].ldp_epsilon, 6), round(rep.level.worst_case, 2)
        (True, 0.3, 8.83)
        >>> print(rep.summary().splitlines()[1])  # doctest: +NORMALIZE_WHITESPACE
        level: the paper claims eps_p=0.3; the whole report protects it at 8.83 (worst case); a Bayes
        guess from the whole report succeeds w.p. 0.18 against 0.13 from the level report alone and
        0.10 with no report (uniform items and levels)
        """
        parts: dict[str, PrivacyCheck] = {"item report": self._level_privacy()}
        if self.level_mechanism is not None:
            parts["level report"] = self.level_mechanism.privacy()
        level = level_protection(self) if self.level_mechanism is not None else None
        return FEBSFPrivacy("LDP of the item report at each level, and of the level report", parts, "sum", level)

    def estimate(
        self,
        tally: FEBSFTally,
        method: str = "unbiased",
        *,
        tol: float | None = None,
        max_iter: int = 20_000,
        start: tuple[np.ndarray, np.ndarray] | None = None,
        on_cap: Literal["raise", "return"] | None = None,
        beta: float = DEFAULT_BETA,
        cap: float = DEFAULT_CAP,
        k: float = DEFAULT_K,
        alpha: float = DEFAULT_ALPHA,
    ) -> Estimate:
        """Estimate the item distribution.

        * ``"unbiased"``: AUEM (eq. 4-5; approximately unbiased, a ratio estimator; entries may
          be negative), with a delta-method variance (:func:`~pldp.protocols.febsf.auem`).
          **Fallback:** when the level reports make AUEM divide by noise or its estimate leaves
          [0, 1] by more than 4 standard errors (the rule of
          :func:`~pldp.protocols.febsf.auem.auem_trouble`), the ``"robust"`` estimate is returned
          instead, with ``info["fallback"] = "robust"`` and ``info["fallback_reason"]``; a
          minority of reports claiming a small level never makes it raise. Honest tallies fall
          back in at most 0.43 % of the cases in every setting of the docs and the reproduction;
          below the rule an attacker still gains like against an unbiased estimate
          (docs/guide/under-attack.md quotes the worst case measured).
        * ``"norm_sub"``: AUEM (or its fallback) projected onto the simplex (the variance is AUEM's).
        * ``"mle"``: maximum likelihood of ``(p, rho)`` by EM on the joint likelihood of
          (reported level, item report) (:func:`~pldp.protocols.febsf.em`).
        * ``"paper"``: the EM of Section 6 as printed (ERRATA FEBSF-4; no variance).

        * ``"robust"``: the reports grouped by reported level (and, unary, number of ones), each
          group a pure oracle given the level shares, combined with equal influence and projected
          by Norm-Sub with its threshold kept at zero or above; ``info["bound"]`` bounds a share
          ``beta`` of fakes in any split (:func:`~pldp.protocols.febsf.robust.robust`).
        * ``"huber"``: the former ``"robust"``: the reported levels' estimates combined with
          bounded influence; bounded for fakes that all claim one level, beaten by spread claims
          (:func:`~pldp.protocols.febsf.huber.huber`).
        * ``"detect"``: unary reports whose number of ones is unlikely at every level dropped,
          the joint EM run on the rest as truncated data; the level reports tested against the
          level model (:func:`~pldp.protocols.febsf.detect.detect`).

        ``tol``, ``max_iter``, ``start`` and ``on_cap`` are the EM's options (``tol`` by default
        1e-10 for ``"mle"``, ``"paper"`` and ``"detect"``, and
        :data:`~pldp.protocols.febsf.robust.SHARES_TOL` for the level shares of ``"robust"`` and
        ``"huber"``, which set only their groups' channels), ``beta`` the share
        of fakes ``"robust"``'s bound covers, ``cap`` and ``k`` ``"huber"``'s, ``alpha``
        detection's. ``info["estimator"]`` names the estimator; ``"robust"``, ``"huber"`` and
        ``"detect"`` also carry the level reports' test (``info["level_excess"]``).
        """
        self._check_method(method)
        tally = self._check_tally(tally)
        given: dict[str, Any] = {} if tol is None else {"tol": tol}  # else each estimator's own default
        if method in ("unbiased", "norm_sub"):
            a, trouble = auem_trouble(self, tally)
            name = "AUEM"
            if a is None:  # the stated fallback (auem_trouble's rule): the robust combination
                a = robust(self, tally, beta=beta, max_iter=max_iter, **given)
                a = Estimate(
                    a.frequencies,
                    a.variance,
                    a.n,
                    "unbiased",
                    self.domain,
                    a.iterations,
                    True,
                    {**a.info, "fallback": "robust", "fallback_reason": trouble},
                )
                name = "robust (fallback from AUEM)"
            if method == "unbiased":
                return a
            freq, rounds = norm_sub(a.frequencies)
            info = {**a.info, "estimator": f"{name} + Norm-Sub"}
            return Estimate(freq, a.variance, a.n, method, self.domain, rounds, True, info, on_simplex=True)
        if method == "robust":
            return robust(self, tally, beta=beta, max_iter=max_iter, **given)
        if method == "huber":
            return huber(self, tally, cap=cap, k=k, max_iter=max_iter, **given)
        if method == "detect":
            return detect(self, tally, alpha=alpha, max_iter=max_iter, **given)
        variant: Literal["joint", "paper"] = "joint" if method == "mle" else "paper"
        return em(self, tally, variant=variant, max_iter=max_iter, start=start, on_cap=on_cap, **given)

    def _check_tally(self, tally: Any) -> FEBSFTally:
        tally = super()._check_tally(tally)
        if (tally.kind, tally.t, tally.d) != (self.kind, self.t, self.d):
            raise EstimationError(
                f"a {tally.kind} tally of {tally.t} levels over {tally.d} items does not fit {self!r}"
            )
        return tally
