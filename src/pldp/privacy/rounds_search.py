"""The model and the exact search behind :func:`pldp.privacy.over_rounds` (internal).

A memoized chain over ``d`` values is held as independent *parts* (:class:`Part`). A part draws a
memo per value, state ``z`` w.p. ``prr[v, z]``, and each round a report ``y`` w.p. ``irr[z, y]``
from the memo of that round's value. A direct chain (L-GRR, L-IPRR) is one part whose states and
reports are the items. A unary chain (L-OUE, L-OSUE, L-SUE, L-SOUE, L-IDUE) is one part per bit
``k``, with states and reports 0 and 1: its PRR draws every bit independently and its IRR keeps or
flips each bit on its own, so the likelihood of the reports is the product of the parts', each
part reading its own column of bits. The likelihood of reports ``y`` given a history ``h`` is

.. math::

    \\ln P(y \\mid h) = \\sum_{\\text{parts}} \\sum_{v \\in h} \\ln \\sum_z \\mathrm{prr}[v, z]
    \\prod_{t:\\, h_t = v} \\mathrm{irr}[z, y_t].

Types. It does not depend on the order of the rounds: permuting the rounds of ``h``, ``h'`` and
``y`` together changes nothing. A pair of histories is thus its *joint type* ``m`` (``m[v, w]``
rounds with ``h_t = v``, ``h'_t = w``), and the reports only count through how many of each output
fall in each class ``(v, w)``; the multinomial multiplicity of those counts is the same under
``h`` and ``h'`` and cancels in the ratio. :func:`pair_extremes` enumerates the output counts of
one pair's classes; :func:`search` runs it over every joint type up to the relabellings of the
values that leave the chain unchanged and up to swapping ``h`` and ``h'``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import numpy as np

from pldp.channel.direct import DirectNode
from pldp.channel.memo import MemoNode
from pldp.channel.node import Node, NodeVisitor
from pldp.channel.sampling import GRID
from pldp.channel.unary import UnaryNode
from pldp.errors import ParameterError, PLDPError

__all__ = [
    "Chain",
    "Part",
    "best_distinct",
    "chain_of",
    "compositions",
    "history_of",
    "joint_type",
    "pair_cost",
    "pair_extremes",
    "search",
]

#: Output configurations evaluated per numpy batch.
_CHUNK = 1 << 16
#: The most joint types enumerated (before the symmetry reduction).
MAX_TYPES = 1_000_000
#: The largest relabelling group used to reduce the joint types (else: only swapping h and h').
_MAX_GROUP = 720


@dataclass(frozen=True)
class Part:
    """One independent part of a chain: ``log_prr`` (values × states), ``log_irr`` (states × outputs),
    and ``key``: two parts with equal keys and an equal role in a pair have the same losses."""

    log_prr: np.ndarray
    log_irr: np.ndarray
    key: tuple[int, ...]

    @property
    def outputs(self) -> int:
        return int(self.log_irr.shape[1])


@dataclass(frozen=True)
class Chain:
    """A memoized chain as :func:`pldp.privacy.over_rounds` sees it: its parts, the constants of its
    bounds, and the gains of a block of ``n`` rounds of one value (``alpha``: the value of ``h``; ``beta``:
    that of ``h'``)."""

    parts: tuple[Part, ...]
    per_bit: bool
    keys: tuple[tuple[int, ...], ...]
    one: float  # one report's realised LDP epsilon
    permanent: float  # the PRR's realised LDP epsilon
    irr: float  # eps_IRR = max ln IRR[x, y] / IRR[x', y]
    lam: np.ndarray  # -ln min_x PRR[v, x], per value
    alpha: Any  # block sizes n (k,) -> (d, k): the gains of the h-side value of a block of n rounds
    beta: Any  # the same for the h'-side value

    @property
    def d(self) -> int:
        return len(self.keys)


def _log(x: Any) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(x, dtype=float))


def best_distinct(a: np.ndarray, b: np.ndarray) -> float:
    """``max a[v] + b[w]`` over ``v != w``."""
    i, j = int(np.argmax(a)), int(np.argmax(b))
    if i != j:
        return float(a[i] + b[j])
    return float(max(a[i] + np.max(np.delete(b, i)), np.max(np.delete(a, j)) + b[j]))


def _log1p_ratio(keep: int, weights: tuple[int, ...]) -> np.ndarray:
    """``ln((w + keep) / w)`` of each weight (``inf`` for ``w = 0``), from the exact integers."""
    return np.array([math.log1p(keep / w) if w else math.inf for w in weights])


class _ChainOf(NodeVisitor[Chain]):
    """The chain of a memo node, by the kind of its permanent node (``node.permanent.accept(self, node)``)."""

    def _missing(self, node: Node) -> Chain:
        raise ParameterError(f"over_rounds needs a memoized chain (L-GRR, L-IPRR, L-OUE, ...); got a {node.kind} node")

    def _fresh(self, node: Node) -> Chain:
        raise ParameterError(
            f"over_rounds needs a memoized chain; a {node.kind} node draws every report afresh, so r reports "
            "compose to r times its epsilon"
        )

    def memo(self, node: MemoNode, *args: Any) -> Chain:
        return node.permanent.accept(self, node)

    def direct(self, node: DirectNode, chain: MemoNode | None = None) -> Chain:
        if chain is None:
            return self._fresh(node)
        irr = chain.instantaneous
        k1, w1 = node.keep, np.array(node.weights, dtype=float)
        k2, w2 = irr.keep, np.array(irr.weights, dtype=float)  # type: ignore[union-attr]  # a direct chain's IRR
        eye = np.eye(node.d)
        prr, rep = (w1[None, :] + k1 * eye) / GRID, (w2[None, :] + k2 * eye) / GRID
        low = np.sort(w1)[:2]  # min over z != v of w1[z]: the smallest, or the second where v holds it
        others = np.where(w1 == low[0], low[1], low[0])
        log_rho = _log1p_ratio(k2, irr.weights)  # type: ignore[union-attr]
        # a block of n reports all equal to v (Notes of over_rounds): with t = rho^n, the ratio
        # ((w1 + k1) t + G - k1 - w1) / (w1 t + G - w1), written to stay exact as t grows
        near, far, rest = np.log(w1 + k1), _log(GRID - k1 - w1), np.log(GRID - w1)
        with np.errstate(divide="ignore", invalid="ignore"):
            limit = near - _log(w1)  # the PRR's ratio for output v: the block's limit
            head, tail = (GRID - k1 - w1) / (w1 + k1), np.where(w1 > 0, (GRID - w1) / w1, 0.0)

        def alpha(n: np.ndarray) -> np.ndarray:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                grown = np.outer(log_rho, n)
                shrink = np.where(n > 0, np.exp(-grown), 1.0)  # 0 where rho is infinite (only memo v gives v)
                stable = (limit + np.log1p(head * shrink.T) - np.log1p(tail * shrink.T)).T
                unbounded = np.logaddexp(near[:, None] + grown, far[:, None]) - rest[:, None]  # w1[v] = 0
            return np.where(n > 0, np.where(w1[:, None] > 0, stable, unbounded), 0.0)

        keep, chained = chain.chained()
        return Chain(
            parts=(Part(_log(prr), _log(rep), (0,)),),
            per_bit=False,
            keys=tuple((int(a), int(b)) for a, b in zip(node.weights, irr.weights, strict=True)),  # type: ignore[union-attr]
            one=float(np.max(_log1p_ratio(keep, chained))),
            permanent=float(np.max(_log1p_ratio(k1, node.weights))),
            irr=float(np.max(log_rho)),
            lam=-_log(np.minimum(others, w1 + k1) / GRID),
            alpha=alpha,
            beta=lambda n: np.zeros((node.d, len(n))),
        )

    def unary(self, node: UnaryNode, chain: MemoNode | None = None) -> Chain:
        if chain is None:
            return self._fresh(node)
        irr = chain.instantaneous
        a1, b1 = np.array(node.a, dtype=float) / GRID, np.array(node.b, dtype=float) / GRID
        a2, b2 = np.array(irr.a, dtype=float) / GRID, np.array(irr.b, dtype=float) / GRID  # type: ignore[union-attr]
        log_irr = np.log(np.stack([np.stack([1 - b2, b2], -1), np.stack([1 - a2, a2], -1)], 1))  # (d, 2, 2)
        parts = []
        for j in range(node.d):
            p = np.where(np.arange(node.d) == j, a1[j], b1[j])
            key = (node.a[j], node.b[j], irr.a[j], irr.b[j])  # type: ignore[union-attr]
            parts.append(Part(np.log(np.stack([1 - p, p], -1)), log_irr[j], key))
        low_a, low_b = -np.log(np.minimum(a1, 1 - a1)), -np.log(np.minimum(b1, 1 - b1))
        up, down = np.log(a2 / b2), np.log((1 - b2) / (1 - a2))
        G = 1 << 64
        p_star, q_star = (np.array(v, dtype=object) for v in chain.chained())

        def ln(v: Any) -> np.ndarray:
            return np.array([math.log(int(x)) for x in v])

        # a block of n rounds: bit v all ones (alpha), bit v' all zeros (beta); the ratio of two
        # mixtures of a common pair of rows, written to stay exact as n grows
        def alpha(n: np.ndarray) -> np.ndarray:
            shrink = np.exp(-np.outer(n, up))
            return (np.log(a1 / b1) + np.log1p((1 - a1) / a1 * shrink) - np.log1p((1 - b1) / b1 * shrink)).T

        def beta(n: np.ndarray) -> np.ndarray:
            shrink = np.exp(-np.outer(n, down))
            return (np.log((1 - b1) / (1 - a1)) + np.log1p(b1 / (1 - b1) * shrink) - np.log1p(a1 / (1 - a1) * shrink)).T

        return Chain(
            parts=tuple(parts),
            per_bit=True,
            keys=tuple(p.key for p in parts),
            one=best_distinct(ln(p_star) - ln(q_star), ln(G - q_star) - ln(G - p_star)),
            permanent=best_distinct(np.log(a1 / b1), np.log((1 - b1) / (1 - a1))),
            irr=float(np.sum(np.maximum(up, down))),
            lam=low_b.sum() + low_a - low_b,
            alpha=alpha,
            beta=beta,
        )


_CHAIN = _ChainOf()


def chain_of(oracle: Any) -> Chain:
    """The chain of a memoized oracle (its :meth:`~pldp.FrequencyOracle.sampler`) or of a memo node."""
    if isinstance(oracle, Node):
        return oracle.accept(_CHAIN)
    if not callable(getattr(oracle, "sampler", None)):
        raise ParameterError(f"over_rounds needs a memoized chain or its sampler node, got {type(oracle).__name__}")
    try:
        node = oracle.sampler()
    except (NotImplementedError, PLDPError) as exc:
        raise ParameterError(f"over_rounds needs a memoized chain; {type(oracle).__name__} has none: {exc}") from exc
    try:
        return node.accept(_CHAIN)
    except ParameterError as exc:
        raise ParameterError(f"{type(oracle).__name__}: {exc}") from None


@lru_cache(maxsize=512)
def compositions(n: int, k: int) -> np.ndarray:
    """Every vector of ``k`` non-negative integers summing to ``n``: ``(comb(n + k - 1, k - 1), k)``, in
    lexicographic order.

    Built column by column from the last, without recursion (``k`` is ``d * d`` times the outputs:
    hundreds for a unary chain over twenty items, beyond Python's recursion limit)."""
    tails = [np.array([[m]], dtype=np.int32) for m in range(n + 1)]  # the last column: every m <= n
    for _ in range(k - 1):
        tails = [
            np.concatenate(
                [np.column_stack((np.full(len(tails[m - i]), i, np.int32), tails[m - i])) for i in range(m + 1)]
            )
            for m in range(n + 1)
        ]
    out = tails[n]
    out.setflags(write=False)
    return out


def _loglik(part: Part, values: list[int], counts: np.ndarray) -> np.ndarray:
    """``ln P`` of a batch of output counts ``counts[t, i, y]`` (rounds of value ``values[i]`` that report
    ``y``): a sum over the values of the log-sum-exp over their memo's states."""
    log_irr = part.log_irr
    zero = np.isneginf(log_irr)
    terms = part.log_prr[values][None, :, :] + counts @ np.where(zero, 0.0, log_irr).T
    if zero.any():  # a report the state cannot give: that state has probability 0
        terms = np.where(counts @ zero.T.astype(float) > 0, -np.inf, terms)
    top = terms.max(axis=2)
    finite = np.isfinite(top)
    safe = np.where(finite, top, 0.0)
    with np.errstate(divide="ignore"):
        lse = safe + np.log(np.exp(terms - safe[:, :, None]).sum(axis=2))
    return np.where(finite, lse, top).sum(axis=1)


def joint_type(h: tuple[int, ...], g: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """The joint type of two histories as its classes ``(v, w, rounds)``."""
    counts: dict[tuple[int, int], int] = {}
    for v, w in zip(h, g, strict=True):
        counts[v, w] = counts.get((v, w), 0) + 1
    return [(v, w, n) for (v, w), n in sorted(counts.items())]


def history_of(classes: list[tuple[int, int, int]]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A pair of histories of the joint type ``classes``, class after class."""
    h = tuple(v for v, _, n in classes for _ in range(n))
    return h, tuple(w for _, w, n in classes for _ in range(n))


def _part_extremes(part: Part, classes: list[tuple[int, int, int]]) -> tuple[float, float]:
    """``max`` and ``min`` over the output counts of ``ln P(y | h) - ln P(y | h')`` in one part."""
    y = part.outputs
    comps = [compositions(n, y) for _, _, n in classes]
    sizes = tuple(len(c) for c in comps)
    hv, gv = sorted({c[0] for c in classes}), sorted({c[1] for c in classes})
    hi, lo, total = -math.inf, math.inf, math.prod(sizes)
    for start in range(0, total, _CHUNK):
        idx = np.unravel_index(np.arange(start, min(total, start + _CHUNK)), sizes)
        a = np.zeros((len(idx[0]), len(hv), y))
        b = np.zeros((len(idx[0]), len(gv), y))
        for (v, w, _), comp, i in zip(classes, comps, idx, strict=True):
            a[:, hv.index(v)] += comp[i]
            b[:, gv.index(w)] += comp[i]
        la, lb = _loglik(part, hv, a), _loglik(part, gv, b)
        with np.errstate(invalid="ignore"):
            diff = np.where(np.isneginf(la) & np.isneginf(lb), np.nan, la - lb)
        hi, lo = max(hi, float(np.nanmax(diff))), min(lo, float(np.nanmin(diff)))
    return hi, lo


def _roles(parts: tuple[Part, ...], per_bit: bool, classes: list[tuple[int, int, int]]) -> list[list[int]]:
    """The parts of a pair grouped by their losses: a bit's part depends on its item's parameters and,
    only when its item appears in the pair, on which item it is (the other bits see every value alike)."""
    if not per_bit:
        return [[j] for j in range(len(parts))]
    used = {c[0] for c in classes} | {c[1] for c in classes}
    roles: dict[tuple[int, ...], list[int]] = {}
    for j, part in enumerate(parts):
        roles.setdefault((j if j in used else -1, *part.key), []).append(j)
    return list(roles.values())


def pair_extremes(parts: tuple[Part, ...], per_bit: bool, classes: list[tuple[int, int, int]]) -> tuple[float, float]:
    """``(up, down)``: the largest ``ln P(y|h)/P(y|h')`` and the largest ``ln P(y|h')/P(y|h)`` over all
    reports ``y`` of the pair of joint type ``classes`` (the parts' maxima add: each reads its own
    column of the reports)."""
    up = down = 0.0
    for members in _roles(parts, per_bit, classes):
        hi, lo = _part_extremes(parts[members[0]], classes)
        up, down = up + len(members) * hi, down - len(members) * lo
    return up, down


def pair_cost(parts: tuple[Part, ...], per_bit: bool, classes: list[tuple[int, int, int]]) -> int:
    """The output configurations :func:`pair_extremes` evaluates for ``classes``."""
    return sum(
        math.prod(math.comb(n + parts[m[0]].outputs - 1, parts[m[0]].outputs - 1) for _, _, n in classes)
        for m in _roles(parts, per_bit, classes)
    )


def _relabellings(keys: tuple[tuple[int, ...], ...]) -> list[np.ndarray]:
    """The permutations of the values within groups of equal parameters (they leave the chain unchanged)."""
    d = len(keys)
    groups: dict[tuple[int, ...], list[int]] = {}
    for v, key in enumerate(keys):
        groups.setdefault(key, []).append(v)
    classes = [g for g in groups.values() if len(g) > 1]
    if math.prod(math.factorial(len(g)) for g in classes) > _MAX_GROUP:
        return [np.arange(d)]
    out = []
    for images in itertools.product(*(itertools.permutations(g) for g in classes)):
        perm = np.arange(d)
        for g, image in zip(classes, images, strict=True):
            perm[g] = image
        out.append(perm)
    return out


def _lexmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row by row, the lexicographically smaller of ``a`` and ``b``."""
    diff = b.astype(np.int64) - a
    nonzero = diff != 0
    first = nonzero.argmax(axis=1)
    take = nonzero.any(axis=1) & (diff[np.arange(len(a)), first] < 0)
    return np.where(take[:, None], b, a)


def representatives(d: int, rounds: int, keys: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """One joint type ``(d, d)`` of ``rounds`` per orbit of the relabellings and of swapping ``h`` and ``h'``."""
    types = compositions(rounds, d * d).reshape(-1, d, d)
    best: np.ndarray | None = None
    for perm in _relabellings(keys):
        inv = np.argsort(perm)
        image = types[:, inv][:, :, inv]
        for cand in (image, image.transpose(0, 2, 1)):
            flat = cand.reshape(len(types), -1)
            best = flat if best is None else _lexmin(best, flat)
    assert best is not None
    return np.unique(best, axis=0).reshape(-1, d, d)


def search(
    parts: tuple[Part, ...], per_bit: bool, keys: tuple[tuple[int, ...], ...], rounds: int, budget: int
) -> tuple[float, tuple[tuple[int, ...], tuple[int, ...]]] | None:
    """The largest loss over every pair of histories of ``rounds`` rounds and every report, and a pair
    that attains it (``h`` first: ``ln P(y | h) / P(y | h')`` is the loss); None when more than
    ``budget`` output configurations (or :data:`MAX_TYPES` joint types) would be evaluated."""
    d = len(keys)
    if math.comb(rounds + d * d - 1, d * d - 1) > MAX_TYPES:
        return None
    # every (type, output counts) is a composition of the rounds over d * d * k cells, and an orbit
    # of the relabellings and the swap holds at most 2 |group| of them
    orbit = 2 * len(_relabellings(keys))
    if sum(math.comb(rounds + d * d * p.outputs - 1, d * d * p.outputs - 1) for p in parts) > orbit * budget:
        return None
    reps = representatives(d, rounds, keys)
    cost = 0.0
    for p in parts:
        y = p.outputs
        table = np.array([float(math.comb(n + y - 1, y - 1)) for n in range(rounds + 1)])
        cost += float(table[reps].prod(axis=(1, 2)).sum())
    if cost > budget:
        return None
    best, pair = -math.inf, (cast(tuple[int, ...], ()), cast(tuple[int, ...], ()))
    for m in reps:
        classes = [(int(v), int(w), int(m[v, w])) for v, w in zip(*np.nonzero(m), strict=True)]
        up, down = pair_extremes(parts, per_bit, classes)
        if max(up, down) > best:
            h, g = history_of(classes)
            best, pair = max(up, down), ((h, g) if up >= down else (g, h))
    return best, pair
