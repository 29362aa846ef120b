"""Fake reports of the pure mechanisms: direct encoding (KRR, URR, IPRR) and unary encoding
(RAPPOR, OUE, IDUE), and of padding-and-sampling around a unary mechanism.

Per strategy, a fake report of ``r`` targets ``T``, for direct encoding (a report is one item)
and unary encoding (one bit per item):

* ``mga`` (Cao et al.'s maximal gain attack): a target, drawn uniformly; or every target bit and
  :math:`l - r` random other bits, :math:`l` the expected number of ones of an honest report
  (of an item drawn uniformly), rounded (only the targets when :math:`l \\le r`);
* ``adaptive``: as ``mga`` for direct encoding (a report that is one item has nothing to detect);
  for unary encoding a number of ones drawn from the law of an honest report's, and that many
  bits, the targets first;
* ``input``: the honest randomizer run on a target (the weakest baseline);
* ``sensitive``: ``mga`` on the items of the smallest budgets (:func:`most_sensitive`);
* ``knows_defence``: for direct encoding, a non-target ``y`` with probability :math:`q_y` (so that
  every non-target is supported at the honest rate of a user who does not hold it: nothing is
  pushed below zero, which is what a recovery in the manner of LDPRecover, ``"recover"``, reads
  the fakes' share from), else a target: the price is the share :math:`\\sum_{y \\notin T} q_y`
  of reports not spent on targets; for unary encoding ``adaptive`` (a per-report detection,
  ``"detect"``, sees the honest law, and the random fill sets the non-targets at about the honest
  rate).

``adaptive`` makes the number of ones of every fake report follow exactly the law of an honest
report's (of an item drawn uniformly): a test on the ones count (the per-report detection of
unlikely reports) sees the same law with and without the fakes. It costs the attacker only when
the count drawn is below ``r``: then a random subset of the targets is set, and
:math:`s_t = E[\\min(N, r)]/r` with ``N`` the honest count.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from pldp.attacks.base import Attack, Rule, check_targets, rule_for
from pldp.bitcount import row_ones
from pldp.errors import ParameterError
from pldp.itemsets import ItemSets
from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.direct import DirectEncoding
from pldp.mechanisms.longitudinal import LongitudinalDirect, LongitudinalUnary
from pldp.mechanisms.unary import UnaryEncoding
from pldp.oracle import FrequencyOracle
from pldp.protocols.padding import PaddingSampling
from pldp.robustness import fake_shift, support_gain

__all__ = [
    "DirectRule",
    "PaddingRule",
    "PureRule",
    "UnaryRule",
    "expected_ones",
    "honest_ones",
    "most_sensitive",
    "ones_law",
    "unary_reports",
    "unary_rows",
    "unary_support",
]

#: The per-report rule of each strategy for a single mechanism.
HOW = {"mga": "mga", "sensitive": "mga", "adaptive": "adaptive", "knows_defence": "defence", "input": "input"}
#: The per-report rules the optimising attacker may also use (not strategies of its own: ``"alone"``
#: sets the target bits and nothing else, :func:`unary_reports`).
RULES_ONLY = {"alone": "alone"}
#: Every per-report rule by name: the strategies' and :data:`RULES_ONLY`.
ALL_RULES = {**HOW, **RULES_ONLY}


def _choose(targets: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """One target per fake, uniformly."""
    return targets[rng.integers(0, targets.size, size=m)] if m else np.empty(0, dtype=np.int64)


def _subsets(cols: np.ndarray, k: np.ndarray, bits: np.ndarray, rng: np.random.Generator) -> None:
    """Set ``k[i]`` bits of row ``i`` of ``bits``, drawn uniformly without replacement among ``cols``
    (selection sampling, Knuth's Algorithm S, one column at a time for every row at once)."""
    m, w = bits.shape[0], cols.size
    if not m or not w or not np.any(k):
        return
    remaining = np.minimum(k, w).astype(np.int64)
    u = rng.random((w, m))
    for j in range(w):
        take = u[j] * (w - j) < remaining
        bits[:, cols[j]] = take
        remaining -= take


def unary_rows(width: int, targets: np.ndarray, ones: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Bit-packed rows of ``width`` bits with ``ones[i]`` ones each: targets first (every target
    when ``ones[i] >= r``, else a uniform subset of them), the rest uniform among the other bits."""
    m, r = ones.size, targets.size
    bits = np.zeros((m, width), dtype=bool)
    others = np.setdiff1d(np.arange(width), targets)
    k = np.clip(ones, 0, width)
    full = k >= r
    bits[np.ix_(full, targets)] = True
    part = np.flatnonzero(~full)
    if part.size:
        sub = np.zeros((part.size, r), dtype=bool)
        _subsets(np.arange(r), k[part], sub, rng)
        bits[np.ix_(part, targets)] = sub
    _subsets(others, np.maximum(k - r, 0), bits, rng)
    return np.packbits(bits, axis=1)


def honest_ones(mech: UnaryEncoding, m: int, rng: np.random.Generator, items: int | None = None) -> np.ndarray:
    """The ones counts of ``m`` honest reports of items drawn uniformly from ``[0, items)``."""
    if not m:
        return np.zeros(0, dtype=np.int64)
    rows = mech.perturb(rng.integers(0, items or mech.d, size=m), rng)
    return row_ones(rows)


@functools.lru_cache(maxsize=256)
def ones_law(mech: UnaryEncoding, items: int | None = None) -> np.ndarray:
    """The law of the ones count of an honest report of an item drawn uniformly from ``[0, items)``:
    a mixture over the items of Poisson-binomial laws (one convolution per distinct ``(a, b)``;
    cached per mechanism, read-only)."""
    a, b = mech.a, mech.b
    k = items or mech.d
    total = np.zeros(mech.d + 1)
    from scipy import stats  # scipy is imported where it is used: `import pldp` and the clients load without it

    keys, counts = np.unique(np.stack([a[:k], b[:k]], axis=1), axis=0, return_counts=True)
    for (ax, bx), c in zip(keys, counts, strict=True):
        x = int(np.flatnonzero((a[:k] == ax) & (b[:k] == bx))[0])
        probs = b.copy()
        probs[x] = ax
        pmf = np.ones(1)
        values, mult = np.unique(probs, return_counts=True)
        for p, n in zip(values, mult, strict=True):
            pmf = np.convolve(pmf, stats.binom.pmf(np.arange(n + 1), n, p))
        total += c / k * pmf
    total.setflags(write=False)
    return total


def expected_ones(mech: UnaryEncoding, items: int | None = None) -> int:
    """:math:`l`: the expected ones of an honest report of a uniform item in ``[0, items)``, rounded."""
    k = items or mech.d
    return int(np.floor(float(mech.b.sum() + np.mean(mech.a[:k] - mech.b[:k])) + 0.5))


class PureRule(Rule):
    """A single mechanism: the strategies of :data:`HOW`, and its expected support of the targets."""

    strategies = tuple(HOW)

    def promoted(self, oracle: FrequencyOracle, targets: Any, strategy: str) -> Any:
        """``targets``, or for ``"sensitive"`` as many items of the smallest budgets (ties: the
        larger per-fake gain, then the smaller index)."""
        chosen = check_targets(targets, oracle.d)
        if strategy != "sensitive":
            return chosen
        return most_sensitive(self._budget_mechanism(oracle), chosen.size)

    def _budget_mechanism(self, oracle: Any) -> Mechanism:
        return oracle

    def support(self, mech: Any, targets: np.ndarray, how: str) -> np.ndarray:
        """:math:`s_x`: the probability that a fake report supports ``x`` (read at the targets)."""
        raise NotImplementedError

    def expected_gain(self, oracle: FrequencyOracle, attack: Attack, m: int, data: tuple[Any, ...]) -> float | None:
        counts = np.asarray(data[0], dtype=float)
        n = counts.sum()
        mech: Any = oracle
        s = self.support(mech, attack.targets, ALL_RULES[attack.strategy])
        p, q = mech.support
        return support_gain(p, q, s, attack.targets, m / (n + m), counts[attack.targets].sum() / n)


def most_sensitive(mech: Mechanism, r: int) -> np.ndarray:
    """The ``r`` items of the smallest budgets (ties: the larger per-fake gain, then the smaller index)."""
    order = np.lexsort((np.arange(mech.d), -fake_shift(*mech.support), mech.budgets.epsilons))
    return np.sort(order[:r])


@rule_for(DirectEncoding, LongitudinalDirect)
class DirectRule(PureRule):
    """KRR, URR, IPRR, and the direct memoized chains (L-GRR, L-IPRR: a fake sends its report, not
    a permanent response): a report is one item."""

    def reports(self, oracle: FrequencyOracle, attack: Attack, m: int, rng: np.random.Generator) -> np.ndarray:
        chosen = _choose(attack.targets, m, rng)
        how = HOW[attack.strategy]
        if how == "input":
            return oracle.perturb(chosen, rng)
        if how == "defence":  # a non-target y with probability q_y, else a target
            mech: Any = oracle
            rest = np.zeros(mech.d)
            others = np.setdiff1d(np.arange(mech.d), attack.targets)
            rest[others] = mech.q[others]
            away = rng.random(m) < rest.sum()
            if away.any():
                chosen[away] = rng.choice(mech.d, size=int(away.sum()), p=rest / rest.sum())
        return chosen

    def support(self, mech: Any, targets: np.ndarray, how: str) -> np.ndarray:
        s = np.zeros(mech.d)
        s[targets] = 1.0 / targets.size
        if how == "input":
            return mech.q + mech.delta * s
        if how == "defence":
            others = np.setdiff1d(np.arange(mech.d), targets)
            s *= 1.0 - mech.q[others].sum()
            s[others] = mech.q[others]
        return s


@rule_for(UnaryEncoding, LongitudinalUnary)
class UnaryRule(PureRule):
    """RAPPOR, OUE, IDUE, and the unary memoized chains (their ``a``, ``b`` are one report's): a report is
    one bit per item, bit-packed."""

    def reports(self, oracle: FrequencyOracle, attack: Attack, m: int, rng: np.random.Generator) -> np.ndarray:
        mech: Any = oracle
        return unary_reports(mech, attack.targets, m, rng, ALL_RULES[attack.strategy])

    def support(self, mech: Any, targets: np.ndarray, how: str) -> np.ndarray:
        return unary_support(mech, targets, how)


def unary_reports(
    mech: UnaryEncoding, targets: np.ndarray, m: int, rng: np.random.Generator, how: str, items: int | None = None
) -> np.ndarray:
    """``m`` fake reports of a unary mechanism by rule ``how`` (``"mga"``, ``"adaptive"``,
    ``"input"``, or ``"alone"``: the target bits and nothing else, the fewest ones a report can
    have; module docstring); honest users hold items in ``[0, items)`` (default: all)."""
    if how == "input":
        return mech.perturb(_choose(targets, m, rng), rng)
    if how == "alone":
        ones = np.full(m, targets.size, dtype=np.int64)
    elif how in ("adaptive", "defence"):
        ones = honest_ones(mech, m, rng, items)
    else:
        ones = np.full(m, max(expected_ones(mech, items), targets.size), dtype=np.int64)
    return unary_rows(mech.d, targets, ones, rng)


def unary_support(mech: UnaryEncoding, targets: np.ndarray, how: str, items: int | None = None) -> np.ndarray:
    """:math:`s_x`, the probability that a fake report of :func:`unary_reports` sets bit ``x``, for
    every bit (the targets', and the others' that the random fill sets)."""
    r, width = targets.size, mech.d
    if how == "input":
        s = mech.b.copy()
        s[targets] += (mech.a[targets] - mech.b[targets]) / r
        return s
    if how in ("adaptive", "defence"):
        law = ones_law(mech, items)
        count = np.arange(law.size)
        on_targets = float(np.minimum(count, r) @ law) / r
        rest = float(np.maximum(count - r, 0) @ law)
    elif how == "alone":
        on_targets, rest = 1.0, 0.0
    else:
        on_targets, rest = 1.0, float(max(expected_ones(mech, items) - r, 0))
    s = np.full(width, rest / (width - r) if width > r else 0.0)
    s[targets] = on_targets
    return s


@rule_for(PaddingSampling)
class PaddingRule(PureRule):
    """Padding-and-sampling: a unary report over the ``d + ell`` real and dummy items, whose
    estimate the server scales by ``ell``: every fake counts ``ell`` times."""

    def _budget_mechanism(self, oracle: Any) -> Mechanism:
        return oracle.base

    def reports(self, oracle: FrequencyOracle, attack: Attack, m: int, rng: np.random.Generator) -> np.ndarray:
        ps: Any = oracle
        how = HOW[attack.strategy]
        if how == "input":
            chosen = _choose(attack.targets, m, rng)
            return ps.perturb(ItemSets(np.arange(m + 1), chosen, ps.d), rng)
        return unary_reports(ps.inner, attack.targets, m, rng, how)

    def support(self, mech: Any, targets: np.ndarray, how: str) -> np.ndarray:
        s = unary_support(mech.inner, targets, how)
        if how == "input":  # a fake holding {t} samples t with probability 1 / ell, else a dummy
            b = mech.inner.b
            s[targets] = b[targets] + (s[targets] - b[targets]) / mech.ell
        return s

    def expected_gain(self, oracle: FrequencyOracle, attack: Attack, m: int, data: tuple[Any, ...]) -> float | None:
        ps: Any = oracle
        sets = data[0]
        if not isinstance(sets, ItemSets):
            raise ParameterError(f"padding-and-sampling's data are ItemSets, got {type(sets).__name__}")
        honest = ps.expected_estimate(sets)
        t = attack.targets
        s = self.support(ps, t, HOW[attack.strategy])
        a, b = ps.inner.support
        beta = m / (sets.n + m)
        return float(beta * (ps.ell * np.sum((s[t] - b[t]) / (a[t] - b[t])) - honest[t].sum()))
