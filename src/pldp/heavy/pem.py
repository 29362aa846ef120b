"""PEM, the prefix extending method, over local hashing: the most frequent strings of an unknown domain.

Wang, Li, Jha, "Locally Differentially Private Heavy Hitter Identification", IEEE TDSC 18(2), 2021
(arXiv:1708.06674, Sec. 4; the prefix extending method). Answers are rows of ``L = max_bytes``
bytes (:mod:`pldp.heavy.strings`), and prefixes grow a byte at a time.

The client. A user draws her group ``j`` uniformly from ``1 .. L``, independently of her answer,
and reports the fingerprint of her answer's first ``j`` bytes through local hashing at her budget
:math:`\\varepsilon` (OLH, :class:`~pldp.channel.HashedNode` over the fingerprints, ``g`` OLH's
``round(e^eps) + 1``). One report ``(level, group, seed, value)``: since the group tells nothing of the
answer, the report is :math:`\\varepsilon`-LDP exactly when the node's claim holds, and
:meth:`PEM.privacy` checks it exactly.

The server (:meth:`PEM.discover`). Group 1 estimates the 255 one-byte prefixes (a first byte
``0x00`` would be an empty answer) and keeps the ``width`` largest estimates; group ``j`` estimates
each kept prefix of ``j - 1`` bytes extended by each of the 256 bytes (a prefix that has ended,
last byte ``0x00``, only by ``0x00``), and keeps the ``width`` largest; group ``L``'s estimates of
its candidates are the result, largest first. Each estimate is OLH's unbiased one over the
group's ``n_j`` reports,

.. math::

    \\hat f = \\frac{C / n_j - q^*}{p^* - q^*}, \\qquad
    \\operatorname{Var} \\hat f = \\frac{f p^*(1 - p^*) + (1 - f) q^*(1 - q^*)}{n_j (p^* - q^*)^2},

of the share of group ``j`` holding the prefix. That share estimates the population's: the group
is a uniform sample of ``n_j`` of the ``n`` users, drawn without replacement, so the estimate of the
population's share has the variance above plus the sample's own,
:math:`f (1 - f) (n - n_j) / (n_j (n - 1))` (both taken at ``f`` clipped to ``[0, 1]``).

Levels. With budget levels (``epsilon`` a sequence) each user reports at her level's budget
through that level's node, the level in the clear; at each step the levels' estimates of a
candidate are pooled by inverse variance at an absent item, each level's group a sample of that
level's users (:mod:`pldp.heavy.pooled`). :func:`mix_cost` gives what a mix of levels costs against
a uniform budget at its mean.

What it cannot see. Answers longer than ``L`` bytes are seen as their first ``L`` bytes. Each
step keeps ``width`` prefixes on estimates of ``n / L`` users, so an answer whose share is not
well above one group's standard error at an absent item, :math:`\\sqrt{V / n_j}` with ``V``
OLH's factor (pooled over the levels), may drop out at any step; among ``256 width`` candidates the
largest error of those held by nobody is some four of these, so a string nobody holds can be
returned, and the returned estimates lean high (the same reports choose and estimate them):
:class:`Discovery` states the floor below which an estimate may be noise.

Cost. Each group's reports against its ``256 width`` candidates: ``256 width n`` hash evaluations
in all (:func:`pldp.mechanisms.hashed.item_support`), and ``n`` fingerprints at the clients.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp._validation import check_int
from pldp.channel.hashed import HashedNode
from pldp.domain import Domain
from pldp.errors import ParameterError
from pldp.estimation import Estimate
from pldp.heavy.base import HeavyHitter
from pldp.heavy.discovery import Discovery
from pldp.heavy.pooled import budgets_text, checked_protocol, level_nodes
from pldp.heavy.strings import shown
from pldp.heavy.tree import search
from pldp.mechanisms.hashed import olh_factor, olh_g
from pldp.protocols.leveled import check_levels

__all__ = ["PEM", "mix_cost"]


class PEM(HeavyHitter):
    """The prefix extending method over OLH: ``perturb`` on each device, ``discover`` at the server.

    Parameters
    ----------
    epsilon : float or sequence of float
        Every user's budget, or the budget levels (strictly increasing): each user reports at her
        level's budget, the level in the clear (module docstring, "Levels").
    max_bytes : int, default 16
        ``L``: the bytes of an answer kept (1 to 64), and the number of groups.
    g : int, optional
        OLH's hash range at every level; default each level's ``round(e^eps) + 1``.

    Examples
    --------
    >>> import numpy as np
    >>> pem = PEM(4.0, max_bytes=3)
    >>> answers = ["cat"] * 5000 + ["dog"] * 3000 + ["owl"] * 2000
    >>> found = pem.discover(pem.perturb(answers, np.random.default_rng(7)), top=2)
    >>> found.answers
    ['cat', 'dog']
    """

    def __init__(self, epsilon: float | Sequence[float], max_bytes: int = 16, g: int | None = None) -> None:
        self.levels, self.max_bytes, _ = checked_protocol(epsilon, max_bytes)
        self.g = g
        self.nodes = level_nodes(self.levels, g)

    def __repr__(self) -> str:
        return f"PEM(epsilon={budgets_text(self.levels)}, max_bytes={self.max_bytes})"

    name = "PEM"

    @property
    def parts(self) -> dict[str, tuple[HashedNode, ...]]:
        """One part: the prefix's fingerprint through each level's node."""
        return {"": self.nodes}

    @property
    def node_options(self) -> dict[str, Any]:
        """PEM's node: a prefix a byte longer per group."""
        return {"protocol": "pem", "max_bytes": self.max_bytes}

    def params(self) -> dict[str, Any]:
        """The constructor's arguments, as JSON values (:func:`pldp.heavy.heavy_from_params` rebuilds it)."""
        out: dict[str, Any] = {"name": "PEM", "epsilon": self.levels.tolist(), "max_bytes": self.max_bytes}
        return out if self.g is None else {**out, "g": int(self.g)}

    # ---------------------------------------------------------------------- server
    def discover(self, reports: Any, top: int = 20, width: int | None = None, pooling: str = "variance") -> Discovery:
        """The ``top`` answers of the largest estimated shares, found a byte at a time (module docstring).

        Parameters
        ----------
        reports : array_like of int, shape (n, 4)
            :meth:`perturb`'s ``(level, group, seed, value)`` rows.
        top : int, default 20
            The answers returned.
        width : int, optional
            Prefixes kept at each step; default ``top``.
        pooling : {"variance", "robust"}, default "variance"
            How the budget levels' estimates are pooled (:func:`~pldp.heavy.pooled.absent_weights`): by
            inverse variance, or so that a report moves an estimate alike whatever level it claims
            (fake users then gain nothing by claiming the largest budget, at a cost in variance).
        """
        rep = self.checked(reports)
        top = check_int(top, "top", 1)
        width = top if width is None else check_int(width, "width", top)
        found = search(self.nodes, rep, self.max_bytes, 8, width, top, pooling=pooling)
        labels = [shown(row) for row in found.rows]
        info = {"width": width, "candidates": found.candidates, "pooling": pooling}
        est = Estimate(found.frequencies, found.variance, rep.shape[0], "unbiased", Domain(labels), info=info)
        return Discovery(est, self.max_bytes, found.floor, found.miss)


def mix_cost(levels: Any, shares: Any) -> float:
    """The variance of PEM's pooled estimate at an absent item under a mix of levels, over a uniform
    budget's at the mix's mean budget (same users): :math:`(1 / \\sum_t s_t / V_t) / V(\\bar\\varepsilon)`
    with ``V`` OLH's factor at its own ``g``: above 1 when the mix costs accuracy, below 1 when it
    gains (``1 / V`` grows faster than linearly in the budget, so a spread of budgets usually gains).

    Examples
    --------
    >>> round(mix_cost([1.0, 4.0], [0.5, 0.5]), 2)   # half at 1, half at 4: the mean 2.5
    0.38
    """
    eps = check_levels(levels)
    s = np.asarray(shares, dtype=float).reshape(-1)
    if s.shape != eps.shape or (s < 0).any() or not math.isclose(float(s.sum()), 1.0):
        raise ParameterError(f"shares must be {eps.size} non-negative numbers summing to 1, got {s.tolist()}")
    pooled = 1.0 / float(np.sum(s / np.array([olh_factor(e, olh_g(e)) for e in eps])))
    mean = float(np.dot(s, eps))
    return pooled / olh_factor(mean, olh_g(mean))
