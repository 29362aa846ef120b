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
through that level's node (its own ``g``), the level in the clear, like RCF
(:class:`~pldp.protocols.RCF`). At each step the levels' estimates of a candidate are combined with
weights :math:`w_t \\propto n_{tj} / V_t` (:math:`V_t` OLH's factor at an absent item), the
inverse of their variances at an absent item: the pooled estimate's variance there is
:math:`1 / \\sum_t (n_{tj} / V_t)`, and elsewhere :math:`\\sum_t w_t^2 \\operatorname{Var}
\\hat f_t` plus the groups' sampling, :math:`f (1 - f) \\sum_t w_t^2 (n_t - n_{tj}) / (n_{tj} (n_t - 1))`
(level ``t``'s group is a sample of its ``n_t`` users). It estimates the population's share when an answer does not
depend on its holder's level; otherwise it is the levels' shares weighted by ``w``.
:func:`mix_cost` gives what a mix of levels costs against a uniform budget at its mean.

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
from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp._validation import check_epsilon, check_index_range, check_int
from pldp.channel.claims import Verification, check_claims
from pldp.channel.columns import refuse_first, refuse_out_of_range
from pldp.channel.hashed import HashedNode
from pldp.domain import Domain
from pldp.errors import ParameterError, ReportError
from pldp.estimation import Estimate
from pldp.heavy.strings import FINGERPRINTS, answer_rows, fingerprints, shown
from pldp.mechanisms.hashed import item_support, olh_factor, olh_g, olh_grid
from pldp.mechanisms.support import run_program
from pldp.protocols.leveled import check_levels

__all__ = ["PEM", "Discovery", "mix_cost", "noise_quantile"]


@dataclass(frozen=True)
class Discovery:
    """The strings a heavy-hitter protocol found, with their estimated shares.

    The answers are the last step's largest estimates, and the same reports chose and estimated
    them: an answer near the cut is there partly because its noise was high, so its estimate leans
    high and its interval (:meth:`~pldp.estimation.Estimate.ci`) does not have its nominal coverage.
    An answer whose estimate is below :attr:`floor` may be a string nobody holds (a real prefix
    followed by bytes that rose on noise); :attr:`confident` are those above it.

    Attributes
    ----------
    estimate : Estimate
        Over the discovered answers (text, or bytes that are not UTF-8), largest first: shares,
        variances, intervals. There may be fewer than asked when fewer candidates exist.
    max_bytes : int
        The bound: a longer answer is seen as its first ``max_bytes`` bytes.
    floor : float
        The share below which an estimate may be noise: :func:`noise_quantile` of the last step's
        candidates (at most a 5 % chance that any of them, held by nobody, is estimated above it)
        times the standard error at an absent item.
    """

    estimate: Estimate
    max_bytes: int
    floor: float

    @property
    def answers(self) -> list[Any]:
        """The discovered answers, largest estimate first."""
        return list(self.estimate.domain.labels)

    @property
    def confident(self) -> list[Any]:
        """The answers whose estimate is above :attr:`floor`: unlikely to be held by nobody."""
        return [a for a, f in zip(self.answers, self.estimate.frequencies, strict=True) if f > self.floor]

    @property
    def limits(self) -> str:
        """What the discovery cannot see, in words."""
        return (
            f"answers longer than {self.max_bytes} bytes are seen as their first {self.max_bytes} bytes; "
            f"an answer held by fewer than about {self.floor:.2%} of users may be missed, and one estimated "
            "below that may be held by nobody; the estimates of answers near the cut lean high"
        )


class PEM:
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
        self.levels = check_levels([check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilon, dtype=float))])
        self.max_bytes = check_int(max_bytes, "max_bytes", 1)
        if self.max_bytes > 64:
            raise ParameterError(f"max_bytes must be at most 64, got {self.max_bytes}")
        gs = [olh_g(e) if g is None else check_int(g, "g", 2) for e in self.levels]
        self.nodes = tuple(
            HashedNode(FINGERPRINTS, gl, "xxh32", *olh_grid(float(e), gl), float(e))
            for e, gl in zip(self.levels, gs, strict=True)
        )

    def __repr__(self) -> str:
        eps = f"{self.levels[0]:g}" if self.levels.size == 1 else str(self.levels.tolist())
        return f"PEM(epsilon={eps}, max_bytes={self.max_bytes})"

    def privacy(self) -> tuple[Verification, ...]:
        """The exact check of each level's report: its OLH node's claim (the group is independent of
        the answer, the level is in the clear)."""
        return tuple(check_claims(node) for node in self.nodes)

    # ---------------------------------------------------------------------- client
    def perturb(self, answers: Sequence[Any], rng: np.random.Generator, level: Any = None) -> np.ndarray:
        """One report per answer (text or bytes): ``(level, group, seed, value)``, ``int64``, shape ``(n, 4)``.

        ``level`` gives each user's level (an index into the levels; default 0). The group
        (``0 .. L-1`` for prefixes of ``1 .. L`` bytes) is drawn first, then each level's node
        randomizes its users' fingerprints (two words of ``rng`` each).
        """
        rows = answer_rows(answers, self.max_bytes)
        n = rows.shape[0]
        lev = np.zeros(n, dtype=np.int64) if level is None else np.asarray(level)
        if lev.dtype.kind not in "iu":  # a budget given for its level's index would report at another budget
            raise ParameterError(f"level holds each user's level index (an integer), got dtype {lev.dtype}")
        if lev.shape != (n,):
            raise ParameterError(f"level needs one index per answer ({n}), got shape {np.shape(level)}")
        check_index_range(lev, self.levels.size, "level", ParameterError)
        group = rng.integers(0, self.max_bytes, size=n)
        items = np.empty(n, dtype=np.int64)
        for j in range(self.max_bytes):
            mine = np.flatnonzero(group == j)
            items[mine] = fingerprints(rows[mine, : j + 1])
        out = np.zeros((n, 4), dtype=np.int64)
        out[:, 0], out[:, 1] = lev, group
        for t, node in enumerate(self.nodes):
            mine = np.flatnonzero(lev == t)
            _, cols = run_program(node, items[mine], FINGERPRINTS, rng, 2)
            out[mine, 2], out[mine, 3] = cols["seed"], cols["value"]
        return out

    # ---------------------------------------------------------------------- server
    def discover(self, reports: Any, top: int = 20, width: int | None = None) -> Discovery:
        """The ``top`` answers of the largest estimated shares, found a byte at a time (module docstring).

        Parameters
        ----------
        reports : array_like of int, shape (n, 4)
            :meth:`perturb`'s ``(level, group, seed, value)`` rows.
        top : int, default 20
            The answers returned.
        width : int, optional
            Prefixes kept at each step; default ``top``.
        """
        rep = self._checked(reports)
        top = check_int(top, "top", 1)
        width = top if width is None else check_int(width, "width", top)
        n = rep.shape[0]
        kept = np.zeros((1, 0), dtype=np.uint8)
        f = var = np.zeros(0)
        floor = 0.0
        level_n = np.bincount(rep[:, 0], minlength=self.levels.size)
        for j in range(self.max_bytes):
            cand = _extend(kept)
            mine = rep[rep[:, 1] == j]
            if mine.shape[0] == 0:
                raise ReportError(f"group {j} (prefixes of {j + 1} bytes) has no reports: PEM needs every group")
            f, var, floor = self._step(mine, fingerprints(cand), level_n, cand.shape[0])
            order = np.argsort(-f, kind="stable")[: width if j + 1 < self.max_bytes else top]
            kept, f, var = cand[order], f[order], var[order]
        labels = [shown(row) for row in kept]
        est = Estimate(f, var, n, "unbiased", Domain(labels), info={"width": width, "candidates": int(cand.shape[0])})
        return Discovery(est, self.max_bytes, floor)

    def _step(
        self, mine: np.ndarray, items: np.ndarray, level_n: np.ndarray, tests: int
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """One group's estimates of the candidates' fingerprints ``items``, their variances and the
        floor: each level's unbiased estimate, combined with weights ``n_tj / V_t``; each level's
        group is a sample of that level's ``n_t`` users (module docstring)."""
        fs, vs, ws, samples = [], [], [], []
        for t, node in enumerate(self.nodes):
            at = mine[mine[:, 0] == t][:, 2:]
            n_t = at.shape[0]
            if n_t == 0:
                continue
            p, q = node.support
            factor = q * (1 - q) / (p - q) ** 2  # V at an absent item, on the node's grid
            f_t = (item_support(at, items, node.g) / n_t - q) / (p - q)
            c = np.clip(f_t, 0.0, 1.0)
            fs.append(f_t)
            vs.append((c * p * (1 - p) + (1 - c) * q * (1 - q)) / (n_t * (p - q) ** 2))
            ws.append(n_t / factor)
            total = int(level_n[t])
            samples.append((total - n_t) / (n_t * max(total - 1, 1)))  # times f(1 - f): the group's sample
        if not ws:
            return np.zeros(items.size), np.full(items.size, np.inf), math.inf
        w = np.asarray(ws) / sum(ws)
        f = np.asarray(w @ np.asarray(fs))
        c = np.clip(f, 0.0, 1.0)
        var = np.asarray((w**2) @ np.asarray(vs)) + c * (1 - c) * float((w**2) @ np.asarray(samples))
        return f, var, noise_quantile(tests) / math.sqrt(sum(ws))

    def _checked(self, reports: Any) -> np.ndarray:
        rep = np.asarray(reports)
        if rep.ndim != 2 or rep.shape[1] != 4 or rep.dtype.kind not in "iu":
            raise ReportError(
                f"PEM reports are an (n, 4) integer array of (level, group, seed, value), got shape {rep.shape}"
            )
        rep = rep.astype(np.int64, copy=False)
        refuse_out_of_range(rep[:, 0], self.levels.size, "level")
        refuse_out_of_range(rep[:, 1], self.max_bytes, "group")
        refuse_out_of_range(rep[:, 2], self.nodes[0].seeds, "seed")
        g = np.array([node.g for node in self.nodes])[rep[:, 0]]
        bad = (rep[:, 3] < 0) | (rep[:, 3] >= g)
        refuse_first(bad, lambda i: f"value {int(rep[i, 3])} is not in [0, {int(g[i])})")
        return rep


def noise_quantile(tests: int, alpha: float = 0.05) -> float:
    """``z`` with at most ``alpha`` chance that the largest of ``tests`` standard normal errors exceeds it
    (Bonferroni: the ``1 - alpha / tests`` quantile); :attr:`Discovery.floor` in standard errors.

    Examples
    --------
    >>> round(noise_quantile(5120), 2)   # 20 kept prefixes times 256 bytes
    4.27
    """
    from scipy.special import ndtri  # scipy is imported where it is used

    return float(ndtri(1.0 - alpha / max(int(tests), 1)))


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
