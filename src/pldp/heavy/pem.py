"""PEM, the prefix extending method, over local hashing: the most frequent strings of an unknown domain.

Wang, Li, Jha, "Locally Differentially Private Heavy Hitter Identification", IEEE TDSC 18(2), 2021
(arXiv:1708.06674, Sec. 4; the prefix extending method). Answers are rows of ``L = max_bytes``
bytes (:mod:`pldp.heavy.strings`), and prefixes grow a byte at a time.

The client. A user draws her group ``j`` uniformly from ``1 .. L``, independently of her answer,
and reports the fingerprint of her answer's first ``j`` bytes through local hashing at her budget
:math:`\\varepsilon` (OLH, :class:`~pldp.channel.HashedNode` over the fingerprints, ``g`` OLH's
``round(e^eps) + 1``). One report ``(group, seed, value)``: since the group tells nothing of the
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

What it cannot see. Answers longer than ``L`` bytes are seen as their first ``L`` bytes. Each
step keeps ``width`` prefixes on estimates of ``n / L`` users, so an answer whose share is not
well above one group's standard error at an absent item, :math:`\\sqrt{V / n_j}` with ``V``
OLH's factor, may drop out at any step (:attr:`Discovery.floor` states three of them).

Cost. Each group's reports against its ``256 width`` candidates: ``256 width n`` hash evaluations
in all (:func:`pldp.mechanisms.hashed.item_support`), and ``n`` fingerprints at the clients.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp._validation import check_epsilon, check_int
from pldp.channel.claims import Verification, check_claims
from pldp.channel.columns import refuse_out_of_range
from pldp.channel.hashed import HashedNode
from pldp.domain import Domain
from pldp.errors import ParameterError, ReportError
from pldp.estimation import Estimate
from pldp.heavy.strings import FINGERPRINTS, answer_rows, fingerprints, shown
from pldp.mechanisms.hashed import item_support, olh_g, olh_grid
from pldp.mechanisms.support import run_program

__all__ = ["PEM", "Discovery"]


@dataclass(frozen=True)
class Discovery:
    """The strings a heavy-hitter protocol found, with their estimated shares.

    Attributes
    ----------
    estimate : Estimate
        Over the discovered answers (text, or bytes that are not UTF-8), largest first: shares,
        variances, :meth:`~pldp.estimation.Estimate.ci`.
    max_bytes : int
        The bound: a longer answer is seen as its first ``max_bytes`` bytes.
    floor : float
        Three standard errors of one group's estimate at an absent item: an answer rarer than this
        may be missed.
    """

    estimate: Estimate
    max_bytes: int
    floor: float

    @property
    def answers(self) -> list[Any]:
        """The discovered answers, largest estimate first."""
        return list(self.estimate.domain.labels)

    @property
    def limits(self) -> str:
        """What the discovery cannot see, in words."""
        return (
            f"answers longer than {self.max_bytes} bytes are seen as their first {self.max_bytes} bytes; "
            f"an answer held by fewer than about {self.floor:.2%} of users may be missed"
        )


class PEM:
    """The prefix extending method over OLH: ``perturb`` on each device, ``discover`` at the server.

    Parameters
    ----------
    epsilon : float
        Every user's budget.
    max_bytes : int, default 16
        ``L``: the bytes of an answer kept (1 to 64), and the number of groups.
    g : int, optional
        OLH's hash range; default ``round(e^eps) + 1``.

    Examples
    --------
    >>> import numpy as np
    >>> pem = PEM(4.0, max_bytes=3)
    >>> answers = ["cat"] * 5000 + ["dog"] * 3000 + ["owl"] * 2000
    >>> found = pem.discover(pem.perturb(answers, np.random.default_rng(7)), top=2)
    >>> found.answers
    ['cat', 'dog']
    """

    def __init__(self, epsilon: float, max_bytes: int = 16, g: int | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.max_bytes = check_int(max_bytes, "max_bytes", 1)
        if self.max_bytes > 64:
            raise ParameterError(f"max_bytes must be at most 64, got {self.max_bytes}")
        self.g = olh_g(self.epsilon) if g is None else check_int(g, "g", 2)
        keep, weight = olh_grid(self.epsilon, self.g)
        self.node = HashedNode(FINGERPRINTS, self.g, "xxh32", keep, weight, self.epsilon)

    def __repr__(self) -> str:
        return f"PEM(epsilon={self.epsilon:g}, max_bytes={self.max_bytes}, g={self.g})"

    def privacy(self) -> Verification:
        """The exact check of a report's claim: the OLH node's (the group is independent of the answer)."""
        return check_claims(self.node)

    # ---------------------------------------------------------------------- client
    def perturb(self, answers: Sequence[Any], rng: np.random.Generator) -> np.ndarray:
        """One report per answer (text or bytes): ``(group, seed, value)``, ``int64``, shape ``(n, 3)``.

        The group (``0 .. L-1`` for prefixes of ``1 .. L`` bytes) is drawn first, then the node's
        program randomizes the prefix's fingerprint (two words of ``rng`` each).
        """
        rows = answer_rows(answers, self.max_bytes)
        n = rows.shape[0]
        group = rng.integers(0, self.max_bytes, size=n)
        items = np.empty(n, dtype=np.int64)
        for j in range(self.max_bytes):
            mine = np.flatnonzero(group == j)
            items[mine] = fingerprints(rows[mine, : j + 1])
        _, out = run_program(self.node, items, FINGERPRINTS, rng, 2)
        return np.stack([group, out["seed"], out["value"]], axis=1)

    # ---------------------------------------------------------------------- server
    def discover(self, reports: Any, top: int = 20, width: int | None = None) -> Discovery:
        """The ``top`` answers of the largest estimated shares, found a byte at a time (module docstring).

        Parameters
        ----------
        reports : array_like of int, shape (n, 3)
            :meth:`perturb`'s ``(group, seed, value)`` rows.
        top : int, default 20
            The answers returned.
        width : int, optional
            Prefixes kept at each step; default ``top``.
        """
        rep = self._checked(reports)
        top = check_int(top, "top", 1)
        width = top if width is None else check_int(width, "width", top)
        p, q = self.node.support
        n = rep.shape[0]
        kept = np.zeros((1, 0), dtype=np.uint8)
        f = var = np.zeros(0)
        n_group = 1
        for j in range(self.max_bytes):
            cand = _extend(kept)
            mine = rep[rep[:, 0] == j][:, 1:]
            n_group = max(mine.shape[0], 1)
            counts = item_support(mine, fingerprints(cand), self.g)
            f = (counts / n_group - q) / (p - q)
            clipped = np.clip(f, 0.0, 1.0)
            var = (clipped * p * (1 - p) + (1 - clipped) * q * (1 - q)) / (n_group * (p - q) ** 2)
            var += clipped * (1 - clipped) * (n - n_group) / (n_group * max(n - 1, 1))  # the group's sample
            order = np.argsort(-f, kind="stable")[: width if j + 1 < self.max_bytes else top]
            kept, f, var = cand[order], f[order], var[order]
        floor = 3 * math.sqrt(q * (1 - q) / (n_group * (p - q) ** 2))
        labels = [shown(row) for row in kept]
        est = Estimate(f, var, n, "unbiased", Domain(labels), info={"width": width})
        return Discovery(est, self.max_bytes, floor)

    def _checked(self, reports: Any) -> np.ndarray:
        rep = np.asarray(reports)
        if rep.ndim != 2 or rep.shape[1] != 3 or rep.dtype.kind not in "iu":
            raise ReportError(f"PEM reports are an (n, 3) integer array of (group, seed, value), got shape {rep.shape}")
        rep = rep.astype(np.int64, copy=False)
        for column, name, high in ((0, "group", self.max_bytes), (1, "seed", self.node.seeds), (2, "value", self.g)):
            refuse_out_of_range(rep[:, column], high, name)
        return rep


def _extend(kept: np.ndarray) -> np.ndarray:
    """Each kept prefix (rows of ``uint8``) extended by one byte: 1 to 255 for the first byte, 0 to 255
    after a byte that is not ``0x00``, and ``0x00`` alone after one (the answer has ended)."""
    if kept.shape[1] == 0:
        return np.arange(1, 256, dtype=np.uint8)[:, None]
    ended = kept[:, -1] == 0
    open_rows = kept[~ended]
    grown = np.repeat(open_rows, 256, axis=0)
    tail = np.tile(np.arange(256, dtype=np.uint8), open_rows.shape[0])
    closed = kept[ended]
    return np.concatenate(
        [np.column_stack([grown, tail]), np.column_stack([closed, np.zeros(closed.shape[0], dtype=np.uint8)])]
    ).astype(np.uint8)
