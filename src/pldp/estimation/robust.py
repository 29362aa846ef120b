"""A bounded-influence combination of group estimates: ``"huber"`` across budget levels.

RCF, APLDP and LLevels call it ``"huber"`` (it was their ``"robust"`` until spread claims
beat it, below; their ``"robust"`` is now :mod:`pldp.estimation.spread`); PLDP-FEBSF's
``"robust"`` still uses it.

Protocols that estimate the item frequencies separately in ``G`` groups of users (budget levels
sent in the clear: RCF, APLDP; reported levels: PLDP-FEBSF) combine them linearly by default
(:mod:`pldp.estimation.combine`). A linear combination gives any one group an influence
proportional to its weight, and fake users choose their group: claiming a large budget buys
weight (RCF's weights favour the largest level 16 to 1), claiming a small one buys a large
debiasing factor. :func:`robust_combine` bounds what one group can do.

**The estimator.** For each item, with group estimates :math:`x_g`, scales :math:`s_g` (the
group's standard error under the honest model) and weights :math:`w_g`, the combination
:math:`\\mu` solves Huber's estimating equation with fixed scales,

.. math::

    \\sum_g w_g\\, \\mathrm{clip}(x_g - \\mu,\\, -k s_g,\\, k s_g) = 0,

a non-increasing piecewise-linear function of :math:`\\mu`, solved exactly between its
breakpoints :math:`x_g \\pm k s_g` (the midpoint of its zero set if that is an interval). When
every group lies within :math:`k s_g` of :math:`\\mu` it is the weighted mean
:math:`\\sum_g w_g x_g`; a group further away pulls with the constant force :math:`w_g k s_g`.

* Scales :math:`s_g^2 = m_g(1-m_g)/(n_g\\delta_g^2)`, :math:`m_g = q^*_g + \\delta_g \\tilde\\mu`:
  the group's model variance at a pilot :math:`\\tilde\\mu`, the weighted median of the groups
  (clipped to [0, 1]) with the weights of the data-free variances :math:`q^*_g(1-q^*_g)/(n_g
  \\delta_g^2)` (those of ``"unbiased"``). A group's own reports cannot inflate its scale.
* Weights :math:`w_g \\propto P_g = 1/s_g^2`, then **capped**: no group holds more than the
  share ``cap`` (default 1/2; the excess goes to the others in proportion to their precision,
  and the cap is raised to ``1/G`` when it is below).
* ``k`` (default 2) sets how far a group may lie from the others before its pull stops growing.

**The bound** (one group corrupted). Let fakes join group ``g`` (all of them claim it) and
report anything. Their group's term is at most :math:`w_g k s_g` in size; while every honest
group stays within :math:`k s_h` of the result the equation is linear in them, and

.. math::

    |\\mu - \\mu_{-g}| \\le X = \\frac{k\\, w_g s_g}{1 - w_g},

with :math:`\\mu_{-g}` the weighted mean of the other groups (unbiased; it does not see the
fakes). Write :math:`P_g(\\beta)` for the precision of group ``g`` counting the fakes
(:math:`n_g + m` users) and :math:`R = \\sum_{h \\ne g} P_h`. Uncapped, :math:`w_g = P_g/(P_g +
R)` and :math:`X = k\\sqrt{P_g}/R`, which grows with the fakes until the cap binds at
:math:`P_g = cR/(1-c)`; from there :math:`X = k c/((1-c)\\sqrt{P_g})` *falls* as fakes are added
(their group claims ever more precision, so its clip :math:`k s_g` narrows). Hence, for every
share :math:`\\beta` of fakes on one group,

.. math::

    X(\\beta) = k \\min\\Big(\\frac{\\sqrt{P_g(\\beta)}}{R},\\ \\frac{c}{(1-c)\\sqrt{P_g(\\beta)}}\\Big)
    \\le X^* = k \\sqrt{\\frac{c}{1-c}}\\, \\sigma_{-g}, \\qquad \\sigma_{-g} = R^{-1/2},

:math:`\\sigma_{-g}` being the standard error of the combination of the other groups: with the
defaults (:math:`k = 2`, :math:`c = 1/2`) one group can move the estimate by at most two of
those standard errors, whatever the number of fakes (:func:`attack_bound`). (Derived with no
honest group at the cap; a capped honest group counts in :math:`R` with less than its
precision, which loosens the bound.)

**Breakdown.** Corrupted groups ``C`` can move :math:`\\mu` without bound only when their
largest total pull exceeds the honest groups' largest, :math:`\\sum_{g \\in C} w_g s_g \\ge
\\sum_{h \\notin C} w_h s_h`. A single group never can when ``c < (G-1)/G`` and the groups
are alike; :func:`breakdown_groups` gives, per item, the fewest groups that can.
``info["breakdown_groups"]`` reports the minimum over the items.

**Spread attacks are not bounded.** The bound's threat model is :data:`BOUND_MODEL`: every fake
claims the *same* group (any group, any number of fakes). Fakes spread over several groups are
outside it, and nothing here bounds them: spread in proportion to the weights they move every
group alike, nothing is clipped and the estimate moves as the weighted mean does; spread over the
few groups that hold most of the weight they can do worse, since the honest groups then lie far
from the fakes' and the Huber step clips *them*. The attacker who knows the estimator
(:func:`pldp.attacks.optimal.search`) finds such splits. Measured
(``benchmarks/optimal_attack.py``, table in ``docs/attacks.md``; RCF-k-RR over ten levels
0.1..1.0, :math:`d = 16`, :math:`n = 10^5`, the rarest item): at β = 1 % the split
[0,0,0,0,0,0,0,252,353,405] gains 0.280 under ``"huber"`` (more than the 0.265 ``"unbiased"``
gains from the same fakes) while ``info["bound"]`` is 0.037; at 4.5 %, 1.176 against a bound of
0.043. In the one-level model the best claim gains 0.026 (1 %) and 0.028 (4.5 %), below the bound
(checked in ``tests/test_attacks_optimal.py``).
So ``info["bound"]`` is reported with ``info["bound_model"]`` (this threat model, in words) and
``info["spread_bound"] = None`` (no bound for spread claims): read the worst case of a campaign
from :func:`pldp.attacks.optimal.worst_case`, not from the bound.

**Variance** (delta method). Between breakpoints :math:`\\mu` is the weighted mean of the
groups within :math:`k s_g` (the *inliers* ``I``), so :math:`\\partial\\mu/\\partial x_g = w_g
[g \\in I] / \\sum_{h \\in I} w_h` and :math:`\\mathrm{Var}(\\mu) \\approx \\sum_g
(\\partial\\mu/\\partial x_g)^2 V_g` with the groups' plug-in variances :math:`V_g`.

References
----------
Huber, Robust Estimation of a Location Parameter, Ann. Math. Stat. 35(1), 1964. Hampel,
Ronchetti, Rousseeuw, Stahel, Robust Statistics: The Approach Based on Influence Functions,
Wiley 1986 (influence and breakdown).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pldp.errors import EstimationError, ParameterError

__all__ = [
    "BOUND_MODEL",
    "DEFAULT_CAP",
    "DEFAULT_K",
    "RobustCombination",
    "attack_bound",
    "breakdown_groups",
    "capped_weights",
    "huber_location",
    "robust_combine",
    "weighted_median",
]

#: Default largest share of the weight one group may hold.
DEFAULT_CAP = 0.5
#: Default clip, in the groups' standard errors.
DEFAULT_K = 2.0
#: The threat model of ``info["bound"]`` (module docstring), as the estimates report it.
BOUND_MODEL = (
    "fakes that all claim one level (any level, any number of fakes): bound[x] is the most they move "
    "item x's estimate; fakes spread over several levels are NOT bounded (spread_bound is None): the "
    "worst case is measured by the optimising attacker, pldp.attacks.optimal.worst_case"
)


def _check_options(cap: float, k: float) -> tuple[float, float]:
    if not (0.0 < float(cap) <= 1.0):
        raise ParameterError(f"cap must lie in (0, 1], got {cap!r}")
    if not (np.isfinite(k) and float(k) > 0):
        raise ParameterError(f"k must be a finite number > 0, got {k!r}")
    return float(cap), float(k)


def capped_weights(precision: np.ndarray, cap: float) -> np.ndarray:
    """Weights proportional to ``precision`` along axis 0, none above ``max(cap, 1/G_active)``.

    Water-filling: groups whose share exceeds the cap get the cap; the rest of the weight goes to
    the others in proportion to their precision, repeated until no share exceeds it. Groups with
    zero precision (no users) get weight 0.

    Examples
    --------
    >>> capped_weights(np.array([1.0, 1.0, 8.0]), 0.5).tolist()
    [0.25, 0.25, 0.5]
    """
    p = np.asarray(precision, dtype=float)
    two_d = p.ndim == 2
    p = p if two_d else p[:, None]
    active = p > 0
    count = active.sum(axis=0)
    if np.any(count == 0):
        raise EstimationError("no group holds information for some item: nothing to combine")
    limit = np.maximum(cap, 1.0 / count)
    w = np.zeros_like(p)
    fixed = np.zeros(p.shape, dtype=bool)
    for _ in range(p.shape[0] + 1):
        free = active & ~fixed
        left = 1.0 - limit * fixed.sum(axis=0)
        total = np.where(free, p, 0.0).sum(axis=0)
        share = np.where(free, p * (left / np.where(total > 0, total, 1.0)), 0.0)
        w = np.where(fixed, limit, share)
        over = free & (w > limit * (1 + 1e-12))
        if not over.any():
            break
        fixed |= over
    return w if two_d else w[:, 0]


def weighted_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per column, the lower weighted median: the smallest value whose cumulative weight reaches half.

    ``values`` and ``weights`` have shape (G, d); groups of weight 0 are ignored.
    """
    order = np.argsort(values, axis=0, kind="stable")
    v = np.take_along_axis(values, order, axis=0)
    cum = np.cumsum(np.take_along_axis(weights, order, axis=0), axis=0)
    first = np.argmax(cum >= 0.5 * cum[-1] * (1 - 1e-12), axis=0)
    return v[first, np.arange(values.shape[1])]


def huber_location(x: np.ndarray, scale: np.ndarray, w: np.ndarray, k: float) -> tuple[np.ndarray, np.ndarray]:
    """Solve :math:`\\sum_g w_g \\mathrm{clip}(x_g - \\mu, -k s_g, k s_g) = 0` per column, exactly.

    Parameters
    ----------
    x, scale, w : ndarray, shape (G, d)
        Group values, scales (> 0 where the weight is) and weights (>= 0, summing to one per
        column). Groups of weight 0 are ignored.
    k : float
        The clip in scales.

    Returns
    -------
    (ndarray, ndarray)
        The root per column (the midpoint of the zero set when the function vanishes on an
        interval), and the derivative of the root with respect to each group's value,
        :math:`w_g [|x_g - \\mu| < k s_g] / \\sum_{h} w_h [|x_h - \\mu| < k s_h]` (the weights
        themselves when no group is within its clip).
    """
    used = w > 0
    xs = np.where(used, x, 0.0)
    half = np.where(used, k * scale, 0.0)
    bp = np.sort(np.concatenate([xs - half, xs + half]), axis=0)  # unused groups add harmless breakpoints at 0
    # f(mu) at every breakpoint: (2G, d)
    f = np.sum(w[None, :, :] * np.clip(xs[None, :, :] - bp[:, None, :], -half[None], half[None]), axis=1)
    cols = np.arange(x.shape[1])

    def crossing(strict_left: bool) -> np.ndarray:
        # first breakpoint where f <= 0 (strict_left: f < 0); interpolate on the segment before it
        hit = f < 0 if strict_left else f <= 0
        i = np.argmax(hit, axis=0)
        i = np.where(hit.any(axis=0), i, f.shape[0] - 1)
        j = np.maximum(i - 1, 0)
        f0, f1, b0, b1 = f[j, cols], f[i, cols], bp[j, cols], bp[i, cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(f0 != f1, f0 / (f0 - f1), 0.0)
        return np.where(i == 0, b1, b0 + np.clip(t, 0.0, 1.0) * (b1 - b0))

    mu = 0.5 * (crossing(False) + crossing(True))
    inside = used & (np.abs(x - mu[None, :]) < half)
    wi = np.where(inside, w, 0.0)
    total = wi.sum(axis=0)
    coef = np.where(total > 0, wi / np.where(total > 0, total, 1.0), w)
    return mu, coef


def breakdown_groups(w: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Per column, the fewest groups whose largest pull :math:`\\sum w_g s_g` reaches the others'.

    The corrupted groups can then hold the estimate anywhere (module docstring).
    """
    pull = np.sort(np.where(w > 0, w * scale, 0.0), axis=0)[::-1]
    cum = np.cumsum(pull, axis=0)
    total = cum[-1]
    return np.argmax(cum >= total - cum, axis=0) + 1


def attack_bound(
    precision: np.ndarray,
    group: int,
    fake_precision: float | np.ndarray = 0.0,
    *,
    cap: float = DEFAULT_CAP,
    k: float = DEFAULT_K,
) -> tuple[np.ndarray, np.ndarray]:
    """How far fakes that all join one group can move the combination: ``(X(beta), X*)``.

    Parameters
    ----------
    precision : ndarray, shape (G,) or (G, d)
        The honest groups' precisions :math:`1/s_g^2` (per item when 2-D).
    group : int
        The group the fakes join.
    fake_precision : float or ndarray
        The precision the fakes add to that group (:math:`m/v_g` for ``m`` fakes, with
        :math:`v_g = m_g(1-m_g)/\\delta_g^2` the per-user variance).
    cap, k
        The combination's options.

    Returns
    -------
    (ndarray, ndarray)
        :math:`X(\\beta)` for these fakes and :math:`X^* = k\\sqrt{c/(1-c)}\\,R^{-1/2}`, the
        largest over any number of them (module docstring; ``inf`` when ``cap = 1``).
    """
    cap, k = _check_options(cap, k)
    p = np.asarray(precision, dtype=float)
    rest = np.delete(p, group, axis=0).sum(axis=0)
    pg = p[group] + np.asarray(fake_precision, dtype=float)
    limit = max(cap, 1.0 / int(np.count_nonzero(np.any(p.reshape(p.shape[0], -1) > 0, axis=1))))
    with np.errstate(divide="ignore"):
        if limit >= 1:
            return k * np.sqrt(pg) / rest, np.full(np.shape(rest), np.inf)
        now = np.minimum(k * np.sqrt(pg) / rest, k * limit / ((1.0 - limit) * np.sqrt(pg)))
        return now, k * np.sqrt(limit / (1.0 - limit)) / np.sqrt(rest)


@dataclass(frozen=True)
class RobustCombination:
    """What :func:`robust_combine` returns (per item, shape (d,), unless noted).

    Attributes
    ----------
    frequencies, variance : ndarray
        The combination and its delta-method variance.
    weights, scales, coefficients : ndarray, shape (G, d)
        The capped weights, the scales and :math:`\\partial\\mu/\\partial x_g`.
    bound : ndarray
        :math:`\\max_g X^*_g`: the most fakes that all join one group, in any number, could move
        each estimate (at the scales of this tally); no bound for fakes spread over several
        groups (:data:`BOUND_MODEL`).
    breakdown : int
        The fewest groups that could move some estimate without bound.
    cap, k : float
        The options (``cap`` as applied: at least ``1/G``).
    """

    frequencies: np.ndarray
    variance: np.ndarray
    weights: np.ndarray
    scales: np.ndarray
    coefficients: np.ndarray
    bound: np.ndarray
    breakdown: int
    cap: float
    k: float

    def info(self) -> dict[str, object]:
        """The diagnostics an :class:`~pldp.Estimate` carries in ``info``."""
        return {
            "weights": self.weights,
            "inlier_share": (self.coefficients > 0).mean(axis=0),
            "bound": self.bound,
            "bound_model": BOUND_MODEL,
            "spread_bound": None,
            "breakdown_groups": self.breakdown,
            "cap": self.cap,
            "k": self.k,
        }


def robust_combine(
    estimates: np.ndarray,
    variances: np.ndarray,
    sizes: np.ndarray,
    support: tuple[np.ndarray, np.ndarray],
    *,
    cap: float = DEFAULT_CAP,
    k: float = DEFAULT_K,
) -> RobustCombination:
    """Combine group estimates with bounded influence (module docstring).

    Parameters
    ----------
    estimates : ndarray, shape (G, d)
        Each group's unbiased estimate (NaN for a group without users).
    variances : ndarray, shape (G, d)
        Each group's plug-in variance (for the delta-method variance).
    sizes : ndarray, shape (G,)
        Users per group.
    support : (ndarray, ndarray), each of shape (G, d)
        Each group's :math:`(p^*, q^*)` per item (its pure oracle, or its mixture of levels).
    cap, k : float
        Largest share of the weight per group (raised to ``1/G`` if below) and the clip.
    """
    cap, k = _check_options(cap, k)
    x = np.asarray(estimates, dtype=float)
    n = np.asarray(sizes, dtype=float)[:, None]
    p_star, q_star = (np.broadcast_to(np.asarray(a, dtype=float), x.shape) for a in support)
    gap = p_star - q_star
    has = (n > 0) & np.isfinite(x) & (gap > 0)
    nn = np.where(n > 0, n, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        data_free = np.where(has, nn * gap**2 / (q_star * (1.0 - q_star)), 0.0)
    x0 = np.where(has, x, 0.0)
    pilot = np.clip(weighted_median(np.where(has, x0, np.inf), capped_weights(data_free, cap)), 0.0, 1.0)
    m = np.clip(q_star + gap * pilot[None, :], 1e-12, 1 - 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(has, np.sqrt(m * (1.0 - m) / (nn * gap**2)), 1.0)
    model_precision = np.where(has, 1.0 / scale**2, 0.0)
    w = capped_weights(model_precision, cap)
    mu, coef = huber_location(x0, scale, w, k)
    v = np.where(coef > 0, np.asarray(variances, dtype=float), 0.0)
    variance = np.sum(coef**2 * v, axis=0)
    groups = np.flatnonzero(np.any(w > 0, axis=1))
    worst = np.full(x.shape[1], np.inf)
    if groups.size > 1:
        worst = np.max([attack_bound(model_precision, int(g), cap=cap, k=k)[1] for g in groups], axis=0)
    limit = max(cap, 1.0 / groups.size)
    breakdown = int(breakdown_groups(w, np.where(w > 0, scale, 0.0)).min())
    return RobustCombination(mu, variance, w, scale, coef, worst, breakdown, limit, k)
