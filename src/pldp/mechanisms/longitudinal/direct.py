"""Direct memoized chains: L-GRR and its item-personalized version L-IPRR.

The permanent response (PRR) is a direct encoding :math:`Q_1 = \\delta_1 I + 1 q_1^T` (KRR, URR,
IPRR) at budgets :math:`\\varepsilon_\\infty`; the instantaneous one (IRR) is a direct channel
:math:`Q_2 = \\delta_2 I + 1 q_2^T` applied to its output. The chain is direct again:

.. math::

    Q_1 Q_2 = \\delta_1 \\delta_2 I + 1 (\\delta_2 q_1 + q_2)^T,

so one report of item ``y`` has ratio :math:`1 + \\delta_1\\delta_2 / (\\delta_2 q_{1,y} + q_{2,y})`.
With :math:`\\rho_y = 1/(e^{\\varepsilon_{1,y}} - 1)` and :math:`r_{1,y} = q_{1,y}/\\delta_1`, the
per-output claim :math:`\\le e^{\\varepsilon_{1,y}}` reads :math:`q_{2,y}/\\delta_2 \\ge \\delta_1
(\\rho_y - r_{1,y})`; the IRR takes these bounds with equality,

.. math::

    r_{2,y} = \\delta_1 (\\rho_y - r_{1,y}), \\qquad \\delta_2 = \\frac{1}{1 + \\sum_y r_{2,y}},
    \\qquad q_{2,y} = r_{2,y} \\delta_2,

which needs :math:`\\varepsilon_{1,y} \\le \\varepsilon_{\\infty,y}`. Then :math:`\\delta_1\\delta_2 =
1/(1 + \\sum_y \\rho_y)`: **the chain's one-report channel is IPRR at** :math:`\\varepsilon_1`
**exactly** (GRR at :math:`\\varepsilon_1` for L-GRR), whatever the PRR. It is optimal: a one-report
channel of this form within the budgets :math:`\\varepsilon_1` has :math:`\\delta \\le 1/(1 +
\\sum_y \\rho_y)` (Li et al.'s IPRR is the largest), the variance of every item's unbiased estimate,
:math:`(\\rho_y + f_y)(1/\\delta - \\rho_y - f_y)/n`, falls as :math:`\\delta` grows, and any larger
:math:`r_{2,y}` only lowers :math:`\\delta_2`. A single report of a memoized user therefore costs
nothing against a one-shot IPRR at :math:`\\varepsilon_1` (Arcolezi et al.'s L-GRR formula misses
this for :math:`k > 2`: ``docs/errata.md``, LONG-1).

On the grid. The PRR runs its own thresholds (``K1``, ``W1``); the IRR's (``K2``, ``W2``) are
:func:`~pldp.mechanisms.grid.grid_weights` of :math:`r_{2,y} = \\max(0, \\rho_y K_1 - W_{1,y}) /
2^{32}` (the bound above, from the PRR as it runs), then every output's chained ratio
:math:`(W_y + K)/W_y` with :math:`K = K_1 K_2`, :math:`W_y = 2^{32} W_{2,y} + K_2 W_{1,y}` is
decided exactly, and a short one gets a step of ``W2`` from ``K2`` (which only adds privacy to every
output) until all hold.
"""

from __future__ import annotations

import math
from typing import Any, Self

import numpy as np

from pldp._validation import as_indices, check_epsilon, check_index_range
from pldp.budgets import ItemBudgets
from pldp.channel.exact import ratio_within
from pldp.channel.memo import CHAIN_GRID, DirectIRR, MemoNode
from pldp.channel.node import groups
from pldp.channel.sampling import GRID, DirectTable, direct_draw, generator_words
from pldp.domain import Domain
from pldp.errors import BudgetError, ParameterError
from pldp.mechanisms.direct import IPRR, KRR, DirectEncoding
from pldp.mechanisms.grid import grid_weights
from pldp.mechanisms.longitudinal.base import Longitudinal
from pldp.mechanisms.longitudinal.memo import Memo
from pldp.mechanisms.reports import DirectReports
from pldp.params import budgets_of, domain_of, epsilons_of
from pldp.privacy import PrivacyReport, report_from_columns
from pldp.registry import oracle_from_params, register

__all__ = ["LGRR", "LIPRR", "LongitudinalDirect", "direct_notion", "irr_weights"]

#: Users per block of the vectorised draws (the temporaries stay in cache).
_BLOCK = 1 << 16


def direct_notion(epsilons: np.ndarray) -> str:
    """``"LDP"`` (one finite budget everywhere), ``"ULDP"`` (one finite budget, some items
    non-sensitive) or ``"IPLDP"`` (budgets per item)."""
    finite = epsilons[np.isfinite(epsilons)]
    if np.unique(finite).size > 1:
        return "IPLDP"
    return "LDP" if finite.size == epsilons.size else "ULDP"


def _short_outputs(k1: int, w1: np.ndarray, k2: int, w2: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """The outputs of finite budget whose chained ratio exceeds :math:`e^{\\varepsilon_{1,y}}`, decided exactly."""
    short = np.zeros(eps.size, dtype=bool)
    keys = [(int(a), int(b), float(e)) for a, b, e in zip(w1, w2, eps, strict=True)]
    for (a, b, e), items in groups(keys).items():
        w = GRID * b + k2 * a
        if e != math.inf and not (w > 0 and ratio_within(w + k1 * k2, w, e)):
            short[items] = True
    return short


def irr_weights(prr: DirectEncoding, one: np.ndarray) -> tuple[int, np.ndarray]:
    """The IRR's keep threshold and weights on the ``2**32`` grid for the PRR ``prr`` and one-report
    budgets ``one`` (module docstring), every chained claim decided exactly."""
    k1, w1 = prr.keep_threshold, np.asarray(prr.weights, dtype=np.int64)
    finite = np.isfinite(one)
    rho = np.zeros(one.size)
    rho[finite] = 1.0 / np.expm1(one[finite])
    r2 = np.where(finite, np.maximum(rho * k1 - w1, 0.0) / GRID, 0.0)
    if np.any(r2 > 0):
        with np.errstate(divide="ignore"):
            keep, w2 = grid_weights(r2, np.where(r2 > 0, np.log1p(1.0 / np.where(r2 > 0, r2, 1.0)), np.inf))
    else:  # eps_1 = eps_perm everywhere: the IRR keeps the PRR's item
        keep, w2 = GRID, np.zeros(one.size, dtype=np.int64)
    for _ in range(64):
        short = _short_outputs(k1, w1, keep, w2, one)
        if not short.any():
            return keep, w2
        w2[short] += 1
        keep -= int(short.sum())
        if keep < 1:
            break
    raise BudgetError("the budgets are too small for an instantaneous response on the 2^-32 grid")  # pragma: no cover


def _draws(arr: np.ndarray, rng: np.random.Generator, tables: tuple[DirectTable, ...]) -> np.ndarray:
    """Items ``arr`` through the direct tables in turn, one word per table and user, in blocks."""
    out = np.empty(arr.shape, dtype=np.int64 if arr.dtype.itemsize > 4 else np.int32)
    for start in range(0, arr.size, _BLOCK):
        z = arr[start : start + _BLOCK]
        m = z.size
        words = generator_words(rng, m * len(tables))
        for i, table in enumerate(tables):
            z = direct_draw(z, words[i * m : (i + 1) * m], table)
        out[start : start + m] = z
    return out


def _chain_draws(arr: np.ndarray, rng: np.random.Generator, keep: int, weight: int) -> np.ndarray:
    """Items ``arr`` through a one-report channel over ``2**64`` with equal weights (L-GRR's): one 64-bit
    word ``u`` each, ``u < keep`` reports the item, else ``(u - keep) // weight``. The same law as the
    PRR then the IRR (the chained channel exactly), at the cost of one draw."""
    out = np.empty(arr.shape, dtype=np.int64 if arr.dtype.itemsize > 4 else np.int32)
    k, w = np.uint64(keep), np.uint64(weight)
    for start in range(0, arr.size, _BLOCK):
        z = arr[start : start + _BLOCK]
        u = rng.bit_generator.random_raw(z.size)
        other = ((u - k) // w).astype(out.dtype)  # wraps where u < keep: those keep the item below
        out[start : start + z.size] = np.where(u < k, z, other)
    return out


@register
class LongitudinalDirect(Longitudinal, DirectReports):
    """A direct memoized chain: the direct encoding ``permanent`` (:math:`\\varepsilon_\\infty`) and the
    IRR that makes one report meet ``one`` (:math:`\\varepsilon_1`) exactly (module docstring).

    Parameters
    ----------
    permanent : DirectEncoding
        The permanent randomized response (KRR, URR, IPRR).
    one : ItemBudgets
        The one-report budget of each item (``inf``: non-sensitive), at most its permanent budget.

    Examples
    --------
    >>> import pldp
    >>> m = LongitudinalDirect(pldp.KRR(3.0, 4), pldp.ItemBudgets.uniform(1.0, pldp.Domain.range(4)))
    >>> m.privacy().holds, round(float(m.delta), 6) == round(float(pldp.KRR(1.0, 4).delta), 6)
    (True, True)
    """

    _name = "LongitudinalDirect"
    _prr: DirectEncoding

    def __init__(self, permanent: DirectEncoding, one: ItemBudgets) -> None:
        if not isinstance(permanent, DirectEncoding):
            raise ParameterError(f"the permanent response must be a direct encoding, got {type(permanent).__name__}")
        self._prr = permanent
        self._budgets = self._check_budgets(one, all_sensitive=False)
        self._check_one()
        keep, weights = irr_weights(permanent, one.epsilons)
        self._irr = DirectIRR(keep, tuple(int(w) for w in weights))
        k, w = self._irr.chained(permanent.sampler())
        self._keep_chain, self._weights_chain = k, w
        self._q = np.array([float(v) for v in w]) / float(CHAIN_GRID)  # correctly rounded: an exact power of two
        self._q.setflags(write=False)
        self._delta = float(k) / float(CHAIN_GRID)
        #: The common weight of a one-report channel with equal weights (0: unequal), for one-draw rounds.
        self._equal_weight = w[0] if w[0] > 0 and all(v == w[0] for v in w) else 0

    @property
    def notion(self) -> str:
        return direct_notion(self._budgets.epsilons)

    @property
    def instantaneous_thresholds(self) -> tuple[int, np.ndarray]:
        """The IRR's keep threshold and weights on the ``2**32`` grid."""
        return self._irr.keep, np.asarray(self._irr.weights, dtype=np.int64)

    def params(self) -> dict[str, Any]:
        """The one-report budgets and notion, the permanent mechanism's parameters and the IRR's thresholds."""
        keep, weights = self.instantaneous_thresholds
        return {
            **self._budget_params(),
            "notion": self.notion,
            "permanent": self._prr.params(),
            "keep_threshold": keep,
            "weights": weights,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The chain of :meth:`params`: the permanent mechanism rebuilt (and checked), the IRR derived again."""
        return cls(oracle_from_params(params["permanent"]), budgets_of(params))  # type: ignore[arg-type]

    def _build_node(self) -> MemoNode:
        eps = tuple(float(e) for e in self._budgets.epsilons)
        return MemoNode(self.d, self._prr.sampler(), self._irr, self.notion, eps)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(permanent={self._prr!r}, one={self._budgets!r})"

    # ---------------------------------------------------------------------- client
    def _fresh(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self._equal_weight:
            return _chain_draws(x, rng, self._keep_chain, self._equal_weight)
        return _draws(x, rng, (self._prr.sampler().table, self._irr.table))

    def permanent(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """The permanent responses of items ``x`` (the permanent mechanism's ``perturb``)."""
        return _draws(self._indices(x), rng, (self._prr.sampler().table,))

    def instantaneous(self, prr: Any, rng: np.random.Generator) -> np.ndarray:
        """One report of each permanent response (an item): the IRR, one word each."""
        arr = as_indices(prr, "prr").reshape(-1)
        check_index_range(arr, self.d, "prr")
        return _draws(arr, rng, (self._irr.table,))

    def _empty_memo(self) -> Memo:
        return Memo.empty(self.fingerprint, self.d, (), np.int64)

    # --------------------------------------------------------------------- privacy
    def _one_report_check(self) -> PrivacyReport:
        k, w = self._keep_chain, self._weights_chain
        realised = np.array([math.log1p(k / v) if v > 0 else math.inf for v in w])  # k / v: correctly rounded
        q, dl = self._q, self._delta
        return report_from_columns(
            q + dl, q, (q == 0) & (dl > 0), self._budgets.epsilons, self.notion, realised=realised
        )


@register
class LGRR(LongitudinalDirect):
    """Longitudinal GRR (Arcolezi et al. 2022): GRR at ``eps_perm`` memoized, then the GRR whose chain
    is GRR at ``eps_1`` exactly (one report: ``eps_1``-LDP; any number of reports of one value:
    ``eps_perm``-LDP). Arguments as multi-freq-ldpy's ``L_GRR_Client(input, k, eps_perm, eps_1)``.

    Parameters
    ----------
    eps_perm : float
        The bound over any number of reports of one value.
    eps_1 : float
        The bound of one report, ``0 < eps_1 < eps_perm``.
    d : int or Domain
        Domain size (>= 2) or the domain.

    Examples
    --------
    >>> m = LGRR(2.0, 1.0, 10)
    >>> rep = m.privacy()
    >>> rep.holds, round(rep.ldp_epsilon, 6), round(rep.permanent_epsilon, 6)
    (True, 1.0, 2.0)
    """

    _name = "LGRR"

    def __init__(self, eps_perm: float, eps_1: float, d: int | Domain) -> None:
        perm, one = check_epsilon(eps_perm), check_epsilon(eps_1)
        if not one < perm:
            raise BudgetError(
                "LGRR needs eps_1 < eps_perm (one report, then any number of reports of one value); "
                f"got {one!r} >= {perm!r}"
            )
        prr = KRR(perm, d)
        self.eps_perm, self.eps_1 = perm, one
        super().__init__(prr, ItemBudgets.uniform(one, prr.domain))

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        perm = float(epsilons_of(params["permanent"]["epsilons"])[0])
        return cls(perm, float(epsilons_of(params["epsilons"])[0]), domain_of(params["labels"]))

    def __repr__(self) -> str:
        return f"LGRR(eps_perm={self.eps_perm:g}, eps_1={self.eps_1:g}, d={self.d})"


@register
class LIPRR(LongitudinalDirect):
    """Item-personalized L-GRR: IPRR at the budgets ``perm`` memoized, then the IRR whose chain is IPRR
    at ``one`` exactly (module docstring; optimal per item).

    Parameters
    ----------
    perm : ItemBudgets
        :math:`\\varepsilon_\\infty` of each item (``inf``: non-sensitive).
    one : ItemBudgets
        :math:`\\varepsilon_1` of each item, at most its :math:`\\varepsilon_\\infty` (``inf`` only where
        that is ``inf``).

    Examples
    --------
    >>> import pldp
    >>> perm = pldp.ItemBudgets.from_array([1.0, 2.0, 4.0, np.inf])
    >>> m = LIPRR(perm, pldp.ItemBudgets.from_array([0.5, 1.0, 2.0, np.inf]))
    >>> m.privacy().holds, m.notion
    (True, 'IPLDP')
    """

    _name = "LIPRR"

    def __init__(self, perm: ItemBudgets, one: ItemBudgets) -> None:
        super().__init__(IPRR(perm), one)

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        return cls(budgets_of(params["permanent"]), budgets_of(params))
