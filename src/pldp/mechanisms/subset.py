"""Subset selection (SS): a report is ``k`` of the ``d`` items (Wang, Wu, Hu 2016; Ye & Barg, IEEE Trans. IT 2018).

A user holding item ``x`` reports a ``k``-subset ``S`` of ``[0, d)`` with
:math:`\\Pr(S \\mid x) \\propto e^\\varepsilon` when ``x \\in S`` and 1 otherwise
(:class:`~pldp.channel.SubsetNode` gives the exact program and its claim). A report *supports* the
items it holds, so

.. math::

    p^* = \\frac{k e^\\varepsilon}{k e^\\varepsilon + d - k}, \\qquad
    q^* = p^* \\frac{k - 1}{d - 1} + (1 - p^*) \\frac{k}{d - 1},

and the support counts are estimated as every pure oracle's (:class:`~pldp.mechanisms.base.Mechanism`):
:math:`\\hat f_v = (C_v/n - q^*) / (p^* - q^*)`, with per-report variance factor at an absent item
:math:`V = q^*(1 - q^*) / (p^* - q^*)^2`. Ye & Barg show that ``k`` near ``d / (e^eps + 1)`` makes SS
order-optimal; the default is ``k = max(1, round(d / (e^eps + 1)))``. At ``d = 1000, eps = 4``,
``k = 18`` and ``V = 0.0739``, below OUE's ``4 e^eps / (e^eps - 1)^2 = 0.0760``
(``tests/test_ss.py``).

Exact sampling: ``keep`` is the largest integer with ``keep (d - k) / ((2**32 - keep) k) <= e^eps``
(decided exactly), so :attr:`support`'s ``p* = keep / 2**32`` is within ``2**-32`` of the ideal; the
claim bounds the inverse ratio too, and at a budget finer than the grid's steps (e.g. ``eps = 1e-10``,
``d = 10, k = 3``) no ``keep`` meets both: SS refuses it (:func:`ss_keep`).

Reports are ``d`` bits, packed as a unary report's, with exactly ``k`` ones; :meth:`SS.tally` refuses
any other number of ones (a report of all ones would support every item) and counts the bits.

Counts. A count is ``Bin(n_v, p*) + Bin(n - n_v, q*)`` exactly (each user's bit ``v`` is a Bernoulli
of ``p*`` or ``q*``, independently across users), so the unbiased estimator's variance is the
unary one. Two counts are *not* independent: every report holds exactly ``k`` items, so the counts
sum to ``n k`` and are slightly negatively correlated; the exact joint law is a sum over users of
draws without replacement, with no count-level form we know of. :meth:`SS.simulate` draws each count
from its exact marginal independently: exact means and variances of every count (every per-item
estimate's law), not their covariances; the per-user path (:meth:`SS.perturb`) is exact.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any, Self

import numpy as np

from pldp._validation import as_indices, check_epsilon, check_index_range, check_int
from pldp.budgets import ItemBudgets
from pldp.channel.sampling import generator_words
from pldp.channel.subset import SubsetNode
from pldp.domain import Domain
from pldp.errors import ParameterError
from pldp.fingerprint import canonical_labels
from pldp.mechanisms.reports import bit_counts, check_packed
from pldp.mechanisms.support import SupportCountOracle, grid_keep
from pldp.params import domain_of
from pldp.registry import register
from pldp.tally import Tally

__all__ = ["SS", "ss_k", "ss_keep"]

#: Words per block of :meth:`SS.perturb`.
_BLOCK_WORDS = 1 << 20


def ss_k(epsilon: float, d: int) -> int:
    """The default subset size: ``round(d / (e^eps + 1))``, between 1 and ``d - 1``."""
    return max(1, min(round(d / (math.exp(epsilon) + 1)), d - 1))


def ss_keep(epsilon: float, d: int, k: int) -> int:
    """The largest ``keep`` whose node's claim holds: ``keep (d - k)`` and ``(2**32 - keep) k`` within a
    factor ``e^eps`` of each other, both ways (:func:`~pldp.mechanisms.support.grid_keep`); a
    :class:`~pldp.errors.ParameterError` when no ``keep`` on the grid has that."""
    return grid_keep(epsilon, d - k, k)


@register
class SS(SupportCountOracle):
    """Subset selection (SS), epsilon-LDP: a report is ``k`` of the ``d`` items, order-optimal for large domains.

    Parameters
    ----------
    epsilon : float
        Privacy budget, ``0 < epsilon <= 700``.
    d : int or Domain
        Domain size (>= 2) or the domain itself.
    k : int, optional
        Items in a report, ``1 <= k < d``; default ``round(d / (e^eps + 1))`` (at least 1).

    Examples
    --------
    >>> import numpy as np
    >>> m = SS(4.0, 1000)
    >>> m.k, round(float(m.support[0][0]), 4), round(float(m.support[1][0]), 4)
    (18, 0.5002, 0.0175)
    >>> rep = m.perturb(np.zeros(20_000, dtype=int), np.random.default_rng(1))
    >>> est = m.estimate(m.tally(rep))
    >>> bool(abs(est.frequencies[0] - 1) < 4 * est.std_error[0])
    True
    """

    family = "subset"
    _name = "SS"

    def __init__(self, epsilon: float, d: int | Domain, k: int | None = None) -> None:
        eps = check_epsilon(epsilon)
        dom = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 2))
        self._budgets = self._check_budgets(ItemBudgets.uniform(eps, dom), all_sensitive=True)
        self.epsilon = eps
        self.k = ss_k(eps, self.d) if k is None else check_int(k, "k", 1)
        if self.k >= self.d:
            raise ParameterError(f"k must be below d = {self.d}, got {self.k}")
        self._keep = ss_keep(eps, self.d, self.k)

    # ------------------------------------------------------------------ parameters
    def params(self) -> dict[str, Any]:
        """Canonical parameters: the class, the labels, the budget, ``k`` and the grid threshold the clients run."""
        return {
            "mechanism": "SS",
            "family": self.family,
            "labels": canonical_labels(self.domain.labels),
            "epsilon": self.epsilon,
            "k": self.k,
            "keep_threshold": self._keep,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The SS of :meth:`params`."""
        return cls(float(params["epsilon"]), domain_of(params["labels"]), int(params["k"]))

    def sampler(self) -> SubsetNode:  # type: ignore[override]
        """The sampler node: ``d``, ``k`` and ``keep`` on the grid."""
        return self._node

    @cached_property
    def _node(self) -> SubsetNode:
        return SubsetNode(self.d, self.k, self._keep, self.epsilon)

    def __repr__(self) -> str:
        return f"SS(epsilon={self.epsilon:g}, d={self.d}, k={self.k})"

    # ---------------------------------------------------------------------- client
    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """Randomize item indices into packed subsets (the node's program, ``1 + k`` words a report).

        A report whose choices hit a rejected word is drawn again from fresh words (the law of a
        report given that its words were all accepted is the program's).

        Returns
        -------
        ndarray of uint8, shape (n, ceil(d / 8))
            Row ``u`` is ``numpy.packbits`` of the indicator of user ``u``'s subset.
        """
        arr = as_indices(x, "x").reshape(-1)
        check_index_range(arr, self.d, "x")
        node, per = self._node, 1 + self.k
        out = node.empty_columns(arr.size)["bits"]
        block = max(1, _BLOCK_WORDS // per)
        for start in range(0, arr.size, block):
            todo = np.arange(start, min(start + block, arr.size))
            while todo.size:
                words = generator_words(rng, todo.size * per).reshape(todo.size, per)
                rows, ok = node.sample(arr[todo], words)
                out[todo[ok]] = rows[ok]
                todo = todo[~ok]
        return out

    def report_columns(self, reports: Any) -> dict[str, np.ndarray]:
        return {"bits": self._check_reports(reports).copy()}

    def reports_from_columns(self, columns: Any) -> tuple[Any, ...]:
        return (np.asarray(columns["bits"]),)

    def _check_reports(self, reports: Any) -> np.ndarray:
        rep = check_packed(reports, self.d)  # a TallyError: not (n, ceil(d / 8)) bytes, or padding bits set
        self._node.check_columns({"bits": rep}, rep.shape[0])  # a ReportError: other than k items
        return rep

    # ---------------------------------------------------------------------- server
    def tally(self, reports: Any) -> Tally:
        """The support count of every item: its bit count, over reports of exactly ``k`` items."""
        rep = self._check_reports(reports)
        return self._tally(rep.shape[0], bit_counts(rep, self.d))
