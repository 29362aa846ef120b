"""Item-set frequency estimation by padding-and-sampling (PS).

Each user holds a *set* of items. Padding-and-sampling (Wang et al., "Locally Differentially
Private Frequent Itemset Mining", S&P 2018; Gu et al., ICDE 2020, Algorithm 1) pads a set of
size ``s < ell`` with ``ell - s`` distinct dummy items drawn from ``S = {d, ..., d + ell - 1}``
(or truncates a larger set to ``ell`` random items) and samples one item of the padded set
uniformly. The sampled item is reported with a unary mechanism over the ``d + ell`` items
(Gu et al., Algorithm 2: IDUE-PS; likewise OUE-PS and RAPPOR-PS). Since every real item of a
set with ``s <= ell`` items is sampled with probability ``1 / ell``, the estimate of the
number of users holding item ``i`` is ``ell`` times the single-item estimate of the sampled
item; dummy items are never reported.

Vectorised sampling: the padded set of a user with ``s`` items has ``L = max(s, ell)`` slots
and the sampled slot ``J`` is uniform on ``0..L-1``; slot ``J < s`` is her ``J``-th item (a
uniform item of her set), and any other slot a dummy, uniform on ``S`` by symmetry. This is
exactly the distribution of Algorithm 1.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Any, Self

import numpy as np

from pldp._validation import _show, check_int
from pldp.budgets import ItemBudgets
from pldp.channel.padding import PaddingNode
from pldp.domain import Domain
from pldp.errors import BudgetError, DomainError, ParameterError, TallyError
from pldp.estimation.result import Estimate
from pldp.itemsets import ItemSets
from pldp.mechanisms.unary import UnaryEncoding
from pldp.privacy import ComposedPrivacy, ItemSetPrivacyReport, PrivacyCheck
from pldp.protocols.base import Protocol
from pldp.registry import oracle_from_params, register
from pldp.tally import Tally

__all__ = ["PaddingSampling", "propose_ell"]

#: Largest universe :meth:`PaddingSampling.verify_privacy` enumerates (``d <= 6``, ``d + ell <= 16``).
EXACT_SET_CHECK = (6, 16)


def propose_ell(sizes: Sequence[int] | np.ndarray | ItemSets, percentile: float = 90.0) -> int:
    """Padding length by Wang et al. (S&P 2018): the ``percentile``-th percentile of set sizes.

    Gu et al. (Sec. VII-B) observe that the best ``ell`` also depends on epsilon: the error
    is dominated by variance at small epsilon (prefer a smaller ``ell``, below the mean set
    size, e.g. at epsilon = 2) and by truncation bias at large epsilon (prefer about the mean
    set size, e.g. at epsilon = 4).
    """
    s = sizes.sizes if isinstance(sizes, ItemSets) else np.asarray(sizes)
    if s.size == 0:
        raise ParameterError("no set sizes given")
    if not 0 < percentile <= 100:
        raise ParameterError(f"percentile must lie in (0, 100], got {percentile!r}")
    return max(1, math.ceil(np.percentile(s, percentile)))


@register
class PaddingSampling(Protocol):
    """Padding-and-sampling around a unary mechanism: IDUE-PS, OUE-PS, RAPPOR-PS.

    Parameters
    ----------
    base : UnaryEncoding
        The single-item mechanism over the ``d`` real items (``IDUE``, ``OUE``, ``RAPPOR``).
    ell : int
        Padding length :math:`\\ell \\ge 1`.

    Attributes
    ----------
    inner : UnaryEncoding
        The mechanism over the ``d + ell`` real and dummy items that randomizes the sampled item.

    Notes
    -----
    The ``ell`` dummy items get the budget :math:`\\varepsilon^* = \\min \\mathcal{E}` and the
    ``(a, b)`` of an item with that budget (Gu et al., after Theorem 4). The budget of an
    item-set is eq. 15,

    .. math:: \\varepsilon_x = \\ln\\Big[\\eta_x \\sum_{i \\in x} e^{\\varepsilon_i}/|x|
              + (1 - \\eta_x) e^{\\varepsilon^*}\\Big], \\qquad \\eta_x = |x| / \\max(|x|, \\ell),

    and the mechanism satisfies MinID-LDP on item-sets with these budgets (Theorem 4), which
    :meth:`verify_privacy` checks exactly on small universes.
    """

    def __init__(self, base: UnaryEncoding, ell: int) -> None:
        if not isinstance(base, UnaryEncoding):
            raise ParameterError(f"base must be a unary mechanism (IDUE, OUE, RAPPOR), got {type(base).__name__}")
        if base.sampler().notion == "ULDP":  # the item-set claim (Gu et al., Theorem 4) needs every b > 0
            raise ParameterError(f"base must protect every item: {type(base).__name__} may reveal a non-sensitive one")
        ell = check_int(ell, "ell", 1)
        eps = base.budgets.epsilons
        star = int(np.argmin(eps))  # an item with the smallest budget: the dummies copy it
        a_s, b_s = float(base.a[star]), float(base.b[star])
        own_ratio = math.log(a_s) + math.log1p(-b_s) - math.log(b_s) - math.log1p(-a_s)
        if own_ratio > eps[star] + 1e-12:
            # the dummies join the smallest-budget level, which then holds two or more items, so
            # the (i, i) constraint of that level is needed even if it held a single item before
            raise BudgetError(
                f"the dummies copy the parameters of the smallest-budget item, whose own ratio "
                f"ln[a(1-b)/(b(1-a))] = {own_ratio:.6g} exceeds its budget {eps[star]:g}; build the base "
                "mechanism with same_level='always' (e.g. IDUE(..., same_level='always'))"
            )
        labels = list(base.domain.labels)
        dummies = [f"<dummy {j}>" for j in range(ell)]
        clash = [lab for lab in dummies if lab in base.domain]
        if clash:
            raise DomainError(f"domain labels clash with the dummy labels: {_show(clash)}")
        budgets = ItemBudgets(np.concatenate([eps, np.full(ell, eps[star])]), Domain(labels + dummies))
        a = np.concatenate([base.a, np.full(ell, base.a[star])])
        b = np.concatenate([base.b, np.full(ell, base.b[star])])
        self.base = base
        self.ell = ell
        self.epsilon_star = float(eps[star])
        self.inner = UnaryEncoding(a, b, budgets, base.pair_rule)

    @property
    def domain(self) -> Domain:
        """The real items."""
        return self.base.domain

    def __repr__(self) -> str:
        return f"PaddingSampling({self.base!r}, ell={self.ell})"

    def params(self) -> dict[str, Any]:
        """Canonical parameters: the base mechanism's and the padding length."""
        return {"protocol": "PaddingSampling", "base": self.base.params(), "ell": self.ell}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """Padding-and-sampling around the base mechanism of ``params`` (itself rebuilt and checked)."""
        return cls(oracle_from_params(params["base"]), int(params["ell"]))  # type: ignore[arg-type]

    def sampler(self) -> PaddingNode:
        """The sampler node: pad, sample, then the inner unary node over ``d + ell`` items."""
        return self._node

    @cached_property
    def _node(self) -> PaddingNode:
        return PaddingNode(self.d, self.ell, self.inner.sampler())

    # ------------------------------------------------------------------ sampling
    def _check_sets(self, itemsets: ItemSets) -> ItemSets:
        if not isinstance(itemsets, ItemSets):
            raise ParameterError(f"expected ItemSets (see ItemSets.from_lists), got {type(itemsets).__name__}")
        if itemsets.d != self.d:
            raise DomainError(f"item-sets over {itemsets.d} items do not fit a mechanism over {self.d}")
        return itemsets

    def sample(self, itemsets: ItemSets, rng: np.random.Generator) -> np.ndarray:
        """Algorithm 1 for every user at once: one index in ``[0, d + ell)`` per user."""
        sets = self._check_sets(itemsets)
        sizes = sets.sizes
        slots = np.maximum(sizes, self.ell)
        j = np.floor(rng.random(sets.n) * slots).astype(np.int64)
        j = np.minimum(j, slots - 1)
        real = j < sizes
        out = self.d + rng.integers(0, self.ell, size=sets.n)
        out[real] = sets.indices[sets.indptr[:-1][real] + j[real]]
        return out

    def sampling_distribution(self, itemset: Iterable[int]) -> np.ndarray:
        """Probability of each of the ``d + ell`` items being sampled from one set (Alg. 1)."""
        items = np.unique(np.asarray(list(itemset), dtype=np.int64))
        if items.size and (items.min() < 0 or items.max() >= self.d):
            raise DomainError(f"items must lie in [0, {self.d})")
        w = np.zeros(self.d + self.ell)
        slots = max(items.size, self.ell)
        w[items] = 1.0 / slots
        w[self.d :] = (1.0 - items.size / slots) / self.ell
        return w

    # ------------------------------------------------------------ client / server
    def perturb(self, itemsets: ItemSets, rng: np.random.Generator) -> np.ndarray:
        """Sample one item per user (Alg. 1) and report it with the unary mechanism (Alg. 2)."""
        return self.inner.perturb(self.sample(itemsets, rng), rng)

    def tally(self, reports: Any) -> Tally:
        """Per-bit counts over the ``d + ell`` bits."""
        return self.adopt(self.inner.tally(reports))

    def simulate(self, itemsets: ItemSets, rng: np.random.Generator) -> Tally:
        """Count-level simulation: sample per user (O(n)), then binomial bit counts (O(d))."""
        sampled = np.bincount(self.sample(itemsets, rng), minlength=self.d + self.ell)
        return self.adopt(self.inner.simulate(sampled, rng))

    def adopt(self, inner_tally: Tally) -> Tally:
        """This protocol's tally from a tally of :attr:`inner`'s reports of sampled items.

        For experiments that sample once (:meth:`sample`) and perturb the sampled items with
        several mechanisms; refused unless ``inner_tally`` was made by :attr:`inner`.
        """
        if not isinstance(inner_tally, Tally):
            raise TallyError(f"expected a Tally of the inner mechanism, got {type(inner_tally).__name__}")
        inner_tally.check_source(self.inner)
        return Tally(inner_tally.n, inner_tally.counts, "unary", self.fingerprint, inner_tally.ones, inner_tally.tails)

    def report_stats(self, rows: np.ndarray) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        """The inner mechanism's statistics of packed reports (:meth:`pldp.UnaryEncoding.report_stats`)."""
        return self.inner.report_stats(rows)

    def estimate(self, tally: Tally, method: str = "unbiased", **options: Any) -> Estimate:
        """Estimate the share of users holding each real item.

        The sampled item has a distribution on the ``d + ell`` items; it is estimated with
        ``method`` (so ``"norm_sub"`` and ``"mle"`` act on that simplex), then the real items'
        entries are scaled by ``ell`` (variances by ``ell**2``). Unbiased when no set exceeds
        ``ell`` items (``"unbiased"``); truncation biases it towards
        :meth:`expected_estimate`. The result is a share of users per item, not a distribution:
        it is never on the simplex (its entries sum to about the mean set size). ``options`` are
        the inner mechanism's (``solver``, ``tol``, ``max_iter``).
        """
        self._check_method(method)
        tally = self._check_tally(tally)
        inner = self.inner.estimate(Tally(tally.n, tally.counts, tally.kind, self.inner.fingerprint), method, **options)
        ell = self.ell
        info = {**inner.info, "protocol": "padding-and-sampling", "ell": ell}
        freq, var = inner.frequencies[: self.d] * ell, inner.variance[: self.d] * ell**2
        return Estimate(freq, var, inner.n, inner.method, self.domain, inner.iterations, inner.converged, info)

    def expected_estimate(self, itemsets: ItemSets) -> np.ndarray:
        """Mean of the unbiased estimate: :math:`\\frac1n\\sum_u [i \\in x_u]\\,\\ell/\\max(|x_u|, \\ell)`.

        Equals the true share of holders when no set exceeds ``ell`` items; otherwise the
        difference is the truncation bias.
        """
        sets = self._check_sets(itemsets)
        weight = self.ell / np.maximum(sets.sizes, self.ell)
        per_entry = np.repeat(weight, sets.sizes)
        return np.bincount(sets.indices, weights=per_entry, minlength=self.d) / sets.n

    # ------------------------------------------------------------------- privacy
    def itemset_epsilon(self, itemset: Iterable[int]) -> float:
        """Budget of an item-set, Gu et al. eq. 15 (with :math:`\\varepsilon^* = \\min\\mathcal{E}`)."""
        items = np.unique(np.asarray(list(itemset), dtype=np.int64))
        eps = self.base.budgets.epsilons
        if items.size == 0:
            return self.epsilon_star
        eta = items.size / max(items.size, self.ell)
        return float(np.log(eta * np.mean(np.exp(eps[items])) + (1 - eta) * np.exp(self.epsilon_star)))

    def privacy(self) -> ComposedPrivacy:
        """Exact checks: the inner mechanism on the sampled item (pairs of the ``d + ell`` items),
        and, on universes small enough to enumerate, Theorem 4 on every pair of item-sets
        (:meth:`verify_privacy`).

        A report is the inner mechanism's report of one sampled item, so its LDP epsilon on
        item-sets is at most the inner mechanism's.
        """
        parts: dict[str, PrivacyCheck] = {"sampled item": self.inner.privacy()}
        if self.d <= EXACT_SET_CHECK[0] and self.d + self.ell <= EXACT_SET_CHECK[1]:
            parts["item-sets"] = self.verify_privacy()
        return ComposedPrivacy(f"{self.inner.notion} on item-sets (Theorem 4)", parts, "max")

    def verify_privacy(self, max_items: int = EXACT_SET_CHECK[0]) -> ItemSetPrivacyReport:
        """Exact check of Theorem 4 on every pair of item-sets (all subsets, the empty one too).

        For each pair ``(x, x')`` the exact largest likelihood ratio over all
        :math:`2^{d+\\ell}` outputs is compared with :math:`e^{\\min(\\varepsilon_x, \\varepsilon_{x'})}`
        (eq. 15, 17) and with the bound of eq. 14. Feasible for ``d + ell <= 16``.
        """
        d, ell = self.d, self.ell
        if d > max_items or d + ell > EXACT_SET_CHECK[1]:
            raise ParameterError(f"exact verification enumerates 2^d sets and 2^(d+ell) outputs; d={d}, ell={ell}")
        a, b = self.inner.a, self.inner.b
        alpha, beta = a / b, (1 - a) / (1 - b)
        subsets = [s for k in range(d + 1) for s in itertools.combinations(range(d), k)]
        W = np.array([self.sampling_distribution(s) for s in subsets])  # (sets, d + ell)
        ys = ((np.arange(2 ** (d + ell))[:, None] >> np.arange(d + ell)) & 1).astype(bool)
        # Pr(y | x) / prod_k Bern(y_k; b_k) = sum_k w_x[k] R_k(y_k)
        like = np.where(ys, alpha, beta) @ W.T  # (outputs, sets)
        log_like = np.log(like)
        realised = np.max(log_like[:, :, None] - log_like[:, None, :], axis=0)  # (sets, sets)
        eps_sets = np.array([self.itemset_epsilon(s) for s in subsets])
        if self.base.pair_rule == "avg":  # AvgID-LDP: r(eps_x, eps_x') is the mean (Gu et al. Sec. VIII)
            claimed = np.add.outer(eps_sets, eps_sets) / 2.0
        else:
            claimed = np.minimum.outer(eps_sets, eps_sets)
        eta = np.array([len(s) / max(len(s), ell) if s else 0.0 for s in subsets])
        mean_alpha = np.array([alpha[list(s)].mean() if s else 0.0 for s in subsets])
        mean_beta = np.array([beta[list(s)].mean() if s else 0.0 for s in subsets])
        star = d  # a dummy
        num = eta * mean_alpha + (1 - eta) * alpha[star]
        den = eta * mean_beta + (1 - eta) * beta[star]
        bound = np.log(np.outer(num, 1.0 / den))
        notion = f"{self.inner.notion} on item-sets"
        return ItemSetPrivacyReport(subsets, eps_sets, claimed, realised, bound, notion)
