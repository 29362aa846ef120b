"""Direct-encoding mechanisms: KRR, URR and IPRR share one core.

A direct-encoding report is one item of the domain. KRR (generalized randomized response),
URR (utility-optimized RR, Murakami & Kawamoto 2019) and IPRR (item-oriented personalized
RR, Li et al.) all have the channel

.. math::

    Q(y \\mid x) = q_y + \\delta \\, [x = y], \\qquad \\delta = 1 - \\sum_y q_y,

with a per-output *dishonest* probability :math:`q_y` and a common honesty gap
:math:`\\delta`. (Any direct channel with ``Q(y|x) = q_y`` for ``x != y`` has this form: its
rows sum to one only if ``Q(x|x) - q_x`` is the same for every ``x``.) For IPRR
(Li et al., Def. 5, eq. 11 and Sec. 5.3):

.. math::

    r_y = \\frac{1}{e^{\\varepsilon_y} - 1}\\ (y \\in D_S),\\quad r_y = 0\\ (y \\in D_N),\\qquad
    S = \\Big(1 + \\sum_{y \\in D_S} r_y\\Big)^{-1},\\qquad
    q_y = \\bar q_y = r_y S,\\quad \\delta = S = \\tilde q,

so the honest probability of a sensitive item is :math:`q_y = e^{\\varepsilon_y} \\bar q_y`
and that of a non-sensitive item is :math:`\\tilde q = S`. KRR is the case of one budget
on every item and URR the case of one budget on :math:`D_S`.

Exact sampling on the integer grid. The channel actually run is stated on the ``2**32`` grid
(:func:`grid_weights`): integer weights ``W_y`` and a keep threshold ``K = 2**32 - sum(W)``, with
``K`` as large as the budgets allow and every ``W_y >= K r_y`` (rounding towards privacy), so
:math:`q_y = W_y / 2^{32}` and :math:`\\delta = K / 2^{32}` exactly, and every privacy
ratio :math:`1 + K / W_y` is checked against :math:`e^{\\varepsilon_y}` with exact arithmetic.
A user draws one uniform 32-bit word ``w``: ``w < K`` reports her item, otherwise she reports the smallest ``y`` with
``w - K < W_0 + ... + W_y`` (:func:`pldp.channel.sampling.direct_draw`, the same code the device
clients of :mod:`pldp.client` run). The exposed ``q``, ``delta``, the privacy check, the
simulation and the estimators all use these grid values: what is checked is what runs.
Count-level simulation follows from the mixture form exactly: honest counts are independent
binomials ``Bin(n_x, delta)`` and the dishonest users' reports are one multinomial over
``q / sum(q)``.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Self

import numpy as np

from pldp._validation import as_indices, check_epsilon, check_index_range, check_int
from pldp.budgets import ItemBudgets
from pldp.channel.direct import DirectNode
from pldp.channel.sampling import GRID, direct_draw, generator_words
from pldp.domain import Domain
from pldp.errors import BudgetError
from pldp.mechanisms.grid import grid_weights
from pldp.mechanisms.reports import DirectReports
from pldp.params import budgets_of, domain_of, epsilons_of
from pldp.privacy import PrivacyReport, report_from_columns
from pldp.registry import register

__all__ = ["IPRR", "KRR", "URR", "DirectEncoding", "grid_weights"]

#: Largest finite budget accepted: beyond it exp(eps) overflows a double.
MAX_EPSILON = 700.0


@register
class DirectEncoding(DirectReports):
    """The shared core of KRR, URR and IPRR: per-output budgets -> channel (see module doc).

    Parameters
    ----------
    budgets : ItemBudgets
        Budget of each output item; ``inf`` marks a non-sensitive item (reported only by
        its holders). At least one item must be sensitive.
    notion : str
        Name of the privacy notion the mechanism claims (``"LDP"``, ``"ULDP"``,
        ``"IPLDP"``), used in the privacy report.
    """

    family = "direct"
    _name = "DirectEncoding"

    def __init__(self, budgets: ItemBudgets, notion: str = "IPLDP") -> None:
        budgets = self._check_budgets(budgets, all_sensitive=False)
        eps = budgets.epsilons
        too_big = np.isfinite(eps) & (eps > MAX_EPSILON)
        if too_big.any():
            raise BudgetError(
                f"budgets above {MAX_EPSILON} overflow exp(eps); mark such items non-sensitive (inf) instead: "
                + ", ".join(f"{budgets.domain.labels[i]!r}: {eps[i]!r}" for i in np.flatnonzero(too_big)[:5])
            )
        sens = np.isfinite(eps)
        r = np.zeros(eps.size)
        r[sens] = 1.0 / np.expm1(eps[sens])  # Li et al., Sec. 5.3
        keep, weights = grid_weights(r, eps)
        q = weights / GRID  # exact: integers below 2**53 over a power of two
        for arr in (q, r, weights):
            arr.setflags(write=False)
        self._budgets = budgets
        self._notion = notion
        self._r = r
        self._q = q
        self._keep = keep
        self._weights = weights
        self._delta = keep / GRID

    # ------------------------------------------------------------------ parameters
    @property
    def notion(self) -> str:
        """The privacy notion claimed."""
        return self._notion

    @property
    def r(self) -> np.ndarray:
        """:math:`r_y = 1/(e^{\\varepsilon_y} - 1)` on :math:`D_S`, 0 on :math:`D_N` (Li et al. Sec. 5.3)."""
        return self._r

    @property
    def keep_threshold(self) -> int:
        """``K``: a word below it reports the user's own item (``delta = K / 2**32``)."""
        return self._keep

    @property
    def weights(self) -> np.ndarray:
        """``W_y``: the dishonest probabilities on the grid (``q = W / 2**32``), read-only."""
        return self._weights

    def params(self) -> dict[str, Any]:
        """Canonical parameters: the class, the notion, the labels, every item's budget and the
        grid thresholds (``keep_threshold``, ``weights``) that the clients run."""
        return {
            **self._budget_params(),
            "notion": self._notion,
            "keep_threshold": self._keep,
            "weights": self._weights,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The direct encoding of :meth:`params` (its budgets and notion)."""
        return cls(budgets_of(params), params["notion"])

    def sampler(self) -> DirectNode:
        """The sampler node: :attr:`keep_threshold`, :attr:`weights`, the notion and every budget."""
        return self._node

    @cached_property
    def _node(self) -> DirectNode:
        return DirectNode(
            self.d,
            self._keep,
            tuple(int(w) for w in self._weights),
            self._notion,
            tuple(float(e) for e in self._budgets.epsilons),
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._budgets!r})"

    # ---------------------------------------------------------------------- client
    #: Users per block in :meth:`perturb`: the temporaries of a block (0.5 MB each) stay in
    #: cache and are reused by the allocator instead of fresh 8 MB arrays per 10^6 users.
    _BLOCK = 1 << 16

    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """Randomize item indices, one report per user (vectorised, one 32-bit word per user).

        Parameters
        ----------
        x : array_like of int, shape (n,)
            Item indices in ``[0, d)`` (see :meth:`pldp.Domain.encode`), one per user.
        rng : numpy.random.Generator
            Source of randomness (its bit generator supplies the words).

        Returns
        -------
        ndarray of int, shape (n,)
            Reported item indices (see :func:`pldp.channel.sampling.direct_draw`).
        """
        arr = as_indices(x, "x")
        out = np.empty(arr.shape, dtype=np.int64 if arr.dtype.itemsize > 4 else np.int32)
        flat_x, flat = arr.reshape(-1), out.reshape(-1)
        table = self._node.table
        for start in range(0, flat.size, self._BLOCK):  # blocks: every pass runs in cache
            xb = flat_x[start : start + self._BLOCK]
            check_index_range(xb, self.d, "x")
            words = generator_words(rng, xb.size)
            flat[start : start + self._BLOCK] = direct_draw(xb, words, table)
        return out

    # ---------------------------------------------------------------------- server
    # --------------------------------------------------------------------- privacy
    def privacy(self) -> PrivacyReport:
        """Exact check of the claim, per output item (see :mod:`pldp.privacy`).

        Column ``y`` of the channel holds ``q_y`` (``d - 1`` times) and ``q_y + delta``, so
        the realised epsilon of output ``y`` is ``log1p(delta / q_y)`` (``inf`` when
        ``q_y = 0``: then only holders of ``y`` report it, condition 4 of IPLDP).
        """
        q, dl = self._q, self._delta
        with np.errstate(divide="ignore"):
            realised = np.where(q > 0, np.log1p(dl / np.where(q > 0, q, 1.0)), np.inf)
        return report_from_columns(
            q + dl, q, (q == 0) & (dl > 0), self._budgets.epsilons, self._notion, realised=realised
        )


@register
class KRR(DirectEncoding):
    """k-ary randomized response (generalized RR), epsilon-LDP.

    :math:`Q(x|x) = e^\\varepsilon / (e^\\varepsilon + d - 1)`,
    :math:`Q(y|x) = 1 / (e^\\varepsilon + d - 1)` for :math:`y \\ne x`
    (Kairouz et al., ICML 2016; Wang et al., USENIX Security 2017).

    Parameters
    ----------
    epsilon : float
        Privacy budget, ``0 < epsilon <= 700``.
    d : int or Domain
        Domain size (>= 2) or the domain itself.

    Examples
    --------
    >>> import numpy as np
    >>> m = KRR(1.0, 4)
    >>> round(float(m.diagonal[0]), 4), round(float(m.q[0]), 4)
    (0.4754, 0.1749)
    >>> m.privacy().holds
    True
    """

    _name = "KRR"

    def __init__(self, epsilon: float, d: int | Domain) -> None:
        eps = check_epsilon(epsilon)
        dom = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 2))
        self.epsilon = eps
        super().__init__(ItemBudgets.uniform(eps, dom), "LDP")

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        return cls(float(epsilons_of(params["epsilons"])[0]), domain_of(params["labels"]))

    def __repr__(self) -> str:
        return f"KRR(epsilon={self.epsilon:g}, d={self.d})"


@register
class URR(DirectEncoding):
    """Utility-optimized randomized response (Murakami & Kawamoto, USENIX Security 2019).

    With sensitive items :math:`D_S` and non-sensitive :math:`D_N`, for :math:`x \\in D_S`
    the user keeps ``x`` with probability :math:`e^\\varepsilon/(|D_S| + e^\\varepsilon - 1)`
    and otherwise reports a uniform other *sensitive* item; for :math:`x \\in D_N` she keeps
    ``x`` with probability :math:`1 - |D_S|/(|D_S| + e^\\varepsilon - 1)` and otherwise reports
    a uniform sensitive item. It satisfies :math:`(D_S, D_S, \\varepsilon)`-ULDP. With
    :math:`D_N = \\emptyset` it is KRR.

    Parameters
    ----------
    epsilon : float
        Budget of the sensitive items.
    sensitive : array_like of bool
        Mask of the sensitive items (at least one True).
    domain : Domain, optional
        Item labels; defaults to ``0..d-1``.
    """

    _name = "URR"

    def __init__(self, epsilon: float, sensitive: Any, domain: Domain | None = None) -> None:
        eps = check_epsilon(epsilon)
        budgets = ItemBudgets.one_sensitive_budget(eps, sensitive, domain, " (use URR.from_labels for labels)")
        self.epsilon = eps
        super().__init__(budgets, "ULDP")

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        eps = epsilons_of(params["epsilons"])
        sens = np.isfinite(eps)
        return cls(float(eps[sens][0]) if sens.any() else 1.0, sens, domain_of(params["labels"]))

    @classmethod
    def from_labels(cls, epsilon: float, domain: Domain, sensitive: Any) -> URR:
        """URR whose sensitive set is given by labels of ``domain``."""
        mask = np.zeros(len(domain), dtype=bool)
        mask[domain.encode(list(sensitive))] = True
        return cls(epsilon, mask, domain)

    def __repr__(self) -> str:
        return f"URR(epsilon={self.epsilon:g}, d={self.d}, |D_S|={self.budgets.n_sensitive})"


@register
class IPRR(DirectEncoding):
    """Item-oriented personalized randomized response (Li et al., Def. 4-5, eq. 10-11).

    Every sensitive item ``y`` has its own budget :math:`\\varepsilon_y` that bounds how
    well an observer of the report ``y`` can tell any two inputs apart; non-sensitive items
    are reported only by their holders. Satisfies :math:`(D_S, \\mathcal{E})`-IPLDP
    (Theorem 2). With equal budgets it is KRR (no :math:`D_N`) or URR.

    Note (ERRATA IPRR-5): a non-sensitive user who lies reports the *most* sensitive item
    with the highest probability (``q`` is largest for the smallest budget). That is what
    IPLDP allows and is not changed here.

    Parameters
    ----------
    budgets : ItemBudgets
        One budget per item, ``inf`` for non-sensitive items. At least one item must be
        sensitive: with ``D_S`` empty every report would be the user's item in the clear,
        so that configuration raises :class:`~pldp.errors.BudgetError`.

    Examples
    --------
    The Fig. 1 setting:

    >>> b = ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, np.inf])
    >>> m = IPRR(b)
    >>> m.privacy().holds
    True
    """

    _name = "IPRR"

    def __init__(self, budgets: ItemBudgets) -> None:
        super().__init__(budgets, "IPLDP")

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        return cls(budgets_of(params))
