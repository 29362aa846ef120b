"""Hadamard response: HR (Acharya, Sun, Zhang, AISTATS 2019; symmetric, one block).

A user holding item ``x`` reports one index ``y`` of the ``K x K`` Sylvester-Hadamard matrix,
``K`` the smallest power of two ``> d``: an index of ``C_x`` (the ``+1`` columns of row ``x + 1``)
with probability ``e^eps / (e^eps + 1)``, of its complement otherwise, uniform within the half
(:class:`~pldp.channel.HadamardNode` gives the exact program and its claim). A report *supports*
every item ``v`` with ``y in C_v``; two distinct rows agree on half of the columns, so

.. math::

    p^* = \\frac{e^\\varepsilon}{e^\\varepsilon + 1}, \\qquad q^* = \\frac12 \\text{ (exactly)},

and the support counts are estimated as every pure oracle's (:class:`~pldp.mechanisms.base.Mechanism`):
:math:`\\hat f_v = (C_v/n - q^*) / (p^* - q^*)`, with per-report variance factor

.. math::

    V = \\frac{q^*(1 - q^*)}{(p^* - q^*)^2} = \\left(\\frac{e^\\varepsilon + 1}{e^\\varepsilon - 1}\\right)^2 ,

that of binary randomized response, with a report of ``log2(K)`` bits whatever ``d`` is.

Exact sampling: ``keep`` is the largest integer with ``keep / (2**32 - keep) <= e^eps`` (decided
exactly), so the realised budget is at most ``epsilon``; :attr:`support` is the grid's
``p* = keep / 2**32``.

Counts. The server counts the reports per index (a bincount over ``K``), then the support counts
of all items at once: ``C_v = (n + (H c)_{v+1}) / 2`` with ``H c`` the Walsh-Hadamard transform of
the index counts (:func:`support_counts`, ``O(n + K log K)``). A support count ``C_v`` sums
independent indicators, of mean ``p*`` for a holder of ``v`` and ``1/2`` for another user, so each
estimate has the unary variance. Two counts ``C_u, C_v`` are correlated only through the users
holding the item ``x`` with ``x + 1 = (u + 1) xor (v + 1)`` (covariance ``(2 p* - 1) / 4`` per such
user: the indices both halves hold lie in ``C_x``); no estimate of pldp reads covariances.
:meth:`HR.simulate` draws the index counts with the reports' exact joint law, so its tallies have
them too.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Self

import numpy as np

from pldp._validation import as_counts, check_epsilon, check_int
from pldp.bitcount import parity
from pldp.budgets import ItemBudgets
from pldp.channel.columns import refuse_out_of_range
from pldp.channel.hadamard import HADAMARD_D, HadamardNode, hadamard_order, in_half, into_half
from pldp.channel.sampling import GRID
from pldp.domain import Domain
from pldp.errors import ParameterError, ReportError
from pldp.fingerprint import canonical_labels
from pldp.mechanisms.support import SupportCountOracle, grid_keep, run_program
from pldp.params import domain_of
from pldp.registry import register
from pldp.tally import Tally

__all__ = ["HR", "checked_indices", "hr_keep", "support_counts", "walsh_hadamard"]

#: Reports drawn at once by :meth:`HR.simulate` (a few MB of temporaries).
_BLOCK = 1 << 20
#: The order from which :func:`walsh_hadamard` multiplies Sylvester blocks of ``2**_BLOCK_BITS``.
_FLOAT_ORDER = 1 << 12
_BLOCK_BITS = 8


def hr_keep(epsilon: float) -> int:
    """The largest ``keep < 2**32`` with ``keep / (2**32 - keep) <= e^eps``, decided exactly
    (:func:`~pldp.mechanisms.support.grid_keep` of the ratio ``1:1``)."""
    return grid_keep(epsilon, 1, 1)


def walsh_hadamard(c: np.ndarray) -> np.ndarray:
    """``H c`` for the Sylvester-Hadamard matrix ``H[j, y] = (-1)^popcount(j & y)`` of order ``len(c)``
    (a power of two), exact, ``int64``.

    The fast transform, ``log2(K)`` vectorised butterflies; from order ``2**12`` on, when ``K`` times
    the largest absolute entry is below ``2**53``, ``H`` as a Kronecker product of Sylvester matrices
    of order up to ``2**8``, each a matrix product along its bits in floating point (some three times
    faster at ``2**24``, one core: 0.7 s against 2.2 s). Every partial sum is then an integer of
    magnitude below ``2**53``, so the floating-point result is exact.
    """
    out = np.array(c, dtype=np.int64)  # counts: the two paths read the same integers
    if out.size >= _FLOAT_ORDER and out.size * max(-int(out.min()), int(out.max())) < 1 << 53:
        return _sylvester_blocks(out.astype(np.float64)).astype(np.int64)
    k, h = out.size, 1
    while h < k:
        pairs = out.reshape(-1, 2, h)
        a, b = pairs[:, 0, :].copy(), pairs[:, 1, :]
        pairs[:, 0, :] += b
        pairs[:, 1, :] = a - b
        h *= 2
    return out


def _sylvester_blocks(x: np.ndarray) -> np.ndarray:
    """``H x`` in floating point: ``x``'s index bits taken ``_BLOCK_BITS`` at a time, lowest first, each
    block's Sylvester matrix applied along its bits (``H_{2^a} (x) H_{2^b} = H_{2^(a+b)}``)."""
    bits, done = x.size.bit_length() - 1, 0
    while done < bits:
        r = min(_BLOCK_BITS, bits - done)
        t = np.arange(1 << r)
        h = 1.0 - 2.0 * parity(t[:, None] & t[None, :])
        inner = 1 << done
        y = x.reshape(-1, 1 << r, inner)
        x = (y.reshape(-1, 1 << r) @ h).reshape(-1) if inner == 1 else np.matmul(h, y).reshape(-1)
        done += r
    return x


def checked_indices(reports: Any, k: int) -> np.ndarray:
    """``reports`` as a 1-D ``int64`` array of indices in ``[0, k)``, or a
    :class:`~pldp.errors.ReportError` naming the first report that is not."""
    rep = np.asarray(reports)
    if rep.ndim != 1 or rep.dtype.kind not in "iu":
        raise ReportError(f"HR reports are a 1-D integer array of indices, got shape {rep.shape}")
    rep = rep.astype(np.int64, copy=False)
    refuse_out_of_range(rep, k, "value")
    return rep


def support_counts(values: Any, d: int, k: int) -> np.ndarray:
    """Per item ``v``, the reports with ``y in C_v``: ``(n + (H c)_{v+1}) / 2`` for the index counts ``c``;
    a :class:`~pldp.errors.ReportError` naming the first index not in ``[0, k)`` (:func:`checked_indices`)."""
    rep = checked_indices(values, k)
    c = np.bincount(rep, minlength=k)
    return (int(rep.size) + walsh_hadamard(c)[1 : d + 1]) // 2


@register
class HR(SupportCountOracle):
    """Hadamard response (HR), epsilon-LDP, for large domains.

    A report is one index below ``K``, the smallest power of two ``> d`` (module docstring).

    Parameters
    ----------
    epsilon : float
        Privacy budget, ``0 < epsilon <= 700``.
    d : int or Domain
        Domain size (>= 2) or the domain itself.

    Examples
    --------
    >>> import numpy as np
    >>> m = HR(2.0, 1000)
    >>> m.K, round(float(m.support[0][0]), 4), float(m.support[1][0])
    (1024, 0.8808, 0.5)
    >>> rep = m.perturb(np.zeros(20_000, dtype=int), np.random.default_rng(1))
    >>> est = m.estimate(m.tally(rep))
    >>> bool(abs(est.frequencies[0] - 1) < 4 * est.std_error[0])
    True
    """

    family = "hadamard"
    _name = "HR"

    def __init__(self, epsilon: float, d: int | Domain) -> None:
        eps = check_epsilon(epsilon)
        dom = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 2))
        if len(dom) > HADAMARD_D[1]:
            raise ParameterError(f"d must be at most {HADAMARD_D[1]}, got {len(dom)}")
        self._budgets = self._check_budgets(ItemBudgets.uniform(eps, dom), all_sensitive=True)
        self.epsilon = eps
        self.K = hadamard_order(self.d)
        self._keep = hr_keep(eps)
        if 2 * self._keep <= GRID:
            raise ParameterError(f"epsilon={eps:g} is too small for the 2**32 grid")

    # ------------------------------------------------------------------ parameters
    def params(self) -> dict[str, Any]:
        """Canonical parameters: the class, the labels, the budget, ``K`` and the grid threshold."""
        return {
            "mechanism": "HR",
            "family": self.family,
            "labels": canonical_labels(self.domain.labels),
            "epsilon": self.epsilon,
            "K": self.K,
            "keep_threshold": self._keep,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The HR of :meth:`params`."""
        return cls(float(params["epsilon"]), domain_of(params["labels"]))

    def sampler(self) -> HadamardNode:  # type: ignore[override]
        """The sampler node: the order ``K`` and ``keep`` on the grid."""
        return self._node

    @cached_property
    def _node(self) -> HadamardNode:
        return HadamardNode(self.d, self.K, self._keep, self.epsilon)

    def __repr__(self) -> str:
        return f"HR(epsilon={self.epsilon:g}, d={self.d})"

    # ---------------------------------------------------------------------- client
    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """Randomize item indices, one index in ``[0, K)`` per user (two words each; the node's program).

        Returns
        -------
        ndarray of int64, shape (n,)
        """
        _, out = run_program(self._node, x, self.d, rng, 2)
        return out["value"]

    # ---------------------------------------------------------------------- server
    def tally(self, reports: Any) -> Tally:
        """The support count of every item (:func:`support_counts`: a bincount and one transform)."""
        counts = support_counts(reports, self.d, self.K)  # checks the reports
        return self._tally(np.size(reports), counts)

    def simulate(self, true_counts: Any, rng: np.random.Generator) -> Tally:
        """Count-level simulation with the reports' exact joint law.

        ``Pr(y | x) = (1 - p*) 2/K + (2 p* - 1) [y in C_x] 2/K``: a report is uniform over ``[0, K)``
        w.p. ``2 (1 - p*)``, else uniform over ``C_x``. Item ``x``'s ``t_x`` users send
        ``h_x ~ Bin(t_x, 2 p* - 1)`` of the latter; the uniform ones over all items are one
        multinomial over ``K``, each item's others a multinomial over its half (drawn report by
        report when ``h_x < K/2``). ``O(K log K + sum_x min(h_x, K))``.
        """
        t = as_counts(true_counts, "true_counts", self.d)
        n = int(t.sum())
        k = self.K
        honest = rng.binomial(t, 2 * self._keep / GRID - 1)
        c = rng.multinomial(n - int(honest.sum()), np.full(k, 1.0 / k))
        few = honest < k // 2
        items = np.repeat(np.flatnonzero(few), honest[few])
        for start in range(0, items.size, _BLOCK):
            part = items[start : start + _BLOCK]
            c += np.bincount(into_half(part, rng.integers(0, k, size=part.size), True), minlength=k)
        ys = np.arange(k)
        for x in np.flatnonzero(~few):
            c[in_half(x, ys)] += rng.multinomial(honest[x], np.full(k // 2, 2.0 / k))
        return self._drawn_tally(n, (n + walsh_hadamard(c)[1 : self.d + 1]) // 2)
