"""A device's whole history under a memoized chain: :func:`over_rounds`, :func:`pair_loss`.

A memoized chain (L-GRR, L-IPRR, L-OUE, L-OSUE, L-SUE, L-SOUE, L-IDUE; RAPPOR's memoization,
Erlingsson et al. 2014, §3) draws a permanent randomized response (PRR) once per distinct value
and sends every report through a fresh instantaneous one (IRR). A device's history is
:math:`h = (v_1, \\dots, v_r)`, one value per round. The memos :math:`X_v \\sim \\mathrm{PRR}(v)` may
as well be drawn up front for every value, independently of :math:`h`, so

.. math::

    P(y \\mid h) = \\prod_{v \\text{ distinct in } h} \\sum_x \\mathrm{PRR}[v, x]
    \\prod_{t:\\, v_t = v} \\mathrm{IRR}[x, y_t].

The whole-history privacy loss of ``r`` rounds is the largest :math:`\\ln P(y \\mid h) / P(y \\mid
h')` over every pair of histories (values *and* change times) and every report sequence
:math:`y`. It is not bounded by :math:`\\varepsilon_\\infty`: reports of one memo agree more
often than reports of two, so *whether and when the value changed* leaks more with every round
(about :math:`\\varepsilon_{IRR}/2` per round for L-GRR over two items), without limit. What
memoization does bound is the values' protection: over pairs of histories with the same *change
pattern* (rounds ``t``, ``s`` hold one value under :math:`h` exactly when they do under
:math:`h'`; only the values differ), the ratio factorises over the pattern's blocks, each a
garbling of its memo, so the loss stays at or under the sum of the blocks' PRR epsilons
(:math:`\\varepsilon_\\infty` per distinct value).

:func:`over_rounds` reports both, with ``r`` fresh (non-memoized) reports' :math:`r
\\varepsilon_1` beside them (:class:`RoundsPrivacy`); :func:`pair_loss` is the exact loss of one
given pair. The search is exact (up to floating-point rounding) where feasible and bounded
elsewhere (:func:`over_rounds`, Notes).

References
----------
Erlingsson, Pihur, Korolova, *RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal
Response*, ACM CCS 2014, §3 (memoization). Arcolezi, Couchot, Al Bouna, Xiao, *Improving the
utility of locally differentially private protocols for longitudinal and multidimensional
frequency estimates*, Digital Communications and Networks 2022 (L-GRR and the unary chains).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp._validation import check_int
from pldp.errors import ParameterError
from pldp.privacy.base import repeated
from pldp.privacy.rounds_search import (
    Chain,
    best_distinct,
    chain_of,
    history_of,
    joint_type,
    pair_cost,
    pair_extremes,
    search,
)

__all__ = ["RoundsPrivacy", "history_bound", "over_rounds", "pair_loss"]

#: Default of ``max_exact``: the output configurations the exact search may evaluate.
MAX_EXACT = 1_000_000
#: Non-uniform unary chains (L-IDUE) over more items get a bound on the same-pattern loss.
_MAX_MATCHED = 6

Pair = tuple[tuple[int, ...], tuple[int, ...]]


def _bound(chain: Chain, r: int) -> float:
    """:math:`\\min(B_1, B_2)` of :func:`over_rounds`' Notes."""
    chained = chain.one + repeated(r - 1, chain.irr)
    lam = np.sort(chain.lam)[::-1]
    pooled = max(
        repeated(r - max(j, -(-r // chain.d)), chain.irr) + float(lam[:j].sum()) for j in range(1, min(chain.d, r) + 1)
    )
    return min(chained, pooled)


def _knapsack(gains: np.ndarray, r: int) -> tuple[float, list[int]]:
    """``max sum_i gains[i, n_i]`` over block sizes ``n_i >= 0`` (0: block ``i`` unused) with ``sum n_i = r``.

    Every row is non-decreasing in ``n``, so a solution of ``sum n_i <= r`` extends to one of ``r``
    at no loss (the rest of the rounds go to a used block), and no block needs more rounds than
    it takes every row to come within rounding (``1e-14``, relative) of its value at ``r``
    (``cap``): the table is ``min(r, k cap) x cap``.
    """
    with np.errstate(invalid="ignore"):  # inf - inf: an infinite gain is flat
        moving = np.abs(gains - gains[:, -1:]) > 1e-14 * np.maximum(1.0, np.abs(gains[:, -1:]))
    cap = int(np.flatnonzero(moving.any(axis=0))[-1]) + 1 if moving.any() else 1
    top = min(r, len(gains) * cap)
    best = np.full(top + 1, -np.inf)
    best[0] = 0.0
    s, n = np.arange(top + 1)[:, None], np.arange(cap + 1)[None, :]
    picks = []
    for g in gains[:, : cap + 1]:
        prev = np.where(s >= n, best[np.clip(s - n, 0, None)], -np.inf)
        with np.errstate(invalid="ignore"):
            cand = np.where(np.isneginf(prev), -np.inf, prev + g[None, :])
        pick = cand.argmax(axis=1)
        best = cand[np.arange(top + 1), pick]
        picks.append(pick)
    rest = int(np.argmax(best[1:])) + 1
    value, sizes = float(best[rest]), []
    for pick in reversed(picks):
        sizes.append(int(pick[rest]))
        rest -= sizes[-1]
    sizes = sizes[::-1]
    sizes[next(i for i, k in enumerate(sizes) if k)] += r - sum(sizes)
    return value, sizes


def _same_pattern(chain: Chain, r: int) -> tuple[float, Pair | None, bool]:
    """The worst pair of one change pattern: blocks ``(v, v', n)`` whose losses add (Notes)."""
    d = chain.d
    alpha, beta = chain.alpha(np.arange(r + 1)), chain.beta(np.arange(r + 1))
    uniform = len(set(chain.keys)) == 1
    if not chain.per_bit or uniform:  # the item of h' does not matter (direct) or any other one does
        gain = alpha + (beta.max(axis=0) if uniform else 0.0)
        rows = [int(v) for key in dict.fromkeys(map(tuple, gain)) for v in np.flatnonzero((gain == key).all(1))[:r]]
        value, sizes = _knapsack(gain[rows], r)
        used = [v for v, n in zip(rows, sizes, strict=True) if n]
        partner = {v: used[(i + 1) % len(used)] if len(used) > 1 else (v + 1) % d for i, v in enumerate(used)}
        blocks = [(v, partner[v], n) for v, n in zip(rows, sizes, strict=True) if n]
        return value, history_of(blocks), True
    if d > _MAX_MATCHED:  # drop the matching: every value's block with the best other h'-side gain
        best = np.stack([np.max(np.delete(beta, v, axis=0), axis=0) for v in range(d)])
        return _knapsack(alpha + best, r)[0], None, False
    top, pair, seen = -math.inf, None, set()
    for perm in itertools.permutations(range(d)):
        moved = [v for v in range(d) if perm[v] != v]
        kinds = tuple(sorted((chain.keys[v], chain.keys[perm[v]]) for v in moved))
        if not moved or kinds in seen:  # relabelling within equal parameters changes nothing
            continue
        seen.add(kinds)
        value, sizes = _knapsack(np.stack([alpha[v] + beta[perm[v]] for v in moved]), r)
        if value > top:
            top, pair = value, history_of([(v, perm[v], n) for v, n in zip(moved, sizes, strict=True) if n])
    return top, pair, True


def _histories(h: Any, name: str, d: int) -> tuple[int, ...]:
    arr = np.asarray(h)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
        raise ParameterError(f"{name} must be a non-empty 1-D sequence of item indices, got {h!r}")
    if arr.min() < 0 or arr.max() >= d:
        raise ParameterError(f"{name} must hold item indices in [0, {d}), got {h!r}")
    return tuple(int(v) for v in arr)


def _extremes(chain: Chain, h: tuple[int, ...], g: tuple[int, ...], max_exact: int) -> tuple[float, float] | None:
    """``(up, down)`` of the pair (:func:`~pldp.privacy.rounds_search.pair_extremes`), None if too costly."""
    classes = joint_type(h, g)
    if pair_cost(chain.parts, chain.per_bit, classes) > max_exact:
        return None
    return pair_extremes(chain.parts, chain.per_bit, classes)


def pair_loss(oracle: Any, h: Any, h_prime: Any, *, max_exact: int = MAX_EXACT) -> float:
    """The exact privacy loss between two given histories of a memoized chain, at any length.

    .. math::

        \\max_y \\left| \\ln \\frac{P(y \\mid h)}{P(y \\mid h')} \\right|

    (module docstring), both directions. Rounds with the same pair :math:`(h_t, h'_t)` are
    exchangeable, so only the counts of each output in each such class are enumerated:
    :math:`\\prod_c \\binom{n_c + k - 1}{k - 1}` configurations for ``k`` outputs (per bit of a
    unary chain, ``k = 2``), in log space.

    Parameters
    ----------
    oracle : memoized chain or its :class:`~pldp.channel.MemoNode`
    h, h_prime : sequence of int
        The two histories: item indices, one per round, of equal length.
    max_exact : int, optional
        The most output configurations to evaluate.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        Not a memoized chain, bad histories, or more than ``max_exact`` configurations.

    Examples
    --------
    >>> import pldp
    >>> m = pldp.LGRR(2.0, 1.0, 2)
    >>> round(pair_loss(m, [0] * 30, [0] * 15 + [1] * 15), 1)  # a^30 against a^15 b^15
    20.9
    """
    chain = chain_of(oracle)
    x, y = _histories(h, "h", chain.d), _histories(h_prime, "h_prime", chain.d)
    if len(x) != len(y):
        raise ParameterError(f"h and h_prime must have the same length, got {len(x)} and {len(y)}")
    check_int(max_exact, "max_exact", 0)
    found = _extremes(chain, x, y, max_exact)
    if found is None:
        raise ParameterError(f"this pair needs more than max_exact = {max_exact} output configurations")
    return max(found)


@dataclass(frozen=True)
class RoundsPrivacy:
    """The privacy of ``rounds`` reports of one device under a memoized chain (:func:`over_rounds`).

    Attributes
    ----------
    rounds : int
    epsilon : float
        The whole-history loss: the largest over every pair of histories and reports; exact when
        :attr:`exact`, else a proven upper bound (:attr:`bound`).
    exact : bool
        Whether :attr:`epsilon` is the exact value (the search ran) or the bound.
    worst_pair : pair of tuple of int, or None
        Two histories (item indices; ``oracle.domain.labels`` names them), ``h`` first:
        :math:`\\ln P(y \\mid h) / P(y \\mid h')` reaches :attr:`epsilon` for some ``y`` when
        :attr:`exact`; otherwise the best pair found, which reaches :attr:`lower` (None if none).
    lower : float
        The exact loss of :attr:`worst_pair`: :attr:`epsilon` when exact, else a lower bound.
    bound : float
        The proven upper bound (:func:`over_rounds`, Notes), computed always.
    same_pattern_epsilon : float
        The largest loss over pairs of histories with the same change pattern: the values'
        protection, at most :math:`\\varepsilon_\\infty` per distinct value.
    same_pattern_pair : pair of tuple of int, or None
        A pair reaching it (None when it is a bound).
    same_pattern_exact : bool
        False only for non-uniform unary chains over more than six items (an upper bound then).
    unchanged_epsilon : float
        ``rounds`` reports of one value that never changes against another such value.
    fresh_epsilon : float
        ``rounds`` fresh, non-memoized reports: :math:`r \\varepsilon_1`.
    one_report_epsilon, permanent_epsilon : float
        :math:`\\varepsilon_1` and :math:`\\varepsilon_\\infty` realised (LDP, over every item).
    """

    rounds: int
    epsilon: float
    exact: bool
    worst_pair: Pair | None
    lower: float
    bound: float
    same_pattern_epsilon: float
    same_pattern_pair: Pair | None
    same_pattern_exact: bool
    unchanged_epsilon: float
    fresh_epsilon: float
    one_report_epsilon: float
    permanent_epsilon: float

    def summary(self) -> str:
        """One line: the three losses side by side."""
        how = "exact" if self.exact else f"bound; a pair reaches {self.lower:.4g}"
        same = "" if self.same_pattern_exact else "at most "
        return (
            f"{self.rounds} reports: whole history eps = {self.epsilon:.4g} ({how}); same change pattern "
            f"{same}{self.same_pattern_epsilon:.4g} (one unchanged value {self.unchanged_epsilon:.4g}, "
            f"eps_inf = {self.permanent_epsilon:.4g}); fresh reports {self.fresh_epsilon:.4g} "
            f"(r eps_1, eps_1 = {self.one_report_epsilon:.4g})"
        )


def _candidates(chain: Chain, r: int) -> list[Pair]:
    """Pairs worth trying for :attr:`RoundsPrivacy.lower`: one value against it split in runs (one
    pair of values per pair of parameters: relabelling within equal parameters changes nothing)."""
    d, keys = chain.d, chain.keys
    pairs = {(keys[a], keys[b]): (a, b) for a, b in itertools.permutations(range(min(d, 4)), 2)}
    out = [((a,) * r, (a,) * (r - r // 2) + (b,) * (r // 2)) for a, b in pairs.values()]
    for j in range(3, min(d, r, 4) + 1):
        out.append(((0,) * r, tuple(min(t * j // r, j - 1) for t in range(r))))
    return out


def history_bound(oracle: Any, rounds: int) -> tuple[float, float]:
    """The proven upper bound of the whole-history loss of ``rounds`` reports alone, without the search:
    :attr:`RoundsPrivacy.bound` (:func:`over_rounds`, Notes: :math:`\\min(B_1, B_2)`) and
    :math:`r \\varepsilon_1` (:attr:`RoundsPrivacy.fresh_epsilon`), in :math:`O(\\min(d, r))` once the
    chain is read: for numbers of reports too large for :func:`over_rounds`, whose same-pattern
    search takes time and memory in proportion to ``rounds`` times the items.

    Examples
    --------
    >>> import pldp
    >>> bound, fresh = history_bound(pldp.LGRR(2.0, 1.0, 2), 30)
    >>> round(bound, 2) == round(over_rounds(pldp.LGRR(2.0, 1.0, 2), 30).bound, 2), round(fresh, 6)
    (True, 30.0)
    """
    chain = chain_of(oracle)
    r = check_int(rounds, "rounds", 1)
    return _bound(chain, r), r * chain.one


def over_rounds(oracle: Any, rounds: int, *, max_exact: int = MAX_EXACT) -> RoundsPrivacy:
    """The privacy of a device's whole history of ``rounds`` reports under a memoized chain.

    Parameters
    ----------
    oracle : memoized chain or its :class:`~pldp.channel.MemoNode`
        L-GRR, L-IPRR (direct chains), L-OUE, L-OSUE, L-SUE, L-SOUE, L-IDUE (unary chains).
    rounds : int
        Reports per device, ``>= 1``.
    max_exact : int, optional
        The most output configurations the exact search evaluates (default ``10**6``); beyond it,
        :attr:`~RoundsPrivacy.epsilon` is the bound. ``0``: the bound always.

    Returns
    -------
    RoundsPrivacy

    Raises
    ------
    ParameterError
        Not a memoized chain (a mechanism without a memo draws each report afresh, and ``r``
        reports compose to :math:`r\\varepsilon`), or a bad ``rounds`` or ``max_exact``.

    Notes
    -----
    **Exact search.** The likelihood does not depend on the order of the rounds, so a pair of
    histories counts only through its joint type (how many rounds hold each pair of values), and
    a report sequence only through how many rounds of each type's class report each output. The
    search runs over every joint type up to relabelling the values (those with equal parameters)
    and swapping :math:`h` and :math:`h'`, and over every output count, in log space. Unary
    chains factorise over their bits (the PRR draws and the IRR flips each bit independently),
    so each bit is searched on its own and the bits' maxima add. The cost, before the symmetry
    reduction, is about :math:`\\binom{r + d^2 k - 1}{d^2 k - 1}` for ``d`` items and ``k``
    outputs per part (``k = d`` direct, ``k = 2`` per bit). With the default ``max_exact`` it is
    exact up to ``r = 25`` for two items (L-GRR; 22 for L-OUE or L-IPRR), 7 for three (L-IPRR 6,
    L-OUE 9) and 5 for four (L-OUE 6), in at most a few seconds (0.03 s for L-GRR over two items
    at ``r = 8``); :func:`pair_loss` is exact for a given pair far beyond (``r = 100`` in
    milliseconds for two items). A chain with a non-sensitive item (infinite budget) has
    infinite losses, as its one-report LDP epsilon is.

    **Bound.** Condition on the memos :math:`X` (drawn up front, independent of :math:`h`):
    :math:`P(y \\mid h) = E_X \\prod_t \\mathrm{IRR}[X_{h_t}, y_t]`. With
    :math:`\\varepsilon_{IRR} = \\max_{x, x', y} \\ln \\mathrm{IRR}[x, y]/\\mathrm{IRR}[x', y]`
    (over bit vectors for a unary chain: the sum of its bits'), two bounds hold for every pair:

    * :math:`B_1 = \\varepsilon_1 + (r - 1)\\varepsilon_{IRR}`, :math:`\\varepsilon_1` the one
      report's realised LDP epsilon. Write :math:`P(y \\mid h) = \\prod_t P(y_t \\mid y_{<t}, h)`.
      The first report has the one-report channel (ratio at most :math:`e^{\\varepsilon_1}`); every
      later one is :math:`\\sum_x \\pi_t(x) \\mathrm{IRR}[x, y_t]`
      for the posterior :math:`\\pi_t` of its memo, and a ratio of two mixtures of the column
      :math:`\\mathrm{IRR}[\\cdot, y_t]` is at most :math:`e^{\\varepsilon_{IRR}}`. (Rounds with
      :math:`h_t = h'_t` give identical factors for each :math:`X`, so the pair's loss is also at
      most :math:`\\varepsilon_{IRR}` times the number of rounds where the histories differ.)
    * :math:`B_2 = \\max_{1 \\le j \\le \\min(d, r)} \\varepsilon_{IRR} (r - \\max(j, \\lceil r/d
      \\rceil)) + \\Lambda_j`, with :math:`\\Lambda_j` the sum of the ``j`` largest
      :math:`\\lambda_v = -\\ln \\min_x \\mathrm{PRR}[v, x]`. Let :math:`M_h(y) = \\max_x \\prod_t
      \\mathrm{IRR}[x_{h_t}, y_t]`. Then :math:`P(y \\mid h) \\le M_h(y)`, and :math:`P(y \\mid h')
      \\ge e^{-\\sum_{w \\in h'} \\lambda_w} M_{h'}(y)` (the maximising memos have at least that
      probability). Let every class of the pair (the rounds with :math:`h_t = v`, :math:`h'_t =
      w`) take its own memo: the maximum :math:`M_R(y)` so obtained is at least :math:`M_h(y)`. A block
      of :math:`h'` (rounds of value :math:`w`, ``c_w`` of them) is split into at most ``d``
      classes; giving the whole block the memo of its largest class costs at most
      :math:`\\varepsilon_{IRR}` per round of the other classes, at most :math:`c_w - \\lceil
      c_w/d \\rceil`, so :math:`\\ln M_R(y)/M_{h'}(y) \\le \\varepsilon_{IRR} (r - \\sum_w \\lceil
      c_w/d \\rceil)`, and :math:`\\sum_w \\lceil c_w / d\\rceil \\ge \\max(j, \\lceil r/d \\rceil)`
      for ``j`` blocks.

    :attr:`~RoundsPrivacy.bound` is :math:`\\min(B_1, B_2)`: :math:`B_1` is exact at ``r = 1`` and
    :math:`B_2` grows like :math:`(1 - 1/d)\\, r\\, \\varepsilon_{IRR}`: for L-GRR, the rate at
    which the pair :math:`a^r` against ``d`` runs of distinct values grows, so it is tight up to
    a constant there.

    **Same change pattern.** When :math:`h` and :math:`h'` share their pattern, the blocks draw
    disjoint memos and reports, so the ratio is a product over blocks and the maxima add: the
    loss is the largest :math:`\\sum_B g(v_B, v'_B, n_B)` over the blocks' values (distinct on
    each side, :math:`v_B \\ne v'_B`) and sizes (:math:`\\sum_B n_B = r`), found by a knapsack over
    sizes. A block's :math:`g` has a closed form: for a direct chain, with
    :math:`\\mathrm{PRR}[v, z] \\propto W_{1,z} + K_1 [v = z]` and
    :math:`\\rho_v = \\mathrm{IRR}[v, v]/\\mathrm{IRR}[x, v]` (:math:`x \\ne v`), the ratio is
    :math:`(S + K_1 \\rho_v^{c_v}) / (S + K_1 \\rho_{v'}^{c_{v'}})` with :math:`S = \\sum_z
    W_{1,z} \\rho_z^{c_z}` for output counts :math:`c`, largest when every report is ``v`` (it
    does not depend on :math:`v'`); for a unary chain, bit :math:`v` all ones plus bit :math:`v'`
    all zeros (monotone likelihood ratio). Each is at most the PRR's epsilon for the pair, so the
    loss is at most :math:`\\varepsilon_\\infty` per distinct value.

    Examples
    --------
    >>> import pldp
    >>> rep = over_rounds(pldp.LGRR(2.0, 1.0, 2), 8)
    >>> rep.exact, round(rep.epsilon, 2), round(rep.same_pattern_epsilon, 2), round(rep.fresh_epsilon, 6)
    (True, 6.16, 3.95, 8.0)
    >>> rep.worst_pair
    ((1, 0, 0, 0, 0, 1, 1, 1), (0, 1, 1, 1, 1, 1, 1, 1))
    """
    chain = chain_of(oracle)
    r = check_int(rounds, "rounds", 1)
    check_int(max_exact, "max_exact", 0)
    same, same_pair, same_exact = _same_pattern(chain, r)
    bound = _bound(chain, r)
    pair: Pair | None
    found = search(chain.parts, chain.per_bit, chain.keys, r, max_exact)
    if found is not None:
        (epsilon, pair), lower, exact = found, found[0], True
    else:
        lower, pair = (same, same_pair) if same_exact else (0.0, None)
        for cand in _candidates(chain, r):
            extremes = _extremes(chain, *cand, max_exact)
            if extremes is not None and max(extremes) > lower:
                lower, pair = max(extremes), (cand if extremes[0] >= extremes[1] else (cand[1], cand[0]))
        epsilon, exact = bound, False
    alpha, beta = chain.alpha(np.array([r]))[:, 0], chain.beta(np.array([r]))[:, 0]
    return RoundsPrivacy(
        rounds=r,
        epsilon=epsilon,
        exact=exact,
        worst_pair=pair,
        lower=lower,
        bound=bound,
        same_pattern_epsilon=same,
        same_pattern_pair=same_pair,
        same_pattern_exact=same_exact,
        unchanged_epsilon=best_distinct(alpha, beta),
        fresh_epsilon=r * chain.one,
        one_report_epsilon=chain.one,
        permanent_epsilon=chain.permanent,
    )
