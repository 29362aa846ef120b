"""The oracles of the leaves that protect every pair of items alike: OLH, HR, SS.

Each of them has an :class:`~pldp.channel.every_pair.EveryPairLeaf` for its sampler, whose reports
*support* items: the holder's with probability ``p*`` and any other with ``q*`` (the node's
:attr:`~pldp.channel.every_pair.EveryPairLeaf.support`). The server counts, per item, the reports
that support it, and those support counts are estimated as a unary oracle's bit counts (the tally's
kind is ``"unary"``; :func:`pldp.estimation.pure.estimate_counts`). :class:`SupportCountOracle`
holds what the three share: the support, the ``d x d`` support matrix, the tally, the estimate, a
simulation from each count's exact marginal, and the privacy report read from the node's exact
claim. A kind writes its parameters, its reports (perturb, check, tally) and, when it can do
better than independent marginals, its simulation.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any

import numpy as np

from pldp._validation import as_counts, as_indices, check_index_range
from pldp.channel.every_pair import EveryPairLeaf
from pldp.channel.exact import largest_within, ratio_within
from pldp.channel.node import Node
from pldp.channel.sampling import GRID, generator_words
from pldp.channel.words import Cursor
from pldp.errors import EstimationError, ParameterError
from pldp.estimation.pure import estimate_counts
from pldp.estimation.result import Estimate
from pldp.mechanisms.base import Mechanism
from pldp.privacy import PairPrivacyReport
from pldp.tally import Tally

__all__ = ["SupportCountOracle", "grid_keep", "run_program"]

#: The tally of support counts: per-item counts, as a unary mechanism's.
_TALLY_KIND = "unary"


def grid_keep(epsilon: float, a: int, b: int) -> int:
    """The largest ``keep`` in ``[1, 2**32)`` with ``keep a`` and ``(2**32 - keep) b`` within a factor
    ``e^eps`` of each other both ways, decided exactly: the threshold of a node whose claim is that
    ratio (subset selection's ``a = d - k, b = k``; Hadamard response's ``a = b = 1``). A
    :class:`~pldp.errors.ParameterError` when no ``keep`` on the grid has it (a tiny ``epsilon``,
    finer than the grid's steps near ``2**32 b / (a + b)``).

    Examples
    --------
    >>> grid_keep(math.log(3), 1, 1)   # keep / (2**32 - keep) <= 3
    3221225472
    """
    e = math.exp(epsilon)
    guess = math.floor(GRID * b * e / (b * e + a))
    keep = largest_within(guess, 1, GRID - 1, lambda t: ratio_within(t * a, (GRID - t) * b, epsilon))
    # the one way holds at keep = 1; the other shrinks as keep grows, so it holds at some keep
    # exactly when it holds at the largest
    if keep is None or not ratio_within((GRID - keep) * b, keep * a, epsilon):
        raise ParameterError(f"epsilon={epsilon:g} is too small for the 2**32 grid (ratio {a}:{b})")
    return keep


def run_program(
    node: Node, x: Any, d: int, rng: np.random.Generator, per: int
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The items ``x`` (checked to lie in ``[0, d)``) and the payload columns of their reports, drawn
    by ``node``'s own program from ``per`` words of ``rng`` each (a program of a fixed number of
    words: local hashing, Hadamard response, the sketches)."""
    arr = as_indices(x, "x").reshape(-1)
    check_index_range(arr, d, "x")
    n = arr.size
    out = node.empty_columns(n)
    node.draw(
        arr.astype(np.int64),
        Cursor(generator_words(rng, per * n), per * np.arange(n, dtype=np.int64)),
        np.arange(n),
        out,
    )
    return arr, out


class SupportCountOracle(Mechanism):
    """An epsilon-LDP oracle whose sampler protects every pair of items alike and whose reports are
    counted per item by support (module docstring)."""

    epsilon: float

    @abstractmethod
    def sampler(self) -> EveryPairLeaf:  # type: ignore[override]
        """The sampler node: the kind's parameters on the ``2**32`` grid and its claim."""

    @property
    def support(self) -> tuple[np.ndarray, np.ndarray]:
        p, q = self.sampler().support
        return np.full(self.d, p), np.full(self.d, q)

    def channel(self) -> np.ndarray:
        """The ``d x d`` support matrix: ``[x, v]`` is the probability that a report of ``x`` supports
        ``v`` (``p*`` on the diagonal, ``q*`` elsewhere); the channel of whole reports has as many
        outputs as the node has reports (its module docstring)."""
        p, q = self.sampler().support
        return np.full((self.d, self.d), q) + np.eye(self.d) * (p - q)

    # ---------------------------------------------------------------------- server
    def _tally(self, n: int, counts: np.ndarray) -> Tally:
        return Tally(n, counts, _TALLY_KIND, self.fingerprint)

    def simulate(self, true_counts: Any, rng: np.random.Generator) -> Tally:
        """Count-level simulation: :math:`C_v \\sim \\mathrm{Bin}(t_v, p^*) + \\mathrm{Bin}(n - t_v, q^*)`,
        independently: each count's exact law (how the real counts covary: the kind's module
        docstring). O(d)."""
        t = as_counts(true_counts, "true_counts", self.d)
        n = int(t.sum())
        p, q = self.sampler().support
        return self._drawn_tally(n, rng.binomial(t, p) + rng.binomial(n - t, q))

    def estimate(self, tally: Tally, method: str = "unbiased", **options: Any) -> Estimate:
        """Estimate the item distribution from a tally of support counts.

        ``method`` is ``"unbiased"``, ``"norm_sub"``, ``"mle"`` (the likelihood of the counts'
        binomial marginals, as for unary reports) or ``"recover"``; see
        :func:`pldp.estimation.pure.estimate_counts`.
        """
        self._check_method(method)
        tally = self._check_tally(tally)
        if tally.kind != _TALLY_KIND or tally.d != self.d:
            raise EstimationError(f"a {tally.kind} tally over {tally.d} items does not fit {self!r}")
        return estimate_counts(_TALLY_KIND, self.support, self.domain, tally.n, tally.counts, method, **options)

    # --------------------------------------------------------------------- privacy
    def privacy(self) -> PairPrivacyReport:
        """Exact check of epsilon-LDP: every pair of items alike, one group of items, the realised
        budget the node's claim (:meth:`~pldp.channel.every_pair.EveryPairLeaf.claim_ratio`)."""
        (row,), _ = self.sampler().claims()
        return PairPrivacyReport(
            "LDP",
            np.array([self.epsilon]),
            [np.arange(self.d)],
            np.array([[self.epsilon]]),
            np.array([[row.realised]]),
        )
