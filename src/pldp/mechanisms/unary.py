"""Unary-encoding mechanisms: basic RAPPOR, OUE and IDUE share one core.

A user holding item ``x`` encodes it as the one-hot vector :math:`v_x \\in \\{0,1\\}^d` and
perturbs every bit independently (Wang et al., USENIX Security 2017; Gu et al., ICDE 2020,
Sec. V-B):

.. math::

    \\Pr[y_k = 1 \\mid v_x[k] = 1] = a_k, \\qquad \\Pr[y_k = 1 \\mid v_x[k] = 0] = b_k.

* basic (one-time) RAPPOR: :math:`a = e^{\\varepsilon/2}/(e^{\\varepsilon/2}+1)`, :math:`b = 1 - a`;
* OUE: :math:`a = 1/2`, :math:`b = 1/(e^\\varepsilon + 1)`;
* IDUE: per privacy level :math:`(a_i, b_i)` from the optimisation models opt0/opt1/opt2 of
  Gu et al. (eq. 8, 10, 11) under MinID-LDP or AvgID-LDP.

For inputs ``v_i`` and ``v_j`` the largest likelihood ratio over all outputs is
:math:`a_i(1-b_j) / (b_i(1-a_j))` (Gu et al. eq. 5), which :meth:`UnaryEncoding.privacy`
checks for every pair of items.

Exact sampling. The bit coins are drawn as unsigned integers of ``w`` bits compared with
integer thresholds, so the probabilities actually implemented are multiples of :math:`2^{-w}`.
The constructor rounds every :math:`a_k` *down* and every :math:`b_k` *up* to that grid; both
roundings can only lower every privacy ratio, and the exposed ``a``, ``b``, the privacy check
and the estimators all use the rounded values, so what is checked is exactly what runs. The
coin width is ``w = 16`` when that moves every :math:`b_k`, :math:`1 - a_k` and gap
:math:`a_k - b_k` by less than 0.1 % (see :func:`coin_width`), which halves the random bits
drawn, and ``w = 32`` otherwise (a change below :math:`2.4 \\times 10^{-10}`).

Reports are bit-packed (``numpy.packbits`` along each row, big-endian bit order): one bit per
item, ``ceil(d / 8)`` bytes per user.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Self

import numpy as np

from pldp._validation import _show, as_indices, check_epsilon, check_index_range, check_int
from pldp.budgets import ItemBudgets
from pldp.channel.sampling import GRID_BITS
from pldp.channel.unary import UnaryNode
from pldp.domain import Domain
from pldp.errors import ParameterError
from pldp.mechanisms.reports import UnaryReports
from pldp.params import budgets_of, domain_of, epsilons_of
from pldp.privacy import PairPrivacyReport, pair_budgets
from pldp.registry import register

if TYPE_CHECKING:
    from pldp.mechanisms.idue_solver import IDUESolution

__all__ = ["IDUE", "OUE", "RAPPOR", "UnaryEncoding"]

#: The notion claimed under each pair rule (``"uldp"``: :class:`pldp.mechanisms.uldp.URAP`).
_NOTIONS = {"min": "MinID-LDP", "avg": "AvgID-LDP", "ldp": "LDP", "uldp": "ULDP"}
#: Grid steps below which the 16-bit coins would move a probability by more than 0.1 %.
_MIN_STEPS_16 = 1000


def coin_width(a: np.ndarray, b: np.ndarray) -> int:
    """Bits per coin: 16 if rounding to the 2^-16 grid changes every ``b``, ``1 - a`` and gap
    ``a - b`` by less than 0.1 %, else 32."""
    steps = 2.0**16 * min(float(np.min(b)), float(np.min(1.0 - a)), float(np.min(a - b)) / 2.0)
    return 16 if steps >= _MIN_STEPS_16 else 32


@register
class UnaryEncoding(UnaryReports):
    """The shared core of RAPPOR, OUE and IDUE: per-item ``a`` (keep a 1), ``b`` (raise a 0).

    Parameters
    ----------
    a, b : array_like, shape (d,)
        Bit probabilities with ``0 < b_k < a_k < 1`` (``b_k = 0`` exactly for a non-sensitive item
        under ``"uldp"``); rounded to the coin grid (``a`` down, ``b`` up; see the module docstring).
    budgets : ItemBudgets
        Budget of each item (all finite, but for ``"uldp"``: ``inf`` marks a non-sensitive item).
    pair_rule : {"min", "avg", "ldp", "uldp"}
        The notion claimed: MinID-LDP, AvgID-LDP, plain LDP with the smallest budget, or ULDP
        (non-sensitive items of budget ``inf`` with ``b = 0``; see :class:`pldp.mechanisms.uldp.URAP`).
    coin_bits : {16, 32}, optional
        The coin grid; by default chosen by :func:`coin_width` (pass it to rebuild a mechanism
        from its stated thresholds exactly).
    """

    family = "unary"
    _name = "UnaryEncoding"
    #: Most coins per block in :meth:`perturb`: bounds the transient buffers (3 bytes per coin)
    #: to under 1 MiB, as fast as 2^20 coins at d = 100 and 1,000 with a quarter of the memory.
    #: Smaller calls use smaller blocks (n d / 256 coins, at least :attr:`_MIN_BLOCK_COINS`), so
    #: that the buffers stay near a tenth of the packed output (n d / 8 bytes).
    _BLOCK_COINS = 1 << 18
    _MIN_BLOCK_COINS = 1 << 14

    def __init__(
        self, a: Any, b: Any, budgets: ItemBudgets, pair_rule: str = "min", coin_bits: int | None = None
    ) -> None:
        if pair_rule not in _NOTIONS:
            raise ParameterError(f"pair_rule must be 'min', 'avg', 'ldp' or 'uldp', got {pair_rule!r}")
        budgets = self._check_budgets(budgets, all_sensitive=pair_rule != "uldp")
        a_arr = np.asarray(a, dtype=float).reshape(-1)
        b_arr = np.asarray(b, dtype=float).reshape(-1)
        if a_arr.shape != (budgets.d,) or b_arr.shape != (budgets.d,):
            raise ParameterError(f"a and b must have length d={budgets.d}, got {a_arr.shape} and {b_arr.shape}")
        # ULDP: b = 0 exactly on the non-sensitive items (their set bit reveals the holder)
        zero = ~np.isfinite(budgets.epsilons) if pair_rule == "uldp" else np.zeros(budgets.d, dtype=bool)
        bad = ~(np.isfinite(a_arr) & np.isfinite(b_arr) & (a_arr < 1) & (b_arr < a_arr))
        bad |= np.where(zero, b_arr != 0, ~(b_arr > 0))
        if bad.any():
            raise ParameterError(
                f"need 0 < b < a < 1 for every item (b = 0 on a non-sensitive one under ULDP); "
                f"bad items: {_show(np.flatnonzero(bad))}"
            )
        if coin_bits not in (None, 16, 32):
            raise ParameterError(f"coin_bits must be 16 or 32, got {coin_bits!r}")
        width = coin_width(a_arr, b_arr) if coin_bits is None else coin_bits
        scale = 2.0**width
        a_q = np.floor(a_arr * scale) / scale
        b_q = np.ceil(b_arr * scale) / scale
        if np.any(b_q >= a_q):
            raise ParameterError(f"a and b are too close to be told apart on the 2^-{width} grid")
        for arr in (a_q, b_q):
            arr.setflags(write=False)
        self._a, self._b = a_q, b_q
        self._coin = np.uint16 if width == 16 else np.uint32
        self._a_thr = (a_q * scale).astype(self._coin)
        self._b_thr = (b_q * scale).astype(self._coin)
        self._budgets = budgets
        self._pair_rule = pair_rule

    # ------------------------------------------------------------------ parameters
    @property
    def a(self) -> np.ndarray:
        """:math:`a_k = \\Pr[y_k = 1 | x = k]` (read-only)."""
        return self._a

    @property
    def b(self) -> np.ndarray:
        """:math:`b_k = \\Pr[y_k = 1 | x \\ne k]` (read-only)."""
        return self._b

    @property
    def support(self) -> tuple[np.ndarray, np.ndarray]:
        return self._a, self._b

    @property
    def pair_rule(self) -> str:
        """The pair budget rule claimed: ``"min"`` (MinID-LDP), ``"avg"`` (AvgID-LDP), ``"ldp"`` or ``"uldp"``."""
        return self._pair_rule

    @property
    def notion(self) -> str:
        """The privacy notion claimed."""
        return _NOTIONS[self._pair_rule]

    def channel(self) -> np.ndarray:
        """Per-bit channel: ``Q[x, k] = Pr(y_k = 1 | x)`` (``a`` on the diagonal, ``b`` off it).

        A unary report is a vector of independent bits, so this ``d x d`` matrix of bit
        probabilities (not a distribution over the :math:`2^d` outputs) is its channel.
        """
        Q = np.tile(self._b, (self.d, 1))
        Q[np.diag_indices(self.d)] = self._a
        return Q

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._budgets!r}, notion={self.notion})"

    @property
    def thresholds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(a_threshold, b_threshold)``: the integer coin thresholds, ``a = a_threshold / 2**coin_bits``."""
        return self._a_thr, self._b_thr

    @property
    def coin_bits(self) -> int:
        """Bits per coin, 16 or 32: ``a`` and ``b`` are multiples of ``2**-coin_bits``."""
        return 8 * np.dtype(self._coin).itemsize

    def params(self) -> dict[str, Any]:
        """Canonical parameters: class, notion, labels, budgets and the exact coin thresholds.

        ``a = a_threshold / 2**coin_bits`` and ``b = b_threshold / 2**coin_bits`` exactly, so the
        integers describe the mechanism that runs without any rounding.
        """
        return {
            **self._budget_params(),
            "pair_rule": self._pair_rule,
            "coin_bits": self.coin_bits,
            "a_threshold": self._a_thr,
            "b_threshold": self._b_thr,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The unary encoding of :meth:`params`: its exact coin thresholds, budgets and pair rule."""
        scale = 2.0 ** int(params["coin_bits"])
        a = np.asarray(params["a_threshold"], dtype=float) / scale
        b = np.asarray(params["b_threshold"], dtype=float) / scale
        return cls(a, b, budgets_of(params), params["pair_rule"], coin_bits=int(params["coin_bits"]))

    def sampler(self) -> UnaryNode:
        """The sampler node: the coin thresholds on the ``2**32`` grid, the notion and every budget."""
        return self._node

    @cached_property
    def _node(self) -> UnaryNode:
        shift = GRID_BITS - self.coin_bits
        a, b = (tuple(int(v) << shift for v in arr) for arr in self.thresholds)
        return UnaryNode(self.d, a, b, self.notion, tuple(float(e) for e in self._budgets.epsilons))

    # ---------------------------------------------------------------------- client
    def _check_indices(self, x: Any) -> np.ndarray:
        arr = as_indices(x, "x")
        check_index_range(arr, self.d, "x")
        return arr

    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """Randomize item indices into bit-packed unary reports.

        Parameters
        ----------
        x : array_like of int, shape (n,)
            Item indices in ``[0, d)``.
        rng : numpy.random.Generator
            Source of randomness (its bit generator supplies the 32-bit coins).

        Returns
        -------
        ndarray of uint8, shape (n, ceil(d / 8))
            Row ``u`` is ``numpy.packbits`` of user ``u``'s bits; see :meth:`unpack`.
        """
        arr = self._check_indices(x)
        n, d = arr.size, self.d
        out = np.empty((n, self.nbytes_per_report), dtype=np.uint8)
        bits_gen = rng.bit_generator
        block_coins = min(self._BLOCK_COINS, max(self._MIN_BLOCK_COINS, n * d // 256))
        block = max(64, block_coins // d)
        for start in range(0, n, block):
            xb = arr[start : start + block]
            m = xb.size
            per_word = 64 // (8 * np.dtype(self._coin).itemsize)
            words = -(-m * d // per_word)
            coins = bits_gen.random_raw(words).view(self._coin)[: m * d].reshape(m, d)
            bits = np.less(coins, self._b_thr)
            own = bits_gen.random_raw(-(-m // per_word)).view(self._coin)[:m]
            bits[np.arange(m), xb] = own < self._a_thr[xb]
            out[start : start + m] = np.packbits(bits, axis=1)
        return out

    # --------------------------------------------------------------------- privacy
    def privacy(self) -> PairPrivacyReport:
        """Exact check of the claim for every pair of distinct items (Gu et al. eq. 5; under ULDP on
        the protected outputs, :func:`pldp.channel.unary.uldp_rows`)."""
        eps = self._budgets.epsilons
        keys = np.stack([self._a, self._b, eps], axis=1)
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        ga, gb, ge = uniq[:, 0], uniq[:, 1], uniq[:, 2]
        # own bit: a/b, or under ULDP for a non-sensitive item its forced 0 on a protected output
        sens = np.isfinite(ge)
        own = np.where(sens, np.log(ga) - np.log(np.where(sens, gb, 1.0)), np.log1p(-ga))
        realised = own[:, None] + (np.log1p(-gb) - np.log1p(-ga))[None, :]
        if self._pair_rule in ("ldp", "uldp"):
            claimed = np.full(realised.shape, float(eps[np.isfinite(eps)].min()))
        else:
            claimed = pair_budgets(ge, self._pair_rule)
        groups = [np.flatnonzero(inverse == g) for g in range(uniq.shape[0])]
        invertible = bool(np.any(~sens))  # under ULDP a non-sensitive item's set bit reveals it
        return PairPrivacyReport(self.notion, ge, groups, claimed, realised, invertible=invertible)


@register
class RAPPOR(UnaryEncoding):
    """Basic one-time RAPPOR (symmetric unary encoding), epsilon-LDP.

    :math:`a = e^{\\varepsilon/2}/(e^{\\varepsilon/2}+1)`, :math:`b = 1 - a` (Erlingsson et al.,
    CCS 2014; Wang et al. 2017): each of the two bits that differ between two inputs spends
    :math:`\\varepsilon/2`.

    Examples
    --------
    >>> m = RAPPOR(1.0, 10)
    >>> round(float(m.a[0]), 6), m.privacy().holds
    (0.622452, True)
    """

    _name = "RAPPOR"

    def __init__(self, epsilon: float, d: int | Domain) -> None:
        eps = check_epsilon(epsilon)
        dom = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 2))
        a = 1.0 / (1.0 + math.exp(-eps / 2.0))
        self.epsilon = eps
        super().__init__(np.full(len(dom), a), np.full(len(dom), 1.0 - a), ItemBudgets.uniform(eps, dom), "ldp")

    def __repr__(self) -> str:
        return f"RAPPOR(epsilon={self.epsilon:g}, d={self.d})"

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        return cls(float(epsilons_of(params["epsilons"])[0]), domain_of(params["labels"]))


@register
class OUE(UnaryEncoding):
    """Optimized unary encoding (Wang et al., USENIX Security 2017), epsilon-LDP.

    :math:`a = 1/2`, :math:`b = 1/(e^\\varepsilon + 1)`.

    Examples
    --------
    >>> m = OUE(1.0, 10)
    >>> float(m.a[0]), round(float(m.b[0]), 6)
    (0.5, 0.268951)
    """

    _name = "OUE"

    def __init__(self, epsilon: float, d: int | Domain) -> None:
        eps = check_epsilon(epsilon)
        dom = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 2))
        self.epsilon = eps
        b = 1.0 / (math.exp(eps) + 1.0)
        super().__init__(np.full(len(dom), 0.5), np.full(len(dom), b), ItemBudgets.uniform(eps, dom), "ldp")

    def __repr__(self) -> str:
        return f"OUE(epsilon={self.epsilon:g}, d={self.d})"

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        return cls(float(epsilons_of(params["epsilons"])[0]), domain_of(params["labels"]))


@register
class IDUE(UnaryEncoding):
    """Input-discriminative unary encoding (Gu et al., ICDE 2020, Sec. V).

    Items of privacy level ``i`` (budget :math:`\\varepsilon_i`) share :math:`(a_i, b_i)`,
    chosen by one of the optimisation models of the paper (see
    :func:`pldp.mechanisms.idue_solver.solve_idue`): ``"opt0"`` (eq. 8, worst-case MSE,
    non-convex, multi-start), ``"opt1"`` (eq. 10, RAPPOR structure ``a + b = 1``, convex) or
    ``"opt2"`` (eq. 11, OUE structure ``a = 1/2``, convex). The result satisfies MinID-LDP
    (``pair_rule="min"``) or AvgID-LDP (``pair_rule="avg"``); :meth:`privacy` re-checks it exactly.

    Parameters
    ----------
    budgets : ItemBudgets
        A finite budget for every item.
    model : {"opt0", "opt1", "opt2"}
    pair_rule : {"min", "avg"}
    **solver_options
        Passed to :func:`~pldp.mechanisms.idue_solver.solve_idue` (e.g. ``same_level``).

    Attributes
    ----------
    solution : IDUESolution or None
        The solver's result: per-level ``a``, ``b``, objective, active constraints, margin (None
        for an IDUE rebuilt by :meth:`from_thresholds`).
    """

    solution: IDUESolution | None

    _name = "IDUE"

    def __init__(
        self,
        budgets: ItemBudgets,
        model: Literal["opt0", "opt1", "opt2"] = "opt0",
        pair_rule: Literal["min", "avg"] = "min",
        **solver_options: Any,
    ) -> None:
        from pldp.mechanisms.idue_solver import solve_idue

        budgets = self._check_budgets(budgets, all_sensitive=True)
        if pair_rule not in ("min", "avg"):
            raise ParameterError(f"pair_rule must be 'min' or 'avg', got {pair_rule!r}")
        levels = budgets.levels
        eps = np.array([lv.epsilon for lv in levels])
        sizes = np.array([len(lv) for lv in levels])
        sol = solve_idue(eps, sizes, model=model, pair_rule=pair_rule, **solver_options)
        a = np.empty(budgets.d)
        b = np.empty(budgets.d)
        for lv, ai, bi in zip(levels, sol.a, sol.b, strict=True):
            a[lv.items], b[lv.items] = ai, bi
        self.model = model
        self.solution = sol
        super().__init__(a, b, budgets, pair_rule)

    @classmethod
    def from_thresholds(
        cls,
        a_threshold: Any,
        b_threshold: Any,
        coin_bits: int,
        budgets: ItemBudgets,
        model: Literal["opt0", "opt1", "opt2"],
        pair_rule: Literal["min", "avg"],
    ) -> IDUE:
        """The IDUE with these solved coin thresholds, without solving again (how a campaign spec's
        IDUE is rebuilt: :meth:`from_params`). :attr:`solution` is None."""
        scale = 2.0**coin_bits
        mech = cls.__new__(cls)
        a = np.asarray(a_threshold, dtype=float) / scale
        b = np.asarray(b_threshold, dtype=float) / scale
        UnaryEncoding.__init__(mech, a, b, budgets, pair_rule, coin_bits=coin_bits)
        mech.model = model
        mech.solution = None
        return mech

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The IDUE of :meth:`params`, rebuilt from its stated thresholds (never solved again)."""
        mech = cls.from_thresholds(
            params["a_threshold"],
            params["b_threshold"],
            int(params["coin_bits"]),
            budgets_of(params),
            params["model"],
            params["pair_rule"],
        )
        assert isinstance(mech, cls)
        return mech

    def __repr__(self) -> str:
        return f"IDUE({self.budgets!r}, model={self.model!r}, notion={self.notion})"

    def params(self) -> dict[str, Any]:
        """The parameters of :class:`UnaryEncoding` and the optimisation model that chose ``a``, ``b``."""
        return {**super().params(), "model": self.model}
