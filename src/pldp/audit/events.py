"""The most powerful test of a pair of inputs, from the exact channel of a sampler.

For two inputs :math:`x, x'` the test that proves the most about the privacy loss is the event
:math:`S^* = \\arg\\max_y \\Pr[y \\mid x] / \\Pr[y \\mid x']` (the outputs of largest likelihood
ratio; Neyman–Pearson): then :math:`\\Pr[S^* \\mid x]/\\Pr[S^* \\mid x']` is the pair's realised
:math:`e^{\\varepsilon}`, and an audit of a correct sampler converges to it. Reports are large
(a unary report has :math:`2^d` values), so each pair is reduced to a *statistic* of the report
whose law under both inputs is exact and small, and of which the likelihood ratio is a function:

* direct encoding: the output, with outputs of equal probability pairs merged (for two items of
  one mechanism: "the report is :math:`x`", "is :math:`x'`", "other");
* unary encoding: per group of bits with equal bit probabilities under both inputs, the number of
  set bits (for two items of one mechanism: bit :math:`x` and bit :math:`x'`, so the test is "bit
  :math:`x` set and bit :math:`x'` clear"; for two budget levels, bit :math:`x` and the number of
  other set bits);
* padding-and-sampling: the bits of the two sets and of the dummy items, enumerated;
* a leveled report: its item report's statistic and its level report's, independent given the
  input, so their laws multiply (PLDP-FEBSF's level is audited on the *whole* report, ERRATA
  FEBSF-6);
* attributes: the statistic of the attribute that differs (the others cancel);
* any other leaf: the statistic its node gives (:meth:`~pldp.channel.Node.pair_law`).

The probabilities are those of the integer thresholds the samplers run (``2**-32`` grid), so the
realised epsilon is the exact one of the code, not of the real-valued formulas.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from pldp.audit.pairs import Input, Pair
from pldp.channel import AttributesNode, DirectNode, LeveledNode, MemoNode, Node, NodeVisitor, PaddingNode, UnaryNode
from pldp.channel.every_pair import EveryPairLeaf
from pldp.channel.sampling import GRID
from pldp.errors import ParameterError

__all__ = ["MAX_CATEGORIES", "Statistic", "Test", "bit_of", "optimal_test", "pair_claim", "statistic"]

#: Largest number of values a pair's statistic may take (and ``2**16`` outputs for padding).
MAX_CATEGORIES = 1 << 20
#: Relative tolerance when collecting the outputs of the largest likelihood ratio.
TIE = 1e-9

Columns = Mapping[str, np.ndarray]


def bit_of(packed: np.ndarray, k: int) -> np.ndarray:
    """Bit ``k`` (0 = the first, most significant bit of byte 0) of bit-packed rows, as int64."""
    return ((packed[:, k >> 3] >> (7 - (k & 7))) & 1).astype(np.int64)


@dataclass(frozen=True)
class Statistic:
    """A small statistic of a report and its exact law under the two inputs of a pair.

    ``classify(columns)`` maps report columns (as :class:`pldp.deploy.wire.ReportBatch` holds them)
    to values in ``[0, K)``; ``pmf0`` and ``pmf1`` are their laws under ``x0`` and ``x1``.
    """

    pmf0: np.ndarray
    pmf1: np.ndarray
    classify: Callable[[Columns], np.ndarray]

    def __mul__(self, other: Statistic) -> Statistic:
        """The pair of two statistics that are independent given the input."""
        k = other.pmf0.size
        if self.pmf0.size * k > MAX_CATEGORIES:
            raise ParameterError(f"the report statistic would take more than {MAX_CATEGORIES} values")
        first, second = self.classify, other.classify
        return Statistic(
            np.outer(self.pmf0, other.pmf0).ravel(),
            np.outer(self.pmf1, other.pmf1).ravel(),
            lambda cols: first(cols) * k + second(cols),
        )


@dataclass(frozen=True)
class Test:
    """A test of a pair: an event of the report with its exact probabilities under both inputs.

    Attributes
    ----------
    p0, p1 : float
        :math:`\\Pr[T \\mid x_0]` and :math:`\\Pr[T \\mid x_1]`.
    hits : callable
        ``hits(columns, rng)`` is True for the reports where the test fires (``rng`` serves
        randomized attacks; the optimal test ignores it).
    exact : float
        The pair's realised epsilon (the largest log-ratio of the exact channel), when the test
        was read off the channel (:func:`optimal_test`); NaN for an attack's test.
    """

    p0: float
    p1: float
    hits: Callable[[Columns, np.random.Generator], np.ndarray]
    exact: float = math.nan

    @property
    def log_ratio(self) -> float:
        """:math:`\\ln(p_0/p_1)`: what an audit with this test converges to."""
        if self.p0 <= 0:
            return -math.inf
        return math.inf if self.p1 <= 0 else math.log(self.p0) - math.log(self.p1)


# --------------------------------------------------------------------------- statistics
def _direct(n0: DirectNode, x0: int, n1: DirectNode, x1: int, col: str) -> Statistic:
    w0 = np.asarray(n0.weights, dtype=np.int64).copy()
    w1 = np.asarray(n1.weights, dtype=np.int64).copy()
    w0[x0] += n0.keep
    w1[x1] += n1.keep
    keys, cat = np.unique(np.stack([w0, w1], axis=1), axis=0, return_inverse=True)
    cat = cat.reshape(-1)
    pmf0 = np.bincount(cat, weights=w0 / GRID, minlength=len(keys))
    pmf1 = np.bincount(cat, weights=w1 / GRID, minlength=len(keys))
    return Statistic(pmf0, pmf1, lambda cols: cat[np.asarray(cols[col], dtype=np.int64)])


def _counts(groups: list[np.ndarray], d: int, col: str) -> Callable[[Columns], np.ndarray]:
    """Mixed-radix index of the numbers of set bits of each group."""
    radix = [len(g) + 1 for g in groups]

    def classify(cols: Columns) -> np.ndarray:
        packed = np.asarray(cols[col])
        bits = None
        out = np.zeros(packed.shape[0], dtype=np.int64)
        for g, r in zip(groups, radix, strict=True):
            if g.size <= 16:
                c = sum((bit_of(packed, int(k)) for k in g), np.zeros(packed.shape[0], dtype=np.int64))
            else:
                if bits is None:
                    bits = np.unpackbits(packed, axis=1, count=d)
                c = bits[:, g].sum(axis=1, dtype=np.int64)
            out = out * r + c
        return out

    return classify


def _unary(n0: UnaryNode, x0: int, n1: UnaryNode, x1: int, col: str) -> Statistic:
    p0, p1 = n0.bit_thresholds(x0), n1.bit_thresholds(x1)
    differ = np.flatnonzero(p0 != p1)
    keys, cat = np.unique(np.stack([p0[differ], p1[differ]], axis=1), axis=0, return_inverse=True)
    cat = cat.reshape(-1)
    groups = [differ[cat == g] for g in range(len(keys))]
    size = math.prod(len(g) + 1 for g in groups)
    if size > MAX_CATEGORIES:
        raise ParameterError(f"the bits differ in {len(groups)} ways: too many for an exact test ({size} values)")
    pmf0, pmf1 = np.ones(1), np.ones(1)
    for g, (q0, q1) in zip(groups, keys, strict=True):
        m = np.arange(len(g) + 1)
        pmf0 = np.outer(pmf0, stats.binom.pmf(m, len(g), q0 / GRID)).ravel()
        pmf1 = np.outer(pmf1, stats.binom.pmf(m, len(g), q1 / GRID)).ravel()
    return Statistic(pmf0, pmf1, _counts(groups, n0.d, col))


def _padding(node: PaddingNode, s0: tuple[int, ...], s1: tuple[int, ...], col: str) -> Statistic:
    relevant = np.array(sorted(set(s0) | set(s1) | set(range(node.d, node.d + node.ell))), dtype=np.int64)
    r = relevant.size
    if r > 16:
        raise ParameterError(f"an exact padding test enumerates 2^{r} outputs; keep |set| + ell <= 16")
    inner = node.inner
    a = np.asarray(inner.a, dtype=float)[relevant] / GRID
    b = np.asarray(inner.b, dtype=float)[relevant] / GRID
    configs = ((np.arange(1 << r)[:, None] >> np.arange(r)) & 1).astype(bool)  # bit i of value v is relevant[i]
    base = np.prod(np.where(configs, b, 1 - b), axis=1)
    # Pr(config | sampled j) = base * (a_j / b_j or (1 - a_j) / (1 - b_j)) for j among the relevant bits
    lift = np.where(configs, a / b, (1 - a) / (1 - b))
    pmfs = []
    for s in (s0, s1):
        w = node.sampling_weights(s)[relevant]
        pmfs.append(base * (lift @ w))

    def classify(cols: Columns) -> np.ndarray:
        packed = np.asarray(cols[col])
        out = np.zeros(packed.shape[0], dtype=np.int64)
        for i, k in enumerate(relevant):
            out |= bit_of(packed, int(k)) << i
        return out

    return Statistic(pmfs[0], pmfs[1], classify)


def _constant() -> Statistic:
    return Statistic(np.ones(1), np.ones(1), lambda cols: np.zeros(len(next(iter(cols.values()))), dtype=np.int64))


class _Leaf(NodeVisitor[Statistic]):
    """The statistic of two leaf nodes of one kind: ``n0.accept(_LEAF, x0, n1, x1, prefix)``."""

    def direct(self, node: DirectNode, x0: int, other: DirectNode, x1: int, prefix: str) -> Statistic:
        return _direct(node, x0, other, x1, prefix + "item")

    def unary(self, node: UnaryNode, x0: int, other: UnaryNode, x1: int, prefix: str) -> Statistic:
        return _unary(node, x0, other, x1, prefix + "bits")

    def leaf(self, node: Node, x0: int, other: Node, x1: int, prefix: str) -> Statistic:
        """One node (one level): its pair law (:meth:`~pldp.channel.Node.pair_law`). Two every-pair
        nodes of one report format (a hidden level's, PBP over OLH, HR, SS; or levels in the clear
        that happen to share one): a report's category of support of ``x0`` and ``x1``
        (:meth:`~pldp.channel.every_pair.EveryPairLeaf.pair_law`), its law under ``x0`` by ``node``
        and under ``x1`` by ``other``; one item: whether it is supported. Two nodes of different
        formats can only be levels in the clear, whose level statistic already tells them apart:
        nothing more."""
        if node == other:
            return Statistic(*node.pair_law(x0, x1, prefix))
        if not (
            isinstance(node, EveryPairLeaf)
            and isinstance(other, EveryPairLeaf)
            and node.report_format == other.report_format
        ):
            return _constant()
        if x0 == x1:
            hits = [n.hit_mass / GRID for n in (node, other)]
            return Statistic(
                np.array([hits[0], 1 - hits[0]]),
                np.array([hits[1], 1 - hits[1]]),
                lambda cols: (~node.supports(cols, x0, prefix)).astype(np.int64),
            )
        law0, _, classify = node.pair_law(x0, x1, prefix)
        return Statistic(law0, other.pair_law(x0, x1, prefix)[1], classify)


_LEAF = _Leaf()


def _leaf(n0: Node, x0: int, n1: Node, x1: int, prefix: str) -> Statistic:
    """The statistic of two leaf nodes' reports (two budget levels, or one node twice)."""
    both_every_pair = isinstance(n0, EveryPairLeaf) and isinstance(n1, EveryPairLeaf)
    if type(n0) is not type(n1) and not both_every_pair:  # e.g. a k-RR level beside a Hadamard one (APLDP)
        raise ParameterError("the two inputs' reports have different kinds: every output tells them apart")
    return n0.accept(_LEAF, x0, n1, x1, prefix)


class _Statistic(NodeVisitor[Statistic]):
    """The statistic of a pair of inputs: ``node.accept(_STATISTIC, x0, x1, prefix)``."""

    def direct(self, node: DirectNode, x0: Input, x1: Input, prefix: str) -> Statistic:
        return _direct(node, x0.item, node, x1.item, prefix + "item")

    def unary(self, node: UnaryNode, x0: Input, x1: Input, prefix: str) -> Statistic:
        return _unary(node, x0.item, node, x1.item, prefix + "bits")

    def padding(self, node: PaddingNode, x0: Input, x1: Input, prefix: str) -> Statistic:
        return _padding(node, tuple(x0.item), tuple(x1.item), prefix + "bits")

    def leaf(self, node: Node, x0: Input, x1: Input, prefix: str) -> Statistic:
        """The statistic the leaf gives for its items (:meth:`~pldp.channel.Node.pair_law`)."""
        return Statistic(*node.pair_law(x0.item, x1.item, prefix))

    def leveled(self, node: LeveledNode, x0: Input, x1: Input, prefix: str) -> Statistic:
        stat = _constant()
        if (x0.item, x0.level) != (x1.item, x1.level):
            items = node.item_channels()
            stat = _leaf(items[x0.level], x0.item, items[x1.level], x1.item, prefix)
        if x0.level != x1.level:
            if node.level_report == "perturbed":
                assert node.level_sampler is not None
                stat = stat * _direct(node.level_sampler, x0.level, node.level_sampler, x1.level, prefix + "level")
            elif node.level_report == "clear":
                t = node.t
                stat = stat * Statistic(
                    np.eye(t)[x0.level], np.eye(t)[x1.level], lambda cols: np.asarray(cols[prefix + "level"], np.int64)
                )
        return stat

    def attributes(self, node: AttributesNode, x0: Input, x1: Input, prefix: str) -> Statistic:
        stat = _constant()
        for k, part in enumerate(node.parts):
            i0, i1 = Input(x0.item[k], x0.level[k]), Input(x1.item[k], x1.level[k])
            if i0 != i1:
                stat = stat * part.accept(self, i0, i1, f"{prefix}a{k}.")
        return stat

    def memo(self, node: MemoNode, x0: Input, x1: Input, prefix: str) -> Statistic:
        """One report of a memoized chain (a fresh permanent response): its one-report channel on the
        ``2**-32`` grid (within ``2**-33`` of the exact chain; the audit over time is
        :mod:`pldp.audit.longitudinal`)."""
        return node.one_report().accept(self, x0, x1, prefix)


_STATISTIC = _Statistic()


def statistic(node: Node, x0: Input, x1: Input, prefix: str = "") -> Statistic:
    """The statistic of ``node``'s reports for the pair ``(x0, x1)`` (module docstring)."""
    return node.accept(_STATISTIC, x0, x1, prefix)


def optimal_test(node: Node, pair: Pair, trials: int | None = None, alpha: float = 0.01) -> Test:
    """The most powerful test of ``pair`` (module docstring) with its exact probabilities.

    By the Neyman–Pearson lemma the candidates are the sets of outputs whose likelihood ratio is
    at least a threshold. Without ``trials`` the test is the set of the largest ratio, whose
    log-ratio is the pair's realised epsilon. With ``trials`` it is the candidate whose *expected*
    audited bound (Clopper–Pearson at the expected hit counts of ``trials`` reports per input,
    level ``alpha``) is largest: when the outputs of the largest ratio are too rare to be seen in
    ``trials`` reports (PLDP-FEBSF's level under OUE: about ``1e-7``), a larger set with a slightly
    smaller ratio proves more.

    Raises
    ------
    ParameterError
        The two inputs have the same law (no test can tell them apart).

    Examples
    --------
    k-RR at epsilon = 1 over 3 items: the test is "the report is item 0".

    >>> import pldp
    >>> from pldp.audit.pairs import Input, Pair
    >>> t = optimal_test(pldp.KRR(1.0, 3).sampler(), Pair("item", Input(0), Input(1)))
    >>> round(t.p0, 4), round(t.p1, 4), round(t.log_ratio, 6)
    (0.5761, 0.2119, 1.0)
    """
    from pldp.audit.bounds import clopper_pearson

    stat = statistic(node, pair.x0, pair.x1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lr = np.where(stat.pmf0 > 0, np.log(stat.pmf0) - np.log(stat.pmf1), -np.inf)
    best = float(np.max(lr))
    if not best > 0:
        raise ParameterError(f"the inputs of {pair.label()} have the same law: nothing to audit")
    order = np.argsort(-lr, kind="stable")
    order = order[lr[order] > 0]
    ranked = lr[order]
    finite = np.isfinite(ranked)
    with np.errstate(invalid="ignore"):  # inf - inf: two infinite ratios, one level
        gap = np.where(finite[:-1] & finite[1:], ranked[:-1] - ranked[1:], np.where(finite[1:], np.inf, 0.0))
    tol = TIE * np.maximum(1.0, np.abs(np.where(finite[1:], ranked[1:], 0.0)))
    ends = np.append(np.flatnonzero(gap > tol) + 1, ranked.size)  # the candidate sets: order[:end]
    cum0, cum1 = np.cumsum(stat.pmf0[order]), np.cumsum(stat.pmf1[order])
    end = int(ends[0])
    if trials is not None and ends.size > 1:
        k0 = np.round(trials * cum0[ends - 1])
        k1 = np.minimum(trials, np.round(trials * cum1[ends - 1]))
        lo, _ = clopper_pearson(k0, np.full(k0.shape, trials), alpha)
        _, hi = clopper_pearson(k1, np.full(k1.shape, trials), alpha)
        with np.errstate(divide="ignore"):
            expected = np.where(lo > 0, np.log(lo) - np.log(hi), -np.inf)
        end = int(ends[int(np.argmax(expected))])
    chosen = order[:end]
    p0, p1 = float(stat.pmf0[chosen].sum()), float(stat.pmf1[chosen].sum())
    classify = stat.classify
    table = np.zeros(stat.pmf0.size, dtype=bool)
    table[chosen] = True
    return Test(p0, p1, lambda cols, rng: table[classify(cols)], best)


# --------------------------------------------------------------------------- claims
def itemset_epsilon(node: PaddingNode, items: tuple[int, ...]) -> float:
    """Budget of an item-set (Gu et al., ICDE 2020, eq. 15, with :math:`\\varepsilon^* = \\min \\mathcal{E}`)."""
    eps = np.asarray(node.inner.epsilons, dtype=float)
    star = float(eps.min())
    if not items:
        return star
    eta = len(items) / max(len(items), node.ell)
    return float(np.log(eta * np.mean(np.exp(eps[list(items)])) + (1 - eta) * np.exp(star)))


class _Claim(NodeVisitor[float]):
    """What the notion claims for a pair: ``node.accept(_CLAIM, x0, x1, level_claim)``."""

    def direct(self, node: DirectNode, x0: Input, x1: Input, level_claim: float | None) -> float:
        return float(node.epsilons[x0.item])  # the test's event is the output x0; its budget (inf: invertible)

    def unary(self, node: UnaryNode, x0: Input, x1: Input, level_claim: float | None) -> float:
        e0, e1 = node.epsilons[x0.item], node.epsilons[x1.item]
        if node.notion == "ULDP":  # a non-sensitive x0's test is its set bit, an invertible output
            return float(e0) if e0 == math.inf else min(float(e) for e in node.epsilons if e != math.inf)
        if node.notion == "AvgID-LDP":
            return float((e0 + e1) / 2)
        return float(min(e0, e1))  # LDP (equal budgets) and MinID-LDP

    def padding(self, node: PaddingNode, x0: Input, x1: Input, level_claim: float | None) -> float:
        e0, e1 = itemset_epsilon(node, tuple(x0.item)), itemset_epsilon(node, tuple(x1.item))
        return (e0 + e1) / 2 if node.inner.notion == "AvgID-LDP" else min(e0, e1)

    def leaf(self, node: Node, x0: Input, x1: Input, level_claim: float | None) -> float:
        """What the leaf claims for its items (:meth:`~pldp.channel.Node.pair_claim`)."""
        return float(node.pair_claim(x0.item, x1.item))

    def leveled(self, node: LeveledNode, x0: Input, x1: Input, level_claim: float | None) -> float:
        if x0.level == x1.level:
            return node.item_channels()[x0.level].accept(self, Input(x0.item), Input(x1.item), None)
        if level_claim is not None:
            return float(level_claim)
        return math.inf if node.level_epsilon is None else float(node.level_epsilon)

    def attributes(self, node: AttributesNode, x0: Input, x1: Input, level_claim: float | None) -> float:
        diff = [k for k in range(len(node.parts)) if (x0.item[k], x0.level[k]) != (x1.item[k], x1.level[k])]
        if len(diff) != 1:
            raise ParameterError("an audited pair of MPLDP inputs must differ in exactly one attribute")
        k = diff[0]
        i0, i1 = Input(x0.item[k], x0.level[k]), Input(x1.item[k], x1.level[k])
        return node.parts[k].accept(self, i0, i1, level_claim)

    def memo(self, node: MemoNode, x0: Input, x1: Input, level_claim: float | None) -> float:
        """One report of a memoized chain: its one-report claim (:math:`\\varepsilon_1`)."""
        return node.one_report().accept(self, Input(x0.item), Input(x1.item), None)


_CLAIM = _Claim()


def pair_claim(node: Node, pair: Pair, level_claim: float | None = None) -> float:
    """The epsilon the notion claims for the test of ``pair``: the largest log-ratio it permits.

    ``level_claim`` overrides the spec's ``level_epsilon`` for level pairs (what a paper claims, e.g.
    PLDP-FEBSF's :math:`\\varepsilon_p`).
    """
    return node.accept(_CLAIM, pair.x0, pair.x1, level_claim)


def check_pair(node: Node, pair: Any) -> Pair:
    """``pair`` as a :class:`Pair` of ``node``'s inputs; ``(i, j)`` means the items ``i`` and ``j``."""
    if isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(v, (int, np.integer)) for v in pair):
        if not node.takes_one_item or node.memoized:
            raise ParameterError("give Pair objects for protocols; (i, j) means two items of a mechanism")
        pair = Pair("item", Input(int(pair[0])), Input(int(pair[1])))
    if not isinstance(pair, Pair):
        raise ParameterError(f"a pair must be a pldp.audit.Pair or (item, item), got {pair!r}")
    return pair
