"""The exact law of a device's reports in the audit over time (:mod:`pldp.audit.longitudinal`): per
segment of a history, a statistic of the reports (a histogram of items, or counts of bits) and its
log-likelihood under each history, memoized or fresh."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import special

from pldp.audit.events import bit_of
from pldp.audit.histories import Segment, blocks, same_pattern
from pldp.channel import DirectNode, MemoNode, NodeVisitor, UnaryNode
from pldp.channel.memo import CHAIN_GRID
from pldp.channel.sampling import GRID

__all__ = ["MODEL", "Model", "UnaryModel"]


def _xlog(count: np.ndarray, logp: np.ndarray) -> np.ndarray:
    """``count @ logp.T`` with ``0 * log 0 = 0``: the log-likelihood of histograms under rows of ``logp``."""
    finite = np.isfinite(logp)
    out = count @ np.where(finite, logp, 0.0).T
    if not finite.all():
        out[(count > 0).astype(np.int64) @ (~finite).T.astype(np.int64) > 0] = -np.inf
    return out


def _ratio(l0: np.ndarray, l1: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        out = l0 - l1
    return np.where(np.isnan(out), 0.0, out)  # impossible under both: no evidence either way


class Model(ABC):
    """The exact law of a device's reports: its per-segment statistic and log-likelihood.

    ``track`` names the items whose bits a unary statistic counts (the pair's, or every item's when
    the histories' change patterns differ); a direct statistic is the histogram of all items.
    """

    def __init__(self, d: int) -> None:
        self.d = d

    @abstractmethod
    def empty(self, n: int, track: tuple[int, ...]) -> np.ndarray:
        """A zero statistic of ``n`` devices' segment."""

    @abstractmethod
    def add(self, stat: np.ndarray, cols: Mapping[str, np.ndarray], track: tuple[int, ...]) -> None:
        """Count one round's reports (one per device) into ``stat``."""

    @abstractmethod
    def loglik(self, stat: np.ndarray, m: int, value: int, memoized: bool, track: tuple[int, ...]) -> np.ndarray:
        """``(n, parts)``: the log-likelihood of ``m`` reports of ``value`` with statistic ``stat`` (one
        permanent response when memoized), per independent part (one for direct reports, one per
        tracked bit for unary ones)."""

    def llr(
        self, stats: Sequence[np.ndarray], segs: Sequence[Segment], track: tuple[int, ...], memoized: bool
    ) -> np.ndarray:
        """The log-likelihood ratio of history 0 against history 1 given every segment's statistic."""
        if not memoized or same_pattern(segs):  # the ratio factorises over the segments
            total = np.zeros(stats[0].shape[0])
            for stat, seg in zip(stats, segs, strict=True):
                ll0 = self.loglik(stat, seg.length, seg.v0, memoized, track)
                ll1 = self.loglik(stat, seg.length, seg.v1, memoized, track)
                total = total + _ratio(ll0, ll1).sum(axis=1)
            return total
        ll = []
        for side in (0, 1):  # one memo per value of the history, over all its rounds of that value
            side_ll: Any = 0.0
            for value, idx in blocks(segs, side).items():
                stat = sum((stats[i] for i in idx[1:]), stats[idx[0]])
                side_ll = side_ll + self.loglik(stat, sum(segs[i].length for i in idx), value, True, track)
            ll.append(side_ll)
        return _ratio(ll[0], ll[1]).sum(axis=1)


class _DirectModel(Model):
    """Direct reports: the statistic is the segment's histogram of reported items."""

    def __init__(self, one: np.ndarray, prr: np.ndarray | None = None, irr: np.ndarray | None = None) -> None:
        super().__init__(one.shape[0])
        with np.errstate(divide="ignore"):
            self.log_one = np.log(one)
            self.log_prr = None if prr is None else np.log(prr)
            self.log_irr = None if irr is None else np.log(irr)

    def empty(self, n: int, track: tuple[int, ...]) -> np.ndarray:
        return np.zeros((n, self.d), dtype=np.float64)  # counts, float for the matrix products

    def add(self, stat: np.ndarray, cols: Mapping[str, np.ndarray], track: tuple[int, ...]) -> None:
        items = np.asarray(cols["item"], dtype=np.int64)
        stat.reshape(-1)[np.arange(items.size, dtype=np.int64) * self.d + items] += 1.0  # one cell per row

    def loglik(self, stat: np.ndarray, m: int, value: int, memoized: bool, track: tuple[int, ...]) -> np.ndarray:
        if not memoized:
            return _xlog(stat, self.log_one[[value]])
        assert self.log_prr is not None and self.log_irr is not None
        given = _xlog(stat, self.log_irr)  # (n, z): log prod_y Q2(y | z)^C_y
        with np.errstate(invalid="ignore"):
            return special.logsumexp(given + self.log_prr[value], axis=1)[:, None]


def _direct_matrix(keep: int, weights: Sequence[int], grid: int) -> np.ndarray:
    w = np.array([float(v) for v in weights]) / float(grid)
    return np.tile(w, (len(w), 1)) + np.eye(len(w)) * (float(keep) / float(grid))


class UnaryModel(Model):
    """Unary reports: the statistic is how often the pair's two bits were set in the segment."""

    def __init__(
        self, one: tuple[np.ndarray, np.ndarray], prr: tuple[np.ndarray, np.ndarray] | None = None, irr: Any = None
    ) -> None:
        super().__init__(one[0].size)
        self.one, self.prr, self.irr = one, prr, irr

    def empty(self, n: int, track: tuple[int, ...]) -> np.ndarray:
        return np.zeros((n, len(track)), dtype=np.int64)

    def add(self, stat: np.ndarray, cols: Mapping[str, np.ndarray], track: tuple[int, ...]) -> None:
        packed = np.asarray(cols["bits"])
        for j, k in enumerate(track):
            stat[:, j] += bit_of(packed, k)

    def _loglik(self, s: np.ndarray, m: int, k: int, value: int, memoized: bool) -> np.ndarray:
        own = value == k
        if not memoized:
            p = float((self.one[0] if own else self.one[1])[k])
            return special.xlogy(s, p) + special.xlog1py(m - s, -p)
        assert self.prr is not None
        pi = float((self.prr[0] if own else self.prr[1])[k])
        a2, b2 = float(self.irr[0][k]), float(self.irr[1][k])
        with np.errstate(divide="ignore"):
            log_pi, log_not = np.log(pi), np.log1p(-pi)
        set_ = log_pi + special.xlogy(s, a2) + special.xlog1py(m - s, -a2)
        clear = log_not + special.xlogy(s, b2) + special.xlog1py(m - s, -b2)
        return np.logaddexp(set_, clear)

    def loglik(self, stat: np.ndarray, m: int, value: int, memoized: bool, track: tuple[int, ...]) -> np.ndarray:
        cols = [self._loglik(stat[:, j].astype(float), m, k, value, memoized) for j, k in enumerate(track)]
        return np.stack(cols, axis=1)


def _probs(values: Sequence[int], grid: int) -> np.ndarray:
    return np.array([float(v) for v in values]) / float(grid)


class _ModelOf(NodeVisitor[Model]):
    """The model of a sampler's reports over rounds: ``node.accept(MODEL)``; a memo node's by the kind
    of its permanent node, ``node.permanent.accept(MODEL, node)``."""

    def direct(self, node: DirectNode, chain: MemoNode | None = None) -> Model:
        if chain is None:
            return _DirectModel(_direct_matrix(node.keep, node.weights, GRID))
        keep, weights = chain.chained()
        irr = chain.instantaneous
        return _DirectModel(
            _direct_matrix(keep, weights, CHAIN_GRID),
            _direct_matrix(node.keep, node.weights, GRID),
            _direct_matrix(irr.keep, irr.weights, GRID),  # type: ignore[union-attr]  # a direct chain's IRR
        )

    def unary(self, node: UnaryNode, chain: MemoNode | None = None) -> Model:
        if chain is None:
            return UnaryModel((_probs(node.a, GRID), _probs(node.b, GRID)))
        p, q = chain.chained()
        irr = chain.instantaneous
        return UnaryModel(
            (_probs(p, CHAIN_GRID), _probs(q, CHAIN_GRID)),
            (_probs(node.a, GRID), _probs(node.b, GRID)),
            (_probs(irr.a, GRID), _probs(irr.b, GRID)),  # type: ignore[union-attr]  # a unary chain's IRR
        )

    def memo(self, node: MemoNode) -> Model:
        return node.permanent.accept(self, node)


MODEL = _ModelOf()
