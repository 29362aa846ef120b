"""Unary memoized chains: L-OUE, L-OSUE, L-SUE (basic RAPPOR's PRR + IRR), L-SOUE, and the personalized L-IDUE.

The permanent response (PRR) is a unary encoding :math:`(a_1, b_1)` at budgets
:math:`\\varepsilon_\\infty` (OUE, SUE = basic RAPPOR, IDUE); the instantaneous response (IRR) keeps a
set bit ``k`` w.p. :math:`a_{2,k}` and raises a clear one w.p. :math:`b_{2,k}`. One report's bits
are independent, bit ``k`` set w.p. :math:`p^*_k = a_{1,k} a_{2,k} + (1 - a_{1,k}) b_{2,k}` for
item ``k`` and :math:`q^*_k = b_{1,k} a_{2,k} + (1 - b_{1,k}) b_{2,k}` for another, and the claim of
one report is the unary one on :math:`(p^*, q^*)`: :math:`p^*_i (1 - q^*_j) / (q^*_i (1 - p^*_j))
\\le e^{c(i, j)}` (Gu et al. eq. 5 with the pair budget of the notion).

* The uniform chains of Arcolezi, Couchot, Bouna, Xiao (2022): PRR OUE or SUE at
  :math:`\\varepsilon_\\infty`, IRR of the OUE or the SUE shape meeting :math:`\\varepsilon_1` with
  equality (:func:`~pldp.mechanisms.longitudinal.formulas.ue_irr`). L-OSUE's one report is OUE at
  :math:`\\varepsilon_1`, the least variance any unary report at :math:`\\varepsilon_1` has: their
  optimal IRR.
* L-IDUE (personalized): PRR IDUE at the budgets :math:`\\varepsilon_\\infty`; the IRR *garbles* it
  into IDUE at the budgets :math:`\\varepsilon_1` (the same model and pair rule), item by item
  (:func:`~pldp.mechanisms.longitudinal.formulas.garbling`). Write :math:`\\alpha = \\ln(a/b)`,
  :math:`\\beta = \\ln((1-b)/(1-a))`: a target :math:`(a^*, b^*)` is reachable from the PRR's bit
  exactly when :math:`\\alpha^* \\le \\alpha_1` and :math:`\\beta^* \\le \\beta_1`; where it is not, the
  target is clipped to :math:`(\\min(\\alpha^*, \\alpha_1), \\min(\\beta^*, \\beta_1))`, which only
  lowers every pair's :math:`\\alpha_i + \\beta_j` and so keeps the claim. Where every target is
  reachable, one report *is* IDUE at :math:`\\varepsilon_1`: the chain costs a single report nothing
  against the one-shot optimum of Gu et al.'s model. Where it is not (``LIDUE.reached`` says which
  items), the clipped bit is less informative than IDUE's at :math:`\\varepsilon_1`; how much
  variance that costs is ``pldp.theory.item_variance`` of the chain against that of
  ``IDUE(one)`` (no optimality is claimed there).

On the grid. The IRR is solved from the PRR as it runs (its rounded ``a``, ``b``), rounded towards
privacy on its own coin grid (``a2`` down, ``b2`` up: a garbling of the exact IRR, so no claim can
grow), and every pair of item groups of the chained channel is decided exactly over
:math:`2^{64}`; a failing pair (float error of a tight solution) moves every ``a2`` down and ``b2`` up
one step until all hold.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Self

import numpy as np

from pldp._validation import check_epsilon
from pldp.budgets import ItemBudgets
from pldp.channel.memo import CHAIN_GRID, MemoNode, UnaryIRR
from pldp.channel.sampling import GRID_BITS, irr_bits, unary_bits
from pldp.channel.unary import pair_rows
from pldp.domain import Domain
from pldp.errors import BudgetError, ParameterError
from pldp.mechanisms.idue_solver.solution import IDUESolution
from pldp.mechanisms.longitudinal.base import Longitudinal
from pldp.mechanisms.longitudinal.formulas import garbling, ue_irr
from pldp.mechanisms.longitudinal.memo import Memo
from pldp.mechanisms.reports import UnaryReports, check_packed
from pldp.mechanisms.unary import IDUE, OUE, RAPPOR, UnaryEncoding, coin_width
from pldp.params import budgets_of, domain_of, epsilons_of
from pldp.privacy import PairPrivacyReport, pair_budgets
from pldp.registry import oracle_from_params, register

__all__ = ["LIDUE", "LOSUE", "LOUE", "LSOUE", "LSUE", "LongitudinalUnary"]

_NOTIONS = {"min": "MinID-LDP", "avg": "AvgID-LDP", "ldp": "LDP"}


def _irr_thresholds(
    prr: UnaryEncoding, a2: np.ndarray, b2: np.ndarray, one: tuple[float, ...], notion: str, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """The IRR's integer thresholds on the ``2**-width`` grid, rounded towards privacy and checked
    exactly against the one-report claim (module docstring)."""
    top = (1 << width) - 1
    a_thr = np.clip(np.floor(a2 * (1 << width)), 1, top).astype(np.int64)
    b_thr = np.clip(np.ceil(b2 * (1 << width)), 1, top).astype(np.int64)
    for _ in range(64):
        if np.any(b_thr >= a_thr):
            raise BudgetError(f"the instantaneous response's a and b are too close for the 2^-{width} grid")
        irr = UnaryIRR(*(tuple(int(v) << (GRID_BITS - width) for v in t) for t in (a_thr, b_thr)))
        p, q = irr.chained(prr.sampler())
        if all(r.holds for r in pair_rows(p, q, one, notion, CHAIN_GRID, "one report")):
            return a_thr, b_thr
        a_thr, b_thr = np.maximum(a_thr - 1, 1), np.minimum(b_thr + 1, top)
    raise BudgetError("could not round the instantaneous response onto its grid within eps_1")  # pragma: no cover


@register
class LongitudinalUnary(Longitudinal, UnaryReports):
    """A unary memoized chain: the unary encoding ``permanent`` (:math:`\\varepsilon_\\infty`) and the IRR
    ``(a2, b2)`` (module docstring), claiming ``one`` (:math:`\\varepsilon_1`) for one report.

    Parameters
    ----------
    permanent : UnaryEncoding
        The permanent randomized response.
    a2, b2 : array_like, shape (d,) or scalars
        The IRR: keep a set bit w.p. ``a2``, raise a clear one w.p. ``b2`` (``0 <= b2 < a2 <= 1``);
        rounded towards privacy on the coin grid, strictly inside (0, 1).
    one : ItemBudgets
        The one-report budget of each item (finite), at most its permanent budget.
    pair_rule : {"ldp", "min", "avg"}
        The one-report notion: LDP at the smallest budget, MinID-LDP or AvgID-LDP.
    coin_bits : {16, 32}, optional
        The IRR's coin grid (default: :func:`~pldp.mechanisms.unary.coin_width`).

    Raises
    ------
    BudgetError
        The IRR does not meet ``one`` on the chained channel (checked exactly).
    """

    _name = "LongitudinalUnary"
    _prr: UnaryEncoding

    def __init__(
        self,
        permanent: UnaryEncoding,
        a2: Any,
        b2: Any,
        one: ItemBudgets,
        pair_rule: str = "ldp",
        coin_bits: int | None = None,
    ) -> None:
        if not isinstance(permanent, UnaryEncoding):
            raise ParameterError(f"the permanent response must be a unary encoding, got {type(permanent).__name__}")
        if pair_rule not in _NOTIONS:
            raise ParameterError(f"pair_rule must be one of {sorted(_NOTIONS)}, got {pair_rule!r}")
        self._prr = permanent
        self._budgets = self._check_budgets(one, all_sensitive=True)
        self._check_one()
        self._pair_rule = pair_rule
        a = np.broadcast_to(np.asarray(a2, dtype=float), (self.d,))
        b = np.broadcast_to(np.asarray(b2, dtype=float), (self.d,))
        if not np.all((0 <= b) & (b < a) & (a <= 1)):
            raise ParameterError("the instantaneous response needs 0 <= b2 < a2 <= 1 for every bit")
        width = coin_width(a, b) if coin_bits is None else coin_bits
        if width not in (16, 32):
            raise ParameterError(f"coin_bits must be 16 or 32, got {coin_bits!r}")
        eps = tuple(float(e) for e in one.epsilons)
        self._a2_thr, self._b2_thr = _irr_thresholds(permanent, a, b, eps, self.notion, width)
        self._irr_bits = width
        self._irr = UnaryIRR(*(tuple(int(v) << (GRID_BITS - width) for v in t) for t in (self._a2_thr, self._b2_thr)))
        p, q = self._irr.chained(permanent.sampler())
        self._chain = (p, q)
        self._p_star = np.array([float(v) for v in p]) / float(CHAIN_GRID)
        self._q_star = np.array([float(v) for v in q]) / float(CHAIN_GRID)
        for arr in (self._p_star, self._q_star):
            arr.setflags(write=False)
        coin = np.uint16 if width == 16 else np.uint32
        self._irr_coin = coin
        self._irr_arrays = self._a2_thr.astype(coin), self._b2_thr.astype(coin)
        #: With 16-bit coins in both stages every chained probability is a multiple of 2**-32: a fresh
        #: report then takes one 32-bit coin per bit against these thresholds (the same law), else None.
        low = (1 << GRID_BITS) - 1
        self._chain_thresholds = (
            (np.array([v >> GRID_BITS for v in p], np.uint32), np.array([v >> GRID_BITS for v in q], np.uint32))
            if all(v & low == 0 for v in (*p, *q))
            else None
        )

    # ------------------------------------------------------------------ parameters
    @property
    def notion(self) -> str:
        return _NOTIONS[self._pair_rule]

    @property
    def pair_rule(self) -> str:
        """The one-report pair rule: ``"ldp"``, ``"min"`` (MinID-LDP) or ``"avg"`` (AvgID-LDP)."""
        return self._pair_rule

    @property
    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """:math:`(p^*, q^*)` of one report (module docstring)."""
        return self._p_star, self._q_star

    @property
    def a(self) -> np.ndarray:
        """:math:`p^*`: a report's bit ``k`` is set w.p. ``a[k]`` for item ``k`` (as a unary encoding's ``a``)."""
        return self._p_star

    @property
    def b(self) -> np.ndarray:
        """:math:`q^*`: a report's bit ``k`` is set w.p. ``b[k]`` for another item."""
        return self._q_star

    @property
    def instantaneous_probabilities(self) -> tuple[np.ndarray, np.ndarray]:
        """``(a2, b2)`` as run: keep a set bit, raise a clear one."""
        scale = float(1 << self._irr_bits)
        return self._a2_thr / scale, self._b2_thr / scale

    def channel(self) -> np.ndarray:
        """Per-bit channel of one report: ``Q[x, k] = Pr(bit k set | x)``."""
        Q = np.tile(self._q_star, (self.d, 1))
        Q[np.diag_indices(self.d)] = self._p_star
        return Q

    def params(self) -> dict[str, Any]:
        """The one-report budgets and pair rule, the permanent mechanism's parameters and the IRR's
        coin grid and thresholds."""
        return {
            **self._budget_params(),
            "pair_rule": self._pair_rule,
            "permanent": self._prr.params(),
            "coin_bits": self._irr_bits,
            "a_threshold": self._a2_thr,
            "b_threshold": self._b2_thr,
        }

    @classmethod
    def _irr_of(cls, params: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, int]:
        width = int(params["coin_bits"])
        scale = float(1 << width)
        return np.asarray(params["a_threshold"], float) / scale, np.asarray(params["b_threshold"], float) / scale, width

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The chain of :meth:`params`: the permanent mechanism rebuilt (and checked), the stated IRR."""
        a2, b2, width = cls._irr_of(params)
        prr = oracle_from_params(params["permanent"])
        return cls(prr, a2, b2, budgets_of(params), params["pair_rule"], width)  # type: ignore[arg-type]

    def _build_node(self) -> MemoNode:
        eps = tuple(float(e) for e in self._budgets.epsilons)
        return MemoNode(self.d, self._prr.sampler(), self._irr, self.notion, eps)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(permanent={self._prr!r}, one={self._budgets!r}, notion={self.notion})"

    # ---------------------------------------------------------------------- client
    #: Most coins per block: the transient buffers stay near a MiB.
    _BLOCK_COINS = 1 << 18

    def _coins(self, rng: np.random.Generator, n: int, dtype: type) -> np.ndarray:
        per_word = 64 // (8 * np.dtype(dtype).itemsize)
        return rng.bit_generator.random_raw(-(-n // per_word)).view(dtype)[:n]

    def _coin_rows(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``(n, d)`` uniform 32-bit coins."""
        return self._coins(rng, n * self.d, np.uint32).reshape(n, self.d)

    def _run(self, rng: np.random.Generator, n: int, stage: Any) -> np.ndarray:
        out = np.empty((n, self.nbytes_per_report), dtype=np.uint8)
        block = max(64, self._BLOCK_COINS // self.d)
        for start in range(0, n, block):
            stop = min(n, start + block)
            out[start:stop] = np.packbits(stage(start, stop), axis=1)
        return out

    def _prr_bits(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        a, b = self._prr.thresholds
        coins = self._coins(rng, x.size * self.d, a.dtype.type).reshape(x.size, self.d)
        bits = np.less(coins, b)
        rows = np.arange(x.size)
        bits[rows, x] = coins[rows, x] < a[x]
        return bits

    def _irr_bits_of(self, bits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        a2, b2 = self._irr_arrays
        return irr_bits(bits, self._coins(rng, bits.size, self._irr_coin).reshape(bits.shape), a2, b2)

    def _fresh(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self._chain_thresholds is not None:
            p, q = self._chain_thresholds
            return self._run(rng, x.size, lambda i, j: unary_bits(x[i:j], self._coin_rows(rng, j - i), p, q))
        return self._run(rng, x.size, lambda i, j: self._irr_bits_of(self._prr_bits(x[i:j], rng), rng))

    def permanent(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """The permanent responses of items ``x``: bit-packed rows (the permanent mechanism's law)."""
        arr = self._indices(x)
        return self._run(rng, arr.size, lambda i, j: self._prr_bits(arr[i:j], rng))

    def instantaneous(self, prr: Any, rng: np.random.Generator) -> np.ndarray:
        """One report of each permanent response (a bit-packed row): the IRR, one coin per bit."""
        rows = check_packed(prr, self.d)
        return self._run(
            rng,
            rows.shape[0],
            lambda i, j: self._irr_bits_of(np.unpackbits(rows[i:j], axis=1, count=self.d).astype(bool), rng),
        )

    def _empty_memo(self) -> Memo:
        return Memo.empty(self.fingerprint, self.d, (self.nbytes_per_report,), np.uint8)

    # --------------------------------------------------------------------- privacy
    def _one_report_check(self) -> PairPrivacyReport:
        p, q = self._chain
        eps = self._budgets.epsilons
        keys = sorted(set(zip(p, q, eps.tolist(), strict=True)))
        index = {k: g for g, k in enumerate(keys)}
        inverse = np.array([index[k] for k in zip(p, q, eps.tolist(), strict=True)])
        G = CHAIN_GRID
        realised = np.array(
            [[math.log(pi * (G - qj)) - math.log(qi * (G - pj)) for pj, qj, _ in keys] for pi, qi, _ in keys]
        )
        ge = np.array([k[2] for k in keys])
        claimed = (
            np.full(realised.shape, float(eps.min())) if self._pair_rule == "ldp" else pair_budgets(ge, self._pair_rule)
        )
        groups = [np.flatnonzero(inverse == g) for g in range(len(keys))]
        return PairPrivacyReport(self.notion, ge, groups, claimed, realised)


class _UniformUnary(LongitudinalUnary):
    """A chain of Arcolezi et al.: PRR of one shape at ``eps_perm``, IRR of one shape meeting ``eps_1``."""

    _shapes: tuple[str, str] = ("oue", "oue")

    def __init__(self, eps_perm: float, eps_1: float, d: int | Domain) -> None:
        perm, one = check_epsilon(eps_perm), check_epsilon(eps_1)
        if not one < perm:
            raise BudgetError(
                f"{self._name} needs eps_1 < eps_perm (one report, then any number of reports of one value); "
                f"got {one!r} >= {perm!r}"
            )
        prr: UnaryEncoding = OUE(perm, d) if self._shapes[0] == "oue" else RAPPOR(perm, d)
        a2, b2 = ue_irr(float(prr.a[0]), float(prr.b[0]), one, self._shapes[1])
        self.eps_perm, self.eps_1 = perm, one
        super().__init__(prr, a2, b2, ItemBudgets.uniform(one, prr.domain), "ldp")

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        perm = float(epsilons_of(params["permanent"]["epsilons"])[0])
        return cls(perm, float(epsilons_of(params["epsilons"])[0]), domain_of(params["labels"]))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(eps_perm={self.eps_perm:g}, eps_1={self.eps_1:g}, d={self.d})"


@register
class LOUE(_UniformUnary):
    """Longitudinal OUE (Arcolezi et al. 2022): OUE at ``eps_perm`` memoized, then an IRR of the OUE shape
    (keep a set bit w.p. 1/2) whose chain meets ``eps_1``. As multi-freq-ldpy's ``L_OUE_Client``.

    Examples
    --------
    >>> rep = LOUE(4.0, 1.0, 10).privacy()
    >>> rep.holds, round(rep.ldp_epsilon, 3), round(rep.permanent_epsilon, 3)  # 3.9998: OUE's coins on the grid
    (True, 1.0, 4.0)
    """

    _name = "LOUE"
    _shapes = ("oue", "oue")


@register
class LOSUE(_UniformUnary):
    """Longitudinal OUE-SUE (Arcolezi et al.'s optimised chain): OUE at ``eps_perm`` memoized, then a
    symmetric IRR; one report is OUE at ``eps_1`` exactly (the least variance of a unary report)."""

    _name = "LOSUE"
    _shapes = ("oue", "sue")


@register
class LSUE(_UniformUnary):
    """Longitudinal SUE, basic RAPPOR's memoization (Erlingsson et al. 2014): SUE at ``eps_perm``
    memoized, then a symmetric IRR meeting ``eps_1``."""

    _name = "LSUE"
    _shapes = ("sue", "sue")


@register
class LSOUE(_UniformUnary):
    """Longitudinal SUE-OUE (Arcolezi et al. 2022): SUE at ``eps_perm`` memoized, then an IRR of the OUE shape."""

    _name = "LSOUE"
    _shapes = ("sue", "oue")


def _log_ratios(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.log(a) - np.log(b), np.log1p(-b) - np.log1p(-a)


def reachable_target(prr: UnaryEncoding, target: UnaryEncoding) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each item's target bit probabilities clipped into what an IRR reaches from the PRR's, and
    whether the target was reachable as it is (module docstring)."""
    al1, be1 = _log_ratios(prr.a, prr.b)
    al, be = _log_ratios(target.a, target.b)
    ok = (al <= al1) & (be <= be1)
    al, be = np.minimum(al, al1), np.minimum(be, be1)
    b = np.expm1(be) / np.expm1(al + be)
    return np.exp(al) * b, b, ok


@register
class LIDUE(LongitudinalUnary):
    """Item-personalized longitudinal unary encoding: IDUE at the budgets ``perm`` memoized, then the IRR
    that garbles it into IDUE at the budgets ``one`` (module docstring), MinID-LDP or AvgID-LDP.

    Parameters
    ----------
    perm, one : ItemBudgets
        :math:`\\varepsilon_\\infty` and :math:`\\varepsilon_1` of each item (finite; ``one <= perm``).
    model : {"opt0", "opt1", "opt2"}
        The IDUE model of both the PRR and the one-report target (Gu et al.; :class:`pldp.IDUE`).
    pair_rule : {"min", "avg"}
    **solver_options
        Passed to both IDUE solves.

    Attributes
    ----------
    reached : ndarray of bool or None
        Per item, whether one report's bits are exactly IDUE at ``one``'s (else the target was clipped
        into what the PRR reaches); None when rebuilt from parameters.

    Examples
    --------
    >>> import pldp
    >>> perm = pldp.ItemBudgets.from_array([1.0, 1.0, 2.0, 4.0])
    >>> m = LIDUE(perm, pldp.ItemBudgets.from_array([0.5, 0.5, 1.0, 2.0]))
    >>> m.privacy().holds, bool(m.reached.all())
    (True, True)
    """

    _name = "LIDUE"
    reached: np.ndarray | None
    target: IDUESolution | None

    def __init__(
        self,
        perm: ItemBudgets,
        one: ItemBudgets,
        model: Literal["opt0", "opt1", "opt2"] = "opt0",
        pair_rule: Literal["min", "avg"] = "min",
        **solver_options: Any,
    ) -> None:
        prr = IDUE(perm, model, pair_rule, **solver_options)
        target = IDUE(one, model, pair_rule, **solver_options)
        a, b, ok = reachable_target(prr, target)
        irr = [garbling(*v) for v in zip(prr.a, prr.b, a, b, strict=True)]
        self.model, self.reached, self.target = model, ok, target.solution
        super().__init__(prr, [v[0] for v in irr], [v[1] for v in irr], one, pair_rule)

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The L-IDUE of :meth:`params`: its IDUE rebuilt from thresholds and the stated IRR (never solved again)."""
        a2, b2, width = cls._irr_of(params)
        mech = cls.__new__(cls)
        prr = oracle_from_params(params["permanent"])
        LongitudinalUnary.__init__(mech, prr, a2, b2, budgets_of(params), params["pair_rule"], width)  # type: ignore[arg-type]
        mech.model, mech.reached, mech.target = params["model"], None, None
        return mech

    def params(self) -> dict[str, Any]:
        return {**super().params(), "model": self.model}
